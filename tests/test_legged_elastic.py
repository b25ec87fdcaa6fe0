"""Tests of experiments.legged_elastic: Solo-12 standing on four point feet
with series-elastic joints. The reference keeps the feet still (foot
position jets of liedyn.frame_kinematics, the constraint rates of
liedyn.constraint_jacobian), its base twist jets and its order-2 torque and
force jets equal central differences in time, the stance carries the
weight, the exact law's input makes the plant (constrained forward dynamics
of order 2, another algorithm than the law's) move as commanded, the
gains of the law without τ̈ place the designed poles, and on a short
closed-loop run the exact law tracks to the integrator's error (below
1e-9) while the others err by millimetres."""

import numpy as np
import pytest

import liedyn as ld
from liedyn import se3
from tests.helpers import assert_close

from experiments import legged_elastic as le

K, B = le.STIFFNESS, le.MOTOR_INERTIA
TIMES = (0.3, 0.9, 1.3)
HORIZON = 0.24                  # s: the closed-loop runs


@pytest.fixture(scope="module")
def robot():
    return le.Robot()


@pytest.fixture(scope="module")
def reference(robot):
    return le.Reference(robot)


# ------------------------------------------------------------ reference --

@pytest.mark.parametrize("t", TIMES)
def test_reference_joint_jets_keep_the_feet_still(robot, reference, t):
    s = reference(t)
    for c, foot in enumerate(le.FEET):        # p^(0..4) from V^(0..3), q^(0..4)
        fk = ld.frame_kinematics(robot.model, s.C, s.V, s.q, 3, foot)
        assert_close(fk.position[0], robot.anchors[c], rtol=0, atol=1e-13,
                     what=f"{foot} position")
        for k in range(1, 5):
            assert_close(fk.position[k], np.zeros(3), rtol=0, atol=1e-11 * 10 ** (k - 1),
                         what=f"{foot} position derivative {k}")
    J = ld.constraint_jacobian(robot.model, robot.contacts, s.C, s.V, s.q, 3)
    nu = np.hstack([s.V, s.q[1:]])
    for k in range(4):
        rate = sum(le._binom(4)[k, a] * J[a] @ nu[k - a] for a in range(k + 1))
        assert_close(rate, np.zeros(12), rtol=0, atol=1e-11 * 10 ** k, what=f"(J nu)^({k})")
    assert_close(robot.jacobian(robot.kinematics(s.C, s.V[:1], s.q[:2], 0)), J[0], rtol=0,
                 atol=1e-15, what="the laws' contact Jacobian")


@pytest.mark.parametrize("t", TIMES)
def test_base_twist_jets_equal_central_differences(robot, t):
    motion = le.BaseMotion(robot.stand_pose)
    C, V = motion(t, 4)
    h = 1e-4
    (Cp, Vp), (Cm, Vm) = motion(t + h, 4), motion(t - h, 4)
    assert_close(se3.vee((Cp - Cm) / (2 * h) @ se3.inv(C)), V[0], rtol=0, atol=1e-6,
                 what="V from the pose")
    for k in range(1, 4):
        assert_close((Vp[k - 1] - Vm[k - 1]) / (2 * h), V[k], rtol=0, atol=1e-5 * 10 ** k,
                     what=f"V^({k})")


def test_order_two_jets_equal_central_differences_of_order_zero_calls(robot):
    rows = le.fd_check(robot, t=le.FD_TIME, steps=(4e-3, 2e-3, 1e-3))
    by = {(r["quantity"], r["h"]): r for r in rows}
    for q in ("tau'", "tau''", "lambda'", "lambda''"):
        assert by[q, 1e-3]["error"] < 1e-4, by[q, 1e-3]
        assert by[q, 1e-3]["size"] > 0.5, by[q, 1e-3]        # a jet that moves
        for h in (2e-3, 1e-3):                                 # O(h²): ×4 per halving
            assert 3.6 < by[q, h]["ratio"] < 4.4, by[q, h]


