"""Solo-12 with series-elastic joints standing on its four feet while its
base sways and rolls: exact linearization fed by constrained inverse
dynamics of order 2 (SPEC §11.4 with the contacts of SPEC §13), against a
law that drops τ̈ and rigid computed torque.

    python -m experiments.legged_elastic            # quick: 0.8 s, dt = 1.5 ms, from the reference
    python -m experiments.legged_elastic --full     # 5 s, dt = 1 ms, also from a perturbed start

The robot is Solo-12 from example-robot-data (2.5 kg, twelve joints), its
four feet held by ``Contact3D`` point contacts at the ground (``z = 0``)
where they stand at ``t = 0``. Every joint is series-elastic (Spong's
model): link side ``M ν̇ + h = (0, τ) + Jᵀλ`` with ``τ = K (θ − q)``, motor
side ``B θ̈ + τ = u``, with

* ``K = STIFFNESS`` = 10 N m/rad per joint: the standing knee torque of
  about 0.7 N m deflects the spring by about 4°, and the joint with its
  link held by the feet rings at ``√(K/B)`` ≈ 160 rad/s (25 Hz);
* ``B = MOTOR_INERTIA`` = 4e-4 kg m²: a geared brushless rotor of a few
  1e-6 kg m² behind a 9:1 reduction (Solo's ratio), seen at the joint.

**Reference.** The base pose ``C_d(t)``: a sway in ``y`` of ``SWAY_Y`` and
a roll of ``SWAY_ROLL`` at ``SWAY_HZ``, ramped in by ``1 − exp(−(t/T)²)``
(``T = RAMP``) so that the robot stands still at ``t = 0`` and every
derivative is smooth; its twist jets in closed form. The joint reference
follows from the feet staying put: ``q_d`` by Newton's method on the foot
positions, and ``q_d^(k+1)`` order by order from ``(J ν)^(k) = 0``,
``J_q q^(k+1) = −(p_foot^(k+1) with q^(k+1) = 0)`` (each leg's 3×3 block
is square). Constrained inverse dynamics of order 2 along it gives
``τ_d^(0..2)`` and the contact forces ``λ_d^(0..2)`` (the minimum-norm
distribution over the four feet).

**Outputs and laws.** On the constraint manifold the link side has the six
base coordinates; with twelve motors the other six inputs set the internal
contact forces (the forces the base rows leave free). The outputs are the
base pose (relative degree 4 through the springs) and the internal forces
``z = Pᵀ λ`` (relative degree 2; ``P`` a fixed basis of the null space of
the base rows ``J_bᵀ`` at the standing configuration): 6·4 + 6·2 = 36, the
whole state (pose, twist, θ, θ̇ on the constraint manifold), so the
linearization leaves no zero dynamics.

* **(a) exact**: constrained forward dynamics of order 1 at the state
  (``τ``, ``τ̇`` from the springs) gives ``V̇₀, V̈₀, q̈, q⃛, λ, λ̇``; the base
  error on SE(3) (SPEC §11.3, poles ``POLES``) sets ``V₀^(3)``, the feet set
  ``q^(4)``; constrained inverse dynamics of order 2 with the state's
  ``λ, λ̇`` returns ``τ̈`` and the base wrench the contacts leave unbalanced,
  from which ``λ̈`` follows with the internal-force law
  ``z̈ = z̈_d − c₁ (ż − ż_d) − c₀ (z − z_d)`` (poles ``FORCE_POLES``); then
  ``θ̈ = q̈ + K⁻¹ τ̈`` and ``u = B θ̈ + τ``.
* **(b) no τ̈**: the relative-degree-3 law (forward dynamics of order 0,
  constrained inverse dynamics of order 1), whose motors make ``τ̇`` follow
  the commanded one at a rate ``λ_r``: ``θ̈ = q̈ + K⁻¹ λ_r (τ̇_cmd − τ̇)``,
  ``u = τ + B θ̈`` (as in ``experiments.elastic_tracking``). Its gains and
  ``λ_r = −Σ POLES`` put the poles of its linearized loop (rate loop
  included) at ``POLES`` and ``FORCE_POLES``, those of (a), so that
  dropping ``τ̈`` is all that differs. (``elastic_tracking``'s choice, poles
  ``POLES[:3]`` and ``λ_r = −POLES[3]``, leaves here a lightly damped pair
  at −1.3 ± 18.7 i and errs about as much: 2.2 mm RMS over 1.5 s from the
  reference; with poles twice slower its pair, −0.6 ± 9.4 i, let the sway
  pull the feet off the ground.)
* **(c) rigid computed torque**: the rigid robot with the motor angles as
  joint angles (collocated encoders), velocities projected on the
  constraint, base acceleration from two poles ``POLES[:2]``, joint
  accelerations from the feet, ``τ`` from constrained inverse dynamics of
  order 0 (minimum-norm forces) and ``u = τ + B θ̈_cmd``. Its loop has
  real modes near −1400 s⁻¹ (the motor rates reach the commanded
  accelerations through the projected base twist) and undamped elastic
  modes near ±170 i; the first set the step (RK4 needs ``h < 2.8 / 1450 s``,
  about 1.9 ms).

Every law sees the measured state; the velocity it uses is the measured
one projected on ``J ν = 0`` (the integrator keeps ``J ν`` at round-off).

**Simulation.** The plant integrates the constrained dynamics with the feet
held: ``Ċ₀ = [V₀] C₀``, ``(V̇₀, q̈, λ)`` from ``constrained_forward_dynamics``
of order 0 with Baumgarte stabilisation ``BAUMGARTE`` on the anchored
contacts, ``θ̈ = B⁻¹ (u − τ)``; classical RK4 with the base pose advanced on
the group (Runge–Kutta–Munthe-Kaas, ``C₀ ← exp(Ω) C₀``, ``Ω̇ = dexp⁻¹_Ω V₀``,
SPEC §10), the law evaluated at every stage. Recorded per step: the base
errors (position ``|p₀ − p_d|``, orientation ``|log(R_dᵀ R₀)|``), the contact
forces and each foot's friction-cone margin ``μ λ_n − |λ_t|`` (``μ = MU``,
ground normal ``z``; negative: the foot would slip), and the feet's
position drift ``|φ|``.

From the reference (quick and full) the exact law keeps its error at the
integrator's truncation error (about 1e-11 m and rad at the quick step);
(b) and (c) err by what they ignore. From the
perturbed start (``--full``) the base starts ``exp(DELTA_BASE)`` off with the
legs re-solved so the feet stay, and the errors decay.

A finite-difference check in time of the order-2 jets: ``τ̇``, ``τ̈`` and
``λ̇``, ``λ̈`` of constrained inverse dynamics along the reference at
``FD_TIME`` against central differences of ``τ`` and ``λ`` from order-0
calls at ``t ± h`` (the reference re-solved there), for ``h`` halving.

Writes to ``paper_figures/`` (``--out DIR`` for another folder; ``_full``
names with ``--full``): ``legged_elastic.csv`` (one row per run),
``legged_elastic.md`` (the same as a Markdown table), ``legged_elastic_fd.csv``
(the finite-difference check), ``legged_elastic_targets.csv`` (the targets
met or missed, read by ``experiments.reproduce``) and ``legged_elastic.png``
(base errors over time, normal forces and cone margins).
"""

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

