"""Solo-12 and Go2 (URDFs of example-robot-data, floating base) on four point
or round feet, held at their standing postures by a joint PD law
``τ = K_p (q_s − q) − K_d q̇``, for the contact-event drop tests and studies
(``tests/test_contact_drops.py``, ``experiments/legged_drops.py``,
``experiments/bench_contact_sim.py``).

A :class:`Drop` starts at rest with its lowest foot ``drop`` above the
ground ``z = 0`` (``drop = 0``: standing on it); without feed-forward the
PD law keeps the joints at ``q_s`` in free fall, so the four feet land
together at ``√(2 drop / g)``.

**Round feet** (``round_feet=True``): a sphere at each foot frame's origin
(the centre of the foot's collision mesh), of the radius
:func:`foot_radius` reads from the URDF's ``<collision>`` mesh of the foot
link: the depth of the mesh below the frame's origin at the standing
posture, ``ρ = max_v (−e_zᵀ R v)`` over its vertices ``v`` (``R`` the
frame's orientation), so that the sphere touches the ground where the mesh
does at the first touch-down. Neither URDF has a sphere: Go2's foot is a
convex hull of a ball (ρ = 22.7 mm; a sphere fitted to its
vertices has radius 22.9 mm, centred 2.6 mm from the frame's origin, and
deviates from them by up to 3.4 mm), Solo-12's a wheel of radius 16.0 mm in
the leg's plane (ρ = 16.0 mm), 16.5 mm wide, which the sphere makes round
across the leg as well. **Joint stops** (``joint_stops=True``): every
joint's URDF ``<limit lower upper>`` as a unilateral stop (SPEC §10.2),
restitution 0; Solo-12's are ±10 rad, which no drop reaches.
"""

import warnings
import xml.etree.ElementTree as ET

import numpy as np

import liedyn as ld
from liedyn.parsers.urdf import URDFWarning

from .example_robots import load_robot, robot_path, robots_dir

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
URDFS = {"solo12": lambda: robot_path("solo12"), "go2": lambda: robots_dir() / GO2_URDF}


def foot_mesh(name, foot):
    """The vertices ``(n, 3)`` of the ``<collision>`` mesh of link ``foot``
    in robot ``name``'s URDF, in the link's frame (its ``<origin>`` applied)."""
    from liedyn.viewer.meshes import read_mesh
    from liedyn.viewer.visuals import resolve_mesh_path

    path = URDFS[name]()
    links = [link for link in ET.parse(path).getroot().iter("link") if link.get("name") == foot]
    if len(links) != 1:
        raise ValueError(f"foot: {path.name} has {len(links)} links called {foot!r}")
    meshes = links[0].findall("collision")
    if len(meshes) != 1 or meshes[0].find("geometry/mesh") is None:
        raise ValueError(f"foot: link {foot!r} of {path.name} has no single collision mesh")
    col = meshes[0]
    origin = col.find("origin")
    xyz = np.zeros(3) if origin is None else np.array(origin.get("xyz", "0 0 0").split(), float)
    rpy = np.zeros(3) if origin is None else np.array(origin.get("rpy", "0 0 0").split(), float)
    if np.any(rpy != 0.0):
        raise ValueError(f"foot: link {foot!r} of {path.name}: a rotated collision mesh")
    mesh = col.find("geometry/mesh")
    scale = np.array(mesh.get("scale", "1 1 1").split(), float)
    file = resolve_mesh_path(mesh.get("filename"), str(path.parent),
                             {"example-robot-data": str(robots_dir().parent)})
    return np.concatenate([p.vertices for p in read_mesh(file)]) * scale + xyz


def foot_radius(name):
    """``ρ`` (m) of robot ``name``'s round feet: the largest depth of the
    four feet's collision meshes below their frames' origins at the standing
    posture, ``max_v (−e_zᵀ R v)`` (module docstring)."""
    model, q, feet, _, _ = ROBOTS[name]()
    depth = []
    for foot in feet:
        R = ld.frame_pose(model, np.eye(4), q, foot)[:3, :3]
        depth.append(float(np.max(-(foot_mesh(name, foot) @ R.T)[:, 2])))
    return max(depth)


class Drop:
    """Robot ``name`` (a key of :data:`ROBOTS`) held at its standing posture
    by the PD law, its lowest foot ``drop`` (m) above the ground, at rest; on
    point feet, or on spheres of radius :func:`foot_radius` with
    ``round_feet``; with every joint's URDF limits as stops with
    ``joint_stops`` (module docstring).

    Attributes: ``model``, ``q`` (the standing posture ``q_s``), ``feet``,
    ``mu``, ``kp``, ``kd``, ``drop``, ``radius`` (ρ, 0 for points),
    ``state`` (the start), ``mass``, ``weight`` (``m g``), ``contacts`` (a
    :class:`liedyn.PointContact` per foot), ``joint_stops`` (``True`` or
    ``None``, for :func:`liedyn.simulate`), ``hold`` (the PD controller).
    """

    def __init__(self, name, drop=0.10, *, round_feet=False, joint_stops=False):
        if name not in ROBOTS:
            raise ValueError(f"name: expected one of {sorted(ROBOTS)}, got {name!r}")
        self.name = name
        self.model, self.q, self.feet, self.mu, (self.kp, self.kd) = ROBOTS[name]()
        self.drop = drop
        self.radius = foot_radius(name) if round_feet else 0.0
        self.joint_stops = True if joint_stops else None
        C = np.eye(4)
        z = min(ld.frame_pose(self.model, C, self.q, f)[2, 3] for f in self.feet)
        C[2, 3] = drop - (z - self.radius)
        self.state = ld.State(C, np.zeros(6), self.q, np.zeros(self.model.n_joints))
        self.mass = float(np.sum(self.model.body_mass))
        self.gravity = float(-self.model.gravity[2])
        self.weight = self.mass * self.gravity
        self.contacts = ld.point_contacts(self.feet, radius=self.radius)
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
        restitution 0 and the PD law (and the joint stops, restitution 0),
        from ``state`` (default: the drop)."""
        return ld.simulate(self.model, self.state if state is None else state, duration,
                           dt=dt, contacts=self.contacts, friction=self.mu, restitution=0.0,
                           controller=self.hold, event_tol=event_tol, progress=progress,
                           joint_stops=self.joint_stops, stop_restitution=0.0)

    def run_held(self, duration, dt=1e-3, state=None, progress=False):
        """The same PD law with the four feet held as points
        (``constraints=``), from ``state`` (default: standing)."""
        return ld.simulate(self.model, self.standing() if state is None else state, duration,
                           dt=dt, constraints=self.feet_held(), controller=self.hold,
                           progress=progress)
