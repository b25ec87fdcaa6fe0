"""The rows of each constraint kind in the compiled kernels (SPEC §13.1):
the points where the forces act and their jets, the constraint rates
``(J ν)^(j)``, the position error ``φ``, the force of a row and the rate
of a response to a unit force.

Glossary (``cd``: the packed :class:`ConstraintData`; ``ws``: a workspace's
scratch; every point about the base origin ``o``, SPEC §1)
----------------------------------------------------------------------
==========  ================  ============================================
``Pa, Pb``  (r+3, nc, 3)      jets of each constraint's two points
                              ``p^(k)``: ``F_a``'s origin (a rolling
                              contact: its touching point ``p = c − ρ n``,
                              whose rows ``k ≥ 1`` are the centre's
                              ``c^(k)``) and ``F_b``'s origin (a world
                              contact: the anchor, at rest). A joint stop
                              has no point: ``Pa[k, c, 0]`` is its joint's
                              ``q_j^(k)``, the coordinate its row reads
``RV``      (m, N, 6)         response ``ΔV_j`` to a unit ``λ_l``
==========  ================  ============================================
"""

import numpy as np

from .._checks import OK
from .._jit import njit
from ..spatial.se3 import _log_so3_into
from .constraints import KIND_1D, KIND_6D, KIND_ROLLING, KIND_STOP

NOT_ANCHORED = -31        # Baumgarte position term on a world contact without an anchor


@njit(inline=True)
def _point_order(P, c, k, V, b, binom, s0, s1, s2):
    """``p^(k)``, k ≥ 1, of point ``c`` fixed on body ``b`` (``b < 0``: at rest):
    ``p^(k) = Σ_a binom(k−1, a) ω^(a) × p^(k−1−a) + v^(k−1)``, with
    ``p^(0) + s`` in place of ``p^(0)`` (a rolling contact, ``s = ρ n``: the
    jets of the centre ``c = p + ρ n``, SPEC §13.1)."""
    if b < 0:
        P[k, c, 0] = P[k, c, 1] = P[k, c, 2] = 0.0
        return
    x, y, z = V[k - 1, b, 3], V[k - 1, b, 4], V[k - 1, b, 5]
    for a in range(k):
        w = V[a, b]
        p = P[k - 1 - a, c]
        p0, p1, p2 = p[0], p[1], p[2]
        if a == k - 1:
            p0, p1, p2 = p0 + s0, p1 + s1, p2 + s2
        s = binom[k - 1, a]
        x += s * (w[1] * p2 - w[2] * p1)
        y += s * (w[2] * p0 - w[0] * p2)
        z += s * (w[0] * p1 - w[1] * p0)
    P[k, c, 0], P[k, c, 1], P[k, c, 2] = x, y, z


@njit(inline=True)
def _origin(C, X, out):
    """Origin of the frame ``C X`` (``C`` a body pose about ``o``)."""
    for i in range(3):
        out[i] = C[i, 0] * X[0, 3] + C[i, 1] * X[1, 3] + C[i, 2] * X[2, 3] + C[i, 3]


@njit
def contact_points(cd, ws, Pa, Pb):
    """``p^(0)`` of every constraint's two points, about ``o`` (a joint
    stop: ``q_j``)."""
    C, o = ws.C, ws.o
    for c in range(cd.kind.shape[0]):
        if cd.kind[c] == KIND_STOP:
            Pa[0, c, 0] = ws.q[0, cd.body_a[c] - 1]
            Pa[0, c, 1] = Pa[0, c, 2] = 0.0
            Pb[0, c, 0] = Pb[0, c, 1] = Pb[0, c, 2] = 0.0
            continue
        _origin(C[cd.body_a[c]], cd.offset_a[c], Pa[0, c])
        rho = cd.radius[c]
        for i in range(3):
            Pa[0, c, i] -= rho * cd.normal[c, i]                 # SPEC §13.1: p = c − ρ n
        if cd.body_b[c] >= 0:
            _origin(C[cd.body_b[c]], cd.offset_b[c], Pb[0, c])
        else:
            for i in range(3):
                Pb[0, c, i] = cd.offset_b[c, i, 3] - o[i]


@njit
def point_jets(cd, ws, Pa, Pb, k):
    """Row ``k ≥ 1`` of the point jets, from ``V^(0..k−1)`` (a joint stop:
    ``q_j^(k)`` from ``ws.q[k]``)."""
    for c in range(cd.kind.shape[0]):
        if cd.kind[c] == KIND_STOP:
            Pa[k, c, 0] = ws.q[k, cd.body_a[c] - 1]
            Pa[k, c, 1] = Pa[k, c, 2] = 0.0
            Pb[k, c, 0] = Pb[k, c, 1] = Pb[k, c, 2] = 0.0
            continue
        rho = cd.radius[c]
        n = cd.normal[c]
        _point_order(Pa, c, k, ws.V, cd.body_a[c], ws.binom, rho * n[0], rho * n[1], rho * n[2])
        _point_order(Pb, c, k, ws.V, cd.body_b[c], ws.binom, 0.0, 0.0, 0.0)


