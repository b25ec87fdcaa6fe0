"""The exact linearizing laws (SPEC §11): gains from poles, the base error
on SE(3), the step of any relative degree, elastic joints and rotor lag.
The package docstring (:mod:`liedyn.control`) holds the glossary."""

from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

from .._checks import (OK, _all_finite, as_array, check_motion_slow, check_pose, check_scalar,
                      check_type, is_pose, motion_args, plain)
from .._jit import Kernel, njit
from ..algorithm.forward import forward_dynamics
from ..algorithm.inverse import inverse_dynamics
from ..multibody.model import check_model
from ..spatial.se3 import _Ad_into, _Ad_T_into, _ad_acc, _inv_into, _log_into
from ..simulation import Inputs, State
from .allocation import (THRUST_COMMAND, THRUST_WRENCH, check_producible, full_allocation,
                         range_complement)
from ..multibody.workspace import Workspace, binomials

__all__ = [
    "gains_from_poles", "Target", "base_error", "FeedbackLinearization", "Linearization",
    "ControlStep", "ElasticJointLaw", "RotorLagLaw",
]


# ----------------------------------------------------------------- gains --

def gains_from_poles(poles):
    """Gains ``a_0 … a_{k−1}`` that place the error's poles.

    ``s^k + a_{k−1} s^{k−1} + … + a_0 = (s − p_1) … (s − p_k)``, so that the
    law ``y^(k) = y_d^(k) − Σ_j a_j e^(j)`` leaves the error ``e = y − y_d``
    with ``e^(k) + Σ_j a_j e^(j) = 0``, whose solutions are sums of
    ``t^m e^{p_i t}`` (SPEC §11.1).

    Parameters
    ----------
    poles : (k,) real or complex
        Desired closed-loop poles, every one with a negative real part;
        complex poles in conjugate pairs.

    Returns
    -------
    (k,) float
        ``a_j`` for ``j = 0..k−1`` (lowest order first).

    Raises
    ------
    TypeError, ValueError
        Non-numeric or empty ``poles``, a non-finite pole, a pole with
        ``Re p ≥ 0``, a complex pole without its conjugate.
    """
    if poles is None:
        raise TypeError("poles: expected a sequence of numbers, got None")
    p = np.asarray(poles)
    if p.dtype.kind not in "iufc":
        raise TypeError(f"poles: expected real or complex numbers, got dtype {p.dtype}")
    p = p.astype(complex)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"poles: expected a non-empty 1-D sequence, got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ValueError("poles: contains NaN or infinite values")
    if np.any(p.real >= 0.0):
        raise ValueError(f"poles: expected every pole in the open left half-plane (Re p < 0), "
                         f"got {poles!r}")
    if not np.array_equal(np.sort_complex(p), np.sort_complex(p.conj())):
        raise ValueError(f"poles: complex poles must come in conjugate pairs, got {poles!r}")
    c = np.poly(p)                                                    # SPEC §11.1
    return np.ascontiguousarray(c[:0:-1].real)


# ---------------------------------------------------------------- target --

@dataclass(frozen=True)
class Target:
    """Desired motion at one instant, as jets.

    Attributes
    ----------
    q : (rows, n)
        Joint jet ``q_d^(0..rows−1)``; a law of relative degree ``ρ`` reads
        rows ``0..ρ``.
    base_pose : (4, 4) or None
        ``C_d`` (``None`` for a fixed base).
    base_twist : (rows', 6) or None
        Spatial twist jet ``V_d^(0..rows'−1)`` of ``C_d`` (world origin);
        rows ``0..ρ−1`` are read.
    """

    q: np.ndarray
    base_pose: np.ndarray = None
    base_twist: np.ndarray = None


def _target_arrays(model, target, rho):
    """``(C_d, V_d (ρ, 6), q_d (ρ+1, n))`` from a :class:`Target`: the arrays
    themselves when they are plain float64 arrays of enough rows (the kernel
    then checks their values), converted and fully checked otherwise."""
    if type(target) is not Target:
        check_type(target, Target, "target", "a liedyn.control.Target")
    qd, Cd, Vd = target.q, target.base_pose, target.base_twist
    n = model.n_joints
    if not (plain(qd, 2) and qd.shape[0] > rho and qd.shape[1] == n):
        return _target_slow(model, target, rho)
    if not model.floating_base:
        return _NO_POSE, _NO_TWIST, qd[:rho + 1]
    if not (plain(Cd, 2) and plain(Vd, 2) and Vd.shape[0] >= rho and Vd.shape[1] == 6):
        return _target_slow(model, target, rho)
    return Cd, Vd[:rho], qd[:rho + 1]


