"""Tracking of the flat outputs of a parallel-thrust base carrying a tree by
exact linearization with the thrust extended dynamically (SPEC §17.6).

Glossary
--------
==================  ===============  ==========================================
``f, ḟ``            scalars          thrust and its rate: the law's states
``f̈``               scalar           the input that drives them
``M^B``             (3,)             body moment about the base origin, base axes
``x_G, ψ, q``       (3,), , (n,)     flat outputs (SPEC §17)
``a_x``, ``a_ψ``,   (4,), (2,), (2,) gains of the centre of mass (relative
``a_q``                              degree 4), yaw and joints (2)
``ω, ω̇``            (3,)             base angular velocity and acceleration, world
==================  ===============  ==========================================
"""

from typing import NamedTuple

import numpy as np

from .._checks import as_array, check_pose
from ..algorithm.centroidal import _com_jet
from ..algorithm.inverse import inverse_dynamics
from ..algorithm.kinematics import forward_kinematics
from ..multibody.model import check_model
from ..multibody.results import _hat
from ..simulation import Inputs, State
from .flatness import flat_map
from .laws import _gains

__all__ = ["FlatTrackingLaw", "FlatTrackingStep", "THRUST_MIN_RATIO"]

# The law divides by the thrust: below this fraction of m‖g⃗‖ (free fall
# and its neighbourhood) it refuses the state instead of commanding huge
# moments.
THRUST_MIN_RATIO = 1e-3


def _yaw_jets(R, Rd, Rdd):
    """``(ψ, ψ̇, ψ̈)`` of the Z-X-Y yaw ``ψ = atan2(−R₀₁, R₁₁)`` (SPEC §17.1:
    ``y_B ⊥ x_C``) from ``R``, ``Ṙ``, ``R̈``."""
    u, w = -R[0, 1], R[1, 1]
    ud, wd = -Rd[0, 1], Rd[1, 1]
    udd, wdd = -Rdd[0, 1], Rdd[1, 1]
    s = u * u + w * w
    psi_d = (w * ud - u * wd) / s
    psi_dd = (w * udd - u * wdd) / s - psi_d * 2.0 * (u * ud + w * wd) / s
    return np.arctan2(u, w), psi_d, psi_dd


class FlatTrackingStep(NamedTuple):
    """The law's input at one state and what it is made of.

    Attributes
    ----------
    input : (4 + n,)
        ``(f̈, M^B, τ)``.
    com_error : (4, 3)
        ``(x_G − x_G,d)^(0..3)``.
    yaw_error : (2,)
        ``(ψ − ψ_d, ψ̇ − ψ̇_d)``, the angle wrapped to ``(−π, π]``.
    joint_error : (2, n)
        ``(q − q_d, q̇ − q̇_d)``.
    base_acceleration : (6,)
        ``V̇₀`` the law imposes (world origin).
    joint_acceleration : (n,)
        ``q̈`` the law imposes.
    """

    input: np.ndarray
    com_error: np.ndarray
    yaw_error: np.ndarray
    joint_error: np.ndarray
    base_acceleration: np.ndarray
    joint_acceleration: np.ndarray


