"""Constrained forward dynamics of any order (SPEC §13.2) against references
that share no code with its articulated-body passes.

1. A dense order-by-order KKT solve (:mod:`tests.contact_oracle`: the
   closed form ``M^(a), C^(a), g^(k)``, damping and the applied generalised
   force of ``liedyn.closed_form_jets``, the Jacobian jets of
   ``liedyn.constraint_jacobian``) on random trees with armature, damping,
   applied wrench jets and every kind of constraint, orders 0 to 4.
2. Order 0 against Pinocchio's ``constraintDynamics`` (Solo-12 on four point
   feet, Talos on two flat feet, Panda holding its hand, loops on random
   trees built in both libraries).
3. Order 1 against Pinocchio's ``computeConstraintDynamicsDerivatives``
   chained with the rates of the state and of the torques (world contacts).
4. Orders 1 to 4 by Taylor consistency: an order-0 map (Pinocchio's; for
   loops and 1-D contacts liedyn's own, checked in 1 and 2) evaluated along
   the Taylor polynomials of the returned jets, differentiated in time by
   central differences, the error falling 4× when the step is halved.
5. Identities: the whole robot's Newton–Euler (inverse dynamics fed the
   returned motion and the contact wrenches returns the input forces), ideal
   constraints do no work, the constraint rates ``(J ν)^(k)`` vanish, a
   translation of the whole scene changes nothing but the base twist's
   reference point.
6. Redundant constraints: the unique accelerations, the rank, the
   minimum-norm forces (numpy's least squares of the dense system), their
   jets as the time derivatives of the instantaneous minimum-norm force,
   and the refusal of an inconsistent state.
7. Baumgarte stabilisation: the stabilised constraint equation and its
   documented derivatives hold; where ``φ̇ = J ν`` the jets are the time
   derivatives of the stabilised order 0, and for a 6-D world contact they
   are so to second order in the violation, as SPEC §13.2 says (for a 6-D
   loop only to first order: a strict xfail records it).
8. Bad input: a ValueError or TypeError naming the argument or constraint,
   also in a fresh interpreter.
"""

import functools
from math import comb

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
    """``model``'s bodies and joints rebuilt through :class:`liedyn.ModelBuilder`
    from its public arrays (its added frames are not carried over), plus the
    frames ``(name, body, offset)``."""
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
# sides are float64 solves of the same well-posed system, whose jets grow
# ~10× per order on these trees; measured at most 8e-11 (tree 3, order 3),
# 5e-13 at order 0.
KKT_TOL = 1e-9


def kkt_errors(case):
    """Largest relative error of ``ν^(k+1)`` and ``λ^(k)`` against the dense
    solve over the calls of orders 0..4 of one case, per output order ``k``."""
    seed, nb, floating, kinds = case
    model, cs, C0, q0 = constrained_tree(seed, nb, floating, kinds)
    rng = np.random.default_rng(100 + seed)
    R = 4
    V0, qd, tau, W0, app = random_inputs(model, rng, R)
    q = np.vstack([q0, qd])
    nu_ref, lam_ref, rank = oracle.kkt_jets(model, cs, C0, V0, q, R, tau=tau, base_wrench=W0,
                                            applied=app)
    assert rank == cs.n_rows
    worst = np.zeros(R + 1)
    for r in range(R + 1):
        res = solve(model, cs, C0, V0, q, r, tau=tau[:r + 1],
                    base_wrench=None if W0 is None else W0[:r + 1], applied=app[:r + 1])
        assert res.rank == cs.n_rows
        nu = nu_of(model, res)
        assert np.array_equal(nu[0], nu_ref[0])
        for k in range(r + 1):
            worst[k] = max(worst[k], rel_err(nu[k + 1], nu_ref[k + 1]),
                           rel_err(res.force[k], lam_ref[k]))
    return worst


@pytest.mark.parametrize("case", TREE_CASES, ids=lambda c: f"tree{c[0]}")
def test_against_dense_kkt_on_random_trees(case):
    worst = kkt_errors(case)
    assert np.max(worst) <= KKT_TOL, worst


def test_oracle_reads_no_unknown_row():
    """The dense oracle pads the unknown ``ν^(k+1)`` with zeros: the jets it
    uses (``M^(a)``, ``C^(a)``, ``g^(a)``, the applied force for ``a ≤ k``,
    ``J^(a)`` for ``a ≤ k + 1``) must not depend on that row."""
    model, cs, C0, q0 = constrained_tree(0, 16, True, TREE_CASES[0][3])
    rng = np.random.default_rng(1)
    k = 3
    nu = rng.normal(size=(k + 2, model.nv))
    app = rng.normal(size=(k + 1, model.n_bodies, 6))
    out = []
    for last in (np.zeros(model.nv), rng.normal(size=model.nv) * 10.0):
        nu[k + 1] = last
        Vb, qj = oracle.motion_jets(model, nu, q0)
        cf = ld.closed_form_jets(model, C0, Vb, qj, k, applied=app)
        J = ld.constraint_jacobian(model, cs, C0, Vb, qj, k + 1)
        out.append([cf.mass, cf.coriolis, cf.gravity, cf.applied_force, J])
    for a, b in zip(*out):
        assert np.array_equal(a, b)


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
    pm = br.model
    pd = pm.createData()            # its own: the bridge's data serves other tests' algorithms
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
    return V[1], qo[2], lam, (qp, vp[0], tp, models, datas, pd)


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


# Order 0: liedyn and Pinocchio solve the same KKT system in float64;
# measured relative errors ``max|a − b| / (1 + max|b|)`` at most 1.4e-12.
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


def _worst(into, errors):
    for k, e in errors.items():
        into[k] = max(into.get(k, 0.0), e)
    return into


def pin0_robot_errors(case):
    """``{quantity: largest relative error}`` over three states."""
    name, frames, reference, consistent = case
    worst = {}
    for seed in range(3):
        model, br, cs, C0, V0, q, tau, W0 = robot_case(name, frames, seed, consistent)
        _worst(worst, _pin0_errors(model, br, cs, frames, C0, V0, q, tau, W0, reference))
    return worst


@pytest.mark.parametrize("case", PIN_ROBOT_CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}")
def test_order_0_against_pinocchio_on_robots(case):
    worst = pin0_robot_errors(case)
    assert max(worst.values()) <= PIN0_TOL, worst


LOOP_CASES = [(10, True, ("3l", "6l", "3w")), (4, False, ("3l", "3w")), (12, True, ("6l", "6w"))]


