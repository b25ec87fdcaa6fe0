"""MJCF import: a MuJoCo model file → a liedyn model (SPEC §2).

MuJoCo compiles the file (defaults, ``<include>``, ``inertiafromgeom``,
``<compiler angle>``, ``<frame>``, ``childclass``, …); :func:`load_mjcf`
reads the compiled ``mujoco.MjModel``, so every rule of the format is
MuJoCo's own. MuJoCo (PyPI package ``mujoco``, the ``mujoco`` extra) is
imported on first use; its absence raises an ``ImportError`` naming the extra.

The base
--------
The file says it: a tree whose root body (a child of ``<worldbody>``) has a
``<freejoint>`` (or ``<joint type="free">``) is a floating base, that body
being liedyn's base, its XML pose the model's ``home_pose``. Otherwise the
world is a fixed base (named ``"world"``, at the identity) and every tree
hanging from it by hinge or slide joints is the robot. When both kinds are
present (an arm on the world next to free objects: dm_control's
``manipulator``), the jointed trees are the robot and the free bodies are
left out; with several free trees and nothing jointed to the world
(``quadruped``: robot and ball), the free tree with the most degrees of
freedom is the robot. ``root=`` names a child of ``<worldbody>`` to load
alone instead (floating if it has a free joint, else hanging from the fixed
world). Trees left out are listed in an :class:`MJCFWarning`; bodies
without any joint below the world (scenery) are welded to a fixed base and
left out of a floating one without a word.

Bodies, joints, coordinates
---------------------------
* Bodies keep their MuJoCo names and their order (MuJoCo numbers bodies
  parents first, in file order), so liedyn's joint columns follow MuJoCo's
  joint order (its ``qvel`` order without the free joint's six entries).
* A body with hinge and slide joints becomes a chain: MuJoCo applies a
  body's joints one after the other, each in the frame the previous ones
  moved, so joint ``i`` of ``k`` gets a massless body named
  ``"<body>/<joint>"`` (``i < k``) and the last one the MJCF body itself,
  with its inertia and frames. A hinge is a :class:`Revolute` about
  ``axis`` through ``pos``; a slide a :class:`Prismatic` along ``axis``.
* A body without joints is welded to its parent: its inertia is added to the
  liedyn body it is welded to (moved into its frame) and it stays as a named
  frame, as ``load_urdf`` does with fixed joints.
* **Joint coordinates are** ``q = qpos − qpos0``: MuJoCo rotates a hinge by
  ``qpos − qpos0`` (``qpos0`` from the joint's ``ref``), so the body poses of
  the XML are liedyn's ``q = 0``; ``range`` is shifted alike into
  ``lower``/``upper``. The velocities and accelerations are MuJoCo's
  ``qvel``/``qacc`` entries. :mod:`liedyn.interop.mujoco` converts states
  and jets (and the free joint's quaternion and velocity convention).
* ``armature`` and ``damping`` are kept (MuJoCo applies the damping as the
  passive force ``−b q̇``, which liedyn's ``τ`` includes as ``b q̇``;
  ``damping="drop"`` leaves it out); an
  ``actuatorfrcrange`` (or ``forcerange`` of joint-driving motors with
  ``forcelimited``) is not read: ``effort`` stays ``inf``.
* Inertias are MuJoCo's compiled ones: mass ``body_mass``, centre of mass
  ``body_ipos``, principal moments ``body_inertia`` in the principal axes
  ``body_iquat``, so ``Mᵇ = spatial_inertia(m, ipos, R diag(I) Rᵀ)``,
  whether the file gives ``<inertial>`` or MuJoCo infers it from the geoms.
* Sites are named frames on their bodies, at their ``pos``/``quat``. MJCF
  names are per element kind (dm_control's humanoid has a site ``torso`` on
  the body ``torso``), liedyn's frames share one name space: bodies keep
  their names, and a site whose name a body or an earlier frame has is
  called ``"site/<name>"``. Unnamed elements are called ``"<kind><id>"``
  (MuJoCo's id), e.g. ``"body3"``, ``"joint0"``, ``"site7"``.
* Gravity is ``opt.gravity``, or zero when ``<flag gravity="disable"/>``
  (MuJoCo keeps ``opt.gravity`` and sets the flag).

What is refused, what is warned about
-------------------------------------
:class:`MJCFError` (a ``ValueError``): a file MuJoCo does not compile (its
message quoted); a ball joint in the robot (liedyn has one-degree-of-freedom
joints and a free base, and a ball is not a chain of hinges exactly: refused
by name); a tie between free trees (pass ``root=``); a ``root`` that is not
a child of ``<worldbody>``. (MuJoCo itself refuses a free joint below the
top level and sets its ``pos`` to zero, so ``qvel`` is always the velocity
of the body origin.)

:class:`MJCFWarning`, one per issue, naming the file's base name and then the
elements, one per line: trees left out; what liedyn's dynamics do not
contain, so ``τ`` is the joint force they would have to supply: joint springs
(``stiffness``), ``frictionloss``, tendons, actuators (``τ`` is the joint
force; actuators, their ``gear`` and transmissions are not read), equality
constraints, contacts (geoms that can collide), gravity compensation
(``gravcomp``) and fluid forces (``opt.density``/``viscosity``). The model
builder's warnings about an inertia are repeated with the body named.
"""