import liedyn as ld
from liedyn import control, se3
from experiments._table import output_stem
from models.example_robots import load_robot

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
LEGS = ("FL", "FR", "HL", "HR")
STAND_HFE, STAND_KFE = 0.8, -1.6     # rad: the SRDF's "straight_standing" (hind legs mirrored)
STIFFNESS = 10.0                     # K, N m/rad
MOTOR_INERTIA = 4e-4                 # B, kg m² at the joint
MU = 0.7                             # friction coefficient of the ground (normal z)
POLES = (-8.0, -10.0, -12.0, -14.0) # base error, relative degree 4
FORCE_POLES = (-20.0, -24.0)         # internal contact forces, relative degree 2 (sum: POLES')
BAUMGARTE = (20.0, 20.0)             # (alpha, beta), rad/s: (Jν)' + 2α Jν + β² φ = 0
SWAY_Y = 0.03                        # m
SWAY_ROLL = 0.12                     # rad
SWAY_HZ = 0.8
RAMP = 0.4                           # s
DELTA_BASE = np.array([0.02, -0.02, 0.03, 0.01, -0.01, 0.005])   # perturbed start, (rad, m)
FD_TIME = 1.3                        # s
FD_STEPS = (4e-3, 2e-3, 1e-3)        # s
DIVERGED = 0.5                       # a run stops when the base error exceeds this (rad or m)
QUICK = dict(horizon=0.8, dt=1.5e-3, starts=("on the reference",))
FULL = dict(horizon=5.0, dt=1e-3, starts=("on the reference", "perturbed"))


# ----------------------------------------------------------------- robot --

