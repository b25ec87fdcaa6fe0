"""The Taylor-mode baseline (SPEC §16): JAX's ``jet`` on order-0 maps written
in JAX from the model's data (no code shared with the recursions) gives the
kernels' inverse and forward dynamics at every order.

Skipped without JAX (an optional extra, ``pip install 'liedyn[jax]'``, about
600 MB). XLA compiles one function per order, a few seconds each for these
3-body trees; the benchmark (experiments/bench_symbolic.py) runs N = 101.

Tolerance: 1e-12 relative to the largest entry of each jet row (measured
≤ 5e-15 inverse, ≤ 2e-13 forward, on 6-body trees at r ≤ 4).
"""

import numpy as np
import pytest

pytest.importorskip("jax")

import liedyn                                                      # noqa: E402
from liedyn.baselines.taylor_jax import TaylorJax, forward_dynamics_jets   # noqa: E402
from models.trees import random_tree                               # noqa: E402

RTOL = 1e-12


def _rel(a, d):
    a, d = np.asarray(a), np.asarray(d)
    assert a.shape == d.shape and np.all(np.isfinite(a))
    return np.max(np.abs(a - d), axis=-1) / np.max(np.abs(d), axis=-1)


@pytest.mark.parametrize("floating", [True, False])
def test_taylor_mode_equals_kernels(floating):
    rng = np.random.default_rng(60)
    model = random_tree(rng, 4, floating_base=floating, armature=True, damping=True)
    R = 2
    C0 = liedyn.se3.exp(rng.normal(size=6) * 0.5) if floating else model.home_pose
    V = rng.normal(size=(R + 2, 6)) * 0.5 if floating else None
    q = rng.normal(size=(R + 3, model.n_joints)) * 0.5
    Wa = rng.normal(size=(R + 1, model.n_bodies, 6)) * 0.5
    inv = liedyn.inverse_dynamics(model, C0, V, q, R, applied=Wa)
    tj = TaylorJax(model, applied=True)
    W, tau = tj.inverse_dynamics(C0, V, q, R, applied=Wa)
    assert np.max(_rel(tau, inv.tau)) <= RTOL
    assert np.max(_rel(W, inv.base_wrench)) <= RTOL
    lv = TaylorJax(model, applied=True, by_level=True)          # the bodies of a depth batched
    W, tau = lv.inverse_dynamics(C0, V, q, R, applied=Wa)
    assert np.max(_rel(tau, inv.tau)) <= RTOL
    assert np.max(_rel(W, inv.base_wrench)) <= RTOL
    if not floating:
        return                       # the forward map once (each order is an XLA compile)
    Rf = 1
    kw = dict(tau=inv.tau[:Rf + 1], base_wrench=inv.base_wrench[:Rf + 1], applied=Wa[:Rf + 1])
    Vf, qf = forward_dynamics_jets(tj, C0, V[:1], q[:2], Rf, **kw)
    fwd = liedyn.forward_dynamics(model, C0, V[:1], q[:2], Rf, **kw)
    assert np.max(_rel(qf, fwd.q)) <= RTOL
    assert np.max(_rel(Vf, fwd.base_twist)) <= RTOL


def test_bad_arguments():
    model = random_tree(np.random.default_rng(0), 3)
    tj = TaylorJax(model)
    with pytest.raises(ValueError, match="q"):
        tj.inverse_dynamics(np.eye(4), np.zeros((3, 6)), np.zeros((2, 2)), 1)
    with pytest.raises(ValueError, match="order"):
        tj.inverse_dynamics(np.eye(4), np.zeros((3, 6)), np.zeros((4, 2)), -1)
    with pytest.raises(TypeError, match="model"):
        TaylorJax("robot")
