"""Centroidal quantities and energy, and their time derivatives to any order
(SPEC §14).

Glossary (every spatial quantity in world axes; ``Σ_j`` over the moving
bodies: all of them for a floating base, bodies ``1..N−1`` for a fixed one)
--------------------------------------------------------------------------
==========  ===============  ================================================
``m``                        total mass ``Σ_j m_j`` of the moving bodies
``c^(k)``   (K+1, 3)         centre of mass ``c = Σ_j m_j c_j / m`` and its jet
``Π^(k)``   (K+1, 6)         total spatial momentum ``Σ_j Π_j``, moment about
                             the world origin, ``(Π_ω, Π_v)``
``h_G^(k)`` (K+1, 6)         centroidal momentum: ``Π`` with its moment taken
                             about the CoM, ``h_G = X_G Π = (Π_ω − c × Π_v, Π_v)``
``X_G``     (6, 6)           ``[[I₃, −ĉ], [0, I₃]]``, wrenches about the origin to
                             wrenches about ``c``
``A_G^(k)`` (K+1, 6, nv)     centroidal momentum matrix, ``h_G = A_G ν``
``T^(k)``   (K+1,)           kinetic energy ``½ Σ_j Π_jᵀ V_j + ½ Σ_i I_a,i q̇_i²``
``U^(k)``   (K+1,)           potential energy ``−m g⃗ᵀ c``
==========  ===============  ================================================

Every jet of a product is its Leibniz sum, ``(x y)^(k) = Σ_a binom(k, a)
x^(a) y^(k−a)`` (:func:`_leibniz`); the factors' jets are those of SPEC §3–§4:
``c_j^(k+1) = Σ_a binom(k, a) ω_j^(a) × c_j^(k−a) + v_j^(k)`` (a point fixed on
body j), ``Π_j^(k)`` from H-GRNE-FBS, ``M_j^(k)`` from the recursion of §4.

The centroidal momentum matrix. ``V_j = J_j ν`` with ``J_j`` the spatial
Jacobian of body j (base block ``I₆``, column ``S_i`` for each joint i on the
path to j), so ``Π = Σ_j M_j J_j ν = A ν`` with the composite inertias
``M^C_i = Σ_{j ∈ sub(i)} M_j``::

    A = [M^C_0, …, M^C_i S_i, …]             A_G = X_G(c) A
    A^(k)   column i:  Σ_a binom(k, a) (M^C_i)^(k−a) S_i^(a)     (base block (M^C_0)^(k))
    A_G^(k) = Σ_a binom(k, a) X_G^(a) A^(k−a),   X_G^(a) = [[0, −ĉ^(a)], [0, 0]] for a ≥ 1

(fixed base: no base block, ``ν = q̇``).
"""

import numpy as np

from ..spatial import se3
from .._checks import check_motion_slow
from .frames import ad_matrix
from .inverse import inverse_dynamics
from .kinematics import forward_kinematics
from ..multibody.model import check_model_order
from ..multibody.results import _freeze, _frozen_setattr, _hat, cross3
from ..multibody.workspace import binomials

__all__ = ["CentroidalResult", "centroidal", "centroidal_momentum_matrix"]


class CentroidalResult:
    """Output of :func:`centroidal` of order ``K``.

    Attributes
    ----------
    mass : float
        ``m``, the total mass of the moving bodies: every body for a floating
        base; for a fixed base the base body's own mass is left out (as
        Pinocchio's ``centerOfMass`` and ``computePotentialEnergy`` do).
    com : (K+1, 3)
        ``c^(k)``: centre of mass of those bodies in the world, velocity,
        acceleration, …
    momentum : (K+1, 6)
        ``Π^(k)``: total spatial momentum ``Σ_j Π_j``, ``(moment, linear)``,
        moment about the world origin.
    centroidal_momentum : (K+1, 6)
        ``h_G^(k)``: the same momentum with its moment about the CoM, world
        axes, angular first (``(Π_ω − c × Π_v, Π_v)``; Pinocchio's ``hg`` is
        linear first).
    kinetic_energy : (K+1,)
        ``T^(k)``, including the rotors' ``½ Σ I_a q̇²``, so that
        ``T = ½ νᵀ M ν`` with ``M`` of :func:`liedyn.mass_matrix`.
    potential_energy : (K+1,)
        ``U^(k)``, ``U = −m g⃗ᵀ c`` over the moving bodies (a fixed base's
        own mass would add a constant: left out, as Pinocchio does).
    """

    __slots__ = ("mass", "com", "momentum", "centroidal_momentum", "kinetic_energy",
                 "potential_energy")
    __setattr__ = _frozen_setattr

    def __init__(self, mass, com, momentum, centroidal_momentum, kinetic_energy,
                 potential_energy):
        _freeze(self, mass=mass, com=com, momentum=momentum,
                centroidal_momentum=centroidal_momentum, kinetic_energy=kinetic_energy,
                potential_energy=potential_energy)

    @property
    def order(self):
        """``K``, the highest derivative of the jets."""
        return self.com.shape[0] - 1

    def __repr__(self):
        return f"CentroidalResult(order={self.order}, mass={self.mass:.6g})"


