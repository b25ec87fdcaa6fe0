"""experiments/legged_drops.py run once in a subprocess, short (``--duration``
past the landing and its impact): it writes its table and figure where it is
told to, and every target in the table is met (the contact invariants of
SPEC §10.2 at every sample, the energy balance, the first touch-down of
every event tolerance within it; Go2's knee driven into its stop closes on
it, stays there, and its reaction balances the joint's inverse dynamics).
Its arguments are checked; and the
friction of a slide started by several feet at once is checked against the
slip (it must not do positive work), a known failure of the library."""

import numpy as np
import pytest

from experiments import _targets
from experiments import legged_drops as LD
from experiments._table import read_rows
from tests.helpers import run_python

DURATION = 0.2      # s: the landing at 0.143 s, the impact, the feet sticking
KNEE_DURATION = 0.25  # s: the knee closes on its stop at 0.207 s


@pytest.fixture(scope="module")
def short(tmp_path_factory):
    out = tmp_path_factory.mktemp("legged_drops")
    text = run_python(f"""
        from experiments import legged_drops
        legged_drops.main(["--out", {str(out)!r}, "--no-progress", "--duration", "{DURATION}",
                           "--knee-duration", "{KNEE_DURATION}"])
        """, timeout=900)
    return out, text, read_rows(out / "legged_drops.csv")


@pytest.mark.slow
def test_writes_the_table_and_the_figure(short):
    out, text, rows = short
    assert (out / "legged_drops.png").stat().st_size > 10_000
    assert list(rows[0]) == ["machine", "code"] + LD.FIELDS
    assert {r["robot"] for r in rows} == set(LD.ROBOT_ORDER)
    assert {r["part"] for r in rows} == {"run", "energy", "sweep", "knee stop"}
    knee = {r["quantity"].split(":")[0]: r for r in rows if r["part"] == "knee stop"}
    assert 0.2 < float(knee[f"{LD.KNEE[1]} driven to {LD.KNEE_TARGET:g} rad past its stop "
                            f"-0.83776 rad"]["value"]) < KNEE_DURATION
    assert int(knee["samples held at the stop"]["value"]) > 10
    for robot in LD.ROBOT_ORDER:
        sweep = [r for r in rows if r["robot"] == robot and r["part"] == "sweep"
                 and "first touch-down" in r["quantity"]]
        assert [float(r["target"]) for r in sweep] == list(LD.TOLERANCES)
        rtf = [r for r in rows if r["robot"] == robot and r["part"] == "run"
               and r["quantity"].startswith("real-time")]
        assert len(rtf) == 1 and float(rtf[0]["value"]) > 0.0
        assert rtf[0]["load1_before"] and rtf[0]["cores"]
    n = sum(r["met"] in ("yes", "no") for r in rows)
    assert f"of {n} targets met" in text


@pytest.mark.slow
def test_every_target_is_met(short):
    _, _, rows = short
    targets = _targets.targets_in(rows)
    assert len(targets) == len(LD.ROBOT_ORDER) * (7 + 2 * len(LD.TOLERANCES)) + 3   # + the knee
    assert not _targets.missed(targets), _targets.missed(targets)


def test_trapezoid_and_its_error_bound():
    """The trapezoid of t² on [0, 1] errs by h²/6 (exactly); the bound
    Σ h |Δ²f| / 12 gives h²/6 (1 − h), the same to first order. A zero-width
    interval (an event's two samples) splits the segments and adds nothing."""
    t = np.linspace(0.0, 1.0, 101)
    h = t[1] - t[0]
    integral, bound = LD.trapezoid(t, t ** 2)
    err = integral - 1.0 / 3.0
    assert err == pytest.approx(h ** 2 / 6, rel=1e-9)
    assert bound >= 0.98 * err
    jumped = np.concatenate([t[:51], t[50:]])
    f = np.concatenate([jumped[:51] ** 2, jumped[51:] ** 2 + 5.0])
    integral2, bound2 = LD.trapezoid(jumped, f)
    assert integral2 == pytest.approx(integral + 5.0 * 0.5, rel=1e-12)
    assert bound2 == pytest.approx(bound, rel=0.05)
    assert LD.segments(jumped) == [(0, 51), (51, 102)]


@pytest.mark.parametrize("argv, message", [
    (["--duration", "0.1"], "ends before the feet land"),
    (["--duration", "-1"], "positive number of seconds"),
    (["--duration", "soon"], "expected a number of seconds"),
    (["--robots", "atlas"], "invalid choice"),
])
def test_bad_arguments_are_refused_with_a_reason(argv, message, capsys):
    with pytest.raises(SystemExit):
        LD.parse(argv)
    assert message in capsys.readouterr().err


@pytest.mark.xfail(strict=True, reason="library: after Go2's two front feet start to slip together "
                   "(t = 0.3175 s) their slip velocity grows against the onset direction s0, the "
                   "friction stays at -s0 and does positive work for about 10 ms (the stick "
                   "function v_t . s0 is never armed)")
def test_sliding_friction_does_no_positive_work():
    from models.quadruped_drops import Drop
    drop = Drop("go2", LD.DROP)
    traj = drop.run(0.34, LD.EVENT_TOL, LD.DT)
    res = LD.analyse(drop, traj, LD.EVENT_TOL)
    assert res["power"] <= 0.0, (res["power"], res["power_at"])
