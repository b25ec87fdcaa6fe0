"""Real robots nobody on the project wrote: URDFs from example-robot-data,
read by liedyn and, independently, by Pinocchio's own URDF parser.

* Order 0: inverse dynamics, forward dynamics and the mass matrix against
  Pinocchio's RNEA, ABA and CRBA.
* Order 1: against Pinocchio's analytic partial derivatives,
  ``τ̇ = ∂τ/∂q v + ∂τ/∂v a + M ȧ`` and ``ȧ = ∂a/∂q v + ∂a/∂v a + M⁻¹ τ̇``,
  with the configuration's tangent rate ``v`` (Pinocchio's free flyer
  differentiates in its local frame; :mod:`liedyn.interop.pinocchio`).
  Forward dynamics in the kinetic-energy norm and by its backward error
  (see TOL).
* Orders 2–4 (and 1 again): central differences in time. Inverse dynamics
  along a polynomial motion whose base pose is integrated on SE(3); forward
  dynamics along the same motion driven by the force jets inverse dynamics
  gives it, and along its own solution under polynomial force jets
  (integrated to ``±h`` with an 8th-order Runge–Kutta method). Halving ``h``
  must divide the error by 4. Forward orders 3–4 only where they are
  well-conditioned (see FORWARD_ORDERS).

Relative errors are ``max|a − b| / max|b|`` over the whole jet row unless
said otherwise.
"""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import liedyn
from liedyn import se3
from tests.robots import REAL_ROBOTS, Trajectory, joint_sample, real_robot

# Order 0 and 1 against Pinocchio. Inverse dynamics and the mass matrix are
# well-conditioned: both libraries agree to ~1e-15. Forward dynamics divides
# by M: at generic states of PR2 (cond(M) ≈ 8e6, light finger links) the
# third derivative q⃛ differs by up to 6e-9 in the max norm between liedyn and
# Pinocchio, and each of them is that far from the exact jets (Pinocchio's
# own round trip, its RNEA derivatives then its ABA derivatives, misses by
# 6.5e-9); Talos 1.5e-9, the human model up to 1e-7 near its gimbal
# singularities. These errors sit in the light links' accelerations and
# carry ~1e-15 of the kinetic energy. Forward dynamics is therefore compared
# in the kinetic-energy norm ‖x‖_M = ‖Lᵀ x‖ (M = L Lᵀ, Pinocchio's CRBA) and
# by its backward error: Pinocchio's inverse dynamics (RNEA and its analytic
# derivatives) applied to liedyn's forward jets must return the force jets
# that drove them. Both to TOL; the max-norm differences are reported.
TOL = 1e-9
# A starting state for the central differences is redrawn (deterministic
# rejection) where cond(M) exceeds this: near a gimbal singularity of the
# human model's massless links the forward jets have no 1e-9 digits.
COND_MAX = 1e8
# Central differences: see tests/test_frames.py.
H = 1e-2
RATIO = (3.7, 4.3)
ROBOTS = list(REAL_ROBOTS)


