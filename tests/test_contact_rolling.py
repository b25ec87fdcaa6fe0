"""Rolling contact of a sphere on a world plane (``RollingContact``, SPEC
§13.1) against references that share no code with its rows:

1. ``J ν`` and its first two time derivatives against the velocity of the
   sphere's material point at its touching point, ``ṗ_c + ρ n × ω`` from
   the frame kinematics (``reference="local_world_aligned"``), along a
   random motion of a random tree, differentiated by central differences.
2. Order 0 against the dense KKT system of SPEC §13.2 with ``M`` and ``h``
   of the closed form (§7) and ``J̇ ν`` from the central differences of 1;
   orders 1 to 3 against the dense order-by-order solve
   (:mod:`tests.contact_oracle`) and by central differences of the order-0
   result along the Taylor polynomials of the returned jets, also with
   Baumgarte stabilisation off the constraints; Newton–Euler with the
   forces at the touching points, and their power ``λᵀ J ν``.
3. A solid sphere (``I = 2/5 m ρ²``) on an incline of angle ``θ``: the
   closed form ``c̈ = 5/7 g sin θ`` down the slope, ``ω̇ = c̈ / ρ``, and the
   force inside the Coulomb cone exactly when ``μ ≥ 2/7 tan θ``.
4. A sphere rolling and spinning on flat ground, integrated by
   ``liedyn.simulate`` with the contact held: its centre moves straight at
   constant speed, its twist stays, its energy stays (RK4); a sliding
   sphere landing on the ground (``impulse_dynamics``) leaves rolling at
   5/7 of its speed.
5. Solo-12 on round feet on a slope: ``friction_cone_distribution`` puts
   the forces at the touching points; their wrenches about those points
   balance the base wrench of inverse dynamics (about the centres they do
   not).
6. Bad input.
"""

from math import comb

import numpy as np
import pytest

import liedyn as ld
from liedyn import se3
from models.trees import random_tree
from tests import contact_oracle as oracle
from tests.contact_robots import FEET, solo, solo_standing
from tests.helpers import assert_close, solid_sphere
from tests.robots import Trajectory
from tests.test_contact_forward import liedyn_order_0, taylor_errors, with_frames

G = 9.81


# ---------------------------------------------------------------- models --

def rolling_tree(seed, n_bodies=7, radius=0.08):
    """A random floating tree with armature and damping, a foot frame on one
    of its three deepest bodies, a rolling contact there against
    a plane of random normal, and a 1-D contact elsewhere (so the set mixes
    kinds). Returns ``(model, cs, rng)``."""
    rng = np.random.default_rng(seed)
    base = random_tree(rng, n_bodies, floating_base=True, armature=True, damping=True)
    depth = [len(base.ancestors(j)) - 1 for j in range(n_bodies)]
    deep = sorted(range(1, n_bodies), key=lambda j: -depth[j])[:3]       # the three deepest
    a, b = (int(x) for x in rng.choice(deep, size=2, replace=False))
    offset = se3.exp(np.concatenate([rng.normal(size=3), rng.normal(size=3) * 0.2]))
    model = with_frames(base, [("foot", a, offset), ("toe", b, offset)])
    cs = ld.ConstraintSet(model, [
        ld.RollingContact("foot", normal=rng.normal(size=3), radius=radius),
        ld.Contact1D("toe", normal=rng.normal(size=3))])
    return model, cs, rng


def material_velocity(model, cs, state, c=0):
    """``ṗ_c + ρ n × ω`` (3,) of rolling contact ``c`` at ``state = (C, V, q)``
    from the frame kinematics: the velocity of the sphere's material point
    at its touching point."""
    C, V, q = state
    d = cs.data
    frame = int(np.flatnonzero(np.array(model.frame_body) == d.body_a[c])[-1])
    fk = ld.frame_kinematics(model, C, V[:1], q[:2], 0, frame, reference="local_world_aligned")
    omega, cdot = fk.twist[0, :3], fk.twist[0, 3:]
    return cdot + d.radius[c] * np.cross(d.normal[c], omega)


def nu_jet(model, V, q):
    return np.hstack([V, q[1:]]) if model.floating_base else q[1:]


# ---------------------------------------------- 1. rows against kinematics --

