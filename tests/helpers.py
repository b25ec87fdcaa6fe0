"""Shared test tools: a closeness assertion that fails on NaN, polynomial jets,
a Lie-group integrator for base poses driven by a twist trajectory, and a
fresh interpreter for code that could crash or must start clean."""

import os
import subprocess
import sys
import textwrap
from math import factorial
from pathlib import Path

import numpy as np

from liedyn import se3


ROOT = Path(__file__).resolve().parents[1]


def run_python(script, timeout=300, **env):
    """Run ``script`` (dedented) in a fresh interpreter at the repository root,
    with the root on ``PYTHONPATH`` and ``env`` added to the environment; a
    crash, a non-zero exit or a hang beyond ``timeout`` seconds fails the
    calling test, not the run. Returns its standard output."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=str(ROOT), **env), capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def assert_close(actual, desired, rtol, atol=0.0, what=""):
    """``|actual − desired| ≤ atol + rtol·|desired|`` elementwise; NaN in either
    fails. ``rtol`` and ``atol`` may be arrays that broadcast against ``desired``."""
    a = np.asarray(actual, dtype=float)
    d = np.asarray(desired, dtype=float)
    assert a.shape == d.shape, f"{what}: shape {a.shape} != {d.shape}"
    assert np.all(np.isfinite(a)), f"{what}: non-finite values in result"
    assert np.all(np.isfinite(d)), f"{what}: non-finite values in the reference"
    err = np.abs(a - d)
    bound = atol + rtol * np.abs(d)
    excess = err - bound
    if err.size and np.max(excess) > 0.0:
        i = tuple(int(x) for x in np.unravel_index(np.argmax(excess), err.shape))
        tol = np.broadcast_to(bound, err.shape)[i]
        raise AssertionError(f"{what}: |error| {err[i]:.3e} at {i} exceeds its tolerance {tol:.3e} "
                             f"(max |error| {np.max(err):.3e}, max |desired| {np.max(np.abs(d)):.3e})")


def rel_err(actual, desired):
    """``max|a − d| / (1 + max|d|)``."""
    a, d = np.asarray(actual, float), np.asarray(desired, float)
    return float(np.max(np.abs(a - d)) / (1.0 + np.max(np.abs(d))))


def poly_jet(coeffs, t, rows):
    """Jet ``(rows, …)`` at time ``t`` of ``x(t) = Σ_k coeffs[k] t^k / k!``."""
    coeffs = np.asarray(coeffs, float)
    out = np.zeros((rows,) + coeffs.shape[1:])
    for d in range(rows):
        for k in range(d, coeffs.shape[0]):
            out[d] += coeffs[k] * t ** (k - d) / factorial(k - d)
    return out


def integrate_pose(C0, twist_of_t, t, steps=64):
    """Solve ``Ċ = [V(t)] C`` (spatial twist) from ``C(0) = C0`` to time ``t``.

    Fourth-order Magnus integrator with two Gauss points, the group exponential
    for the update, so every step stays on SE(3).
    """
    C = np.array(C0, float)
    if t == 0.0:
        return C
    h = t / steps
    g = np.sqrt(3.0) / 6.0
    for i in range(steps):
        t0 = i * h
        V1 = twist_of_t(t0 + (0.5 - g) * h)
        V2 = twist_of_t(t0 + (0.5 + g) * h)
        Omega = 0.5 * h * (V1 + V2) + (np.sqrt(3.0) / 12.0) * h * h * (se3.ad(V2) @ V1)
        C = se3.exp(Omega) @ C
    return C


def solid_sphere(radius, mass):
    """A floating solid sphere, centre of mass at its origin,
    ``I = 2/5 m ρ² I₃``, under the default gravity (−9.81 along z)."""
    import liedyn as ld
    b = ld.ModelBuilder()
    b.add_body("ball", None, None, np.eye(4),
               se3.spatial_inertia(mass, np.zeros(3), 0.4 * mass * radius ** 2 * np.eye(3)))
    return b.build()