def rel(a, b):
    """``max|a − b| / max|b|``."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def energy_rel(M, a, b):
    """``‖a − b‖_M / ‖b‖_M`` with ``‖x‖_M = ‖Lᵀ x‖``, ``M = L Lᵀ``."""
    L = np.linalg.cholesky(M)
    return float(np.linalg.norm(L.T @ (a - b)) / np.linalg.norm(L.T @ b))


def _states(model, rng, count):
    """``count`` states ``(C₀, V₀ jet (3, 6), q jet (4, n))``: q within the
    joint limits, the other rows O(1)."""
    out = []
    for _ in range(count):
        n = model.n_joints
        q = np.vstack([joint_sample(model, rng), rng.normal(size=(3, n))])
        C0 = se3.exp(rng.normal(size=6) * 0.5) if model.floating_base else None
        V = rng.normal(size=(3, 6)) if model.floating_base else None
        out.append((C0, V, q))
    return out


def pinocchio_errors(name, count=4, seed=0):
    """Largest differences of liedyn against Pinocchio at order 0 and 1 over
    ``count`` states: ``{check: error}``. Forward dynamics is driven by the
    force jets of the state's motion (so its outputs are that O(1) motion)."""
    model, br = real_robot(name)
    rng = np.random.default_rng(seed)
    err = {}

    def put(key, e):
        err[key] = max(err.get(key, 0.0), e)

    for C0, V, q in _states(model, rng, count):
        inv = liedyn.inverse_dynamics(model, C0, V, q, 1)
        W, tau = br.inverse_dynamics(C0, V, q, 1)
        for k in (0, 1):
            put(f"inverse r={k}", rel(inv.tau[k], tau[k]))
            if W is not None:
                put(f"inverse r={k}", rel(inv.base_wrench[k], W[k]))
        M = br.mass_matrix(C0, q[0])
        put("mass matrix", rel(liedyn.mass_matrix(model, C0, q[0]), M))
        Wb = inv.base_wrench if model.floating_base else None
        V1 = None if V is None else V[:1]
        fd = liedyn.forward_dynamics(model, C0, V1, q[:2], 1, tau=inv.tau, base_wrench=Wb)
        Vp, qp = br.forward_dynamics(C0, V1, q[:2], 1, tau=inv.tau, base_wrench=Wb)
        Wr, taur = br.inverse_dynamics(C0, fd.base_twist[:3] if model.floating_base else None,
                                       fd.q[:4], 1)
        for k in (0, 1):
            a = np.concatenate([fd.base_twist[k + 1] if Wb is not None else [], fd.q[k + 2]])
            b = np.concatenate([Vp[k + 1] if Wb is not None else [], qp[k + 2]])
            put(f"forward r={k}, kinetic-energy norm", energy_rel(M, a, b))
            put(f"forward r={k}, max norm (reported)", rel(a, b))
            put(f"forward r={k}, backward error",
                max(rel(taur[k], inv.tau[k]), rel(Wr[k], Wb[k]) if Wb is not None else 0.0))
    return err


@pytest.mark.parametrize("robot", ROBOTS)
def test_orders_0_and_1_against_pinocchio(robot):
    err = pinocchio_errors(robot)
    checked = {k: e for k, e in err.items() if "reported" not in k}
    assert len(checked) == 7 and max(checked.values()) <= TOL, err


# ------------------------------------------------------ central differences --

def _smooth_motion(model, bridge, rng, rows):
    """A :class:`Trajectory` whose start has cond(M) ≤ COND_MAX, and its jets
    ``(C₀, V₀ (rows, 6), q (rows + 1, n))`` at 0."""
    while True:
        traj = Trajectory(model, rng, speed=0.5)
        C0, V, q = traj.state(0.0, rows)
        if np.linalg.cond(bridge.mass_matrix(C0, q[0])) <= COND_MAX:
            return traj, C0, V, q


def _difference_errors(out, want, orders):
    """``{k: [e(h), e(h/2)]}``: ``e(s) = max|(out(s, k−1) − out(−s, k−1)) / 2s
    − want(k)| / max|want(k)|``."""
    return {k: [float(np.max(np.abs((out(s, k - 1) - out(-s, k - 1)) / (2 * s) - want(k)))
                      / np.max(np.abs(want(k)))) for s in (H, H / 2)] for k in orders}


def inverse_difference_errors(name, orders=(1, 2, 3, 4), seed=1):
    """Central differences of ``(W₀, τ)^(k−1)`` against ``(W₀, τ)^(k)`` along a
    polynomial motion whose base pose is integrated on SE(3)."""
    model, br = real_robot(name)
    K = max(orders)
    traj, *_ = _smooth_motion(model, br, np.random.default_rng(seed), K + 2)

    def out(s, r):
        res = liedyn.inverse_dynamics(model, *traj.state(s, r + 2), r)
        return np.concatenate([res.base_wrench[r], res.tau[r]])

    ref = liedyn.inverse_dynamics(model, *traj.state(0.0, K + 2), K)
    return _difference_errors(out, lambda k: np.concatenate([ref.base_wrench[k], ref.tau[k]]),
                              orders)


