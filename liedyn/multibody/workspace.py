"""Scratch memory for one ``(model, order)``, reused call after call, and the
binomial tables the recursions share.

Fields (``N`` bodies, ``r`` the order; SPEC §1 gives the symbols)
-----------------------------------------------------------------
=========  ===============  ====================================================
``binom``  (r+4, r+4)       ``C(i, k)``, read-only
``o``      (3,)             the point the kernels compute about: the base
                            origin ``p₀`` of the call, world frame
``d``      (3,)             ``o`` minus the point the call's twists and
                            wrenches are taken about (``o`` for
                            ``reference="world"``, zero for ``"base"``)
``F``      (N, 4, 4)        ``F_j`` (translated by ``−o``)
``C``      (N, 4, 4)        body poses ``C_j`` (translated by ``−o``)
``S``      (r+2, N, 6)      screw jets ``S_j^(k)`` about ``o``
``V``      (r+2, N, 6)      twist jets ``V_j^(k)`` about ``o``
``c``      (r+3, N, 3)      centre-of-mass jets ``c_j^(k)`` relative to ``o``
``Ic``     (r+2, N, 3, 3)   rotational inertia jets about the CoM, world axes
``Pi``     (r+2, N, 6)      momentum jets ``Π_j^(k)`` about ``o``
``W``      (r+1, N, 6)      wrench jets ``W_j^(k)`` about ``o``
``MA``     (N, 6, 6)        articulated inertias ``M^A_j`` about ``o``
``U``      (N, 6)           ``U_j = M^A_j S_j``
``D``      (N,)             pivots ``D_j``
``L``      (6, 6)           Cholesky factor of ``M^A_0``
=========  ===============  ====================================================

The closed form (SPEC §7) keeps its own scratch, made on the workspace's
first closed-form call (the other algorithms and the batch kernels never
pay for it): a third handle with ``Mc``, ``Bc`` (r+1, N, 6, 6), ``Wc``
(r+1, N, 6), ``MS``, ``BS``, ``Z`` (r+1, 6) and ``G`` (6,), described in
:mod:`liedyn.algorithm.closed_form`.

Outputs of the call (world frame, or as the call's ``reference``), which its
result copies: ``base_twist`` (r+2, 6), ``q`` (r+3, n), ``base_wrench``
(r+1, 6), ``tau`` (r+1, n). They are read-only to Python; only the kernels
write them.
"""

import sys
from functools import lru_cache

import numpy as np

from .._checks import check_order, check_type
from ._data import ClosedFormData, WorkspaceData
from .._jit import Kernel, njit
from .model import check_model


@lru_cache(maxsize=None)
def _binomials(n):
    B = np.zeros((n + 1, n + 1))
    for i in range(n + 1):
        B[i, 0] = 1.0
        for k in range(1, i + 1):
            B[i, k] = B[i - 1, k - 1] + B[i - 1, k]
    B.setflags(write=False)
    return B


def binomials(n):
    """Table ``B[i, k] = C(i, k)`` for ``0 ≤ k ≤ i ≤ n`` (float64, read-only)."""
    return _binomials(int(n))


def scratch_shapes(N, r):
    """Shapes of the scratch and output fields, in :data:`liedyn.multibody._data.WORKSPACE_FIELDS`
    order after ``order`` and ``binom``."""
    return ((3,), (3,), (N, 4, 4), (N, 4, 4), (r + 2, N, 6), (r + 2, N, 6), (r + 3, N, 3),
            (r + 2, N, 3, 3), (r + 2, N, 6), (r + 1, N, 6), (N, 6, 6), (N, 6), (N,), (6, 6),
            (r + 2, 6), (r + 3, N - 1), (r + 1, 6), (r + 1, N - 1))


@njit
def _workspace_data(order, binom, o, d, F, C, S, V, c, Ic, Pi, W, MA, U, D, L, base_twist, q,
                    base_wrench, tau):
    return WorkspaceData(order, binom, o, d, F, C, S, V, c, Ic, Pi, W, MA, U, D, L, base_twist, q,
                         base_wrench, tau)


# the same shapes in compiled code (a Workspace takes them in Python: no dispatch per call)
_scratch_shapes = njit(scratch_shapes, inline=True)


