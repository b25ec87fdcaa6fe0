"""From a user's trajectory to the jets the dynamics take, and back (SPEC §12).

Every dynamics call takes the base pose ``C₀ ∈ SE(3)`` and the spatial base
twist jet ``V₀^(0..K)``. This module forms them from what a user has, and
turns them back into it, with exact arithmetic (Leibniz products and
truncated Taylor series; no numerical differentiation):

* ``from_pose_jet(p, orientation, *, representation, quaternion_order, reference)``:
  ``(C₀, V₀^(0..K−1))`` from the position jet ``p^(0..K)`` and an orientation
  jet (rotation matrices, quaternions, rotation vectors);
* ``to_pose_jet(C₀, V, *, representation, quaternion_order, reference)``: the inverse,
  the position jet and the orientation jet;
* ``twist_to_spatial(C₀, twist, convention, *, reference)``: a twist jet in
  another library's convention → the spatial twist jet, and
  ``twist_from_spatial(C₀, V, convention, *, reference)`` the inverse;
* ``SampledTrajectory(t, poses, …)``: sampled poses (and joint positions) →
  jets at any time;
* ``taylor(jet, h)``: the jet of the same quantity at ``t + h``.

Conventions
-----------
* A **jet** has the derivative order on its leading axis: row ``k`` is the
  ``k``-th time derivative.
* **Spatial twist** ``V = (ω, v)``: ``ω`` the world angular velocity,
  ``[V] = Ċ C⁻¹``, so ``v = ṗ − ω × p`` (about the world origin). With
  ``reference="base"`` the twist is about the point held fixed where the
  base origin is at this instant, world axes, as every other function of
  the library reads that keyword (SPEC §1): row 0 is ``(ω, ṗ)``, row ``k``
  ``(ω^(k), p^(k+1) − Σ_{a<k} C(k, a) ω^(a) × p^(k−a))``. That is not
  the jet of ``(ω, ṗ)`` about the *moving* origin, which is Drake's
  convention, named ``"drake"`` below.
* **Rotation matrices** ``R`` map base-frame coordinates to world ones
  (``C₀ = [[R, p], [0, 1]]``).
* **Quaternions** are Hamilton quaternions, ``R(q) v = q ⊗ (0, v) ⊗ q⁻¹``;
  the component order is ``quaternion_order="wxyz"`` (scalar first) or ``"xyzw"``
  (scalar last; Pinocchio, SciPy, ROS), always named: there is no default.
  ``q`` and ``−q`` are the same rotation; quaternions computed here have
  ``w ≥ 0`` at row 0.
* **Rotation vectors** (exponential coordinates) ``φ``: ``R = exp(φ̂)``,
  rotation by ``|φ|`` about ``φ/|φ|``; computed here on the principal branch
  ``|φ₀| ≤ π``.

Twist conventions of other libraries (``convention=``), each a jet whose
row ``k`` is the ``k``-th time derivative of the listed components:

===============  =================================================================
``"spatial"``    liedyn's ``(ω, v)``, about the world origin
``"body"``       body twist ``(ω_b, v_b) = Ad_{C⁻¹} V = (Rᵀ ω, Rᵀ ṗ)``, base frame
``"pinocchio"``  Pinocchio's free-flyer velocity ``(v_b, ω_b)``: body frame, linear first
``"mujoco"``     MuJoCo's free-joint ``qvel``: ``(ṗ, ω_b)``, world-frame velocity of the
                 body origin, then body-frame angular velocity
``"drake"``      Drake's spatial velocity ``V_WB_W = (ω, ṗ)``: world frame, the body
                 origin's velocity; its derivatives are those of ``(ω, ṗ)``, about
                 the moving origin (equal to liedyn's ``reference="base"`` at row 0
                 only)
===============  =================================================================
"""

from math import ceil, factorial, log2
from typing import NamedTuple

import numpy as np

from .spatial import se3
from ._checks import about_base, as_array, check_order, check_pose, check_rotation, check_scalar
from .algorithm.frames import leibniz, position_jet
from .multibody.results import _hat
from .multibody.workspace import binomials

__all__ = ["from_pose_jet", "to_pose_jet", "twist_to_spatial", "twist_from_spatial",
           "SampledTrajectory", "TrajectoryJets", "taylor", "REPRESENTATIONS",
           "QUATERNION_ORDERS", "CONVENTIONS", "QUATERNION_TOL"]

