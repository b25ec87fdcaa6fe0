import os
import sys
from pathlib import Path

# Every compiled-kernel call checks that its argument types are the compiled
# ones (liedyn._jit.Kernel); read when liedyn is first imported, so set here,
# before any test module imports it.
os.environ.setdefault("LIEDYN_CHECK_KERNEL_TYPES", "1")

import mpmath  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Property tests draw the same examples on every run and machine, so a CI
# failure reproduces locally (no example database, no random seed).
settings.register_profile("reproducible", derandomize=True, database=None, deadline=None)
settings.load_profile("reproducible")

# Make the repository root importable so tests can use `models` and `tests.helpers`.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture(autouse=True)
def _no_leaked_global_state():
    """A test must not change process-wide numeric settings that later tests
    read: mpmath's working precision (use ``mpmath.workdps``) and numpy's
    floating-point error handling (use ``np.errstate``)."""
    prec, err = mpmath.mp.prec, np.geterr()
    yield
    leaked = []
    if mpmath.mp.prec != prec:
        leaked.append(f"mpmath.mp.prec {prec} -> {mpmath.mp.prec}")
        mpmath.mp.prec = prec
    if np.geterr() != err:
        leaked.append(f"numpy error state {err} -> {np.geterr()}")
        np.seterr(**err)
    assert not leaked, "test leaked global state: " + "; ".join(leaked)
