"""What :func:`liedyn.parse_urdf` returns, and the tree it is built into
(SPEC §2).

The records (:class:`Link`, :class:`Joint`, … and :class:`Description`) hold
a URDF's links and joints as written, immutable. The functions below check
that the joints make a tree, walk it depth first (child joints by name),
merge the links welded by fixed joints into bodies and frames, and check the
bodies' inertias (the rules are in :mod:`liedyn.parsers.urdf`'s docstring).
No XML is read here: a failure is reported through the reader's ``fail``,
which names the file and element."""

import itertools
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..spatial import se3
from ..multibody.model import INERTIA_RTOL, _frozen
from ._messages import _some


# ---------------------------------------------------------------- records --

def _rpy_matrix(rpy):
    """``R_z(yaw) R_y(pitch) R_x(roll)`` for URDF's ``rpy = (roll, pitch, yaw)``."""
    cr, sr = math.cos(rpy[0]), math.sin(rpy[0])
    cp, sp = math.cos(rpy[1]), math.sin(rpy[1])
    cy, sy = math.cos(rpy[2]), math.sin(rpy[2])
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _pose(xyz, rpy):
    T = np.eye(4)
    T[:3, :3] = _rpy_matrix(rpy)
    T[:3, 3] = xyz
    return T


@dataclass(frozen=True)
class Inertial:
    """A link's ``<inertial>``.

    Attributes
    ----------
    mass : float
    xyz : (3,)
        Centre of mass in the link frame.
    rpy : (3,)
        Orientation of the axes ``inertia`` is expressed in.
    inertia : (3, 3)
        Rotational inertia about the centre of mass, in those axes.
    """

    mass: float
    xyz: np.ndarray
    rpy: np.ndarray
    inertia: np.ndarray

    @property
    def body_inertia(self):
        """``Mᵇ = spatial_inertia(m, xyz, R I Rᵀ)`` (6, 6) in the link frame,
        angular first."""
        R = _rpy_matrix(self.rpy)
        return se3.spatial_inertia(self.mass, self.xyz, R @ self.inertia @ R.T)


@dataclass(frozen=True)
class Link:
    """A ``<link>``: its name and inertial (``None``: massless)."""

    name: str
    inertial: Inertial | None


@dataclass(frozen=True)
class Limit:
    """A joint's ``<limit>``; ``effort``/``velocity`` are ``None`` when absent."""

    lower: float
    upper: float
    effort: float | None
    velocity: float | None


@dataclass(frozen=True)
class Mimic:
    """A joint's ``<mimic>``: ``q = multiplier · q_joint + offset`` (not enforced)."""

    joint: str
    multiplier: float
    offset: float


@dataclass(frozen=True)
class Joint:
    """A ``<joint>`` as written.

    Attributes
    ----------
    name, type, parent, child : str
        ``type`` is ``"revolute"``, ``"continuous"``, ``"prismatic"`` or
        ``"fixed"``; ``parent``/``child`` are link names.
    xyz, rpy : (3,)
        ``<origin>``: child link frame in the parent link frame at ``q = 0``.
    axis : (3,)
        Unit axis in the child frame.
    limit : Limit | None
    damping, friction : float
        ``<dynamics>`` (0 when absent); friction is not used.
    mimic : Mimic | None
    """

    name: str
    type: str
    parent: str
    child: str
    xyz: np.ndarray
    rpy: np.ndarray
    axis: np.ndarray
    limit: Limit | None
    damping: float
    friction: float
    mimic: Mimic | None

    @property
    def origin(self):
        """(4, 4) pose of the child link frame in the parent link frame at ``q = 0``."""
        return _pose(self.xyz, self.rpy)


