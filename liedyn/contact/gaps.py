"""Signed gaps of point and sphere contacts against planes, and their jets
(SPEC §13.4).

A :class:`PointContact` is a sphere of radius ``ρ ≥ 0`` (``ρ = 0``: a point)
centred at the origin ``p`` of a frame, against a :class:`Plane`
``{x : nᵀx = h}`` fixed in the world with unit normal ``n`` pointing out of
the obstacle. Its signed gap and the jets of it are

    φ = nᵀ p − h − ρ,        φ^(k) = nᵀ p^(k)   (k ≥ 1)

(``φ > 0`` apart, ``φ = 0`` touching, ``φ < 0`` penetrating), from the
point jets ``p^(k)`` of the frame kinematics; the contact normal is ``n``
and the sphere's point nearest the plane is ``p − ρ n``. Only planes: mesh
or convex-shape collision is not part of liedyn.

The normal rows of a contact are those of ``Contact1D(frame, normal=n)``
(:func:`normal_constraints`): the touching point ``p − ρ n`` of a sphere
rolling on the plane has the normal velocity ``nᵀ ṗ`` of its centre, and a
normal force through the touching point has the moment it has at the
centre, so the rows and the force ``λ_n`` (along ``n``) are exact for
``ρ > 0`` too.

Glossary
--------
=========  ==============  ==============================================
``n``      (3,)            plane normal (unit, world)
``h``      float           plane height: ``nᵀx = h`` on the plane
``ρ``      float           sphere radius (``radius``)
``P``      (r+1, 3)        point jet ``p^(0..r)`` of the frame origin
``phi``    (r+1, nc)       gap jets ``φ^(0..r)``
=========  ==============  ==============================================
"""

import numpy as np

from .._checks import as_array, check_order
from ..algorithm.frames import frame_arg
from ..multibody.model import check_model
from ..multibody.results import _freeze, _frozen_setattr
from .constraints import (ConstraintSet, Contact1D, Contact3D, JointStop, RollingContact,
                          _kinematics, _stop_arg,
                          _point_jets)

__all__ = ["Plane", "PointContact", "point_contacts", "contact_gaps", "GapResult"]


