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
                                (``gravity_vector``: ``Σ_{k∈sub(d)} M_k G`` in ``Wc[0]``)
``MS``      (r+1, 6)            ``(M^C_a S_a)^(m)`` of the current body ``a``
``BS``      (r+1, 6)            ``(B^Cᵀ_a S_a)^(m)``
``Z``       (r+1, 6)            ``(M^C_a Ṡ_a − B^C_a S_a)^(m)``
``G``       (6,)                ``G = (0, g⃗)`` (SPEC §1)
``nv``                          ``6 + n`` (floating base) or ``n`` (fixed)
==========  ==================  ==============================================

``S`` and ``V`` are the workspace's; ``Mc`` … ``G`` are the closed form's
scratch, a handle the workspace makes on its first closed-form call
(:meth:`liedyn.Workspace._closed_form_data`). Each function returns arrays
of its own, allocated per call; nothing returned aliases the workspace.

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

from .._checks import (BAD_APPLIED, NOT_FINITE, OK, _all_finite, about_base, applied_arg,
                       check_applied_slow, check_configuration, check_configuration_slow,
                       check_jet, check_motion, check_motion_slow, check_type, configuration_args,
                       is_applied, motion_args, raise_for)
from .._jit import Kernel, njit
from ..spatial.inertia import (_com_init, _com_inertia_init, _gravity_wrench_acc,
                               _spatial_inertia_into)
from .kinematics import kinematics, set_base
from ..multibody.model import Model, check_model, check_model_order
from ..spatial.se3 import _ad, _coad_acc, _shift_wrench, _unshift_wrench
from ..multibody.workspace import binomials, pooled, workspace_for

__all__ = [
    "ClosedFormJets", "closed_form_jets", "closed_form_inverse_dynamics",
    "mass_matrix", "coriolis_matrix", "gravity_vector", "damping_matrix",
]


# ---------------------------------------------------------------- kernels --
#
# Each kernel takes the model's, the workspace's and the closed form's scratch
# handles (``cf``: ``Mc``, ``Bc``, ``Wc``, ``MS``, ``BS``, ``Z``, ``G``) and
# computes what its output needs: ``mass_matrix`` and ``gravity_vector`` the
# poses, ``S^(0)`` and ``M^C``; ``coriolis_matrix`` also ``V^(0)``, ``Ṡ`` and
# ``B^C``; ``closed_form_jets`` every jet to order r. A helper given ``None``
# for an output or a jet skips its work (numba drops the branch).

@njit
def _inertia_jets(model, ws, r, Mc, Bc):
    """Each body's world inertia jet ``M_j^(0..r)`` and, unless ``Bc`` is
    ``None`` (then ``r = 0``), ``B_j^(0..r)``."""
    C, V, c, Ic, binom = ws.C, ws.V, ws.c, ws.Ic, ws.binom
    for j in range(C.shape[0]):
        _com_inertia_init(j, C, model.body_com, model.body_rot_inertia, c, Ic)
        _spatial_inertia_into(j, model.body_mass[j], c, Ic, Mc[0, j])
        if Bc is not None:
            for k in range(r + 1):
                if k >= 1:
                    for a in range(6):
                        for b in range(6):
                            Mc[k, j, a, b] = -(Bc[k - 1, j, a, b] + Bc[k - 1, j, b, a])  # SPEC §4
                Bc[k, j] = 0.0
                for l in range(k + 1):
                    for col in range(6):                 # B^(k) = Σ binom(k,l) ad_{V^(l)}ᵀ M^(k−l)
                        _coad_acc(binom[k, l], V[l, j], Mc[k - l, j, :, col], Bc[k, j, :, col])


@njit(inline=True)
def _subtree_sums(parent, X):
    """``X[k, p(j)] += X[k, j]``, leaves first (``parent[j] < j``): each body's
    entry becomes the sum over its subtree (no assumption that a subtree has
    contiguous indices); ``X`` is ``(K, N, m)``."""
    for j in range(parent.shape[0] - 1, 0, -1):
        p = parent[j]
        for k in range(X.shape[0]):
            for a in range(X.shape[2]):
                X[k, p, a] += X[k, j, a]


