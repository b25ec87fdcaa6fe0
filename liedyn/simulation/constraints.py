"""Held contacts and loops in a simulation (SPEC §10.1): the constrained
stage, the anchors, the projection after an accepted step and the
projection of a state (:func:`liedyn.project_state`, in :mod:`.driver`).

With ``constraints`` every stage of the integrator evaluates the constrained
forward dynamics of order 0 (SPEC §13.2) in place of §5, and the run keeps
the drift of ``J ν`` and of the position error ``φ`` in check by one of

``"projection"`` (the default)
    after every accepted step the state is moved back onto ``φ = 0`` by a
    Gauss–Newton step ``δν = −M⁻¹Jᵀ Λ⁺ φ`` (the pose by ``exp([δV₀])``;
    none at round-off, more when the first started far off), then its
    velocity onto ``J ν = 0`` by ``ν ← ν − M⁻¹Jᵀ Λ⁺ J ν``,
    ``Λ⁺ = (J M⁻¹ Jᵀ)⁺``: both orthogonal in the kinetic-energy metric,
    which does not depend on where the world origin is or on the units of
    the base twist, and whose velocity step is the impulse an ideal
    inelastic constraint would apply (it never adds kinetic energy). The
    projection follows the step, so RK4's order is kept.
``"baumgarte"``
    ``(J ν)˙ + 2α J ν + β² φ = 0`` at every stage (critically damped) with
    ``α = β = min(BAUMGARTE_MAX, BAUMGARTE_STEP / dt)``: ``β dt ≤ 0.01``
    keeps the stabilising dynamics resolved by the step (with ``β dt`` fixed
    the residuals fall only as ``O(dt (β dt)³)``, measured), and the cap
    (a 0.1 s time constant) keeps the equations the same as ``dt`` shrinks,
    so that RK4's order holds.
``(alpha, beta)``
    Baumgarte with the given rates (1/s).
``None``
    none: ``d/dt (J ν) = 0`` only, the residuals drift.

The handle ``con`` (compiled kernels; every pose relative to the step
origin ``o`` of the integrator, SPEC §10):

==========  =============  ================================================
``cd``      ConstraintData  the anchored set, world anchors relative to ``o``
``anchor``  (nc, 3)        world contacts' anchor points in the world
``lam``     (5, 1, m)      ``λ`` of each stage (reported form, SPEC §13.1)
``info``    (5, 3)         each stage's rank, worst residual and its row
``jv, phi`` (5, m)         ``J ν`` and ``φ`` at each stage state
``Pa, Pb``  (2, nc, 3)     the constraints' points and their velocities
``count``   (2,)           Gauss–Newton and velocity steps taken
``err``     (2,)           ``|φ|``, ``|J ν|`` before their last corrections
==========  =============  ================================================
"""

import numpy as np

from .._checks import NOT_FINITE, OK, counted, status_message
from ..multibody._data import _plain_handle
from .._jit import JIT, Kernel, njit
from ..algorithm.articulated import articulated_factor, cholesky6_solve, configuration
from ..contact.constraints import KIND_6D, KIND_STOP, WORLD, ConstraintData, check_constraints
from ..contact.forward import (INCONSISTENT, RANK_RTOL, _force, constrained_forward_kernel,
                               constrained_paths, constraint_error_kernel, constraint_rate,
                               contact_points, contact_space_inverse, inconsistent_message,
                               point_jets, row_name)
from ..algorithm.frames import rest_kinematics
from ..spatial.se3 import _exp_se3_into, _shift_twist

__all__ = []

# Gauss–Newton (m, rad; L the robot's extent in m, at least 1, and the
# round-off of the anchors' coordinates added to both): no step once
# |φ| ≤ TOL_ROUND · L, round-off; none after a step that started from
# |φ| ≤ TOL_POS · L, which left O(|φ|²). After an integration step one
# iteration is the rule.
TOL_POS, TOL_ROUND = 1e-12, 1e-14
# Gauss–Newton iterations after a step, and in project_state, which may start
# far from φ = 0.
STEP_ITER, STATE_ITER = 4, 50
# The default Baumgarte rates: α = β = min(BAUMGARTE_MAX, BAUMGARTE_STEP / dt) (1/s,
# SPEC §10.1).
BAUMGARTE_STEP, BAUMGARTE_MAX = 0.01, 10.0
# An initial state whose residuals exceed this is refused (m, rad, m/s, rad/s).
TOL_INITIAL = 1e-9

