"""The CasADi AD baseline (SPEC §9) as an oracle: fed the same jets, the r-th
AD time derivative of the order-0 maps equals the order-r recursions.

The baseline computes every derivative by nested forward-mode AD of a plain
Newton–Euler written from the model's body-frame data; the recursions use the
jet formulas of SPEC §3–§5. Agreement is therefore a check of the recursions'
derivative formulas, not a comparison of two copies of one code.

Tolerance: both sides are float64 evaluations of O(1) jets; the AD graph of
order r is ~3^r times the order-0 graph and the forward map adds an LDLᵀ
solve with the mass matrix (condition ≈ 6e3 on the aerial manipulator). The
measured worst case is 1.4e-10 relative (forward, order 4); 1e-8 relative to
``1 + max|value|`` leaves two orders of margin and still catches any missing
binomial term (those are O(1) errors).

The forward map has two constructions, the mass-matrix one (default) and
the paper's articulated-body one; each is checked against
``forward_dynamics`` and against the motion that produced the forces, and
the two against each other.

Graph construction (aerial manipulator, shared 2-core machine): inverse
orders 0..4 about 0.6 s in total, forward 0..4 about 0.8 s (order 4 alone
0.3 s), so order 4 stays in CI; a random 5-body tree at orders 0..2 about
0.3 s. Higher orders and larger trees are in ``experiments/bench_casadi.py``.
"""

import casadi as ca
import numpy as np
import pytest

import liedyn
from liedyn.baselines import CasadiBaseline
from liedyn.baselines.casadi_ad import base_pose_jet
from models.aerial_manipulator import aerial_manipulator
from models.trees import random_tree
from tests.helpers import assert_close, integrate_pose, poly_jet

RTOL = 1e-8   # relative to 1 + max|value|, see the module docstring


def _close(actual, desired, what):
    assert_close(actual, desired, rtol=0.0, atol=RTOL * (1.0 + np.max(np.abs(desired))), what=what)


def _jets(model, rng, R):
    """Random O(1) jets for order R: pose, base twist (R+2, 6), joints (R+3, n)."""
    if model.floating_base:
        C0 = liedyn.se3.exp(rng.normal(size=6) * 0.5)
        Vb = rng.normal(size=(R + 2, 6)) * 0.5
    else:
        C0, Vb = None, None
    return C0, Vb, rng.normal(size=(R + 3, model.n_joints)) * 0.5


def _check(model, rng, R, applied=False, forward="mass_matrix"):
    """AD inverse and forward maps agree with inverse_ and forward_dynamics
    (with random applied wrench jets when ``applied``; ``forward`` the
    construction of the forward map). Returns the forward-map outputs
    ``{r: (V̇₀^(r), q^(r+2))}``."""
    C0, Vb, q = _jets(model, rng, R)
    fl = model.floating_base
    Wa = rng.normal(size=(R + 1, model.n_bodies, 6)) * 0.5 if applied else None
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, R, applied=Wa)
    Wb = inv.base_wrench if fl else None
    fwd = liedyn.forward_dynamics(model, C0, Vb[:1] if fl else None, q[:2], R, tau=inv.tau,
                                  base_wrench=Wb, applied=Wa)
    base = CasadiBaseline(model, applied=applied, forward=forward)
    outputs = {}
    for r in range(R + 1):
        Wa_r = Wa[:r + 1] if applied else None
        W_ad, tau_ad = base.inverse_derivative(C0, Vb[:r + 2] if fl else None, q[:r + 3], r, Wa_r)
        _close(W_ad, inv.base_wrench[r], f"W0^({r})")
        _close(tau_ad, inv.tau[r], f"tau^({r})")
        dV_ad, q_ad = base.forward_derivative(C0, Vb[:r + 1] if fl else None, q[:r + 2],
                                              Wb[:r + 1] if fl else None, inv.tau[:r + 1], r,
                                              Wa_r)
        _close(dV_ad, fwd.base_twist[r + 1], f"V0^({r + 1}) vs forward_dynamics")
        _close(q_ad, fwd.q[r + 2], f"q^({r + 2}) vs forward_dynamics")
        _close(q_ad, q[r + 2], f"q^({r + 2}) vs the motion that produced the forces")
        if fl:
            _close(dV_ad, Vb[r + 1], f"V0^({r + 1}) vs the motion that produced the forces")
        outputs[r] = (dV_ad, q_ad)
    return outputs