REPRESENTATIONS = ("matrix", "quaternion", "rotvec")
QUATERNION_ORDERS = ("wxyz", "xyzw")
CONVENTIONS = ("spatial", "body", "pinocchio", "mujoco", "drake")

# A quaternion at row 0 is accepted when | |q| − 1 | is below this (a float32
# quaternion, normalised, is within 1e-7). Its derivatives need not keep
# |q| = 1: the angular velocity is read from q̇ ⊗ q⁻¹, which the norm leaves
# out (SPEC §12).
QUATERNION_TOL = 1e-6

# The exponential of a series is summed after scaling its constant term to
# |φ₀| ≤ 1/2 (then squared back): EXP_TERMS + K terms leave a tail below
# (1/2)^16 / 16! ≈ 7e-19 of the leading term.
EXP_TERMS = 16


# ------------------------------------------------------------ arguments --

def _jet_arg(x, name, tail, min_rows=1):
    """A jet of shape ``(rows, *tail)`` with ``rows ≥ min_rows``."""
    a = as_array(x, name)
    if a.ndim != 1 + len(tail) or a.shape[1:] != tuple(tail) or a.shape[0] < min_rows:
        shape = ", ".join(["rows"] + [str(s) for s in tail])
        raise ValueError(f"{name}: expected a jet of shape ({shape}) with rows ≥ {min_rows} "
                         f"(row k = k-th time derivative), got {a.shape}")
    return a


def _representation_arg(representation, quaternion_order):
    if representation not in REPRESENTATIONS:
        raise ValueError(f"representation: expected one of {REPRESENTATIONS}, "
                         f"got {representation!r}")
    if representation == "quaternion":
        if quaternion_order is None:
            raise ValueError("quaternion_order: quaternions need their component order named, "
                             "quaternion_order='wxyz' (scalar first) or quaternion_order='xyzw' (scalar last)")
        if quaternion_order not in QUATERNION_ORDERS:
            raise ValueError(f"quaternion_order: expected one of {QUATERNION_ORDERS}, got {quaternion_order!r}")
    elif quaternion_order is not None:
        raise ValueError(f"quaternion_order: only quaternions have a component order, got {quaternion_order!r} "
                         f"with representation={representation!r}")
    return representation


def _convention_arg(convention):
    if convention not in CONVENTIONS:
        raise ValueError(f"convention: expected one of {CONVENTIONS}, got {convention!r}")
    return convention


def _unit_quaternion(q, name):
    norm = float(np.linalg.norm(q))
    if not abs(norm - 1.0) <= QUATERNION_TOL:
        raise ValueError(f"{name}: not a unit quaternion: |q| = {norm:.9g} "
                         f"(tolerance {QUATERNION_TOL:g})")
    return q


# ------------------------------------------------------- rotation jets --

def _vee(W):
    """``vee`` of the skew part of ``W`` (..., 3, 3) → (..., 3)."""
    return 0.5 * np.stack([W[..., 2, 1] - W[..., 1, 2], W[..., 0, 2] - W[..., 2, 0],
                           W[..., 1, 0] - W[..., 0, 1]], axis=-1)


def _rotation_jet(R0, w, *, body=False):
    """``R^(0..K)`` from ``R₀`` and an angular-velocity jet ``w^(0..K−1)``:
    world ``ω`` (``Ṙ = ω̂ R``), ``R^(k+1) = Σ_a C(k, a) ω̂^(a) R^(k−a)``, or
    body ``ω_b`` (``body=True``, ``Ṙ = R ω̂_b``),
    ``R^(k+1) = Σ_a C(k, a) R^(k−a) ω̂_b^(a)``."""
    K = len(w)
    B = binomials(K)
    W = _hat(w)
    R = np.zeros((K + 1, 3, 3))
    R[0] = R0
    for k in range(K):
        for a in range(k + 1):
            R[k + 1] += B[k, a] * (R[k - a] @ W[a] if body else W[a] @ R[k - a])
    return R


