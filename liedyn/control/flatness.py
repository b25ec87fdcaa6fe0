"""Differential flatness of a parallel-thrust base carrying a tree (SPEC §17).

A base whose thrusts all push along its own ``e₃`` (a quadrotor, a coplanar
hexarotor) with any tree of joints on it is flat with the outputs
``(x_G, ψ, q)``: the whole robot's centre of mass, the base's yaw and the
joint positions. From their jets the base pose and twist jets follow
exactly, and inverse dynamics of order ``r`` then gives the thrust, the
body moments and the joint forces with their first ``r`` derivatives.

Glossary
--------
==================  ===============  ==========================================
``x_G``             (r+5, 3)         whole-robot centre of mass jet, world frame
``ψ``               (r+3,)           yaw jet (Z-X-Y angles, SPEC §17.1)
``q``               (r+3, n)         joint jet
``a``               (r+3, 3)         ``ẍ_G − g⃗``, the specific thrust
``z_B, x_C, y_B``   (r+3, 3)         base axis, heading, ``z_B × x_C / ‖·‖``
``R``               (r+3, 3, 3)      base orientation ``[x_B y_B z_B]``
``c_B``             (r+3, 3)         centre of mass in the base frame, ``c_B(q)``
``p``               (r+3, 3)         base origin, ``x_G − R c_B``
``W₀``              (r+1, 6)         base wrench (moment, force), world axes
``f``, ``M^B``      (r+1,), (r+1, 3) thrust and moment about the base origin, base axes
==================  ===============  ==========================================
"""

from functools import lru_cache
from typing import NamedTuple, Optional

import numpy as np

from .._checks import about_base, as_array, check_order
from ..algorithm.centroidal import _com_jet
from ..algorithm.inverse import inverse_dynamics
from ..algorithm.kinematics import forward_kinematics
from ..multibody.model import check_model
from ..multibody.results import cross3
from ..multibody.workspace import Workspace, binomials
from ..trajectory import _angular_velocity_jet
from .allocation import parallel_allocation

__all__ = ["FlatMapResult", "flat_map", "flat_map_along", "FREE_FALL_RTOL", "YAW_SINGULAR_TOL"]

# ‖ẍ_G − g⃗‖ at or below this times max(‖g⃗‖, ‖ẍ_G‖) is free fall: z_B is
# undefined there and the jets of z_B grow as ‖ẍ_G − g⃗‖^(−k).
FREE_FALL_RTOL = 1e-8
# ‖z_B × x_C‖ (the sine of the angle between the thrust axis and the
# heading) at or below this is the yaw singularity of the Z-X-Y angles.
YAW_SINGULAR_TOL = 1e-6


class FlatMapResult(NamedTuple):
    """The inputs and motion that fly given flat outputs (SPEC §17).

    Batched calls give every field a leading sample axis.

    Attributes
    ----------
    base_pose : (4, 4)
        ``C₀ = [[R, p], [0, 1]]``.
    base_twist : (r+2, 6)
        Spatial base twist jet ``V₀^(0..r+1)`` about the call's ``reference``.
    rotation : (r+3, 3, 3)
        ``R^(0..r+2)``, columns ``(x_B, y_B, z_B)``.
    body_rates : (r+2, 3)
        Body angular velocity jet ``ω_B^(0..r+1)``, ``ω_B = Rᵀ ω``.
    q : (r+3, n)
        The joint jet used.
    com_in_base : (r+3, 3)
        ``c_B^(0..r+2)``, the centre of mass in the base frame.
    thrust : (r+1,)
        ``f^(0..r)``: the body-frame force of the base wrench is ``f e₃``.
    body_moment : (r+1, 3)
        ``(Rᵀ (m_O − p × F))^(k)``: the moment about the base origin in base
        axes, differentiated as such.
    lateral_force : (r+1, 2)
        The body-frame x, y force jets, a residual (zero to round-off).
    tau : (r+1, n)
        ``τ^(0..r)``.
    base_wrench : (r+1, 6)
        ``W₀^(0..r)``, world axes, about the call's ``reference``.
    rotor_thrust : (r+1, m) or None
        Each rotor's thrust jet, ``A₄⁺ (M^B, f)^(k)``, with an allocation.
    """

    base_pose: np.ndarray
    base_twist: np.ndarray
    rotation: np.ndarray
    body_rates: np.ndarray
    q: np.ndarray
    com_in_base: np.ndarray
    thrust: np.ndarray
    body_moment: np.ndarray
    lateral_force: np.ndarray
    tau: np.ndarray
    base_wrench: np.ndarray
    rotor_thrust: Optional[np.ndarray]


