"""Closed-form equations of motion and their time derivatives to any order
(SPEC §7, Proposition 1 and Lemma 1).

    M(Q) ν̇ + C(Q, ν) ν + B ν + g(Q) = τ̄ + Sᵀ G_c W_app,      τ̄ = (W₀, τ)

with ``ν = (V₀, q̇)`` (spatial base twist first) for a floating base and
``ν = q̇`` for a fixed one, and

    M = Sᵀ G_c M G_p S + diag(0, I_a)
    C = Sᵀ G_c M G_p Ṡ − Sᵀ G_c ad_Vᵀ M G_p S
    g = − Sᵀ G_c M G_I,          B = diag(0, b)

Glossary
--------
==========  ==================  ==============================================
``S``       (r+2, N, 6)         joint screw jets ``S_j^(k)`` (§3)
``V``       (r+2, N, 6)         body twist jets ``V_j^(k)``
``Mc``      (r+1, N, 6, 6)      composite inertia jets ``M^C_d = Σ_{k∈sub(d)} M_k``
                                (each body's own ``M_j^(k)`` before the subtree sums)
``Bc``      (r+1, N, 6, 6)      ``B^C_d = Σ_{k∈sub(d)} ad_{V_k}ᵀ M_k`` and its jets
``Wc``      (r+1, N, 6)         composite applied wrench jets ``Σ_{k∈sub(d)} W_app,k``
``MS``      (r+1, 6)            ``(M^C_a S_a)^(m)`` of the current body ``a``
``BS``      (r+1, 6)            ``(B^Cᵀ_a S_a)^(m)``
``Z``       (r+1, 6)            ``(M^C_a Ṡ_a − B^C_a S_a)^(m)``
``nv``                          ``6 + n`` (floating base) or ``n`` (fixed)
==========  ==================  ==============================================

Assembly without dense 6N × 6N products. ``G_p`` has ``I₆`` at block
``(i, k)`` when ``k`` is ``i`` or an ancestor of ``i``, so for block-diagonal
``X`` the block ``(a, b)`` of ``Sᵀ G_c X G_p Y`` is
``S_aᵀ (Σ_{k ∈ sub(a) ∩ sub(b)} X_k) Y_b``. Two subtrees intersect only when
one root is an ancestor-or-self of the other, and then in the subtree of the
deeper root ``d``. Hence, with composites accumulated leaves first through
``body_parent`` (no assumption that a subtree has contiguous indices),

    M_ab = S_aᵀ M^C_d S_b,   C_ab = S_aᵀ (M^C_d Ṡ_b − B^C_d S_b),
    g_a  = −S_aᵀ M^C_a G,    (Sᵀ G_c W_app)_a = S_aᵀ W^C_a

and every other block is zero. Each body ``a`` walks its ancestors once:
O(N · depth) blocks. The base column block has ``S_0 = I₆``, ``Ṡ_0 = 0``.

Time derivatives: ``B_j = ad_{V_j}ᵀ M_j`` and ``Ṁ_j = −(B_j + B_jᵀ)``
(SPEC §4), so

    B_j^(k)   = Σ_l binom(k, l) ad_{V_j^(l)}ᵀ M_j^(k−l),    M_j^(k+1) = −(B_j^(k) + B_j^(k)ᵀ)

and every block above is a product of jets, differentiated by Leibniz.
"""

from dataclasses import dataclass

import numpy as np

from ._checks import (BAD_APPLIED, NOT_FINITE, OK, _all_finite, about_base, applied_arg,
                      as_array, check_applied_slow, check_jet, check_motion,
                      check_motion_slow, check_type, is_applied, motion_args, raise_for)
from ._jit import Kernel, njit
from .inertia import _com_inertia_init, _spatial_inertia_into
from .kinematics import kinematics, set_base
from .model import check_model, check_model_order
from .results import unshift_wrench
from .se3 import _coad_acc, shift_wrench_acc
from .workspace import Workspace, binomials

__all__ = [
    "ClosedFormJets", "closed_form_jets", "closed_form_inverse_dynamics",
    "mass_matrix", "coriolis_matrix", "gravity_vector", "damping_matrix",
]


# ---------------------------------------------------------------- kernels --

