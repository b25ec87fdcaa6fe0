"""Summary of the benchmarks: the recursions and the CasADi AD baseline on one
log scale, with fitted growth laws (SPEC §9, the paper's Fig. 4).

    python -m experiments.bench_summary            # reads the quick CSVs (runs missing benchmarks)
    python -m experiments.bench_summary --full     # the same for the --full CSVs

Reads ``bench_inverse``, ``bench_forward`` and ``bench_casadi`` CSVs from
``paper_figures/`` (running a benchmark whose CSV is missing, in the same
mode) and fits, by linear least squares on the logarithms of the median times:

* against N, for each order r = 0..5: ``t = a N^α`` on the points with
  ``N ≥ --fit-min-n``, and ``t = c₀ + a' N^α'`` on all points (nonlinear
  least squares, relative residuals), whose constant ``c₀`` absorbs the
  fixed cost of a call (Python wrapper, checks, allocation; ≈ 15 µs) that
  pulls the plain α below 1 at small N; the recursions are O(N), so α' ≈ 1
  and α → 1 as N grows;
* against r at N = 101, for the recursions: ``t = a (r+1)^β`` over
  r = 0..10 and ``t = c₀ + a' r^β'`` (the exponent of the derivative work
  alone); the recursions cost O(N r²) with sizeable O(N r) and O(N) parts,
  so β' lies between 1 and 2 over r ≤ 10 and tends to 2 as r grows;
* against r for nested AD: ``t = a γ^r``, the growth factor γ per order, of
  the evaluation time, the construction time and the graph size.

Writes ``paper_figures/bench_summary.csv`` (the fits) and
``bench_summary.png`` (``_full`` suffix with ``--full``) and prints the fitted
exponents.
"""

import csv
from pathlib import Path

import numpy as np

from . import _bench as B
from . import bench_casadi, bench_forward, bench_inverse

FIT_FIELDS = ["quantity", "law", "parameter", "value", "fitted_on"]
SCRIPTS = {"bench_inverse": bench_inverse, "bench_forward": bench_forward,
           "bench_casadi": bench_casadi}


def _load(args, name):
    """Rows of one benchmark's CSV, running the benchmark first if it is missing."""
    stem = B.output_stem(args, name)
    path = Path(f"{stem}.csv")
    if not path.exists():
        print(f"{path.name} missing: running experiments.{name}")
        argv = ["--out", str(args.out)] + (["--full"] if args.full else [])
        SCRIPTS[name].main(argv + (["--no-progress"] if args.no_progress else []))
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _pick(rows, **where):
    return [x for x in rows if all(str(x[k]) == str(v) for k, v in where.items())]


def _xy(rows, xf, yf):
    x = np.array([B.num(r, xf) for r in rows])
    y = np.array([B.num(r, yf) for r in rows])
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def fits(inv, fwd, cas, fit_min_n):
    """All growth-law fits as rows of ``FIT_FIELDS`` plus curves for the figure."""
    out, curves = [], {}
    series = (("inverse", inv, "liedyn_median_s"), ("forward", fwd, "forward_median_s"))
    for name, rows, field in series:
        for r in B.ORDERS_VS_N:
            N, t = _xy(_pick(rows, sweep="N", r=r), "N", field)
            if N.size < 3:
                continue
            q = f"{name} dynamics r={r}"
            sel = N >= fit_min_n
            if sel.sum() >= 2:
                _, alpha = B.fit_power(N[sel], t[sel])
                out.append(dict(quantity=q, law="t = a N^alpha", parameter="alpha", value=alpha,
                                fitted_on=f"N = {N[sel].min():.0f}..{N[sel].max():.0f}"))
            c0, a, alpha_w = B.fit_offset_power(N, t)
            out.append(dict(quantity=q, law="t = c0 + a N^alpha'", parameter="alpha'",
                            value=alpha_w, fitted_on=f"N = {N.min():.0f}..{N.max():.0f}"))
            NN = np.geomspace(N.min(), N.max(), 50)
            curves[(name, "N", r)] = (NN, c0 + a * NN ** alpha_w, alpha_w)
        r, t = _xy(_pick(rows, sweep="r"), "r", field)
        if r.size >= 3:
            a, beta = B.fit_power(r + 1.0, t)
            out.append(dict(quantity=f"{name} dynamics N=101", law="t = a (r+1)^beta",
                            parameter="beta", value=beta, fitted_on=f"r = 0..{r.max():.0f}"))
            c0, a, beta_w = B.fit_offset_power(r, t)
            out.append(dict(quantity=f"{name} dynamics N=101", law="t = c0 + a r^beta'",
                            parameter="beta'", value=beta_w, fitted_on=f"r = 0..{r.max():.0f}"))
            rr = np.linspace(0.0, r.max(), 50)
            curves[(name, "r")] = (rr, c0 + a * rr ** beta_w, beta_w)
    for kind in bench_casadi.KINDS:
        rows = [x for x in _pick(cas, kind=kind) if x["casadi_median_s"]]
        for field, what in (("casadi_median_s", "evaluation time"), ("build_s", "construction time"),
                            ("nodes", "graph size")):
            r, y = _xy(rows, "r", field)
            if r.size >= 2:
                a, gamma = B.fit_exponential(r, y)
                out.append(dict(quantity=f"CasADi {kind} {what}", law="y = a gamma^r",
                                parameter="gamma", value=gamma,
                                fitted_on=f"r = {r.min():.0f}..{r.max():.0f}"))
                if field == "casadi_median_s":
                    rr = np.linspace(r.min(), r.max(), 50)
                    curves[("casadi", kind)] = (rr, a * gamma ** rr, gamma)
    return out, curves


