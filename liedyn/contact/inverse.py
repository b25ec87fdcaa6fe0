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
"""

import numpy as np

from .._checks import as_array, check_motion_slow, check_jet
from ..algorithm.frames import inverse_adjoint_jet
from ..algorithm.inverse import inverse_dynamics
from ..multibody.model import check_model_order
from ..multibody.results import _freeze, _frozen_setattr
from ..multibody.workspace import binomials
from .constraints import _kinematics, check_constraints, jacobian_jets, wrench_jets
from .forward import row_name
from .results import _Forces

__all__ = ["constrained_inverse_dynamics", "ConstrainedInverseDynamicsResult"]

# A motion whose constraint rate (J ν)^(k) exceeds this fraction of the size
# of its terms Σ_a binom(k, a) |J^(a)| |ν^(k−a)|, and CONSISTENCY_ATOL (SI
# units: m/s^(k+1), rad/s^(k+1)), is refused. The absolute floor admits the
# round-off of a robot at rest, whose accelerations are sums of terms of the
# size of gravity that cancel to ~1e-13 and leave nothing to be relative to.
CONSISTENCY_RTOL = 1e-8
CONSISTENCY_ATOL = 1e-10
RANK_RTOL = 1e-10
# A row the independent rows do not carry is met when its residual is at
# most this times the largest term of its order (round-off of the wrench).
RESIDUAL_RTOL = 1e-10


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

    def __init__(self, **fields):
        _freeze(self, **fields)

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
    """Refuse a motion that leaves the constraints: ``(J ν)^(k)``, ``k = 0..r+1``."""
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


def _independent_rows(E0, rank):
    """``rank`` rows of ``E0`` that are linearly independent, picked greedily
    by the largest remainder (Gram–Schmidt with pivoting), in order."""
    X = np.array(E0, float)
    keep = []
    for _ in range(rank):
        norms = np.linalg.norm(X, axis=1)
        norms[keep] = -1.0
        i = int(np.argmax(norms))
        keep.append(i)
        e = X[i] / norms[i]
        X -= np.outer(X @ e, e)
    return sorted(keep)


def _kkt_jets(E, w, R, r, B):
    """Jets of ``argmin ½ xᵀ R x  s.t.  E x = w`` for ``E`` of full row rank:
    one KKT matrix, one solve per order (SPEC §13.3)."""
    s, u = E.shape[1:]
    x = np.zeros((r + 1, u))
    mu = np.zeros((r + 1, s))
    K = np.block([[R, -E[0].T], [E[0], np.zeros((s, s))]])
    lu = np.linalg.inv(K)
    for k in range(r + 1):
        top = sum((B[k, a] * E[a].T @ mu[k - a] for a in range(1, k + 1)), np.zeros(u))
        bot = w[k] - sum((B[k, a] * E[a] @ x[k - a] for a in range(1, k + 1)), np.zeros(s))
        y = lu @ np.concatenate([top, bot])
        x[k], mu[k] = y[:u], y[u:]
    return x


def _residual(E, x, w, r, B):
    """``(E x − w)^(k)`` and the size of its terms, ``Σ_a C(k,a) |E^(a)| |x^(k−a)|
    + |w^(k)|``, per order."""
    res = np.array([sum(B[k, a] * E[a] @ x[k - a] for a in range(k + 1)) - w[k]
                    for k in range(r + 1)])
    size = np.array([sum(B[k, a] * np.abs(E[a]) @ np.abs(x[k - a]) for a in range(k + 1))
                     + np.abs(w[k]) for k in range(r + 1)])
    return res, size


def _solve_min_norm(E, w, R, r, B, least_squares, cs, labels):
    """Jets ``x^(0..r)`` of ``argmin ½ xᵀ R x  s.t.  E x = w``, with the
    residual jets ``E x − w``.

    Full row rank: the KKT system. Rank below the rows (an under-actuated
    base, six coplanar rotors): the rows of an independent subset carry the
    constraints; the others hold for a motion the actuators can produce, and
    are accepted when their residual is round-off, at most
    :data:`RESIDUAL_RTOL` of the largest term of its order. Otherwise, with
    ``least_squares`` and full column rank, the least-squares ``x``."""
    s, u = E.shape[1:]
    x = np.zeros((r + 1, u))
    if s == 0:
        return x, np.zeros((r + 1, 0))
    rank = np.linalg.matrix_rank(E[0], tol=RANK_RTOL * max(np.abs(E[0]).max(), 1e-300))
    if rank == s:
        x = _kkt_jets(E, w, R, r, B)
        return x, _residual(E, x, w, r, B)[0]
    if rank > 0:
        keep = _independent_rows(E[0], rank)                       # SPEC §13.3
        x = _kkt_jets(E[:, keep], w[:, keep], R, r, B)
    res, size = _residual(E, x, w, r, B)
    if np.all(np.abs(res) <= RESIDUAL_RTOL * size.max(axis=1, keepdims=True)):
        return x, res
    if least_squares and rank == u:
        # (EᵀE) x = Eᵀ w, differentiated: Σ binom (EᵀE)^(a) x^(k−a) = (Eᵀ w)^(k)
        EtE = np.array([sum(B[k, a] * E[a].T @ E[k - a] for a in range(k + 1)) for k in range(r + 1)])
        Etw = np.array([sum(B[k, a] * E[a].T @ w[k - a] for a in range(k + 1)) for k in range(r + 1)])
        inv0 = np.linalg.inv(EtE[0])
        for k in range(r + 1):
            x[k] = inv0 @ (Etw[k] - sum((B[k, a] * EtE[a] @ x[k - a] for a in range(1, k + 1)),
                                        np.zeros(u)))
        return x, _residual(E, x, w, r, B)[0]
    k, i = np.unravel_index(int(np.argmax(np.abs(res) / np.maximum(size.max(axis=1, keepdims=True),
                                                                    1e-300))), res.shape)
    what = "" if k == 0 else f" (derivative {k})"
    hint = ("; pass least_squares=True for the least-squares forces and their residual"
            if rank == u and not least_squares else "")
    raise ValueError(f"constraints: the contacts {list(cs.names)} and base actuators cannot "
                     f"supply the base wrench and passive-joint forces: rank {rank} for {s} "
                     f"rows and {u} unknowns; residual {abs(res[k, i]):.3e}{what} on "
                     f"{labels[i]} against terms of size {size[k].max():.3e}{hint}")


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
        a motion whose residual is round-off (:data:`RESIDUAL_RTOL` of its
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
    fb = model.floating_base
    n, m, nv = model.n_joints, cs.n_rows, model.nv
    C0, Vj, qj = check_motion_slow(model, base_pose, base_twist, q, r + 2, r + 3)
    B = binomials(r + 2)
    idr = inverse_dynamics(model, C0, Vj if fb else None, qj, r, applied=applied)
    fk = _kinematics(model, C0, Vj if fb else None, qj, r + 1)
    J = jacobian_jets(cs, fk, r + 1)
    nu = np.hstack([Vj[:r + 2], qj[1:r + 3]]) if fb else qj[1:r + 3]
    _consistency(cs, J, nu, r)
    nb = 6 if fb else 0
    Jt = np.transpose(J[:r + 1], (0, 2, 1))                 # (r+1, nv, m)
    W_known = np.zeros((r + 1, 6))
    if base_wrench is not None:
        if not fb:
            raise ValueError("base_wrench: a fixed base has no actuators; its reaction is "
                             "returned (pass None)")
        W_known = check_jet(base_wrench, "base_wrench", (r + 1, 6))
    pas = _joint_list(model, passive, "passive")
    if base_actuation is not None:
        if not fb:
            raise ValueError("base_actuation: a fixed base has no actuators")
        Ba = as_array(base_actuation, "base_actuation", ndim=2)
        if Ba.shape[0] != 6:
            raise ValueError(f"base_actuation: expected shape (6, p), got {Ba.shape}")
        H = inverse_adjoint_jet(C0, Vj, r)                  # Ad_{C₀⁻¹}^(a)
        Bw = np.einsum("kji,jp->kip", H, Ba)                # (Ad_{C₀⁻¹}ᵀ)^(a) B_a, world
    else:
        Bw = np.zeros((r + 1, 6, 0))
    p = Bw.shape[2]
    if force is not None:
        lam = check_jet(force, "force", (r + 1, m))
        if base_actuation is not None or passive is not None:
            raise ValueError("force: with the forces given there is nothing to solve for; "
                             "drop base_actuation and passive")
        x = lam
        res = np.zeros((r + 1, 0))
    else:
        # rows that determine the unknowns: the base rows (floating) and the passive joints
        rows = (list(range(6)) if fb else []) + [nb + i for i in pas]
        if not rows:
            raise ValueError("force: a fixed base without passive joints gives no equation for "
                             "the constraint forces; pass them as force=, or declare passive "
                             "joints")
        labels = ([f"base wrench component {i}" for i in range(6)] if fb else []) + \
                 [f"passive joint {model.joint_names[i]!r}" for i in pas]
        E = np.zeros((r + 1, len(rows), m + p))
        E[:, :, :m] = Jt[:, rows]
        if fb:
            E[:, :6, m:] = Bw
        tbar_id = np.hstack([idr.base_wrench, idr.tau]) if fb else idr.tau
        tbar_known = np.hstack([W_known, np.zeros((r + 1, n))]) if fb else np.zeros((r + 1, n))
        w = (tbar_id - tbar_known)[:, rows]
        x, res = _solve_min_norm(E, w, _weight_arg(weight, m + p), r, B, least_squares, cs,
                                 labels)
    lam, u = x[:, :m], x[:, m:]
    gen = np.array([sum(B[k, a] * Jt[a] @ lam[k - a] for a in range(k + 1))
                    for k in range(r + 1)])                  # (Jᵀλ)^(k)
    tau = idr.tau - gen[:, nb:]
    if fb:
        base = W_known + np.array([sum(B[k, a] * Bw[a] @ u[k - a] for a in range(k + 1))
                                   for k in range(r + 1)]) if p else W_known.copy()
        if force is not None:
            base = idr.base_wrench - gen[:, :6]
    else:                                                   # the support reaction
        base = idr.base_wrench - wrench_jets(cs, fk, lam, r).sum(axis=1)
    return ConstrainedInverseDynamicsResult(tau=tau, base_wrench=np.array(base, float),
                                            force=np.array(lam, float), base_effort=u.copy(),
                                            residual=res, constraints=cs)
