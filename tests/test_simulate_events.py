"""Contact events in ``simulate`` (SPEC §10.2): touch-down, lift-off, slip and
stick located on the step, against closed forms of falling, bouncing,
sliding and lifted bodies, and Solo-12 dropped onto its feet.

The free flights, slides and lifts here have polynomial trajectories of
degree at most four, which RK4 integrates exactly: the closed forms are met
to round-off between events, so the event times are checked against the
event tolerance itself.
"""

import numpy as np
import pytest

import liedyn as ld
from tests.contact_robots import solo, solo_standing
from tests.helpers import assert_close, run_python

G = 9.81
MASS = 2.0
RADIUS = 0.1
FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]


def body(name="body"):
    """One floating body of mass ``MASS``, its centre of mass at its origin."""
    b = ld.ModelBuilder()
    inertia = np.zeros((6, 6))
    inertia[:3, :3] = 0.4 * MASS * RADIUS ** 2 * np.eye(3)
    inertia[3:, 3:] = MASS * np.eye(3)
    b.add_body(name, None, None, np.eye(4), inertia)
    return b.build()


@pytest.fixture(scope="module")
def ball():
    return body("ball")


def at_height(z):
    C = np.eye(4)
    C[2, 3] = z
    return C


def drop(model, h0, duration, **kw):
    """The ball dropped with its lowest point ``h0`` above the ground."""
    return ld.simulate(model, ld.State(at_height(h0 + RADIUS), np.zeros(6)), duration,
                       dt=kw.pop("dt", 1e-3),
                       contacts=[ld.PointContact("ball", radius=RADIUS)], **kw)


def bounce_times(h0, e, count):
    """Touch-down times of a ball dropped from ``h0`` with restitution ``e``:
    ``t₁ = √(2h₀/g)``, then flights of ``2 eⁿ √(2h₀/g)``."""
    T = np.sqrt(2 * h0 / G)
    return T + np.concatenate([[0.0], np.cumsum([2 * e ** n * T for n in range(1, count)])])


# ---------------------------------------------------------- bouncing ball --

def test_a_bouncing_ball_meets_the_closed_form_times_heights_and_energy(ball):
    h0, e, tol = 1.0, 0.8, 1e-10
    traj = drop(ball, h0, 3.0, restitution=e, event_tol=tol)
    ev = traj.events
    assert len(ev) == 6 and all(x.kind == "touch-down" and x.contact == "ball" for x in ev)
    t = np.array([x.time for x in ev])
    assert np.abs(t - bounce_times(h0, e, 6)).max() <= 1e-9
    for n, x in enumerate(ev, start=1):
        k = x.sample
        assert traj.time[k] == traj.time[k + 1] == x.time
        vm, vp = traj.base_twist[k, 0, 5], traj.base_twist[k + 1, 0, 5]
        assert_close(vp, -e * vm, 1e-12, what="Newton's law")
        # the apex after the n-th bounce: h_n = v⁺² / 2g = e^{2n} h0, to what an event
        # time error ≤ tol allows: the impact speed v_n = e^{n−1} √(2 g h0) off by g tol
        v_n = e ** (n - 1) * np.sqrt(2 * G * h0)
        assert_close(vp ** 2 / (2 * G), e ** (2 * n) * h0, 2 * G * tol / v_n + 1e-12,
                     what=f"apex {n}")
        assert_close(x.energy_loss, (1 - e ** 2) * 0.5 * MASS * vm ** 2, 1e-9,
                     what="energy lost")
        assert_close(x.impact.contact_energy_after, e ** 2 * x.impact.contact_energy_before,
                     1e-12)
        assert x.modes_before == ("open",) and x.modes_after == ("open",)
    # between bounces the samples follow the parabola, never below the ground
    assert traj.gap.min() >= -1e-9
    apex = traj.gap[ev[0].sample + 1:ev[1].sample + 1].max()
    assert e ** 2 * h0 - 1e-3 <= apex <= e ** 2 * h0 + 1e-12
    assert (traj.contact_mode == ld.simulation.events.OPEN).all()


