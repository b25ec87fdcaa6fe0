"""Timing of zero-argument callables, interleaved so that they share the
machine's load (SPEC §9, Table 4), the statistics of paired samples, and the
rule that says when a machine was too loaded for its numbers to be quoted.
NumPy only, no plotting.

Callables timed together alternate in short blocks of consecutive calls
(:data:`PAIR_BLOCK`, few enough to be close in time, enough for the caches
to be warm after the first): the i-th block of each runs in the same sweep,
next to the others' i-th. A ratio of two of them is the **median of the
per-pair ratios** (:func:`paired`; a pair is the median call of the two
callables' blocks of one sweep), with the interquartile range of those
ratios as its spread; a burst of other load falls on both blocks of a pair,
so it moves few pair ratios and hardly the median, where it would move a
ratio of means.

A measurement is unreliable (:func:`unreliable`) when the 1-minute load
average before or after it exceeds :data:`LOAD_PER_CORE` times the number
of cores, or when the spread of a paired ratio, IQR / median, exceeds
:data:`SPREAD_LIMIT`.
"""

import os
import time

import numpy as np

WARMUP = 5                    # Table 4: warm-up = 5
WARMUP_SECONDS = 0.05         # and long enough to settle caches and the CPU clock
ROUNDS = 10
PAIR_BLOCK = 10               # consecutive timed calls of one callable per sweep
LOAD_PER_CORE = 1.0           # unreliable above this 1-minute load average per core
SPREAD_LIMIT = 0.3            # unreliable above this IQR / median of the per-pair ratios


