"""Control by exact linearization and the flat map of a multirotor base
(SPEC §11, §17).

When the actuators reach the robot through ``ρ − 2`` integrators (elastic
joints: ``ρ = 4``; rotor lag and torque-rate drives: ``ρ = 3``; plain torque
and wrench inputs: ``ρ = 2``), the base pose and the joint angles have
relative degree ``ρ``. One step of the exact linearizing law is then

1. forward dynamics of order ``ρ − 3`` with the force jets the actuator
   state fixes (``τ^(0..ρ−3)``, ``W₀^(0..ρ−3)``) gives ``V₀^(0..ρ−2)`` and
   ``q^(0..ρ−1)`` (skipped for ``ρ = 2``);
2. the tracking errors of orders ``0..ρ−1`` and gains from the desired poles
   set the next rows, ``q^(ρ) = q_d^(ρ) − Σ_k a_k e^(k)`` and ``V₀^(ρ−1)``
   from the base error on SE(3) (SPEC §11.3);
3. one inverse-dynamics call of order ``ρ − 2`` returns ``τ^(ρ−2)`` and
   ``W₀^(ρ−2)``, which the actuator model turns into its input.

The error then obeys the designed linear equation exactly when the law runs
at every stage of :func:`liedyn.simulate`; held between samples
(``control_rate``) it grows as ``1/rate`` (SPEC §11.6).

Glossary
--------
==================  ===============  ==========================================
``ρ``               int              relative degree of base pose and joints
``a``, ``a_b``      (ρ,)             joint and base gains, ``s^ρ + Σ a_k s^k = Π (s − p_i)``
``C_d``, ``V_d``    (4,4), (ρ, 6)    target base pose and spatial twist jet
``q_d``             (ρ+1, n)         target joint jet
``E``, ``x``        (4,4), (6,)      base error ``C_d⁻¹ C₀`` and its logarithm
``V_E``             (6,)             spatial twist of ``E``: ``Ad_{C_d⁻¹}(V₀ − V_d)``
``K``, ``B``        (n,)             joint stiffness and motor inertia (Spong's model)
``θ``               (n,)             motor angles, ``τ = K (θ − q)``
``A``, ``T_m``      (6, m), scalar   thrust allocation (body frame) and rotor time constant
``f``               (m,)             propeller thrusts, ``W^B = A f``
==================  ===============  ==========================================

The laws (:mod:`liedyn.control.laws`) command the whole base wrench ``W₀``
(six independent components: three moments, three forces), so a floating
base must be **fully actuated**, as the paper's tilted hexarotor is. A
quadrotor, whose four parallel thrusts span four wrench components, cannot
apply it; :class:`RotorLagLaw`, which is given the allocation, refuses one
of rank below six and splits the wrench among redundant rotors by minimum
norm. For a parallel-thrust base (quadrotor, coplanar hexarotor) with any
tree on it, :func:`flat_map` (:mod:`liedyn.control.flatness`) turns the flat
outputs ``(x_G, ψ, q)`` into the exact thrust, moments, joint forces and
rotor thrusts of any order, :func:`feasibility` checks them against
limits, and :class:`FlatTrackingLaw` (:mod:`liedyn.control.tracking`) tracks
them with the thrust extended dynamically. :func:`rotor_allocation` builds ``A`` from a list of :class:`Rotor`
(:mod:`liedyn.control.allocation`).

Twists and wrenches are spatial, world axes, about the world origin: a law's
:attr:`reference` is ``"world"``, the default ``reference`` of the library,
and :func:`liedyn.simulate` refuses a law in a run with another one. The
motion a law tracks is its ``target`` (a callable ``target(t) -> Target``). A law
object owns one :class:`liedyn.Workspace` per call it makes, so it serves one
thread at a time.
"""

from .allocation import Rotor, rotor_allocation
from .feasibility import FeasibilityResult, Violation, feasibility
from .flatness import FREE_FALL_RTOL, YAW_SINGULAR_TOL, FlatMapResult, flat_map, flat_map_along
from .tracking import THRUST_MIN_RATIO, FlatTrackingLaw, FlatTrackingStep
from .laws import (ControlStep, ElasticJointLaw, FeedbackLinearization, Linearization,
                   RotorLagLaw, Target, base_error, gains_from_poles)

__all__ = [
    "gains_from_poles", "Target", "base_error", "FeedbackLinearization", "Linearization",
    "ControlStep", "ElasticJointLaw", "RotorLagLaw", "Rotor", "rotor_allocation",
    "FlatMapResult", "flat_map", "flat_map_along", "FREE_FALL_RTOL", "YAW_SINGULAR_TOL",
    "feasibility", "FeasibilityResult", "Violation", "FlatTrackingLaw", "FlatTrackingStep",
    "THRUST_MIN_RATIO",
]
