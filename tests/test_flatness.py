"""Tests of the flat map of a parallel-thrust base carrying a tree (SPEC §17),
each against an independent route: central differences in time of the
order-0 map, the single rigid body's closed form (Mellinger–Kumar's maps with
the exact yaw rate), the whole robot's momentum balance, and the simulator
flying the flat inputs open loop."""

from importlib.metadata import distribution
from math import comb

import numpy as np
import pytest

import liedyn as ld
from liedyn import control, se3
from models.trees import random_tree
from tests.helpers import assert_close

G = np.array([0.0, 0.0, -9.81])


def _borinot():
    erd = distribution("example-robot-data")
    path = next(f for f in erd.files if f.name == "borinot_flying_arm_2.urdf")
    return ld.load_urdf(erd.locate_file(path), floating_base=True)


def _tree():
    """A random tree of four bodies on a base whose thrust is its body z axis."""
    return random_tree(np.random.default_rng(29), 4)


@pytest.fixture(scope="module", params=["borinot", "tree"])
def robot(request):
    return _borinot() if request.param == "borinot" else _tree()


@pytest.fixture(scope="module")
def borinot():
    return _borinot()


def _sine(amp, w, phase, t, rows):
    """Jet of ``amp sin(w t + phase)``: row k is ``amp w^k sin(w t + phase + k π/2)``."""
    k = np.arange(rows)
    return amp * w ** k * np.sin(w * t + phase + k * np.pi / 2)


class FigureEight:
    """Flat outputs with closed-form jets: the centre of mass on a figure-eight
    (1 m by 0.6 m, ω = 2 rad/s: up to 9.6 m/s² sideways), a swinging yaw and
    sinusoidal joints."""

    def __init__(self, n, w=2.0, q_amp=0.4, still=False):
        self.n, self.w, self.q_amp, self.still = n, w, q_amp, still

    def __call__(self, t, r=3):
        w = self.w
        xG = np.stack([_sine(1.0, w, 0.0, t, r + 5), _sine(0.6, 2 * w, 0.0, t, r + 5),
                       _sine(0.2, w, 0.5, t, r + 5)], axis=1)
        xG[0, 2] += 1.0
        psi = _sine(0.5, 0.7, 0.0, t, r + 3)
        psi[0] += 0.3
        q = np.stack([_sine(self.q_amp, 1.1 + 0.3 * j, j, t, r + 3) for j in range(self.n)],
                     axis=1)
        q[0] += 0.1
        if self.still:
            q[1:] = 0.0
        return xG, psi, q


def _difference(f, k, h):
    """Central difference of order ``k`` (1..4) of ``f(s)`` at 0, error O(h²)."""
    c = {1: {1: 0.5, -1: -0.5}, 2: {1: 1.0, 0: -2.0, -1: 1.0},
         3: {2: 0.5, 1: -1.0, -1: 1.0, -2: -0.5},
         4: {2: 1.0, 1: -4.0, 0: 6.0, -1: -4.0, -2: 1.0}}[k]
    return sum(w * f(i * h) for i, w in c.items()) / h ** k


def _quadrotor(arm=0.25, kappa=0.016):
    return [control.Rotor(arm / np.sqrt(2) * np.array([x, y, 0.0]), (0, 0, 1), s, kappa)
            for x, y, s in ((1, 1, 1), (-1, 1, -1), (-1, -1, 1), (1, -1, -1))]


def _coplanar_hexarotor(arm=0.3, kappa=0.016):
    return [control.Rotor(arm * np.array([np.cos(a), np.sin(a), 0.05]), (0, 0, 1),
                          1 if i % 2 else -1, kappa)
            for i, a in enumerate(np.arange(6) * np.pi / 3)]


FIELDS = ("thrust", "body_moment", "tau", "base_wrench", "rotor_thrust")


