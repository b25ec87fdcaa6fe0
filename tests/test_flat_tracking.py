"""Tests of the tracking law of a parallel-thrust base carrying a tree
(SPEC §17.6): on the target its input is the flat map's feed-forward, and
from a perturbed start the errors are the solutions of the designed linear
error equations."""

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.linalg import expm

import liedyn as ld
from liedyn import control
from models.trees import random_tree
from tests.helpers import assert_close
from tests.test_flatness import FigureEight, _borinot, _tree

POLES, YAW_POLES, JOINT_POLES = (-3.0, -4.0, -5.0, -6.0), (-4.0, -5.0), (-5.0, -6.0)


@pytest.fixture(scope="module", params=["borinot", "tree"])
def robot(request):
    return _borinot() if request.param == "borinot" else _tree()


@pytest.fixture(scope="module")
def borinot_law():
    return _law(_borinot())


def _law(model):
    out = FigureEight(model.n_joints)
    return control.FlatTrackingLaw(model, POLES, lambda t: out(t, 1), yaw_poles=YAW_POLES,
                                   joint_poles=JOINT_POLES), out


def test_on_the_target_the_input_is_the_flat_feed_forward(robot):
    """At the target's state the errors vanish and ``(f̈, M^B, τ)`` equal the
    flat map's ``f^(2)``, ``M^B(0)``, ``τ(0)`` (computed by its own route:
    Taylor arithmetic of the flat outputs and inverse dynamics of order 2)."""
    law, out = _law(robot)
    scale = robot.body_mass.sum() * 9.81
    for t in (0.0, 0.7, 1.6):
        step = law.step(t, law.state_on(t))
        fm = control.flat_map(robot, *out(t, 2), 2)
        assert np.abs(step.com_error).max() < 1e-12 * 100
        assert_close(step.input[0], fm.thrust[2], 0.0, 1e-10 * scale, what="f̈")
        assert_close(step.input[1:4], fm.body_moment[0], 0.0, 1e-11 * scale, what="M^B")
        assert_close(step.input[4:], fm.tau[0], 0.0, 1e-11 * scale, what="τ")


def _companion(poles):
    a = control.gains_from_poles(poles)
    F = np.diag(np.ones(len(a) - 1), 1)
    F[-1] = -a
    return F


def test_errors_from_a_perturbed_start_follow_the_designed_dynamics(robot):
    """Base origin moved by δp and joints by δq (same velocities, thrust and
    attitude): the initial error jets are ``x_G: (Δx_G, Δẋ_G, 0, 0)`` (read
    from :func:`liedyn.centroidal`), ``q: (δq, 0)``, ``ψ: (0, 0)``; simulated
    with the law at every stage, the errors are ``exp(F t) e(0)`` of each
    output's companion matrix (RK4 at dt = 2 ms: relative error ~1e-7)."""
    law, out = _law(robot)
    rng = np.random.default_rng(7)
    on = law.state_on(0.0)
    dq = 0.05 * rng.normal(size=robot.n_joints)
    start = law.state_on(0.0, base_position=on.base_pose[:3, 3] + [0.05, -0.03, 0.02],
                         q=on.q + dq)
    xd = out(0.0, 0)[0]

    # com^(0..1) reads V₀^(0) and q^(0..1); the zero rows are not read
    c0 = ld.centroidal(robot, start.base_pose, np.stack([start.base_twist, np.zeros(6)]),
                       np.stack([start.q, start.qd, 0 * start.q]), 1).com
    e_x0 = np.stack([c0[0] - xd[0], c0[1] - xd[1], np.zeros(3), np.zeros(3)])
    traj = ld.simulate(robot, start, 0.6, dt=2e-3, controller=law, plant=law.plant)
    Fx, Fq = _companion(POLES), _companion(JOINT_POLES)
    for k in range(0, len(traj.time), 50):
        t = traj.time[k]
        xG, psi, qd = out(t, 0)
        c = ld.centroidal(robot, traj.base_pose[k], traj.base_twist[k], traj.q[k], 0).com[0]
        assert_close(c - xG[0], (expm(Fx * t) @ e_x0)[0], 0.0, 1e-6 * np.abs(e_x0).max(),
                     what=f"x_G error at t = {t:g}")
        eq = (expm(Fq * t) @ np.stack([dq, np.zeros_like(dq)]))[0]
        assert_close(traj.q[k, 0] - qd[0], eq, 0.0, 1e-6 * np.abs(dq).max(),
                     what=f"q error at t = {t:g}")
        R = traj.base_pose[k, :3, :3]
        e_psi = np.angle(np.exp(1j * (np.arctan2(-R[0, 1], R[1, 1]) - psi[0])))
        assert abs(e_psi) < 1e-6 * 0.05, (t, e_psi)