def _target_slow(model, target, rho):
    """:func:`_target_arrays` with every check in Python; raises on a bad target."""
    check_type(target, Target, "target", "a liedyn.control.Target")
    n = model.n_joints
    qd = as_array(target.q, "target.q", ndim=2)
    if qd.shape[0] < rho + 1 or qd.shape[1] != n:
        raise ValueError(f"target.q: expected a jet of shape (≥{rho + 1}, {n}), got {qd.shape}")
    if not model.floating_base:
        if target.base_pose is not None or target.base_twist is not None:
            raise ValueError("target: the model's base is fixed; base_pose and base_twist "
                             "must be None")
        return _NO_POSE, _NO_TWIST, np.ascontiguousarray(qd[:rho + 1])
    if target.base_pose is None or target.base_twist is None:
        raise ValueError("target: a floating base needs base_pose (4, 4) and base_twist "
                         f"(≥{rho}, 6)")
    Cd = check_pose(target.base_pose, "target.base_pose")
    Vd = as_array(target.base_twist, "target.base_twist", ndim=2)
    if Vd.shape[0] < rho or Vd.shape[1] != 6:
        raise ValueError(f"target.base_twist: expected a jet of shape (≥{rho}, 6), got "
                         f"{Vd.shape}")
    return Cd, np.ascontiguousarray(Vd[:rho]), np.ascontiguousarray(qd[:rho + 1])


_NO_POSE = np.eye(4)
_NO_POSE.setflags(write=False)
_NO_TWIST = np.zeros((0, 6))
_NO_TWIST.setflags(write=False)


# ---------------------------------------------------------------- kernels --

BAD_TARGET = -1       # status of _command: a non-finite target or a non-rigid target pose


@njit
def _base_error_jets(C0, V, Cd, Vd, binom, err):
    """Base error jets (SPEC §11.3): ``err[0] = log(C_d⁻¹ C₀)``,
    ``err[k+1] = V_E^(k) = Ad_{C_d⁻¹} (D^k ΔV)`` for ``k + 1 < len(err)``
    (``ΔV = V − V_d``, rows of ``V`` beyond its length taken as zero).
    Returns ``(D^m ΔV)`` at row 0, ``m = V_d.shape[0] − 1``."""
    m = Vd.shape[0] - 1
    Cdi = np.empty((4, 4))
    _inv_into(Cd, Cdi)
    E = Cdi @ C0
    _log_into(E, err[0])
    Y = np.zeros((m + 1, 6))
    Z = np.zeros((m + 1, 6))
    for k in range(min(V.shape[0], m + 1)):
        for i in range(6):
            Y[k, i] = V[k, i] - Vd[k, i]
    for k in range(m):                       # Y holds D^k ΔV, rows 0..m−k
        if k + 1 < err.shape[0]:
            _Ad_into(Cdi, Y[0], err[k + 1])
        for j in range(m - k):               # (D Y)^(j), SPEC §11.3
            for i in range(6):
                Z[j, i] = Y[j + 1, i]
            for a in range(j + 1):
                _ad_acc(-binom[j, a], Vd[a], Y[j - a], Z[j])                 # SPEC §11.3
        for j in range(m - k):
            for i in range(6):
                Y[j, i] = Z[j, i]
    return Y[0].copy()


@njit
def _command(rho, C0, V, Cd, Vd, q, qd, a_q, a_b, binom, V_out, q_out, e_b, e_q):
    """Errors and the next rows of the motion jets (SPEC §11.2–11.3).

    ``V`` (ρ−1, 6) and ``q`` (ρ, n) are the jets the state determines;
    ``V_out`` (ρ, 6), ``q_out`` (ρ+1, n) receive them with the commanded top
    row; ``e_b`` (ρ, 6) and ``e_q`` (ρ, n) the error jets. A fixed base has
    empty ``V``, ``Vd``, ``V_out``, ``e_b``. Returns ``OK``, or ``BAD_TARGET``
    for a non-finite target or a target pose that is not rigid."""
    if not (_all_finite(qd.reshape(-1)) and _all_finite(Vd.reshape(-1))):
        return BAD_TARGET
    if Vd.shape[0] > 0 and not is_pose(Cd):
        return BAD_TARGET
    n = q.shape[1]
    for k in range(rho):
        for j in range(n):
            q_out[k, j] = q[k, j]
            e_q[k, j] = q[k, j] - qd[k, j]
    for j in range(n):
        acc = qd[rho, j]
        for k in range(rho):
            acc -= a_q[k] * e_q[k, j]
        q_out[rho, j] = acc                                                   # SPEC §11.1
    if Vd.shape[0] == 0:
        return OK
    R = _base_error_jets(C0, V, Cd, Vd, binom, e_b)
    w = np.zeros(6)
    for k in range(rho):
        for i in range(6):
            w[i] -= a_b[k] * e_b[k, i]                # commanded V_E^(ρ−1)
    dV = np.empty(6)
    _Ad_into(Cd, w, dV)
    for k in range(rho - 1):
        V_out[k] = V[k]
    for i in range(6):
        V_out[rho - 1, i] = Vd[rho - 1, i] - R[i] + dV[i]                     # SPEC §11.3
    return OK


