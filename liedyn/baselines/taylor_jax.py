"""Taylor-mode automatic differentiation of the order-0 maps (SPEC §16), in JAX.

The order-0 inverse map ``(C₀, V₀, V̇₀, q, q̇, q̈) → (W₀, τ)`` (a world-frame
Newton–Euler) and forward map ``(C₀, V₀, q, q̇, W₀, τ) → (V̇₀, q̈)`` (the
articulated-body algorithm, the base's 6×6 system by an unrolled LDLᵀ) are
written here in ``jax.numpy`` from the model's data, with the loops over
bodies unrolled at trace time (``jet`` has no rule for ``scan`` or
``while``). ``jax.experimental.jet`` then pushes the Taylor series of the
inputs — the jets, with the base pose's jet ``C₀^(k)`` of SPEC §3 — through
every elementary operation, giving the outputs' derivatives ``0..r`` at a cost
that grows as ``r²``; the whole is compiled once per order with ``jax.jit``.
It shares no code with liedyn's recursions.

Needs JAX (``pip install 'liedyn[jax]'``); float64 is switched on for JAX
(``jax_enable_x64``) when this module is imported.

::

    tj = TaylorJax(model)
    W0, tau = tj.inverse_dynamics(C0, base_twist, q, r)        # (r+1, 6), (r+1, n)
    V0, qj = tj.forward_dynamics(C0, base_twist[:1], q[:2], r, tau=tau, base_wrench=W0)
    seconds = tj.compile_inverse(r)                             # XLA compile time, apart
"""

import time
from math import comb

import numpy as np

try:
    import jax
    import jax.numpy as jnp
    from jax.experimental.jet import jet
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("liedyn.baselines.taylor_jax needs JAX: pip install 'liedyn[jax]'") from exc

jax.config.update("jax_enable_x64", True)

from .._checks import check_jet, check_order, check_pose                 # noqa: E402
from ..multibody.model import JOINT_REVOLUTE, check_model                          # noqa: E402


def _cross(a, b):
    return jnp.stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                      a[0] * b[1] - a[1] * b[0]])


def _hat(w):
    z = jnp.zeros_like(w[0])
    return jnp.stack([jnp.stack([z, -w[2], w[1]]), jnp.stack([w[2], z, -w[0]]),
                      jnp.stack([-w[1], w[0], z])])


def _ad(V, X):
    return jnp.concatenate([_cross(V[:3], X[:3]), _cross(V[3:], X[:3]) + _cross(V[:3], X[3:])])


def _ad_star(V, W):
    """``−ad_Vᵀ W = (ω × m + v × f, ω × f)`` (SPEC §1), so that
    ``Π̇ = M V̇ − ad_Vᵀ M V``."""
    return jnp.concatenate([_cross(V[:3], W[:3]) + _cross(V[3:], W[3:]), _cross(V[:3], W[3:])])


def base_pose_jet(C0, V0, rows):
    """``C₀^(0..rows−1)`` from ``C₀^(k) = Σ_a binom(k−1, a) [V₀^(a)] C₀^(k−1−a)``
    (SPEC §3); ``(rows, 4, 4)``."""
    out = [np.asarray(C0, float)]
    for k in range(1, rows):
        acc = np.zeros((4, 4))
        for a in range(k):
            w, v = V0[a, :3], V0[a, 3:]
            X = np.zeros((4, 4))
            X[:3, :3] = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
            X[:3, 3] = v
            acc += comb(k - 1, a) * X @ out[k - 1 - a]
        out.append(acc)
    return np.stack(out)


