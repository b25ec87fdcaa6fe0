"""Batch dynamics over Dask arrays chunked along the sample axis.

Each function takes the arguments of its in-memory counterpart with a
leading sample axis ``B`` on the per-sample ones, as NumPy or Dask arrays,
and returns the same result type whose arrays are Dask arrays with the
sample chunks of the input: nothing is computed until the arrays are
(``dask.compute(*fields)``, or :func:`compute` for the whole result).

* :func:`inverse_dynamics_batch`, :func:`forward_dynamics_batch`: each chunk
  is one call of :func:`liedyn.inverse_dynamics_batch` /
  :func:`liedyn.forward_dynamics_batch` on that chunk's samples, so a chunk
  runs the compiled batch kernel and the results equal the in-memory batch
  bit for bit. These two are also what the core functions call when given
  a Dask array.
* :func:`hybrid_dynamics_batch`, :func:`constrained_forward_dynamics_batch`,
  :func:`constrained_inverse_dynamics_batch`: no batch kernel exists for
  these, so each chunk loops the single-sample function
  (:func:`liedyn.hybrid_dynamics`, :func:`liedyn.constrained_forward_dynamics`,
  :func:`liedyn.constrained_inverse_dynamics`) over its samples; the results
  equal that loop bit for bit.

Chunks: the sample chunks are those of ``q`` when it is a Dask array, else
those of the first per-sample argument that is one, else ``chunks=``
(samples per chunk; default one chunk). Every other per-sample argument is
rechunked to match (a NumPy one is cut into the same chunks); the trailing
axes are always one chunk. Arguments shared by every sample (a single base
pose, the constraint set, ``motion_driven``) are passed to every chunk as
they are; the model is one key of the graph, so a distributed scheduler
sends it once to each worker that computes a chunk.

Scheduling: the kernels release the GIL, so Dask's threaded scheduler (the
default for Dask arrays when no distributed client is active) runs one chunk
per core without copying data; a ``dask.distributed`` client, when one is
active, is used instead (arrays are then shipped to its worker processes).
Each chunk uses ``threads`` kernel threads (default 1: the scheduler
provides the parallelism).

Errors: shapes and types are checked when the function is called, naming
the argument; what only the values show (a non-finite entry, a pose that is
not rigid, a singular pivot) is raised when the chunk is computed, as the
in-memory function's ``ValueError`` with the sample's index in the whole
batch.
"""

import re

import dask
import dask.array as da
import numpy as np

from ..algorithm import batch as _core
from ..contact import (ConstrainedForwardDynamicsResult, ConstrainedInverseDynamicsResult,
                       constrained_forward_dynamics, constrained_inverse_dynamics)
from ..contact.constraints import check_constraints
from ..algorithm.hybrid import hybrid_dynamics
from ..multibody.model import check_model_order
from ..multibody.results import (ForwardDynamicsResult, HybridDynamicsResult,
                                InverseDynamicsResult, _Result)

__all__ = ["inverse_dynamics_batch", "forward_dynamics_batch", "hybrid_dynamics_batch",
           "constrained_forward_dynamics_batch", "constrained_inverse_dynamics_batch",
           "compute", "is_dask_array"]


def is_dask_array(x):
    """Whether ``x`` is a Dask array."""
    return isinstance(x, da.Array)


# --------------------------------------------------------------- arguments --

def _dtype_check(x, name):
    if x.dtype.kind not in "iuf":
        raise TypeError(f"{name}: expected a real numeric array, got dtype {x.dtype}")


def _leading(x, name):
    """``x`` as a Dask or NumPy array with its shape checked to be known."""
    if is_dask_array(x):
        if any(np.isnan(s) for s in x.shape):
            raise ValueError(f"{name}: the Dask array has unknown chunk sizes; call "
                             f"{name}.compute_chunk_sizes() first")
        _dtype_check(x, name)
        return x
    try:
        a = np.asarray(x)
    except ValueError as err:
        raise TypeError(f"{name}: expected a rectangular real numeric array ({err})") from None
    _dtype_check(a, name)
    return a


