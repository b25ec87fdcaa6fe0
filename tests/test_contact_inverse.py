"""Constrained inverse dynamics (SPEC §13.3) against independent routes: the
constrained forward dynamics (articulated-body passes) in both directions,
central differences in time of the order-0 solution along a motion that
keeps the contacts, the minimum-norm optimality condition, and the whole
robot's Newton–Euler balance through H-GRNE with the forces applied."""

import numpy as np
import pytest

import liedyn as ld
from liedyn import se3
from models.example_robots import load_robot
from tests.helpers import assert_close, integrate_pose, poly_jet


def _consistent_state(model, cs, C0, q0, rng):
    """A velocity with ``J ν = 0``: a random one projected on the null space of ``J``."""
    J = ld.constraint_jacobian(model, cs, C0, None, q0[None], 0)[0]
    _, s, Vt = np.linalg.svd(J)
    rank = int(np.sum(s > 1e-10 * s[0]))
    Nsp = Vt[rank:].T
    nu = Nsp @ (Nsp.T @ rng.normal(size=model.nv))
    if model.floating_base:
        return nu[None, :6], np.vstack([q0, nu[6:]])
    return None, np.vstack([q0, nu])


@pytest.fixture(scope="module")
def talos():
    model = load_robot("talos")
    cs = ld.ConstraintSet(model, [ld.Contact6D("left_sole_link"), ld.Contact6D("right_sole_link")])
    return model, cs


