"""Hybrid dynamics of order r (H-GHYB-FBS, SPEC §6): the limiting cases
(inverse and forward dynamics, a fixed base as a base at rest), random splits
against the closed-form equations of motion (SPEC §7) restricted to the
unknowns, planar arms against the textbook equations, a prescribed joint with
a singular pivot against the Newton–Euler equations of one rigid body, and
input checks.

Hybrid dynamics takes full-size jets: ``base_twist`` (r+2, 6), ``q`` (r+3, n),
``tau`` (r+1, n); the entries it solves for are ignored (NaN here where a
test shows that they are never read)."""

import numpy as np
import pytest

import liedyn
from models.trees import box_inertia, random_tree, translation
from tests.helpers import assert_close, run_python
from tests.test_forward import _point_mass_on_axis


def _jets(rng, model, order):
    n = model.n_joints
    q = rng.normal(size=(order + 3, n))
    Vb = rng.normal(size=(order + 2, 6)) if model.floating_base else None
    C0 = liedyn.se3.exp(rng.normal(size=6) * 0.7) if model.floating_base else model.home_pose
    app = rng.normal(size=(order + 1, model.n_bodies, 6))
    return C0, Vb, q, app


def _random_split(seed, n_bodies, floating, base_motion, R):
    """A random hybrid problem of order ``R``: a tree with armature and
    damping, its jets (:func:`_jets`), half of its joints motion-driven,
    joint force jets, and base wrench jets unless the base is motion-driven.
    Returns ``(model, C0, Vb, q, app, mask, tau, W0)``."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, n_bodies, floating_base=floating, armature=True, damping=True)
    n = model.n_joints
    C0, Vb, q, app = _jets(rng, model, R)
    mask = np.zeros(n, bool)
    mask[rng.permutation(n)[: n // 2]] = True
    tau = rng.normal(size=(R + 1, n))
    W0 = None if base_motion else rng.normal(size=(R + 1, 6))
    return model, C0, Vb, q, app, mask, tau, W0


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
    hyb = liedyn.hybrid_dynamics(model, C0, Vb, q, R, motion_driven=np.ones(model.n_joints, bool),
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
    """The same articulated-body passes in the same order of operations, so
    equal to the bit: this checks hybrid_dynamics' argument handling,
    including that ignored entries (NaN here) are never read."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 6, floating_base=floating, armature=True, damping=True)
    n, R = model.n_joints, 3
    C0, Vb, q, app = _jets(rng, model, R)
    tau = rng.normal(size=(R + 1, n))
    W0 = rng.normal(size=(R + 1, 6)) if floating else None
    fd = liedyn.forward_dynamics(model, C0, Vb[:1] if floating else None, q[:2], R, tau=tau,
                                 base_wrench=W0, applied=app)
    qn = q.copy()
    qn[2:] = np.nan
    Vn = None
    if floating:
        Vn = Vb.copy()
        Vn[1:] = np.nan
    hyb = liedyn.hybrid_dynamics(model, C0, Vn, qn, R, motion_driven=[], tau=tau, base_wrench=W0,
                                 applied=app)
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
    a = liedyn.hybrid_dynamics(fixed, None, None, q, R, motion_driven=mask, tau=tau, applied=app)
    b = liedyn.hybrid_dynamics(floating, fixed.home_pose, np.zeros((R + 2, 6)), q, R,
                               motion_driven=mask, tau=tau, applied=app, base_motion_driven=True)
    z = liedyn.hybrid_dynamics(fixed, None, np.zeros((R + 2, 6)), q, R, motion_driven=mask,
                               tau=tau, applied=app)
    assert np.array_equal(z.q, a.q) and np.array_equal(z.tau, a.tau), "zero jet = None"
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
    R = 3
    model, C0, Vb, q, app, mask, tau, W0 = _random_split(seed, 8, floating, base_motion, R)
    n = model.n_joints
    Vin = None
    if floating:
        Vin = Vb.copy()
        if not base_motion:
            Vin[1:] = np.nan                       # solved for, so never read
    hyb = liedyn.hybrid_dynamics(model, C0, Vin, q, R, motion_driven=mask, tau=tau,
                                 base_wrench=W0, applied=app, base_motion_driven=base_motion)

    # order 0 from the closed form, the unknowns solved for directly
    V0 = Vb[:1] if floating else None
    M = liedyn.mass_matrix(model, C0, q[0])
    Cm = liedyn.coriolis_matrix(model, C0, V0, q[:2])
    g = liedyn.gravity_vector(model, C0, q[0])
    B = liedyn.damping_matrix(model)
    q_rest = np.vstack([q[:2], np.zeros((1, n))])
    Vb_rest = np.vstack([Vb[:1], np.zeros((1, 6))]) if floating else None
    Q = liedyn.closed_form_jets(model, C0, Vb_rest, q_rest, 0, applied=app[:1]).applied_force[0]
    nu = _generalised(model, Vb[0], q[1]) if floating else q[1]
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
    b = liedyn.ModelBuilder(floating_base=False, gravity=(0.0, -9.81, 0.0))
    b.add_body("ground", None, None)
    parent, prev = "ground", 0.0
    for i, (l, m) in enumerate(zip(lengths, masses)):
        Mb = box_inertia(m, (l, 0.04, 0.04))
        J = Mb[:3, :3]
        b.add_body(f"link{i + 1}", parent,
                   liedyn.Revolute((0.0, 0.0, 1.0), armature=armature[i], damping=damping[i]),
                   translation(x=prev), liedyn.se3.spatial_inertia(m, (l / 2, 0.0, 0.0), J))
        parent, prev = f"link{i + 1}", l
    return b.build()


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
    fd = liedyn.forward_dynamics(model, None, None, np.stack([q, qd]), 0, tau=tau[None]).q[2]
    qjet = np.vstack([q, qd, np.full(links, np.nan)])
    hyb = liedyn.hybrid_dynamics(model, None, None, qjet, 0, motion_driven=np.zeros(links, bool),
                                 tau=tau[None]).q[2]
    M = liedyn.mass_matrix(model, None, q)
    h = (liedyn.coriolis_matrix(model, None, None, np.stack([q, qd]))
         + liedyn.damping_matrix(model)) @ qd
    cf = np.linalg.solve(M, tau - h - liedyn.gravity_vector(model, None, q))
    assert_close(fd, cf, rtol=1e-11, atol=1e-11, what="forward vs closed form")
    assert_close(hyb, fd, rtol=0.0, what="hybrid vs forward")
    if links == 2:
        Izz = masses * (lengths**2 + 0.04**2) / 12.0
        ref = _two_link_textbook(lengths, masses, Izz, Ia, b, q, qd, tau)
        assert_close(fd, ref, rtol=1e-11, atol=1e-11, what="forward vs textbook two-link arm")


