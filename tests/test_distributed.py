"""liedyn.distributed: batches over Dask arrays and Monte-Carlo studies on a
local cluster of two worker processes.

The references are in-memory computations: the batch kernels on NumPy
arrays, the single-sample functions in a loop, and the study as a plain
loop of ``liedyn.simulate`` (tests/distributed_study.py); equality is
bitwise. A worker is killed (SIGKILL of its process) in a subprocess, and
so is the client of an interrupted study before it is resumed.
"""

import importlib.util
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import liedyn as ld
from tests.helpers import ROOT, assert_close, run_python

HAVE_DASK = all(importlib.util.find_spec(m) is not None for m in ("dask", "distributed", "zarr"))
needs_dask = pytest.mark.skipif(not HAVE_DASK, reason="the dask extra is not installed")


def _same(a, b):
    """Bitwise equality of two float arrays (NaN included)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.fixture(scope="module")
def client():
    if not HAVE_DASK:
        pytest.skip("the dask extra is not installed")
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.mark.slow
def test_the_library_imports_without_dask():
    out = run_python("""
        import sys, importlib.abc
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] in ("dask", "distributed", "zarr"):
                    raise ImportError(f"blocked: {name}")
        sys.meta_path.insert(0, Block())
        import numpy as np
        import liedyn as ld
        from liedyn.examples import aerial_manipulator
        m = aerial_manipulator()
        q = np.zeros((3, 3, m.n_joints))
        res = ld.inverse_dynamics_batch(m, None, np.zeros((3, 2, 6)), q, 0)
        print(type(res.tau).__module__)
        try:
            import liedyn.distributed
        except ImportError as err:
            print("refused:", err)
    """, timeout=600)
    assert out.splitlines()[0] == "numpy"
    assert "refused: liedyn.distributed needs Dask: pip install 'liedyn[dask]'" in out


# ------------------------------------------------------------- batches --

def _motion(model, B, r, rng):
    C = np.stack([ld.se3.exp(rng.normal(size=6) * 0.5) for _ in range(B)])
    V = rng.normal(size=(B, r + 3, 6))             # one row more than read: prefixes
    q = rng.normal(size=(B, r + 4, model.n_joints))
    return C, V, q


@needs_dask
def test_dask_batches_equal_the_in_memory_batch_bitwise(client):
    import dask.array as da

    from liedyn.distributed import compute
    from liedyn.examples import aerial_manipulator
    model = aerial_manipulator()
    rng = np.random.default_rng(1)
    B, r, n, N = 37, 2, model.n_joints, model.n_bodies
    C, V, q = _motion(model, B, r, rng)
    W = rng.normal(size=(B, r + 1, N, 6))
    ref = ld.inverse_dynamics_batch(model, C, V, q, r, applied=W)
    # q in uneven chunks; the pose a NumPy array, the applied wrenches chunked otherwise
    lazy = ld.inverse_dynamics_batch(model, C, da.from_array(V, chunks=(10, 2, 6)),
                                     da.from_array(q, chunks=((5, 12, 20), r + 4, n)), r,
                                     applied=da.from_array(W, chunks=(8, r + 1, N, 6)))
    assert type(lazy) is ld.InverseDynamicsResult
    assert lazy.tau.chunks[0] == (5, 12, 20) and lazy.tau.shape == (B, r + 1, n)
    got = compute(lazy)                      # on the two worker processes
    assert _same(got.tau, ref.tau) and _same(got.base_wrench, ref.base_wrench)

    tau, Wb = rng.normal(size=(B, r + 1, n)), rng.normal(size=(B, r + 1, 6))
    fref = ld.forward_dynamics_batch(model, C[0], V[:, :1], q[:, :2], r, tau=tau, base_wrench=Wb,
                                     reference="base")
    flazy = ld.forward_dynamics_batch(model, C[0], V[:, :1], da.from_array(q, chunks=9), r,
                                      tau=tau, base_wrench=da.from_array(Wb, chunks=4),
                                      reference="base")
    assert type(flazy) is ld.ForwardDynamicsResult
    fgot = compute(flazy)
    for f in ("base_twist", "q", "base_wrench", "tau"):
        assert _same(getattr(fgot, f), getattr(fref, f)), f


@needs_dask
def test_looped_batches_equal_the_single_sample_functions_bitwise(client):
    import dask.array as da

    from liedyn.distributed import (compute, constrained_forward_dynamics_batch,
                                    constrained_inverse_dynamics_batch, hybrid_dynamics_batch)
    from liedyn.examples import aerial_manipulator
    model = aerial_manipulator()
    rng = np.random.default_rng(2)
    B, r, n = 9, 1, model.n_joints
    C, V, q = _motion(model, B, r, rng)
    tau, Wb = rng.normal(size=(B, r + 1, n)), rng.normal(size=(B, r + 1, 6))
    mask = [True, False, True, False, False, True]
    # the references first: their kernels are then in the disk cache the workers load
    ones = [ld.hybrid_dynamics(model, C[b], V[b], q[b], r, motion_driven=mask, tau=tau[b],
                               base_wrench=Wb[b]) for b in range(B)]
    res = compute(hybrid_dynamics_batch(model, da.from_array(C, chunks=4), V,
                                        da.from_array(q, chunks=4), r, motion_driven=mask,
                                        tau=tau, base_wrench=Wb))
    assert type(res) is ld.HybridDynamicsResult and list(res.motion_driven) == mask
    for b, one in enumerate(ones):
        for f in ("base_twist", "q", "base_wrench", "tau"):
            assert _same(getattr(res, f)[b], getattr(one, f)), (b, f)

    # both hands hold a bar, the robot at rest (so J ν = 0) in random configurations
    cs = ld.ConstraintSet(model, [ld.Contact3D("arm1_link3"), ld.Contact3D("arm2_link3")])
    q0 = np.zeros((B, 2, n))
    q0[:, 0] = rng.uniform(-0.5, 0.5, (B, n))
    Wt = np.zeros((B, r + 1, 6))
    Wt[:, 0, 5] = 0.8 * 9.81 * model.body_mass.sum()
    f1 = [ld.constrained_forward_dynamics(model, cs, C[b], np.zeros((1, 6)), q0[b], r,
                                          tau=np.zeros((r + 1, n)), base_wrench=Wt[b])
          for b in range(B)]
    i1 = [ld.constrained_inverse_dynamics(model, cs, C[b], f.base_twist, f.q, r,
                                          base_actuation=np.eye(6)) for b, f in enumerate(f1)]
    fwd = compute(constrained_forward_dynamics_batch(model, cs, C, np.zeros((B, 1, 6)),
                                                     da.from_array(q0, chunks=5), r,
                                                     tau=np.zeros((B, r + 1, n)), base_wrench=Wt))
    assert type(fwd) is ld.ConstrainedForwardDynamicsResult and fwd.rank.tolist() == [6] * B
    assert fwd.force_of("3d:arm2_link3").shape == (B, r + 1, 3)
    inv = compute(constrained_inverse_dynamics_batch(model, cs, C,
                                                     da.from_array(fwd.base_twist, chunks=5),
                                                     fwd.q, r, base_actuation=np.eye(6)))
    assert type(inv) is ld.ConstrainedInverseDynamicsResult
    for b in range(B):
        for f in ("base_twist", "q", "base_wrench", "tau", "force"):
            assert _same(getattr(fwd, f)[b], getattr(f1[b], f)), (b, f)
        for f in ("tau", "base_wrench", "force", "base_effort", "residual"):
            assert _same(getattr(inv, f)[b], getattr(i1[b], f)), (b, f)


@needs_dask
def test_dask_batch_arguments_are_checked_and_errors_name_the_sample():
    import dask
    import dask.array as da

    from liedyn.distributed import compute, forward_dynamics_batch
    from liedyn.examples import aerial_manipulator
    model = aerial_manipulator()
    B, r, n = 12, 0, model.n_joints
    q = da.zeros((B, 3, n), chunks=5)
    V = np.zeros((B, 2, 6))
    with pytest.raises(ValueError, match=r"q: expected shape \(B, 3, 6\) \(or more rows\)"):
        ld.inverse_dynamics_batch(model, None, V, da.zeros((B, 2, n), chunks=5), r)
    with pytest.raises(ValueError, match="base_twist: expected 12 samples"):
        ld.inverse_dynamics_batch(model, None, V[:7], q, r)
    with pytest.raises(TypeError, match="q: expected a real numeric array"):
        ld.inverse_dynamics_batch(model, None, V, da.zeros((B, 3, n), dtype=complex, chunks=5), r)
    with pytest.raises(ValueError, match="workspace: a Dask batch keeps no body jets"):
        ld.inverse_dynamics_batch(model, None, V, q, r, workspace=ld.Workspace(model, r))
    with pytest.raises(ValueError, match="base_wrench: a floating base needs"):
        forward_dynamics_batch(model, None, V, q, r, tau=np.zeros((B, 1, n)))
    bad = np.zeros((B, 3, n))
    bad[8, 0, 2] = np.nan                       # sample 8: in the second chunk (5..9)
    lazy = ld.inverse_dynamics_batch(model, None, V, da.from_array(bad, chunks=5), r)
    with pytest.raises(ValueError, match=r"^sample 8: q: contains NaN"):
        compute(lazy, scheduler="sync")
    with dask.config.set(scheduler="sync"):
        with pytest.raises(ValueError, match=r"^sample 8: q: contains NaN"):
            lazy.tau.compute()


# ---------------------------------------------------------- Monte-Carlo --

def _equal_to_serial(res, ref):
    """The gathered table is the plain loop's, bit for bit."""
    assert len(res) == len(ref)
    columns = list(ref[0][0])
    assert list(res.columns) == columns + ["failure_time"]
    for j, c in enumerate(columns):
        assert _same(res[c], np.array([r[0][c] for r in ref])), c
    assert list(res["error"]) == [r[1] for r in ref]
    assert list(res["failed"]) == [r[1] != "" for r in ref]