# ------------------------------------------------------------- jets --

@lru_cache(maxsize=None)
def _weights(K):
    """``L`` ``(K+1, (K+1)²)`` with ``L[k, a (K+1) + b] = binom(k, a)`` for
    ``a + b = k``: the Leibniz sum of a table of products ``x^(a) ∘ y^(b)``."""
    B = binomials(K)
    L = np.zeros((K + 1, K + 1, K + 1))
    for k in range(K + 1):
        for a in range(k + 1):
            L[k, a, k - a] = B[k, a]
    L = L.reshape(K + 1, -1)
    L.setflags(write=False)
    return L


def _leibniz(op, x, y):
    """``(x ∘ y)^(k) = Σ_a binom(k, a) x^(a) ∘ y^(k−a)``, ``k = 0..K`` (the
    shorter jet's rows), for a bilinear ``op`` broadcast over leading axes:
    every product of the table at once, then one weighted sum."""
    K = min(len(x), len(y)) - 1
    C = op(x[:K + 1, None], y[None, :K + 1])
    return (_weights(K) @ C.reshape((K + 1) ** 2, -1)).reshape((K + 1,) + C.shape[2:])


def _dot(x, y):
    return np.sum(x * y, axis=-1)


def _times(R, y):
    return (R @ y[..., None])[..., 0]


def _transposed_times(R, y):
    return (np.swapaxes(R, -1, -2) @ y[..., None])[..., 0]


def _unit_jet(v, B):
    """``(u, ‖v‖)`` jets of ``u = v/‖v‖`` from the jet ``v`` (K+1, 3):
    ``s = v·v``, ``‖v‖^(k) = (s^(k) − Σ_{0<a<k} C(k,a) ‖v‖^(a) ‖v‖^(k−a)) / 2‖v‖``,
    ``u^(k) = (v^(k) − Σ_{0<a≤k} C(k,a) ‖v‖^(a) u^(k−a)) / ‖v‖`` (SPEC §17.2)."""
    K = len(v) - 1
    s = _leibniz(_dot, v, v)
    nv = np.empty(K + 1)
    u = np.empty(v.shape)
    nv[0] = np.sqrt(s[0])
    u[0] = v[0] / nv[0]
    for k in range(1, K + 1):
        nv[k] = (s[k] - sum(B[k, a] * nv[a] * nv[k - a] for a in range(1, k))) / (2.0 * nv[0])
        u[k] = (v[k] - sum(B[k, a] * nv[a] * u[k - a] for a in range(1, k + 1))) / nv[0]
    return u, nv


def _heading_jet(psi, B):
    """``x_C = (cos ψ, sin ψ, 0)`` jet from ``ψ^(0..K)``: ``ċ = −s ψ̇``,
    ``ṡ = c ψ̇``, differentiated by Leibniz (SPEC §17.1)."""
    K = len(psi) - 1
    x = np.zeros((K + 1, 3))
    x[0, 0], x[0, 1] = np.cos(psi[0]), np.sin(psi[0])
    for k in range(K):
        x[k + 1, 0] = -sum(B[k, a] * x[a, 1] * psi[k + 1 - a] for a in range(k + 1))
        x[k + 1, 1] = sum(B[k, a] * x[a, 0] * psi[k + 1 - a] for a in range(k + 1))
    return x


def _where(times, sample):
    if sample is None:
        return ""
    if times is None:
        return f" at sample {sample}"
    return f" at t = {times[sample]:.9g} (sample {sample})"


# ------------------------------------------------------------- the map --

def _rotation_jet(model, xG, psi, r, B, where):
    """``(a, R)`` jets, ``k = 0..r+2`` (SPEC §17.1–17.2)."""
    g = model.gravity
    a = xG[2:r + 5].copy()
    a[0] -= g                                                         # ẍ_G − g⃗
    na = float(np.linalg.norm(a[0]))
    if not na > FREE_FALL_RTOL * max(float(np.linalg.norm(g)), float(np.linalg.norm(xG[2])),
                                     1e-300):
        raise ValueError(f"com: free fall{where}: ẍ_G = g⃗ (‖ẍ_G − g⃗‖ = {na:.3g}), where the "
                         f"thrust direction z_B = (ẍ_G − g⃗)/‖ẍ_G − g⃗‖ is undefined")
    zB, _ = _unit_jet(a, B)                                          # SPEC §17.2
    xC = _heading_jet(psi[:r + 3], B)
    y = _leibniz(cross3, zB, xC)
    sine = float(np.linalg.norm(y[0]))
    if not sine > YAW_SINGULAR_TOL:
        raise ValueError(f"yaw: singular{where}: the thrust axis z_B is parallel to the heading "
                         f"x_C = (cos ψ, sin ψ, 0) (‖z_B × x_C‖ = {sine:.3g}), where the "
                         f"Z-X-Y yaw does not determine the attitude")
    yB, _ = _unit_jet(y, B)
    xB = _leibniz(cross3, yB, zB)
    return a, np.stack([xB, yB, zB], axis=2)                         # R = [x_B y_B z_B]


