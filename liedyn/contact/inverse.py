"""Constrained inverse dynamics of order r: the joint forces and the contact
forces that produce a motion held by constraints (SPEC §13.3).

Glossary
--------
==========  ==================  ==========================================
``J``       (r+2, m, nv)        constraint Jacobian jets ``J^(0..r+1)``
``A``       (r+1, 6, m)         base block of ``Jᵀ``: the unit contact
                                wrenches about the world origin
``Jq``      (r+1, n, m)         joint rows of ``Jᵀ``
``E``       (r+1, s, u)         the rows that determine the unknowns ``x``
                                (base rows, passive joints) against them
``x``       (r+1, u)            the unknowns: ``λ`` and the efforts of the
                                declared base actuators
``w``       (r+1, s)            what those rows must supply, ``τ̄^ID − τ̄``
==========  ==================  ==========================================

Order k (one matrix for every order, the weighted minimum-norm solution
``min ½ xᵀ R x`` s.t. ``E x = w`` differentiated k times):

    [ R   −E₀ᵀ ] [ x^(k) ]   [ Σ_{a=1}^{k} binom(k, a) E^(a)ᵀ μ^(k−a)       ]
    [ E₀   0   ] [ μ^(k) ] = [ w^(k) − Σ_{a=1}^{k} binom(k, a) E^(a) x^(k−a)  ]

    τ^(k) = τ^ID,(k) − Σ_{a=0}^{k} binom(k, a) J_q^(a)ᵀ λ^(k−a)

One compiled kernel does every order: the inverse dynamics of order r
(:func:`liedyn.algorithm.inverse.inverse_dynamics_kernel`), the point and
Jacobian jets of :mod:`liedyn.contact.rows`, the check that the motion
keeps the constraints, and the split. The KKT matrix is factored once
through its Schur complement ``S = E₀ R⁻¹ E₀ᵀ`` (``x = R⁻¹ (t + E₀ᵀ μ)``,
``S μ = b − E₀ R⁻¹ t`` for the right-hand side ``(t, b)`` of order k), and
each order is one solve with it.
"""

import numpy as np

from .._checks import (OK, about_base, applied_arg, as_array, check_applied_slow, check_jet,
                       check_motion_slow, motion_args, raise_for)
from .._jit import Kernel, njit
from ..algorithm.frames import inverse_adjoint_jet
from ..algorithm.inverse import inverse_dynamics_kernel
from ..multibody.model import check_model_order
from ..multibody.results import _frozen_setattr
from ..multibody.workspace import binomials, workspace_for
from .constraints import KIND_6D, KIND_STOP, check_constraints
from .forward import row_name
from ._min_norm import _least_squares_jets, _min_norm_jets, _on_independent_rows, _row_rank
from .results import _Forces
from .rows import _force, contact_points, jacobian_jets_kernel, point_jets

__all__ = ["constrained_inverse_dynamics", "ConstrainedInverseDynamicsResult"]

_setattr = object.__setattr__

# A motion whose constraint rate (J ν)^(k) exceeds this fraction of the size
# of its terms Σ_a binom(k, a) |J^(a)| |ν^(k−a)|, and CONSISTENCY_ATOL (SI
# units: m/s^(k+1), rad/s^(k+1)), is refused. The absolute floor admits the
# round-off of a robot at rest, whose accelerations are sums of terms of the
# size of gravity that cancel to ~1e-13 and leave nothing to be relative to.
CONSISTENCY_RTOL = 1e-8
CONSISTENCY_ATOL = 1e-10


