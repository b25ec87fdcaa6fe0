"""liedyn.simulate with held contacts and loops (SPEC §10.1) against
independent references.

* energy: a conservative robot held by ideal constraints keeps ``T + U``,
  with ``T = ½ νᵀ M ν`` from the closed-form mass matrix (SPEC §7) and
  ``U = −Σ m_j g⃗ᵀ c_j`` from the body poses — no code shared with the
  constrained articulated-body recursion that drives the integrator; the
  drift is RK4's truncation error and falls ~16× per halving of dt;
* the residuals ``J ν`` (``liedyn.constraint_jacobian``) and ``φ``
  (``liedyn.constraint_error``) over seconds of a point-footed quadruped
  under a PD controller and of a four-bar loop closed by a ball joint (a
  redundant set: three rows of rank two), with and without stabilization;
* the order of convergence in dt against a dt/16 reference;
* the forces: at rest they carry the weight; in motion they are the CoM's
  acceleration (Newton for the whole robot, the CoM from the recorded poses
  differentiated by central differences in time); fed back as applied
  wrenches, the unconstrained batch forward dynamics reproduces the
  recorded accelerations;
* :func:`liedyn.project_state` against the dense M-metric projection;
* every failure mode, and the interpreted kernels against the compiled.
"""

import json
import warnings

import numpy as np
import pytest

import liedyn as ld
from liedyn import se3
from models.example_robots import load_robot, robot_path
from tests.helpers import assert_close, run_python

G = 9.81
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


# ---------------------------------------------------------------- models --

def four_bar(closure="ball"):
    """A planar four-bar in the x-z plane (joint axes along y, gravity −z):
    crank ``a1`` (0.5 m) and coupler ``a2`` (0.7 m) hang from the pivot at
    the origin, rocker ``b1`` (0.6 m) from the pivot at (0.8, 0, 0); the tips
    of ``a2`` and ``b1`` are held together by a ball joint (``"ball"``: three
    rows, rank two, the out-of-plane row vanishes) or by two 1-D rows in the
    plane (``"pin"``)."""
    b = ld.ModelBuilder(floating_base=False)
    b.add_body("ground", None, None)
    y = np.array([0.0, 1.0, 0.0])

    def link(length):
        return se3.spatial_inertia(1.0, np.array([length / 2, 0.0, 0.0]),
                                   np.diag([1e-3, length ** 2 / 12, length ** 2 / 12]))

    def at(x):
        X = np.eye(4)
        X[0, 3] = x
        return X
    b.add_body("a1", "ground", ld.Revolute(y), inertia=link(0.5))
    b.add_body("a2", "a1", ld.Revolute(y), origin=at(0.5), inertia=link(0.7))
    b.add_body("b1", "ground", ld.Revolute(y), origin=at(0.8), inertia=link(0.6))
    b.add_frame("a_tip", "a2", at(0.7))
    b.add_frame("b_tip", "b1", at(0.6))
    model = b.build()
    if closure == "ball":
        rows = [ld.Contact3D("a_tip", "b_tip", name="pin")]
    else:
        rows = [ld.Contact1D("a_tip", "b_tip", normal=[1, 0, 0], name="pin x"),
                ld.Contact1D("a_tip", "b_tip", normal=[0, 0, 1], name="pin z")]
    return model, ld.ConstraintSet(model, rows)


def four_bar_closed(theta):
    """Joint angles that close the four-bar at crank angle ``theta`` (the
    coupler above the line of the pivots), by intersecting two circles."""
    def angle(u):                                  # R_y(θ) e_x = (cos θ, 0, −sin θ)
        return np.arctan2(-u[1], u[0])
    P = 0.5 * np.array([np.cos(theta), -np.sin(theta)])
    B = np.array([0.8, 0.0])
    d = np.linalg.norm(B - P)
    along = (0.7 ** 2 - 0.6 ** 2 + d ** 2) / (2 * d)
    e = (B - P) / d
    Q = P + along * e + np.sqrt(0.7 ** 2 - along ** 2) * np.array([-e[1], e[0]])
    return np.array([theta, angle(Q - P) - theta, angle(Q - B)])


