"""The values the paper does not print, with the value used and why, as a
Markdown table for ``paper_figures/README.md``. The values are read from the
models' defaults, so the table cannot drift from the code. No plotting.
"""

import inspect

import numpy as np

from experiments import _borinot as borinot
from models.aerial_manipulator import AerialManipulatorParams, spin_directions
from models.reference_motion import ReferenceMotion
from models.trees import AXES, benchmark_tree


def _deg(x):
    return f"{np.rad2deg(x):g}°"


def rows():
    """``[(quantity, value used, why)]``."""
    P, R = AerialManipulatorParams(), ReferenceMotion()
    tree = {k: v.default for k, v in inspect.signature(benchmark_tree).parameters.items()}
    spins = ", ".join(f"{s:+.0f}" for s in spin_directions())
    axes = ", ".join("(" + ", ".join(f"{c:g}" for c in a) + ")" for a in AXES)
    return [
        ("propeller arm `a` (centre of the base to each propeller)", f"{P.prop_arm:g} m",
         "a 0.5 m-diameter hexarotor, the usual frame for a 2.5 kg platform with 10-inch "
         "propellers (the paper's ref. [56], Rajappa et al. 2015, which its Fig. 2 draws)"),
        ("cant angle `α` (tilt of propeller i about its arm, `R_x(α_i)`)",
         f"±{_deg(P.prop_cant)}, `α_i = (−1)^(i+1) α` (propeller 1 positive)",
         "fixed-tilt hexarotors alternate the cant around the frame for full actuation; at 30° "
         "each rotor keeps cos α ≈ 0.87 of its thrust for hovering, and the allocation matrix "
         "with moments scaled by 1/a has condition number √6 ≈ 2.45"),
        ("dihedral angle `β` (`R_y(β)`)", _deg(P.prop_dihedral),
         "tilting about the arm alone already gives full actuation"),
        ("drag ratio `κ` (drag moment / thrust)", f"{P.drag_ratio:g} m",
         "torque-to-thrust coefficient ratio of 10-inch propellers, typically 0.01–0.02 m"),
        ("spin directions `s_i` (sign of the drag moment about z_i), i = 1..6", spins,
         "neighbouring rotors spin opposite; paired with the cant signs so that the yaw moment "
         "of the tilted thrust and the drag moment add (the other pairing raises the "
         "allocation matrix's condition number from 6.2 to 7.8)"),
        ("joint-axis order, shoulder to wrist (q₂, q₃, q₄ and q₅, q₆, q₇)", axes,
         "the paper prints e_i = (0,1,0), e_k = (1,0,0), e_l = (0,0,1) without saying which "
         "joint each letter means; i is the first link of an arm in its placements "
         "(A^{B_p(i)}_{B_i}), so the letters are read in order, shoulder to wrist"),
        ("joint positions", f"each joint `d` = {P.d:g} m above its link's centre of mass "
         f"(links `2d` apart)",
         "the paper gives the centre-of-mass frames (T_z(−b−d) T_x(±c/2), then T_z(−2d)) "
         "but not the points p̄_j on the joint axes; d above the CoM puts each joint where "
         "the previous link ends"),
        ("which arm is at x = +c/2", "q₂…q₄ at +c/2, q₅…q₇ at −c/2",
         "from the paper's A = T_z(−b−d) T_x((−1)^i c/2) with i = 2 and 5"),
        ("joint names", "liedyn's q columns 0…5 (`model.joint_names` arm1_link1 … arm2_link3) "
         "are the paper's q₂…q₇ (body B_j carries q_j)",
         "the paper numbers joints after their child body, B₁ being the base"),
        ("trajectory phase of the base circle", "p(0) = (ρ, 0, 0): phase 0; angular rate "
         f"Ω = 2π/{2 * np.pi / R.circle_rate:g} rad/s",
         "Table 3's \"trajectory phase 2π/20 rad/s\" has units of a rate, read as Ω; the "
         "initial angle is not printed"),
        ("yaw profile", f"ψ(t) = {_deg(R.yaw_amplitude)} · sin(2π t / {2 * np.pi / R.yaw_rate:g})",
         "the paper gives amplitude and frequency, not sine or cosine; the sine starts at "
         "zero yaw, the pose of the home configuration"),
        ("initial joint angles and amplitudes", "Table 3's entries 2…7 for q₂…q₇",
         "Table 3 prints seven entries with a leading 0, read as the base's slot"),
        ("gravity", f"{P.gravity:g} m/s² along −z of the world", "not printed; standard value"),
        ("benchmark tree layout", f"{tree['n_branches']} branches hung `b` = {tree['b']:g} m below "
         f"the base centre of mass on a circle of radius {tree['radius']:g} m at angles 2πi/5; "
         "links as the arms' (mass, inertia, 2d spacing, joint d above the CoM), axes cycling "
         f"{axes}",
         "the paper says only \"the tree of Fig. 2 with 5 branches and 20 bodies per branch\"; "
         "the radius is the arms' offset c/2 from the base axis"),
        ("benchmark inputs", "base at identity; every jet entry drawn from N(0, 1), one seed per "
         "point", "Table 4 says \"chosen randomly per sweep\" without a distribution"),
        ("CasADi forward map", "articulated-body algorithm with `mtimes` and one 6×6 `solve` for "
         "V̇₀ (Fig. 4c); the whole (6+n) mass matrix with LDLᵀ as a second curve",
         "Table 4: \"the FD graph includes CasADi built-ins mtimes and solve (for base "
         "twist)\": in the order-0 articulated-body algorithm the base twist is the only "
         "quantity found by a linear solve"),
        ("Borinot's rotors (`borinot_flying_arm_2` of example-robot-data, whose URDF has "
         "none)", f"six coplanar rotors, thrust along the base's z, on a circle of radius "
         f"{borinot.ROTOR_RADIUS:g} m at angles "
         + ", ".join(f"{a:g}°" for a, _ in borinot.ROTORS)
         + f", {borinot.ROTOR_HEIGHT:g} m above the base frame; spins "
         + ", ".join(f"{s:+d}" for _, s in borinot.ROTORS)
         + f" (+1 counter-clockwise); drag ratio κ = {borinot.DRAG_RATIO:.6g} m; "
         f"f_max = {borinot.F_MAX:.4g} N per rotor",
         "the robot's published description (the hidro_robots package the URDF comes from: "
         "robots/borinot/xacro/definition.urdf.xacro places the rotors, "
         "robots/common/xacro/multicopter.xacro gives momentConstant = κ, motorConstant "
         f"{borinot.THRUST_COEFF:g} N s² and maxRotVelocity {borinot.SPEED_MAX:g} rad/s, so "
         "f_max = c_f Ω_max²); Borinot is a coplanar hexarotor, not a quadrotor"),
        ("the paper's hexarotor \"flown as a quadrotor\" (`borinot_flight`)",
         "arms locked (one rigid body); the underactuated laws command the thrust along the "
         "base's z and three moments, the 6×6 allocation gives the six thrusts "
         "A⁻¹ (M^B, 0, 0, f)",
         "its tilted rotors are not parallel, so the parallel-thrust split does not apply; the "
         "lateral force it could make is left unused, as a quadrotor cannot make one"),
    ]


def markdown():
    """The table as Markdown."""
    lines = ["| quantity | value used | why |", "|---|---|---|"]
    lines += [f"| {q} | {v} | {w} |" for q, v, w in rows()]
    return "\n".join(lines)
