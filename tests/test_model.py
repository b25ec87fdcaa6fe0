"""Model construction: validation errors name the argument, physical inertias
(including point masses, thin rods and massless bodies) are accepted, home
poses ``H_j`` and screws ``Y_j`` equal hand-computed values, and a built
model is frozen: it owns copies of its inputs and nothing can change it."""

import pickle
import re
import warnings

import numpy as np
import pytest

import liedyn
from liedyn import Model, ModelBuilder, Prismatic, Revolute, check_inertia, se3
from liedyn.multibody.model import JOINT_PRISMATIC, JOINT_REVOLUTE
from models.trees import random_inertia
from tests.helpers import assert_close

UNIT = se3.spatial_inertia(1.0, np.zeros(3), np.diag([0.1, 0.1, 0.1]))


def T(x=0.0, y=0.0, z=0.0, R=None):
    out = np.eye(4)
    out[:3, 3] = (x, y, z)
    if R is not None:
        out[:3, :3] = R
    return out


RZ90 = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def _two_arm_example():
    """Base rotated 90° about z at (1, 0, 0); body1 revolute about its x axis
    through (0, 0, 0.2), 0.5 below the base; body2 prismatic along z (given
    unnormalised) at x = 0.4 in body1, parent by name; body3 revolute about z
    through (0.1, 0, 0) on the base, parent by index."""
    m = ModelBuilder(floating_base=True)
    m.add_body("base", None, None, T(1.0, R=RZ90), UNIT)
    m.add_body("body1", "base", Revolute((1.0, 0.0, 0.0), point=(0.0, 0.0, 0.2)), T(z=-0.5), UNIT)
    m.add_body("body2", "body1", Prismatic((0.0, 0.0, 2.0)), T(x=0.4), UNIT)
    m.add_body("body3", 0, Revolute((0.0, 0.0, 1.0), point=(0.1, 0.0, 0.0)), None, UNIT)
    return m.build()


def test_home_poses_and_screws_hand_computed():
    m = _two_arm_example()
    # In the base frame (H0 = I): H1 = A1 = T(z=−0.5); H2 = H1 A2 = T(0.4, 0, −0.5).
    assert_close(m.body_home[0], np.eye(4), rtol=0, atol=0, what="H0")
    assert_close(m.body_home[1], T(0.0, 0.0, -0.5), rtol=0, atol=1e-15, what="H1")
    assert_close(m.body_home[2], T(0.4, 0.0, -0.5), rtol=0, atol=1e-15, what="H2")
    assert_close(m.body_home[3], np.eye(4), rtol=0, atol=1e-15, what="H3")
    # Screws in the base frame at q = 0, one row per joint:
    # body1: axis (1,0,0) through H1 (0,0,0.2) = (0,0,−0.3): x × e = (0, −0.3, 0).
    # body2: prismatic along (0,0,1).
    # body3: axis (0,0,1) through (0.1,0,0): x × e = (0, −0.1, 0).
    Y = np.array([[1, 0, 0, 0, -0.3, 0],
                  [0, 0, 0, 0, 0, 1],
                  [0, 0, 1, 0, -0.1, 0]], dtype=float)
    assert_close(m.joint_screw, Y, rtol=0, atol=1e-15, what="Y")
    assert_close(m.joint_axis[1], [0, 0, 1], rtol=0, atol=0, what="normalised axis")
    assert list(m.body_parent) == [-1, 0, 1, 0]
    assert list(m.joint_type) == [JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_REVOLUTE]
    assert list(m.joint_body) == [1, 2, 3]
    assert m.n_bodies == 4 and m.n_joints == 3 and m.nv == 9
    assert m.body_names == ("base", "body1", "body2", "body3")
    assert m.body_index("body2") == 2
    assert m.joint_names == ("body1", "body2", "body3") and m.joint_index("body3") == 2
    assert m.frame_names == m.body_names and m.n_frames == 4
    assert list(m.children(0)) == [1, 3] and list(m.ancestors(2)) == [2, 1, 0]
    assert_close(m.home_pose, T(1.0, R=RZ90), rtol=0, atol=0, what="home pose")