@njit
def new_workspace_data(N, r, binom):
    """A fresh single-sample handle, allocated in compiled code (the batch
    kernels make one per block of samples); its fields are zeroed where a
    :class:`Workspace`'s are."""
    s = _scratch_shapes(N, r)
    return WorkspaceData(r, binom, np.zeros(s[0]), np.zeros(s[1]), np.empty(s[2]),
                         np.empty(s[3]), np.empty(s[4]), np.empty(s[5]), np.empty(s[6]),
                         np.empty(s[7]), np.empty(s[8]), np.empty(s[9]), np.empty(s[10]),
                         np.empty(s[11]), np.empty(s[12]), np.empty(s[13]), np.empty(s[14]),
                         np.empty(s[15]), np.empty(s[16]), np.empty(s[17]))


@njit
def sample_data(ws, b):
    """The handle of sample ``b`` of a batch workspace (views, no copy)."""
    return WorkspaceData(ws.order, ws.binom, ws.o[b], ws.d[b], ws.F[b], ws.C[b], ws.S[b], ws.V[b],
                         ws.c[b], ws.Ic[b], ws.Pi[b], ws.W[b], ws.MA[b], ws.U[b], ws.D[b],
                         ws.L[b], ws.base_twist[b], ws.q[b], ws.base_wrench[b], ws.tau[b])


def closed_form_shapes(N, r):
    """Shapes of the closed-form scratch, in
    :data:`liedyn.multibody._data.CLOSED_FORM_FIELDS` order."""
    return ((r + 1, N, 6, 6), (r + 1, N, 6, 6), (r + 1, N, 6), (r + 1, 6), (r + 1, 6),
            (r + 1, 6), (6,))


@njit
def _closed_form_data(Mc, Bc, Wc, MS, BS, Z, G):
    return ClosedFormData(Mc, Bc, Wc, MS, BS, Z, G)


_MAKE = Kernel(_workspace_data)          # single-sample arrays
_MAKE_BATCH = Kernel(_workspace_data)    # the same with a leading sample axis
_MAKE_CLOSED_FORM = Kernel(_closed_form_data)

_FIELDS = ("o", "d", "F", "C", "S", "V", "c", "Ic", "Pi", "W", "MA", "U", "D", "L")
OUTPUTS = ("base_twist", "q", "base_wrench", "tau")
# What a result's body jets read (:mod:`liedyn.multibody.results`): first in
# the workspace's one buffer, so that one copy of its start keeps them.
BODY_JETS = ("o", "d", "C", "S", "V", "Pi", "W", "MA")
_BUFFER_ORDER = BODY_JETS + tuple(f for f in _FIELDS + OUTPUTS if f not in BODY_JETS)


