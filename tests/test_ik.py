"""Inverse kinematics: the closed-form two-link planar solution, reachable
targets on real robots and random trees, singular and unreachable targets
(bounded steps, non-increasing error, a stationary point; on a 7-joint arm the
closed-form reach gap, on the Panda no singular-matrix error), joint limits."""

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
    assert not res.converged and res.status in ("out_of_reach", "max_iterations")
    assert np.all(np.isfinite(res.q)) and np.all(np.abs(res.q) < 100.0)
    assert res.error_norm >= 1.6 - (L1 + L2) - 1e-12        # the position alone is that far
    J = liedyn.frame_jacobian(model, None, None, res.q[None], 0, "tool", reference="local")[0]
    assert np.linalg.norm(J.T @ res.error) <= 1e-6 * res.error_norm
    assert abs(_wrap(res.q[1])) <= 1e-3 and abs(_wrap(res.q[0] - a)) <= 1e-3


# A 7-joint arm of the KUKA iiwa's layout: axes z y z y z y z; joints 1 and 2
# at the shoulder S, 0.34 m above the base, joint 4 (the elbow) 0.4 m above S,
# joint 6 (the wrist) 0.4 m above that, the tool 0.15 m beyond. Straight
# (q₄ = q₆ = 0) the tool is REACH = 0.95 m from S, and by the triangle
# inequality no configuration puts it farther.
SHOULDER, REACH = 0.34, 0.95


def seven_joint_arm():
    b = ModelBuilder(floating_base=False)
    inertia = se3.spatial_inertia(2.0, (0, 0, 0.1), np.diag([0.02, 0.02, 0.01]))
    parent = b.add_body("base", None, None)
    axes = ((0, 0, 1), (0, 1, 0)) * 3 + ((0, 0, 1),)
    heights = (SHOULDER, 0.0, 0.2, 0.2, 0.2, 0.2, 0.08)
    limits = (2.96, 2.09, 2.96, 2.09, 2.96, 2.09, 3.05)
    for k, (axis, h, lim) in enumerate(zip(axes, heights, limits)):
        parent = b.add_body(f"link{k + 1}", parent, Revolute(axis, lower=-lim, upper=lim),
                            origin=se3.exp([0, 0, 0, 0, 0, h]), inertia=inertia)
    b.add_frame("tool", parent, se3.exp([0, 0, 0, 0, 0, 0.07]))
    return b.build()


def pointing(azimuth, elevation, roll, r):
    """The pose ``r`` from the shoulder along the direction (azimuth,
    elevation from the vertical), tool z along it, rolled by ``roll``: at
    ``r = REACH`` the tool pose of the straight arm ``q = (azimuth, elevation,
    0, 0, 0, 0, roll)``."""
    X = np.eye(4)
    X[:3, :3] = (se3.exp_so3([0, 0, azimuth]) @ se3.exp_so3([0, elevation, 0])
                 @ se3.exp_so3([0, 0, roll]))
    X[:3, 3] = (0.0, 0.0, SHOULDER)
    X[:3, 3] += r * X[:3, 2]
    return X


def _rotation_angle(R):
    return math.acos(min(1.0, max(-1.0, (np.trace(R) - 1.0) / 2.0)))


def _check_reported_gap(model, frame, target, res):
    """The result's distance and angle are those of its ``q``'s pose, its
    error is the smallest of its history."""
    X = frame_pose(model, None, res.q, frame)
    assert abs(res.distance - np.linalg.norm(target[:3, 3] - X[:3, 3])) <= 1e-12
    assert abs(res.angle - _rotation_angle(X[:3, :3].T @ target[:3, :3])) <= 1e-7
    assert res.error_norm == np.min(res.history)
    # ‖log(X⁻¹X*)‖ ≥ ‖p* − p‖: the left Jacobian of SO(3) has singular values ≤ 1
    assert res.error_norm >= res.distance - 1e-12