@needs_dask
def test_monte_carlo_on_two_workers_equals_a_serial_loop(client):
    from liedyn.distributed import monte_carlo
    from tests import distributed_study as study
    ctx = study.context()
    tab = study.table(10, seed=1, nan_at=[3, 7])
    res = monte_carlo(study.build, tab, study.HORIZON, dt=study.DT, context=ctx, client=client,
                      runs_per_task=2)
    ref = study.serial(ctx, tab)
    _equal_to_serial(res, ref)
    assert res.failed_fraction == 0.2
    assert "t = 0.02" in res["error"][3] and "tau" in res["error"][3]
    assert res["failure_time"][3] == 0.02 and np.isnan(res["failure_time"][0])
    assert res.computed.tolist() == list(range(10)) and res.loaded.size == 0
    assert len(res.tasks) == 5 and res.workers == 2 and res.where == "the cluster of 2 workers"
    # every worker process that ran a task reports its warm-up, apart from the runs
    workers = {t["worker"] for t in res.tasks}
    assert workers <= set(res.compile_seconds) and all(
        s > 0 for s in res.compile_seconds.values())
    # the summary's numbers: the last sample's joint error and the largest torque step
    _, _, traj = ref[0]
    target = study.target_of(ctx["reference"])
    e_last = np.max(np.abs(traj.q[-1, 0] - target(traj.time[-1]).q[0]))
    assert res["joint_error"][0] == e_last and res["steps"][0] == len(traj) - 1
    rate = np.max(np.abs(np.diff(traj.tau[:, 0], axis=0)) / np.diff(traj.time)[:, None])
    assert res["peak_torque_rate"][0] == rate


