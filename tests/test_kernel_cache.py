"""The on-disk cache of compiled kernels.

Every check runs fresh interpreters with their own ``XDG_CACHE_HOME`` and
``TMPDIR``: a damaged entry is discarded with one warning and recompiled, a
folder that another user owns or can write to is refused, the temporary
fallback cannot be imported as a package, folders of older source versions
are pruned, the first compilation is announced once, and
``python -m liedyn.compile`` leaves a cache that later processes use.

Cold compilations are kept small: apart from the one test of
``python -m liedyn.compile``, the children compile ``liedyn.se3.exp`` (two
kernels, about a second). Its result is checked against SciPy's matrix
exponential of the twist matrix, an independent reference.
"""

import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from numba.core.caching import _CacheLocator

import liedyn

ROOT = Path(__file__).resolve().parents[1]
UID = os.getuid()
OTHER_UID = UID + 4321
NOTICE = "liedyn: compiling numba kernels"
as_root = pytest.mark.skipif(UID != 0, reason="giving a folder to another user needs root")

# se3.exp by an ordinary call, or (argument "compile") by compiling the kernel
# for one signature and calling the compiled entry point directly.
EXP_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from scipy.linalg import expm
    import liedyn

    V = np.array([0.3, -0.2, 0.5, 1.0, -2.0, 0.5])
    if sys.argv[1] == "call":
        C = liedyn.se3.exp(V)
    else:
        from numba import types
        from liedyn.se3 import _exp_se3_into
        entry = _exp_se3_into.compile((types.float64[::1], types.float64, types.float64[:, ::1]))
        C = np.empty((4, 4))
        entry(V, 1.0, C)
    w, v = V[:3], V[3:]
    X = np.zeros((4, 4))
    X[:3, :3] = [[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]]
    X[:3, 3] = v
    print("error", np.max(np.abs(C - expm(X))))
""")


def run(args, xdg, tmp, cwd=None, pythonpath=True, timeout=300):
    """Run ``python *args`` with its own cache locations; returns the CompletedProcess."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NUMBA_") and k not in ("PYTHONWARNINGS", "PYTHONPATH")}
    env.update(XDG_CACHE_HOME=str(xdg), TMPDIR=str(tmp))
    if pythonpath:
        env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, *args], env=env, cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=timeout)


def run_exp(xdg, tmp, style="call"):
    """Run EXP_CHILD; assert it succeeded with the reference result; return its stderr."""
    out = run(["-c", EXP_CHILD, style], xdg, tmp)
    assert out.returncode == 0, out.stderr[-3000:]
    err = float(out.stdout.split()[-1])
    assert err < 1e-12, f"se3.exp differs from expm by {err}"  # both are exact to ~1e-15
    return out.stderr


def warnings_in(stderr):
    return [line for line in stderr.splitlines() if "RuntimeWarning" in line]


def unusable(tmp_path):
    """An XDG_CACHE_HOME under a regular file: it cannot be created, even by root."""
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    return blocker / "cache"


def cache_files(root):
    return sorted(Path(root).rglob("*.nbi")) + sorted(Path(root).rglob("*.nbc"))


def dirs(tmp_path):
    xdg, tmp = tmp_path / "xdg", tmp_path / "tmp"
    tmp.mkdir()
    return xdg, tmp


# ------------------------------------------------------------ damaged entries --

@pytest.fixture(scope="module")
def warm_exp(tmp_path_factory):
    """An XDG_CACHE_HOME holding the compiled kernels of se3.exp."""
    base = tmp_path_factory.mktemp("warm_exp")
    xdg, tmp = base / "xdg", base / "tmp"
    tmp.mkdir()
    run_exp(xdg, tmp)
    assert cache_files(xdg)
    return xdg


