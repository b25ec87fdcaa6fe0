"""The formulas of SPEC §3–§6 on CasADi SX, as per-body step functions.

Each step is one body's share of a pass at one order (or at every order of
an inverse-dynamics pass), written once with symbolic inputs and wrapped in
a ``casadi.Function``; :mod:`liedyn.symbolic.functions` calls the steps body
by body with the model's constants as numbers, so CasADi folds every product
with a zero or a one of the model (the zero entries of the joint screws, of
the home poses, of massless bodies) while it builds the graph. The steps are
cached per order: building the graph of a tree costs one call per body and
pass, at CasADi's speed, not one Python operation per scalar.

Layouts. Twist and wrench jets are matrices with a row per derivative and six
columns (angular first); a body's rotational inertia about its centre of mass
(world axes) is a 3×3 symmetric matrix whose mirrored entries are the same
expression; spatial inertias are 6×6 about the base origin ``o`` (SPEC §1).
"""

from functools import lru_cache
from math import comb

import casadi as ca

SX = ca.SX


# ------------------------------------------------------------- small algebra --

def _cross(a, b):
    return ca.vertcat(a[1] * b[2] - a[2] * b[1],
                      a[2] * b[0] - a[0] * b[2],
                      a[0] * b[1] - a[1] * b[0])


def _hat(w):
    z = SX(0)
    return ca.vertcat(ca.horzcat(z, -w[2], w[1]),
                      ca.horzcat(w[2], z, -w[0]),
                      ca.horzcat(-w[1], w[0], z))


def _ad(V, X):
    """``ad_V X = (ω × ω_X, v × ω_X + ω × v_X)`` (SPEC §1)."""
    w, v, xw, xv = V[:3], V[3:], X[:3], X[3:]
    return ca.vertcat(_cross(w, xw), _cross(v, xw) + _cross(w, xv))


def _sym3(xx, yy, zz, xy, xz, yz):
    return ca.vertcat(ca.horzcat(xx, xy, xz), ca.horzcat(xy, yy, yz), ca.horzcat(xz, yz, zz))


def _symmetric(A, n):
    """The symmetric matrix with ``A``'s upper triangle (one expression per pair)."""
    out = SX(n, n)
    for a in range(n):
        for b in range(a, n):
            out[a, b] = A[a, b]
            out[b, a] = A[a, b]
    return out


def rows(M):
    """The rows of a jet matrix as column vectors."""
    return [M[k, :].T for k in range(M.shape[0])]


def stack(vs):
    """Column vectors as the rows of a jet matrix."""
    return ca.vertcat(*[v.T for v in vs])


def _sym(name, n=1, m=1):
    return SX.sym(name, n, m)


# ----------------------------------------------------------------- formulas --

def joint_exp(Y, q, revolute):
    """``exp([Y] q)`` as ``(R, p)`` for a model's joint screw (SPEC §2): a unit
    revolute axis ``(e, x × e)`` or a prismatic ``(0, e)``."""
    e, v = Y[:3], Y[3:]
    if not revolute:
        return SX.eye(3), q * v
    s, k = ca.sin(q), 1.0 - ca.cos(q)
    E = _hat(e)
    return SX.eye(3) + s * E + k * ca.mtimes(E, E), s * v + k * _cross(e, v)


def screw_order(k, V, S):
    """``S^(k) = Σ_a binom(k−1, a) ad_{V^(a)} S^(k−1−a)``, k ≥ 1 (SPEC §3)."""
    acc = SX.zeros(6, 1)
    for a in range(k):
        acc = acc + comb(k - 1, a) * _ad(V[a], S[k - 1 - a])
    return acc


def twist_bias(k, S, q):
    """``Σ_{a=1}^{k} binom(k, a) S^(a) q^(k+1−a)``: the part of ``V^(k) − V_p^(k)``
    without ``S q^(k+1)`` (SPEC §3, §5's Vbias at order k−1)."""
    acc = SX.zeros(6, 1)
    for a in range(1, k + 1):
        acc = acc + (comb(k, a) * q[k + 1 - a]) * S[a]
    return acc


def com_order(k, V, c, v_k1=True):
    """``c^(k) = Σ_a binom(k−1, a) ω^(a) × c^(k−1−a) + v^(k−1)`` (SPEC §4);
    ``v_k1=False`` drops the terms of ``V^(k−1)`` (taken as zero)."""
    last = k if v_k1 else k - 1
    acc = V[k - 1][3:] if v_k1 else SX.zeros(3, 1)
    for a in range(last):
        acc = acc + comb(k - 1, a) * _cross(V[a][:3], c[k - 1 - a])
    return acc