@pytest.mark.parametrize("field", FIELDS + ("body_rates",))
def test_jets_are_the_time_derivatives_of_the_order_zero_map(robot, field):
    """Row k of the order-3 jets against the k-th central difference of the
    order-0 map at t ± h, ± 2h: the error is O(h²), so it falls by 4 when h
    halves (a wrong jet leaves an error that does not fall)."""
    out = FigureEight(robot.n_joints)
    A = control.rotor_allocation(_quadrotor())
    t, r = 0.37, 3
    jet = getattr(control.flat_map(robot, *out(t, r), r, allocation=A), field)

    def at(s):
        return getattr(control.flat_map(robot, *out(t + s, 0), 0, allocation=A), field)[0]

    for k in range(1, r + 1):
        err = [np.abs(_difference(at, k, h) - jet[k]).max() for h in (0.04, 0.02)]
        ratio = err[0] / err[1]
        assert 3.0 < ratio < 5.0, (field, k, err)


def _rigid_body_closed_form(model, q0, xG, psi):
    """Mellinger–Kumar's maps for the robot locked at ``q0`` (one rigid body),
    with the exact yaw rate: thrust ``f, ḟ``, body rates ``ω_B``, ``ω̇_B`` and
    the moment about the base origin in base axes. Also their published yaw
    rate ``ψ̇ z_W·z_B``."""
    fk = ld.forward_kinematics(model, np.eye(4), np.zeros((1, 6)), np.stack([q0, 0 * q0]), 0)
    M = sum(se3.transform_inertia(C, Mb) for C, Mb in zip(fk.body_pose, model.body_inertia))
    m = M[3, 3]
    c = np.array([M[2, 4], M[0, 5], M[1, 3]]) / m                 # M[:3, 3:] = m ĉ
    J_G = M[:3, :3] - m * (c @ c * np.eye(3) - np.outer(c, c))
    a, a1, a2 = xG[2] - G, xG[3], xG[4]
    f = m * np.linalg.norm(a)
    z = a / np.linalg.norm(a)
    xC = np.array([np.cos(psi[0]), np.sin(psi[0]), 0.0])
    yC = np.array([-np.sin(psi[0]), np.cos(psi[0]), 0.0])
    y = np.cross(z, xC)
    y /= np.linalg.norm(y)
    x = np.cross(y, z)
    f1 = m * z @ a1
    h_w = m / f * (a1 - (z @ a1) * z)                              # ω × z_B
    p, qr = -h_w @ y, h_w @ x
    N = psi[1] * (yC @ y) + p * (xC @ z)                           # from x_C · y_B = 0
    D = xC @ x
    rr = N / D
    w = p * x + qr * y + rr * z
    z1, x1, y1 = np.cross(w, z), np.cross(w, x), np.cross(w, y)
    f2 = m * (z @ a2 + z1 @ a1)
    h_a = (m * a2 - f2 * z - 2 * f1 * z1) / f - np.cross(w, z1)   # ω̇ × z_B
    p1, q1 = -h_a @ y, h_a @ x
    xC1, yC1 = psi[1] * yC, -psi[1] * xC
    N1 = (psi[2] * (yC @ y) + psi[1] * (yC1 @ y + yC @ y1) + p1 * (xC @ z)
          + p * (xC1 @ z + xC @ z1))
    D1 = xC1 @ x + xC @ x1
    r1 = (N1 - rr * D1) / D
    wB, wB1 = np.array([p, qr, rr]), np.array([p1, q1, r1])
    MB = J_G @ wB1 + np.cross(wB, J_G @ wB) + np.cross(c, [0.0, 0.0, f])
    return dict(thrust=np.array([f, f1]), body_rates=np.stack([wB, wB1]), body_moment=MB,
                published_yaw_rate=psi[1] * z[2])


def _massless_arm():
    b = ld.ModelBuilder(floating_base=True, gravity=G)
    b.add_body("base", None, None, np.eye(4),
               se3.spatial_inertia(1.6, (0.01, -0.02, 0.03), np.diag([0.02, 0.025, 0.04])))
    T = np.eye(4)
    T[2, 3] = -0.15
    b.add_body("link1", "base", ld.Revolute((0, 1, 0), point=(0, 0, 0.05)), T, np.zeros((6, 6)))
    b.add_body("link2", "link1", ld.Revolute((1, 0, 0)), T, np.zeros((6, 6)))
    return b.build()


