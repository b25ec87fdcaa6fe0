"""Robots for the unilateral contact tests: a box on four corner points,
Solo-12 standing, and a motion that keeps contacts still."""

import numpy as np

import liedyn as ld
from liedyn import se3
from models.example_robots import load_robot

BOX_MASS = 2.0
BOX_INERTIA = np.diag([0.1, 0.2, 0.3])
BOX_CORNERS = [(0.3, 0.2), (0.3, -0.2), (-0.3, 0.2), (-0.3, -0.2)]   # (x, y) of c0..c3
BOX_DEPTH = 0.1                                                      # corners at z = −0.1
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
STAND = {"HAA": 0.0, "HFE": 0.8, "KFE": -1.6}


def box():
    """A floating box (no joints), centre of mass at its origin, with
    frames ``c0..c3`` at its four lower corners."""
    b = ld.ModelBuilder()
    inertia = np.zeros((6, 6))
    inertia[:3, :3] = BOX_INERTIA
    inertia[3:, 3:] = BOX_MASS * np.eye(3)
    b.add_body("box", None, None, np.eye(4), inertia)
    for i, (x, y) in enumerate(BOX_CORNERS):
        X = np.eye(4)
        X[:3, 3] = [x, y, -BOX_DEPTH]
        b.add_frame(f"c{i}", "box", X)
    return b.build()


def box_on_ground():
    """The box resting with its corners on the ground ``z = 0``."""
    C0 = np.eye(4)
    C0[2, 3] = BOX_DEPTH
    return C0


def solo():
    return load_robot("solo12")


def solo_standing(model, height=0.3, tilt=None):
    """Solo-12's base pose and standing joint angles (knees bent: front
    ``HFE 0.8, KFE −1.6``, hind mirrored), the base at ``height``
    (optionally rotated by the rotation vector ``tilt``)."""
    q = np.zeros(model.n_joints)
    for i, name in enumerate(model.joint_names):
        leg, joint = name.split("_")
        q[i] = STAND[joint] * (1.0 if leg[0] == "F" else -1.0)
    C0 = np.eye(4)
    if tilt is not None:
        C0 = se3.exp(np.concatenate([tilt, np.zeros(3)]))
    C0[2, 3] = height
    return C0, q


def foot_points(model, C0, q):
    """World positions (4, 3) of Solo's feet."""
    return np.array([ld.frame_pose(model, C0, q, f)[:3, 3] for f in FEET])


def null_velocity(model, cs, C0, q0, rng, scale=1.0):
    """``(V₀ (1, 6), q (2, n))``: a random velocity with ``J ν = 0``."""
    J = ld.constraint_jacobian(model, cs, C0, None, q0[None], 0)[0]
    _, s, Vt = np.linalg.svd(J)
    rank = int(np.sum(s > 1e-10 * s[0]))
    N = Vt[rank:].T
    nu = scale * N @ (N.T @ rng.normal(size=model.nv))
    return nu[None, :6], np.vstack([q0, nu[6:]])
