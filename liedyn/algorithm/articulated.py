"""The articulated-body passes that forward dynamics (SPEC §5) and hybrid
dynamics (SPEC §6) share.

Glossary (``model``, ``ws``: compiled handles; every spatial quantity about
the base origin ``o``, SPEC §1)
--------------------------------------------------------------------------
===========  ===============  ==============================================
``ws.MA``    (N, 6, 6)        articulated inertia ``M^A_j`` (Lemma 2: one per
                              call, the same at every order)
``ws.U``     (N, 6)           ``U_j = M^A_j S_j``
``ws.D``     (N,)             pivot ``D_j = S_jᵀ U_j + I_a,j``
``ws.L``     (6, 6)           Cholesky factor of ``M^A_0`` (wrench-driven base)
``ws.V``     (r+2, N, 6)      body twist jets ``V_j^(k)``
``ws.S``     (r+2, N, 6)      joint screw jets ``S_j^(k)``
``ws.c``     (r+3, N, 3)      centre-of-mass jets
``ws.Ic``    (r+2, N, 3, 3)   rotational inertia about the CoM, world axes
``ws.Pi``    (r+2, N, 6)      row ``k+1``: ``Πbias_j`` of order ``k``
``ws.W``     (r+1, N, 6)      row ``k``: ``W^A_{j,k}`` in the bias pass, then
                              ``W_j^(k) = M^A_j V_j^(k+1) + W^A_{j,k}``
``q``        (r+3, n)         joint jet; row ``k+2`` of a force-driven joint
                              holds ``q̃_j`` between the two passes of order k
``motion``   (N,) bool        motion-driven joints (hybrid), or ``None``
===========  ===============  ==============================================

Forward dynamics passes ``motion=None``: every joint is force-driven, and
the ``motion is not None`` branches below are removed when the forward
kernel is compiled, so it pays nothing for hybrid dynamics.

Order k, given everything of orders ``0..k−1``:

1. bias pass (leaves first). Body ``j``'s own terms are its momentum jet
   ``Π_j^(k+1)`` evaluated with ``V_j^(k+1) = 0`` (``Πbias_j``; ``Π`` is linear
   in ``V^(k+1)`` with coefficient ``M_j``), minus applied and gravity wrench
   jets. ``S_j^(k+1)`` and ``Vbias_j`` come from the kinematics step of §3
   evaluated with ``V_p^(k+1) = 0`` and, for a force-driven joint,
   ``q_j^(k+2) = 0``: row ``k+1`` of ``V`` holds ``Vbias_j`` (plus
   ``S_j q_j^(k+2)`` for a motion-driven joint) until the recovery pass adds
   the rest.
2. base: solve ``M^A_0 V₀^(k+1) = W₀^(k) − W^A_{0,k}`` with the Cholesky
   factor, or take the prescribed ``V₀^(k+1)`` and return ``W₀^(k)``.
3. recovery (parents first): ``q^(k+2)``, ``V^(k+1)``, ``W^(k)``, and the
   forces of motion-driven joints by the projection of §4.

Armature ``I_a`` adds to ``D_j`` and so to the downdate of ``M^A``; damping
``b`` enters as ``τ_j^(k) − b q_j^(k+1)`` (SPEC §5). A pivot ``D_j`` that is
numerically zero stops the call with the body's index (never NaN).
"""

import numpy as np

from .._checks import OK, SINGULAR_BASE
from .._jit import njit
from ..spatial.inertia import (_body_mass_jets, _com_order, _gravity_wrench_acc, _momentum_order,
                               _rot_inertia_order, _spatial_inertia_at)
from .kinematics import kinematics, screw_twist_order, set_base
from ..spatial.se3 import _move_inertia, _shift_twist, _shift_wrench_acc, _unshift_wrench

# A pivot D_j below PIVOT_RTOL times its magnitude scale is treated as zero.
# The scale is I_a + Σ_a S_a² M^A_aa + |ω|² tr(M^A_ωω), all about a point on
# the joint's axis (the articulated inertias are formed there, see
# articulated_inertia). M^A is positive semi-definite, so |M^A_ab| ≤
# √(M^A_aa M^A_bb) and the round-off of D_j = Sᵀ M^A S + I_a is at most a few
# tens of eps times the scale: at the threshold q^(k+2) would carry a
# relative error of order 1e-4, while a pivot that is zero in exact
# arithmetic (a point mass on a revolute axis) lands near eps² and is caught.
# Taken at the joint, the decision depends neither on where the robot is in
# the world nor on how far the joint is from its base.
PIVOT_RTOL = 1e-11