class ConstrainedInverseDynamicsResult(_Forces):
    """Output of :func:`liedyn.constrained_inverse_dynamics` of order ``r``.

    Attributes
    ----------
    tau : (r+1, n)
        Joint force jets ``τ^(k)`` (zero, to round-off, on passive joints).
    base_wrench : (r+1, 6)
        The base actuators' wrench jet (world frame, about the world origin):
        the given one plus the declared actuators' share; for a fixed base the
        support reaction.
    force : (r+1, m)
        Constraint-force jets ``λ^(k)``, reported form (SPEC §13.1).
    base_effort : (r+1, p)
        Efforts of the declared base actuators (``base_actuation`` columns);
        empty when none.
    residual : (r+1, s)
        ``E x − w`` of the rows the forces had to satisfy (zero unless
        ``least_squares``).
    constraints : ConstraintSet
    """

    __slots__ = ("tau", "base_wrench", "force", "base_effort", "residual", "constraints")
    __setattr__ = _frozen_setattr

    def __init__(self, tau, base_wrench, force, base_effort, residual, constraints):
        # _freeze, spelt out: on every call's path
        for name, v in (("tau", tau), ("base_wrench", base_wrench), ("force", force),
                        ("base_effort", base_effort), ("residual", residual)):
            if isinstance(v, np.ndarray):
                v.setflags(write=False)
            _setattr(self, name, v)
        _setattr(self, "constraints", constraints)

    def __repr__(self):
        return (f"ConstrainedInverseDynamicsResult(tau={self.tau.shape}, "
                f"force={self.force.shape})")


def _joint_list(model, joints, name):
    """Indices (q columns) of the joints named or indexed in ``joints``."""
    if joints is None:
        return np.zeros(0, np.int64)
    if isinstance(joints, (str, int, np.integer)):
        joints = [joints]
    out = []
    for j in joints:
        if isinstance(j, str):
            if j not in model.joint_names:
                raise ValueError(f"{name}: no joint called {j!r}")
            out.append(model.joint_names.index(j))
        elif isinstance(j, (int, np.integer)) and not isinstance(j, bool):
            if not 0 <= j < model.n_joints:
                raise ValueError(f"{name}: joint index {j} out of range [0, {model.n_joints})")
            out.append(int(j))
        else:
            raise TypeError(f"{name}: expected joint names or q column indices, got "
                            f"{type(j).__name__}")
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: a joint is listed twice")
    return np.array(out, np.int64)


def _weight_arg(weight, u):
    """``R`` (u, u), symmetric positive definite."""
    if weight is None:
        return np.eye(u)
    R = as_array(weight, "weight")
    if R.shape == (u,):
        if not np.all(R > 0):
            raise ValueError("weight: the diagonal weights must be > 0")
        return np.diag(R)
    if R.shape != (u, u):
        raise ValueError(f"weight: expected shape ({u},) or ({u}, {u}) (one per force row and "
                         f"base effort), got {R.shape}")
    if not np.allclose(R, R.T, rtol=1e-12, atol=0.0) or np.linalg.eigvalsh(R).min() <= 0:
        raise ValueError("weight: expected a symmetric positive definite matrix")
    return 0.5 * (R + R.T)


def _consistency(cs, J, nu, r):
    """Refuse a motion that leaves the constraints: ``(J ν)^(k)``, ``k = 0..r+1``
    (the NumPy form of :func:`_motion_rates`, for :mod:`liedyn.contact.friction`)."""
    B = binomials(r + 2)
    for k in range(r + 2):
        rate = np.zeros(cs.n_rows)
        size = np.zeros(cs.n_rows)
        for a in range(k + 1):
            t = B[k, a] * J[a] @ nu[k - a]
            rate += t
            size += B[k, a] * np.abs(J[a]) @ np.abs(nu[k - a])
        bad = np.abs(rate) > CONSISTENCY_RTOL * np.maximum(size, 1e-300)
        bad &= np.abs(rate) > CONSISTENCY_ATOL
        if np.any(bad):
            i = int(np.argmax(np.where(bad, np.abs(rate) / np.maximum(size, 1e-300), 0)))
            what = "velocity" if k == 0 else f"derivative {k} of the velocity"
            raise ValueError(f"base_twist, q: the motion violates constraint "
                             f"{row_name(cs, i)!r}: the {what} (J ν)^({k}) is {rate[i]:.3e} "
                             f"(terms of size {size[i]:.3e}); pass a motion that keeps the "
                             f"constraints (J ν = 0 and its derivatives)")


