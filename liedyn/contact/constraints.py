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
=============  =====  ====================================================

So ``J = T(p_a) (J_a − J_b)`` (6-D, ``T(p) = [[I, 0], [−p̂, I]]``),
``P(p_a) J_a − P(p_b) J_b`` (3-D, ``P(p) = [−p̂, I]``) and ``nᵀ`` of that
(1-D), with ``J_a`` the spatial Jacobian of body ``a`` (its columns the joint
screws ``S_j``); ``Jᵀλ`` is the generalised force of the constraint forces,
and the jets ``J^(k)`` follow from the screw jets ``S_j^(k)`` and the point
jets ``p^(k)`` by the Leibniz rule (no numerical differentiation).

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
from ..multibody.model import check_model
from ..multibody.results import _freeze, _frozen_setattr, _hat
from ..multibody.workspace import binomials

__all__ = ["Contact6D", "Contact3D", "Contact1D", "ConstraintSet", "constraint_jacobian",
           "constraint_error", "constraint_wrenches", "KIND_6D", "KIND_3D", "KIND_1D"]

KIND_6D, KIND_3D, KIND_1D = 6, 3, 1
WORLD = -1


class _Spec:
    """One constraint as the user states it; checked against a model by
    :class:`ConstraintSet`."""

    __slots__ = ("frame", "other", "name", "anchor", "normal")
    kind = None
    __setattr__ = _frozen_setattr

    def __init__(self, frame, other=None, *, name=None, anchor=None, normal=None):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name: expected a str, got {type(name).__name__}")
        if other is not None and anchor is not None:
            raise ValueError("anchor: only a contact with the world (other=None) has an anchor; "
                             "a loop's error is measured between its two frames")
        _freeze(self, frame=frame, other=other, name=name, anchor=anchor, normal=normal)

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
        n = as_array(normal, "normal", shape=(3,))
        size = float(np.linalg.norm(n))
        if not size > 1e-12:
            raise ValueError("normal: expected a non-zero direction (3,)")
        super().__init__(frame, other, name=name, anchor=anchor, normal=n / size)


class ConstraintData(NamedTuple):
    """The packed constraint arrays the compiled kernels read (one row per
    constraint ``c``, ``m`` rows in all)."""
    kind: np.ndarray          # (nc,) int64: 6, 3 or 1
    row: np.ndarray           # (nc+1,) int64: rows row[c]:row[c+1] of J and λ
    body_a: np.ndarray        # (nc,) int64
    body_b: np.ndarray        # (nc,) int64, −1 for the world
    offset_a: np.ndarray      # (nc, 4, 4): F_a in body a's frame
    offset_b: np.ndarray      # (nc, 4, 4): F_b in body b's frame, or the anchor in the world
    normal: np.ndarray        # (nc, 3): the 1-D contacts' normal (zeros otherwise)
    anchored: np.ndarray      # (nc,) bool: the position error φ is defined


def _frozen(a):
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