def _angular_velocity_jet(R):
    """World ``ω^(0..K−1)`` from ``R^(0..K)``: solving
    ``R^(k+1) = Σ_a C(k, a) ω̂^(a) R^(k−a)`` for its last term,
    ``ω̂^(k) = (R^(k+1) − Σ_{a<k} C(k, a) ω̂^(a) R^(k−a)) R₀ᵀ`` (skew part)."""
    K = len(R) - 1
    B = binomials(K)
    W = np.zeros((K, 3, 3))
    for k in range(K):
        X = R[k + 1].copy()
        for a in range(k):
            X -= B[k, a] * W[a] @ R[k - a]
        W[k] = _hat(_vee(X @ R[0].T))
    return _vee(W)


# ---- quaternions (w, x, y, z inside this module) --

def _qmul(a, b):
    """Hamilton product ``a ⊗ b`` of quaternions (..., 4), scalar first."""
    aw, av = a[..., :1], a[..., 1:]
    bw, bv = b[..., :1], b[..., 1:]
    return np.concatenate([aw * bw - np.sum(av * bv, axis=-1, keepdims=True),
                           aw * bv + bw * av + np.cross(av, bv)], axis=-1)


def _qinv(q):
    """``q⁻¹ = q̄ / |q|²``."""
    return q * np.array([1.0, -1.0, -1.0, -1.0]) / (q @ q)


def _to_wxyz(q, quaternion_order):
    return q if quaternion_order == "wxyz" else q[..., [3, 0, 1, 2]]


def _from_wxyz(q, quaternion_order):
    return q if quaternion_order == "wxyz" else q[..., [1, 2, 3, 0]]


def _quaternion_jet(q0, w):
    """Quaternion jet ``q^(0..K)`` (scalar first) from ``q₀`` and the world
    ``ω^(0..K−1)``: ``q̇ = ½ (0, ω) ⊗ q``, so
    ``q^(k+1) = ½ Σ_a C(k, a) (0, ω^(a)) ⊗ q^(k−a)``."""
    K = len(w)
    B = binomials(K)
    half_w = np.hstack([np.zeros((K, 1)), 0.5 * np.asarray(w)])
    q = np.zeros((K + 1, 4))
    q[0] = q0
    for k in range(K):
        for a in range(k + 1):
            q[k + 1] += B[k, a] * _qmul(half_w[a], q[k - a])
    return q


def _angular_velocity_of_quaternions(q):
    """World ``ω^(0..K−1)`` from a quaternion jet ``q^(0..K)`` (scalar first).

    With ``u = q̇ ⊗ q⁻¹`` (``= ½ (0, ω)`` for a unit quaternion; for any
    nonzero ``q`` its vector part is still ``ω/2``, its scalar part
    ``d/dt log|q|``): ``q^(k+1) = Σ_a C(k, a) u^(a) ⊗ q^(k−a)``, so
    ``u^(k) = (q^(k+1) − Σ_{a<k} C(k, a) u^(a) ⊗ q^(k−a)) ⊗ q₀⁻¹`` and
    ``ω^(k) = 2 vec u^(k)``.
    """
    K = len(q) - 1
    B = binomials(K)
    q0_inv = _qinv(q[0])
    u = np.zeros((K, 4))
    for k in range(K):
        X = q[k + 1].copy()
        for a in range(k):
            X -= B[k, a] * _qmul(u[a], q[k - a])
        u[k] = _qmul(X, q0_inv)
    return 2.0 * u[:, 1:]


# ---- rotation vectors, by Taylor arithmetic on truncated series --

def _factorials(rows):
    return np.array([float(factorial(k)) for k in range(rows)])


def _series_product(A, Bs):
    """Cauchy product of truncated matrix series (Taylor coefficients
    ``A[k] = A^(k)/k!``): ``(AB)[k] = Σ_a A[a] B[k−a]``."""
    C = np.zeros(A.shape)
    for k in range(len(A)):
        for a in range(k + 1):
            C[k] += A[a] @ Bs[k - a]
    return C


def _exp_series(Phi):
    """``exp(Φ(t))`` as a truncated series, for a series ``Φ`` of skew
    matrices: scaling and squaring, ``exp(Φ) = (Σ_m (Φ/2^s)^m / m!)^(2^s)``
    with ``|φ₀| / 2^s ≤ 1/2``."""
    K = len(Phi) - 1
    theta = float(np.linalg.norm(_vee(Phi[0])))
    s = max(0, ceil(log2(2.0 * theta))) if theta > 0.0 else 0
    X = Phi / 2.0 ** s
    E = np.zeros(Phi.shape)
    E[0] = np.eye(3)
    term = E.copy()
    for m in range(1, EXP_TERMS + K + 1):
        term = _series_product(term, X) / m
        E += term
    for _ in range(s):
        E = _series_product(E, E)
    return E