class Robot:
    """Solo-12, its four point contacts (plain and anchored at the standing
    feet) and the fast foot kinematics the laws use.

    Attributes
    ----------
    model : Model
    contacts : ConstraintSet
        The four ``Contact3D`` (rows: FL, FR, HL, HR; 3 each, world force).
    anchored : ConstraintSet
        The same anchored at the standing feet (Baumgarte's position term).
    stand_pose : (4, 4)
        Base pose with the feet on ``z = 0``.
    stand_q : (12,)
    weight : float
        ``m g`` (N).
    """

    def __init__(self):
        model = load_robot("solo12")
        self.model = model
        self.contacts = ld.ConstraintSet(model, [ld.Contact3D(f) for f in FEET])
        q = np.zeros(model.n_joints)
        for leg, s in zip(LEGS, (1.0, 1.0, -1.0, -1.0)):
            i = model.joint_names.index(f"{leg}_HFE")
            q[i], q[i + 1] = s * STAND_HFE, s * STAND_KFE
        self.stand_q = q
        C = np.eye(4)
        C[2, 3] = -ld.frame_pose(model, C, q, FEET[0])[2, 3]
        self.stand_pose = C
        self.anchored = self.contacts.anchored(C, q)
        self.anchors = np.array([ld.frame_pose(model, C, q, f)[:3, 3] for f in FEET])
        self.foot_body = np.array([model.frame_body[model.frame_names.index(f)] for f in FEET])
        self.foot_offset = np.array([model.frame_offset[model.frame_names.index(f)][:3, 3]
                                     for f in FEET])
        self.chain = np.array([model.ancestors(b)[:-1] for b in self.foot_body])   # (4, 3)
        self.weight = float(model.body_mass.sum() * -model.gravity[2])
        J = self.jacobian(self.kinematics(C, np.zeros((1, 6)), np.vstack([q, np.zeros_like(q)]),
                                          0))
        _, _, Vt = np.linalg.svd(J[:, :6].T)
        self.internal = Vt[6:].T.copy()      # P (12, 6): null space of J_bᵀ at the stance
        self._binom = _binom(6)

    def kinematics(self, C, V, Q, order):
        """:func:`liedyn.forward_kinematics` of ``order`` (reads ``V^(0..order)``,
        ``Q^(0..order+1)``)."""
        return ld.forward_kinematics(self.model, C, V, Q, order)

    def feet(self, fk):
        """Foot positions (4, 3) of a kinematics pass."""
        X = fk.body_pose[self.foot_body]
        return np.einsum("fij,fj->fi", X[:, :3, :3], self.foot_offset) + X[:, :3, 3]

    def jacobian(self, fk):
        """``J`` (12, 18) of the four contacts at a kinematics pass: rows
        ``ṗ_foot``, columns ``ν = (V₀, q̇)``; ``ṗ = ω × p + v`` for each screw."""
        p = self.feet(fk)
        S = fk.screw[0][self.chain]                                  # (4, 3, 6)
        cols = _cross(S[..., :3], p[:, None]) + S[..., 3:]           # (4, 3 joints, 3)
        J = np.zeros((12, self.model.nv))
        for c in range(4):
            J[3 * c:3 * c + 3, :3] = -se3.hat(p[c])
            J[3 * c:3 * c + 3, 3:6] = np.eye(3)
            J[3 * c:3 * c + 3, 5 + self.chain[c]] = cols[c].T
        return J

    def foot_rate(self, fk, k):
        """``p_foot^(k+1)`` (12,) of a kinematics pass of order ``k``:
        ``p^(j+1) = Σ_a binom(j, a) ω^(a) × p^(j−a) + v^(j)``."""
        V = fk.twist[:k + 1][:, self.foot_body]                     # (k+1, 4, 6)
        P = np.zeros((k + 2, 4, 3))
        P[0] = self.feet(fk)
        B = self._binom
        for j in range(k + 1):
            P[j + 1] = V[j, :, 3:]
            for a in range(j + 1):
                P[j + 1] += B[j, a] * _cross(V[a, :, :3], P[j - a])
        return P[k + 1].reshape(-1)

    def complete(self, C, V, Q, k, J):
        """Fill ``Q[k+1]`` from ``(J ν)^(k) = 0``: the feet's ``(k+1)``-th
        derivative with ``q^(k+1) = 0`` is ``−J_q q^(k+1)``. Reads ``V^(0..k)``
        and ``Q^(0..k)``."""
        Q[k + 1] = 0.0
        if k == 0:                                   # ṗ = J_b V₀ + J_q q̇
            rate = J[:, :6] @ V[0]
        else:
            rate = self.foot_rate(self.kinematics(C, V[:k + 1], Q[:k + 2], k), k)
        Q[k + 1] = -np.linalg.solve(J[:, 6:], rate)

    def joint_jets(self, C, V, q, rows):
        """``q^(0..rows−1)`` (rows, n) that keep the feet still for the base
        twist jet ``V^(0..rows−2)``, from ``q`` (feet at their anchors)."""
        Q = np.zeros((rows, self.model.n_joints))
        Q[0] = q
        J = self.jacobian(self.kinematics(C, V[:1], Q[:2], 0))
        for k in range(rows - 1):
            self.complete(C, V, Q, k, J)
        return Q

    def stance(self, C, guess, tol=1e-13, iterations=30):
        """Joint angles that put the feet at their anchors with the base at
        ``C``: Newton's method on the foot positions (each leg's 3×3 block),
        one step more once within ``tol`` (m), which leaves round-off."""
        q = np.array(guess, float)
        Z = np.zeros((1, 6))
        done = False
        for _ in range(iterations):
            fk = self.kinematics(C, Z, np.vstack([q, np.zeros_like(q)]), 0)
            err = (self.feet(fk) - self.anchors).reshape(-1)
            q -= np.linalg.solve(self.jacobian(fk)[:, 6:], err)
            if done:
                return q
            done = np.max(np.abs(err)) < tol
        raise RuntimeError(f"stance: the feet did not reach their anchors (error "
                           f"{np.max(np.abs(err)):.2e} m) with the base at\n{C}")

    def project(self, J, nu):
        """``ν − J⁺ J ν``: the velocity nearest ``ν`` that keeps the feet."""
        return nu - J.T @ np.linalg.solve(J @ J.T, J @ nu)


# ------------------------------------------------------------- reference --

def _ramped_sine_jet(amplitude, omega, ramp, t, rows):
    """``f^(0..rows−1)`` of ``f = A (1 − exp(−(t/T)²)) sin(Ω t)``."""
    u = np.zeros(rows + 2)                          # u = −(t/T)², its jet
    u[:3] = -(t / ramp) ** 2, -2.0 * t / ramp ** 2, -2.0 / ramp ** 2
    e = np.zeros(rows)
    e[0] = np.exp(u[0])
    B = _binom(rows)
    for k in range(rows - 1):                       # e' = u' e
        e[k + 1] = sum(B[k, a] * u[a + 1] * e[k - a] for a in range(k + 1))
    g = -e
    g[0] += 1.0
    s = np.array([omega ** k * np.sin(omega * t + k * np.pi / 2) for k in range(rows)])
    return amplitude * np.array([sum(B[k, a] * g[a] * s[k - a] for a in range(k + 1))
                                 for k in range(rows)])


def _cross(a, b):
    """``a × b`` along the last axis (broadcast), without numpy.cross's overhead."""
    a, b = np.broadcast_arrays(a, b)
    out = np.empty(a.shape)
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _binom(rows):
    from math import comb
    return np.array([[comb(k, a) for a in range(rows)] for k in range(rows)], float)


class BaseMotion:
    """``C_d(t) = (R_x(φ), p_s + (0, y, 0))``: a sway ``y`` and a roll ``φ``
    about the base's own x axis, both ``A (1 − exp(−(t/T)²)) sin(2π f t)``."""

    def __init__(self, stand_pose, sway=SWAY_Y, roll=SWAY_ROLL, hz=SWAY_HZ, ramp=RAMP):
        self.p0 = stand_pose[:3, 3].copy()
        self.sway, self.roll, self.omega, self.ramp = sway, roll, 2 * np.pi * hz, ramp

    def __call__(self, t, rows):
        """``(C_d, V_d^(0..rows−1))``, the twist spatial about the world origin:
        ``ω^(k) = φ^(k+1) e_x``, ``v^(k) = p^(k+1) − Σ_a binom(k, a) ω^(a) × p^(k−a)``."""
        phi = _ramped_sine_jet(self.roll, self.omega, self.ramp, t, rows + 1)
        y = _ramped_sine_jet(self.sway, self.omega, self.ramp, t, rows + 1)
        P = np.zeros((rows + 1, 3))
        P[:, 1] = y
        P[0] += self.p0
        W = np.zeros((rows, 3))
        W[:, 0] = phi[1:]
        B = _binom(rows)
        V = np.zeros((rows, 6))
        for k in range(rows):
            V[k, :3] = W[k]
            V[k, 3:] = P[k + 1] - sum(B[k, a] * np.cross(W[a], P[k - a]) for a in range(k + 1))
        C = np.eye(4)
        C[:3, :3] = se3.exp_so3(np.array([phi[0], 0.0, 0.0]))
        C[:3, 3] = P[0]
        return C, V


