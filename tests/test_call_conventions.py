"""The conventions every call shares: a motion jet is read as a prefix (one
trajectory jet serves every function and order), object arrays of plain
numbers are numbers, and a batch takes zero samples or one shared pose."""

import numpy as np
import pytest

import liedyn
from models.trees import random_tree

RNG = np.random.default_rng(910)
FLOAT = random_tree(RNG, 5, armature=True, damping=True)
FIXED = random_tree(RNG, 4, floating_base=False)
K = 8                                     # rows of the trajectory jets below


def _trajectory(model, rng, rows=K):
    """A base pose and motion jets with more rows than any call below reads."""
    C0 = liedyn.se3.exp(rng.normal(size=6))
    V = rng.normal(size=(rows, 6)) if model.floating_base else None
    q = rng.normal(size=(rows, model.n_joints))
    return C0, V, q


def _cut(V, rows):
    return None if V is None else V[:rows].copy()


@pytest.mark.parametrize("model", [FLOAT, FIXED], ids=["floating", "fixed"])
@pytest.mark.parametrize("r", [0, 2])
def test_one_trajectory_jet_serves_every_function(model, r):
    """Each function reads the first rows it documents and nothing else: the
    long jets give the same numbers, to the bit, as the jets cut to those
    rows, and NaN in the rows past them is never read."""
    rng = np.random.default_rng(911 + r)
    C0, V, q = _trajectory(model, rng)
    Vn = None if V is None else V.copy()
    qn = q.copy()
    if Vn is not None:
        Vn[r + 2:] = np.nan
    qn[r + 3:] = np.nan
    W = None if V is None else rng.normal(size=(r + 1, 6))
    tau = rng.normal(size=(r + 1, model.n_joints))
    cases = {
        "inverse": (lambda V, q: liedyn.inverse_dynamics(model, C0, V, q, r),
                    r + 2, r + 3, ("tau", "base_wrench", "twist")),
        "forward": (lambda V, q: liedyn.forward_dynamics(model, C0, V, q, r, tau=tau,
                                                         base_wrench=W),
                    1, 2, ("q", "base_twist", "base_wrench")),
        "hybrid": (lambda V, q: liedyn.hybrid_dynamics(model, C0, V, q, r, motion_driven=[0],
                                                       tau=tau, base_wrench=W),
                   r + 2, r + 3, ("q", "tau", "base_twist")),
        "kinematics": (lambda V, q: liedyn.forward_kinematics(model, C0, V, q, r),
                       r + 1, r + 2, ("twist", "screw", "body_pose")),
        "closed_form": (lambda V, q: liedyn.closed_form_jets(model, C0, V, q, r),
                        r + 2, r + 3, ("mass", "coriolis", "gravity", "velocity")),
        "frame_kinematics": (lambda V, q: liedyn.frame_kinematics(model, C0, V, q, r, 3),
                             r + 1, r + 2, ("twist", "position")),
    }
    for name, (call, twist_rows, q_rows, fields) in cases.items():
        exact = call(_cut(V, twist_rows), q[:q_rows].copy())
        for longer in ((V, q), (Vn, qn)):
            got = call(*longer)
            for f in fields:
                assert np.array_equal(getattr(got, f), getattr(exact, f)), (name, f)
    M = liedyn.mass_matrix(model, C0, q[0].copy())
    g = liedyn.gravity_vector(model, C0, q[0].copy())
    Cq = liedyn.coriolis_matrix(model, C0, _cut(V, 1), q[:2].copy())
    for Vl, ql in ((V, q), (Vn, qn)):
        assert np.array_equal(liedyn.mass_matrix(model, C0, ql), M)
        assert np.array_equal(liedyn.gravity_vector(model, C0, ql), g)
        assert np.array_equal(liedyn.coriolis_matrix(model, C0, Vl, ql), Cq)
    J = liedyn.frame_jacobian(model, C0, _cut(V, r), q[:r + 1].copy(), r, 3)
    for Vl, ql in ((V, q), (Vn, qn)):
        assert np.array_equal(liedyn.frame_jacobian(model, C0, Vl, ql, r, 3), J)


def test_too_few_rows_are_refused_with_the_rows_needed():
    C0, V, q = _trajectory(FLOAT, np.random.default_rng(912), rows=3)
    with pytest.raises(ValueError, match=r"^q: expected a jet of 4 rows or more and 4 columns"):
        liedyn.inverse_dynamics(FLOAT, C0, V, q[:3], 1)
    with pytest.raises(ValueError, match=r"^base_twist: expected a jet of 3 rows or more"):
        liedyn.inverse_dynamics(FLOAT, C0, V[:2], np.zeros((4, 4)), 1)
    with pytest.raises(ValueError, match=r"^base_twist: contains NaN or infinite values in its "
                                         r"first 3 rows"):
        bad = np.zeros((5, 6))
        bad[2, 0] = np.nan
        liedyn.inverse_dynamics(FLOAT, C0, bad, np.zeros((4, 4)), 1)
    with pytest.raises(ValueError, match=r"^base_twist: a fixed base does not move"):
        moving = np.zeros((5, 6))
        moving[1, 0] = 1.0
        liedyn.inverse_dynamics(FIXED, None, moving, np.zeros((4, 3)), 1)
    # a fixed base's zero twist rows past those read are not read either
    moving = np.zeros((5, 6))
    moving[4, 0] = 1.0
    a = liedyn.inverse_dynamics(FIXED, None, moving, np.zeros((4, 3)), 1)
    assert np.array_equal(a.tau, liedyn.inverse_dynamics(FIXED, None, None,
                                                         np.zeros((4, 3)), 1).tau)


