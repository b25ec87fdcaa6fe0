"""Frames: poses, twist and position jets, Jacobians and their jets.

Orders 0 and 1 against Pinocchio (``oMf``, ``getFrameJacobian``,
``getFrameJacobianTimeVariation``, ``getFrameVelocity``,
``getFrameAcceleration``, ``getFrameClassicalAcceleration``) on real robots
and random trees; orders up to 5 against central differences in time along
smooth trajectories, with step halving showing the h² law.
"""

import numpy as np
import pinocchio as pin
import pytest

import liedyn
from liedyn import frame_jacobian, frame_kinematics, frame_pose, se3
from liedyn.algorithm.frames import REFERENCES
from liedyn.interop.pinocchio import to_pinocchio
from liedyn.multibody.workspace import binomials
from tests.helpers import rel_err
from tests.robots import Trajectory, central_difference_errors, real_robot, tree_with_frames

# Both libraries form each quantity from a few dozen float64 products of O(1)
# numbers (metres, radians, rad/s): they agree to ~100 eps of 1 + max|x|.
TOL = 1e-12

# Central differences: error(h) = h²/6 · |x'''| + O(h⁴), so halving h divides
# it by 4 up to a relative O(h²) ≈ 1e-4 correction; roundoff, eps·|x|/h ≈
# 1e-13, stays far below the truncation error at these steps.
H = 1e-2
RATIO = (3.8, 4.2)

