"""Pinocchio interop: models in both directions, and the conversions between
Pinocchio's conventions and liedyn's for configurations and for motion and
force jets.

Pinocchio (PyPI package ``pin``) stays optional: it is imported when a
function here is first called, and its absence raises an ``ImportError``
saying how to install it.

::

    from liedyn.interop.pinocchio import from_pinocchio, pair, to_pinocchio
    bridge = to_pinocchio(model)             # a pinocchio.Model mirroring a liedyn.Model
    bridge = from_pinocchio(pin_model)       # a liedyn.Model mirroring a pinocchio.Model
    bridge = pair(model, pin_model)          # two models of one robot (e.g. one URDF, two parsers)
    q_pin, v_pin = bridge.motion_to_pin(C0, V0_jet, q_jet)
    W0_jet, tau_jet = bridge.force_from_pin(C0, V0_jet, tau_pin_jet)

    # Pinocchio's dynamics with the arguments of liedyn.inverse_dynamics and
    # liedyn.forward_dynamics: motion jets (a state is their first rows), force
    # jets keyword-only
    W0, tau = bridge.rnea(C0, V0_jet[:2], q_jet[:3], applied=applied[:1])   # (6,), (n,)
    dV0, ddq = bridge.aba(C0, V0_jet[:1], q_jet[:2], tau=tau_jet[:1], base_wrench=W0_jet[:1])
    M = bridge.mass_matrix(C0, q_jet[0])                                     # (nv, nv)
    W0_jet, tau_jet = bridge.inverse_dynamics(C0, V0_jet[:3], q_jet[:4], 1, applied=applied[:2])
    V0_jet, q_jet = bridge.forward_dynamics(C0, V0_jet[:1], q_jet[:2], 1, tau=tau_jet[:2],
                                            base_wrench=W0_jet[:2], applied=applied[:2])

Conventions
-----------
=====================  ==========================================  =========================================
quantity               liedyn                                      Pinocchio
=====================  ==========================================  =========================================
base configuration     ``C₀`` (4×4), pose of the base body frame    ``q[:7] = (p, quaternion x y z w)`` of the
                                                                    free-flyer joint, ``oMi = jointPlacement · M``
base velocity          spatial twist ``V₀ = (ω, v)``, world frame   ``v[:6] = (v_b, ω_b)``: body frame, linear first
base acceleration      ``V̇₀`` (spatial)                              ``a[:6] = d/dt v[:6]`` (body frame)
base force             ``W₀ = (m, f)``, world frame, about origin   ``τ[:6] = (f_b, m_b)``: body frame, linear first
revolute joint         angle ``θ``                                  ``θ``, or ``(cos θ, sin θ)`` for an unbounded
                                                                    (continuous) joint: ``nq = 2``, ``nv = 1``
joint order            body index ``j`` (q column ``j − 1``)        Pinocchio's joint order (depth first)
applied wrench         spatial, world frame, on body ``j``          ``fext[i]``: local frame of joint ``i``
damping                ``b q̇`` added to ``τ`` (SPEC §5)             ``model.damping`` is not used by RNEA/ABA
=====================  ==========================================  =========================================

Derivations (``Ad = Ad_{C₀⁻¹}``, ``P`` swaps the two 3-blocks of a 6-vector):

* the body twist is ``V_b = Ad V₀``, so ``v[:6] = P Ad V₀``; with
  ``d/dt Ad_{C⁻¹} = −Ad_{C⁻¹} ad_V`` the jet is
  ``v^(k)[:6] = P Σ_a C(k, a) Ad^(a) V₀^(k−a)`` (row 1 is ``P Ad V̇₀``, since
  ``ad_V V = 0``);
* power is frame invariant, ``W₀ᵀ V₀ = W_bᵀ V_b``, so ``τ[:6] = P Ad_{C₀}ᵀ W₀``,
  with ``d/dt Ad_C = ad_V Ad_C`` for its jet, and ``W₀ = Adᵀ P τ[:6]``;
* with ``ν = (V₀, q̇)`` and ``T = blockdiag(P Ad, Π)`` (``Π`` the joint
  permutation), ``v = T ν``, ``a = T ν̇``; kinetic energy and power give
  ``M = Tᵀ M_pin T`` and ``τ̄ = Tᵀ τ_pin``. A fixed base has ``T = Π``.

Order one through Pinocchio's analytic partial derivatives: Pinocchio
differentiates with respect to the configuration in the tangent space of its
``integrate``, which for the free flyer is the local (body) frame, the frame
``v`` lives in. The configuration's tangent rate along a motion is therefore
``v`` itself, and

    τ̇_pin = ∂τ/∂q v + ∂τ/∂v a + M ȧ,        ȧ = ∂a/∂q v + ∂a/∂v a + M⁻¹ τ̇_pin.

Applied wrenches are Pinocchio's ``fext``, constant in the joint frames for
those partial derivatives; their own rate ``ḟ_i`` in joint frame ``i`` adds
``−Σ_i J_iᵀ ḟ_i`` to ``τ̇_pin`` (``J_i`` the joint frame's local Jacobian).

Geometry: liedyn's body frame ``j`` and Pinocchio's frame of the joint that
moves it may differ by a constant offset ``O_j`` (joint frame in body frame):
:func:`to_pinocchio` puts a revolute joint's frame on its axis, at the
joint's ``point``; models read from one URDF by both parsers have ``O = I``.
:func:`pair` measures the offsets and checks that the two models move alike.
"""

import warnings
from dataclasses import dataclass

import numpy as np

from ..spatial import se3
from .._checks import (as_array, check_jet, check_motion_jet, check_order, check_pose,
                       counted)
from ..algorithm.frames import adjoint_jet, inverse_adjoint_jet, rest_kinematics
from ..multibody.model import JOINT_REVOLUTE, Model, ModelBuilder, Prismatic, Revolute
from ..multibody.workspace import binomials

__all__ = ["PinocchioModel", "to_pinocchio", "from_pinocchio", "pair", "depth_first_order",
           "swap_halves"]


def _pin():
    try:
        import pinocchio
    except ImportError as err:
        raise ImportError("liedyn.interop.pinocchio needs Pinocchio, which is not installed: "
                          "pip install pin  (or pip install 'liedyn[pin]')") from err
    return pinocchio


