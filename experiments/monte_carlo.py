"""Monte-Carlo of the elastic-joint exact linearization on the aerial
manipulator, run as Dask tasks (:func:`liedyn.distributed.monte_carlo`).

    python -m experiments.monte_carlo            # quick: 300 runs of 0.4 s, dt = 5 ms
    python -m experiments.monte_carlo --full     # 10⁴ runs of 1 s, dt = 5 ms

The law is :class:`liedyn.control.ElasticJointLaw` (inverse dynamics of
order 2 per stage) on the nominal model, poles ``POLES`` scaled per run,
tracking the reference motion of SPEC §8. Each run draws (uniformly, seed
``SEED``):

* a start off the reference: joints moved by ``δq ∈ [−0.3, 0.3]`` rad each,
  the base by ``exp(δ)`` with ``δ ∈ [−0.1, 0.1]`` (rad, m) per component,
  the actuator state consistent for the nominal model (``state_on``);
* model errors of the plant up to ±10 %: a level ``s ∈ [0, 0.1]``, then each
  body's mass and rotational inertia, each joint's stiffness ``K`` and motor
  inertia ``B`` scaled by a factor in ``[1 − s, 1 + s]`` (the law keeps the
  nominal values), so the study also shows how divergence grows with ``s``;
* gains: every pole scaled by ``[0.8, 1.25]``.

A run **diverges** when the simulation stops (:class:`liedyn.SimulationError`:
a state entry beyond ``DIVERGENCE``, or a failure of the dynamics) or ends
with a joint error above ``LOST`` (1 rad, three times the largest start
offset). The law has no integral action, so a model error leaves a steady
error (1 % on the base mass alone: about 0.1 rad at the joints) and the
final errors measure the model errors as much as the transient. Quick
mode's horizon (0.4 s, two time constants of the slowest nominal pole)
and its 300 runs (60 per fifth of the model-error range) keep the study
within about ten seconds on two idle cores, mid-transient; ``--full`` (10⁴ runs
of 1 s) shows them nearer where they settle. A step of 5 ms gives
the same outcomes as 1 ms (checked on the first ten runs: the same runs
stop, the others' final errors agree to three digits).

Measured on this machine, in the same run:

* **the study** on a local cluster of one worker process per core (the
  default of ``monte_carlo``): the distribution of the final joint and base
  errors and the fraction that diverge;
* **speed-up**: the same ``speedup_runs`` runs on a local cluster of 1 and
  of 2 worker processes (both open) and on Dask's threaded scheduler with 2
  threads (processes or threads: the decision ``monte_carlo``'s default
  follows), the three alternated ``SPEEDUP_REPEAT`` times, so that each
  alternation is a set of paired runs that shared the machine's load. Each
  speed-up is the **median of the per-alternation ratios** ``T₁ / T₂`` and
  ``T₁ / T_threads``, with its quartiles (:func:`speedup_stats`; the times
  written are the medians of each); efficiency = ``T₁ / (2 T₂)``. The CPU
  share inside the tasks (CPU time over wall time, ``s``) tells how much of
  a core each worker had, and ``T₁ s₁ / (2 T₂ s₂)``, again a median of
  per-alternation values, is the efficiency with each time scaled to a
  whole core per worker. The 1-minute load average before and after the
  alternations is recorded beside the ratios (``load1_before``,
  ``load1_after``, ``cores``), and a run whose load or ratio spread breaks
  the rule of :func:`experiments._timing.unreliable` says that its
  speed-ups are unreliable;
* **per-task overhead against task size**: ``overhead_runs`` short runs on
  one worker with 1 to 48 runs per task; the time outside the runs,
  ``wall − Σ run``, fitted as ``a + o · tasks`` gives the per-task overhead
  ``o``, and its share ``o / (o + k c)`` for ``k`` runs of ``c`` seconds;
* **Dask-array batches**: inverse dynamics of order 2 on ``batch_samples``
  samples, in memory against Dask arrays of several chunk sizes on the
  threaded scheduler and on the 2-process cluster (inputs already on the
  workers), each checked bitwise against the in-memory batch;
* **on paper**: for 100 workers, the runs per task that keep the overhead
  under 5 % (``o / (o + k c) < 0.05``) and the scheduler, at the measured
  cost of an empty task, at most half busy, and the throughput that gives.

Writes to ``paper_figures/`` (``--out DIR`` for another folder; ``_full``
names with ``--full``): ``monte_carlo.csv`` (the measurements, one row per
quantity; a paired ratio with ``q1``, ``q3`` and the load columns), ``monte_carlo_runs.csv`` (one row per run) and
``monte_carlo.png``. ``--store DIR`` keeps the study's Zarr store there
(a rerun then computes only the runs it lacks; ``--trajectories`` writes
every run's trajectory too); without it the store is a temporary folder.
"""

