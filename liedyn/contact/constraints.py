"""Constraints on frames: contacts with the world and loop closures (SPEC §13.1).

A constraint holds frame ``F_a`` (on body ``a``) to the world or to frame
``F_b`` (on body ``b``) in ``m_c`` directions; stacked, the constraints read
``J ν = 0`` with ``J`` of shape ``(m, nv)``, ``m = Σ m_c``. Each row of ``J``
is a velocity in the form the constraint's force is reported in:

=============  =====  ====================================================
kind           m_c    rows of ``J ν`` and the force ``λ_c``
=============  =====  ====================================================
``Contact6D``  6      ``(ω_a − ω_b, ṗ_a − v_b(p_a))``: the angular velocity
                      of ``a`` relative to ``b`` and the velocity of the
                      point of ``a`` at ``F_a``'s origin ``p_a`` relative to
                      the point of ``b`` there; ``λ_c = (moment about p_a,
                      force)``, world axes, acting on ``a`` (``−λ_c`` on ``b``)
``Contact3D``  3      ``ṗ_a − ṗ_b`` (``p_b`` the origin of ``F_b``, or the
                      anchor point): ``λ_c`` the world force on ``a`` at
                      ``p_a`` (``−λ_c`` on ``b`` at ``p_b``)
``Contact1D``  1      ``nᵀ (ṗ_a − ṗ_b)`` along a world unit normal ``n``:
                      ``λ_c`` the force along ``n``
``Rolling``    3      ``ċ + ρ n × ω``: the velocity of the material point of
                      a sphere (radius ``ρ``, centre ``c`` at ``F_a``'s
                      origin) at its touching point ``p = c − ρ n`` on a
                      world plane of normal ``n``; ``λ_c`` the world force
                      on ``a`` at ``p`` (``RollingContact``)
``JointStop``  1      ``s q̇_j`` (``s = +1`` at a lower limit, ``−1`` at an
                      upper one): ``λ_c`` the joint force of the stop
=============  =====  ====================================================

So ``J = T(p_a) (J_a − J_b)`` (6-D, ``T(p) = [[I, 0], [−p̂, I]]``),
``P(p_a) J_a − P(p_b) J_b`` (3-D, ``P(p) = [−p̂, I]``) and ``nᵀ`` of that
(1-D), ``P(p) J_a`` with ``p = c − ρ n`` (rolling) and ``s e_jᵀ`` (joint
stop), with ``J_a`` the spatial Jacobian of body ``a`` (its columns the
joint screws ``S_j``); ``Jᵀλ`` is the generalised force of the constraint
forces, and the jets ``J^(k)`` follow from the screw jets ``S_j^(k)`` and
the point jets ``p^(k)`` by the Leibniz rule (no numerical
differentiation). The touching point of a rolling sphere is not a material
point: its jets are ``p^(k) = c^(k)`` (``k ≥ 1``, ``n`` is fixed), so
``(J ν)^(k) = c^(k+1) + ρ n × ω^(k)`` (SPEC §13.1).

Directions are fixed in the world. A contact with the world may carry an
anchor (the world pose, or point, the frame is held at), which defines the
position error ``φ`` used by Baumgarte stabilisation; see
:meth:`ConstraintSet.anchored`.
"""

from typing import NamedTuple

import numpy as np

from ..spatial import se3
from .._checks import as_array, check_motion_slow, check_order
from ..algorithm.frames import frame_arg, position_jet
from ..algorithm.kinematics import forward_kinematics
from ..multibody.model import JOINT_REVOLUTE, check_model
from ..multibody.results import _freeze, _frozen_setattr, _hat
from ..multibody.workspace import binomials

__all__ = ["Contact6D", "Contact3D", "Contact1D", "RollingContact", "JointStop",
           "ConstraintSet", "constraint_jacobian", "constraint_error", "constraint_wrenches",
           "KIND_6D", "KIND_3D", "KIND_1D", "KIND_ROLLING", "KIND_STOP"]

# Kind codes of ConstraintData.kind; ROWS[kind] is the number of rows m_c.
KIND_6D, KIND_3D, KIND_1D, KIND_ROLLING, KIND_STOP = 6, 3, 1, 7, 8
ROWS = {KIND_6D: 6, KIND_3D: 3, KIND_1D: 1, KIND_ROLLING: 3, KIND_STOP: 1}
LABELS = {KIND_6D: "6d", KIND_3D: "3d", KIND_1D: "1d", KIND_ROLLING: "rolling",
          KIND_STOP: "stop"}
