"""Simulation speed: steps per second of ``liedyn.simulate`` with a controller in
the loop, and where the time of a step goes.

    python -m experiments.bench_simulate            # quick: 2 s simulated per case, 3 repeats
    python -m experiments.bench_simulate --full     # 10 s per case, 5 repeats, 1e5 body steps
    python -m experiments.bench_simulate --out DIR  # write elsewhere than paper_figures/

Model: the aerial manipulator of SPEC §8 (floating base, 7 bodies, 6 joints,
gravity), fixed step dt = 1 ms, RKMK4 (4 forward-dynamics evaluations per
step). Controller: gravity compensation of the whole robot at the base plus
attitude and velocity damping, and a joint PD to a sinusoidal reference.
Cases:

* ``held 1 kHz``: the controller sampled at 1 kHz and held (zero-order
  hold), no plant: one controller call per step, the rest of the step in
  one compiled call;
* ``held 1 kHz + plant``: the same, with a first-order actuator model
  (rotor and torque lag, 12 extra states) called at every stage;
* ``at stages``: the controller called at every stage (4 per step);
* ``adaptive``: the controller at every stage, error-controlled steps
  (rtol = 1e-8), steps as long as the accuracy allows;
* ``passive``: no callback at all (base and arms falling under gravity);
* ``free body``: one tumbling rigid body without callbacks, 2·10⁴ steps
  (10⁵ with ``--full``), with the largest ‖RᵀR − I‖ over the run.

Cost split per accepted step (medians over the repeats, which run
interleaved so that a burst of other load falls on every case alike):

* **dynamics**: evaluations per step × the forward-dynamics kernel's time per
  evaluation, measured on the run's own samples with
  ``forward_dynamics_batch(…, threads=1)`` (kernel time, no Python);
* **callbacks**: time spent inside the controller and plant (each call
  timed with ``time.perf_counter``, the two clock reads included);
* **integrator + Python**: the rest — the group arithmetic, the stage
  states handed to the callbacks, input checks, recording, and the Python
  between the compiled calls.

The time of one public ``liedyn.forward_dynamics`` call (order 0, reused
workspace) is printed beside them. Writes ``bench_simulate.csv`` (one row per
case, with the machine and code version) and ``bench_simulate.md`` (the
table) to ``paper_figures/`` (``*_full.*`` with ``--full``).
"""

import time

import numpy as np
from tqdm import tqdm

import liedyn
from liedyn import Inputs, State
from models.aerial_manipulator import aerial_manipulator
from models.trees import tumbling_body

from . import _bench as B
from ._provenance import stamp
from ._table import write_rows
from ._timing import time_call

DT = 1e-3
FIELDS = ["case", "description", "dt_s", "simulated_s", "steps", "rejected", "evaluations",
          "evaluations_per_step", "repeats", "wall_median_s", "wall_min_s", "steps_per_s",
          "realtime_factor", "step_us", "dynamics_us", "callbacks_us", "integrator_us",
          "fd_kernel_us", "fd_public_us", "pose_orthonormality"]


class Timed:
    """A callback with its own stopwatch."""

    def __init__(self, fn):
        self.fn, self.seconds, self.calls = fn, 0.0, 0

    def __call__(self, *args):
        t = time.perf_counter()
        out = self.fn(*args)
        self.seconds += time.perf_counter() - t
        self.calls += 1
        return out


def hover_controller(model):
    """Gravity compensation of the whole robot at the base (about the world
    origin: moment ``p × f`` of the vertical force ``f`` at the base origin
    ``p``, written out: ``np.cross`` of two 3-vectors costs ~30 µs in NumPy 2),
    damping of the base twist, joint PD to a slow sinusoid."""
    lift = float(-model.body_mass.sum() * model.gravity[2])
    amplitude = np.deg2rad([20.0, 10.0, 15.0, -20.0, -10.0, -15.0])

    def controller(t, s):
        p = s.base_pose[:3, 3]
        W = np.array([p[1] * lift, -p[0] * lift, 0.0, 0.0, 0.0, lift]) - 0.5 * s.base_twist
        tau = -0.4 * (s.q - amplitude * np.sin(2.0 * t)) - 0.02 * s.qd
        return Inputs(tau=tau, base_wrench=W)
    return controller


