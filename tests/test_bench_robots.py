"""experiments/bench_robots.py runs end to end on one robot and writes its
table and figure where it is told to."""

import csv

from experiments import bench_robots


def test_bench_robots_writes_table_and_figure(tmp_path):
    bench_robots.main(["--robots", "panda", "--calls", "3", "--out", str(tmp_path),
                       "--no-progress"])
    with open(tmp_path / "bench_robots.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {(r["algo"], r["r"]) for r in rows} == {(a, str(r)) for a in ("inverse", "forward")
                                                  for r in (0, 1, 2, 5)}
    for r in rows:
        assert float(r["liedyn_round_median_min_s"]) > 0.0 and r["robot"] == "panda"
        if r["r"] in ("0", "1"):
            assert float(r["pinocchio_round_median_min_s"]) > 0.0
            assert float(r["max_rel_err_vs_pinocchio"]) <= 1e-9
    assert (tmp_path / "bench_robots.png").stat().st_size > 10_000
