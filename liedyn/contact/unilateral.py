"""Frictionless unilateral contacts: the acceleration LCP of the closed,
non-impacting contacts, and the jets of every order on its active set
(SPEC §13.4).

For the candidate contacts ``C`` (closed, ``|φ| ≤ gap_tol``, and not
moving along their normals, ``|φ̇| ≤ velocity_tol``):

    a_n = W λ_n + b,    W = J_n M⁻¹ J_nᵀ,    b = J_n ν̇_f + J̇_n ν
    0 ≤ λ_n ⊥ a_n ≥ 0

with ``J_n`` the normal rows (``Contact1D(frame, normal=n)``) and ``ν̇_f``
the acceleration without contact forces (:func:`liedyn.forward_dynamics`).
``W`` and ``b`` are formed densely (``M`` from :func:`liedyn.mass_matrix`):
the LCP is small (one row per candidate contact). Its solution is the
minimiser of the convex QP ``min ½ λᵀ W λ + bᵀ λ, λ ≥ 0``, whose KKT
conditions are the LCP (the multiplier of ``λ ≥ 0`` is ``a_n``): Clarabel
solves it, the active set ``A = {i : λ_i > a_i}`` (scaled) is read from its
solution, and ``W_AA λ_A = −b_A`` is solved exactly (pseudo-inverse for
redundant contacts), with principal pivots until the signs hold. The jets
are those of :func:`liedyn.constrained_forward_dynamics` with the active
contacts, valid where the active set is strict.

Glossary
--------
=========  ===========  =================================================
``W``      (c, c)       Delassus matrix of the candidates
``b``      (c,)         free normal acceleration
``lam``    (c,)         ``λ_n`` (force along ``n``)
``a``      (c,)         ``a_n = W λ_n + b``
``sl, sa`` float        scales of ``λ`` and ``a`` for the tolerances
=========  ===========  =================================================
"""

import numpy as np

from .._checks import as_array
from ..algorithm.closed_form import mass_matrix
from ..algorithm.forward import forward_dynamics
from ..multibody.model import check_model_order
from ..multibody.results import _freeze, _frozen_setattr
from ._qp import INFEASIBLE, SOLVED, UNBOUNDED, solve_qp
from .constraints import _kinematics, constraint_jacobian
from .forward import constrained_forward_dynamics
from .gaps import _real, check_contacts, check_stops, gap_jets, normal_constraints

__all__ = ["unilateral_forward_dynamics", "UnilateralResult"]

GAP_TOL = 1e-6            # m: |φ| ≤ this is closed
VELOCITY_TOL = 1e-6       # m/s: |φ̇| ≤ this is at rest along the normal
SIGN_TOL = 1e-9           # relative: λ_i, a_i ≥ −SIGN_TOL·scale is accepted as ≥ 0
STRICT_TOL = 1e-8         # relative: λ_i and a_i both ≤ STRICT_TOL·scale is degenerate
RANK_RTOL = 1e-9          # eigenvalues of W_AA below this times the largest are zero


class UnilateralResult:
    """Output of :func:`liedyn.unilateral_forward_dynamics` of order ``r``.

    Attributes
    ----------
    base_twist : (r+2, 6)
        ``V₀^(0..r+1)`` (zeros for a fixed base).
    q : (r+3, n)
        ``q^(0..r+2)``.
    force : (r+1, nc)
        Normal force jets ``λ_n^(0..r)`` of every contact (along its plane's
        normal; zero on the inactive and open contacts).
    gap : (nc,)
        ``φ``.
    normal_velocity : (nc,)
        ``φ̇ = nᵀ ṗ``.
    normal_acceleration : (nc,)
        ``φ̈`` of the solution (for the candidates, ``a_n``).
    candidates, active, degenerate : tuple of str
        Closed non-impacting contacts; those with ``λ_n > 0`` (the active
        set the jets hold on); those with ``λ_n = 0`` and ``a_n = 0``
        together (only at ``order = 0``: otherwise refused).
    residual : (3,)
        Over the candidates, of the returned solution:
        ``max(0, −min λ_n)`` (N), ``max(0, −min a_n)`` (m/s²),
        ``max |λ_n a_n|`` (N m/s²).
    status : str
        The QP solver's status (``"Solved"``; ``"none"`` without candidates).
    constraints : ConstraintSet or None
        The active contacts as ``Contact1D`` constraints (``None`` if none).
    names : tuple of str
    """

    __slots__ = ("base_twist", "q", "force", "gap", "normal_velocity", "normal_acceleration",
                 "candidates", "active", "degenerate", "residual", "status", "constraints",
                 "names")
    __setattr__ = _frozen_setattr

    def __init__(self, **fields):
        _freeze(self, **fields)

    def force_of(self, name):
        """The normal force jet ``(r+1,)`` of the contact called ``name``."""
        if name not in self.names:
            raise ValueError(f"name: no contact called {name!r}; contacts: {list(self.names)}")
        return self.force[:, self.names.index(name)]

    def __repr__(self):
        return (f"UnilateralResult(order {self.force.shape[0] - 1}, active "
                f"{list(self.active)}, degenerate {list(self.degenerate)})")


