"""Whole trajectories in one call: a leading batch axis on every input.

``inverse_dynamics_batch`` and ``forward_dynamics_batch`` evaluate H-GRNE-FBS
and H-GABI-FBS at ``B`` independent samples (for example the 3000 samples of
a trajectory), splitting the samples into one contiguous block per core. Each
block allocates its scratch once and then runs the same compiled kernel as
:func:`liedyn.inverse_dynamics` / :func:`liedyn.forward_dynamics` on every
sample of the block.
"""

from dataclasses import dataclass

import numpy as np

from ._jit import get_num_threads, njit, prange
from ._validate import as_array, check_order, require_rigid
from .forward import OK, _articulated_body, singular_pivot_error
from .inverse import _inverse_dynamics
from .workspace import binomials


@njit
def _scratch(N, R):
    """One block's scratch, the fields of :class:`liedyn.Workspace` for order R."""
    return (np.empty((N, 4, 4)), np.empty((N, 4, 4)), np.empty((R + 2, N, 6)),
            np.empty((R + 2, N, 6)), np.empty((R + 3, N, 3)), np.empty((R + 2, N, 3, 3)),
            np.empty((R + 2, N, 6)), np.empty((R + 1, N, 6)), np.empty((N, 6, 6)),
            np.empty((N, 6)), np.empty(N), np.empty((6, 6)))