def test_rolling_rate_is_the_material_point_velocity_and_its_derivatives():
    """``(J ν)^(k)``, k = 0..2, of the rolling rows against ``ṗ_c + ρ n × ω``
    and its first two central differences along a random motion. Steps
    ``h`` and ``h/2``: the errors fall ~4× (O(h²)); at h/2 = 5e-4 below 1e-6
    of the rates (measured up to 2.8e-7; the centripetal term by which a
    point contact would differ is 1.5–5 % of the first derivative)."""
    for seed in range(3):
        model, cs, rng = rolling_tree(seed)
        traj = Trajectory(model, rng, speed=0.7)
        C, V, q = traj.state(0.0, 3)
        J = ld.constraint_jacobian(model, cs, C, V, q, 2)[:, :3]
        nu = nu_jet(model, V, q)
        rate = [oracle.constraint_rate(J, nu, k) for k in range(3)]
        assert_close(rate[0], material_velocity(model, cs, (C, V, q)), 1e-12,
                     1e-12 * np.abs(rate[0]).max(), what="J ν")

        def v(t):
            return material_velocity(model, cs, traj.state(t, 1))
        errs = []
        for h in (1e-3, 5e-4):
            d1 = (v(h) - v(-h)) / (2 * h)
            d2 = (v(h) - 2 * v(0.0) + v(-h)) / h ** 2
            errs.append([np.abs(d1 - rate[1]).max() / np.abs(rate[1]).max(),
                         np.abs(d2 - rate[2]).max() / np.abs(rate[2]).max()])
        errs = np.array(errs)
        assert np.all(errs[1] < 1e-6), (seed, errs)
        assert np.all((errs[0] / errs[1] > 3.5) & (errs[0] / errs[1] < 4.5)), (seed, errs)


def test_rolling_differs_from_a_point_contact_by_the_centripetal_term():
    """At the same state the rolling rows and a ``Contact3D`` on a frame at
    the touching point share ``J`` but not ``J̇ ν``: the difference is
    ``ρ ω × (ω × n)`` (SPEC §13.1)."""
    model, cs, rng = rolling_tree(4)
    traj = Trajectory(model, rng)
    C, V, q = traj.state(0.0, 2)
    d = cs.data
    a = int(d.body_a[0])
    pose = ld.forward_kinematics(model, C, V[:1], q[:2], 0).body_pose[a]
    p = pose[:3, :3] @ d.offset_a[0][:3, 3] + pose[:3, 3] - d.radius[0] * d.normal[0]
    touch = d.offset_a[0].copy()
    touch[:3, 3] = pose[:3, :3].T @ (p - pose[:3, 3])               # the touching point, on a
    point = with_frames(model, [("foot", a, d.offset_a[0]), ("touch", a, touch)])
    roll = ld.ConstraintSet(point, [ld.RollingContact("foot", normal=d.normal[0],
                                                      radius=d.radius[0])])
    fixed = ld.ConstraintSet(point, [ld.Contact3D("touch")])
    Jr = ld.constraint_jacobian(point, roll, C, V, q, 1)
    Jp = ld.constraint_jacobian(point, fixed, C, V, q, 1)
    assert_close(Jr[0], Jp[0], 1e-12, 1e-12, what="J")
    nu = nu_jet(point, V, q)
    omega = ld.forward_kinematics(point, C, V[:1], q[:2], 0).twist[0, a, :3]
    n, rho = d.normal[0], d.radius[0]
    assert_close(Jr[1] @ nu[0] - Jp[1] @ nu[0], rho * np.cross(omega, np.cross(omega, n)),
                 1e-12, 1e-12 * rho * omega @ omega, what="J̇ν difference")


# ------------------------------------------------- 2. forward dynamics --

