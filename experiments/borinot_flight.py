"""Borinot flies an aggressive figure-eight of its centre of mass while its
arm swings: exact tracking of the flat outputs (SPEC §17.6) against what
drone users fly, and the paper's hexarotor flown as a quadrotor.

    python -m experiments.borinot_flight            # quick: one lap, dt = 10 ms
    python -m experiments.borinot_flight --full     # three laps, dt = 2 ms
    python -m experiments.borinot_flight --duration 0.5   # any horizon (the tests)

**Robot.** ``borinot_flying_arm_2`` (example-robot-data): a coplanar
hexarotor (2.91 kg with its arm) carrying a 2-joint arm, its six rotors as
its published description places them (:mod:`experiments._borinot`),
``f_max = 19.23 N`` per rotor. **Motion.** The flat outputs of
:class:`experiments._borinot.FigureEight` with ``ω = 1.8 rad/s``: ``x_G``
on a 2 m by 1.2 m figure-eight (up to 8.1 m/s² sideways, 0.83 g) bobbing
by ±0.2 m, the yaw swinging by ±0.5 rad, each joint by ±0.6 rad at 1.5 and
2 rad/s; every rotor thrust of the plan within ``[0, f_max]``
(:func:`liedyn.control.feasibility`).

**Laws**, the same poles for each loop: the centre of mass
``POSITION_POLES`` then ``ATTITUDE_POLES`` (the exact law's four poles of
``x_G``; the cascades' position and attitude loops), the yaw
``ATTITUDE_POLES``, the joints ``JOINT_POLES``:

* **exact**: :class:`liedyn.control.FlatTrackingLaw` (the thrust extended
  dynamically, ``f̈`` the input);
* **(a) geometric, rigid body**: Lee–Leok–McClamroch's SE(3) controller on
  the robot locked at ``q_nom`` with Mellinger–Kumar's single-rigid-body
  flat feed-forward, the arm by computed torque on a base at rest (each a
  disturbance to the other), what users fly today;
* **(b) flat feed-forward + PD**: the multibody flat map of order 0 at the
  reference applied directly with PD loops on the errors, no thrust
  extension.

Each from the reference's state at ``t = 0`` and from a perturbed one (base
origin moved by ``DELTA_P``, joints by ``DELTA_Q``). Reported: the tracking
errors of ``x_G``, ``ψ``, ``q`` (largest joint) and of the end effector
(``flying_arm_2__ee``), RMS and max over the run and max over its second
half (``late_max``, after the transient) and at its end; each rotor's thrust
``A₄⁺ (M^B, f)`` (min, max) against ``[0, f_max]``. Quick mode leaves out
the runs another stands for (``QUICK_SKIPS``).

**The paper's hexarotor** (:mod:`liedyn.examples`, tilted rotors, two
3-link arms) with its arms locked at ``Q_LOCK``: one rigid body. Its rotors
are not parallel, so "flown as a quadrotor would be" means: the same
underactuated laws command a thrust along the base's ``z`` and three
moments, and the full 6×6 allocation turns ``(M^B, 0, 0, f)`` into the six
thrusts (the lateral force it could make is left unused; its rotors then
spend ``1/cos α`` of the thrust).

**Checks**, each against an independent route, as targets:

* open loop: the flat inputs (map of order 0) integrated by
  :func:`liedyn.simulate` reproduce the flat outputs; the largest error over
  ``OPEN_LOOP_HORIZON`` falls as ``dt⁴`` (ratio 12–20 when dt halves);
* closed loop: from the perturbed start the exact law's errors of ``x_G``
  and ``q`` are the solutions ``exp(F t) e(0)`` of the linear error
  equations of the poles (relative deviation ≤ ``LINEAR_RTOL``);
* the geometric baseline on one rigid body (Borinot locked at ``q_nom``):
  its feed-forward thrust and moment equal the flat map of that body (the
  closed form's independent route) to round-off, and it tracks the
  figure-eight to the integrator's accuracy;
* the exact law from the reference tracks to the integrator's accuracy.

Writes ``borinot_flight.csv`` (values and targets, met or missed) and
``borinot_flight.png`` to ``paper_figures/`` (``--out DIR`` elsewhere,
``_full`` names with ``--full``).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.linalg import expm

import liedyn
from liedyn import control
from liedyn.examples import aerial_manipulator, allocation_matrix

from experiments import _borinot as B
from experiments._provenance import stamp
from experiments._table import output_stem, write_rows
from experiments._timing import load_columns, machine_load

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"

OMEGA = 1.8                                  # rad/s: the figure-eight's rate
LAP = 2 * np.pi / OMEGA                      # s
POSITION_POLES = (-3.0, -4.0)
ATTITUDE_POLES = (-10.0, -12.0)
JOINT_POLES = (-8.0, -10.0)
POLES = POSITION_POLES + ATTITUDE_POLES      # the exact law's x_G poles
DELTA_P = np.array([0.05, -0.05, 0.03])      # m
DELTA_Q = np.array([0.1, -0.1])              # rad
Q_LOCK = np.array([0.3, -0.2, 0.1, -0.3, 0.2, -0.1])   # rad: the hexarotor's arms
QUICK = dict(horizon=LAP, dt=1e-2)
FULL = dict(horizon=3 * LAP, dt=2e-3)
OPEN_LOOP_HORIZON, OPEN_LOOP_DT = 0.5, (0.01, 0.005)
DT4_RATIO = (12.0, 20.0)                     # 2⁴ = 16, with room for the next term
LINEAR_RTOL = 1e-4        # RK4, dt ≤ 10 ms, |p dt| ≤ 0.12: local error (p dt)⁵/120 ≤ 2e-7
ON_REFERENCE_TOL = 1e-6   # m: RK4's error over a lap at dt ≤ 10 ms, with margin
FEED_FORWARD_RTOL = 1e-10  # of m‖g⃗‖: round-off of the two routes
LAWS = ("exact", "(a) geometric, rigid body", "(b) flat feed-forward + PD")
STARTS = ("on the reference", "perturbed")
# quick mode leaves out the runs another one stands for: (b) from the reference
# flies the flat inputs open loop (the dt⁴ check), and the locked hexarotor from
# the reference is the rigid-body check's case
QUICK_SKIPS = {("borinot", LAWS[2], STARTS[0]), ("hexarotor, arms locked", LAWS[0], STARTS[0]),
               ("hexarotor, arms locked", LAWS[1], STARTS[0])}
FIELDS = ["robot", "law", "start", "quantity", "rms", "max", "late_max", "end", "unit", "target",
          "met", "seconds", "load1_before", "load1_after", "cores"]


def wrap(a):
    return np.angle(np.exp(1j * a))


def yaw_of(R):
    """The Z-X-Y yaw ``atan2(−R₀₁, R₁₁)`` (SPEC §17.1), batched."""
    return np.arctan2(-R[..., 0, 1], R[..., 1, 1])


class Flight:
    """One robot, its reference, its laws and allocation."""

    def __init__(self, name, model, reference, allocation, q_nom, f_max):
        self.name, self.model, self.ref = name, model, reference
        self.A, self.q_nom, self.f_max = allocation, q_nom, f_max
        self.mass = float(model.body_mass.sum())
        A4 = allocation[[0, 1, 2, 5]]
        full = np.linalg.matrix_rank(allocation) == 6
        # thrusts from (M^B, f): the parallel split A₄⁺, or A⁻¹ (M^B, 0, 0, f) for a
        # fully actuated base flown as a quadrotor
        self.split = (np.linalg.pinv(allocation)[:, [0, 1, 2, 5]] if full
                      else A4.T @ np.linalg.inv(A4 @ A4.T))
        self.target = lambda t: reference(t, 1)
        n = model.n_joints
        self.laws = {
            LAWS[0]: control.FlatTrackingLaw(model, POLES, self.target, yaw_poles=ATTITUDE_POLES,
                                             joint_poles=JOINT_POLES),
            LAWS[1]: B.GeometricLaw(model, q_nom, self.target, POSITION_POLES, ATTITUDE_POLES,
                                    JOINT_POLES),
            LAWS[2]: B.FlatFeedForwardLaw(model, q_nom, self.target, POSITION_POLES,
                                          ATTITUDE_POLES, JOINT_POLES) if n else None}
        self.laws = {k: v for k, v in self.laws.items() if v is not None}

    def start(self, perturbed):
        law = self.laws[LAWS[0]]
        on = law.state_on(0.0)
        if not perturbed:
            return on
        q = on.q + DELTA_Q[:self.model.n_joints]
        return law.state_on(0.0, base_position=on.base_pose[:3, 3] + DELTA_P, q=q)

    def run(self, law_name, perturbed, horizon, dt, progress):
        law = self.laws[law_name]
        s = self.start(perturbed)
        exact = law_name == LAWS[0]
        if not exact:
            s = liedyn.State(base_pose=s.base_pose, base_twist=s.base_twist, q=s.q, qd=s.qd)
        t0 = time.perf_counter()
        traj = liedyn.simulate(self.model, s, horizon, dt=dt, controller=law,
                               plant=law.plant if exact else B.direct_plant, progress=progress)
        seconds = time.perf_counter() - t0
        u = np.array(traj.controls)
        f = traj.extra[:, 0] if exact else u[:, 0]
        thrusts = np.column_stack([u[:, 1:4], f]) @ self.split.T
        return dict(traj=traj, seconds=seconds, thrusts=thrusts, **self.errors(traj))

    def reference_along(self, times):
        """The reference's ``x_G``, ``ψ``, ``q`` and end effector at ``times``
        (kept for the last time grid: the runs share it)."""
        key = (len(times), float(times[0]), float(times[-1]))
        if getattr(self, "_along", (None,))[0] != key:
            self._along = key, self._reference_along(times)
        return self._along[1]

    def _reference_along(self, times):
        jets = [self.ref(t, 0) for t in times]
        xG = np.array([j[0][0] for j in jets])
        psi = np.array([j[1][0] for j in jets])
        q = np.array([j[2][0] for j in jets])
        ee = None
        if B.EE in self.model.frame_names:
            fm = control.flat_map_along(self.model, lambda t: self.ref(t, 0), times, 0)
            ee = np.array([liedyn.frame_pose(self.model, C, qk, B.EE)[:3, 3]
                           for C, qk in zip(fm.base_pose, q)])
        return xG, psi, q, ee

    def errors(self, traj):
        xG_d, psi_d, q_d, ee_d = self.reference_along(traj.time)
        m = self.model
        xG = np.array([liedyn.centroidal(m, C, V, q, 0).com[0]
                       for C, V, q in zip(traj.base_pose, traj.base_twist, traj.q)])
        out = dict(com=np.linalg.norm(xG - xG_d, axis=1),
                   yaw=np.abs(wrap(yaw_of(traj.base_pose[:, :3, :3]) - psi_d)),
                   com_error=xG - xG_d)
        if m.n_joints:
            out["joints"] = np.abs(traj.q[:, 0] - q_d).max(axis=1)
            out["joint_error"] = traj.q[:, 0] - q_d
        if ee_d is not None:
            ee = np.array([liedyn.frame_pose(m, C, q[0], B.EE)[:3, 3]
                           for C, q in zip(traj.base_pose, traj.q)])
            out["end effector"] = np.linalg.norm(ee - ee_d, axis=1)
        return out


def borinot_flight():
    model = B.borinot()
    ref = B.FigureEight(model.n_joints, w=OMEGA)
    return Flight("borinot", model, ref, control.rotor_allocation(B.borinot_rotors()),
                  ref.q_nom, B.F_MAX)


def hexarotor_flight():
    """The paper's hexarotor, arms locked at ``Q_LOCK``: one rigid body."""
    model = B.rigid_model(aerial_manipulator(), Q_LOCK)
    ref = B.FigureEight(0, w=OMEGA)
    return Flight("hexarotor, arms locked", model, ref, allocation_matrix(), np.zeros(0), None)