class ConstraintSet:
    """A frozen list of constraints on one model.

    Parameters
    ----------
    model : Model
    constraints : sequence of Contact6D, Contact3D, Contact1D
        In the order of the rows of ``J`` and ``λ``.

    Attributes
    ----------
    model : Model
    names : tuple of str
        One per constraint (``"<kind>:<frame>"`` or ``"…-<other>"`` when not given).
    kinds : tuple of str
        ``"6d"``, ``"3d"`` or ``"1d"``.
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
        An unknown frame, a constraint of a fixed base's base to the world,
        both frames on one body, a repeated name, a bad anchor or normal
        (the message names the constraint).
    """

    __slots__ = ("model", "names", "kinds", "n_rows", "rows", "loop", "data", "_index")
    __setattr__ = _frozen_setattr

    def __init__(self, model, constraints):
        check_model(model)
        if isinstance(constraints, _Spec):
            constraints = [constraints]
        if isinstance(constraints, (str, bytes)):
            raise TypeError("constraints: expected a sequence of Contact6D, Contact3D or "
                            "Contact1D (e.g. [Contact3D('foot')]), got a str")
        try:
            specs = list(constraints)
        except TypeError:
            raise TypeError("constraints: expected a sequence of Contact6D, Contact3D or "
                            f"Contact1D, got {type(constraints).__name__}") from None
        nc = len(specs)
        kind = np.zeros(nc, np.int64)
        body_a = np.zeros(nc, np.int64)
        body_b = np.full(nc, WORLD, np.int64)
        off_a = np.tile(np.eye(4), (nc, 1, 1))
        off_b = np.tile(np.eye(4), (nc, 1, 1))
        normal = np.zeros((nc, 3))
        anchored = np.zeros(nc, bool)
        names, index = [], {}
        for c, s in enumerate(specs):
            if not isinstance(s, _Spec):
                raise TypeError(f"constraints[{c}]: expected Contact6D, Contact3D or Contact1D, "
                                f"got {type(s).__name__}")
            fa = _frame_index(model, s.frame, f"constraints[{c}].frame")
            label = s.name
            if label is None:
                label = f"{s.kind}d:{model.frame_names[fa]}"
                if s.other is not None:
                    label += "-" + model.frame_names[_frame_index(model, s.other,
                                                                  f"constraints[{c}].other")]
            if label in index:
                raise ValueError(f"constraints[{c}]: a constraint called {label!r} already exists "
                                 "(give each a distinct name=)")
            index[label] = c
            names.append(label)
            kind[c] = s.kind
            body_a[c] = model.frame_body[fa]
            off_a[c] = model.frame_offset[fa]
            if s.normal is not None:
                normal[c] = s.normal
            if s.other is None:
                if body_a[c] == 0 and not model.floating_base:
                    raise ValueError(f"constraint {label!r}: frame {model.frame_names[fa]!r} is "
                                     "on the fixed base, which cannot move: nothing to constrain")
                if s.anchor is not None:
                    off_b[c] = _anchor_arg(s, label)
                    anchored[c] = True
            else:
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
        row = np.zeros(nc + 1, np.int64)
        row[1:] = np.cumsum(kind)
        data = ConstraintData(*(_frozen(a) for a in (kind, row, body_a, body_b, off_a, off_b,
                                                     normal, anchored)))
        _freeze(self, model=model, names=tuple(names),
                kinds=tuple(f"{k}d" for k in kind), n_rows=int(row[-1]),
                rows=tuple(slice(int(row[c]), int(row[c + 1])) for c in range(nc)),
                loop=_frozen(body_b != WORLD), data=data, _index=index)

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
        are at configuration ``(base_pose, q (n,))``: the position error ``φ``
        is then zero there (loops keep their own frames)."""
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
    J = np.zeros((K + 1, cs.n_rows, model.nv))
    for c in range(len(cs)):
        a, b = d.body_a[c], d.body_b[c]
        Ja, Jb = _body_jacobian(model, S, a), _body_jacobian(model, S, b)
        Pa = _point_jets(model, fk, a, d.offset_a[c], K, B)
        rows = cs.rows[c]
        if d.kind[c] == KIND_6D:
            Jd = Ja - Jb
            J[:, rows.start:rows.start + 3] = Jd[:, :3]
            J[:, rows.start + 3:rows.stop] = _moved_rows(Jd, Pa, B)
            continue
        Jp = _moved_rows(Ja, Pa, B)
        if b != WORLD:
            Jp -= _moved_rows(Jb, _point_jets(model, fk, b, d.offset_b[c], K, B), B)
        if d.kind[c] == KIND_3D:
            J[:, rows] = Jp
        else:
            J[:, rows] = np.einsum("i,kiv->kv", d.normal[c], Jp)[:, None]
    return J


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
    ``nᵀ (p_a − p_b)``. A world contact without an anchor has no position
    error: its rows are NaN (anchor it with :meth:`ConstraintSet.anchored`).
    """
    from ..algorithm.frames import rest_kinematics
    check_model(model)
    cs = check_constraints(model, constraints)
    q = as_array(q, "q", shape=(model.n_joints,))
    fk = rest_kinematics(model, base_pose, q)
    d = cs.data
    phi = np.full(cs.n_rows, np.nan)
    for c in range(len(cs)):
        if not d.anchored[c]:
            continue
        Xa = fk.body_pose[d.body_a[c]] @ d.offset_a[c]
        Xb = d.offset_b[c] if d.body_b[c] == WORLD else fk.body_pose[d.body_b[c]] @ d.offset_b[c]
        dp = Xa[:3, 3] - Xb[:3, 3]
        if d.kind[c] == KIND_6D:
            phi[cs.rows[c]] = np.concatenate([_rotation_error(Xa[:3, :3] @ Xb[:3, :3].T), dp])
        elif d.kind[c] == KIND_3D:
            phi[cs.rows[c]] = dp
        else:
            phi[cs.rows[c]] = d.normal[c] @ dp
    return phi


def wrench_jets(cs, fk, force, K):
    """The constraint forces as applied wrench jets ``(K+1, N, 6)`` on the
    bodies (world frame, about the world origin): ``T(p_a)ᵀ λ`` (6-D) or
    ``(p × f, f)`` at each point, with their jets by the Leibniz rule from
    the point jets; ``force`` (K+1, m) in the reported form. ``fk``: a
    kinematics pass with twist jets of at least ``K`` rows."""
    model, d = cs.model, cs.data
    B = binomials(K)
    out = np.zeros((K + 1, model.n_bodies, 6))
    for c in range(len(cs)):
        lam = force[:K + 1, cs.rows[c]]
        if d.kind[c] == KIND_6D:
            mom, f = lam[:, :3], lam[:, 3:]
        elif d.kind[c] == KIND_3D:
            mom, f = np.zeros((K + 1, 3)), lam
        else:
            mom, f = np.zeros((K + 1, 3)), lam[:, :1] * d.normal[c]
        sides = [(d.body_a[c], d.offset_a[c], 1.0)]
        if d.body_b[c] != WORLD:
            sides.append((d.body_b[c], d.offset_b[c], -1.0))
        Pa = _point_jets(model, fk, d.body_a[c], d.offset_a[c], K)
        for body, offset, sign in sides:
            P = Pa if d.kind[c] == KIND_6D else _point_jets(model, fk, body, offset, K)
            for k in range(K + 1):
                w = np.concatenate([mom[k], f[k]])
                for a in range(k + 1):
                    w[:3] += B[k, a] * np.cross(P[a], f[k - a])
                out[k, body] += sign * w
    return out


def constraint_wrenches(model, constraints, base_pose, base_twist, q, force):
    """The constraint-force jets ``force`` (K+1, m) (reported form) as the
    wrench jets ``(K+1, N, 6)`` they apply to each body, world frame, about
    the world origin — the ``applied`` argument of
    :func:`liedyn.inverse_dynamics` that reproduces their effect. Reads
    ``V₀^(0..K−1)`` and ``q^(0..K)``."""
    check_model(model)
    cs = check_constraints(model, constraints)
    lam = as_array(force, "force", ndim=2)
    if lam.shape[1] != cs.n_rows:
        raise ValueError(f"force: expected shape (rows, {cs.n_rows}), got {lam.shape}")
    K = lam.shape[0] - 1
    return wrench_jets(cs, _kinematics(model, base_pose, base_twist, q, K), lam, K)