def _rigid_body_jets(M0, V, W, G):
    """``V̇, V̈`` of one free rigid body of world inertia ``M0`` with twist ``V``
    under the wrench jet ``W`` (2, 6) and gravity ``G``, from its Newton–Euler
    equation ``W + M G = M V̇ − ad_Vᵀ M V`` (SPEC §4, order 0) and its time
    derivative, with ``Ṁ = −(M ad_V + ad_Vᵀ M)``."""
    ad = liedyn.se3.ad
    dV = np.linalg.solve(M0, W[0] + M0 @ G + ad(V).T @ M0 @ V)
    Md = -(M0 @ ad(V) + ad(V).T @ M0)
    ddV = np.linalg.solve(M0, W[1] + Md @ G - Md @ dV + ad(dV).T @ M0 @ V
                          + ad(V).T @ (Md @ V + M0 @ dV))
    return dV, ddV


def test_singular_pivot_matters_only_for_force_driven_joints():
    """The needle's only mass is a point on its joint axis: force-driven, its
    pivot is zero and the call must refuse; motion-driven, its rotation moves
    no mass, so base and needle move as one rigid body (base inertia plus the
    point mass) under the base wrench and gravity, and the needle transmits
    no moment about its axis (τ ≡ 0, no armature)."""
    model = _point_mass_on_axis()
    R = 1
    rng = np.random.default_rng(214)
    C0 = liedyn.se3.exp(rng.normal(size=6))
    V = np.full((R + 2, 6), np.nan)
    V[0] = rng.normal(size=6)
    q = np.array([[0.2], [0.1], [0.5], [0.3]])
    W0 = rng.normal(size=(R + 1, 6))
    args = dict(base_twist=V, q=q, order=R, base_wrench=W0)
    with pytest.raises(ValueError, match=r"^joint of body 'needle' \(q column 0\): singular pivot"):
        liedyn.hybrid_dynamics(model, C0, motion_driven=[], tau=np.ones((R + 1, 1)), **args)
    res = liedyn.hybrid_dynamics(model, C0, motion_driven=[0], tau=np.full((R + 1, 1), np.nan),
                                 **args)
    Mb = model.body_inertia[0] + liedyn.se3.spatial_inertia(0.5, (0.0, 0.0, 0.3), np.zeros((3, 3)))
    M0 = liedyn.se3.transform_inertia(C0, Mb)
    G = np.concatenate([np.zeros(3), model.gravity])
    dV, ddV = _rigid_body_jets(M0, V[0], W0, G)
    # O(1) data through a 6×6 solve and two recursions: agreement to ~1e-14
    assert_close(res.base_twist, np.stack([V[0], dV, ddV]), rtol=1e-12, atol=1e-12,
                 what="base twist jet")
    scale = np.abs(M0).max() * (1.0 + np.abs(res.base_twist).max()) ** 2
    assert_close(res.tau, np.zeros((R + 1, 1)), rtol=0.0, atol=1e-13 * scale, what="needle torque")
    assert np.array_equal(res.q, q) and np.array_equal(res.base_wrench, W0)