def dense_order_0(model, cs, C, V, q, tau, W0, Jdnu):
    """``(ν̇, λ)`` of ``[M −Jᵀ; J 0] [ν̇; λ] = [τ̄ − h; −J̇ν]`` with ``M``, ``h``
    from the closed form (SPEC §7) and ``J̇ν`` given."""
    M = ld.mass_matrix(model, C, q[0])
    nu = nu_jet(model, V[:1], q[:2])[0]
    h = (ld.coriolis_matrix(model, C, V[:1], q[:2]) @ nu + ld.gravity_vector(model, C, q[0])
         + ld.damping_matrix(model) @ nu)
    J = ld.constraint_jacobian(model, cs, C, None, q[:1], 0)[0]
    m = J.shape[0]
    K = np.block([[M, -J.T], [J, np.zeros((m, m))]])
    x = np.linalg.solve(K, np.concatenate([np.concatenate([W0, tau]) - h, -Jdnu]))
    return x[:model.nv], x[model.nv:]


def test_order_0_against_the_dense_kkt_with_jdot_nu_by_central_differences():
    """``J̇ ν = d/dt (J ν) − J ν̇`` along a motion through the state, the
    first term by central differences of the material-point velocity (and of
    ``nᵀ ṗ`` for the 1-D row): the KKT solution agrees with the recursive
    one to the O(h²) of the differences (h = 1e-3: measured 1.0e-6 relative)."""
    for seed in range(3):
        model, cs, rng = rolling_tree(seed + 10)
        traj = Trajectory(model, rng, speed=0.7)
        C, V, q = traj.state(0.0, 2)
        toe = model.frame_names.index("toe")
        n1 = cs.data.normal[1]

        def rate(t):
            s = traj.state(t, 1)
            ptoe = ld.frame_kinematics(model, s[0], s[1][:1], s[2][:2], 0, toe,
                                       reference="local_world_aligned").twist[0, 3:]
            return np.concatenate([material_velocity(model, cs, s), [n1 @ ptoe]])
        h = 1e-3
        J = ld.constraint_jacobian(model, cs, C, None, q[:1], 0)[0]
        Jdnu = (rate(h) - rate(-h)) / (2 * h) - J @ nu_jet(model, V, q)[1]
        tau = rng.normal(size=model.n_joints)
        W0 = rng.normal(size=6)
        res = ld.constrained_forward_dynamics(model, cs, C, V[:1], q[:2], 0, tau=tau[None],
                                              base_wrench=W0[None])
        dnu, lam = dense_order_0(model, cs, C, V, q, tau, W0, Jdnu)
        assert_close(oracle.pad_velocity(model, res)[1], dnu, 1e-5,
                     1e-5 * np.abs(dnu).max(), what="ν̇")
        assert_close(res.force[0], lam, 1e-5, 1e-5 * np.abs(lam).max(), what="λ")


def test_orders_0_to_3_against_the_dense_order_by_order_solve():
    """The jets against :func:`tests.contact_oracle.kkt_jets` (closed-form
    ``M^(a)``, ``C^(a)``, ``g^(k)``; the Jacobian jets checked in 1) at a
    state off ``J ν = 0``: agreement to 1e-9 relative (measured 2e-14)."""
    for seed in range(3):
        model, cs, rng = rolling_tree(seed + 20)
        C = se3.exp(rng.normal(size=6) * 0.5)
        V = rng.normal(size=(1, 6))
        q = rng.normal(size=(2, model.n_joints))
        r = 3
        tau = rng.normal(size=(r + 1, model.n_joints))
        W0 = rng.normal(size=(r + 1, 6))
        res = ld.constrained_forward_dynamics(model, cs, C, V, q, r, tau=tau, base_wrench=W0)
        nu, lam, _ = oracle.kkt_jets(model, cs, C, V, q, r, tau=tau, base_wrench=W0)
        got = oracle.pad_velocity(model, res)
        for k in range(r + 1):
            assert_close(got[k + 1], nu[k + 1], 1e-9, 1e-9 * np.abs(nu[k + 1]).max(),
                         what=f"ν^({k + 1})")
            assert_close(res.force[k], lam[k], 1e-9, 1e-9 * np.abs(lam[k]).max(),
                         what=f"λ^({k})")