def test_aerial_manipulator_orders_0_to_4():
    _check(aerial_manipulator(), np.random.default_rng(401), 4)


def test_random_fixed_base_tree_with_applied_wrenches_orders_0_to_2():
    rng = np.random.default_rng(402)
    model = random_tree(rng, 5, floating_base=False, armature=True, damping=True)
    _check(model, rng, 2, applied=True)


def test_random_floating_tree_with_prismatic_joints_and_applied_wrenches_orders_0_to_2():
    rng = np.random.default_rng(403)
    model = random_tree(rng, 5, floating_base=True, prismatic_fraction=0.5, armature=True,
                        damping=True)
    _check(model, rng, 2, applied=True)


@pytest.mark.parametrize("floating_base", [True, False])
def test_articulated_forward_map_agrees_with_the_mass_matrix_map_orders_0_to_2(floating_base):
    """The paper's construction of the forward map (articulated-body algorithm
    with ``mtimes`` and one 6×6 ``solve`` for the base twist) against the
    mass-matrix construction (Jacobian of Newton–Euler, LDLᵀ of the whole
    system: no step in common) and against ``forward_dynamics``, on a random
    5-body tree with prismatic joints, armature, damping and applied wrench
    jets. Same seed for both, so both see the same jets."""
    model = random_tree(np.random.default_rng(405), 5, floating_base=floating_base,
                        prismatic_fraction=0.5, armature=True, damping=True)
    paper = _check(model, np.random.default_rng(406), 2, applied=True, forward="articulated")
    ours = _check(model, np.random.default_rng(406), 2, applied=True, forward="mass_matrix")
    for r in paper:
        _close(paper[r][0], ours[r][0], f"V0^({r + 1}): articulated vs mass matrix")
        _close(paper[r][1], ours[r][1], f"q^({r + 2}): articulated vs mass matrix")


def test_articulated_forward_map_on_the_aerial_manipulator_orders_0_to_2():
    _check(aerial_manipulator(), np.random.default_rng(407), 2, forward="articulated")


@pytest.mark.parametrize("kind", ["numeric", "SX", "MX"])
def test_base_pose_jet_matches_integrated_pose(kind):
    """``C₀^(k)`` of SPEC §3 equals the time derivatives of the pose integrated
    on SE(3) from the twist polynomial: central differences of C₀^(k−1).
    Step 1e-3: O(h²) truncation ≈ 1e-7 relative for O(1) jets, so 1e-5. With
    ``kind`` SX or MX, through a CasADi function of a symbolic pose and twist
    jet, evaluated at the same numbers."""
    rng = np.random.default_rng(404)
    R, h = 3, 1e-3
    C0 = liedyn.se3.exp(rng.normal(size=6))
    Vc = rng.normal(size=(R + 3, 6)) * 0.5
    twist = lambda s: poly_jet(Vc, s, 1)[0]
    pose_jet = lambda C, V: base_pose_jet(C, V, R + 1)
    if kind != "numeric":
        S = getattr(ca, kind)
        C, V = S.sym("C", 4, 4), S.sym("V", R + 1, 6)
        out = base_pose_jet(C, V, R + 1)
        assert isinstance(out, S) and out.shape == (R + 1, 12)
        f = ca.Function("pose_jet", [C, V], [out])
        pose_jet = lambda C, V: np.array(f(C, V))
    jet = lambda s: pose_jet(integrate_pose(C0, twist, s), poly_jet(Vc, s, R + 1))
    mid, plus, minus = jet(0.0), jet(h), jet(-h)
    for k in range(1, R + 1):
        fd = (plus[k - 1] - minus[k - 1]) / (2 * h)
        assert_close(fd, mid[k], rtol=0.0, atol=1e-5 * (1.0 + np.max(np.abs(mid[k]))),
                     what=f"C0^({k})")


