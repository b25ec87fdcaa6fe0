"""H-GHYB-FBS: hybrid dynamics of any order r (SPEC §6, Algorithm 4).

Joints split into motion-driven ones (``Jq``: the jet ``q^(0..r+2)`` is
given, the force jet ``τ^(0..r)`` is solved for) and force-driven ones (``Jτ``:
``τ^(0..r)`` given, ``q^(2..r+2)`` solved for). The base is either
wrench-driven (``W₀^(0..r)`` given, ``V₀^(1..r+1)`` solved for) or
motion-driven (``V₀^(0..r+1)`` given, ``W₀^(0..r)`` solved for); a fixed base
is a motion-driven base at rest, and its ``W₀`` is the support reaction.

The recursion is the one of :mod:`liedyn.forward` (one compiled kernel for
both): a motion-driven child ``c`` is not eliminated, it passes ``M^A_c`` whole
to its parent's articulated inertia and ``W^A_{c,r} + M^A_c (S_c q_c^(r+2) +
Vbias_c)`` to its bias; after the recovery pass ``W_c^(r) = M^A_c V_c^(r+1) +
W^A_{c,r}`` and the projection of §4 (plus ``I_a q^(r+2) + b q^(r+1)``) give
``τ_c^(r)``. With a motion-driven base ``W₀^(r) = M^A_0 V₀^(r+1) + W^A_{0,r}``.
All joints and the base motion-driven is inverse dynamics; all force-driven
with a wrench-driven base is forward dynamics.
"""

from dataclasses import dataclass

import numpy as np

from ._validate import check_order
from .forward import _solve
from .workspace import check_applied, check_jet, check_state0


def _joint_mask(motion_driven, n):
    """Boolean ``(n,)`` mask from a mask or a sequence of joint columns."""
    if motion_driven is None:
        raise TypeError("motion_driven: expected a boolean mask of shape (n,) or a sequence "
                        "of joint columns, got None")
    a = np.asarray(motion_driven)
    if a.dtype == np.bool_:
        if a.shape != (n,):
            raise ValueError(f"motion_driven: a boolean mask must have shape ({n},), got {a.shape}")
        return a.copy()
    if a.size == 0:
        return np.zeros(n, dtype=np.bool_)
    if a.ndim != 1 or not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"motion_driven: expected a boolean mask of shape ({n},) or a 1-D "
                        f"sequence of joint columns (ints), got dtype {a.dtype}, shape {a.shape}")
    if np.any(a < 0) or np.any(a >= n):
        raise ValueError(f"motion_driven: joint columns must lie in [0, {n}), got {a.tolist()}")
    mask = np.zeros(n, dtype=np.bool_)
    mask[a] = True
    return mask


def _partial_jet(x, name, shape, unused):
    """A jet of ``shape`` whose entries at ``unused`` (a boolean index of the
    same shape) are ignored: they may hold anything, NaN included, and are
    returned as zero."""
    if x is not None:
        try:
            a = np.array(x, dtype=np.float64)
        except (TypeError, ValueError):
            a = None
        if a is not None and a.shape == tuple(shape):
            a[unused] = 0.0
            x = a
    return check_jet(x, name, shape)


@dataclass(frozen=True)
class HybridDynamicsResult:
    """Output of :func:`hybrid_dynamics` of order ``r``: every motion and force
    jet, given or solved for.

    Attributes
    ----------
    base_twist : (r+2, 6)
        ``V₀^(0..r+1)`` (the input for a motion-driven base; zeros for a fixed one).
    base_wrench : (r+1, 6)
        ``W₀^(0..r)`` (the input for a wrench-driven base; the required base
        wrench, or a fixed base's reaction, for a motion-driven one).
    q : (r+3, n)
        ``q^(0..r+2)`` of every joint.
    tau : (r+1, n)
        ``τ^(0..r)`` of every joint.
    motion_driven : (n,) bool
        Which joints had their motion prescribed.
    base_motion_driven : bool
    articulated_inertia : (N, 6, 6)
        ``M^A_j`` of this split (motion-driven children are not eliminated).
    body_pose : (N, 4, 4)
    twist, screw : (r+2, N, 6)
        Jets ``V_j^(k)`` and ``S_j^(k)``.
    wrench : (r+1, N, 6)
        Jets ``W_j^(k)`` transmitted by joint j to its subtree.
    """

    base_twist: np.ndarray
    base_wrench: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    motion_driven: np.ndarray
    base_motion_driven: bool
    articulated_inertia: np.ndarray
    body_pose: np.ndarray
    twist: np.ndarray
    screw: np.ndarray
    wrench: np.ndarray


