"""liedyn.interop.pinocchio: models in both directions, the conversions of
configurations and of motion and force jets, and Pinocchio's dynamics in
liedyn's conventions.

The conversions are checked by round trips, by the frame invariance of power
at every derivative order, by central differences in time (each jet row is
the derivative of the one before; Pinocchio's own ``difference`` gives the
configuration's tangent rate), by Pinocchio's kinematics (body poses, joint
frame twists and accelerations, home poses and joint screws) agreeing with
liedyn's, by the converted RNEA, CRBA and ABA agreeing with each other, and by
Pinocchio's RNEA, CRBA, ABA and their analytic derivatives agreeing with
liedyn's recursions.
"""

import warnings

import numpy as np
import pinocchio as pin
import pytest

import liedyn
from liedyn import se3
from liedyn.multibody.model import JOINT_REVOLUTE
from liedyn.interop.pinocchio import (depth_first_order, from_pinocchio, pair, swap_halves,
                                      to_pinocchio)
from liedyn.multibody.workspace import binomials
from models.aerial_manipulator import aerial_manipulator
from models.trees import random_tree
from tests.helpers import assert_close, rel_err, run_python
from tests.robots import (Trajectory, central_difference_errors, joint_sample, real_robot,
                          tree_with_frames)

# O(1) quantities from a few dozen float64 products: ~100 eps of 1 + max|x|.
TOL = 1e-12


def _models():
    rng = np.random.default_rng
    return {
        "aerial": aerial_manipulator(),
        "tree-floating": tree_with_frames(rng(101), 8, floating_base=True),
        "tree-fixed": tree_with_frames(rng(102), 8, floating_base=False),
        "chain-fixed": random_tree(rng(103), 5, floating_base=False, shuffle=False,
                                   armature=True, damping=True),
        "tree-armature": random_tree(rng(104), 7, floating_base=True, armature=True,
                                     damping=True),
        "shuffled-floating": random_tree(rng(101), 8, floating_base=True),
        "shuffled-fixed": random_tree(rng(102), 8, floating_base=False),
        "chain-bare": random_tree(rng(103), 5, floating_base=False, shuffle=False),
    }


MODELS = _models()
BRIDGES = {name: to_pinocchio(m) for name, m in MODELS.items()}


def _bridge(case):
    if case in BRIDGES:
        return MODELS[case], BRIDGES[case]
    return real_robot(case)


CASES = list(MODELS) + ["pr2", "talos"]


def _motion(model, rng, rows):
    C0 = se3.exp(rng.normal(size=6)) if model.floating_base else None
    V = rng.normal(size=(rows, 6)) if model.floating_base else None
    q = rng.normal(size=(rows + 1, model.n_joints))
    q[0] = joint_sample(model, rng)
    return C0, V, q


def test_import_error_names_the_package():
    out = run_python("""
        import sys
        sys.modules["pinocchio"] = None          # as if not installed
        import liedyn
        from liedyn.interop.pinocchio import to_pinocchio
        from models.trees import random_tree
        import numpy as np
        try:
            to_pinocchio(random_tree(np.random.default_rng(0), 3))
        except ImportError as err:
            print("ImportError:", err)
    """, timeout=120)
    assert "needs Pinocchio" in out and "pip install pin" in out


def test_depth_first_order_is_a_preorder_with_contiguous_subtrees():
    parent = random_tree(np.random.default_rng(5), 30).body_parent
    order = depth_first_order(parent)
    assert sorted(order) == list(range(30))
    pos = np.empty(30, int)
    pos[order] = np.arange(30)
    for j in range(1, 30):
        assert pos[parent[j]] < pos[j]
    for j in range(30):
        sub = [k for k in range(30) if j in _ancestors(parent, k)]
        assert sorted(pos[sub]) == list(range(pos[j], pos[j] + len(sub)))


def _ancestors(parent, k):
    out = []
    while k >= 0:
        out.append(k)
        k = parent[k]
    return out


# ------------------------------------------------------------ conversions --