def _symbols(S, named):
    """One CasADi symbol of type ``S`` per ``name: shape``."""
    return {name: S.sym(name, *shape) for name, shape in named.items()}


def _evaluate(symbols, outputs, values):
    """The CasADi function of ``symbols`` (name → symbol) to ``outputs``,
    evaluated at ``values`` (name → array); NumPy results."""
    names = list(symbols)
    f = ca.Function("f", [symbols[k] for k in names], list(outputs))
    res = f(*[values[k] for k in names])
    return [np.array(x, float).ravel() for x in (res if isinstance(res, tuple) else [res])]


@pytest.mark.parametrize("kind", ["SX", "MX"])
def test_symbolic_floating_base_inputs_build_the_parameters_and_the_derivatives(kind):
    """Every argument of ``pack_inverse_params`` / ``pack_forward_params`` and
    ``inverse_derivative`` / ``forward_derivative`` a CasADi symbol (floating
    base, applied wrenches): ``p`` is a symbolic column that, evaluated at
    numbers, is the ``p`` of the numeric path (1e-13: the same products), and
    the derivatives, evaluated at numbers, equal ``inverse_dynamics`` and
    ``forward_dynamics`` (tolerance of the module docstring). The symbolic
    applied jet is (R+1, 6N), body-major."""
    S, R = getattr(ca, kind), 2
    rng = np.random.default_rng(409)
    model = random_tree(rng, 5, floating_base=True, prismatic_fraction=0.5, damping=True)
    n, N = model.n_joints, model.n_bodies
    base = CasadiBaseline(model, applied=True)
    C0, Vb, q = _jets(model, rng, R)
    Wa = rng.normal(size=(R + 1, N, 6)) * 0.5
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, R, applied=Wa)
    fwd = liedyn.forward_dynamics(model, C0, Vb[:1], q[:2], R, tau=inv.tau,
                                  base_wrench=inv.base_wrench, applied=Wa)
    values = dict(C=C0, V=Vb, q=q, Wb=inv.base_wrench, tau=inv.tau, Wa=Wa.reshape(R + 1, 6 * N))

    x = _symbols(S, dict(C=(4, 4), V=(R + 2, 6), q=(R + 3, n), Wa=(R + 1, 6 * N)))
    p = base.pack_inverse_params(x["C"], x["V"], x["q"], R, x["Wa"])
    assert isinstance(p, S) and p.shape == (base.inverse_layout(R).size, 1)
    [p_num] = _evaluate(x, [p], values)
    assert_close(p_num, base.pack_inverse_params(C0, Vb, q, R, Wa), rtol=0.0, atol=1e-13,
                 what="symbolic inverse p")
    W_r, tau_r = _evaluate(x, base.inverse_derivative(x["C"], x["V"], x["q"], R, x["Wa"]), values)
    _close(W_r, inv.base_wrench[R], f"W0^({R}) from symbolic inputs")
    _close(tau_r, inv.tau[R], f"tau^({R}) from symbolic inputs")

    x = _symbols(S, dict(C=(4, 4), V=(R + 1, 6), q=(R + 2, n), Wb=(R + 1, 6), tau=(R + 1, n),
                         Wa=(R + 1, 6 * N)))
    args = (x["C"], x["V"], x["q"], x["Wb"], x["tau"], R, x["Wa"])
    p = base.pack_forward_params(*args)
    assert isinstance(p, S) and p.shape == (base.forward_layout(R).size, 1)
    values.update(V=Vb[:R + 1], q=q[:R + 2])
    [p_num] = _evaluate(x, [p], values)
    assert_close(p_num, base.pack_forward_params(C0, Vb[:R + 1], q[:R + 2], inv.base_wrench,
                                                 inv.tau, R, Wa),
                 rtol=0.0, atol=1e-13, what="symbolic forward p")
    dV, qdd = _evaluate(x, base.forward_derivative(*args), values)
    _close(dV, fwd.base_twist[R + 1], f"V0^({R + 1}) from symbolic inputs")
    _close(qdd, fwd.q[R + 2], f"q^({R + 2}) from symbolic inputs")


