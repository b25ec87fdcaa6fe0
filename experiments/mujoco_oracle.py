"""MuJoCo as an independent oracle: dm_control's MJCF models loaded by
``liedyn.load_mjcf``, every quantity against MuJoCo's own, order 0 directly
and orders 1–3 by central differences in time of MuJoCo's order-0 maps.

    python -m experiments.mujoco_oracle                 # table to results/
    python -m experiments.mujoco_oracle --out DIR --models humanoid walker

Needs ``mujoco`` and ``dm_control`` (the ``dev`` extra installs both).

The motion
----------
Along ``t ↦ (C₀(t), q(t))``: the base position and rotation vector and each
joint are polynomials of degree 6 with seeded random coefficients, so every
jet at every time is exact (``liedyn.trajectory.from_pose_jet``). MuJoCo runs
with ``opt.disableflags`` switching off constraints (contacts, limits,
equalities, dry friction), springs and actuation: what stays is the rigid
tree, gravity and the joint damping, which liedyn's ``τ`` contains (SPEC §5).
Conversions to and from MuJoCo's coordinates are
``liedyn.interop.mujoco``'s (``qpos`` with the quaternion ``w x y z``,
``qvel`` with the free joint's ``(ṗ, Rᵀ ω)``).

What is compared (each the largest entry of ``|liedyn − MuJoCo|`` over the
largest of ``|MuJoCo|``, per derivative order ``k``)
---------------------------------------------------------------------------
``inverse``
    ``(W₀, τ)^(k)``: ``mj_inverse``'s ``qfrc_inverse`` turned into the base
    wrench and joint forces, against ``liedyn.inverse_dynamics``.
``mass``
    ``M^(k)``: ``Tᵀ M_mj T`` (``mj_fullM``, ``T`` the velocity map), against
    ``liedyn.closed_form_jets``' mass jets.
``forward``
    Order 0: ``mj_forward``'s ``qacc`` under seeded random ``τ`` and ``W₀``
    (``qfrc_applied``), against ``liedyn.forward_dynamics``. Orders 1–3:
    ``ν^(k+1) = (V₀^(k+1), q^(k+2))`` by differences of ``qacc`` along
    MuJoCo's own motion from the same state under constant ``τ`` and no
    base force (its RK4 integrator, forwards and backwards in time, steps of
    ``H_FLOW/32``: error ``O(dt⁴)``, far below the differences'), against
    ``liedyn.forward_dynamics`` of order 3 with ``τ^(1..3) = 0``; both
    undamped (MuJoCo's damper off, ``load_mjcf(damping="drop")``: the
    damping over a light armature has time constants below ``H``), with
    ``τ_i = M_ii N(0, 1)`` (each joint accelerated by ``O(1)``).
``site_pose``
    Every site's ``site_xpos``/``site_xmat`` against ``liedyn.frame_pose``.
``site_jacobian``
    ``J^(k)`` of every site, ``(ω, ṗ)`` rows (``"local_world_aligned"``):
    ``[jacr; jacp] T`` from ``mj_jacSite``; order 1 also directly,
    ``J̇_mj T + J_mj Ṫ`` with ``mj_jacDot`` (column ``site_jacdot``).
``site_motion``
    ``(ω, ṗ)^(k)`` of every site: ``[jacr; jacp] qvel``; order 1 also
    directly, ``J̇_mj qvel + J_mj qacc`` (in ``site_jacdot``'s order-1
    column, as the larger of the two).

Orders 1–3: central differences of MuJoCo's order-0 value at ``t ± h``,
``t ± 2h`` (second order in ``h``) with ``h`` and ``h/2``, combined by
Richardson's rule (fourth order); ``|D(h) − D(h/2)|`` bounds the
extrapolated value's truncation error and is reported (``*_fd`` rows), with
the rounding term ``eps |f| / h^k`` it amplifies.
"""

import argparse
import csv
import os
import warnings
from pathlib import Path

import numpy as np

import liedyn
from liedyn.trajectory import from_pose_jet

