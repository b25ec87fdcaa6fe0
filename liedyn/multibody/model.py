"""The model: a validated tree of rigid bodies, built once and then frozen
(SPEC §2).

A :class:`ModelBuilder` takes bodies (and named frames) one by one, checks
and copies every input, and :meth:`ModelBuilder.build` packs them into a
:class:`Model`: read-only float64 and int64 arrays, plus the compiled handle
the kernels read them through. A built model never changes; per-call scratch
lives in a :class:`liedyn.Workspace`.

Indexing
--------
Body 0 is the base. Bodies are numbered in the order they are added, and a
parent must exist before its child, so ``body_parent[j] < j``: increasing
index is a pre-order (parents first) and decreasing index a post-order
(children first). There are ``n = N − 1`` joints; joint ``i`` is column
``i`` of joint-space arrays (``q``, ``tau``) and moves body
``joint_body[i] = i + 1`` relative to its parent. Every body is also a frame
(frames ``0..N−1``); frames added with :meth:`ModelBuilder.add_frame` follow.
:class:`Model` lists every field with its shape: ``body_*`` fields have a
row per body, ``joint_*`` fields a row per joint, ``frame_*`` a row per frame.
"""

import hashlib
import threading
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..spatial import se3
from .._checks import (MAX_ORDER, as_array, check_order, check_pose, check_scalar, check_type,
                       counted)
from ._data import ModelData

JOINT_REVOLUTE, JOINT_PRISMATIC = 1, 2

# Inertia checks are relative to the largest entry of the 6×6 matrix.
INERTIA_RTOL = 1e-9


def _unit_axis(axis, name):
    a = as_array(axis, name, shape=(3,))
    scale = np.max(np.abs(a))              # first: |(1e200, 1e200, 0)| overflows float64
    e = a / scale if scale > 0.0 else a
    n = np.linalg.norm(e)
    if not scale * n > 1e-12:
        raise ValueError(f"{name}: joint axis must be non-zero, got {a}")
    return e / n


def _limit(x, name):
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name}: expected a real number, got bool")
    v = float(as_array(x, name, shape=(), allow_nonfinite=True))
    if np.isnan(v):
        raise ValueError(f"{name}: must not be NaN")
    return v


def _bound(x, name):
    """A non-negative bound, ``inf`` for none."""
    v = _limit(x, name)
    if v < 0.0:
        raise ValueError(f"{name}: must be non-negative (inf: no limit), got {v}")
    return v


def _joint_fields(self, prismatic):
    object.__setattr__(self, "axis", _unit_axis(self.axis, "axis"))
    if not prismatic:
        object.__setattr__(self, "point", as_array(self.point, "point", shape=(3,)).copy())
    if self.name is not None and (not isinstance(self.name, str) or not self.name):
        raise TypeError(f"name: expected a non-empty str or None, got {self.name!r}")
    object.__setattr__(self, "armature", check_scalar(self.armature, "armature", nonneg=True))
    object.__setattr__(self, "damping", check_scalar(self.damping, "damping", nonneg=True))
    lo, hi = _limit(self.lower, "lower"), _limit(self.upper, "upper")
    if lo > hi:
        raise ValueError(f"lower: must not exceed upper, got lower={lo}, upper={hi}")
    object.__setattr__(self, "lower", lo)
    object.__setattr__(self, "upper", hi)
    object.__setattr__(self, "effort", _bound(self.effort, "effort"))
    object.__setattr__(self, "velocity", _bound(self.velocity, "velocity"))
    for a in ("axis", "point"):
        if hasattr(self, a):
            getattr(self, a).setflags(write=False)


@dataclass(frozen=True)
class _Joint:
    """Keywords every joint takes: ``name`` (default: the child body's name),
    ``armature`` (reflected rotor inertia), ``damping`` (viscous coefficient,
    joint force ``−damping · q̇``), ``lower``/``upper`` (position limits,
    used by inverse kinematics, not by the dynamics), ``effort``/``velocity``
    (limits ``|τ| ≤ effort``, ``|q̇| ≤ velocity``, non-negative, ``inf``:
    none; kept for the user, not used by the dynamics)."""

    name: str = field(default=None, kw_only=True)
    armature: float = field(default=0.0, kw_only=True)
    damping: float = field(default=0.0, kw_only=True)
    lower: float = field(default=-np.inf, kw_only=True)
    upper: float = field(default=np.inf, kw_only=True)
    effort: float = field(default=np.inf, kw_only=True)
    velocity: float = field(default=np.inf, kw_only=True)

    def __post_init__(self):
        _joint_fields(self, prismatic=not hasattr(self, "point"))


