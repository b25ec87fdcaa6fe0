"""Inverse dynamics order k+1 equals the central time difference of order k."""

import numpy as np
import pytest

import liedyn
from models.trees import random_tree
from tests.helpers import assert_close, integrate_pose, poly_jet

H = 1e-3  # central difference: error ~ H²/6 · |x'''| ≈ 1e-7 relative for O(1) jets


@pytest.mark.parametrize("floating", [True, False])
def test_order_k_plus_1_is_time_derivative_of_order_k(floating):
    rng = np.random.default_rng(11 if floating else 12)
    model = random_tree(rng, 6, floating_base=floating)
    r = 4
    qc = rng.normal(size=(r + 5, model.n_joints)) * 0.7
    Vc = rng.normal(size=(r + 4, 6)) * 0.7
    C0 = liedyn.se3.exp(rng.normal(size=6))

    def call(t):
        C = integrate_pose(C0, lambda s: poly_jet(Vc, s, 1)[0], t) if floating else None
        Vb = poly_jet(Vc, t, r + 2) if floating else None
        return liedyn.inverse_dynamics(model, C, Vb, poly_jet(qc, t, r + 3), r)

    mid, plus, minus = call(0.0), call(H), call(-H)
    for k in range(r):
        fd_tau = (plus.tau[k] - minus.tau[k]) / (2 * H)
        fd_W = (plus.base_wrench[k] - minus.base_wrench[k]) / (2 * H)
        scale = 1.0 + np.max(np.abs(mid.tau[k + 1]))
        assert_close(fd_tau, mid.tau[k + 1], rtol=0, atol=1e-5 * scale, what=f"tau order {k + 1}")
        scale = 1.0 + np.max(np.abs(mid.base_wrench[k + 1]))
        assert_close(fd_W, mid.base_wrench[k + 1], rtol=0, atol=1e-5 * scale, what=f"W0 order {k + 1}")
