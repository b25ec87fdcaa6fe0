"""Gaps and the frictionless acceleration LCP of unilateral point contacts
(SPEC §13.4) against independent routes: analytic cases of a box on four
corner points, the gap's definition and central differences in time, an
exhaustive enumeration of the LCP's active sets with Pinocchio's mass
matrix and articulated-body accelerations, and the bilateral dynamics on
the active set found that way."""

import itertools

import numpy as np
import pytest

import liedyn as ld
from liedyn.contact.unilateral import solve_lcp
from tests.contact_robots import (BOX_CORNERS, BOX_INERTIA, BOX_MASS, FEET, box,
                                  box_on_ground, foot_points, solo_standing)
from tests.helpers import assert_close, run_python
from tests.robots import Trajectory, real_robot

G = 9.81


@pytest.fixture(scope="module")
def box_model():
    return box()


def _box_dynamics(model, wrench, order=2):
    corners = ld.point_contacts([f"c{i}" for i in range(4)])
    return ld.unilateral_forward_dynamics(model, corners, box_on_ground(), np.zeros((1, 6)),
                                          np.zeros((2, 0)), order, tau=np.zeros((order + 1, 0)),
                                          base_wrench=np.tile(wrench, (order + 1, 1)))


def test_box_resting_on_four_corners_has_all_contacts_active(box_model):
    res = _box_dynamics(box_model, np.zeros(6))
    assert res.active == ("c0", "c1", "c2", "c3") and res.degenerate == ()
    assert_close(res.force[0].sum(), BOX_MASS * G, 1e-13, what="total normal force")
    # the four normal rows of a rigid box have rank 3: the forces are the
    # minimum-norm ones, equal by symmetry
    assert_close(res.force[0], np.full(4, BOX_MASS * G / 4), 1e-12, what="λ_n")
    assert np.abs(res.base_twist[1:]).max() < 1e-12 and np.abs(res.force[1:]).max() < 1e-12
    assert res.residual.max() < 1e-12 * BOX_MASS * G


def test_box_pushed_up_leaves_every_contact(box_model):
    lift = 30.0
    res = _box_dynamics(box_model, np.array([0, 0, 0, 0, 0, lift]))
    assert res.active == () and res.candidates == ("c0", "c1", "c2", "c3")
    assert np.all(res.force == 0.0)
    assert_close(res.normal_acceleration, np.full(4, lift / BOX_MASS - G), 1e-13,
                 what="free normal acceleration")


def test_box_tipping_keeps_the_two_corners_of_one_edge(box_model):
    """A moment ``M_y`` about the centre of mass beyond ``a m g`` tips the box
    about its edge ``x = a``: rigid-body statics of the edge, with
    ``(ω̇ × r)_z = −α a``, give ``N (1/m + a²/I_y) = g + a M_y / I_y``."""
    a, Iy, My = BOX_CORNERS[0][0], BOX_INERTIA[1, 1], 10.0
    res = _box_dynamics(box_model, np.array([0, My, 0, 0, 0, 0]))
    assert res.active == ("c0", "c1")
    N = (G + a * My / Iy) / (1 / BOX_MASS + a * a / Iy)
    assert_close(res.force[0], [N / 2, N / 2, 0, 0], 1e-12, what="λ_n")
    alpha = (My - a * N) / Iy
    assert_close(res.normal_acceleration[2:], np.full(2, 2 * alpha * a), 1e-12,
                 what="a_n of the lifting edge")
    assert_close(res.base_twist[1, 1], alpha, 1e-12, what="angular acceleration")


def test_box_at_the_tipping_threshold_is_refused_as_not_differentiable(box_model):
    """At ``M_y = a m g`` the corners of the other edge have ``λ_n = 0`` and
    ``a_n = 0`` together."""
    My = BOX_CORNERS[0][0] * BOX_MASS * G
    res = _box_dynamics(box_model, np.array([0, My, 0, 0, 0, 0]), order=0)
    assert set(res.degenerate) == {"c2", "c3"}
    with pytest.raises(ValueError, match=r"contact 'c[23]'.*not differentiable"):
        _box_dynamics(box_model, np.array([0, My, 0, 0, 0, 0]), order=1)


