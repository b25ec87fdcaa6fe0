"""Functions of ``structure="shared"`` (SPEC §15.4): the per-body steps kept
as CasADi function calls, so the generated C has each step once.

References: the compiled kernels (``liedyn.inverse_dynamics`` and
``liedyn.forward_dynamics``, a different implementation), CasADi's own
evaluation of the same graph and of the flat graph, and central differences
of the kernels for the Jacobians.

Tolerances: values against the kernels 1e-12 relative to the largest entry
of each jet row (the flat functions' bound, tests/test_symbolic.py; the
shared graph does the same operations without folding the model's zeros);
Jacobians against central differences of the kernels with step 1e-5, 1e-6
relative to 1 + max|entry| (truncation ~h² · |third derivative| ~ 1e-9), and
against the flat graph's Jacobian 1e-12 (both are exact derivatives of
the same operations; round-off only).
"""

import shutil
import warnings

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

import liedyn                                                      # noqa: E402
from liedyn import se3                                             # noqa: E402
from liedyn import symbolic as lds                                 # noqa: E402
from models.trees import random_tree                               # noqa: E402
from tests.helpers import run_python                               # noqa: E402

REL = 1e-12


def _row_rel(actual, desired):
    """Per jet row: max |a − d| / max |d| (rows with d = 0: max |a|)."""
    a, d = np.asarray(actual, float), np.asarray(desired, float)
    assert a.shape == d.shape and np.all(np.isfinite(a)), (a.shape, d.shape)
    scale = np.max(np.abs(d), axis=-1)
    err = np.max(np.abs(a - d), axis=-1)
    return np.max(np.where(scale > 0, err / np.where(scale > 0, scale, 1.0), err))


def _num(out):
    return {k: np.asarray(v.full()) for k, v in out.items()}


@pytest.mark.parametrize("floating", [True, False])
def test_shared_functions_equal_kernels(floating):
    rng = np.random.default_rng(71)
    model = random_tree(rng, 7, floating_base=floating, armature=True, damping=True)
    R = 3
    C0 = se3.exp(rng.normal(size=6) * 0.5) if floating else model.home_pose.copy()
    Vb = rng.normal(size=(R + 2, 6)) * 0.5 if floating else None
    q = rng.normal(size=(R + 3, model.n_joints)) * 0.5
    Wa = rng.normal(size=(R + 1, model.n_bodies, 6)) * 0.5
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, R, applied=Wa)
    f = lds.inverse_dynamics_function(model, R, applied=True, structure="shared")
    assert f.is_a("MXFunction")
    ins = dict(base_pose=C0, q=q, applied=Wa.reshape(R + 1, -1))
    if floating:
        ins["base_twist"] = Vb
    out = _num(f(**ins))
    assert _row_rel(out["tau"], inv.tau) <= REL
    assert _row_rel(out["base_wrench"], inv.base_wrench) <= REL
    g = lds.forward_dynamics_function(model, R, applied=True, structure="shared")
    gin = dict(base_pose=C0, q=q[:2], tau=inv.tau, applied=Wa.reshape(R + 1, -1))
    if floating:
        gin.update(base_twist=Vb[:1], base_wrench=inv.base_wrench)
    out = _num(g(**gin))
    # the low rows of the forward map are well conditioned (tests/test_symbolic.py)
    assert _row_rel(out["q"][:4], q[:4]) <= 1e-11
    with pytest.raises(ValueError, match="q"):          # the shapes are checked as for flat
        f(**dict(ins, q=q[:, :-1]))