import argparse
import contextlib
import csv
import math
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import liedyn as ld
from liedyn import control, se3
from liedyn.distributed.monte_carlo import CLUSTER_BREAK_EVEN
from experiments._progress import progress as bar, stage
from experiments._table import output_stem
from experiments._timing import (LOAD_FIELDS, load_columns, machine_load, paired_stats,
                                 reliability_note, unreliable)

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
QUICK = dict(runs=300, horizon=0.4, dt=5e-3, speedup_runs=16, overhead_runs=48,
             batch_samples=5000)
FULL = dict(runs=10000, horizon=1.0, dt=5e-3, speedup_runs=200, overhead_runs=128,
            batch_samples=100000)
SPEEDUP_TASK = 4                      # runs per task of the speed-up measurement
SPEEDUP_REPEAT = 3                    # alternations of 1 worker, 2 workers and threads
OVERHEAD_HORIZON = 0.02               # s: the short runs of the overhead sweep (4 steps)
TASK_SIZES = (1, 2, 4, 8, 16, 48)
LEVEL_BINS = 5
BATCH_ORDER = 2
BATCH_CHUNKS = (500, 2000, 10000)
FLEET = 100                           # workers of the estimate on paper
OVERHEAD_TARGET = 0.05


# --------------------------------------------------------------- the study --

def perturbations(runs, seed=SEED, n=6, N=7):
    """The table: one row per run. Each run's model-error level ``s`` is
    drawn in ``[0, MODEL_ERROR]`` and each of its factors in ``[1 − s, 1 + s]``."""
    rng = np.random.default_rng(seed)
    level = rng.uniform(0.0, MODEL_ERROR, runs)

    def factors(cols):
        return 1.0 + level[:, None] * rng.uniform(-1.0, 1.0, (runs, cols))
    return {"delta_q": rng.uniform(-DELTA_Q, DELTA_Q, (runs, n)),
            "delta_base": rng.uniform(-DELTA_BASE, DELTA_BASE, (runs, 6)),
            "model_error": level, "mass": factors(N), "inertia": factors(N),
            "stiffness": factors(n), "motor_inertia": factors(n),
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

@contextlib.contextmanager
def local_cluster(workers):
    """A local cluster of ``workers`` single-threaded worker processes, and its client."""
    import logging

    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        yield client


def best_time(f, repeat):
    """The least wall time of ``repeat`` calls (the least disturbed by other
    load), and that call's value."""
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = f()
        t = time.perf_counter() - t0
        if best is None or t < best[0]:
            best = (t, value)
    return best


def cpu_share(result):
    """CPU time over wall time inside the tasks: 1 when each worker had a
    core to itself, less when other processes (or the GIL) took turns."""
    wall = sum(t["seconds"] for t in result.tasks)
    return sum(t["cpu_seconds"] for t in result.tasks) / wall if wall > 0 else math.nan


def overhead_sweep(cfg, client, log):
    """Per-task overhead on one worker: rows ``(runs per task, tasks, wall,
    Σ run seconds)`` and the fit ``wall − Σ run = a + o · tasks``."""
    R = cfg["overhead_runs"]
    run_study(2, OVERHEAD_HORIZON, cfg["dt"], client=client, runs_per_task=1)
    rows = []
    for k in TASK_SIZES:
        t0 = time.perf_counter()
        res = run_study(R, OVERHEAD_HORIZON, cfg["dt"], client=client, runs_per_task=k)
        wall = time.perf_counter() - t0
        inside = float(np.nansum(res.run_seconds))
        rows.append(dict(k=k, tasks=len(res.tasks), wall=wall, runs=inside))
        log(f"  {k:>3} runs per task: {len(res.tasks):>3} tasks, wall {wall:.3f} s, "
            f"in the runs {inside:.3f} s")
    tasks = np.array([r["tasks"] for r in rows], float)
    outside = np.array([r["wall"] - r["runs"] for r in rows])
    (a, o), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(tasks), tasks]), outside,
                                 rcond=None)
    c = float(np.mean([r["runs"] for r in rows]) / R)
    return rows, float(a), float(o), c