_COMMAND = Kernel(_command)
_BASE_ERROR = Kernel(_base_error_jets)


def base_error(base_pose, base_twist, target_pose, target_twist):
    """Error jets of a base pose against a target on SE(3) (SPEC §11.3).

    ``E = C_d⁻¹ C₀``, ``x = log E`` and the spatial twist of ``E``,
    ``V_E = Ad_{C_d⁻¹}(V₀ − V_d)``, with its derivatives

        V_E^(k) = Ad_{C_d⁻¹} D^k (V₀ − V_d),    D Y = Ẏ − ad_{V_d} Y.

    ``ẋ = dexp_x⁻¹ V_E = V_E − ½ ad_x V_E + …``: to first order in the error
    ``(x, V_E, V̇_E, …)`` are the jet of ``x``, which is the linearization the
    laws of this module place the poles of. Every quantity is unchanged by a
    change of world frame.

    Parameters
    ----------
    base_pose, target_pose : (4, 4)
        ``C₀`` and ``C_d``.
    base_twist, target_twist : (rows, 6)
        Spatial twist jets ``V₀^(0..rows−1)`` and ``V_d^(0..rows−1)`` (world
        origin).

    Returns
    -------
    (rows+1, 6)
        ``x, V_E, V̇_E, …, V_E^(rows−1)``.
    """
    C0 = check_pose(base_pose, "base_pose")
    Cd = check_pose(target_pose, "target_pose")
    V = as_array(base_twist, "base_twist", ndim=2)
    Vd = as_array(target_twist, "target_twist", ndim=2)
    if V.shape[1] != 6 or V.shape[0] < 1:
        raise ValueError(f"base_twist: expected a jet of shape (rows, 6), got {V.shape}")
    if Vd.shape != V.shape:
        raise ValueError(f"target_twist: expected the shape of base_twist {V.shape}, got "
                         f"{Vd.shape}")
    rows = V.shape[0]
    Vx = np.zeros((rows + 1, 6))           # one row more: D^rows of it is not needed
    Vx[:rows] = V
    Vdx = np.zeros((rows + 1, 6))
    Vdx[:rows] = Vd
    err = np.empty((rows + 1, 6))
    _BASE_ERROR.call(C0, Vx, Cd, Vdx, binomials(rows + 1), err)
    return err


# ------------------------------------------------------- linearization --

class Linearization(NamedTuple):
    """One step of :class:`FeedbackLinearization`.

    Attributes
    ----------
    base_twist : (ρ, 6) or None
        ``V₀^(0..ρ−1)``: from the state up to ``ρ − 2``, the commanded
        ``V₀^(ρ−1)`` last (``None`` for a fixed base).
    q : (ρ+1, n)
        ``q^(0..ρ)``, the commanded ``q^(ρ)`` last.
    base_wrench : (ρ−1, 6)
        ``W₀^(0..ρ−2)`` from inverse dynamics: the required base wrench jet
        (the support reaction for a fixed base); the last row is new.
    tau : (ρ−1, n)
        ``τ^(0..ρ−2)``; the last row is new.
    base_error : (ρ, 6) or None
        ``x = log(C_d⁻¹ C₀), V_E, …, V_E^(ρ−2)`` (SPEC §11.3).
    joint_error : (ρ, n)
        ``e^(k) = q^(k) − q_d^(k)``, ``k = 0..ρ−1``.
    """

    base_twist: Optional[np.ndarray]
    q: np.ndarray
    base_wrench: np.ndarray
    tau: np.ndarray
    base_error: Optional[np.ndarray]
    joint_error: np.ndarray