import os
import warnings

import numpy as np

from ..spatial import se3
from ..multibody.model import ModelBuilder, Prismatic, Revolute
from ._messages import _file_name, _listing

__all__ = ["MJCFError", "MJCFWarning", "load_mjcf", "element_name", "site_frame_name"]

# mjtJoint
_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3


class MJCFError(ValueError):
    """An MJCF that cannot be loaded; the message names the file and element."""


class MJCFWarning(UserWarning):
    """Something in an MJCF that was loaded differently from what it says, or
    not at all."""


def mujoco_module(who="liedyn.load_mjcf"):
    """The ``mujoco`` package, or an ``ImportError`` naming the extra."""
    try:
        import mujoco
    except ImportError as err:
        raise ImportError(f"{who} needs MuJoCo, which is not installed: pip install mujoco  "
                          f"(or pip install 'liedyn[mujoco]')") from err
    return mujoco


def element_name(mj_model, kind, i):
    """The name MuJoCo gives element ``i`` of ``kind`` (``"body"``,
    ``"joint"``, ``"site"``, …), or ``"<kind><i>"`` when it has none."""
    name = getattr(mj_model, kind)(int(i)).name
    return name if name else f"{kind}{int(i)}"


def site_frame_name(mj_model, body_names, s):
    """The name of MuJoCo site ``s``'s frame in a model with bodies
    ``body_names``: the site's name, or ``"site/<name>"`` when a MuJoCo body
    or a liedyn body has that name."""
    name = element_name(mj_model, "site", s)
    if name in body_names or _has_body(mj_model, name):
        return f"site/{name}"
    return name


def _has_body(m, name):
    try:
        m.body(name)
    except KeyError:
        return False
    return True


def _compile(mujoco, source):
    """``(MjModel, label)``: ``source`` is an ``MjModel``, a path or XML text."""
    if isinstance(source, mujoco.MjModel):
        return source, "<MjModel>"
    if isinstance(source, str) and source.lstrip().startswith("<"):
        label, compile_ = "<string>", mujoco.MjModel.from_xml_string
    elif isinstance(source, (str, os.PathLike)):
        label = os.fspath(source)
        if not os.path.isfile(label):
            raise FileNotFoundError(f"source: no MJCF file {label!r}")
        compile_ = mujoco.MjModel.from_xml_path
    else:
        raise TypeError(f"source: expected a path, MJCF text or a mujoco.MjModel, "
                        f"got {type(source).__name__}")
    try:
        return compile_(source if label == "<string>" else label), label
    except ValueError as err:
        raise MJCFError(f"{label}: MuJoCo does not compile it: {err}") from None


def _pose(pos, quat):
    T = np.eye(4)
    T[:3, :3] = se3.rotation_from_quat(np.asarray(quat) / np.linalg.norm(quat),
                                       quaternion_order="wxyz")
    T[:3, 3] = pos
    return T


