"""Hostile inputs (model files, arrays, options, the C compiler, a local Dask
cluster), each case in a fresh interpreter with a time limit.

The cases are in :mod:`tests.hostile_cases`. Starting an interpreter per
case would cost seconds each, so the cases of one batch run in one
interpreter that prints a line per case; a case that crashes that
interpreter or hangs fails, and the cases after it run again in a new one.
"""

import os
import subprocess
import sys

import pytest

from tests import hostile_cases
from tests.helpers import ROOT

CASES = hostile_cases.CASES
BATCHES = sorted({batch for batch, _, _ in CASES.values()})
# Seconds an interpreter may run before the case it is in counts as hung:
# every case bounds its own time far below this (the slowest, a local Dask
# cluster started twice, takes about 6 s).
TIMEOUT = 120.0

_results = {}


def _run(names):
    """``{name: (passed, detail)}`` for the cases ``names``, run in order in
    as many interpreters as crashes and hangs require."""
    out = {}
    todo = list(names)
    while todo:
        cmd = [sys.executable, "-m", "tests.hostile_cases", *todo]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        try:
            res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                                 timeout=TIMEOUT)
            stdout, stderr, why = res.stdout, res.stderr, f"exit status {res.returncode}"
        except subprocess.TimeoutExpired as err:
            stdout = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
            stderr = err.stderr.decode() if isinstance(err.stderr, bytes) else (err.stderr or "")
            why = f"hung (no result within {TIMEOUT:g} s)"
        started = None
        for line in stdout.splitlines():
            word, _, rest = line.partition(" ")
            if word == "START":
                started = rest
            elif word == "PASS":
                out[rest.split()[0]] = (True, rest)
                started = None
            elif word == "FAIL":
                name, _, reason = rest.partition(": ")
                out[name] = (False, reason)
                started = None
        if started is not None:                     # the interpreter died in this case
            out[started] = (False, f"{why}; stderr: {stderr[-1500:]}")
        elif not all(n in out for n in todo):       # died between cases, or before any
            first = next(n for n in todo if n not in out)
            out[first] = (False, f"{why} before the case started; stderr: {stderr[-1500:]}")
        todo = [n for n in todo if n not in out]
    return out


def _result(name):
    batch = CASES[name][0]
    if batch not in _results:
        _results[batch] = _run([n for n, (b, _, _) in CASES.items() if b == batch])
    return _results[batch][name]


def test_the_cases_are_many_and_each_batch_has_some():
    assert len(CASES) >= 40, len(CASES)
    assert set(BATCHES) == {"urdf", "arrays", "simulate", "symbolic", "dask"}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input(name):
    if CASES[name][0] == "dask":
        pytest.importorskip("distributed")
        pytest.importorskip("psutil")
    if CASES[name][0] == "symbolic":
        pytest.importorskip("casadi")
    passed, detail = _result(name)
    assert passed, f"{name}: {detail}"
