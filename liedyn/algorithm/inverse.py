"""H-GRNE-FBS: inverse dynamics of any order r (SPEC §4, Algorithm 2).

Glossary (``model``, ``ws``: compiled handles; every spatial quantity about
the base origin ``o``, SPEC §1)
--------------------------------------------------------------------------
==========  ===============  ================================================
``ws.V``    (r+2, N, 6)      body twist jets ``V_j^(k)``
``ws.S``    (r+2, N, 6)      joint screw jets ``S_j^(k)``
``ws.c``    (r+3, N, 3)      centre-of-mass jets
``ws.Ic``   (r+2, N, 3, 3)   rotational inertia about the CoM, world axes
``ws.Pi``   (r+2, N, 6)      momentum jets ``Π_j^(k) = (M_j V_j)^(k)``
``ws.W``    (r+1, N, 6)      wrench jets ``W_j^(k)`` transmitted by joint j
``W_app``   (r+1, N, 6)      applied wrench jets (world origin), or empty
``ws.base_wrench``  (r+1, 6)  output: base wrench jet ``W₀^(k)`` (world origin)
``ws.tau``  (r+1, n)         output: joint force jets ``τ_j^(k)``
==========  ===============  ================================================

Outward pass: kinematics (§3) and per-body inertia/momentum jets.
Inward pass (leaves first):

    W_j^(k) = Π_j^(k+1) − W_app,j^(k) − M_j^(k) G + Σ_{c ∈ children(j)} W_c^(k)
    τ_j^(k) = Σ_a binom(k, a) S_j^(a)ᵀ W_j^(k−a) + I_a q_j^(k+2) + b q_j^(k+1)
"""


from .._checks import (MAX_ORDER, _NO_APPLIED, BAD_APPLIED, NOT_FINITE, OK, _all_finite,
                       about_base, applied_arg, check_applied_slow, check_motion, check_motion_slow,
                       is_applied, motion_args, raise_for)
from .._jit import Kernel, njit
from ..spatial.inertia import _body_mass_jets, _gravity_wrench_acc, _momentum_order
from .kinematics import kinematics, set_base
from ..multibody.model import Model, check_model_order
from ..multibody.results import InverseDynamicsResult
from ..spatial.se3 import _shift_wrench_acc, _unshift_wrench
from ..multibody.workspace import pooled, workspace_for


@njit
def _outward(model, ws, W_app, r):
    """Per-body momentum jets and the body's own share of ``W^(0..r)``."""
    C, V, c, Ic, Pi, W, binom, d = ws.C, ws.V, ws.c, ws.Ic, ws.Pi, ws.W, ws.binom, ws.d
    mass, g = model.body_mass, model.gravity
    for j in range(C.shape[0]):
        _body_mass_jets(j, r + 1, model, C, V, binom, c, Ic)
        m = mass[j]
        for k in range(r + 2):
            _momentum_order(j, k, m, V, c, Ic, binom, Pi)
        for k in range(r + 1):
            for i in range(6):
                W[k, j, i] = Pi[k + 1, j, i]                                  # SPEC §4
            if W_app.shape[0] > 0:
                _shift_wrench_acc(-1.0, W_app[k, j], d, W[k, j])               # − W_app
            _gravity_wrench_acc(-1.0, j, k, m, g, c, W[k, j])                 # − M^(k) G


@njit
def _inward(model, ws, q, r, tau):
    """Accumulate children's wrenches (leaves first) and project on the screws."""
    parent, arm, damp = model.body_parent, model.joint_armature, model.joint_damping
    S, W, binom = ws.S, ws.W, ws.binom
    for j in range(parent.shape[0] - 1, 0, -1):
        p = parent[j]
        for k in range(r + 1):
            for i in range(6):
                W[k, p, i] += W[k, j, i]                                       # SPEC §4: Σ_children
        for k in range(r + 1):
            acc = arm[j - 1] * q[k + 2, j - 1] + damp[j - 1] * q[k + 1, j - 1]
            for a in range(k + 1):                                            # SPEC §4: τ^(k)
                s = 0.0
                for i in range(6):
                    s += S[a, j, i] * W[k - a, j, i]
                acc += binom[k, a] * s
            tau[k, j - 1] = acc