def test_joint_motion_is_about_the_declared_axis_and_point():
    """``C_1(q) = H0 A1 T(x) R_x(q) T(−x)``: the product of local transforms,
    an independent route from ``exp([Y] q)``; the point on the axis is fixed."""
    m = _two_arm_example()
    q = np.array([0.7, 0.3, -1.1])
    fk = liedyn.forward_kinematics(m, None, np.zeros((1, 6)), np.stack([q, 0 * q]), 0)
    c, s = np.cos(0.7), np.sin(0.7)
    Rx = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    C1 = T(1.0, R=RZ90) @ T(z=-0.5) @ T(z=0.2) @ T(R=Rx) @ T(z=-0.2)
    assert_close(fk.body_pose[1], C1, rtol=0, atol=1e-15, what="C1")
    C2 = C1 @ T(x=0.4) @ T(z=0.3)
    assert_close(fk.body_pose[2], C2, rtol=0, atol=1e-15, what="C2")
    c, s = np.cos(-1.1), np.sin(-1.1)
    Rz = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    C3 = T(1.0, R=RZ90) @ T(x=0.1) @ T(R=Rz) @ T(x=-0.1)
    assert_close(fk.body_pose[3], C3, rtol=0, atol=1e-15, what="C3")


def test_parent_by_name_equals_parent_by_index():
    rng = np.random.default_rng(1)
    inertias = [random_inertia(rng) for _ in range(4)]
    origins = [se3.exp(rng.normal(size=6)) for _ in range(4)]
    models = []
    for by_name in (True, False):
        m = ModelBuilder()
        m.add_body("b", None, None, origins[0], inertias[0])
        m.add_body("c", "b" if by_name else 0, Revolute((0, 1, 0)), origins[1], inertias[1])
        m.add_body("d", "b" if by_name else np.int64(0), Prismatic((1, 1, 0)), origins[2], inertias[2])
        m.add_body("e", "d" if by_name else 2, Revolute((1, 0, 0)), origins[3], inertias[3])
        models.append(m.build())
    a, b = models
    for f in ("body_parent", "joint_screw", "body_home", "body_inertia"):
        assert_close(getattr(a, f), getattr(b, f), rtol=0, atol=0, what=f)


# -------------------------------------------------------- bad models --

def _base(floating=True):
    m = ModelBuilder(floating_base=floating)
    m.add_body("base", None, None, None, UNIT)
    return m


@pytest.mark.parametrize("call,exc,arg", [
    (lambda m: m.add_body("base", 0, Revolute((0, 0, 1)), None, UNIT), ValueError, "name"),
    (lambda m: m.add_body("", 0, Revolute((0, 0, 1)), None, UNIT), TypeError, "name"),
    (lambda m: m.add_body(3, 0, Revolute((0, 0, 1)), None, UNIT), TypeError, "name"),
    (lambda m: m.add_body("x", "nobody", Revolute((0, 0, 1)), None, UNIT), ValueError, "parent"),
    (lambda m: m.add_body("x", 1, Revolute((0, 0, 1)), None, UNIT), ValueError, "parent"),
    (lambda m: m.add_body("x", -1, Revolute((0, 0, 1)), None, UNIT), ValueError, "parent"),
    (lambda m: m.add_body("x", True, Revolute((0, 0, 1)), None, UNIT), TypeError, "parent"),
    (lambda m: m.add_body("x", 0.0, Revolute((0, 0, 1)), None, UNIT), TypeError, "parent"),
    (lambda m: m.add_body("x", None, None, None, UNIT), ValueError, "parent"),       # second base
    (lambda m: m.add_body("x", 0, None, None, UNIT), TypeError, "joint"),            # missing joint
    (lambda m: m.add_body("x", 0, "revolute", None, UNIT), TypeError, "joint"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), None, -UNIT), ValueError, "inertia"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), np.diag([1.0, 1, 2, 1]), UNIT), ValueError, "origin"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), T(R=np.diag([1.0, 1, -1])), UNIT), ValueError, "origin"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), np.full((4, 4), np.nan), UNIT), ValueError, "origin"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), np.eye(3), UNIT), ValueError, "origin"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), None, np.full((6, 6), np.inf)), ValueError, "inertia"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), None, np.eye(3)), ValueError, "inertia"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), None, np.eye(6, dtype=complex)), TypeError, "inertia"),
    (lambda m: m.add_frame("base", 0), ValueError, "name"),
    (lambda m: m.add_frame("tip", "nobody"), ValueError, "body"),
    (lambda m: m.add_frame("tip", 0, np.eye(3)), ValueError, "offset"),
])
def test_bad_add_body_raises_naming_the_argument(call, exc, arg):
    m = _base()
    with pytest.raises(exc, match=rf"^{arg}:"):
        call(m)
    assert m.build().n_bodies == 1, "a rejected body must not be added"


