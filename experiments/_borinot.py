"""Borinot and the laws :mod:`experiments.borinot_flight` compares with
:class:`liedyn.control.FlatTrackingLaw` (SPEC §17.6).

Borinot is ``borinot_flying_arm_2`` of example-robot-data: a coplanar
hexarotor carrying a 2-joint arm. Its URDF has no rotors; their geometry is
that of the robot's published description (the ``hidro_robots`` package the
URDF comes from, ``robots/borinot/xacro/definition.urdf.xacro`` and
``robots/common/xacro/multicopter.xacro``): six rotors on a circle of radius
0.185 m, 0.05 m above the base frame, alternating in spin, drag ratio
``κ = 0.016894 m`` (``momentConstant``), thrust ``c_f Ω²`` with
``c_f = 3.847e-6 N s²`` up to ``Ω_max = 2236 rad/s``, so
``f_max = c_f Ω_max² = 19.23 N`` per rotor (``paper_figures/README.md``).

The comparison laws take the input ``u = (f, M^B, τ)``: the thrust along the
base's ``e₃``, the moment about the base origin in base axes, the joint
torques (:func:`direct_plant` applies them). Both are geometric SE(3)
controllers (Lee, Leok and McClamroch 2010) on a position loop, an attitude
loop and a joint loop, with gains from the poles each loop is given
(``s² + a₁ s + a₀ = (s − p₁)(s − p₂)``), the inertia scaling the attitude
and joint gains:

* :class:`GeometricLaw`, **(a)**, what drone users fly: the robot as one
  rigid body (the arm locked at ``q_nom``: mass ``m``, centre of mass ``c``
  in the base frame, inertia ``J_G`` about it), Mellinger and Kumar's
  single-rigid-body flat feed-forward (attitude, body rates and their rate
  from the reference's ``x_G^(2..4)`` and ``ψ^(0..2)``, with the exact yaw
  rate of SPEC §17.1), and the arm driven by its own computed torque with
  the base taken as fixed (inverse dynamics at a base at rest): each sees
  the other as a disturbance;
* :class:`FlatFeedForwardLaw`, **(b)**: the multibody flat map of order 0 at
  the reference (:func:`liedyn.control.flat_map`: ``f``, ``M^B``, ``τ``
  and the body rates) applied directly, plus the same three PD loops on
  the true errors; no thrust extension.
"""

from importlib.metadata import distribution

import numpy as np

import liedyn
from liedyn import control, se3

G = np.array([0.0, 0.0, -9.81])
EE = "flying_arm_2__ee"
ROTOR_RADIUS, ROTOR_HEIGHT = 0.185, 0.05           # m
DRAG_RATIO = 0.016894178436859097                  # m, momentConstant
THRUST_COEFF, SPEED_MAX = 3.847e-6, 2236.0         # N s², rad/s
F_MAX = THRUST_COEFF * SPEED_MAX ** 2              # N: 19.23 per rotor
# (angle of the rotor on the circle in degrees, spin): "ccw" is +1
ROTORS = ((-90.0, -1), (90.0, 1), (30.0, -1), (-150.0, 1), (-30.0, 1), (150.0, -1))


def borinot():
    erd = distribution("example-robot-data")
    path = next(f for f in erd.files if f.name == "borinot_flying_arm_2.urdf")
    return liedyn.load_urdf(erd.locate_file(path), floating_base=True)


def borinot_rotors():
    """The six :class:`liedyn.control.Rotor` of Borinot, base frame."""
    return [control.Rotor((ROTOR_RADIUS * np.cos(np.radians(a)),
                           ROTOR_RADIUS * np.sin(np.radians(a)), ROTOR_HEIGHT),
                          (0.0, 0.0, 1.0), s, DRAG_RATIO) for a, s in ROTORS]


def _sine(amp, w, phase, t, rows):
    k = np.arange(rows)
    return amp * w ** k * np.sin(w * t + phase + k * np.pi / 2)


class FigureEight:
    """Flat outputs with closed-form jets: ``x_G`` on a figure-eight of
    ``2 A`` by ``2 B`` (``x = A sin ωt``, ``y = B sin 2ωt``) with a vertical
    bob, the yaw swinging, each joint swinging about ``q_nom``."""

    def __init__(self, n, w=2.0, A=1.0, B=0.6, bob=0.2, q_amp=0.6, q_nom=None):
        self.n, self.w, self.A, self.B, self.bob, self.q_amp = n, w, A, B, bob, q_amp
        self.q_nom = np.zeros(n) if q_nom is None else np.asarray(q_nom, float)

    def __call__(self, t, r=1):
        """``(x_G^(0..r+4), ψ^(0..r+2), q^(0..r+2))`` at ``t``."""
        w = self.w
        xG = np.stack([_sine(self.A, w, 0.0, t, r + 5), _sine(self.B, 2 * w, 0.0, t, r + 5),
                       _sine(self.bob, w, 0.5, t, r + 5)], axis=1)
        xG[0, 2] += 1.0
        psi = _sine(0.5, 0.7, 0.0, t, r + 3)
        psi[0] += 0.3
        q = np.zeros((r + 3, self.n))
        for j in range(self.n):
            q[:, j] = _sine(self.q_amp, 1.5 + 0.5 * j, j, t, r + 3)
        q[0] += self.q_nom
        return xG, psi, q