# ------------------------------------------------------------- checks --

def open_loop(flight, dt):
    """Largest errors of ``x_G``, ``R``, ``q`` over ``OPEN_LOOP_HORIZON``, the
    flat inputs applied open loop from the reference's state."""
    m = flight.model

    def controller(t, state):
        fm = control.flat_map(m, *flight.ref(t, 0), 0)
        return np.concatenate([fm.thrust[:1], fm.body_moment[0], fm.tau[0]])

    s = flight.start(False)
    s = liedyn.State(base_pose=s.base_pose, base_twist=s.base_twist, q=s.q, qd=s.qd)
    traj = liedyn.simulate(m, s, OPEN_LOOP_HORIZON, dt=dt,
                           controller=controller, plant=B.direct_plant)
    fm = control.flat_map_along(m, lambda t: flight.ref(t, 0), traj.time, 0)
    xG = np.array([liedyn.centroidal(m, C, V, q, 0).com[0]
                   for C, V, q in zip(traj.base_pose, traj.base_twist, traj.q)])
    xG_d = np.array([flight.ref(t, 0)[0][0] for t in traj.time])
    return np.array([np.abs(xG - xG_d).max(),
                     np.abs(traj.base_pose[:, :3, :3] - fm.rotation[:, 0]).max(),
                     np.abs(traj.q[:, 0] - fm.q[:, 0]).max()])