@pytest.fixture(scope="module")
def bar():
    model, cs = four_bar()
    return model, cs, ld.State(q=four_bar_closed(1.0))


def standing_solo():
    """Solo-12 standing on four point feet 0.25 m up, the joint torques that
    hold it still (constrained inverse dynamics at rest) and a PD law that
    sways it about that posture at 1.5 Hz."""
    model = load_robot("solo12")
    cs = ld.ConstraintSet(model, [ld.Contact3D(f, name=f) for f in FEET])
    q0 = np.array([0.0, 0.8, -1.6] * 2 + [0.0, -0.8, 1.6] * 2)
    C0 = np.eye(4)
    C0[2, 3] = 0.25
    rest = np.vstack([q0, np.zeros((2, 12))])
    hold = ld.constrained_inverse_dynamics(model, cs.anchored(C0, q0), C0, np.zeros((2, 6)),
                                           rest, 0).tau[0]
    amp = np.array([0.0, 0.3, -0.6] * 4)

    def sway(t, s):
        ref = q0 + amp * np.sin(2 * np.pi * 1.5 * t)
        return ld.Inputs(tau=hold + 20.0 * (ref - s.q) - 0.5 * s.qd)
    return model, cs, ld.State(base_pose=C0, q=q0), hold, sway


@pytest.fixture(scope="module")
def solo():
    return standing_solo()


# --------------------------------------------------------------- helpers --

def _nu(model, V, q):
    return np.concatenate([V[0], q[1]]) if model.floating_base else q[1]


def _energy(model, traj):
    """``T + U`` per sample: ``T = ½ νᵀ M ν`` (closed-form M, SPEC §7) and
    ``U = −Σ m_j g⃗ᵀ c_j`` over the moving bodies (world CoMs from the poses)."""
    g = np.asarray(model.gravity)
    out = []
    for C, V, q in zip(traj.base_pose, traj.base_twist, traj.q):
        nu = _nu(model, V, q)
        poses = ld.forward_kinematics(model, C, V[:1] if model.floating_base else None, q[:2],
                                      0).body_pose
        U = 0.0
        for j in range(0 if model.floating_base else 1, model.n_bodies):
            c = poses[j, :3, :3] @ model.body_com[j] + poses[j, :3, 3]
            U -= model.body_mass[j] * g @ c
        out.append(0.5 * nu @ ld.mass_matrix(model, C, q[0]) @ nu + U)
    return np.array(out)


def _residuals(model, traj, samples):
    """``J ν`` and ``φ`` of the given samples from the public functions."""
    cs = traj.constraints
    Jv, phi = [], []
    for k in samples:
        C, V, q = traj.base_pose[k], traj.base_twist[k], traj.q[k]
        J = ld.constraint_jacobian(model, cs, C, None, q[:1], 0)[0]
        Jv.append(J @ _nu(model, V, q))
        phi.append(ld.constraint_error(model, cs, C, q[0]))
    return np.array(Jv), np.array(phi)


def _slope(dts, errs):
    return np.polyfit(np.log(dts), np.log(errs), 1)[0]


# ---------------------------------------------------------------- energy --

@pytest.mark.parametrize("stabilization", ["projection", "baumgarte", None])
def test_a_collapsing_quadruped_held_at_its_feet_keeps_its_energy_to_order_four(solo,
                                                                               stabilization):
    """No torques: Solo-12 folds under gravity for 0.15 s (the base drops
    11 cm, the knees bend from 1.6 to 2.4 rad) with its feet held; the
    constraints do no work, so T + U is conserved up to RK4's error. With
    dt ≤ 1 ms the default Baumgarte rates are the same (10/s) at both steps."""
    model, cs, state, _, _ = solo
    drift = []
    for dt in (1e-3, 5e-4):
        traj = ld.simulate(model, state, 0.15, dt=dt, constraints=cs, stabilization=stabilization)
        E = _energy(model, traj)
        drift.append(np.abs(E - E[0]).max())
    assert traj.base_pose[-1, 2, 3] < 0.15                 # it did fall
    # measured at 1 ms: 6.3e-12 (projection), 1.5e-11 (Baumgarte), 1.2e-11 (none) of 5.5 J
    assert drift[0] < 1e-10, drift
    assert 12.0 < drift[0] / drift[1] < 21.0, drift


