"""One interface to the convex quadratic programs of the unilateral contact
modules (SPEC §13.4): Clarabel, an interior-point conic solver, imported on
first use (the optional extra ``liedyn[contact]``).

    min ½ xᵀ P x + cᵀ x    s.t.  E x = e,  G x ≤ g

Returns the primal ``x``, the multipliers ``z ≥ 0`` of ``G x ≤ g`` and the
slacks ``s = g − G x ≥ 0``, to the solver's tolerance (below); the callers
then find the active set from them and solve the equality-constrained
problem on it exactly, so what they return satisfies complementarity to
round-off, not to the interior-point tolerance.
"""

import numpy as np

# Clarabel's stopping tolerances (relative duality gap, feasibility): tighter
# than its defaults (1e-8) so that the active set read from (z, s) is clear.
TOL = 1e-10
MAX_ITER = 200


def _clarabel():
    try:
        import clarabel
    except ImportError:
        raise ImportError("the unilateral contact, impact and friction solvers need Clarabel: "
                          "pip install clarabel (or liedyn's contact extra: "
                          "pip install 'liedyn[contact]')") from None
    return clarabel


class QPSolution:
    """``x``, ``z`` (multipliers of ``G x ≤ g``), ``s`` (its slacks) and the
    solver's ``status`` (a str)."""

    __slots__ = ("x", "z", "s", "status")

    def __init__(self, x, z, s, status):
        self.x, self.z, self.s, self.status = x, z, s, status


SOLVED = ("Solved",)
INFEASIBLE = ("PrimalInfeasible", "AlmostPrimalInfeasible")
UNBOUNDED = ("DualInfeasible", "AlmostDualInfeasible")


def solve_qp(P, c, E, e, G, g):
    """Solve the QP of the module docstring (``E`` (p, u) and ``G`` (l, u)
    may have zero rows); ``status`` is Clarabel's, and ``x`` is meaningful
    only when it is ``"Solved"``."""
    from scipy import sparse
    clarabel = _clarabel()
    u = P.shape[0]
    A = np.vstack([E.reshape(-1, u), G.reshape(-1, u)])
    b = np.concatenate([e, g])
    cones = []
    if E.shape[0]:
        cones.append(clarabel.ZeroConeT(E.shape[0]))
    if G.shape[0]:
        cones.append(clarabel.NonnegativeConeT(G.shape[0]))
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = TOL
    settings.max_iter = MAX_ITER
    solver = clarabel.DefaultSolver(sparse.triu(sparse.csc_matrix(0.5 * (P + P.T))).tocsc(),
                                    np.asarray(c, float), sparse.csc_matrix(A), b, cones,
                                    settings)
    sol = solver.solve()
    status = str(sol.status).split(".")[-1]
    p = E.shape[0]
    return QPSolution(np.array(sol.x), np.array(sol.z)[p:], np.array(sol.s)[p:], status)
