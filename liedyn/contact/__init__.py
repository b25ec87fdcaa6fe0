"""Bilateral constraints: contacts with the world and loop closures, their
Jacobian jets, and the constrained forward and inverse dynamics of any
order (SPEC §13)."""

from .constraints import (ConstraintSet, Contact1D, Contact3D, Contact6D, constraint_error,
                          constraint_jacobian, constraint_wrenches)
from .forward import constrained_forward_dynamics
from .inverse import ConstrainedInverseDynamicsResult, constrained_inverse_dynamics
from .results import ConstrainedForwardDynamicsResult

__all__ = ["ConstraintSet", "Contact6D", "Contact3D", "Contact1D", "constraint_jacobian",
           "constraint_error", "constraint_wrenches", "constrained_forward_dynamics",
           "ConstrainedForwardDynamicsResult", "constrained_inverse_dynamics",
           "ConstrainedInverseDynamicsResult"]
