"""The one place that decides how kernels are compiled.

Every numerical kernel in liedyn is written once, in the subset of Python
that numba compiles, and decorated with :func:`njit`. With numba installed
(a core dependency) kernels are compiled on first use and cached on disk.
Without it the package still imports and runs the same code interpreted,
which is slow, and says once how to get the compiled path.
Set ``NUMBA_DISABLE_JIT=1`` to step through kernels in a debugger.

Numba keys a cached kernel on its own source file only, so a kernel whose
inlined helpers live in another module would survive a change to them. The
cache therefore lives in a directory named after a hash of every source file
of the package: any edit starts a fresh cache.
"""

import hashlib
import os
import tempfile
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

if HAVE_NUMBA:
    prange = _numba.prange
    get_num_threads = _numba.get_num_threads
else:  # pragma: no cover
    prange = range

    def get_num_threads():
        return 1


def _cache_dir():
    """``$XDG_CACHE_HOME/liedyn/numba-<hash of the sources>``, or the same under
    the system's temporary folder when the user cache is not writable."""
    pkg = Path(__file__).resolve().parent
    h = hashlib.sha1()
    for f in sorted(pkg.rglob("*.py")):
        h.update(f.relative_to(pkg).as_posix().encode())
        h.update(f.read_bytes())
    name = Path("liedyn") / f"numba-{h.hexdigest()[:16]}"
    for root in (os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", tempfile.gettempdir()):
        path = Path(root) / name
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(path, os.W_OK):
            return str(path)
    return None


CACHE_DIR = _cache_dir() if HAVE_NUMBA else None


def njit(fn=None, *, inline=False, parallel=False):
    """Compile ``fn`` with numba (cached, no Python fallback) when available.

    ``inline=True`` inlines the function into its callers at numba's IR level,
    for the small per-body helpers called in the innermost loops.
    ``parallel=True`` lets ``prange`` loops run on all cores.
    """
    if fn is None:
        return lambda f: njit(f, inline=inline, parallel=parallel)
    if _numba is None:  # pragma: no cover
        return fn
    saved = _numba.config.CACHE_DIR
    _numba.config.CACHE_DIR = CACHE_DIR or saved
    try:
        return _numba.njit(cache=CACHE_DIR is not None, nogil=True, parallel=parallel,
                           inline="always" if inline else "never")(fn)
    finally:
        _numba.config.CACHE_DIR = saved


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