def _flat_one(model, xG, psi, q, r, A4_pinv, base, ws, where):
    """One sample of the map (SPEC §17.3): arrays already checked."""
    B = binomials(r + 2)
    _, R = _rotation_jet(model, xG, psi, r, B, where)
    # c_B(q): kinematics of order r+1 with the base held at the identity
    n = model.n_joints
    fk = forward_kinematics(model, np.eye(4), np.zeros((r + 2, 6)), q[:r + 3], r + 1)
    _, cB = _com_jet(model, fk.body_pose, fk.twist, r + 2)            # SPEC §17.3
    p = xG[:r + 3] - _leibniz(_times, R, cB)                           # p = x_G − R c_B
    dp = p - np.vstack([p[:1], np.zeros((r + 2, 3))])                 # p − p₀
    C0 = np.eye(4)
    C0[:3, :3], C0[:3, 3] = R[0], p[0]
    Vb = np.empty((r + 2, 6))                                         # V₀^(0..r+1) about p₀
    Vb[:, :3] = _angular_velocity_jet(R)                              # SPEC §12: ω̂ = Ṙ Rᵀ
    Vb[:, 3:] = dp[1:] - _leibniz(cross3, Vb[:, :3], dp)              # v = ṗ − ω × (p − p₀)
    idr = inverse_dynamics(model, C0, Vb, q[:r + 3], r, workspace=ws, reference="base")
    W = idr.base_wrench
    F = W[:, 3:]
    m_p = W[:, :3] - _leibniz(cross3, dp, F)                          # moment about p(t)
    FB = _leibniz(_transposed_times, R, F)                            # SPEC §17.3
    MB = _leibniz(_transposed_times, R, m_p)
    wB = _leibniz(_transposed_times, R, Vb[:, :3])
    rotor = None
    if A4_pinv is not None:
        rotor = np.hstack([MB, FB[:, 2:]]) @ A4_pinv.T                # A₄⁺ (M^B, f)
    if base:
        V, W0 = Vb, W
    else:
        o = p[0]
        V = Vb.copy()
        V[:, 3:] -= np.cross(Vb[:, :3], o)                            # about the world origin
        W0 = W.copy()
        W0[:, :3] += np.cross(o, F)
    return FlatMapResult(C0, V, R, wB, np.array(q[:r + 3], float).reshape(r + 3, n), cB,
                         FB[:, 2].copy(), MB, FB[:, :2].copy(), idr.tau, W0, rotor)


def _flat_args(model, order, allocation):
    check_model(model)
    if not model.floating_base:
        raise ValueError("model: a fixed base; the flat map needs a floating, parallel-thrust "
                         "base (ModelBuilder(floating_base=True), load_urdf(..., "
                         "floating_base=True))")
    r = check_order(order)
    A4_pinv = None if allocation is None else parallel_allocation(allocation)[1]
    return r, A4_pinv


def _jets(x, name, rows, tail, batched, order):
    a = as_array(x, name)
    lead = 1 if batched else 0
    if a.ndim != lead + 1 + len(tail) or a.shape[lead + 1:] != tuple(tail):
        shape = ", ".join((["samples"] if batched else []) + ["rows"] + [str(s) for s in tail])
        raise ValueError(f"{name}: expected a jet of shape ({shape}) (row k = k-th time "
                         f"derivative), got {a.shape}")
    if a.shape[lead] < rows:
        raise ValueError(f"{name}: expected at least {rows} rows (its derivatives "
                         f"0..{rows - 1}) for order {order}, got {a.shape[lead]}")
    return a