def test_duplicate_joint_names_are_refused():
    m = _base()
    m.add_body("a", 0, Revolute((0, 0, 1), name="hip"), None, UNIT)
    with pytest.raises(ValueError, match="^joint: a joint called 'hip'"):
        m.add_body("b", 0, Revolute((0, 0, 1), name="hip"), None, UNIT)


def test_base_rules():
    """The first body is the base, takes no parent or joint; a fixed base may be
    massless; a floating base with no inertia anywhere is refused by forward
    dynamics with a message naming it."""
    with pytest.raises(ValueError, match="^parent:"):
        ModelBuilder().add_body("base", 0, None, None, UNIT)
    with pytest.raises(ValueError, match="^parent:"):
        ModelBuilder().add_body("base", "world", None, None, UNIT)
    with pytest.raises(ValueError, match="^joint:"):
        ModelBuilder().add_body("base", None, Revolute((0, 0, 1)), None, UNIT)
    fixed = ModelBuilder(floating_base=False)
    fixed.add_body("base", None, None, None, None)                  # allowed: it never moves
    fixed.add_body("link", 0, Revolute((0, 0, 1)), None, UNIT)
    fixed = fixed.build()
    # A unit box spinning about its own z axis: the reaction torque is
    # exactly J q̈ = 0.1 · 2 about z, the joint torque 0.2; gravity loads the base.
    r = liedyn.inverse_dynamics(fixed, None, None, np.array([[0.3], [0.0], [2.0]]), 0)
    assert_close(r.tau, [[0.2]], rtol=1e-15, what="tau")
    assert_close(r.base_wrench, [[0.0, 0.0, 0.2, 0.0, 0.0, 9.81]], rtol=0, atol=1e-15,
                 what="reaction")
    empty = ModelBuilder(floating_base=True)
    empty.add_body("base", None, None, None, None)
    empty = empty.build()
    with pytest.raises(ValueError, match="^base 'base': articulated inertia M\\^A_0"):
        liedyn.forward_dynamics(empty, None, np.zeros((1, 6)), np.zeros((2, 0)), 0,
                                tau=np.zeros((1, 0)), base_wrench=np.zeros((1, 6)))


@pytest.mark.parametrize("make,exc,arg", [
    (lambda: Revolute((0.0, 0.0, 0.0)), ValueError, "axis"),
    (lambda: Revolute((1e-14, 0.0, 0.0)), ValueError, "axis"),
    (lambda: Prismatic((0.0, 0.0, 0.0)), ValueError, "axis"),
    (lambda: Revolute((np.nan, 0.0, 1.0)), ValueError, "axis"),
    (lambda: Prismatic((0.0, 1.0)), ValueError, "axis"),
    (lambda: Revolute((0, 0, 1), point=(0.0, np.inf, 0.0)), ValueError, "point"),
    (lambda: Revolute((0, 0, 1), armature=-0.1), ValueError, "armature"),
    (lambda: Prismatic((0, 0, 1), damping=-1.0), ValueError, "damping"),
    (lambda: Prismatic((0, 0, 1), damping=np.nan), ValueError, "damping"),
    (lambda: Prismatic((0, 0, 1), damping=True), TypeError, "damping"),
    (lambda: Revolute((0, 0, 1), lower=1.0, upper=-1.0), ValueError, "lower"),
    (lambda: Revolute((0, 0, 1), lower=np.nan), ValueError, "lower"),
    (lambda: Revolute((0, 0, 1), name=""), TypeError, "name"),
    (lambda: Revolute((0, 0, 1), effort=-1.0), ValueError, "effort"),
    (lambda: Prismatic((0, 0, 1), effort=np.nan), ValueError, "effort"),
    (lambda: Revolute((0, 0, 1), velocity=-np.inf), ValueError, "velocity"),
    (lambda: Prismatic((0, 0, 1), velocity=True), TypeError, "velocity"),
    (lambda: ModelBuilder(gravity=(0.0, np.nan, -9.81)), ValueError, "gravity"),
    (lambda: ModelBuilder(gravity=(0.0, -9.81)), ValueError, "gravity"),
    (lambda: ModelBuilder(floating_base="yes"), TypeError, "floating_base"),
    (lambda: ModelBuilder().build(), ValueError, "model"),
    (lambda: Model(), TypeError, "Model"),
])
def test_bad_joints_and_models(make, exc, arg):
    with pytest.raises(exc, match=rf"^{arg}:"):
        make()


