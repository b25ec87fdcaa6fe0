"""SE(3) and SO(3): the small, closed Lie-group API used everywhere (SPEC §1).

Ordering, declared once for the whole package
---------------------------------------------
* twist ``V = (ω, v)``: angular part first, shape ``(6,)``;
* wrench ``W = (m, f)``: moment first, power ``Wᵀ V``;
* spatial (right-invariant) representation: ``[V] = Ċ C⁻¹``.

Glossary
--------
======================  =====================================================
``hat(V)``              ``[V]``: 3×3 skew matrix of a 3-vector, 4×4 of a twist
``vee(X)``              inverse of ``hat``
``exp(V)``, ``log(C)``  closed form on SE(3) (Rodrigues + left Jacobian)
``exp_so3``             the rotation part of ``exp``
``log_so3``             the rotation part of ``log``
``Ad(C)``               ``[[R, 0], [p̂R, R]]``, maps twists between frames
``ad(V)``               ``[[ω̂, 0], [v̂, ω̂]]``, ``ad(V) X = [V, X]``
``coad(V)``             ``ad(V)ᵀ``, acts on wrenches
``dexp(V)``             ``Σ ad_V^k/(k+1)!``: ``d/dt exp([Ω]) = [dexp_Ω Ω̇] exp([Ω])``
``dexp_inv(V)``         its inverse ``Σ B_k/k! ad_V^k`` (Bernoulli numbers ``B_k``)
``inv(C)``              group inverse
``compose``             group product
``transform_inertia``   ``Ad_{C⁻¹}ᵀ Mᵇ Ad_{C⁻¹}``
``spatial_inertia``     body inertia from mass, CoM and rotational inertia
``rotation_from_quat``  ``R`` of a quaternion, component order ``"wxyz"`` or ``"xyzw"``
``quat_from_rotation``  its inverse, the unit quaternion with ``w ≥ 0``
``project(X)``          nearest rotation (pose) to a nearly orthonormal matrix
``check_pose(C)``       the pose check every function applies (``max |RᵀR − I| ≤ 1e-6``)
======================  =====================================================

The last four are batched over leading axes; the rest take one element.

Public functions validate their arguments and return new arrays. The
``_``-prefixed kernels below them do no checking and are compiled with numba;
the recursions call those.
"""

import numpy as np

from .._jit import njit as _njit
from .._checks import POSE_TOL as _POSE_TOL
from .._checks import as_array as _as_array
from .._checks import check_last_row as _check_last_row
from .._checks import check_pose as _check_pose
from .._checks import check_rotation as _check_rotation
from .._checks import check_twist as _check_twist

__all__ = [
    "hat", "vee", "exp", "log", "exp_so3", "log_so3", "Ad", "ad", "coad",
    "inv", "compose", "transform_inertia", "spatial_inertia", "dexp", "dexp_inv",
    "rotation_from_quat", "quat_from_rotation", "project", "check_pose",
]


def __dir__():
    return sorted(__all__)

# Below this angle sin θ/θ, (1−cos θ)/θ², (θ−sin θ)/θ³ and the log's
# (1 − A/2B)/θ² are evaluated by their Taylor series, truncated after the θ⁸
# term: the first omitted term is at most θ¹⁰/11! ≈ 2.5e-18 at θ = 0.1, below
# float64 eps relative to the leading term. Above it the closed forms lose at
# most ~6·eps/θ² ≈ 1.3e-13 relative (the cancellation in θ − sin θ), and that
# coefficient multiplies an O(θ²) factor. B is formed from sin(θ/2), free of
# cancellation, because log divides 1 − A/2B by θ² once more: 1 − cos θ would
# leave an eps/θ⁴ error there (≈ 2e-14·|p| in log's translation at θ = 0.1).
SMALL_ANGLE = 0.1


def _bernoulli(count):
    """``B_0 … B_{count-1}`` as exact fractions (``B_1 = −1/2``), from
    ``Σ_{j=0}^{m} binom(m+1, j) B_j = 0``."""
    from fractions import Fraction
    from math import comb
    B = [Fraction(1)]
    for m in range(1, count):
        B.append(-sum(comb(m + 1, j) * B[j] for j in range(m)) / (m + 1))
    return B


def _series_tables(terms):
    """Taylor coefficients in ``θ²`` of the ``dexp`` and ``dexp_inv`` scalars.

    With ``A = sin θ/θ``, ``B = (1 − cos θ)/θ²``, ``C = (θ − sin θ)/θ³``:
    ``B'/θ = Σ_{k≥1} (−1)^k 2k θ^(2k−2)/(2k+2)!``, ``C'/θ = Σ_{k≥1} (−1)^k 2k θ^(2k−2)/(2k+3)!``;
    ``β = (1 − (θ/2) cot(θ/2))/θ² = Σ_{k≥1} (−1)^(k−1) B_{2k}/(2k)! θ^(2k−2)`` (the ``ŵ²``
    coefficient of ``dexp_inv`` on SO(3), from ``z/(eᶻ − 1) = Σ B_j zʲ/j!`` at ``z = ŵ``)
    and ``γ = β'/θ = Σ_{k≥2} (−1)^(k−1) 2(k−1) B_{2k}/(2k)! θ^(2k−4)``. Row ``i`` of each
    table multiplies ``θ^(2i)``.
    """
    from fractions import Fraction
    from math import factorial
    Bn = _bernoulli(2 * terms + 4)
    dB = [Fraction((-1) ** k * 2 * k, factorial(2 * k + 2)) for k in range(1, terms + 1)]
    dC = [Fraction((-1) ** k * 2 * k, factorial(2 * k + 3)) for k in range(1, terms + 1)]
    beta = [(-1) ** (k - 1) * Bn[2 * k] / factorial(2 * k) for k in range(1, terms + 1)]
    gamma = [(-1) ** (k - 1) * 2 * (k - 1) * Bn[2 * k] / factorial(2 * k)
             for k in range(2, terms + 2)]
    return tuple(np.array([float(c) for c in t]) for t in (dB, dC, beta, gamma))