# kernel statuses of this module (below the library's own and liedyn.contact.forward's)
LEAVES = -32              # the motion leaves a constraint: (J ν)^(k) ≠ 0
CANNOT_SUPPLY = -33       # the rows that determine the unknowns have too low a rank


@njit
def _row_columns(model, cd, nb, cols, ncol):
    """``cols[c, :ncol[c]]``: the columns of ``J`` where the rows of
    constraint ``c`` can be nonzero (the base block and the joints of the
    paths from the base to its bodies; a joint stop: its joint)."""
    parent = model.body_parent
    seen = np.zeros(parent.shape[0], np.bool_)
    for c in range(cd.kind.shape[0]):
        if cd.kind[c] == KIND_STOP:
            cols[c, 0] = nb + cd.body_a[c] - 1
            ncol[c] = 1
            continue
        t = 0
        for v in range(nb):
            cols[c, t] = v
            t += 1
        seen[:] = False
        for j in (cd.body_a[c], cd.body_b[c]):
            while j > 0 and not seen[j]:
                seen[j] = True
                cols[c, t] = nb + j - 1
                t += 1
                j = parent[j]
        ncol[c] = t


@njit
def _motion_rates(J, Vb, q, K, binom, nb, cd, cols, ncol, info):
    """Refuse a motion that leaves the constraints: ``(J ν)^(k)``, ``k =
    0..K``, against the size of its terms ``Σ_a binom(k, a) |J^(a)|
    |ν^(k−a)|`` (``ν = (V₀, q̇)``); ``info`` gets ``(k, row, rate, size)`` of
    the worst row of the first order with a violation."""
    for k in range(K + 1):
        worst = -1.0
        for c in range(cd.kind.shape[0]):
            for i in range(cd.row[c], cd.row[c + 1]):
                rate = 0.0
                size = 0.0
                for a in range(k + 1):
                    f = binom[k, a]
                    row = J[a, i]
                    t = k - a
                    for e in range(ncol[c]):
                        v = cols[c, e]
                        x = Vb[t, v] if v < nb else q[t + 1, v - nb]
                        rate += f * row[v] * x
                        size += f * abs(row[v]) * abs(x)
                d = max(size, 1e-300)
                if (abs(rate) > CONSISTENCY_RTOL * d and abs(rate) > CONSISTENCY_ATOL
                        and abs(rate) / d > worst):
                    worst = abs(rate) / d
                    info[0], info[1], info[2], info[3] = k, i, rate, size
        if worst >= 0.0:
            return LEAVES
    return OK


@njit
def _support_reaction(cd, o, Pa, Pb, lam, r, binom, W0):
    """``W₀^(k) −=`` the total wrench jets (about the world origin) that the
    forces ``λ`` apply to the bodies of a fixed-base robot: ``T(p_a)ᵀ λ`` at
    a world contact, ``((p_a − p_b) × f, 0)`` between two bodies (a 6-D pair
    and a joint stop's pair cancel)."""
    for c in range(cd.kind.shape[0]):
        b, kind, r0 = cd.body_b[c], cd.kind[c], cd.row[c]
        if kind == KIND_STOP or (kind == KIND_6D and b >= 0):
            continue
        for k in range(r + 1):
            if b < 0:
                f0, f1, f2 = _force(cd, c, lam[k])
                W0[k, 3] -= f0
                W0[k, 4] -= f1
                W0[k, 5] -= f2
                if kind == KIND_6D:
                    for i in range(3):
                        W0[k, i] -= lam[k, r0 + i]
            for a in range(k + 1):
                f0, f1, f2 = _force(cd, c, lam[k - a])
                x, y, z = Pa[a, c, 0], Pa[a, c, 1], Pa[a, c, 2]
                if b >= 0:
                    x, y, z = x - Pb[a, c, 0], y - Pb[a, c, 1], z - Pb[a, c, 2]
                elif a == 0:
                    x, y, z = x + o[0], y + o[1], z + o[2]
                g = binom[k, a]
                W0[k, 0] -= g * (y * f2 - z * f1)
                W0[k, 1] -= g * (z * f0 - x * f2)
                W0[k, 2] -= g * (x * f1 - y * f0)


