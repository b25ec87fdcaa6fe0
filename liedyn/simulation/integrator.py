"""The integrator of :func:`liedyn.simulate`: RKMK4 stages and steps on SE(3) × Rⁿ
(SPEC §10), in compiled kernels.

The state is the base pose ``C₀ ∈ SE(3)``, the base twist ``V₀``, the joint
positions and velocities ``q, q̇`` and optional extra states ``z`` (actuator
states, filters, …). It obeys

    Ċ₀ = [V₀] C₀,   V̇₀, q̈ = forward dynamics (SPEC §5, order 0),   ż = extra_rate,

and is integrated by the Runge–Kutta–Munthe-Kaas method built on the classical
fourth-order Runge–Kutta tableau: the pose is advanced by the group
exponential, ``C₀ ← exp([Ω]) C₀``, so it stays in SE(3) to round-off without
any re-orthonormalization; everything else lives in Rⁿ.

Glossary (SPEC §10)
-------------------
============  ==============  ===================================================
``h``         scalar          the step
``A``, ``c``  (5, 5), (5,)    the tableau: RK4 and its FSAL stage ``A[4] = b``
``R``, ``o``  (3, 3), (3,)    base rotation and origin at the step start
``x``         (6+2n+m,)       the vector state ``(V₀, q, q̇, z)``, ``V₀`` about ``o``
``Ω_i``       (6,)            stage increment on the group, ``h Σ_j A[i,j] K_j``
``K``         (5, 6)          ``K_i = dexp_inv(Ω_i) V₀,i``, pose rates in the algebra
``F``         (5, 6+2n+m)     ``F_i = (V̇₀, q̇, q̈, ż)`` at stage ``i``
``C``         (4, 4)          stage pose ``exp(Ω_i) R`` relative to ``o``
============  ==============  ===================================================

Computation point. Within a step every pose, twist and wrench is taken
relative to ``o``, the base origin at the step start (world axes): the
forward-dynamics kernel sees a base near the origin whatever the robot's
distance from the world origin (SPEC §1), and ``V₀`` is stored between steps
as the twist about the current base origin. ``reference`` only sets the point
that the twists and wrenches passed to and from the callbacks and stored in
the :class:`Trajectory` are taken about.
"""

import numpy as np

from .._checks import OK, _all_finite
from ..multibody._data import _plain_handle
from .._jit import JIT, Kernel, njit
from ..algorithm.forward import forward_dynamics_kernel
from .constraints import after_step, constrained_stage
from ..spatial.se3 import (_dexp_inv_into, _exp_se3_into, _shift_twist, _shift_wrench,
                           _unshift_twist, _unshift_wrench)

# The classical fourth-order tableau and its first-same-as-last stage, which
# evaluates the dynamics at the new state: with it, b̂ = (1/6, 1/3, 1/3, 0, 1/6)
# is a third-order solution (the order conditions Σb̂ = 1, Σb̂c = 1/2,
# Σb̂c² = 1/3, Σb̂Ac = 1/6 hold), and y₄ − y₃ = h (K₃ − K₄)/6 estimates the
# local error of the third-order one (SPEC §10).
_A = np.array([[0.0, 0.0, 0.0, 0.0, 0.0],
               [0.5, 0.0, 0.0, 0.0, 0.0],
               [0.0, 0.5, 0.0, 0.0, 0.0],
               [0.0, 0.0, 1.0, 0.0, 0.0],
               [1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0, 0.0]])
_C = np.array([0.0, 0.5, 0.5, 1.0, 1.0])
_E = np.array([0.0, 0.0, 0.0, 1.0 / 6.0, -1.0 / 6.0])          # b − b̂
for _a in (_A, _C, _E):
    _a.setflags(write=False)

# Step-size control of the adaptive option: h_new = h · clip(SAFETY · err^(−1/4),
# FAC_MIN, FAC_MAX); the error estimate is O(h⁴) (third-order solution), hence
# the exponent. After a rejection the step may not grow on the next attempt.
SAFETY, FAC_MIN, FAC_MAX = 0.9, 0.2, 5.0

_EMPTY1 = np.zeros(0)
_EMPTY2 = np.zeros((0, 6))
for _a in (_EMPTY1, _EMPTY2):
    _a.setflags(write=False)


# ---------------------------------------------------------- the handle --

