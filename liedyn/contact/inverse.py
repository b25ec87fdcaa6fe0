"""Constrained inverse dynamics of order r: the joint forces and the contact
forces that produce a motion held by constraints (SPEC §13.3).

Glossary
--------
==========  ==================  ==========================================
``J``       (r+2, m, nv)        constraint Jacobian jets ``J^(0..r+1)``
``A``       (r+1, 6, m)         base block of ``Jᵀ``: the unit contact
                                wrenches about the world origin
``Jq``      (r+1, n, m)         joint rows of ``Jᵀ``
``E``       (r+1, s, u)         the rows that determine the unknowns ``x``
                                (base rows, passive joints) against them
``x``       (r+1, u)            the unknowns: ``λ`` and the efforts of the
                                declared base actuators
``w``       (r+1, s)            what those rows must supply, ``τ̄^ID − τ̄``
==========  ==================  ==========================================

Order k (one matrix for every order, the weighted minimum-norm solution
``min ½ xᵀ R x`` s.t. ``E x = w`` differentiated k times):

    [ R   −E₀ᵀ ] [ x^(k) ]   [ Σ_{a=1}^{k} binom(k, a) E^(a)ᵀ μ^(k−a)       ]
    [ E₀   0   ] [ μ^(k) ] = [ w^(k) − Σ_{a=1}^{k} binom(k, a) E^(a) x^(k−a)  ]

    τ^(k) = τ^ID,(k) − Σ_{a=0}^{k} binom(k, a) J_q^(a)ᵀ λ^(k−a)

One compiled kernel does every order: the inverse dynamics of order r
(:func:`liedyn.algorithm.inverse.inverse_dynamics_kernel`), the point and
Jacobian jets of :mod:`liedyn.contact.rows`, the check that the motion
keeps the constraints, and the split. The KKT matrix is factored once
through its Schur complement ``S = E₀ R⁻¹ E₀ᵀ`` (``x = R⁻¹ (t + E₀ᵀ μ)``,
``S μ = b − E₀ R⁻¹ t`` for the right-hand side ``(t, b)`` of order k), and
each order is one solve with it.
"""

import numpy as np

from .._checks import (OK, about_base, applied_arg, as_array, check_applied_slow, check_jet,
                       check_motion_slow, motion_args, raise_for)
from .._jit import Kernel, njit
from ..algorithm.frames import inverse_adjoint_jet
from ..algorithm.inverse import inverse_dynamics_kernel
from ..multibody.model import check_model_order
from ..multibody.results import _frozen_setattr
from ..multibody.workspace import binomials, workspace_for
from .constraints import KIND_6D, KIND_STOP, check_constraints
from .forward import row_name
from .results import _Forces
from .rows import _force, contact_points, jacobian_jets_kernel, point_jets

__all__ = ["constrained_inverse_dynamics", "ConstrainedInverseDynamicsResult"]

_setattr = object.__setattr__

# A motion whose constraint rate (J ν)^(k) exceeds this fraction of the size
# of its terms Σ_a binom(k, a) |J^(a)| |ν^(k−a)|, and CONSISTENCY_ATOL (SI
# units: m/s^(k+1), rad/s^(k+1)), is refused. The absolute floor admits the
# round-off of a robot at rest, whose accelerations are sums of terms of the
# size of gravity that cancel to ~1e-13 and leave nothing to be relative to.
CONSISTENCY_RTOL = 1e-8
CONSISTENCY_ATOL = 1e-10
RANK_RTOL = 1e-10
# A row the independent rows do not carry is met when its residual is at
# most this times the largest term of its order (round-off of the wrench).
RESIDUAL_RTOL = 1e-10


