"""Event location on the step's dense output (SPEC §10.2): the interpolant
against closed forms, the located times against the free-fall closed form at
every ``event_tol``, and what a located event costs in integrator steps.

A free fall is a polynomial of degree two in time, which RK4 integrates
exactly: the step's zero is the closed form's, so a located touch-down is
checked against ``√(2h/g)`` with ``event_tol`` itself as the tolerance. The
cubic Hermite interpolant's error bound ``h⁴/384 · max|f⁗|`` (the standard
remainder of two-point Hermite interpolation) is the tolerance of the
interpolant's checks.
"""

import numpy as np
import pytest

import liedyn as ld
from liedyn.simulation.locate import WATCH_EVERY, DenseStep, root
from liedyn.simulation.run import WATCH_BLOCK
from liedyn.spatial.se3 import exp
from tests.helpers import solid_sphere

G = 9.81
MASS = 2.0
RADIUS = 0.1


def ball_model():
    return solid_sphere(RADIUS, MASS)


@pytest.fixture(scope="module")
def ball():
    return ball_model()


def dropped(model, h0, duration, **kw):
    C = np.eye(4)
    C[2, 3] = h0 + RADIUS
    return ld.simulate(model, ld.State(C, np.zeros(6)), duration, dt=kw.pop("dt", 1e-3),
                       contacts=[ld.PointContact("ball", radius=RADIUS)], **kw)


class _Samples:
    """Two samples of a motion given in closed form, as a trajectory holds them."""

    def __init__(self, t, C, V, Vd, q, qd, qdd):
        self.time = np.asarray(t)
        self.base_pose = np.asarray(C)
        self.base_twist = np.asarray(V)[:, None]
        self.base_acceleration = np.asarray(Vd)
        self.q = np.stack([q, qd], axis=1)
        self.joint_acceleration = np.asarray(qdd)
        self.extra = np.zeros((2, 0))


def test_the_dense_output_is_exact_on_a_screw_motion_and_within_the_hermite_bound():
    # the base on a screw motion of constant twist W: C(t) = exp(t[W]) C(0) (world twist
    # W at every t, Ω(s) = s W is linear); the joint q = sin(ω t), whose Hermite error is
    # at most h⁴/384 ω⁴ and its rate's h⁴/384 ω⁵
    W = np.array([0.3, -1.1, 0.7, 0.5, 0.2, -0.4])
    C0 = exp(np.array([0.2, 0.1, -0.3, 1.0, 2.0, 0.5]))
    w, h, t0 = 7.0, 0.02, 0.3
    t = np.array([t0, t0 + h])
    C = [exp(x * W) @ C0 for x in t - t0]
    q = np.sin(w * t)[:, None]
    qd = (w * np.cos(w * t))[:, None]
    qdd = (-w * w * np.sin(w * t))[:, None]
    step = DenseStep(_Samples(t, C, [W, W], np.zeros((2, 6)), q, qd, qdd), 1, True)
    bound_q, bound_qd = h ** 4 / 384 * w ** 4, h ** 4 / 384 * w ** 5
    for s in np.linspace(0.0, h, 11):
        st = step.state(s)
        assert np.abs(st.base_pose - exp(s * W) @ C0).max() <= 1e-14
        assert np.abs(st.base_twist - W).max() <= 1e-14
        assert abs(st.q[0] - np.sin(w * (t0 + s))) <= bound_q + 1e-15
        assert abs(st.qd[0] - w * np.cos(w * (t0 + s))) <= bound_qd + 1e-14


def test_the_dense_output_converges_at_fourth_order_on_a_tumbling_body():
    # a torque-free body with unequal inertias tumbles (no closed form): its
    # interpolant against a run with a 64 times finer step, at two step lengths;
    # the error falls as h⁴ (by 16 when h halves), measured 2⁴ within 25 %
    b = ld.ModelBuilder()
    inertia = np.zeros((6, 6))
    inertia[:3, :3] = np.diag([0.1, 0.2, 0.25])
    inertia[3:, 3:] = np.eye(3)
    b.add_body("body", None, None, np.eye(4), inertia)
    model = b.build()
    s0 = ld.State(np.eye(4), np.array([3.0, 1.0, -2.0, 0.5, 0.0, 0.0]))
    errors = []
    for h in (0.04, 0.02):
        coarse = ld.simulate(model, s0, h, dt=h)
        fine = ld.simulate(model, s0, h, dt=h / 64)
        step = DenseStep(coarse, 1, True)
        err = 0.0
        for k in (16, 32, 48):
            st = step.state(fine.time[k])
            err = max(err, np.abs(st.base_pose[:3] - fine.base_pose[k][:3]).max(),
                      np.abs(st.base_twist - fine.base_twist[k, 0]).max())
        errors.append(err)
    assert 16 / 1.25 <= errors[0] / errors[1] <= 16 * 1.25, errors


def test_root_brackets_within_the_tolerance_on_the_far_side():
    f = np.cos                       # zero at π/2
    for xtol in (1e-3, 1e-9, 1e-14):
        b = root(f, 1.0, 2.0, f(1.0), f(2.0), xtol)
        assert 0.0 <= b - np.pi / 2 <= xtol + 4e-16 and f(b) <= 0.0


@pytest.mark.parametrize("tol", [1e-12, 1e-10, 1e-6, 1e-3])
def test_a_dropped_ball_touches_down_at_the_free_fall_time_within_event_tol(ball, tol):
    h0 = 0.37                          # the touch-down falls inside a step of 1 ms
    traj = dropped(ball, h0, 0.4, event_tol=tol, events="stop")
    (ev,) = traj.events
    err = ev.time - np.sqrt(2 * h0 / G)
    assert -1e-13 <= err <= tol, err   # on the far side of the zero, within event_tol
    assert -(np.sqrt(2 * G * h0) * tol + 1e-13) <= traj.gap[-1, 0] <= 0.0


def test_a_located_event_costs_a_few_steps_and_no_window_runs_past_it(ball):
    # the window ends within WATCH_BLOCK + WATCH_EVERY steps of the touch-down (no
    # callback here: the steps run compiled, in blocks of WATCH_BLOCK while watched,
    # and are watched WATCH_EVERY at a time), and the zero found on
    # the dense output is bracketed by two Runge–Kutta steps: the run's evaluations are
    # four per step, one per window's first sample, and five per step of the location
    h0 = 0.37
    traj = dropped(ball, h0, 0.4, event_tol=1e-10, events="stop")
    kept = int(np.count_nonzero(np.diff(traj.time) > 0.0))
    assert kept <= traj.steps < kept + WATCH_BLOCK + WATCH_EVERY
    windows = 3                        # 64, 128 and 256 steps: the touch-down at step 275
    restep = 5                         # evaluations of one step from a given state
    located = traj.evaluations - 4 * traj.steps - windows
    assert located % restep == 0 and 0 < located // restep <= 3, located


def test_a_run_with_a_controller_integrates_no_step_past_an_event(ball):
    # a callback at every stage: the steps return to Python one by one and the
    # watch ends the window within WATCH_EVERY steps of the touch-down
    traj = dropped(ball, 0.37, 0.4, event_tol=1e-10, events="stop",
                   controller=lambda t, s: None)
    kept = int(np.count_nonzero(np.diff(traj.time) > 0.0))
    assert kept <= traj.steps < kept + WATCH_EVERY