@dataclass(frozen=True)
class Revolute(_Joint):
    """Revolute joint about ``axis`` through ``point`` (both in the child body's
    frame); keywords as :class:`_Joint` (``lower``/``upper`` in rad,
    ``effort`` in N m, ``velocity`` in rad/s)."""

    axis: np.ndarray
    point: np.ndarray = field(default_factory=lambda: np.zeros(3))


@dataclass(frozen=True)
class Prismatic(_Joint):
    """Prismatic joint along ``axis`` (child body's frame); keywords as
    :class:`_Joint` (``lower``/``upper`` in m, ``effort`` in N,
    ``velocity`` in m/s)."""

    axis: np.ndarray


def check_inertia(Mb, name="inertia"):
    """Split a 6×6 body inertia into ``(mass, com, J_c)`` after checking that
    the algorithms can use it: symmetric, lower-right block ``m I₃`` with
    ``m ≥ 0``, the coupling block ``m ĉ`` skew, and ``J_c`` symmetric positive
    semi-definite. The zero matrix is a massless body.

    Inertias that are usable but that no rigid body has (principal moments
    breaking the triangle inequality ``J1 + J2 ≥ J3``, or rotational inertia
    without mass, both common in robot description files) are accepted with
    a ``RuntimeWarning`` naming ``name``.
    """
    Mb = as_array(Mb, name, shape=(6, 6))
    scale = np.max(np.abs(Mb))
    if scale == 0.0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    tol = INERTIA_RTOL * scale
    if np.max(np.abs(Mb - Mb.T)) > tol:
        raise ValueError(f"{name}: spatial inertia must be symmetric")
    m = np.trace(Mb[3:, 3:]) / 3.0
    if m < -tol:
        raise ValueError(f"{name}: mass must be non-negative, got {m}")
    m = max(m, 0.0)
    if np.max(np.abs(Mb[3:, 3:] - m * np.eye(3))) > tol:
        raise ValueError(f"{name}: lower-right block must be mass · I₃")
    mc = Mb[:3, 3:]
    if np.max(np.abs(mc + mc.T)) > tol:
        raise ValueError(f"{name}: upper-right block must be m ĉ (skew-symmetric)")
    if m > tol:
        com = se3.vee(0.5 * (mc - mc.T)) / m
    elif np.max(np.abs(mc)) > tol:
        raise ValueError(f"{name}: a body without mass has no first moment (m ĉ must be zero)")
    else:
        m, com = 0.0, np.zeros(3)
    C = se3.hat(com)
    J = Mb[:3, :3] - m * C @ C.T
    J = 0.5 * (J + J.T)
    lam = np.linalg.eigvalsh(J)
    if lam[0] < -tol:
        raise ValueError(f"{name}: rotational inertia about the CoM is not positive "
                         f"semi-definite (principal moments {lam})")
    if m == 0.0:
        warnings.warn(f"{name}: rotational inertia without mass (principal moments {lam}); "
                      f"no rigid body has it, accepted as given", RuntimeWarning, stacklevel=3)
    elif lam[0] + lam[1] < lam[2] - tol:
        warnings.warn(f"{name}: principal moments {lam} break the triangle inequality "
                      f"J1 + J2 ≥ J3, so no rigid body has them; accepted as given",
                      RuntimeWarning, stacklevel=3)
    return m, com, J


def _check_name(name, arg="name"):
    if not isinstance(name, str) or not name:
        raise TypeError(f"{arg}: expected a non-empty str, got {name!r}")
    return name


@dataclass(frozen=True)
class _Body:
    name: str
    parent: int
    joint: object
    origin: np.ndarray
    mass: float
    com: np.ndarray
    rot_inertia: np.ndarray