# A joint whose axis passes farther than this (in the model's length unit,
# metres) from its parent's point gets a point of its own for the articulated
# inertia (see articulated_inertia): the round-off of its pivot then grows
# with this reach, not with its distance from the base.
POINT_REACH = 1.0


@njit
def configuration(model, ws, C0, about_base, V0, q, r):
    """Everything of order 0 that the passes need: poses, ``S_j``, ``V_j``,
    ``c^(0..1)``, ``I_c^(0)``; zero the rows the passes accumulate into."""
    set_base(model, ws, C0, about_base, V0, 1)
    kinematics(model, ws, q, 0)                                               # SPEC §3: order 0
    C, S, V, c, Ic, W, binom = ws.C, ws.S, ws.V, ws.c, ws.Ic, ws.W, ws.binom
    for k in range(1, r + 2):
        V[k] = 0.0
        S[k, 0] = 0.0
    W[:r + 1] = 0.0
    for j in range(model.body_parent.shape[0]):
        _body_mass_jets(j, 0, model, C, V, binom, c, Ic)                      # c^(0,1), I_c^(0)


@njit(inline=True)
def _axis_point(j, S, C):
    """``x_j`` (about ``o``): the base's origin ``o`` itself for ``j = 0``; for a
    revolute joint (``S_j = (ω, v)``, ``|ω| = 1``, axis ``ω × v + t ω``) the
    projection of body j's origin on its axis; for a prismatic joint body
    j's origin."""
    if j == 0:
        return 0.0, 0.0, 0.0
    w0, w1, w2 = S[0, j, 0], S[0, j, 1], S[0, j, 2]
    y0, y1, y2 = C[j, 0, 3], C[j, 1, 3], C[j, 2, 3]
    if w0 == 0.0 and w1 == 0.0 and w2 == 0.0:
        return y0, y1, y2
    t = w0 * y0 + w1 * y1 + w2 * y2
    v0, v1, v2 = S[0, j, 3], S[0, j, 4], S[0, j, 5]
    return w1 * v2 - w2 * v1 + t * w0, w2 * v0 - w0 * v2 + t * w1, w0 * v1 - w1 * v0 + t * w2


@njit
def articulated_inertia(model, ws, motion):
    """``M^A_j``, ``U_j``, ``D_j`` for every body, leaves first (SPEC §5, §6).

    Needs only the configuration, so it is computed once and serves every
    order (Lemma 2). Each ``M^A_j`` is formed about a point ``x_j`` within
    ``POINT_REACH`` of joint j's axis (its parent's point when that is near
    enough, else the axis point of :func:`_axis_point`; ``x_0 = o``), where
    its entries have the size of the subtree, and moved to the parent's point
    for the downdate: the pivot ``D_j``, a difference of such entries, keeps
    its accuracy however far the joint is from the base, and a robot within
    reach of its base origin moves nothing. The outputs are about ``o``, as
    every other pass. Returns ``OK`` or the index of the first body whose
    pivot ``D_j`` is numerically zero.
    """
    parent, arm, mass = model.body_parent, model.joint_armature, model.body_mass
    S, C, c, Ic, MA, U, D = ws.S, ws.C, ws.c, ws.Ic, ws.MA, ws.U, ws.D
    N = parent.shape[0]
    # parents first: x_j, kept in U[j, :3] until body j's own U_j replaces it
    # (its children, visited before it below, read it there)
    for j in range(N):
        x, y, z = 0.0, 0.0, 0.0
        if j > 0:
            p = parent[j]
            x, y, z = U[p, 0], U[p, 1], U[p, 2]
            ax, ay, az = _axis_point(j, S, C)
            if (ax - x) ** 2 + (ay - y) ** 2 + (az - z) ** 2 > POINT_REACH ** 2:
                x, y, z = ax, ay, az
        U[j, 0], U[j, 1], U[j, 2] = x, y, z
        _spatial_inertia_at(mass[j], c[0, j, 0] - x, c[0, j, 1] - y, c[0, j, 2] - z, Ic[0, j],
                            MA[j])                                            # M_j about x_j
    for j in range(N - 1, 0, -1):
        p = parent[j]
        x, y, z = U[j, 0], U[j, 1], U[j, 2]
        px, py, pz = U[p, 0], U[p, 1], U[p, 2]
        w0, w1, w2 = S[0, j, 0], S[0, j, 1], S[0, j, 2]
        s = (w0, w1, w2, S[0, j, 3] + w1 * z - w2 * y, S[0, j, 4] + w2 * x - w0 * z,
             S[0, j, 5] + w0 * y - w1 * x)                                    # S_j about x_j
        scale = arm[j - 1] + (w0 * w0 + w1 * w1 + w2 * w2) * (MA[j, 0, 0] + MA[j, 1, 1]
                                                              + MA[j, 2, 2])
        for a in range(6):
            acc = 0.0
            for b in range(6):
                acc += MA[j, a, b] * s[b]
            U[j, a] = acc                                                     # SPEC §5: U = M^A S
            scale += s[a] * s[a] * MA[j, a, a]
        d = arm[j - 1]
        for a in range(6):
            d += s[a] * U[j, a]                                               # SPEC §5: D = Sᵀ U + I_a
        D[j] = d
        driven = False
        if motion is not None:
            driven = motion[j]
        if not driven and not d > PIVOT_RTOL * scale:
            return j
        if x != px or y != py or z != pz:                                     # to x_p
            _move_inertia(MA[j], x - px, y - py, z - pz)
            _unshift_wrench(U[j], (x - px, y - py, z - pz), U[j])
        if driven:
            for a in range(6):
                for b in range(6):
                    MA[p, a, b] += MA[j, a, b]                                # SPEC §6: kept whole
        else:
            for a in range(6):
                for b in range(6):
                    MA[p, a, b] += MA[j, a, b] - U[j, a] * U[j, b] / d        # SPEC §5: downdate
        if px != 0.0 or py != 0.0 or pz != 0.0:                               # to o
            _move_inertia(MA[j], px, py, pz)
            _unshift_wrench(U[j], (px, py, pz), U[j])
    U[0] = 0.0
    return OK


