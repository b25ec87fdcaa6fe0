"""Cost of r-th time derivatives by nested automatic differentiation (the
paper's CasADi baseline, SPEC §9, Fig. 4c) against the recursions, at N = 101.

    python -m experiments.bench_casadi            # quick: caps keep it to a few minutes
    python -m experiments.bench_casadi --full     # Table 4: r = 0..8, 1000 calls, larger caps

Three maps of the benchmark tree (5 branches, N = 101), each for r = 0..8:

* ``inverse``: ``y_ID = [W₀; τ]`` by a world-frame Newton–Euler;
* ``forward``: ``y_FD = [V̇₀; q̈]`` built as the paper's Table 4 describes,
  the articulated-body algorithm with ``mtimes`` and one 6×6 ``solve`` for
  the base twist (:class:`liedyn.baselines.CasadiBaseline`,
  ``forward="articulated"``); the baseline of Fig. 4c;
* ``forward_mass_matrix``: ``y_FD`` through the whole (6+n) mass matrix (the
  Jacobian of the inverse map) and CasADi's sparse LDLᵀ
  (``forward="mass_matrix"``, the oracle of the tests), a second curve: its
  graph is about twice as large, so it is slower.

For each, ``d^r y/dt^r`` is built once (r nested ``jtimes``, one
``casadi.Function``, JIT off; construction time and graph size reported
separately), then evaluated at ``t = 0`` and timed in the same run,
interleaved, with ``liedyn.inverse_dynamics`` / ``liedyn.forward_dynamics``
of the same order. The statistic is the paper's, the mean time per call
(the CSV also has the smallest per-round median); each ratio is the median
of the per-pair ratios of the two alternated in one run
(:func:`experiments._timing.paired`; one pair for an order timed once, at
``--eval-cap``), with its quartiles (``casadi_over_liedyn_q1``, ``_q3``) and
the machine's 1-minute load average before and after (``load1_before``,
``load1_after``, ``cores``); the run says when these make the ratios
unreliable. Note
that the CasADi function of order r returns only the r-th derivative, while
the recursion of order r returns all orders 0..r.

The graph grows by a roughly constant factor per order, and so do the
construction time, the memory (≈ 100 bytes per node, measured as the peak
resident memory of a build divided by its node count at r = 3..4) and the
evaluation time. An order is not attempted when the growth of the earlier
orders predicts more memory than ``--max-gb`` or a construction longer than
``--build-cap``; after an order whose construction or single evaluation
exceeded its cap (``--build-cap``, ``--eval-cap``) or that ran out of memory,
the higher orders of that map are not attempted either (the recursion is
still timed there). Orders not measured are extrapolated with the law fitted
to the measured ones, ``log t = log a + r log γ`` (least squares, 95 %
interval of γ), printed, written to the CSV (``*_extrapolated`` columns) and
drawn hollow with dashed lines. The machine's memory is read at run time
(:func:`experiments._provenance.memory_gb`) and drawn as a line in panel (b);
it is shared with the system and other work, so ``--full`` attempts graphs
predicted to need up to 16 GB, so the r = 8 graphs (by the prediction about 20 GB for the inverse
map and 50 GB for the forward map) are extrapolated, not measured, and the
printed table says how much memory each would need.

Writes ``paper_figures/bench_casadi.csv`` and ``bench_casadi.png``
(``bench_casadi_full.*`` with ``--full``, ``--out DIR`` for another folder).
Every order is measured afresh; ``--resume`` keeps the finished orders of a
cut-short run measured on this machine at this code version.
"""

import resource
import time

import numpy as np

import liedyn
from liedyn.baselines import CasadiBaseline

from ._progress import heartbeat, progress as bar
from . import _bench as B
from . import _fit
from ._provenance import memory_gb
from ._table import num, select
from ._timing import (LOAD_FIELDS, load_columns, machine_load, paired, paired_stats,
                      ratio_columns, ratio_fields, time_calls_loaded)