def gains(poles):
    """``(a₀, a₁)`` of ``(s − p₁)(s − p₂)``."""
    return control.gains_from_poles(poles)


def locked_body(model, q_nom):
    """``(m, c, J_G)``: mass, centre of mass in the base frame and inertia
    about it (base axes) of the robot locked at ``q_nom``."""
    fk = liedyn.forward_kinematics(model, np.eye(4), np.zeros((1, 6)),
                                   np.stack([q_nom, 0 * q_nom]), 0)
    M = sum(se3.transform_inertia(C, Mb) for C, Mb in zip(fk.body_pose, model.body_inertia))
    m = M[3, 3]
    c = np.array([M[2, 4], M[0, 5], M[1, 3]]) / m                   # M[:3, 3:] = m ĉ
    return m, c, M[:3, :3] - m * (c @ c * np.eye(3) - np.outer(c, c))


def rigid_model(model, q_nom):
    """One rigid body: the robot locked at ``q_nom`` (its spatial inertia
    about the base origin)."""
    m, c, J = locked_body(model, q_nom)
    b = liedyn.ModelBuilder(floating_base=True, gravity=tuple(model.gravity))
    b.add_body("base", None, None, np.eye(4), se3.spatial_inertia(m, c, J))
    return b.build()


def direct_plant(t, state, u):
    """``u = (f, M^B, τ)``: the base wrench ``(R M^B + p × F, F)``, ``F = f R e₃``
    (world origin), ``τ`` at the joints."""
    C = state.base_pose
    F = C[:3, 2] * u[0]
    return liedyn.Inputs(tau=np.array(u[4:]),
                         base_wrench=np.concatenate([C[:3, :3] @ u[1:4] + np.cross(C[:3, 3], F),
                                                     F]))


def _vee(S):
    return np.array([S[2, 1], S[0, 2], S[1, 0]])


def commanded_attitude(F, psi):
    """``R_c = [b₁ b₂ b₃]``: ``b₃ = F/‖F‖``, ``b₂ = b₃ × x_C/‖·‖``, ``b₁ = b₂ × b₃``
    (the Z-X-Y yaw of SPEC §17.1)."""
    b3 = F / np.linalg.norm(F)
    b2 = np.cross(b3, [np.cos(psi), np.sin(psi), 0.0])
    b2 /= np.linalg.norm(b2)
    return np.stack([np.cross(b2, b3), b2, b3], axis=1)


def rigid_body_flatness(m, xG, psi):
    """Mellinger and Kumar's maps of one rigid body of mass ``m``: thrust
    ``f``, attitude ``R``, body rates ``Ω`` and ``Ω̇`` from ``x_G^(2..4)``,
    ``ψ^(0..2)``, with the exact yaw rate
    ``r = (ψ̇ y_C·y_B + p x_C·z_B)/(x_C·x_B)`` (SPEC §17.1)."""
    a, a1, a2 = xG[2] - G, xG[3], xG[4]
    f = m * np.linalg.norm(a)
    R = commanded_attitude(a, psi[0])
    x, y, z = R.T
    xC = np.array([np.cos(psi[0]), np.sin(psi[0]), 0.0])
    yC = np.array([-np.sin(psi[0]), np.cos(psi[0]), 0.0])
    f1 = m * z @ a1
    h = m / f * (a1 - (z @ a1) * z)                                  # ω × z_B
    p, q = -h @ y, h @ x
    N, D = psi[1] * (yC @ y) + p * (xC @ z), xC @ x
    r = N / D
    w = p * x + q * y + r * z
    z1, x1, y1 = np.cross(w, z), np.cross(w, x), np.cross(w, y)
    f2 = m * (z @ a2 + z1 @ a1)
    h1 = (m * a2 - f2 * z - 2 * f1 * z1) / f - np.cross(w, z1)      # ω̇ × z_B
    p1, q1 = -h1 @ y, h1 @ x
    N1 = (psi[2] * (yC @ y) + psi[1] * (-psi[1] * xC @ y + yC @ y1) + p1 * (xC @ z)
          + p * (psi[1] * yC @ z + xC @ z1))
    D1 = psi[1] * yC @ x + xC @ x1
    r1 = (N1 - r * D1) / D
    return f, R, np.array([p, q, r]), np.array([p1, q1, r1])


