"""The batched entry points return, sample by sample, what the single-sample
functions return (the same kernels, compiled into a parallel loop: equal to
round-off), and reject inconsistent batch sizes."""

import numpy as np
import pytest

import liedyn
from models.aerial_manipulator import aerial_manipulator
from models.trees import random_tree
from tests.helpers import assert_close


def _samples(model, rng, B, r):
    C0 = np.stack([liedyn.se3.exp(rng.normal(size=6)) for _ in range(B)])
    Vb = rng.normal(size=(B, r + 2, 6)) if model.floating_base else None
    q = rng.normal(size=(B, r + 3, model.n_joints))
    return C0, Vb, q


@pytest.mark.parametrize("floating", [True, False])
def test_batches_match_single_calls(floating):
    rng = np.random.default_rng(70 + floating)
    model = random_tree(rng, 7, floating_base=floating, armature=True, damping=True)
    r, B = 3, 9          # B not a multiple of the core count: uneven blocks
    C0, Vb, q = _samples(model, rng, B, r)
    applied = rng.normal(size=(B, r + 1, model.n_bodies, 6))
    ID = liedyn.inverse_dynamics_batch(model, C0, Vb, q, r, applied=applied)
    FD = liedyn.forward_dynamics_batch(model, C0, None if Vb is None else Vb[:, 0], q[:, 0],
                                       q[:, 1], ID.base_wrench if floating else None, ID.tau, r,
                                       applied=applied)
    for b in range(B):
        one = liedyn.inverse_dynamics(model, C0[b], None if Vb is None else Vb[b], q[b], r,
                                      applied=applied[b])
        assert_close(ID.base_wrench[b], one.base_wrench, rtol=1e-12, atol=1e-12)
        assert_close(ID.tau[b], one.tau, rtol=1e-12, atol=1e-12)
        fwd = liedyn.forward_dynamics(model, C0[b], None if Vb is None else Vb[b, 0], q[b, 0],
                                      q[b, 1], one.base_wrench if floating else None, one.tau,
                                      r, applied=applied[b])
        assert_close(FD.q[b], fwd.q, rtol=1e-12, atol=1e-12)
        assert_close(FD.base_twist[b], fwd.base_twist, rtol=1e-12, atol=1e-12)


def test_batch_round_trip_on_the_aerial_manipulator():
    rng = np.random.default_rng(72)
    model = aerial_manipulator()
    r, B = 2, 5
    C0, Vb, q = _samples(model, rng, B, r)
    ID = liedyn.inverse_dynamics_batch(model, C0, Vb, q, r)
    FD = liedyn.forward_dynamics_batch(model, C0, Vb[:, 0], q[:, 0], q[:, 1], ID.base_wrench,
                                       ID.tau, r)
    # Orders ≤ 2 with O(1) jets: the round trip is at round-off (see test_forward).
    assert np.max(np.abs(FD.q - q)) < 1e-9
    assert np.max(np.abs(FD.base_twist - Vb)) < 1e-9


def test_batch_errors_name_the_argument():
    rng = np.random.default_rng(73)
    model = aerial_manipulator()
    r, B = 1, 4
    C0, Vb, q = _samples(model, rng, B, r)
    with pytest.raises(ValueError, match="base_twist"):
        liedyn.inverse_dynamics_batch(model, C0, Vb[:3], q, r)
    with pytest.raises(ValueError, match="base_pose"):
        bad = C0.copy()
        bad[2, 0, 0] = 2.0
        liedyn.inverse_dynamics_batch(model, bad, Vb, q, r)
    with pytest.raises(ValueError, match="q"):
        liedyn.inverse_dynamics_batch(model, C0, Vb, q[:, :, :3], r)
    with pytest.raises(ValueError, match="tau"):
        liedyn.forward_dynamics_batch(model, C0, Vb[:, 0], q[:, 0], q[:, 1],
                                      np.zeros((B, r + 1, 6)), np.zeros((B + 1, r + 1, 6)), r)
    with pytest.raises(ValueError, match="NaN"):
        q2 = q.copy()
        q2[1, 0, 0] = np.nan
        liedyn.inverse_dynamics_batch(model, C0, Vb, q2, r)


def test_batch_singular_pivot_names_sample_and_body():
    m = liedyn.Model(floating_base=False)
    m.add_body("base", None, None)
    # a point mass on the axis of a revolute joint has no inertia about it
    m.add_body("needle", "base", liedyn.Revolute((0, 0, 1)), None,
               liedyn.se3.spatial_inertia(1.0, (0, 0, 0.5), np.zeros((3, 3))))
    with pytest.raises(ValueError, match="sample 0: joint of body 'needle'"):
        liedyn.forward_dynamics_batch(m, None, None, np.zeros((2, 1)), np.zeros((2, 1)), None,
                                      np.zeros((2, 1, 1)), 0)
