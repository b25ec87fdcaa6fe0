"""Typed results of the algorithms.

What a result owns: its force and motion jets (``base_wrench``, ``tau``,
and for forward and hybrid dynamics ``base_twist`` and ``q``, a few hundred
numbers) are arrays of its own, copied out of the workspace when the call
returns: nothing else refers to them, so they stay valid for ever whatever
later calls do with the workspace, and they are the user's to modify.

What a result reads later: the body jets (poses, twists, screws, momenta,
wrenches, articulated inertias of every body, O(N · order) numbers),
computed about the base origin ``o`` (SPEC §1), stay in the call's
workspace and are mapped back to the call's reference point (the world
origin, or the base origin with ``reference="base"``) and copied when first
read: one adjoint per jet, so a result that never reads them pays nothing.
Body poses are in the world. If the call was given ``workspace=`` and a
later call has used that workspace, reading a body jet not read before
raises ``RuntimeError`` rather than return another call's numbers. A call
without ``workspace=`` takes a pooled workspace whose result's body jets
never expire: before the workspace serves another call while the result is
alive, the result gets a copy of them.

Batch results are the same types with a leading sample axis; without a
batch workspace they keep no body jets.
"""

import numpy as np

__all__ = ["KinematicsResult", "InverseDynamicsResult", "ForwardDynamicsResult",
           "HybridDynamicsResult"]


# ---------------------------------------------------- frame of the outputs --