def lag_plant(lag=0.02):
    """First-order actuators: the base wrench and the joint torques follow
    the commands with time constant ``lag`` (12 extra states)."""
    def plant(t, s, u):
        z = s.extra
        cmd = np.concatenate([u.base_wrench, u.tau])
        return Inputs(base_wrench=z[:6], tau=z[6:], extra_rate=(cmd - z) / lag)
    return plant


def cases(full):
    """``name → (description, model, state, duration, callbacks, keywords)``."""
    arm = aerial_manipulator()
    duration = 10.0 if full else 2.0
    start = State(base_pose=np.eye(4), q=np.zeros(6), qd=np.zeros(6))
    hover = hover_controller(arm)
    W0 = np.concatenate([np.zeros(3), -arm.body_mass.sum() * arm.gravity])
    lagged = State(base_pose=np.eye(4), extra=np.concatenate([W0, np.zeros(6)]))
    body = tumbling_body()
    return {
        "held 1 kHz": ("controller at 1 kHz, held; no plant", arm, start, duration,
                       {"controller": hover}, {"control_rate": 1000.0}),
        "held 1 kHz + plant": ("controller at 1 kHz, held; actuator lag at every stage", arm,
                               lagged, duration, {"controller": hover, "plant": lag_plant()},
                               {"control_rate": 1000.0}),
        "at stages": ("controller at every stage", arm, start, duration,
                      {"controller": hover}, {}),
        "adaptive": ("controller at every stage, adaptive, rtol 1e-8", arm, start, duration,
                     {"controller": hover}, {"adaptive": True, "rtol": 1e-8, "atol": 1e-10}),
        "passive": ("no callback", arm, start, duration, {}, {}),
        "free body": ("one tumbling rigid body, no callback", body,
                      State(base_twist=[0.01, 3.0, 0.02, 0.1, 0.0, 0.0]),
                      100.0 if full else 20.0, {}, {}),
    }


def run_case(case):
    """One run: ``(trajectory, wall seconds, callback seconds)``."""
    _, model, state, duration, callbacks, kw = case
    timed = {k: Timed(f) for k, f in callbacks.items()}
    t = time.perf_counter()
    traj = liedyn.simulate(model, state, duration, dt=DT, **timed, **kw)
    wall = time.perf_counter() - t
    return traj, wall, sum(c.seconds for c in timed.values())


def kernel_time(model, traj):
    """Forward-dynamics kernel time per evaluation on the run's samples."""
    args = (model, traj.base_pose, traj.base_twist, traj.q, 0)
    kw = dict(tau=traj.tau, base_wrench=traj.base_wrench, applied=traj.applied, threads=1)
    t = time_call(lambda: liedyn.forward_dynamics_batch(*args, **kw), calls=3, warmup=1, rounds=3)
    return t["mean"] / len(traj)


def public_time(model, traj):
    """One public ``forward_dynamics`` call of order 0 with a reused workspace."""
    ws = liedyn.Workspace(model, 0)
    C, V, q = traj.base_pose[-1], traj.base_twist[-1], traj.q[-1]
    tau, W = traj.tau[-1], None if traj.base_wrench is None else traj.base_wrench[-1]
    t = time_call(lambda: liedyn.forward_dynamics(model, C, V, q, 0, tau=tau, base_wrench=W,
                                                  workspace=ws), calls=2000)
    return t["mean"]


