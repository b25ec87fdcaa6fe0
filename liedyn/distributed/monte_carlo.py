"""Monte-Carlo studies of simulations as Dask tasks.

:func:`monte_carlo` runs :func:`liedyn.simulate` once per row of a table of
perturbations (start states, model parameters, gains: whatever ``build``
reads from a row), ``runs_per_task`` runs to a task, and gathers one row of
summaries per run (by default :func:`tracking_summary`: tracking errors,
peak torque and torque rate) with the text of any
:class:`liedyn.SimulationError`. With ``store=`` every finished task's
summaries (and, with ``trajectories=True``, every run's full trajectory) are
written to a Zarr store keyed by run index, so a rerun after an interruption
computes only what is missing.

Where the runs go (``client=``)
-------------------------------
* ``None`` (default): the active ``dask.distributed`` client if there is one,
  else a local cluster started for the call, one worker process per
  available core, one thread each, closed at the end; it listens on
  127.0.0.1 only, without a dashboard unless ``dashboard=True``. Processes, not
  threads: a simulation with a controller returns to Python at every stage,
  so threads take turns on the GIL (``experiments/monte_carlo.py`` measures
  both). Where processes cost more than they bring, the runs go in this
  process: on one core, or when the study's serial time, estimated from a
  warm-up here, is below ``CLUSTER_BREAK_EVEN`` seconds (what starting the
  workers costs, twice).
* a ``dask.distributed.Client``: any Dask cluster, local or not (Slurm and
  PBS through ``dask-jobqueue``, Kubernetes through ``dask-kubernetes`` or
  the Dask Helm chart; see the README). Workers must be able to import
  liedyn and the module that defines ``build``; with ``store=`` they must
  reach the store's path.
* ``"threads"`` or ``"sync"``: Dask's local threaded or synchronous
  scheduler in this process, no cluster.

What is sent where: ``context`` (the nominal model, a reference motion,
anything ``build`` needs besides the row) and the table travel once to
each worker as one key of the graph, and a task carries only its run
indices. Kernels compile (or load from the shared disk cache, see
:mod:`liedyn._jit`) once per worker process: one worker warms up first, so
on one machine the kernels are compiled once and the other workers load
them, and every worker process reports its warm-up time
(:attr:`MonteCarloResult.compile_seconds`) apart from the runs' time.

Nothing lost: a task whose worker dies is rerun by Dask on another worker
(up to the cluster's ``distributed.scheduler.allowed-failures``), a task
that raises is retried ``retries`` times; every run is deterministic, so the
gathered table equals a serial loop exactly, however the runs were spread.
"""

import dataclasses
import hashlib
import inspect
import json
import math
import os
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from ..spatial import se3
from .._checks import check_scalar
from ..algorithm.batch import available_cores
from ..multibody.model import Model, check_model
from .. import SimulationError, State, simulate
from . import _store

__all__ = ["monte_carlo", "Run", "MonteCarloResult", "tracking_summary", "scaled_model",
           "load_trajectory"]

# Keywords of liedyn.simulate a study may set for every run (all but what a
# run or the study sets itself).
_SIMULATE_OPTIONS = tuple(
    k for k, p in inspect.signature(simulate).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
    and k not in ("dt", "controller", "plant", "progress"))
# Columns every table has besides the summary's.
_FRAMEWORK_COLUMNS = ("failure_time",)
_TASKS_PER_WORKER = 8       # default runs_per_task: about this many tasks per worker
# Seconds of serial work below which client=None runs a study in this process
# rather than start a local cluster: starting two worker processes and loading
# the kernels in them costs 3-5 s on two cores, which two workers repay once
# the runs take about twice that (experiments/monte_carlo.py measures both).
CLUSTER_BREAK_EVEN = 8.0
# The only address a local cluster started here listens on.
LOOPBACK = "127.0.0.1"