def test_orders_1_to_3_are_time_derivatives_of_order_0():
    """Central differences of the order-0 result along the Taylor
    polynomials of the returned jets: errors fall ~4× per halving of h and
    stay below 2e-2 at h/2 = 5e-3 (the O(h²) truncation; measured up to
    4.7e-3, at λ⁽³⁾)."""
    model, cs, rng = rolling_tree(31)
    C = se3.exp(rng.normal(size=6) * 0.5)
    q0 = rng.normal(size=model.n_joints)
    J = ld.constraint_jacobian(model, cs, C, None, q0[None], 0)[0]
    _, s, Vt = np.linalg.svd(J)
    N = Vt[J.shape[0]:].T
    nu = 0.5 * N @ (N.T @ rng.normal(size=model.nv))             # J ν = 0
    V, q = nu[None, :6], np.vstack([q0, nu[6:]])
    tau = rng.normal(size=(4, model.n_joints))
    W0 = rng.normal(size=(4, 6))
    res = ld.constrained_forward_dynamics(model, cs, C, V, q, 3, tau=tau, base_wrench=W0)
    errs = taylor_errors(model, res, C, tau, W0, liedyn_order_0(model, cs), 1e-2)
    for key, (e1, e2) in errs.items():
        assert e2 <= 2e-2 and 3.5 <= e1 / e2 <= 4.5, (key, e1, e2)


def test_baumgarte_jets_are_time_derivatives_of_the_stabilised_order_0():
    """Off the constraints (``φ ≠ 0``, ``J ν ≠ 0``) with ``baumgarte=(α, β)``:
    the rolling rows' position error is ``n nᵀ (p − p_b)``, so its rate is
    ``n nᵀ J ν``, not ``J ν``; with that rate the jets are the time
    derivatives of the stabilised order 0 (central differences fall ~4×
    per halving of h and stay below 2e-2 at h/2; measured up to 5.1e-4,
    and 0.81 with ``J ν`` as the rate of every row)."""
    model, cs, rng = rolling_tree(51)
    C = se3.exp(rng.normal(size=6) * 0.5)
    q0 = rng.normal(size=model.n_joints)
    anchored = cs.anchored(C, q0 + 0.05 * rng.normal(size=model.n_joints))
    V = 0.5 * rng.normal(size=(1, 6))
    q = np.vstack([q0, 0.5 * rng.normal(size=model.n_joints)])
    tau = rng.normal(size=(3, model.n_joints))
    W0 = rng.normal(size=(3, 6))
    stab = (2.0, 3.0)
    assert np.abs(ld.constraint_error(model, anchored, C, q0)).max() > 1e-3
    res = ld.constrained_forward_dynamics(model, anchored, C, V, q, 2, tau=tau, base_wrench=W0,
                                          baumgarte=stab)

    def order_0(C, V, q, tau, W):
        r = ld.constrained_forward_dynamics(model, anchored, C, V, q, 0, tau=tau,
                                            base_wrench=W, baumgarte=stab)
        return r.base_twist[1], r.q[2], r.force[0]
    errs = taylor_errors(model, res, C, tau, W0, order_0, 1e-2)
    for key, (e1, e2) in errs.items():
        assert e2 <= 2e-2 and 3.5 <= e1 / e2 <= 4.5, (key, e1, e2)
    # the stabilised equation at order 0: (Jν)˙ + 2α Jν + β² φ = 0
    J = ld.constraint_jacobian(model, anchored, C, res.base_twist, res.q, 1)
    nu = nu_jet(model, res.base_twist, res.q)
    phi = ld.constraint_error(model, anchored, C, q0)
    lhs = (oracle.constraint_rate(J, nu, 1) + 2 * stab[0] * oracle.constraint_rate(J, nu, 0)
           + stab[1] ** 2 * phi)
    assert_close(lhs, np.zeros(4), 0.0, 1e-10 * np.abs(oracle.constraint_rate(J, nu, 1)).max(),
                 what="stabilised constraint")
    d = anchored.data
    assert_close(phi[:3], d.normal[0] * (d.normal[0] @ phi[:3]), 0.0, 1e-15,
                 what="φ along n")


