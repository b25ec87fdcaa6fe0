"""Generated C of the traced functions (SPEC §15.4): compiled with the system
compiler, loaded with ``casadi.external`` and run by the C timing program,
it gives the kernels' numbers, and both refuse inputs of another shape.
Compiling and loading run in a fresh interpreter (a faulty shared library
must not take the test run down); the function is small (a 4-body tree,
order 1) so that it compiles in seconds."""

import shutil

import pytest

pytest.importorskip("casadi")

from tests.helpers import run_python                               # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")


@pytest.mark.slow
def test_generated_c_equals_kernels(tmp_path):
    out = run_python(f"""
        import numpy as np, liedyn
        from liedyn import symbolic as lds
        from models.trees import random_tree
        rng = np.random.default_rng(0)
        model = random_tree(rng, 4, floating_base=True, armature=True, damping=True)
        r = 1
        C0 = liedyn.se3.exp(rng.normal(size=6) * 0.5)
        V = rng.normal(size=(r + 2, 6)) * 0.5
        q = rng.normal(size=(r + 3, 3)) * 0.5
        inv = liedyn.inverse_dynamics(model, C0, V, q, r)
        f = lds.inverse_dynamics_function(model, r)
        g = lds.compile_function(f, {str(tmp_path)!r})
        assert g.name_in() == f.name_in() and g.name_out() == f.name_out()
        got = {{k: np.asarray(v.full()) for k, v in g(base_pose=C0, base_twist=V, q=q).items()}}
        rel = lambda a, d: np.max(np.abs(a - d)) / np.max(np.abs(d))
        e1 = max(rel(got["tau"], inv.tau), rel(got["base_wrench"], inv.base_wrench))
        exe, _, _ = lds.build_timer(f, {str(tmp_path)!r})
        outs, times = lds.run_timer(f, exe, dict(base_pose=C0, base_twist=V, q=q), samples=3,
                                    calls=10)
        e2 = np.max(np.abs(outs["tau"] - inv.tau)) / np.max(np.abs(inv.tau))
        print(e1, e2, len(times), int(np.all(times > 0)))
        for bad in (dict(q=q[:, :1]), dict(base_twist=V[:, :3]), dict(q=q.T), dict(q=q[:2])):
            args = dict(base_pose=C0, base_twist=V, q=q)
            args.update(bad)
            for call in (g, lambda **a: lds.run_timer(f, exe, a)):
                try:
                    call(**args)
                    print("accepted", *bad)
                except ValueError as err:
                    print(str(err).split(":")[0])
    """, timeout=600)
    lines = out.splitlines()
    e1, e2, n, positive = lines[0].split()
    assert float(e1) <= 1e-12 and float(e2) <= 1e-12
    assert int(n) == 3 and int(positive) == 1
    # the compiled function and the timing program refuse a wrong shape, naming the input
    assert lines[1:] == ["q", "q", "base_twist", "base_twist", "q", "q", "q", "q"]


def test_codegen_arguments(tmp_path):
    import liedyn.symbolic as lds
    with pytest.raises(TypeError, match="f"):
        lds.generate_c("not a function", tmp_path)
    with pytest.raises(RuntimeError, match="compiler"):
        import casadi as ca
        x = ca.SX.sym("x")
        lds.compile_c(ca.Function("f", [x], [x * x]), tmp_path, compiler="no-such-cc")


def _square():
    import casadi as ca
    x = ca.SX.sym("x")
    return ca.Function("square", [x], [x * x])


def test_codegen_refuses_a_directory_others_could_change(tmp_path):
    """Generated code is compiled and loaded, so a directory another user can
    write to, or one below such a folder, or (as root) another user's, is
    refused before anything is written, with a ValueError naming
    ``directory``; a sticky shared folder is fine above a folder of one's own."""
    import os
    import liedyn.symbolic as lds
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    # (directory, the folder named as the reason, why)
    cases = [(shared, shared, "is writable by other users"),
             (shared / "below", shared, "is writable by other users")]
    if os.getuid() == 0:
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o700)
        os.chown(foreign, os.getuid() + 4321, os.getuid() + 4321)
        cases.append((foreign, foreign, "belongs to uid"))
    for directory, named, reason in cases:
        with pytest.raises(ValueError, match=f"^directory: {named} {reason}"):
            lds.generate_c(_square(), directory)
        with pytest.raises(ValueError, match="^directory: "):
            lds.compile_function(_square(), directory)
    assert os.listdir(shared) == []
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    assert lds.generate_c(_square(), sticky / "mine").is_file()


def test_codegen_makes_private_folders_and_whole_files(tmp_path):
    """Missing folders are created with mode 0700; the generated, compiled and
    run files appear under their own names only (no temporary files left),
    and the compiled function computes x²."""
    import os
    import liedyn.symbolic as lds
    out = tmp_path / "a" / "b"
    g = lds.compile_function(_square(), out)
    assert float(g(3.0)) == 9.0
    exe, _, _ = lds.build_timer(_square(), out)
    outs, times = lds.run_timer(_square(), exe, {"i0": 2.0}, samples=2, calls=5)
    assert float(outs["o0"][0, 0]) == 4.0 and len(times) == 2
    for d in (tmp_path / "a", out):
        assert os.stat(d).st_mode & 0o777 == 0o700, oct(os.stat(d).st_mode)
    assert sorted(os.listdir(out)) == ["square.c", "square.h", "square.so", "square_timer",
                                       "square_timer.c"]