class Run(NamedTuple):
    """What ``build(context, row)`` returns: one simulation of the study.

    Attributes
    ----------
    model : Model
        The model simulated (the plant: a perturbed model, say).
    state0 : State
    controller, plant : callable, optional
        As :func:`liedyn.simulate`.
    target : callable ``target(t) -> liedyn.control.Target``, optional
        The motion tracked, read by :func:`tracking_summary`.
    """

    model: Model
    state0: State
    controller: Any = None
    plant: Any = None
    target: Any = None


# -------------------------------------------------------------- summaries --

def tracking_summary(run, traj):
    """The default per-run summary.

    Parameters
    ----------
    run : Run
    traj : Trajectory or None
        The run's trajectory (after a failure: up to the last completed step).

    Returns
    -------
    dict of float
        ``joint_error``, ``base_error``: at the last sample,
        ``max_j |q_j − q_d,j|`` and ``‖log(C_d⁻¹ C₀)‖`` (rad and m mixed, as
        :func:`liedyn.control.base_error`; NaN for a fixed base or without
        ``run.target``); ``peak_joint_error``, ``peak_base_error``: their
        largest values over the samples; ``peak_torque``: ``max |τ|``;
        ``peak_torque_rate``: the largest ``|Δτ/Δt|`` between consecutive
        samples; ``end_time`` and ``steps`` of the trajectory.
    """
    out = dict.fromkeys(("joint_error", "base_error", "peak_joint_error", "peak_base_error",
                         "peak_torque", "peak_torque_rate", "end_time", "steps"), math.nan)
    if traj is None or len(traj) == 0:
        return out
    t = traj.time
    out["end_time"] = float(t[-1])
    out["steps"] = float(traj.steps)
    tau = traj.tau[:, 0]
    if tau.shape[1]:
        out["peak_torque"] = float(np.max(np.abs(tau)))
        if len(t) > 1:
            rate = np.abs(np.diff(tau, axis=0)) / np.diff(t)[:, None]
            out["peak_torque_rate"] = float(np.max(rate))
    if run.target is None:
        return out
    eq = np.empty(len(t))
    eb = np.full(len(t), math.nan)
    floating = run.model.floating_base
    for k, tk in enumerate(t):
        target = run.target(float(tk))
        eq[k] = np.max(np.abs(traj.q[k, 0] - np.asarray(target.q)[0])) if tau.shape[1] else 0.0
        if floating and target.base_pose is not None:
            eb[k] = np.linalg.norm(se3.log(se3.inv(np.asarray(target.base_pose))
                                          @ traj.base_pose[k]))
    out["joint_error"], out["peak_joint_error"] = float(eq[-1]), float(np.max(eq))
    if floating:
        out["base_error"], out["peak_base_error"] = float(eb[-1]), float(np.max(eb))
    return out


def _summary_values(values, columns, summary):
    """A summary's dict as floats in ``columns`` order (the first run's keys
    when ``columns`` is None)."""
    if not isinstance(values, Mapping):
        raise TypeError(f"summary: expected a dict of numbers from {_name(summary)}, got "
                        f"{type(values).__name__}")
    keys = tuple(values)
    if columns is None:
        for k in keys:
            if not isinstance(k, str):
                raise TypeError(f"summary: column names must be str, got {k!r}")
            if k in _FRAMEWORK_COLUMNS or k in ("failed", "error"):
                raise ValueError(f"summary: the column name {k!r} is taken by monte_carlo")
        columns = keys
    elif keys != columns:
        raise ValueError(f"summary: every run must give the same columns in the same order; "
                         f"got {list(keys)}, expected {list(columns)}")
    try:
        row = np.array([float(values[k]) for k in columns], dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"summary: expected a number per column ({err})") from None
    return columns, row


# ------------------------------------------------------------ the study --

def _name(f):
    return f"{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', type(f).__name__)}"