# dexp and dexp_inv need, besides A, B, C, the scalars B'/θ = (A − 2B)/θ²,
# C'/θ = (B − 3C)/θ², β and γ = β'/θ = (C/(2B) − 2β)/θ², whose closed forms
# cancel: γ loses about eps/θ⁴ (relative 2e-9 at θ = 0.1, 200 eps at θ = 1,
# 15 eps at θ = 2, measured against 60-digit values). Below DEXP_SERIES_ANGLE
# = 2 they are summed from their Taylor series instead, with
# DEXP_SERIES_TERMS terms: β and γ have radius of convergence 2π (the poles
# of cot(θ/2)), so term k shrinks as (θ/2π)^(2k) and at θ = 2 the first
# omitted one is below 0.1^24 · 2·24 ≈ 5e-23 of the leading term; the series
# of B'/θ and C'/θ shrink factorially. dexp_inv is singular at θ = 2π (dexp is
# not invertible there).
DEXP_SERIES_ANGLE = 2.0
DEXP_SERIES_TERMS = 24
_DB_SERIES, _DC_SERIES, _BETA_SERIES, _GAMMA_SERIES = _series_tables(DEXP_SERIES_TERMS)


# ---------------------------------------------------------------- kernels --

@_njit(inline=True)
def _abc(theta):
    """``A = sin θ/θ``, ``B = (1 − cos θ)/θ²``, ``C = (θ − sin θ)/θ³``."""
    t2 = theta * theta
    if theta < SMALL_ANGLE:
        A = 1.0 - t2 / 6.0 * (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0 * (1.0 - t2 / 72.0)))
        B = 0.5 * (1.0 - t2 / 12.0 * (1.0 - t2 / 30.0 * (1.0 - t2 / 56.0 * (1.0 - t2 / 90.0))))
        C = (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0 * (1.0 - t2 / 72.0 * (1.0 - t2 / 110.0)))) / 6.0
    else:
        s = np.sin(theta)
        A = s / theta
        h = np.sin(0.5 * theta) / (0.5 * theta)
        B = 0.5 * h * h                         # (1 − cos θ)/θ² without cancellation
        C = (theta - s) / (t2 * theta)
    return A, B, C


@_njit(inline=True)
def _pose_into(a, b, wx, wy, wz, t2, px, py, pz, out):
    """``out[:] = [[I + a ŵ + b ŵ², p], [0, 1]]`` with ``ŵ² = w wᵀ − t2 I``
    (``t2 = |w|²``): Rodrigues' form shared by the exponentials."""
    out[0, 0] = 1.0 + b * (wx * wx - t2)
    out[1, 1] = 1.0 + b * (wy * wy - t2)
    out[2, 2] = 1.0 + b * (wz * wz - t2)
    out[0, 1] = -a * wz + b * wx * wy
    out[1, 0] = a * wz + b * wx * wy
    out[0, 2] = a * wy + b * wx * wz
    out[2, 0] = -a * wy + b * wx * wz
    out[1, 2] = -a * wx + b * wy * wz
    out[2, 1] = a * wx + b * wy * wz
    out[0, 3] = px
    out[1, 3] = py
    out[2, 3] = pz
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@_njit(inline=True)
def _exp_se3_into(V, t, out):
    """``out[:] = exp([V] t)`` for a twist ``V`` scaled by the scalar ``t``:
    ``R = I + A ŵ + B ŵ²``, ``p = (I + B ŵ + C ŵ²) v``."""
    wx, wy, wz = V[0] * t, V[1] * t, V[2] * t
    vx, vy, vz = V[3] * t, V[4] * t, V[5] * t
    t2 = wx * wx + wy * wy + wz * wz
    A, B, C = _abc(np.sqrt(t2))
    cx = wy * vz - wz * vy
    cy = wz * vx - wx * vz
    cz = wx * vy - wy * vx
    wv = wx * vx + wy * vy + wz * vz
    _pose_into(A, B, wx, wy, wz, t2,
               vx + B * cx + C * (wx * wv - t2 * vx),
               vy + B * cy + C * (wy * wv - t2 * vy),
               vz + B * cz + C * (wz * wv - t2 * vz), out)


