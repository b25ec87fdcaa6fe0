"""liedyn.trajectory: pose jets ↔ twist jets, other libraries' twist
conventions, sampled trajectories, Taylor shifts.

References: closed-form curves (a helix ``C₀ exp(t [ξ])``, whose spatial
twist is constant, and a polynomial pose ``exp(t a + t² b)`` whose jets
mpmath computes in 30 digits from Rodrigues' formula), central differences
in time of each helper's own input curve, Pinocchio's ``SE3.act`` at order
0 and the Pinocchio bridge's free-flyer velocity jets, and inverse dynamics
with analytic jets.
"""

import re
from itertools import product
from math import comb, factorial

import mpmath
import numpy as np
import pinocchio as pin
import pytest

import liedyn
from liedyn import se3
from liedyn import trajectory as tr
from tests.helpers import rel_err

REPS = [("matrix", None), ("quaternion", "wxyz"), ("quaternion", "xyzw"), ("rotvec", None)]
REFERENCES = ("world", "base")

# Round trips and closed forms: a few hundred float64 products of numbers up
# to ~100 (fourth derivatives): ~1e-14 relative to 1 + max|x|.
TOL = 1e-12


def _qmul(a, b):
    """Hamilton product, scalar first (the test's own)."""
    return np.array([a[0] * b[0] - a[1:] @ b[1:],
                     *(a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:]))])


def _order(q, order):
    return q if order == "wxyz" else q[..., [1, 2, 3, 0]]


def about_base_now(omega, p_dot):
    """The twist jet about the point held fixed where the base origin is now
    (SPEC §1, ``reference="base"``) from the jets ``ω^(0..K)`` and
    ``ṗ^(0..K)``: ``v(s) = ṗ(s) − ω(s) × (p(s) − p(t))``, differentiated at
    ``s = t`` (the term with ``p(s) − p(t)`` undifferentiated vanishes):
    ``v^(k) = ṗ^(k) − Σ_{a<k} C(k, a) ω^(a) × ṗ^(k−1−a)``."""
    v = np.array(p_dot, float)
    for k in range(len(v)):
        for a in range(k):
            v[k] -= comb(k, a) * np.cross(omega[a], p_dot[k - 1 - a])
    return np.hstack([omega, v])


# ------------------------------------------------------------- the helix --

W_B, V_B, ANGLE = np.array([0.3, -0.5, 0.4]), np.array([0.2, 0.7, -0.4]), 0.8
P0 = np.array([1.5, -2.0, 0.7])
XI = np.concatenate([W_B, V_B])


def _helix_C0():
    C0 = np.eye(4)
    C0[:3, :3] = se3.exp_so3(ANGLE * W_B)
    C0[:3, 3] = P0
    return C0


def helix(t, rows):
    """Jets of ``C(t) = C₀ exp(t [ξ])`` with ``R₀ = exp(c ŵ_b)``: ``C^(k) = C(t) [ξ]^k``;
    the rotation vector ``(c + t) w_b``; the quaternion ``q(t) ⊗ (0, w_b/2)^k``."""
    C = _helix_C0() @ se3.exp(t * XI)
    X = se3.hat(XI)
    Ck = np.array([C @ np.linalg.matrix_power(X, k) for k in range(rows)])
    phi = np.zeros((rows, 3))
    phi[0] = (ANGLE + t) * W_B
    if rows > 1:
        phi[1] = W_B
    theta = np.linalg.norm(phi[0])
    quat = np.zeros((rows, 4))
    quat[0] = np.concatenate([[np.cos(theta / 2)], np.sin(theta / 2) * phi[0] / theta])
    u = np.concatenate([[0.0], W_B / 2])
    for k in range(1, rows):
        quat[k] = _qmul(quat[k - 1], u)
    return {"C": C, "p": Ck[:, :3, 3], "matrix": Ck[:, :3, :3], "rotvec": phi, "wxyz": quat}


