"""Inputs against their limits in a simulation (SPEC §10.3) and the
diagnosis of a diverged run (SPEC §10.4).

The saturated runs are compared with runs whose controller or plant clips
by hand (another route to the same inputs); the reported first time, first
and worst values with a torque whose time course is known in closed form;
the diagnosed mode with a damped joint's ``λ = −b/I`` and an inverted
pendulum's ``λ = √(m g l cos q / I)``, and the stable step with the real
root of RK4's ``R(−x) = 1``."""

import warnings

import numpy as np
import pytest

import liedyn
from liedyn import (InputLimits, InputLimitWarning, ModelBuilder, Revolute, SimulationError,
                    State, se3, simulate)


def _joint(effort=np.inf, damping=0.0, gravity=(0.0, 0.0, 0.0), izz=2e-3, mass=0.5,
           offset=0.0):
    """One link on a fixed base turning about z (the world's vertical for
    the default zero gravity), its centre of mass ``offset`` along x:
    axial inertia ``izz + mass offset²``."""
    b = ModelBuilder(floating_base=False, gravity=gravity)
    b.add_body("support", None, None, np.eye(4),
               se3.spatial_inertia(1.0, (0, 0, 0), np.diag([1e-2, 1e-2, 1e-2])))
    b.add_body("link", "support", Revolute(axis=(0, 0, 1), effort=effort, damping=damping),
               np.eye(4), se3.spatial_inertia(mass, (offset, 0, 0), np.diag([1e-3, 1e-3, izz])))
    return b.build()


def _two_joints(effort):
    """Two links in a chain, both about z, zero gravity."""
    b = ModelBuilder(floating_base=False, gravity=(0, 0, 0))
    b.add_body("support", None, None, np.eye(4),
               se3.spatial_inertia(1.0, (0, 0, 0), np.diag([1e-2, 1e-2, 1e-2])))
    T = np.eye(4)
    T[0, 3] = 0.3
    I = se3.spatial_inertia(0.4, (0.15, 0, 0), np.diag([1e-3, 4e-3, 4e-3]))
    b.add_body("upper", "support", Revolute(axis=(0, 0, 1), effort=effort[0]), np.eye(4), I)
    b.add_body("lower", "upper", Revolute(axis=(0, 0, 1), effort=effort[1]), T, I)
    return b.build()


# ---------------------------------------------------- joint saturation --

def _pd(t, state):
    """A stiff PD law towards a step of the joints: its torques start far
    beyond the limits and come back inside."""
    goal = np.array([1.0, -0.8])
    return liedyn.Inputs(tau=60.0 * (goal - state.q) - 4.0 * state.qd)


def test_a_saturated_run_equals_a_run_whose_controller_clips_by_hand():
    limit = np.array([2.0, 1.5])
    model = _two_joints(limit)
    s0 = State(q=np.zeros(2), qd=np.zeros(2))

    def clipped(t, state):
        return liedyn.Inputs(tau=np.clip(_pd(t, state).tau, -limit, limit))

    with warnings.catch_warnings():
        warnings.simplefilter("error")             # a saturated run does not warn
        sat = simulate(model, s0, 0.6, dt=1e-3, controller=_pd,
                       limits=InputLimits(saturate=True))
    ref = simulate(model, s0, 0.6, dt=1e-3, controller=clipped)
    # the same clipped torques reach the same compiled dynamics: equal bit for bit
    np.testing.assert_array_equal(sat.q, ref.q)
    np.testing.assert_array_equal(sat.tau, ref.tau)
    assert np.max(np.abs(sat.tau[:, 0]) / limit) == 1.0
    assert [v.input for v in sat.limits] == ["joint 'upper' torque", "joint 'lower' torque"]
    for v, j in zip(sat.limits, range(2)):
        # at t = 0 the law asks 60 * goal, beyond the limit: the first violation
        assert v.first_time == 0.0
        assert v.first_value == pytest.approx(60.0 * (1.0, -0.8)[j], rel=1e-15)
        assert v.limit == (limit[j] if v.worst > 0 else -limit[j])
        assert abs(v.worst) >= abs(v.first_value)


