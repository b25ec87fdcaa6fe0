"""Frames fixed on bodies: poses, twist and position jets, geometric Jacobians
and their time-derivative jets, to any order (SPEC §3 applied to frames).

A frame ``f`` is fixed on body ``b = model.frame_body[f]`` at offset
``O = model.frame_offset[f]`` (every body is also a frame, with ``O = I``).
Everything below is read off the screw and twist jets of
:func:`liedyn.forward_kinematics`.

Glossary (``K`` the highest derivative returned)
------------------------------------------------
===========  ================  ================================================
``X``        (4, 4)            frame pose in the world, ``X = C_b O``
``V^(k)``    (K+1, 6)          the frame's spatial twist jet: its body's
                               ``V_b^(k)`` (one rigid body, one spatial twist)
``p^(k)``    (K+2, 3)          jet of the frame origin's position,
                               ``p^(k+1) = Σ_a C(k,a) ω^(a) × p^(k−a) + v^(k)``
``ν``        (nv,)             generalised velocity ``(V₀, q̇)`` (floating) or ``q̇``
``J``        (6, nv)           geometric Jacobian, ``V = J ν``
``R^(a)``    (6, 6)            jets of the map from spatial twists to the
                               chosen reference (below)
===========  ================  ================================================

References (the conventions of Pinocchio's ``ReferenceFrame``, with liedyn's
``(ω, v)`` ordering)
---------------------------------------------------------------------------
``"world"``
    Spatial: ``(ω, v)`` with ``v = ṗ − ω × p`` the velocity of the point at
    the world origin, world axes. ``J`` has the joint screws ``S_j`` as
    columns (the ancestors of ``b``; zero elsewhere) and, for a floating
    base, ``I₆`` as its base block; ``J^(k)`` has columns ``S_j^(k)`` and a
    zero base block for ``k ≥ 1``. ``R = I``.
``"base"``
    About the point held fixed where the base origin ``p₀`` is at this
    instant, world axes: ``(ω, v + ω × p₀)``. As everywhere in liedyn (SPEC
    §1), the keyword then holds for the whole call: the base twist jet it
    takes is about that point too, and so is ``ν = (V₀, q̇)`` (the Jacobian's
    base block is ``I₆``, its joint columns the screws about ``p₀``), exactly
    as :func:`liedyn.forward_kinematics`, :func:`liedyn.mass_matrix` and
    :func:`liedyn.inverse_dynamics` read ``reference="base"``. The point is
    constant, so every row of a jet maps alike (``R = I`` on the kinematics
    about ``p₀``).
``"local"``
    Body: ``Ad_{X⁻¹} V``, axes and point of the frame. ``R = Ad_{X⁻¹}`` with
    ``d/dt Ad_{X⁻¹} = −Ad_{X⁻¹} ad_V``.
``"local_world_aligned"``
    ``(ω, ṗ)``: the frame origin's velocity, world axes.
    ``R = Ad_{T(−p)} = [[I, 0], [−p̂, I]]``. Its jet is the jet of ``(ω, ṗ)``:
    row 1 is the classical acceleration ``(ω̇, p̈)`` (Pinocchio's
    ``getFrameClassicalAcceleration``), not Pinocchio's
    ``getFrameAcceleration(LOCAL_WORLD_ALIGNED)``, which is the spatial
    acceleration re-expressed at ``p``.

With ``"world"`` and ``"base"`` the call's inputs and outputs are about the
same point; ``"local"`` and ``"local_world_aligned"`` name how the *output*
is expressed, and the call's base twist (and ``ν``) is then about the world
origin. In every reference the jets are time derivatives of the quantity in that
reference: ``Y_ref^(k) = Σ_a C(k, a) R^(a) Y^(k−a)`` for twists (``Y = V``)
and Jacobians (``Y = J``), so ``V_ref^(k) = Σ_a C(k, a) J_ref^(a) ν^(k−a)``.
"""


import numpy as np

from ..spatial import se3
from .._checks import as_array, check_motion_slow, check_order
from .kinematics import forward_kinematics
from ..multibody.model import check_model
from ..multibody.results import _freeze, _frozen_setattr, _hat
from ..multibody.results import cross3 as _cross
from ..spatial.se3 import _inv_into
from ..multibody.workspace import binomials

__all__ = ["REFERENCES", "FrameKinematicsResult", "frame_pose", "frame_kinematics",
           "frame_jacobian"]

REFERENCES = ("world", "base", "local", "local_world_aligned")


# ------------------------------------------------------------ arguments --