@pytest.mark.parametrize("stabilization", ["projection", None])
def test_a_swinging_four_bar_keeps_its_energy_to_order_four(bar, stabilization):
    """The four-bar swings under gravity for 2 s (a redundant ball-joint
    closure); T + U drifts by RK4's error only."""
    model, cs, state = bar
    drift = []
    for dt in (4e-3, 2e-3):
        traj = ld.simulate(model, state, 2.0, dt=dt, constraints=cs, stabilization=stabilization)
        E = _energy(model, traj)
        drift.append(np.abs(E - E[0]).max())
    assert np.ptp(traj.q[:, 0, 0]) > 1.0                   # it swings
    # measured at 4 ms: 3.2e-9 (projection), 1.8e-7 (none)
    assert drift[0] < (2e-8 if stabilization else 1e-6), drift
    assert 12.0 < drift[0] / drift[1] < 21.0, drift


# ------------------------------------------------------------- residuals --

def test_a_swaying_quadruped_keeps_its_feet_for_two_seconds(solo):
    """Solo-12 under the PD sway for 2 s at 2 ms: with projection the
    recorded residuals stay at round-off; without, they drift, and the
    recorded ones are the public functions' at the recorded states."""
    model, cs, state, _, sway = solo
    proj = ld.simulate(model, state, 2.0, dt=2e-3, controller=sway, constraints=cs)
    assert np.ptp(proj.base_pose[:, 2, 3]) > 0.01          # the base moves
    assert np.abs(proj.velocity_residual).max() < 1e-13    # measured 4e-16
    assert np.abs(proj.position_residual).max() < 1e-13    # measured 2e-16
    Jv, phi = _residuals(model, proj, range(0, len(proj), 100))
    assert np.abs(Jv).max() < 1e-13 and np.abs(phi).max() < 1e-13
    for f in FEET:                                         # the feet stay where they started
        p = [ld.frame_pose(model, C, q[0], f)[:3, 3] for C, q in zip(proj.base_pose[::100],
                                                                    proj.q[::100])]
        assert_close(np.array(p), np.broadcast_to(p[0], (len(p), 3)), 0.0, 1e-13, what=f)
    free = ld.simulate(model, state, 2.0, dt=2e-3, controller=sway, constraints=cs,
                       stabilization=None)
    assert 1e-9 < np.abs(free.velocity_residual).max() < 1e-6      # measured 1e-7
    Jv, phi = _residuals(model, free, range(0, len(free), 100))
    assert_close(free.velocity_residual[::100], Jv, 0.0, 1e-13, what="J ν as recorded")
    assert_close(free.position_residual[::100], phi, 0.0, 1e-13, what="φ as recorded")


def test_a_four_bar_closed_by_a_ball_joint_keeps_closed_for_five_seconds(bar):
    """The redundant closure (rank 2 of 3 rows) over 5 s at 4 ms: projection
    at round-off, the default Baumgarte bounded at 1e-8."""
    model, cs, state = bar
    proj = ld.simulate(model, state, 5.0, dt=4e-3, constraints=cs)
    assert np.abs(proj.velocity_residual).max() < 1e-13
    assert np.abs(proj.position_residual).max() < 1e-13
    Jv, phi = _residuals(model, proj, range(0, len(proj), 50))
    assert np.abs(Jv).max() < 1e-13 and np.abs(phi).max() < 1e-13
    baum = ld.simulate(model, state, 5.0, dt=4e-3, constraints=cs, stabilization="baumgarte")
    assert np.abs(baum.velocity_residual).max() < 1e-8     # measured 4.4e-9
    assert np.abs(baum.position_residual).max() < 5e-9     # measured 1.0e-9
    assert np.abs(baum.force[:, 1]).max() < 1e-12         # the redundant row: no force