def pin0_loop_errors(case, reference):
    """``{quantity: largest relative error}`` over three states of a tree
    with loops (``J ν = 0``: Pinocchio's relative twist of a loop differs
    from liedyn's elsewhere)."""
    seed, floating, kinds = case
    model, br, frames, C0, q0 = loop_tree_case(seed, floating, kinds)
    cs = liedyn_constraints(model, frames)
    rng = np.random.default_rng(seed)
    worst = {}
    for _ in range(3):
        V0, qd = consistent_velocity(model, cs, C0, q0, rng)
        tau = rng.normal(size=(1, model.n_joints))
        W0 = rng.normal(size=(1, 6)) if floating else None
        _worst(worst, _pin0_errors(model, br, cs, frames, C0, V0, np.vstack([q0, qd]), tau, W0,
                                   reference))
        q0 = q0 + rng.normal(size=q0.shape) * 0.1
    return worst


@pytest.mark.parametrize("case", LOOP_CASES, ids=lambda c: f"tree{c[0]}")
@pytest.mark.parametrize("reference", ["LOCAL", "LOCAL_WORLD_ALIGNED"])
def test_order_0_against_pinocchio_with_loops(case, reference):
    worst = pin0_loop_errors(case, reference)
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
    dV, qdd, lam0, (qp, vp, tp0, models, datas, pd) = pin_constraint_dynamics(
        br, cs, frames, C0, V0, q, tau, W0, reference)
    a = np.array(pd.ddq)
    dq, dv, dtau, lq, lv, ltau = pin.computeConstraintDynamicsDerivatives(
        br.model, pd, models, datas, pin.ProximalSettings(1e-14, 0.0, 1))
    eff = tau[:2] - model.joint_damping * np.vstack([q[1], qdd])
    tp = br.force_to_pin(C0, V0, None if W0 is None else W0[:2], eff)
    vj = np.stack([vp, a, dq @ vp + dv @ a + dtau @ tp[1]])
    lam_rate = pin_forces(cs, datas, lq @ vp + lv @ a + ltau @ tp[1], reference)
    if reference == "LOCAL":               # λ_w = R λ_c: the frame's rotation adds ω × λ_w
        for c, rows in enumerate(cs.rows):
            w = np.asarray(pin.getFrameVelocity(br.model, pd, br.model.getFrameId(
                frames[c][1]), pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).angular)
            x = lam0[rows]
            lam_rate[rows] += (np.concatenate([np.cross(w, x[:3]), np.cross(w, x[3:])])
                               if len(x) == 6 else np.cross(w, x))
    _, V, qo = br.motion_from_pin(qp, vj)
    return V, qo, np.stack([lam0, lam_rate])


# Measured relative errors ``max|a − b| / (1 + max|b|)`` of the order-1 rows
# at most 1.4e-12; float64 derivatives of the same KKT system.
PIN1_TOL = 1e-10
PIN1_CASES = [
    ("solo12", FEET_SOLO, "LOCAL_WORLD_ALIGNED", False),
    ("solo12", FEET_SOLO, "LOCAL", True),
    ("talos", FEET_TALOS, "LOCAL", True),
    ("talos", FEET_TALOS, "LOCAL_WORLD_ALIGNED", True),
    ("panda", HAND_PANDA, "LOCAL_WORLD_ALIGNED", False),
]


def pin1_robot_errors(case):
    """``{quantity: largest relative error}`` of the order-1 rows (and q̈)
    over three states."""
    name, frames, reference, consistent = case
    worst = {}
    for seed in range(3):
        model, br, cs, C0, V0, q, tau, W0 = robot_case(name, frames, seed, consistent)
        res = solve(model, cs, C0, V0, q, 1, tau=tau[:2],
                    base_wrench=None if W0 is None else W0[:2])
        V, qo, lam = pin_order_1(br, cs, frames, C0, V0, q, tau, W0, reference)
        e = {"q3": rel_err(res.q[3], qo[3]), "force1": rel_err(res.force[1], lam[1]),
             "q2": rel_err(res.q[2], qo[2])}
        if model.floating_base:
            e["V0_2"] = rel_err(res.base_twist[2], V[2])
        _worst(worst, e)
    return worst


@pytest.mark.parametrize("case", PIN1_CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}")
def test_order_1_against_pinocchio_derivatives(case):
    worst = pin1_robot_errors(case)
    assert max(worst.values()) <= PIN1_TOL, worst


def pin1_tree_errors():
    """A floating random tree with armature, damping, a base wrench jet and
    6-D and 3-D world contacts, built in Pinocchio by ``to_pinocchio``: the
    largest relative error of the order-1 rows over three states."""
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
    return worst


def test_order_1_against_pinocchio_derivatives_on_a_random_tree():
    assert pin1_tree_errors() <= PIN1_TOL


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


# Halving h must divide each error by about 4 (measured 3.70–4.07), and at
# h/2 the error is at most TAYLOR_TOL (measured up to 8e-3, the O(h²)
# truncation).
# h is set by the fastest mode of each case: Talos' joint damping on its
# light gripper links (b/I ≈ 900 s⁻¹) makes its jets grow ~1000× per order,
# which needs h ≈ 2e-4; without damping 5e-3 does.
TAYLOR_RATIO = (3.5, 4.5)
TAYLOR_TOL = 2e-2
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


def taylor_robot_errors(case, seed):
    name, frames, damping, h = case
    model, br, cs, C0, V0, q, tau, W0 = robot_case(name, frames, seed, True, damping)
    res = solve(model, cs, C0, V0, q, 4, tau=tau, base_wrench=W0)
    return taylor_errors(model, res, C0, tau, W0, pinocchio_order_0(br, cs, frames), h)


@pytest.mark.parametrize("case", TAYLOR_CASES, ids=lambda c: f"{c[0]}-damping{c[2]}")
def test_orders_1_to_4_by_taylor_consistency_with_pinocchio(case):
    for seed in range(2):
        _assert_h2(taylor_robot_errors(case, seed), (case[0], seed))


def taylor_loop_errors():
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
    return taylor_errors(model, res, C0, tau, W0, liedyn_order_0(model, cs), 1e-2)


def test_orders_1_to_4_by_taylor_consistency_with_loops():
    _assert_h2(taylor_loop_errors(), "loops")


# ------------------------------------------------------------- 5. identities --