class ConstrainedInverseDynamicsResult(_Forces):
    """Output of :func:`liedyn.constrained_inverse_dynamics` of order ``r``.

    Attributes
    ----------
    tau : (r+1, n)
        Joint force jets ``τ^(k)`` (zero, to round-off, on passive joints).
    base_wrench : (r+1, 6)
        The base actuators' wrench jet (world frame, about the world origin):
        the given one plus the declared actuators' share; for a fixed base the
        support reaction.
    force : (r+1, m)
        Constraint-force jets ``λ^(k)``, reported form (SPEC §13.1).
    base_effort : (r+1, p)
        Efforts of the declared base actuators (``base_actuation`` columns);
        empty when none.
    residual : (r+1, s)
        ``E x − w`` of the rows the forces had to satisfy (zero unless
        ``least_squares``).
    constraints : ConstraintSet
    """

    __slots__ = ("tau", "base_wrench", "force", "base_effort", "residual", "constraints")
    __setattr__ = _frozen_setattr

    def __init__(self, tau, base_wrench, force, base_effort, residual, constraints):
        # _freeze, spelt out: on every call's path
        for name, v in (("tau", tau), ("base_wrench", base_wrench), ("force", force),
                        ("base_effort", base_effort), ("residual", residual)):
            if isinstance(v, np.ndarray):
                v.setflags(write=False)
            _setattr(self, name, v)
        _setattr(self, "constraints", constraints)

    def __repr__(self):
        return (f"ConstrainedInverseDynamicsResult(tau={self.tau.shape}, "
                f"force={self.force.shape})")


def _joint_list(model, joints, name):
    """Indices (q columns) of the joints named or indexed in ``joints``."""
    if joints is None:
        return np.zeros(0, np.int64)
    if isinstance(joints, (str, int, np.integer)):
        joints = [joints]
    out = []
    for j in joints:
        if isinstance(j, str):
            if j not in model.joint_names:
                raise ValueError(f"{name}: no joint called {j!r}")
            out.append(model.joint_names.index(j))
        elif isinstance(j, (int, np.integer)) and not isinstance(j, bool):
            if not 0 <= j < model.n_joints:
                raise ValueError(f"{name}: joint index {j} out of range [0, {model.n_joints})")
            out.append(int(j))
        else:
            raise TypeError(f"{name}: expected joint names or q column indices, got "
                            f"{type(j).__name__}")
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: a joint is listed twice")
    return np.array(out, np.int64)


def _weight_arg(weight, u):
    """``R`` (u, u), symmetric positive definite."""
    if weight is None:
        return np.eye(u)
    R = as_array(weight, "weight")
    if R.shape == (u,):
        if not np.all(R > 0):
            raise ValueError("weight: the diagonal weights must be > 0")
        return np.diag(R)
    if R.shape != (u, u):
        raise ValueError(f"weight: expected shape ({u},) or ({u}, {u}) (one per force row and "
                         f"base effort), got {R.shape}")
    if not np.allclose(R, R.T, rtol=1e-12, atol=0.0) or np.linalg.eigvalsh(R).min() <= 0:
        raise ValueError("weight: expected a symmetric positive definite matrix")
    return 0.5 * (R + R.T)


def _consistency(cs, J, nu, r):
    """Refuse a motion that leaves the constraints: ``(J ν)^(k)``, ``k = 0..r+1``
    (the NumPy form of :func:`_motion_rates`, for :mod:`liedyn.contact.friction`)."""
    B = binomials(r + 2)
    for k in range(r + 2):
        rate = np.zeros(cs.n_rows)
        size = np.zeros(cs.n_rows)
        for a in range(k + 1):
            t = B[k, a] * J[a] @ nu[k - a]
            rate += t
            size += B[k, a] * np.abs(J[a]) @ np.abs(nu[k - a])
        bad = np.abs(rate) > CONSISTENCY_RTOL * np.maximum(size, 1e-300)
        bad &= np.abs(rate) > CONSISTENCY_ATOL
        if np.any(bad):
            i = int(np.argmax(np.where(bad, np.abs(rate) / np.maximum(size, 1e-300), 0)))
            what = "velocity" if k == 0 else f"derivative {k} of the velocity"
            raise ValueError(f"base_twist, q: the motion violates constraint "
                             f"{row_name(cs, i)!r}: the {what} (J ν)^({k}) is {rate[i]:.3e} "
                             f"(terms of size {size[i]:.3e}); pass a motion that keeps the "
                             f"constraints (J ν = 0 and its derivatives)")


