"""Cost of r-th time derivatives by nested automatic differentiation (the
paper's CasADi baseline, SPEC §9) against the recursions, at N = 101.

    python -m experiments.bench_casadi            # quick: caps keep it to a few minutes
    python -m experiments.bench_casadi --full     # Table 4: r = 0..8, 1000 calls, larger caps

For the inverse map ``y_ID = [W₀; τ]`` and the forward map ``y_FD = [V̇₀; q̈]``
of the benchmark tree (5 branches, N = 101) and each order r = 0..8,
:class:`liedyn.baselines.CasadiBaseline` builds ``d^r y/dt^r`` once (r nested
``jtimes``, one ``casadi.Function``, JIT off; the construction time and the
graph size are reported separately), then the function is evaluated at
``t = 0`` and timed together with ``liedyn.inverse_dynamics`` /
``liedyn.forward_dynamics`` of the same order, interleaved in the same run.
Note that the CasADi function of order r returns only the r-th derivative,
while the recursion of order r returns all orders 0..r.

The graph grows by a roughly constant factor per order, and so do the
construction time, the memory and the evaluation time. An order is not
attempted when the growth of the previous orders predicts more than
``--max-nodes`` graph nodes or a construction longer than ``--build-cap``;
after an order whose construction or single evaluation exceeded its cap
(``--build-cap``, ``--eval-cap``) or that ran out of memory, the higher
orders of that map are not attempted either (the recursion is still timed
there). Every stop is printed and recorded in the CSV (``status``); orders
not attempted are decided again on a rerun, with the caps then given. With ``--budget`` the number of timed calls of a slow function
is cut so that its timing takes about that many seconds (the CSV records the
number of calls).

Writes ``paper_figures/bench_casadi.csv`` and ``bench_casadi.png`` (``_full``
suffix with ``--full``); finished rows are kept and skipped on rerun unless
``--fresh``.
"""

import time

import numpy as np
from tqdm import tqdm

import liedyn
from liedyn.baselines import CasadiBaseline

from . import _bench as B

FIELDS = ["kind", "N", "r", "status", "build_s", "nodes", "calls", "casadi_mean_s",
          "casadi_median_s", "liedyn_mean_s", "liedyn_median_s", "casadi_over_liedyn"]
KINDS = ("inverse", "forward")
QUICK = dict(calls=100, build_cap=60.0, eval_cap=1.0, max_nodes=4.0e7, budget=5.0)
FULL = dict(calls=B.CALLS_FULL, build_cap=900.0, eval_cap=30.0, max_nodes=1.0e8, budget=120.0)


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
    return p, lambda: liedyn.forward_dynamics(model, C0, Vb[0], q[0], q[1], W, tau, r)


def _predict(rows, field):
    """Next value of ``field`` by the growth factor of the last two rows."""
    vals = [B.num(x, field) for x in rows if x["status"] == "ok"]
    if len(vals) < 2 or not all(v > 0 for v in vals[-2:]):
        return float("nan")
    return vals[-1] * vals[-1] / vals[-2]


NOT_ATTEMPTED = "not attempted"