MODELS = ("humanoid", "humanoid_CMU", "dog", "quadruped", "manipulator", "cheetah", "walker")
QUANTITIES = ("inverse", "mass", "forward", "site_pose", "site_jacobian", "site_motion",
              "site_jacdot")
ORDER = 3
H = 0.02            # the larger step; D(H) and D(H/2) are combined
H_FLOW = 0.005      # the same along MuJoCo's integrated motion (faster than the prescribed one)
T0 = 0.3            # the instant of the comparison


def suite_path(name):
    """Path of dm_control's suite model ``name`` (``humanoid``, …)."""
    import dm_control
    return os.path.join(os.path.dirname(dm_control.__file__), "suite", f"{name}.xml")


def load(name, damping="keep"):
    """``(model, mj_model, bridge, warnings)`` for a suite model, MuJoCo's
    constraints, springs and actuation switched off (and its dampers with
    ``damping="drop"``)."""
    import mujoco
    from liedyn.interop.mujoco import mujoco_map
    mj = mujoco.MjModel.from_xml_path(suite_path(name))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model = liedyn.load_mjcf(mj, damping=damping)
    off = mujoco.mjtDisableBit
    mj.opt.disableflags |= off.mjDSBL_CONSTRAINT | off.mjDSBL_SPRING | off.mjDSBL_ACTUATION
    if damping == "drop":
        mj.opt.disableflags |= off.mjDSBL_DAMPER
    return model, mj, mujoco_map(model, mj), [str(w.message) for w in record]


class Motion:
    """Degree-6 polynomials for the base position, rotation vector and joints."""

    def __init__(self, model, seed):
        rng = np.random.default_rng(seed)
        n = model.n_joints
        self.c_p = rng.normal(scale=0.3, size=(7, 3))
        self.c_p[0] += (0.1, -0.2, 1.0)
        self.c_phi = rng.normal(scale=0.3, size=(7, 3))
        self.c_q = rng.normal(scale=0.3, size=(7, n))
        self.floating = model.floating_base

    @staticmethod
    def _jet(c, t, rows):
        from math import factorial
        out = np.zeros((rows, c.shape[1]))
        for d in range(rows):
            for k in range(d, len(c)):
                out[d] += c[k] * t ** (k - d) / factorial(k - d)
        return out

    def jets(self, t, rows=ORDER + 3):
        """``(C₀, V₀ (rows−1, 6) or None, q (rows, n))`` at ``t``."""
        q = self._jet(self.c_q, t, rows)
        if not self.floating:
            return np.eye(4), None, q
        C0, V = from_pose_jet(self._jet(self.c_p, t, rows), self._jet(self.c_phi, t, rows),
                              representation="rotvec")
        return C0, V, q


def _dT(bridge, C0, V):
    """``Ṫ``: the velocity map's rate (free block ``−[ṗ]^``, ``−Rᵀ ω̂``)."""
    T = np.zeros((bridge.mj_model.nv, bridge.model.nv))
    if bridge.free_dof >= 0:
        d = bridge.free_dof
        R, p = C0[:3, :3], C0[:3, 3]
        w, v = V[0, :3], V[0, 3:]
        T[d:d + 3, :3] = -liedyn.se3.hat(v + np.cross(w, p))
        T[d + 3:d + 6, :3] = -R.T @ liedyn.se3.hat(w)
    return T


