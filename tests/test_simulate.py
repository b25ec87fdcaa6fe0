"""liedyn.simulate (SPEC §10) against independent references.

* conservation: a torque-free floating tree keeps its total spatial momentum
  (about the world origin) and its kinetic energy; both are computed from the
  closed-form mass matrix of SPEC §7, ``h = (M(Q) ν)[:6]`` and
  ``E = ½ νᵀ M(Q) ν``, which shares no code with the articulated-body
  recursion of SPEC §5 that drives the integrator. RKMK4 is not a
  momentum-preserving scheme: both drifts are truncation errors, falling as
  dt⁴ (measured), and the momentum drift is below 1e-12 at the step tested;
* the base pose stays in SE(3) to round-off over 10⁵ steps;
* convergence order 4 against a dt/16 reference, pose error measured on SE(3);
* Pinocchio's ABA integrated by the same scheme, and by a hand-written RK4;
* the adaptive step: accuracy against a fine reference, error ∝ rtol, fewer
  steps than the fixed step at equal error;
* controllers at the stages and held at a rate, against a hand-written
  zero-order-hold loop;
* every failure mode, with the trajectory kept;
* the trajectory fed to the batch functions reproduces the accelerations and
  inputs of the run.
"""

import re
import sys
import time

import numpy as np
import pytest

import liedyn
from liedyn import Inputs, ModelBuilder, SimulationError, State, Trajectory, se3, simulate
from models.aerial_manipulator import AerialManipulatorParams, aerial_manipulator
from models.trees import random_tree, tumbling_body
from tests.helpers import assert_close
from liedyn.interop.pinocchio import to_pinocchio
from liedyn.simulation import integrator as _integrator, run as _run


EPS = np.finfo(float).eps


# ---------------------------------------------------------------- helpers --

def _free_tree(seed, n_bodies=6):
    return random_tree(np.random.default_rng(seed), n_bodies, gravity=(0.0, 0.0, 0.0))


def _random_state(model, seed, speed=1.0):
    rng = np.random.default_rng(seed)
    n = model.n_joints
    return State(base_pose=se3.exp(rng.normal(size=6)),
                 base_twist=speed * rng.normal(size=6) if model.floating_base else None,
                 q=rng.normal(size=n), qd=speed * rng.normal(size=n))


def _momentum_energy(model, traj):
    """Total spatial momentum about the world origin ``(M(Q) ν)[:6]`` and
    kinetic energy ``½ νᵀ M ν`` at every sample (closed form, SPEC §7)."""
    h, E = [], []
    for C, V, q in zip(traj.base_pose, traj.base_twist, traj.q):
        M = liedyn.mass_matrix(model, C, q[0])
        nu = np.concatenate([V[0], q[1]])
        h.append((M @ nu)[:6])
        E.append(0.5 * nu @ M @ nu)
    return np.array(h), np.array(E)


def _slope(dts, errors):
    """Least-squares slope of log(error) against log(dt)."""
    return np.polyfit(np.log(dts), np.log(errors), 1)[0]


def _pose_error(C, C_ref):
    """``|log(C_ref⁻¹ C)|`` over samples: the error on SE(3) itself."""
    return max(np.linalg.norm(se3.log(se3.inv(Cr) @ Ci)) for Ci, Cr in zip(C, C_ref))


def _hover(model):
    """A controller at the stages: gravity compensation of the base about the
    world origin plus a small moment, joint PD to a pose and a time-varying
    torque, so the flight and the joints move smoothly."""
    weight = -model.body_mass.sum() * model.gravity
    q_ref = np.deg2rad([20.0, -10.0, 30.0, -20.0, 15.0, -25.0])[:model.n_joints]

    def controller(t, s):
        p = s.base_pose[:3, 3]
        W = np.concatenate([np.cross(p, weight) + [0.05, -0.03, 0.02], weight])
        tau = -0.5 * (s.q - q_ref) - 0.02 * s.qd + 0.01 * np.sin(3.0 * t)
        return Inputs(tau=tau, base_wrench=W)
    return controller


# ------------------------------------------- conservation on a free tree --

@pytest.mark.parametrize("which", ["random tree", "aerial manipulator"])
def test_torque_free_tree_conserves_momentum_and_energy_to_the_method_order(which):
    if which == "random tree":
        model = _free_tree(11)
    else:
        model = aerial_manipulator(AerialManipulatorParams(gravity=0.0))
    state = _random_state(model, 12, speed=2.0)
    dts = np.array([16e-3, 8e-3, 4e-3, 2e-3])
    drift_h, drift_E = [], []
    for dt in dts:
        traj = simulate(model, state, 1.0, dt=dt)
        h, E = _momentum_energy(model, traj)
        drift_h.append(np.max(np.abs(h - h[0])) / np.max(np.abs(h[0])))
        drift_E.append(np.max(np.abs(E - E[0])) / E[0])
    # Measured: energy and momentum drift 7e-7 … 2e-10 (random tree) and
    # 1e-7 … 2e-11 (aerial manipulator) over these steps, slopes 3.97–4.00,
    # far above round-off (~1e-15).
    assert abs(_slope(dts, drift_E) - 4.0) <= 0.3, f"energy drift {drift_E}"
    assert abs(_slope(dts, drift_h) - 4.0) <= 0.3, f"momentum drift {drift_h}"
    # Following the dt⁴ law: ~5e-14 at dt = 0.25 ms over 1 s (measured 7.7e-13
    # and 9e-14 at 0.5 ms on the two models)
    traj = simulate(model, state, 1.0, dt=2.5e-4)
    h, _ = _momentum_energy(model, traj)
    drift = np.max(np.abs(h - h[0])) / np.max(np.abs(h[0]))
    assert drift <= 1e-12, f"momentum drift {drift:.2e} at dt = 0.25 ms"


