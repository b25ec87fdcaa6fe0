"""Cost of one controller step against the single calls it is made of.

    python -m experiments.bench_control            # quick: 20 000 timed calls each
    python -m experiments.bench_control --full     # 200 000

On the floating aerial manipulator (SPEC §8) with elastic joints:

* ``elastic step``: one :meth:`liedyn.control.ElasticJointLaw.step`
  (forward dynamics of orders 0–1, the base error on SE(3) and the gains,
  inverse dynamics of order 2, the motor torque), workspaces reused, the
  target precomputed;
* ``forward order 1`` and ``inverse order 2``: the two library calls it
  makes, alone, with the law's own workspaces and arguments;
* ``rotor-lag step``, ``forward order 0``, ``inverse order 1``: the same for
  :class:`liedyn.control.RotorLagLaw`;
* ``reference``: evaluating the target of models.reference_motion once (the
  user's side of the loop, not part of the step).

The callables are timed interleaved, in rounds, so that they share the
machine's load; the statistic is the median per call (the mean is also
recorded); the 1 kHz share is the median over 1 ms. A step is compared with
its two single calls sweep by sweep (:func:`experiments._timing.sweep_medians`:
the median call of each in the same sweep): its **overhead** (errors, gains,
actuator map) is the median over the sweeps of ``step − forward − inverse``,
and its ratio to the single calls the median of the per-sweep ratios
``step / (forward + inverse)``, each with its quartiles (:func:`step_stats`).
The machine's 1-minute load average before and after the timing is
recorded; when it or the spread of the ratios breaks the rule of
:func:`experiments._timing.unreliable`, the run says that its numbers are
unreliable.

Writes ``paper_figures/bench_control.csv`` (``_full`` with ``--full``,
``--out DIR`` for another folder), one row per callable with the machine and
code version (:mod:`experiments._provenance`), the steps' overhead and ratio
columns, and the load columns (:data:`experiments._timing.LOAD_FIELDS`) on
every row.
"""

import argparse
from pathlib import Path

import numpy as np

import liedyn
from liedyn import control

from experiments import _provenance
from experiments._table import write_rows
from experiments._timing import (LOAD_FIELDS, paired_stats, ratio_columns, ratio_fields,
                                 reliability_note, rows_unreliable, sweep_medians,
                                 time_calls_loaded)
from experiments.elastic_tracking import (MOTOR_INERTIA, POLES, ROTOR_POLES, STIFFNESS,
                                          TIME_CONSTANT, perturbed_start, reference_target)
from models.aerial_manipulator import aerial_manipulator, allocation_matrix
from models.reference_motion import ReferenceMotion

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"
QUICK_CALLS, FULL_CALLS = 20_000, 200_000
ROUNDS = 10
WARMUP = 500
BUDGET_1KHZ = 1e-3        # s
PARTS = {"elastic step": ("forward order 1", "inverse order 2"),
         "rotor-lag step": ("forward order 0", "inverse order 1")}
FIELDS = ["callable", "median_us", "mean_us", "calls", "share_1kHz",
          *ratio_fields("overhead_us", "ratio"), *LOAD_FIELDS]


def callables(t=1.7):
    """``{name: zero-argument callable}``: the two laws' steps at a perturbed
    state, their single calls with the same arguments, and the reference."""
    model = aerial_manipulator()
    ref = ReferenceMotion()
    target4, target3 = reference_target(ref, 4), reference_target(ref, 3)
    T4, T3 = target4(t), target3(t)
    elastic = control.ElasticJointLaw(model, STIFFNESS, MOTOR_INERTIA, POLES, lambda s: T4)
    rotor = control.RotorLagLaw(model, ROTOR_POLES, lambda s: T3, allocation=allocation_matrix(),
                                time_constant=TIME_CONSTANT)
    s4 = perturbed_start(elastic, lambda s: T4)
    s3 = perturbed_start(rotor, lambda s: T3)
    n = model.n_joints
    # The arguments the steps hand to the library, and the workspaces they use.
    j4 = elastic.step(t, s4).jets
    lin4 = elastic.linearization
    C4, V4, q4 = s4.base_pose, s4.base_twist.reshape(1, 6), np.stack([s4.q, s4.qd])
    tau4 = j4.tau[:2].copy()
    W4 = s4.extra[2 * n:].reshape(2, 6).copy()
    Vc4, qc4 = j4.base_twist, j4.q
    j3 = rotor.step(t, s3).jets
    lin3 = rotor.linearization
    C3, V3, q3 = s3.base_pose, s3.base_twist.reshape(1, 6), np.stack([s3.q, s3.qd])
    tau3, W3 = j3.tau[:1].copy(), j3.base_wrench[:1].copy()
    Vc3, qc3 = j3.base_twist, j3.q
    return {
        "elastic step": lambda: elastic.step(t, s4),
        "forward order 1": lambda: liedyn.forward_dynamics(
            model, C4, V4, q4, 1, tau=tau4, base_wrench=W4, workspace=lin4._forward),
        "inverse order 2": lambda: liedyn.inverse_dynamics(model, C4, Vc4, qc4, 2,
                                                           workspace=lin4._inverse),
        "rotor-lag step": lambda: rotor.step(t, s3),
        "forward order 0": lambda: liedyn.forward_dynamics(
            model, C3, V3, q3, 0, tau=tau3, base_wrench=W3, workspace=lin3._forward),
        "inverse order 1": lambda: liedyn.inverse_dynamics(model, C3, Vc3, qc3, 1,
                                                           workspace=lin3._inverse),
        "reference": lambda: control.Target(q=ref.joint_jet(t, 5), base_pose=ref.base_pose(t),
                                            base_twist=ref.base_twist_jet(t, 4)),
    }


