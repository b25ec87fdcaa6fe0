"""Forward dynamics of order r (H-GABI-FBS, SPEC §5) against independent
references: inverse dynamics (round trip) with a floor computed by the
Taylor-series oracle, Pinocchio's ABA at order 0, finite differences in time
along its own integrated trajectory, and the mass matrix of the closed form
(articulated inertia of the base as a Schur complement)."""

import mpmath
import numpy as np
import pytest

import liedyn
from liedyn.interop.pinocchio import to_pinocchio
from models.aerial_manipulator import aerial_manipulator
from models.trees import random_tree
from tests import series_oracle
from tests.helpers import assert_close, poly_jet

U = np.finfo(float).eps / 2.0   # unit roundoff

# Round-trip tolerances relative to 1 + |value|, per output order k
# (V₀^(k+1), q^(k+2)), for O(1) random jets. Both directions cancel binomial
# sums whose terms grow ~5–10× per order while the jets stay O(1), so on an
# ill-conditioned case (light links under large applied wrenches, a small
# pivot D_j) merely rounding the force jets to float64 already costs more than
# the table allows. The bound is max(table, FLOOR_FACTOR · floor) with the
# floor of each case computed a priori and independently of forward_dynamics
# (see _input_rounding_floor).
ROUNDTRIP_TOL = (1e-9, 1e-9, 1e-9, 1e-9, 1e-8, 1e-8)
# The round trip commits two errors of about the floor's size: the rounding
# of the inverse dynamics outputs, which the floor models, and forward
# dynamics' own rounding (a backward-stable recursion: its inputs perturbed by
# a few units of roundoff). Measured over the cases below: error/floor ≤ 3.9,
# the larger ratios where the floor is 1e-15..1e-10, far below the table; where
# the floor exceeds the table (the aerial manipulator with applied wrenches,
# r = 4, 5) error/floor ≤ 0.17, and forward's error against the exact solution
# of its float64 inputs ≤ 0.36 floors.
FLOOR_FACTOR = 4.0


def _case(rng, model, order, applied):
    """Random O(1) jets and the inverse dynamics they require."""
    n = model.n_joints
    q = rng.normal(size=(order + 3, n))
    Vb = rng.normal(size=(order + 2, 6)) if model.floating_base else None
    C0 = liedyn.se3.exp(rng.normal(size=6) * 0.7)
    app = rng.normal(size=(order + 1, model.n_bodies, 6)) if applied else None
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, order, applied=app)
    return C0, Vb, q, app, inv


def _forward_from_inverse(model, C0, Vb, q, app, inv, order):
    return liedyn.forward_dynamics(
        model, C0, None if Vb is None else Vb[:1], q[:2], order, tau=inv.tau,
        base_wrench=inv.base_wrench if model.floating_base else None, applied=app)


def _stack(model, base, joints):
    """``(base, joint)`` columns in the order of ν (joints only for a fixed base)."""
    return np.concatenate([base, joints], axis=1) if model.floating_base else joints


def _relative_error(actual, desired):
    """Per row: ``max_i |a_i − d_i| / (1 + |d_i|)``."""
    return np.max(np.abs(actual - desired) / (1.0 + np.abs(desired)), axis=1)