# ----------------------------------------------------------- frozen --

def test_built_model_owns_copies_of_its_inputs():
    """Reusing one origin matrix, point, axis or gravity array after handing
    it to the builder changes nothing: every body keeps the value it was
    given, and the caller's arrays stay writable."""
    g = np.array([0.0, 0.0, -9.81])
    b = ModelBuilder(gravity=g)
    b.add_body("base", None, None, None, UNIT)
    T0 = np.eye(4)
    p = np.array([0.0, 0.0, 0.06])
    e = np.array([0.0, 1.0, 0.0])
    for k in range(3):
        T0[2, 3] = -0.1 * (k + 1)
        b.add_body(f"link{k}", k, Revolute(e, point=p), T0, UNIT)
    joint = Revolute(e, point=p)
    p[2] = 7.0
    e[:] = (1.0, 0.0, 0.0)
    g[2] = 1.0
    m = b.build()
    assert g.flags.writeable and T0.flags.writeable and p.flags.writeable
    assert_close(m.body_origin[1:, 2, 3], [-0.1, -0.2, -0.3], rtol=0, atol=1e-15, what="origins")
    assert_close(m.joint_point, [[0.0, 0.0, 0.06]] * 3, rtol=0, atol=0, what="points")
    assert_close(joint.point, [0.0, 0.0, 0.06], rtol=0, atol=0, what="joint point")
    assert_close(joint.axis, [0.0, 1.0, 0.0], rtol=0, atol=0, what="joint axis")
    assert_close(m.gravity, [0.0, 0.0, -9.81], rtol=0, atol=0, what="gravity")
    # the builder goes on: a later body does not change the model built before it
    b.add_body("late", 0, Revolute(e), None, UNIT)
    assert m.n_bodies == 4 and b.build().n_bodies == 5


def test_model_cannot_be_changed():
    m = _two_arm_example()
    for name in ("floating_base", "gravity", "body_parent", "n_bodies", "anything"):
        with pytest.raises(AttributeError):
            setattr(m, name, 1)
    with pytest.raises(AttributeError):
        del m.body_mass
    for name in ("gravity", "body_parent", "joint_screw", "body_home", "body_inertia",
                 "body_mass", "joint_armature", "joint_lower", "frame_offset", "home_pose"):
        a = getattr(m, name)
        assert not a.flags.writeable, name
        with pytest.raises(ValueError, match="read-only"):
            a.reshape(-1)[0] = 1.0
    with pytest.raises(AttributeError):
        Revolute((0, 0, 1)).axis = np.zeros(3)


def test_pickled_model_rebuilds_the_same_arrays():
    m = random_tree_model()
    m2 = pickle.loads(pickle.dumps(m))
    for f in ("body_parent", "joint_screw", "body_home", "body_inertia", "joint_damping",
              "frame_offset", "gravity"):
        assert np.array_equal(getattr(m2, f), getattr(m, f)), f
    assert m2.body_names == m.body_names and m2.floating_base == m.floating_base
    q = np.random.default_rng(5).normal(size=(3, m.n_joints))
    V = np.random.default_rng(6).normal(size=(2, 6))
    a = liedyn.inverse_dynamics(m, None, V, q, 0)
    b = liedyn.inverse_dynamics(m2, None, V, q, 0)
    assert np.array_equal(a.tau, b.tau)


