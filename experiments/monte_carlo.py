"""Monte-Carlo of the elastic-joint exact linearization on the aerial
manipulator, run as Dask tasks (:func:`liedyn.distributed.monte_carlo`).

    python -m experiments.monte_carlo            # quick: 10³ runs of 0.4 s, dt = 5 ms
    python -m experiments.monte_carlo --full     # 10⁴ runs of 2 s, dt = 5 ms

The law is :class:`liedyn.control.ElasticJointLaw` (inverse dynamics of
order 2 per stage) on the nominal model, poles ``POLES`` scaled per run,
tracking the reference motion of SPEC §8. Each run draws (uniformly, seed
``SEED``):

* a start off the reference: joints moved by ``δq ∈ [−0.3, 0.3]`` rad each,
  the base by ``exp(δ)`` with ``δ ∈ [−0.1, 0.1]`` (rad, m) per component,
  the actuator state consistent for the nominal model (``state_on``);
* model errors of the plant: each body's mass and rotational inertia, each
  joint's stiffness ``K`` and motor inertia ``B`` scaled by ``[0.9, 1.1]``
  (the law keeps the nominal values);
* gains: every pole scaled by ``[0.8, 1.25]``.

A run **diverges** when the simulation stops (:class:`liedyn.SimulationError`:
a state entry beyond ``DIVERGENCE``, or a failure of the dynamics) or ends
with a joint error above ``LOST`` (1 rad, three times the largest start
offset). The law has no integral action, so a model error leaves a steady
error (1 % on the base mass alone: about 0.1 rad at the joints) and the
final errors measure the model errors as much as the transient. Quick
mode's horizon (0.4 s, two time constants of the slowest nominal pole)
keeps the 10³ runs within half a minute on two cores, mid-transient;
``--full`` (2 s) shows where the errors settle.

Measured on this machine, in the same run:

* **the study** on a local cluster of one worker process per core (the
  default of ``monte_carlo``): the distribution of the final joint and base
  errors and the fraction that diverge;
* **speed-up**: the same ``SPEEDUP_RUNS`` runs on a local cluster of 1 and
  of 2 worker processes, and on Dask's threaded scheduler with 2 threads
  (processes or threads: the decision ``monte_carlo``'s default follows);
  efficiency = ``T₁ / (2 T₂)``;
* **per-task overhead against task size**: ``OVERHEAD_RUNS`` short runs on
  one worker with 1 to 64 runs per task; the time outside the runs,
  ``wall − Σ run``, fitted as ``a + o · tasks`` gives the per-task overhead
  ``o``, and its share ``o / (o + k c)`` for ``k`` runs of ``c`` seconds;
* **Dask-array batches**: inverse dynamics of order 2 on ``BATCH_SAMPLES``
  samples, in memory against Dask arrays of several chunk sizes on the
  threaded scheduler and on the 2-process cluster;
* **on paper**: the throughput of 100 workers and the runs per task that
  keep the overhead under 5 %, from ``o``, ``c`` and the measured task rate
  of the scheduler.

Writes to ``paper_figures/`` (``--out DIR`` for another folder; ``_full``
names with ``--full``): ``monte_carlo.csv`` (the measurements, one row per
quantity), ``monte_carlo_runs.csv`` (one row per run) and
``monte_carlo.png``. ``--store DIR`` keeps the study's Zarr store there
(a rerun then computes only the runs it lacks; ``--trajectories`` writes
every run's trajectory too); without it the store is a temporary folder.
"""

import argparse
import csv
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import liedyn as ld
from liedyn import control, se3
from experiments._table import output_stem

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"

STIFFNESS = 25.0                      # K, N m/rad (as experiments.elastic_tracking)
MOTOR_INERTIA = 0.01                  # B, kg m²
POLES = (-5.0, -6.0, -7.0, -8.0)      # nominal poles; each run scales them by its gain
DELTA_Q = 0.3                         # rad, joint start offsets within ±
DELTA_BASE = 0.1                      # rad and m, base start offsets within ±
MODEL_ERROR = 0.1                     # masses, inertias, K, B within ±10 %
GAIN = (0.8, 1.25)                    # pole scale
DIVERGENCE = 1e4                      # |state entry| that stops a run
LOST = 1.0                            # rad: a final joint error above this counts as diverged
SEED = 2024
QUICK = dict(runs=1000, horizon=0.4, dt=5e-3, speedup_runs=60, overhead_runs=64,
             batch_samples=20000)
