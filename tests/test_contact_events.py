"""experiments/contact_events.py in quick mode, run once in a subprocess:
it writes its table, bounce table and figure where it is told to, and each
part meets its targets (the bouncing sphere against tₙ and e²ⁿ h₀, the block
on the incline against its sticking, sliding and slip-onset closed forms,
Solo-12's landing against the free fall and the dense sticking impact, and
its rest). The closed forms themselves are checked here against the
recurrences they solve."""

import math

import numpy as np
import pytest

from experiments import _targets
from experiments import contact_events as CE
from experiments._table import read_rows
from tests.helpers import run_python


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("contact_events")
    text = run_python(f"""
        from experiments import contact_events
        contact_events.main(["--out", {str(out)!r}, "--no-progress"])
        """, timeout=600)
    return out, text, read_rows(out / "contact_events.csv")


def _targets_of(rows, prefix):
    mine = [r for r in rows if r["kind"].startswith(prefix)]
    return _targets.targets_in(mine)


@pytest.mark.slow
def test_writes_tables_and_figure(quick):
    out, text, rows = quick
    assert (out / "contact_events.png").stat().st_size > 10_000
    assert list(rows[0]) == ["machine", "code"] + CE.FIELDS
    assert {r["kind"] for r in rows} == {"sphere", "solo", "runtime", "cost"} | {
        f"block {case}" for case in CE.BLOCK_CASES}
    cost = {r["quantity"]: float(r["value"]) for r in rows if r["kind"] == "cost"}
    assert len(cost) == 3 and all(v > 0.0 for v in cost.values())
    bounces = read_rows(out / "contact_events_bounces.csv")
    _, _, n_rest = CE.bounce_closed_form(CE.DROP, CE.RESTITUTION, 9.81, CE.REST_VELOCITY)
    assert [int(b["n"]) for b in bounces] == list(range(1, n_rest + 1))
    n_targets = sum(r["met"] in ("yes", "no") for r in rows)
    assert f"of {n_targets} targets met" in text
    assert n_targets >= 40


@pytest.mark.slow
@pytest.mark.parametrize("part", ["sphere", "block", "solo"])
def test_part_meets_its_targets(quick, part):
    _, _, rows = quick
    targets = _targets_of(rows, part)
    assert len(targets) >= 8
    missed = [t for t, met in targets if not met]
    assert not missed, missed


@pytest.mark.slow
def test_sphere_sweep_has_one_target_per_tolerance(quick):
    _, _, rows = quick
    sweep = [r for r in rows if r["quantity"].startswith("first touch-down with event_tol")]
    assert [float(r["target"]) for r in sweep] == list(CE.QUICK["tols"])


def test_bounce_closed_form_solves_the_recurrence():
    """tₙ₊₁ = tₙ + 2 vₙ⁺/g with vₙ⁺ = eⁿ √(2 g h₀); hₙ = (vₙ⁺)²/(2g);
    the rest impact is the first whose rebound is below the rest velocity."""
    g, h0, e, v_rest = 9.81, 1.0, 0.8, 1e-3
    t, h, n_rest = CE.bounce_closed_form(h0, e, g, v_rest)
    v = math.sqrt(2 * g * h0)
    tn, ref_t, ref_h = math.sqrt(2 * h0 / g), [], []
    n = 0
    while True:
        n += 1
        ref_t.append(tn)
        v *= e                      # rebound speed after impact n
        if v < v_rest:
            ref_h.append(0.0)
            break
        ref_h.append(v * v / (2 * g))
        tn += 2 * v / g
    assert n_rest == n == len(t) == 38
    np.testing.assert_allclose(t, ref_t, rtol=1e-14, atol=0)
    np.testing.assert_allclose(h, ref_h, rtol=1e-12, atol=0)


def test_block_closed_forms_obey_newton():
    """s'' of the closed forms, by central differences (exact for their
    polynomial pieces), equals the force along the slope over m:
    g (sin θ − μ cos θ) while sliding, k (t − t*)/m after the push's slip,
    0 while sticking; (d) starts at v₀ and stops where s' reaches 0."""
    g, m, th = 9.81, CE.BLOCK_MASS, CE.SLOPE
    t = np.linspace(0.0, 1.5, 301)
    dt = t[1] - t[0]

    def sliding(mu):
        return g * (math.sin(th) - mu * math.cos(th))

    cases = {"(a) sticks": (None, lambda t: 0.0 * t),
             "(b) slides": (0.0, lambda t: sliding(CE.MU_SLIDE) + 0.0 * t),
             "(c) pushed": (m * g * (CE.MU_STICK * math.cos(th) - math.sin(th)) / CE.PUSH_RATE,
                            None),
             "(d) launched": (-CE.LAUNCH / sliding(CE.MU_STICK), None)}
    ts_c, ts_d = cases["(c) pushed"][0], cases["(d) launched"][0]
    cases["(c) pushed"] = (ts_c, lambda t: np.where(t > ts_c, CE.PUSH_RATE * (t - ts_c) / m, 0.0))
    cases["(d) launched"] = (ts_d, lambda t: np.where(t < ts_d, sliding(CE.MU_STICK), 0.0))
    assert set(cases) == set(CE.BLOCK_CASES)
    for case, (ts, acc) in cases.items():
        s, event = CE.block_closed_form(case, t, g)
        assert s[0] == 0.0
        if ts is None:
            assert event is None
            ts = -1.0
        else:
            assert event[0] == ("stick" if case == "(d) launched" else "slip")
            assert math.isclose(event[1], ts, rel_tol=1e-14, abs_tol=0.0), case
        fd = (s[2:] - 2 * s[1:-1] + s[:-2]) / dt ** 2
        inner = np.abs(t[1:-1] - ts) > 2 * dt
        np.testing.assert_allclose(fd[inner], acc(t[1:-1])[inner], rtol=0, atol=1e-9,
                                   err_msg=case)
    s, _ = CE.block_closed_form("(d) launched", np.array([1e-6, ts_d, 2 * ts_d]), g)
    assert math.isclose((s[0] / 1e-6), CE.LAUNCH, rel_tol=1e-5)           # s'(0) = v₀
    assert s[2] == s[1] and math.isclose(s[1], CE.LAUNCH ** 2 / (2 * -sliding(CE.MU_STICK)),
                                         rel_tol=1e-14)
    assert CE.MU_SLIDE < math.tan(th) < CE.MU_STICK


def test_the_cost_ratio_is_the_median_of_paired_runs():
    """Alternate runs of constraints= and contacts=: the ratio is the median
    of the per-pair ratios (2, 2, 4 → 2), not the ratio of the medians."""
    c = CE.cost_summary([1.0, 2.0, 1.0], [2.0, 4.0, 4.0])
    assert c["ratio"] == 2.0 and c["held"] == 1.0 and c["events"] == 4.0
    assert c["ratio_stats"]["q1"] == 2.0 and c["ratio_stats"]["q3"] == 3.0