def frame_arg(model, frame, name="frame"):
    """Index of ``frame``: a frame name (bodies are frames too) or an index
    in ``[0, model.n_frames)``."""
    if isinstance(frame, str):
        return model._lookup("frame", frame, name)
    if isinstance(frame, (int, np.integer)) and not isinstance(frame, (bool, np.bool_)):
        if not 0 <= frame < model.n_frames:
            raise ValueError(f"{name}: index {frame} out of range [0, {model.n_frames})")
        return int(frame)
    raise TypeError(f"{name}: expected a frame name (str) or index (int), "
                    f"got {type(frame).__name__}")


def reference_arg(reference):
    if not isinstance(reference, str):
        raise TypeError(f"reference: expected one of {REFERENCES}, got {type(reference).__name__}")
    if reference not in REFERENCES:
        raise ValueError(f"reference: expected one of {REFERENCES}, got {reference!r}")
    return reference


# ------------------------------------------------------------ Lie jets --

def ad_matrix(V):
    """``ad_V = [[ω̂, 0], [v̂, ω̂]]`` for twists ``V`` (..., 6): shape (..., 6, 6)."""
    V = np.asarray(V, float)
    out = np.zeros(V.shape[:-1] + (6, 6))
    out[..., :3, :3] = out[..., 3:, 3:] = _hat(V[..., :3])
    out[..., 3:, :3] = _hat(V[..., 3:])
    return out


def adjoint_jet(C, V, K):
    """Jet ``(K+1, 6, 6)`` of ``Ad_C`` for a pose moving with spatial twist
    jet ``V`` (at least ``K`` rows): ``d/dt Ad_C = ad_V Ad_C``, so
    ``Ad_C^(k+1) = Σ_a C(k, a) ad_{V^(a)} Ad_C^(k−a)``."""
    B = binomials(K + 1)
    ad = ad_matrix(V[:K])
    G = np.zeros((K + 1, 6, 6))
    G[0] = se3.Ad(C)
    for k in range(K):
        for a in range(k + 1):
            G[k + 1] += B[k, a] * ad[a] @ G[k - a]
    return G


def inverse_adjoint_jet(C, V, K):
    """Jet ``(K+1, 6, 6)`` of ``Ad_{C⁻¹}``: ``d/dt Ad_{C⁻¹} = −Ad_{C⁻¹} ad_V``,
    so ``Ad_{C⁻¹}^(k+1) = −Σ_a C(k, a) Ad_{C⁻¹}^(k−a) ad_{V^(a)}``."""
    B = binomials(K + 1)
    ad = ad_matrix(V[:K])
    H = np.zeros((K + 1, 6, 6))
    Ci = np.empty((4, 4))
    _inv_into(C, Ci)                  # se3.inv without its pose check: se3.Ad checks
    H[0] = se3.Ad(Ci)
    for k in range(K):
        for a in range(k + 1):
            H[k + 1] -= B[k, a] * H[k - a] @ ad[a]
    return H




def position_jet(p, V, K, B=None):
    """Jet ``(K+1, 3)`` of a point fixed on a body with spatial twist jet ``V``
    (at least ``K`` rows) that is at ``p`` now:
    ``ṗ = ω × p + v``, so ``p^(k+1) = Σ_a C(k, a) ω^(a) × p^(k−a) + v^(k)``;
    ``B``: a binomial table of at least ``K`` rows, if at hand."""
    B = binomials(K + 1) if B is None else B
    P = np.zeros((K + 1, 3))
    P[0] = p
    for k in range(K):
        P[k + 1] = V[k, 3:]
        for a in range(k + 1):
            P[k + 1] += B[k, a] * _cross(V[a, :3], P[k - a])
    return P


def leibniz(R, Y):
    """``Z^(k) = Σ_a C(k, a) R^(a) Y^(k−a)``: the jet of a product, ``R`` of
    shape ``(K+1, 6, 6)``, ``Y`` of shape ``(K+1, 6, …)``."""
    K = R.shape[0] - 1
    B = binomials(K)
    Z = np.zeros(Y.shape)
    for k in range(K + 1):
        for a in range(k + 1):
            Z[k] += B[k, a] * np.tensordot(R[a], Y[k - a], axes=(1, 0))
    return Z


def _reference_jet(reference, X, V, P, K):
    """``R^(0..K)`` mapping the kinematics' spatial quantities (about the
    call's point: :func:`_kinematics_reference`) to ``reference`` (module
    docstring); ``P`` is the jet of the frame origin (rows ≥ K+1) for
    ``"local_world_aligned"``."""
    if reference == "local":
        return inverse_adjoint_jet(X, V, K)
    R = np.zeros((K + 1, 6, 6))
    R[0] = np.eye(6)
    if reference == "local_world_aligned":
        for k in range(K + 1):
            R[k, 3:, :3] = -_hat(P[k])                   # Ad_{T(−p)}^(k)
    return R


