"""Inverse dynamics of any order (SPEC §3–§4) against independent references.

(a) order 0 equals Pinocchio's RNEA (converted by ``liedyn.interop.pinocchio``);
(b) order k+1 equals the central time difference of order k along smooth
    trajectories whose base pose is integrated on SE(3) from the twist;
(c) order 0 equals the Euler–Lagrange equations of a kinetic and potential
    energy written symbolically in CasADi from products of local transforms;
(d) momentum balance: base wrench + applied + gravity wrenches equal the time
    derivative of the total spatial momentum summed from poses and twists,
    and its time derivatives equal the higher-order base wrench jets;
(e) bad inputs raise ValueError/TypeError naming the argument.

The finite-difference bounds of (b) and (d) need the size of derivatives
beyond the ones compared; those come from the Taylor-series Newton–Euler of
``tests/series_oracle.py`` (an independent route to every order), never from
the higher orders of the algorithm under test.
"""

from math import factorial

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest

import liedyn
from liedyn import se3
from liedyn.interop.pinocchio import to_pinocchio
from models.aerial_manipulator import aerial_manipulator
from models.trees import random_tree
from tests.helpers import assert_close, integrate_pose, poly_jet
from tests import series_oracle

EPS = np.finfo(float).eps


def _models():
    """(id, model factory, seed): the aerial manipulator and shuffled random
    trees with revolute and prismatic joints, floating and fixed."""
    return [
        ("aerial-floating", lambda: aerial_manipulator(), 1),
        ("aerial-fixed", lambda: aerial_manipulator(floating_base=False), 2),
        ("tree8-floating", lambda: random_tree(np.random.default_rng(21), 8, floating_base=True), 3),
        ("tree8-fixed", lambda: random_tree(np.random.default_rng(22), 8, floating_base=False), 4),
        ("tree12-floating-prismatic", lambda: random_tree(np.random.default_rng(23), 12,
                                                          prismatic_fraction=0.5), 5),
        ("chain5-fixed", lambda: random_tree(np.random.default_rng(24), 5, floating_base=False,
                                             shuffle=False), 6),
    ]


MODELS = [pytest.param(make, seed, id=name) for name, make, seed in _models()]


# ------------------------------------------------------ (a) Pinocchio --

def _check_against_rnea(model, pm, C0, Vb, q, applied=None):
    """liedyn order 0 vs the oracle's RNEA: τ, and W₀ for a free-flyer mirror,
    to 1e-9 of the largest entry. Returns liedyn's result and that scale."""
    res = liedyn.inverse_dynamics(model, C0, Vb, q, 0, applied=applied)
    W0, tau = pm.rnea(C0, Vb, q, applied=applied)        # Vb None: base at rest
    scale = max(np.max(np.abs(tau)), np.max(np.abs(W0)), 1.0)
    assert_close(res.tau[0], tau, rtol=0, atol=1e-9 * scale, what="tau vs rnea")
    if pm.free_flyer:
        assert_close(res.base_wrench[0], W0, rtol=0, atol=1e-9 * scale, what="W0 vs rnea")
    return res, scale


@pytest.mark.parametrize("make,seed", MODELS)
def test_order0_equals_pinocchio_rnea(make, seed):
    """Relative agreement 1e-9 of ``max|·|`` (measured ~1e-15): W₀ and τ, plus
    every joint's transmitted wrench against Pinocchio's ``data.f``; three
    random states, the last with applied wrenches."""
    model = make()
    rng = np.random.default_rng(100 + seed)
    pm = to_pinocchio(model)
    N, n = model.n_bodies, model.n_joints
    for trial in range(3):
        C0 = se3.exp(rng.normal(size=6)) if model.floating_base else None
        Vb = rng.normal(size=(2, 6)) if model.floating_base else None
        q = rng.normal(size=(3, n)) * 1.5
        applied = rng.normal(size=(1, N, 6)) if trial == 2 else None
        res, scale = _check_against_rnea(model, pm, C0, Vb, q, applied)
        # data.f: wrench across joint j in its joint frame (RNEA leaves data.oMi alone)
        pin.forwardKinematics(pm.model, pm.data, pm.config_to_pin(C0, q[0]))
        for j in range(1, N):
            f = pm.data.f[int(pm.joint_id[j])]
            Wj = se3.Ad(se3.inv(pm.data.oMi[int(pm.joint_id[j])].homogeneous)).T @ np.concatenate(
                [f.angular, f.linear])
            assert_close(res.wrench[0, j], Wj, rtol=0, atol=1e-9 * max(scale, np.max(np.abs(Wj))),
                         what=f"W_{j} vs data.f")


