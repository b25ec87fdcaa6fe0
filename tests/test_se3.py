"""SE(3) identities on random elements, near-identity and near-π rotations;
the public API of ``liedyn.se3``; quaternions, ``project`` and the pose check.

References are independent of liedyn's closed forms: ``scipy.linalg.expm``
of the 4×4 / 6×6 matrices, mpmath at 40 digits for the small-angle branch,
the spatial inertia of a cloud of point masses summed from kinetic energy,
and scipy's and Pinocchio's quaternions.
"""

import re

import mpmath
import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

import liedyn
from liedyn import ModelBuilder, Revolute, se3
from liedyn.se3 import SMALL_ANGLE
from tests.helpers import ROOT, assert_close

EPS = np.finfo(float).eps

# Rotation angles probing every branch: exactly zero, deep inside the series
# branch, both sides of SMALL_ANGLE, generic, and both sides of π − SMALL_ANGLE
# (log's switch to the symmetric part) up to π itself.
ANGLES = [0.0, 1e-12, 1e-7, 1e-3, 0.05, SMALL_ANGLE * (1 - 1e-9), SMALL_ANGLE,
          SMALL_ANGLE * (1 + 1e-9), 0.7, 1.5, 2.5, np.pi - SMALL_ANGLE * (1 + 1e-9),
          np.pi - SMALL_ANGLE * (1 - 1e-9), np.pi - 1e-3, np.pi - 1e-7]


def _unit(rng):
    e = rng.normal(size=3)
    return e / np.linalg.norm(e)


def _twist_with_angle(rng, theta, vscale=1.0):
    return np.concatenate([theta * _unit(rng), vscale * rng.normal(size=3)])


def _random_twists(rng, count=20, scale=1.0):
    return [rng.normal(size=6) * scale for _ in range(count)]


def _random_pose(rng):
    return se3.exp(np.concatenate([rng.normal(size=3), rng.normal(size=3) * 2.0]))


# ------------------------------------------------------------- hat / vee --

def test_hat_vee_round_trip_and_cross_product():
    rng = np.random.default_rng(1)
    for _ in range(10):
        w, x, V = rng.normal(size=3), rng.normal(size=3), rng.normal(size=6)
        assert_close(se3.hat(w) @ x, np.cross(w, x), rtol=0, atol=1e-15, what="ŵ x = w × x")
        assert_close(se3.vee(se3.hat(w)), w, rtol=0, atol=0, what="vee∘hat (3)")
        assert_close(se3.vee(se3.hat(V)), V, rtol=0, atol=0, what="vee∘hat (6)")
        Xh = se3.hat(V)
        assert_close(se3.hat(se3.vee(Xh)), Xh, rtol=0, atol=0, what="hat∘vee (4×4)")
        assert np.all(Xh[3] == 0.0)


# --------------------------------------------------------------- exp/log --

# Each case draws from its own seed (the angle's index): seeds derived from θ
# itself would coincide for the three smallest angles.
@pytest.mark.parametrize("i,theta", list(enumerate(ANGLES)))
def test_exp_matches_scipy_expm(i, theta):
    rng = np.random.default_rng(100 + i)
    for _ in range(5):
        V = _twist_with_angle(rng, theta)
        # expm is accurate to a few eps times ‖[V]‖ ≈ 3 here
        assert_close(se3.exp(V), expm(se3.hat(V)), rtol=0, atol=20 * EPS * (1 + theta),
                     what=f"exp vs expm at θ={theta}")


@pytest.mark.parametrize("i,theta", list(enumerate(ANGLES)))
def test_log_inverts_exp_on_principal_branch(i, theta):
    rng = np.random.default_rng(200 + i)
    for _ in range(5):
        V = _twist_with_angle(rng, theta)
        C = se3.exp(V)
        # Measured ≤ 5 eps·(1 + |v|) over all branches. A (1 − cos θ)/θ² formed
        # by cancellation would leave ≈ 2 eps/θ² · |v| here (≈ 200 eps at the
        # switch θ = 0.1), because log divides 1 − A/2B by θ² again.
        tol = 20 * EPS * (1 + np.linalg.norm(V[3:]))
        assert_close(se3.log(C), V, rtol=0, atol=tol, what=f"log∘exp at θ={theta}")
        assert_close(se3.exp(se3.log(C)), C, rtol=0, atol=tol, what=f"exp∘log at θ={theta}")


def test_log_at_exactly_pi_returns_a_valid_logarithm():
    rng = np.random.default_rng(3)
    for _ in range(10):
        e = _unit(rng)
        R = 2.0 * np.outer(e, e) - np.eye(3)          # rotation by π about e
        C = np.eye(4)
        C[:3, :3] = R
        C[:3, 3] = rng.normal(size=3)
        V = se3.log(C)
        assert abs(np.linalg.norm(V[:3]) - np.pi) < 1e-12
        assert_close(se3.exp(V), C, rtol=0, atol=100 * EPS, what="exp(log C) at θ = π")


def test_exp_of_log_of_random_poses():
    rng = np.random.default_rng(4)
    for _ in range(50):
        C = _random_pose(rng)
        V = se3.log(C)
        assert np.linalg.norm(V[:3]) <= np.pi + 1e-12
        assert_close(se3.exp(V), C, rtol=0, atol=200 * EPS, what="exp∘log random")


def test_so3_exp_log_agree_with_se3_and_expm():
    rng = np.random.default_rng(5)
    for theta in ANGLES[1:-2]:
        w = theta * _unit(rng)
        R = se3.exp_so3(w)
        assert_close(R, expm(se3.hat(w)), rtol=0, atol=20 * EPS, what="exp_so3 vs expm")
        assert_close(se3.log_so3(R), w, rtol=0, atol=200 * EPS, what="log_so3∘exp_so3")