FIELDS = ["kind", "N", "r", "status", "build_s", "nodes", "peak_rss_gb", "calls",
          "casadi_mean_s", "casadi_round_median_min_s", "liedyn_mean_s",
          "liedyn_round_median_min_s", *ratio_fields("casadi_over_liedyn"),
          "casadi_extrapolated_s", "nodes_extrapolated", "memory_extrapolated_gb", *LOAD_FIELDS]
KINDS = ("inverse", "forward", "forward_mass_matrix")
CONSTRUCTION = {"forward": "articulated", "forward_mass_matrix": "mass_matrix"}
LABELS = {"inverse": "inverse (Newton–Euler)",
          "forward": "forward, paper's construction (ABA, mtimes + 6×6 solve)",
          "forward_mass_matrix": "forward via (6+n) mass matrix + LDLᵀ"}
BYTES_PER_NODE = 100.0     # peak memory of a build per graph node (module docstring)
QUICK = dict(calls=100, build_cap=15.0, eval_cap=1.0, max_gb=0.4, budget=1.5)
FULL = dict(calls=B.CALLS_FULL, build_cap=900.0, eval_cap=30.0, max_gb=16.0, budget=120.0)
NOT_ATTEMPTED = "not attempted"


def _inputs(model, kind, r, rng, baseline):
    """``(p, liedyn call)``: random jets (Table 4), packed for CasADi, and the
    recursion of the same order on the same jets."""
    C0, Vb, q = B.inverse_inputs(model, r, rng)
    if kind == "inverse":
        p = baseline.pack_inverse_params(C0, Vb, q, r)
        return p, lambda: liedyn.inverse_dynamics(model, C0, Vb, q, r)
    res = liedyn.inverse_dynamics(model, C0, Vb, q, r)
    W, tau = res.base_wrench, res.tau
    p = baseline.pack_forward_params(C0, Vb[:r + 1], q[:r + 2], W, tau, r)
    return p, lambda: liedyn.forward_dynamics(model, C0, Vb[:1], q[:2], r, tau=tau, base_wrench=W)


def _baseline(model, kind):
    return CasadiBaseline(model, forward=CONSTRUCTION.get(kind, "mass_matrix"))


def _peak_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


def _predict(rows, field):
    """Next value of ``field`` by the growth factor of the last two measured rows."""
    vals = [num(x, field) for x in rows if x["status"] == "ok"]
    if len(vals) < 2 or not all(v > 0 for v in vals[-2:]):
        return float("nan")
    return vals[-1] * vals[-1] / vals[-2]


def run_kind(model, kind, table, args, caps, progress):
    """Orders 0..max of one map; returns the message why it stopped (or None).

    Orders that are not attempted still time the recursion, so the figure
    shows it over the whole range.
    """
    N, stop = model.n_bodies, None
    for r in range(args.max_order + 1):
        done = table.get(kind=kind, N=N, r=r)
        rng = np.random.default_rng(7000 + 10 * r + KINDS.index(kind))
        if done is not None and not done["status"].startswith(NOT_ATTEMPTED):
            if done["status"] != "ok" and stop is None:
                stop = f"{kind}: stopped after r = {r}: {done['status']} (kept by --resume)"
            progress.update()
            continue
        if done is not None:
            table.remove(kind=kind, N=N, r=r)
        if stop is None:
            prev = [x for x in table.select(kind=kind, N=N) if int(x["r"]) < r]
            gb_next = _predict(prev, "nodes") * BYTES_PER_NODE / 1e9
            build_next = _predict(prev, "build_s")
            if gb_next > caps["max_gb"]:
                stop = (f"{kind}: r = {r} {NOT_ATTEMPTED}: its graph would need ≈ {gb_next:.1f} GB "
                        f"> --max-gb {caps['max_gb']:g}")
            elif build_next > caps["build_cap"]:
                stop = (f"{kind}: r = {r} {NOT_ATTEMPTED}: predicted construction "
                        f"{build_next:.0f} s > --build-cap {caps['build_cap']:.0f} s")
        if stop is not None:
            _, recursion = _inputs(model, kind, r, rng, _baseline(model, kind))
            tl = B.time_call(recursion, caps["calls"], budget=caps["budget"])
            table.add(kind=kind, N=N, r=r, status=f"{NOT_ATTEMPTED} (cap)",
                      liedyn_mean_s=tl["mean"], liedyn_round_median_min_s=tl["round_median_min"])
            progress.update()
            continue
        with heartbeat(f"CasADi {kind}, r = {r}: building and timing", disable=args.no_progress):
            stop = _measure(model, kind, r, rng, table, caps)
        progress.update()
    return stop