@njit
def _inertia_jets(model, ws, r, Mc, Bc):
    """Each body's world inertia jet ``M_j^(0..r)`` and ``B_j^(0..r)``."""
    C, V, c, Ic, binom = ws.C, ws.V, ws.c, ws.Ic, ws.binom
    for j in range(C.shape[0]):
        _com_inertia_init(j, C, model.body_com, model.body_rot_inertia, c, Ic)
        _spatial_inertia_into(j, model.body_mass[j], c, Ic, Mc[0, j])
        for k in range(r + 1):
            if k >= 1:
                for a in range(6):
                    for b in range(6):
                        Mc[k, j, a, b] = -(Bc[k - 1, j, a, b] + Bc[k - 1, j, b, a])   # SPEC §4
            Bc[k, j] = 0.0
            for l in range(k + 1):
                for col in range(6):                     # B^(k) = Σ binom(k,l) ad_{V^(l)}ᵀ M^(k−l)
                    _coad_acc(binom[k, l], V[l, j], Mc[k - l, j, :, col], Bc[k, j, :, col])


@njit
def _composite(r, parent, Mc, Bc, Wc):
    """Subtree sums, leaves first (``parent[j] < j``)."""
    for j in range(parent.shape[0] - 1, 0, -1):
        p = parent[j]
        for k in range(r + 1):
            for a in range(6):
                Wc[k, p, a] += Wc[k, j, a]
                for b in range(6):
                    Mc[k, p, a, b] += Mc[k, j, a, b]
                    Bc[k, p, a, b] += Bc[k, j, a, b]


@njit(inline=True)
def _dot6(x, y):
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5]


@njit(inline=True)
def _body_products(a, r, binom, S, Mc, Bc, MS, BS, Z):
    """Jets of ``MS = M^C_a S_a``, ``BS = B^Cᵀ_a S_a``, ``Z = M^C_a Ṡ_a − B^C_a S_a``."""
    for m in range(r + 1):
        MS[m] = 0.0
        BS[m] = 0.0
        Z[m] = 0.0
        for l in range(m + 1):
            bn = binom[m, l]
            s0 = S[l, a]
            s1 = S[l + 1, a]
            M = Mc[m - l, a]
            B = Bc[m - l, a]
            for i in range(6):
                f = 0.0
                p = 0.0
                z = 0.0
                for k in range(6):
                    f += M[i, k] * s0[k]
                    p += B[k, i] * s0[k]
                    z += M[i, k] * s1[k] - B[i, k] * s0[k]
                MS[m, i] += bn * f
                BS[m, i] += bn * p
                Z[m, i] += bn * z


@njit
def _assemble(r, parent, off, want_c, binom, S, Mc, Bc, Wc, G, MS, BS, Z, Mq, Cq, gq, Qq):
    """Fill the jets of ``M``, ``C``, ``g`` and ``Sᵀ G_c W_app`` (no armature)."""
    for a in range(1, parent.shape[0]):
        ca = off + a - 1
        _body_products(a, r, binom, S, Mc, Bc, MS, BS, Z)
        for k in range(r + 1):
            gq[k, ca] = -_dot6(MS[k], G)                                    # SPEC §7: g_a = −S_aᵀ M^C_a G
            acc = 0.0
            for i in range(k + 1):
                acc += binom[k, i] * _dot6(S[i, a], Wc[k - i, a])          # SPEC §7: S_aᵀ W^C_a
            Qq[k, ca] = acc
        d = a
        while d >= 1:                                                      # d: a and its ancestors
            cd = off + d - 1
            for k in range(r + 1):
                mab = 0.0
                cad = 0.0
                cda = 0.0
                for i in range(k + 1):
                    bn = binom[k, i]
                    mab += bn * _dot6(S[i, d], MS[k - i])                     # SPEC §7: S_dᵀ M^C_a S_a
                    if want_c:
                        cad += bn * (_dot6(MS[k - i], S[i + 1, d]) - _dot6(BS[k - i], S[i, d]))
                        cda += bn * _dot6(S[i, d], Z[k - i])
                Mq[k, cd, ca] = mab
                Mq[k, ca, cd] = mab
                if want_c:
                    Cq[k, ca, cd] = cad                # S_aᵀ (M^C_a Ṡ_d − B^C_a S_d)
                    if d != a:
                        Cq[k, cd, ca] = cda            # S_dᵀ (M^C_a Ṡ_a − B^C_a S_a)
            d = parent[d]
        if off:                                        # base column block: S_0 = I₆, Ṡ_0 = 0
            for k in range(r + 1):
                for i in range(6):
                    Mq[k, i, ca] = MS[k, i]
                    Mq[k, ca, i] = MS[k, i]
                    if want_c:
                        Cq[k, ca, i] = -BS[k, i]
                        Cq[k, i, ca] = Z[k, i]
    if off:
        for k in range(r + 1):
            for i in range(6):
                acc = 0.0
                for l in range(6):
                    Mq[k, i, l] = Mc[k, 0, min(i, l), max(i, l)]       # exactly symmetric
                    if want_c:
                        Cq[k, i, l] = -Bc[k, 0, i, l]
                    acc += Mc[k, 0, i, l] * G[l]
                gq[k, i] = -acc
                Qq[k, i] = Wc[k, 0, i]