@pytest.mark.parametrize("make,seed", [p for p in MODELS if "fixed" in p.id])
def test_fixed_base_reaction_equals_free_flyer_at_rest(make, seed):
    """The support reaction of a fixed base is the wrench a free-flying copy
    needs when its base neither moves nor accelerates."""
    model = make()
    rng = np.random.default_rng(200 + seed)
    C0 = se3.exp(rng.normal(size=6))
    pm = to_pinocchio(model, free_flyer=True)
    q = rng.normal(size=(3, model.n_joints))
    applied = rng.normal(size=(1, model.n_bodies, 6))
    _check_against_rnea(model, pm, C0, None, q, applied)


@pytest.mark.parametrize("seed", range(12))
def test_order0_equals_pinocchio_on_a_zoo_of_random_trees(seed):
    """Random size (2–15 bodies), joint mix, shuffled or serial parents, base
    kind, armature and damping, at a random state with applied wrenches."""
    rng = np.random.default_rng(1000 + seed)
    model = random_tree(rng, int(rng.integers(2, 16)), floating_base=bool(rng.integers(2)),
                        prismatic_fraction=rng.uniform(0.0, 1.0), armature=bool(rng.integers(2)),
                        damping=bool(rng.integers(2)), shuffle=bool(rng.integers(2)))
    C0 = se3.exp(rng.normal(size=6))
    pm = to_pinocchio(model, base_pose=C0)          # base_pose only matters for a fixed base
    Vb = rng.normal(size=(2, 6)) if model.floating_base else None
    q = rng.normal(size=(3, model.n_joints))
    applied = rng.normal(size=(1, model.n_bodies, 6))
    _check_against_rnea(model, pm, C0, Vb, q, applied)


def test_armature_and_damping_match_pinocchio():
    rng = np.random.default_rng(7)
    model = random_tree(rng, 7, armature=True, damping=True)
    pm = to_pinocchio(model)          # armature through pinocchio.Model.armature, damping b q̇
    C0, Vb, q = se3.exp(rng.normal(size=6)), rng.normal(size=(2, 6)), rng.normal(size=(3, 6))
    _check_against_rnea(model, pm, C0, Vb, q)


# ---------------------------------------------- smooth trajectories --

class Trajectory:
    """Polynomial joint, base-twist and applied-wrench trajectories
    ``x(t) = Σ_k x_k t^k / k!``; the base pose solves ``Ċ = [V(t)] C`` from a
    random ``C(0)`` (fixed base: a constant random pose)."""

    def __init__(self, model, rng, degree, applied=False, scale=0.7):
        self.model = model
        self.qc = rng.normal(size=(degree + 1, model.n_joints)) * scale
        self.Vc = rng.normal(size=(degree + 1, 6)) * scale
        self.Wc = (rng.normal(size=(degree + 1, model.n_bodies, 6)) if applied else None)
        self.C0 = se3.exp(rng.normal(size=6))

    def pose(self, t):
        if not self.model.floating_base:
            return self.C0
        return integrate_pose(self.C0, lambda s: poly_jet(self.Vc, s, 1)[0], t, steps=16)

    def inputs(self, t, r):
        """``(base_pose, base_twist, q, applied)`` for ``inverse_dynamics`` of
        order ``r`` at time ``t``."""
        Vb = poly_jet(self.Vc, t, r + 2) if self.model.floating_base else None
        app = poly_jet(self.Wc, t, r + 1) if self.Wc is not None else None
        return self.pose(t), Vb, poly_jet(self.qc, t, r + 3), app

    def solve(self, t, r):
        C, Vb, q, app = self.inputs(t, r)
        return liedyn.inverse_dynamics(self.model, C, Vb, q, r, applied=app)

    def oracle(self, r):
        """The jets at t = 0 to order ``r`` by Taylor-series Newton–Euler
        (``tests/series_oracle``), independent of liedyn's recursions."""
        C, Vb, q, app = self.inputs(0.0, r)
        return series_oracle.inverse_jets(self.model, C, Vb, q, r, app)


# --------------------------------------------------- (b) finite differences --