def _kinematics_reference(reference):
    """The point of the call's twists (SPEC §1): the base origin for
    ``"base"``, the world origin for the other references."""
    return "base" if reference == "base" else "world"


def _position_jet(X, V, fk, reference, K):
    """Jet ``(K+1, 3)`` of the origin of a frame at pose ``X`` with twist jet
    ``V`` about the call's point (the base origin ``p₀`` held fixed, or the
    world origin): :func:`position_jet` of ``p − p₀``, then ``p₀`` added back."""
    o = fk.body_pose[0][:3, 3] if reference == "base" else np.zeros(3)
    P = position_jet(X[:3, 3] - o, V, K)
    P[0] = X[:3, 3]
    return P


# ------------------------------------------------- from a kinematics pass --

def rest_kinematics(model, base_pose, q):
    """:func:`liedyn.forward_kinematics` of order 0 at joint positions ``q``
    ``(n,)`` with the robot at rest (zero base twist and joint velocities):
    poses and joint screws."""
    return forward_kinematics(model, base_pose, np.zeros((1, 6)) if model.floating_base else None,
                              np.vstack([q, np.zeros(model.n_joints)]), 0)


def _frame_pose(model, fk, f):
    """``X = C_b O``: frame ``f``'s pose in the world from the kinematics ``fk``."""
    return fk.body_pose[model.frame_body[f]] @ model.frame_offset[f]


def _frame_jacobian(model, fk, f, reference, K):
    """``(X, J_ref^(0..K))`` of frame ``f`` from the kinematics ``fk``, whose
    screw jets have at least ``K + 1`` rows and twist jets ``K`` (SPEC §3):
    the world Jacobian has the screws of the frame body's ancestors as
    columns (and ``I₆`` as its base block), then ``J_ref^(k) = Σ_a C(k, a)
    R^(a) J^(k−a)``."""
    b = model.frame_body[f]
    X = _frame_pose(model, fk, f)
    V = fk.twist[:, b]
    nb = 6 if model.floating_base else 0
    J = np.zeros((K + 1, 6, nb + model.n_joints))
    if nb:
        J[0, :, :6] = np.eye(6)
    for j in model.ancestors(b)[:-1]:
        J[:, :, nb + j - 1] = fk.screw[:K + 1, j]
    P = _position_jet(X, V, fk, reference, K) if reference == "local_world_aligned" else None
    return X, leibniz(_reference_jet(reference, X, V, P, K), J)


# ---------------------------------------------------------------- public --

class FrameKinematicsResult:
    """Pose and motion jets of one frame.

    Attributes
    ----------
    frame : str
        The frame's name.
    reference : str
        The reference ``twist`` is expressed in (see :mod:`liedyn.algorithm.frames`).
    pose : (4, 4)
        ``X``, the frame's pose in the world.
    twist : (order+1, 6)
        The frame's twist jet ``(ω, v)^(k)`` in ``reference``.
    position : (order+2, 3)
        Jet of the frame origin's position in the world:
        ``p, ṗ, p̈, p⃛, …`` (position, velocity, acceleration, jerk, snap, …).
    """

    __slots__ = ("frame", "reference", "pose", "twist", "position")
    __setattr__ = _frozen_setattr

    def __init__(self, frame, reference, pose, twist, position):
        _freeze(self, frame=frame, reference=reference, pose=pose, twist=twist,
                position=position)

    def __repr__(self):
        return (f"FrameKinematicsResult(frame={self.frame!r}, reference={self.reference!r}, "
                f"twist={self.twist.shape}, position={self.position.shape})")


def frame_pose(model, base_pose, q, frame):
    """Pose of a frame in the world, ``X = C_b O``.

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Base pose (``None``: ``model.home_pose``).
    q : (n,)
        Joint positions.
    frame : str | int
        Frame name or index (bodies are frames ``0..N−1``).

    Returns
    -------
    (4, 4)
    """
    check_model(model)
    f = frame_arg(model, frame)
    q = as_array(q, "q", shape=(model.n_joints,))
    return _frame_pose(model, rest_kinematics(model, base_pose, q), f)


