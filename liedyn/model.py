"""The model: a validated tree of rigid bodies stored as flat arrays (SPEC §2).

A :class:`Model` is built once with :meth:`Model.add_body` and afterwards only
read. Everything the recursions need is a float64 or int64 array indexed by
body (``body_parent``, ``joint_screw``, ``body_mass``, …); per-call scratch lives
elsewhere (see :mod:`liedyn.workspace`).

Indexing
--------
Body 0 is the base. Bodies are numbered in the order they are added, and a
parent must exist before its child, so ``parent[j] < j``: increasing index is a
pre-order (parents first) and decreasing index a post-order (children first).
Joint ``j`` moves body ``j`` relative to its parent; its column in joint-space
arrays (``q``, ``tau``) is ``j − 1``. There are ``n = N − 1`` joints.

Array fields (``N`` bodies)
---------------------------
=====================  ============  ===========================================
``body_parent``        (N,) int64    parent index, −1 for the base
``joint_type``         (N,) int64    ``JOINT_NONE``, ``JOINT_REVOLUTE``, ``JOINT_PRISMATIC``
``joint_axis``         (N, 3)        unit axis in the body's own frame
``joint_point``        (N, 3)        a point on a revolute axis, body frame
``joint_armature``     (N,)          reflected rotor inertia ``I_a``
``joint_damping``      (N,)          viscous damping ``b``
``body_origin``        (N, 4, 4)     ``A_j``: body frame in parent frame at q = 0
``body_home``          (N, 4, 4)     ``H_j = H_{p(j)} A_j``
``home_pose_inv``      (4, 4)        ``H₀⁻¹``
``joint_screw``        (N, 6)        ``Y_j``, world frame at home (row 0 zero)
``body_inertia``       (N, 6, 6)     ``Mᵇ_j``, body frame, angular first
``body_mass``          (N,)          ``m_j``
``body_com``           (N, 3)        centre of mass in the body frame
``body_rot_inertia``   (N, 3, 3)     rotational inertia about the CoM, body axes
=====================  ============  ===========================================
"""

from dataclasses import dataclass, field

import numpy as np

from . import se3
from ._validate import as_array, check_pose

JOINT_NONE, JOINT_REVOLUTE, JOINT_PRISMATIC = 0, 1, 2

# Inertia checks are relative to the largest entry of the 6×6 matrix.
INERTIA_RTOL = 1e-9


def _unit_axis(axis, name):
    a = as_array(axis, name, shape=(3,))
    n = np.linalg.norm(a)
    if not n > 1e-12:
        raise ValueError(f"{name}: joint axis must be non-zero, got {a}")
    return a / n


def _check_scalar(x, name, nonneg=True):
    x = float(as_array(x, name, shape=()))
    if nonneg and x < 0.0:
        raise ValueError(f"{name}: must be non-negative, got {x}")
    return x


@dataclass(frozen=True)
class Revolute:
    """Revolute joint about ``axis`` through ``point`` (both in the child body's
    frame). ``armature`` is the reflected rotor inertia, ``damping`` the
    viscous coefficient (joint torque ``−damping · q̇``)."""

    axis: np.ndarray
    point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    armature: float = 0.0
    damping: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "axis", _unit_axis(self.axis, "axis"))
        object.__setattr__(self, "point", as_array(self.point, "point", shape=(3,)))
        object.__setattr__(self, "armature", _check_scalar(self.armature, "armature"))
        object.__setattr__(self, "damping", _check_scalar(self.damping, "damping"))


@dataclass(frozen=True)
class Prismatic:
    """Prismatic joint along ``axis`` (child body's frame)."""

    axis: np.ndarray
    armature: float = 0.0
    damping: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "axis", _unit_axis(self.axis, "axis"))
        object.__setattr__(self, "armature", _check_scalar(self.armature, "armature"))
        object.__setattr__(self, "damping", _check_scalar(self.damping, "damping"))


