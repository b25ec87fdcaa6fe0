"""Constrained forward dynamics of any order (SPEC §13.2) against references
that share no code with its articulated-body passes.

1. A dense order-by-order KKT solve (:mod:`tests.contact_oracle`: the
   closed form ``M^(a), C^(a), g^(k)``, damping and the applied generalised
   force of ``liedyn.closed_form_jets``, the Jacobian jets of
   ``liedyn.constraint_jacobian``) on random trees with every kind of
   constraint, orders 0 to 4.
2. Order 0 against Pinocchio's ``constraintDynamics`` (Solo-12 on four point
   feet, Talos on two flat feet, Panda holding its hand, loops on a random
   tree built in both libraries).
3. Order 1 against Pinocchio's ``computeConstraintDynamicsDerivatives``
   chained with the rates of the state and of the torques.
4. Orders 1 to 4 by Taylor consistency: Pinocchio's order 0 evaluated along
   the Taylor polynomials of the returned jets, differentiated in time by
   central differences with the step halved.
5. Identities: the whole robot's Newton–Euler (inverse dynamics fed the
   returned motion and the contact wrenches returns the input forces), ideal
   constraints do no work, the constraint rates ``(J ν)^(k)`` vanish.
6. Redundant constraints: the unique accelerations, the rank, the
   minimum-norm forces (numpy's least squares of the dense system) and the
   time derivatives of the instantaneous minimum-norm force.
7. Baumgarte stabilisation: the stabilised constraint equation holds.
8. Bad input: a ValueError or TypeError naming the argument or constraint.
"""

import functools
from math import comb, factorial

import numpy as np
import pytest

import liedyn as ld
from liedyn import se3
from models.trees import random_tree
from tests import contact_oracle as oracle
from tests.helpers import integrate_pose, poly_jet, rel_err

KINDS = {"6w": 6, "3w": 3, "1w": 1, "3l": 3, "6l": 6}


# ------------------------------------------------------------ model helpers --

def with_frames(model, frames):
    """``model`` rebuilt through :class:`liedyn.ModelBuilder` from its public
    arrays, plus the frames ``(name, body, offset)``."""
    b = ld.ModelBuilder(floating_base=model.floating_base, gravity=model.gravity)
    b.add_body(model.body_names[0], None, None, model.body_origin[0], model.body_inertia[0])
    for j in range(1, model.n_bodies):
        i = j - 1
        kw = dict(name=model.joint_names[i], armature=model.joint_armature[i],
                  damping=model.joint_damping[i])
        joint = (ld.Prismatic(model.joint_axis[i], **kw) if model.joint_type[i] == 2 else
                 ld.Revolute(model.joint_axis[i], point=model.joint_point[i], **kw))
        b.add_body(model.body_names[j], int(model.body_parent[j]), joint, model.body_origin[j],
                   model.body_inertia[j])
    for name, body, offset in frames:
        b.add_frame(name, body, offset)
    return b.build()


def _offset(rng):
    return se3.exp(np.concatenate([rng.normal(size=3), rng.normal(size=3) * 0.2]))


def _spec(kind, fa, fb, rng):
    if kind == "6w":
        return ld.Contact6D(fa)
    if kind == "3w":
        return ld.Contact3D(fa)
    if kind == "1w":
        return ld.Contact1D(fa, normal=rng.normal(size=3))
    if kind == "3l":
        return ld.Contact3D(fa, fb)
    return ld.Contact6D(fa, fb)


def depths(model):
    return np.array([len(model.ancestors(j)) - 1 for j in range(model.n_bodies)])


# Full row rank is required of a random set: its smallest singular value at
# least SIGMA_MIN times its largest (else another set is drawn).
SIGMA_MIN = 1e-2


def path_joints(model, a, b):
    """Number of joints on the tree path between bodies ``a`` and ``b``."""
    up_a, up_b = list(model.ancestors(a)), list(model.ancestors(b))
    common = len(set(up_a) & set(up_b))
    return len(up_a) + len(up_b) - 2 * common