def test_shared_jacobian_against_central_differences_and_flat():
    rng = np.random.default_rng(72)
    model = random_tree(rng, 6, floating_base=True, armature=True, damping=True)
    R = 2
    C0 = se3.exp(rng.normal(size=6) * 0.5)
    Vb = rng.normal(size=(R + 2, 6)) * 0.5
    q = rng.normal(size=(R + 3, model.n_joints)) * 0.5
    vals = dict(nominal_pose=C0, xi=np.zeros(6), base_twist=Vb, q=q)
    wrt = ("q", "xi", "base_twist")                     # not in input order: columns by name
    f = lds.inverse_dynamics_function(model, R, pose="minimal", structure="shared")
    flat = lds.jacobian_function(lds.inverse_dynamics_function(model, R, pose="minimal"),
                                 ("tau", "base_wrench"), wrt)
    ref = _num(flat(**vals))
    h = 1e-5
    for directions in (1, 5):
        J = lds.jacobian_function(f, ("tau", "base_wrench"), wrt, directions=directions)
        assert J.name_out() == flat.name_out()
        got = _num(J(**vals))
        for k in ref:
            assert got[k].shape == ref[k].shape
            assert np.max(np.abs(got[k] - ref[k])) <= REL * (1 + np.max(np.abs(ref[k]))), k
        for w in wrt:
            u = rng.normal(size=f.size_in(w))

            def numeric(x, w=w):
                kw = dict(vals)
                kw[w] = x.reshape(np.shape(vals[w]))
                inv = liedyn.inverse_dynamics(model, C0 @ se3.exp(kw["xi"]), kw["base_twist"],
                                              kw["q"], R)
                return np.concatenate([inv.tau.ravel(), inv.base_wrench.ravel()])

            x = np.asarray(vals[w], float).reshape(u.shape)
            fd = (numeric(x + h * u) - numeric(x - h * u)) / (2 * h)
            ad = np.concatenate([got[f"d{o}_d{w}"] @ u.ravel() for o in ("tau", "base_wrench")])
            assert np.max(np.abs(ad - fd)) / (1.0 + np.max(np.abs(fd))) <= 1e-6, (w, directions)


def test_shared_c_has_each_step_once(tmp_path):
    """The C of a shared function holds one definition per distinct step, so
    a tree of three times the bodies adds calls, not step code; the flat C
    grows with the bodies."""
    rng = np.random.default_rng(73)
    sizes = {}
    for N in (5, 15):
        model = random_tree(rng, N, floating_base=True)
        for structure in ("flat", "shared"):
            f = lds.inverse_dynamics_function(model, 2, structure=structure,
                                              name=f"inv_{structure}_{N}")
            text = lds.generate_c(f, tmp_path).read_text()
            sizes[structure, N] = len(text)
            if structure == "shared":
                # kinematics (revolute, prismatic), own wrench, projection: each at most once
                for step in ("kin3r", "kin3p", "own2", "proj2"):
                    assert text.count(f"/* {step}:(") <= 1, step
                assert text.count("/* own2:(") == 1
    assert sizes["shared", 15] < 1.5 * sizes["shared", 5], sizes
    assert sizes["flat", 15] > 2.0 * sizes["flat", 5], sizes


def test_structure_and_directions_arguments():
    model = random_tree(np.random.default_rng(0), 3)
    for fn in (lds.inverse_dynamics_function, lds.forward_dynamics_function):
        with pytest.raises(ValueError, match="^structure"):
            fn(model, 1, structure="tree")
    f = lds.inverse_dynamics_function(model, 1, structure="shared")
    with pytest.raises(TypeError, match="^directions"):
        lds.jacobian_function(f, "tau", "q", directions=2.0)
    with pytest.raises(ValueError, match="^directions"):
        lds.jacobian_function(f, "tau", "q", directions=0)