@njit
def _closed_form(model, ws, C0, about_base, Vb, q, W_app, r, want_c, Mq, Cq, gq, Qq):
    """Kinematics to order r+1, body and composite inertia jets, assembly
    (about the base origin ``o``); ``Mq`` and ``Cq`` must be zero. Returns a
    status."""
    status = check_motion(model, C0, Vb, q, r + 2, r + 3)
    N = model.body_parent.shape[0]
    if status != OK:
        return status
    if not is_applied(W_app, r + 1, N):
        return BAD_APPLIED
    set_base(model, ws, C0, about_base, Vb, r + 2)
    kinematics(model, ws, q, r + 1)
    Mc = np.empty((r + 1, N, 6, 6))
    Bc = np.empty((r + 1, N, 6, 6))
    Wc = np.zeros((r + 1, N, 6))
    if W_app.shape[0] > 0:
        for k in range(r + 1):
            for j in range(N):
                shift_wrench_acc(1.0, W_app[k, j], ws.d, Wc[k, j])             # about o
    G = np.zeros(6)
    G[3:] = model.gravity                                                      # SPEC §1: G = (0, g⃗)
    _inertia_jets(model, ws, r, Mc, Bc)
    _composite(r, model.body_parent, Mc, Bc, Wc)
    off = 6 if model.floating_base else 0
    _assemble(r, model.body_parent, off, want_c, ws.binom, ws.S, Mc, Bc, Wc, G,
              np.empty((r + 1, 6)), np.empty((r + 1, 6)), np.empty((r + 1, 6)), Mq, Cq, gq, Qq)
    for j in range(1, N):
        Mq[0, off + j - 1, off + j - 1] += model.joint_armature[j - 1]     # SPEC §5: armature on M's diagonal
    if not (_all_finite(Mq.reshape(-1)) and _all_finite(gq.reshape(-1))
            and _all_finite(Cq.reshape(-1)) and _all_finite(Qq.reshape(-1))):
        return NOT_FINITE
    return OK


_CLOSED_FORM = Kernel(_closed_form)


# ------------------------------------------------------------- public API --

@dataclass(frozen=True)
class ClosedFormJets:
    """Jets of the closed-form equations of motion, ``nv = 6 + n`` (floating
    base, base block first) or ``n`` (fixed base).

    Attributes
    ----------
    mass : (order+1, nv, nv)
        ``M^(k)``, full and symmetric; ``M^(0)`` includes the armature.
    coriolis : (order+1, nv, nv)
        ``C^(k)`` of the admissible ``C`` of Lemma 1 (``Ṁ − 2C`` skew).
    gravity : (order+1, nv)
        ``g^(k)``.
    damping : (nv, nv)
        ``B = diag(0₆, b)``, constant.
    applied_force : (order+1, nv)
        ``(Sᵀ G_c W_app)^(k)``, the generalised force of the applied wrenches.
    velocity : (order+2, nv)
        ``ν^(k) = (V₀^(k), q^(k+1))``.
    """

    mass: np.ndarray
    coriolis: np.ndarray
    gravity: np.ndarray
    damping: np.ndarray
    applied_force: np.ndarray
    velocity: np.ndarray

    @property
    def order(self):
        return self.mass.shape[0] - 1


def damping_matrix(model):
    """``B = diag(0₆, b)`` (floating base) or ``diag(b)`` (fixed), ``(nv, nv)``."""
    check_model(model)
    off = 6 if model.floating_base else 0
    B = np.zeros((model.nv, model.nv))
    idx = np.arange(off, model.nv)
    B[idx, idx] = model.joint_damping
    return B