# derandomize: the same 60 examples on every run (conftest loads a profile
# that does the same for every property test).
@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.lists(st.floats(-3.0, 3.0, allow_nan=False), min_size=6, max_size=6))
def test_exp_log_round_trip_hypothesis(x):
    V = np.array(x)
    th = np.linalg.norm(V[:3])
    if th >= np.pi - 1e-6:             # off the principal branch: only exp∘log is defined
        V[:3] *= (np.pi - 1e-3) / th
    C = se3.exp(V)
    assert_close(C, expm(se3.hat(V)), rtol=0, atol=1e-13, what="exp vs expm")
    assert_close(se3.log(C), V, rtol=0, atol=1e-11, what="log∘exp")


# ------------------------------------------------ small-angle branch --

def _abc_exact(theta):
    """``(sin θ/θ, (1 − cos θ)/θ², (θ − sin θ)/θ³)`` at 40 digits, in a local
    mpmath context (the global precision is left as it was)."""
    with mpmath.workdps(40):
        t = mpmath.mpf(theta)
        if t == 0:
            return 1.0, 0.5, 1.0 / 6.0
        return (float(mpmath.sin(t) / t), float((1 - mpmath.cos(t)) / t**2),
                float((t - mpmath.sin(t)) / t**3))


@pytest.mark.parametrize("theta", [0.0, 1e-8, 1e-4, 0.03, 0.09, SMALL_ANGLE * (1 - 1e-12),
                                   SMALL_ANGLE, SMALL_ANGLE * (1 + 1e-12), 0.12, 0.5])
def test_exp_coefficients_against_40_digit_reference(theta):
    """Series branch (θ < SMALL_ANGLE) and closed branch agree with mpmath.

    Bound: series truncation ≤ θ¹⁰/11! ≈ 2.5e-18 at θ = 0.1, plus a few eps of
    rounding; the closed C = (θ − sin θ)/θ³ loses ≈ eps/θ² to cancellation just
    above the switch (≈ 2e-14 at θ = 0.1), the documented worst case; A and B
    (from sin θ and sin(θ/2)) have none.
    """
    A, B, C = se3._abc(theta)
    Ae, Be, Ce = _abc_exact(theta)
    tol_closed = 4 * EPS / max(theta, SMALL_ANGLE) ** 2
    assert abs(A - Ae) <= 4 * EPS
    assert abs(B - Be) <= 4 * EPS          # half-angle form: no cancellation in either branch
    assert abs(C - Ce) <= 4 * EPS + (tol_closed if theta >= SMALL_ANGLE else 0.0)


def test_exp_and_log_continuous_across_small_angle_switch():
    rng = np.random.default_rng(6)
    e, v = _unit(rng), rng.normal(size=3)
    for switch in (SMALL_ANGLE, np.pi - SMALL_ANGLE):
        lo = np.concatenate([switch * (1 - 1e-13) * e, v])
        hi = np.concatenate([switch * (1 + 1e-13) * e, v])
        # exp is Lipschitz with constant ~ 1 + |v|: a 2e-13·θ step moves it ~1e-13;
        # both branches are accurate to ~1e-14, so a jump would show above 1e-12.
        assert np.max(np.abs(se3.exp(hi) - se3.exp(lo))) < 1e-12
        Clo, Chi = se3.exp(lo), se3.exp(hi)
        assert np.max(np.abs(se3.log(Chi) - se3.log(Clo))) < 1e-12


# ----------------------------------------------------------- adjoints --

def test_Ad_of_product_is_product_of_Ads_and_inverse():
    rng = np.random.default_rng(7)
    for _ in range(20):
        A, B = _random_pose(rng), _random_pose(rng)
        assert_close(se3.Ad(se3.compose(A, B)), se3.Ad(A) @ se3.Ad(B), rtol=0, atol=1e-12,
                     what="Ad(AB)")
        assert_close(se3.Ad(se3.inv(A)), np.linalg.inv(se3.Ad(A)), rtol=0, atol=1e-12,
                     what="Ad(A⁻¹) = Ad(A)⁻¹")
        assert_close(se3.inv(A) @ A, np.eye(4), rtol=0, atol=1e-13, what="A⁻¹ A")
        assert_close(se3.inv(A), np.linalg.inv(A), rtol=0, atol=1e-13, what="inv")


def test_Ad_conjugates_hat():
    """``[Ad_C V] = C [V] C⁻¹``, the definition of Ad."""
    rng = np.random.default_rng(8)
    for _ in range(20):
        C, V = _random_pose(rng), rng.normal(size=6)
        assert_close(se3.hat(se3.Ad(C) @ V), C @ se3.hat(V) @ se3.inv(C), rtol=0, atol=1e-12,
                     what="[Ad_C V] = C[V]C⁻¹")


@pytest.mark.parametrize("i,scale", list(enumerate([1e-6, 1.0, 2.5])))
def test_Ad_exp_equals_expm_ad(i, scale):
    rng = np.random.default_rng(300 + i)
    for V in _random_twists(rng, 10, scale):
        if np.linalg.norm(V[:3]) > np.pi:
            V[:3] *= 3.0 / np.linalg.norm(V[:3])
        assert_close(se3.Ad(se3.exp(V)), expm(se3.ad(V)), rtol=0, atol=1e-12,
                     what="Ad(exp V) = expm(ad V)")