def _measure(model, kind, r, rng, table, caps):
    """Build, check the caps, time; returns a stop message or None."""
    N = model.n_bodies
    baseline = _baseline(model, kind)
    try:
        f = baseline.inverse(r) if kind == "inverse" else baseline.forward(r)
    except MemoryError:
        table.add(kind=kind, N=N, r=r, status="out of memory while building")
        return f"{kind}: r = {r} ran out of memory while building the graph"
    build = baseline.build_seconds[("inverse" if kind == "inverse" else "forward", r)]
    p, recursion = _inputs(model, kind, r, rng, baseline)
    t0 = time.perf_counter()
    f(0.0, p)
    first = time.perf_counter() - t0
    row = dict(kind=kind, N=N, r=r, build_s=build, nodes=f.n_nodes(), peak_rss_gb=_peak_gb())
    if first > caps["eval_cap"]:
        before = machine_load()
        tl = B.time_call(recursion, caps["calls"], budget=caps["budget"])
        table.add(**row, status=f"eval-cap: one evaluation {first:.1f} s", calls=1,
                  casadi_mean_s=first, casadi_round_median_min_s=first, liedyn_mean_s=tl["mean"],
                  liedyn_round_median_min_s=tl["round_median_min"],
                  **ratio_columns("casadi_over_liedyn", paired_stats([first], [tl["median"]])),
                  **load_columns(before, machine_load()))
        return (f"{kind}: stopped after r = {r}: one evaluation took {first:.1f} s > --eval-cap "
                f"{caps['eval_cap']} s")
    t, load = time_calls_loaded({"casadi": lambda: f(0.0, p), "liedyn": recursion},
                                caps["calls"], budget=caps["budget"])
    tc, tl = t["casadi"], t["liedyn"]
    over = build > caps["build_cap"]
    table.add(**row, status=f"build-cap: construction {build:.0f} s" if over else "ok",
              calls=tc["calls"], casadi_mean_s=tc["mean"],
              casadi_round_median_min_s=tc["round_median_min"], liedyn_mean_s=tl["mean"],
              liedyn_round_median_min_s=tl["round_median_min"],
              **ratio_columns("casadi_over_liedyn", paired(tc, tl)), **load)
    if over:
        return (f"{kind}: stopped after r = {r}: construction took {build:.0f} s > --build-cap "
                f"{caps['build_cap']:.0f} s")
    return None


def growth_fits(rows, kind, N):
    """Geometric laws fitted to the measured orders of one map, from the rows
    (dicts, e.g. ``table.rows`` or the CSV's rows) of this benchmark:
    ``{"time": Fit of the mean evaluation time, "nodes": Fit of the graph
    size}``; empty with fewer than three measured orders."""
    rows = [x for x in select(rows, kind=kind, N=N) if x["casadi_mean_s"] and x["calls"] != "1"]
    if len(rows) < 3:
        return {}
    r = [num(x, "r") for x in rows]
    return {"time": _fit.fit("geometric", r, [num(x, "casadi_mean_s") for x in rows]),
            "nodes": _fit.fit("geometric", r, [num(x, "nodes") for x in rows])}