def _random_planes(model, C0, q, rng):
    """A plane through each of Solo's feet, normals up to ~30° from vertical."""
    planes = []
    for f, p in zip(FEET, foot_points(model, C0, q)):
        n = np.array([0, 0, 1.0]) + rng.uniform(-0.5, 0.5, size=3) * [1, 1, 0]
        planes.append(ld.Plane(n, point=p, name=f))
    return [ld.PointContact(f, pl) for f, pl in zip(FEET, planes)]


def _enumerated_lcp(bridge, model, contacts, C0, q, tau):
    """Every active set ``S`` of the LCP at rest: ``W_SS λ_S = −b_S`` with
    ``W = J M⁻¹ Jᵀ`` and ``b = J ν̇_f`` (``J̇ ν = 0`` at rest) from
    Pinocchio's CRBA and ABA; the ones meeting the signs."""
    cs = ld.ConstraintSet(model, [ld.Contact1D(c.frame, normal=c.plane.normal) for c in contacts])
    J = ld.constraint_jacobian(model, cs, C0, None, q[None], 0)[0]
    M = bridge.mass_matrix(C0, q)
    dV, ddq = bridge.aba(C0, np.zeros((1, 6)), np.vstack([q, np.zeros_like(q)]),
                         tau=tau[None], base_wrench=np.zeros((1, 6)))
    W = J @ np.linalg.solve(M, J.T)
    b = J @ np.concatenate([dV, ddq])
    found = []
    for k in range(len(contacts) + 1):
        for S in itertools.combinations(range(len(contacts)), k):
            S = list(S)
            lam = np.zeros(len(contacts))
            if S:
                lam[S] = np.linalg.solve(W[np.ix_(S, S)], -b[S])
            a = W @ lam + b
            if lam.min() >= -1e-9 * np.abs(b).max() and a.min() >= -1e-9 * np.abs(b).max():
                found.append((tuple(S), lam, a, np.linalg.solve(M, J.T @ lam) +
                              np.concatenate([dV, ddq])))
    return found


def test_solo_lcp_matches_the_enumeration_of_active_sets():
    """On tilted planes under random torques: one active set of the LCP
    (W is positive definite), found by enumeration with Pinocchio; the
    solver's active set, forces and accelerations agree, and the
    complementarity residuals are at round-off."""
    model, bridge = real_robot("solo12")
    C0, q = solo_standing(model)
    mixed = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        contacts = _random_planes(model, C0, q, rng)
        tau = rng.normal(scale=1.5, size=model.n_joints)
        found = _enumerated_lcp(bridge, model, contacts, C0, q, tau)
        assert len(found) == 1, f"seed {seed}: {len(found)} LCP solutions"
        S, lam, a, nud = found[0]
        res = ld.unilateral_forward_dynamics(model, contacts, C0, np.zeros((1, 6)),
                                             np.vstack([q, np.zeros_like(q)]), 0, tau=tau[None],
                                             base_wrench=np.zeros((1, 6)))
        assert res.active == tuple(FEET[i] for i in S), f"seed {seed}"
        scale = np.abs(lam).max() + BOX_MASS
        assert_close(res.force[0], lam, 1e-9, 1e-9 * scale, what=f"seed {seed}: λ_n")
        assert_close(res.normal_acceleration, a, 1e-9, 1e-9 * np.abs(a).max(),
                     what=f"seed {seed}: a_n")
        assert_close(np.concatenate([res.base_twist[1], res.q[2]]), nud, 1e-9,
                     1e-9 * np.abs(nud).max(), what=f"seed {seed}: ν̇")
        assert res.residual[0] <= 1e-12 * scale and res.residual[1] <= 1e-9 * np.abs(a).max()
        assert res.residual[2] <= 1e-9 * scale * np.abs(a).max()
        mixed += 0 < len(S) < 4
    assert mixed >= 3, "the seeds should give mixed active sets"