def _rotation_jet_of_rotvec(phi):
    """``R^(0..K)`` of ``R(t) = exp(φ̂(t))`` from the jet ``φ^(0..K)``: the
    exponential of the Taylor series ``Σ_k φ̂^(k) t^k/k!`` (:func:`_exp_series`)."""
    f = _factorials(len(phi))
    return _exp_series(_hat(phi / f[:, None])) * f[:, None, None]


def _rotvec_jet(R):
    """Rotation-vector jet ``φ^(0..K)`` of a rotation-matrix jet, ``φ₀ = log R₀``
    (principal branch). Order by order: coefficient ``k`` of ``exp(Φ(t))``
    is linear in the coefficient ``φ_k`` of ``Φ``, ``exp(Φ)_k = E_k +
    (J_l(φ₀) φ_k)^ R₀`` (``E_k``: the same with ``φ_k = 0``; ``J_l`` the left
    Jacobian), so ``φ_k = J_l(φ₀)⁻¹ vee((R_k − E_k) R₀ᵀ)``."""
    K = len(R) - 1
    f = _factorials(K + 1)
    Rc = R / f[:, None, None]
    c = np.zeros((K + 1, 3))
    c[0] = se3.log_so3(R[0])
    J_inv = se3.dexp_inv(np.concatenate([c[0], np.zeros(3)]))[:3, :3]
    for k in range(1, K + 1):
        E = _exp_series(_hat(c[:k + 1]))
        c[k] = J_inv @ _vee((Rc[k] - E[k]) @ R[0].T)
    return c * f[:, None]


def _angular_velocity(orientation, representation, quaternion_order, rows):
    """``(R₀, ω^(0..rows−2))`` of an orientation jet."""
    if representation == "matrix":
        if np.ndim(orientation) == 2 and np.shape(orientation)[1] in (3, 4):
            raise ValueError(f"orientation: a jet of shape {np.shape(orientation)} is not rotation "
                             f"matrices (rows, 3, 3): name its representation, "
                             f"representation='quaternion' (with quaternion_order) or 'rotvec'")
        R = _jet_arg(orientation, "orientation", (3, 3))
        _same_rows(R, rows)
        check_rotation(R[0], "orientation[0]")
        return R[0], _angular_velocity_jet(R)
    if representation == "quaternion":
        q = _to_wxyz(_jet_arg(orientation, "orientation", (4,)), quaternion_order)
        _same_rows(q, rows)
        _unit_quaternion(q[0], "orientation[0]")
        return se3.rotation_from_quat(q[0], quaternion_order="wxyz"), _angular_velocity_of_quaternions(q)
    phi = _jet_arg(orientation, "orientation", (3,))
    _same_rows(phi, rows)
    R = _rotation_jet_of_rotvec(phi)
    return R[0], _angular_velocity_jet(R)


def _same_rows(x, rows):
    if len(x) != rows:
        raise ValueError(f"orientation: expected {rows} rows, as many as position, got {len(x)}")


# ------------------------------------------------------- twist jets --

def _world_twist(p0, w, p_dot):
    """``(ω, v)`` about the world origin from the jets ``ω`` and ``ṗ``:
    ``v^(k) = p^(k+1) − Σ_a C(k, a) ω^(a) × p^(k−a)``. With ``p0 = 0`` it is
    the twist about a point held fixed where the base origin is now (SPEC §1,
    ``reference="base"``): the term ``a = k`` drops out, the others stay."""
    K = len(w)
    B = binomials(K)
    p = np.vstack([p0, p_dot])
    V = np.hstack([w, p_dot])
    for k in range(K):
        for a in range(k + 1):
            V[k, 3:] -= B[k, a] * np.cross(w[a], p[k - a])
    return V


def _spatial(C0, w, p_dot, base):
    """The spatial twist jet about the world origin or (``base``) about the
    point held fixed where the base origin is now (SPEC §1, §12)."""
    return _world_twist(np.zeros(3) if base else C0[:3, 3], w, p_dot)