def measure(full, repeats, progress):
    table = cases(full)
    for case in table.values():                 # compile and warm up every path
        c = case[:3] + (min(case[3], 0.05),) + case[4:]
        run_case(c)
    runs = {name: [] for name in table}
    with tqdm(total=repeats * len(table), desc="bench_simulate", disable=not progress) as bar:
        for _ in range(repeats):
            for name, case in table.items():
                runs[name].append(run_case(case))
                bar.update()
    rows = []
    for name, case in table.items():
        traj = runs[name][-1][0]
        model = case[1]
        wall = np.array([r[1] for r in runs[name]])
        cb = np.array([r[2] for r in runs[name]])
        steps = traj.steps
        fd = kernel_time(model, traj)
        step = np.median(wall) / steps
        dyn = traj.evaluations / steps * fd
        cbs = np.median(cb) / steps
        R = traj.base_pose[:, :3, :3]
        rows.append(dict(
            case=name, description=case[0], dt_s=DT, simulated_s=case[3], steps=steps,
            rejected=traj.rejected, evaluations=traj.evaluations,
            evaluations_per_step=traj.evaluations / steps, repeats=repeats,
            wall_median_s=float(np.median(wall)), wall_min_s=float(wall.min()),
            steps_per_s=steps / np.median(wall), realtime_factor=case[3] / np.median(wall),
            step_us=1e6 * step, dynamics_us=1e6 * dyn, callbacks_us=1e6 * cbs,
            integrator_us=1e6 * (step - dyn - cbs), fd_kernel_us=1e6 * fd,
            fd_public_us=1e6 * public_time(model, traj),
            pose_orthonormality=float(np.max(np.abs(
                np.einsum("tji,tjk->tik", R, R) - np.eye(3))))))
    return rows


def markdown(rows, full):
    head = ("| case | steps/s | × real time | µs/step | dynamics | callbacks | "
            "integrator + Python |\n|---|---:|---:|---:|---:|---:|---:|\n")

    def share(x, total):
        return f"{x:.1f} ({100 * x / total:.0f} %)"
    body = "".join(
        f"| {r['case']} | {r['steps_per_s']:.0f} | {r['realtime_factor']:.1f} | "
        f"{r['step_us']:.1f} | {share(r['dynamics_us'], r['step_us'])} | "
        f"{share(r['callbacks_us'], r['step_us'])} | "
        f"{share(r['integrator_us'], r['step_us'])} |\n" for r in rows)
    fd = rows[0]
    body_row = [r for r in rows if r["case"] == "free body"][0]
    adaptive = [r for r in rows if r["case"] == "adaptive"][0]
    notes = (f"\nAerial manipulator (SPEC §8), dt = {DT * 1e3:g} ms, RKMK4; times in µs per "
             f"accepted step, medians of {fd['repeats']} interleaved runs of "
             f"{fd['simulated_s']:g} s simulated. Dynamics = evaluations per step × the "
             f"forward-dynamics kernel's time per evaluation ({fd['fd_kernel_us']:.1f} µs, "
             f"batch over the run's samples; one public `forward_dynamics` call with a "
             f"workspace: {fd['fd_public_us']:.1f} µs). The adaptive run took "
             f"{adaptive['steps']} steps ({adaptive['rejected']} rejected) for "
             f"{adaptive['simulated_s']:g} s. Free body: {body_row['steps']} steps, largest "
             f"‖RᵀR − I‖ over the run {body_row['pose_orthonormality']:.1e}.\n\n")
    return B.markdown_page("Simulation speed", full, head + body, notes)


def main(argv=None):
    ap = B.parser(__doc__)
    ap.add_argument("--repeats", type=int, default=None,
                    help="runs per case (default 3 quick, 5 full)")
    args = ap.parse_args(argv)
    repeats = args.repeats or (5 if args.full else 3)
    rows = measure(args.full, repeats, not args.no_progress)
    stem = B.output_stem(args, "bench_simulate")
    write_rows(stem.with_suffix(".csv"), FIELDS, rows, stamp=stamp())
    text = markdown(rows, args.full)
    stem.with_suffix(".md").write_text(text)
    print(text)
    print(f"wrote {stem.with_suffix('.csv')} and {stem.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    main()