@njit
def constrained_inverse_kernel(model, ws, cd, C0, about_base, Vb, q, W_app, r, solve, W_known,
                               pas, Bw, R, given, least_squares, J, lam, ue, res, info):
    """Orders ``0..r`` of SPEC §13.3: ``τ`` into ``ws.tau``, the base wrench
    into ``ws.base_wrench``, ``λ``, the base efforts ``ue`` and the residual
    ``res`` (``s`` rows) of the rows that determine them; ``J`` (r+2, m, nv)
    gets ``J^(0..r+1)``. ``W_known`` (r+1, 6) or empty: the base actuators'
    known wrench; ``pas``: the passive joints' q columns; ``Bw`` (r+1, 6, p):
    the declared base actuators' wrench jets; ``R`` (u, u) or empty (``I``);
    ``given`` (r+1, m) or empty: the forces, if known. ``solve = False``
    stops after the motion's check. Returns a status; ``LEAVES`` with
    ``info = (k, row, rate, size)``, ``CANNOT_SUPPLY`` with ``info[0]`` the
    rank (``ws.tau`` and ``ws.base_wrench`` still those of the
    unconstrained inverse dynamics)."""
    status = inverse_dynamics_kernel(model, ws, C0, about_base, Vb, q, W_app, r)  # τ^ID, W₀^ID
    if status != OK:
        return status
    nc, m, n = cd.kind.shape[0], cd.row[-1], ws.tau.shape[1]
    fb = model.floating_base
    nb = 6 if fb else 0
    K = r + 1
    binom, tau, W0 = ws.binom, ws.tau, ws.base_wrench
    for k in range(K + 2):                                     # a joint stop's row reads ws.q
        for j in range(n):
            ws.q[k, j] = q[k, j]
    P = np.zeros((2, K + 1, nc, 3))
    Pa, Pb = P[0], P[1]
    contact_points(cd, ws, Pa, Pb)
    for k in range(1, K + 1):
        point_jets(cd, ws, Pa, Pb, k)                          # p^(k) from V^(0..k−1)
    jacobian_jets_kernel(model, ws, cd, Pa, Pb, K, J)
    cols = np.empty((nc, nb + n), np.int64)
    ncol = np.empty(nc, np.int64)
    _row_columns(model, cd, nb, cols, ncol)
    status = _motion_rates(J, Vb, q, K, binom, nb, cd, cols, ncol, info)
    if status != OK or not solve:
        return status
    p = Bw.shape[2]
    u = m + p
    known = W_known.shape[0] > 0
    x = np.zeros((r + 1, u))
    if given.shape[0] > 0:
        for k in range(r + 1):
            for l in range(m):
                x[k, l] = given[k, l]
    else:
        s = nb + pas.shape[0]
        E = np.zeros((r + 1, s, u))
        w = np.zeros((r + 1, s))
        for k in range(r + 1):
            for i in range(s):
                col = i if i < nb else nb + pas[i - nb]
                for l in range(m):
                    E[k, i, l] = J[k, l, col]                  # Jᵀ's base and passive rows
                if i < nb:
                    for l in range(p):
                        E[k, i, m + l] = Bw[k, i, l]
                    w[k, i] = W0[k, i] - (W_known[k, i] if known else 0.0)
                else:
                    w[k, i] = tau[k, pas[i - nb]]
        rank = _row_rank(E[0])
        if rank == s:
            _min_norm_jets(E, w, R, r, binom, x)
        elif not (rank > 0 and _on_independent_rows(E, w, R, r, binom, rank, x)):
            if least_squares and rank == u:
                _least_squares_jets(E, w, r, binom, x)
            else:
                info[0] = rank
                return CANNOT_SUPPLY
        for k in range(r + 1):                                 # E x − w
            for i in range(s):
                acc = -w[k, i]
                for a in range(k + 1):
                    f = binom[k, a]
                    for l in range(u):
                        acc += f * E[a, i, l] * x[k - a, l]
                res[k, i] = acc
    for k in range(r + 1):
        for l in range(m):
            lam[k, l] = x[k, l]
        for l in range(p):
            ue[k, l] = x[k, m + l]
    gen = np.zeros(nb + n)
    for k in range(r + 1):
        gen[:] = 0.0
        for a in range(k + 1):                                 # (Jᵀλ)^(k)
            f = binom[k, a]
            for c in range(nc):
                for l in range(cd.row[c], cd.row[c + 1]):
                    g = f * lam[k - a, l]
                    for e in range(ncol[c]):
                        v = cols[c, e]
                        gen[v] += g * J[a, l, v]
        for j in range(n):
            tau[k, j] -= gen[nb + j]                           # τ^ID − (J_qᵀλ)^(k)
        if fb and given.shape[0] > 0:
            for i in range(6):
                W0[k, i] -= gen[i]
        elif fb:
            for i in range(6):
                acc = W_known[k, i] if known else 0.0
                for a in range(k + 1):
                    for l in range(p):
                        acc += binom[k, a] * Bw[a, i, l] * ue[k - a, l]
                W0[k, i] = acc
    if not fb:
        _support_reaction(cd, ws.o, Pa, Pb, lam, r, binom, W0)
    return OK


