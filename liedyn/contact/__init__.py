"""Constraints and contacts: bilateral contacts with the world and loop
closures, their Jacobian jets, and the constrained forward and inverse
dynamics of any order; unilateral point contacts against planes, impacts
and Coulomb friction (SPEC §13)."""

from .constraints import (ConstraintSet, Contact1D, Contact3D, Contact6D, JointStop,
                          RollingContact, constraint_error, constraint_jacobian,
                          constraint_wrenches)
from .forward import constrained_forward_dynamics
from .inverse import ConstrainedInverseDynamicsResult, constrained_inverse_dynamics
from .results import ConstrainedForwardDynamicsResult
from .gaps import GapResult, Plane, PointContact, contact_gaps, point_contacts
from .unilateral import UnilateralResult, unilateral_forward_dynamics
from .impact import ImpactResult, impact, impulse_dynamics
from .friction import (FrictionDistributionResult, friction_cone_distribution,
                       friction_cone_margin, time_to_slip)

__all__ = ["ConstraintSet", "Contact6D", "Contact3D", "Contact1D", "RollingContact",
           "JointStop", "constraint_jacobian",
           "constraint_error", "constraint_wrenches", "constrained_forward_dynamics",
           "ConstrainedForwardDynamicsResult", "constrained_inverse_dynamics",
           "ConstrainedInverseDynamicsResult", "Plane", "PointContact", "point_contacts",
           "contact_gaps", "GapResult", "unilateral_forward_dynamics", "UnilateralResult",
           "impact", "impulse_dynamics", "ImpactResult", "friction_cone_margin", "time_to_slip",
           "friction_cone_distribution", "FrictionDistributionResult"]