def test_base_pose_stays_in_SE3_over_1e5_steps():
    """Spun mostly about the intermediate axis, the body tumbles
    (|ω_x|, |ω_z| reach the size of ω_y). 10⁵ steps of 1 ms, every sample
    checked: no re-orthonormalization, the exponential keeps R in SO(3)."""
    model = tumbling_body()
    start = time.perf_counter()
    traj = simulate(model, State(base_twist=[0.01, 3.0, 0.02, 0.1, 0.0, 0.0]), 100.0, dt=1e-3)
    elapsed = time.perf_counter() - start
    assert traj.steps == 100_000 and len(traj) == 100_001
    R = traj.base_pose[:, :3, :3]
    orth = np.max(np.abs(np.einsum("tji,tjk->tik", R, R) - np.eye(3)))
    det = np.max(np.abs(np.linalg.det(R) - 1.0))
    last = np.max(np.abs(traj.base_pose[:, 3] - [0.0, 0.0, 0.0, 1.0]))
    print(f"\n1e5 steps in {elapsed:.2f} s: ‖RᵀR − I‖ = {orth:.1e}, |det − 1| = {det:.1e}")
    assert orth <= 1e-12 and det <= 1e-12 and last == 0.0
    assert np.min(np.max(np.abs(traj.base_twist[:, 0, :3]), axis=0)) > 1.0   # it tumbles


# ------------------------------------------------------------ convergence --

@pytest.mark.parametrize("which", ["aerial manipulator, controller at stages",
                                   "random tree, free"])
def test_convergence_order_four_against_a_sixteenth_step_reference(which):
    if which.startswith("aerial"):
        model, state, kw = aerial_manipulator(), State(qd=np.full(6, 0.5),
                                                        base_twist=[0.2, -0.1, 0.3, 0.1, 0.0, 0.2]), {}
        kw = {"controller": _hover(model)}
        dt0 = 16e-3
    else:
        model, state, kw = _free_tree(21), _random_state(_free_tree(21), 22), {}
        dt0 = 8e-3
    ref = simulate(model, state, 1.0, dt=dt0 / 16, **kw)
    dts, e_pose, e_q = [], [], []
    for k in range(3):
        dt = dt0 / 2 ** k
        traj = simulate(model, state, 1.0, dt=dt, **kw)
        r = np.rint(traj.time / (dt0 / 16)).astype(int)       # the same instants in ref
        assert_close(ref.time[r], traj.time, rtol=0, atol=1e-12, what="sample times")
        dts.append(dt)
        e_pose.append(_pose_error(traj.base_pose, ref.base_pose[r]))
        e_q.append(np.max(np.abs(traj.q[:, 0] - ref.q[r, 0])))
    # the reference's own error is (1/16)⁴ ≈ 2e-5 of the coarsest's: invisible
    assert abs(_slope(dts, e_pose) - 4.0) <= 0.3, f"pose errors {e_pose}"
    assert abs(_slope(dts, e_q) - 4.0) <= 0.3, f"joint errors {e_q}"


# --------------------------------------------------------------- Pinocchio --

class _PinocchioRun(_run._Run):
    """The same integrator with Pinocchio's ABA as the acceleration function
    (fixed base: the stage pose is the model's fixed pose)."""

    def __init__(self, *args, pinocchio_model, **kw):
        self.pm = pinocchio_model
        super().__init__(*args, **kw)
        for out in (self.ws.base_twist, self.ws.q):   # Pinocchio's results go where the kernel's would
            out.setflags(write=True)

    def _evaluate(self, i, arrays):
        bad = _integrator._LOAD.call(self.sim, *arrays, self.base_ref)
        assert bad == 0
        b = self.b
        _, qdd = self.pm.aba(None, None, b["qq"], tau=b["tau"])
        self.ws.base_twist[1] = 0.0
        self.ws.q[2] = qdd
        _integrator._RATES.call(self.ws._data, self.sim, i, self.n)
        return 0, 0


def _gravity_arm():
    """The aerial manipulator's two arms on a fixed base, a PD controller and
    a time-varying torque at the stages; they swing under gravity."""
    model = aerial_manipulator(floating_base=False)
    q_ref = np.deg2rad([40.0, 20.0, -30.0, -40.0, 30.0, 20.0])

    def controller(t, s):
        return Inputs(tau=-0.3 * (s.q - q_ref) - 0.01 * s.qd + 0.05 * np.cos(2.0 * t))
    return model, controller, State(q=np.deg2rad([10.0, -5.0, 15.0, -10.0, 7.0, -12.0]))


