"""H-GHYB-FBS: hybrid dynamics of any order r (SPEC §6, Algorithm 4).

Joints split into motion-driven ones (``Jq``: the jet ``q^(0..r+2)`` is
given, the force jet ``τ^(0..r)`` is solved for) and force-driven ones (``Jτ``:
``τ^(0..r)`` given, ``q^(2..r+2)`` solved for). The base is either
wrench-driven (``W₀^(0..r)`` given, ``V₀^(1..r+1)`` solved for) or
motion-driven (``V₀^(0..r+1)`` given, ``W₀^(0..r)`` solved for); a fixed base
is a motion-driven base at rest, and its ``W₀`` is the support reaction.

The passes are those of :mod:`liedyn.algorithm.articulated`, here with the
motion-driven branches: a motion-driven child ``c`` is not eliminated, it
passes ``M^A_c`` whole to its parent's articulated inertia and
``W^A_{c,r} + M^A_c (S_c q_c^(r+2) + Vbias_c)`` to its bias; after the
recovery pass ``W_c^(r) = M^A_c V_c^(r+1) + W^A_{c,r}`` and the projection of
§4 (plus ``I_a q^(r+2) + b q^(r+1)``) give ``τ_c^(r)``. With a motion-driven
base ``W₀^(r) = M^A_0 V₀^(r+1) + W^A_{0,r}``. All joints and the base
motion-driven is inverse dynamics; all force-driven with a wrench-driven base
is forward dynamics.

Glossary (``model``, ``ws``: compiled handles)
----------------------------------------------
==============  ==========  ===================================================
``motion``      (N,) bool   body ``j``'s joint is motion-driven (``motion[0]``
                            false)
``base_motion``  bool        the base is motion-driven (always, if fixed)
``Vb``          (r+2, 6)    base twist jet (world origin); rows ≥ 1 read only
                            for a motion-driven base; empty for a fixed base
``q_in``        (r+3, n)    joint jet; rows ≥ 2 read only for ``Jq``
``tau_in``      (r+1, n)    joint force jets, read only for ``Jτ``
==============  ==========  ===================================================
"""

import numpy as np

from .._checks import (_EMPTY_TWIST, _NO_APPLIED, BAD_Q, BAD_TAU, BAD_TWIST, NOT_FINITE, OK,
                       _all_finite, about_base, applied_arg, as_array, check_applied_slow,
                       check_jet, check_motion, check_pose, check_type, is_motion_jet, plain,
                       plain_applied, raise_for)
from .._jit import Kernel, njit
from .articulated import articulated_body
from .forward import _EMPTY_WRENCH, base_outputs, base_wrench_arg, check_base_applied
from ..multibody.model import check_model_order
from ..multibody.results import HybridDynamicsResult
from ..multibody.workspace import holder, workspace_for


@njit(inline=True)
def _known_finite(x, motion, rows_from, want_motion):
    """Rows ``rows_from..`` of ``x`` finite in the columns whose joint is (or,
    with ``want_motion`` false, is not) motion-driven."""
    for k in range(rows_from, x.shape[0]):
        for i in range(x.shape[1]):
            if motion[i + 1] == want_motion and not np.isfinite(x[k, i]):
                return False
    return True