@_njit(inline=True)
def _log_so3_into(R, out):
    """``out[:] = log R`` (principal branch, ``|w| ≤ π``): ``θ = atan2(|s|, cos θ)``
    with ``s = vee(R − Rᵀ)/2 = sin θ · e``; within ``SMALL_ANGLE`` of ``π`` the
    axis comes from the symmetric part ``e eᵀ = (sym R − cos θ I)/(1 − cos θ)``,
    its best-conditioned column."""
    sx = 0.5 * (R[2, 1] - R[1, 2])
    sy = 0.5 * (R[0, 2] - R[2, 0])
    sz = 0.5 * (R[1, 0] - R[0, 1])
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    theta = np.arctan2(np.sqrt(sx * sx + sy * sy + sz * sz), c)
    if theta < np.pi - SMALL_ANGLE:
        A = _abc(theta)[0]
        out[0], out[1], out[2] = sx / A, sy / A, sz / A
        return
    i = 0
    for k in range(1, 3):
        if R[k, k] > R[i, i]:
            i = k
    Eii = (R[i, i] - c) / (1.0 - c)
    scale = theta / np.sqrt(Eii)
    for k in range(3):
        out[k] = ((0.5 * (R[k, i] + R[i, k]) - (c if k == i else 0.0)) / (1.0 - c)) * scale
    if out[0] * sx + out[1] * sy + out[2] * sz < 0.0:
        for k in range(3):
            out[k] = -out[k]


@_njit(inline=True)
def _log_into(C, out):
    """``out[:] = log C`` on SE(3): ``w = log R``, ``v = J⁻¹ p`` with
    ``J⁻¹ = I − ŵ/2 + D ŵ²``, ``D = (1 − A/2B)/θ²`` (series below ``SMALL_ANGLE``)."""
    _log_so3_into(C[:3, :3], out)
    wx, wy, wz = out[0], out[1], out[2]
    t2 = wx * wx + wy * wy + wz * wz
    theta = np.sqrt(t2)
    if theta < SMALL_ANGLE:
        D = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0 + t2 * t2 * t2 / 1209600.0
    else:
        A, B, _ = _abc(theta)
        D = (1.0 - A / (2.0 * B)) / t2
    px, py, pz = C[0, 3], C[1, 3], C[2, 3]
    cx = wy * pz - wz * py                       # ŵ p
    cy = wz * px - wx * pz
    cz = wx * py - wy * px
    wp = wx * px + wy * py + wz * pz             # ŵ² p = w (w·p) − θ² p
    out[3] = px - 0.5 * cx + D * (wx * wp - t2 * px)
    out[4] = py - 0.5 * cy + D * (wy * wp - t2 * py)
    out[5] = pz - 0.5 * cz + D * (wz * wp - t2 * pz)


@_njit(inline=True)
def _Ad_into(C, X, out):
    """``out[:] = Ad_C X`` for a 4×4 pose ``C`` and twist ``X``."""
    R = C[:3, :3]
    for i in range(3):
        out[i] = R[i, 0] * X[0] + R[i, 1] * X[1] + R[i, 2] * X[2]
    px, py, pz = C[0, 3], C[1, 3], C[2, 3]
    rx, ry, rz = out[0], out[1], out[2]
    for i in range(3):
        out[3 + i] = R[i, 0] * X[3] + R[i, 1] * X[4] + R[i, 2] * X[5]
    out[3] += py * rz - pz * ry
    out[4] += pz * rx - px * rz
    out[5] += px * ry - py * rx


@_njit(inline=True)
def _Ad_T_into(C, W, out):
    """``out[:] = Ad_Cᵀ W = (Rᵀ (m − p × f), Rᵀ f)`` for a 4×4 pose ``C`` and
    wrench ``W = (m, f)``: a spatial wrench seen in the frame ``C``
    (``out`` must not be ``W``)."""
    px, py, pz = C[0, 3], C[1, 3], C[2, 3]
    mx = W[0] - (py * W[5] - pz * W[4])
    my = W[1] - (pz * W[3] - px * W[5])
    mz = W[2] - (px * W[4] - py * W[3])
    for i in range(3):
        out[i] = C[0, i] * mx + C[1, i] * my + C[2, i] * mz
        out[3 + i] = C[0, i] * W[3] + C[1, i] * W[4] + C[2, i] * W[5]


@_njit(inline=True)
def _ad(V, X):
    """``ad_V X = [V, X] = (ω × ω_X, ω × v_X + v × ω_X)`` as six scalars."""
    return (V[1] * X[2] - V[2] * X[1],
            V[2] * X[0] - V[0] * X[2],
            V[0] * X[1] - V[1] * X[0],
            V[1] * X[5] - V[2] * X[4] + V[4] * X[2] - V[5] * X[1],
            V[2] * X[3] - V[0] * X[5] + V[5] * X[0] - V[3] * X[2],
            V[0] * X[4] - V[1] * X[3] + V[3] * X[1] - V[4] * X[0])


@_njit(inline=True)
def _ad_acc(c, V, X, out):
    """``out += c · ad_V X``."""
    d = _ad(V, X)
    for i in range(6):
        out[i] += c * d[i]