@dataclass(frozen=True)
class Body:
    """One liedyn body: a link that moves on its own joint (or the root) with
    the links welded to it by fixed joints.

    Attributes
    ----------
    name : str
        The link whose frame is the body frame.
    parent : int
        Index of the parent body in :attr:`Description.bodies`, −1 for the base.
    joint : str | None
        URDF joint name (``None`` for the base).
    joint_type : str | None
        ``"revolute"`` (also for ``continuous``) or ``"prismatic"``.
    axis : (3,)
        Unit joint axis in the body frame; a revolute axis passes through the
        body frame origin.
    lower, upper : float
        Position limits (``∓inf`` for continuous joints).
    effort, velocity : float
        Effort and velocity limits (``inf`` when absent).
    damping : float
        Viscous joint damping.
    origin : (4, 4)
        Body frame in the parent body's frame at ``q = 0`` (fixed joints above
        it composed in); identity for the base.
    inertia : (6, 6)
        Body inertia in the body frame, angular first: the link's own plus
        those of the links merged into it.
    links : tuple of str
        ``name`` followed by the links merged into this body.
    """

    name: str
    parent: int
    joint: str | None
    joint_type: str | None
    axis: np.ndarray
    lower: float
    upper: float
    effort: float
    velocity: float
    damping: float
    origin: np.ndarray
    inertia: np.ndarray
    links: tuple


@dataclass(frozen=True)
class Frame:
    """A link merged into a body by fixed joints: named frame ``name`` on body
    index ``body`` at pose ``offset`` (4, 4) in the body frame."""

    name: str
    body: int
    offset: np.ndarray


@dataclass(frozen=True)
class Description:
    """A parsed, checked URDF.

    Attributes
    ----------
    name : str
        ``<robot name>``.
    source : str
        The file path, or ``"<string>"``.
    root : str
        Root link: the base body.
    links, joints : tuple
        Every :class:`Link` and :class:`Joint` of the file, in file order.
    bodies : tuple of Body
        The tree below ``root``, parents first, in the joint order documented
        in the module (``bodies[j]`` has q column ``j − 1``).
    frames : tuple of Frame
        The links merged by fixed joints, in the same depth-first order.
    """

    name: str
    source: str
    root: str
    links: tuple
    joints: tuple
    bodies: tuple
    frames: tuple

    @property
    def joint_names(self):
        """Joint names in q-column order."""
        return tuple(b.joint for b in self.bodies[1:])

    @property
    def body_names(self):
        return tuple(b.name for b in self.bodies)


# --------------------------------------------------------------- the tree --

class _Edge(NamedTuple):
    """A joint as the tree sees it (a link: its name alone)."""

    name: str
    parent: str | None
    child: str | None


def _tree(rd, links, joints, root):
    """Check the graph of ``links`` and ``joints`` (records with ``name``,
    and ``parent``/``child`` link names); return ``(root, child joints of
    each link sorted by name, parent joint of each link)``, in linear time."""
    link_names = {l.name for l in links}
    if not (link_names.issuperset(j.parent for j in joints)
            and link_names.issuperset(j.child for j in joints)):
        for j in joints:                       # the first joint at fault, in file order
            for role, link in (("parent", j.parent), ("child", j.child)):
                if link not in link_names:
                    rd.fail(f"joint {j.name!r}", f"{role} link {link!r} does not exist")
    parent_joint = {j.child: j for j in joints}
    if len(parent_joint) < len(joints):
        first = {}
        for j in joints:
            if j.child in first:
                rd.fail(f"link {j.child!r}", f"has two parent joints, {first[j.child].name!r} "
                                             f"and {j.name!r} (closed loops are not supported)")
            first[j.child] = j
    children = {name: [] for name in link_names}
    for j in joints:
        children[j.parent].append(j)
    # Each link has at most one parent: a link that no root reaches lies on
    # (or below) a cycle; walk up from it until a link repeats.
    roots = [l.name for l in links if l.name not in parent_joint]
    reached = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        reached.add(name)
        stack.extend(j.child for j in children[name])
    if len(reached) < len(link_names):
        name = next(l.name for l in links if l.name not in reached)   # the first, in file order
        seen = {}                                    # link -> its place on the walk up
        while name not in seen:
            seen[name] = len(seen)
            name = parent_joint[name].parent
        n_cycle = len(seen) - seen[name]             # the walk's last links, back to `name`
        rd.fail(f"joint {parent_joint[name].name!r}",
                "closes a cycle through joints "
                + _some((parent_joint[c].name for c in itertools.islice(reversed(seen), n_cycle)),
                        n_cycle)
                + " (closed loops are not supported)")
    if root is None:
        if len(roots) > 1:
            rd.fail("<robot>", f"{len(roots)} root links (links that are no joint's child): "
                               f"{_some(roots)}; pass root= to choose one")
        root = roots[0]
    elif not isinstance(root, str):
        raise TypeError(f"root: expected a link name (str) or None, got {type(root).__name__}")
    elif root not in link_names:
        rd.fail("<robot>", f"root={root!r} is not a link of this robot")
    for name in children:
        children[name].sort(key=lambda j: j.name)
    return root, children, parent_joint


