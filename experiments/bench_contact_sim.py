"""The cost of contact events in ``liedyn.simulate`` on Solo-12 and Go2:
what ``contacts=`` costs against holding the feet with ``constraints=``,
and what one located event costs in steps.

    python -m experiments.bench_contact_sim            # 9 pairs of 1 s runs per robot
    python -m experiments.bench_contact_sim --full     # 25 pairs
    python -m experiments.bench_contact_sim --duration 0.2 --pairs 2   # a smoke run

The robots and their PD law are those of ``models/quadruped_drops.py``
(Solo-12: μ = 0.7, Go2: μ = 0.8), ``dt = DT``, ``event_tol = EVENT_TOL``.
Three runs per robot, each ``duration`` long, timed together by
``experiments._timing.time_calls`` (after one warm-up call each, the three
alternate, one call each per sweep, so that a pair shares the machine's
load):

* **held**: standing on its feet at rest, the four feet held as points,
  ``simulate(constraints=ConstraintSet of Contact3D)``;
* **standing**: the same start with ``simulate(contacts=…)`` and friction
  (no event happens: checked);
* **drop**: dropped from ``DROP`` (5 cm) with ``contacts=``, friction and
  restitution 0 (touch-down, then slips, sticks, lift-offs).

Reported, each as the median over the pairs with its quartiles: the ratio
standing / held (target ≤ ``TARGETS["standing"]``), the ratio drop / held
(≤ ``TARGETS["drop"]``), the drop's real-time factor ``wall time /
simulated time`` (above 1: slower than real time), and the cost of one
located event in held steps,

    (t_drop − c · steps_drop) / events / c,    c = t_held / steps_held,

per pair (≤ ``TARGETS["event"]``): the drop run's time beyond what its
steps would cost held, per event, in units of one held step. ``steps`` are
the steps the trajectory keeps; the steps integrated after an event and
discarded with the rest of its window count as the event's cost, and so
does the dearer dynamics of sliding contacts (friction needs one more
constrained solve per sliding contact at each evaluation). The cost per
switch (events at the same time are located once) is reported too. The machine's
1-minute load is recorded before and after each robot's timing; a row is
marked unreliable when ``experiments._timing.unreliable`` says so (loaded
machine, or a spread IQR / median above its limit).

Writes to ``paper_figures/`` (``--out DIR`` elsewhere, ``_full`` names with
``--full``): ``bench_contact_sim.csv`` (rows with targets met or missed,
the machine and code version) and ``bench_contact_sim.md`` (the table).
"""

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from models.quadruped_drops import Drop

from ._provenance import stamp
from ._table import output_stem, write_rows
from ._timing import (LOAD_FIELDS, load_columns, machine_load, paired_stats, reliability_note,
                      sweep_medians, time_calls, unreliable)

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"

ROBOT_ORDER = ("solo12", "go2")
DT = 1e-3                     # s
DROP = 0.05                   # m
EVENT_TOL = 1e-10             # s: simulate's default
QUICK = dict(duration=1.0, pairs=9)
FULL = dict(duration=1.0, pairs=25)
# The targets: contacts= at rest against held feet, the drop against held feet, and
# one located event in held steps.
TARGETS = dict(standing=1.3, drop=3.0, event=10.0)


def measure(robot, duration, pairs):
    """Time the held, standing and drop runs of ``robot`` together:
    ``dict(timings, load, events, steps_drop, steps_held)``."""
    held, dropped = Drop(robot, 0.0), Drop(robot, DROP)
    last = {}

    def run(name, f):
        def call():
            last[name] = f()
        return call

    fns = {"held": run("held", lambda: held.run_held(duration, DT)),
           "standing": run("standing", lambda: held.run(duration, EVENT_TOL, DT,
                                                         state=held.standing())),
           "drop": run("drop", lambda: dropped.run(duration, EVENT_TOL, DT))}
    before = machine_load()
    timings = time_calls(fns, pairs, warmup=1, rounds=pairs)
    load = load_columns(before, machine_load())
    if last["standing"].events:
        raise RuntimeError(f"{robot} standing with contacts=: unexpected events "
                           f"{last['standing'].events}")
    if not last["drop"].events:
        raise RuntimeError(f"{robot} dropped from {DROP:g} m: no event in {duration:g} s")
    events = last["drop"].events
    return dict(timings=timings, load=load, events=len(events),
                switches=len({e.time for e in events}), steps_drop=kept_steps(last["drop"]),
                integrated_drop=last["drop"].steps, steps_held=kept_steps(last["held"]))


def kept_steps(traj):
    """The steps of ``traj``'s samples: its intervals of positive length (an
    event's two samples share its time). Steps integrated and then
    discarded after an event (the rest of its window) are not among them:
    they are part of locating the event."""
    return int(np.count_nonzero(np.diff(traj.time) > 0.0))


def statistics(m, duration):
    """The paired statistics of one robot's :func:`measure`."""
    t = m["timings"]
    held, standing, drop = sweep_medians(t["held"], t["standing"], t["drop"])
    sh, sd = m["steps_held"], m["steps_drop"]

    def cost_per(n):
        def cost(a, b):
            c = b / sh
            return (a - c * sd) / n / c
        return cost

    return dict(standing=paired_stats(standing, held), drop=paired_stats(drop, held),
                event=paired_stats(drop, held, combine=cost_per(m["events"])),
                switch=paired_stats(drop, held, combine=cost_per(m["switches"])),
                rtf=paired_stats(drop, np.full(drop.shape, duration)),
                held_step=paired_stats(held, np.full(held.shape, float(sh))),
                wall={k: float(np.median(v)) for k, v in
                      (("held", held), ("standing", standing), ("drop", drop))})


