"""URDF import: a robot description file → liedyn bodies and frames (SPEC §2).

Two steps. :func:`parse_urdf` is pure: it reads the XML, checks it and returns
an immutable :class:`Description` — the links and joints as written, and the
bodies (parent first) and named frames of the liedyn tree they make.
:func:`load_urdf` feeds that description to a :class:`liedyn.ModelBuilder`.

The base
--------
A URDF does not say whether its root link is fixed to the world or moves
freely, and a wrong guess loads without complaint: a fixed arm read as
floating flies off under gravity, a legged robot read as fixed hangs from its
pelvis. So ``floating_base`` has no default; calling :func:`load_urdf` or
:func:`parse_urdf` without it is a ``TypeError`` saying what to pass:
``floating_base=True`` for a free-flying or legged robot (the root link is the
floating base, in the whole of SE(3)), ``floating_base=False`` for a robot
fixed to the world, such as an arm (the model Pinocchio's
``buildModelFromUrdf`` gives without a root joint).

Conventions
-----------
* A URDF joint's ``<origin>`` is the pose of the child link frame in the parent
  link frame at ``q = 0``: it becomes the child body's ``origin``. The joint
  axis is in the child frame and a revolute axis passes through the child frame
  origin (``point = 0``). ``rpy`` are fixed-axis roll, pitch, yaw:
  ``R = R_z(yaw) R_y(pitch) R_x(roll)``.
* ``continuous`` is a revolute joint without position limits; ``<limit lower
  upper>`` gives the limits of revolute and prismatic joints (URDF defaults:
  0); ``<limit effort velocity>`` the effort and velocity limits of any
  moving joint (``inf`` when absent), kept in the model's
  ``joint_max_effort`` and ``joint_max_velocity`` and not used by the
  dynamics; ``<dynamics damping>`` the viscous joint damping ``b``.

Damping and friction
--------------------
Pinocchio's ``rnea`` and ``aba`` leave ``pinocchio.Model.damping`` out;
liedyn's dynamics include it: with damping kept, every ``τ^(k)`` includes
``b q^(k+1)`` (``τ`` includes ``b q̇``). :func:`load_urdf` chooses with
``damping=``: ``None`` (the default) keeps it and warns, naming the joints,
``"keep"`` keeps it without the warning, ``"drop"`` loads every joint
undamped. Coulomb friction (``<dynamics friction>``) is not modelled:
``friction=None`` (the default) loads without it and warns, naming the
joints, ``"drop"`` loads without it silently, ``"error"`` refuses a file
with non-zero friction (:class:`URDFError`).
* ``<inertial>``: mass ``m``, centre of mass ``c = xyz`` and the inertia matrix
  ``I`` about the centre of mass in axes rotated by ``rpy`` (``R``), so the
  link's body inertia in its own frame is
  ``Mᵇ = spatial_inertia(m, c, R I Rᵀ)``. A link without ``<inertial>`` is
  massless (``Mᵇ = 0``).
* Fixed joints are merged: the child link's inertia is moved into the frame of
  the body it is welded to, ``Ad_{T⁻¹}ᵀ Mᵇ Ad_{T⁻¹}`` with ``T`` the link's
  pose in that body, and added; the link stays as a named :class:`Frame` with
  offset ``T``; its children hang from the same body with composed origins.

Joint order (the q / tau columns)
---------------------------------
Bodies are numbered depth first, parents before children (pre-order), from
the root link; the child joints of each link are taken in increasing order of
joint name (code-point order, the same as byte order of the UTF-8 names), not
in the order they appear in the file. Joints that are not fixed get the next
body index in that walk, so the joint of body ``j`` is q column ``j − 1``.
This is the order of Pinocchio's URDF parser (urdfdom stores the joints in a
map sorted by name and Pinocchio walks the tree depth first), so
``joint_names`` equals ``pinocchio.buildModelFromUrdf(f).names[1:]``, and
``names[2:]`` with a free-flyer root joint.

What is read, what is ignored
-----------------------------
Read: ``<robot>``; ``<link name>`` with ``<inertial>`` (``<origin xyz rpy>``,
``<mass value>``, ``<inertia ixx … izz>``); ``<joint name type>`` with
``<origin>``, ``<parent link>``, ``<child link>``, ``<axis xyz>`` (default
``1 0 0``), ``<limit lower upper effort velocity>``,
``<dynamics damping friction>``, ``<mimic joint multiplier offset>``.

Ignored without a warning, because they do not change the dynamics of the
tree: ``<visual>`` and ``<collision>`` (geometry), ``<material>``,
``<transmission>``, ``<gazebo>`` and ``<ros2_control>`` (appearance, simulator
and control-hardware settings), and ``lower``/``upper`` on a continuous
joint (which URDF defines as ignored).

A :class:`URDFWarning` names the file by its base name (``"<string>"`` for
XML text), then the issue, then the joints or links it concerns, one per
line, indented, with their values; what to do about it, if anything, ends it.
Everything else that is not used gets one warning per file listing it: ``<calibration>``, ``<safety_controller>``, any unknown element
or attribute in ``<robot>``, ``<link>``, ``<inertial>`` or ``<joint>``, and
the links and joints left outside the tree when ``root=`` picks a subtree.
Mimic joints load as independent joints, as Pinocchio's parser does by
default, with a warning naming them. Inertias no rigid body can have (principal
moments violating ``J₁ + J₂ ≥ J₃``, or zero mass with a rotational inertia) but
still positive semi-definite are loaded as written with a warning; a moving
leaf body with no inertia along its joint (which makes forward dynamics
singular) is loaded with a warning.

Errors (:class:`URDFError`, a ``ValueError``; ``FileNotFoundError`` for a
missing file) name the file, or ``"<string>"`` for XML text, and the element:
malformed XML, a root element other than ``<robot>``, an unexpanded xacro
element, a missing name or attribute, a number that is not finite, duplicate
link or joint names, a joint whose parent or child link does not exist, a link
with two parent joints, a cycle, several roots (unless ``root=`` names one), a
planar or floating joint in the tree, an unknown joint type, a zero axis,
``lower > upper``, negative damping, effort or velocity limit; for a link:
negative or non-finite mass, a mass, inertia or pose whose products leave
float64 (a mass of 1e308), or a moving link whose rotational inertia about
the centre of mass (with the links welded to it) is not positive
semi-definite; a file (or text) over ``MAX_BYTES`` (64 MiB). Reading takes
time linear in the file, and a message names at most a few links or joints
and then their count. A link welded to a
positive semi-definite body only warns; the base of a fixed-base model never
moves (only its mass and centre of mass enter the support reaction), so its
rotational inertia is not checked.

Design note: the standard library's :mod:`xml.etree.ElementTree` parses the
file. yourdfpy and urchin import trimesh (yourdfpy pulls ~30 packages for it,
urchin a rendering stack) even with mesh loading off, and yourdfpy reads known
elements by name, so unknown ones vanish without a word. urdfdom-py is light
(lxml, PyYAML) and keeps mimic, damping, limits and inertial rpy, but reports
unknown tags only by writing to stderr through a process-wide hook, and its
value errors do not say which element failed. The subset of URDF that matters
for dynamics is a dozen elements; reading it directly lets every error and
warning name the file and element.
"""