def _independent_rows(E0, rank):
    """``rank`` rows of ``E0`` that are linearly independent, picked greedily
    by the largest remainder (Gram–Schmidt with pivoting), in order."""
    X = np.array(E0, float)
    keep = []
    for _ in range(rank):
        norms = np.linalg.norm(X, axis=1)
        norms[keep] = -1.0
        i = int(np.argmax(norms))
        keep.append(i)
        e = X[i] / norms[i]
        X -= np.outer(X @ e, e)
    return sorted(keep)


def _kkt_jets(E, w, R, r, B):
    """Jets of ``argmin ½ xᵀ R x  s.t.  E x = w`` for ``E`` of full row rank:
    one KKT matrix, one solve per order (SPEC §13.3)."""
    s, u = E.shape[1:]
    x = np.zeros((r + 1, u))
    mu = np.zeros((r + 1, s))
    K = np.block([[R, -E[0].T], [E[0], np.zeros((s, s))]])
    lu = np.linalg.inv(K)
    for k in range(r + 1):
        top = sum((B[k, a] * E[a].T @ mu[k - a] for a in range(1, k + 1)), np.zeros(u))
        bot = w[k] - sum((B[k, a] * E[a] @ x[k - a] for a in range(1, k + 1)), np.zeros(s))
        y = lu @ np.concatenate([top, bot])
        x[k], mu[k] = y[:u], y[u:]
    return x


def _residual(E, x, w, r, B):
    """``(E x − w)^(k)`` and the size of its terms, ``Σ_a C(k,a) |E^(a)| |x^(k−a)|
    + |w^(k)|``, per order."""
    res = np.array([sum(B[k, a] * E[a] @ x[k - a] for a in range(k + 1)) - w[k]
                    for k in range(r + 1)])
    size = np.array([sum(B[k, a] * np.abs(E[a]) @ np.abs(x[k - a]) for a in range(k + 1))
                     + np.abs(w[k]) for k in range(r + 1)])
    return res, size


def _solve_min_norm(E, w, R, r, B, least_squares, cs, labels):
    """Jets ``x^(0..r)`` of ``argmin ½ xᵀ R x  s.t.  E x = w``, with the
    residual jets ``E x − w``. NumPy, for :mod:`liedyn.contact.friction`;
    the compiled form is :func:`constrained_inverse_kernel`'s.

    Full row rank: the KKT system. Rank below the rows (an under-actuated
    base, six coplanar rotors): the rows of an independent subset carry the
    constraints; the others hold for a motion the actuators can produce, and
    are accepted when their residual is round-off, at most
    :data:`RESIDUAL_RTOL` of the largest term of its order. Otherwise, with
    ``least_squares`` and full column rank, the least-squares ``x``."""
    s, u = E.shape[1:]
    x = np.zeros((r + 1, u))
    if s == 0:
        return x, np.zeros((r + 1, 0))
    rank = np.linalg.matrix_rank(E[0], tol=RANK_RTOL * max(np.abs(E[0]).max(), 1e-300))
    if rank == s:
        x = _kkt_jets(E, w, R, r, B)
        return x, _residual(E, x, w, r, B)[0]
    if rank > 0:
        keep = _independent_rows(E[0], rank)                       # SPEC §13.3
        x = _kkt_jets(E[:, keep], w[:, keep], R, r, B)
    res, size = _residual(E, x, w, r, B)
    if np.all(np.abs(res) <= RESIDUAL_RTOL * size.max(axis=1, keepdims=True)):
        return x, res
    if least_squares and rank == u:
        # (EᵀE) x = Eᵀ w, differentiated: Σ binom (EᵀE)^(a) x^(k−a) = (Eᵀ w)^(k)
        EtE = np.array([sum(B[k, a] * E[a].T @ E[k - a] for a in range(k + 1)) for k in range(r + 1)])
        Etw = np.array([sum(B[k, a] * E[a].T @ w[k - a] for a in range(k + 1)) for k in range(r + 1)])
        inv0 = np.linalg.inv(EtE[0])
        for k in range(r + 1):
            x[k] = inv0 @ (Etw[k] - sum((B[k, a] * EtE[a] @ x[k - a] for a in range(1, k + 1)),
                                        np.zeros(u)))
        return x, _residual(E, x, w, r, B)[0]
    k, i = np.unravel_index(int(np.argmax(np.abs(res) / np.maximum(size.max(axis=1, keepdims=True),
                                                                    1e-300))), res.shape)
    what = "" if k == 0 else f" (derivative {k})"
    hint = ("; pass least_squares=True for the least-squares forces and their residual"
            if rank == u and not least_squares else "")
    raise ValueError(f"constraints: the contacts {list(cs.names)} and base actuators cannot "
                     f"supply the base wrench and passive-joint forces: rank {rank} for {s} "
                     f"rows and {u} unknowns; residual {abs(res[k, i]):.3e}{what} on "
                     f"{labels[i]} against terms of size {size[k].max():.3e}{hint}")


