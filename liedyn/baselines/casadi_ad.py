"""The paper's automatic-differentiation baseline (SPEC §9), also an oracle.

The 0-th order inverse map ``y_ID(t) = [W₀(t); τ(t)]`` and forward map
``y_FD(t) = [V̇₀(t); q̈(t)]`` of a :class:`liedyn.Model` are built as CasADi SX
expressions of time ``t`` and a parameter vector ``p`` holding the Taylor
coefficients of the trajectory, differentiated ``r`` times with
``casadi.jtimes(dy, t, 1)`` and wrapped in one ``casadi.Function`` per ``r``
(JIT off). Evaluated at ``t = 0`` they return the order-``r`` outputs of
:func:`liedyn.inverse_dynamics` and :func:`liedyn.forward_dynamics`, computed
by a different route: a plain world-frame Newton–Euler at order 0, written
here from the model's body-frame data (origins, joint axes and points, mass,
centre of mass, rotational inertia) and not from liedyn's kernels, with every
time derivative taken by automatic differentiation.

**Valid at** ``t = 0`` **only.** The functions return ``d^r/dt^r`` at ``t`` of
the maps along the polynomial trajectory that ``p`` holds; that is the
``r``-th time derivative of the dynamics at ``t = 0`` and nothing meaningful
at any other ``t`` (the polynomial pose is not a rigid transform there).
Always evaluate them at ``t = 0``, with ``p`` from :meth:`CasadiBaseline.pack_inverse_params`
or :meth:`CasadiBaseline.pack_forward_params`, which also take CasADi SX/MX
arguments.

This module is the benchmark baseline and a test oracle. For optimisation,
state derivatives or C code use :mod:`liedyn.symbolic` (SPEC §15):
:func:`liedyn.symbolic.inverse_dynamics_function`,
:func:`liedyn.symbolic.forward_dynamics_function` and
:func:`liedyn.symbolic.hybrid_dynamics_function` give the jets of every order
as functions of the state with named inputs, with a graph that grows as
``O(N r²)`` instead of geometrically in ``r``.

Glossary
--------
==============  =============  ================================================
``t``           SX scalar      time (evaluate at ``t = 0`` only, see above)
``p``           SX (P,)        Taylor coefficients of the trajectory (layouts below)
``C₀(t)``       3×4            base pose polynomial ``Σ_k C₀^(k) t^k/k!`` (SPEC §3)
``V₀(t)``       (6,)           base twist polynomial ``Σ_k V₀^(k) t^k/k!``
``q(t)``        (n,)           joint polynomial ``Σ_k q^(k) t^k/k!``
``W₀(t)``       (6,)           base wrench polynomial (forward map only)
``τ(t)``        (n,)           joint force polynomial (forward map only)
``y_ID``        (6+n,)         ``[W₀; τ]`` (``W₀`` is the reaction for a fixed base)
``y_FD``        (6+n,)         ``[V̇₀; q̈]`` (``V̇₀ ≡ 0`` for a fixed base)
==============  =============  ================================================

The polynomial pose is not a rigid transform for ``t ≠ 0``, but it agrees with
the true pose to ``O(t^{r+1})``, which is all ``d^r/dt^r`` at ``t = 0`` sees
(SPEC §9). The Newton–Euler below never inverts a pose: it uses the world
centre of mass ``c = R c_b + x`` and the world rotational inertia
``I_c = R J Rᵀ``, which agree with their rigid values to the same order.

Parameter layouts (blocks in this order, each block row-major, row ``k`` the
``k``-th Taylor coefficient; ``C₀^(k)`` enters as its top 3×4 block):

* inverse, order ``r``: ``C₀^(0..r)`` (12 each), ``V₀^(0..r+1)`` (6 each),
  ``q^(0..r+2)`` (n each). Fixed base: ``C₀`` alone, no ``V₀``.
* forward, order ``r``: ``C₀^(0..r)``, ``V₀^(0..r)``, ``q^(0..r+1)``,
  ``W₀^(0..r)``, ``τ^(0..r)``. Fixed base: ``C₀`` alone, no ``V₀``, no ``W₀``.
* with ``CasadiBaseline(model, applied=True)`` both end with the applied
  wrench jets ``W_app^(0..r)`` (6N each, body-major).

The forward map has two constructions (``forward=``):

* ``"articulated"``, the paper's (its Table 4: "the FD graph includes CasADi
  built-ins mtimes and solve (for base twist)"): the order-0 articulated-body
  algorithm in world-frame spatial quantities, with ``casadi.mtimes`` for
  the 6×6 products of the articulated inertias and one ``casadi.solve`` of
  the base's 6×6 articulated system for ``V̇₀``; each joint then needs only a
  scalar division. The graph grows linearly with N.
* ``"mass_matrix"``: the mass matrix as the Jacobian of the inverse map with
  respect to the accelerations, the bias as the inverse map at zero
  acceleration, and a solve of the whole ``(6+n)`` system with CasADi's
  sparse LDLᵀ (``casadi.ldl``; the mass matrix is symmetric positive
  definite) or, with ``solver="qr"``, ``casadi.solve``. It shares no step
  with the recursions of liedyn, which makes it the stronger oracle; its
  graph is larger (the mass matrix has O(N²) entries on a branched tree).

The graph of ``d^r y/dt^r`` grows geometrically with ``r`` (each ``jtimes``
multiplies its size by about 3 on the benchmark tree), which is what the
benchmark of SPEC §9 measures.

Usage::

    base = CasadiBaseline(model)
    # = inverse_dynamics(...).base_wrench[r], .tau[r]
    W0_r, tau_r = base.inverse_derivative(C0, base_twist, q, r)
    f = base.inverse(r)              # casadi.Function (t, p) → d^r y_ID/dt^r
    p = base.pack_inverse_params(C0, base_twist, q, r)
    y = f(0.0, p)                    # at t = 0 only
    base.inverse_layout(r)           # the blocks of p: (("pose", r+1, 12), ("twist", r+2, 6), ...)

"""