def companion(poles):
    a = control.gains_from_poles(poles)
    F = np.diag(np.ones(len(a) - 1), 1)
    F[-1] = -a
    return F


def linear_deviation(flight, run):
    """Largest ``|e(t) − exp(F t) e(0)| / |e(0)|`` of ``x_G`` and of ``q``
    along the exact law's perturbed run. The initial error jets: ``x_G``:
    ``(Δx_G, Δẋ_G, 0, 0)`` (the start keeps thrust and attitude), ``q``:
    ``(δq, 0)``. Keeps ``‖exp(F t) e(0)‖`` of ``x_G`` as ``run["linear"]``."""
    m, traj = flight.model, run["traj"]
    c = liedyn.centroidal(m, traj.base_pose[0], np.stack([traj.base_twist[0, 0], np.zeros(6)]),
                          np.stack([traj.q[0, 0], traj.q[0, 1], np.zeros(m.n_joints)]), 1).com
    xd = flight.ref(0.0, 0)[0]
    e_x0 = np.stack([c[0] - xd[0], c[1] - xd[1], np.zeros(3), np.zeros(3)])
    Fx = companion(POLES)
    pred = np.array([(expm(Fx * t) @ e_x0)[0] for t in traj.time])
    run["linear"] = np.linalg.norm(pred, axis=1)
    dev_x = np.abs(run["com_error"] - pred).max() / np.abs(e_x0).max()
    dev_q = 0.0
    if m.n_joints:
        dq = DELTA_Q[:m.n_joints]
        Fq = companion(JOINT_POLES)
        pred_q = np.array([(expm(Fq * t) @ np.stack([dq, 0 * dq]))[0] for t in traj.time])
        dev_q = np.abs(run["joint_error"] - pred_q).max() / np.abs(dq).max()
    return dev_x, dev_q


