"""Impacts: instantaneous velocity jumps at a constant configuration
(SPEC §13.4).

    M (ν⁺ − ν⁻) = Jᵀ Λ,        v⁻ = J ν⁻,   v⁺ = J ν⁺ = v⁻ + W Λ,   W = J M⁻¹ Jᵀ

* :func:`impact`, frictionless unilateral point contacts: over the closed
  contacts (``|φ| ≤ gap_tol``) with restitution ``e_i ∈ [0, 1]``,

      w = v_n⁺ + e min(v_n⁻, 0) ≥ 0,    Λ ≥ 0,    Λᵀ w = 0

  (an LCP in ``Λ``: ``w = W Λ + v_n⁻ + e min(v_n⁻, 0)``): a contact that was
  closing leaves at least at ``−e v_n⁻``, one at rest or separating does not
  start to close, and only contacts that push leave at exactly that speed.
  One closing contact gives the closed form
  ``Λ = −(1 + e) v_n⁻ / W``, ``v_n⁺ = −e v_n⁻``, and the kinetic energy
  drops by ``(1 − e²) ½ (v_n⁻)² / W``: the contact-space energy
  ``½ (v_n)² / W`` is multiplied by ``e²``. With ``e = 0`` the loss is
  ``½ Λᵀ W Λ ≥ 0``. Solved as the LCP of :mod:`liedyn.contact.unilateral`.
* :func:`impulse_dynamics`, bilateral constraints (any ``ConstraintSet``):
  ``v⁺ = −e v⁻`` on every row, ``Λ = −(1 + e) W⁺ v⁻`` (Pinocchio's
  ``impulseDynamics``).

``M`` (:func:`liedyn.mass_matrix`) and ``J``
(:func:`liedyn.constraint_jacobian`) are formed densely.
"""

import numpy as np

from .._checks import as_array
from ..algorithm.closed_form import mass_matrix
from ..multibody.model import check_model
from ..multibody.results import _freeze, _frozen_setattr
from .constraints import _kinematics, check_constraints, constraint_jacobian
from .gaps import _real, check_contacts, check_stops, gap_jets, normal_constraints
from .unilateral import GAP_TOL, RANK_RTOL, solve_lcp

__all__ = ["impact", "impulse_dynamics", "ImpactResult"]


class ImpactResult:
    """Output of :func:`liedyn.impact` and :func:`liedyn.impulse_dynamics`.

    Attributes
    ----------
    base_twist : (1, 6) or None
        ``V₀⁺`` (``None`` for a fixed base).
    q : (2, n)
        ``(q, q̇⁺)``: the configuration is unchanged.
    impulse : (m,)
        ``Λ`` (N s), rows as the contacts' (:func:`impact`: along each
        normal, zero on the open contacts) or the constraints' (reported
        form of SPEC §13.1).
    velocity_before, velocity_after : (m,)
        ``v⁻ = J ν⁻`` and ``v⁺ = J ν⁺``.
    kinetic_energy_before, kinetic_energy_after : float
        ``½ νᵀ M ν`` (J).
    energy_loss : float
        ``T⁻ − T⁺``.
    contact_energy_before, contact_energy_after : float
        ``½ vᵀ W⁺ v`` over the rows that push (``Λ > 0``; all rows for
        :func:`impulse_dynamics`): for one frictionless contact
        ``½ v_n² / W``, and ``after = e² before``.
    active : tuple of str
        The contacts or rows with ``Λ > 0`` (:func:`impact`), or all.
    residual : (3,)
        :func:`impact`: ``max(0, −min Λ)``, ``max(0, −min w)``,
        ``max |Λ_i w_i|`` over the closed contacts; :func:`impulse_dynamics`:
        ``max |v⁺ + e v⁻|`` and two zeros.
    status : str
        The LCP solver's status (``"trivial"`` when nothing closes,
        ``"none"`` without closed contacts, ``"direct"`` for
        :func:`impulse_dynamics`).
    names : tuple of str
    """

    __slots__ = ("base_twist", "q", "impulse", "velocity_before", "velocity_after",
                 "kinetic_energy_before", "kinetic_energy_after", "energy_loss",
                 "contact_energy_before", "contact_energy_after", "active", "residual",
                 "status", "names")
    __setattr__ = _frozen_setattr

    def __init__(self, **fields):
        _freeze(self, **fields)

    def __repr__(self):
        return (f"ImpactResult(active {list(self.active)}, energy loss "
                f"{self.energy_loss:.6g} J)")


def restitution_arg(e, m):
    """``e`` (m,): one number or one per row, each in ``[0, 1]``."""
    if np.ndim(e) == 0:
        return np.full(m, _real(e, "restitution", 0.0, 1.0))
    a = as_array(e, "restitution", shape=(m,))
    bad = np.flatnonzero((a < 0.0) | (a > 1.0))
    if bad.size:
        raise ValueError(f"restitution: expected coefficients in [0, 1], got {a[bad[0]]} at "
                         f"index {bad[0]}")
    return a