def test_near_free_fall_the_law_refuses_the_state(robot):
    law, _ = _law(robot)
    s = law.state_on(0.3)
    low = ld.State(base_pose=s.base_pose, base_twist=s.base_twist, q=s.q, qd=s.qd,
                   extra=np.array([0.0, 0.0]))
    with pytest.raises(ValueError, match="free fall"):
        law.step(0.3, low)


def test_a_bad_state_or_target_is_refused_by_name(borinot_law):
    law, out = borinot_law
    s = law.state_on(0.3)
    fields = dict(base_pose=s.base_pose, base_twist=s.base_twist, q=s.q, qd=s.qd, extra=s.extra)
    nan_q = SimpleNamespace(**(fields | {"q": np.full_like(s.q, np.nan)}))
    with pytest.raises(ValueError, match="state.q: contains NaN"):
        law.step(0.3, nan_q)
    sheared = s.base_pose.copy()
    sheared[0, 1] += 0.1
    with pytest.raises(ValueError, match="state.base_pose"):
        law.step(0.3, SimpleNamespace(**(fields | {"base_pose": sheared})))
    with pytest.raises(ValueError, match=r"state.extra: expected shape \(2,\)"):
        law.step(0.3, SimpleNamespace(**(fields | {"extra": np.ones(3)})))
    short = control.FlatTrackingLaw(law.model, POLES, lambda t: (out(t, 1)[0][:4],) + out(t, 1)[1:],
                                    yaw_poles=YAW_POLES, joint_poles=JOINT_POLES)
    with pytest.raises(ValueError, match=r"target: com: expected a jet of shape \(≥5, 3\)"):
        short.step(0.3, s)
    inf = control.FlatTrackingLaw(law.model, POLES,
                                  lambda t: (out(t, 1)[0], np.full(3, np.inf), out(t, 1)[2]),
                                  yaw_poles=YAW_POLES, joint_poles=JOINT_POLES)
    with pytest.raises(ValueError, match="target: yaw: contains NaN or infinite values"):
        inf.step(0.3, s)


def test_elastic_law_with_an_allocation_refuses_wrenches_the_rotors_cannot_make():
    """ElasticJointLaw on Borinot with a quadrotor allocation: on a flat
    target (from the flat map) the commanded body wrench jets lie in the
    allocation's range and the law runs; on a level figure-eight (base kept
    level, so sideways body forces) the start is refused, naming what."""
    from tests.test_flatness import _quadrotor
    model = _borinot()
    A = control.rotor_allocation(_quadrotor())
    out = FigureEight(model.n_joints)

    def flat_target(t):
        fm = control.flat_map(model, *out(t, 2), 2)
        return control.Target(q=fm.q, base_pose=fm.base_pose, base_twist=fm.base_twist)

    law = control.ElasticJointLaw(model, 25.0, 0.01, (-2, -3, -4, -5), flat_target, allocation=A)
    s = law.state_on(flat_target(0.4))
    law.step(0.4, s)

    def level_target(t):                              # R = I, ω = 0: V = (0, ṗ)
        xG = out(t, 0)[0]
        C = np.eye(4)
        C[:3, 3] = xG[0]
        V = np.zeros((4, 6))
        V[:, 3:] = xG[1:5]
        return control.Target(q=np.zeros((5, model.n_joints)), base_pose=C, base_twist=V)

    level = control.ElasticJointLaw(model, 25.0, 0.01, (-2, -3, -4, -5), level_target,
                                    allocation=A)
    with pytest.raises(ValueError, match="target: it needs a body-frame base wrench .*"
                                         "cannot produce.*force"):
        level.state_on(level_target(0.4))
    fixed = random_tree(np.random.default_rng(3), 3, floating_base=False)
    with pytest.raises(ValueError, match="allocation: the model's base is fixed"):
        control.ElasticJointLaw(fixed, 25.0, 0.01, (-2, -3, -4, -5), flat_target, allocation=A)
