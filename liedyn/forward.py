"""H-GABI-FBS: forward dynamics of any order r (SPEC §5, Algorithm 3).

The compiled passes below also carry the joint/base split of hybrid dynamics
(SPEC §6, :mod:`liedyn.hybrid`): a motion-driven joint (``motion[j]``) is not
eliminated, and a motion-driven base takes its twist jet instead of solving for
it. Forward dynamics is the case with no motion-driven joint and a
wrench-driven base (a fixed base is a motion-driven base at rest), so there is
one recursion for both.

Glossary
--------
===========  ===============  ==============================================
``MA``       (N, 6, 6)        articulated inertia ``M^A_j`` (Lemma 2: one per
                              call, the same at every order)
``U``        (N, 6)           ``U_j = M^A_j S_j``
``D``        (N,)             pivot ``D_j = S_jᵀ U_j + I_a,j``
``L``        (6, 6)           Cholesky factor of ``M^A_0`` (wrench-driven base)
``V``        (R+2, N, 6)      body twist jets ``V_j^(k)``
``S``        (R+2, N, 6)      joint screw jets ``S_j^(k)``
``c``        (R+3, N, 3)      world centre-of-mass jets
``Ic``       (R+2, N, 3, 3)   rotational inertia about the CoM, world axes
``Pib``      (R+2, N, 6)      row ``r+1``: ``Πbias_j`` of order ``r``
``W``        (R+1, N, 6)      row ``r``: ``W^A_{j,r}`` in the bias pass, then
                              ``W_j^(r) = M^A_j V_j^(r+1) + W^A_{j,r}``
``q``        (R+3, n)         joint jet; row ``r+2`` of a force-driven joint
                              holds ``q̃_j`` between the two passes of order r
===========  ===============  ==============================================

Order r, given everything of orders ``0..r−1``:

1. bias pass (leaves first). Body ``j``'s own terms are its momentum jet
   ``Π_j^(r+1)`` evaluated with ``V_j^(r+1) = 0`` (``Πbias_j``; ``Π`` is linear
   in ``V^(r+1)`` with coefficient ``M_j``), minus applied and gravity wrench
   jets. ``S_j^(r+1)`` and ``Vbias_j`` come from the kinematics step of
   §3 evaluated with ``V_p^(r+1) = 0`` and, for a force-driven joint,
   ``q_j^(r+2) = 0``: row ``r+1`` of ``V`` holds ``Vbias_j`` (plus
   ``S_j q_j^(r+2)`` for a motion-driven joint) until the recovery pass adds
   the rest.
2. base: solve ``M^A_0 V₀^(r+1) = W₀^(r) − W^A_{0,r}`` with the Cholesky
   factor, or take the prescribed ``V₀^(r+1)`` and return ``W₀^(r)``.
3. recovery (parents first): ``q^(r+2)``, ``V^(r+1)``, ``W^(r)``, and the
   forces of motion-driven joints by the projection of §4.

Armature ``I_a`` adds to ``D_j`` and so to the downdate of ``M^A``; damping
``b`` enters as ``τ_j^(r) − b q_j^(r+1)`` (SPEC §5). A pivot ``D_j`` that is
numerically zero stops the call with the body's name (never NaN).
"""

from dataclasses import dataclass

import numpy as np

from ._jit import njit
from ._validate import check_order
from .inertia import (_body_mass_jets, _com_order, _gravity_wrench_acc, _momentum_order,
                      _rot_inertia_order, _spatial_inertia_into)
from .kinematics import _poses, _screw_twist_order
from .se3 import _Ad_into
from .workspace import binomials, check_applied, check_jet, check_state0, workspace_for

# A pivot D_j below PIVOT_RTOL times its magnitude scale Σ|S_a||M^A_ab||S_b| + I_a
# is treated as zero. The round-off in D_j is a few eps times that scale, so
# at the threshold q^(r+2) would carry a relative error of order 1e-5; a pivot
# that is zero in exact arithmetic (a point mass on a revolute axis) lands
# near 1e-16 and is caught.
PIVOT_RTOL = 1e-11