def test_fixed_base_arm_against_pinocchio_aba_integrated_by_the_same_scheme():
    model, controller, state = _gravity_arm()
    pm = to_pinocchio(model)
    ours = simulate(model, state, 1.0, dt=2e-3, controller=controller)
    theirs = _PinocchioRun(model, state, 1.0, dt=2e-3, controller=controller,
                           pinocchio_model=pm).run()
    # The two accelerations agree to ~1e-14 (SPEC §5 vs Pinocchio); over 500
    # steps the trajectories stay within a few 1e-13 (measured 2e-14).
    assert_close(theirs.q, ours.q, rtol=0, atol=1e-12, what="q, q̇ with Pinocchio's ABA")
    assert_close(theirs.joint_acceleration, ours.joint_acceleration, rtol=0, atol=1e-11,
                 what="q̈ at the samples")
    assert np.ptp(ours.q[:, 0], axis=0).min() > 0.05                 # the arms move


def test_fixed_base_is_classical_rk4_with_pinocchio():
    """A hand-written classical RK4 on (q, q̇) with Pinocchio's ABA: for a
    fixed base the Munthe-Kaas method is exactly RK4."""
    model, controller, state = _gravity_arm()
    pm = to_pinocchio(model)
    h, steps = 2e-3, 250

    def f(t, y):
        q, qd = y[:6], y[6:]
        tau = controller(t, State(q=q, qd=qd)).tau
        return np.concatenate([qd, pm.aba(None, None, np.stack([q, qd]), tau=tau[None])[1]])
    y = np.concatenate([state.q, np.zeros(6)])
    ys = [y]
    for k in range(steps):
        t = k * h
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    ys = np.array(ys)
    ours = simulate(model, state, steps * h, dt=h, controller=controller)
    assert_close(ours.q[:, 0], ys[:, :6], rtol=0, atol=1e-12, what="q against hand-written RK4")
    assert_close(ours.q[:, 1], ys[:, 6:], rtol=0, atol=1e-11, what="q̇ against hand-written RK4")


# ---------------------------------------------------------------- adaptive --

def _stiff_pd():
    """Stiff-ish: the arms driven by a PD of natural frequency 60 rad/s and
    damping ratio 0.6 from a distant start — a fast transient (~0.1 s) next to
    the slow, gravity-loaded rest of the second."""
    model = aerial_manipulator(floating_base=False)
    q0 = np.deg2rad([10.0, -5.0, 15.0, -10.0, 7.0, -12.0])
    q_ref = np.deg2rad([40.0, 20.0, -30.0, -40.0, 30.0, 20.0])
    inertia = np.diag(liedyn.mass_matrix(model, None, q0))
    kp, kd = inertia * 60.0 ** 2, 2 * 0.6 * 60.0 * inertia

    def controller(t, s):
        return Inputs(tau=-kp * (s.q - q_ref) - kd * s.qd)
    return model, controller, State(q=q0)


def _max_error(traj, ref):
    """Max joint error over the samples, the reference interpolated by its
    cubic Hermite spline (interpolation error ~h⁴ q⁽⁴⁾/384 ≈ 1e-11 here)."""
    from scipy.interpolate import CubicHermiteSpline
    spline = CubicHermiteSpline(ref.time, ref.q[:, 0], ref.q[:, 1])
    return np.max(np.abs(traj.q[:, 0] - spline(traj.time)))


def test_adaptive_reaches_the_accuracy_asked_with_fewer_steps_than_the_fixed_step():
    model, controller, state = _stiff_pd()
    ref = simulate(model, state, 1.0, dt=1.25e-4, controller=controller)   # error ~1e-11
    rtols = np.array([1e-5, 1e-6, 1e-7, 1e-8])
    errors, costs = [], []
    for rtol in rtols:
        traj = simulate(model, state, 1.0, dt=1e-3, controller=controller, adaptive=True,
                        rtol=rtol, atol=1e-2 * rtol)
        errors.append(_max_error(traj, ref))
        costs.append(traj.steps + traj.rejected)
    # error ∝ rtol (measured slope 1.0: 1.4e-6 … 1.3e-9, the global error
    # about 0.14 × rtol since q ~ 0.1–1 rad)
    assert abs(_slope(rtols, errors) - 1.0) <= 0.2, f"errors {errors} for rtol {rtols}"
    assert np.all(np.array(errors) <= 1.0 * rtols), f"errors {errors} for rtol {rtols}"
    # the fixed step needed for the same error, from its measured e = c·dt⁴
    fixed_dts = np.array([2e-3, 1e-3, 5e-4])
    fixed_errors = [_max_error(simulate(model, state, 1.0, dt=dt, controller=controller), ref)
                    for dt in fixed_dts]
    assert abs(_slope(fixed_dts, fixed_errors) - 4.0) <= 0.3
    c = np.exp(np.mean(np.log(fixed_errors) - 4.0 * np.log(fixed_dts)))
    fixed_steps = 1.0 / (np.array(errors) / c) ** 0.25
    ratio = fixed_steps / np.array(costs)
    print(f"\nfixed/adaptive steps at equal error: {np.round(ratio, 2)} "
          f"(adaptive {costs} incl. rejected, errors {np.array(errors)})")
    assert np.all(ratio > 1.5), f"adaptive steps {costs}, fixed steps {fixed_steps}"


