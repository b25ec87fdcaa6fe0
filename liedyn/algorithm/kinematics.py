"""Higher-order forward kinematics (SPEC §3, the paper's Algorithm 1).

Glossary (``model``, ``ws``: the model's and the workspace's compiled handles; SPEC §1)
-----------------------------------------------------------------
==============  ===============  =============================================
``o``           (3,)             reference point: the base origin ``p₀``
``ws.F``        (N, 4, 4)        ``F_j = F_{p(j)} exp([Y_j] q_j)``, ``F_0 = T(−o) C₀``
``ws.C``        (N, 4, 4)        body poses ``C_j = F_j H_j``, translated by ``−o``
``ws.S``        (K+1, N, 6)      screw jets ``S_j^(k)``, ``S_j = Ad_{F_j} Y_j``
``ws.V``        (K+1, N, 6)      twist jets ``V_j^(k)``
``q``           (K+2, n)         joint jet, row k is ``q^(k)``
==============  ===============  =============================================

Every kernel computes about the base origin ``o`` with world axes (SPEC §1,
"reference point"): the base pose enters as ``T(−o) C₀``, a pure rotation,
and twist jets as ``Ad_{T(−o)} V``. Moment arms are then the size of the
robot wherever it is in the world, so the accuracy does not depend on the
distance from the world origin; outputs are mapped back with one adjoint
per jet (:mod:`liedyn.multibody.results`).

Derivatives are computed interleaved per body, ``V^(0), S^(1), V^(1), …``:
``S^(k)`` needs ``V^(0..k−1)`` of the same body and ``V^(k)`` needs ``S^(0..k)``.
"""

import numpy as np

from .._checks import (NOT_FINITE, OK, _all_finite, about_base, check_motion, check_motion_slow,
                       motion_args, raise_for)
from .._jit import Kernel, njit
from ..multibody.model import check_model_order
from ..multibody.results import KinematicsResult, unshift_pose, unshift_twist
from ..spatial.se3 import _Ad_into, _ad, _pose_into, _shift_twist
from ..multibody.workspace import Workspace

@njit(inline=True)
def _mul44_into(A, B, out):
    for i in range(3):
        for k in range(4):
            out[i, k] = A[i, 0] * B[0, k] + A[i, 1] * B[1, k] + A[i, 2] * B[2, k]
        out[i, 3] += A[i, 3]
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit(inline=True)
def _joint_exp_into(Y, q, out):
    """``out[:] = exp([Y] q)`` for a joint screw of the model (SPEC §2).

    A revolute screw ``Y = (e, x × e)`` has ``|e| = 1`` and ``e ⟂ v``, so
    ``exp`` is a rotation by ``q`` about the axis: ``R = I + sin q ê +
    (1 − cos q) ê²`` and ``p = sin q v + (1 − cos q) e × v``. A prismatic
    screw ``(0, e)`` gives ``R = I``, ``p = q e``. No square root, no
    small-angle branch.
    """
    ex, ey, ez = Y[0], Y[1], Y[2]
    vx, vy, vz = Y[3], Y[4], Y[5]
    if ex == 0.0 and ey == 0.0 and ez == 0.0:
        s, k = 0.0, 0.0
        px, py, pz = q * vx, q * vy, q * vz
    else:
        s, k = np.sin(q), 1.0 - np.cos(q)
        px = s * vx + k * (ey * vz - ez * vy)
        py = s * vy + k * (ez * vx - ex * vz)
        pz = s * vz + k * (ex * vy - ey * vx)
    _pose_into(s, k, ex, ey, ez, 1.0, px, py, pz, out)


@njit(inline=True)
def set_base(model, ws, C0, about_base, Vb, rows):
    """``o``, ``d``, ``F_0 = T(−o) C₀`` and rows ``0..rows−1`` of the base twist
    jet about ``o`` (zero for a fixed base, which passes an empty ``Vb``).

    ``about_base``: the call's twists and wrenches are taken about the base
    origin already (``d = 0``), else about the world origin (``d = o``)."""
    o, d = ws.o, ws.d
    F0 = ws.F[0]
    for i in range(3):
        o[i] = C0[i, 3]
        d[i] = 0.0 if about_base else o[i]
        for k in range(3):
            F0[i, k] = C0[i, k]
        F0[i, 3] = 0.0
        F0[3, i] = 0.0
    F0[3, 3] = 1.0
    for k in range(rows):
        if Vb.shape[0] == 0:
            ws.V[k, 0] = 0.0
        else:
            _shift_twist(Vb[k], d, ws.V[k, 0])                    # SPEC §1: about o
        ws.S[k, 0] = 0.0


@njit
def poses(model, ws, q0):
    """Zeroth order: ``F_j``, ``C_j`` for every body (pre-order)."""
    Y, H, parent = model.joint_screw, model.body_home, model.body_parent
    F, C = ws.F, ws.C
    C[0] = F[0]                                                  # H_0 = I
    for j in range(1, parent.shape[0]):
        _joint_exp_into(Y[j - 1], q0[j - 1], C[j])               # C_j holds exp([Y_j] q_j) briefly
        _mul44_into(F[parent[j]], C[j], F[j])                    # SPEC §3: F_j = F_p exp([Y_j] q_j)
        _mul44_into(F[j], H[j], C[j])                            # SPEC §3: C_j = F_j H_j