def flat_map(model, com, yaw, q, order, *, allocation=None, reference="world", times=None):
    """The motion and inputs that fly given flat outputs, with their first
    ``order`` derivatives (SPEC §17).

    The base's thrusts all push along its ``e₃``; the flat outputs are the
    whole robot's centre of mass ``x_G``, the base's yaw ``ψ`` (Z-X-Y angles,
    heading ``x_C = (cos ψ, sin ψ, 0)``) and the joints ``q``. Then

        m ẍ_G = f R e₃ + m g⃗,   z_B = (ẍ_G − g⃗)/‖ẍ_G − g⃗‖,
        y_B = z_B × x_C/‖z_B × x_C‖,   x_B = y_B × z_B,   p = x_G − R c_B(q),

    all differentiated by Taylor arithmetic, and inverse dynamics of order
    ``order`` gives ``W₀`` and ``τ``.

    Parameters
    ----------
    model : Model
        A floating base (body 0) whose thrust is along its body ``z`` axis.
    com : (r+5, 3) or (S, r+5, 3)
        ``x_G^(0..r+4)`` (more rows: the first ``r+5`` are read); a leading
        axis of ``S`` samples evaluates each.
    yaw : (r+3,) or (S, r+3)
        ``ψ^(0..r+2)``.
    q : (r+3, n) or (S, r+3, n)
        ``q^(0..r+2)``.
    order : int ≥ 0
        ``r``.
    allocation : (6, m), optional, keyword
        The rotors' allocation (body frame, rows (moment, force), e.g. from
        :func:`rotor_allocation`): every column's force along ``e₃``, the
        rows ``(m_x, m_y, m_z, f_z)`` of rank 4; the rotor thrusts are then
        reported, split by minimum norm when ``m > 4``.
    reference : {"world", "base"}, keyword
        The point ``base_twist`` and ``base_wrench`` are about (SPEC §1).
    times : (S,), optional, keyword
        Sample times, for error messages only.

    Returns
    -------
    FlatMapResult

    Raises
    ------
    ValueError, TypeError
        A fixed-base model; jets too short for the order or of the wrong
        shape; an allocation that is not parallel-thrust or of rank below 4;
        free fall (``ẍ_G = g⃗``) or the yaw singularity (``z_B ∥ x_C``),
        naming the sample and its time.

    Notes
    -----
    The world force jets ``F^(k)``, ``k ≥ 1``, do not lie along ``z_B``; the
    body-frame ones do: ``(RᵀF)^(k) = f^(k) e₃``. One call costs a
    kinematic pass of order ``r + 1`` (for ``c_B``), one inverse dynamics of
    order ``r`` and ``O(r²)`` small products.
    """
    r, A4_pinv = _flat_args(model, order, allocation)
    base = about_base(reference)
    batched = np.ndim(com) == 3
    n = model.n_joints
    xG = _jets(com, "com", r + 5, (3,), batched, r)
    psi = _jets(yaw, "yaw", r + 3, (), batched, r)
    qj = _jets(q, "q", r + 3, (n,), batched, r)
    if not batched:
        return _flat_one(model, xG, psi, qj, r, A4_pinv, base, None, "")
    S = xG.shape[0]
    if psi.shape[0] != S or qj.shape[0] != S:
        raise ValueError(f"yaw, q: expected {S} samples as com, got {psi.shape[0]} and "
                         f"{qj.shape[0]}")
    if times is not None:
        times = as_array(times, "times", shape=(S,))
    ws = Workspace(model, r)
    out = [_flat_one(model, xG[i], psi[i], qj[i], r, A4_pinv, base, ws, _where(times, i))
           for i in range(S)]
    return FlatMapResult(*(None if f[0] is None else np.stack(f) for f in zip(*out)))


def flat_map_along(model, outputs, times, order, *, allocation=None, reference="world"):
    """:func:`flat_map` at each of ``times`` for a trajectory of flat outputs.

    Parameters
    ----------
    model : Model
    outputs : callable ``outputs(t) -> (com, yaw, q)``
        The jets at ``t`` (shapes of :func:`flat_map`, unbatched).
    times : (S,)
    order : int ≥ 0

    Returns
    -------
    FlatMapResult
        Every field with a leading axis of ``S`` samples.
    """
    if not callable(outputs):
        raise TypeError(f"outputs: expected a callable outputs(t) -> (com, yaw, q), got "
                        f"{type(outputs).__name__}")
    t = as_array(times, "times", ndim=1)
    jets = [outputs(float(ti)) for ti in t]
    return flat_map(model, np.stack([j[0] for j in jets]), np.stack([j[1] for j in jets]),
                    np.stack([j[2] for j in jets]), order, allocation=allocation,
                    reference=reference, times=t)