class Oracle:
    """MuJoCo's order-0 values at one motion, in liedyn's conventions."""

    def __init__(self, model, mj, bridge, sites):
        import mujoco
        self.mujoco, self.model, self.mj, self.bridge, self.sites = mujoco, model, mj, bridge, sites
        self.d = mujoco.MjData(mj)

    def at(self, C0, V, q):
        mujoco, mj, d, br = self.mujoco, self.mj, self.d, self.bridge
        qpos, qvel = br.motion_to_mujoco(C0, None if V is None else V[:2], q[:3])
        d.qpos[:], d.qvel[:], d.qacc[:] = qpos, qvel[0], qvel[1]
        mujoco.mj_inverse(mj, d)
        W0, tau = br.force_from_mujoco(qpos, qvel[:1], d.qfrc_inverse)
        T = br.velocity_map(C0)
        Mmj = np.zeros((mj.nv, mj.nv))
        if hasattr(d, "qM"):                       # MuJoCo 3: mj_fullM(m, dst, qM)
            mujoco.mj_fullM(mj, Mmj, d.qM)
        else:                                      # MuJoCo 4: mj_fullM(m, d, dst)
            mujoco.mj_fullM(mj, d, Mmj)
        out = {"inverse": np.concatenate([[] if W0 is None else W0[0], tau[0]]),
               "mass": T.T @ Mmj @ T}
        poses, jac, motion, jacdot, acc = [], [], [], [], []
        dT = _dT(br, C0, V)
        for s, _ in self.sites:
            X = np.eye(4)
            X[:3, :3] = d.site_xmat[s].reshape(3, 3)
            X[:3, 3] = d.site_xpos[s]
            poses.append(X)
            jp, jr = np.zeros((3, mj.nv)), np.zeros((3, mj.nv))
            mujoco.mj_jacSite(mj, d, jp, jr, s)
            J = np.vstack([jr, jp])
            jpd, jrd = np.zeros((3, mj.nv)), np.zeros((3, mj.nv))
            mujoco.mj_jacDot(mj, d, jpd, jrd, d.site_xpos[s], mj.site_bodyid[s])
            Jd = np.vstack([jrd, jpd])
            jac.append(J @ T)
            motion.append(J @ qvel[0])
            jacdot.append(Jd @ T + J @ dT)
            acc.append(Jd @ qvel[0] + J @ qvel[1])
        out.update(site_pose=np.array(poses), site_jacobian=np.array(jac),
                   site_motion=np.array(motion), site_jacdot=np.array(jacdot),
                   site_acc=np.array(acc))
        return out

    def flow(self, C0, V, q, tau, steps_per_h=16):
        """``s ↦ ν̇(s)`` in liedyn's coordinates (``(V̇₀, q̈)``) along MuJoCo's
        motion from the state at ``s = 0`` under joint forces ``tau`` and no
        base force, both constant: MuJoCo's RK4 from the state to ``s``
        (``s < 0`` backwards), in steps of at most ``H_FLOW / (2 steps_per_h)``."""
        mujoco, mj, d, br = self.mujoco, self.mj, self.d, self.bridge
        qpos0, qvel0 = br.motion_to_mujoco(C0, None if V is None else V[:1], q[:2])
        qfrc = br.force_to_mujoco(C0, None, None if V is None else np.zeros((1, 6)),
                                  tau[None])[0]
        integrator, dt = mj.opt.integrator, mj.opt.timestep

        def at(s):
            d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos0, qvel0[0], qfrc
            n = int(np.ceil(abs(s) / (H_FLOW / (2 * steps_per_h)) - 1e-9))
            mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
            try:
                for _ in range(n):
                    mj.opt.timestep = s / n
                    mujoco.mj_step(mj, d)
            finally:
                mj.opt.integrator, mj.opt.timestep = integrator, dt
            mujoco.mj_forward(mj, d)
            d.qfrc_applied[:] = 0.0
            _, Vj, qj = br.motion_from_mujoco(d.qpos.copy(), np.vstack([d.qvel, d.qacc]))
            return np.concatenate([[] if Vj is None else Vj[1], qj[2]])
        return at

    def forward(self, C0, V, q, W0, tau):
        """``(V̇₀ or None, q̈)`` from ``mj_forward`` under ``W₀``, ``τ``."""
        mujoco, mj, d, br = self.mujoco, self.mj, self.d, self.bridge
        qpos, qvel = br.motion_to_mujoco(C0, None if V is None else V[:1], q[:2])
        d.qpos[:], d.qvel[:] = qpos, qvel[0]
        d.qfrc_applied[:] = br.force_to_mujoco(C0, None, None if W0 is None else W0[None],
                                               tau[None])[0]
        mujoco.mj_forward(mj, d)
        d.qfrc_applied[:] = 0.0
        _, Vj, qj = br.motion_from_mujoco(qpos, np.vstack([qvel[0], d.qacc]))
        return (None if Vj is None else Vj[1]), qj[2]


