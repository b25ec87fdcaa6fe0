"""MuJoCo interop: states and jets between a model read by
:func:`liedyn.load_mjcf` and the ``mujoco.MjModel`` it was read from.

MuJoCo (PyPI package ``mujoco``, the ``mujoco`` extra) is imported when a
function here is first called.

::

    import mujoco
    from liedyn.interop.mujoco import mujoco_map
    mj = mujoco.MjModel.from_xml_path("humanoid.xml")
    model = liedyn.load_mjcf(mj)
    bridge = mujoco_map(model, mj)
    qpos, qvel = bridge.motion_to_mujoco(C0, V0_jet, q_jet)   # qvel rows: qvel, qacc, …
    C0, V0_jet, q_jet = bridge.motion_from_mujoco(qpos, qvel)
    qfrc = bridge.force_to_mujoco(C0, V0_jet, W0_jet, tau_jet)
    W0_jet, tau_jet = bridge.force_from_mujoco(qpos, qvel, qfrc)
    T = bridge.velocity_map(C0)                                # qvel = T ν

Conventions
-----------
=====================  ================================================  ================================================
quantity               liedyn                                            MuJoCo
=====================  ================================================  ================================================
base configuration     ``C₀ = (R, p)``                                   free joint ``qpos[a:a+7] = (p, w x y z)``
                                                                         (quaternion, scalar first)
base velocity          spatial twist ``V₀ = (ω, v)``, world frame        ``qvel[d:d+6] = (ṗ, Rᵀ ω)``: the origin's
                       about the world origin, ``v = ṗ − ω × p``         velocity in world axes, the angular
                                                                         velocity in the body frame
base force             ``W₀ = (m, f)``, world frame, about the           ``qfrc[d:d+6] = (f, Rᵀ (m − p × f))``:
                       world origin                                      force in world axes, moment about the
                                                                         body origin in the body frame
joint position         ``q = qpos − qpos0`` (the XML pose is             ``qpos`` (hinge angle, slide length)
                       ``q = 0``)
joint velocity, force  ``q̇``, ``τ`` (column ``i``)                       ``qvel[dof]``, ``qfrc[dof]``
=====================  ================================================  ================================================

A model of a fixed base (the world) has ``C₀ = I`` and no base entries.
MuJoCo's degrees of freedom that the model left out (trees outside the
robot, :func:`liedyn.load_mjcf`) keep their ``qpos`` from the ``qpos``
argument (default ``qpos0``) and get zero velocities and forces.

Jets: ``qvel`` is a jet ``(K, nv)`` of ``qvel, qacc, …``; the free joint's
rows are those of :func:`liedyn.trajectory.twist_from_spatial` with
``convention="mujoco"``. The base force jet follows from the Leibniz rule,
``u = m − p × f``, ``u^(k) = m^(k) − Σ_a C(k, a) p^(a) × f^(k−a)`` and
``τ_b^(k) = Σ_a C(k, a) (R^(a))ᵀ u^(k−a)``, with ``p`` and ``R`` jets from
:func:`liedyn.trajectory.to_pose_jet`; power is the same in both,
``W₀ᵀ V₀ = qfrc[d:d+6]ᵀ qvel[d:d+6]``. With ``T`` of :meth:`velocity_map`
(``qvel = T ν``), MuJoCo's mass matrix is liedyn's ``M = Tᵀ M_mj T``.
"""

import numpy as np

from .._checks import as_array, check_jet, check_motion_jet, check_pose
from ..multibody.model import Model
from ..multibody.workspace import binomials
from ..parsers.mjcf import element_name, mujoco_module, site_frame_name
from ..spatial import se3
from ..trajectory import to_pose_jet, twist_from_spatial, twist_to_spatial

__all__ = ["MujocoMap", "mujoco_map"]

_FREE = 0


def _cross_jet(p, f):
    """``(p × f)^(k) = Σ_a C(k, a) p^(a) × f^(k−a)`` for jets ``(K+1, 3)``."""
    B = binomials(len(p))
    out = np.zeros(f.shape)
    for k in range(len(f)):
        for a in range(k + 1):
            out[k] += B[k, a] * np.cross(p[a], f[k - a])
    return out


def _rotate_jet(R, u, transpose):
    """``Σ_a C(k, a) R^(a) u^(k−a)`` (``Rᵀ`` with ``transpose``)."""
    B = binomials(len(R))
    out = np.zeros(u.shape)
    for k in range(len(u)):
        for a in range(k + 1):
            out[k] += B[k, a] * ((R[a].T if transpose else R[a]) @ u[k - a])
    return out


