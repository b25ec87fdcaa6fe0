"""Constrained forward dynamics of order r on the articulated-body passes
(SPEC §13.2, recursive form).

Order k, given everything of orders ``0..k−1``:

1. the constraint forces' known wrench terms of order k,
   ``Σ_{a=1}^{k} binom(k, a) T(p^(a))ᵀ λ^(k−a)`` (the point jets ``p^(a)``
   of the contact points), pure moments, join the applied wrenches of the
   bias pass (they are added to ``W^(k)`` before it, as ``−W_app``);
2. the bias pass of order k (H-GABI-FBS, SPEC §5) without ``λ^(k)``, and
   the free motion ``ν_f^(k+1)`` it gives on the paths from the base to the
   constrained bodies, which is all the free rate ``e_k = (J ν)^(k+1)_f``
   (plus the Baumgarte terms) reads;
3. ``λ^(k) = −Λ e_k`` with ``Λ⁻¹ = J M⁻¹ Jᵀ`` (pseudo-inverse when the
   constraints are redundant); its wrenches join the articulated bias of
   their bodies' ancestors (the bias pass is linear in the applied wrenches;
   a joint stop's force joins ``q̃_j`` as a joint force),
   and the recovery pass of order k gives the final ``V^(k+1)``, ``q^(k+2)``,
   ``W^(k)`` and ``c^(k+2)``.

The responses to a unit force along each row of ``λ`` are ``m`` solves
against the articulated inertias (the linear part of one articulated-body
step), formed once per call with ``Λ⁻¹``, each only along the paths from
the base to the constrained bodies; every order reuses ``Λ``, as it reuses
``M^A`` (Lemma 2). ``Λ`` is the inverse of ``Λ⁻¹`` from its Cholesky
factor when that proves ``Λ⁻¹`` well conditioned (``κ∞(Λ⁻¹) · rank_rtol <
1/2``, which bounds every eigenvalue above ``rank_rtol`` times the largest),
else its pseudo-inverse from the eigendecomposition.

Glossary (``model``, ``ws``, ``cd``: compiled handles; every spatial
quantity about the base origin ``o``, SPEC §1)
----------------------------------------------------------------------
==========  ================  ============================================
``Pa, Pb``  (r+3, nc, 3)      point jets ``p^(k)`` of each constraint's two
                              points (``Pb``: the anchor, at rest, for a
                              world contact; a rolling contact's touching
                              point, a joint stop's ``q_j^(k)``: see
                              :mod:`liedyn.contact.rows`)
``RV``      (m, N, 6)         response ``ΔV_j`` to a unit ``λ_i`` (only on
                              the paths from the base to the constrained
                              bodies, which is all ``Λ⁻¹`` needs)
``G``       (m, m)            ``Λ⁻¹ = J M⁻¹ Jᵀ``
``Gp``      (m, m)            its inverse, or pseudo-inverse, ``Λ``
``lam``     (r+1, m)          output: ``λ^(0..r)`` (reported form, SPEC §13.1)
==========  ================  ============================================
"""

import numpy as np

from .._checks import NOT_FINITE, OK, _all_finite, about_base, applied_arg, motion_args
from .._jit import Kernel, njit
from ..algorithm.articulated import (articulated_factor, bias_pass, cholesky6_solve,
                                     configuration, recover)
from ..algorithm.forward import (base_outputs, check_forward_args, force_args, load_state,
                                raise_forward_args)
from ..multibody.model import check_model_order
from ..spatial.se3 import _shift_wrench_acc
from ..multibody.workspace import holder, workspace_for
from .constraints import KIND_6D, KIND_STOP, check_constraints
from .results import ConstrainedForwardDynamicsResult
# the rows of each kind; liedyn.simulation imports these from here too
from .rows import (NOT_ANCHORED, _force, _response_rate, _row_direction,  # noqa: F401
                   constraint_error_kernel, constraint_rate, contact_points, error_rate,
                   point_jets)