import time
from typing import NamedTuple

import numpy as np

try:
    import casadi as ca
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("liedyn.baselines needs CasADi: pip install 'liedyn[casadi]'") from exc

from ..spatial import se3
from .._checks import (check_applied_slow, check_jet, check_motion_jet, check_motion_slow,
                       check_order, check_pose)
from ..multibody.model import JOINT_REVOLUTE, check_model
from ..multibody.workspace import binomials

SOLVERS = ("ldl", "qr")
FORWARD = ("mass_matrix", "articulated")


# ------------------------------------------------------- symbolic inputs --

def _is_symbolic(x):
    return isinstance(x, (ca.SX, ca.MX))


def _symbolic_kind(named):
    """``casadi.SX`` or ``casadi.MX``, the type of the symbolic values of
    ``named`` (name → value), or ``None`` when every value is numeric."""
    kind = first = None
    for name, x in named.items():
        if _is_symbolic(x):
            if kind is None:
                kind, first = type(x), name
            elif type(x) is not kind:
                raise TypeError(f"{name}: a casadi.{type(x).__name__} with a casadi."
                                f"{kind.__name__} ({first}); pass one kind of symbol")
    return kind


def _casadi(x):
    """``x`` as a CasADi matrix (numbers as ``DM``)."""
    return x if _is_symbolic(x) else ca.DM(np.asarray(x, float))


def _symbolic_jet(x, name, rows, cols, prefix, note=""):
    """A symbolic jet of ``rows`` rows (or more, read as a prefix, when
    ``prefix``) and ``cols`` columns; its first ``rows`` rows."""
    n_rows, n_cols = x.shape
    if n_cols != cols or (n_rows < rows if prefix else n_rows != rows):
        more = " or more" if prefix else ""
        raise ValueError(f"{name}: expected a symbolic jet of shape ({rows}{more}, {cols}) "
                         f"(row k = k-th time derivative{note}), got {x.shape}")
    return x[:rows, :]


def _motion_arg(x, name, rows, cols):
    if _is_symbolic(x):
        return _symbolic_jet(x, name, rows, cols, prefix=True)
    return check_motion_jet(x, name, rows, cols)


def _force_arg(x, name, rows, cols):
    if _is_symbolic(x):
        return _symbolic_jet(x, name, rows, cols, prefix=False)
    return check_jet(x, name, (rows, cols))


# ------------------------------------------------------- symbolic dynamics --

def _cross(a, b):
    return ca.vertcat(a[1] * b[2] - a[2] * b[1],
                      a[2] * b[0] - a[0] * b[2],
                      a[0] * b[1] - a[1] * b[0])


def _ad(V, X):
    """``ad_V X = (ω × ω_X, ω × v_X + v × ω_X)``."""
    w, v, wx, vx = V[:3], V[3:], X[:3], X[3:]
    return ca.vertcat(_cross(w, wx), _cross(w, vx) + _cross(v, wx))


