"""Coulomb friction at point contacts: the cone margin and its jets, the time
to slip it predicts, and the contact-force distribution of inverse dynamics
constrained to friction cones (SPEC §13.4).

Cone margin of a point force ``λ`` (world) against a plane of normal ``n``:

    λ_n = nᵀλ,   λ_t = λ − n λ_n,   u = ‖λ_t‖,   s = μ λ_n − u

with jets ``λ_n^(k) = nᵀλ^(k)``, ``g = λ_tᵀλ_t``,
``g^(k) = Σ_a binom(k, a) λ_t^(a)ᵀ λ_t^(k−a)`` and, from ``u² = g``,
``u^(k) = (g^(k) − Σ_{a=1}^{k−1} binom(k, a) u^(a) u^(k−a)) / (2u)``
(``u > 0``: the norm is not differentiable where the tangential force
vanishes).

Distribution: the base wrench ``w = W₀^ID`` that the contacts must supply is
split by ``min ½ λᵀ R λ  s.t.  A λ = w,  G λ ≤ 0`` with each cone replaced
by the inscribed pyramid of ``F`` facets fixed in the world,

    g_ijᵀ λ_i = d_ijᵀ λ_i − μ_i cos(π/F) n_iᵀ λ_i ≤ 0,
    d_ij = cos(2πj/F) t_1 + sin(2πj/F) t_2      (j = 0..F−1)

(``t_1, t_2`` a fixed world basis of the plane): a force inside the
pyramid is inside the cone, and the pyramid holds every tangential
direction up to ``μ cos(π/F) λ_n``. Clarabel finds the active facets, the
equality-constrained problem on them is solved exactly, and its jets are
those of the minimum-norm KKT system of SPEC §13.3 with the rows
``E = [A; G_A]``, ``w = [W₀^ID; 0]`` (``G`` constant: the facets are fixed
in the world), valid where the active set is strict.

Glossary
--------
=========  ==============  ==============================================
``n``      (nc, 3)         contact normals
``mu``     (nc,)           friction coefficients ``μ``
``F``      int             facets per pyramid
``G``      (nc F, 3 nc)    facet rows ``g_ijᵀ``
``A``      (r+1, 6, 3nc)   base block of ``Jᵀ`` and its jets
``w``      (r+1, 6)        ``W₀^ID`` jets
=========  ==============  ==============================================
"""

import numpy as np

from .._checks import as_array, check_jet, check_motion_slow
from ..algorithm.inverse import inverse_dynamics
from ..multibody.model import check_model_order
from ..multibody.results import _freeze, _frozen_setattr
from ..multibody.workspace import binomials
from ._qp import INFEASIBLE, SOLVED, solve_qp
from .constraints import _kinematics, _normal_arg, jacobian_jets
from .gaps import _real, check_contacts, point_constraints
from ._min_norm import _min_norm_jets
from .inverse import _consistency, _weight_arg, constrained_inverse_dynamics

__all__ = ["friction_cone_margin", "time_to_slip", "friction_cone_distribution",
           "FrictionDistributionResult"]

SIGN_TOL = 1e-9           # relative: slacks and multipliers ≥ −SIGN_TOL·scale are ≥ 0
STRICT_TOL = 1e-8         # relative: slack and multiplier both below this is degenerate
ZERO_TANGENT = 1e-12      # ‖λ_t‖ ≤ this times |λ| counts as zero
ROOT_IMAG = 1e-7          # a root with |Im t| ≤ this times |t| is real



def friction_cone_margin(force, normal, mu):
    """Jets of the Coulomb cone margin ``s = μ λ_n − ‖λ_t‖`` of a point force
    (SPEC §13.4): ``s ≥ 0`` inside the cone, ``s = 0`` on it (about to slip).

    Parameters
    ----------
    force : (r+1, 3)
        The force jet ``λ^(0..r)`` on the body, world axes (a ``Contact3D``
        force, e.g. ``result.force_of(name)``).
    normal : (3,)
        Contact normal (world; normalised here), out of the supporting surface.
    mu : float ≥ 0
        Friction coefficient.

    Returns
    -------
    (r+1,)
        ``s^(0..r)`` (N, N/s, …).

    Raises
    ------
    ValueError
        A negative ``mu``, a zero normal; ``r ≥ 1`` with a zero tangential
        force (``‖λ_t‖`` is not differentiable there).
    """
    lam = as_array(force, "force", ndim=2)
    if lam.shape[1:] != (3,) or lam.shape[0] < 1:
        raise ValueError(f"force: expected a jet of shape (r+1, 3), got {lam.shape}")
    n = _normal_arg(normal)
    mu = _real(mu, "mu (friction coefficient)", 0.0)
    r = lam.shape[0] - 1
    B = binomials(r)
    ln = lam @ n                                                  # λ_n^(k)
    lt = lam - np.outer(ln, n)                                    # λ_t^(k)
    g = np.array([sum(B[k, a] * lt[a] @ lt[k - a] for a in range(k + 1)) for k in range(r + 1)])
    u = np.zeros(r + 1)
    u[0] = np.sqrt(g[0])
    if r and u[0] <= ZERO_TANGENT * max(np.abs(lam[0]).max(), 1e-300):
        raise ValueError("force: the tangential force is zero, where ‖λ_t‖ is not "
                         "differentiable: the margin has no derivatives (order 0 only)")
    for k in range(1, r + 1):
        u[k] = (g[k] - sum(B[k, a] * u[a] * u[k - a] for a in range(1, k))) / (2.0 * u[0])
    return mu * ln - u


