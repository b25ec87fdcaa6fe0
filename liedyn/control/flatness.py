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

import threading
from typing import NamedTuple, Optional

import numpy as np

from .._checks import (_NO_APPLIED, NOT_FINITE, OK, about_base, as_array, check_order, plain,
                       status_message)
from .._jit import Kernel, njit
from ..algorithm.batch import MIN_SAMPLES_PER_THREAD, available_cores
from ..algorithm.inverse import inverse_dynamics_kernel
from ..algorithm.kinematics import kinematics, set_base
from ..multibody.model import check_model
from ..multibody.workspace import Workspace, workspace_for
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
#
# The Taylor arithmetic below runs compiled, one sample at a time, on rows of
# 3-vectors: a NumPy operation on arrays this small costs a microsecond of
# dispatch, and the map makes a few hundred of them per sample.

# Statuses of the map's kernel besides the algorithms' (liedyn._checks).
FREE_FALL, YAW_SINGULAR, NO_MASS, BAD_COM, BAD_YAW, BAD_JOINTS = 101, 102, 103, 104, 105, 106


@njit(inline=True)
def _cross_acc(s, x, y, out):
    """``out += s x × y`` for 3-vectors."""
    out[0] += s * (x[1] * y[2] - x[2] * y[1])
    out[1] += s * (x[2] * y[0] - x[0] * y[2])
    out[2] += s * (x[0] * y[1] - x[1] * y[0])


@njit(inline=True)
def _norm3(x):
    return np.sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2])


@njit
def _cross_jet(x, y, K, B, out):
    """``(x × y)^(k) = Σ_a binom(k, a) x^(a) × y^(k−a)``, ``k = 0..K``."""
    for k in range(K + 1):
        out[k] = 0.0
        for a in range(k + 1):
            _cross_acc(B[k, a], x[a], y[k - a], out[k])


@njit
def _transposed_jet(R, y, K, B, out):
    """``(Rᵀ y)^(k) = Σ_a binom(k, a) R^(a)ᵀ y^(k−a)``, ``k = 0..K``."""
    for k in range(K + 1):
        for i in range(3):
            s = 0.0
            for a in range(k + 1):
                Ra, yb = R[a], y[k - a]
                s += B[k, a] * (Ra[0, i] * yb[0] + Ra[1, i] * yb[1] + Ra[2, i] * yb[2])
            out[k, i] = s


@njit
def _unit_jet(v, K, B, u, nv):
    """``u = v/‖v‖`` and ``‖v‖`` jets from ``v^(0..K)`` (SPEC §17.2): ``s = v·v``,
    ``‖v‖^(k) = (s^(k) − Σ_{0<a<k} C(k,a) ‖v‖^(a) ‖v‖^(k−a)) / 2‖v‖``,
    ``u^(k) = (v^(k) − Σ_{0<a≤k} C(k,a) ‖v‖^(a) u^(k−a)) / ‖v‖``."""
    for k in range(K + 1):
        s = 0.0
        for a in range(k + 1):
            va, vb = v[a], v[k - a]
            s += B[k, a] * (va[0] * vb[0] + va[1] * vb[1] + va[2] * vb[2])
        if k == 0:
            nv[0] = np.sqrt(s)
        else:
            for a in range(1, k):
                s -= B[k, a] * nv[a] * nv[k - a]
            nv[k] = s / (2.0 * nv[0])
        for i in range(3):
            x = v[k, i]
            for a in range(1, k + 1):
                x -= B[k, a] * nv[a] * u[k - a, i]
            u[k, i] = x / nv[0]


@njit
def _heading_jet(psi, K, B, x):
    """``x_C = (cos ψ, sin ψ, 0)`` jet from ``ψ^(0..K)``: ``ċ = −s ψ̇``,
    ``ṡ = c ψ̇``, differentiated by Leibniz (SPEC §17.1)."""
    x[0, 0], x[0, 1], x[0, 2] = np.cos(psi[0]), np.sin(psi[0]), 0.0
    for k in range(K):
        c = s = 0.0
        for a in range(k + 1):
            c -= B[k, a] * x[a, 1] * psi[k + 1 - a]
            s += B[k, a] * x[a, 0] * psi[k + 1 - a]
        x[k + 1, 0], x[k + 1, 1], x[k + 1, 2] = c, s, 0.0