def test_symbolic_and_numeric_arguments_mix():
    """Numeric pose and twist jet with a symbolic joint jet (floating base),
    and a fixed base with only ``tau`` symbolic: the derivatives, evaluated
    at numbers, equal ``inverse_dynamics`` / ``forward_dynamics``."""
    R = 1
    rng = np.random.default_rng(410)
    model = random_tree(rng, 4, floating_base=True)
    C0, Vb, q = _jets(model, rng, R)
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, R)
    x = _symbols(ca.SX, dict(q=(R + 3, model.n_joints)))
    W_r, tau_r = _evaluate(x, CasadiBaseline(model).inverse_derivative(C0, Vb, x["q"], R),
                           dict(q=q))
    _close(W_r, inv.base_wrench[R], f"W0^({R}), symbolic q only")
    _close(tau_r, inv.tau[R], f"tau^({R}), symbolic q only")

    fixed = random_tree(rng, 4, floating_base=False, armature=True)
    _, _, q = _jets(fixed, rng, R)
    inv = liedyn.inverse_dynamics(fixed, None, None, q, R)
    fwd = liedyn.forward_dynamics(fixed, None, None, q[:2], R, tau=inv.tau)
    x = _symbols(ca.MX, dict(tau=(R + 1, fixed.n_joints)))
    dV, qdd = _evaluate(x, CasadiBaseline(fixed).forward_derivative(None, None, q[:R + 2], None,
                                                                    x["tau"], R),
                        dict(tau=inv.tau))
    assert np.array_equal(dV, np.zeros(6))
    _close(qdd, fwd.q[R + 2], f"q^({R + 2}), symbolic tau only")


def test_symbolic_inputs_that_do_not_fit_name_the_argument():
    model = random_tree(np.random.default_rng(411), 3, floating_base=True)
    n = model.n_joints
    base = CasadiBaseline(model, applied=True)
    C, V, q = ca.SX.sym("C", 4, 4), ca.SX.sym("V", 3, 6), ca.SX.sym("q", 4, n)
    with pytest.raises(TypeError, match=r"^q: a casadi\.MX with a casadi\.SX \(base_pose\)"):
        base.pack_inverse_params(C, V, ca.MX.sym("q", 4, n), 1)
    with pytest.raises(ValueError, match=r"^q: expected a symbolic jet of shape \(4 or more, "):
        base.pack_inverse_params(C, V, q[:3, :], 1)
    with pytest.raises(ValueError, match=r"^base_twist:"):
        base.pack_inverse_params(C, V[:, :5], q, 1)
    with pytest.raises(ValueError, match=r"^base_pose:"):
        base.pack_inverse_params(C[:3, :], V, q, 1)
    with pytest.raises(ValueError, match=r"^applied:"):
        base.pack_inverse_params(C, V, q, 1, ca.SX.sym("Wa", 2, 6))
    with pytest.raises(ValueError, match=r"^tau: expected a symbolic jet of shape \(2, "):
        base.pack_forward_params(C, V[:2, :], q[:3, :], np.zeros((2, 6)), ca.SX.sym("t", 3, n), 1)
    with pytest.raises(ValueError, match=r"^base_wrench:"):
        base.pack_forward_params(C, V[:2, :], q[:3, :], ca.SX.sym("W", 2, 3), np.zeros((2, n)), 1)
    fixed = CasadiBaseline(random_tree(np.random.default_rng(412), 3, floating_base=False))
    with pytest.raises(ValueError, match=r"^base_twist: a fixed base does not move"):
        fixed.pack_inverse_params(None, V, q, 1)
    with pytest.raises(TypeError, match=r"^base_twist:"):
        base_pose_jet(C, ca.MX.sym("V", 2, 6), 3)


