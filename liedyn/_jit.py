"""The one place that decides how kernels are compiled and where they are cached.

Every numerical kernel in liedyn is written once, in the subset of Python
that numba compiles, and decorated with :func:`njit`. With numba installed
(a core dependency) kernels are compiled on first use and cached on disk.
Without it the package still imports and runs the same code interpreted,
which is slow, and says once how to get the compiled path.
Set ``NUMBA_DISABLE_JIT=1`` to step through kernels in a debugger.

The kernel cache
----------------
Folder: ``$XDG_CACHE_HOME/liedyn/numba-<hash>`` (``~/.cache`` when the
variable is unset), or ``<temporary folder>/liedyn-kernels-<uid>/numba-<hash>``
when the user cache cannot be used; inside it numba keeps one sub-folder per
source directory (``<directory name>_<hash of its path>``, such as
``spatial_…`` for ``liedyn/spatial``). ``<hash>`` covers every
source file of the package: numba keys a cached kernel on its own source file
only, so a kernel whose inlined helpers live in another module would survive a
change to them; a folder per source version closes that gap. The names are
not identifiers, so neither folder can be imported as a package.

Trust: cache entries are pickles that later processes load and run, so a
folder is used only if it belongs to the current user and no other user can
write to it (``liedyn`` and ``liedyn-kernels-<uid>`` are created with mode
0700; the temporary one must not be a symbolic link). A folder failing this
is refused with one ``RuntimeWarning``; the next one is tried, and without
any the kernels are compiled in every process.

Integrity: each entry carries a SHA-256 digest of its payload, checked before
it is unpickled. An entry that cannot be loaded (truncated, overwritten,
digest mismatch, an index that does not unpickle) is deleted and the kernel
compiled again; the first such entry of a process raises one
``RuntimeWarning`` naming its folder, however many sub-folders hold damaged
entries, and a save that fails warns once in the same way. The
check sits in the cache object numba consults for our dispatchers, so it
holds however a kernel is reached (a call, ``dispatcher.compile(sig)``, or a
callee typed inside another kernel).

Laziness: nothing is hashed, created or read at import. The folder is chosen
at the first kernel call of a process. At the first compilation of a process
(a cache miss) one line on stderr says that kernels are being compiled,
naming the group (the module, such as ``liedyn.algorithm.inverse``) and the kernel
compiled first, and older cache folders are pruned (see :func:`_prune`);
every later group compiled in that process gets one short line of its own,
so a long first call says what it is waiting for.
"""

import glob
import hashlib
import os
import pickle
import re
import shutil
import stat
import sys
import tempfile
import time
import warnings
from pathlib import Path

try:
    import numba as _numba
except ImportError:  # pragma: no cover - exercised only without numba
    _numba = None
    warnings.warn(
        "numba is not installed: liedyn runs its kernels interpreted, which is "
        "orders of magnitude slower. Install it with `pip install numba`.",
        RuntimeWarning,
        stacklevel=2,
    )

HAVE_NUMBA = _numba is not None
# Compiled (numba present and not disabled with NUMBA_DISABLE_JIT=1).
JIT = HAVE_NUMBA and not _numba.config.DISABLE_JIT

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_UID = os.getuid() if hasattr(os, "getuid") else None
_FOLDER_NAME = re.compile(r"numba-[0-9a-f]{16}")
_STALE_SECONDS = 30 * 24 * 3600.0    # a folder unused this long is removed whole
_COMPILE_SECONDS = "about 2 minutes of CPU time"  # python -m liedyn.compile: 61 kernels, 116 s of CPU

# Per-process state. Every hook below runs under numba's global compiler lock.
_folder = None            # the cache folder of this source version, or None
_folder_chosen = False
_announce = True          # print the first-compilation notice
_first_compile_done = False
_compiled = 0             # kernels compiled (cache misses) in this process
_groups_announced = set()  # modules whose compilation was announced
_warned = set()


