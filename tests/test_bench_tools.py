"""The experiments' plotting-free helpers: the fits of the paper's laws
recover known laws and their intervals cover at the stated rate, the CSV
table measures afresh unless resuming rows of the same machine and code,
the code version sees uncommitted sources, the timer makes the calls it
reports, and none of these modules (nor the ones the tests import) pulls in
Matplotlib or tqdm."""

import subprocess

import numpy as np
import pytest

from experiments import _fit, _provenance, _table, _timing
from tests.helpers import run_python


# ------------------------------------------------------------------- fits --

def test_fits_recover_exact_laws():
    N = 1.0 + 5.0 * np.arange(1.0, 61.0, 7.0)
    f = _fit.fit("linear", N, 2e-5 + 3e-7 * N)
    np.testing.assert_allclose(f.coef, [2e-5, 3e-7], rtol=1e-9)
    assert f.rms < 1e-18 and f.dof == N.size - 2
    r = np.arange(11.0)
    f = _fit.fit("quadratic", r, 3e-5 + 1e-6 * r + 2e-6 * r ** 2)
    np.testing.assert_allclose(f.coef, [3e-5, 1e-6, 2e-6], rtol=1e-8)
    f = _fit.fit("geometric", r, 1e-4 * 2.9 ** r)
    assert abs(f.gamma()[0] - 2.9) < 1e-12
    np.testing.assert_allclose(f.predict([12.0]), 1e-4 * 2.9 ** 12, rtol=1e-10)


def test_linear_standard_error_is_the_textbook_formula():
    """se(c₁) = s / √Σ(x − x̄)² and se(c₀) = s √(1/n + x̄²/Σ(x − x̄)²) with
    s² = RSS / (n − 2): the closed forms of simple regression."""
    rng = np.random.default_rng(11)
    x = np.linspace(6.0, 996.0, 40)
    y = 1e-5 + 2e-7 * x + rng.normal(scale=3e-6, size=x.size)
    f = _fit.fit("linear", x, y)
    resid = y - f.predict(x)
    s = np.sqrt(resid @ resid / (x.size - 2))
    sxx = np.sum((x - x.mean()) ** 2)
    np.testing.assert_allclose(f.se, [s * np.sqrt(1 / x.size + x.mean() ** 2 / sxx),
                                      s / np.sqrt(sxx)], rtol=1e-10)


def test_interval_of_c2_covers_at_the_stated_rate():
    """Monte Carlo: 2000 noisy data sets of the quadratic law at r = 0..10;
    the 95 % interval of c₂ must contain the true c₂ in 95 % of them (binomial
    standard deviation 0.5 %, so ±1.5 % is three of them)."""
    rng = np.random.default_rng(12)
    r = np.arange(11.0)
    c2, hits, trials = 1.1e-6, 0, 2000
    for _ in range(trials):
        y = 30e-6 + 7e-6 * r + c2 * r ** 2 + rng.normal(scale=2e-6, size=r.size)
        lo, hi = _fit.fit("quadratic", r, y).interval(0.95)
        hits += lo[2] <= c2 <= hi[2]
    assert abs(hits / trials - 0.95) < 0.015, hits / trials


