"""The benchmark machinery: growth-law fits recover known laws, the CSV table
resumes, the timer makes the calls it reports."""

import numpy as np

from experiments import _bench as B


def test_fits_recover_exact_laws():
    x = np.arange(1.0, 12.0)
    a, alpha = B.fit_power(x, 3.0 * x ** 1.7)
    assert abs(alpha - 1.7) < 1e-12 and abs(a - 3.0) < 1e-12
    a, gamma = B.fit_exponential(x, 1e-4 * 2.9 ** x)
    assert abs(gamma - 2.9) < 1e-12 and abs(a - 1e-4) < 1e-15
    N = 1.0 + 5.0 * np.array(B.N_BOD_QUICK)
    c0, a, alpha = B.fit_offset_power(N, 2e-5 + 3e-7 * N)
    # nonlinear least squares to its default tolerance (~1e-8 relative residual)
    assert abs(alpha - 1.0) < 1e-4 and abs(c0 - 2e-5) < 1e-8


def test_fit_offset_power_sees_the_exponent_a_plain_fit_misses():
    r = np.arange(11.0)
    t = 3e-5 + 2e-6 * r ** 2
    assert B.fit_power(r + 1.0, t)[1] < 1.5                  # the constant hides r²
    assert abs(B.fit_offset_power(r, t)[2] - 2.0) < 1e-4


def test_result_table_resumes_and_replaces(tmp_path):
    path = tmp_path / "t.csv"
    t = B.ResultTable(path, ["k", "r", "v"], ["k", "r"])
    t.add(k="a", r=0, v=1.5)
    t.add(k="a", r=1, v=2.5)
    again = B.ResultTable(path, ["k", "r", "v"], ["k", "r"])
    assert B.num(again.get(k="a", r=1), "v") == 2.5
    assert again.get(k="a", r=2) is None
    again.remove(k="a", r=0)
    assert [x["r"] for x in B.ResultTable(path, ["k", "r", "v"], ["k", "r"]).rows] == ["1"]
    assert B.ResultTable(path, ["k", "r", "v"], ["k", "r"], fresh=True).rows == []


def test_result_table_discards_rows_of_another_machine(tmp_path):
    path = tmp_path / "t.csv"
    B.ResultTable(path, ["k", "v"], ["k"], stamp="other host").add(k="a", v=1.0)
    assert len(B.ResultTable(path, ["k", "v"], ["k"], stamp="other host").rows) == 1
    here = B.ResultTable(path, ["k", "v"], ["k"], stamp=B.machine())
    assert here.rows == [] and here.get(k="a") is None


def test_time_calls_counts_and_interleaves():
    log = []
    out = B.time_calls({"a": lambda: log.append("a"), "b": lambda: log.append("b")}, 40,
                       warmup=2, rounds=4)
    assert out["a"]["calls"] == 40 and out["b"]["calls"] == 40
    timed = log[-80:]
    assert timed[:10] == ["a"] * 10 and timed[10:20] == ["b"] * 10   # round 1: a, then b