def rot_inertia_order(k, V, I):
    """``I^(k) = Σ_a binom(k−1, a)(ω̂^(a) I^(k−1−a) − I^(k−1−a) ω̂^(a)) = X + Xᵀ``
    with ``X = Σ binom ω̂ I`` (SPEC §4)."""
    X = SX.zeros(3, 3)
    for a in range(k):
        X = X + comb(k - 1, a) * ca.mtimes(_hat(V[a][:3]), I[k - 1 - a])
    return _sym3(2 * X[0, 0], 2 * X[1, 1], 2 * X[2, 2], X[0, 1] + X[1, 0], X[0, 2] + X[2, 0],
                 X[1, 2] + X[2, 1])


def momentum_order(k, m, V, c, I, omega_k=True):
    """``Π^(k) = (h^(k), m c^(k+1))``, ``h^(k) = Σ_a binom(k,a)(I^(a) ω^(k−a) +
    c^(a) × m c^(k+1−a))`` (SPEC §4); ``omega_k=False`` takes ``ω^(k) = 0``."""
    h = SX.zeros(3, 1)
    for a in range(k + 1):
        b = comb(k, a)
        if a > 0 or omega_k:
            h = h + b * ca.mtimes(I[a], V[k - a][:3])
        h = h + (b * m) * _cross(c[a], c[k + 1 - a])
    return ca.vertcat(h, m * c[k + 1])


def gravity_wrench(k, m, g, c):
    """``M^(k) G = (c^(k) × m g⃗, m g⃗ [k = 0])`` (SPEC §4)."""
    mg = m * g
    return ca.vertcat(_cross(c[k], mg), mg if k == 0 else SX.zeros(3, 1))


def spatial_inertia(m, c, I):
    """``M = [[I + m(|c|² I₃ − c cᵀ), m ĉ], [m ĉᵀ, m I₃]]`` (SPEC §4), symmetric."""
    C = _hat(c)
    top = I + m * (ca.dot(c, c) * SX.eye(3) - ca.mtimes(c, c.T))
    M = ca.vertcat(ca.horzcat(top, m * C), ca.horzcat(m * C.T, m * SX.eye(3)))
    return _symmetric(M, 6)


# ------------------------------------------------------------ step functions --

def _body_inputs():
    return (_sym("Rp", 3, 3), _sym("pp", 3), _sym("Y", 6), _sym("Hr", 3, 3), _sym("Hp", 3))


def _pose_and_screw(Rp, pp, qj, Y, Hr, Hp, revolute):
    """``F_j = F_p exp([Y] q)``, ``C_j = F_j H_j``, ``S_j = Ad_{F_j} Y`` (SPEC §3)."""
    ER, Ep = joint_exp(Y, qj, revolute)
    R = ca.mtimes(Rp, ER)
    p = ca.mtimes(Rp, Ep) + pp
    Rc = ca.mtimes(R, Hr)
    pc = ca.mtimes(R, Hp) + p
    w = ca.mtimes(R, Y[:3])
    S0 = ca.vertcat(w, ca.mtimes(R, Y[3:]) + _cross(p, w))
    return R, p, Rc, pc, S0


def _inertia_inputs():
    return _sym("m"), _sym("com", 3), _sym("J", 3, 3)


def _com_inertia(Rc, pc, com, J):
    c0 = ca.mtimes(Rc, com) + pc
    I0 = _symmetric(ca.mtimes(ca.mtimes(Rc, J), Rc.T), 3)
    return c0, I0


@lru_cache(maxsize=None)
def kinematics_step(K, revolute):
    """Body j's pose, screw and twist jets ``S^(0..K)``, ``V^(0..K)`` (SPEC §3),
    from its parent's ``F_p`` and ``V_p^(0..K)`` and its joint jet ``q^(0..K+1)``."""
    Rp, pp, Y, Hr, Hp = _body_inputs()
    Vp, qj = _sym("Vp", K + 1, 6), _sym("q", K + 2)
    R, p, Rc, pc, S0 = _pose_and_screw(Rp, pp, qj[0], Y, Hr, Hp, revolute)
    Vpr, S, V = rows(Vp), [S0], []
    for k in range(K + 1):
        if k >= 1:
            S.append(screw_order(k, V, S))
        V.append(Vpr[k] + twist_bias(k, S, qj) + qj[k + 1] * S[0])
    return ca.Function(f"kin{K}{'r' if revolute else 'p'}", [Rp, pp, Vp, qj, Y, Hr, Hp],
                       [R, p, Rc, pc, stack(S), stack(V)])


