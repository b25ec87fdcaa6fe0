"""Workspaces: reusing scratch gives the same numbers as fresh scratch; a
workspace serves only its own (model, order) and one call at a time; results
own their outputs and refuse to hand out body jets a later call overwrote;
the compiled kernels neither recompile across calls and orders nor allocate
once their scratch is given."""

import threading

import numpy as np
import pytest

import liedyn
from models.trees import random_tree
from tests.helpers import run_python


def test_workspace_results_equal_fresh_results():
    rng = np.random.default_rng(80)
    model = random_tree(rng, 8, armature=True, damping=True)
    r = 3
    ws = liedyn.Workspace(model, r)
    for _ in range(3):     # stale contents from an earlier call must not leak in
        C0 = liedyn.se3.exp(rng.normal(size=6))
        Vb = rng.normal(size=(r + 2, 6))
        q = rng.normal(size=(r + 3, model.n_joints))
        a = liedyn.inverse_dynamics(model, C0, Vb, q, r)
        b = liedyn.inverse_dynamics(model, C0, Vb, q, r, workspace=ws)
        assert np.array_equal(b.tau, a.tau) and np.array_equal(b.base_wrench, a.base_wrench)
        assert np.array_equal(b.twist, a.twist) and np.array_equal(b.wrench, a.wrench)
        kw = dict(tau=a.tau, base_wrench=a.base_wrench)
        f = liedyn.forward_dynamics(model, C0, Vb[:1], q[:2], r, **kw)
        g = liedyn.forward_dynamics(model, C0, Vb[:1], q[:2], r, **kw, workspace=ws)
        assert np.array_equal(g.q, f.q) and np.array_equal(g.base_twist, f.base_twist)
        assert np.array_equal(g.articulated_inertia, f.articulated_inertia)


def test_workspace_is_tied_to_model_and_order():
    """Another model of the same shape, another order, a batch workspace, or
    something else entirely: refused before any kernel runs."""
    rng = np.random.default_rng(81)
    model = random_tree(rng, 4)
    other = random_tree(rng, 4)
    ws = liedyn.Workspace(model, 2)
    Vb = np.zeros((4, 6))
    q = np.zeros((5, 3))
    with pytest.raises(ValueError, match="^workspace: built for Model"):
        liedyn.inverse_dynamics(other, None, Vb, q, 2, workspace=ws)
    with pytest.raises(ValueError, match="^workspace: built for Model"):
        liedyn.inverse_dynamics(model, None, Vb[:3], q[:4], 1, workspace=ws)
    with pytest.raises(ValueError, match="^workspace: built for Model"):
        liedyn.forward_dynamics(other, None, Vb[:1], q[:2], 2, tau=np.zeros((3, 3)),
                                base_wrench=np.zeros((3, 6)), workspace=ws)
    with pytest.raises(ValueError, match="^workspace: expected a single-call workspace"):
        liedyn.inverse_dynamics(model, None, Vb, q, 2,
                                workspace=liedyn.Workspace(model, 2, samples=3))
    with pytest.raises(TypeError, match="^workspace: expected a liedyn.Workspace"):
        liedyn.inverse_dynamics(model, None, Vb, q, 2, workspace=object())
    with pytest.raises(TypeError, match="^model: expected a liedyn.Model"):
        liedyn.Workspace("model", 2)
    with pytest.raises(ValueError, match="^samples:"):
        liedyn.Workspace(model, 2, samples=0)