def test_a_bouncing_ball_comes_to_rest_carried_by_its_weight(ball):
    h0, e = 1.0, 0.8
    traj = drop(ball, h0, 5.0, restitution=e, rest_velocity=1e-3)
    ev = traj.events
    # rebounds slower than 1e-3 m/s end the bouncing: n ≤ log(1e-3 / v1) / log e + 1
    v1 = np.sqrt(2 * G * h0)
    assert len(ev) == int(np.ceil(np.log(1e-3 / v1) / np.log(e)))
    assert ev[-1].modes_after == ("closed",)
    assert all(x.modes_after == ("open",) for x in ev[:-1])
    t_limit = np.sqrt(2 * h0 / G) * (1 + 2 * e / (1 - e))   # where the bounces accumulate
    assert ev[-1].time < t_limit
    rest = slice(ev[-1].sample + 1, None)
    assert_close(traj.contact_force[rest, 0, 2], np.full(len(traj) - ev[-1].sample - 1,
                                                         MASS * G), 1e-12)
    assert np.abs(traj.gap[rest]).max() <= 1e-9
    assert np.abs(traj.base_twist[rest]).max() <= 1e-9


@pytest.mark.parametrize("tol", [1e-3, 1e-6, 1e-9])
def test_event_times_converge_with_the_event_tolerance(ball, tol):
    traj = drop(ball, 0.5, 0.5, event_tol=tol, events="stop")
    err = traj.events[0].time - np.sqrt(2 * 0.5 / G)
    assert -1e-12 <= err <= tol          # the event state is on the far side of the zero
    assert traj.time[-1] == traj.events[0].time


def test_stop_returns_at_the_first_event_with_it_named(ball):
    traj = drop(ball, 0.2, 2.0, restitution=0.5, events="stop")
    (ev,) = traj.events
    assert ev.kind == "touch-down" and ev.contact == "ball" and ev.sample == len(traj) - 1
    assert -1e-9 <= traj.gap[-1, 0] <= 0.0
    assert traj.base_twist[-1, 0, 5] < 0.0            # before the impact: no switch


def test_a_ball_pushed_up_lifts_off_when_the_push_equals_its_weight(ball):
    k = 40.0                                           # N/s

    def push(t, s):
        W = np.zeros((1, 6))
        W[0, 5] = k * t                                # at the centre: no moment
        W[0, :3] = np.cross(s.base_pose[:3, 3], W[0, 3:])
        return ld.Inputs(applied=W)

    traj = ld.simulate(ball, ld.State(at_height(RADIUS), np.zeros(6)), 0.8, dt=1e-3,
                       contacts=[ld.PointContact("ball", radius=RADIUS)], controller=push)
    (ev,) = traj.events
    t_star = MASS * G / k
    assert ev.kind == "lift-off" and -1e-12 <= ev.time - t_star <= 1e-9
    before = traj.time <= ev.time
    assert_close(traj.contact_force[before, 0, 2], MASS * G - k * traj.time[before], 1e-9,
                 1e-7)
    after = traj.time > ev.time
    # z̈ = (k/m)(t − t*): z = ρ + (k/m)(t − t*)³/6
    z = RADIUS + k / MASS * (traj.time[after] - t_star) ** 3 / 6
    assert_close(traj.base_pose[after, 2, 3], z, 0.0, 1e-9)
    assert (traj.contact_mode[after] == 0).all() and (traj.contact_force[after] == 0).all()


# ---------------------------------------------------------------- friction --

THETA = np.deg2rad(20.0)
NORMAL = np.array([-np.sin(THETA), 0.0, np.cos(THETA)])
DOWNHILL = np.array([np.cos(THETA), 0.0, np.sin(THETA)]) * -1.0


@pytest.fixture(scope="module")
def block():
    return body("block")


def on_incline(model, mu, duration, **kw):
    return ld.simulate(model, ld.State(np.eye(4), np.zeros(6)), duration, dt=1e-3,
                       contacts=[ld.PointContact("block", ld.Plane(NORMAL, 0.0))], friction=mu,
                       **kw)


def test_a_block_sticks_on_an_incline_when_mu_exceeds_tan_theta(block):
    traj = on_incline(block, 0.5, 1.0)
    assert traj.events == ()
    assert (traj.contact_mode == ld.simulation.events.STICK).all()
    assert np.abs(traj.base_pose[:, :3, 3]).max() <= 1e-12
    assert_close(traj.contact_force[:, 0], np.tile([0.0, 0.0, MASS * G], (len(traj), 1)),
                 0.0, 1e-10)