_CONSTRAINED_INVERSE = Kernel(constrained_inverse_kernel)

_NO_WRENCH = np.zeros((0, 6))
_NO_JOINTS = np.zeros(0, np.int64)
_NO_ACTUATORS = np.zeros((0, 6, 0))
_NO_MATRIX = np.zeros((0, 0))
_DEFAULTS = (_NO_WRENCH, _NO_JOINTS, _NO_ACTUATORS, _NO_MATRIX, _NO_MATRIX)


def _split_args(model, cs, base_pose, base_twist, q, r, base_wrench, base_actuation, passive,
                force, weight):
    """``(W_known, passive columns, Bw, R, given)`` for the kernel, checked
    in the order the arguments are documented."""
    fb, m = model.floating_base, cs.n_rows
    W_known, Bw, R, given = _DEFAULTS[0], _DEFAULTS[2], _DEFAULTS[3], _DEFAULTS[4]
    if base_wrench is not None:
        if not fb:
            raise ValueError("base_wrench: a fixed base has no actuators; its reaction is "
                             "returned (pass None)")
        W_known = np.ascontiguousarray(check_jet(base_wrench, "base_wrench", (r + 1, 6)), float)
    pas = _joint_list(model, passive, "passive")
    if base_actuation is not None:
        if not fb:
            raise ValueError("base_actuation: a fixed base has no actuators")
        Ba = as_array(base_actuation, "base_actuation", ndim=2)
        if Ba.shape[0] != 6:
            raise ValueError(f"base_actuation: expected shape (6, p), got {Ba.shape}")
        C0, Vj, _ = check_motion_slow(model, base_pose, base_twist, q, r + 2, r + 3)
        H = inverse_adjoint_jet(C0, Vj, r)                  # Ad_{C₀⁻¹}^(a)
        Bw = np.ascontiguousarray(np.einsum("kji,jp->kip", H, Ba), float)  # world
    if force is not None:
        given = np.ascontiguousarray(check_jet(force, "force", (r + 1, m)), float)
        if base_actuation is not None or passive is not None:
            raise ValueError("force: with the forces given there is nothing to solve for; "
                             "drop base_actuation and passive")
        return W_known, pas, Bw, R, given
    if not fb and not pas.size:
        raise ValueError("force: a fixed base without passive joints gives no equation for "
                         "the constraint forces; pass them as force=, or declare passive "
                         "joints")
    if weight is not None:
        R = np.ascontiguousarray(_weight_arg(weight, m + Bw.shape[2]), float)
    return W_known, pas, Bw, R, given