def _orientation(jets, rep, order):
    return jets["wxyz"] if rep == "quaternion" and order == "wxyz" else \
        _order(jets["wxyz"], "xyzw") if rep == "quaternion" else jets[rep]


@pytest.mark.parametrize("rep,order", REPS)
def test_helix_has_a_constant_spatial_twist(rep, order):
    t, K = 0.6, 5
    h = helix(t, K + 1)
    C, V = tr.from_pose_jet(h["p"], _orientation(h, rep, order), representation=rep, quaternion_order=order)
    assert rel_err(C, h["C"]) < TOL
    expected = np.zeros((K, 6))
    expected[0] = se3.Ad(_helix_C0()) @ XI
    assert rel_err(V, expected) < TOL
    _, Vb = tr.from_pose_jet(h["p"], _orientation(h, rep, order), representation=rep,
                             quaternion_order=order, reference="base")
    # about a point held fixed, a constant spatial twist stays constant
    expected[0, 3:] += np.cross(expected[0, :3], h["C"][:3, 3])
    assert rel_err(Vb, expected) < TOL
    omega = np.zeros((K, 3))
    omega[0] = expected[0, :3]
    assert rel_err(Vb, about_base_now(omega, h["p"][1:])) < TOL
    p, o = tr.to_pose_jet(C, V, representation=rep, quaternion_order=order)
    assert rel_err(p, h["p"]) < TOL and rel_err(o, _orientation(h, rep, order)) < TOL


def test_helix_in_every_convention():
    t, K = -0.4, 5
    h = helix(t, K + 2)
    V = np.zeros((K + 1, 6))
    V[0] = se3.Ad(_helix_C0()) @ XI
    zeros = np.zeros((K, 3))
    w_b = np.vstack([W_B, zeros])
    omega = np.vstack([h["C"][:3, :3] @ W_B, zeros])
    expected = {"spatial": V, "body": np.hstack([w_b, np.vstack([V_B, zeros])]),
                "pinocchio": np.hstack([np.vstack([V_B, zeros]), w_b]),
                "mujoco": np.hstack([h["p"][1:], w_b]), "drake": np.hstack([omega, h["p"][1:]])}
    for convention, X in expected.items():
        assert rel_err(tr.twist_from_spatial(h["C"], V, convention), X) < TOL, convention
        assert rel_err(tr.twist_to_spatial(h["C"], X, convention), V) < TOL, convention


# --------------------------------------------------- the polynomial pose --

A_ROT, B_ROT = np.array([0.9, -0.4, 0.6]), np.array([-0.5, 0.8, 0.3])
P_COEF = np.array([[0.4, -1.0, 2.0], [0.5, 1.0, -0.3], [-0.6, 0.2, 0.4], [0.3, -0.2, 0.1]])


def poly_position(t, rows):
    """``p(t) = Σ_k P_COEF[k] t^k / k!``."""
    out = np.zeros((rows, 3))
    for d in range(rows):
        for k in range(d, len(P_COEF)):
            out[d] += P_COEF[k] * t ** (k - d) / factorial(k - d)
    return out


def poly_rotvec(t, rows):
    """``φ(t) = t a + t² b`` and its jet."""
    out = np.zeros((rows, 3))
    for k, row in enumerate([t * A_ROT + t * t * B_ROT, A_ROT + 2 * t * B_ROT, 2 * B_ROT][:rows]):
        out[k] = row
    return out


