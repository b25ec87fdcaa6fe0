"""The on-disk cache of compiled kernels.

Every check runs fresh interpreters with their own ``XDG_CACHE_HOME`` and
``TMPDIR``: a damaged entry is discarded with one warning and recompiled, a
planted one (a pickle whose unpickling would leave a marker file) is never
unpickled, a folder that another user owns or can write to, or one with
such a folder above it, is refused, and so is a folder swapped after the
first call of a process; the temporary fallback cannot be imported as a
package; a second installation of the same sources reuses the kernels,
and a kernel defined outside the package is keyed on its file; folders of
other versions are pruned; the first compilation is announced
once; ``NUMBA_CACHE_DIR`` is honoured; and ``python -m liedyn.compile``
leaves a cache that later processes use.

Cold compilations are kept small: apart from the one test of
``python -m liedyn.compile``, the children compile ``liedyn.se3.exp`` and
``liedyn.se3.log`` (three kernels, about two seconds). Their results are
checked against SciPy's matrix exponential and logarithm of the twist
matrix, independent references.
"""

import hashlib
import hmac
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
UID = os.getuid()
OTHER_UID = UID + 4321
NOTICE = "liedyn: compiling numba kernels"
MAGIC = b"liedyn kernel cache 1\n"      # the cache files' format (see liedyn._jit)
as_root = pytest.mark.skipif(UID != 0, reason="giving a folder to another user needs root")

# se3.exp by an ordinary call, or (argument "compile") by compiling the kernel
# for one signature and calling the compiled entry point directly; then se3.log
# (with "swap" and a cache root, the root's liedyn folder is first replaced by
# a planted copy, see plant(), another user's with "other owner"; with
# "parent opened" the root is made writable by all and its files planted).
# Prints the largest error against SciPy, the kernels compiled, the folder used.
EXP_CHILD = textwrap.dedent("""
    import os, shutil, sys
    import numpy as np
    from scipy.linalg import expm, logm
    import liedyn
    from liedyn import _jit

    V = np.array([0.3, -0.2, 0.5, 1.0, -2.0, 0.5])
    if sys.argv[1] == "compile":
        from numba import types
        from liedyn.se3 import _exp_se3_into
        entry = _exp_se3_into.compile((types.float64[::1], types.float64, types.float64[:, ::1]))
        C = np.empty((4, 4))
        entry(V, 1.0, C)
    else:
        C = liedyn.se3.exp(V)
    if sys.argv[1] == "swap":
        sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
        from test_kernel_cache import plant
        top = os.path.join(sys.argv[2], "liedyn")
        if sys.argv[4] == "parent opened":
            os.chmod(sys.argv[2], 0o777)
        else:
            os.rename(top, top + ".away")
            shutil.copytree(top + ".away", top)
        plant(top, sys.argv[3], sys.argv[4] == "other owner")
    w, v = V[:3], V[3:]
    X = np.zeros((4, 4))
    X[:3, :3] = [[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]]
    X[:3, 3] = v
    err = np.max(np.abs(C - expm(X)))
    err = max(err, np.max(np.abs(liedyn.se3.log(C) - V)), np.max(np.abs(logm(C).real - X)))
    print(liedyn.__file__, _jit.cache_folder())
    print("compiled", _jit.compiled_count())
    print("error", err)
""")