def test_ad_is_the_lie_bracket_of_hat():
    """``[ad_V X] = [V][X] − [X][V]``."""
    rng = np.random.default_rng(10)
    for _ in range(20):
        V, X = rng.normal(size=6), rng.normal(size=6)
        Vh, Xh = se3.hat(V), se3.hat(X)
        assert_close(se3.hat(se3.ad(V) @ X), Vh @ Xh - Xh @ Vh, rtol=0, atol=1e-13,
                     what="ad = bracket")


def test_jacobi_identity_and_antisymmetry():
    rng = np.random.default_rng(11)
    for _ in range(20):
        X, Y, Z = (rng.normal(size=6) for _ in range(3))
        br = lambda a, b: se3.ad(a) @ b
        jac = br(X, br(Y, Z)) + br(Y, br(Z, X)) + br(Z, br(X, Y))
        assert_close(jac, np.zeros(6), rtol=0, atol=1e-13, what="Jacobi")
        assert_close(br(X, Y), -br(Y, X), rtol=0, atol=1e-14, what="antisymmetry")
        assert_close(br(X, X), np.zeros(6), rtol=0, atol=1e-14, what="ad_V V = 0")


def test_coad_is_transpose_and_dual_of_ad():
    rng = np.random.default_rng(12)
    for _ in range(20):
        V, X, W = (rng.normal(size=6) for _ in range(3))
        assert_close(se3.coad(V), se3.ad(V).T, rtol=0, atol=0, what="coad = adᵀ")
        assert abs((se3.coad(V) @ W) @ X - W @ (se3.ad(V) @ X)) < 1e-13


def test_ad_of_Ad_is_conjugation():
    """``ad_{Ad_C V} = Ad_C ad_V Ad_C⁻¹``."""
    rng = np.random.default_rng(13)
    for _ in range(10):
        C, V = _random_pose(rng), rng.normal(size=6)
        assert_close(se3.ad(se3.Ad(C) @ V), se3.Ad(C) @ se3.ad(V) @ se3.Ad(se3.inv(C)),
                     rtol=0, atol=1e-12, what="ad of Ad")


def test_kernels_agree_with_public_matrices():
    """The flat kernels ``_Ad_into``, ``_ad_acc``, ``_coad_acc``, ``_inv_into`` and
    ``_exp_se3_into`` are what the recursions use; they must equal the matrices."""
    rng = np.random.default_rng(14)
    for _ in range(10):
        C, V, X, t = _random_pose(rng), rng.normal(size=6), rng.normal(size=6), rng.normal()
        out = np.empty(6)
        se3._Ad_into(C, X, out)
        assert_close(out, se3.Ad(C) @ X, rtol=0, atol=1e-13, what="_Ad_into")
        out = np.ones(6)
        se3._ad_acc(2.0, V, X, out)
        assert_close(out, 1.0 + 2.0 * se3.ad(V) @ X, rtol=0, atol=1e-13, what="_ad_acc")
        out = np.ones(6)
        se3._coad_acc(-0.5, V, X, out)
        assert_close(out, 1.0 - 0.5 * se3.ad(V).T @ X, rtol=0, atol=1e-13, what="_coad_acc")
        E = np.empty((4, 4))
        se3._exp_se3_into(V, t, E)
        assert_close(E, expm(se3.hat(V) * t), rtol=0, atol=1e-12, what="_exp_se3_into")
        se3._inv_into(C, E)
        assert_close(E, np.linalg.inv(C), rtol=0, atol=1e-13, what="_inv_into")


# ------------------------------------------------------------ inertia --

def _point_cloud(rng, count=7):
    return rng.uniform(0.1, 1.0, count), rng.normal(size=(count, 3)) * 0.3


def _cloud_inertia(masses, points):
    """``Σ m_i Pᵢᵀ Pᵢ`` with ``Pᵢ = [−p̂ᵢ, I₃]`` the map from a twist to the
    velocity ``v + ω × pᵢ`` of the point: kinetic energy ``½ Vᵀ M V``."""
    M = np.zeros((6, 6))
    for m, p in zip(masses, points):
        P = np.hstack([-se3.hat(p), np.eye(3)])
        M += m * P.T @ P
    return M


def test_spatial_inertia_equals_point_cloud_and_is_physical():
    rng = np.random.default_rng(15)
    for _ in range(10):
        masses, pts = _point_cloud(rng)
        m = masses.sum()
        com = masses @ pts / m
        d = pts - com
        J = sum(mi * (di @ di * np.eye(3) - np.outer(di, di)) for mi, di in zip(masses, d))
        Mb = se3.spatial_inertia(m, com, J)
        assert_close(Mb, _cloud_inertia(masses, pts), rtol=0, atol=1e-13, what="Mᵇ")
        assert_close(Mb, Mb.T, rtol=0, atol=1e-15, what="symmetry")
        assert np.linalg.eigvalsh(Mb)[0] > 0.0
        assert_close(Mb[3:, 3:], m * np.eye(3), rtol=0, atol=0, what="m I₃ block")


def test_transform_inertia_moves_the_point_cloud():
    """``Ad_{C⁻¹}ᵀ Mᵇ Ad_{C⁻¹}`` equals the cloud's inertia at the moved points,
    and kinetic energy is frame invariant: ``Vᵀ M V = V_bᵀ Mᵇ V_b``."""
    rng = np.random.default_rng(16)
    for _ in range(10):
        masses, pts = _point_cloud(rng)
        Mb = _cloud_inertia(masses, pts)
        C = _random_pose(rng)
        world = pts @ C[:3, :3].T + C[:3, 3]
        M = se3.transform_inertia(C, Mb)
        assert_close(M, _cloud_inertia(masses, world), rtol=0, atol=1e-12, what="M world")
        V = rng.normal(size=6)
        Vb = se3.Ad(se3.inv(C)) @ V
        assert abs(V @ M @ V - Vb @ Mb @ Vb) < 1e-12 * (1 + abs(V @ M @ V))