def _noop(x):
    return x


def scheduler_rate(client, n=400):
    """Empty tasks per second through ``client``: the scheduler's and the
    workers' round trip with nothing to compute."""
    client.gather(client.map(_noop, range(20), pure=False))
    t0 = time.perf_counter()
    client.gather(client.map(_noop, range(n), pure=False))
    return n / (time.perf_counter() - t0)


def batch_inputs(cfg):
    model = context()[0]
    B, r = cfg["batch_samples"], BATCH_ORDER
    rng = np.random.default_rng(1)
    C = np.broadcast_to(model.home_pose, (B, 4, 4)).copy()
    return model, C, rng.normal(size=(B, r + 2, 6)), rng.normal(size=(B, r + 3, model.n_joints))


def batch_timing(model, C, V, q, client=None):
    """Inverse dynamics on B samples: in memory, and as Dask arrays of
    ``BATCH_CHUNKS`` on the threaded scheduler or (``client``) on the
    cluster, with the inputs already in the workers' memory. The Dask
    results are checked bitwise against the in-memory batch."""
    import dask
    import dask.array as da

    from liedyn.distributed import compute
    r, B = BATCH_ORDER, q.shape[0]
    ref = ld.inverse_dynamics_batch(model, C, V, q, r)
    rows = []
    if client is None:
        rows.append(dict(how=f"in memory, {ld.algorithm.batch.available_cores()} threads", chunk=B,
                         seconds=best_time(lambda: ld.inverse_dynamics_batch(model, C, V, q, r),
                                           3)[0]))
    for chunk in BATCH_CHUNKS:
        arrays = [da.from_array(x, chunks=(chunk,) + x.shape[1:]) for x in (C, V, q)]
        if client is not None:                 # the inputs go to the workers once, untimed
            from distributed import wait
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)      # "sending a large graph"
                arrays = client.persist(arrays)
            wait(arrays)
        lazy = ld.inverse_dynamics_batch(model, *arrays, r)
        how = "Dask array, threads" if client is None else \
            f"Dask array, {len(client.scheduler_info()['workers'])} processes"
        # the threaded scheduler, or the client (the default one while it is open)
        with dask.config.set(scheduler="threads") if client is None else contextlib.nullcontext():
            got = compute(lazy)
            rows.append(dict(how=how, chunk=chunk, seconds=best_time(lambda: compute(lazy), 3)[0]))
        if got.tau.tobytes() != ref.tau.tobytes() or \
                got.base_wrench.tobytes() != ref.base_wrench.tobytes():
            raise AssertionError(f"{how}, chunk {chunk}: differs from the in-memory batch")
    for row in rows:
        row["per_sample_us"] = row["seconds"] / B * 1e6
    return rows


def timed_runs(cfg, client):
    """``(wall time, CPU share)`` of ``speedup_runs`` runs on ``client``."""
    t0 = time.perf_counter()
    res = run_study(cfg["speedup_runs"], cfg["horizon"], cfg["dt"], client=client,
                    runs_per_task=SPEEDUP_TASK)
    return time.perf_counter() - t0, cpu_share(res)


SPEEDUP_KEYS = ("T1", "cpu1", "T2", "cpu2", "Tthreads", "cpu_threads")