WORLD = -1
SIDES = {"lower": 1.0, "upper": -1.0}


class _Spec:
    """One constraint as the user states it; checked against a model by
    :class:`ConstraintSet`."""

    __slots__ = ("frame", "other", "name", "anchor", "normal", "radius")
    kind = None
    __setattr__ = _frozen_setattr

    def __init__(self, frame, other=None, *, name=None, anchor=None, normal=None, radius=0.0):
        _name_arg(name)
        if other is not None and anchor is not None:
            raise ValueError("anchor: only a contact with the world (other=None) has an anchor; "
                             "a loop's error is measured between its two frames")
        _freeze(self, frame=frame, other=other, name=name, anchor=anchor, normal=normal,
                radius=radius)

    def __repr__(self):
        other = "world" if self.other is None else repr(self.other)
        return f"{type(self).__name__}({self.frame!r}, {other})"


class Contact6D(_Spec):
    """A 6-D contact or weld: frame ``frame`` cannot move relative to the world
    (``other=None``) or to frame ``other`` on another body (a loop cut at a
    rigid joint). ``anchor``: the world pose (4, 4) it is held at (world
    contacts only; needed for position-level stabilisation)."""

    __slots__ = ()
    kind = KIND_6D

    def __init__(self, frame, other=None, *, name=None, anchor=None):
        super().__init__(frame, other, name=name, anchor=anchor)


class Contact3D(_Spec):
    """A 3-D point contact or ball joint: the origin of ``frame`` cannot move
    relative to the world (``other=None``) or to the origin of frame
    ``other``. ``anchor``: the world point (3,) it is held at."""

    __slots__ = ()
    kind = KIND_3D

    def __init__(self, frame, other=None, *, name=None, anchor=None):
        super().__init__(frame, other, name=name, anchor=anchor)


class Contact1D(_Spec):
    """A 1-D contact: the origin of ``frame`` cannot move along the world
    direction ``normal`` (3,), keyword (normalised here), relative to the
    world (``other=None``) or to the origin of frame ``other``. ``anchor``: a
    world point (3,) on the constraint plane."""

    __slots__ = ()
    kind = KIND_1D

    def __init__(self, frame, other=None, *, normal, name=None, anchor=None):
        super().__init__(frame, other, name=name, anchor=anchor, normal=_normal_arg(normal))


class RollingContact(_Spec):
    """A sphere rolling without slipping on a plane fixed in the world
    (a round foot with friction): the sphere of radius ``radius`` (ρ > 0,
    keyword) centred at the origin ``c`` of ``frame`` touches the plane of
    world unit normal ``normal`` (3,), keyword, normalised here, at
    ``p = c − ρ n``. The material point of the sphere at ``p`` cannot move:
    three rows, world axes, ``ċ + ρ n × ω = 0``, and the force ``λ`` (3,) is
    the world force on the body at ``p`` (SPEC §13.1). The normal row is
    holonomic (``nᵀ c − h − ρ = 0``), the tangential ones are not: the
    position error is ``φ = n (nᵀ p − h)``, zero along the plane.
    ``anchor``: a world point (3,) on the plane (``h = nᵀ anchor``)."""

    __slots__ = ()
    kind = KIND_ROLLING

    def __init__(self, frame, *, normal, radius, name=None, anchor=None):
        if isinstance(radius, (bool, np.bool_)) or not isinstance(
                radius, (int, float, np.integer, np.floating)):
            raise TypeError(f"radius: expected a real number > 0 (m), got {type(radius).__name__}")
        rho = float(radius)
        if not (np.isfinite(rho) and rho > 0.0):
            raise ValueError(f"radius: expected a finite number > 0 (m), got {rho}; a point "
                             "(radius 0) is a Contact3D")
        super().__init__(frame, None, name=name, anchor=anchor, normal=_normal_arg(normal),
                         radius=rho)


