"""Coulomb friction at point contacts (SPEC §13.4) against independent
routes: central differences in time of the cone margin (of analytic forces,
and of the order-0 contact forces along a constrained motion of Solo-12),
the closed-form slip time of force ramps, and Solo-12 standing on a slope:
the friction-pyramid distribution against SciPy's SLSQP, the whole-robot
Newton–Euler balance, the analytic feasibility bound ``μ ≥ tan α``, the
bilateral minimum-norm jets where no facet is active, and central
differences of the order-0 distribution where facets are."""

import numpy as np
import pytest

import liedyn as ld
from tests.contact_robots import FEET, solo, solo_standing
from tests.helpers import assert_close, poly_jet
from tests.test_contact_inverse import _motion, _shifted_state

ALPHA = np.radians(15.0)                      # slope, tan α = 0.268
SLOPE = np.array([0.0, -np.sin(ALPHA), np.cos(ALPHA)])


def _force(t, rows):
    """Jet of λ(t) = (3 + sin 2t, 1 − t², 10 + cos t) at t."""
    out = np.zeros((rows, 3))
    for k in range(rows):
        out[k, 0] = (3.0 if k == 0 else 0.0) + 2.0 ** k * np.sin(2 * t + k * np.pi / 2)
        out[k, 1] = [1 - t * t, -2 * t, -2.0][k] if k < 3 else 0.0
        out[k, 2] = (10.0 if k == 0 else 0.0) + np.cos(t + k * np.pi / 2)
    return out


def test_cone_margin_of_analytic_forces_against_central_differences():
    """``μ λ_n − ‖λ_t‖`` at order 0 by its definition; ``s^(k)`` as the
    fourth-order central difference of ``s^(k−1)`` (h = 1e-3: error ~1e-12
    of the jet)."""
    n, mu, r = np.array([0.1, 0.3, 1.0]), 0.7, 4
    s = ld.friction_cone_margin(_force(0.2, r + 1), n, mu)
    nu = n / np.linalg.norm(n)
    lam = _force(0.2, 1)[0]
    assert_close(s[0], mu * lam @ nu - np.linalg.norm(lam - (lam @ nu) * nu), 1e-14,
                 what="s")
    h = 1e-3
    for k in range(1, r + 1):
        lo = {i: ld.friction_cone_margin(_force(0.2 + i * h, k), n, mu)[k - 1]
              for i in (-2, -1, 1, 2)}
        d = (-lo[2] + 8 * lo[1] - 8 * lo[-1] + lo[-2]) / (12 * h)
        assert_close(s[k], d, 0.0, 1e-9 * max(abs(s[k]), 1.0), what=f"s^({k})")


def test_cone_margin_jets_of_solo_feet_are_the_time_derivatives_of_the_forces():
    """Along a constrained motion of Solo-12 (4 point feet, order-6 jets),
    the margins of the force jets of order 2 against central differences of
    the margins of the order-0 forces at the shifted states (the Taylor
    polynomials of the motion and the torques)."""
    model = solo()
    cs = ld.ConstraintSet(model, [ld.Contact3D(f) for f in FEET])
    R, h, mu = 6, 1e-3, 0.8
    rng = np.random.default_rng(8)
    C0, f = _motion(model, cs, rng, R, scale=0.1, gentle=True)
    s = [ld.friction_cone_margin(f.force_of(i)[:3], [0, 0, 1], mu) for i in range(4)]
    vals = {}
    for i in (-2, -1, 0, 1, 2):
        C, V, q = _shifted_state(C0, f, R, i * h)
        tau = poly_jet(f.tau, i * h, 1)
        g = ld.constrained_forward_dynamics(model, cs, C, V[:1], q[:2], 0, tau=tau,
                                            base_wrench=np.zeros((1, 6)))
        vals[i] = np.array([ld.friction_cone_margin(g.force_of(c)[:1], [0, 0, 1], mu)[0]
                            for c in range(4)])
    d1 = (-vals[2] + 8 * vals[1] - 8 * vals[-1] + vals[-2]) / (12 * h)
    d2 = (-vals[2] + 16 * vals[1] - 30 * vals[0] + 16 * vals[-1] - vals[-2]) / (12 * h * h)
    for c in range(4):
        size = np.abs(s[c]).max()
        assert_close(s[c][1], d1[c], 0.0, 1e-7 * size, what=f"{FEET[c]}: s'")
        assert_close(s[c][2], d2[c], 0.0, 1e-5 * size, what=f"{FEET[c]}: s''")


def _ramp(f0, rate, N, extra=0.0, r=1):
    """Force jet of ``λ(t) = (f0 + rate t) x + extra y + N z``."""
    lam = np.zeros((r + 1, 3))
    lam[0] = [f0, extra, N]
    if r >= 1:
        lam[1] = [rate, 0, 0]
    return lam


