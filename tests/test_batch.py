"""The batch functions run the single-call kernels sample by sample: equal to
the bit, whatever the number of threads; they keep body jets only in a batch
workspace, name the first bad sample, and leave the process safe to fork and
to call from several threads."""

import threading

import numpy as np
import pytest

import liedyn
from models.aerial_manipulator import aerial_manipulator
from models.trees import random_tree
from tests.helpers import run_python


def _samples(model, rng, B, r):
    C0 = np.stack([liedyn.se3.exp(rng.normal(size=6)) for _ in range(B)])
    Vb = rng.normal(size=(B, r + 2, 6)) if model.floating_base else None
    q = rng.normal(size=(B, r + 3, model.n_joints))
    return C0, Vb, q


def _at(x, b):
    return None if x is None else x[b]


@pytest.mark.parametrize("floating", [True, False])
def test_batches_equal_single_calls_bitwise(floating):
    """Every public function and its batch variant run the same kernels on
    the same inputs: the outputs agree to the bit, also with 1 and 3 threads
    and when every sample's body jets are kept in a batch workspace."""
    rng = np.random.default_rng(70 + floating)
    model = random_tree(rng, 7, floating_base=floating, armature=True, damping=True)
    r, B = 3, 100           # not a multiple of the thread count: uneven blocks
    C0, Vb, q = _samples(model, rng, B, r)
    applied = rng.normal(size=(B, r + 1, model.n_bodies, 6))
    ws = liedyn.Workspace(model, r, samples=B)
    for threads in (1, 3):
        ID = liedyn.inverse_dynamics_batch(model, C0, Vb, q, r, applied=applied,
                                           threads=threads)
        fkw = dict(tau=ID.tau, base_wrench=ID.base_wrench if floating else None,
                   applied=applied, threads=threads)
        FD = liedyn.forward_dynamics_batch(model, C0, None if Vb is None else Vb[:, :1],
                                           q[:, :2], r, **fkw)
        IDk = liedyn.inverse_dynamics_batch(model, C0, Vb, q, r, applied=applied,
                                            threads=threads, workspace=ws)
        for b in range(0, B, 7):
            one = liedyn.inverse_dynamics(model, C0[b], _at(Vb, b), q[b], r, applied=applied[b])
            fwd = liedyn.forward_dynamics(model, C0[b], None if Vb is None else Vb[b, :1],
                                          q[b, :2], r, tau=one.tau, applied=applied[b],
                                          base_wrench=one.base_wrench if floating else None)
            for name in ("base_wrench", "tau"):
                assert np.array_equal(getattr(ID, name)[b], getattr(one, name)), name
                assert np.array_equal(getattr(IDk, name)[b], getattr(one, name)), name
            for name in ("base_twist", "q", "base_wrench", "tau"):
                assert np.array_equal(getattr(FD, name)[b], getattr(fwd, name)), name
            for name in ("twist", "screw", "momentum", "wrench", "body_pose"):
                assert np.array_equal(getattr(IDk, name)[b], getattr(one, name)), name


def test_batch_keeps_body_jets_only_in_a_batch_workspace():
    rng = np.random.default_rng(74)
    model = aerial_manipulator()
    r, B = 1, 4
    C0, Vb, q = _samples(model, rng, B, r)
    ID = liedyn.inverse_dynamics_batch(model, C0, Vb, q, r)
    with pytest.raises(RuntimeError, match="^twist: a batch call keeps body jets only in a batch"):
        ID.twist
    ws = liedyn.Workspace(model, r, samples=B)
    kept = liedyn.inverse_dynamics_batch(model, C0, Vb, q, r, workspace=ws)
    assert kept.twist.shape == (B, r + 2, model.n_bodies, 6)
    with pytest.raises(ValueError, match="^workspace: expected a batch workspace with samples=4"):
        liedyn.inverse_dynamics_batch(model, C0, Vb, q, r, workspace=liedyn.Workspace(model, r))


def test_batch_round_trip_on_the_aerial_manipulator():
    rng = np.random.default_rng(72)
    model = aerial_manipulator()
    r, B = 2, 5
    C0, Vb, q = _samples(model, rng, B, r)
    ID = liedyn.inverse_dynamics_batch(model, C0, Vb, q, r)
    FD = liedyn.forward_dynamics_batch(model, C0, Vb[:, :1], q[:, :2], r, tau=ID.tau,
                                       base_wrench=ID.base_wrench)
    # Orders ≤ 2 with O(1) jets: the round trip is at round-off (see test_forward).
    assert np.max(np.abs(FD.q - q)) < 1e-9
    assert np.max(np.abs(FD.base_twist - Vb)) < 1e-9