def tree_frames(cs):
    """``(frame_a, frame_b or None)`` of each constraint of a
    :func:`constrained_tree` set (``None``: the world, or a fixed base)."""
    return [(f"f{c}a", f"f{c}b" if cs.loop[c] else None) for c in range(len(cs))]


def contact_wrenches(model, cs, names, C0, res):
    """The constraint forces ``res.force`` as spatial wrench jets
    ``(r+1, N, 6)`` about the world origin on the bodies they act on: a
    point force ``f`` at ``p`` is ``(p × f, f)``, a 6-D ``λ = (μ, f)`` about
    ``p_a`` is ``(μ + p_a × f, f)``; ``−`` those on body ``b`` (at ``p_b``
    for a point, ``p_a`` for a 6-D). Point jets from
    :func:`liedyn.frame_kinematics`, products by the Leibniz rule."""
    r = res.force.shape[0] - 1
    V = res.base_twist if model.floating_base else None
    W = np.zeros((r + 1, model.n_bodies, 6))

    def point(frame):
        return ld.frame_kinematics(model, C0, V, res.q, r, frame).position[:r + 1]

    def moment(P, F, k):
        return sum(comb(k, a) * np.cross(P[a], F[k - a]) for a in range(k + 1))

    for c, (fa, fb) in enumerate(names):
        lam = res.force_of(c)
        kind = cs.kinds[c]
        if kind == "6d":
            mu, F = lam[:, :3], lam[:, 3:]
        elif kind == "1d":
            mu, F = np.zeros((r + 1, 3)), lam * cs.data.normal[c]
        else:
            mu, F = np.zeros((r + 1, 3)), lam
        Pa = point(fa)
        Pb = Pa if (kind == "6d" or fb is None) else point(fb)
        for k in range(r + 1):
            W[k, cs.data.body_a[c], :3] += mu[k] + moment(Pa, F, k)
            W[k, cs.data.body_a[c], 3:] += F[k]
            if fb is not None:
                W[k, cs.data.body_b[c], :3] -= mu[k] + moment(Pb, F, k)
                W[k, cs.data.body_b[c], 3:] -= F[k]
    return W


def identity_cases():
    """``(label, model, cs, frame names, C0, V0, q (2, n), tau, W0, applied)``
    with ``J ν = 0``, order-4 input jets."""
    out = []
    for seed, nb, floating, kinds in TREE_CASES[:5]:
        model, cs, C0, q0 = constrained_tree(seed, nb, floating, kinds)
        rng = np.random.default_rng(200 + seed)
        V0, qd = consistent_velocity(model, cs, C0, q0, rng)
        _, _, tau, W0, app = random_inputs(model, rng, 4)
        out.append((f"tree{seed}", model, cs, tree_frames(cs), C0, V0, np.vstack([q0, qd]), tau,
                    W0, app))
    for name, frames, damping in (("talos", FEET_TALOS, True), ("talos", FEET_TALOS, False),
                                  ("solo12", FEET_SOLO, True), ("panda", HAND_PANDA, True)):
        model, br, cs, C0, V0, q, tau, W0 = robot_case(name, frames, 0, True, damping)
        out.append((name, model, cs, [(a, b) for _, a, b in frames], C0, V0, q, tau, W0, None))
    return out


# The inverse dynamics of the returned motion with the contact wrenches
# applied gives back the input forces, to rounding of the terms it sums:
# max|error| ≤ NEWTON_EULER_TOL (1 + max|τ̄^(k)| + max_i (|M| |ν^(k+1)|)_i)
# (measured ≤ 1.5e-14 of that scale, orders 0–4).
NEWTON_EULER_TOL = 1e-13
# The rates (J ν)^(k) relative to 1 + Σ_a binom(k, a) max|J^(a)| max|ν^(k−a)|,
# and the power of the constraint wrenches relative to
# 1 + Σ_a binom(k, a) Σ|W^(a)| max|V^(k−a)|: rounding only (measured ≤ 8e-13).
RATE_TOL = 1e-11


def rate_error(J, nu, k):
    """``max|(J ν)^(k)| / (1 + Σ_a binom(k, a) max|J^(a)| max|ν^(k−a)|)``."""
    scale = sum(comb(k, a) * np.max(np.abs(J[a])) * np.max(np.abs(nu[k - a]))
                for a in range(k + 1))
    return float(np.max(np.abs(oracle.constraint_rate(J, nu, k))) / (1.0 + scale))


@pytest.fixture(scope="module")
def identity_results():
    out = []
    for label, model, cs, names, C0, V0, q, tau, W0, app in identity_cases():
        res = solve(model, cs, C0, V0, q, 4, tau=tau, base_wrench=W0, applied=app)
        out.append((label, model, cs, names, C0, tau, W0, app, res))
    return out


def newton_euler_error(model, cs, names, C0, tau, W0, app, res):
    """H-GRNE (``liedyn.inverse_dynamics``, an independent recursion) fed the
    returned motion jets with the constraint forces as applied wrenches:
    the largest error of the returned ``τ`` and base wrench (the input, or a
    fixed base's reaction) over the calls of orders 0, 2, 4, relative to
    the NEWTON_EULER_TOL scale."""
    Wc = contact_wrenches(model, cs, names, C0, res)
    Wapp = Wc if app is None else Wc + app
    M = np.abs(ld.mass_matrix(model, C0, res.q[0]))
    nu = nu_of(model, res)
    W_want = W0 if model.floating_base else res.base_wrench
    worst = 0.0
    for r in (0, 2, 4):
        inv = ld.inverse_dynamics(model, C0, res.base_twist if model.floating_base else None,
                                  res.q, r, applied=Wapp[:r + 1])
        for k in range(r + 1):
            got = np.concatenate([inv.base_wrench[k], inv.tau[k]])
            want = np.concatenate([W_want[k], tau[k]])
            scale = 1.0 + np.max(np.abs(want)) + np.max(M @ np.abs(nu[k + 1]))
            worst = max(worst, float(np.max(np.abs(got - want)) / scale))
    return worst


