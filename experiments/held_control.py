"""What holding an exact linearizing law between samples costs in accuracy.

    python -m experiments.held_control            # quick: 2 s, 100 Hz to 2 kHz and every stage
    python -m experiments.held_control --full     # 10 s, 50 Hz to 4 kHz and every stage

:class:`liedyn.control.RotorLagLaw` (poles ``ROTOR_POLES`` of
:mod:`experiments.elastic_tracking`) flies the paper's aerial manipulator
(SPEC §8) along its reference motion from a state on it, with the simulator's
step ``dt = 1 ms`` (the largest divisor of the control period not above it).
Run at every stage of the integrator the law is exact: the error stays at
RK4's round-off. Held between samples (``control_rate``) its input is the
one of the last sample: the error equation of SPEC §11.1 is driven by the
change of the exact input over a period, so the error grows as ``1/rate``.

Reported per control rate: the largest joint error ``max_j |q_j − q_d,j|``
(rad) and base error ``|log(C_d⁻¹ C₀)|`` over the run, and the ratio of each
to the next-higher rate's (2 for an error ``∝ 1/rate`` when the rates
double). Writes ``held_control.csv`` (``_full`` with ``--full``) to
``results/`` (``--out DIR`` for another folder).
"""

import argparse
import csv
import time
from pathlib import Path

import numpy as np

from liedyn import simulate
from experiments import elastic_tracking as et
from experiments._table import output_stem
from models.aerial_manipulator import aerial_manipulator
from models.reference_motion import ReferenceMotion

OUT_DIR = Path(__file__).resolve().parent.parent / "results"
DT = 1e-3
QUICK = dict(horizon=2.0, rates=(2000.0, 1000.0, 500.0, 200.0, 100.0))
FULL = dict(horizon=10.0, rates=(4000.0, 2000.0, 1000.0, 500.0, 200.0, 100.0, 50.0))


def run(horizon, rates, progress=True):
    """``[(rate or None, joint error, base error, seconds)]``, every stage first."""
    model = aerial_manipulator()
    ref = ReferenceMotion()
    _, law, plant, _ = et.laws(model, ref)["rotor lag: exact"]
    start = law.state_on(law.target(0.0))
    rows = []
    for rate in (None,) + tuple(rates):
        t0 = time.perf_counter()
        traj = simulate(model, start, horizon, dt=DT, controller=law, plant=plant,
                        control_rate=rate)
        eq, eb = et.errors(traj, ref)
        rows.append((rate, float(np.max(np.abs(eq))),
                     float(np.max(np.linalg.norm(eb, axis=1))), time.perf_counter() - t0))
        if progress:
            r = rows[-1]
            print(f"  {'every stage' if rate is None else f'{rate:g} Hz':>12}: joints "
                  f"{r[1]:.3g} rad, base {r[2]:.3g} ({r[3]:.1f} s)", flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="10 s and seven rates (quick: 2 s, five)")
    ap.add_argument("--out", type=Path, default=OUT_DIR, help="output folder (default results/)")
    ap.add_argument("--no-progress", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    cfg = FULL if args.full else QUICK
    print(f"RotorLagLaw on the aerial manipulator, {cfg['horizon']:g} s from the reference, "
          f"dt = {DT:g} s", flush=True)
    rows = run(cfg["horizon"], cfg["rates"], progress=not args.no_progress)
    print(f"{'control rate':>12} {'joints (rad)':>13} {'base':>10} {'ratio q':>8} {'ratio b':>8}")
    for i, (rate, eq, eb, _) in enumerate(rows):
        prev = rows[i - 1] if i > 1 else None
        rq = "" if prev is None else f"{eq / prev[1]:.2f}"
        rb = "" if prev is None else f"{eb / prev[2]:.2f}"
        print(f"{'every stage' if rate is None else f'{rate:g} Hz':>12} {eq:>13.3g} {eb:>10.3g} "
              f"{rq:>8} {rb:>8}")
    args.out.mkdir(parents=True, exist_ok=True)
    path = f"{output_stem(args, 'held_control')}.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["control_rate", "joint_error", "base_error", "seconds"])
        for rate, eq, eb, sec in rows:
            w.writerow(["" if rate is None else rate, f"{eq:.6g}", f"{eb:.6g}", f"{sec:.3f}"])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