def _input_rounding_floor(model, C0, Vb, q, app, forces, motion, order):
    """Per output order k, the error that rounding the force jets to float64
    alone causes: ``max_i Σ_m |∂x_i/∂f_m| u |f_m| / (1 + |x_i|)``.

    ``x`` (the unknown jets ``ν^(1..order+1)``) and ``f`` (``τ̄^(0..order)``)
    are related by the inverse map ``f = F(x)``, so ``∂x/∂f = (∂F/∂x)⁻¹``.
    ``∂F/∂x`` is taken by complex-step differentiation (exact to roundoff) of
    the series oracle's inverse dynamics, a Taylor-series Newton–Euler that
    shares no code with liedyn's recursions: the floor depends on the case,
    not on the implementation under test, so a forward pass that became
    ill-conditioned cannot loosen its own check.
    """
    nv, rows, nb = model.nv, order + 1, 6 if model.floating_base else 0
    step = 1e-20
    J = np.empty((rows * nv, rows * nv))
    for k in range(rows):
        for i in range(nv):
            Vc = None if Vb is None else Vb.astype(complex)
            qc = q.astype(complex)
            if i < nb:
                Vc[k + 1, i] += 1j * step
            else:
                qc[k + 2, i - nb] += 1j * step
            ref = series_oracle.inverse_jets(model, C0, Vc, qc, order, app, dtype=complex)
            J[:, k * nv + i] = _stack(model, ref["base_wrench"], ref["tau"]).imag.ravel() / step
    G = np.linalg.solve(J, np.eye(rows * nv))                      # ∂x/∂f
    phi = (np.abs(G) @ (U * np.abs(forces).ravel())).reshape(rows, nv)
    return np.max(phi / (1.0 + np.abs(motion)), axis=1)


def _assert_round_trip(model, C0, Vb, q, app, inv, order):
    fd = _forward_from_inverse(model, C0, Vb, q, app, inv, order)
    desired = _stack(model, Vb[1:] if Vb is not None else None, q[2:])
    got = _stack(model, fd.base_twist[1:], fd.q[2:])
    err = _relative_error(got, desired)
    forces = _stack(model, inv.base_wrench, inv.tau)
    floor = _input_rounding_floor(model, C0, Vb, q, app, forces, desired, order)
    for k in range(order + 1):
        bound = max(ROUNDTRIP_TOL[k], FLOOR_FACTOR * floor[k])
        assert err[k] <= bound, (f"order {k}: round-trip error {err[k]:.2e} > {bound:.2e} "
                                 f"(table {ROUNDTRIP_TOL[k]:.0e}, floor {floor[k]:.2e})")
    assert_close(fd.q[:2], q[:2], rtol=0.0, what="state rows")
    if model.floating_base:
        assert_close(fd.base_wrench, inv.base_wrench, rtol=0.0, what="input base wrench")
        assert_close(fd.base_twist[:1], Vb[:1], rtol=0.0, what="state base twist")
    else:
        assert np.all(fd.base_twist == 0.0)
        # the reaction is an output and must match inverse dynamics' reaction
        scale = 1e-9 * (1.0 + np.abs(inv.base_wrench).max(axis=1, keepdims=True))
        assert_close(fd.base_wrench, inv.base_wrench, rtol=0.0, atol=scale, what="reaction")
    assert_close(fd.tau, inv.tau, rtol=0.0, what="input tau")
    return fd, err, floor


@pytest.mark.parametrize("floating, applied, extras, seed", [
    (True, False, False, 101),
    (True, True, True, 102),
    (False, False, True, 103),
    (False, True, False, 104),
    (False, True, True, 105),
])
def test_round_trip_random_trees(floating, applied, extras, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 7, floating_base=floating, armature=extras, damping=extras)
    _assert_round_trip(model, *_case(rng, model, 5, applied), 5)


@pytest.mark.parametrize("applied", [False, True])
def test_round_trip_aerial_manipulator(applied):
    """With random O(1) applied wrench jets on its 0.25 kg links the problem
    is ill-conditioned at high orders: the force jets cancel the applied
    wrenches' share to leave a small motion term, and the floor reaches
    ~1.7e-7 (r = 4) and ~1.8e-6 (r = 5). Forward dynamics must also return
    the exact solution of the float64 force jets it is given (the series
    oracle at 30 digits) to within the same bound: that error is its own."""
    rng = np.random.default_rng(106 + applied)
    model = aerial_manipulator()
    C0, Vb, q, app, inv = _case(rng, model, 5, applied)
    fd, err, floor = _assert_round_trip(model, C0, Vb, q, app, inv, 5)
    with mpmath.workdps(30):
        V_ex, q_ex = series_oracle.forward_jets(model, C0, Vb[:1], q[:2], 5, inv.tau,
                                                inv.base_wrench, app, dtype=object)
    exact = _stack(model, V_ex[1:], q_ex[2:]).astype(float)
    own = _relative_error(_stack(model, fd.base_twist[1:], fd.q[2:]), exact)
    for k in range(6):
        bound = max(ROUNDTRIP_TOL[k], FLOOR_FACTOR * floor[k])
        assert own[k] <= bound, (f"order {k}: error against the exact solution of the inputs "
                                 f"{own[k]:.2e} > {bound:.2e} (floor {floor[k]:.2e})")