@_njit(inline=True)
def _coad_acc(c, V, W, out):
    """``out += c · ad_Vᵀ W = c · (−ω × m − v × f, −ω × f)``."""
    out[0] -= c * (V[1] * W[2] - V[2] * W[1] + V[4] * W[5] - V[5] * W[4])
    out[1] -= c * (V[2] * W[0] - V[0] * W[2] + V[5] * W[3] - V[3] * W[5])
    out[2] -= c * (V[0] * W[1] - V[1] * W[0] + V[3] * W[4] - V[4] * W[3])
    out[3] -= c * (V[1] * W[5] - V[2] * W[4])
    out[4] -= c * (V[2] * W[3] - V[0] * W[5])
    out[5] -= c * (V[0] * W[4] - V[1] * W[3])


@_njit(inline=True)
def _inv_into(C, out):
    """``out[:] = C⁻¹ = (Rᵀ, −Rᵀ p)``."""
    for i in range(3):
        for k in range(3):
            out[i, k] = C[k, i]
    for i in range(3):
        out[i, 3] = -(C[0, i] * C[0, 3] + C[1, i] * C[1, 3] + C[2, i] * C[2, 3])
        out[3, i] = 0.0
    out[3, 3] = 1.0


@_njit(inline=True)
def _poly(c, x):
    """``Σ_i c[i] xⁱ`` by Horner's rule."""
    acc = 0.0
    for i in range(c.shape[0] - 1, -1, -1):
        acc = acc * x + c[i]
    return acc


@_njit(inline=True)
def _dexp_scalars(theta):
    """``(B, C, B'/θ, C'/θ)`` for :func:`dexp` (series below DEXP_SERIES_ANGLE)."""
    A, B, C = _abc(theta)
    t2 = theta * theta
    if theta < DEXP_SERIES_ANGLE:
        return B, C, _poly(_DB_SERIES, t2), _poly(_DC_SERIES, t2)
    return B, C, (A - 2.0 * B) / t2, (B - 3.0 * C) / t2


@_njit(inline=True)
def _dexp_inv_scalars(theta):
    """``(β, γ)`` for :func:`dexp_inv`: ``β = (1 − A/2B)/θ²``, ``γ = β'/θ = (C/2B − 2β)/θ²``."""
    t2 = theta * theta
    if theta < DEXP_SERIES_ANGLE:
        return _poly(_BETA_SERIES, t2), _poly(_GAMMA_SERIES, t2)
    A, B, C = _abc(theta)
    beta = (1.0 - A / (2.0 * B)) / t2
    return beta, (C / (2.0 * B) - 2.0 * beta) / t2


@_njit(inline=True)
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@_njit(inline=True)
def _dexp_inv_into(Om, X, out):
    """``out[:] = dexp_inv(Ω) X`` without forming the matrix.

    With ``Ω = (w, v)``, ``X = (x, y)``: ``(Jinv x, Jinv y + L x)``,
    ``Jinv = I − ½ŵ + β ŵ²`` and ``L = −½v̂ + β(ŵv̂ + v̂ŵ) + γ (w·v) ŵ²``.
    """
    w0, w1, w2 = Om[0], Om[1], Om[2]
    v0, v1, v2 = Om[3], Om[4], Om[5]
    beta, gamma = _dexp_inv_scalars(np.sqrt(w0 * w0 + w1 * w1 + w2 * w2))
    wv = w0 * v0 + w1 * v1 + w2 * v2
    a0, a1, a2 = _cross(w0, w1, w2, X[0], X[1], X[2])            # w × x
    b0, b1, b2 = _cross(w0, w1, w2, a0, a1, a2)                  # w × (w × x)
    out[0] = X[0] - 0.5 * a0 + beta * b0
    out[1] = X[1] - 0.5 * a1 + beta * b1
    out[2] = X[2] - 0.5 * a2 + beta * b2
    c0, c1, c2 = _cross(w0, w1, w2, X[3], X[4], X[5])            # w × y
    d0, d1, d2 = _cross(w0, w1, w2, c0, c1, c2)                  # w × (w × y)
    e0, e1, e2 = _cross(v0, v1, v2, X[0], X[1], X[2])            # v × x
    f0, f1, f2 = _cross(w0, w1, w2, e0, e1, e2)                  # w × (v × x)
    g0, g1, g2 = _cross(v0, v1, v2, a0, a1, a2)                  # v × (w × x)
    out[3] = X[3] - 0.5 * (c0 + e0) + beta * (d0 + f0 + g0) + gamma * wv * b0
    out[4] = X[4] - 0.5 * (c1 + e1) + beta * (d1 + f1 + g1) + gamma * wv * b1
    out[5] = X[5] - 0.5 * (c2 + e2) + beta * (d2 + f2 + g2) + gamma * wv * b2


@_njit(inline=True)
def _shift_twist(V, o, out):
    """``out = Ad_{T(−o)} V = (ω, v + ω × o)``: a twist about the world origin
    taken about ``o``."""
    out[0], out[1], out[2] = V[0], V[1], V[2]
    out[3] = V[3] + V[1] * o[2] - V[2] * o[1]
    out[4] = V[4] + V[2] * o[0] - V[0] * o[2]
    out[5] = V[5] + V[0] * o[1] - V[1] * o[0]