class _Study:
    """Everything a task needs, sent once per worker."""

    def __init__(self, build, context, summary, table, duration, dt, options, record, store,
                 trajectories):
        self.build, self.context, self.summary = build, context, summary
        self.table, self.duration, self.dt, self.options = table, duration, dt, options
        self.record, self.store, self.trajectories = record, store, trajectories
        self.token = uuid.uuid4().hex

    def row(self, i):
        row = {k: v[i] for k, v in self.table.items()}
        row["run"] = i
        return row

    def spec(self, i):
        spec = self.build(self.context, self.row(i))
        if not isinstance(spec, Run):
            raise TypeError(f"build: expected a liedyn.distributed.Run from {_name(self.build)}, "
                            f"got {type(spec).__name__}")
        return spec

    def simulate(self, spec, duration):
        """``(trajectory, error text, failure time)``; exceptions of the
        recorded types are failures of the run."""
        try:
            traj = simulate(spec.model, spec.state0, duration, dt=self.dt,
                            controller=spec.controller, plant=spec.plant, **self.options)
            return traj, "", math.nan
        except self.record as err:
            text = str(err) if isinstance(err, SimulationError) else \
                f"{type(err).__name__}: {err}"
            return getattr(err, "trajectory", None), text, float(getattr(err, "time", math.nan))


_WARM = {}                  # study token -> warm-up seconds, per process
_WARM_LOCK = threading.Lock()


def _where():
    """This process as the study reports it: the worker's address, or the pid."""
    try:
        from distributed import get_worker
        return f"{get_worker().address} (pid {os.getpid()})"
    except (ImportError, ValueError):
        return f"local (pid {os.getpid()})"


def _warm(study, run):
    """Build run ``run`` and simulate two steps of it, once per process, so
    that every kernel the study uses is compiled or loaded: this process's
    warm-up seconds (measured the first time)."""
    with _WARM_LOCK:
        seconds = _WARM.get(study.token)
        if seconds is None:
            t0 = time.perf_counter()
            try:
                spec = study.spec(run)
                traj, _, _ = study.simulate(spec, min(study.duration, 2.0 * study.dt))
                study.summary(spec, traj)
            except BaseException as err:
                err.add_note(f"liedyn.distributed.monte_carlo: warming up on run {run}")
                raise
            seconds = _WARM[study.token] = time.perf_counter() - t0
        return seconds


def _execute(study, i, columns):
    """One run: ``(columns, values (C,), error text, seconds)``."""
    t0 = time.perf_counter()
    try:
        spec = study.spec(i)
        traj, error, failed_at = study.simulate(spec, study.duration)
        columns, row = _summary_values(study.summary(spec, traj), columns, study.summary)
        if study.trajectories:
            _store.write_trajectory(study.store, i, traj, error)
    except BaseException as err:
        err.add_note(f"liedyn.distributed.monte_carlo: in run {i}")
        raise
    return columns, np.append(row, failed_at), error, time.perf_counter() - t0


def _task(study, runs):
    """The runs ``runs`` in turn; their summaries written to the store (if
    any) and returned."""
    warm = _warm(study, runs[0])
    t0, cpu0 = time.perf_counter(), time.thread_time()
    columns, values, errors, seconds = None, [], [], []
    for i in runs:
        columns, row, error, sec = _execute(study, i, columns)
        values.append(row)
        errors.append(error)
        seconds.append(sec)
    columns = columns + _FRAMEWORK_COLUMNS
    if study.store is not None:
        _store.write_summaries(study.store, runs, columns, values, errors)
    return dict(runs=list(runs), columns=columns, values=np.array(values), errors=errors,
                seconds=np.array(seconds), warm=warm, worker=_where(),
                task_seconds=time.perf_counter() - t0, cpu_seconds=time.thread_time() - cpu0)