class FlatTrackingLaw:
    """Exact tracking of ``(x_G, ψ, q)`` for a parallel-thrust base carrying
    a tree, the thrust extended dynamically (SPEC §17.6).

    The thrust ``f`` and its rate ``ḟ`` are states and ``f̈`` an input, so
    that ``x_G`` has relative degree 4 and ``ψ``, ``q`` 2 with the inputs
    ``(f̈, M^B, τ)``. Per step: the error jets of the three outputs and the
    gains set ``x_G^(4)``, ``ψ̈``, ``q̈``; from
    ``m x_G^(4) = f̈ z_B + 2 ḟ ω × z_B + f (ω̇ × z_B + ω × (ω × z_B))``
    follow ``f̈`` and ``ω̇``'s x, y body components, from ``ψ̈`` its z one;
    ``p̈ = ẍ_G − (R c_B)¨`` completes the base acceleration, and inverse
    dynamics of order 0 returns ``τ`` and the base wrench, whose force is
    ``f z_B`` and whose moment gives ``M^B``.

    Parameters
    ----------
    model : Model
        A floating base whose thrust is along its body ``z`` axis.
    poles : (4,)
        Closed-loop poles of the centre-of-mass error.
    target : callable ``target(t) -> (com, yaw, q)``
        Flat-output jets: rows ``0..4`` of ``x_G``, ``0..2`` of ``ψ`` and
        ``q`` (more are ignored), as :func:`flat_map` takes them;
        :meth:`state_on` reads one row more of each.
    yaw_poles, joint_poles : (2,), keyword
        Poles of the yaw and joint errors.

    State and input: ``state.extra`` is ``(f, ḟ)``; the input is
    ``(f̈, M^B, τ)``, ``(4 + n,)``. :meth:`plant` applies the thrust
    ``f R e₃`` and ``M^B`` at the base and ``τ`` at the joints. The law is
    exact when it runs at every stage of the integrator (``control_rate``
    unset); held between samples it is a sampled-data approximation whose
    error grows as ``1/rate`` (SPEC §11.6).

    Near free fall (``f`` below :data:`THRUST_MIN_RATIO` ``m ‖g⃗‖``) the
    outputs' decoupling matrix is singular: :meth:`step` raises a
    ``ValueError`` naming the time, which :func:`liedyn.simulate` reports.
    """

    relative_degree = (4, 2, 2)
    reference = "world"

    def __init__(self, model, poles, target, *, yaw_poles, joint_poles):
        check_model(model)
        if not model.floating_base:
            raise ValueError("model: a fixed base; the law flies a floating, parallel-thrust base")
        if not callable(target):
            raise TypeError(f"target: expected a callable target(t) -> (com, yaw, q), got "
                            f"{type(target).__name__}")
        self.model, self.target = model, target
        self.gains = (_gains(poles, 4, "poles"), _gains(yaw_poles, 2, "yaw_poles"),
                      _gains(joint_poles, 2, "joint_poles"))
        self.mass = float(model.body_mass.sum())
        n = model.n_joints
        self.n_extra, self.n_input = 2, 4 + n

    def _com_in_base(self, q):
        """``c_B^(0..2)`` for the joint jet ``q^(0..2)`` (SPEC §17.3)."""
        fk = forward_kinematics(self.model, np.eye(4), np.zeros((2, 6)), q, 1)
        return _com_jet(self.model, fk.body_pose, fk.twist, 2)[1]

    def step(self, t, state):
        """The input ``(f̈, M^B, τ)`` at ``state`` and the jets behind it."""
        model, m, g = self.model, self.mass, self.model.gravity
        n = model.n_joints
        C = check_pose(state.base_pose, "state.base_pose")
        V = as_array(state.base_twist, "state.base_twist", shape=(6,))
        x = as_array(state.extra, "state.extra", shape=(2,))
        q0 = as_array(state.q, "state.q", shape=(n,))
        q1 = as_array(state.qd, "state.qd", shape=(n,))
        f, fd = float(x[0]), float(x[1])
        if not f > THRUST_MIN_RATIO * m * float(np.linalg.norm(g)):
            raise ValueError(f"state.extra: thrust f = {f:.3g} N at t = {t:.9g}, near or below "
                             f"free fall, where the law's decoupling matrix is singular")
        com_d, yaw_d, q_d = self.target(t)
        a_x, a_psi, a_q = self.gains
        R, p = C[:3, :3], C[:3, 3]
        w = V[:3]
        p_dot = V[3:] + np.cross(w, p)
        zB = R[:, 2]
        wz = np.cross(w, zB)
        # joints: q̈ = q̈_d − a_q (e, ė)
        qdd = q_d[2] - a_q[0] * (q0 - q_d[0]) - a_q[1] * (q1 - q_d[1])
        cB = self._com_in_base(np.stack([q0, q1, qdd]))
        Rd = _hat(w) @ R
        xG = np.stack([p + R @ cB[0], p_dot + Rd @ cB[0] + R @ cB[1],
                       f * zB / m + g, (fd * zB + f * wz) / m])          # SPEC §17.6
        e = xG - com_d[:4]
        v_x = com_d[4] - a_x @ e
        b = m * v_x - 2.0 * fd * wz - f * np.cross(w, wz)
        fdd = zB @ b
        h = (b - fdd * zB) / f                                            # ω̇ × z_B
        dw_xy = np.array([-h @ R[:, 1], h @ R[:, 0]])
        # ψ̈ is affine in ω̇_B,z: evaluate it at 0 and 1
        psi = []
        for dwz in (0.0, 1.0):
            dw = R @ np.array([dw_xy[0], dw_xy[1], dwz])
            psi.append(_yaw_jets(R, Rd, _hat(dw) @ R + _hat(w) @ Rd))
        e_psi = np.array([np.angle(np.exp(1j * (psi[0][0] - yaw_d[0]))), psi[0][1] - yaw_d[1]])
        v_psi = yaw_d[2] - a_psi @ e_psi
        dwz = (v_psi - psi[0][2]) / (psi[1][2] - psi[0][2])
        dw = R @ np.array([dw_xy[0], dw_xy[1], dwz])
        Rdd = _hat(dw) @ R + _hat(w) @ Rd
        p_dd = xG[2] - (Rdd @ cB[0] + 2.0 * Rd @ cB[1] + R @ cB[2])       # x_G = p + R c_B
        Vj = np.stack([V, np.concatenate([dw, p_dd - np.cross(dw, p) - np.cross(w, p_dot)])])
        idr = inverse_dynamics(model, C, Vj, np.stack([q0, q1, qdd]), 0)
        W = idr.base_wrench[0]
        MB = R.T @ (W[:3] - np.cross(p, W[3:]))
        u = np.concatenate([[fdd], MB, idr.tau[0]])
        return FlatTrackingStep(u, e, e_psi, np.stack([q0 - q_d[0], q1 - q_d[1]]), Vj[1], qdd)

    def __call__(self, t, state):
        """The input ``u`` (controller callback of :func:`liedyn.simulate`)."""
        return self.step(t, state).input

    def plant(self, t, state, u):
        """Actuator model: ``d/dt (f, ḟ) = (ḟ, f̈)``; the base wrench
        ``(R M^B + p × F, F)``, ``F = f R e₃``; ``τ`` at the joints."""
        x = as_array(state.extra, "state.extra", shape=(2,))
        u = as_array(u, "u", shape=(self.n_input,))
        C = state.base_pose
        F = C[:3, 2] * x[0]
        W = np.concatenate([C[:3, :3] @ u[1:4] + np.cross(C[:3, 3], F), F])
        return Inputs(tau=u[4:].copy(), base_wrench=W, extra_rate=np.array([x[1], u[0]]))

    def state_on(self, t, *, base_position=None, q=None):
        """A :class:`liedyn.State` on the target at ``t`` (its flat map of
        order 1: pose, twist, ``q``, ``q̇``, ``(f, ḟ)``), optionally with the
        base origin moved to ``base_position`` and the joints to ``q``."""
        fm = flat_map(self.model, *self.target(t), 1)
        C = fm.base_pose.copy()
        V = fm.base_twist[0].copy()
        if base_position is not None:
            shift = as_array(base_position, "base_position", shape=(3,)) - C[:3, 3]
            C[:3, 3] += shift
            V[3:] -= np.cross(V[:3], shift)                      # same ṗ about the moved origin
        q0 = fm.q[0] if q is None else as_array(q, "q", shape=(self.model.n_joints,))
        return State(base_pose=C, base_twist=V, q=q0, qd=fm.q[1], extra=fm.thrust[:2].copy())