@njit
def hybrid_dynamics_kernel(model, ws, C0, about_base, Vb, q_in, tau_in, Wb, W_app, r, motion,
                           base_motion):
    """Orders ``0..r`` (SPEC §6) into the workspace's outputs; returns a status."""
    q, tau = ws.q, ws.tau
    n = model.body_parent.shape[0] - 1
    floating = model.floating_base
    V0 = Vb[:1] if floating else Vb[:0]
    status = check_motion(model, C0, V0, q_in[:2], 1, 2)
    if status != OK:
        return status
    if floating and not (Vb.shape[0] >= r + 2 and Vb.shape[1] == 6
                         and (not base_motion or is_motion_jet(Vb, r + 2, 6))):
        return BAD_TWIST
    if q_in.shape[0] < r + 3:
        return BAD_Q
    Vb = Vb[:r + 2]                                # rows past those read are ignored
    q_in = q_in[:r + 3]
    if not _known_finite(q_in, motion, 2, True):
        return BAD_Q
    if tau_in.shape[0] != r + 1 or tau_in.shape[1] != n or not _known_finite(tau_in, motion, 0,
                                                                            False):
        return BAD_TAU
    status = check_base_applied(model, Wb, W_app, r, not base_motion)
    if status != OK:
        return status
    for k in range(r + 3):
        for i in range(n):
            q[k, i] = q_in[k, i] if k < 2 or motion[i + 1] else 0.0
    for k in range(r + 1):
        for i in range(n):
            tau[k, i] = 0.0 if motion[i + 1] else tau_in[k, i]
    prescribed = Vb if floating else Vb[:0]
    status = articulated_body(model, ws, C0, about_base, V0, prescribed, Wb, W_app, r, q, tau,
                              motion, base_motion)
    if status != OK:
        return status
    base_outputs(ws, prescribed if base_motion else V0, Wb, r, base_motion)
    if not (_all_finite(ws.base_twist.reshape(-1)) and _all_finite(q.reshape(-1))
            and _all_finite(ws.base_wrench.reshape(-1)) and _all_finite(tau.reshape(-1))):
        return NOT_FINITE
    return OK


_HYBRID_DYNAMICS = Kernel(hybrid_dynamics_kernel)


def joint_mask(model, motion_driven, name="motion_driven"):
    """Boolean ``(n,)`` mask from a boolean mask, or from a sequence of joint
    columns (ints) or joint names (str)."""
    n = model.n_joints
    if motion_driven is None or isinstance(motion_driven, (str, bytes)):
        raise TypeError(f"{name}: expected a boolean mask of shape ({n},) or a sequence of joint "
                        f"columns or names, got {motion_driven!r}")
    a = np.asarray(motion_driven, dtype=object if len(np.shape(motion_driven)) != 1 else None)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D mask or sequence, got shape {a.shape}")
    if a.dtype == np.bool_:
        if a.shape != (n,):
            raise ValueError(f"{name}: a boolean mask must have shape ({n},), got {a.shape}")
        return a.copy()
    if a.size == 0:
        return np.zeros(n, dtype=np.bool_)
    if a.dtype.kind in "US":
        cols = [model._lookup("joint", str(x), name) for x in a]
    elif a.dtype.kind in "iu":
        if a.size == n and set(a.tolist()) <= {0, 1} and n > 1:
            raise TypeError(f"{name}: ambiguous integers {a.tolist()}: a mask must have dtype "
                            f"bool; joint columns are listed once each")
        cols = a.tolist()
        bad = [c for c in cols if not 0 <= c < n]
        if bad:
            raise ValueError(f"{name}: joint columns must lie in [0, {n}), got {bad}")
    else:
        raise TypeError(f"{name}: expected a boolean mask or joint columns (int) or names (str), "
                        f"got dtype {a.dtype}")
    if len(set(cols)) != len(cols):
        raise ValueError(f"{name}: each joint may be listed once, got {a.tolist()}")
    mask = np.zeros(n, dtype=np.bool_)
    mask[cols] = True
    return mask


def _partial(x, name, shape, unknown, prefix=False):
    """A jet of ``shape`` whose ``unknown`` entries (a boolean index of the
    same shape) are ignored: they may hold anything, NaN included. A motion
    jet (``prefix``) may have more rows, which are not read; the first
    ``shape[0]`` are returned."""
    a = as_array(x, name, allow_nonfinite=True)
    if prefix and a.ndim == 2 and a.shape[0] > shape[0]:
        a = a[:shape[0]]
    if a.shape != tuple(shape):
        rows = ", ".join(str(s) for s in shape)
        more = " or more rows" if prefix else ""
        raise ValueError(f"{name}: expected a jet of shape ({rows}){more} "
                         f"(row k = k-th time derivative), got {a.shape}")
    if not np.all(np.isfinite(a[~unknown])):
        raise ValueError(f"{name}: contains NaN or infinite values where they are read")
    return a