class JointStop:
    """A hard stop of a joint (a joint limit held as a constraint): the row
    ``s q̇_j`` with ``s = +1`` for ``side="lower"`` (position error
    ``q_j − limit``) and ``s = −1`` for ``side="upper"`` (``limit − q_j``,
    with the sign of the row: ``s (q_j − limit)``), ``J = s e_jᵀ``,
    ``J̇ = 0``. Its force ``λ`` is the joint force (N m or N) the stop
    applies along ``s``: ``λ ≥ 0`` pushes away from the stop (SPEC §13.1).

    Parameters
    ----------
    joint : str or int
        The joint's name or its column in ``q``.
    side : {"lower", "upper"}
    limit : float, keyword
        The stop's position; default ``model.joint_lower`` or
        ``model.joint_upper`` of the joint (which must then be finite).
    name : str, keyword
        Default ``"stop:<joint>:<side>"``.

    Notes
    -----
    :func:`liedyn.simulate` holds joint stops given in ``constraints=``
    (bilateral, every stabilization); given in ``joint_stops=`` they are
    unilateral, with their own touch-down and lift-off events (SPEC
    §10.2), as in :func:`liedyn.impact` and
    :func:`liedyn.unilateral_forward_dynamics` (``stops=``).
    """

    __slots__ = ("joint", "side", "limit", "name")
    kind = KIND_STOP
    __setattr__ = _frozen_setattr

    def __init__(self, joint, side, *, limit=None, name=None):
        if isinstance(joint, (bool, np.bool_)) or not isinstance(joint, (str, int, np.integer)):
            raise TypeError(f"joint: expected a joint name (str) or q column (int), got "
                            f"{type(joint).__name__}")
        if not isinstance(side, str):
            raise TypeError(f"side: expected 'lower' or 'upper', got {type(side).__name__}")
        if side not in SIDES:
            raise ValueError(f"side: expected 'lower' or 'upper', got {side!r}")
        if limit is not None:
            if isinstance(limit, (bool, np.bool_)) or not isinstance(
                    limit, (int, float, np.integer, np.floating)):
                raise TypeError(f"limit: expected a real number, got {type(limit).__name__}")
            limit = float(limit)
            if not np.isfinite(limit):
                raise ValueError(f"limit: expected a finite number, got {limit}")
        _name_arg(name)
        _freeze(self, joint=joint, side=side, limit=limit, name=name)

    def __repr__(self):
        return f"JointStop({self.joint!r}, {self.side!r})"


def _name_arg(name):
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name: expected a str, got {type(name).__name__}")


def _normal_arg(normal):
    """A world direction (3,), normalised."""
    n = as_array(normal, "normal", shape=(3,))
    size = float(np.linalg.norm(n))
    if not size > 1e-12:
        raise ValueError(f"normal: expected a non-zero direction (3,), got {n.tolist()}")
    return n / size


class ConstraintData(NamedTuple):
    """The packed constraint arrays the compiled kernels read (one row per
    constraint ``c``, ``m`` rows in all)."""
    kind: np.ndarray          # (nc,) int64: KIND_6D, KIND_3D, KIND_1D, KIND_ROLLING, KIND_STOP
    row: np.ndarray           # (nc+1,) int64: rows row[c]:row[c+1] of J and λ
    body_a: np.ndarray        # (nc,) int64 (a joint stop: the body its joint moves)
    body_b: np.ndarray        # (nc,) int64, −1 for the world
    offset_a: np.ndarray      # (nc, 4, 4): F_a in body a's frame
    offset_b: np.ndarray      # (nc, 4, 4): F_b in body b's frame, or the anchor in the world
    normal: np.ndarray        # (nc, 3): the 1-D and rolling contacts' normal (zeros otherwise)
    anchored: np.ndarray      # (nc,) bool: the position error φ is defined
    radius: np.ndarray        # (nc,): ρ of a rolling contact (zero otherwise)
    sign: np.ndarray          # (nc,): s of a joint stop, +1 lower, −1 upper (zero otherwise)
    limit: np.ndarray         # (nc,): the joint stop's position (zero otherwise)


def _frozen(a):
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