def rate_and_power_errors(model, cs, names, C0, res):
    """With ``J ν = 0`` at the instant: the largest ``(J ν)^(k)``, k = 0..r+1
    (``constraint_jacobian`` and the returned ν jets; :func:`rate_error`),
    and the largest power of the constraint wrenches on the bodies and its
    first r derivatives, ``Σ_a binom(k, a) Σ_j W_j^(a)ᵀ V_j^(k−a)`` (body
    twists of ``forward_kinematics``), relative to its scale."""
    r = res.force.shape[0] - 1
    V = res.base_twist if model.floating_base else None
    J = ld.constraint_jacobian(model, cs, C0, V, res.q, r + 1)
    nu = nu_of(model, res)
    rate = max(rate_error(J, nu, k) for k in range(r + 2))
    Wc = contact_wrenches(model, cs, names, C0, res)
    tw = ld.forward_kinematics(model, C0, V, res.q, r).twist
    power = 0.0
    for k in range(r + 1):
        p = sum(comb(k, a) * np.sum(Wc[a] * tw[k - a]) for a in range(k + 1))
        scale = sum(comb(k, a) * np.sum(np.abs(Wc[a])) * np.max(np.abs(tw[k - a]))
                    for a in range(k + 1))
        power = max(power, abs(float(p)) / (1.0 + scale))
    return rate, power


def test_whole_robot_newton_euler(identity_results):
    for label, model, cs, names, C0, tau, W0, app, res in identity_results:
        e = newton_euler_error(model, cs, names, C0, tau, W0, app, res)
        assert e <= NEWTON_EULER_TOL, (label, e)


def test_constraint_wrenches_agree_with_the_frame_kinematics_construction(identity_results):
    """``liedyn.constraint_wrenches`` (what the constrained inverse dynamics
    applies) against :func:`contact_wrenches` built here from
    ``frame_kinematics``' point jets."""
    for label, model, cs, names, C0, tau, W0, app, res in identity_results:
        mine = contact_wrenches(model, cs, names, C0, res)
        theirs = ld.constraint_wrenches(model, cs, C0, res.base_twist if model.floating_base
                                        else None, res.q, res.force)
        for k in range(mine.shape[0]):
            assert rel_err(theirs[k], mine[k]) <= 1e-13, (label, k)


def test_constraint_rates_vanish_and_forces_do_no_work(identity_results):
    """``(J ν)^(k) = 0`` and ``(λᵀ J ν)^(k) = 0``: ideal constraints do no work."""
    for label, model, cs, names, C0, tau, W0, app, res in identity_results:
        rate, power = rate_and_power_errors(model, cs, names, C0, res)
        assert rate <= RATE_TOL and power <= RATE_TOL, (label, rate, power)


def off_manifold_rate_error(case):
    """The largest ``(J ν)^(k)``, k = 1..4, of an order-3 solution from a
    state with ``J ν ≠ 0``."""
    seed, nb, floating, kinds = case
    model, cs, C0, q0 = constrained_tree(seed, nb, floating, kinds)
    rng = np.random.default_rng(300 + seed)
    V0, qd, tau, W0, app = random_inputs(model, rng, 3)
    res = solve(model, cs, C0, V0, np.vstack([q0, qd]), 3, tau=tau, base_wrench=W0, applied=app)
    V = res.base_twist if model.floating_base else None
    J = ld.constraint_jacobian(model, cs, C0, V, res.q, 4)
    nu = nu_of(model, res)
    assert np.max(np.abs(J[0] @ nu[0])) > 0.1
    return max(rate_error(J, nu, k) for k in range(1, 5))


def test_constraint_rates_vanish_away_from_the_constraint_manifold():
    """The constraint holds at the acceleration level and above,
    ``(J ν)^(k) = 0`` for k = 1..r+1, when ``J ν ≠ 0`` (non-redundant sets):
    the drift of a numerical trajectory stays what it is."""
    for case in TREE_CASES:
        assert off_manifold_rate_error(case) <= RATE_TOL, case


# Moving the whole scene by 10 km: the joint jets and the reported forces
# (world axes, moments about the contact points) are invariant, the base
# twist jets map by Ad_T; measured ≤ 4e-12 relative (the kernels compute
# about the base origin, SPEC §1).
FAR_TOL = 1e-10


def far_from_origin_error(name, frames, d=1e4):
    model, br, cs, C0, V0, q, tau, W0 = robot_case(name, frames, 0, True)
    ref = solve(model, cs, C0, V0, q, 3, tau=tau[:4], base_wrench=W0[:4])
    T = np.eye(4)
    T[:3, 3] = (d, -0.5 * d, 0.3 * d)
    A = se3.Ad(T)
    res = solve(model, cs, T @ C0, (A @ V0[0])[None], q, 3, tau=tau[:4], base_wrench=W0[:4])
    return max(max(rel_err(res.q[k + 2], ref.q[k + 2]), rel_err(res.force[k], ref.force[k]),
                   rel_err(np.linalg.solve(A, res.base_twist[k + 1]), ref.base_twist[k + 1]))
               for k in range(4))


@pytest.mark.parametrize("robot_frames", [("talos", FEET_TALOS), ("solo12", FEET_SOLO)],
                         ids=lambda c: c[0])
def test_invariant_under_a_translation_of_the_world(robot_frames):
    assert far_from_origin_error(*robot_frames) <= FAR_TOL


# ------------------------------------------------------- 6. redundant sets --

# (robot, redundant set, the non-redundant set it reduces to, rank)
REDUNDANT_CASES = [
    ("talos", [ld.Contact6D("left_sole_link"), ld.Contact3D("leg_left_6_link"),
               ld.Contact6D("right_sole_link")], FEET_TALOS, 12),
    ("talos", [ld.Contact6D("left_sole_link"), ld.Contact3D("left_sole_link"),
               ld.Contact6D("right_sole_link")], FEET_TALOS, 12),
    ("solo12", [ld.Contact3D("FL_FOOT", name="FL a"), ld.Contact3D("FL_FOOT", name="FL b")]
     + [ld.Contact3D(f) for f in ("FR_FOOT", "HL_FOOT", "HR_FOOT")], FEET_SOLO, 12),
]
# ν jets of the redundant set against the non-redundant one's, λ against
# numpy's minimum-norm least squares of the dense system: relative error
# (1 + max|b|) per order, measured ≤ 3e-11 (Talos without damping, Solo).
REDUNDANT_TOL = 1e-9