def test_effort_and_velocity_limits_in_q_column_order_and_pickled():
    b = ModelBuilder()
    b.add_body("base", None, None, None, UNIT)
    b.add_body("a", "base", Revolute((0, 0, 1), effort=3.0, velocity=2.0), None, UNIT)
    b.add_body("b", "a", Prismatic((1, 0, 0), velocity=0.5), None, UNIT)
    b.add_body("c", "base", Revolute((0, 1, 0), effort=0.0), None, UNIT)
    m = b.build()
    m2 = pickle.loads(pickle.dumps(m))
    for model in (m, m2):
        assert list(model.joint_max_effort) == [3.0, np.inf, 0.0]
        assert list(model.joint_max_velocity) == [2.0, 0.5, np.inf]
        assert not model.joint_max_effort.flags.writeable


def random_tree_model():
    from models.trees import random_tree
    return random_tree(np.random.default_rng(4), 6, armature=True, damping=True)


def test_frames_are_named_and_fixed_on_bodies():
    b = _base()
    b.add_body("arm", 0, Revolute((0, 0, 1)), T(x=0.5), UNIT)
    assert b.add_frame("tool", "arm", T(z=0.1)) == 2
    assert b.add_frame("camera", 0) == 3
    m = b.build()
    assert m.frame_names == ("base", "arm", "tool", "camera")
    assert list(m.frame_body) == [0, 1, 1, 0]
    assert_close(m.frame_offset[2], T(z=0.1), rtol=0, atol=0, what="offset")
    assert m.frame_index("tool") == 2
    with pytest.raises(ValueError, match="^name: unknown frame 'nope'"):
        m.frame_index("nope")
    with pytest.raises(ValueError, match="^name: unknown body 'tool'"):
        m.body_index("tool")


# ----------------------------------------------------------- inertia --

def _perturbed(i, k, d):
    M = UNIT.copy()
    M[i, k] += d
    return M


@pytest.mark.parametrize("Mb,msg", [
    (se3.spatial_inertia(-1.0, np.zeros(3), np.eye(3) * 0.1), "mass must be non-negative"),
    (se3.spatial_inertia(1.0, np.zeros(3), np.diag([-0.01, 0.5, 0.5])), "positive semi-definite"),
    (_perturbed(0, 1, 1e-3), "symmetric"),
    (_perturbed(3, 3, 1e-3), "lower-right"),
    (_perturbed(3, 4, 1e-3) + _perturbed(4, 3, 1e-3) - UNIT, "lower-right"),
    (_perturbed(0, 3, 1e-3) + _perturbed(3, 0, 1e-3) - UNIT, "skew"),
])
def test_unusable_inertias_rejected(Mb, msg):
    with pytest.raises(ValueError, match=rf"^inertia: .*{msg}"):
        check_inertia(Mb)
    m = _base()
    with pytest.raises(ValueError, match=rf"^inertia: .*{msg}"):
        m.add_body("x", 0, Revolute((0, 0, 1)), None, Mb)


@pytest.mark.parametrize("Mb,msg", [
    (se3.spatial_inertia(0.0, np.zeros(3), np.eye(3) * 0.1), "without mass"),
    (se3.spatial_inertia(1.0, (0.3, 0, 0), np.diag([0.1, 0.1, 0.3])), "triangle"),
    (se3.spatial_inertia(1.0, np.zeros(3), np.diag([0.1, 0.1, 0.2 * (1 + 1e-6)])), "triangle"),
])
def test_usable_but_unphysical_inertias_warn(Mb, msg):
    """Common in robot description files; the algorithms only need a
    positive semi-definite inertia, so they are accepted with a warning."""
    m = _base()
    with pytest.warns(RuntimeWarning, match=rf"^inertia: .*{msg}"):
        m.add_body("x", 0, Revolute((0, 0, 1)), None, Mb)
    assert_close(m.build().body_inertia[1], Mb, rtol=0, atol=1e-15, what="stored")