def constrained_tree(seed, n_bodies, floating, kinds):
    """A random tree (``models.trees.random_tree`` with armature and damping)
    with a frame at a random offset on each constrained body, the constraint
    set ``kinds`` (keys of KINDS) on distinct bodies at least two joints from
    the base (three for a world contact of three or more rows on a fixed
    base), a loop between bodies at least four joints apart (the base
    allowed), and a configuration where ``J`` has full row rank (drawn again
    until it has). Returns ``(model, cs, C0, q0 (n,))``."""
    rng = np.random.default_rng(seed)
    base = random_tree(rng, n_bodies, floating_base=floating, armature=True, damping=True)
    depth = depths(base)
    for _ in range(200):
        frames, specs, used = [], [], set()
        for c, kind in enumerate(kinds):
            rows = KINDS[kind]
            a = int(rng.choice([j for j in range(1, n_bodies)
                                if j not in used and depth[j] >= (3 if rows > 1 and not floating
                                                                  else 2)]))
            used.add(a)
            frames.append((f"f{c}a", a, _offset(rng)))
            fb = None
            if kind.endswith("l"):
                b = int(rng.choice([j for j in range(n_bodies)
                                    if j != a and path_joints(base, a, j) >= 4]))
                frames.append((f"f{c}b", b, _offset(rng)))
                fb = f"f{c}b"
            specs.append((kind, f"f{c}a", fb))
        model = with_frames(base, frames)
        cs = ld.ConstraintSet(model, [_spec(k, fa, fb, rng) for k, fa, fb in specs])
        C0 = se3.exp(rng.normal(size=6) * 0.5) if floating else None
        q0 = rng.normal(size=model.n_joints)
        J = ld.constraint_jacobian(model, cs, C0, None, q0[None], 0)[0]
        s = np.linalg.svd(J, compute_uv=False)
        if s[-1] >= SIGMA_MIN * s[0]:
            return model, cs, C0, q0
    raise AssertionError(f"no full-rank set of {kinds} on tree {seed}")


def random_inputs(model, rng, order, applied=True):
    """``(V₀ (1, 6) or None, q (2, n) without row 0, tau, base_wrench,
    applied)`` of O(1) size."""
    n = model.n_joints
    V0 = rng.normal(size=(1, 6)) if model.floating_base else None
    qd = rng.normal(size=n)
    tau = rng.normal(size=(order + 1, n))
    W0 = rng.normal(size=(order + 1, 6)) if model.floating_base else None
    app = rng.normal(size=(order + 1, model.n_bodies, 6)) * 0.5 if applied else None
    return V0, qd, tau, W0, app


def solve(model, cs, C0, V0, q, order, **kw):
    return ld.constrained_forward_dynamics(model, cs, C0, V0, q, order, **kw)


def nu_of(model, res):
    return oracle.pad_velocity(model, res)


# ---------------------------------------------------------------- 1. KKT --

TREE_CASES = [
    # (seed, bodies, floating, constraints)
    (0, 16, True, ("6w", "3w", "1w", "3l")),
    (1, 20, True, ("6l", "3l", "3w")),
    (2, 30, True, ("6w", "3w", "1w", "3l", "6l")),
    (3, 16, False, ("3w", "1w", "6l")),
    (4, 16, False, ("6w", "3l", "1w")),
    (5, 12, True, ("1w", "1w", "1w", "3l")),
]
# Relative error ``max|a − b| / (1 + max|b|)`` of each order's row. Both
# sides are float64 solves of the same well-posed system (random trees of
# cond(K) ≲ 1e6); measured at most 2e-12 over the cases and orders (see the
# report of test_against_dense_kkt_on_random_trees).
KKT_TOL = 1e-9