class FeedbackLinearization:
    """Exact linearization of base pose and joints of relative degree ``ρ``
    by one forward-dynamics call of order ``ρ − 3`` and one inverse-dynamics
    call of order ``ρ − 2`` (SPEC §11.2).

    Parameters
    ----------
    model : Model
    relative_degree : int ≥ 2
        ``ρ``: 2 for torque and wrench inputs (computed torque), 3 for
        torque-rate inputs, 4 for elastic joints.
    poles : (ρ,)
        Closed-loop poles of every joint error (:func:`gains_from_poles`).
    base_poles : (ρ,), optional
        Poles of the base error (default: ``poles``); floating base only.

    Notes
    -----
    A floating base is taken as fully actuated: the step returns the base
    wrench jet the motion needs, all six components of it (a tilted
    hexarotor can apply it, a quadrotor cannot). Calls reuse two
    workspaces, so an instance serves one thread at a time.
    """

    def __init__(self, model, relative_degree, poles, *, base_poles=None):
        check_model(model)
        if isinstance(relative_degree, (bool, np.bool_)) or not isinstance(
                relative_degree, (int, np.integer)):
            raise TypeError(f"relative_degree: expected an int ≥ 2, got "
                            f"{type(relative_degree).__name__}")
        if relative_degree < 2:
            raise ValueError(f"relative_degree: expected an int ≥ 2, got {relative_degree}")
        rho = int(relative_degree)
        self.model = model
        self.relative_degree = rho
        self.gains = _gains(poles, rho, "poles")
        if base_poles is not None and not model.floating_base:
            raise ValueError("base_poles: the model's base is fixed; pass None")
        self.base_gains = self.gains if base_poles is None else _gains(base_poles, rho,
                                                                       "base_poles")
        self._forward = Workspace(model, rho - 3) if rho >= 3 else None
        self._inverse = Workspace(model, rho - 2)
        self._binom = binomials(rho)

    def step(self, base_pose, base_twist, q, target, *, tau=None, base_wrench=None):
        """The commanded jets at one state.

        Parameters
        ----------
        base_pose : (4, 4) or None
            ``C₀`` (``None``: the model's home pose).
        base_twist : (1, 6) or None
            ``V₀`` of the state (``None`` for a fixed base).
        q : (2, n)
            ``[q; q̇]``.
        target : Target
            Rows ``0..ρ`` of the joint jet, ``0..ρ−1`` of the base twist.
        tau : (ρ−2, n), keyword
            ``τ^(0..ρ−3)`` fixed by the actuator state (``None`` for ``ρ = 2``).
        base_wrench : (ρ−2, 6), keyword
            ``W₀^(0..ρ−3)`` (floating base, ``ρ ≥ 3``), world frame about the
            world origin.

        Returns
        -------
        Linearization
            Its last rows of ``tau`` and ``base_wrench`` are the inputs that
            make ``q^(ρ)`` and ``V₀^(ρ−1)`` equal the commanded ones.

        Raises
        ------
        ValueError, TypeError
            As :func:`liedyn.forward_dynamics`, or a wrong ``target``.
        """
        rho, model = self.relative_degree, self.model
        floating = model.floating_base
        if rho >= 3:
            fd = forward_dynamics(model, base_pose, base_twist, q, rho - 3, tau=tau,
                                  base_wrench=base_wrench, workspace=self._forward)
            Vk, qk = fd.base_twist, fd.q
            C0 = model.home_pose if base_pose is None else base_pose
        else:
            if tau is not None or base_wrench is not None:
                raise ValueError("tau, base_wrench: a law of relative degree 2 has no force "
                                 "states; pass None")
            C0, Vk, qk = motion_args(model, base_pose, base_twist, q, 1, 2)
            if qk.shape != (2, model.n_joints) or (floating and Vk.shape != (1, 6)):
                check_motion_slow(model, base_pose, base_twist, q, 1, 2)
        if floating and not plain(C0, 2):
            C0 = check_pose(C0, "base_pose")
        Cd, Vd, qd = _target_arrays(model, target, rho)
        n = model.n_joints
        V_out = np.empty((rho if floating else 0, 6))
        e_b = np.empty((rho if floating else 0, 6))
        q_out = np.empty((rho + 1, n))
        e_q = np.empty((rho, n))
        status = _COMMAND.call(rho, C0 if floating else _NO_POSE, Vk if floating else _NO_TWIST,
                               Cd, Vd, qk, qd, self.gains, self.base_gains, self._binom, V_out,
                               q_out, e_b, e_q)
        if status != OK:
            _target_slow(model, target, rho)
            raise AssertionError("control kernel refused a target that passed its checks")
        idr = inverse_dynamics(model, base_pose, V_out if floating else None, q_out, rho - 2,
                               workspace=self._inverse)
        return Linearization(V_out if floating else None, q_out, idr.base_wrench, idr.tau,
                             e_b if floating else None, e_q)

    def __repr__(self):
        return (f"FeedbackLinearization({self.model!r}, relative_degree="
                f"{self.relative_degree})")


def _gains(poles, rho, name):
    try:
        a = gains_from_poles(poles)
    except (TypeError, ValueError) as err:
        raise type(err)(str(err).replace("poles:", f"{name}:", 1)) from None
    if a.shape != (rho,):
        raise ValueError(f"{name}: expected {rho} poles (the relative degree), got {a.size}")
    return a


# ----------------------------------------------------------------- laws --

class ControlStep(NamedTuple):
    """A law's input at one state and the jets behind it.

    Attributes
    ----------
    input : (m,)
        What the law commands (its layout is the law's).
    jets : Linearization
    """

    input: np.ndarray
    jets: Linearization


