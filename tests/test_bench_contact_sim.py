"""experiments/bench_contact_sim.py end to end with tiny sizes (no speed is
asserted: the benchmark measures it): it writes its CSV and Markdown table
where it is told to, with a target row per issue target and robot, medians
inside their quartiles and the machine's load on every row; the cost of an
event is the drop's time beyond its steps held, per event, in held steps;
bad arguments are refused with a reason."""

import numpy as np
import pytest

from experiments import _targets
from experiments import bench_contact_sim as BCS
from experiments._table import read_rows
from tests.helpers import run_python


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench_contact_sim")
    text = run_python(f"""
        from experiments import bench_contact_sim
        bench_contact_sim.main(["--out", {str(out)!r}, "--no-progress", "--duration", "0.15",
                                "--pairs", "2"])
        """, timeout=900)
    return out, text, read_rows(out / "bench_contact_sim.csv")


@pytest.mark.slow
def test_writes_the_table_with_a_target_per_robot(tiny):
    out, text, rows = tiny
    assert list(rows[0]) == ["machine", "code"] + BCS.FIELDS
    assert [r["robot"] for r in rows] == [r for r in BCS.ROBOT_ORDER for _ in range(6)]
    targets = _targets.targets_in(rows)
    assert len(targets) == 3 * len(BCS.ROBOT_ORDER)
    assert sorted({float(r["target"]) for r in rows if r["met"]}) == sorted(BCS.TARGETS.values())
    for r in rows:
        assert float(r["q1"]) <= float(r["value"]) <= float(r["q3"]), r["quantity"]
        assert int(r["pairs"]) == 2 and r["load1_before"] and r["load1_after"] and r["cores"]
    md = (out / "bench_contact_sim.md").read_text()
    assert md.count("\n| solo12 |") == 6 and md.count("\n| go2 |") == 6
    assert f"of {len(targets)} targets met" in text


def test_event_cost_is_the_time_beyond_the_steps_held_per_event():
    """Held: 100 steps in 1 s (10 ms a step); the drop: 120 steps in 2.2 s
    with 5 events, so (2.2 − 1.2) / 5 = 0.2 s an event, 20 held steps."""
    def timing(seconds):
        x = np.asarray(seconds, float)
        return {"samples": x, "sweeps": np.arange(x.size)}
    m = dict(timings={"held": timing([1.0, 1.0, 1.0]), "standing": timing([1.1, 1.2, 1.3]),
                      "drop": timing([2.2, 2.2, 2.2])},
             events=5, switches=2, steps_drop=120, integrated_drop=150, steps_held=100)
    s = BCS.statistics(m, 1.0)
    assert s["event"]["median"] == pytest.approx(20.0)
    assert s["switch"]["median"] == pytest.approx(50.0)
    assert s["standing"]["median"] == pytest.approx(1.2)
    assert s["drop"]["median"] == pytest.approx(2.2) and s["rtf"]["median"] == pytest.approx(2.2)


@pytest.mark.parametrize("argv, message", [
    (["--duration", "0.05"], "ends before the dropped feet land"),
    (["--pairs", "0"], "expected a positive int"),
    (["--pairs", "two"], "expected a positive int"),
    (["--duration", "nan"], "expected a positive float"),
])
def test_bad_arguments_are_refused_with_a_reason(argv, message, capsys):
    with pytest.raises(SystemExit):
        BCS.parse(argv)
    assert message in capsys.readouterr().err