def _body_inertia(m, b):
    """``Mᵇ`` (6, 6) of MuJoCo body ``b`` in its body frame."""
    R = _pose(np.zeros(3), m.body_iquat[b])[:3, :3]
    return se3.spatial_inertia(float(m.body_mass[b]), m.body_ipos[b],
                               (R * m.body_inertia[b]) @ R.T)


def _joints(m, b):
    return list(range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b]))


def _subtrees(m):
    """``{world child: its body ids}``, each in increasing id order."""
    root_of = {}
    trees = {}
    for b in range(1, m.nbody):
        p = int(m.body_parentid[b])
        r = b if p == 0 else root_of[p]
        root_of[b] = r
        trees.setdefault(r, []).append(b)
    return trees


def _choose(m, label, root):
    """``(root body id | None for a fixed base, kept body ids, left-out trees)``."""
    trees = _subtrees(m)
    free = {r for r in trees if m.body_jntnum[r] > 0 and m.jnt_type[m.body_jntadr[r]] == _FREE}
    jointed = [r for r in trees if r not in free and any(m.body_jntnum[b] for b in trees[r])]
    static = [r for r in trees if r not in free and r not in jointed]
    if root is not None:
        if not isinstance(root, str):
            raise TypeError(f"root: expected a body name or None, got {type(root).__name__}")
        names = {element_name(m, "body", r): r for r in trees}
        if root not in names:
            raise MJCFError(f"{label}: root {root!r} is not a child of <worldbody>; those are: "
                            + ", ".join(map(repr, names)))
        r = names[root]
        base, kept = (r, trees[r]) if r in free else (None, trees[r])
    elif jointed:
        base = None
        kept = sorted(b for r in jointed + static for b in trees[r])
    elif free:
        dofs = {r: sum(m.body_dofnum[b] for b in trees[r]) for r in free}
        most = max(dofs.values())
        best = [r for r in free if dofs[r] == most]
        if len(best) > 1:
            raise MJCFError(f"{label}: several free trees with {most} degrees of freedom ("
                            + ", ".join(repr(element_name(m, "body", r)) for r in best)
                            + "): pass root= naming the robot's root body")
        base, kept = best[0], trees[best[0]]
    else:
        base, kept = None, sorted(b for r in static for b in trees[r])
    kept_set = set(kept)
    left = [r for r in trees if r not in kept_set and (r in free or r in jointed)]
    balls = [element_name(m, "joint", j) for b in kept for j in _joints(m, b)
             if m.jnt_type[j] == _BALL]
    if balls:
        raise MJCFError(f"{label}: ball joints are not supported (liedyn has hinges, slides "
                        f"and a free base): " + ", ".join(map(repr, balls)))
    return base, kept, left


class _Plan:
    """The liedyn bodies (name, parent name, joint, origin, inertia) and frames
    (name, body name, offset) of the kept MuJoCo bodies."""

    def __init__(self):
        self.bodies = []        # [name, parent, joint, origin, inertia, MuJoCo body id]
        self.frames = []
        self.names = set()

    def body(self, name, parent, joint, origin, inertia, b):
        self.names.add(name)
        self.bodies.append([name, parent, joint, origin, inertia, b])
        return len(self.bodies) - 1

    def frame(self, name, body, offset):
        self.names.add(name)
        self.frames.append((name, body, offset))


def _joint(m, j, lower_upper, undamped):
    d = m.jnt_dofadr[j]
    kw = dict(name=element_name(m, "joint", j), armature=float(m.dof_armature[d]),
              damping=0.0 if undamped else float(m.dof_damping[d]), lower=lower_upper[0],
              upper=lower_upper[1])
    if m.jnt_type[j] == _HINGE:
        return Revolute(m.jnt_axis[j], m.jnt_pos[j], **kw)
    return Prismatic(m.jnt_axis[j], **kw)


def _limits(m, j):
    if not m.jnt_limited[j]:
        return -np.inf, np.inf
    q0 = m.qpos0[m.jnt_qposadr[j]]
    return float(m.jnt_range[j, 0] - q0), float(m.jnt_range[j, 1] - q0)


