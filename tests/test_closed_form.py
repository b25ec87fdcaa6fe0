"""The closed-form equations of motion (SPEC §7) against independent references:
Pinocchio's CRBA, passivity (Ṁ − 2C skew), central time differences of the
jets along an integrated trajectory, the gradient of the potential energy, and
H-GRNE-FBS at orders 0..3."""

import numpy as np
import pytest

import liedyn
from liedyn import se3
from liedyn.interop.pinocchio import depth_first_order, to_pinocchio
from models.aerial_manipulator import aerial_manipulator
from models.trees import random_inertia, random_tree
from tests.helpers import assert_close, integrate_pose, poly_jet, rel_err

# Round-off only: every entry of M, C, g is a sum over ≤ N bodies of products
# of O(1) factors (a few dozen flops each), and both sides of each comparison
# are evaluated in float64, so they agree to ~100 eps relative to the largest
# entry; 1e-12 leaves an order of magnitude.
ROUNDOFF = 1e-12


def _models(seed):
    """(name, model) zoo: the aerial manipulator and shuffled random trees
    (subtrees not contiguous), floating and fixed, with armature and damping."""
    rng = np.random.default_rng(seed)
    return [
        ("aerial-floating", aerial_manipulator()),
        ("aerial-fixed", aerial_manipulator(floating_base=False)),
        ("tree-floating", random_tree(rng, 9, floating_base=True, armature=True, damping=True)),
        ("tree-fixed", random_tree(rng, 9, floating_base=False, armature=True, damping=True)),
    ]


MODELS = _models(7)
IDS = [name for name, _ in MODELS]


def _random_jets(model, rng, r, scale=0.7):
    """Random pose, base twist jet (r+2, 6) (None if fixed), q jet (r+3, n)."""
    C0 = se3.exp(rng.normal(size=6))
    Vb = rng.normal(size=(r + 2, 6)) * scale if model.floating_base else None
    return C0, Vb, rng.normal(size=(r + 3, model.n_joints)) * scale


def _tau_bar(model, res):
    """``τ̄ = (W₀, τ)`` for a floating base, ``τ`` for a fixed one."""
    if model.floating_base:
        return np.concatenate([res.base_wrench, res.tau], axis=1)
    return res.tau


def test_zoo_has_non_contiguous_subtrees():
    """The shuffled trees are built out of depth-first order, so the CRBA
    comparison below exercises the parent-array assembly."""
    for name, model in MODELS:
        if name.startswith("tree"):
            assert not np.array_equal(depth_first_order(model.body_parent),
                                      np.arange(model.n_bodies)), name


@pytest.mark.parametrize("k", range(len(MODELS)), ids=IDS)
def test_mass_matrix_is_spd_and_equals_pinocchio_crba(k):
    name, model = MODELS[k]
    rng = np.random.default_rng(30 + k)
    for _ in range(3):
        C0 = se3.exp(rng.normal(size=6))
        q = rng.normal(size=model.n_joints)
        M = liedyn.mass_matrix(model, C0, q)
        assert M.shape == (model.nv, model.nv)
        assert np.array_equal(M, M.T), "mass matrix must be exactly symmetric"
        assert np.linalg.eigvalsh(M)[0] > 0.0
        pm = to_pinocchio(model, base_pose=None if model.floating_base else C0)
        M_pin = pm.mass_matrix(C0, q)                                  # Tᵀ M_pin T
        assert_close(M, M_pin, rtol=0, atol=ROUNDOFF * np.max(np.abs(M_pin)), what=name)