def _positive(x, name, n):
    a = as_array(x, name)
    if a.shape == ():
        a = np.full(n, float(a))
    if a.shape != (n,):
        raise ValueError(f"{name}: expected a number or shape ({n},), got {a.shape}")
    if np.any(a <= 0.0):
        raise ValueError(f"{name}: expected positive values, got {a}")
    a = a.copy()
    a.setflags(write=False)
    return a


def _state_arrays(state, n, m):
    """``(extra (m,), q (n,), q̇ (n,))`` of a :class:`liedyn.State`, checked."""
    x, q, qd = state.extra, state.q, state.qd
    if (plain(x, 1) and plain(q, 1) and plain(qd, 1) and x.shape[0] == m and q.shape[0] == n
            and qd.shape[0] == n):
        return x, q, qd
    if x is None:
        raise ValueError(f"state.extra: expected the law's actuator state of shape ({m},), "
                         f"got None")
    return (as_array(x, "state.extra", shape=(m,)), as_array(q, "state.q", shape=(n,)),
            as_array(qd, "state.qd", shape=(n,)))


@njit
def _spring(x, q, qd, K, qs, tau):
    """``qs = [q; q̇]``, ``τ = K (θ − q)``, ``τ̇ = K (θ̇ − q̇)`` with ``x = (θ, θ̇, …)``."""
    n = q.shape[0]
    for j in range(n):
        qs[0, j] = q[j]
        qs[1, j] = qd[j]
        tau[0, j] = K[j] * (x[j] - q[j])
        tau[1, j] = K[j] * (x[n + j] - qd[j])


@njit
def _motor(q, tau, W0, K, B, u):
    """``u = B (q̈ + K⁻¹ τ̈) + τ`` (``= B θ̈ + τ``), then ``Ẅ₀`` for a floating base."""
    n = K.shape[0]
    for j in range(n):
        u[j] = B[j] * (q[2, j] + tau[2, j] / K[j]) + tau[0, j]                # SPEC §11.4
    for i in range(u.shape[0] - n):
        u[n + i] = W0[2, i]


_SPRING = Kernel(_spring)
_MOTOR = Kernel(_motor)


def _state_on(model, target, extra):
    """A :class:`liedyn.State` at the target's pose, twist and joint jets, with
    the actuator state ``extra``."""
    Cd, Vd, qd = _target_arrays(model, target, 1)
    if not model.floating_base:
        return State(q=qd[0], qd=qd[1], extra=extra)
    return State(base_pose=Cd, base_twist=Vd[0], q=qd[0], qd=qd[1], extra=extra)


def _moved(model, target, q, base_pose):
    """``target`` with ``q_d`` replaced by ``q`` and ``C_d`` by ``base_pose``
    (each when given); the higher jets are the target's."""
    if q is None and base_pose is None:
        return target
    check_type(target, Target, "target", "a liedyn.control.Target")
    qd = as_array(target.q, "target.q", ndim=2).copy()
    if q is not None:
        qd[0] = as_array(q, "q", shape=(model.n_joints,))
    Cd = target.base_pose
    if base_pose is not None:
        if not model.floating_base:
            raise ValueError("base_pose: the model's base is fixed; pass None")
        Cd = check_pose(base_pose, "base_pose")
    return Target(q=qd, base_pose=Cd, base_twist=target.base_twist)


class _Law:
    """What the actuator laws share: a target callable, the controller
    callback and the state from which a law tracks its target exactly.
    :attr:`reference` is the point its twists and wrenches are about, in the
    sense of the library's ``reference`` keyword (SPEC §1). A law defines
    ``model``, ``step(t, state)`` and ``actuator_state(target)``."""

    reference = "world"

    def _set_target(self, target):
        if not callable(target):
            raise TypeError(f"target: expected a callable target(t) -> Target, got "
                            f"{type(target).__name__}")
        self.target = target

    def __call__(self, t, state):
        """The input ``u`` (controller callback of :func:`liedyn.simulate`)."""
        return self.step(t, state).input

    def state_on(self, target, *, q=None, base_pose=None):
        """The :class:`liedyn.State` at ``target``'s jets, its configuration
        optionally moved to ``q`` and ``base_pose``: a consistent start.

        The twist ``V₀ = V_d`` and ``q̇ = q̇_d`` are the target's, and the
        actuator state is :meth:`actuator_state` of the target with its
        configuration moved, on which ``V₀^(k) = V_d^(k)`` and ``q^(k) =
        q_d^(k)`` for ``1 ≤ k ≤ ρ − 1``. The initial error jets are then
        ``(q − q_d, 0, …, 0)`` and ``(log(C_d⁻¹ C₀), 0, …, 0)``, from which the
        error decays as the poles say; with neither keyword the law tracks
        with zero error. Moving ``q`` of the state on the target instead
        leaves an actuator state that balances the target's configuration
        (elastic joints: ``τ = K (θ − q)`` jumps by ``−K δ``), so the
        higher error rows start large and the transient may leave the
        simulator's divergence bound.

        Parameters
        ----------
        target : Target
        q : (n,), optional
            Joint positions (default ``q_d``).
        base_pose : (4, 4), optional
            ``C₀`` (default ``C_d``); floating base only.
        """
        moved = _moved(self.model, target, q, base_pose)
        return _state_on(self.model, moved, self.actuator_state(moved))