def speedup_stats(samples):
    """The speed-ups of ``samples``, one dict per alternation with the wall
    times and CPU shares of its runs on 1 and 2 worker processes and on
    threads (:data:`SPEEDUP_KEYS`): the median of each time and share, and
    the :func:`experiments._timing.paired_stats` over the alternations of
    ``T1 / T2`` (``s12``), ``T1 / Tthreads`` (``s_threads``) and
    ``T1 s1 / (2 T2 s2)`` (``eff_cpu``); ``ratios`` the per-pair ``T1 / T2``."""
    x = {k: np.array([p[k] for p in samples], float) for k in SPEEDUP_KEYS}
    out = {k: float(np.median(v)) for k, v in x.items()}
    out["s12"] = paired_stats(x["T1"], x["T2"])
    out["s_threads"] = paired_stats(x["T1"], x["Tthreads"])
    out["eff_cpu"] = paired_stats(x["T1"] * x["cpu1"], 2.0 * x["T2"] * x["cpu2"])
    out["ratios"] = list(x["T1"] / x["T2"])
    return out


def measure(cfg, log, progress=True):
    """Speed-up (1 and 2 worker processes and threads alternated
    ``SPEEDUP_REPEAT`` times, both clusters open, so that the load of the
    shared machine falls alike on the runs of one alternation;
    :func:`speedup_stats`, between two load readings), per-task overhead,
    batches and the scheduler's task rate."""
    out = dict(load=[machine_load()["load1"]])
    cores = ld.algorithm.batch.available_cores()
    model, C, V, q = batch_inputs(cfg)
    stage("monte_carlo: starting local clusters of 1 and 2 worker processes",
          disable=not progress)
    with local_cluster(1) as one:
        t0 = time.perf_counter()
        with local_cluster(2) as two:
            out["start2"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            run_study(2, cfg["horizon"], cfg["dt"], client=two, runs_per_task=1)
            out["first2"] = time.perf_counter() - t0
            for client in (one, "threads"):               # kernels loaded before timing
                run_study(2, cfg["horizon"], cfg["dt"], client=client, runs_per_task=1)
            before = machine_load()
            samples = [dict(zip(SPEEDUP_KEYS, (*timed_runs(cfg, one), *timed_runs(cfg, two),
                                               *timed_runs(cfg, "threads"))))
                       for _ in bar(range(SPEEDUP_REPEAT), desc="monte_carlo: speed-up, "
                                    "alternations of 1 process, 2 processes and threads",
                                    disable=not progress)]
            out["speedup_load"] = load_columns(before, machine_load())
            out |= speedup_stats(samples)
            log(f"  {cfg['speedup_runs']} runs on 1 worker process: {out['T1']:.2f} s (CPU share "
                f"in the tasks {out['cpu1']:.2f}); on 2: {out['T2']:.2f} s (CPU share "
                f"{out['cpu2']:.2f}); on Dask's threaded scheduler ({cores} threads): "
                f"{out['Tthreads']:.2f} s (CPU share {out['cpu_threads']:.2f}); medians of "
                f"{SPEEDUP_REPEAT} alternations, pairwise ratios T1/T2 "
                f"{', '.join(f'{x:.2f}' for x in out['ratios'])}")
            out["load"].append(machine_load()["load1"])
            stage("monte_carlo: Dask-array batches on the 2-process cluster",
                  disable=not progress)
            out["batch"] = batch_timing(model, C, V, q, two)
            out["rate2"] = scheduler_rate(two)
        log(f"Per-task overhead (one worker, runs of {OVERHEAD_HORIZON:g} s):")
        out["overhead"] = overhead_sweep(cfg, one, log)
        out["rate1"] = scheduler_rate(one)
    out["load"].append(machine_load()["load1"])
    stage("monte_carlo: in-memory and threaded Dask-array batches", disable=not progress)
    out["batch"] = batch_timing(model, C, V, q) + out["batch"]
    out["load"].append(machine_load()["load1"])
    return out


def estimate(c, o, rate):
    """On paper, ``FLEET`` workers running runs of ``c`` seconds with a
    per-task overhead ``o``, the scheduler taking ``1/rate`` per task:
    ``(k, task rate, runs/s)`` for the runs per task that keep the overhead
    under ``OVERHEAD_TARGET`` and the scheduler at most half busy."""
    k_over = math.ceil((1.0 - OVERHEAD_TARGET) / OVERHEAD_TARGET * o / c)
    k_sched = math.ceil((2.0 * FLEET / rate - o) / c)
    k = max(1, k_over, k_sched)
    return k, k_over, k_sched, FLEET / (k * c + o), FLEET * k / (k * c + o)


# -------------------------------------------------------------- writing --

def quantiles(x):
    x = x[np.isfinite(x)]
    if not x.size:
        return dict.fromkeys(("p05", "p50", "p95", "max"), math.nan)
    return dict(zip(("p05", "p50", "p95", "max"),
                    (float(v) for v in np.quantile(x, [0.05, 0.5, 0.95, 1.0]))))


def write_runs(path, table, result, div):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["run", "model_error", "max_abs_delta_q", "gain", "failed", "diverged",
                    "joint_error", "base_error", "peak_torque_rate", "error"])
        for i in range(len(result)):
            w.writerow([i, f"{table['model_error'][i]:.4f}",
                        f"{np.max(np.abs(table['delta_q'][i])):.4e}", f"{table['gain'][i]:.4f}",
                        int(result["failed"][i]), int(div[i]), f"{result['joint_error'][i]:.4e}",
                        f"{result['base_error'][i]:.4e}",
                        f"{result['peak_torque_rate'][i]:.4e}", result["error"][i]])


