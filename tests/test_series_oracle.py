"""The Taylor-series oracle (``tests/series_oracle``) on its own: order 0 equals
Pinocchio's RNEA and ABA, and its forward solve inverts its inverse map in
extended precision. The other test files use it to size finite-difference
bounds and round-trip floors, so it must not lean on liedyn's recursions."""

import mpmath
import numpy as np
import pytest

from liedyn import se3
from liedyn.interop.pinocchio import to_pinocchio
from models.aerial_manipulator import aerial_manipulator
from models.trees import random_tree
from tests import series_oracle
from tests.helpers import assert_close

MODELS = [
    pytest.param(lambda: aerial_manipulator(), 1, id="aerial"),
    pytest.param(lambda: random_tree(np.random.default_rng(701), 9, armature=True, damping=True,
                                     prismatic_fraction=0.4), 2, id="tree-floating"),
    pytest.param(lambda: random_tree(np.random.default_rng(702), 7, floating_base=False,
                                     armature=True, damping=True, prismatic_fraction=0.4), 3,
                 id="tree-fixed"),
]


def _state(model, rng, r):
    C0 = se3.exp(rng.normal(size=6))
    Vb = rng.normal(size=(r + 2, 6)) if model.floating_base else None
    q = rng.normal(size=(r + 3, model.n_joints))
    app = rng.normal(size=(r + 1, model.n_bodies, 6))
    return C0, Vb, q, app


@pytest.mark.parametrize("make,seed", MODELS)
def test_order_zero_equals_pinocchio(make, seed):
    """RNEA (W₀, τ) and ABA (V̇₀, q̈) to 1e-12 of the largest entry (two
    float64 O(N) evaluations of O(1) data, measured ~1e-15)."""
    model = make()
    rng = np.random.default_rng(710 + seed)
    C0, Vb, q, app = _state(model, rng, 0)
    pm = to_pinocchio(model, base_pose=C0)
    ref = series_oracle.inverse_jets(model, C0, Vb, q, 0, app)
    W0, tau = pm.rnea(C0, Vb, q, applied=app)
    scale = max(np.abs(tau).max(), np.abs(W0).max(), 1.0)
    assert_close(ref["tau"][0], tau, rtol=0, atol=1e-12 * scale, what="tau")
    if model.floating_base:
        assert_close(ref["base_wrench"][0], W0, rtol=0, atol=1e-12 * scale, what="W0")
    tau_in = rng.normal(size=(1, model.n_joints))
    W_in = rng.normal(size=(1, 6)) if model.floating_base else None
    Vf, qf = series_oracle.forward_jets(model, C0, None if Vb is None else Vb[:1], q[:2], 0,
                                        tau_in, W_in, app)
    dV0, qdd = pm.aba(C0, None if Vb is None else Vb[:1], q[:2], tau=tau_in, base_wrench=W_in,
                      applied=app)
    assert_close(qf[2], qdd, rtol=1e-11, atol=1e-11, what="q̈")
    if model.floating_base:
        assert_close(Vf[1], dV0, rtol=1e-11, atol=1e-11, what="V̇₀")


def test_forward_inverts_inverse_in_extended_precision():
    """At 40 digits, forward_jets of inverse_jets returns the motion (measured
    5e-33): the order-by-order solve is exact up to the working precision,
    with the ill-conditioning of the high orders costing some of the 40
    digits; 1e-25 leaves room for that and fails on any float64 step."""
    model = aerial_manipulator()
    rng = np.random.default_rng(720)
    r = 4
    C0, Vb, q, app = _state(model, rng, r)
    with mpmath.workdps(40):
        inv = series_oracle.inverse_jets(model, C0, Vb, q, r, app, dtype=object)
        Vf, qf = series_oracle.forward_jets(model, C0, Vb[:1], q[:2], r, inv["tau"],
                                            inv["base_wrench"], app, dtype=object)
        err = max(float(abs(x)) for x in np.concatenate([(Vf - Vb).ravel(), (qf - q).ravel()]))
    assert err < 1e-25, err


def test_float_and_extended_precision_agree():
    """The same series in float64 and at 40 digits: float64 is accurate to
    ~1e-15 of each row at order 6 (sums of O(1) products)."""
    model = random_tree(np.random.default_rng(730), 6, prismatic_fraction=0.5)
    rng = np.random.default_rng(731)
    r = 6
    C0, Vb, q, app = _state(model, rng, r)
    f = series_oracle.inverse_jets(model, C0, Vb, q, r, app)
    with mpmath.workdps(40):
        x = series_oracle.inverse_jets(model, C0, Vb, q, r, app, dtype=object)
    for name in ("base_wrench", "tau"):
        ex = x[name].astype(float)
        scale = 1.0 + np.abs(ex).max(axis=1, keepdims=True)
        assert np.all(np.abs(f[name] - ex) <= 1e-13 * scale), name