# kernel statuses of this module (below the library's own and liedyn.contact.forward's)
LEAVES = -32              # the motion leaves a constraint: (J ν)^(k) ≠ 0
CANNOT_SUPPLY = -33       # the rows that determine the unknowns have too low a rank
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
def _row_columns(model, cd, nb, cols, ncol):
    """``cols[c, :ncol[c]]``: the columns of ``J`` where the rows of
    constraint ``c`` can be nonzero (the base block and the joints of the
    paths from the base to its bodies; a joint stop: its joint)."""
    parent = model.body_parent
    seen = np.zeros(parent.shape[0], np.bool_)
    for c in range(cd.kind.shape[0]):
        if cd.kind[c] == KIND_STOP:
            cols[c, 0] = nb + cd.body_a[c] - 1
            ncol[c] = 1
            continue
        t = 0
        for v in range(nb):
            cols[c, t] = v
            t += 1
        seen[:] = False
        for j in (cd.body_a[c], cd.body_b[c]):
            while j > 0 and not seen[j]:
                seen[j] = True
                cols[c, t] = nb + j - 1
                t += 1
                j = parent[j]
        ncol[c] = t


@njit
def _motion_rates(J, Vb, q, K, binom, nb, cd, cols, ncol, info):
    """Refuse a motion that leaves the constraints: ``(J ν)^(k)``, ``k =
    0..K``, against the size of its terms ``Σ_a binom(k, a) |J^(a)|
    |ν^(k−a)|`` (``ν = (V₀, q̇)``); ``info`` gets ``(k, row, rate, size)`` of
    the worst row of the first order with a violation."""
    for k in range(K + 1):
        worst = -1.0
        for c in range(cd.kind.shape[0]):
            for i in range(cd.row[c], cd.row[c + 1]):
                rate = 0.0
                size = 0.0
                for a in range(k + 1):
                    f = binom[k, a]
                    row = J[a, i]
                    t = k - a
                    for e in range(ncol[c]):
                        v = cols[c, e]
                        x = Vb[t, v] if v < nb else q[t + 1, v - nb]
                        rate += f * row[v] * x
                        size += f * abs(row[v]) * abs(x)
                d = max(size, 1e-300)
                if (abs(rate) > CONSISTENCY_RTOL * d and abs(rate) > CONSISTENCY_ATOL
                        and abs(rate) / d > worst):
                    worst = abs(rate) / d
                    info[0], info[1], info[2], info[3] = k, i, rate, size
        if worst >= 0.0:
            return LEAVES
    return OK


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


