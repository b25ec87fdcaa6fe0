"""Model construction: validation errors name the argument, physical inertias
(including point masses and thin rods) are accepted, and home poses ``H_j``
and screws ``Y_j`` equal hand-computed values."""

import numpy as np
import pytest

import liedyn
from liedyn import Model, Prismatic, Revolute, check_inertia, se3
from liedyn.model import JOINT_PRISMATIC, JOINT_REVOLUTE
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
    m = Model(floating_base=True)
    m.add_body("base", None, None, T(1.0, R=RZ90), UNIT)
    m.add_body("body1", "base", Revolute((1.0, 0.0, 0.0), point=(0.0, 0.0, 0.2)), T(z=-0.5), UNIT)
    m.add_body("body2", "body1", Prismatic((0.0, 0.0, 2.0)), T(x=0.4), UNIT)
    m.add_body("body3", 0, Revolute((0.0, 0.0, 1.0), point=(0.1, 0.0, 0.0)), None, UNIT)
    return m


def test_home_poses_and_screws_hand_computed():
    m = _two_arm_example()
    # H1 = H0 A1: Rz90, p = (1, 0, −0.5). H2 = H1 A2: p = (1, 0, −0.5) + Rz90 (0.4, 0, 0).
    assert_close(m.body_home[0], T(1.0, R=RZ90), rtol=0, atol=1e-15, what="H0")
    assert_close(m.body_home[1], T(1.0, 0.0, -0.5, R=RZ90), rtol=0, atol=1e-15, what="H1")
    assert_close(m.body_home[2], T(1.0, 0.4, -0.5, R=RZ90), rtol=0, atol=1e-15, what="H2")
    assert_close(m.body_home[3], T(1.0, R=RZ90), rtol=0, atol=1e-15, what="H3")
    # body1: axis Rz90 (1,0,0) = (0,1,0) through H1 (0,0,0.2) = (1,0,−0.3):
    #   x × e = (1,0,−0.3) × (0,1,0) = (0.3, 0, 1).
    # body2: prismatic along Rz90 (0,0,1) = (0,0,1).
    # body3: axis (0,0,1) through H0 (0.1,0,0) = (1,0.1,0): x × e = (0.1, −1, 0).
    Y = np.array([[0, 0, 0, 0, 0, 0],
                  [0, 1, 0, 0.3, 0, 1],
                  [0, 0, 0, 0, 0, 1],
                  [0, 0, 1, 0.1, -1, 0]], dtype=float)
    assert_close(m.joint_screw, Y, rtol=0, atol=1e-15, what="Y")
    assert_close(m.joint_axis[2], [0, 0, 1], rtol=0, atol=0, what="normalised axis")
    assert list(m.body_parent) == [-1, 0, 1, 0]
    assert list(m.joint_type) == [0, JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_REVOLUTE]
    assert m.n_bodies == 4 and m.n_joints == 3 and m.nv == 9
    assert m.body_names == ("base", "body1", "body2", "body3")
    assert m.body_index("body2") == 2
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
        m = Model()
        m.add_body("b", None, None, origins[0], inertias[0])
        m.add_body("c", "b" if by_name else 0, Revolute((0, 1, 0)), origins[1], inertias[1])
        m.add_body("d", "b" if by_name else np.int64(0), Prismatic((1, 1, 0)), origins[2], inertias[2])
        m.add_body("e", "d" if by_name else 2, Revolute((1, 0, 0)), origins[3], inertias[3])
        models.append(m)
    a, b = models
    for f in ("body_parent", "joint_screw", "body_home", "body_inertia"):
        assert_close(getattr(a, f), getattr(b, f), rtol=0, atol=0, what=f)


# -------------------------------------------------------- bad models --

def _base(floating=True):
    m = Model(floating_base=floating)
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
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), None, None), ValueError, "inertia"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), np.diag([1.0, 1, 2, 1]), UNIT), ValueError, "origin"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), T(R=np.diag([1.0, 1, -1])), UNIT), ValueError, "origin"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), np.full((4, 4), np.nan), UNIT), ValueError, "origin"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), np.eye(3), UNIT), ValueError, "origin"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), None, np.full((6, 6), np.inf)), ValueError, "inertia"),
    (lambda m: m.add_body("x", 0, Revolute((0, 0, 1)), None, np.eye(3)), ValueError, "inertia"),
])
def test_bad_add_body_raises_naming_the_argument(call, exc, arg):
    m = _base()
    with pytest.raises(exc, match=rf"^{arg}:"):
        call(m)
    assert m.n_bodies == 1, "a rejected body must not be added"