@pytest.mark.parametrize("case", CASES)
def test_round_trips(case):
    model, br = _bridge(case)
    rng = np.random.default_rng(len(case))
    for rows in (1, 2, 5):
        C0, V, q = _motion(model, rng, rows)
        qp, v = br.motion_to_pin(C0, V, q)
        assert qp.shape == (br.model.nq,) and v.shape == (rows, br.model.nv)
        C0r, Vr, qr = br.motion_from_pin(qp, v)
        wrapped = np.where(br.unbounded, (q[0] + np.pi) % (2 * np.pi) - np.pi, q[0])
        assert rel_err(C0r, model.home_pose if C0 is None else C0) <= TOL
        assert rel_err(Vr, np.zeros((rows, 6)) if V is None else V) <= TOL
        assert rel_err(qr[0], wrapped) <= TOL and rel_err(qr[1:], q[1:]) <= TOL
        W = rng.normal(size=(rows, 6)) if br.nb else None
        tau = rng.normal(size=(rows, model.n_joints))
        tp = br.force_to_pin(C0, V, W, tau)
        Wr, taur = br.force_from_pin(C0, V, tp)
        assert rel_err(taur, tau) <= TOL and (W is None or rel_err(Wr, W) <= TOL)
    C0, V, q = _motion(model, rng, 2)
    qp, vp, ap = br.state_to_pin(C0, V, q)
    assert qp.shape == (br.model.nq,) and vp.shape == ap.shape == (br.model.nv,)
    C0r, Vr, qr = br.state_from_pin(qp, vp, ap)
    wrapped = np.where(br.unbounded, (q[0] + np.pi) % (2 * np.pi) - np.pi, q[0])
    assert_close(C0r, model.home_pose if C0 is None else C0, rtol=0, atol=TOL, what="C0")
    assert_close(Vr, np.zeros((2, 6)) if V is None else V, rtol=0, atol=TOL, what="V0")
    assert_close(qr, np.vstack([wrapped, q[1:]]), rtol=0, atol=TOL, what="q")


@pytest.mark.parametrize("case", CASES)
def test_body_poses_match_forward_kinematics(case):
    model, br = _bridge(case)
    C0, V, q = _motion(model, np.random.default_rng(300 + len(case)), 1)
    fk = liedyn.forward_kinematics(model, C0, V, q, 0)
    assert_close(br.body_poses(br.config_to_pin(C0, q[0])), fk.body_pose, rtol=0, atol=TOL,
                 what="body poses")


@pytest.mark.parametrize("case", list(MODELS))
def test_home_poses_and_joint_screws_are_relative_to_the_base_frame(case):
    """``body_home`` and ``joint_screw`` against Pinocchio's kinematics of the
    base at identity and q = 0: ``H_j`` is body j's pose in the base frame
    (``H_0 = I``) and ``Y_j`` the joint screw in the base frame, ``Ad_{O_j}``
    of the joint's local screw (``(e, 0)`` revolute, ``(0, e)`` prismatic;
    :func:`to_pinocchio` puts the joint frame on the axis, axes as the body's)."""
    model = MODELS[case]
    br = to_pinocchio(model, base_pose=np.eye(4))
    qp = br.config_to_pin(np.eye(4), np.zeros(model.n_joints))
    assert np.array_equal(model.body_home[0], np.eye(4))
    assert_close(br.body_poses(qp), model.body_home, rtol=0, atol=TOL, what="H_j")
    assert model.joint_screw.shape == (model.n_joints, 6)
    for i, j in enumerate(model.joint_body):
        e = np.array(model.joint_axis[i])
        local = (np.concatenate([e, np.zeros(3)]) if model.joint_type[i] == JOINT_REVOLUTE
                 else np.concatenate([np.zeros(3), e]))
        Y = se3.Ad(br.data.oMi[int(br.joint_id[j])].homogeneous) @ local
        assert_close(model.joint_screw[i], Y, rtol=0, atol=TOL, what=f"Y_{j}")
    # a base away from the origin moves every pose, not H_j
    C0 = se3.exp(np.random.default_rng(600 + len(case)).normal(size=6))
    fk = liedyn.forward_kinematics(model, C0, np.zeros((1, 6)) if model.floating_base else None,
                                   np.zeros((2, model.n_joints)), 0)
    assert_close(fk.body_pose, C0 @ model.body_home, rtol=0, atol=TOL, what="C_j = C₀ H_j")


