"""Argument checks shared by every public function: name the argument, say
what was expected, never let NaN or a wrong shape reach a kernel."""

import numpy as np

from ._jit import njit

# A pose is accepted as rigid when ‖RᵀR − I‖ and the last-row error are below
# this: loose enough for poses composed from a few hundred float64 products,
# tight enough to reject a scaled or sheared matrix.
POSE_TOL = 1e-8


@njit
def _all_finite(a):
    for x in a:
        if not np.isfinite(x):
            return False
    return True


def as_array(x, name, shape=None, ndim=None):
    """``x`` as a finite float64 array, optionally of a given shape."""
    if x is None:
        raise TypeError(f"{name}: expected an array, got None")
    a = x if type(x) is np.ndarray and x.dtype == np.float64 else np.asarray(x)
    if a.dtype.kind in "cUSV":           # complex would lose its imaginary part silently
        raise TypeError(f"{name}: expected a real numeric array, got dtype {a.dtype}")
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name}: expected a real numeric array ({err})") from None
    if shape is not None and a.shape != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)}, got {a.shape}")
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-D array, got shape {a.shape}")
    if not _all_finite(a.reshape(-1)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return a


@njit
def _pose_defect(C):
    """``(max |RᵀR − I|, det R, max |last row − (0,0,0,1)|)``."""
    err = 0.0
    for i in range(3):
        for k in range(3):
            d = C[0, i] * C[0, k] + C[1, i] * C[1, k] + C[2, i] * C[2, k] - (1.0 if i == k else 0.0)
            err = max(err, abs(d))
    det = (C[0, 0] * (C[1, 1] * C[2, 2] - C[1, 2] * C[2, 1])
           - C[0, 1] * (C[1, 0] * C[2, 2] - C[1, 2] * C[2, 0])
           + C[0, 2] * (C[1, 0] * C[2, 1] - C[1, 1] * C[2, 0]))
    row = max(abs(C[3, 0]), abs(C[3, 1]), abs(C[3, 2]), abs(C[3, 3] - 1.0))
    return err, det, row


@njit
def _state_ok(C0, a, b, c):
    """``C0`` a finite rigid transform and ``a``, ``b``, ``c`` finite: the
    common case, decided in one compiled call."""
    if not (_all_finite(C0.reshape(-1)) and _all_finite(a.reshape(-1))
            and _all_finite(b.reshape(-1)) and _all_finite(c.reshape(-1))):
        return False
    err, det, row = _pose_defect(C0)
    return err <= POSE_TOL and det > 0.0 and row <= POSE_TOL


def plain(x, shape):
    """Whether ``x`` is already a C-contiguous float64 array of ``shape``
    (the fast path of the argument checks)."""
    return (type(x) is np.ndarray and x.dtype == np.float64 and x.shape == shape
            and x.flags.c_contiguous)


def _check_rotation_block(C, name, group):
    """Raise unless ``C[:3, :3]`` is a rotation; return the last-row defect."""
    err, det, row = _pose_defect(C)
    if err > POSE_TOL or det < 0.0:
        raise ValueError(f"{name}: not in {group}: rotation block is not orthonormal "
                         f"with det +1 (‖RᵀR − I‖∞ = {err:.2e}, det = {det:.3g})")
    return row


def check_rotation(R, name):
    """A 3×3 rotation matrix (orthonormal, det +1)."""
    R = as_array(R, name, shape=(3, 3))
    C = np.eye(4)
    C[:3, :3] = R
    _check_rotation_block(C, name, "SO(3)")
    return R


def require_rigid(C, name):
    """Raise unless the finite 4×4 float64 array ``C`` is in SE(3)."""
    row = _check_rotation_block(C, name, "SE(3)")
    if row > POSE_TOL:
        raise ValueError(f"{name}: not in SE(3): last row must be (0, 0, 0, 1), got {C[3]}")


def check_pose(C, name):
    """A 4×4 rigid transform (rotation with det +1, last row 0 0 0 1)."""
    C = np.ascontiguousarray(as_array(C, name, shape=(4, 4)))
    require_rigid(C, name)
    return C


def check_twist(V, name):
    return np.ascontiguousarray(as_array(V, name, shape=(6,)))


def check_order(order, name="order"):
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)):
        raise TypeError(f"{name}: expected a non-negative int, got {type(order).__name__}")
    if order < 0:
        raise ValueError(f"{name}: expected a non-negative int, got {order}")
    return int(order)


