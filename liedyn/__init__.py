"""liedyn: higher-order time derivatives of floating-base rigid-body dynamics
on Lie groups (spatial twists, base on the whole of SE(3))."""

import sys as _sys

from .spatial import se3
from .multibody.model import Model, ModelBuilder, Prismatic, Revolute, check_inertia
from .multibody.results import (ForwardDynamicsResult, HybridDynamicsResult,
                                InverseDynamicsResult, KinematicsResult)
from .multibody.workspace import Workspace
from ._routes import forward_dynamics_batch, inverse_dynamics_batch
from .algorithm.centroidal import CentroidalResult, centroidal, centroidal_momentum_matrix
from .algorithm.closed_form import (ClosedFormJets, closed_form_inverse_dynamics,
                                    closed_form_jets, coriolis_matrix, damping_matrix,
                                    gravity_vector, mass_matrix)
from .algorithm.forward import forward_dynamics
from .algorithm.frames import FrameKinematicsResult, frame_jacobian, frame_kinematics, frame_pose
from .algorithm.hybrid import hybrid_dynamics
from .algorithm.ik import InverseKinematicsResult, inverse_kinematics
from .algorithm.inverse import inverse_dynamics
from .algorithm.kinematics import forward_kinematics
from .parsers.urdf import URDFError, URDFWarning, load_urdf, parse_urdf
from .parsers.mjcf import MJCFError, MJCFWarning, load_mjcf
from .simulation import (ContactEvent, Diagnosis, InputLimits, InputLimitWarning, Inputs,
                         LimitViolation, SimulationError, State, Trajectory, project_state,
                         simulate)
from .contact import (ConstrainedForwardDynamicsResult, ConstrainedInverseDynamicsResult,
                      ConstraintSet, Contact1D, Contact3D, Contact6D, JointStop,
                      RollingContact, constrained_forward_dynamics, constrained_inverse_dynamics,
                      constraint_error, constraint_jacobian, constraint_wrenches)
from .contact import (FrictionDistributionResult, GapResult, ImpactResult, Plane, PointContact,
                      UnilateralResult, contact_gaps, friction_cone_distribution,
                      friction_cone_margin, impact, impulse_dynamics, point_contacts,
                      time_to_slip, unilateral_forward_dynamics)
from . import control, trajectory

# The SE(3) module lives in liedyn/spatial/se3.py; its public name stays
# liedyn.se3 (``ld.se3.exp``, ``import liedyn.se3``, ``from liedyn.se3 import exp``),
# the same module object under both names.
_sys.modules[__name__ + ".se3"] = se3
del _sys

__all__ = [
    "se3", "Model", "ModelBuilder", "Revolute", "Prismatic", "check_inertia", "Workspace",
    "forward_kinematics", "KinematicsResult",
    "inverse_dynamics", "InverseDynamicsResult",
    "forward_dynamics", "ForwardDynamicsResult",
    "hybrid_dynamics", "HybridDynamicsResult",
    "mass_matrix", "coriolis_matrix", "gravity_vector", "damping_matrix",
    "closed_form_jets", "ClosedFormJets", "closed_form_inverse_dynamics",
    "inverse_dynamics_batch", "forward_dynamics_batch",
    "frame_pose", "frame_kinematics", "frame_jacobian", "FrameKinematicsResult",
    "centroidal", "CentroidalResult", "centroidal_momentum_matrix",
    "inverse_kinematics", "InverseKinematicsResult",
    "load_urdf", "parse_urdf", "URDFError", "URDFWarning",
    "load_mjcf", "MJCFError", "MJCFWarning",
    "simulate", "State", "Inputs", "Trajectory", "SimulationError", "project_state", "ContactEvent",
    "InputLimits", "LimitViolation", "InputLimitWarning", "Diagnosis",
    "ConstraintSet", "Contact6D", "Contact3D", "Contact1D", "RollingContact", "JointStop",
    "constraint_jacobian",
    "constraint_error", "constraint_wrenches", "constrained_forward_dynamics",
    "ConstrainedForwardDynamicsResult", "constrained_inverse_dynamics",
    "ConstrainedInverseDynamicsResult",
    "Plane", "PointContact", "point_contacts", "contact_gaps", "GapResult",
    "unilateral_forward_dynamics", "UnilateralResult", "impact", "impulse_dynamics",
    "ImpactResult", "friction_cone_margin", "time_to_slip", "friction_cone_distribution",
    "FrictionDistributionResult",
    "control", "trajectory",
]
__version__ = "0.1.0"
