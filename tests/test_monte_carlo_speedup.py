"""experiments/monte_carlo.py: the speed-ups are medians of the ratios of
alternated runs, not ratios of each setting's least time, and its summary
writes them with their quartiles and the machine's load."""

import csv

import numpy as np
import pytest

from experiments import monte_carlo as MC


def test_speedups_are_medians_of_per_alternation_ratios(tmp_path):
    """Alternation 1 had the quietest 2-process run, alternation 0 the
    quietest 1-process run: the least times give T1/T2 = 4/2.5 = 1.6, the
    per-pair ratios 4/3, 2, 2 give 2."""
    T1, T2, Tthr = [4.0, 5.0, 6.0], [3.0, 2.5, 3.0], [4.0, 5.0, 3.0]
    cpu1, cpu2 = [1.0, 1.0, 0.5], [1.0, 1.0, 1.0]
    samples = [dict(zip(MC.SPEEDUP_KEYS, v)) for v in zip(T1, cpu1, T2, cpu2, Tthr, [0.5] * 3)]
    s = MC.speedup_stats(samples)
    assert min(T1) / min(T2) == pytest.approx(1.6)
    assert s["s12"]["median"] == pytest.approx(2.0) and s["s12"]["pairs"] == 3
    assert s["s12"]["q1"] == pytest.approx(5 / 3) and s["s12"]["q3"] == pytest.approx(2.0)
    assert s["s_threads"]["median"] == pytest.approx(1.0)    # ratios 1, 1, 2
    assert s["eff_cpu"]["median"] == pytest.approx(2 / 3)    # 2/3, 1, 1/2
    assert s["ratios"] == pytest.approx([4 / 3, 2.0, 2.0])
    assert (s["T1"], s["T2"], s["Tthreads"], s["cpu1"]) == (5.0, 3.0, 4.0, 1.0)
    load = dict(load1_before=0.4, load1_after=0.6, cores=2)
    rows = MC.paired_rows(s, load, {"1 -> 2 processes": ("s12", 1.0, "x"),
                                    "efficiency": ("s12", 0.5, "1")})
    MC.write_summary(tmp_path / "s.csv", rows + [dict(section="study", quantity="runs",
                                                      value=10, unit="runs")])
    with open(tmp_path / "s.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        got = list(reader)
    assert reader.fieldnames == MC.SUMMARY_FIELDS
    assert [float(got[0][k]) for k in ("value", "q1", "q3", "load1_after")] == pytest.approx(
        [2.0, 5 / 3, 2.0, 0.6], rel=1e-5)
    assert got[1]["value"] == "1" and got[1]["q1"] == "0.833333" and got[1]["cores"] == "2"
    assert got[2]["q1"] == got[2]["load1_before"] == "" and got[2]["value"] == "10"
    assert np.isfinite(s["s12"]["spread"])