class ModelBuilder:
    """Collects bodies and frames; :meth:`build` returns the frozen :class:`Model`.

    Parameters
    ----------
    floating_base : bool
        ``True``: the base moves on the whole of SE(3), with spatial twist
        ``V₀`` and wrench ``W₀``. ``False``: the base stays at its pose; ``W₀``
        is then the support reaction.
    gravity : (3,)
        Gravitational acceleration in the world frame.

    Every argument is checked and copied when it is given: changing an array
    afterwards does not change the builder or any model built from it.
    """

    def __init__(self, floating_base=True, gravity=(0.0, 0.0, -9.81)):
        self._floating_base = bool(check_type(floating_base, (bool, np.bool_), "floating_base",
                                              "bool"))
        self._gravity = as_array(gravity, "gravity", shape=(3,)).copy()
        self._bodies = []
        self._frames = []          # (name, body index, offset)
        self._names = {}           # body and frame names -> ("body" | "frame", index)
        self._joint_names = set()

    @property
    def n_bodies(self):
        return len(self._bodies)

    def add_body(self, name, parent, joint, origin=None, inertia=None):
        """Add a body and return its index.

        Parameters
        ----------
        name : str
            Unique among bodies and frames.
        parent : str | int | None
            Parent body name or index; ``None`` only for the first body (the base).
        joint : Revolute | Prismatic | None
            Joint between parent and this body; ``None`` only for the base.
        origin : (4, 4), optional
            Pose of this body's frame in its parent's frame at ``q = 0``
            (identity if omitted). For the base, its home pose in the world,
            used when a call passes ``base_pose=None``.
        inertia : (6, 6), optional
            Body inertia ``Mᵇ`` in the body frame, angular first
            (see :func:`liedyn.se3.spatial_inertia`); zero or ``None`` for a
            massless body. A floating base needs a non-zero inertia or
            massive descendants (forward dynamics says so if not).
        """
        _check_name(name)
        if name in self._names:
            raise ValueError(f"name: a body or frame called {name!r} already exists")
        A = np.eye(4) if origin is None else check_pose(origin, "origin").copy()
        if not self._bodies:
            if parent is not None:
                raise ValueError(f"parent: the first body is the base and takes parent=None, "
                                 f"got {parent!r}")
            if joint is not None:
                raise ValueError("joint: the base takes joint=None")
            pidx = -1
        else:
            if parent is None:
                raise ValueError(f"parent: the model already has base {self._bodies[0].name!r}; "
                                 f"body {name!r} needs a parent")
            pidx = self._resolve(parent, "parent")
            if not isinstance(joint, (Revolute, Prismatic)):
                raise TypeError(f"joint: expected Revolute or Prismatic for body {name!r}, "
                                f"got {type(joint).__name__}")
            jname = joint.name or name
            if jname in self._joint_names:
                raise ValueError(f"joint: a joint called {jname!r} already exists")
        m, com, J = (0.0, np.zeros(3), np.zeros((3, 3))) if inertia is None else \
            check_inertia(inertia, "inertia")
        if joint is not None:
            self._joint_names.add(joint.name or name)
        self._names[name] = ("body", len(self._bodies))
        self._bodies.append(_Body(name, pidx, joint, A, m, com, J))
        return len(self._bodies) - 1

    def add_frame(self, name, body, offset=None):
        """Add a named frame fixed on ``body`` (name or index) at ``offset``
        (its pose in the body's frame; identity if omitted). Returns the
        frame's index (bodies are frames ``0..N−1``)."""
        _check_name(name)
        if name in self._names:
            raise ValueError(f"name: a body or frame called {name!r} already exists")
        b = self._resolve(body, "body")
        X = np.eye(4) if offset is None else check_pose(offset, "offset").copy()
        self._names[name] = ("frame", len(self._frames))
        self._frames.append((name, b, X))
        return len(self._bodies) + len(self._frames) - 1

    def _resolve(self, body, arg):
        if isinstance(body, str):
            kind, i = self._names.get(body, (None, None))
            if kind != "body":
                raise ValueError(f"{arg}: unknown body {body!r}")
            return i
        if isinstance(body, (int, np.integer)) and not isinstance(body, (bool, np.bool_)):
            if not 0 <= body < len(self._bodies):
                raise ValueError(f"{arg}: index {body} out of range [0, {len(self._bodies)})")
            return int(body)
        raise TypeError(f"{arg}: expected a body name or index, got {type(body).__name__}")

    def build(self):
        """The frozen :class:`Model` of the bodies and frames added so far."""
        if not self._bodies:
            raise ValueError("model: has no bodies; add a base with add_body(name, None, None, ...)")
        return Model._pack(self._floating_base, self._gravity, tuple(self._bodies),
                           tuple(self._frames))