def test_without_stabilization_the_drift_grows_and_stabilization_removes_it(bar):
    """10 s of the four-bar at 4 ms: the unstabilized residuals grow with
    time (φ about quadratically) and exceed the stabilized ones; Baumgarte's
    do not grow."""
    model, cs, state = bar
    runs = {s: ld.simulate(model, state, 10.0, dt=4e-3, constraints=cs, stabilization=s)
            for s in ("projection", "baumgarte", None)}

    def worst(traj, a, b, what):
        sel = (traj.time >= a) & (traj.time <= b)
        return np.abs(getattr(traj, what)[sel]).max()
    for what in ("velocity_residual", "position_residual"):
        free_early, free_late = worst(runs[None], 0, 2, what), worst(runs[None], 8, 10, what)
        baum_early, baum_late = worst(runs["baumgarte"], 0, 2, what), \
            worst(runs["baumgarte"], 8, 10, what)
        # measured: φ 1.4e-8 → 3.3e-7, J ν 1.3e-8 → 6.8e-8 (none); φ 1.0e-9, J ν 4.4e-9
        # in both windows (Baumgarte)
        assert free_late > 3.0 * free_early, (what, free_early, free_late)
        assert baum_late < 2.0 * baum_early, (what, baum_early, baum_late)
        assert free_late > 10.0 * baum_late, (what, free_late, baum_late)
        assert worst(runs["projection"], 0, 10, what) < 1e-13


# ------------------------------------------------------------ convergence --

@pytest.mark.parametrize("stabilization", ["projection", "baumgarte", None])
def test_the_trajectory_converges_with_order_four(bar, stabilization):
    """The four-bar for 1 s at dt = 2, 1, 0.5 ms against dt/16 of the
    coarsest (projection); errors of q at the common sample times. With the
    default Baumgarte rule the rates are 5/s at 2 ms and 10/s below."""
    model, cs, state = bar
    ref = ld.simulate(model, state, 1.0, dt=2e-3 / 16, constraints=cs)
    dts, errs = (2e-3, 1e-3, 5e-4), []
    for dt in dts:
        traj = ld.simulate(model, state, 1.0, dt=dt, constraints=cs, stabilization=stabilization)
        every = round(2e-3 / dt)
        errs.append(np.abs(traj.q[::every, 0] - ref.q[::16, 0]).max())
    assert abs(_slope(dts[1:], errs[1:]) - 4.0) < 0.4, errs
    if stabilization != "baumgarte":
        assert abs(_slope(dts, errs) - 4.0) < 0.3, errs


def test_a_sampled_controller_on_the_quadruped_converges_with_order_four(solo):
    """Solo-12 with the PD sway held at 250 Hz (the steps land on the
    samples) for 0.5 s: joint and base-position errors fall as dt⁴."""
    model, cs, state, _, sway = solo
    ref = ld.simulate(model, state, 0.5, dt=4e-3 / 16, controller=sway, control_rate=250,
                      constraints=cs)
    dts, eq, ep = (4e-3, 2e-3, 1e-3), [], []
    for dt in dts:
        traj = ld.simulate(model, state, 0.5, dt=dt, controller=sway, control_rate=250,
                           constraints=cs)
        every = round(4e-3 / dt)
        eq.append(np.abs(traj.q[::every, 0] - ref.q[::16, 0]).max())
        ep.append(np.abs(traj.base_pose[::every, :3, 3] - ref.base_pose[::16, :3, 3]).max())
    assert abs(_slope(dts, eq) - 4.0) < 0.3, eq
    assert abs(_slope(dts, ep) - 4.0) < 0.3, ep


# ----------------------------------------------------------------- forces --

def test_at_rest_the_feet_carry_the_weight(solo):
    """Held still by the torques of the constrained inverse dynamics, Solo-12
    stays at rest and the vertical foot forces add up to m g at every sample
    (the total mass from the model), the horizontal ones to zero."""
    model, cs, state, hold, _ = solo
    traj = ld.simulate(model, state, 0.5, dt=2e-3, controller=lambda t, s: ld.Inputs(tau=hold),
                       control_rate=50, constraints=cs)
    total = sum(traj.force_of(f) for f in FEET)
    weight = model.body_mass.sum() * G
    assert_close(total[:, 2], np.full(len(traj), weight), 1e-12, what="Σ f_z")
    assert_close(total[:, :2], np.zeros((len(traj), 2)), 0.0, 1e-10, what="Σ f_xy")
    assert np.abs(traj.base_twist).max() < 1e-10 and np.abs(traj.q[:, 1]).max() < 1e-10
    assert traj.force.shape == (len(traj), 12)
    assert_close(traj.force_of(FEET[2]), traj.force[:, 6:9], 0.0, 0.0, what="force_of")