@njit
def _support_reaction(cd, o, Pa, Pb, lam, r, binom, W0):
    """``W₀^(k) −=`` the total wrench jets (about the world origin) that the
    forces ``λ`` apply to the bodies of a fixed-base robot: ``T(p_a)ᵀ λ`` at
    a world contact, ``((p_a − p_b) × f, 0)`` between two bodies (a 6-D pair
    and a joint stop's pair cancel)."""
    for c in range(cd.kind.shape[0]):
        b, kind, r0 = cd.body_b[c], cd.kind[c], cd.row[c]
        if kind == KIND_STOP or (kind == KIND_6D and b >= 0):
            continue
        for k in range(r + 1):
            if b < 0:
                f0, f1, f2 = _force(cd, c, lam[k])
                W0[k, 3] -= f0
                W0[k, 4] -= f1
                W0[k, 5] -= f2
                if kind == KIND_6D:
                    for i in range(3):
                        W0[k, i] -= lam[k, r0 + i]
            for a in range(k + 1):
                f0, f1, f2 = _force(cd, c, lam[k - a])
                x, y, z = Pa[a, c, 0], Pa[a, c, 1], Pa[a, c, 2]
                if b >= 0:
                    x, y, z = x - Pb[a, c, 0], y - Pb[a, c, 1], z - Pb[a, c, 2]
                elif a == 0:
                    x, y, z = x + o[0], y + o[1], z + o[2]
                g = binom[k, a]
                W0[k, 0] -= g * (y * f2 - z * f1)
                W0[k, 1] -= g * (z * f0 - x * f2)
                W0[k, 2] -= g * (x * f1 - y * f0)


@njit
def constrained_inverse_kernel(model, ws, cd, C0, about_base, Vb, q, W_app, r, solve, W_known,
                               pas, Bw, R, given, least_squares, J, lam, ue, res, info):
    """Orders ``0..r`` of SPEC §13.3: ``τ`` into ``ws.tau``, the base wrench
    into ``ws.base_wrench``, ``λ``, the base efforts ``ue`` and the residual
    ``res`` (``s`` rows) of the rows that determine them; ``J`` (r+2, m, nv)
    gets ``J^(0..r+1)``. ``W_known`` (r+1, 6) or empty: the base actuators'
    known wrench; ``pas``: the passive joints' q columns; ``Bw`` (r+1, 6, p):
    the declared base actuators' wrench jets; ``R`` (u, u) or empty (``I``);
    ``given`` (r+1, m) or empty: the forces, if known. ``solve = False``
    stops after the motion's check. Returns a status; ``LEAVES`` with
    ``info = (k, row, rate, size)``, ``CANNOT_SUPPLY`` with ``info[0]`` the
    rank (``ws.tau`` and ``ws.base_wrench`` still those of the
    unconstrained inverse dynamics)."""
    status = inverse_dynamics_kernel(model, ws, C0, about_base, Vb, q, W_app, r)  # τ^ID, W₀^ID
    if status != OK:
        return status
    nc, m, n = cd.kind.shape[0], cd.row[-1], ws.tau.shape[1]
    fb = model.floating_base
    nb = 6 if fb else 0
    K = r + 1
    binom, tau, W0 = ws.binom, ws.tau, ws.base_wrench
    for k in range(K + 2):                                     # a joint stop's row reads ws.q
        for j in range(n):
            ws.q[k, j] = q[k, j]
    P = np.zeros((2, K + 1, nc, 3))
    Pa, Pb = P[0], P[1]
    contact_points(cd, ws, Pa, Pb)
    for k in range(1, K + 1):
        point_jets(cd, ws, Pa, Pb, k)                          # p^(k) from V^(0..k−1)
    jacobian_jets_kernel(model, ws, cd, Pa, Pb, K, J)
    cols = np.empty((nc, nb + n), np.int64)
    ncol = np.empty(nc, np.int64)
    _row_columns(model, cd, nb, cols, ncol)
    status = _motion_rates(J, Vb, q, K, binom, nb, cd, cols, ncol, info)
    if status != OK or not solve:
        return status
    p = Bw.shape[2]
    u = m + p
    known = W_known.shape[0] > 0
    x = np.zeros((r + 1, u))
    if given.shape[0] > 0:
        for k in range(r + 1):
            for l in range(m):
                x[k, l] = given[k, l]
    else:
        s = nb + pas.shape[0]
        E = np.zeros((r + 1, s, u))
        w = np.zeros((r + 1, s))
        for k in range(r + 1):
            for i in range(s):
                col = i if i < nb else nb + pas[i - nb]
                for l in range(m):
                    E[k, i, l] = J[k, l, col]                  # Jᵀ's base and passive rows
                if i < nb:
                    for l in range(p):
                        E[k, i, m + l] = Bw[k, i, l]
                    w[k, i] = W0[k, i] - (W_known[k, i] if known else 0.0)
                else:
                    w[k, i] = tau[k, pas[i - nb]]
        rank = _row_rank(E[0])
        if rank == s:
            _min_norm_jets(E, w, R, r, binom, x)
        elif not (rank > 0 and _on_independent_rows(E, w, R, r, binom, rank, x)):
            if least_squares and rank == u:
                _least_squares_jets(E, w, r, binom, x)
            else:
                info[0] = rank
                return CANNOT_SUPPLY
        for k in range(r + 1):                                 # E x − w
            for i in range(s):
                acc = -w[k, i]
                for a in range(k + 1):
                    f = binom[k, a]
                    for l in range(u):
                        acc += f * E[a, i, l] * x[k - a, l]
                res[k, i] = acc
    for k in range(r + 1):
        for l in range(m):
            lam[k, l] = x[k, l]
        for l in range(p):
            ue[k, l] = x[k, m + l]
    gen = np.zeros(nb + n)
    for k in range(r + 1):
        gen[:] = 0.0
        for a in range(k + 1):                                 # (Jᵀλ)^(k)
            f = binom[k, a]
            for c in range(nc):
                for l in range(cd.row[c], cd.row[c + 1]):
                    g = f * lam[k - a, l]
                    for e in range(ncol[c]):
                        v = cols[c, e]
                        gen[v] += g * J[a, l, v]
        for j in range(n):
            tau[k, j] -= gen[nb + j]                           # τ^ID − (J_qᵀλ)^(k)
        if fb and given.shape[0] > 0:
            for i in range(6):
                W0[k, i] -= gen[i]
        elif fb:
            for i in range(6):
                acc = W_known[k, i] if known else 0.0
                for a in range(k + 1):
                    for l in range(p):
                        acc += binom[k, a] * Bw[a, i, l] * ue[k - a, l]
                W0[k, i] = acc
    if not fb:
        _support_reaction(cd, ws.o, Pa, Pb, lam, r, binom, W0)
    return OK