def _solve_active(W, b, A):
    """``λ`` with ``W_AA λ_A = −b_A`` (least squares, minimum norm, when
    ``W_AA`` is singular) and ``λ = 0`` off ``A``."""
    lam = np.zeros(len(b))
    idx = np.flatnonzero(A)
    if idx.size:
        WA = W[np.ix_(idx, idx)]
        w, Q = np.linalg.eigh(0.5 * (WA + WA.T))
        keep = w > RANK_RTOL * max(w.max(), 1e-300)
        lam[idx] = -(Q[:, keep] / w[keep]) @ (Q[:, keep].T @ b[idx])
    return lam


def solve_lcp(W, b, names, what="LCP"):
    """``0 ≤ λ ⊥ W λ + b ≥ 0`` for a positive semidefinite ``W``: Clarabel
    for the active set, then the exact solve on it (module docstring).
    Returns ``(λ, a, active mask, scales (sl, sa), status)``."""
    c = len(b)
    sa = max(np.abs(b).max(), 1e-300)
    wmax = max(np.abs(W).max(), 1e-300)
    if not np.any(b < 0):                                  # λ = 0 solves it
        return np.zeros(c), b.copy(), np.zeros(c, bool), (sa / wmax, sa), "trivial"
    sol = solve_qp(W / wmax, b / sa, np.zeros((0, c)), np.zeros(0), -np.eye(c), np.zeros(c))
    if sol.status not in SOLVED:
        why = {**{s: "infeasible" for s in INFEASIBLE}, **{s: "unbounded below: no solution "
               "(a direction d ≥ 0 with W d = 0 and bᵀd < 0)" for s in UNBOUNDED}}
        raise ValueError(f"{what}: the solver (Clarabel) reports {sol.status}"
                         f"{': ' + why[sol.status] if sol.status in why else ''}; "
                         f"contacts {list(names)}")
    y, z = sol.x, sol.z                                    # λ = y sa/wmax, a = z sa
    sl = max(np.abs(y).max(), 1.0) * sa / wmax
    A = y > z                                              # scaled: W/|W| ~ 1, b/|b| ~ 1
    for _ in range(4 * c + 4):                             # principal pivots to exact signs
        lam = _solve_active(W, b, A)
        a = W @ lam + b
        a[A] = np.where(np.abs(a[A]) <= SIGN_TOL * sa, 0.0, a[A])
        sl = max(np.abs(lam).max(), sl * 1e-3)
        bad_l = np.where(A, -lam / sl, 0.0)
        bad_a = np.where(~A, -a / sa, 0.0)
        inconsistent = np.abs(a[A]).max(initial=0.0) > SIGN_TOL * sa
        worst = max(bad_l.max(), bad_a.max())
        if worst <= SIGN_TOL and not inconsistent:
            return lam, a, A, (sl, sa), sol.status
        i = int(np.argmax(np.maximum(bad_l, bad_a))) if worst > SIGN_TOL else \
            int(np.flatnonzero(A)[np.argmax(np.abs(a[A]))])
        A[i] = not A[i]
    raise RuntimeError(f"{what}: no active set of contacts {list(names)} satisfies the signs "
                       f"after {4 * c + 4} pivots from the solver's (Clarabel) solution; "
                       f"worst relative violation {worst:.2e}")