def extrapolate(table, N):
    """Fill the ``*_extrapolated`` columns of the orders that were not
    measured, from :func:`growth_fits`; returns the fits per kind."""
    out = {}
    for kind in KINDS:
        fits = growth_fits(table.rows, kind, N)
        out[kind] = fits
        if not fits:
            continue
        for x in table.select(kind=kind, N=N):
            if x["casadi_mean_s"] and x["calls"] != "1":
                continue
            r = num(x, "r")
            nodes = float(fits["nodes"].predict([r])[0])
            x["casadi_extrapolated_s"] = f"{float(fits['time'].predict([r])[0]):.6e}"
            x["nodes_extrapolated"] = f"{nodes:.3e}"
            x["memory_extrapolated_gb"] = f"{nodes * BYTES_PER_NODE / 1e9:.3g}"
    table.save()                               # the file with the filled columns
    return out


def report(table, N, fits):
    for kind in KINDS:
        rows = []
        for x in table.select(kind=kind, N=N):
            ratio = f"{num(x, 'casadi_over_liedyn'):.3g}" if x["casadi_over_liedyn"] else ""
            build = f"{num(x, 'build_s'):.2f}" if x["build_s"] else ""
            extra = ""
            if x["casadi_extrapolated_s"]:
                extra = (f"{B.us(num(x, 'casadi_extrapolated_s'))} µs, "
                         f"{num(x, 'memory_extrapolated_gb'):.3g} GB")
            rows.append([x["r"], build, x["nodes"], x["calls"], B.us(num(x, "casadi_mean_s")),
                         B.us(num(x, "liedyn_mean_s")), ratio, extra, x["status"]])
        head = ["r", "build s", "nodes", "calls", "AD mean µs", "liedyn mean µs",
                "AD/liedyn (median of pairs)", "extrapolated", "status"]
        B.print_table(f"CasADi {LABELS[kind]}, d^r y/dt^r at t = 0, N = {N} "
                      f"(graph construction separate, not timed per call)", head, rows)
        if fits.get(kind):
            g, lo, hi = fits[kind]["time"].gamma()
            gn, lon, hin = fits[kind]["nodes"].gamma()
            r = fits[kind]["time"].x
            print(f"  fit on r = {r.min():.0f}..{r.max():.0f}: evaluation time × {g:.2f} per order "
                  f"(95% CI {lo:.2f}..{hi:.2f}), graph size × {gn:.2f} ({lon:.2f}..{hin:.2f})")


def plot(table, N, stem, fits):
    fig, axes = B.plt.subplots(1, 3, figsize=(17.0, 4.8), layout="constrained")
    styles = {"inverse": ("C0", "o"), "forward": ("C3", "s"), "forward_mass_matrix": ("C1", "D")}
    max_r = 0
    for kind in KINDS:
        col, mk = styles[kind]
        every = table.select(kind=kind, N=N)
        max_r = max([max_r] + [int(x["r"]) for x in every])
        rows = [x for x in every if x["casadi_mean_s"]]
        r = [num(x, "r") for x in rows]
        axes[0].semilogy(r, [num(x, "casadi_mean_s") for x in rows], mk + "-", color=col,
                         label=f"CasADi AD, {LABELS[kind]}")
        ext = [x for x in every if x["casadi_extrapolated_s"]]
        if ext and rows:
            xr = [r[-1]] + [num(x, "r") for x in ext]
            xt = [num(rows[-1], "casadi_mean_s")] + [num(x, "casadi_extrapolated_s") for x in ext]
            axes[0].semilogy(xr, xt, mk + "--", color=col, mfc="none", lw=0.9,
                             label=f"  extrapolated, × {fits[kind]['time'].gamma()[0]:.2f} per order")
            axes[1].semilogy(xr, [num(rows[-1], "nodes") * BYTES_PER_NODE / 1e9]
                             + [num(x, "memory_extrapolated_gb") for x in ext], mk + "--",
                             color=col, mfc="none", lw=0.9)
        if kind != "forward_mass_matrix":
            rec = [x for x in every if x["liedyn_mean_s"]]
            axes[0].semilogy([num(x, "r") for x in rec], [num(x, "liedyn_mean_s") for x in rec],
                             "x:", color=col, ms=5,
                             label=f"liedyn {'inverse' if kind == 'inverse' else 'forward'}"
                                   f"_dynamics")
        axes[1].semilogy(r, [num(x, "nodes") * BYTES_PER_NODE / 1e9 for x in rows], mk + "-",
                         color=col, label=f"{kind}: graph memory [GB] (hollow: extrapolated)")
        axes[1].semilogy(r, [num(x, "build_s") for x in rows], "x:", color=col, ms=5,
                         label=f"{kind}: construction [s]")
        ok = [x for x in rows if x["casadi_over_liedyn"]]
        axes[2].semilogy([num(x, "r") for x in ok], [num(x, "casadi_over_liedyn") for x in ok],
                         mk + "-", color=col, label=LABELS[kind])
    machine_gb = memory_gb()
    if machine_gb is not None:
        axes[1].axhline(machine_gb, color="k", lw=0.8, ls="-.",
                        label=f"this machine's memory: {machine_gb:.0f} GB")
    axes[0].set(xlabel="derivative order r", ylabel="mean time per call [s]",
                title=f"(a) evaluation time, N = {N}; hollow/dashed: extrapolated")
    axes[1].set(xlabel="derivative order r", ylabel="GB  /  seconds",
                title="(b) CasADi graph: memory (≈ 100 B/node) and construction")
    axes[2].set(xlabel="derivative order r", ylabel="CasADi / liedyn time (median of paired ratios)",
                title="(c) ratio of evaluation times (same run)")
    for ax, where in zip(axes, ("upper left", "lower right", "lower right")):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc=where)
        ax.set_xticks(range(0, max_r + 1))
    return B.save(fig, stem)


