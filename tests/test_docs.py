"""The documentation builds without a warning, every tutorial chapter runs,
and code blocks fit the page.

``sphinx-build -W --keep-going -b html`` builds ``docs/`` into a temporary
folder once per session (warnings are errors; numpydoc's warnings about
docstring sections it does not know, which drop those sections from the
pages, count too). The tutorial is one page per chapter (``docs/tutorial/``,
listed by the toctree of ``docs/tutorial.rst``); the ``.. code-block::
python`` blocks of each chapter are extracted, in order, into one script
that runs in its own interpreter in a temporary folder with the package on
``PYTHONPATH``; the blocks assert what the text says. Subprocesses run with a
timeout. The API pages must name every entry of ``liedyn.__all__``. In
headless Chromium (where installed), every chapter is opened in a 1200 px
window and the chapter with the longest code line also at 1366 and 1920 px;
every code block must show its lines whole, without wrapping or a
horizontal scroll (without ``docs/_static/liedyn.css``, alabaster's fixed
page gives the blocks 660 px, which lines of 96 characters overflow).
"""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import liedyn

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TIMEOUT = 600   # seconds per subprocess: a hang fails the test instead of CI
CHAPTERS = ("basics", "contacts", "simulation", "control", "symbolic", "distributed", "mjcf")
WIDTHS = (1200, 1366, 1920)


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


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    tmp = tmp_path_factory.mktemp("docs")
    out = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
                          "-q", "-d", str(tmp / "doctrees"), str(DOCS), str(tmp / "html")],
                         capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp, env=_env())
    assert out.returncode == 0, f"sphinx-build failed:\n{out.stdout}\n{out.stderr}"
    assert "Unknown section" not in out.stderr, out.stderr
    return tmp / "html"


@pytest.mark.slow
def test_docs_build_without_warnings(html):
    assert (html / "tutorial.html").is_file()
    api = (html / "api.html").read_text(encoding="utf-8")
    missing = [name for name in liedyn.__all__ if f'id="liedyn.{name}"' not in api
               and name not in ("se3", "control", "trajectory")]
    assert not missing, f"not in the API reference: {missing}"
    for module in ("liedyn.se3", "liedyn.trajectory", "liedyn.control", "liedyn.interop.pinocchio",
                   "liedyn.baselines.casadi_ad"):
        assert f'id="module-{module}"' in api, module


@pytest.mark.slow
def test_every_chapter_is_in_the_tutorial(html):
    """The toctree lists exactly the chapters this file runs, and each page is built."""
    index = (DOCS / "tutorial.rst").read_text(encoding="utf-8")
    listed = re.findall(r"^   tutorial/(\w+)$", index, flags=re.M)
    assert tuple(listed) == CHAPTERS
    assert {p.stem for p in (DOCS / "tutorial").glob("*.rst")} == set(CHAPTERS)
    for chapter in CHAPTERS:
        assert (html / "tutorial" / f"{chapter}.html").is_file(), chapter


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_tutorial_chapter_runs(tmp_path, chapter):
    blocks = code_blocks(DOCS / "tutorial" / f"{chapter}.rst")
    assert blocks, chapter
    assert sum("assert " in b for b in blocks) >= len(blocks) // 2, "a chapter checks its numbers"
    script = tmp_path / f"{chapter}.py"
    script.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=TIMEOUT, cwd=tmp_path, env=_env())
    assert out.returncode == 0, f"chapter {chapter!r} failed:\n{out.stdout}\n{out.stderr}"


# Injected into a copy of a page: for every code block, its scroll width with
# the text unwrapped (white-space: pre) against its box, written into the page.
_PROBE = """<script>window.addEventListener('load', function () {
  var out = [];
  document.querySelectorAll('div.highlight pre').forEach(function (p) {
    var shown = p.getBoundingClientRect().height;
    p.style.whiteSpace = 'pre';
    out.push(p.scrollWidth + '/' + p.clientWidth + '/' + shown + '/'
             + p.getBoundingClientRect().height);
  });
  var d = document.createElement('div');
  d.id = 'probe';
  d.textContent = out.join(' ');
  document.body.appendChild(d);
});</script></body>"""


def _longest_line_chapter():
    return max(CHAPTERS, key=lambda c: max(len(line) for b in code_blocks(
        DOCS / "tutorial" / f"{c}.rst") for line in b.splitlines()))


@pytest.mark.slow
def test_code_blocks_fit_common_window_widths(html, tmp_path):
    """Every chapter at the narrowest width, and the chapter with the longest
    code line at each width: every code block's unwrapped text fits its box
    (scroll width ≤ client width) and the block is no taller wrapped than
    unwrapped, so no line is cut off, scrolled or broken."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("headless Chromium not installed")
    longest = _longest_line_chapter()
    views = [(c, WIDTHS[0]) for c in CHAPTERS] + [(longest, w) for w in WIDTHS[1:]]
    for chapter, width in views:
        page = html / "tutorial" / f"{chapter}.html"
        probe = page.with_name(f"probe_{chapter}.html")
        probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _PROBE),
                         encoding="utf-8")
        out = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                              f"--user-data-dir={tmp_path / 'profile'}",
                              f"--window-size={width},1600", "--virtual-time-budget=5000",
                              "--dump-dom", probe.as_uri()],
                             capture_output=True, text=True, timeout=120)
        found = re.search(r'<div id="probe">([^<]*)</div>', out.stdout)
        assert found, f"no measurement at {width} px:\n{out.stderr[-2000:]}"
        blocks = [tuple(map(float, b.split("/"))) for b in found.group(1).split()]
        assert len(blocks) == len(code_blocks(DOCS / "tutorial" / f"{chapter}.rst"))
        for i, (scroll, client, shown, unwrapped) in enumerate(blocks):
            assert scroll <= client, f"{chapter} block {i} at {width} px: {scroll} > {client} px"
            assert shown <= unwrapped, f"{chapter} block {i} at {width} px wraps"
