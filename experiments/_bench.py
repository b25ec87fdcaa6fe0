"""Shared machinery of the benchmark scripts (``bench_*.py``): timing a
callable, the benchmark tree sizes of SPEC §9, random inputs, optional
Pinocchio counterparts, the sweep, the fits of the paper's laws and the
figures. CSV tables are in :mod:`experiments._table`, fits in
:mod:`experiments._fit`, provenance in :mod:`experiments._provenance`.

Timing protocol (SPEC §9, Table 4): a few warm-up calls, then ``calls``
calls each timed with ``time.perf_counter``, in rounds interleaved with the
other callables of the same point. The statistic is the paper's, the **mean
time per call** (elapsed time / calls); the CSV also records, as a robust
statistic on a shared machine, the **smallest of the per-round medians**
(``*_round_median_min_s``; 10 rounds). Every comparison is the median of
the per-pair ratios of two callables alternated in the same run
(:func:`experiments._timing.paired`).
"""

import argparse
from pathlib import Path

import matplotlib
import numpy as np

from models.trees import benchmark_tree

from . import _fit
from ._progress import progress
from ._provenance import machine, now, stamp
from ._table import ResultTable, num, output_stem, select
from ._timing import reliability_note, rows_unreliable
from ._timing import time_call, time_calls, time_calls_loaded  # noqa: F401  (the benchmarks' timer)

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


def n_bodies(n_bod):
    return 1 + N_BRANCHES * n_bod


def tree(n_bod):
    """The benchmark tree of SPEC §9 with ``n_bod`` bodies per branch."""
    return benchmark_tree(n_branches=N_BRANCHES, bodies_per_branch=n_bod)


# ---------------------------------------------------------------- printing --

def print_table(title, header, rows):
    """Print ``rows`` (lists of strings) under ``header`` as aligned columns."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(header)]
    print(f"\n{title}")
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(str(c).rjust(w) for c, w in zip(r, widths)))


def markdown_page(title, full, table, notes):
    """A benchmark's Markdown page: ``# title`` (`` (full)`` with ``--full``),
    the table, the notes (ending in a blank line), and when and on what
    machine it was measured."""
    return (f"# {title}{' (full)' if full else ''}\n\n{table}{notes}"
            f"Measured {now()} on {machine()}.\n")


def us(seconds):
    """Seconds as a short microsecond string."""
    return "" if not np.isfinite(seconds) else f"{seconds * 1e6:.1f}"


def ratio_note(rows, columns):
    """The sentence saying that the paired ratios of ``rows`` (the columns
    among ``columns`` that have ``_q1``, ``_q3`` beside them) are unreliable
    by the load rule (:func:`experiments._timing.rows_unreliable`); empty
    when they may be quoted."""
    names = [c for c in columns if f"{c}_q1" in columns and f"{c}_q3" in columns]
    return reliability_note(rows_unreliable(rows, names))


# ------------------------------------------------------------- arguments --

def parser(doc, *, calls=None, resume=False, sizes=False, pinocchio=False):
    """Arguments of a script: always ``--quick``/``--full``, ``--out`` and
    ``--no-progress``; then only the options the script honours:
    ``calls=(quick, full)`` adds ``--calls`` with these defaults (read back
    by :func:`calls_for`), ``resume`` adds ``--resume`` (:func:`open_table`),
    ``sizes`` adds ``--n-bod-max`` (:func:`sweep_points`) and ``pinocchio``
    adds ``--pin-max-gb`` (:func:`pinocchio_calls`)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small sweep, minutes (default)")
    mode.add_argument("--full", action="store_true",
                      help="the paper's Table 4 sizes; writes *_full.csv / *_full.png")
    if calls is not None:
        quick, full = calls
        ap.add_argument("--calls", type=int, default=None,
                        help=f"timed calls per point (default {quick} quick, {full} full)")
        ap.set_defaults(calls_default=(quick, full))
    if resume:
        ap.add_argument("--resume", action="store_true",
                        help="keep the rows of an earlier, cut-short run measured on this "
                             "machine at this code version (default: measure every row afresh)")
    if sizes:
        ap.add_argument("--n-bod-max", type=int, default=None,
                        help="leave out tree sizes with more bodies per branch (a shorter trial)")
    if pinocchio:
        ap.add_argument("--pin-max-gb", type=float, default=PIN_MAX_GB,
                        help=f"time Pinocchio only where its Data needs at most this many GB "
                             f"(≈ {PIN_BYTES_PER_NV3:.0f}·nv³ bytes; default {PIN_MAX_GB})")
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    ap.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    return ap