def _state(model, base_pose, base_twist, q):
    """``(V₀ (1, 6) or None, q (2, n), ν⁻)`` of a state."""
    fb = model.floating_base
    q2 = as_array(q, "q", ndim=2)[:2]
    if q2.shape != (2, model.n_joints):
        raise ValueError(f"q: expected a jet of shape (2, {model.n_joints}) (q, q̇), got "
                         f"{q2.shape}")
    if not fb:
        return None, q2, q2[1].copy()
    if base_twist is None:
        raise ValueError("base_twist: a floating base needs its twist V₀⁻, shape (1, 6)")
    V0 = as_array(base_twist, "base_twist", ndim=2)[:1]
    if V0.shape != (1, 6):
        raise ValueError(f"base_twist: expected shape (1, 6), got {V0.shape}")
    return V0, q2, np.concatenate([V0[0], q2[1]])


def _after(model, q2, nu):
    """``(V₀⁺, (q, q̇⁺))`` from ``ν⁺``."""
    if not model.floating_base:
        return None, np.vstack([q2[0], nu])
    return nu[None, :6].copy(), np.vstack([q2[0], nu[6:]])


def _contact_energy(W, v):
    """``½ vᵀ W⁺ v``."""
    if not v.size:
        return 0.0
    w, Q = np.linalg.eigh(0.5 * (W + W.T))
    keep = w > RANK_RTOL * max(w.max(), 1e-300)
    y = Q[:, keep].T @ v
    return float(0.5 * np.sum(y * y / w[keep]))


def _dense(model, cs, base_pose, V0, q2):
    """``M``, ``J``, ``M⁻¹ Jᵀ`` and ``W`` at the configuration."""
    M = mass_matrix(model, base_pose, q2[0])
    J = constraint_jacobian(model, cs, base_pose, None, q2[:1], 0)[0]
    MiJt = np.linalg.solve(M, J.T)
    W = J @ MiJt
    return M, J, MiJt, 0.5 * (W + W.T)


def impact(model, contacts, base_pose, base_twist, q, *, restitution=0.0, gap_tol=GAP_TOL,
           stops=None):
    """The velocity jump of an impact on frictionless unilateral point
    contacts with Newton restitution (SPEC §13.4).

    The closed contacts (``|φ| ≤ gap_tol``) take impulses ``Λ ≥ 0`` along
    their normals such that ``w = v_n⁺ + e min(v_n⁻, 0) ≥ 0`` and
    ``Λᵀ w = 0`` (module docstring); open contacts take none.

    Parameters
    ----------
    model : Model
    contacts : sequence of PointContact
    base_pose : (4, 4) or None
    base_twist : (1, 6) or None
        ``V₀⁻`` (``None`` for a fixed base; more rows: the first is read).
    q : (2, n)
        ``(q, q̇⁻)`` (more rows: the first two are read).
    restitution : float or (nc + ns,), keyword
        ``e ∈ [0, 1]``: 0 inelastic, 1 elastic (contacts, then stops).
    gap_tol : float, keyword
        Contacts with ``|φ| ≤ gap_tol`` (m) are closed, and stops with
        ``|s (q_j − limit)| ≤ gap_tol`` (rad or m).
    stops : sequence of JointStop, keyword
        Unilateral joint stops (``ns`` of them): rows ``s q̇_j`` (SPEC §13.1)
        that join the contacts' normal rows in the LCP, their impulses the
        joint impulses pushing off the stops. ``contacts`` may then be
        empty.

    Returns
    -------
    ImpactResult
        ``impulse`` and velocities ``(nc + ns,)`` along each contact's
        normal, then along each stop's ``s``.

    Raises
    ------
    ValueError, TypeError
        Bad arguments (a restitution outside ``[0, 1]``, naming it); a
        penetrating contact; an LCP the solver finds without solution, with
        its status.
    """
    check_model(model)
    sl = check_stops(model, stops)
    cl = check_contacts(model, contacts, allow_empty=len(sl) > 0)
    nc = len(cl)
    all_names = cl.names + sl.names
    e = restitution_arg(restitution, nc + len(sl))
    gap_tol = _real(gap_tol, "gap_tol", 0.0)
    V0, q2, nu = _state(model, base_pose, base_twist, q)
    phi = np.hstack([gap_jets(cl, _kinematics(model, base_pose, V0, q2, 1), 1),
                     np.array(sl.gaps(q2[0], q2[1])).reshape(2, -1)])
    for i, name in enumerate(all_names):
        if phi[0, i] < -gap_tol:
            what = "penetrates its plane" if i < nc else "is beyond its limit"
            raise ValueError(f"{'contact' if i < nc else 'stop'} {name!r}: {what} by "
                             f"{-phi[0, i]:.3e} {'m' if i < nc else '(rad or m)'} "
                             f"(gap_tol {gap_tol:g})")
    closed = np.flatnonzero(np.abs(phi[0]) <= gap_tol)
    M = mass_matrix(model, base_pose, q2[0])
    T0 = 0.5 * nu @ M @ nu
    imp, nu1 = np.zeros(len(all_names)), nu.copy()
    res, status, active, E0, E1 = np.zeros(3), "none", (), 0.0, 0.0
    if closed.size:
        cs = normal_constraints(cl, closed[closed < nc], sl.subset(closed[closed >= nc] - nc))
        _, J, MiJt, W = _dense(model, cs, base_pose, V0, q2)
        vm = J @ nu
        c = vm + e[closed] * np.minimum(vm, 0.0)                  # w = W Λ + c
        names = [all_names[i] for i in closed]
        Lam, w, A, _, status = solve_lcp(W, c, names, "impact LCP")
        nu1 = nu + MiJt @ Lam
        imp[closed] = Lam
        w = J @ nu1 + e[closed] * np.minimum(vm, 0.0)
        res[:] = max(0.0, -Lam.min()), max(0.0, -w.min()), np.abs(Lam * w).max()
        active = tuple(names[i] for i in np.flatnonzero(A))
        E0 = _contact_energy(W[np.ix_(A, A)], vm[A])
        E1 = _contact_energy(W[np.ix_(A, A)], (J @ nu1)[A])
    fk1 = _kinematics(model, base_pose, None if V0 is None else nu1[None, :6],
                      np.vstack([q2[0], nu1[6:] if V0 is not None else nu1]), 1)
    phi1 = np.concatenate([gap_jets(cl, fk1, 1)[1], sl.sign * nu1[-model.n_joints:][sl.joint]])
    T1 = 0.5 * nu1 @ M @ nu1
    Vp, qp = _after(model, q2, nu1)
    return ImpactResult(base_twist=Vp, q=qp, impulse=imp, velocity_before=phi[1].copy(),
                        velocity_after=phi1, kinetic_energy_before=float(T0),
                        kinetic_energy_after=float(T1), energy_loss=float(T0 - T1),
                        contact_energy_before=E0, contact_energy_after=E1, active=active,
                        residual=res, status=status, names=all_names)