def _central(f, h):
    """``[f', f'', f''']`` at 0 by central differences (error ``O(h²)``)."""
    fm2, fm1, f0, f1, f2 = (f(i * h) for i in (-2, -1, 0, 1, 2))
    return [(f1 - fm1) / (2 * h), (f1 - 2 * f0 + fm1) / h ** 2,
            (f2 - 2 * f1 + 2 * fm1 - fm2) / (2 * h ** 3)]


def differences(f, h=H):
    """``(D, bound)``: Richardson's ``(4 D(h/2) − D(h)) / 3`` of the first three
    derivatives of ``f`` at 0, and ``|D(h) − D(h/2)|`` plus the rounding term
    ``eps max|f| / (h/2)^k`` (each a list over ``k = 1..3``)."""
    a, b = _central(f, h), _central(f, h / 2)
    scale = np.max(np.abs(f(0.0)))
    eps = np.finfo(float).eps
    return ([(4 * y - x) / 3 for x, y in zip(a, b)],
            [np.abs(y - x) + 8 * eps * scale / (h / 2) ** k for k, (x, y) in enumerate(zip(a, b),
                                                                                     start=1)])


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(np.max(np.abs(b)), 1e-300))


def liedyn_values(model, sites, C0, V, q, order=ORDER):
    """liedyn's jets of every compared quantity at one motion (row ``k``:
    derivative ``k``)."""
    res = liedyn.inverse_dynamics(model, C0, V, q, order)
    inv = np.hstack([res.base_wrench, res.tau]) if model.floating_base else res.tau
    mass = liedyn.closed_form_jets(model, C0, V, q, order).mass
    poses, jac, motion = [], [], []
    for _, f in sites:
        poses.append(liedyn.frame_pose(model, C0, q[0], f))
        jac.append(liedyn.frame_jacobian(model, C0, V, q, order, f,
                                         reference="local_world_aligned"))
        motion.append(liedyn.frame_kinematics(model, C0, V, q, order, f,
                                              reference="local_world_aligned").twist)
    if not sites:
        return {"inverse": inv, "mass": mass}
    return {"inverse": inv, "mass": mass, "site_pose": np.array(poses),
            "site_jacobian": np.swapaxes(np.array(jac), 0, 1),
            "site_motion": np.swapaxes(np.array(motion), 0, 1)}