def _omega_p_dot(C0, V, base):
    """``(ω, ṗ)`` jets from a spatial twist jet: ``ṗ = ω × p + v``, by
    :func:`liedyn.algorithm.frames.position_jet`, with ``p`` measured from the
    reference point (``p₀ = 0`` about the base origin)."""
    return V[:, :3].copy(), position_jet(np.zeros(3) if base else C0[:3, 3], V, len(V))[1:]


def from_pose_jet(position, orientation, *, representation="matrix", quaternion_order=None,
                  reference="world"):
    """Base pose and spatial twist jet of a pose curve given by its jets.

    Parameters
    ----------
    position : (K+1, 3)
        ``p^(0..K)``, the base origin in the world.
    orientation : (K+1, 3, 3), (K+1, 4) or (K+1, 3)
        The jet of the base orientation: rotation matrices
        (``representation="matrix"``), quaternions (``"quaternion"``, with
        ``quaternion_order="wxyz"`` or ``"xyzw"``; row 0 unit within
        :data:`QUATERNION_TOL`) or rotation vectors (``"rotvec"``).
    reference : ``"world"`` or ``"base"``
        The twist about the world origin, ``(ω, v)``, or about the point held
        fixed where the base origin is now (SPEC §1; row 0 ``(ω, ṗ)``).

    Returns
    -------
    C0 : (4, 4)
    V : (K, 6)
        ``V₀^(0..K−1)`` (SPEC §12): ``ω̂ = Ṙ Rᵀ``, or ``ω = 2 vec(q̇ ⊗ q⁻¹)``,
        or ``R = exp(φ̂)`` through Taylor arithmetic; ``v = ṗ − ω × p``; each
        differentiated by the Leibniz rule.
    """
    base = about_base(reference)
    representation = _representation_arg(representation, quaternion_order)
    p = _jet_arg(position, "position", (3,))
    R0, w = _angular_velocity(orientation, representation, quaternion_order, len(p))
    C0 = np.eye(4)
    C0[:3, :3] = R0
    C0[:3, 3] = p[0]
    return C0, _spatial(C0, w, p[1:], base)


def to_pose_jet(C0, V, *, representation="matrix", quaternion_order=None, reference="world"):
    """Inverse of :func:`from_pose_jet`: ``(position (K+1, 3), orientation)``
    from ``C₀`` and ``V₀^(0..K−1)`` ``(K, 6)``.

    ``p^(k+1) = Σ_a C(k, a) ω^(a) × p^(k−a) + v^(k)`` (with ``p`` measured
    from the base origin held fixed, ``p₀ = 0``, when ``reference="base"``);
    the orientation jet ``(K+1, 3, 3)`` from
    ``R^(k+1) = Σ_a C(k, a) ω̂^(a) R^(k−a)``, ``(K+1, 4)`` from
    ``q^(k+1) = ½ Σ_a C(k, a) (0, ω^(a)) ⊗ q^(k−a)`` with ``w₀ ≥ 0`` (component
    order ``quaternion_order``), or ``(K+1, 3)`` rotation vectors with ``|φ₀| ≤ π``.
    """
    base = about_base(reference)
    representation = _representation_arg(representation, quaternion_order)
    C0 = check_pose(C0, "C0")
    V = _jet_arg(V, "V", (6,), min_rows=0)
    w, p_dot = _omega_p_dot(C0, V, base)
    p = np.vstack([C0[:3, 3], p_dot])
    if representation == "quaternion":
        return p, _from_wxyz(_quaternion_jet(se3.quat_from_rotation(C0[:3, :3], quaternion_order="wxyz"), w), quaternion_order)
    R = _rotation_jet(C0[:3, :3], w)
    return p, (R if representation == "matrix" else _rotvec_jet(R))


