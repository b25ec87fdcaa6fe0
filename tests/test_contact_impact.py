"""Impacts (SPEC §13.4) against independent routes: the closed form of one
frictionless contact and its energy law with Pinocchio's mass matrix,
Pinocchio's ``impulseDynamics`` with 3-D contacts on Solo-12's feet, and
the velocity complementarity of a multi-contact impact checked against an
enumeration of its active sets."""

import itertools

import numpy as np
import pytest

import liedyn as ld
from tests.contact_robots import BOX_MASS, FEET, box, box_on_ground, foot_points, solo_standing
from tests.helpers import assert_close
from tests.robots import real_robot


def _solo_on_ground(model, feet, rng, closing):
    """Solo standing with ``feet`` on planes through them (ground for the
    others, far below), and a random velocity whose feet normal speeds are
    ``closing`` (negative: closing)."""
    C0, q = solo_standing(model, tilt=rng.normal(scale=0.05, size=3))
    P = foot_points(model, C0, q)
    contacts = [ld.PointContact(f, ld.Plane([0, 0, 1], height=P[FEET.index(f), 2], name=f))
                for f in feet]
    cs = ld.ConstraintSet(model, [ld.Contact1D(f, normal=[0, 0, 1]) for f in feet])
    J = ld.constraint_jacobian(model, cs, C0, None, q[None], 0)[0]
    nu = rng.normal(scale=0.5, size=model.nv)
    nu += np.linalg.lstsq(J, np.asarray(closing, float) - J @ nu, rcond=None)[0]
    return contacts, J, C0, nu[None, :6], np.vstack([q, nu[6:]]), nu


@pytest.mark.parametrize("e", [0.0, 0.3, 1.0])
def test_one_contact_closed_form_and_energy_law(e):
    """``Λ = −(1 + e) v⁻ / (J M⁻¹ Jᵀ)``, ``v⁺ = −e v⁻`` with Pinocchio's
    mass matrix; the kinetic energy (Pinocchio's ``M``) drops by
    ``(1 − e²) ½ (v⁻)² / W``, the contact-space energy is multiplied by e²."""
    model, bridge = real_robot("solo12")
    contacts, J, C0, V0, q, nu = _solo_on_ground(model, ["FL_FOOT"], np.random.default_rng(1),
                                                 [-0.8])
    M = bridge.mass_matrix(C0, q[0])
    W = float((J @ np.linalg.solve(M, J.T))[0, 0])
    vm = float((J @ nu)[0])
    Lam = -(1 + e) * vm / W
    nu1 = nu + np.linalg.solve(M, J[0] * Lam)
    out = ld.impact(model, contacts, C0, V0, q, restitution=e)
    assert out.active == ("FL_FOOT",)
    assert_close(out.impulse, [Lam], 1e-11, what="Λ")
    assert_close(np.concatenate([out.base_twist[0], out.q[1]]), nu1, 1e-11, 1e-12, what="ν⁺")
    assert_close(out.velocity_after, [-e * vm], 1e-10, 1e-12, what="v⁺")
    loss = 0.5 * nu @ M @ nu - 0.5 * nu1 @ M @ nu1
    assert_close(out.energy_loss, loss, 1e-10, 1e-12, what="T⁻ − T⁺")
    assert_close(loss, (1 - e * e) * 0.5 * vm * vm / W, 1e-10, 1e-12, what="(1 − e²) ½ v²/W")
    assert_close(out.contact_energy_after, e * e * out.contact_energy_before, 1e-10, 1e-14,
                 what="contact energy after = e² before")
    bil = ld.impulse_dynamics(model, ld.ConstraintSet(model, [ld.Contact1D("FL_FOOT", normal=[0, 0, 1])]),
                              C0, V0, q, restitution=e)
    assert_close(bil.impulse, [Lam], 1e-11, what="impulse_dynamics Λ")


def _pinocchio_impulse(bridge, model, C0, V0, q, feet, e):
    import pinocchio as pin
    pm = bridge.model
    cms = pin.StdVec_RigidConstraintModel()
    for f in feet:
        fr = pm.frames[pm.getFrameId(f)]
        cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, fr.parentJoint,
                                            fr.placement, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED))
    cds = pin.StdVec_RigidConstraintData()
    for c in cms:
        cds.append(c.createData())
    data = pm.createData()
    pin.initConstraintDynamics(pm, data, cms, cds)
    q_pin, v_pin = bridge.motion_to_pin(C0, V0, q)
    prox = pin.ProximalSettings(1e-14, 1e-12, 0.0, 1)
    v_after = pin.impulseDynamics(pm, data, q_pin, v_pin[0], cms, cds, e, prox)
    _, V1, q1 = bridge.motion_from_pin(q_pin, v_after[None])
    return V1, q1, np.array(data.impulse_c)


@pytest.mark.parametrize("feet,e", [(["FL_FOOT"], 0.0), (["FL_FOOT", "HR_FOOT"], 0.4),
                                    (list(FEET), 0.0), (list(FEET), 0.7)])
def test_bilateral_impulses_agree_with_pinocchio_impulse_dynamics(feet, e):
    model, bridge = real_robot("solo12")
    rng = np.random.default_rng(len(feet) + int(10 * e))
    _, _, C0, V0, q, nu = _solo_on_ground(model, feet, rng, -0.5 * np.ones(len(feet)))
    cs = ld.ConstraintSet(model, [ld.Contact3D(f) for f in feet])
    out = ld.impulse_dynamics(model, cs, C0, V0, q, restitution=e)
    V1, q1, imp = _pinocchio_impulse(bridge, model, C0, V0, q, feet, e)
    assert_close(out.base_twist, V1, 1e-9, 1e-10, what="V₀⁺")
    assert_close(out.q[1], q1[1], 1e-9, 1e-10, what="q̇⁺")
    assert_close(out.impulse, imp, 1e-9, 1e-10 * np.abs(imp).max(), what="Λ")
    assert out.residual[0] < 1e-12
    if e == 0.0:
        assert out.energy_loss > 0