def hybrid_dynamics(model, base_pose, base_twist, q, order, *, motion_driven, tau=None,
                    base_wrench=None, base_motion_driven=None, applied=None, workspace=None,
                    reference="world"):
    """Hybrid dynamics and its first ``order`` time derivatives (H-GHYB-FBS).

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Base pose ``C₀`` (``None``: ``model.home_pose``).
    base_twist : (order+2, 6) or None (more rows: the first order+2 are read)
        Base twist jet ``V₀^(0..order+1)``: every row is read for a
        motion-driven floating base, only row 0 (the state) for a
        wrench-driven one (the others may hold anything, NaN included).
        ``None`` for a fixed base.
    q : (order+3, n) (more rows: the first order+3 are read)
        Joint jet. Rows 0 and 1 (``q``, ``q̇``) are the state of every joint;
        rows ``2..order+2`` are read only in the columns of motion-driven
        joints.
    order : int ≥ 0
        Highest derivative ``r`` of the dynamics.
    motion_driven : (n,) bool, or a sequence of joint columns or names, keyword
        The joints whose motion is prescribed.
    tau : (order+1, n), optional, keyword
        Joint force jets, read only in the columns of force-driven joints.
        Required unless every joint is motion-driven.
    base_wrench : (order+1, 6), optional, keyword
        Spatial wrench jet applied by the base actuators; required for a
        wrench-driven base and refused for a motion-driven one.
    base_motion_driven : bool, optional, keyword
        Default: ``True`` for a fixed base (which must be motion-driven: it
        is at rest), ``False`` for a floating base.
    applied, workspace, reference : keyword
        As :func:`liedyn.inverse_dynamics`.

    Returns
    -------
    HybridDynamicsResult
        Every jet, with the unknown ones filled in.

    Raises
    ------
    ValueError, TypeError
        Wrong shapes or types, non-finite values in a used entry,
        inconsistent base arguments; a singular pivot ``D_j`` of a
        force-driven joint (the message names the body) or a wrench-driven
        base whose articulated inertia is not positive definite.

    Notes
    -----
    Cost O(N · order²). With every joint motion-driven and a motion-driven
    base this is :func:`liedyn.inverse_dynamics`; with every joint
    force-driven and a wrench-driven base it is :func:`liedyn.forward_dynamics`.
    """
    r = check_model_order(model, order)
    base = about_base(reference)
    mask = joint_mask(model, motion_driven)
    if base_motion_driven is None:
        base_motion = not model.floating_base
    else:
        base_motion = bool(check_type(base_motion_driven, (bool, np.bool_), "base_motion_driven",
                                      "bool"))
    if not model.floating_base and not base_motion:
        raise ValueError("base_motion_driven: a fixed base is motion-driven (at rest); "
                         "its wrench is the reaction, an output")
    given = (model, base_pose, base_twist, q, tau, base_wrench, applied, r, mask, base_motion)
    args = _plain_args(*given)
    plain_path = args is not None
    if not plain_path:
        args = _checked_args(*given)
    C0, Vb, qj, tauj, Wb, Wa = args
    try:
        ws = workspace_for(model, r, workspace)
    except (TypeError, ValueError):
        if plain_path:
            _checked_args(*given)            # the arguments' errors come before the workspace's
        raise
    motion = np.concatenate([[False], mask])
    status, call = ws._serve(_HYBRID_DYNAMICS, model, C0, base, Vb, qj, tauj, Wb, Wa, r, motion,
                             base_motion)
    if status != OK:
        raise_for(status, model, lambda: _recheck(*given))
    return HybridDynamicsResult(holder(ws), call, ws.base_twist.copy(), ws.q.copy(),
                                ws.base_wrench.copy(), ws.tau.copy(), mask, base_motion)