class ElasticJointLaw(_Law):
    """Exact linearization of a robot with elastic joints (SPEC §11.4).

    Spong's model: link side ``M(q) q̈ + h = τ``, ``τ = K (θ − q)``; motor
    side ``B θ̈ + τ = u``. A floating base is extended dynamically: ``W₀`` and
    ``Ẇ₀`` are states and ``Ẅ₀`` is the input, so that base pose and joint
    angles all have relative degree 4. Per step: forward dynamics of order 1
    gives ``(V̇₀, q̈)``, ``(V̈₀, q⃛)``; the gains set ``V₀^(3)`` and ``q^(4)``;
    inverse dynamics of order 2 returns ``Ẅ₀`` and ``τ̈``; then

        θ̈ = q̈ + K⁻¹ τ̈,      u = B θ̈ + τ.

    Parameters
    ----------
    model : Model
    stiffness, motor_inertia : float or (n,)
        ``K`` (N m/rad or N/m) and ``B`` (kg m² or kg), positive.
    poles : (4,)
        Closed-loop poles of each joint error.
    target : callable ``target(t) -> Target``
        Rows ``0..4`` of the joint jet, ``0..3`` of the base twist jet.
    base_poles : (4,), optional
        Poles of the base error (default ``poles``).
    allocation : (6, m), optional, keyword
        The base's rotor allocation (body frame, e.g. from
        :func:`rotor_allocation`), floating base only. With it the law checks
        that the body-frame wrench jets ``W^B^(0..2)`` it commands (and those
        :meth:`actuator_state` starts from) lie in the range of ``A`` and
        refuses the step otherwise (``ValueError`` naming the time and the
        residual): a quadrotor cannot push sideways.

    State and input:
    ``state.extra`` is ``(θ, θ̇)``, ``(2n,)``, or for a floating base
    ``(θ, θ̇, W₀, Ẇ₀)``, ``(2n + 12,)`` (``W₀`` world frame about the world
    origin). The input is ``u``, ``(n,)``, or ``(u, Ẅ₀)``, ``(n + 6,)``.
    :meth:`plant` is the matching actuator model for :func:`liedyn.simulate`;
    :meth:`state_on` gives a start on the target or consistently off it.

    A floating base must be fully actuated: ``Ẅ₀`` has six independent
    components (the paper's tilted hexarotor), which a quadrotor cannot
    produce. Without ``allocation`` the law cannot check this.

    The error obeys its designed equation when the law runs at every stage
    of :func:`liedyn.simulate` (``control_rate`` unset); held between
    samples the input lags and the error grows as ``1/rate`` (SPEC §11.6,
    measured there for :class:`RotorLagLaw`).
    """

    relative_degree = 4

    def __init__(self, model, stiffness, motor_inertia, poles, target, *, base_poles=None,
                 allocation=None):
        self.linearization = FeedbackLinearization(model, 4, poles, base_poles=base_poles)
        n = model.n_joints
        self.model = model
        self._outside = None if allocation is None else range_complement(model, allocation)
        self.stiffness = _positive(stiffness, "stiffness", n)
        self.motor_inertia = _positive(motor_inertia, "motor_inertia", n)
        self._set_target(target)
        self.n_extra = 2 * n + (12 if model.floating_base else 0)
        self.n_input = n + (6 if model.floating_base else 0)

    def step(self, t, state):
        """The input at ``state`` (a :class:`liedyn.State`) and its jets;
        ``jets.tau[2]`` is ``τ̈``, ``jets.base_wrench[2]`` is ``Ẅ₀``."""
        n = self.model.n_joints
        x, q, qd = _state_arrays(state, n, self.n_extra)
        qs = np.empty((2, n))
        tau = np.empty((2, n))
        _SPRING.call(x, q, qd, self.stiffness, qs, tau)                     # SPEC §11.4
        if self.model.floating_base:
            lin = self.linearization.step(state.base_pose, state.base_twist.reshape(1, 6), qs,
                                          self.target(t), tau=tau,
                                          base_wrench=x[2 * n:].reshape(2, 6))
        else:
            lin = self.linearization.step(None, None, qs, self.target(t), tau=tau)
        u = np.empty(self.n_input)
        _MOTOR.call(lin.q, lin.tau, lin.base_wrench, self.stiffness, self.motor_inertia, u)
        if self._outside is not None:
            check_producible(self._outside, state.base_pose, lin.base_twist, lin.base_wrench,
                             f"state at t = {t:.9g}: the law commands")
        return ControlStep(u, lin)

    def plant(self, t, state, u):
        """Actuator model: ``τ = K (θ − q)``, ``θ̈ = B⁻¹ (u − τ)``, and for a
        floating base ``W₀`` applied with ``d/dt (W₀, Ẇ₀) = (Ẇ₀, Ẅ₀)``."""
        n = self.model.n_joints
        x, q, _ = _state_arrays(state, n, self.n_extra)
        u = as_array(u, "u", shape=(self.n_input,))
        tau = self.stiffness * (x[:n] - q)
        rate = np.empty(self.n_extra)
        rate[:n] = x[n:2 * n]
        rate[n:2 * n] = (u[:n] - tau) / self.motor_inertia
        if not self.model.floating_base:
            return Inputs(tau=tau, extra_rate=rate)
        rate[2 * n:2 * n + 6] = x[2 * n + 6:]
        rate[2 * n + 6:] = u[n:]
        return Inputs(tau=tau, base_wrench=x[2 * n:2 * n + 6].copy(), extra_rate=rate)

    def actuator_state(self, target):
        """``state.extra`` on which the robot moves along ``target``'s jets:
        ``τ``, ``τ̇``, ``W₀``, ``Ẇ₀`` from inverse dynamics of order 1 at
        ``(V_d^(0..2), q_d^(0..3))``, ``θ = q_d + K⁻¹ τ``, ``θ̇ = q̇_d + K⁻¹ τ̇``."""
        Cd, Vd, qd = _target_arrays(self.model, target, 3)
        floating = self.model.floating_base
        idr = inverse_dynamics(self.model, Cd if floating else None, Vd if floating else None,
                               qd, 1)
        n = self.model.n_joints
        x = np.empty(self.n_extra)
        x[:n] = qd[0] + idr.tau[0] / self.stiffness
        x[n:2 * n] = qd[1] + idr.tau[1] / self.stiffness
        if floating:
            x[2 * n:] = idr.base_wrench.reshape(-1)
            if self._outside is not None:
                check_producible(self._outside, Cd, Vd, idr.base_wrench, "target: it needs")
        return x