def test_compile_prediction_and_warning(tmp_path):
    """The prediction grows with the C and with the optimisation level; a
    compile predicted beyond ``warn_after`` warns first (size and time in
    the message), one below does not; a bad ``warn_after`` is refused."""
    rng = np.random.default_rng(74)
    small = lds.inverse_dynamics_function(random_tree(rng, 3), 0, name="small")
    big = lds.inverse_dynamics_function(random_tree(rng, 12), 3, name="big")
    ps, pb = (lds.predict_compile(lds.generate_c(f, tmp_path)) for f in (small, big))
    assert 0 < ps.bytes < pb.bytes and 0 < ps.seconds < pb.seconds
    src = tmp_path / "big.c"
    assert (lds.predict_compile(src, ("-O0",)).seconds < lds.predict_compile(src, ("-O1",)).seconds
            < lds.predict_compile(src, ("-O2",)).seconds)
    with pytest.raises(TypeError, match="^warn_after"):
        lds.compile_c(small, tmp_path, warn_after="soon")
    with pytest.raises(ValueError, match="^warn_after"):
        lds.compile_c(small, tmp_path, warn_after=-1.0)
    if shutil.which("cc") is None:
        return
    with pytest.warns(lds.LongCompileWarning, match=r"small\.c \(0\.\d\d MB of C.*predicted"):
        lds.compile_c(small, tmp_path, warn_after=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", lds.LongCompileWarning)
        lds.compile_c(small, tmp_path, warn_after=1e6)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_compiled_shared_function_equals_kernels_and_casadi(tmp_path):
    """The generated C of a shared function and of its Jacobian, compiled and
    loaded in a fresh interpreter, gives the kernels' values and CasADi's
    own evaluation of the same graph."""
    out = run_python(f"""
        import numpy as np, liedyn
        from liedyn import symbolic as lds
        from models.trees import random_tree
        rng = np.random.default_rng(75)
        model = random_tree(rng, 6, floating_base=True, armature=True, damping=True)
        r = 2
        C0 = liedyn.se3.exp(rng.normal(size=6) * 0.5)
        V = rng.normal(size=(r + 2, 6)) * 0.5
        q = rng.normal(size=(r + 3, model.n_joints)) * 0.5
        inv = liedyn.inverse_dynamics(model, C0, V, q, r)
        f = lds.inverse_dynamics_function(model, r, structure="shared")
        J = lds.jacobian_function(f, ("tau", "base_wrench"), ("q", "base_twist"), directions=3)
        ins = dict(base_pose=C0, base_twist=V, q=q)
        rel = lambda a, d: np.max(np.abs(a - d)) / np.max(np.abs(d))
        for fn in (f, J):
            g = lds.compile_function(fn, {str(tmp_path)!r}, flags=("-O1",))
            got = {{k: np.asarray(v.full()) for k, v in g(**ins).items()}}
            own = {{k: np.asarray(v.full()) for k, v in fn(**ins).items()}}
            print(max(rel(got[k], own[k]) for k in own))
            if fn is f:
                print(max(rel(got["tau"], inv.tau), rel(got["base_wrench"], inv.base_wrench)))
    """, timeout=600)
    e_f, e_kernels, e_J = (float(x) for x in out.split())
    assert e_f <= REL and e_kernels <= REL and e_J <= REL, out


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_timer_returns_sparse_outputs_whole(tmp_path):
    """A flat Jacobian's outputs are sparse: the timing program writes their
    nonzeros, and run_timer returns them as the dense matrices CasADi's
    evaluation gives (it used to refuse them: "cannot reshape")."""
    rng = np.random.default_rng(76)
    model = random_tree(rng, 4, floating_base=True)
    f = lds.inverse_dynamics_function(model, 1)
    J = lds.jacobian_function(f, ("tau", "base_wrench"), ("q", "base_twist"))
    assert any(J.sparsity_out(k).nnz() < J.numel_out(k) for k in J.name_out())
    ins = dict(base_pose=se3.exp(rng.normal(size=6)), base_twist=rng.normal(size=(3, 6)),
               q=rng.normal(size=(4, model.n_joints)))
    exe, _, _ = lds.build_timer(J, tmp_path, flags=("-O0",))
    outs, _ = lds.run_timer(J, exe, ins, samples=1, calls=1)
    ref = _num(J(**ins))
    for k in ref:
        assert outs[k].shape == ref[k].shape
        assert np.max(np.abs(outs[k] - ref[k])) <= REL * (1 + np.max(np.abs(ref[k]))), k