FIELDS = ["robot", "quantity", "value", "q1", "q3", "unit", "target", "met", "pairs",
          "unreliable", *LOAD_FIELDS]


def rows_of(robot, m, s, duration):
    spreads = {k: s[k]["spread"] for k in ("standing", "drop", "event")}
    reasons = unreliable(m["load"]["load1_before"], m["load"]["load1_after"],
                         m["load"]["cores"], spreads)
    why = "; ".join(reasons)

    def row(quantity, stats, unit, target=None):
        met = "" if target is None else ("yes" if stats["median"] <= target else "no")
        return dict(robot=robot, quantity=quantity, value=stats["median"], q1=stats["q1"],
                    q3=stats["q3"], unit=unit, target="" if target is None else target, met=met,
                    pairs=stats["pairs"], unreliable=why, **m["load"])

    return [
        row(f"standing at rest {duration:g} s: contacts= / constraints= wall time", s["standing"],
            "x", TARGETS["standing"]),
        row(f"dropped from {DROP * 100:g} cm, {duration:g} s: contacts= / held run wall time",
            s["drop"], "x", TARGETS["drop"]),
        row(f"one located event in held steps ({m['events']} events; {m['steps_drop']} steps "
            f"kept, {m['integrated_drop']} integrated, against {m['steps_held']} held)",
            s["event"], "steps", TARGETS["event"]),
        row(f"one switch in held steps (the {m['events']} events at {m['switches']} distinct "
            "times: feet landing together are located once)", s["switch"], "steps"),
        row("dropped: real-time factor (wall time / simulated time)", s["rtf"], ""),
        row("held: wall time per step", s["held_step"], "s"),
    ]


def markdown(rows, path, notes):
    lines = ["| robot | quantity | median | q1 | q3 | target | met | load before → after | "
             "unreliable |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        target = f"≤ {r['target']:g}" if r["target"] != "" else ""
        lines.append(f"| {r['robot']} | {r['quantity']} | {r['value']:.4g} {r['unit']} | "
                     f"{r['q1']:.4g} | {r['q3']:.4g} | {target} | {r['met']} | "
                     f"{r['load1_before']:.2f} → {r['load1_after']:.2f} ({r['cores']} cores) | "
                     f"{'yes' if r['unreliable'] else ''} |")
    text = "\n".join(lines) + "\n"
    if notes:
        text += "\n" + "\n\n".join(notes) + "\n"
    Path(path).write_text(text, encoding="utf-8")
    return text


def _positive(kind):
    def parse(text):
        try:
            x = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive {kind.__name__}, got "
                                             f"{text!r}") from None
        if not (math.isfinite(x) and x > 0):
            raise argparse.ArgumentTypeError(f"expected a positive {kind.__name__}, got "
                                             f"{text!r}")
        return x
    return parse


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true",
                    help=f"{FULL['pairs']} pairs per robot (quick: {QUICK['pairs']})")
    ap.add_argument("--duration", type=_positive(float), default=None, metavar="SECONDS",
                    help=f"simulated time of each run (default {QUICK['duration']:g} s)")
    ap.add_argument("--pairs", type=_positive(int), default=None, metavar="N",
                    help="timed calls of each run per robot (default: the mode's)")
    ap.add_argument("--robots", nargs="+", choices=ROBOT_ORDER, default=list(ROBOT_ORDER),
                    help="the robots (default: both)")
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    ap.add_argument("--no-progress", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    cfg = dict(FULL if args.full else QUICK)
    if args.duration is not None:
        cfg["duration"] = args.duration
    if args.pairs is not None:
        cfg["pairs"] = args.pairs
    fall = math.sqrt(2.0 * DROP / 9.81)
    if cfg["duration"] <= fall:
        ap.error(f"--duration: {cfg['duration']:g} s ends before the dropped feet land at "
                 f"sqrt(2h/g) = {fall:.4f} s, so there would be no event to cost")
    return args, cfg


def main(argv=None):
    args, cfg = parse(argv)
    stem = output_stem(args, "bench_contact_sim")
    rows, notes = [], []
    for robot in [r for r in ROBOT_ORDER if r in args.robots]:
        if not args.no_progress:
            print(f"  {robot}: held, standing and drop runs of {cfg['duration']:g} s, "
                  f"{cfg['pairs']} pairs after a warm-up call each", file=sys.stderr,
                  flush=True)
        start = time.perf_counter()
        m = measure(robot, cfg["duration"], cfg["pairs"])
        s = statistics(m, cfg["duration"])
        mine = rows_of(robot, m, s, cfg["duration"])
        rows += mine
        if not args.no_progress:
            print(f"  {robot}: measured in {time.perf_counter() - start:.0f} s", file=sys.stderr,
                  flush=True)
        note = reliability_note(mine[0]["unreliable"].split("; ") if mine[0]["unreliable"]
                                else [], f"{robot} numbers")
        if note:
            notes.append(note)
    args.out.mkdir(parents=True, exist_ok=True)
    write_rows(f"{stem}.csv", FIELDS, rows, stamp=stamp())
    text = markdown(rows, f"{stem}.md", notes)
    print(text)
    print(f"wrote {stem}.csv, {stem}.md")
    for r in rows:
        if r["met"] == "no":
            print(f"target missed [{r['robot']}] {r['quantity']}: {r['value']:.3g} "
                  f"(limit {r['target']:g})")
    met = sum(r["met"] == "yes" for r in rows)
    print(f"{met} of {sum(r['met'] in ('yes', 'no') for r in rows)} targets met")


if __name__ == "__main__":
    main()