class ConstraintSet:
    """A frozen list of constraints on one model.

    Parameters
    ----------
    model : Model
    constraints : sequence of Contact6D, Contact3D, Contact1D, RollingContact, JointStop
        In the order of the rows of ``J`` and ``λ``.

    Attributes
    ----------
    model : Model
    names : tuple of str
        One per constraint (``"<kind>:<frame>"``, ``"…-<other>"``, or
        ``"stop:<joint>:<side>"`` when not given).
    kinds : tuple of str
        ``"6d"``, ``"3d"``, ``"1d"``, ``"rolling"`` or ``"stop"``.
    n_rows : int
        ``m``, the number of rows of ``J``.
    rows : tuple of slice
        The rows of ``J`` and ``λ`` of each constraint.
    loop : (nc,) bool
        Which constraints join two bodies of the tree.
    data : ConstraintData
        The packed arrays (read-only).

    Raises
    ------
    ValueError, TypeError
        An unknown frame or joint, a constraint of a fixed base's base to
        the world, both frames on one body, a repeated name, a bad anchor or
        normal, a joint stop without a finite limit (the message names the
        constraint).
    """

    __slots__ = ("model", "names", "kinds", "n_rows", "rows", "loop", "data", "_index")
    __setattr__ = _frozen_setattr

    def __init__(self, model, constraints):
        check_model(model)
        what = "Contact6D, Contact3D, Contact1D, RollingContact or JointStop"
        if isinstance(constraints, (_Spec, JointStop)):
            constraints = [constraints]
        if isinstance(constraints, (str, bytes)):
            raise TypeError(f"constraints: expected a sequence of {what} (e.g. "
                            "[Contact3D('foot')]), got a str")
        try:
            specs = list(constraints)
        except TypeError:
            raise TypeError(f"constraints: expected a sequence of {what}, got "
                            f"{type(constraints).__name__}") from None
        nc = len(specs)
        kind = np.zeros(nc, np.int64)
        body_a = np.zeros(nc, np.int64)
        body_b = np.full(nc, WORLD, np.int64)
        off_a = np.tile(np.eye(4), (nc, 1, 1))
        off_b = np.tile(np.eye(4), (nc, 1, 1))
        normal = np.zeros((nc, 3))
        anchored = np.zeros(nc, bool)
        radius, sign, limit = np.zeros(nc), np.zeros(nc), np.zeros(nc)
        names, index = [], {}
        for c, s in enumerate(specs):
            if not isinstance(s, (_Spec, JointStop)):
                raise TypeError(f"constraints[{c}]: expected {what}, got {type(s).__name__}")
            kind[c] = s.kind
            if isinstance(s, JointStop):
                j, sign[c], limit[c] = _stop_arg(model, s, c)
                label = s.name or f"stop:{model.joint_names[j]}:{s.side}"
                body_a[c] = model.joint_body[j]
                anchored[c] = True
            else:
                label = self._frame_constraint(model, s, c, body_a, body_b, off_a, off_b,
                                               anchored)
                if s.normal is not None:
                    normal[c] = s.normal
                radius[c] = s.radius
            if label in index:
                raise ValueError(f"constraints[{c}]: a constraint called {label!r} already exists "
                                 "(give each a distinct name=)")
            index[label] = c
            names.append(label)
        row = np.zeros(nc + 1, np.int64)
        row[1:] = np.cumsum([ROWS[k] for k in kind])
        data = ConstraintData(*(_frozen(a) for a in (kind, row, body_a, body_b, off_a, off_b,
                                                     normal, anchored, radius, sign, limit)))
        _freeze(self, model=model, names=tuple(names),
                kinds=tuple(LABELS[k] for k in kind), n_rows=int(row[-1]),
                rows=tuple(slice(int(row[c]), int(row[c + 1])) for c in range(nc)),
                loop=_frozen(body_b != WORLD), data=data, _index=index)

    @staticmethod
    def _frame_constraint(model, s, c, body_a, body_b, off_a, off_b, anchored):
        """Row ``c`` of the packed arrays of a constraint on frames; returns
        its name."""
        fa = _frame_index(model, s.frame, f"constraints[{c}].frame")
        label = s.name
        if label is None:
            label = f"{LABELS[s.kind]}:{model.frame_names[fa]}"
            if s.other is not None:
                label += "-" + model.frame_names[_frame_index(model, s.other,
                                                              f"constraints[{c}].other")]
        body_a[c] = model.frame_body[fa]
        off_a[c] = model.frame_offset[fa]
        if s.other is None:
            if body_a[c] == 0 and not model.floating_base:
                raise ValueError(f"constraint {label!r}: frame {model.frame_names[fa]!r} is "
                                 "on the fixed base, which cannot move: nothing to constrain")
            if s.anchor is not None:
                off_b[c] = _anchor_arg(s, label)
                anchored[c] = True
            return label
        fb = _frame_index(model, s.other, f"constraints[{c}].other")
        body_b[c] = model.frame_body[fb]
        off_b[c] = model.frame_offset[fb]
        anchored[c] = True
        if body_b[c] == body_a[c]:
            raise ValueError(f"constraint {label!r}: both frames are on body "
                             f"{model.body_names[body_a[c]]!r}: a body cannot move "
                             "relative to itself")
        if body_b[c] == 0 and not model.floating_base:
            body_b[c] = WORLD                    # the fixed base is the world
            off_b[c] = model.home_pose @ off_b[c]
        if body_a[c] == 0 and not model.floating_base:
            raise ValueError(f"constraint {label!r}: frame {model.frame_names[fa]!r} is "
                             "on the fixed base; put the moving body's frame first")
        return label

    def __len__(self):
        return len(self.names)

    def __reduce__(self):
        """Pickled by its fields (the set is frozen, so the default, which sets
        attributes, cannot rebuild it): Dask and multiprocessing send it to
        other processes."""
        return (_unpickle_set, (self.model, self.names, self.kinds, self.n_rows, self.rows,
                                self.loop, tuple(self.data), self._index))

    def __repr__(self):
        return f"ConstraintSet({len(self)} constraints, {self.n_rows} rows: {', '.join(self.names)})"

    def index(self, name):
        """Index of the constraint called ``name``."""
        try:
            return self._index[name]
        except (KeyError, TypeError):
            raise ValueError(f"constraint: no constraint called {name!r}; the set has "
                             f"{list(self.names)}") from None

    def anchored(self, base_pose, q):
        """A copy whose contacts with the world are anchored where their frames
        are at configuration ``(base_pose, q (n,))`` (a rolling contact: at
        its touching point ``c − ρ n``): the position error ``φ`` is then
        zero there (loops keep their own frames, joint stops their limits)."""
        from ..algorithm.frames import rest_kinematics
        q = as_array(q, "q", shape=(self.model.n_joints,))
        fk = rest_kinematics(self.model, base_pose, q)
        d = self.data
        out = object.__new__(ConstraintSet)
        off_b = np.array(d.offset_b)
        anchored = np.array(d.anchored)
        for c in range(len(self)):
            if d.body_b[c] == WORLD and not d.anchored[c]:
                off_b[c] = fk.body_pose[d.body_a[c]] @ d.offset_a[c]
                off_b[c, :3, 3] -= d.radius[c] * d.normal[c]        # rolling: p = c − ρ n
                anchored[c] = True
        data = d._replace(offset_b=_frozen(off_b), anchored=_frozen(anchored))
        _freeze(out, model=self.model, names=self.names, kinds=self.kinds, n_rows=self.n_rows,
                rows=self.rows, loop=self.loop, data=data, _index=self._index)
        return out