import gc
import math
import os
import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..spatial import se3
from ..multibody.model import ModelBuilder, Prismatic, Revolute, _frozen
from ._messages import _INDENT, _clip, _file_name, _listing, _quoted, _some
from .description import (Body, Description, Frame, Inertial, Joint, Limit, Link, Mimic, _Edge,
                          _check_inertias, _com_moments, _overflows, _singular_leaves,
                          _split_inertia, _tree, _walk)

__all__ = ["URDFError", "URDFWarning", "Inertial", "Link", "Limit", "Mimic", "Joint",
           "Body", "Frame", "Description", "parse_urdf", "load_urdf"]


class URDFError(ValueError):
    """A URDF that cannot be loaded; the message names the file and element."""


class URDFWarning(UserWarning):
    """Something in a URDF that was loaded differently from what it says, or
    not at all."""


class _Required:
    """The default of ``floating_base``, which has none (module docstring,
    "The base"); shown as ``<required>`` in the signature."""

    def __repr__(self):
        return "<required>"


_REQUIRED = _Required()


def _check_floating_base(floating_base):
    if floating_base is _REQUIRED:
        raise TypeError("floating_base: required keyword, a URDF does not say whether its root "
                        "link moves: pass floating_base=True for a free-flying or legged robot, "
                        "floating_base=False for a robot fixed to the world such as an arm (as "
                        "Pinocchio's buildModelFromUrdf gives without a root joint)")
    if not isinstance(floating_base, (bool, np.bool_)):
        raise TypeError(f"floating_base: expected True or False, got {floating_base!r}")


