"""Compile every kernel ahead of time: ``python -m liedyn.compile``.

Kernels are otherwise compiled on the first call of each algorithm (a few
seconds each) and cached on disk (see :mod:`liedyn._jit`). This fills the
cache in one go, for instance after installing or upgrading, so that later
processes, and other installations of the same version, load the kernels
instead of compiling them. It prints one line per kernel group (seconds, and
how many kernels were compiled rather than loaded) and the total.
"""

import argparse
import sys
import time

import numpy as np


def _tiny_model():
    """A floating base carrying a revolute and a prismatic joint."""
    from liedyn import ModelBuilder, Prismatic, Revolute, se3

    I = se3.spatial_inertia(0.5, (0.0, 0.0, 0.05), np.diag([2e-3, 2e-3, 1e-3]))
    T = np.eye(4)
    T[2, 3] = -0.1
    b = ModelBuilder(floating_base=True, gravity=(0.0, 0.0, -9.81))
    b.add_body("base", None, None, np.eye(4), I)
    b.add_body("arm", "base", Revolute(axis=(0, 1, 0), point=(0, 0, 0.05), armature=1e-3,
                                       damping=1e-2), T, I)
    b.add_body("slider", "arm", Prismatic(axis=(1, 0, 0)), T, I)
    return b.build()


def warm_up(progress=None, only=None):
    """Call each public algorithm once on a tiny model, so that every kernel
    is compiled (or loaded from the cache).

    Parameters
    ----------
    progress : callable ``(group, seconds)``, optional
        Called after each group of kernels with its name and wall time.
    only : collection of str, optional
        The groups to compile (default: all of them).
    """
    import liedyn
    from liedyn import control, se3

    def timed(group, call):
        t = time.perf_counter()
        result = call()
        if progress is not None:
            progress(group, time.perf_counter() - t)
        return result

    r = 1
    rng = np.random.default_rng(0)
    m = timed("model", _tiny_model)
    C = se3.exp(rng.normal(size=6))
    n, N, B = m.n_joints, m.n_bodies, 2
    Vb, q = rng.normal(size=(r + 2, 6)), rng.normal(size=(r + 3, n))
    Wb, tau = rng.normal(size=(r + 1, 6)), rng.normal(size=(r + 1, n))
    W = rng.normal(size=(r + 1, N, 6))

    def stack(x):
        return np.stack([x] * B)

    state = liedyn.State(base_pose=C, base_twist=Vb[0], q=q[0], qd=q[1])
    target = control.Target(q=rng.normal(size=(5, n)), base_pose=C,
                            base_twist=rng.normal(size=(4, 6)))

    def control_laws():
        elastic = control.ElasticJointLaw(m, 100.0, 0.01, (-1.0, -2.0, -3.0, -4.0),
                                          lambda t: target)
        s = elastic.state_on(target)
        elastic.plant(0.0, s, elastic(0.0, s))
        rotor = control.RotorLagLaw(m, (-1.0, -2.0, -3.0), lambda t: target,
                                    allocation=np.eye(6), time_constant=0.05)
        s = rotor.state_on(target)
        rotor.plant(0.0, s, rotor(0.0, s))
        control.base_error(C, Vb, C, Vb)
        com = np.zeros((6, 3))
        com[2, 2] = 1.0                                  # hovering, accelerating upwards
        flat = (com, np.zeros(4), np.zeros((4, n)))
        control.flat_map(m, *flat, r)
        tracking = control.FlatTrackingLaw(m, (-1.0, -2.0, -3.0, -4.0), lambda t: flat,
                                           yaw_poles=(-1.0, -2.0), joint_poles=(-1.0, -2.0))
        s = tracking.state_on(0.0)
        tracking.plant(0.0, s, tracking(0.0, s))

    def held_runs():
        cs = liedyn.ConstraintSet(m, [liedyn.Contact3D(m.body_names[-1])])
        held = liedyn.project_state(m, cs, state)
        liedyn.simulate(m, held, 0.02, dt=0.01, constraints=cs)
        liedyn.simulate(m, held, 0.02, dt=0.01, constraints=cs, controller=lambda t, s: None)

    # One entry per public algorithm: (group, call).
    groups = [
        ("se3", lambda: (se3.exp(Vb[0]), se3.log(C), se3.inv(C), se3.exp_so3(Vb[0, :3]),
                         se3.dexp(Vb[0]), se3.dexp_inv(Vb[0]))),
        ("forward kinematics", lambda: liedyn.forward_kinematics(m, C, Vb[:r + 1], q[:r + 2], r)),
        ("inverse dynamics", lambda: liedyn.inverse_dynamics(m, C, Vb, q, r, applied=W,
                                                             workspace=liedyn.Workspace(m, r))),
        ("forward dynamics", lambda: liedyn.forward_dynamics(
            m, C, Vb[:1], q[:2], r, tau=tau, base_wrench=Wb, applied=W,
            workspace=liedyn.Workspace(m, r))),
        ("hybrid dynamics", lambda: liedyn.hybrid_dynamics(
            m, C, Vb, q, r, motion_driven=[0], tau=tau, base_wrench=Wb)),
        ("closed form", lambda: (
            liedyn.mass_matrix(m, C, q[0]), liedyn.coriolis_matrix(m, C, Vb[:1], q[:2]),
            liedyn.gravity_vector(m, C, q[0]), liedyn.damping_matrix(m),
            liedyn.closed_form_inverse_dynamics(liedyn.closed_form_jets(m, C, Vb, q, r)))),
        ("batch", lambda: (
            liedyn.inverse_dynamics_batch(m, stack(C), stack(Vb), stack(q), r),
            liedyn.inverse_dynamics_batch(m, stack(C), stack(Vb), stack(q), r,
                                          workspace=liedyn.Workspace(m, r, samples=B)),
            liedyn.forward_dynamics_batch(m, stack(C), stack(Vb[:1]), stack(q[:2]), r,
                                          tau=stack(tau), base_wrench=stack(Wb)),
            liedyn.forward_dynamics_batch(m, stack(C), stack(Vb[:1]), stack(q[:2]), r,
                                          tau=stack(tau), base_wrench=stack(Wb),
                                          workspace=liedyn.Workspace(m, r, samples=B)))),
        ("constrained dynamics", lambda: (liedyn.constrained_forward_dynamics(
            m, liedyn.ConstraintSet(m, [liedyn.Contact3D(m.body_names[-1])]), C, Vb[:1], q[:2],
            r, tau=tau, base_wrench=Wb, applied=W, workspace=liedyn.Workspace(m, r)),
            liedyn.constrained_inverse_dynamics(                 # at rest: J ν = 0
                m, liedyn.ConstraintSet(m, [liedyn.Contact6D(m.body_names[-1])]), C,
                0 * Vb, np.vstack([q[:1], 0 * q[1:]]), r, applied=W))),
        ("simulate", lambda: (
            liedyn.simulate(m, state, 0.02, dt=0.01),
            liedyn.simulate(m, state, 0.02, dt=0.01, controller=lambda t, s: None),
            liedyn.simulate(m, state, 0.02, dt=0.01, adaptive=True),
            held_runs())),
        ("control", control_laws),
    ]
    names = [g for g, _ in groups]
    unknown = sorted(set(only or ()) - set(names))
    if unknown:
        raise ValueError(f"only: unknown kernel groups {unknown}; the groups are {names}")
    for group, call in groups:
        if only is None or group in only:
            timed(group, call)