def test_adaptive_rejects_steps_and_counts_them():
    """A first trial step far too long for the transient is rejected and
    retried shorter; every sample is an accepted step."""
    model, controller, state = _stiff_pd()
    traj = simulate(model, state, 0.2, dt=0.1, controller=controller, adaptive=True, rtol=1e-8)
    assert traj.rejected >= 1
    assert traj.steps == len(traj) - 1
    assert traj.evaluations == 1 + 4 * (traj.steps + traj.rejected)
    assert np.all(np.diff(traj.time) > 0.0) and traj.time[-1] == 0.2


def test_adaptive_respects_max_step_and_lands_on_the_end():
    model, controller, state = _stiff_pd()
    traj = simulate(model, state, 0.3, dt=1e-3, controller=controller, adaptive=True,
                    rtol=1e-6, max_step=0.01)
    assert np.max(np.diff(traj.time)) <= 0.01 * (1 + 1e-12) and traj.time[-1] == 0.3


# ----------------------------------------------------- controllers, ZOH --

def _pd_arm():
    model = aerial_manipulator(floating_base=False)
    q_ref = np.deg2rad([30.0, 10.0, -20.0, -30.0, 20.0, 10.0])

    def pd(t, s):
        return Inputs(tau=-0.2 * (s.q - q_ref) - 0.005 * s.qd)
    return model, pd, State(q=np.zeros(6))


def test_zero_order_hold_differs_from_stage_evaluation_as_one_over_the_rate():
    model, pd, state = _pd_arm()
    stages = simulate(model, state, 1.0, dt=5e-4, controller=pd)
    rates = np.array([50.0, 100.0, 200.0, 400.0])
    diffs = []
    for rate in rates:
        held = simulate(model, state, 1.0, dt=5e-4, controller=pd, control_rate=rate)
        assert_close(held.time, stages.time, rtol=0, atol=1e-12, what="grid")
        diffs.append(np.max(np.abs(held.q[:, 0] - stages.q[:, 0])))
    # first order in the hold period (measured slope −1.0: 3e-3 … 4e-4)
    assert abs(_slope(1.0 / rates, diffs) - 1.0) <= 0.15, f"differences {diffs}"


def test_zero_order_hold_matches_a_hand_written_loop():
    """The controller sampled at 100 Hz and held: the same as one run per
    period with the sample held, each continuing from the last state."""
    model = aerial_manipulator()
    hover = _hover(model)
    state0 = State(base_pose=np.eye(4), base_twist=[0.1, 0.0, -0.1, 0.0, 0.2, 0.0],
                   qd=np.full(6, 0.3), q=np.zeros(6))
    calls = []

    def sampled(t, s):
        calls.append(t)
        return hover(t, s)
    held = simulate(model, state0, 0.2, dt=2.5e-3, controller=sampled, control_rate=100.0)
    assert_close(np.array(calls), np.arange(21) * 0.01, rtol=0, atol=1e-15,
                 what="sample instants (one per period, and the end)")
    state, t, pieces = state0, 0.0, []
    for _ in range(20):
        u = hover(t, state)
        piece = simulate(model, state, 0.01, dt=2.5e-3, controller=lambda t, s: u, t0=t)
        pieces.append(piece)
        state, t = piece.state(-1), piece.time[-1]
    ends = np.array([p.base_pose[-1] for p in pieces])
    # the hand loop re-expresses V₀ about the world origin at each restart:
    # round-off only (measured 2e-16)
    assert_close(held.base_pose[4::4], ends, rtol=0, atol=1e-13, what="poses at the samples")
    assert_close(held.q[4::4], np.array([p.q[-1] for p in pieces]), rtol=0, atol=1e-13,
                 what="joints at the samples")
    assert held.controls[3] is held.controls[0] and held.controls[4] is not held.controls[3]


def test_control_rate_rounds_the_step_to_a_divisor_of_the_period():
    model, pd, state = _pd_arm()
    traj = simulate(model, state, 0.05, dt=3e-3, controller=pd, control_rate=100.0)
    assert_close(np.diff(traj.time), np.full(20, 2.5e-3), rtol=0, atol=1e-15, what="steps")


def test_last_step_is_shortened_to_end_on_the_duration():
    model, pd, state = _pd_arm()
    traj = simulate(model, state, 0.0105, dt=1e-3, controller=pd)
    assert traj.time[-1] == 0.0105 and len(traj) == 12
    assert abs(traj.time[-1] - traj.time[-2] - 5e-4) < 1e-15