def test_held_saturation_equals_a_held_controller_that_clips_by_hand():
    """The compiled held path: clipped once per sample, held between."""
    limit = np.array([2.0, 1.5])
    model = _two_joints(limit)
    s0 = State(q=np.zeros(2), qd=np.zeros(2))

    def clipped(t, state):
        return liedyn.Inputs(tau=np.clip(_pd(t, state).tau, -limit, limit))

    sat = simulate(model, s0, 0.5, dt=1e-3, controller=_pd, control_rate=200,
                   limits=InputLimits(saturate=True))
    ref = simulate(model, s0, 0.5, dt=1e-3, controller=clipped, control_rate=200)
    np.testing.assert_array_equal(sat.q, ref.q)
    assert len(sat.limits) == 2


# ---------------------------------------------- first time, worst value --

@pytest.mark.parametrize("control_rate", [None, 100.0])
def test_first_time_and_worst_value_of_a_ramp_against_the_closed_form(control_rate):
    """Zero gravity, one joint of axial inertia ``I``, tracking
    ``q_d = α t³/6`` from rest on it with feed-forward ``I q̈_d`` plus a PD
    term (poles −20, −20): the run stays on the reference, so
    ``τ(t) = I α t`` and crosses ``τ_max`` at ``t* = τ_max/(I α)``. At every
    stage the first stage time past ``t*`` is within half a step of it.
    Held at 100 Hz (the feed-forward alone, a function of time), the first
    sample instant past it. The worst is ``I α T`` at the end ``T``."""
    I, alpha, tau_max, T, dt = 2e-3, 60.0, 0.05, 0.8, 1e-3
    model = _joint(effort=tau_max, izz=I)
    t_star = tau_max / (I * alpha)                                   # 0.41667 s

    def law(t, state):
        e, ed = state.q[0] - alpha * t**3 / 6, state.qd[0] - alpha * t**2 / 2
        return liedyn.Inputs(tau=[I * alpha * t - 400.0 * I * e - 40.0 * I * ed])

    def ramp(t, state):
        return liedyn.Inputs(tau=[I * alpha * t])

    with pytest.warns(InputLimitWarning, match=r"joint 'link' torque first at t = 0\.4[12]"):
        traj = simulate(model, State(q=[0.0], qd=[0.0]), T, dt=dt,
                        controller=law if control_rate is None else ramp,
                        control_rate=control_rate, limits=InputLimits())
    (v,) = traj.limits
    assert v.input == "joint 'link' torque" and v.limit == tau_max
    if control_rate is None:
        # stage times are multiples of dt/2. The steps land on the reference
        # (RK4 is exact for a cubic), but the inner stages' states are
        # predictions off it by |δq̇| ≤ α h²/8, |δq| ≤ α t h²/8: the PD term
        # adds at most I α h² (40/8 + 400 t/8) to the torque asked
        grid = np.ceil(t_star / (dt / 2) * (1 + 1e-12)) * dt / 2
        pd = I * alpha * dt**2 * (5.0 + 50.0 * T)
        assert v.first_time == pytest.approx(grid, abs=1e-12)
        assert v.first_value == pytest.approx(I * alpha * grid, abs=pd)
        assert v.worst_time == pytest.approx(T, abs=1e-12)
        assert v.worst == pytest.approx(I * alpha * T, abs=pd)
    else:
        # held: the value of the first sample instant k/100 with I α k/100 > τ_max
        k = np.floor(t_star * control_rate) + 1
        assert v.first_time == pytest.approx(k / control_rate, abs=1e-12)
        assert v.first_value == pytest.approx(I * alpha * k / control_rate, rel=1e-12)
        assert v.worst_time == pytest.approx(T, abs=1e-12)
        assert v.worst == pytest.approx(I * alpha * T, rel=1e-12)