OK = -1   # status of the compiled passes: OK, or the index of the failing body


@njit
def _articulated_inertia(parent, arm, motion, mass, c, Ic, S, MA, U, D):
    """``M^A_j``, ``U_j``, ``D_j`` for every body, leaves first (SPEC §5, §6).

    Needs only the configuration (``c^(0)``, ``I_c^(0)``, ``S^(0)``), so it is
    computed once and serves every order (Lemma 2). Returns ``OK`` or the
    index of the first body whose pivot ``D_j`` is numerically zero.
    """
    N = parent.shape[0]
    for j in range(N):
        _spatial_inertia_into(j, mass[j], c, Ic, MA[j])                       # M_j
    for j in range(N - 1, 0, -1):
        p = parent[j]
        scale = arm[j]
        for a in range(6):
            acc = 0.0
            for b in range(6):
                acc += MA[j, a, b] * S[0, j, b]
                scale += abs(S[0, j, a]) * abs(MA[j, a, b]) * abs(S[0, j, b])
            U[j, a] = acc                                                     # SPEC §5: U = M^A S
        d = arm[j]
        for a in range(6):
            d += S[0, j, a] * U[j, a]                                         # SPEC §5: D = Sᵀ U + I_a
        D[j] = d
        if motion[j]:
            for a in range(6):
                for b in range(6):
                    MA[p, a, b] += MA[j, a, b]                                # SPEC §6: kept whole
        else:
            if not d > PIVOT_RTOL * scale:
                return j
            for a in range(6):
                for b in range(6):
                    MA[p, a, b] += MA[j, a, b] - U[j, a] * U[j, b] / d        # SPEC §5: downdate
    return OK


@njit
def _cholesky6(A, L):
    """``A = L Lᵀ`` for the 6×6 ``M^A_0``; ``False`` if ``A`` is not numerically
    positive definite."""
    tol = 0.0
    for i in range(6):
        tol = max(tol, abs(A[i, i]))
    tol *= PIVOT_RTOL
    for i in range(6):
        for k in range(6):
            L[i, k] = 0.0
    for k in range(6):
        d = A[k, k]
        for a in range(k):
            d -= L[k, a] * L[k, a]
        if not d > tol:
            return False
        L[k, k] = np.sqrt(d)
        for i in range(k + 1, 6):
            s = A[i, k]
            for a in range(k):
                s -= L[i, a] * L[k, a]
            L[i, k] = s / L[k, k]
    return True


@njit
def _cholesky6_solve(L, x):
    """``x ← (L Lᵀ)⁻¹ x`` in place."""
    for i in range(6):
        s = x[i]
        for a in range(i):
            s -= L[i, a] * x[a]
        x[i] = s / L[i, i]
    for i in range(5, -1, -1):
        s = x[i]
        for a in range(i + 1, 6):
            s -= L[a, i] * x[a]
        x[i] = s / L[i, i]


