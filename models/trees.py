"""Benchmark trees (SPEC §9), random trees and a free rigid body for tests
and experiments, and joint positions drawn within a model's limits.

``benchmark_tree(n_branches, bodies_per_branch)`` grows the aerial
manipulator's pattern: a base carrying ``n_branches`` serial chains of
``bodies_per_branch`` links each, joint axes cycling ``(0,1,0)``, ``(1,0,0)``,
``(0,0,1)`` from shoulder to wrist, so ``N = 1 + n_branches · bodies_per_branch``.
"""

import numpy as np

from liedyn import ModelBuilder, Prismatic, Revolute, se3
from liedyn.examples.aerial_manipulator import AXES, translation  # noqa: F401


def box_inertia(mass, dims):
    """Inertia of a solid box of side lengths ``dims`` about its centre."""
    a, b, c = np.square(dims)
    return se3.spatial_inertia(mass, np.zeros(3), mass / 12.0 * np.diag([b + c, a + c, a + b]))


def benchmark_tree(n_branches=5, bodies_per_branch=20, floating_base=True,
                   base_mass=2.5, base_inertia=(0.03, 0.03, 0.05),
                   link_mass=0.25, link_inertia=(0.002, 0.002, 0.001),
                   b=0.10, d=0.06, radius=0.09):
    """The paper's benchmark tree: ``n_branches`` chains hung below the base.

    Chain ``i`` starts ``b`` below the base CoM at angle ``2π i / n_branches``
    on a circle of ``radius``; each link's CoM lies ``2d`` below its parent's
    and its joint ``d`` above its CoM (the aerial manipulator's geometry).
    """
    if n_branches < 1 or bodies_per_branch < 1:
        raise ValueError("n_branches and bodies_per_branch must be ≥ 1")
    m = ModelBuilder(floating_base=floating_base)
    m.add_body("base", None, None, np.eye(4),
               se3.spatial_inertia(base_mass, np.zeros(3), np.diag(base_inertia)))
    Ml = se3.spatial_inertia(link_mass, np.zeros(3), np.diag(link_inertia))
    for i in range(n_branches):
        ang = 2.0 * np.pi * i / n_branches
        parent = "base"
        for k in range(bodies_per_branch):
            origin = (translation(radius * np.cos(ang), radius * np.sin(ang), -b - d)
                      if k == 0 else translation(z=-2.0 * d))
            name = f"branch{i}_link{k}"
            m.add_body(name, parent, Revolute(AXES[k % 3], point=(0.0, 0.0, d)), origin, Ml)
            parent = name
    return m.build()


def random_tree(rng, n_bodies, floating_base=True, prismatic_fraction=0.3,
                armature=False, damping=False, shuffle=True, gravity=(0.0, 0.0, -9.81)):
    """A random tree with random joint types, axes, origins and physical inertias.

    With ``shuffle`` the parent of each new body is drawn from all earlier
    bodies, so subtrees do not occupy contiguous index ranges.
    """
    m = ModelBuilder(floating_base=floating_base, gravity=gravity)
    m.add_body("base", None, None, se3.exp(rng.normal(size=6) * 0.5), random_inertia(rng))
    for j in range(1, n_bodies):
        parent = int(rng.integers(0, j)) if shuffle else j - 1
        kw = {}
        if armature:
            kw["armature"] = rng.uniform(0.0, 0.1)
        if damping:
            kw["damping"] = rng.uniform(0.0, 0.5)
        if rng.uniform() < prismatic_fraction:
            joint = Prismatic(rng.normal(size=3), **kw)
        else:
            joint = Revolute(rng.normal(size=3), point=rng.normal(size=3) * 0.2, **kw)
        origin = se3.exp(np.concatenate([rng.normal(size=3), rng.normal(size=3) * 0.3]))
        m.add_body(f"body{j}", parent, joint, origin, random_inertia(rng))
    return m.build()


def random_inertia(rng, mass_range=(0.3, 2.0)):
    """A physical random inertia: a rotated box with an offset centre of mass."""
    mass = rng.uniform(*mass_range)
    a, b, c = np.square(rng.uniform(0.05, 0.5, 3))
    R = se3.exp_so3(rng.normal(size=3))
    J = R @ (mass / 12.0 * np.diag([b + c, a + c, a + b])) @ R.T
    return se3.spatial_inertia(mass, rng.normal(size=3) * 0.1, J)


def tumbling_body():
    """One free rigid body with distinct principal moments (0.1, 0.2, 0.3)
    and an offset centre of mass, no gravity: spun about its intermediate
    axis it tumbles."""
    b = ModelBuilder(floating_base=True, gravity=(0.0, 0.0, 0.0))
    b.add_body("body", None, None, np.eye(4),
               se3.spatial_inertia(1.5, (0.01, 0.02, -0.01), np.diag([0.1, 0.2, 0.3])))
    return b.build()


def joint_sample(model, rng):
    """Joint positions ``(n,)`` uniform within the limits (``[−π, π]`` where
    there are none); one ``rng.uniform`` draw."""
    lo, hi = model.joint_lower, model.joint_upper
    lo = np.where(np.isfinite(lo), lo, -np.pi)
    hi = np.where(np.isfinite(hi), hi, np.pi)
    return rng.uniform(lo, hi)