@pytest.mark.parametrize("case", CASES)
def test_velocity_map_gives_pinocchio_body_velocities(case):
    """Pinocchio's joint-frame velocities and classical accelerations, mapped to
    the world, equal liedyn's spatial twists and their derivatives."""
    model, br = _bridge(case)
    C0, V, q = _motion(model, np.random.default_rng(400 + len(case)), 2)
    qp, vp, ap = br.state_to_pin(C0, V, q)
    pin.forwardKinematics(br.model, br.data, qp, vp, ap)
    fk = liedyn.forward_kinematics(model, C0, V, q, 1)
    for j in range(model.n_bodies):
        i = int(br.joint_id[j])
        if i == 0:
            continue
        Ad = se3.Ad(br.data.oMi[i].homogeneous)
        # spatial twist = Ad_O (ω_local, v_local); Pinocchio's data.a is the
        # derivative of the local twist, and d/dt(Ad_O V_l) = Ad_O V̇_l.
        Vw = Ad @ np.concatenate([br.data.v[i].angular, br.data.v[i].linear])
        Aw = Ad @ np.concatenate([br.data.a[i].angular, br.data.a[i].linear])
        assert_close(Vw, fk.twist[0, j], rtol=0, atol=TOL * 10, what=f"V body {j}")
        assert_close(Aw, fk.twist[1, j], rtol=0, atol=TOL * 10, what=f"dV body {j}")


@pytest.mark.parametrize("case", CASES)
def test_power_is_invariant_at_every_order(case):
    """``τ_pinᵀ v_pin = τ̄ᵀ ν`` along any motion, so the jets of both sides,
    ``Σ_a C(k, a) τ^(a)ᵀ v^(k−a)``, agree at every order."""
    model, br = _bridge(case)
    rng = np.random.default_rng(3 + len(case))
    R = 5
    C0, V, q = _motion(model, rng, R)
    W = rng.normal(size=(R, 6)) if model.floating_base else None
    tau = rng.normal(size=(R, model.n_joints))
    _, v = br.motion_to_pin(C0, V, q)
    tp = br.force_to_pin(C0, V, W, tau)
    nu = q[1:] if V is None else np.hstack([V, q[1:]])
    tbar = tau if W is None else np.hstack([W, tau])
    B = binomials(R)
    for k in range(R):
        lhs = sum(B[k, a] * tp[a] @ v[k - a] for a in range(k + 1))
        rhs = sum(B[k, a] * tbar[a] @ nu[k - a] for a in range(k + 1))
        assert abs(lhs - rhs) <= 1e-12 * (1 + abs(rhs)) * 4 ** k, (k, lhs, rhs)


