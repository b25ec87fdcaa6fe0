"""Sphinx configuration of the liedyn documentation.

Build from the repository root with

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The package is imported from the checkout (this file puts the repository
root first on ``sys.path``). The API pages are written out with
``autofunction``/``autoclass`` directives and ``autosummary`` tables
without stub generation, so a build writes nothing into ``docs/``.
"""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import liedyn  # noqa: E402

project = "liedyn"
author = "the liedyn developers"
copyright = "the liedyn developers"
release = version = liedyn.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]

source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "SPEC.md"]
templates_path = []
html_static_path = ["_static"]
html_theme = "alabaster"
html_theme_options = {"description": "Higher-order dynamics on Lie groups"}
# A fluid page and code blocks that wrap rather than clip (alabaster's body is
# a fixed 940 px page, which cuts code lines off in a 1200 px window).
html_css_files = ["liedyn.css"]

autosummary_generate = False
autodoc_member_order = "bysource"
autodoc_default_options = {"undoc-members": False}
# Optional extras (the dev extra installs casadi and pinocchio, not jax): where one is absent its
# module is documented against a mock instead of failing to import.
autodoc_mock_imports = [m for m in ("casadi", "pinocchio", "jax")
                        if importlib.util.find_spec(m) is None]

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