def _split_inertia(M):
    """``(m, c, J_c)`` of a body inertia ``M`` (6, 6): mass, centre of mass
    (zero without mass) and the symmetric part of the rotational inertia about it."""
    m = np.trace(M[3:, 3:]) / 3.0
    c = se3.vee(0.5 * (M[:3, 3:] - M[3:, :3])) / m if m > 0.0 else np.zeros(3)
    C = se3.hat(c)
    J = M[:3, :3] - m * C @ C.T              # parallel axes: J_O = J_c + m ĉ ĉᵀ
    return m, c, 0.5 * (J + J.T)


def _overflows(M):
    """Whether a body inertia ``M`` (6, 6), or its rotational inertia about
    the centre of mass, leaves float64 (a mass of 1e308 does: ``tr M``)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return not (np.isfinite(np.sum(np.abs(M))) and np.all(np.isfinite(_split_inertia(M)[2])))


def _com_moments(M):
    """Principal moments about the centre of mass of a body inertia ``M``
    (6, 6), and the tolerance ``INERTIA_RTOL · max|M|`` they are judged with
    (the convention of :func:`liedyn.check_inertia`)."""
    return np.linalg.eigvalsh(_split_inertia(M)[2]), INERTIA_RTOL * np.max(np.abs(M))


def _walk(rd, root, children, parent_joint, link_of):
    """Depth-first from ``root``, child joints by name (module docstring):
    ``(bodies, frames, joints of the tree in walk order)``."""
    order, stack = [], [root]
    while stack:
        name = stack.pop()
        order.append(name)
        stack.extend(j.child for j in reversed(children[name]))
    jtree = [parent_joint[name] for name in order[1:]]
    for j in jtree:
        if j.type in ("planar", "floating"):
            rd.fail(f"joint {j.name!r}", f"{j.type} joints are not supported inside the tree"
                    + (f"; for a floating base, load with root={j.child!r} and floating_base=True"
                       if j.type == "floating" else ""))
    rows = [dict(name=root, parent=-1, joint=None, joint_type=None, axis=np.zeros(3),
                 lower=-math.inf, upper=math.inf, effort=math.inf, velocity=math.inf,
                 damping=0.0, origin=np.eye(4), links=[root])]
    place = {root: (0, np.eye(4))}               # link -> (body index, pose in that body)
    home = [np.eye(4)]                           # body -> its pose in the root frame at q = 0
    frames = []
    for j in jtree:
        b, T = place[j.parent]
        with np.errstate(over="ignore", invalid="ignore"):
            A = T @ j.origin
            H = home[b] @ A                      # the child link in the root frame at q = 0
        if not np.all(np.isfinite(H)):
            rd.fail(f"joint {j.name!r}", f"<origin>: composed with the joints above it, the "
                                         f"pose of link {j.child!r} leaves float64")
        if j.type == "fixed":
            place[j.child] = (b, A)
            rows[b]["links"].append(j.child)
            frames.append(Frame(j.child, b, _frozen(A)))
            continue
        place[j.child] = (len(rows), np.eye(4))
        home.append(H)
        bounded = j.type != "continuous" and j.limit is not None
        rows.append(dict(name=j.child, parent=b, joint=j.name,
                         joint_type="prismatic" if j.type == "prismatic" else "revolute",
                         axis=j.axis, lower=j.limit.lower if bounded else -math.inf,
                         upper=j.limit.upper if bounded else math.inf,
                         **_rate_limits(j.limit), damping=j.damping, origin=A, links=[j.child]))
    Mb = [np.zeros((6, 6)) for _ in rows]
    for name in order:
        b, T = place[name]
        if link_of[name].inertial is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                Mb[b] += se3.transform_inertia(T, link_of[name].inertial.body_inertia)
            if _overflows(Mb[b]):
                rd.fail(f"link {name!r}", f"its inertia, moved into the frame of body "
                                          f"{rows[b]['name']!r} it is welded to, leaves float64")
    bodies = tuple(Body(**{**r, "axis": _frozen(r["axis"]), "origin": _frozen(r["origin"]),
                           "inertia": _frozen(0.5 * (M + M.T)),
                           "links": tuple(r["links"])})
                   for r, M in zip(rows, Mb))
    return bodies, tuple(frames), jtree


def _rate_limits(limit):
    """``{effort, velocity}`` of a ``<limit>`` (or ``None``), ``inf`` when absent."""
    out = {}
    for a in ("effort", "velocity"):
        v = None if limit is None else getattr(limit, a)
        out[a] = math.inf if v is None else v
    return out


def _check_inertias(rd, bodies, link_of, floating_base):
    """Raise for a moving body whose inertia is not positive semi-definite;
    return ``(body index, warning line)`` for link inertias no rigid body has.

    A moving body needs a positive semi-definite inertia, else the mass matrix
    can be indefinite. The base of a fixed-base model never moves: only its
    mass and centre of mass enter the support reaction.
    """
    strange = []
    for k, b in enumerate(bodies):
        if k == 0 and not floating_base:
            continue
        lam, tol = _com_moments(b.inertia)
        if lam[0] < -tol:
            welded = "" if len(b.links) == 1 else \
                f" (with links {_some(b.links[1:])} welded to it by fixed joints)"
            rd.fail(f"link {b.name!r}", f"rotational inertia about the centre of mass{welded} is "
                                        f"not positive semi-definite (principal moments {lam})")
        for name in b.links:
            inl = link_of[name].inertial
            if inl is None:
                continue
            lam, tol = _com_moments(inl.body_inertia)
            if lam[0] < -tol:
                strange.append((k, f"link {name!r}: principal moments {lam} not positive "
                                   f"semi-definite (the body {b.name!r} it is welded to is)"))
            elif lam[0] + lam[1] < lam[2] - tol:
                strange.append((k, f"link {name!r}: principal moments {lam} violate "
                                   f"J1 + J2 >= J3"))
            elif inl.mass == 0.0 and lam[2] > tol:
                strange.append((k, f"link {name!r}: zero mass with a rotational inertia"))
    return strange


def _singular_leaves(bodies):
    """Leaf bodies whose inertia along their joint, ``Sᵀ Mᵇ S``, is zero: their
    articulated inertia is singular (forward dynamics cannot run)."""
    has_child = {b.parent for b in bodies}
    out = []
    for k, b in enumerate(bodies[1:], start=1):
        if k in has_child:
            continue
        S = np.zeros(6)                  # joint screw in the body frame: (e, 0) or (0, e)
        if b.joint_type == "revolute":
            S[:3] = b.axis
        else:
            S[3:] = b.axis
        # Sᵀ Mᵇ S sums nine products, each rounded to eps · max|Mᵇ|: below 16 eps
        # of it the body has no inertia along its joint.
        if S @ b.inertia @ S <= 16.0 * np.finfo(float).eps * np.max(np.abs(b.inertia)):
            out.append(f"{b.name!r} (joint {b.joint!r})")
    return out