def pose_and_jacobian(model, base_pose, q, f, reference):
    """``(X, J)``: pose ``(4, 4)`` and Jacobian ``(6, nv)`` in ``reference`` of
    frame index ``f`` at joint positions ``q (n,)`` (checked by the caller),
    from one kinematics pass."""
    X, J = _frame_jacobian(model, rest_kinematics(model, base_pose, q), f, reference, 0)
    return X, J[0]


def frame_kinematics(model, base_pose, base_twist, q, order, frame, *, reference="world"):
    """Pose, twist jet and position jet of a frame.

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Base pose (``None``: ``model.home_pose``).
    base_twist : (order+1, 6) or None (more rows: the first order+1 are read)
        Spatial base twist jet ``V₀^(0..order)``, about the base origin held
        fixed with ``reference="base"`` (SPEC §1), else about the world
        origin; ``None`` for a fixed base.
    q : (order+2, n) (more rows: the first order+2 are read)
        Joint jet ``q^(0..order+1)``.
    order : int ≥ 0
    frame : str | int
        Frame name or index.
    reference : {"world", "base", "local", "local_world_aligned"}, keyword
        Reference of the twist jet (module docstring).

    Returns
    -------
    FrameKinematicsResult
        ``twist`` ``(order+1, 6)`` in ``reference``; ``position``
        ``(order+2, 3)``, ``p^(k+1) = Σ_a C(k, a) ω^(a) × p^(k−a) + v^(k)``.

    Raises
    ------
    ValueError, TypeError
        As :func:`liedyn.forward_kinematics`; an unknown frame or reference.
    """
    check_model(model)
    K = check_order(order)
    f = frame_arg(model, frame)
    ref = reference_arg(reference)
    fk = forward_kinematics(model, base_pose, base_twist, q, K,
                            reference=_kinematics_reference(ref))
    X = _frame_pose(model, fk, f)
    V = fk.twist[:, model.frame_body[f]]
    P = _position_jet(X, V, fk, ref, K + 1)
    twist = leibniz(_reference_jet(ref, X, V, P, K), V)
    return FrameKinematicsResult(model.frame_names[f], ref, X, twist, P)


def frame_jacobian(model, base_pose, base_twist, q, order, frame, *, reference="world"):
    """Geometric Jacobian of a frame and its time derivatives, ``J^(0..order)``.

    ``V_ref = J_ref ν`` with ``ν = (V₀, q̇)`` for a floating base (``V₀``
    spatial, first six columns) and ``ν = q̇`` for a fixed one; column
    ``6 + i`` (floating) or ``i`` (fixed) belongs to q column ``i``. In the
    world reference the columns are the current joint screws ``S_j`` of the
    frame body's ancestors and ``J^(k)`` has columns ``S_j^(k)`` (SPEC §3);
    the other references follow from ``J_ref^(k) = Σ_a C(k, a) R^(a) J^(k−a)``
    (module docstring).

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Base pose (``None``: ``model.home_pose``).
    base_twist : (order, 6) or None (more rows: the first order are read)
        Spatial base twist jet ``V₀^(0..order−1)``, about the point the
        reference names (as ``frame_kinematics``) (``J^(k)`` needs the
        twists up to order ``k − 1``); ``None`` for a fixed base, and for any
        base when ``order = 0``.
    q : (order+1, n) (more rows: the first order+1 are read)
        Joint jet ``q^(0..order)``.
    order : int ≥ 0
    frame : str | int
        Frame name or index.
    reference : {"world", "base", "local", "local_world_aligned"}, keyword

    Returns
    -------
    (order+1, 6, nv)
        Row ``k`` is ``J^(k)``, rows of each ``J`` ordered ``(ω, v)``.

    Raises
    ------
    ValueError, TypeError
        Wrong shapes or types, non-finite values, a non-SE(3) pose, an
        unknown frame or reference (the message names the argument).
    """
    check_model(model)
    K = check_order(order)
    f = frame_arg(model, frame)
    ref = reference_arg(reference)
    if K == 0 and base_twist is None:
        base_twist = np.zeros((0, 6))
    C0, Vb, qj = check_motion_slow(model, base_pose, base_twist, q, K, K + 1)
    # forward_kinematics of order K also returns V^(K), which needs V₀^(K) and
    # q^(K+1): pad with zero rows. S^(0..K) and V^(0..K−1), all that is used
    # here, do not depend on them (SPEC §3).
    Vpad = np.vstack([Vb, np.zeros((1, 6))]) if model.floating_base else None
    fk = forward_kinematics(model, C0, Vpad, np.vstack([qj, np.zeros((1, model.n_joints))]), K,
                            reference=_kinematics_reference(ref))
    return _frame_jacobian(model, fk, f, ref, K)[1]