def hybrid_dynamics(model, base_pose, base_twist, q, order, motion_driven, tau=None,
                    base_wrench=None, applied=None, base_motion_driven=None, workspace=None):
    """Hybrid dynamics and its first ``order`` time derivatives (H-GHYB-FBS).

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Base pose ``C₀`` (``None``: ``model.home_pose``).
    base_twist : (order+2, 6), (6,) or None
        Motion-driven floating base: its twist jet ``V₀^(0..order+1)``.
        Wrench-driven base: its twist ``V₀`` only. Fixed base: ``None``.
    q : (order+3, n)
        Joint jet. Rows 0 and 1 (``q``, ``q̇``) are the state of every joint;
        rows ``2..order+2`` are read only in the columns of motion-driven
        joints (the other entries are ignored and may be NaN).
    order : int ≥ 0
        Highest derivative ``r`` of the dynamics.
    motion_driven : (n,) bool, or sequence of int
        Mask of the joints whose motion is prescribed, or their columns.
    tau : (order+1, n), optional
        Joint force jets, read only in the columns of force-driven joints
        (others ignored, may be NaN). Required unless every joint is
        motion-driven.
    base_wrench : (order+1, 6), optional
        Spatial wrench jet applied by the base actuators; required for a
        wrench-driven base and rejected for a motion-driven one.
    applied : (order+1, N, 6), optional
        Spatial external wrench jets acting on each body.
    base_motion_driven : bool, optional
        Default: ``True`` for a fixed base (which must be motion-driven: it
        is at rest), ``False`` for a floating base.
    workspace : Workspace, optional
        Scratch for ``(model, order)``; the result's body quantities are then
        views into it (see :class:`liedyn.Workspace`).

    Returns
    -------
    HybridDynamicsResult
        All jets, with the unknown ones filled in.

    Raises
    ------
    ValueError, TypeError
        Wrong shapes, non-finite values in a used entry, inconsistent base
        arguments; a singular pivot ``D_j`` of a force-driven joint (the
        message names the body) or a wrench-driven base whose articulated
        inertia is not positive definite.

    Notes
    -----
    Cost O(N · order²). With every joint motion-driven and a motion-driven
    base this is :func:`liedyn.inverse_dynamics`; with every joint
    force-driven and a wrench-driven base it is :func:`liedyn.forward_dynamics`
    (the same compiled recursion runs in both cases).
    """
    R = check_order(order)
    model.require_bodies()
    n = model.n_joints
    motion = _joint_mask(motion_driven, n)
    if base_motion_driven is None:
        base_motion_driven = not model.floating_base
    if not isinstance(base_motion_driven, (bool, np.bool_)):
        raise TypeError(f"base_motion_driven: expected bool, got {type(base_motion_driven).__name__}")
    base_motion = bool(base_motion_driven)
    if not model.floating_base and not base_motion:
        raise ValueError("base_motion_driven: a fixed base is motion-driven (at rest); "
                         "its wrench is the reaction, an output")

    Vb = np.zeros((R + 2, 6))
    if base_motion and model.floating_base:
        if base_twist is None:
            raise ValueError(f"base_twist: a motion-driven floating base needs its twist jet, "
                             f"shape ({R + 2}, 6)")
        Vb[:] = check_jet(base_twist, "base_twist", (R + 2, 6))
        V0 = Vb[0]
    else:
        V0 = base_twist
    unused_q = np.zeros((R + 3, n), dtype=np.bool_)
    unused_q[2:] = ~motion
    qj = _partial_jet(q, "q", (R + 3, n), unused_q)
    C0, V0, _, _ = check_state0(model, base_pose, V0, qj[0], qj[1])
    Vb[0] = V0

    if base_motion:
        if base_wrench is not None:
            raise ValueError("base_wrench: the base is motion-driven, so its wrench is an "
                             "output; pass None (or base_motion_driven=False)")
        Wb = np.zeros((R + 1, 6))
    else:
        if base_wrench is None:
            raise ValueError(f"base_wrench: a wrench-driven base needs its wrench jet, "
                             f"shape ({R + 1}, 6)")
        Wb = check_jet(base_wrench, "base_wrench", (R + 1, 6))
    if tau is None:
        if not np.all(motion):
            raise ValueError(f"tau: force-driven joints {np.flatnonzero(~motion).tolist()} "
                             f"need their force jets, shape ({R + 1}, {n})")
        tauj = np.zeros((R + 1, n))
    else:
        tauj = _partial_jet(tau, "tau", (R + 1, n), np.broadcast_to(motion, (R + 1, n)))
    Wapp = check_applied(model, applied, R + 1)

    body_motion = np.concatenate([[False], motion])
    ws = _solve(model, C0, body_motion, base_motion, Vb, Wb, Wapp, R, qj, tauj, workspace)
    return HybridDynamicsResult(base_twist=ws.V[:, 0].copy(), base_wrench=ws.W[:, 0].copy(),
                                q=qj, tau=tauj, motion_driven=motion,
                                base_motion_driven=base_motion, articulated_inertia=ws.MA,
                                body_pose=ws.C, twist=ws.V, screw=ws.S, wrench=ws.W)