def test_round_trip_at_every_requested_order():
    """A call of order r returns the same lower orders as calls of order < r
    (order k uses only the inputs of orders ≤ k)."""
    rng = np.random.default_rng(108)
    model = random_tree(rng, 6, armature=True, damping=True)
    C0, Vb, q, app, inv = _case(rng, model, 4, True)
    full = _forward_from_inverse(model, C0, Vb, q, app, inv, 4)
    for r in range(4):
        low = liedyn.forward_dynamics(model, C0, Vb[:1], q[:2], r, tau=inv.tau[:r + 1],
                                      base_wrench=inv.base_wrench[:r + 1], applied=app[:r + 1])
        assert_close(low.q, full.q[:r + 3], rtol=1e-13, atol=1e-13, what=f"q, order {r}")
        assert_close(low.base_twist, full.base_twist[:r + 2], rtol=1e-13, atol=1e-13,
                     what=f"V0, order {r}")


@pytest.mark.parametrize("floating, seed", [(True, 111), (False, 112)])
def test_order_zero_equals_pinocchio_aba(floating, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 8, floating_base=floating, armature=True, damping=True)
    n = model.n_joints
    C0 = liedyn.se3.exp(rng.normal(size=6)) if floating else model.home_pose
    V0 = rng.normal(size=(1, 6)) if floating else None
    q = rng.normal(size=(2, n))
    tau = rng.normal(size=(1, n))
    W0 = rng.normal(size=(1, 6)) if floating else None
    app = rng.normal(size=(1, model.n_bodies, 6))
    fd = liedyn.forward_dynamics(model, C0, V0, q, 0, tau=tau, base_wrench=W0, applied=app)
    pm = to_pinocchio(model)
    dV0, qdd = pm.aba(C0, V0, q, tau=tau, base_wrench=W0, applied=app)
    # Two O(N) float64 recursions on O(1) data agree to ~1e-14; 1e-11 leaves
    # room for the Pinocchio base-frame conversions.
    assert_close(fd.q[2], qdd, rtol=1e-11, atol=1e-11, what="q̈ vs pinocchio.aba")
    if floating:
        assert_close(fd.base_twist[1], dV0, rtol=1e-11, atol=1e-11, what="V̇0 vs pinocchio.aba")


def test_order_zero_aerial_manipulator_equals_pinocchio_aba():
    rng = np.random.default_rng(113)
    model = aerial_manipulator()
    pm = to_pinocchio(model)
    C0 = liedyn.se3.exp(rng.normal(size=6))
    V0, W0 = rng.normal(size=(2, 1, 6))
    q = rng.normal(size=(2, model.n_joints))
    tau = rng.normal(size=(1, model.n_joints))
    fd = liedyn.forward_dynamics(model, C0, V0, q, 0, tau=tau, base_wrench=W0)
    dV0, qdd = pm.aba(C0, V0, q, tau=tau, base_wrench=W0)
    assert_close(fd.q[2], qdd, rtol=1e-11, atol=1e-11, what="q̈")
    assert_close(fd.base_twist[1], dV0, rtol=1e-11, atol=1e-11, what="V̇0")