@pytest.mark.parametrize("case", ["locked", "massless"])
def test_a_rigid_body_is_mellinger_kumar_with_the_exact_yaw_rate(borinot, case):
    """The arm locked (q constant) or massless: the whole robot is one rigid
    body, whose thrust, body rates, their derivatives and body moment have a
    closed form; equal to round-off. Their published yaw rate drops a term."""
    model = borinot if case == "locked" else _massless_arm()
    out = FigureEight(model.n_joints, still=(case == "locked"))
    worst_yaw_rate_gap = 0.0
    for t in np.linspace(0.0, 3.0, 7):
        xG, psi, q = out(t)
        res = control.flat_map(model, xG, psi, q, 1)
        cf = _rigid_body_closed_form(model, q[0], xG, psi)
        scale = model.body_mass.sum() * 9.81          # the hover thrust; terms are O(10) of it
        assert_close(res.thrust, cf["thrust"], 0.0, 1e-12 * scale, what=f"thrust at t = {t}")
        assert_close(res.body_rates[:2], cf["body_rates"], 0.0, 1e-12 * 10, what=f"rates at t = {t}")
        assert_close(res.body_moment[0], cf["body_moment"], 0.0, 1e-12 * scale,
                     what=f"body moment at t = {t}")
        worst_yaw_rate_gap = max(worst_yaw_rate_gap,
                                 abs(cf["published_yaw_rate"] - res.body_rates[0, 2]))
    assert worst_yaw_rate_gap > 0.05


@pytest.mark.parametrize("r", [0, 1, 3])
def test_lateral_force_is_round_off_and_the_momentum_balances(robot, r):
    """The body-frame force is ``f e₃`` (lateral residual at round-off), and
    the whole robot's momentum jets from :func:`liedyn.centroidal` obey
    ``Ṗ = F + m g⃗`` and ``ḣ_G = m_O − x_G × F`` (thrust the only force with
    a moment about the centre of mass) at every order; the centre of mass
    is the flat output."""
    out = FigureEight(robot.n_joints)
    m = robot.body_mass.sum()
    for t in (0.0, 0.8, 1.9):
        xG, psi, q = out(t, r)
        res = control.flat_map(robot, xG, psi, q, r)
        # order k's forces are sums of terms of the size of m x_G^(k+2) (and g at k = 0)
        size = m * (np.abs(xG[2:r + 3]).max(axis=1) + 9.81)
        assert np.all(np.abs(res.lateral_force) < 1e-12 * size[:, None])
        cen = ld.centroidal(robot, res.base_pose, res.base_twist, res.q, r + 1)
        assert_close(cen.com, xG[:r + 2], 1e-12, 1e-12, what="centre of mass")
        F = res.base_wrench[:, 3:]
        assert_close(cen.momentum[1:, 3:], F + np.outer(np.eye(r + 1)[0], m * G), 0.0,
                     1e-12 * size[:, None], what="linear momentum rate")
        m_G = np.array([res.base_wrench[k, :3] - sum(
            comb(k, a) * np.cross(xG[a], F[k - a]) for a in range(k + 1)) for k in range(r + 1)])
        assert_close(cen.centroidal_momentum[1:, :3], m_G, 0.0, 1e-12 * size[:, None],
                     what="angular momentum rate about the centre of mass")


def _open_loop_error(model, out, dt, duration):
    """Fly the flat inputs (thrust and body moment applied at the simulated
    pose, joint torques) open loop from the flat state; the largest errors
    of x_G, R and q over the run."""
    def controller(t, state):
        fm = control.flat_map(model, *out(t, 0), 0)
        C = state.base_pose
        F = C[:3, 2] * fm.thrust[0]
        W = np.concatenate([C[:3, :3] @ fm.body_moment[0] + np.cross(C[:3, 3], F), F])
        return ld.Inputs(tau=fm.tau[0], base_wrench=W)

    fm = control.flat_map(model, *out(0.0, 0), 0)
    start = ld.State(base_pose=fm.base_pose, base_twist=fm.base_twist[0], q=fm.q[0], qd=fm.q[1])
    traj = ld.simulate(model, start, duration, dt=dt, controller=controller)
    err = np.zeros(3)
    for t, C, V, q in zip(traj.time, traj.base_pose, traj.base_twist, traj.q):
        xG = ld.centroidal(model, C, V, q, 0).com[0]
        want = control.flat_map(model, *out(t, 0), 0)
        err = np.maximum(err, [np.abs(xG - out(t, 0)[0][0]).max(),
                               np.abs(C[:3, :3] - want.rotation[0]).max(),
                               np.abs(q[0] - want.q[0]).max()])
    return err


