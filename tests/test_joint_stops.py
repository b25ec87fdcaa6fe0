"""Joint stops (``JointStop``, SPEC §13.1): a joint limit held as a
constraint, its force a joint force, against independent references:

1. A pendulum held at its stop under gravity: ``q̈ = 0`` and the reaction
   equals the static gravity torque ``m g l cos q`` (and its jets under a
   torque ramp).
2. An impact on the stop with restitution ``e``: rebound ``−e v``, energy
   lost ``(1 − e²) ½ I v²`` with ``I`` the pendulum's inertia about its axis.
3. The stop's force is a joint force: the unconstrained forward dynamics
   with ``τ_j + s λ_j`` reproduces the constrained motion at every order,
   and inverse dynamics fed the wrench pair of ``constraint_wrenches``
   reproduces the input forces (revolute and prismatic joints).
4. Solo-12 standing on three feet with a knee held at a stop: the dense
   order-by-order KKT solve, central differences of the order-0 result
   along the returned jets, constrained inverse dynamics, Baumgarte, and
   ``liedyn.simulate`` with Baumgarte and with its default projection.
5. Bad input.
"""

import numpy as np
import pytest

import liedyn as ld
from liedyn import se3
from models.trees import random_tree
from tests import contact_oracle as oracle
from tests.contact_robots import FEET, null_velocity, solo, solo_standing
from tests.helpers import assert_close
from tests.test_contact_forward import liedyn_order_0, taylor_errors

G = 9.81
MASS, LENGTH = 1.5, 0.6
I_COM = np.diag([0.01, 0.04, 0.03])                  # about the centre of mass, body axes
LOWER, UPPER = -0.9, 0.4


def pendulum(armature=0.02):
    """One revolute joint about the world ``y`` axis at the origin, fixed
    base, the centre of mass at ``(l, 0, 0)`` in the link frame, limits
    ``[LOWER, UPPER]``: at angle ``q`` the centre of mass is at
    ``(l cos q, 0, −l sin q)`` and gravity (−z) has the moment
    ``m g l cos q`` about ``+y``."""
    b = ld.ModelBuilder(floating_base=False, gravity=(0.0, 0.0, -G))
    b.add_body("ground", None, None)
    b.add_body("link", "ground", ld.Revolute([0.0, 1.0, 0.0], lower=LOWER, upper=UPPER,
                                             armature=armature, name="hinge"),
               inertia=se3.spatial_inertia(MASS, np.array([LENGTH, 0.0, 0.0]), I_COM))
    return b.build()


def axis_inertia(armature=0.02):
    return MASS * LENGTH ** 2 + I_COM[1, 1] + armature


# ------------------------------------------------------ 1. static stop --

@pytest.mark.parametrize("side,limit", [("upper", UPPER), ("lower", LOWER)])
def test_a_pendulum_at_its_stop_carries_the_gravity_torque(side, limit):
    """Held at ``q = limit`` at rest, torque ``τ(t) = τ₀ + τ₁ t + τ₂ t²/2``:
    ``q^(k) = 0`` and ``s λ = −(m g l cos q + τ)``, so ``λ^(k) = −s τ^(k)``
    for ``k ≥ 1``; the upper stop carries gravity with ``λ > 0``."""
    model = pendulum()
    s = 1.0 if side == "lower" else -1.0
    cs = ld.ConstraintSet(model, [ld.JointStop("hinge", side)])
    tau = np.array([[0.3], [-1.2], [2.5]])
    q = np.array([[limit], [0.0]])
    res = ld.constrained_forward_dynamics(model, cs, None, None, q, 2, tau=tau)
    assert_close(res.q[2:], np.zeros((3, 1)), 0.0, 1e-13, what="q^(2..4)")
    gravity = MASS * G * LENGTH * np.cos(limit)
    expect = -s * (tau[:, 0] + np.array([gravity, 0.0, 0.0]))
    assert_close(res.force[:, 0], expect, 1e-13, 1e-13, what="λ")
    if side == "upper":
        assert res.force[0, 0] > 0.0
    inv = ld.constrained_inverse_dynamics(model, cs, None, None, res.q, 1, force=res.force[:2])
    assert_close(inv.tau, tau[:2], 1e-13, 1e-13, what="τ from the stop's force")
    assert_close(inv.base_wrench[0, 5], MASS * G, 1e-13, what="the support carries the weight")
    assert_close(ld.constraint_error(model, cs, None, q[0]), [0.0], 0.0, 0.0, what="φ")
    assert_close(ld.constraint_error(model, cs, None, q[0] + 0.1), [s * 0.1], 1e-15, 1e-15,
                 what="φ off the stop")