def test_forces_do_no_work_and_newton_euler_with_the_forces_at_the_touching_point():
    """``λᵀ J ν`` is the power of the wrench ``(p × λ, λ)`` at the touching
    point; inverse dynamics fed the returned motion and
    ``constraint_wrenches`` returns the input forces."""
    model, cs, rng = rolling_tree(41)
    C = se3.exp(rng.normal(size=6) * 0.5)
    V = rng.normal(size=(1, 6))
    q = rng.normal(size=(2, model.n_joints))
    tau = rng.normal(size=(3, model.n_joints))
    W0 = rng.normal(size=(3, 6))
    res = ld.constrained_forward_dynamics(model, cs, C, V, q, 2, tau=tau, base_wrench=W0)
    W = ld.constraint_wrenches(model, cs, C, res.base_twist, res.q, res.force)
    idr = ld.inverse_dynamics(model, C, res.base_twist, res.q, 2, applied=W)
    assert_close(idr.tau, tau, 1e-9, 1e-9 * np.abs(tau).max(), what="τ")
    assert_close(idr.base_wrench, W0, 1e-9, 1e-9 * np.abs(W0).max(), what="W₀")
    # the power of the rolling force: λ · (v + ω × p) with p = c − ρ n
    d = cs.data
    a = int(d.body_a[0])
    kin = ld.forward_kinematics(model, C, V, q, 0)
    pose, twist = kin.body_pose[a], kin.twist[0, a]
    p = pose[:3, :3] @ d.offset_a[0][:3, 3] + pose[:3, 3] - d.radius[0] * d.normal[0]
    lam = res.force[0, :3]
    J = ld.constraint_jacobian(model, cs, C, None, q[:1], 0)[0]
    nu = nu_jet(model, V, q)[0]
    power = lam @ (twist[3:] + np.cross(twist[:3], p))
    assert_close(lam @ (J[:3] @ nu), power, 1e-12, 1e-12 * abs(power) + 1e-12, what="power")
    only = res.force[:1].copy()
    only[:, 3:] = 0.0                                             # the rolling force alone
    W1 = ld.constraint_wrenches(model, cs, C, V, q, only)
    assert_close(W1[0, a], np.concatenate([np.cross(p, lam), lam]), 1e-12,
                 1e-12 * np.abs(W1).max(), what="the wrench of λ at p")


# ------------------------------------------------------- 3. the incline --

@pytest.mark.parametrize("theta", [0.2, 0.6])
def test_a_solid_sphere_rolls_down_an_incline_at_five_sevenths_g_sin_theta(theta):
    rho, m = 0.1, 2.0
    model = solid_sphere(rho, m)
    n = np.array([-np.sin(theta), 0.0, np.cos(theta)])
    down = -np.array([np.cos(theta), 0.0, np.sin(theta)])           # down the slope
    C = se3.exp(np.array([0.3, -1.1, 0.4, 0.0, 0.0, 0.0]))
    C[:3, 3] = 0.7 * down + 2.0 * np.array([0.0, 1.0, 0.0]) + rho * n
    cs = ld.ConstraintSet(model, [ld.RollingContact("ball", normal=n, radius=rho)])
    res = ld.constrained_forward_dynamics(model, cs, C, np.zeros((1, 6)), np.zeros((2, 0)), 0,
                                          tau=np.zeros((1, 0)), base_wrench=np.zeros((1, 6)))
    dV = res.base_twist[1]
    c = C[:3, 3]
    cdd = dV[3:] + np.cross(dV[:3], c)                                # at rest
    a = 5.0 / 7.0 * G * np.sin(theta)
    assert_close(cdd, a * down, 1e-13, 1e-13 * G, what="c̈")
    assert_close(dV[:3], np.cross(n, cdd) / rho, 1e-13, 1e-13 * G / rho, what="ω̇")
    assert_close(np.linalg.norm(dV[:3]), a / rho, 1e-13, what="|ω̇| = a/ρ")
    lam = res.force[0]
    assert_close(lam, m * cdd - m * np.array([0.0, 0.0, -G]), 1e-13, 1e-13 * m * G,
                 what="λ = m c̈ − m g")
    on_plane = ld.ConstraintSet(model, [ld.RollingContact("ball", normal=n, radius=rho,
                                                          anchor=np.zeros(3))])
    lifted = C.copy()
    lifted[:3, 3] += 0.01 * n + 0.3 * down                            # 1 cm off, moved along
    assert_close(ld.constraint_error(model, on_plane, lifted, np.zeros(0)), 0.01 * n, 1e-12,
                 1e-15, what="φ = n (nᵀ c − h − ρ)")
    mu_min = 2.0 / 7.0 * np.tan(theta)
    for mu, inside in ((mu_min * (1 + 1e-8), True), (mu_min * (1 - 1e-8), False)):
        margin = ld.friction_cone_margin(lam[None], n, mu)
        assert (margin[0] > 0) == inside, (mu, margin)