@njit
def com_in_base(model, ws, q, K, cB):
    """``c_B^(0..K+1)`` into ``cB``: the centre of mass of the tree with the base
    held at the identity, from kinematics of order ``K`` at the joint jet
    ``q^(0..K+1)`` (SPEC §17.3, §14: ``c_j^(k+1) = Σ_a binom(k, a) ω_j^(a) ×
    c_j^(k−a) + v_j^(k)``); ``ws`` of order ``≥ K − 1``, its ``c`` the scratch.
    Returns ``False`` (``cB`` unset) for a robot without mass."""
    mass, com = model.body_mass, model.body_com
    m = 0.0
    for j in range(mass.shape[0]):              # a floating base: every body moves
        m += mass[j]
    if not m > 0.0:
        return False
    set_base(model, ws, _IDENTITY, True, _NO_TWIST, K + 1)
    kinematics(model, ws, q, K)
    C, V, c, B = ws.C, ws.V, ws.c, ws.binom
    for k in range(K + 2):
        cB[k] = 0.0
    for j in range(mass.shape[0]):
        for i in range(3):
            c[0, j, i] = (C[j, i, 0] * com[j, 0] + C[j, i, 1] * com[j, 1]
                          + C[j, i, 2] * com[j, 2] + C[j, i, 3])
        for k in range(K + 1):
            for i in range(3):
                c[k + 1, j, i] = V[k, j, 3 + i]
            for a in range(k + 1):
                _cross_acc(B[k, a], V[a, j, :3], c[k - a, j], c[k + 1, j])
        for k in range(K + 2):
            for i in range(3):
                cB[k, i] += mass[j] / m * c[k, j, i]
    return True


_IDENTITY = np.eye(4)
_NO_TWIST = np.zeros((0, 6))
_NO_ROTORS = np.zeros((0, 4))
for _a in (_IDENTITY, _NO_TWIST, _NO_ROTORS):
    _a.setflags(write=False)


@njit(inline=True)
def _finite(x):
    """Whether the 1-D ``x`` is finite."""
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return False
    return True


@njit(inline=True)
def _finite_rows(x, rows):
    """Whether the first ``rows`` rows of the 2-D ``x`` are finite."""
    for k in range(rows):
        if not _finite(x[k]):
            return False
    return True


# ------------------------------------------------------------- the map --

@njit
def _rotation_jet(g, xG, psi, r, B, t, R, diag):
    """``R^(0..r+2)`` into ``R`` (SPEC §17.1–17.2); returns a status, the
    value behind a refusal in ``diag``. ``t`` (6, r+3, 3) is scratch."""
    K = r + 2
    a, zB, nv, xC, y, yB = t[0], t[1], t[2, :, 0], t[3], t[4], t[5]
    for k in range(K + 1):
        for i in range(3):
            a[k, i] = xG[k + 2, i]
    for i in range(3):
        a[0, i] -= g[i]                                               # ẍ_G − g⃗
    na = _norm3(a[0])
    diag[0] = na
    if not na > FREE_FALL_RTOL * max(_norm3(g), _norm3(xG[2]), 1e-300):
        return FREE_FALL
    _unit_jet(a, K, B, zB, nv)                                        # SPEC §17.2
    _heading_jet(psi, K, B, xC)
    _cross_jet(zB, xC, K, B, y)
    sine = _norm3(y[0])
    diag[0] = sine
    if not sine > YAW_SINGULAR_TOL:
        return YAW_SINGULAR
    _unit_jet(y, K, B, yB, nv)
    _cross_jet(yB, zB, K, B, a)                                      # x_B = y_B × z_B, into a
    for k in range(K + 1):
        for i in range(3):
            R[k, i, 0], R[k, i, 1], R[k, i, 2] = a[k, i], yB[k, i], zB[k, i]
    return OK