def _serial_estimate(study, run):
    """Seconds one run of the study takes in this process, estimated after
    warming up here (which also fills the disk cache the workers load): one
    build plus two steps, scaled to the horizon."""
    _warm(study, run)
    t0 = time.perf_counter()
    spec = study.spec(run)
    t1 = time.perf_counter()
    short = min(study.duration, 2.0 * study.dt)
    study.simulate(spec, short)
    steps = max(1.0, study.duration / study.dt)
    return (t1 - t0) + (time.perf_counter() - t1) * steps / max(1.0, short / study.dt)


def _warm_task(study, run):
    return _warm(study, run), _where()


def _identity(x):
    return x


# ------------------------------------------------------------- schedulers --

class _Progress:
    """Finished tasks on stderr: tqdm when installed, else a rewritten line."""

    def __init__(self, total, on):
        self.total, self.done, self.bar, self.on = total, 0, None, on and total > 0
        if self.on:
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, unit="task", desc="monte_carlo", file=sys.stderr)
            except ImportError:
                pass

    def update(self):
        self.done += 1
        if not self.on:
            return
        if self.bar is not None:
            self.bar.update(1)
        else:
            print(f"\rmonte_carlo: {self.done}/{self.total} tasks", end="", file=sys.stderr,
                  flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()
        elif self.on:
            print(file=sys.stderr)


def _local_cluster(dashboard=False):
    """A local cluster, one single-threaded worker process per available core.

    Every listener (scheduler, workers, nannies, the dashboard when asked
    for) is bound to 127.0.0.1: the cluster serves this machine only, and the
    dashboard, which has no authentication, is off unless ``dashboard``."""
    import logging

    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=available_cores(), threads_per_worker=1, processes=True,
                           host=LOOPBACK, dashboard_address=f"{LOOPBACK}:0",
                           scheduler_kwargs={"dashboard": bool(dashboard)},
                           worker_dashboard_address=None, silence_logs=logging.ERROR)
    if dashboard:
        print(f"monte_carlo: dashboard at {cluster.dashboard_link}", file=sys.stderr, flush=True)
    return cluster, Client(cluster)


def _default_client():
    """The active ``dask.distributed`` client, or ``None``."""
    try:
        from distributed import default_client
        return default_client()
    except (ImportError, ValueError):
        return None


def _resolve(client):
    """``(kind, client or scheduler name)``."""
    if client is None:
        active = _default_client()
        if active is not None:
            return "distributed", active
        return ("local", "sync") if available_cores() == 1 else ("cluster", None)
    if isinstance(client, str):
        name = {"sync": "sync", "synchronous": "sync", "threads": "threads"}.get(client)
        if name is None:
            raise ValueError(f"client: expected a dask.distributed.Client, None, 'threads' or "
                             f"'sync', got {client!r}")
        return "local", name
    try:
        from distributed import Client
    except ImportError:                                  # pragma: no cover
        Client = ()
    if not isinstance(client, Client):
        raise TypeError(f"client: expected a dask.distributed.Client, None, 'threads' or "
                        f"'sync', got {type(client).__name__}")
    return "distributed", client


def _workers(kind, client):
    if kind == "distributed":
        return max(1, len(client.scheduler_info().get("workers", {})))
    return available_cores() if client == "threads" else 1


def _run_distributed(client, study, tasks, retries, progress):
    """Every task on the cluster: one warm-up first, then the rest as
    workers free up; the records in the order they finish."""
    from distributed import as_completed
    study_key = client.submit(_identity, study, pure=False, key=f"liedyn-study-{study.token}")
    client.replicate([study_key])        # on every worker: a worker's death loses no copy
    warm = client.submit(_warm_task, study_key, tasks[0][0], pure=False, retries=retries,
                         key=f"liedyn-warm-{study.token}").result()
    futures = [client.submit(_task, study_key, runs, pure=False, retries=retries,
                             key=f"liedyn-runs-{study.token}-{runs[0]}+{len(runs)}")
               for runs in tasks]
    bar = _Progress(len(futures), progress)
    records = []
    try:
        for fut in as_completed(futures):
            records.append(fut.result())
            bar.update()
    except BaseException:
        client.cancel(futures)
        raise
    finally:
        bar.close()
        del study_key
    return records, warm