@njit(inline=True)
def cholesky6(A, L):
    """``A = L Lᵀ`` for the 6×6 ``M^A_0``; ``SINGULAR_BASE`` if ``A`` is not
    numerically positive definite, else ``OK``."""
    tol = 0.0
    for i in range(6):
        tol = max(tol, abs(A[i, i]))
    tol *= PIVOT_RTOL
    for i in range(6):
        for k in range(6):
            L[i, k] = 0.0
    for k in range(6):
        d = A[k, k]
        for a in range(k):
            d -= L[k, a] * L[k, a]
        if not d > tol:
            return SINGULAR_BASE
        L[k, k] = np.sqrt(d)
        for i in range(k + 1, 6):
            s = A[i, k]
            for a in range(k):
                s -= L[i, a] * L[k, a]
            L[i, k] = s / L[k, k]
    return OK


@njit(inline=True)
def cholesky6_solve(L, x):
    """``x ← (L Lᵀ)⁻¹ x`` in place."""
    for i in range(6):
        s = x[i]
        for a in range(i):
            s -= L[i, a] * x[a]
        x[i] = s / L[i, i]
    for i in range(5, -1, -1):
        s = x[i]
        for a in range(i + 1, 6):
            s -= L[a, i] * x[a]
        x[i] = s / L[i, i]


@njit
def bias_pass(model, ws, k, q, tau, W_app, motion):
    """Order k, leaves first: ``W^A_{j,k}``, ``Vbias_j`` and ``q̃_j``."""
    parent, mass, damp, g = model.body_parent, model.body_mass, model.joint_damping, model.gravity
    S, V, c, Ic, Pib, MA, U, D, W = ws.S, ws.V, ws.c, ws.Ic, ws.Pi, ws.MA, ws.U, ws.D, ws.W
    binom, d = ws.binom, ws.d
    for j in range(parent.shape[0] - 1, -1, -1):
        m = mass[j]
        # Π_j^(k+1) with V_j^(k+1) = 0 (row k+1 of V is still zero for body j)
        _com_order(j, k + 2, V, binom, c)
        _rot_inertia_order(j, k + 1, V, binom, Ic)
        _momentum_order(j, k + 1, m, V, c, Ic, binom, Pib)                     # Πbias_j
        for i in range(6):
            W[k, j, i] += Pib[k + 1, j, i]                                     # SPEC §5: W^A_{j,k}
        if W_app.shape[0] > 0:
            _shift_wrench_acc(-1.0, W_app[k, j], d, W[k, j])                    # − W_app,j^(k)
        _gravity_wrench_acc(-1.0, j, k, m, g, c, W[k, j])                      # − M_j^(k) G
        if j == 0:
            break
        p = parent[j]
        # S_j^(k+1), and V_j^(k+1) with V_p^(k+1) = 0: Vbias_j (+ S_j q_j^(k+2)
        # for a motion-driven joint; q_j^(k+2) is still 0 for a force-driven one)
        screw_twist_order(j, p, k + 1, q, binom, S, V)
        qt = 0.0
        if motion is None or not motion[j]:
            acc = tau[k, j - 1] - damp[j - 1] * q[k + 1, j - 1]                # SPEC §5: damping
            for a in range(1, k + 1):
                s = 0.0
                for i in range(6):
                    s += S[a, j, i] * W[k - a, j, i]
                acc -= binom[k, a] * s                                         # SPEC §5: Σ binom(k,a) S^(a)ᵀ W^(k−a)
            for i in range(6):
                acc -= U[j, i] * V[k + 1, j, i] + S[0, j, i] * W[k, j, i]      # SPEC §5: Sᵀ(M^A Vbias + W^A)
            qt = acc / D[j]
            q[k + 2, j - 1] = qt                                               # SPEC §5: q̃_j
        for a in range(6):
            acc = W[k, j, a] + U[j, a] * qt
            for b in range(6):
                acc += MA[j, a, b] * V[k + 1, j, b]
            W[k, p, a] += acc                                                  # SPEC §5, §6: parent's W^A