# The integrator's buffers, one handle for the kernels (as liedyn.multibody._data's
# model and workspace handles): ``A`` the tableau; ``R``, ``o``, ``xn`` the
# state at the step start; ``K``, ``F``, ``Om`` the stage rates and increment;
# ``E`` scratch; ``C``, ``x`` the stage state, ``V1`` and ``qq`` views of ``x``
# in the shapes of the forward-dynamics kernel; ``tau``, ``Wb``, ``Wa``,
# ``zdot`` the stage inputs (wrenches about ``o``); ``about_base`` the
# kernel's reference flag, false (the stage pose is relative to ``o``, which
# the kernel takes for the world origin), kept here so that the kernel is
# called with the same (non-literal) argument types as everywhere else. The
# kernel leaves its outputs in the workspace (``ws.base_twist``, ``ws.q``).
_SIM_FIELDS = ("A", "R", "o", "xn", "K", "F", "Om", "E", "C", "x", "V1", "qq", "tau", "Wb",
               "Wa", "zdot", "about_base")

# The trajectory's state columns, filled by the kernels (the last three,
# λ, J ν and φ of held constraints, have no columns without them).
_REC_FIELDS = ("time", "base_pose", "base_twist", "q", "extra", "base_acceleration",
               "joint_acceleration", "force", "velocity_residual", "position_residual")

if JIT:
    from numba.experimental import structref as _structref

    from ..multibody._data import HandleType

    @_structref.register
    class _SimDataType(HandleType):
        pass

    @_structref.register
    class _RecDataType(HandleType):
        pass

    class _SimData(_structref.StructRefProxy):
        """Compiled handle of a simulation's buffers."""

    class _RecData(_structref.StructRefProxy):
        """Compiled handle of a trajectory's state columns."""

    _structref.define_proxy(_SimData, _SimDataType, list(_SIM_FIELDS))
    _structref.define_proxy(_RecData, _RecDataType, list(_REC_FIELDS))
else:  # pragma: no cover - exercised with NUMBA_DISABLE_JIT=1
    _SimData = _plain_handle("_SimData", _SIM_FIELDS)
    _RecData = _plain_handle("_RecData", _REC_FIELDS)


@njit
def _sim_data(A, R, o, xn, K, F, Om, E, C, x, V1, qq, tau, Wb, Wa, zdot, about_base):
    return _SimData(A, R, o, xn, K, F, Om, E, C, x, V1, qq, tau, Wb, Wa, zdot, about_base)


@njit
def _rec_data(time, base_pose, base_twist, q, extra, base_acceleration, joint_acceleration, force,
              velocity_residual, position_residual):
    return _RecData(time, base_pose, base_twist, q, extra, base_acceleration, joint_acceleration,
                    force, velocity_residual, position_residual)


# ---------------------------------------------------------------- kernels --

@njit
def _point_into(sim, i, h):
    """Stage ``i`` of a step (SPEC §10): ``Ω_i = h Σ_j A[i,j] K_j``,
    ``C = exp(Ω_i) R``, ``x = x_n + h Σ_j A[i,j] F_j``."""
    A, K, F, Om, C, x, R, E = sim.A, sim.K, sim.F, sim.Om, sim.C, sim.x, sim.R, sim.E
    nx = x.shape[0]
    for k in range(6):
        Om[k] = 0.0
    for k in range(nx):
        x[k] = sim.xn[k]
    for j in range(i):
        a = h * A[i, j]
        if a != 0.0:
            for k in range(6):
                Om[k] += a * K[j, k]
            for k in range(nx):
                x[k] += a * F[j, k]
    _exp_se3_into(Om, 1.0, E)
    for r in range(3):
        for c in range(3):
            C[r, c] = E[r, 0] * R[0, c] + E[r, 1] * R[1, c] + E[r, 2] * R[2, c]
        C[r, 3] = E[r, 3]
        C[3, r] = 0.0
    C[3, 3] = 1.0


@njit
def _point(sim, i, h, base_ref, want):
    """:func:`_point_into`; with ``want``, also the stage state for the
    callbacks as one fresh array ``(pose (16), V₀ (6), q, q̇, z)``, the pose
    in the world and ``V₀`` about the reference point (else an empty array)."""
    _point_into(sim, i, h)
    C, x, o = sim.C, sim.x, sim.o
    nx = x.shape[0]
    if not want:
        return np.empty(0)
    s = np.empty(16 + nx)
    for r in range(4):
        for c in range(4):
            s[4 * r + c] = C[r, c]
    for r in range(3):
        s[4 * r + 3] += o[r]
    if base_ref:                                   # about p = o + C[:3, 3]
        _shift_twist(x[:6], C[:3, 3], s[16:22])
    else:                                          # about the world origin
        _unshift_twist(x[:6], o, s[16:22])
    for k in range(6, nx):
        s[16 + k] = x[k]
    return s


