"""The reference motion of the paper's aerial-manipulator experiment (SPEC §8,
Table 3), with every time derivative in closed form.

Base: position on a circle of radius ``ρ`` in the plane ``z = 0`` at angular
rate ``Ω``, yaw ``ψ(t) = ψ̄ sin(ϖ t)``, roll and pitch zero:

    p(t) = ρ (cos Ω t, sin Ω t, 0),     C₀(t) = (R_z(ψ(t)), p(t)).

Its spatial twist ``[V₀] = Ċ₀ C₀⁻¹`` is ``V₀ = (ω, v)`` with ``ω = ψ̇ e_z``,
``v = ṗ − ω × p``; by the Leibniz rule

    ω^(k) = ψ^(k+1) e_z,    v^(k) = p^(k+1) − Σ_{a=0}^{k} C(k, a) ω^(a) × p^(k−a).

Joints: ``q_j(t) = q0_j + η_j/2 (1 − cos(π t / T))``. Every derivative comes
from ``d^k/dt^k sin(w t) = w^k sin(w t + k π/2)`` (and likewise for cos).
"""

from dataclasses import dataclass

import numpy as np

from ..multibody.workspace import binomials

__all__ = ["ReferenceMotion", "sin_jet", "cos_jet"]


def sin_jet(w, t, rows):
    """``(rows,)`` jet of ``sin(w t)``: row ``k`` is ``w^k sin(w t + k π/2)``."""
    k = np.arange(rows)
    return w ** k * np.sin(w * t + k * np.pi / 2.0)


def cos_jet(w, t, rows):
    """``(rows,)`` jet of ``cos(w t)``: row ``k`` is ``w^k cos(w t + k π/2)``."""
    k = np.arange(rows)
    return w ** k * np.cos(w * t + k * np.pi / 2.0)


def _cross(a, b):
    """``a × b`` of two 3-vectors (``np.cross`` costs tens of µs per call)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


@dataclass(frozen=True)
class ReferenceMotion:
    """Table 3's reference trajectories and simulation settings (SI units).

    ``horizon`` ``T`` (s), ``time_step`` ``Δt`` (s; ``T/Δt`` algorithm calls),
    ``max_order`` (orders ``r = 0..max_order``), ``radius`` ``ρ`` (m) and
    ``circle_rate`` ``Ω`` (rad/s) of the base circle, ``yaw_amplitude``
    ``ψ̄`` (rad) and ``yaw_rate`` ``ϖ`` (rad/s), initial joint angles
    ``q0`` and half-cosine amplitudes ``eta`` (rad, joints 1–6).
    """

    horizon: float = 30.0
    time_step: float = 0.01
    max_order: int = 5
    radius: float = 1.0
    circle_rate: float = 2.0 * np.pi / 20.0
    yaw_amplitude: float = np.deg2rad(25.0)
    yaw_rate: float = 2.0 * np.pi / 30.0
    q0: tuple = tuple(np.deg2rad([10.0, -5.0, 15.0, -10.0, 7.0, -12.0]))
    eta: tuple = tuple(np.deg2rad([60.0, 50.0, 40.0, 55.0, 45.0, 35.0]))

    @property
    def n_samples(self):
        """Number of algorithm calls ``T / Δt``."""
        return int(round(self.horizon / self.time_step))

    def times(self, n_samples=None):
        """``n_samples`` equally spaced times ``0, T/n, …`` (default ``T/Δt``)."""
        n = self.n_samples if n_samples is None else int(n_samples)
        return np.arange(n) * (self.horizon / n)

    def position_jet(self, t, rows):
        """Base position jet ``p^(0..rows-1)``, ``(rows, 3)``."""
        out = np.zeros((rows, 3))
        out[:, 0] = self.radius * cos_jet(self.circle_rate, t, rows)
        out[:, 1] = self.radius * sin_jet(self.circle_rate, t, rows)
        return out

    def yaw_jet(self, t, rows):
        """Yaw jet ``ψ^(0..rows-1)``, ``(rows,)``."""
        return self.yaw_amplitude * sin_jet(self.yaw_rate, t, rows)

    def base_pose(self, t):
        """``C₀(t)``, ``(4, 4)``."""
        psi = self.yaw_jet(t, 1)[0]
        C = np.eye(4)
        C[:2, :2] = [[np.cos(psi), -np.sin(psi)], [np.sin(psi), np.cos(psi)]]
        C[:3, 3] = self.position_jet(t, 1)[0]
        return C

    def base_twist_jet(self, t, rows):
        """Spatial base twist jet ``V₀^(0..rows-1)``, ``(rows, 6)``."""
        p = self.position_jet(t, rows + 1)
        B = binomials(rows)
        out = np.zeros((rows, 6))
        out[:, 2] = self.yaw_jet(t, rows + 1)[1:]                              # ω^(k) = ψ^(k+1) e_z
        for k in range(rows):
            v = p[k + 1].copy()
            for a in range(k + 1):
                v -= B[k, a] * _cross(out[a, :3], p[k - a])                    # v = ṗ − ω × p
            out[k, 3:] = v
        return out

    def joint_jet(self, t, rows):
        """Joint jet ``q^(0..rows-1)``, ``(rows, 6)``."""
        eta = np.asarray(self.eta)
        out = -0.5 * np.outer(cos_jet(np.pi / self.horizon, t, rows), eta)
        out[0] += np.asarray(self.q0) + 0.5 * eta
        return out