def test_a_block_slides_down_an_incline_when_mu_is_below_tan_theta(block):
    mu = 0.2
    traj = on_incline(block, mu, 1.0)
    (ev,) = traj.events
    assert ev.kind == "slip" and ev.time == 0.0
    assert (traj.contact_mode == ld.simulation.events.SLIDE).all()
    a = G * (np.sin(THETA) - mu * np.cos(THETA))
    s = traj.base_pose[:, :3, 3] @ DOWNHILL
    assert_close(s, 0.5 * a * traj.time ** 2, 0.0, 1e-10)
    F = traj.contact_force[:, 0]
    Fn = F @ NORMAL
    assert_close(Fn, np.full(len(traj), MASS * G * np.cos(THETA)), 1e-12)
    assert_close(F @ DOWNHILL, -mu * Fn, 1e-12)          # Coulomb, opposing the slide


def test_a_growing_push_makes_a_sticking_block_slip_at_the_closed_form_time(block):
    mu, k = 0.5, 5.0

    def push(t, s):
        W = np.zeros((1, 6))
        W[0, 3:] = k * t * DOWNHILL
        W[0, :3] = np.cross(s.base_pose[:3, 3], W[0, 3:])
        return ld.Inputs(applied=W)

    traj = on_incline(block, mu, 1.5, controller=push)
    (ev,) = traj.events
    t_star = MASS * G * (mu * np.cos(THETA) - np.sin(THETA)) / k
    assert ev.kind == "slip" and ev.contact == "block"
    assert -1e-12 <= ev.time - t_star <= 1e-9
    # after the slip: s̈ = (k/m)(t − t*), so s = (k/m)(t − t*)³/6
    s = traj.base_pose[:, :3, 3] @ DOWNHILL
    after = traj.time > ev.time
    assert_close(s[after], k / MASS * (traj.time[after] - t_star) ** 3 / 6, 0.0, 1e-9)
    assert np.abs(s[~after]).max() <= 1e-12
    margin = mu * (traj.contact_force[~after, 0] @ NORMAL) - np.linalg.norm(
        traj.contact_force[~after, 0] - np.outer(traj.contact_force[~after, 0] @ NORMAL, NORMAL),
        axis=1)
    assert margin.min() >= -1e-9


def test_a_sliding_block_sticks_where_friction_stops_it(block):
    mu, v0 = 0.3, 1.0
    V = np.zeros(6)
    V[3] = v0
    traj = ld.simulate(block, ld.State(np.eye(4), V), 0.6, dt=1e-3,
                       contacts=[ld.PointContact("block")], friction=mu)
    (ev,) = traj.events
    t_stop = v0 / (mu * G)
    assert ev.kind == "stick" and -1e-12 <= ev.time - t_stop <= 1e-9
    x = traj.base_pose[:, 0, 3]
    before = traj.time <= ev.time
    t = traj.time[before]
    assert_close(x[before], v0 * t - 0.5 * mu * G * t ** 2, 0.0, 1e-10)
    assert_close(x[~before], np.full((~before).sum(), v0 ** 2 / (2 * mu * G)), 0.0, 1e-9)
    assert (traj.contact_mode[~before] == ld.simulation.events.STICK).all()


def test_a_slide_that_turns_under_a_side_push_sticks_only_when_it_stops(block):
    mu, f = 0.5, np.array([0.0, 4.0, 0.0])                # |f| < μ m g: it stops

    def push(t, s):
        return ld.Inputs(applied=np.concatenate([np.cross(s.base_pose[:3, 3], f), f])[None])

    V = np.array([0, 0, 0, 1.0, -1.0, 0])
    traj = ld.simulate(block, ld.State(np.eye(4), V), 0.6, dt=1e-3,
                       contacts=[ld.PointContact("block")], friction=mu, controller=push)
    (ev,) = traj.events                                   # the slip turns by 90° first
    assert ev.kind == "stick" and ev.modes_after == ("sticking",)
    v = traj.base_twist[:, 0, 3:]
    assert np.linalg.norm(v[ev.sample]) <= 1e-5
    moving = np.linalg.norm(v, axis=1) > 1e-3
    F = traj.contact_force[moving, 0]
    assert_close(np.linalg.norm(F[:, :2], axis=1), np.full(moving.sum(), mu * MASS * G), 1e-12)
    cos = np.einsum("ij,ij->i", F[:, :2], v[moving, :2]) / (
        np.linalg.norm(F[:, :2], axis=1) * np.linalg.norm(v[moving, :2], axis=1))
    assert cos.max() <= -1 + 1e-9                         # Coulomb: against the slip
    # work and energy: ½ m |v₀|² + ∫ (f − friction)·v dt = 0 at rest (trapezoid, O(dt²))
    t = traj.time[: ev.sample + 1]
    power = (v[: ev.sample + 1] @ f + np.einsum("ij,ij->i", traj.contact_force[: ev.sample + 1, 0],
                                                v[: ev.sample + 1]))
    work = float(np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(t)))
    assert abs(0.5 * MASS * 2.0 + work) <= 1e-4
    assert np.abs(v[ev.sample + 1:]).max() <= 1e-12


