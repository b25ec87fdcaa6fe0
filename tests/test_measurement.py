"""How the main job's speed figures are measured and reported: ratios are
medians of paired samples (checked against a hand-computed example), the
loaded-machine rule marks numbers as unreliable instead of stating them,
the default output folder is ignored by git and a run into it leaves the
checkout's status as it was, and a run into the committed folder reports
which committed numbers changed."""

import subprocess
import sys
import types

import numpy as np
import pytest

from experiments import _changes, _readme, _timing, reproduce
from tests.helpers import ROOT

MACHINE = "host, cpu, 2 cores"


# ---------------------------------------------------------- paired ratios --

def test_median_of_paired_ratios_by_hand():
    a = [2.0, 3.0, 10.0, 4.0, 6.0]           # ratios a / b: 2, 1.5, 5, 2, 3
    b = [1.0, 2.0, 2.0, 2.0, 2.0]
    s = _timing.paired_stats(a, b)
    assert s["median"] == 2.0 and s["pairs"] == 5
    assert s["q1"] == 2.0 and s["q3"] == 3.0          # sorted 1.5 2 2 3 5
    assert s["spread"] == pytest.approx(0.5)
    assert np.mean(a) / np.mean(b) == pytest.approx(25 / 9)   # not what a ratio of means gives
    d = _timing.paired_stats(a, b, np.subtract)        # differences 1 1 8 2 4
    assert d["median"] == 2.0


def test_paired_matches_the_blocks_of_one_sweep():
    """A pair is the median call of each callable's block in one sweep;
    sweeps only one of them ran in are left out."""
    ta = {"samples": np.array([1.0, 9.0, 1.0, 4.0, 4.0, 8.0]),
          "sweeps": np.array([0, 0, 0, 1, 1, 2])}
    tb = {"samples": np.array([0.5, 2.0, 2.0, 7.0]), "sweeps": np.array([0, 1, 1, 3])}
    s = _timing.paired(ta, tb)                         # sweep 0: 1 / 0.5, sweep 1: 4 / 2
    assert s["pairs"] == 2 and s["median"] == 2.0


def test_time_calls_pairs_interleaved_blocks():
    log = []
    t = _timing.time_calls({"a": lambda: log.append("a"), "b": lambda: log.append("b")},
                           calls=40, warmup=1, rounds=2)
    timed = log[-80:]
    assert timed[:_timing.PAIR_BLOCK] == ["a"] * _timing.PAIR_BLOCK
    assert timed[_timing.PAIR_BLOCK:2 * _timing.PAIR_BLOCK] == ["b"] * _timing.PAIR_BLOCK
    assert _timing.paired(t["a"], t["b"])["pairs"] == 40 // _timing.PAIR_BLOCK


@pytest.mark.parametrize("args, name", [(([], []), "a"), (([1.0, 2.0], [1.0]), "b"),
                                        (([1.0], [0.0]), "b")])
