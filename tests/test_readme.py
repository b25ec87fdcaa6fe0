"""Every ```python block of README.md runs as a saved script from an empty
folder, with only the ``liedyn`` package importable from the checkout: no
repository root on ``sys.path``, so ``models``, ``experiments`` and ``tests``
cannot be imported, as for a user who installed the wheel.

The package is exposed the way an editable install exposes it: the one
folder on ``PYTHONPATH`` holds a ``sitecustomize`` that finds ``liedyn`` (and
nothing else) in the checkout. The package is then imported from its own
path, as a user's installation is (the kernel cache is keyed by the
sources' content, so a copy elsewhere would load the same kernels). The
examples are short
as written (the controller simulates 2 s), so none is substituted.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 600          # s per example: a first run compiles kernels
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)

FINDER = f'''
import importlib.util
import sys


class _Liedyn:
    """Finds ``liedyn`` in the checkout, and nothing else."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "liedyn":
            return None
        return importlib.util.spec_from_file_location(
            "liedyn", {str(ROOT / "liedyn" / "__init__.py")!r},
            submodule_search_locations=[{str(ROOT / "liedyn")!r}])


sys.meta_path.insert(0, _Liedyn)
'''

PROBE = '''
import importlib.util, json, sys
import liedyn
specs = {m: importlib.util.find_spec(m) for m in ("models", "experiments", "tests")}
print(json.dumps({"liedyn": liedyn.__file__, "path": sys.path,
                  "others": {m: s.origin for m, s in specs.items() if s is not None}}))
'''


def _blocks():
    return BLOCK.findall((ROOT / "README.md").read_text())


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")
    (folder / "sitecustomize.py").write_text(FINDER)
    return folder


def _run(code, site, tmp_path):
    work = tmp_path / "empty"
    work.mkdir()
    (work / "example.py").write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run([sys.executable, "example.py"], cwd=work, env=env, capture_output=True,
                         text=True, timeout=TIMEOUT)
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def test_the_readme_has_its_examples():
    blocks = _blocks()
    assert len(blocks) >= 3
    assert any("ElasticJointLaw" in b and "simulate(" in b for b in blocks)


def _pytest_commands(text):
    """The ``python -m pytest …`` commands of a shell line, in order."""
    return [c.strip() for c in re.split(r"&&|\\\n", text) if "python -m pytest" in c]


def test_ci_runs_the_readmes_test_commands():
    """``.ci/run`` runs what the README tells a user to run: the default
    tests, then the slow ones (``-m slow``, left out by the default one)."""
    shell = re.findall(r"^```bash\n(.*?)^```", (ROOT / "README.md").read_text(), re.M | re.S)
    readme = [c for block in shell for c in _pytest_commands(block)]
    assert readme == ["python -m pytest -q", "python -m pytest -q -m slow"], readme
    assert _pytest_commands((ROOT / ".ci" / "run").read_text()) == readme


def test_only_the_package_is_importable(site, tmp_path):
    import json
    seen = json.loads(_run(PROBE, site, tmp_path).splitlines()[-1])
    assert Path(seen["liedyn"]) == ROOT / "liedyn" / "__init__.py"
    for name, origin in seen["others"].items():      # a third-party "tests" is not ours
        assert not Path(str(origin)).resolve().is_relative_to(ROOT), (name, origin)
    assert not any(Path(p or ".").resolve() == ROOT for p in seen["path"])


@pytest.mark.slow
@pytest.mark.parametrize("k", range(len(_blocks())))
def test_readme_example_runs_as_a_script_from_an_empty_folder(k, site, tmp_path):
    _run(_blocks()[k], site, tmp_path)