@_njit(inline=True)
def _unshift_twist(V, o, out):
    """``out = Ad_{T(−o)}^{−1} V = (ω, v − ω × o)``: back about the world origin."""
    out[0], out[1], out[2] = V[0], V[1], V[2]
    out[3] = V[3] - (V[1] * o[2] - V[2] * o[1])
    out[4] = V[4] - (V[2] * o[0] - V[0] * o[2])
    out[5] = V[5] - (V[0] * o[1] - V[1] * o[0])


@_njit(inline=True)
def _shift_wrench(W, o, out):
    """``out = Ad_{T(−o)}^{−T} W = (m − o × f, f)``: a wrench about the world
    origin taken about ``o``."""
    out[0] = W[0] - (o[1] * W[5] - o[2] * W[4])
    out[1] = W[1] - (o[2] * W[3] - o[0] * W[5])
    out[2] = W[2] - (o[0] * W[4] - o[1] * W[3])
    out[3], out[4], out[5] = W[3], W[4], W[5]


@_njit(inline=True)
def _shift_wrench_acc(s, W, o, out):
    """``out += s · Ad_{T(−o)}^{−T} W = s · (m − o × f, f)``."""
    out[0] += s * (W[0] - (o[1] * W[5] - o[2] * W[4]))
    out[1] += s * (W[1] - (o[2] * W[3] - o[0] * W[5]))
    out[2] += s * (W[2] - (o[0] * W[4] - o[1] * W[3]))
    out[3] += s * W[3]
    out[4] += s * W[4]
    out[5] += s * W[5]


@_njit(inline=True)
def _unshift_wrench(W, o, out):
    """``out = Ad_{T(−o)}ᵀ W = (m + o × f, f)``: back about the world origin."""
    out[0] = W[0] + (o[1] * W[5] - o[2] * W[4])
    out[1] = W[1] + (o[2] * W[3] - o[0] * W[5])
    out[2] = W[2] + (o[0] * W[4] - o[1] * W[3])
    out[3], out[4], out[5] = W[3], W[4], W[5]


@_njit(inline=True)
def _move_inertia(M, x, y, z):
    """``M ← Xᵀ M X`` in place, ``X = [[I, 0], [−r̂, I]]``, ``r = (x, y, z)``:
    a symmetric spatial (or articulated) inertia about a point ``a`` taken
    about the point ``b = a − r`` (SPEC §1: twists about ``b`` map to twists
    about ``a`` by ``X``, and ``Vᵀ M V`` is kept). With ``M = [[P, Q], [Qᵀ,
    R]]`` and ``F = r̂ R``, ``E = r̂ Qᵀ``: ``Q ← Q + F``, ``P ← P + E + Eᵀ − F r̂``;
    ``R`` is unchanged. Reads and writes the upper triangle, then mirrors it."""
    F = ((y * M[5, 3] - z * M[4, 3], y * M[5, 4] - z * M[4, 4], y * M[5, 5] - z * M[4, 5]),
         (z * M[3, 3] - x * M[5, 3], z * M[3, 4] - x * M[5, 4], z * M[3, 5] - x * M[5, 5]),
         (x * M[4, 3] - y * M[3, 3], x * M[4, 4] - y * M[3, 4], x * M[4, 5] - y * M[3, 5]))
    E = ((y * M[0, 5] - z * M[0, 4], y * M[1, 5] - z * M[1, 4], y * M[2, 5] - z * M[2, 4]),
         (z * M[0, 3] - x * M[0, 5], z * M[1, 3] - x * M[1, 5], z * M[2, 3] - x * M[2, 5]),
         (x * M[0, 4] - y * M[0, 3], x * M[1, 4] - y * M[1, 3], x * M[2, 4] - y * M[2, 3]))
    for a in range(3):
        Fa = F[a]
        for b in range(a, 3):
            # (F r̂)_ab = F_a · (column b of r̂); r̂ = [[0, −z, y], [z, 0, −x], [−y, x, 0]]
            if b == 0:
                FD = Fa[1] * z - Fa[2] * y
            elif b == 1:
                FD = Fa[2] * x - Fa[0] * z
            else:
                FD = Fa[0] * y - Fa[1] * x
            M[a, b] += E[a][b] + E[b][a] - FD
            M[b, a] = M[a, b]
        for b in range(3):
            M[a, 3 + b] += Fa[b]
            M[3 + b, a] = M[a, 3 + b]


# ------------------------------------------------------------- public API --

def hat(x):
    """Skew matrix: ``(3,) → (3, 3)`` or twist ``(6,) → [V]`` of shape ``(4, 4)``."""
    x = _as_array(x, "x")
    if x.shape == (3,):
        return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])
    if x.shape == (6,):
        out = np.zeros((4, 4))
        out[:3, :3] = hat(x[:3])
        out[:3, 3] = x[3:]
        return out
    raise ValueError(f"x: expected shape (3,) or (6,), got {x.shape}")