@njit
def _bias_pass(r, parent, mass, damp, g, motion, binom, Wapp, tau, q, S, V, c, Ic, Pib,
               MA, U, D, W):
    """Order r, leaves first: ``W^A_{j,r}``, ``Vbias_j`` and ``q̃_j``."""
    for j in range(parent.shape[0] - 1, -1, -1):
        m = mass[j]
        # Π_j^(r+1) with V_j^(r+1) = 0 (row r+1 of V is still zero for body j)
        _com_order(j, r + 2, V, binom, c)
        _rot_inertia_order(j, r + 1, V, binom, Ic)
        _momentum_order(j, r + 1, m, V, c, Ic, binom, Pib)                    # Πbias_j
        for i in range(6):
            W[r, j, i] += Pib[r + 1, j, i] - Wapp[r, j, i]                    # SPEC §5: W^A_{j,r}
        _gravity_wrench_acc(-1.0, j, r, m, g, c, W[r, j])                     # − M_j^(r) G
        if j == 0:
            break
        p = parent[j]
        # S_j^(r+1), and V_j^(r+1) with V_p^(r+1) = 0: Vbias_j (+ S_j q_j^(r+2)
        # for a motion-driven joint; q_j^(r+2) is still 0 for a force-driven one)
        _screw_twist_order(j, p, r + 1, q, binom, S, V)
        if motion[j]:
            qt = 0.0
        else:
            acc = tau[r, j - 1] - damp[j] * q[r + 1, j - 1]                   # SPEC §5: damping
            for a in range(1, r + 1):
                s = 0.0
                for i in range(6):
                    s += S[a, j, i] * W[r - a, j, i]
                acc -= binom[r, a] * s                                        # SPEC §5: Σ C(r,k) S^(r-k)ᵀ W^(k)
            for i in range(6):
                acc -= U[j, i] * V[r + 1, j, i] + S[0, j, i] * W[r, j, i]     # SPEC §5: Sᵀ(M^A Vbias + W^A)
            qt = acc / D[j]
            q[r + 2, j - 1] = qt                                              # SPEC §5: q̃_j
        for a in range(6):
            acc = W[r, j, a] + U[j, a] * qt
            for b in range(6):
                acc += MA[j, a, b] * V[r + 1, j, b]
            W[r, p, a] += acc                                                 # SPEC §5, §6: parent's W^A


@njit
def _recover(r, parent, arm, damp, motion, base_motion, binom, Vb, Wb, L, q, tau, S, V,
             c, MA, U, D, W):
    """Order r, parents first: ``V₀^(r+1)`` or ``W₀^(r)``, then ``q^(r+2)``,
    ``V^(r+1)``, ``W^(r)`` and the forces of motion-driven joints."""
    if base_motion:
        for i in range(6):
            V[r + 1, 0, i] = Vb[r + 1, i]
    else:
        for i in range(6):
            V[r + 1, 0, i] = Wb[r, i] - W[r, 0, i]
        _cholesky6_solve(L, V[r + 1, 0])                                      # SPEC §5: V₀^(r+1)
    for j in range(parent.shape[0]):
        if j > 0:
            p = parent[j]
            if not motion[j]:
                s = 0.0
                for i in range(6):
                    s += U[j, i] * V[r + 1, p, i]
                q[r + 2, j - 1] -= s / D[j]                                   # SPEC §5: q^(r+2)
                for i in range(6):
                    V[r + 1, j, i] += S[0, j, i] * q[r + 2, j - 1]
            for i in range(6):
                V[r + 1, j, i] += V[r + 1, p, i]                              # SPEC §5: V^(r+1)
        for a in range(6):
            acc = 0.0
            for b in range(6):
                acc += MA[j, a, b] * V[r + 1, j, b]
            W[r, j, a] += acc                                                 # SPEC §5: W = M^A V + W^A
        _com_order(j, r + 2, V, binom, c)                                     # c^(r+2) with V^(r+1)
        if j > 0 and motion[j]:
            acc = arm[j] * q[r + 2, j - 1] + damp[j] * q[r + 1, j - 1]
            for a in range(r + 1):
                s = 0.0
                for i in range(6):
                    s += S[a, j, i] * W[r - a, j, i]
                acc += binom[r, a] * s                                        # SPEC §4, §6: τ^(r)
            tau[r, j - 1] = acc
    if not base_motion:
        for i in range(6):
            W[r, 0, i] = Wb[r, i]