def _plain_args(model, base_pose, base_twist, q, tau, base_wrench, applied, r, mask, base_motion):
    """``(C0, Vb, q, tau, base_wrench, applied)`` for the kernel, without
    conversions: the arguments themselves when each is a plain array (the
    kernel checks shapes and the entries it reads) or a ``None`` the kernel
    takes as a fixed array (home pose, no twist for a fixed base, zero force
    jets when every joint is motion-driven, no base wrench for a
    motion-driven base, no applied wrenches); ``None`` when any argument
    needs :func:`_checked_args`."""
    C0 = model.home_pose if base_pose is None else base_pose
    if model.floating_base:
        Vb = base_twist
    elif base_twist is None:
        Vb = _EMPTY_TWIST
    else:
        return None                          # a fixed base's twist must be checked to be zero
    if tau is None:
        if not mask.all():
            return None
        tau = np.zeros((r + 1, model.n_joints))
    if base_motion:
        if base_wrench is not None:
            return None
        base_wrench = _EMPTY_WRENCH
    if (plain(C0, 2) and plain(Vb, 2) and plain(q, 2) and plain(tau, 2) and plain(base_wrench, 2)
            and (applied is None or plain_applied(applied))):
        return C0, Vb, q, tau, base_wrench, _NO_APPLIED if applied is None else applied
    return None


def _checked_args(model, base_pose, base_twist, q, tau, base_wrench, applied, r, mask,
                  base_motion):
    """The kernel arguments of :func:`_plain_args`, converted and checked in
    Python with messages, in the order the errors are reported; the checks
    left to the kernel (the base pose is rigid, a float64 base wrench or
    applied wrench array has the right shape and finite entries) are in
    :func:`_recheck`."""
    n = model.n_joints
    C0 = model.home_pose if base_pose is None else as_array(base_pose, "base_pose", ndim=2)
    if model.floating_base:
        if base_twist is None:
            raise ValueError(f"base_twist: a floating base needs its twist jet, shape ({r + 2}, 6)")
        unknown = np.zeros((r + 2, 6), dtype=bool)
        unknown[1:] = not base_motion
        Vb = _partial(base_twist, "base_twist", (r + 2, 6), unknown, prefix=True)
    else:
        Vb = _EMPTY_TWIST
        if base_twist is not None:
            Z = _partial(base_twist, "base_twist", (r + 2, 6), np.zeros((r + 2, 6), bool),
                         prefix=True)
            if np.any(Z):
                raise ValueError("base_twist: a fixed base does not move; pass None (or zeros)")
    unknown_q = np.zeros((r + 3, n), dtype=bool)
    unknown_q[2:] = ~mask
    qj = _partial(q, "q", (r + 3, n), unknown_q, prefix=True)
    if tau is None:
        if not np.all(mask):
            raise ValueError(f"tau: force-driven joints {np.flatnonzero(~mask).tolist()} "
                             f"need their force jets, shape ({r + 1}, {n})")
        tauj = np.zeros((r + 1, n))
    else:
        tauj = _partial(tau, "tau", (r + 1, n), np.broadcast_to(mask, (r + 1, n)))
    Wb = base_wrench_arg(model, base_wrench, r + 1, not base_motion)
    Wa = applied_arg(model, applied, r + 1)
    return C0, Vb, qj, tauj, Wb, Wa


def _recheck(model, base_pose, base_twist, q, tau, base_wrench, applied, r, mask, base_motion):
    """Every check of a hybrid call, in Python with messages (for a call the
    kernel refused)."""
    Wb = _checked_args(model, base_pose, base_twist, q, tau, base_wrench, applied, r, mask,
                       base_motion)[4]
    if base_pose is not None:
        check_pose(base_pose, "base_pose")
    if not base_motion:
        check_jet(Wb, "base_wrench", (r + 1, 6))
    check_applied_slow(model, applied, r + 1)