def _leibniz(product, x, y):
    """Jet of ``product(x, y)`` for a bilinear ``product``:
    ``Σ_a binom(k, a) product(x^(a), y^(k−a))``, ``k = 0..len(x) − 1``."""
    K = len(x) - 1
    B = binomials(K)
    return np.array([sum(B[k, a] * product(x[a], y[k - a]) for a in range(k + 1))
                     for k in range(K + 1)])


def _dot(x, y):
    return np.sum(x * y)


def _moving(model):
    """The bodies that move: all, or all but a fixed base."""
    return slice(0 if model.floating_base else 1, None)


def _com_jet(model, body_pose, twist, K):
    """``(m, c^(0..K))`` from the body poses ``(N, 4, 4)`` and twist jets
    ``V_j^(0..K−1)`` (rows of ``twist`` past them are not read)."""
    moving = _moving(model)
    m_j = model.body_mass[moving]
    m = float(np.sum(m_j))
    if not m > 0.0:
        raise ValueError("model: its moving bodies have no mass, so there is no centre of mass")
    C, V = body_pose[moving], twist[:, moving]
    c_j = np.zeros((K + 1,) + m_j.shape + (3,))
    c_j[0] = np.einsum("jab,jb->ja", C[:, :3, :3], model.body_com[moving]) + C[:, :3, 3]
    B = binomials(K)
    for k in range(K):                  # c_j^(k+1) = Σ_a binom(k, a) ω_j^(a) × c_j^(k−a) + v_j^(k)
        c_j[k + 1] = V[k, :, 3:] + np.einsum("a,aji->ji", B[k, :k + 1],
                                             cross3(V[:k + 1, :, :3], c_j[k::-1]))
    return m, np.einsum("j,kja->ka", m_j, c_j) / m


def _padded(jet):
    """``jet`` with one more row, of zeros."""
    return np.vstack([jet, np.zeros((1, jet.shape[1]))])


def centroidal(model, base_pose, base_twist, q, order):
    """Centre of mass, momentum, centroidal momentum and energies, with their
    first ``order`` time derivatives.

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Pose of the base frame in the world (``None``: ``model.home_pose``).
    base_twist : (order+1, 6) or None (more rows: the first order+1 are read)
        Spatial base twist jet ``V₀^(0..order)``; ``None`` for a fixed base.
    q : (order+2, n) (more rows: the first order+2 are read)
        Joint jet ``q^(0..order+1)``.
    order : int ≥ 0
        Highest derivative ``K`` returned.

    Returns
    -------
    CentroidalResult
        ``com`` reads only ``V₀^(0..K−1)`` and ``q^(0..K)``; the momenta and
        the kinetic energy need the rows above.

    Raises
    ------
    ValueError, TypeError
        Wrong shapes or types, non-finite values, a non-SE(3) pose, a bad
        order (the message names the argument); a model whose moving bodies
        have no mass.

    Notes
    -----
    One :func:`liedyn.inverse_dynamics` call gives the body momentum and
    twist jets ``Π_j^(k)``, ``V_j^(k)`` (SPEC §4), then (SPEC §14)::

        c^(k)   = Σ_j m_j c_j^(k) / m
        Π^(k)   = Σ_j Π_j^(k)
        h_G^(k) = (Π_ω^(k) − Σ_a binom(k, a) c^(a) × Π_v^(k−a), Π_v^(k))
        T^(k)   = ½ Σ_a binom(k, a) (Σ_j Π_j^(a)ᵀ V_j^(k−a) + Σ_i I_a,i q_i^(a+1) q_i^(k−a+1))
        U^(k)   = −m g⃗ᵀ c^(k)

    Cost O(N · order²).
    """
    K = check_model_order(model, order)
    C0, V0, qj = check_motion_slow(model, base_pose, base_twist, q, K + 1, K + 2)
    # Inverse dynamics of order K also reads V₀^(K+1) and q^(K+2), on which
    # Π_j^(0..K) and V_j^(0..K) do not depend (SPEC §3–§4): zero rows.
    inv = inverse_dynamics(model, C0, _padded(V0) if model.floating_base else None,
                           _padded(qj), K)
    Pi_j, V_j = inv.momentum[:K + 1], inv.twist[:K + 1]
    m, c = _com_jet(model, inv.body_pose, V_j, K)
    Pi = Pi_j.sum(axis=1)
    h_G = Pi.copy()
    h_G[:, :3] -= _leibniz(np.cross, c, Pi[:, 3:])
    qd = qj[1:]
    T = 0.5 * (_leibniz(_dot, Pi_j, V_j) + _leibniz(_dot, model.joint_armature * qd, qd))
    U = -m * (c @ model.gravity)
    return CentroidalResult(mass=m, com=c, momentum=Pi, centroidal_momentum=h_G,
                            kinetic_energy=T, potential_energy=U)


