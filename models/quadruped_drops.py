"""Solo-12 and Go2 (URDFs of example-robot-data, floating base) on four point
feet, held at their standing postures by a joint PD law
``τ = K_p (q_s − q) − K_d q̇``, for the contact-event drop tests and studies
(``tests/test_contact_drops.py``, ``experiments/legged_drops.py``,
``experiments/bench_contact_sim.py``).

A :class:`Drop` starts at rest with its lowest foot ``drop`` above the
ground ``z = 0`` (``drop = 0``: standing on it); without feed-forward the
PD law keeps the joints at ``q_s`` in free fall, so the four feet land
together at ``√(2 drop / g)``.
"""

import warnings

import numpy as np

import liedyn as ld
from liedyn.parsers.urdf import URDFWarning

from .example_robots import load_robot, robots_dir

# name: (feet frames, μ, (K_p N m/rad, K_d N m s/rad))
SOLO_FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
GO2_FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
GO2_URDF = "go2_description/urdf/go2.urdf"


def solo():
    """``(model, q_s, feet, μ, (K_p, K_d))`` of Solo-12: knees bent, front
    ``HFE 0.8, KFE −1.6``, hind legs mirrored; μ = 0.7."""
    model = load_robot("solo12")
    q = np.zeros(model.n_joints)
    for leg, sign in zip(("FL", "FR", "HL", "HR"), (1.0, 1.0, -1.0, -1.0)):
        i = model.joint_names.index(f"{leg}_HFE")
        q[i], q[i + 1] = 0.8 * sign, -1.6 * sign
    return model, q, SOLO_FEET, 0.7, (10.0, 0.2)


def go2():
    """``(model, q_s, feet, μ, (K_p, K_d))`` of Go2: the SRDF's "standing"
    posture (hip ±0.068, thigh 0.785, calf −1.44); μ = 0.8."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        model = ld.load_urdf(str(robots_dir() / GO2_URDF), floating_base=True)
    stand = {"hip": 0.068, "thigh": 0.785, "calf": -1.44}
    q = np.zeros(model.n_joints)
    for i, name in enumerate(model.joint_names):
        leg, part, _ = name.split("_")
        q[i] = stand[part] * (-1.0 if part == "hip" and leg[1] == "R" else 1.0)
    return model, q, GO2_FEET, 0.8, (40.0, 1.0)


ROBOTS = {"solo12": solo, "go2": go2}


class Drop:
    """Robot ``name`` (a key of :data:`ROBOTS`) held at its standing posture
    by the PD law, its lowest foot ``drop`` (m) above the ground, at rest.

    Attributes: ``model``, ``q`` (the standing posture ``q_s``), ``feet``,
    ``mu``, ``kp``, ``kd``, ``drop``, ``state`` (the start), ``mass``,
    ``weight`` (``m g``), ``contacts`` (a :class:`liedyn.PointContact` per
    foot), ``hold`` (the PD controller).
    """

    def __init__(self, name, drop=0.10):
        self.name = name
        self.model, self.q, self.feet, self.mu, (self.kp, self.kd) = ROBOTS[name]()
        self.drop = drop
        C = np.eye(4)
        z = min(ld.frame_pose(self.model, C, self.q, f)[2, 3] for f in self.feet)
        C[2, 3] = drop - z
        self.state = ld.State(C, np.zeros(6), self.q, np.zeros(self.model.n_joints))
        self.mass = float(np.sum(self.model.body_mass))
        self.gravity = float(-self.model.gravity[2])
        self.weight = self.mass * self.gravity
        self.contacts = ld.point_contacts(self.feet)
        kp, kd, q0 = self.kp, self.kd, self.q

        def hold(t, s):
            return ld.Inputs(tau=kp * (q0 - s.q) - kd * s.qd)
        self.hold = hold

    def standing(self):
        """The start moved down by ``drop``: the feet on the ground, at rest."""
        C = np.array(self.state.base_pose)
        C[2, 3] -= self.drop
        return ld.State(C, np.zeros(6), self.q, np.zeros(self.model.n_joints))

    def feet_held(self):
        """A :class:`liedyn.ConstraintSet` holding the four feet as points."""
        return ld.ConstraintSet(self.model, [ld.Contact3D(f) for f in self.feet])

    def run(self, duration, event_tol, dt=1e-3, state=None, progress=False):
        """``liedyn.simulate`` with the feet's contacts, friction ``mu``,
        restitution 0 and the PD law, from ``state`` (default: the drop)."""
        return ld.simulate(self.model, self.state if state is None else state, duration,
                           dt=dt, contacts=self.contacts, friction=self.mu, restitution=0.0,
                           controller=self.hold, event_tol=event_tol, progress=progress)

    def run_held(self, duration, dt=1e-3, state=None, progress=False):
        """The same PD law with the four feet held as points
        (``constraints=``), from ``state`` (default: standing)."""
        return ld.simulate(self.model, self.standing() if state is None else state, duration,
                           dt=dt, constraints=self.feet_held(), controller=self.hold,
                           progress=progress)
