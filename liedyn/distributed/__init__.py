"""Sweeps larger than one machine, on Dask: batch dynamics over Dask arrays
and Monte-Carlo studies of simulations.

Needs the ``dask`` extra (``pip install 'liedyn[dask]'``: ``dask[distributed]``
and ``zarr``); ``import liedyn`` does not.

* :mod:`liedyn.distributed.batch`: the batch functions over Dask arrays
  chunked along the sample axis (:func:`liedyn.inverse_dynamics_batch` and
  :func:`liedyn.forward_dynamics_batch` send Dask arrays there themselves).
* :mod:`liedyn.distributed.monte_carlo`: :func:`monte_carlo` runs
  :func:`liedyn.simulate` over a table of perturbations as Dask tasks, on a
  local cluster by default or on any cluster with ``client=``.
"""

try:
    import dask  # noqa: F401
    import dask.array  # noqa: F401
except ImportError as err:                         # pragma: no cover - the extra is installed
    raise ImportError("liedyn.distributed needs Dask: pip install 'liedyn[dask]' "
                      "(dask[distributed] and zarr)") from err

from .batch import (compute, constrained_forward_dynamics_batch,
                    constrained_inverse_dynamics_batch, forward_dynamics_batch,
                    hybrid_dynamics_batch, inverse_dynamics_batch, is_dask_array)
from .monte_carlo import (MonteCarloResult, Run, load_trajectory, monte_carlo, scaled_model,
                          tracking_summary)

__all__ = ["inverse_dynamics_batch", "forward_dynamics_batch", "hybrid_dynamics_batch",
           "constrained_forward_dynamics_batch", "constrained_inverse_dynamics_batch",
           "compute", "is_dask_array", "monte_carlo", "Run", "MonteCarloResult",
           "tracking_summary", "scaled_model", "load_trajectory"]