@njit
def _composites(parent, Mc, Bc):
    """``M^C`` and, unless ``Bc`` is ``None``, ``B^C``, from the bodies' own jets (SPEC §7)."""
    K, N = Mc.shape[0], Mc.shape[1]
    _subtree_sums(parent, Mc.reshape((K, N, 36)))
    if Bc is not None:
        _subtree_sums(parent, Bc.reshape((K, N, 36)))


@njit(inline=True)
def _dot6(x, y):
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5]


@njit(inline=True)
def _mass_products(a, r, binom, S, Mc, MS):
    """Jets of ``MS = M^C_a S_a``."""
    for m in range(r + 1):
        MS[m] = 0.0
        for l in range(m + 1):
            bn = binom[m, l]
            s0 = S[l, a]
            M = Mc[m - l, a]
            for i in range(6):
                f = 0.0
                for k in range(6):
                    f += M[i, k] * s0[k]
                MS[m, i] += bn * f


@njit(inline=True)
def _coriolis_products(a, r, binom, S, Mc, Bc, BS, Z):
    """Jets of ``BS = B^Cᵀ_a S_a`` and ``Z = M^C_a Ṡ_a − B^C_a S_a``."""
    for m in range(r + 1):
        BS[m] = 0.0
        Z[m] = 0.0
        for l in range(m + 1):
            bn = binom[m, l]
            s0 = S[l, a]
            s1 = S[l + 1, a]
            M = Mc[m - l, a]
            B = Bc[m - l, a]
            for i in range(6):
                p = 0.0
                z = 0.0
                for k in range(6):
                    p += B[k, i] * s0[k]
                    z += M[i, k] * s1[k] - B[i, k] * s0[k]
                BS[m, i] += bn * p
                Z[m, i] += bn * z


@njit
def _assemble(r, parent, off, binom, S, Mc, Bc, G, MS, BS, Z, Mq, Cq, gq):
    """Fill the jets of ``M``, ``C``, ``g`` about the base origin ``o``, each
    unless its output is ``None`` (no armature); ``Mq`` and ``Cq`` must be
    zero, ``Bc`` may be ``None`` without ``Cq``."""
    for a in range(1, parent.shape[0]):
        ca = off + a - 1
        _mass_products(a, r, binom, S, Mc, MS)
        if Cq is not None:
            _coriolis_products(a, r, binom, S, Mc, Bc, BS, Z)
        if gq is not None:
            for k in range(r + 1):
                gq[k, ca] = -_dot6(MS[k], G)                                # SPEC §7: g_a = −S_aᵀ M^C_a G
        if Mq is None and Cq is None:
            continue
        d = a
        while d >= 1:                                                      # d: a and its ancestors
            cd = off + d - 1
            for k in range(r + 1):
                mab = 0.0
                cad = 0.0
                cda = 0.0
                for i in range(k + 1):
                    bn = binom[k, i]
                    if Mq is not None:
                        mab += bn * _dot6(S[i, d], MS[k - i])                 # SPEC §7: S_dᵀ M^C_a S_a
                    if Cq is not None:
                        cad += bn * (_dot6(MS[k - i], S[i + 1, d]) - _dot6(BS[k - i], S[i, d]))
                        cda += bn * _dot6(S[i, d], Z[k - i])
                if Mq is not None:
                    Mq[k, cd, ca] = mab
                    Mq[k, ca, cd] = mab
                if Cq is not None:
                    Cq[k, ca, cd] = cad                # S_aᵀ (M^C_a Ṡ_d − B^C_a S_d)
                    if d != a:
                        Cq[k, cd, ca] = cda            # S_dᵀ (M^C_a Ṡ_a − B^C_a S_a)
            d = parent[d]
        if off:                                        # base column block: S_0 = I₆, Ṡ_0 = 0
            for k in range(r + 1):
                for i in range(6):
                    if Mq is not None:
                        Mq[k, i, ca] = MS[k, i]
                        Mq[k, ca, i] = MS[k, i]
                    if Cq is not None:
                        Cq[k, ca, i] = -BS[k, i]
                        Cq[k, i, ca] = Z[k, i]
    if off:
        for k in range(r + 1):
            for i in range(6):
                acc = 0.0
                for l in range(6):
                    if Mq is not None:
                        Mq[k, i, l] = Mc[k, 0, min(i, l), max(i, l)]   # exactly symmetric
                    if Cq is not None:
                        Cq[k, i, l] = -Bc[k, 0, i, l]
                    acc += Mc[k, 0, i, l] * G[l]
                if gq is not None:
                    gq[k, i] = -acc


