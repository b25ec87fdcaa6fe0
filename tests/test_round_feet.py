"""Round feet with friction in ``simulate`` (SPEC §10.2, §13.1): a sphere
that sticks rolls (``RollingContact``: the material point at the touching
point ``p = c − ρ n`` is held, the force acts at ``p``), one that slides is
held along its normal with the Coulomb force at ``p`` opposing the slip of
that material point, ``ċ + ρ n × ω``. Against closed forms of a solid sphere
(``I = 2/5 m ρ²``):

- rolling down an incline without slipping: ``a = (5/7) g sin θ``,
  ``ω̇ = a/ρ``, the contact inside its cone when ``μ ≥ (2/7) tan θ``;
- slipping when ``μ < (2/7) tan θ``: ``a = g (sin θ − μ cos θ)``, the spin
  growing as ``ω = 5 μ g cos θ t / (2ρ)``;
- rolling on a level plane at constant speed, energy conserved;
- a spinning sphere landing with ``e = 0`` and friction: the impulse passes
  through the touching point, so the angular momentum about it is kept and
  the sphere leaves rolling at ``v⁺ = (5 v + 2 ρ ω)/7``, ``ω⁺ = v⁺/ρ``.

Every motion here has constant accelerations, which RK4 integrates exactly,
so the closed forms hold to round-off between events (its accumulation over
a thousand steps: 1e-10 m).
"""

import numpy as np
import pytest

import liedyn as ld
from tests.helpers import assert_close, solid_sphere

G = 9.81
MASS = 2.0
RADIUS = 0.1
THETA = np.deg2rad(20.0)
NORMAL = np.array([-np.sin(THETA), 0.0, np.cos(THETA)])
DOWNHILL = -np.array([np.cos(THETA), 0.0, np.sin(THETA)])
AXIS = np.cross(NORMAL, DOWNHILL)          # a sphere rolling downhill spins about AXIS


@pytest.fixture(scope="module")
def ball():
    return solid_sphere(RADIUS, MASS)


def on_incline(model, mu, duration, twist=None):
    """The ball at rest (or with ``twist`` about the world origin) touching
    the incline through the origin."""
    C = np.eye(4)
    C[:3, 3] = RADIUS * NORMAL
    return ld.simulate(model, ld.State(C, np.zeros(6) if twist is None else twist), duration,
                       dt=1e-3, contacts=[ld.PointContact("ball", ld.Plane(NORMAL, 0.0),
                                                          RADIUS)], friction=mu)


def centre(traj):
    return traj.base_pose[:, :3, 3]


def omega(traj):
    return traj.base_twist[:, 0, :3]


def test_a_sphere_rolls_down_an_incline_at_five_sevenths_g_sin_theta(ball):
    mu = 0.2                                         # above (2/7) tan θ = 0.104
    traj = on_incline(ball, mu, 0.5)
    assert traj.events == ()
    assert (traj.contact_mode == ld.simulation.events.STICK).all()
    t = traj.time
    a = 5.0 / 7.0 * G * np.sin(THETA)
    s = 0.5 * a * t ** 2
    assert_close(centre(traj), RADIUS * NORMAL + s[:, None] * DOWNHILL, 0.0, 1e-10,
                 what="centre")
    assert_close(omega(traj), (a * t / RADIUS)[:, None] * AXIS, 1e-9, 1e-10, what="spin")
    # the force at the touching point: m g cos θ along n, (2/7) m g sin θ up the slope
    F = traj.contact_force[:, 0]
    f = MASS * G * (np.cos(THETA) * NORMAL - 2.0 / 7.0 * np.sin(THETA) * DOWNHILL)
    assert_close(F, np.tile(f, (len(traj), 1)), 0.0, 1e-9, what="contact force")
    assert_close(traj.gap[:, 0], np.zeros(len(traj)), 0.0, 1e-12, what="gap")