@pytest.mark.parametrize("case", ["tree-floating", "tree-fixed", "pr2", "talos"])
def test_jets_against_central_differences(case):
    """Row ``k`` of the velocity and force jets is the time derivative of row
    ``k − 1`` along a trajectory (base pose integrated on SE(3)); the
    configuration moves with ``v`` in Pinocchio's tangent space."""
    model, br = _bridge(case)
    rng = np.random.default_rng(9)
    traj = Trajectory(model, rng, speed=0.5)
    Wc = rng.normal(size=(8, 6)) if model.floating_base else None
    tc = rng.normal(size=(8, model.n_joints))
    h, R = 1e-2, 4

    def motion(s, rows):
        return br.motion_to_pin(*traj.state(s, rows))

    def force(s, rows):
        C0, V, _ = traj.state(s, rows)
        return br.force_to_pin(C0, V, None if Wc is None else Trajectory._jet(Wc, s, rows),
                               Trajectory._jet(tc, s, rows))

    qp, v = motion(0.0, R)
    e1, e2 = [np.max(np.abs(pin.difference(br.model, motion(-s, 1)[0], motion(s, 1)[0]) / (2 * s)
                            - v[0])) for s in (h, h / 2)]
    assert 3.8 <= e1 / e2 <= 4.2 and e2 <= 1e-3 * (1 + np.max(np.abs(v[0])))
    tp = force(0.0, R)
    for k in range(1, R):
        for what, f, want in (("v", lambda s: motion(s, k)[1][k - 1], v[k]),
                              ("tau", lambda s: force(s, k)[k - 1], tp[k])):
            e1, e2 = central_difference_errors(f, want, h)
            assert e2 <= 1e-3 * (1 + np.max(np.abs(want))), (what, k, e1, e2)
            assert 3.8 <= e1 / e2 <= 4.2, (what, k, e1, e2)


# --------------------------------------------------- dynamics in liedyn terms --

@pytest.mark.parametrize("case", CASES)
def test_pinocchio_dynamics_equal_liedyn(case):
    """Order 0 (RNEA, CRBA, ABA) and order 1 (analytic derivatives), with
    applied wrench jets, Pinocchio through the bridge against liedyn's
    recursions, called with the same arguments."""
    model, br = _bridge(case)
    rng = np.random.default_rng(17 + len(case))
    n, N = model.n_joints, model.n_bodies
    for _ in range(2):
        C0, V, q = _motion(model, rng, 3)
        applied = rng.normal(size=(2, N, 6))
        V2 = None if V is None else V[:2]
        ref = liedyn.inverse_dynamics(model, C0, V2, q[:3], 0, applied=applied[:1])
        W0, tau = br.rnea(C0, V2, q[:3], applied=applied[:1])
        assert rel_err(tau, ref.tau[0]) <= TOL
        if br.nb:
            assert rel_err(W0, ref.base_wrench[0]) <= TOL
        M = liedyn.mass_matrix(model, C0, q[0])
        assert rel_err(br.mass_matrix(C0, q[0]), M) <= TOL
        dV, ddq = br.aba(C0, None if V is None else V[:1], q[:2], tau=ref.tau,
                         base_wrench=ref.base_wrench if br.nb else None, applied=applied[:1])
        assert rel_err(ddq, q[2]) <= 1e-10 and (not br.nb or rel_err(dV, V[1]) <= 1e-10)
        ref1 = liedyn.inverse_dynamics(model, C0, V, q, 1, applied=applied)
        W1, tau1 = br.inverse_dynamics(C0, V, q, 1, applied=applied)
        assert rel_err(tau1, ref1.tau) <= TOL
        assert (W1 is None) == (not br.nb) and (W1 is None or rel_err(W1, ref1.base_wrench) <= TOL)
        Wb = rng.normal(size=(2, 6)) if model.floating_base else None
        tj = rng.normal(size=(2, n))
        for app in (None, applied):
            fd = liedyn.forward_dynamics(model, C0, None if V is None else V[:1], q[:2], 1,
                                         tau=tj, base_wrench=Wb, applied=app)
            Vp, qp = br.forward_dynamics(C0, None if V is None else V[:1], q[:2], 1, tau=tj,
                                         base_wrench=Wb, applied=app)
            assert rel_err(qp, fd.q) <= 1e-10 and rel_err(Vp, fd.base_twist) <= 1e-10