def impulse_dynamics(model, constraints, base_pose, base_twist, q, *, restitution=0.0):
    """The velocity jump of an impact on bilateral constraints:
    ``M (ν⁺ − ν⁻) = Jᵀ Λ`` with ``J ν⁺ = −e J ν⁻`` on every row
    (Pinocchio's ``impulseDynamics``), ``Λ = −(1 + e) W⁺ J ν⁻``
    (``W = J M⁻¹ Jᵀ``, pseudo-inverse for redundant rows).

    Parameters
    ----------
    model : Model
    constraints : ConstraintSet
    base_pose, base_twist, q
        As :func:`impact`.
    restitution : float or (m,), keyword
        ``e ∈ [0, 1]``, one number or one per row.

    Returns
    -------
    ImpactResult
        ``impulse`` ``(m,)`` in the reported form of SPEC §13.1 (N s; 6-D
        rows: moment about the frame's origin, then force).

    Raises
    ------
    ValueError, TypeError
        Bad arguments (a restitution outside ``[0, 1]``).
    """
    check_model(model)
    cs = check_constraints(model, constraints)
    e = restitution_arg(restitution, cs.n_rows)
    V0, q2, nu = _state(model, base_pose, base_twist, q)
    M, J, MiJt, W = _dense(model, cs, base_pose, V0, q2)
    vm = J @ nu
    target = -(1.0 + e) * vm                                      # W Λ = v⁺ − v⁻
    w, Q = np.linalg.eigh(W)
    keep = w > RANK_RTOL * max(w.max(), 1e-300)
    Lam = (Q[:, keep] / w[keep]) @ (Q[:, keep].T @ target)
    nu1 = nu + MiJt @ Lam
    vp = J @ nu1
    T0, T1 = 0.5 * nu @ M @ nu, 0.5 * nu1 @ M @ nu1
    Vp, qp = _after(model, q2, nu1)
    rows = tuple(f"{n}[{i}]" if cs.rows[c].stop - cs.rows[c].start > 1 else n
                 for c, n in enumerate(cs.names) for i in range(cs.rows[c].stop - cs.rows[c].start))
    return ImpactResult(base_twist=Vp, q=qp, impulse=Lam, velocity_before=vm, velocity_after=vp,
                        kinetic_energy_before=float(T0), kinetic_energy_after=float(T1),
                        energy_loss=float(T0 - T1), contact_energy_before=_contact_energy(W, vm),
                        contact_energy_after=_contact_energy(W, vp), active=rows,
                        residual=np.array([np.abs(vp + e * vm).max(initial=0.0), 0.0, 0.0]),
                        status="direct", names=tuple(cs.names))