class Workspace:
    """Scratch arrays for one ``(model, order)``, reused call after call.

    Pass ``workspace=Workspace(model, order)`` to an algorithm and the call
    allocates nothing of the size of the tree, like Pinocchio's ``Data``.
    The result owns its force and motion jets (``base_wrench``, ``tau``,
    ``q``, ``base_twist``: copies, valid for ever); its body jets
    (``twist``, ``screw``, ``momentum``, ``wrench``, ``body_pose``,
    ``articulated_inertia``) are read from the workspace when first
    accessed, and once a later call has used the same workspace those not
    read yet raise ``RuntimeError`` rather than return that call's numbers.
    A call without ``workspace=`` takes a workspace from its thread's pool
    for the model, and its result's body jets never expire: a pooled
    workspace that a kept result still reads is reused only after that
    result has been given a copy of its body jets. It is as fast, also in a
    loop that keeps every result.
    The closed-form functions (:func:`liedyn.mass_matrix`,
    :func:`liedyn.coriolis_matrix`, :func:`liedyn.gravity_vector`,
    :func:`liedyn.closed_form_jets`) take their scratch from the workspace
    too and return arrays of their own.

    A workspace serves one call at a time: a call that finds it in use by
    another thread raises ``RuntimeError`` instead of corrupting it. Give
    each thread its own workspace.

    Parameters
    ----------
    model : Model
    order : int
        The derivative order ``r`` of the calls it serves.
    samples : int, optional
        For the batch functions: keep the scratch of ``samples`` samples, so
        that a batch result's body jets can be read (memory grows as
        ``samples · N · r``). Without it a batch call keeps only its
        outputs.
    """

    __slots__ = ("model", "order", "samples", "binom", "_data", "_closed_form", "_free",
                 "_calls", "_jets", "_layout", "_lease") + _FIELDS + OUTPUTS

    def __init__(self, model, order, samples=None):
        check_model(model)
        r = check_order(order)
        if samples is not None:
            if isinstance(samples, (bool, np.bool_)) or not isinstance(samples, (int, np.integer)):
                raise TypeError(f"samples: expected a positive int or None, got "
                                f"{type(samples).__name__}")
            if samples < 1:
                raise ValueError(f"samples: expected a positive int, got {samples}")
            samples = int(samples)
        self._init(model, r, samples)

    def _init(self, model, r, samples):
        self.model = model
        self.order = r
        self.samples = samples
        self.binom = binomials(r + 3)
        lead = () if samples is None else (samples,)
        shapes = dict(zip(_FIELDS + OUTPUTS, scratch_shapes(model.n_bodies, r)))
        # one buffer, cut into the fields (C-contiguous float64 views): the
        # body jets at its start, o and d zeroed as the kernels expect
        layout, end = {}, 0
        for f in _BUFFER_ORDER:
            shape = lead + shapes[f]
            size = int(np.prod(shape))
            layout[f] = (end, end + size, shape)
            end += size
        buf = np.empty(end)
        buf[:layout["d"][1]] = 0.0
        arrays = [buf[a:b].reshape(shape) for a, b, shape in
                  (layout[f] for f in _FIELDS + OUTPUTS)]
        self._jets = buf[:layout[BODY_JETS[-1]][1]]
        self._layout = {f: layout[f] for f in BODY_JETS}
        self._lease = None
        for f, a in zip(_FIELDS + OUTPUTS, arrays):
            if f in OUTPUTS:            # results hand these out: the kernels alone write them,
                a = a.view()            # through the handle (plain Python objects when numba
                a.setflags(write=False)  # is disabled), so only the view is read-only
            setattr(self, f, a)
        self._data = (_MAKE if samples is None else _MAKE_BATCH).call(r, self.binom, *arrays)
        self._closed_form = None
        self._free = [True]   # one token: list.pop and append are atomic under the GIL
        self._calls = 0

    @classmethod
    def _fresh(cls, model, r, samples=None):
        """A workspace for one call (arguments already checked)."""
        self = object.__new__(cls)
        self._init(model, r, samples)
        return self

    def _closed_form_data(self):
        """The handle of the closed form's scratch (SPEC §7), allocated on
        first use; kernels take it after the workspace handle."""
        data = self._closed_form
        if data is None:
            data = self._closed_form = _MAKE_CLOSED_FORM.call(
                *(np.empty(s) for s in closed_form_shapes(self.model.n_bodies, self.order)))
        return data

    def _acquire(self):
        """Take the workspace for one call (give it back with :meth:`_release`);
        returns the call number."""
        try:
            self._free.pop()
        except IndexError:
            raise RuntimeError("workspace: in use by a call in another thread; a workspace "
                               "serves one call at a time (give each thread its own)") from None
        self._calls += 1
        return self._calls

    def _release(self):
        self._free.append(True)

    def _serve(self, kernel, model, *args):
        """``kernel.call(model handle, workspace handle, *args)`` with the
        workspace held for the call (as :meth:`_acquire` and :meth:`_release`,
        inlined: this is on every call's path); returns ``(status, call
        number)``."""
        free = self._free
        try:
            free.pop()
        except IndexError:
            self._acquire()                 # raises: in use by another call
        self._calls = call = self._calls + 1
        try:
            return kernel.call(model._data, self._data, *args), call
        finally:
            free.append(True)

    def __repr__(self):
        extra = "" if self.samples is None else f", samples={self.samples}"
        return f"Workspace({self.model!r}, order={self.order}{extra})"


# -- the workspaces of calls made without one -------------------------------
#
# A call without ``workspace=`` takes a workspace from a small per-thread
# pool of its model, kept by order: building one costs several times a small
# robot's whole call. Its result holds the workspace's current lease (a
# one-item list, ``[ws]``), and the workspace is free again once nothing but
# itself refers to that lease: in a loop ``res = f(...)`` the previous result
# still holds one during the next call, and the pool alternates between two.
# When every pooled workspace is held (a loop that keeps its results), one is
# detached from its result, whose lease then holds a copy of the body jets
# it reads (one copy of the start of the workspace's buffer, far cheaper
# than a new workspace), and serves the call. No result's body jets are ever
# overwritten. The pool is per thread (no locking; a thread never finds
# another's workspace in use) and per model (it lives and dies with the
# model).