def time_to_slip(margin, horizon=None):
    """First ``t > 0`` at which the Taylor polynomial of the cone margin,
    ``s(t) ≈ Σ_k s^(k) tᵏ / k!``, reaches zero (SPEC §13.4).

    This is a prediction from the current jets: exact when the margin is a
    polynomial of degree ≤ r along the motion (a force ramp), otherwise with
    the truncation error ``O(t^(r+1))``, so trustworthy only while the last
    terms are small against ``s(0)``; and only while the inputs follow their
    jets and the contacts keep their active set.

    Parameters
    ----------
    margin : (r+1,)
        ``s^(0..r)`` (:func:`friction_cone_margin`).
    horizon : float > 0 or None
        Roots beyond ``horizon`` are ignored.

    Returns
    -------
    float
        ``0.0`` if ``s(0) ≤ 0`` (outside or on the cone already); ``inf``
        if the polynomial has no positive real root (within ``horizon``).
    """
    s = as_array(margin, "margin", ndim=1)
    if s.size < 1:
        raise ValueError("margin: expected a jet of shape (r+1,), got an empty one")
    hz = np.inf if horizon is None else _real(horizon, "horizon", 0.0)
    if s[0] <= 0.0:
        return 0.0
    fact = np.cumprod(np.concatenate([[1.0], np.arange(1, s.size)]))
    c = s / fact
    while c.size > 1 and c[-1] == 0.0:
        c = c[:-1]
    if c.size < 2:
        return np.inf
    roots = np.polynomial.polynomial.polyroots(c)
    real = roots.real[(np.abs(roots.imag) <= ROOT_IMAG * np.abs(roots)) & (roots.real > 0)]
    real = real[real <= hz]
    return float(real.min()) if real.size else np.inf


class FrictionDistributionResult:
    """Output of :func:`liedyn.friction_cone_distribution` of order ``r``.

    Attributes
    ----------
    tau : (r+1, n)
        Joint force jets.
    force : (r+1, 3 nc)
        Contact force jets (world force at each touching point: the frame
        origin of a point, ``p − ρ n`` of a sphere; rows as
        ``constraints.rows``).
    base_residual : (r+1, 6)
        What the base would still need besides the contact forces (zero to
        round-off: a legged robot's base has no actuators).
    margin : (nc,)
        The exact cone margins ``μ λ_n − ‖λ_t‖`` at order 0 (≥ 0).
    active_facets : tuple of tuple of int
        Per contact, the pyramid facets ``j`` the force lies on.
    degenerate : tuple of str
        ``"<contact>[j]"`` for facets with zero slack and zero multiplier
        (only at ``order = 0``: otherwise refused).
    status : str
        The QP solver's status.
    constraints : ConstraintSet
        The contacts as ``Contact3D`` (points) and ``RollingContact``
        (spheres) constraints.
    names : tuple of str
    """

    __slots__ = ("tau", "force", "base_residual", "margin", "active_facets", "degenerate",
                 "status", "constraints", "names")
    __setattr__ = _frozen_setattr

    def __init__(self, **fields):
        _freeze(self, **fields)

    def force_of(self, name):
        """The force jet ``(r+1, 3)`` of the contact called ``name``."""
        return self.force[:, self.constraints.rows[self.constraints.index(name)]]

    def __repr__(self):
        return f"FrictionDistributionResult(order {self.tau.shape[0] - 1}, {self.names})"


def _tangent_basis(n):
    """A fixed orthonormal basis ``(t_1, t_2)`` of the plane of normal ``n``."""
    e = np.eye(3)[int(np.argmin(np.abs(n)))]
    t1 = np.cross(n, e)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(n, t1)