FULL = dict(runs=10000, horizon=2.0, dt=5e-3, speedup_runs=200, overhead_runs=128,
            batch_samples=100000)
OVERHEAD_HORIZON = 0.02               # s: the short runs of the overhead sweep (4 steps)
TASK_SIZES = (1, 2, 4, 8, 16, 32, 64)
BATCH_CHUNKS = (500, 2000, 10000)
FLEET = 100                           # workers of the estimate on paper
OVERHEAD_TARGET = 0.05


# --------------------------------------------------------------- the study --

def perturbations(runs, seed=SEED, n=6, N=7):
    """The table: one row per run."""
    rng = np.random.default_rng(seed)
    lo, hi = 1.0 - MODEL_ERROR, 1.0 + MODEL_ERROR
    return {"delta_q": rng.uniform(-DELTA_Q, DELTA_Q, (runs, n)),
            "delta_base": rng.uniform(-DELTA_BASE, DELTA_BASE, (runs, 6)),
            "mass": rng.uniform(lo, hi, (runs, N)),
            "inertia": rng.uniform(lo, hi, (runs, N)),
            "stiffness": rng.uniform(lo, hi, (runs, n)),
            "motor_inertia": rng.uniform(lo, hi, (runs, n)),
            "gain": rng.uniform(*GAIN, runs)}


def context():
    """What every run shares: the nominal model and the reference motion."""
    from liedyn.examples.aerial_manipulator import aerial_manipulator
    from liedyn.examples.reference_motion import ReferenceMotion
    return aerial_manipulator(), ReferenceMotion()


def reference_target(reference):
    """``t ↦ Target`` with the jets the elastic law reads (relative degree 4);
    the last few are kept (RK4's stages share their times)."""
    memo = {}

    def target(t):
        T = memo.get(t)
        if T is None:
            if len(memo) >= 4:
                memo.clear()
            T = memo[t] = control.Target(q=reference.joint_jet(t, 5),
                                         base_pose=reference.base_pose(t),
                                         base_twist=reference.base_twist_jet(t, 4))
        return T
    return target


def build(ctx, row):
    """One run: the law on the nominal model, the plant with this row's
    model errors, the start moved by this row's offsets."""
    from liedyn.distributed import Run, scaled_model
    model, reference = ctx
    target = reference_target(reference)
    poles = tuple(np.asarray(POLES) * row["gain"])
    law = control.ElasticJointLaw(model, STIFFNESS, MOTOR_INERTIA, poles, target)
    plant_model = scaled_model(model, mass=row["mass"], inertia=row["inertia"])
    plant = control.ElasticJointLaw(plant_model, STIFFNESS * row["stiffness"],
                                    MOTOR_INERTIA * row["motor_inertia"], poles, target)
    T0 = target(0.0)
    state0 = law.state_on(T0, q=T0.q[0] + row["delta_q"],
                          base_pose=se3.exp(row["delta_base"]) @ T0.base_pose)
    return Run(plant_model, state0, law, plant.plant, target)


def run_study(runs, horizon, dt, client=None, store=None, trajectories=False,
              runs_per_task=None, progress=False):
    from liedyn.distributed import monte_carlo
    return monte_carlo(build, perturbations(runs), horizon, dt=dt, context=context(),
                       client=client, store=store, trajectories=trajectories,
                       runs_per_task=runs_per_task, divergence=DIVERGENCE, progress=progress)


def diverged(result):
    """Runs that stopped, or ended more than ``LOST`` off the reference."""
    return result["failed"] | ~(result["joint_error"] <= LOST)


# ---------------------------------------------------------- measurements --

def _cluster(workers):
    import logging

    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    return cluster, Client(cluster)