@njit
def recover(model, ws, k, q, tau, Vb, Wb, motion, base_motion):
    """Order k, parents first: ``V₀^(k+1)`` or ``W₀^(k)``, then ``q^(k+2)``,
    ``V^(k+1)``, ``W^(k)`` and the forces of motion-driven joints.

    ``Vb`` holds the prescribed base twist jet (motion-driven base; empty
    for a fixed one, which is at rest), ``Wb`` the base wrench jet
    (wrench-driven base), both about the world origin.
    """
    parent, arm, damp = model.body_parent, model.joint_armature, model.joint_damping
    S, V, c, MA, U, D, W, L = ws.S, ws.V, ws.c, ws.MA, ws.U, ws.D, ws.W, ws.L
    binom, d = ws.binom, ws.d
    if base_motion:
        if Vb.shape[0] > 0:
            _shift_twist(Vb[k + 1], d, V[k + 1, 0])                             # prescribed V₀^(k+1)
        else:
            V[k + 1, 0] = 0.0
    else:
        for i in range(6):
            V[k + 1, 0, i] = -W[k, 0, i]
        _shift_wrench_acc(1.0, Wb[k], d, V[k + 1, 0])
        cholesky6_solve(L, V[k + 1, 0])                                        # SPEC §5: V₀^(k+1)
    for j in range(parent.shape[0]):
        if j > 0:
            p = parent[j]
            if motion is None or not motion[j]:
                s = 0.0
                for i in range(6):
                    s += U[j, i] * V[k + 1, p, i]
                q[k + 2, j - 1] -= s / D[j]                                    # SPEC §5: q^(k+2)
                for i in range(6):
                    V[k + 1, j, i] += S[0, j, i] * q[k + 2, j - 1]
            for i in range(6):
                V[k + 1, j, i] += V[k + 1, p, i]                               # SPEC §5: V^(k+1)
        for a in range(6):
            acc = 0.0
            for b in range(6):
                acc += MA[j, a, b] * V[k + 1, j, b]
            W[k, j, a] += acc                                                  # SPEC §5: W = M^A V + W^A
        _com_order(j, k + 2, V, binom, c)                                      # c^(k+2) with V^(k+1)
        if motion is not None and j > 0 and motion[j]:
            acc = arm[j - 1] * q[k + 2, j - 1] + damp[j - 1] * q[k + 1, j - 1]
            for a in range(k + 1):
                s = 0.0
                for i in range(6):
                    s += S[a, j, i] * W[k - a, j, i]
                acc += binom[k, a] * s                                         # SPEC §4, §6: τ^(k)
            tau[k, j - 1] = acc
    if not base_motion:
        for i in range(6):
            W[k, 0, i] = 0.0
        _shift_wrench_acc(1.0, Wb[k], d, W[k, 0])


@njit
def articulated_factor(model, ws, motion, base_motion):
    """The articulated inertias (Lemma 2) and, unless the base motion is
    given, the Cholesky factor of ``M^A_0``: both once per call, for every
    order. Returns ``OK`` or a status."""
    status = articulated_inertia(model, ws, motion)
    if status != OK or base_motion:
        return status
    return cholesky6(ws.MA[0], ws.L)


@njit
def articulated_body(model, ws, C0, about_base, V0, Vb, Wb, W_app, r, q, tau, motion,
                     base_motion):
    """Orders ``0..r`` of forward/hybrid dynamics in place on ``q`` (rows 0–1
    the state, motion-driven rows given, the rest zero) and ``tau``; returns
    ``OK`` or a status (a body index for a singular pivot, ``SINGULAR_BASE``)."""
    configuration(model, ws, C0, about_base, V0, q, r)
    status = articulated_factor(model, ws, motion, base_motion)
    if status != OK:
        return status
    for k in range(r + 1):
        bias_pass(model, ws, k, q, tau, W_app, motion)
        recover(model, ws, k, q, tau, Vb, Wb, motion, base_motion)
    return OK