@pytest.mark.slow
@needs_dask
def test_a_worker_killed_during_a_run_still_gives_the_complete_equal_result(tmp_path):
    out = run_python(f"""
        import json, logging, os
        import numpy as np
        from distributed import Client, LocalCluster
        from liedyn.distributed import monte_carlo
        from tests import distributed_study as study
        marker = {str(tmp_path / "killed")!r}
        ctx = study.context(marker=marker)
        tab = study.table(12, seed=3, nan_at=[4], kill_at=7)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \\
                Client(cluster) as client:
            before = sorted(client.run(os.getpid).values())
            res = monte_carlo(study.build, tab, study.HORIZON, dt=study.DT, context=ctx,
                              client=client, runs_per_task=2)
            after = sorted(client.run(os.getpid).values())
        ref = study.serial(ctx, tab)
        cols = [c for c in ref[0][0]]
        same = all(np.array([r[0][c] for r in ref]).tobytes() == res[c].tobytes() for c in cols)
        print(json.dumps(dict(killed=int(open(marker).read()), before=before, after=after,
                              same=same, errors=list(res["error"]) == [r[1] for r in ref],
                              computed=res.computed.tolist(), failed=res["failed"].tolist(),
                              warmed=sorted(res.compile_seconds),
                              ran=sorted(set(t["worker"] for t in res.tasks)))))
    """, timeout=600)
    r = json.loads(out.splitlines()[-1])
    assert r["killed"] in r["before"] and r["killed"] not in r["after"], r
    assert r["same"] and r["errors"], r
    assert r["computed"] == list(range(12))
    assert r["failed"] == [i == 4 for i in range(12)]
    assert set(r["ran"]) <= set(r["warmed"]), r        # every process reports its warm-up


