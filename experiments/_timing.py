"""Timing of zero-argument callables, interleaved so that they share the
machine's load (SPEC §9, Table 4). NumPy only, no plotting."""

import time

import numpy as np

WARMUP = 5                    # Table 4: warm-up = 5
WARMUP_SECONDS = 0.05         # and long enough to settle caches and the CPU clock
ROUNDS = 10


def time_calls(fns, calls, warmup=WARMUP, budget=None, rounds=ROUNDS):
    """Time several zero-argument callables ``fns`` (a dict name → callable)
    against each other, interleaved so that they share the machine's load.

    Each callable gets untimed warm-up calls (``warmup`` of them and for at
    least ``WARMUP_SECONDS``, but no longer than a quarter of ``budget``
    for a slow one), then up to ``calls``
    timed calls in ``rounds`` rounds; within a round every callable runs its
    share in turn. With ``budget`` (seconds per callable) the number of calls
    is cut so that the total stays near the budget (at least 3), estimated
    from the slowest warm-up call. Returns ``{name: dict(mean=, median=,
    round_median_min=, calls=)}`` in seconds per call: ``mean`` over all
    timed calls (the paper's statistic), ``median`` over all timed calls, and
    ``round_median_min`` the smallest of the per-round medians, which
    discounts bursts of other load on a shared machine.
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
    times = {name: [] for name in fns}
    for k in range(rounds):
        for name, fn in fns.items():
            share = n_calls[name] * (k + 1) // rounds - n_calls[name] * k // rounds
            block = np.empty(share)
            for i in range(share):
                t0 = time.perf_counter()
                fn()
                block[i] = time.perf_counter() - t0
            times[name].append(block)
    out = {}
    for name, blocks in times.items():
        medians = [np.median(b) for b in blocks if b.size]
        every = np.concatenate(blocks)
        out[name] = {"mean": float(every.mean()), "median": float(np.median(every)),
                     "round_median_min": float(min(medians)), "calls": int(every.size)}
    return out


def time_call(fn, calls, warmup=WARMUP, budget=None, rounds=ROUNDS):
    """:func:`time_calls` for one callable."""
    return time_calls({"f": fn}, calls, warmup, budget, rounds)["f"]