def _forward(model, C0, V, q, r, tau, wrench):
    res = liedyn.forward_dynamics(model, C0, None if V is None else V[:1], q[:2], r, tau=tau,
                                  base_wrench=wrench if model.floating_base else None)
    return np.concatenate([res.base_twist[r + 1], res.q[r + 2]])


def forward_difference_errors(name, orders=(1, 2, 3, 4), seed=2):
    """Central differences of the forward outputs ``(V₀, q)^(k)`` against
    ``(V₀, q)^(k+1)``, along a polynomial motion (base pose integrated on
    SE(3)) driven by the force jets that inverse dynamics (checked on its own
    above) assigns to it at each time."""
    model, br = real_robot(name)
    K = max(orders)
    traj, *_ = _smooth_motion(model, br, np.random.default_rng(seed), K + 2)

    def out(s, r):
        C0, V, q = traj.state(s, r + 2)
        inv = liedyn.inverse_dynamics(model, C0, V, q, r)
        return _forward(model, C0, V, q, r, inv.tau, inv.base_wrench)

    C0, V, q = traj.state(0.0, K + 2)
    inv = liedyn.inverse_dynamics(model, C0, V, q, K)
    res = liedyn.forward_dynamics(model, C0, None if V is None else V[:1], q[:2], K,
                                  tau=inv.tau,
                                  base_wrench=inv.base_wrench if model.floating_base else None)
    return _difference_errors(out, lambda k: np.concatenate([res.base_twist[k + 1],
                                                             res.q[k + 2]]), orders)


class _ForwardMotion:
    """The motion forward dynamics of order 0 produces from a state under
    polynomial force jets, integrated on ``[0, t]`` (8th-order Runge–Kutta,
    tolerance 1e-13, global error ≈ 1e-14; the base pose as a 3×4 matrix,
    ``Ċ = [V₀] C``, whose drift off SE(3), ~1e-14, is far inside the pose
    check; the dynamics read its polar projection, equal to it on the
    solution)."""

    def __init__(self, model, C0, V0, q0, qd0, tau_c, wrench_c):
        self.model, self.C0, self.V0, self.q0, self.qd0 = model, C0, V0, q0, qd0
        self.tau_c, self.wrench_c = tau_c, wrench_c

    def forces(self, t, rows):
        tau = Trajectory._jet(self.tau_c, t, rows)
        W = None if self.wrench_c is None else Trajectory._jet(self.wrench_c, t, rows)
        return tau, W

    def _unpack(self, y):
        n = self.model.n_joints
        if not self.model.floating_base:
            return None, None, y[:n], y[n:]
        C = np.eye(4)
        C[:3] = y[:12].reshape(3, 4)
        return C, y[12:18], y[18:18 + n], y[18 + n:]

    def _rhs(self, t, y):
        C, V, q, qd = self._unpack(y)
        tau, W = self.forces(t, 1)
        Cp = C
        if C is not None:     # the solver's trial points may leave SE(3): project, polar
            U, _, Wt = np.linalg.svd(C[:3, :3])
            Cp = C.copy()
            Cp[:3, :3] = U @ Wt
        fd = liedyn.forward_dynamics(self.model, Cp, None if V is None else V[None],
                                     np.stack([q, qd]), 0, tau=tau, base_wrench=W)
        parts = [fd.q[1], fd.q[2]]
        if self.model.floating_base:
            parts = [(se3.hat(V) @ C)[:3].ravel(), fd.base_twist[1]] + parts
        return np.concatenate(parts)

    def state(self, t):
        """``(C₀, V₀ (1, 6) or None, q (2, n))`` at time ``t``."""
        y0 = np.concatenate(([] if not self.model.floating_base else
                             [self.C0[:3].ravel(), self.V0]) + [self.q0, self.qd0])
        if t != 0.0:
            sol = solve_ivp(self._rhs, (0.0, t), y0, method="DOP853", rtol=1e-13, atol=1e-13)
            assert sol.success, sol.message
            y0 = sol.y[:, -1]
        C, V, q, qd = self._unpack(y0)
        return C, None if V is None else V[None], np.stack([q, qd])