def test_batch_errors_name_the_argument_and_the_sample():
    rng = np.random.default_rng(73)
    model = aerial_manipulator()
    r, B = 1, 4
    C0, Vb, q = _samples(model, rng, B, r)
    with pytest.raises(ValueError, match="^base_twist: expected 4 samples"):
        liedyn.inverse_dynamics_batch(model, C0, Vb[:3], q, r)
    bad = C0.copy()
    bad[2, 0, 0] = 2.0
    with pytest.raises(ValueError, match="^sample 2: base_pose: not in SE\\(3\\)"):
        liedyn.inverse_dynamics_batch(model, bad, Vb, q, r)
    with pytest.raises(ValueError, match="^q: expected shape \\(B, 4, 6\\)"):
        liedyn.inverse_dynamics_batch(model, C0, Vb, q[:, :, :3], r)
    with pytest.raises(ValueError, match="^tau: expected 4 samples"):
        liedyn.forward_dynamics_batch(model, C0, Vb[:, :1], q[:, :2], r,
                                      tau=np.zeros((B + 1, r + 1, 6)),
                                      base_wrench=np.zeros((B, r + 1, 6)))
    with pytest.raises(ValueError, match="^base_wrench: a floating base needs"):
        liedyn.forward_dynamics_batch(model, C0, Vb[:, :1], q[:, :2], r,
                                      tau=np.zeros((B, r + 1, 6)))
    q2 = q.copy()
    q2[1, 0, 0] = np.nan
    with pytest.raises(ValueError, match="^sample 1: q: contains NaN"):
        liedyn.inverse_dynamics_batch(model, C0, Vb, q2, r)
    with pytest.raises(ValueError, match="^threads:"):
        liedyn.inverse_dynamics_batch(model, C0, Vb, q, r, threads=0)


def test_batch_singular_pivot_names_sample_and_body():
    b = liedyn.ModelBuilder(floating_base=False)
    b.add_body("base", None, None)
    # a point mass on the axis of a revolute joint has no inertia about it
    b.add_body("needle", "base", liedyn.Revolute((0, 0, 1)), None,
               liedyn.se3.spatial_inertia(1.0, (0, 0, 0.5), np.zeros((3, 3))))
    m = b.build()
    with pytest.raises(ValueError, match="^sample 0: joint of body 'needle'"):
        liedyn.forward_dynamics_batch(m, None, None, np.zeros((2, 2, 1)), 0,
                                      tau=np.zeros((2, 1, 1)))


def test_fork_after_a_batch_call():
    """A multiprocessing pool forked after a batch call works: its workers run
    liedyn and return (they aborted with "fork() called from a process
    already using GNU OpenMP" and the pool hung for ever before)."""
    out = run_python("""
        import multiprocessing as mp
        import numpy as np
        import liedyn
        from models.aerial_manipulator import aerial_manipulator
        m = aerial_manipulator()
        rng = np.random.default_rng(0)
        B, r = 200, 2
        C0 = np.stack([liedyn.se3.exp(rng.normal(size=6)) for _ in range(B)])
        V, q = rng.normal(size=(B, r + 2, 6)), rng.normal(size=(B, r + 3, 6))
        ref = liedyn.inverse_dynamics_batch(m, C0, V, q, r, threads=2).tau

        def work(b):
            return liedyn.inverse_dynamics_batch(m, C0[b:b + 40], V[b:b + 40], q[b:b + 40], r,
                                                 threads=2).tau

        with mp.get_context("fork").Pool(2) as pool:
            parts = pool.map(work, [0, 40, 80, 120, 160])
        assert np.array_equal(np.concatenate(parts), ref)
        print("ok")
    """, timeout=240)
    assert out.strip().endswith("ok")


def test_batch_calls_from_several_threads():
    """Four Python threads calling the batch functions at once (each with two
    worker threads of its own) get the serial results (this aborted the
    process under numba's workqueue threading layer before)."""
    rng = np.random.default_rng(75)
    model = random_tree(rng, 9)
    r, B = 2, 120
    C0, Vb, q = _samples(model, rng, B, r)
    ref = liedyn.inverse_dynamics_batch(model, C0, Vb, q, r, threads=1).tau
    wrong = []

    def worker():
        for _ in range(5):
            got = liedyn.inverse_dynamics_batch(model, C0, Vb, q, r, threads=2).tau
            if not np.array_equal(got, ref):
                wrong.append(1)

    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not wrong