H = 2e-3
K_MAX = 4
# Central difference of a smooth x: (x(h) − x(−h))/2h − ẋ(0) = h²/6 · x⁽³⁾(ξ), |ξ| < h,
# bounded per component by h²/6 · sup_{|ξ|≤h} |x⁽³⁾(ξ)|. The sup comes from the
# Taylor coefficients at 0 of the series oracle: |x⁽ᵐ⁾(ξ)| ≤ Σ_j |x⁽ᵐ⁺ʲ⁾(0)| h^j/j!,
# summed to j = 2 and doubled for the rest of the series (measured error/bound
# ≤ 0.50: the error is the predicted leading term, the 2 is the margin).
# Rounding: each sample carries ~100·eps relative error of its largest entry (a
# sum over ≤ 12 bodies of products of O(1) factors), divided by 2h; the size of
# that entry also from the oracle (×2 for its change over the stencil). The pose
# integrator (4th-order Magnus, 16 steps over 2e-3) adds < 1e-20.
#
# Sharper: subtracting the leading term, fd − h²/6 · x⁽ᵏ⁺³⁾(0) − x⁽ᵏ⁺¹⁾(0) = h⁴/120 · x⁽ᵏ⁺⁵⁾(ξ),
# which checks the jets to ~1e-10 relative instead of ~1e-6.


def _sup_near_zero(jet, m):
    """Per component, a bound on ``max_{|ξ| ≤ H} |x⁽ᵐ⁾(ξ)|`` from an oracle jet at 0."""
    terms = [np.abs(jet[m + j]) * H ** j / factorial(j) for j in range(3) if m + j < len(jet)]
    return 2.0 * sum(terms)


def _fd_bound(oracle_jet, k, power=2, coeff=1.0 / 6.0):
    """Error bound of the central difference of row ``k`` against row ``k+1``,
    with ``power``/``coeff`` the leading truncation term ``coeff·H^power·x⁽ᵏ⁺¹⁺ᵖᵒʷᵉʳ⁾``
    (``oracle_jet``: the quantity's jet at t = 0 from the series oracle)."""
    trunc = coeff * H ** power * _sup_near_zero(oracle_jet, k + 1 + power)
    rounding = 100 * EPS * 2.0 * np.max(np.abs(oracle_jet[k])) / H
    return trunc + rounding


CASES = [
    pytest.param("floating", False, False, 301, id="floating"),
    pytest.param("fixed", False, False, 302, id="fixed"),
    pytest.param("floating", True, True, 303, id="floating-applied-armature-damping"),
    pytest.param("fixed", True, True, 304, id="fixed-applied-armature-damping"),
    pytest.param("aerial", False, False, 305, id="aerial-manipulator"),
]


@pytest.mark.parametrize("kind,applied,extras,seed", CASES)
def test_order_k_plus_1_is_central_difference_of_order_k(kind, applied, extras, seed):
    model = (aerial_manipulator() if kind == "aerial" else
             random_tree(np.random.default_rng(seed), 6, floating_base=kind == "floating",
                         armature=extras, damping=extras))
    rng = np.random.default_rng(seed + 1000)
    traj = Trajectory(model, rng, degree=K_MAX + 6, applied=applied)
    r = K_MAX + 5                                      # x⁽ᵏ⁺⁵⁾ for the sharper bound
    res = [traj.solve(t, r) for t in (-H, 0.0, H)]
    ref = traj.oracle(r + 2)                           # two more rows for the sup over |ξ| ≤ H
    for name in ("tau", "base_wrench"):
        x = np.stack([getattr(s, name) for s in res])           # (3, r+1, …)
        for k in range(K_MAX + 1):
            fd = (x[2, k] - x[0, k]) / (2 * H)
            err = np.abs(fd - x[1, k + 1])
            bound = _fd_bound(ref[name], k)
            assert np.all(err <= bound), (
                f"{name} order {k + 1}: |fd − jet| {err.max():.2e} > bound "
                f"{bound[np.argmax(err - bound)]:.2e} (|jet| {np.abs(x[1, k + 1]).max():.2e})")
            err = np.abs(fd - H * H / 6.0 * x[1, k + 3] - x[1, k + 1])
            bound = _fd_bound(ref[name], k, power=4, coeff=1.0 / 120.0)
            assert np.all(err <= bound), (
                f"{name} order {k + 1}, leading term removed: {err.max():.2e} > "
                f"{bound[np.argmax(err - bound)]:.2e}")
    # kinematics: twist jets, and the pose derivative Ċ C⁻¹ = [V] for every body
    for name in ("twist", "screw"):
        X = np.stack([getattr(s, name) for s in res])           # jets go to r + 1
        for k in range(r - 2):
            fd = (X[2, k] - X[0, k]) / (2 * H)
            assert np.all(np.abs(fd - X[1, k + 1]) <= _fd_bound(ref[name], k)), f"{name} {k + 1}"
    V = np.stack([s.twist for s in res])
    # (C(h) − C(−h))/2h · C⁻¹ − [V] = h²/6 · C⁽³⁾ C⁻¹ + …, with C⁽³⁾ C⁻¹ a cubic in
    # V, V̇, V̈ and the body position (all O(1–10) here): 1e-5·(1 + |V|) is ~10× that
    # (|V| of the oracle).
    C = np.stack([s.body_pose for s in res])
    for j in range(model.n_bodies):
        Vfd = se3.vee((C[2, j] - C[0, j]) / (2 * H) @ se3.inv(C[1, j]))
        assert_close(Vfd, V[1, 0, j], rtol=0, atol=1e-5 * (1 + np.max(np.abs(ref["twist"][:3, j]))),
                     what=f"Ċ C⁻¹ body {j}")


