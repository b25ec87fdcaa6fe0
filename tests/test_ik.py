"""Inverse kinematics: the closed-form two-link planar solution, reachable
targets on real robots and random trees, singular and unreachable targets
(bounded steps, non-increasing error, a stationary point), joint limits."""

import math

import numpy as np
import pytest

import liedyn
from liedyn import ModelBuilder, Revolute, frame_pose, inverse_kinematics, se3
from tests.robots import joint_sample, real_robot, tree_with_frames

L1, L2 = 0.7, 0.4


def planar_arm(lengths, lower=-math.inf, upper=math.inf):
    """Planar arm in the xy-plane: joints about z at the origin and at the end
    of each link, tool frame at the end of the last link."""
    b = ModelBuilder(floating_base=False)
    inertia = se3.spatial_inertia(1.0, (0.2, 0, 0), np.diag([0.01, 0.02, 0.02]))
    b.add_body("base", None, None)
    parent, offset = "base", 0.0
    for k, length in enumerate(lengths):
        T = np.eye(4)
        T[0, 3] = offset
        parent = b.add_body(f"link{k}", parent, Revolute((0, 0, 1), lower=lower, upper=upper),
                            origin=T, inertia=inertia)
        offset = length
    T = np.eye(4)
    T[0, 3] = offset
    b.add_frame("tool", parent, T)
    return b.build()


def two_link(lower=-math.inf, upper=math.inf):
    return planar_arm((L1, L2), lower, upper)


def planar_pose(x, y, phi):
    X = np.eye(4)
    X[:3, :3] = se3.exp_so3([0.0, 0.0, phi])
    X[:2, 3] = x, y
    return X


def closed_form(x, y, elbow):
    """The two-link solution (θ1, θ2) for the point (x, y), elbow sign ±1."""
    c2 = (x * x + y * y - L1 * L1 - L2 * L2) / (2 * L1 * L2)
    t2 = elbow * math.acos(c2)
    t1 = math.atan2(y, x) - math.atan2(L2 * math.sin(t2), L1 + L2 * math.cos(t2))
    return np.array([t1, t2])


def _wrap(a):
    return (np.asarray(a) + np.pi) % (2 * np.pi) - np.pi


def _monotone(res):
    h = res.history
    assert np.all(np.isfinite(h)) and np.all(np.diff(h) <= 0.0), h
    assert len(h) == res.iterations + 1 and h[-1] == res.error_norm


@pytest.mark.parametrize("elbow", [1, -1])
def test_two_link_matches_the_closed_form(elbow):
    model = two_link()
    rng = np.random.default_rng(3 + elbow)
    for _ in range(10):
        r = rng.uniform(0.35, 1.05)
        a = rng.uniform(-np.pi, np.pi)
        x, y = r * math.cos(a), r * math.sin(a)
        want = closed_form(x, y, elbow)
        target = planar_pose(x, y, want.sum())
        res = inverse_kinematics(model, None, want + rng.uniform(-0.4, 0.4, 2), "tool", target)
        assert res.converged and res.status == "converged" and res.error_norm <= 1e-10
        assert np.max(np.abs(_wrap(res.q - want))) <= 1e-9, (res.q, want)
        assert np.max(np.abs(frame_pose(model, None, res.q, "tool") - target)) <= 1e-10
        assert res.iterations <= 20
        _monotone(res)


def test_quadratic_convergence():
    model = two_link()
    want = closed_form(0.5, 0.6, 1)
    res = inverse_kinematics(model, None, want + 0.3, "tool", planar_pose(0.5, 0.6, want.sum()),
                             tol=1e-14)
    h = res.history[res.history > 1e-13]
    # once close, each error is about the square of the one before (times O(1))
    assert np.any(h[2:] <= 10.0 * h[1:-1] ** 2), h


def test_start_at_the_singular_configuration():
    """Arm stretched (θ2 = 0, Jacobian of rank 1 in the plane's radial
    direction): damped steps leave the singularity and converge."""
    model = two_link()
    want = closed_form(0.3, 0.5, -1)
    res = inverse_kinematics(model, None, np.zeros(2), "tool", planar_pose(0.3, 0.5, want.sum()))
    assert res.converged and np.max(np.abs(_wrap(res.q - want))) <= 1e-9
    _monotone(res)


def test_singular_target_at_the_edge_of_the_workspace():
    """A three-link planar arm and a target pose at full reach: the only
    solution is the stretched arm, where the 6×3 Jacobian has rank 2 (all
    three columns (e_z, a_k u) share the direction u). No blow-up, the error
    keeps falling, the arm ends stretched toward the target."""
    lengths = (0.5, 0.4, 0.3)
    model = planar_arm(lengths)
    a = 0.8
    reach = sum(lengths)
    target = planar_pose(reach * math.cos(a), reach * math.sin(a), a)
    q0 = np.array([0.2, 0.8, -0.5])
    res = inverse_kinematics(model, None, q0, "tool", target, max_iterations=400)
    _monotone(res)
    J = liedyn.frame_jacobian(model, None, None, np.zeros((1, 3)), 0, "tool")[0]
    assert np.linalg.matrix_rank(J, tol=1e-12) == 2
    assert np.all(np.isfinite(res.q)) and np.max(np.abs(res.q - q0)) <= 2 * np.pi
    assert res.error_norm <= 1e-4 <= res.history[0]
    assert abs(_wrap(res.q[0] - a)) <= 1e-2 and np.max(np.abs(_wrap(res.q[1:]))) <= 1e-2