def test_time_to_slip_of_a_force_ramp():
    """``μN − |f0 + ṙ t|`` reaches zero at ``(μN − f0)/ṙ`` exactly; with a
    constant sideways component ``c`` the margin is not a polynomial, and the
    predictions converge with the order to
    ``(√((μN)² − c²) − f0) / ṙ``."""
    mu, N, f0, rate = 0.5, 100.0, 30.0, 8.0
    s = ld.friction_cone_margin(_ramp(f0, rate, N, r=3), [0, 0, 1], mu)
    assert_close(s, [mu * N - f0, -rate, 0, 0], 1e-14, 1e-13, what="ramp margin")
    assert_close(ld.time_to_slip(s), (mu * N - f0) / rate, 1e-13, what="time to slip")
    # the Taylor series of ‖λ_t‖ converges for |t| < |f0 + i c| / ṙ = 3.8 s,
    # beyond the slip time 2.49 s: the predictions converge geometrically
    c = 3.0
    exact = (np.sqrt((mu * N) ** 2 - c * c) - f0) / rate
    errs = [abs(ld.time_to_slip(ld.friction_cone_margin(_ramp(f0, rate, N, c, r), [0, 0, 1],
                                                        mu)) - exact) for r in (2, 6, 12)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-3 * exact, errs
    assert ld.time_to_slip(-s) == 0.0                                 # outside the cone
    assert ld.time_to_slip([1.0, 0.5]) == np.inf                      # moving inwards
    assert ld.time_to_slip(s, horizon=1.0) == np.inf                  # beyond the horizon


def test_a_zero_tangential_force_has_no_margin_derivative():
    lam = np.array([[0, 0, 10.0], [1.0, 0, 0]])
    assert ld.friction_cone_margin(lam[:1], [0, 0, 1], 0.5)[0] == 5.0
    with pytest.raises(ValueError, match="tangential force is zero"):
        ld.friction_cone_margin(lam, [0, 0, 1], 0.5)


def _slope_contacts(model, C0, q):
    return [ld.PointContact(f, ld.Plane(SLOPE, point=ld.frame_pose(model, C0, q, f)[:3, 3],
                                        name="slope")) for f in FEET]


def _pyramid(normal, mu, F):
    """The facet rows of SPEC §13.4 built here: ``t1 ∝ n × e`` (``e`` the
    world axis of the smallest ``|n_i|``), ``t2 = n × t1``."""
    n = normal / np.linalg.norm(normal)
    t1 = np.cross(n, np.eye(3)[np.argmin(np.abs(n))])
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(n, t1)
    return np.array([np.cos(2 * np.pi * j / F) * t1 + np.sin(2 * np.pi * j / F) * t2
                     - mu * np.cos(np.pi / F) * n for j in range(F)])


@pytest.mark.parametrize("mu,F", [(0.8, 4), ([0.3, 0.3, 1.0, 1.0], 4), (0.4, 8)])
def test_solo_on_a_slope_distribution_against_slsqp_and_newton_euler(mu, F):
    """Standing still on a 15° slope: the forces meet every facet, carry the
    weight (Pinocchio's total mass) and reproduce τ through H-GRNE with
    them applied; SciPy's SLSQP on the same QP (facets built here) finds the
    same forces."""
    import pinocchio as pin
    from scipy.optimize import minimize
    from tests.robots import real_robot
    model, bridge = real_robot("solo12")
    C0, q = solo_standing(model)
    contacts = _slope_contacts(model, C0, q)
    still = (np.zeros((2, 6)), np.vstack([q, np.zeros((2, model.n_joints))]))
    out = ld.friction_cone_distribution(model, contacts, C0, *still, 0, mu=mu, facets=F)
    lam = out.force[0]
    mus = np.broadcast_to(np.asarray(mu, float), (4,))
    G = np.zeros((4 * F, 12))
    for i in range(4):
        G[i * F:(i + 1) * F, 3 * i:3 * i + 3] = _pyramid(SLOPE, mus[i], F)
    assert (G @ lam).max() <= 1e-9 * np.abs(lam).max() and out.margin.min() > 0
    weight = pin.computeTotalMass(bridge.model) * 9.81
    assert_close(lam.reshape(4, 3).sum(axis=0), [0, 0, weight], 1e-10, 1e-10 * weight,
                 what="Σ forces")
    W = ld.constraint_wrenches(model, out.constraints, C0, *still, out.force)
    idr = ld.inverse_dynamics(model, C0, *still, 0, applied=W)
    assert_close(idr.tau, out.tau, 1e-10, 1e-10 * np.abs(out.tau).max(), what="τ")
    assert_close(idr.base_wrench, np.zeros((1, 6)), 0.0, 1e-10 * weight, what="base wrench")
    A = ld.constraint_jacobian(model, out.constraints, C0, None, q[None], 0)[0][:, :6].T
    w = A @ lam
    ref = minimize(lambda x: 0.5 * x @ x, np.tile([0, 0, weight / 4], 4), jac=lambda x: x,
                   constraints=[{"type": "eq", "fun": lambda x: A @ x - w, "jac": lambda x: A},
                                {"type": "ineq", "fun": lambda x: -G @ x, "jac": lambda x: -G}],
                   method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
    assert ref.success
    assert_close(lam, ref.x, 0.0, 1e-6 * weight, what="λ vs SLSQP")
    if np.ndim(mu):
        assert out.active_facets[0] and out.active_facets[1], out.active_facets


def test_solo_cannot_stand_on_a_slope_steeper_than_its_friction():
    """``μ < tan α``: no force in the (true, hence the inscribed) cones can
    carry the weight; the solver's status is reported."""
    model = solo()
    C0, q = solo_standing(model)
    still = (np.zeros((2, 6)), np.vstack([q, np.zeros((2, model.n_joints))]))
    with pytest.raises(ValueError, match=r"cannot supply the base wrench within their friction "
                                         r"cones.*reports (Almost)?PrimalInfeasible.*cannot "
                                         r"stand"):
        ld.friction_cone_distribution(model, _slope_contacts(model, C0, q), C0, *still, 0,
                                      mu=0.2)


def test_without_active_facets_the_jets_are_the_bilateral_minimum_norm_jets():
    model = solo()
    cs = ld.ConstraintSet(model, [ld.Contact3D(f) for f in FEET])
    C0, f = _motion(model, cs, np.random.default_rng(0), 3, gentle=True)
    contacts = ld.point_contacts(list(FEET), ld.Plane([0, 0, 1]))
    out = ld.friction_cone_distribution(model, contacts, C0, f.base_twist, f.q, 2, mu=50.0)
    assert all(a == () for a in out.active_facets)
    ref = ld.constrained_inverse_dynamics(model, cs, C0, f.base_twist, f.q, 2)
    assert_close(out.force, ref.force, 1e-10, 1e-10 * np.abs(ref.force).max(), what="λ jets")
    assert_close(out.tau, ref.tau, 1e-10, 1e-10 * np.abs(ref.tau).max(), what="τ jets")


def test_jets_with_active_facets_are_the_time_derivatives_of_the_distribution():
    """Front feet with little friction on a slope: facets active; the force
    and torque jets of order 2 against fourth-order central differences of
    the order-0 distribution along the motion (as the bilateral test of
    SPEC §13.3: h = 1e-3 on Solo-12)."""
    model = solo()
    cs = ld.ConstraintSet(model, [ld.Contact3D(f) for f in FEET])
    R, h = 6, 1e-3
    C0, f = _motion(model, cs, np.random.default_rng(5), R, scale=0.1, gentle=True)
    contacts = [ld.PointContact(c, ld.Plane(SLOPE)) for c in FEET]
    mu = [0.3, 0.3, 1.0, 1.0]
    out = ld.friction_cone_distribution(model, contacts, C0, f.base_twist, f.q, 2, mu=mu)
    assert out.active_facets[0] and out.active_facets[1] and out.degenerate == ()
    vals = {}
    for i in (-2, -1, 0, 1, 2):
        C, V, q = _shifted_state(C0, f, R, i * h)
        g = ld.friction_cone_distribution(model, contacts, C, V, q, 0, mu=mu)
        assert g.active_facets == out.active_facets
        vals[i] = np.concatenate([g.tau[0], g.force[0]])
    d1 = (-vals[2] + 8 * vals[1] - 8 * vals[-1] + vals[-2]) / (12 * h)
    d2 = (-vals[2] + 16 * vals[1] - 30 * vals[0] + 16 * vals[-1] - vals[-2]) / (12 * h * h)
    for k, d in ((1, d1), (2, d2)):
        jet = np.concatenate([out.tau[k], out.force[k]])
        err = np.abs(jet - d).max() / np.abs(jet).max()
        assert err < (2e-7 if k == 1 else 2e-5), (k, err)


def test_friction_bad_input_is_named():
    model = solo()
    C0, q = solo_standing(model)
    still = (np.zeros((2, 6)), np.vstack([q, np.zeros((2, model.n_joints))]))
    contacts = ld.point_contacts(list(FEET))
    with pytest.raises(ValueError, match="mu: a friction coefficient must be ≥ 0, got -0.1 for "
                                         "contact 'FR_FOOT'"):
        ld.friction_cone_distribution(model, contacts, C0, *still, 0, mu=[0.5, -0.1, 0.5, 0.5])
    with pytest.raises(ValueError, match=r"mu \(friction coefficient\): expected a number ≥ 0"):
        ld.friction_cone_margin(np.ones((1, 3)), [0, 0, 1], -0.5)
    with pytest.raises(ValueError, match="normal: expected a non-zero direction"):
        ld.friction_cone_margin(np.ones((1, 3)), [0, 0, 0], 0.5)
    with pytest.raises(ValueError, match=r"contacts\[0\].frame: the model has no frame 'paw'"):
        ld.friction_cone_distribution(model, [ld.PointContact("paw")], C0, *still, 0, mu=0.5)
    with pytest.raises(ValueError, match="facets: expected an int ≥ 3"):
        ld.friction_cone_distribution(model, contacts, C0, *still, 0, mu=0.5, facets=2)
    with pytest.raises(ValueError, match="violates constraint"):
        moving = (np.ones((2, 6)), still[1])
        ld.friction_cone_distribution(model, contacts, C0, *moving, 0, mu=0.5)
