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

from .._checks import _NO_APPLIED, OK, as_array, check_pose, is_pose, plain, raise_for
from .._jit import Kernel, njit
from ..algorithm.inverse import inverse_dynamics_kernel
from ..multibody.model import check_model
from ..multibody.workspace import Workspace
from ..simulation import Inputs, State
from .flatness import _cross_acc, _finite, _finite_rows, com_in_base, flat_map
from .laws import _gains

__all__ = ["FlatTrackingLaw", "FlatTrackingStep", "THRUST_MIN_RATIO"]

# The law divides by the thrust: below this fraction of m‖g⃗‖ (free fall
# and its neighbourhood) it refuses the state instead of commanding huge
# moments.
THRUST_MIN_RATIO = 1e-3

BAD_STATE, LOW_THRUST, BAD_TARGET = 201, 202, 203       # statuses of the step's kernel


@njit(inline=True)
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


@njit(inline=True)
def _mv(A, x):
    """``A x`` for a 3×3 ``A``."""
    return np.array([A[0, 0] * x[0] + A[0, 1] * x[1] + A[0, 2] * x[2],
                     A[1, 0] * x[0] + A[1, 1] * x[1] + A[1, 2] * x[2],
                     A[2, 0] * x[0] + A[2, 1] * x[1] + A[2, 2] * x[2]])


@njit(inline=True)
def _dot3(x, y):
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]


@njit(inline=True)
def _second_rotation(R, Rd, w, dw_b, Rdd):
    """``R̈ = (R ω̇_B)^ R + ω̂ Ṙ`` into ``Rdd``; returns ``ω̇ = R ω̇_B``."""
    dw = _mv(R, dw_b)
    for j in range(3):
        Rdd[:, j] = 0.0
        _cross_acc(1.0, dw, R[:, j], Rdd[:, j])
        _cross_acc(1.0, w, Rd[:, j], Rdd[:, j])
    return dw


@njit
def _step_kernel(model, ws, C, V, x, q0, q1, com_d, yaw_d, q_d, a_x, a_psi, a_q, m, f_min,
                 W_app, u, e, e_psi, e_q, Vj, qj):
    """One step of the law (SPEC §17.6) into ``u``, the error rows, ``V₀^(0..1)``
    and ``q^(0..2)``; ``ws`` of order 0. Returns a status."""
    n = q0.shape[0]
    if not (is_pose(C) and _finite(V) and _finite(x) and _finite(q0) and _finite(q1)):
        return BAD_STATE
    f, fd = x[0], x[1]
    if not f > f_min:
        return LOW_THRUST
    if not (_finite_rows(com_d, 5) and _finite(yaw_d[:3]) and _finite_rows(q_d, 3)):
        return BAD_TARGET
    g = model.gravity
    R, p, w = C[:3, :3].copy(), C[:3, 3].copy(), V[:3].copy()
    p_dot = V[3:].copy()
    _cross_acc(1.0, w, p, p_dot)
    zB = R[:, 2].copy()
    wz = np.zeros(3)
    _cross_acc(1.0, w, zB, wz)
    for j in range(n):                                   # joints: q̈ = q̈_d − a_q (e, ė)
        e_q[0, j], e_q[1, j] = q0[j] - q_d[0, j], q1[j] - q_d[1, j]
        qj[0, j], qj[1, j] = q0[j], q1[j]
        qj[2, j] = q_d[2, j] - a_q[0] * e_q[0, j] - a_q[1] * e_q[1, j]
    cB = np.empty((3, 3))
    com_in_base(model, ws, qj, 1, cB)                    # c_B^(0..2), SPEC §17.3
    Rd = np.zeros((3, 3))                                # Ṙ = ω̂ R
    for j in range(3):
        _cross_acc(1.0, w, R[:, j], Rd[:, j])
    xG = np.empty((4, 3))                                # SPEC §17.6
    xG[0] = p + _mv(R, cB[0])
    xG[1] = p_dot + _mv(Rd, cB[0]) + _mv(R, cB[1])
    xG[2] = f * zB / m + g
    xG[3] = (fd * zB + f * wz) / m
    for k in range(4):
        e[k] = xG[k] - com_d[k]
    b = m * com_d[4]                       # b = m x_G^(4) − 2 ḟ ω × z_B − f ω × (ω × z_B)
    for k in range(4):
        b -= m * a_x[k] * e[k]
    b -= 2.0 * fd * wz
    _cross_acc(-f, w, wz, b)
    fdd = _dot3(zB, b)
    h = (b - fdd * zB) / f                               # ω̇ × z_B
    dw_b = np.array([-_dot3(h, R[:, 1]), _dot3(h, R[:, 0]), 0.0])
    Rdd = np.empty((3, 3))
    _second_rotation(R, Rd, w, dw_b, Rdd)                # ψ̈ is affine in ω̇_B,z:
    psi, psi_d, psi_dd0 = _yaw_jets(R, Rd, Rdd)          # at 0 and at 1
    dw_b[2] = 1.0
    _second_rotation(R, Rd, w, dw_b, Rdd)
    psi_dd1 = _yaw_jets(R, Rd, Rdd)[2]
    d = psi - yaw_d[0]
    e_psi[0], e_psi[1] = np.arctan2(np.sin(d), np.cos(d)), psi_d - yaw_d[1]   # wrapped
    v_psi = yaw_d[2] - a_psi[0] * e_psi[0] - a_psi[1] * e_psi[1]
    dw_b[2] = (v_psi - psi_dd0) / (psi_dd1 - psi_dd0)
    dw = _second_rotation(R, Rd, w, dw_b, Rdd)
    p_dd = xG[2] - (_mv(Rdd, cB[0]) + 2.0 * _mv(Rd, cB[1]) + _mv(R, cB[2]))   # x_G = p + R c_B
    Vj[0] = V
    Vj[1, :3] = dw
    Vj[1, 3:] = p_dd
    _cross_acc(-1.0, dw, p, Vj[1, 3:])
    _cross_acc(-1.0, w, p_dot, Vj[1, 3:])
    status = inverse_dynamics_kernel(model, ws, C, False, Vj, qj, W_app, 0)
    if status != OK:
        return status
    W = ws.base_wrench[0]
    m_p = W[:3].copy()                                   # M^B = Rᵀ (m_O − p × F)
    _cross_acc(-1.0, p, W[3:], m_p)
    u[0] = fdd
    u[1:4] = _mv(R.T, m_p)
    u[4:] = ws.tau[0]
    return OK