@njit(inline=True)
def _applied_force(r, off, binom, S, Wc, Qq):
    """``(Sᵀ G_c W_app)^(k)`` from the composite applied wrench jets ``W^C``."""
    for a in range(1, S.shape[1]):
        for k in range(r + 1):
            acc = 0.0
            for i in range(k + 1):
                acc += binom[k, i] * _dot6(S[i, a], Wc[k - i, a])          # SPEC §7: S_aᵀ W^C_a
            Qq[k, off + a - 1] = acc
    if off:
        for k in range(r + 1):
            for i in range(6):
                Qq[k, i] = Wc[k, 0, i]


@njit(inline=True)
def _gravity(model, cf):
    """``G = (0, g⃗)`` (SPEC §1) in the scratch."""
    G = cf.G
    for i in range(3):
        G[i] = 0.0
        G[3 + i] = model.gravity[i]
    return G


@njit(inline=True)
def _add_armature(model, off, M):
    """``M += diag(0, I_a)`` (SPEC §5: armature on M's diagonal)."""
    for i in range(model.joint_armature.shape[0]):
        M[off + i, off + i] += model.joint_armature[i]


@njit(inline=True)
def _damping_into(model, off, B):
    """``B = diag(0₆, b)`` (floating base) or ``diag(b)`` (fixed)."""
    B[:] = 0.0
    for i in range(model.joint_damping.shape[0]):
        B[off + i, off + i] = model.joint_damping[i]


@njit(inline=True)
def _matrix_to_world(A, d, symmetric):
    """Map the base block of ``A`` ``(K, nv, nv)`` from the base origin ``o``
    to the reference point, ``Xᵀ A X`` with ``X = Ad_{T(−d)}`` (SPEC §1):
    every base column, then every base row, as a wrench. ``symmetric``:
    the rows are the columns' mirror image, so map the base block's rows
    only and keep ``A`` exactly symmetric (the two sides of the base block
    are rounded differently)."""
    nv = A.shape[1]
    for k in range(A.shape[0]):
        for c in range(nv):
            _unshift_wrench(A[k, :6, c], d, A[k, :6, c])
        for i in range(6 if symmetric else nv):
            _unshift_wrench(A[k, i, :6], d, A[k, i, :6])
        if symmetric:
            for i in range(6):
                for c in range(i + 1, nv):
                    A[k, c, i] = A[k, i, c]


@njit(inline=True)
def _vector_to_world(a, d):
    """The base rows of ``a`` ``(K, nv)`` as a wrench about the reference point."""
    for k in range(a.shape[0]):
        _unshift_wrench(a[k, :6], d, a[k, :6])


@njit(inline=True)
def _one_row(a):
    """``a`` as a jet of one row (a view)."""
    return a.reshape((1,) + a.shape)


@njit(inline=True)
def _at_rest(model, ws, C0, about_base, q0):
    """Poses and screws ``S^(0)`` of a configuration (no twist jets)."""
    set_base(model, ws, C0, about_base, ws.base_twist[:0], 0)
    kinematics(model, ws, _one_row(q0), -1)


@njit
def _mass_matrix(model, ws, cf, C0, about_base, q0, out):
    """``M`` into ``out`` ``(nv, nv)``; returns a status (SPEC §7)."""
    status = check_configuration(model, C0, q0)
    if status != OK:
        return status
    _at_rest(model, ws, C0, about_base, q0)
    _inertia_jets(model, ws, 0, cf.Mc, None)
    _composites(model.body_parent, cf.Mc, None)
    Mq = _one_row(out)
    Mq[:] = 0.0
    off = 6 if model.floating_base else 0
    _assemble(0, model.body_parent, off, ws.binom, ws.S, cf.Mc, None, cf.G, cf.MS, cf.BS, cf.Z,
              Mq, None, None)
    _add_armature(model, off, out)
    if off and not about_base:
        _matrix_to_world(Mq, ws.d, True)
    return OK if _all_finite(Mq.reshape(-1)) else NOT_FINITE