def test_compiled_steps_equal_stage_by_stage_steps():
    """Without callbacks whole steps run in one compiled call; with a
    controller at the stages the same arithmetic is driven from Python."""
    model = _free_tree(31)
    state = _random_state(model, 32)
    fast = simulate(model, state, 0.3, dt=1e-3)
    slow = simulate(model, state, 0.3, dt=1e-3, controller=lambda t, s: None)
    for f in ("base_pose", "base_twist", "q", "base_acceleration", "joint_acceleration"):
        assert np.array_equal(getattr(fast, f), getattr(slow, f)), f
    assert fast.evaluations == slow.evaluations == 1 + 4 * 300


def test_plant_with_extra_states_integrates_an_actuator_lag():
    """Extra state z = τ with ż = (τ_cmd − z)/T: after a step command the
    torque is τ_cmd (1 − e^(−t/T)). RK4 multiplies the decaying mode by R(z),
    |R(z) − e^z| ≈ |z|⁵/120 = 2.6e-9 at z = −h/T = −0.05, which accumulates to
    at most max_k k e^((k−1)z) ≈ 7.7 times that: 2e-8 of τ_cmd."""
    model, _, state = _pd_arm()
    lag, cmd = 0.02, np.linspace(0.01, 0.06, 6)

    def plant(t, s, u):
        return Inputs(tau=s.extra, extra_rate=(u - s.extra) / lag)
    traj = simulate(model, State(extra=np.zeros(6)), 0.1, dt=1e-3,
                    controller=lambda t, s: cmd, plant=plant)
    exact = cmd * (1.0 - np.exp(-traj.time[:, None] / lag))
    assert_close(traj.extra, exact, rtol=0, atol=3e-8 * cmd.max(), what="lagged torque")
    assert_close(traj.tau[:, 0], traj.extra, rtol=0, atol=0, what="recorded inputs")


# ---------------------------------------------------------- failure modes --

def _nan_after(t_bad):
    def controller(t, s):
        return Inputs(tau=np.full(6, np.nan) if t >= t_bad else np.zeros(6))
    return controller


@pytest.mark.parametrize("kw", [{}, {"control_rate": 100.0}])
def test_non_finite_input_stops_at_its_time_with_the_trajectory_so_far(kw):
    model, _, state = _pd_arm()
    with pytest.raises(SimulationError, match=r"^t = 0\.35: tau: not finite") as info:
        simulate(model, state, 1.0, dt=1e-2, controller=_nan_after(0.35), **kw)
    err = info.value
    assert isinstance(err, ValueError)
    assert abs(err.time - 0.35) < 1e-12 and err.quantity == "tau"
    traj = err.trajectory
    assert isinstance(traj, Trajectory) and len(traj) == 35
    assert_close(traj.time, np.arange(35) * 0.01, rtol=0, atol=1e-12, what="samples kept")
    assert np.all(np.isfinite(traj.q)) and np.all(np.isfinite(traj.tau))


def test_non_finite_input_in_an_adaptive_run_names_the_first_stage_that_saw_it():
    model, _, state = _pd_arm()
    with pytest.raises(SimulationError, match="tau: not finite") as info:
        simulate(model, state, 1.0, dt=1e-2, controller=_nan_after(0.35), adaptive=True)
    err = info.value
    assert err.time >= 0.35 and err.trajectory.time[-1] < 0.35 <= err.time


@pytest.mark.parametrize("field,value", [("base_wrench", [0, 0, 0, 0, 0, np.inf]),
                                         ("applied", "nan"), ("extra_rate", [np.nan])])
def test_non_finite_wrenches_and_rates_are_named(field, value):
    model = aerial_manipulator()
    if value == "nan":
        value = np.zeros((model.n_bodies, 6))
        value[3, 4] = np.nan
    kw = {field: value, **({} if field == "extra_rate" else {"extra_rate": [0.0]})}
    with pytest.raises(SimulationError, match=rf"^t = 0: {field}: not finite") as info:
        simulate(model, State(extra=[0.0]), 0.1, dt=1e-2, controller=lambda t, s: Inputs(**kw))
    assert len(info.value.trajectory) == 0


@pytest.mark.parametrize("dt", [0.0, -1e-3])
def test_a_step_that_is_not_positive_is_refused(dt):
    model, _, state = _pd_arm()
    with pytest.raises(SimulationError, match=r"^t = 0: dt: the step must be positive") as info:
        simulate(model, state, 1.0, dt=dt)
    assert info.value.quantity == "dt" and len(info.value.trajectory) == 0


def test_diverging_extra_state_stops_at_the_bound():
    """ż = 50 z from z = 1 passes 1e10 at t = ln(1e10)/50 ≈ 0.4605."""
    model, _, _ = _pd_arm()
    with pytest.raises(SimulationError, match=r"extra\[0\]: .* exceeds the divergence bound") \
            as info:
        simulate(model, State(extra=[1.0]), 1.0, dt=1e-3,
                 plant=lambda t, s, u: Inputs(extra_rate=50.0 * s.extra))
    err = info.value
    assert abs(err.time - np.log(1e10) / 50.0) < 2e-3
    assert np.max(np.abs(err.trajectory.extra)) <= 1e10