def test_seven_joint_arm_geometry():
    model = seven_joint_arm()
    az, el, roll = 0.9, 0.7, 0.3
    X = frame_pose(model, None, np.array([az, el, 0, 0, 0, 0, roll]), "tool")
    assert np.max(np.abs(X - pointing(az, el, roll, REACH))) <= 1e-15


def test_target_out_of_reach_of_a_seven_joint_arm():
    """A target 2 m from the shoulder, oriented as the straight arm pointing
    at it: the closest pose is that straight arm, 2 − REACH from the target
    with the orientation matched, so the result is out of reach by exactly
    that gap (no pose gets nearer, by the triangle inequality); iterations
    running out first is a different status."""
    model = seven_joint_arm()
    az, el, roll = 0.9, 0.7, 0.3
    target = pointing(az, el, roll, 2.0)
    q0 = np.array([az - 0.4, el + 0.3, 0.5, 1.2, -0.4, 0.9, roll + 0.5])
    res = inverse_kinematics(model, None, q0, "tool", target, max_iterations=400)
    _monotone(res)
    _check_reported_gap(model, "tool", target, res)
    gap = 2.0 - REACH
    assert res.status == "out_of_reach" and not res.converged
    assert gap - 1e-12 <= res.distance and res.error_norm <= gap + 1e-9
    assert res.angle <= 1e-6
    assert max(abs(res.q[3]), abs(res.q[5])) <= 1e-4                   # straight
    assert "out_of_reach" in repr(res) and "distance=1.050e+00 m" in repr(res)
    short = inverse_kinematics(model, None, q0, "tool", target, max_iterations=3)
    assert short.status == "max_iterations" and short.error_norm > res.error_norm + 1e-3
    _check_reported_gap(model, "tool", target, short)


@pytest.mark.parametrize("q0", [np.zeros(7), np.array([0.5, 1.0, 0.5, 1.2, -0.4, 0.9, 0.8])])
def test_target_at_full_reach_of_a_seven_joint_arm(q0):
    """Targets at the straight arm's pose, where the Jacobian loses rank (the
    tool cannot move along the arm), starting straight (four equal columns)
    and bent: no error raised, the arm ends straight at the target."""
    model = seven_joint_arm()
    for az, el, roll in [(0.0, 0.0, 0.0), (0.9, 0.7, 0.3)]:
        target = pointing(az, el, roll, REACH)
        res = inverse_kinematics(model, None, q0, "tool", target, max_iterations=400)
        _monotone(res)
        _check_reported_gap(model, "tool", target, res)
        assert res.error_norm <= 1e-6 and max(abs(res.q[3]), abs(res.q[5])) <= 1e-2
    target = pointing(0.0, 0.0, 0.0, 2.0)             # straight up, beyond reach
    res = inverse_kinematics(model, None, np.zeros(7), "tool", target)
    assert res.status == "out_of_reach" and abs(res.error_norm - (2.0 - REACH)) <= 1e-12


def test_panda_targets_beyond_reach():
    """Panda, targets 2 m from the base in random directions and orientations,
    random starts within the limits. With the normal equations solved
    directly, some (seeds 5 and 58) raised LinAlgError ("Singular matrix")
    once the damping reached its floor; now each returns its closest iterate,
    out of reach or still improving when the iterations run out."""
    model, _ = real_robot("panda")
    lo, hi = model.joint_lower, model.joint_upper
    statuses = set()
    for seed in [*range(12), 58]:
        rng = np.random.default_rng(seed)
        q0 = rng.uniform(lo, hi)
        target = se3.exp(rng.normal(size=6))
        d = rng.normal(size=3)
        target[:3, 3] = 2.0 * d / np.linalg.norm(d)
        res = inverse_kinematics(model, None, q0, "panda_hand_tcp", target)
        statuses.add(res.status)
        _monotone(res)
        _check_reported_gap(model, "panda_hand_tcp", target, res)
        assert np.all(res.q >= lo) and np.all(res.q <= hi)
        assert res.distance > 0.5                  # the Panda reaches < 1.5 m from its base
    assert "out_of_reach" in statuses and statuses <= {"out_of_reach", "max_iterations"}


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