def twist_to_spatial(C0, twist, convention, *, reference="world"):
    """The spatial twist jet ``(K+1, 6)`` of a twist jet in another
    convention (module docstring), at base pose ``C₀``.

    Body-frame parts are rotated by the moving ``R``:
    ``ω^(k) = Σ_a C(k, a) R^(a) ω_b^(k−a)``, ``ṗ^(k) = Σ_a C(k, a) R^(a) v_b^(k−a)``
    with ``R^(k+1) = Σ_a C(k, a) R^(k−a) ω̂_b^(a)``; then
    ``v^(k) = p^(k+1) − Σ_a C(k, a) ω^(a) × p^(k−a)`` with ``p`` from the world
    origin (``reference="world"``) or from the base origin held fixed
    (``"base"``, SPEC §1).
    """
    base = about_base(reference)
    convention = _convention_arg(convention)
    C0 = check_pose(C0, "C0")
    X = _jet_arg(twist, "twist", (6,))
    if convention == "spatial":
        return _spatial(C0, *_omega_p_dot(C0, X, False), base)
    if convention == "drake":
        return _spatial(C0, X[:, :3], X[:, 3:], base)
    if convention == "mujoco":
        w_b = X[:, 3:]
        R = _rotation_jet(C0[:3, :3], w_b, body=True)[:len(X)]
        return _spatial(C0, leibniz(R, w_b), X[:, :3], base)
    w_b, v_b = (X[:, :3], X[:, 3:]) if convention == "body" else (X[:, 3:], X[:, :3])
    R = _rotation_jet(C0[:3, :3], w_b, body=True)[:len(X)]
    return _spatial(C0, leibniz(R, w_b), leibniz(R, v_b), base)


def twist_from_spatial(C0, V, convention, *, reference="world"):
    """Inverse of :func:`twist_to_spatial`: the jet ``(K+1, 6)`` in
    ``convention`` of the spatial twist jet ``V`` (about the world origin, or
    the base origin held fixed at this instant with ``reference="base"``,
    SPEC §1).

    ``ω_b^(k) = Σ_a C(k, a) Rᵀ^(a) ω^(k−a)``, ``v_b^(k) = Σ_a C(k, a) Rᵀ^(a) ṗ^(k−a)``
    with ``R^(k+1) = Σ_a C(k, a) ω̂^(a) R^(k−a)``: ``(ω_b, v_b) = Ad_{C⁻¹} V``
    and its derivatives.
    """
    base = about_base(reference)
    convention = _convention_arg(convention)
    C0 = check_pose(C0, "C0")
    V = _jet_arg(V, "V", (6,))
    w, p_dot = _omega_p_dot(C0, V, base)
    if convention == "spatial":
        return _world_twist(C0[:3, 3], w, p_dot) if base else V.copy()
    if convention == "drake":
        return np.hstack([w, p_dot])
    Rt = np.swapaxes(_rotation_jet(C0[:3, :3], w)[:len(V)], 1, 2)
    w_b, v_b = leibniz(Rt, w), leibniz(Rt, p_dot)
    if convention == "mujoco":
        return np.hstack([p_dot, w_b])
    return np.hstack([w_b, v_b] if convention == "body" else [v_b, w_b])


# ------------------------------------------------------------- Taylor --

def taylor(jet, h):
    """The jet of the same quantity at ``t + h`` from its jet at ``t``, by its
    truncated Taylor series: row ``k`` is ``Σ_{i=0}^{K−k} jet[k+i] hⁱ/i!``
    (exact for a polynomial of degree ``K``; otherwise row ``k`` errs by
    ``O(h^(K+1−k))``). ``jet`` is ``(K+1, …)``."""
    J = as_array(jet, "jet")
    if J.ndim < 1 or J.shape[0] < 1:
        raise ValueError(f"jet: expected a jet of shape (K+1, …) with K+1 ≥ 1 rows, "
                         f"got {J.shape}")
    h = check_scalar(h, "h")
    K = J.shape[0] - 1
    powers = h ** np.arange(K + 1) / _factorials(K + 1)
    out = np.zeros(J.shape)
    for k in range(K + 1):
        out[k] = np.tensordot(powers[:K + 1 - k], J[k:], axes=(0, 0))
    return out


# ------------------------------------------------- sampled trajectories --

class TrajectoryJets(NamedTuple):
    """What :meth:`SampledTrajectory.jets` returns; unpacks as
    ``C0, V, q = traj.jets(t, K)``."""
    base_pose: np.ndarray
    base_twist: np.ndarray
    q: np.ndarray


def _make_interp_spline():
    try:
        from scipy.interpolate import make_interp_spline
    except ImportError:
        raise ImportError("liedyn.trajectory.SampledTrajectory interpolates with SciPy: "
                          "pip install 'liedyn[trajectory]' (or scipy>=1.11)") from None
    return make_interp_spline


