"""Per-call inputs, checked once at the boundary; scratch memory reused across
calls; shared small tables."""

from functools import lru_cache

import numpy as np

from ._validate import _state_ok, as_array, check_order, check_pose, check_twist, plain


@lru_cache(maxsize=None)
def _binomials(n):
    B = np.zeros((n + 1, n + 1))
    for i in range(n + 1):
        B[i, 0] = 1.0
        for k in range(1, i + 1):
            B[i, k] = B[i - 1, k - 1] + B[i - 1, k]
    B.setflags(write=False)
    return B


def binomials(n):
    """Table ``B[i, k] = C(i, k)`` for ``0 ≤ k ≤ i ≤ n`` (float64, read-only)."""
    return _binomials(int(n))


def check_jet(x, name, shape):
    """A jet of exactly ``shape``; derivative ``k`` is ``x[k]``."""
    a = as_array(x, name)
    if a.shape != tuple(shape):
        rows = ", ".join(str(s) for s in shape)
        raise ValueError(f"{name}: expected a jet of shape ({rows}) "
                         f"(row k = k-th time derivative), got {a.shape}")
    return np.ascontiguousarray(a)


def check_state(model, base_pose, base_twist, q, twist_rows, q_rows):
    """Validate the configuration and motion arguments shared by the algorithms.

    Returns ``(C0, Vb, q)`` with ``Vb`` of shape ``(twist_rows, 6)`` (zeros for
    a fixed base) and ``q`` of shape ``(q_rows, n)``.
    """
    model.require_bodies()
    n = model.n_joints
    if (model.floating_base and plain(base_pose, (4, 4)) and plain(base_twist, (twist_rows, 6))
            and plain(q, (q_rows, n)) and _state_ok(base_pose, base_twist, q, q)):
        return base_pose, base_twist, q
    C0 = model.home_pose.copy() if base_pose is None else check_pose(base_pose, "base_pose")
    if model.floating_base:
        if base_twist is None:
            raise ValueError(f"base_twist: a floating base needs its twist jet, shape ({twist_rows}, 6)")
        Vb = check_jet(base_twist, "base_twist", (twist_rows, 6))
    else:
        Vb = np.zeros((twist_rows, 6))
        if base_twist is not None and np.any(check_jet(base_twist, "base_twist", (twist_rows, 6))):
            raise ValueError("base_twist: a fixed base does not move; pass None")
    qj = check_jet(q, "q", (q_rows, n))
    return C0, Vb, qj


def check_applied(model, applied, rows):
    """Applied spatial wrench jets ``(rows, N, 6)``; ``None`` means none."""
    if applied is None:
        return np.zeros((rows, model.n_bodies, 6))
    return check_jet(applied, "applied", (rows, model.n_bodies, 6))


def check_state0(model, base_pose, base_twist, q, qd):
    """Validate the state ``(C₀, V₀, q, q̇)`` of forward and hybrid dynamics.

    Returns ``C0`` (4, 4), ``V0`` (6,) (zeros for a fixed base), ``q``, ``qd`` (n,).
    """
    model.require_bodies()
    n = model.n_joints
    if (model.floating_base and plain(base_pose, (4, 4)) and plain(base_twist, (6,))
            and plain(q, (n,)) and plain(qd, (n,)) and _state_ok(base_pose, base_twist, q, qd)):
        return base_pose, base_twist, q, qd
    C0 = model.home_pose.copy() if base_pose is None else check_pose(base_pose, "base_pose")
    if model.floating_base:
        if base_twist is None:
            raise ValueError("base_twist: a floating base needs its twist, shape (6,)")
        V0 = check_twist(base_twist, "base_twist")
    else:
        if base_twist is not None:
            raise ValueError("base_twist: a fixed base does not move; pass None")
        V0 = np.zeros(6)
    return C0, V0, as_array(q, "q", shape=(n,)), as_array(qd, "qd", shape=(n,))


class Workspace:
    """Scratch arrays for one ``(model, order)``, reused call after call.

    Pass ``workspace=Workspace(model, order)`` to :func:`liedyn.inverse_dynamics`,
    :func:`liedyn.forward_dynamics` or :func:`liedyn.hybrid_dynamics` and the
    call allocates nothing of size ``N`` (only its small outputs
    ``base_wrench``, ``tau``, ``q``, …). The body jets of the result
    (``twist``, ``screw``, ``momentum``, ``wrench``, ``body_pose``,
    ``articulated_inertia``) are then views into the workspace, overwritten by
    the next call that uses it: copy them if you keep them. Without a
    workspace every call allocates fresh arrays. A workspace is not shared
    between threads.

    Fields (``r`` = order)
    ----------------------
    ``F``, ``C`` (N, 4, 4); ``S``, ``V``, ``Pi`` (r+2, N, 6); ``c`` (r+3, N, 3);
    ``Ic`` (r+2, N, 3, 3); ``W`` (r+1, N, 6); ``MA`` (N, 6, 6); ``U`` (N, 6);
    ``D`` (N,); ``L`` (6, 6).
    """

    def __init__(self, model, order):
        r = check_order(order)
        model.require_bodies()
        N = model.n_bodies
        self.model = model
        self.order = r
        self.F = np.empty((N, 4, 4))
        self.C = np.empty((N, 4, 4))
        self.S = np.empty((r + 2, N, 6))
        self.V = np.empty((r + 2, N, 6))
        self.c = np.empty((r + 3, N, 3))
        self.Ic = np.empty((r + 2, N, 3, 3))
        self.Pi = np.empty((r + 2, N, 6))
        self.W = np.empty((r + 1, N, 6))
        self.MA = np.empty((N, 6, 6))
        self.U = np.empty((N, 6))
        self.D = np.empty(N)
        self.L = np.empty((6, 6))

    def __repr__(self):
        return f"Workspace({self.model!r}, order={self.order})"


def workspace_for(model, order, workspace):
    """``workspace`` checked against ``(model, order)``, or a fresh one."""
    if workspace is None:
        return Workspace(model, order)
    if not isinstance(workspace, Workspace):
        raise TypeError(f"workspace: expected a liedyn.Workspace, got {type(workspace).__name__}")
    if workspace.model is not model or workspace.order != order:
        raise ValueError(f"workspace: built for {workspace.model!r} at order {workspace.order}, "
                         f"called with {model!r} at order {order}")
    return workspace