@pytest.mark.parametrize("k", range(len(MODELS)), ids=IDS)
def test_Mdot_minus_2C_is_skew_symmetric(k):
    """``Ṁ − 2C`` and, differentiating, ``M^(i+1) − 2C^(i)`` (i ≤ 2) are skew;
    ``Ṁ`` from the jets is checked against time differences below."""
    name, model = MODELS[k]
    rng = np.random.default_rng(40 + k)
    for _ in range(3):
        C0, Vb, q = _random_jets(model, rng, 3)
        J = liedyn.closed_form_jets(model, C0, Vb, q, 3)
        for i in range(3):
            K = J.mass[i + 1] - 2.0 * J.coriolis[i]
            scale = np.max(np.abs(J.mass[i + 1])) + np.max(np.abs(J.coriolis[i]))
            assert_close(K + K.T, np.zeros_like(K), rtol=0, atol=ROUNDOFF * scale,
                         what=f"{name} order {i}")
        C = liedyn.coriolis_matrix(model, C0, None if Vb is None else Vb[:1], q[:2])
        assert_close(C, J.coriolis[0], rtol=0, atol=0, what="coriolis_matrix vs jets")
        assert np.array_equal(J.mass, np.swapaxes(J.mass, 1, 2)), "M^(k) exactly symmetric"


def _literal_spec(model, C0, Vb, q):
    """M, C, g of SPEC §7 by the dense 6N × 6N products, O(N³), from the
    kinematics and ``se3.transform_inertia`` (no composite inertias)."""
    N, nv, off = model.n_bodies, model.nv, 6 if model.floating_base else 0
    kin = liedyn.forward_kinematics(model, C0, Vb, q, 1)
    S, Sd, Gp = np.zeros((6 * N, nv)), np.zeros((6 * N, nv)), np.zeros((6 * N, 6 * N))
    Mblk, adV = np.zeros((6 * N, 6 * N)), np.zeros((6 * N, 6 * N))
    if off:
        S[:6, :6] = np.eye(6)
    for j in range(N):
        b = slice(6 * j, 6 * j + 6)
        if j:
            S[b, off + j - 1] = kin.screw[0, j]
            Sd[b, off + j - 1] = kin.screw[1, j]
        for k in model.ancestors(j):
            Gp[b, 6 * k:6 * k + 6] = np.eye(6)
        Mblk[b, b] = se3.transform_inertia(kin.body_pose[j], model.body_inertia[j])
        adV[b, b] = se3.ad(kin.twist[0, j])
    Gc = Gp.T
    M = S.T @ Gc @ Mblk @ Gp @ S
    M[off:, off:] += np.diag(model.joint_armature)
    C = S.T @ Gc @ Mblk @ Gp @ Sd - S.T @ Gc @ adV.T @ Mblk @ Gp @ S
    G = np.concatenate([np.zeros(3), model.gravity])                # SPEC §1: G = (0, g⃗)
    g = -S.T @ Gc @ Mblk @ np.tile(G, N)
    return M, C, g


@pytest.mark.parametrize("k", range(len(MODELS)), ids=IDS)
def test_parent_array_assembly_equals_the_dense_spec_products(k):
    """Entry by entry (not only ``C ν``), the O(N · depth) assembly equals
    ``Sᵀ G_c M G_p S``, ``Sᵀ G_c M G_p Ṡ − Sᵀ G_c ad_Vᵀ M G_p S``, ``−Sᵀ G_c M G_I``."""
    name, model = MODELS[k]
    rng = np.random.default_rng(45 + k)
    C0, Vb, q = _random_jets(model, rng, 0)
    J = liedyn.closed_form_jets(model, C0, Vb, q, 0)
    for got, ref, what in zip((J.mass[0], J.coriolis[0], J.gravity[0]),
                              _literal_spec(model, C0, Vb, q), ("M", "C", "g")):
        assert_close(got, ref, rtol=0, atol=ROUNDOFF * (1.0 + np.max(np.abs(ref))), what=f"{name} {what}")


# Central difference with step H: truncation H²/6 · |x'''| and round-off
# eps · |x| / H. Along these O(1) random Taylor motions |x'''| ≲ 20 (1 + |x'|)
# (measured: the error is ≤ 3.6e-8 relative to 1 + |x'| at H = 1e-4 and scales
# as H²); round-off is ~1e-12. 1e-6 keeps a 30× margin, while a wrong term in
# any jet (an O(1) relative error) fails by orders of magnitude.
H = 1e-4
FD_TOL = 1e-6