@njit
def _gravity_vector(model, ws, cf, C0, about_base, q0, out):
    """``g`` into ``out`` ``(nv,)``; returns a status (SPEC §7). Only the
    composite gravity wrenches ``Σ_{k∈sub(a)} M_k G`` are needed, held in
    ``Wc[0]``: six numbers a body instead of ``M^C``'s 36."""
    status = check_configuration(model, C0, q0)
    if status != OK:
        return status
    _at_rest(model, ws, C0, about_base, q0)
    C, c, S = ws.C, ws.c, ws.S
    MG = cf.Wc[:1]
    N = C.shape[0]
    for j in range(N):
        _com_init(j, C, model.body_com, c)
        MG[0, j] = 0.0
        _gravity_wrench_acc(1.0, j, 0, model.body_mass[j], model.gravity, c, MG[0, j])  # M_j G
    _subtree_sums(model.body_parent, MG)                                    # G_c M G_I
    off = 6 if model.floating_base else 0
    for a in range(1, N):
        out[off + a - 1] = -_dot6(S[0, a], MG[0, a])                        # SPEC §7: g_a = −S_aᵀ (G_c M G_I)_a
    for i in range(off):
        out[i] = -MG[0, 0, i]
    if off and not about_base:
        _vector_to_world(_one_row(out), ws.d)
    return OK if _all_finite(out) else NOT_FINITE


@njit
def _coriolis_matrix(model, ws, cf, C0, about_base, Vb, q, out):
    """``C`` into ``out`` ``(nv, nv)`` at the state ``V₀`` ``(1, 6)``,
    ``[q; q̇]``; returns a status (SPEC §7)."""
    status = check_motion(model, C0, Vb, q, 1, 2)
    if status != OK:
        return status
    set_base(model, ws, C0, about_base, Vb, 1)
    kinematics(model, ws, q, 0)
    S, V = ws.S, ws.V
    for j in range(1, S.shape[1]):
        S[1, j, 0], S[1, j, 1], S[1, j, 2], S[1, j, 3], S[1, j, 4], S[1, j, 5] = \
            _ad(V[0, j], S[0, j])                                          # SPEC §3: Ṡ_j = ad_{V_j} S_j
    _inertia_jets(model, ws, 0, cf.Mc, cf.Bc)
    _composites(model.body_parent, cf.Mc, cf.Bc)
    Cq = _one_row(out)
    Cq[:] = 0.0
    off = 6 if model.floating_base else 0
    _assemble(0, model.body_parent, off, ws.binom, S, cf.Mc, cf.Bc, cf.G, cf.MS, cf.BS, cf.Z,
              None, Cq, None)
    if off and not about_base:
        _matrix_to_world(Cq, ws.d, False)
    return OK if _all_finite(Cq.reshape(-1)) else NOT_FINITE