def test_functions_are_built_once_per_order_and_timed():
    base = CasadiBaseline(aerial_manipulator())
    f = base.inverse(1)
    assert base.inverse(1) is f
    assert base.build_seconds[("inverse", 1)] > 0.0
    assert f.size1_in(1) == base.inverse_layout(1).size
    assert f.size1_out(0) == 6 + base.model.n_joints


def test_layouts_are_tuples_of_name_rows_width_and_locate_the_blocks_of_p():
    """The layouts are the tuples their docstrings promise, with ``size`` the
    length of ``p`` the function takes and ``slice`` the place of a block in
    the ``p`` that ``pack_*_params`` writes (row-major, row k = k-th
    coefficient)."""
    model = aerial_manipulator()
    n = model.n_joints
    base = CasadiBaseline(model)
    inv = base.inverse_layout(1)
    assert isinstance(inv, tuple)
    assert tuple(inv) == (("pose", 2, 12), ("twist", 3, 6), ("q", 4, n))
    assert [b.name for b in inv] == ["pose", "twist", "q"] and inv[2].width == n
    assert inv.size == 24 + 18 + 4 * n == base.inverse(1).size1_in(1)
    assert repr(inv) == (f"ParameterLayout([('pose', 2, 12), ('twist', 3, 6), ('q', 4, {n})], "
                         f"size={inv.size})")
    rng = np.random.default_rng(408)
    C0, Vb, q = _jets(model, rng, 1)
    p = base.pack_inverse_params(C0, Vb, q, 1)
    assert p.shape == (inv.size,)
    assert np.array_equal(p[inv.slice("q")], q.ravel())
    assert np.array_equal(p[inv.slice("twist")], Vb.ravel())
    assert np.array_equal(p[inv.slice("pose")][:12], C0[:3].ravel())
    with pytest.raises(ValueError, match=r"^name:"):
        inv.slice("tau")
    assert tuple(base.forward_layout(2)) == (("pose", 3, 12), ("twist", 3, 6), ("q", 4, n),
                                             ("wrench", 3, 6), ("tau", 3, n))
    fixed = CasadiBaseline(random_tree(rng, 4, floating_base=False), applied=True)
    assert tuple(fixed.forward_layout(1)) == (("pose", 1, 12), ("q", 3, 3), ("tau", 2, 3),
                                              ("applied", 2, 24))
    assert fixed.forward_layout(1).size == fixed.forward(1).size1_in(1) == 12 + 9 + 6 + 48


def test_bad_inputs_name_the_argument():
    base = CasadiBaseline(aerial_manipulator())
    n = base.model.n_joints
    with pytest.raises(ValueError, match=r"^q:"):
        base.pack_inverse_params(np.eye(4), np.zeros((3, 6)), np.zeros((2, n)), 1)
    with pytest.raises(ValueError, match=r"^base_twist:"):
        base.pack_inverse_params(np.eye(4), np.zeros((2, 6)), np.zeros((4, n)), 1)
    with pytest.raises(ValueError, match=r"^base_wrench:"):
        base.pack_forward_params(np.eye(4), np.zeros((2, 6)), np.zeros((3, n)), None,
                                 np.zeros((2, n)), 1)
    with pytest.raises(ValueError, match=r"^tau:"):
        base.pack_forward_params(np.eye(4), np.zeros((2, 6)), np.zeros((3, n)), np.zeros((2, 6)),
                                 np.zeros((1, n)), 1)
    with pytest.raises(ValueError, match=r"^applied:"):
        base.pack_inverse_params(np.eye(4), np.zeros((3, 6)), np.zeros((4, n)), 1,
                                 np.zeros((2, base.model.n_bodies, 6)))
    with pytest.raises(ValueError, match=r"^solver:"):
        CasadiBaseline(base.model, solver="lu")
    with pytest.raises(ValueError, match=r"^forward:"):
        CasadiBaseline(base.model, forward="crba")
    with pytest.raises(TypeError, match=r"^model:"):
        CasadiBaseline(None)