def run(args, xdg, tmp, cwd=None, pythonpath=ROOT, timeout=300, env=None):
    """Run ``python *args`` with its own cache locations; returns the CompletedProcess."""
    full = {k: v for k, v in os.environ.items()
            if not k.startswith("NUMBA_") and k not in ("PYTHONWARNINGS", "PYTHONPATH")}
    full.update(XDG_CACHE_HOME=str(xdg), TMPDIR=str(tmp), **(env or {}))
    if pythonpath:
        full["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([sys.executable, *args], env=full, cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=timeout)


def run_exp(xdg, tmp, style="call", *extra, pythonpath=ROOT, env=None):
    """Run EXP_CHILD; assert it succeeded with the reference results; return
    ``(stderr, kernels compiled, lines printed before those)``."""
    out = run(["-c", EXP_CHILD, style, *map(str, extra)], xdg, tmp, cwd=pythonpath,
              pythonpath=pythonpath, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    err = float(lines[-1].split()[-1])
    assert err < 1e-12, f"se3.exp or se3.log differ from SciPy by {err}"  # exact to ~1e-15
    return out.stderr, int(lines[-2].split()[-1]), lines[:-2]


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


class _Plant:
    """Unpickling it creates the file ``marker``: proof that a file was deserialised."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def plant(top, marker, other_owner=False):
    """Replace every cache file under the top folder ``top`` by a pickle that
    creates ``marker`` when unpickled, in the cache's own format with a valid
    tag under the key found in ``top`` (an attacker who could read it), and
    with ``other_owner`` give the whole folder to another user."""
    top = Path(top)
    key = (top / "key").read_bytes()
    body = pickle.dumps(_Plant(marker))
    for f in cache_files(top):
        place = f"{f.parent.parent.name}/{f.parent.name}/{f.name}".encode()
        f.write_bytes(MAGIC + hmac.new(key, MAGIC + place + b"\0" + body,
                                       hashlib.sha256).digest() + body)
    if other_owner:
        for p in [top, *top.rglob("*")]:
            os.chown(p, OTHER_UID, OTHER_UID, follow_symlinks=False)


# ------------------------------------------------------------ damaged entries --

@pytest.fixture(scope="module")
def warm_exp(tmp_path_factory):
    """An XDG_CACHE_HOME holding the compiled kernels of se3.exp and se3.log."""
    base = tmp_path_factory.mktemp("warm_exp")
    xdg, tmp = base / "xdg", base / "tmp"
    tmp.mkdir()
    run_exp(xdg, tmp)
    assert cache_files(xdg)
    return xdg


def _damage(path, kind, rng, marker):
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
    elif kind == "planted pickle":       # in the cache's format, without the key
        body = pickle.dumps(_Plant(marker))
        data = MAGIC + hashlib.sha256(body).digest() + body
    path.write_bytes(data)


# (files, damage, how the kernel is reached); the explicit-compile path on one
# data and one index case
DAMAGE = [("data", k, "call") for k in ("truncated", "garbage", "flipped", "empty",
                                        "foreign pickle", "planted pickle")]
DAMAGE += [("index", k, "call") for k in ("truncated", "garbage", "empty", "planted pickle")]
DAMAGE += [("data", "flipped", "compile"), ("index", "garbage", "compile")]
# the first case runs by default, the others with the slow tests (a fresh interpreter each)
DAMAGE = [d if d == DAMAGE[0] else pytest.param(*d, marks=pytest.mark.slow) for d in DAMAGE]


@pytest.mark.parametrize("files,kind,style", DAMAGE)
def test_damaged_entries_are_discarded_and_recompiled(warm_exp, tmp_path, files, kind, style):
    """A cache file that fails its authentication tag is never unpickled (a
    planted pickle leaves no marker): it is deleted, with one warning, and
    the kernel compiled and saved afresh."""
    xdg, tmp = dirs(tmp_path)
    shutil.copytree(warm_exp, xdg, symlinks=True)
    marker = tmp_path / "unpickled"
    rng = np.random.default_rng(sum(map(ord, files + kind)))
    for f in cache_files(xdg):
        if f.suffix == (".nbc" if files == "data" else ".nbi"):
            _damage(f, kind, rng, marker)
    folder = next(xdg.glob("liedyn/numba-*"))
    # se3's kernels come from two source directories (liedyn/ for the input
    # checks, liedyn/spatial/ for the exponential), so the damage spans two
    # sub-folders of the cache: still one warning
    assert len({f.parent for f in cache_files(xdg)}) == 2, cache_files(xdg)

    stderr, compiled, _ = run_exp(xdg, tmp, style)
    found = warnings_in(stderr)
    assert len(found) == 1 and "discarded" in found[0] and str(folder) in found[0], stderr
    assert stderr.count(NOTICE) == 1 and compiled > 0, stderr   # it recompiles, says so once
    assert not marker.exists()

    stderr, compiled, _ = run_exp(xdg, tmp, style)   # the entries were written afresh
    assert "liedyn:" not in stderr and compiled == 0, stderr


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


@pytest.mark.slow
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

    stderr, _, _ = run_exp(xdg, tmp)
    found = warnings_in(stderr)
    assert len(found) == 1 and str(folder) in found[0] and reason in found[0], stderr
    assert "without a disk cache" in found[0], stderr
    assert not cache_files(tmp_path), cache_files(tmp_path)


def _liedyn_foreign(home):
    (home / ".cache").mkdir(parents=True)
    return home / ".cache" / "liedyn", _foreign(home / ".cache" / "liedyn")


def _liedyn_world_writable(home):
    (home / ".cache").mkdir(parents=True)
    return home / ".cache" / "liedyn", _world_writable(home / ".cache" / "liedyn")


def _parent_world_writable(home):
    """The issue's case: a cache root in a folder every user can write to."""
    home.mkdir()
    os.chmod(home, 0o777)
    return home, "is writable by other users"


def _parent_foreign(home):
    home.mkdir(mode=0o755)
    os.chown(home, OTHER_UID, OTHER_UID)
    return home, f"belongs to uid {OTHER_UID}"


def _sticky_above_foreign(home):
    """A sticky shared folder is trusted only above folders the user owns."""
    home.mkdir()
    os.chmod(home, 0o1777)
    (home / ".cache").mkdir(mode=0o700)
    os.chown(home / ".cache", OTHER_UID, OTHER_UID)
    return home / ".cache", f"belongs to uid {OTHER_UID}"


@pytest.mark.slow
@pytest.mark.parametrize("make", [
    pytest.param(_liedyn_foreign, marks=as_root), _liedyn_world_writable,
    _parent_world_writable, pytest.param(_parent_foreign, marks=as_root),
    pytest.param(_sticky_above_foreign, marks=as_root)])
def test_untrusted_user_cache_folder_is_refused(tmp_path, make):
    """A user-cache ``liedyn`` folder that is not private, or that has a
    folder above it another user owns or can write to, is refused with one
    warning naming that folder; the per-user temporary folder is used."""
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    tmp.mkdir()
    folder, reason = make(home)
    xdg = home / ".cache"

    stderr, _, printed = run_exp(xdg, tmp)
    found = warnings_in(stderr)
    assert len(found) == 1 and f"{folder} {reason}" in found[0], stderr
    fallback = tmp / f"liedyn-kernels-{UID}"
    assert str(fallback) in found[0] and str(fallback) in printed[-1], (stderr, printed)
    assert cache_files(fallback) and not cache_files(home)


def test_temporary_folder_is_private_and_cannot_shadow_the_package(tmp_path):
    """The temporary fallback is created with mode 0700 under a name that is
    not an identifier, in a sticky shared folder (trusted, since the folder
    in it is the user's), so a script run from the temporary folder still
    imports the real package (as installed: no PYTHONPATH)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    os.chmod(tmp, 0o1777)
    xdg = unusable(tmp_path)
    stderr, _, _ = run_exp(xdg, tmp)
    assert not warnings_in(stderr), stderr
    made = os.listdir(tmp)
    (tmp / "script.py").write_text("import liedyn\nliedyn.inverse_dynamics\n"
                                   "print(liedyn.__file__)\n")
    out = run(["script.py"], xdg, tmp, cwd=tmp, pythonpath=None, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("__init__.py"), out.stdout

    assert made == [f"liedyn-kernels-{UID}"], made
    assert not any(name.isidentifier() for name in made)
    inside = [p for p in (tmp / made[0]).rglob("*") if p.is_dir()]
    assert not any(p.name.isidentifier() for p in inside), inside
    for p in [tmp / made[0], *inside]:
        st = os.lstat(p)
        assert st.st_uid == UID and st.st_mode & 0o777 == 0o700, (p, oct(st.st_mode))
    for p in (tmp / made[0]).rglob("*"):
        assert p.is_dir() or os.lstat(p).st_mode & 0o777 == 0o600, p
    assert cache_files(tmp / made[0])


# ------------------------------------------------------------ planted caches --

def test_planted_cache_under_a_folder_others_can_write_is_never_loaded(warm_exp, tmp_path):
    """A cache root whose parent every user can write to (a ``.cache`` in a
    shared folder): another user has put a complete cache there, file names
    right, its files authentic under a key of its own, every one a pickle
    that leaves a marker when unpickled. The folder is refused before
    anything in it is opened, with one warning; the kernels come from the
    private temporary folder."""
    shared, tmp = tmp_path / "shared", tmp_path / "tmp"
    tmp.mkdir()
    shared.mkdir()
    os.chmod(shared, 0o777)
    xdg = shared / ".cache"
    shutil.copytree(warm_exp, xdg)
    marker = tmp_path / "unpickled"
    plant(xdg / "liedyn", marker, other_owner=UID == 0)

    stderr, compiled, printed = run_exp(xdg, tmp)
    found = warnings_in(stderr)
    assert len(found) == 1 and f"{shared} is writable by other users" in found[0], stderr
    assert not marker.exists()
    assert str(tmp / f"liedyn-kernels-{UID}") in printed[-1] and compiled > 0, printed


@pytest.mark.parametrize("how", ["same user", pytest.param("other owner", marks=as_root),
                                 "parent opened"])
def test_cache_folder_swapped_after_the_first_call_is_refused(warm_exp, tmp_path, how):
    """After a process's first kernel call, its cache's top folder is renamed
    away and a planted copy put in its place (same names, the key copied so
    that every file is authentic, each a pickle that leaves a marker when
    unpickled), or the folder above it is made writable by every user and
    the files planted in place. The next kernel load refuses the folder
    (replaced, another user's, or below a folder others can write to) with
    one warning and loads nothing from it: the marker is never made, and
    se3.log is compiled in the temporary folder instead."""
    xdg, tmp = dirs(tmp_path)
    shutil.copytree(warm_exp, xdg)
    marker = tmp_path / "unpickled"
    stderr, compiled, printed = run_exp(xdg, tmp, "swap", xdg, marker, how)
    found = warnings_in(stderr)
    named, reason = {"same user": (xdg / "liedyn", "was replaced"),
                     "other owner": (xdg / "liedyn", f"belongs to uid {OTHER_UID}"),
                     "parent opened": (xdg, "is writable by other users")}[how]
    assert len(found) == 1 and f"{named} {reason}" in found[0], stderr
    assert not marker.exists()
    assert str(tmp / f"liedyn-kernels-{UID}") in printed[-1] and compiled > 0, printed


# ------------------------------------------------ one compile per version --

@pytest.mark.slow
def test_a_second_installation_reuses_the_compiled_kernels(warm_exp, tmp_path):
    """A copy of the package at another path (another clone or venv of the
    same version) loads every kernel from the cache the first one filled:
    nothing compiled, nothing printed, one cache folder with a mark of each
    installation. A copy with one source file changed compiles afresh, in a
    folder of its own."""
    xdg, tmp = dirs(tmp_path)
    shutil.copytree(warm_exp, xdg)
    copy = tmp_path / "elsewhere"
    shutil.copytree(ROOT / "liedyn", copy / "liedyn",
                    ignore=shutil.ignore_patterns("__pycache__"))
    stderr, compiled, printed = run_exp(xdg, tmp, pythonpath=copy)
    assert printed[-1].startswith(str(copy / "liedyn")), printed
    assert compiled == 0 and stderr == "", stderr
    folders = list((xdg / "liedyn").glob("numba-*"))
    assert len(folders) == 1 and len(list(folders[0].glob("install-*"))) == 2, folders

    with open(copy / "liedyn" / "__init__.py", "a") as f:
        f.write("\n# another version\n")
    stderr, compiled, _ = run_exp(xdg, tmp, pythonpath=copy)
    assert compiled > 0 and NOTICE in stderr, stderr
    assert len(list((xdg / "liedyn").glob("numba-*"))) == 2


def test_kernels_outside_the_package_are_keyed_on_their_file(tmp_path):
    """A kernel compiled with liedyn's ``njit`` in a file outside the package
    (the benchmarks' own kernels) is cached in a sub-folder keyed on that
    file's path, loaded by the next process, and compiled again once the
    file's contents change."""
    xdg, tmp = dirs(tmp_path)
    src = tmp_path / "user" / "mykernels.py"
    src.parent.mkdir()
    src.write_text("from liedyn._jit import njit\n\n\n@njit\ndef twice(x):\n"
                   "    return 2.0 * x\n")
    code = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path.insert(0, {str(src.parent)!r})
        from mykernels import twice
        from liedyn import _jit
        print(twice(np.arange(3.0)).tolist(), _jit.compiled_count())
    """)

    def compiled():
        out = run(["-c", code], xdg, tmp)
        assert out.returncode == 0, out.stderr[-3000:]
        values, count = out.stdout.rsplit(maxsplit=1)
        assert values == "[0.0, 2.0, 4.0]", out.stdout
        return int(count)

    assert compiled() == 1 and compiled() == 0
    subs = {f.parent.name for f in cache_files(xdg)}
    assert len(subs) == 1 and next(iter(subs)).startswith("user_"), subs
    src.write_text(src.read_text() + "\n# changed\n")
    assert compiled() == 1


def test_numba_cache_dir_is_honoured(tmp_path):
    """With ``NUMBA_CACHE_DIR`` set, the kernels are cached under it (its
    ``liedyn`` folder), not in the user cache."""
    xdg, tmp = dirs(tmp_path)
    nc = tmp_path / "numba-cache"
    _, _, printed = run_exp(xdg, tmp, env={"NUMBA_CACHE_DIR": str(nc)})
    assert str(nc / "liedyn" / "numba-") in printed[-1], printed
    assert cache_files(nc / "liedyn") and not cache_files(xdg)


# ------------------------------------------------------------------- pruning --

def test_folders_of_other_versions_are_pruned(tmp_path):
    """At its first compilation a process removes its installation's mark
    from the folders of other versions, and removes those it leaves without
    any mark and those unused for 30 days; it keeps folders other
    installations use, names not of its pattern, other users' folders, and
    never follows links."""
    xdg, tmp = dirs(tmp_path)
    top = xdg / "liedyn"
    top.mkdir(parents=True, mode=0o700)
    ours = "install-" + hashlib.sha1(os.path.realpath(ROOT / "liedyn").encode()).hexdigest()[:16]
    other = "install-" + "0" * 16
    hour, days40 = time.time() - 3600, time.time() - 40 * 86400

    def plant_folder(path, marks, mtime):
        (path / "kernels-liedyn").mkdir(parents=True)
        files = [path / "kernels-liedyn" / "k-1.py311.nbi"] + [path / m for m in marks]
        for f in files:
            f.write_bytes(b"")
            os.utime(f, (mtime, mtime))
        os.utime(path / "kernels-liedyn", (mtime, mtime))
        os.utime(path, (mtime, mtime))
        return path

    only_ours = plant_folder(top / "numba-00000000000000a1", [ours], hour)
    shared = plant_folder(top / "numba-00000000000000a2", [ours, other], hour)
    unmarked = plant_folder(top / "numba-00000000000000a3", [], hour)
    stale = plant_folder(top / "numba-00000000000000a4", [other], days40)
    in_use = plant_folder(top / "numba-00000000000000a5", [other], hour)
    not_pattern = plant_folder(top / "numba-keep-me", [ours], days40)
    target = plant_folder(tmp_path / "linked", [ours], days40)
    link = top / "numba-00000000000000a6"
    link.symlink_to(target)
    foreign = None
    if UID == 0:
        foreign = plant_folder(top / "numba-00000000000000a7", [ours], days40)
        os.chown(foreign, OTHER_UID, OTHER_UID)

    run_exp(xdg, tmp)
    kept = {"numba-00000000000000a2", "numba-00000000000000a3", "numba-00000000000000a5",
            "numba-00000000000000a6", "numba-00000000000000a7", "numba-keep-me"}
    current = [p for p in top.glob("numba-*") if p.name not in kept]
    assert len(current) == 1 and cache_files(current[0]), current
    assert (current[0] / ours).is_file()
    assert not only_ours.exists() and not stale.exists()
    assert sorted(p.name for p in shared.iterdir()) == [other, "kernels-liedyn"]
    assert (unmarked / "kernels-liedyn").is_dir() and (in_use / other).is_file()
    assert (not_pattern / ours).is_file()
    assert link.is_symlink() and (target / ours).is_file()
    if foreign is not None:
        assert (foreign / ours).is_file()


# ------------------------------------------- first-compile notice, ahead of time --

@pytest.mark.slow
def test_first_compilation_is_announced_once(tmp_path):
    """A cold cache prints one line naming the cache folder, the kernel group
    being compiled and the way to compile ahead of time; a warm one prints
    nothing."""
    xdg, tmp = dirs(tmp_path)
    stderr, _, _ = run_exp(xdg, tmp)
    lines = [line for line in stderr.splitlines() if NOTICE in line]
    assert len(lines) == 1, stderr
    assert str(xdg / "liedyn" / "numba-") in lines[0] and "python -m liedyn.compile" in lines[0]
    assert " kernels (" in lines[0] and "liedyn.spatial.se3 kernels" in stderr, stderr
    compiling = [line for line in stderr.splitlines() if line.startswith("liedyn: compiling")]
    assert len(compiling) == len(set(compiling)) == len(stderr.splitlines()), stderr
    st = os.stat(xdg / "liedyn")
    assert st.st_mode & 0o077 == 0, oct(st.st_mode)   # created private

    assert run_exp(xdg, tmp)[:2] == ("", 0)


@pytest.mark.slow
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


@pytest.mark.slow
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


# The trust rules seen by an ordinary user: root's folders may be passed
# through but not used, another user's are refused, a sticky shared folder is
# trusted only above the user's own. Run as root, the child drops to the
# unprivileged uid NOBODY after importing what it needs (the interpreter may
# live where that uid cannot read), then loads liedyn/_jit.py from the
# checkout and walks folders made for it; run by an ordinary user, it runs as
# that user with folders the test made, which cannot include another user's.
NOBODY, SOMEONE = 65534, 65533
NON_ROOT_CHILD = textwrap.dedent("""
    import errno, hashlib, hmac, importlib.util, inspect, itertools, json, os, pickle, re
    import secrets, shutil, stat, sys, tempfile, time, warnings
    from pathlib import Path
    import numba
    from numba.core import caching, compiler, dispatcher, serialize
    root, base = sys.argv[1], sys.argv[2]
    if os.getuid() == 0:
        os.setgroups([])
        os.setgid(int(sys.argv[3]))
        os.setuid(int(sys.argv[3]))
    spec = importlib.util.spec_from_file_location("jit_under_test",
                                                  os.path.join(root, "liedyn", "_jit.py"))
    jit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(jit)
    out = {"uid": os.getuid(), "module_uid": jit._UID, "walk": {}}
    for name in ("mine", "root_owned", "other/inner", "sticky/mine", "open/mine"):
        try:
            fd, _ = jit._walk(os.path.join(base, name))
            os.close(fd)
            out["walk"][name] = "trusted"
        except jit._Refused as exc:
            out["walk"][name] = "refused: " + str(exc)
        except OSError as exc:
            out["walk"][name] = "error: " + repr(exc)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        folder = jit.cache_folder()
    st = os.stat(os.path.dirname(folder))
    out.update(folder=folder, top_uid=st.st_uid, top_mode=stat.S_IMODE(st.st_mode),
               warnings=[str(w.message) for w in caught])
    print(json.dumps(out))
""")


def test_trust_rules_hold_for_an_unprivileged_user():
    import json
    base = Path(tempfile.mkdtemp(prefix="liedyn-nonroot-"))
    try:
        os.chmod(base, 0o755)
        uid = NOBODY if UID == 0 else UID
        if UID == 0:           # in the sticky /tmp, a folder not the user's is refused
            os.chown(base, uid, uid)
        for name, mode in (("mine", 0o700), ("root_owned", 0o755), ("other", 0o755),
                           ("other/inner", 0o700), ("sticky", 0o1777), ("sticky/mine", 0o700),
                           ("open", 0o777), ("open/mine", 0o700)):
            (base / name).mkdir()
            os.chmod(base / name, mode)
        for name in ("mine", "other/inner", "sticky/mine", "open/mine"):
            if UID == 0:
                os.chown(base / name, uid, uid)
        if UID == 0:
            os.chown(base / "other", SOMEONE, SOMEONE)
        env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR",)}
        (base / "no_home").write_text("")       # a file: ~/.cache cannot be made
        env.update(XDG_CACHE_HOME=str(base / "open" / "mine"), TMPDIR=str(base / "sticky"),
                   HOME=str(base / "no_home"))
        out = subprocess.run([sys.executable, "-c", NON_ROOT_CHILD, str(ROOT), str(base),
                              str(uid)], capture_output=True, text=True, env=env,
                             timeout=300, cwd=str(base))
        assert out.returncode == 0, out.stderr[-3000:]
        got = json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert got["uid"] == got["module_uid"] == uid != 0
    walk = got["walk"]
    assert walk["mine"] == "trusted"                  # root's / and sticky /tmp are passed
    assert walk["sticky/mine"] == "trusted"           # a sticky shared folder above one's own
    assert walk["open/mine"].startswith("refused") and "writable by other users" in walk["open/mine"]
    if UID == 0:      # folders that are not the unprivileged user's own
        assert walk["root_owned"].startswith("refused") and "belongs to uid 0" in walk["root_owned"]
        assert walk["other/inner"].startswith("refused") and f"uid {SOMEONE}" in walk["other/inner"]
    # XDG_CACHE_HOME refused (a folder others can write above it), ~/.cache
    # not creatable: the private folder in the sticky temporary folder, the user's.
    assert got["folder"].startswith(str(base / "sticky" / f"liedyn-kernels-{uid}") + os.sep)
    assert got["top_uid"] == uid and got["top_mode"] == 0o700
    assert any(str(base / "open") in w and "writable by other users" in w
               for w in got["warnings"]), got["warnings"]
