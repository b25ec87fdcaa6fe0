"""MuJoCo as an independent oracle on dm_control's MJCF models
(experiments/mujoco_oracle.py): inverse dynamics (``mj_inverse``), the mass
matrix (``mj_fullM``), forward dynamics (``mj_forward``), sites
(``mj_jacSite``, ``mj_jacDot``) at order 0, and orders 1–3 by central
differences in time of MuJoCo's order-0 values with step halving."""

import numpy as np
import pytest

pytest.importorskip("mujoco")
pytest.importorskip("dm_control")

from experiments import mujoco_oracle as mo     # noqa: E402

EPS = np.finfo(float).eps

# Order 0: both sides sum, per entry, the products of a tree of at most ~60
# bodies' kinematics and inertias, each rounded to eps of the largest term;
# 1000 eps covers that sum (the measured worst is 4 eps).
ORDER0_TOL = 1000 * EPS


@pytest.fixture(scope="module", autouse=True)
def _elsewhere(tmp_path_factory):
    """MuJoCo appends its compiler warnings (manipulator.xml's deprecated
    settotalmass) to MUJOCO_LOG.TXT in the working directory: not the checkout's."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path_factory.mktemp("mujoco"))
        yield


@pytest.fixture(scope="module")
def results():
    out = {name: mo.errors(name) for name in mo.MODELS}
    print("\n" + mo.table(out))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", mo.MODELS)
def test_order0_against_mujoco(results, name):
    errs, model, _ = results[name]
    for q in ("inverse", "mass", "site_pose", "site_jacobian", "site_motion"):
        e = errs[q][0]
        if e is not None:
            assert e[0] <= ORDER0_TOL, (name, q, e)
    e = errs["site_jacdot"][1]                 # mj_jacDot: J̇ and the site acceleration
    if e is not None:
        assert e[0] <= ORDER0_TOL, (name, "site_jacdot", e)


@pytest.mark.slow
@pytest.mark.parametrize("name", mo.MODELS)
def test_forward_order0_against_mj_forward(results, name):
    # qacc = M⁻¹ (τ − h): the solve multiplies the rounding of the right-hand
    # side by cond(M); the manipulator's light fingers make cond(M) ~ 1e4.
    import mujoco
    errs, model, _ = results[name]
    model, mj, bridge, _ = mo.load(name)
    C0, V, q = mo.Motion(model, 0).jets(mo.T0)
    M = mo.Oracle(model, mj, bridge, ()).at(C0, V, q)["mass"]
    assert errs["forward"][0][0] <= 100 * EPS * np.linalg.cond(M), (name, errs["forward"][0])
    assert mujoco.mjtDisableBit.mjDSBL_CONSTRAINT & mj.opt.disableflags


@pytest.mark.slow
@pytest.mark.parametrize("name", mo.MODELS)
def test_orders_1_to_3_by_central_differences(results, name):
    """Each jet within the differences' own error bound, ``|D(h) − D(h/2)|``
    plus their rounding (the Richardson value they are compared to errs by
    ``O(h⁴)``, far less)."""
    errs, _, _ = results[name]
    for q in ("inverse", "mass", "forward", "site_jacobian", "site_motion"):
        for k in range(1, mo.ORDER + 1):
            e = errs[q][k]
            if e is not None:
                assert e[0] <= e[1], (name, q, k, e)
                assert e[1] < 0.05, (name, q, k, "differences did not converge", e)


@pytest.mark.slow
def test_halving_the_step_shrinks_the_error_as_h4():
    """The Richardson value converges to liedyn's jet at the fourth order:
    halving ``h`` divides the distance by about 16 (not a constant offset)."""
    e1 = mo.errors("cheetah", h=0.04)[0]["inverse"]
    e2 = mo.errors("cheetah", h=0.02)[0]["inverse"]
    for k in (1, 2):
        assert e2[k][0] < e1[k][0] / 6, (k, e1[k], e2[k])


@pytest.mark.slow
def test_models_cover_both_bases_and_warn(results):
    bases = {results[n][1].floating_base for n in mo.MODELS}
    assert bases == {True, False}
    notes = "\n".join(results["quadruped"][2])
    assert "trees left out" in notes and "'ball'" in notes
    assert "tendons are not modelled" in notes and "equality constraints" in notes