# ------------------------------------------------------------ Solo dropped --

@pytest.fixture(scope="module")
def solo_drop():
    model = solo()
    C, q0 = solo_standing(model)
    feet_z = min(ld.frame_pose(model, C, q0, f)[2, 3] for f in FEET)
    C[2, 3] += 0.05 - feet_z

    def hold(t, s):
        return ld.Inputs(tau=5.0 * (q0 - s.q) - 0.1 * s.qd)

    traj = ld.simulate(model, ld.State(C, np.zeros(6), q0, np.zeros(model.n_joints)), 1.0,
                       dt=1e-3, contacts=ld.point_contacts(FEET), friction=0.7, controller=hold)
    return model, traj


def test_solo_dropped_from_5_cm_lands_on_four_feet_and_comes_to_rest(solo_drop):
    model, traj = solo_drop
    # in free fall the held joints do not move: the feet touch together at √(2h/g),
    # one event each, in one switch
    assert [x.kind for x in traj.events] == ["touch-down"] * 4
    assert sorted(x.contact for x in traj.events) == sorted(FEET)
    ev = traj.events[0]
    assert -1e-12 <= ev.time - np.sqrt(2 * 0.05 / G) <= 1e-9
    assert all(x.time == ev.time and x.sample == ev.sample for x in traj.events)
    assert ev.modes_after == ("sticking",) * 4
    assert all(x.energy_loss == 0.0 for x in traj.events[1:])
    k = ev.sample

    def energy(j):
        nu = np.concatenate([traj.base_twist[j, 0], traj.q[j, 1]])
        return 0.5 * nu @ ld.mass_matrix(model, traj.base_pose[j], traj.q[j, 0]) @ nu

    assert_close(ev.energy_loss, energy(k) - energy(k + 1), 1e-12)
    assert 0.0 < ev.energy_loss < energy(k)
    # after the impact the feet stand still, then stay inside their cones
    cs = ld.ConstraintSet(model, [ld.Contact3D(f) for f in FEET])
    for j, size in ((k, 0.5), (k + 1, 1e-9), (len(traj) - 1, 1e-9)):
        J = ld.constraint_jacobian(model, cs, traj.base_pose[j], None, traj.q[j, :1], 0)[0]
        v = J @ np.concatenate([traj.base_twist[j, 0], traj.q[j, 1]])
        assert (np.abs(v).max() >= size) if j == k else (np.abs(v).max() <= size)
    F = traj.contact_force[k + 1:]
    Fn = F[..., 2]
    assert Fn.min() > 0.0
    assert (np.linalg.norm(F[..., :2], axis=-1) <= 0.7 * Fn).all()
    assert energy(len(traj) - 1) < 1e-6
    # the gap column (from the position errors while every foot is held) is the gap
    for j in range(0, len(traj), 50):
        g = ld.contact_gaps(model, ld.point_contacts(FEET), traj.base_pose[j], None,
                            traj.q[j, :1], 0).phi[0]
        assert_close(traj.gap[j], g, 0.0, 1e-12, what=f"gaps at sample {j}")
    # settling: after 0.9 s on its feet the weight is carried to 0.5 %
    weight = float(np.sum(model.body_mass)) * G
    assert_close(F[-1].sum(axis=0), [0.0, 0.0, weight], 0.0, 5e-3 * weight)


# ------------------------------------------------------------- bad input --

@pytest.mark.parametrize("kw, arg", [
    ({"restitution": 1.5}, "restitution"),
    ({"restitution": -0.1}, "restitution"),
    ({"friction": -0.2}, "friction"),
    ({"events": "pause"}, "events"),
    ({"event_tol": 0.0}, "event_tol"),
    ({"rest_velocity": -1.0}, "rest_velocity"),
    ({"control_rate": 100.0, "controller": lambda t, s: None}, "control_rate"),
    ({"reference": "base"}, "reference"),
    ({"stabilization": "baumgarte"}, "stabilization"),
])
def test_bad_event_arguments_are_named(ball, kw, arg):
    with pytest.raises(ValueError, match=f"^{arg}:"):
        drop(ball, 0.1, 0.1, **kw)