@pytest.mark.parametrize("case", CASES)
def test_mass_matrix_and_aba_conversions_are_consistent_with_rnea(case):
    """Within Pinocchio alone: columns of the converted RNEA's response to
    ``ν̇ = e_i`` form ``M = Tᵀ M_pin T``, and the converted ABA inverts the
    converted RNEA (with applied wrenches)."""
    model, br = _bridge(case)
    rng = np.random.default_rng(500 + len(case))
    C0, V, q = _motion(model, rng, 2)
    nb, n = br.nb, model.n_joints
    applied = rng.normal(size=(1, model.n_bodies, 6))

    def tbar(nudot):
        Vj = None if V is None else np.stack([V[0], nudot[:6]])
        W0, tau = br.rnea(C0, Vj, np.stack([q[0], q[1], nudot[nb:]]), applied=applied)
        return np.concatenate([W0[:nb], tau])

    b = tbar(np.zeros(nb + n))
    M = np.stack([tbar(e) - b for e in np.eye(nb + n)], axis=1)
    Mc = br.mass_matrix(C0, q[0])
    # the difference of two RNEA calls carries ~eps·|b| of rounding per entry
    assert_close(Mc, M, rtol=0, atol=1e3 * np.finfo(float).eps * (1 + np.max(np.abs(b))),
                 what="mass matrix")
    assert_close(Mc, Mc.T, rtol=0, atol=0, what="symmetric")
    nudot = rng.normal(size=nb + n)
    t = tbar(nudot)
    dV0, ddq = br.aba(C0, None if V is None else V[:1], q[:2], tau=t[nb:][None],
                      base_wrench=t[None, :6] if nb else None, applied=applied)
    assert_close(np.concatenate([dV0[:nb], ddq]), nudot, rtol=0, atol=1e-10, what="aba∘rnea")


def test_fixed_base_reaction_through_a_free_flyer():
    model = MODELS["tree-fixed"]
    br = to_pinocchio(model, free_flyer=True)
    assert br.free_flyer and br.nb == 6
    rng = np.random.default_rng(4)
    q = rng.normal(size=(3, model.n_joints))
    ref = liedyn.inverse_dynamics(model, None, None, q, 0)
    W0, tau = br.rnea(None, None, q)
    assert W0.shape == (6,) and tau.shape == (model.n_joints,)
    assert rel_err(tau, ref.tau[0]) <= TOL and rel_err(W0, ref.base_wrench[0]) <= TOL


def test_fixed_base_pose_is_baked_into_placements():
    rng = np.random.default_rng(6)
    model = random_tree(rng, 5, floating_base=False)
    C0 = se3.exp(rng.normal(size=6))
    br = to_pinocchio(model, base_pose=C0)
    q = rng.normal(size=model.n_joints)
    fk = liedyn.forward_kinematics(model, C0, None, np.stack([q, q]), 0)
    assert_close(br.body_poses(br.config_to_pin(None, q)), fk.body_pose, rtol=0, atol=TOL,
                 what="poses with a non-home fixed base")
    with pytest.raises(ValueError, match="base_pose: this Pinocchio model has no free flyer"):
        br.config_to_pin(np.eye(4), q)


# ------------------------------------------------------------------ models --

def _same_dynamics(a, b, rng, floating):
    """Inverse dynamics of order 2 of two liedyn models of one robot whose q
    columns may be ordered differently (matched by joint name)."""
    perm = np.array([b.joint_index(nm) for nm in a.joint_names])
    C0 = se3.exp(rng.normal(size=6)) if floating else None
    V = rng.normal(size=(4, 6)) if floating else None
    q = rng.normal(size=(5, a.n_joints))
    qb = np.empty_like(q)
    qb[:, perm] = q
    ra = liedyn.inverse_dynamics(a, C0, V, q, 2)
    rb = liedyn.inverse_dynamics(b, C0, V, qb, 2)
    assert rel_err(rb.tau[:, perm], ra.tau) <= TOL
    assert rel_err(rb.base_wrench, ra.base_wrench) <= TOL