def _rkmk4_step(f, t, C, y, h):
    """One Runge–Kutta–Munthe-Kaas step (order 4) of ``Ċ = [V(y)] C``, ``ẏ = φ(t, C, y)``.

    ``f(t, C, y)`` returns ``(V, ẏ)``; the pose is updated by ``exp`` on SE(3)
    with ``dexp⁻¹_Ω V ≈ V − ½[Ω, V] + 1/12 [Ω, [Ω, V]]``, enough for order 4.
    """
    def dexpinv(Om, V):
        a = liedyn.se3.ad(Om)
        return V - 0.5 * a @ V + a @ (a @ V) / 12.0

    V1, y1 = f(t, C, y)
    K1 = V1
    Om = 0.5 * h * K1
    V2, y2 = f(t + 0.5 * h, liedyn.se3.exp(Om) @ C, y + 0.5 * h * y1)
    K2 = dexpinv(Om, V2)
    Om = 0.5 * h * K2
    V3, y3 = f(t + 0.5 * h, liedyn.se3.exp(Om) @ C, y + 0.5 * h * y2)
    K3 = dexpinv(Om, V3)
    Om = h * K3
    V4, y4 = f(t + h, liedyn.se3.exp(Om) @ C, y + h * y3)
    K4 = dexpinv(Om, V4)
    C_new = liedyn.se3.exp(h / 6.0 * (K1 + 2.0 * K2 + 2.0 * K3 + K4)) @ C
    return C_new, y + h / 6.0 * (y1 + 2.0 * y2 + 2.0 * y3 + y4)


@pytest.mark.parametrize("floating", [True, False])
def test_order_k_plus_1_is_time_derivative_of_order_k(floating):
    """Integrate (C₀, V₀, q, q̇) with order-0 forward dynamics under polynomial
    inputs to t = ±h, call order R there, and compare central differences of
    V₀^(k), q^(k+1) with order k at t = 0."""
    rng = np.random.default_rng(121 + floating)
    model = random_tree(rng, 5, floating_base=floating, armature=True, damping=True)
    n, R, P = model.n_joints, 3, 8
    Wc = rng.normal(size=(P, 6)) if floating else None
    tc = rng.normal(size=(P, n))
    ac = rng.normal(size=(P, model.n_bodies, 6)) * 0.3
    C_init = liedyn.se3.exp(rng.normal(size=6) * 0.7)
    y_init = np.concatenate([rng.normal(size=6) * 0.5 if floating else np.zeros(6),
                             rng.normal(size=n), rng.normal(size=n) * 0.5])

    def call(t, C, y, order):
        return liedyn.forward_dynamics(
            model, C, y[None, :6] if floating else None, np.stack([y[6:6 + n], y[6 + n:]]),
            order, tau=poly_jet(tc, t, order + 1),
            base_wrench=poly_jet(Wc, t, order + 1) if floating else None,
            applied=poly_jet(ac, t, order + 1))

    def f(t, C, y):
        fd = call(t, C, y, 0)
        return y[:6], np.concatenate([fd.base_twist[1], y[6 + n:], fd.q[2]])

    def state_at(t, substeps=4):
        C, y, h = C_init.copy(), y_init.copy(), t / substeps
        for i in range(substeps):
            C, y = _rkmk4_step(f, i * h, C, y, h) if floating else (C, _rkmk4_step(f, i * h, C, y, h)[1])
        return C, y

    h = 1e-3
    plus, minus = (call(t, *state_at(t), R) for t in (h, -h))
    mid = call(0.0, C_init, y_init, R + 3)
    X = lambda res: np.concatenate([res.base_twist[1:], res.q[2:]], axis=1)
    Xp, Xm, X0 = X(plus), X(minus), X(mid)
    # the sizes of the higher derivatives, from the series oracle's forward
    # dynamics at t = 0 (the same state and input polynomials)
    V_or, q_or = series_oracle.forward_jets(
        model, C_init, y_init[None, :6] if floating else None,
        np.stack([y_init[6:6 + n], y_init[6 + n:]]), R + 5, poly_jet(tc, 0.0, R + 6),
        poly_jet(Wc, 0.0, R + 6) if floating else None, poly_jet(ac, 0.0, R + 6))
    Xor = np.concatenate([V_or[1:] if floating else np.zeros((R + 6, 6)), q_or[2:]], axis=1)
    for k in range(R + 1):
        fd = (Xp[k] - Xm[k]) / (2.0 * h)
        # Central difference: fd = X^(k+1) + h²/6 X^(k+3) + h⁴/120 X^(k+5) + …
        # Compare with the first two terms from forward dynamics at t = 0; the
        # bound is the third (factor 2 for the next ones), its size from the
        # oracle, plus the round-off of order k at ±h (≤ 1e-12 (1 + |X|)) over
        # 2h. The RKMK4 integration error, ~(h/4)⁴ h |X^(5)|, is ~1e-17 and
        # negligible.
        pred = X0[k + 1] + h * h / 6.0 * X0[k + 3]
        tol = h**4 / 60.0 * np.abs(Xor[k + 5]) + 1e-12 * (1.0 + np.abs(Xor[k]).max()) / h
        assert np.all(tol < 1e-8 * (1.0 + np.abs(Xor[k + 1]).max())), "test not sharp enough"
        assert_close(fd, pred, rtol=0.0, atol=tol, what=f"d/dt of order {k}")