def _plan(m, label, base, kept, undamped):
    """Walk the kept bodies parents first: chains for bodies with joints,
    welds for bodies without."""
    plan = _Plan()
    # MuJoCo body id -> (plan body index, pose of the MuJoCo body frame in it)
    at = {}
    if base is None:
        at[0] = (plan.body("world", None, None, np.eye(4), np.zeros((6, 6)), 0), np.eye(4))
    else:
        a = m.jnt_qposadr[m.body_jntadr[base]]
        home = _pose(m.qpos0[a:a + 3], m.qpos0[a + 3:a + 7])
        name = element_name(m, "body", base)
        at[base] = (plan.body(name, None, None, home, _body_inertia(m, base), base), np.eye(4))
    for b in kept:
        if b == base:
            continue
        name = element_name(m, "body", b)
        k, T = at[int(m.body_parentid[b])]
        origin = T @ _pose(m.body_pos[b], m.body_quat[b])
        joints = _joints(m, b)
        if not joints:                                  # welded to its parent
            if name in plan.names:
                raise MJCFError(f"{label}: body {name!r}: name taken by an intermediate body")
            Ai = se3.Ad(se3.inv(origin))
            plan.bodies[k][4] = plan.bodies[k][4] + Ai.T @ _body_inertia(m, b) @ Ai
            plan.frame(name, plan.bodies[k][0], origin)
            at[b] = (k, origin)
            continue
        for i, j in enumerate(joints):
            last = i == len(joints) - 1
            jname = element_name(m, "joint", j)
            bname = name if last else f"{name}/{jname}"
            if bname in plan.names:
                raise MJCFError(f"{label}: body {bname!r}: name taken twice")
            k = plan.body(bname, plan.bodies[k][0], _joint(m, j, _limits(m, j), undamped),
                          origin if i == 0 else np.eye(4),
                          _body_inertia(m, b) if last else np.zeros((6, 6)), b)
        at[b] = (k, np.eye(4))
    kept_set = set(kept) | ({0} if base is None else set())
    body_names = [b[0] for b in plan.bodies]
    for s in range(m.nsite):
        b = int(m.site_bodyid[s])
        if b not in kept_set:
            continue
        name = site_frame_name(m, body_names, s)
        if name in plan.names:
            raise MJCFError(f"{label}: site {element_name(m, 'site', s)!r}: frame name "
                            f"{name!r} taken")
        k, T = at[b]
        plan.frame(name, plan.bodies[k][0], T @ _pose(m.site_pos[s], m.site_quat[s]))
    return plan


def _tree_kind(m, r):
    free = m.body_jntnum[r] and m.jnt_type[m.body_jntadr[r]] == _FREE
    return "free" if free else "jointed to the world"


def _notes(mujoco, m, base, kept, left):
    """The warnings' texts (without the file name), one per issue."""
    notes = []
    kept_set = set(kept)
    jnts = [j for b in kept for j in _joints(m, b)]
    body = lambda b: element_name(m, "body", b)           # noqa: E731
    joint = lambda j: element_name(m, "joint", j)         # noqa: E731
    if left:
        notes.append(_listing("trees left out (the robot is "
                              + ("the world's fixed base" if base is None else
                                 f"the free tree {body(base)!r}") + "; root= picks another)",
                              [f"{body(r)!r} ({_tree_kind(m, r)}, "
                               f"{sum(m.body_dofnum[b] for b in _subtrees(m)[r])} dofs)"
                               for r in left]))
    springs = [f"{joint(j)!r} (stiffness {m.jnt_stiffness[j]:g})" for j in jnts
               if m.jnt_stiffness[j] != 0.0]
    if springs:
        notes.append(_listing("joint springs (stiffness) are not modelled: tau includes the "
                              "spring force", springs))
    rubbing = [f"{joint(j)!r} (frictionloss {m.dof_frictionloss[m.jnt_dofadr[j]]:g})"
               for j in jnts if m.dof_frictionloss[m.jnt_dofadr[j]] != 0.0]
    if rubbing:
        notes.append(_listing("dry friction (frictionloss) is not modelled", rubbing))
    for kind, count, what in (("tendon", m.ntendon, "tendons are not modelled"),
                              ("actuator", m.nu, "actuators are not read: tau is the joint "
                                                 "force (gear and transmissions not applied)"),
                              ("equality", m.neq, "equality constraints are not modelled")):
        if count:
            notes.append(_listing(what, [", ".join(repr(element_name(m, kind, i))
                                                   for i in range(count))]))
    if not m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CONTACT:
        geoms = [element_name(m, "geom", g) for g in range(m.ngeom)
                 if (m.geom_bodyid[g] in kept_set or (base is None and m.geom_bodyid[g] == 0))
                 and (m.geom_contype[g] or m.geom_conaffinity[g])]
        if geoms:
            notes.append(_listing("contacts are not modelled; geoms that can collide",
                                  [", ".join(map(repr, geoms))]))
    comp = [f"{body(b)!r} ({m.body_gravcomp[b]:g})" for b in kept if m.body_gravcomp[b] != 0]
    if comp:
        notes.append(_listing("gravity compensation (gravcomp) is not modelled", comp))
    if m.opt.density != 0.0 or m.opt.viscosity != 0.0:
        notes.append(_listing("fluid forces are not modelled",
                              [f"density {m.opt.density:g}, viscosity {m.opt.viscosity:g}"]))
    return notes


