"""Per-call inputs, checked once at the boundary, and shared small tables."""

from functools import lru_cache

import numpy as np

from ._validate import as_array, check_pose, check_twist


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
    C0 = model.home_pose.copy() if base_pose is None else check_pose(base_pose, "base_pose")
    if model.floating_base:
        if base_twist is None:
            raise ValueError(f"base_twist: a floating base needs its twist jet, shape ({twist_rows}, 6)")
        Vb = check_jet(base_twist, "base_twist", (twist_rows, 6))
    else:
        Vb = np.zeros((twist_rows, 6))
        if base_twist is not None and np.any(check_jet(base_twist, "base_twist", (twist_rows, 6))):
            raise ValueError("base_twist: a fixed base does not move; pass None")
    qj = check_jet(q, "q", (q_rows, model.n_joints))
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
    C0 = model.home_pose.copy() if base_pose is None else check_pose(base_pose, "base_pose")
    if model.floating_base:
        if base_twist is None:
            raise ValueError("base_twist: a floating base needs its twist, shape (6,)")
        V0 = check_twist(base_twist, "base_twist")
    else:
        if base_twist is not None:
            raise ValueError("base_twist: a fixed base does not move; pass None")
        V0 = np.zeros(6)
    n = model.n_joints
    return C0, V0, as_array(q, "q", shape=(n,)), as_array(qd, "qd", shape=(n,))