class MujocoMap:
    """Where each coordinate of a liedyn model sits in MuJoCo's arrays.

    Attributes
    ----------
    model : liedyn.Model
    mj_model : mujoco.MjModel
    qpos_adr, dof_adr : (n,) int64
        ``qpos`` and ``qvel`` index of liedyn's joint ``i``.
    qpos0 : (n,)
        MuJoCo's ``qpos0`` of those joints: ``q = qpos − qpos0``.
    free_qpos, free_dof : int
        ``qpos``/``qvel`` index of the free joint of a floating base (−1 for a
        fixed base).
    sites : tuple of (int, str)
        ``(MuJoCo site id, liedyn frame name)`` of the sites the model holds
        (:func:`liedyn.parsers.mjcf.site_frame_name`).
    """

    def __init__(self, model, mj_model, qpos_adr, dof_adr, free_qpos, free_dof):
        self.model, self.mj_model = model, mj_model
        frames = set(model.frame_names[model.n_bodies:])
        self.sites = tuple((s, f) for s in range(mj_model.nsite)
                           for f in (site_frame_name(mj_model, model.body_names, s),)
                           if f in frames)
        self.qpos_adr, self.dof_adr = qpos_adr, dof_adr
        self.qpos0 = np.array(mj_model.qpos0, float)[qpos_adr]
        self.free_qpos, self.free_dof = free_qpos, free_dof
        for a in (self.qpos_adr, self.dof_adr, self.qpos0):
            a.setflags(write=False)

    def __repr__(self):
        return (f"MujocoMap(n={self.model.n_joints}, floating_base={self.model.floating_base}, "
                f"nq={self.mj_model.nq}, nv={self.mj_model.nv})")

    # -------------------------------------------------------------- checks --

    def _base_pose(self, base_pose):
        if not self.model.floating_base:
            if base_pose is not None and not np.allclose(check_pose(base_pose, "base_pose"),
                                                         np.eye(4), rtol=0.0, atol=1e-12):
                raise ValueError("base_pose: a fixed base read from an MJCF is the world, at the "
                                 "identity; pass None or np.eye(4)")
            return np.eye(4)
        if base_pose is None:
            raise TypeError("base_pose: required for a floating base, a (4, 4) pose")
        return check_pose(base_pose, "base_pose")

    def _qpos(self, qpos):
        nq = self.mj_model.nq
        if qpos is None:
            return np.array(self.mj_model.qpos0, float)
        return as_array(qpos, "qpos", shape=(nq,)).copy()

    def _qvel(self, qvel):
        a = as_array(qvel, "qvel", allow_nonfinite=True)
        if a.ndim == 1:
            a = a[None]
        if a.ndim != 2 or a.shape[1] != self.mj_model.nv or a.shape[0] < 1:
            raise ValueError(f"qvel: expected (nv,) or a jet (K, nv) with nv = "
                             f"{self.mj_model.nv} (rows: qvel, qacc, …), got {np.shape(qvel)}")
        return check_jet(a, "qvel", a.shape)

    # ------------------------------------------------------------ motion --

    def config_to_mujoco(self, base_pose, q, qpos=None):
        """``qpos`` (nq,) of base pose ``C₀`` (4, 4) (``None`` for a fixed
        base) and joint positions ``q`` (n,); entries of the trees the model
        left out are those of ``qpos`` (default ``mj_model.qpos0``)."""
        C0 = self._base_pose(base_pose)
        q = as_array(q, "q", shape=(self.model.n_joints,))
        out = self._qpos(qpos)
        out[self.qpos_adr] = q + self.qpos0
        if self.free_qpos >= 0:
            a = self.free_qpos
            out[a:a + 3] = C0[:3, 3]
            out[a + 3:a + 7] = se3.quat_from_rotation(C0[:3, :3], quaternion_order="wxyz")
        return out

    def config_from_mujoco(self, qpos):
        """``(C₀ (4, 4), q (n,))`` of ``qpos`` (nq,); the free joint's
        quaternion is normalised (MuJoCo normalises it when it uses it)."""
        qpos = as_array(qpos, "qpos", shape=(self.mj_model.nq,))
        C0 = np.eye(4)
        if self.free_qpos >= 0:
            a = self.free_qpos
            quat = qpos[a + 3:a + 7]
            norm = np.linalg.norm(quat)
            if not norm > 0.0:
                raise ValueError(f"qpos: the free joint's quaternion qpos[{a + 3}:{a + 7}] is zero")
            C0[:3, :3] = se3.rotation_from_quat(quat / norm, quaternion_order="wxyz")
            C0[:3, 3] = qpos[a:a + 3]
        return C0, qpos[self.qpos_adr] - self.qpos0

    def motion_to_mujoco(self, base_pose, base_twist, q, qpos=None):
        """``(qpos (nq,), qvel (K, nv))`` of a motion given by liedyn's jets.

        Parameters
        ----------
        base_pose : (4, 4) or None
            ``C₀``; ``None`` (or the identity) for a fixed base.
        base_twist : (K, 6) or None (more rows: the first K are read)
            Spatial twist jet ``V₀^(0..K−1)`` about the world origin; ``None``
            for a fixed base.
        q : (K+1, n)
            Joint jet ``q^(0..K)``, ``K ≥ 0``; ``K`` sets the rows of ``qvel``.
        qpos : (nq,), optional
            Where the left-out degrees of freedom are (default ``qpos0``).

        Returns
        -------
        qpos : (nq,)
        qvel : (K, nv)
            Rows ``qvel, qacc, …``.
        """
        n = self.model.n_joints
        qj = as_array(q, "q")
        if qj.ndim != 2 or qj.shape[0] < 1 or qj.shape[1] != n:
            raise ValueError(f"q: expected a jet (K+1, {n}) with K+1 ≥ 1 rows, got {qj.shape}")
        K = qj.shape[0] - 1
        qj = check_motion_jet(qj, "q", K + 1, n)
        C0 = self._base_pose(base_pose)
        out = self.config_to_mujoco(base_pose, qj[0], qpos)
        qvel = np.zeros((K, self.mj_model.nv))
        qvel[:, self.dof_adr] = qj[1:]
        if self.free_dof >= 0 and K:
            V = check_motion_jet(base_twist, "base_twist", K, 6)
            d = self.free_dof
            qvel[:, d:d + 6] = twist_from_spatial(C0, V, "mujoco")
        return out, qvel

    def motion_from_mujoco(self, qpos, qvel):
        """``(C₀, V₀ (K, 6) or None, q (K+1, n))`` of ``qpos`` (nq,) and the
        jet ``qvel`` (K, nv) (or one ``qvel`` (nv,)); a fixed base gives
        ``C₀ = I`` and ``V₀ = None``."""
        C0, q0 = self.config_from_mujoco(qpos)
        qv = self._qvel(qvel)
        q = np.vstack([q0, qv[:, self.dof_adr]])
        if self.free_dof < 0:
            return C0, None, q
        d = self.free_dof
        return C0, twist_to_spatial(C0, qv[:, d:d + 6], "mujoco"), q

    def velocity_map(self, base_pose):
        """``T`` (nv_mj, model.nv) with ``qvel = T ν``, ``ν = (V₀, q̇)``
        (``q̇`` alone for a fixed base); ``M = Tᵀ M_mj T``, ``τ̄ = Tᵀ qfrc``."""
        C0 = self._base_pose(base_pose)
        T = np.zeros((self.mj_model.nv, self.model.nv))
        off = 6 if self.model.floating_base else 0
        T[self.dof_adr, off + np.arange(self.model.n_joints)] = 1.0
        if self.free_dof >= 0:
            d = self.free_dof
            R, p = C0[:3, :3], C0[:3, 3]
            T[d:d + 3, :3] = -se3.hat(p)                 # ṗ = v + ω × p
            T[d:d + 3, 3:6] = np.eye(3)
            T[d + 3:d + 6, :3] = R.T                     # ω_b = Rᵀ ω
        return T

    # ------------------------------------------------------------- force --

    def _pose_jet(self, C0, base_twist, rows):
        V = check_motion_jet(base_twist, "base_twist", rows - 1, 6) if rows > 1 \
            else np.zeros((0, 6))
        return to_pose_jet(C0, V)

    def force_to_mujoco(self, base_pose, base_twist, base_wrench, tau):
        """``qfrc`` (r+1, nv) of liedyn's force jets: ``base_wrench``
        (r+1, 6) about the world origin (``None`` for a fixed base) and
        ``tau`` (r+1, n), at a base moving with ``base_twist``
        (r rows or more; ``None`` for a fixed base or ``r = 0``)."""
        C0 = self._base_pose(base_pose)
        t = as_array(tau, "tau")
        if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] != self.model.n_joints:
            raise ValueError(f"tau: expected a jet (r+1, {self.model.n_joints}), got {t.shape}")
        t = check_jet(t, "tau", t.shape)
        out = np.zeros((len(t), self.mj_model.nv))
        out[:, self.dof_adr] = t
        if self.free_dof >= 0:
            W = check_jet(base_wrench, "base_wrench", (len(t), 6))
            p, R = self._pose_jet(C0, base_twist, len(t))
            d = self.free_dof
            out[:, d:d + 3] = W[:, 3:]
            out[:, d + 3:d + 6] = _rotate_jet(R, W[:, :3] - _cross_jet(p, W[:, 3:]), True)
        return out

    def force_from_mujoco(self, qpos, qvel, qfrc):
        """``(W₀ (r+1, 6) or None, τ (r+1, n))`` of MuJoCo's generalised
        force jet ``qfrc`` (r+1, nv) (or one (nv,)) at the motion ``qpos``,
        ``qvel`` (r rows or more of ``qvel, qacc, …``; ignored when
        ``r = 0``)."""
        f = as_array(qfrc, "qfrc")
        f = f[None] if f.ndim == 1 else f
        if f.ndim != 2 or f.shape[1] != self.mj_model.nv or f.shape[0] < 1:
            raise ValueError(f"qfrc: expected (nv,) or a jet (r+1, nv) with nv = "
                             f"{self.mj_model.nv}, got {np.shape(qfrc)}")
        f = check_jet(f, "qfrc", f.shape)
        tau = f[:, self.dof_adr].copy()
        if self.free_dof < 0:
            return None, tau
        r = len(f) - 1
        if r:
            C0, V, _ = self.motion_from_mujoco(qpos, self._qvel(qvel)[:r])
        else:
            C0, V = self.config_from_mujoco(qpos)[0], np.zeros((0, 6))
        p, R = to_pose_jet(C0, V)
        d = self.free_dof
        force = f[:, d:d + 3]
        W = np.hstack([_cross_jet(p, force) + _rotate_jet(R, f[:, d + 3:d + 6], False), force])
        return W, tau