def facet_rows(normals, mu, F):
    """``G`` (nc F, 3 nc): the inscribed pyramid facets (module docstring)."""
    nc = len(normals)
    G = np.zeros((nc * F, 3 * nc))
    for i, n in enumerate(normals):
        t1, t2 = _tangent_basis(n)
        for j in range(F):
            th = 2.0 * np.pi * j / F
            G[i * F + j, 3 * i:3 * i + 3] = (np.cos(th) * t1 + np.sin(th) * t2
                                             - mu[i] * np.cos(np.pi / F) * n)
    return G


def _kkt_on(R, A, w, G, act):
    """``λ`` and the facet multipliers ``z`` (of all rows, zero off ``act``)
    of ``min ½ λᵀRλ  s.t.  Aλ = w,  G_act λ = 0``; the rank of ``[A; G_act]``."""
    E = np.vstack([A, G[act]])
    u, s = R.shape[0], E.shape[0]
    K = np.block([[R, -E.T], [E, np.zeros((s, s))]])
    rhs = np.concatenate([np.zeros(u), w, np.zeros(int(act.sum()))])
    y = np.linalg.lstsq(K, rhs, rcond=None)[0]
    z = np.zeros(G.shape[0])
    z[act] = -y[u + A.shape[0]:]
    return y[:u], z, np.linalg.matrix_rank(E)


def _cone_qp(R, A, w, G, names, F):
    """The order-0 distribution: Clarabel for the active facets, then the
    exact solve on them; returns ``(λ, z, active, degenerate rows, rank of
    E, status)``."""
    sw = max(np.abs(w).max(), 1e-300)
    sR = np.abs(R).max()
    sol = solve_qp(R / sR, np.zeros(R.shape[0]), A, w / sw, G, np.zeros(G.shape[0]))
    if sol.status in INFEASIBLE:
        raise ValueError(f"mu: the contacts {list(names)} cannot supply the base wrench within "
                         f"their friction cones (inscribed pyramids of {F} facets): the solver "
                         f"(Clarabel) reports {sol.status}; the robot cannot stand there with "
                         "these friction coefficients")
    if sol.status not in SOLVED:
        raise RuntimeError(f"friction-cone distribution: the solver (Clarabel) reports "
                           f"{sol.status}; no solution is returned")
    act = sol.z > sol.s                     # scaled problem: R/|R| ~ 1, λ/|w| ~ 1
    for _ in range(4 * G.shape[0] + 4):                        # exact signs by pivots
        lam, z, rank = _kkt_on(R, A, w, G, act)
        sl = max(np.abs(lam).max(), 1e-300)
        sz = sl * sR / max(np.abs(G).max(), 1e-300)            # R λ ~ Gᵀ z
        slack = -G @ lam
        bad_s = np.where(~act, -slack / sl, 0.0)
        bad_z = np.where(act, -z / sz, 0.0)
        worst = max(bad_s.max(), bad_z.max())
        if np.abs(A @ lam - w).max() > SIGN_TOL * sw:          # dependent, inconsistent facets
            act[np.flatnonzero(act)[np.argmin(z[act])]] = False
            continue
        if worst <= SIGN_TOL:
            deg = np.flatnonzero((np.abs(slack) <= STRICT_TOL * sl)
                                 & (np.abs(z) <= STRICT_TOL * sz))
            return lam, z, act, deg, rank, sol.status
        i = int(np.argmax(np.maximum(bad_s, bad_z)))
        act[i] = not act[i]
    raise RuntimeError("friction-cone distribution: no active set of facets satisfies the "
                       f"signs after pivoting from the solver's (Clarabel) solution; worst "
                       f"relative violation {worst:.2e}")


def _mu_arg(mu, names):
    m = len(names)
    if np.ndim(mu) == 0:
        mu = np.full(m, _real(mu, "mu (friction coefficient)"))
    else:
        mu = as_array(mu, "mu", shape=(m,))
    bad = np.flatnonzero(mu < 0)
    if bad.size:
        raise ValueError(f"mu: a friction coefficient must be ≥ 0, got {mu[bad[0]]} for contact "
                         f"{names[bad[0]]!r}")
    return mu