def _kinematics(model, R0, x0, V0, q, qd):
    """World-frame pose, joint screw and twist of every body on SX.

    Returns lists over bodies ``R`` (3×3), ``x`` (3,), ``S`` (6,) (``None``
    for the base) and ``V`` (6,), written from the model's body-frame data.
    """
    N = model.n_bodies
    R, x, S, V = [None] * N, [None] * N, [None] * N, [None] * N
    R[0], x[0], V[0] = R0, x0, V0
    for j in range(1, N):
        p, i = int(model.body_parent[j]), j - 1
        RA = model.body_origin[j][:3, :3]
        xA = model.body_origin[j][:3, 3]
        e = model.joint_axis[i]
        ew = ca.mtimes(R[p], ca.DM(RA @ e))            # joint axis in the world
        revolute = model.joint_type[i] == JOINT_REVOLUTE
        if revolute:
            E = se3.hat(e)
            K1, K2 = RA @ E, RA @ E @ E
            pt = model.joint_point[i]
            s, c1 = ca.sin(q[i]), 1.0 - ca.cos(q[i])
            RL = ca.DM(RA) + s * ca.DM(K1) + c1 * ca.DM(K2)      # A_j exp(ê q): Rodrigues
            xL = ca.DM(xA) - s * ca.DM(K1 @ pt) - c1 * ca.DM(K2 @ pt)
        else:
            RL, xL = ca.DM(RA), ca.DM(xA) + ca.DM(RA @ e) * q[i]
        R[j] = ca.mtimes(R[p], RL)                     # SPEC §3: C_j = C_p A_j exp([Yᵇ] q)
        x[j] = ca.mtimes(R[p], xL) + x[p]
        if revolute:
            point = ca.mtimes(R[j], ca.DM(pt)) + x[j]
            S[j] = ca.vertcat(ew, _cross(point, ew))              # (e, x × e)
        else:
            S[j] = ca.vertcat(ca.DM.zeros(3), ew)
        V[j] = V[p] + S[j] * qd[i]
    return R, x, S, V


def _momentum_and_gravity(model, j, R, x, V):
    """World centre of mass ``c``, rotational inertia ``I_c``, momentum
    ``Π = (I_c ω + c × l, l)`` with ``l = m (v + ω × c)``, and gravity wrench
    ``(c × m g, m g)`` of body ``j`` (all SX)."""
    m = float(model.body_mass[j])
    c = ca.mtimes(R[j], ca.DM(model.body_com[j])) + x[j]
    Ic = ca.mtimes(ca.mtimes(R[j], ca.DM(model.body_rot_inertia[j])), R[j].T)
    w, v = V[j][:3], V[j][3:]
    lin = m * (v + _cross(w, c))
    ang = ca.mtimes(Ic, w) + _cross(c, lin)
    mg = m * ca.DM(model.gravity)
    return c, Ic, ca.vertcat(ang, lin), ca.vertcat(_cross(c, mg), mg)


def _newton_euler(model, R0, x0, V0, A0, q, qd, qdd, applied=None):
    """Order-0 world-frame Newton–Euler on SX: ``(W₀ (6,), τ (n,))``.

    ``R0, x0`` the base pose, ``V0, A0`` the base twist and its derivative,
    ``q, qd, qdd`` the joint state; ``applied`` an optional list of N spatial
    wrenches acting on the bodies; all SX (or constants).
    """
    N = model.n_bodies
    R, x, S, V = _kinematics(model, R0, x0, V0, q, qd)
    A, W = [None] * N, [None] * N
    A[0] = A0
    for j in range(N):
        if j > 0:
            p, i = int(model.body_parent[j]), j - 1
            A[j] = A[p] + _ad(V[j], S[j]) * qd[i] + S[j] * qdd[i]     # Ṡ = ad_V S
        m = float(model.body_mass[j])
        c, Ic, Pi, Wg = _momentum_and_gravity(model, j, R, x, V)
        w, v, al, a = V[j][:3], V[j][3:], A[j][:3], A[j][3:]
        ang, lin = Pi[:3], Pi[3:]
        fA = m * (a + _cross(al, c))                                   # M V̇
        nA = ca.mtimes(Ic, al) + _cross(c, fA)
        W[j] = ca.vertcat(nA + _cross(w, ang) + _cross(v, lin),       # M V̇ − ad_Vᵀ M V − M G
                          fA + _cross(w, lin)) - Wg                   # SPEC §4, order 0
        if applied is not None:
            W[j] = W[j] - applied[j]
    tau = [None] * (N - 1)
    for j in range(N - 1, 0, -1):
        i = j - 1
        tau[i] = (ca.dot(S[j], W[j]) + model.joint_armature[i] * qdd[i]
                  + model.joint_damping[i] * qd[i])
        W[int(model.body_parent[j])] = W[int(model.body_parent[j])] + W[j]
    return W[0], ca.vertcat(*tau) if tau else ca.SX(0, 1)


def _spatial_inertia(m, c, Ic):
    """World-frame spatial inertia about the origin, angular first:
    ``[[I_c − m [c]², m [c]], [−m [c], m 1]]`` (so that ``M V = Π``)."""
    C = ca.vertcat(ca.horzcat(0, -c[2], c[1]), ca.horzcat(c[2], 0, -c[0]),
                   ca.horzcat(-c[1], c[0], 0))
    return ca.vertcat(ca.horzcat(Ic - m * ca.mtimes(C, C), m * C),
                      ca.horzcat(-m * C, m * ca.DM.eye(3)))