P = np.zeros((6, 6))
P[:3, 3:] = P[3:, :3] = np.eye(3)
PIN_REF = {"world": pin.WORLD, "local": pin.LOCAL,
           "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}


def _tree(floating):
    model = tree_with_frames(np.random.default_rng(11 if floating else 12), 9,
                             floating_base=floating)
    return model, to_pinocchio(model)


CASES = {   # id: (model and bridge, frames checked)
    "panda": (lambda: real_robot("panda"), ["panda_hand_tcp", "panda_link7", "panda_link0"]),
    "talos": (lambda: real_robot("talos"), ["left_sole_link", "arm_right_7_link", "base_link"]),
    "human": (lambda: real_robot("human"), ["right_hand"]),
    "tree-floating": (lambda: _tree(True), ["frame0", "frame1", "frame2", "body5"]),
    "tree-fixed": (lambda: _tree(False), ["frame1", "frame0", "frame2", "body8"]),
}


def _state(model, rng):
    C0 = se3.exp(rng.normal(size=6) * 0.5) if model.floating_base else None
    V = rng.normal(size=(2, 6)) if model.floating_base else None
    q = rng.normal(size=(3, model.n_joints))
    return C0, V, q


def _pinocchio_frame(bridge, C0, V, q, name):
    """Pinocchio's frame quantities and ``T``, ``Ṫ`` (``v_pin = T ν``)."""
    pm, d = bridge.model, bridge.data
    qp, v = bridge.motion_to_pin(C0, V, q)
    pin.computeJointJacobiansTimeVariation(pm, d, qp, v[0])
    pin.computeJointJacobians(pm, d, qp)
    pin.forwardKinematics(pm, d, qp, v[0], v[1])
    pin.updateFramePlacements(pm, d)
    fid = pm.getFrameId(name)
    T = bridge.velocity_map(C0)
    Tdot = np.zeros_like(T)
    if bridge.nb:
        Tdot[:6, :6] = -T[:6, :6] @ se3.ad(V[0])      # d/dt (P Ad_{C⁻¹}) = −P Ad_{C⁻¹} ad_V
    return pm, d, fid, T, Tdot


@pytest.mark.parametrize("case", list(CASES))
def test_against_pinocchio(case):
    make, names = CASES[case]
    model, bridge = make()
    rng = np.random.default_rng(len(case))
    for trial in range(2):
        C0, V, q = _state(model, rng)
        for name in names:
            pm, d, fid, T, Tdot = _pinocchio_frame(bridge, C0, V, q, name)
            X = frame_pose(model, C0, q[0], name)
            assert rel_err(X, d.oMf[fid].homogeneous) <= TOL, (name, "pose")
            for ref, pref in PIN_REF.items():
                J = frame_jacobian(model, C0, None if V is None else V[:1], q[:2], 1, name,
                                   reference=ref)
                Jp = pin.getFrameJacobian(pm, d, fid, pref)
                dJp = pin.getFrameJacobianTimeVariation(pm, d, fid, pref)
                assert rel_err(P @ J[0], Jp @ T) <= TOL, (name, ref, "J")
                assert rel_err(P @ J[1], dJp @ T + Jp @ Tdot) <= TOL, (name, ref, "dJ")
                fk = frame_kinematics(model, C0, V, q, 1, name, reference=ref)
                assert rel_err(fk.pose, X) <= TOL
                vel = pin.getFrameVelocity(pm, d, fid, pref).vector
                assert rel_err(fk.twist[0], P @ vel) <= TOL, (name, ref, "twist")
                if ref == "local_world_aligned":      # (ω̇, p̈): the classical acceleration
                    acc = pin.getFrameClassicalAcceleration(pm, d, fid, pref).vector
                else:                                 # d/dt of the twist
                    acc = pin.getFrameAcceleration(pm, d, fid, pref).vector
                assert rel_err(fk.twist[1], P @ acc) <= TOL, (name, ref, "twist^(1)")
            fk = frame_kinematics(model, C0, V, q, 1, name, reference="local")
            R = X[:3, :3]
            classical = pin.getFrameClassicalAcceleration(pm, d, fid, pin.LOCAL)
            lwa = pin.getFrameClassicalAcceleration(pm, d, fid, pin.LOCAL_WORLD_ALIGNED)
            assert rel_err(fk.position[0], X[:3, 3]) <= TOL
            assert rel_err(fk.position[1], pin.getFrameVelocity(
                pm, d, fid, pin.LOCAL_WORLD_ALIGNED).linear) <= TOL, (name, "ṗ")
            assert rel_err(fk.position[2], lwa.linear) <= TOL, (name, "p̈")
            assert rel_err(R.T @ fk.position[2], classical.linear) <= TOL, (name, "Rᵀ p̈")


@pytest.mark.parametrize("case", ["panda", "talos", "tree-floating", "tree-fixed"])
def test_higher_orders_against_central_differences(case):
    """``J^(k)``, the twist jet (every reference) and the position jet: the
    derivative of order ``k − 1`` evaluated at ``±h`` along the trajectory,
    differenced, converges to order ``k`` as ``h²``."""
    make, names = CASES[case]
    model, _ = make()
    traj = Trajectory(model, np.random.default_rng(40 + len(case)), speed=0.5)
    K = 4
    name = names[0]
    # "base" takes and returns twists about the base origin *now*, a point held
    # fixed: its derivatives are the world ones moved by that constant map
    # (test_base_reference), not derivatives of calls at other instants.
    for ref in [ref for ref in REFERENCES if ref != "base"]:
        J = frame_jacobian(model, *traj.state(0.0, K), K, name, reference=ref)
        fk = frame_kinematics(model, *traj.state(0.0, K + 1), K, name, reference=ref)
        for k in range(1, K + 1):
            checks = {
                "J": (lambda s: frame_jacobian(model, *traj.state(s, k - 1), k - 1, name,
                                               reference=ref)[k - 1], J[k]),
                "twist": (lambda s: frame_kinematics(model, *traj.state(s, k), k - 1, name,
                                                     reference=ref).twist[k - 1], fk.twist[k]),
                "position": (lambda s: frame_kinematics(model, *traj.state(s, k), k - 1, name,
                                                        reference=ref).position[k],
                             fk.position[k + 1]),
            }
            for what, (f, want) in checks.items():
                e1, e2 = central_difference_errors(f, want, H)
                scale = 1.0 + np.max(np.abs(want))
                assert e2 <= 1e-3 * scale, (ref, what, k, e1, e2)
                assert RATIO[0] <= e1 / e2 <= RATIO[1], (ref, what, k, e1, e2)


@pytest.mark.parametrize("case", ["talos", "tree-floating", "tree-fixed"])
def test_twist_jet_is_the_jacobian_jet_times_the_velocity_jet(case):
    """``V_ref^(k) = Σ_a C(k, a) J_ref^(a) ν^(k−a)``: the product rule on
    ``V_ref = J_ref ν``, in every reference."""
    make, names = CASES[case]
    model, _ = make()
    rng = np.random.default_rng(7)
    K = 5
    C0 = se3.exp(rng.normal(size=6)) if model.floating_base else None
    V = rng.normal(size=(K + 1, 6)) if model.floating_base else None
    q = rng.normal(size=(K + 2, model.n_joints))
    nu = q[1:] if V is None else np.hstack([V, q[1:]])
    B = binomials(K)
    for name in names:
        for ref in REFERENCES:
            J = frame_jacobian(model, C0, None if V is None else V[:K], q[:K + 1], K, name,
                               reference=ref)
            tw = frame_kinematics(model, C0, V, q, K, name, reference=ref).twist
            for k in range(K + 1):
                want = sum(B[k, a] * J[a] @ nu[k - a] for a in range(k + 1))
                assert rel_err(tw[k], want) <= 1e-11 * (1 + k) ** 2, (name, ref, k)


def test_world_jacobian_columns_are_the_screw_jets():
    model, _ = _tree(True)
    rng = np.random.default_rng(3)
    K = 3
    C0, V, q = se3.exp(rng.normal(size=6)), rng.normal(size=(K + 1, 6)), \
        rng.normal(size=(K + 2, model.n_joints))
    fk = liedyn.forward_kinematics(model, C0, V, q, K)
    for f in range(model.n_frames):
        J = frame_jacobian(model, C0, V[:K], q[:K + 1], K, f)
        b = model.frame_body[f]
        anc = set(model.ancestors(b)[:-1].tolist())
        assert np.array_equal(J[0, :, :6], np.eye(6)) and not np.any(J[1:, :, :6])
        for j in range(1, model.n_bodies):
            want = fk.screw[:, j] if j in anc else np.zeros((K + 1, 6))
            assert rel_err(J[:, :, 5 + j], want) <= 1e-14, (f, j)


def test_fixed_base_and_order_zero_arguments():
    model, _ = _tree(False)
    q = np.zeros((1, model.n_joints))
    J = frame_jacobian(model, None, None, q, 0, "frame0")
    assert J.shape == (1, 6, model.n_joints)
    assert np.array_equal(frame_jacobian(model, None, np.zeros((0, 6)), q, 0, "frame0"), J)
    fmodel, _ = _tree(True)
    J = frame_jacobian(fmodel, None, None, np.zeros((1, fmodel.n_joints)), 0, 2)
    assert J.shape == (1, 6, 6 + fmodel.n_joints)


def test_bad_arguments():
    model, _ = _tree(True)
    n = model.n_joints
    q2, V1 = np.zeros((2, n)), np.zeros((1, 6))
    with pytest.raises(ValueError, match="frame.*'nope'"):
        frame_jacobian(model, None, V1, q2, 1, "nope")
    with pytest.raises(ValueError, match=r"frame: index 99 out of range"):
        frame_jacobian(model, None, V1, q2, 1, 99)
    with pytest.raises(TypeError, match="frame: expected a frame name"):
        frame_jacobian(model, None, V1, q2, 1, 1.5)
    with pytest.raises(ValueError, match="reference: expected one of"):
        frame_jacobian(model, None, V1, q2, 1, 0, reference="spatial")
    with pytest.raises(TypeError, match="reference"):
        frame_kinematics(model, None, np.zeros((2, 6)), np.zeros((3, n)), 1, 0, reference=None)
    with pytest.raises(ValueError, match=r"q: expected a jet of 2 rows or more and "):
        frame_jacobian(model, None, V1, np.zeros((1, n)), 1, 0)
    with pytest.raises(ValueError, match=r"base_twist: expected a jet of 1 row or more and 6 "):
        frame_jacobian(model, None, np.zeros((0, 6)), q2, 1, 0)
    with pytest.raises(ValueError, match="base_twist: a floating base needs"):
        frame_jacobian(model, None, None, q2, 1, 0)
    with pytest.raises(ValueError, match=r"q: expected shape"):
        frame_pose(model, None, np.zeros(n + 1), 0)
    with pytest.raises(ValueError, match="base_pose: not in SE"):
        frame_pose(model, 2 * np.eye(4), np.zeros(n), 0)
    with pytest.raises(ValueError, match="q: contains NaN"):
        frame_jacobian(model, None, V1, np.full((2, n), np.nan), 1, 0)
    with pytest.raises(TypeError, match="order"):
        frame_jacobian(model, None, V1, q2, 1.0, 0)
    res = frame_kinematics(model, None, V1, q2, 0, "frame1")
    with pytest.raises(AttributeError):
        res.pose = None
    with pytest.raises(ValueError):
        res.twist[0, 0] = 1.0


def test_base_reference():
    """``"base"``: every twist of the call, in and out, about the base origin
    p₀ held fixed, world axes (SPEC §1): with ``X = Ad_{T(−p₀)}``, the base
    result is the world result of the world inputs moved by the constant
    ``X`` on every row, ``V_base^(k) = X V^(k)`` and
    ``J_base^(k) = X J^(k) diag(X⁻¹, I)``, and it agrees with
    :func:`liedyn.forward_kinematics`'s ``reference="base"`` twists. On the
    base's own frame row 0 is the local-world-aligned twist ``(ω, ṗ)``; the
    rows after it are not (those follow the moving origin)."""
    model, _ = _tree(True)
    rng = np.random.default_rng(21)
    K = 3
    C0, V, q = se3.exp(rng.normal(size=6)), rng.normal(size=(K + 1, 6)), \
        rng.normal(size=(K + 2, model.n_joints))
    T = np.eye(4)
    T[:3, 3] = -C0[:3, 3]
    X = se3.Ad(T)
    Vb = V @ X.T
    E = np.eye(6 + model.n_joints)
    E[:6, :6] = np.linalg.inv(X)
    fkb = liedyn.forward_kinematics(model, C0, Vb, q, K, reference="base")
    for name in ("base", "frame0", "body7"):
        w = frame_kinematics(model, C0, V, q, K, name)
        b = frame_kinematics(model, C0, Vb, q, K, name, reference="base")
        assert rel_err(b.twist, w.twist @ X.T) <= TOL, name
        assert rel_err(b.position, w.position) <= TOL, name
        assert rel_err(b.twist, fkb.twist[:, model.frame_body[model.frame_index(name)]]) <= TOL
        Jw = frame_jacobian(model, C0, V[:K], q[:K + 1], K, name)
        Jb = frame_jacobian(model, C0, Vb[:K], q[:K + 1], K, name, reference="base")
        assert rel_err(Jb, X @ Jw @ E) <= TOL, name
    lwa = frame_kinematics(model, C0, V, q, K, "base", reference="local_world_aligned")
    b = frame_kinematics(model, C0, Vb, q, K, "base", reference="base")
    assert rel_err(b.twist[0], lwa.twist[0]) <= TOL
    assert rel_err(b.twist[1], lwa.twist[1]) > 1e-3          # p̈ ≠ d/dt of v + ω × p₀


def test_an_unknown_frame_is_named_with_the_frames_there_are():
    model, _ = _tree(True)
    with pytest.raises(ValueError, match=r"^frame: unknown frame 'tool'; the model's \d+ frames: "
                                         r"'base', "):
        frame_pose(model, None, np.zeros(model.n_joints), "tool")