_STEP = Kernel(_step_kernel)


def _target_jet(x, name, rows, tail):
    a = as_array(x, name)
    if a.ndim != 1 + len(tail) or a.shape[1:] != tuple(tail) or a.shape[0] < rows:
        shape = ", ".join([f"≥{rows}"] + [str(s) for s in tail])
        raise ValueError(f"{name}: expected a jet of shape ({shape}) (row k = k-th time "
                         f"derivative), got {a.shape}")
    return a


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
        if not self.mass > 0.0:
            raise ValueError("model: its bodies have no mass, so there is no centre of mass")
        self._f_min = THRUST_MIN_RATIO * self.mass * float(np.linalg.norm(model.gravity))
        n = model.n_joints
        self.n_extra, self.n_input = 2, 4 + n
        self._workspace = Workspace(model, 0)

    def _state_arrays(self, state):
        """``(C₀, V₀, (f, ḟ), q, q̇)`` of ``state``: the arrays themselves when
        they are plain arrays of the right shapes (the kernel checks their
        values), else checked copies."""
        n = self.model.n_joints
        C, V, x, q0, q1 = state.base_pose, state.base_twist, state.extra, state.q, state.qd
        if (plain(C, 2) and plain(V, 1) and plain(x, 1) and plain(q0, 1) and plain(q1, 1)
                and C.shape == (4, 4) and V.shape[0] == 6 and x.shape[0] == 2
                and q0.shape[0] == n and q1.shape[0] == n):
            return C, V, x, q0, q1
        return self._checked_state(state)

    def _checked_state(self, state):
        n = self.model.n_joints
        return (check_pose(state.base_pose, "state.base_pose"),
                as_array(state.base_twist, "state.base_twist", shape=(6,)),
                as_array(state.extra, "state.extra", shape=(2,)),
                as_array(state.q, "state.q", shape=(n,)),
                as_array(state.qd, "state.qd", shape=(n,)))

    def _target_arrays(self, t):
        """The target's jets at ``t``, as :meth:`_state_arrays` takes the state's."""
        n = self.model.n_joints
        com, yaw, q = self.target(t)
        if (plain(com, 2) and plain(yaw, 1) and plain(q, 2) and com.shape[0] >= 5
                and com.shape[1] == 3 and yaw.shape[0] >= 3 and q.shape[0] >= 3
                and q.shape[1] == n):
            return com, yaw, q
        return self._checked_target(com, yaw, q)

    def _checked_target(self, com, yaw, q):
        n = self.model.n_joints
        return (_target_jet(com, "target: com", 5, (3,)), _target_jet(yaw, "target: yaw", 3, ()),
                _target_jet(q, "target: q", 3, (n,)))

    def step(self, t, state):
        """The input ``(f̈, M^B, τ)`` at ``state`` and the jets behind it."""
        model = self.model
        n = model.n_joints
        C, V, x, q0, q1 = self._state_arrays(state)
        com_d, yaw_d, q_d = self._target_arrays(t)
        a_x, a_psi, a_q = self.gains
        u, e, e_psi = np.empty(4 + n), np.empty((4, 3)), np.empty(2)
        e_q, Vj, qj = np.empty((2, n)), np.empty((2, 6)), np.empty((3, n))
        status, _ = self._workspace._serve(_STEP, model, C, V, x, q0, q1, com_d, yaw_d, q_d,
                                           a_x, a_psi, a_q, self.mass, self._f_min,
                                           _NO_APPLIED, u, e, e_psi, e_q, Vj, qj)
        if status != OK:
            self._refuse(status, t, state, (com_d, yaw_d, q_d))
        return FlatTrackingStep(u, e, e_psi, e_q, Vj[1], qj[2])

    def _refuse(self, status, t, state, target):
        """The error behind a step's status (a bad argument, named, or the thrust)."""
        if status == BAD_STATE:
            self._checked_state(state)
        elif status == LOW_THRUST:
            f = float(state.extra[0])
            raise ValueError(f"state.extra: thrust f = {f:.3g} N at t = {t:.9g}, near or below "
                             f"free fall, where the law's decoupling matrix is singular")
        elif status == BAD_TARGET:
            self._checked_target(*target)
        if status in (BAD_STATE, BAD_TARGET):
            raise AssertionError(f"step kernel status {status} but every argument passed its "
                                 f"check")
        raise_for(status, self.model, lambda: None)

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