@pytest.mark.slow
@needs_dask
def test_without_a_client_a_short_study_stays_here_and_a_long_one_starts_a_local_cluster():
    out = run_python("""
        import importlib, json
        import liedyn as ld
        from tests import distributed_study as study
        mc = importlib.import_module("liedyn.distributed.monte_carlo")   # the module
        ctx, tab = study.context(), study.table(6, seed=2, nan_at=[1])
        short = mc.monte_carlo(study.build, tab, study.HORIZON, dt=study.DT, context=ctx)
        mc.CLUSTER_BREAK_EVEN = 0.0                   # as if the runs were long
        long = mc.monte_carlo(study.build, tab, study.HORIZON, dt=study.DT, context=ctx,
                              runs_per_task=1)
        ref = study.serial(ctx, tab)
        cols = list(ref[0][0])
        same = [all(r[c].tobytes() == __import__("numpy").array([x[0][c] for x in ref]).tobytes()
                    for c in cols) and list(r["error"]) == [x[1] for x in ref]
                for r in (short, long)]
        print(json.dumps(dict(short=short.where, long=long.where, same=same,
                              cores=ld.algorithm.batch.available_cores(),
                              workers=sorted({t["worker"].split(" ")[0] for t in long.tasks}))))
    """, timeout=600)
    r = json.loads(out.splitlines()[-1])
    assert r["short"] == "this process" and r["same"] == [True, True], r
    if r["cores"] > 1:
        assert r["long"] == f"a local cluster of {r['cores']} workers", r
        assert all(w.startswith("tcp://127.0.0.1") for w in r["workers"]), r


def _complete_groups(store):
    """Summary groups whose writer finished (read without opening the store
    for writing, while another process may be writing it)."""
    done = []
    for meta in (Path(store) / "summaries").glob("*/zarr.json"):
        try:
            if json.loads(meta.read_text()).get("attributes", {}).get("complete") is True:
                done.append(meta.parent.name)
        except (OSError, ValueError):
            pass
    return done


