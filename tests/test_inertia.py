"""The structured inertia jets (SPEC §4, 3-vector and 3×3 recursions) equal the
dense 6×6 Leibniz recursion M^(k) = −Σ C(k−1,a)(M^(k−1−a) ad_{V^(a)} +
ad_{V^(a)}ᵀ M^(k−1−a)) written here with plain numpy."""

from math import comb

import numpy as np
import pytest

from liedyn import ModelBuilder, se3
from liedyn.spatial.inertia import _body_mass_jets, _gravity_wrench_acc, _momentum_order
from liedyn.multibody.workspace import binomials
from models.trees import random_inertia
from tests.helpers import rel_err

K_MAX = 8


def dense_inertia_jets(M0, V, K):
    """``M^(0..K)`` by the 6×6 recursion, ``V`` of shape (K, 6)."""
    M = [M0]
    for k in range(1, K + 1):
        acc = np.zeros((6, 6))
        for a in range(k):
            ad = se3.ad(V[a])
            acc -= comb(k - 1, a) * (M[k - 1 - a] @ ad + ad.T @ M[k - 1 - a])
        M.append(acc)
    return M


@pytest.mark.parametrize("seed", range(5))
def test_structured_jets_equal_dense_leibniz(seed):
    rng = np.random.default_rng(100 + seed)
    Mb = random_inertia(rng)
    m = Mb[3, 3]
    b = ModelBuilder()
    b.add_body("body", None, None, inertia=Mb)
    model = b.build()           # the kernels read mass, CoM and J_c from the model handle
    C = se3.exp(rng.normal(size=6))
    V = rng.normal(size=(K_MAX + 2, 1, 6))
    g = np.array([0.0, 0.0, -9.81])

    c = np.empty((K_MAX + 2, 1, 3))
    Ic = np.empty((K_MAX + 1, 1, 3, 3))
    Pi = np.empty((K_MAX + 1, 1, 6))
    binom = binomials(K_MAX + 3)
    _body_mass_jets(0, K_MAX, model._data, C[None], V, binom, c, Ic)
    for k in range(K_MAX + 1):
        _momentum_order(0, k, m, V, c, Ic, binom, Pi)

    Md = dense_inertia_jets(se3.transform_inertia(C, Mb), V[:, 0], K_MAX)
    G = np.concatenate([np.zeros(3), g])
    for k in range(K_MAX + 1):
        # Π^(k) = Σ C(k, a) M^(k−a) V^(a);  M^(k) G from (c^(k) × m g, m g [k=0])
        Pi_dense = sum(comb(k, a) * Md[k - a] @ V[a, 0] for a in range(k + 1))
        grav = np.zeros(6)
        _gravity_wrench_acc(1.0, 0, k, m, g, c, grav)
        # The jets grow like k!·|V|^k; relative to that scale they agree to
        # round-off, well under the 1e-12 the issue asks for.
        assert rel_err(Pi[k, 0], Pi_dense) < 1e-12, k
        assert rel_err(grav, Md[k] @ G) < 1e-12, k
        # SPEC §4: M^(k) = [[I_c^(k) + m Σ C(k,a) ĉ^(a) ĉ^(k−a)ᵀ, m ĉ^(k)], [m ĉ^(k)ᵀ, m I [k=0]]]
        Ms = np.zeros((6, 6))
        Ms[:3, :3] = Ic[k, 0] + m * sum(comb(k, a) * se3.hat(c[a, 0]) @ se3.hat(c[k - a, 0]).T
                                        for a in range(k + 1))
        Ms[:3, 3:] = m * se3.hat(c[k, 0])
        Ms[3:, :3] = Ms[:3, 3:].T
        Ms[3:, 3:] = m * np.eye(3) if k == 0 else 0.0
        assert rel_err(Ms, Md[k]) < 1e-12, k