def vee(X):
    """Inverse of :func:`hat`: ``(3, 3) → (3,)`` or ``(4, 4) → (6,)``."""
    X = _as_array(X, "X")
    if X.shape == (3, 3):
        return np.array([X[2, 1], X[0, 2], X[1, 0]])
    if X.shape == (4, 4):
        return np.concatenate([vee(X[:3, :3]), X[:3, 3]])
    raise ValueError(f"X: expected shape (3, 3) or (4, 4), got {X.shape}")


def _finite(out, names):
    """``out``, or a ``ValueError`` naming the arguments when finite inputs gave
    a result that overflows float64."""
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{names}: too large: the result overflows float64")
    return out


def exp(V):
    """``exp([V])`` on SE(3) in closed form, ``(6,) → (4, 4)``."""
    V = _check_twist(V, "V")
    out = np.empty((4, 4))
    _exp_se3_into(V, 1.0, out)
    return _finite(out, "V")


def exp_so3(w):
    """Rodrigues' formula, ``(3,) → (3, 3)``."""
    w = _as_array(w, "w", shape=(3,))
    return exp(np.concatenate([w, np.zeros(3)]))[:3, :3]


def log_so3(R):
    """Principal logarithm of a rotation, ``(3, 3) → (3,)`` with ``|w| ≤ π``.

    Uses ``θ = atan2(|s|, cos θ)`` with ``s = vee(R − Rᵀ)/2 = sin θ · e``; near
    ``θ = π`` the axis comes from the symmetric part, where ``s`` has lost it.
    """
    R = _check_rotation(R, "R")
    out = np.empty(3)
    _log_so3_into(R, out)
    return out


def log(C):
    """Principal logarithm on SE(3), ``(4, 4) → (6,)``; inverse of :func:`exp`."""
    C = _check_pose(C, "C")
    out = np.empty(6)
    _log_into(C, out)
    return _finite(out, "C")


def inv(C):
    """Group inverse ``C⁻¹ = (Rᵀ, −Rᵀ p)``."""
    C = _check_pose(C, "C")
    out = np.empty((4, 4))
    _inv_into(C, out)
    return out


def compose(A, B):
    """Group product ``A B``."""
    return _finite(_check_pose(A, "A") @ _check_pose(B, "B"), "A, B")


def Ad(C):
    """Adjoint ``Ad_C = [[R, 0], [p̂ R, R]]``, ``(4, 4) → (6, 6)``."""
    C = _check_pose(C, "C")
    R = C[:3, :3]
    out = np.zeros((6, 6))
    out[:3, :3] = R
    out[3:, 3:] = R
    out[3:, :3] = hat(C[:3, 3]) @ R
    return _finite(out, "C")


def ad(V):
    """Lie-bracket matrix ``ad_V = [[ω̂, 0], [v̂, ω̂]]``, ``(6,) → (6, 6)``."""
    V = _check_twist(V, "V")
    out = np.zeros((6, 6))
    out[:3, :3] = hat(V[:3])
    out[3:, 3:] = out[:3, :3]
    out[3:, :3] = hat(V[3:])
    return out


def coad(V):
    """Co-adjoint ``ad_Vᵀ``, the action of a twist on wrenches."""
    return ad(V).T


def _so3_pair(w, v):
    """``(ŵ, v̂, ŵv̂ + v̂ŵ, w·v, θ)``."""
    W, Vh = hat(w), hat(v)
    return W, Vh, W @ Vh + Vh @ W, float(w @ v), float(np.linalg.norm(w))


def dexp(V):
    """Derivative of the exponential, ``(6,) → (6, 6)``:
    ``d/dt exp([Ω]) = [dexp_Ω Ω̇] exp([Ω])``, ``dexp_Ω = Σ_k ad_Ω^k / (k+1)!``.

    In closed form, with ``Ω = (w, v)``, ``θ = |w|``::

        dexp_Ω = [[J, 0], [Q, J]],   J = I + B ŵ + C ŵ²,
        Q = B v̂ + C (ŵv̂ + v̂ŵ) + (w·v) (B'/θ ŵ + C'/θ ŵ²),

    ``B = (1 − cos θ)/θ²``, ``C = (θ − sin θ)/θ³``; ``J`` is the SO(3) left
    Jacobian and ``Q`` its derivative along ``v`` (``ad_Ω`` is block
    triangular). Small angles by series (see ``DEXP_SERIES_ANGLE``).
    """
    V = _check_twist(V, "V")
    W, Vh, S, wv, theta = _so3_pair(V[:3], V[3:])
    B, C, dB, dC = _dexp_scalars(theta)
    W2 = W @ W
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = np.eye(3) + B * W + C * W2
    out[3:, :3] = B * Vh + C * S + wv * (dB * W + dC * W2)
    return out


