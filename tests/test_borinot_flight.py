"""experiments/borinot_flight.py run once in a subprocess, short
(``--duration``): it writes its table and figure where it is told to, and
every target in the table is met (the open-loop flight of the flat inputs
converging as dt⁴, the exact law's errors following the linear error
equations, the geometric baseline exact on one rigid body, the rotor thrusts
within their limits). The baseline's single-rigid-body flat map is checked
against the library's flat map of that body, and the arguments are checked."""

import numpy as np
import pytest

from liedyn import control
from experiments import _borinot as B
from experiments import _targets
from experiments import borinot_flight as BF
from experiments._table import read_rows
from tests.helpers import run_python

DURATION = 0.4    # s: the transient's first part; the checks do not depend on the horizon


@pytest.fixture(scope="module")
def short(tmp_path_factory):
    out = tmp_path_factory.mktemp("borinot_flight")
    text = run_python(f"""
        from experiments import borinot_flight
        borinot_flight.main(["--out", {str(out)!r}, "--no-progress", "--duration", "{DURATION}"])
        """, timeout=900)
    return out, text, read_rows(out / "borinot_flight.csv")


@pytest.mark.slow
def test_writes_the_table_and_the_figure(short):
    out, text, rows = short
    assert (out / "borinot_flight.png").stat().st_size > 10_000
    assert list(rows[0]) == ["machine", "code"] + BF.FIELDS
    runs = {(r["robot"], r["law"], r["start"]) for r in rows if r["quantity"] == "x_G error"}
    expected = {(f, law, s) for f, laws in (("borinot", BF.LAWS),
                                           ("hexarotor, arms locked", BF.LAWS[:2]))
                for law in laws for s in BF.STARTS} - BF.QUICK_SKIPS
    assert runs == expected
    for robot, law, start in expected:
        err = [r for r in rows if (r["robot"], r["law"], r["start"]) == (robot, law, start)
               and r["quantity"].endswith("error")]
        assert len(err) == (4 if robot == "borinot" else 2)
        assert all(float(r["rms"]) <= float(r["max"]) for r in err)
        thrust = [r for r in rows if (r["robot"], r["law"], r["start"]) == (robot, law, start)
                  and "thrust" in r["quantity"]]
        assert len(thrust) == 12
    n = sum(r["met"] in ("yes", "no") for r in rows)
    assert f"of {n} targets met" in text


@pytest.mark.slow
def test_every_target_is_met(short):
    _, _, rows = short
    targets = _targets.targets_in(rows)
    exact_runs = sum(1 for r in rows if r["quantity"] == "x_G error" and r["law"] == BF.LAWS[0])
    assert len(targets) == 9 + 6 * exact_runs
    assert not _targets.missed(targets), _targets.missed(targets)


@pytest.mark.slow
def test_the_arm_disturbs_the_rigid_body_controller_and_not_the_exact_law(short):
    """From the reference's state the exact law stays on it (integrator
    error), the geometric law on the rigid-body model does not: the swinging
    arm moves the centre of mass and pushes on the base."""
    _, _, rows = short
    err = {(r["law"], r["start"]): float(r["max"]) for r in rows
           if r["robot"] == "borinot" and r["quantity"] == "x_G error"}
    assert err[BF.LAWS[1], BF.STARTS[0]] > 1e3 * err[BF.LAWS[0], BF.STARTS[0]]


def test_single_rigid_body_flatness_is_the_flat_map_of_one_body():
    """Mellinger–Kumar's maps with the exact yaw rate, coded on their own,
    against :func:`liedyn.control.flat_map` of Borinot locked into one rigid
    body: thrust, attitude, body rates and their rate, to round-off."""
    model = B.borinot()
    ref = B.FigureEight(model.n_joints, w=BF.OMEGA)
    rigid = B.rigid_model(model, ref.q_nom)
    m = float(rigid.body_mass.sum())
    scale = m * 9.81 * 3          # the thrust reaches ~3 m g on this figure-eight
    for t in np.linspace(0.0, BF.LAP, 5):
        xG, psi, _ = ref(t, 0)
        f, R, Om, dOm = B.rigid_body_flatness(m, xG, psi)
        fm = control.flat_map(rigid, xG, psi, np.zeros((3, 0)), 0)
        # round-off of two routes through O(10) operations on O(1..10) numbers
        assert abs(f - fm.thrust[0]) < 1e-13 * scale
        assert np.abs(R - fm.rotation[0]).max() < 1e-13
        assert np.abs(Om - fm.body_rates[0]).max() < 1e-12       # rad/s, rates up to ~3
        assert np.abs(dOm - fm.body_rates[1]).max() < 1e-11      # rad/s², up to ~30
        assert abs(BF.wrap(BF.yaw_of(R) - psi[0])) < 1e-13


def test_the_rotors_are_coplanar_and_split_the_hover_thrust_evenly():
    alloc = control.rotor_allocation(B.borinot_rotors())
    hover = np.linalg.pinv(alloc[[0, 1, 2, 5]]) @ np.array([0.0, 0.0, 0.0, 6.0])
    assert np.allclose(hover, 1.0, atol=1e-12)
    assert np.allclose(alloc[3:5], 0.0)
    assert B.F_MAX == pytest.approx(19.2338, abs=1e-4)


@pytest.mark.parametrize("argv, message", [
    (["--duration", "-1"], "positive number of seconds"),
    (["--duration", "soon"], "expected a number of seconds"),
])
def test_bad_arguments_are_refused_with_a_reason(argv, message, capsys):
    with pytest.raises(SystemExit):
        BF.parse(argv)
    assert message in capsys.readouterr().err