def redundant_errors(case):
    """``{check: largest relative error}`` of a redundant set at a state with
    ``J ν = 0``, orders 0..4: ν jets against the non-redundant set's and the
    dense solve's, λ against the minimum-norm least squares, the generalised
    force ``Jᵀλ`` against the non-redundant set's, the part of λ in the null
    space of ``Jᵀ`` (zero for the minimum norm), and for duplicates the even
    split of the force. Also checks the ranks."""
    name, specs, frames, rank = case
    model, br, cs1, C0, V0, q, tau, W0 = robot_case(name, frames, 3, True, damping=False)
    cs = ld.ConstraintSet(model, specs)
    R = 4
    res = solve(model, cs, C0, V0, q, R, tau=tau, base_wrench=W0)
    ref = solve(model, cs1, C0, V0, q, R, tau=tau, base_wrench=W0)
    assert res.rank == rank and ref.rank == cs1.n_rows == rank
    nu, nu1 = nu_of(model, res), nu_of(model, ref)
    nu_ref, lam_ref, rank_ref = oracle.kkt_jets(model, cs, C0, V0, q, R, tau=tau, base_wrench=W0)
    assert rank_ref == rank
    J = ld.constraint_jacobian(model, cs, C0, None, q[:1], 0)[0]
    J1 = ld.constraint_jacobian(model, cs1, C0, None, q[:1], 0)[0]
    null = np.linalg.svd(J.T)[2][rank:]
    e = {"ν vs non-redundant": max(rel_err(nu[k], nu1[k]) for k in range(1, R + 2)),
         "ν vs dense": max(rel_err(nu[k], nu_ref[k]) for k in range(1, R + 2)),
         "λ vs lstsq": max(rel_err(res.force[k], lam_ref[k]) for k in range(R + 1)),
         "Jᵀλ": rel_err(J.T @ res.force[0], J1.T @ ref.force[0]),
         "null-space part": float(np.max(np.abs(null @ res.force.T))
                                  / (1 + np.max(np.abs(res.force))))}
    if name == "solo12":                                       # duplicates share the force
        e["duplicate split"] = max(rel_err(res.force_of(c), 0.5 * ref.force_of("3d:FL_FOOT"))
                                   for c in ("FL a", "FL b"))
    return e


@pytest.mark.parametrize("case", REDUNDANT_CASES, ids=lambda c: f"{c[0]}-{c[1][1].frame}")
def test_redundant_constraints(case):
    errors = redundant_errors(case)
    assert max(errors.values()) <= REDUNDANT_TOL, errors


def redundant_taylor_errors(case):
    """``λ^(k)`` against central differences of the instantaneous
    minimum-norm force (liedyn's order 0, checked above against numpy's
    least squares) along the Taylor polynomials of the jets."""
    name, specs, frames, _ = case
    model, br, cs1, C0, V0, q, tau, W0 = robot_case(name, frames, 4, True, damping=False)
    cs = ld.ConstraintSet(model, specs)
    res = solve(model, cs, C0, V0, q, 4, tau=tau, base_wrench=W0)
    return taylor_errors(model, res, C0, tau, W0, liedyn_order_0(model, cs), 5e-3)


@pytest.mark.parametrize("case", REDUNDANT_CASES[:1] + REDUNDANT_CASES[2:],
                         ids=lambda c: c[0])
def test_redundant_force_jets_are_derivatives_of_the_minimum_norm_force(case):
    _assert_h2(redundant_taylor_errors(case), case[0])


@pytest.mark.parametrize("case", REDUNDANT_CASES[:1], ids=lambda c: c[0])
def test_redundant_constraints_need_a_consistent_velocity(case):
    """6-D and 3-D contacts on one foot at different points: where the foot
    moves (``J ν ≠ 0``) the null space of ``Jᵀ`` moves and ``J ν̇ = −J̇ ν``
    has no solution; refused, naming a constraint."""
    name, specs, frames, _ = case
    model, br, cs1, C0, V0, q, tau, W0 = robot_case(name, frames, 3, False)
    cs = ld.ConstraintSet(model, specs)
    with pytest.raises(ValueError, match=r"redundant \(rank 12 of 15 rows\).*constraint '[^']+'"):
        solve(model, cs, C0, V0, q, 2, tau=tau[:3], base_wrench=W0[:3])


def test_duplicate_constraints_accept_any_velocity():
    """Two copies of one point contact: their rows stay equal along any
    motion (the null space of ``Jᵀ`` does not move), so ``J ν ≠ 0`` is
    consistent and the accelerations are those of one copy."""
    name, specs, frames, _ = REDUNDANT_CASES[2]
    model, br, cs1, C0, V0, q, tau, W0 = robot_case(name, frames, 5, False)
    cs = ld.ConstraintSet(model, specs)
    res = solve(model, cs, C0, V0, q, 3, tau=tau[:4], base_wrench=W0[:4])
    ref = solve(model, cs1, C0, V0, q, 3, tau=tau[:4], base_wrench=W0[:4])
    for k in range(4):
        assert rel_err(nu_of(model, res)[k + 1], nu_of(model, ref)[k + 1]) <= REDUNDANT_TOL


# --------------------------------------------------------------- 7. Baumgarte --

BAUMGARTE = (2.0, 3.0)
# The stabilised constraint equations, relative to the scale of rate_error
# (plus β² max|φ|): rounding only, measured ≤ 1.5e-13. The dense solve with
# the same terms: as KKT_TOL (measured ≤ 8e-13).
BAUMGARTE_TOL = 1e-12


def off_anchor(seed, nb, floating, kinds, explicit=False):
    """A :func:`constrained_tree` set anchored at its configuration
    (:meth:`ConstraintSet.anchored`, or ``anchor=`` given to each world
    contact when ``explicit``), and a state moved off it with ``J ν ≠ 0``."""
    model, cs, C0, q0 = constrained_tree(seed, nb, floating, kinds)
    rng = np.random.default_rng(400 + seed)
    if explicit:
        specs = []
        for c, (fa, fb) in enumerate(tree_frames(cs)):
            X = ld.frame_pose(model, C0, q0, fa)
            kind = cs.kinds[c]
            if fb is not None:
                specs.append((ld.Contact6D if kind == "6d" else ld.Contact3D)(fa, fb))
            elif kind == "6d":
                specs.append(ld.Contact6D(fa, anchor=X))
            elif kind == "3d":
                specs.append(ld.Contact3D(fa, anchor=X[:3, 3]))
            else:
                specs.append(ld.Contact1D(fa, normal=cs.data.normal[c], anchor=X[:3, 3]))
        anchored = ld.ConstraintSet(model, specs)
    else:
        anchored = cs.anchored(C0, q0)
    new = _rows_where(cs, ~cs.data.anchored)                    # the anchors just set
    assert np.all(np.abs(ld.constraint_error(model, anchored, C0, q0)[new]) <= 1e-12)
    if floating:
        C0 = se3.exp(rng.normal(size=6) * 0.05) @ C0
    q0 = q0 + rng.normal(size=q0.shape) * 0.05
    V0, qd, tau, W0, app = random_inputs(model, rng, 3)
    return model, anchored, C0, V0, np.vstack([q0, qd]), tau, W0, app


