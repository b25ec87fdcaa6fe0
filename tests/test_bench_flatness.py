"""experiments/bench_flatness.py times the flat map and the flat tracking
step against the calls they are made of and writes one row per callable,
a ratio on each composite row, and the batch against its loop."""

import csv

from experiments import bench_flatness as BF


def test_a_short_run_writes_every_row_with_its_ratio(tmp_path, monkeypatch):
    monkeypatch.setattr(BF, "BATCH_SAMPLES", 10)
    monkeypatch.setattr(BF, "BATCH_ROUNDS", 2)
    monkeypatch.setattr(BF, "WARMUP", 2)
    BF.main(["--calls", "20", "--out", str(tmp_path)])
    with open(tmp_path / "bench_flatness.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(line for line in fh if not line.startswith("#"))]
    names = [r["callable"] for r in rows]
    for name, parts in BF.PARTS.items():
        assert name in names and set(parts) <= set(names)
        assert float(rows[names.index(name)]["ratio"]) > 0.0
    assert names[-1] == "batch 10 / loop" and float(rows[-1]["ratio"]) > 0.0