def test_fd_check_detects_a_wrong_jet():
    """The bound is tight enough to see a 1e-4 relative error in an order-2 jet."""
    rng = np.random.default_rng(9)
    model = random_tree(rng, 5)
    traj = Trajectory(model, rng, degree=9)
    res = [traj.solve(t, 5) for t in (-H, 0.0, H)]
    ref = traj.oracle(5)["tau"]
    x = np.stack([s.tau for s in res])
    wrong = x[1, 2] * (1 + 1e-4)
    fd = (x[2, 1] - x[0, 1]) / (2 * H)
    assert np.any(np.abs(fd - wrong) > _fd_bound(ref, 1))
    assert np.all(np.abs(fd - x[1, 2]) <= _fd_bound(ref, 1))


# Every order against the series oracle: liedyn's jet recursions and the
# Taylor arithmetic of tests/series_oracle share no formula beyond the order-0
# Newton–Euler they both differentiate. Both sides are float64 sums of O(r² N)
# products of O(1) jets. Measured over 36 random trees at order 9, relative to
# 1 + |row|: ≤ 1e-13 for forces, momenta and screws at every order; the twist
# rows lose more to cancellation, growing ≈ 2.5× per order from 2e-15 (k = 0)
# to 1e-11 (k = 10) on the deepest chains, on both sides alike (checked against
# the oracle at 40 digits). Tolerances: 1e-12, and 1e-13 · 2.5^k for twist row
# k (≥ 10× margin everywhere); a wrong coefficient is an O(1) error.
ORACLE_TOL = 1e-12
TWIST_GROWTH = 2.5


@pytest.mark.parametrize("seed", range(12))
def test_every_order_equals_the_series_oracle(seed):
    """Orders 0..9 of W₀, τ, the body twist and screw jets and the total
    momentum on a zoo of random trees with applied wrenches."""
    rng = np.random.default_rng(1100 + seed)
    model = random_tree(rng, int(rng.integers(2, 16)), floating_base=bool(rng.integers(2)),
                        prismatic_fraction=rng.uniform(0.0, 1.0), armature=bool(rng.integers(2)),
                        damping=bool(rng.integers(2)), shuffle=bool(rng.integers(2)))
    r = 9
    C0 = se3.exp(rng.normal(size=6))
    Vb = rng.normal(size=(r + 2, 6)) * 0.7 if model.floating_base else None
    q = rng.normal(size=(r + 3, model.n_joints)) * 0.7
    app = rng.normal(size=(r + 1, model.n_bodies, 6))
    res = liedyn.inverse_dynamics(model, C0, Vb, q, r, applied=app)
    ref = series_oracle.inverse_jets(model, C0, Vb, q, r, app)
    for name, got in (("base_wrench", res.base_wrench), ("tau", res.tau), ("twist", res.twist),
                      ("screw", res.screw), ("momentum", res.momentum.sum(axis=1))):
        want = ref[name][:got.shape[0]]
        scale = 1.0 + np.abs(want).reshape(len(want), -1).max(axis=1)
        err = np.abs(got - want).reshape(len(want), -1).max(axis=1) / scale
        tol = (0.1 * ORACLE_TOL * TWIST_GROWTH ** np.arange(len(want)) if name == "twist"
               else ORACLE_TOL)
        assert np.all(err <= tol), f"{name}: relative row errors {err}"


# ------------------------------------------------------- (c) Lagrangian --

def _rot_sym(e, s):
    """Rodrigues ``R(e, s) = I + sin s ê + (1 − cos s) ê²`` for a numeric unit ``e``."""
    E = ca.DM(se3.hat(e))
    return ca.DM.eye(3) + ca.sin(s) * E + (1 - ca.cos(s)) * (E @ E)


def _hom(R, p):
    out = ca.SX.eye(4)
    out[:3, :3] = R
    out[:3, 3] = p
    return out