NOT_CONVERGED = -40        # STEP_ITER (STATE_ITER) Gauss–Newton steps did not reach TOL_POS

_CON_FIELDS = ("cd", "anchor", "lam", "info", "jv", "phi", "Pa", "Pb", "alpha", "beta",
               "rank_rtol", "project", "tol_pos", "tol_round", "max_iter", "C", "V1", "count",
               "err")

if JIT:
    from numba.experimental import structref as _structref

    from ..multibody._data import HandleType

    @_structref.register
    class _ConDataType(HandleType):
        pass

    class _ConData(_structref.StructRefProxy):
        """Compiled handle of a run's held constraints."""

    _structref.define_proxy(_ConData, _ConDataType, list(_CON_FIELDS))
else:  # pragma: no cover - exercised with NUMBA_DISABLE_JIT=1
    _ConData = _plain_handle("_ConData", _CON_FIELDS)


@njit
def _con_data(cd, anchor, lam, info, jv, phi, Pa, Pb, alpha, beta, rank_rtol, project, tol_pos,
              tol_round, max_iter, C, V1, count, err):
    return _ConData(cd, anchor, lam, info, jv, phi, Pa, Pb, alpha, beta, rank_rtol, project,
                    tol_pos, tol_round, max_iter, C, V1, count, err)


# ---------------------------------------------------------------- kernels --

@njit
def residuals(cd, ws, Pa, Pb, jv, phi):
    """``J ν`` and ``φ`` (SPEC §13.1) at the configuration and twists in the
    workspace."""
    contact_points(cd, ws, Pa, Pb)
    point_jets(cd, ws, Pa, Pb, 1)
    constraint_rate(cd, ws.V, Pa, Pb, 0, ws.binom, jv)
    constraint_error_kernel(cd, ws, Pa, phi)


@njit
def constrained_stage(model, ws, sim, con, i, Wa):
    """Stage ``i``: constrained forward dynamics of order 0 (SPEC §13.2) at the
    stage state, outputs where :func:`forward_dynamics_kernel` leaves them,
    ``λ``, ``J ν`` and ``φ`` into row ``i`` of the handle. Returns a status."""
    status = constrained_forward_kernel(model, ws, con.cd, sim.C, sim.about_base, sim.V1,
                                        sim.qq, sim.tau, sim.Wb, Wa, 0, con.alpha, con.beta,
                                        con.rank_rtol, con.lam[i], con.info[i])
    if status == OK:
        residuals(con.cd, ws, con.Pa, con.Pb, con.jv[i], con.phi[i])
    return status


@njit
def shift_anchors(con, o):
    """World anchors relative to the step origin ``o``."""
    cd = con.cd
    for c in range(cd.kind.shape[0]):
        if cd.body_b[c] == WORLD:
            for k in range(3):
                cd.offset_b[c, k, 3] = con.anchor[c, k] - o[k]


@njit
def _configure(model, ws, sim, con):
    """The committed state ``(R, x_n)`` into the workspace, pose relative to
    its own origin, and the points of the constraints."""
    C, V1, xn, q = con.C, con.V1, sim.xn, ws.q
    n = q.shape[1]
    for r in range(3):
        for c in range(3):
            C[r, c] = sim.R[r, c]
        C[r, 3] = 0.0
        C[3, r] = 0.0
    C[3, 3] = 1.0
    for k in range(6):
        V1[0, k] = xn[k]
    q[:] = 0.0
    for j in range(n):
        q[0, j] = xn[6 + j]
        q[1, j] = xn[6 + n + j]
    configuration(model, ws, C, sim.about_base, V1, q, 0)
    contact_points(con.cd, ws, con.Pa, con.Pb)