def test_base_rules():
    with pytest.raises(ValueError, match="^parent:"):
        Model().add_body("base", 0, None, None, UNIT)
    with pytest.raises(ValueError, match="^parent:"):
        Model().add_body("base", "world", None, None, UNIT)
    with pytest.raises(ValueError, match="^joint:"):
        Model().add_body("base", None, Revolute((0, 0, 1)), None, UNIT)
    with pytest.raises(ValueError, match="^inertia:"):
        Model(floating_base=True).add_body("base", None, None, None, None)
    fixed = Model(floating_base=False)
    fixed.add_body("base", None, None, None, None)                  # allowed: it never moves
    fixed.add_body("link", 0, Revolute((0, 0, 1)), None, UNIT)
    with pytest.raises(ValueError, match="^inertia:"):
        fixed.add_body("link2", 1, Revolute((0, 0, 1)), None, None)
    r = liedyn.inverse_dynamics(fixed, None, None, np.ones((3, 1)), 0)
    assert np.all(np.isfinite(r.tau))


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
    (lambda: Model(gravity=(0.0, np.nan, -9.81)), ValueError, "gravity"),
    (lambda: Model(gravity=(0.0, -9.81)), ValueError, "gravity"),
    (lambda: Model(floating_base="yes"), TypeError, "floating_base"),
])
def test_bad_joints_and_models(make, exc, arg):
    with pytest.raises(exc, match=rf"^{arg}:"):
        make()


def test_empty_model_is_rejected_by_algorithms():
    with pytest.raises(ValueError, match="^model:"):
        liedyn.inverse_dynamics(Model(), np.eye(4), np.zeros((2, 6)), np.zeros((3, 0)), 0)


# ----------------------------------------------------------- inertia --

def _perturbed(i, k, d):
    M = UNIT.copy()
    M[i, k] += d
    return M


@pytest.mark.parametrize("Mb,msg", [
    (se3.spatial_inertia(0.0, np.zeros(3), np.eye(3) * 0.1), "mass must be positive"),
    (se3.spatial_inertia(-1.0, np.zeros(3), np.eye(3) * 0.1), "mass must be positive"),
    (se3.spatial_inertia(1.0, np.zeros(3), np.diag([-0.01, 0.5, 0.5])), "positive semi-definite"),
    (se3.spatial_inertia(1.0, (0.3, 0, 0), np.diag([0.1, 0.1, 0.3])), "triangle"),
    (se3.spatial_inertia(1.0, np.zeros(3), np.diag([0.1, 0.1, 0.2 * (1 + 1e-6)])), "triangle"),
    (_perturbed(0, 1, 1e-3), "symmetric"),
    (_perturbed(3, 3, 1e-3), "lower-right"),
    (_perturbed(3, 4, 1e-3) + _perturbed(4, 3, 1e-3) - UNIT, "lower-right"),
    (_perturbed(0, 3, 1e-3) + _perturbed(3, 0, 1e-3) - UNIT, "skew"),
])
def test_non_physical_inertias_rejected(Mb, msg):
    with pytest.raises(ValueError, match=rf"^inertia: .*{msg}"):
        check_inertia(Mb)
    m = _base()
    with pytest.raises(ValueError, match=rf"^inertia: .*{msg}"):
        m.add_body("x", 0, Revolute((0, 0, 1)), None, Mb)


def test_degenerate_but_physical_inertias_accepted():
    """Point masses, thin rods (J = diag(I, I, 0)) and flat plates
    (J₃ = J₁ + J₂) sit on the boundary and are valid, also when rotated."""
    rng = np.random.default_rng(2)
    R = se3.exp_so3(rng.normal(size=3))
    com = rng.normal(size=3)
    cases = {
        "point": np.zeros((3, 3)),
        "rod": np.diag([1.0, 1.0, 0.0]) * 2.0 * 0.6**2 / 12.0,
        "rotated rod": R @ np.diag([0.06, 0.06, 0.0]) @ R.T,
        "plate": R @ np.diag([0.02, 0.05, 0.07]) @ R.T,
    }
    for what, J in cases.items():
        Mb = se3.spatial_inertia(2.0, com, J)
        m, c, Jc = check_inertia(Mb)
        assert_close(m, 2.0, rtol=1e-15, what=f"{what} mass")
        assert_close(c, com, rtol=0, atol=1e-14, what=f"{what} com")
        assert_close(Jc, J, rtol=0, atol=1e-14, what=f"{what} J")
        model = _base()
        model.add_body("x", 0, Revolute((0, 0, 1)), None, Mb)
        assert_close(model.body_inertia[1], Mb, rtol=0, atol=1e-14, what=f"{what} stored")


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


def test_body_index_errors_name_the_argument():
    m = _two_arm_example()
    assert m.body_index("body3") == 3 and m.body_index(2) == 2
    with pytest.raises(ValueError, match="^name: unknown body"):
        m.body_index("nobody")
    with pytest.raises(ValueError, match="^name: index 4 out of range"):
        m.body_index(4)
    with pytest.raises(TypeError, match="^name:"):
        m.body_index(1.0)
