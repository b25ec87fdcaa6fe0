"""Joint stops as unilateral events in ``liedyn.simulate(joint_stops=…)``
(SPEC §10.2), against closed forms:

1. A pendulum without gravity driven by a constant torque ``τ`` onto its
   upper stop: ``q(t) = q₀ + ½ (τ/I) t²`` (a polynomial RK4 integrates
   exactly), so the touch-down is at ``t* = √(2 (limit − q₀) I/τ)`` with the
   speed ``v = τ t*/I``; it rebounds at ``−e v`` losing ``(1 − e²) ½ I v²``
   and lands again ``2 e v I/τ`` later; with ``e = 0`` it is held with the
   reaction ``λ = τ``.
2. Held at its stop by a falling torque ``τ(t) = τ₀ − k t``: ``λ = τ`` while
   held, lift-off at ``τ₀/k``.
3. ``impact`` and ``unilateral_forward_dynamics`` with ``stops=``: the
   scalar laws ``Λ = (1 + e) I v`` and ``λ = τ``.
4. Solo-12 dropped with friction, weak PD and stops on its knees just
   around the standing posture (the URDF's limits are ±10 rad, which a drop
   never reaches): the run ends, a stop event happens, the knees stay
   within their stops to the location bound and the stops' forces are
   ``≥ 0``.
5. Bad input, each naming the argument.
"""

import numpy as np
import pytest

import liedyn as ld
from liedyn import se3
from liedyn.simulation.events import CLOSED, OPEN
from liedyn.simulation.events import CLOSED, OPEN
from models.quadruped_drops import Drop
from tests.helpers import assert_close

MASS, LENGTH = 1.5, 0.6
I_COM = np.diag([0.01, 0.04, 0.03])
LOWER, UPPER = -0.9, 0.4
INERTIA = MASS * LENGTH ** 2 + I_COM[1, 1]      # about the hinge axis (no armature)
TAU = 2.0                                        # N m, towards the upper stop


def pendulum(gravity=0.0, limits=True):
    """One revolute joint about ``y`` at the origin, fixed base, the centre
    of mass at ``(l, 0, 0)`` of the link, limits ``[LOWER, UPPER]``."""
    b = ld.ModelBuilder(floating_base=False, gravity=(0.0, 0.0, -gravity))
    b.add_body("ground", None, None)
    kw = dict(lower=LOWER, upper=UPPER) if limits else {}
    b.add_body("link", "ground", ld.Revolute([0.0, 1.0, 0.0], name="hinge", **kw),
               inertia=se3.spatial_inertia(MASS, np.array([LENGTH, 0.0, 0.0]), I_COM))
    return b.build()


def torque(f):
    return lambda t, s: ld.Inputs(tau=np.array([f(t)]))


def at_rest(q0):
    return ld.State(None, None, np.array([q0]), np.zeros(1))


# --------------------------------------------------- 1. onto the stop --