def _inertia_jets(model, fk, K):
    """``M_j^(0..K)`` ``(K+1, N, 6, 6)`` about the world origin from the body
    poses and twist jets ``V_j^(0..K−1)`` of ``fk`` (SPEC §1, §4):
    ``M_j = Ad_{C_j⁻¹}ᵀ Mᵇ_j Ad_{C_j⁻¹}``,
    ``M^(k) = −Σ_a binom(k−1, a) (M^(k−1−a) ad_{V^(a)} + ad_{V^(a)}ᵀ M^(k−1−a))``."""
    B = binomials(K)
    ad = ad_matrix(fk.twist[:K])
    M = np.zeros((K + 1, model.n_bodies, 6, 6))
    M[0] = [se3.transform_inertia(C, Mb) for C, Mb in zip(fk.body_pose, model.body_inertia)]
    for k in range(1, K + 1):
        for a in range(k):
            X = M[k - 1 - a] @ ad[a]                  # ad_Vᵀ M = (M ad_V)ᵀ, M symmetric
            M[k] -= B[k - 1, a] * (X + np.swapaxes(X, -1, -2))
    return M


def centroidal_momentum_matrix(model, base_pose, base_twist, q, order):
    """The centroidal momentum matrix ``A_G`` (``h_G = A_G ν``) and its first
    ``order`` time derivatives, exactly.

    ``ν = (V₀, q̇)`` with ``V₀`` the spatial base twist about the world origin
    (columns 0–5) for a floating base, ``ν = q̇`` for a fixed one; column
    ``6 + i`` (floating) or ``i`` (fixed) belongs to q column ``i``. Rows are
    ``h_G``'s, angular first (Pinocchio's ``Ag`` is linear first).

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Base pose (``None``: ``model.home_pose``).
    base_twist : (order, 6) or None (more rows: the first order are read)
        Spatial base twist jet ``V₀^(0..order−1)`` (``A_G^(k)`` needs the
        twists up to order ``k − 1``); ``None`` for a fixed base, and for any
        base when ``order = 0``.
    q : (order+1, n) (more rows: the first order+1 are read)
        Joint jet ``q^(0..order)``.
    order : int ≥ 0

    Returns
    -------
    (order+1, 6, nv)
        Row ``k`` is ``A_G^(k)``, so ``h_G^(k) = Σ_a binom(k, a) A_G^(a) ν^(k−a)``.

    Raises
    ------
    ValueError, TypeError
        As :func:`centroidal`.

    Notes
    -----
    ``A = Σ_j M_j J_j`` has the composite inertia ``M^C_0`` as its base block
    and ``M^C_i S_i`` as joint i's column; ``A_G = X_G(c) A`` (module
    docstring, SPEC §14), each jet by the Leibniz rule. Cost
    O(N · depth · order²) 6×6 products.
    """
    K = check_model_order(model, order)
    if K == 0 and base_twist is None:
        base_twist = np.zeros((0, 6))
    C0, V0, qj = check_motion_slow(model, base_pose, base_twist, q, K, K + 1)
    # Kinematics of order K also returns V^(K), from V₀^(K) and q^(K+1): zero
    # rows, since S^(0..K) and V^(0..K−1), all that is used, do not depend on them.
    fk = forward_kinematics(model, C0, _padded(V0) if model.floating_base else None,
                            _padded(qj), K)
    M_C = _inertia_jets(model, fk, K)
    parent = model.body_parent
    for j in range(model.n_bodies - 1, 0, -1):         # composites, leaves first (parent < j)
        M_C[:, parent[j]] += M_C[:, j]
    nb = 6 if model.floating_base else 0
    A = np.zeros((K + 1, 6, model.nv))
    if nb:
        A[:, :, :6] = M_C[:, 0]
    for j in range(1, model.n_bodies):
        A[:, :, nb + j - 1] = _leibniz(np.matmul, M_C[:, j], fk.screw[:K + 1, j])
    _, c = _com_jet(model, fk.body_pose, fk.twist, K)
    X_G = np.zeros((K + 1, 6, 6))
    X_G[0, :3, :3] = X_G[0, 3:, 3:] = np.eye(3)
    X_G[:, :3, 3:] = -_hat(c)
    return _leibniz(np.matmul, X_G, A)