def _unpickle_set(model, names, kinds, n_rows, rows, loop, data, index):
    out = object.__new__(ConstraintSet)
    _freeze(out, model=model, names=names, kinds=kinds, n_rows=n_rows, rows=rows,
            loop=_frozen(loop), data=ConstraintData(*(_frozen(a) for a in data)), _index=index)
    return out


def _frame_index(model, frame, arg):
    """:func:`liedyn.algorithm.frames.frame_arg`, with an unknown frame name reported
    under ``arg`` (the model's lookup names its own argument)."""
    if isinstance(frame, str) and frame not in model.frame_names:
        raise ValueError(f"{arg}: unknown frame {frame!r}")
    return frame_arg(model, frame, arg)


def _stop_arg(model, s, c):
    """``(q column, s, limit)`` of the joint stop ``s`` (``constraints[c]``)."""
    arg = f"constraints[{c}].joint"
    j = s.joint
    if isinstance(j, str):
        if j not in model.joint_names:
            hint = ""
            if j in model.frame_names:
                f = model.frame_names.index(j)
                b = int(model.frame_body[f])
                if b == 0:
                    hint = f" ({j!r} is on the base, which no joint with a stop moves)"
                elif f < model.n_bodies:
                    hint = f" ({j!r} is a body, moved by joint {model.joint_names[b - 1]!r})"
                else:
                    hint = (f" ({j!r} is a frame fixed on body {model.body_names[b]!r}: a fixed "
                            "joint has no stop)")
            raise ValueError(f"{arg}: unknown joint {j!r}{hint}; the model's joints: "
                             f"{', '.join(map(repr, model.joint_names[:12]))}"
                             f"{', …' if model.n_joints > 12 else ''}")
        j = model.joint_names.index(j)
    elif not 0 <= j < model.n_joints:
        raise ValueError(f"{arg}: joint index {j} out of range [0, {model.n_joints})")
    j = int(j)
    limit = s.limit
    if limit is None:
        field = "joint_lower" if s.side == "lower" else "joint_upper"
        limit = float(getattr(model, field)[j])
        if not np.isfinite(limit):
            raise ValueError(f"{arg}: joint {model.joint_names[j]!r} has no {s.side} limit "
                             f"(model.{field} is {limit}); pass limit=")
    return j, SIDES[s.side], limit