def _articulated(model, R0, x0, V0, W0, q, qd, tau, applied=None):
    """Order-0 articulated-body forward dynamics on SX: ``(V̇₀ (6,), q̈ (n,))``.

    World-frame spatial form: every body ``j`` obeys ``W_j = M^A_j V̇_j + p^A_j``
    with ``W_j`` the wrench its joint transmits. Inward pass, leaves first:
    ``U_j = M^A_j S_j``, ``D_j = S_jᵀ U_j + I_a``, ``u_j = τ_j − b q̇_j −
    S_jᵀ (M^A_j c_j + p^A_j)`` with ``c_j = ad_{V_j} S_j q̇_j``; the parent
    gains ``M^A_j − U_j U_jᵀ / D_j`` and ``M^A_j c_j + p^A_j + U_j u_j / D_j``.
    The base: ``V̇₀ = solve(M^A_0, W₀ − p^A_0)`` (zero for a fixed base).
    Outward pass: ``q̈_j = (u_j − U_jᵀ V̇_p) / D_j``, ``V̇_j = V̇_p + c_j + S_j q̈_j``.
    ``W0`` is ``None`` for a fixed base; ``applied`` as in :func:`_newton_euler`.
    """
    N = model.n_bodies
    R, x, S, V = _kinematics(model, R0, x0, V0, q, qd)
    MA, pA = [None] * N, [None] * N
    for j in range(N):
        c, Ic, Pi, Wg = _momentum_and_gravity(model, j, R, x, V)
        MA[j] = _spatial_inertia(float(model.body_mass[j]), c, Ic)
        w, v = V[j][:3], V[j][3:]
        pA[j] = ca.vertcat(_cross(w, Pi[:3]) + _cross(v, Pi[3:]),        # −ad_Vᵀ Π − W_grav
                           _cross(w, Pi[3:])) - Wg
        if applied is not None:
            pA[j] = pA[j] - applied[j]
    U, D, u, cj = [None] * N, [None] * N, [None] * N, [None] * N
    for j in range(N - 1, 0, -1):
        p, i = int(model.body_parent[j]), j - 1
        cj[j] = _ad(V[j], S[j]) * qd[i]
        U[j] = ca.mtimes(MA[j], S[j])
        D[j] = ca.dot(S[j], U[j]) + model.joint_armature[i]
        bias = ca.mtimes(MA[j], cj[j]) + pA[j]
        u[j] = tau[i] - model.joint_damping[i] * qd[i] - ca.dot(S[j], bias)
        MA[p] = MA[p] + MA[j] - ca.mtimes(U[j], U[j].T) / D[j]
        pA[p] = pA[p] + bias + U[j] * (u[j] / D[j])
    A = [None] * N
    A[0] = ca.solve(MA[0], W0 - pA[0]) if W0 is not None else ca.DM.zeros(6)
    qdd = [None] * (N - 1)
    for j in range(1, N):
        p, i = int(model.body_parent[j]), j - 1
        qdd[i] = (u[j] - ca.dot(U[j], A[p])) / D[j]
        A[j] = A[p] + cj[j] + S[j] * qdd[i]
    return A[0], ca.vertcat(*qdd) if qdd else ca.SX(0, 1)


# ------------------------------------------------------------ trajectories --

class Block(NamedTuple):
    """One block of a parameter vector: ``rows`` Taylor coefficients (row ``k``
    the ``k``-th) of ``width`` entries each, stored row-major."""

    name: str
    rows: int
    width: int


class ParameterLayout(tuple):
    """The blocks of the parameter vector ``p`` of one map, in their order in ``p``.

    A tuple of :class:`Block` named tuples ``(name, rows, width)`` (so
    ``tuple(layout) == (("pose", 2, 12), ("twist", 3, 6), ...)``), with the
    length of ``p`` as ``size`` and the place of a block in ``p`` from
    :meth:`slice`.
    """

    def __new__(cls, blocks):
        return super().__new__(cls, (Block(str(name), int(rows), int(width))
                                     for name, rows, width in blocks))

    @property
    def size(self):
        """Length of ``p``: ``Σ rows · width``."""
        return sum(b.rows * b.width for b in self)

    def slice(self, name):
        """``p[layout.slice(name)]`` is block ``name``, row-major."""
        start = 0
        for b in self:
            if b.name == name:
                return slice(start, start + b.rows * b.width)
            start += b.rows * b.width
        raise ValueError(f"name: expected one of {[b.name for b in self]}, got {name!r}")

    def __repr__(self):
        blocks = ", ".join(repr(tuple(b)) for b in self)
        return f"ParameterLayout([{blocks}], size={self.size})"