@pytest.mark.parametrize("case", list(MODELS))
def test_model_round_trip(case):
    """liedyn → Pinocchio → liedyn: names, frames and dynamics survive."""
    model = MODELS[case]
    back = from_pinocchio(BRIDGES[case].model).liedyn_model
    assert back.floating_base == model.floating_base and back.n_bodies == model.n_bodies
    assert sorted(back.joint_names) == sorted(model.joint_names)
    assert back.body_names == tuple(model.body_names[j] for j in BRIDGES[case].dfs)
    assert set(back.frame_names) == set(model.frame_names)
    assert rel_err(back.home_pose, model.home_pose) <= TOL
    rng = np.random.default_rng(5)
    q = rng.normal(size=model.n_joints)
    C0 = model.home_pose
    for name in model.frame_names:
        assert rel_err(liedyn.frame_pose(back, C0, q[[model.joint_index(nm)
                                                      for nm in back.joint_names]], name),
                       liedyn.frame_pose(model, C0, q, name)) <= TOL, name
    for field in ("joint_armature", "joint_damping", "joint_lower", "joint_upper",
                  "joint_max_effort", "joint_max_velocity"):
        perm = [back.joint_index(nm) for nm in model.joint_names]
        assert np.array_equal(getattr(back, field)[perm], getattr(model, field)), field
    _same_dynamics(model, back, rng, model.floating_base)


@pytest.mark.parametrize("robot", ["talos", "pr2", "panda", "human"])
def test_from_pinocchio_urdf_equals_load_urdf(robot):
    """Pinocchio's parse of a URDF, brought over, is the model liedyn's own
    reader makes of it: names, q order, frames, inertias, limits."""
    model, br = real_robot(robot)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = from_pinocchio(br.model).liedyn_model
    assert back.body_names == model.body_names and back.joint_names == model.joint_names
    assert set(back.frame_names) == set(model.frame_names)
    for f, name in enumerate(model.frame_names):
        g = back.frame_index(name)
        assert back.frame_body[g] == model.frame_body[f]
        assert rel_err(back.frame_offset[g], model.frame_offset[f]) <= TOL, name
    assert rel_err(back.body_inertia, model.body_inertia) <= TOL
    assert rel_err(back.body_origin, model.body_origin) <= TOL
    lim = np.isfinite(model.joint_lower)
    assert np.array_equal(np.isfinite(back.joint_lower), lim)
    assert rel_err(back.joint_lower[lim], model.joint_lower[lim]) <= TOL
    for field in ("joint_max_effort", "joint_max_velocity"):
        assert np.array_equal(getattr(back, field), getattr(model, field)), field
    _same_dynamics(model, back, np.random.default_rng(2), model.floating_base)


# ------------------------------------------------------------------ errors --

def test_unsupported_joint_names_it():
    pm = pin.Model()
    pm.addJoint(0, pin.JointModelRX(), pin.SE3.Identity(), "hinge")
    pm.addJoint(1, pin.JointModelSpherical(), pin.SE3.Identity(), "ball")
    with pytest.raises(ValueError, match=r"joint 'ball'.*JointModelSpherical"):
        from_pinocchio(pm)
    pm = pin.Model()
    pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root")
    pm.addJoint(0, pin.JointModelRX(), pin.SE3.Identity(), "other")
    with pytest.raises(ValueError, match=r"joint 'other': hangs from the universe beside"):
        from_pinocchio(pm)


def test_pair_refuses_models_of_different_robots():
    a = random_tree(np.random.default_rng(1), 5, floating_base=True)
    b = random_tree(np.random.default_rng(2), 5, floating_base=True)   # same names, other robot
    with pytest.raises(ValueError, match=r"joint 'body\d'|body 'body\d'|'body\d'"):
        pair(a, to_pinocchio(b).model)
    with pytest.raises(ValueError, match="free flyer|FreeFlyer"):
        pair(a, to_pinocchio(random_tree(np.random.default_rng(1), 5,
                                         floating_base=False)).model)
    c = random_tree(np.random.default_rng(1), 6, floating_base=True)
    with pytest.raises(ValueError, match="joints besides the free flyer"):
        pair(a, to_pinocchio(c).model)
    with pytest.raises(TypeError, match="pin_model"):
        pair(a, a)
    with pytest.raises(ValueError, match="free_flyer"):
        to_pinocchio(a, free_flyer=False)
    with pytest.raises(TypeError, match="free_flyer"):
        to_pinocchio(a, free_flyer="yes")