@njit
def _flat_sample(model, ws, xG, psi, q, r, base, A4p, W_app, t, C0, V, R, wB, cB, f, MB,
                 lateral, tau, W0, rotor, diag):
    """One sample of the map (SPEC §17.3) into the output rows; returns a status."""
    if not _finite_rows(xG, xG.shape[0]):
        return BAD_COM
    if not _finite(psi):
        return BAD_YAW
    if not _finite_rows(q, q.shape[0]):
        return BAD_JOINTS
    B = ws.binom
    status = _rotation_jet(model.gravity, xG, psi, r, B, t, R, diag)
    if status != OK:
        return status
    if not com_in_base(model, ws, q, r + 1, cB):                      # c_B(q), SPEC §17.3
        return NO_MASS
    p, w, v, m_p = t[0], t[1], t[2], t[3]
    for k in range(r + 3):                                            # p = x_G − R c_B
        for i in range(3):
            s = xG[k, i]
            for a in range(k + 1):
                Ra, cb = R[a], cB[k - a]
                s -= B[k, a] * (Ra[i, 0] * cb[0] + Ra[i, 1] * cb[1] + Ra[i, 2] * cb[2])
            p[k, i] = s
    for i in range(3):
        for j in range(3):
            C0[i, j] = R[0, i, j]
        C0[i, 3] = p[0, i]
        C0[3, i] = 0.0
        p[0, i] = 0.0                                                 # p − p₀ from here on
    C0[3, 3] = 1.0
    # SPEC §12, ω̂ = Ṙ Rᵀ: ω̂^(k) is the skew part of
    # Y R₀ᵀ, Y = R^(k+1) − Σ_{a<k} C(k,a) ω̂^(a) R^(k−a)
    Y, R0 = np.empty((3, 3)), R[0]
    for k in range(r + 2):
        for i in range(3):
            for j in range(3):
                Y[i, j] = R[k + 1, i, j]
        for a in range(k):
            for j in range(3):
                _cross_acc(-B[k, a], w[a], R[k - a, :, j], Y[:, j])
        for i in range(3):                                            # ½ ((Y R₀ᵀ)_{i2,i1}
            i1, i2 = (i + 1) % 3, (i + 2) % 3                         #    − (Y R₀ᵀ)_{i1,i2})
            w[k, i] = 0.5 * (Y[i2, 0] * R0[i1, 0] + Y[i2, 1] * R0[i1, 1]
                             + Y[i2, 2] * R0[i1, 2] - Y[i1, 0] * R0[i2, 0]
                             - Y[i1, 1] * R0[i2, 1] - Y[i1, 2] * R0[i2, 2])
    for k in range(r + 2):                                            # v = ṗ − ω × (p − p₀)
        for i in range(3):
            v[k, i] = p[k + 1, i]
        for a in range(k + 1):
            _cross_acc(-B[k, a], w[a], p[k - a], v[k])
        for i in range(3):
            V[k, i], V[k, 3 + i] = w[k, i], v[k, i]
    if not (_finite_rows(C0, 4) and _finite_rows(V, r + 2)):
        return NOT_FINITE
    status = inverse_dynamics_kernel(model, ws, C0, True, V, q, W_app, r)
    if status != OK:
        return status
    W, F = ws.base_wrench, ws.base_wrench[:, 3:]                      # about p₀
    for k in range(r + 1):                                            # moment about p(t)
        for i in range(3):
            m_p[k, i] = W[k, i]
        for a in range(k + 1):
            _cross_acc(-B[k, a], p[a], F[k - a], m_p[k])
    FB = t[4]
    _transposed_jet(R, F, r, B, FB)                                   # SPEC §17.3
    _transposed_jet(R, m_p, r, B, MB)
    _transposed_jet(R, w, r + 1, B, wB)
    for k in range(r + 1):
        f[k] = FB[k, 2]
        lateral[k, 0], lateral[k, 1] = FB[k, 0], FB[k, 1]
        for i in range(rotor.shape[1]):                               # A₄⁺ (M^B, f)
            rotor[k, i] = (A4p[i, 0] * MB[k, 0] + A4p[i, 1] * MB[k, 1] + A4p[i, 2] * MB[k, 2]
                           + A4p[i, 3] * FB[k, 2])
        for j in range(tau.shape[1]):
            tau[k, j] = ws.tau[k, j]
        for i in range(6):
            W0[k, i] = W[k, i]
    if not base:                                                      # about the world origin
        o = C0[:3, 3]
        for k in range(r + 2):
            _cross_acc(-1.0, w[k], o, V[k, 3:])
        for k in range(r + 1):
            _cross_acc(1.0, o, F[k], W0[k, :3])
    return OK


@njit
def _flat_block(model, ws, lo, hi, xG, psi, q, r, base, A4p, W_app, C0, V, R, wB, cB, f, MB,
                lateral, tau, W0, rotor, info):
    """Samples ``lo..hi−1`` of a batch, in the workspace ``ws`` of order ``r``;
    ``info[b]``: the sample's status and the value behind a refusal."""
    t = np.empty((6, r + 3, 3))
    for b in range(lo, hi):
        info[b, 0] = _flat_sample(model, ws, xG[b], psi[b], q[b], r, base, A4p, W_app, t, C0[b],
                                  V[b], R[b], wB[b], cB[b], f[b], MB[b], lateral[b], tau[b],
                                  W0[b], rotor[b], info[b, 1:])


_FLAT = Kernel(_flat_block)


def _where(times, sample):
    if sample is None:
        return ""
    if times is None:
        return f" at sample {sample}"
    return f" at t = {times[sample]:.9g} (sample {sample})"


def _raise_for(model, info, times, batched):
    """The error of the first sample whose status (``info[:, 0]``) is not ``OK``."""
    b = int(np.flatnonzero(info[:, 0])[0])
    s, value, where = int(info[b, 0]), info[b, 1], _where(times, b if batched else None)
    if s == FREE_FALL:
        raise ValueError(f"com: free fall{where}: ẍ_G = g⃗ (‖ẍ_G − g⃗‖ = {value:.3g}), "
                         f"where the thrust direction z_B = (ẍ_G − g⃗)/‖ẍ_G − g⃗‖ is undefined")
    if s == YAW_SINGULAR:
        raise ValueError(f"yaw: singular{where}: the thrust axis z_B is parallel to the heading "
                         f"x_C = (cos ψ, sin ψ, 0) (‖z_B × x_C‖ = {value:.3g}), where the "
                         f"Z-X-Y yaw does not determine the attitude")
    if s in (BAD_COM, BAD_YAW, BAD_JOINTS):
        name = {BAD_COM: "com", BAD_YAW: "yaw", BAD_JOINTS: "q"}[s]
        raise ValueError(f"{name}: contains NaN or infinite values{where}")
    if s == NO_MASS:
        raise ValueError("model: its bodies have no mass, so there is no centre of mass")
    raise ValueError(status_message(NOT_FINITE if s < 0 else s, model) + where)