@njit
def _articulated_body(parent, Y, H, mass, com_b, J_b, arm, damp, g, F0, motion, base_motion,
                      Vb, Wb, Wapp, R, binom, q, tau, F, C, S, V, c, Ic, Pib, MA, U, D, L, W):
    """Orders ``0..R`` of forward/hybrid dynamics; returns ``OK`` or the index
    of the body with a singular pivot (0: the base's ``M^A_0``)."""
    N = parent.shape[0]
    _poses(parent, Y, H, F0, q[0], F, C)
    for k in range(R + 2):
        S[k, 0] = 0.0
    for i in range(6):
        V[0, 0, i] = Vb[0, i]
    for j in range(1, N):
        _Ad_into(F[j], Y[j], S[0, j])                                         # SPEC §3: S_j
        _screw_twist_order(j, parent[j], 0, q, binom, S, V)                   # SPEC §3: V_j
    for j in range(N):
        _body_mass_jets(j, 0, mass, com_b, J_b, C, V, binom, c, Ic)           # c^(0,1), I_c^(0)
    status = _articulated_inertia(parent, arm, motion, mass, c, Ic, S, MA, U, D)  # Lemma 2: once
    if status != OK:
        return status
    if not base_motion and not _cholesky6(MA[0], L):                          # factor M^A_0 once
        return 0
    for r in range(R + 1):
        _bias_pass(r, parent, mass, damp, g, motion, binom, Wapp, tau, q, S, V, c, Ic, Pib,
                   MA, U, D, W)
        _recover(r, parent, arm, damp, motion, base_motion, binom, Vb, Wb, L, q, tau, S,
                 V, c, MA, U, D, W)
    return OK


def singular_pivot_error(model, status, where=""):
    """The ``ValueError`` for a kernel status naming body ``status`` (0: base)."""
    if status == 0:
        return ValueError(f"{where}base {model.body_names[0]!r}: articulated inertia M^A_0 is not "
                          f"positive definite at this configuration, so its acceleration is "
                          f"undetermined (a massless or point-mass floating base?)")
    return ValueError(f"{where}joint of body {model.body_names[status]!r} (q column {status - 1}): "
                      f"singular pivot D = Sᵀ M^A S + I_a ≈ 0, the subtree it moves has no "
                      f"inertia about or along the joint axis (e.g. a point mass on a "
                      f"revolute axis); add armature or inertia, or prescribe its motion")


def _solve(model, C0, motion, base_motion, Vb, Wb, Wapp, R, q, tau, workspace):
    """Run the kernel in ``workspace`` (or fresh scratch), raise on a singular pivot.

    ``q`` (R+3, n) holds the state rows 0–1 and the prescribed rows of
    motion-driven joints, zeros elsewhere; ``tau`` (R+1, n) the prescribed rows
    of force-driven joints. Both are completed in place. The passes accumulate
    into rows of ``V`` and ``W`` that must start at zero; every other scratch
    array is written before it is read.
    """
    ws = workspace_for(model, R, workspace)
    ws.V[:] = 0.0
    ws.W[:] = 0.0
    status = _articulated_body(model.body_parent, model.joint_screw, model.body_home,
                               model.body_mass, model.body_com, model.body_rot_inertia,
                               model.joint_armature, model.joint_damping, model.gravity,
                               C0 @ model.home_pose_inv, motion, base_motion, Vb, Wb, Wapp, R,
                               binomials(R + 3), q, tau, ws.F, ws.C, ws.S, ws.V, ws.c, ws.Ic,
                               ws.Pi, ws.MA, ws.U, ws.D, ws.L, ws.W)
    if status != OK:
        raise singular_pivot_error(model, status)
    return ws


@dataclass(frozen=True)
class ForwardDynamicsResult:
    """Output of :func:`forward_dynamics` of order ``r``.

    Attributes
    ----------
    base_twist : (r+2, 6)
        ``V₀, V̇₀, …, V₀^(r+1)`` (zeros for a fixed base).
    q : (r+3, n)
        ``q, q̇, …, q^(r+2)``; with ``base_twist`` it feeds straight back into
        :func:`liedyn.inverse_dynamics`.
    base_wrench : (r+1, 6)
        ``W₀^(k)``: the input for a floating base, the support reaction for a
        fixed one.
    articulated_inertia : (N, 6, 6)
        ``M^A_j`` (world frame), computed once and used at every order.
    body_pose : (N, 4, 4)
        Body poses ``C_j``.
    twist, screw : (r+2, N, 6)
        Jets ``V_j^(k)`` and ``S_j^(k)``.
    wrench : (r+1, N, 6)
        Jets of the wrench ``W_j^(k)`` joint j transmits to its subtree.
    """

    base_twist: np.ndarray
    q: np.ndarray
    base_wrench: np.ndarray
    articulated_inertia: np.ndarray
    body_pose: np.ndarray
    twist: np.ndarray
    screw: np.ndarray
    wrench: np.ndarray