# --------------------------------------------------------------- 2. impact --

@pytest.mark.parametrize("e", [0.0, 0.4, 1.0])
def test_an_impact_on_the_stop_rebounds_at_minus_e_v(e):
    model = pendulum()
    v = 2.3                                                  # towards the upper stop
    cs = ld.ConstraintSet(model, [ld.JointStop("hinge", "upper")])
    out = ld.impulse_dynamics(model, cs, None, None, np.array([[UPPER], [v]]), restitution=e)
    assert_close(out.q[1], [-e * v], 1e-14, 1e-14, what="q̇⁺")
    assert_close(out.velocity_before, [-v], 1e-15, what="v⁻ = s q̇")
    I = axis_inertia()
    assert_close(out.energy_loss, (1.0 - e * e) * 0.5 * I * v * v, 1e-13, 1e-14, what="loss")
    assert_close(out.impulse, [(1.0 + e) * I * v], 1e-13, what="Λ")
    assert out.impulse[0] > 0.0                              # it pushes off the stop


# ---------------------------------------------- 3. the force is a joint force --

def stop_tree(seed, joint_type):
    """A random floating tree with a stop on a joint of the given type
    (1 revolute, 2 prismatic) and a 3-D world contact elsewhere."""
    rng = np.random.default_rng(seed)
    for _ in range(100):
        model = random_tree(rng, 8, floating_base=True, armature=True, damping=True)
        cols = np.flatnonzero(np.array(model.joint_type) == joint_type)
        if cols.size:
            break
    j = int(rng.choice(cols))
    other = int(rng.choice([b for b in range(1, model.n_bodies) if b != j + 1]))
    cs = ld.ConstraintSet(model, [ld.JointStop(j, "upper", limit=0.2),
                                  ld.Contact3D(model.body_names[other])])
    return model, cs, j, rng


@pytest.mark.parametrize("joint_type", [1, 2], ids=["revolute", "prismatic"])
def test_the_stop_force_is_a_joint_force_at_every_order(joint_type):
    """Orders 0–3: :func:`liedyn.forward_dynamics` with ``τ_j − λ_j`` (upper
    stop, ``s = −1``) and the 3-D contact's wrench jets applied reproduces the
    motion (to 1e-9 relative, measured 2e-11), ``q_j^(k+2) = 0`` there, and
    inverse dynamics fed ``constraint_wrenches`` (the stop as a wrench pair
    on the joint's two bodies) returns the input forces."""
    for seed in range(2):
        model, cs, j, rng = stop_tree(seed + 3 * joint_type, joint_type)
        C = se3.exp(rng.normal(size=6) * 0.5)
        V = rng.normal(size=(1, 6))
        q = rng.normal(size=(2, model.n_joints))
        q[1, j] = 0.0
        r = 3
        tau = rng.normal(size=(r + 1, model.n_joints))
        W0 = rng.normal(size=(r + 1, 6))
        res = ld.constrained_forward_dynamics(model, cs, C, V, q, r, tau=tau, base_wrench=W0)
        assert_close(res.q[2:, j], np.zeros(r + 1), 0.0, 1e-11 * np.abs(res.q[2:]).max(),
                     what="q_j^(k+2)")
        stop_only = res.force.copy()
        stop_only[:, 0] = 0.0
        Wc = ld.constraint_wrenches(model, cs, C, res.base_twist, res.q, stop_only)
        tau_j = tau.copy()
        tau_j[:, j] -= res.force[:, 0]
        free = ld.forward_dynamics(model, C, V, q, r, tau=tau_j, base_wrench=W0, applied=Wc)
        assert_close(free.q, res.q, 1e-9, 1e-9 * np.abs(res.q).max(), what="q jets")
        assert_close(free.base_twist, res.base_twist, 1e-9,
                     1e-9 * np.abs(res.base_twist).max(), what="V₀ jets")
        W = ld.constraint_wrenches(model, cs, C, res.base_twist, res.q, res.force)
        pair = W - Wc
        assert_close(pair.sum(axis=1), np.zeros((r + 1, 6)), 0.0, 1e-12 * np.abs(pair).max(),
                     what="the pair is balanced")
        idr = ld.inverse_dynamics(model, C, res.base_twist, res.q, r, applied=W)
        assert_close(idr.tau, tau, 1e-9, 1e-9 * np.abs(tau).max(), what="τ")
        assert_close(idr.base_wrench, W0, 1e-9, 1e-9 * np.abs(W0).max(), what="W₀")


