"""Simulation: forward dynamics integrated in time, the base pose on SE(3)
(SPEC §10).

=================  ===================================================
``state``          :class:`State`, :class:`Inputs`, :class:`Trajectory`,
                   :class:`SimulationError`
``integrator``     the RKMK4 stages and steps, compiled
``driver``         :func:`simulate` and :func:`project_state`, above the
                   step loop and the events
``run``            the step loop
``constraints``    held contacts and loops: the constrained stage, the
                   drift control
``events``         unilateral contacts that open, close, stick and slide:
                   events located on the step, the switches
``locate``         the watched functions, the step's dense output and
                   the location of their zeros
``modes``          those contacts in one set of modes: kinematics, the
                   held set, the forces and the sliding friction
``limits``         inputs against their limits: :class:`InputLimits`,
                   the report, the saturation
``diagnosis``      the fastest mode of a diverged run and the step
                   RK4 needs for it
=================  ===================================================
"""

from .diagnosis import Diagnosis
from .events import ContactEvent
from .limits import InputLimits, InputLimitWarning, LimitViolation
from .driver import project_state, simulate
from .state import Inputs, SimulationError, State, Trajectory

__all__ = ["simulate", "ContactEvent", "State", "Inputs", "Trajectory", "SimulationError",
           "project_state", "InputLimits", "LimitViolation", "InputLimitWarning", "Diagnosis"]