@pytest.mark.parametrize("e", [0.0, 0.5])
@pytest.mark.parametrize("event_tol", [1e-10, 1e-6])
def test_a_driven_pendulum_lands_on_its_stop_at_the_closed_form_time(e, event_tol):
    model = pendulum()
    q0 = -0.2
    t_star = np.sqrt(2.0 * (UPPER - q0) * INERTIA / TAU)
    v = TAU * t_star / INERTIA
    duration = t_star + (2.0 * e * v * INERTIA / TAU if e else 0.3) + 0.05
    traj = ld.simulate(model, at_rest(q0), duration, dt=1e-2, controller=torque(lambda t: TAU),
                       joint_stops=True, stop_restitution=e, event_tol=event_tol)
    assert traj.stop_names == ("stop:hinge:lower", "stop:hinge:upper")
    ev = traj.events[0]
    assert (ev.kind, ev.contact) == ("touch-down", "stop:hinge:upper")
    assert 0.0 <= ev.time - t_star <= event_tol
    # the velocity before is that of the located time, at most (τ/I) event_tol faster
    k = ev.sample
    assert_close(traj.q[k, 1, 0], v, 0.0, 2.0 * TAU / INERTIA * event_tol)
    assert_close(traj.q[k + 1, 1, 0], -e * v, 0.0, 2.0 * TAU / INERTIA * event_tol)
    assert_close(ev.energy_loss, (1.0 - e * e) * 0.5 * INERTIA * v * v, 0.0,
                 2.0 * TAU * v * event_tol + 1e-12)
    # the location leaves at most |q̇| event_tol beyond the stop; the switch removes it
    assert traj.stop_gap[:, 1].min() >= -v * event_tol - 1e-15
    assert traj.q[k + 1, 0, 0] == pytest.approx(UPPER, abs=1e-15)
    if e == 0.0:
        assert len(traj.events) == 1
        held = traj.stop_mode[:, 1] == CLOSED
        assert not held[:k + 1].any() and held[k + 1:].all()   # sample k: before the switch
        assert_close(traj.stop_force[held, 1], np.full(held.sum(), TAU), 1e-12, 0.0)
        assert np.abs(traj.q[k + 1:, 0, 0] - UPPER).max() <= 1e-12
        assert np.abs(traj.q[k + 1:, 1, 0]).max() <= 1e-12
    else:
        # back on the stop after 2 e v I/τ (the same speed e v as it left)
        ev2 = traj.events[1]
        assert (ev2.kind, ev2.contact) == ("touch-down", "stop:hinge:upper")
        assert abs(ev2.time - (ev.time + 2.0 * e * v * INERTIA / TAU)) <= 2.0 * event_tol
        assert_close(ev2.energy_loss, (1.0 - e * e) * 0.5 * INERTIA * (e * v) ** 2, 0.0,
                     2.0 * TAU * v * event_tol + 1e-12)
    assert (traj.stop_force[traj.stop_mode == OPEN] == 0.0).all()


def test_a_stop_lifts_off_when_the_torque_turns():
    """Held at the upper stop from rest, ``τ(t) = τ₀ − k t``: ``λ = τ`` while
    held (the stop carries the whole torque), lift-off where ``τ = 0``."""
    model = pendulum()
    tau0, k, event_tol = 2.0, 5.0, 1e-10
    stop = ld.JointStop("hinge", "upper")
    traj = ld.simulate(model, at_rest(UPPER), 0.6, dt=1e-2, event_tol=event_tol,
                       controller=torque(lambda t: tau0 - k * t), joint_stops=[stop])
    (ev,) = traj.events
    assert (ev.kind, ev.contact, ev.energy_loss) == ("lift-off", "stop:hinge:upper", 0.0)
    assert abs(ev.time - tau0 / k) <= event_tol + 1e-12
    held = traj.stop_mode[:, 0] == CLOSED
    assert held[0] and not held[-1]
    assert_close(traj.stop_force[held, 0], tau0 - k * traj.time[held], 0.0, 1e-12)
    assert traj.stop_force[held, 0].min() >= -2e-9 * MASS
    # after it: q = limit + ∫∫ τ/I, τ = −k (t − t_l) from the lift-off t_l
    after = traj.time > ev.time
    s = traj.time[after] - ev.time
    assert_close(traj.q[after, 0, 0], UPPER - k * s ** 3 / (6.0 * INERTIA), 0.0, 1e-9)


# ----------------------------------------- 2. the contact-layer solves --

@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_impact_with_a_stop_is_the_scalar_law(e):
    model = pendulum()
    v = 1.3
    stops = [ld.JointStop("hinge", "upper"), ld.JointStop("hinge", "lower")]
    r = ld.impact(model, [], None, None, np.array([[UPPER], [v]]), restitution=e, stops=stops)
    assert r.names == ("stop:hinge:upper", "stop:hinge:lower")
    assert_close(r.impulse, [(1.0 + e) * INERTIA * v, 0.0], 0.0, 1e-12)
    assert_close(r.q[1], [-e * v], 0.0, 1e-12)
    assert_close(r.energy_loss, (1.0 - e * e) * 0.5 * INERTIA * v * v, 1e-12, 0.0)


