"""Robots for the tests: URDFs shipped by example-robot-data (loaded by
liedyn and by Pinocchio's own parser, then paired), random trees with named
frames, smooth trajectories with their jets."""

import functools

import numpy as np

from liedyn import ModelBuilder, Prismatic, Revolute, se3
from models.example_robots import (ROBOTS, load_robot, pinocchio_from_urdf,  # noqa: F401
                                   robot_path, robots_dir)
from models.trees import joint_sample, random_inertia  # noqa: F401  (tests import it from here)
from tests.helpers import integrate_pose, poly_jet


REAL_ROBOTS = {k: v for k, v in ROBOTS.items() if k != "baxter"}


@functools.cache
def real_robot(name):
    """``(liedyn model, PinocchioModel pairing it with Pinocchio's parse of the
    same file)``; cached, the pair's ``data`` is shared."""
    from liedyn.interop.pinocchio import pair
    model = load_robot(name)
    return model, pair(model, pinocchio_from_urdf(robot_path(name), model.floating_base))


def tree_with_frames(rng, n_bodies, floating_base=True, n_frames=3):
    """A random tree (random joint types, axes, points, origins, physical
    inertias, parents drawn from all earlier bodies) with named frames at
    random offsets on random bodies."""
    b = ModelBuilder(floating_base=floating_base)
    b.add_body("base", None, None, se3.exp(rng.normal(size=6) * 0.5), random_inertia(rng))
    for j in range(1, n_bodies):
        parent = int(rng.integers(0, j))
        if rng.uniform() < 0.3:
            joint = Prismatic(rng.normal(size=3), armature=rng.uniform(0, 0.05),
                              damping=rng.uniform(0, 0.3))
        else:
            joint = Revolute(rng.normal(size=3), point=rng.normal(size=3) * 0.2,
                             armature=rng.uniform(0, 0.05), damping=rng.uniform(0, 0.3))
        origin = se3.exp(np.concatenate([rng.normal(size=3), rng.normal(size=3) * 0.3]))
        b.add_body(f"body{j}", parent, joint, origin, random_inertia(rng))
    for f in range(n_frames):
        b.add_frame(f"frame{f}", int(rng.integers(0, n_bodies)),
                    se3.exp(np.concatenate([rng.normal(size=3), rng.normal(size=3) * 0.3])))
    return b.build()


class Trajectory:
    """A smooth motion with analytic jets: ``q(t)`` and ``V₀(t)`` polynomials
    (``x(t) = Σ_k c_k t^k / k!``) and the base pose solving ``Ċ₀ = [V₀] C₀``.

    ``state(t, rows)`` returns ``(C₀(t), V₀ jet (rows, 6) or None, q jet
    (rows + 1, n))``; ``C₀(t)`` is integrated on SE(3) with a fourth-order
    Magnus method, so the poses at ``±h`` are exact to ~1e-15.
    """

    def __init__(self, model, rng, degree=9, q0=None, speed=1.0):
        n = model.n_joints
        self.model = model
        self.qc = rng.normal(size=(degree + 1, n)) * speed
        self.qc[0] = joint_sample(model, rng) if q0 is None else q0
        self.Vc = rng.normal(size=(degree + 1, 6)) * speed if model.floating_base else None
        self.C0 = se3.exp(rng.normal(size=6) * 0.5) if model.floating_base else model.home_pose

    _jet = staticmethod(poly_jet)     # the jet of Σ_k c_k t^k / k! (tests use it as well)

    def base_pose(self, t):
        if not self.model.floating_base:
            return self.model.home_pose
        return integrate_pose(self.C0, lambda s: self._jet(self.Vc, s, 1)[0], t)

    def state(self, t, rows):
        V = self._jet(self.Vc, t, rows) if self.model.floating_base else None
        return self.base_pose(t), V, self._jet(self.qc, t, rows + 1)


def central_difference_errors(f, jet_at_zero, h):
    """``max |(f(h) − f(−h)) / 2h − jet_at_zero|`` for the steps ``h`` and ``h/2``."""
    return [float(np.max(np.abs((f(s) - f(-s)) / (2 * s) - jet_at_zero))) for s in (h, h / 2)]
