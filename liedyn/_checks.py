"""Argument checks shared by every public function: name the argument, say
what was expected, never let NaN or a wrong shape reach a kernel.

One input policy everywhere
---------------------------
Numeric arguments are real arrays: Python numbers, lists and arrays of
integer or floating dtype, and object arrays whose entries are all real
numbers (what pandas hands out), are converted to float64; booleans,
complex numbers, strings, bytes, other objects, dates and ragged lists are
refused with a ``TypeError`` naming the argument. A jet of shape
``(rows, …)`` has row ``k`` equal to the ``k``-th time derivative. Shapes
are exact, except that a motion jet (base twist, joint positions) may have
more rows than a call reads: it reads the first ones, so one trajectory jet
serves calls of every order (:func:`is_motion_jet`). Values read must be
finite.

Two paths
---------
The common case is decided in compiled code: the Python side only confirms
that each array is already a C-contiguous float64 array of the right number
of dimensions (:func:`plain`), then the kernel checks shapes, finiteness and
the base pose and returns a status code. Only when the kernel reports a bad
argument does the slower Python path below run, to build the message.
"""

import numbers

import numpy as np

from ._jit import njit

# A pose is accepted as rigid when max |RᵀR − I| and the last-row error are at
# most POSE_TOL. Float32 data sets the scale: a rotation stored in float32 or
# computed in float32 from a normalised quaternion (ROS messages, estimators)
# has |RᵀR − I| of a few 1e-8 to a few 1e-7 (float32 eps = 1.2e-7), and 1e-6
# accepts it with margin; a scaled or sheared matrix (scale error s gives 2s)
# beyond float32 rounding is refused, with a message naming
# liedyn.se3.project. What an accepted defect δ costs: the algorithms use R as
# given, and such an R is a rotation to O(δ) (its nearest rotation,
# se3.project, is within 3δ of it in the spectral norm), so results carry an
# extra relative error O(δ): none that matters for float64 poses (δ ~ 1e-15),
# up to ~1e-6 for float32 ones, the precision they came with. Refusing them
# instead (the former 1e-8) gave no accuracy the data had.
POSE_TOL = 1e-6

_F64 = np.dtype(np.float64)
_ndarray = np.ndarray

# The largest derivative order: C(order + 3, k), the biggest binomial the
# recursions use, must stay finite in float64 (C(1029, 514) ≈ 1.4e308 is the
# last one that does).
MAX_ORDER = 1026


def check_type(x, cls, name, what=None):
    """``x`` itself, if it is an instance of ``cls``."""
    if not isinstance(x, cls):
        raise TypeError(f"{name}: expected {what or cls.__name__}, got {type(x).__name__}")
    return x