def load_mjcf(source, *, root=None, damping="keep"):
    """Build a :class:`liedyn.Model` from an MJCF file through MuJoCo.

    Parameters
    ----------
    source : str | os.PathLike | mujoco.MjModel
        A file path, the MJCF XML text itself (a string starting with ``<``;
        relative ``<include>`` and asset paths then resolve from the working
        directory), or an already compiled ``mujoco.MjModel``.
    root : str, optional
        Name of a child of ``<worldbody>`` whose tree alone is loaded
        (module docstring, "The base"); default: the file's robot tree(s).
    damping : "keep" | "drop"
        Joint ``damping`` (MuJoCo's passive ``−b q̇``): kept (default, as
        MuJoCo's dynamics have it) or dropped (every joint undamped, as
        MuJoCo with ``<flag damper="disable"/>``).

    Returns
    -------
    liedyn.Model
        ``floating_base`` as the file says (a free joint on the root body);
        body, joint and frame names as in the module docstring; joint
        coordinates ``q = qpos − qpos0``.

    Raises
    ------
    ImportError
        MuJoCo is not installed.
    FileNotFoundError
        ``source`` names no file.
    TypeError
        ``source`` or ``root`` has the wrong type.
    MJCFError
        MuJoCo does not compile the file, or it holds what liedyn cannot
        load (module docstring).

    Warns
    -----
    MJCFWarning
        Trees left out; springs, dry friction, tendons, actuators, equality
        constraints, contacts, gravity compensation and fluid forces, which
        liedyn's dynamics do not contain; the model builder's inertia
        warnings, naming the body.
    """
    if not (isinstance(damping, str) and damping in ("keep", "drop")):
        raise ValueError(f"damping: expected 'keep' or 'drop', got {damping!r}")
    mujoco = mujoco_module()
    m, label = _compile(mujoco, source)
    base, kept, left = _choose(m, label, root)
    plan = _plan(m, label, base, kept, damping == "drop")
    name = _file_name(label)
    for n in _notes(mujoco, m, base, kept, left):
        warnings.warn(f"{name}: {n}", MJCFWarning, stacklevel=2)
    gravity = np.zeros(3) if m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY \
        else np.array(m.opt.gravity, float)
    builder = ModelBuilder(floating_base=base is not None, gravity=gravity)
    for bname, parent, joint, origin, inertia, b in plan.bodies:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always", RuntimeWarning)
            try:
                builder.add_body(bname, parent, joint, origin=origin, inertia=inertia)
            except ValueError as err:
                raise MJCFError(f"{label}: body {bname!r}: {err}") from None
        for w in record:
            if issubclass(w.category, RuntimeWarning):
                what, _, issue = str(w.message).partition(": ")
                warnings.warn(f"{name}: " + _listing(f"{what} of body {bname!r}", [issue]),
                              MJCFWarning, stacklevel=2)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for fname, body, offset in plan.frames:
        builder.add_frame(fname, body, offset=offset)
    return builder.build()