def _enumerated_impact(W, c):
    """The active sets ``S`` with ``W_SS Λ_S = −c_S``, ``Λ ≥ 0``, ``w ≥ 0``."""
    out = []
    for k in range(len(c) + 1):
        for S in itertools.combinations(range(len(c)), k):
            S = list(S)
            Lam = np.zeros(len(c))
            if S:
                Lam[S] = np.linalg.solve(W[np.ix_(S, S)], -c[S])
            w = W @ Lam + c
            if Lam.min() >= -1e-10 and w.min() >= -1e-10:
                out.append((tuple(S), Lam))
    return out


@pytest.mark.parametrize("e", [0.0, 0.5])
def test_four_feet_impact_satisfies_velocity_complementarity(e):
    """Solo lands on four feet closing at different speeds (one separating):
    ``Λ ≥ 0``, ``w = v⁺ + e min(v⁻, 0) ≥ 0``, ``Λᵀw = 0`` to round-off, the
    one active set of the enumeration (Pinocchio's ``M``), and for ``e = 0``
    the loss ``½ Λᵀ W Λ``; the scalar formula applied contact by contact
    differs."""
    model, bridge = real_robot("solo12")
    closing = np.array([-1.0, -0.2, -0.6, 0.3])
    contacts, J, C0, V0, q, nu = _solo_on_ground(model, list(FEET), np.random.default_rng(5),
                                                 closing)
    out = ld.impact(model, contacts, C0, V0, q, restitution=e)
    M = bridge.mass_matrix(C0, q[0])
    W = J @ np.linalg.solve(M, J.T)
    c = closing + e * np.minimum(closing, 0)
    found = _enumerated_impact(W, c)
    assert len(found) == 1
    S, Lam = found[0]
    assert out.active == tuple(FEET[i] for i in S) and 0 < len(S) < 4
    assert_close(out.impulse, Lam, 1e-10, 1e-12, what="Λ")
    w = out.velocity_after + e * np.minimum(out.velocity_before, 0)
    assert out.impulse.min() >= 0 and w.min() >= -1e-12
    assert np.abs(out.impulse * w).max() < 1e-12
    assert out.residual.max() < 1e-12
    if e == 0:
        assert_close(out.energy_loss, 0.5 * Lam @ W @ Lam, 1e-10, 1e-14, what="loss")


def test_impact_reads_the_closed_contacts_only():
    """A box falling flat on its corners, one corner above a 1 mm step: the
    three others take the impact and stop (e = 0); the scalar formula
    applied corner by corner does not stop them."""
    model = box()
    C0 = box_on_ground()
    V = np.zeros((1, 6))
    V[0, 5] = -1.0
    contacts = [ld.PointContact("c0", ld.Plane([0, 0, 1], height=-1e-3))] + \
        [ld.PointContact(f"c{i}") for i in (1, 2, 3)]
    out = ld.impact(model, contacts, C0, V, np.zeros((2, 0)))
    assert out.impulse[0] == 0.0 and out.impulse[1:].min() >= -1e-14
    assert_close(out.impulse.sum(), BOX_MASS, 1e-13, what="Σ Λ = m |v⁻|")
    assert np.abs(out.velocity_after).max() < 1e-12                  # the rigid box stops
    cs = ld.ConstraintSet(model, [ld.Contact1D(f"c{i}", normal=[0, 0, 1]) for i in (1, 2, 3)])
    J = ld.constraint_jacobian(model, cs, C0, None, np.zeros((1, 0)), 0)[0]
    MiJt = np.linalg.solve(ld.mass_matrix(model, C0, np.zeros(0)), J.T)
    scalar = -(J @ V[0]) / np.diag(J @ MiJt)
    assert np.abs(J @ (V[0] + MiJt @ scalar)).max() > 0.1


def test_impact_bad_input_is_named():
    model = box()
    contacts = ld.point_contacts([f"c{i}" for i in range(4)])
    args = (model, contacts, box_on_ground(), np.zeros((1, 6)), np.zeros((2, 0)))
    for e in (-0.1, 1.5):
        with pytest.raises(ValueError, match=r"restitution: expected a number in \[0.0, 1.0\]"):
            ld.impact(*args, restitution=e)
    with pytest.raises(ValueError, match=r"restitution: expected coefficients in \[0, 1\], got "
                                         r"2.0 at index 1"):
        ld.impact(*args, restitution=[0, 2.0, 0, 0])
    with pytest.raises(ValueError, match=r"restitution: expected .*shape \(4,\)"):
        ld.impact(*args, restitution=[0, 0])
    with pytest.raises(ValueError, match="base_twist: a floating base needs its twist"):
        ld.impact(model, contacts, box_on_ground(), None, np.zeros((2, 0)))
    C0 = box_on_ground()
    C0[2, 3] -= 0.01
    with pytest.raises(ValueError, match="contact 'c0': penetrates its plane"):
        ld.impact(model, contacts, C0, np.zeros((1, 6)), np.zeros((2, 0)))
    with pytest.raises(ValueError, match="contacts\\[0\\].frame: the model has no frame"):
        ld.impact(model, [ld.PointContact("nowhere")], C0, np.zeros((1, 6)), np.zeros((2, 0)))