def _closed_form_hybrid(model, C0, Vb, q, mask, tau, W0, app, base_motion, R):
    """Hybrid jets by the closed form (SPEC §7), order by order: with every
    ``ν^(≤r)`` known, ``τ̄^(r) = M ν^(r+1) + b^(r)``, so the unknown
    accelerations solve ``M_uu ν_u = τ̄_u − b_u`` and the unknown forces follow
    as ``M_k ν + b_k``. ``Vb``, ``q``, ``tau`` full-size, unknown entries
    ignored. Returns ``(base_twist, q, base_wrench, tau)`` jets (``τ̄`` split)."""
    nv = model.nv
    floating = model.floating_base
    known = _generalised(model, np.full(6, base_motion), mask)          # known accelerations
    nu = np.zeros((R + 2, nv))
    nu[0] = _generalised(model, Vb[0], q[1]) if floating else q[1]
    tbar = np.zeros((R + 1, nv))
    given = _generalised(model, np.zeros((R + 1, 6)) if W0 is None else W0, tau) if floating \
        else tau.copy()
    for r in range(R + 1):
        known_next = _generalised(model, Vb[r + 1], q[r + 2]) if floating else q[r + 2]
        nu[r + 1] = np.where(known, known_next, 0.0)
        Vj = nu[:r + 2, :6] if floating else None
        qj = np.concatenate([q[:1], nu[:r + 2, 6:] if floating else nu[:r + 2]])
        jets = liedyn.closed_form_jets(model, C0, Vj, qj, r, applied=app[:r + 1])
        b = liedyn.closed_form_inverse_dynamics(jets)[r]           # with ν_u^(r+1) = 0
        M = jets.mass[0]
        u = ~known
        nu[r + 1, u] = np.linalg.solve(M[np.ix_(u, u)], given[r, u] - b[u])
        tbar[r] = np.where(known, b + M[:, u] @ nu[r + 1, u], given[r])
    qout = np.concatenate([q[:1], nu[:, 6:] if floating else nu])
    if floating:
        return nu[:, :6], qout, tbar[:, :6], tbar[:, 6:]
    return np.zeros((R + 2, 6)), qout, tbar[:, :0], tbar


