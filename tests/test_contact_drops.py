"""Quadrupeds dropped onto their feet with friction (SPEC §10.2): every
``event_tol`` from 1e-12 to 1e-3 s runs to the end, and at every sample of
every run the contact invariants hold: a sticking contact's force inside its
cone and a closed contact's normal force non-negative (both to the forces'
location tolerance, 4e-9 m g), an open contact's gap no deeper than the
touch-down location leaves (``|φ̇| event_tol``), every held contact on its
plane after each switch. The first touch-down, on four feet at once, is at
``√(2h/g)`` within the tolerance: in free fall the PD-held joints do not move.

Solo-12 (URDF of example-robot-data) dropped from 10 cm with μ = 0.7 and
Go2 (a robot the other tests do not use) with μ = 0.8; both slip, stick,
lift and land again several times in the first half second. The robots and
the PD law are those of ``models/quadruped_drops.py``.
"""

import numpy as np
import pytest

import liedyn as ld
from models.quadruped_drops import ROBOTS, Drop

DROP = 0.10
DURATION = 0.5
TOLERANCES = (1e-12, 1e-9, 1e-6, 1e-4, 1e-3)
FORCE_BOUND = 4e-9        # times m g: where the forces' events are located (SPEC §10.2)


@pytest.fixture(scope="module", params=sorted(ROBOTS))
def sweep(request):
    drop = Drop(request.param, DROP)
    return drop, {tol: drop.run(DURATION, tol) for tol in TOLERANCES}


@pytest.mark.slow
def test_every_event_tolerance_runs_to_the_end(sweep):
    drop, runs = sweep
    for tol, traj in runs.items():
        assert traj.time[-1] == pytest.approx(DURATION, abs=1e-12), tol
        kinds = {e.kind for e in traj.events}
        assert {"touch-down", "slip"} <= kinds, (tol, kinds)


@pytest.mark.slow
def test_the_invariants_hold_at_every_sample(sweep):
    drop, runs = sweep
    bound = FORCE_BOUND * drop.weight
    v_land = np.sqrt(2 * drop.gravity * DROP)
    for tol, traj in runs.items():
        F, mode, gap = traj.contact_force, traj.contact_mode, traj.gap
        fn = F[..., 2]
        ft = np.linalg.norm(F[..., :2], axis=-1)
        stick, closed, open_ = mode == 2, mode > 0, mode == 0
        assert (ft[stick] <= drop.mu * fn[stick] + bound).all(), \
            (tol, float((ft - drop.mu * fn)[stick].max()))
        assert (fn[closed] >= -bound).all(), (tol, float(fn[closed].min()))
        assert (fn[open_] == 0.0).all() and (ft[open_] == 0.0).all()
        assert (gap[open_] >= -(v_land * tol + 1e-12)).all(), (tol, float(gap[open_].min()))
        # after every switch the held contacts are on their planes
        after = [e.sample + 1 for e in traj.events if e.sample + 1 < len(traj)]
        held = gap[after][closed[after]]
        assert (np.abs(held) <= 1e-9).all(), (tol, float(np.abs(held).max()))


@pytest.mark.slow
def test_the_first_touch_down_is_at_the_free_fall_time_within_the_tolerance(sweep):
    drop, runs = sweep
    t_fall = np.sqrt(2 * DROP / drop.gravity)
    first = {}
    for tol, traj in runs.items():
        e = traj.events[0]
        assert e.kind == "touch-down"
        landed = {x.contact for x in traj.events if x.time == e.time and x.kind == "touch-down"}
        assert landed == set(drop.feet), (tol, landed)
        assert -1e-12 <= e.time - t_fall <= tol + 1e-12, (tol, e.time - t_fall)
        first[tol] = e.time
    tight = first[min(TOLERANCES)]
    for tol, t in first.items():
        assert abs(t - tight) <= tol + 1e-12, (tol, t - tight)


def test_a_start_beyond_the_ground_is_refused_with_its_depth():
    drop = Drop("solo12", DROP)
    C = np.array(drop.state.base_pose)
    C[2, 3] -= DROP + 2e-3
    state = ld.State(C, np.zeros(6), drop.q, np.zeros(drop.model.n_joints))
    with pytest.raises(ld.SimulationError, match=r"state0: contact '\w+' penetrates its plane "
                                                 r"by 2\.000e-03 m"):
        ld.simulate(drop.model, state, 0.1, dt=1e-3, contacts=ld.point_contacts(drop.feet),
                    friction=drop.mu, controller=drop.hold)