def rigid_body_check(flight, horizon, dt):
    """The geometric law on Borinot locked at ``q_nom``: its feed-forward
    ``(f, M^B)`` at the reference against the flat map of the rigid body
    (largest over the run's samples, relative to ``m‖g⃗‖``), and its largest
    ``x_G`` error over the run from the reference's state."""
    rigid = B.rigid_model(flight.model, flight.q_nom)
    ref = B.FigureEight(0, w=OMEGA)
    one = Flight("borinot locked", rigid, ref, flight.A, np.zeros(0), flight.f_max)
    law = one.laws[LAWS[1]]
    scale = one.mass * 9.81
    gap = 0.0
    for t in np.linspace(0.0, horizon, 9):
        s = one.laws[LAWS[0]].state_on(t)
        u = law(t, liedyn.State(base_pose=s.base_pose, base_twist=s.base_twist))
        fm = control.flat_map(rigid, *ref(t, 0), 0)
        gap = max(gap, abs(u[0] - fm.thrust[0]) / scale,
                  np.abs(u[1:4] - fm.body_moment[0]).max() / scale)
    run = one.run(LAWS[1], False, horizon, dt, False)
    return gap, float(run["com"].max()), run


# -------------------------------------------------------------- table --

def rms(x):
    return float(np.sqrt(np.mean(np.square(x))))