def mp_rotation_jets(t, rows):
    """Jets of ``R(t) = exp(φ̂(t))`` and its unit quaternion (scalar first)
    from Rodrigues' formula in 30 digits, differentiated by mpmath."""
    with mpmath.workdps(30):
        def phi(s):
            return [a * s + b * s * s for a, b in zip(map(mpmath.mpf, A_ROT), map(mpmath.mpf, B_ROT))]

        def rodrigues(s, i, j):
            x = phi(s)
            th = mpmath.sqrt(sum(c * c for c in x))
            X = mpmath.matrix([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])
            R = mpmath.eye(3) + mpmath.sin(th) / th * X + (1 - mpmath.cos(th)) / th ** 2 * X * X
            return R[i, j]

        def quat(s, i):
            x = phi(s)
            th = mpmath.sqrt(sum(c * c for c in x))
            return mpmath.cos(th / 2) if i == 0 else mpmath.sin(th / 2) / th * x[i - 1]

        T = mpmath.mpf(t)
        R = np.zeros((rows, 3, 3))
        for i, j in product(range(3), range(3)):
            R[:, i, j] = [float(c * factorial(k)) for k, c in
                          enumerate(mpmath.taylor(lambda s: rodrigues(s, i, j), T, rows - 1))]
        q = np.zeros((rows, 4))
        for i in range(4):
            q[:, i] = [float(c * factorial(k)) for k, c in
                       enumerate(mpmath.taylor(lambda s: quat(s, i), T, rows - 1))]
    return R, q


@pytest.fixture(scope="module")
def poly_case():
    t, rows = 0.7, 6
    R, q = mp_rotation_jets(t, rows)
    return t, rows, poly_position(t, rows), R, q, poly_rotvec(t, rows)


def test_polynomial_pose_against_mpmath(poly_case):
    t, rows, p, R, q, phi = poly_case
    C, V = tr.from_pose_jet(p, R)
    assert rel_err(tr.to_pose_jet(C, V)[1], R) < TOL
    for rep, order in REPS[1:]:
        o = _order(q, order) if rep == "quaternion" else phi
        C1, V1 = tr.from_pose_jet(p, o, representation=rep, quaternion_order=order)
        assert rel_err(C1, C) < TOL and rel_err(V1, V) < TOL, (rep, order)
        assert rel_err(tr.to_pose_jet(C, V, representation=rep, quaternion_order=order)[1], o) < TOL
    # ω from its definition ω̂ = Ṙ Rᵀ at order 0, and v = ṗ − ω × p
    omega = se3.vee(R[1] @ R[0].T)
    assert rel_err(V[0], np.concatenate([omega, p[1] - np.cross(omega, p[0])])) < TOL


def _fd(f, t, h):
    return (f(t + h) - f(t - h)) / (2 * h)


def _poly_pose(t):
    C = np.eye(4)
    C[:3, :3] = se3.exp_so3(poly_rotvec(t, 1)[0])
    C[:3, 3] = poly_position(t, 1)[0]
    return C


@pytest.mark.parametrize("reference", REFERENCES)
def test_jets_against_central_differences_of_the_input_curve(reference):
    """Row 0 against ``Ċ C⁻¹`` by central differences of the pose, row k+1
    against central differences of row k; the truncation error h²/6 |x'''|
    is below 1e-7 at h = 1e-4, roundoff eps |x| / h near 1e-10."""
    t, K, h = 0.7, 5, 1e-4

    def twist(s):
        return tr.from_pose_jet(poly_position(s, K + 1), poly_rotvec(s, K + 1),
                                representation="rotvec", reference=reference)[1]

    C, V = _poly_pose(t), twist(t)
    dC = _fd(_poly_pose, t, h)
    omega = se3.vee(dC[:3, :3] @ C[:3, :3].T)
    v = dC[:3, 3] - (np.cross(omega, C[:3, 3]) if reference == "world" else 0.0)
    assert rel_err(V[0], np.concatenate([omega, v])) < 1e-7
    # row k+1 against central differences of row k, about a point held fixed:
    # the world origin, or where the base origin is at t (SPEC §1)
    o = C[:3, 3] if reference == "base" else np.zeros(3)

    def held(s):
        W = tr.from_pose_jet(poly_position(s, K + 1), poly_rotvec(s, K + 1),
                             representation="rotvec")[1]
        return np.hstack([W[:, :3], W[:, 3:] + np.cross(W[:, :3], o)])
    assert rel_err(V, held(t)) < TOL
    assert rel_err(V[1:], _fd(held, t, h)[:-1]) < 1e-6
    for convention in tr.CONVENTIONS:
        def other(s):
            return tr.twist_from_spatial(_poly_pose(s), twist(s), convention, reference=reference)
        assert rel_err(other(t)[1:], _fd(other, t, h)[:-1]) < 1e-6, convention
    # row 0 of the body twist: C⁻¹ Ċ
    body = tr.twist_from_spatial(C, V, "body", reference=reference)[0]
    assert rel_err(body, se3.vee(np.linalg.inv(C) @ dC)) < 1e-7
    # the pose jets back: row k+1 against central differences of row k
    for rep, order in REPS:
        def pose(s):
            p, o = tr.to_pose_jet(_poly_pose(s), twist(s), representation=rep, quaternion_order=order,
                                  reference=reference)
            return np.concatenate([p.reshape(K + 1, -1), o.reshape(K + 1, -1)], axis=1)
        assert rel_err(pose(t)[1:], _fd(pose, t, h)[:-1]) < 1e-6, (rep, order)