def test_a_builder_that_grows_cannot_corrupt_a_workspace():
    """The reported corruption: a workspace made for a model, then a body
    added. Bodies now go to the builder; the model built before is
    untouched, the model built after gets a clear error with the old
    workspace (torques off by 1e231, aborts, segfaults and a 10-minute spin
    before). In a subprocess, so a crash fails this test instead of the run."""
    out = run_python("""
        import numpy as np
        import liedyn
        from liedyn import ModelBuilder, Revolute, se3
        I = se3.spatial_inertia(1.0, (0, 0, -0.1), np.diag([0.01, 0.01, 0.02]))
        b = ModelBuilder()
        b.add_body("base", None, None, None, I)
        b.add_body("l1", 0, Revolute((0, 1, 0)), None, I)
        m = b.build()
        ws = liedyn.Workspace(m, 2)
        for k in range(40):
            b.add_body(f"x{k}", k + 1, Revolute((1, 0, 0)), None, I)
        big = b.build()
        V = np.zeros((4, 6)); q = np.zeros((5, big.n_joints))
        calls = [
            lambda: liedyn.inverse_dynamics(big, None, V, q, 2, workspace=ws),
            lambda: liedyn.forward_dynamics(big, None, V[:1], q[:2], 2, tau=q[:3],
                                            base_wrench=V[:3], workspace=ws),
            lambda: liedyn.hybrid_dynamics(big, None, V, q, 2, motion_driven=[], tau=q[:3],
                                           base_wrench=V[:3], workspace=ws),
        ]
        for call in calls:
            try:
                call()
            except ValueError as err:
                assert str(err).startswith("workspace: built for Model"), err
            else:
                raise SystemExit("no error")
        assert not hasattr(m, "add_body") and m.n_bodies == 2
        small = liedyn.inverse_dynamics(m, None, V, q[:, :1], 2, workspace=ws)
        print("ok", float(abs(small.tau).max()))
    """, timeout=300)
    assert out.startswith("ok")


def test_results_own_their_jets_and_refuse_body_jets_a_later_call_overwrote():
    """A result's force and motion jets are its own read-only arrays: a later
    call on the same workspace leaves them (and arrays taken from them)
    unchanged. Its body jets stay in the workspace: those read before the
    workspace is reused are kept (copies), the others raise instead of
    returning the later call's numbers. Without a workspace a result never
    expires."""
    rng = np.random.default_rng(82)
    model = random_tree(rng, 6)
    r = 2
    ws = liedyn.Workspace(model, r)
    V1, q1 = rng.normal(size=(r + 2, 6)), rng.normal(size=(r + 3, model.n_joints))
    V2, q2 = rng.normal(size=(r + 2, 6)), rng.normal(size=(r + 3, model.n_joints))
    ref1 = liedyn.inverse_dynamics(model, None, V1, q1, r)
    ref2 = liedyn.inverse_dynamics(model, None, V2, q2, r)
    first = liedyn.inverse_dynamics(model, None, V1, q1, r, workspace=ws)
    tau_first = first.tau
    assert np.array_equal(first.tau, ref1.tau)
    twist = first.twist                       # read before the workspace is reused: kept
    second = liedyn.inverse_dynamics(model, None, V2, q2, r, workspace=ws)
    assert np.array_equal(second.tau, ref2.tau) and not np.array_equal(ref1.tau, ref2.tau)
    assert np.array_equal(first.twist, ref1.twist) and first.twist is twist
    assert np.array_equal(first.tau, ref1.tau) and np.array_equal(tau_first, ref1.tau)
    assert np.array_equal(first.base_wrench, ref1.base_wrench)
    for name in ("wrench", "momentum", "screw", "body_pose"):
        with pytest.raises(RuntimeError, match=f"^{name}: the workspace passed to this result's "
                                               f"call has since served another call"):
            getattr(first, name)
    assert not twist.flags.writeable
    with pytest.raises(AttributeError):
        first.tau = np.zeros(3)
    first.tau[0, 0] += 1.0                    # the result's own: nothing else changes
    assert first.tau[0, 0] == ref1.tau[0, 0] + 1.0 and np.array_equal(second.tau, ref2.tau)
    assert not np.shares_memory(second.tau, ws.tau) and not np.shares_memory(first.tau, ws.tau)
    # without a workspace every result keeps its body jets
    a = liedyn.inverse_dynamics(model, None, V1, q1, r)
    for _ in range(5):
        liedyn.inverse_dynamics(model, None, V2, q2, r)
    assert np.array_equal(a.wrench, ref1.wrench) and np.array_equal(a.momentum, ref1.momentum)


