"""Summary of the benchmarks: the paper's laws tested on the measured costs
(SPEC §9, the paper's Fig. 4).

    python -m experiments.bench_summary            # reads the quick CSVs (runs missing benchmarks)
    python -m experiments.bench_summary --full     # the same for the --full CSVs

Reads the ``bench_inverse``, ``bench_forward`` and ``bench_casadi`` CSVs of
the same mode from the output folder (running a benchmark whose CSV is
missing) and fits, by ordinary least squares (:mod:`experiments._fit`;
standard errors from the residual, 95 % intervals from Student's t):

* against N, for each order r = 0..5: ``t = c₀ + c₁ N`` (the paper: "grows
  linearly in N"), with the coefficients, their standard errors and the
  root-mean-square residual;
* against r at N = 101: ``t = c₀ + c₁ r + c₂ r²`` (the paper: "scales
  quadratically in r"), with the 95 % interval of ``c₂``; an interval above
  zero is the quadratic term the paper claims, one containing zero says the
  data cannot tell it from a linear cost over r ≤ 10;
* against r for nested AD: ``log t = log a + r log γ``, the growth factor γ
  per order with its interval (the paper: exponential), for the evaluation
  time and the graph size.

The statistic fitted is the paper's, the mean time per call; the same fits
on the robust statistic (smallest of the 10 per-round medians) are in the
table too, marked as such, since a shared machine's load inflates means.

Writes ``paper_figures/bench_summary.csv`` (the fits) and
``bench_summary.png`` (``bench_summary_full.*`` with ``--full``; ``--out DIR``).
"""

from pathlib import Path

import numpy as np

from . import _bench as B
from . import bench_casadi, bench_forward, bench_inverse
from ._provenance import stamp
from ._table import num, read_rows, select, write_rows

FIT_FIELDS = ["quantity", "statistic", "law", "parameter", "value", "std_error", "ci95_low",
              "ci95_high", "rms_residual", "unit", "fitted_on"]
SCRIPTS = {"bench_inverse": bench_inverse, "bench_forward": bench_forward,
           "bench_casadi": bench_casadi}
SERIES = (("inverse", "bench_inverse", "liedyn_mean_s"),
          ("forward", "bench_forward", "forward_mean_s"))
STATISTICS = (("mean", lambda f: f), ("min round median", B.robust_field))


def _load(args, name):
    """Rows of one benchmark's CSV, running the benchmark first if it is missing."""
    stem = B.output_stem(args, name)
    path = Path(f"{stem}.csv")
    if not path.exists():
        print(f"{path.name} missing: running experiments.{name}")
        argv = ["--out", str(args.out)] + (["--full"] if args.full else [])
        SCRIPTS[name].main(argv + (["--no-progress"] if args.no_progress else []))
    return read_rows(path)


def _xy(rows, xf, yf):
    x = np.array([num(r, xf) for r in rows])
    y = np.array([num(r, yf) for r in rows])
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def _rows_of(f, quantity, statistic, scale, unit, level=0.95):
    """Rows of ``FIT_FIELDS`` for every coefficient of one fit; times scaled
    to ``unit`` by ``scale``."""
    lo, hi = f.interval(level)
    span = f"{f.x.min():.0f}..{f.x.max():.0f}"
    var = "N" if f.kind == "linear" else "r"
    out = []
    for k, name in enumerate(f.names):
        out.append(dict(quantity=quantity, statistic=statistic, law=f.law, parameter=name,
                        value=f"{f.coef[k] * scale:.4g}", std_error=f"{f.se[k] * scale:.2g}",
                        ci95_low=f"{lo[k] * scale:.4g}", ci95_high=f"{hi[k] * scale:.4g}",
                        rms_residual=f"{f.rms * scale:.3g}", unit=unit,
                        fitted_on=f"{var} = {span} ({f.x.size} points)"))
    return out


def fits(inv, fwd, cas):
    """``(rows, curves)``: the fit table and the fitted laws for the figure
    (``curves[(name, "N", r)]``, ``curves[(name, "r")]`` on the means and
    ``curves[("casadi", kind)]``), from the benchmarks' own fits
    (:func:`experiments._bench.law_fits`, :func:`experiments.bench_casadi.growth_fits`)."""
    data = {"inverse": inv, "forward": fwd}
    n101 = B.n_bodies(B.N_BOD_AT_101)
    out, curves = [], {}
    for name, _, field in SERIES:
        for stat, column in STATISTICS:
            laws = B.law_fits(data[name], column(field))
            for r in B.ORDERS_VS_N:
                if ("N", r) in laws:
                    f = laws[("N", r)]
                    out += _rows_of(f, f"{name} dynamics, r = {r}", stat, 1e6, "µs, µs/body")
                    if stat == "mean":
                        curves[(name, "N", r)] = f
            if ("r",) in laws:
                f = laws[("r",)]
                out += _rows_of(f, f"{name} dynamics, N = {n101}", stat, 1e6, "µs")
                if stat == "mean":
                    curves[(name, "r")] = f
    for kind in bench_casadi.KINDS:
        growth = bench_casadi.growth_fits(cas, kind, n101)
        for key, what in (("time", "evaluation time"), ("nodes", "graph size")):
            if key in growth:
                f = growth[key]
                g, lo, hi = f.gamma()
                out.append(dict(quantity=f"CasADi {bench_casadi.LABELS[kind]}, {what}",
                                statistic="mean" if key == "time" else "",
                                law="y = a gamma^r", parameter="gamma", value=f"{g:.4g}",
                                std_error="", ci95_low=f"{lo:.4g}", ci95_high=f"{hi:.4g}",
                                rms_residual=f"{f.rms:.3g} (log y)", unit="factor per order",
                                fitted_on=f"r = {f.x.min():.0f}..{f.x.max():.0f} "
                                          f"({f.x.size} points)"))
                if key == "time":
                    curves[("casadi", kind)] = f
    return out, curves


