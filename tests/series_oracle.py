"""Taylor-series Newton–Euler: jets of any order from an independent route.

Every time-dependent quantity is a truncated Taylor series about ``t = 0``,
an array ``a`` of shape ``(L, …)`` holding the normalised coefficients
``a[k] = x^(k)(0) / k!``. Products of series are Cauchy products, time
derivatives shift the coefficients, and ``sin``/``cos`` of a joint angle
follow from ``ṡ = c q̇``, ``ċ = −s q̇``. On these series this module writes
the order-0 equations of motion in their plainest world-frame form, from the
model's primary body-frame data (``body_origin``, ``joint_axis``,
``joint_point``, mass, CoM, rotational inertia) and nothing else of liedyn:

* base pose from ``Ċ₀ = [V₀] C₀`` (a fixed base is constant);
* body poses ``R_j = R_p R_A Rot(e, q)``, ``x_j = R_p (x_A + R_A (x − Rot x)) + x_p``
  (revolute about axis ``e`` through point ``x``, Rodrigues' formula) or
  ``x_j = R_p (x_A + R_A e q) + x_p`` (prismatic);
* body twist ``ω̂ = Ṙ Rᵀ``, ``v = ẋ − ω × x``; CoM ``c = R c_b + x``;
  rotational inertia ``I_c = R J Rᵀ``;
* momentum ``p = m ċ``, ``h = I_c ω + c × p`` (about the world origin) and
  Newton–Euler ``W_j = Π̇_j − (c × m g⃗, m g⃗) − W_app,j``, summed over
  subtrees; ``τ_j = S_jᵀ W_j + I_a q̈ + b q̇`` with the joint screw
  ``S_j = (e_w, x_w × e_w)`` (revolute) or ``(0, e_w)`` (prismatic).

No jet recursion of SPEC §3–§7 appears: the derivatives of every order are
those of the Taylor arithmetic. Forward dynamics is solved order by order:
the order-``r`` equations are linear in ``ν^(r+1)`` with the mass matrix as
coefficient, the mass matrix being the response of the order-0 equations to
unit accelerations.

The arithmetic is numpy on whatever dtype the inputs have: float64,
complex128 (complex-step derivatives, see :func:`forward_jacobian`) or
object arrays of ``mpmath.mpf`` (extended precision).
"""

from math import factorial

import mpmath
import numpy as np

from liedyn.multibody.model import JOINT_REVOLUTE

# ------------------------------------------------------------ series algebra --


def mul(a, b, op=np.multiply):
    """Cauchy product ``c[k] = Σ_{i ≤ k} op(a[i], b[k − i])`` (length of the shorter)."""
    L = min(len(a), len(b))
    return np.stack([sum(op(a[i], b[k - i]) for i in range(k + 1)) for k in range(L)])


def deriv(a):
    """Series of the time derivative (one coefficient shorter)."""
    k = np.arange(1, len(a)).reshape((-1,) + (1,) * (a.ndim - 1))
    return a[1:] * k


def _cross(a, b):
    return np.cross(a, b)


def _matvec(A, x):
    return A @ x


def _transpose(a):
    return np.swapaxes(a, -1, -2)


def _hat(w):
    """``ŵ`` of a series of 3-vectors, shape ``(L, 3, 3)``."""
    z = np.zeros_like(w[:, 0])
    return np.stack([np.stack([z, -w[:, 2], w[:, 1]], -1),
                     np.stack([w[:, 2], z, -w[:, 0]], -1),
                     np.stack([-w[:, 1], w[:, 0], z], -1)], -2)


def _sin_cos(q):
    """Series of ``sin q`` and ``cos q`` for a scalar series ``q``."""
    if q.dtype == object:
        s0, c0 = mpmath.sin(q[0]), mpmath.cos(q[0])
    else:
        s0, c0 = np.sin(q[0]), np.cos(q[0])
    dq = deriv(q)
    s, c = [s0], [c0]
    for k in range(len(q) - 1):
        s.append(sum(c[i] * dq[k - i] for i in range(k + 1)) / (k + 1))
        c.append(-sum(s[i] * dq[k - i] for i in range(k + 1)) / (k + 1))
    return np.array(s, dtype=q.dtype), np.array(c, dtype=q.dtype)