def calls_for(args):
    """``--calls``, or the default of the mode given to :func:`parser`."""
    if args.calls is not None:
        return args.calls
    quick, full = args.calls_default
    return full if args.full else quick


def open_table(args, name, fields, key):
    """``(stem, table)``: the :class:`ResultTable` ``<stem>.csv`` of
    :func:`output_stem` with the provenance stamp, measured afresh or, with
    ``--resume``, keeping the rows of this machine and code version (printed)."""
    stem = output_stem(args, name)
    table = ResultTable(f"{stem}.csv", fields, key, stamp=stamp(), resume=args.resume)
    note = table.resume_note()
    if note:
        print(note)
    return stem, table


# ----------------------------------------------------------------- sweeps --

ORDERS_VS_N = tuple(range(6))     # r = 0..5 against N
ORDERS_VS_R = tuple(range(11))    # r = 0..10 at N = 101


def sweep_points(args):
    """``(sweep, n_bod, r)`` of SPEC §9: ``"N"`` over the tree sizes for
    r = 0..5, then ``"r"`` at N = 101 for r = 0..10."""
    sizes = N_BOD_FULL if args.full else N_BOD_QUICK
    if getattr(args, "n_bod_max", None) is not None:
        sizes = [nb for nb in sizes if nb <= args.n_bod_max]
    pts = [("N", nb, r) for nb in sizes for r in ORDERS_VS_N]
    return pts + [("r", N_BOD_AT_101, r) for r in ORDERS_VS_R]