@njit(inline=True)
def _twist(V, k, b, i):
    return V[k, b, i] if b >= 0 else 0.0


@njit
def constraint_rate(cd, V, Pa, Pb, j, binom, out):
    """``(J ν)^(j)`` (m,) from the twist jets ``V^(0..j)`` and the point jets
    ``p^(0..j+1)`` (SPEC §13.1: the rows of each constraint kind)."""
    for c in range(cd.kind.shape[0]):
        a, b, r0, kind = cd.body_a[c], cd.body_b[c], cd.row[c], cd.kind[c]
        if kind == KIND_6D:
            for i in range(3):
                out[r0 + i] = V[j, a, i] - _twist(V, j, b, i)
                out[r0 + 3 + i] = V[j, a, 3 + i] - _twist(V, j, b, 3 + i)
            for s in range(j + 1):                  # Σ binom(j, s) Δω^(j−s) × p_a^(s)
                w0 = V[j - s, a, 0] - _twist(V, j - s, b, 0)
                w1 = V[j - s, a, 1] - _twist(V, j - s, b, 1)
                w2 = V[j - s, a, 2] - _twist(V, j - s, b, 2)
                p = Pa[s, c]
                f = binom[j, s]
                out[r0 + 3] += f * (w1 * p[2] - w2 * p[1])
                out[r0 + 4] += f * (w2 * p[0] - w0 * p[2])
                out[r0 + 5] += f * (w0 * p[1] - w1 * p[0])
        elif kind == KIND_STOP:
            out[r0] = cd.sign[c] * Pa[j + 1, c, 0]                        # SPEC §13.1: s q^(j+1)
        else:
            dx = Pa[j + 1, c, 0] - Pb[j + 1, c, 0]
            dy = Pa[j + 1, c, 1] - Pb[j + 1, c, 1]
            dz = Pa[j + 1, c, 2] - Pb[j + 1, c, 2]
            if kind == KIND_1D:
                n = cd.normal[c]
                out[r0] = n[0] * dx + n[1] * dy + n[2] * dz
                continue
            if kind == KIND_ROLLING:                 # SPEC §13.1: c^(j+1) + ρ n × ω^(j)
                n, rho = cd.normal[c], cd.radius[c]
                dx += rho * (n[1] * V[j, a, 2] - n[2] * V[j, a, 1])
                dy += rho * (n[2] * V[j, a, 0] - n[0] * V[j, a, 2])
                dz += rho * (n[0] * V[j, a, 1] - n[1] * V[j, a, 0])
            out[r0], out[r0 + 1], out[r0 + 2] = dx, dy, dz


@njit
def error_rate(cd, rate, out):
    """``φ^(k+1)`` (m,) from ``(J ν)^(k)`` (``rate``): ``φ̇ = J ν`` except on
    the tangential rows of a rolling contact, which have no position error,
    so ``φ̇ = n nᵀ J ν`` there (SPEC §13.1, §13.2 Baumgarte)."""
    out[:] = rate
    for c in range(cd.kind.shape[0]):
        if cd.kind[c] == KIND_ROLLING:
            r0, n = cd.row[c], cd.normal[c]
            s = n[0] * rate[r0] + n[1] * rate[r0 + 1] + n[2] * rate[r0 + 2]
            for i in range(3):
                out[r0 + i] = n[i] * s