def test_solo_jets_on_a_strict_active_set_are_the_bilateral_jets():
    """Jets of order 3 on the active set of the enumeration equal those of
    the bilateral dynamics with exactly those contacts, built directly."""
    model, bridge = real_robot("solo12")
    C0, q = solo_standing(model)
    r = 3
    for seed in range(12):
        rng = np.random.default_rng(seed)
        contacts = _random_planes(model, C0, q, rng)
        tau0 = rng.normal(scale=1.5, size=model.n_joints)
        S = _enumerated_lcp(bridge, model, contacts, C0, q, tau0)[0][0]
        if 0 < len(S) < 4:
            break
    tau = np.vstack([tau0, rng.normal(size=(r, model.n_joints))])
    q2 = np.vstack([q, np.zeros_like(q)])
    res = ld.unilateral_forward_dynamics(model, contacts, C0, np.zeros((1, 6)), q2, r, tau=tau,
                                         base_wrench=np.zeros((r + 1, 6)))
    cs = ld.ConstraintSet(model, [ld.Contact1D(contacts[i].frame, normal=contacts[i].plane.normal)
                                  for i in S])
    bil = ld.constrained_forward_dynamics(model, cs, C0, np.zeros((1, 6)), q2, r, tau=tau,
                                          base_wrench=np.zeros((r + 1, 6)))
    assert_close(res.q, bil.q, 1e-12, 1e-12 * np.abs(bil.q).max(), what="q jets")
    assert_close(res.base_twist, bil.base_twist, 1e-12, 1e-12 * np.abs(bil.base_twist).max(),
                 what="V0 jets")
    assert_close(res.force[:, list(S)], bil.force, 1e-12, 1e-12 * np.abs(bil.force).max(),
                 what="λ_n jets")
    others = [i for i in range(4) if i not in S]
    assert np.all(res.force[:, others] == 0.0)


def test_gaps_of_spheres_on_a_tilted_plane():
    """``φ = nᵀp − h − ρ`` with ``p`` from :func:`liedyn.frame_pose`; the jets
    against fourth-order central differences in time of ``φ`` along a
    smooth motion (error O(h⁴) ≈ 1e-9 of the jet for h = 1e-3)."""
    model, _ = real_robot("solo12")
    traj = Trajectory(model, np.random.default_rng(3), speed=0.5)
    n = np.array([0.2, -0.1, 1.0])
    planes = [ld.Plane(n, height=0.05, name="slope"), ld.Plane([0, 0, 1], name="ground")]
    contacts = ld.point_contacts(["FL_FOOT", "HR_FOOT"], planes, radius=0.02)
    assert [c.name for c in contacts] == ["FL_FOOT/slope", "FL_FOOT/ground", "HR_FOOT/slope",
                                          "HR_FOOT/ground"]
    r = 3
    C, V, qj = traj.state(0.0, r + 1)
    gaps = ld.contact_gaps(model, contacts, C, V, qj, r)
    nu = n / np.linalg.norm(n)
    p = ld.frame_pose(model, C, qj[0], "FL_FOOT")[:3, 3]
    assert_close(gaps.phi[0, 0], nu @ p - 0.05 - 0.02, 1e-14, 1e-15, what="φ")
    assert_close(gaps.point[0], p - 0.02 * nu, 1e-14, 1e-15, what="nearest point")
    h = 1e-3
    phi = {i: ld.contact_gaps(model, contacts, *traj.state(i * h, 1), 0).phi[0]
           for i in (-2, -1, 1, 2)}
    d1 = (-phi[2] + 8 * phi[1] - 8 * phi[-1] + phi[-2]) / (12 * h)
    assert_close(gaps.phi[1], d1, 0.0, 1e-8 * np.abs(gaps.phi[:2]).max(), what="φ̇")
    for k in (2, 3):                    # φ^(k) as the derivative of φ^(k−1)
        lo = {i: ld.contact_gaps(model, contacts, *traj.state(i * h, k), k - 1).phi[k - 1]
              for i in (-2, -1, 1, 2)}
        dk = (-lo[2] + 8 * lo[1] - 8 * lo[-1] + lo[-2]) / (12 * h)
        assert_close(gaps.phi[k], dk, 0.0, 1e-7 * np.abs(gaps.phi[k]).max(), what=f"φ^({k})")
    assert_close(gaps.gap_of("HR_FOOT/ground"), gaps.phi[:, 3], 0.0, 0.0, what="gap_of")