def run_kind(model, kind, table, args, caps, progress):
    """Orders 0..max of one map; returns the message why it stopped (or None).

    Orders that are not attempted still time the recursion, so the figure
    shows it over the whole range; such rows are decided again on a rerun
    (the caps may have changed).
    """
    N, stop = model.n_bodies, None
    for r in range(args.max_order + 1):
        done = table.get(kind=kind, N=N, r=r)
        if done is not None and done["status"].startswith(NOT_ATTEMPTED):
            table.remove(kind=kind, N=N, r=r)
            done = None
        rng = np.random.default_rng(7000 + 10 * r + KINDS.index(kind))
        if done is not None:
            if done["status"] != "ok" and stop is None:
                stop = f"{kind}: stopped after r = {r}: {done['status']} (earlier run)"
            progress.update()
            continue
        if stop is None:
            prev = [x for x in table.select(kind=kind, N=N) if int(x["r"]) < r]
            nodes_next, build_next = _predict(prev, "nodes"), _predict(prev, "build_s")
            if nodes_next > caps["max_nodes"]:
                stop = (f"{kind}: r = {r} {NOT_ATTEMPTED}: predicted graph of {nodes_next:.1e} "
                        f"nodes > --max-nodes {caps['max_nodes']:.1e}")
            elif build_next > caps["build_cap"]:
                stop = (f"{kind}: r = {r} {NOT_ATTEMPTED}: predicted construction "
                        f"{build_next:.0f} s > --build-cap {caps['build_cap']:.0f} s")
        if stop is not None:
            _, recursion = _inputs(model, kind, r, rng, CasadiBaseline(model))
            tl = B.time_call(recursion, caps["calls"], budget=caps["budget"])
            table.add(kind=kind, N=N, r=r, status=f"{NOT_ATTEMPTED} (cap)",
                      liedyn_mean_s=tl["mean"], liedyn_median_s=tl["median"])
            progress.update()
            continue
        stop = _measure(model, kind, r, rng, table, caps)
        progress.update()
    return stop


def _measure(model, kind, r, rng, table, caps):
    """Build, check the caps, time; returns a stop message or None."""
    N = model.n_bodies
    baseline = CasadiBaseline(model)
    try:
        f = baseline.inverse(r) if kind == "inverse" else baseline.forward(r)
    except MemoryError:
        table.add(kind=kind, N=N, r=r, status="out of memory while building")
        return f"{kind}: r = {r} ran out of memory while building the graph"
    build = baseline.build_seconds[(kind, r)]
    p, recursion = _inputs(model, kind, r, rng, baseline)
    t0 = time.perf_counter()
    f(0.0, p)
    first = time.perf_counter() - t0
    row = dict(kind=kind, N=N, r=r, build_s=build, nodes=f.n_nodes())
    if first > caps["eval_cap"]:
        tl = B.time_call(recursion, caps["calls"], budget=caps["budget"])
        table.add(**row, status=f"eval-cap: one evaluation {first:.1f} s", calls=1,
                  casadi_mean_s=first, casadi_median_s=first, liedyn_mean_s=tl["mean"],
                  liedyn_median_s=tl["median"], casadi_over_liedyn=first / tl["median"])
        return f"{kind}: stopped after r = {r}: one evaluation took {first:.1f} s > --eval-cap {caps['eval_cap']} s"
    t = B.time_calls({"casadi": lambda: f(0.0, p), "liedyn": recursion}, caps["calls"],
                     budget=caps["budget"])
    tc, tl = t["casadi"], t["liedyn"]
    over = build > caps["build_cap"]
    table.add(**row, status=f"build-cap: construction {build:.0f} s" if over else "ok",
              calls=tc["calls"], casadi_mean_s=tc["mean"], casadi_median_s=tc["median"],
              liedyn_mean_s=tl["mean"], liedyn_median_s=tl["median"],
              casadi_over_liedyn=tc["median"] / tl["median"])
    if over:
        return f"{kind}: stopped after r = {r}: construction took {build:.0f} s > --build-cap {caps['build_cap']:.0f} s"
    return None


def report(table, N):
    for kind in KINDS:
        rows = []
        for x in table.select(kind=kind, N=N):
            ratio = f"{B.num(x, 'casadi_over_liedyn'):.3g}" if x["casadi_over_liedyn"] else ""
            build = f"{B.num(x, 'build_s'):.2f}" if x["build_s"] else ""
            rows.append([x["r"], build, x["nodes"], x["calls"], B.us(B.num(x, "casadi_mean_s")),
                         B.us(B.num(x, "casadi_median_s")), B.us(B.num(x, "liedyn_median_s")),
                         ratio, x["status"]])
        head = ["r", "build s", "nodes", "calls", "AD mean µs", "AD median µs",
                "liedyn median µs", "AD/liedyn", "status"]
        B.print_table(f"CasADi {kind} map, d^r y/dt^r at t = 0, N = {N} "
                      f"(graph construction separate, not timed per call)", head, rows)


