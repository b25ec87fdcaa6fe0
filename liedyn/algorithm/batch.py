"""Whole trajectories in one call: a leading sample axis on every input.

``inverse_dynamics_batch`` and ``forward_dynamics_batch`` evaluate H-GRNE-FBS
and H-GABI-FBS at ``B`` independent samples (for example the 3000 samples of
a trajectory) with the same compiled kernels as
:func:`liedyn.inverse_dynamics` and :func:`liedyn.forward_dynamics`, sample
after sample, and return the same result types with a leading sample axis.

Parallelism: the samples are split into one contiguous block per thread;
each block runs in a plain Python thread while the kernel has released the
GIL. No OpenMP or TBB runtime is involved, so a process may ``fork`` after a
batch call (``multiprocessing`` with the fork start method) and batch calls
may come from several Python threads at once.

Dask arrays: given a Dask array for any per-sample argument, either
function returns the same result type holding Dask arrays, computed chunk by
chunk with the batch kernel (:mod:`liedyn.distributed.batch`, which needs
the ``dask`` extra).

Scratch: without a workspace each block allocates one scratch for its
samples and only the outputs are kept (reading body jets of the result
raises). With ``workspace=Workspace(model, order, samples=B)`` every sample
keeps its scratch, and the result's body jets can be read (memory grows as
``B · N · order``).
"""

import os
import threading

import numpy as np

from .._checks import (_NO_APPLIED, OK, about_base, as_array, check_applied_slow, check_jet,
                       check_motion_slow, counted, raise_for)
from .._jit import Kernel, njit
from .forward import base_wrench_arg, forward_dynamics_kernel
from .inverse import inverse_dynamics_kernel
from ..multibody.model import check_model_order
from ..multibody.results import ForwardDynamicsResult, InverseDynamicsResult
from ..multibody.workspace import binomials, new_workspace_data, sample_data, workspace_for

# Samples per thread below which a batch runs in the calling thread only:
# starting a thread costs about as much as a few dozen small samples.
MIN_SAMPLES_PER_THREAD = 32


@njit(inline=True)
def _one(x, b):
    """Sample ``b`` of a batched argument, or its only entry when it is shared."""
    return x[b] if x.shape[0] > 1 else x[0]


@njit
def _inverse_dynamics_batch(model, binom, lo, hi, C0, base, Vb, q, W_app, r, W0, tau, status):
    ws = new_workspace_data(model.body_parent.shape[0], r, binom)
    for b in range(lo, hi):
        status[b] = inverse_dynamics_kernel(model, ws, _one(C0, b), base, _one(Vb, b), q[b],
                                            _one(W_app, b), r)
        W0[b] = ws.base_wrench                          # the block's scratch serves the next sample
        tau[b] = ws.tau


@njit
def _inverse_dynamics_batch_kept(model, wsb, lo, hi, C0, base, Vb, q, W_app, r, status):
    for b in range(lo, hi):
        status[b] = inverse_dynamics_kernel(model, sample_data(wsb, b), _one(C0, b), base,
                                            _one(Vb, b), q[b], _one(W_app, b), r)


@njit
def _forward_dynamics_batch(model, binom, lo, hi, C0, base, V0, q0, tau_in, Wb, W_app, r, V_out,
                            q, W0, tau, status):
    ws = new_workspace_data(model.body_parent.shape[0], r, binom)
    for b in range(lo, hi):
        status[b] = forward_dynamics_kernel(model, ws, _one(C0, b), base, _one(V0, b), q0[b],
                                            tau_in[b], _one(Wb, b), _one(W_app, b), r)
        V_out[b] = ws.base_twist                        # the block's scratch serves the next sample
        q[b] = ws.q
        W0[b] = ws.base_wrench
        tau[b] = ws.tau


@njit
def _forward_dynamics_batch_kept(model, wsb, lo, hi, C0, base, V0, q0, tau_in, Wb, W_app, r,
                                 status):
    for b in range(lo, hi):
        status[b] = forward_dynamics_kernel(model, sample_data(wsb, b), _one(C0, b), base,
                                            _one(V0, b), q0[b], tau_in[b], _one(Wb, b),
                                            _one(W_app, b), r)