def test_rotation_vectors_beyond_pi():
    """``φ(t) = (c + t) w`` with ``|c w| = 5 > π``: ``R^(k) = ŵ^k exp((c + t) ŵ)``."""
    w = np.array([0.6, -0.3, 0.7])
    c = 5.0 / np.linalg.norm(w)
    K = 5
    phi = np.zeros((K + 1, 3))
    phi[0], phi[1] = c * w, w
    R = np.array([np.linalg.matrix_power(se3.hat(w), k) @ se3.exp_so3(c * w) for k in range(K + 1)])
    p = poly_position(0.2, K + 1)
    C, V = tr.from_pose_jet(p, phi, representation="rotvec")
    C1, V1 = tr.from_pose_jet(p, R)
    assert rel_err(C, C1) < TOL and rel_err(V, V1) < TOL
    expected = np.zeros((K, 6))
    expected[0, :3] = w
    assert rel_err(tr.from_pose_jet(p, phi, representation="rotvec", reference="base")[1][:, :3],
                   expected[:, :3]) < TOL
    principal = tr.to_pose_jet(C, V, representation="rotvec")[1]
    assert np.linalg.norm(principal[0]) <= np.pi
    assert rel_err(tr.from_pose_jet(p, principal, representation="rotvec")[1], V) < TOL


# ------------------------------------------------------------ round trips --

def _random_motion(seed):
    rng = np.random.default_rng(seed)
    return se3.exp(rng.normal(size=6) * 1.5), rng.normal(size=(5, 6))   # orders 0..4


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_round_trips_between_orientation_representations(seed, reference):
    C0, V = _random_motion(seed)
    jets = {rep + str(order): tr.to_pose_jet(C0, V, representation=rep, quaternion_order=order,
                                             reference=reference) for rep, order in REPS}
    for (ra, oa), (rb, ob) in product(REPS, REPS):
        p, o = jets[ra + str(oa)]
        C1, V1 = tr.from_pose_jet(p, o, representation=ra, quaternion_order=oa, reference=reference)
        assert rel_err(C1, C0) < TOL and rel_err(V1, V) < TOL, ra
        pb, ob_jet = tr.to_pose_jet(C1, V1, representation=rb, quaternion_order=ob, reference=reference)
        assert rel_err(pb, jets[rb + str(ob)][0]) < TOL
        assert rel_err(ob_jet, jets[rb + str(ob)][1]) < TOL, (ra, oa, rb, ob)
    q = jets["quaternionwxyz"][1]
    assert rel_err(tr.from_pose_jet(jets["matrixNone"][0], -q, representation="quaternion",
                                    quaternion_order="wxyz", reference=reference)[1], V) < TOL


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_round_trips_between_twist_conventions(seed, reference):
    C0, V = _random_motion(seed)
    X = {c: tr.twist_from_spatial(C0, V, c, reference=reference) for c in tr.CONVENTIONS}
    for a, b in product(tr.CONVENTIONS, tr.CONVENTIONS):
        V1 = tr.twist_to_spatial(C0, X[a], a, reference=reference)
        assert rel_err(V1, V) < TOL, a
        assert rel_err(tr.twist_from_spatial(C0, V1, b, reference=reference), X[b]) < TOL, (a, b)
    # the two references differ by the constant frame change (ω, v + ω × p₀) at row 0
    Vw = tr.twist_to_spatial(C0, X["drake"], "drake")
    assert rel_err(Vw[0, 3:] + np.cross(Vw[0, :3], C0[:3, 3]),
                   tr.twist_to_spatial(C0, X["drake"], "drake", reference="base")[0, 3:]) < TOL