def plot(table, N, stem):
    fig, axes = B.plt.subplots(1, 3, figsize=(15.6, 4.3), layout="constrained")
    styles = {"inverse": ("C0", "o"), "forward": ("C3", "s")}
    for kind in KINDS:
        col, mk = styles[kind]
        rows = [x for x in table.select(kind=kind, N=N) if x["casadi_median_s"]]
        r = [B.num(x, "r") for x in rows]
        axes[0].semilogy(r, [B.num(x, "casadi_median_s") for x in rows], mk + "-", color=col,
                         label=f"CasADi AD, {kind}")
        ok = [x for x in rows if x["liedyn_median_s"]]
        rec = [x for x in table.select(kind=kind, N=N) if x["liedyn_median_s"]]
        axes[0].semilogy([B.num(x, "r") for x in rec], [B.num(x, "liedyn_median_s") for x in rec],
                         mk + "--", color=col, mfc="none", label=f"liedyn, {kind}")
        axes[1].semilogy(r, [B.num(x, "build_s") for x in rows], mk + "-", color=col,
                         label=f"{kind}: construction time [s]")
        axes[1].semilogy(r, [B.num(x, "nodes") * 1e-6 for x in rows], mk + ":", color=col,
                         mfc="none", label=f"{kind}: graph size [10⁶ nodes]")
        axes[2].semilogy([B.num(x, "r") for x in ok],
                         [B.num(x, "casadi_over_liedyn") for x in ok], mk + "-", color=col,
                         label=kind)
        skipped = [x for x in table.select(kind=kind, N=N) if not x["casadi_median_s"]]
        if skipped:
            axes[0].axvline(B.num(skipped[0], "r") - 0.5, color=col, lw=0.8, ls="-.",
                            label=f"CasADi {kind}: caps stop it from r = {skipped[0]['r']}")
    axes[0].set(xlabel="derivative order r", ylabel="median time per call [s]",
                title=f"(a) evaluation time, N = {N}")
    axes[1].set(xlabel="derivative order r", ylabel="seconds / millions of nodes",
                title="(b) CasADi graph construction (once per r)")
    axes[2].set(xlabel="derivative order r", ylabel="CasADi time / liedyn time",
                title="(c) ratio of evaluation times (same run)")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_xticks(range(0, 9))
    return B.save(fig, stem)


def main(argv=None):
    ap = B.parser(__doc__, (QUICK["calls"], FULL["calls"]))
    ap.add_argument("--max-order", type=int, default=8, help="highest order r (default 8)")
    ap.add_argument("--n-bod", type=int, default=B.N_BOD_AT_101,
                    help=f"bodies per branch (default {B.N_BOD_AT_101}: N = 101)")
    for opt, what in (("build-cap", "seconds per construction"),
                      ("eval-cap", "seconds per evaluation"),
                      ("max-nodes", "largest graph attempted, in nodes (~75 bytes of memory each)"),
                      ("budget", "seconds of timed calls per function")):
        key = opt.replace("-", "_")
        ap.add_argument(f"--{opt}", type=float, default=None,
                        help=f"{what} (default {QUICK[key]:g} quick, {FULL[key]:g} full)")
    args = ap.parse_args(argv)
    caps = dict(FULL if args.full else QUICK)
    for k in ("calls", "build_cap", "eval_cap", "max_nodes", "budget"):
        if getattr(args, k) is not None:
            caps[k] = getattr(args, k)
    stem = B.output_stem(args, "bench_casadi")
    table = B.ResultTable(f"{stem}.csv", FIELDS, ["kind", "N", "r"], fresh=args.fresh,
                          stamp=B.machine())
    model = B.tree(args.n_bod)
    stops = []
    with tqdm(total=len(KINDS) * (args.max_order + 1), desc="CasADi orders",
              disable=args.no_progress) as progress:
        for kind in KINDS:
            msg = run_kind(model, kind, table, args, caps, progress)
            if msg:
                stops.append(msg)
    report(table, model.n_bodies)
    for msg in stops:
        print(f"stopped: {msg}")
    png = plot(table, model.n_bodies, stem)
    print(f"\nwrote {stem}.csv and {png}")
    return table


if __name__ == "__main__":
    main()
