"""The Pinocchio oracle's conversions: state round trip, body poses and the
velocity map ``T`` (``v_pin = T ν``) against Pinocchio's own kinematics."""

import numpy as np
import pinocchio as pin
import pytest

import liedyn
from models.aerial_manipulator import aerial_manipulator
from models.trees import random_tree
from tests.helpers import assert_close
from liedyn.model import JOINT_REVOLUTE
from tests.pinocchio_oracle import depth_first_order, to_pinocchio

# Every quantity below is O(1) and produced by a handful of 4×4 products:
# agreement is to a few hundred eps.
TOL = 1e-12


MODELS = [
    pytest.param(aerial_manipulator(), 0, id="aerial"),
    pytest.param(random_tree(np.random.default_rng(101), 8, floating_base=True), 1, id="tree-floating"),
    pytest.param(random_tree(np.random.default_rng(102), 8, floating_base=False), 2, id="tree-fixed"),
    pytest.param(random_tree(np.random.default_rng(103), 5, floating_base=False, shuffle=False), 3,
                 id="chain-fixed"),
]


def _setup(model, seed):
    """Oracle, a random liedyn state ``(C₀, V₀ jet (2, 6), q jet (3, n))`` and
    its Pinocchio ``(q, v, a)``."""
    rng = np.random.default_rng(seed)
    pm = to_pinocchio(model)
    C0 = liedyn.se3.exp(rng.normal(size=6)) if model.floating_base else None
    Vb = rng.normal(size=(2, 6)) if model.floating_base else None
    q = rng.normal(size=(3, model.n_joints))
    return rng, pm, (C0, Vb, q), pm.state_to_pin(C0, Vb, q)


def test_depth_first_order_is_a_preorder_with_contiguous_subtrees():
    parent = random_tree(np.random.default_rng(5), 30).body_parent
    order = depth_first_order(parent)
    assert sorted(order) == list(range(30))
    pos = np.empty(30, int)
    pos[order] = np.arange(30)
    for j in range(1, 30):
        assert pos[parent[j]] < pos[j]
    # subtree of each body occupies a contiguous block right after it
    for j in range(30):
        sub = [k for k in range(30) if j in _ancestors(parent, k)]
        assert sorted(pos[sub]) == list(range(pos[j], pos[j] + len(sub)))


def _ancestors(parent, k):
    out = []
    while k >= 0:
        out.append(k)
        k = parent[k]
    return out


@pytest.mark.parametrize("model,seed", MODELS)
def test_state_round_trip(model, seed):
    _, pm, (C0, Vb, q), (qp, vp, ap) = _setup(model, 200 + seed)
    assert qp.shape == (pm.model.nq,) and vp.shape == ap.shape == (pm.model.nv,)
    C0r, Vbr, qr = pm.state_from_pin(qp, vp, ap)
    assert_close(C0r, C0 if model.floating_base else model.home_pose, rtol=0, atol=TOL, what="C0")
    assert_close(Vbr, Vb if model.floating_base else np.zeros((2, 6)), rtol=0, atol=TOL, what="V0")
    assert_close(qr, q, rtol=0, atol=TOL, what="q")


@pytest.mark.parametrize("model,seed", MODELS)
def test_body_poses_match_forward_kinematics(model, seed):
    _, pm, (C0, Vb, q), (qp, _, _) = _setup(model, 300 + seed)
    fk = liedyn.forward_kinematics(model, C0, None if Vb is None else Vb[:1], q[:2], 0)
    assert_close(pm.body_poses(qp), fk.body_pose, rtol=0, atol=TOL, what="body poses")


@pytest.mark.parametrize("model,seed", MODELS)
def test_home_poses_and_joint_screws_are_relative_to_the_base_frame(model, seed):
    """``body_home`` and ``joint_screw`` against Pinocchio's kinematics of the
    base at identity and q = 0: ``H_j`` is body j's pose in the base frame
    (``H_0 = I``) and ``Y_j`` the joint screw in the base frame, ``Ad_{O_j}``
    of the joint's local screw (``(e, 0)`` revolute, ``(0, e)`` prismatic)."""
    pm = to_pinocchio(model, base_pose=np.eye(4))
    qp = pm.config_to_pin(np.eye(4), np.zeros(model.n_joints))
    assert np.array_equal(model.body_home[0], np.eye(4))
    assert_close(pm.body_poses(qp), model.body_home, rtol=0, atol=TOL, what="H_j")
    assert not np.any(model.joint_screw[0])
    for j in range(1, model.n_bodies):
        e = np.array(model.joint_axis[j])
        local = (np.concatenate([e, np.zeros(3)]) if model.joint_type[j] == JOINT_REVOLUTE
                 else np.concatenate([np.zeros(3), e]))
        Y = liedyn.se3.Ad(pm.data.oMi[int(pm.joint_id[j])].homogeneous) @ local
        assert_close(model.joint_screw[j], Y, rtol=0, atol=TOL, what=f"Y_{j}")
    # a base away from the origin moves every pose, not H_j
    C0 = liedyn.se3.exp(np.random.default_rng(600 + seed).normal(size=6))
    fk = liedyn.forward_kinematics(model, C0, np.zeros((1, 6)) if model.floating_base else None,
                                   np.zeros((2, model.n_joints)), 0)
    assert_close(fk.body_pose, C0 @ model.body_home, rtol=0, atol=TOL, what="C_j = C₀ H_j")