class Sample:
    """The reference at one instant: ``C`` (4, 4), ``V`` (4, 6) = ``V_d^(0..3)``,
    ``q`` (5, 12) = ``q_d^(0..4)``, ``tau`` (3, 12) and ``force`` (3, 12) =
    ``τ_d^(0..2)``, ``λ_d^(0..2)``."""

    __slots__ = ("t", "C", "V", "q", "tau", "force")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)


class Reference:
    """The reference motion with the feet held, its joint jets and its
    torque and force jets, computed once per instant and kept (every law
    runs on the same stage times)."""

    def __init__(self, robot, motion=None):
        self.robot = robot
        self.motion = BaseMotion(robot.stand_pose) if motion is None else motion
        self._memo = {}
        self._last = robot.stand_q

    def joints(self, t, rows):
        """``(C_d, V_d (rows−1, 6), q_d (rows, 12))`` at ``t``."""
        C, V = self.motion(t, max(rows - 1, 1))
        q = self.robot.stance(C, self._last)
        self._last = q
        return C, V, self.robot.joint_jets(C, V, q, rows)

    def __call__(self, t):
        s = self._memo.get(t)
        if s is None:
            C, V, Q = self.joints(t, 5)
            inv = ld.constrained_inverse_dynamics(self.robot.model, self.robot.contacts, C, V, Q,
                                                  2)
            s = self._memo[t] = Sample(t=t, C=C, V=V, q=Q, tau=inv.tau, force=inv.force)
        return s


# ------------------------------------------------------------------ laws --

class _Law:
    """What the three laws share: the robot, the reference, ``K``, ``B``."""

    def __init__(self, robot, reference, stiffness=STIFFNESS, motor_inertia=MOTOR_INERTIA):
        self.robot, self.reference = robot, reference
        self.K, self.B = stiffness, motor_inertia
        self.model, self.cs = robot.model, robot.contacts

    def _measured(self, C, V, q, qd):
        """``J`` at ``(C, q)`` and the projected ``(V₀, q̇)``."""
        r = self.robot
        J = r.jacobian(r.kinematics(C, V[None], np.vstack([q, qd]), 0))
        nu = r.project(J, np.concatenate([V, qd]))
        return J, nu

    def _base_command(self, C, Vj, s, gains):
        """Fill the top row ``V₀^(ρ−1)`` of ``Vj`` (ρ−1 rows known) so that
        ``V_E^(ρ−1) = −a₀ x − Σ_{k≥1} a_k V_E^(k−1)`` (SPEC §11.3); returns
        the error jets ``(x, V_E, …)``."""
        rho = len(gains)
        Vj[rho - 1] = 0.0
        e = control.base_error(C, Vj[:rho], s.C, s.V[:rho])
        w = -gains @ e[:rho]
        Vj[rho - 1] = se3.Ad(s.C) @ (w - e[rho])
        return e

    def _internal(self, J, base_rate, z_cmd):
        """The force-jet row ``λ^(k)`` whose base rows meet ``base_rate`` and
        whose internal part is ``z_cmd``: ``[J_bᵀ; Pᵀ] λ^(k) = (base_rate, z_cmd)``."""
        P = self.robot.internal
        return np.linalg.solve(np.vstack([J[:, :6].T, P.T]), np.concatenate([base_rate, z_cmd]))


class ExactElastic(_Law):
    """(a) Exact linearization of base pose (ρ = 4) and internal forces
    (ρ = 2) through constrained dynamics of orders 1 and 2.

    Constrained inverse dynamics of order 2 is called with the force jets
    ``(λ, λ̇, 0)`` of the state: it returns ``τ^(0..2)`` and the base wrench
    the contacts leave unbalanced, ``W^(0..2)`` (rows 0 and 1 zero: the
    state's forces balance the base). Both last rows are affine in ``λ̈``:
    the motion needs ``J_bᵀ λ̈ = W^(2)``, the internal-force law adds
    ``Pᵀ λ̈ = z̈_cmd``, and then ``τ̈ = τ^(2) − J_qᵀ λ̈``."""

    name = "(a) exact, order-2 inverse dynamics"

    def __init__(self, robot, reference, poles=POLES, force_poles=FORCE_POLES, **kw):
        super().__init__(robot, reference, **kw)
        self.a = control.gains_from_poles(poles)
        self.c = control.gains_from_poles(force_poles)

    def step(self, t, C, V, q, qd, th, thd):
        """``(u, details)``: the motor torques and the jets behind them."""
        s, r, K = self.reference(t), self.robot, self.K
        tau, dtau = K * (th - q), K * (thd - qd)
        J, nu = self._measured(C, V, q, qd)
        fd = ld.constrained_forward_dynamics(self.model, self.cs, C, nu[None, :6],
                                             np.vstack([q, nu[6:]]), 1, tau=np.vstack([tau, dtau]),
                                             base_wrench=np.zeros((2, 6)))
        Vj = np.zeros((4, 6))
        Vj[:3] = fd.base_twist[:3]
        e = self._base_command(C, Vj, s, self.a)                          # V₀^(3)
        Q = np.zeros((5, self.model.n_joints))
        Q[:2] = q, nu[6:]
        for k in (1, 2, 3):                       # q̈, q⃛ as the feet need (FD's to
            r.complete(C, Vj, Q, k, J)            # round-off), then q^(4)
        lam = np.zeros((3, 12))
        lam[:2] = fd.force[:2]
        inv = ld.constrained_inverse_dynamics(self.model, self.cs, C, Vj, Q, 2, force=lam)
        P = r.internal
        z, zd = P.T @ lam[:2].T, P.T @ s.force.T                           # (6, rows)
        z_cmd = zd[:, 2] - self.c[1] * (z[:, 1] - zd[:, 1]) - self.c[0] * (z[:, 0] - zd[:, 0])
        lam[2] = self._internal(J, inv.base_wrench[2], z_cmd)             # λ̈
        tau2 = inv.tau[2] - J[:, 6:].T @ lam[2]                            # τ̈
        u = self.B * (Q[2] + tau2 / K) + tau                           # SPEC §11.4
        return u, dict(inv=inv, tau=np.vstack([tau, dtau, tau2]), force=lam, base_error=e,
                       base_twist=Vj, q=Q, internal=z_cmd)

    def __call__(self, t, C, V, q, qd, th, thd):
        return self.step(t, C, V, q, qd, th, thd)[0]