def _anchor_arg(s, label):
    """The anchor of a world contact as a (4, 4) world pose."""
    if s.kind == KIND_6D:
        A = as_array(s.anchor, f"constraint {label!r}: anchor", shape=(4, 4))
        se3.check_pose(A, f"constraint {label!r}: anchor")
        return A
    X = np.eye(4)
    X[:3, 3] = as_array(s.anchor, f"constraint {label!r}: anchor", shape=(3,))
    return X


def check_constraints(model, constraints):
    """``constraints`` if it is a :class:`ConstraintSet` of ``model``."""
    if not isinstance(constraints, ConstraintSet):
        raise TypeError("constraints: expected a liedyn.ConstraintSet (ConstraintSet(model, "
                        f"[Contact3D(...), ...])), got {type(constraints).__name__}")
    if constraints.model is not model:
        raise ValueError("constraints: built for another model")
    return constraints


# ------------------------------------------------------ Jacobian jets --

def _body_jacobian(model, S, b):
    """``J_b^(0..K)`` (K+1, 6, nv) of body ``b`` from the screw jets ``S``
    (K+1, N, 6): ``I₆`` as base block (order 0), ``S_j^(k)`` as the columns
    of its joints, zero elsewhere (the world: zero)."""
    nb = 6 if model.floating_base else 0
    J = np.zeros((S.shape[0], 6, nb + model.n_joints))
    if b == WORLD:
        return J
    if nb:
        J[0, :, :6] = np.eye(6)
    cols = model.ancestors(b)[:-1] - 1                       # q columns of the path to b
    if cols.size:
        J[:, :, nb + cols] = np.transpose(S[:, cols + 1], (0, 2, 1))
    return J


def _point_jets(model, fk, body, offset, K, B=None):
    """Jet (K+1, 3) of a point: the origin of ``offset`` on ``body``
    (:func:`liedyn.algorithm.frames.position_jet`), or of the world pose ``offset``
    (at rest)."""
    if body == WORLD:
        P = np.zeros((K + 1, 3))
        P[0] = offset[:3, 3]
        return P
    p = fk.body_pose[body, :3, :3] @ offset[:3, 3] + fk.body_pose[body, :3, 3]
    return position_jet(p, fk.twist[:, body], K, B)


def _moved_rows(J, P, B):
    """The linear rows of ``T(p) J`` and their jets (K+1, 3, nv):
    ``Σ_a binom(k, a) (J_v^(k−a) − p̂^(a) J_ω^(k−a))``, with ``T(p) x =
    (x_ω, x_v + x_ω × p)``."""
    H = _hat(P)                                             # (K+1, 3, 3)
    out = J[:, 3:].copy()
    for k in range(J.shape[0]):
        out[k] -= np.einsum("a,aij,ajv->iv", B[k, :k + 1], H[:k + 1], J[k::-1, :3])
    return out


def jacobian_jets(cs, fk, K):
    """``J^(0..K)`` (K+1, m, nv) of the constraint set ``cs`` from a
    kinematics pass ``fk`` with screw jets of ``K + 1`` rows and twist jets
    of ``K`` (module docstring)."""
    model, d = cs.model, cs.data
    B = binomials(K)
    S = fk.screw[:K + 1]
    nb = 6 if model.floating_base else 0
    J = np.zeros((K + 1, cs.n_rows, model.nv))
    for c in range(len(cs)):
        a, b = d.body_a[c], d.body_b[c]
        rows = cs.rows[c]
        if d.kind[c] == KIND_STOP:
            J[0, rows.start, nb + a - 1] = d.sign[c]             # s e_jᵀ, J^(k≥1) = 0
            continue
        Ja, Jb = _body_jacobian(model, S, a), _body_jacobian(model, S, b)
        Pa = _contact_point_jets(cs, fk, c, K, B)
        if d.kind[c] == KIND_6D:
            Jd = Ja - Jb
            J[:, rows.start:rows.start + 3] = Jd[:, :3]
            J[:, rows.start + 3:rows.stop] = _moved_rows(Jd, Pa, B)
            continue
        Jp = _moved_rows(Ja, Pa, B)
        if b != WORLD:
            Jp -= _moved_rows(Jb, _point_jets(model, fk, b, d.offset_b[c], K, B), B)
        if d.kind[c] == KIND_1D:
            J[:, rows] = np.einsum("i,kiv->kv", d.normal[c], Jp)[:, None]
        else:
            J[:, rows] = Jp
    return J


def _contact_point_jets(cs, fk, c, K, B=None):
    """Jet (K+1, 3) of the point of body ``a`` where constraint ``c``'s force
    acts: ``F_a``'s origin, or a rolling sphere's touching point
    ``p = c − ρ n``, whose derivatives are those of the centre (SPEC §13.1)."""
    d = cs.data
    P = _point_jets(cs.model, fk, d.body_a[c], d.offset_a[c], K, B)
    P[0] -= d.radius[c] * d.normal[c]
    return P