def _damage(path, kind, rng):
    data = path.read_bytes()
    if kind == "truncated":
        data = data[:len(data) // 2]
    elif kind == "garbage":
        data = rng.bytes(len(data))
    elif kind == "flipped":      # one byte of the payload; unpickling alone may not notice
        i = len(data) // 2
        data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]
    elif kind == "empty":
        data = b""
    elif kind == "foreign pickle":
        data = pickle.dumps({"not": "a kernel"})
    path.write_bytes(data)


# (files, damage, how the kernel is reached); the explicit-compile path on one
# data and one index case
DAMAGE = [("data", k, "call") for k in ("truncated", "garbage", "flipped", "empty",
                                        "foreign pickle")]
DAMAGE += [("index", k, "call") for k in ("truncated", "garbage", "empty")]
DAMAGE += [("data", "flipped", "compile"), ("index", "garbage", "compile")]


@pytest.mark.parametrize("files,kind,style", DAMAGE)
def test_damaged_entries_are_discarded_and_recompiled(warm_exp, tmp_path, files, kind, style):
    xdg, tmp = dirs(tmp_path)
    shutil.copytree(warm_exp, xdg, symlinks=True)
    rng = np.random.default_rng(sum(map(ord, files + kind)))
    for f in cache_files(xdg):
        if f.suffix == (".nbc" if files == "data" else ".nbi"):
            _damage(f, kind, rng)
    folder = next(xdg.glob("liedyn/numba-*"))
    # se3.exp's kernels come from two source directories (liedyn/ for the
    # input checks, liedyn/spatial/ for the exponential), so the damage spans
    # two sub-folders of the cache: still one warning
    assert len({f.parent for f in cache_files(xdg)}) == 2, cache_files(xdg)

    stderr = run_exp(xdg, tmp, style)
    found = warnings_in(stderr)
    assert len(found) == 1 and "discarded" in found[0] and str(folder) in found[0], stderr
    assert stderr.count(NOTICE) == 1, stderr          # it recompiles, and says so once

    stderr = run_exp(xdg, tmp, style)                 # the entries were written afresh
    assert "liedyn:" not in stderr, stderr


# ---------------------------------------------------------- untrusted folders --

def _foreign(path):
    path.mkdir(mode=0o700)
    os.chown(path, OTHER_UID, OTHER_UID)
    return f"belongs to uid {OTHER_UID}"


def _world_writable(path):
    path.mkdir()
    os.chmod(path, 0o777)
    return "is writable by other users"


def _symlink(path):
    target = path.parent / "elsewhere"
    target.mkdir(mode=0o700)
    path.symlink_to(target)
    return "is a symbolic link"


@pytest.mark.parametrize("make", [pytest.param(_foreign, marks=as_root), _world_writable,
                                  _symlink])