class TorqueRateElastic(_Law):
    """(b) The relative-degree-3 law (constrained inverse dynamics of order 1)
    that drops ``τ̈``: the motors track ``τ̇_cmd`` at the rate ``λ_r``,
    ``τ̈ = λ_r (τ̇_cmd − τ̇)``.

    Gains: with the rate loop the linearized error obeys
    ``e⁗ + λ_r (e⃛ + a₂ ë + a₁ ė + a₀ e) = 0`` (base) and
    ``z̈ + λ_r (ż + c₀ z) = 0`` (internal forces), so ``λ_r = −Σ p_i`` and
    ``a_k = e_k / λ_r`` (``Π (s − p_i) = s⁴ + Σ e_k s^k``) give it the poles
    ``poles`` of (a); ``force_poles`` must have the same sum (one rate serves
    both), and ``c₀ = Π(−p) / λ_r``. Dropping ``τ̈`` (its feedforward and its
    dependence on the state) is then all that differs from (a)."""

    name = "(b) drops tau'' (order-1 law)"

    def __init__(self, robot, reference, poles=POLES, force_poles=FORCE_POLES, **kw):
        super().__init__(robot, reference, **kw)
        e = np.poly(poles).real                     # [1, e3, e2, e1, e0]
        f = np.poly(force_poles).real               # [1, f1, f0]
        self.rate = float(e[1])
        if not np.isclose(f[1], self.rate, rtol=1e-12):
            raise ValueError(f"force_poles: their sum must equal the sum of poles "
                             f"({-self.rate:g}), got {-f[1]:g}")
        self.a = e[:0:-1][:3] / self.rate           # a₀, a₁, a₂
        self.c = f[2:] / self.rate                  # c₀

    def __call__(self, t, C, V, q, qd, th, thd):
        s, r, K = self.reference(t), self.robot, self.K
        tau, dtau = K * (th - q), K * (thd - qd)
        J, nu = self._measured(C, V, q, qd)
        fd = ld.constrained_forward_dynamics(self.model, self.cs, C, nu[None, :6],
                                             np.vstack([q, nu[6:]]), 0, tau=tau[None],
                                             base_wrench=np.zeros((1, 6)))
        Vj = np.zeros((3, 6))
        Vj[:2] = fd.base_twist[:2]
        self._base_command(C, Vj, s, self.a)                               # V₀^(2)
        Q = np.zeros((4, self.model.n_joints))
        Q[:2] = q, nu[6:]
        for k in (1, 2):                          # q̈ as the feet need, then q^(3)
            r.complete(C, Vj, Q, k, J)
        lam = np.zeros((2, 12))
        lam[0] = fd.force[0]
        inv = ld.constrained_inverse_dynamics(self.model, self.cs, C, Vj, Q, 1, force=lam)
        P = r.internal
        z, zd = P.T @ lam[0], P.T @ s.force.T
        lam[1] = self._internal(J, inv.base_wrench[1], zd[:, 1] - self.c[0] * (z - zd[:, 0]))
        dtau_cmd = inv.tau[1] - J[:, 6:].T @ lam[1]
        return tau + self.B * (Q[2] + self.rate * (dtau_cmd - dtau) / K)


class RigidComputedTorque(_Law):
    """(c) Computed torque on the rigid robot with the motor angles taken as
    the joint angles; constrained inverse dynamics of order 0."""

    name = "(c) rigid computed torque"

    def __init__(self, robot, reference, poles=POLES[:2], **kw):
        super().__init__(robot, reference, **kw)
        self.a = control.gains_from_poles(poles)

    def __call__(self, t, C, V, q, qd, th, thd):
        s, r = self.reference(t), self.robot
        J, nu = self._measured(C, V, th, thd)
        Vj = np.zeros((2, 6))
        Vj[0] = nu[:6]
        self._base_command(C, Vj, s, self.a)                               # V̇₀
        Q = np.zeros((3, self.model.n_joints))
        Q[0], Q[1] = th, nu[6:]
        r.complete(C, Vj, Q, 1, J)                                         # θ̈_cmd
        inv = ld.constrained_inverse_dynamics(self.model, self.cs, C, Vj, Q, 0)
        return inv.tau[0] + self.B * Q[2]


LAWS = (ExactElastic, TorqueRateElastic, RigidComputedTorque)


# ------------------------------------------------------------ simulation --