_CONSTRAINED_INVERSE = Kernel(constrained_inverse_kernel)

_NO_WRENCH = np.zeros((0, 6))
_NO_JOINTS = np.zeros(0, np.int64)
_NO_ACTUATORS = np.zeros((0, 6, 0))
_NO_MATRIX = np.zeros((0, 0))
_DEFAULTS = (_NO_WRENCH, _NO_JOINTS, _NO_ACTUATORS, _NO_MATRIX, _NO_MATRIX)


def _split_args(model, cs, base_pose, base_twist, q, r, base_wrench, base_actuation, passive,
                force, weight):
    """``(W_known, passive columns, Bw, R, given)`` for the kernel, checked
    in the order the arguments are documented."""
    fb, m = model.floating_base, cs.n_rows
    W_known, Bw, R, given = _DEFAULTS[0], _DEFAULTS[2], _DEFAULTS[3], _DEFAULTS[4]
    if base_wrench is not None:
        if not fb:
            raise ValueError("base_wrench: a fixed base has no actuators; its reaction is "
                             "returned (pass None)")
        W_known = np.ascontiguousarray(check_jet(base_wrench, "base_wrench", (r + 1, 6)), float)
    pas = _joint_list(model, passive, "passive")
    if base_actuation is not None:
        if not fb:
            raise ValueError("base_actuation: a fixed base has no actuators")
        Ba = as_array(base_actuation, "base_actuation", ndim=2)
        if Ba.shape[0] != 6:
            raise ValueError(f"base_actuation: expected shape (6, p), got {Ba.shape}")
        C0, Vj, _ = check_motion_slow(model, base_pose, base_twist, q, r + 2, r + 3)
        H = inverse_adjoint_jet(C0, Vj, r)                  # Ad_{C₀⁻¹}^(a)
        Bw = np.ascontiguousarray(np.einsum("kji,jp->kip", H, Ba), float)  # world
    if force is not None:
        given = np.ascontiguousarray(check_jet(force, "force", (r + 1, m)), float)
        if base_actuation is not None or passive is not None:
            raise ValueError("force: with the forces given there is nothing to solve for; "
                             "drop base_actuation and passive")
        return W_known, pas, Bw, R, given
    if not fb and not pas.size:
        raise ValueError("force: a fixed base without passive joints gives no equation for "
                         "the constraint forces; pass them as force=, or declare passive "
                         "joints")
    if weight is not None:
        R = np.ascontiguousarray(_weight_arg(weight, m + Bw.shape[2]), float)
    return W_known, pas, Bw, R, given