def test_numerically_unstable_step_is_reported_as_divergence_of_a_named_joint():
    """A PD far too stiff for the step (h·ω ≈ 100): the explicit method blows up."""
    model, _, state = _pd_arm()
    with pytest.raises(SimulationError, match=r"(q|qd)\[\d\] \(joint 'arm\d_link\d'\): .*diverges"):
        simulate(model, state, 1.0, dt=1e-2,
                 controller=lambda t, s: Inputs(tau=-1e4 * s.q - 10.0 * s.qd + 0.1))


def test_overflow_to_a_non_finite_state_is_named():
    """Finite rates whose step overflows: 1.7e308 + 1e308 = inf."""
    model, _, _ = _pd_arm()
    with pytest.raises(SimulationError, match=r"^t = 1: extra\[0\]: not finite"):
        simulate(model, State(extra=[1.7e308]), 1.0, dt=1.0, divergence=np.inf,
                 plant=lambda t, s, u: Inputs(extra_rate=[1e308]))


def test_adaptive_step_below_the_minimum_stops_at_the_singularity():
    """τ = 1/(0.3 − t)² blows up at t = 0.3: the step shrinks to min_step there."""
    model, _, state = _pd_arm()
    with pytest.raises(SimulationError, match=r"step: the step fell below min_step") as info:
        simulate(model, state, 1.0, dt=1e-2, adaptive=True, min_step=1e-5,
                 controller=lambda t, s: Inputs(tau=np.full(6, 1.0 / (0.3 - t) ** 2)))
    assert 0.25 < info.value.time < 0.3 and info.value.trajectory.time[-1] < 0.3


@pytest.mark.parametrize("returns,match", [
    (lambda t, s: np.zeros(6), r"inputs: the controller returned ndarray"),
    (lambda t, s: Inputs(tau=np.zeros(5)), r"tau: expected shape \(6,\)"),
    (lambda t, s: Inputs(base_wrench=np.zeros(6)), r"base_wrench: the base is fixed"),
    (lambda t, s: Inputs(applied=np.zeros((3, 6))), r"applied: expected shape \(7, 6\)"),
])
def test_malformed_inputs_are_named(returns, match):
    model, _, state = _pd_arm()
    with pytest.raises(SimulationError, match=rf"^t = 0: {match}"):
        simulate(model, state, 0.1, dt=1e-2, controller=returns)


def _aerial_inputs(model):
    """Inputs of the right shapes for the aerial manipulator with one extra state."""
    return {"tau": np.zeros(model.n_joints), "base_wrench": np.zeros(6),
            "applied": np.zeros((model.n_bodies, 6)), "extra_rate": [0.0]}


@pytest.mark.parametrize("source", ["controller", "plant"])
@pytest.mark.parametrize("field", ["tau", "base_wrench", "applied", "extra_rate"])
def test_inputs_of_the_wrong_shape_or_type_are_named_with_the_time(field, source):
    """An Inputs field with a leading axis too many, a column too few, or
    strings: a SimulationError at the stage time naming the field, the
    expected and the given shape (or the type), and who made it."""
    model = aerial_manipulator()
    good = _aerial_inputs(model)
    expected = np.shape(good[field])
    cases = [(np.zeros((1,) + expected), (1,) + expected),
             (np.zeros(expected[:-1] + (expected[-1] - 1,)), expected[:-1] + (expected[-1] - 1,)),
             (["a"] * expected[0], None)]
    for value, given in cases:
        def inputs(t, *_, value=value):
            return Inputs(**{**good, field: value}) if t >= 0.05 else Inputs(**good)
        kw = {source: inputs}
        if source == "plant":
            kw["controller"] = lambda t, s: None
        with pytest.raises(SimulationError) as info:
            simulate(model, State(extra=[0.0]), 0.1, dt=1e-2, **kw)
        err = info.value
        what = (rf"expected shape {re.escape(str(expected))} from the {source}, got "
                rf"{re.escape(str(given))}" if given else
                rf"expected a real numeric array, got strings \(an Inputs built by the {source}\)")
        assert re.match(rf"^t = 0\.05: {field}: {what}$", str(err)), str(err)
        assert err.quantity == field and abs(err.time - 0.05) < 1e-12
        assert abs(err.trajectory.time[-1] - 0.04) < 1e-12      # (0.05: the step's last stage)


def test_extra_states_need_their_rates():
    model, _, _ = _pd_arm()
    with pytest.raises(SimulationError, match=r"extra_rate: the state has 2 extra entries"):
        simulate(model, State(extra=[0.0, 1.0]), 0.1, dt=1e-2)


@pytest.mark.parametrize("exc", [KeyboardInterrupt, ZeroDivisionError])
def test_interrupt_or_callback_error_is_reraised_with_the_trajectory(exc):
    """Ctrl-C (or any exception from a callback) is raised again, not
    swallowed, and carries the samples up to the last completed step."""
    model, pd, state = _pd_arm()

    def controller(t, s):
        if t > 0.2:
            raise exc("stop")
        return pd(t, s)
    with pytest.raises(exc) as info:
        simulate(model, state, 1.0, dt=1e-2, controller=controller)
    traj = info.value.trajectory
    assert isinstance(traj, Trajectory) and abs(traj.time[-1] - 0.2) < 1e-12
    assert any("trajectory" in note for note in info.value.__notes__)


