"""H-GRNE-FBS: inverse dynamics of any order r (SPEC §4, Algorithm 2).

Glossary
--------
==========  ===============  ================================================
``V``       (r+2, N, 6)      body twist jets ``V_j^(k)``
``S``       (r+2, N, 6)      joint screw jets ``S_j^(k)``
``c``       (r+3, N, 3)      world centre-of-mass jets
``Ic``      (r+2, N, 3, 3)   rotational inertia about the CoM, world axes
``Pi``      (r+2, N, 6)      momentum jets ``Π_j^(k) = (M_j V_j)^(k)``
``W``       (r+1, N, 6)      wrench jets ``W_j^(k)`` transmitted by joint j
``tau``     (r+1, n)         joint force jets ``τ_j^(k)``
==========  ===============  ================================================

Outward pass: kinematics (§3) and per-body inertia/momentum jets.
Inward pass (leaves first):

    W_j^(k) = Π_j^(k+1) − W_app,j^(k) − M_j^(k) G + Σ_{c ∈ children(j)} W_c^(k)
    τ_j^(k) = Σ_a C(k, a) S_j^(a)ᵀ W_j^(k−a) + I_a q_j^(k+2) + b q_j^(k+1)
"""

from dataclasses import dataclass

import numpy as np

from ._jit import njit
from ._validate import check_order
from .inertia import _body_mass_jets, _gravity_wrench_acc, _momentum_order
from .kinematics import _kinematics
from .workspace import binomials, check_applied, check_state, workspace_for


@njit
def _outward(r, mass, com_b, J_b, g, binom, C, V, Wapp, c, Ic, Pi, W):
    """Per-body momentum jets and the body's own share of ``W^(0..r)``."""
    for j in range(C.shape[0]):
        _body_mass_jets(j, r + 1, mass, com_b, J_b, C, V, binom, c, Ic)
        m = mass[j]
        for k in range(r + 2):
            _momentum_order(j, k, m, V, c, Ic, binom, Pi)
        for k in range(r + 1):
            for i in range(6):
                W[k, j, i] = Pi[k + 1, j, i] - Wapp[k, j, i]                  # SPEC §4
            _gravity_wrench_acc(-1.0, j, k, m, g, c, W[k, j])               # − M^(k) G


@njit
def _inward(r, parent, arm, damp, binom, S, q, W, tau):
    """Accumulate children's wrenches (leaves first) and project on the screws."""
    for j in range(parent.shape[0] - 1, 0, -1):
        p = parent[j]
        for k in range(r + 1):
            for i in range(6):
                W[k, p, i] += W[k, j, i]                                       # SPEC §4: Σ_children
        for k in range(r + 1):
            acc = arm[j] * q[k + 2, j - 1] + damp[j] * q[k + 1, j - 1]
            for a in range(k + 1):                                            # SPEC §4: τ^(k)
                s = 0.0
                for i in range(6):
                    s += S[a, j, i] * W[k - a, j, i]
                acc += binom[k, a] * s
            tau[k, j - 1] = acc


@njit
def _inverse_dynamics(parent, Y, H, mass, com_b, J_b, arm, damp, g, F0, Vb, q, Wapp, r,
                      binom, F, C, S, V, c, Ic, Pi, W, tau):
    _kinematics(parent, Y, H, F0, Vb, q, r + 1, binom, F, C, S, V)
    _outward(r, mass, com_b, J_b, g, binom, C, V, Wapp, c, Ic, Pi, W)
    _inward(r, parent, arm, damp, binom, S, q, W, tau)


@dataclass(frozen=True)
class InverseDynamicsResult:
    """Output of :func:`inverse_dynamics` of order ``r``.

    Attributes
    ----------
    base_wrench : (r+1, 6)
        ``W₀^(k)``, spatial (world frame, moment about the world origin): the
        wrench the base actuators must apply, or for a fixed base the support
        reaction.
    tau : (r+1, n)
        Joint force jets ``τ^(k)``.
    body_pose : (N, 4, 4)
        Body poses ``C_j``.
    twist, screw : (r+2, N, 6)
        Jets ``V_j^(k)`` and ``S_j^(k)``.
    momentum : (r+2, N, 6)
        Jets of each body's own spatial momentum ``Π_j^(k)``.
    wrench : (r+1, N, 6)
        Jets of the wrench ``W_j^(k)`` each joint transmits to its child
        subtree (row 0 of body 0 is the base wrench).
    """

    base_wrench: np.ndarray
    tau: np.ndarray
    body_pose: np.ndarray
    twist: np.ndarray
    screw: np.ndarray
    momentum: np.ndarray
    wrench: np.ndarray


def inverse_dynamics(model, base_pose, base_twist, q, order, applied=None, workspace=None):
    """Inverse dynamics and its first ``order`` time derivatives (H-GRNE-FBS).

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Pose of the base frame in the world (``None``: ``model.home_pose``).
    base_twist : (order+2, 6) or None
        Spatial base twist jet ``V₀, V̇₀, …, V₀^(order+1)``; ``None`` for a
        fixed base.
    q : (order+3, n)
        Joint jet ``q, q̇, …, q^(order+2)``.
    order : int ≥ 0
        Highest derivative ``r`` of the dynamics returned.
    applied : (order+1, N, 6), optional
        Spatial external wrench jets acting on each body.
    workspace : Workspace, optional
        Scratch for ``(model, order)``; the result's body jets are then views
        into it (see :class:`liedyn.Workspace`).

    Returns
    -------
    InverseDynamicsResult

    Raises
    ------
    ValueError, TypeError
        Wrong shapes, non-finite values, a non-SE(3) pose, a negative order.

    Notes
    -----
    Cost O(N · order²). Order 0 is the Lie-group recursive Newton–Euler
    algorithm.
    """
    r = check_order(order)
    C0, Vb, qj = check_state(model, base_pose, base_twist, q, r + 2, r + 3)
    Wapp = check_applied(model, applied, r + 1)
    ws = workspace_for(model, r, workspace)
    tau = np.empty((r + 1, model.n_joints))
    _inverse_dynamics(model.body_parent, model.joint_screw, model.body_home, model.body_mass,
                      model.body_com, model.body_rot_inertia, model.joint_armature,
                      model.joint_damping, model.gravity, C0 @ model.home_pose_inv, Vb, qj,
                      Wapp, r, binomials(r + 3), ws.F, ws.C, ws.S, ws.V, ws.c, ws.Ic, ws.Pi,
                      ws.W, tau)
    return InverseDynamicsResult(base_wrench=ws.W[:, 0].copy(), tau=tau, body_pose=ws.C,
                                 twist=ws.V, screw=ws.S, momentum=ws.Pi, wrench=ws.W)