# kernel statuses of this module (below the library's own)
INCONSISTENT = -30        # redundant constraints the state cannot satisfy


@njit
def constrained_paths(model, cd, need):
    """``need[j]``: body ``j > 0`` is a constrained body or an ancestor of one."""
    parent = model.body_parent
    need[:] = False
    for c in range(cd.kind.shape[0]):
        for j in (cd.body_a[c], cd.body_b[c]):
            while j > 0 and not need[j]:
                need[j] = True
                j = parent[j]


@njit
def free_motion_on_paths(model, ws, k, q, Wb, fixed, need, Vs, qs):
    """The recovery pass of order k (``articulated.recover``) on the bodies of
    ``need`` only: ``V^(k+1)`` and ``q^(k+2)`` written over the bias twists
    and ``q̃`` there (saved in ``Vs``, with ``V₀^(k+1)``'s row 0, and ``qs``),
    for the free rate to read; undo with :func:`restore_bias_twists`."""
    parent, S, V, U, D, W = model.body_parent, ws.S, ws.V, ws.U, ws.D, ws.W
    N = parent.shape[0]
    for i in range(6):
        Vs[0, i] = V[k + 1, 0, i]
        V[k + 1, 0, i] = 0.0 if fixed else -W[k, 0, i]
    if not fixed:
        _shift_wrench_acc(1.0, Wb[k], ws.d, V[k + 1, 0])
        cholesky6_solve(ws.L, V[k + 1, 0])                             # V₀^(k+1)
    for j in range(1, N):
        if not need[j]:
            continue
        p = parent[j]
        s = 0.0
        for i in range(6):
            Vs[j, i] = V[k + 1, j, i]
            s += U[j, i] * V[k + 1, p, i]
        qs[j] = q[k + 2, j - 1]
        x = qs[j] - s / D[j]                                            # q^(k+2)
        q[k + 2, j - 1] = x
        for i in range(6):
            V[k + 1, j, i] += S[0, j, i] * x + V[k + 1, p, i]


@njit
def restore_bias_twists(ws, k, need, Vs, qs):
    """Undo :func:`free_motion_on_paths`: the bias twists back in ``V^(k+1)``
    and ``q̃`` in ``q^(k+2)``."""
    V = ws.V
    for j in range(need.shape[0]):
        if j == 0 or need[j]:
            for i in range(6):
                V[k + 1, j, i] = Vs[j, i]
            if j > 0:
                ws.q[k + 2, j - 1] = qs[j]


@njit
def force_bias(model, ws, cd, k, lk, Pa, Pb, need, q, dW, du):
    """The wrenches of ``λ^(k)`` (``lk``) added to the bias pass of order k:
    to ``W^(k)`` (the articulated bias ``W^A``) and ``q^(k+2)`` (``q̃``) of the
    constrained bodies and their ancestors; a joint stop's force ``s λ``
    enters ``q̃_j = (s λ − S_jᵀ W^A_j) / D_j`` as a joint force (``dW`` (N, 6),
    ``du`` (N,): scratch)."""
    parent, S, U, D, W = model.body_parent, ws.S, ws.U, ws.D, ws.W
    N = parent.shape[0]
    for j in range(N):
        if j == 0 or need[j]:
            du[j] = 0.0
            for t in range(6):
                dW[j, t] = 0.0
    for c in range(cd.kind.shape[0]):                                  # − the wrenches of λ_c
        a, b, kind = cd.body_a[c], cd.body_b[c], cd.kind[c]
        if kind == KIND_STOP:
            du[a] += cd.sign[c] * lk[cd.row[c]]                     # SPEC §13.2: s λ on joint j
            continue
        f0, f1, f2 = _force(cd, c, lk)
        x, y, z = Pa[0, c, 0], Pa[0, c, 1], Pa[0, c, 2]
        m0, m1, m2 = y * f2 - z * f1, z * f0 - x * f2, x * f1 - y * f0
        if kind == KIND_6D:
            r0 = cd.row[c]
            m0, m1, m2 = m0 + lk[r0], m1 + lk[r0 + 1], m2 + lk[r0 + 2]
        dW[a, 0] -= m0
        dW[a, 1] -= m1
        dW[a, 2] -= m2
        dW[a, 3] -= f0
        dW[a, 4] -= f1
        dW[a, 5] -= f2
        if b >= 0:
            if kind != KIND_6D:
                x, y, z = Pb[0, c, 0], Pb[0, c, 1], Pb[0, c, 2]
                m0, m1, m2 = y * f2 - z * f1, z * f0 - x * f2, x * f1 - y * f0
            dW[b, 0] += m0
            dW[b, 1] += m1
            dW[b, 2] += m2
            dW[b, 3] += f0
            dW[b, 4] += f1
            dW[b, 5] += f2
    for j in range(N - 1, 0, -1):
        if not need[j]:
            continue
        s = 0.0
        for t in range(6):
            s += S[0, j, t] * dW[j, t]
        x = (du[j] - s) / D[j]
        q[k + 2, j - 1] += x                                           # q̃_j
        p = parent[j]
        for t in range(6):
            W[k, j, t] += dW[j, t]
            dW[p, t] += dW[j, t] + U[j, t] * x
    for t in range(6):
        W[k, 0, t] += dW[0, t]


