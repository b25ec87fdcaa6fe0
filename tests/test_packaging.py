"""The wheel ships the library alone and works outside the repository.

``python -m build`` makes an sdist and, from it, the wheel, from a copy of
the sources (a ``build/`` folder left by an
earlier build in the checkout cannot leak into it), installed without
dependencies into a fresh virtual environment that reaches this
environment's packages (NumPy, numba) through a ``.pth`` file, so the test
stays offline and fast, and a smoke example runs there from a temporary
folder with no ``PYTHONPATH``: a floating base with one link hanging at rest,
whose inverse dynamics is known in closed form (the base must carry the
whole weight, the joint nothing).

Building and installing take about 10 s, compiling the kernels in the fresh
cache about 10 s more; every subprocess has a timeout.
"""

import email
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 600   # seconds per subprocess: a hang fails the test instead of CI
NOT_SOURCES = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__",
                                     "paper_figures", ".pytest_cache", ".hypothesis")

# Smoke example, run by the installed wheel. Base of mass m0 and one link of
# mass m1 whose centre of mass lies on the world z axis below the joint: at
# rest with q = 0 the base wrench holds the weight, W0 = (0, 0, 0, 0, 0,
# (m0 + m1) g) (moment about the world origin is zero: both centres of mass
# are on the z axis), and gravity has no lever arm about the joint, tau = 0.
SMOKE = '''
import json, sys
import numpy as np
import liedyn
from liedyn import ModelBuilder, Revolute, se3

m0, m1, g = 2.0, 0.5, 9.81
builder = ModelBuilder(floating_base=True, gravity=(0.0, 0.0, -g))
builder.add_body("base", None, None, np.eye(4),
                 se3.spatial_inertia(m0, np.zeros(3), np.diag([0.1, 0.1, 0.2])))
origin = np.eye(4)
origin[2, 3] = -0.3
builder.add_body("link", "base", Revolute(axis=(0.0, 1.0, 0.0), point=(0.0, 0.0, 0.1)), origin,
                 se3.spatial_inertia(m1, np.zeros(3), np.diag([0.01, 0.01, 0.005])))
model = builder.build()
r = 2
res = liedyn.inverse_dynamics(model, np.eye(4), np.zeros((r + 2, 6)), np.zeros((r + 3, 1)), r)
expected = np.zeros((r + 1, 6))
expected[0, 5] = (m0 + m1) * g
from liedyn.examples import ReferenceMotion, aerial_manipulator
assert aerial_manipulator().n_joints == ReferenceMotion().joint_jet(0.0, 1).shape[1] == 6
imports = {}
for name in ("models", "experiments"):
    try:
        __import__(name)
        imports[name] = "importable"
    except ModuleNotFoundError:
        imports[name] = "absent"
print(json.dumps({
    "liedyn": liedyn.__file__,
    "wrench_error": float(np.abs(res.base_wrench - expected).max()),
    "tau_max": float(np.abs(res.tau).max()),
    "imports": imports,
}))
'''


def _run(cmd, **kw):
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=TIMEOUT,
                         **kw)
    assert out.returncode == 0, f"{cmd} failed:\n{out.stdout}\n{out.stderr}"
    return out.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """``(sdist, wheel)`` paths; the wheel is built from the sdist."""
    tmp = tmp_path_factory.mktemp("dist")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCES)
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", tmp / "dist", src])
    (sdist,) = (tmp / "dist").glob("liedyn-*.tar.gz")
    (wheel,) = (tmp / "dist").glob("liedyn-*.whl")
    return sdist, wheel


@pytest.fixture(scope="module")
def wheel(dist):
    return dist[1]


@pytest.mark.slow
def test_sdist_holds_the_sources_tests_and_spec(dist):
    with tarfile.open(dist[0]) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for f in ("pyproject.toml", "README.md", "LICENSE", "CITATION.cff", "docs/SPEC.md",
              "docs/conf.py", "docs/tutorial.rst", "docs/tutorial/contacts.rst",
              "docs/_static/liedyn.css", "liedyn/__init__.py", "liedyn/viewer/page.js",
              "models/aerial_manipulator.py", "experiments/reproduce.py", "tests/test_packaging.py"):
        assert f in names, f


@pytest.mark.slow
def test_wheel_holds_only_the_library(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_string(z.read(info).decode())
    tops = {n.split("/")[0] for n in names}
    assert tops == {"liedyn", info.split("/")[0]}, tops
    assert {"liedyn/__init__.py", "liedyn/baselines/casadi_ad.py", "liedyn/examples/__init__.py",
            "liedyn/examples/aerial_manipulator.py",
            "liedyn/examples/reference_motion.py",
            "liedyn/viewer/page.js"} <= set(names)        # the viewer's script, package data
    # the licence travels with the wheel (license-files in pyproject.toml)
    dist_info = info.split("/")[0]
    assert f"{dist_info}/licenses/LICENSE" in names, [n for n in names if "LICENSE" in n]
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert meta.get_all("License-File") == ["LICENSE"]
    core = sorted(req.split(">")[0].split("<")[0].split("=")[0].strip()
                  for req in meta.get_all("Requires-Dist") if "extra ==" not in req)
    assert core == ["numba", "numpy"], core
    assert {"casadi", "pin", "experiments", "viewer"} <= set(meta.get_all("Provides-Extra"))


@pytest.mark.slow
def test_installed_wheel_runs_outside_the_repository(wheel, tmp_path):
    env_dir = tmp_path / "env"
    _run([sys.executable, "-m", "venv", "--without-pip", env_dir])
    python = env_dir / "bin" / "python"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
                .strip())
    host = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "host_packages.pth").write_text("\n".join(sorted(host)) + "\n")
    # pip must not see the checkout (a PYTHONPATH naming it shows the editable
    # install's metadata, and pip would skip the wheel as already installed)
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
          "--quiet", wheel], env=clean)
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "smoke.py").write_text(SMOKE)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = json.loads(_run([python, "smoke.py"], cwd=work, env=env).splitlines()[-1])
    assert Path(result["liedyn"]).is_relative_to(site), result["liedyn"]
    assert result["imports"] == {"models": "absent", "experiments": "absent"}
    # round-off of sums of O(10) terms in float64
    assert result["wrench_error"] < 1e-12 and result["tau_max"] < 1e-12, result