@pytest.mark.parametrize("k", [0, 3, 2], ids=["aerial-floating", "tree-fixed", "tree-floating"])
def test_jets_are_time_derivatives_along_a_trajectory(k):
    """``M^(i+1)``, ``C^(i+1)``, ``g^(i+1)`` equal the central difference of
    ``M^(i)``, ``C^(i)``, ``g^(i)`` along the motion whose Taylor jets they
    use, with the base pose integrated on SE(3)."""
    name, model = MODELS[k]
    rng = np.random.default_rng(50 + k)
    r = 3
    qc = rng.normal(size=(r + 5, model.n_joints)) * 0.7
    Vc = rng.normal(size=(r + 4, 6)) * 0.7
    C0 = se3.exp(rng.normal(size=6))

    def call(t):
        if model.floating_base:
            C = integrate_pose(C0, lambda s: poly_jet(Vc, s, 1)[0], t)
            return liedyn.closed_form_jets(model, C, poly_jet(Vc, t, r + 2), poly_jet(qc, t, r + 3), r)
        return liedyn.closed_form_jets(model, C0, None, poly_jet(qc, t, r + 3), r)

    mid, plus, minus = call(0.0), call(H), call(-H)
    for field in ("mass", "coriolis", "gravity"):
        for i in range(r):
            fd = (getattr(plus, field)[i] - getattr(minus, field)[i]) / (2 * H)
            ref = getattr(mid, field)[i + 1]
            assert_close(fd, ref, rtol=0, atol=FD_TOL * (1.0 + np.max(np.abs(ref))),
                         what=f"{name} {field} order {i + 1}")


# The r-th derivative of the closed form and H-GRNE-FBS both sum O(2^r · N)
# products of O(1) jets, associated differently; with r ≤ 3 and N ≤ 9 each
# output carries a few hundred roundings of ~eps relative to its largest term,
# and terms exceed the result by ≲ 10× through cancellation, so agreement is
# ~1e-15 relative to 1 + |τ̄| (measured ≤ 1.3e-15); 1e-13 bounds it.
ID_TOL = 1e-13


@pytest.mark.parametrize("k", range(len(MODELS)), ids=IDS)
def test_closed_form_equals_inverse_dynamics_orders_0_to_3(k):
    name, model = MODELS[k]
    rng = np.random.default_rng(60 + k)
    r = 3
    for applied in (False, True):
        C0, Vb, q = _random_jets(model, rng, r)
        W = rng.normal(size=(r + 1, model.n_bodies, 6)) if applied else None
        J = liedyn.closed_form_jets(model, C0, Vb, q, r, applied=W)
        tau_cf = liedyn.closed_form_inverse_dynamics(J)
        tau_id = _tau_bar(model, liedyn.inverse_dynamics(model, C0, Vb, q, r, applied=W))
        for s in range(r + 1):
            err = rel_err(tau_cf[s], tau_id[s])
            assert err <= ID_TOL, f"{name} order {s} applied={applied}: rel. error {err:.2e}"


@pytest.mark.parametrize("k", [0, 2, 3], ids=["aerial-floating", "tree-floating", "tree-fixed"])
def test_order_0_matrices_give_inverse_dynamics(k):
    """``M ν̇ + C ν + B ν + g`` from the order-0 functions equals RNEA."""
    name, model = MODELS[k]
    rng = np.random.default_rng(70 + k)
    C0, Vb, q = _random_jets(model, rng, 0)
    V0 = None if Vb is None else Vb[:1]
    nu = np.concatenate([Vb[0], q[1]]) if model.floating_base else q[1]
    nud = np.concatenate([Vb[1], q[2]]) if model.floating_base else q[2]
    lhs = (liedyn.mass_matrix(model, C0, q[0]) @ nud
           + (liedyn.coriolis_matrix(model, C0, V0, q[:2]) + liedyn.damping_matrix(model)) @ nu
           + liedyn.gravity_vector(model, C0, q[0]))
    rhs = _tau_bar(model, liedyn.inverse_dynamics(model, C0, Vb, q, 0))[0]
    assert rel_err(lhs, rhs) <= ID_TOL, name


