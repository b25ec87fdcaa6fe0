"""The weighted minimum-norm split of SPEC §13.3, compiled: the jets
``x^(0..r)`` of ``argmin ½ xᵀ R x  s.t.  E x = w``, one KKT factorisation
(through its Schur complement ``S = E₀ R⁻¹ E₀ᵀ``) and one solve per order.

``E₀`` of full row rank: :func:`_min_norm_jets`. Rank below the rows (an
under-actuated base, six coplanar rotors): :func:`_on_independent_rows`
carries the constraints on independent rows and accepts the others when
their residual is round-off. Otherwise, at full column rank, the
least-squares jets (:func:`_least_squares_jets`). Used by
:func:`liedyn.constrained_inverse_dynamics` and, for the jets of the forces
on the active facets of the friction pyramids, by
:func:`liedyn.friction_cone_distribution`.
"""

import numpy as np

from .._jit import njit

RANK_RTOL = 1e-10             # rank of E₀: singular values above this times max |E₀|
# A row the independent rows do not carry is met when its residual is at
# most this times the largest term of its order (round-off of the wrench).
RESIDUAL_RTOL = 1e-10
CERTAIN_RCOND = 1e-8      # rank by Cholesky when λ_min(E₀E₀ᵀ) ≥ this (entries scaled to ≤ 1)


@njit
def _spd_inverse(A, out):
    """``out = A⁻¹`` of a symmetric positive definite ``A`` from its
    Cholesky factor ``L`` (``L⁻¹``, then ``L⁻ᵀ L⁻¹``); ``False`` if the
    factor does not exist (``A`` not numerically positive definite)."""
    u = A.shape[0]
    L = np.zeros((u, u))
    X = np.zeros((u, u))
    for i in range(u):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                if not s > 0.0:
                    return False
                L[i, i] = np.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    for j in range(u):                                         # X = L⁻¹ (lower part)
        X[j, j] = 1.0 / L[j, j]
        for i in range(j + 1, u):
            s = 0.0
            for k in range(j, i):
                s -= L[i, k] * X[k, j]
            X[i, j] = s / L[i, i]
    for i in range(u):
        for j in range(i + 1):
            s = 0.0
            for k in range(i, u):
                s += X[k, i] * X[k, j]
            out[i, j] = out[j, i] = s
    return True


@njit
def _inverse(A):
    """``A⁻¹`` of a symmetric matrix: by Cholesky when it is positive
    definite, else by LU (``np.linalg.inv``)."""
    out = np.empty(A.shape)
    if not _spd_inverse(A, out):
        out[:] = np.linalg.inv(A)
    return out


@njit
def _row_rank(E0):
    """The rank of ``E₀`` as ``np.linalg.matrix_rank`` with the tolerance
    ``RANK_RTOL · max |E₀|``: ``s`` at once when the Cholesky factor of
    ``E₀E₀ᵀ`` (entries scaled to at most 1) proves ``λ_min ≥ 1/‖(E₀E₀ᵀ)⁻¹‖∞
    ≥ CERTAIN_RCOND`` (singular values far above the tolerance), else by
    counting the singular values above it."""
    s, u = E0.shape
    emax = 0.0
    for i in range(s):
        for l in range(u):
            emax = max(emax, abs(E0[i, l]))
    tol = RANK_RTOL * max(emax, 1e-300)
    if s <= u and emax > 0.0:
        G = np.empty((s, s))
        for i in range(s):
            for j in range(i + 1):
                acc = 0.0
                for l in range(u):
                    acc += E0[i, l] * E0[j, l]
                G[i, j] = G[j, i] = acc / (emax * emax)
        Gi = np.empty((s, s))
        if _spd_inverse(G, Gi):
            ninf = 0.0
            for i in range(s):
                acc = 0.0
                for j in range(s):
                    acc += abs(Gi[i, j])
                ninf = max(ninf, acc)
            if ninf * CERTAIN_RCOND <= 1.0:
                return s
    sv = np.linalg.svd(E0)[1]
    rank = 0
    for i in range(sv.shape[0]):
        if sv[i] > tol:
            rank += 1
    return rank