def _kinematics(model, base_pose, base_twist, q, K):
    """Forward kinematics with screw jets of ``K + 1`` rows, reading
    ``V₀^(0..K−1)`` and ``q^(0..K)`` (zero rows padded for the rest)."""
    if K == 0 and base_twist is None and model.floating_base:
        base_twist = np.zeros((0, 6))
    C0, Vb, qj = check_motion_slow(model, base_pose, base_twist, q, K, K + 1)
    Vpad = np.vstack([Vb[:K], np.zeros((1, 6))]) if model.floating_base else None
    return forward_kinematics(model, C0, Vpad, np.vstack([qj[:K + 1],
                                                          np.zeros((1, model.n_joints))]), K)


def constraint_jacobian(model, constraints, base_pose, base_twist, q, order):
    """The constraint Jacobian and its time derivatives, ``J^(0..order)``.

    Parameters
    ----------
    model : Model
    constraints : ConstraintSet
    base_pose : (4, 4) or None
        Base pose (``None``: ``model.home_pose``).
    base_twist : (order, 6) or None (more rows: the first order are read)
        Spatial base twist jet ``V₀^(0..order−1)``; ``None`` for a fixed base,
        and for any base when ``order = 0``.
    q : (order+1, n) (more rows: the first order+1 are read)
        Joint jet ``q^(0..order)``.
    order : int ≥ 0

    Returns
    -------
    (order+1, m, nv)
        Row ``k`` is ``J^(k)``; rows of ``J`` as the constraints' (module
        docstring), columns as ``ν = (V₀, q̇)`` (floating) or ``q̇`` (fixed).
        ``(J ν)^(k) = Σ_a binom(k, a) J^(a) ν^(k−a)``.
    """
    check_model(model)
    cs = check_constraints(model, constraints)
    K = check_order(order)
    return jacobian_jets(cs, _kinematics(model, base_pose, base_twist, q, K), K)


def _rotation_error(R):
    """``log(R)^∨`` (3,), the rotation vector of ``R``."""
    return se3.log_so3(R)


def constraint_error(model, constraints, base_pose, q):
    """The position error ``φ`` (m,) of every constraint at ``(base_pose, q (n,))``.

    6-D: ``(θ, p_a − p_b)`` with ``θ`` the rotation vector of ``R_a R_bᵀ``
    (world axes) and ``p`` the frames' origins; 3-D: ``p_a − p_b``; 1-D:
    ``nᵀ (p_a − p_b)``; rolling: ``n nᵀ (p − p_b)``, the touching point's
    distance from the plane through the anchor along ``n`` (the tangential
    rows are not holonomic: zero); joint stop: ``s (q_j − limit)``. A world
    contact without an anchor has no position error: its rows are NaN
    (anchor it with :meth:`ConstraintSet.anchored`).
    """
    from ..algorithm.frames import rest_kinematics
    check_model(model)
    cs = check_constraints(model, constraints)
    q = as_array(q, "q", shape=(model.n_joints,))
    fk = rest_kinematics(model, base_pose, q)
    d = cs.data
    phi = np.full(cs.n_rows, np.nan)
    for c in range(len(cs)):
        if d.kind[c] == KIND_STOP:
            phi[cs.rows[c]] = d.sign[c] * (q[d.body_a[c] - 1] - d.limit[c])
            continue
        if not d.anchored[c]:
            continue
        Xa = fk.body_pose[d.body_a[c]] @ d.offset_a[c]
        Xb = d.offset_b[c] if d.body_b[c] == WORLD else fk.body_pose[d.body_b[c]] @ d.offset_b[c]
        dp = Xa[:3, 3] - d.radius[c] * d.normal[c] - Xb[:3, 3]
        if d.kind[c] == KIND_6D:
            phi[cs.rows[c]] = np.concatenate([_rotation_error(Xa[:3, :3] @ Xb[:3, :3].T), dp])
        elif d.kind[c] == KIND_3D:
            phi[cs.rows[c]] = dp
        elif d.kind[c] == KIND_ROLLING:
            phi[cs.rows[c]] = d.normal[c] * (d.normal[c] @ dp)
        else:
            phi[cs.rows[c]] = d.normal[c] @ dp
    return phi