@njit
def _impulse_response(model, ws, cd, y, Pa, Pb, dnu):
    """``dnu = M⁻¹ Jᵀ y`` (nv,) at the configured state: the linear part of one
    articulated-body step (SPEC §5) driven by the wrenches of the constraint
    forces ``y`` (reported form, SPEC §13.1) on their bodies, about ``o``."""
    parent, S, U, D = model.body_parent, ws.S, ws.U, ws.D
    N, n = parent.shape[0], ws.q.shape[1]
    nb = 6 if model.floating_base else 0
    WA = np.zeros((N, 6))
    qt = np.zeros(N)
    u = np.zeros(N)                                       # joint forces of the stops
    dV = np.zeros((N, 6))
    for c in range(cd.kind.shape[0]):                     # the bias pass's − W_app
        a, b, kind, r0 = cd.body_a[c], cd.body_b[c], cd.kind[c], cd.row[c]
        if kind == KIND_STOP:                             # SPEC §13.2: s λ on joint j
            u[a] += cd.sign[c] * y[r0]
            continue
        f0, f1, f2 = _force(cd, c, y)
        for side in range(2):
            j = a if side == 0 else b
            if j < 0:
                continue
            P = Pa if side == 0 or kind == KIND_6D else Pb
            x, y_, z = P[0, c, 0], P[0, c, 1], P[0, c, 2]
            m0, m1, m2 = y_ * f2 - z * f1, z * f0 - x * f2, x * f1 - y_ * f0
            if kind == KIND_6D:
                m0, m1, m2 = m0 + y[r0], m1 + y[r0 + 1], m2 + y[r0 + 2]
            sg = -1.0 if side == 0 else 1.0
            WA[j, 0] += sg * m0
            WA[j, 1] += sg * m1
            WA[j, 2] += sg * m2
            WA[j, 3] += sg * f0
            WA[j, 4] += sg * f1
            WA[j, 5] += sg * f2
    for j in range(N - 1, 0, -1):                          # leaves first
        s = 0.0
        for t in range(6):
            s += S[0, j, t] * WA[j, t]
        qt[j] = (u[j] - s) / D[j]                          # q̃_j
        p = parent[j]
        for t in range(6):
            WA[p, t] += WA[j, t] + U[j, t] * qt[j]
    if nb:
        for t in range(6):
            dV[0, t] = -WA[0, t]
        cholesky6_solve(ws.L, dV[0])                       # ΔV₀
        for t in range(6):
            dnu[t] = dV[0, t]
    for j in range(1, N):                                  # parents first
        p = parent[j]
        s = 0.0
        for t in range(6):
            s += U[j, t] * dV[p, t]
        dq = qt[j] - s / D[j]
        dnu[nb + j - 1] = dq
        for t in range(6):
            dV[j, t] = dV[p, t] + S[0, j, t] * dq


@njit
def _correction(model, ws, con, r, dnu):
    """``dnu = −M⁻¹Jᵀ Λ⁺ r`` (nv,) at the configured state (SPEC §10.1), ``Λ⁻¹ =
    J M⁻¹ Jᵀ`` from the unit responses of SPEC §13.2; returns a status."""
    fixed = not model.floating_base
    status = articulated_factor(model, ws, None, fixed)
    if status != OK:
        return status
    cd, Pa, Pb = con.cd, con.Pa, con.Pb
    m, N = r.shape[0], model.body_parent.shape[0]
    need = np.zeros(N, np.bool_)
    constrained_paths(model, cd, need)
    RV = np.empty((m, N, 6))
    GG = np.zeros((4, m, m))
    Gp = GG[1]
    col = np.empty(m)
    contact_space_inverse(model, ws, cd, Pa, Pb, fixed, need, RV, np.empty((6, N, 6)),
                          np.empty((6, N)), GG, col, con.rank_rtol)
    for i in range(m):
        acc = 0.0
        for l in range(m):
            acc -= Gp[i, l] * r[l]
        col[i] = acc                                       # y = −Λ⁺ r
    _impulse_response(model, ws, cd, col, Pa, Pb, dnu)
    return OK


@njit
def _max_abs(a):
    out = 0.0
    for v in a:
        if not abs(v) <= out:                      # NaN wins
            out = abs(v)
    return out