def _jets_on(model, cl, sl, active, base_pose, base_twist, q, r, tau, base_wrench, applied):
    """Motion and normal force jets with the active contacts and stops held
    (SPEC §13.2)."""
    idx = np.flatnonzero(active)
    nc = len(cl)
    force = np.zeros((r + 1, len(active)))
    if not idx.size:
        f = forward_dynamics(model, base_pose, base_twist, q, r, tau=tau, base_wrench=base_wrench,
                             applied=applied)
        return np.array(f.base_twist), np.array(f.q), force, None
    cs = normal_constraints(cl, idx[idx < nc], sl.subset(idx[idx >= nc] - nc))
    f = constrained_forward_dynamics(model, cs, base_pose, base_twist, q, r, tau=tau,
                                     base_wrench=base_wrench, applied=applied)
    force[:, idx] = f.force
    return np.array(f.base_twist), np.array(f.q), force, cs


def unilateral_forward_dynamics(model, contacts, base_pose, base_twist, q, order, *, tau,
                                base_wrench=None, applied=None, gap_tol=GAP_TOL,
                                velocity_tol=VELOCITY_TOL, stops=None):
    """Forward dynamics with frictionless unilateral point contacts, and its
    first ``order`` time derivatives where they exist (SPEC §13.4).

    Solves the acceleration LCP ``0 ≤ λ_n ⊥ a_n ≥ 0`` of the closed,
    non-impacting contacts (module docstring), then returns the jets of
    :func:`liedyn.constrained_forward_dynamics` with the active contacts
    (``λ_n > 0``) held along their normals: the derivatives of the motion
    while the active set does not change, which it does not near an instant
    where it is strict (``λ_n > 0`` on the active, ``a_n > 0`` on the other
    candidates).

    Parameters
    ----------
    model : Model
    contacts : sequence of PointContact
    base_pose, base_twist, q, order, tau, base_wrench, applied
        As :func:`liedyn.constrained_forward_dynamics`.
    gap_tol : float, keyword
        Contacts with ``|φ| ≤ gap_tol`` (m) are closed; open ones carry no force.
    velocity_tol : float, keyword
        Closed contacts with ``|φ̇| ≤ velocity_tol`` (m/s) are candidates;
        those separating faster carry no force.
    stops : sequence of JointStop, keyword
        Unilateral joint stops: gap ``s (q_j − limit)``, row ``s q̇_j``, force
        the joint force ``λ ≥ 0`` pushing off the stop (SPEC §13.1); they
        join the LCP as rows after the contacts' (``gap_tol`` and
        ``velocity_tol`` in rad or m). ``contacts`` may then be empty.

    Returns
    -------
    UnilateralResult
        With ``stops`` every per-contact field has ``nc + ns`` entries, the
        stops after the contacts.

    Raises
    ------
    ValueError, TypeError
        Bad arguments; a contact penetrating (``φ < −gap_tol``) or closing
        (``φ̇ < −velocity_tol``: an impact, see :func:`liedyn.impact`),
        naming it; ``order ≥ 1`` with a degenerate contact (``λ_n = 0`` and
        ``a_n = 0`` together: the motion is not differentiable there),
        naming it; an LCP the solver finds without solution, with its status.
    """
    r = check_model_order(model, order)
    stop_list = check_stops(model, stops)
    cl = check_contacts(model, contacts, allow_empty=len(stop_list) > 0)
    nc = len(cl)
    all_names = cl.names + stop_list.names
    gap_tol = _real(gap_tol, "gap_tol", 0.0)
    velocity_tol = _real(velocity_tol, "velocity_tol", 0.0)
    fb = model.floating_base
    V0 = None if not fb else as_array(base_twist, "base_twist", ndim=2)[:1]
    q2 = as_array(q, "q", ndim=2)[:2]
    phi = np.hstack([gap_jets(cl, _kinematics(model, base_pose, V0, q2, 1), 1),
                     np.array(stop_list.gaps(q2[0], q2[1])).reshape(2, -1)])
    for i, name in enumerate(all_names):
        what, unit = ("contact", "m") if i < nc else ("stop", "(rad or m)")
        if phi[0, i] < -gap_tol:
            beyond = "penetrates its plane" if i < nc else "is beyond its limit"
            raise ValueError(f"{what} {name!r}: {beyond} by {-phi[0, i]:.3e} {unit} (gap_tol "
                             f"{gap_tol:g}); a state with φ ≥ 0 is needed")
        if abs(phi[0, i]) <= gap_tol and phi[1, i] < -velocity_tol:
            raise ValueError(f"{what} {name!r}: closed and closing at {phi[1, i]:.3e} {unit}/s: "
                             "an impact, not a sustained contact; apply liedyn.impact first")
    cand = np.flatnonzero((np.abs(phi[0]) <= gap_tol) & (np.abs(phi[1]) <= velocity_tol))
    tau_in = as_array(tau, "tau", ndim=2)
    Wb_in = None if base_wrench is None else as_array(base_wrench, "base_wrench", ndim=2)
    app0 = None if applied is None else as_array(applied, "applied", ndim=3)[:1]
    active = np.zeros(len(all_names), bool)
    degenerate, status = (), "none"
    if cand.size:
        W, b, J = lcp_matrices(model, normal_constraints(cl, cand[cand < nc],
                                                         stop_list.subset(cand[cand >= nc] - nc)),
                               base_pose, V0, q2, tau_in[:1],
                               None if Wb_in is None else Wb_in[:1], app0)
        names = [all_names[i] for i in cand]
        lam, a, A, (sl, sa), status = solve_lcp(W, b, names, "normal contact LCP")
        active[cand[A]] = True
        degenerate = tuple(names[i] for i in range(len(cand))
                           if lam[i] <= STRICT_TOL * sl and a[i] <= STRICT_TOL * sa)
        if degenerate and r > 0:
            i = names.index(degenerate[0])
            raise ValueError(f"contact {degenerate[0]!r}: λ_n = {lam[i]:.3e} N and a_n = "
                             f"{a[i]:.3e} m/s² are both zero (below {STRICT_TOL:g} of their "
                             "scales): the contact may stay closed or open, so the motion is "
                             "not differentiable at this instant; only order 0 is defined")
    Vj, qj, force, cs = _jets_on(model, cl, stop_list, active, base_pose, base_twist, q, r, tau,
                                 base_wrench, applied)
    phi2 = np.hstack([gap_jets(cl, _kinematics(model, base_pose, Vj if fb else None, qj, 2), 2),
                      stop_list.sign * (qj[:3, stop_list.joint]
                                        - np.array([1.0, 0.0, 0.0])[:, None] * stop_list.limit)])
    res = np.zeros(3)
    if cand.size:
        lc, ac = force[0, cand], phi2[2, cand]
        res[:] = max(0.0, -lc.min()), max(0.0, -ac.min()), np.abs(lc * ac).max()
    return UnilateralResult(base_twist=Vj, q=qj, force=force, gap=phi2[0].copy(),
                            normal_velocity=phi2[1].copy(), normal_acceleration=phi2[2].copy(),
                            candidates=tuple(all_names[i] for i in cand),
                            active=tuple(all_names[i] for i in np.flatnonzero(active)),
                            degenerate=degenerate, residual=res, status=status,
                            constraints=cs, names=all_names)


def lcp_matrices(model, cs, base_pose, V0, q2, tau0, Wb0, applied0):
    """``W = J M⁻¹ Jᵀ``, ``b = J ν̇_f + J̇ ν`` and ``J`` of the constraint
    set ``cs`` at the state (dense: :func:`liedyn.mass_matrix`,
    :func:`liedyn.constraint_jacobian`, :func:`liedyn.forward_dynamics`)."""
    fb = model.floating_base
    J = constraint_jacobian(model, cs, base_pose, V0, q2, 1)
    M = mass_matrix(model, base_pose, q2[0])
    f = forward_dynamics(model, base_pose, V0, q2, 0, tau=tau0, base_wrench=Wb0,
                         applied=applied0)
    nu = np.concatenate([V0[0], q2[1]]) if fb else q2[1]
    nud = np.concatenate([f.base_twist[1], f.q[2]]) if fb else np.array(f.q[2])
    L = np.linalg.cholesky(M)
    X = np.linalg.solve(L, J[0].T)
    return X.T @ X, J[0] @ nud + J[1] @ nu, J
