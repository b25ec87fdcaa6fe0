"""A small Monte-Carlo study for tests/test_distributed.py, in a module of
its own so that Dask's worker processes can import its functions.

The elastic-joint law on the aerial manipulator, started off the reference
by each row's ``delta_q``, on a plant whose joint stiffness and body masses
are scaled by ``stiffness`` and ``mass``. Row flags: ``nan_after`` > 0
makes the plant's joint torques NaN from that time on (the run fails with a
SimulationError); ``kill`` kills the worker process that builds the run,
once per marker file (never outside a Dask worker); ``sleep`` seconds are
slept in ``build``.
"""

import os
import signal
import time

import numpy as np

from liedyn import Inputs, control, se3
from liedyn.distributed import Run, scaled_model

STIFFNESS, MOTOR_INERTIA = 25.0, 0.01
POLES = (-5.0, -6.0, -7.0, -8.0)
HORIZON, DT = 0.04, 5e-3


def context(marker=None, log=None):
    """The shared part: model, reference; ``marker`` (the kill flag's file)
    and ``log`` (a file every build appends its run index to), optional."""
    from liedyn.examples.aerial_manipulator import aerial_manipulator
    from liedyn.examples.reference_motion import ReferenceMotion
    return dict(model=aerial_manipulator(), reference=ReferenceMotion(), marker=marker, log=log)


def table(runs, seed=0, nan_at=(), kill_at=None, sleep=0.0):
    rng = np.random.default_rng(seed)
    t = {"delta_q": rng.uniform(-0.05, 0.05, (runs, 6)),
         "stiffness": rng.uniform(0.98, 1.02, (runs, 6)),
         "mass": rng.uniform(0.98, 1.02, (runs, 7)),
         "nan_after": np.zeros(runs), "kill": np.zeros(runs, bool), "sleep": np.full(runs, sleep)}
    for i in nan_at:
        t["nan_after"][i] = 0.02
    if kill_at is not None:
        t["kill"][kill_at] = True
    return t


def target_of(reference):
    def target(t):
        return control.Target(q=reference.joint_jet(t, 5), base_pose=reference.base_pose(t),
                              base_twist=reference.base_twist_jet(t, 4))
    return target


class _NaNAfter:
    """The plant's inputs, with NaN torques from ``t1`` on."""

    def __init__(self, plant, t1):
        self.plant, self.t1 = plant, t1

    def __call__(self, t, state, u):
        inp = self.plant(t, state, u)
        if t < self.t1:
            return inp
        return Inputs(tau=inp.tau * np.nan, base_wrench=inp.base_wrench,
                      extra_rate=inp.extra_rate)


def _kill_once(marker):
    """SIGKILL this process if it is a Dask worker and ``marker`` does not exist yet."""
    try:
        from distributed import get_worker
        get_worker()
    except (ImportError, ValueError):
        return
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


def build(ctx, row):
    if ctx["log"] is not None:
        with open(ctx["log"], "a") as fh:
            fh.write(f"{row['run']}\n")
    if row["kill"] and ctx["marker"] is not None:
        _kill_once(ctx["marker"])
    if row["sleep"] > 0:
        time.sleep(float(row["sleep"]))
    model = ctx["model"]
    target = target_of(ctx["reference"])
    law = control.ElasticJointLaw(model, STIFFNESS, MOTOR_INERTIA, POLES, target)
    plant_model = scaled_model(model, mass=row["mass"])
    plant = control.ElasticJointLaw(plant_model, STIFFNESS * row["stiffness"], MOTOR_INERTIA,
                                    POLES, target)
    T0 = target(0.0)
    state0 = law.state_on(T0, q=T0.q[0] + row["delta_q"],
                          base_pose=se3.exp(np.full(6, 0.01)) @ T0.base_pose)
    actuators = plant.plant if row["nan_after"] <= 0 else \
        _NaNAfter(plant.plant, float(row["nan_after"]))
    return Run(plant_model, state0, law, actuators, target)


def serial(ctx, tab, horizon=HORIZON, dt=DT):
    """The study as a plain loop: ``[(summary dict, error text, trajectory)]``."""
    from liedyn import SimulationError, simulate
    from liedyn.distributed import tracking_summary
    out = []
    for i in range(len(tab["delta_q"])):
        row = {k: v[i] for k, v in tab.items()}
        row["run"] = i
        spec = build(ctx, row)
        try:
            traj = simulate(spec.model, spec.state0, horizon, dt=dt, controller=spec.controller,
                            plant=spec.plant)
            error = ""
        except SimulationError as err:
            traj, error = err.trajectory, str(err)
        out.append((tracking_summary(spec, traj), error, traj))
    return out