def _source_hash():
    """SHA-1 (16 hex digits) of the paths and contents of the package's sources."""
    h = hashlib.sha1()
    pkg = Path(_PKG_DIR)
    for f in sorted(pkg.rglob("*.py")):
        h.update(f.relative_to(pkg).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _untrusted(path, follow_links):
    """Why ``path`` must not hold cache files, or None if it may.

    Creates ``path`` with mode 0700 when it is missing. Refused: another
    owner, write permission for group or others, not a directory, and, unless
    ``follow_links``, a symbolic link. Raises OSError when ``path`` cannot be
    created or examined.
    """
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.stat(path) if follow_links else os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if _UID is not None and st.st_uid != _UID:
        return f"belongs to uid {st.st_uid}, not to the current user (uid {_UID})"
    if _UID is not None and st.st_mode & 0o022:
        return f"is writable by other users (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _candidates():
    """``(top folder, follow_links)``: the user cache, then the temporary folder."""
    out = []
    try:
        root = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
        out.append((os.path.join(root, "liedyn"), True))
    except RuntimeError:    # no home directory
        pass
    user = f"-{_UID}" if _UID is not None else ""
    out.append((os.path.join(tempfile.gettempdir(), f"liedyn-kernels{user}"), False))
    return out


def _choose_folder():
    """``(folder or None, [reasons for refused folders])``."""
    name = f"numba-{_source_hash()}"
    refused = []
    for top, follow_links in _candidates():
        try:
            if follow_links:
                os.makedirs(os.path.dirname(top), exist_ok=True)
            reason = _untrusted(top, follow_links)
            if reason is not None:
                refused.append(f"{top} {reason}")
                continue
            folder = os.path.join(top, name)
            os.makedirs(folder, 0o700, exist_ok=True)
            os.utime(folder)        # last use, read by _prune
            if os.access(folder, os.W_OK | os.X_OK):
                return folder, refused
        except OSError:             # not creatable or not writable: the next one
            continue
    return None, refused


def cache_folder():
    """The folder compiled kernels of this source version are cached in.

    Chosen, created and checked at the first call in a process (see the
    module docstring); ``None`` when no folder can be trusted or written.

    Warns
    -----
    RuntimeWarning
        Once, naming each refused folder and why.
    """
    global _folder, _folder_chosen
    if not _folder_chosen:
        _folder_chosen = True
        _folder, refused = _choose_folder()
        if refused:
            then = (f"caching kernels in {_folder} instead" if _folder is not None else
                    "compiling kernels without a disk cache, again in every process")
            warnings.warn(f"liedyn: refused the kernel cache folder {'; '.join(refused)}. "
                          f"Cache files are code that later processes load, so the folder must "
                          f"be yours and not writable by others (remove it or `chmod go-w` "
                          f"it); {then}.", RuntimeWarning, stacklevel=2)
    return _folder


def compiling_ahead():
    """Silence the first-compilation notice: the caller reports progress itself."""
    global _announce
    _announce = False


def compiled_count():
    """Number of kernel signatures compiled in this process (cache misses)."""
    return _compiled


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def _our_subfolders():
    """Names of the sub-folders numba gives this installation's source directories."""
    dirs = {os.path.dirname(str(f)) for f in Path(_PKG_DIR).rglob("*.py")}
    return {_caching._CacheLocator.get_suitable_cache_subpath(os.path.join(d, "x.py"))
            for d in dirs}


def _prune(current):
    """Remove cache folders of other source versions, next to ``current``.

    Looks only at entries of ``current``'s parent named ``numba-<16 hex>``,
    that are directories (never symbolic links, never followed) owned by the
    current user. In each, this installation's sub-folders older than
    ``current`` are removed (an older version of these sources), and so is
    the whole folder when nothing in it was used for 30 days (another
    installation, since removed or upgraded). Folders of other installations
    in use are kept: checkouts of different versions share the user cache.
    """
    now = time.time()
    try:
        since = os.stat(current).st_mtime
        entries = list(os.scandir(os.path.dirname(current)))
        ours = _our_subfolders()
    except OSError:
        return
    for entry in entries:
        if entry.name == os.path.basename(current) or not _FOLDER_NAME.fullmatch(entry.name):
            continue
        try:
            if not _owned_dir(os.lstat(entry.path)):
                continue
            subs = [(s, os.lstat(s.path)) for s in os.scandir(entry.path)]
            last_use = max([os.lstat(entry.path).st_mtime] + [st.st_mtime for _, st in subs])
            if now - last_use > _STALE_SECONDS:
                shutil.rmtree(entry.path, ignore_errors=True)
                continue
            for s, st in subs:
                if s.name in ours and _owned_dir(st) and st.st_mtime < since:
                    shutil.rmtree(s.path, ignore_errors=True)
            if not os.listdir(entry.path):
                os.rmdir(entry.path)
        except OSError:
            continue


def _owned_dir(st):
    return stat.S_ISDIR(st.st_mode) and (_UID is None or st.st_uid == _UID)


def _group(py_func):
    """The kernel group of a kernel: its module."""
    return getattr(py_func, "__module__", None) or "?"


def _first_compile(folder, py_func):
    """At a cache miss: once per process prune and say what is happening
    (naming the kernel's group), then one short line per further group."""
    global _first_compile_done
    group, name = _group(py_func), getattr(py_func, "__name__", "?")
    first = not _first_compile_done
    if first:
        _first_compile_done = True
        if folder is not None:
            _prune(folder)
    if not _announce or group in _groups_announced:
        return
    _groups_announced.add(group)
    if not first:
        print(f"liedyn: compiling the {group} kernels ({name} first)", file=sys.stderr,
              flush=True)
        return
    where = (f"cached in {folder} for later processes" if folder is not None else
             "not cached (no usable cache folder), so every process compiles them again")
    print(f"liedyn: compiling numba kernels on first use, now the {group} kernels ({name} "
          f"first): 5 to 40 s per algorithm, {_COMPILE_SECONDS} for all of them; {where}. "
          f"`python -m liedyn.compile` compiles them all ahead of time.",
          file=sys.stderr, flush=True)


if HAVE_NUMBA:
    from numba.core import caching as _caching
    from numba.core.dispatcher import Dispatcher as _Dispatcher
    from numba.core.serialize import dumps as _dumps

    class _Locator(_caching._SourceFileBackedLocatorMixin, _caching._CacheLocator):
        """numba's locator for our kernels: one sub-folder of :func:`cache_folder`
        per source directory."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(cache_folder(),
                                            self.get_suitable_cache_subpath(py_file))

        def ensure_cache_path(self):
            os.makedirs(self._cache_path, 0o700, exist_ok=True)

        def get_cache_path(self):
            return self._cache_path

    class _Impl(_caching.CompileResultCacheImpl):
        """Entries ``(SHA-256 digest, payload)``; the digest is checked before
        the payload is unpickled, so damaged machine code is never loaded."""

        _locator_classes = [_Locator]

        def reduce(self, cres):
            payload = _dumps(super().reduce(cres))
            return hashlib.sha256(payload).digest(), payload

        def rebuild(self, target_context, entry):
            digest, payload = entry
            if hashlib.sha256(payload).digest() != digest:
                raise ValueError("SHA-256 digest mismatch")
            return super().rebuild(target_context, pickle.loads(payload))

    class _Files(_caching.FunctionCache):
        """numba's index and data files of one kernel, in our folder and format."""

        _impl_class = _Impl

        def discard(self):
            """Delete this kernel's index and data files."""
            base = os.path.join(self.cache_path, glob.escape(self._impl.filename_base))
            for path in glob.glob(base + ".nbi") + glob.glob(base + ".*.nbc"):
                try:
                    os.unlink(path)
                except FileNotFoundError:   # another process was quicker
                    pass

    class _KernelCache(_caching._Cache):
        """The cache numba consults for one of our dispatchers.

        Opens the kernel's files in :func:`cache_folder` on first use; a load
        or save that fails discards the kernel's entries (one warning per
        process) so that numba compiles and saves it afresh; counts misses and
        runs :func:`_first_compile` at each one.
        """

        def __init__(self, py_func):
            self._py_func = py_func
            self._files = None
            self._enabled = True

        def _open(self):
            if self._files is None:
                self._files = _caching.NullCache()
                if cache_folder() is not None:
                    try:
                        self._files = _Files(self._py_func)
                    except (OSError, RuntimeError):   # no locator: the folder went away
                        pass
            return self._files

        @property
        def cache_path(self):
            return self._open().cache_path

        def enable(self):
            self._enabled = True

        def disable(self):
            self._enabled = False

        def flush(self):
            if self._enabled:
                self._open().flush()

        def load_overload(self, sig, target_context):
            global _compiled
            cres = None
            if self._enabled:
                try:
                    cres = self._open().load_overload(sig, target_context)
                except Exception as exc:
                    self._discard(exc, "unreadable compiled kernels", "recompiling them")
            if cres is None:
                _compiled += 1
                _first_compile(cache_folder(), self._py_func)
            return cres

        def save_overload(self, sig, data):
            if not self._enabled:
                return
            try:
                self._open().save_overload(sig, data)
                return
            except Exception as exc:    # saving reads the index first: discard, retry once
                self._discard(exc, "unreadable compiled kernels", "writing them afresh")
            try:
                self._open().save_overload(sig, data)
            except Exception as exc:
                self._enabled = False
                _warn_once(("save", cache_folder()),
                           f"liedyn: cannot save compiled kernels in "
                           f"{self._open().cache_path} ({_describe(exc)}); they will be "
                           f"compiled again in the next process.")

        def _discard(self, exc, what, then):
            files = self._open()
            try:
                files.discard()
            except OSError:
                self._enabled = False
            _warn_once(("discard", cache_folder()),
                       f"liedyn: discarded {what} in {files.cache_path} "
                       f"({_describe(exc)}); {then}, and any other damaged ones of this "
                       f"process without another warning.")


def _describe(exc):
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 200 else text[:197] + "..."


# Floating-point contraction only: a·b + c may become one fused multiply-add
# (one rounding instead of two, never less accurate); no reassociation, no
# assumptions about NaN or infinities, so results stay deterministic.
FASTMATH = {"contract"}


def njit(fn=None, *, inline=False):
    """Compile ``fn`` with numba (cached, no Python fallback, GIL released)
    when available.

    ``inline=True`` inlines the function into its callers at numba's IR level,
    for the small per-body helpers called in the innermost loops. Parallel
    loops are not used: the batch functions run plain threads over these
    kernels (:mod:`liedyn.algorithm.batch`), so no OpenMP or TBB runtime is loaded.
    """
    if fn is None:
        return lambda f: njit(f, inline=inline)
    if _numba is None:  # pragma: no cover
        return fn
    kernel = _numba.njit(nogil=True, fastmath=FASTMATH, inline="always" if inline else "never")(fn)
    if isinstance(kernel, _Dispatcher):      # not with NUMBA_DISABLE_JIT=1
        kernel._cache = _KernelCache(fn)
    return kernel


class Kernel:
    """A compiled entry point called without numba's per-call type dispatch.

    Every public function calls its kernel with arguments of fixed types: the
    two handles (:class:`liedyn.Model` data and :class:`liedyn.Workspace`
    data), C-contiguous float64 arrays of fixed dimensions checked by
    :func:`liedyn._checks.plain`, ints and bools. Numba's dispatcher would
    work out those types again on every call (about a microsecond for the two
    handles); instead the first call compiles (or loads from the cache) the
    one signature and later calls go straight to its entry point.
    ``Kernel(f).call(*args)`` is the call. Under ``LIEDYN_CHECK_KERNEL_TYPES=1``
    (set by the test suite) every call checks that its argument types are the
    compiled ones.
    """

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.signature = None
        if not JIT:                                 # interpreted
            self.call = dispatcher
        else:
            self.call = self._first_call

    @staticmethod
    def _types(args):
        out = []
        for a in args:
            t = _numba.typeof(a)
            if isinstance(t, _numba.types.Array) and not t.mutable:
                t = t.copy(readonly=False)        # inputs are only read
            out.append(t)
        return tuple(out)

    def _first_call(self, *args):
        return self.prepare(*args)(*args)

    def prepare(self, *args):
        """Compile (or load) the kernel for the types of ``args`` without
        running it, e.g. before several threads call it; returns ``call``."""
        if self.call == self._first_call:
            self.signature = self._types(args)
            self._entry = self.dispatcher.compile(self.signature)
            self.call = self._checked_call if CHECK_KERNEL_TYPES else self._entry
        return self.call

    def _checked_call(self, *args):
        got = self._types(args)
        if got != self.signature:
            raise TypeError(f"kernel {self.dispatcher.__name__}: called with {got}, "
                            f"compiled for {self.signature}")
        return self._entry(*args)


CHECK_KERNEL_TYPES = os.environ.get("LIEDYN_CHECK_KERNEL_TYPES") == "1"