def test_static_stance_carries_the_weight(robot, reference):
    Z = np.zeros((3, 6))
    Q = np.zeros((3, 12))
    Q[0] = robot.stand_q
    inv = ld.constrained_inverse_dynamics(robot.model, robot.contacts, robot.stand_pose, Z, Q, 0)
    f = inv.force[0].reshape(4, 3)
    assert_close(f[:, 2].sum(), robot.weight, rtol=1e-13, what="total normal force")
    assert_close(f[:, :2], np.zeros((4, 2)), rtol=0, atol=1e-12, what="tangential forces")
    # the plant at t = 0 (the reference starts at rest): constrained forward dynamics
    C0, x0 = le.initial_state(robot, reference, "on the reference")
    V, q, qd, th, _ = le._split(x0, 12)
    assert_close(V, np.zeros(6), rtol=0, atol=0, what="base twist at t = 0")
    fd = ld.constrained_forward_dynamics(robot.model, robot.anchored, C0, V[None],
                                         np.vstack([q, qd]), 0, tau=(K * (th - q))[None],
                                         base_wrench=np.zeros((1, 6)), baumgarte=le.BAUMGARTE)
    assert_close(fd.force[0].reshape(4, 3)[:, 2].sum(), robot.weight, rtol=1e-12,
                 what="the plant's total normal force")
    assert_close(fd.base_twist[1], np.zeros(6), rtol=0, atol=1e-12, what="base acceleration")


def test_cone_margin_is_mu_times_normal_minus_tangential():
    f = np.array([[[1.0, 0.0, 2.0], [0.0, 0.0, 1.0], [0.3, 0.4, 0.5], [0.0, 1.0, -1.0]]])
    margin, normal = le.cone_margin(f.reshape(1, 12), mu=0.7)
    assert_close(margin[0], [0.4, 0.7, -0.15, -1.7], rtol=1e-15, atol=1e-15, what="margin")
    assert_close(normal[0], [2.0, 1.0, 0.5, -1.0], rtol=0, what="normal")


# ----------------------------------------------------------------- laws --

def test_exact_law_on_the_reference_is_the_elastic_feedforward(robot, reference):
    law = le.ExactElastic(robot, reference)
    for t in TIMES:
        s = reference(t)
        th, thd = s.q[0] + s.tau[0] / K, s.q[1] + s.tau[1] / K
        u, d = law.step(t, s.C, s.V[0], s.q[0], s.q[1], th, thd)
        assert_close(u, B * (s.q[2] + s.tau[2] / K) + s.tau[0], rtol=1e-9, atol=1e-12,
                     what=f"u at t = {t}")
        assert_close(d["force"], s.force, rtol=1e-9, atol=1e-10, what="force jets")


