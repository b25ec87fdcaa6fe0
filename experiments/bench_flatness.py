"""Cost of the flat map and of the flat tracking step against the library
calls they are made of, on Borinot (``borinot_flying_arm_2`` of
example-robot-data: a quadrotor carrying a 2-joint arm).

    python -m experiments.bench_flatness            # quick: 2 000 timed calls each
    python -m experiments.bench_flatness --full     # 20 000

* ``flat map r`` (r = 0..3): :func:`liedyn.control.flat_map` of order r at
  one sample of a figure-eight, against ``inverse r`` (inverse dynamics of
  order r at the same motion, a reused workspace) plus ``kinematics r+1``
  (the kinematic pass of order r + 1 that gives the centre of mass in the
  base frame): the ratio ``flat / (inverse + kinematics)``;
* ``tracking step``: one :meth:`liedyn.control.FlatTrackingLaw.step` at a
  perturbed state, the target precomputed, against ``forward order 1`` plus
  ``inverse order 2`` at the same state; ``target``: evaluating the
  figure-eight's flat outputs once (the user's side of the loop, not part of
  the step, as in :mod:`experiments.bench_control`);
* ``batch``: the flat map of order 2 over a 1000-sample trajectory in one
  call against a loop of single calls, timed interleaved (a few rounds).

The callables are timed interleaved in sweeps (:mod:`experiments._timing`);
each ratio is the median of the per-sweep ratios of the median calls, with
its quartiles. Writes ``paper_figures/bench_flatness.csv`` (``_full`` with
``--full``, ``--out DIR`` for another folder).
"""

import argparse
import time
from importlib.metadata import distribution
from pathlib import Path

import numpy as np

import liedyn
from liedyn import control

from experiments import _provenance
from experiments._table import write_rows
from experiments._timing import (LOAD_FIELDS, paired_stats, ratio_columns, ratio_fields,
                                 reliability_note, rows_unreliable, sweep_medians,
                                 time_calls_loaded)

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"
QUICK_CALLS, FULL_CALLS = 2_000, 20_000
ROUNDS = 10
WARMUP = 50
ORDERS = range(4)
BATCH_SAMPLES, BATCH_ROUNDS = 1000, 3
FIELDS = ["callable", "median_us", "mean_us", "calls", *ratio_fields("ratio"), *LOAD_FIELDS]


def borinot():
    erd = distribution("example-robot-data")
    path = next(f for f in erd.files if f.name == "borinot_flying_arm_2.urdf")
    return liedyn.load_urdf(erd.locate_file(path), floating_base=True)


def figure_eight(n, t, r, w=2.0):
    """Flat-output jets ``(x_G^(0..r+4), ψ^(0..r+2), q^(0..r+2))`` at ``t``:
    sines with closed-form derivatives."""
    def sine(amp, om, phase, rows):
        k = np.arange(rows)
        return amp * om ** k * np.sin(om * t + phase + k * np.pi / 2)
    xG = np.stack([sine(1.0, w, 0.0, r + 5), sine(0.6, 2 * w, 0.0, r + 5),
                   sine(0.2, w, 0.5, r + 5)], axis=1)
    xG[0, 2] += 1.0
    psi = sine(0.5, 0.7, 0.0, r + 3)
    psi[0] += 0.3
    q = np.stack([sine(0.4, 1.1 + 0.3 * j, j, r + 3) for j in range(n)], axis=1)
    return xG, psi, q


PARTS = {f"flat map {r}": (f"inverse {r}", f"kinematics {r + 1}") for r in ORDERS}
PARTS["tracking step"] = ("forward order 1", "inverse order 2")