# ------------------------------------------------------------------ reading --

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")

# Elements skipped whole without a warning: geometry, appearance, simulator and
# control-hardware settings.
_SILENT = {"robot": {"material", "transmission", "gazebo", "ros2_control"},
           "link": {"visual", "collision"}, "joint": set(), "inertial": set()}
# What is read from each element: attributes, child elements.
_SCHEMA = {
    "robot": ({"name", "version"}, {"link", "joint"}),
    "link": ({"name"}, {"inertial"}),
    "inertial": (set(), {"origin", "mass", "inertia"}),
    "joint": ({"name", "type"}, {"origin", "parent", "child", "axis", "limit", "dynamics", "mimic"}),
    "origin": ({"xyz", "rpy"}, set()),
    "mass": ({"value"}, set()),
    "inertia": ({"ixx", "ixy", "ixz", "iyy", "iyz", "izz"}, set()),
    "parent": ({"link"}, set()),
    "child": ({"link"}, set()),
    "axis": ({"xyz"}, set()),
    "limit": ({"lower", "upper", "effort", "velocity"}, set()),
    "dynamics": ({"damping", "friction"}, set()),
    "mimic": ({"joint", "multiplier", "offset"}, set()),
}
_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")


# The largest URDF read, in bytes (characters for XML text): the largest
# robot descriptions in use are a few MB; this bounds the memory and time a
# file can take (parsing runs at about 100 MB/s).
MAX_BYTES = 64 * 2**20


def _too_big(what, size):
    return URDFError(f"{what}: {size / 2**20:.1f} MiB, more than the {MAX_BYTES // 2**20} MiB "
                     f"a URDF may have (liedyn.parsers.urdf.MAX_BYTES)")


# "xacro" in the encodings expat reads: a file without it has no xacro element.
_XACRO = tuple("xacro".encode(e) for e in ("utf-8", "utf-16-le", "utf-16-be"))


def _read(source):
    """``(root element, label, whether the text mentions xacro)``: ``label``
    is the file path or ``"<string>"``.

    A file is read whole and parsed in one piece: ``ET.parse`` feeds expat
    64 KiB at a time, and expat before 2.6 rescans a token that spans
    chunks from its start at every chunk, which makes one long token (a
    comment, an attribute value) quadratic in its length. Entities are left
    to expat: an internal entity that expands beyond its amplification limit
    (a "billion laughs") is malformed XML, and ElementTree resolves no
    external entity (an undefined entity, malformed as well)."""
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
    elif isinstance(source, str):
        text = source.lstrip("\ufeff").strip()      # a byte-order mark, then whitespace
        if not text:
            raise URDFError("source: empty string; expected a URDF file path or URDF XML text")
        if text.startswith("<"):
            if len(text) > MAX_BYTES:
                raise _too_big("<string>", len(text))
            try:
                return ET.fromstring(text), "<string>", "xacro" in text
            except ET.ParseError as err:
                raise URDFError(f"<string>: malformed XML: {err}") from None
        if _URL.match(text):
            raise URDFError(f"{_quoted(text)}: URLs are not fetched; pass a local file path or "
                            f"the XML text")
        path = source
    else:
        raise TypeError(f"source: expected a file path (str or os.PathLike) or URDF XML text, "
                        f"got {type(source).__name__}")
    if not Path(path).is_file():
        what = "is a directory" if Path(path).is_dir() else "no such file"
        raise FileNotFoundError(f"{path!r}: {what}; expected a URDF file")
    with open(path, "rb") as fh:
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise _too_big(repr(path), os.path.getsize(path))
    try:
        return ET.fromstring(data), path, any(w in data for w in _XACRO)
    except ET.ParseError as err:
        raise URDFError(f"{path!r}: malformed XML: {err}") from None