def wrench_jets(cs, fk, force, K):
    """The constraint forces as applied wrench jets ``(K+1, N, 6)`` on the
    bodies (world frame, about the world origin): ``T(p_a)ᵀ λ`` (6-D) or
    ``(p × f, f)`` at each point (a rolling contact: its touching point),
    with their jets by the Leibniz rule from the point jets; a joint stop's
    force as the pair ``±λ u_j`` on the joint's two bodies
    (:func:`_stop_wrench_jets`). ``force`` (K+1, m) in the reported form.
    ``fk``: a kinematics pass with twist jets of at least ``K`` rows."""
    model, d = cs.model, cs.data
    B = binomials(K)
    out = np.zeros((K + 1, model.n_bodies, 6))
    for c in range(len(cs)):
        lam = force[:K + 1, cs.rows[c]]
        if d.kind[c] == KIND_STOP:
            j = d.body_a[c]
            u = _stop_wrench_jets(model, fk, j, K, B)
            w = np.array([sum(B[k, a] * u[a] * lam[k - a, 0] for a in range(k + 1))
                          for k in range(K + 1)]) * d.sign[c]
            out[:, j] += w
            out[:, model.body_parent[j]] -= w
            continue
        if d.kind[c] == KIND_6D:
            mom, f = lam[:, :3], lam[:, 3:]
        elif d.kind[c] == KIND_1D:
            mom, f = np.zeros((K + 1, 3)), lam[:, :1] * d.normal[c]
        else:
            mom, f = np.zeros((K + 1, 3)), lam
        sides = [(d.body_a[c], d.offset_a[c], 1.0)]
        if d.body_b[c] != WORLD:
            sides.append((d.body_b[c], d.offset_b[c], -1.0))
        Pa = _contact_point_jets(cs, fk, c, K)
        for body, offset, sign in sides:
            P = Pa if sign > 0 or d.kind[c] == KIND_6D else _point_jets(model, fk, body, offset, K)
            for k in range(K + 1):
                w = np.concatenate([mom[k], f[k]])
                for a in range(k + 1):
                    w[:3] += B[k, a] * np.cross(P[a], f[k - a])
                out[k, body] += sign * w
    return out


def _stop_wrench_jets(model, fk, j, K, B):
    """Jets (K+1, 6) of the wrench ``u_j`` (world, about the world origin)
    that does what a unit force of joint ``j`` (the joint moving body ``j``)
    does when applied to body ``j`` and ``−u_j`` to its parent: ``S_jᵀ u_j
    = 1`` and the pair is balanced. Revolute, ``S_j = (a, x × a)``: the
    couple ``u_j = (a, 0)`` about the axis; prismatic, ``S_j = (0, a)``: the
    force ``u_j = (x × a, a)`` along the axis through the body's origin
    ``x``."""
    S = fk.screw[:K + 1, j]
    u = np.zeros((K + 1, 6))
    if model.joint_type[j - 1] == JOINT_REVOLUTE:
        u[:, :3] = S[:, :3]
        return u
    X = _point_jets(model, fk, j, np.eye(4), K, B)
    u[:, 3:] = S[:, 3:]
    for k in range(K + 1):
        for a in range(k + 1):
            u[k, :3] += B[k, a] * np.cross(X[a], S[k - a, 3:])
    return u


def constraint_wrenches(model, constraints, base_pose, base_twist, q, force):
    """The constraint-force jets ``force`` (K+1, m) (reported form) as the
    wrench jets ``(K+1, N, 6)`` they apply to each body, world frame, about
    the world origin — the ``applied`` argument of
    :func:`liedyn.inverse_dynamics` that reproduces their effect. Reads
    ``V₀^(0..K−1)`` and ``q^(0..K)``.

    A rolling contact's force acts at its touching point ``c − ρ n``. A
    joint stop's force ``λ`` (a joint torque or force) is reported as the
    balanced pair it is: ``s λ u_j`` on the body its joint moves and
    ``−s λ u_j`` on that body's parent, with ``u_j`` the couple ``(a, 0)``
    about a revolute axis ``a`` or the force ``(x × a, a)`` along a
    prismatic axis through the moved body's origin ``x`` (``S_jᵀ u_j = 1``);
    the pair sums to zero, as an internal force does."""
    check_model(model)
    cs = check_constraints(model, constraints)
    lam = as_array(force, "force", ndim=2)
    if lam.shape[1] != cs.n_rows:
        raise ValueError(f"force: expected shape (rows, {cs.n_rows}), got {lam.shape}")
    K = lam.shape[0] - 1
    return wrench_jets(cs, _kinematics(model, base_pose, base_twist, q, K), lam, K)
