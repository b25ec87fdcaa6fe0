"""``liedyn.inverse_dynamics_batch`` and ``liedyn.forward_dynamics_batch``.

NumPy arrays go to the compiled batches of :mod:`liedyn.algorithm.batch`;
Dask arrays to :mod:`liedyn.distributed.batch`, which computes them chunk by
chunk with the compiled batches. This module sits above both packages, so the
dependency runs one way: ``distributed`` uses ``algorithm``, never the
reverse. Dask is imported only when a Dask array is given.
"""

import functools

from .algorithm import batch as _core


def _route(core, name):
    @functools.wraps(core)
    def routed(*args, **kwargs):
        if _core.lazy(*args, *kwargs.values()):
            from .distributed import batch as _distributed
            return getattr(_distributed, name)(*args, **kwargs)
        return core(*args, **kwargs)
    return routed


inverse_dynamics_batch = _route(_core.inverse_dynamics_batch, "inverse_dynamics_batch")
forward_dynamics_batch = _route(_core.forward_dynamics_batch, "forward_dynamics_batch")

__all__ = ["inverse_dynamics_batch", "forward_dynamics_batch"]