@pytest.mark.parametrize("case", ["tree-floating", "tree-fixed", "aerial"])
def test_motion_jets_are_read_as_prefixes(case):
    """Rows of a motion jet past those a conversion or a dynamics call reads
    change nothing (SPEC §1), even when they are not finite; the rows it
    reads must be there."""
    model, br = _bridge(case)
    rng = np.random.default_rng(31)
    C0, V, q = _motion(model, rng, 6)                  # V (6, 6), q (7, n): a trajectory jet
    n, N = model.n_joints, model.n_bodies
    V_long = np.zeros((7, 6)) if V is None else np.vstack([V, np.full((1, 6), np.nan)])
    q_long = np.vstack([q, np.full((1, n), np.nan)])

    def twist(rows):
        return None if V is None else V[:rows]

    def same(a, b):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert (x is None and y is None) or np.array_equal(x, y)

    applied = rng.normal(size=(2, N, 6))
    W = rng.normal(size=(2, 6)) if br.nb else None
    tau = rng.normal(size=(2, n))
    for rows in (1, 3):
        exact = br.motion_to_pin(C0, twist(rows), q[:rows + 1])
        same(br.motion_to_pin(C0, V_long, q[:rows + 1]), exact)
        same(br.motion_to_pin(C0, V_long, q_long, rows=rows), exact)
    t_pin = br.force_to_pin(C0, twist(1), W, tau)
    assert np.array_equal(br.force_to_pin(C0, V_long, W, tau), t_pin)
    same(br.force_from_pin(C0, V_long, t_pin), br.force_from_pin(C0, twist(1), t_pin))
    same(br.state_to_pin(C0, V_long, q_long), br.state_to_pin(C0, twist(2), q[:3]))
    same(br.rnea(C0, V_long, q_long, applied=applied[:1]),
         br.rnea(C0, twist(2), q[:3], applied=applied[:1]))
    same(br.inverse_dynamics(C0, V_long, q_long, 1, applied=applied),
         br.inverse_dynamics(C0, twist(3), q[:4], 1, applied=applied))
    same(br.aba(C0, V_long, q_long, tau=tau[:1], base_wrench=None if W is None else W[:1]),
         br.aba(C0, twist(1), q[:2], tau=tau[:1], base_wrench=None if W is None else W[:1]))
    same(br.forward_dynamics(C0, V_long, q_long, 1, tau=tau, base_wrench=W, applied=applied),
         br.forward_dynamics(C0, twist(1), q[:2], 1, tau=tau, base_wrench=W, applied=applied))

    with pytest.raises(ValueError, match=r"q: expected a jet of 4 rows or more"):
        br.motion_to_pin(C0, V_long, q[:3], rows=3)
    with pytest.raises(ValueError, match="rows: "):
        br.motion_to_pin(C0, V_long, q, rows=0)
    with pytest.raises(ValueError, match=r"q: expected a jet of 4 rows or more"):
        br.inverse_dynamics(C0, V_long, q[:3], 1)
    with pytest.raises(ValueError, match=rf"q: expected a jet of .* {n} columns"):
        br.rnea(C0, V_long, q[:, :-1])
    with pytest.raises(ValueError, match="q: contains NaN"):
        br.aba(C0, V_long, q_long[[0, -1]], tau=tau[:1], base_wrench=None if W is None else W[:1])
    with pytest.raises(ValueError, match=r"base_twist: expected a jet of 3 rows or more"):
        br.motion_to_pin(C0, V_long[:2], q[:4])
    with pytest.raises(ValueError, match=r"base_twist: expected a jet of .* 6 columns"):
        br.inverse_dynamics(C0, V_long[:, :5], q, 0)
    if V is not None:
        with pytest.raises(ValueError, match="base_twist: contains NaN"):
            br.motion_to_pin(C0, V_long[[0, -1]], q[:3])
    else:
        with pytest.raises(ValueError, match="base_twist: a fixed base does not move"):
            br.rnea(C0, np.ones((2, 6)), q)