def _cannot_supply(model, cs, ws, W_known, pas, Bw, J0, rank, least_squares):
    """The error of contacts whose rows cannot determine the unknowns, with
    the least-squares residual (``ws`` holds the unconstrained inverse
    dynamics)."""
    fb = model.floating_base
    nb = 6 if fb else 0
    rows = list(range(nb)) + [nb + int(i) for i in pas]
    labels = ([f"base wrench component {i}" for i in range(6)] if fb else []) + \
             [f"passive joint {model.joint_names[i]!r}" for i in pas]
    E0 = np.zeros((len(rows), cs.n_rows + Bw.shape[2]))
    E0[:, :cs.n_rows] = J0.T[rows]
    w0 = ws.tau[0, pas]
    if fb:
        if Bw.shape[2]:
            E0[:6, cs.n_rows:] = Bw[0]
        w0 = np.concatenate([ws.base_wrench[0] - (W_known[0] if W_known.size else 0.0), w0])
    u = E0.shape[1]
    x0, *_ = np.linalg.lstsq(E0, w0, rcond=None)
    res = E0 @ x0 - w0
    i = int(np.argmax(np.abs(res)))
    hint = ("; pass least_squares=True for the least-squares forces and their residual"
            if rank == u and not least_squares else "")
    return ValueError(f"constraints: the contacts {list(cs.names)} cannot supply the base "
                      f"wrench and passive-joint forces: rank {rank} for {len(rows)} rows and "
                      f"{u} unknowns; least-squares residual {np.abs(res).max():.3e} on "
                      f"{labels[i]}{hint}")


def _leaves_message(cs, info):
    """What a ``LEAVES`` status means, from the kernel's ``info``."""
    k, i, rate, size = int(info[0]), int(info[1]), info[2], info[3]
    what = "velocity" if k == 0 else f"derivative {k} of the velocity"
    return (f"base_twist, q: the motion violates constraint {row_name(cs, i)!r}: the {what} "
            f"(J ν)^({k}) is {rate:.3e} (terms of size {size:.3e}); pass a motion that keeps "
            f"the constraints (J ν = 0 and its derivatives)")