POOLED_PER_ORDER = 2      # workspaces kept for one (model, order) in one thread
POOLED_ORDERS = 4         # orders kept per model and thread (the oldest added goes first)


_getrefcount = sys.getrefcount


def _count_in_loop(entries):
    """References to the only entry of ``entries`` as the pool's loops count
    them when nothing else refers to it."""
    for ws in entries:
        return _getrefcount(ws)


class _Holder:
    __slots__ = ("_lease",)


def _count_lease(holder):
    """References to ``holder._lease`` as the pool counts them when nothing
    but its workspace refers to it."""
    return _getrefcount(holder._lease)


# a pooled workspace's current lease refers to it too: one reference more
_FREE = _count_in_loop([object()]) + 1
_h = _Holder()
_h._lease = [None]
_FREE_LEASE = _count_lease(_h)
del _h


def detach(ws):
    """Give the result holding ``ws``'s lease a copy of the body jets it
    reads (:data:`BODY_JETS`, one copy of the start of the buffer), so that
    ``ws`` can serve another call."""
    ws._lease[0] = (ws._jets.copy(), ws._layout, ws._calls)


def _pool_take(model, r, entries):
    """A pooled workspace for ``model`` at order ``r`` when none of this
    thread's ``entries`` (``None``: none yet for ``r``) is free: a new one
    while the pool has room, else one held only by a result, detached from
    it (:func:`detach`), else (every one serves a call under way) a new one
    outside the pool. Its lease is a new one."""
    by_order = model._pool.by_order
    if entries is None:
        if len(by_order) >= POOLED_ORDERS:
            del by_order[next(iter(by_order))]
        entries = by_order[r] = []
    if len(entries) < POOLED_PER_ORDER:
        ws = Workspace._fresh(model, r)
        entries.append(ws)
    else:
        for ws in entries:
            if _getrefcount(ws) <= _FREE:       # not in a call under way: held by a result
                detach(ws)
                break
        else:
            ws = Workspace._fresh(model, r)
    ws._lease = [ws]
    return ws


def pooled(model, r):
    """A single-call workspace of this thread's pool for ``(model, r)`` that
    no call under way uses and no result reads (:func:`_pool_take` when there
    is none), with a new lease (``ws._lease``, a list ``[ws]``) for the
    result of the call it serves. The pool is per thread and no workspace a
    call under way refers to is taken, so the caller may use it without
    :meth:`Workspace._serve`'s hold (bumping ``_calls`` itself).

    A result of a call without ``workspace=`` holds the lease, not the
    workspace: the workspace counts as free once nothing but it refers to
    its lease. When every pooled workspace is held that way (a loop that
    keeps its results), one of them is detached from its result, which then
    reads its body jets from a copy."""
    entries = model._pool.by_order.get(r)
    if entries is not None:
        for ws in entries:
            if _getrefcount(ws) <= _FREE and _getrefcount(ws._lease) <= _FREE_LEASE:
                ws._lease = [ws]
                return ws
        ws = None
    return _pool_take(model, r, entries)


def workspace_for(model, order, workspace, samples=None):
    """``workspace`` checked against ``(model, order)``; without one, a
    single-call workspace of this thread's pool (:func:`pooled`), whose
    result holds ``ws._lease`` (:func:`holder`)."""
    if workspace is None:
        if samples is None:
            return pooled(model, order)
        return Workspace._fresh(model, order, samples)
    if (type(workspace) is Workspace and workspace.model is model and workspace.order == order
            and workspace.samples == samples):
        return workspace
    if type(workspace) is not Workspace:
        check_type(workspace, Workspace, "workspace", "a liedyn.Workspace")
    if workspace.model is not model or workspace.order != order:
        other = "" if workspace.model is model else \
            f" (another Model object: id {id(workspace.model):#x}, not {id(model):#x})"
        raise ValueError(f"workspace: built for {workspace.model!r} at order {workspace.order}"
                         f"{other}, called with {model!r} at order {order}; a workspace serves "
                         f"the model object it was built for")
    if workspace.samples != samples:
        want = "a single-call workspace (samples=None)" if samples is None else \
            f"a batch workspace with samples={samples}"
        raise ValueError(f"workspace: expected {want}, got samples={workspace.samples}")
    return workspace


def holder(ws):
    """What a result of a call served by ``ws`` holds: the lease of a pooled
    workspace (:func:`pooled`), else the workspace itself."""
    return ws._lease or ws