def test_in_motion_the_foot_forces_accelerate_the_centre_of_mass(solo):
    """Σ λ = m (c̈ − g⃗) at every interior sample of the PD sway, with c the
    CoM of the recorded poses and c̈ its fourth-order central difference in
    time (measured: 1.5e-5 N apart, forces up to 35 N, c̈ up to 10 m/s²)."""
    model, cs, state, _, sway = solo
    dt = 1e-3
    traj = ld.simulate(model, state, 0.5, dt=dt, controller=sway, constraints=cs)
    mass = model.body_mass.sum()
    c = []
    for C, V, q in zip(traj.base_pose, traj.base_twist, traj.q):
        poses = ld.forward_kinematics(model, C, V[:1], q[:2], 0).body_pose
        c.append(sum(model.body_mass[j] * (poses[j, :3, :3] @ model.body_com[j] + poses[j, :3, 3])
                     for j in range(model.n_bodies)) / mass)
    c = np.array(c)
    cdd = (-c[4:] + 16 * c[3:-1] - 30 * c[2:-2] + 16 * c[1:-3] - c[:-4]) / (12 * dt ** 2)
    total = sum(traj.force_of(f) for f in FEET)[2:-2]
    assert np.abs(cdd).max() > 0.5                         # m/s²: it accelerates
    assert_close(total, mass * (cdd - np.asarray(model.gravity)), 0.0, 1e-4,
                 what="Σ λ against m (c̈ − g)")


def test_the_forces_as_applied_wrenches_reproduce_the_accelerations(solo):
    """The recorded λ turned into body wrenches (liedyn.constraint_wrenches)
    and given to the unconstrained batch forward dynamics give back the
    recorded accelerations: they are the forces the integrator used."""
    model, cs, state, _, sway = solo
    traj = ld.simulate(model, state, 0.2, dt=2e-3, controller=sway, constraints=cs)
    applied = np.stack([ld.constraint_wrenches(model, traj.constraints, C, V[:1], q[:1],
                                               lam[None])
                        for C, V, q, lam in zip(traj.base_pose, traj.base_twist, traj.q,
                                                traj.force)])
    fd = ld.forward_dynamics_batch(model, traj.base_pose, traj.base_twist, traj.q, 0,
                                   tau=traj.tau, base_wrench=traj.base_wrench, applied=applied)
    assert_close(fd.base_twist[:, 1], traj.base_acceleration, 1e-9, 1e-9, what="V̇₀")
    assert_close(fd.q[:, 2], traj.joint_acceleration, 1e-9, 1e-9, what="q̈")


# ------------------------------------------------------------- projection --

def _dense_projection(model, cs, C, V, q, qd):
    """``ν − M⁻¹Jᵀ (J M⁻¹ Jᵀ)⁺ J ν`` with the closed-form M and the dense J."""
    M = ld.mass_matrix(model, C, q)
    J = ld.constraint_jacobian(model, cs, C, None, q[None], 0)[0]
    nu = np.concatenate([V, qd]) if model.floating_base else qd
    Minv_Jt = np.linalg.solve(M, J.T)
    return nu - Minv_Jt @ np.linalg.pinv(J @ Minv_Jt, rcond=1e-9, hermitian=True) @ (J @ nu), M