def test_a_sphere_slips_when_mu_is_below_two_sevenths_tan_theta(ball):
    mu = 0.05
    traj = on_incline(ball, mu, 0.5)
    assert [(e.kind, e.time) for e in traj.events] == [("slip", 0.0)]
    assert (traj.contact_mode[1:] == ld.simulation.events.SLIDE).all()
    t = traj.time[1:]
    a = G * (np.sin(THETA) - mu * np.cos(THETA))
    assert_close(centre(traj)[1:], RADIUS * NORMAL + (0.5 * a * t ** 2)[:, None] * DOWNHILL, 0.0,
                 1e-10, what="centre")
    spin = 5.0 * mu * G * np.cos(THETA) * t / (2.0 * RADIUS)
    assert_close(omega(traj)[1:], spin[:, None] * AXIS, 1e-9, 1e-10, what="spin")
    # the friction at the touching point: μ m g cos θ up the slope
    F = traj.contact_force[1:, 0]
    f = MASS * G * np.cos(THETA) * (NORMAL - mu * DOWNHILL)
    assert_close(F, np.tile(f, (len(t), 1)), 0.0, 1e-9, what="contact force")


def test_a_sphere_rolling_on_a_level_plane_keeps_its_speed_and_energy(ball):
    v, rho = 0.7, RADIUS
    C = np.eye(4)
    C[2, 3] = rho
    # rolling along +x: ω_y = v/ρ; the twist about the world origin, (ω, ċ − ω × c)
    w = np.array([0.0, v / rho, 0.0])
    V = np.concatenate([w, np.array([v, 0.0, 0.0]) - np.cross(w, C[:3, 3])])
    traj = ld.simulate(ball, ld.State(C, V), 1.0, dt=1e-3,
                       contacts=[ld.PointContact("ball", radius=rho)], friction=0.3)
    assert traj.events == ()
    assert (traj.contact_mode == ld.simulation.events.STICK).all()
    assert_close(centre(traj)[:, 0], v * traj.time, 0.0, 1e-10, what="x")
    assert_close(centre(traj)[:, 2], np.full(len(traj), rho), 0.0, 1e-12, what="height")
    c_dot = traj.base_twist[:, 0, 3:] + np.cross(omega(traj), centre(traj))
    energy = 0.5 * MASS * np.sum(c_dot ** 2, axis=1) + 0.5 * 0.4 * MASS * rho ** 2 * np.sum(
        omega(traj) ** 2, axis=1)
    assert_close(energy, np.full(len(traj), 0.7 * MASS * v ** 2), 1e-12, what="energy")
    assert_close(traj.contact_force[:, 0], np.tile([0.0, 0.0, MASS * G], (len(traj), 1)), 0.0,
                 1e-9, what="contact force")


def test_a_spinning_sphere_lands_rolling_with_its_angular_momentum_about_the_contact(ball):
    v, spin, h = 0.5, -8.0, 0.05          # forward 0.5 m/s, spinning backwards at 8 rad/s
    C = np.eye(4)
    C[2, 3] = RADIUS + h
    w = np.array([0.0, spin, 0.0])
    V = np.concatenate([w, np.array([v, 0.0, 0.0]) - np.cross(w, C[:3, 3])])
    traj = ld.simulate(ball, ld.State(C, V), 0.2, dt=1e-3,
                       contacts=[ld.PointContact("ball", radius=RADIUS)], friction=1.0)
    (ev,) = traj.events
    assert ev.kind == "touch-down"
    assert 0.0 <= ev.time - np.sqrt(2 * h / G) <= 1e-10
    assert ev.modes_after == ("sticking",)
    k = ev.sample
    v_after = (5 * v + 2 * RADIUS * spin) / 7
    c_dot = traj.base_twist[k + 1, 0, 3:] + np.cross(omega(traj)[k + 1], centre(traj)[k + 1])
    assert_close(c_dot, [v_after, 0.0, 0.0], 0.0, 1e-9, what="centre velocity after")
    assert_close(omega(traj)[k + 1], [0.0, v_after / RADIUS, 0.0], 0.0, 1e-8,
                 what="spin after")
    # then it rolls on at that speed
    assert_close(centre(traj)[-1, 0] - centre(traj)[k + 1, 0],
                 v_after * (traj.time[-1] - traj.time[k + 1]), 0.0, 1e-9, what="roll")
    # the energy lost is that of the impulse: before ½ m (v² + v_z²) + ½ I ω², after 0.7 m v⁺²
    before = 0.5 * MASS * (v ** 2 + 2 * G * h) + 0.2 * MASS * RADIUS ** 2 * spin ** 2
    assert_close(ev.energy_loss, before - 0.7 * MASS * v_after ** 2, 1e-8, what="loss")
