"""Shared machinery of the benchmark scripts (``bench_*.py``): timing a
callable, resumable CSV tables, the benchmark tree sizes of SPEC §9, random
inputs, optional Pinocchio counterparts, growth-law fits and plot styling.

Timing protocol (SPEC §9, Table 4): a few warm-up calls, then ``calls``
calls each timed with ``time.perf_counter``; the mean (the paper's metric,
elapsed time / calls) and the median are reported. Every comparison is a
ratio of two timings taken in the same run.
"""

import argparse
import csv
import os
import platform
import time
from pathlib import Path

import matplotlib
import numpy as np
from tqdm import tqdm

from models.trees import benchmark_tree

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the file backend)

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"

N_BRANCHES = 5
N_BOD_AT_101 = 20                                   # N = 1 + 5 · 20 = 101
N_BOD_QUICK = (1, 2, 4, 8, 12, 16, 20, 30, 40, 60)  # N ≤ 301
N_BOD_FULL = tuple(range(1, 200, 2))                # Table 4: 100 sizes, N ≤ 996
CALLS_QUICK, CALLS_FULL = 500, 1000
PIN_BYTES_PER_NV3 = 66.0      # memory of pinocchio.Data (4.1), measured at nv = 106..306
PIN_MAX_GB = 2.5              # default: Pinocchio up to N = 306 (nv = 311)
WARMUP = 5                    # Table 4: warm-up = 5
WARMUP_SECONDS = 0.05         # and long enough to settle caches and the CPU clock
ROUNDS = 10


def n_bodies(n_bod):
    return 1 + N_BRANCHES * n_bod


def tree(n_bod):
    """The benchmark tree of SPEC §9 with ``n_bod`` bodies per branch."""
    return benchmark_tree(n_branches=N_BRANCHES, bodies_per_branch=n_bod)


# ------------------------------------------------------------------ timing --

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
    calls=)}`` in seconds per call: ``mean`` over all timed calls (the paper's
    metric) and ``median`` the smallest of the per-round medians, which
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
        out[name] = {"mean": float(every.mean()), "median": float(min(medians)),
                     "calls": int(every.size)}
    return out


def time_call(fn, calls, warmup=WARMUP, budget=None, rounds=ROUNDS):
    """:func:`time_calls` for one callable."""
    return time_calls({"f": fn}, calls, warmup, budget, rounds)["f"]


# ------------------------------------------------------------- CSV tables --

def machine():
    """What identifies the computer timings were taken on (host, CPU, cores)."""
    return f"{platform.node()} {platform.machine()} {os.cpu_count()} cores"


class ResultTable:
    """A CSV file that grows one row at a time, so a cut-short run keeps every
    finished row; rows whose key is already present are skipped on rerun.

    ``fields`` are the column names, ``key`` the subset identifying a row.
    ``fresh`` discards an existing file. With ``stamp`` (e.g. :func:`machine`)
    every row records it in a first column ``machine`` and a file written
    under another stamp is discarded: timings taken on another computer (say,
    the CSV that came with a clone) are not mixed with new ones.
    """

    def __init__(self, path, fields, key, fresh=False, stamp=None):
        self.path, self.key, self.stamp = Path(path), list(key), stamp
        self.fields = (["machine"] if stamp is not None else []) + list(fields)
        self.rows = []
        if self.path.exists() and not fresh:
            with open(self.path, newline="") as fh:
                reader = csv.DictReader(fh)
                if reader.fieldnames == self.fields:
                    self.rows = list(reader)
            if stamp is not None and any(r["machine"] != stamp for r in self.rows):
                self.rows = []
        if not self.rows:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "w", newline="") as fh:
                csv.DictWriter(fh, self.fields).writeheader()

    def _key(self, row):
        return tuple(str(row[k]) for k in self.key)

    def get(self, **key):
        k = self._key(key)
        for row in self.rows:
            if self._key(row) == k:
                return row
        return None

    def add(self, **row):
        if self.stamp is not None:
            row["machine"] = self.stamp
        row = {f: _fmt(row.get(f, "")) for f in self.fields}
        with open(self.path, "a", newline="") as fh:
            csv.DictWriter(fh, self.fields).writerow(row)
        self.rows.append(row)
        return row

    def remove(self, **key):
        """Drop the row with this key (the file is rewritten)."""
        k = self._key(key)
        self.rows = [r for r in self.rows if self._key(r) != k]
        with open(self.path, "w", newline="") as fh:
            writer = csv.DictWriter(fh, self.fields)
            writer.writeheader()
            writer.writerows(self.rows)

    def select(self, **where):
        return [r for r in self.rows if all(str(r[k]) == str(v) for k, v in where.items())]