def depth_first_order(parent):
    """Body indices in depth-first pre-order, children by increasing index.

    Parameters
    ----------
    parent : (N,) int
        ``body_parent`` of a liedyn model (``−1`` for the base).

    Returns
    -------
    (N,) int64
        Starts with 0; every subtree occupies a contiguous block after its root.
    """
    parent = np.asarray(parent)
    N = len(parent)
    children = [[] for _ in range(N)]
    for j in range(1, N):
        children[int(parent[j])].append(j)
    order, stack = [], [0]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(children[j]))
    return np.array(order, dtype=np.int64)


def swap_halves(x):
    """``P x``: exchange the first and last three entries along the last axis
    (liedyn's ``(ω, v)`` ↔ Pinocchio's ``(v, ω)``; ``P`` is its own inverse)."""
    x = np.asarray(x, float)
    return np.concatenate([x[..., 3:], x[..., :3]], axis=-1)


def _se3(pin, C):
    C = np.asarray(C, float)
    return pin.SE3(C[:3, :3].copy(), C[:3, 3].copy())


# Pinocchio joint models liedyn has a counterpart for: short name -> (kind, axis or None).
_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
_JOINTS = {**{f"JointModelR{a}": ("revolute", e) for a, e in _AXES.items()},
           **{f"JointModelRUB{a}": ("revolute", e) for a, e in _AXES.items()},
           **{f"JointModelP{a}": ("prismatic", e) for a, e in _AXES.items()},
           "JointModelRevoluteUnaligned": ("revolute", None),
           "JointModelRevoluteUnboundedUnaligned": ("revolute", None),
           "JointModelPrismaticUnaligned": ("prismatic", None)}
_FREE_FLYER = "JointModelFreeFlyer"


def _joint_kind(pm, jid):
    """``(kind, unit axis)`` of Pinocchio joint ``jid``, or ``ValueError`` naming it."""
    jm = pm.joints[jid]
    name = jm.shortname()
    if name not in _JOINTS:
        raise ValueError(f"joint {pm.names[jid]!r} (Pinocchio joint {jid}): {name} has no liedyn "
                         f"counterpart; supported: {', '.join(sorted(_JOINTS))}, and a "
                         f"{_FREE_FLYER} as joint 1 for a floating base")
    kind, axis = _JOINTS[name]
    if axis is None:
        axis = np.array(jm.extract().axis, float)
        axis = axis / np.linalg.norm(axis)
    return kind, np.array(axis, float)