@njit
def _closed_form(model, ws, cf, C0, about_base, Vb, q, W_app, r, Mq, Cq, gq, Qq, B, nu):
    """Every jet of order ``0..r`` into ``Mq``, ``Cq`` ``(r+1, nv, nv)``,
    ``gq``, ``Qq`` ``(r+1, nv)``, the damping ``B`` ``(nv, nv)`` and the
    velocity jet ``nu`` ``(r+2, nv)``; returns a status (SPEC §7)."""
    status = check_motion(model, C0, Vb, q, r + 2, r + 3)
    N = model.body_parent.shape[0]
    if status != OK:
        return status
    if not is_applied(W_app, r + 1, N):
        return BAD_APPLIED
    set_base(model, ws, C0, about_base, Vb, r + 2)
    kinematics(model, ws, q, r + 1)
    Mc, Bc, Wc = cf.Mc, cf.Bc, cf.Wc
    _inertia_jets(model, ws, r, Mc, Bc)
    _composites(model.body_parent, Mc, Bc)
    Mq[:] = 0.0
    Cq[:] = 0.0
    off = 6 if model.floating_base else 0
    _assemble(r, model.body_parent, off, ws.binom, ws.S, Mc, Bc, _gravity(model, cf), cf.MS, cf.BS,
              cf.Z, Mq, Cq, gq)
    if W_app.shape[0] > 0:
        for k in range(r + 1):
            for j in range(N):
                _shift_wrench(W_app[k, j], ws.d, Wc[k, j])                      # about o
        _subtree_sums(model.body_parent, Wc)
        _applied_force(r, off, ws.binom, ws.S, Wc, Qq)
    else:
        Qq[:] = 0.0
    _add_armature(model, off, Mq[0])
    _damping_into(model, off, B)
    for k in range(r + 2):                                                     # ν^(k) = (V₀^(k), q^(k+1))
        for i in range(off):
            nu[k, i] = Vb[k, i]
        for i in range(N - 1):
            nu[k, off + i] = q[k + 1, i]
    if off and not about_base:
        _matrix_to_world(Mq, ws.d, True)
        _matrix_to_world(Cq, ws.d, False)
        _vector_to_world(gq, ws.d)
        _vector_to_world(Qq, ws.d)
    if not (_all_finite(Mq.reshape(-1)) and _all_finite(gq.reshape(-1))
            and _all_finite(Cq.reshape(-1)) and _all_finite(Qq.reshape(-1))):
        return NOT_FINITE
    return OK


@njit
def _damping_matrix(model, B):
    _damping_into(model, 6 if model.floating_base else 0, B)


_MASS_MATRIX = Kernel(_mass_matrix)
_GRAVITY_VECTOR = Kernel(_gravity_vector)
_CORIOLIS_MATRIX = Kernel(_coriolis_matrix)
_CLOSED_FORM = Kernel(_closed_form)
_DAMPING_MATRIX = Kernel(_damping_matrix)


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
    B = np.empty((model.nv, model.nv))
    _DAMPING_MATRIX.call(model._data, B)
    return B


def _at_configuration(kernel, square, model, base_pose, q, reference, workspace):
    """The output of :func:`mass_matrix` (``square``: ``(nv, nv)``) or
    :func:`gravity_vector` (``(nv,)``), a fresh array, from its kernel."""
    if type(model) is not Model:
        check_model(model)
    C0, q0 = configuration_args(model, base_pose, q)
    out = np.empty((model.nv, model.nv) if square else model.nv)
    if workspace is None and reference == "world":
        ws = pooled(model, 0)
        ws._calls += 1                        # no other call can hold it (see pooled)
        cf = ws._closed_form
        status = kernel.call(model._data, ws._data, ws._closed_form_data() if cf is None else cf,
                             C0, False, q0, out)
    else:
        ws = workspace_for(model, 0, workspace)
        status, _ = ws._serve(kernel, model, ws._closed_form_data(), C0, about_base(reference), q0,
                              out)
    if status != OK:
        _configuration_error(status, model, base_pose, q)
    return out


def _configuration_error(status, model, base_pose, q):
    """Raise for a kernel status of :func:`mass_matrix` or :func:`gravity_vector`
    (kept out of the call path: a closure there would slow every call)."""
    raise_for(status, model, lambda: check_configuration_slow(model, base_pose, q))


def _motion_error(status, model, base_pose, base_twist, q, r, applied=None):
    """Raise for a kernel status of :func:`coriolis_matrix` (``r = −1``: the
    state jets, one and two rows) or :func:`closed_form_jets` of order ``r``."""
    raise_for(status, model, lambda: (
        check_motion_slow(model, base_pose, base_twist, q, r + 2, r + 3),
        check_applied_slow(model, applied, r + 1)))