def test_fit_rejects_too_few_points_and_unknown_laws():
    with pytest.raises(ValueError, match="usable points"):
        _fit.fit("quadratic", [0.0, 1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="kind"):
        _fit.fit("power", [0.0, 1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="gamma"):
        _fit.fit("linear", [0.0, 1.0, 2.0], [1.0, 2.0, 3.5]).gamma()


# ----------------------------------------------------------------- tables --

STAMP = {"machine": "host A", "code": "abc1234"}


def test_table_measures_afresh_by_default(tmp_path):
    path = tmp_path / "t.csv"
    t = _table.ResultTable(path, ["k", "r", "v"], ["k", "r"], stamp=STAMP)
    t.add(k="a", r=0, v=1.5)
    again = _table.ResultTable(path, ["k", "r", "v"], ["k", "r"], stamp=STAMP)
    assert again.rows == [] and again.resume_note() is None
    assert _table.read_rows(path) == []


def test_resume_keeps_only_rows_of_the_same_machine_and_code(tmp_path):
    path = tmp_path / "t.csv"
    t = _table.ResultTable(path, ["k", "r", "v"], ["k", "r"], stamp=STAMP)
    t.add(k="a", r=0, v=1.5)
    t.add(k="a", r=1, v=2.5)
    other = _table.ResultTable(tmp_path / "o.csv", ["k", "r", "v"], ["k", "r"],
                               stamp={"machine": "host A", "code": "def5678"})
    other.add(k="a", r=2, v=9.0)
    with open(path, "a") as fh, open(tmp_path / "o.csv") as src:
        fh.write(src.read().splitlines()[1] + "\n")        # a row of another code version
    kept = _table.ResultTable(path, ["k", "r", "v"], ["k", "r"], stamp=STAMP, resume=True)
    assert kept.kept == [("a", "0"), ("a", "1")] and kept.get(k="a", r=2) is None
    note = kept.resume_note()
    assert "kept 2 rows" in note and "(k=a, r=1)" in note and "dropped 1 rows" in note
    assert _table.num(kept.get(k="a", r=1), "v") == 2.5
    moved = _table.ResultTable(path, ["k", "r", "v"], ["k", "r"],
                               stamp={"machine": "host B", "code": "abc1234"}, resume=True)
    assert moved.rows == [] and "dropped 2 rows" in moved.resume_note()


def test_rows_record_their_stamp(tmp_path):
    path = tmp_path / "t.csv"
    _table.write_rows(path, ["q", "v"], [dict(q="x", v=1.0)], stamp=STAMP)
    (row,) = _table.read_rows(path)
    assert row == {"machine": "host A", "code": "abc1234", "q": "x", "v": "1.000000e+00"}


# ------------------------------------------------------------- provenance --

def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


def test_code_version_names_the_commit_and_marks_changed_sources(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "liedyn").mkdir(parents=True)
    (repo / "liedyn" / "a.py").write_text("x = 1\n")
    (repo / "notes.txt").write_text("outside the sources\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    monkeypatch.setattr(_provenance, "ROOT", repo)
    clean = _provenance.code_version()
    assert len(clean) >= 7 and all(c in "0123456789abcdef" for c in clean)
    (repo / "notes.txt").write_text("changed, but not a source\n")
    assert _provenance.code_version() == clean
    (repo / "liedyn" / "a.py").write_text("x = 2\n")
    dirty = _provenance.code_version()
    assert dirty.startswith(clean + "+dirty.")
    (repo / "liedyn" / "a.py").write_text("x = 3\n")
    assert _provenance.code_version() != dirty          # another dirty state, another version
    monkeypatch.setattr(_provenance, "ROOT", tmp_path / "not_a_repo")
    (tmp_path / "not_a_repo").mkdir()
    assert _provenance.code_version().startswith("unversioned.")


# ----------------------------------------------------------------- timing --

def test_time_calls_counts_and_interleaves():
    log = []
    out = _timing.time_calls({"a": lambda: log.append("a"), "b": lambda: log.append("b")}, 40,
                             warmup=2, rounds=4)
    assert out["a"]["calls"] == 40 and out["b"]["calls"] == 40
    assert out["a"]["round_median_min"] <= out["a"]["mean"] * 10
    timed = log[-80:]
    assert timed[:10] == ["a"] * 10 and timed[10:20] == ["b"] * 10   # round 1: a, then b


# ---------------------------------------------------------- import hygiene --

def test_helpers_and_the_modules_tests_import_load_without_plotting():
    code = ("import sys\n"
            "import experiments._fit, experiments._table, experiments._provenance\n"
            "import experiments._timing, experiments._readme, experiments._assumptions\n"
            "import experiments._targets\n"
            "import experiments.reproduce, experiments.aerial_manipulator\n"
            "import experiments.roundtrip_growth\n"
            "bad = sorted(m for m in ('matplotlib', 'tqdm') if m in sys.modules)\n"
            "print(','.join(bad))\n")
    out = run_python(code)
    assert out.strip() == "", f"imported: {out.strip()}"