def _real(x, name, low=None, high=None):
    """``x`` as a finite float in ``[low, high]``."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a real number, got {type(x).__name__}")
    x = float(x)
    if not np.isfinite(x):
        raise ValueError(f"{name}: expected a finite number, got {x}")
    if (low is not None and x < low) or (high is not None and x > high):
        rng = (f"≥ {low}" if high is None else f"in [{low}, {high}]")
        raise ValueError(f"{name}: expected a number {rng}, got {x}")
    return x


class Plane:
    """The plane ``{x : nᵀx = height}`` fixed in the world, its unit normal
    ``n`` (``normal`` normalised) pointing out of the obstacle, towards where
    the gap is positive. ``point``: a point on the plane, instead of
    ``height``.

    Raises
    ------
    ValueError
        A zero (or non-finite) normal, both ``height`` and ``point``.
    """

    __slots__ = ("normal", "height", "name")
    __setattr__ = _frozen_setattr

    def __init__(self, normal=(0.0, 0.0, 1.0), height=None, *, point=None, name="plane"):
        n = as_array(normal, "normal", shape=(3,))
        size = float(np.linalg.norm(n))
        if not size > 1e-12:
            raise ValueError(f"normal: expected a non-zero direction (3,), got {n.tolist()}: a "
                             "plane needs a normal")
        n = n / size
        if height is not None and point is not None:
            raise ValueError("height, point: give one of them, not both")
        if point is not None:
            h = float(n @ as_array(point, "point", shape=(3,)))
        else:
            h = _real(0.0 if height is None else height, "height")
        if not isinstance(name, str):
            raise TypeError(f"name: expected a str, got {type(name).__name__}")
        _freeze(self, normal=n, height=h, name=name)

    def __repr__(self):
        return f"Plane(normal={self.normal.round(6).tolist()}, height={self.height:g})"


class PointContact:
    """A sphere of radius ``radius`` (0: a point) centred at the origin of
    ``frame`` (name or index), against ``plane`` (default: the ground
    ``z = 0``). ``name``: the contact's name in results (default
    ``"<frame>"``, or ``"<frame>/<plane name>"`` when built by
    :func:`point_contacts` over several planes)."""

    __slots__ = ("frame", "plane", "radius", "name")
    __setattr__ = _frozen_setattr

    def __init__(self, frame, plane=None, radius=0.0, *, name=None):
        if plane is None:
            plane = Plane(name="ground")
        if not isinstance(plane, Plane):
            raise TypeError(f"plane: expected a liedyn.Plane, got {type(plane).__name__}")
        if not isinstance(frame, (str, int, np.integer)) or isinstance(frame, bool):
            raise TypeError(f"frame: expected a frame name (str) or index, got "
                            f"{type(frame).__name__}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name: expected a str, got {type(name).__name__}")
        _freeze(self, frame=frame, plane=plane, radius=_real(radius, "radius", 0.0), name=name)

    def __repr__(self):
        return f"PointContact({self.frame!r}, {self.plane!r}, radius={self.radius:g})"


def point_contacts(frames, planes=None, radius=0.0):
    """One :class:`PointContact` for every frame in ``frames`` against every
    plane in ``planes`` (default: the ground), frames first; named
    ``"<frame>"`` for one plane, ``"<frame>/<plane name>"`` for several."""
    if isinstance(frames, (str, int)):
        frames = [frames]
    if planes is None:
        planes = [Plane(name="ground")]
    elif isinstance(planes, Plane):
        planes = [planes]
    planes = list(planes)
    out = []
    for f in frames:
        for pl in planes:
            name = None if len(planes) == 1 else f"{f}/{pl.name}"
            out.append(PointContact(f, pl, radius, name=name))
    return out


class ContactList:
    """A list of point contacts checked against a model: for each, the frame
    index, its body and offset, ``n``, ``h``, ``ρ`` and a unique name."""

    __slots__ = ("model", "contacts", "frame", "body", "offset", "normal", "height", "radius",
                 "names")
    __setattr__ = _frozen_setattr

    def __init__(self, model, contacts, allow_empty=False):
        check_model(model)
        if isinstance(contacts, PointContact):
            contacts = [contacts]
        try:
            contacts = tuple(contacts)
        except TypeError:
            raise TypeError("contacts: expected a sequence of liedyn.PointContact, got "
                            f"{type(contacts).__name__}") from None
        if not contacts and not allow_empty:
            raise ValueError("contacts: expected at least one PointContact")
        frames, names = [], []
        for i, c in enumerate(contacts):
            if not isinstance(c, PointContact):
                raise TypeError(f"contacts[{i}]: expected a liedyn.PointContact, got "
                                f"{type(c).__name__}")
            try:
                f = frame_arg(model, c.frame, f"contacts[{i}].frame")
            except ValueError:
                raise ValueError(f"contacts[{i}].frame: the model has no frame {c.frame!r} "
                                 f"(frames: {', '.join(model.frame_names[:8])}"
                                 f"{', …' if model.n_frames > 8 else ''})") from None
            frames.append(f)
            name = c.name if c.name is not None else model.frame_names[f]
            if name in names:
                raise ValueError(f"contacts[{i}]: a contact called {name!r} already exists "
                                 "(give each a distinct name=)")
            names.append(name)
        frames = np.array(frames, np.int64)
        _freeze(self, model=model, contacts=contacts, frame=frames,
                body=np.array(model.frame_body)[frames],
                offset=np.array(model.frame_offset)[frames],
                normal=np.array([c.plane.normal for c in contacts]).reshape(-1, 3),
                height=np.array([c.plane.height for c in contacts]),
                radius=np.array([c.radius for c in contacts]), names=tuple(names))

    def __len__(self):
        return len(self.contacts)

    def subset(self, which):
        """The contacts at the indices ``which``, as a plain list."""
        return [self.contacts[i] for i in which]


def check_contacts(model, contacts, allow_empty=False):
    """``contacts`` as a :class:`ContactList` of ``model`` (``allow_empty``:
    none is accepted, for a run or a solve with joint stops only)."""
    if isinstance(contacts, ContactList) and contacts.model is model:
        return contacts
    return ContactList(model, contacts, allow_empty)


class StopList:
    """Unilateral joint stops (:class:`JointStop`) checked against a model:
    for each its ``q`` column ``j``, the sign ``s`` (+1 lower, −1 upper),
    the limit and a unique name. The gap of a stop is
    ``φ = s (q_j − limit)`` and its rate ``φ̇ = s q̇_j`` (SPEC §13.1): the
    rows of a unilateral stop are those of the :class:`JointStop` itself."""

    __slots__ = ("model", "stops", "joint", "sign", "limit", "names")
    __setattr__ = _frozen_setattr

    def __init__(self, model, stops, arg="stops"):
        check_model(model)
        if isinstance(stops, JointStop):
            stops = [stops]
        if isinstance(stops, (str, bytes)):
            raise TypeError(f"{arg}: expected a sequence of liedyn.JointStop, got a str")
        try:
            stops = tuple(stops)
        except TypeError:
            raise TypeError(f"{arg}: expected a sequence of liedyn.JointStop, got "
                            f"{type(stops).__name__}") from None
        joint, sign, limit, names = [], [], [], []
        for c, s in enumerate(stops):
            if not isinstance(s, JointStop):
                raise TypeError(f"{arg}[{c}]: expected a liedyn.JointStop, got "
                                f"{type(s).__name__}")
            try:
                j, sg, lim = _stop_arg(model, s, c)
            except ValueError as err:
                raise ValueError(str(err).replace(f"constraints[{c}]", f"{arg}[{c}]")) from None
            name = s.name or f"stop:{model.joint_names[j]}:{s.side}"
            if name in names:
                raise ValueError(f"{arg}[{c}]: a stop called {name!r} already exists (give "
                                 "each a distinct name=)")
            joint.append(j)
            sign.append(sg)
            limit.append(lim)
            names.append(name)
        _freeze(self, model=model, stops=stops, joint=np.array(joint, np.int64),
                sign=np.array(sign, float), limit=np.array(limit, float), names=tuple(names))

    def __len__(self):
        return len(self.stops)

    def subset(self, which):
        """The stops at the indices ``which``, as a plain list."""
        return [self.stops[i] for i in which]

    def gaps(self, q, qd):
        """``(φ (ns,), φ̇ (ns,))``: ``s (q_j − limit)`` and ``s q̇_j``."""
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        return self.sign * (q[self.joint] - self.limit), self.sign * qd[self.joint]


def check_stops(model, stops, arg="stops"):
    """``stops`` (``None``: none) as a :class:`StopList` of ``model``."""
    if isinstance(stops, StopList) and stops.model is model:
        return stops
    return StopList(model, () if stops is None else stops, arg)


def normal_constraints(cl, which=None, stops=()):
    """``ConstraintSet`` of ``Contact1D(frame, normal=n)`` for the contacts
    ``which`` (indices; default all): the normal rows of SPEC §13.4; then
    the rows of the joint stops ``stops`` (:class:`JointStop`)."""
    which = range(len(cl)) if which is None else which
    return ConstraintSet(cl.model, [Contact1D(int(cl.frame[i]), normal=cl.normal[i],
                                              name=cl.names[i]) for i in which] + list(stops))


def point_constraints(cl, which=None):
    """``ConstraintSet`` of ``Contact3D(frame)`` for the points and of
    ``RollingContact(frame, normal=n, radius=ρ)`` for the spheres among the
    contacts ``which``: the force is the world force at the touching point
    (the frame origin for a point, ``p − ρ n`` for a sphere, which rolls)."""
    which = range(len(cl)) if which is None else which
    return ConstraintSet(cl.model, [
        Contact3D(int(cl.frame[i]), name=cl.names[i]) if cl.radius[i] == 0.0 else
        RollingContact(int(cl.frame[i]), normal=cl.normal[i], radius=cl.radius[i],
                       name=cl.names[i]) for i in which])


def gap_jets(cl, fk, K):
    """``φ^(0..K)`` (K+1, nc) from a kinematics pass ``fk`` with twist jets
    of at least ``K`` rows."""
    phi = np.zeros((K + 1, len(cl)))
    for i in range(len(cl)):
        P = _point_jets(cl.model, fk, int(cl.body[i]), cl.offset[i], K)
        phi[:, i] = P @ cl.normal[i]                                # φ^(k) = nᵀ p^(k)
        phi[0, i] -= cl.height[i] + cl.radius[i]                    # φ = nᵀp − h − ρ
    return phi


class GapResult:
    """Output of :func:`contact_gaps` of order ``r``.

    Attributes
    ----------
    phi : (r+1, nc)
        Gap jets ``φ^(0..r)`` (m, m/s, …): ``φ > 0`` apart.
    normal : (nc, 3)
        Contact normals ``n`` (world, unit, out of the plane's obstacle).
    point : (nc, 3)
        The point of each sphere nearest its plane, ``p − ρ n`` (world).
    names : tuple of str
    """

    __slots__ = ("phi", "normal", "point", "names")
    __setattr__ = _frozen_setattr

    def __init__(self, **fields):
        _freeze(self, **fields)

    def gap_of(self, name):
        """The gap jet ``(r+1,)`` of the contact called ``name``."""
        if name not in self.names:
            raise ValueError(f"name: no contact called {name!r}; contacts: {list(self.names)}")
        return self.phi[:, self.names.index(name)]


def contact_gaps(model, contacts, base_pose, base_twist, q, order):
    """Signed gaps of point and sphere contacts against planes, and their
    time derivatives: ``φ = nᵀp − h − ρ``, ``φ^(k) = nᵀ p^(k)`` (SPEC §13.4).

    Parameters
    ----------
    model : Model
    contacts : sequence of PointContact
    base_pose : (4, 4) or None
    base_twist : (order, 6) or None (more rows: the first order are read)
        ``V₀^(0..order−1)``; ``None`` for a fixed base and for ``order = 0``.
    q : (order+1, n) (more rows: the first order+1 are read)
    order : int ≥ 0

    Returns
    -------
    GapResult

    Raises
    ------
    ValueError, TypeError
        A contact frame the model does not have, a repeated contact name,
        bad motion arguments.
    """
    check_model(model)
    cl = check_contacts(model, contacts)
    K = check_order(order)
    fk = _kinematics(model, base_pose, base_twist, q, K)
    phi = gap_jets(cl, fk, K)
    pts = np.array([_point_jets(model, fk, int(cl.body[i]), cl.offset[i], 0)[0]
                    for i in range(len(cl))]) - cl.radius[:, None] * cl.normal
    return GapResult(phi=phi, normal=cl.normal.copy(), point=pts, names=cl.names)