@njit
def project(model, ws, sim, con, max_iter):
    """The committed state onto ``φ = 0`` by Gauss–Newton steps until
    ``|φ| ≤ tol_round`` or up to and including the first that starts from
    ``|φ| ≤ tol_pos`` (which leaves ``O(tol_pos²)``); at most ``max_iter``),
    and then onto ``J ν = 0``, both in the M-metric (SPEC §10.1). Moves the base
    origin ``o`` and the anchors with the pose. Returns a status;
    ``con.err`` gets ``|φ|`` and ``|J ν|`` before their last corrections."""
    xn, o = sim.xn, sim.o
    n = ws.q.shape[1]
    nb = 6 if model.floating_base else 0
    phi = con.phi[0]
    jv = con.jv[0]
    dnu = np.empty(nb + n)
    E = np.empty((4, 4))
    R = np.empty((3, 3))
    t = np.empty(3)
    it = 0
    last = np.inf                                  # |φ| the last step started from
    while True:
        _configure(model, ws, sim, con)
        constraint_error_kernel(con.cd, ws, con.Pa, phi)
        err = _max_abs(phi)
        if not np.isfinite(err):
            return NOT_FINITE
        if err <= con.tol_round or last <= con.tol_pos:
            break
        con.err[0] = last = err
        if it == max_iter:
            return NOT_CONVERGED
        status = _correction(model, ws, con, phi, dnu)
        if status != OK:
            return status
        if nb:                                     # C ← exp([δV₀]) C, about o
            _exp_se3_into(dnu[:6], 1.0, E)
            for r in range(3):
                for c in range(3):
                    R[r, c] = E[r, 0] * sim.R[0, c] + E[r, 1] * sim.R[1, c] + E[r, 2] * sim.R[2, c]
                t[r] = E[r, 3]
            sim.R[:] = R
            _shift_twist(xn[:6], t, xn[:6])        # V₀ about the new base origin
            for r in range(3):
                o[r] += t[r]
            shift_anchors(con, o)
        for j in range(n):
            xn[6 + j] += dnu[nb + j]
        it += 1
        con.count[0] += 1
    point_jets(con.cd, ws, con.Pa, con.Pb, 1)
    constraint_rate(con.cd, ws.V, con.Pa, con.Pb, 0, ws.binom, jv)
    con.err[1] = _max_abs(jv)
    if not np.isfinite(con.err[1]):
        return NOT_FINITE
    if con.err[1] == 0.0:
        return OK
    status = _correction(model, ws, con, jv, dnu)
    if status != OK:
        return status
    for k in range(nb):
        xn[k] += dnu[k]
    for j in range(n):
        xn[6 + n + j] += dnu[nb + j]
    con.count[1] += 1
    return OK


@njit
def after_step(model, ws, sim, con):
    """After a committed step: the anchors follow the new step origin, and
    with projection the state is projected. Returns a status."""
    shift_anchors(con, sim.o)
    if not con.project:
        return OK
    return project(model, ws, sim, con, con.max_iter)


@njit
def state_residuals(model, ws, sim, con):
    """``J ν`` and ``φ`` of the committed state into row 0."""
    _configure(model, ws, sim, con)
    point_jets(con.cd, ws, con.Pa, con.Pb, 1)
    constraint_rate(con.cd, ws.V, con.Pa, con.Pb, 0, ws.binom, con.jv[0])
    constraint_error_kernel(con.cd, ws, con.Pa, con.phi[0])


_CON = Kernel(_con_data)
_PROJECT = Kernel(project)
_SHIFT_ANCHORS = Kernel(shift_anchors)
_STATE_RESIDUALS = Kernel(state_residuals)


# ------------------------------------------------------------ arguments --

def stabilization_arg(stabilization, dt):
    """``(project, alpha, beta)`` of a ``stabilization`` argument."""
    if stabilization is None:
        return False, 0.0, 0.0
    if isinstance(stabilization, str):
        if stabilization == "projection":
            return True, 0.0, 0.0
        if stabilization == "baumgarte":
            rate = min(BAUMGARTE_MAX, BAUMGARTE_STEP / dt)
            return False, rate, rate
        raise ValueError(f"stabilization: expected 'projection', 'baumgarte', (alpha, beta) or "
                         f"None, got {stabilization!r}")
    try:
        a, b = stabilization
    except (TypeError, ValueError):
        raise TypeError(f"stabilization: expected 'projection', 'baumgarte', (alpha, beta) or "
                        f"None, got {type(stabilization).__name__}") from None
    out = []
    for name, x in (("alpha", a), ("beta", b)):
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer,
                                                                 np.floating)):
            raise TypeError(f"stabilization: {name} must be a real number (1/s), got "
                            f"{type(x).__name__}")
        x = float(x)
        if not (np.isfinite(x) and x >= 0.0):
            raise ValueError(f"stabilization: {name} must be finite and ≥ 0 (1/s), got {x}")
        out.append(x)
    return False, out[0], out[1]