@pytest.mark.parametrize("robot", ["bar", "solo"])
def test_project_state_is_the_kinetic_energy_projection(robot, bar, solo, request):
    """From a state off the constraints (joints moved by a few degrees,
    random velocities): the result satisfies φ = 0 and J ν = 0 to round-off,
    its velocity is the dense M-metric projection at its configuration,
    the kinetic energy does not grow, and projecting again changes nothing."""
    model, cs, state = (bar if robot == "bar" else solo)[:3]
    rng = np.random.default_rng(5)
    n = model.n_joints
    V = rng.normal(size=6) if model.floating_base else None
    off = ld.State(base_pose=state.base_pose, base_twist=V, q=state.q + 0.05 * rng.normal(size=n),
                   qd=rng.normal(size=n))
    anchored = cs.anchored(state.base_pose, state.q)      # Solo: the feet where they stood
    p = ld.project_state(model, anchored, off)
    C = p.base_pose
    assert np.abs(ld.constraint_error(model, anchored, C, p.q)).max() < 1e-14
    nu_ref, M = _dense_projection(model, anchored, C, off.base_twist, p.q, off.qd)
    nu = np.concatenate([p.base_twist, p.qd]) if model.floating_base else p.qd
    J = ld.constraint_jacobian(model, anchored, C, None, p.q[None], 0)[0]
    assert np.abs(J @ nu).max() < 1e-13
    assert_close(nu, nu_ref, 1e-10, 1e-12, what="M-metric projection")
    nu0 = np.concatenate([off.base_twist, off.qd]) if model.floating_base else off.qd
    M0 = ld.mass_matrix(model, off.base_pose, off.q)
    assert nu @ M @ nu <= nu0 @ M0 @ nu0
    again = ld.project_state(model, anchored, p)
    assert_close(again.q, p.q, 0.0, 1e-14, what="q projected twice")
    assert_close(again.qd, p.qd, 0.0, 1e-13, what="q̇ projected twice")


# --------------------------------------------------------- the run itself --

def test_a_run_continued_from_its_last_sample_is_the_same_run(bar):
    """Half a run, then the rest from ``traj.state(-1)`` with
    ``traj.constraints`` (already anchored, so not re-anchored)."""
    model, cs, state = bar
    whole = ld.simulate(model, state, 0.4, dt=2e-3, constraints=cs)
    first = ld.simulate(model, state, 0.2, dt=2e-3, constraints=cs)
    rest = ld.simulate(model, first.state(-1), 0.2, dt=2e-3, constraints=first.constraints,
                       t0=first.time[-1])
    assert_close(rest.q[-1], whole.q[-1], 0.0, 1e-12, what="q at the end")
    assert_close(rest.force[-1], whole.force[-1], 1e-10, 1e-10, what="λ at the end")


def test_world_and_base_reference_and_the_adaptive_step_agree(solo):
    """The same run about the base origin, and with the adaptive step
    (projection: five evaluations a step), against the fixed-step run."""
    model, cs, state, _, sway = solo
    fixed = ld.simulate(model, state, 0.3, dt=1e-3, controller=sway, constraints=cs)
    based = ld.simulate(model, state, 0.3, dt=1e-3, controller=sway, constraints=cs,
                        reference="base")
    assert_close(based.q, fixed.q, 1e-10, 1e-10, what="q about the base")
    assert_close(based.force, fixed.force, 1e-9, 1e-9, what="λ about the base")
    adaptive = ld.simulate(model, state, 0.3, dt=1e-3, controller=sway, constraints=cs,
                           adaptive=True, rtol=1e-10, atol=1e-12)
    assert adaptive.evaluations == 1 + 5 * adaptive.steps + 4 * adaptive.rejected
    assert np.abs(adaptive.velocity_residual).max() < 1e-13
    assert_close(adaptive.q[-1], fixed.q[-1], 0.0, 2e-6, what="adaptive q")   # measured 2.8e-7