@pytest.mark.parametrize("case", TREE_CASES, ids=lambda c: f"tree{c[0]}")
def test_against_dense_kkt_on_random_trees(case):
    seed, nb, floating, kinds = case
    model, cs, C0, q0 = constrained_tree(seed, nb, floating, kinds)
    rng = np.random.default_rng(100 + seed)
    R = 4
    V0, qd, tau, W0, app = random_inputs(model, rng, R)
    q = np.vstack([q0, qd])
    nu_ref, lam_ref, rank = oracle.kkt_jets(model, cs, C0, V0, q, R, tau=tau, base_wrench=W0,
                                            applied=app)
    assert rank == cs.n_rows
    worst = 0.0
    for r in range(R + 1):
        res = solve(model, cs, C0, V0, q, r, tau=tau[:r + 1],
                    base_wrench=None if W0 is None else W0[:r + 1], applied=app[:r + 1])
        assert res.rank == cs.n_rows
        nu = nu_of(model, res)
        for k in range(r + 1):
            e = max(rel_err(nu[k + 1], nu_ref[k + 1]), rel_err(res.force[k], lam_ref[k]))
            worst = max(worst, e)
            assert e <= KKT_TOL, (r, k, e)
        assert np.array_equal(nu[0], nu_ref[0])
    print(f"tree{seed}: max relative error {worst:.1e}")


# ------------------------------------------------------ 2. Pinocchio, order 0 --

def pin_constraints(br, frames, reference):
    """Pinocchio's ``RigidConstraintModel`` of each ``(kind, frame_a,
    frame_b or None)`` of ``frames`` (kind 6 or 3; the frames found by name
    in Pinocchio's own model), in ``reference`` (``"LOCAL"`` or
    ``"LOCAL_WORLD_ALIGNED"``)."""
    import pinocchio as pin
    pm = br.model
    ref = getattr(pin.ReferenceFrame, reference)
    models = pin.StdVec_RigidConstraintModel()
    for kind, a, b in frames:
        ctype = {6: pin.ContactType.CONTACT_6D, 3: pin.ContactType.CONTACT_3D}[kind]
        fa = pm.frames[pm.getFrameId(a)]
        if b is None:
            cm = pin.RigidConstraintModel(ctype, pm, fa.parentJoint, fa.placement, ref)
        else:
            fb = pm.frames[pm.getFrameId(b)]
            cm = pin.RigidConstraintModel(ctype, pm, fa.parentJoint, fa.placement,
                                          fb.parentJoint, fb.placement, ref)
        models.append(cm)
    return models


def liedyn_constraints(model, frames):
    """The :class:`liedyn.ConstraintSet` of the same ``frames``."""
    kinds = {6: ld.Contact6D, 3: ld.Contact3D}
    return ld.ConstraintSet(model, [kinds[k](a, b) for k, a, b in frames])


def pin_constraint_dynamics(br, cs, frames, C0, V0, q, tau, W0, reference):
    """Pinocchio's ``constraintDynamics`` in liedyn's terms: ``(V̇₀ (6,) or
    zeros, q̈ (n,), λ (m,) in the reported form of SPEC §13.1, (q_pin,
    v_pin, τ_pin, models, datas))``. Damping enters as ``τ − b q̇``."""
    import pinocchio as pin
    pm, pd = br.model, br.data
    models = pin_constraints(br, frames, reference)
    datas = pin.StdVec_RigidConstraintData()
    for cm in models:
        datas.append(cm.createData())
    pin.initConstraintDynamics(pm, pd, models, datas)
    qp, vp = br.motion_to_pin(C0, V0, q)
    eff = tau[:1] - br.liedyn_model.joint_damping * q[1]
    tp = br.force_to_pin(C0, V0, None if W0 is None else W0[:1], eff)[0]
    a = pin.constraintDynamics(pm, pd, qp, vp[0], tp, models, datas,
                               pin.ProximalSettings(1e-14, 0.0, 1))
    lam = pin_forces(cs, datas, np.array(pd.lambda_c), reference)
    _, V, qo = br.state_from_pin(qp, vp[0], a)
    return V[1], qo[2], lam, (qp, vp[0], tp, models, datas)