def test_jets_collected_over_a_loop_with_one_workspace_are_every_samples_own():
    """The loop a user writes: one workspace, ``tau`` and ``q`` of every
    sample kept. Each kept array equals that sample's own call, for inverse,
    forward and hybrid dynamics."""
    rng = np.random.default_rng(84)
    model = random_tree(rng, 5)
    n, r = model.n_joints, 1
    samples = [(liedyn.se3.exp(rng.normal(size=6)), rng.normal(size=(r + 2, 6)),
                rng.normal(size=(r + 3, n))) for _ in range(6)]
    ws = liedyn.Workspace(model, r)
    kept = {"inverse": [], "forward": [], "hybrid": []}
    for C0, V, q in samples:
        inv = liedyn.inverse_dynamics(model, C0, V, q, r, workspace=ws)
        kept["inverse"].append((inv.tau, inv.base_wrench))
        fwd = liedyn.forward_dynamics(model, C0, V, q, r, tau=inv.tau,
                                      base_wrench=inv.base_wrench, workspace=ws)
        kept["forward"].append((fwd.q, fwd.base_twist))
        hyb = liedyn.hybrid_dynamics(model, C0, V, q, r, motion_driven=[0], tau=inv.tau,
                                     base_wrench=inv.base_wrench, workspace=ws)
        kept["hybrid"].append((hyb.q, hyb.tau))
    for (C0, V, q), (tau, W0), (qf, Vf), (qh, tauh) in zip(samples, *kept.values()):
        fresh = liedyn.inverse_dynamics(model, C0, V, q, r)
        assert np.array_equal(tau, fresh.tau) and np.array_equal(W0, fresh.base_wrench)
        assert np.abs(qf - q).max() < 1e-8 and np.abs(Vf - V).max() < 1e-8
        assert np.abs(qh - q).max() < 1e-8 and np.abs(tauh - fresh.tau).max() < 1e-8
    assert len({id(t) for t, _ in kept["inverse"]}) == len(samples)


def _pooled_workspace(res):
    """The pooled workspace a result of a call without ``workspace=`` reads
    (through its lease), or ``None`` once it reads a copy."""
    held = res._ws[0]
    return held if isinstance(held, liedyn.Workspace) else None


def test_calls_without_a_workspace_reuse_a_pooled_one_nothing_else_holds():
    """A call without ``workspace=`` takes one of its thread's pooled
    workspaces, one that no result reads: in a loop that keeps only the jets
    two workspaces serve every call. A loop that keeps every result builds
    no workspace per result: the pool keeps two, the kept results are given
    copies of their body jets before their workspace serves another call,
    and every result keeps its body jets. Each thread has its own pool."""
    rng = np.random.default_rng(85)
    model = random_tree(rng, 4)
    r = 1
    V, q = rng.normal(size=(r + 2, 6)), rng.normal(size=(r + 3, model.n_joints))
    used = set()
    for _ in range(20):
        res = liedyn.inverse_dynamics(model, None, V, q, r)
        used.add(id(_pooled_workspace(res)))
    assert len(used) == 2
    for _ in range(3):                        # dropped at once: the same workspace
        used.add(id(_pooled_workspace(liedyn.forward_dynamics(
            model, None, V, q, r, tau=res.tau, base_wrench=res.base_wrench))))
    assert len(used) == 2
    kept = [liedyn.inverse_dynamics(model, None, V + k, q, r) for k in range(6)]
    pool = model._pool.by_order[r]
    assert len(pool) == 2 and {id(w) for w in pool} == used
    live = [_pooled_workspace(k) for k in kept]
    assert sum(w is not None for w in live) <= 2 and live[-1] is not None
    for k, res in enumerate(kept):
        assert np.array_equal(res.twist, liedyn.inverse_dynamics(model, None, V + k, q, r).twist)
    seen = []
    t = threading.Thread(target=lambda: seen.append(
        _pooled_workspace(liedyn.inverse_dynamics(model, None, V, q, r))))
    t.start()
    t.join()
    assert seen[0] is not None and id(seen[0]) not in used