def check_inertia(Mb, name="inertia", allow_zero=False):
    """Split a 6×6 body inertia into ``(mass, com, J_c)`` after checking that it
    is physical: symmetric, lower-right block ``m I₃`` with ``m > 0``, the
    coupling block ``m ĉ`` skew, and ``J_c`` symmetric positive semi-definite
    with principal moments obeying the triangle inequality (equality, as for
    point masses and thin rods, is allowed)."""
    Mb = as_array(Mb, name, shape=(6, 6))
    scale = max(np.max(np.abs(Mb)), 1e-300)
    tol = INERTIA_RTOL * scale
    if allow_zero and np.max(np.abs(Mb)) == 0.0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    if np.max(np.abs(Mb - Mb.T)) > tol:
        raise ValueError(f"{name}: spatial inertia must be symmetric")
    m = np.trace(Mb[3:, 3:]) / 3.0
    if not m > 0.0:
        raise ValueError(f"{name}: mass must be positive, got {m}")
    if np.max(np.abs(Mb[3:, 3:] - m * np.eye(3))) > tol:
        raise ValueError(f"{name}: lower-right block must be mass · I₃")
    mc = Mb[:3, 3:]
    if np.max(np.abs(mc + mc.T)) > tol:
        raise ValueError(f"{name}: upper-right block must be m ĉ (skew-symmetric)")
    com = se3.vee(0.5 * (mc - mc.T)) / m
    C = se3.hat(com)
    J = Mb[:3, :3] - m * C @ C.T
    J = 0.5 * (J + J.T)
    lam = np.linalg.eigvalsh(J)
    if lam[0] < -tol:
        raise ValueError(f"{name}: rotational inertia about the CoM is not positive "
                         f"semi-definite (principal moments {lam})")
    if lam[0] + lam[1] < lam[2] - tol:
        raise ValueError(f"{name}: principal moments {lam} violate the triangle "
                         f"inequality J1 + J2 ≥ J3")
    return m, com, J


def _frozen(a):
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