def _run_local(name, study, tasks, progress):
    import dask
    warm = (_warm(study, tasks[0][0]), _where())
    parts = [dask.delayed(_task, pure=False)(study, runs) for runs in tasks]
    if progress:
        from dask.diagnostics import ProgressBar
        with ProgressBar(out=sys.stderr):
            records = dask.compute(*parts, scheduler=name)
    else:
        records = dask.compute(*parts, scheduler=name)
    return list(records), warm


# ---------------------------------------------------------------- results --

class MonteCarloResult:
    """What :func:`monte_carlo` gathered.

    Attributes
    ----------
    table : dict of (R,) arrays
        One entry per summary column (float64), then ``failure_time``
        (NaN for a run that did not fail), ``failed`` (bool) and ``error``
        (the :class:`liedyn.SimulationError` text, ``""`` for a run that did
        not fail); row ``i`` is run ``i``. ``result[name]`` is
        ``result.table[name]``.
    columns : tuple of str
        The float columns, in order.
    computed, loaded : (k,) int64
        The runs this call computed, and those it read from the store.
    compile_seconds : dict
        Per process that ran runs (a worker's address and pid, or ``local``
        and the pid; without ``client=``, also this process, which warms up
        first to decide where the runs go): the time its first build and two
        simulation steps took, which compiles the kernels or loads them from
        the disk cache; apart from ``run_seconds``.
    run_seconds : (R,) float64
        Each computed run's build, simulation and summary time (NaN for a
        run read from the store).
    wall_seconds : float
        The whole call, cluster start-up included.
    tasks : list of dict
        Per task: ``runs`` (how many), ``seconds`` (wall time inside the task),
        ``cpu_seconds`` (CPU time of the thread that ran it: below ``seconds``
        when the core was shared), ``worker``.
    workers : int
        Workers the runs were spread over.
    where : str or None
        Where they ran: ``"a local cluster of 2 workers"``, ``"this process"``,
        … (``None``: nothing was computed).
    store : str or None
    """

    def __init__(self, **fields):
        for k, v in fields.items():
            setattr(self, k, v)

    def __getitem__(self, name):
        return self.table[name]

    def __len__(self):
        return len(self.table["failed"])

    @property
    def failed_fraction(self):
        """The fraction of runs that stopped with a recorded error."""
        return float(np.mean(self.table["failed"]))

    def trajectory(self, run):
        """The stored :class:`liedyn.Trajectory` of ``run`` (``trajectories=True``)."""
        if self.store is None:
            raise ValueError("run: this study kept no trajectories (pass store= and "
                             "trajectories=True)")
        return load_trajectory(self.store, run)

    def __repr__(self):
        return (f"MonteCarloResult({len(self)} runs, {int(np.sum(self.table['failed']))} failed, "
                f"{len(self.computed)} computed, {len(self.loaded)} loaded, "
                f"columns={list(self.columns)})")


def load_trajectory(store, run):
    """The :class:`liedyn.Trajectory` of run ``run`` from a study's store
    (written with ``trajectories=True``). ``controls`` holds the controller
    outputs when they were arrays of one shape, else ``None``; a constrained
    run's ``constraints`` is ``None`` (the set is the study's ``constraints=``
    option), its force and residual arrays are stored."""
    return _store.read_trajectory(store, run)


# --------------------------------------------------------------- checking --