def test_results_kept_over_a_loop_without_a_workspace_keep_their_body_jets():
    """Inverse, forward and hybrid dynamics and the mass matrix called in
    turn without ``workspace=`` at two orders, every result kept: each
    result's body jets (read after the whole loop, when the pool has served
    every later call) equal those of the same call on a workspace of its
    own, and the copies they were read from share no memory with the pool."""
    rng = np.random.default_rng(88)
    model = random_tree(rng, 6)
    n = model.n_joints
    kept, own = [], []
    for i in range(5):
        for r in (0, 2):
            C0 = liedyn.se3.exp(rng.normal(size=6))
            V, q = rng.normal(size=(r + 2, 6)), rng.normal(size=(r + 3, n))
            inv = liedyn.inverse_dynamics(model, C0, V, q, r)
            kw = dict(tau=inv.tau, base_wrench=inv.base_wrench)
            calls = [lambda ws: liedyn.inverse_dynamics(model, C0, V, q, r, workspace=ws),
                     lambda ws: liedyn.forward_dynamics(model, C0, V, q, r, **kw, workspace=ws),
                     lambda ws: liedyn.hybrid_dynamics(model, C0, V, q, r, motion_driven=[i % n],
                                                       **kw, workspace=ws)]
            kept.append(inv)
            own.append(calls[0](liedyn.Workspace(model, r)))
            for call in calls[1:]:
                kept.append(call(None))
                own.append(call(liedyn.Workspace(model, r)))
            liedyn.mass_matrix(model, C0, q[0])      # the pooled order-0 scratch, overwritten
    pooled = [w for ws in model._pool.by_order.values() for w in ws]
    copied = 0
    for res, ref in zip(kept, own):
        copied += _pooled_workspace(res) is None
        names = ["body_pose", "twist", "screw", "wrench"] + (
            ["momentum"] if isinstance(res, liedyn.InverseDynamicsResult) else
            ["articulated_inertia"])
        for name in names:
            got = getattr(res, name)
            assert np.array_equal(got, getattr(ref, name)), (type(res).__name__, name)
            assert not any(np.shares_memory(got, getattr(w, f)) for w in pooled
                           for f in ("C", "V", "S", "W", "Pi", "MA"))
        assert np.array_equal(res.tau, ref.tau)
    assert copied >= len(kept) - 4
    assert all(len(ws) <= 2 for ws in model._pool.by_order.values())


def test_a_workspace_in_use_is_refused():
    """One call at a time: a second call while the first holds the workspace
    raises instead of sharing its scratch (8 threads sharing one workspace
    gave 10 of 2400 results different from serial before)."""
    rng = np.random.default_rng(83)
    model = random_tree(rng, 12)
    r = 3
    ws = liedyn.Workspace(model, r)
    V, q = rng.normal(size=(r + 2, 6)), rng.normal(size=(r + 3, model.n_joints))
    ws._acquire()                              # as a call in another thread would
    with pytest.raises(RuntimeError, match="^workspace: in use by a call in another thread"):
        liedyn.inverse_dynamics(model, None, V, q, r, workspace=ws)
    ws._release()
    cases = [(rng.normal(size=(r + 2, 6)), rng.normal(size=(r + 3, model.n_joints)))
             for _ in range(16)]
    serial = [liedyn.inverse_dynamics(model, None, v, x, r).tau for v, x in cases]
    wrong, refused, done = [], [0], [0]

    def worker(seed):
        for i in range(300):
            k = (seed + i) % len(cases)
            try:
                res = liedyn.inverse_dynamics(model, None, *cases[k], r, workspace=ws)
            except RuntimeError:
                refused[0] += 1
                continue
            done[0] += 1
            if not np.array_equal(res.tau, serial[k]):
                wrong.append(k)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong, f"{len(wrong)} results differ from serial"
    assert done[0] + refused[0] == 2400 and done[0] > 0


