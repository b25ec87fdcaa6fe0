"""The one place that decides how kernels are compiled.

Every numerical kernel in liedyn is written once, in the subset of Python
that numba compiles, and decorated with :func:`njit`. With numba installed
(a core dependency) kernels are compiled on first use and cached on disk.
Without it the package still imports and runs the same code interpreted,
which is slow, and says once how to get the compiled path.
Set ``NUMBA_DISABLE_JIT=1`` to step through kernels in a debugger.
"""

import warnings

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


def njit(fn):
    """Compile ``fn`` with numba (cached, no Python fallback) when available."""
    if _numba is None:  # pragma: no cover
        return fn
    return _numba.njit(cache=True, nogil=True)(fn)
