"""Hybrid dynamics of order r (H-GHYB-FBS, SPEC §6): the limiting cases
(inverse and forward dynamics, a fixed base as a base at rest), random splits
against the closed-form equations of motion (SPEC §7) restricted to the
unknowns, planar arms against the textbook equations, and input checks."""

import numpy as np
import pytest

import liedyn
from models.trees import box_inertia, random_tree, translation
from tests.helpers import assert_close
from tests.test_forward import _point_mass_on_axis


def _jets(rng, model, order):
    n = model.n_joints
    q = rng.normal(size=(order + 3, n))
    Vb = rng.normal(size=(order + 2, 6)) if model.floating_base else None
    C0 = liedyn.se3.exp(rng.normal(size=6) * 0.7) if model.floating_base else model.home_pose
    app = rng.normal(size=(order + 1, model.n_bodies, 6))
    return C0, Vb, q, app


def _row_close(actual, desired, tol, what):
    """Each derivative row to ``tol · (1 + max|row|)``."""
    scale = tol * (1.0 + np.abs(desired).reshape(desired.shape[0], -1).max(axis=1))
    atol = scale.reshape((-1,) + (1,) * (desired.ndim - 1))
    assert_close(actual, desired, rtol=0.0, atol=atol, what=what)


@pytest.mark.parametrize("floating, seed", [(True, 201), (False, 202)])
def test_all_motion_driven_is_inverse_dynamics(floating, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 7, floating_base=floating, armature=True, damping=True)
    R = 3
    C0, Vb, q, app = _jets(rng, model, R)
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, R, applied=app)
    hyb = liedyn.hybrid_dynamics(model, C0, Vb, q, R, np.ones(model.n_joints, bool),
                                 applied=app, base_motion_driven=True)
    # Different sums of the same terms (W = M^A V + W^A against Σ Π − …):
    # round-off ~1e-15 of each row's size.
    _row_close(hyb.tau, inv.tau, 1e-12, "tau")
    _row_close(hyb.base_wrench, inv.base_wrench, 1e-12, "base wrench")
    _row_close(hyb.wrench, inv.wrench, 1e-12, "body wrenches")
    assert np.array_equal(hyb.q, q)
    assert np.array_equal(hyb.base_twist, Vb if floating else np.zeros((R + 2, 6)))


@pytest.mark.parametrize("floating, seed", [(True, 203), (False, 204)])
def test_all_force_driven_is_forward_dynamics(floating, seed):
    """Same kernel, so equal to the bit: this checks hybrid_dynamics' argument
    handling, including that ignored entries (NaN here) are never read."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 6, floating_base=floating, armature=True, damping=True)
    n, R = model.n_joints, 3
    C0, Vb, q, app = _jets(rng, model, R)
    tau = rng.normal(size=(R + 1, n))
    W0 = rng.normal(size=(R + 1, 6)) if floating else None
    V0 = Vb[0] if floating else None
    fd = liedyn.forward_dynamics(model, C0, V0, q[0], q[1], W0, tau, R, applied=app)
    qn = q.copy()
    qn[2:] = np.nan
    hyb = liedyn.hybrid_dynamics(model, C0, V0, qn, R, [], tau=tau, base_wrench=W0, applied=app)
    assert np.array_equal(hyb.q, fd.q)
    assert np.array_equal(hyb.base_twist, fd.base_twist)
    assert np.array_equal(hyb.base_wrench, fd.base_wrench)
    assert np.array_equal(hyb.tau, tau)
    assert np.array_equal(hyb.articulated_inertia, fd.articulated_inertia)


def test_fixed_base_is_a_motion_driven_base_at_rest():
    """The same tree with a fixed base, and with a floating base whose motion
    is prescribed as rest at the same pose, give the same jets; the base
    wrench is then the support reaction."""
    R, seed = 3, 205
    fixed = random_tree(np.random.default_rng(seed), 7, floating_base=False, armature=True,
                        damping=True)
    floating = random_tree(np.random.default_rng(seed), 7, floating_base=True, armature=True,
                           damping=True)
    rng = np.random.default_rng(seed + 1)
    n = fixed.n_joints
    q = rng.normal(size=(R + 3, n))
    tau = rng.normal(size=(R + 1, n))
    app = rng.normal(size=(R + 1, fixed.n_bodies, 6))
    mask = rng.uniform(size=n) < 0.5
    a = liedyn.hybrid_dynamics(fixed, None, None, q, R, mask, tau=tau, applied=app)
    b = liedyn.hybrid_dynamics(floating, fixed.home_pose, np.zeros((R + 2, 6)), q, R, mask,
                               tau=tau, applied=app, base_motion_driven=True)
    assert a.base_motion_driven
    _row_close(a.q, b.q, 1e-12, "q")
    _row_close(a.tau, b.tau, 1e-12, "tau")
    _row_close(a.base_wrench, b.base_wrench, 1e-12, "reaction")
    assert np.all(a.base_twist == 0.0)


def _generalised(model, base, joint):
    """Stack base and joint parts into liedyn's ν ordering."""
    return np.concatenate([base, joint], axis=-1) if model.floating_base else joint


