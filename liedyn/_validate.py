"""Argument checks shared by every public function: name the argument, say
what was expected, never let NaN or a wrong shape reach a kernel."""

import numpy as np

# A pose is accepted as rigid when ‖RᵀR − I‖ and the last-row error are below
# this: loose enough for poses composed from a few hundred float64 products,
# tight enough to reject a scaled or sheared matrix.
POSE_TOL = 1e-8


def as_array(x, name, shape=None, ndim=None):
    """``x`` as a finite float64 array, optionally of a given shape."""
    if x is None:
        raise TypeError(f"{name}: expected an array, got None")
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name}: expected a real numeric array ({err})") from None
    if shape is not None and a.shape != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)}, got {a.shape}")
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-D array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return a


def check_pose(C, name):
    """A 4×4 rigid transform (rotation with det +1, last row 0 0 0 1)."""
    C = as_array(C, name, shape=(4, 4))
    R = C[:3, :3]
    err = np.max(np.abs(R.T @ R - np.eye(3)))
    if err > POSE_TOL or np.linalg.det(R) < 0.0:
        raise ValueError(f"{name}: not in SE(3): rotation block is not orthonormal "
                         f"with det +1 (‖RᵀR − I‖∞ = {err:.2e})")
    if np.max(np.abs(C[3] - (0.0, 0.0, 0.0, 1.0))) > POSE_TOL:
        raise ValueError(f"{name}: not in SE(3): last row must be (0, 0, 0, 1), got {C[3]}")
    return np.ascontiguousarray(C)


def check_twist(V, name):
    return np.ascontiguousarray(as_array(V, name, shape=(6,)))


def check_order(order, name="order"):
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)):
        raise TypeError(f"{name}: expected a non-negative int, got {type(order).__name__}")
    if order < 0:
        raise ValueError(f"{name}: expected a non-negative int, got {order}")
    return int(order)