class RotorLagLaw(_Law):
    """Exact compensation of rotor lag and torque-rate drives (SPEC §11.5).

    Propeller thrusts follow ``ḟ = (f_cmd − f)/T_m`` and the base wrench is
    ``W^B = A f`` in the body frame; the joints are commanded in torque rate
    (``τ`` a state, ``τ̇`` the input). Base pose and joints then have
    relative degree 3. Per step: forward dynamics of order 0 gives
    ``(V̇₀, q̈)``; the gains set ``V̈₀`` and ``q⃛``; inverse dynamics of order
    1 returns ``Ẇ₀`` and ``τ̇``; with ``Ẇ^B = Ad_{C₀}ᵀ (Ẇ₀ + ad_{V₀}ᵀ W₀)``,

        f_cmd = f + T_m A⁺ Ẇ^B,

    ``A⁺ = Aᵀ (A Aᵀ)⁻¹`` (``A⁻¹`` for six rotors): redundant rotors share
    the wrench by minimum norm, and thrusts that start at the minimum-norm
    split stay on it.

    A floating base must be fully actuated: rotors whose thrusts span all
    six wrench components (the paper's tilted hexarotor); a quadrotor's
    allocation is refused. For a fixed base only the torque-rate joints
    remain.

    The error obeys its designed equation when the law runs at every stage
    of :func:`liedyn.simulate` (``control_rate`` unset). Held between
    samples it grows as ``1/rate`` (SPEC §11.6): on the aerial
    manipulator's reference motion 1.3e-14 rad at every stage, 1.1e-4 rad
    at 1 kHz, 2.2e-4 at 500 Hz, 1.0e-3 at 100 Hz.

    Parameters
    ----------
    model : Model
    poles : (3,)
        Closed-loop poles of each joint error.
    target : callable ``target(t) -> Target``
        Rows ``0..3`` of the joint jet, ``0..2`` of the base twist jet.
    allocation : (6, m), keyword
        ``A`` (floating base; rank 6, ``m ≥ 6`` rotors, e.g. from
        :func:`rotor_allocation`): rotors spanning all six wrench
        components, a fully actuated base such as the paper's tilted
        hexarotor. An allocation of rank below six (a quadrotor's has rank
        4) is refused with a ``ValueError``: this law needs every component
        of ``Ẇ^B``.
    time_constant : float, keyword
        ``T_m`` > 0 (floating base).
    base_poles : (3,), optional, keyword

    State and input:
    ``state.extra`` is ``(f, τ)``, ``(m + n,)`` (``τ``, ``(n,)``, for a fixed
    base); the input is ``(f_cmd, τ̇)`` (``τ̇``).
    """

    relative_degree = 3

    def __init__(self, model, poles, target, *, allocation=None, time_constant=None,
                 base_poles=None):
        self.linearization = FeedbackLinearization(model, 3, poles, base_poles=base_poles)
        self.model = model
        n = model.n_joints
        self._set_target(target)
        if model.floating_base:
            if allocation is None or time_constant is None:
                raise ValueError("allocation, time_constant: a floating base needs the thrust "
                                 "allocation (6, m) and the rotor time constant")
            A, self._allocation_pinv = full_allocation(allocation)
            self.allocation = A
            self.allocation.setflags(write=False)
            self.time_constant = check_scalar(time_constant, "time_constant")
            if self.time_constant <= 0.0:
                raise ValueError(f"time_constant: expected a positive number, got "
                                 f"{self.time_constant}")
        elif allocation is not None or time_constant is not None:
            raise ValueError("allocation, time_constant: the model's base is fixed; pass None")
        self._off = self.allocation.shape[1] if model.floating_base else 0
        self.n_extra = self._off + n
        self.n_input = self._off + n

    def base_wrench(self, base_pose, thrust):
        """``W₀ = Ad_{C₀}^{−T} A f``, ``(6,)``: the spatial base wrench (world
        frame, world origin) of the thrusts ``f``, ``(m,)``, at the pose ``C₀``."""
        C0 = base_pose if plain(base_pose, 2) else check_pose(base_pose, "base_pose")
        f = as_array(thrust, "thrust", shape=(self._off,))
        W = np.empty(6)
        THRUST_WRENCH.call(C0, self.allocation, f, W)
        return W

    def step(self, t, state):
        """The input at ``state`` and its jets; ``jets.tau[1]`` is ``τ̇``,
        ``jets.base_wrench[1]`` is ``Ẇ₀``."""
        n, off = self.model.n_joints, self._off
        x, q, qd = _state_arrays(state, n, self.n_extra)
        q = np.stack([q, qd])
        tau = x[off:].reshape(1, n)
        u = np.empty(self.n_input)
        if not self.model.floating_base:
            lin = self.linearization.step(None, None, q, self.target(t), tau=tau)
            u[:] = lin.tau[1]                                                 # τ̇
            return ControlStep(u, lin)
        C0, V0 = state.base_pose, state.base_twist
        if not (plain(C0, 2) and plain(V0, 1)):
            C0 = check_pose(C0, "state.base_pose")
            V0 = as_array(V0, "state.base_twist", shape=(6,))
        W = np.empty((1, 6))
        THRUST_WRENCH.call(C0, self.allocation, x[:off], W[0])
        lin = self.linearization.step(C0, V0.reshape(1, 6), q, self.target(t), tau=tau,
                                      base_wrench=W)
        u[off:] = lin.tau[1]                                                  # τ̇
        THRUST_COMMAND.call(C0, V0, lin.base_wrench, self._allocation_pinv, x[:off],
                             self.time_constant, u)                          # SPEC §11.5
        return ControlStep(u, lin)

    def plant(self, t, state, u):
        """Actuator model: ``ḟ = (f_cmd − f)/T_m``, ``W₀ = Ad_{C₀}^{−T} A f``,
        ``τ`` applied and ``τ̇`` the input."""
        off = self._off
        x, _, _ = _state_arrays(state, self.model.n_joints, self.n_extra)
        u = as_array(u, "u", shape=(self.n_input,))
        rate = np.empty(self.n_extra)
        rate[off:] = u[off:]
        if not self.model.floating_base:
            return Inputs(tau=x.copy(), extra_rate=rate)
        rate[:off] = (u[:off] - x[:off]) / self.time_constant
        return Inputs(tau=x[off:].copy(), base_wrench=self.base_wrench(state.base_pose, x[:off]),
                       extra_rate=rate)

    def actuator_state(self, target):
        """``state.extra`` on which the robot moves along ``target``'s jets:
        ``τ``, ``W₀`` from inverse dynamics of order 0, ``f = A⁺ Ad_{C_d}ᵀ W₀``."""
        Cd, Vd, qd = _target_arrays(self.model, target, 2)
        floating = self.model.floating_base
        idr = inverse_dynamics(self.model, Cd if floating else None, Vd if floating else None,
                               qd, 0)
        x = np.empty(self.n_extra)
        x[self._off:] = idr.tau[0]
        if floating:
            Wb = np.empty(6)
            _Ad_T_into(Cd, idr.base_wrench[0], Wb)                           # Ad_{C_d}ᵀ W₀
            x[:self._off] = self._allocation_pinv @ Wb
        return x