class _Batch:
    """The sample axis of one call: ``B`` samples in chunks ``sizes``, and
    the per-sample arguments cut into those chunks."""

    def __init__(self, q, q_tail, candidates, chunks):
        self.q = _leading(q, "q")
        self._check_tail(self.q, "q", q_tail, True)
        self.B = int(self.q.shape[0])
        if self.B == 0:
            raise ValueError("q: expected at least one sample, got 0")
        first = next((x for x in [self.q] + [c for c in candidates
                                              if is_dask_array(c) and c.ndim >= 3]
                      if is_dask_array(x)), None)
        if first is not None:
            sizes = tuple(int(s) for s in first.chunks[0])
        elif chunks is None:
            sizes = (self.B,)
        else:
            if isinstance(chunks, (bool, np.bool_)) or not isinstance(chunks, (int, np.integer)) \
                    or chunks < 1:
                raise ValueError(f"chunks: expected a positive number of samples per chunk, "
                                 f"got {chunks!r}")
            sizes = da.core.normalize_chunks((int(chunks),), (self.B,))[0]
        self.sizes = sizes
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()

    @staticmethod
    def _check_tail(x, name, tail, prefix):
        want = ", ".join(["B"] + [str(t) for t in tail])
        more = " (or more rows)" if prefix else ""
        ok = x.ndim == len(tail) + 1 and (
            x.shape[1:] == tuple(tail) or
            (prefix and x.shape[1] >= tail[0] and x.shape[2:] == tuple(tail[1:])))
        if not ok:
            raise ValueError(f"{name}: expected shape ({want}){more}, got {tuple(x.shape)}")

    def blocks(self, x, name, tail, prefix=False, shared_ndim=None):
        """Per-chunk values of a per-sample argument ``(B, *tail)``: a list
        with one entry per chunk (delayed blocks or NumPy slices). ``None``
        stays ``None`` for every chunk; an argument of ``shared_ndim``
        dimensions is shared and passed whole to every chunk."""
        n = len(self.sizes)
        if x is None:
            return [None] * n
        a = self.q if x is self.q else _leading(x, name)
        if shared_ndim is not None and a.ndim == shared_ndim:
            if is_dask_array(a):
                a = a.compute()
            return [a] * n
        self._check_tail(a, name, tail, prefix)
        if a.shape[0] != self.B:
            raise ValueError(f"{name}: expected {self.B} samples (the batch size of q), "
                             f"got {a.shape[0]}")
        if prefix and a.shape[1] > tail[0]:
            a = a[:, :tail[0]]
        if not is_dask_array(a):
            return [a[lo:lo + b] for lo, b in zip(self.starts, self.sizes)]
        a = a.rechunk((self.sizes,) + tuple(-1 for _ in tail))
        return list(a.to_delayed().ravel())

    def assemble(self, parts, outputs):
        """Dask arrays ``(B, *tail)`` for each ``(tail, dtype)`` of
        ``outputs`` from the per-chunk delayed tuples ``parts``."""
        out = []
        for k, (tail, dtype) in enumerate(outputs):
            blocks = [da.from_delayed(p[k], (b,) + tuple(tail), dtype=dtype)
                      for p, b in zip(parts, self.sizes)]
            out.append(blocks[0] if len(blocks) == 1 else da.concatenate(blocks, axis=0))
        return out


def _model_key(model):
    """The model (or a constraint set, with its model) as one key of the
    graph: sent once per worker."""
    return dask.delayed(model, traverse=False)


def _check_threads(threads):
    if threads is None:
        return 1
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)) \
            or threads < 1:
        raise ValueError(f"threads: expected a positive int or None, got {threads!r}")
    return int(threads)


_SAMPLE = re.compile(r"sample (\d+): ")


def _in_batch(err, lo):
    """A chunk's ``ValueError`` with the sample index counted in the whole batch."""
    text = str(err)
    m = _SAMPLE.match(text)
    if m:
        return ValueError(f"sample {lo + int(m.group(1))}: {text[m.end():]}")
    return ValueError(f"samples {lo}..: {text}")


# ----------------------------------------------------- kernels per chunk --

def _inverse_chunk(model, lo, order, reference, threads, base_pose, base_twist, q, applied):
    try:
        res = _core.inverse_dynamics_batch(model, base_pose, base_twist, q, order,
                                           applied=applied, threads=threads, reference=reference)
    except ValueError as err:
        raise _in_batch(err, lo) from None
    return res.base_wrench, res.tau


def _forward_chunk(model, lo, order, reference, threads, base_pose, base_twist, q, tau,
                   base_wrench, applied):
    try:
        res = _core.forward_dynamics_batch(model, base_pose, base_twist, q, order, tau=tau,
                                           base_wrench=base_wrench, applied=applied,
                                           threads=threads, reference=reference)
    except ValueError as err:
        raise _in_batch(err, lo) from None
    return res.base_twist, res.q, res.base_wrench, res.tau