def pin_forces(cs, datas, lam_pin, reference):
    """Pinocchio's ``λ`` (per constraint: linear first, in the contact frame
    ``c1`` for LOCAL, world axes for LOCAL_WORLD_ALIGNED; about ``c1``'s
    origin) in liedyn's reported form (world axes, moment first)."""
    out = np.empty(cs.n_rows)
    for c, rows in enumerate(cs.rows):
        x = lam_pin[rows]
        R = datas[c].oMc1.rotation if reference == "LOCAL" else np.eye(3)
        if cs.data.kind[c] == 6:
            out[rows] = np.concatenate([R @ x[3:], R @ x[:3]])
        else:
            out[rows] = R @ x
    return out


def consistent_velocity(model, cs, C0, q0, rng, scale=1.0):
    """A random ``ν`` projected on the null space of ``J``: ``(V₀ (1, 6) or
    None, q̇ (n,))`` with ``J ν = 0``."""
    J = ld.constraint_jacobian(model, cs, C0, None, q0[None], 0)[0]
    nu = rng.normal(size=model.nv) * scale
    nu = nu - np.linalg.pinv(J) @ (J @ nu)
    return (nu[None, :6], nu[6:]) if model.floating_base else (None, nu)


FEET_SOLO = [(3, f, None) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
FEET_TALOS = [(6, "left_sole_link", None), (6, "right_sole_link", None)]
HAND_PANDA = [(3, "panda_hand", None)]


@functools.cache
def robot(name, damping=True):
    """``(liedyn model, bridge)`` of a real robot, Pinocchio's model from its
    own parse of the URDF; ``damping=False`` drops the URDF's joint damping."""
    from liedyn.interop.pinocchio import pair
    from tests.robots import pinocchio_from_urdf, real_robot, robot_path
    if damping:
        return real_robot(name)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ld.URDFWarning)
        model = ld.load_urdf(robot_path(name), floating_base=True, damping="drop")
    return model, pair(model, pinocchio_from_urdf(robot_path(name), True))


def quasi_static_torques(model, cs, C0, q0, rng, rows, scale=1.0):
    """Torque jets ``(rows, n)``: the joint torques that hold the robot still
    on its constraints at ``(C₀, q0)`` (the base rows of gravity carried by
    least-squares constraint forces), plus random jets scaled by the joint
    diagonal of ``M``, so that every joint accelerates by O(scale)."""
    g = ld.gravity_vector(model, C0, q0)
    J = ld.constraint_jacobian(model, cs, C0, None, q0[None], 0)[0]
    nb = 6 if model.floating_base else 0
    lam = np.linalg.lstsq(J[:, :nb].T, g[:nb], rcond=None)[0] if nb else np.zeros(cs.n_rows)
    d = np.diag(ld.mass_matrix(model, C0, q0))[nb:]
    tau = rng.normal(size=(rows, model.n_joints)) * d * scale
    tau[0] += g[nb:] - J[:, nb:].T @ lam
    return tau


def robot_case(name, frames, seed, consistent, damping=True, speed=0.5):
    """``(model, bridge, cs, C0, V0, q (2, n), tau (5, n), W0 (5, 6) or
    None)`` for a real robot: joint positions within the limits, a random
    base pose, velocities of size ``speed`` with ``J ν = 0`` when
    ``consistent``, quasi-static torque jets and no base actuation (zeros
    for a floating base)."""
    from tests.robots import joint_sample
    model, br = robot(name, damping)
    rng = np.random.default_rng(seed)
    cs = liedyn_constraints(model, frames)
    C0 = se3.exp(rng.normal(size=6) * 0.5) if model.floating_base else None
    q0 = joint_sample(model, rng)
    if consistent:
        V0, qd = consistent_velocity(model, cs, C0, q0, rng, speed)
    else:
        V0 = rng.normal(size=(1, 6)) * speed if model.floating_base else None
        qd = rng.normal(size=model.n_joints) * speed
    tau = quasi_static_torques(model, cs, C0, q0, rng, 5)
    W0 = np.zeros((5, 6)) if model.floating_base else None
    return model, br, cs, C0, V0, np.vstack([q0, qd]), tau, W0