@pytest.fixture(scope="module")
def solo():
    model = load_robot("solo12")
    cs = ld.ConstraintSet(model, [ld.Contact3D(f) for f in
                                  ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")])
    return model, cs


def _motion(model, cs, rng, r, scale=0.2, gentle=False):
    """A motion that keeps the contacts, as jets of order ``r + 1``: the
    constrained forward dynamics from a consistent state under random torques
    (``gentle``: the torques that hold the state still, plus 1 %, so that the
    jets grow slowly with the order)."""
    n = model.n_joints
    C0 = model.home_pose.copy()
    C0[:3, 3] += rng.normal(scale=0.3, size=3)
    q0 = rng.normal(scale=scale, size=n)
    V0, q = _consistent_state(model, cs, C0, q0, rng)
    tau = rng.normal(scale=5.0, size=(r + 1, n))
    Wb = np.zeros((r + 1, 6)) if model.floating_base else None
    if gentle:
        q = np.vstack([q0, 0.01 * q[1]])
        V0 = None if V0 is None else 0.01 * V0
        still = np.zeros((3, 6)), np.vstack([q0, np.zeros((2, n))])
        hold = ld.constrained_inverse_dynamics(model, cs, C0, still[0], still[1], 0).tau[0]
        tau = np.zeros((r + 1, n))
        tau[0] = hold * (1 + 0.01 * rng.normal(size=n))
    f = ld.constrained_forward_dynamics(model, cs, C0, V0, q, r, tau=tau, base_wrench=Wb)
    return C0, f


@pytest.mark.parametrize("robot", ["talos", "solo"])
@pytest.mark.parametrize("r", [0, 1, 3])
def test_inverse_then_forward_reproduces_the_motion_and_the_forces(robot, r, request):
    """τ and λ from the inverse (H-GRNE + the minimum-norm split) drive the
    forward dynamics (articulated-body passes + contact responses) along the
    same motion, with the same forces (unique given τ)."""
    model, cs = request.getfixturevalue(robot)
    rng = np.random.default_rng(7 + r)
    C0, f = _motion(model, cs, rng, r)
    inv = ld.constrained_inverse_dynamics(model, cs, C0, f.base_twist, f.q, r)
    back = ld.constrained_forward_dynamics(model, cs, C0, f.base_twist[:1], f.q[:2], r,
                                           tau=inv.tau, base_wrench=inv.base_wrench)
    for k in range(r + 1):
        assert_close(back.q[k + 2], f.q[k + 2], 1e-8, 1e-8 * np.abs(f.q[k + 2]).max(),
                     what=f"q^({k + 2})")
        assert_close(back.base_twist[k + 1], f.base_twist[k + 1], 1e-8,
                     1e-8 * np.abs(f.base_twist[k + 1]).max(), what=f"V0^({k + 1})")
        assert_close(back.force[k], inv.force[k], 1e-7, 1e-8 * np.abs(inv.force[k]).max(),
                     what=f"lambda^({k})")
    assert np.abs(inv.base_wrench).max() == 0.0          # the legged base is unactuated


def test_forces_applied_to_the_recursive_newton_euler_give_the_joint_forces(talos):
    """H-GRNE with the contact forces as applied wrench jets returns the
    inverse's τ and a zero base wrench: Newton–Euler of the whole robot at
    every order, contacts included."""
    model, cs = talos
    r = 3
    C0, f = _motion(model, cs, np.random.default_rng(3), r)
    inv = ld.constrained_inverse_dynamics(model, cs, C0, f.base_twist, f.q, r)
    W = ld.constraint_wrenches(model, cs, C0, f.base_twist, f.q, inv.force)
    idr = ld.inverse_dynamics(model, C0, f.base_twist, f.q, r, applied=W)
    for k in range(r + 1):
        s = np.abs(inv.tau[k]).max()
        assert_close(idr.tau[k], inv.tau[k], 1e-9, 1e-9 * s, what=f"tau^({k})")
        assert_close(idr.base_wrench[k], np.zeros(6), 0.0, 1e-8 * np.abs(W[k]).max(),
                     what=f"W0^({k})")


def test_forces_are_the_weighted_minimum_norm_ones(talos):
    """Any other split of the base wrench over the feet (λ plus a null vector
    of A) has a larger R-norm, with a diagonal R."""
    model, cs = talos
    C0, f = _motion(model, cs, np.random.default_rng(11), 0)
    R = np.linspace(1.0, 3.0, cs.n_rows)
    inv = ld.constrained_inverse_dynamics(model, cs, C0, f.base_twist, f.q, 0, weight=R)
    J = ld.constraint_jacobian(model, cs, C0, None, f.q[:1], 0)[0]
    A = J[:, :6].T
    lam = inv.force[0]
    Nsp = np.linalg.svd(A)[2][6:].T
    cost = 0.5 * lam @ (R * lam)
    rng = np.random.default_rng(0)
    for _ in range(20):
        other = lam + Nsp @ rng.normal(scale=1e-3 * np.abs(lam).max(), size=Nsp.shape[1])
        assert 0.5 * other @ (R * other) > cost
    assert_close(A @ lam, A @ ld.constrained_forward_dynamics(
        model, cs, C0, f.base_twist[:1], f.q[:2], 0, tau=inv.tau,
        base_wrench=np.zeros((1, 6))).force[0], 1e-9, 1e-9, what="A lambda")


def _shifted_state(C0, f, R, s):
    """Pose and motion jets at time ``s`` along the Taylor polynomials of the
    jets ``f`` (order ``R``): the base pose integrated on SE(3)."""
    Vc, qc = f.base_twist, f.q
    V = poly_jet(Vc, s, Vc.shape[0])
    q = poly_jet(qc, s, qc.shape[0])
    C = integrate_pose(C0, lambda t: poly_jet(Vc, t, 1)[0], s, steps=32)
    return C, V, q


def _central_differences(model, cs, C0, f, R, h, **kw):
    """First and second derivatives of ``(τ, λ, u)`` of the order-0 constrained
    inverse dynamics (keywords ``kw``) at t = 0, by fourth-order central
    differences with step ``h``."""
    vals = {}
    for i in (-2, -1, 0, 1, 2):
        C, V, q = _shifted_state(C0, f, R, i * h)
        out = ld.constrained_inverse_dynamics(model, cs, C, V, q, 0, **kw)
        vals[i] = np.concatenate([out.tau[0], out.force[0], out.base_effort[0]])
    d1 = (-vals[2] + 8 * vals[1] - 8 * vals[-1] + vals[-2]) / (12 * h)
    d2 = (-vals[2] + 16 * vals[1] - 30 * vals[0] + 16 * vals[-1] - vals[-2]) / (12 * h * h)
    return d1, d2


# (robot, step h, bound on the error at h/2 relative to the jet's size). Talos
# has light links whose jets grow about 1e3 per order (a 1 ms time scale), so
# its steps are short; the measured errors were 1.2e-4 and 7e-6 (orders 1, 2:
# 2e-5 and 1.4e-6) at h = 2.5e-4 and 1.25e-4, and 6e-8 and 4e-9 on Solo-12 at
# h = 1e-3 and 5e-4 (fourth order: 16x per halving).
_FD_CASES = [("talos", 2.5e-4, 2e-5), ("solo", 1e-3, 2e-8)]


@pytest.mark.parametrize("robot, h, bound", _FD_CASES)
def test_force_and_torque_jets_are_the_time_derivatives_of_the_order_zero_solution(robot, h,
                                                                                  bound, request):
    """τ^(1), τ^(2), λ^(1), λ^(2) of order 2 against fourth-order central
    differences of the order-0 constrained inverse dynamics at t ± h, t ± 2h
    along a motion that keeps the contacts to order 7 (the Taylor polynomial
    of an order-6 constrained forward solution): the jets are the derivatives
    of the instantaneous minimum-norm forces. Halving h divides the error of
    the first derivative by about 16."""
    model, cs = request.getfixturevalue(robot)
    R = 6
    C0, f = _motion(model, cs, np.random.default_rng(5), R, scale=0.1, gentle=True)
    inv = ld.constrained_inverse_dynamics(model, cs, C0, f.base_twist, f.q, 2)
    errs = []
    for step in (h, h / 2):
        d = _central_differences(model, cs, C0, f, R, step)
        errs.append([np.abs(np.concatenate([inv.tau[k], inv.force[k]]) - d[k - 1]).max()
                     / np.abs(np.concatenate([inv.tau[k], inv.force[k]])).max() for k in (1, 2)])
    assert errs[1][0] < bound and errs[1][1] < 10 * bound, errs
    assert errs[0][0] / errs[1][0] > 8, errs


def test_weighted_and_actuated_jets_are_the_time_derivatives_of_the_order_zero_solution(solo):
    """With a full weight matrix ``R`` and a declared base actuator (a thrust
    along the base z axis, whose world wrench turns with the base), the jets
    of ``τ``, ``λ`` and the thrust of order 2 against fourth-order central
    differences of the order-0 solution with the same ``R`` along a motion
    that keeps the feet (as the test above); halving h divides the error of
    the first derivative by about 16 (measured: 5.4e-8 and 3.4e-9 for the
    first derivative, 9e-8 and 4e-8 for the second, at h = 1e-3 and 5e-4)."""
    model, cs = solo
    R = 6
    C0, f = _motion(model, cs, np.random.default_rng(8), R, scale=0.1, gentle=True)
    A = np.random.default_rng(3).normal(size=(cs.n_rows + 1, cs.n_rows + 1))
    kw = dict(weight=A @ A.T + np.eye(cs.n_rows + 1), base_actuation=np.eye(6)[:, 5:])
    inv = ld.constrained_inverse_dynamics(model, cs, C0, f.base_twist, f.q, 2, **kw)
    jets = np.hstack([inv.tau, inv.force, inv.base_effort])
    assert np.abs(inv.base_effort).max() > 1e-3 * np.abs(inv.force).max()  # the thrust works
    errs = []
    for step in (1e-3, 5e-4):
        d = _central_differences(model, cs, C0, f, R, step, **kw)
        errs.append([np.abs(jets[k] - d[k - 1]).max() / np.abs(jets[k]).max() for k in (1, 2)])
    assert errs[1][0] < 2e-8 and errs[1][1] < 2e-7, errs
    assert errs[0][0] / errs[1][0] > 8, errs


@pytest.mark.parametrize("kind", ["loop", "wall"])
def test_a_fixed_base_reaction_is_the_newton_euler_balance(kind):
    """On a fixed base the returned base wrench is the support reaction: H-GRNE
    with the constraint forces applied as wrench jets gives the same base
    wrench and τ at every order, for the loop below (forces between two
    bodies, internal but for the moment of the points' offset) and for a
    contact with the world along a slanted normal."""
    model, cs = _loop_model()
    passive = ["a2", "b1"]
    if kind == "wall":
        cs = ld.ConstraintSet(model, [ld.Contact1D("a_tip", normal=[0.6, 0.8, 0.0], name="wall")])
        passive = ["a2"]
    rng = np.random.default_rng(9)
    r = 3
    _, q = _consistent_state(model, cs, None, np.array([1.2, -1.0, 0.3]), rng)
    f = ld.constrained_forward_dynamics(model, cs, None, None, q, r,
                                        tau=rng.normal(size=(r + 1, 3)))
    inv = ld.constrained_inverse_dynamics(model, cs, None, None, f.q, r, passive=passive)
    W = ld.constraint_wrenches(model, cs, None, None, f.q, inv.force)
    idr = ld.inverse_dynamics(model, None, None, f.q, r, applied=W)
    for k in range(r + 1):
        s = max(np.abs(inv.tau[k]).max(), np.abs(inv.base_wrench[k]).max())
        assert_close(idr.tau[k], inv.tau[k], 1e-9, 1e-9 * s, what=f"tau^({k})")
        assert_close(idr.base_wrench[k], inv.base_wrench[k], 1e-9, 1e-9 * s,
                     what=f"W0^({k})")
    moment = np.abs(inv.base_wrench[:, :3] - ld.inverse_dynamics(
        model, None, None, f.q, r).base_wrench[:, :3]).max()
    assert moment > 1e-3 * np.abs(inv.base_wrench).max()   # the forces move the reaction


def _loop_model():
    """A planar closed chain on a fixed base: branch A (two links) and
    branch B (one link) pinned together by two 1-D loop rows in the plane."""
    b = ld.ModelBuilder(floating_base=False)
    b.add_body("ground", None, None)
    I = se3.spatial_inertia(1.0, np.array([0.25, 0.0, 0.0]), np.diag([0.01, 0.02, 0.02]))
    z = np.array([0.0, 0.0, 1.0])
    X = np.eye(4)
    X[0, 3] = 0.5
    b.add_body("a1", "ground", ld.Revolute(z), inertia=I)
    b.add_body("a2", "a1", ld.Revolute(z), origin=X, inertia=I)
    Y = np.eye(4)
    Y[1, 3] = 0.6
    b.add_body("b1", "ground", ld.Revolute(z), origin=Y, inertia=I)
    b.add_frame("a_tip", "a2", X)
    b.add_frame("b_tip", "b1", X)
    model = b.build()
    cs = ld.ConstraintSet(model, [ld.Contact1D("a_tip", "b_tip", normal=[1, 0, 0], name="pin x"),
                                  ld.Contact1D("a_tip", "b_tip", normal=[0, 1, 0], name="pin y")])
    return model, cs


def test_a_loop_forces_come_from_its_passive_joints():
    """A four-bar-like loop on a fixed base, one actuated joint: the inverse
    with the other two passive gives zero torque there, and the forward
    dynamics under those torques reproduces the motion and the loop forces."""
    model, cs = _loop_model()
    rng = np.random.default_rng(2)
    q0 = np.array([1.2, -1.0, 0.3])
    r = 2
    _, q = _consistent_state(model, cs, None, q0, rng)
    f = ld.constrained_forward_dynamics(model, cs, None, None, q, r,
                                        tau=rng.normal(size=(r + 1, 3)))
    assert f.rank == 2
    inv = ld.constrained_inverse_dynamics(model, cs, None, None, f.q, r, passive=["a2", "b1"])
    assert_close(inv.tau[:, 1:], np.zeros((r + 1, 2)), 0.0, 1e-9 * np.abs(inv.tau).max(),
                 what="passive torques")
    back = ld.constrained_forward_dynamics(model, cs, None, None, f.q[:2], r, tau=inv.tau)
    assert_close(back.q, f.q, 1e-8, 1e-9 * np.abs(f.q).max(), what="q jets")
    assert_close(back.force, inv.force, 1e-8, 1e-9 * np.abs(inv.force).max(), what="forces")


def test_a_perching_drone_shares_the_load_between_thrust_and_feet(solo):
    """A base actuator with an unknown effort (a thrust along the base z axis)
    joins the contact forces; with the forces given instead, the required
    base wrench is returned and the forward dynamics closes the loop."""
    model, cs = solo
    rng = np.random.default_rng(4)
    C0, f = _motion(model, cs, rng, 1)
    Ba = np.zeros((6, 1))
    Ba[5, 0] = 1.0
    inv = ld.constrained_inverse_dynamics(model, cs, C0, f.base_twist, f.q, 1, base_actuation=Ba)
    assert inv.base_effort.shape == (2, 1)
    back = ld.constrained_forward_dynamics(model, cs, C0, f.base_twist[:1], f.q[:2], 1,
                                           tau=inv.tau, base_wrench=inv.base_wrench)
    assert_close(back.q[2:], f.q[2:], 1e-8, 1e-9 * np.abs(f.q[2:]).max(), what="q jets")
    Rz = C0[:3, 2]
    assert_close(inv.base_wrench[0, 3:], inv.base_effort[0, 0] * Rz, 1e-9, 1e-9,
                 what="thrust along the base z axis")
    given = ld.constrained_inverse_dynamics(model, cs, C0, f.base_twist, f.q, 1, force=f.force)
    assert_close(given.base_wrench, np.zeros((2, 6)), 0.0, 1e-8 * np.abs(f.force).max(),
                 what="base wrench with the forward's own forces")


def test_bad_motion_and_bad_arguments_are_refused_by_name(solo):
    model, cs = solo
    C0, f = _motion(model, cs, np.random.default_rng(1), 1)
    V = f.base_twist.copy()
    V[0, 3] += 0.1                                       # the base slides: feet would move
    with pytest.raises(ValueError, match="violates constraint"):
        ld.constrained_inverse_dynamics(model, cs, C0, V, f.q, 1)
    q = f.q.copy()
    q[2, 0] += 1.0                                       # an acceleration that lifts a foot
    with pytest.raises(ValueError, match=r"derivative 1 .*FL_FOOT|FL_FOOT.*derivative 1"):
        ld.constrained_inverse_dynamics(model, cs, C0, f.base_twist, q, 1)
    with pytest.raises(ValueError, match="weight"):
        ld.constrained_inverse_dynamics(model, cs, C0, f.base_twist, f.q, 1, weight=-np.ones(12))
    with pytest.raises(ValueError, match="passive"):
        ld.constrained_inverse_dynamics(model, cs, C0, f.base_twist, f.q, 1, passive=["nope"])
    with pytest.raises(ValueError, match="base_twist|q"):
        bad = f.q.copy()
        bad[0, 0] = np.nan
        ld.constrained_inverse_dynamics(model, cs, C0, f.base_twist, bad, 1)
    one = ld.ConstraintSet(model, [ld.Contact3D("FL_FOOT")])
    C1, f1 = _motion(model, one, np.random.default_rng(2), 0)
    # One point foot meets three of the six base rows. The forward dynamics'
    # motion is one the foot produces: accepted, its residual round-off.
    held = ld.constrained_inverse_dynamics(model, one, C1, f1.base_twist, f1.q, 0)
    assert_close(held.force, f1.force, 1e-9, 1e-9 * np.abs(f1.force).max(), what="foot force")
    couple = np.array([[1.0, 0.0, 0.0, 0.0, 0.0, 0.0]])   # a pure moment: no point force makes it
    with pytest.raises(ValueError, match="cannot supply the base wrench.*least_squares"):
        ld.constrained_inverse_dynamics(model, one, C1, f1.base_twist, f1.q, 0,
                                        base_wrench=couple)
    ls = ld.constrained_inverse_dynamics(model, one, C1, f1.base_twist, f1.q, 0,
                                         base_wrench=couple, least_squares=True)
    assert np.abs(ls.residual).max() > 0.5
    with pytest.raises(TypeError, match="constraints"):
        ld.constrained_inverse_dynamics(model, [ld.Contact3D("FL_FOOT")], C1, f1.base_twist,
                                        f1.q, 0)


def test_a_robot_at_rest_from_the_forward_dynamics_is_accepted(solo):
    """The forward dynamics of a standing robot gives accelerations that are
    round-off (~1e-13); the inverse takes them (the absolute floor) and
    returns the standing torques."""
    model, cs = solo
    n = model.n_joints
    q0 = np.zeros((2, n))
    q0[0] = np.tile([0.0, 0.8, -1.6], 4)
    still = ld.constrained_inverse_dynamics(model, cs, None, np.zeros((3, 6)),
                                            np.vstack([q0, np.zeros((1, n))]), 0)
    f = ld.constrained_forward_dynamics(model, cs, None, np.zeros((1, 6)), q0, 1,
                                        tau=np.vstack([still.tau, np.zeros((1, n))]),
                                        base_wrench=np.zeros((2, 6)))
    assert 0 < np.abs(f.q[2:]).max() < 1e-9
    inv = ld.constrained_inverse_dynamics(model, cs, None, f.base_twist, f.q, 1)
    assert_close(inv.tau[0], still.tau[0], 1e-9, 1e-9, what="standing torques")