def _is_real_number(v):
    """A real number that is not a bool: what an object array may hold."""
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def as_array(x, name, shape=None, ndim=None, allow_nonfinite=False):
    """``x`` as a float64 array under the input policy of this module."""
    if x is None:
        raise TypeError(f"{name}: expected a real numeric array, got None")
    if type(x) is np.ndarray and x.dtype == _F64:
        a = x
    else:
        try:
            a = np.asarray(x)
        except ValueError as err:             # ragged nested sequences
            raise TypeError(f"{name}: expected a rectangular real numeric array ({err})") from None
        if a.dtype.kind == "O" and a.size and all(map(_is_real_number, a.flat)):
            try:                              # plain numbers in an object array (pandas)
                a = a.astype(np.float64)
            except OverflowError:             # a Python int beyond float64 (10**400)
                raise ValueError(f"{name}: holds a number beyond float64's range "
                                 f"(±1.8e308)") from None
        if a.dtype.kind not in "iuf":
            what = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes",
                    "O": "objects (a ragged or mixed sequence?)", "M": "dates",
                    "m": "time differences"}.get(a.dtype.kind, f"dtype {a.dtype}")
            raise TypeError(f"{name}: expected a real numeric array, got {what}")
        a = a.astype(np.float64)
    if shape is not None and a.shape != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)}, got {a.shape}")
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-D array, got shape {a.shape}")
    if not allow_nonfinite and not _all_finite(a.reshape(-1)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return a if a.flags.c_contiguous else a.copy()


def check_scalar(x, name, nonneg=False):
    """A finite real number (``nonneg``: ≥ 0)."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name}: expected a real number, got bool")
    v = float(as_array(x, name, shape=()))
    if nonneg and v < 0.0:
        raise ValueError(f"{name}: must be non-negative, got {v}")
    return v


def check_jet(x, name, shape):
    """A jet of exactly ``shape``; derivative ``k`` is ``x[k]``."""
    a = as_array(x, name, allow_nonfinite=True)
    if a.shape != tuple(shape):
        rows = ", ".join(str(s) for s in shape)
        raise ValueError(f"{name}: expected a jet of shape ({rows}) "
                         f"(row k = k-th time derivative), got {a.shape}")
    if not _all_finite(a.reshape(-1)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return a


def check_motion_jet(x, name, rows, cols):
    """The first ``rows`` rows of a motion jet of ``cols`` columns with at
    least that many rows (the rule of :func:`is_motion_jet`)."""
    a = as_array(x, name, allow_nonfinite=True)
    if a.ndim != 2 or a.shape[0] < rows or a.shape[1] != cols:
        raise ValueError(f"{name}: expected a jet of {counted(rows, 'row')} or more and "
                         f"{counted(cols, 'column')}, shape ({rows}, {cols}) (row k = k-th "
                         f"time derivative; rows past the first {counted(rows, 'row')} are "
                         f"not read), got {a.shape}")
    a = a[:rows]
    if not _all_finite(a.reshape(-1)):
        raise ValueError(f"{name}: contains NaN or infinite values in its first "
                         f"{counted(rows, 'row')}")
    return a


def check_order(order, name="order"):
    """A non-negative int no larger than :data:`MAX_ORDER`."""
    if isinstance(order, (bool, np.bool_)) or not isinstance(order, (int, np.integer)):
        raise TypeError(f"{name}: expected a non-negative int, got {type(order).__name__}")
    if not 0 <= order <= MAX_ORDER:
        raise ValueError(f"{name}: expected an int in [0, {MAX_ORDER}] (beyond it the binomial "
                         f"coefficients of the recursions overflow float64), got {order}")
    return int(order)


def about_base(reference):
    """``reference="base"`` → ``True``, ``"world"`` → ``False``: whether the
    twists and wrenches of a call are taken about the base origin (SPEC §1)."""
    if reference == "world":
        return False
    if reference == "base":
        return True
    raise ValueError(f"reference: expected 'world' or 'base', got {reference!r}")


def plain(x, ndim):
    """Whether ``x`` is already a C-contiguous float64 array with ``ndim``
    dimensions: the only arrays the fast path hands to a kernel."""
    # numpy's float64 dtype is one object; ``==`` only for an equal copy (unpickled arrays)
    return (type(x) is _ndarray and (x.dtype is _F64 or x.dtype == _F64) and x.ndim == ndim
            and x.flags.c_contiguous)


# Kernel status codes.
OK = 0
BAD_POSE, BAD_TWIST, BAD_Q, BAD_TAU, BAD_WRENCH, BAD_APPLIED = -1, -2, -3, -4, -5, -6
NOT_FINITE = -7       # finite inputs gave a non-finite result (overflow)
SINGULAR_BASE = -8    # M^A_0 not positive definite
# A positive status j ≥ 1 is a singular pivot at the joint of body j.


# ------------------------------------------------------------- compiled --

@njit(inline=True)
def _all_finite(a):
    for x in a:
        if not np.isfinite(x):
            return False
    return True


@njit(inline=True)
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
def pose_defect(C):
    return _pose_defect(C)


@njit(inline=True)
def is_pose(C):
    """``C`` a finite 4×4 rigid transform."""
    if C.shape[0] != 4 or C.shape[1] != 4 or not _all_finite(C.reshape(-1)):
        return False
    err, det, row = _pose_defect(C)
    return err <= POSE_TOL and det > 0.0 and row <= POSE_TOL


@njit(inline=True)
def is_jet(x, rows, cols):
    """``x`` of shape ``(rows, cols)`` and finite."""
    return x.shape[0] == rows and x.shape[1] == cols and _all_finite(x.reshape(-1))


@njit(inline=True)
def is_motion_jet(x, rows, cols):
    """A motion jet (base twist, joint positions) read by a call: at least
    ``rows`` rows of ``cols`` columns, the first ``rows`` finite. Rows past
    them are not read, so one trajectory jet serves calls of every order."""
    if x.shape[0] < rows or x.shape[1] != cols:
        return False
    for k in range(rows):
        for i in range(cols):
            if not np.isfinite(x[k, i]):
                return False
    return True


@njit(inline=True)
def is_zero_or_empty(x, rows):
    """A fixed base's twist jet: empty (``None`` was passed) or a motion jet
    whose first ``rows`` rows are zero."""
    if x.shape[0] == 0:
        return True
    if x.shape[0] < rows or x.shape[1] != 6:
        return False
    for k in range(rows):
        for i in range(6):
            if x[k, i] != 0.0:
                return False
    return True


@njit(inline=True)
def check_motion(model, C0, Vb, q, twist_rows, q_rows):
    """Status of the motion arguments: base pose, base twist jet, joint jet."""
    if not is_pose(C0):
        return BAD_POSE
    if model.floating_base:
        if not is_motion_jet(Vb, twist_rows, 6):
            return BAD_TWIST
    elif not is_zero_or_empty(Vb, twist_rows):
        return BAD_TWIST
    if not is_motion_jet(q, q_rows, model.body_parent.shape[0] - 1):
        return BAD_Q
    return OK


@njit(inline=True)
def check_configuration(model, C0, q0):
    """Status of a configuration: base pose and joint positions ``(n,)``."""
    if not is_pose(C0):
        return BAD_POSE
    if q0.shape[0] != model.body_parent.shape[0] - 1 or not _all_finite(q0):
        return BAD_Q
    return OK


# ------------------------------------------------------------ Python side --

def counted(n, noun, plural=None):
    """``"1 joint"``, ``"2 joints"``: ``n`` and the noun in the number it takes."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _check_rotation_block(C, name, group):
    """Raise unless ``C[:3, :3]`` is a rotation to ``POSE_TOL``; return the last-row defect."""
    err, det, row = pose_defect(C)
    if not det > 0.0:
        raise ValueError(f"{name}: not in {group}: rotation block has det = {det:.3g} ≤ 0, "
                         f"a reflection or a singular matrix (left-handed axes?), "
                         f"not a rotation")
    if err > POSE_TOL:
        fix = "pose" if group == "SE(3)" else "rotation"
        raise ValueError(f"{name}: not in {group}: rotation block is not orthonormal: "
                         f"max |RᵀR − I| = {err:.2e} exceeds the tolerance {POSE_TOL:g}; "
                         f"liedyn.se3.project({name}) returns the nearest {fix}")
    return row


def check_rotation(R, name):
    """A 3×3 rotation matrix (orthonormal to ``POSE_TOL``, det +1)."""
    R = as_array(R, name, shape=(3, 3))
    C = np.eye(4)
    C[:3, :3] = R
    _check_rotation_block(C, name, "SO(3)")
    return R


def check_last_row(C, name, row):
    """Raise unless the last-row defect ``row`` of the 4×4 ``C`` is within ``POSE_TOL``."""
    if row > POSE_TOL:
        raise ValueError(f"{name}: not in SE(3): last row must be (0, 0, 0, 1), got {C[3]} "
                         f"(a transposed pose? the translation is the last column)")


def check_pose(C, name):
    """A 4×4 rigid transform (rotation with det +1, last row 0 0 0 1, to ``POSE_TOL``)."""
    C = as_array(C, name, shape=(4, 4))
    check_last_row(C, name, _check_rotation_block(C, name, "SE(3)"))
    return C


def check_twist(V, name):
    return as_array(V, name, shape=(6,))


# ------------------------------------------------ motion arguments --

_EMPTY_TWIST = np.zeros((0, 6))
_EMPTY_TWIST.setflags(write=False)


def motion_args(model, base_pose, base_twist, q, twist_rows, q_rows):
    """``(C0, Vb, q)`` for a kernel: the arguments themselves when they are
    plain arrays (the kernel checks shapes and values), converted copies
    otherwise. ``None`` for the base pose means the home pose; ``None`` for a
    fixed base's twist an empty jet."""
    C0 = model.home_pose if base_pose is None else base_pose
    Vb = _EMPTY_TWIST if base_twist is None and not model.floating_base else base_twist
    if (type(C0) is _ndarray and type(Vb) is _ndarray and type(q) is _ndarray
            and (C0.dtype is _F64 or C0.dtype == _F64) and (Vb.dtype is _F64 or Vb.dtype == _F64)
            and (q.dtype is _F64 or q.dtype == _F64) and C0.ndim == 2 and Vb.ndim == 2
            and q.ndim == 2 and C0.flags.c_contiguous and Vb.flags.c_contiguous
            and q.flags.c_contiguous):             # (the checks of plain, inlined)
        return C0, Vb, q
    return check_motion_slow(model, base_pose, base_twist, q, twist_rows, q_rows)


def check_motion_slow(model, base_pose, base_twist, q, twist_rows, q_rows):
    """Every check of :func:`check_motion`, with messages; returns plain
    arrays, the jets cut to the rows the call reads."""
    n = model.n_joints
    C0 = model.home_pose if base_pose is None else check_pose(base_pose, "base_pose")
    if model.floating_base:
        if base_twist is None:
            raise ValueError(f"base_twist: a floating base needs its twist jet, "
                             f"shape ({twist_rows}, 6)")
        Vb = check_motion_jet(base_twist, "base_twist", twist_rows, 6)
    elif base_twist is None:
        Vb = _EMPTY_TWIST
    else:
        Vb = check_motion_jet(base_twist, "base_twist", twist_rows, 6)
        if np.any(Vb):
            raise ValueError("base_twist: a fixed base does not move; pass None (or zeros)")
    return C0, Vb, check_motion_jet(q, "q", q_rows, n)


def configuration_args(model, base_pose, q):
    """``(C0, q)`` of a configuration for a kernel, as :func:`motion_args` (the
    kernel checks with :func:`check_configuration`): ``q`` is ``(n,)``, or a
    joint jet ``(rows, n)`` whose row 0 is read (the rule of motion jets)."""
    C0 = model.home_pose if base_pose is None else base_pose
    if plain(C0, 2):
        if plain(q, 1):
            return C0, q
        if plain(q, 2) and q.shape[0] > 0:
            return C0, q[0]
    return check_configuration_slow(model, base_pose, q)


def check_configuration_slow(model, base_pose, q):
    """Every check of :func:`check_configuration`, with messages; returns plain arrays."""
    C0 = model.home_pose if base_pose is None else check_pose(base_pose, "base_pose")
    a = as_array(q, "q", allow_nonfinite=True)
    n = model.n_joints
    if a.ndim == 2 and a.shape[0] > 0 and a.shape[1] == n:
        a = a[0]
    if a.shape != (n,):
        raise ValueError(f"q: expected shape ({n},), or a joint jet ({n} columns, row 0 read), "
                         f"got {a.shape}")
    if not _all_finite(a):
        raise ValueError("q: contains NaN or infinite values")
    return C0, a


_NO_APPLIED = np.zeros((0, 0, 6))
_NO_APPLIED.setflags(write=False)


def plain_applied(x):
    """``x`` goes to a kernel as it is: a plain 3-D array with at least one
    row (the kernels read zero rows as ``None``, so an empty array given by
    the caller is checked, and refused, in Python)."""
    return plain(x, 3) and x.shape[0] > 0


def applied_arg(model, applied, rows):
    """Applied wrench jets for a kernel: ``(rows, N, 6)`` or an empty array
    for ``None`` (no applied wrenches)."""
    if applied is None:
        return _NO_APPLIED
    if plain_applied(applied):
        return applied
    return check_applied_slow(model, applied, rows)


def check_applied_slow(model, applied, rows):
    if applied is None:
        return _NO_APPLIED
    return check_jet(applied, "applied", (rows, model.n_bodies, 6))


@njit(inline=True)
def is_applied(W_app, rows, N):
    """Status of the applied wrench jets (empty: none)."""
    return W_app.shape[0] == 0 or (W_app.shape[0] == rows and W_app.shape[1] == N
                                   and W_app.shape[2] == 6 and _all_finite(W_app.reshape(-1)))


def force_arg(x, name, rows, cols):
    """A force jet for a kernel, converted only when it is not a plain array."""
    if plain(x, 2):
        return x
    return check_jet(x, name, (rows, cols))


def status_message(status, model):
    """The message of a kernel status other than ``OK``: overflow, a singular
    base or joint pivot (naming the body), or, for a status that reports a bad
    argument, that the argument checks did not find it."""
    if status < 0 and status not in (NOT_FINITE, SINGULAR_BASE):
        return f"kernel status {status} but every argument passed its check"
    if status == NOT_FINITE:
        return ("result: not finite although every input is: the inputs are too large "
                "for float64 (overflow)")
    if status == SINGULAR_BASE:
        return (f"base {model.body_names[0]!r}: articulated inertia M^A_0 is not "
                f"positive definite at this configuration, so its acceleration is "
                f"undetermined (a massless floating base with too few massive "
                f"descendants?)")
    return (f"joint of body {model.body_names[status]!r} (q column {status - 1}): "
            f"singular pivot D = Sᵀ M^A S + I_a ≈ 0, the subtree it moves has no "
            f"inertia about or along the joint axis (e.g. a massless or point-mass "
            f"leaf on a revolute axis); add armature or inertia, or prescribe "
            f"its motion")


def raise_for(status, model, recheck):
    """Turn a kernel status into the exception it stands for (or return).

    ``recheck()`` repeats the argument checks in Python, with messages; a
    status that reports a bad argument must make it raise.
    """
    if status == OK:
        return
    if status < 0 and status not in (NOT_FINITE, SINGULAR_BASE):
        recheck()
        raise AssertionError(status_message(status, model))
    raise ValueError(status_message(status, model))