def test_transform_inertia_composes():
    rng = np.random.default_rng(17)
    Mb = _cloud_inertia(*_point_cloud(rng))
    A, B = _random_pose(rng), _random_pose(rng)
    assert_close(se3.transform_inertia(A @ B, Mb),
                 se3.transform_inertia(A, se3.transform_inertia(B, Mb)),
                 rtol=0, atol=1e-11, what="transform composes")


# --------------------------------------------------------- bad inputs --

BAD_POSES = {
    "shape": np.eye(3),
    "nan": np.where(np.eye(4) == 1, np.nan, 0.0),
    "inf": np.diag([1.0, 1.0, 1.0, np.inf]),
    "scaled": np.diag([2.0, 1.0, 1.0, 1.0]),
    "sheared": np.array([[1.0, 0.1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
    "reflection": np.diag([-1.0, 1.0, 1.0, 1.0]),
    "last row": np.array([[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0.5, 1]]),
}


@pytest.mark.parametrize("kind", list(BAD_POSES))
@pytest.mark.parametrize("fn,arg", [(se3.log, "C"), (se3.inv, "C"), (se3.Ad, "C"),
                                    (lambda C: se3.compose(np.eye(4), C), "B"),
                                    (lambda C: se3.compose(C, np.eye(4)), "A"),
                                    (lambda C: se3.transform_inertia(C, np.eye(6)), "C")])
def test_bad_poses_raise_naming_the_argument(kind, fn, arg):
    with pytest.raises(ValueError, match=rf"^{arg}:"):
        fn(BAD_POSES[kind])


@pytest.mark.parametrize("fn,arg,bad", [
    (se3.exp, "V", np.zeros(5)), (se3.exp, "V", np.full(6, np.nan)),
    (se3.ad, "V", np.zeros((6, 1))), (se3.coad, "V", [0, 0, 0, 0, 0, np.inf]),
    (se3.hat, "x", np.zeros(4)), (se3.hat, "x", [np.nan, 0, 0]),
    (se3.vee, "X", np.zeros((3, 4))), (se3.exp_so3, "w", np.zeros(6)),
    (se3.log_so3, "R", np.zeros((4, 4))), (se3.log_so3, "R", np.full((3, 3), np.nan)),
    (se3.log_so3, "R", 2.0 * np.eye(3)), (se3.log_so3, "R", np.diag([1.0, 1.0, -1.0])),
    (se3.log_so3, "R", np.zeros((3, 3))),
    (lambda M: se3.transform_inertia(np.eye(4), M), "Mb", np.eye(5)),
    (lambda M: se3.transform_inertia(np.eye(4), M), "Mb", np.full((6, 6), np.nan)),
    (lambda m: se3.spatial_inertia(m, np.zeros(3), np.eye(3)), "mass", [1.0, 2.0]),
    (lambda c: se3.spatial_inertia(1.0, c, np.eye(3)), "com", np.zeros(2)),
    (lambda J: se3.spatial_inertia(1.0, np.zeros(3), J), "inertia_at_com", np.eye(2)),
])
def test_bad_arrays_raise_naming_the_argument(fn, arg, bad):
    with pytest.raises(ValueError, match=rf"^{arg}:"):
        fn(bad)


def test_non_numeric_raises_type_error():
    with pytest.raises(TypeError, match="^V:"):
        se3.exp(["a"] * 6)
    with pytest.raises(TypeError, match="^V:"):
        se3.exp(None)
    with pytest.raises(TypeError, match="^V:.*complex"):
        se3.exp(np.zeros(6) + 1e-3j)


def test_long_products_stay_valid_poses():
    """A pose composed from 500 random exponentials drifts from SE(3) by
    ~500·eps, far inside POSE_TOL: every SE(3) function still accepts it."""
    rng = np.random.default_rng(18)
    C = np.eye(4)
    for _ in range(500):
        C = C @ se3.exp(rng.normal(size=6))
    assert np.max(np.abs(C[:3, :3].T @ C[:3, :3] - np.eye(3))) < 1e-12
    assert_close(se3.exp(se3.log(C)), C, rtol=0, atol=1e-11, what="exp∘log after 500 products")


@pytest.mark.parametrize("seed", range(4))
def test_joint_exponential_equals_the_group_exponential(seed):
    """The closed form used for the model's joint screws (unit axis, pitch 0
    or pure translation) equals the general SE(3) exponential."""
    from liedyn.algorithm.kinematics import _joint_exp_into
    rng = np.random.default_rng(900 + seed)
    e = rng.normal(size=3)
    e /= np.linalg.norm(e)
    x = rng.normal(size=3)
    out = np.empty((4, 4))
    for Y in (np.concatenate([e, np.cross(x, e)]), np.concatenate([np.zeros(3), e])):
        for q in (0.0, 1e-9, 0.05, -1.3, 2.9, 7.0):
            _joint_exp_into(Y, q, out)
            assert np.max(np.abs(out - se3.exp(Y * q))) < 1e-14 * (1 + np.max(np.abs(x)) + abs(q))


# ------------------------------------------------------ dexp / dexp_inv --

# Angles probing dexp's branches: zero, deep in the series, both sides of
# DEXP_SERIES_ANGLE, generic, up to near 2π (where dexp_inv is singular).
DEXP_ANGLES = [0.0, 1e-9, 1e-4, 0.1, 1.0, se3.DEXP_SERIES_ANGLE * (1 - 1e-9),
               se3.DEXP_SERIES_ANGLE, se3.DEXP_SERIES_ANGLE * (1 + 1e-9), 2.5, 3.0,
               np.pi, 4.0, 5.5, 6.0]


def _phi1_of_ad(V):
    """``Σ ad^k/(k+1)!`` as the top-right block of ``expm([[ad_V, I], [0, 0]])``."""
    M = np.zeros((12, 12))
    M[:6, :6] = se3.ad(V)
    M[:6, 6:] = np.eye(6)
    return expm(M)[:6, 6:]


@pytest.mark.parametrize("theta", DEXP_ANGLES)
def test_dexp_equals_the_series_of_ad(theta):
    """Reference: scipy's expm of the 12×12 block matrix, accurate to a few
    eps·‖ad‖² (‖ad_V‖ ≲ θ + |v| ≈ 8 at the largest angle)."""
    rng = np.random.default_rng(20 + int(1e3 * theta))
    for _ in range(4):
        V = _twist_with_angle(rng, theta)
        scale = (1.0 + np.linalg.norm(V)) ** 2
        assert_close(se3.dexp(V), _phi1_of_ad(V), rtol=0, atol=20 * EPS * scale,
                     what=f"dexp at θ={theta}")


@pytest.mark.parametrize("theta", [0.0, 1e-6, 0.3, 1.9, 2.1, 3.0])
def test_dexp_is_the_derivative_of_exp(theta):
    """``(exp(V + εX) − exp(V − εX))/(2ε) · exp(V)⁻¹ = [dexp_V X] + O(ε²)``:
    with ε = 1e-5 the truncation is ~ε²‖X‖³ ≈ 1e-10 and rounding ~eps/ε ≈ 2e-11."""
    rng = np.random.default_rng(40 + int(10 * theta))
    eps_fd = 1e-5
    for _ in range(4):
        V, X = _twist_with_angle(rng, theta), rng.normal(size=6)
        dC = (se3.exp(V + eps_fd * X) - se3.exp(V - eps_fd * X)) / (2 * eps_fd)
        fd = se3.vee(dC @ se3.inv(se3.exp(V)))
        assert_close(se3.dexp(V) @ X, fd, rtol=0, atol=2e-9, what=f"dexp vs FD at θ={theta}")


@pytest.mark.parametrize("theta", DEXP_ANGLES)
def test_dexp_inv_inverts_dexp(theta):
    """Both products with the identity; the condition number of dexp grows
    as 1/|sin(θ/2)|·θ near 2π (about 20 at θ = 6), hence the scaled bound."""
    rng = np.random.default_rng(60 + int(1e3 * theta))
    for _ in range(4):
        V = _twist_with_angle(rng, theta)
        D, Di = se3.dexp(V), se3.dexp_inv(V)
        cond = np.linalg.norm(D, 2) * np.linalg.norm(Di, 2)
        tol = 20 * EPS * cond * (1.0 + np.linalg.norm(V)) ** 2
        assert_close(Di @ D, np.eye(6), rtol=0, atol=tol, what=f"dexp_inv dexp at θ={theta}")
        assert_close(D @ Di, np.eye(6), rtol=0, atol=tol, what=f"dexp dexp_inv at θ={theta}")


def _dexp_scalars_exact(theta):
    """``(B'/θ, C'/θ, β, γ)`` at 60 digits (the closed forms have no
    cancellation left at this precision for θ ≥ 1e-6)."""
    t = mpmath.mpf(theta)
    A, B, C = mpmath.sin(t) / t, (1 - mpmath.cos(t)) / t**2, (t - mpmath.sin(t)) / t**3
    beta = (1 - t / 2 * mpmath.cot(t / 2)) / t**2
    return [float(x) for x in ((A - 2 * B) / t**2, (B - 3 * C) / t**2, beta,
                               (C / (2 * B) - 2 * beta) / t**2)]


@pytest.mark.parametrize("theta", [1e-6, 1e-3, 0.1, 0.7, 1.5, se3.DEXP_SERIES_ANGLE * (1 - 1e-12),
                                   se3.DEXP_SERIES_ANGLE, se3.DEXP_SERIES_ANGLE * (1 + 1e-12),
                                   2.5, 3.0, 4.5, 6.0])
def test_dexp_scalars_against_60_digit_reference(theta):
    """Series branch (θ < DEXP_SERIES_ANGLE): truncation below 1e-22, a few eps
    of rounding. Closed branch: γ = (C/2B − 2β)/θ² cancels, losing ~eps/θ⁴
    relative to its leading term (measured 15 eps at θ = 2, the worst point)."""
    _, _, dB, dC = se3._dexp_scalars(theta)
    beta, gamma = se3._dexp_inv_scalars(theta)
    with mpmath.workdps(60):
        exact = _dexp_scalars_exact(theta)
    for name, got, want in zip(("B'/θ", "C'/θ", "β", "γ"), (dB, dC, beta, gamma), exact):
        assert abs(got - want) <= 32 * EPS * abs(want), f"{name} at θ={theta}: {got} vs {want}"


def test_dexp_series_tables_are_the_bernoulli_series():
    """The tables against mpmath's Bernoulli numbers and factorials."""
    with mpmath.workdps(40):
        for k in range(1, 6):
            Bk = mpmath.bernoulli(2 * k) / mpmath.factorial(2 * k)
            assert abs(se3._BETA_SERIES[k - 1] - float((-1) ** (k - 1) * Bk)) <= EPS * abs(
                se3._BETA_SERIES[k - 1])
            assert abs(se3._DB_SERIES[k - 1]
                       - float((-1) ** k * 2 * k / mpmath.factorial(2 * k + 2))) \
                <= EPS * abs(se3._DB_SERIES[k - 1])
    assert se3._BETA_SERIES[0] == 1.0 / 12.0 and se3._GAMMA_SERIES[0] == 1.0 / 360.0


def test_dexp_continuous_across_the_series_switch():
    rng = np.random.default_rng(80)
    e, v = _unit(rng), rng.normal(size=3)
    lo = np.concatenate([se3.DEXP_SERIES_ANGLE * (1 - 1e-13) * e, v])
    hi = np.concatenate([se3.DEXP_SERIES_ANGLE * (1 + 1e-13) * e, v])
    # A 4e-13 step in θ moves the entries by ~4e-13·(1 + |v|) ≈ 2e-12 at most;
    # a jump between the branches above their ~15 eps accuracy would show here.
    assert np.max(np.abs(se3.dexp(hi) - se3.dexp(lo))) < 2e-12
    assert np.max(np.abs(se3.dexp_inv(hi) - se3.dexp_inv(lo))) < 2e-12


def test_dexp_inv_kernel_equals_the_matrix():
    """``_dexp_inv_into``, what the integrator of liedyn.simulate uses."""
    rng = np.random.default_rng(81)
    out = np.empty(6)
    for theta in DEXP_ANGLES:
        V, X = _twist_with_angle(rng, theta), rng.normal(size=6)
        se3._dexp_inv_into(V, X, out)
        assert_close(out, se3.dexp_inv(V) @ X, rtol=0, atol=1e-13 * (1 + np.linalg.norm(V)) ** 2,
                     what=f"_dexp_inv_into at θ={theta}")


def test_dexp_inv_refuses_angles_beyond_its_domain_and_bad_twists():
    with pytest.raises(ValueError, match="^V:.*2π"):
        se3.dexp_inv([2 * np.pi, 0, 0, 0, 0, 0])
    for fn in (se3.dexp, se3.dexp_inv):
        with pytest.raises(ValueError, match="^V:"):
            fn(np.zeros(5))
        with pytest.raises(ValueError, match="^V:"):
            fn([np.nan, 0, 0, 0, 0, 0])


# ------------------------------------------------------------ public API --

def _readme_row():
    """The names in the README function table's ``liedyn.se3`` row."""
    row = next(line for line in (ROOT / "README.md").read_text().splitlines()
               if line.startswith("| `liedyn.se3` |"))
    return re.findall(r"`(\w+)`", row.split("|")[2])


def _glossary():
    """The names in the first column of the module docstring's glossary."""
    table = se3.__doc__.split("Glossary")[1].split("======\n")[1]
    return [n for line in table.splitlines() for n in re.findall(r"``(\w+)", line[:24])]


def test_public_api_is_exactly_the_documented_one():
    assert sorted(se3.__all__) == sorted(_readme_row()) == sorted(_glossary())
    assert len(set(se3.__all__)) == len(se3.__all__)
    assert dir(se3) == sorted(se3.__all__)
    for name in se3.__all__:
        doc = getattr(se3, name).__doc__
        assert doc and doc.strip(), f"se3.{name} has no docstring"
    star = {}
    exec("from liedyn.se3 import *", star)
    assert sorted(k for k in star if k != "__builtins__") == sorted(se3.__all__)


# ------------------------------------------------------------ quaternions --

ORDERS = {"wxyz": [0, 1, 2, 3], "xyzw": [1, 2, 3, 0]}     # wxyz[...] → stored order


def _unit_quats(rng, count):
    q = rng.normal(size=(count, 4))                          # w, x, y, z
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return q * np.where(q[:, :1] < 0, -1.0, 1.0)


def test_quaternion_matches_scipy_and_pinocchio():
    rng = np.random.default_rng(31)
    for wxyz in _unit_quats(rng, 20):
        w, x, y, z = wxyz
        xyzw = np.array([x, y, z, w])
        R = se3.rotation_from_quat(xyzw, quaternion_order="xyzw")
        assert_close(R, Rotation.from_quat(xyzw).as_matrix(), rtol=0, atol=4 * EPS,
                     what="scipy (scalar last)")
        assert_close(R, pin.Quaternion(w, x, y, z).toRotationMatrix(), rtol=0, atol=4 * EPS,
                     what="pin.Quaternion(w, x, y, z)")
        assert_close(se3.rotation_from_quat(wxyz, quaternion_order="wxyz"), R, rtol=0, atol=0, what="wxyz")
        assert_close(se3.quat_from_rotation(R, quaternion_order="xyzw"), xyzw, rtol=0, atol=4 * EPS,
                     what="pin coeffs()")
        c = pin.Quaternion(R).coeffs()
        assert_close(se3.quat_from_rotation(R, quaternion_order="xyzw"), c * np.sign(c[3]), rtol=0,
                     atol=4 * EPS, what="pin.Quaternion(R).coeffs(), w ≥ 0")


@pytest.mark.parametrize("order", list(ORDERS))
def test_quaternion_round_trips(order):
    rng = np.random.default_rng(32)
    q = _unit_quats(rng, 50)[:, ORDERS[order]]
    R = se3.rotation_from_quat(q, quaternion_order=order)
    assert_close(se3.quat_from_rotation(R, quaternion_order=order), q, rtol=0, atol=4 * EPS, what="q→R→q")
    assert_close(se3.rotation_from_quat(se3.quat_from_rotation(R, quaternion_order=order), quaternion_order=order), R,
                 rtol=0, atol=4 * EPS, what="R→q→R")
    assert_close(se3.rotation_from_quat(-3.0 * q, quaternion_order=order), R, rtol=0, atol=4 * EPS,
                 what="−3q gives the same rotation (normalised first)")
    assert np.all(se3.quat_from_rotation(R, quaternion_order=order)[:, order.index("w")] >= 0.0)


@pytest.mark.parametrize("i,theta", list(enumerate(ANGLES + [np.pi])))
def test_quaternion_of_every_angle_up_to_pi(i, theta):
    """Exactly zero, small angles and both sides of π: the pivot row of
    ``4 q qᵀ`` keeps the quaternion accurate where ``w`` vanishes."""
    rng = np.random.default_rng(400 + i)
    for _ in range(5):
        e = _unit(rng)
        R = se3.exp_so3(theta * e)
        q = se3.quat_from_rotation(R, quaternion_order="wxyz")
        want = np.concatenate([[np.cos(theta / 2)], np.sin(theta / 2) * e])
        assert_close(q * np.sign(q @ want), want, rtol=0, atol=8 * EPS, what=f"θ={theta}")
        assert_close(se3.rotation_from_quat(q, quaternion_order="wxyz"), R, rtol=0, atol=8 * EPS,
                     what=f"R→q→R at θ={theta}")


def test_quaternion_arguments_are_checked():
    q = np.array([1.0, 0, 0, 0])
    with pytest.raises(TypeError, match="order"):
        se3.rotation_from_quat(q)                            # the order is never guessed
    with pytest.raises(TypeError, match="order"):
        se3.quat_from_rotation(np.eye(3))
    for bad in ("zyxw", "WXYZ", "", "sxyz"):
        with pytest.raises(ValueError, match="^quaternion_order: expected 'wxyz' or 'xyzw'"):
            se3.rotation_from_quat(q, quaternion_order=bad)
        with pytest.raises(ValueError, match="^quaternion_order: expected 'wxyz' or 'xyzw'"):
            se3.quat_from_rotation(np.eye(3), quaternion_order=bad)
    with pytest.raises(TypeError, match="^quaternion_order:"):
        se3.rotation_from_quat(q, quaternion_order=["w", "x", "y", "z"])
    with pytest.raises(ValueError, match=r"^q: expected shape \(4\) or a stack"):
        se3.rotation_from_quat(np.zeros(3), quaternion_order="wxyz")
    with pytest.raises(ValueError, match=r"^q\[1\]: the zero quaternion"):
        se3.rotation_from_quat([q, np.zeros(4)], quaternion_order="wxyz")
    with pytest.raises(ValueError, match="^q: contains NaN"):
        se3.rotation_from_quat([np.nan, 0, 0, 1], quaternion_order="xyzw")
    with pytest.raises(TypeError, match="^q:"):
        se3.rotation_from_quat("wxyz", quaternion_order="wxyz")
    with pytest.raises(ValueError, match=r"^R\[0, 1\]: not in SO\(3\): .*se3\.project"):
        se3.quat_from_rotation(np.stack([[np.eye(3), 1.01 * np.eye(3)]]), quaternion_order="wxyz")
    with pytest.raises(ValueError, match=r"^R: not in SO\(3\): rotation block has det"):
        se3.quat_from_rotation(np.diag([1.0, 1, -1]), quaternion_order="wxyz")


def test_batched_equals_one_at_a_time():
    rng = np.random.default_rng(33)
    q = rng.normal(size=(3, 2, 4))
    R = se3.rotation_from_quat(q, quaternion_order="xyzw")
    M = R + 1e-4 * rng.normal(size=R.shape)
    C = np.tile(np.eye(4), (3, 2, 1, 1))
    C[..., :3, :3], C[..., :3, 3] = M, rng.normal(size=(3, 2, 3))
    assert R.shape == (3, 2, 3, 3) and se3.project(C).shape == C.shape
    for i in np.ndindex(3, 2):
        assert_close(R[i], se3.rotation_from_quat(q[i], quaternion_order="xyzw"), rtol=0, atol=2 * EPS,
                     what="rotation_from_quat")
        assert_close(se3.quat_from_rotation(R, quaternion_order="wxyz")[i],
                     se3.quat_from_rotation(R[i], quaternion_order="wxyz"), rtol=0, atol=2 * EPS,
                     what="quat_from_rotation")
        assert_close(se3.project(M)[i], se3.project(M[i]), rtol=0, atol=4 * EPS, what="project")
        assert_close(se3.project(C)[i], se3.project(C[i]), rtol=0, atol=4 * EPS,
                     what="project (poses)")


# --------------------------------------------------------------- project --

def test_project_is_the_identity_on_rotations_and_idempotent():
    rng = np.random.default_rng(34)
    C = np.stack([_random_pose(rng) for _ in range(20)] + [se3.exp(np.r_[np.pi * _unit(rng), 1, 2, 3])])
    P = se3.project(C)
    assert_close(P, C, rtol=0, atol=4 * EPS, what="project on exact poses")
    assert_close(se3.project(P), P, rtol=0, atol=4 * EPS, what="project∘project")
    assert_close(se3.project(C[:, :3, :3]), C[:, :3, :3], rtol=0, atol=4 * EPS, what="3×3")


def test_project_is_the_nearest_rotation():
    """Polar factor of ``M``: orthonormal with det +1, within ``3δ`` of ``M``
    (``δ = max |MᵀM − I|``), and no rotation near it is closer (Frobenius);
    a pose keeps its translation."""
    rng = np.random.default_rng(35)
    for scale in (1e-7, 1e-4, 1e-2):
        C = _random_pose(rng)
        C[:3, :3] += scale * rng.normal(size=(3, 3))
        P = se3.project(C)
        R, M = P[:3, :3], C[:3, :3]
        assert np.abs(R.T @ R - np.eye(3)).max() <= 10 * EPS and np.linalg.det(R) > 0
        assert np.all(P[:, 3] == C[:, 3]) and np.all(P[3] == (0, 0, 0, 1))
        delta = np.abs(M.T @ M - np.eye(3)).max()
        assert np.linalg.norm(M - R, 2) <= 3 * delta
        d = np.linalg.norm(M - R)
        for _ in range(20):
            other = se3.exp_so3(scale * rng.normal(size=3)) @ R
            assert d <= np.linalg.norm(M - other) * (1 + 1e-12)


def test_project_refuses_what_it_cannot_repair():
    with pytest.raises(ValueError, match=r"^X: det = -1 ≤ 0, a reflection"):
        se3.project(np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match=r"^X\[1\]: det = 0 ≤ 0"):
        se3.project([np.eye(3), np.zeros((3, 3))])
    transposed = se3.exp(np.r_[0.1, 0.2, 0.3, 1.0, 2.0, 3.0]).T
    with pytest.raises(ValueError, match=r"^X: not in SE\(3\): last row .*transposed"):
        se3.project(transposed)
    with pytest.raises(ValueError, match=r"^X: expected shape \(3, 3\) or \(4, 4\)"):
        se3.project(np.eye(5))
    with pytest.raises(ValueError, match="^X: contains NaN"):
        se3.project(np.full((3, 3), np.nan))


# ------------------------------------------------------- the pose check --

def _float32_pose(rng):
    """A pose as a float32 estimator or a ROS message gives it: a rotation
    from a normalised float32 quaternion, stored in float32."""
    q = rng.normal(size=4).astype(np.float32)
    q /= np.linalg.norm(q)
    C = np.eye(4, dtype=np.float32)
    C[:3, :3] = Rotation.from_quat(q).as_matrix()
    C[:3, 3] = rng.normal(size=3)
    return C


def test_float32_poses_are_accepted_and_a_larger_defect_names_the_fix():
    rng = np.random.default_rng(36)
    C = _float32_pose(rng)
    R = C[:3, :3].astype(float)
    assert 1e-9 < np.abs(R.T @ R - np.eye(3)).max() < 1e-6
    assert se3.check_pose(C).dtype == np.float64
    assert_close(se3.exp(se3.log(C)), C, rtol=0, atol=1e-6, what="exp∘log of a float32 pose")
    bad = C.astype(float)
    bad[:3, :3] *= 1.0 + 1e-6                               # defect 2e-6
    with pytest.raises(ValueError, match=r"^pose: not in SE\(3\): rotation block is not "
                       r"orthonormal: max \|RᵀR − I\| = 2\.0\de-06 exceeds the tolerance "
                       r"1e-06; liedyn\.se3\.project\(pose\) returns the nearest pose$"):
        se3.check_pose(bad, "pose")
    se3.check_pose(se3.project(bad))
    with pytest.raises(ValueError, match=r"^C\[1, 0\]: not in SE\(3\)"):
        se3.check_pose(np.stack([[C, C], [bad, C]]))
    with pytest.raises(ValueError, match=r"^C: not in SE\(3\): rotation block has det = -1"):
        se3.check_pose(np.diag([1.0, -1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match=r"^C: expected shape \(4, 4\) or a stack"):
        se3.check_pose(np.eye(3))


def _arm():
    b = ModelBuilder(floating_base=False)
    b.add_body("base", None, None)
    b.add_body("link", "base", Revolute((0, 0, 1)), np.eye(4),
               se3.spatial_inertia(1.0, (0.2, 0, 0), np.diag([0.01, 0.02, 0.02])))
    b.add_frame("tip", "link", np.eye(4))
    return b.build()


def _pose_takers():
    """Every way a pose enters liedyn, as ``(argument name, call)``."""
    model, q = _arm(), np.zeros((3, 1))

    def builder(where):
        def call(C):
            b = ModelBuilder(floating_base=False)
            b.add_body("base", None, None)
            b.add_body("link", "base", Revolute((0, 0, 1)), C if where == "origin" else None,
                       se3.spatial_inertia(1.0, (0, 0, 0), np.eye(3)))
            if where == "offset":
                b.add_frame("tip", "link", C)
        return call

    return {
        "origin": builder("origin"),
        "offset": builder("offset"),
        "base_pose": lambda C: liedyn.forward_kinematics(model, C, None, q, 0),
        "base_pose (inverse dynamics)": lambda C: liedyn.inverse_dynamics(model, C, None, q, 0),
        "base_pose (frame_pose)": lambda C: liedyn.frame_pose(model, C, q[0], "tip"),
        "target": lambda C: liedyn.inverse_kinematics(model, None, q[0], "tip", C,
                                                      max_iterations=0),
        "C": se3.log,
    }


@pytest.mark.parametrize("arg", list(_pose_takers()))
def test_every_pose_argument_has_the_same_tolerance_and_message(arg):
    call = _pose_takers()[arg]
    name = arg.split()[0]
    C = _float32_pose(np.random.default_rng(37))
    C[:3, 3] = 0.0
    call(C)
    bad = C.astype(float)
    bad[:3, :3] *= 1.0 + 1e-6
    with pytest.raises(ValueError, match=rf"^{name}: not in SE\(3\): rotation block is not "
                       rf"orthonormal: max \|RᵀR − I\| = 2\.0\de-06 exceeds the tolerance "
                       rf"1e-06; liedyn\.se3\.project\({name}\) returns the nearest pose$"):
        call(bad)
    call(se3.project(bad))