def test_pinocchio_free_flyer_velocity():
    """Order 0 against Pinocchio's ``SE3.act`` of its body velocity; orders
    0..3 against the Pinocchio bridge's free-flyer velocity jet."""
    from liedyn.interop.pinocchio import to_pinocchio
    C0, V = _random_motion(3)
    rng = np.random.default_rng(4)
    v_pin = rng.normal(size=6)
    M = pin.SE3(C0[:3, :3], C0[:3, 3]).act(pin.Motion(v_pin[:3], v_pin[3:]))
    expected = np.concatenate([M.angular, M.linear])
    assert rel_err(tr.twist_to_spatial(C0, v_pin[None], "pinocchio")[0], expected) < TOL
    b = liedyn.ModelBuilder(floating_base=True)
    b.add_body("base", None, None, np.eye(4), se3.spatial_inertia(1.0, (0, 0, 0), np.eye(3)))
    bridge = to_pinocchio(b.build())
    _, v = bridge.motion_to_pin(C0, V[:4], np.zeros((5, 0)))
    assert rel_err(tr.twist_from_spatial(C0, V[:4], "pinocchio"), v[:, :6]) < TOL


# ------------------------------------------------------------- Taylor --

def test_taylor_shift():
    coeffs = np.random.default_rng(5).normal(size=(5, 2, 3))

    def jet(t):   # x(t) = Σ c_k t^k, degree 4
        return np.array([sum(factorial(k) / factorial(k - d) * coeffs[k] * t ** (k - d)
                             for k in range(d, 5)) for d in range(5)])
    assert rel_err(tr.taylor(jet(0.3), 0.45), jet(0.75)) < TOL
    assert rel_err(tr.taylor(jet(0.3), 0.0), jet(0.3)) == 0.0
    # sin: row k errs by h^(K+1−k)/(K+1−k)! at most
    k = np.arange(6)
    s = np.sin(0.2 + k * np.pi / 2)
    err = np.abs(tr.taylor(s, 0.1) - np.sin(0.3 + k * np.pi / 2))
    assert np.all(err <= 0.1 ** (6 - k) / np.array([factorial(6 - i) for i in k]))


# ---------------------------------------------------- sampled trajectories --

RATE_Z, RATE_Y = 2.0, 1.3


def tumbling(t, rows):
    """``C(t) = (R_z(αt) R_y(βt), p(t))``: a rotation of 8 rad about moving axes
    over [0, 4] s, exact jets ``R^(k) = Σ_a C(k,a) (αẑ)^a R_z (R_y (βŷ)^(k−a))``,
    ``ω = α e_z + β R_z e_y``, and ``p = (cos t, sin 2t, t³/10)``."""
    Z = RATE_Z * se3.hat(np.array([0.0, 0, 1]))
    Rz, Ry = se3.exp_so3(RATE_Z * t * np.array([0.0, 0, 1])), se3.exp_so3(RATE_Y * t * np.array([0.0, 1, 0]))
    omega = np.zeros((rows, 3))
    omega[0] = RATE_Z * np.array([0, 0, 1.0]) + RATE_Y * Rz[:, 1]
    for k in range(1, rows):
        omega[k] = RATE_Y * (np.linalg.matrix_power(Z, k) @ Rz)[:, 1]
    k = np.arange(rows + 1)
    p = np.stack([np.cos(t + k * np.pi / 2), 2.0 ** k * np.sin(2 * t + k * np.pi / 2),
                  [t ** 3 / 10, 3 * t * t / 10, 6 * t / 10, 0.6, *[0.0] * (rows - 3)][:rows + 1]],
                 axis=1)
    return Rz @ Ry, p, omega