@pytest.mark.slow
def test_kernels_neither_recompile_nor_allocate():
    """In a fresh interpreter with numba's allocation statistics on: a call
    through each compiled entry point allocates nothing beyond adopting its
    array arguments, and one compiled specialisation serves every order."""
    out = run_python("""
        import numpy as np
        from numba.core.runtime import rtsys
        import liedyn
        from liedyn.algorithm import closed_form as cf
        from liedyn.algorithm.forward import _FORWARD_DYNAMICS
        from liedyn.algorithm.hybrid import _HYBRID_DYNAMICS
        from liedyn.algorithm.inverse import _INVERSE_DYNAMICS
        from models.trees import benchmark_tree

        def allocations(kernel, args):
            # numba adopts each ndarray argument with one NRT meminfo per call;
            # anything beyond that is an allocation inside the kernel
            before = rtsys.get_allocation_stats().alloc
            kernel.call(*args)
            adopted = sum(isinstance(a, np.ndarray) for a in args)
            return rtsys.get_allocation_stats().alloc - before - adopted

        m = benchmark_tree(2, 3)
        n, N = m.n_joints, m.n_bodies
        rng = np.random.default_rng(0)
        C0 = liedyn.se3.exp(rng.normal(size=6))
        none = np.zeros((0, 0, 6))
        for r in (1, 4):
            ws = liedyn.Workspace(m, r)
            V = rng.normal(size=(r + 2, 6)); q = rng.normal(size=(r + 3, n))
            tau, W0 = rng.normal(size=(r + 1, n)), rng.normal(size=(r + 1, 6))
            args = (m._data, ws._data, C0, False, V, q, none, r)
            assert _INVERSE_DYNAMICS.call(*args) == 0
            assert allocations(_INVERSE_DYNAMICS, args) == 0, "inverse kernel allocates"
            fargs = (m._data, ws._data, C0, False, V[:1], q[:2], tau, W0, none, r)
            assert _FORWARD_DYNAMICS.call(*fargs) == 0
            assert allocations(_FORWARD_DYNAMICS, fargs) == 0, "forward kernel allocates"
            motion = np.zeros(N, dtype=np.bool_); motion[2] = True
            hargs = (m._data, ws._data, C0, False, V, q, tau, W0, none, r, motion, False)
            assert _HYBRID_DYNAMICS.call(*hargs) == 0
            assert allocations(_HYBRID_DYNAMICS, hargs) == 0, "hybrid kernel allocates"
            nv = m.nv          # the closed form writes only the caller's outputs
            out = (np.empty((r + 1, nv, nv)), np.empty((r + 1, nv, nv)), np.empty((r + 1, nv)),
                   np.empty((r + 1, nv)), np.empty((nv, nv)), np.empty((r + 2, nv)))
            cargs = (m._data, ws._data, ws._closed_form_data(), C0, False, V, q, none, r) + out
            assert cf._CLOSED_FORM.call(*cargs) == 0
            assert allocations(cf._CLOSED_FORM, cargs) == 0, "closed-form jets kernel allocates"
        ws = liedyn.Workspace(m, 0)
        h = ws._closed_form_data()
        for kernel, args in ((cf._MASS_MATRIX, (C0, False, q[0], np.empty((nv, nv)))),
                             (cf._GRAVITY_VECTOR, (C0, False, q[0], np.empty(nv))),
                             (cf._CORIOLIS_MATRIX, (C0, False, V[:1], q[:2], np.empty((nv, nv))))):
            args = (m._data, ws._data, h) + args
            assert kernel.call(*args) == 0
            assert allocations(kernel, args) == 0, kernel.dispatcher.__name__ + " allocates"
        for k in (_INVERSE_DYNAMICS, _FORWARD_DYNAMICS, _HYBRID_DYNAMICS, cf._CLOSED_FORM):
            assert len(k.dispatcher.signatures) == 1, k.dispatcher.signatures
        print("ok")
    """, timeout=600, NUMBA_NRT_STATS="1")
    assert out.strip().endswith("ok")


def test_pooled_workspaces_under_threads_fork_and_interrupts():
    """Calls without ``workspace=`` from eight threads at once, in workers
    forked while the parent holds pooled workspaces with live results, and
    after a call interrupted by an exception: every result equals the serial
    one and the parent's earlier results keep their body jets. In a
    subprocess, as anything that could hang or crash."""
    out = run_python("""
        import multiprocessing as mp
        import threading
        import numpy as np
        import liedyn
        from models.trees import random_tree

        model = random_tree(np.random.default_rng(86), 8)
        r = 2
        rng = np.random.default_rng(87)
        cases = [(rng.normal(size=(r + 2, 6)), rng.normal(size=(r + 3, model.n_joints)))
                 for _ in range(12)]
        serial = [liedyn.inverse_dynamics(model, None, V, q, r) for V, q in cases]
        kept = [(res.tau.copy(), res.wrench.copy()) for res in serial]

        wrong = []
        def worker(seed):
            for i in range(200):
                k = (seed + i) % len(cases)
                res = liedyn.inverse_dynamics(model, None, *cases[k], r)
                if not np.array_equal(res.tau, kept[k][0]):
                    wrong.append(k)
        threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not wrong, wrong

        def forked(k):
            return liedyn.inverse_dynamics(model, None, *cases[k], r).tau
        with mp.get_context("fork").Pool(2) as pool:
            taus = pool.map(forked, range(len(cases)))
        assert all(np.array_equal(t, kept[k][0]) for k, t in enumerate(taus))

        try:
            liedyn.inverse_dynamics(model, None, cases[0][0], np.full((r + 3, model.n_joints),
                                                                      np.nan), r)
        except ValueError:
            pass
        again = liedyn.inverse_dynamics(model, None, *cases[1], r)
        assert np.array_equal(again.tau, kept[1][0])
        for res, (tau, wrench) in zip(serial, kept):
            assert np.array_equal(res.tau, tau) and np.array_equal(res.wrench, wrench)
        print("ok")
    """, timeout=300)
    assert out.strip().endswith("ok")