@njit
def _load(sim, tau_u, W_u, Wa_u, z_u, base_ref):
    """The stage's inputs (about the reference point) into the kernel
    buffers, wrenches taken about ``o`` (SPEC §1). Returns 0, or the first
    non-finite one: 1 ``tau``, 2 ``base_wrench``, 3 ``applied``, 4 ``extra_rate``."""
    o, pt = sim.o, sim.C[:3, 3]
    if tau_u.shape[0] == 0:
        sim.tau[0, :] = 0.0
    else:
        if not _all_finite(tau_u.reshape(-1)):
            return 1
        sim.tau[0, :] = tau_u
    if sim.Wb.shape[0] == 1:
        if W_u.shape[0] == 0:
            sim.Wb[0, :] = 0.0
        else:
            if not _all_finite(W_u.reshape(-1)):
                return 2
            if base_ref:                           # about p = o + pt
                _unshift_wrench(W_u, pt, sim.Wb[0])
            else:                                  # about the world origin
                _shift_wrench(W_u, o, sim.Wb[0])
    if Wa_u.shape[0] != 0:
        if not _all_finite(Wa_u.reshape(-1)):
            return 3
        for j in range(Wa_u.shape[0]):
            if base_ref:
                _unshift_wrench(Wa_u[j], pt, sim.Wa[0, j])
            else:
                _shift_wrench(Wa_u[j], o, sim.Wa[0, j])
    if z_u.shape[0] != 0:
        if not _all_finite(z_u.reshape(-1)):
            return 4
        sim.zdot[:] = z_u
    return 0


@njit
def _rates(ws, sim, i, n):
    """``K_i = dexp_inv(Ω_i) V₀,i`` and ``F_i = (V̇₀, q̇, q̈, ż)`` (SPEC §10)."""
    x, F, Vout, qout = sim.x, sim.F, ws.base_twist, ws.q
    _dexp_inv_into(sim.Om, x[:6], sim.K[i])
    for k in range(6):
        F[i, k] = Vout[1, k]
    for j in range(n):
        F[i, 6 + j] = x[6 + n + j]
        F[i, 6 + n + j] = qout[2, j]
    for k in range(sim.zdot.shape[0]):
        F[i, 6 + 2 * n + k] = sim.zdot[k]


@njit
def _evaluate(model, ws, sim, con, i, tau_u, W_u, Wa_u, z_u, base_ref, n):
    """Inputs, forward dynamics of order 0 (SPEC §5; with held constraints
    ``con``, SPEC §13.2) and rates of stage ``i`` at the stage state. Returns
    ``(0, 0)``, ``(1, input)`` for a non-finite input (see :func:`_load`) or
    ``(2, status)`` for a failing kernel."""
    bad = _load(sim, tau_u, W_u, Wa_u, z_u, base_ref)
    if bad != 0:
        return 1, bad
    Wa = sim.Wa if Wa_u.shape[0] != 0 else sim.Wa[:0]
    if con is None:
        status = forward_dynamics_kernel(model, ws, sim.C, sim.about_base, sim.V1, sim.qq,
                                         sim.tau, sim.Wb, Wa, ws.order)
    else:
        status = constrained_stage(model, ws, sim, con, i, Wa)
    if status != OK:
        return 2, status
    _rates(ws, sim, i, n)
    return 0, 0


@njit
def _commit(sim, bound):
    """Accept the stage state ``(C, x)`` as the new state: ``R``, ``o`` and
    ``x_n``, with ``V₀`` re-taken about the new base origin ``o + C[:3, 3]``.

    Returns ``(0, −1)``, or ``(1, k)`` / ``(2, k)`` when entry ``k`` of
    ``(p₀ (3), x)`` is not finite / beyond ``bound``; the state is then
    left unchanged."""
    C, x, o = sim.C, sim.x, sim.o
    for k in range(3 + x.shape[0]):
        v = o[k] + C[k, 3] if k < 3 else x[k - 3]
        if not np.isfinite(v):
            return 1, k
        if abs(v) > bound:
            return 2, k
    for r in range(3):
        for c in range(3):
            sim.R[r, c] = C[r, c]
    sim.xn[:] = x
    _shift_twist(x[:6], C[:3, 3], sim.xn[:6])       # V₀ about the new origin
    for r in range(3):
        o[r] += C[r, 3]
    return 0, -1


@njit
def _reuse_last_stage(sim, pt):
    """After :func:`_commit`: the FSAL stage, evaluated at the new state, is
    the next step's first stage, its ``V̇₀`` re-taken about the new origin
    (``pt`` is the step's displacement of the base origin)."""
    F = sim.F
    _shift_twist(F[4, :6], pt, F[0, :6])
    F[0, 6:] = F[4, 6:]
    sim.K[0, :] = sim.xn[:6]