def _hat(x):
    """``x̂`` (..., 3, 3), the cross-product matrix of ``x`` (..., 3)."""
    x = np.asarray(x, float)
    out = np.zeros(x.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -x[..., 2], x[..., 1]
    out[..., 1, 0], out[..., 1, 2] = x[..., 2], -x[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -x[..., 1], x[..., 0]
    return out


def _against(o, a):
    """``o`` reshaped to broadcast against ``a[..., :tail]``: its leading
    (sample) axes first, then ones."""
    return o.reshape(o.shape[:-1] + (1,) * (a.ndim - o.ndim) + o.shape[-1:])


def unshift_pose(C, o):
    """Poses ``(..., 4, 4)`` computed relative to ``o`` back in the world."""
    out = np.array(C)
    out[..., :3, 3] += _against(o, C[..., 0])
    return out


def cross3(a, b):
    """``a × b`` of 3-vectors ``(..., 3)`` (broadcast), written out:
    ``np.cross`` spends microseconds on its argument handling, which the
    per-stage kinematics of a simulation would pay many times."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def unshift_twist(V, o):
    """Twists/screws ``(..., 6)`` about ``o`` back about the world origin:
    ``(ω, v − ω × o)`` (SPEC §1)."""
    out = np.array(V)
    out[..., 3:] -= cross3(V[..., :3], _against(o, V))
    return out


def unshift_wrench(W, o):
    """Wrenches/momenta ``(..., 6)`` about ``o`` back about the world origin:
    ``(m + o × f, f)`` (SPEC §1)."""
    out = np.array(W)
    out[..., :3] += cross3(_against(o, W), W[..., 3:])
    return out


def unshift_inertia(M, o):
    """Spatial inertias ``(..., 6, 6)`` about ``o`` back about the world origin:
    ``Xᵀ M X`` with ``X = Ad_{T(−o)} = [[I, 0], [−ô, I]]``."""
    X = np.zeros(o.shape[:-1] + (6, 6))
    X[..., :3, :3] = X[..., 3:, 3:] = np.eye(3)
    X[..., 3:, :3] = -_hat(o)
    X = X.reshape(o.shape[:-1] + (1,) * (M.ndim - 2 - o.ndim + 1) + (6, 6))
    return np.swapaxes(X, -1, -2) @ M @ X


# ------------------------------------------------------------- the types --

def _frozen_setattr(self, name, value):
    """``__setattr__`` of an immutable object: refuses every assignment."""
    raise AttributeError(f"{type(self).__name__} is frozen: cannot set {name!r}")


def _freeze(obj, **fields):
    """Set the attributes ``fields`` of an object whose ``__setattr__`` is
    :func:`_frozen_setattr`, making the arrays among them read-only."""
    for k, v in fields.items():
        if isinstance(v, np.ndarray):
            v.setflags(write=False)
        object.__setattr__(obj, k, v)


class _Copy:
    """The body jets of a pooled workspace copied for the result it served
    (:func:`liedyn.multibody.workspace.detach`): ``buffer`` holds the fields
    of ``layout`` (``{field: (start, stop, shape)}``); ``_calls`` is the
    call number the result was served by."""

    __slots__ = ("_buffer", "_layout", "_calls")

    def __init__(self, buffer, layout, calls):
        self._buffer, self._layout, self._calls = buffer, layout, calls

    def __getattr__(self, name):
        try:
            a, b, shape = self._layout[name]
        except KeyError:
            raise AttributeError(name) from None
        return self._buffer[a:b].reshape(shape)


class _Result:
    """Outputs owned by the result; body jets read from the call's workspace.

    ``outputs`` are the arrays of :attr:`_fields`, in order, that the result
    takes over (copies the caller made: nothing else refers to them, so they
    are the user's to keep or modify); the attributes themselves cannot be
    set."""

    __slots__ = ("_ws", "_call", "_cache", "_out")
    _fields = ()

    def __init_subclass__(cls, **kwargs):
        """A read-only property per name of the type's ``_fields``: entry ``i``
        of the result's own outputs."""
        super().__init_subclass__(**kwargs)
        for i, name in enumerate(cls._fields):
            setattr(cls, name, property(lambda self, i=i: self._out[i]))

    def __init__(self, ws, call, *outputs):
        self._ws = ws
        self._call = call
        self._cache = None
        self._out = outputs

    def _live(self, name, ws):
        """The workspace (or the copy of its body jets) ``ws`` the result
        reads, if this result's call was the last it served."""
        if type(ws) is tuple:               # detached from a pooled workspace
            return _Copy(*ws)
        if ws is None:
            raise RuntimeError(f"{name}: a batch call keeps body jets only in a batch workspace; "
                               f"pass workspace=liedyn.Workspace(model, order, samples=B)")
        if ws._calls != self._call:
            raise RuntimeError(f"{name}: the workspace passed to this result's call has since "
                               f"served another call, which overwrote the body jets; read them "
                               f"before reusing the workspace, or call without workspace= (the "
                               f"force and motion jets of a result are its own and stay valid)")
        return ws

    def _body(self, name, field, unshift, point="d"):
        """Body quantity ``field`` of the workspace, mapped from the
        computation point ``o`` back to the call's reference point (``d``;
        poses: back to the world, ``o``)."""
        if self._cache is None:
            self._cache = {}
        if name not in self._cache:
            held = self._ws
            while True:
                # a pooled workspace's lease: what it holds now (the workspace,
                # or a copy once detached); read again if another thread's
                # call detached it meanwhile (before it overwrote anything)
                src = held[0] if type(held) is list else held
                ws = self._live(name, src)
                out = unshift(getattr(ws, field), getattr(ws, point))
                if type(held) is not list or held[0] is src:
                    break
            out.setflags(write=False)
            self._cache[name] = out
        return self._cache[name]

    @property
    def body_pose(self):
        """``C_j`` (N, 4, 4): body poses in the world."""
        return self._body("body_pose", "C", unshift_pose, "o")

    @property
    def twist(self):
        """``V_j^(k)`` (order+2, N, 6): spatial body twist jets."""
        return self._body("twist", "V", unshift_twist)

    @property
    def screw(self):
        """``S_j^(k)`` (order+2, N, 6): current joint screw jets (body 0: zero)."""
        return self._body("screw", "S", unshift_twist)

    @property
    def wrench(self):
        """``W_j^(k)`` (order+1, N, 6): wrench jets joint j transmits to its subtree
        (row k of body 0: ``W₀^(k)``)."""
        return self._body("wrench", "W", unshift_wrench)

    def __repr__(self):
        fields = ", ".join(f"{k}={np.shape(getattr(self, k))}" for k in self._fields)
        return f"{type(self).__name__}({fields})"


class KinematicsResult:
    """Body poses and the jets of body twists and joint screws.

    Attributes
    ----------
    body_pose : (N, 4, 4)
        ``C_j``, the pose of each body frame in the world.
    twist : (order+1, N, 6)
        ``V_j^(k)``, spatial twists and their derivatives.
    screw : (order+1, N, 6)
        ``S_j^(k)``, current joint screws (body 0: zero).
    """

    __slots__ = ("body_pose", "twist", "screw")
    __setattr__ = _frozen_setattr

    def __init__(self, body_pose, twist, screw):
        _freeze(self, body_pose=body_pose, twist=twist, screw=screw)


class InverseDynamicsResult(_Result):
    """Output of :func:`liedyn.inverse_dynamics` of order ``r`` (batch: a
    leading sample axis on every array).

    Attributes
    ----------
    base_wrench : (r+1, 6)
        ``W₀^(k)``, spatial (world frame, moment about the world origin): the
        wrench the base actuators must apply, or for a fixed base the support
        reaction.
    tau : (r+1, n)
        Joint force jets ``τ^(k)``.
    body_pose, twist, screw, momentum, wrench
        Body jets (see the properties), read from the workspace on first access.
    """

    __slots__ = ()
    _fields = ("base_wrench", "tau")

    @property
    def momentum(self):
        """``Π_j^(k)`` (order+2, N, 6): each body's own spatial momentum jet."""
        return self._body("momentum", "Pi", unshift_wrench)


class ForwardDynamicsResult(_Result):
    """Output of :func:`liedyn.forward_dynamics` of order ``r`` (batch: a
    leading sample axis on every array).

    Attributes
    ----------
    base_twist : (r+2, 6)
        ``V₀, V̇₀, …, V₀^(r+1)`` (zeros for a fixed base).
    q : (r+3, n)
        ``q, q̇, …, q^(r+2)``; with ``base_twist`` it feeds straight back into
        :func:`liedyn.inverse_dynamics`.
    base_wrench : (r+1, 6)
        ``W₀^(k)``: the input for a floating base, the support reaction for a
        fixed one.
    tau : (r+1, n)
        The joint force jets that drove the motion.
    articulated_inertia, body_pose, twist, screw, wrench
        Body quantities (see the properties), read on first access.
    """

    __slots__ = ()
    _fields = ("base_twist", "q", "base_wrench", "tau")

    @property
    def articulated_inertia(self):
        """``M^A_j`` (N, 6, 6), world frame: formed once per call and used at
        every order (Lemma 2)."""
        return self._body("articulated_inertia", "MA", unshift_inertia)


class HybridDynamicsResult(ForwardDynamicsResult):
    """Output of :func:`liedyn.hybrid_dynamics` of order ``r``: every motion and
    force jet, given or solved for.

    Attributes
    ----------
    base_twist : (r+2, 6)
        ``V₀^(0..r+1)`` (the input for a motion-driven base; zeros for a fixed one).
    base_wrench : (r+1, 6)
        ``W₀^(0..r)`` (the input for a wrench-driven base; the required base
        wrench, or a fixed base's reaction, for a motion-driven one).
    q : (r+3, n)
        ``q^(0..r+2)`` of every joint.
    tau : (r+1, n)
        ``τ^(0..r)`` of every joint.
    motion_driven : (n,) bool
        Which joints had their motion prescribed.
    base_motion_driven : bool
    articulated_inertia, body_pose, twist, screw, wrench
        As :class:`ForwardDynamicsResult` (motion-driven joints are not
        eliminated from ``M^A``).
    """

    __slots__ = ()
    _fields = ForwardDynamicsResult._fields + ("motion_driven", "base_motion_driven")