# --------------------------------------------------------- 4. simulate --

@pytest.mark.slow
def test_a_spinning_sphere_rolls_straight_at_constant_speed_in_simulate():
    """Flat ground, ``ċ = (0.8, −0.5, 0)``, spin 3 rad/s about a tilted axis
    (rolling part ``n × ċ / ρ`` plus 3 rad/s about ``n``): the rolling force
    is the weight at the touching point, so ``c(t) = c₀ + ċ t``, ``ω`` stays
    and the energy too: the errors are RK4's, falling 16× when ``dt``
    halves."""
    rho, m = 0.1, 2.0
    model = solid_sphere(rho, m)
    n = np.array([0.0, 0.0, 1.0])
    cdot = np.array([0.8, -0.5, 0.0])
    omega = np.cross(n, cdot) / rho + 3.0 * n
    C = se3.exp(np.array([0.2, 0.5, -0.3, 0.0, 0.0, 0.0]))
    C[:3, 3] = [0.3, 0.1, rho]
    V = np.concatenate([omega, cdot - np.cross(omega, C[:3, 3])])
    cs = ld.ConstraintSet(model, [ld.RollingContact("ball", normal=n, radius=rho)])
    errors = []
    for dt in (2e-2, 1e-2):
        traj = ld.simulate(model, ld.State(base_pose=C, base_twist=V), 1.0, dt=dt,
                           constraints=cs)
        t = traj.time
        R_ref = np.array([se3.exp(np.concatenate([omega * s, np.zeros(3)]))[:3, :3] @ C[:3, :3]
                          for s in t])
        E = np.array([0.5 * v @ ld.mass_matrix(model, P, np.zeros(0)) @ v + m * G * P[2, 3]
                      for P, v in zip(traj.base_pose, traj.base_twist[:, 0])])
        errors.append([np.abs(traj.base_pose[:, :3, 3] - (C[:3, 3] + t[:, None] * cdot)).max(),
                       np.abs(traj.base_twist[:, 0, :3] - omega).max(),
                       np.abs(traj.base_pose[:, :3, :3] - R_ref).max(),
                       np.ptp(E) / E[0]])
        assert_close(traj.force[:, :3], np.tile([0.0, 0.0, m * G], (len(t), 1)), 0.0,
                     1e-9 * m * G, what="λ = the weight")
    errors = np.array(errors)
    # measured at dt = 1e-2 (|ω| = 9.9 rad/s): 4.6e-7 m, 4.9e-6 rad/s, 9.4e-7 (R), 1.8e-7
    # (energy, relative); at 2e-2 18, 20, 29 and 32 times those
    assert np.all(errors[1] < [1e-6, 1e-5, 2e-6, 5e-7]), errors
    assert np.all(errors[0] / errors[1] > 12.0), errors                       # RK4: ≥ 16×


def test_a_sliding_sphere_landing_on_the_ground_rolls_at_five_sevenths_of_its_speed():
    """``impulse_dynamics`` with ``e = 0``: a solid sphere landing without spin
    at ``ċ = (v, 0, −w)`` leaves rolling, ``ċ⁺ = (5/7 v, 0, 0)``,
    ``ω⁺ = (0, 5/7 v/ρ, 0)`` (its angular momentum about the touching point
    is kept: the impulse acts there), and loses ``½ m w² + ½ m v² · 2/7``."""
    rho, m, v, w = 0.1, 2.0, 1.4, 0.6
    model = solid_sphere(rho, m)
    C = np.eye(4)
    C[:3, 3] = [0.2, -0.3, rho]
    V = np.concatenate([np.zeros(3), [v, 0.0, -w]])                  # ω = 0: v = ċ
    cs = ld.ConstraintSet(model, [ld.RollingContact("ball", normal=[0, 0, 1], radius=rho)])
    out = ld.impulse_dynamics(model, cs, C, V[None], np.zeros((2, 0)), restitution=0.0)
    omega = out.base_twist[0, :3]
    cdot = out.base_twist[0, 3:] + np.cross(omega, C[:3, 3])
    assert_close(cdot, [5.0 / 7.0 * v, 0.0, 0.0], 1e-14, 1e-14, what="ċ⁺")
    assert_close(omega, [0.0, 5.0 / 7.0 * v / rho, 0.0], 1e-14, 1e-13, what="ω⁺")
    assert_close(out.velocity_after, np.zeros(3), 0.0, 1e-14, what="rolling after")
    assert_close(out.energy_loss, 0.5 * m * w * w + 0.5 * m * v * v * 2.0 / 7.0, 1e-14,
                 what="energy lost")
    assert_close(out.impulse, [-2.0 / 7.0 * m * v, 0.0, m * w], 1e-14, 1e-14, what="Λ")