class Run:
    """A recorded run: ``time`` (T,), ``base_pose`` (T, 4, 4), ``x`` (T, 54) =
    ``(V₀, q, q̇, θ, θ̇)``, ``u`` (T, 12), ``force`` (T, 12), ``drift`` (T,)
    the largest foot position error, ``diverged_at`` (s or None), ``seconds``."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _split(x, n):
    return x[:6], x[6:6 + n], x[6 + n:6 + 2 * n], x[6 + 2 * n:6 + 3 * n], x[6 + 3 * n:]


def initial_state(robot, reference, start, stiffness=STIFFNESS):
    """``(C₀, x)`` at ``t = 0``: on the reference, or moved by
    ``exp(DELTA_BASE)`` with the legs re-solved (feet at their anchors) and
    the springs loaded as the reference's jets need there."""
    s = reference(0.0)
    C, V, Q, tau = s.C, s.V, s.q, s.tau
    if start == "perturbed":
        C = se3.exp(DELTA_BASE) @ s.C
        Q = robot.joint_jets(C, V, robot.stance(C, s.q[0]), 4)
        tau = ld.constrained_inverse_dynamics(robot.model, robot.contacts, C, V, Q, 1).tau
    elif start != "on the reference":
        raise ValueError(f"start: expected 'on the reference' or 'perturbed', got {start!r}")
    x = np.concatenate([V[0], Q[0], Q[1], Q[0] + tau[0] / stiffness,
                        Q[1] + tau[1] / stiffness])
    return C, x


def simulate(robot, law, C0, x0, horizon, dt, baumgarte=BAUMGARTE, progress=False):
    """RKMK4 (SPEC §10) of the constrained elastic robot under ``law``; the
    law and the constrained forward dynamics at every stage. Stops early
    (``diverged_at``) if the base error exceeds ``DIVERGED``."""
    model, n = robot.model, robot.model.n_joints
    K, B = law.K, law.B
    steps = int(round(horizon / dt))
    h = horizon / steps
    T = steps + 1
    rec = Run(time=np.arange(T) * h, base_pose=np.zeros((T, 4, 4)), x=np.zeros((T, x0.size)),
              u=np.zeros((T, n)), force=np.zeros((T, 12)), drift=np.zeros(T), diverged_at=None)
    zeros = np.zeros((1, 6))

    def rates(t, C, x):
        V, q, qd, th, thd = _split(x, n)
        u = law(t, C, V, q, qd, th, thd)
        tau = K * (th - q)
        fd = ld.constrained_forward_dynamics(model, robot.anchored, C, V[None], np.vstack([q, qd]),
                                             0, tau=tau[None], base_wrench=zeros,
                                             baumgarte=baumgarte)
        F = np.concatenate([fd.base_twist[1], qd, fd.q[2], thd, (u - tau) / B])
        return F, u, fd.force[0]

    A = ((), (0.5,), (0.0, 0.5), (0.0, 0.0, 1.0))
    b = (1 / 6, 1 / 3, 1 / 3, 1 / 6)
    half = (0, 1, 1, 2)                       # stage times t + c_i h in half steps
    C, x = np.array(C0, float), np.array(x0, float)
    start = last = time.perf_counter()
    for k in range(T):
        t = rec.time[k]
        rec.base_pose[k], rec.x[k] = C, x
        rec.drift[k] = np.max(np.abs(ld.constraint_error(model, robot.anchored, C, x[6:6 + n])))
        err = se3.log(se3.inv(law.reference(t).C) @ C)
        if not np.all(np.isfinite(x)) or np.max(np.abs(err)) > DIVERGED:
            rec.diverged_at = t
            break
        F, rec.u[k], rec.force[k] = rates(t, C, x)
        if k == steps:
            break
        Fs, Ks = [F], [x[:6].copy()]          # dexp⁻¹ at Ω = 0 is I
        try:
            for i in range(1, 4):
                Om = h * sum(a * Kj for a, Kj in zip(A[i], Ks))
                xi = x + h * sum(a * Fj for a, Fj in zip(A[i], Fs))
                Fs.append(rates((2 * k + half[i]) * (h / 2), se3.exp(Om) @ C, xi)[0])
                Ks.append(se3.dexp_inv(Om) @ xi[:6])
        except (ValueError, np.linalg.LinAlgError):   # a stage left the model's domain
            rec.diverged_at = t
            break
        C = se3.exp(h * sum(bi * Kj for bi, Kj in zip(b, Ks))) @ C
        x = x + h * sum(bi * Fj for bi, Fj in zip(b, Fs))
        if progress and time.perf_counter() - last > 5.0:
            last = time.perf_counter()
            print(f"    t = {t:.2f} s of {horizon:g} s", file=sys.stderr, flush=True)
    rec.seconds = time.perf_counter() - start
    if rec.diverged_at is not None:
        keep = rec.time < rec.diverged_at       # the samples before the one that failed
        for f in ("time", "base_pose", "x", "u", "force", "drift"):
            setattr(rec, f, getattr(rec, f)[keep])
    return rec


# -------------------------------------------------------------- analysis --

def base_errors(run, reference):
    """Position ``|p₀ − p_d|`` (m) and orientation ``|log(R_dᵀ R₀)|`` (rad), (T,) each."""
    pos = np.empty(len(run.time))
    rot = np.empty(len(run.time))
    for k, t in enumerate(run.time):
        Cd = reference(t).C
        pos[k] = np.linalg.norm(run.base_pose[k][:3, 3] - Cd[:3, 3])
        rot[k] = np.linalg.norm(se3.log_so3(Cd[:3, :3].T @ run.base_pose[k][:3, :3]))
    return pos, rot


def cone_margin(force, mu=MU):
    """``μ λ_n − |λ_t|`` (T, 4) per foot, ground normal ``z``; and ``λ_n`` (T, 4)."""
    f = force.reshape(len(force), 4, 3)
    return mu * f[:, :, 2] - np.linalg.norm(f[:, :, :2], axis=2), f[:, :, 2]


FIELDS = ["law", "start", "window", "pos_rms", "pos_max", "rot_rms", "rot_max", "min_normal",
          "min_cone_margin", "max_tangential_ratio", "leaves_cone", "max_drift", "max_u",
          "diverged_at", "steps", "seconds"]


