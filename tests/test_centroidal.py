"""Centroidal quantities and energy at every order (SPEC §14).

References, none of them a second copy of the module's recursions:

- Pinocchio 4.1 on real robots (Solo-12 and Talos floating, Panda fixed) at
  orders 0–2: ``centerOfMass`` (c, ċ, c̈), ``computeCentroidalMomentum`` and
  ``computeCentroidalMomentumTimeVariation`` (h_G, ḣ_G), ``ccrba`` and
  ``dccrba`` (A_G, Ȧ_G), ``computeKineticEnergy``, ``computePotentialEnergy``;
  and on random trees with armature, where Pinocchio's CRBA carries the rotor
  term.
- Central differences in time of the order-0 quantities along smooth
  trajectories (base pose integrated on SE(3)), orders 1–4, with step
  halving showing the h² law.
- Identities: ``h_G^(k) = Σ_a binom(k, a) A_G^(a) ν^(k−a)``; ``T = ½ νᵀ M ν``
  with :func:`liedyn.mass_matrix`; Newton–Euler of the whole robot,
  ``Π^(k+1) = W₀^(k) + Σ_j W_app,j^(k) + Σ_j (M_j G)^(k)`` with the base wrench
  of :func:`liedyn.inverse_dynamics` and the gravity wrenches from the
  bodies' adjoint jets; the power balance ``Ṫ + U̇ = τ̄ᵀ ν − q̇ᵀ B q̇ +
  Σ_j W_app,jᵀ V_j`` and its derivatives on damped robots.
"""

import numpy as np
import pinocchio as pin
import pytest

import liedyn
from liedyn import ModelBuilder, Revolute, centroidal, centroidal_momentum_matrix, se3
from liedyn.algorithm.frames import inverse_adjoint_jet
from liedyn.interop.pinocchio import swap_halves, to_pinocchio
from liedyn.multibody.workspace import binomials
from models.trees import random_inertia, random_tree
from tests.helpers import rel_err
from tests.robots import Trajectory, joint_sample, real_robot

# Both libraries form each quantity from at most a few thousand float64
# products of O(1) numbers (metres, kilograms, rad/s) summed over ≤ 33
# bodies: they agree to ~100 eps of 1 + max|x|.
TOL = 1e-12

# Identities between jets of order ≤ 5: Leibniz sums of binomial size ≤ 10
# over products of jets of size up to ~1e3 (random jets of unit size grow
# with the order), so round-off is ~1e3 eps of 1 + max|x|.
IDENTITY_TOL = 1e-12

# Central differences of the order-0 quantities with the O(h²) stencils below:
# error(h) = c h² + O(h⁴), so halving h divides it by 4 up to a relative
# O(h²) correction (measured: ratios 3.97–4.03 at h = 0.02 for every robot,
# quantity and order); roundoff, 16 eps |x| / h⁴ ≈ 2e-8 |x| at the finest
# fourth-order step, stays far below the truncation error (≥ 1e-5 |x|).
H = 0.02
RATIO = (3.9, 4.1)
STENCILS = {1: {-1: -0.5, 1: 0.5}, 2: {-1: 1.0, 0: -2.0, 1: 1.0},
            3: {-2: -0.5, -1: 1.0, 1: -1.0, 2: 0.5},
            4: {-2: 1.0, -1: -4.0, 0: 6.0, 1: -4.0, 2: 1.0}}

P = np.zeros((6, 6))              # liedyn's (angular, linear) ↔ Pinocchio's (linear, angular)
P[:3, 3:] = P[3:, :3] = np.eye(3)


def _tree(floating, seed=5):
    return random_tree(np.random.default_rng(seed), 9, floating_base=floating, armature=True,
                       damping=True)


CASES = {   # id: model
    "solo12": lambda: real_robot("solo12")[0],
    "talos": lambda: real_robot("talos")[0],
    "panda": lambda: real_robot("panda")[0],
    "tree-floating": lambda: _tree(True),
    "tree-fixed": lambda: _tree(False),
}


def _state(model, rng, rows):
    """A random base pose, base twist jet ``(rows, 6)`` (None if fixed) and
    joint jet ``(rows + 1, n)`` with ``q`` within the joint limits."""
    C0 = se3.exp(rng.normal(size=6) * 0.5) if model.floating_base else None
    V = rng.normal(size=(rows, 6)) if model.floating_base else None
    q = rng.normal(size=(rows + 1, model.n_joints))
    q[0] = joint_sample(model, rng)
    return C0, V, q


