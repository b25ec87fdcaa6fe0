"""Tests of rotor allocations (SPEC §11.5, §17.4): the allocation of a list of
rotors against the paper's hexarotor and a quadrotor's closed form, and
:class:`liedyn.control.RotorLagLaw` on a redundant (6, 8) allocation, its
input against the plant's response computed independently."""

import numpy as np
import pytest

import liedyn
from liedyn import State, control, se3
from models.aerial_manipulator import (AerialManipulatorParams, aerial_manipulator,
                                       allocation_matrix, body_wrench_jet, propeller_frames,
                                       spin_directions)
from models.reference_motion import ReferenceMotion
from tests.helpers import assert_close

from experiments import elastic_tracking as et


def test_the_paper_hexarotor_from_its_rotors():
    """Each propeller frame's origin and z axis, its spin (the paper's ``s_i``
    is the sign of the drag moment, opposite to the spin) and drag ratio give
    the paper's allocation matrix (built there by ``Ad_{C_p}^{−T}``)."""
    P = AerialManipulatorParams()
    rotors = [control.Rotor(C[:3, 3], C[:3, 2], int(-s), P.drag_ratio)
              for C, s in zip(propeller_frames(P), spin_directions())]
    assert_close(control.rotor_allocation(rotors), allocation_matrix(P), 0.0, 1e-15,
                 what="allocation")


def test_a_quadrotor_in_x_layout_has_the_closed_form_columns():
    """Rotor at ``(d, d, 0)`` turning counter-clockwise: roll ``d f``, pitch
    ``−d f``, yaw ``−κ f``; equal thrusts make pure lift."""
    d, kappa = 0.2, 0.02
    rotors = [control.Rotor((x * d, y * d, 0.0), (0.0, 0.0, 2.0), s, kappa)
              for x, y, s in ((1, 1, 1), (-1, 1, -1), (-1, -1, 1), (1, -1, -1))]
    A = control.rotor_allocation(rotors)
    assert_close(A[:, 0], np.array([d, -d, -kappa, 0.0, 0.0, 1.0]), 0.0, 1e-16, what="rotor 0")
    assert_close(A @ np.full(4, 2.5), np.array([0.0, 0.0, 0.0, 0.0, 0.0, 10.0]), 0.0, 1e-15,
                 what="hover")
    assert np.linalg.matrix_rank(A) == 4


def test_bad_rotors_are_refused_by_name():
    good = control.Rotor((0.2, 0.0, 0.0), (0.0, 0.0, 1.0), 1, 0.01)
    with pytest.raises(TypeError, match="rotors: expected a sequence"):
        control.rotor_allocation(good)
    with pytest.raises(ValueError, match="rotors: expected at least one"):
        control.rotor_allocation([])
    with pytest.raises(TypeError, match=r"rotors\[1\]: expected a liedyn.control.Rotor"):
        control.rotor_allocation([good, (0, 0, 1)])
    with pytest.raises(ValueError, match=r"rotors\[0\].axis: expected a nonzero"):
        control.rotor_allocation([good._replace(axis=(0.0, 0.0, 0.0))])
    with pytest.raises(ValueError, match=r"rotors\[0\].spin"):
        control.rotor_allocation([good._replace(spin=0)])
    with pytest.raises(ValueError, match=r"rotors\[0\].drag_ratio"):
        control.rotor_allocation([good._replace(drag_ratio=-1.0)])
    with pytest.raises(ValueError, match=r"rotors\[0\].position"):
        control.rotor_allocation([good._replace(position=(np.nan, 0.0, 0.0))])


def _octorotor(arm=0.3, tilt=0.4, kappa=0.016):
    """Eight rotors on a ring, thrust axes tilted alternately about the arm:
    rank 6, redundant."""
    rotors = []
    for i in range(8):
        a = i * np.pi / 4
        radial = np.array([np.cos(a), np.sin(a), 0.0])
        tangent = np.array([-np.sin(a), np.cos(a), 0.0])
        axis = np.cos(tilt) * np.array([0.0, 0.0, 1.0]) + (-1) ** i * np.sin(tilt) * tangent
        rotors.append(control.Rotor(arm * radial, axis, (-1) ** i, kappa))
    return control.rotor_allocation(rotors)


def test_rotor_lag_law_splits_a_redundant_allocation_by_minimum_norm():
    """Eight rotors (6, 8): the actuator state's thrusts produce the target's
    body wrench with the minimum norm (orthogonal to the null space of
    ``A``), the commanded thrust rate stays in that range, and under it the
    plant (``Ẇᴮ = A ḟ``, mapped to the world, then forward dynamics of order
    1) follows the designed error dynamics."""
    m = aerial_manipulator()
    A = _octorotor()
    null = np.linalg.svd(A)[2][6:]
    target = et.reference_target(ReferenceMotion(), 3)
    law = control.RotorLagLaw(m, et.ROTOR_POLES, target, allocation=A, time_constant=0.05)
    assert law.n_extra == 8 + m.n_joints
    rng = np.random.default_rng(5)
    T = target(0.7)
    q = np.array(T.q)
    q[:3] += rng.normal(size=(3, 6)) * 0.1
    Cp = se3.exp(rng.normal(size=6) * 0.1) @ T.base_pose
    V = T.base_twist + rng.normal(size=T.base_twist.shape) * 0.1
    moved = control.Target(q=q, base_pose=Cp, base_twist=V)
    x = law.actuator_state(moved)
    f = x[:8]
    W0 = liedyn.inverse_dynamics(m, Cp, V, q, 0).base_wrench[0]
    assert_close(law.base_wrench(Cp, f), W0, 0.0, 1e-12 * np.abs(W0).max(), what="A f")
    assert np.abs(null @ f).max() < 1e-12 * np.abs(f).max()
    state = State(base_pose=Cp, base_twist=V[0], q=q[0], qd=q[1], extra=x)
    u = law(0.7, state)
    f_dot = (u[:8] - f) / 0.05
    assert np.abs(null @ f_dot).max() < 1e-12 * np.abs(f_dot).max()
    Wb_dot = A @ f_dot
    base = body_wrench_jet(Cp, V[:1], np.stack([W0, np.zeros(6)]))[1]
    J = np.stack([body_wrench_jet(Cp, V[:1], np.stack([W0, e]))[1] - base
                  for e in np.eye(6)], axis=1)
    W0_dot = np.linalg.solve(J, Wb_dot - base)
    tau = np.stack([x[8:], u[8:]])
    fd = liedyn.forward_dynamics(m, Cp, V[:1], q[:2], 1, tau=tau,
                                 base_wrench=np.stack([W0, W0_dot]))
    a = control.gains_from_poles(et.ROTOR_POLES)
    e = fd.q - T.q[:4]
    assert_close(e[3] + a @ e[:3], np.zeros(6), rtol=0,
                 atol=1e-10 * np.max(np.abs(a[:, None] * e[:3])), what="joint error dynamics")
    eb = control.base_error(Cp, fd.base_twist, T.base_pose, T.base_twist[:3])
    assert_close(eb[3] + a @ eb[:3], np.zeros(6), rtol=0,
                 atol=1e-10 * np.max(np.abs(a[:, None] * eb[:3])), what="base error dynamics")