def test_the_simulator_flies_the_flat_inputs_to_the_flat_outputs(robot):
    """Open loop, the largest error over 0.4 s falls as dt⁴ (RK4): by 16 when
    dt halves."""
    out = FigureEight(robot.n_joints)
    e1, e2 = (_open_loop_error(robot, out, dt, 0.4) for dt in (0.01, 0.005))
    ratio = e1 / e2
    assert np.all(ratio > 12.0) and np.all(ratio < 20.0), (e1, e2)
    assert np.all(e2 < 1e-5), e2


@pytest.mark.parametrize("rotors", [_quadrotor(), _coplanar_hexarotor()],
                         ids=["quadrotor", "coplanar hexarotor"])
def test_rotor_thrusts_produce_the_wrench_and_are_the_minimum_norm_split(borinot, rotors):
    """``A f_rotor^(k) = (M^B, 0, 0, f)^(k)``; with six rotors the split is
    orthogonal to the null space of ``A₄`` (minimum norm); and
    :func:`liedyn.constrained_inverse_dynamics` with the same allocation as
    ``base_actuation`` and no constraint accepts the motion (its residual is
    round-off) and returns the same efforts and joint torques."""
    A = control.rotor_allocation(rotors)
    out = FigureEight(borinot.n_joints)
    r = 2
    res = control.flat_map(borinot, *out(0.6, r), r, allocation=A)
    Wb = np.hstack([res.body_moment, np.zeros((r + 1, 2)), res.thrust[:, None]])
    scale = borinot.body_mass.sum() * 9.81
    assert_close(res.rotor_thrust @ A.T, Wb, 0.0, 1e-12 * scale, what="A f")
    A4 = A[[0, 1, 2, 5]]
    null = np.linalg.svd(A4)[2][4:]                  # (m − 4, m): none for a quadrotor
    assert np.all(np.abs(res.rotor_thrust @ null.T) < 1e-12 * scale)
    cid = ld.constrained_inverse_dynamics(borinot, ld.ConstraintSet(borinot, []), res.base_pose,
                                          res.base_twist, res.q, r, base_actuation=A)
    # round-off of each order's solve: relative to that order's largest term (order 2 of this
    # figure-eight reaches 800 N/s^2; the compiled split works on E R^-1 E^T, squaring E's
    # condition)
    size = np.maximum(scale, np.abs(res.rotor_thrust).max(axis=1, keepdims=True))
    assert_close(cid.base_effort, res.rotor_thrust, 0.0, 1e-10 * size, what="efforts")
    assert_close(cid.tau, res.tau, 0.0, 1e-10 * np.maximum(scale, np.abs(res.tau).max(
        axis=1, keepdims=True)), what="tau")
    V = res.base_twist.copy()
    V[1, 3] += 1.0                                   # a sideways push the rotors cannot make
    with pytest.raises(ValueError, match="cannot supply the base wrench.*residual"):
        ld.constrained_inverse_dynamics(borinot, ld.ConstraintSet(borinot, []), res.base_pose,
                                        V, res.q, r, base_actuation=A)


def test_batched_samples_equal_single_calls_and_a_callable_of_time(borinot):
    out = FigureEight(borinot.n_joints)
    A = control.rotor_allocation(_quadrotor())
    times = np.linspace(0.0, 1.0, 5)
    r = 2
    jets = [out(t, r) for t in times]
    batch = control.flat_map(borinot, np.stack([j[0] for j in jets]),
                             np.stack([j[1] for j in jets]), np.stack([j[2] for j in jets]), r,
                             allocation=A)
    along = control.flat_map_along(borinot, lambda t: out(t, r), times, r, allocation=A)
    for i, t in enumerate(times):
        one = control.flat_map(borinot, *jets[i], r, allocation=A)
        for name, value in one._asdict().items():
            np.testing.assert_array_equal(getattr(batch, name)[i], value, err_msg=name)
            np.testing.assert_array_equal(getattr(along, name)[i], value, err_msg=name)