_KERNELS = {
    ("inverse", False): Kernel(_inverse_dynamics_batch),
    ("inverse", True): Kernel(_inverse_dynamics_batch_kept),
    ("forward", False): Kernel(_forward_dynamics_batch),
    ("forward", True): Kernel(_forward_dynamics_batch_kept),
}


def available_cores():
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _threads(threads, B):
    if threads is None:
        threads = available_cores()
    elif isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)) \
            or threads < 1:
        raise ValueError(f"threads: expected a positive int or None, got {threads!r}")
    return max(1, min(int(threads), B // MIN_SAMPLES_PER_THREAD))


def _run(kernel, B, threads, head, tail):
    """``kernel.call(*head, lo, hi, *tail)`` on contiguous blocks ``[lo, hi)``
    covering the ``B`` samples, one block per thread."""
    n = _threads(threads, B)
    bounds = [B * i // n for i in range(n + 1)]
    call = kernel.prepare(*head, 0, 0, *tail)
    workers = [threading.Thread(target=call, args=(*head, lo, hi, *tail), daemon=True)
               for lo, hi in zip(bounds[1:-1], bounds[2:])]
    for w in workers:
        w.start()
    call(*head, bounds[0], bounds[1], *tail)
    for w in workers:
        w.join()


def _dispatch(kind, model, ws, r, B, threads, inputs, outputs):
    """Run the batch kernel of ``kind`` over ``B`` samples: into ``outputs``
    (with one scratch per block), or, given a batch workspace ``ws``, with
    every sample's scratch and outputs kept in it. Returns ``(status,
    call number)`` (``None`` without a workspace)."""
    status = np.empty(B, dtype=np.int64)
    if ws is None:
        _run(_KERNELS[kind, False], B, threads, (model._data, binomials(r + 3)),
             inputs + outputs + (status,))
        return status, None
    call = ws._acquire()
    try:
        _run(_KERNELS[kind, True], B, threads, (model._data, ws._data), inputs + (status,))
    finally:
        ws._release()
    return status, call


def _batch_arg(x, name, tail, B=None, prefix=False):
    """``x`` of shape ``(B, *tail)`` as a plain float64 array; a motion jet
    (``prefix``) may have more than ``tail[0]`` rows, which are not read."""
    a = as_array(x, name, allow_nonfinite=True)
    if prefix and a.ndim == len(tail) + 1 and a.shape[1] > tail[0]:
        a = a[:, :tail[0]]
        if not a.flags.c_contiguous:
            a = np.ascontiguousarray(a)
    if a.ndim != len(tail) + 1 or a.shape[1:] != tuple(tail):
        want = ", ".join(["B"] + [str(t) for t in tail])
        more = f" (or more than {counted(tail[0], 'row')})" if prefix else ""
        raise ValueError(f"{name}: expected shape ({want}){more}, got {a.shape}")
    if B is not None and a.shape[0] != B:
        raise ValueError(f"{name}: expected {counted(B, 'sample')} (the batch size of q), "
                         f"got {a.shape[0]}")
    return a


def _batch_pose(model, base_pose, B):
    """Base poses ``(B, 4, 4)``, or one ``(1, 4, 4)`` that every sample shares
    (``None``: the home pose; a single ``(4, 4)`` pose)."""
    if base_pose is None:
        return model.home_pose[None]
    C0 = as_array(base_pose, "base_pose", allow_nonfinite=True)
    if C0.shape == (4, 4):
        return C0[None]
    return _batch_arg(C0, "base_pose", (4, 4), B)


def _batch_motion(model, base_pose, base_twist, q, twist_rows, q_rows):
    """``(B, C0, Vb, q)``; an argument left out (the home pose, a fixed base's
    empty twist) or a single base pose has leading axis 1 and stands for
    every sample."""
    qj = _batch_arg(q, "q", (q_rows, model.n_joints), prefix=True)
    B = qj.shape[0]
    C0 = _batch_pose(model, base_pose, B)
    if model.floating_base:
        if base_twist is None:
            raise ValueError(f"base_twist: a floating base needs twist jets, shape "
                             f"(B, {twist_rows}, 6)")
        Vb = _batch_arg(base_twist, "base_twist", (twist_rows, 6), B, prefix=True)
    else:
        if base_twist is not None and np.any(_batch_arg(base_twist, "base_twist",
                                                        (twist_rows, 6), B, prefix=True)):
            raise ValueError("base_twist: a fixed base does not move; pass None (or zeros)")
        Vb = np.zeros((1, 0, 6))
    return B, C0, Vb, qj


def _batch_applied(model, applied, rows, B):
    if applied is None:
        return _NO_APPLIED[None]
    return _batch_arg(applied, "applied", (rows, model.n_bodies, 6), B)


def _raise_for_sample(status, model, recheck):
    """The error of the first failing sample, named."""
    bad = np.flatnonzero(status != OK)
    if bad.size:
        b = int(bad[0])
        try:
            raise_for(int(status[b]), model, lambda: recheck(b))
        except ValueError as err:
            raise ValueError(f"sample {b}: {err}") from None


def _outputs(ws, out):
    """The result's own output arrays: ``out`` itself, or copies of the batch
    workspace's outputs of the same names."""
    return out.values() if ws is None else [getattr(ws, name).copy() for name in out]


def _sample(x, b):
    """Sample ``b`` of an argument as the caller gave it (a shared pose: itself)."""
    if x is None:
        return None
    a = np.asarray(x)
    return a if a.ndim == 2 else a[b]


def lazy(*args):
    """Whether any argument is a Dask array (told by its type's module, so
    that Dask is not imported here)."""
    return any(type(a).__module__.startswith("dask.") for a in args if a is not None)


def _refuse_lazy(*args):
    """A Dask array handed to the compiled batch would be computed whole by
    ``np.asarray``; the public functions route it to ``liedyn.distributed``
    (:mod:`liedyn._routes`), this layer below it does not."""
    if lazy(*args):
        raise TypeError("a Dask array: liedyn.algorithm.batch takes NumPy arrays; call "
                        "liedyn.inverse_dynamics_batch / liedyn.forward_dynamics_batch (or "
                        "liedyn.distributed.batch), which compute Dask arrays chunk by chunk")


def _workspace(model, r, workspace, B):
    """The batch workspace, checked, or ``None``."""
    if workspace is None:
        return None
    return workspace_for(model, r, workspace, samples=B)


def inverse_dynamics_batch(model, base_pose, base_twist, q, order, *, applied=None,
                           workspace=None, threads=None, reference="world"):
    """:func:`liedyn.inverse_dynamics` for ``B`` samples at once.

    Parameters
    ----------
    model : Model
    base_pose : (B, 4, 4) or None
        Base poses (``None``: the home pose for every sample).
    base_twist : (B, order+2, 6) or None (more rows: the first order+2 are read)
        Base twist jets; ``None`` for a fixed base.
    q : (B, order+3, n) (more rows: the first order+3 are read)
        Joint jets.
    order : int ≥ 0
    applied : (B, order+1, N, 6), optional, keyword
    workspace : Workspace, optional, keyword
        ``Workspace(model, order, samples=B)`` keeps every sample's body jets.
    threads : int, optional, keyword
        Threads to use (default: every available core).
    reference : {"world", "base"}, keyword
        As :func:`liedyn.inverse_dynamics`.

    Returns
    -------
    InverseDynamicsResult
        ``base_wrench`` (B, order+1, 6), ``tau`` (B, order+1, n); body jets
        with a leading sample axis when a batch workspace was given.

    Raises
    ------
    ValueError, TypeError
        As :func:`liedyn.inverse_dynamics`; the message names the first bad sample.

    Notes
    -----
    Called as ``liedyn.inverse_dynamics_batch``, a Dask array for
    ``base_pose``, ``base_twist``, ``q`` or ``applied`` returns the result of
    :func:`liedyn.distributed.batch.inverse_dynamics_batch`: Dask arrays,
    computed chunk by chunk. Called as
    ``liedyn.algorithm.batch.inverse_dynamics_batch`` (which does not import
    Dask), it raises ``TypeError``.
    """
    _refuse_lazy(base_pose, base_twist, q, applied)
    r = check_model_order(model, order)
    B, C0, Vb, qj = _batch_motion(model, base_pose, base_twist, q, r + 2, r + 3)
    Wa = _batch_applied(model, applied, r + 1, B)
    ws = _workspace(model, r, workspace, B)
    out = dict(base_wrench=np.empty((B, r + 1, 6)), tau=np.empty((B, r + 1, model.n_joints)))
    status, call = _dispatch("inverse", model, ws, r, B, threads,
                             (C0, about_base(reference), Vb, qj, Wa, r),
                             (out["base_wrench"], out["tau"]))
    _raise_for_sample(status, model, lambda b: (
        check_motion_slow(model, _sample(base_pose, b), _sample(base_twist, b), qj[b], r + 2,
                          r + 3),
        check_applied_slow(model, _sample(applied, b), r + 1)))
    return InverseDynamicsResult(ws, call, *_outputs(ws, out))


def forward_dynamics_batch(model, base_pose, base_twist, q, order, *, tau, base_wrench=None,
                           applied=None, workspace=None, threads=None, reference="world"):
    """:func:`liedyn.forward_dynamics` for ``B`` samples at once.

    Parameters
    ----------
    model : Model
    base_pose : (B, 4, 4) or None
    base_twist : (B, 1, 6) or None (more rows: only the first is read)
        Base twists ``V₀``; ``None`` for a fixed base.
    q : (B, 2, n) (more rows: the first 2 are read)
        States ``[q; q̇]``.
    order : int ≥ 0
    tau : (B, order+1, n), keyword
    base_wrench : (B, order+1, 6) or None, keyword
        ``None`` for a fixed base.
    applied : (B, order+1, N, 6), optional, keyword
    workspace : Workspace, optional, keyword
        ``Workspace(model, order, samples=B)`` keeps every sample's body jets.
    threads : int, optional, keyword
    reference : {"world", "base"}, keyword
        As :func:`liedyn.forward_dynamics`.

    Returns
    -------
    ForwardDynamicsResult
        ``base_twist`` (B, order+2, 6), ``q`` (B, order+3, n), ``base_wrench``
        (B, order+1, 6) (a fixed base's reaction), ``tau`` (B, order+1, n).

    Raises
    ------
    ValueError, TypeError
        As :func:`liedyn.forward_dynamics`; the message names the first bad sample.

    Notes
    -----
    Called as ``liedyn.forward_dynamics_batch``, a Dask array for any
    per-sample argument returns the result of
    :func:`liedyn.distributed.batch.forward_dynamics_batch`: Dask arrays,
    computed chunk by chunk. Called as
    ``liedyn.algorithm.batch.forward_dynamics_batch`` (which does not import
    Dask), it raises ``TypeError``.
    """
    _refuse_lazy(base_pose, base_twist, q, tau, base_wrench, applied)
    r = check_model_order(model, order)
    n = model.n_joints
    B, C0, V0, q0 = _batch_motion(model, base_pose, base_twist, q, 1, 2)
    tau_in = _batch_arg(tau, "tau", (r + 1, n), B)
    if model.floating_base:
        if base_wrench is None:
            raise ValueError(f"base_wrench: a floating base needs its wrench jets, shape "
                             f"(B, {r + 1}, 6)")
        Wb = _batch_arg(base_wrench, "base_wrench", (r + 1, 6), B)
    else:
        Wb = base_wrench_arg(model, base_wrench, r + 1, False)[None]
    Wa = _batch_applied(model, applied, r + 1, B)
    ws = _workspace(model, r, workspace, B)
    out = dict(base_twist=np.empty((B, r + 2, 6)), q=np.empty((B, r + 3, n)),
               base_wrench=np.empty((B, r + 1, 6)), tau=np.empty((B, r + 1, n)))
    status, call = _dispatch("forward", model, ws, r, B, threads,
                             (C0, about_base(reference), V0, q0, tau_in, Wb, Wa, r),
                             (out["base_twist"], out["q"], out["base_wrench"], out["tau"]))
    _raise_for_sample(status, model, lambda b: (
        check_motion_slow(model, _sample(base_pose, b), _sample(base_twist, b), q0[b], 1, 2),
        check_jet(tau_in[b], "tau", (r + 1, n)),
        check_jet(Wb[b], "base_wrench", (r + 1, 6)) if model.floating_base else None,
        check_applied_slow(model, _sample(applied, b), r + 1)))
    return ForwardDynamicsResult(ws, call, *_outputs(ws, out))