class _WorkspacePool(threading.local):
    """The workspaces that calls without ``workspace=`` use, per thread:
    ``{order: [Workspace, …]}`` (see :func:`liedyn.multibody.workspace.workspace_for`)."""

    def __init__(self):
        self.by_order = {}


def _joint_type(joint):
    return JOINT_REVOLUTE if isinstance(joint, Revolute) else JOINT_PRISMATIC


def _local_screw(joint):
    """``y_j``, the joint screw in the moved body's frame; the model keeps
    ``Y_j = Ad_{H_j} y_j`` (SPEC §2)."""
    e = joint.axis
    if isinstance(joint, Revolute):
        return np.concatenate([e, np.cross(joint.point, e)])
    return np.concatenate([np.zeros(3), e])


def _frozen(a):
    a = np.array(a)                      # a copy this model owns
    a.setflags(write=False)
    return a


class Model:
    """A frozen rigid-body tree with a floating or fixed base.

    Built by :meth:`ModelBuilder.build` (or a loader such as
    :func:`liedyn.load_urdf`). Arrays are read-only float64 (int64 where
    said) and nothing can be set. ``N`` bodies (body 0 is the base),
    ``n = N − 1`` joints, ``F`` frames; joint ``i`` is column ``i`` of ``q``
    and ``tau`` and moves body ``i + 1`` (see :mod:`liedyn.multibody.model`).

    Sizes and names:

    ======================  ============  ==========================================
    ``floating_base``       bool          the base moves on SE(3) (else fixed)
    ``n_bodies``            int           ``N``
    ``n_joints``            int           ``n = N − 1``
    ``nv``                  int           size of ``ν``: ``6 + n`` floating, ``n`` fixed
    ``n_frames``            int           ``F``: the ``N`` bodies, then added frames
    ``body_names``          (N,) tuple    body names
    ``joint_names``         (n,) tuple    joint names, in ``q`` column order
    ``frame_names``         (F,) tuple    frame names (body names first)
    ``gravity``             (3,)          gravitational acceleration ``g⃗``, world frame
    ``home_pose``           (4, 4)        ``A_0``: the base pose used for ``base_pose=None``
    ======================  ============  ==========================================

    Per body (row ``j`` is body ``j``):

    ======================  ============  ==========================================
    ``body_parent``         (N,) int64    parent index, −1 for the base
    ``body_origin``         (N, 4, 4)     ``A_j``: body frame in parent frame at q = 0
                                          (``A_0``: the base's home pose in the world)
    ``body_home``           (N, 4, 4)     ``H_j = H_{p(j)} A_j`` with ``H_0 = I``:
                                          body frame in the base frame at q = 0
    ``body_inertia``        (N, 6, 6)     ``Mᵇ_j``, body frame, angular first
    ``body_mass``           (N,)          ``m_j`` (zero for a massless body)
    ``body_com``            (N, 3)        centre of mass in the body frame
    ``body_rot_inertia``    (N, 3, 3)     rotational inertia about the CoM, body axes
    ======================  ============  ==========================================

    Per joint (row ``i`` is joint ``i``, column ``i`` of ``q``):

    ======================  ============  ==========================================
    ``joint_body``          (n,) int64    the body the joint moves (``i + 1``)
    ``joint_type``          (n,) int64    ``JOINT_REVOLUTE`` or ``JOINT_PRISMATIC``
                                          (constants of :mod:`liedyn.multibody.model`)
    ``joint_axis``          (n, 3)        unit axis in the moved body's frame
    ``joint_point``         (n, 3)        a point on a revolute axis, moved body's
                                          frame (zero for a prismatic joint)
    ``joint_screw``         (n, 6)        ``Y_j`` (``j = i + 1``): joint screw in the
                                          base frame at q = 0 (SPEC §2)
    ``joint_armature``      (n,)          reflected rotor inertia ``I_a``
    ``joint_damping``       (n,)          viscous damping ``b``
    ``joint_lower``         (n,)          lower position limit (``−inf``: none)
    ``joint_upper``         (n,)          upper position limit (``+inf``: none)
    ``joint_max_effort``    (n,)          effort limit on ``|τ_i|`` (``inf``: none)
    ``joint_max_velocity``  (n,)          velocity limit on ``|q̇_i|`` (``inf``: none)
    ======================  ============  ==========================================

    Per frame (row ``f`` is frame ``f``; rows ``0..N−1`` are the bodies):

    ======================  ============  ==========================================
    ``frame_body``          (F,) int64    body the frame is fixed on
    ``frame_offset``        (F, 4, 4)     frame pose in its body's frame
    ======================  ============  ==========================================

    Names map to indices with :meth:`body_index`, :meth:`joint_index` (the
    row of the ``joint_*`` fields) and :meth:`frame_index`; :attr:`digest`,
    shown by ``repr``, tells models of the same size apart.
    """

    __slots__ = ("floating_base", "gravity", "body_names", "joint_names", "frame_names",
                 "body_parent", "body_origin", "body_home", "body_inertia", "body_mass",
                 "body_com", "body_rot_inertia", "joint_body", "joint_type", "joint_axis",
                 "joint_point", "joint_screw", "joint_armature", "joint_damping", "joint_lower",
                 "joint_upper", "joint_max_effort", "joint_max_velocity", "frame_body",
                 "frame_offset", "home_pose", "n_bodies",
                 "n_joints", "nv", "n_frames", "_index", "_spec", "_data", "_pool",
                 "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("Model: build a model with liedyn.ModelBuilder(...).build() "
                        "or liedyn.load_urdf(...)")

    @classmethod
    def _pack(cls, floating_base, gravity, bodies, frames):
        self = object.__new__(cls)
        N, n = len(bodies), len(bodies) - 1
        put = lambda k, v: object.__setattr__(self, k, v)     # noqa: E731 (only here)
        put("_spec", (floating_base, gravity.copy(), bodies, frames))
        put("_pool", _WorkspacePool())
        put("floating_base", floating_base)
        put("n_bodies", N)                                 # N, bodies including the base
        put("n_joints", n)                                 # n = N − 1
        put("nv", n + (6 if floating_base else 0))         # size of ν: 6 + n floating, n fixed
        put("n_frames", N + len(frames))
        put("gravity", _frozen(gravity))
        put("body_names", tuple(b.name for b in bodies))
        put("joint_names", tuple(b.joint.name or b.name for b in bodies[1:]))
        put("frame_names", tuple(b.name for b in bodies) + tuple(f[0] for f in frames))
        joints = [b.joint for b in bodies[1:]]
        put("body_parent", _frozen(np.array([b.parent for b in bodies], dtype=np.int64)))
        put("joint_body", _frozen(np.arange(1, N, dtype=np.int64)))
        put("joint_type", _frozen(np.array([_joint_type(jt) for jt in joints], dtype=np.int64)))
        put("joint_axis", _frozen(np.array([jt.axis for jt in joints], dtype=float).reshape(n, 3)))
        put("joint_point", _frozen(np.array([getattr(jt, "point", np.zeros(3)) for jt in joints],
                                            dtype=float).reshape(n, 3)))
        for f in ("armature", "damping", "lower", "upper"):
            put("joint_" + f, _frozen(np.array([getattr(jt, f) for jt in joints], dtype=float)))
        for f in ("effort", "velocity"):
            put(f"joint_max_{f}", _frozen(np.array([getattr(jt, f) for jt in joints],
                                                     dtype=float)))
        A = np.array([b.origin for b in bodies]).reshape(N, 4, 4)
        put("body_origin", _frozen(A))
        put("home_pose", _frozen(A[0]))
        mass = np.array([b.mass for b in bodies], dtype=float)
        com = np.array([b.com for b in bodies], dtype=float).reshape(N, 3)
        J = np.array([b.rot_inertia for b in bodies], dtype=float).reshape(N, 3, 3)
        put("body_mass", _frozen(mass))
        put("body_com", _frozen(com))
        put("body_rot_inertia", _frozen(J))
        put("body_inertia", _frozen([se3.spatial_inertia(m, c, j) for m, c, j in zip(mass, com, J)]))
        H = np.empty((N, 4, 4))
        H[0] = np.eye(4)                                   # SPEC §2: H_0 = I (base frame)
        for j in range(1, N):
            H[j] = H[bodies[j].parent] @ A[j]              # SPEC §2: H_j = H_p A_j
        put("body_home", _frozen(H))
        Y = [se3.Ad(H[j]) @ _local_screw(jt) for j, jt in enumerate(joints, 1)]
        put("joint_screw", _frozen(np.array(Y, dtype=float).reshape(n, 6)))
        put("frame_body", _frozen(np.array(list(range(N)) + [f[1] for f in frames],
                                           dtype=np.int64)))
        put("frame_offset", _frozen(np.array([np.eye(4)] * N + [f[2] for f in frames])
                                    .reshape(N + len(frames), 4, 4)))
        index = {("body", nm): i for i, nm in enumerate(self.body_names)}
        index.update({("joint", nm): i for i, nm in enumerate(self.joint_names)})
        index.update({("frame", nm): i for i, nm in enumerate(self.frame_names)})
        put("_index", index)
        put("_data", ModelData(np.bool_(floating_base), self.body_parent, self.joint_screw,
                               self.body_home, self.body_mass, self.body_com,
                               self.body_rot_inertia, self.joint_armature, self.joint_damping,
                               self.gravity))
        return self

    def __setattr__(self, name, value):
        raise AttributeError(f"Model is frozen: cannot set {name!r} (build a new model instead)")

    def __delattr__(self, name):
        raise AttributeError(f"Model is frozen: cannot delete {name!r}")

    def __reduce__(self):
        return (_unpickle, self._spec)

    # -- sizes and lookups ----------------------------------------------------

    def _lookup(self, kind, name, arg):
        if not isinstance(name, str):
            raise TypeError(f"{arg}: expected a {kind} name (str), got {type(name).__name__}")
        try:
            return self._index[(kind, name)]
        except KeyError:
            known = [k for (kd, k) in self._index if kd == kind]
            shown = ", ".join(map(repr, known[:12])) + (", …" if len(known) > 12 else "")
            raise ValueError(f"{arg}: unknown {kind} {name!r}; the model's {len(known)} "
                             f"{kind}s: {shown}") from None

    def body_index(self, name):
        """Index of the body called ``name``."""
        return self._lookup("body", name, "name")

    def joint_index(self, name):
        """Column in ``q``/``tau`` of the joint called ``name``."""
        return self._lookup("joint", name, "name")

    def frame_index(self, name):
        """Index of the frame (body or added frame) called ``name``."""
        return self._lookup("frame", name, "name")

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

    @property
    def digest(self):
        """The first 8 hex digits of a SHA-256 of every field (names, tree,
        inertias, joints, frames, gravity): models that differ in anything
        print differently, equal ones alike."""
        h = hashlib.sha256()
        for k in Model.__slots__:
            v = None if k.startswith("_") else getattr(self, k)
            if isinstance(v, np.ndarray):
                h.update(k.encode() + str(v.shape).encode() + v.tobytes())
            elif isinstance(v, (bool, int, tuple)):
                h.update(k.encode() + repr(v).encode())
        return h.hexdigest()[:8]

    def __repr__(self):
        kind = "floating" if self.floating_base else "fixed"
        return (f"Model({kind} base, {counted(self.n_bodies, 'body', 'bodies')}, "
                f"{counted(self.n_joints, 'joint')}, digest {self.digest})")


def _unpickle(floating_base, gravity, bodies, frames):
    return Model._pack(floating_base, gravity, bodies, frames)


def check_model(model, name="model"):
    """``model`` itself if it is a built :class:`Model`."""
    return check_type(model, Model, name, "a liedyn.Model (from ModelBuilder(...).build())")


def check_model_order(model, order):
    """The ``(model, order)`` every algorithm starts from; returns the order."""
    if type(model) is not Model:
        check_model(model)
    if type(order) is int and 0 <= order <= MAX_ORDER:
        return order
    return check_order(order)