def test_a_batch_split_among_threads_equals_single_calls(borinot):
    """Enough samples for one block per core: every sample as its single call,
    and a bad sample named by its index and time."""
    out = FigureEight(borinot.n_joints)
    times = np.linspace(0.0, 2.0, 4 * ld.algorithm.batch.MIN_SAMPLES_PER_THREAD + 3)
    r = 1
    jets = [out(t, r) for t in times]
    X, P, Q = (np.stack([j[i] for j in jets]) for i in range(3))
    batch = control.flat_map(borinot, X, P, Q, r, reference="base")
    for i in (0, 1, len(times) // 2, len(times) - 1):
        one = control.flat_map(borinot, *jets[i], r, reference="base")
        for name, value in one._asdict().items():
            if value is not None:
                np.testing.assert_array_equal(getattr(batch, name)[i], value, err_msg=name)
    bad = len(times) - 2
    Q[bad, 1, 0] = np.nan
    with pytest.raises(ValueError, match=rf"q: contains NaN or infinite values at t = "
                                         rf"{times[bad]:.9g} \(sample {bad}\)"):
        control.flat_map(borinot, X, P, Q, r, times=times)


def test_reference_base_moves_the_point_of_twist_and_wrench(borinot):
    """About the base origin the twist's linear part is ``ṗ`` at row 0 and the
    wrench's moment is ``m_O − p × F``."""
    xG, psi, q = FigureEight(borinot.n_joints)(0.4, 1)
    w = control.flat_map(borinot, xG, psi, q, 1)
    b = control.flat_map(borinot, xG, psi, q, 1, reference="base")
    p = w.base_pose[:3, 3]
    assert_close(b.base_twist[0, 3:], w.base_twist[0, 3:] + np.cross(w.base_twist[0, :3], p),
                 0.0, 1e-12, what="ṗ")
    assert_close(b.base_wrench[:, :3], w.base_wrench[:, :3] - np.cross(p, w.base_wrench[:, 3:]),
                 0.0, 1e-11, what="moment about the base origin")


def test_bad_input_is_refused_by_name_and_time(borinot):
    out = FigureEight(borinot.n_joints)
    xG, psi, q = out(0.2, 1)
    fall = xG.copy()
    fall[2] = G
    with pytest.raises(ValueError, match="com: free fall"):
        control.flat_map(borinot, fall, psi, q, 1)
    batch = np.stack([xG, fall])
    with pytest.raises(ValueError, match=r"com: free fall at t = 0.5 \(sample 1\)"):
        control.flat_map(borinot, batch, np.stack([psi, psi]), np.stack([q, q]), 1,
                         times=[0.0, 0.5])
    flip = xG.copy()
    flip[2, :2] = 4.0 * np.array([np.cos(psi[0]), np.sin(psi[0])])
    flip[2, 2] = G[2]                                  # thrust horizontal, along the heading
    with pytest.raises(ValueError, match="yaw: singular"):
        control.flat_map(borinot, flip, psi, q, 1)
    with pytest.raises(ValueError, match=r"com: expected at least 6 rows .* for order 1"):
        control.flat_map(borinot, xG[:5], psi, q, 1)
    with pytest.raises(ValueError, match=r"yaw: expected at least 4 rows"):
        control.flat_map(borinot, xG, psi[:3], q, 1)
    with pytest.raises(ValueError, match=r"q: expected a jet of shape"):
        control.flat_map(borinot, xG, psi, q[:, :1], 1)
    tilted = control.rotor_allocation([control.Rotor((0.2, 0, 0), (0.1, 0, 1), 1, 0.01)] * 4)
    with pytest.raises(ValueError, match="allocation: not a parallel-thrust base"):
        control.flat_map(borinot, xG, psi, q, 1, allocation=tilted)
    line = control.rotor_allocation([control.Rotor((x, 0, 0), (0, 0, 1), 1, 0.0)
                                     for x in (-0.2, -0.1, 0.1, 0.2)])
    with pytest.raises(ValueError, match=r"allocation: rank [0-3] of the rows"):
        control.flat_map(borinot, xG, psi, q, 1, allocation=line)
    with pytest.raises(ValueError, match="allocation: expected a \\(6, m\\)"):
        control.flat_map(borinot, xG, psi, q, 1, allocation=np.zeros((4, 4)))
    fixed = random_tree(np.random.default_rng(1), 3, floating_base=False)
    with pytest.raises(ValueError, match="model: a fixed base"):
        control.flat_map(fixed, xG, psi, np.zeros((4, 2)), 1)
    with pytest.raises(TypeError, match="model"):
        control.flat_map("borinot", xG, psi, q, 1)
    with pytest.raises(TypeError, match="outputs: expected a callable"):
        control.flat_map_along(borinot, xG, [0.0], 1)


def test_feasibility_reports_the_first_violation_of_each_input(borinot):
    """Limits set below what the plan needs: the first sample over each limit,
    its time, value and bound, and the worst value, as read off the arrays."""
    A = control.rotor_allocation(_quadrotor())
    times = np.linspace(0.0, 2.0, 41)
    out = FigureEight(borinot.n_joints, w=1.0)       # gentle: every rotor pushes
    plan = control.flat_map_along(borinot, lambda t: out(t, 1), times, 1, allocation=A)
    f, tau = plan.rotor_thrust, plan.tau
    ok = control.feasibility(borinot, plan, times=times, thrust_max=2 * f[:, 0].max())
    assert ok.feasible and ok.first is None and ok.violations == ()
    f_max = 0.95 * f[:, 0].max()
    rate_max = 0.5 * np.abs(tau[:, 1, 1]).max()
    res = control.feasibility(borinot, plan, times=times, thrust_max=f_max,
                              torque_rate_max=[np.inf, rate_max])
    assert not res.feasible
    i = int(np.argmax((f[:, 0] > f_max).any(axis=1)))
    rotor = int(np.argmax(f[i, 0] > f_max))
    first = res.first
    assert (first.input, first.sample, first.time, first.limit) == \
        (f"rotor {rotor} thrust", i, times[i], f_max)
    assert first.value == f[i, 0, rotor] and first.worst == f[:, 0, rotor].max()
    j = int(np.argmax(np.abs(tau[:, 1, 1]) > rate_max))
    rate = [v for v in res.violations if v.input.endswith("torque rate")]
    assert len(rate) == 1 and rate[0].sample == j
    assert rate[0].input == f"joint {borinot.joint_names[1]!r} torque rate"
    pulled = plan._replace(rotor_thrust=f.copy())
    pulled.rotor_thrust[7, 0, 2] = -0.1
    neg = control.feasibility(borinot, pulled)
    assert neg.first == control.Violation("rotor 2 thrust", 7, None, -0.1, 0.0, -0.1)
    with pytest.raises(ValueError, match="rates need the flat map of order"):
        control.feasibility(borinot, control.flat_map(borinot, *out(0.0, 0), 0),
                            thrust_rate_max=1.0)
    with pytest.raises(ValueError, match="thrust_max: expected positive"):
        control.feasibility(borinot, plan, thrust_max=-1.0)
    with pytest.raises(TypeError, match="flat: expected"):
        control.feasibility(borinot, f)


def test_pinocchio_centroidal_momentum_rate_is_thrust_plus_gravity(robot):
    """Pinocchio's ``computeCentroidalMomentumTimeVariation`` at the flat
    motion (its own parse of Borinot's URDF, or the random tree mirrored):
    ``ḣ_G = (m_O − x_G × F, F + m g⃗)``, the thrust the only force with a
    moment about the centre of mass."""
    pin = pytest.importorskip("pinocchio")
    from liedyn.interop.pinocchio import pair, to_pinocchio
    from models.example_robots import pinocchio_from_urdf
    if robot.body_names[0] == "borinot__base_link":
        erd = distribution("example-robot-data")
        path = erd.locate_file(next(f for f in erd.files
                                    if f.name == "borinot_flying_arm_2.urdf"))
        P = pair(robot, pinocchio_from_urdf(path, True))
    else:
        P = to_pinocchio(robot)
    out = FigureEight(robot.n_joints)
    m = robot.body_mass.sum()
    for t in (0.0, 1.1):
        xG, psi, q = out(t, 0)
        res = control.flat_map(robot, xG, psi, q, 0)
        qp, v, a = P.state_to_pin(res.base_pose, res.base_twist, res.q)
        pin.computeCentroidalMomentumTimeVariation(P.model, P.data, qp, v, a)
        dh = P.data.dhg
        F = res.base_wrench[0, 3:]
        scale = m * 9.81
        assert_close(P.data.com[0], xG[0], 0.0, 1e-12, what="centre of mass")
        assert_close(dh.linear, F + m * G, 0.0, 1e-12 * scale, what="linear momentum rate")
        assert_close(dh.angular, res.base_wrench[0, :3] - np.cross(xG[0], F), 0.0,
                     1e-12 * scale, what="angular momentum rate about the centre of mass")


def _pinocchio_pair(robot):
    from liedyn.interop.pinocchio import pair, to_pinocchio
    from models.example_robots import pinocchio_from_urdf
    if robot.body_names[0] == "borinot__base_link":
        erd = distribution("example-robot-data")
        path = erd.locate_file(next(f for f in erd.files
                                    if f.name == "borinot_flying_arm_2.urdf"))
        return pair(robot, pinocchio_from_urdf(path, True))
    return to_pinocchio(robot)


def _pinocchio_open_loop_error(robot, P, out, dt, duration):
    """The flat inputs integrated by classical RK4 in the ambient coordinates
    ``(C₀ ∈ R^{4×4}, V₀, q, q̇)`` with ``Ċ₀ = [V₀] C₀`` and the accelerations
    of Pinocchio's ``aba`` (the pose projected on SE(3) where Pinocchio reads
    it); the largest errors of x_G, R and q at the steps."""
    import pinocchio as pin

    def rate(t, C, V, q, qd):
        C = se3.project(C)
        fm = control.flat_map(robot, *out(t, 0), 0)
        F = C[:3, 2] * fm.thrust[0]
        W = np.concatenate([C[:3, :3] @ fm.body_moment[0] + np.cross(C[:3, 3], F), F])
        qp, v = P.motion_to_pin(C, V[None], np.stack([q, qd]))
        tau = P.force_to_pin(C, V[None], W[None], fm.tau[:1])[0]
        a = pin.aba(P.model, P.data, qp, v[0], tau)
        _, Vj, qj = P.motion_from_pin(qp, np.stack([v[0], a]))
        return se3.hat(V) @ C, Vj[1], qd, qj[2]

    fm = control.flat_map(robot, *out(0.0, 0), 0)
    x = (fm.base_pose, fm.base_twist[0], fm.q[0], fm.q[1])
    err = np.zeros(3)
    steps = int(round(duration / dt))
    for i in range(steps):
        t = i * dt
        k1 = rate(t, *x)
        k2 = rate(t + dt / 2, *(a + dt / 2 * b for a, b in zip(x, k1)))
        k3 = rate(t + dt / 2, *(a + dt / 2 * b for a, b in zip(x, k2)))
        k4 = rate(t + dt, *(a + dt * b for a, b in zip(x, k3)))
        x = tuple(a + dt / 6 * (b1 + 2 * b2 + 2 * b3 + b4)
                  for a, b1, b2, b3, b4 in zip(x, k1, k2, k3, k4))
        C = se3.project(x[0])
        want = control.flat_map(robot, *out(t + dt, 0), 0)
        xG = ld.centroidal(robot, C, x[1][None], np.stack([x[2], x[3]]), 0).com[0]
        err = np.maximum(err, [np.abs(xG - out(t + dt, 0)[0][0]).max(),
                               np.abs(C[:3, :3] - want.rotation[0]).max(),
                               np.abs(x[2] - want.q[0]).max()])
    return err


def test_pinocchio_aba_flies_the_flat_inputs_to_the_flat_outputs(robot):
    """A second integrator: Pinocchio's forward dynamics under the flat
    inputs, classical RK4; the largest error over 0.4 s falls as dt⁴."""
    pytest.importorskip("pinocchio")
    P = _pinocchio_pair(robot)
    out = FigureEight(robot.n_joints)
    e1, e2 = (_pinocchio_open_loop_error(robot, P, out, dt, 0.4) for dt in (0.01, 0.005))
    ratio = e1 / e2
    assert np.all(ratio > 12.0) and np.all(ratio < 20.0), (e1, e2)
    assert np.all(e2 < 1e-5), e2