def _unshift_base(A, o, axes):
    """Map the base block of ``A`` from coordinates about ``o`` to the world
    origin along ``axes`` (−1: rows of a vector or columns' entries, −2 and
    −1: both sides of a matrix): ``Xᵀ A X`` with ``X = Ad_{T(−o)}``
    (SPEC §1), which acts on a base row or column as on a wrench."""
    for ax in axes:
        B = np.moveaxis(A, ax, -1)
        B[..., :6] = unshift_wrench(B[..., :6], o)


def _run(model, base_pose, base_twist, q, applied, r, want_c, reference):
    """The closed-form jets of one state about the reference point, and the
    base twist and joint jets as the kernel took them; raises on bad input."""
    base = about_base(reference)
    C0, Vb, qj = motion_args(model, base_pose, base_twist, q, r + 2, r + 3)
    Wa = applied_arg(model, applied, r + 1)
    nv = model.nv
    Mq = np.zeros((r + 1, nv, nv))
    Cq = np.zeros((r + 1, nv, nv))
    gq = np.empty((r + 1, nv))
    Qq = np.empty((r + 1, nv))
    ws = Workspace._fresh(model, r)
    status = _CLOSED_FORM.call(model._data, ws._data, C0, base, Vb, qj, Wa, r, want_c, Mq, Cq, gq,
                               Qq)
    if status != OK:
        raise_for(status, model, lambda: (
            check_motion_slow(model, base_pose, base_twist, q, r + 2, r + 3),
            check_applied_slow(model, applied, r + 1)))
    if model.floating_base and not base:
        for X, axes in ((Mq, (-2, -1)), (Cq, (-2, -1)), (gq, (-1,)), (Qq, (-1,))):
            _unshift_base(X, ws.d, axes)
        # rows then columns round the two triangles of the base block
        # differently; keep M^(k) exactly symmetric, as the kernel makes it
        Mb = Mq[:, :6, :6]
        Mq[:, :6, :6] = np.triu(Mb) + np.swapaxes(np.triu(Mb, 1), -1, -2)
    return Mq, Cq, gq, Qq, Vb[:r + 2], qj[:r + 3]


def closed_form_jets(model, base_pose, base_twist, q, order, *, applied=None, reference="world"):
    """``M^(k)``, ``C^(k)``, ``g^(k)`` for ``k = 0..order`` along a motion.

    The ``r``-th derivative of the equations of motion (SPEC §7) is

        Σ_k binom(r, k) (M^(r−k) ν^(k+1) + C^(r−k) ν^(k)) + B ν^(r) + g^(r)
            = τ̄^(r) + (Sᵀ G_c W_app)^(r)

    (see :func:`closed_form_inverse_dynamics`).

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Base pose (``None``: ``model.home_pose``).
    base_twist : (order+2, 6) or None
        Spatial base twist jet ``V₀^(0..order+1)``; ``None`` for a fixed base.
    q : (order+3, n)
        Joint jet ``q^(0..order+2)``.
    order : int ≥ 0
    applied : (order+1, N, 6), optional, keyword
        Spatial applied wrench jets on each body.
    reference : {"world", "base"}, keyword
        The point the base twist and the generalised base force are taken
        about, with world axes: the world origin (default), or the base
        origin at this instant (SPEC §1, reference point).

    Returns
    -------
    ClosedFormJets

    Notes
    -----
    Cost O(N · depth · order²) for the matrices, plus O(N · order²) for the
    body jets; the output itself is O(order · nv²). The matrices are formed
    about the base origin and mapped to the world origin with one constant
    congruence, so their accuracy does not depend on where the robot is.
    """
    r = check_model_order(model, order)
    Mq, Cq, gq, Qq, Vb, qj = _run(model, base_pose, base_twist, q, applied, r, True, reference)
    nu = np.concatenate([Vb, qj[1:]], axis=1) if model.floating_base else qj[1:].copy()
    return ClosedFormJets(mass=Mq, coriolis=Cq, gravity=gq, damping=damping_matrix(model),
                          applied_force=Qq, velocity=nu)