@njit
def inverse_dynamics_kernel(model, ws, C0, about_base, Vb, q, W_app, r):
    """Orders ``0..r`` into ``ws.base_wrench`` and ``ws.tau``; returns a status
    (SPEC §4)."""
    W0, tau = ws.base_wrench, ws.tau
    status = check_motion(model, C0, Vb, q, r + 2, r + 3)
    if status != OK:
        return status
    if not is_applied(W_app, r + 1, model.body_parent.shape[0]):
        return BAD_APPLIED
    set_base(model, ws, C0, about_base, Vb, r + 2)
    kinematics(model, ws, q, r + 1)
    _outward(model, ws, W_app, r)
    _inward(model, ws, q, r, tau)
    for k in range(r + 1):
        _unshift_wrench(ws.W[k, 0], ws.d, W0[k])                               # SPEC §1: back to the reference point
    if not (_all_finite(W0.reshape(-1)) and _all_finite(tau.reshape(-1))):
        return NOT_FINITE
    return OK


_INVERSE_DYNAMICS = Kernel(inverse_dynamics_kernel)


def inverse_dynamics(model, base_pose, base_twist, q, order, *, applied=None, workspace=None,
                     reference="world"):
    """Inverse dynamics and its first ``order`` time derivatives (H-GRNE-FBS).

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Pose of the base frame in the world (``None``: ``model.home_pose``).
    base_twist : (order+2, 6) or None (more rows: the first order+2 are read)
        Spatial base twist jet ``V₀, V̇₀, …, V₀^(order+1)``; ``None`` for a
        fixed base.
    q : (order+3, n) (more rows: the first order+3 are read)
        Joint jet ``q, q̇, …, q^(order+2)``.
    order : int ≥ 0
        Highest derivative ``r`` of the dynamics returned.
    applied : (order+1, N, 6), optional
        Spatial external wrench jets acting on each body.
    workspace : Workspace, optional
        Scratch for ``(model, order)`` (see :class:`liedyn.Workspace`).
    reference : {"world", "base"}, keyword
        The point every twist and wrench of the call (inputs, outputs, body
        jets) is taken about, with world axes: the world origin (default), or
        the base origin at this instant, which keeps their accuracy wherever
        the robot is (SPEC §1, reference point).

    Returns
    -------
    InverseDynamicsResult

    Raises
    ------
    ValueError, TypeError
        Wrong shapes or types, non-finite values, a non-SE(3) pose, a bad
        order (the message names the argument); inputs so large that the
        result overflows.

    Notes
    -----
    Cost O(N · order²). Order 0 is the Lie-group recursive Newton–Euler
    algorithm.
    """
    # the checks of check_model_order and about_base, inlined for the common case
    r = order if type(model) is Model and type(order) is int and 0 <= order <= MAX_ORDER else \
        check_model_order(model, order)
    base = False if reference == "world" else about_base(reference)
    C0, Vb, qj = motion_args(model, base_pose, base_twist, q, r + 2, r + 3)
    Wa = _NO_APPLIED if applied is None else applied_arg(model, applied, r + 1)
    if workspace is None:
        ws = pooled(model, r)
        ws._calls = call = ws._calls + 1          # no other call can hold it (see pooled)
        held = ws._lease
        status = _INVERSE_DYNAMICS.call(model._data, ws._data, C0, base, Vb, qj, Wa, r)
    else:
        held = ws = workspace_for(model, r, workspace)
        status, call = ws._serve(_INVERSE_DYNAMICS, model, C0, base, Vb, qj, Wa, r)
    if status != OK:
        raise_for(status, model, lambda: (
            check_motion_slow(model, base_pose, base_twist, q, r + 2, r + 3),
            check_applied_slow(model, applied, r + 1)))
    return InverseDynamicsResult(held, call, ws.base_wrench.copy(), ws.tau.copy())
