"""Accuracy does not depend on where the robot is: every kernel computes
about the base origin (SPEC §1, reference point).

With twists and wrenches taken about the base origin (``reference="base"``)
the inverse → forward round trip, the singular-pivot decisions, hybrid
dynamics and the closed form are the same at 0 m, 1 km and 1000 km from the
world origin. About the world origin (the default) the interface itself
rounds at ``eps · |p₀| / robot size``, and nothing else is lost: the base
wrench a hovering drone needs at 200 m is exact, and a thin rod far away is
not mistaken for a singular pivot (both failed when the kernels computed
about the world origin)."""

import numpy as np
import pytest

import liedyn
from liedyn import ModelBuilder, Revolute, se3
from models.aerial_manipulator import AerialManipulatorParams, aerial_manipulator
from models.trees import random_tree
from tests.helpers import run_python

DISTANCES = (0.0, 1e3, 1e6)


def _at(distance, rng):
    """A base pose ``distance`` metres from the world origin (and a random
    rotation, the same for every distance)."""
    C0 = se3.exp(np.concatenate([rng.normal(size=3) * 0.7, np.zeros(3)]))
    C0[:3, 3] = (0.6 * distance, -0.48 * distance, 0.64 * distance)
    return C0


def _models():
    return {"aerial manipulator": aerial_manipulator(),
            "random tree": random_tree(np.random.default_rng(60), 9, armature=True)}


@pytest.mark.parametrize("name", ["aerial manipulator", "random tree"])
def test_round_trip_error_is_the_same_at_any_distance(name):
    """Inverse then forward dynamics, r = 0..5: the error at 1 km and
    1000 km is within 10× of the error at the origin (it is in fact the
    same, to the bit: the kernels see the same numbers)."""
    model = _models()[name]
    for r in range(6):
        errs = []
        for d in DISTANCES:
            rng = np.random.default_rng(61 + r)
            C0 = _at(d, rng)
            V = rng.normal(size=(r + 2, 6))
            q = rng.normal(size=(r + 3, model.n_joints))
            inv = liedyn.inverse_dynamics(model, C0, V, q, r, reference="base")
            fwd = liedyn.forward_dynamics(model, C0, V[:1], q[:2], r, tau=inv.tau,
                                          base_wrench=inv.base_wrench, reference="base")
            errs.append(max(np.max(np.abs(fwd.q - q)) / np.max(np.abs(q)),
                            np.max(np.abs(fwd.base_twist - V)) / np.max(np.abs(V))))
        assert max(errs) <= 10.0 * max(errs[0], 1e-16), (name, r, errs)
        assert errs[0] < 1e-6, (name, r, errs)


def test_hybrid_and_closed_form_are_the_same_at_any_distance():
    rng = np.random.default_rng(62)
    model = random_tree(rng, 8, armature=True, damping=True)
    r = 3
    V = rng.normal(size=(r + 2, 6))
    q = rng.normal(size=(r + 3, model.n_joints))
    tau = rng.normal(size=(r + 1, model.n_joints))
    mask = np.arange(model.n_joints) % 2 == 0
    out = []
    for d in DISTANCES:
        C0 = _at(d, np.random.default_rng(63))
        h = liedyn.hybrid_dynamics(model, C0, V, q, r, motion_driven=mask, tau=tau,
                                   base_motion_driven=True, reference="base")
        j = liedyn.closed_form_jets(model, C0, V, q, r, reference="base")
        out.append((h.q, h.tau, h.base_wrench, j.mass, j.coriolis, j.gravity))
    for later in out[1:]:
        for a, b in zip(out[0], later):
            assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(a)), "depends on distance"


def _rod_arm(distance, axial):
    """A fixed base carrying a thin rod (axial inertia ``axial``) about its own
    axis, ``distance`` metres from the world origin."""
    b = ModelBuilder(floating_base=False)
    T = np.eye(4)
    T[:3, 3] = (distance, 0.0, 0.0)
    b.add_body("base", None, None, T)
    b.add_body("rod", "base", Revolute((0, 0, 1)), None,
               se3.spatial_inertia(0.1, (0, 0, 0.3), np.diag([0.003, 0.003, axial])))
    return b.build()


@pytest.mark.parametrize("distance", (0.0, 30.0, 1e5, 1e6))
def test_singular_pivot_decisions_do_not_depend_on_distance(distance):
    """A thin rod spinning about its own axis (inertia 1e-8) is a valid pivot
    anywhere ("singular pivot" at 30 m before); a point mass on the axis is
    singular anywhere."""
    fd = liedyn.forward_dynamics(_rod_arm(distance, 1e-8), None, None, np.zeros((2, 1)), 0,
                                 tau=np.array([[1e-8]]))
    assert fd.q[2, 0] == pytest.approx(1.0, rel=1e-6)          # q̈ = τ / I_axial
    with pytest.raises(ValueError, match="^joint of body 'rod' .*singular pivot"):
        liedyn.forward_dynamics(_rod_arm(distance, 0.0), None, None, np.zeros((2, 1)), 0,
                                tau=np.zeros((1, 1)))