def _check_table(table):
    """``(columns {name: array}, R)``: a mapping of equal-length columns."""
    if not isinstance(table, Mapping) or not table:
        raise TypeError(f"table: expected a non-empty dict of columns (name -> array with one "
                        f"row per run), got {type(table).__name__}")
    out, R = {}, None
    for k, v in table.items():
        if not isinstance(k, str):
            raise TypeError(f"table: column names must be str, got {k!r}")
        if k == "run":
            raise ValueError("table: the column name 'run' is taken (build's row carries the "
                             "run index under it)")
        a = np.asarray(v)
        if a.ndim == 0:
            raise ValueError(f"table: column {k!r} must have one row per run, got a scalar")
        if a.dtype.kind not in "biufU":
            raise TypeError(f"table: column {k!r} must be numeric, bool or str, got dtype "
                            f"{a.dtype}")
        if R is None:
            R = a.shape[0]
        elif a.shape[0] != R:
            raise ValueError(f"table: column {k!r} has {a.shape[0]} rows, the first column "
                             f"{R}")
        a = a.copy()
        a.setflags(write=False)
        out[k] = a
    if R == 0:
        raise ValueError("table: has no rows (no runs)")
    return out, R


def _fingerprint(table, duration, dt, options, build, summary, trajectories, record):
    h = hashlib.sha256()
    for k in sorted(table):
        a = np.ascontiguousarray(table[k])
        h.update(json.dumps([k, a.dtype.str, a.shape]).encode())
        h.update(a.tobytes())
    desc = dict(runs=int(next(iter(table.values())).shape[0]), columns=sorted(table),
                duration=duration, dt=dt, options=repr(sorted(options.items())),
                build=_name(build), summary=_name(summary), trajectories=trajectories,
                record=[_name(r) for r in record])
    h.update(json.dumps(desc, sort_keys=True).encode())
    desc["fingerprint"] = h.hexdigest()
    return desc


def _check_options(options):
    for k in options:
        if k not in _SIMULATE_OPTIONS:
            raise TypeError(f"monte_carlo: unexpected keyword {k!r} (simulate options: "
                            f"{', '.join(_SIMULATE_OPTIONS)})")
    return dict(options)


def _check_record(record):
    if isinstance(record, type):
        record = (record,)
    record = tuple(record)
    if not record or not all(isinstance(r, type) and issubclass(r, Exception) for r in record):
        raise TypeError(f"record: expected exception types, got {record!r}")
    return record


def _positive_int(x, name, allow_none=True, minimum=1):
    if x is None and allow_none:
        return None
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)) or x < minimum:
        raise ValueError(f"{name}: expected an int ≥ {minimum}, got {x!r}")
    return int(x)


# ------------------------------------------------------------------- entry --