@pytest.mark.parametrize("floating, base_motion, seed", [
    (True, False, 211), (True, True, 212), (False, True, 213)])
def test_random_split_solves_the_closed_form(floating, base_motion, seed):
    """Order 0: solve M ν̇ + (C + B) ν + g = τ̄ + Q for the unknowns (force-driven
    accelerations, motion-driven forces) with the closed-form matrices. Orders
    1..R: the hybrid jets satisfy the r-th derivative of the closed form
    (closed_form_inverse_dynamics), which fixes the unknowns uniquely because
    M's block over the unknown accelerations is non-singular."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 8, floating_base=floating, armature=True, damping=True)
    n, R = model.n_joints, 3
    C0, Vb, q, app = _jets(rng, model, R)
    mask = np.zeros(n, bool)
    mask[rng.permutation(n)[: n // 2]] = True
    tau = rng.normal(size=(R + 1, n))
    W0 = None if base_motion else rng.normal(size=(R + 1, 6))
    Vin = (Vb if base_motion else Vb[0]) if floating else None
    hyb = liedyn.hybrid_dynamics(model, C0, Vin, q, R, mask, tau=tau, base_wrench=W0,
                                 applied=app, base_motion_driven=base_motion)

    # order 0 from the closed form, the unknowns solved for directly
    V0 = Vb[0] if floating else None
    M = liedyn.mass_matrix(model, C0, q[0])
    Cm = liedyn.coriolis_matrix(model, C0, V0, q[0], q[1])
    g = liedyn.gravity_vector(model, C0, q[0])
    B = liedyn.damping_matrix(model)
    q_rest = np.vstack([q[:2], np.zeros((1, n))])
    Vb_rest = np.vstack([Vb[:1], np.zeros((1, 6))]) if floating else None
    Q = liedyn.closed_form_jets(model, C0, Vb_rest, q_rest, 0, applied=app[:1]).applied_force[0]
    nu = _generalised(model, V0, q[1]) if floating else q[1]
    known_acc = _generalised(model, np.ones(6, bool) if base_motion else np.zeros(6, bool), mask)
    unknown = ~known_acc
    nudot = np.zeros(model.nv)
    nudot[known_acc] = _generalised(model, Vb[1], q[2])[known_acc] if floating else q[2][mask]
    tbar_in = _generalised(model, W0[0] if W0 is not None else np.zeros(6), tau[0])
    rhs = tbar_in + Q - (Cm + B) @ nu - g - M @ nudot
    nudot[unknown] = np.linalg.solve(M[np.ix_(unknown, unknown)], rhs[unknown])
    tbar = M @ nudot + (Cm + B) @ nu + g - Q
    hyb_nudot = _generalised(model, hyb.base_twist[1], hyb.q[2]) if floating else hyb.q[2]
    hyb_tbar = _generalised(model, hyb.base_wrench[0], hyb.tau[0]) if floating else hyb.tau[0]
    # two O(N) recursions against a dense solve of an O(1)-conditioned system
    _row_close(hyb_nudot[None], nudot[None], 1e-10, "order-0 accelerations")
    _row_close(hyb_tbar[None], tbar[None], 1e-10, "order-0 forces")

    # orders 0..R: the derivatives of the closed form hold along the hybrid jets
    jets = liedyn.closed_form_jets(model, C0, hyb.base_twist if floating else None, hyb.q, R,
                                   applied=app)
    tbar_cf = liedyn.closed_form_inverse_dynamics(jets)
    hyb_tbar = _generalised(model, hyb.base_wrench, hyb.tau) if floating else hyb.tau
    # the force rows grow ~5× per order (binomial sums); 1e-10 of each row
    _row_close(hyb_tbar, tbar_cf, 1e-10, "closed-form forces at orders 0..R")
    # the prescribed entries are returned as given
    assert np.array_equal(hyb.q[2:, mask], q[2:, mask])
    assert np.array_equal(hyb.tau[:, ~mask], tau[:, ~mask])


def _planar_arm(lengths, masses, armature, damping):
    """Fixed-base planar arm in the xy plane, revolute joints about z, gravity
    along −y; link i is a thin box of length l_i with its joint at its start."""
    model = liedyn.Model(floating_base=False, gravity=(0.0, -9.81, 0.0))
    model.add_body("ground", None, None)
    parent, prev = "ground", 0.0
    for i, (l, m) in enumerate(zip(lengths, masses)):
        Mb = box_inertia(m, (l, 0.04, 0.04))
        J = Mb[:3, :3]
        model.add_body(f"link{i + 1}", parent,
                       liedyn.Revolute((0.0, 0.0, 1.0), armature=armature[i], damping=damping[i]),
                       translation(x=prev), liedyn.se3.spatial_inertia(m, (l / 2, 0.0, 0.0), J))
        parent, prev = f"link{i + 1}", l
    return model


def _two_link_textbook(l, m, Izz, Ia, b, q, qd, tau, g0=9.81):
    """q̈ of the planar two-link arm from its Lagrange equations (absolute
    first angle, relative second, centres of mass at mid-link)."""
    lc1, lc2 = l[0] / 2, l[1] / 2
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    M = np.array([
        [Izz[0] + Izz[1] + m[0] * lc1**2 + m[1] * (l[0]**2 + lc2**2 + 2 * l[0] * lc2 * c2) + Ia[0],
         Izz[1] + m[1] * (lc2**2 + l[0] * lc2 * c2)],
        [Izz[1] + m[1] * (lc2**2 + l[0] * lc2 * c2), Izz[1] + m[1] * lc2**2 + Ia[1]]])
    h = m[1] * l[0] * lc2 * s2
    c = np.array([-h * (2 * qd[0] * qd[1] + qd[1]**2), h * qd[0]**2])
    grav = np.array([(m[0] * lc1 + m[1] * l[0]) * g0 * np.cos(q[0]) + m[1] * lc2 * g0 * np.cos(q[0] + q[1]),
                     m[1] * lc2 * g0 * np.cos(q[0] + q[1])])
    return np.linalg.solve(M, tau - np.asarray(b) * qd - c - grav)


@pytest.mark.parametrize("links", [2, 3])
def test_planar_arms_agree_across_methods(links):
    rng = np.random.default_rng(220 + links)
    lengths = rng.uniform(0.3, 1.0, links)
    masses = rng.uniform(0.5, 2.0, links)
    Ia = rng.uniform(0.0, 0.05, links)
    b = rng.uniform(0.0, 0.3, links)
    model = _planar_arm(lengths, masses, Ia, b)
    q, qd, tau = rng.normal(size=(3, links))
    fd = liedyn.forward_dynamics(model, None, None, q, qd, None, tau[None], 0).q[2]
    qjet = np.vstack([q, qd, np.full(links, np.nan)])
    hyb = liedyn.hybrid_dynamics(model, None, None, qjet, 0, np.zeros(links, bool), tau=tau[None]).q[2]
    M = liedyn.mass_matrix(model, None, q)
    h = (liedyn.coriolis_matrix(model, None, None, q, qd) + liedyn.damping_matrix(model)) @ qd
    cf = np.linalg.solve(M, tau - h - liedyn.gravity_vector(model, None, q))
    assert_close(fd, cf, rtol=1e-11, atol=1e-11, what="forward vs closed form")
    assert_close(hyb, fd, rtol=0.0, what="hybrid vs forward")
    if links == 2:
        Izz = masses * (lengths**2 + 0.04**2) / 12.0
        ref = _two_link_textbook(lengths, masses, Izz, Ia, b, q, qd, tau)
        assert_close(fd, ref, rtol=1e-11, atol=1e-11, what="forward vs textbook two-link arm")


def test_singular_pivot_matters_only_for_force_driven_joints():
    model = _point_mass_on_axis()
    R = 1
    q = np.array([[0.2], [0.1], [0.5], [0.3]])
    args = dict(base_twist=np.zeros(6), q=q, order=R, tau=np.ones((R + 1, 1)),
                base_wrench=np.zeros((R + 1, 6)))
    with pytest.raises(ValueError, match="needle"):
        liedyn.hybrid_dynamics(model, None, motion_driven=[], **args)
    res = liedyn.hybrid_dynamics(model, None, motion_driven=[0], **args)
    assert np.all(np.isfinite(res.tau)) and np.all(np.isfinite(res.base_twist))


def test_bad_inputs_name_the_argument():
    rng = np.random.default_rng(231)
    model = random_tree(rng, 4)
    n, R = model.n_joints, 1
    ok = dict(base_pose=None, base_twist=np.zeros(6), q=np.zeros((R + 3, n)), order=R,
              motion_driven=[0], tau=np.zeros((R + 1, n)), base_wrench=np.zeros((R + 1, 6)))
    liedyn.hybrid_dynamics(model, **ok)
    bad_q = np.zeros((R + 3, n))
    bad_q[2, 0] = np.nan            # a prescribed (used) entry
    bad_tau = np.zeros((R + 1, n))
    bad_tau[0, 1] = np.inf          # a used entry of a force-driven joint
    bad = [
        (dict(motion_driven=np.ones(n + 1, bool)), ValueError, "motion_driven"),
        (dict(motion_driven=[n]), ValueError, "motion_driven"),
        (dict(motion_driven=[0.5]), TypeError, "motion_driven"),
        (dict(motion_driven=None), TypeError, "motion_driven"),
        (dict(tau=None), ValueError, "tau"),
        (dict(tau=bad_tau), ValueError, "tau"),
        (dict(q=bad_q), ValueError, "q"),
        (dict(q=np.zeros((R + 2, n))), ValueError, "q"),
        (dict(base_wrench=None), ValueError, "base_wrench"),
        (dict(base_motion_driven=True), ValueError, "base_twist"),
        (dict(base_motion_driven=True, base_twist=np.zeros((R + 2, 6))), ValueError, "base_wrench"),
        (dict(base_motion_driven="yes"), TypeError, "base_motion_driven"),
        (dict(order=-1), ValueError, "order"),
    ]
    for change, err, name in bad:
        with pytest.raises(err, match=name):
            liedyn.hybrid_dynamics(model, **{**ok, **change})
    # unused entries may hold anything: q rows ≥ 2 of force-driven joints,
    # tau of motion-driven ones
    q = np.full((R + 3, n), np.nan)
    q[:2] = 0.0
    q[2:, 0] = 1.0
    tau = np.zeros((R + 1, n))
    tau[:, 0] = np.nan
    res = liedyn.hybrid_dynamics(model, **{**ok, "q": q, "tau": tau})
    assert np.all(np.isfinite(res.q)) and np.all(np.isfinite(res.tau))
    fixed = random_tree(rng, 4, floating_base=False)
    fixed_ok = {**ok, "base_twist": None, "base_wrench": None}
    liedyn.hybrid_dynamics(fixed, **fixed_ok)
    with pytest.raises(ValueError, match="base_motion_driven"):
        liedyn.hybrid_dynamics(fixed, **{**fixed_ok, "base_motion_driven": False})
    with pytest.raises(ValueError, match="base_twist"):
        liedyn.hybrid_dynamics(fixed, **{**fixed_ok, "base_twist": np.zeros(6)})