def friction_cone_distribution(model, contacts, base_pose, base_twist, q, order, *, mu,
                               facets=4, weight=None, applied=None):
    """Contact-force distribution of inverse dynamics with the forces held
    in friction cones, and its jets (SPEC §13.4).

    The forces ``λ`` (world, one 3-D force per point contact) that supply
    the base wrench of :func:`liedyn.inverse_dynamics` with the least
    ``½ λᵀ R λ``, each in the inscribed pyramid of its Coulomb cone (module
    docstring); then ``τ^(k)`` as :func:`liedyn.constrained_inverse_dynamics`.
    The jets are the derivatives of this solution while its active facets
    stay the same.

    Parameters
    ----------
    model : Model
        Floating base (a fixed base has no base rows to distribute).
    contacts : sequence of PointContact
        Points or spheres (round feet); each plane gives the cone's normal.
        A sphere's force acts at its touching point ``p − ρ n``
        (:class:`liedyn.RollingContact`), a point's at the frame origin.
    base_pose, base_twist, q, order, applied
        As :func:`liedyn.constrained_inverse_dynamics`: a motion that keeps
        the contacts still (a sphere may roll: its material point at the
        touching point is still).
    mu : float or (nc,), keyword
        Friction coefficients ``≥ 0``.
    facets : int ≥ 3, keyword
        Facets per pyramid ``F``.
    weight : (3 nc,) or (3 nc, 3 nc), keyword
        ``R`` (default ``I``).

    Returns
    -------
    FrictionDistributionResult

    Raises
    ------
    ValueError, TypeError
        Bad arguments (a negative ``mu``, a contact frame that does not
        exist, a fixed base), naming them; no distribution
        within the cones (the robot cannot stand there), with the solver's
        status; ``order ≥ 1`` where the active facets are not strict or not
        independent (naming the contact).
    """
    r = check_model_order(model, order)
    if not model.floating_base:
        raise ValueError("model: a fixed base has no base rows to distribute over the contacts; "
                         "use liedyn.constrained_inverse_dynamics with force=")
    cl = check_contacts(model, contacts)
    mu = _mu_arg(mu, cl.names)
    if isinstance(facets, bool) or not isinstance(facets, (int, np.integer)) or facets < 3:
        raise ValueError(f"facets: expected an int ≥ 3, got {facets!r}")
    F = int(facets)
    cs = point_constraints(cl)
    m = cs.n_rows
    R = _weight_arg(weight, m)
    C0, Vj, qj = check_motion_slow(model, base_pose, base_twist, q, r + 2, r + 3)
    J = jacobian_jets(cs, _kinematics(model, C0, Vj, qj, r + 1), r + 1)
    _consistency(cs, J, np.hstack([Vj[:r + 2], qj[1:r + 3]]), r)
    if applied is not None:
        applied = check_jet(applied, "applied", (r + 1, model.n_bodies, 6))
    w = np.array(inverse_dynamics(model, C0, Vj, qj, r, applied=applied).base_wrench)
    A = np.transpose(J[:r + 1, :, :6], (0, 2, 1))                 # (r+1, 6, m)
    G = facet_rows(cl.normal, mu, F)
    lam0, z, act, deg, rank, status = _cone_qp(R, A[0], w[0], G, cl.names, F)
    label = [f"{cl.names[i // F]}[{i % F}]" for i in range(G.shape[0])]
    if r > 0 and deg.size:
        raise ValueError(f"contact {cl.names[deg[0] // F]!r}: facet {deg[0] % F} of its friction "
                         "pyramid has zero slack and zero multiplier together: the active set "
                         "may change either way, so the distribution is not differentiable at "
                         "this instant; only order 0 is defined")
    E = np.concatenate([A, np.zeros((r + 1, int(act.sum()), m))], axis=1)
    E[0, 6:] = G[act]                                             # G constant: G^(a≥1) = 0
    if r > 0 and rank < E.shape[1]:
        i = int(np.flatnonzero(act)[0])
        raise ValueError(f"contact {cl.names[i // F]!r}: the active pyramid facets and the base "
                         f"rows are dependent (rank {rank} of {E.shape[1]}; e.g. a contact "
                         "with zero force has every facet active): their multipliers are not "
                         "unique, so the force jets are not defined; only order 0 is")
    if r > 0:
        rhs = np.concatenate([w, np.zeros((r + 1, int(act.sum())))], axis=1)
        lam = np.zeros((r + 1, m))                                # E₀ of full row rank (above)
        _min_norm_jets(np.ascontiguousarray(E), rhs, np.ascontiguousarray(R), r, binomials(r), lam)
    else:
        lam = lam0[None]
    inv = constrained_inverse_dynamics(model, cs, C0, Vj, qj, r, force=lam, applied=applied)
    ln = np.array([lam0[3 * i:3 * i + 3] @ cl.normal[i] for i in range(len(cl))])
    lt = np.array([np.linalg.norm(lam0[3 * i:3 * i + 3] - ln[i] * cl.normal[i])
                   for i in range(len(cl))])
    facets_of = tuple(tuple(int(i % F) for i in np.flatnonzero(act) if i // F == c)
                      for c in range(len(cl)))
    return FrictionDistributionResult(tau=np.array(inv.tau), force=np.array(lam, float),
                                      base_residual=np.array(inv.base_wrench),
                                      margin=mu * ln - lt, active_facets=facets_of,
                                      degenerate=tuple(label[i] for i in deg), status=status,
                                      constraints=cs, names=cl.names)