def _potential(model, C0, q):
    """``U = −Σ_j m_j g⃗ · c_j`` from the body poses."""
    C = liedyn.forward_kinematics(model, C0, None if not model.floating_base else np.zeros((1, 6)),
                                  np.stack([q, np.zeros_like(q)]), 0).body_pose
    c = np.einsum("jab,jb->ja", C[:, :3, :3], model.body_com) + C[:, :3, 3]
    return -float(np.sum(model.body_mass * (c @ model.gravity)))


# Central difference of U (|U| ≲ 200 J here) with step 1e-5: truncation
# h²/6 · |U'''| ~ 1e-10 |U'''|, round-off eps · |U| / h ≲ 2e-9 absolute, i.e.
# ~1e-10 relative to 1 + |g| (measured ≤ 6e-11); tolerance 1e-9 relative.
H_U = 1e-5


@pytest.mark.parametrize("k", range(len(MODELS)), ids=IDS)
def test_gravity_is_the_potential_energy_gradient(k):
    """``g_j = ∂U/∂q_j``; for the base ``g_0 · X = d/dε U(exp(εX) C₀)``
    (right-trivialised derivative, spatial twists)."""
    name, model = MODELS[k]
    rng = np.random.default_rng(80 + k)
    C0 = se3.exp(rng.normal(size=6))
    q = rng.normal(size=model.n_joints)
    g = liedyn.gravity_vector(model, C0, q)
    fd = []
    if model.floating_base:
        for X in np.eye(6):
            fd.append((_potential(model, se3.exp(H_U * X) @ C0, q)
                       - _potential(model, se3.exp(-H_U * X) @ C0, q)) / (2 * H_U))
    for i in range(model.n_joints):
        e = np.zeros(model.n_joints)
        e[i] = H_U
        fd.append((_potential(model, C0, q + e) - _potential(model, C0, q - e)) / (2 * H_U))
    assert_close(g, np.array(fd), rtol=0, atol=1e-9 * (1.0 + np.max(np.abs(g))), what=name)


def test_acceleration_argument_enters_through_M():
    """Replacing ``ν̇`` by ``ν̇ + δ`` changes ``τ̄^(0)`` by ``M δ`` exactly."""
    model = MODELS[2][1]
    rng = np.random.default_rng(90)
    C0, Vb, q = _random_jets(model, rng, 0)
    J = liedyn.closed_form_jets(model, C0, Vb, q, 0)
    delta = rng.normal(size=(1, model.nv))
    diff = (liedyn.closed_form_inverse_dynamics(J, J.velocity[1:] + delta)
            - liedyn.closed_form_inverse_dynamics(J))
    assert_close(diff[0], J.mass[0] @ delta[0], rtol=0,
                 atol=ROUNDOFF * (1.0 + np.max(np.abs(J.mass[0] @ delta[0]))))


def _small_tree(armature, damping):
    """Base with a revolute and a prismatic joint on it and a revolute joint on
    the first child; joint parameters given explicitly."""
    rng = np.random.default_rng(92)
    b = liedyn.ModelBuilder()
    b.add_body("base", None, None, se3.exp(rng.normal(size=6)), random_inertia(rng))
    joints = [liedyn.Revolute(rng.normal(size=3), rng.normal(size=3), armature=armature[0],
                              damping=damping[0]),
              liedyn.Prismatic(rng.normal(size=3), armature=armature[1], damping=damping[1]),
              liedyn.Revolute(rng.normal(size=3), rng.normal(size=3), armature=armature[2],
                              damping=damping[2])]
    for j, (parent, joint) in enumerate(zip((0, 0, 1), joints), start=1):
        b.add_body(f"b{j}", parent, joint, se3.exp(rng.normal(size=6)), random_inertia(rng))
    return b.build()