def _rows_where(cs, which):
    """Row mask of the constraints ``which`` (nc,) bool."""
    rows = np.zeros(cs.n_rows, bool)
    for c, sl in enumerate(cs.rows):
        rows[sl] = which[c]
    return rows


def baumgarte_errors(case, explicit):
    """``J ν̇ + J̇ ν = −2α J ν − β² φ`` at order 0 (``φ`` from
    ``constraint_error``, ``J``, ``J̇`` from ``constraint_jacobian``), and its
    derivatives as documented, ``(Jν)^(k+1) + 2α (Jν)^(k) + β² (Jν)^(k−1) = 0``
    (``φ^(k)`` taken as ``(Jν)^(k−1)``): the largest residual relative to
    its scale, and the largest relative error of all orders against the
    dense solve with the same terms."""
    seed, nb, floating, kinds = case
    model, cs, C0, V0, q, tau, W0, app = off_anchor(seed, nb, floating, kinds, explicit)
    a, b = BAUMGARTE
    phi = ld.constraint_error(model, cs, C0, q[0])
    assert np.max(np.abs(phi)) > 1e-2
    res = solve(model, cs, C0, V0, q, 3, tau=tau, base_wrench=W0, applied=app, baumgarte=(a, b))
    plain = solve(model, cs, C0, V0, q, 0, tau=tau[:1], base_wrench=None if W0 is None else
                  W0[:1], applied=app[:1])
    assert rel_err(plain.q[2], res.q[2]) > 1e-3               # the terms change the motion
    J = ld.constraint_jacobian(model, cs, C0, res.base_twist if floating else None, res.q, 4)
    nu = nu_of(model, res)
    assert np.max(np.abs(J[0] @ nu[0])) > 0.1
    rate = [oracle.constraint_rate(J, nu, k) for k in range(5)]
    residual = 0.0
    for k in range(4):
        lhs = rate[k + 1] + 2 * a * rate[k] + b * b * (phi if k == 0 else rate[k - 1])
        scale = 1.0 + b * b * np.max(np.abs(phi)) + sum(
            comb(k + 1, s) * np.max(np.abs(J[s])) * np.max(np.abs(nu[k + 1 - s]))
            for s in range(k + 2))
        residual = max(residual, float(np.max(np.abs(lhs)) / scale))
    nu_ref, lam_ref, _ = oracle.kkt_jets(model, cs, C0, V0, q, 3, tau=tau, base_wrench=W0,
                                         applied=app, baumgarte=(a, b), phi=phi)
    dense = max(max(rel_err(nu[k + 1], nu_ref[k + 1]), rel_err(res.force[k], lam_ref[k]))
                for k in range(4))
    return residual, dense


@pytest.mark.parametrize("explicit", [False, True])
@pytest.mark.parametrize("case", [TREE_CASES[0], TREE_CASES[3], TREE_CASES[2]],
                         ids=lambda c: f"tree{c[0]}")
def test_baumgarte_stabilised_constraint_holds(case, explicit):
    residual, dense = baumgarte_errors(case, explicit)
    assert residual <= BAUMGARTE_TOL and dense <= KKT_TOL, (residual, dense)


def _baumgarte_taylor_errors(seed, nb, kinds):
    model, cs, C0, V0, q, tau, W0, app = off_anchor(seed, nb, True, kinds)
    rng = np.random.default_rng(5)
    tau = np.vstack([tau, rng.normal(size=(1, model.n_joints))])
    W0 = np.vstack([W0, rng.normal(size=(1, 6))])
    res = solve(model, cs, C0, V0 * 0.3, np.vstack([q[0], q[1] * 0.3]), 4, tau=tau,
                base_wrench=W0, baumgarte=BAUMGARTE)

    def order_0(C, V, qq, t, W):
        r = solve(model, cs, C, V, qq, 0, tau=t, base_wrench=W, baumgarte=BAUMGARTE)
        return r.base_twist[1], r.q[2], r.force[0]

    return taylor_errors(model, res, C0, tau, W0, order_0, 1e-2)


def test_baumgarte_jets_are_time_derivatives_where_the_error_rate_is_j_nu():
    """For point and normal contacts with the world and ball-joint loops,
    ``φ̇ = J ν`` exactly, so the stabilised jets must be the time
    derivatives of the stabilised order 0 (``φ`` recomputed at each
    configuration): central differences along the Taylor polynomials."""
    _assert_h2(_baumgarte_taylor_errors(5, 12, ("1w", "1w", "1w", "3l")), "baumgarte")
    _assert_h2(_baumgarte_taylor_errors(0, 16, ("3w", "3l")), "baumgarte")


def _assembled_6d(kind):
    """A floating random tree with one 6-D constraint (``"6w"``: with the
    world, ``"6l"``: a loop) whose frames coincide at the tree's
    configuration ``(C0, q0)``: ``(model, cs, C0, q0)`` with ``φ(C0, q0) = 0``."""
    model, cs, C0, q0 = constrained_tree(0 if kind == "6w" else 1, 16 if kind == "6w" else 20,
                                         True, (kind,))
    if kind == "6w":
        return model, cs.anchored(C0, q0), C0, q0
    f = model.frame_index("f0a")
    b = int(cs.data.body_b[0])
    Cb = ld.frame_pose(model, C0, q0, model.body_names[b])
    model = with_frames(model, [("f0a", int(model.frame_body[f]), model.frame_offset[f]),
                                ("f0b", b, se3.inv(Cb) @ ld.frame_pose(model, C0, q0, "f0a"))])
    return model, ld.ConstraintSet(model, [ld.Contact6D("f0a", "f0b")]), C0, q0