def _exp_chart(xi):
    """SE(3) exponential with its coefficients as Taylor series in θ² (exact
    to O(θ¹²), analytic at 0): the exponential chart ``C₀ = exp(ξ) C_ref``."""
    w, v = xi[:3], xi[3:]
    t2 = ca.dot(w, w)
    A = sum((-1) ** k * t2 ** k / factorial(2 * k + 1) for k in range(6))
    B = sum((-1) ** k * t2 ** k / factorial(2 * k + 2) for k in range(6))
    Cc = sum((-1) ** k * t2 ** k / factorial(2 * k + 3) for k in range(6))
    W = ca.skew(w)
    return _hom(ca.SX.eye(3) + A * W + B * (W @ W), (ca.SX.eye(3) + B * W + Cc * (W @ W)) @ v)


def _inv_sym(C):
    Rt = C[:3, :3].T
    return _hom(Rt, -Rt @ C[:3, 3])


def _vee_sym(X):
    return ca.vertcat(X[2, 1], X[0, 2], X[1, 0], X[0, 3], X[1, 3], X[2, 3])


def _lagrange_generalised_forces(model, C_ref):
    """CasADi function ``(x, ẋ, ẍ, W_app) → τ̄`` from the Euler–Lagrange equations.

    ``x = (ξ, q)`` (``ξ`` only for a floating base, chart ``C₀ = exp(ξ) C_ref``),
    body poses as products of local transforms
    ``C_j = C_{p(j)} A_j T(x_j) R(e_j, q_j) T(−x_j)`` (revolute) or
    ``C_{p(j)} A_j T(e_j q_j)`` (prismatic), kinetic energy
    ``½ Σ V_bᵀ Mᵇ V_b + ½ Σ I_a q̇²`` with ``[V_b] = C⁻¹ Ċ``, potential
    ``−Σ m g⃗ · c_j``, Rayleigh dissipation ``½ Σ b q̇²`` and applied power
    ``Σ W_jᵀ V_j`` with ``[V_j] = Ċ C⁻¹``:

        d/dt ∂L/∂ẋ − ∂L/∂x + ∂R/∂ẋ = τ̄ + ∂(Σ W_jᵀ V_j)/∂ẋ.
    """
    N, n = model.n_bodies, model.n_joints
    nb = 6 if model.floating_base else 0
    x, xd, xdd = ca.SX.sym("x", nb + n), ca.SX.sym("xd", nb + n), ca.SX.sym("xdd", nb + n)
    Wapp = ca.SX.sym("W", 6, N)
    q = x[nb:]
    C = [None] * N
    C[0] = (_exp_chart(x[:6]) @ ca.DM(C_ref)) if nb else ca.SX(ca.DM(C_ref))
    for j in range(1, N):
        A = ca.DM(model.body_origin[j])
        e = np.array(model.joint_axis[j - 1])
        if model.joint_type[j - 1] == liedyn.multibody.model.JOINT_REVOLUTE:
            xj = model.joint_point[j - 1]
            local = (_hom(ca.DM.eye(3), ca.DM(xj)) @ _hom(_rot_sym(e, q[j - 1]), ca.DM.zeros(3))
                     @ _hom(ca.DM.eye(3), ca.DM(-xj)))
        else:
            local = _hom(ca.DM.eye(3), ca.DM(e) * q[j - 1])
        C[j] = C[model.body_parent[j]] @ A @ local
    kinetic, potential, power = 0, 0, 0
    g = ca.DM(model.gravity)
    for j in range(N):
        Cd = ca.jtimes(C[j], x, xd)
        Ci = _inv_sym(C[j])
        Vb = _vee_sym(Ci @ Cd)
        kinetic += 0.5 * ca.dot(Vb, ca.DM(model.body_inertia[j]) @ Vb)
        com = C[j][:3, :3] @ ca.DM(model.body_com[j]) + C[j][:3, 3]
        potential -= model.body_mass[j] * ca.dot(g, com)
        power += ca.dot(Wapp[:, j], _vee_sym(Cd @ Ci))
    qd = xd[nb:]
    kinetic += 0.5 * ca.dot(ca.DM(model.joint_armature), qd * qd)
    rayleigh = 0.5 * ca.dot(ca.DM(model.joint_damping), qd * qd)
    L = kinetic - potential
    p = ca.gradient(L, xd)
    dpdt = ca.jtimes(p, x, xd) + ca.jtimes(p, xd, xdd)
    tbar = dpdt - ca.gradient(L, x) + ca.gradient(rayleigh, xd) - ca.gradient(power, xd)
    return ca.Function("tbar", [x, xd, xdd, Wapp], [tbar])


