"""One input policy everywhere: every public function refuses a missing or
wrong model, ragged lists, dates, booleans, complex numbers and strings with
an error naming the argument; hybrid dynamics refuses ambiguous or repeated
joint lists; orders whose binomials overflow are refused; finite inputs that
would give non-finite results raise instead of returning them."""

import datetime

import numpy as np
import pytest

import liedyn
from liedyn._checks import MAX_ORDER
from liedyn.baselines.casadi_ad import CasadiBaseline
from models.aerial_manipulator import aerial_manipulator
from models.trees import random_tree

MODEL = aerial_manipulator()
R = 1
N, n = MODEL.n_bodies, MODEL.n_joints
V = np.zeros((R + 2, 6))
Q = np.zeros((R + 3, n))
TAU = np.zeros((R + 1, n))
W = np.zeros((R + 1, 6))
EYE = np.eye(4)

# Every public entry point, with arguments valid except where a case replaces one.
CALLS = {
    "forward_kinematics": lambda m=MODEL, q=Q[:R + 2]: liedyn.forward_kinematics(
        m, EYE, V[:R + 1], q, R),
    "inverse_dynamics": lambda m=MODEL, q=Q: liedyn.inverse_dynamics(m, EYE, V, q, R),
    "forward_dynamics": lambda m=MODEL, q=Q[:2]: liedyn.forward_dynamics(
        m, EYE, V[:1], q, R, tau=TAU, base_wrench=W),
    "hybrid_dynamics": lambda m=MODEL, q=Q: liedyn.hybrid_dynamics(
        m, EYE, V, q, R, motion_driven=[0], tau=TAU, base_wrench=W),
    "closed_form_jets": lambda m=MODEL, q=Q: liedyn.closed_form_jets(m, EYE, V, q, R),
    "mass_matrix": lambda m=MODEL, q=Q[0]: liedyn.mass_matrix(m, EYE, q),
    "gravity_vector": lambda m=MODEL, q=Q[0]: liedyn.gravity_vector(m, EYE, q),
    "coriolis_matrix": lambda m=MODEL, q=Q[:2]: liedyn.coriolis_matrix(m, EYE, V[:1], q),
    "inverse_dynamics_batch": lambda m=MODEL, q=Q[None]: liedyn.inverse_dynamics_batch(
        m, EYE[None], V[None], q, R),
    "forward_dynamics_batch": lambda m=MODEL, q=Q[None, :2]: liedyn.forward_dynamics_batch(
        m, EYE[None], V[None, :1], q, R, tau=TAU[None], base_wrench=W[None]),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("bad", [None, "aerial_manipulator", 3, object()])
def test_a_missing_or_wrong_model_is_named(name, bad):
    with pytest.raises(TypeError, match="^model: expected a liedyn.Model"):
        CALLS[name](m=bad)


@pytest.mark.parametrize("bad", [None, "x"])
def test_workspace_and_baseline_name_the_model(bad):
    with pytest.raises(TypeError, match="^model: expected a liedyn.Model"):
        liedyn.Workspace(bad, 1)
    with pytest.raises(TypeError, match="^model: expected a liedyn.Model"):
        CasadiBaseline(bad)
    with pytest.raises(TypeError, match="^model: expected a liedyn.Model"):
        liedyn.damping_matrix(bad)


def _bad_q(kind, good):
    """``good`` (an array) turned into an input of the given ``kind``."""
    if kind == "ragged":                      # the last innermost row one entry short
        nested = good.tolist() if good.ndim > 1 else [good.tolist(), good.tolist()]
        inner = nested
        while isinstance(inner[-1][-1], list):
            inner = inner[-1]
        inner[-1].pop()
        return nested
    if kind == "dates":
        return np.full(good.shape, np.datetime64("2026-01-01"))
    if kind == "booleans":
        return np.zeros(good.shape, dtype=bool)
    if kind == "complex numbers":
        return good + 1j
    if kind == "strings":
        return np.full(good.shape, "0.0")
    raise AssertionError(kind)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("kind", ["ragged", "dates", "booleans", "complex numbers", "strings"])
def test_non_numeric_q_is_refused_by_name(name, kind):
    good = CALLS[name].__defaults__[1]
    bad = _bad_q(kind, np.asarray(good))
    with pytest.raises(TypeError, match="^q: expected a (rectangular )?real numeric array"):
        CALLS[name](q=bad)


@pytest.mark.parametrize("tau,exc,msg", [
    (TAU + 1j, TypeError, "^tau: expected a real numeric array, got complex"),
    (np.full(TAU.shape, "1.0"), TypeError, "^tau: expected a real numeric array, got strings"),
    (np.full(TAU.shape, np.nan), ValueError, "^tau: contains NaN or infinite values where"),
])
def test_hybrid_force_jets_follow_the_same_policy(tau, exc, msg):
    with pytest.raises(exc, match=msg):
        liedyn.hybrid_dynamics(MODEL, EYE, V, Q, R, motion_driven=[0], tau=tau, base_wrench=W)


@pytest.mark.parametrize("mask,exc,msg", [
    ([1, 0, 1, 0, 0, 0], TypeError, "^motion_driven: ambiguous integers"),
    ([0, 0], ValueError, "^motion_driven: each joint may be listed once"),
    ([6], ValueError, "^motion_driven: joint columns must lie in"),
    (np.ones(5, bool), ValueError, "^motion_driven: a boolean mask must have shape"),
    ([0.5], TypeError, "^motion_driven: expected a boolean mask or joint columns"),
    (None, TypeError, "^motion_driven:"),
    (["nope"], ValueError, "^motion_driven: unknown joint 'nope'"),
])
def test_hybrid_joint_selection_is_unambiguous(mask, exc, msg):
    with pytest.raises(exc, match=msg):
        liedyn.hybrid_dynamics(MODEL, EYE, V, Q, R, motion_driven=mask, tau=TAU, base_wrench=W)


def test_hybrid_joint_selection_by_mask_columns_or_names_agrees():
    rng = np.random.default_rng(90)
    q = rng.normal(size=Q.shape)
    tau = rng.normal(size=TAU.shape)
    Vb = rng.normal(size=V.shape)
    names = [MODEL.joint_names[1], MODEL.joint_names[4]]
    mask = np.zeros(n, bool)
    mask[[1, 4]] = True
    results = [liedyn.hybrid_dynamics(MODEL, EYE, Vb, q, R, motion_driven=sel, tau=tau,
                                      base_wrench=W)
               for sel in (mask, [1, 4], names)]
    for res in results[1:]:
        assert np.array_equal(res.q, results[0].q) and np.array_equal(res.tau, results[0].tau)


@pytest.mark.parametrize("order,exc", [(MAX_ORDER + 1, ValueError), (-1, ValueError),
                                       (1.0, TypeError), (True, TypeError), ("2", TypeError)])
def test_orders_whose_binomials_overflow_are_refused(order, exc):
    with pytest.raises(exc, match="^order:"):
        liedyn.inverse_dynamics(MODEL, EYE, None, Q, order)


def test_the_highest_order_at_rest_is_zero_not_nan():
    """A robot at rest at order 1026 (the largest whose binomials are
    finite): every derivative of the forces vanishes, exactly."""
    model = random_tree(np.random.default_rng(91), 3, floating_base=False)
    r = MAX_ORDER
    q = np.zeros((r + 3, model.n_joints))
    q[0] = (0.3, -0.2)
    res = liedyn.inverse_dynamics(model, None, None, q, r)
    assert np.all(np.isfinite(res.tau)) and np.all(res.tau[1:] == 0.0)
    assert np.all(res.base_wrench[1:] == 0.0)


@pytest.mark.parametrize("call", [
    lambda: liedyn.inverse_dynamics(MODEL, EYE, np.full(V.shape, 1e200), Q, R),
    lambda: liedyn.forward_dynamics(MODEL, EYE, np.full((1, 6), 1e200), Q[:2], R, tau=TAU,
                                    base_wrench=W),
    lambda: liedyn.forward_kinematics(MODEL, EYE, np.full((3, 6), 1e200), np.zeros((4, n)), 2),
    lambda: liedyn.closed_form_jets(MODEL, EYE, np.full(V.shape, 1e200), Q, R),
])
def test_huge_twists_raise_instead_of_returning_non_finite_results(call):
    with pytest.raises(ValueError, match="^result: not finite although every input is"):
        call()


def test_huge_positions_raise_instead_of_returning_non_finite_results():
    """Circling the world z axis 1e300 m away: the moment of the centripetal
    force about the world origin (1e600) overflows; about the base origin it
    does not."""
    far = np.eye(4)
    far[:3, 3] = (1e300, 0.0, 1e300)
    Vb = np.zeros(V.shape)
    Vb[0, 2] = 1.0                          # ω = e_z, v = 0: ṗ = ω × p
    with pytest.raises(ValueError, match="^result: not finite"):
        liedyn.inverse_dynamics(MODEL, far, Vb, Q, R)


@pytest.mark.parametrize("call,msg", [
    (lambda: liedyn.se3.exp(np.full(6, 1e200)), "^V: too large"),
    (lambda: liedyn.se3.exp_so3(np.full(3, 1e200)), "^V: too large"),
    (lambda: liedyn.se3.spatial_inertia(1e300, np.full(3, 1e300), np.eye(3)), "^mass, com: too"),
])
def test_se3_raises_instead_of_returning_non_finite_results(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


def test_datetimes_and_timedeltas_are_not_numbers():
    for x in (np.array([datetime.timedelta(seconds=1)] * n, dtype="m8[s]"),
              np.array(["2026-01-01"] * n, dtype="M8[D]")):
        with pytest.raises(TypeError, match="^q: expected a real numeric array, got"):
            liedyn.mass_matrix(MODEL, EYE, x)


# Every entry point that takes applied wrench jets, with a given ``applied``.
APPLIED_CALLS = {
    "inverse_dynamics": lambda a: liedyn.inverse_dynamics(MODEL, EYE, V, Q, R, applied=a),
    "forward_dynamics": lambda a: liedyn.forward_dynamics(MODEL, EYE, V[:1], Q[:2], R, tau=TAU,
                                                          base_wrench=W, applied=a),
    "hybrid_dynamics": lambda a: liedyn.hybrid_dynamics(MODEL, EYE, V, Q, R, motion_driven=[0],
                                                        tau=TAU, base_wrench=W, applied=a),
    "closed_form_jets": lambda a: liedyn.closed_form_jets(MODEL, EYE, V, Q, R, applied=a),
    "inverse_dynamics_batch": lambda a: liedyn.inverse_dynamics_batch(
        MODEL, EYE[None], V[None], Q[None], R, applied=[a]),
}


@pytest.mark.parametrize("name", sorted(APPLIED_CALLS))
@pytest.mark.parametrize("shape", [(0, MODEL.n_bodies, 6), (0, 0, 6)])
@pytest.mark.parametrize("as_list", [False, True])
def test_empty_applied_wrenches_are_refused_not_read_as_none(name, shape, as_list):
    empty = np.zeros(shape)
    want = rf"shape \(B, {R + 1}, {MODEL.n_bodies}, 6\)" if name.endswith("_batch") else \
        rf"a jet of shape \({R + 1}, {MODEL.n_bodies}, 6\)"
    with pytest.raises(ValueError, match=rf"^applied: expected {want}"):
        APPLIED_CALLS[name](empty.tolist() if as_list else empty)