def _pick(x, b, shared):
    """Sample ``b`` of a chunk's argument; ``shared`` arguments are passed whole."""
    return x if (x is None or shared) else x[b]


def _looped(lo, n, call, outputs):
    """``call(b)`` for the ``n`` samples of a chunk, stacked per output."""
    out = [np.empty((n,) + tuple(tail), dtype=dtype) for tail, dtype in outputs]
    for b in range(n):
        try:
            values = call(b)
        except ValueError as err:
            raise ValueError(f"sample {lo + b}: {err}") from None
        for o, v in zip(out, values):
            o[b] = v
    return tuple(out)


def _hybrid_chunk(model, lo, n, order, outputs, kw, shared_pose, base_pose, base_twist, q, tau,
                  base_wrench, applied):
    def call(b):
        res = hybrid_dynamics(model, _pick(base_pose, b, shared_pose), _pick(base_twist, b, False),
                              q[b], order, tau=_pick(tau, b, False),
                              base_wrench=_pick(base_wrench, b, False),
                              applied=_pick(applied, b, False), **kw)
        return res.base_twist, res.q, res.base_wrench, res.tau
    return _looped(lo, n, call, outputs)


def _constrained_forward_chunk(cs, lo, n, order, outputs, kw, shared_pose, base_pose,
                               base_twist, q, tau, base_wrench, applied):
    model = cs.model                    # the set's own model: the same object after pickling

    def call(b):
        res = constrained_forward_dynamics(model, cs, _pick(base_pose, b, shared_pose),
                                           _pick(base_twist, b, False), q[b], order, tau=tau[b],
                                           base_wrench=_pick(base_wrench, b, False),
                                           applied=_pick(applied, b, False), **kw)
        return res.base_twist, res.q, res.base_wrench, res.tau, res.force, res.rank
    return _looped(lo, n, call, outputs)


def _constrained_inverse_chunk(cs, lo, n, order, outputs, kw, shared_pose, base_pose,
                               base_twist, q, base_wrench, force, applied):
    model = cs.model

    def call(b):
        res = constrained_inverse_dynamics(model, cs, _pick(base_pose, b, shared_pose),
                                           _pick(base_twist, b, False), q[b], order,
                                           base_wrench=_pick(base_wrench, b, False),
                                           force=_pick(force, b, False),
                                           applied=_pick(applied, b, False), **kw)
        return res.tau, res.base_wrench, res.force, res.base_effort, res.residual
    return _looped(lo, n, call, outputs)


def _refuse_workspace(workspace):
    if workspace is not None:
        raise ValueError("workspace: a Dask batch keeps no body jets (each chunk has its own "
                         "scratch); pass workspace=None, or compute the chunk you need and call "
                         "the in-memory function with a batch workspace")


def _chunked_parts(func, batch, model, fixed, per_chunk, nout):
    """One delayed call ``func(model, lo, *fixed, *chunk args)`` per chunk
    (``model``: a model or a constraint set)."""
    m = _model_key(model)
    f = dask.delayed(func, pure=True, nout=nout)
    return [f(m, lo, *fixed, *(args[i] for args in per_chunk))
            for i, lo in enumerate(batch.starts)]


def _chunked_parts_n(func, batch, model, fixed, per_chunk, nout):
    """As :func:`_chunked_parts`, with the chunk's sample count after ``lo``."""
    m = _model_key(model)
    f = dask.delayed(func, pure=True, nout=nout)
    return [f(m, lo, b, *fixed, *(args[i] for args in per_chunk))
            for i, (lo, b) in enumerate(zip(batch.starts, batch.sizes))]


# -------------------------------------------------------------- the calls --