def test_unilateral_forward_dynamics_with_a_stop_carries_the_torque():
    model = pendulum(gravity=9.81)
    stops = [ld.JointStop("hinge", "upper")]
    q = np.array([[UPPER], [0.0]])
    push = ld.unilateral_forward_dynamics(model, [], None, None, q, 1, tau=[[TAU], [0.0]],
                                          stops=stops)
    lam = TAU + MASS * 9.81 * LENGTH * np.cos(UPPER)    # the torque and gravity's moment
    assert push.active == ("stop:hinge:upper",)
    assert_close(push.force[:, 0], [lam, 0.0], 1e-12, 0.0)
    assert_close(push.q[2], [0.0], 0.0, 1e-12)
    pull = ld.unilateral_forward_dynamics(model, [], None, None, q, 0, tau=[[-2.0 * lam]],
                                          stops=stops)
    assert pull.active == () and pull.force[0, 0] == 0.0
    with pytest.raises(ValueError, match="stop 'stop:hinge:upper': is beyond its limit by"):
        ld.unilateral_forward_dynamics(model, [], None, None, [[UPPER + 1e-3], [0.0]], 0,
                                       tau=[[0.0]], stops=stops)


# ---------------------------------------------------------- 3. Solo-12 --

def test_solo_lands_on_its_knee_stops():
    drop = Drop("solo12", 0.05)
    m, event_tol, duration = drop.model, 1e-10, 0.25
    knees = [j for j, n in enumerate(m.joint_names) if n.endswith("KFE")]
    # stops 0.05 rad either side of the standing posture: the landing bends a knee onto one
    stops = [ld.JointStop(j, side, limit=drop.q[j] + d) for j in knees
             for side, d in (("lower", -0.05), ("upper", 0.05))]
    traj = ld.simulate(m, drop.state, duration, dt=1e-3, contacts=drop.contacts,
                       friction=drop.mu, controller=drop.hold, event_tol=event_tol,
                       joint_stops=stops)
    assert traj.time[-1] == pytest.approx(duration, abs=1e-12)
    names = set(traj.stop_names)
    stop_events = [ev for ev in traj.events if ev.contact in names]
    assert any(ev.kind == "touch-down" for ev in stop_events)
    qd = np.abs(traj.q[:, 1, knees]).max()
    assert traj.stop_gap.min() >= -qd * event_tol - 1e-12
    closed = traj.stop_mode == CLOSED
    assert closed.any()
    assert traj.stop_force[closed].min() >= -1e-8 * drop.weight * 1.0   # a lever of 1 m
    assert (traj.stop_force[~closed] == 0.0).all()
    # the feet's bounds of SPEC §10.2 still hold
    held = traj.contact_mode != OPEN
    fn = traj.contact_force[..., 2]
    assert fn[held].min() >= -4e-9 * drop.weight


# --------------------------------------------------------- 4. bad input --

def test_bad_input_names_the_argument():
    model = pendulum()
    kw = dict(dt=1e-2, controller=torque(lambda t: TAU))
    with pytest.raises(ValueError, match="^stop_restitution: "):
        ld.simulate(model, at_rest(0.0), 0.1, joint_stops=True, stop_restitution=1.5, **kw)
    with pytest.raises(TypeError, match=r"^joint_stops\[1\]: expected a liedyn.JointStop, got str"):
        ld.simulate(model, at_rest(0.0), 0.1, joint_stops=[ld.JointStop("hinge", "upper"),
                                                            "hinge"], **kw)
    with pytest.raises(ValueError, match="^joint_stops: True, but no joint of the model has"):
        ld.simulate(pendulum(limits=False), at_rest(0.0), 0.1, joint_stops=True, **kw)
    with pytest.raises(ValueError, match=r"^state0: joint 'hinge' is beyond its upper stop 0.4 "
                                         r"by 1.000e-02"):
        ld.simulate(model, at_rest(UPPER + 0.01), 0.1, joint_stops=True, **kw)
    with pytest.raises(ValueError, match="^stop_restitution: only a run with contacts= or "
                                         "joint_stops="):
        ld.simulate(model, at_rest(0.0), 0.1, stop_restitution=0.5, **kw)
    with pytest.raises(ValueError, match=r"^joint_stops\[0\]\.joint: joint 'hinge' has no upper "
                                         "limit"):
        ld.simulate(pendulum(limits=False), at_rest(0.0), 0.1,
                    joint_stops=[ld.JointStop("hinge", "upper")], **kw)