def forward_dynamics(model, base_pose, base_twist, q, qd, base_wrench, tau, order, applied=None,
                     workspace=None):
    """Forward dynamics and its first ``order`` time derivatives (H-GABI-FBS).

    Solves, for ``k = 0..order`` in turn, the ``k``-th time derivative of the
    equations of motion for ``V₀^(k+1)`` and ``q^(k+2)``, given the state and
    the jets of the driving forces.

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Base pose ``C₀`` (``None``: ``model.home_pose``).
    base_twist : (6,) or None
        Spatial base twist ``V₀``; ``None`` for a fixed base.
    q, qd : (n,)
        Joint positions and velocities.
    base_wrench : (order+1, 6) or None
        Spatial wrench jet ``W₀^(0..order)`` the base actuators apply (world
        frame, moment about the world origin). Must be ``None`` for a fixed
        base, whose wrench is the reaction returned in the result.
    tau : (order+1, n)
        Joint force jets ``τ^(0..order)``.
    order : int ≥ 0
        Highest derivative ``r`` of the dynamics.
    applied : (order+1, N, 6), optional
        Spatial external wrench jets acting on each body.
    workspace : Workspace, optional
        Scratch for ``(model, order)``; the result's body quantities are then
        views into it (see :class:`liedyn.Workspace`).

    Returns
    -------
    ForwardDynamicsResult

    Raises
    ------
    ValueError, TypeError
        Wrong shapes, non-finite values, a non-SE(3) pose, a negative order;
        a singular joint pivot ``D_j`` (the message names the body) or a base
        whose articulated inertia is not positive definite.

    Notes
    -----
    Cost O(N · order²). The articulated inertias ``M^A_j`` depend on the
    configuration only (Lemma 2): they are formed once, ``M^A_0`` is
    Cholesky-factored once, and every order reuses them. Armature ``I_a`` adds
    to the pivot ``D_j``; damping ``b`` replaces ``τ^(k)`` by
    ``τ^(k) − b q^(k+1)``. Order 0 is the spatial articulated-body algorithm.
    """
    R = check_order(order)
    C0, V0, q0, qd0 = check_state0(model, base_pose, base_twist, q, qd)
    n = model.n_joints
    tauj = check_jet(tau, "tau", (R + 1, n))
    Wapp = check_applied(model, applied, R + 1)
    Vb = np.zeros((R + 2, 6))
    Vb[0] = V0
    if model.floating_base:
        if base_wrench is None:
            raise ValueError(f"base_wrench: a floating base needs its wrench jet, shape ({R + 1}, 6)")
        Wb = check_jet(base_wrench, "base_wrench", (R + 1, 6))
    else:
        if base_wrench is not None:
            raise ValueError("base_wrench: a fixed base's wrench is the reaction, an output; pass None")
        Wb = np.zeros((R + 1, 6))
    qj = np.zeros((R + 3, n))
    qj[0] = q0
    qj[1] = qd0
    motion = np.zeros(model.n_bodies, dtype=np.bool_)
    base_motion = not model.floating_base
    ws = _solve(model, C0, motion, base_motion, Vb, Wb, Wapp, R, qj, tauj.copy(), workspace)
    return ForwardDynamicsResult(base_twist=ws.V[:, 0].copy(), q=qj, base_wrench=ws.W[:, 0].copy(),
                                 articulated_inertia=ws.MA, body_pose=ws.C, twist=ws.V,
                                 screw=ws.S, wrench=ws.W)