def _off_reference_state(robot, reference, t, seed):
    """A state off the reference that keeps the feet: base moved and
    turning faster, legs re-solved, springs and motors off their loads."""
    rng = np.random.default_rng(seed)
    s = reference(t)
    C = se3.exp(0.02 * rng.normal(size=6)) @ s.C
    q = robot.stance(C, s.q[0])
    V = s.V[0] + 0.05 * rng.normal(size=6)
    qd = robot.joint_jets(C, V[None], q, 2)[1]
    th = q + s.tau[0] / K + 0.01 * rng.normal(size=12)
    thd = qd + s.tau[1] / K + 0.1 * rng.normal(size=12)
    return C, V, q, qd, th, thd


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_law_makes_the_plant_move_as_commanded(robot, reference, seed):
    """The input u, applied to the plant (θ̈ = B⁻¹ (u − τ), τ̈ = K (θ̈ − q̈)),
    gives through constrained forward dynamics of order 2 the commanded
    base snap V₀^(3) and internal-force acceleration z̈."""
    law = le.ExactElastic(robot, reference)
    t = 0.9
    C, V, q, qd, th, thd = _off_reference_state(robot, reference, t, seed)
    u, d = law.step(t, C, V, q, qd, th, thd)
    tau = np.vstack([K * (th - q), K * (thd - qd)])
    Wz = np.zeros((3, 6))
    fd1 = ld.constrained_forward_dynamics(robot.model, robot.contacts, C, V[None],
                                          np.vstack([q, qd]), 1, tau=tau, base_wrench=Wz[:2])
    tau2 = K * ((u - tau[0]) / B - fd1.q[2])
    fd2 = ld.constrained_forward_dynamics(robot.model, robot.contacts, C, V[None],
                                          np.vstack([q, qd]), 2, tau=np.vstack([tau, tau2]),
                                          base_wrench=Wz)
    assert_close(fd2.base_twist[3], d["base_twist"][3], rtol=1e-8, atol=1e-8,
                 what="V0''' commanded")
    assert_close(robot.internal.T @ fd2.force[2], d["internal"], rtol=1e-8, atol=1e-8,
                 what="z'' commanded")
    assert_close(fd2.force[:2], d["force"][:2], rtol=1e-10, atol=1e-10, what="state's forces")
    # the plant's base error jets (x, V_E, V_E', V_E'', V_E''') close the designed chain
    s = reference(t)
    e = ld.control.base_error(C, fd2.base_twist[:4], s.C, s.V[:4])
    assert_close(e[4], -law.a @ e[:4], rtol=0, atol=1e-7, what="designed chain")
    assert np.max(np.abs(e[0])) > 1e-3                         # the state is off the reference


def test_law_without_tau_dd_places_the_poles_of_the_exact_law(robot, reference):
    law = le.TorqueRateElastic(robot, reference)
    r, a, c = law.rate, law.a, law.c
    base = np.roots([1.0, r, r * a[2], r * a[1], r * a[0]])
    force = np.roots([1.0, r, r * c[0]])
    assert_close(np.sort(base.real), np.sort(le.POLES), rtol=1e-9, what="base poles")
    assert_close(np.abs(base.imag), np.zeros(4), rtol=0, atol=1e-6, what="base poles")
    assert_close(np.sort(force.real), np.sort(le.FORCE_POLES), rtol=1e-12, what="force poles")
    with pytest.raises(ValueError, match="force_poles: their sum"):
        le.TorqueRateElastic(robot, reference, force_poles=(-1.0, -2.0))


# ------------------------------------------------------------ closed loop --

@pytest.fixture(scope="module")
def runs(robot, reference):
    C0, x0 = le.initial_state(robot, reference, "on the reference")
    return {Law.name: le.simulate(robot, Law(robot, reference), C0, x0, HORIZON, le.QUICK["dt"])
            for Law in le.LAWS}


@pytest.mark.slow
def test_exact_law_tracks_to_the_integrators_error_and_the_others_do_not(runs, reference):
    err = {name: le.base_errors(run, reference) for name, run in runs.items()}
    pos, rot = err[le.ExactElastic.name]
    assert pos.max() < 1e-9 and rot.max() < 1e-9, (pos.max(), rot.max())
    for other in (le.TorqueRateElastic.name, le.RigidComputedTorque.name):
        p, r = err[other]
        assert p.max() > 1e-4 and r.max() > 1e-4, (other, p.max(), r.max())
    for name, run in runs.items():
        assert run.diverged_at is None, name
        assert len(run.time) == round(HORIZON / le.QUICK["dt"]) + 1
        assert run.drift.max() < 1e-9, (name, run.drift.max())     # the feet stay put


@pytest.mark.slow
def test_contact_forces_stay_in_the_cone_and_balance_the_stance(runs, robot):
    for name, run in runs.items():
        margin, normal = le.cone_margin(run.force)
        assert margin.min() > 1.0, (name, margin.min())
        assert_close(normal[0].sum(), robot.weight, rtol=1e-12, what=f"{name}: stance at t = 0")