def loop_tree_case(seed, floating, frames_kinds):
    """A random tree with loops (and world contacts) built in liedyn and, by
    :func:`liedyn.interop.pinocchio.to_pinocchio`, in Pinocchio; frames named
    ``f{c}a``, ``f{c}b``. Returns ``(model, bridge, frames)``."""
    from liedyn.interop.pinocchio import to_pinocchio
    model, cs, C0, q0 = constrained_tree(seed, 16, floating, frames_kinds)
    frames = [(KINDS[k], f"f{c}a", f"f{c}b" if k.endswith("l") else None)
              for c, k in enumerate(frames_kinds)]
    return model, to_pinocchio(model), frames, C0, q0


# Order 0: liedyn and Pinocchio solve the same KKT system in float64 (cond(K)
# up to ~1e7 on Talos' light gripper links); measured relative errors
# ``max|a − b| / (1 + max|b|)`` at most 3e-13 (the table in the report).
PIN0_TOL = 1e-11
PIN_ROBOT_CASES = [
    ("solo12", FEET_SOLO, "LOCAL", True),
    ("solo12", FEET_SOLO, "LOCAL_WORLD_ALIGNED", False),     # 3-D world contacts: any ν
    ("talos", FEET_TALOS, "LOCAL", True),
    ("talos", FEET_TALOS, "LOCAL_WORLD_ALIGNED", True),
    ("panda", HAND_PANDA, "LOCAL", False),
    ("panda", HAND_PANDA, "LOCAL_WORLD_ALIGNED", True),
]


def _pin0_errors(model, br, cs, frames, C0, V0, q, tau, W0, reference):
    res = solve(model, cs, C0, V0, q, 0, tau=tau[:1], base_wrench=None if W0 is None else W0[:1])
    dV, qdd, lam, _ = pin_constraint_dynamics(br, cs, frames, C0, V0, q, tau, W0, reference)
    e = {"qdd": rel_err(res.q[2], qdd), "force": rel_err(res.force[0], lam)}
    if model.floating_base:
        e["dV0"] = rel_err(res.base_twist[1], dV)
    return e


@pytest.mark.parametrize("case", PIN_ROBOT_CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}")
def test_order_0_against_pinocchio_on_robots(case):
    name, frames, reference, consistent = case
    worst = {}
    for seed in range(3):
        model, br, cs, C0, V0, q, tau, W0 = robot_case(name, frames, seed, consistent)
        for k, e in _pin0_errors(model, br, cs, frames, C0, V0, q, tau, W0, reference).items():
            worst[k] = max(worst.get(k, 0.0), e)
    print(name, reference, {k: f"{e:.1e}" for k, e in worst.items()})
    assert max(worst.values()) <= PIN0_TOL, worst


LOOP_CASES = [(10, True, ("3l", "6l", "3w")), (4, False, ("3l", "3w")), (12, True, ("6l", "6w"))]


@pytest.mark.parametrize("case", LOOP_CASES, ids=lambda c: f"tree{c[0]}")
@pytest.mark.parametrize("reference", ["LOCAL", "LOCAL_WORLD_ALIGNED"])
def test_order_0_against_pinocchio_with_loops(case, reference):
    seed, floating, kinds = case
    model, br, frames, C0, q0 = loop_tree_case(seed, floating, kinds)
    cs = liedyn_constraints(model, frames)
    rng = np.random.default_rng(seed)
    worst = {}
    for _ in range(3):
        V0, qd = consistent_velocity(model, cs, C0, q0, rng)
        tau = rng.normal(size=(1, model.n_joints))
        W0 = rng.normal(size=(1, 6)) if floating else None
        e = _pin0_errors(model, br, cs, frames, C0, V0, np.vstack([q0, qd]), tau, W0, reference)
        for k, v in e.items():
            worst[k] = max(worst.get(k, 0.0), v)
        q0 = q0 + rng.normal(size=q0.shape) * 0.1
    print(seed, reference, {k: f"{e:.1e}" for k, e in worst.items()})
    assert max(worst.values()) <= PIN0_TOL, worst