def test_untrusted_temporary_folder_is_refused(tmp_path, make):
    """With the user cache unusable, a temporary folder that is not private to
    the user is refused: one warning, no cache files anywhere, correct results."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    xdg = unusable(tmp_path)
    folder = tmp / f"liedyn-kernels-{UID}"
    reason = make(folder)

    stderr = run_exp(xdg, tmp)
    found = warnings_in(stderr)
    assert len(found) == 1 and str(folder) in found[0] and reason in found[0], stderr
    assert "without a disk cache" in found[0], stderr
    assert not cache_files(tmp_path), cache_files(tmp_path)


@pytest.mark.parametrize("make", [pytest.param(_foreign, marks=as_root), _world_writable])
def test_untrusted_user_cache_folder_is_refused(tmp_path, make):
    """A user-cache ``liedyn`` folder that is not private is refused; the
    per-user temporary folder is used instead."""
    xdg, tmp = dirs(tmp_path)
    xdg.mkdir()
    reason = make(xdg / "liedyn")

    stderr = run_exp(xdg, tmp)
    found = warnings_in(stderr)
    assert len(found) == 1 and str(xdg / "liedyn") in found[0] and reason in found[0], stderr
    assert not cache_files(xdg)
    assert cache_files(tmp / f"liedyn-kernels-{UID}")


def test_temporary_folder_is_private_and_cannot_shadow_the_package(tmp_path):
    """The temporary fallback is created with mode 0700 under a name that is
    not an identifier, so a script run from the temporary folder still
    imports the real package (as installed: no PYTHONPATH)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    xdg = unusable(tmp_path)
    run_exp(xdg, tmp)
    made = os.listdir(tmp)
    (tmp / "script.py").write_text("import liedyn\nliedyn.inverse_dynamics\n"
                                   "print(liedyn.__file__)\n")
    out = run(["script.py"], xdg, tmp, cwd=tmp, pythonpath=False, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("__init__.py"), out.stdout

    assert made == [f"liedyn-kernels-{UID}"], made
    assert not any(name.isidentifier() for name in made)
    st = os.lstat(tmp / made[0])
    assert st.st_uid == UID and st.st_mode & 0o777 == 0o700, oct(st.st_mode)
    assert cache_files(tmp / made[0])


# ------------------------------------------------------------------- pruning --

def test_older_cache_folders_are_pruned(tmp_path):
    """At its first compilation a process removes this installation's
    sub-folders of older source versions and folders unused for 30 days; it
    keeps the current folder, other installations' recent folders, names not
    of its pattern, other users' folders, and never follows links."""
    xdg, tmp = dirs(tmp_path)
    top = xdg / "liedyn"
    top.mkdir(parents=True, mode=0o700)
    ours = _CacheLocator.get_suitable_cache_subpath(liedyn.se3.__file__)
    other = "liedyn_" + "0" * 40
    hour, days40 = time.time() - 3600, time.time() - 40 * 86400

    def plant(path, subs, mtime):
        for sub in subs:
            (path / sub).mkdir(parents=True)
            (path / sub / "k-1.py311.nbi").write_bytes(b"x")
            os.utime(path / sub / "k-1.py311.nbi", (mtime, mtime))
            os.utime(path / sub, (mtime, mtime))
        os.utime(path, (mtime, mtime))
        return path

    old_ours = plant(top / "numba-00000000000000a1", [ours], hour)
    shared = plant(top / "numba-00000000000000a2", [ours, other], hour)
    stale = plant(top / "numba-00000000000000a3", [other], days40)
    in_use = plant(top / "numba-00000000000000a4", [other], hour)
    not_pattern = plant(top / "numba-keep-me", [ours], days40)
    target = plant(tmp_path / "linked", [ours], days40)
    link = top / "numba-00000000000000a5"
    link.symlink_to(target)
    foreign = None
    if UID == 0:
        foreign = plant(top / "numba-00000000000000a6", [ours], days40)
        os.chown(foreign, OTHER_UID, OTHER_UID)

    run_exp(xdg, tmp)
    current = [p for p in top.iterdir() if p.name not in {
        "numba-00000000000000a2", "numba-00000000000000a4", "numba-00000000000000a5",
        "numba-00000000000000a6", "numba-keep-me"}]
    assert len(current) == 1 and cache_files(current[0]), current
    assert not old_ours.exists() and not stale.exists()
    assert sorted(p.name for p in shared.iterdir()) == [other]
    assert (in_use / other).is_dir() and (not_pattern / ours).is_dir()
    assert link.is_symlink() and (target / ours / "k-1.py311.nbi").is_file()
    if foreign is not None:
        assert (foreign / ours).is_dir()


# ------------------------------------------- first-compile notice, ahead of time --

def test_first_compilation_is_announced_once(tmp_path):
    """A cold cache prints one line naming the cache folder, the kernel group
    being compiled and the way to compile ahead of time; a warm one prints
    nothing."""
    xdg, tmp = dirs(tmp_path)
    stderr = run_exp(xdg, tmp)
    lines = [line for line in stderr.splitlines() if NOTICE in line]
    assert len(lines) == 1, stderr
    assert str(xdg / "liedyn" / "numba-") in lines[0] and "python -m liedyn.compile" in lines[0]
    assert " kernels (" in lines[0] and "liedyn.spatial.se3 kernels" in stderr, stderr
    compiling = [line for line in stderr.splitlines() if line.startswith("liedyn: compiling")]
    assert len(compiling) == len(set(compiling)) == len(stderr.splitlines()), stderr
    st = os.stat(xdg / "liedyn")
    assert st.st_mode & 0o077 == 0, oct(st.st_mode)   # created private

    assert run_exp(xdg, tmp) == ""


def test_each_kernel_group_compiled_says_so_once(tmp_path):
    """A first call that compiles several groups (inverse dynamics: its
    kernels and the kinematics, workspace and checks ones it calls) prints
    the notice once, naming the first group, then one short line per further
    group, so that a long first call says what it is compiling."""
    xdg, tmp = dirs(tmp_path)
    code = textwrap.dedent("""
        import numpy as np
        import liedyn
        from models.trees import benchmark_tree
        m = benchmark_tree(2, 3)
        rng = np.random.default_rng(0)
        liedyn.inverse_dynamics(m, None, rng.normal(size=(3, 6)), rng.normal(size=(4, m.n_joints)), 1)
    """)
    out = run(["-c", code], xdg, tmp)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [line for line in out.stderr.splitlines() if line.startswith("liedyn: compiling")]
    assert sum(NOTICE in line for line in lines) == 1 and NOTICE in lines[0], out.stderr
    groups = [line.split(" kernels (")[0].split()[-1] for line in lines]
    assert len(groups) == len(set(groups)) and "liedyn.algorithm.inverse" in groups, out.stderr
    assert all(len(line) < 100 for line in lines[1:]), out.stderr
    assert run(["-c", code], xdg, tmp).stderr == ""


GROUPS = ["inverse dynamics", "forward dynamics"]   # a cold compile of all takes minutes


def test_compile_ahead_fills_the_cache(tmp_path):
    """``python -m liedyn.compile`` compiles the kernel groups it is given,
    reporting each; a second run and a process using those algorithms
    through the public API compile nothing."""
    xdg, tmp = dirs(tmp_path)
    out = run(["-m", "liedyn.compile", "--only", *GROUPS], xdg, tmp, timeout=1200)
    assert out.returncode == 0, out.stderr[-3000:]
    groups = [line for line in out.stdout.splitlines() if line.endswith(" compiled")]
    assert [line.split()[0] for line in groups] == ["model", "inverse", "forward"], out.stdout
    assert sum(int(line.split()[-2]) for line in groups) > 5, out.stdout
    assert out.stdout.splitlines()[-1].startswith("done: "), out.stdout
    assert NOTICE not in out.stderr, out.stderr
    bad = run(["-m", "liedyn.compile", "--only", "nothing"], xdg, tmp)
    assert bad.returncode != 0 and "only: unknown kernel groups ['nothing']" in bad.stderr

    again = run(["-m", "liedyn.compile", "--only", *GROUPS], xdg, tmp)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.splitlines()[-1].startswith("done: 0 kernels compiled"), again.stdout

    use = textwrap.dedent("""
        import numpy as np
        import liedyn
        from models.trees import benchmark_tree
        for floating in (True, False):
            m = benchmark_tree(2, 3, floating_base=floating)
            r = 2
            rng = np.random.default_rng(0)
            Vb = rng.normal(size=(r + 2, 6)) if floating else None
            q = rng.normal(size=(r + 3, m.n_joints))
            res = liedyn.inverse_dynamics(m, None, Vb, q, r)
            fd = liedyn.forward_dynamics(m, None, None if Vb is None else Vb[:1], q[:2], r,
                                         tau=res.tau,
                                         base_wrench=res.base_wrench if floating else None)
            print(np.max(np.abs(fd.q - q)))
    """)
    used = run(["-c", use], xdg, tmp)
    assert used.returncode == 0, used.stderr[-3000:]
    assert NOTICE not in used.stderr, used.stderr
    assert max(map(float, used.stdout.split())) < 1e-6, used.stdout   # a round trip, sanity