@njit
def _min_norm_jets(E, w, R, r, binom, x):
    """Jets ``x^(0..r)`` of ``argmin ½ xᵀ R x  s.t.  E x = w`` (module
    docstring; ``E₀`` of full row rank; ``R`` empty: ``I``)."""
    s, u = E.shape[1], E.shape[2]
    E0 = E[0]
    Ri = _inverse(R) if R.shape[0] else R
    Y = np.empty((u, s))                                       # R⁻¹ E₀ᵀ
    for l in range(u):
        for i in range(s):
            if Ri.shape[0]:
                acc = 0.0
                for t in range(u):
                    acc += Ri[l, t] * E0[i, t]
                Y[l, i] = acc
            else:
                Y[l, i] = E0[i, l]
    Sm = np.empty((s, s))                                      # S = E₀ R⁻¹ E₀ᵀ
    for i in range(s):
        for j in range(i + 1):
            acc = 0.0
            for l in range(u):
                acc += E0[i, l] * Y[l, j]
            Sm[i, j] = Sm[j, i] = acc
    Si = _inverse(Sm)
    mu = np.zeros((r + 1, s))
    top = np.empty(u)
    z = np.empty(u)
    rhs = np.empty(s)
    for k in range(r + 1):
        for l in range(u):                                     # t = Σ_{a≥1} E^(a)ᵀ μ^(k−a)
            acc = 0.0
            for a in range(1, k + 1):
                f = binom[k, a]
                for i in range(s):
                    acc += f * E[a, i, l] * mu[k - a, i]
            top[l] = acc
        for l in range(u):                                     # z = R⁻¹ t
            if Ri.shape[0]:
                acc = 0.0
                for t in range(u):
                    acc += Ri[l, t] * top[t]
                z[l] = acc
            else:
                z[l] = top[l]
        for i in range(s):                                     # b − E₀ z
            acc = w[k, i]
            for a in range(1, k + 1):
                f = binom[k, a]
                for l in range(u):
                    acc -= f * E[a, i, l] * x[k - a, l]
            for l in range(u):
                acc -= E0[i, l] * z[l]
            rhs[i] = acc
        for i in range(s):
            acc = 0.0
            for j in range(s):
                acc += Si[i, j] * rhs[j]
            mu[k, i] = acc
        for l in range(u):                                     # x = z + R⁻¹ E₀ᵀ μ
            acc = z[l]
            for i in range(s):
                acc += Y[l, i] * mu[k, i]
            x[k, l] = acc


@njit
def _on_independent_rows(E, w, R, r, binom, rank, x):
    """For ``E₀`` of rank below its rows (an under-actuated base, six
    coplanar rotors): the minimum-norm jets ``x`` on ``rank`` independent
    rows (Gram–Schmidt with pivoting by the largest remainder), and whether
    every other row holds to round-off, ``|(E x − w)^(k)_i| ≤ RESIDUAL_RTOL
    max_i (Σ_a C(k,a) |E^(a)| |x^(k−a)| + |w^(k)|)_i`` (SPEC §13.3): a motion
    the actuators can produce."""
    s, u = E.shape[1], E.shape[2]
    X = E[0].copy()
    keep = np.zeros(s, np.bool_)
    for _ in range(rank):
        best, i = -1.0, 0
        for t in range(s):
            if not keep[t]:
                nt = np.sqrt(np.sum(X[t] * X[t]))
                if nt > best:
                    best, i = nt, t
        keep[i] = True
        e = X[i] / best
        for t in range(s):
            X[t] -= np.sum(X[t] * e) * e
    rows = np.nonzero(keep)[0]
    Ek = np.empty((r + 1, rows.shape[0], u))
    wk = np.empty((r + 1, rows.shape[0]))
    for k in range(r + 1):
        for j in range(rows.shape[0]):
            Ek[k, j] = E[k, rows[j]]
            wk[k, j] = w[k, rows[j]]
    _min_norm_jets(Ek, wk, R, r, binom, x)
    for k in range(r + 1):
        worst, size = 0.0, 0.0
        for i in range(s):
            acc, mag = -w[k, i], abs(w[k, i])
            for a in range(k + 1):
                f = binom[k, a]
                for l in range(u):
                    acc += f * E[a, i, l] * x[k - a, l]
                    mag += f * abs(E[a, i, l]) * abs(x[k - a, l])
            worst, size = max(worst, abs(acc)), max(size, mag)
        if worst > RESIDUAL_RTOL * size:
            return False
    return True


@njit
def _least_squares_jets(E, w, r, binom, x):
    """Jets of the least-squares ``x`` (``E₀`` of full column rank):
    ``Σ_a binom(k, a) (EᵀE)^(a) x^(k−a) = (Eᵀ w)^(k)``."""
    s, u = E.shape[1], E.shape[2]
    EtE = np.zeros((r + 1, u, u))
    Etw = np.zeros((r + 1, u))
    for k in range(r + 1):
        for a in range(k + 1):
            f = binom[k, a]
            for l in range(u):
                for i in range(s):
                    Etw[k, l] += f * E[a, i, l] * w[k - a, i]
                    for t in range(u):
                        EtE[k, l, t] += f * E[a, i, l] * E[k - a, i, t]
    inv0 = np.linalg.inv(EtE[0])
    b = np.empty(u)
    for k in range(r + 1):
        for l in range(u):
            acc = Etw[k, l]
            for a in range(1, k + 1):
                for t in range(u):
                    acc -= binom[k, a] * EtE[a, l, t] * x[k - a, t]
            b[l] = acc
        for l in range(u):
            acc = 0.0
            for t in range(u):
                acc += inv0[l, t] * b[t]
            x[k, l] = acc