def _velocity(V, q):
    """The jet of ``ν``: ``(V₀, q̇)`` or ``q̇``."""
    return q[1:] if V is None else np.hstack([V[:len(q) - 1], q[1:]])


def _leibniz_dot(x, y, k):
    """``(xᵀ y)^(k)`` from the jets ``x``, ``y`` (dot product over the last axes)."""
    B = binomials(k)
    return sum(B[k, a] * np.sum(x[a] * y[k - a]) for a in range(k + 1))


# ----------------------------------------------------------- Pinocchio --

@pytest.mark.parametrize("name", ["solo12", "talos", "panda"])
def test_against_pinocchio(name):
    """Orders 0–1 of everything, and c̈, against Pinocchio's centroidal and
    energy algorithms; Pinocchio's ``v = T ν``, so ``A_G = P Ag T`` and
    ``Ȧ_G = P (dAg T + Ag Ṫ)``."""
    model, br = real_robot(name)
    assert not np.any(model.joint_armature)           # else Pinocchio's T differs (below)
    pm, d = br.model, br.data
    rng = np.random.default_rng(len(name))
    for _ in range(2):
        C0, V, q = _state(model, rng, 3)
        res = centroidal(model, C0, V, q, 2)
        A = centroidal_momentum_matrix(model, C0, V, q, 1)
        qp, v = br.motion_to_pin(C0, V, q)
        pin.centerOfMass(pm, d, qp, v[0], v[1])
        assert abs(res.mass - d.mass[0]) <= TOL * res.mass, "mass"
        assert abs(res.mass - pin.computeTotalMass(pm)) <= TOL * res.mass, "mass"
        for k, want in enumerate((d.com[0], d.vcom[0], d.acom[0])):
            assert rel_err(res.com[k], want) <= TOL, ("com", k)
        pin.computeCentroidalMomentumTimeVariation(pm, d, qp, v[0], v[1])
        hg, dhg = swap_halves(d.hg.vector), swap_halves(d.dhg.vector)
        assert rel_err(res.centroidal_momentum[0], hg) <= TOL, "h_G"
        assert rel_err(res.centroidal_momentum[1], dhg) <= TOL, "ḣ_G"
        Pi = hg + np.concatenate([np.cross(d.com[0], hg[3:]), np.zeros(3)])  # moment about 0
        assert rel_err(res.momentum[0], Pi) <= TOL, "Π"
        assert rel_err(res.kinetic_energy[0], pin.computeKineticEnergy(pm, d, qp, v[0])) <= TOL
        assert rel_err(res.potential_energy[0], pin.computePotentialEnergy(pm, d, qp)) <= TOL
        Ag = pin.ccrba(pm, d, qp, v[0]).copy()
        dAg = pin.dccrba(pm, d, qp, v[0]).copy()
        T = br.velocity_map(C0)
        Tdot = np.zeros_like(T)
        if br.nb:
            Tdot[:6, :6] = -T[:6, :6] @ se3.ad(V[0])     # d/dt (P Ad_{C⁻¹}) = −P Ad_{C⁻¹} ad_V
        assert rel_err(P @ A[0], Ag @ T) <= TOL, "A_G"
        assert rel_err(P @ A[1], dAg @ T + Ag @ Tdot) <= TOL, "Ȧ_G"