def _cannot_supply(model, cs, ws, W_known, pas, Bw, J0, rank, least_squares):
    """The error of contacts whose rows cannot determine the unknowns, with
    the least-squares residual (``ws`` holds the unconstrained inverse
    dynamics)."""
    fb = model.floating_base
    nb = 6 if fb else 0
    rows = list(range(nb)) + [nb + int(i) for i in pas]
    labels = ([f"base wrench component {i}" for i in range(6)] if fb else []) + \
             [f"passive joint {model.joint_names[i]!r}" for i in pas]
    E0 = np.zeros((len(rows), cs.n_rows + Bw.shape[2]))
    E0[:, :cs.n_rows] = J0.T[rows]
    w0 = ws.tau[0, pas]
    if fb:
        if Bw.shape[2]:
            E0[:6, cs.n_rows:] = Bw[0]
        w0 = np.concatenate([ws.base_wrench[0] - (W_known[0] if W_known.size else 0.0), w0])
    u = E0.shape[1]
    x0, *_ = np.linalg.lstsq(E0, w0, rcond=None)
    res = E0 @ x0 - w0
    i = int(np.argmax(np.abs(res)))
    hint = ("; pass least_squares=True for the least-squares forces and their residual"
            if rank == u and not least_squares else "")
    return ValueError(f"constraints: the contacts {list(cs.names)} cannot supply the base "
                      f"wrench and passive-joint forces: rank {rank} for {len(rows)} rows and "
                      f"{u} unknowns; least-squares residual {np.abs(res).max():.3e} on "
                      f"{labels[i]}{hint}")


def _leaves_message(cs, info):
    """What a ``LEAVES`` status means, from the kernel's ``info``."""
    k, i, rate, size = int(info[0]), int(info[1]), info[2], info[3]
    what = "velocity" if k == 0 else f"derivative {k} of the velocity"
    return (f"base_twist, q: the motion violates constraint {row_name(cs, i)!r}: the {what} "
            f"(J ν)^({k}) is {rate:.3e} (terms of size {size:.3e}); pass a motion that keeps "
            f"the constraints (J ν = 0 and its derivatives)")