def baumgarte_order_1_discrepancy(kind, s):
    """``max|D₁ − jet₁|`` (absolute) of the stabilised order-1 jets against
    central differences of the stabilised order 0, at a state off an
    assembled 6-D constraint by ``s`` (configuration ``0.05 s``, velocity a
    consistent O(1) part plus ``0.1 s`` violating it), β only."""
    model, cs, C0a, q0a = _assembled_6d(kind)
    rng = np.random.default_rng(9)
    C0 = se3.exp(rng.normal(size=6) * 0.05 * s) @ C0a
    q0 = q0a + rng.normal(size=q0a.shape) * 0.05 * s
    _, _, tau, W0, _ = random_inputs(model, rng, 1)
    V0, qd = consistent_velocity(model, cs, C0, q0, rng, 0.5)
    nu = np.concatenate([V0[0], qd]) + 0.1 * s * rng.normal(size=model.nv)
    q = np.vstack([q0, nu[6:]])
    beta = (0.0, 3.0)
    res = solve(model, cs, C0, nu[None, :6], q, 1, tau=tau, base_wrench=W0, baumgarte=beta)

    def order_0(C, V, qq, t, W):
        r = solve(model, cs, C, V, qq, 0, tau=t, base_wrench=W, baumgarte=beta)
        return r.base_twist[1], r.q[2], r.force[0]

    g = order_0_along_jets(model, res, C0, tau, W0, order_0)
    h = 1e-3
    jet = np.concatenate([res.base_twist[2], res.q[3], res.force[1]])
    return float(np.max(np.abs((g(h) - g(-h)) / (2 * h) - jet)))


# SPEC §13.2: φ^(k) = (J ν)^(k−1) is the error's rate to second order in the
# violation for a 6-D world contact, so off an assembled 6-D constraint the
# stabilised order-1 jets must miss the time derivatives of the stabilised
# order 0 by a term of second order in the violation: halving it quarters
# the miss (the central differences' own truncation is below 1 % of it).
SECOND_ORDER = (3.5, 4.5)


def test_baumgarte_6d_world_contact_jets_are_derivatives_to_second_order():
    """With the world, ``θ̇ = J_l(θ)⁻¹ ω_a`` and ``ω_a`` is itself a
    violation: measured miss ratios 3.9, 4.0."""
    e = [baumgarte_order_1_discrepancy("6w", s) for s in (0.5, 0.25, 0.125)]
    assert all(SECOND_ORDER[0] <= a / b <= SECOND_ORDER[1] for a, b in zip(e, e[1:])), e


@pytest.mark.xfail(strict=True, reason=(
    "for a 6-D loop, φ^(1) = (Jν)^(0) misses the error's rate at first order: the rotation "
    "vector's rate is J_l(θ)⁻¹ (ω_a − R_a R_bᵀ ω_b), not ω_a − ω_b, and the translation "
    "error's is ṗ_a − ṗ_b, not ṗ_a − v_b(p_a) (a difference ω_b × (p_a − p_b)); with body b "
    "turning at O(1) the miss does not quarter (measured ratios 2.9, 2.5; SPEC §13.2 says so)"))
def test_baumgarte_6d_loop_jets_are_derivatives_to_second_order():
    e = [baumgarte_order_1_discrepancy("6l", s) for s in (0.5, 0.25, 0.125)]
    assert all(SECOND_ORDER[0] <= a / b <= SECOND_ORDER[1] for a, b in zip(e, e[1:])), e


# ---------------------------------------------------------------- 8. bad input --

def _bad_input_setup():
    model = with_frames(random_tree(np.random.default_rng(0), 6, floating_base=True),
                        [("tip", 5, np.eye(4))])
    fixed = random_tree(np.random.default_rng(0), 6, floating_base=False)
    cs = ld.ConstraintSet(model, [ld.Contact3D("body3"), ld.Contact6D("tip")])
    n = model.n_joints
    args = dict(C0=np.eye(4), V0=np.zeros((1, 6)), q=np.zeros((2, n)), tau=np.zeros((2, n)),
                W0=np.zeros((2, 6)))
    return model, fixed, cs, args


def _nan(a, idx, value=np.nan):
    a = np.array(a, float)
    a[idx] = value
    return a