def run_sweep(args, table, callables, fields, desc):
    """Measure every sweep point missing from ``table``.

    The orders of one tree size are timed together, interleaved round by
    round (:func:`time_calls`), so that a burst of other load on the machine
    falls on all of them alike. ``callables(model, r, args, rng)`` gives the
    zero-argument callables of one point (a dict name → callable) and
    ``fields(times)`` turns their timings (name → stats) into the fields of
    its row; every row also gets the machine's load before and after its
    size was timed (:func:`experiments._timing.load_columns`). Rows are
    appended to the CSV as soon as their size is done.
    Returns the number of points measured in this run (the others were
    kept by ``--resume``).
    """
    groups = {}
    for sweep, n_bod, r in sweep_points(args):
        if table.get(sweep=sweep, n_bod=n_bod, r=r) is None:
            groups.setdefault((sweep, n_bod), []).append(r)
    done = 0
    with progress(total=sum(map(len, groups.values())), desc=desc,
                  disable=args.no_progress) as bar:
        model, built = None, None
        for (sweep, n_bod), orders in groups.items():
            if built != n_bod:
                model, built = tree(n_bod), n_bod
            fns = {}
            for r in orders:
                rng = np.random.default_rng(1000 * n_bod + r)
                fns.update({(r, name): fn for name, fn in callables(model, r, args, rng).items()})
            times, load = time_calls_loaded(fns, calls_for(args))
            for r in orders:
                t = {name: v for (rr, name), v in times.items() if rr == r}
                table.add(sweep=sweep, n_bod=n_bod, N=n_bodies(n_bod), r=r, **fields(t), **load)
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
    ``[q; q̇]``, zero wrench and torque jets: ``(C₀, V₀ (1, 6), q (2, n), W₀, τ)``."""
    n = model.n_joints
    return (np.eye(4), np.zeros((1, 6)), rng.normal(size=(2, n)),
            np.zeros((order + 1, 6)), np.zeros((order + 1, n)))


def pinocchio_fits(model, max_gb=PIN_MAX_GB):
    """Whether Pinocchio's ``Data`` for ``model`` needs at most ``max_gb`` GB:
    it allocates buffers cubic in ``nv`` (second-order derivative tensors),
    measured at ``PIN_BYTES_PER_NV3 · nv³`` bytes, which is 65 GB at N = 996."""
    return PIN_BYTES_PER_NV3 * (model.nv ** 3) <= max_gb * 1e9


def pinocchio_derivative_calls(pin, pmod, pdata, q, v, a, tau, jerk, tau_dot):
    """``(rnea_d1, aba_d1)``: the first time derivative of inverse and forward
    dynamics the way a Pinocchio user gets it, in Pinocchio's conventions:
    ``τ̇ = ∂τ/∂q v + ∂τ/∂v a + M jerk`` after ``computeRNEADerivatives(q, v, a)``
    and ``q⃛ = ∂q̈/∂q v + ∂q̈/∂v q̈ + M⁻¹ τ̇`` after ``computeABADerivatives(q,
    v, tau)`` (``q̈`` the acceleration that call computes); ``v``, ``a``,
    ``tau``, ``jerk``, ``tau_dot`` ``(nv,)``."""

    def rnea_d1():
        pin.computeRNEADerivatives(pmod, pdata, q, v, a)
        return pdata.dtau_dq @ v + pdata.dtau_dv @ a + pdata.M @ jerk

    def aba_d1():
        pin.computeABADerivatives(pmod, pdata, q, v, tau)
        return pdata.ddq_dq @ v + pdata.ddq_dv @ pdata.ddq + pdata.Minv @ tau_dot

    return rnea_d1, aba_d1


def pinocchio_calls(model, rng, max_gb=PIN_MAX_GB, derivatives=False):
    """``(rnea, aba)``: zero-argument callables running Pinocchio's own
    ``rnea`` and ``aba`` on the same tree at a random state (raw calls, no
    convention conversion inside the timing), or ``None`` when Pinocchio or
    the test oracle that mirrors liedyn models is not available, or when
    Pinocchio's ``Data`` would need more than ``max_gb`` GB
    (:func:`pinocchio_fits`). Draws ``q``, ``v``, ``a`` from ``rng``; ``aba``
    takes a zero ``τ``. With ``derivatives`` it then draws ``τ`` (taken by
    ``aba``) and a jerk (also used as ``τ̇``), and appends the derivative routes
    of :func:`pinocchio_derivative_calls`: ``(rnea, aba, rnea_d1, aba_d1)``."""
    if not pinocchio_fits(model, max_gb):
        return None
    try:
        import pinocchio as pin
        from liedyn.interop.pinocchio import to_pinocchio
    except ImportError:
        return None
    pm = to_pinocchio(model)
    pmod, pdata = pm.model, pm.data
    qp = pm.config_to_pin(np.eye(4), rng.normal(size=model.n_joints))
    v, a = rng.normal(size=pmod.nv), rng.normal(size=pmod.nv)
    if derivatives:
        tau, jerk = rng.normal(size=pmod.nv), rng.normal(size=pmod.nv)
    else:
        tau = np.zeros(pmod.nv)
    calls = (lambda: pin.rnea(pmod, pdata, qp, v, a), lambda: pin.aba(pmod, pdata, qp, v, tau))
    if not derivatives:
        return calls
    return calls + pinocchio_derivative_calls(pin, pmod, pdata, qp, v, a, tau, jerk, jerk)


# ------------------------------------------------------------------- fits --

def law_fits(rows, field):
    """The paper's laws fitted to the rows (dicts, e.g. ``table.rows`` or a
    CSV's rows) of one recursion benchmark (:mod:`experiments._fit`):
    ``{("N", r): linear fit of t = c₀ + c₁ N at order r, ("r",): quadratic fit
    of t = c₀ + c₁ r + c₂ r² at N = 101}``, times in seconds; sweeps with too
    few points are left out."""
    out = {}
    for r in ORDERS_VS_N:
        sel = select(rows, sweep="N", r=r)
        if len(sel) >= 3:
            out[("N", r)] = _fit.fit("linear", [num(x, "N") for x in sel],
                                     [num(x, field) for x in sel])
    sel = select(rows, sweep="r")
    if len(sel) >= 4:
        out[("r",)] = _fit.fit("quadratic", [num(x, "r") for x in sel],
                               [num(x, field) for x in sel])
    return out


def describe_linear(f):
    """``c₀ = … µs, c₁ = … µs per body, rms residual … µs``."""
    (c0, c1), (s0, s1) = f.coef * 1e6, f.se * 1e6
    return (f"c0 = {c0:.2f} ± {s0:.2f} µs, c1 = {c1:.4f} ± {s1:.4f} µs/body, "
            f"rms residual {f.rms * 1e6:.2f} µs ({f.rms / np.mean(f.predict(f.x)):.1%})")


def describe_quadratic(f, level=0.95):
    """``c₀, c₁, c₂`` with standard errors and the interval of ``c₂``."""
    (c0, c1, c2), (s0, s1, s2) = f.coef * 1e6, f.se * 1e6
    lo, hi = (v[2] * 1e6 for v in f.interval(level))
    return (f"c0 = {c0:.2f} ± {s0:.2f} µs, c1 = {c1:.3f} ± {s1:.3f} µs, c2 = {c2:.4f} ± "
            f"{s2:.4f} µs, {level:.0%} CI of c2 [{lo:.4f}, {hi:.4f}] µs, rms residual "
            f"{f.rms * 1e6:.2f} µs")


# ------------------------------------------------------------------ plots --

def colors(k):
    return plt.get_cmap("viridis")(np.linspace(0.0, 0.9, k))


MEAN_LABEL = "mean time per call [µs]"


def robust_field(field):
    """The robust column next to a mean column: ``x_mean_s`` → ``x_round_median_min_s``."""
    return field.replace("_mean_s", "_round_median_min_s")


ROBUST_LABEL = "hollow: smallest of 10 per-round medians"


def plot_sweeps(table, stem, title, field, ws_field=None, ref_field=None, ref_label=None,
                ratio=None):
    """The figure of a recursion benchmark, on linear axes as in the paper:
    (a) mean time per call against N, one colour per order, filled points
    the call without ``workspace=`` (``field``) and lines its fitted
    ``t = c₀ + c₁ N``, crosses the same call with a reused workspace
    (``ws_field``), ``ref_field`` in black (order 0); (b) against r at
    N = 101 with the fitted ``t = c₀ + c₁ r + c₂ r²``; hollow points the
    robust statistic of ``field`` (not fitted here); with ``ratio =
    (field, label)`` a third panel of that ratio against N."""
    ncol = 3 if ratio else 2
    fig, axes = plt.subplots(1, ncol, figsize=(5.6 * ncol, 4.8), layout="constrained")
    ax1, ax2 = axes[0], axes[1]
    fits = law_fits(table.rows, field)
    robust = robust_field(field)
    orders = [r for r in ORDERS_VS_N if table.select(sweep="N", r=r)]
    for r, col in zip(orders, colors(len(orders))):
        rows = table.select(sweep="N", r=r)
        N = np.array([num(x, "N") for x in rows])
        ax1.plot(N, [num(x, field) * 1e6 for x in rows], "o", ms=3.5, color=col,
                 label=f"r = {r}")
        ax1.plot(N, [num(x, robust) * 1e6 for x in rows], "o", ms=3.5, mfc="none", mew=0.6,
                 color=col)
        if ws_field:
            ax1.plot(N, [num(x, ws_field) * 1e6 for x in rows], "x", ms=4, mew=0.8, color=col)
        if ("N", r) in fits:
            NN = np.linspace(0.0, N.max(), 50)
            ax1.plot(NN, fits[("N", r)].predict(NN) * 1e6, "-", lw=1, color=col)
        if ratio:
            axes[2].plot(N, [num(x, ratio[0]) for x in rows], "o-", ms=3, color=col,
                         label=f"r = {r}")
    if ref_field:
        rows = [x for x in table.select(sweep="N", r=0) if np.isfinite(num(x, ref_field))]
        if rows:
            ax1.plot([num(x, "N") for x in rows], [num(x, ref_field) * 1e6 for x in rows], "k^--",
                     ms=3, lw=0.8, label=ref_label)
    ax1.plot([], [], "o", mfc="none", color="grey", label=ROBUST_LABEL)
    if ws_field:
        ax1.plot([], [], "x", color="grey", label="mean with a reused Workspace")
    n101 = n_bodies(N_BOD_AT_101)
    rows = table.select(sweep="r")
    if rows:
        r = np.array([num(x, "r") for x in rows])
        ax2.plot(r, [num(x, field) * 1e6 for x in rows], "o", color="C0",
                 label="mean, no workspace= (measured)")
        if ws_field:
            ax2.plot(r, [num(x, ws_field) * 1e6 for x in rows], "x", color="C3",
                     label="mean with a reused Workspace")
        ax2.plot(r, [num(x, robust) * 1e6 for x in rows], "o", mfc="none", color="C0",
                 label=ROBUST_LABEL)
    if ("r",) in fits:
        f = fits[("r",)]
        rr = np.linspace(0.0, r.max(), 60)
        lo, hi = f.interval()
        ax2.plot(rr, f.predict(rr) * 1e6, "-", color="C0", lw=1,
                 label=f"fit to the means c₀ + c₁r + c₂r²: c₂ = {f.coef[2] * 1e6:.3f} µs,\n"
                       f"95% CI [{lo[2] * 1e6:.3f}, {hi[2] * 1e6:.3f}] µs")
    ax1.set(xlabel="number of bodies N", ylabel=MEAN_LABEL,
            title=f"(a) {title} against N; filled: no workspace=, lines: their fits c₀ + c₁N")
    ax2.set(xlabel="derivative order r", ylabel=MEAN_LABEL,
            title=f"(b) {title} against r, N = {n101}")
    if ratio:
        axes[2].set(xlabel="number of bodies N", ylabel=ratio[1],
                    title=f"(c) {ratio[1]} (median of paired ratios, same run)")
    for ax in axes:
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7.5)
    return save(fig, stem)


def recursion_main(argv, doc, name, columns, callables, fields, report, desc, **plot):
    """``main`` of a recursion benchmark: parse, sweep (afresh, or resuming
    with ``--resume``), print the table and the fitted laws, plot with
    :func:`plot_sweeps` (``plot`` its keyword arguments)."""
    args = parser(doc, calls=(CALLS_QUICK, CALLS_FULL), resume=True, sizes=True,
                  pinocchio=True).parse_args(argv)
    stem, table = open_table(args, name, columns, ["sweep", "n_bod", "r"])
    measured = run_sweep(args, table, callables, fields, desc)
    print(f"measured {measured} points in this run, kept {len(table.kept)} "
          f"({table.stamp['machine']}; code {table.stamp['code']})")
    report(table)
    note = ratio_note(table.rows, columns)
    if note:
        print(f"\n{note}")
    fits = law_fits(table.rows, plot["field"])
    lines = [[f"r = {key[1]}", "t = c0 + c1 N", describe_linear(f)]
             for key, f in fits.items() if key[0] == "N"]
    if ("r",) in fits:
        lines.append([f"N = {n_bodies(N_BOD_AT_101)}", "t = c0 + c1 r + c2 r^2",
                      describe_quadratic(fits[("r",)])])
    print_table("the paper's laws, least squares on the mean times (± standard errors)",
                ["", "law", "fit"], lines)
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