def main(argv=None):
    ap = B.parser(__doc__, calls=(QUICK["calls"], FULL["calls"]), resume=True)
    ap.add_argument("--max-order", type=int, default=8, help="highest order r (default 8)")
    ap.add_argument("--n-bod", type=int, default=B.N_BOD_AT_101,
                    help=f"bodies per branch (default {B.N_BOD_AT_101}: N = 101)")
    for opt, what in (("build-cap", "seconds per construction"),
                      ("eval-cap", "seconds per evaluation"),
                      ("max-gb", f"largest predicted graph memory attempted, GB "
                                 f"(≈ {BYTES_PER_NODE:.0f} bytes per node)"),
                      ("budget", "seconds of timed calls per function")):
        key = opt.replace("-", "_")
        ap.add_argument(f"--{opt}", type=float, default=None,
                        help=f"{what} (default {QUICK[key]:g} quick, {FULL[key]:g} full)")
    args = ap.parse_args(argv)
    caps = dict(FULL if args.full else QUICK)
    for k in ("calls", "build_cap", "eval_cap", "max_gb", "budget"):
        if getattr(args, k) is not None:
            caps[k] = getattr(args, k)
    stem, table = B.open_table(args, "bench_casadi", FIELDS, ["kind", "N", "r"])
    model = B.tree(args.n_bod)
    stops = []
    with bar(total=len(KINDS) * (args.max_order + 1), desc="CasADi orders",
              disable=args.no_progress) as progress:
        for kind in KINDS:
            msg = run_kind(model, kind, table, args, caps, progress)
            if msg:
                stops.append(msg)
    fits = extrapolate(table, model.n_bodies)
    fresh = [x for x in table.rows if table._key(x) not in set(table.kept)]
    timed = sum(1 for x in fresh if x["casadi_mean_s"])
    print(f"measured {len(fresh)} rows in this run (CasADi timed at {timed} orders, the recursion "
          f"alone at the others), kept {len(table.kept)} ({table.stamp['machine']}; code "
          f"{table.stamp['code']})")
    report(table, model.n_bodies, fits)
    note = B.ratio_note(table.rows, FIELDS)
    if note:
        print(note)
    for msg in stops:
        print(f"stopped: {msg}")
    png = plot(table, model.n_bodies, stem, fits)
    print(f"\nwrote {stem}.csv and {png}")
    return table


if __name__ == "__main__":
    main()