def main(argv=None):
    """Compile every kernel into the cache; the exit status is 0 on success."""
    ap = argparse.ArgumentParser(prog="python -m liedyn.compile",
                                 description="Compile every liedyn kernel into the on-disk cache.")
    ap.add_argument("--only", nargs="+", metavar="GROUP",
                    help="compile only these kernel groups (e.g. 'inverse dynamics')")
    args = ap.parse_args(argv)
    from . import _jit

    if not _jit.HAVE_NUMBA:
        print("liedyn.compile: numba is not installed, kernels run interpreted; "
              "install it with `pip install numba`", file=sys.stderr)
        return 1
    if _jit._numba.config.DISABLE_JIT:
        print("liedyn.compile: NUMBA_DISABLE_JIT is set, kernels run interpreted; nothing to do")
        return 0
    folder = _jit.cache_folder()
    if folder is None:
        print("liedyn.compile: no usable cache folder, so compiled kernels cannot be kept "
              "for later processes", file=sys.stderr)
        return 1
    _jit.compiling_ahead()
    print(f"compiling liedyn's kernels into {folder}", flush=True)
    start = time.perf_counter()
    before = _jit.compiled_count()

    def progress(group, seconds):
        nonlocal before
        count, before = _jit.compiled_count() - before, _jit.compiled_count()
        print(f"  {group:<20} {seconds:6.1f} s  {count:3d} compiled", flush=True)

    warm_up(progress, args.only)
    print(f"done: {_jit.compiled_count()} kernels compiled in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