def _attitude_moment(R, Om, Rc, Om_d, dOm_d, J, a_R):
    """Lee et al.'s attitude law about the centre of mass, gains scaled by
    ``J``: ``J(−a₀ e_R − a₁ e_Ω) + Ω × JΩ − J(Ω̂ Rᵀ R_c Ω_d − Rᵀ R_c Ω̇_d)``
    (SPEC §17.7)."""
    e_R = 0.5 * _vee(Rc.T @ R - R.T @ Rc)
    RtRc = R.T @ Rc
    e_Om = Om - RtRc @ Om_d
    return (J @ (-a_R[0] * e_R - a_R[1] * e_Om) + np.cross(Om, J @ Om)
            - J @ (np.cross(Om, RtRc @ Om_d) - RtRc @ dOm_d))


class GeometricLaw:
    """(a) The geometric SE(3) controller on the robot as one rigid body
    locked at ``q_nom``, the single-rigid-body flat feed-forward, the arm by
    computed torque with the base taken as fixed (module docstring).

    Parameters
    ----------
    model : Model
    q_nom : (n,)
    target : callable ``target(t) -> (x_G^(0..4+), ψ^(0..2+), q^(0..2+))``
    position_poles, attitude_poles, joint_poles : (2,) each
    """

    def __init__(self, model, q_nom, target, position_poles, attitude_poles, joint_poles):
        self.model, self.target = model, target
        self.m, self.c, self.J = locked_body(model, np.asarray(q_nom, float))
        self.a_x, self.a_R, self.a_q = gains(position_poles), gains(attitude_poles), gains(
            joint_poles)

    def feed_forward(self, t):
        """``(f, R_d, Ω_d, Ω̇_d)`` of the reference at ``t``."""
        xG, psi, _ = self.target(t)
        return rigid_body_flatness(self.m, xG, psi)

    def __call__(self, t, state):
        xG, psi, qd = self.target(t)
        C, V = state.base_pose, state.base_twist
        R, p, w = C[:3, :3], C[:3, 3], V[:3]
        Rc_ = R @ self.c
        x = p + Rc_                                                  # the locked body's CoM
        v = V[3:] + np.cross(w, p) + np.cross(w, Rc_)
        # SPEC §17.7
        F = self.m * (xG[2] - G - self.a_x[0] * (x - xG[0]) - self.a_x[1] * (v - xG[1]))
        f = F @ R[:, 2]
        Rc = commanded_attitude(F, psi[0])
        _, _, Om_d, dOm_d = rigid_body_flatness(self.m, xG, psi)
        M_G = _attitude_moment(R, R.T @ w, Rc, Om_d, dOm_d, self.J, self.a_R)
        MB = M_G + np.cross(self.c, [0.0, 0.0, f])                   # SPEC §17.7: base origin
        qdd = qd[2] - self.a_q[0] * (state.q - qd[0]) - self.a_q[1] * (state.qd - qd[1])
        tau = liedyn.inverse_dynamics(self.model, C, np.zeros((2, 6)),
                                      np.stack([state.q, state.qd, qdd]), 0).tau[0] \
            if self.model.n_joints else np.zeros(0)
        return np.concatenate([[f], MB, tau])


class FlatFeedForwardLaw:
    """(b) The multibody flat map of order 0 at the reference applied
    directly, plus PD loops on the true errors of ``x_G`` (position), the
    attitude (``J_G`` of the robot locked at ``q_nom``) and the joints (the
    joint block of the mass matrix at ``q_nom``); no thrust extension."""

    def __init__(self, model, q_nom, target, position_poles, attitude_poles, joint_poles):
        self.model, self.target = model, target
        q_nom = np.asarray(q_nom, float)
        self.m, _, self.J = locked_body(model, q_nom)
        self.M_q = liedyn.mass_matrix(model, np.eye(4), q_nom)[6:, 6:]
        self.a_x, self.a_R, self.a_q = gains(position_poles), gains(attitude_poles), gains(
            joint_poles)

    def __call__(self, t, state):
        xG, psi, qd = self.target(t)
        fm = control.flat_map(self.model, xG, psi, qd, 0)
        C, V = state.base_pose, state.base_twist
        R = C[:3, :3]
        com = liedyn.centroidal(self.model, C, np.stack([V, np.zeros(6)]),
                                np.stack([state.q, state.qd, np.zeros_like(state.q)]), 1).com
        F = fm.thrust[0] * fm.rotation[0][:, 2] - self.m * (
            self.a_x[0] * (com[0] - xG[0]) + self.a_x[1] * (com[1] - xG[1]))     # SPEC §17.7
        f = F @ R[:, 2]
        Rc = commanded_attitude(F, psi[0])
        Om, RtRc = R.T @ V[:3], R.T @ Rc
        e_R = 0.5 * _vee(Rc.T @ R - R.T @ Rc)
        e_Om = Om - RtRc @ fm.body_rates[0]
        MB = fm.body_moment[0] - self.J @ (self.a_R[0] * e_R + self.a_R[1] * e_Om)  # SPEC §17.7
        tau = fm.tau[0] - self.M_q @ (self.a_q[0] * (state.q - qd[0])
                                      + self.a_q[1] * (state.qd - qd[1]))
        return np.concatenate([[f], MB, tau])
