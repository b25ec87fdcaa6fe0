"""Pinocchio as an independent oracle: build a ``pinocchio.Model`` of a liedyn
:class:`~liedyn.Model` and convert states, accelerations, wrenches and mass
matrices between the two conventions.

Conventions
-----------
=====================  ==========================================  =========================================
quantity               liedyn                                      Pinocchio
=====================  ==========================================  =========================================
base configuration     ``C₀`` (4×4), pose of the base body frame    ``q[:7] = (p, quaternion x y z w)``
base velocity          spatial twist ``V₀ = (ω, v)``, world frame   ``v[:6] = (v_b, ω_b)``: body frame, linear first
base acceleration      ``V̇₀`` (spatial)                              ``a[:6] = d/dt v[:6]`` (body frame)
base force             ``W₀ = (m, f)``, world frame, about origin   ``τ[:6] = (f_b, m_b)``: body frame, linear first
joint order            body index ``j`` (column ``j − 1``)          depth-first order of the tree
applied wrench         spatial, world frame, on body ``j``          ``fext[i]``: local frame of joint ``i``
=====================  ==========================================  =========================================

Derivations (``Ad = Ad_{C₀⁻¹}``, ``P`` swaps the two 3-blocks of a 6-vector):

* body twist ``V_b = Ad V₀``, so ``v[:6] = P Ad V₀``;
* ``d/dt (Ad_{C⁻¹} V) = Ad_{C⁻¹} (V̇ − ad_V V) = Ad_{C⁻¹} V̇``, so ``a[:6] = P Ad V̇₀``:
  the same matrix maps velocities and accelerations;
* power is frame invariant, ``W₀ᵀ V₀ = W_bᵀ V_b``, so ``W₀ = Adᵀ W_b = (P Ad)ᵀ τ[:6]``.

With ``ν = (V₀, q̇)`` liedyn's generalised velocity (``q̇`` in body-index order)
and ``T`` the ``(6+n) × (6+n)`` matrix ``blockdiag(P Ad, Π)`` (``Π`` the joint
permutation into depth-first order), ``v = T ν`` and ``a = T ν̇``. Kinetic energy
``½ νᵀ M ν = ½ vᵀ M_pin v`` and power ``τ̄ᵀ ν = τ_pinᵀ v`` give

    M = Tᵀ M_pin T,      τ̄ = Tᵀ τ_pin,      ν̇ = T⁻¹ a.

For a fixed base ``T = Π`` (n × n) and ``ν = q̇``.

Geometry: liedyn's body pose is ``C_j = C_{p(j)} A_j exp([y_j] q_j)`` with
``y_j = (e, x × e)`` the joint screw in body j's frame (axis ``e`` through
point ``x``). Pinocchio's unaligned joints act about axes through their joint
frame's origin, so joint ``j``'s frame is put at ``T(x_j)`` in body j's frame:
``exp([y] q) = T(x) exp([(e, 0)] q) T(−x)``. Joint placement relative to the
parent joint frame is ``T(−x_p) A_j T(x_j)``; the body (inertia) sits at
``T(−x_j)`` in its joint frame. A floating base is a free-flyer joint whose
frame is the base body frame; a fixed base is Pinocchio's universe, and the
joints on it are placed at ``C₀ A_j T(x_j)``. The mirror is built from the
model's primary per-body fields only (``body_parent``, ``body_origin``,
``joint_type``, ``joint_axis``, ``joint_point``, ``body_mass``, ``body_com``,
``body_rot_inertia``, ``joint_armature``, ``home_pose``, ``gravity``), never
from the derived ``body_home`` and ``joint_screw`` (poses and screws relative
to the base frame at ``q = 0``), so it can check those.

Pinocchio's CRBA fills only the upper triangle of ``data.M`` and assumes joints
were inserted depth first, which :func:`to_pinocchio` guarantees whatever
parent-first order the liedyn model was built in. Joint armature ``I_a`` is
copied to ``pinocchio.Model.armature``; viscous damping has no Pinocchio
counterpart in RNEA/ABA and is added (``b q̇``) by :meth:`PinocchioModel.rnea`
and subtracted by :meth:`PinocchioModel.aba` explicitly.

Usage::

    pm = to_pinocchio(model)                       # once per model
    W0, tau = pm.rnea(C0, Vjet, qjet, applied)     # order 0, liedyn's jet conventions
    M = pm.mass_matrix(C0, q)                      # (nv, nv), full and symmetric
    dV0, ddq = pm.aba(C0, V0, qjet[:2], tau=tau, base_wrench=W0)   # forward dynamics
    qp, vp, ap = pm.state_to_pin(C0, Vjet, qjet)   # raw conversions
"""

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from liedyn import se3
from liedyn.model import JOINT_PRISMATIC, JOINT_REVOLUTE