def timed_study(runs, horizon, dt, client, runs_per_task=None):
    """``(seconds, result)`` of a study on ``client``, after a two-run call that
    loads the kernels in every worker (so the time is the runs')."""
    run_study(2, horizon, dt, client=client, runs_per_task=1)
    t0 = time.perf_counter()
    res = run_study(runs, horizon, dt, client=client, runs_per_task=runs_per_task)
    return time.perf_counter() - t0, res


def speedup(cfg, log):
    """Wall times of the same runs on 1 and 2 worker processes and 2 threads."""
    out = {}
    R, k = cfg["speedup_runs"], max(1, cfg["speedup_runs"] // 8)
    for workers in (1, 2):
        t0 = time.perf_counter()
        cluster, client = _cluster(workers)
        start = time.perf_counter() - t0
        try:
            out[f"processes_{workers}"], res = timed_study(R, cfg["horizon"], cfg["dt"], client, k)
            out[f"warm_{workers}"] = max(res.compile_seconds.values(), default=math.nan)
        finally:
            client.close()
            cluster.close()
        out[f"start_{workers}"] = start
        log(f"  {R} runs on {workers} worker process{'es' if workers > 1 else ''}: "
            f"{out[f'processes_{workers}']:.2f} s (cluster start {start:.1f} s)")
    out["threads_2"], _ = timed_study(R, cfg["horizon"], cfg["dt"], "threads", k)
    log(f"  {R} runs on Dask's threaded scheduler ({ld.batch.available_cores()} threads): "
        f"{out['threads_2']:.2f} s")
    return out


def overhead(cfg, log):
    """Per-task overhead on one worker: rows ``(runs per task, tasks, wall,
    Σ run seconds)`` and the fit ``wall − Σ run = a + o · tasks``."""
    R = cfg["overhead_runs"]
    cluster, client = _cluster(1)
    rows = []
    try:
        run_study(2, OVERHEAD_HORIZON, cfg["dt"], client=client, runs_per_task=1)
        for k in TASK_SIZES:
            if k > R:
                continue
            t0 = time.perf_counter()
            res = run_study(R, OVERHEAD_HORIZON, cfg["dt"], client=client, runs_per_task=k)
            wall = time.perf_counter() - t0
            inside = float(np.nansum(res.run_seconds))
            rows.append(dict(k=k, tasks=len(res.tasks), wall=wall, runs=inside))
            log(f"  {k:>3} runs per task: {len(res.tasks):>3} tasks, wall {wall:.3f} s, "
                f"runs {inside:.3f} s")
    finally:
        client.close()
        cluster.close()
    tasks = np.array([r["tasks"] for r in rows], float)
    outside = np.array([r["wall"] - r["runs"] for r in rows])
    A = np.column_stack([np.ones_like(tasks), tasks])
    (a, o), *_ = np.linalg.lstsq(A, outside, rcond=None)
    c = float(np.mean([r["runs"] / R for r in rows]))
    return rows, float(a), float(o), c


def scheduler_rate(client, n=400):
    """Empty tasks per second through ``client`` (the scheduler and workers'
    round trip, with nothing to compute)."""
    client.gather(client.map(_noop, range(20), pure=False))
    t0 = time.perf_counter()
    client.gather(client.map(_noop, range(n), pure=False))
    return n / (time.perf_counter() - t0)


def _noop(x):
    return x


def batch_timing(cfg, log):
    """Inverse dynamics of order 2 on B samples: in memory against Dask arrays
    of several chunk sizes (threaded scheduler; 2-process cluster)."""
    import dask
    import dask.array as da

    from liedyn.distributed import compute
    model = context()[0]
    B, r, n = cfg["batch_samples"], 2, model.n_joints
    rng = np.random.default_rng(1)
    C = np.broadcast_to(model.home_pose, (B, 4, 4)).copy()
    V = rng.normal(size=(B, r + 2, 6))
    q = rng.normal(size=(B, r + 3, n))

    def best(f, repeat=3):
        f()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        return min(times)

    cores = ld.batch.available_cores()
    rows = [dict(how=f"in memory, {cores} threads", chunk=B,
                 seconds=best(lambda: ld.inverse_dynamics_batch(model, C, V, q, r)))]
    ref = ld.inverse_dynamics_batch(model, C, V, q, r)
    for chunk in BATCH_CHUNKS:
        Cd, Vd, qd = (da.from_array(x, chunks=(chunk,) + x.shape[1:]) for x in (C, V, q))
        lazy = ld.inverse_dynamics_batch(model, Cd, Vd, qd, r)
        with dask.config.set(scheduler="threads"):
            rows.append(dict(how="Dask array, threads", chunk=chunk,
                             seconds=best(lambda: compute(lazy))))
            got = compute(lazy)
        assert got.tau.tobytes() == ref.tau.tobytes()
    cluster, client = _cluster(cores)
    try:
        for chunk in BATCH_CHUNKS:
            Cd, Vd, qd = (da.from_array(x, chunks=(chunk,) + x.shape[1:]) for x in (C, V, q))
            lazy = ld.inverse_dynamics_batch(model, Cd, Vd, qd, r)
            rows.append(dict(how=f"Dask array, {cores} processes", chunk=chunk,
                             seconds=best(lambda: compute(lazy))))
        rate = scheduler_rate(client)
    finally:
        client.close()
        cluster.close()
    for row in rows:
        row["per_sample_us"] = row["seconds"] / B * 1e6
        log(f"  {row['how']:<28} chunk {row['chunk']:>6}: {row['seconds'] * 1e3:8.1f} ms, "
            f"{row['per_sample_us']:.2f} µs per sample")
    return rows, rate


# -------------------------------------------------------------- writing --

def quantiles(x):
    x = x[np.isfinite(x)]
    if not x.size:
        return dict.fromkeys(("p05", "p50", "p95", "max"), math.nan)
    return dict(zip(("p05", "p50", "p95", "max"), np.quantile(x, [0.05, 0.5, 0.95, 1.0])))


def write_runs(path, table, result, div):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["run", "max_abs_delta_q", "stiffness_error", "gain", "failed", "diverged",
                    "joint_error", "base_error", "peak_torque_rate", "error"])
        for i in range(len(result)):
            w.writerow([i, f"{np.max(np.abs(table['delta_q'][i])):.4e}",
                        f"{np.max(np.abs(table['stiffness'][i] - 1.0)):.4e}",
                        f"{table['gain'][i]:.4f}", int(result['failed'][i]), int(div[i]),
                        f"{result['joint_error'][i]:.4e}", f"{result['base_error'][i]:.4e}",
                        f"{result['peak_torque_rate'][i]:.4e}", result["error"][i]])