def closed_form_inverse_dynamics(jets, acceleration=None):
    """Generalised forces ``τ̄^(0..order)`` from the closed-form equations.

    ``τ̄^(r) = Σ_k binom(r, k)(M^(r−k) ν^(k+1) + C^(r−k) ν^(k)) + B ν^(r) + g^(r)
    − (Sᵀ G_c W_app)^(r)``; for a floating base ``τ̄ = (W₀, τ)``.

    Parameters
    ----------
    jets : ClosedFormJets
    acceleration : (order+1, nv), optional
        ``ν^(1..order+1)`` to use instead of ``jets.velocity[1:]`` (for
        instance candidate accelerations); ``jets.velocity[0]`` is the
        velocity the matrices were evaluated at.

    Returns
    -------
    (order+1, nv)
    """
    check_type(jets, ClosedFormJets, "jets")
    r = jets.order
    nu = jets.velocity
    if acceleration is not None:
        nu = np.concatenate([nu[:1], check_jet(acceleration, "acceleration", nu[1:].shape)])
    binom = binomials(r)
    out = np.empty((r + 1, nu.shape[1]))
    for s in range(r + 1):
        acc = jets.gravity[s] - jets.applied_force[s] + jets.damping @ nu[s]   # SPEC §7
        for k in range(s + 1):
            acc = acc + binom[s, k] * (jets.mass[s - k] @ nu[k + 1] + jets.coriolis[s - k] @ nu[k])
        out[s] = acc
    return out


def _state_jets(model, base_twist, q):
    """The state ``(V₀, q, q̇)`` (configuration-only functions: at rest) as the
    jets the kernel takes, with zero rows for the unknown derivatives; ``q``
    is the checked configuration ``(n,)`` or state ``[q; q̇]`` ``(2, n)``."""
    qj = np.zeros((3, model.n_joints))
    if q.ndim == 1:
        qj[0] = q
    else:
        qj[:2] = q
    if not model.floating_base:
        if base_twist is not None and np.any(as_array(base_twist, "base_twist", shape=(1, 6))):
            raise ValueError("base_twist: a fixed base does not move; pass None (or zeros)")
        return None, qj
    Vb = np.zeros((2, 6))
    if base_twist is not None:
        Vb[:1] = as_array(base_twist, "base_twist", shape=(1, 6))
    return Vb, qj


def mass_matrix(model, base_pose, q, *, reference="world"):
    """Joint-space mass matrix ``M(Q) = Sᵀ G_c M G_p S + diag(0, I_a)`` (SPEC §7).

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
    q : (n,)
        The configuration.
    reference : {"world", "base"}, keyword
        As :func:`closed_form_jets`.

    Returns
    -------
    (nv, nv) symmetric positive definite; base block first for a floating base.
    """
    check_model(model)
    Vb, qj = _state_jets(model, None, as_array(q, "q", shape=(model.n_joints,)))
    return _run(model, base_pose, Vb, qj, None, 0, False, reference)[0][0]


def coriolis_matrix(model, base_pose, base_twist, q, *, reference="world"):
    """Lemma 1's admissible ``C(Q, ν) = Sᵀ G_c M G_p Ṡ − Sᵀ G_c ad_Vᵀ M G_p S``,
    for which ``Ṁ − 2C`` is skew-symmetric.

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
    base_twist : (1, 6) or None
        The state's spatial base twist ``V₀``; ``None`` for a fixed base.
    q : (2, n)
        The state ``[q; q̇]``.
    reference : {"world", "base"}, keyword
        As :func:`closed_form_jets`.

    Returns
    -------
    (nv, nv)
    """
    check_model(model)
    if model.floating_base and base_twist is None:
        raise ValueError("base_twist: a floating base needs its twist, shape (1, 6)")
    Vb, qj = _state_jets(model, base_twist, as_array(q, "q", shape=(2, model.n_joints)))
    return _run(model, base_pose, Vb, qj, None, 0, True, reference)[1][0]


def gravity_vector(model, base_pose, q, *, reference="world"):
    """Generalised gravity force ``g(Q) = −Sᵀ G_c M G_I`` (``= ∂U/∂Q``), ``(nv,)``;
    arguments as :func:`mass_matrix`."""
    check_model(model)
    Vb, qj = _state_jets(model, None, as_array(q, "q", shape=(model.n_joints,)))
    return _run(model, base_pose, Vb, qj, None, 0, False, reference)[2][0]
