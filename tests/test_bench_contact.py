"""experiments/bench_contact.py runs end to end in its smallest mode and writes
its table (columns, rows, targets; not its timings), Markdown page and figure
where it is told to, keeps an earlier run's rows only with --resume and says
so, and refuses to compare with Pinocchio when the two libraries are not
solving the same problem."""

import csv

import numpy as np
import pytest

import liedyn as ld
from experiments import _targets, _timing
from experiments import bench_contact as BC
from models.example_robots import load_robot, pinocchio_from_urdf, robot_path

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


def _read(path):
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        return reader.fieldnames, list(reader)


def test_bench_contact_writes_table_page_and_figure(tmp_path, capsys):
    BC.main(["--calls", "3", "--out", str(tmp_path), "--no-progress"])
    fields, rows = _read(tmp_path / "bench_contact.csv")
    assert fields == ["machine", "code"] + BC.FIELDS
    assert {(r["section"], r["robot"]) for r in rows} == (
        {(s, n) for s in ("robots", "pinocchio") for n in BC.ROBOTS} | {("rows", BC.TREE_NAME)})
    robots = [r for r in rows if r["section"] == "robots"]
    assert sorted((r["robot"], int(r["r"]), r["workspace"]) for r in robots) == sorted(
        (n, k, w) for n in BC.ROBOTS for k in BC.ORDERS for w in ("yes", "no"))
    for r in robots:
        assert (r["m"], r["rank"], r["contacts"]) == ("12", "12", "4" if r["robot"] == "solo12"
                                                      else "2")
        assert float(r["liedyn_round_median_min_s"]) > 0 and float(r["baseline_mean_s"]) > 0
        assert r["one_off_s"] != "" and r["ratio"] != ""
        has_target = r["r"] != "0"               # (t_c(0) − W₀)/t_u(0) = 1 by definition
        assert (r["met"] in ("yes", "no")) == has_target
        assert (r["increment_s"] != "") == has_target and (r["target"] != "") == has_target
    pin = [r for r in rows if r["section"] == "pinocchio"]
    assert sorted((r["robot"], r["r"], r["workspace"]) for r in pin) == sorted(
        (n, k, w) for n in BC.ROBOTS for k in ("0", "1") for w in ("yes", "no"))
    for r in pin:
        assert float(r["max_rel_err_vs_pinocchio"]) <= (BC.AGREE0 if r["r"] == "0" else BC.AGREE1)
        assert (r["met"] in ("yes", "no")) == (r["workspace"] == "yes")
        assert float(r["target"] or "nan") == (BC.LIMIT_PIN0 if r["r"] == "0" else BC.LIMIT_PIN1) \
            or r["workspace"] == "no"
    tree = [r for r in rows if r["section"] == "rows"]
    assert sorted((int(r["contacts"]), int(r["r"])) for r in tree) == sorted(
        (k, o) for k in BC.TREE_CONTACTS for o in BC.ORDERS)
    assert all(r["m"] == r["rank"] == str(3 * int(r["contacts"])) for r in tree)
    targets = _targets.targets_in(rows)
    assert len(targets) == len(BC.ROBOTS) * (2 * (len(BC.ORDERS) - 1) + 2)
    assert "solo12, (constrained - one-off) / unconstrained, with workspace, r = 3 (limit 2)" in \
        [t for t, _ in targets]
    page = (tmp_path / "bench_contact.md").read_text()
    assert page.startswith("# Constrained forward dynamics: speed") and "constraintDynamics" in page
    assert (tmp_path / "bench_contact.png").stat().st_size > 10_000
    capsys.readouterr()
    BC.main(["--calls", "3", "--out", str(tmp_path), "--no-progress", "--resume"])
    out = capsys.readouterr().out
    assert "--resume: kept" in out and "measured 0 groups in this run, kept 3" in out
    assert _read(tmp_path / "bench_contact.csv")[1] == rows


def test_a_different_problem_in_pinocchio_is_refused():
    """Pinocchio given one foot fewer than liedyn: the order-0 check fails
    loudly; given the same four feet, it passes."""
    from liedyn.interop.pinocchio import pair
    model = load_robot("solo12")
    cs = ld.ConstraintSet(model, [ld.Contact3D(f) for f in FEET])
    state = BC.consistent_state(model, cs, np.random.default_rng(5), 1)
    br = pair(model, pinocchio_from_urdf(robot_path("solo12"), True))
    _, err = BC.pinocchio_calls(model, br, cs, ld.Contact3D, FEET[:3], state)
    with pytest.raises(RuntimeError, match="not the same computation"):
        BC.require_agreement("solo12", err)
    _, err = BC.pinocchio_calls(model, br, cs, ld.Contact3D, FEET, state)
    BC.require_agreement("solo12", err)
    assert err[0] <= BC.AGREE0 and err[1] <= BC.AGREE1


def _timing_of(per_sweep):
    """A time_calls timing with one call per sweep, of the given seconds."""
    x = np.asarray(per_sweep, float)
    return {"samples": x, "sweeps": np.arange(x.size), "mean": x.mean(),
            "round_median_min": x.min(), "calls": x.size}


def test_split_ratios_are_medians_of_per_sweep_ratios():
    """Fake timings of one run: the ratio, the one-off work and the target
    value are medians over the sweeps of the per-sweep quantities, not
    ratios of means; a burst in one sweep moves none of them."""
    c = _timing_of([3.0, 3.0, 30.0, 3.0, 3.0])     # sweep 2: a burst of other load on c
    u = _timing_of([1.0, 1.5, 1.0, 1.0, 1.0])
    c0 = _timing_of([2.0, 2.0, 2.0, 2.0, 2.0])
    u0 = _timing_of([1.0, 1.0, 1.0, 1.0, 1.0])
    ratio, one_off, target = BC.split_stats(c, u, c0, u0)
    assert ratio["median"] == 3.0 and ratio["q1"] == 3.0 and ratio["q3"] == 3.0
    assert one_off["median"] == 1.0
    assert target["median"] == 2.0                   # (3 − 1) / 1
    assert np.mean(c["samples"]) / np.mean(u["samples"]) > 7.0
    times = {(k, r, "yes"): t for k, r, t in (("cfd", 0, c0), ("fd", 0, u0),
                                              ("cfd", 1, c), ("fd", 1, u))}
    rows = BC.split_rows(times, (0, 1), "yes")
    assert rows[0]["ratio"] == 2.0 and "met" not in rows[0]
    assert rows[1]["ratio"] == 3.0 and rows[1]["target_value"] == 2.0 and rows[1]["met"] == "yes"
    assert rows[1]["increment_s"] == 1.0 and rows[1]["baseline_increment_s"] == 0.0
    assert set(_timing.ratio_fields("ratio", "target_value")) <= set(rows[1])