@lru_cache(maxsize=None)
def own_wrench_step(r):
    """A body's own terms of ``W^(0..r)`` in SPEC §4, ``Π^(k+1) − M^(k) G``, from
    its pose ``C_j`` and twist jet ``V^(0..r+1)``."""
    Rc, pc, V = _sym("Rc", 3, 3), _sym("pc", 3), _sym("V", r + 2, 6)
    m, com, J = _inertia_inputs()
    g = _sym("g", 3)
    Vr = rows(V)
    c0, I0 = _com_inertia(Rc, pc, com, J)
    c, I = [c0], [I0]
    for k in range(1, r + 3):
        c.append(com_order(k, Vr, c))
    for k in range(1, r + 2):
        I.append(rot_inertia_order(k, Vr, I))
    W = [momentum_order(k + 1, m, Vr, c, I) - gravity_wrench(k, m, g, c) for k in range(r + 1)]
    return ca.Function(f"own{r}", [Rc, pc, V, m, com, J, g], [stack(W)])


@lru_cache(maxsize=None)
def projection_step(r):
    """``τ^(k) = Σ_a binom(k, a) S^(a)ᵀ W^(k−a) + I_a q^(k+2) + b q^(k+1)`` (SPEC §4, §5)."""
    S, W, qj = _sym("S", r + 1, 6), _sym("W", r + 1, 6), _sym("q", r + 3)
    arm, damp = _sym("arm"), _sym("damp")
    Sr, Wr = rows(S), rows(W)
    tau = []
    for k in range(r + 1):
        acc = arm * qj[k + 2] + damp * qj[k + 1]
        for a in range(k + 1):
            acc = acc + comb(k, a) * ca.dot(Sr[a], Wr[k - a])
        tau.append(acc)
    return ca.Function(f"proj{r}", [S, W, qj, arm, damp], [ca.vertcat(*tau)])


@lru_cache(maxsize=None)
def configuration_step():
    """Order-0 inertia data of a body: ``c^(0)``, ``c^(1)``, ``I^(0)`` and its
    spatial inertia ``M_j`` about ``o`` (SPEC §4, §5)."""
    Rc, pc, V0 = _sym("Rc", 3, 3), _sym("pc", 3), _sym("V0", 6)
    m, com, J = _inertia_inputs()
    c0, I0 = _com_inertia(Rc, pc, com, J)
    c1 = com_order(1, [V0], [c0])
    return ca.Function("config", [Rc, pc, V0, m, com, J], [c0, c1, I0, spatial_inertia(m, c0, I0)])


@lru_cache(maxsize=None)
def articulated_step():
    """``U = M^A S``, ``D = Sᵀ U + I_a`` and the downdated ``M^A − U Uᵀ / D``
    passed to the parent (SPEC §5)."""
    MA, S, arm = _sym("MA", 6, 6), _sym("S", 6), _sym("arm")
    U = ca.mtimes(MA, S)
    D = ca.dot(S, U) + arm
    Ui = U / D
    return ca.Function("abi", [MA, S, arm], [U, D, _symmetric(MA - ca.mtimes(U, Ui.T), 6)])


@lru_cache(maxsize=None)
def bias_step(k, kind):
    """Body j's bias terms of order k, leaves first (SPEC §5, §6).

    ``kind``: ``"force"`` (a force-driven joint: ``q̃_j``), ``"motion"`` (a
    motion-driven joint: ``q^(k+2)`` given) or ``"base"`` (body 0: no joint).
    Inputs: the body's jets of orders ``0..k`` (``S``, ``V``, ``I``; ``c`` to
    ``k+1``; ``W`` to ``k−1``), ``q^(0..k+2)``, its ``M^A``, ``U``, ``D``, the sum
    ``ext`` of its children's contributions minus its applied wrench (about
    ``o``), ``τ^(k)``. Outputs: ``S^(k+1)``, ``Vbias``, ``I^(k+1)``, ``W^A_{j,k}``,
    ``q̃`` (zero unless force-driven) and the contribution to the parent's
    ``W^A``.
    """
    S, V, W = _sym("S", k + 1, 6), _sym("V", k + 1, 6), _sym("W", max(k, 1), 6)
    c, I = _sym("c", k + 2, 3), _sym("I", 3 * (k + 1), 3)
    qj, MA, U, D = _sym("q", k + 3), _sym("MA", 6, 6), _sym("U", 6), _sym("D")
    ext, tau_k, damp, m, g = _sym("ext", 6), _sym("tau"), _sym("damp"), _sym("m"), _sym("g", 3)
    Sr, Vr, Wr, cr = rows(S), rows(V), rows(W), rows(c)
    Ir = [I[3 * a:3 * a + 3, :] for a in range(k + 1)]
    Ik1 = rot_inertia_order(k + 1, Vr, Ir)                     # needs ω^(0..k)
    Ir = Ir + [Ik1]
    c_part = com_order(k + 2, Vr + [SX.zeros(6, 1)], cr, v_k1=False)      # V^(k+1) = 0
    Vz = Vr + [SX.zeros(6, 1)]
    Pib = momentum_order(k + 1, m, Vz, cr + [c_part], Ir, omega_k=False)  # Πbias
    WA = Pib - gravity_wrench(k, m, g, cr) + ext
    zero6 = SX.zeros(6, 1)
    if kind == "base":
        Sk1, Vb, qt, contrib = zero6, zero6, SX(0), zero6
    else:
        Sk1 = screw_order(k + 1, Vr, Sr)
        Sall = Sr + [Sk1]
        Vb = twist_bias(k + 1, Sall, qj)                        # SPEC §5: Vbias
        if kind == "force":
            acc = tau_k - damp * qj[k + 1]
            for a in range(1, k + 1):
                acc = acc - comb(k, a) * ca.dot(Sall[a], Wr[k - a])
            acc = acc - ca.dot(U, Vb) - ca.dot(Sall[0], WA)
            qt = acc / D                                        # SPEC §5: q̃_j
            contrib = WA + U * qt + ca.mtimes(MA, Vb)
        else:
            qt = SX(0)
            contrib = WA + ca.mtimes(MA, Sall[0] * qj[k + 2] + Vb)   # SPEC §6
    return ca.Function(f"bias{k}{kind}", [S, V, W, c, I, qj, MA, U, D, ext, tau_k, damp, m, g],
                       [Sk1, Vb, Ik1, WA, qt, contrib])


