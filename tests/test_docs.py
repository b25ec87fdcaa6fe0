"""The documentation builds without a warning and its tutorial runs.

``sphinx-build -W --keep-going -b html`` builds ``docs/`` into a temporary
folder (warnings are errors; numpydoc's warnings about docstring sections it
does not know, which drop those sections from the pages, count too). Every
``.. code-block:: python`` of ``docs/tutorial.rst`` is extracted, in order,
into one script that runs in a temporary folder with the package on
``PYTHONPATH``; the blocks assert what the text says. Both run in
subprocesses with a timeout. The API pages must name every entry of
``liedyn.__all__``.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import liedyn

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TIMEOUT = 600   # seconds per subprocess: a hang fails the test instead of CI


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in
                                                      env.get("PYTHONPATH", "").split(os.pathsep)
                                                      if p])
    env.setdefault("MPLBACKEND", "Agg")
    return env


def code_blocks(path):
    """The ``.. code-block:: python`` bodies of an rST file, dedented, in order."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() == ".. code-block:: python":
            i += 1
            body = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("   ")):
                body.append(lines[i])
                i += 1
            blocks.append(textwrap.dedent("\n".join(body)).strip("\n"))
        else:
            i += 1
    return blocks


def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    out = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
                          "-q", "-d", str(tmp_path / "doctrees"), str(DOCS),
                          str(tmp_path / "html")],
                         capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path,
                         env=_env())
    assert out.returncode == 0, f"sphinx-build failed:\n{out.stdout}\n{out.stderr}"
    assert "Unknown section" not in out.stderr, out.stderr
    assert (tmp_path / "html" / "tutorial.html").is_file()
    api = (tmp_path / "html" / "api.html").read_text(encoding="utf-8")
    missing = [name for name in liedyn.__all__ if f'id="liedyn.{name}"' not in api
               and name not in ("se3", "control", "trajectory")]
    assert not missing, f"not in the API reference: {missing}"
    for module in ("liedyn.se3", "liedyn.trajectory", "liedyn.control", "liedyn.interop.pinocchio",
                   "liedyn.baselines.casadi_ad"):
        assert f'id="module-{module}"' in api, module


def test_tutorial_code_runs(tmp_path):
    blocks = code_blocks(DOCS / "tutorial.rst")
    assert len(blocks) >= 5
    script = tmp_path / "tutorial.py"
    script.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=TIMEOUT, cwd=tmp_path, env=_env())
    assert out.returncode == 0, f"tutorial failed:\n{out.stdout}\n{out.stderr}"