def errors(name, seed=0, h=H):
    """``{quantity: [(error, fd_bound) for k = 0..3]}`` for suite model
    ``name`` (``fd_bound`` 0 at order 0, ``None`` where not compared), and
    the loader's warnings."""
    model, mj, bridge, notes = load(name)
    sites = bridge.sites
    motion = Motion(model, seed)
    oracle = Oracle(model, mj, bridge, sites)
    C0, V, q = motion.jets(T0)
    ours = liedyn_values(model, sites, C0, V, q)
    mj0 = oracle.at(C0, V, q)
    out = {k: [None] * (ORDER + 1) for k in QUANTITIES}
    for key in ("inverse", "mass", "site_pose", "site_jacobian", "site_motion"):
        if key in ours:
            out[key][0] = (_rel(ours[key][0] if key != "site_pose" else ours[key], mj0[key]),
                           0.0)
    if sites:
        out["site_jacdot"][1] = (max(_rel(ours["site_jacobian"][1], mj0["site_jacdot"]),
                                     _rel(ours["site_motion"][1], mj0["site_acc"])), 0.0)
    shifted = {}

    def at(key):
        def f(s):
            if s not in shifted:
                shifted[s] = oracle.at(*motion.jets(T0 + s, 3))
            return shifted[s][key]
        return f
    for key in ("inverse", "mass", "site_jacobian", "site_motion"):
        if key.startswith("site") and not sites:
            continue
        D, bound = differences(at(key), h)
        for k in range(1, ORDER + 1):
            out[key][k] = (_rel(ours[key][k], D[k - 1]), float(np.max(bound[k - 1])
                                                                / max(np.max(np.abs(D[k - 1])),
                                                                      1e-300)))
    # forward, order 0: random forces through mj_forward
    rng = np.random.default_rng(seed + 1)
    tau = rng.normal(size=model.n_joints)
    W0 = rng.normal(size=6) if model.floating_base else None
    dV, ddq = oracle.forward(C0, V, q, W0, tau)
    fd = liedyn.forward_dynamics(model, C0, None if V is None else V[:1], q[:2], 0,
                                 tau=tau[None], base_wrench=None if W0 is None else W0[None])
    mine = np.concatenate([[] if dV is None else fd.base_twist[1], fd.q[2]])
    out["forward"][0] = (_rel(mine, np.concatenate([[] if dV is None else dV, ddq])), 0.0)
    # forward, orders 1–3: differences of qacc along MuJoCo's own motion (RK4),
    # undamped (damping over light armature is stiff: time constants below h);
    # τ_i = M_ii · N(0, 1), so that each joint accelerates by O(1)
    model, mj, bridge, _ = load(name, damping="drop")
    oracle = Oracle(model, mj, bridge, sites)
    nb = 6 if model.floating_base else 0
    tau = rng.normal(size=model.n_joints) * np.diag(mj0["mass"])[nb:]
    D, bound = differences(oracle.flow(C0, V, q, tau), H_FLOW)
    tau_jet = np.vstack([tau, np.zeros((ORDER, model.n_joints))])
    fd = liedyn.forward_dynamics(model, C0, None if V is None else V[:1], q[:2], ORDER,
                                 tau=tau_jet,
                                 base_wrench=np.zeros((ORDER + 1, 6)) if W0 is not None else None)
    for k in range(1, ORDER + 1):
        got = np.concatenate([fd.base_twist[k + 1] if W0 is not None else [], fd.q[k + 2]])
        out["forward"][k] = (_rel(got, D[k - 1]),
                             float(np.max(bound[k - 1]) / np.max(np.abs(D[k - 1]))))
    return out, model, notes


def table(results):
    """Markdown table: a row per quantity and order ``k``, a column per model
    (the largest relative error; ``—``: not compared, as sites of a model
    without any)."""
    names = list(results)
    head = ["quantity", "k"] + [f"{n} ({'floating' if results[n][1].floating_base else 'fixed'}"
                                f", n={results[n][1].n_joints})" for n in names]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for q in QUANTITIES:
        for k in range(ORDER + 1):
            cells = [results[n][0][q][k] for n in names]
            if all(c is None for c in cells):
                continue
            lines.append("| " + " | ".join([q, str(k)] + ["—" if c is None else f"{c[0]:.1e}"
                                                        for c in cells]) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("results"),
                    help="folder of mujoco_oracle.csv and mujoco_oracle.md (default results/)")
    ap.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    args = ap.parse_args(argv)
    results = {name: errors(name) for name in args.models}
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "mujoco_oracle.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "quantity", "order", "error", "fd_bound"])
        for name, (errs, _, _) in results.items():
            for q in QUANTITIES:
                for k, e in enumerate(errs[q]):
                    if e is not None:
                        w.writerow([name, q, k, f"{e[0]:.3e}",
                                    "" if e[1] is None else f"{e[1]:.3e}"])
    md = table(results)
    (args.out / "mujoco_oracle.md").write_text(
        "Largest relative error of liedyn against MuJoCo "
        f"({_mujoco_version()}), per quantity and derivative order k\n\n" + md + "\n")
    print(md)


def _mujoco_version():
    import mujoco
    return f"MuJoCo {mujoco.__version__}"


if __name__ == "__main__":
    main()