def test_a_non_positive_pivot_is_reported_with_the_time():
    """A massless leaf on a revolute axis: forward dynamics is undefined."""
    b = ModelBuilder(floating_base=False)
    b.add_body("base", None, None)
    b.add_body("tip", "base", liedyn.Revolute((0, 0, 1)))
    model = b.build()
    with pytest.raises(SimulationError, match=r"^t = 0: dynamics: joint of body 'tip'"):
        simulate(model, State(), 0.1, dt=1e-2)


# ------------------------------------------------------------ arguments --

@pytest.mark.parametrize("kw,exc,match", [
    ({"model": "arm"}, TypeError, "^model:"),
    ({"state0": np.zeros(6)}, TypeError, "^state0: expected a liedyn.State"),
    ({"state0": State(q=np.zeros(5))}, ValueError, r"^state0.q: expected shape \(6,\)"),
    ({"state0": State(base_twist=np.ones(6))}, ValueError, "^state0.base_twist: a fixed base"),
    ({"duration": -1.0}, ValueError, "^duration:"),
    ({"dt": np.nan}, ValueError, "^dt:"),
    ({"dt": "1e-3"}, TypeError, "^dt:"),
    ({"controller": 3}, TypeError, "^controller:"),
    ({"plant": "p"}, TypeError, "^plant:"),
    ({"control_rate": 100.0}, ValueError, "^control_rate: a zero-order hold needs a controller"),
    ({"control_rate": -5.0, "controller": lambda t, s: None}, ValueError, "^control_rate:"),
    ({"rtol": 0.0}, ValueError, "^rtol:"),
    ({"atol": -1.0}, ValueError, "^atol:"),
    ({"min_step": 0.0}, ValueError, "^min_step:"),
    ({"reference": "body"}, ValueError, "^reference:"),
    ({"adaptive": "yes"}, TypeError, "^adaptive:"),
    ({"progress": 1}, TypeError, "^progress:"),
])
def test_bad_arguments_name_themselves(kw, exc, match):
    model, _, state = _pd_arm()
    args = {"model": model, "state0": state, "duration": 0.1, "dt": 1e-2, **kw}
    with pytest.raises(exc, match=match):
        simulate(args.pop("model"), args.pop("state0"), args.pop("duration"), **args)