def test_bad_contacts_are_refused(ball):
    with pytest.raises(ValueError, match="frame: the model has no frame 'foot'"):
        ld.simulate(ball, ld.State(at_height(1.0)), 0.1, dt=1e-3,
                    contacts=[ld.PointContact("foot")])
    with pytest.raises(TypeError, match="^contacts"):
        ld.simulate(ball, ld.State(at_height(1.0)), 0.1, dt=1e-3, contacts=[3])
    cs = ld.ConstraintSet(ball, [ld.Contact3D("ball")])
    with pytest.raises(ValueError, match="^constraints:"):
        ld.simulate(ball, ld.State(at_height(1.0)), 0.1, dt=1e-3, constraints=cs,
                    contacts=[ld.PointContact("ball")])


def test_a_penetrating_start_is_refused_naming_the_contact(ball):
    with pytest.raises(ld.SimulationError, match="contact 'ball' penetrates its plane"):
        ld.simulate(ball, ld.State(at_height(0.05)), 0.1, dt=1e-3,
                    contacts=[ld.PointContact("ball", radius=RADIUS)])


@pytest.mark.parametrize("value,what", [
    (np.zeros(6), r"expected shape \(1, 6\) from the controller, got \(6,\)"),
    (np.zeros((1, 1, 6)), r"expected shape \(1, 6\) from the controller, got \(1, 1, 6\)"),
    ([["a"] * 6], r"expected a real numeric array, got strings \(an Inputs built by the "
                  r"controller\)")])
@pytest.mark.parametrize("run", ["resting", "sliding"])
def test_malformed_inputs_in_contact_are_named_with_the_time(ball, block, run, value, what):
    """The contact forces are solved from the inputs before the step checks
    them: a malformed field is refused there too, with the time."""
    def controller(t, s):
        return ld.Inputs(applied=value)
    with pytest.raises(ld.SimulationError, match=rf"^t = 0: applied: {what}$") as info:
        if run == "resting":
            ld.simulate(ball, ld.State(at_height(RADIUS), np.zeros(6)), 0.1, dt=1e-3,
                        contacts=[ld.PointContact("ball", radius=RADIUS)], controller=controller)
        else:
            on_incline(block, 0.1, 0.1, controller=controller)
    assert info.value.quantity == "applied" and info.value.time == 0.0


@pytest.mark.parametrize("kw", [{"restitution": 0.5}, {"friction": 0.3},
                                {"events": "stop"}, {"rest_velocity": 0.1}])
def test_event_arguments_without_contacts_are_refused(ball, kw):
    with pytest.raises(ValueError, match=f"^{next(iter(kw))}: only a run with contacts="):
        ld.simulate(ball, ld.State(at_height(1.0)), 0.1, dt=1e-3, **kw)


def test_a_run_without_contacts_has_no_contact_columns(ball):
    traj = ld.simulate(ball, ld.State(at_height(1.0)), 0.01, dt=1e-3)
    assert traj.events == () and traj.contact_force is None and traj.gap is None


def test_a_run_with_events_in_a_fresh_interpreter_ends_cleanly():
    out = run_python("""
        import numpy as np, liedyn as ld
        from tests.test_simulate_events import body, drop
        traj = drop(body("ball"), 0.3, 2.0, restitution=0.6)
        print("EVENTS", len(traj.events), traj.contact_mode[-1, 0])
    """, timeout=600)
    n, mode = out.split("EVENTS")[1].split()
    assert int(n) > 3 and int(mode) == 1


def test_an_interrupted_run_with_contacts_keeps_its_samples_and_says_so(ball):
    def stop_at(t, s):
        if t > 0.3:
            raise KeyboardInterrupt
        return None

    with pytest.raises(KeyboardInterrupt) as info:
        drop(ball, 1.0, 1.0, controller=stop_at)
    traj = info.value.trajectory
    assert traj.time[-1] == pytest.approx(0.3) and np.all(np.diff(traj.time) > 0)
    notes = [x for x in info.value.__notes__ if x.startswith("liedyn.simulate: stopped")]
    assert len(notes) == 1 and "t = 0.3" in notes[0]