def test_armature_and_damping_enter_as_diagonal_terms():
    """Armature adds to M's joint diagonal, damping is diag(0₆, b)."""
    arm, damp = np.array([0.3, 0.2, 0.1]), np.array([0.5, 0.4, 0.7])
    model, bare = _small_tree(arm, damp), _small_tree(np.zeros(3), np.zeros(3))
    rng = np.random.default_rng(91)
    C0, q = se3.exp(rng.normal(size=6)), rng.normal(size=3)
    dM = liedyn.mass_matrix(model, C0, q) - liedyn.mass_matrix(bare, C0, q)
    assert_close(dM, np.diag(np.r_[np.zeros(6), arm]), rtol=0,
                 atol=ROUNDOFF * np.max(np.abs(liedyn.mass_matrix(bare, C0, q))))
    assert np.array_equal(liedyn.damping_matrix(model), np.diag(np.r_[np.zeros(6), damp]))
    assert not np.any(liedyn.damping_matrix(bare))


def test_bad_inputs_raise_clear_errors():
    floating, fixed = MODELS[2][1], MODELS[3][1]
    n = floating.n_joints
    C0 = np.eye(4)
    with pytest.raises(ValueError, match=r"^q:"):
        liedyn.mass_matrix(floating, C0, np.zeros(n + 1))
    with pytest.raises(ValueError, match=r"^q:"):
        liedyn.gravity_vector(floating, C0, np.full(n, np.nan))
    with pytest.raises(ValueError, match=r"^base_pose:"):
        liedyn.mass_matrix(floating, 2.0 * np.eye(4), np.zeros(n))
    with pytest.raises(ValueError, match=r"^base_twist:"):
        liedyn.coriolis_matrix(floating, C0, None, np.zeros((2, n)))
    with pytest.raises(ValueError, match=r"^base_twist:"):
        liedyn.coriolis_matrix(floating, C0, np.zeros(6), np.zeros((2, n)))     # a (1, 6) jet
    with pytest.raises(ValueError, match=r"^base_twist:"):
        liedyn.coriolis_matrix(fixed, C0, np.ones((1, 6)), np.zeros((2, n)))
    with pytest.raises(ValueError, match=r"^q:"):
        liedyn.coriolis_matrix(floating, C0, np.zeros((1, 6)), np.zeros((2, n - 1)))
    with pytest.raises(ValueError, match=r"^q:"):
        liedyn.coriolis_matrix(floating, C0, np.zeros((1, 6)), np.zeros((1, n)))   # [q; q̇]
    with pytest.raises(ValueError, match=r"^order:"):
        liedyn.closed_form_jets(floating, C0, np.zeros((2, 6)), np.zeros((3, n)), -1)
    with pytest.raises(TypeError, match=r"^order:"):
        liedyn.closed_form_jets(floating, C0, np.zeros((2, 6)), np.zeros((3, n)), 1.0)
    with pytest.raises(ValueError, match=r"^q:"):
        liedyn.closed_form_jets(floating, C0, np.zeros((3, 6)), np.zeros((3, n)), 1)
    with pytest.raises(ValueError, match=r"^applied:"):
        liedyn.closed_form_jets(floating, C0, np.zeros((2, 6)), np.zeros((3, n)), 0,
                                applied=np.zeros((1, floating.n_bodies - 1, 6)))
    with pytest.raises(ValueError, match=r"^applied:"):
        liedyn.closed_form_jets(floating, C0, np.zeros((2, 6)), np.zeros((3, n)), 0,
                                applied=np.zeros((1, floating.n_bodies, 3)))
    with pytest.raises(TypeError, match=r"^jets:"):
        liedyn.closed_form_inverse_dynamics(np.zeros((1, 6)))
    J = liedyn.closed_form_jets(floating, C0, np.zeros((2, 6)), np.zeros((3, n)), 0)
    with pytest.raises(ValueError, match=r"^acceleration:"):
        liedyn.closed_form_inverse_dynamics(J, np.zeros((2, floating.nv)))
    # no model without bodies, and no model but a built one
    with pytest.raises(ValueError, match=r"^model:"):
        liedyn.ModelBuilder().build()
    for not_a_model in (None, "model", liedyn.ModelBuilder()):
        with pytest.raises(TypeError, match=r"^model:"):
            liedyn.mass_matrix(not_a_model, C0, np.zeros(0))