# ------------------------------------------------------ 3. Pinocchio, order 1 --

def pin_order_1(br, cs, frames, C0, V0, q, tau, W0, reference):
    """``(V₀^(0..2), q^(0..3), λ^(0..1))`` from Pinocchio's
    ``constraintDynamics`` and ``computeConstraintDynamicsDerivatives``:
    ``v^(2) = ∂a/∂q v + ∂a/∂v a + ∂a/∂τ τ̇_pin`` and
    ``λ̇ = ∂λ/∂q v + ∂λ/∂v a + ∂λ/∂τ τ̇_pin``, the configuration's tangent
    rate being Pinocchio's ``v`` (its free flyer differentiates in the local
    frame, :mod:`liedyn.interop.pinocchio`), with
    ``τ̇_pin`` from ``τ̇ − b q̈`` and the base wrench jet. World contacts
    only, whose frames do not rotate for 6-D contacts (``J ν = 0``)."""
    import pinocchio as pin
    model = br.liedyn_model
    dV, qdd, lam0, (qp, vp, tp0, models, datas) = pin_constraint_dynamics(
        br, cs, frames, C0, V0, q, tau, W0, reference)
    a = np.array(br.data.ddq)
    dq, dv, dtau, lq, lv, ltau = pin.computeConstraintDynamicsDerivatives(
        br.model, br.data, models, datas, pin.ProximalSettings(1e-14, 0.0, 1))
    eff = tau[:2] - model.joint_damping * np.vstack([q[1], qdd])
    tp = br.force_to_pin(C0, V0, None if W0 is None else W0[:2], eff)
    vj = np.stack([vp, a, dq @ vp + dv @ a + dtau @ tp[1]])
    lam_rate = pin_forces(cs, datas, lq @ vp + lv @ a + ltau @ tp[1], reference)
    if reference == "LOCAL":               # λ_w = R λ_c: the frame's rotation adds ω × λ_w
        for c, rows in enumerate(cs.rows):
            w = np.asarray(pin.getFrameVelocity(br.model, br.data, br.model.getFrameId(
                frames[c][1]), pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).angular)
            x = lam0[rows]
            lam_rate[rows] += (np.concatenate([np.cross(w, x[:3]), np.cross(w, x[3:])])
                               if len(x) == 6 else np.cross(w, x))
    _, V, qo = br.motion_from_pin(qp, vj)
    return V, qo, np.stack([lam0, lam_rate])


# Measured relative errors ``max|a − b| / (1 + max|b|)`` of the order-1 rows
# at most 2e-12 (report table); float64 derivatives of the same KKT system.
PIN1_TOL = 1e-10
PIN1_CASES = [
    ("solo12", FEET_SOLO, "LOCAL_WORLD_ALIGNED", False),
    ("solo12", FEET_SOLO, "LOCAL", True),
    ("talos", FEET_TALOS, "LOCAL", True),
    ("talos", FEET_TALOS, "LOCAL_WORLD_ALIGNED", True),
    ("panda", HAND_PANDA, "LOCAL_WORLD_ALIGNED", False),
]


@pytest.mark.parametrize("case", PIN1_CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}")
def test_order_1_against_pinocchio_derivatives(case):
    name, frames, reference, consistent = case
    worst = {}
    for seed in range(3):
        model, br, cs, C0, V0, q, tau, W0 = robot_case(name, frames, seed, consistent)
        res = solve(model, cs, C0, V0, q, 1, tau=tau[:2], base_wrench=None if W0 is None else W0[:2])
        V, qo, lam = pin_order_1(br, cs, frames, C0, V0, q, tau, W0, reference)
        e = {"q3": rel_err(res.q[3], qo[3]), "force1": rel_err(res.force[1], lam[1]),
             "q2": rel_err(res.q[2], qo[2])}
        if model.floating_base:
            e["V0_2"] = rel_err(res.base_twist[2], V[2])
        for k, v in e.items():
            worst[k] = max(worst.get(k, 0.0), v)
    print(name, reference, {k: f"{e:.1e}" for k, e in worst.items()})
    assert max(worst.values()) <= PIN1_TOL, worst