def test_base_articulated_inertia_is_schur_complement_of_mass_matrix():
    """With every joint eliminated, M^A_0 is the base block of M minus the
    joint coupling: M_bb − M_bq M_qq⁻¹ M_qb (ν = (V₀, q̇), spatial V₀)."""
    rng = np.random.default_rng(131)
    model = random_tree(rng, 7, armature=True)
    C0 = liedyn.se3.exp(rng.normal(size=6))
    q = rng.normal(size=model.n_joints)
    fd = liedyn.forward_dynamics(model, C0, np.zeros((1, 6)), np.stack([q, np.zeros_like(q)]), 0,
                                 tau=np.zeros((1, model.n_joints)), base_wrench=np.zeros((1, 6)))
    M = liedyn.mass_matrix(model, C0, q)
    schur = M[:6, :6] - M[:6, 6:] @ np.linalg.solve(M[6:, 6:], M[6:, :6])
    assert_close(fd.articulated_inertia[0], schur, rtol=1e-11, atol=1e-11 * np.abs(schur).max(),
                 what="M^A_0")
    assert_close(fd.articulated_inertia[0], fd.articulated_inertia[0].T, rtol=0.0,
                 atol=1e-14 * np.abs(schur).max(), what="symmetry")


def _point_mass_on_axis(armature=0.0, floating=True):
    """Base plus one revolute link whose only mass is a point on the joint axis."""
    b = liedyn.ModelBuilder(floating_base=floating)
    b.add_body("base", None, None, np.eye(4), liedyn.se3.spatial_inertia(1.0, np.zeros(3),
                                                                         np.eye(3) * 0.1))
    b.add_body("needle", "base", liedyn.Revolute((0.0, 0.0, 1.0), point=(0.0, 0.0, 0.0),
                                                 armature=armature),
               None, liedyn.se3.spatial_inertia(0.5, (0.0, 0.0, 0.3), np.zeros((3, 3))))
    return b.build()


@pytest.mark.parametrize("floating", [True, False])
def test_singular_pivot_names_the_joint(floating):
    model = _point_mass_on_axis(floating=floating)
    args = (np.zeros((1, 6)) if floating else None, [[0.2], [0.1]], 1)
    kw = dict(tau=np.ones((2, 1)), base_wrench=np.zeros((2, 6)) if floating else None)
    with pytest.raises(ValueError, match=r"^joint of body 'needle' \(q column 0\): singular pivot"):
        liedyn.forward_dynamics(model, None, *args, **kw)
    # armature makes the same joint regular: D = I_a
    fd = liedyn.forward_dynamics(_point_mass_on_axis(armature=0.01, floating=floating), None,
                                 *args, **kw)
    assert np.all(np.isfinite(fd.q))
    assert_close(fd.q[2], [1.0 / 0.01], rtol=1e-12, what="q̈ = τ / I_a")