@pytest.mark.parametrize("model,seed", MODELS)
def test_velocity_map_gives_pinocchio_body_velocities(model, seed):
    """Pinocchio's joint-frame velocities and classical accelerations, mapped to
    the world, equal liedyn's spatial twists and their derivatives."""
    _, pm, (C0, Vb, q), (qp, vp, ap) = _setup(model, 400 + seed)
    pin.forwardKinematics(pm.model, pm.data, qp, vp, ap)
    fk = liedyn.forward_kinematics(model, C0, Vb, q, 1)
    for j in range(model.n_bodies):
        i = int(pm.joint_id[j])
        if i == 0:
            continue
        Ad = liedyn.se3.Ad(pm.data.oMi[i].homogeneous)
        # spatial twist = Ad_O (ω_local, v_local); Pinocchio's data.a is the
        # derivative of the local twist, and d/dt(Ad_O V_l) = Ad_O V̇_l.
        Vw = Ad @ np.concatenate([pm.data.v[i].angular, pm.data.v[i].linear])
        Aw = Ad @ np.concatenate([pm.data.a[i].angular, pm.data.a[i].linear])
        assert_close(Vw, fk.twist[0, j], rtol=0, atol=TOL * 10, what=f"V body {j}")
        assert_close(Aw, fk.twist[1, j], rtol=0, atol=TOL * 10, what=f"dV body {j}")


def test_fixed_base_pose_is_baked_into_placements():
    rng = np.random.default_rng(6)
    model = random_tree(rng, 5, floating_base=False)
    C0 = liedyn.se3.exp(rng.normal(size=6))
    pm = to_pinocchio(model, base_pose=C0)
    q = rng.normal(size=model.n_joints)
    fk = liedyn.forward_kinematics(model, C0, None, np.stack([q, q]), 0)
    assert_close(pm.body_poses(pm.config_to_pin(None, q)), fk.body_pose, rtol=0, atol=TOL,
                 what="poses with a non-home fixed base")


@pytest.mark.parametrize("model,seed", MODELS)
def test_mass_matrix_and_aba_conversions_are_consistent_with_rnea(model, seed):
    """Within Pinocchio alone: columns of the converted RNEA's response to
    ``ν̇ = e_i`` form ``M = Tᵀ M_pin T``, and the converted ABA inverts the
    converted RNEA (with applied wrenches)."""
    rng, pm, (C0, Vb, q), _ = _setup(model, 500 + seed)
    nb, n = pm.nb, model.n_joints
    applied = rng.normal(size=(model.n_bodies, 6))

    def tbar(nudot):
        Vj = None if Vb is None else np.stack([Vb[0], nudot[:6]])
        W0, tau = pm.rnea(C0, Vj, np.stack([q[0], q[1], nudot[nb:]]), applied)
        return np.concatenate([W0[:nb], tau])

    b = tbar(np.zeros(nb + n))
    M = np.stack([tbar(e) - b for e in np.eye(nb + n)], axis=1)
    Mc = pm.mass_matrix(C0, q[0])
    # the difference of two RNEA calls carries ~eps·|b| of rounding per entry
    assert_close(Mc, M, rtol=0, atol=1e3 * np.finfo(float).eps * (1 + np.max(np.abs(b))),
                 what="mass matrix")
    assert_close(Mc, Mc.T, rtol=0, atol=0, what="symmetric")
    nudot = rng.normal(size=nb + n)
    t = tbar(nudot)
    dV0, ddq = pm.aba(C0, None if Vb is None else Vb[:1], q[:2], tau=t[nb:][None],
                      base_wrench=t[None, :6] if nb else None, applied=applied[None])
    assert_close(np.concatenate([dV0[:nb], ddq]), nudot, rtol=0, atol=1e-10, what="aba∘rnea")