class TaylorJax:
    """Taylor-mode AD (``jax.experimental.jet``) of a model's order-0 maps.

    Parameters
    ----------
    model : Model
    applied : bool, keyword
        Include applied wrench jets (spatial, world frame, ``(r+1, N, 6)``).
    by_level : bool, keyword
        Inverse map only: process the bodies of one depth in the tree together
        (batched products, parents gathered, children summed by a constant
        incidence matrix), a graph about ``N / depth`` times smaller for XLA to
        compile; the same numbers. Default: one body at a time.
    """

    def __init__(self, model, *, applied=False, by_level=False):
        check_model(model)
        self.model = model
        self.applied = bool(applied)
        self.by_level = bool(by_level)
        self.N, self.n = model.n_bodies, model.n_joints
        self._parent = [int(p) for p in model.body_parent]
        self._revolute = [None] + [int(t) == JOINT_REVOLUTE for t in model.joint_type]
        self._inv, self._fwd = {}, {}

    # ---------------------------------------------------------- order 0 --

    def _poses(self, C0, q):
        """Spatial screws ``S_j`` and the world CoM and rotational inertia
        (about the CoM) of every body."""
        m = self.model
        F, S, c, I = [C0], [None], [], []
        for j in range(self.N):
            if j:
                Y = np.asarray(m.joint_screw[j - 1])
                e, v = Y[:3], Y[3:]
                qj = q[j - 1]
                if self._revolute[j]:
                    s, k = jnp.sin(qj), 1.0 - jnp.cos(qj)
                    E = np.array([[0, -e[2], e[1]], [e[2], 0, -e[0]], [-e[1], e[0], 0]])
                    R = jnp.eye(3) + s * E + k * (E @ E)
                    p = s * v + k * np.cross(e, v)
                else:
                    R, p = jnp.eye(3), qj * v
                Fp = F[self._parent[j]]
                Rj = Fp[:3, :3] @ R
                pj = Fp[:3, :3] @ p + Fp[:3, 3]
                Fj = jnp.concatenate([jnp.concatenate([Rj, pj[:, None]], axis=1),
                                      jnp.asarray([[0.0, 0.0, 0.0, 1.0]])], axis=0)
                F.append(Fj)
                w = Rj @ Y[:3]
                S.append(jnp.concatenate([w, Rj @ Y[3:] + _cross(pj, w)]))
            Cj = F[j] @ jnp.asarray(m.body_home[j])
            c.append(Cj[:3, :3] @ jnp.asarray(m.body_com[j]) + Cj[:3, 3])
            I.append(Cj[:3, :3] @ jnp.asarray(m.body_rot_inertia[j]) @ Cj[:3, :3].T)
        return S, c, I

    def _inertia(self, j, c, I):
        mj = float(self.model.body_mass[j])
        C = _hat(c)
        top = I + mj * (C @ C.T)
        return jnp.concatenate([jnp.concatenate([top, mj * C], axis=1),
                                jnp.concatenate([mj * C.T, mj * jnp.eye(3)], axis=1)], axis=0)

    def _gravity_twist(self):
        return jnp.concatenate([jnp.zeros(3), jnp.asarray(self.model.gravity)])

    def inverse_map(self, C0, V0, A0, q, qd, qdd, Wa=None):
        """``(W₀ (6,), τ (n,))`` at one instant: the world-frame Newton–Euler."""
        m, N = self.model, self.N
        S, c, I = self._poses(C0, q)
        G = self._gravity_twist()
        V, A, W = [V0], [A0], []
        for j in range(1, N):
            p = self._parent[j]
            V.append(V[p] + S[j] * qd[j - 1])
            A.append(A[p] + S[j] * qdd[j - 1] + _ad(V[j], S[j]) * qd[j - 1])
        for j in range(N):
            M = self._inertia(j, c[j], I[j])
            Wj = M @ A[j] + _ad_star(V[j], M @ V[j]) - M @ G
            if Wa is not None:
                Wj = Wj - Wa[j]
            W.append(Wj)
        tau = [None] * self.n
        for j in range(N - 1, 0, -1):
            W[self._parent[j]] = W[self._parent[j]] + W[j]
            tau[j - 1] = (S[j] @ W[j] + m.joint_armature[j - 1] * qdd[j - 1]
                          + m.joint_damping[j - 1] * qd[j - 1])
        return W[0], jnp.stack(tau) if self.n else jnp.zeros(0)

    def _levels(self):
        """Per depth: body indices, the parents' positions in the level above,
        and the batched constants."""
        if getattr(self, "_lv", None) is None:
            m = self.model
            depth = np.zeros(self.N, int)
            for j in range(1, self.N):
                depth[j] = depth[self._parent[j]] + 1
            levels = [np.flatnonzero(depth == d) for d in range(depth.max() + 1)]
            pos = np.zeros(self.N, int)
            for L in levels:
                pos[L] = np.arange(L.size)
            out = []
            for d, L in enumerate(levels):
                e = dict(bodies=L, home=m.body_home[L], com=m.body_com[L],
                         J=m.body_rot_inertia[L], mass=m.body_mass[L])
                if d:
                    Y = m.joint_screw[L - 1]
                    rev = np.array([1.0 if self._revolute[j] else 0.0 for j in L])
                    E = np.zeros((L.size, 3, 3))
                    E[:, 0, 1], E[:, 0, 2], E[:, 1, 2] = -Y[:, 2], Y[:, 1], -Y[:, 0]
                    E[:, 1, 0], E[:, 2, 0], E[:, 2, 1] = Y[:, 2], -Y[:, 1], Y[:, 0]
                    par = pos[[self._parent[j] for j in L]]
                    P = np.zeros((levels[d - 1].size, L.size))
                    P[par, np.arange(L.size)] = 1.0          # parent of column c is row par[c]
                    e.update(Y=Y, rev=rev, E=E, E2=E @ E, exv=np.cross(Y[:, :3], Y[:, 3:]),
                             parent_pos=par, P=P, arm=m.joint_armature[L - 1],
                             damp=m.joint_damping[L - 1])
                out.append(e)
            self._lv = out
        return self._lv

    def _inverse_map_by_level(self, C0, V0, A0, q, qd, qdd, Wa=None):
        """:meth:`inverse_map` with the bodies of one depth batched."""
        lv = self._levels()
        G = self._gravity_twist()
        bx = lambda a, b: jnp.cross(a, b)                                # noqa: E731
        Rs, ps, Vs, As, Ss, Ws = [], [], [], [], [], []
        for d, e in enumerate(lv):
            if d == 0:
                R, p = C0[None, :3, :3], C0[None, :3, 3]
                V, A, S = V0[None], A0[None], None
            else:
                cols = e["bodies"] - 1
                qj, qdj, qddj = q[cols], qd[cols], qdd[cols]
                s, k = e["rev"] * jnp.sin(qj), e["rev"] * (1.0 - jnp.cos(qj))
                ER = (jnp.eye(3)[None] + s[:, None, None] * e["E"]
                      + k[:, None, None] * e["E2"])
                Ep = (s[:, None] * e["Y"][:, 3:] + k[:, None] * e["exv"]
                      + ((1.0 - e["rev"]) * qj)[:, None] * e["Y"][:, 3:])
                Rp, pp = Rs[-1][e["parent_pos"]], ps[-1][e["parent_pos"]]
                R = jnp.einsum("kij,kjl->kil", Rp, ER)
                p = jnp.einsum("kij,kj->ki", Rp, Ep) + pp
                w = jnp.einsum("kij,kj->ki", R, e["Y"][:, :3])
                S = jnp.concatenate([w, jnp.einsum("kij,kj->ki", R, e["Y"][:, 3:])
                                     + bx(p, w)], axis=1)
                Vp, Ap = Vs[-1][e["parent_pos"]], As[-1][e["parent_pos"]]
                V = Vp + S * qdj[:, None]
                adVS = jnp.concatenate([bx(V[:, :3], S[:, :3]),
                                        bx(V[:, 3:], S[:, :3]) + bx(V[:, :3], S[:, 3:])], axis=1)
                A = Ap + S * qddj[:, None] + adVS * qdj[:, None]
            Rc = jnp.einsum("kij,kjl->kil", R, e["home"][:, :3, :3])
            pc = jnp.einsum("kij,kj->ki", R, e["home"][:, :3, 3]) + p
            c = jnp.einsum("kij,kj->ki", Rc, e["com"]) + pc
            I = jnp.einsum("kij,kjl,kml->kim", Rc, e["J"], Rc)
            mass = e["mass"]
            # W = M A − ad_Vᵀ M V − M G with M from (m, c, I): Π = (I ω + c × m(v + ω × c), m(v + ω × c))
            def momentum(X):
                lin = mass[:, None] * (X[:, 3:] + bx(X[:, :3], c))
                return jnp.concatenate([jnp.einsum("kij,kj->ki", I, X[:, :3]) + bx(c, lin),
                                        lin], axis=1)
            MA, MV, MG = momentum(A), momentum(V), momentum(jnp.broadcast_to(G, V.shape))
            W = MA + jnp.concatenate([bx(V[:, :3], MV[:, :3]) + bx(V[:, 3:], MV[:, 3:]),
                                      bx(V[:, :3], MV[:, 3:])], axis=1) - MG
            if Wa is not None:
                W = W - Wa[e["bodies"]]
            Rs.append(R), ps.append(p), Vs.append(V), As.append(A), Ss.append(S), Ws.append(W)
        tau = [None] * len(lv)
        for d in range(len(lv) - 1, 0, -1):
            e = lv[d]
            Ws[d - 1] = Ws[d - 1] + e["P"] @ Ws[d]
            cols = e["bodies"] - 1
            tau[d] = (jnp.sum(Ss[d] * Ws[d], axis=1) + e["arm"] * qdd[cols]
                      + e["damp"] * qd[cols])
        if self.n == 0:
            return Ws[0][0], jnp.zeros(0)
        order = np.argsort(np.concatenate([e["bodies"] for e in lv[1:]]))
        return Ws[0][0], jnp.concatenate(tau[1:])[order]

    def forward_map(self, C0, V0, q, qd, W0, tau, Wa=None):
        """``(V̇₀ (6,), q̈ (n,))`` at one instant: the articulated-body algorithm."""
        m, N, parent = self.model, self.N, self._parent
        S, c, I = self._poses(C0, q)
        G = self._gravity_twist()
        V, cb, MA, pA = [V0], [None], [], []
        for j in range(1, N):
            V.append(V[parent[j]] + S[j] * qd[j - 1])
            cb.append(_ad(V[j], S[j]) * qd[j - 1])
        for j in range(N):
            M = self._inertia(j, c[j], I[j])
            b = _ad_star(V[j], M @ V[j]) - M @ G
            if Wa is not None:
                b = b - Wa[j]
            MA.append(M)
            pA.append(b)
        U, D, u = [None] * N, [None] * N, [None] * N
        for j in range(N - 1, 0, -1):
            p = parent[j]
            U[j] = MA[j] @ S[j]
            D[j] = S[j] @ U[j] + m.joint_armature[j - 1]
            u[j] = tau[j - 1] - m.joint_damping[j - 1] * qd[j - 1] - S[j] @ pA[j]
            Ia = MA[j] - jnp.outer(U[j], U[j]) / D[j]
            MA[p] = MA[p] + Ia
            pA[p] = pA[p] + pA[j] + Ia @ cb[j] + U[j] * (u[j] / D[j])
        if m.floating_base:
            A0 = _ldl_solve(MA[0], W0 - pA[0])
        else:
            A0 = jnp.zeros(6)
        A, qdd = [A0], [None] * self.n
        for j in range(1, N):
            Ap = A[parent[j]]
            qdd[j - 1] = (u[j] - U[j] @ (Ap + cb[j])) / D[j]
            A.append(Ap + cb[j] + S[j] * qdd[j - 1])
        return A0, jnp.stack(qdd) if self.n else jnp.zeros(0)

    # ------------------------------------------------------- Taylor mode --

    def _inverse_fn(self, r):
        if r not in self._inv:
            def f(primals, series):
                imap = self._inverse_map_by_level if self.by_level else self.inverse_map
                fun = (lambda C0, V0, A0, q, qd, qdd, *Wa:
                       jnp.concatenate(imap(C0, V0, A0, q, qd, qdd, Wa[0] if Wa else None)))
                y0, ys = jet(fun, primals, series)
                return jnp.stack([y0] + list(ys))
            self._inv[r] = jax.jit(f)
        return self._inv[r]

    def _forward_fn(self, r):
        if r not in self._fwd:
            def f(primals, series):
                fun = (lambda C0, V0, q, qd, W0, tau, *Wa:
                       jnp.concatenate(self.forward_map(C0, V0, q, qd, W0, tau,
                                                        Wa[0] if Wa else None)))
                y0, ys = jet(fun, primals, series)
                return jnp.stack([y0] + list(ys))
            self._fwd[r] = jax.jit(f)
        return self._fwd[r]

    def inverse_series(self, C0, base_twist, q, order, applied=None):
        """``(primals, series)`` of the inverse map's inputs for order ``r``."""
        m, r = self.model, check_order(order)
        C0 = check_pose(C0 if C0 is not None else m.home_pose, "base_pose")
        q = check_jet(q, "q", (r + 3, self.n))
        if m.floating_base:
            V = check_jet(base_twist, "base_twist", (r + 2, 6))
        else:
            V = np.zeros((r + 2, 6))
        Cj = base_pose_jet(C0, V, r + 1)
        ins = [Cj, V[:r + 1], V[1:r + 2], q[:r + 1], q[1:r + 2], q[2:r + 3]]
        if self.applied:
            Wa = check_jet(applied, "applied", (r + 1, self.N, 6))
            ins.append(Wa)
        primals = tuple(jnp.asarray(x[0]) for x in ins)
        series = tuple([jnp.asarray(x[k]) for k in range(1, r + 1)] for x in ins)
        return primals, series

    def forward_series(self, C0, base_twist, q, order, tau, base_wrench=None, applied=None):
        """``(primals, series)`` of the forward map's inputs for order ``r``:
        the motion jets up to the order they are known, the force jets."""
        m, r = self.model, check_order(order)
        C0 = check_pose(C0 if C0 is not None else m.home_pose, "base_pose")
        q = check_jet(q, "q", (r + 2, self.n))
        tau = check_jet(tau, "tau", (r + 1, self.n))
        if m.floating_base:
            V = check_jet(base_twist, "base_twist", (r + 1, 6))
            Wb = check_jet(base_wrench, "base_wrench", (r + 1, 6))
        else:
            V, Wb = np.zeros((r + 1, 6)), np.zeros((r + 1, 6))
        Cj = base_pose_jet(C0, V, r + 1)
        ins = [Cj, V, q[:r + 1], q[1:r + 2], Wb, tau]
        if self.applied:
            ins.append(check_jet(applied, "applied", (r + 1, self.N, 6)))
        primals = tuple(jnp.asarray(x[0]) for x in ins)
        series = tuple([jnp.asarray(x[k]) for k in range(1, r + 1)] for x in ins)
        return primals, series

    def inverse_dynamics(self, C0, base_twist, q, order, applied=None):
        """``(W₀^(0..r), τ^(0..r))`` by Taylor-mode AD (a fixed base's ``W₀`` is
        the support reaction)."""
        p, s = self.inverse_series(C0, base_twist, q, order, applied)
        y = np.asarray(self._inverse_fn(int(order))(p, s))
        return y[:, :6], y[:, 6:]

    def forward_dynamics(self, C0, base_twist, q, order, *, tau, base_wrench=None, applied=None):
        """The jets ``V₀^(1..r+1)`` ``(r+1, 6)`` and ``q^(2..r+2)`` ``(r+1, n)``
        for a motion whose lower rows (``base_twist (r+1, 6)``, ``q (r+2, n)``)
        are known: the forward map's derivatives ``0..r``. For forward dynamics
        of order r from a state alone, call it for ``r' = 0..r`` in turn, each
        time appending the new rows (as :func:`forward_dynamics_jets` does)."""
        p, s = self.forward_series(C0, base_twist, q, order, tau, base_wrench, applied)
        y = np.asarray(self._forward_fn(int(order))(p, s))
        return y[:, :6], y[:, 6:]

    def compile_inverse(self, order, *example):
        """Trace and XLA-compile the inverse map of order ``order`` for the
        inputs of :meth:`inverse_series` (``example``: its arguments); returns
        the seconds it took. Evaluation timings then exclude compilation."""
        p, s = self.inverse_series(*example) if example else self._zeros_inverse(order)
        t = time.perf_counter()
        self._inverse_fn(int(order)).lower(p, s).compile()
        jax.block_until_ready(self._inverse_fn(int(order))(p, s))
        return time.perf_counter() - t

    def _zeros_inverse(self, r):
        m = self.model
        V = np.zeros((r + 2, 6)) if m.floating_base else None
        Wa = np.zeros((r + 1, self.N, 6)) if self.applied else None
        return self.inverse_series(m.home_pose, V, np.zeros((r + 3, self.n)), r, Wa)