class Held:
    """The held constraints of one run: the anchored set, its compiled handle,
    the initial check and the messages.

    ``C0`` (4, 4) the initial base pose in the world, ``q0`` (n,) the joints.
    """

    def __init__(self, model, constraints, stabilization, dt, C0, q0):
        cs = check_constraints(model, constraints)
        self.project, alpha, beta = stabilization_arg(stabilization, dt)
        self.stabilization = stabilization
        self.constraints = cs = cs.anchored(C0, q0)
        self.m = m = cs.n_rows
        nc = len(cs)
        cd = ConstraintData(*(np.array(a) for a in cs.data))      # writable: anchors move
        world = cd.body_b == WORLD
        anchor = np.ascontiguousarray(cd.offset_b[:, :3, 3])
        scale = float(np.max(np.abs(anchor[world]), initial=0.0))
        poses = rest_kinematics(model, C0, q0).body_pose
        extent = max(1.0, float(np.max(np.linalg.norm(poses[:, :3, 3] - C0[:3, 3], axis=1))))
        far = 4.0 * np.finfo(float).eps * scale           # 2 ulp: the anchors' round-off
        self.arrays = {"lam": np.zeros((5, 1, m)), "info": np.zeros((5, 3)),
                       "jv": np.zeros((5, m)), "phi": np.zeros((5, m)),
                       "count": np.zeros(2, np.int64), "err": np.zeros(2)}
        a = self.arrays
        self.data = _CON.call(cd, anchor, a["lam"], a["info"], a["jv"], a["phi"],
                              np.zeros((2, nc, 3)), np.zeros((2, nc, 3)), alpha, beta,
                              RANK_RTOL, self.project, TOL_POS * extent + far,
                              TOL_ROUND * extent + far, STEP_ITER, np.eye(4), np.zeros((1, 6)),
                              a["count"], a["err"])

    def start(self, model, ws, sim, o):
        """Anchors relative to the initial step origin ``o``; the initial
        residuals into row 0."""
        _SHIFT_ANCHORS.call(self.data, o)
        _STATE_RESIDUALS.call(model._data, ws._data, sim, self.data)

    def check_initial(self):
        """Refuse an initial state off the constraints (row 0 as left by
        :meth:`start`)."""
        a = self.arrays
        for what, r, unit in (("position error φ", a["phi"][0], "m or rad"),
                              ("velocity residual J ν", a["jv"][0], "m/s or rad/s")):
            k = int(np.argmax(np.where(np.isfinite(r), np.abs(r), np.inf)))
            if not abs(r[k]) <= TOL_INITIAL:
                raise ValueError(f"state0: off the constraints, {what} of "
                                 f"{row_name(self.constraints, k)!r} is {r[k]:.3g} {unit} "
                                 f"(the bound is {TOL_INITIAL:g}); start from "
                                 f"liedyn.project_state(model, constraints, state0)")

    def reuse_last_stage(self):
        """The FSAL stage is the next step's first: its rows become row 0."""
        for k in ("lam", "info", "jv", "phi"):
            self.arrays[k][0] = self.arrays[k][4]

    def stage_failure(self, status, i):
        """The detail of a stage ``i`` that failed with ``status`` for a
        reason of the constraints, or None."""
        if status == INCONSISTENT:
            return inconsistent_message(self.constraints, self.arrays["info"][i])
        return None

    def projection_failure(self, status, model):
        """The detail of a failed projection."""
        e = self.arrays["err"]
        if status == NOT_CONVERGED:
            return (f"the projection onto φ = 0 did not converge in "
                    f"{counted(STEP_ITER, 'Gauss–Newton step')} (|φ| = {e[0]:.3g} left): "
                    f"constraints that cannot all hold, or a singular configuration")
        return f"the projection after the step failed: {status_message(status, model)}"


def trajectory_columns(held, rec, T):
    """The :class:`Trajectory` fields of held constraints (``None`` without)."""
    if held is None:
        return {"constraints": None, "force": None, "velocity_residual": None,
                "position_residual": None, "projections": (0, 0)}
    c = held.arrays["count"]
    return {"constraints": held.constraints, "force": rec["force"][:T],
            "velocity_residual": rec["velocity_residual"][:T],
            "position_residual": rec["position_residual"][:T],
            "projections": (int(c[0]), int(c[1]))}