@njit
def unit_responses(model, ws, cd, Pa, Pb, fixed, need, RV, WA, qt):
    """``RV[l]``: ``ΔV_j`` of the response to a unit force along row ``l`` (the
    linear part of one articulated-body step, SPEC §5, driven by its wrenches
    of :func:`_row_direction`), for every ``j`` on the paths from the base to the
    constrained bodies, ``need`` (the other rows of ``RV[l]`` are not written). A force
    on bodies a and b moves the articulated bias of their ancestors only, so
    the leaves-first pass visits those, and the parents-first pass the paths;
    the rows of one constraint go through each body together. A joint
    stop's unit force ``s`` enters as a joint force, ``q̃_j = (s − S_jᵀ
    W^A_j) / D_j`` (SPEC §13.2). ``WA`` (6, N, 6), ``qt`` (6, N): scratch."""
    parent, S, U, D = model.body_parent, ws.S, ws.U, ws.D
    N, nc = parent.shape[0], cd.kind.shape[0]
    up = np.zeros(N, np.bool_)                  # an ancestor of this constraint's bodies
    for c in range(nc):
        a, b, kind, r0 = cd.body_a[c], cd.body_b[c], cd.kind[c], cd.row[c]
        mc = cd.row[c + 1] - r0
        stop = cd.sign[c] if kind == KIND_STOP else 0.0
        up[:] = False
        for j in (a, b):
            while j > 0 and not up[j]:
                up[j] = True
                j = parent[j]
        ax, ay, az = Pa[0, c, 0], Pa[0, c, 1], Pa[0, c, 2]
        bx, by, bz = (ax, ay, az) if kind == KIND_6D else (Pb[0, c, 0], Pb[0, c, 1],
                                                            Pb[0, c, 2])
        for i in range(mc):
            for j in range(N):
                if j == 0 or up[j]:
                    for t in range(6):
                        WA[i, j, t] = 0.0
            if kind == KIND_STOP:
                continue
            moment, e0, e1, e2 = _row_direction(kind, i, cd.normal[c, 0], cd.normal[c, 1],
                                                cd.normal[c, 2])
            if moment:                                             # the bias pass's − W_app
                WA[i, a, 0] -= e0
                WA[i, a, 1] -= e1
                WA[i, a, 2] -= e2
                if b >= 0:
                    WA[i, b, 0] += e0
                    WA[i, b, 1] += e1
                    WA[i, b, 2] += e2
                continue
            WA[i, a, 0] -= ay * e2 - az * e1
            WA[i, a, 1] -= az * e0 - ax * e2
            WA[i, a, 2] -= ax * e1 - ay * e0
            WA[i, a, 3] -= e0
            WA[i, a, 4] -= e1
            WA[i, a, 5] -= e2
            if b >= 0:
                WA[i, b, 0] += by * e2 - bz * e1
                WA[i, b, 1] += bz * e0 - bx * e2
                WA[i, b, 2] += bx * e1 - by * e0
                WA[i, b, 3] += e0
                WA[i, b, 4] += e1
                WA[i, b, 5] += e2
        for j in range(N - 1, 0, -1):
            if not up[j]:
                continue
            p, d = parent[j], D[j]
            for i in range(mc):
                s = 0.0
                for t in range(6):
                    s += S[0, j, t] * WA[i, j, t]
                x = ((stop if j == a else 0.0) - s) / d            # q̃_j
                qt[i, j] = x
                for t in range(6):
                    WA[i, p, t] += WA[i, j, t] + U[j, t] * x
        for i in range(mc):
            R = RV[r0 + i]
            if fixed:
                R[0] = 0.0
            else:
                for t in range(6):
                    R[0, t] = -WA[i, 0, t]
                cholesky6_solve(ws.L, R[0])                        # ΔV₀
        for j in range(1, N):
            if not need[j]:
                continue
            p, d, own = parent[j], D[j], up[j]
            for i in range(mc):
                R = RV[r0 + i]
                s = 0.0
                for t in range(6):
                    s += U[j, t] * R[p, t]
                dq = (qt[i, j] if own else 0.0) - s / d
                for t in range(6):
                    R[j, t] = R[p, t] + S[0, j, t] * dq