def closed_form_jets(model, base_pose, base_twist, q, order, *, applied=None, reference="world",
                     workspace=None):
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
    base_twist : (order+2, 6) or None (more rows: the first order+2 are read)
        Spatial base twist jet ``V₀^(0..order+1)``; ``None`` for a fixed base.
    q : (order+3, n) (more rows: the first order+3 are read)
        Joint jet ``q^(0..order+2)``.
    order : int ≥ 0
    applied : (order+1, N, 6), optional, keyword
        Spatial applied wrench jets on each body.
    reference : {"world", "base"}, keyword
        The point the base twist and the generalised base force are taken
        about, with world axes: the world origin (default), or the base
        origin at this instant (SPEC §1, reference point).
    workspace : Workspace, optional, keyword
        Scratch for ``(model, order)`` (see :class:`liedyn.Workspace`); the
        returned arrays are the caller's, never the workspace's.

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
    base = about_base(reference)
    C0, Vb, qj = motion_args(model, base_pose, base_twist, q, r + 2, r + 3)
    Wa = applied_arg(model, applied, r + 1)
    nv = model.nv
    Mq, Cq = np.empty((r + 1, nv, nv)), np.empty((r + 1, nv, nv))
    gq, Qq = np.empty((r + 1, nv)), np.empty((r + 1, nv))
    B, nu = np.empty((nv, nv)), np.empty((r + 2, nv))
    ws = workspace_for(model, r, workspace)
    status, _ = ws._serve(_CLOSED_FORM, model, ws._closed_form_data(), C0, base, Vb, qj, Wa, r, Mq,
                          Cq, gq, Qq, B, nu)
    if status != OK:
        _motion_error(status, model, base_pose, base_twist, q, r, applied)
    return ClosedFormJets(mass=Mq, coriolis=Cq, gravity=gq, damping=B, applied_force=Qq,
                          velocity=nu)


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


def mass_matrix(model, base_pose, q, *, reference="world", workspace=None):
    """Joint-space mass matrix ``M(Q) = Sᵀ G_c M G_p S + diag(0, I_a)`` (SPEC §7).

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
    q : (n,)
        The configuration; or a joint jet ``(rows, n)``, whose row 0 is read.
    reference : {"world", "base"}, keyword
        As :func:`closed_form_jets`.
    workspace : Workspace, optional, keyword
        Scratch for ``(model, 0)`` (see :class:`liedyn.Workspace`); the
        result is a fresh array either way.

    Returns
    -------
    (nv, nv) symmetric positive definite; base block first for a floating base.
    """
    return _at_configuration(_MASS_MATRIX, True, model, base_pose, q, reference, workspace)


def coriolis_matrix(model, base_pose, base_twist, q, *, reference="world", workspace=None):
    """Lemma 1's admissible ``C(Q, ν) = Sᵀ G_c M G_p Ṡ − Sᵀ G_c ad_Vᵀ M G_p S``,
    for which ``Ṁ − 2C`` is skew-symmetric.

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
    base_twist : (1, 6) or None (more rows: only the first is read)
        The state's spatial base twist ``V₀``; ``None`` for a fixed base.
    q : (2, n) (more rows: the first 2 are read)
        The state ``[q; q̇]``.
    reference : {"world", "base"}, keyword
        As :func:`closed_form_jets`.
    workspace : Workspace, optional, keyword
        As :func:`mass_matrix`.

    Returns
    -------
    (nv, nv)
    """
    if type(model) is not Model:
        check_model(model)
    C0, Vb, qs = motion_args(model, base_pose, base_twist, q, 1, 2)
    C = np.empty((model.nv, model.nv))
    ws = workspace_for(model, 0, workspace)
    status, _ = ws._serve(_CORIOLIS_MATRIX, model, ws._closed_form_data(), C0, about_base(reference),
                          Vb, qs, C)
    if status != OK:
        _motion_error(status, model, base_pose, base_twist, q, -1)
    return C


def gravity_vector(model, base_pose, q, *, reference="world", workspace=None):
    """Generalised gravity force ``g(Q) = −Sᵀ G_c M G_I`` (``= ∂U/∂Q``), ``(nv,)``;
    arguments as :func:`mass_matrix`."""
    return _at_configuration(_GRAVITY_VECTOR, False, model, base_pose, q, reference, workspace)