SUMMARY_FIELDS = ["section", "quantity", "value", "unit", "q1", "q3", *LOAD_FIELDS]


def write_summary(path, rows):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, SUMMARY_FIELDS, restval="")
        w.writeheader()
        for r in rows:
            w.writerow({k: f"{v:.6g}" if isinstance(v, float) else v for k, v in r.items()})


def paired_rows(stats, load, rows):
    """Summary rows of paired statistics (``speedup`` section): ``rows``
    maps a quantity to ``(key of stats, scale, unit)``; each row has the
    median (times ``scale``), its quartiles and the ``load`` columns."""
    return [dict(section="speedup", quantity=q, value=stats[k]["median"] * f,
                 q1=stats[k]["q1"] * f, q3=stats[k]["q3"] * f, unit=unit, **load)
            for q, (k, f, unit) in rows.items()]


def divergence_by_level(table, div, bins=LEVEL_BINS):
    """``(bin centres, fraction diverged, runs)`` over the model-error level."""
    edges = np.linspace(0.0, MODEL_ERROR, bins + 1)
    idx = np.clip(np.digitize(table["model_error"], edges) - 1, 0, bins - 1)
    counts = np.bincount(idx, minlength=bins)
    frac = np.bincount(idx, weights=div.astype(float), minlength=bins) / np.maximum(counts, 1)
    return 0.5 * (edges[1:] + edges[:-1]), frac, counts


