"""H-GABI-FBS: forward dynamics of any order r (SPEC §5, Algorithm 3).

The passes are those of :mod:`liedyn.algorithm.articulated` with every joint
force-driven (``motion=None``); a fixed base is a motion-driven base at rest,
whose wrench jet is the support reaction.

Glossary (``model``, ``ws``: compiled handles)
----------------------------------------------
==========  ===========  ======================================================
``V0``      (1, 6)       the base twist ``V₀`` (world origin), or empty (fixed)
``q0``      (2, n)       the state ``q``, ``q̇``
``tau_in``  (r+1, n)     joint force jets ``τ^(0..r)``
``Wb``      (r+1, 6)     base wrench jet ``W₀^(0..r)`` (floating), or empty
``ws.base_twist``   (r+2, 6)  output: ``V₀^(0..r+1)`` (world origin)
``ws.q``            (r+3, n)  output: ``q^(0..r+2)``
``ws.base_wrench``  (r+1, 6)  output: ``W₀^(0..r)`` (the input, or the reaction)
``ws.tau``          (r+1, n)  output: a copy of ``tau_in``
==========  ===========  ======================================================
"""

import numpy as np

from .._checks import (MAX_ORDER, _NO_APPLIED, BAD_APPLIED, BAD_TAU, BAD_WRENCH, NOT_FINITE, OK,
                       _all_finite, about_base, applied_arg, plain, check_applied_slow, check_jet,
                       check_motion, check_motion_slow, force_arg, is_applied, is_jet, motion_args,
                       raise_for)
from .._jit import Kernel, njit
from .articulated import articulated_body
from ..multibody.model import Model, check_model_order
from ..multibody.results import ForwardDynamicsResult
from ..spatial.se3 import _unshift_twist, _unshift_wrench
from ..multibody.workspace import pooled, workspace_for


@njit(inline=True)
def check_base_applied(model, Wb, W_app, r, base_wrench_driven):
    """Status of the base wrench and applied wrench arguments of forward and
    hybrid dynamics."""
    N = model.body_parent.shape[0]
    if base_wrench_driven:
        if not is_jet(Wb, r + 1, 6):
            return BAD_WRENCH
    elif Wb.shape[0] != 0:
        return BAD_WRENCH
    if not is_applied(W_app, r + 1, N):
        return BAD_APPLIED
    return OK


@njit(inline=True)
def base_outputs(ws, V_in, Wb, r, base_motion):
    """The base jets about the reference point: the given ones copied, the
    solved ones mapped back from ``o`` (SPEC §1)."""
    d, V_out, W0 = ws.d, ws.base_twist, ws.base_wrench
    for k in range(r + 2):
        if k < V_in.shape[0]:
            V_out[k] = V_in[k]
        else:
            _unshift_twist(ws.V[k, 0], d, V_out[k])
    for k in range(r + 1):
        if base_motion:
            _unshift_wrench(ws.W[k, 0], d, W0[k])
        else:
            W0[k] = Wb[k]


@njit(inline=True)
def check_forward_args(model, C0, V0, q0, tau_in, Wb, W_app, r):
    """Status of the arguments of a forward-dynamics kernel (state, force and
    applied wrench jets)."""
    status = check_motion(model, C0, V0, q0, 1, 2)
    if status == OK and not is_jet(tau_in, r + 1, q0.shape[1]):
        status = BAD_TAU
    if status == OK:
        status = check_base_applied(model, Wb, W_app, r, model.floating_base)
    return status


def raise_forward_args(status, model, base_pose, base_twist, q, tau, Wb, applied, r):
    """The error of a failed forward-dynamics kernel (:func:`check_forward_args`'s
    status, or the dynamics'): the arguments checked again by the slow checks,
    which name the one that is wrong, else the status's own message."""
    raise_for(status, model, lambda: (
        check_motion_slow(model, base_pose, base_twist, q, 1, 2),
        check_jet(tau, "tau", (r + 1, model.n_joints)),
        check_jet(Wb, "base_wrench", (r + 1, 6)) if model.floating_base else None,
        check_applied_slow(model, applied, r + 1)))


@njit(inline=True)
def load_state(ws, q0, tau_in):
    """The state ``q, q̇`` and the joint force jets into the workspace's
    outputs; the rows to be solved for are zeroed."""
    q = ws.q
    q[:2] = q0[:2]
    q[2:] = 0.0
    ws.tau[:] = tau_in


@njit
def forward_dynamics_kernel(model, ws, C0, about_base, V0, q0, tau_in, Wb, W_app, r):
    """Orders ``0..r`` (SPEC §5) into the workspace's outputs; returns a status."""
    q, tau = ws.q, ws.tau
    status = check_forward_args(model, C0, V0, q0, tau_in, Wb, W_app, r)
    if status != OK:
        return status
    V0 = V0[:1]                                    # the state: rows past it are not read
    load_state(ws, q0, tau_in)
    fixed = not model.floating_base
    Vb = V0[:0]                                    # a fixed base is at rest: no prescribed rows
    status = articulated_body(model, ws, C0, about_base, V0, Vb, Wb, W_app, r, q, tau, None,
                              fixed)
    if status != OK:
        return status
    base_outputs(ws, V0 if model.floating_base else Vb, Wb, r, fixed)
    if not (_all_finite(ws.base_twist.reshape(-1)) and _all_finite(q.reshape(-1))
            and _all_finite(ws.base_wrench.reshape(-1))):
        return NOT_FINITE
    return OK