def test_bad_inputs_name_the_argument():
    rng = np.random.default_rng(231)
    model = random_tree(rng, 4)
    n, R = model.n_joints, 1
    ok = dict(base_pose=None, base_twist=np.zeros((R + 2, 6)), q=np.zeros((R + 3, n)), order=R,
              motion_driven=[0], tau=np.zeros((R + 1, n)), base_wrench=np.zeros((R + 1, 6)))
    liedyn.hybrid_dynamics(model, **ok)
    bad_q = np.zeros((R + 3, n))
    bad_q[2, 0] = np.nan            # a prescribed (used) entry
    bad_tau = np.zeros((R + 1, n))
    bad_tau[0, 1] = np.inf          # a used entry of a force-driven joint
    bad_twist = np.zeros((R + 2, 6))
    bad_twist[1:] = np.nan          # read when the base motion is prescribed
    bad = [
        (dict(motion_driven=np.ones(n + 1, bool)), ValueError, "motion_driven"),
        (dict(motion_driven=[n]), ValueError, "motion_driven"),
        (dict(motion_driven=[0.5]), TypeError, "motion_driven"),
        (dict(motion_driven=None), TypeError, "motion_driven"),
        (dict(motion_driven=[1, 0, 1]), TypeError, "motion_driven"),   # an int mask is ambiguous
        (dict(motion_driven=[0, 0]), ValueError, "motion_driven"),     # a column twice
        (dict(motion_driven=["no such joint"]), ValueError, "motion_driven"),
        (dict(tau=None), ValueError, "tau"),
        (dict(tau=bad_tau), ValueError, "tau"),
        (dict(tau=np.zeros((R + 2, n))), ValueError, "tau"),
        (dict(q=bad_q), ValueError, "q"),
        (dict(q=np.zeros((R + 2, n))), ValueError, "q"),
        (dict(base_twist=np.zeros((1, 6))), ValueError, "base_twist"),  # full-size jet
        (dict(base_twist=None), ValueError, "base_twist"),
        (dict(base_wrench=None), ValueError, "base_wrench"),
        (dict(base_motion_driven=True, base_twist=bad_twist, base_wrench=None), ValueError,
         "base_twist"),
        (dict(base_motion_driven=True), ValueError, "base_wrench"),
        (dict(base_motion_driven="yes"), TypeError, "base_motion_driven"),
        (dict(order=-1), ValueError, "order"),
    ]
    for change, err, name in bad:
        with pytest.raises(err, match=rf"^{name}:"):
            liedyn.hybrid_dynamics(model, **{**ok, **change})
    # the split and the force jets are keyword-only
    with pytest.raises(TypeError):
        liedyn.hybrid_dynamics(model, None, ok["base_twist"], ok["q"], R, [0])
    # unused entries may hold anything: q rows ≥ 2 of force-driven joints,
    # tau of motion-driven ones, base twist rows ≥ 1 of a wrench-driven base
    rng_j = np.random.default_rng(232)
    C0 = liedyn.se3.exp(rng_j.normal(size=6))
    V = rng_j.normal(size=(R + 2, 6))
    q = rng_j.normal(size=(R + 3, n))
    tau = rng_j.normal(size=(R + 1, n))
    W0 = rng_j.normal(size=(R + 1, 6))
    app = rng_j.normal(size=(R + 1, model.n_bodies, 6))
    mask = np.array([True] + [False] * (n - 1))
    Vn, qn, tn = V.copy(), q.copy(), tau.copy()
    Vn[1:] = np.nan
    qn[2:, 1:] = np.nan
    tn[:, 0] = np.nan
    res = liedyn.hybrid_dynamics(model, C0, Vn, qn, R, motion_driven=[0], tau=tn, base_wrench=W0,
                                 applied=app)
    ref = _closed_form_hybrid(model, C0, V, q, mask, tau, W0, app, False, R)
    # a dense solve of an O(1)-conditioned system against the recursions: 1e-10
    # of each row, as in test_random_split_solves_the_closed_form
    _row_close(res.base_twist, ref[0], 1e-10, "solved base twist")
    _row_close(res.q, ref[1], 1e-10, "solved joint motion")
    _row_close(res.tau, ref[3], 1e-10, "solved and given joint forces")
    assert np.array_equal(res.base_wrench, W0) and np.array_equal(res.tau[:, 1:], tau[:, 1:])
    assert np.array_equal(res.q[:, 0], q[:, 0]) and np.array_equal(res.base_twist[0], V[0])
    fixed = random_tree(rng, 4, floating_base=False)
    fixed_ok = {**ok, "base_twist": None, "base_wrench": None}
    a = liedyn.hybrid_dynamics(fixed, **fixed_ok)
    with pytest.raises(ValueError, match=r"^base_motion_driven:"):
        liedyn.hybrid_dynamics(fixed, **{**fixed_ok, "base_motion_driven": False})
    with pytest.raises(ValueError, match=r"^base_twist:"):
        liedyn.hybrid_dynamics(fixed, **{**fixed_ok, "base_twist": np.zeros(6)})
    with pytest.raises(ValueError, match=r"^base_twist:"):
        liedyn.hybrid_dynamics(fixed, **{**fixed_ok, "base_twist": np.ones((R + 2, 6))})
    with pytest.raises(ValueError, match=r"^base_wrench:"):
        liedyn.hybrid_dynamics(fixed, **{**fixed_ok, "base_wrench": np.zeros((R + 1, 6))})
    b = liedyn.hybrid_dynamics(fixed, **{**fixed_ok, "base_twist": np.zeros((R + 2, 6))})
    assert np.array_equal(a.tau, b.tau) and np.array_equal(a.base_wrench, b.base_wrench)