def print_fits(rows):
    """One line per fit: every coefficient with its standard error (or, for
    γ, its interval); the 95 % interval of the highest coefficient."""
    groups = {}
    for x in rows:
        groups.setdefault((x["quantity"], x["statistic"], x["law"]), []).append(x)
    lines = []
    for (quantity, statistic, law), coefs in groups.items():
        last = coefs[-1]
        parts = [f"{c['parameter']} = {c['value']}" + (f" ± {c['std_error']}" if c["std_error"] else "")
                 for c in coefs]
        lines.append([quantity, statistic, law, ", ".join(parts),
                      f"{last['parameter']}: [{last['ci95_low']}, {last['ci95_high']}]",
                      last["rms_residual"], last["unit"], last["fitted_on"]])
    B.print_table("the paper's laws, ordinary least squares (± standard errors from the residual; "
                  "95% interval from Student's t)",
                  ["quantity", "statistic", "law", "coefficients", "95% CI", "rms residual",
                   "unit", "fitted on"], lines)


def plot(inv, fwd, cas, curves, stem):
    fig, (ax1, ax2, ax3) = B.plt.subplots(1, 3, figsize=(17.5, 5.0), layout="constrained")
    data = {"inverse": inv, "forward": fwd}
    n101 = B.n_bodies(B.N_BOD_AT_101)
    for (name, _, field), col in zip(SERIES, ("C0", "C3")):
        rows = data[name]
        for r, mk in ((0, "o"), (5, "s")):
            N, t = _xy(select(rows, sweep="N", r=r), "N", field)
            ax1.plot(N, t * 1e6, mk, color=col, ms=4, label=f"{name}, r = {r}")
            if (name, "N", r) in curves:
                f = curves[(name, "N", r)]
                NN = np.linspace(0.0, N.max(), 50)
                ax1.plot(NN, f.predict(NN) * 1e6, "-", color=col, lw=1,
                         label=f"  fit: c₀ = {f.coef[0] * 1e6:.1f} µs, "
                               f"c₁ = {f.coef[1] * 1e6:.3f} µs/body")
        r, t = _xy(select(rows, sweep="r"), "r", field)
        ax2.plot(r, t * 1e6, "o", color=col, ms=4, label=f"liedyn {name}")
        if (name, "r") in curves:
            f = curves[(name, "r")]
            lo, hi = f.interval()
            rr = np.linspace(0.0, r.max(), 60)
            ax2.plot(rr, f.predict(rr) * 1e6, "-", color=col, lw=1,
                     label=f"  fit: c₂ = {f.coef[2] * 1e6:.3f} µs, "
                           f"95% CI [{lo[2] * 1e6:.3f}, {hi[2] * 1e6:.3f}]")
        ax3.semilogy(r, t, "x:", color=col, ms=5, label=f"liedyn {name}")
    for kind, col, mk in (("inverse", "C0", "o"), ("forward", "C3", "s"),
                          ("forward_mass_matrix", "C1", "D")):
        every = select(cas, kind=kind)
        rows = [x for x in every if x["casadi_mean_s"]]
        r, t = _xy(rows, "r", "casadi_mean_s")
        ax3.semilogy(r, t, mk + "-", color=col, ms=5, label=f"CasADi {bench_casadi.LABELS[kind]}")
        ext = [x for x in every if x["casadi_extrapolated_s"]]
        if ext and r.size and ("casadi", kind) in curves:
            g = curves[("casadi", kind)].gamma()
            ax3.semilogy([r[-1]] + [num(x, "r") for x in ext],
                         [t[-1]] + [num(x, "casadi_extrapolated_s") for x in ext], mk + "--",
                         color=col, mfc="none", lw=0.9,
                         label=f"  extrapolated: × {g[0]:.2f} per order (95% CI {g[1]:.2f}..{g[2]:.2f})")
    ax1.set(xlabel="number of bodies N", ylabel=B.MEAN_LABEL,
            title="(a) recursions against N (5 branches); lines: c₀ + c₁N")
    ax2.set(xlabel="derivative order r", ylabel=B.MEAN_LABEL,
            title=f"(b) recursions against r, N = {n101}; lines: c₀ + c₁r + c₂r²")
    ax3.set(xlabel="derivative order r", ylabel="mean time per call [s] (log scale)",
            title=f"(c) CasADi AD against the recursions, N = {n101}")
    for ax in (ax1, ax2):
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
    for ax in (ax1, ax2, ax3):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
    return B.save(fig, stem)


def main(argv=None):
    ap = B.parser(__doc__)
    args = ap.parse_args(argv)
    inv = _load(args, "bench_inverse")
    fwd = _load(args, "bench_forward")
    cas = _load(args, "bench_casadi")
    rows, curves = fits(inv, fwd, cas)
    stem = B.output_stem(args, "bench_summary")
    codes = sorted({x["code"] for x in inv + fwd + cas if "code" in x})
    print(f"fitted to the rows of code version(s) {', '.join(codes) or 'unknown'}")
    write_rows(f"{stem}.csv", FIT_FIELDS, rows, stamp=stamp())
    print_fits(rows)
    png = plot(inv, fwd, cas, curves, stem)
    print(f"\nwrote {stem}.csv and {png}")
    return rows


if __name__ == "__main__":
    main()