def _fmt(x):
    if isinstance(x, float):
        return f"{x:.6e}"
    return str(x)


def num(row, field):
    """A float field of a CSV row; NaN when empty."""
    v = row.get(field, "")
    return float(v) if v not in ("", None) else float("nan")


def print_table(title, header, rows):
    """Print ``rows`` (lists of strings) under ``header`` as aligned columns."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(header)]
    print(f"\n{title}")
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(str(c).rjust(w) for c, w in zip(r, widths)))


def us(seconds):
    """Seconds as a short microsecond string."""
    return "" if not np.isfinite(seconds) else f"{seconds * 1e6:.1f}"


# ------------------------------------------------------------- arguments --

def parser(doc, calls_default=(None, None), timing=True):
    """Arguments shared by the benchmarks; ``calls_default`` (quick, full)
    overrides the module's defaults in the help text; ``timing=False`` leaves
    out the options of scripts that measure (``--calls``, ``--fresh``)."""
    quick, full = (c if c is not None else d for c, d in zip(calls_default, (CALLS_QUICK, CALLS_FULL)))
    ap = argparse.ArgumentParser(description=doc.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small sweep, minutes (default)")
    mode.add_argument("--full", action="store_true", help="the paper's Table 4 sizes")
    if timing:
        ap.add_argument("--calls", type=int, default=None,
                        help=f"timed calls per point (default {quick} quick, {full} full)")
        ap.add_argument("--fresh", action="store_true", help="discard finished rows and rerun all")
        ap.add_argument("--pin-max-gb", type=float, default=PIN_MAX_GB,
                        help=f"time Pinocchio only where its Data needs at most this many GB "
                             f"(≈ {PIN_BYTES_PER_NV3:.0f}·nv³ bytes; default {PIN_MAX_GB})")
    ap.add_argument("--out", type=Path, default=OUT_DIR, help="output folder (default paper_figures/)")
    ap.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    return ap


def calls_for(args):
    return args.calls if args.calls is not None else (CALLS_FULL if args.full else CALLS_QUICK)


def output_stem(args, name):
    """``<out>/<name>`` in quick mode, ``<out>/<name>_full`` with ``--full``."""
    return Path(args.out) / (f"{name}_full" if args.full else name)


# ----------------------------------------------------------------- sweeps --

ORDERS_VS_N = tuple(range(6))     # r = 0..5 against N
ORDERS_VS_R = tuple(range(11))    # r = 0..10 at N = 101


def sweep_points(args):
    """``(sweep, n_bod, r)`` of SPEC §9: ``"N"`` over the tree sizes for
    r = 0..5, then ``"r"`` at N = 101 for r = 0..10."""
    sizes = N_BOD_FULL if args.full else N_BOD_QUICK
    pts = [("N", nb, r) for nb in sizes for r in ORDERS_VS_N]
    return pts + [("r", N_BOD_AT_101, r) for r in ORDERS_VS_R]


def run_sweep(args, table, callables, fields, desc):
    """Measure every sweep point missing from ``table``.

    The orders of one tree size are timed together, interleaved round by
    round (:func:`time_calls`), so that a burst of other load on the machine
    falls on all of them alike. ``callables(model, r, args, rng)`` gives the
    zero-argument callables of one point (a dict name → callable) and
    ``fields(times)`` turns their timings (name → stats) into the fields of
    its row. Rows are appended to the CSV as soon as their size is done.
    Returns the number of points measured in this run.
    """
    groups = {}
    for sweep, n_bod, r in sweep_points(args):
        if table.get(sweep=sweep, n_bod=n_bod, r=r) is None:
            groups.setdefault((sweep, n_bod), []).append(r)
    done = 0
    with tqdm(total=sum(map(len, groups.values())), desc=desc, disable=args.no_progress) as bar:
        model, built = None, None
        for (sweep, n_bod), orders in groups.items():
            if built != n_bod:
                model, built = tree(n_bod), n_bod
            fns = {}
            for r in orders:
                rng = np.random.default_rng(1000 * n_bod + r)
                fns.update({(r, name): fn for name, fn in callables(model, r, args, rng).items()})
            times = time_calls(fns, calls_for(args))
            for r in orders:
                t = {name: v for (rr, name), v in times.items() if rr == r}
                table.add(sweep=sweep, n_bod=n_bod, N=n_bodies(n_bod), r=r, **fields(t))
            bar.update(len(orders))
            done += len(orders)
    return done


# ----------------------------------------------------------------- inputs --

def inverse_inputs(model, order, rng):
    """Random inverse-dynamics jets (Table 4): base at identity,
    ``base_twist`` ``(order+2, 6)``, ``q`` ``(order+3, n)``."""
    return (np.eye(4), rng.normal(size=(order + 2, 6)),
            rng.normal(size=(order + 3, model.n_joints)))


def forward_inputs(model, order, rng):
    """Forward-dynamics inputs (Table 4): base at identity and at rest, random
    ``q, q̇``, zero wrench and torque jets."""
    n = model.n_joints
    return (np.eye(4), np.zeros(6), rng.normal(size=n), rng.normal(size=n),
            np.zeros((order + 1, 6)), np.zeros((order + 1, n)))


def pinocchio_calls(model, rng, max_gb=PIN_MAX_GB):
    """``(rnea, aba)``: zero-argument callables running Pinocchio's own
    ``rnea`` and ``aba`` on the same tree at a random state (raw calls, no
    convention conversion inside the timing), or ``None`` when Pinocchio or
    the test oracle that mirrors liedyn models is not available, or when
    Pinocchio's ``Data`` would need more than ``max_gb`` GB: it allocates
    buffers cubic in ``nv`` (second-order derivative tensors), measured at
    ``PIN_BYTES_PER_NV3 · nv³`` bytes, which is 65 GB at N = 996."""
    if PIN_BYTES_PER_NV3 * (model.nv ** 3) > max_gb * 1e9:
        return None
    try:
        import pinocchio as pin
        from tests.pinocchio_oracle import to_pinocchio
    except ImportError:
        return None
    pm = to_pinocchio(model)
    qp = pm.config_to_pin(np.eye(4), rng.normal(size=model.n_joints))
    v, a = rng.normal(size=pm.model.nv), rng.normal(size=pm.model.nv)
    tau = np.zeros(pm.model.nv)
    pmod, pdata = pm.model, pm.data
    return (lambda: pin.rnea(pmod, pdata, qp, v, a), lambda: pin.aba(pmod, pdata, qp, v, tau))


# ------------------------------------------------------------------- fits --

def fit_power(x, y):
    """Least-squares fit of ``log y = log a + α log x``: returns ``(a, α)``."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    alpha, loga = np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)
    return float(np.exp(loga)), float(alpha)


