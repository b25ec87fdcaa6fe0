"""The aerial manipulator of the paper's experiments (SPEC §8, Table 3): a
fully actuated hexarotor with six tilted propellers carrying two 3-link arms.

Bodies
------
Base frame at the hexarotor's CoM, home pose identity. The arms hang ``b``
below the base CoM at lateral offsets ``x = +c/2`` (joints 1–3) and
``x = −c/2`` (joints 4–6). Link CoM frames: first link ``T_z(−b−d) T_x(±c/2)``
from the base CoM, each next link ``T_z(−2d)`` from its parent; each joint sits
``d`` above its link's CoM. Joint axes, shoulder to wrist: ``(0,1,0)``,
``(1,0,0)``, ``(0,0,1)``.

Propellers
----------
Propeller ``i = 1..6`` has the frame, in the base frame,

    C_{p_i} = R_z((2−i)π/3) T_x(a) R_x(α_i) R_y(β),   α_i = (−1)^(i+1) α

and produces the wrench, in its own frame (moment first),

    W^{p_i} = f_i (s_i κ e_z, e_z),   s_i = (−1)^i,

a thrust ``f_i`` along its z axis and a drag moment ``κ f_i`` about it that
opposes the rotor's spin; neighbouring rotors spin in opposite directions.
The base wrench in the base (body) frame is
``W^B = Σ_i Ad_{C_{p_i}}^{−T} W^{p_i} = A f`` with the constant 6×6
allocation matrix ``A`` (SPEC §8).

The paper does not print ``a, α, β, κ``; the defaults follow the fully
actuated tilted hexarotor of Rajappa, Ryll, Bülthoff and Franchi (ICRA 2015,
the paper's ref. [56]), which the paper's Fig. 2 draws:

* **arm length** ``a = 0.25 m``: a 0.5 m-diameter hexarotor frame, the usual
  size for a 2.5 kg platform with 10-inch propellers;
* **cant angle** ``α = 30°``, alternating in sign around the frame, as in the
  fixed-tilt designs (cant angles of a few tens of degrees; Perin et al. 2024
  survey the trade-off). At 30° each rotor keeps cos α ≈ 0.87 of its thrust
  for hovering, and the allocation matrix with moments scaled by ``1/a`` has
  condition number √6 ≈ 2.45, so thrusts follow from any wrench without
  amplifying round-off;
* **dihedral angle** ``β = 0``: tilting about the arm alone already gives full
  actuation;
* **drag ratio** ``κ = 0.016 m``: the torque-to-thrust coefficient ratio
  ``c_τ/c_f`` of 10-inch propellers, typically 0.01–0.02 m;
* **spin directions** ``s_i = (−1)^i`` are paired with the cant signs so that
  the yaw moment of the tilted thrust (``−a sin α_i``) and the drag moment
  (``s_i κ cos α``) add rather than cancel: with the opposite pairing the
  (unscaled) condition number grows from 6.2 to 7.8.

All of these remain parameters of :class:`AerialManipulatorParams`.
"""

from dataclasses import dataclass

import numpy as np

from .. import ModelBuilder, Revolute
from ..spatial import se3
from ..multibody.workspace import binomials

__all__ = ["N_PROPELLERS", "AXES", "AerialManipulatorParams", "aerial_manipulator",
           "spin_directions", "propeller_frames", "allocation_matrix", "thrusts_to_wrench",
           "wrench_to_thrusts", "body_wrench_jet", "translation"]

N_PROPELLERS = 6
AXES = ((0.0, 1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0))   # joint axes, shoulder to wrist


def translation(x=0.0, y=0.0, z=0.0):
    """``T`` (4, 4): the pure translation ``(x, y, z)``."""
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


@dataclass(frozen=True)
class AerialManipulatorParams:
    """Physical parameters (SI units, angles in radians).

    Table 3 of the paper: ``base_mass`` ``m_B1``, ``base_inertia`` ``J_B1``
    (diagonal, kg m²), ``link_mass`` ``m_Bj``, ``link_inertia`` ``J_Bj``,
    the offsets ``b`` (arm attachment below the base CoM), ``c`` (lateral
    distance between the arms), ``d`` (half link length) and ``gravity``.

    Propellers (absent from the paper, see the module docstring):
    ``prop_arm`` ``a``, ``prop_cant`` ``α`` (sign alternates from propeller 1
    positive), ``prop_dihedral`` ``β``, ``drag_ratio`` ``κ``.
    """

    base_mass: float = 2.5
    base_inertia: tuple = (0.03, 0.03, 0.05)
    link_mass: float = 0.25
    link_inertia: tuple = (0.002, 0.002, 0.001)
    b: float = 0.10
    c: float = 0.18
    d: float = 0.06
    gravity: float = 9.81
    prop_arm: float = 0.25
    prop_cant: float = np.deg2rad(30.0)
    prop_dihedral: float = 0.0
    drag_ratio: float = 0.016


def aerial_manipulator(params=AerialManipulatorParams(), floating_base=True):
    """The 7-body, 6-joint tree of the paper's aerial manipulator."""
    P = params
    m = ModelBuilder(floating_base=floating_base, gravity=(0.0, 0.0, -P.gravity))
    m.add_body("base", None, None, np.eye(4),
               se3.spatial_inertia(P.base_mass, np.zeros(3), np.diag(P.base_inertia)))
    Ml = se3.spatial_inertia(P.link_mass, np.zeros(3), np.diag(P.link_inertia))
    for arm, sign in ((1, 1.0), (2, -1.0)):
        parent = "base"
        for k in range(3):
            origin = (translation(x=sign * P.c / 2.0, z=-P.b - P.d) if k == 0
                      else translation(z=-2.0 * P.d))
            name = f"arm{arm}_link{k + 1}"
            m.add_body(name, parent, Revolute(AXES[k], point=(0.0, 0.0, P.d)), origin, Ml)
            parent = name
    return m.build()