def test_jacobian_rows_and_jets():
    model, cs, j, rng = stop_tree(11, 1)
    C = se3.exp(rng.normal(size=6))
    q = rng.normal(size=(3, model.n_joints))
    J = ld.constraint_jacobian(model, cs, C, rng.normal(size=(2, 6)), q, 2)
    row = np.zeros(model.nv)
    row[6 + j] = -1.0
    assert_close(J[0, 0], row, 0.0, 0.0, what="J = s e_jᵀ")
    assert_close(J[1:, 0], np.zeros((2, model.nv)), 0.0, 0.0, what="J^(k≥1) = 0")


# ------------------------------------------------------- 4. Solo's knee --

def solo_knee():
    model = solo()
    C0, q0 = solo_standing(model)
    knee = model.joint_names.index("FL_KFE")
    cs = ld.ConstraintSet(model, [ld.Contact3D(f) for f in FEET[1:]]
                          + [ld.JointStop("FL_KFE", "lower", limit=q0[knee])])
    return model, cs, C0, q0, knee


def test_solo_knee_stop_against_the_dense_kkt():
    """Orders 0–3 against :func:`tests.contact_oracle.kkt_jets` at a state
    off ``J ν = 0`` (1e-9 relative, measured 2e-14)."""
    model, cs, C0, q0, knee = solo_knee()
    rng = np.random.default_rng(5)
    V = rng.normal(size=(1, 6)) * 0.3
    q = np.vstack([q0, rng.normal(size=model.n_joints)])
    r = 3
    tau = rng.normal(size=(r + 1, model.n_joints))
    W0 = np.zeros((r + 1, 6))
    res = ld.constrained_forward_dynamics(model, cs, C0, V, q, r, tau=tau, base_wrench=W0)
    nu, lam, _ = oracle.kkt_jets(model, cs, C0, V, q, r, tau=tau, base_wrench=W0)
    got = oracle.pad_velocity(model, res)
    for k in range(r + 1):
        assert_close(got[k + 1], nu[k + 1], 1e-9, 1e-9 * np.abs(nu[k + 1]).max(),
                     what=f"ν^({k + 1})")
        assert_close(res.force[k], lam[k], 1e-9, 1e-9 * np.abs(lam[k]).max(), what=f"λ^({k})")
    assert_close(res.q[2:, knee], np.zeros(r + 1), 0.0, 1e-10 * np.abs(res.q[2:]).max(),
                 what="knee")


def test_solo_knee_stop_jets_are_time_derivatives_of_order_0():
    """Central differences of the order-0 result along the Taylor
    polynomials of the jets: the errors fall ~4× per halving of h (2e-3)
    and stay below 2e-2 at h/2 (measured up to 4.2e-3, at q⁽⁵⁾)."""
    model, cs, C0, q0, knee = solo_knee()
    rng = np.random.default_rng(6)
    V, q = null_velocity(model, cs, C0, q0, rng, 0.5)
    tau = rng.normal(size=(4, model.n_joints))
    W0 = np.zeros((4, 6))
    res = ld.constrained_forward_dynamics(model, cs, C0, V, q, 3, tau=tau, base_wrench=W0)
    errs = taylor_errors(model, res, C0, tau, W0, liedyn_order_0(model, cs), 2e-3)
    for key, (e1, e2) in errs.items():
        assert e2 <= 2e-2 and 3.5 <= e1 / e2 <= 4.5, (key, e1, e2)


def test_solo_knee_stop_in_inverse_dynamics_and_baumgarte():
    """Constrained inverse dynamics of the forward result with its forces
    given returns its torques (``τ = τ^ID − J_qᵀ λ``, the stop's column
    ``s e_j``), and Baumgarte's position term reads ``s (q_j − limit)``."""
    model, cs, C0, q0, knee = solo_knee()
    rng = np.random.default_rng(7)
    V, q = null_velocity(model, cs, C0, q0, rng, 0.3)
    tau = rng.normal(size=(3, model.n_joints))
    W0 = np.zeros((3, 6))
    res = ld.constrained_forward_dynamics(model, cs, C0, V, q, 2, tau=tau, base_wrench=W0)
    inv = ld.constrained_inverse_dynamics(model, cs, C0, res.base_twist, res.q, 1,
                                          force=res.force[:2])
    assert_close(inv.tau, tau[:2], 1e-8, 1e-8 * np.abs(tau).max(), what="τ")
    assert_close(inv.base_wrench, W0[:2], 0.0, 1e-8 * np.abs(tau).max(), what="W₀")
    # off the stop by 1e-3 rad: β² φ = β² s (q − limit) enters the knee's row
    q_off = q.copy()
    q_off[0, knee] += 1e-3
    anchored = cs.anchored(C0, q_off[0])
    beta = 5.0
    res_b = ld.constrained_forward_dynamics(model, anchored, C0, V, q_off, 0, tau=tau[:1],
                                            base_wrench=W0[:1], baumgarte=(0.0, beta))
    assert_close(res_b.q[2, knee], -beta ** 2 * 1e-3, 1e-9, 1e-12, what="q̈ = −β² φ")