def test_force_jets_keep_their_exact_shape():
    """Only motion jets are prefixes: a force jet has exactly ``order + 1``
    rows, since a longer one would be the jet of a call of another order."""
    with pytest.raises(ValueError, match=r"^tau: expected a jet of shape \(2, 4\)"):
        liedyn.forward_dynamics(FLOAT, None, np.zeros((1, 6)), np.zeros((2, 4)), 1,
                                tau=np.zeros((3, 4)), base_wrench=np.zeros((2, 6)))


def test_object_arrays_of_plain_numbers_are_numbers():
    """What pandas hands out (``df.to_numpy()`` of mixed int and float
    columns): an object array of Python and NumPy numbers, accepted as
    float64; the same with a bool, a string, a complex number or a date
    among them is still refused."""
    C0, V, q = _trajectory(FLOAT, np.random.default_rng(913), rows=3)
    ref = liedyn.inverse_dynamics(FLOAT, C0, V, q[:3], 0)
    qo = np.empty(q[:3].shape, dtype=object)
    qo[...] = q[:3].tolist()
    qo[0, 0] = np.float32(qo[0, 0])         # a mix of number types, as pandas gives
    qo[1, 1] = int(0)
    q_ref = q[:3].copy()
    q_ref[0, 0] = float(np.float32(q_ref[0, 0]))
    q_ref[1, 1] = 0.0
    Vo = V.astype(object)
    got = liedyn.inverse_dynamics(FLOAT, C0.astype(object), Vo, qo, 0)
    want = liedyn.inverse_dynamics(FLOAT, C0, V, q_ref, 0)
    assert np.array_equal(got.tau, want.tau) and np.array_equal(got.base_wrench,
                                                                 want.base_wrench)
    assert not np.array_equal(ref.tau, want.tau)        # the edits above were read
    for bad, what in ((True, "objects"), ("1.0", "objects"), (1j, "objects"),
                      (np.datetime64("2026-01-01"), "objects")):
        qb = qo.copy()
        qb[0, 1] = bad
        with pytest.raises(TypeError, match=rf"^q: expected a real numeric array, got {what}"):
            liedyn.inverse_dynamics(FLOAT, C0, Vo, qb, 0)


@pytest.mark.parametrize("model", [FLOAT, FIXED], ids=["floating", "fixed"])
def test_an_empty_batch_gives_empty_results_of_the_right_shapes(model):
    r, n = 2, model.n_joints
    V = np.zeros((0, r + 2, 6)) if model.floating_base else None
    inv = liedyn.inverse_dynamics_batch(model, np.zeros((0, 4, 4)), V, np.zeros((0, r + 3, n)), r)
    assert inv.tau.shape == (0, r + 1, n) and inv.base_wrench.shape == (0, r + 1, 6)
    fwd = liedyn.forward_dynamics_batch(
        model, None, None if V is None else V[:, :1], np.zeros((0, 2, n)), r,
        tau=np.zeros((0, r + 1, n)), base_wrench=np.zeros((0, r + 1, 6)) if V is not None else None)
    assert fwd.q.shape == (0, r + 3, n) and fwd.base_twist.shape == (0, r + 2, 6)
    assert fwd.base_wrench.shape == (0, r + 1, 6) and fwd.tau.shape == (0, r + 1, n)
    with pytest.raises(ValueError, match=r"^base_pose: expected 0 samples"):
        liedyn.inverse_dynamics_batch(model, np.zeros((2, 4, 4)), V, np.zeros((0, r + 3, n)), r)


def test_a_batch_shares_one_base_pose():
    """A single ``(4, 4)`` pose stands for every sample: the same numbers as
    the pose repeated; a bad shared pose is named."""
    rng = np.random.default_rng(914)
    r, B = 1, 40
    C0 = liedyn.se3.exp(rng.normal(size=6))
    V = rng.normal(size=(B, r + 2, 6))
    q = rng.normal(size=(B, r + 3, FLOAT.n_joints))
    shared = liedyn.inverse_dynamics_batch(FLOAT, C0, V, q, r)
    repeated = liedyn.inverse_dynamics_batch(FLOAT, np.repeat(C0[None], B, 0), V, q, r)
    assert np.array_equal(shared.tau, repeated.tau)
    assert np.array_equal(shared.base_wrench, repeated.base_wrench)
    fs = liedyn.forward_dynamics_batch(FLOAT, C0, V[:, :1], q[:, :2], r, tau=shared.tau,
                                       base_wrench=shared.base_wrench)
    assert np.abs(fs.q - q).max() < 1e-8
    with pytest.raises(ValueError, match=r"^sample 0: base_pose: not in SE\(3\)"):
        liedyn.inverse_dynamics_batch(FLOAT, 2 * C0, V, q, r)
    with pytest.raises(ValueError, match=r"^base_pose: expected shape \(B, 4, 4\)"):
        liedyn.inverse_dynamics_batch(FLOAT, C0[:3], V, q, r)
