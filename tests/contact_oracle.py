"""Dense references for the constrained dynamics (SPEC §13.2), sharing no
code with the articulated-body passes of :mod:`liedyn.contact.forward`.

:func:`kkt_jets` solves the differentiated equations of motion order by
order with the closed-form matrices (``liedyn.closed_form_jets``: ``M^(a)``,
``C^(a)``, ``g^(k)``, ``B``, the applied generalised force) and the Jacobian
jets of ``liedyn.constraint_jacobian``:

    [ M   −Jᵀ ] [ ν^(k+1) ]   [ b_k ]
    [ J    0  ] [ λ^(k)   ] = [ c_k ]

    b_k = τ̄^(k) − h^(k) − Σ_{a=1}^{k} binom(k, a) M^(a) ν^(k+1−a)
                         + Σ_{a=1}^{k} binom(k, a) J^(a)ᵀ λ^(k−a)
    h^(k) = Σ_{a=0}^{k} binom(k, a) C^(k−a) ν^(a) + B ν^(k) + g^(k) − Q_app^(k)
    c_k = − Σ_{a=1}^{k+1} binom(k+1, a) J^(a) ν^(k+1−a)  (− 2α (Jν)^(k) − β² φ^(k))

by a dense solve (``numpy.linalg.solve``), or, for a rank-deficient ``J``,
by the minimum-norm least-squares solution of the same system
(``numpy.linalg.lstsq``): ``ν^(k+1)`` is unique there and the minimum-norm
``λ^(k)`` is orthogonal to the null space of ``Jᵀ``.

The closed-form jets of order ``k`` read ``ν^(0..k+1)``; at order ``k`` the
unknown ``ν^(k+1)`` is padded with zeros, which only enters the jets'
``velocity`` row ``k + 1`` (``M^(a)``, ``C^(a)``, ``g^(a)`` for ``a ≤ k``
depend on ``ν^(0..a)``; ``test_oracle_reads_no_unknown_row`` checks it).
"""

from math import comb

import numpy as np

import liedyn as ld


def motion_jets(model, nu, q0):
    """``(base_twist (rows, 6) or None, q (rows+1, n))`` from the generalised
    velocity jet ``nu (rows, nv)`` and the joint positions ``q0 (n,)``."""
    if model.floating_base:
        return nu[:, :6].copy(), np.vstack([q0, nu[:, 6:]])
    return None, np.vstack([q0, nu])


def generalised_velocity(model, base_twist, q):
    """``ν`` jet ``(rows, nv)`` from the motion jets (``rows = q.shape[0] − 1``)."""
    rows = q.shape[0] - 1
    if model.floating_base:
        return np.hstack([base_twist[:rows], q[1:]])
    return np.array(q[1:], float)


def constraint_rate(J, nu, k):
    """``(J ν)^(k) = Σ_a binom(k, a) J^(a) ν^(k−a)`` from the jets
    ``J (≥ k+1, m, nv)`` and ``nu (≥ k+1, nv)``."""
    return sum(comb(k, a) * J[a] @ nu[k - a] for a in range(k + 1))


def kkt_jets(model, cs, base_pose, base_twist, q, order, *, tau, base_wrench=None,
             applied=None, baumgarte=None, phi=None):
    """Dense order-by-order solution of SPEC §13.2.

    Parameters as :func:`liedyn.constrained_forward_dynamics` (``base_twist
    (1, 6)`` or None, ``q (2, n)``); ``phi (m,)``: the position error, needed
    when ``baumgarte`` has ``β > 0``.

    Returns
    -------
    nu : (order+2, nv)
        ``ν^(0..order+1)``.
    lam : (order+1, m)
        ``λ^(0..order)``.
    rank : int
        ``rank(J)`` (numpy's default tolerance).
    """
    nv, m, n = model.nv, cs.n_rows, model.n_joints
    alpha, beta = (0.0, 0.0) if baumgarte is None else baumgarte
    nu = np.zeros((order + 2, nv))
    nu[:1] = generalised_velocity(model, base_twist, q[:2])
    lam = np.zeros((order + 1, m))
    if model.floating_base:
        tbar = np.hstack([base_wrench, tau])
    else:
        tbar = np.array(tau, float)
    q0 = np.asarray(q[0], float)
    rank = None
    for k in range(order + 1):
        Vb, qj = motion_jets(model, nu[:k + 2], q0)        # row k + 1 of ν: zeros (unknown)
        cf = ld.closed_form_jets(model, base_pose, Vb, qj, k,
                                 applied=None if applied is None else applied[:k + 1])
        J = ld.constraint_jacobian(model, cs, base_pose, None if Vb is None else Vb[:k + 1],
                                   qj[:k + 2], k + 1)
        M, C, g, B, Q = cf.mass, cf.coriolis, cf.gravity, cf.damping, cf.applied_force
        h = g[k] - Q[k] + B @ nu[k]
        for a in range(k + 1):
            h = h + comb(k, a) * C[k - a] @ nu[a]
        b = tbar[k] - h
        for a in range(1, k + 1):
            b = b - comb(k, a) * M[a] @ nu[k + 1 - a] + comb(k, a) * J[a].T @ lam[k - a]
        c = -sum(comb(k + 1, a) * J[a] @ nu[k + 1 - a] for a in range(1, k + 2))
        if alpha or beta:
            c = c - 2.0 * alpha * constraint_rate(J, nu, k)
            if beta:
                c = c - beta ** 2 * (phi if k == 0 else constraint_rate(J, nu, k - 1))
        K = np.block([[M[0], -J[0].T], [J[0], np.zeros((m, m))]])
        rhs = np.concatenate([b, c])
        if rank is None:
            rank = int(np.linalg.matrix_rank(J[0]))
        x = (np.linalg.solve(K, rhs) if rank == m else
             np.linalg.lstsq(K, rhs, rcond=None)[0])
        nu[k + 1] = x[:nv]
        lam[k] = x[nv:]
    return nu, lam, rank


def pad_velocity(model, res):
    """``ν^(0..order+1)`` ``(order+2, nv)`` of a constrained forward dynamics
    result."""
    return generalised_velocity(model, res.base_twist if model.floating_base else None, res.q)
