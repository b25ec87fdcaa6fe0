"""With ``NUMBA_DISABLE_JIT=1`` (the README's way to step through kernels in
a debugger) every algorithm runs as plain Python and gives the compiled
results.

The switch is read when numba is imported, so both runs are subprocesses
of the same script; the uncompiled outputs are compared with the compiled.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 600   # seconds: a hang fails the test instead of CI

# Every call writes its outputs through the workspace handle; a random
# floating tree at order 1 with a non-trivial state.
SCRIPT = r'''
import json, sys
import numpy as np
import liedyn
from models.trees import random_tree

rng = np.random.default_rng(7)
model = random_tree(rng, 4, floating_base=True, armature=True, damping=True)
n, r = model.n_joints, 1
C0 = liedyn.se3.exp(rng.normal(size=6))
V = rng.normal(size=(r + 2, 6))
q = rng.normal(size=(r + 3, n))
tau = rng.normal(size=(r + 1, n))
W = rng.normal(size=(r + 1, 6))
app = rng.normal(size=(r + 1, model.n_bodies, 6))
out = {}
ws = liedyn.Workspace(model, r)
out["inverse"] = liedyn.inverse_dynamics(model, C0, V, q, r, applied=app).tau
out["inverse ws"] = liedyn.inverse_dynamics(model, C0, V, q, r, workspace=ws).base_wrench
out["forward"] = liedyn.forward_dynamics(model, C0, V[:1], q[:2], r, tau=tau, base_wrench=W,
                                         reference="base").q
out["forward ws"] = liedyn.forward_dynamics(model, C0, V[:1], q[:2], r, tau=tau,
                                            base_wrench=W, workspace=ws).base_twist
out["hybrid"] = liedyn.hybrid_dynamics(model, C0, V, q, r, motion_driven=[0], tau=tau,
                                       base_wrench=W).q
out["mass"] = liedyn.mass_matrix(model, C0, q[0])
out["closed form"] = liedyn.closed_form_jets(model, C0, V, q, r).coriolis
out["batch"] = liedyn.inverse_dynamics_batch(model, np.stack([C0, C0]), np.stack([V, -V]),
                                             np.stack([q, q]), r).tau
out["frame"] = liedyn.frame_kinematics(model, C0, V[:r + 1], q[:r + 2], r,
                                        model.n_bodies - 1).twist
state = liedyn.State(base_pose=C0, base_twist=V[0], q=q[0], qd=q[1])
out["simulate"] = liedyn.simulate(model, state, 0.004, dt=1e-3).q
json.dump({k: np.asarray(v).tolist() for k, v in out.items()}, sys.stdout)
'''


def _run(disable_jit):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_DISABLE_JIT="1" if disable_jit else "0")
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr[-3000:]
    return {k: np.array(v) for k, v in json.loads(out.stdout.splitlines()[-1]).items()}


@pytest.mark.slow
def test_every_algorithm_runs_uncompiled_and_agrees_with_the_compiled_kernels():
    plain, compiled = _run(True), _run(False)
    assert plain.keys() == compiled.keys()
    for k in compiled:
        np.testing.assert_allclose(plain[k], compiled[k], rtol=1e-10, atol=1e-10, err_msg=k)