@njit(inline=True)
def screw_twist_order(j, p, k, q, binom, S, V):
    """``S_j^(k)`` and ``V_j^(k)`` from lower orders and the parent's ``V^(k)``.

    ``S_j^(0)`` must already be set; ``V_p^(k)`` must be known.
    """
    if k >= 1:
        s0 = s1 = s2 = s3 = s4 = s5 = 0.0
        for a in range(k):                                       # SPEC §3: S^(k)
            b = binom[k - 1, a]
            d0, d1, d2, d3, d4, d5 = _ad(V[a, j], S[k - 1 - a, j])
            s0 += b * d0
            s1 += b * d1
            s2 += b * d2
            s3 += b * d3
            s4 += b * d4
            s5 += b * d5
        S[k, j, 0] = s0
        S[k, j, 1] = s1
        S[k, j, 2] = s2
        S[k, j, 3] = s3
        S[k, j, 4] = s4
        S[k, j, 5] = s5
    v0, v1, v2, v3, v4, v5 = V[k, p, 0], V[k, p, 1], V[k, p, 2], V[k, p, 3], V[k, p, 4], V[k, p, 5]
    for a in range(k + 1):                                       # SPEC §3: V^(k)
        b = binom[k, a] * q[k + 1 - a, j - 1]
        s = S[a, j]
        v0 += b * s[0]
        v1 += b * s[1]
        v2 += b * s[2]
        v3 += b * s[3]
        v4 += b * s[4]
        v5 += b * s[5]
    V[k, j, 0] = v0
    V[k, j, 1] = v1
    V[k, j, 2] = v2
    V[k, j, 3] = v3
    V[k, j, 4] = v4
    V[k, j, 5] = v5


@njit
def kinematics(model, ws, q, K):
    """Poses and jets ``S^(0..K)``, ``V^(0..K)`` (base rows set by :func:`set_base`);
    ``K = −1``: poses and ``S^(0)`` only, from ``q[0]``."""
    poses(model, ws, q[0])
    parent, Y = model.body_parent, model.joint_screw
    F, S, V, binom = ws.F, ws.S, ws.V, ws.binom
    for j in range(1, parent.shape[0]):
        _Ad_into(F[j], Y[j - 1], S[0, j])                        # SPEC §3: S_j = Ad_{F_j} Y_j
        for k in range(K + 1):
            screw_twist_order(j, parent[j], k, q, binom, S, V)


@njit
def _forward_kinematics(model, ws, C0, about_base, Vb, q, K):
    status = check_motion(model, C0, Vb, q, K + 1, K + 2)
    if status != OK:
        return status
    set_base(model, ws, C0, about_base, Vb, K + 1)
    kinematics(model, ws, q, K)
    if not (_all_finite(ws.C.reshape(-1)) and _all_finite(ws.V[:K + 1].reshape(-1))
            and _all_finite(ws.S[:K + 1].reshape(-1))):
        return NOT_FINITE
    return OK


_FORWARD_KINEMATICS = Kernel(_forward_kinematics)


def forward_kinematics(model, base_pose, base_twist, q, order, *, reference="world"):
    """Body poses, twist jets and screw jets up to derivative ``order``.

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Pose of the base frame in the world; ``None`` uses ``model.home_pose``.
    base_twist : (order+1, 6) or None (more rows: the first order+1 are read)
        Spatial base twist jet ``V₀^(0..order)``; ``None`` for a fixed base.
    q : (order+2, n) (more rows: the first order+2 are read)
        Joint jet ``q^(0..order+1)``.
    order : int ≥ 0
    reference : {"world", "base"}, keyword
        The point twists are taken about (world axes): the world origin, or
        the base origin (SPEC §1, reference point).

    Returns
    -------
    KinematicsResult
    """
    K = check_model_order(model, order)
    C0, Vb, qj = motion_args(model, base_pose, base_twist, q, K + 1, K + 2)
    ws = Workspace._fresh(model, K)
    status = _FORWARD_KINEMATICS.call(model._data, ws._data, C0, about_base(reference), Vb, qj,
                                      K)
    raise_for(status, model, lambda: check_motion_slow(model, base_pose, base_twist, q,
                                                       K + 1, K + 2))
    return KinematicsResult(body_pose=unshift_pose(ws.C, ws.o),
                            twist=unshift_twist(ws.V[:K + 1], ws.d),
                            screw=unshift_twist(ws.S[:K + 1], ws.d))


def body_motion(model, ws, base_pose, base_twist, q, order, bodies):
    """Poses ``(len(bodies), 4, 4)`` and spatial twist jets ``V^(0..order)``
    ``(order+1, len(bodies), 6)`` (world axes, about the world origin) of
    ``bodies``: :func:`forward_kinematics` (the same checks) in the workspace
    ``ws`` of order ``order`` that the caller keeps, selecting the bodies
    before the results are shifted back; what a run with contacts calls at
    every stage."""
    C0, Vb, qj = motion_args(model, base_pose, base_twist, q, order + 1, order + 2)
    status = _FORWARD_KINEMATICS.call(model._data, ws._data, C0, False, Vb, qj, order)
    raise_for(status, model, lambda: check_motion_slow(model, base_pose, base_twist, q,
                                                       order + 1, order + 2))
    return (unshift_pose(ws.C[bodies], ws.o),
            unshift_twist(ws.V[:order + 1, bodies], ws.d))