def bad_calls():
    """``{label: (call, exception, message pattern)}`` of bad arguments to
    the constrained dynamics; the pattern names the argument or the
    constraint."""
    model, fixed, cs, A = _bad_input_setup()
    C0, V0, q, tau, W0 = A["C0"], A["V0"], A["q"], A["tau"], A["W0"]

    def fd(C0=C0, V0=V0, q=q, order=1, cs=cs, **kw):
        kw.setdefault("tau", tau)
        kw.setdefault("base_wrench", W0)
        return lambda: ld.constrained_forward_dynamics(model, cs, C0, V0, q, order, **kw)

    def build(specs, m=model):
        return lambda: ld.ConstraintSet(m, specs)

    other = random_tree(np.random.default_rng(0), 6)
    return {
        # the constraint sets
        "unknown frame": (build([ld.Contact3D("nope")]), ValueError,
                          r"^constraints\[0\]\.frame: unknown frame 'nope'"),
        "unknown other": (build([ld.Contact3D("body1"), ld.Contact3D("body2", "nope")]),
                          ValueError, r"^constraints\[1\]\.other: unknown frame 'nope'"),
        "frame index": (build([ld.Contact3D(99)]), ValueError, r"^constraints\[0\]\.frame"),
        "frame type": (build([ld.Contact3D(1.5)]), TypeError, r"^constraints\[0\]\.frame"),
        "fixed base to world": (build([ld.Contact6D("base")], fixed), ValueError,
                                r"^constraint '6d:base'.*fixed base"),
        "fixed base first": (build([ld.Contact3D("base", "body2")], fixed), ValueError,
                             r"^constraint '3d:base-body2'.*fixed base"),
        "one body": (build([ld.Contact6D("tip", "body5")]), ValueError,
                     r"^constraint '6d:tip-body5': both frames are on body 'body5'"),
        "duplicate name": (build([ld.Contact3D("body1"), ld.Contact3D("body1")]), ValueError,
                           r"^constraints\[1\]: a constraint called '3d:body1' already exists"),
        "given names clash": (build([ld.Contact3D("body1", name="foot"),
                                     ld.Contact1D("body2", normal=(0, 0, 1), name="foot")]),
                              ValueError, r"^constraints\[1\]: .*'foot'"),
        "not a constraint": (build([ld.Contact3D("body1"), "body2"]), TypeError,
                             r"^constraints\[1\]: expected Contact6D, Contact3D, Contact1D, "
                             "RollingContact or JointStop"),
        "not a sequence": (build(3), TypeError, r"^constraints: expected a sequence"),
        "zero normal": (lambda: ld.Contact1D("body1", normal=(0, 0, 0)), ValueError, r"^normal"),
        "nan normal": (lambda: ld.Contact1D("body1", normal=(0, np.nan, 1)), ValueError, r"^normal"),
        "loop anchor": (lambda: ld.Contact3D("body1", "body2", anchor=(0, 0, 0)), ValueError,
                        r"^anchor"),
        "anchor shape": (build([ld.Contact3D("body1", anchor=(0, 0))]), ValueError,
                         r"^constraint '3d:body1': anchor"),
        "anchor pose": (build([ld.Contact6D("body1", anchor=2 * np.eye(4))]), ValueError,
                        r"^constraint '6d:body1': anchor"),
        "name type": (lambda: ld.Contact3D("body1", name=3), TypeError, r"^name"),
        "index": (lambda: cs.index("nope"), ValueError, r"^constraint: no constraint called"),
        # the dynamics
        "q nan": (fd(q=_nan(q, (1, 2))), ValueError, r"^q: contains NaN"),
        "q inf": (fd(q=_nan(q, (0, 2), -np.inf)), ValueError, r"^q: contains NaN"),
        "base_twist nan": (fd(V0=_nan(V0, (0, 4))), ValueError, r"^base_twist: contains NaN"),
        "base_pose nan": (fd(C0=_nan(C0, (1, 3))), ValueError, r"^base_pose: contains NaN"),
        "tau nan": (fd(tau=_nan(tau, (1, 0))), ValueError, r"^tau: contains NaN"),
        "base_wrench nan": (fd(base_wrench=_nan(W0, (0, 5))), ValueError,
                            r"^base_wrench: contains NaN"),
        "applied nan": (fd(applied=_nan(np.zeros((2, 6, 6)), (1, 2, 3))), ValueError,
                        r"^applied: contains NaN"),
        "tau rows": (fd(tau=tau[:1]), ValueError, r"^tau: expected a jet of shape \(2, 5\)"),
        "tau columns": (fd(tau=tau[:, :4]), ValueError, r"^tau: expected a jet of shape"),
        "q rows": (fd(q=q[:1]), ValueError, r"^q: expected a jet of 2 rows"),
        "q columns": (fd(q=q[:, :4]), ValueError, r"^q: expected a jet"),
        "base_twist shape": (fd(V0=V0[:, :5]), ValueError, r"^base_twist: expected a jet"),
        "base_twist missing": (fd(V0=None), ValueError, r"^base_twist: a floating base"),
        "base_wrench rows": (fd(base_wrench=W0[:1]), ValueError, r"^base_wrench: expected"),
        "base_wrench missing": (fd(base_wrench=None), ValueError, r"^base_wrench"),
        "applied shape": (fd(applied=np.zeros((2, 5, 6))), ValueError, r"^applied: expected"),
        "base_pose shape": (fd(C0=np.eye(3)), ValueError, r"^base_pose: expected shape"),
        "base_pose not SE(3)": (fd(C0=2 * np.eye(4)), ValueError, r"^base_pose: not in SE\(3\)"),
        "order": (fd(order=-1), ValueError, r"^order"),
        "order type": (fd(order=1.5), TypeError, r"^order"),
        "a list of contacts": (fd(cs=[ld.Contact3D("body3")]), TypeError,
                               r"^constraints: expected a liedyn\.ConstraintSet"),
        "another model's set": (fd(cs=ld.ConstraintSet(other, [ld.Contact3D("body3")])),
                                ValueError, r"^constraints: built for another model"),
        "unanchored": (fd(baumgarte=(1.0, 2.0)), ValueError,
                       r"^baumgarte: .*world contact '3d:body3' has no anchor"),
        "baumgarte sign": (fd(baumgarte=(1.0, -1.0)), ValueError, r"^baumgarte\[1\] \(beta\)"),
        "baumgarte nan": (fd(baumgarte=(np.nan, 1.0)), ValueError, r"^baumgarte\[0\] \(alpha\)"),
        "baumgarte type": (fd(baumgarte="fast"), TypeError, r"^baumgarte"),
        "baumgarte length": (fd(baumgarte=(1, 2, 3)), TypeError, r"^baumgarte"),
        "rank_rtol": (fd(rank_rtol=-1.0), ValueError, r"^rank_rtol"),
        "jacobian set": (lambda: ld.constraint_jacobian(model, "x", C0, V0, q, 1), TypeError,
                         r"^constraints"),
        "jacobian q rows": (lambda: ld.constraint_jacobian(model, cs, C0, V0, q[:1], 1),
                            ValueError, r"^q: expected"),
        "jacobian nan": (lambda: ld.constraint_jacobian(model, cs, C0, V0, _nan(q, (0, 0)), 1),
                         ValueError, r"^q: contains NaN"),
        "error q shape": (lambda: ld.constraint_error(model, cs, C0, q), ValueError,
                          r"^q: expected shape \(5,\)"),
        "anchored q shape": (lambda: cs.anchored(C0, q), ValueError, r"^q: expected shape"),
    }


@pytest.mark.parametrize("label", list(bad_calls()))
def test_bad_input_names_the_argument(label):
    call, exc, pattern = bad_calls()[label]
    with pytest.raises(exc, match=pattern):
        call()


def test_bad_input_in_a_fresh_interpreter():
    """The non-finite and mis-shaped arguments reach the compiled kernel's
    own checks (plain arrays are passed through unconverted): run them where
    a crash would not take the test run down."""
    from tests.helpers import run_python
    out = run_python("""
        import re
        from tests.test_contact_forward import bad_calls
        for label, (call, exc, pattern) in bad_calls().items():
            try:
                call()
            except exc as err:
                print(label, "->", "named" if re.search(pattern, str(err)) else f"unnamed: {err}")
            else:
                print(label, "-> no error")
    """)
    lines = out.strip().splitlines()
    assert len(lines) == len(bad_calls()), out
    assert all(line.endswith("-> named") for line in lines), out


def test_no_constraints_is_the_unconstrained_forward_dynamics():
    model = random_tree(np.random.default_rng(7), 8, armature=True, damping=True)
    rng = np.random.default_rng(7)
    C0 = se3.exp(rng.normal(size=6))
    V0, qd, tau, W0, app = random_inputs(model, rng, 3)
    q = np.vstack([rng.normal(size=model.n_joints), qd])
    res = solve(model, ld.ConstraintSet(model, []), C0, V0, q, 3, tau=tau, base_wrench=W0,
                applied=app)
    ref = ld.forward_dynamics(model, C0, V0, q, 3, tau=tau, base_wrench=W0, applied=app)
    assert res.force.shape == (4, 0) and res.rank == 0
    assert np.array_equal(res.q, ref.q) and np.array_equal(res.base_twist, ref.base_twist)