def test_point_mass_floating_base_is_rejected():
    b = liedyn.ModelBuilder()
    b.add_body("ball", None, None, np.eye(4), liedyn.se3.spatial_inertia(1.0, np.zeros(3),
                                                                         np.zeros((3, 3))))
    model = b.build()
    with pytest.raises(ValueError, match=r"^base 'ball': articulated inertia M\^A_0 is not "
                                         r"positive definite"):
        liedyn.forward_dynamics(model, None, np.zeros((1, 6)), np.zeros((2, 0)), 0,
                                tau=np.zeros((1, 0)), base_wrench=np.zeros((1, 6)))


def test_bad_inputs_name_the_argument():
    rng = np.random.default_rng(141)
    model = random_tree(rng, 4)
    fixed = random_tree(rng, 4, floating_base=False)
    n = model.n_joints
    ok = dict(base_pose=None, base_twist=np.zeros((1, 6)), q=np.zeros((2, n)), order=1,
              base_wrench=np.zeros((2, 6)), tau=np.zeros((2, n)))
    liedyn.forward_dynamics(model, **ok)
    bad_state = np.zeros((2, n))
    bad_state[1, 0] = np.nan                     # q̇ is row 1 of the state
    bad = [
        (dict(order=-1), ValueError, "order"),
        (dict(order=1.0), TypeError, "order"),
        (dict(q=np.zeros((2, n + 1))), ValueError, "q"),
        (dict(q=np.zeros((1, n))), ValueError, "q"),        # the state: 2 rows, [q; q̇]
        (dict(q=np.zeros(n)), ValueError, "q"),
        (dict(q=bad_state), ValueError, "q"),
        (dict(tau=np.zeros((1, n))), ValueError, "tau"),
        (dict(tau=np.full((2, n), np.inf)), ValueError, "tau"),
        (dict(base_wrench=np.zeros((3, 6))), ValueError, "base_wrench"),
        (dict(base_wrench=None), ValueError, "base_wrench"),
        (dict(base_twist=None), ValueError, "base_twist"),
        (dict(base_twist=np.zeros(6)), ValueError, "base_twist"),     # a one-row jet (1, 6)
        (dict(base_twist=np.zeros((0, 6))), ValueError, "base_twist"),
        (dict(base_twist=np.zeros((1, 5))), ValueError, "base_twist"),
        (dict(base_pose=2 * np.eye(4)), ValueError, "base_pose"),
        (dict(applied=np.zeros((2, model.n_bodies + 1, 6))), ValueError, "applied"),
        (dict(applied=np.zeros((2, model.n_bodies, 3))), ValueError, "applied"),
    ]
    for change, err, name in bad:
        with pytest.raises(err, match=rf"^{name}:"):
            liedyn.forward_dynamics(model, **{**ok, **change})
    # the force jets are keyword-only
    with pytest.raises(TypeError):
        liedyn.forward_dynamics(model, None, ok["base_twist"], ok["q"], 1, ok["tau"])
    fixed_ok = {**ok, "base_twist": None, "base_wrench": None}
    a = liedyn.forward_dynamics(fixed, **fixed_ok)
    with pytest.raises(ValueError, match=r"^base_wrench:"):
        liedyn.forward_dynamics(fixed, **{**fixed_ok, "base_wrench": np.zeros((2, 6))})
    with pytest.raises(ValueError, match=r"^base_twist:"):
        liedyn.forward_dynamics(fixed, **{**fixed_ok, "base_twist": np.ones((1, 6))})
    with pytest.raises(ValueError, match=r"^base_twist:"):
        liedyn.forward_dynamics(fixed, **{**fixed_ok, "base_twist": np.zeros(6)})
    # a fixed base takes None or an all-zero twist jet alike
    b = liedyn.forward_dynamics(fixed, **{**fixed_ok, "base_twist": np.zeros((1, 6))})
    assert np.array_equal(a.q, b.q) and np.array_equal(a.base_wrench, b.base_wrench)