@pytest.mark.parametrize("floating,seed", [(False, 41), (True, 42)], ids=["fixed-chain", "floating-tree"])
def test_order0_equals_euler_lagrange(floating, seed):
    """At the chart origin ``ξ = 0``: ``V₀ = ξ̇``, ``V̇₀ = ξ̈`` (the chart's
    ``d/dt dexp`` term is ``½ ad_ξ̇ ξ̇ = 0``) and ``W₀ = ∂/∂ξ̇`` of the power, so
    τ̄ compares with ``(W₀, τ)`` directly. AD is exact: the bound 1e-12 of the
    largest entry covers round-off in the symbolic expressions (measured 3e-16)."""
    rng = np.random.default_rng(seed)
    model = (random_tree(rng, 4, floating_base=True, armature=True, damping=True) if floating
             else random_tree(rng, 3, floating_base=False, shuffle=False, armature=True,
                              damping=True, prismatic_fraction=0.4))
    C_ref = se3.exp(rng.normal(size=6))
    f = _lagrange_generalised_forces(model, C_ref)
    nb, n, N = (6 if floating else 0), model.n_joints, model.n_bodies
    for _ in range(3):
        Vb = rng.normal(size=(2, 6)) if floating else None
        q = rng.normal(size=(3, n))
        app = rng.normal(size=(1, N, 6))
        res = liedyn.inverse_dynamics(model, C_ref, Vb, q, 0, applied=app)
        x = np.concatenate([np.zeros(nb), q[0]])
        xd = np.concatenate([Vb[0] if floating else [], q[1]])
        xdd = np.concatenate([Vb[1] if floating else [], q[2]])
        tbar = np.array(f(x, xd, xdd, app[0].T)).ravel()
        want = np.concatenate([res.base_wrench[0] if floating else [], res.tau[0]])
        assert_close(want, tbar, rtol=0, atol=1e-12 * max(np.max(np.abs(tbar)), 1.0),
                     what="(W0, tau) vs Euler-Lagrange")


# ------------------------------------------------- (d) momentum balance --

def _total_momentum_and_gravity(model, res):
    """``Σ Ad_{C_j⁻¹}ᵀ Mᵇ_j Ad_{C_j⁻¹} V_j`` and ``Σ M_j G`` from poses, twists, inertias."""
    G = np.concatenate([np.zeros(3), model.gravity])
    P, Wg = np.zeros(6), np.zeros(6)
    for j in range(model.n_bodies):
        M = se3.transform_inertia(res.body_pose[j], model.body_inertia[j])
        P += M @ res.twist[0, j]
        Wg += M @ G
    return P, Wg


@pytest.mark.parametrize("floating,applied,seed", [(True, False, 51), (True, True, 52), (False, True, 53)],
                         ids=["floating", "floating-applied", "fixed-applied"])