def plot(inv, fwd, cas, curves, stem):
    fig, (ax1, ax2) = B.plt.subplots(1, 2, figsize=(12.5, 4.8), layout="constrained")
    series = (("inverse", inv, "liedyn_median_s", "C0"), ("forward", fwd, "forward_median_s", "C3"))
    for name, rows, field, col in series:
        for r, mk in ((0, "o"), (5, "s")):
            N, t = _xy(_pick(rows, sweep="N", r=r), "N", field)
            ax1.loglog(N, t, mk, color=col, ms=4, mfc="none" if r else col,
                       label=f"{name}, r = {r}")
            if (name, "N", r) in curves:
                x, y, alpha = curves[(name, "N", r)]
                ax1.loglog(x, y, "-" if r else ":", color=col, lw=1,
                           label=f"  fit c₀ + a N^{alpha:.2f}")
        r, t = _xy(_pick(rows, sweep="r"), "r", field)
        ax2.semilogy(r, t, "o", color=col, ms=4, label=f"liedyn {name}")
        if (name, "r") in curves:
            x, y, beta = curves[(name, "r")]
            ax2.semilogy(x, y, "-", color=col, lw=1,
                         label=f"  fit c₀ + a r^{beta:.2f}")
    for kind, col in (("inverse", "C0"), ("forward", "C3")):
        rows = [x for x in _pick(cas, kind=kind) if x["casadi_median_s"]]
        r, t = _xy(rows, "r", "casadi_median_s")
        ax2.semilogy(r, t, "s", color=col, ms=5, mfc="none", label=f"CasADi AD {kind}")
        if ("casadi", kind) in curves:
            x, y, gamma = curves[("casadi", kind)]
            ax2.semilogy(x, y, "--", color=col, lw=1, label=f"  fit ∝ {gamma:.2f}^r")
    ax1.set(xlabel="number of bodies N", ylabel="median time per call [s]",
            title="(a) recursions against tree size (5 branches)")
    ax2.set(xlabel="derivative order r", ylabel="median time per call [s]",
            title=f"(b) against derivative order, N = {B.n_bodies(B.N_BOD_AT_101)}")
    for ax in (ax1, ax2):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7.5, ncol=2 if ax is ax1 else 1)
    return B.save(fig, stem)


def main(argv=None):
    ap = B.parser(__doc__, timing=False)
    ap.add_argument("--fit-min-n", type=float, default=50.0,
                    help="smallest N used in the fits against N (default 50)")
    args = ap.parse_args(argv)
    inv = _load(args, "bench_inverse")
    fwd = _load(args, "bench_forward")
    cas = _load(args, "bench_casadi")
    rows, curves = fits(inv, fwd, cas, args.fit_min_n)
    stem = B.output_stem(args, "bench_summary")
    table = B.ResultTable(f"{stem}.csv", FIT_FIELDS, FIT_FIELDS[:3], fresh=True)
    for row in rows:
        table.add(**{**row, "value": f"{row['value']:.3g}"})
    B.print_table("fitted growth laws (least squares on log time)",
                  ["quantity", "law", "parameter", "value", "fitted on"],
                  [[x["quantity"], x["law"], x["parameter"], f"{x['value']:.3g}", x["fitted_on"]]
                   for x in rows])
    png = plot(inv, fwd, cas, curves, stem)
    print(f"\nwrote {stem}.csv and {png}")
    return rows


if __name__ == "__main__":
    main()