def test_paired_stats_rejects_bad_samples(args, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        _timing.paired_stats(*args)


def test_paired_rejects_timings_not_timed_together():
    with pytest.raises(ValueError, match="timing_a"):
        _timing.paired({"mean": 1.0}, {"samples": np.ones(1), "sweeps": np.zeros(1, int)})
    t = {"samples": np.ones(2), "sweeps": np.array([0, 1])}
    with pytest.raises(ValueError, match="timing_b"):
        _timing.paired(t, {"samples": np.ones(1), "sweeps": np.array([5])})


def test_sweep_medians_align_several_timings():
    """Three timings paired sweep by sweep: only the sweeps all ran in."""
    ta = {"samples": np.array([1.0, 3.0, 4.0, 8.0]), "sweeps": np.array([0, 0, 1, 2])}
    tb = {"samples": np.array([1.0, 2.0, 5.0]), "sweeps": np.array([0, 1, 2])}
    tc = {"samples": np.array([7.0, 9.0]), "sweeps": np.array([0, 2])}
    a, b, c = _timing.sweep_medians(ta, tb, tc)
    assert a.tolist() == [2.0, 8.0] and b.tolist() == [1.0, 5.0] and c.tolist() == [7.0, 9.0]
    with pytest.raises(ValueError, match=r"timings\[2\]"):
        _timing.sweep_medians(ta, tb, {"samples": np.ones(1), "sweeps": np.array([9])})


def test_ratio_columns_and_rows_judged_by_the_load_rule():
    s = _timing.paired_stats([2.0, 3.0, 10.0, 4.0, 6.0], [1.0, 2.0, 2.0, 2.0, 2.0])
    cols = _timing.ratio_columns("x_over_y", s)
    assert cols == {"x_over_y": 2.0, "x_over_y_q1": 2.0, "x_over_y_q3": 3.0}
    assert _timing.ratio_fields("x_over_y") == list(cols)
    load = dict(load1_before=0.2, load1_after="0.4", cores="2")
    tight = dict(load, x_over_y=2.0, x_over_y_q1=1.9, x_over_y_q3=2.1)
    assert _timing.rows_unreliable([tight, dict(load, x_over_y="")], ["x_over_y"]) == []
    assert _timing.reliability_note([]) == ""
    wide = _timing.rows_unreliable([tight, dict(tight, x_over_y_q3=3.0)], ["x_over_y"])
    assert len(wide) == 1 and "1 of 2" in wide[0]
    loaded = _timing.rows_unreliable([tight, dict(tight, load1_after=2.5)], ["x_over_y"])
    assert "2.50" in loaded[0] and "unreliable" in _timing.reliability_note(loaded)
    assert "not recorded" in _timing.rows_unreliable([dict(tight, cores="")], ["x_over_y"])[0]
    assert "not medians" in _timing.rows_unreliable([dict(tight, x_over_y_q1="")],
                                                    ["x_over_y"])[0]


# ------------------------------------------------------------ load rule --

def test_the_load_rule():
    assert _timing.unreliable(0.5, 1.9, 2, {"x": 0.1}) == []
    assert "2.50" in _timing.unreliable(2.5, 0.3, 2)[0]
    assert "after" in _timing.unreliable(0.3, 2.1, 2)[0]
    assert "not recorded" in _timing.unreliable(float("nan"), 0.1, 2)[0]
    wide = _timing.unreliable(0.1, 0.1, 2, {"x": 0.1, "y": _timing.SPREAD_LIMIT + 0.01})
    assert len(wide) == 1 and "y" in wide[0]
    with pytest.raises(ValueError, match="cores"):
        _timing.unreliable(0.1, 0.1, 0)
    with pytest.raises(ValueError, match="spreads"):
        _timing.unreliable(0.1, 0.1, 2, {"x": -1.0})
    load = _timing.machine_load()
    assert load["cores"] >= 1 and set(load) == {"load1", "load5", "load15", "cores"}


def _speed_rows(before, after, cores=2, spread=0.1):
    """bench_speed.csv rows: the load, the N = 7 times and every stated
    ratio, 3.0 with the given spread."""
    row = dict(machine=MACHINE, code="abc", q1="", q3="", pairs="")
    rows = [dict(row, section="machine load", quantity=q, value=str(x), unit="load")
            for q, x in (("1-min load average before", before),
                         ("1-min load average after", after), ("cores", cores))]
    rows += [dict(row, section="small", quantity=f"N=7 {k}", value="5.0", unit="us")
             for k in ("ID r=0", "ID r=5", "FD r=0", "FD r=5")]
    rows += [dict(row, section=sec, quantity=q, value="3.0", unit="ratio",
                  q1=str(3.0 - 1.5 * spread), q3=str(3.0 + 1.5 * spread), pairs="30")
             for sec, q in _readme.STATED]
    return rows


@pytest.mark.parametrize("before, after, spread, quoted", [
    (0.4, 0.8, 0.1, True), (3.1, 0.8, 0.1, False), (0.4, 2.6, 0.1, False),
    (0.4, 0.8, 0.5, False)])
def test_the_speed_paragraph_states_ratios_only_from_a_quiet_run(before, after, spread, quoted):
    text = _readme.speed_paragraph(_speed_rows(before, after, spread=spread))
    assert f"{before:.2f} before and {after:.2f} after the run, on 2 cores" in text
    if quoted:
        assert "3.00× (IQR" in text and "unreliable" not in text
    else:
        assert "unreliable and are not to be quoted" in text
        assert "×" not in text and "3.00" not in text
        assert ("loaded machine" in text) == (max(before, after) > 2)


def test_csvs_without_load_or_pairs_are_not_quoted():
    rows = [r for r in _speed_rows(0.1, 0.1) if r["section"] != "machine load"]
    assert "load average before and after the run was not recorded" in \
        _readme.speed_paragraph(rows)
    rows = [dict(r, q1="", q3="") for r in _speed_rows(0.1, 0.1)]
    assert "not medians of paired samples" in _readme.speed_paragraph(rows)


def test_the_study_load_sentence_marks_a_loaded_machine():
    quiet = reproduce.load_sentence(dict(load1_before=0.2, load1_after=0.4, cores=2))
    loaded = reproduce.load_sentence(dict(load1_before=2.9, load1_after=3.4, cores=2))
    assert quiet == "1-minute load average 0.20 before and 0.40 after, 2 cores."
    assert "unreliable" not in quiet and "loaded machine" in loaded and "2.90" in loaded
    assert "not recorded" in reproduce.load_sentence({})


# ------------------------------------------------------ where it writes --

def _git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def test_the_default_output_folder_is_ignored_by_git():
    assert reproduce.OUT_DIR == ROOT / "results"
    assert _git("check-ignore", "-q", str(reproduce.OUT_DIR / "bench_speed.csv")).returncode == 0
    assert _git("check-ignore", "-q", str(reproduce.PAPER_FIGURES / "x.csv")).returncode == 1
    assert _changes.ignored(reproduce.OUT_DIR) and not _changes.ignored(reproduce.PAPER_FIGURES)


def test_a_default_run_changes_no_tracked_file(monkeypatch, capsys):
    """A quick run of a cheap study (the drawing of Fig. 2) into the default
    folder: ``git status`` is what it was, and the run says where it wrote."""
    status = _git("status", "--porcelain", "--untracked-files=all").stdout
    assert reproduce.main(["--only", "aerial_manipulator_drawing"]) == 0
    assert _git("status", "--porcelain", "--untracked-files=all").stdout == status
    out = capsys.readouterr().out
    assert out.startswith(f"writing to {reproduce.OUT_DIR} (ignored by git)")
    assert out.rstrip().endswith(f"{reproduce.OUT_DIR} (ignored by git)")
    log = reproduce.load_log(reproduce.OUT_DIR)["aerial_manipulator_drawing"]
    assert set(log["load"]) == {"load1_before", "load1_after", "cores"}


def test_changed_committed_numbers_are_reported(tmp_path, capsys):
    old = [dict(machine="a", code="1", section="small", quantity="ID", value="2.0", unit="us"),
           dict(machine="a", code="1", section="small", quantity="FD", value="4.0", unit="us")]
    new = [dict(old[0], machine="b", code="2", value="3.0"), old[1]]
    found = _changes.compare_rows(old, new, "x.csv")
    assert found == [dict(file="x.csv", row="section=small, quantity=ID, unit=us",
                          column="value", committed=2.0, new=3.0, relative_change=0.5)]
    _changes.print_changes(found)
    assert "+50.0%" in capsys.readouterr().out
    _changes.write_changes(found, tmp_path / "c.csv")
    assert "x.csv" in (tmp_path / "c.csv").read_text()
    committed = _changes.committed_text(ROOT / "paper_figures" / "bench_speed.csv")
    assert committed is not None and committed.startswith("machine,code,section")
    assert _changes.committed_text(tmp_path / "c.csv") is None


def test_update_paper_figures_reports_against_the_committed_csv(monkeypatch, tmp_path, capsys):
    """``--update-paper-figures`` writes into ``paper_figures/`` (here a
    stand-in whose committed version is ``HEAD:paper_figures``) and reports
    the numbers that differ from the committed ones."""
    folder = tmp_path / "paper_figures"
    folder.mkdir()
    committed = _changes.committed_text(ROOT / "paper_figures" / "bench_speed.csv")
    lines = committed.splitlines()

    def main(argv):
        assert argv[:2] == ["--out", str(folder)]
        (folder / "bench_speed.csv").write_text("\n".join(lines[:2]) + "\n")

    monkeypatch.setitem(sys.modules, "experiments.fake_speed",
                        types.SimpleNamespace(main=main, __spec__=object()))
    monkeypatch.setattr(reproduce, "STUDIES", (("fake_speed", "a speed study", False),))
    monkeypatch.setattr(reproduce, "PAPER_FIGURES", folder)
    monkeypatch.setattr(_changes, "committed_text", lambda path: committed
                        if path.name == "bench_speed.csv" else None)
    assert reproduce.main(["--update-paper-figures"]) == 0
    out = capsys.readouterr().out
    assert "committed numbers changed in 1 files (bench_speed.csv)" in out
    assert (folder / reproduce.CHANGES).exists()