def _pack(layout, **arrays):
    """``p`` from one ``(rows, width)`` array per block: a NumPy ``(size,)``
    vector, or a CasADi column of the symbols' type when any block is SX/MX."""
    kind = _symbolic_kind(arrays)
    if kind is None:
        out = [np.asarray(arrays[b.name], float).reshape(b.rows * b.width) for b in layout]
        return np.concatenate(out) if out else np.zeros(0)
    return ca.vertcat(kind(0, 1), *[ca.vec(_casadi(arrays[b.name]).T) for b in layout])


def _unpack(layout, p):
    """Per block name, the list of coefficient columns of ``p`` (SX ``(width, 1)``)."""
    out = {}
    for b in layout:
        k = layout.slice(b.name).start
        out[b.name] = [p[k + a * b.width:k + (a + 1) * b.width] for a in range(b.rows)]
    return out


def _taylor(coeffs, t):
    """``Σ_k coeffs[k] t^k / k!`` in Horner form."""
    acc = coeffs[-1]
    for k in range(len(coeffs) - 2, -1, -1):
        acc = coeffs[k] + acc * (t / (k + 1))
    return acc


def _pose(coeffs, t):
    """``R₀(t)`` (3×3) and ``x₀(t)`` (3,) from 3×4 row-major coefficients."""
    P = _taylor(coeffs, t)
    R = ca.vertcat(*[ca.horzcat(P[4 * i], P[4 * i + 1], P[4 * i + 2]) for i in range(3)])
    return R, ca.vertcat(P[3], P[7], P[11])


def base_pose_jet(base_pose, base_twist, rows):
    """``C₀^(0..rows−1)`` from the pose and the twist jet,
    ``C₀^(k) = Σ_{a<k} C(k−1, a) [V₀^(a)] C₀^(k−1−a)`` (SPEC §3).

    ``base_pose`` ``(4, 4)``, ``base_twist`` ``(rows−1, 6)`` or more rows
    (row ``a`` is ``V₀^(a)``). Returns ``(rows, 12)``: row ``k`` the top 3×4
    block of ``C₀^(k)``, row-major; a NumPy array, or, when either argument is
    a CasADi ``SX``/``MX``, a CasADi matrix of that type (a symbolic pose is
    used as given, with last row ``(0, 0, 0, 1)``).
    """
    kind = _symbolic_kind({"base_pose": base_pose, "base_twist": base_twist})
    binom = binomials(max(rows, 1))
    C = [ca.vertcat(_casadi(base_pose)[:3, :], ca.DM([[0.0, 0.0, 0.0, 1.0]]))]
    Vb = _casadi(base_twist) if rows > 1 else None
    for k in range(1, rows):
        acc = 0
        for a in range(k):
            acc = acc + binom[k - 1, a] * ca.mtimes(_hat(Vb[a, :]), C[k - 1 - a])   # SPEC §3
        C.append(acc)
    out = ca.vertcat(*[ca.vec(Ck[:3, :].T).T for Ck in C])
    return kind(out) if kind is not None else np.array(out, float).reshape(rows, 12)


def _hat(V):
    """``[V]`` (4×4) of a twist ``(ω, v)``."""
    w0, w1, w2, v0, v1, v2 = (V[i] for i in range(6))
    return ca.vertcat(ca.horzcat(0, -w2, w1, v0), ca.horzcat(w2, 0, -w0, v1),
                      ca.horzcat(-w1, w0, 0, v2), ca.DM.zeros(1, 4))


def _state(model, base_pose, base_twist, q, twist_rows, q_rows):
    """Checked ``(C₀, V₀ jet, q jet)``; a fixed base's twist jet is zero.
    Symbolic (SX/MX) arguments are checked for shape only and returned cut to
    the rows read; numeric ones are checked as by the numeric API."""
    n = model.n_joints
    if _symbolic_kind({"base_pose": base_pose, "base_twist": base_twist, "q": q}) is None:
        C0, Vb, qj = check_motion_slow(model, base_pose, base_twist, q, twist_rows, q_rows)
        return C0, (Vb if model.floating_base else np.zeros((twist_rows, 6))), qj
    if base_pose is None:
        C0 = model.home_pose
    elif _is_symbolic(base_pose):
        if base_pose.shape != (4, 4):
            raise ValueError(f"base_pose: expected a symbolic 4×4 pose, "
                             f"got shape {base_pose.shape}")
        C0 = base_pose
    else:
        C0 = check_pose(base_pose, "base_pose")
    if model.floating_base:
        if base_twist is None:
            raise ValueError(f"base_twist: a floating base needs its twist jet, "
                             f"shape ({twist_rows}, 6)")
        Vb = _motion_arg(base_twist, "base_twist", twist_rows, 6)
    else:
        if base_twist is not None and (_is_symbolic(base_twist) or np.any(
                check_motion_jet(base_twist, "base_twist", twist_rows, 6))):
            raise ValueError("base_twist: a fixed base does not move; pass None")
        Vb = np.zeros((twist_rows, 6))
    return C0, Vb, _motion_arg(q, "q", q_rows, n)