@njit
def constraint_error_kernel(cd, ws, Pa, out):
    """``φ`` (m,) at the current configuration (SPEC §13.1); returns
    ``NOT_ANCHORED`` if a world contact has no anchor."""
    C, o = ws.C, ws.o
    Rb = np.empty((3, 3))
    Re = np.empty((3, 3))
    th = np.empty(3)
    pb = np.empty(3)
    for c in range(cd.kind.shape[0]):
        a, b, r0, kind = cd.body_a[c], cd.body_b[c], cd.row[c], cd.kind[c]
        if kind == KIND_STOP:
            out[r0] = cd.sign[c] * (Pa[0, c, 0] - cd.limit[c])            # s (q_j − limit)
            continue
        if not cd.anchored[c]:
            return NOT_ANCHORED
        Xa, Xb = cd.offset_a[c], cd.offset_b[c]
        if b >= 0:
            _origin(C[b], Xb, pb)
        else:
            for i in range(3):
                pb[i] = Xb[i, 3] - o[i]
        d0, d1, d2 = Pa[0, c, 0] - pb[0], Pa[0, c, 1] - pb[1], Pa[0, c, 2] - pb[2]
        if kind == KIND_6D:
            for i in range(3):
                for l in range(3):
                    Rb[i, l] = 0.0
                    for s in range(3):
                        Rb[i, l] += (C[b, i, s] if b >= 0 else (1.0 if i == s else 0.0)) * Xb[s, l]
            for i in range(3):
                for l in range(3):
                    acc = 0.0
                    for s in range(3):
                        ra = 0.0
                        for u in range(3):
                            ra += C[a, i, u] * Xa[u, s]
                        acc += ra * Rb[l, s]
                    Re[i, l] = acc                              # R_a R_bᵀ
            _log_so3_into(Re, th)
            out[r0], out[r0 + 1], out[r0 + 2] = th[0], th[1], th[2]
            out[r0 + 3], out[r0 + 4], out[r0 + 5] = d0, d1, d2
        elif kind == KIND_1D:
            n = cd.normal[c]
            out[r0] = n[0] * d0 + n[1] * d1 + n[2] * d2
        elif kind == KIND_ROLLING:                                 # SPEC §13.1: n nᵀ (p − p_b)
            n = cd.normal[c]
            s = n[0] * d0 + n[1] * d1 + n[2] * d2
            out[r0], out[r0 + 1], out[r0 + 2] = n[0] * s, n[1] * s, n[2] * s
        else:
            out[r0], out[r0 + 1], out[r0 + 2] = d0, d1, d2
    return OK


@njit(inline=True)
def _row_direction(kind, i, n0, n1, n2):
    """``(moment, e)`` of row ``i`` of a constraint of kind ``kind`` (not a
    joint stop): a unit moment about ``e`` (6-D rows 0–2) or a unit force
    along ``e`` (``n`` for 1-D). Its wrench about ``o`` is ``(e, 0)``, or
    ``(p × e, e)`` at the contact point ``p``, on body a, and minus that on
    body b (SPEC §13.1)."""
    if kind == KIND_1D:
        return False, n0, n1, n2
    l = i - 3 if kind == KIND_6D else i
    e0 = 1.0 if l == 0 or l == -3 else 0.0
    e1 = 1.0 if l == 1 or l == -2 else 0.0
    e2 = 1.0 if l == 2 or l == -1 else 0.0
    return l < 0, e0, e1, e2


@njit(inline=True)
def _force(cd, c, lk):
    """The force part (world axes) of constraint ``c``'s entry of ``λ``
    (zero for a joint stop, whose force is a joint force, not a force at a
    point)."""
    r0, kind = cd.row[c], cd.kind[c]
    if kind == KIND_6D:
        return lk[r0 + 3], lk[r0 + 4], lk[r0 + 5]
    if kind == KIND_1D:
        n = cd.normal[c]
        return lk[r0] * n[0], lk[r0] * n[1], lk[r0] * n[2]
    if kind == KIND_STOP:
        return 0.0, 0.0, 0.0
    return lk[r0], lk[r0 + 1], lk[r0 + 2]


@njit
def _response_rate(model, ws, cd, RV, l, Pa, Pb, out):
    """``J ΔV`` (m,) of response ``l`` (the order-0 rows of SPEC §13.1 with the
    point velocities ``Δω × p + Δv``; a joint stop's ``s Δq̈_j`` from
    ``ΔV_j = ΔV_p + S_j Δq̈_j``)."""
    S, parent = ws.S, model.body_parent
    for c in range(cd.kind.shape[0]):
        a, b, r0, kind = cd.body_a[c], cd.body_b[c], cd.row[c], cd.kind[c]
        if kind == KIND_STOP:
            p = parent[a]
            num = 0.0
            den = 0.0
            for t in range(6):
                num += S[0, a, t] * (RV[l, a, t] - RV[l, p, t])
                den += S[0, a, t] * S[0, a, t]
            out[r0] = cd.sign[c] * num / den
            continue
        b0 = max(b, 0)
        sb = 1.0 if b >= 0 else 0.0
        ax, ay, az = Pa[0, c, 0], Pa[0, c, 1], Pa[0, c, 2]
        bx, by, bz = (ax, ay, az) if kind == KIND_6D else (Pb[0, c, 0], Pb[0, c, 1], Pb[0, c, 2])
        w0, w1, w2 = RV[l, a, 0], RV[l, a, 1], RV[l, a, 2]
        u0, u1, u2 = sb * RV[l, b0, 0], sb * RV[l, b0, 1], sb * RV[l, b0, 2]
        d0 = RV[l, a, 3] + w1 * az - w2 * ay - sb * RV[l, b0, 3] - (u1 * bz - u2 * by)
        d1 = RV[l, a, 4] + w2 * ax - w0 * az - sb * RV[l, b0, 4] - (u2 * bx - u0 * bz)
        d2 = RV[l, a, 5] + w0 * ay - w1 * ax - sb * RV[l, b0, 5] - (u0 * by - u1 * bx)
        if kind == KIND_6D:
            out[r0], out[r0 + 1], out[r0 + 2] = w0 - u0, w1 - u1, w2 - u2
            out[r0 + 3], out[r0 + 4], out[r0 + 5] = d0, d1, d2
        elif kind == KIND_1D:
            out[r0] = cd.normal[c, 0] * d0 + cd.normal[c, 1] * d1 + cd.normal[c, 2] * d2
        else:
            out[r0], out[r0 + 1], out[r0 + 2] = d0, d1, d2