def depth_first_order(parent):
    """Body indices in depth-first pre-order (children by increasing index).

    ``parent`` is the liedyn ``body_parent`` array (``−1`` for the base).
    Returns ``(N,)`` int array starting with 0.
    """
    N = len(parent)
    children = [[] for _ in range(N)]
    for j in range(1, N):
        children[parent[j]].append(j)
    order, stack = [], [0]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(children[j]))
    return np.array(order, dtype=np.int64)


def _translation(x):
    T = np.eye(4)
    T[:3, 3] = x
    return T


def _swap(x):
    """``P x``: exchange the first and last three entries along the last axis."""
    x = np.asarray(x, float)
    return np.concatenate([x[..., 3:], x[..., :3]], axis=-1)


def _pose_to_xyzquat(C):
    return pin.SE3ToXYZQUAT(pin.SE3(C[:3, :3].copy(), C[:3, 3].copy()))


def _xyzquat_to_pose(x):
    return pin.XYZQUATToSE3(np.asarray(x, float)).homogeneous


@dataclass
class PinocchioModel:
    """A Pinocchio model mirroring a liedyn model, with the conversions.

    Attributes
    ----------
    model : pinocchio.Model
    data : pinocchio.Data
    source : liedyn.Model
    free_flyer : bool
        Whether the base is a free-flyer joint (floating base, or a fixed-base
        liedyn model built with ``free_flyer=True`` to read its reaction).
    fixed_pose : (4, 4)
        The base pose baked into the joint placements when ``free_flyer`` is
        false.
    dfs : (N,) int
        Liedyn body indices in the order Pinocchio's joints were created.
    joint_id : (N,) int
        Pinocchio joint id of each liedyn body (0, the universe, for a fixed base).
    joint_offset : (N, 4, 4)
        Body j's joint frame in its own body frame, ``T(x_j)``.
    vperm : (n,) int
        ``vperm[i]`` is the liedyn joint column at Pinocchio joint-velocity slot
        ``i`` (after the 6 base entries when ``free_flyer``).
    """

    model: object
    data: object
    source: object
    free_flyer: bool
    fixed_pose: np.ndarray
    dfs: np.ndarray
    joint_id: np.ndarray
    joint_offset: np.ndarray
    vperm: np.ndarray

    # -- configuration and motion -----------------------------------------

    @property
    def nb(self):
        """Number of base velocity entries (6 or 0)."""
        return 6 if self.free_flyer else 0

    def velocity_map(self, base_pose):
        """``T`` with ``v_pin = T ν`` and ``a_pin = T ν̇``: ``(nv, nv)``.

        ``nv = 6 + n`` with a free flyer, else ``n``; ``ν`` is ``(V₀, q̇)``
        (``q̇`` alone without free flyer).
        """
        nb, n = self.nb, self.source.n_joints
        T = np.zeros((nb + n, nb + n))
        if nb:
            Ad = se3.Ad(se3.inv(base_pose))
            T[:3, :6] = Ad[3:]
            T[3:6, :6] = Ad[:3]
        T[nb + np.arange(n), nb + self.vperm] = 1.0
        return T

    def _base_pose(self, base_pose):
        if not self.free_flyer:
            return self.fixed_pose
        return self.source.home_pose if base_pose is None else np.asarray(base_pose, float)

    def config_to_pin(self, base_pose, q):
        """Pinocchio ``q`` of size ``nq`` from the base pose and joint angles ``(n,)``."""
        qj = np.asarray(q, float)[self.vperm]
        if not self.free_flyer:
            return qj
        return np.concatenate([_pose_to_xyzquat(self._base_pose(base_pose)), qj])

    def config_from_pin(self, q_pin):
        """``(C₀, q)`` from Pinocchio's configuration."""
        q = np.empty(self.source.n_joints)
        nq_b = 7 if self.free_flyer else 0
        q[self.vperm] = q_pin[nq_b:]
        C0 = _xyzquat_to_pose(q_pin[:7]) if self.free_flyer else self.fixed_pose.copy()
        return C0, q

    def state_to_pin(self, base_pose, base_twist, q):
        """Pinocchio ``(q, v, a)`` from liedyn jets.

        Parameters
        ----------
        base_pose : (4, 4) or None
        base_twist : (2, 6) or None
            Rows ``V₀, V̇₀`` (spatial); ``None`` means zero (fixed base).
        q : (3, n)
            Rows ``q, q̇, q̈``.
        """
        q = np.asarray(q, float)
        C0 = self._base_pose(base_pose)
        nu = np.zeros((2, self.nb + self.source.n_joints))
        if self.nb and base_twist is not None:
            nu[:, :6] = np.asarray(base_twist, float)[:2]
        nu[:, self.nb:] = q[1:3]
        T = self.velocity_map(C0)
        return self.config_to_pin(C0, q[0]), T @ nu[0], T @ nu[1]

    def state_from_pin(self, q_pin, v_pin, a_pin):
        """Inverse of :meth:`state_to_pin`: ``(C₀, base_twist (2, 6), q (3, n))``."""
        C0, q0 = self.config_from_pin(q_pin)
        Tinv = np.linalg.inv(self.velocity_map(C0))
        nu = np.stack([Tinv @ v_pin, Tinv @ a_pin])
        Vb = nu[:, :6] if self.nb else np.zeros((2, 6))
        return C0, Vb, np.stack([q0, nu[0, self.nb:], nu[1, self.nb:]])

    # -- geometry -----------------------------------------------------------

    def body_poses(self, q_pin):
        """Body poses ``C_j`` ``(N, 4, 4)`` in liedyn order from Pinocchio's FK."""
        pin.forwardKinematics(self.model, self.data, q_pin)
        C = np.empty((self.source.n_bodies, 4, 4))
        for j in range(self.source.n_bodies):
            if self.joint_id[j] == 0:
                C[j] = self.fixed_pose
            else:
                C[j] = self.data.oMi[int(self.joint_id[j])].homogeneous @ se3.inv(self.joint_offset[j])
        return C

    def fext(self, q_pin, applied):
        """Pinocchio external forces from liedyn applied wrenches ``(N, 6)``.

        Each joint frame ``O_i`` gets ``Ad_{O_i}ᵀ W`` (body-frame wrench),
        linear first. Wrenches on a fixed base body go to the universe and do
        not affect joint torques.
        """
        pin.forwardKinematics(self.model, self.data, q_pin)
        out = pin.StdVec_Force()
        for _ in range(self.model.njoints):
            out.append(pin.Force.Zero())
        for j in range(self.source.n_bodies):
            i = int(self.joint_id[j])
            if i == 0:
                continue
            Wl = se3.Ad(self.data.oMi[i].homogeneous).T @ applied[j]
            out[i] = pin.Force(Wl[3:], Wl[:3])
        return out

    # -- dynamics in liedyn conventions ------------------------------------

    def rnea(self, base_pose, base_twist, q, applied=None):
        """Order-0 inverse dynamics by Pinocchio, liedyn conventions.

        Arguments as :func:`liedyn.inverse_dynamics` at order 0: ``base_twist``
        ``(2, 6)`` (``None`` or zeros without free flyer), ``q`` ``(3, n)``,
        ``applied`` ``(1, N, 6)`` or ``(N, 6)``. Returns ``(W₀ (6,), τ (n,))``; ``W₀`` is
        zero unless ``free_flyer`` (for a fixed liedyn base built with
        ``free_flyer=True`` it is the support reaction).
        """
        qp, vp, ap = self.state_to_pin(base_pose, base_twist, q)
        if applied is None:
            tp = pin.rnea(self.model, self.data, qp, vp, ap)
        else:
            Wa = np.asarray(applied, float).reshape(self.source.n_bodies, 6)
            tp = pin.rnea(self.model, self.data, qp, vp, ap, self.fext(qp, Wa))
        tbar = self.velocity_map(self._base_pose(base_pose)).T @ tp
        tau = tbar[self.nb:] + self.source.joint_damping[1:] * np.asarray(q, float)[1]
        return (tbar[:6] if self.nb else np.zeros(6)), tau

    def mass_matrix(self, base_pose, q):
        """Mass matrix ``M = Tᵀ M_pin T`` in liedyn's ``ν`` ordering, full, ``(nv, nv)``."""
        qp = self.config_to_pin(base_pose, q)
        Mp = pin.crba(self.model, self.data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        T = self.velocity_map(self._base_pose(base_pose))
        M = T.T @ Mp @ T
        return 0.5 * (M + M.T)

    def aba(self, base_pose, base_twist, q, *, tau, base_wrench=None, applied=None):
        """Order-0 forward dynamics by Pinocchio, liedyn conventions.

        Arguments as :func:`liedyn.forward_dynamics` at order 0: ``base_twist``
        ``(1, 6)`` (``None`` or zeros without free flyer), ``q`` ``(2, n)``
        (``[q; q̇]``), ``tau`` ``(1, n)``, ``base_wrench`` ``(1, 6)`` (``None``
        without free flyer), ``applied`` ``(1, N, 6)`` or ``(N, 6)``. Damping
        is applied as ``τ − b q̇``. Returns ``(V̇₀ (6,), q̈ (n,))`` (``V̇₀`` zero
        without free flyer).
        """
        n = self.source.n_joints
        q = np.asarray(q, float).reshape(2, n)
        qd = q[1]
        C0 = self._base_pose(base_pose)
        T = self.velocity_map(C0)
        V0 = np.zeros(6) if base_twist is None else np.asarray(base_twist, float).reshape(6)
        W0 = np.zeros(6) if base_wrench is None else np.asarray(base_wrench, float).reshape(6)
        nu = np.concatenate([V0 if self.nb else np.zeros(0), qd])
        tbar = np.concatenate([W0 if self.nb else np.zeros(0),
                               np.asarray(tau, float).reshape(n) - self.source.joint_damping[1:] * qd])
        qp = self.config_to_pin(C0, q[0])
        vp = T @ nu
        tp = np.linalg.solve(T.T, tbar)
        if applied is None:
            ap = pin.aba(self.model, self.data, qp, vp, tp)
        else:
            ap = pin.aba(self.model, self.data, qp, vp, tp,
                         self.fext(qp, np.asarray(applied, float).reshape(-1, 6)))
        nudot = np.linalg.solve(T, ap)
        return (nudot[:6] if self.nb else np.zeros(6)), nudot[self.nb:]


def to_pinocchio(model, base_pose=None, free_flyer=None):
    """Build the Pinocchio mirror of a liedyn model.

    Parameters
    ----------
    model : liedyn.Model
    base_pose : (4, 4), optional
        For a model without free flyer: the fixed base pose baked into the
        placements of the joints on the base (default ``model.home_pose``).
    free_flyer : bool, optional
        Default ``model.floating_base``. ``True`` on a fixed-base model gives a
        free-flyer mirror whose base wrench at zero base motion is the support
        reaction (the base inertia must then be given).

    Returns
    -------
    PinocchioModel
    """
    ff = model.floating_base if free_flyer is None else bool(free_flyer)
    N = model.n_bodies
    dfs = depth_first_order(model.body_parent)
    fixed_pose = np.array(model.home_pose if base_pose is None else base_pose, float)
    offset = np.tile(np.eye(4), (N, 1, 1))
    for j in range(1, N):
        if model.joint_type[j] == JOINT_REVOLUTE:
            offset[j] = _translation(model.joint_point[j])
    pm = pin.Model()
    pm.gravity.linear = np.array(model.gravity, float)
    joint_id = np.zeros(N, dtype=np.int64)
    for j in dfs:
        if j == 0:
            if ff:
                joint_id[0] = pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
            placement = None
        else:
            p = model.body_parent[j]
            parent_frame = se3.inv(offset[p]) if joint_id[p] else fixed_pose
            placement = parent_frame @ model.body_origin[j] @ offset[j]
            axis = np.array(model.joint_axis[j], float)
            jm = (pin.JointModelRevoluteUnaligned(axis) if model.joint_type[j] == JOINT_REVOLUTE
                  else pin.JointModelPrismaticUnaligned(axis))
            joint_id[j] = pm.addJoint(int(joint_id[p]), jm,
                                      pin.SE3(placement[:3, :3].copy(), placement[:3, 3].copy()),
                                      model.body_names[j])
            assert model.joint_type[j] in (JOINT_REVOLUTE, JOINT_PRISMATIC)
        if joint_id[j] == 0:
            continue
        inertia = pin.Inertia(float(model.body_mass[j]), np.array(model.body_com[j], float),
                              np.array(model.body_rot_inertia[j], float))
        body_in_joint = se3.inv(offset[j])
        pm.appendBodyToJoint(int(joint_id[j]), inertia,
                             pin.SE3(body_in_joint[:3, :3].copy(), body_in_joint[:3, 3].copy()))
        if j > 0:
            pm.armature[pm.joints[int(joint_id[j])].idx_v] = model.joint_armature[j]
    vperm = np.array([j - 1 for j in dfs if j > 0], dtype=np.int64)
    return PinocchioModel(model=pm, data=pm.createData(), source=model, free_flyer=ff,
                          fixed_pose=fixed_pose, dfs=dfs, joint_id=joint_id,
                          joint_offset=offset, vperm=vperm)
