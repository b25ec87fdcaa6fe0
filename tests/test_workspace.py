"""Workspaces: reusing scratch gives the same numbers as fresh scratch, a
workspace is tied to its (model, order), and the compiled kernels neither
recompile across calls and orders nor allocate once their scratch is given."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import liedyn
from models.trees import random_tree
from tests.helpers import assert_close

ROOT = Path(__file__).resolve().parents[1]


def test_workspace_results_equal_fresh_results():
    rng = np.random.default_rng(80)
    model = random_tree(rng, 8, armature=True, damping=True)
    r = 3
    ws = liedyn.Workspace(model, r)
    for _ in range(3):     # stale contents from an earlier call must not leak in
        C0 = liedyn.se3.exp(rng.normal(size=6))
        Vb = rng.normal(size=(r + 2, 6))
        q = rng.normal(size=(r + 3, model.n_joints))
        a = liedyn.inverse_dynamics(model, C0, Vb, q, r)
        b = liedyn.inverse_dynamics(model, C0, Vb, q, r, workspace=ws)
        assert_close(b.tau, a.tau, rtol=0, atol=0, what="tau")
        assert_close(b.twist, a.twist, rtol=0, atol=0, what="twist")
        f = liedyn.forward_dynamics(model, C0, Vb[0], q[0], q[1], a.base_wrench, a.tau, r)
        g = liedyn.forward_dynamics(model, C0, Vb[0], q[0], q[1], a.base_wrench, a.tau, r,
                                    workspace=ws)
        assert_close(g.q, f.q, rtol=0, atol=0, what="q")
        assert_close(g.base_twist, f.base_twist, rtol=0, atol=0, what="base twist")
        assert g.articulated_inertia is ws.MA


def test_workspace_is_tied_to_model_and_order():
    rng = np.random.default_rng(81)
    model = random_tree(rng, 4)
    other = random_tree(rng, 4)
    ws = liedyn.Workspace(model, 2)
    Vb = np.zeros((4, 6))
    q = np.zeros((5, 3))
    with pytest.raises(ValueError, match="workspace"):
        liedyn.inverse_dynamics(other, None, Vb, q, 2, workspace=ws)
    with pytest.raises(ValueError, match="workspace"):
        liedyn.inverse_dynamics(model, None, Vb[:3], q[:4], 1, workspace=ws)
    with pytest.raises(TypeError, match="workspace"):
        liedyn.inverse_dynamics(model, None, Vb, q, 2, workspace=object())


def test_kernels_neither_recompile_nor_allocate():
    """Run in a fresh interpreter with numba's allocation statistics on."""
    script = textwrap.dedent("""
        import numpy as np
        from numba.core.runtime import rtsys

        def allocations(kernel, args):
            # numba adopts each ndarray argument with one NRT meminfo per call;
            # anything beyond that is an allocation inside the kernel
            before = rtsys.get_allocation_stats().alloc
            kernel(*args)
            adopted = sum(isinstance(a, np.ndarray) for a in args)
            return rtsys.get_allocation_stats().alloc - before - adopted

        import liedyn
        from liedyn.inverse import _inverse_dynamics
        from liedyn.forward import _articulated_body
        from liedyn.workspace import binomials
        from models.trees import benchmark_tree
        m = benchmark_tree(2, 3)
        rng = np.random.default_rng(0)
        for r in (1, 4):
            ws = liedyn.Workspace(m, r)
            Vb = rng.normal(size=(r + 2, 6)); q = rng.normal(size=(r + 3, m.n_joints))
            tau = np.empty((r + 1, m.n_joints)); Wapp = np.zeros((r + 1, m.n_bodies, 6))
            args = (m.body_parent, m.joint_screw, m.body_home, m.body_mass, m.body_com,
                    m.body_rot_inertia, m.joint_armature, m.joint_damping, m.gravity,
                    np.eye(4), Vb, q, Wapp, r, binomials(r + 3), ws.F, ws.C, ws.S, ws.V,
                    ws.c, ws.Ic, ws.Pi, ws.W, tau)
            _inverse_dynamics(*args)
            assert allocations(_inverse_dynamics, args) == 0, "inverse kernel allocates"
            res = liedyn.inverse_dynamics(m, None, Vb, q, r)
            qj = np.zeros((r + 3, m.n_joints)); qj[:2] = q[:2]
            motion = np.zeros(m.n_bodies, dtype=np.bool_)
            fargs = (m.body_parent, m.joint_screw, m.body_home, m.body_mass, m.body_com,
                     m.body_rot_inertia, m.joint_armature, m.joint_damping, m.gravity,
                     np.eye(4), motion, False, Vb, res.base_wrench, Wapp, r, binomials(r + 3),
                     qj, res.tau.copy(), ws.F, ws.C, ws.S, ws.V, ws.c, ws.Ic, ws.Pi, ws.MA,
                     ws.U, ws.D, ws.L, ws.W)
            ws.V[:] = 0.0; ws.W[:] = 0.0
            _articulated_body(*fargs)
            ws.V[:] = 0.0; ws.W[:] = 0.0; qj[2:] = 0.0
            assert allocations(_articulated_body, fargs) == 0, "forward kernel allocates"
            liedyn.forward_dynamics(m, None, Vb[0], q[0], q[1], res.base_wrench, res.tau, r)
        # one compiled specialisation serves every order
        assert len(_inverse_dynamics.signatures) == 1, _inverse_dynamics.signatures
        assert len(_articulated_body.signatures) == 1, _articulated_body.signatures
        print("ok")
    """)
    env = dict(os.environ, NUMBA_NRT_STATS="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