def monte_carlo(build, table, duration, *, dt, context=None, summary=None, client=None,
                store=None, trajectories=False, runs_per_task=None, retries=2,
                record=(SimulationError,), progress=False, dashboard=False, **options):
    """Simulate every row of a perturbation table as Dask tasks and gather
    per-run summaries.

    Parameters
    ----------
    build : callable ``build(context, row) -> Run``
        Makes run ``row["run"]`` from the shared ``context`` and its row (a
        dict: the table's entries for that run and ``"run"``, its index):
        the simulated model (e.g. :func:`scaled_model` of the nominal one),
        the start state, the controller and plant, the reference. Called on
        the workers; must be importable there (a module-level function).
        Must be deterministic: a run may be computed twice (a retry).
    table : dict of arrays
        The perturbations, one row per run: ``{"delta_q": (R, n),
        "mass_scale": (R, N), "gain": (R,), …}``; numeric, bool or str columns.
    duration : float ≥ 0
    dt : float > 0, keyword
        As :func:`liedyn.simulate`, for every run.
    context : object, optional, keyword
        What every run shares (the nominal model, a reference motion),
        picklable; sent once per worker.
    summary : callable ``summary(run, traj) -> dict of float``, optional, keyword
        Per-run summary (default :func:`tracking_summary`); ``traj`` is the
        trajectory (up to the failure for a failed run; ``None`` if the
        failure left none). Every run must return the same keys.
    client : None, dask.distributed.Client, "threads" or "sync", keyword
        Where the runs go (module docstring; default: the active client,
        else a local cluster of one worker process per core).
    store : path, optional, keyword
        A Zarr store (folder) for the summaries of finished tasks and, with
        ``trajectories``, each run's trajectory. Runs already in it are read
        back, not computed; a store holding another study (another table,
        horizon, step, options, build or summary name) is refused.
    trajectories : bool, keyword
        Write every run's full trajectory to ``store`` (read back with
        :func:`load_trajectory`).
    runs_per_task : int, optional, keyword
        Runs per Dask task (default: about eight tasks per worker). A task
        costs the scheduler a few milliseconds (``experiments/monte_carlo.py``
        measures it); make it hold enough runs for that to be small.
    retries : int ≥ 0, keyword
        Reruns of a task that raised (a worker's death is handled by Dask
        whatever this is).
    record : exception type or tuple, keyword
        Exceptions of a run recorded as its failure (default
        :class:`liedyn.SimulationError`); any other exception stops the study
        (after ``retries``), naming the run.
    progress : bool, keyword
        Finished tasks on stderr.
    dashboard : bool, keyword
        Serve Dask's dashboard (no authentication) on 127.0.0.1 at a free
        port, its address printed on stderr, while a local cluster started
        for the call runs. Off by default; a cluster started here binds
        every listener to 127.0.0.1 either way. Not read with ``client=``
        (that cluster's own settings apply) or when the runs stay here.
    **options
        Keywords of :func:`liedyn.simulate` for every run (``control_rate``,
        ``adaptive``, ``rtol``, ``atol``, ``min_step``, ``max_step``,
        ``reference``, ``t0``, ``divergence``, …: every keyword but ``dt``,
        ``controller``, ``plant`` and ``progress``).

    Returns
    -------
    MonteCarloResult

    Raises
    ------
    ValueError, TypeError
        Bad arguments, naming them; a store holding another study.
    Exception
        An exception of a run that is not recorded, with a note naming the run.
    """
    wall = time.perf_counter()
    if not callable(build):
        raise TypeError(f"build: expected a callable build(context, row) -> Run, got "
                        f"{type(build).__name__}")
    summary = tracking_summary if summary is None else summary
    if not callable(summary):
        raise TypeError(f"summary: expected a callable summary(run, traj) -> dict, got "
                        f"{type(summary).__name__}")
    columns_in, R = _check_table(table)
    duration = check_scalar(duration, "duration", nonneg=True)
    dt = check_scalar(dt, "dt")
    if not dt > 0.0:
        raise ValueError(f"dt: expected a positive step, got {dt}")
    options = _check_options(options)
    record = _check_record(record)
    runs_per_task = _positive_int(runs_per_task, "runs_per_task")
    retries = _positive_int(retries, "retries", allow_none=False, minimum=0)
    if not isinstance(trajectories, (bool, np.bool_)):
        raise TypeError(f"trajectories: expected a bool, got {type(trajectories).__name__}")
    if trajectories and store is None:
        raise ValueError("trajectories: writing trajectories needs store= (a Zarr folder)")
    if not isinstance(dashboard, (bool, np.bool_)):
        raise TypeError(f"dashboard: expected a bool, got {type(dashboard).__name__}")
    kind, target = _resolve(client)
    path = None if store is None else os.fspath(store)

    done, columns = {}, None
    if path is not None:
        _store.prepare(path, _fingerprint(columns_in, duration, dt, options, build, summary,
                                          bool(trajectories), record))
        done, columns = _store.finished(path)
    missing = [i for i in range(R) if i not in done]
    study = _Study(build, context, summary, columns_in, duration, dt, options, record, path,
                   bool(trajectories))

    records, warm, workers, where, here = [], None, 0, None, None
    if missing:
        owned = None
        if kind == "cluster":
            serial = _serial_estimate(study, missing[0]) * len(missing)
            here = (_WARM[study.token], _where())       # the warm-up that decided
            if serial <= CLUSTER_BREAK_EVEN:
                kind, target = "local", "sync"
            else:
                owned, target = _local_cluster(bool(dashboard))
                kind = "distributed"
        try:
            workers = _workers(kind, target)
            k = runs_per_task or max(1, math.ceil(len(missing) / (_TASKS_PER_WORKER * workers)))
            tasks = [missing[j:j + k] for j in range(0, len(missing), k)]
            if kind == "distributed":
                records, warm = _run_distributed(target, study, tasks, retries, progress)
                where = ("a local cluster" if owned is not None else "the cluster") + \
                    f" of {workers} worker{'s' if workers > 1 else ''}"
            else:
                records, warm = _run_local(target, study, tasks, progress)
                where = {"sync": "this process", "threads": "Dask's threaded scheduler"}[target]
        finally:
            if owned is not None:
                target.close()
                owned.close()

    for rec in records:
        if columns is None:
            columns = tuple(rec["columns"])
        elif tuple(rec["columns"]) != tuple(columns):
            raise ValueError(f"summary: every run must give the same columns in the same "
                             f"order; got {list(rec['columns'])} and {list(columns)}")
    columns = tuple(columns)
    values = np.full((R, len(columns)), math.nan)
    errors = [""] * R
    run_seconds = np.full(R, math.nan)
    for run, (v, e) in done.items():
        if run < R:
            values[run], errors[run] = v, e
    compile_seconds, tasks_info = {}, []
    if here is not None:
        compile_seconds[here[1]] = here[0]
    if warm is not None:
        compile_seconds[warm[1]] = warm[0]
    for rec in records:
        idx = np.asarray(rec["runs"])
        values[idx] = rec["values"]
        run_seconds[idx] = rec["seconds"]
        for i, e in zip(rec["runs"], rec["errors"]):
            errors[i] = e
        compile_seconds.setdefault(rec["worker"], rec["warm"])
        tasks_info.append(dict(runs=len(idx), seconds=rec["task_seconds"],
                               cpu_seconds=rec["cpu_seconds"], worker=rec["worker"]))
    tab = {c: values[:, j].copy() for j, c in enumerate(columns)}
    err = np.array(errors, dtype=object)
    tab["failed"] = np.array([e != "" for e in errors], dtype=bool)
    tab["error"] = err
    computed = np.array(sorted(missing), dtype=np.int64)
    loaded = np.array(sorted(set(range(R)) - set(missing)), dtype=np.int64)
    return MonteCarloResult(table=tab, columns=columns, computed=computed, loaded=loaded,
                            compile_seconds=compile_seconds, run_seconds=run_seconds,
                            wall_seconds=time.perf_counter() - wall, tasks=tasks_info,
                            workers=workers, where=where, store=path)


# ------------------------------------------------------------ perturbation --

def _factors(x, name, N):
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0:
        a = np.full(N, float(a))
    if a.shape != (N,):
        raise ValueError(f"{name}: expected a number or shape ({N},) (one factor per body), "
                         f"got {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a <= 0.0):
        raise ValueError(f"{name}: expected positive finite factors, got {a}")
    return a


def scaled_model(model, *, mass=1.0, inertia=1.0):
    """``model`` with each body's mass and rotational inertia scaled: a model
    error for a Monte-Carlo study.

    Parameters
    ----------
    model : Model
    mass, inertia : float or (N,), keyword
        Positive factors on each body's mass ``m_j`` and rotational inertia
        about its centre of mass (centres of mass, joints, frames unchanged).

    Returns
    -------
    Model
        A new model (factors of one give the same numbers as ``model``).
    """
    check_model(model)
    N = model.n_bodies
    fm, fi = _factors(mass, "mass", N), _factors(inertia, "inertia", N)
    floating, gravity, bodies, frames = model._spec
    bodies = tuple(dataclasses.replace(b, mass=b.mass * fm[j], rot_inertia=b.rot_inertia * fi[j])
                   for j, b in enumerate(bodies))
    return Model._pack(floating, gravity, bodies, frames)