@njit(parallel=True)
def _inverse_dynamics_batch(parent, Y, H, mass, com_b, J_b, arm, damp, g, F0, Vb, q, Wapp, r,
                            binom, n_blocks, W0, tau):
    B = F0.shape[0]
    N = parent.shape[0]
    n = N - 1
    for blk in prange(n_blocks):
        F, C, S, V, c, Ic, Pi, W, _, _, _, _ = _scratch(N, r)
        t = np.empty((r + 1, n))
        for b in range(blk * B // n_blocks, (blk + 1) * B // n_blocks):
            Wa = Wapp[b] if Wapp.shape[0] > 1 else Wapp[0]
            _inverse_dynamics(parent, Y, H, mass, com_b, J_b, arm, damp, g, F0[b], Vb[b], q[b],
                              Wa, r, binom, F, C, S, V, c, Ic, Pi, W, t)
            for k in range(r + 1):
                for i in range(6):
                    W0[b, k, i] = W[k, 0, i]
                for i in range(n):
                    tau[b, k, i] = t[k, i]


@dataclass(frozen=True)
class InverseDynamicsBatchResult:
    """Output of :func:`inverse_dynamics_batch`.

    Attributes
    ----------
    base_wrench : (B, order+1, 6)
        ``W₀^(k)`` per sample (world frame).
    tau : (B, order+1, n)
        Joint force jets per sample.
    """

    base_wrench: np.ndarray
    tau: np.ndarray


def _batch(x, name, tail, B=None):
    """``x`` of shape ``(B, *tail)``; with ``B`` given, exactly ``B`` samples."""
    a = as_array(x, name)
    if a.ndim != len(tail) + 1 or a.shape[1:] != tuple(tail):
        want = ", ".join(["B"] + [str(t) for t in tail])
        raise ValueError(f"{name}: expected shape ({want}), got {a.shape}")
    if B is not None and a.shape[0] != B:
        raise ValueError(f"{name}: expected {B} samples (the batch size of q), got {a.shape[0]}")
    return np.ascontiguousarray(a)


def _batch_frames_applied(model, base_pose, applied, rows, B):
    """``F₀ = C₀ H₀⁻¹`` per sample and the applied wrench jets (one shared
    zero block when there are none)."""
    F0 = np.ascontiguousarray(_batch_poses(base_pose, B, model) @ model.home_pose_inv)
    if applied is None:
        return F0, np.zeros((1, rows, model.n_bodies, 6))
    return F0, _batch(applied, "applied", (rows, model.n_bodies, 6), B)


def _batch_poses(base_pose, B, model):
    if base_pose is None:
        return np.broadcast_to(model.home_pose, (B, 4, 4))
    C0 = _batch(base_pose, "base_pose", (4, 4), B)
    for b in range(B):
        require_rigid(C0[b], f"base_pose[{b}]")
    return C0


def inverse_dynamics_batch(model, base_pose, base_twist, q, order, applied=None):
    """:func:`liedyn.inverse_dynamics` for ``B`` samples at once, on all cores.

    Parameters
    ----------
    base_pose : (B, 4, 4) or None
        Base poses (``None``: the home pose for every sample).
    base_twist : (B, order+2, 6) or None
        Base twist jets; ``None`` for a fixed base.
    q : (B, order+3, n)
        Joint jets.
    order : int ≥ 0
    applied : (B, order+1, N, 6), optional

    Returns
    -------
    InverseDynamicsBatchResult
    """
    r = check_order(order)
    model.require_bodies()
    n = model.n_joints
    qj = _batch(q, "q", (r + 3, n))
    B = qj.shape[0]
    if model.floating_base:
        if base_twist is None:
            raise ValueError(f"base_twist: a floating base needs twist jets, shape (B, {r + 2}, 6)")
        Vb = _batch(base_twist, "base_twist", (r + 2, 6), B)
    else:
        if base_twist is not None:
            raise ValueError("base_twist: a fixed base does not move; pass None")
        Vb = np.zeros((B, r + 2, 6))
    F0, Wapp = _batch_frames_applied(model, base_pose, applied, r + 1, B)
    W0 = np.empty((B, r + 1, 6))
    tau = np.empty((B, r + 1, n))
    n_blocks = max(1, min(B, get_num_threads()))
    _inverse_dynamics_batch(model.body_parent, model.joint_screw, model.body_home, model.body_mass,
                            model.body_com, model.body_rot_inertia, model.joint_armature,
                            model.joint_damping, model.gravity, F0, Vb, qj, Wapp, r,
                            binomials(r + 3), n_blocks, W0, tau)
    return InverseDynamicsBatchResult(base_wrench=W0, tau=tau)


@njit(parallel=True)
def _forward_dynamics_batch(parent, Y, H, mass, com_b, J_b, arm, damp, g, F0, base_motion, Vb,
                            Wb, Wapp, R, binom, n_blocks, q, tau, status):
    B = F0.shape[0]
    N = parent.shape[0]
    motion = np.zeros(N, dtype=np.bool_)
    for blk in prange(n_blocks):
        F, C, S, V, c, Ic, Pib, W, MA, U, D, L = _scratch(N, R)
        for b in range(blk * B // n_blocks, (blk + 1) * B // n_blocks):
            V[:] = 0.0
            W[:] = 0.0
            Wa = Wapp[b] if Wapp.shape[0] > 1 else Wapp[0]
            status[b] = _articulated_body(parent, Y, H, mass, com_b, J_b, arm, damp, g, F0[b],
                                          motion, base_motion, Vb[b], Wb[b], Wa, R, binom,
                                          q[b], tau[b], F, C, S, V, c, Ic, Pib, MA, U, D, L, W)
            for k in range(R + 2):
                for i in range(6):
                    Vb[b, k, i] = V[k, 0, i]


@dataclass(frozen=True)
class ForwardDynamicsBatchResult:
    """Output of :func:`forward_dynamics_batch`.

    Attributes
    ----------
    base_twist : (B, order+2, 6)
        ``V₀^(0..order+1)`` per sample (zeros for a fixed base).
    q : (B, order+3, n)
        ``q^(0..order+2)`` per sample.
    """

    base_twist: np.ndarray
    q: np.ndarray


def forward_dynamics_batch(model, base_pose, base_twist, q, qd, base_wrench, tau, order,
                           applied=None):
    """:func:`liedyn.forward_dynamics` for ``B`` samples at once, on all cores.

    Parameters
    ----------
    base_pose : (B, 4, 4) or None
    base_twist : (B, 6) or None
        ``None`` for a fixed base.
    q, qd : (B, n)
    base_wrench : (B, order+1, 6) or None
        ``None`` for a fixed base.
    tau : (B, order+1, n)
    order : int ≥ 0
    applied : (B, order+1, N, 6), optional

    Returns
    -------
    ForwardDynamicsBatchResult

    Raises
    ------
    ValueError
        As :func:`liedyn.forward_dynamics`; a singular pivot names the sample.
    """
    R = check_order(order)
    model.require_bodies()
    n = model.n_joints
    q0 = _batch(q, "q", (n,))
    B = q0.shape[0]
    qd0 = _batch(qd, "qd", (n,), B)
    tauj = _batch(tau, "tau", (R + 1, n), B)
    if model.floating_base:
        if base_twist is None or base_wrench is None:
            raise ValueError("base_twist, base_wrench: a floating base needs both, "
                             f"shapes (B, 6) and (B, {R + 1}, 6)")
        V0 = _batch(base_twist, "base_twist", (6,), B)
        Wb = _batch(base_wrench, "base_wrench", (R + 1, 6), B)
        Vb = np.zeros((B, R + 2, 6))
        Vb[:, 0] = V0
    else:
        if base_twist is not None or base_wrench is not None:
            raise ValueError("base_twist, base_wrench: a fixed base takes neither; pass None")
        Vb = np.zeros((B, R + 2, 6))
        Wb = np.zeros((B, R + 1, 6))
    F0, Wapp = _batch_frames_applied(model, base_pose, applied, R + 1, B)
    qj = np.zeros((B, R + 3, n))
    qj[:, 0] = q0
    qj[:, 1] = qd0
    status = np.empty(B, dtype=np.int64)
    n_blocks = max(1, min(B, get_num_threads()))
    _forward_dynamics_batch(model.body_parent, model.joint_screw, model.body_home,
                            model.body_mass, model.body_com, model.body_rot_inertia,
                            model.joint_armature, model.joint_damping, model.gravity, F0,
                            not model.floating_base, Vb, Wb, Wapp, R, binomials(R + 3), n_blocks,
                            qj, tauj.copy(), status)
    bad = np.flatnonzero(status != OK)
    if bad.size:
        raise singular_pivot_error(model, int(status[bad[0]]), f"sample {bad[0]}: ")
    return ForwardDynamicsBatchResult(base_twist=Vb, q=qj)