def _unwrap(psi, near):
    """The rotation vector of ``exp(ψ̂)`` nearest ``near``: ``(θ + 2πn) e``
    with ``e = ψ/θ`` and ``n = round((e·near − θ)/2π)``."""
    theta = float(np.linalg.norm(psi))
    if theta == 0.0:
        return psi
    e = psi / theta
    n = round((e @ near - theta) / (2.0 * np.pi))
    return psi + 2.0 * np.pi * n * e


class SampledTrajectory:
    """Jets at any time of a trajectory known by samples.

    Parameters
    ----------
    t : (S,)
        Time stamps, strictly increasing (any spacing).
    poses : (S, 4, 4), optional
        Base poses. Or, instead, ``positions (S, 3)`` and ``quaternions (S, 4)``
        with ``quaternion_order="wxyz"`` or ``"xyzw"`` (each unit within
        :data:`QUATERNION_TOL`; signs may flip from sample to sample).
    q : (S, n), optional
        Joint positions.
    degree : int
        Degree ``d`` of the interpolating splines (default 5). Jets up to
        ``V₀^(K)`` and ``q^(K+1)`` need ``d ≥ K + 2`` (the spline's
        derivatives up to ``d − 1`` are continuous), and ``S ≥ d + 1``
        samples. Odd degrees put the knots at the samples.

    Notes
    -----
    The interpolant. Position and joints: one SciPy ``make_interp_spline`` of degree ``d``
    through all samples (not-a-knot ends). Rotation: in the Lie algebra about
    a reference per sample interval: for ``t`` in ``[t_i, t_{i+1})``,
    ``R(t) = R_i exp(ψ̂(t))`` where ``ψ`` is the degree-``d`` spline through
    ``ψ_j = log(R_iᵀ R_j)`` of the ``2(d + 1)`` samples around the interval
    (made continuous from sample to sample by choosing, among the rotation
    vectors ``(θ + 2πn) e`` of each rotation, the one nearest its
    neighbour's); its jets follow from ``ψ``'s by Taylor arithmetic. Whole
    turns and rotations beyond π are therefore no different from small
    ones; ``R(t)`` is continuous, and its derivatives jump at the sample
    times by the truncation error below.

    Truncation error: for a trajectory with ``d + 1`` continuous derivatives
    sampled with largest spacing ``h``, derivative ``j`` of a spline of
    degree ``d`` errs by ``O(h^(d+1−j))``, ``j ≤ d − 1``. Hence ``C₀`` is
    ``O(h^(d+1))``, ``V₀^(k)`` (from ``p^(k+1)`` and ``R^(k+1)``)
    ``O(h^(d−k))`` and ``q^(j)`` ``O(h^(d+1−j))``.

    Why splines of degree ``d`` rather than ``CubicSpline``: a cubic's third
    derivative is piecewise constant and its fourth zero, while inverse
    dynamics of order ``r`` reads ``q^(r+2)``; ``make_interp_spline`` gives
    any degree with the same interface.
    """

    def __init__(self, t, poses=None, *, positions=None, quaternions=None, quaternion_order=None,
                 q=None, degree=5):
        make_interp_spline = _make_interp_spline()
        if isinstance(degree, (bool, np.bool_)) or not isinstance(degree, (int, np.integer)) \
                or degree < 1:
            raise ValueError(f"degree: expected an int ≥ 1, got {degree!r}")
        self.degree = d = int(degree)
        self.t = t = as_array(t, "t", ndim=1)
        S = len(t)
        if S < d + 1:
            raise ValueError(f"t: a spline of degree {d} needs at least {d + 1} samples, got {S}")
        if not np.all(np.diff(t) > 0.0):
            i = int(np.argmax(np.diff(t) <= 0.0))
            raise ValueError(f"t: time stamps must be strictly increasing, "
                             f"t[{i}] = {t[i]} ≥ t[{i + 1}] = {t[i + 1]}")
        self.rotations, p = self._poses(S, poses, positions, quaternions, quaternion_order)
        self._position = make_interp_spline(t, p, k=d, axis=0)
        self._q = None
        if q is not None:
            q = as_array(q, "q", ndim=2)
            if len(q) != S:
                raise ValueError(f"q: expected {S} rows, one per time stamp, got {q.shape}")
            self._q = make_interp_spline(t, q, k=d, axis=0)
        self.window = min(S, 2 * (d + 1))
        self._make_interp_spline = make_interp_spline

    @staticmethod
    def _poses(S, poses, positions, quaternions, quaternion_order):
        if poses is not None:
            if positions is not None or quaternions is not None or quaternion_order is not None:
                raise ValueError("poses: give either poses or positions and quaternions "
                                 "(with quaternion_order), not both")
            C = as_array(poses, "poses")
            if C.shape != (S, 4, 4):
                raise ValueError(f"poses: expected shape ({S}, 4, 4), one pose per time "
                                 f"stamp, got {C.shape}")
            for i in range(S):
                check_pose(C[i], f"poses[{i}]")
            return C[:, :3, :3].copy(), C[:, :3, 3].copy()
        if positions is None or quaternions is None:
            raise ValueError("poses: expected poses (S, 4, 4), or positions (S, 3) and "
                             "quaternions (S, 4) with quaternion_order")
        _representation_arg("quaternion", quaternion_order)
        p = as_array(positions, "positions")
        if p.shape != (S, 3):
            raise ValueError(f"positions: expected shape ({S}, 3), got {p.shape}")
        Q = as_array(quaternions, "quaternions")
        if Q.shape != (S, 4):
            raise ValueError(f"quaternions: expected shape ({S}, 4), got {Q.shape}")
        Q = _to_wxyz(Q, quaternion_order)
        R = np.array([se3.rotation_from_quat(_unit_quaternion(Q[i], f"quaternions[{i}]"), quaternion_order="wxyz")
                      for i in range(S)])
        return R, p

    @property
    def time_range(self):
        """``(t₀, t_{S−1})``, the times :meth:`jets` accepts."""
        return float(self.t[0]), float(self.t[-1])

    def _rotation(self, tau, rows):
        """``R^(0..rows−1)`` at ``tau`` from the local Lie-algebra spline."""
        t, S, W = self.t, len(self.t), self.window
        i = min(int(np.searchsorted(t, tau, side="right")) - 1, S - 2)
        j0 = min(max(i - W // 2 + 1, 0), S - W)
        R_ref = self.rotations[i]
        psi = np.array([se3.log_so3(R_ref.T @ self.rotations[j]) for j in range(j0, j0 + W)])
        for j in range(i - j0 + 1, W):
            psi[j] = _unwrap(psi[j], psi[j - 1])
        for j in range(i - j0 - 1, -1, -1):
            psi[j] = _unwrap(psi[j], psi[j + 1])
        spline = self._make_interp_spline(t[j0:j0 + W], psi, k=min(self.degree, W - 1), axis=0)
        psi_jet = np.array([spline(tau, nu=k) for k in range(rows)])
        return R_ref @ _rotation_jet_of_rotvec(psi_jet)

    def jets(self, t, K, *, reference="world"):
        """``TrajectoryJets(base_pose (4, 4), base_twist (K+1, 6), q (K+2, n))``
        at time ``t`` in :attr:`time_range`: ``C₀``, ``V₀^(0..K)`` (about the
        world origin, or the base origin held fixed at ``t`` with
        ``reference="base"``, SPEC §1) and
        ``q^(0..K+1)`` (``None`` without joints). What a call reads:
        inverse dynamics and the closed form of order ``r`` take ``K = r + 1``,
        forward kinematics ``K = r``, forward dynamics' state ``K = 0``."""
        base = about_base(reference)
        tau = check_scalar(t, "t")
        t0, t1 = self.time_range
        if not t0 <= tau <= t1:
            raise ValueError(f"t: {tau} is outside the sampled time range [{t0}, {t1}]")
        K = check_order(K, "K")
        if K + 2 > self.degree:
            raise ValueError(f"K: V^({K}) and q^({K + 1}) need a spline of degree ≥ {K + 2} "
                             f"(continuous derivatives up to {K + 1}); this one has degree "
                             f"{self.degree}")
        R = self._rotation(tau, K + 2)
        p = np.array([self._position(tau, nu=k) for k in range(K + 2)])
        C0 = np.eye(4)
        C0[:3, :3] = R[0]
        C0[:3, 3] = p[0]
        V = _spatial(C0, _angular_velocity_jet(R), p[1:], base)
        q = None if self._q is None else np.array([self._q(tau, nu=k) for k in range(K + 2)])
        return TrajectoryJets(C0, V, q)