def table(runs, reference, horizon):
    """One row per run: errors over the whole run from the reference, over its
    second half from the perturbed start."""
    rows = []
    for (name, start), run in runs.items():
        pos, rot = base_errors(run, reference)
        sel = run.time >= horizon / 2.0 if start == "perturbed" else np.ones(len(run.time), bool)
        window = f"{horizon / 2:g}-{horizon:g} s" if start == "perturbed" else f"0-{horizon:g} s"
        if not sel.any():                     # diverged in the first half: the whole run
            sel[:] = True
            window = f"0-{run.time[-1]:g} s"
        margin, normal = cone_margin(run.force)
        f = run.force.reshape(len(run.force), 4, 3)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(f[:, :, 2] > 0, np.linalg.norm(f[:, :, :2], axis=2) / f[:, :, 2],
                             np.inf)
        rows.append(dict(
            law=name, start=start, window=window,
            pos_rms=float(np.sqrt(np.mean(pos[sel] ** 2))), pos_max=float(pos[sel].max()),
            rot_rms=float(np.sqrt(np.mean(rot[sel] ** 2))), rot_max=float(rot[sel].max()),
            min_normal=float(normal.min()), min_cone_margin=float(margin.min()),
            max_tangential_ratio=float(ratio.max()),
            leaves_cone="yes" if margin.min() < 0 else "no",
            max_drift=float(run.drift.max()), max_u=float(np.abs(run.u).max()),
            diverged_at="" if run.diverged_at is None else f"{run.diverged_at:.3f}",
            steps=len(run.time) - 1, seconds=float(run.seconds)))
    return rows


def write_csv(rows, path, fields):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4e}" if isinstance(v, float) else v) for k, v in r.items()})


def write_markdown(rows, path, fields):
    lines = ["| " + " | ".join(fields) + " |", "|" + "---|" * len(fields)]
    lines += ["| " + " | ".join(f"{r[k]:.3e}" if isinstance(r[k], float) else str(r[k])
                                for k in fields) + " |" for r in rows]
    Path(path).write_text("\n".join(lines) + "\n")


# ------------------------------------------------------- finite differences --

def fd_check(robot, t=FD_TIME, steps=FD_STEPS, motion=None):
    """Rows ``(h, quantity, error, derivative size, ratio to the previous h)``:
    ``τ̇``, ``τ̈``, ``λ̇``, ``λ̈`` of constrained inverse dynamics of order 2 at
    ``t`` against central differences of order-0 calls at ``t ± h`` (each
    instant re-solved: stance, joint jets)."""
    ref = Reference(robot, motion)
    model, cs = robot.model, robot.contacts
    jet = ref(t)

    def order0(ti):
        C, V, Q = ref.joints(ti, 3)
        inv = ld.constrained_inverse_dynamics(model, cs, C, V, Q, 0)
        return inv.tau[0], inv.force[0]

    rows, prev = [], {}
    for h in steps:
        (tp, fp), (t0, f0), (tm, fm) = order0(t + h), order0(t), order0(t - h)
        fd = {"tau'": ((tp - tm) / (2 * h), jet.tau[1]),
              "tau''": ((tp - 2 * t0 + tm) / h ** 2, jet.tau[2]),
              "lambda'": ((fp - fm) / (2 * h), jet.force[1]),
              "lambda''": ((fp - 2 * f0 + fm) / h ** 2, jet.force[2])}
        for name, (approx, exact) in fd.items():
            err = float(np.max(np.abs(approx - exact)))
            rows.append(dict(h=h, quantity=name, error=err,
                             size=float(np.max(np.abs(exact))),
                             ratio=prev[name] / err if name in prev else float("nan")))
            prev[name] = err
    return rows


FD_FIELDS = ["h", "quantity", "error", "size", "ratio"]


# --------------------------------------------------------------- targets --

TRACKING_LIMIT = 1e-8      # m and rad: (a) from the reference, integration round-off
FACTOR_LIMIT = 1e4         # (b) and (c) RMS position error over (a)'s
TARGET_FIELDS = ["section", "quantity", "value", "unit"]


def targets(rows, fd):
    """Rows in the targets form of :mod:`experiments._targets` (``unit`` met
    or missed): the exact law from the reference tracks at round-off, keeps
    every foot in the cone and beats the others by ``FACTOR_LIMIT``; the
    order-2 jets converge as O(h²) against central differences."""
    by = {(r["law"], r["start"]): r for r in rows}
    a = by.get((ExactElastic.name, "on the reference"))
    out = []

    def add(quantity, value, met):
        out.append(dict(section="targets", quantity=quantity, value=value,
                        unit="met" if met else "missed"))

    if a is not None:
        add(f"(a) from the reference: max base position error <= {TRACKING_LIMIT:g} m",
            a["pos_max"], a["pos_max"] <= TRACKING_LIMIT)
        add(f"(a) from the reference: max base orientation error <= {TRACKING_LIMIT:g} rad",
            a["rot_max"], a["rot_max"] <= TRACKING_LIMIT)
        add(f"(a) from the reference: every foot inside the friction cone (mu = {MU:g}), "
            f"smallest margin (N)", a["min_cone_margin"], a["min_cone_margin"] > 0)
        for Law in (TorqueRateElastic, RigidComputedTorque):
            o = by.get((Law.name, "on the reference"))
            if o is not None:
                f = o["pos_rms"] / a["pos_rms"]
                add(f"{Law.name} / (a): RMS position error from the reference >= "
                    f"{FACTOR_LIMIT:g}", f, f >= FACTOR_LIMIT)
    ratios = [r["ratio"] for r in fd if np.isfinite(r["ratio"])]
    add("order-2 jets against central differences: error ratio per halving of h in "
        "[3.6, 4.4] (O(h^2)), worst", max(ratios, key=lambda x: abs(x - 4.0)),
        all(3.6 < x < 4.4 for x in ratios))
    return out


# ----------------------------------------------------------------- plots --

