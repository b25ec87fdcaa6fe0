"""The paper's example robot, installed with the library: the aerial
manipulator (a fully actuated tilted hexarotor carrying two 3-link arms,
SPEC §8) and its reference motion with closed-form jets of every order.

    from liedyn.examples import aerial_manipulator, allocation_matrix, ReferenceMotion
"""

from .aerial_manipulator import (AerialManipulatorParams, aerial_manipulator, allocation_matrix,
                                 body_wrench_jet, propeller_frames, spin_directions,
                                 thrusts_to_wrench, wrench_to_thrusts)
from .reference_motion import ReferenceMotion

__all__ = ["AerialManipulatorParams", "aerial_manipulator", "allocation_matrix",
           "body_wrench_jet", "propeller_frames", "spin_directions", "thrusts_to_wrench",
           "wrench_to_thrusts", "ReferenceMotion"]