def to_series(jet):
    """Normalised coefficients ``x^(k)/k!`` of a jet ``(rows, …)``."""
    jet = np.asarray(jet)
    return np.stack([jet[k] / factorial(k) for k in range(len(jet))])


def to_jet(series):
    """Derivatives ``x^(k)`` from normalised coefficients."""
    return np.stack([series[k] * factorial(k) for k in range(len(series))])


def _const(x, like, L):
    """A constant as a series of length ``L`` in the dtype of ``like``."""
    x = np.asarray(x, dtype=like.dtype if like.dtype != object else float)
    if like.dtype == object:
        x = np.vectorize(mpmath.mpf, otypes=[object])(x) if x.size else x.astype(object)
    out = np.zeros((L,) + x.shape, dtype=like.dtype)
    if like.dtype == object:
        out[...] = mpmath.mpf(0)
    out[0] = x
    return out


# --------------------------------------------------------- Newton–Euler --


def _base_pose_series(C0, V, L):
    """``C₀`` series from ``Ċ = [V] C``: ``(k+1) C[k+1] = Σ_i [V_i] C[k−i]``."""
    C = [C0]
    for k in range(L - 1):
        acc = sum(_hat4(V[i]) @ C[k - i] for i in range(min(k + 1, len(V))))
        C.append(acc / (k + 1))
    return np.stack(C)


def _hat4(V):
    w, v = V[:3], V[3:]
    z = w[0] * 0
    return np.array([[z, -w[2], w[1], v[0]], [w[2], z, -w[0], v[1]],
                     [-w[1], w[0], z, v[2]], [z, z, z, z]], dtype=V.dtype)


def _plus(a, const):
    """Series ``a`` plus a constant (which adds to the coefficient of t⁰ only)."""
    out = a.copy()
    out[0] = out[0] + const
    return out