@needs_dask
def test_a_resumed_study_computes_only_the_missing_runs(client, tmp_path):
    from liedyn.distributed import monte_carlo
    from tests import distributed_study as study
    store, log = tmp_path / "study.zarr", tmp_path / "builds.txt"
    script = textwrap.dedent(f"""
        from liedyn.distributed import monte_carlo
        from tests import distributed_study as study
        tab = study.table(12, seed=5, nan_at=[2], sleep=0.3)
        monte_carlo(study.build, tab, study.HORIZON, dt=study.DT, context=study.context(),
                    client="sync", store={str(store)!r}, runs_per_task=2)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        while len(_complete_groups(store)) < 2:
            assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
            assert time.monotonic() < deadline, "the first run wrote nothing in 300 s"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)                 # the client dies mid-study
    finally:
        proc.wait(timeout=60)
        proc.stderr.close()
    seen = _complete_groups(store)
    tab = study.table(12, seed=5, nan_at=[2], sleep=0.3)
    ctx = study.context(log=str(log))
    res = monte_carlo(study.build, tab, study.HORIZON, dt=study.DT, context=ctx, client=client,
                      store=store, runs_per_task=2)
    stored = {int(g.split("+")[0]) + i for g in seen for i in range(int(g.split("+")[1]))}
    assert stored <= set(res.loaded.tolist()) and len(res.loaded) < 12
    missing = sorted(set(range(12)) - set(res.loaded.tolist()))
    assert res.computed.tolist() == missing
    built = {int(line) for line in log.read_text().split()}
    assert built == set(missing)                         # warm-ups included: only missing runs
    ref = study.serial(study.context(), study.table(12, seed=5, nan_at=[2]))   # no sleeps
    _equal_to_serial(res, ref)
    assert np.isnan(res.run_seconds[res.loaded]).all()
    # a third call finds everything in the store: nothing is built
    log.write_text("")
    again = monte_carlo(study.build, tab, study.HORIZON, dt=study.DT, context=ctx,
                        client="sync", store=store)
    assert again.computed.size == 0 and log.read_text() == ""
    _equal_to_serial(again, ref)
    # another table is refused by the store
    with pytest.raises(ValueError, match="store: .* holds another study"):
        monte_carlo(study.build, study.table(12, seed=6), study.HORIZON, dt=study.DT,
                    context=ctx, client="sync", store=store)


@needs_dask
def test_trajectories_are_stored_by_run_and_read_back(tmp_path):
    from liedyn.distributed import load_trajectory, monte_carlo
    from tests import distributed_study as study
    ctx = study.context()
    tab = study.table(3, seed=7, nan_at=[1])
    res = monte_carlo(study.build, tab, study.HORIZON, dt=study.DT, context=ctx, client="threads",
                      store=tmp_path / "s.zarr", trajectories=True, runs_per_task=1)
    ref = study.serial(ctx, tab)
    for i, (_, error, traj) in enumerate(ref):
        got = load_trajectory(tmp_path / "s.zarr", i)
        assert type(got) is ld.Trajectory and len(got) == len(traj)
        for f in ("time", "base_pose", "base_twist", "q", "extra", "tau", "base_wrench",
                  "base_acceleration", "joint_acceleration"):
            assert _same(getattr(got, f), getattr(traj, f)), (i, f)
        assert got.steps == traj.steps and got.reference == traj.reference
        assert _same(np.array(got.controls), np.array(traj.controls))
    assert len(res.trajectory(1)) < len(res.trajectory(0))       # the failed run stops early
    with pytest.raises(ValueError, match="run: no trajectory of run 5"):
        load_trajectory(tmp_path / "s.zarr", 5)


@needs_dask
def test_monte_carlo_arguments_are_checked(tmp_path):
    from liedyn.distributed import Run, monte_carlo
    from tests import distributed_study as study
    tab, ctx = study.table(2), study.context()

    def call(**kw):
        args = dict(build=study.build, table=tab, duration=0.01, dt=5e-3, context=ctx,
                    client="sync")
        args.update(kw)
        return monte_carlo(args.pop("build"), args.pop("table"), args.pop("duration"), **args)

    with pytest.raises(TypeError, match="build: expected a callable"):
        call(build=3)
    with pytest.raises(TypeError, match="table: expected a non-empty dict of columns"):
        call(table=[1, 2])
    with pytest.raises(ValueError, match="table: column 'b' has 3 rows, the first column 2"):
        call(table={"a": np.zeros(2), "b": np.zeros(3)})
    with pytest.raises(ValueError, match="table: the column name 'run' is taken"):
        call(table={"run": np.zeros(2)})
    with pytest.raises(ValueError, match="dt: expected a positive step"):
        call(dt=0.0)
    with pytest.raises(TypeError, match="monte_carlo: unexpected keyword 'controller'"):
        call(controller=None)
    with pytest.raises(ValueError, match="client: expected a dask.distributed.Client"):
        call(client="processes")
    with pytest.raises(TypeError, match="client: expected a dask.distributed.Client"):
        call(client=4)
    with pytest.raises(ValueError, match="trajectories: writing trajectories needs store="):
        call(trajectories=True)
    with pytest.raises(ValueError, match="runs_per_task: expected an int"):
        call(runs_per_task=0)
    with pytest.raises(TypeError, match="build: expected a liedyn.distributed.Run"):
        call(build=lambda c, r: None)
    with pytest.raises(ZeroDivisionError) as info:     # not recorded: stops, naming the run
        call(build=lambda c, r: Run(ctx["model"], 1 / 0 if r["run"] == 1 else ld.State()))
    assert "in run 1" in "".join(getattr(info.value, "__notes__", []))
    with pytest.raises(ValueError, match="summary: every run must give the same columns"):
        call(build=lambda c, r: Run(c["model"], ld.State(), target=r["run"]),
             summary=lambda run, traj: {"a": 1.0} if run.target == 0 else {"b": 1.0})


def test_scaled_model_scales_masses_and_inertias():
    pytest.importorskip("dask")
    from liedyn.distributed import scaled_model
    from liedyn.examples import aerial_manipulator
    model = aerial_manipulator()
    same = scaled_model(model)
    for f in ("body_mass", "body_com", "body_rot_inertia", "body_inertia", "joint_screw"):
        assert _same(getattr(same, f), getattr(model, f)), f
    N = model.n_bodies
    fm = np.linspace(0.9, 1.1, N)
    m2 = scaled_model(model, mass=fm, inertia=2.0)
    assert_close(m2.body_mass, model.body_mass * fm, 1e-15, 0.0, "mass")
    assert_close(m2.body_rot_inertia, model.body_rot_inertia * 2.0, 1e-15, 0.0, "inertia")
    assert _same(m2.body_com, model.body_com)
    # at rest, the base wrench holds the weight: linear in the masses, blind to inertias
    q = np.zeros((3, model.n_joints))
    V = np.zeros((2, 6))
    W = ld.inverse_dynamics(scaled_model(model, mass=3.0, inertia=0.5), None, V, q, 0).base_wrench
    W1 = ld.inverse_dynamics(model, None, V, q, 0).base_wrench
    assert_close(W, 3.0 * W1, 1e-13, 1e-12, "weight")
    with pytest.raises(ValueError, match=r"mass: expected a number or shape \(7,\)"):
        scaled_model(model, mass=np.ones(3))
    with pytest.raises(ValueError, match="inertia: expected positive finite factors"):
        scaled_model(model, inertia=-1.0)


def test_a_constraint_set_survives_pickling():
    import pickle

    from liedyn.examples import aerial_manipulator
    model = aerial_manipulator()
    q0 = np.zeros((2, model.n_joints))
    q0[0] = [0.3, 0.5, 0.2, -0.3, 0.5, 0.2]
    cs = ld.ConstraintSet(model, [ld.Contact6D("arm1_link3"), ld.Contact1D("arm2_link3",
                                  normal=[0, 0, 1])]).anchored(None, q0[0])
    back = pickle.loads(pickle.dumps(cs))
    assert back.names == cs.names and back.rows == cs.rows and back.n_rows == cs.n_rows
    for a, b in zip(back.data, cs.data):
        assert _same(a, b) and not b.flags.writeable and not a.flags.writeable
    with pytest.raises(AttributeError, match="frozen"):
        back.names = ()
    W = np.zeros((2, 6))
    W[0, 5] = 30.0
    args = (None, np.zeros((1, 6)), q0, 1)
    kw = dict(tau=np.zeros((2, model.n_joints)), base_wrench=W, baumgarte=(1.0, 2.0))
    f1 = ld.constrained_forward_dynamics(model, cs, *args, **kw)
    f2 = ld.constrained_forward_dynamics(back.model, back, *args, **kw)
    assert _same(f1.force, f2.force) and _same(f1.q, f2.q)



@needs_dask
def test_the_compiled_batch_layer_refuses_dask_arrays_the_public_one_routes_them():
    """``algorithm.batch`` sits below ``distributed`` and does not import it: a
    Dask array there would be computed whole by ``np.asarray``, so it is
    refused; ``liedyn.inverse_dynamics_batch`` routes it to the Dask batch."""
    import dask.array as da

    from liedyn.algorithm import batch as core
    from liedyn.examples import aerial_manipulator
    model = aerial_manipulator()
    rng = np.random.default_rng(2)
    B, n = 6, model.n_joints
    C, V, q = _motion(model, B, 0, rng)
    with pytest.raises(TypeError, match="Dask array.*liedyn.inverse_dynamics_batch"):
        core.inverse_dynamics_batch(model, C, V, da.from_array(q, chunks=(3, 4, n)), 0)
    with pytest.raises(TypeError, match="Dask array"):
        core.forward_dynamics_batch(model, C, V, q, 0, tau=da.zeros((B, 1, n), chunks=3),
                                    base_wrench=np.zeros((B, 1, 6)))
    lazy = ld.inverse_dynamics_batch(model, C, V, da.from_array(q, chunks=(3, 4, n)), 0)
    assert isinstance(lazy.tau, da.Array)
    ref = np.array([ld.inverse_dynamics(model, C[b], V[b], q[b], 0).tau for b in range(B)])
    np.testing.assert_allclose(lazy.tau.compute(), ref, rtol=1e-12, atol=1e-9)