def table(runs, flights, checks, load):
    rows = []

    def row(robot, law, start, quantity, x=None, value=None, unit="", target="", met="", s=""):
        rows.append(dict(robot=robot, law=law, start=start, quantity=quantity,
                         rms="" if x is None else rms(x),
                         max=value if x is None else float(np.max(x)),
                         late_max="" if x is None else float(np.max(x[len(x) // 2:])),
                         end="" if x is None else float(x[-1]),
                         unit=unit, target=target, met=met, seconds=s, **load))

    for (robot, law, start), r in runs.items():
        for key, unit in (("com", "m"), ("yaw", "rad"), ("joints", "rad"),
                          ("end effector", "m")):
            if key in r:
                name = "x_G" if key == "com" else ("psi" if key == "yaw" else key)
                row(robot, law, start, f"{name} error", r[key], unit=unit, s=r["seconds"])
        f_max = flights[robot].f_max
        th = r["thrusts"]
        for i in range(th.shape[1]):
            lo, hi = float(th[:, i].min()), float(th[:, i].max())
            within = lo >= 0.0 and (f_max is None or hi <= f_max)
            row(robot, law, start, f"rotor {i} thrust min", value=lo, unit="N")
            row(robot, law, start, f"rotor {i} thrust max", value=hi, unit="N",
                target=f"[0, {f_max:.4g}]" if f_max else ">= 0",
                met="" if law != LAWS[0] else ("yes" if within else "no"))
    for c in checks:
        rows.append(dict(robot=c[0], law=c[1], start=c[2], quantity=c[3], rms="", max=c[4],
                         late_max="", end="", unit=c[5], target=c[6],
                         met="yes" if c[7] else "no", seconds="", **load))
    return rows


# -------------------------------------------------------------- figure --

def plot(runs, flights, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = dict(zip(LAWS, ("C0", "C3", "C2")))
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.2))
    bo = flights["borinot"]
    ex = runs["borinot", LAWS[0], "perturbed"]["traj"].time
    xd = np.array([bo.ref(t, 0)[0][0] for t in ex])
    ax = axes[0, 0]
    ax.plot(xd[:, 0], xd[:, 1], "k--", lw=1.0, label="reference")
    for law in LAWS:
        xG = xd + runs["borinot", law, "perturbed"]["com_error"]
        ax.plot(xG[:, 0], xG[:, 1], color=colors[law], lw=1.0, label=law)
    ax.set_title(r"Borinot: $x_G$ from the perturbed start (x–y)", fontsize=9)
    ax.set_aspect("equal")
    ax.legend(fontsize=7)
    for ax, key, what in ((axes[0, 1], "com", r"$\|x_G - x_{G,d}\|$ (m)"),
                          (axes[0, 2], "end effector", "end effector error (m)"),
                          (axes[1, 0], "joints", r"$\max_j |q_j - q_{j,d}|$ (rad)")):
        for law in LAWS:
            for start, ls in zip(STARTS, (":", "-")):
                if ("borinot", law, start) not in runs:
                    continue
                r = runs["borinot", law, start]
                ax.semilogy(r["traj"].time, np.maximum(r[key], 1e-16), color=colors[law],
                            ls=ls, lw=1.0, label=f"{law}, {start}")
        if key == "com" and "linear" in runs["borinot", LAWS[0], "perturbed"]:
            ax.semilogy(ex, runs["borinot", LAWS[0], "perturbed"]["linear"], "k--", lw=0.8,
                        label=r"linear error equation, $\|e^{F t} e(0)\|$")
        ax.set_title(f"Borinot: {what}", fontsize=9)
        ax.set_ylim(1e-14, 1.0)
    axes[0, 1].legend(fontsize=6)
    for ax, robot in ((axes[1, 1], "borinot"), (axes[1, 2], "hexarotor, arms locked")):
        r = runs[robot, LAWS[0], "perturbed"]
        ax.plot(r["traj"].time, r["thrusts"], lw=0.9)
        a = runs[robot, LAWS[1], "perturbed"]
        ax.fill_between(a["traj"].time, a["thrusts"].min(axis=1), a["thrusts"].max(axis=1),
                        color="C3", alpha=0.15, label="(a): range over the rotors")
        ax.axhline(0.0, color="k", lw=0.8)
        if flights[robot].f_max:
            ax.axhline(flights[robot].f_max, color="k", lw=0.8, ls="--", label="f_max")
        ax.set_title(f"{robot}: rotor thrusts (N), exact law, perturbed start", fontsize=9)
        ax.legend(fontsize=7)
    for ax in axes.flat[1:]:
        ax.set_xlabel("t (s)")
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"Figure-eight at ω = {OMEGA:g} rad/s; poles x_G {POLES}, ψ {ATTITUDE_POLES}, "
                 f"q {JOINT_POLES}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------- main --

def positive(text):
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not x > 0.0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return x


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true",
                    help=f"{FULL['horizon']:.3g} s at dt = {FULL['dt']:g} s (quick: "
                         f"{QUICK['horizon']:.3g} s at dt = {QUICK['dt']:g} s)")
    ap.add_argument("--duration", type=positive, default=None, help="horizon (s), overrides")
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG")
    ap.add_argument("--no-progress", action="store_true", help="no progress lines")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    cfg = dict(FULL if args.full else QUICK)
    if args.duration:
        cfg["horizon"] = args.duration
    horizon, dt = cfg["horizon"], cfg["dt"]
    progress = not args.no_progress
    before, wall, cpu = machine_load(), time.perf_counter(), time.process_time()

    def say(text):
        if progress:
            print(f"  [{time.perf_counter() - wall:6.1f} s] {text}", file=sys.stderr, flush=True)

    flights = {f.name: f for f in (borinot_flight(), hexarotor_flight())}
    bo = flights["borinot"]
    plan = control.flat_map_along(bo.model, bo.target, np.arange(0.0, LAP, 0.01), 1,
                                  allocation=bo.A)
    feasible = control.feasibility(bo.model, plan, thrust_max=bo.f_max).feasible
    runs = {}
    for flight in flights.values():
        for law in flight.laws:
            for start in STARTS:
                if not args.full and (flight.name, law, start) in QUICK_SKIPS:
                    continue
                say(f"{flight.name}: {law}, {start} ({horizon:.3g} s, dt = {dt:g} s)")
                runs[flight.name, law, start] = flight.run(law, start == "perturbed", horizon,
                                                           dt, progress)
    say("checks: open loop at two steps, the rigid body")
    e1, e2 = (open_loop(bo, h) for h in OPEN_LOOP_DT)
    ratio = e1 / e2
    dev_x, dev_q = linear_deviation(bo, runs["borinot", LAWS[0], "perturbed"])
    gap, rigid_err, _ = rigid_body_check(bo, horizon, dt)
    on_ref = runs["borinot", LAWS[0], "on the reference"]
    checks = [("borinot", "", "", f"plan's rotor thrusts within [0, {bo.f_max:.4g}] N "
               "(feasibility)", 0.0 if feasible else 1.0, "", "feasible", feasible)]
    for k, name in enumerate(("x_G", "R", "q")):
        checks.append(("borinot", "open loop", "on the reference",
                       f"open loop: {name} error ratio, dt {OPEN_LOOP_DT[0]:g} / "
                       f"{OPEN_LOOP_DT[1]:g} s (error {e2[k]:.2e} at the smaller)",
                       float(ratio[k]), "", f"{DT4_RATIO[0]:g}-{DT4_RATIO[1]:g}",
                       DT4_RATIO[0] <= ratio[k] <= DT4_RATIO[1]))
    checks += [
        ("borinot", LAWS[0], "perturbed", "x_G error against the linear error equation "
         "(relative to e(0))", dev_x, "", LINEAR_RTOL, dev_x <= LINEAR_RTOL),
        ("borinot", LAWS[0], "perturbed", "q error against the linear error equation "
         "(relative to e(0))", dev_q, "", LINEAR_RTOL, dev_q <= LINEAR_RTOL),
        ("borinot", LAWS[0], "on the reference", "x_G error, max (integrator accuracy)",
         float(on_ref["com"].max()), "m", ON_REFERENCE_TOL,
         on_ref["com"].max() <= ON_REFERENCE_TOL),
        ("borinot locked", LAWS[1], "on the reference", "feed-forward (f, M^B) against the "
         "rigid body's flat map (of m g)", gap, "", FEED_FORWARD_RTOL, gap <= FEED_FORWARD_RTOL),
        ("borinot locked", LAWS[1], "on the reference", "x_G error, max (integrator accuracy)",
         rigid_err, "m", ON_REFERENCE_TOL, rigid_err <= ON_REFERENCE_TOL),
    ]
    seconds, cpu = time.perf_counter() - wall, time.process_time() - cpu
    load = load_columns(before, machine_load())
    rows = table(runs, flights, checks, load)
    for what, value in (("wall", seconds), ("CPU", cpu)):
        rows.append(dict(robot="", law="", start="", quantity=f"{what} time of the study",
                         rms="", max=value, late_max="", end="", unit="s", target="", met="",
                         seconds=value, **load))
    print(f"Figure-eight at ω = {OMEGA:g} rad/s for {horizon:.3g} s, dt = {dt:g} s; "
          f"poles x_G {POLES}, ψ {ATTITUDE_POLES}, q {JOINT_POLES}")
    print(f"{'robot':<24} {'law':<28} {'start':<17} {'x_G rms/max/late (m)':>29} "
          f"{'psi max':>9} {'q max':>9} {'ee max':>9} {'rotor min..max (N)':>19}")
    for (robot, law, start), r in runs.items():
        def mx(key):
            return f"{r[key].max():9.2e}" if key in r else f"{'':>9}"
        late = r["com"][len(r["com"]) // 2:].max()
        print(f"{robot:<24} {law:<28} {start:<17} {rms(r['com']):9.2e}/{r['com'].max():9.2e}/"
              f"{late:9.2e} "
              f"{mx('yaw')} {mx('joints')} {mx('end effector')} "
              f"{r['thrusts'].min():8.3f}..{r['thrusts'].max():8.3f}")
    for c in checks:
        print(f"  {'met   ' if c[7] else 'MISSED'} {c[0]}: {c[3]}: {c[4]:.3g} (target {c[6]})")
    met = sum(r["met"] == "yes" for r in rows)
    total = sum(r["met"] in ("yes", "no") for r in rows)
    print(f"measured {met} of {total} targets met; wall time {seconds:.1f} s (CPU time "
          f"{cpu:.1f} s: the wall time on an idle core), 1-minute load "
          f"{load['load1_before']:.2f} before, {load['load1_after']:.2f} after, "
          f"{load['cores']} cores")
    args.out.mkdir(parents=True, exist_ok=True)
    stem = output_stem(args, "borinot_flight")
    write_rows(f"{stem}.csv", FIELDS, rows, stamp=stamp())
    print(f"wrote {stem}.csv")
    if not args.no_plot:
        plot(runs, flights, f"{stem}.png")
        print(f"wrote {stem}.png")


if __name__ == "__main__":
    main()