@njit(inline=True)
def _add_column(J, col, K, kind, r0, n, sg, x, p, binom):
    """``sg`` times the rows of one constraint for one column of its body's
    Jacobian, whose jets are ``x`` (K+1, 6), with the point jets ``p`` (K+1,
    3): ``x_ω^(k)`` on a 6-D contact's angular rows, and the moved rows
    ``Σ_a binom(k, a) (x_v^(k−a) + x_ω^(k−a) × p^(a))`` (``nᵀ`` of them for
    1-D) on its linear ones (SPEC §13.1)."""
    rv = r0
    for k in range(K + 1):
        if kind == KIND_6D:
            J[k, r0, col] += sg * x[k, 0]
            J[k, r0 + 1, col] += sg * x[k, 1]
            J[k, r0 + 2, col] += sg * x[k, 2]
            rv = r0 + 3
        m0, m1, m2 = x[k, 3], x[k, 4], x[k, 5]
        for a in range(k + 1):
            w = x[k - a]
            f = binom[k, a]
            m0 += f * (w[1] * p[a, 2] - w[2] * p[a, 1])
            m1 += f * (w[2] * p[a, 0] - w[0] * p[a, 2])
            m2 += f * (w[0] * p[a, 1] - w[1] * p[a, 0])
        if kind == KIND_1D:
            J[k, r0, col] += sg * (n[0] * m0 + n[1] * m1 + n[2] * m2)
        else:
            J[k, rv, col] += sg * m0
            J[k, rv + 1, col] += sg * m1
            J[k, rv + 2, col] += sg * m2


@njit
def jacobian_jets_kernel(model, ws, cd, Pa, Pb, K, J):
    """``J^(0..K)`` (K+1, m, nv) of SPEC §13.1 from the screw jets ``ws.S``
    and the point jets ``Pa``, ``Pb`` (rows ``0..K``): ``J = T(p_a) (J_a −
    J_b)`` (6-D), ``P(p_a) J_a − P(p_b) J_b`` (3-D, rolling) and ``nᵀ`` of
    that (1-D), ``s e_jᵀ`` (joint stop), with ``J_b`` the body Jacobian
    (``I₆`` base block, the screws ``S_j`` of the path's joints). Columns as
    ``ν = (V₀, q̇)`` with the base twist about the world origin (the point
    jets are about ``o``, which the screws share: only the base block's
    order 0 moves by ``o``)."""
    parent, S, binom, o = model.body_parent, ws.S, ws.binom, ws.o
    nb = 6 if model.floating_base else 0
    J[:] = 0.0
    X = np.zeros((K + 1, 6))                    # a base column: the unit twist, at rest
    pw = np.empty((K + 1, 3))
    for c in range(cd.kind.shape[0]):
        a, b, kind, r0 = cd.body_a[c], cd.body_b[c], cd.kind[c], cd.row[c]
        if kind == KIND_STOP:
            J[0, r0, nb + a - 1] = cd.sign[c]                       # J^(k≥1) = 0
            continue
        n = cd.normal[c]
        for side in range(2):
            body = a if side == 0 else b
            if body < 0:
                continue
            sg = 1.0 if side == 0 else -1.0
            p = Pa[:K + 1, c] if (side == 0 or kind == KIND_6D) else Pb[:K + 1, c]
            if nb:
                pw[:] = p
                for i in range(3):
                    pw[0, i] += o[i]                                # about the world origin
                for i in range(6):
                    X[0, i] = 1.0
                    _add_column(J, i, K, kind, r0, n, sg, X, pw, binom)
                    X[0, i] = 0.0
            j = body
            while j > 0:
                _add_column(J, nb + j - 1, K, kind, r0, n, sg, S[:K + 1, j], p, binom)
                j = parent[j]