def _run(model, r, S, tail):
    """:data:`_FLAT` over ``S`` samples with the arguments and outputs ``tail``:
    in one of the model's pooled workspaces, or, for many samples, in blocks,
    one thread and workspace per block (as :mod:`liedyn.algorithm.batch`)."""
    n = 1 if S < 2 * MIN_SAMPLES_PER_THREAD else min(available_cores(),
                                                      S // MIN_SAMPLES_PER_THREAD)
    if n == 1:
        workspace_for(model, r, None)._serve(_FLAT, model, 0, S, *tail)
        return
    bounds = [S * i // n for i in range(n + 1)]
    data = [Workspace._fresh(model, r)._data for _ in range(n)]
    call = _FLAT.prepare(model._data, data[0], 0, 0, *tail)
    workers = [threading.Thread(target=call, args=(model._data, d, lo, hi, *tail), daemon=True)
               for d, lo, hi in zip(data[1:], bounds[1:-1], bounds[2:])]
    for w in workers:
        w.start()
    call(model._data, data[0], bounds[0], bounds[1], *tail)
    for w in workers:
        w.join()


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
    """A flat-output jet for the kernel, shapes checked (the kernel checks
    that its values are finite): ``x`` itself when it is a plain array."""
    lead = 1 if batched else 0
    if plain(x, lead + 1 + len(tail)) and x.shape[lead + 1:] == tail and x.shape[lead] >= rows:
        return x
    a = as_array(x, name, allow_nonfinite=True)
    if a.ndim != lead + 1 + len(tail) or a.shape[lead + 1:] != tail:
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
    body-frame ones do: ``(RᵀF)^(k) = f^(k) e₃``. One sample costs a
    kinematic pass of order ``r + 1`` (for ``c_B``), one inverse dynamics of
    order ``r`` and ``O(r²)`` small products, all in one compiled kernel;
    batched samples run in blocks on the available cores, one thread each,
    as :func:`liedyn.inverse_dynamics_batch` does.
    """
    r, A4_pinv = _flat_args(model, order, allocation)
    base = about_base(reference)
    batched = np.ndim(com) == 3
    n = model.n_joints
    xG = _jets(com, "com", r + 5, (3,), batched, r)
    psi = _jets(yaw, "yaw", r + 3, (), batched, r)
    qj = _jets(q, "q", r + 3, (n,), batched, r)
    if batched:
        S = xG.shape[0]
        if psi.shape[0] != S or qj.shape[0] != S:
            raise ValueError(f"yaw, q: expected {S} samples as com, got {psi.shape[0]} and "
                             f"{qj.shape[0]}")
        if times is not None:
            times = as_array(times, "times", shape=(S,))
    else:
        S = 1
        xG, psi, qj = xG[None], psi[None], qj[None]
    m = 0 if A4_pinv is None else A4_pinv.shape[0]
    out = (np.empty((S, 4, 4)), np.empty((S, r + 2, 6)), np.empty((S, r + 3, 3, 3)),
           np.empty((S, r + 2, 3)), np.empty((S, r + 3, 3)), np.empty((S, r + 1)),
           np.empty((S, r + 1, 3)), np.empty((S, r + 1, 2)), np.empty((S, r + 1, n)),
           np.empty((S, r + 1, 6)), np.empty((S, r + 1, m)))
    info = np.empty((S, 2))
    _run(model, r, S, (xG, psi, qj, r, base, _NO_ROTORS if A4_pinv is None else A4_pinv,
                       _NO_APPLIED) + out + (info,))
    if (info[0, 0] if S == 1 else info[:, 0].any()):
        _raise_for(model, info, times, batched)
    C0, V, R, wB, cB, f, MB, lateral, tau, W0, rotor = out
    qc = qj[:, :r + 3].copy()
    if batched:
        return FlatMapResult(C0, V, R, wB, qc, cB, f, MB, lateral, tau, W0,
                             None if A4_pinv is None else rotor)
    return FlatMapResult(C0[0], V[0], R[0], wB[0], qc[0], cB[0], f[0], MB[0], lateral[0], tau[0],
                         W0[0], None if A4_pinv is None else rotor[0])


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