def test_bad_base_wrench_array_names_the_argument():
    """A float64 array as base wrench goes to the kernel unconverted; when the
    kernel refuses it (NaN, wrong number of rows) the error is the
    ValueError naming ``base_wrench`` that forward dynamics gives for the same
    jet, for an array and for a list alike."""
    rng = np.random.default_rng(233)
    model = random_tree(rng, 4)
    n, R = model.n_joints, 1
    hyb = dict(base_pose=None, base_twist=np.zeros((R + 2, 6)), q=np.zeros((R + 3, n)), order=R,
               motion_driven=[0], tau=np.zeros((R + 1, n)))
    fwd = dict(base_pose=None, base_twist=np.zeros((1, 6)), q=np.zeros((2, n)), order=R,
               tau=np.zeros((R + 1, n)))
    nan_wrench = np.zeros((R + 1, 6))
    nan_wrench[1, 2] = np.nan
    cases = [
        (nan_wrench, r"^base_wrench: contains NaN or infinite values$"),
        (np.zeros((R + 2, 6)), r"^base_wrench: expected a jet of shape \(2, 6\) "
                               r"\(row k = k-th time derivative\), got \(3, 6\)$"),
    ]
    for W, message in cases:
        for given in (W, W.tolist()):
            with pytest.raises(ValueError, match=message) as hyb_err:
                liedyn.hybrid_dynamics(model, **hyb, base_wrench=given)
            with pytest.raises(ValueError, match=message) as fwd_err:
                liedyn.forward_dynamics(model, **fwd, base_wrench=given)
            assert str(hyb_err.value) == str(fwd_err.value)


def test_base_pose_of_another_dimension_is_refused_before_the_kernel():
    """A base pose that is not 2-D (as an array or a list) raises the
    ValueError naming it, also after the kernel is compiled; it reached the
    kernel before and, with many dimensions, crashed the interpreter (in a
    subprocess for that reason)."""
    out = run_python("""
        import re
        import numpy as np
        import pytest
        import liedyn
        from models.trees import random_tree
        model = random_tree(np.random.default_rng(234), 4)
        n, R = model.n_joints, 1
        ok = dict(base_twist=np.zeros((R + 2, 6)), q=np.zeros((R + 3, n)), order=R,
                  motion_driven=[0], tau=np.zeros((R + 1, n)), base_wrench=np.zeros((R + 1, 6)))
        liedyn.hybrid_dynamics(model, None, **ok)
        for shape in [(16,), (1, 4, 4), (1,) * 8 + (4, 4)]:
            pose = np.eye(4).reshape(shape)
            for given in (pose, pose.tolist()):
                message = "^base_pose: expected a 2-D array, got shape " + re.escape(repr(shape))
                with pytest.raises(ValueError, match=message + "$"):
                    liedyn.hybrid_dynamics(model, given, **ok)
        print("ok")
    """, timeout=600)
    assert out.strip().endswith("ok")


@pytest.mark.parametrize("floating, base_motion, seed", [
    (True, False, 241), (True, True, 242), (False, True, 243)])
def test_closed_form_reference_at_every_order(floating, base_motion, seed):
    """The order-by-order closed-form solve of _closed_form_hybrid returns every
    jet, given or solved, of hybrid dynamics at orders 0..3 (and so is a
    reference the NaN-entries check above can rely on)."""
    R = 3
    model, C0, Vb, q, app, mask, tau, W0 = _random_split(seed, 7, floating, base_motion, R)
    hyb = liedyn.hybrid_dynamics(model, C0, Vb, q, R, motion_driven=mask, tau=tau,
                                 base_wrench=W0, applied=app, base_motion_driven=base_motion)
    ref = _closed_form_hybrid(model, C0, Vb if floating else np.zeros((R + 2, 6)), q, mask, tau,
                              W0, app, base_motion, R)
    _row_close(hyb.base_twist, ref[0], 1e-10, "base twist")
    _row_close(hyb.q, ref[1], 1e-10, "q")
    _row_close(hyb.tau, ref[3], 1e-10, "tau")
    if floating:
        _row_close(hyb.base_wrench, ref[2], 1e-10, "base wrench")