def test_state_and_inputs_validate_and_freeze():
    with pytest.raises(ValueError, match="^base_pose: not in SE"):
        State(base_pose=np.diag([2.0, 1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match=r"^qd: expected the shape of q"):
        State(q=np.zeros(3), qd=np.zeros(2))
    with pytest.raises(ValueError, match="^q: contains NaN"):
        State(q=[np.nan])
    with pytest.raises(TypeError, match="^tau:"):
        Inputs(tau=["a"])
    assert Inputs(applied=np.zeros(6)).applied.shape == (6,)   # reported later, with the time
    s = State(q=[1.0, 2.0])
    with pytest.raises(AttributeError):
        s.q = np.zeros(2)
    with pytest.raises(ValueError):
        s.q[0] = 3.0
    assert np.isnan(Inputs(tau=[np.nan]).tau[0])      # reported later, with the time


# ------------------------------------------- the trajectory and the batch --

@pytest.mark.parametrize("reference", ["world", "base"])
@pytest.mark.parametrize("adaptive", [False, True])
def test_trajectory_feeds_the_batch_functions_and_reproduces_the_run(reference, adaptive):
    """Forward dynamics of every sample returns the accelerations the
    integrator used there, inverse dynamics of the recorded motion returns
    the recorded inputs; applied wrenches and a base far from the origin
    included."""
    model = aerial_manipulator()
    hover = _hover(model)
    rng = np.random.default_rng(41)
    push = rng.normal(size=(model.n_bodies, 6)) * 0.05

    def plant(t, s, u):
        W = u.base_wrench.copy()
        if reference == "base":                # the same physical wrench, about the base origin
            W[:3] -= np.cross(s.base_pose[:3, 3], W[3:])
        return Inputs(tau=u.tau, base_wrench=W, applied=push * np.cos(5.0 * t))
    C0 = se3.exp(np.array([0.2, -0.1, 0.3, 40.0, -20.0, 5.0]))
    traj = simulate(model, State(base_pose=C0, base_twist=[0.1, 0.2, -0.1, 0.3, 0.0, 0.1],
                                 qd=np.full(6, 0.2)),
                    0.3, dt=1e-2, controller=hover, plant=plant, adaptive=adaptive,
                    rtol=1e-8, reference=reference)
    assert traj.applied is not None and traj.applied.shape == (len(traj), 1, model.n_bodies, 6)
    fd = liedyn.forward_dynamics_batch(model, traj.base_pose, traj.base_twist, traj.q, 0,
                                       tau=traj.tau, base_wrench=traj.base_wrench,
                                       applied=traj.applied, reference=reference)
    # about the world origin V̇₀ = (α, a − α × p₀) reaches 3e3 for |p₀| ≈ 45 m and
    # rounds at eps relative to that; the adaptive run's samples carry the
    # accelerations of its last stage, taken about the step's start: same bound
    scale = 1.0 + np.max(np.abs(traj.base_acceleration))
    assert_close(fd.base_twist[:, 1], traj.base_acceleration, rtol=0, atol=1e-12 * scale,
                 what="V̇₀ recomputed")
    assert_close(fd.q[:, 2], traj.joint_acceleration, rtol=0, atol=1e-12 * scale,
                 what="q̈ recomputed")
    inv = liedyn.inverse_dynamics_batch(model, traj.base_pose, *traj.motion_jets(), 0,
                                        applied=traj.applied, reference=reference)
    scale = 1.0 + np.max(np.abs(traj.base_wrench))
    assert_close(inv.base_wrench, traj.base_wrench, rtol=0, atol=1e-11 * scale,
                 what="base wrench recomputed")
    assert_close(inv.tau, traj.tau, rtol=0, atol=1e-11 * scale, what="τ recomputed")


def test_fixed_base_trajectory_feeds_the_batch_functions():
    model, pd, state = _pd_arm()
    traj = simulate(model, state, 0.2, dt=1e-2, controller=pd)
    assert traj.base_wrench is None and traj.applied is None
    fd = liedyn.forward_dynamics_batch(model, traj.base_pose, traj.base_twist, traj.q, 0,
                                       tau=traj.tau, base_wrench=traj.base_wrench)
    assert_close(fd.q[:, 2], traj.joint_acceleration, rtol=1e-12, atol=1e-12, what="q̈")


def test_world_and_base_references_give_the_same_motion():
    """The reference point only changes how twists and wrenches are written:
    a base 100 m from the origin moves the same either way."""
    model = aerial_manipulator()
    C0 = se3.exp(np.array([0.3, -0.2, 0.5, 100.0, -50.0, 20.0]))
    V = np.array([0.2, -0.1, 0.3, 0.5, 0.1, -0.2])
    weight = -model.body_mass.sum() * model.gravity

    def world(t, s):
        W = np.concatenate([np.cross(s.base_pose[:3, 3], weight) + [0.1, 0.0, 0.0], weight])
        return Inputs(tau=-0.2 * s.q, base_wrench=W)

    def base(t, s):
        return Inputs(tau=-0.2 * s.q, base_wrench=np.concatenate([[0.1, 0.0, 0.0], weight]))
    Vb = V.copy()
    Vb[3:] += np.cross(V[:3], C0[:3, 3])
    tw = simulate(model, State(base_pose=C0, base_twist=V), 0.5, dt=5e-3, controller=world)
    tb = simulate(model, State(base_pose=C0, base_twist=Vb), 0.5, dt=5e-3, controller=base,
                  reference="base")
    # the world-origin interface rounds at eps·|p₀|·|ω| ≈ 1e-14 per conversion
    assert_close(tb.base_pose, tw.base_pose, rtol=0, atol=1e-12, what="poses")
    assert_close(tb.q, tw.q, rtol=0, atol=1e-12, what="joints")


def test_trajectory_is_read_only_and_restarts_a_run():
    model, pd, state = _pd_arm()
    traj = simulate(model, state, 0.1, dt=1e-2, controller=pd)
    with pytest.raises(ValueError):
        traj.q[0, 0, 0] = 1.0
    with pytest.raises(AttributeError):
        traj.time = None
    s = traj.state(-1)
    assert_close(s.q, traj.q[-1, 0], rtol=0, atol=0, what="state(-1)")
    with pytest.raises(IndexError):
        traj.state(11)
    rest = simulate(model, s, 0.1, dt=1e-2, controller=pd, t0=traj.time[-1])
    whole = simulate(model, state, 0.2, dt=1e-2, controller=pd)
    assert_close(rest.q[-1], whole.q[-1], rtol=0, atol=1e-14, what="continued run")
    assert len(traj.controls) == len(traj) and isinstance(traj.controls[0], Inputs)


def test_zero_duration_returns_the_initial_sample():
    model, pd, state = _pd_arm()
    traj = simulate(model, state, 0.0, dt=1e-2, controller=pd)
    assert len(traj) == 1 and traj.steps == 0 and traj.time[0] == 0.0


@pytest.mark.parametrize("tqdm", [True, False])
def test_progress_line_on_stderr(capsys, monkeypatch, tqdm):
    if not tqdm:
        monkeypatch.setitem(sys.modules, "tqdm", None)       # as if not installed
    model, pd, state = _pd_arm()
    quiet = simulate(model, state, 0.2, dt=1e-2, controller=pd)
    loud = simulate(model, state, 0.2, dt=1e-2, controller=pd, progress=True)
    err = capsys.readouterr().err
    assert "simulate" in err and "0.2" in err
    assert np.array_equal(quiet.q, loud.q)