def callables(model, t=0.3):
    """``{name: zero-argument callable}``."""
    n = model.n_joints
    fns = {}
    for r in ORDERS:
        jets = figure_eight(n, t, r)
        res = control.flat_map(model, *jets, r)
        ws = liedyn.Workspace(model, r)
        zero = np.zeros((r + 2, 6))
        fns[f"flat map {r}"] = lambda jets=jets, r=r: control.flat_map(model, *jets, r)
        fns[f"inverse {r}"] = lambda res=res, r=r, ws=ws: liedyn.inverse_dynamics(
            model, res.base_pose, res.base_twist, res.q, r, workspace=ws)
        fns[f"kinematics {r + 1}"] = lambda res=res, r=r, zero=zero: liedyn.forward_kinematics(
            model, np.eye(4), zero, res.q, r + 1)
    target = figure_eight(n, t, 1)
    law = control.FlatTrackingLaw(model, (-3, -4, -5, -6), lambda s: target,
                                  yaw_poles=(-4, -5), joint_poles=(-5, -6))
    on = law.state_on(t)
    state = law.state_on(t, base_position=on.base_pose[:3, 3] + 0.05, q=on.q + 0.05)
    step = law.step(t, state)
    u = step.input
    C, V = state.base_pose, state.base_twist.reshape(1, 6)
    qs = np.stack([state.q, state.qd])
    F = C[:3, 2] * state.extra[0]
    W = np.stack([np.concatenate([C[:3, :3] @ u[1:4] + np.cross(C[:3, 3], F), F]),
                  np.zeros(6)])
    tau = np.stack([u[4:], np.zeros(n)])
    fd = liedyn.forward_dynamics(model, C, V, qs, 1, tau=tau, base_wrench=W)
    ws_f, ws_i = liedyn.Workspace(model, 1), liedyn.Workspace(model, 2)
    fns["tracking step"] = lambda: law.step(t, state)
    fns["target"] = lambda: figure_eight(n, t, 1)
    fns["forward order 1"] = lambda: liedyn.forward_dynamics(model, C, V, qs, 1, tau=tau,
                                                             base_wrench=W, workspace=ws_f)
    # the jets forward dynamics gives, one row longer (its cost does not depend on the values)
    Vc, qc = np.vstack([fd.base_twist, np.zeros(6)]), np.vstack([fd.q, np.zeros(n)])
    fns["inverse order 2"] = lambda: liedyn.inverse_dynamics(model, C, Vc, qc, 2,
                                                             workspace=ws_i)
    return fns


def batch_ratio(model, r=2):
    """``(batch s, loop s, ratio stats)``: one batched call over
    ``BATCH_SAMPLES`` samples against a loop of single calls, alternated
    ``BATCH_ROUNDS`` times."""
    jets = [figure_eight(model.n_joints, t, r) for t in np.linspace(0.0, 2.0, BATCH_SAMPLES)]
    X, P, Q = (np.stack([j[i] for j in jets]) for i in range(3))
    batch, loop = [], []
    for _ in range(BATCH_ROUNDS):
        t0 = time.perf_counter()
        control.flat_map(model, X, P, Q, r)
        batch.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for j in jets:
            control.flat_map(model, *j, r)
        loop.append(time.perf_counter() - t0)
    return float(np.median(batch)), float(np.median(loop)), paired_stats(batch, loop)


def table_rows(res, load):
    rows = []
    for name, r in res.items():
        row = dict(callable=name, median_us=f"{r['median'] * 1e6:.3f}",
                   mean_us=f"{r['mean'] * 1e6:.3f}", calls=r["calls"], **load)
        if name in PARTS:
            a, b, c = sweep_medians(r, *(res[p] for p in PARTS[name]))
            row |= ratio_columns("ratio", paired_stats(a, b + c))
        rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help=f"{FULL_CALLS} timed calls each "
                                                        f"(quick: {QUICK_CALLS})")
    ap.add_argument("--calls", type=int, default=None, help="timed calls each (overrides)")
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    args = ap.parse_args(argv)
    calls = args.calls or (FULL_CALLS if args.full else QUICK_CALLS)
    model = borinot()
    res, load = time_calls_loaded(callables(model), calls, warmup=WARMUP, rounds=ROUNDS)
    rows = table_rows(res, load)
    print(f"Flat map and flat tracking on Borinot ({calls} calls each, median per call)")
    for row in rows:
        extra = ""
        if row["callable"] in PARTS:
            extra = (f"  ×{row['ratio']:.2f} {' + '.join(PARTS[row['callable']])} "
                     f"(IQR {row['ratio_q1']:.2f}–{row['ratio_q3']:.2f})")
        print(f"  {row['callable']:<18} {float(row['median_us']):>10.1f} µs{extra}")
    b, lp, st = batch_ratio(model)
    print(f"  batch of {BATCH_SAMPLES} samples, order 2: {b:.3f} s, loop of single calls "
          f"{lp:.3f} s: ×{st['median']:.2f}")
    rows.append(dict(callable=f"batch {BATCH_SAMPLES} / loop", median_us=f"{b * 1e6:.1f}",
                     mean_us=f"{b * 1e6:.1f}", calls=BATCH_ROUNDS,
                     **ratio_columns("ratio", st), **load))
    note = reliability_note(rows_unreliable(rows[:-1], ["ratio"], lambda r, n: r["callable"]),
                            "ratios")
    if note:
        print(note)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / ("bench_flatness_full.csv" if args.full else "bench_flatness.csv")
    write_rows(path, FIELDS, rows, stamp=_provenance.stamp())
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