def constrained_inverse_dynamics(model, constraints, base_pose, base_twist, q, order, *,
                                 base_wrench=None, base_actuation=None, passive=None, force=None,
                                 weight=None, applied=None, least_squares=False):
    """Joint-force and constraint-force jets of a motion held by constraints
    (SPEC §13.3): ``τ^(0..order)`` and ``λ^(0..order)``.

    The base rows of the equations of motion say what the contacts must
    supply: ``A λ = W₀^ID − W₀`` with ``W₀^ID`` the base wrench of
    :func:`liedyn.inverse_dynamics` for the same motion and ``W₀`` the base
    actuators' wrench; rows of joints declared ``passive`` (``τ = 0``) add
    their equations (loops). With more unknowns than rows, ``λ`` is the
    weighted minimum-norm solution ``min ½ λᵀ R λ`` in the reported metric,
    and its jets are the derivatives of that instantaneous solution (one
    KKT matrix for every order). Then
    ``τ^(k) = τ^ID,(k) − Σ_a binom(k, a) J_q^(a)ᵀ λ^(k−a)``.

    Parameters
    ----------
    model : Model
    constraints : ConstraintSet
    base_pose : (4, 4) or None
    base_twist : (order+2, 6) or None (more rows: the first order+2 are read)
    q : (order+3, n) (more rows: the first order+3 are read)
        Motion jets that keep the constraints (``J ν = 0`` and its
        derivatives up to ``order + 1``); checked.
    order : int ≥ 0
    base_wrench : (order+1, 6) or None, keyword
        The base actuators' known wrench jet (world frame, about the world
        origin); ``None``: zero (a legged robot's unactuated base). A fixed
        base takes ``None``: its reaction is returned.
    base_actuation : (6, p) or None, keyword
        Base actuators with unknown efforts: column ``i`` is the wrench
        (moment, force) of a unit effort in the base body's frame (a drone's
        thrust: ``(0, 0, 0, 0, 0, 1)``; a fully actuated base: ``I₆``); the
        efforts join ``λ`` in the minimum-norm problem. With fewer
        independent columns than six (a quadrotor's allocation, rank 4; six
        coplanar rotors, rank 4) the base wrench must be one they produce:
        a motion whose residual is round-off (:data:`RESIDUAL_RTOL` of its
        terms) is accepted, the efforts split by minimum norm.
    passive : sequence of joint names or q columns, keyword
        Joints without actuators (``τ = 0``): their rows determine loop forces.
    force : (order+1, m) or None, keyword
        The constraint-force jets, if known (a fixed base without passive
        joints needs them): then nothing is solved for.
    weight : (u,) or (u, u), keyword
        ``R`` over ``(λ, base efforts)``, positive definite; default ``I``.
    applied : (order+1, N, 6), keyword
        Applied wrench jets, as :func:`liedyn.inverse_dynamics`.
    least_squares : bool, keyword
        When the rows cannot be met exactly (e.g. one point foot cannot
        supply a base moment), return the least-squares forces and their
        ``residual`` instead of raising.

    Returns
    -------
    ConstrainedInverseDynamicsResult

    Raises
    ------
    ValueError, TypeError
        Bad arguments (the message names them); a motion that violates a
        constraint (naming it, with the residual); contacts that cannot
        supply the base wrench (naming them, with the least-squares
        residual); a fixed base with neither passive joints nor ``force``.
    """
    r = check_model_order(model, order)
    cs = check_constraints(model, constraints)
    C0, Vb, qj = motion_args(model, base_pose, base_twist, q, r + 2, r + 3)
    Wa = applied_arg(model, applied, r + 1)
    late = None
    if (base_wrench is None and base_actuation is None and passive is None and force is None
            and weight is None and model.floating_base):
        split = _DEFAULTS
    else:
        try:
            split = _split_args(model, cs, base_pose, base_twist, q, r, base_wrench,
                                base_actuation, passive, force, weight)
        except (ValueError, TypeError) as e:    # raised after the motion's own checks
            split, late = _DEFAULTS, e
    W_known, pas, Bw, R, given = split
    m = cs.n_rows
    s = 0 if given.shape[0] else (6 if model.floating_base else 0) + pas.shape[0]
    ws = workspace_for(model, r, None)
    J = np.empty((r + 2, m, model.nv))
    lam = np.empty((r + 1, m))
    ue = np.empty((r + 1, Bw.shape[2]))
    res = np.zeros((r + 1, s))
    info = np.zeros(4)
    status, _ = ws._serve(_CONSTRAINED_INVERSE, model, cs.data, C0, about_base("world"), Vb, qj,
                          Wa, r, late is None, W_known, pas, Bw, R, given, bool(least_squares),
                          J, lam, ue, res, info)
    if status == LEAVES:
        raise ValueError(_leaves_message(cs, info))
    if status == CANNOT_SUPPLY:
        raise _cannot_supply(model, cs, ws, W_known, pas, Bw, J[0], int(info[0]), least_squares)
    if status != OK:
        raise_for(status, model, lambda: (
            check_motion_slow(model, base_pose, base_twist, q, r + 2, r + 3),
            check_applied_slow(model, applied, r + 1)))
    if late is not None:
        raise late
    return ConstrainedInverseDynamicsResult(tau=ws.tau.copy(), base_wrench=ws.base_wrench.copy(),
                                            force=lam, base_effort=ue, residual=res,
                                            constraints=cs)