def test_fixed_base_takes_none_or_a_zero_twist():
    """Every closed-form entry point takes ``None`` or an all-zero twist jet
    for a fixed base, with equal results."""
    model = MODELS[3][1]
    rng = np.random.default_rng(93)
    C0 = se3.exp(rng.normal(size=6))
    q = rng.normal(size=(3, model.n_joints))
    a = liedyn.closed_form_jets(model, C0, None, q, 0)
    b = liedyn.closed_form_jets(model, C0, np.zeros((2, 6)), q, 0)
    for f in ("mass", "coriolis", "gravity", "applied_force"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert np.array_equal(liedyn.coriolis_matrix(model, C0, None, q[:2]),
                          liedyn.coriolis_matrix(model, C0, np.zeros((1, 6)), q[:2]))


# ------------------------------------------------------------ workspaces --

def _order_0_calls(model, C0, V, q):
    """The three order-0 functions at one state, as ``{name: f(workspace)}``."""
    V0 = None if V is None else V[:1]
    return {"mass": lambda ws: liedyn.mass_matrix(model, C0, q[0], workspace=ws),
            "coriolis": lambda ws: liedyn.coriolis_matrix(model, C0, V0, q[:2], workspace=ws),
            "gravity": lambda ws: liedyn.gravity_vector(model, C0, q[0], workspace=ws)}


@pytest.mark.parametrize("k", range(len(MODELS)), ids=IDS)
def test_a_later_call_on_the_same_workspace_changes_no_earlier_result(k):
    """Results are arrays of their own: a second call through the same
    workspace leaves the first call's results as they were, and each equals
    the result computed without a workspace."""
    name, model = MODELS[k]
    rng = np.random.default_rng(100 + k)
    r = 2
    ws0, wsr = liedyn.Workspace(model, 0), liedyn.Workspace(model, r)
    states = [_random_jets(model, rng, r) for _ in range(2)]
    W = rng.normal(size=(r + 1, model.n_bodies, 6))
    first = {}
    for i, (C0, V, q) in enumerate(states):
        got = {f: call(ws0) for f, call in _order_0_calls(model, C0, V, q).items()}
        J = liedyn.closed_form_jets(model, C0, V, q, r, applied=W, workspace=wsr)
        got.update({f"jets {f}": getattr(J, f) for f in
                    ("mass", "coriolis", "gravity", "damping", "applied_force", "velocity")})
        fresh = {f: call(None) for f, call in _order_0_calls(model, C0, V, q).items()}
        Jf = liedyn.closed_form_jets(model, C0, V, q, r, applied=W)
        fresh.update({f"jets {f}": getattr(Jf, f) for f in
                      ("mass", "coriolis", "gravity", "damping", "applied_force", "velocity")})
        for f in got:
            assert np.array_equal(got[f], fresh[f]), f"{name} {f}: workspace vs none"
        if i == 0:
            first = {f: (a, a.copy()) for f, a in got.items()}
        else:
            for f, (kept, copy) in first.items():
                assert np.array_equal(kept, copy), f"{name} {f}: changed by a later call"
                assert not np.shares_memory(kept, got[f]), f"{name} {f}: aliases a later result"


def test_a_workspace_of_another_model_or_order_is_refused():
    name, model = MODELS[2]
    other = MODELS[0][1]
    rng = np.random.default_rng(110)
    C0, V, q = _random_jets(model, rng, 1)
    calls = _order_0_calls(model, C0, V, q)
    for ws in (liedyn.Workspace(model, 1), liedyn.Workspace(other, 0)):
        for f, call in calls.items():
            with pytest.raises(ValueError, match=r"^workspace: built for Model"):
                call(ws)
    for ws in (liedyn.Workspace(model, 0), liedyn.Workspace(other, 1)):
        with pytest.raises(ValueError, match=r"^workspace: built for Model"):
            liedyn.closed_form_jets(model, C0, V, q, 1, workspace=ws)
    with pytest.raises(ValueError, match=r"^workspace: expected a single-call workspace"):
        liedyn.mass_matrix(model, C0, q[0], workspace=liedyn.Workspace(model, 0, samples=2))
    for f, call in calls.items():
        with pytest.raises(TypeError, match=r"^workspace: expected a liedyn.Workspace"):
            call(object())


def test_a_workspace_in_use_is_refused_by_the_closed_form():
    name, model = MODELS[2]
    C0, V, q = _random_jets(model, np.random.default_rng(111), 0)
    ws = liedyn.Workspace(model, 0)
    ws._acquire()                              # as a call in another thread would
    try:
        for f, call in _order_0_calls(model, C0, V, q).items():
            with pytest.raises(RuntimeError, match=r"^workspace: in use"):
                call(ws)
        with pytest.raises(RuntimeError, match=r"^workspace: in use"):
            liedyn.closed_form_jets(model, C0, V, q, 0, workspace=ws)
    finally:
        ws._release()


def _far(distance, rng):
    C0 = se3.exp(np.concatenate([rng.normal(size=3), np.zeros(3)]))
    C0[:3, 3] = (0.6 * distance, -0.48 * distance, 0.64 * distance)
    return C0


@pytest.mark.parametrize("distance", (0.0, 30.0, 1e3))
@pytest.mark.parametrize("k", [0, 2], ids=["aerial-floating", "tree-floating"])
def test_world_and_base_references_agree_far_from_the_origin(k, distance):
    """About the world origin the base rows and columns are the congruence
    ``Tᵀ A T``, ``T = diag(Ad_{T(−p₀)}, I)``, of those about the base origin
    (SPEC §1), with twists and applied wrenches taken about each point; the
    mass matrix stays exactly symmetric."""
    name, model = MODELS[k]
    rng = np.random.default_rng(120 + k)
    r = 2
    C0 = _far(distance, rng)
    p = C0[:3, 3]
    Vw = rng.normal(size=(r + 2, 6))
    q = rng.normal(size=(r + 3, model.n_joints))
    Ww = rng.normal(size=(r + 1, model.n_bodies, 6))
    Vb, Wb = Vw.copy(), Ww.copy()
    Vb[:, 3:] += np.cross(Vw[:, :3], p)                        # v + ω × p
    Wb[..., :3] -= np.cross(p, Ww[..., 3:])                    # m − p × f
    T = np.eye(model.nv)
    T[3:6, :3] = -se3.hat(p)                                   # Ad_{T(−p)} = [[I, 0], [−p̂, I]]
    ws = liedyn.Workspace(model, 0)
    pairs = []
    for kw in ({}, {"workspace": ws}):
        Mw = liedyn.mass_matrix(model, C0, q[0], **kw)
        Mb = liedyn.mass_matrix(model, C0, q[0], reference="base", **kw)
        Cw = liedyn.coriolis_matrix(model, C0, Vw[:1], q[:2], **kw)
        Cb = liedyn.coriolis_matrix(model, C0, Vb[:1], q[:2], reference="base", **kw)
        gw = liedyn.gravity_vector(model, C0, q[0], **kw)
        gb = liedyn.gravity_vector(model, C0, q[0], reference="base", **kw)
        pairs += [(Mw, T.T @ Mb @ T, "M"), (Cw, T.T @ Cb @ T, "C"), (gw, T.T @ gb, "g")]
        assert np.array_equal(Mw, Mw.T) and np.array_equal(Mb, Mb.T), "M exactly symmetric"
    Jw = liedyn.closed_form_jets(model, C0, Vw, q, r, applied=Ww)
    Jb = liedyn.closed_form_jets(model, C0, Vb, q, r, applied=Wb, reference="base")
    assert np.array_equal(Jw.mass, np.swapaxes(Jw.mass, 1, 2)), "M^(k) exactly symmetric"
    for s in range(r + 1):
        pairs += [(Jw.mass[s], T.T @ Jb.mass[s] @ T, f"M^({s})"),
                  (Jw.coriolis[s], T.T @ Jb.coriolis[s] @ T, f"C^({s})"),
                  (Jw.gravity[s], T.T @ Jb.gravity[s], f"g^({s})"),
                  (Jw.applied_force[s], T.T @ Jb.applied_force[s], f"Q^({s})")]
    for got, ref, what in pairs:
        assert_close(got, ref, rtol=0, atol=ROUNDOFF * np.max(np.abs(ref)),
                     what=f"{name} at {distance} m: {what}")