def newton_euler(model, base_pose, V0, q, applied=None):
    """Series of the order-0 inverse dynamics along a motion.

    Parameters
    ----------
    model : liedyn.Model
    base_pose : (4, 4)
    V0 : (L−1, 6) series of the spatial base twist (ignored for a fixed base)
    q : (L, n) series of the joint positions
    applied : (L−2, N, 6) series of spatial applied wrenches, or None

    Returns
    -------
    dict with series ``W0`` (L−2, 6), ``tau`` (L−2, n), ``momentum``
    (L−1, 6) (total, about the world origin), ``twist`` (L−1, N, 6) and
    ``screw`` (L, N, 6).
    """
    N = model.n_bodies
    L = len(q)
    dt = q.dtype
    cst = lambda x: _const(x, q, 1)[0]                                        # noqa: E731
    g = cst(model.gravity)
    if model.floating_base:
        C = _base_pose_series(cst(base_pose), V0, L)                           # Ċ₀ = [V₀] C₀
    else:
        C = _const(base_pose, q, L)
    R, x = [None] * N, [None] * N
    R[0], x[0] = C[:, :3, :3], C[:, :3, 3]
    twist, screw, own = [None] * N, [None] * N, [None] * N
    momentum = 0
    for j in range(N):
        if j:
            p = int(model.body_parent[j])
            A = cst(model.body_origin[j])
            RA, xA = A[:3, :3], A[:3, 3]
            e = cst(model.joint_axis[j - 1])
            if model.joint_type[j - 1] == JOINT_REVOLUTE:
                pt = cst(model.joint_point[j - 1])
                s, c = _sin_cos(q[:, j - 1])
                E = _hat(e[None])[0]
                EE = E @ E
                Rot = _plus(s[:, None, None] * E - c[:, None, None] * EE,
                            np.eye(3, dtype=dt) + EE)                         # Rodrigues
                Rl = RA @ Rot
                xl = _plus((RA @ _plus(-(Rot @ pt), pt)[..., None])[..., 0], xA)
            else:
                Rl = _const(RA, q, L)
                xl = _plus(q[:, j - 1:j] * (RA @ e), xA)
            R[j] = mul(R[p], Rl, np.matmul)                                    # R_j = R_p R_A Rot
            x[j] = mul(R[p], xl, _matvec) + x[p]
            ew = R[j] @ e                                                      # axis in the world
            if model.joint_type[j - 1] == JOINT_REVOLUTE:
                xw = R[j] @ pt + x[j]                                          # a point on it
                screw[j] = np.concatenate([ew, mul(xw, ew, _cross)], axis=1)
            else:
                screw[j] = np.concatenate([ew * 0, ew], axis=1)
        else:
            screw[0] = _const(np.zeros(6), q, L)
        w = _vee(mul(deriv(R[j]), _transpose(R[j]), np.matmul))                 # ω̂ = Ṙ Rᵀ
        v = deriv(x[j]) - mul(w, x[j], _cross)                                 # v = ẋ − ω × x
        twist[j] = np.concatenate([w, v], axis=1)
        m = cst(model.body_mass[j])
        c = R[j] @ cst(model.body_com[j]) + x[j]                               # c = R c_b + x
        Ic = mul(R[j] @ cst(model.body_rot_inertia[j]), _transpose(R[j]), np.matmul)
        lin = m * deriv(c)                                                     # p = m ċ
        ang = mul(Ic, w, _matvec) + mul(c, lin, _cross)                       # h = I_c ω + c × p
        Pi = np.concatenate([ang, lin], axis=1)
        momentum = momentum + Pi
        W = deriv(Pi)                                                          # Π̇
        W[:, :3] = W[:, :3] - np.cross(c[:L - 2], m * g)                       # − c × m g⃗
        W[0, 3:] = W[0, 3:] - m * g                                            # − m g⃗
        if applied is not None:
            W = W - applied[:, j]
        own[j] = W
    sub = list(own)
    tau = [None] * (N - 1)
    qd, qdd = deriv(q), deriv(deriv(q))
    for j in range(N - 1, 0, -1):
        p = int(model.body_parent[j])
        sub[p] = sub[p] + sub[j]
        tau[j - 1] = (mul(screw[j][:, None, :], sub[j][:, :, None], np.matmul)[:, 0, 0]
                      + model.joint_armature[j - 1] * qdd[:, j - 1]
                      + model.joint_damping[j - 1] * qd[:L - 2, j - 1])   # S_jᵀ W_j + I_a q̈ + b q̇
    tau = np.stack(tau, axis=1) if tau else np.zeros((L - 2, 0), dtype=dt)
    return dict(W0=sub[0], tau=tau, momentum=momentum, twist=np.stack(twist, 1),
                screw=np.stack(screw, 1))


def _vee(X):
    return np.stack([X[:, 2, 1], X[:, 0, 2], X[:, 1, 0]], axis=1)


# --------------------------------------------------- liedyn-shaped front ends --


def _motion_series(model, base_twist, q, dtype):
    qs = to_series(np.asarray(q, dtype=dtype))
    if model.floating_base:
        Vs = to_series(np.asarray(base_twist, dtype=dtype))
    else:
        Vs = np.zeros((len(qs) - 1, 6), dtype=dtype)
    return Vs, qs


def _as(x, dtype):
    """``x`` as an array of ``dtype`` (``object``: mpmath numbers, exact from
    float64 or mpmath inputs)."""
    if dtype == object:
        a = np.asarray(x, dtype=object)
        return np.vectorize(mpmath.mpf, otypes=[object])(a) if a.size else a
    return np.asarray(x, dtype=dtype)


def inverse_jets(model, base_pose, base_twist, q, order, applied=None, dtype=float):
    """Jets as :func:`liedyn.inverse_dynamics` returns them, by Taylor arithmetic.

    ``base_twist`` ``(order+2, 6)`` (None for a fixed base), ``q``
    ``(order+3, n)``, ``applied`` ``(order+1, N, 6)``. Returns a dict of jets:
    ``base_wrench`` (order+1, 6), ``tau`` (order+1, n), ``momentum``
    (order+2, 6) (total), ``twist`` (order+2, N, 6), ``screw``
    (order+3, N, 6). ``dtype``: ``float``, ``complex`` or ``object``
    (``mpmath`` numbers at the current ``mpmath.mp`` precision).
    """
    r = order
    C0 = model.home_pose if base_pose is None else base_pose
    Vb = None if base_twist is None else _as(base_twist, dtype)[:r + 2]
    qj = _as(q, dtype)[:r + 3]
    Vs, qs = _motion_series(model, Vb, qj, dtype)
    app = None if applied is None else to_series(_as(applied, dtype)[:r + 1])
    out = newton_euler(model, _as(C0, dtype), Vs, qs, app)
    return dict(base_wrench=to_jet(out["W0"]), tau=to_jet(out["tau"]),
                momentum=to_jet(out["momentum"]), twist=to_jet(out["twist"]),
                screw=to_jet(out["screw"]))


