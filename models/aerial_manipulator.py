"""The aerial manipulator of the paper's experiments (SPEC §8, Table 3): a
hexarotor base carrying two 3-link arms.

Base frame at the hexarotor's CoM, home pose identity. The arms hang ``b``
below the base CoM at lateral offsets ``x = +c/2`` (joints 1–3) and
``x = −c/2`` (joints 4–6). Link CoM frames: first link ``T_z(−b−d) T_x(±c/2)``
from the base CoM, each next link ``T_z(−2d)`` from its parent; each joint sits
``d`` above its link's CoM. Joint axes, shoulder to wrist: ``(0,1,0)``,
``(1,0,0)``, ``(0,0,1)``.
"""

from dataclasses import dataclass

import numpy as np

from liedyn import Model, Revolute, se3

from .trees import AXES, translation


@dataclass(frozen=True)
class AerialManipulatorParams:
    """Table 3 of the paper (SI units)."""

    base_mass: float = 2.5
    base_inertia: tuple = (0.03, 0.03, 0.05)
    link_mass: float = 0.25
    link_inertia: tuple = (0.002, 0.002, 0.001)
    b: float = 0.10       # arm attachment below the base CoM
    c: float = 0.18       # lateral distance between the arms
    d: float = 0.06       # half link length
    gravity: float = 9.81


def aerial_manipulator(params=AerialManipulatorParams(), floating_base=True):
    """The 7-body, 6-joint tree of the paper's aerial manipulator."""
    P = params
    m = Model(floating_base=floating_base, gravity=(0.0, 0.0, -P.gravity))
    m.add_body("base", None, None, np.eye(4),
               se3.spatial_inertia(P.base_mass, np.zeros(3), np.diag(P.base_inertia)))
    Ml = se3.spatial_inertia(P.link_mass, np.zeros(3), np.diag(P.link_inertia))
    for arm, sign in ((1, 1.0), (2, -1.0)):
        parent = "base"
        for k in range(3):
            origin = (translation(x=sign * P.c / 2.0, z=-P.b - P.d) if k == 0
                      else translation(z=-2.0 * P.d))
            name = f"arm{arm}_link{k + 1}"
            m.add_body(name, parent, Revolute(AXES[k], point=(0.0, 0.0, P.d)), origin, Ml)
            parent = name
    return m