def test_order_1_against_pinocchio_derivatives_on_a_random_tree():
    """A floating random tree with armature, damping, a base wrench jet and
    6-D and 3-D world contacts, built in Pinocchio by ``to_pinocchio``."""
    model, br, frames, C0, q0 = loop_tree_case(20, True, ("6w", "3w"))
    cs = liedyn_constraints(model, frames)
    rng = np.random.default_rng(20)
    worst = 0.0
    for _ in range(3):
        V0, qd = consistent_velocity(model, cs, C0, q0, rng)
        q = np.vstack([q0, qd])
        tau, W0 = rng.normal(size=(2, model.n_joints)), rng.normal(size=(2, 6))
        res = solve(model, cs, C0, V0, q, 1, tau=tau, base_wrench=W0)
        V, qo, lam = pin_order_1(br, cs, frames, C0, V0, q, tau, W0, "LOCAL_WORLD_ALIGNED")
        worst = max(worst, rel_err(res.q[3], qo[3]), rel_err(res.base_twist[2], V[2]),
                    rel_err(res.force[1], lam[1]))
        q0 = q0 + rng.normal(size=q0.shape) * 0.1
    print(f"random tree: {worst:.1e}")
    assert worst <= PIN1_TOL


# ------------------------------------------------- 4. Taylor consistency --

def order_0_along_jets(model, res, C0, tau, W0, order_0):
    """``g(t) = (V̇₀, q̈, λ)`` of the order-0 map ``order_0(C₀, V₀ (1, 6),
    q (2, n), τ (1, n), W₀ (1, 6))`` evaluated along the Taylor polynomials
    of the returned jets (the base pose integrated on SE(3)) and of the
    torque jets."""
    R = res.force.shape[0] - 1
    Vc = res.base_twist if model.floating_base else None

    def g(t):
        if model.floating_base:
            C = integrate_pose(C0, lambda s: poly_jet(Vc, s, 1)[0], t)
            V = poly_jet(Vc, t, 1)
        else:
            C, V = None, None
        W = None if W0 is None else poly_jet(W0[:R + 1], t, 1)
        dV, qdd, lam = order_0(C, V, poly_jet(res.q, t, 2), poly_jet(tau[:R + 1], t, 1), W)
        return np.concatenate([dV, qdd, lam]) if model.floating_base else np.concatenate([qdd, lam])
    return g


def central_differences(g, h):
    """``{k: D_k}``, the k-th derivative of ``g`` at 0 by central differences
    of step ``h`` (error O(h²)), k = 1..4."""
    f = {s: g(s * h) for s in (-2, -1, 0, 1, 2)}
    return {1: (f[1] - f[-1]) / (2 * h), 2: (f[1] - 2 * f[0] + f[-1]) / h ** 2,
            3: (f[2] - 2 * f[1] + 2 * f[-1] - f[-2]) / (2 * h ** 3),
            4: (f[2] - 4 * f[1] + 6 * f[0] - 4 * f[-1] + f[-2]) / h ** 4}


def taylor_errors(model, res, C0, tau, W0, order_0, h):
    """``{(block, k): [e(h), e(h/2)]}`` for the blocks ``"motion"`` (``V₀^(k+1)``,
    ``q^(k+2)``) and ``"force"`` (``λ^(k)``): ``e = max|D_k − jet_k| /
    max|jet_k|`` over the block."""
    g = order_0_along_jets(model, res, C0, tau, W0, order_0)
    nb = 6 if model.floating_base else 0
    split = nb + model.n_joints
    R = res.force.shape[0] - 1
    out = {}
    for s in (h, h / 2):
        D = central_differences(g, s)
        for k in range(1, R + 1):
            jet = np.concatenate(([res.base_twist[k + 1]] if nb else []) + [res.q[k + 2],
                                                                            res.force[k]])
            for block, sl in (("motion", slice(0, split)), ("force", slice(split, None))):
                e = np.max(np.abs(D[k][sl] - jet[sl])) / np.max(np.abs(jet[sl]))
                out.setdefault((block, k), []).append(float(e))
    return out