def step_stats(step, forward, inverse):
    """A step against its two single calls, three timings of one
    :func:`experiments._timing.time_calls` run, paired sweep by sweep (the
    median call of each in every sweep all three ran in): ``(overhead,
    ratio)``, the :func:`experiments._timing.paired_stats` of
    ``step − forward − inverse`` (seconds) and of ``step / (forward + inverse)``."""
    s, f, i = sweep_medians(step, forward, inverse)
    return paired_stats(s, f + i, np.subtract), paired_stats(s, f + i)


def table_rows(res, load):
    """The CSV rows of the timings ``res``: one per callable, a step's with
    its overhead (µs) and ratio (:func:`step_stats`), every row with the
    ``load`` columns (:func:`experiments._timing.load_columns`)."""
    rows = []
    for name, r in res.items():
        row = dict(callable=name, median_us=f"{r['median'] * 1e6:.3f}",
                   mean_us=f"{r['mean'] * 1e6:.3f}", calls=r["calls"],
                   share_1kHz=f"{r['median'] / BUDGET_1KHZ:.5f}", **load)
        if name in PARTS:
            overhead, ratio = step_stats(r, *(res[p] for p in PARTS[name]))
            row |= ratio_columns("overhead_us", {k: overhead[k] * 1e6 for k in ("median", "q1",
                                                                                 "q3")})
            row |= ratio_columns("ratio", ratio)
        rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help=f"{FULL_CALLS} timed calls each "
                                                        f"(quick: {QUICK_CALLS})")
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    args = ap.parse_args(argv)
    calls = FULL_CALLS if args.full else QUICK_CALLS
    res, load = time_calls_loaded(callables(), calls, warmup=WARMUP, rounds=ROUNDS)
    rows = table_rows(res, load)
    print(f"One controller step on the floating aerial manipulator ({calls} calls each, "
          f"median per call; workspaces reused)")
    print(f"  {'callable':<18} {'median µs':>10} {'mean µs':>9} {'1 kHz share':>12}")
    for name, r in res.items():
        print(f"  {name:<18} {r['median'] * 1e6:>10.2f} {r['mean'] * 1e6:>9.2f} "
              f"{r['median'] / BUDGET_1KHZ:>11.2%}")
    for row in rows:
        if row["callable"] in PARTS:
            fd, idn = PARTS[row["callable"]]
            print(f"  {row['callable']}: {fd} + {idn} + {row['overhead_us']:.2f} µs of errors, "
                  f"gains and actuator map (IQR {row['overhead_us_q1']:.2f}–"
                  f"{row['overhead_us_q3']:.2f}); ×{row['ratio']:.2f} the two calls (IQR "
                  f"{row['ratio_q1']:.2f}–{row['ratio_q3']:.2f}); medians over the sweeps")
    print(f"  1-minute load average {load['load1_before']:.2f} before, "
          f"{load['load1_after']:.2f} after ({load['cores']} cores)")
    note = reliability_note(rows_unreliable(rows, ["ratio"], lambda r, n: r["callable"]),
                            "overheads and ratios")
    if note:
        print(note)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / ("bench_control_full.csv" if args.full else "bench_control.csv")
    write_rows(path, FIELDS, rows, stamp=_provenance.stamp())
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