_FORWARD_DYNAMICS = Kernel(forward_dynamics_kernel)
_EMPTY_WRENCH = np.zeros((0, 6))
_EMPTY_WRENCH.setflags(write=False)


def force_args(model, tau, base_wrench, rows, driven):
    """``(tau, base_wrench)`` for a kernel: the arguments themselves when they
    are plain arrays (the kernel checks shapes and values), else converted."""
    if driven and plain(tau, 2) and plain(base_wrench, 2):
        return tau, base_wrench
    return force_arg(tau, "tau", rows, model.n_joints), base_wrench_arg(model, base_wrench, rows,
                                                                          driven)


def base_wrench_arg(model, base_wrench, rows, driven):
    """The base wrench jet for a kernel: required when the base is
    wrench-driven, refused otherwise (it is then an output)."""
    if driven:
        if base_wrench is None:
            raise ValueError(f"base_wrench: a wrench-driven floating base needs its wrench jet, "
                             f"shape ({rows}, 6)")
        return force_arg(base_wrench, "base_wrench", rows, 6)
    if base_wrench is not None:
        raise ValueError("base_wrench: the base is fixed or motion-driven, so its wrench is an "
                         "output (the reaction or the required wrench); pass None")
    return _EMPTY_WRENCH


def forward_dynamics(model, base_pose, base_twist, q, order, *, tau, base_wrench=None,
                     applied=None, workspace=None, reference="world"):
    """Forward dynamics and its first ``order`` time derivatives (H-GABI-FBS).

    Solves, for ``k = 0..order`` in turn, the ``k``-th time derivative of the
    equations of motion for ``V₀^(k+1)`` and ``q^(k+2)``, given the state and
    the jets of the driving forces.

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Base pose ``C₀`` (``None``: ``model.home_pose``).
    base_twist : (1, 6) or None (more rows: only the first is read)
        The state's base twist ``V₀`` as a one-row jet; ``None`` for a fixed base.
    q : (2, n) (more rows: the first 2 are read)
        The state's joint positions and velocities, ``[q; q̇]``.
    order : int ≥ 0
        Highest derivative ``r`` of the dynamics.
    tau : (order+1, n), keyword
        Joint force jets ``τ^(0..order)``.
    base_wrench : (order+1, 6) or None, keyword
        Spatial wrench jet ``W₀^(0..order)`` the base actuators apply (world
        frame, moment about the world origin); required for a floating base,
        ``None`` for a fixed base (whose wrench is the reaction, returned).
    applied, workspace, reference : keyword
        As :func:`liedyn.inverse_dynamics`.

    Returns
    -------
    ForwardDynamicsResult

    Raises
    ------
    ValueError, TypeError
        Wrong shapes or types, non-finite values, a non-SE(3) pose, a bad
        order (the message names the argument); a singular joint pivot
        ``D_j`` (the message names the body) or a base whose articulated
        inertia is not positive definite; a result that overflows.

    Notes
    -----
    Cost O(N · order²). The articulated inertias ``M^A_j`` depend on the
    configuration only (Lemma 2): they are formed once, ``M^A_0`` is
    Cholesky-factored once, and every order reuses them. Armature ``I_a`` adds
    to the pivot ``D_j``; damping ``b`` replaces ``τ^(k)`` by
    ``τ^(k) − b q^(k+1)``. Order 0 is the spatial articulated-body algorithm.

    Conditioning: each order divides by the mass matrix once more, so the
    errors of ``q^(k+2)`` and ``V₀^(k+1)`` compound with ``k`` at a rate set
    by the conditioning of ``M``: on Talos (``cond(M) ≈ 1e5``) roughly 3
    digits are lost per order, and a round trip (inverse then forward
    dynamics) of order 3 returns ``q̈`` to 1e-13 relative and ``q⁽⁵⁾`` to
    about 1e-4.
    ``experiments/roundtrip_growth.py`` measures this growth.
    """
    # the checks of check_model_order and about_base, inlined for the common case
    r = order if type(model) is Model and type(order) is int and 0 <= order <= MAX_ORDER else \
        check_model_order(model, order)
    base = False if reference == "world" else about_base(reference)
    C0, V0, q0 = motion_args(model, base_pose, base_twist, q, 1, 2)
    tau_in, Wb = force_args(model, tau, base_wrench, r + 1, model.floating_base)
    Wa = _NO_APPLIED if applied is None else applied_arg(model, applied, r + 1)
    if workspace is None:
        ws = pooled(model, r)
        ws._calls = call = ws._calls + 1          # no other call can hold it (see pooled)
        held = ws._lease
        status = _FORWARD_DYNAMICS.call(model._data, ws._data, C0, base, V0, q0, tau_in, Wb, Wa,
                                        r)
    else:
        held = ws = workspace_for(model, r, workspace)
        status, call = ws._serve(_FORWARD_DYNAMICS, model, C0, base, V0, q0, tau_in, Wb, Wa, r)
    if status != OK:
        raise_forward_args(status, model, base_pose, base_twist, q, tau, Wb, applied, r)
    return ForwardDynamicsResult(held, call, ws.base_twist.copy(), ws.q.copy(),
                                 ws.base_wrench.copy(), ws.tau.copy())