def test_simulate_holds_the_knee_at_its_stop_with_baumgarte():
    """``liedyn.simulate(..., constraints=)`` with the stop among three held
    feet and Baumgarte stabilisation: the knee stays at its stop (its row's
    residuals at round-off) while the unactuated robot folds."""
    model, cs, C0, q0, knee = solo_knee()
    traj = ld.simulate(model, ld.State(base_pose=C0, q=q0), 0.05, dt=1e-3, constraints=cs,
                       stabilization="baumgarte")
    assert np.abs(traj.q[:, 0] - q0).max() > 1e-2                    # the other joints move
    assert_close(traj.q[:, 0, knee], np.full(len(traj.time), q0[knee]), 0.0, 1e-12,
                 what="knee angle")
    assert np.abs(traj.velocity_residual[:, -1]).max() < 1e-12
    assert np.all(traj.force_of(cs.names[-1])[:, 0] != 0.0)


def test_simulate_projection_holds_the_knee_at_its_stop():
    """The default projection applies the stop's force as a joint force: the
    knee stays at its stop and every residual at round-off."""
    model, cs, C0, q0, knee = solo_knee()
    traj = ld.simulate(model, ld.State(base_pose=C0, q=q0), 0.3, dt=1e-3, constraints=cs)
    assert np.abs(traj.q[:, 0] - q0).max() > 1e-2                    # the other joints move
    assert_close(traj.q[:, 0, knee], np.full(len(traj.time), q0[knee]), 0.0, 1e-12,
                 what="knee angle")
    assert np.abs(traj.velocity_residual).max() < 1e-12
    assert np.abs(traj.position_residual).max() < 1e-12


# ------------------------------------------------------------ 5. bad input --

def test_bad_input_names_the_argument():
    model = pendulum()
    free = random_tree(np.random.default_rng(0), 3, floating_base=False)
    with pytest.raises(ValueError, match=r"^side: expected 'lower' or 'upper', got 'top'"):
        ld.JointStop("hinge", "top")
    with pytest.raises(TypeError, match=r"^side: expected 'lower' or 'upper'"):
        ld.JointStop("hinge", 1)
    with pytest.raises(TypeError, match=r"^joint: expected a joint name"):
        ld.JointStop(1.5, "lower")
    with pytest.raises(ValueError, match=r"^limit: expected a finite number"):
        ld.JointStop("hinge", "lower", limit=np.inf)
    with pytest.raises(ValueError, match=r"constraints\[0\].joint: unknown joint 'knee'"):
        ld.ConstraintSet(model, [ld.JointStop("knee", "lower")])
    with pytest.raises(ValueError, match=r"constraints\[0\].joint: joint index 3 out of range"):
        ld.ConstraintSet(model, [ld.JointStop(3, "lower")])
    with pytest.raises(ValueError, match=r"'ground' is on the base"):
        ld.ConstraintSet(model, [ld.JointStop("ground", "lower")])
    with pytest.raises(ValueError, match=r"constraints\[0\].joint: joint .* has no lower limit "
                                         r"\(model.joint_lower is -inf\); pass limit="):
        ld.ConstraintSet(free, [ld.JointStop(0, "lower")])
    with pytest.raises(ValueError, match=r"a constraint called 'stop:hinge:upper' already"):
        ld.ConstraintSet(model, [ld.JointStop("hinge", "upper"), ld.JointStop(0, "upper")])
    b = ld.ModelBuilder(floating_base=False)
    b.add_body("ground", None, None)
    b.add_body("link", "ground", ld.Revolute([0.0, 0.0, 1.0], lower=-1.0, upper=1.0))
    b.add_frame("tool", "link", np.eye(4))
    with pytest.raises(ValueError, match=r"'tool' is a frame fixed on body 'link': a fixed "
                                         r"joint has no stop"):
        ld.ConstraintSet(b.build(), [ld.JointStop("tool", "upper")])