def test_momentum_balance(floating, applied, seed):
    """``Ṗ = W₀ + Σ W_app + W_g`` (order 0, ``W_g = Σ M_j G``) by a central
    difference of the total momentum P summed from poses, twists and inertias,
    and ``W₀⁽ᵏ⁾ = P⁽ᵏ⁺¹⁾ − Σ W_app⁽ᵏ⁾ − W_g⁽ᵏ⁾`` for k = 1, 2 by 5-point central
    differences of the order-0 quantities (measured errors are 1/5 to 1/2 of
    the bounds below). For a fixed base W₀ is the support reaction.

    Truncation of the 5-point stencils (h = 1e-2): first derivative h⁴/30·|P⁽⁵⁾|;
    second derivative h⁴/90·|P⁽⁶⁾|; third derivative h²/4·|P⁽⁵⁾|; W_g's
    first derivative (5-point) h⁴/30·|W_g⁽⁵⁾| and second (3-point) h²/12·|W_g⁽⁴⁾|,
    with ``W_g⁽ᵏ⁾ = (P_lin⁽ᵏ⁻¹⁾ × g⃗, 0)`` so ``|W_g⁽ᵏ⁾| ≤ 2|g⃗|·max|P⁽ᵏ⁻¹⁾|``. The
    sizes |P⁽ᵐ⁾| come from the series oracle's total momentum jet at t = 0 (×2
    for their change over the ±2h stencil). Rounding: 100·eps·|P|/hᵐ.
    """
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 6, floating_base=floating)
    traj = Trajectory(model, rng, degree=9, applied=applied)
    h = 1e-2
    ts = h * np.arange(-2, 3)
    res = [traj.solve(t, 0) for t in ts]
    PW = [_total_momentum_and_gravity(model, s) for s in res]
    P = np.array([p for p, _ in PW])
    Wg = np.array([w for _, w in PW])
    app = [traj.inputs(t, 2)[3] for t in ts]
    Wapp = np.array([a[0].sum(axis=0) if applied else np.zeros(6) for a in app])
    W0 = np.array([s.base_wrench[0] for s in res])
    jets = traj.solve(0.0, 5)
    assert_close(jets.momentum[0].sum(axis=0), P[2], rtol=0, atol=1e-12 * np.max(np.abs(P[2])),
                 what="Σ Π_j = Σ Ad⁻ᵀ Mᵇ Ad⁻¹ V")
    Pm = np.max(np.abs(traj.oracle(5)["momentum"]), axis=1)         # |P⁽ᵐ⁾|, m = 0..6
    g = np.linalg.norm(model.gravity)
    rnd = 100 * EPS * np.max(np.abs(P))
    fd = (-P[4] + 8 * P[3] - 8 * P[1] + P[0]) / (12 * h)
    tol0 = 2 * h ** 4 / 30 * Pm[5] + 10 * rnd / h
    assert_close(W0[2] + Wapp[2] + Wg[2], fd, rtol=0, atol=tol0, what="Ṗ = W₀ + W_app + W_g")
    d2P = (-P[4] + 16 * P[3] - 30 * P[2] + 16 * P[1] - P[0]) / (12 * h * h)
    d1Wg = (-Wg[4] + 8 * Wg[3] - 8 * Wg[1] + Wg[0]) / (12 * h)
    tol1 = 2 * (h ** 4 / 90 * Pm[6] + h ** 4 / 30 * 2 * g * Pm[4]) + 10 * rnd / h ** 2
    want1 = d2P - (app[2][1].sum(axis=0) if applied else 0.0) - d1Wg
    assert_close(jets.base_wrench[1], want1, rtol=0, atol=tol1, what="dW₀/dt vs d²P/dt²")
    d3P = (P[4] - 2 * P[3] + 2 * P[1] - P[0]) / (2 * h ** 3)
    d2Wg = (Wg[3] - 2 * Wg[2] + Wg[1]) / (h * h)
    tol2 = 2 * (h ** 2 / 4 * Pm[5] + h ** 2 / 12 * 2 * g * Pm[3]) + 10 * rnd / h ** 3
    want2 = d3P - (app[2][2].sum(axis=0) if applied else 0.0) - d2Wg
    assert_close(jets.base_wrench[2], want2, rtol=0, atol=tol2, what="d²W₀/dt² vs d³P/dt³")


# ------------------------------------------------------ (e) bad inputs --

def _good(model, r=1):
    n, N = model.n_joints, model.n_bodies
    Vb = np.zeros((r + 2, 6)) if model.floating_base else None
    return dict(base_pose=np.eye(4), base_twist=Vb, q=np.zeros((r + 3, n)), order=r,
                applied=np.zeros((r + 1, N, 6)))


FLOAT = random_tree(np.random.default_rng(61), 4, floating_base=True)
FIXED = random_tree(np.random.default_rng(62), 4, floating_base=False)

BAD = [
    (FLOAT, "base_pose", np.eye(3), ValueError),
    (FLOAT, "base_pose", np.diag([1.0, 1.0, 1.1, 1.0]), ValueError),
    (FLOAT, "base_pose", np.diag([1.0, -1.0, 1.0, 1.0]), ValueError),
    (FLOAT, "base_pose", np.full((4, 4), np.nan), ValueError),
    (FLOAT, "base_pose", "identity", TypeError),
    (FLOAT, "base_twist", np.zeros((2, 6)), ValueError),            # order 1 needs 3 rows
    (FLOAT, "base_twist", np.zeros((3, 3)), ValueError),
    (FLOAT, "base_twist", None, ValueError),
    (FLOAT, "base_twist", np.full((3, 6), np.inf), ValueError),
    (FIXED, "base_twist", np.ones((3, 6)), ValueError),              # fixed base does not move
    (FLOAT, "q", np.zeros((3, 3)), ValueError),                      # rows: order + 3
    (FLOAT, "q", np.zeros((4, 4)), ValueError),                      # columns: n
    (FLOAT, "q", np.zeros(3), ValueError),
    (FLOAT, "q", np.where(np.eye(4, 3) > 0, np.nan, 0.0), ValueError),
    (FLOAT, "q", None, TypeError),
    (FLOAT, "q", np.zeros((4, 3)) + 1j, TypeError),
    (FLOAT, "order", -1, ValueError),
    (FLOAT, "order", 1.0, TypeError),
    (FLOAT, "order", True, TypeError),
    (FLOAT, "order", "1", TypeError),
    (FLOAT, "applied", np.zeros((2, 3, 6)), ValueError),
    (FLOAT, "applied", np.zeros((1, 4, 6)), ValueError),
    (FLOAT, "applied", np.zeros((2, 4, 3)), ValueError),
    (FLOAT, "applied", np.full((2, 4, 6), np.nan), ValueError),
]