def test_degenerate_but_physical_inertias_accepted():
    """Point masses, thin rods (J = diag(I, I, 0)), flat plates
    (J₃ = J₁ + J₂) and massless bodies sit on the boundary and are valid,
    also when rotated, without a warning."""
    rng = np.random.default_rng(2)
    R = se3.exp_so3(rng.normal(size=3))
    com = rng.normal(size=3)
    cases = {
        "point": (2.0, np.zeros((3, 3))),
        "rod": (2.0, np.diag([1.0, 1.0, 0.0]) * 2.0 * 0.6**2 / 12.0),
        "rotated rod": (2.0, R @ np.diag([0.06, 0.06, 0.0]) @ R.T),
        "plate": (2.0, R @ np.diag([0.02, 0.05, 0.07]) @ R.T),
        "massless": (0.0, np.zeros((3, 3))),
    }
    for what, (mass, J) in cases.items():
        c0 = com if mass > 0 else np.zeros(3)
        Mb = se3.spatial_inertia(mass, c0, J)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m, c, Jc = check_inertia(Mb)
            model = _base()
            model.add_body("x", 0, Revolute((0, 0, 1)), None, Mb)
        assert_close(m, mass, rtol=1e-15, what=f"{what} mass")
        assert_close(c, c0, rtol=0, atol=1e-14, what=f"{what} com")
        assert_close(Jc, J, rtol=0, atol=1e-14, what=f"{what} J")
        assert_close(model.build().body_inertia[1], Mb, rtol=0, atol=1e-14, what=f"{what} stored")


def test_massless_link_between_two_joints():
    """A 2-axis hip written as a massless link between two revolute joints
    with different axes: forward dynamics inverts inverse dynamics. A
    massless leaf on a joint is singular, and the error names it."""
    b = _base()
    b.add_body("hip_x", 0, Revolute((1, 0, 0)), T(z=-0.1), None)
    b.add_body("thigh", "hip_x", Revolute((0, 1, 0)), T(z=-0.05),
               se3.spatial_inertia(2.0, (0, 0, -0.2), np.diag([0.02, 0.02, 0.004])))
    m = b.build()
    rng = np.random.default_rng(8)
    r = 2
    V = rng.normal(size=(r + 2, 6))
    q = rng.normal(size=(r + 3, 2))
    inv = liedyn.inverse_dynamics(m, None, V, q, r)
    fwd = liedyn.forward_dynamics(m, None, V[:1], q[:2], r, tau=inv.tau,
                                  base_wrench=inv.base_wrench)
    assert_close(fwd.q, q, rtol=1e-10, atol=1e-10, what="q")
    assert_close(fwd.base_twist, V, rtol=1e-10, atol=1e-10, what="V")
    leaf = _base()
    leaf.add_body("antenna", 0, Revolute((0, 0, 1)), T(x=0.2), None)
    leaf = leaf.build()
    with pytest.raises(ValueError, match="^joint of body 'antenna' \\(q column 0\\): singular"):
        liedyn.forward_dynamics(leaf, None, np.zeros((1, 6)), np.zeros((2, 1)), 0,
                                tau=np.zeros((1, 1)), base_wrench=np.zeros((1, 6)))


def test_check_inertia_recovers_parameters_of_random_bodies():
    rng = np.random.default_rng(3)
    for _ in range(20):
        mass, com = rng.uniform(0.1, 5.0), rng.normal(size=3)
        a, b, c = np.square(rng.uniform(0.05, 0.5, 3))       # a rotated solid box
        R = se3.exp_so3(rng.normal(size=3))
        J = R @ (mass / 12.0 * np.diag([b + c, a + c, a + b])) @ R.T
        m, c, Jc = check_inertia(se3.spatial_inertia(mass, com, J))
        assert_close(m, mass, rtol=1e-14, what="mass")
        assert_close(c, com, rtol=0, atol=1e-13, what="com")
        assert_close(Jc, J, rtol=0, atol=1e-13, what="J")


def test_lookup_errors_name_the_argument():
    m = _two_arm_example()
    assert m.body_index("body3") == 3
    with pytest.raises(ValueError, match="^name: unknown body"):
        m.body_index("nobody")
    with pytest.raises(ValueError, match="^name: unknown joint"):
        m.joint_index("base")
    with pytest.raises(TypeError, match="^name:"):
        m.body_index(1.0)


def test_repr_counts_in_the_right_number():
    one = _base(floating=False)
    one.add_body("arm", 0, Revolute((0, 0, 1)), None, UNIT)
    assert re.fullmatch(r"Model\(fixed base, 2 bodies, 1 joint, digest [0-9a-f]{8}\)",
                        repr(one.build()))
    assert re.fullmatch(r"Model\(floating base, 1 body, 0 joints, digest [0-9a-f]{8}\)",
                        repr(_base().build()))