# ------------------------------------------------------------- the baseline --

class CasadiBaseline:
    """Symbolic AD baseline for one model; functions are built once per order.

    Its functions give the ``r``-th time derivative of the dynamics at
    ``t = 0`` only: evaluate them at ``t = 0`` (module docstring). It is the
    benchmark baseline and a test oracle; for optimisation use
    :mod:`liedyn.symbolic` (:func:`liedyn.symbolic.inverse_dynamics_function`,
    :func:`liedyn.symbolic.forward_dynamics_function`).

    Parameters
    ----------
    model : Model
    forward : {"mass_matrix", "articulated"}
        Construction of the forward map (module docstring): the whole mass
        matrix and a solve (default, the oracle), or the paper's benchmark
        construction, the articulated-body algorithm with ``mtimes`` and one
        6×6 ``solve`` for the base twist.
    solver : {"ldl", "qr"}
        With ``forward="mass_matrix"``, how the forward map solves with the
        mass matrix: ``"ldl"``, CasADi's
        sparse LDLᵀ (``casadi.ldl`` with AMD ordering, then ``ldl_solve``), or
        ``"qr"``, ``casadi.solve`` (symbolic QR without pivoting). On the
        aerial manipulator (mass-matrix condition ≈ 6e3) ``"qr"`` loses
        accuracy in the derivatives (1e-6 absolute at r = 4 against 1e-10
        with ``"ldl"``) and its graph is ~18× larger at N = 101, so ``"ldl"``
        is the default.
    applied : bool
        Include applied wrench jets ``(order+1, N, 6)`` (spatial, on each
        body) in the trajectory: a last parameter block ``W_app^(0..r)``
        (6N each). Off by default, as in the paper's benchmark.

    Attributes
    ----------
    build_seconds : dict
        ``{("inverse" | "forward", r): seconds}``: graph construction time of
        each built function (symbolic dynamics, ``r`` nested ``jtimes`` and
        the ``casadi.Function`` wrap), measured when it was built.
    """

    def __init__(self, model, solver="ldl", applied=False, forward="mass_matrix"):
        check_model(model)
        if solver not in SOLVERS:
            raise ValueError(f"solver: expected one of {SOLVERS}, got {solver!r}")
        if forward not in FORWARD:
            raise ValueError(f"forward: expected one of {FORWARD}, got {forward!r}")
        if not isinstance(applied, bool):
            raise TypeError(f"applied: expected bool, got {type(applied).__name__}")
        self.model = model
        self.solver = solver
        self.forward_construction = forward
        self.with_applied = applied
        self.build_seconds = {}
        self._functions = {}

    # -- layouts --------------------------------------------------------------

    def _layout(self, r, blocks):
        if self.with_applied:
            blocks.append(("applied", r + 1, 6 * self.model.n_bodies))
        return ParameterLayout(blocks)

    def inverse_layout(self, order):
        """The parameter blocks of :meth:`inverse` at order ``order``: a
        :class:`ParameterLayout`, the tuple of ``(name, rows, width)`` tuples
        (:class:`Block`) in their order in ``p``, with ``size`` the length of ``p``."""
        r, n = check_order(order), self.model.n_joints
        if self.model.floating_base:
            return self._layout(r, [("pose", r + 1, 12), ("twist", r + 2, 6), ("q", r + 3, n)])
        return self._layout(r, [("pose", 1, 12), ("q", r + 3, n)])

    def forward_layout(self, order):
        """The parameter blocks of :meth:`forward` at order ``order``, as
        :meth:`inverse_layout`."""
        r, n = check_order(order), self.model.n_joints
        if self.model.floating_base:
            return self._layout(r, [("pose", r + 1, 12), ("twist", r + 1, 6), ("q", r + 2, n),
                                    ("wrench", r + 1, 6), ("tau", r + 1, n)])
        return self._layout(r, [("pose", 1, 12), ("q", r + 2, n), ("tau", r + 1, n)])

    # -- symbolic maps ----------------------------------------------------------

    def _applied(self, t, blk):
        """Applied wrenches at time ``t``: a list of N SX 6-vectors, or ``None``."""
        if not self.with_applied:
            return None
        P = _taylor(blk["applied"], t)
        return [P[6 * j:6 * j + 6] for j in range(self.model.n_bodies)]

    def _inverse_map(self, t, blk):
        """``y_ID(t)`` on the polynomial trajectory."""
        model = self.model
        R0, x0 = _pose(blk["pose"], t)
        if model.floating_base:
            tw = blk["twist"]
            V0, A0 = _taylor(tw, t), _taylor(tw[1:], t)
        else:
            V0 = A0 = ca.DM.zeros(6)
        qc = blk["q"]
        W0, tau = _newton_euler(model, R0, x0, V0, A0, _taylor(qc, t), _taylor(qc[1:], t),
                                _taylor(qc[2:], t), self._applied(t, blk))
        return ca.vertcat(W0, tau)

    def _forward_map(self, t, blk):
        """``y_FD(t)``. With ``forward="mass_matrix"``: mass matrix
        ``∂y_ID/∂(V̇₀, q̈)``, bias ``y_ID`` at zero acceleration, then a
        symbolic solve (see ``solver``); with ``"articulated"``: the
        articulated-body algorithm (:func:`_articulated`)."""
        model = self.model
        n = model.n_joints
        R0, x0 = _pose(blk["pose"], t)
        qc = blk["q"]
        q, qd = _taylor(qc, t), _taylor(qc[1:], t)
        tau = _taylor(blk["tau"], t)
        if self.forward_construction == "articulated":
            V0 = _taylor(blk["twist"], t) if model.floating_base else ca.DM.zeros(6)
            W0 = _taylor(blk["wrench"], t) if model.floating_base else None
            A0, qdd = _articulated(model, R0, x0, V0, W0, q, qd, tau, self._applied(t, blk))
            return ca.vertcat(A0, qdd)
        qdd = ca.SX.sym("qdd", n)
        if model.floating_base:
            V0 = _taylor(blk["twist"], t)
            A0 = ca.SX.sym("A0", 6)
            acc = ca.vertcat(A0, qdd)
            W0, tau_id = _newton_euler(model, R0, x0, V0, A0, q, qd, qdd, self._applied(t, blk))
            y, u = ca.vertcat(W0, tau_id), ca.vertcat(_taylor(blk["wrench"], t), tau)
        else:
            acc = qdd
            _, y = _newton_euler(model, R0, x0, ca.DM.zeros(6), ca.DM.zeros(6), q, qd, qdd,
                                 self._applied(t, blk))
            u = tau
        M = ca.jacobian(y, acc)
        h = ca.substitute(y, acc, ca.DM.zeros(acc.shape[0]))
        if self.solver == "ldl":
            D, LT, perm = ca.ldl(M)
            sol = ca.ldl_solve(u - h, D, LT, perm)
        else:
            sol = ca.solve(M, u - h)
        return sol if model.floating_base else ca.vertcat(ca.DM.zeros(6), sol)

    def _build(self, kind, order):
        r = check_order(order)
        key = (kind, r)
        if key not in self._functions:
            start = time.perf_counter()
            layout = self.inverse_layout(r) if kind == "inverse" else self.forward_layout(r)
            t = ca.SX.sym("t")
            p = ca.SX.sym("p", layout.size)
            blk = _unpack(layout, p)
            dy = self._inverse_map(t, blk) if kind == "inverse" else self._forward_map(t, blk)
            for _ in range(r):
                dy = ca.jtimes(dy, t, ca.SX(1.0))                      # SPEC §9: d/dt by AD
            f = ca.Function(f"{kind}_d{r}", [t, p], [dy], ["t", "p"], ["dy"], {"jit": False})
            self.build_seconds[key] = time.perf_counter() - start
            self._functions[key] = f
        return self._functions[key]

    def inverse(self, order):
        """``casadi.Function`` ``(t, p) → d^r y_ID/dt^r``, ``r = order``;
        ``p`` laid out as :meth:`inverse_layout`. Built on first use, cached.
        Valid at ``t = 0`` only, where it is ``(W₀^(r), τ^(r))``."""
        return self._build("inverse", order)

    def forward(self, order):
        """``casadi.Function`` ``(t, p) → d^r y_FD/dt^r``; ``p`` as
        :meth:`forward_layout`. Built on first use, cached. Valid at ``t = 0``
        only, where it is ``(V₀^(r+1), q^(r+2))``."""
        return self._build("forward", order)

    # -- numeric front end --------------------------------------------------------

    def _applied_jet(self, applied, r):
        if not self.with_applied:
            if applied is not None:
                raise ValueError("applied: this baseline has no applied wrenches; "
                                 "build it with CasadiBaseline(model, applied=True)")
            return {}
        N = self.model.n_bodies
        if _is_symbolic(applied):
            return {"applied": _symbolic_jet(applied, "applied", r + 1, 6 * N, prefix=False,
                                             note="; columns 6j..6j+5 body j")}
        Wa = np.zeros((r + 1, N, 6)) if applied is None else \
            check_applied_slow(self.model, applied, r + 1)
        return {"applied": Wa.reshape(r + 1, 6 * N)}

    def pack_inverse_params(self, base_pose, base_twist, q, order, applied=None):
        """``p`` for :meth:`inverse` from the jets :func:`liedyn.inverse_dynamics`
        takes: ``base_twist`` ``(order+2, 6)`` (``None`` for a fixed base),
        ``q`` ``(order+3, n)``, ``applied`` ``(order+1, N, 6)`` (only with
        ``applied=True`` at construction; ``None`` there means zero).

        Returns ``p``, a NumPy vector of length ``inverse_layout(order).size``.
        Any argument may instead be a CasADi ``SX`` or ``MX`` (one kind per
        call); ``p`` is then a CasADi column of that type, for use inside a
        CasADi graph. Symbolic arguments are checked for shape only: a
        symbolic ``base_pose`` is used as given (last row ``(0, 0, 0, 1)``)
        and a symbolic ``applied`` is ``(order+1, 6N)``, columns ``6j..6j+5``
        body ``j``. For optimisation prefer :mod:`liedyn.symbolic`
        (:func:`liedyn.symbolic.inverse_dynamics_function`): its graph grows as
        ``r²``, not geometrically."""
        r = check_order(order)
        C0, Vb, qj = _state(self.model, base_pose, base_twist, q, r + 2, r + 3)
        layout, Wa = self.inverse_layout(r), self._applied_jet(applied, r)
        if self.model.floating_base:
            return _pack(layout, pose=base_pose_jet(C0, Vb, r + 1), twist=Vb, q=qj, **Wa)
        return _pack(layout, pose=base_pose_jet(C0, Vb, 1), q=qj, **Wa)

    def pack_forward_params(self, base_pose, base_twist, q, base_wrench, tau, order,
                            applied=None):
        """``p`` for :meth:`forward`.

        ``base_twist`` ``(order+1, 6)`` holds ``V₀^(0..order)`` and ``q``
        ``(order+2, n)`` holds ``q^(0..order+1)``: the motion the forces
        produce, up to the orders the r-th derivative of ``y_FD`` depends on.
        ``base_wrench`` ``(order+1, 6)`` (``None`` for a fixed base) and
        ``tau`` ``(order+1, n)`` are the force jets; ``applied`` and symbolic
        arguments (CasADi ``SX``/``MX``) as in :meth:`pack_inverse_params`.
        """
        r = check_order(order)
        model = self.model
        C0, Vb, qj = _state(model, base_pose, base_twist, q, r + 1, r + 2)
        tj = _force_arg(tau, "tau", r + 1, model.n_joints)
        layout, Wa = self.forward_layout(r), self._applied_jet(applied, r)
        if model.floating_base:
            if base_wrench is None:
                raise ValueError(f"base_wrench: a floating base needs its wrench jet, shape ({r + 1}, 6)")
            Wj = _force_arg(base_wrench, "base_wrench", r + 1, 6)
            return _pack(layout, pose=base_pose_jet(C0, Vb, r + 1), twist=Vb, q=qj,
                         wrench=Wj, tau=tj, **Wa)
        if base_wrench is not None:
            raise ValueError("base_wrench: a fixed base's wrench is the reaction; pass None")
        return _pack(layout, pose=base_pose_jet(C0, Vb, 1), q=qj, tau=tj, **Wa)

    def inverse_derivative(self, base_pose, base_twist, q, order, applied=None):
        """``d^r y_ID/dt^r (0)`` for the polynomial trajectory of the jets.

        Arguments as :func:`liedyn.inverse_dynamics`. Returns ``(W₀^(r), τ^(r))``
        of shapes ``(6,)`` and ``(n,)``, to compare with row ``r`` of its
        ``base_wrench`` and ``tau`` (CasADi columns when an argument is
        symbolic, see :meth:`pack_inverse_params`).
        """
        p = self.pack_inverse_params(base_pose, base_twist, q, order, applied)
        return _split(self.inverse(order)(0.0, p), p)

    def forward_derivative(self, base_pose, base_twist, q, base_wrench, tau, order,
                           applied=None):
        """``d^r y_FD/dt^r (0)``: ``(V₀^(r+1), q^(r+2))`` of shapes ``(6,)`` and
        ``(n,)`` (zero base part for a fixed base). Arguments as
        :meth:`pack_forward_params`."""
        p = self.pack_forward_params(base_pose, base_twist, q, base_wrench, tau, order, applied)
        return _split(self.forward(order)(0.0, p), p)


def _split(y, p):
    """``(y[:6], y[6:])``: NumPy vectors, or CasADi columns when ``p`` is symbolic."""
    if not _is_symbolic(p):
        y = np.asarray(y, float).ravel()
    return y[:6], y[6:]