def inverse_dynamics_batch(model, base_pose, base_twist, q, order, *, applied=None,
                           workspace=None, threads=None, reference="world", chunks=None):
    """:func:`liedyn.inverse_dynamics_batch` over Dask arrays, chunk by chunk.

    Parameters
    ----------
    model, base_pose, base_twist, q, order, applied, reference
        As :func:`liedyn.inverse_dynamics_batch`; the per-sample arguments
        may be Dask arrays (chunked along the sample axis) or NumPy arrays.
    workspace : None
        Refused: a Dask batch keeps no body jets.
    threads : int, optional, keyword
        Kernel threads per chunk (default 1).
    chunks : int, optional, keyword
        Samples per chunk when no argument is a Dask array.

    Returns
    -------
    InverseDynamicsResult
        ``base_wrench`` (B, order+1, 6) and ``tau`` (B, order+1, n) as Dask
        arrays with the sample chunks of the input.
    """
    r = check_model_order(model, order)
    _refuse_workspace(workspace)
    threads = _check_threads(threads)
    n, N = model.n_joints, model.n_bodies
    batch = _Batch(q, (r + 3, n), [base_pose, base_twist, applied], chunks)
    _core.about_base(reference)
    args = [batch.blocks(base_pose, "base_pose", (4, 4), shared_ndim=2),
            batch.blocks(base_twist, "base_twist", (r + 2, 6), prefix=True),
            batch.blocks(batch.q, "q", (r + 3, n), prefix=True),
            batch.blocks(applied, "applied", (r + 1, N, 6))]
    parts = _chunked_parts(_inverse_chunk, batch, model, (r, reference, threads), args, 2)
    W0, tau = batch.assemble(parts, [((r + 1, 6), float), ((r + 1, n), float)])
    return InverseDynamicsResult(None, None, W0, tau)


def forward_dynamics_batch(model, base_pose, base_twist, q, order, *, tau, base_wrench=None,
                           applied=None, workspace=None, threads=None, reference="world",
                           chunks=None):
    """:func:`liedyn.forward_dynamics_batch` over Dask arrays, chunk by chunk.

    Parameters
    ----------
    model, base_pose, base_twist, q, order, tau, base_wrench, applied, reference
        As :func:`liedyn.forward_dynamics_batch`; the per-sample arguments
        may be Dask or NumPy arrays.
    workspace : None
        Refused: a Dask batch keeps no body jets.
    threads : int, optional, keyword
        Kernel threads per chunk (default 1).
    chunks : int, optional, keyword
        Samples per chunk when no argument is a Dask array.

    Returns
    -------
    ForwardDynamicsResult
        ``base_twist`` (B, order+2, 6), ``q`` (B, order+3, n), ``base_wrench``
        (B, order+1, 6), ``tau`` (B, order+1, n), Dask arrays.
    """
    r = check_model_order(model, order)
    _refuse_workspace(workspace)
    threads = _check_threads(threads)
    n, N = model.n_joints, model.n_bodies
    batch = _Batch(q, (2, n), [base_pose, base_twist, tau, base_wrench, applied], chunks)
    _core.about_base(reference)
    if tau is None:
        raise TypeError("tau: expected a real numeric array of shape (B, order+1, n), got None")
    if model.floating_base and base_wrench is None:
        raise ValueError(f"base_wrench: a floating base needs its wrench jets, shape "
                         f"(B, {r + 1}, 6)")
    args = [batch.blocks(base_pose, "base_pose", (4, 4), shared_ndim=2),
            batch.blocks(base_twist, "base_twist", (1, 6), prefix=True),
            batch.blocks(batch.q, "q", (2, n), prefix=True),
            batch.blocks(tau, "tau", (r + 1, n)),
            batch.blocks(base_wrench, "base_wrench", (r + 1, 6),
                         shared_ndim=None if model.floating_base else 2),
            batch.blocks(applied, "applied", (r + 1, N, 6))]
    parts = _chunked_parts(_forward_chunk, batch, model, (r, reference, threads), args, 4)
    V, qo, W0, tauo = batch.assemble(parts, [((r + 2, 6), float), ((r + 3, n), float),
                                             ((r + 1, 6), float), ((r + 1, n), float)])
    return ForwardDynamicsResult(None, None, V, qo, W0, tauo)


def _shared_pose(base_pose):
    """Whether ``base_pose`` is one pose for every sample (or ``None``)."""
    return base_pose is None or np.ndim(base_pose) == 2