def dexp_inv(V):
    """Inverse of :func:`dexp`, ``(6,) → (6, 6)``: ``dexp_inv_Ω = Σ_k B_k/k! ad_Ω^k``
    (Bernoulli numbers, ``B_1 = −1/2``); ``Ω̇ = dexp_inv_Ω V`` solves
    ``[V] = (d/dt exp([Ω])) exp(−[Ω])``.

    In closed form, with ``Ω = (w, v)``, ``θ = |w| < 2π``::

        dexp_inv_Ω = [[Jinv, 0], [L, Jinv]],   Jinv = I − ½ŵ + β ŵ²,
        L = −½v̂ + β (ŵv̂ + v̂ŵ) + γ (w·v) ŵ²,

    ``β = (1 − (θ/2) cot(θ/2))/θ²`` and ``γ = β'(θ)/θ``. Small angles by
    series (see ``DEXP_SERIES_ANGLE``).
    """
    V = _check_twist(V, "V")
    W, Vh, S, wv, theta = _so3_pair(V[:3], V[3:])
    if theta >= 2.0 * np.pi:
        raise ValueError(f"V: dexp_inv needs a rotation angle |ω| < 2π, got {theta:.6g}")
    beta, gamma = _dexp_inv_scalars(theta)
    W2 = W @ W
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = np.eye(3) - 0.5 * W + beta * W2
    out[3:, :3] = -0.5 * Vh + beta * S + gamma * wv * W2
    return out


def transform_inertia(C, Mb):
    """Inertia of a body at pose ``C`` in the frame ``C`` is measured from:
    ``Ad_{C⁻¹}ᵀ Mᵇ Ad_{C⁻¹}``."""
    A = Ad(inv(C))
    Mb = _as_array(Mb, "Mb", shape=(6, 6))
    return _finite(A.T @ Mb @ A, "C, Mb")


def spatial_inertia(mass, com, inertia_at_com):
    """Body inertia ``Mᵇ`` (6×6, angular first) of a rigid body.

    ``Mᵇ = [[J + m ĉ ĉᵀ, m ĉ], [m ĉᵀ, m I₃]]`` with ``c`` the centre of mass and
    ``J`` the rotational inertia about it, both in the body frame. Physical
    validity is checked where the inertia enters a model
    (:meth:`liedyn.ModelBuilder.add_body`).
    """
    m = float(_as_array(mass, "mass", shape=()))
    c = hat(_as_array(com, "com", shape=(3,)))
    J = _as_array(inertia_at_com, "inertia_at_com", shape=(3, 3))
    out = np.empty((6, 6))
    with np.errstate(over="ignore", invalid="ignore"):      # refused just below
        out[:3, :3] = J + m * c @ c.T
        out[:3, 3:] = m * c
        out[3:, :3] = m * c.T
        out[3:, 3:] = m * np.eye(3)
    return _finite(out, "mass, com")


# ---------------------------------------------- rotations and quaternions --

# Positions of w, x, y, z in a quaternion of each component order.
_QUAT_ORDERS = {"wxyz": [0, 1, 2, 3], "xyzw": [3, 0, 1, 2]}


def _quat_order(quaternion_order):
    if not isinstance(quaternion_order, str):
        raise TypeError(f"quaternion_order: expected 'wxyz' or 'xyzw', got {type(quaternion_order).__name__}")
    if quaternion_order not in _QUAT_ORDERS:
        raise ValueError(f"quaternion_order: expected 'wxyz' or 'xyzw', got {quaternion_order!r}")
    return _QUAT_ORDERS[quaternion_order]


def _stack(x, name, tail):
    """``x`` as a float64 array of shape ``tail`` or ``(..., *tail)``."""
    a = _as_array(x, name)
    if a.shape[max(a.ndim - len(tail), 0):] != tail:
        dims = ", ".join(map(str, tail))
        raise ValueError(f"{name}: expected shape ({dims}) or a stack (..., {dims}), "
                         f"got {a.shape}")
    return a


def _at(name, index):
    """``name`` of one element of a stack: ``R[2, 0]`` (``R`` itself unstacked)."""
    return f"{name}[{', '.join(map(str, index))}]" if index else name


def _failing(ok):
    """Indices of the elements of a stack whose ``ok`` is False."""
    return map(tuple, np.argwhere(~np.asarray(ok)))


def _orthonormality(X):
    """``(max |RᵀR − I|, det R)`` of each 3×3 rotation block of a stack."""
    R = X[..., :3, :3]
    err = np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3)).max(axis=(-2, -1))
    return err, np.linalg.det(R)


def _last_row_defect(C):
    return np.abs(C[..., 3, :] - np.array([0.0, 0.0, 0.0, 1.0])).max(axis=-1)


def check_pose(C, name="C"):
    """``C`` as a float64 array if it is a pose ``(4, 4)``, or a stack of poses
    ``(..., 4, 4)``; otherwise a ``ValueError`` naming ``name`` (and the element).

    The check every liedyn function applies to the poses it is given (base
    poses, body origins, frame offsets, IK targets): a rotation block with
    ``det R > 0`` and ``max |RᵀR − I| ≤ 1e-6``, and last row ``(0, 0, 0, 1)``
    to ``1e-6``. The tolerance admits float32 poses (ROS messages,
    estimators); an accepted defect ``δ`` adds a relative error ``O(δ)`` to
    the results (SPEC §1). A refusal states the measured defect and the
    tolerance, and names the repair, :func:`project`.
    """
    C = _stack(C, name, (4, 4))
    err, det = _orthonormality(C)
    for i in _failing((err <= _POSE_TOL) & (det > 0.0) & (_last_row_defect(C) <= _POSE_TOL)):
        _check_pose(C[i], _at(name, i))
    return C