def joints(t, rows):
    k = np.arange(rows)[:, None]
    w = np.array([[1.0, 1.7]])
    return w ** k * np.sin(w * t + k * np.pi / 2)


def _sampled(S, **kw):
    t = np.linspace(0.0, 4.0, S)
    poses = np.array([np.block([[tumbling(s, 1)[0], tumbling(s, 1)[1][0][:, None]],
                                [np.zeros((1, 3)), np.ones((1, 1))]]) for s in t])
    return t, poses, np.array([joints(s, 1)[0] for s in t])


def _errors(S, K=2):
    t, poses, q = _sampled(S)
    traj = tr.SampledTrajectory(t, poses, q=q)
    errs = np.zeros((2 * K + 3,))
    for tau in np.linspace(0.5, 3.5, 73):
        C0, V, qj = traj.jets(tau, K, reference="base")
        R, p, omega = tumbling(tau, K + 1)
        errs[0] = max(errs[0], np.abs(C0[:3, :3] - R).max(), np.abs(C0[:3, 3] - p[0]).max())
        for k in range(K + 1):
            errs[1 + k] = max(errs[1 + k], np.abs(V[k] - about_base_now(omega, p[1:])[k]).max())
            errs[2 + K + k] = max(errs[2 + K + k], np.abs(qj[k + 1] - joints(tau, K + 2)[k + 1]).max())
    return errs


def test_sampled_trajectory_converges_at_the_stated_order():
    """Degree 5: C₀ as h⁶, V^(k) as h^(5−k), q^(j) as h^(6−j): halving h
    divides the largest error over [0.5, 3.5] s by 2^order. (Within a few
    samples of the ends the not-a-knot conditions reach these rates only on
    finer grids: 2.6 instead of 3 for q⃛ from 41 to 81 samples, 2.9 from 161
    to 321.)"""
    coarse, fine = _errors(41), _errors(81)
    K = 2
    expected = np.array([6] + [5 - k for k in range(K + 1)] + [5 - k for k in range(K + 1)])
    observed = np.log2(coarse / fine)
    assert np.all(observed > expected - 0.4), (observed, expected)   # at least the promised rate
    assert fine[1] < 1e-5


def test_sampled_quaternions_with_sign_flips_and_whole_turns():
    t, poses, q = _sampled(60)
    quats = np.array([tr.to_pose_jet(C, np.zeros((0, 6)), representation="quaternion",
                                     quaternion_order="wxyz")[1][0] for C in poses])
    quats *= np.where(np.arange(len(t)) % 3 == 0, -1.0, 1.0)[:, None]
    a = tr.SampledTrajectory(t, poses, q=q)
    b = tr.SampledTrajectory(t, positions=poses[:, :3, 3], quaternions=_order(quats, "xyzw"),
                             quaternion_order="xyzw", q=q)
    for tau in (0.0, 1.234, 3.0, 4.0):     # the samples' rotations differ by ~eps, and
        ja, jb = a.jets(tau, 3), b.jets(tau, 3)     # R^(4) amplifies that by ~h⁻⁴ ≈ 5e4
        assert rel_err(ja.base_pose, jb.base_pose) < TOL
        assert rel_err(ja.base_twist, jb.base_twist) < 1e-9 and rel_err(ja.q, jb.q) == 0.0
    assert rel_err(a.jets(t[7], 0).base_pose, poses[7]) < TOL
    assert a.jets(2.0, 1, reference="base").base_twist.shape == (2, 6)


