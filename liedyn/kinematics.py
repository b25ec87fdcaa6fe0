"""Higher-order forward kinematics (SPEC §3, the paper's Algorithm 1).

Glossary
--------
=========  ===============  ==================================================
``F_j``    (N, 4, 4)        ``F_{p(j)} exp([Y_j] q_j)``, ``F_0 = C₀ H₀⁻¹``
``C_j``    (N, 4, 4)        body pose ``F_j H_j`` (``C_0`` is the base pose)
``S``      (K+1, N, 6)      screw jets ``S_j^(k)``, ``S_j = Ad_{F_j} Y_j``
``V``      (K+1, N, 6)      twist jets ``V_j^(k)``
``q``      (K+2, n)         joint jet, row k is ``q^(k)``
=========  ===============  ==================================================

Derivatives are computed interleaved per body, ``V^(0), S^(1), V^(1), …``:
``S^(k)`` needs ``V^(0..k−1)`` of the same body and ``V^(k)`` needs ``S^(0..k)``.
"""

from dataclasses import dataclass

import numpy as np

from ._jit import njit
from ._validate import check_order
from .se3 import _Ad_into, _ad, _pose_into
from .workspace import binomials, check_state


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


@njit
def _poses(parent, Y, H, F0, q0, F, C):
    """Zeroth order: ``F_j``, ``C_j`` for every body (pre-order)."""
    for i in range(4):
        for k in range(4):
            F[0, i, k] = F0[i, k]
    _mul44_into(F0, H[0], C[0])
    for j in range(1, parent.shape[0]):
        _joint_exp_into(Y[j], q0[j - 1], C[j])                    # C_j holds exp([Y_j] q_j) briefly
        _mul44_into(F[parent[j]], C[j], F[j])                     # SPEC §3: F_j = F_p exp([Y_j] q_j)
        _mul44_into(F[j], H[j], C[j])                             # SPEC §3: C_j = F_j H_j


@njit(inline=True)
def _screw_twist_order(j, p, k, q, binom, S, V):
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
    for i in range(6):
        acc = V[k, p, i]
        for a in range(k + 1):                                   # SPEC §3: V^(k)
            acc += binom[k, a] * S[a, j, i] * q[k + 1 - a, j - 1]
        V[k, j, i] = acc


@njit
def _kinematics(parent, Y, H, F0, Vb, q, K, binom, F, C, S, V):
    """Poses and jets ``S^(0..K)``, ``V^(0..K)`` (base twist jet ``Vb``)."""
    _poses(parent, Y, H, F0, q[0], F, C)
    for k in range(K + 1):
        for i in range(6):
            V[k, 0, i] = Vb[k, i]
        S[k, 0] = 0.0
    for j in range(1, parent.shape[0]):
        _Ad_into(F[j], Y[j], S[0, j])                             # SPEC §3: S_j = Ad_{F_j} Y_j
        for k in range(K + 1):
            _screw_twist_order(j, parent[j], k, q, binom, S, V)


@dataclass(frozen=True)
class KinematicsResult:
    """Body poses and the jets of body twists and joint screws.

    Attributes
    ----------
    body_pose : (N, 4, 4)
        ``C_j``, the pose of each body frame in the world.
    twist : (order+1, N, 6)
        ``V_j^(k)``, spatial twists and their derivatives.
    screw : (order+1, N, 6)
        ``S_j^(k)``, current joint screws (row 0 of body 0 is zero).
    """

    body_pose: np.ndarray
    twist: np.ndarray
    screw: np.ndarray


def forward_kinematics(model, base_pose, base_twist, q, order):
    """Body poses, twist jets and screw jets up to derivative ``order``.

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Pose of the base frame in the world; ``None`` uses ``model.home_pose``.
    base_twist : (order+1, 6) or None
        Base twist jet ``V₀^(0..order)``; ``None`` (required for a fixed base)
        means zero.
    q : (order+2, n)
        Joint jet ``q^(0..order+1)``.
    order : int ≥ 0

    Returns
    -------
    KinematicsResult
    """
    K = check_order(order)
    C0, Vb, qj = check_state(model, base_pose, base_twist, q, K + 1, K + 2)
    N = model.n_bodies
    F = np.empty((N, 4, 4))
    C = np.empty((N, 4, 4))
    S = np.empty((K + 1, N, 6))
    V = np.empty((K + 1, N, 6))
    F0 = C0 @ model.home_pose_inv
    _kinematics(model.body_parent, model.joint_screw, model.body_home, F0, Vb, qj, K,
                binomials(K + 2), F, C, S, V)
    return KinematicsResult(body_pose=C, twist=V, screw=S)