@pytest.mark.parametrize("model,arg,value,exc", BAD,
                         ids=[f"{m.floating_base and 'float' or 'fixed'}-{a}-{i}"
                              for i, (m, a, _, _) in enumerate(BAD)])
def test_inverse_dynamics_bad_inputs(model, arg, value, exc):
    kw = _good(model)
    kw[arg] = value
    with pytest.raises(exc, match=rf"^{arg}:"):
        liedyn.inverse_dynamics(model, **kw)


FK_BAD = [
    (FLOAT, "base_pose", np.diag([1.0, 1.0, 1.0, 2.0]), ValueError),
    (FLOAT, "base_pose", np.full((4, 4), np.inf), ValueError),
    (FLOAT, "base_twist", np.zeros((1, 6)), ValueError),            # order 1 needs 2 rows
    (FLOAT, "base_twist", None, ValueError),
    (FLOAT, "base_twist", np.full((2, 6), np.nan), ValueError),
    (FIXED, "base_twist", np.ones((2, 6)), ValueError),
    (FLOAT, "q", np.zeros((2, 3)), ValueError),                      # rows: order + 2
    (FLOAT, "q", np.zeros((3, 2)), ValueError),
    (FLOAT, "q", np.full((3, 3), np.nan), ValueError),
    (FLOAT, "order", -2, ValueError),
    (FLOAT, "order", 1.5, TypeError),
]


@pytest.mark.parametrize("model,arg,value,exc", FK_BAD,
                         ids=[f"{m.floating_base and 'float' or 'fixed'}-{a}-{i}"
                              for i, (m, a, _, _) in enumerate(FK_BAD)])
def test_forward_kinematics_bad_inputs(model, arg, value, exc):
    kw = dict(base_pose=np.eye(4), base_twist=np.zeros((2, 6)) if model.floating_base else None,
              q=np.zeros((3, model.n_joints)), order=1)
    liedyn.forward_kinematics(model, **kw)
    kw[arg] = value
    with pytest.raises(exc, match=rf"^{arg}:"):
        liedyn.forward_kinematics(model, **kw)


def test_fixed_base_accepts_none_or_a_zero_twist_jet():
    kw = _good(FIXED)
    a = liedyn.inverse_dynamics(FIXED, **kw)
    b = liedyn.inverse_dynamics(FIXED, **{**kw, "base_twist": np.zeros((3, 6))})
    assert np.array_equal(a.base_wrench, b.base_wrench) and np.array_equal(a.tau, b.tau)
    with pytest.raises(ValueError, match=r"^base_twist:"):
        liedyn.inverse_dynamics(FIXED, **{**kw, "base_twist": np.zeros((2, 6))})
    q = np.zeros((3, FIXED.n_joints))
    a = liedyn.forward_kinematics(FIXED, None, None, q, 1)
    b = liedyn.forward_kinematics(FIXED, None, np.zeros((2, 6)), q, 1)
    assert np.array_equal(a.twist, b.twist) and np.array_equal(a.body_pose, b.body_pose)


def test_body_jets_are_read_only():
    kw = _good(FLOAT)
    kw["q"] = np.random.default_rng(63).normal(size=kw["q"].shape)
    res = liedyn.inverse_dynamics(FLOAT, **kw)
    for name in ("body_pose", "twist", "screw", "momentum", "wrench"):
        a = getattr(res, name)
        assert not a.flags.writeable, name
        with pytest.raises(ValueError, match=r"^assignment destination is read-only"):
            a[...] = 0.0
        assert getattr(res, name) is a, f"{name}: read once, then kept"


def test_suite_checks_kernel_argument_types():
    """conftest turns on LIEDYN_CHECK_KERNEL_TYPES before liedyn is imported:
    every compiled-kernel call in these tests checks its argument types."""
    from liedyn import _jit
    assert _jit.CHECK_KERNEL_TYPES


def test_good_inputs_pass_and_none_pose_is_home():
    for model in (FLOAT, FIXED):
        kw = _good(model)
        liedyn.inverse_dynamics(model, **kw)
        kw["base_pose"] = None
        a = liedyn.inverse_dynamics(model, **kw)
        kw["base_pose"] = model.home_pose
        b = liedyn.inverse_dynamics(model, **kw)
        assert_close(a.tau, b.tau, rtol=0, atol=0, what="None pose = home pose")
        assert_close(a.body_pose[0], model.home_pose, rtol=0, atol=1e-15, what="C_0 = base_pose")