def plot(runs, reference, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {ExactElastic.name: "C0", TorqueRateElastic.name: "C2",
              RigidComputedTorque.name: "C3"}
    styles = {"on the reference": "-", "perturbed": "--"}
    fig, axes = plt.subplots(2, 2, figsize=(13, 7.5), sharex=True)
    for (name, start), run in runs.items():
        pos, rot = base_errors(run, reference)
        lab = f"{name}, {start}"
        axes[0, 0].semilogy(run.time, np.maximum(pos, 1e-17), color=colors[name],
                            ls=styles[start], lw=1.0, label=lab)
        axes[0, 1].semilogy(run.time, np.maximum(rot, 1e-17), color=colors[name],
                            ls=styles[start], lw=1.0, label=lab)
        margin, normal = cone_margin(run.force)
        if start == "on the reference":
            axes[1, 1].plot(run.time, margin.min(axis=1), color=colors[name], lw=1.0, label=lab)
            if name == ExactElastic.name:
                for c, foot in enumerate(FEET):
                    axes[1, 0].plot(run.time, normal[:, c], lw=1.0, label=f"{foot}, (a)")
            if name == RigidComputedTorque.name:
                for c, foot in enumerate(FEET):
                    axes[1, 0].plot(run.time, normal[:, c], lw=0.6, ls=":", color=f"C{c}",
                                    label=f"{foot}, (c)")
    axes[0, 0].set_title(r"base position error $|p_0 - p_d|$ (m)", fontsize=9)
    axes[0, 1].set_title(r"base orientation error $|\log(R_d^T R_0)|$ (rad)", fontsize=9)
    axes[1, 0].set_title(r"normal forces $\lambda_n$ (N) from the reference: (a) solid, (c) "
                         r"dotted; FL = HL, FR = HR (front-back symmetry)", fontsize=9)
    axes[1, 1].set_title(rf"smallest cone margin $\min_{{feet}}(\mu\lambda_n - |\lambda_t|)$ (N), "
                         rf"$\mu$ = {MU:g}", fontsize=9)
    for ax in axes[0]:
        ax.set_ylim(1e-16, 1.0)
    axes[1, 1].axhline(0.0, color="k", lw=0.8)
    for ax in axes.flat:
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("t (s)")
    axes[0, 0].legend(fontsize=7, loc="lower right")
    axes[1, 0].legend(fontsize=7, ncol=2, loc="lower right")
    fig.suptitle(f"Solo-12 standing on four feet with series-elastic joints: K = {STIFFNESS:g} "
                 f"N m/rad, B = {MOTOR_INERTIA:g} kg m², base poles {tuple(POLES)}, sway "
                 f"{SWAY_Y * 100:g} cm and roll {SWAY_ROLL:g} rad at {SWAY_HZ:g} Hz", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=130)
    plt.close(fig)


# ------------------------------------------------------------------ main --

def run_all(horizon, dt, starts, progress=True):
    """``(robot, reference, {(law name, start): Run})``."""
    robot = Robot()
    ref = Reference(robot)
    runs = {}
    for start in starts:
        C0, x0 = initial_state(robot, ref, start)
        for Law in LAWS:
            law = Law(robot, ref)
            if progress:
                print(f"  simulating {law.name}, {start} ({horizon:g} s, dt = {dt:g} s)",
                      file=sys.stderr, flush=True)
            runs[law.name, start] = simulate(robot, law, C0, x0, horizon, dt, progress=progress)
    return robot, ref, runs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true",
                    help=f"{FULL['horizon']:g} s with dt = {FULL['dt']:g} s and a perturbed start "
                         f"(quick: {QUICK['horizon']:g} s, dt = {QUICK['dt']:g} s)")
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG")
    ap.add_argument("--no-progress", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    cfg = FULL if args.full else QUICK
    stem = output_stem(args, "legged_elastic")
    robot, ref, runs = run_all(cfg["horizon"], cfg["dt"], cfg["starts"],
                               progress=not args.no_progress)
    rows = table(runs, ref, cfg["horizon"])
    print(f"Solo-12 on four point feet, series-elastic joints (K = {STIFFNESS:g} N m/rad, "
          f"B = {MOTOR_INERTIA:g} kg m²), {cfg['horizon']:g} s, dt = {cfg['dt']:g} s; "
          f"cone mu = {MU:g}.")
    print(f"{'law':<36} {'start':<17} {'pos rms':>9} {'pos max':>9} {'rot rms':>9} "
          f"{'rot max':>9} {'min λn':>7} {'min cone':>8} {'slip':>4} {'drift':>8} {'s':>5}")
    for r in rows:
        print(f"{r['law']:<36} {r['start']:<17} {r['pos_rms']:>9.2e} {r['pos_max']:>9.2e} "
              f"{r['rot_rms']:>9.2e} {r['rot_max']:>9.2e} {r['min_normal']:>7.3f} "
              f"{r['min_cone_margin']:>8.3f} {r['leaves_cone']:>4} {r['max_drift']:>8.1e} "
              f"{r['seconds']:>5.1f}" + (f"  diverged at {r['diverged_at']} s"
                                         if r["diverged_at"] else ""))
    fd = fd_check(robot)
    print(f"\nFinite differences in time at t = {FD_TIME:g} s: order-2 jets of constrained "
          f"inverse dynamics against central differences of order-0 calls at t ± h")
    print(f"{'h':>8} {'quantity':<9} {'error':>10} {'size':>10} {'ratio':>6}")
    for r in fd:
        print(f"{r['h']:>8.0e} {r['quantity']:<9} {r['error']:>10.3e} {r['size']:>10.3e} "
              f"{r['ratio']:>6.2f}")
    aims = targets(rows, fd)
    print()
    for r in aims:
        print(f"target {r['unit']:<6} {r['quantity']}: {r['value']:.3g}")
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, f"{stem}.csv", FIELDS)
    write_markdown(rows, f"{stem}.md", FIELDS)
    write_csv(fd, f"{stem}_fd.csv", FD_FIELDS)
    write_csv(aims, f"{stem}_targets.csv", TARGET_FIELDS)
    print(f"\nwrote {stem}.csv, {stem}.md, {stem}_fd.csv, {stem}_targets.csv")
    if not args.no_plot:
        plot(runs, ref, f"{stem}.png")
        print(f"wrote {stem}.png")


if __name__ == "__main__":
    main()