def forward_solution_difference_errors(name, orders=(1, 2, 3, 4), seed=2):
    """As :func:`forward_difference_errors`, along the forward dynamics' own
    solution under polynomial force jets (no inverse dynamics in the loop).

    The state at ``±h`` carries the integrator's error δ ≈ 1e-14, which the
    order-``k`` outputs amplify by about ``λ^(k+1)``, ``λ`` the spectral radius
    of the linearised dynamics; the difference quotient adds ``1/h``. That
    noise, ``δ λ^(k+1) / h``, stays below the h² truncation error only for
    robots without fast modes: measured λ ≈ 11 (ANYmal), 15 (Solo), 20
    (Panda), but 120 (human), 700 (PR2) and 900 (Talos, light gripper links)
    per second.
    """
    model, br = real_robot(name)
    rng = np.random.default_rng(seed)
    K = max(orders)
    # Force jets: the inverse dynamics of a smooth motion, to degree K + 4, so
    # that the solution's derivatives are that motion's up to order K + 6 and
    # the h² and h⁴ terms of the differences are those of a gentle motion.
    # (How the input was chosen does not enter the check.)
    D = K + 4
    traj, C0, V, q = _smooth_motion(model, br, rng, D + 2)
    inv = liedyn.inverse_dynamics(model, C0, V, q, D)
    motion = _ForwardMotion(model, C0, None if V is None else V[0], q[0], q[1], inv.tau,
                            inv.base_wrench if model.floating_base else None)
    states = {s: motion.state(s) for s in (H, -H, H / 2, -H / 2, 0.0)}

    def out(s, r):
        tau, W = motion.forces(s, r + 1)
        C0s, Vs, qs = states[s]
        return _forward(model, C0s, Vs, qs, r, tau, W)

    C0s, Vs, qs = states[0.0]
    tau, W = motion.forces(0.0, K + 1)
    res = liedyn.forward_dynamics(model, C0s, Vs, qs, K, tau=tau, base_wrench=W)
    return _difference_errors(out, lambda k: np.concatenate([res.base_twist[k + 1],
                                                             res.q[k + 2]]), orders)


def _assert_h2_law(errors):
    for k, (e1, e2) in errors.items():
        assert e2 <= 1e-3 and RATIO[0] <= e1 / e2 <= RATIO[1], (k, e1, e2)


@pytest.mark.parametrize("robot", ROBOTS)
def test_inverse_orders_1_to_4_against_central_differences(robot):
    _assert_h2_law(inverse_difference_errors(robot))


# Forward-dynamics jets of robots with light links are ill-conditioned: the
# linearised dynamics has fast modes (spectral radius λ ≈ 900 s⁻¹ for Talos,
# light gripper links; 700 for PR2, light fingers; 120 for the human model),
# and each derivative order multiplies the sensitivity of q^(r+2) to the
# inputs by about λ. Measured on the exact map (perturbations of τ from 1e-15
# to 1e-9 relative give the same, linear response), the relative condition
# number of q, q̈, …, q^(6) with respect to τ is 6e5, 5e8, 5e11, 5e14, 4e17
# for Talos. From order 3 on, float64 holds no digit of these outputs for any
# algorithm, and no central difference can check them; there orders 1–2 are
# checked. Solo, ANYmal and Panda (λ ≈ 15, 11, 20 s⁻¹) are checked to order 4.
FORWARD_ORDERS = {"talos": (1, 2), "pr2": (1, 2), "human": (1, 2),
                  "solo12": (1, 2, 3, 4), "anymal": (1, 2, 3, 4), "panda": (1, 2, 3, 4)}


@pytest.mark.parametrize("robot", ROBOTS)
def test_forward_orders_against_central_differences(robot):
    _assert_h2_law(forward_difference_errors(robot, FORWARD_ORDERS[robot]))


@pytest.mark.parametrize("robot", ["solo12", "anymal", "panda"])
def test_forward_orders_1_to_4_along_its_own_solution(robot):
    _assert_h2_law(forward_solution_difference_errors(robot))
