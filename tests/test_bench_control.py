"""experiments/bench_control.py compares a controller step with its two
single calls sweep by sweep: the overhead and the ratio are medians of the
per-sweep values, and every row of its table carries the machine's load."""

import numpy as np
import pytest

from experiments import _timing
from experiments import bench_control as BCtl


def _timing_of(per_sweep):
    """A time_calls timing with one call per sweep, of the given seconds."""
    x = np.asarray(per_sweep, float)
    return {"samples": x, "sweeps": np.arange(x.size), "median": float(np.median(x)),
            "mean": float(x.mean()), "calls": x.size}


def test_overhead_and_ratio_are_medians_of_per_sweep_values():
    """Step − forward − inverse per sweep: 1, 1, 1, 1, 21 µs (sweep 4: a
    burst of other load on the step): median 1 µs and quartiles 1 µs, where
    the difference of the three medians gives −1 µs."""
    us = 1e-6
    fd = _timing_of(np.array([1, 1, 5, 5, 3]) * us)
    idn = _timing_of(np.array([1, 5, 1, 5, 5]) * us)
    step = _timing_of(np.array([3, 7, 7, 11, 29]) * us)
    overhead, ratio = BCtl.step_stats(step, fd, idn)
    assert overhead["median"] == pytest.approx(us) and overhead["pairs"] == 5
    assert overhead["q1"] == pytest.approx(us) and overhead["q3"] == pytest.approx(us)
    assert step["median"] - fd["median"] - idn["median"] == pytest.approx(-us)
    assert ratio["median"] == pytest.approx(7 / 6)     # per sweep 3/2, 7/6, 7/6, 11/10, 29/8
    assert ratio["q1"] == pytest.approx(7 / 6) and ratio["q3"] == pytest.approx(1.5)
    load = dict(load1_before=0.5, load1_after=0.7, cores=2)
    res = {"elastic step": step, "forward order 1": fd, "inverse order 2": idn}
    rows = BCtl.table_rows(res, load)
    assert [r["callable"] for r in rows] == list(res)
    assert all(set(BCtl.FIELDS) >= set(r) and r.items() >= load.items() for r in rows)
    assert rows[0]["overhead_us"] == pytest.approx(1.0) and rows[0]["ratio"] == ratio["median"]
    assert "ratio" not in rows[1]
    assert _timing.rows_unreliable(rows, ["ratio"]) == []
    loaded = [dict(r, load1_after=5.0) for r in rows]
    assert "exceeds the 2 cores" in _timing.rows_unreliable(loaded, ["ratio"])[0]