def test_sampled_trajectory_with_uneven_time_stamps():
    """Jittered stamps (spacing 0.5h to 1.5h): the errors stay those of the
    largest spacing, and without joints ``q`` is ``None``."""
    rng = np.random.default_rng(6)
    t = np.linspace(0.0, 4.0, 121)
    t[1:-1] += rng.uniform(-0.25, 0.25, 119) * (t[1] - t[0])
    poses = np.array([np.block([[tumbling(s, 1)[0], tumbling(s, 1)[1][0][:, None]],
                                [np.zeros((1, 3)), np.ones((1, 1))]]) for s in t])
    traj = tr.SampledTrajectory(t, poses)
    for tau in (0.77, 2.5):
        C0, V, q = traj.jets(tau, 1, reference="base")
        R, p, omega = tumbling(tau, 2)
        assert q is None and rel_err(C0[:3, :3], R) < 1e-10
        assert rel_err(V, about_base_now(omega, p[1:3])) < 1e-6


def test_end_to_end_inverse_dynamics_of_the_helix():
    b = liedyn.ModelBuilder(floating_base=True, gravity=(0, 0, -9.81))
    b.add_body("base", None, None, np.eye(4),
               se3.spatial_inertia(2.5, (0.01, 0, 0), np.diag([0.03, 0.04, 0.05])))
    T = np.eye(4)
    T[2, 3] = -0.16
    b.add_body("link1", "base", liedyn.Revolute(axis=(0, 1, 0), point=(0, 0, 0.06)), T,
               se3.spatial_inertia(0.25, (0, 0, -0.05), np.diag([2e-3, 2e-3, 1e-3])))
    model = b.build()
    r = 2
    t = np.linspace(0.0, 2.0, 81)
    traj = tr.SampledTrajectory(t, np.array([helix(s, 1)["C"] for s in t]),
                                q=np.array([joints(s, 1)[0, :1] for s in t]), degree=7)
    V = np.zeros((r + 2, 6))
    V[0] = se3.Ad(_helix_C0()) @ XI
    for tau in (0.3, 1.1):
        C0, Vs, qs = traj.jets(tau, r + 1)
        exact = liedyn.inverse_dynamics(model, helix(tau, 1)["C"], V, joints(tau, r + 3)[:, :1], r)
        sampled = liedyn.inverse_dynamics(model, C0, Vs, qs, r)
        # degree 7, h = 25 ms: V₀^(3) and q^(4) err as h⁴ ≈ 4e-7 times their scale;
        # roundoff, eps / h⁴ ≈ 6e-10, stays below
        assert rel_err(sampled.base_wrench, exact.base_wrench) < 1e-7
        assert rel_err(sampled.tau, exact.tau) < 1e-7
        h = helix(tau, r + 3)
        C1, V1 = tr.from_pose_jet(h["p"], h["matrix"])
        direct = liedyn.inverse_dynamics(model, C1, V1, joints(tau, r + 3)[:, :1], r)
        assert rel_err(direct.base_wrench, exact.base_wrench) < TOL
        assert rel_err(direct.tau, exact.tau) < TOL


# ------------------------------------------------------------- bad input --