class Model:
    """A rigid-body tree with a floating or fixed base.

    Parameters
    ----------
    floating_base : bool
        ``True``: the base moves on the whole of SE(3), with spatial twist
        ``V₀`` and wrench ``W₀``. ``False``: the base stays at its pose; ``W₀``
        is then the support reaction.
    gravity : (3,)
        Gravitational acceleration in the world frame.
    """

    def __init__(self, floating_base=True, gravity=(0.0, 0.0, -9.81)):
        if not isinstance(floating_base, (bool, np.bool_)):
            raise TypeError(f"floating_base: expected bool, got {type(floating_base).__name__}")
        self.floating_base = bool(floating_base)
        g = as_array(gravity, "gravity", shape=(3,))
        self.gravity = _frozen(g)
        self.gravity_twist = _frozen(np.concatenate([np.zeros(3), g]))   # SPEC §1: G
        self._names = []
        self._index = {}
        self._rows = []   # per body: (parent, jtype, axis, point, arm, damp, A, Mb, m, com, J)

    # -- construction ---------------------------------------------------------

    def add_body(self, name, parent, joint, origin=None, inertia=None):
        """Add a body and return its index.

        Parameters
        ----------
        name : str
            Unique name.
        parent : str | int | None
            Parent body name or index; ``None`` only for the first body (the base).
        joint : Revolute | Prismatic | None
            Joint between parent and this body; ``None`` only for the base.
        origin : (4, 4), optional
            Pose of this body's frame in its parent's frame at ``q = 0``
            (identity if omitted). For the base, its home pose in the world,
            used when a call passes ``base_pose=None``.
        inertia : (6, 6)
            Body inertia ``Mᵇ`` in the body frame, angular first
            (see :func:`liedyn.se3.spatial_inertia`). ``None`` only for the
            base of a fixed-base model.
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"name: expected a non-empty str, got {name!r}")
        if name in self._index:
            raise ValueError(f"name: a body called {name!r} already exists")
        A = np.eye(4) if origin is None else check_pose(origin, "origin")
        is_base = not self._rows
        if is_base:
            if parent is not None:
                raise ValueError(f"parent: the first body is the base and takes parent=None, got {parent!r}")
            if joint is not None:
                raise ValueError("joint: the base takes joint=None")
            if inertia is None and self.floating_base:
                raise ValueError("inertia: a floating base needs an inertia")
            pidx, jtype, axis, point, arm, damp = -1, JOINT_NONE, np.zeros(3), np.zeros(3), 0.0, 0.0
        else:
            if parent is None:
                raise ValueError(f"parent: the model already has base {self._names[0]!r}; "
                                 f"body {name!r} needs a parent")
            pidx = self._resolve(parent)
            if isinstance(joint, Revolute):
                jtype, point = JOINT_REVOLUTE, joint.point
            elif isinstance(joint, Prismatic):
                jtype, point = JOINT_PRISMATIC, np.zeros(3)
            else:
                raise TypeError(f"joint: expected Revolute or Prismatic for body {name!r}, "
                                f"got {type(joint).__name__}")
            axis, arm, damp = joint.axis, joint.armature, joint.damping
            if inertia is None:
                raise ValueError(f"inertia: body {name!r} needs a 6×6 inertia")
        m, com, J = check_inertia(np.zeros((6, 6)) if inertia is None else inertia,
                                  "inertia", allow_zero=is_base and not self.floating_base)
        Mb = se3.spatial_inertia(m, com, J)
        self._index[name] = len(self._names)
        self._names.append(name)
        self._rows.append((pidx, jtype, axis, point, arm, damp, A, Mb, m, com, J))
        for name in self._ARRAYS:          # rebuilt on next access: building a tree stays O(N)
            self.__dict__.pop(name, None)
        return len(self._names) - 1

    def _resolve(self, body, arg="parent"):
        if isinstance(body, str):
            if body not in self._index:
                raise ValueError(f"{arg}: unknown body {body!r}")
            return self._index[body]
        if isinstance(body, (int, np.integer)) and not isinstance(body, bool):
            if not 0 <= body < len(self._names):
                raise ValueError(f"{arg}: index {body} out of range [0, {len(self._names)})")
            return int(body)
        raise TypeError(f"{arg}: expected a body name or index, got {type(body).__name__}")

    _ARRAYS = ("body_parent", "joint_type", "joint_axis", "joint_point", "joint_armature",
               "joint_damping", "body_origin", "body_inertia", "body_mass", "body_com",
               "body_rot_inertia", "body_home", "home_pose_inv", "joint_screw", "preorder",
               "postorder")

    def __getattr__(self, name):
        # Only reached when the flat arrays are not built yet (or a body was
        # added since): build them all once, then they are plain attributes.
        if name in Model._ARRAYS and "_rows" in self.__dict__:
            self._build()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _build(self):
        rows = self._rows
        N = len(rows)
        col = lambda i, shape: np.array([r[i] for r in rows], dtype=float).reshape((N,) + shape)
        self.body_parent = _frozen(np.array([r[0] for r in rows], dtype=np.int64))
        self.joint_type = _frozen(np.array([r[1] for r in rows], dtype=np.int64))
        self.joint_axis = _frozen(col(2, (3,)))
        self.joint_point = _frozen(col(3, (3,)))
        self.joint_armature = _frozen(col(4, ()))
        self.joint_damping = _frozen(col(5, ()))
        self.body_origin = _frozen(col(6, (4, 4)))
        self.body_inertia = _frozen(col(7, (6, 6)))
        self.body_mass = _frozen(col(8, ()))
        self.body_com = _frozen(col(9, (3,)))
        self.body_rot_inertia = _frozen(col(10, (3, 3)))
        H = np.empty((N, 4, 4))
        Y = np.zeros((N, 6))
        for j in range(N):
            p = rows[j][0]
            H[j] = self.body_origin[j] if p < 0 else H[p] @ self.body_origin[j]
            if self.joint_type[j] == JOINT_REVOLUTE:
                Y[j] = se3.Ad(H[j]) @ np.concatenate([self.joint_axis[j],
                                                      np.cross(self.joint_point[j], self.joint_axis[j])])
            elif self.joint_type[j] == JOINT_PRISMATIC:
                Y[j] = se3.Ad(H[j]) @ np.concatenate([np.zeros(3), self.joint_axis[j]])
        self.body_home = _frozen(H)
        self.home_pose_inv = _frozen(se3.inv(H[0]) if N else np.eye(4))
        self.joint_screw = _frozen(Y)
        self.preorder = _frozen(np.arange(N, dtype=np.int64))
        self.postorder = _frozen(np.arange(N - 1, -1, -1, dtype=np.int64))

    # -- read-only views ------------------------------------------------------

    @property
    def n_bodies(self):
        """``N``, the number of bodies including the base."""
        return len(self._names)

    @property
    def n_joints(self):
        """``n = N − 1``."""
        return max(len(self._names) - 1, 0)

    @property
    def nv(self):
        """Size of the generalised velocity: ``6 + n`` floating, ``n`` fixed."""
        return self.n_joints + (6 if self.floating_base else 0)

    @property
    def body_names(self):
        return tuple(self._names)

    def body_index(self, name):
        """Index of the body called ``name``."""
        return self._resolve(name, "name")

    @property
    def home_pose(self):
        """``H₀``: the base pose used when a call passes ``base_pose=None``."""
        return self.body_home[0]

    def children(self, j):
        """Indices of the children of body ``j``."""
        return np.flatnonzero(self.body_parent == j)

    def ancestors(self, j):
        """Indices from body ``j`` up to the base, ``j`` first."""
        out = []
        while j >= 0:
            out.append(int(j))
            j = int(self.body_parent[j])
        return np.array(out, dtype=np.int64)

    def require_bodies(self):
        if not self._rows:
            raise ValueError("model: has no bodies; add a base with add_body(name, None, None, ...)")

    def __repr__(self):
        kind = "floating" if self.floating_base else "fixed"
        return f"Model({kind} base, {self.n_bodies} bodies, {self.n_joints} joints)"