def test_unreachable_target_ends_at_a_stationary_point():
    """Beyond reach: no blow-up, the error never increases, the result is
    not converged and is a stationary point of ‖e‖² (Jᵀ e ≈ 0): the arm
    stretched toward the target."""
    model = two_link()
    a = -2.0
    target = planar_pose(1.6 * math.cos(a), 1.6 * math.sin(a), a)
    res = inverse_kinematics(model, None, np.array([0.5, 0.5]), "tool", target,
                             max_iterations=500)
    _monotone(res)
    assert not res.converged and res.status in ("stalled", "max_iterations")
    assert np.all(np.isfinite(res.q)) and np.all(np.abs(res.q) < 100.0)
    assert res.error_norm >= 1.6 - (L1 + L2) - 1e-12        # the position alone is that far
    J = liedyn.frame_jacobian(model, None, None, res.q[None], 0, "tool", reference="local")[0]
    assert np.linalg.norm(J.T @ res.error) <= 1e-6 * res.error_norm
    assert abs(_wrap(res.q[1])) <= 1e-3 and abs(_wrap(res.q[0] - a)) <= 1e-3


def test_joint_limits_are_respected():
    """Target reachable only with θ2 beyond its limit: the result stays in
    the limits, the joint ends at its limit, the error is a constrained
    minimum (non-increasing history)."""
    model = two_link(lower=-1.0, upper=1.0)
    want = closed_form(0.35, 0.1, 1)                       # θ2 ≈ 2.6 > 1
    assert want[1] > 1.0
    res = inverse_kinematics(model, None, np.array([0.0, 0.5]), "tool",
                             planar_pose(0.35, 0.1, want.sum()), max_iterations=300)
    _monotone(res)
    assert not res.converged
    assert np.all(res.q >= -1.0) and np.all(res.q <= 1.0) and abs(res.q[1] - 1.0) <= 1e-12
    # reachable within the limits: converges, and the initial guess outside is projected
    want = closed_form(0.9, 0.4, -1)
    res = inverse_kinematics(model, None, np.array([3.0, -3.0]), "tool",
                             planar_pose(0.9, 0.4, want.sum()))
    assert res.converged and np.max(np.abs(res.q - want)) <= 1e-9


@pytest.mark.parametrize("robot,frame", [("panda", "panda_hand_tcp"), ("talos", "left_sole_link"),
                                         ("talos", "gripper_right_base_link")])
def test_reachable_targets_on_real_robots(robot, frame):
    """Targets are the frame's poses at random configurations within the
    limits; starting 0.3 rad away, the solver converges to 1e-10 inside the
    limits (the solution need not be the configuration the target came from)."""
    model, _ = real_robot(robot)
    rng = np.random.default_rng(5)
    C0 = se3.exp(rng.normal(size=6) * 0.3) if model.floating_base else None
    lo, hi = model.joint_lower, model.joint_upper
    for _ in range(5):
        qstar = joint_sample(model, rng)
        target = frame_pose(model, C0, qstar, frame)
        q0 = np.clip(qstar + rng.uniform(-0.3, 0.3, model.n_joints), lo, hi)
        res = inverse_kinematics(model, C0, q0, frame, target)
        assert res.converged, res
        assert np.all(res.q >= lo) and np.all(res.q <= hi)
        X = frame_pose(model, C0, res.q, frame)
        assert np.max(np.abs(X - target)) <= 1e-9
        _monotone(res)


def test_random_tree_frames():
    model = tree_with_frames(np.random.default_rng(8), 12, floating_base=True)
    rng = np.random.default_rng(9)
    for f in range(model.n_bodies, model.n_frames):
        if model.frame_body[f] == 0:
            continue
        qstar = rng.normal(size=model.n_joints)
        target = frame_pose(model, None, qstar, f)
        res = inverse_kinematics(model, None, qstar + 0.2 * rng.normal(size=model.n_joints), f,
                                 target)
        assert res.converged and res.error_norm <= 1e-10
        _monotone(res)


def test_bad_arguments():
    model = two_link()
    X = planar_pose(0.5, 0.5, 0.0)
    with pytest.raises(ValueError, match="target: not in SE"):
        inverse_kinematics(model, None, np.zeros(2), "tool", 2 * np.eye(4))
    with pytest.raises(ValueError, match=r"q: expected shape \(2,\)"):
        inverse_kinematics(model, None, np.zeros(3), "tool", X)
    with pytest.raises(ValueError, match="frame.*'hand'"):
        inverse_kinematics(model, None, np.zeros(2), "hand", X)
    with pytest.raises(ValueError, match="tol"):
        inverse_kinematics(model, None, np.zeros(2), "tool", X, tol=0.0)
    with pytest.raises(ValueError, match="max_step"):
        inverse_kinematics(model, None, np.zeros(2), "tool", X, max_step=-1.0)
    with pytest.raises(ValueError, match="max_iterations"):
        inverse_kinematics(model, None, np.zeros(2), "tool", X, max_iterations=-1)
    with pytest.raises(ValueError, match="q: contains NaN"):
        inverse_kinematics(model, None, np.array([np.nan, 0.0]), "tool", X)
    res = inverse_kinematics(model, None, np.zeros(2), "tool", X, max_iterations=0)
    assert res.iterations == 0 and res.status == "max_iterations" and len(res.history) == 1
    with pytest.raises(AttributeError):
        res.q = None