def test_each_kernel_is_compiled_once_for_every_base_and_order():
    """Forward dynamics (floating and fixed base, any order, with and without
    applied wrenches) runs one compiled specialisation of its kernel, and
    hybrid dynamics one of its own: later calls neither recompile nor add a
    second copy of the recursion."""
    from liedyn.algorithm.forward import _FORWARD_DYNAMICS
    from liedyn.algorithm.hybrid import _HYBRID_DYNAMICS
    _forward_dynamics, _hybrid_dynamics = _FORWARD_DYNAMICS.dispatcher, _HYBRID_DYNAMICS.dispatcher
    rng = np.random.default_rng(151)
    floating = random_tree(rng, 4)
    fixed = random_tree(rng, 4, floating_base=False)
    n = floating.n_joints
    liedyn.forward_dynamics(floating, None, np.zeros((1, 6)), np.zeros((2, n)), 0,
                            tau=np.zeros((1, n)), base_wrench=np.zeros((1, 6)))
    liedyn.hybrid_dynamics(fixed, None, None, np.ones((3, n)), 0, motion_driven=np.ones(n, bool))
    compiled = (len(_forward_dynamics.signatures), len(_hybrid_dynamics.signatures))
    assert compiled == (1, 1), (_forward_dynamics.signatures, _hybrid_dynamics.signatures)
    liedyn.forward_dynamics(fixed, None, None, np.ones((2, n)), 3, tau=np.ones((4, n)))
    liedyn.forward_dynamics(floating, None, np.zeros((1, 6)), np.ones((2, n)), 2,
                            tau=np.ones((3, n)), base_wrench=np.ones((3, 6)),
                            applied=np.ones((3, floating.n_bodies, 6)))
    liedyn.hybrid_dynamics(floating, None, np.zeros((4, 6)), np.ones((5, n)), 2,
                           motion_driven=[0, 2], tau=np.ones((3, n)), base_motion_driven=True,
                           applied=np.ones((3, floating.n_bodies, 6)))
    assert (len(_forward_dynamics.signatures), len(_hybrid_dynamics.signatures)) == compiled


def test_body_jets_expire_with_their_workspace_and_outputs_are_owned():
    """A result's motion and force jets are its own, read-only, and survive a
    later call on the same workspace; its body jets (about the base origin
    inside the kernel, world frame outside) are read-only, equal forward
    kinematics of the returned motion, and become unavailable once the
    workspace has served another call."""
    rng = np.random.default_rng(161)
    model = random_tree(rng, 5)
    n = model.n_joints
    ws = liedyn.Workspace(model, 2)
    C0 = liedyn.se3.exp(rng.normal(size=6))
    args = (model, C0, rng.normal(size=(1, 6)), rng.normal(size=(2, n)), 2)
    kw = dict(tau=rng.normal(size=(3, n)), base_wrench=rng.normal(size=(3, 6)), workspace=ws)
    a = liedyn.forward_dynamics(*args, **kw)
    twist = a.twist
    assert not twist.flags.writeable and not a.articulated_inertia.flags.writeable
    fk = liedyn.forward_kinematics(model, C0, a.base_twist, a.q, 3)
    assert_close(twist, fk.twist[:4], rtol=1e-12, atol=1e-12, what="twist vs kinematics")
    assert_close(a.body_pose, fk.body_pose, rtol=0, atol=1e-13, what="poses")
    q_before, q_view = a.q.copy(), a.q
    b = liedyn.forward_dynamics(*args, **{**kw, "tau": rng.normal(size=(3, n))})
    assert not np.array_equal(b.q, q_before)                     # the workspace moved on
    assert np.array_equal(a.q, q_before) and np.array_equal(q_view, q_before)
    for name in ("wrench", "screw"):
        with pytest.raises(RuntimeError, match=rf"^{name}: the workspace passed to this result's "
                                               r"call has since served another call"):
            getattr(a, name)