@pytest.mark.parametrize("floating", [True, False], ids=["floating", "fixed"])
def test_kinetic_energy_with_armature_against_pinocchio(floating):
    """The rotor term: ``T = ½ vᵀ M_pin v`` with Pinocchio's CRBA (which adds
    the armature to its diagonal), and ``T − ½ Σ I_a q̇²`` equals
    ``computeKineticEnergy`` of a copy without armature. (Pinocchio 4.1's
    ``computeKineticEnergy`` adds ``½ armature · joint_v²`` itself, but
    ``JointModelRevoluteUnaligned``, the joint :func:`to_pinocchio` makes,
    leaves its ``joint_v`` at zero, so the copy without armature is the
    clean comparison.)"""
    model = _tree(floating, seed=21)
    assert np.all(model.joint_armature > 0)
    br = to_pinocchio(model)
    bare = br.model.copy()
    bare.armature = np.zeros(bare.nv)
    rng = np.random.default_rng(22)
    for _ in range(3):
        C0, V, q = _state(model, rng, 1)
        T = centroidal(model, C0, V, q, 0).kinetic_energy[0]
        qp, v = br.motion_to_pin(C0, V, q)
        Mp = pin.crba(br.model, br.data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert rel_err(T, 0.5 * v[0] @ Mp @ v[0]) <= TOL
        rotor = 0.5 * np.sum(model.joint_armature * q[1] ** 2)
        assert rel_err(T - rotor, pin.computeKineticEnergy(bare, bare.createData(), qp,
                                                           v[0])) <= TOL


def test_fixed_base_mass_is_left_out_as_pinocchio_does():
    """A fixed base's own body: not in ``m``, ``c`` or ``U`` (a constant),
    which Pinocchio keeps in the universe's inertia and leaves out too."""
    model, br = real_robot("panda")
    assert model.body_mass[0] > 0 and br.model.inertias[0].mass == model.body_mass[0]
    res = centroidal(model, None, None, np.zeros((2, model.n_joints)), 0)
    assert res.mass == pytest.approx(np.sum(model.body_mass[1:]), rel=1e-15)


# -------------------------------------------------- central differences --

@pytest.mark.parametrize("case", ["talos", "panda", "solo12", "tree-floating", "tree-fixed"])
def test_higher_orders_against_central_differences(case):
    """Row ``k`` of every jet (``k = 1..4``) against the ``k``-th central
    difference of the order-0 quantity along a polynomial trajectory; the
    error falls as ``h²``."""
    model = CASES[case]()
    traj = Trajectory(model, np.random.default_rng(3), speed=0.5)
    K = 4
    res = centroidal(model, *traj.state(0.0, K + 1), K)
    want = {"com": res.com, "momentum": res.momentum, "h_G": res.centroidal_momentum,
            "T": res.kinetic_energy, "U": res.potential_energy,
            "A_G": centroidal_momentum_matrix(model, *traj.state(0.0, K), K)}
    values = {}

    def at(s):
        if s not in values:
            C0, V, q = traj.state(s, 1)
            r = centroidal(model, C0, V, q, 0)
            values[s] = {"com": r.com[0], "momentum": r.momentum[0],
                         "h_G": r.centroidal_momentum[0], "T": r.kinetic_energy[0],
                         "U": r.potential_energy[0],
                         "A_G": centroidal_momentum_matrix(model, C0, None, q[:1], 0)[0]}
        return values[s]

    for key, jet in want.items():
        scale = 1.0 + np.max(np.abs(jet))
        for k in range(1, K + 1):
            e = [np.max(np.abs(sum(w * at(i * h)[key] for i, w in STENCILS[k].items()) / h ** k
                               - jet[k])) for h in (H, H / 2)]
            assert e[1] <= 1e-3 * scale, (key, k, e)
            assert RATIO[0] <= e[0] / e[1] <= RATIO[1], (key, k, e)


# ------------------------------------------------------------ identities --

@pytest.mark.parametrize("case", ["talos", "panda", "tree-floating", "tree-fixed"])
def test_centroidal_momentum_is_the_matrix_times_the_velocity_at_every_order(case):
    """``h_G = A_G ν``, so ``h_G^(k) = Σ_a binom(k, a) A_G^(a) ν^(k−a)``, k ≤ 5."""
    model = CASES[case]()
    rng = np.random.default_rng(8)
    K = 5
    B = binomials(K)
    for _ in range(2):
        C0, V, q = _state(model, rng, K + 1)
        h = centroidal(model, C0, V, q, K).centroidal_momentum
        A = centroidal_momentum_matrix(model, C0, V, q, K)
        assert A.shape == (K + 1, 6, model.nv)
        nu = _velocity(V, q)
        for k in range(K + 1):
            want = sum(B[k, a] * A[a] @ nu[k - a] for a in range(k + 1))
            assert rel_err(h[k], want) <= IDENTITY_TOL, k


@pytest.mark.parametrize("case", ["talos", "panda", "tree-floating", "tree-fixed"])
def test_kinetic_energy_is_half_nu_M_nu(case):
    """``T = ½ νᵀ M ν`` with the mass matrix of SPEC §7 (armature included)."""
    model = CASES[case]()
    rng = np.random.default_rng(9)
    for _ in range(3):
        C0, V, q = _state(model, rng, 1)
        nu = _velocity(V, q)[0]
        M = liedyn.mass_matrix(model, C0, q[0])
        assert rel_err(centroidal(model, C0, V, q, 0).kinetic_energy[0],
                       0.5 * nu @ M @ nu) <= TOL


def _gravity_wrench_jet(model, C0, V, q, K):
    """``Σ_j (M_j G)^(0..K)`` about the world origin, every body, from the
    adjoint jets: ``M_j G = Hᵀ Mᵇ_j H G`` with ``H = Ad_{C_j⁻¹}``, so
    ``(M_j G)^(k) = Σ_a binom(k, a) H^(a)ᵀ Mᵇ_j H^(k−a) G``."""
    fk = liedyn.forward_kinematics(model, C0, None if V is None else V[:K], q[:K + 1], K - 1)
    G = np.concatenate([np.zeros(3), model.gravity])
    B = binomials(K)
    out = np.zeros((K + 1, 6))
    for j in range(model.n_bodies):
        H = inverse_adjoint_jet(fk.body_pose[j], fk.twist[:, j], K)
        Mb = model.body_inertia[j]
        for k in range(K + 1):
            out[k] += sum(B[k, a] * H[a].T @ Mb @ H[k - a] @ G for a in range(k + 1))
    return out


@pytest.mark.parametrize("case", ["talos", "panda", "tree-floating", "tree-fixed"])
def test_newton_euler_of_the_whole_robot(case):
    """``Π^(k+1) = W₀^(k) + Σ_j W_app,j^(k) + Σ_j (M_j G)^(k)``, k ≤ 3: the
    momentum of the whole robot changes by the external wrenches, base
    actuators (or the support of a fixed base) included; its linear part is
    ``m c^(k+2)`` (moving bodies)."""
    model = CASES[case]()
    rng = np.random.default_rng(10)
    K = 4
    C0, V, q = _state(model, rng, K + 1)
    applied = rng.normal(size=(K, model.n_bodies, 6))
    res = centroidal(model, C0, V, q, K)
    inv = liedyn.inverse_dynamics(model, C0, V, q, K - 1, applied=applied)
    Wg = _gravity_wrench_jet(model, C0, V, q, K - 1)
    for k in range(K):
        external = inv.base_wrench[k] + applied[k].sum(axis=0) + Wg[k]
        assert rel_err(res.momentum[k + 1], external) <= IDENTITY_TOL, k
        assert rel_err(res.momentum[k, 3:], res.mass * res.com[k + 1]) <= IDENTITY_TOL, k


@pytest.mark.parametrize("case", ["talos", "panda", "tree-floating", "tree-fixed"])
def test_power_balance_at_every_order(case):
    """``Ṫ + U̇ = τ̄ᵀ ν − q̇ᵀ B q̇ + Σ_j W_app,jᵀ V_j`` and its derivatives
    (k ≤ 3), with ``τ̄ = (W₀, τ)`` of :func:`liedyn.inverse_dynamics` (``τ``
    includes the damping ``b q̇`` and the rotors' ``I_a q̈``)."""
    model = CASES[case]()
    assert np.any(model.joint_damping > 0)
    rng = np.random.default_rng(11)
    K = 3
    C0, V, q = _state(model, rng, K + 2)
    applied = rng.normal(size=(K + 1, model.n_bodies, 6))
    res = centroidal(model, C0, V, q, K + 1)
    inv = liedyn.inverse_dynamics(model, C0, V, q, K, applied=applied)
    tau_bar = inv.tau if V is None else np.hstack([inv.base_wrench, inv.tau])
    nu = _velocity(V, q)
    b = model.joint_damping
    for k in range(K + 1):
        power = (_leibniz_dot(tau_bar, nu, k) - _leibniz_dot(b * q[1:], q[1:], k)
                 + _leibniz_dot(applied, inv.twist, k))
        rate = res.kinetic_energy[k + 1] + res.potential_energy[k + 1]
        assert abs(rate - power) <= IDENTITY_TOL * (1.0 + abs(power)), (k, rate, power)


# -------------------------------------------------------------- arguments --

@pytest.mark.parametrize("case", ["tree-floating", "tree-fixed"])
def test_motion_jets_are_read_as_prefixes(case):
    """``centroidal`` reads ``V₀^(0..K)`` and ``q^(0..K+1)``,
    ``centroidal_momentum_matrix`` ``V₀^(0..K−1)`` and ``q^(0..K)``: longer
    jets, even with NaN past those rows, give the same numbers to the bit."""
    model = CASES[case]()
    rng = np.random.default_rng(12)
    K = 2
    C0, V, q = _state(model, rng, 6)

    def cut(x, rows):
        return None if x is None else x[:rows].copy()

    def nan(x, rows):
        return None if x is None else np.vstack([x[:rows], np.full_like(x[rows:], np.nan)])

    exact = centroidal(model, C0, cut(V, K + 1), q[:K + 2].copy(), K)
    for Vl, ql in ((V, q), (nan(V, K + 1), nan(q, K + 2))):
        got = centroidal(model, C0, Vl, ql, K)
        for f in ("com", "momentum", "centroidal_momentum", "kinetic_energy",
                  "potential_energy"):
            assert np.array_equal(getattr(got, f), getattr(exact, f)), f
    A = centroidal_momentum_matrix(model, C0, cut(V, K), q[:K + 1].copy(), K)
    for Vl, ql in ((V, q), (nan(V, K), nan(q, K + 1))):
        assert np.array_equal(centroidal_momentum_matrix(model, C0, Vl, ql, K), A)
    A0 = centroidal_momentum_matrix(model, C0, None, q[:1], 0)      # order 0: no twist needed
    assert np.array_equal(A0, A[:1])


def test_results_and_shapes():
    model = CASES["tree-floating"]()
    C0, V, q = _state(model, np.random.default_rng(13), 3)
    res = centroidal(model, C0, V, q, 2)
    assert isinstance(res, liedyn.CentroidalResult) and res.order == 2
    assert isinstance(res.mass, float)
    shapes = {"com": (3, 3), "momentum": (3, 6), "centroidal_momentum": (3, 6),
              "kinetic_energy": (3,), "potential_energy": (3,)}
    for f, s in shapes.items():
        assert getattr(res, f).shape == s, f
    with pytest.raises(AttributeError):
        res.mass = 1.0
    with pytest.raises(ValueError):
        res.com[0, 0] = 1.0
    assert "CentroidalResult(order=2" in repr(res)
    fixed = CASES["tree-fixed"]()
    Af = centroidal_momentum_matrix(fixed, None, None, np.zeros((3, fixed.n_joints)), 2)
    assert Af.shape == (3, 6, fixed.n_joints)


def _massless_arm():
    b = ModelBuilder(floating_base=False)
    b.add_body("base", None, None, None, random_inertia(np.random.default_rng(14)))
    b.add_body("link", "base", Revolute((0.0, 0.0, 1.0)), None, None)
    return b.build()


@pytest.mark.parametrize("fn", ["centroidal", "matrix"])
def test_bad_arguments(fn):
    model = CASES["tree-floating"]()
    fixed = CASES["tree-fixed"]()
    n, K = model.n_joints, 2
    rows = (K + 1, K + 2) if fn == "centroidal" else (K, K + 1)       # twist, q rows read
    call = centroidal if fn == "centroidal" else centroidal_momentum_matrix
    V, q = np.zeros((rows[0], 6)), np.zeros((rows[1], n))
    call(model, None, V, q, K)                                         # the good call
    bad_q = q.copy()
    bad_q[-1, 0] = np.nan
    bad_V = V.copy()
    bad_V[-1, 2] = np.inf
    cases = [
        (ValueError, rf"^q: expected a jet of {rows[1]} rows or more", (model, None, V, q[:-1], K)),
        (ValueError, rf"^base_twist: expected a jet of {rows[0]} rows? or more",
         (model, None, V[:-1], q, K)),
        (ValueError, r"^q: expected a jet", (model, None, V, np.zeros((rows[1], n + 1)), K)),
        (ValueError, r"^base_twist: expected a jet", (model, None, np.zeros((rows[0], 5)), q,
                                                      K)),
        (ValueError, r"^q: contains NaN", (model, None, V, bad_q, K)),
        (ValueError, r"^base_twist: contains NaN", (model, None, bad_V, q, K)),
        (ValueError, r"^base_twist: a floating base needs", (model, None, None, q, K)),
        (ValueError, r"^base_twist: a fixed base does not move",
         (fixed, None, np.ones((rows[0], 6)), np.zeros((rows[1], fixed.n_joints)), K)),
        (ValueError, r"^base_pose: not in SE\(3\)", (model, 2.0 * np.eye(4), V, q, K)),
        (TypeError, r"^q: expected a real numeric array", (model, None, V, "q", K)),
        (ValueError, r"^order", (model, None, V, q, -1)),
        (TypeError, r"^order", (model, None, V, q, 2.0)),
        (TypeError, r"^model", ("model", None, V, q, K)),
    ]
    for exc, match, args in cases:
        with pytest.raises(exc, match=match):
            call(*args)
    arm = _massless_arm()
    with pytest.raises(ValueError, match=r"^model: its moving bodies have no mass"):
        call(arm, None, None, np.zeros((rows[1], 1)), K)