def _check_rotations(R, name):
    R = _stack(R, name, (3, 3))
    err, det = _orthonormality(R)
    for i in _failing((err <= _POSE_TOL) & (det > 0.0)):
        _check_rotation(R[i], _at(name, i))
    return R


def project(X):
    """Nearest rotation ``(..., 3, 3)`` or pose ``(..., 4, 4)`` to ``X``.

    For ``M = U Σ Vᵀ`` with ``det M > 0`` (the rotation block of a pose) the
    result is ``U Vᵀ``, the rotation nearest to ``M`` in the Frobenius norm
    (the orthogonal factor of its polar decomposition); a pose keeps its
    translation and gets the last row ``(0, 0, 0, 1)``. It repairs float32
    rounding and drift, is the identity on rotations up to float64 rounding,
    and moves a matrix with ``max |MᵀM − I| = δ`` by at most ``3δ``. Refused
    with a ``ValueError``: ``det M ≤ 0`` (a reflection or a singular matrix,
    no rotation is near it) and a last row off ``(0, 0, 0, 1)`` by more than
    ``1e-6`` (a transposed pose).
    """
    X = _as_array(X, "X")
    if X.ndim < 2 or X.shape[-2:] not in ((3, 3), (4, 4)):
        raise ValueError(f"X: expected shape (3, 3) or (4, 4), or a stack of them, "
                         f"got {X.shape}")
    out = X.copy()
    if X.shape[-1] == 4:
        row = _last_row_defect(X)
        for i in _failing(row <= _POSE_TOL):
            _check_last_row(X[i], _at("X", i), row[i])
        out[..., 3, :] = (0.0, 0.0, 0.0, 1.0)
    det = np.asarray(np.linalg.det(X[..., :3, :3]))
    for i in _failing(det > 0.0):
        raise ValueError(f"{_at('X', i)}: det = {det[i]:.3g} ≤ 0, a reflection or a singular "
                         f"matrix (left-handed axes?): no rotation is near it")
    U, _, Vt = np.linalg.svd(X[..., :3, :3])
    U[..., :, 2] *= np.sign(np.linalg.det(U @ Vt))[..., None]       # det +1 despite rounding
    out[..., :3, :3] = U @ Vt
    return out


def rotation_from_quat(q, *, quaternion_order):
    """Rotation matrix of a quaternion, ``(..., 4) → (..., 3, 3)``.

    ``quaternion_order`` names the component order, and is required because both are
    common: ``"wxyz"`` (scalar first: MuJoCo, Eigen's constructor) or
    ``"xyzw"`` (scalar last: ROS messages, scipy, Pinocchio's ``coeffs()``).
    Hamilton convention, ``R v`` is ``q v q*``; ``q`` and ``−q`` give the same
    ``R``. ``q`` is normalised first, so a float32 or slightly unnormalised
    quaternion gives a rotation exact to float64 rounding; a zero quaternion
    is refused.
    """
    q = _stack(q, "q", (4,))[..., _quat_order(quaternion_order)]
    scale = np.abs(q).max(axis=-1)
    for i in _failing(scale > 0.0):
        raise ValueError(f"{_at('q', i)}: the zero quaternion is not a rotation")
    q = q / scale[..., None]
    w, x, y, z = np.moveaxis(q / np.linalg.norm(q, axis=-1)[..., None], -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def quat_from_rotation(R, *, quaternion_order):
    """Unit quaternion of a rotation, ``(..., 3, 3) → (..., 4)``, in the
    component order ``quaternion_order`` (``"wxyz"`` or ``"xyzw"``, required; see
    :func:`rotation_from_quat`, which it inverts), with ``w ≥ 0``.

    Each ``R`` must pass the pose check of :func:`check_pose`
    (:func:`project` repairs one that does not). The quaternion is read from
    the row of ``K = 4 q qᵀ`` (in ``w, x, y, z``) with the largest diagonal
    entry, which is at least 1: accurate at every angle, ``π`` included.
    """
    idx = _quat_order(quaternion_order)
    R = _check_rotations(R, "R")
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = (
        [R[..., i, k] for k in range(3)] for i in range(3))
    K = np.moveaxis(np.array([
        [1 + r00 + r11 + r22, r21 - r12, r02 - r20, r10 - r01],
        [r21 - r12, 1 + r00 - r11 - r22, r01 + r10, r02 + r20],
        [r02 - r20, r01 + r10, 1 - r00 + r11 - r22, r12 + r21],
        [r10 - r01, r02 + r20, r12 + r21, 1 - r00 - r11 + r22]]), (0, 1), (-2, -1))
    pivot = np.argmax(np.diagonal(K, axis1=-2, axis2=-1), axis=-1)
    q = np.take_along_axis(K, pivot[..., None, None], axis=-2)[..., 0, :]
    q = q / np.linalg.norm(q, axis=-1)[..., None]
    q *= np.where(q[..., :1] < 0.0, -1.0, 1.0)
    out = np.empty_like(q)
    out[..., idx] = q
    return out