def fit_offset_power(x, y):
    """Least-squares fit of ``y = c₀ + a x^α`` with relative residuals
    (``c₀, a ≥ 0``): a fixed cost per call plus a power law. Returns
    ``(c₀, a, α)``."""
    from scipy.optimize import curve_fit
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & (y > 0)
    x, y = x[ok], y[ok]
    pos = x > 0
    a0, alpha0 = fit_power(x[pos], y[pos] - 0.5 * y.min())
    p, _ = curve_fit(lambda x, c0, a, alpha: c0 + a * x ** alpha, x, y,
                     p0=(0.5 * y.min(), a0, min(max(alpha0, 0.1), 3.9)), sigma=y,
                     bounds=([0.0, 0.0, 0.0], [np.inf, np.inf, 4.0]), maxfev=20000)
    return float(p[0]), float(p[1]), float(p[2])


def fit_exponential(x, y):
    """Least-squares fit of ``log y = log a + x log γ``: returns ``(a, γ)``."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & (y > 0)
    logg, loga = np.polyfit(x[ok], np.log(y[ok]), 1)
    return float(np.exp(loga)), float(np.exp(logg))


# ------------------------------------------------------------------ plots --

def colors(k):
    return plt.get_cmap("viridis")(np.linspace(0.0, 0.9, k))


def plot_sweeps(table, stem, title, field, ref_field=None, ref_label=None, ratio=None):
    """The figure of a recursion benchmark: (a) median time per call against
    N, one line per order (``ref_field`` dashed, order 0); (b) against r at
    N = 101; with ``ratio = (field, label)`` a third panel of that ratio
    against N per order."""
    ncol = 3 if ratio else 2
    fig, axes = plt.subplots(1, ncol, figsize=(5.2 * ncol, 4.3), layout="constrained")
    ax1, ax2 = axes[0], axes[1]
    orders = [r for r in ORDERS_VS_N if table.select(sweep="N", r=r)]
    for r, col in zip(orders, colors(len(orders))):
        rows = table.select(sweep="N", r=r)
        N = [num(x, "N") for x in rows]
        ax1.loglog(N, [num(x, field) for x in rows], "o-", ms=3, color=col, label=f"r = {r}")
        if ratio:
            axes[2].semilogx(N, [num(x, ratio[0]) for x in rows], "o-", ms=3, color=col,
                             label=f"r = {r}")
    if ref_field:
        rows = [x for x in table.select(sweep="N", r=0) if np.isfinite(num(x, ref_field))]
        if rows:
            ax1.loglog([num(x, "N") for x in rows], [num(x, ref_field) for x in rows], "k--",
                       label=ref_label)
    n101 = n_bodies(N_BOD_AT_101)
    rows = table.select(sweep="r")
    ax2.semilogy([num(x, "r") for x in rows], [num(x, field) for x in rows], "o-", color="C0",
                 label=f"N = {n101}")
    ax1.set(xlabel="number of bodies N", ylabel="median time per call [s]",
            title=f"(a) {title} against N")
    ax2.set(xlabel="derivative order r", ylabel="median time per call [s]",
            title=f"(b) {title} against r, N = {n101}")
    if ratio:
        axes[2].set(xlabel="number of bodies N", ylabel=ratio[1], title=f"(c) {ratio[1]}")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    return save(fig, stem)


def recursion_main(argv, doc, name, columns, callables, fields, report, desc, **plot):
    """``main`` of a recursion benchmark: parse, sweep (resumably), print the
    table, plot with :func:`plot_sweeps` (``plot`` its keyword arguments)."""
    args = parser(doc).parse_args(argv)
    stem = output_stem(args, name)
    table = ResultTable(f"{stem}.csv", columns, ["sweep", "n_bod", "r"], fresh=args.fresh,
                        stamp=machine())
    run_sweep(args, table, callables, fields, desc)
    report(table)
    missing = [int(x["N"]) for x in table.select(sweep="N", r=0) if not x[plot["ref_field"]]]
    if missing:
        print(f"\nPinocchio not timed at {len(missing)} sizes, N = {min(missing)}..{max(missing)}: "
              f"not installed, or its Data would exceed --pin-max-gb "
              f"(≈ {PIN_BYTES_PER_NV3:.0f}·nv³ bytes)")
    png = plot_sweeps(table, stem, **plot)
    print(f"\nwrote {stem}.csv and {png}")
    return table


def save(fig, stem):
    path = Path(f"{stem}.png")
    fig.savefig(path, dpi=130, bbox_inches="tight")
    plt.close(fig)
    return path