@lru_cache(maxsize=None)
def recovery_step(k, kind):
    """Body j's order-k recovery, parents first (SPEC §5, §6): ``q^(k+2)``
    (force-driven), ``V^(k+1)``, ``W^(k) = M^A V^(k+1) + W^A``, ``c^(k+2)`` and,
    for a motion-driven joint, ``τ^(k)``."""
    Vp1, qt, U, D, Vb = _sym("Vp", 6), _sym("qt"), _sym("U", 6), _sym("D"), _sym("Vb", 6)
    S, MA, WA = _sym("S", k + 1, 6), _sym("MA", 6, 6), _sym("WA", 6)
    V, c, W = _sym("V", k + 1, 6), _sym("c", k + 2, 3), _sym("W", max(k, 1), 6)
    qj = _sym("q", k + 3)
    arm, damp = _sym("arm"), _sym("damp")
    Sr, Vr, cr, Wr = rows(S), rows(V), rows(c), rows(W)
    tau = SX(0)
    if kind == "base":
        qk2, Vk1 = SX(0), Vp1                                   # Vp1: the base's V₀^(k+1)
    elif kind == "force":
        qk2 = qt - ca.dot(U, Vp1) / D                           # SPEC §5: q^(k+2)
        Vk1 = Vp1 + Vb + Sr[0] * qk2
    else:
        qk2 = qj[k + 2]
        Vk1 = Vp1 + Vb + Sr[0] * qk2
    Wk = ca.mtimes(MA, Vk1) + WA                                # SPEC §5: W = M^A V + W^A
    ck2 = com_order(k + 2, Vr + [Vk1], cr)
    if kind == "motion":
        Wall = Wr[:k] + [Wk]
        tau = arm * qk2 + damp * qj[k + 1]
        for a in range(k + 1):
            tau = tau + comb(k, a) * ca.dot(Sr[a], Wall[k - a])  # SPEC §4, §6
    return ca.Function(f"rec{k}{kind}", [Vp1, qt, U, D, Vb, S, MA, WA, V, c, W, qj, arm, damp],
                       [qk2, Vk1, Wk, ck2, tau])


@lru_cache(maxsize=None)
def cholesky_step():
    """``L`` with ``L Lᵀ = M^A_0`` (6×6, lower)."""
    A = _sym("A", 6, 6)
    L = SX(6, 6)
    for k in range(6):
        d = A[k, k]
        for a in range(k):
            d = d - L[k, a] * L[k, a]
        L[k, k] = ca.sqrt(d)
        inv = 1.0 / L[k, k]
        for i in range(k + 1, 6):
            s = A[i, k]
            for a in range(k):
                s = s - L[i, a] * L[k, a]
            L[i, k] = s * inv
    return ca.Function("chol", [A], [L])


@lru_cache(maxsize=None)
def cholesky_solve_step():
    """``x = (L Lᵀ)⁻¹ b``."""
    L, b = _sym("L", 6, 6), _sym("b", 6)
    x = [None] * 6
    for i in range(6):
        s = b[i]
        for a in range(i):
            s = s - L[i, a] * x[a]
        x[i] = s / L[i, i]
    for i in range(5, -1, -1):
        s = x[i]
        for a in range(i + 1, 6):
            s = s - L[a, i] * x[a]
        x[i] = s / L[i, i]
    return ca.Function("cholsolve", [L, b], [ca.vertcat(*x)])