def hybrid_dynamics_batch(model, base_pose, base_twist, q, order, *, motion_driven, tau=None,
                          base_wrench=None, base_motion_driven=None, applied=None,
                          reference="world", chunks=None):
    """:func:`liedyn.hybrid_dynamics` for ``B`` samples, as Dask arrays: each
    chunk loops the single-sample function over its samples.

    Parameters
    ----------
    model, order, motion_driven, base_motion_driven, reference
        As :func:`liedyn.hybrid_dynamics`, shared by every sample.
    base_pose : (B, 4, 4), (4, 4) or None
    base_twist : (B, order+2, 6) or None
    q : (B, order+3, n)
    tau : (B, order+1, n) or None, keyword
    base_wrench : (B, order+1, 6) or None, keyword
    applied : (B, order+1, N, 6) or None, keyword
    chunks : int, optional, keyword
        Samples per chunk when no argument is a Dask array.

    Returns
    -------
    HybridDynamicsResult
        ``base_twist``, ``q``, ``base_wrench``, ``tau`` with a leading
        sample axis, Dask arrays; ``motion_driven`` and
        ``base_motion_driven`` as the single-sample result has them.
    """
    from ..algorithm.hybrid import joint_mask
    r = check_model_order(model, order)
    n, N = model.n_joints, model.n_bodies
    batch = _Batch(q, (r + 3, n), [base_pose, base_twist, tau, base_wrench, applied], chunks)
    _core.about_base(reference)
    mask = joint_mask(model, motion_driven)
    base_motion = (not model.floating_base) if base_motion_driven is None else \
        bool(base_motion_driven)
    kw = dict(motion_driven=mask, base_motion_driven=base_motion_driven, reference=reference)
    args = [batch.blocks(base_pose, "base_pose", (4, 4), shared_ndim=2),
            batch.blocks(base_twist, "base_twist", (r + 2, 6), prefix=True),
            batch.blocks(batch.q, "q", (r + 3, n), prefix=True),
            batch.blocks(tau, "tau", (r + 1, n)),
            batch.blocks(base_wrench, "base_wrench", (r + 1, 6)),
            batch.blocks(applied, "applied", (r + 1, N, 6))]
    outputs = [((r + 2, 6), np.float64), ((r + 3, n), np.float64), ((r + 1, 6), np.float64),
               ((r + 1, n), np.float64)]
    parts = _chunked_parts_n(_hybrid_chunk, batch, model,
                             (r, outputs, kw, _shared_pose(base_pose)), args, 4)
    V, qo, W0, tauo = batch.assemble(parts, outputs)
    return HybridDynamicsResult(None, None, V, qo, W0, tauo, mask, base_motion)


def constrained_forward_dynamics_batch(model, constraints, base_pose, base_twist, q, order, *,
                                       tau, base_wrench=None, applied=None, baumgarte=None,
                                       rank_rtol=None, chunks=None):
    """:func:`liedyn.constrained_forward_dynamics` for ``B`` samples, as Dask
    arrays: each chunk loops the single-sample function over its samples.

    Parameters
    ----------
    model, constraints, order, baumgarte, rank_rtol
        As :func:`liedyn.constrained_forward_dynamics`, shared by every
        sample (``rank_rtol=None``: its default).
    base_pose : (B, 4, 4), (4, 4) or None
    base_twist : (B, 1, 6) or None (more rows: the first is read)
    q : (B, 2, n) (more rows: the first 2 are read)
    tau : (B, order+1, n), keyword
    base_wrench : (B, order+1, 6) or None, keyword
    applied : (B, order+1, N, 6) or None, keyword
    chunks : int, optional, keyword
        Samples per chunk when no argument is a Dask array.

    Returns
    -------
    ConstrainedForwardDynamicsResult
        The fields of the single-sample result with a leading sample axis,
        Dask arrays: ``force`` (B, order+1, m) and ``rank`` (B,) int64;
        ``constraints`` the set.
    """
    r = check_model_order(model, order)
    cs = check_constraints(model, constraints)
    n, N, m = model.n_joints, model.n_bodies, cs.n_rows
    batch = _Batch(q, (2, n), [base_pose, base_twist, tau, base_wrench, applied], chunks)
    if tau is None:
        raise TypeError("tau: expected a real numeric array of shape (B, order+1, n), got None")
    kw = dict(baumgarte=baumgarte)
    if rank_rtol is not None:
        kw["rank_rtol"] = rank_rtol
    args = [batch.blocks(base_pose, "base_pose", (4, 4), shared_ndim=2),
            batch.blocks(base_twist, "base_twist", (1, 6), prefix=True),
            batch.blocks(batch.q, "q", (2, n), prefix=True),
            batch.blocks(tau, "tau", (r + 1, n)),
            batch.blocks(base_wrench, "base_wrench", (r + 1, 6)),
            batch.blocks(applied, "applied", (r + 1, N, 6))]
    outputs = [((r + 2, 6), np.float64), ((r + 3, n), np.float64), ((r + 1, 6), np.float64),
               ((r + 1, n), np.float64), ((r + 1, m), np.float64), ((), np.int64)]
    parts = _chunked_parts_n(_constrained_forward_chunk, batch, cs,
                             (r, outputs, kw, _shared_pose(base_pose)), args, 6)
    V, qo, W0, tauo, lam, rank = batch.assemble(parts, outputs)
    return ConstrainedForwardDynamicsResult(None, None, V, qo, W0, tauo, lam, cs, rank)