def forward_dynamics_jets(tj, C0, base_twist, q, order, *, tau, base_wrench=None, applied=None):
    """Forward dynamics of order r from the state by Taylor mode: for
    ``k = 0..r`` the forward map of order k on the rows known so far gives
    ``V₀^(k+1)`` and ``q^(k+2)``. Returns ``(V₀ (r+2, 6), q (r+3, n))``."""
    r = check_order(order)
    fl = tj.model.floating_base
    V = np.zeros((r + 2, 6))
    if fl:
        V[0] = check_jet(base_twist, "base_twist", (1, 6))[0]
    qj = np.zeros((r + 3, tj.n))
    qj[:2] = check_jet(q, "q", (2, tj.n))
    for k in range(r + 1):
        Wb = None if base_wrench is None else base_wrench[:k + 1]
        Wa = None if applied is None else applied[:k + 1]
        dV, dq = tj.forward_dynamics(C0, V[:k + 1] if fl else None, qj[:k + 2], k,
                                     tau=tau[:k + 1], base_wrench=Wb, applied=Wa)
        V[k + 1] = dV[k]
        qj[k + 2] = dq[k]
    return V, qj


def _ldl_solve(A, b):
    """``A x = b`` for a symmetric positive definite 6×6 ``A`` by an unrolled
    LDLᵀ (divisions only: ``jet`` has no rule for a triangular solve)."""
    n = A.shape[0]
    L = [[None] * n for _ in range(n)]
    d = [None] * n
    for k in range(n):
        dk = A[k, k]
        for a in range(k):
            dk = dk - L[k][a] * L[k][a] * d[a]
        d[k] = dk
        for i in range(k + 1, n):
            s = A[i, k]
            for a in range(k):
                s = s - L[i][a] * L[k][a] * d[a]
            L[i][k] = s / dk
    y = [None] * n
    for i in range(n):
        s = b[i]
        for a in range(i):
            s = s - L[i][a] * y[a]
        y[i] = s
    x = [None] * n
    for i in range(n - 1, -1, -1):
        s = y[i] / d[i]
        for a in range(i + 1, n):
            s = s - L[a][i] * x[a]
        x[i] = s
    return jnp.stack(x)