def _rotation(axis, angle):
    return se3.exp(np.concatenate([np.asarray(axis, float) * angle, np.zeros(3)]))


def spin_directions():
    """``s_i = (−1)^i``, ``(6,)``: sign of each propeller's drag moment about its z."""
    return np.array([(-1.0) ** i for i in range(1, N_PROPELLERS + 1)])


def propeller_frames(params=AerialManipulatorParams()):
    """Propeller poses in the base frame, ``(6, 4, 4)``:
    ``C_{p_i} = R_z((2−i)π/3) T_x(a) R_x(α_i) R_y(β)`` with ``α_i = (−1)^(i+1) α``."""
    P = params
    out = np.empty((N_PROPELLERS, 4, 4))
    for i in range(1, N_PROPELLERS + 1):
        cant = (-1.0) ** (i + 1) * P.prop_cant
        out[i - 1] = (_rotation((0, 0, 1), (2 - i) * np.pi / 3.0) @ translation(x=P.prop_arm)
                      @ _rotation((1, 0, 0), cant) @ _rotation((0, 1, 0), P.prop_dihedral))   # SPEC §8
    return out


def allocation_matrix(params=AerialManipulatorParams()):
    """The 6×6 matrix ``A`` with base wrench (body frame) ``W^B = A f``.

    Column ``i`` is ``Ad_{C_{p_i}}^{−T} (s_i κ e_z, e_z)``: the body-frame wrench
    of a unit thrust of propeller ``i`` with its drag moment.
    """
    A = np.empty((6, N_PROPELLERS))
    unit = np.zeros(6)
    unit[5] = 1.0
    for i, (C, s) in enumerate(zip(propeller_frames(params), spin_directions())):
        unit[2] = s * params.drag_ratio
        A[:, i] = se3.Ad(se3.inv(C)).T @ unit                                  # SPEC §8
    return A


def thrusts_to_wrench(thrust, params=AerialManipulatorParams()):
    """Base wrench jet (body frame) ``(rows, 6)`` from thrust jets ``(rows, 6)``.

    The allocation is constant in the body frame, so ``W^B(k) = A f^(k)`` row
    by row.
    """
    f = np.asarray(thrust, float)
    if f.ndim != 2 or f.shape[1] != N_PROPELLERS:
        raise ValueError(f"thrust: expected a jet of shape (rows, {N_PROPELLERS}), got {f.shape}")
    return f @ allocation_matrix(params).T


def wrench_to_thrusts(wrench_body, params=AerialManipulatorParams()):
    """Thrust jets ``(rows, 6)`` from a base wrench jet ``(rows, 6)`` in the
    body frame: ``f^(k) = A⁻¹ W^B(k)``."""
    W = np.asarray(wrench_body, float)
    if W.ndim != 2 or W.shape[1] != 6:
        raise ValueError(f"wrench_body: expected a jet of shape (rows, 6), got {W.shape}")
    return np.linalg.solve(allocation_matrix(params), W.T).T


def body_wrench_jet(base_pose, base_twist, wrench):
    """Body-frame jet of a spatial (world-frame) wrench jet.

    ``W^B = Ad_{C₀}ᵀ W`` (power ``Wᵀ V₀ = W^Bᵀ V^B`` with ``V₀ = Ad_{C₀} V^B``).
    Since ``d/dt Ad_{C₀} = ad_{V₀} Ad_{C₀}`` for the spatial twist ``V₀``,

        d/dt (Ad_{C₀}ᵀ X) = Ad_{C₀}ᵀ D X,    D X = Ẋ + ad_{V₀}ᵀ X,

    so ``W^B(k) = Ad_{C₀}ᵀ (D^k W)``, each application of ``D`` evaluated on
    jets by the Leibniz rule.

    Parameters
    ----------
    base_pose : (4, 4)
        ``C₀``.
    base_twist : (rows-1, 6) or longer
        Spatial base twist jet ``V₀^(0..rows-2)``.
    wrench : (rows, 6)
        Spatial wrench jet ``W^(0..rows-1)``, e.g. ``InverseDynamicsResult.base_wrench``.

    Returns
    -------
    (rows, 6)
        ``W^B(k)``.
    """
    X = np.array(wrench, float)
    if X.ndim != 2 or X.shape[1] != 6:
        raise ValueError(f"wrench: expected a jet of shape (rows, 6), got {X.shape}")
    rows = X.shape[0]
    V = np.asarray(base_twist, float)
    if V.ndim != 2 or V.shape[1] != 6 or V.shape[0] < rows - 1:
        raise ValueError(f"base_twist: expected a jet of shape (≥{rows - 1}, 6), got {V.shape}")
    AdT = se3.Ad(base_pose).T
    coad = [se3.coad(V[a]) for a in range(rows - 1)]
    B = binomials(rows)
    out = np.empty((rows, 6))
    out[0] = AdT @ X[0]
    for k in range(1, rows):
        Y = X[1:].copy()                      # X ← D X: row j needs rows 0..j+1 of X
        for j in range(Y.shape[0]):
            for a in range(j + 1):
                Y[j] += B[j, a] * (coad[a] @ X[j - a])
        X = Y
        out[k] = AdT @ X[0]
    return out