@njit
def contact_inverse(G, rank_rtol, Gp, L, X):
    """``Gp = Λ`` from ``G = Λ⁻¹`` (m × m, symmetric); returns its rank
    (``L``, ``X``: m × m scratch).

    ``Λ⁻¹`` is inverted through its Cholesky factor when that exists and
    ``‖G‖∞ ‖G⁻¹‖∞ · rank_rtol < 1/2``: as ``‖·‖₂ ≤ ‖·‖∞`` for a symmetric
    matrix, every eigenvalue is then above ``2 rank_rtol`` times the largest,
    so the rank is ``m``. Otherwise the pseudo-inverse from the
    eigendecomposition, eigenvalues below ``rank_rtol`` times the largest
    taken as zero."""
    m = G.shape[0]
    ok = True
    for i in range(m):
        for j in range(i + 1):
            s = G[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                if not s > 0.0:
                    ok = False
                    break
                L[i, i] = np.sqrt(s)
                X[i, i] = 1.0 / L[i, i]                            # the diagonal of L⁻¹
            else:
                L[i, j] = s * X[j, j]
        if not ok:
            break
    if ok:
        for j in range(m):                                         # X = L⁻¹ (lower part)
            for i in range(j + 1, m):
                s = 0.0
                for k in range(j, i):
                    s -= L[i, k] * X[k, j]
                X[i, j] = s * X[i, i]
        for i in range(m):
            for j in range(i + 1):
                s = 0.0
                for k in range(i, m):
                    s += X[k, i] * X[k, j]
                Gp[i, j] = Gp[j, i] = s                            # L⁻ᵀ L⁻¹
        ng = 0.0
        ngp = 0.0
        for i in range(m):
            a = 0.0
            b = 0.0
            for j in range(m):
                a += abs(G[i, j])
                b += abs(Gp[i, j])
            ng = max(ng, a)
            ngp = max(ngp, b)
        if ng * ngp * rank_rtol < 0.5:
            return m
    w, Q = np.linalg.eigh(G)
    wmax = 0.0
    for i in range(m):
        wmax = max(wmax, abs(w[i]))
    rank = 0
    Gp[:] = 0.0
    for s in range(m):
        if w[s] > rank_rtol * wmax:
            rank += 1
            for i in range(m):
                for l in range(m):
                    Gp[i, l] += Q[i, s] * Q[l, s] / w[s]
    return rank


@njit
def contact_space_inverse(model, ws, cd, Pa, Pb, fixed, need, RV, B6, Q, GG, col, rank_rtol):
    """The unit responses ``RV``, ``Λ⁻¹ = J M⁻¹ Jᵀ`` into ``GG[0]`` (symmetric)
    and ``Λ`` (its inverse, or pseudo-inverse) into ``GG[1]``, at the
    configured state with the articulated inertias formed; ``col`` (m,) is
    scratch. Returns the rank."""
    unit_responses(model, ws, cd, Pa, Pb, fixed, need, RV, B6, Q)
    G = GG[0]
    m = G.shape[0]
    for l in range(m):
        _response_rate(model, ws, cd, RV, l, Pa, Pb, col)
        for i in range(m):
            G[i, l] = col[i]
    for i in range(m):
        for l in range(i):
            g = 0.5 * (G[i, l] + G[l, i])
            G[i, l] = G[l, i] = g
    return contact_inverse(G, rank_rtol, GG[1], GG[2], GG[3])


@njit
def constrained_forward_kernel(model, ws, cd, C0, about_base, V0, q0, tau_in, Wb, W_app, r,
                               alpha, beta, rank_rtol, lam, info):
    """Orders ``0..r`` of SPEC §13.2 into the workspace's outputs and ``lam``;
    ``info`` gets ``(rank, worst relative residual, its row)``. Returns a
    status."""
    q, tau, V, W, c, binom = ws.q, ws.tau, ws.V, ws.W, ws.c, ws.binom
    status = check_forward_args(model, C0, V0, q0, tau_in, Wb, W_app, r)
    if status != OK:
        return status
    N, nc, m = model.body_parent.shape[0], cd.kind.shape[0], cd.row[-1]
    fixed = not model.floating_base
    V0 = V0[:1]
    Vb = V0[:0]
    load_state(ws, q0, tau_in)
    # --- configuration, articulated inertias (once) ---
    configuration(model, ws, C0, about_base, V0, q, r)
    status = articulated_factor(model, ws, None, fixed)
    if status != OK:
        return status
    # scratch, a few arrays of each shape (B6: the unit responses', then the orders' dW, Vs)
    P = np.zeros((2, r + 3, nc, 3))
    Pa, Pb = P[0], P[1]
    B6 = np.empty((6, N, 6))
    dW, Vs = B6[0], B6[1]
    du = np.empty((2, N))                       # the orders' joint forces of stops, saved q̃
    need = np.zeros(N, np.bool_)
    constrained_paths(model, cd, need)
    E = np.zeros((4, m))
    e, ek, ekm, phi = E[0], E[1], E[2], E[3]
    GG = np.zeros((4, m, m))
    G, Gp = GG[0], GG[1]
    Q = np.empty((6, N))
    RV = np.empty((m, N, 6))
    contact_points(cd, ws, Pa, Pb)
    point_jets(cd, ws, Pa, Pb, 1)
    # --- responses to unit forces and Λ⁻¹ = J M⁻¹ Jᵀ (once) ---
    rank = contact_space_inverse(model, ws, cd, Pa, Pb, fixed, need, RV, B6, Q, GG, e,
                                 rank_rtol)
    info[0] = rank
    info[1] = 0.0
    info[2] = -1.0
    # --- Baumgarte: φ^(0) ---
    if beta != 0.0:
        status = constraint_error_kernel(cd, ws, Pa, phi)
        if status != OK:
            return status
    # --- the orders ---
    for k in range(r + 1):
        if k > 0:
            point_jets(cd, ws, Pa, Pb, k + 1)                       # p^(k+1) from V^(0..k)
        # 1. the known wrench terms of λ^(0..k−1) into W^(k), as the bias pass adds − W_app
        for cc in range(nc):
            a, b, kind, r0 = cd.body_a[cc], cd.body_b[cc], cd.kind[cc], cd.row[cc]
            if kind == KIND_STOP:                                   # J̇ = 0: no known terms
                continue
            for s in range(1, k + 1):
                f0, f1, f2 = _force(cd, cc, lam[k - s])
                for side in range(2):
                    if side == 1 and b < 0:
                        continue
                    p = Pa[s, cc] if (side == 0 or kind == KIND_6D) else Pb[s, cc]
                    sg = binom[k, s] * (1.0 if side == 0 else -1.0)
                    j = a if side == 0 else b
                    W[k, j, 0] -= sg * (p[1] * f2 - p[2] * f1)      # a pure moment: any point
                    W[k, j, 1] -= sg * (p[2] * f0 - p[0] * f2)
                    W[k, j, 2] -= sg * (p[0] * f1 - p[1] * f0)
        # 2. the bias pass, and the free rate from the free motion on the paths
        bias_pass(model, ws, k, q, tau, W_app, None)
        free_motion_on_paths(model, ws, k, q, Wb, fixed, need, Vs, du[1])
        point_jets(cd, ws, Pa, Pb, k + 2)                           # free p^(k+2)
        constraint_rate(cd, V, Pa, Pb, k + 1, binom, e)
        restore_bias_twists(ws, k, need, Vs, du[1])
        if alpha != 0.0 or beta != 0.0:
            constraint_rate(cd, V, Pa, Pb, k, binom, ek)
            for i in range(m):
                e[i] += 2.0 * alpha * ek[i] + beta * beta * (phi[i] if k == 0 else ekm[i])
            error_rate(cd, ek, ekm)                                 # φ^(k+1)
        # 3. λ^(k) = −Λ e, its wrenches in the bias pass, and the recovery pass
        lk = lam[k]
        for i in range(m):
            acc = 0.0
            for l in range(m):
                acc -= Gp[i, l] * e[l]
            lk[i] = acc
        if rank < m:
            enorm = 0.0
            for i in range(m):
                enorm = max(enorm, abs(e[i]))
            for i in range(m):
                res = e[i]
                for l in range(m):
                    res += G[i, l] * lk[l]
                rel = abs(res) / max(enorm, 1e-300)
                if rel > info[1]:
                    info[1] = rel
                    info[2] = i
            if info[1] > 1e-6 and enorm > 1e-12:
                return INCONSISTENT
        force_bias(model, ws, cd, k, lk, Pa, Pb, need, q, dW, du[0])
        recover(model, ws, k, q, tau, Vb, Wb, None, fixed)          # the final order-k quantities
    base_outputs(ws, V0 if model.floating_base else Vb, Wb, r, fixed)
    if not (_all_finite(ws.base_twist.reshape(-1)) and _all_finite(q.reshape(-1))
            and _all_finite(ws.base_wrench.reshape(-1)) and _all_finite(lam.reshape(-1))):
        return NOT_FINITE
    return OK


CONSTRAINED_FORWARD = Kernel(constrained_forward_kernel)


# ---------------------------------------------------------------- public --

_INF = float("inf")


def _scalar_arg(x, name, nonneg=True):
    if type(x) is float and (0.0 if nonneg else -_INF) <= x < _INF:
        return x                                                   # the common case, quickly
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a real number, got {type(x).__name__}")
    x = float(x)
    if not np.isfinite(x) or (nonneg and x < 0):
        raise ValueError(f"{name}: expected a finite number{' ≥ 0' if nonneg else ''}, got {x}")
    return x


def baumgarte_arg(baumgarte):
    """``(α, β)`` of Baumgarte stabilisation (``None``: none)."""
    if baumgarte is None:
        return 0.0, 0.0
    try:
        a, b = baumgarte
    except (TypeError, ValueError):
        raise TypeError("baumgarte: expected (alpha, beta), two numbers ≥ 0 (rad/s), or "
                        "None") from None
    return _scalar_arg(a, "baumgarte[0] (alpha)"), _scalar_arg(b, "baumgarte[1] (beta)")


RANK_RTOL = 1e-9


def constrained_forward_dynamics(model, constraints, base_pose, base_twist, q, order, *, tau,
                                 base_wrench=None, applied=None, baumgarte=None, workspace=None,
                                 rank_rtol=RANK_RTOL):
    """Forward dynamics with bilateral constraints, and its first ``order``
    time derivatives (SPEC §13.2).

    Solves, for ``k = 0..order``,
    ``M ν̇ + h = τ̄ + Jᵀλ`` and ``(J ν)^(k+1) = 0`` differentiated ``k`` times
    for ``ν^(k+1)`` and the constraint-force jets ``λ^(k)``: the
    articulated-body passes of :func:`liedyn.forward_dynamics` with the
    contact-space inverse inertia ``Λ⁻¹ = J M⁻¹ Jᵀ`` formed once and one
    ``m``-by-``m`` solve per order.

    Parameters
    ----------
    model : Model
    constraints : ConstraintSet
    base_pose, base_twist, q, order, tau, base_wrench, applied, workspace
        As :func:`liedyn.forward_dynamics` (``base_wrench``: the base
        actuators' wrench jet, zeros for a legged robot; required for a
        floating base).
    baumgarte : (alpha, beta) or None, keyword
        Stabilisation: the constraint becomes
        ``(Jν)^(k+1) + 2α (Jν)^(k) + β² φ^(k) = 0``, with ``φ`` the position
        error (:func:`liedyn.constraint_error`; ``φ^(k) = (Jν)^(k−1)`` for
        ``k ≥ 1``). ``β > 0`` needs every world contact anchored
        (:meth:`ConstraintSet.anchored`).
    rank_rtol : float, keyword
        An eigenvalue of ``Λ⁻¹`` below ``rank_rtol`` times the largest is
        taken as zero: the constraints are redundant, ``λ`` is the
        minimum-norm force (pseudo-inverse) and ``rank`` says how many
        directions are independent.

    Returns
    -------
    ConstrainedForwardDynamicsResult
        ``force`` ``(order+1, m)``: ``λ^(0..order)`` in the reported form of
        SPEC §13.1 (6-D: moment about the contact frame's origin and force,
        world axes; 3-D: world force; 1-D: force along the normal; rolling:
        world force at the touching point; joint stop: the joint force along
        ``s``), and the motion jets of :class:`liedyn.ForwardDynamicsResult`.

    Raises
    ------
    ValueError, TypeError
        As :func:`liedyn.forward_dynamics`; redundant constraints that the
        state does not satisfy (``J ν ≠ 0``, so ``J ν̇ = −J̇ ν`` has no
        solution), naming the constraint and the residual; ``β > 0`` with an
        unanchored world contact.

    Notes
    -----
    With redundant constraints the force jets are the time derivatives of
    the instantaneous minimum-norm force (SPEC §13.2), also where the null
    space of ``Jᵀ`` moves along the motion (a planar loop closed by a ball
    joint on a rotating base).
    """
    r = check_model_order(model, order)
    cs = check_constraints(model, constraints)
    alpha, beta = baumgarte_arg(baumgarte)
    rtol = _scalar_arg(rank_rtol, "rank_rtol")
    C0, V0, q0 = motion_args(model, base_pose, base_twist, q, 1, 2)
    tau_in, Wb = force_args(model, tau, base_wrench, r + 1, model.floating_base)
    Wa = applied_arg(model, applied, r + 1)
    ws = workspace_for(model, r, workspace)
    lam = np.zeros((r + 1, cs.n_rows))
    info = np.zeros(3)
    status, call = ws._serve(CONSTRAINED_FORWARD, model, cs.data, C0, about_base("world"), V0,
                             q0, tau_in, Wb, Wa, r, alpha, beta, rtol, lam, info)
    if status == INCONSISTENT:
        raise ValueError(f"constraints: {inconsistent_message(cs, info)}")
    if status == NOT_ANCHORED:
        c = int(np.flatnonzero(~cs.data.anchored)[0])
        raise ValueError(f"baumgarte: beta > 0 needs the position error of every constraint, "
                         f"but world contact {cs.names[c]!r} has no anchor; use "
                         f"constraints.anchored(base_pose, q) or give anchor=")
    if status != OK:
        raise_forward_args(status, model, base_pose, base_twist, q, tau, Wb, applied, r)
    rank = int(info[0])
    V_out, q_out = ws.base_twist.copy(), ws.q.copy()
    if rank < cs.n_rows and r > 0:
        lam = minimum_norm_jets(cs, C0, V_out, q_out, lam, rank)
    return ConstrainedForwardDynamicsResult(holder(ws), call, V_out, q_out, ws.base_wrench.copy(),
                                            ws.tau.copy(), lam, cs, rank)


def minimum_norm_jets(cs, C0, base_twist, q, lam, rank):
    """The force jets of a redundant set as the derivatives of the
    instantaneous minimum-norm force (SPEC §13.2): from any valid jets
    ``lam`` (those of the kernel, minimum-norm order by order), keep the
    generalised force jets ``F^(k) = (Jᵀλ)^(k)``, which are unique, and
    solve order by order

        J₀ᵀ λ^(k) = F^(k) − Σ_{a≥1} binom(k, a) J^(a)ᵀ λ^(k−a)
        N₀ᵀ λ^(k) = −Σ_{a≥1} binom(k, a) N^(a)ᵀ λ^(k−a)

    with ``N`` an orthonormal basis of the null space of ``Jᵀ`` at the
    instant and its jets from ``Σ_a binom(k, a) J^(a)ᵀ N^(k−a) = 0``
    (``N^(k)`` taken in the range of ``J₀``). Where ``N`` does not move this
    returns ``lam`` itself."""
    from ..multibody.workspace import binomials
    from .constraints import _kinematics, jacobian_jets
    model = cs.model
    r = lam.shape[0] - 1
    fb = model.floating_base
    J = jacobian_jets(cs, _kinematics(model, C0, base_twist if fb else None, q, r), r)
    Jt = np.transpose(J, (0, 2, 1))                          # (r+1, nv, m)
    B = binomials(r)
    U, s, _ = np.linalg.svd(J[0])
    N = np.zeros((r + 1, cs.n_rows, cs.n_rows - rank))
    N[0] = U[:, rank:]
    pinv = np.linalg.pinv(Jt[0], rcond=1e-10)
    for k in range(1, r + 1):
        N[k] = -pinv @ sum(B[k, a] * Jt[a] @ N[k - a] for a in range(1, k + 1))
    F = [sum(B[k, a] * Jt[a] @ lam[k - a] for a in range(k + 1)) for k in range(r + 1)]
    out = lam.copy()
    for k in range(1, r + 1):
        rng_part = pinv @ (F[k] - sum(B[k, a] * Jt[a] @ out[k - a] for a in range(1, k + 1)))
        null_part = -sum(B[k, a] * N[a].T @ out[k - a] for a in range(1, k + 1))
        out[k] = rng_part + N[0] @ null_part
    return out


def inconsistent_message(cs, info):
    """What an ``INCONSISTENT`` status means, from the kernel's ``info``."""
    return (f"redundant (rank {int(info[0])} of {cs.n_rows} rows) and the state does not "
            f"satisfy them: constraint {row_name(cs, int(info[2]))!r} has a relative residual "
            f"{info[1]:.2e} in its acceleration equation; a redundant set needs J ν = 0 "
            "(project the velocity, or drop the redundant constraint)")


def row_name(cs, i):
    """``"name[row]"`` of row ``i`` of ``λ``."""
    for c, rows in enumerate(cs.rows):
        if rows.start <= i < rows.stop:
            return cs.names[c] if rows.stop - rows.start == 1 else f"{cs.names[c]}[{i - rows.start}]"
    return f"row {i}"