def mujoco_map(model, mj_model):
    """The :class:`MujocoMap` of a liedyn model read by :func:`liedyn.load_mjcf`
    from ``mj_model`` (a ``mujoco.MjModel``; joints are matched by name).

    Raises
    ------
    TypeError
        ``model`` or ``mj_model`` has the wrong type.
    ValueError
        A joint of ``model`` is not a hinge or slide of ``mj_model``, or the
        base does not match (a floating base needs the free joint of the body
        of the same name).
    """
    mujoco = mujoco_module("liedyn.interop.mujoco")
    if not isinstance(model, Model):
        raise TypeError(f"model: expected a liedyn.Model, got {type(model).__name__}")
    if not isinstance(mj_model, mujoco.MjModel):
        raise TypeError(f"mj_model: expected a mujoco.MjModel, got {type(mj_model).__name__}")
    jid = {element_name(mj_model, "joint", j): j for j in range(mj_model.njnt)
           if mj_model.jnt_type[j] != _FREE}
    missing = [name for name in model.joint_names if name not in jid]
    if missing:
        raise ValueError("model: joints that mj_model has no hinge or slide of that name: "
                         + ", ".join(map(repr, missing)))
    js = np.array([jid[name] for name in model.joint_names], dtype=np.int64)
    free_qpos = free_dof = -1
    if model.floating_base:
        bid = {element_name(mj_model, "body", b): b for b in range(mj_model.nbody)}
        b = bid.get(model.body_names[0])
        if b is None or mj_model.body_jntnum[b] != 1 or \
                mj_model.jnt_type[mj_model.body_jntadr[b]] != _FREE:
            raise ValueError(f"model: its floating base {model.body_names[0]!r} is not a body "
                             f"of mj_model with a free joint")
        free_qpos = int(mj_model.jnt_qposadr[mj_model.body_jntadr[b]])
        free_dof = int(mj_model.jnt_dofadr[mj_model.body_jntadr[b]])
    return MujocoMap(model, mj_model, np.array(mj_model.jnt_qposadr, np.int64)[js],
                     np.array(mj_model.jnt_dofadr, np.int64)[js], free_qpos, free_dof)