def plot(stem, table, result, div, over, speed, efficiency, horizon):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, a, o, c = over
    fig, axes = plt.subplots(1, 3, figsize=(15.5, 4.4))
    ok = ~div
    for key, color, label in (("joint_error", "C0", r"joints $\max_j |q_j - q_{d,j}|$ (rad)"),
                              ("base_error", "C1", r"base $\|\log(C_d^{-1} C_0)\|$")):
        x = result[key][ok & np.isfinite(result[key])]
        if x.size:
            bins = np.logspace(np.log10(max(x.min(), 1e-12)), np.log10(x.max()) + 1e-9, 40)
            axes[0].hist(x, bins=bins, color=color, alpha=0.6, label=label)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("final tracking error of the runs that do not diverge")
    axes[0].set_ylabel("runs")
    axes[0].set_title(f"{len(result)} runs of {horizon:g} s: {np.mean(div):.1%} diverge "
                      f"({np.mean(result['failed']):.1%} stopped by the simulator)", fontsize=10)
    axes[0].legend(fontsize=8)
    centres, frac, counts = divergence_by_level(table, div)
    axes[1].bar(centres * 100.0, frac * 100.0, width=0.8 * MODEL_ERROR * 100.0 / len(centres),
                color="C3", alpha=0.7, label="diverged (%)")
    axes[1].set_xlabel("model-error level s (%): every mass, inertia, K, B within ±s")
    axes[1].set_ylabel("runs that diverge (%)")
    twin = axes[1].twinx()
    lev = table["model_error"] * 100.0
    twin.scatter(lev[ok], result["joint_error"][ok], s=3, alpha=0.4, color="C0")
    twin.set_yscale("log")
    twin.set_ylabel("final joint error, converging runs (rad)", color="C0")
    axes[1].set_title("divergence and final error against the model error", fontsize=10)
    k = np.array([r["k"] for r in rows], float)
    axes[2].semilogx(k, o / (o + k * c) * 100.0, "o-",
                     label=f"o / (o + k c): o = {o * 1e3:.2f} ms, c = {c * 1e3:.1f} ms")
    o_k = np.array([(r["wall"] - r["runs"] - a) / r["tasks"] for r in rows])
    axes[2].semilogx(k, o_k / (o_k + k * c) * 100.0, "s", mfc="none",
                     label=f"measured: o_k = (wall − runs − a) / tasks, a = {a * 1e3:.0f} ms "
                           f"per call")
    axes[2].axhline(OVERHEAD_TARGET * 100.0, color="k", ls="--", lw=1, label="5 %")
    axes[2].set_xlabel("runs per task k")
    axes[2].set_ylabel("per-task overhead, share of a task (%)")
    axes[2].set_title(f"one worker; 1→2 workers ×{speed:.2f} (efficiency {efficiency:.0%})",
                      fontsize=10)
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
    cores = ld.algorithm.batch.available_cores()

    def log(text):
        print(text, flush=True)

    tmp = None
    store = args.store
    if store is None:
        tmp = tempfile.mkdtemp(prefix="liedyn-monte-carlo-")
        store = Path(tmp) / "study.zarr"
    load0 = machine_load()["load1"]
    try:
        log(f"Study: {cfg['runs']} runs of {cfg['horizon']:g} s, dt = {cfg['dt']:g} s, on a "
            f"local cluster of {cores} worker processes (load average {load0:.1f})")
        t0 = time.perf_counter()
        result = run_study(cfg["runs"], cfg["horizon"], cfg["dt"], store=store,
                           trajectories=args.trajectories, progress=not args.no_progress)
        study_wall = time.perf_counter() - t0
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    table = perturbations(cfg["runs"])
    div = diverged(result)
    warm = list(result.compile_seconds.values())
    c_study = float(np.nanmean(result.run_seconds)) if len(result.computed) else math.nan
    log(f"  {len(result.computed)} computed, {len(result.loaded)} read from the store, in "
        f"{study_wall:.1f} s on {result.where}; warm-up (kernels compiled or loaded) per "
        f"process {', '.join(f'{s:.1f}' for s in warm)} s, apart from the runs ({c_study * 1e3:.0f} ms "
        f"each on average)")
    log(f"  {np.mean(div):.1%} diverge ({np.mean(result['failed']):.1%} stopped by the "
        f"simulator, the rest more than {LOST:g} rad off at the end)")
    centres, frac, counts = divergence_by_level(table, div)
    log("  diverged by model-error level: " + ", ".join(
        f"{100 * (cc - 0.5 * MODEL_ERROR / len(centres)):.0f}-"
        f"{100 * (cc + 0.5 * MODEL_ERROR / len(centres)):.0f} %: {f:.0%}"
        for cc, f in zip(centres, frac)))
    jq, bq = quantiles(result["joint_error"][~div]), quantiles(result["base_error"][~div])
    log(f"  final error of the runs that do not diverge: joints median {jq['p50']:.3e} rad, "
        f"95 % {jq['p95']:.3e}; base median {bq['p50']:.3e}, 95 % {bq['p95']:.3e}")

    log("Speed-up:")
    m = measure(cfg, log, progress=not args.no_progress)
    s12, s_thr, eff_cpu = (m[k]["median"] for k in ("s12", "s_threads", "eff_cpu"))
    rows_o, a, o, c = m["overhead"]
    log(f"  1 → 2 worker processes: ×{s12:.2f} (IQR {m['s12']['q1']:.2f}–{m['s12']['q3']:.2f}; "
        f"efficiency {s12 / 2:.0%}; {eff_cpu:.0%} with each time scaled by the CPU share its "
        f"workers got); 1 process → {cores} threads: ×{s_thr:.2f} (IQR "
        f"{m['s_threads']['q1']:.2f}–{m['s_threads']['q3']:.2f}); medians of the ratios of "
        f"{SPEEDUP_REPEAT} alternated runs")
    load = m["speedup_load"]
    log(f"  1-minute load average {load['load1_before']:.2f} before the alternations, "
        f"{load['load1_after']:.2f} after ({load['cores']} cores)")
    note = reliability_note(unreliable(
        load["load1_before"], load["load1_after"], load["cores"],
        {"1 -> 2 processes": m["s12"]["spread"],
         f"1 process -> {cores} threads": m["s_threads"]["spread"]}), "speed-ups")
    if note:
        log(f"  {note}")
    log(f"  per-task overhead (fit): {o * 1e3:.2f} ms per task + {a * 1e3:.0f} ms per call "
        f"(runs of {c * 1e3:.1f} ms); empty tasks: {m['rate1']:.0f}/s on 1 worker, "
        f"{m['rate2']:.0f}/s on 2")
    log(f"Dask-array batches (inverse dynamics of order {BATCH_ORDER}, "
        f"{cfg['batch_samples']} samples):")
    for row in m["batch"]:
        log(f"  {row['how']:<30} chunk {row['chunk']:>6}: {row['seconds'] * 1e3:8.1f} ms, "
            f"{row['per_sample_us']:.2f} µs per sample")
    log(f"  a local cluster of 2 workers: started in {m['start2']:.1f} s, its first two-run "
        f"call (kernels loaded in each worker) {m['first2']:.1f} s; monte_carlo's default "
        f"stays in this process below {CLUSTER_BREAK_EVEN:g} s of serial work")
    log(f"  load average during the measurements: "
        f"{', '.join(f'{x:.1f}' for x in m['load'])} (on {cores} cores)")
    c_run = c_study if np.isfinite(c_study) else c
    k, k_over, k_sched, task_rate, thr = estimate(c_run, o, m["rate2"])
    log(f"On paper, {FLEET} workers and runs of {c_run * 1e3:.0f} ms: the overhead stays under "
        f"{OVERHEAD_TARGET:.0%} from k = {k_over} runs per task, the scheduler (here "
        f"{1e3 / m['rate2']:.2f} ms per task) stays half idle from k = {k_sched}; with k = {k} "
        f"the scheduler sees {task_rate:.0f} tasks/s and the fleet does {thr:.0f} runs/s "
        f"({thr * 3600:.3g} per hour)")

    rows = [dict(section="study", quantity="runs", value=len(result), unit="runs"),
            dict(section="study", quantity="horizon", value=cfg["horizon"], unit="s"),
            dict(section="study", quantity="dt", value=cfg["dt"], unit="s"),
            dict(section="study", quantity="diverged fraction", value=float(np.mean(div)),
                 unit="1"),
            dict(section="study", quantity="stopped by the simulator",
                 value=float(np.mean(result["failed"])), unit="1"),
            dict(section="study", quantity="wall time", value=study_wall, unit="s"),
            dict(section="study", quantity="warm-up per process (largest)",
                 value=max(warm, default=math.nan), unit="s"),
            dict(section="study", quantity="mean run time", value=c_run, unit="s"),
            dict(section="study", quantity="load average at the start", value=load0, unit="1")]
    for cc, f, n in zip(centres, frac, counts):
        rows.append(dict(section="study", quantity=f"diverged, model error "
                         f"{100 * (cc - 0.5 * MODEL_ERROR / len(centres)):.0f}-"
                         f"{100 * (cc + 0.5 * MODEL_ERROR / len(centres)):.0f} % ({n} runs)",
                         value=float(f), unit="1"))
    for name, qs, unit in (("final joint error", jq, "rad"), ("final base error", bq, "rad, m")):
        rows += [dict(section="study", quantity=f"{name} {key} (not diverged)", value=v,
                      unit=unit) for key, v in qs.items()]
    rows += [dict(section="speedup", quantity=f"{cfg['speedup_runs']} runs, 1 process",
                  value=m["T1"], unit="s"),
             dict(section="speedup", quantity="2 processes", value=m["T2"], unit="s"),
             dict(section="speedup", quantity=f"{cores} threads", value=m["Tthreads"], unit="s"),
             *paired_rows(m, load, {
                 "1 -> 2 processes": ("s12", 1.0, "x"),
                 "efficiency 1 -> 2 processes": ("s12", 0.5, "1"),
                 "efficiency at the CPU share each got, T1 s1 / (2 T2 s2)": ("eff_cpu", 1.0, "1"),
                 f"1 process -> {cores} threads": ("s_threads", 1.0, "x")}),
             dict(section="speedup", quantity="CPU share in the tasks, 1 process",
                  value=m["cpu1"], unit="1"),
             dict(section="speedup", quantity="CPU share in the tasks, 2 processes",
                  value=m["cpu2"], unit="1"),
             dict(section="speedup", quantity=f"CPU share in the tasks, {cores} threads",
                  value=m["cpu_threads"], unit="1"),
             dict(section="speedup", quantity="local cluster start, 2 workers",
                  value=m["start2"], unit="s"),
             dict(section="speedup", quantity="first call on it (kernels loaded)",
                  value=m["first2"], unit="s"),
             dict(section="speedup", quantity="pairwise ratios T1/T2",
                  value=" ".join(f"{x:.3f}" for x in m["ratios"]), unit="x"),
             dict(section="speedup", quantity="load average (start, after the speed-up, "
                  "after the overhead sweep, end)",
                  value=" ".join(f"{x:.1f}" for x in m["load"]), unit="1")]
    for r in rows_o:
        rows.append(dict(section="overhead", quantity=f"{r['k']} runs per task ({r['tasks']} "
                         f"tasks): wall - runs", value=r["wall"] - r["runs"], unit="s"))
    rows += [dict(section="overhead", quantity="per task (fit)", value=o, unit="s"),
             dict(section="overhead", quantity="per call (fit)", value=a, unit="s"),
             dict(section="overhead", quantity="short run", value=c, unit="s"),
             dict(section="overhead", quantity="empty tasks, 1 worker", value=m["rate1"],
                  unit="tasks/s"),
             dict(section="overhead", quantity="empty tasks, 2 workers", value=m["rate2"],
                  unit="tasks/s")]
    for r in m["batch"]:
        rows.append(dict(section="batch", quantity=f"{r['how']}, chunk {r['chunk']}",
                         value=r["per_sample_us"], unit="us/sample"))
    rows += [dict(section="estimate", quantity=f"runs per task, overhead < 5 % (runs of "
                  f"{c_run * 1e3:.0f} ms)", value=k_over, unit="runs"),
             dict(section="estimate", quantity=f"runs per task, scheduler half idle, {FLEET} "
                  f"workers", value=k_sched, unit="runs"),
             dict(section="estimate", quantity=f"task rate at the scheduler, {FLEET} workers, "
                  f"k = {k}", value=task_rate, unit="tasks/s"),
             dict(section="estimate", quantity=f"throughput, {FLEET} workers, k = {k}",
                  value=thr, unit="runs/s")]
    write_summary(f"{stem}.csv", rows)
    write_runs(f"{stem}_runs.csv", table, result, div)
    log(f"\nwrote {stem}.csv, {stem}_runs.csv")
    if not args.no_plot:
        plot(stem, table, result, div, m["overhead"], s12, s12 / 2, cfg["horizon"])
        log(f"wrote {stem}.png")


if __name__ == "__main__":
    main()
