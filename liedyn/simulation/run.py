"""One simulation: the arguments checked, the buffers, the step loop
(fixed, fixed with held inputs in compiled blocks, adaptive) and the
progress line (SPEC §10); :func:`liedyn.simulate` (:mod:`.driver`) runs it."""

import math
import os
import sys
import time

import numpy as np

from .._checks import OK, about_base, as_array, check_scalar, counted, status_message
from ..multibody.model import check_model
from ..spatial.se3 import _shift_twist
from ..multibody.workspace import Workspace
from .constraints import Held, trajectory_columns
from .diagnosis import diagnose
from .integrator import (_A, _AFTER_STEP, _C, _COMMIT, _E, _EMPTY1, _EMPTY2, _ERROR, _EVALUATE,
                         _EVALUATE_HELD, _FIXED_STEPS, _FIXED_STEPS_HELD, _POINT, _REC,
                         _REC_FIELDS, _RECORD, _RECORD_HELD, _REUSE, _SIM, _SIM_FIELDS, FAC_MAX,
                         FAC_MIN, SAFETY)
from .limits import Monitor
from .state import SimulationError, State, Trajectory, _StageState, callback, inputs_mismatch

__all__ = []


# ------------------------------------------------------------- progress --

class _Progress:
    """A progress bar on stderr: tqdm when installed, else one line rewritten
    at most twice a second."""

    def __init__(self, t0, t1):
        self.t0, self.t1, self.shown = t0, t1, t0
        self.start = self.last = time.monotonic()
        try:
            from tqdm import tqdm
        except ImportError:
            self.bar = None
        else:
            self.bar = tqdm(total=t1 - t0, unit="s", desc="simulate", file=sys.stderr,
                            bar_format="{l_bar}{bar}| t = {n:.4g}/{total:.4g} s "
                                       "[{elapsed}<{remaining}]")

    def update(self, t, steps):
        now = time.monotonic()
        if now - self.last < 0.5 and t < self.t1:
            return
        self.last = now
        if self.bar is not None:
            self.bar.update(t - self.shown)
            self.shown = t
            return
        span = self.t1 - self.t0
        done = 1.0 if span <= 0.0 else (t - self.t0) / span
        rate = steps / max(now - self.start, 1e-9)
        print(f"\rsimulate: t = {t:.6g} / {self.t1:.6g} s ({100 * done:5.1f} %), "
              f"{counted(steps, 'step')}, {rate:.0f} steps/s", end="", file=sys.stderr, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()
        else:
            print(file=sys.stderr, flush=True)


# ------------------------------------------------------------ the run --

def _guarded(steps, t0, t1, progress, trajectory):
    """``steps(bar)`` with a progress bar when asked. Any exception but a
    :class:`SimulationError` (which carries its own) leaves with
    ``trajectory()``, the samples up to the last completed step, attached as
    ``.trajectory`` and a note saying so."""
    bar = _Progress(t0, t1) if progress else None
    try:
        return steps(bar)
    except SimulationError:
        raise
    except BaseException as err:        # KeyboardInterrupt, or raised by a callback
        traj = trajectory()
        t = traj.time[-1] if len(traj) else t0
        try:
            err.trajectory = traj
        except AttributeError:          # an exception type without attributes
            pass
        err.add_note(f"liedyn.simulate: stopped after t = {t:.9g}; the trajectory up to "
                     f"that sample is in the exception's .trajectory")
        raise
    finally:
        if bar is not None:
            bar.close()


def _positive(x, name, allow_none=False):
    if x is None and allow_none:
        return None
    v = check_scalar(x, name)
    if not v > 0.0:
        raise ValueError(f"{name}: expected a positive number, got {v}")
    return v


def _callable(f, name):
    if f is not None and not callable(f):
        raise TypeError(f"{name}: expected a callable or None, got {type(f).__name__}")
    return f


_INPUT_NAMES = {1: "tau", 2: "base_wrench", 3: "applied", 4: "extra_rate"}

# Steps per compiled call when no callback runs between them: a call of this
# many steps of a small model takes a few tens of milliseconds, often enough
# to update the progress line and to act on Ctrl-C.
_BLOCK = 256
# The same while a watch (a run with contacts) ends the run at an event: the
# steps integrated past the event in its block are discarded.
WATCH_BLOCK = 16


def _unresolved(t0, duration, h):
    """Why steps of ``h`` from ``t0`` over ``duration`` would not advance the
    time, or ``""``. ``t0 + k h`` and ``t0 + (k+1) h`` are each rounded by at
    most 1.5 float64 spacings of the largest ``|t|`` (the product ``k h``,
    then the sum): a step above 4 spacings advances every time strictly."""
    ulp = float(np.spacing(max(abs(t0), abs(t0 + duration))))
    if h > 4.0 * ulp:
        return ""
    return (f"the step {h:g} is not above 4 times the time's resolution {ulp:g} (float64 "
            f"spacing at t = {t0:g} + {duration:g}): the step times would not advance; start "
            f"at a smaller t0 (only time differences matter without a time-dependent "
            f"controller) or take a longer step")


def _memory():
    """Bytes of physical memory, or ``None`` where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _same_reference(callback, name, reference):
    """A callback that states the point its twists and wrenches are about (a
    :mod:`liedyn.control` law's ``reference``) must share the run's (SPEC §1)."""
    own = getattr(callback, "reference", getattr(getattr(callback, "__self__", None),
                                                 "reference", None))
    if isinstance(own, str) and own != reference:
        raise ValueError(f"{name}: takes and returns twists and wrenches with reference={own!r}, "
                         f"and this run has reference={reference!r}: simulate with "
                         f"reference={own!r}")


class _Run:
    """One simulation: validated arguments, buffers, the step loop.

    The stage evaluation is :meth:`_evaluate` (inputs, forward dynamics,
    rates): it reads the stage state from the handle's ``C`` and ``x`` and
    leaves ``V̇₀`` in ``ws.base_twist[1]`` and ``q̈`` in ``ws.q[2]`` before the rates
    are formed. Runs whose inputs only change at sample instants (no plant,
    and no controller or a held one) take whole steps in one compiled call.
    ``watch(run)``, given, is called after new samples are recorded
    (``run.T`` of them); the run ends there when it returns true.
    """

    def __init__(self, model, state0, duration, *, dt, controller=None, control_rate=None,
                 plant=None, adaptive=False, rtol=1e-9, atol=1e-12, min_step=None,
                 max_step=None, reference="world", progress=False, t0=0.0, divergence=1e10,
                 constraints=None, stabilization="projection", segment=False, limits=None,
                 watch=None):
        check_model(model)
        self.watch = watch
        self.model = model
        self.base_ref = about_base(reference)
        self.reference = reference
        _same_reference(controller, "controller", reference)
        _same_reference(plant, "plant", reference)
        n, N = model.n_joints, model.n_bodies
        self.n, self.N = n, N
        self.floating = bool(model.floating_base)
        self.t0 = check_scalar(t0, "t0")
        self.duration = check_scalar(duration, "duration", nonneg=True)
        self.controller = _callable(controller, "controller")
        self.plant = _callable(plant, "plant")
        if control_rate is not None:
            if controller is None:
                raise ValueError("control_rate: a zero-order hold needs a controller")
            control_rate = _positive(control_rate, "control_rate")
        self.control_rate = control_rate
        if not isinstance(adaptive, (bool, np.bool_)):
            raise TypeError(f"adaptive: expected a bool, got {type(adaptive).__name__}")
        self.adaptive = bool(adaptive)
        self.rtol = _positive(rtol, "rtol")
        self.atol = check_scalar(atol, "atol", nonneg=True)
        self.divergence = float(as_array(divergence, "divergence", shape=(),
                                         allow_nonfinite=True))
        if not self.divergence > 0.0:
            raise ValueError(f"divergence: expected a positive number (or inf), got {divergence}")
        self.min_step = _positive(min_step, "min_step", allow_none=True)
        self.max_step = _positive(max_step, "max_step", allow_none=True)
        for name, v in (("min_step", self.min_step), ("max_step", self.max_step)):
            if v is not None and not self.adaptive:
                raise ValueError(f"{name}: bounds the adaptive step; a fixed-step run takes "
                                 f"dt (pass adaptive=True, or leave {name} out)")
        if self.min_step is not None and self.max_step is not None \
                and self.min_step > self.max_step:
            raise ValueError(f"min_step, max_step: min_step = {self.min_step:g} exceeds "
                             f"max_step = {self.max_step:g}")
        if not isinstance(progress, (bool, np.bool_)):
            raise TypeError(f"progress: expected a bool, got {type(progress).__name__}")
        self.progress = bool(progress)
        self._state0(state0)
        self.dt = check_scalar(dt, "dt")
        self._held(constraints, stabilization)
        self.limits = None if limits is None else Monitor(model, limits, self.base_ref)
        self._buffers()
        if self.limits is not None and self.limits.needs_state:
            self.want_state = True                 # rotor thrusts depend on the pose
        if not self.dt > 0.0:
            self._fail(self.t0, "dt", f"the step must be positive, got dt = {self.dt}")
        if not segment:
            self._check_grid()

    def _check_grid(self):
        """Refuse steps whose times do not advance at the time's resolution
        (the fixed step, or the longest adaptive one), or a fixed-step
        trajectory that would not fit in memory, before any step is taken."""
        if self.adaptive:
            h = min(self.duration, math.inf if self.max_step is None else self.max_step)
            which = "duration" if self.max_step is None or h < self.max_step else "max_step"
            issue = self.duration > 0.0 and _unresolved(self.t0, self.duration, h)
            if issue:
                self._fail(self.t0, which, issue)
            return
        h, _, steps = self._grid()
        if not steps:
            return
        which = "dt" if self.control_rate is None else "dt, control_rate"
        issue = _unresolved(self.t0, self.duration, h)
        if issue:
            self._fail(self.t0, which, issue)
        per_sample = 8 * (36 + 4 * self.n + self.m + 3 * self.mc)   # the columns, one control
        need = (steps + 1) * per_sample
        have = _memory()
        if have is not None and need > have:
            raise ValueError(f"{which}: {steps + 1:.4g} samples of {per_sample} B "
                             f"({need / 2**30:.4g} GiB) would not fit in this machine's memory "
                             f"({have / 2**30:.4g} GiB): a step of {h:g} s over duration "
                             f"{self.duration:g} s; take a longer step or a shorter duration")
    # -- setup ---------------------------------------------------------------

    def _state0(self, s):
        if not isinstance(s, State):
            raise TypeError(f"state0: expected a liedyn.State, got {type(s).__name__}")
        n, model = self.n, self.model
        C = model.home_pose if s.base_pose is None else s.base_pose
        V = np.zeros(6) if s.base_twist is None else s.base_twist
        q = np.zeros(n) if s.q is None else s.q
        qd = np.zeros(n) if s.qd is None else s.qd
        z = _EMPTY1 if s.extra is None else s.extra
        for name, a in (("q", q), ("qd", qd)):
            if a.shape != (n,):
                raise ValueError(f"state0.{name}: expected shape ({n},) for the model's "
                                 f"{counted(n, 'joint')}, got {a.shape}")
        if not self.floating and np.any(V):
            raise ValueError("state0.base_twist: a fixed base does not move; pass None or zeros")
        self.m = z.shape[0]
        self.C_init = C
        self.x_init = np.concatenate([np.zeros(6), q, qd, z])
        if self.floating:
            if self.base_ref:
                self.x_init[:6] = V
            else:                                  # about the base origin (SPEC §1)
                _shift_twist(V, np.array(C[:3, 3]), self.x_init[:6])

    def _held(self, constraints, stabilization):
        """The held constraints (:mod:`liedyn.simulation.constraints`), or none."""
        self.held = self.con = None
        self.mc = 0
        self.kernels = _EVALUATE, _RECORD, _FIXED_STEPS
        if constraints is None:
            if not (isinstance(stabilization, str) and stabilization == "projection"):
                raise ValueError("stabilization: only a run with constraints= is stabilized")
            return
        self.held = Held(self.model, constraints, stabilization,
                         self.dt if self.dt > 0.0 else 1.0, self.C_init, self.x_init[6:6 + self.n])
        self.con = self.held.data
        self.mc = self.held.m
        self.kernels = _EVALUATE_HELD, _RECORD_HELD, _FIXED_STEPS_HELD

    def _buffers(self):
        n, N, m = self.n, self.N, self.m
        nx = 6 + 2 * n + m
        self.ws = Workspace(self.model, 0)
        x = np.zeros(nx)
        b = {"A": _A, "R": np.array(self.C_init[:3, :3]), "o": np.array(self.C_init[:3, 3]),
             "xn": self.x_init, "K": np.zeros((5, 6)), "F": np.zeros((5, nx)),
             "Om": np.zeros(6), "E": np.empty((4, 4)), "C": np.eye(4), "x": x,
             "V1": x[:6].reshape(1, 6), "qq": x[6:6 + 2 * n].reshape(2, n),
             "tau": np.zeros((1, n)), "Wb": np.zeros((1 if self.floating else 0, 6)),
             "Wa": np.zeros((1, N, 6)), "zdot": np.zeros(m), "about_base": False}
        self.b = b
        self.x_start = self.x_init.copy()          # b["xn"] is x_init, advanced in place
        self.sim = _SIM.call(*(b[f] for f in _SIM_FIELDS))
        if self.held is not None:
            self.held.start(self.model, self.ws, self.sim, b["o"])
        self.want_state = self.plant is not None or (self.controller is not None
                                                     and self.control_rate is None)
        self.steps = self.rejected = self.evaluations = 0
        self.T = 0
        self.rec = None
        self._allocate(16)

    def restart(self, duration, dt):
        """The run again from its initial state, over ``duration`` with the
        fixed step ``dt`` (the steps of several lengths from one state that
        locate an event): the handles, workspace and held set are kept, the
        samples are new arrays (earlier trajectories keep theirs)."""
        self.duration, self.dt = check_scalar(duration, "duration", nonneg=True), dt
        b = self.b
        b["R"][:] = self.C_init[:3, :3]
        b["o"][:] = self.C_init[:3, 3]
        b["xn"][:] = self.x_start
        if self.held is not None:
            self.held.arrays["count"][:] = 0
            self.held.start(self.model, self.ws, self.sim, b["o"])
        self.steps = self.rejected = self.evaluations = 0
        self.T = 0
        self.rec = None
        self._allocate(16)
        return self.run()

    def _allocate(self, cap):
        """Trajectory storage for ``cap`` samples, keeping what is recorded."""
        n, N, m, T, mc = self.n, self.N, self.m, self.T, self.mc
        old = self.rec
        new = {"time": np.empty(cap), "base_pose": np.empty((cap, 4, 4)),
               "base_twist": np.empty((cap, 1, 6)), "q": np.empty((cap, 2, n)),
               "extra": np.empty((cap, m)), "tau": np.empty((cap, 1, n)),
               "base_wrench": np.empty((cap, 1, 6)), "base_acceleration": np.empty((cap, 6)),
               "joint_acceleration": np.empty((cap, n)), "applied": None,
               "force": np.empty((cap, mc)), "velocity_residual": np.empty((cap, mc)),
               "position_residual": np.empty((cap, mc))}
        if old is None:
            self.controls = []
        else:
            if old["applied"] is not None:
                new["applied"] = np.zeros((cap, 1, N, 6))
            for k, v in old.items():
                if v is not None:
                    new[k][:T] = v[:T]
        self.rec = new
        self.rec_data = _REC.call(*(new[f] for f in _REC_FIELDS))
        self.cap = cap

    # -- results and failures -------------------------------------------------

    def _trajectory(self):
        T, r = self.T, self.rec
        return Trajectory(
            time=r["time"][:T], base_pose=r["base_pose"][:T], base_twist=r["base_twist"][:T],
            q=r["q"][:T], extra=r["extra"][:T], tau=r["tau"][:T],
            base_wrench=r["base_wrench"][:T] if self.floating else None,
            applied=None if r["applied"] is None else r["applied"][:T],
            controls=list(self.controls[:T]), base_acceleration=r["base_acceleration"][:T],
            joint_acceleration=r["joint_acceleration"][:T], reference=self.reference,
            steps=self.steps, rejected=self.rejected, evaluations=self.evaluations,
            limits=None if self.limits is None else self.limits.report(),
            **trajectory_columns(self.held, r, T))

    def _fail(self, t, quantity, detail, diagnosis=None):
        raise SimulationError(f"t = {t:.9g}: {quantity}: {detail}", t, quantity,
                              self._trajectory(), diagnosis)

    def _state_entry(self, k):
        """The name of entry ``k`` of ``(p₀ (3), x)``."""
        n, names = self.n, self.model.joint_names
        if k < 3:
            return f"base position p[{k}]"
        k -= 3
        if k < 6:
            return f"base_twist[{k}]"
        k -= 6
        if k < n:
            return f"q[{k}] (joint {names[k]!r})"
        if k < 2 * n:
            return f"qd[{k - n}] (joint {names[k - n]!r})"
        return f"extra[{k - 2 * n}]"

    def _source(self):
        return "plant" if self.plant is not None else "controller"

    def _bad_input(self, t, which, arrays):
        a = arrays[which - 1]
        where = tuple(int(v) for v in np.argwhere(~np.isfinite(a))[0])
        name = _INPUT_NAMES[which]
        self._fail(t, name, f"not finite ({name}{list(where)} = {a[where]}) from the "
                   f"{self._source()}")

    def _dynamics_failed(self, t, status, i):
        """Stage ``i``'s kernel failed with ``status``."""
        if self.held is not None:
            detail = self.held.stage_failure(status, i)
            if detail is not None:
                self._fail(t, "constraints", detail)
        detail = status_message(status, self.model)
        b = self.b
        if not (np.all(np.isfinite(b["x"])) and np.all(np.isfinite(b["C"]))):
            self._fail(t, "state", "the stage state is not finite")
        self._fail(t, "accelerations" if "not finite" in detail else "dynamics", detail)

    def _projection_failed(self, t, status):
        self._fail(t, "constraints", self.held.projection_failure(status, self.model))

    def current_state(self):
        """The committed state as a :class:`State`, twist about the reference."""
        b, n = self.b, self.n
        C = np.eye(4)
        C[:3, :3], C[:3, 3] = b["R"], b["o"]
        x = b["xn"]
        V = np.array(x[:6])
        if not self.base_ref:                      # about the world origin
            V[3:] -= np.cross(V[:3], b["o"])
        return State(C, V if self.floating else None, x[6:6 + n], x[6 + n:6 + 2 * n],
                     x[6 + 2 * n:])

    def _bad_state(self, t, kind, k):
        """A committed state that is not finite (kind 1) or diverges (kind 2),
        with the fastest mode at a good sample (SPEC §10.4)."""
        why, diagnosis = diagnose(self)
        if kind == 1:
            self._fail(t, self._state_entry(k), "not finite" + why, diagnosis)
        b = self.b
        v = b["o"][k] + b["C"][k, 3] if k < 3 else b["x"][k - 3]
        self._fail(t, self._state_entry(k), f"|{v:.6g}| exceeds the divergence bound "
                   f"{self.divergence:g}: the state diverges" + why, diagnosis)

    # -- one stage ------------------------------------------------------------

    def _inputs(self, t, state, sample):
        """``(u, Inputs or None)`` of a stage."""
        if self.control_rate is not None:
            if sample:
                self.u = callback(self.controller, "controller", self._fail, t, state)
            u = self.u
        elif self.controller is not None:
            u = callback(self.controller, "controller", self._fail, t, state)
        else:
            u = None
        if self.plant is not None:
            return u, callback(self.plant, "plant", self._fail, t, state, u)
        return u, u

    def _arrays(self, t, inp):
        """The arrays of an :class:`Inputs`, checked against the model (empty
        arrays for ``None``)."""
        bad = inputs_mismatch(inp, self.n, self.N, self.m, self.floating, self._source())
        if bad is not None:
            self._fail(t, *bad)
        if inp is None:
            return _EMPTY1, _EMPTY1, _EMPTY2, _EMPTY1
        tau, W, Wa, z = inp.tau, inp.base_wrench, inp.applied, inp.extra_rate
        return (_EMPTY1 if tau is None else tau, _EMPTY1 if W is None else W,
                _EMPTY2 if Wa is None else Wa, _EMPTY1 if z is None else z)

    def _evaluate(self, i, arrays):
        """Inputs, forward dynamics (SPEC §5, order 0) and rates of stage
        ``i``; returns ``(kind, code)`` as :func:`_evaluate`."""
        return self.kernels[0].call(self.model._data, self.ws._data, self.sim, self.con, i,
                                    *arrays, self.base_ref, self.n)

    def _stage(self, i, t, h, sample=False):
        """Evaluate stage ``i`` at time ``t``; returns ``(u, tau, W, Wa, z)``,
        what to record if it becomes a sample."""
        want = self.want_state or sample
        s = _POINT.call(self.sim, i, h, self.base_ref, want)
        state = _StageState(s, self.n) if want else None
        u, inp = self._inputs(t, state, sample)
        arrays = self._arrays(t, inp)
        if self.limits is not None:
            arrays = self.limits.stage(t, state, arrays)                  # SPEC §10.3
        kind, code = self._evaluate(i, arrays)
        self.evaluations += 1
        if kind == 1:
            self._bad_input(t, code, arrays)
        if kind == 2:
            self._dynamics_failed(t, code, i)
        return (u,) + arrays

    # -- the loop -------------------------------------------------------------

    def _record(self, t, rec):
        """Record sample ``T``; true if :attr:`watch` ends the run there."""
        if self.T == self.cap:
            self._allocate(2 * self.cap)
        k = self.T
        self.kernels[1].call(self.sim, self.con, self.rec_data, k, t, self.base_ref, self.n)
        self._record_inputs(k, k + 1, rec)
        self.T = k + 1
        return self.watch is not None and bool(self.watch(self))

    def _record_inputs(self, k0, k1, rec):
        """Rows ``k0 .. k1−1`` of the input columns (one input for all)."""
        u, tau, W, Wa, _ = rec
        r = self.rec
        r["tau"][k0:k1, 0] = tau if tau.shape[0] else 0.0
        r["base_wrench"][k0:k1, 0] = W if W.shape[0] else 0.0
        if Wa.shape[0]:
            if r["applied"] is None:
                r["applied"] = np.zeros((self.cap, 1, self.N, 6))
            r["applied"][k0:k1, 0] = Wa
        elif r["applied"] is not None:
            r["applied"][k0:k1, 0] = 0.0
        self.controls.extend([u] * (k1 - k0))

    def _commit_step(self, t_new):
        kind, k = _COMMIT.call(self.sim, self.divergence)
        if kind:
            self._bad_state(t_new, kind, k)
        if self.con is not None:
            status = _AFTER_STEP.call(self.model._data, self.ws._data, self.sim, self.con)
            if status != OK:
                self._projection_failed(t_new, status)
        self.steps += 1

    def run(self):
        t1 = self.t0 + self.duration
        loop = (self._run_adaptive if self.adaptive else
                self._run_fixed if self.want_state else self._run_fixed_held)

        def steps(bar):
            loop(t1, bar)
            return self._trajectory()
        traj = _guarded(steps, self.t0, t1, self.progress, self._trajectory)
        if self.limits is not None:
            self.limits.warn()
        return traj

    def _grid(self):
        """``(h, every, steps)`` of the fixed step: ``h = dt``, or with
        ``control_rate`` the largest divisor of the control period not above
        ``dt`` (a sample every ``every`` steps); ``steps`` steps, the last
        shortened to end at ``t0 + duration``."""
        h, every = self.dt, 0
        if self.control_rate is not None:
            period = 1.0 / self.control_rate
            every = max(1, math.ceil(period / self.dt * (1.0 - 1e-12)))
            h = period / every
        ratio = self.duration / h * (1.0 - 1e-12)
        steps = (math.ceil(ratio) if ratio < 2.0**62 else 2**62) if self.duration > 0.0 else 0
        return h, every, steps

    def _step_time(self, k, h, steps, t1):
        """``(t_k, t_{k+1})`` on the fixed grid."""
        return self.t0 + k * h, t1 if k == steps - 1 else self.t0 + (k + 1) * h

    def _run_fixed(self, t1, bar):
        """Fixed steps with a callback at every stage."""
        h, every, steps = self._grid()
        self._allocate(steps + 1)
        rec = self._stage(0, self.t0, h, sample=every > 0)
        if self._record(self.t0, rec):
            return
        for k in range(steps):
            t, t_new = self._step_time(k, h, steps, t1)
            hk = t_new - t
            self._stage(1, t + 0.5 * hk, hk)
            self._stage(2, t + 0.5 * hk, hk)
            self._stage(3, t_new, hk)
            _POINT.call(self.sim, 4, hk, self.base_ref, False)
            self._commit_step(t_new)
            rec = self._stage(0, t_new, hk, sample=every > 0 and (k + 1) % every == 0)
            if self._record(t_new, rec):
                return
            if bar is not None:
                bar.update(t_new, self.steps)

    def _run_fixed_held(self, t1, bar):
        """Fixed steps whose inputs change only at sample instants (no plant;
        no controller, or a held one): the steps between two instants run in
        one compiled call (:func:`_fixed_steps`), in blocks of at most
        ``_BLOCK`` steps so that progress and Ctrl-C are served."""
        h, every, steps = self._grid()
        self._allocate(steps + 1)
        rec = self._stage(0, self.t0, h, sample=every > 0)
        if self._record(self.t0, rec):
            return
        k = 0
        block = _BLOCK if self.watch is None else WATCH_BLOCK
        while k < steps:
            k1 = min(steps, k + block)
            if every:
                k1 = min(k1, (k // every + 1) * every)
            kind, code, ks, i = self.kernels[2].call(
                self.model._data, self.ws._data, self.sim, self.con, self.rec_data, k, k1, steps,
                self.t0, h, t1, *rec[1:], self.base_ref, self.n, self.divergence)
            # steps k .. ks−1 are done; each but the block's last recorded its end
            # sample, and a failure at stage 0 is one at the end of step ks − 1
            end_open = kind == 0 or i == 0
            self.steps += ks - k
            self.evaluations += 4 * (ks - k) - end_open + (i if kind and i < 4 else 0) \
                + (3 if kind and i == 4 else 0)
            recorded = ks - k - end_open
            if recorded:
                self._record_inputs(self.T, self.T + recorded, rec)
                self.T += recorded
            if kind:
                t, t_new = self._step_time(ks - 1 if i == 0 else ks, h, steps, t1)
                ts = t_new if i in (0, 4) else t + _C[i] * (t_new - t)
                if kind == 1:
                    self._bad_input(ts, code, rec[1:])
                if kind == 2:
                    self._dynamics_failed(ts, code, i)
                if kind == 5:
                    self._projection_failed(ts, code)
                self._bad_state(ts, kind - 2, code)
            t_new = self._step_time(k1 - 1, h, steps, t1)[1]
            rec = self._stage(0, t_new, h, sample=every > 0 and k1 % every == 0)
            if self._record(t_new, rec):
                return
            k = k1
            if bar is not None:
                bar.update(t_new, self.steps)

    def _run_adaptive(self, t1, bar):
        """Error-controlled step with the embedded third-order solution (SPEC
        §10); steps end exactly on the control sample instants and at
        ``t0 + duration``."""
        min_step = self.min_step if self.min_step is not None else 1e-10 * max(self.duration,
                                                                                  self.dt)
        max_step = self.max_step if self.max_step is not None else math.inf
        period = None if self.control_rate is None else 1.0 / self.control_rate
        samples = 0
        t = self.t0
        h = min(self.dt, max_step)
        rec = self._stage(0, t, h, sample=period is not None)
        if self._record(t, rec):
            return
        grow = FAC_MAX
        while t < t1:
            next_sample = math.inf if period is None else self.t0 + (samples + 1) * period
            if period is not None and abs(next_sample - t1) <= 1e-9 * period:
                next_sample = t1                    # the end is a sample instant
            target = min(t1, next_sample)
            landing = t + 1.1 * h >= target
            hk = target - t if landing else h
            t_new = target if landing else t + hk
            if not t_new > t:
                self._fail(t, "step", f"the step {hk:g} is below the time resolution at t")
            self._stage(1, t + 0.5 * hk, hk)
            self._stage(2, t + 0.5 * hk, hk)
            self._stage(3, t + hk, hk)
            rec4 = self._stage(4, t_new, hk)
            err, worst = _ERROR.call(self.sim, hk, _E, self.rtol, self.atol, self.floating)
            if not err <= 1.0:
                self.rejected += 1
                h = hk * (FAC_MIN if not np.isfinite(err) else
                          min(1.0, max(FAC_MIN, SAFETY * err ** -0.25)))
                grow = 1.0
                if h < min_step:
                    what = "pose" if worst < 6 else self._state_entry(worst - 3)
                    self._fail(t, "step", f"the step fell below min_step = {min_step:g} "
                               f"(error estimate {err:.3g} times the tolerance, largest in "
                               f"{what})")
                continue
            pt = self.b["C"][:3, 3].copy()
            self._commit_step(t_new)
            fac = grow if err == 0.0 else min(grow, max(FAC_MIN, SAFETY * err ** -0.25))
            # after a step shortened to land on a target, keep the step proposed before
            h = min(max(hk * fac, h) if landing else hk * fac, max_step)
            grow = FAC_MAX
            t = t_new
            if landing and target == next_sample:   # a control sample: new held input
                samples += 1
                rec = self._stage(0, t, h, sample=True)
            elif self.held is not None and self.held.project:
                rec = self._stage(0, t, h)          # the projection moved the state
            else:
                _REUSE.call(self.sim, pt)
                if self.held is not None:
                    self.held.reuse_last_stage()
                rec = rec4
            if self._record(t, rec):
                return
            if bar is not None:
                bar.update(t, self.steps)