def test_no_violation_no_warning_and_an_empty_report():
    model = _joint(effort=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        traj = simulate(model, State(q=[0.0], qd=[0.0]), 0.1, dt=1e-3,
                        controller=lambda t, s: liedyn.Inputs(tau=[0.5 * np.sin(10 * t)]),
                        limits=InputLimits())
    assert traj.limits == ()
    assert simulate(model, State(q=[0.0], qd=[0.0]), 0.01, dt=1e-3).limits is None


# ---------------------------------------------------- rotor saturation --

def _quadrotor_arm():
    """A floating base with one arm joint, its four rotors in the X layout."""
    b = ModelBuilder(floating_base=True, gravity=(0, 0, -9.81))
    b.add_body("base", None, None, np.eye(4),
               se3.spatial_inertia(1.2, (0, 0, 0), np.diag([0.02, 0.02, 0.04])))
    T = np.eye(4)
    T[2, 3] = -0.05
    b.add_body("arm", "base", Revolute(axis=(0, 1, 0)), T,
               se3.spatial_inertia(0.2, (0, 0, -0.1), np.diag([1e-3, 1e-3, 2e-4])))
    model = b.build()
    arm, kappa = 0.2, 0.016
    rotors = [liedyn.control.Rotor((arm * np.cos(a), arm * np.sin(a), 0.0), (0, 0, 1), s, kappa)
              for a, s in zip(np.pi / 4 + np.arange(4) * np.pi / 2, (1, -1, 1, -1))]
    return model, liedyn.control.rotor_allocation(rotors)


@pytest.mark.parametrize("reference", ["world", "base"])
def test_rotor_saturation_equals_a_plant_that_clips_its_thrusts(reference):
    """The controller asks rotor thrusts that leave ``[0, f_max]`` (one rotor
    pushed to pull); a plant that clips them itself and applies
    ``Ad_C^{−T} A f`` is the other route to the same run."""
    model, A = _quadrotor_arm()
    f_max = 4.5

    def command(t, state):
        return np.array([5.5, 3.0, 4.0, -0.5]) + np.array([0.0, 2.0, 0.0, 1.0]) * np.sin(8 * t)

    def wrench(C, f):
        Wb = A @ f
        R, p = C[:3, :3], C[:3, 3]
        m, F = R @ Wb[:3], R @ Wb[3:]
        return np.concatenate([m + (0.0 if reference == "base" else np.cross(p, F)), F])

    def plant(t, state, f):
        return liedyn.Inputs(tau=[0.0], base_wrench=wrench(state.base_pose, f))

    def clipping_plant(t, state, f):
        return plant(t, state, np.clip(f, 0.0, f_max))

    C0 = np.eye(4)
    C0[:3, 3] = (0.3, -0.2, 1.0)
    s0 = State(base_pose=C0, base_twist=np.zeros(6), q=[0.2], qd=[0.0])
    kw = dict(dt=1e-3, controller=command, plant=plant, reference=reference)
    sat = simulate(model, s0, 0.7, limits=InputLimits(allocation=A, thrust_max=f_max,
                                                      saturate=True), **kw)
    kw["plant"] = clipping_plant
    ref = simulate(model, s0, 0.7, **kw)
    # f = A⁺ W^B recovers the asked thrusts to round-off of A's condition
    scale = np.max(np.abs(ref.base_pose))
    np.testing.assert_allclose(sat.base_pose, ref.base_pose, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(sat.q, ref.q, rtol=0, atol=1e-10)
    names = {v.input: v for v in sat.limits}
    assert set(names) == {"rotor 0 thrust", "rotor 1 thrust", "rotor 3 thrust"}
    assert names["rotor 0 thrust"].first_time == 0.0
    assert names["rotor 0 thrust"].first_value == pytest.approx(5.5, rel=1e-12)
    assert names["rotor 0 thrust"].limit == f_max
    # the least of −0.5 + sin 8t, at 8t = 3π/2; stages every 0.5 ms miss it by
    # at most ½ 64 (2.5e-4)² = 2e-6
    assert names["rotor 3 thrust"].worst == pytest.approx(-0.5 - 1.0, abs=1e-5)
    assert names["rotor 3 thrust"].worst_time == pytest.approx(3 * np.pi / 16, abs=2.5e-4)
    assert names["rotor 3 thrust"].limit == 0.0
    # rotor 1 crosses 4.5 where 3 + 2 sin(8t) = 4.5
    t1 = np.arcsin(0.75) / 8
    assert t1 <= names["rotor 1 thrust"].first_time <= t1 + 0.5e-3 + 1e-12


# ------------------------------------------------------------ bad input --

def test_bad_limits_are_refused_by_name():
    model = _joint()
    s0 = State(q=[0.0], qd=[0.0])
    with pytest.raises(ValueError, match="thrust_max"):
        InputLimits(allocation=np.ones((6, 4)), thrust_max=-1.0)
    with pytest.raises(ValueError, match="thrust_max"):
        InputLimits(allocation=np.ones((6, 4)), thrust_max=[1.0, 2.0])
    with pytest.raises(ValueError, match="allocation, thrust_max"):
        InputLimits(thrust_max=3.0)
    with pytest.raises(ValueError, match="allocation"):
        InputLimits(allocation=np.ones((4, 4)), thrust_max=3.0)
    with pytest.raises(ValueError, match="effort"):
        InputLimits(effort=0.0)
    with pytest.raises(TypeError, match="saturate"):
        InputLimits(saturate=1)
    with pytest.raises(ValueError, match="saturate=True.*joint_max_effort"):
        simulate(model, s0, 0.01, dt=1e-3, limits=InputLimits(saturate=True))
    with pytest.raises(ValueError, match="limits.allocation.*fixed"):
        simulate(model, s0, 0.01, dt=1e-3,
                 limits=InputLimits(allocation=np.ones((6, 4)), thrust_max=3.0))
    with pytest.raises(ValueError, match="limits.effort"):
        simulate(model, s0, 0.01, dt=1e-3, limits=InputLimits(effort=[1.0, 2.0]))
    with pytest.raises(TypeError, match="limits"):
        simulate(model, s0, 0.01, dt=1e-3, limits=True)
    with pytest.raises(ValueError, match="limits"):
        simulate(model, s0, 0.01, dt=1e-3, joint_stops=True, limits=InputLimits())


# ------------------------------------------------------------ diagnosis --

def _rk4_real_boundary():
    """The positive root of ``R(−x) = 1``: ``x (x³/24 − x²/6 + x/2 − 1) = 0``."""
    roots = np.roots([1 / 24, -1 / 6, 1 / 2, -1.0])
    return float(roots[np.abs(roots.imag) < 1e-9].real.min())


def test_a_damped_joint_diverging_names_its_mode_and_the_stable_step():
    """Zero gravity: ``I q̈ = −b q̇``, one mode ``λ = −b/I`` (and ``0``).
    At ``dt = 1 ms``, ``hλ = −10`` and RK4 multiplies it by ``R(−10) ≈ 291``
    per step."""
    I, b = 1e-3, 10.0
    model = _joint(damping=b, izz=I)
    with pytest.raises(SimulationError, match="divergence bound") as info:
        simulate(model, State(q=[0.0], qd=[1.0]), 0.1, dt=1e-3)
    d = info.value.diagnosis
    assert d is not None
    # G is linear in q̇: central differences are exact but for round-off,
    # eps |G| / h relative to |λ| at h = 1e-6 max(1, |q̇|)
    assert d.eigenvalue == pytest.approx(-b / I, rel=1e-7)
    assert d.entry == "qd[0] (joint 'link')"
    assert d.growing is None
    assert d.stable_step == pytest.approx(_rk4_real_boundary() * I / b, rel=1e-9)
    msg = str(info.value)
    assert "-1e+04 s⁻¹" in msg and "joint damping of 'link'" in msg
    assert f"RK4 needs dt < {d.stable_step:.2g} s" in msg and "dt = 0.001" in msg
    # R(−10) ≈ 291: only the first sample is within ten times the start's size
    assert d.time == 0.0


def test_the_offset_of_the_centre_of_mass_enters_the_inertia():
    """``I = I_zz + m x²``: the diagnosed mode is ``−b/I`` with that ``I``."""
    izz, m, x, b = 1e-3, 0.5, 0.04, 8.0
    model = _joint(damping=b, izz=izz, mass=m, offset=x)
    with pytest.raises(SimulationError) as info:
        simulate(model, State(q=[0.0], qd=[1.0]), 0.1, dt=2e-3)
    assert info.value.diagnosis.eigenvalue == pytest.approx(-b / (izz + m * x**2), rel=1e-7)


def test_an_inverted_pendulum_is_diagnosed_as_growing_whatever_the_step():
    """Upright under gravity: ``I q̈ = m g l sin q``, the modes
    ``±√(m g l cos q / I)`` at the last sample's ``q``; a smaller step does
    not help, and the error says so."""
    izz, m, l, g = 1e-3, 0.5, 0.1, 9.81
    b = ModelBuilder(floating_base=False, gravity=(0, 0, -g))
    b.add_body("support", None, None, np.eye(4),
               se3.spatial_inertia(1.0, (0, 0, 0), np.diag([1e-2, 1e-2, 1e-2])))
    b.add_body("pole", "support", Revolute(axis=(0, 1, 0)), np.eye(4),
               se3.spatial_inertia(m, (0, 0, l), np.diag([izz, izz, izz])))
    model = b.build()
    with pytest.raises(SimulationError, match="no step makes stable") as info:
        simulate(model, State(q=[1e-3], qd=[0.0]), 5.0, dt=1e-3, divergence=0.5)
    d = info.value.diagnosis
    traj = info.value.trajectory
    assert d.time == traj.time[-1]                   # |q|, |q̇| < 0.5 up to the end
    q = traj.q[-1, 0, 0]
    rate = np.sqrt(m * g * l * np.cos(q) / (izz + m * l**2))
    assert d.growing == pytest.approx(rate, rel=1e-6)
    assert abs(d.eigenvalue) == pytest.approx(rate, rel=1e-6)


def test_the_stability_radius_of_rk4():
    """Along the negative real axis the real root of ``R(−x) = 1``; along
    the imaginary axis ``2√2`` (``|R(iy)|² = 1 − y⁶/72 + y⁸/576``); on the
    boundary ``|R| = 1`` in every direction."""
    from liedyn.simulation.diagnosis import rk4_stability_radius
    assert rk4_stability_radius(np.pi)[0] == pytest.approx(_rk4_real_boundary(), rel=1e-12)
    assert rk4_stability_radius(np.pi / 2)[0] == pytest.approx(2 * np.sqrt(2), rel=1e-12)
    theta = np.linspace(np.pi / 2, np.pi, 7)
    z = rk4_stability_radius(theta) * np.exp(1j * theta)
    R = 1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24
    np.testing.assert_allclose(np.abs(R), 1.0, atol=1e-9)


def test_the_hextilt_arm_with_its_urdf_damping_held_at_500_hz():
    """``hextilt_flying_arm_5`` (example-robot-data) loaded with its joint
    damping ``b = 0.1`` on 20–60 g links, :class:`RotorLagLaw` held at
    500 Hz with ``dt = 1 ms`` (the rotors of the paper's tilted hexarotor,
    :func:`models.aerial_manipulator.allocation_matrix`, an assumption: the
    URDF has none): the run diverges within a few samples. The diagnosed
    mode against Pinocchio's mass matrix: the largest eigenvalue of
    ``−M⁻¹ D`` (``D`` the joints' damping), which the velocity-free part of
    the Jacobian is; the two differ by the velocity products at the sample,
    entries of the size of ``|V₀|, |q̇| ≲ 10`` 1/s, 1e-3 of ``b/I ≈ 9e3``."""
    from importlib.metadata import PackageNotFoundError, distribution
    pin = pytest.importorskip("pinocchio")
    from models.aerial_manipulator import allocation_matrix
    try:
        erd = distribution("example-robot-data")
    except PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    path = str(erd.locate_file(next(f for f in erd.files
                                    if f.name == "hextilt_flying_arm_5.urdf")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", liedyn.URDFWarning)
        model = liedyn.load_urdf(path, floating_base=True)
    n = model.n_joints
    C = np.eye(4)
    C[2, 3] = 1.0

    def target(t):
        q = np.zeros((4, n))
        q[0, :4] = 0.3 * np.array([np.sin(t), np.cos(t), -np.sin(t), -np.cos(t)])
        return liedyn.control.Target(q=q, base_pose=C, base_twist=np.zeros((3, 6)))

    law = liedyn.control.RotorLagLaw(model, (-4.0, -5.0, -6.0), target,
                                     allocation=allocation_matrix(), time_constant=0.05)
    with pytest.raises(SimulationError, match="divergence bound") as info:
        simulate(model, law.state_on(target(0.0)), 0.05, dt=1e-3, controller=law,
                 plant=law.plant, control_rate=500)
    d = info.value.diagnosis
    assert info.value.time < 0.05
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    pd = pm.createData()
    traj = info.value.trajectory
    k = int(np.flatnonzero(traj.time == d.time)[0])
    qp = pin.neutral(pm)
    for j, name in enumerate(model.joint_names):
        qp[pm.joints[pm.getJointId(name)].idx_q] = traj.q[k, 0, j]
    M = pin.crba(pm, pd, qp)
    M = np.triu(M) + np.triu(M, 1).T
    lam = np.linalg.eigvals(-np.linalg.solve(M, np.diag(pm.damping)))
    fastest = lam[np.argmax(np.abs(lam))].real
    assert fastest < -5e3                                   # b/I of the lightest link
    assert d.eigenvalue.real == pytest.approx(fastest, rel=2e-3)
    assert d.entry.startswith("qd[") and "joint damping of" in str(info.value)
    assert d.stable_step == pytest.approx(_rk4_real_boundary() / abs(fastest), rel=2e-3)
    assert f"RK4 needs dt < {d.stable_step:.2g} s" in str(info.value)


@pytest.mark.parametrize("reference", ["world", "base"])
def test_a_damped_joint_on_a_free_base_is_diagnosed_with_the_reduced_inertia(reference):
    """Zero gravity, a floating base and one link turning about their common
    z axis, both centres of mass on it: the base's z rotation and the joint
    form ``M = [[I_b + I_l, I_l], [I_l, I_l]]``, ``D = diag(0, b)``, whose
    modes are 0 and ``−b (I_b + I_l)/(I_b I_l)`` (the reduced inertia)."""
    Ib, Il, b = 4e-3, 1e-3, 8.0
    mb = ModelBuilder(floating_base=True, gravity=(0, 0, 0))
    mb.add_body("base", None, None, np.eye(4),
                se3.spatial_inertia(1.0, (0, 0, 0), np.diag([1e-2, 1e-2, Ib])))
    mb.add_body("link", "base", Revolute(axis=(0, 0, 1), damping=b), np.eye(4),
                se3.spatial_inertia(0.3, (0, 0, 0.1), np.diag([2e-3, 2e-3, Il])))
    model = mb.build()
    C0 = np.eye(4)
    C0[:3, 3] = (0.5, -0.3, 1.0)
    with pytest.raises(SimulationError, match="divergence bound") as info:
        simulate(model, State(base_pose=C0, base_twist=np.zeros(6), q=[0.0], qd=[1.0]), 0.1,
                 dt=1e-3, reference=reference)
    d = info.value.diagnosis
    assert d.eigenvalue == pytest.approx(-b * (Ib + Il) / (Ib * Il), rel=1e-6)
    assert d.stable_step == pytest.approx(_rk4_real_boundary() * Ib * Il / (b * (Ib + Il)),
                                          rel=1e-6)