def pinocchio_order_0(br, cs, frames):
    def order_0(C, V, q, tau, W):
        dV, qdd, lam, _ = pin_constraint_dynamics(br, cs, frames, C, V, q, tau, W,
                                                  "LOCAL_WORLD_ALIGNED")
        return dV, qdd, lam
    return order_0


def liedyn_order_0(model, cs):
    def order_0(C, V, q, tau, W):
        r = solve(model, cs, C, V, q, 0, tau=tau, base_wrench=W)
        return (r.base_twist[1] if model.floating_base else None), r.q[2], r.force[0]
    return order_0


# Halving h must divide each error by about 4 (measured 3.9–4.1), and at h/2
# the error is at most TAYLOR_TOL (measured up to 5e-3, truncation O(h²)).
# h is set by the fastest mode of each case: Talos' joint damping on its
# light gripper links (b/I ≈ 900 s⁻¹) makes its jets grow ~1000× per order,
# which needs h ≈ 2e-4; without damping 5e-3 does.
TAYLOR_RATIO = (3.5, 4.5)
TAYLOR_TOL = 1e-2
TAYLOR_CASES = [
    ("solo12", FEET_SOLO, True, 1e-2),
    ("talos", FEET_TALOS, False, 5e-3),
    ("talos", FEET_TALOS, True, 2e-4),
    ("panda", HAND_PANDA, True, 4e-3),
]


def _assert_h2(errors, what):
    for key, (e1, e2) in errors.items():
        assert e2 <= TAYLOR_TOL and TAYLOR_RATIO[0] <= e1 / e2 <= TAYLOR_RATIO[1], (what, key,
                                                                                     e1, e2)


@pytest.mark.parametrize("case", TAYLOR_CASES, ids=lambda c: f"{c[0]}-damping{c[2]}")
def test_orders_1_to_4_by_taylor_consistency_with_pinocchio(case):
    name, frames, damping, h = case
    for seed in range(2):
        model, br, cs, C0, V0, q, tau, W0 = robot_case(name, frames, seed, True, damping)
        res = solve(model, cs, C0, V0, q, 4, tau=tau, base_wrench=W0)
        errors = taylor_errors(model, res, C0, tau, W0, pinocchio_order_0(br, cs, frames), h)
        print(name, damping, seed, {k: f"{a:.1e}/{b:.1e}" for k, (a, b) in errors.items()})
        _assert_h2(errors, name)


def test_orders_1_to_4_by_taylor_consistency_with_loops():
    """A random floating tree with a 6-D and a 3-D loop and a 1-D world
    contact (kinds Pinocchio's rigid constraints lack or treat otherwise
    away from ``J ν = 0``): liedyn's own order 0, checked against Pinocchio
    and the dense solve above, differentiated in time."""
    model, cs, C0, q0 = constrained_tree(21, 16, True, ("6l", "3l", "1w"))
    rng = np.random.default_rng(21)
    V0, qd = consistent_velocity(model, cs, C0, q0, rng, 0.5)
    tau = rng.normal(size=(5, model.n_joints))
    W0 = rng.normal(size=(5, 6))
    res = solve(model, cs, C0, V0, np.vstack([q0, qd]), 4, tau=tau, base_wrench=W0)
    errors = taylor_errors(model, res, C0, tau, W0, liedyn_order_0(model, cs), 1e-2)
    print({k: f"{a:.1e}/{b:.1e}" for k, (a, b) in errors.items()})
    _assert_h2(errors, "loops")