def test_a_floating_base_welded_to_the_world_is_the_fixed_base_robot():
    """Solo-12's base held by a 6-D contact at a tilted pose, legs falling
    freely for 0.3 s: the joints move as those of the fixed-base model
    simulated without constraints, and the weld's force is the support
    reaction of the fixed-base inverse dynamics (moved from the world origin
    to the base origin, where the reported moment is taken)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ld.URDFWarning)
        floating = ld.load_urdf(robot_path("solo12"), floating_base=True)
        fixed = ld.load_urdf(robot_path("solo12"), floating_base=False)
    C0 = se3.exp(np.array([0.3, -0.2, 0.1, 0.5, 0.2, 1.0]))
    q0 = np.array([0.0, 0.8, -1.6] * 2 + [0.0, -0.8, 1.6] * 2)
    cs = ld.ConstraintSet(floating, [ld.Contact6D("base_link", name="weld")])
    free = ld.simulate(fixed, ld.State(base_pose=C0, q=q0), 0.3, dt=1e-3)
    for stabilization in ("projection", "baumgarte", None):
        held = ld.simulate(floating, ld.State(base_pose=C0, q=q0), 0.3, dt=1e-3, constraints=cs,
                           stabilization=stabilization)
        assert np.ptp(held.q[:, 0]) > 0.5                  # the legs fall
        assert_close(held.q, free.q, 0.0, 1e-12, what=f"q ({stabilization})")
        assert_close(held.base_pose, np.broadcast_to(C0, held.base_pose.shape), 0.0, 1e-13,
                     what="the welded base")
    for k in (0, 150, 300):
        W = ld.inverse_dynamics(fixed, C0, None, np.vstack([free.q[k], free.joint_acceleration[k]]),
                                0).base_wrench[0]
        lam = held.force_of("weld")[k]
        p = C0[:3, 3]
        assert_close(np.concatenate([lam[:3] + np.cross(p, lam[3:]), lam[3:]]), W, 1e-10, 1e-10,
                     what=f"weld force at sample {k}")


def test_far_from_the_world_origin_the_run_is_the_same(solo):
    """The swaying quadruped 3.6 km from the world origin: the same joint
    motion and foot forces as at the origin, and φ within the resolution of
    coordinates there (an ulp of 3000 m is 4.5e-13 m)."""
    model, cs, state, _, sway = solo
    near = ld.simulate(model, state, 0.3, dt=2e-3, controller=sway, constraints=cs)
    C = state.base_pose.copy()
    C[:3, 3] += [3e3, -2e3, 0.0]
    far = ld.simulate(model, ld.State(base_pose=C, q=state.q), 0.3, dt=2e-3, controller=sway,
                      constraints=cs)
    assert_close(far.q, near.q, 0.0, 1e-9, what="q")       # measured 1.1e-10
    assert_close(far.force, near.force, 0.0, 1e-8, what="λ")   # measured 1.5e-9 of 19 N
    assert np.abs(far.position_residual).max() < 1e-12      # measured 2.3e-13
    assert np.abs(far.velocity_residual).max() < 1e-13


# ---------------------------------------------------------------- failures --

def test_bad_arguments_are_refused_by_name(bar):
    model, cs, state = bar
    run = dict(dt=1e-3, constraints=cs)
    with pytest.raises(TypeError, match="constraints"):
        ld.simulate(model, state, 0.1, **(run | {"constraints": [ld.Contact3D("a_tip")]}))
    with pytest.raises(ValueError, match="constraints: built for another model"):
        ld.simulate(model, state, 0.1, **(run | {"constraints": four_bar()[1]}))
    with pytest.raises(ValueError, match="stabilization"):
        ld.simulate(model, state, 0.1, stabilization="stiff", **run)
    with pytest.raises(TypeError, match="stabilization"):
        ld.simulate(model, state, 0.1, stabilization=3.0, **run)
    with pytest.raises(ValueError, match="stabilization: beta"):
        ld.simulate(model, state, 0.1, stabilization=(1.0, -1.0), **run)
    with pytest.raises(TypeError, match="stabilization: alpha"):
        ld.simulate(model, state, 0.1, stabilization=("1", 1.0), **run)
    with pytest.raises(ValueError, match="stabilization: only a run with constraints"):
        ld.simulate(model, state, 0.1, dt=1e-3, stabilization=None)
    with pytest.raises(ValueError, match="state0: off the constraints, position error φ of "
                                         "'pin\\[0\\]'.*project_state"):
        ld.simulate(model, ld.State(q=state.q + [0.01, 0.0, 0.0]), 0.1, **run)
    with pytest.raises(ValueError, match="state0: off the constraints, velocity residual"):
        ld.simulate(model, ld.State(q=state.q, qd=[1.0, 0.0, 0.0]), 0.1, **run)
    with pytest.raises(TypeError, match="state"):
        ld.project_state(model, cs, state.q)
    plain = ld.simulate(model, state, 0.01, dt=1e-3)
    assert plain.constraints is None and plain.force is None
    with pytest.raises(ValueError, match="no constraints"):
        plain.force_of("pin")
    held = ld.simulate(model, state, 0.01, **run)
    with pytest.raises(ValueError, match="no constraint called 'knee'"):
        held.force_of("knee")
    with pytest.raises(IndexError, match="name"):
        held.force_of(3)
    with pytest.raises(TypeError, match="name"):
        held.force_of(1.5)


def _double_contact(gap):
    """The four-bar's open chain (no loop) with the coupler's tip held
    against the ground plane twice: two identical 1-D rows (rank 1 of 2)
    whose anchors are ``gap`` apart along the normal."""
    model, _ = four_bar()
    q = np.array([0.3, 0.8, 0.0])
    p = ld.frame_pose(model, None, q, "a_tip")[:3, 3]
    n = np.array([0.0, 0.0, 1.0])
    cs = ld.ConstraintSet(model, [ld.Contact1D("a_tip", normal=n, anchor=p, name="z1"),
                                  ld.Contact1D("a_tip", normal=n, anchor=p + gap * n,
                                               name="z2")])
    return model, cs, ld.State(q=q)


def test_a_redundant_set_the_state_leaves_stops_the_run_with_the_time():
    """Baumgarte's β² φ differs between the two rows (their anchors are
    5e-10 m apart, within the initial bound), so the acceleration equations
    disagree once the arm swings: the constrained forward dynamics' refusal
    comes back as a SimulationError with the time and the trajectory; the
    projection cannot meet both anchors and says so."""
    model, cs, state = _double_contact(5e-10)
    with pytest.raises(ld.SimulationError, match="redundant \\(rank 1 of 2 rows\\).*'z2'") as e:
        ld.simulate(model, state, 0.3, dt=1e-3, constraints=cs, stabilization=(0.0, 100.0))
    assert e.value.quantity == "constraints" and 0.0 < e.value.time < 0.3
    assert len(e.value.trajectory) > 10 and f"t = {e.value.time:.9g}" in str(e.value)
    with pytest.raises(ld.SimulationError, match="projection onto φ = 0 did not converge"):
        ld.simulate(model, state, 0.3, dt=1e-3, constraints=cs)
    model, cs, state = _double_contact(0.0)               # coincident: consistent, held
    traj = ld.simulate(model, state, 0.3, dt=1e-3, constraints=cs)
    assert np.abs(traj.position_residual).max() < 1e-13
    assert_close(traj.force[:, 0], traj.force[:, 1], 1e-12, 1e-12, what="minimum-norm split")


# -------------------------------------------------------- interpreted --

_SCRIPT = """
import json, sys
import numpy as np
import liedyn as ld
from tests.test_simulate_contact import four_bar, four_bar_closed
model, cs = four_bar("pin")
state = ld.State(q=four_bar_closed(0.7))
out = {}
for name, stab in (("projection", "projection"), ("baumgarte", "baumgarte"), ("none", None)):
    traj = ld.simulate(model, state, 0.004, dt=1e-3, constraints=cs, stabilization=stab)
    out[name] = np.concatenate([traj.q.ravel(), traj.force.ravel(),
                                traj.velocity_residual.ravel(), traj.position_residual.ravel()])
json.dump({k: v.tolist() for k, v in out.items()}, sys.stdout)
"""


def test_the_interpreted_kernels_agree_with_the_compiled():
    """``NUMBA_DISABLE_JIT=1`` runs the same code as plain Python."""
    runs = [json.loads(run_python(_SCRIPT, NUMBA_DISABLE_JIT=flag).splitlines()[-1])
            for flag in ("1", "0")]
    for k in runs[1]:
        assert_close(np.array(runs[0][k]), np.array(runs[1][k]), 1e-10, 1e-12, what=k)