# ------------------------------------------- 5. round feet, friction --

def test_round_feet_distribution_balances_the_base_wrench_about_the_touching_points():
    rho = 0.02
    slope = np.array([0.0, -np.sin(0.25), np.cos(0.25)])
    model = solo()
    C0, q = solo_standing(model)
    centres = [ld.frame_pose(model, C0, q, f)[:3, 3] for f in FEET]
    contacts = [ld.PointContact(f, ld.Plane(slope, point=c - rho * slope), rho)
                for f, c in zip(FEET, centres)]
    still = (np.zeros((2, 6)), np.vstack([q, np.zeros((2, model.n_joints))]))
    out = ld.friction_cone_distribution(model, contacts, C0, *still, 0, mu=0.8)
    assert out.constraints.kinds == ("rolling",) * 4
    lam = out.force[0].reshape(4, 3)
    w = ld.inverse_dynamics(model, C0, *still, 0).base_wrench[0]
    about = lambda pts: np.concatenate([sum(np.cross(p, f) for p, f in zip(pts, lam)),  # noqa: E731
                                        lam.sum(axis=0)])
    touching = [c - rho * slope for c in centres]
    assert_close(about(touching), w, 1e-10, 1e-10 * np.abs(w).max(), what="Σ (p × λ, λ)")
    off = np.abs(about(centres) - w).max()
    assert off > 1e-3 * np.abs(w).max(), off                  # the centres are not the points
    assert out.margin.min() > 0
    W = ld.constraint_wrenches(model, out.constraints, C0, *still, out.force)
    idr = ld.inverse_dynamics(model, C0, *still, 0, applied=W)
    assert_close(idr.tau, out.tau, 1e-10, 1e-10 * np.abs(out.tau).max(), what="τ")


# ------------------------------------------------------------ 6. bad input --

def test_bad_input_names_the_argument():
    model = solid_sphere(0.1, 2.0)
    with pytest.raises(ValueError, match=r"^radius: expected a finite number > 0"):
        ld.RollingContact("ball", normal=[0, 0, 1], radius=0.0)
    with pytest.raises(ValueError, match=r"^radius: expected a finite number > 0"):
        ld.RollingContact("ball", normal=[0, 0, 1], radius=-0.1)
    with pytest.raises(TypeError, match=r"^radius: expected a real number"):
        ld.RollingContact("ball", normal=[0, 0, 1], radius="big")
    with pytest.raises(ValueError, match=r"^normal: expected a non-zero direction"):
        ld.RollingContact("ball", normal=[0, 0, 0], radius=0.1)
    with pytest.raises(ValueError, match=r"^normal: expected shape \(3,\)"):
        ld.RollingContact("ball", normal=[0, 1], radius=0.1)
    with pytest.raises(ValueError, match=r"constraints\[0\].frame: unknown frame 'foot'"):
        ld.ConstraintSet(model, [ld.RollingContact("foot", normal=[0, 0, 1], radius=0.1)])
    with pytest.raises(ValueError, match=r"anchor: expected shape \(3,\)"):
        ld.ConstraintSet(model, [ld.RollingContact("ball", normal=[0, 0, 1], radius=0.1,
                                                   anchor=np.eye(4))])
    with pytest.raises(TypeError, match="positional"):               # no loops: world only
        ld.RollingContact("ball", "ball", normal=[0, 0, 1], radius=0.1)