def test_bad_arguments_name_them():
    model, br = MODELS["tree-floating"], BRIDGES["tree-floating"]
    n = model.n_joints
    with pytest.raises(ValueError, match=r"base_twist: expected a jet of 2 rows or more"):
        br.motion_to_pin(None, np.zeros((1, 6)), np.zeros((3, n)))
    with pytest.raises(ValueError, match="base_twist: a floating base needs"):
        br.motion_to_pin(None, None, np.zeros((3, n)))
    with pytest.raises(ValueError, match=r"q: expected a jet of shape \(rows\+1"):
        br.motion_to_pin(None, np.zeros((1, 6)), np.zeros((1, n)))
    with pytest.raises(ValueError, match=r"base_wrench: expected a jet of shape \(2, 6\)"):
        br.force_to_pin(None, np.zeros((1, 6)), np.zeros((1, 6)), np.zeros((2, n)))
    with pytest.raises(ValueError, match="order: Pinocchio's analytic derivatives"):
        br.inverse_dynamics(None, np.zeros((4, 6)), np.zeros((5, n)), 2)
    N = model.n_bodies
    with pytest.raises(ValueError, match=r"base_twist: expected a jet of 2 rows or more"):
        br.rnea(None, np.zeros((1, 6)), np.zeros((3, n)))
    with pytest.raises(ValueError, match=r"q: expected a jet of 3 rows or more"):
        br.rnea(None, np.zeros((2, 6)), np.zeros((2, n)))
    with pytest.raises(ValueError, match=rf"applied: expected a jet of shape \(1, {N}, 6\)"):
        br.rnea(None, np.zeros((2, 6)), np.zeros((3, n)), applied=np.zeros((N, 6)))
    with pytest.raises(TypeError):
        br.rnea(None, np.zeros((2, 6)), np.zeros((3, n)), np.zeros((1, N, 6)))   # keyword-only
    with pytest.raises(ValueError, match=r"q: expected a jet of 2 rows or more"):
        br.aba(None, np.zeros((1, 6)), np.zeros((1, n)), tau=np.zeros((1, n)),
               base_wrench=np.zeros((1, 6)))
    with pytest.raises(ValueError, match=r"tau: expected a jet of shape \(1, "):
        br.aba(None, np.zeros((1, 6)), np.zeros((2, n)), tau=np.zeros(n),
               base_wrench=np.zeros((1, 6)))
    with pytest.raises(ValueError, match=r"base_wrench: expected a jet of shape \(1, 6\)"):
        br.aba(None, np.zeros((1, 6)), np.zeros((2, n)), tau=np.zeros((1, n)),
               base_wrench=np.zeros((2, 6)))
    with pytest.raises(ValueError, match="base_wrench: a free flyer needs its wrench jet"):
        br.aba(None, np.zeros((1, 6)), np.zeros((2, n)), tau=np.zeros((1, n)))
    with pytest.raises(ValueError, match=rf"applied: expected a jet of shape \(2, {N}, 6\)"):
        br.forward_dynamics(None, np.zeros((1, 6)), np.zeros((2, n)), 1, tau=np.zeros((2, n)),
                            base_wrench=np.zeros((2, 6)), applied=np.zeros((1, N, 6)))
    fixed = BRIDGES["tree-fixed"]
    with pytest.raises(ValueError, match="base_wrench: this Pinocchio model has no free flyer"):
        fixed.aba(None, None, np.zeros((2, fixed.n)), tau=np.zeros((1, fixed.n)),
                  base_wrench=np.zeros((1, 6)))
    with pytest.raises(ValueError, match="q_pin: the free flyer's quaternion"):
        br.config_from_pin(np.zeros(br.model.nq))
    with pytest.raises(ValueError, match="base_pose: not in SE"):
        br.velocity_map(2 * np.eye(4))
    assert np.array_equal(swap_halves(np.arange(6.0)), [3, 4, 5, 0, 1, 2])