def constrained_inverse_dynamics(model, constraints, base_pose, base_twist, q, order, *,
                                 base_wrench=None, base_actuation=None, passive=None, force=None,
                                 weight=None, applied=None, least_squares=False):
    """Joint-force and constraint-force jets of a motion held by constraints
    (SPEC §13.3): ``τ^(0..order)`` and ``λ^(0..order)``.

    The base rows of the equations of motion say what the contacts must
    supply: ``A λ = W₀^ID − W₀`` with ``W₀^ID`` the base wrench of
    :func:`liedyn.inverse_dynamics` for the same motion and ``W₀`` the base
    actuators' wrench; rows of joints declared ``passive`` (``τ = 0``) add
    their equations (loops). With more unknowns than rows, ``λ`` is the
    weighted minimum-norm solution ``min ½ λᵀ R λ`` in the reported metric,
    and its jets are the derivatives of that instantaneous solution (one
    KKT matrix for every order). Then
    ``τ^(k) = τ^ID,(k) − Σ_a binom(k, a) J_q^(a)ᵀ λ^(k−a)``.

    Parameters
    ----------
    model : Model
    constraints : ConstraintSet
    base_pose : (4, 4) or None
    base_twist : (order+2, 6) or None (more rows: the first order+2 are read)
    q : (order+3, n) (more rows: the first order+3 are read)
        Motion jets that keep the constraints (``J ν = 0`` and its
        derivatives up to ``order + 1``); checked.
    order : int ≥ 0
    base_wrench : (order+1, 6) or None, keyword
        The base actuators' known wrench jet (world frame, about the world
        origin); ``None``: zero (a legged robot's unactuated base). A fixed
        base takes ``None``: its reaction is returned.
    base_actuation : (6, p) or None, keyword
        Base actuators with unknown efforts: column ``i`` is the wrench
        (moment, force) of a unit effort in the base body's frame (a drone's
        thrust: ``(0, 0, 0, 0, 0, 1)``; a fully actuated base: ``I₆``); the
        efforts join ``λ`` in the minimum-norm problem. With fewer
        independent columns than six (a quadrotor's allocation, rank 4; six
        coplanar rotors, rank 4) the base wrench must be one they produce:
        a motion whose residual is round-off (``1e-10`` of its
        terms) is accepted, the efforts split by minimum norm.
    passive : sequence of joint names or q columns, keyword
        Joints without actuators (``τ = 0``): their rows determine loop forces.
    force : (order+1, m) or None, keyword
        The constraint-force jets, if known (a fixed base without passive
        joints needs them): then nothing is solved for.
    weight : (u,) or (u, u), keyword
        ``R`` over ``(λ, base efforts)``, positive definite; default ``I``.
    applied : (order+1, N, 6), keyword
        Applied wrench jets, as :func:`liedyn.inverse_dynamics`.
    least_squares : bool, keyword
        When the rows cannot be met exactly (e.g. one point foot cannot
        supply a base moment), return the least-squares forces and their
        ``residual`` instead of raising.

    Returns
    -------
    ConstrainedInverseDynamicsResult

    Raises
    ------
    ValueError, TypeError
        Bad arguments (the message names them); a motion that violates a
        constraint (naming it, with the residual); contacts that cannot
        supply the base wrench (naming them, with the least-squares
        residual); a fixed base with neither passive joints nor ``force``.
    """
    r = check_model_order(model, order)
    cs = check_constraints(model, constraints)
    C0, Vb, qj = motion_args(model, base_pose, base_twist, q, r + 2, r + 3)
    Wa = applied_arg(model, applied, r + 1)
    late = None
    if (base_wrench is None and base_actuation is None and passive is None and force is None
            and weight is None and model.floating_base):
        split = _DEFAULTS
    else:
        try:
            split = _split_args(model, cs, base_pose, base_twist, q, r, base_wrench,
                                base_actuation, passive, force, weight)
        except (ValueError, TypeError) as e:    # raised after the motion's own checks
            split, late = _DEFAULTS, e
    W_known, pas, Bw, R, given = split
    m = cs.n_rows
    s = 0 if given.shape[0] else (6 if model.floating_base else 0) + pas.shape[0]
    ws = workspace_for(model, r, None)
    J = np.empty((r + 2, m, model.nv))
    lam = np.empty((r + 1, m))
    ue = np.empty((r + 1, Bw.shape[2]))
    res = np.zeros((r + 1, s))
    info = np.zeros(4)
    status, _ = ws._serve(_CONSTRAINED_INVERSE, model, cs.data, C0, about_base("world"), Vb, qj,
                          Wa, r, late is None, W_known, pas, Bw, R, given, bool(least_squares),
                          J, lam, ue, res, info)
    if status == LEAVES:
        raise ValueError(_leaves_message(cs, info))
    if status == CANNOT_SUPPLY:
        raise _cannot_supply(model, cs, ws, W_known, pas, Bw, J[0], int(info[0]), least_squares)
    if status != OK:
        raise_for(status, model, lambda: (
            check_motion_slow(model, base_pose, base_twist, q, r + 2, r + 3),
            check_applied_slow(model, applied, r + 1)))
    if late is not None:
        raise late
    return ConstrainedInverseDynamicsResult(tau=ws.tau.copy(), base_wrench=ws.base_wrench.copy(),
                                            force=lam, base_effort=ue, residual=res,
                                            constraints=cs)