def constrained_inverse_dynamics_batch(model, constraints, base_pose, base_twist, q, order, *,
                                       base_wrench=None, base_actuation=None, passive=None,
                                       force=None, weight=None, applied=None,
                                       least_squares=False, chunks=None):
    """:func:`liedyn.constrained_inverse_dynamics` for ``B`` samples, as Dask
    arrays: each chunk loops the single-sample function over its samples.

    Parameters
    ----------
    model, constraints, order, base_actuation, passive, weight, least_squares
        As :func:`liedyn.constrained_inverse_dynamics`, shared by every sample.
    base_pose : (B, 4, 4), (4, 4) or None
    base_twist : (B, order+2, 6) or None
    q : (B, order+3, n)
    base_wrench : (B, order+1, 6) or None, keyword
    force : (B, order+1, m) or None, keyword
    applied : (B, order+1, N, 6) or None, keyword
    chunks : int, optional, keyword
        Samples per chunk when no argument is a Dask array.

    Returns
    -------
    ConstrainedInverseDynamicsResult
        ``tau``, ``base_wrench``, ``force``, ``base_effort``, ``residual``
        with a leading sample axis, Dask arrays; ``constraints`` the set.
    """
    from ..contact.inverse import _joint_list
    r = check_model_order(model, order)
    cs = check_constraints(model, constraints)
    n, N, m = model.n_joints, model.n_bodies, cs.n_rows
    batch = _Batch(q, (r + 3, n), [base_pose, base_twist, base_wrench, force, applied], chunks)
    pas = _joint_list(model, passive, "passive")
    p = 0 if (base_actuation is None or force is not None) else int(np.shape(base_actuation)[-1])
    s = 0 if force is not None else (6 if model.floating_base else 0) + len(pas)
    kw = dict(base_actuation=base_actuation, passive=passive, weight=weight,
              least_squares=least_squares)
    args = [batch.blocks(base_pose, "base_pose", (4, 4), shared_ndim=2),
            batch.blocks(base_twist, "base_twist", (r + 2, 6), prefix=True),
            batch.blocks(batch.q, "q", (r + 3, n), prefix=True),
            batch.blocks(base_wrench, "base_wrench", (r + 1, 6)),
            batch.blocks(force, "force", (r + 1, m)),
            batch.blocks(applied, "applied", (r + 1, N, 6))]
    outputs = [((r + 1, n), np.float64), ((r + 1, 6), np.float64), ((r + 1, m), np.float64),
               ((r + 1, p), np.float64), ((r + 1, s), np.float64)]
    parts = _chunked_parts_n(_constrained_inverse_chunk, batch, cs,
                             (r, outputs, kw, _shared_pose(base_pose)), args, 5)
    tau, W0, lam, u, res = batch.assemble(parts, outputs)
    return ConstrainedInverseDynamicsResult(tau=tau, base_wrench=W0, force=lam, base_effort=u,
                                            residual=res, constraints=cs)


# ---------------------------------------------------------------- compute --

def compute(result, **kwargs):
    """The in-memory result of a Dask-backed batch result: every Dask field
    computed in one ``dask.compute`` call (so each chunk runs once).

    Parameters
    ----------
    result : a result of one of this module's functions
    **kwargs
        Passed to :func:`dask.compute` (e.g. ``scheduler="threads"``).

    Returns
    -------
    The same type, with NumPy arrays.
    """
    if isinstance(result, _Result):
        fields = list(result._out)
    elif isinstance(result, ConstrainedInverseDynamicsResult):
        names = ConstrainedInverseDynamicsResult.__slots__
        fields = [getattr(result, k) for k in names]
    else:
        raise TypeError(f"result: expected a liedyn result, got {type(result).__name__}")
    lazy = [i for i, f in enumerate(fields) if is_dask_array(f)]
    values = dask.compute(*[fields[i] for i in lazy], **kwargs)
    for i, v in zip(lazy, values):
        fields[i] = v
    if isinstance(result, _Result):
        return type(result)(None, None, *fields)
    return ConstrainedInverseDynamicsResult(**dict(zip(names, fields)))