@dataclass
class PinocchioModel:
    """A liedyn model and a Pinocchio model of the same robot, with the
    conversions between their conventions (module docstring).

    Build one with :func:`to_pinocchio`, :func:`from_pinocchio` or
    :func:`pair`.

    Attributes
    ----------
    model : pinocchio.Model
    data : pinocchio.Data
    liedyn_model : liedyn.Model
    free_flyer : bool
        Whether Pinocchio's joint 1 is a free flyer (a floating liedyn base,
        or a fixed one mirrored with a free flyer to read its reaction).
    fixed_pose : (4, 4)
        The base pose Pinocchio's universe stands for when there is no free
        flyer (the liedyn base pose every conversion assumes then).
    joint_id : (N,) int
        Pinocchio joint id of each liedyn body (0, the universe, for a fixed base).
    joint_offset : (N, 4, 4)
        ``O_j``: Pinocchio's joint frame in liedyn's body frame ``j``.
    q_index, v_index : (n,) int
        Where liedyn q column ``i`` sits in Pinocchio's ``q`` and ``v``.
    unbounded : (n,) bool
        Joints whose Pinocchio configuration is ``(cos θ, sin θ)``.
    vperm : (n,) int
        ``vperm[i]``: the liedyn q column at Pinocchio velocity slot
        ``nb + i`` (``nb`` = 6 with a free flyer, else 0).
    dfs : (N,) int
        liedyn body indices in Pinocchio's joint order.
    """

    model: object
    data: object
    liedyn_model: Model
    free_flyer: bool
    fixed_pose: np.ndarray
    joint_id: np.ndarray
    joint_offset: np.ndarray
    q_index: np.ndarray
    v_index: np.ndarray
    unbounded: np.ndarray
    vperm: np.ndarray
    dfs: np.ndarray

    # -- sizes and argument checks -------------------------------------------

    @property
    def nb(self):
        """Number of base velocity entries in Pinocchio's ``v`` (6 or 0)."""
        return 6 if self.free_flyer else 0

    @property
    def n(self):
        return self.liedyn_model.n_joints

    def _pose(self, base_pose):
        """The base pose of a conversion: given (free flyer), or the fixed
        pose (no free flyer; a different one is an error, not ignored)."""
        if self.free_flyer:
            return (self.liedyn_model.home_pose if base_pose is None
                    else check_pose(base_pose, "base_pose"))
        if base_pose is not None:
            C0 = check_pose(base_pose, "base_pose")
            if np.max(np.abs(C0 - self.fixed_pose)) > 1e-12 * (1.0 + np.max(np.abs(C0))):
                raise ValueError("base_pose: this Pinocchio model has no free flyer; its base "
                                 "stands at fixed_pose, pass None or that pose")
        return self.fixed_pose

    def _twist(self, base_twist, rows, name="base_twist"):
        """The first ``rows`` rows of the base twist jet, which may have more
        (zeros without a free flyer or for ``None`` on a fixed liedyn base)."""
        if not self.liedyn_model.floating_base:
            if base_twist is not None:
                if np.any(check_motion_jet(base_twist, name, rows, 6)):
                    raise ValueError(f"{name}: a fixed base does not move; pass None (or zeros)")
            return np.zeros((rows, 6))
        if base_twist is None:
            if rows == 0:
                return np.zeros((0, 6))
            raise ValueError(f"{name}: a floating base needs its twist jet, shape ({rows}, 6)")
        return check_motion_jet(base_twist, name, rows, 6)

    # -- configuration ---------------------------------------------------------

    def velocity_map(self, base_pose):
        """``T`` with ``v_pin = T ν`` and ``a_pin = T ν̇``: ``(nv, nv)``, ``nv``
        Pinocchio's (``6 + n`` with a free flyer, else ``n``)."""
        nb, n = self.nb, self.n
        T = np.zeros((nb + n, nb + n))
        if nb:
            T[:6, :6] = se3.Ad(se3.inv(self._pose(base_pose)))[[3, 4, 5, 0, 1, 2]]   # P Ad
        T[self.v_index, nb + np.arange(n)] = 1.0
        return T

    def config_to_pin(self, base_pose, q):
        """Pinocchio's configuration ``(nq,)`` from the base pose and joint
        positions ``q`` ``(n,)``."""
        pin = _pin()
        q = as_array(q, "q", shape=(self.n,))
        out = np.zeros(self.model.nq)
        if self.free_flyer:
            M = se3.inv(self.model.jointPlacements[1].homogeneous) @ self._pose(base_pose)
            out[:7] = pin.SE3ToXYZQUAT(_se3(pin, M))
        else:
            self._pose(base_pose)
        b = self.unbounded
        out[self.q_index[~b]] = q[~b]
        out[self.q_index[b]] = np.cos(q[b])
        out[self.q_index[b] + 1] = np.sin(q[b])
        return out

    def config_from_pin(self, q_pin):
        """``(C₀ (4, 4), q (n,))`` from Pinocchio's configuration; an
        unbounded joint's angle is ``atan2(sin, cos)`` in ``(−π, π]``."""
        pin = _pin()
        q_pin = as_array(q_pin, "q_pin", shape=(self.model.nq,))
        b = self.unbounded
        q = np.empty(self.n)
        q[~b] = q_pin[self.q_index[~b]]
        q[b] = np.arctan2(q_pin[self.q_index[b] + 1], q_pin[self.q_index[b]])
        if not self.free_flyer:
            return self.fixed_pose.copy(), q
        quat = q_pin[3:7]
        if not abs(np.linalg.norm(quat) - 1.0) < 1e-8:
            raise ValueError(f"q_pin: the free flyer's quaternion must be unit, norm "
                             f"{np.linalg.norm(quat)}")
        M = pin.XYZQUATToSE3(q_pin[:7]).homogeneous
        return self.model.jointPlacements[1].homogeneous @ M, q

    # -- motion and force jets ---------------------------------------------------

    def motion_to_pin(self, base_pose, base_twist, q, *, rows=None):
        """Pinocchio's configuration and velocity jet from liedyn jets.

        Parameters
        ----------
        base_pose : (4, 4) or None
        base_twist : (rows, 6) or None
            Spatial base twist jet ``V₀^(0..rows−1)`` (``None``: fixed base;
            more rows: the first ``rows`` are read).
        q : (rows+1, n)
            Joint jet ``q^(0..rows)`` (more rows: the first ``rows+1`` are
            read when ``rows`` is given).
        rows : int ≥ 1, keyword, optional
            Rows of the velocity jet; default: those of ``q`` less one.

        Returns
        -------
        q_pin : (nq,)
        v_pin : (rows, nv)
            Row ``k`` is ``v^(k)``: velocity, acceleration (Pinocchio's ``a``),
            and its derivatives.
        """
        if rows is None:
            q = as_array(q, "q", ndim=2)
            rows = q.shape[0] - 1
            if rows < 1 or q.shape[1] != self.n:
                raise ValueError(f"q: expected a jet of shape (rows+1, {self.n}) with rows ≥ 1 "
                                 f"(row k = k-th time derivative), got {q.shape}")
        elif check_order(rows, "rows") < 1:
            raise ValueError(f"rows: expected an int ≥ 1, got {rows}")
        q = check_motion_jet(q, "q", rows + 1, self.n)
        C0 = self._pose(base_pose)
        V = self._twist(base_twist, rows)
        v = np.zeros((rows, self.nb + self.n))
        if self.nb:
            H = inverse_adjoint_jet(C0, V, rows - 1)
            B = binomials(rows)
            for k in range(rows):
                for a in range(k + 1):
                    v[k, :6] += B[k, a] * swap_halves(H[a] @ V[k - a])
        v[:, self.v_index] = q[1:]
        return self.config_to_pin(C0, q[0]), v

    def motion_from_pin(self, q_pin, v_pin):
        """Inverse of :meth:`motion_to_pin`: ``(C₀, base_twist (rows, 6),
        q (rows+1, n))`` from ``q_pin (nq,)`` and ``v_pin (rows, nv)``
        (``base_twist`` is zero without a free flyer)."""
        C0, q0 = self.config_from_pin(q_pin)
        v = as_array(v_pin, "v_pin", ndim=2)
        if v.shape[1] != self.nb + self.n or v.shape[0] < 1:
            raise ValueError(f"v_pin: expected a jet of shape (rows, {self.nb + self.n}), "
                             f"rows ≥ 1, got {v.shape}")
        rows = v.shape[0]
        q = np.vstack([q0, v[:, self.v_index]])
        V = np.zeros((rows, 6))
        if self.nb:
            Vb = swap_halves(v[:, :6])
            B = binomials(rows)
            G = np.zeros((rows, 6, 6))
            for k in range(rows):       # Ad_{C₀}^(k) needs V₀^(0..k−1): interleave
                G[k] = adjoint_jet(C0, V, k)[k]
                for a in range(k + 1):
                    V[k] += B[k, a] * G[a] @ Vb[k - a]
        return C0, V, q

    def force_to_pin(self, base_pose, base_twist, base_wrench, tau):
        """Pinocchio's generalised force jet ``(rows, nv)`` from liedyn's.

        Parameters
        ----------
        base_pose : (4, 4) or None
        base_twist : (≥ rows−1, 6) or None
            Base twist jet; row ``k`` of a force jet needs ``V₀^(0..k−1)``, so
            only the first ``rows − 1`` rows are read.
        base_wrench : (rows, 6) or None
            ``W₀^(k)``, world frame (``None``: zero, or no free flyer).
        tau : (rows, n)
        """
        tau = as_array(tau, "tau", ndim=2)
        rows = tau.shape[0]
        if tau.shape[1] != self.n:
            raise ValueError(f"tau: expected a jet of shape (rows, {self.n}), got {tau.shape}")
        out = np.zeros((rows, self.nb + self.n))
        out[:, self.v_index] = tau
        if self.nb and base_wrench is not None:
            W = check_jet(base_wrench, "base_wrench", (rows, 6))
            C0 = self._pose(base_pose)
            V = self._twist(base_twist, rows - 1)
            G = adjoint_jet(C0, V, rows - 1)
            B = binomials(rows)
            for k in range(rows):
                for a in range(k + 1):
                    out[k, :6] += B[k, a] * swap_halves(G[a].T @ W[k - a])
        elif base_wrench is not None:
            raise ValueError("base_wrench: this Pinocchio model has no free flyer to carry it; "
                             "pass None")
        return out

    def force_from_pin(self, base_pose, base_twist, tau_pin):
        """Inverse of :meth:`force_to_pin`: ``(base_wrench (rows, 6) or None,
        tau (rows, n))`` from Pinocchio's force jet ``(rows, nv)``
        (``base_wrench`` is ``None`` without a free flyer)."""
        t = as_array(tau_pin, "tau_pin", ndim=2)
        if t.shape[1] != self.nb + self.n:
            raise ValueError(f"tau_pin: expected a jet of shape (rows, {self.nb + self.n}), "
                             f"got {t.shape}")
        rows = t.shape[0]
        tau = t[:, self.v_index].copy()
        if not self.nb:
            return None, tau
        C0 = self._pose(base_pose)
        V = self._twist(base_twist, rows - 1)
        H = inverse_adjoint_jet(C0, V, rows - 1)
        B = binomials(rows)
        W = np.zeros((rows, 6))
        for k in range(rows):
            for a in range(k + 1):
                W[k] += B[k, a] * H[a].T @ swap_halves(t[k - a, :6])
        return W, tau

    def state_to_pin(self, base_pose, base_twist, q):
        """Pinocchio ``(q, v, a)`` from the jets of order-0 inverse dynamics:
        ``base_twist (2, 6)`` (``V₀, V̇₀``; ``None`` for a fixed base) and
        ``q (3, n)`` (``q, q̇, q̈``); more rows: the first 2 and 3 are read."""
        qp, v = self.motion_to_pin(base_pose, base_twist, q, rows=2)
        return qp, v[0], v[1]

    def state_from_pin(self, q_pin, v_pin, a_pin):
        """Inverse of :meth:`state_to_pin`: ``(C₀, base_twist (2, 6), q (3, n))``."""
        return self.motion_from_pin(q_pin, np.stack([np.asarray(v_pin, float),
                                                     np.asarray(a_pin, float)]))

    # -- geometry ------------------------------------------------------------------

    def body_poses(self, q_pin):
        """Body poses ``C_j`` ``(N, 4, 4)`` in liedyn order from Pinocchio's
        forward kinematics at ``q_pin``."""
        pin = _pin()
        pin.forwardKinematics(self.model, self.data, as_array(q_pin, "q_pin",
                                                              shape=(self.model.nq,)))
        C = np.empty((self.liedyn_model.n_bodies, 4, 4))
        for j in range(self.liedyn_model.n_bodies):
            i = int(self.joint_id[j])
            C[j] = self.fixed_pose if i == 0 else \
                self.data.oMi[i].homogeneous @ se3.inv(self.joint_offset[j])
        return C

    def fext(self, q_pin, applied):
        """Pinocchio's external forces (joint frames, linear first) from
        liedyn's applied spatial wrenches ``(N, 6)`` at ``q_pin``.

        Joint frame ``O_i`` gets ``Ad_{O_i}ᵀ W``. Wrenches on a base without
        free flyer act on the universe and change no joint force.
        """
        W = as_array(applied, "applied", shape=(self.liedyn_model.n_bodies, 6))
        _pin().forwardKinematics(self.model, self.data, q_pin)
        return self._fext(W)[0]

    def _fext(self, W):
        """:meth:`fext` at the joint placements ``data.oMi`` already computed,
        and the joint frames' wrenches ``f_i = Ad_{O_i}ᵀ W`` ``(njoints, 6)``,
        ``(m, f)`` order (zero for joints that carry no body)."""
        pin = _pin()
        out = pin.StdVec_Force()
        for _ in range(self.model.njoints):
            out.append(pin.Force.Zero())
        f = np.zeros((self.model.njoints, 6))
        for j in range(self.liedyn_model.n_bodies):
            i = int(self.joint_id[j])
            if i:
                f[i] = se3.Ad(self.data.oMi[i].homogeneous).T @ W[j]
                out[i] = pin.Force(f[i, 3:], f[i, :3])
        return out, f

    # -- dynamics by Pinocchio, liedyn conventions ------------------------------------
    #
    # Arguments as liedyn.inverse_dynamics and liedyn.forward_dynamics: motion
    # jets with a leading derivative axis, a state being their first rows
    # (``base_twist (1, 6)``, ``q (2, n)``), force jets keyword-only.

    def _damping(self):
        return self.liedyn_model.joint_damping

    def _applied(self, q_pin, v_pin, applied, rows):
        """Pinocchio's view of applied wrench jets ``(rows, N, 6)``, ``rows``
        1 or 2: ``(fext at q_pin, Σ_i J_iᵀ ḟ_i (nv,))``, or ``(None, 0)``
        without applied wrenches.

        ``f_i = Ad_{O_i}ᵀ W`` in joint frame ``O_i`` (:meth:`fext`); with
        ``d/dt Ad_O = ad_V Ad_O = Ad_O ad_{V_i}`` (``V_i`` the joint frame's
        local twist, Pinocchio's ``data.v[i]``) its rate is
        ``ḟ_i = Ad_{O_i}ᵀ Ẇ + ad_{V_i}ᵀ f_i``, and it enters the generalised
        force through ``J_i``, the joint frame's local Jacobian.
        """
        if applied is None:
            return None, 0.0
        pin = _pin()
        W = check_jet(applied, "applied", (rows, self.liedyn_model.n_bodies, 6))
        if rows == 1:
            return self.fext(q_pin, W[0]), 0.0
        pin.forwardKinematics(self.model, self.data, q_pin, v_pin)    # oMi and v, once
        pin.computeJointJacobians(self.model, self.data)
        fext, f = self._fext(W[0])
        rate = np.zeros(self.nb + self.n)
        for j in range(self.liedyn_model.n_bodies):
            i = int(self.joint_id[j])
            if i:
                AdT = se3.Ad(self.data.oMi[i].homogeneous).T
                Vi = np.concatenate([self.data.v[i].angular, self.data.v[i].linear])
                fdot = AdT @ W[1, j] + se3.ad(Vi).T @ f[i]
                J = pin.getJointJacobian(self.model, self.data, i, pin.ReferenceFrame.LOCAL)
                rate += J.T @ swap_halves(fdot)
        return fext, rate

    def inverse_dynamics(self, base_pose, base_twist, q, order, *, applied=None):
        """Inverse dynamics of order 0 or 1 by Pinocchio, with the arguments
        and jet shapes of :func:`liedyn.inverse_dynamics`.

        Order 0 is ``pinocchio.rnea``; order 1 adds
        ``τ̇_pin = ∂τ/∂q v + ∂τ/∂v a + M ȧ − Σ_i J_iᵀ ḟ_i`` from
        ``pinocchio.computeRNEADerivatives`` (module docstring), the last term
        from the rate of the applied wrenches in the joint frames.

        Parameters
        ----------
        base_pose : (4, 4) or None
        base_twist : (order+2, 6) or None (more rows: the first order+2 are read)
            ``None`` (or zeros) for a fixed base.
        q : (order+3, n) (more rows: the first order+3 are read)
        order : 0 or 1
        applied : (order+1, N, 6), keyword, optional
            Applied wrench jets on the bodies (spatial, world frame).

        Returns
        -------
        base_wrench : (order+1, 6) or None
            ``None`` without a free flyer (with one on a fixed liedyn base:
            the support reaction).
        tau : (order+1, n)
            Including the damping ``b q^(k+1)``.

        Raises
        ------
        ValueError
            ``order`` above 1, or a jet of the wrong shape (naming it).
        """
        pin = _pin()
        r = _order01(order)
        q = check_motion_jet(q, "q", r + 3, self.n)
        qp, v = self.motion_to_pin(base_pose, base_twist, q)
        fext, rate = self._applied(qp, v[0], applied, r + 1)
        ext = () if fext is None else (fext,)
        t = np.zeros((r + 1, self.nb + self.n))
        if r == 0:
            t[0] = pin.rnea(self.model, self.data, qp, v[0], v[1], *ext)
        else:
            dq, dv, da = pin.computeRNEADerivatives(self.model, self.data, qp, v[0], v[1], *ext)
            t[0] = self.data.tau
            M = np.triu(da) + np.triu(da, 1).T
            t[1] = dq @ v[0] + dv @ v[1] + M @ v[2] - rate
        W, tau = self.force_from_pin(base_pose, base_twist, t)
        tau += self._damping() * q[1:r + 2]
        return W, tau

    def rnea(self, base_pose, base_twist, q, *, applied=None):
        """Order-0 inverse dynamics by ``pinocchio.rnea``:
        :meth:`inverse_dynamics` at order 0 (``base_twist (2, 6)`` = ``V₀, V̇₀``
        or ``None``, ``q (3, n)`` = ``q, q̇, q̈``; keyword ``applied (1, N, 6)``).

        Returns
        -------
        base_wrench : (6,)
            ``W₀``; zero without a free flyer (with one on a fixed liedyn base:
            the support reaction).
        tau : (n,)
            Including the damping ``b q̇``.
        """
        W, tau = self.inverse_dynamics(base_pose, base_twist, q, 0, applied=applied)
        return (np.zeros(6) if W is None else W[0]), tau[0]

    def mass_matrix(self, base_pose, q):
        """``M = Tᵀ M_pin T`` ``(nv, nv)`` in liedyn's ``ν`` order, full and
        symmetric (Pinocchio's CRBA; armature included); ``q`` ``(n,)`` as
        for :func:`liedyn.mass_matrix`."""
        pin = _pin()
        qp = self.config_to_pin(base_pose, q)
        Mp = pin.crba(self.model, self.data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        T = self.velocity_map(base_pose)
        M = T.T @ Mp @ T
        return 0.5 * (M + M.T)

    def forward_dynamics(self, base_pose, base_twist, q, order, *, tau, base_wrench=None,
                         applied=None):
        """Forward dynamics of order 0 or 1 by Pinocchio, with the arguments
        and jet shapes of :func:`liedyn.forward_dynamics`.

        Order 0 is ``pinocchio.aba``; order 1 adds
        ``ȧ = ∂a/∂q v + ∂a/∂v a + M⁻¹ (τ̇_pin + Σ_i J_iᵀ ḟ_i)`` from
        ``pinocchio.computeABADerivatives``. Damping enters as
        ``τ^(k) − b q^(k+1)``.

        Parameters
        ----------
        base_pose : (4, 4) or None
        base_twist : (1, 6) or None (more rows: only the first is read)
            ``V₀``; ``None`` (or zeros) for a fixed base.
        q : (2, n) (more rows: the first 2 are read)
            ``q, q̇``.
        order : 0 or 1
        tau : (order+1, n), keyword
        base_wrench : (order+1, 6), keyword
            Required with a free flyer, ``None`` without.
        applied : (order+1, N, 6), keyword, optional

        Returns
        -------
        base_twist : (order+2, 6)
            Zero without a free flyer.
        q : (order+3, n)

        Raises
        ------
        ValueError
            ``order`` above 1, a jet of the wrong shape, a missing or
            superfluous ``base_wrench`` (naming the argument).
        """
        pin = _pin()
        r = _order01(order)
        q = check_motion_jet(q, "q", 2, self.n)
        tau = check_jet(tau, "tau", (r + 1, self.n))
        if self.nb and base_wrench is None:
            raise ValueError(f"base_wrench: a free flyer needs its wrench jet, shape ({r + 1}, 6)")
        if base_wrench is not None:
            if not self.nb:
                raise ValueError("base_wrench: this Pinocchio model has no free flyer to carry "
                                 "it; pass None")
            base_wrench = check_jet(base_wrench, "base_wrench", (r + 1, 6))
        C0 = self._pose(base_pose)
        V0 = self._twist(base_twist, 1)
        qp, v = self.motion_to_pin(C0, V0, q)
        fext, rate = self._applied(qp, v[0], applied, r + 1)
        ext = () if fext is None else (fext,)
        b = self._damping()
        eff = tau.copy()
        eff[0] -= b * q[1]
        t = self.force_to_pin(C0, V0, None if base_wrench is None else base_wrench[:1], eff[:1])
        vj = np.zeros((r + 2, self.nb + self.n))
        vj[0] = v[0]
        if r == 0:
            vj[1] = pin.aba(self.model, self.data, qp, v[0], t[0], *ext)
        else:
            dq, dv, dtau = pin.computeABADerivatives(self.model, self.data, qp, v[0], t[0], *ext)
            vj[1] = self.data.ddq
            eff[1] -= b * vj[1, self.v_index]                   # τ̇ − b q̈
            t = self.force_to_pin(C0, V0, base_wrench, eff)
            Minv = np.triu(dtau) + np.triu(dtau, 1).T
            vj[2] = dq @ v[0] + dv @ vj[1] + Minv @ (t[1] + rate)
        _, V, qo = self.motion_from_pin(qp, vj)
        return V, qo

    def aba(self, base_pose, base_twist, q, *, tau, base_wrench=None, applied=None):
        """Order-0 forward dynamics by ``pinocchio.aba``:
        :meth:`forward_dynamics` at order 0 (``base_twist (1, 6)`` or
        ``None``, ``q (2, n)``; keywords ``tau (1, n)``, ``base_wrench (1, 6)``
        with a free flyer, ``applied (1, N, 6)``).

        Returns
        -------
        base_acceleration : (6,)
            ``V̇₀``; zero without a free flyer.
        qdd : (n,)
            ``q̈``.
        """
        V, qo = self.forward_dynamics(base_pose, base_twist, q, 0, tau=tau,
                                      base_wrench=base_wrench, applied=applied)
        return V[1], qo[2]


def _order01(order):
    r = check_order(order)
    if r > 1:
        raise ValueError(f"order: Pinocchio's analytic derivatives give orders 0 and 1, got {r}")
    return r


# ------------------------------------------------------------------ pairing --

def _scale(C):
    return 1.0 + np.max(np.abs(C))


def pair(model, pin_model, *, base_pose=None):
    """Pair a liedyn model with a Pinocchio model of the same robot.

    The joints are matched by name (liedyn's ``joint_names`` and Pinocchio's
    ``names``), the trees must agree, the offsets between liedyn's body
    frames and Pinocchio's joint frames are measured at ``q = 0`` and
    checked at a second configuration, and inertias and armature are compared.

    Parameters
    ----------
    model : liedyn.Model
    pin_model : pinocchio.Model
        With a free flyer as joint 1 for a floating liedyn base (optional for
        a fixed one: the free flyer then carries the support reaction).
    base_pose : (4, 4), optional
        Without a free flyer: the liedyn base pose Pinocchio's universe
        stands for (default ``model.home_pose``).

    Returns
    -------
    PinocchioModel

    Raises
    ------
    ValueError
        The models do not describe the same robot (the message names the
        first joint or body that differs).
    """
    pin = _pin()
    if not isinstance(model, Model):
        raise TypeError(f"model: expected a liedyn.Model, got {type(model).__name__}")
    if not isinstance(pin_model, pin.Model):
        raise TypeError(f"pin_model: expected a pinocchio.Model, got {type(pin_model).__name__}")
    pm = pin_model
    ff = pm.njoints > 1 and pm.joints[1].shortname() == _FREE_FLYER
    if model.floating_base and not ff:
        raise ValueError("pin_model: the liedyn base floats, so Pinocchio's joint 1 must be a "
                         f"{_FREE_FLYER}, got "
                         f"{pm.joints[1].shortname() if pm.njoints > 1 else 'no joint'}")
    N, n = model.n_bodies, model.n_joints
    if pm.njoints != N + (1 if ff else 0):
        extra = pm.njoints - 1 - (1 if ff else 0)
        raise ValueError(f"pin_model: {counted(extra, 'joint')} besides "
                         f"{'the free flyer' if ff else 'the universe'}, the liedyn model has {n}")
    if np.max(np.abs(np.asarray(pm.gravity.linear) - model.gravity)) > 1e-12 * _scale(
            model.gravity) or np.any(np.asarray(pm.gravity.angular) != 0.0):
        raise ValueError(f"pin_model: gravity {pm.gravity.linear} differs from the liedyn "
                         f"model's {model.gravity}")
    ids = {}
    for i in range(1, pm.njoints):
        ids.setdefault(pm.names[i], i)
    joint_id = np.zeros(N, dtype=np.int64)
    joint_id[0] = 1 if ff else 0
    for j in range(1, N):
        name = model.joint_names[j - 1]
        if name not in ids or (ff and ids[name] == 1):
            raise ValueError(f"pin_model: has no joint {name!r} (liedyn q column {j - 1})")
        joint_id[j] = ids[name]
    for j in range(1, N):
        jid, name = int(joint_id[j]), model.joint_names[j - 1]
        if pm.parents[jid] != joint_id[model.body_parent[j]]:
            raise ValueError(f"joint {name!r}: its parent in Pinocchio is "
                             f"{pm.names[pm.parents[jid]]!r}, in liedyn body "
                             f"{model.body_names[model.body_parent[j]]!r}")
        kind, _ = _joint_kind(pm, jid)
        want = "revolute" if model.joint_type[j - 1] == JOINT_REVOLUTE else "prismatic"
        if kind != want:
            raise ValueError(f"joint {name!r}: {want} in liedyn, {kind} in Pinocchio")
    q_index = np.array([pm.idx_qs[int(i)] for i in joint_id[1:]], dtype=np.int64)
    v_index = np.array([pm.idx_vs[int(i)] for i in joint_id[1:]], dtype=np.int64)
    unbounded = np.array([pm.nqs[int(i)] == 2 for i in joint_id[1:]], dtype=bool)
    order = np.argsort(joint_id[1:]) + 1
    dfs = np.concatenate([[0], order]).astype(np.int64)
    nb = 6 if ff else 0
    vperm = np.empty(n, dtype=np.int64)
    vperm[v_index - nb] = np.arange(n)
    fixed_pose = np.array(model.home_pose if base_pose is None else
                          check_pose(base_pose, "base_pose"), float)
    bridge = PinocchioModel(model=pm, data=pm.createData(), liedyn_model=model, free_flyer=ff,
                            fixed_pose=fixed_pose, joint_id=joint_id,
                            joint_offset=np.tile(np.eye(4), (N, 1, 1)), q_index=q_index,
                            v_index=v_index, unbounded=unbounded, vperm=vperm, dfs=dfs)
    _measure_offsets(bridge)
    _check_pair(bridge)
    return bridge


def _liedyn_poses(bridge, C0, q):
    return rest_kinematics(bridge.liedyn_model, C0, q).body_pose


def _pin_frames(bridge, C0, q):
    pin = _pin()
    qp = bridge.config_to_pin(C0 if bridge.free_flyer else None, q)
    pin.forwardKinematics(bridge.model, bridge.data, qp)
    return [bridge.data.oMi[int(i)].homogeneous for i in bridge.joint_id]


def _measure_offsets(bridge):
    """``O_j = C_j⁻¹ oMi[joint_id[j]]`` at ``q = 0``; the free flyer's frame must
    be the base frame (``O_0 = I``)."""
    model = bridge.liedyn_model
    C0 = model.home_pose if bridge.free_flyer else bridge.fixed_pose
    q = np.zeros(model.n_joints)
    C = _liedyn_poses(bridge, C0, q)
    O = _pin_frames(bridge, C0, q)
    for j in range(1, model.n_bodies):
        bridge.joint_offset[j] = se3.inv(C[j]) @ O[j]
        bridge.joint_offset[j][3] = (0.0, 0.0, 0.0, 1.0)


def _check_pair(bridge):
    """Poses at a second configuration, inertias, armature."""
    model, pm = bridge.liedyn_model, bridge.model
    rng = np.random.default_rng(0)
    C0 = se3.exp(rng.uniform(-1, 1, 6)) if bridge.free_flyer else bridge.fixed_pose
    if bridge.free_flyer and not model.floating_base:
        C0 = bridge.fixed_pose
    q = rng.uniform(-1, 1, model.n_joints)
    C = _liedyn_poses(bridge, C0, q)
    O = _pin_frames(bridge, C0, q)
    for j in range(model.n_bodies):
        if bridge.joint_id[j] == 0:
            continue
        err = np.max(np.abs(C[j] @ bridge.joint_offset[j] - O[j]))
        if err > 1e-9 * _scale(C[j]):
            what = (f"joint {model.joint_names[j - 1]!r}" if j else "the free flyer")
            raise ValueError(f"{what}: Pinocchio moves body {model.body_names[j]!r} differently "
                             f"(pose error {err:.2e} at a test configuration): axis, placement "
                             f"or joint type differ")
    for j in range(model.n_bodies):
        i = int(bridge.joint_id[j])
        if i == 0:
            continue
        Y = pm.inertias[i]
        Mp = se3.spatial_inertia(Y.mass, np.array(Y.lever), np.array(Y.inertia))
        Ml = se3.transform_inertia(se3.inv(bridge.joint_offset[j]), model.body_inertia[j])
        if np.max(np.abs(Mp - Ml)) > 1e-9 * _scale(Ml):
            raise ValueError(f"body {model.body_names[j]!r}: inertia differs between the models "
                             f"(max difference {np.max(np.abs(Mp - Ml)):.2e})")
    for name, j, arm in zip(model.joint_names, model.joint_body, model.joint_armature):
        pin_arm = pm.armature[pm.idx_vs[int(bridge.joint_id[j])]]
        if abs(pin_arm - arm) > 1e-12 * (1.0 + arm):
            raise ValueError(f"joint {name!r}: armature {pin_arm} in Pinocchio, {arm} in liedyn")


# ----------------------------------------------------------- liedyn → Pinocchio --

def to_pinocchio(model, base_pose=None, free_flyer=None):
    """A Pinocchio model of a liedyn model, paired with it.

    Joints are created depth first (children by increasing liedyn index):
    Pinocchio's algorithms assume that order, which a liedyn model built in
    another parent-first order does not have (``vperm`` maps between them).
    Revolute joints become ``JointModelRevoluteUnaligned`` with their frame on
    the axis at the joint's ``point``, prismatic ones
    ``JointModelPrismaticUnaligned``; joint names, position, effort and
    velocity limits, armature and damping (``pinocchio.Model.damping``, which
    Pinocchio's RNEA/ABA do not read) are copied. Every body gets a ``BODY`` frame and every
    added frame an ``OP_FRAME`` of the same name.

    Parameters
    ----------
    model : liedyn.Model
    base_pose : (4, 4), optional
        Without a free flyer: the fixed base pose baked into the placements of
        the joints on the base (default ``model.home_pose``).
    free_flyer : bool, optional
        Default ``model.floating_base``. ``True`` on a fixed-base model gives a
        free flyer whose base wrench at rest is the support reaction.

    Returns
    -------
    PinocchioModel
    """
    pin = _pin()
    if not isinstance(model, Model):
        raise TypeError(f"model: expected a liedyn.Model, got {type(model).__name__}")
    if free_flyer is None:
        ff = model.floating_base
    elif isinstance(free_flyer, (bool, np.bool_)):
        ff = bool(free_flyer)
    else:
        raise TypeError(f"free_flyer: expected bool or None, got {type(free_flyer).__name__}")
    if model.floating_base and not ff:
        raise ValueError("free_flyer: a floating liedyn base needs the free flyer")
    N = model.n_bodies
    fixed_pose = np.array(model.home_pose if base_pose is None
                          else check_pose(base_pose, "base_pose"), float)
    offset = np.tile(np.eye(4), (N, 1, 1))
    for i, j in enumerate(model.joint_body):
        if model.joint_type[i] == JOINT_REVOLUTE:
            offset[j, :3, 3] = model.joint_point[i]
    pm = pin.Model()
    pm.name = "liedyn"
    pm.gravity = pin.Motion(np.array(model.gravity, float), np.zeros(3))
    jid = np.zeros(N, dtype=np.int64)
    for j in depth_first_order(model.body_parent):
        if j == 0:
            if ff:
                jid[0] = pm.addJoint(0, pin.JointModelFreeFlyer(), _se3(pin, model.home_pose),
                                     "root_joint")         # neutral configuration: home pose
        else:
            p = model.body_parent[j]
            parent_frame = se3.inv(offset[p]) if jid[p] else fixed_pose
            placement = parent_frame @ model.body_origin[j] @ offset[j]
            i = j - 1
            axis = np.array(model.joint_axis[i], float)
            jm = (pin.JointModelRevoluteUnaligned(axis) if model.joint_type[i] == JOINT_REVOLUTE
                  else pin.JointModelPrismaticUnaligned(axis))
            lo, hi = model.joint_lower[i], model.joint_upper[i]
            big = np.finfo(float).max
            jid[j] = pm.addJoint(int(jid[p]), jm, _se3(pin, placement), model.joint_names[i],
                                 np.full(1, min(model.joint_max_effort[i], big)),
                                 np.full(1, min(model.joint_max_velocity[i], big)),
                                 np.full(1, max(lo, -big)), np.full(1, min(hi, big)))
            iv = pm.joints[int(jid[j])].idx_v
            pm.armature[iv] = model.joint_armature[i]
            pm.damping[iv] = model.joint_damping[i]
        inertia = pin.Inertia(float(model.body_mass[j]), np.array(model.body_com[j], float),
                              np.array(model.body_rot_inertia[j], float))
        where = se3.inv(offset[j]) if jid[j] else fixed_pose      # a fixed base: the universe
        pm.appendBodyToJoint(int(jid[j]), inertia, _se3(pin, where))
    for f in range(model.n_frames):
        b = int(model.frame_body[f])
        where = se3.inv(offset[b]) if jid[b] else fixed_pose
        ftype = pin.FrameType.BODY if f < N else pin.FrameType.OP_FRAME
        pm.addFrame(pin.Frame(model.frame_names[f], int(jid[b]),
                              _se3(pin, where @ model.frame_offset[f]), ftype), False)
    return pair(model, pm, base_pose=fixed_pose)


# ----------------------------------------------------------- Pinocchio → liedyn --

def _unbounded(x, big):
    """``x`` as a float, ``inf`` from ``big`` up (Pinocchio's stand-in for no limit)."""
    return np.inf if x >= big else float(x)


def from_pinocchio(pin_model):
    """A liedyn model of a Pinocchio model, paired with it.

    Joint 1 a free flyer on the universe makes a floating base, whose home
    pose is the free flyer's placement; otherwise the base is fixed and
    stands for the universe, whose inertia it takes (what Pinocchio's URDF
    parser puts there: the root link and the links welded to it). Pinocchio
    joint ``i`` becomes body ``i`` (``i − 1`` with a free flyer), so q columns
    follow Pinocchio's joint order, and the joint keeps Pinocchio's name.

    Body frames: a body is named after a ``BODY`` frame on its joint (a URDF
    link; preferably one at the joint frame) and that frame becomes the body
    frame, so ``from_pinocchio(to_pinocchio(model).model)`` gives back
    ``model``'s bodies and frames; a joint without ``BODY`` frame names its
    body and lends it its frame (a free flyer always lends its frame). The
    other ``BODY``, ``OP_FRAME`` and ``SENSOR`` frames become named frames;
    ``JOINT`` and ``FIXED_JOINT`` frames do not (a fixed joint's frame is its
    child link's ``BODY`` frame). Position, effort and velocity limits,
    armature and ``model.damping`` (as viscous damping) are read.

    Parameters
    ----------
    pin_model : pinocchio.Model

    Returns
    -------
    PinocchioModel
        ``.liedyn_model`` is the new model.

    Raises
    ------
    ValueError
        A joint type without liedyn counterpart (spherical, planar,
        composite, a free flyer below the root, …) or several joints on the
        universe of a floating model, naming the joint; gravity with an
        angular part.

    Warns
    -----
    UserWarning
        Frames left out: attached to the universe of a floating model, or
        whose name is already taken.
    """
    pin = _pin()
    if not isinstance(pin_model, pin.Model):
        raise TypeError(f"pin_model: expected a pinocchio.Model, got {type(pin_model).__name__}")
    pm = pin_model
    if np.any(np.asarray(pm.gravity.angular) != 0.0):
        raise ValueError(f"pin_model: gravity has an angular part {pm.gravity.angular}")
    ff = pm.njoints > 1 and pm.joints[1].shortname() == _FREE_FLYER
    first = 2 if ff else 1
    if ff and pm.parents[1] != 0:
        raise ValueError(f"joint {pm.names[1]!r}: a free flyer must hang from the universe")
    for i in range(first, pm.njoints):
        if ff and pm.parents[i] == 0:
            raise ValueError(f"joint {pm.names[i]!r}: hangs from the universe beside the free "
                             f"flyer {pm.names[1]!r}; a liedyn model has one root")
        _joint_kind(pm, i)
    base_jid = 1 if ff else 0
    eye = np.eye(4)
    # body frame of each joint: (name, frame index or None, B = body frame in joint frame)
    body = {}
    for f, fr in enumerate(pm.frames):
        i = int(fr.parentJoint)
        if fr.type != pin.FrameType.BODY or (ff and i == 0):
            continue
        X = fr.placement.homogeneous
        at_joint = np.max(np.abs(X - eye)) <= 1e-12
        if i == 1 and ff and not at_joint:
            continue                        # the floating base's frame is the free flyer's
        if i not in body or (at_joint and body[i][1] is not None and not body[i][3]):
            body[i] = (fr.name, f, eye if at_joint else X, at_joint)
    for i in range(base_jid, pm.njoints):
        body.setdefault(i, ("universe" if i == 0 else pm.names[i], None, eye, True))
    Binv = {i: se3.inv(v[2]) for i, v in body.items()}
    b = ModelBuilder(floating_base=ff, gravity=np.array(pm.gravity.linear, float))

    def inertia(i):
        Y = pm.inertias[i]
        M = se3.spatial_inertia(Y.mass, np.array(Y.lever), np.array(Y.inertia))
        return se3.transform_inertia(Binv[i], M)

    b.add_body(body[base_jid][0], None, None,
               origin=pm.jointPlacements[1].homogeneous if ff else body[0][2],
               inertia=inertia(base_jid))
    big = 1e308
    for i in range(first, pm.njoints):
        kind, axis = _joint_kind(pm, i)
        iv, iq = pm.idx_vs[i], pm.idx_qs[i]
        lo, hi = (-np.inf, np.inf) if pm.nqs[i] == 2 else \
            (float(pm.lowerPositionLimit[iq]), float(pm.upperPositionLimit[iq]))
        lo = -np.inf if lo <= -big else lo
        hi = np.inf if hi >= big else hi
        kw = dict(name=pm.names[i], armature=float(pm.armature[iv]),
                  damping=float(pm.damping[iv]), lower=lo, upper=hi,
                  effort=_unbounded(pm.effortLimit[iv], big),
                  velocity=_unbounded(pm.velocityLimit[iv], big))
        R = Binv[i][:3, :3]
        if kind == "revolute":                # the axis passes through the joint frame's origin
            joint = Revolute(R @ axis, point=Binv[i][:3, 3], **kw)
        else:
            joint = Prismatic(R @ axis, **kw)
        parent = int(pm.parents[i])
        b.add_body(body[i][0], body[parent][0], joint,
                   origin=Binv[parent] @ pm.jointPlacements[i].homogeneous @ body[i][2],
                   inertia=inertia(i))
    used = {v[0] for v in body.values()}
    chosen = {v[1] for v in body.values()}
    skipped = []
    for f, fr in enumerate(pm.frames):
        if f in chosen or fr.type not in (pin.FrameType.BODY, pin.FrameType.OP_FRAME,
                                          pin.FrameType.SENSOR):
            continue
        i = int(fr.parentJoint)
        if i == 0 and ff:
            skipped.append(f"{fr.name!r} (on the universe)")
            continue
        if fr.name in used:
            skipped.append(f"{fr.name!r} (name taken)")
            continue
        used.add(fr.name)
        b.add_frame(fr.name, body[i][0], offset=Binv[i] @ fr.placement.homogeneous)
    if skipped:
        warnings.warn(f"pin_model: frames not carried over: {', '.join(skipped)}", UserWarning,
                      stacklevel=2)
    return pair(b.build(), pm)