def time_calls(fns, calls, warmup=WARMUP, budget=None, rounds=ROUNDS):
    """Time several zero-argument callables ``fns`` (a dict name → callable)
    against each other, interleaved so that they share the machine's load.

    Each callable gets untimed warm-up calls (``warmup`` of them and for at
    least ``WARMUP_SECONDS``, but no longer than a quarter of ``budget``
    for a slow one), then up to ``calls``
    timed calls in ``rounds`` rounds; within a round the callables alternate
    in sweeps: each runs a block of up to :data:`PAIR_BLOCK` consecutive
    calls per sweep while it has calls of that round's share left. With ``budget`` (seconds per callable) the
    number of calls is cut so that the total stays near the budget (at
    least 3), estimated from the slowest warm-up call. Returns ``{name:
    dict(mean=, median=, round_median_min=, calls=, samples=, sweeps=)}`` in
    seconds per call: ``mean`` over all timed calls (the paper's statistic),
    ``median`` over all timed calls, ``round_median_min`` the smallest of
    the per-round medians, which discounts bursts of other load on a shared
    machine, and the timed calls themselves, ``samples``, with the index of
    the sweep each ran in, ``sweeps`` (for :func:`paired`).
    """
    n_calls = {}
    for name, fn in fns.items():
        slowest, i, start = 0.0, 0, time.perf_counter()
        while True:
            t0 = time.perf_counter()
            fn()
            slowest = max(slowest, time.perf_counter() - t0)
            i += 1
            elapsed = time.perf_counter() - start
            if (i >= warmup and elapsed >= WARMUP_SECONDS) or (
                    budget is not None and elapsed >= budget / 4):
                break
        n_calls[name] = (int(max(3, min(calls, budget / slowest)))
                         if budget is not None and slowest > 0.0 else calls)
    samples = {name: [] for name in fns}     # per round: [(sweep, seconds)]
    sweep = 0
    for k in range(rounds):
        share = {name: n * (k + 1) // rounds - n * k // rounds for name, n in n_calls.items()}
        block = {name: [] for name in fns}
        for i in range(0, max(share.values(), default=0), PAIR_BLOCK):
            for name, fn in fns.items():
                for _ in range(min(PAIR_BLOCK, share[name] - i)):
                    t0 = time.perf_counter()
                    fn()
                    block[name].append((sweep, time.perf_counter() - t0))
            sweep += 1
        for name, b in block.items():
            samples[name].append(b)
    return {name: _statistics(blocks) for name, blocks in samples.items()}


def _statistics(blocks):
    """The statistics of one callable's timed calls, ``blocks`` per round of
    ``(sweep, seconds)``."""
    every = np.array([t for b in blocks for _, t in b])
    sweeps = np.array([s for b in blocks for s, _ in b], dtype=int)
    medians = [np.median([t for _, t in b]) for b in blocks if b]
    return {"mean": float(every.mean()), "median": float(np.median(every)),
            "round_median_min": float(min(medians)), "calls": int(every.size),
            "samples": every, "sweeps": sweeps}


def time_call(fn, calls, warmup=WARMUP, budget=None, rounds=ROUNDS):
    """:func:`time_calls` for one callable."""
    return time_calls({"f": fn}, calls, warmup, budget, rounds)["f"]


# ------------------------------------------------------------- paired samples --

def paired_stats(a, b, combine=np.divide):
    """Median and quartiles of ``combine(a[i], b[i])`` over the pairs of
    samples ``a``, ``b`` (equal lengths; by default the per-pair ratios
    ``a[i] / b[i]``): ``dict(median=, q1=, q3=, pairs=, spread=)`` with
    ``spread = (q3 − q1) / |median|``, the interquartile range relative to
    the median (infinite for a zero median)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"a: expected a non-empty 1-d array of samples, got shape {a.shape}")
    if b.shape != a.shape:
        raise ValueError(f"b: expected the shape of a, {a.shape}, got {b.shape}")
    if combine is np.divide and not np.all(b > 0.0):
        raise ValueError("b: per-pair ratios need positive times")
    x = combine(a, b)
    q1, median, q3 = (float(v) for v in np.percentile(x, [25.0, 50.0, 75.0]))
    return {"median": median, "q1": q1, "q3": q3, "pairs": int(x.size),
            "spread": spread(q1, q3, median)}


def spread(q1, q3, median):
    """``(q3 − q1) / |median|``: a paired statistic's interquartile range
    relative to its median (infinite for a zero median), what
    :func:`unreliable` compares with :data:`SPREAD_LIMIT`."""
    return (q3 - q1) / abs(median) if median != 0.0 else float("inf")


def _sweep_medians(timing):
    """``(sweeps, median call of each)`` of a :func:`time_calls` timing."""
    sweeps, where = np.unique(timing["sweeps"], return_inverse=True)
    return sweeps, np.array([np.median(timing["samples"][where == i])
                             for i in range(sweeps.size)])


def sweep_medians(*timings):
    """The median call of each of several timings of one :func:`time_calls`
    run (its values) in every sweep all of them ran in: one array per
    timing, aligned sweep by sweep (element i of each is from the same
    sweep), for statistics of more than two callables."""
    names = ["timing_a", "timing_b"] + [f"timings[{i}]" for i in range(2, len(timings))]
    for arg, t in zip(names, timings):
        if not isinstance(t, dict) or "sweeps" not in t:
            raise ValueError(f"{arg}: expected a timing of time_calls, with samples and sweeps")
    per = [_sweep_medians(t) for t in timings]
    common = per[0][0]
    for s, _ in per[1:]:
        common = np.intersect1d(common, s)
    if common.size == 0:
        raise ValueError(f"{names[len(timings) - 1]}: no call ran in a sweep of timing_a's "
                         "(not timed together)")
    return [m[np.searchsorted(s, common)] for s, m in per]


def paired(timing_a, timing_b, combine=np.divide):
    """:func:`paired_stats` of two timings of one :func:`time_calls` run
    (its values): a pair is the median call of each in one sweep."""
    return paired_stats(*sweep_medians(timing_a, timing_b), combine)


def ratio_columns(name, stats):
    """``{name: median, name_q1: q1, name_q3: q3}``: the CSV columns of a
    paired statistic (:func:`paired`, :func:`paired_stats`), as
    ``bench_closed_form`` names them (``ratio``, ``ratio_q1``, ``ratio_q3``)."""
    return {name: stats["median"], f"{name}_q1": stats["q1"], f"{name}_q3": stats["q3"]}


def ratio_fields(*names):
    """The column names :func:`ratio_columns` writes for each of ``names``."""
    return [f"{n}{s}" for n in names for s in ("", "_q1", "_q3")]


# ---------------------------------------------------------------- load --

def machine_load():
    """``dict(load1=, load5=, load15=, cores=)``: the load averages over 1, 5
    and 15 minutes (``os.getloadavg``; NaN where the system has none) and
    ``os.cpu_count()``."""
    try:
        loads = os.getloadavg()
    except (AttributeError, OSError):
        loads = (float("nan"),) * 3
    return dict(zip(("load1", "load5", "load15"), (float(x) for x in loads)),
                cores=os.cpu_count() or 1)


LOAD_FIELDS = ["load1_before", "load1_after", "cores"]


def time_calls_loaded(fns, calls, **kw):
    """:func:`time_calls` between two :func:`machine_load` readings:
    ``(timings, load_columns(before, after))``."""
    before = machine_load()
    timings = time_calls(fns, calls, **kw)
    return timings, load_columns(before, machine_load())


def load_columns(before, after):
    """``dict(load1_before=, load1_after=, cores=)``: the columns a table's
    rows carry from two :func:`machine_load` readings."""
    return dict(load1_before=before["load1"], load1_after=after["load1"], cores=after["cores"])


def unreliable(load_before, load_after, cores, spreads=()):
    """Why numbers measured between two :func:`machine_load` readings are not
    to be quoted: a list of reasons, empty when they may be. ``load_before``
    and ``load_after`` are 1-minute load averages, ``cores`` the number of
    cores, ``spreads`` ``{name: IQR / median}`` of paired ratios. The rule:
    a 1-minute load average above ``LOAD_PER_CORE · cores`` (before or
    after), a load that was not recorded (NaN), or a spread above
    ``SPREAD_LIMIT``."""
    if not (isinstance(cores, (int, np.integer)) and cores >= 1):
        raise ValueError(f"cores: expected a positive integer, got {cores!r}")
    spreads = dict(spreads)
    for name, x in spreads.items():
        if not x >= 0.0:
            raise ValueError(f"spreads: {name!r} has a spread {x!r}, expected ≥ 0")
    limit = LOAD_PER_CORE * cores
    reasons = []
    missing = [w for w, x in (("before", load_before), ("after", load_after))
               if x is None or not np.isfinite(x)]
    if missing:
        reasons.append(f"the load average {' and '.join(missing)} the run was not recorded")
    for when, load in (("before", load_before), ("after", load_after)):
        if when not in missing and load > limit:
            reasons.append(f"the 1-minute load average {when} the run, {load:.2f}, exceeds "
                           f"the {cores} cores")
    wide = {n: x for n, x in spreads.items() if x > SPREAD_LIMIT}
    if wide:
        worst = max(wide, key=wide.get)
        reasons.append(f"{len(wide)} of {len(spreads)} paired ratios spread wider than "
                       f"IQR/median {SPREAD_LIMIT:g} (widest: {worst}, {wide[worst]:.2f})")
    return reasons


def rows_unreliable(rows, names, label=None):
    """:func:`unreliable` for table rows that carry their load (the columns
    of :func:`load_columns`) and paired ratios in the columns of
    :func:`ratio_columns` for each of ``names`` (numbers or CSV strings; a
    row without a ratio is left out). Rows measured in several runs (a
    resumed table) are judged by the highest load recorded before and after
    any of them. ``label(row, name)`` names a spread in the reasons (default
    ``name`` and the row's position)."""
    def value(row, key):
        v = row.get(key)
        return None if v is None or v == "" else float(v)

    rated = [(i, r, n) for i, r in enumerate(rows) for n in names if value(r, n) is not None]
    if not rated:
        return []
    if not all(value(r, k) is not None for _, r, _ in rated for k in LOAD_FIELDS):
        return ["the machine's load was not recorded"]
    if not all(value(r, f"{n}_q1") is not None and value(r, f"{n}_q3") is not None
               for _, r, n in rated):
        return ["its ratios are not medians of paired samples"]
    label = label or (lambda row, name: name)
    spreads = {}
    for i, r, n in rated:
        key = label(r, n)
        key = key if key not in spreads else f"{key} (row {i})"
        spreads[key] = spread(value(r, f"{n}_q1"), value(r, f"{n}_q3"), value(r, n))
    loaded = [r for _, r, _ in rated]
    return unreliable(max(value(r, "load1_before") for r in loaded),
                      max(value(r, "load1_after") for r in loaded),
                      int(value(loaded[0], "cores")), spreads)


def reliability_note(reasons, what="speed ratios"):
    """The sentence a study's prose gives its ``what`` when
    :func:`unreliable` (or :func:`rows_unreliable`) gave ``reasons``: empty
    when there are none, else that they are unreliable and not to be quoted,
    and why."""
    if not reasons:
        return ""
    return (f"**These {what} are unreliable and are not to be quoted**: "
            + "; ".join(reasons) + ".")