def write_summary(path, rows):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, ["section", "quantity", "value", "unit"])
        w.writeheader()
        for r in rows:
            v = r["value"]
            w.writerow(dict(r, value=f"{v:.6g}" if isinstance(v, float) else v))


def plot(stem, table, result, div, over_rows, o, c, speed):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    ok = ~div
    for key, color, label in (("joint_error", "C0", r"joints $\max_j |q_j - q_{d,j}|$ (rad)"),
                              ("base_error", "C1", r"base $\|\log(C_d^{-1} C_0)\|$")):
        x = result[key][ok & np.isfinite(result[key])]
        if x.size:
            bins = np.logspace(np.log10(max(x.min(), 1e-12)), np.log10(x.max()) + 1e-9, 40)
            axes[0].hist(x, bins=bins, color=color, alpha=0.6, label=label)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("final tracking error")
    axes[0].set_ylabel("runs")
    axes[0].set_title(f"{len(result)} runs: {np.mean(div):.1%} diverge "
                      f"({np.mean(result['failed']):.1%} stopped)", fontsize=10)
    axes[0].legend(fontsize=8)
    kerr = np.max(np.abs(table["stiffness"] - 1.0), axis=1)
    axes[1].scatter(kerr[ok], result["joint_error"][ok], s=4, alpha=0.5, label="converging")
    if np.any(div):
        y = np.where(np.isfinite(result["joint_error"][div]), result["joint_error"][div], 1.0)
        axes[1].scatter(kerr[div], y, s=8, color="C3", marker="x", label="diverging")
    axes[1].set_yscale("log")
    axes[1].set_xlabel(r"largest stiffness error $\max_j |K_j / K - 1|$")
    axes[1].set_ylabel("final joint error (rad)")
    axes[1].legend(fontsize=8)
    axes[1].set_title("final error against the stiffness error", fontsize=10)
    k = np.array([r["k"] for r in over_rows], float)
    axes[2].semilogx(k, o / (o + k * c) * 100.0, "o-", label=f"model o/(o + k c), o = "
                     f"{o * 1e3:.2f} ms, c = {c * 1e3:.1f} ms")
    meas = np.array([(r["wall"] - r["runs"]) / r["wall"] * 100.0 for r in over_rows])
    axes[2].semilogx(k, meas, "s", mfc="none", label="measured (wall − runs) / wall")
    axes[2].axhline(OVERHEAD_TARGET * 100.0, color="k", ls="--", lw=1, label="5 %")
    axes[2].set_xlabel("runs per task k")
    axes[2].set_ylabel("overhead (%)")
    axes[2].set_title(f"1 worker; speed-up 1→2 workers ×{speed:.2f}", fontsize=10)
    axes[2].legend(fontsize=8)
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(f"{stem}.png", dpi=120)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true",
                    help=f"{FULL['runs']} runs of {FULL['horizon']:g} s (quick: "
                         f"{QUICK['runs']} of {QUICK['horizon']:g} s)")
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    ap.add_argument("--store", type=Path, default=None,
                    help="keep the study's Zarr store in this folder (a rerun computes only "
                         "the missing runs)")
    ap.add_argument("--trajectories", action="store_true",
                    help="write every run's trajectory to the store")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG")
    ap.add_argument("--no-progress", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    cfg = FULL if args.full else QUICK
    stem = output_stem(args, "monte_carlo")
    args.out.mkdir(parents=True, exist_ok=True)

    def log(text):
        print(text, flush=True)

    tmp = None
    store = args.store
    if store is None:
        tmp = tempfile.mkdtemp(prefix="liedyn-monte-carlo-")
        store = Path(tmp) / "study.zarr"
    try:
        log(f"Study: {cfg['runs']} runs of {cfg['horizon']:g} s, dt = {cfg['dt']:g} s, on a "
            f"local cluster of {ld.batch.available_cores()} worker processes (store {store})")
        t0 = time.perf_counter()
        result = run_study(cfg["runs"], cfg["horizon"], cfg["dt"], store=store,
                           trajectories=args.trajectories, progress=not args.no_progress)
        study_wall = time.perf_counter() - t0
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    table = perturbations(cfg["runs"])
    div = diverged(result)
    compile_s = max(result.compile_seconds.values(), default=math.nan)
    log(f"  {len(result.computed)} computed, {len(result.loaded)} read from the store, in "
        f"{study_wall:.1f} s (kernels warmed per worker in "
        f"{', '.join(f'{s:.1f}' for s in result.compile_seconds.values())} s); "
        f"{np.mean(div):.1%} diverge, {np.mean(result['failed']):.1%} stopped")
    jq, bq = quantiles(result["joint_error"][~div]), quantiles(result["base_error"][~div])
    log(f"  final joint error of the converging runs: median {jq['p50']:.3e} rad, "
        f"95 % {jq['p95']:.3e}; base: median {bq['p50']:.3e}, 95 % {bq['p95']:.3e}")

    log("Speed-up:")
    sp = speedup(cfg, log)
    s12 = sp["processes_1"] / sp["processes_2"]
    s_thr = sp["processes_1"] / sp["threads_2"]
    log(f"  1 → 2 worker processes: ×{s12:.2f} (efficiency {s12 / 2:.0%}); 2 threads: "
        f"×{s_thr:.2f}")
    log("Per-task overhead (one worker, runs of "
        f"{OVERHEAD_HORIZON:g} s):")
    over_rows, a, o, c = overhead(cfg, log)
    log(f"  fit: wall − Σ run = {a * 1e3:.1f} ms + {o * 1e3:.2f} ms per task "
        f"(c = {c * 1e3:.2f} ms per run)")
    log("Dask-array batches (inverse dynamics, order 2):")
    batch_rows, rate = batch_timing(cfg, log)
    log(f"  scheduler round trip: {rate:.0f} empty tasks/s on "
        f"{ld.batch.available_cores()} workers")

    c_study = float(np.nanmean(result.run_seconds)) if len(result.computed) else c
    k5 = max(1, math.ceil((1.0 - OVERHEAD_TARGET) / OVERHEAD_TARGET * o / c_study))
    rate_needed = FLEET / (k5 * c_study + o)
    thr = FLEET / (c_study + o / k5)
    log(f"On paper, {FLEET} workers, runs of {c_study * 1e3:.0f} ms: k ≥ {k5} runs per task keeps "
        f"the overhead under {OVERHEAD_TARGET:.0%}; then {rate_needed:.0f} tasks/s reach the "
        f"scheduler (measured here: {rate:.0f}/s) and the fleet does {thr:.0f} runs/s "
        f"({thr * 3600:.3g} per hour)")

    rows = [dict(section="study", quantity="runs", value=len(result), unit="runs"),
            dict(section="study", quantity="horizon", value=cfg["horizon"], unit="s"),
            dict(section="study", quantity="dt", value=cfg["dt"], unit="s"),
            dict(section="study", quantity="diverged fraction", value=float(np.mean(div)),
                 unit="1"),
            dict(section="study", quantity="stopped fraction",
                 value=float(np.mean(result["failed"])), unit="1"),
            dict(section="study", quantity="wall time", value=study_wall, unit="s"),
            dict(section="study", quantity="warm-up per worker (largest)", value=compile_s,
                 unit="s"),
            dict(section="study", quantity="mean run time", value=c_study, unit="s")]
    for name, qs in (("final joint error", jq), ("final base error", bq)):
        rows += [dict(section="study", quantity=f"{name} {k} (converging)", value=float(v),
                      unit="rad" if "joint" in name else "rad, m") for k, v in qs.items()]
    rows += [dict(section="speedup", quantity=f"{sp['processes_1']:.3f} s on 1 process",
                  value=sp["processes_1"], unit="s"),
             dict(section="speedup", quantity="2 processes", value=sp["processes_2"], unit="s"),
             dict(section="speedup", quantity="2 threads", value=sp["threads_2"], unit="s"),
             dict(section="speedup", quantity="1 -> 2 processes", value=s12, unit="x"),
             dict(section="speedup", quantity="efficiency 1 -> 2 processes", value=s12 / 2,
                  unit="1"),
             dict(section="speedup", quantity="1 process -> 2 threads", value=s_thr, unit="x"),
             dict(section="speedup", quantity="local cluster start, 2 workers",
                  value=sp["start_2"], unit="s")]
    rows[len(rows) - 7]["quantity"] = "1 process"
    for r in over_rows:
        rows.append(dict(section="overhead", quantity=f"{r['k']} runs per task, {r['tasks']} "
                         f"tasks: wall - runs", value=r["wall"] - r["runs"], unit="s"))
    rows += [dict(section="overhead", quantity="per task (fit)", value=o, unit="s"),
             dict(section="overhead", quantity="per call (fit)", value=a, unit="s"),
             dict(section="overhead", quantity="short run (fit input)", value=c, unit="s"),
             dict(section="overhead", quantity="scheduler round trip", value=rate,
                  unit="tasks/s")]
    for r in batch_rows:
        rows.append(dict(section="batch", quantity=f"{r['how']}, chunk {r['chunk']}",
                         value=r["per_sample_us"], unit="us/sample"))
    rows += [dict(section="estimate", quantity=f"runs per task for overhead < 5 % "
                  f"(runs of {c_study * 1e3:.0f} ms)", value=k5, unit="runs"),
             dict(section="estimate", quantity=f"task rate at the scheduler, {FLEET} workers",
                  value=rate_needed, unit="tasks/s"),
             dict(section="estimate", quantity=f"throughput, {FLEET} workers", value=thr,
                  unit="runs/s")]
    write_summary(f"{stem}.csv", rows)
    write_runs(f"{stem}_runs.csv", table, result, div)
    log(f"\nwrote {stem}.csv, {stem}_runs.csv")
    if not args.no_plot:
        plot(stem, table, result, div, over_rows, o, c, s12)
        log(f"wrote {stem}.png")


if __name__ == "__main__":
    main()