def _bad_cases():
    C0, V = _random_motion(0)
    p, R = tr.to_pose_jet(C0, V)
    _, quat = tr.to_pose_jet(C0, V, representation="quaternion", quaternion_order="wxyz")
    t, poses, q = _sampled(12)
    return [
        (ValueError, "quaternion_order", lambda: tr.from_pose_jet(p, quat, representation="quaternion")),
        (ValueError, "quaternion_order", lambda: tr.from_pose_jet(p, quat, representation="quaternion",
                                                        quaternion_order="xyz")),
        (ValueError, "quaternion_order", lambda: tr.from_pose_jet(p, R, quaternion_order="wxyz")),
        (ValueError, "orientation[0]", lambda: tr.from_pose_jet(
            p, 1.01 * quat, representation="quaternion", quaternion_order="wxyz")),
        (ValueError, "orientation[0]", lambda: tr.from_pose_jet(p, 1.01 * R)),
        (ValueError, "orientation", lambda: tr.from_pose_jet(p, quat)),
        (ValueError, "orientation", lambda: tr.from_pose_jet(p, R[:3])),
        (ValueError, "position", lambda: tr.from_pose_jet(p[:, :2], R)),
        (ValueError, "representation", lambda: tr.from_pose_jet(p, R, representation="euler")),
        (ValueError, "reference", lambda: tr.from_pose_jet(p, R, reference="local")),
        (TypeError, "position", lambda: tr.from_pose_jet(p.astype(complex), R)),
        (ValueError, "position", lambda: tr.from_pose_jet(np.full_like(p, np.nan), R)),
        (ValueError, "C0", lambda: tr.to_pose_jet(2 * C0, V)),
        (ValueError, "V", lambda: tr.to_pose_jet(C0, V[:, :5])),
        (ValueError, "convention", lambda: tr.twist_to_spatial(C0, V, "ros")),
        (ValueError, "twist", lambda: tr.twist_to_spatial(C0, V[0], "body")),
        (ValueError, "V", lambda: tr.twist_from_spatial(C0, V.T, "body")),
        (TypeError, "jet", lambda: tr.taylor("abc", 0.1)),
        (TypeError, "h", lambda: tr.taylor(V, True)),
        (ValueError, "t", lambda: tr.SampledTrajectory(t[::-1], poses)),
        (ValueError, "t", lambda: tr.SampledTrajectory(np.r_[t[:5], t[4:-1]], poses)),
        (ValueError, "t", lambda: tr.SampledTrajectory(t[:4], poses[:4])),
        (ValueError, "poses", lambda: tr.SampledTrajectory(t, poses[:-1])),
        (ValueError, "poses[3]", lambda: tr.SampledTrajectory(
            t, np.concatenate([poses[:3], 2 * poses[3:]]))),
        (ValueError, "q", lambda: tr.SampledTrajectory(t, poses, q=q[:-1])),
        (ValueError, "quaternion_order", lambda: tr.SampledTrajectory(
            t, positions=poses[:, :3, 3], quaternions=np.tile([1.0, 0, 0, 0], (12, 1)))),
        (ValueError, "quaternions[0]", lambda: tr.SampledTrajectory(
            t, positions=poses[:, :3, 3], quaternions=np.tile([1.1, 0, 0, 0], (12, 1)),
            quaternion_order="wxyz")),
        (ValueError, "degree", lambda: tr.SampledTrajectory(t, poses, degree=0)),
        (ValueError, "t", lambda: tr.SampledTrajectory(t, poses).jets(4.5, 1)),
        (ValueError, "K", lambda: tr.SampledTrajectory(t, poses).jets(1.0, 4)),
        (TypeError, "K", lambda: tr.SampledTrajectory(t, poses).jets(1.0, 1.5)),
    ]


@pytest.mark.parametrize("case", range(31))
def test_bad_input_names_the_argument(case):
    cases = _bad_cases()
    assert len(cases) == 31
    error, name, call = cases[case]
    with pytest.raises(error, match="^" + re.escape(name) + ":"):
        call()


def test_without_scipy_the_error_names_the_extra(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "scipy.interpolate", None)
    t, poses, _ = _sampled(12)
    with pytest.raises(ImportError, match=re.escape("liedyn[trajectory]")):
        tr.SampledTrajectory(t, poses)
    C0, V = _random_motion(0)
    assert tr.from_pose_jet(*tr.to_pose_jet(C0, V))[1].shape == V.shape


def test_a_quaternion_jet_without_its_representation_is_named():
    C0, V = _random_motion(0)
    p, quat = tr.to_pose_jet(C0, V, representation="quaternion", quaternion_order="wxyz")
    with pytest.raises(ValueError, match="^orientation: .*representation='quaternion'"):
        tr.from_pose_jet(p, quat)