def test_sustained_contact_refuses_penetration_and_impacts(box_model):
    corners = ld.point_contacts([f"c{i}" for i in range(4)])
    C0 = box_on_ground()
    C0[2, 3] -= 1e-3
    with pytest.raises(ValueError, match=r"contact 'c0': penetrates its plane by 1\.000e-03"):
        ld.unilateral_forward_dynamics(box_model, corners, C0, np.zeros((1, 6)),
                                       np.zeros((2, 0)), 0, tau=np.zeros((1, 0)),
                                       base_wrench=np.zeros((1, 6)))
    V = np.zeros((1, 6))
    V[0, 5] = -0.5
    with pytest.raises(ValueError, match=r"contact 'c0': closed and closing.*impact"):
        ld.unilateral_forward_dynamics(box_model, corners, box_on_ground(), V, np.zeros((2, 0)),
                                       0, tau=np.zeros((1, 0)), base_wrench=np.zeros((1, 6)))


def test_open_contacts_carry_no_force(box_model):
    """Lifted by 1 cm the box falls freely: no candidate, no force."""
    corners = ld.point_contacts([f"c{i}" for i in range(4)])
    C0 = box_on_ground()
    C0[2, 3] += 0.01
    res = ld.unilateral_forward_dynamics(box_model, corners, C0, np.zeros((1, 6)),
                                         np.zeros((2, 0)), 1, tau=np.zeros((2, 0)),
                                         base_wrench=np.zeros((2, 6)))
    assert res.candidates == () and res.status == "none"
    assert_close(res.normal_acceleration, np.full(4, -G), 1e-14, what="free fall")
    assert_close(res.gap, np.full(4, 0.01), 1e-12, what="gaps")


def test_an_lcp_without_solution_reports_the_solver_status():
    """``W d = 0`` and ``bᵀd < 0`` for ``d = (1, 1) ≥ 0``: the QP is
    unbounded below and the LCP has no solution."""
    W = np.array([[1.0, -1.0], [-1.0, 1.0]])
    with pytest.raises(ValueError, match=r"reports (Almost)?DualInfeasible.*unbounded"):
        solve_lcp(W, np.array([-1.0, -1.0]), ["a", "b"])


def test_bad_contacts_are_named():
    model = box()
    with pytest.raises(ValueError, match="normal: expected a non-zero direction"):
        ld.Plane([0, 0, 0])
    with pytest.raises(ValueError, match=r"contacts\[1\].frame: the model has no frame 'toe'"):
        ld.contact_gaps(model, [ld.PointContact("c0"), ld.PointContact("toe")], None, None,
                        np.zeros((1, 0)), 0)
    with pytest.raises(ValueError, match="radius: expected a number ≥ 0"):
        ld.PointContact("c0", radius=-0.01)
    with pytest.raises(ValueError, match="a contact called 'c0' already exists"):
        ld.contact_gaps(model, [ld.PointContact("c0"), ld.PointContact("c0")], None, None,
                        np.zeros((1, 0)), 0)
    with pytest.raises(TypeError, match="plane: expected a liedyn.Plane"):
        ld.PointContact("c0", plane=[0, 0, 1])
    with pytest.raises(ValueError, match="height, point: give one of them"):
        ld.Plane([0, 0, 1], 0.0, point=[0, 0, 0])


def test_the_core_import_does_not_need_the_solver():
    """Without Clarabel ``import liedyn`` works, and the LCP says how to
    install it (a fresh interpreter where the module cannot be imported)."""
    out = run_python("""
        import sys
        sys.modules["clarabel"] = None
        import numpy as np
        import liedyn as ld
        from tests.contact_robots import box, box_on_ground
        try:
            ld.unilateral_forward_dynamics(box(), ld.point_contacts(["c0", "c1", "c2", "c3"]),
                                           box_on_ground(), np.zeros((1, 6)), np.zeros((2, 0)),
                                           0, tau=np.zeros((1, 0)),
                                           base_wrench=np.zeros((1, 6)))
        except ImportError as e:
            print(e)
    """)
    assert "pip install clarabel" in out and "liedyn[contact]" in out