class _Reader:
    """Element-level parsing with error messages that name file and element;
    collects what is ignored."""

    def __init__(self, label):
        self.label = label
        self.ignored = {}     # (kind, what) -> names of the links/joints it was in

    def fail(self, where, what):
        src = self.label if self.label == "<string>" else repr(self.label)
        raise URDFError(_clip(f"{src}: {where}: {what}"))

    def ignore(self, owner, what):
        """Record that ``what`` in ``owner`` (``(kind, name)``) is not used."""
        self.ignored.setdefault((owner[0], what), []).append(owner[1])

    def ignored_lines(self):
        """One item of the "ignored" warning per unused thing: the links or
        joints it is in listed below it."""
        out = []
        for (kind, what), names in self.ignored.items():
            if kind == "robot":
                out.append(f"{what} in <robot>" + (f" ({len(names)}×)" if len(names) > 1 else ""))
            else:
                out.append(_listing(f"{what} in {kind}{'s' if len(names) > 1 else ''}",
                                    map(repr, names), indent=_INDENT * 2))
        return out

    def check_schema(self, el, kind, owner):
        """Note unknown attributes and child elements of ``el`` (a ``kind``
        element of ``owner``, a ``(kind, name)`` pair)."""
        attrs, kids = _SCHEMA[kind]
        for a in el.attrib:
            if a not in attrs:
                self.ignore(owner, f"attribute {a!r} of <{el.tag}>")
        for c in el:
            if c.tag in kids:
                if c.tag in _SCHEMA and c.tag not in ("link", "joint"):
                    self.check_schema(c, c.tag, owner)
            elif c.tag not in _SILENT.get(kind, ()):
                inside = "" if kind == owner[0] else f" inside <{el.tag}>"
                self.ignore(owner, f"<{c.tag}>{inside}")

    def one(self, el, tag, where, required=False):
        found = el.findall(tag)
        if len(found) > 1:
            self.fail(where, f"{len(found)} <{tag}> elements, expected at most one")
        if not found and required:
            self.fail(where, f"missing <{tag}>")
        return found[0] if found else None

    def attr(self, el, name, where):
        v = el.get(name)
        if v is None or not v.strip():
            self.fail(where, f"<{el.tag}> needs a {name!r} attribute")
        return v.strip()

    def floats(self, el, name, n, default, where, required=False):
        """Attribute ``name`` of ``el`` as ``n`` finite numbers (a float when
        ``n`` is None)."""
        text = None if el is None else el.get(name)
        if text is None:
            if required:
                self.fail(where, f"<{el.tag}> needs a {name!r} attribute")
            return default
        try:
            vals = [float(t) for t in text.split()]
        except ValueError:
            vals = None
        count = 1 if n is None else n
        if vals is None or len(vals) != count or not all(math.isfinite(v) for v in vals):
            self.fail(where, f"<{el.tag} {name}={_quoted(text)}>: expected {count} finite "
                             f"number{'s' if count > 1 else ''}")
        return vals[0] if n is None else np.array(vals)

    def origin(self, el, where):
        o = self.one(el, "origin", where)
        return (self.floats(o, "xyz", 3, np.zeros(3), where),
                self.floats(o, "rpy", 3, np.zeros(3), where))

    def name(self, el, kind, k):
        """The name of the ``k``-th ``<link>`` or ``<joint>`` (``kind``); a
        missing name is an error placed by position."""
        name = el.get("name")
        if not name:
            self.fail(f"<{kind}> number {k + 1}", "missing 'name' attribute")
        return name

    def named(self, el, kind, k):
        """``(name, where)`` of the ``k``-th ``<link>`` or ``<joint>`` (``kind``),
        its schema checked."""
        name = self.name(el, kind, k)
        self.check_schema(el, kind, (kind, name))
        return name, f"{kind} {name!r}"

    def edge(self, el, k):
        """``(name, parent link, child link)`` of the ``k``-th ``<joint>``."""
        name, parent, child = el.get("name"), el.findall("parent"), el.findall("child")
        if name and len(parent) == len(child) == 1:           # the common case, quickly
            p, c = parent[0].get("link"), child[0].get("link")
            if p and c and p.strip() and c.strip():
                return _Edge(name, p.strip(), c.strip())
        name = self.name(el, "joint", k)
        where = f"joint {name!r}"
        return _Edge(name, self.attr(self.one(el, "parent", where, required=True), "link", where),
                     self.attr(self.one(el, "child", where, required=True), "link", where))

    def link(self, el, k):
        name, where = self.named(el, "link", k)
        iel = self.one(el, "inertial", where)
        if iel is None:
            return Link(name, None)
        xyz, rpy = self.origin(iel, where)
        mass = self.floats(self.one(iel, "mass", where, required=True), "value", None, None,
                           where, required=True)
        if mass < 0.0:
            self.fail(where, f"negative mass {mass}")
        ie = self.one(iel, "inertia", where, required=True)
        ixx, ixy, ixz, iyy, iyz, izz = (self.floats(ie, a, None, None, where, required=True)
                                        for a in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
        I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        inertial = Inertial(mass, _frozen(xyz), _frozen(rpy), _frozen(I))
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                huge = _overflows(inertial.body_inertia)
        except ValueError:                       # se3.spatial_inertia: m c overflows
            huge = True
        if huge:
            self.fail(where, f"<inertial>: mass {mass:g}, inertia up to {np.max(np.abs(I)):g} "
                             f"and centre of mass {xyz} make a spatial inertia beyond float64")
        return Link(name, inertial)

    def joint(self, el, k):
        name, where = self.named(el, "joint", k)
        jtype = self.attr(el, "type", where)
        if jtype not in _JOINT_TYPES + ("planar", "floating"):   # those two: see _describe
            self.fail(where, f"unknown joint type {jtype!r}; expected one of {_JOINT_TYPES}")
        parent = self.attr(self.one(el, "parent", where, required=True), "link", where)
        child = self.attr(self.one(el, "child", where, required=True), "link", where)
        xyz, rpy = self.origin(el, where)
        axis = self.floats(self.one(el, "axis", where), "xyz", 3, np.array([1.0, 0.0, 0.0]), where)
        scale = np.max(np.abs(axis))             # first: |(1e200, 1e200, 0)| overflows
        if jtype != "fixed" and not scale > 0.0:
            self.fail(where, f"zero <axis xyz={_quoted(el.find('axis').get('xyz'))}>")
        if scale > 0.0:
            axis = axis / scale
            axis = axis / np.linalg.norm(axis)
        limit = None
        lel = self.one(el, "limit", where)
        if lel is not None:
            limit = Limit(*(self.floats(lel, a, None, d, where) for a, d in
                            (("lower", 0.0), ("upper", 0.0), ("effort", None), ("velocity", None))))
            if jtype in ("revolute", "prismatic") and limit.lower > limit.upper:
                self.fail(where, f"<limit> lower {limit.lower} > upper {limit.upper}")
            for a in ("effort", "velocity"):
                if (getattr(limit, a) or 0.0) < 0.0:
                    self.fail(where, f"negative <limit {a}={getattr(limit, a)}>")
        dyn = self.one(el, "dynamics", where)
        damping = self.floats(dyn, "damping", None, 0.0, where)
        friction = self.floats(dyn, "friction", None, 0.0, where)
        if damping < 0.0:
            self.fail(where, f"negative <dynamics damping={damping}>")
        mimic = None
        mel = self.one(el, "mimic", where)
        if mel is not None:
            mimic = Mimic(self.attr(mel, "joint", where),
                          self.floats(mel, "multiplier", None, 1.0, where),
                          self.floats(mel, "offset", None, 0.0, where))
        return Joint(name, jtype, parent, child, _frozen(xyz), _frozen(rpy), _frozen(axis),
                     limit, damping, friction, mimic)


def _describe(source, floating_base, root, loading=False, friction=None):
    """``(Description, warning messages, indices of the bodies whose link
    inertias the messages call unrealizable)``.

    ``friction``: as :func:`load_urdf`'s (``None`` warns about non-zero
    Coulomb friction, ``"drop"`` does not, ``"error"`` raises).

    ``loading``: for :func:`load_urdf`, whose model builder checks each body's
    inertia again. A body of one link has that link's inertia, and the
    builder's warning about it names the file and the link, so the messages
    leave it out; for a body with links welded to it they keep the lines,
    which name the welded link at fault, and the builder's warning is dropped.

    The cyclic garbage collector is off meanwhile: the parsed tree is
    hundreds of thousands of objects in a large file, which every
    collection the reading triggers would traverse again (half the time of a
    40,000-link file), and reading makes no cycles.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _description(source, floating_base, root, loading, friction)
    finally:
        if enabled:
            gc.enable()


def _description(source, floating_base, root, loading, friction):
    """:func:`_describe` with the collector as it is."""
    _check_floating_base(floating_base)
    top, label, xacro = _read(source)
    rd = _Reader(label)
    if top.tag != "robot":
        rd.fail(f"<{top.tag}>", "not a URDF: the root element must be <robot>")
    for el in top.iter() if xacro else ():
        ns, _, local = el.tag[1:].partition("}") if el.tag.startswith("{") else ("", "", "")
        if "xacro" in ns:
            rd.fail("<robot>", f"unexpanded xacro element <xacro:{local}>: this is a xacro "
                               f"file; expand it with xacro first")
    rd.check_schema(top, "robot", ("robot", None))
    link_els, joint_els = top.findall("link"), top.findall("joint")
    # The tree first, from names alone: a file that is no tree is refused
    # before its elements are read one by one.
    names = tuple(_Edge(rd.name(el, "link", k), None, None) for k, el in enumerate(link_els))
    edges = tuple(rd.edge(el, k) for k, el in enumerate(joint_els))
    if not names:
        rd.fail("<robot>", "has no <link>")
    for kind, items in (("link", names), ("joint", edges)):
        seen = set()
        for it in items:
            if it.name in seen:
                rd.fail(f"{kind} {it.name!r}", f"two {kind}s are called {it.name!r}")
            seen.add(it.name)
    root, children, parent_joint = _tree(rd, names, edges, root)
    links = tuple(rd.link(el, k) for k, el in enumerate(link_els))
    joints = tuple(rd.joint(el, k) for k, el in enumerate(joint_els))
    joint_of = {j.name: j for j in joints}
    children = {name: [joint_of[e.name] for e in es] for name, es in children.items()}
    parent_joint = {name: joint_of[e.name] for name, e in parent_joint.items()}
    link_of = {l.name: l for l in links}
    bodies, frames, jtree = _walk(rd, root, children, parent_joint, link_of)

    notes = []
    strange = _check_inertias(rd, bodies, link_of, floating_base)
    if loading:
        strange = [(k, line) for k, line in strange if len(bodies[k].links) > 1]
    if strange:
        notes.append(_listing("inertias that no rigid body has, loaded as written (their "
                              "bodies are positive semi-definite)", [l for _, l in strange]))
    singular = _singular_leaves(bodies)
    if singular:
        notes.append(_listing("leaf bodies with no inertia along their joint (forward dynamics "
                              "is singular there)", singular))
    mimics = [f"{j.name!r} (mimics {j.mimic.joint!r})" for j in jtree
              if j.mimic is not None and j.type != "fixed"]
    if mimics:
        notes.append(_listing("mimic joints loaded as independent joints", mimics))
    unlimited = [repr(j.name) for j in jtree if j.type in ("revolute", "prismatic")
                 and j.limit is None]
    if unlimited:
        notes.append(_listing("revolute/prismatic joints without the <limit> URDF requires, "
                              "loaded without position limits", unlimited))
    rubbing = [j.name for j in jtree if j.friction != 0.0]
    if rubbing and friction == "error":
        rd.fail("<robot>", "Coulomb friction (<dynamics friction>) is not modelled and "
                           "friction='error' refuses it; joints with non-zero friction: "
                + _some(rubbing))
    if rubbing and friction is None:
        notes.append(_listing("Coulomb friction (<dynamics friction>) is not modelled: these "
                              "joints load without it", map(repr, rubbing),
                              ["friction='drop' accepts that silently, friction='error' "
                               "refuses the file"]))
    in_tree = {root} | {j.child for j in jtree}
    outside = [f"link {l.name!r}" for l in links if l.name not in in_tree] + \
              [f"joint {j.name!r}" for j in joints if j.parent not in in_tree]
    ignored = rd.ignored_lines()
    if outside:
        ignored.append(_listing(f"outside the tree below root {root!r}", outside,
                                indent=_INDENT * 2))
    if ignored:
        notes.append(_listing("ignored (no effect on the model)", ignored))
    src = _file_name(label)
    desc = Description(top.get("name", ""), label, root, links, joints, bodies, frames)
    return desc, [f"{src}: {n}" for n in notes], {k for k, _ in strange}


def parse_urdf(source, *, floating_base=_REQUIRED, root=None):
    """Read and check a URDF; return its liedyn bodies and frames.

    Parameters
    ----------
    source : str | os.PathLike
        A file path, or the URDF XML text itself (a string starting with
        ``<``). URLs and ``package://`` URIs are not fetched.
    floating_base : bool, required keyword
        ``True``: the root link is a floating base (a free-flying or legged
        robot); ``False``: it is fixed to the world (an arm, as Pinocchio's
        ``buildModelFromUrdf`` gives). No default: a URDF does not say
        (module docstring, "The base"). Here it decides which links must
        have a physical rotational inertia.
    root : str, optional
        Name of the link to use as the base; the tree below it is loaded and
        everything else is reported in a warning. Required when the file has
        several root links.

    Returns
    -------
    Description
        ``bodies`` (N bodies, parents first, in q-column order) and ``frames``.

    Raises
    ------
    FileNotFoundError
        ``source`` names no file.
    TypeError
        ``floating_base`` is missing or not a bool; ``source`` is neither a
        path nor a string; ``root`` is not a string.
    URDFError
        The file is not a URDF liedyn can load (see the module docstring).

    Warns
    -----
    URDFWarning
        Ignored elements, Coulomb friction (not modelled), mimic joints,
        unrealizable inertias, singular leaves.
    """
    desc, notes, _ = _describe(source, floating_base, root)
    for n in notes:
        warnings.warn(n, URDFWarning, stacklevel=2)
    return desc


_DAMPING = (None, "keep", "drop")
_FRICTION = (None, "drop", "error")


def _choice(value, allowed, name, why=""):
    if not any(value is a or (isinstance(value, str) and value == a) for a in allowed):
        raise ValueError(f"{name}: expected one of {', '.join(map(repr, allowed))}{why}, "
                         f"got {value!r}")
    return value


def _damping_note(desc):
    """The warning about the damping a model keeps, or ``None`` without damping."""
    damped = [f"{b.joint!r} (b = {b.damping:g})" for b in desc.bodies[1:] if b.damping > 0.0]
    if not damped:
        return None
    return _listing("viscous joint damping (<dynamics damping>) is kept at these joints", damped,
                    ["so tau includes b q' there (tau^(k) includes b q^(k+1)), unlike "
                     "Pinocchio's rnea and aba;",
                     "damping='drop' loads without it, damping='keep' keeps it without this "
                     "warning"])


def load_urdf(source, *, floating_base=_REQUIRED, gravity=(0.0, 0.0, -9.81), root=None,
              damping=None, friction=None):
    """Build a :class:`liedyn.Model` from a URDF.

    Parameters are those of :func:`parse_urdf` (``floating_base`` repeated
    here), plus ``gravity`` (3,) in the world frame, and ``damping`` and
    ``friction`` (module docstring, "Damping and friction"):

    floating_base : bool, required keyword
        ``True`` for a free-flying or legged robot, ``False`` for a robot
        fixed to the world such as an arm (Pinocchio's
        ``buildModelFromUrdf`` without a root joint). There is no default: a
        URDF does not say, and a wrong guess would load silently.
    damping : None | "keep" | "drop"
        ``<dynamics damping>``. ``None`` (default): kept, with a
        :class:`URDFWarning` naming the damped joints (``τ`` then includes
        ``b q̇``, which Pinocchio's ``rnea`` leaves out); ``"keep"``: kept
        without the warning; ``"drop"``: every joint loads undamped.
    friction : None | "drop" | "error"
        ``<dynamics friction>``: Coulomb friction is not modelled, so it is
        never kept. ``None`` (default): loaded without it, with a
        :class:`URDFWarning` naming the joints; ``"drop"``: loaded without it
        silently; ``"error"``: a joint with non-zero friction is a
        :class:`URDFError`.

    The model's ``body_names`` are the link names of the bodies,
    ``joint_names`` the URDF joint names in the q-column order of the module
    docstring, and each link merged by a fixed joint is a named frame;
    ``joint_max_effort`` and ``joint_max_velocity`` hold ``<limit effort
    velocity>`` (``inf`` when absent).

    Returns
    -------
    liedyn.Model
        Built and frozen; its base's home pose is the identity.

    Raises
    ------
    FileNotFoundError, TypeError, URDFError
        As :func:`parse_urdf`; a body the model builder refuses is reported
        as a :class:`URDFError` naming the file and the link.
    ValueError
        ``damping`` or ``friction`` is not one of the values above.

    Warns
    -----
    URDFWarning
        As :func:`parse_urdf` (less the friction warning with
        ``friction="drop"``); kept damping with ``damping=None``; the model
        builder's warnings about a body's
        inertia are repeated with the file and the link named. Each
        unrealizable inertia is reported once: by the builder for a body of
        one link, by the description (naming the link) for a link welded to
        a body. The base of a fixed-base model whose rotational inertia is
        not positive semi-definite is loaded with its negative principal
        moments set to zero: a base that never moves has no rotational
        dynamics, so only its mass and centre of mass enter a result (the
        support reaction).
    """
    _choice(damping, _DAMPING, "damping")
    _choice(friction, _FRICTION, "friction",
            " (Coulomb friction is not modelled, so it cannot be kept)")
    desc, notes, reported = _describe(source, floating_base, root, loading=True,
                                      friction=friction)
    src = desc.source if desc.source == "<string>" else repr(desc.source)   # for errors
    name = _file_name(desc.source)                                           # for warnings
    damped = _damping_note(desc) if damping is None else None
    if damped:
        notes.append(f"{name}: {damped}")
    inertias = [b.inertia for b in desc.bodies]
    if not floating_base:
        lam, tol = _com_moments(inertias[0])
        if lam[0] < -tol:
            inertias[0] = _clip_rotational(inertias[0])
            notes.append(f"{name}: " + _listing(
                "fixed base whose rotational inertia about the centre of mass is not positive "
                "semi-definite", [f"link {desc.root!r}: principal moments {lam}"],
                ["a fixed base never moves, so it is loaded with the negative moments set to "
                 "zero (mass and centre of mass as written)"]))
    for n in notes:
        warnings.warn(n, URDFWarning, stacklevel=2)
    builder = ModelBuilder(floating_base=floating_base, gravity=gravity)
    for k, (b, inertia) in enumerate(zip(desc.bodies, inertias)):
        parent = None if b.parent < 0 else desc.bodies[b.parent].name
        where = f"link {b.name!r}" + ("" if len(b.links) == 1 else
                                      f" (with {_some(b.links[1:])} welded to it)")
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always", RuntimeWarning)
            try:
                joint = None
                if b.joint_type is not None:
                    kind = Revolute if b.joint_type == "revolute" else Prismatic
                    joint = kind(b.axis, name=b.joint, lower=b.lower, upper=b.upper,
                                 damping=0.0 if damping == "drop" else b.damping,
                                 effort=b.effort, velocity=b.velocity)
                builder.add_body(b.name, parent, joint, origin=b.origin, inertia=inertia)
            except (ValueError, ArithmeticError) as err:
                joint_name = "" if b.joint is None else f", joint {b.joint!r}"
                raise URDFError(_clip(f"{src}: {where}{joint_name}: {err}")) from None
        for w in record:
            if issubclass(w.category, RuntimeWarning):
                what, _, issue = str(w.message).partition(": ")     # "inertia: principal …"
                if k in reported and what == "inertia":
                    continue                   # the notes named the welded link at fault
                warnings.warn(f"{name}: " + _listing(f"{what} of {where}", [issue]),
                              URDFWarning, stacklevel=2)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for f in desc.frames:
        try:
            builder.add_frame(f.name, desc.bodies[f.body].name, offset=f.offset)
        except (ValueError, ArithmeticError) as err:
            raise URDFError(_clip(f"{src}: link {f.name!r} (a frame): {err}")) from None
    try:
        return builder.build()
    except (ValueError, ArithmeticError) as err:
        raise URDFError(_clip(f"{src}: {err}")) from None


def _clip_rotational(M):
    """``M`` (6, 6) with the negative principal moments of its rotational
    inertia about the centre of mass set to zero (mass and CoM unchanged)."""
    m, c, J = _split_inertia(M)
    lam, E = np.linalg.eigh(J)
    return se3.spatial_inertia(m, c, (E * np.maximum(lam, 0.0)) @ E.T)