@pytest.mark.parametrize("distance", (0.0, 30.0, 1e3, 1e5))
def test_a_joint_far_from_its_own_base_keeps_its_pivot(distance):
    """The rod on a joint ``distance`` metres from its own base (the base at
    the world origin, the joint's frame out on a boom): q̈ = τ / I_axial with
    gravity on, at every distance (refused as singular at 30 m before, the
    pivot being formed about the base origin); a point mass on the axis is
    singular at every distance; and the smallest axial inertia accepted, the
    pivot decision itself, is the same within 10× at every distance. In a
    subprocess, as any test that could crash."""
    out = run_python(f"""
        import numpy as np
        import liedyn
        from liedyn import ModelBuilder, Revolute, se3

        def rod(axial, d):
            b = ModelBuilder(floating_base=False)
            b.add_body("base", None, None, None, se3.spatial_inertia(2.0, (0, 0, 0), np.eye(3)))
            T = np.eye(4)
            T[:3, 3] = (0.6 * d, -0.48 * d, 0.64 * d)
            b.add_body("rod", "base", Revolute((0, 0, 1)), T,
                       se3.spatial_inertia(0.1, (0, 0, 0.3), np.diag([0.003, 0.003, axial])))
            return b.build()

        def accepted(axial, d):
            try:
                liedyn.forward_dynamics(rod(axial, d), None, None, np.zeros((2, 1)), 0,
                                        tau=np.zeros((1, 1)))
                return True
            except ValueError as err:
                assert "singular pivot" in str(err), err
                return False

        def smallest_accepted(d):
            lo, hi = -30.0, -8.0             # log10 of the axial inertia: refused, accepted
            assert accepted(10 ** hi, d) and not accepted(10 ** lo, d)
            for _ in range(40):
                mid = 0.5 * (lo + hi)
                lo, hi = (lo, mid) if accepted(10 ** mid, d) else (mid, hi)
            return hi

        d = {distance!r}
        fd = liedyn.forward_dynamics(rod(1e-8, d), None, None, np.zeros((2, 1)), 0,
                                     tau=np.array([[1e-8]]))
        assert abs(fd.q[2, 0] - 1.0) < 1e-9, fd.q[2, 0]
        assert not accepted(0.0, d)
        print(smallest_accepted(0.0), smallest_accepted(d))
    """)
    at_base, here = (float(x) for x in out.split()[-2:])
    # PIVOT_RTOL · tr(M^A_ωω) about the axis ≈ 1e-11 · (0.006 + 2 · 0.1 · 0.3²) ≈ 2.4e-13
    assert -13.5 < at_base < -12.0, at_base
    assert abs(here - at_base) <= 1.0, (distance, here, at_base)          # within 10×


@pytest.mark.parametrize("distance", (1e5, 1e6))
def test_aerial_manipulator_far_away_is_not_singular(distance):
    model = aerial_manipulator()
    rng = np.random.default_rng(64)
    C0 = _at(distance, rng)
    q = rng.normal(size=(2, model.n_joints))
    fd = liedyn.forward_dynamics(model, C0, np.zeros((1, 6)), q, 2,
                                 tau=np.zeros((3, model.n_joints)), base_wrench=np.zeros((3, 6)))
    assert np.all(np.isfinite(fd.q)) and np.all(np.isfinite(fd.base_twist))


def test_hover_at_200_metres():
    """The paper's aerial manipulator at rest 200 m up: inverse dynamics gives
    the weight-compensating wrench (moment about the world origin included),
    forward dynamics of that wrench gives zero acceleration at every order
    (it raised "M^A_0 is not positive definite" before)."""
    P = AerialManipulatorParams()
    model = aerial_manipulator(P)
    r = 3
    C0 = np.eye(4)
    C0[:3, 3] = (30.0, -40.0, 200.0)
    V = np.zeros((r + 2, 6))
    q = np.zeros((r + 3, model.n_joints))
    inv = liedyn.inverse_dynamics(model, C0, V, q, r)
    weight = (P.base_mass + 6 * P.link_mass) * P.gravity
    # links at −(b + d), −(b + 3d), −(b + 5d) below the base CoM, on each arm
    com = C0[:3, 3] + np.array([0.0, 0.0, -(P.b + 3 * P.d) * 6 * P.link_mass
                                / (P.base_mass + 6 * P.link_mass)])
    expected = np.concatenate([np.cross(com, [0.0, 0.0, weight]), [0.0, 0.0, weight]])
    assert np.max(np.abs(inv.base_wrench[0] - expected)) <= 1e-13 * np.max(np.abs(expected))
    assert np.all(inv.base_wrench[1:] == 0.0)
    fd = liedyn.forward_dynamics(model, C0, V[:1], q[:2], r, tau=inv.tau,
                                 base_wrench=inv.base_wrench)
    assert np.max(np.abs(fd.base_twist)) < 1e-12 and np.max(np.abs(fd.q)) < 1e-12


def test_world_and_base_references_describe_the_same_motion():
    """The same call about the world origin and about the base origin: the
    twists and wrenches are each other's images under the constant frame
    change X = Ad_{T(−p₀)} (SPEC §1), jet by jet."""
    rng = np.random.default_rng(65)
    model = random_tree(rng, 6)
    r = 2
    C0 = _at(3.0, rng)
    p = C0[:3, 3]
    Vw = rng.normal(size=(r + 2, 6))
    q = rng.normal(size=(r + 3, model.n_joints))
    Vb = Vw.copy()
    Vb[:, 3:] += np.cross(Vw[:, :3], p)                       # v + ω × p
    world = liedyn.inverse_dynamics(model, C0, Vw, q, r)
    base = liedyn.inverse_dynamics(model, C0, Vb, q, r, reference="base")
    W = base.base_wrench.copy()
    W[:, :3] += np.cross(p, W[:, 3:])                          # m + p × f
    assert np.max(np.abs(world.base_wrench - W)) <= 1e-12 * np.max(np.abs(W))
    assert np.max(np.abs(world.tau - base.tau)) <= 1e-12 * np.max(np.abs(base.tau))
    assert np.allclose(world.body_pose, base.body_pose, rtol=0, atol=1e-14)