@njit
def _error_norm(sim, h, e, rtol, atol, floating):
    """RMS over the state of ``(y₄ − y₃) / (atol + rtol·|y|)`` (SPEC §10) and
    the entry contributing most: ``0..5`` the pose (scale 1 rad, 1 m), then
    ``6 + k`` entry ``k`` of ``x``."""
    K, F, xn, x = sim.K, sim.F, sim.xn, sim.x
    acc, count, worst, worst_r = 0.0, 0, -1, -1.0
    nx = x.shape[0]
    for k in range(6 + nx):
        if not floating and k < 12:
            continue
        d = 0.0
        if k < 6:
            for i in range(5):
                d += e[i] * K[i, k]
            sc = atol + rtol
        else:
            for i in range(5):
                d += e[i] * F[i, k - 6]
            sc = atol + rtol * max(abs(xn[k - 6]), abs(x[k - 6]))
        r = abs(h * d) / sc
        acc += r * r
        count += 1
        if not r <= worst_r:                       # NaN counts as the worst
            worst, worst_r = k, r
    if count == 0:
        return 0.0, -1
    return np.sqrt(acc / count), worst


@njit
def _record(sim, con, rec, k, t, base_ref, n):
    """Sample ``k``: the state and the first stage's accelerations (and
    ``λ``, ``J ν``, ``φ``), twists about the reference point."""
    R, o, xn, F0 = sim.R, sim.o, sim.xn, sim.F[0]
    rec.time[k] = t
    pose = rec.base_pose[k]
    for r in range(3):
        for c in range(3):
            pose[r, c] = R[r, c]
        pose[r, 3] = o[r]
        pose[3, r] = 0.0
    pose[3, 3] = 1.0
    if base_ref:
        rec.base_twist[k, 0] = xn[:6]
        rec.base_acceleration[k] = F0[:6]
    else:
        _unshift_twist(xn[:6], o, rec.base_twist[k, 0])
        _unshift_twist(F0[:6], o, rec.base_acceleration[k])
    rec.q[k, 0] = xn[6:6 + n]
    rec.q[k, 1] = xn[6 + n:6 + 2 * n]
    rec.extra[k] = xn[6 + 2 * n:]
    rec.joint_acceleration[k] = F0[6 + n:6 + 2 * n]
    if con is not None:
        rec.force[k] = con.lam[0, 0]
        rec.velocity_residual[k] = con.jv[0]
        rec.position_residual[k] = con.phi[0]


@njit
def _fixed_steps(model, ws, sim, con, rec, k0, k1, steps, t0, h, t1, tau_u, W_u, Wa_u, z_u,
                 base_ref, n, bound):
    """Fixed steps ``k0 .. k1−1`` of ``steps`` with constant inputs, stage 0
    of step ``k0`` already evaluated; samples ``k0+1 .. k1−1`` are recorded,
    the last step's stage 0 is left to the caller (a new input may start
    there). Returns ``(0, 0, k1, 0)`` or ``(kind, code, k, i)``: failure of
    kind 1/2 (see :func:`_evaluate`) at stage ``i`` of step ``k``, 3/4 when
    entry ``code`` of the new state is non-finite / beyond ``bound``, or 5
    when the step's projection onto held constraints failed with status
    ``code`` (``i = 4``)."""
    for k in range(k0, k1):
        t = t0 + k * h
        t_new = t1 if k == steps - 1 else t0 + (k + 1) * h
        hk = t_new - t
        for i in range(1, 4):
            _point_into(sim, i, hk)
            kind, code = _evaluate(model, ws, sim, con, i, tau_u, W_u, Wa_u, z_u, base_ref, n)
            if kind != 0:
                return kind, code, k, i
        _point_into(sim, 4, hk)
        kind, code = _commit(sim, bound)
        if kind != 0:
            return kind + 2, code, k, 4
        if con is not None:
            status = after_step(model, ws, sim, con)
            if status != OK:
                return 5, status, k, 4
        if k < k1 - 1:
            _point_into(sim, 0, hk)
            kind, code = _evaluate(model, ws, sim, con, 0, tau_u, W_u, Wa_u, z_u, base_ref, n)
            if kind != 0:
                return kind, code, k + 1, 0
            _record(sim, con, rec, k + 1, t_new, base_ref, n)
    return 0, 0, k1, 0


_SIM = Kernel(_sim_data)
_REC = Kernel(_rec_data)
_POINT = Kernel(_point)
_EVALUATE = Kernel(_evaluate)
# The same kernels for runs with held constraints: ``con`` is a handle there,
# ``None`` above, and a Kernel serves one signature.
_EVALUATE_HELD = Kernel(_evaluate)
_RECORD_HELD = Kernel(_record)
_FIXED_STEPS_HELD = Kernel(_fixed_steps)
_LOAD = Kernel(_load)
_RATES = Kernel(_rates)
_COMMIT = Kernel(_commit)
_REUSE = Kernel(_reuse_last_stage)
_ERROR = Kernel(_error_norm)
_AFTER_STEP = Kernel(after_step)
_RECORD = Kernel(_record)
_FIXED_STEPS = Kernel(_fixed_steps)