def _tbar(model, res):
    if model.floating_base:
        return np.concatenate([res["base_wrench"], res["tau"]], axis=1)
    return res["tau"]


def _motion(model, nu, q0):
    """Base twist jet and q jet from the generalised velocity jet ``ν^(0..)``."""
    if model.floating_base:
        return nu[:, :6], np.concatenate([q0[None], nu[:, 6:]])
    return None, np.concatenate([q0[None], nu])


def mass_matrix(model, base_pose, base_twist, q, dtype=float):
    """``M`` as the response of the order-0 equations to unit ``ν̇`` at the
    state (``base_twist`` (1, 6), ``q`` (2, n))."""
    nv = model.nv
    nu = np.zeros((2, nv), dtype=np.result_type(dtype, float) if dtype != object else object)
    if dtype == object:
        nu[...] = mpmath.mpf(0)
    q = _as(q, dtype)
    if model.floating_base:
        nu[0, :6] = _as(base_twist, dtype)[0]
        nu[0, 6:] = q[1]
    else:
        nu[0] = q[1]

    def tb(acc):
        nu[1] = acc
        Vb, qj = _motion(model, nu, q[0])
        return _tbar(model, inverse_jets(model, base_pose, Vb, qj, 0, dtype=dtype))[0]

    zero = _as(np.zeros(nv), dtype)
    b = tb(zero)
    cols = []
    for i in range(nv):
        e = _as(np.eye(nv)[i], dtype)
        cols.append(tb(e) - b)
    return np.stack(cols, axis=1)


def _solve(M, b):
    if M.dtype == object:
        x = mpmath.lu_solve(mpmath.matrix(M.tolist()), mpmath.matrix(b.tolist()))
        return np.array([x[i] for i in range(len(b))], dtype=object)
    return np.linalg.solve(M, b)


def forward_jets(model, base_pose, base_twist, q, order, tau, base_wrench=None, applied=None,
                 dtype=float):
    """Jets as :func:`liedyn.forward_dynamics` returns them, solved order by
    order on the Taylor-series equations.

    ``base_twist`` ``(1, 6)`` (None for a fixed base), ``q`` ``(2, n)``,
    ``tau`` ``(order+1, n)``, ``base_wrench`` ``(order+1, 6)`` (floating
    base), ``applied`` ``(order+1, N, 6)``. Returns ``(base_twist (order+2, 6)
    or None, q (order+3, n))``.
    """
    nv = model.nv
    f = _as(tau, dtype) if not model.floating_base else \
        np.concatenate([_as(base_wrench, dtype), _as(tau, dtype)], axis=1)
    app = None if applied is None else _as(applied, dtype)
    q0 = _as(q, dtype)
    M = mass_matrix(model, base_pose, base_twist, q0, dtype)
    nu = np.zeros((order + 2, nv), dtype=M.dtype)
    if dtype == object:
        nu[...] = mpmath.mpf(0)
    nu[0] = np.concatenate([_as(base_twist, dtype)[0], q0[1]]) if model.floating_base else q0[1]
    for r in range(order + 1):
        for _ in range(2):                  # a second pass corrects any round-off of the first
            Vb, qj = _motion(model, nu[:r + 2], q0[0])
            res = inverse_jets(model, base_pose, Vb, qj, r,
                               None if app is None else app[:r + 1], dtype=dtype)
            nu[r + 1] = nu[r + 1] + _solve(M, f[r] - _tbar(model, res)[r])
    return _motion(model, nu, q0[0])
