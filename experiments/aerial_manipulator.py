"""The paper's aerial-manipulator experiment (SPEC §8, Fig. 3): inverse dynamics
of order r turns the reference jets into base-wrench and joint-torque jets,
forward dynamics of order r fed those jets returns the reference jets.

    python -m experiments.aerial_manipulator            # quick: 300 samples over 30 s
    python -m experiments.aerial_manipulator --full     # Table 3: 3000 samples (Δt = 0.01 s)

For every order r = 0..5 and every sample time t:

1. the reference motion gives ``C₀(t)``, ``V₀^(0..r+1)``, ``q^(0..r+2)``;
2. ``inverse_dynamics`` (H-GRNE-FBS) gives ``W₀^(0..r)`` (world frame) and
   ``τ^(0..r)``; the base wrench is also mapped to the body frame and to the
   six propeller thrust jets through the allocation matrix;
3. ``forward_dynamics`` (H-GABI-FBS) fed the state ``C₀, V₀, q, q̇`` and ``W₀^(0..r), τ^(0..r)``
   returns ``V₀^(0..r+1)`` and ``q^(0..r+2)``, compared with the reference.

Errors of order r, over all samples (``ref`` = reference jet, ``rec`` = recovered):

* **round-trip error** ``max|rec − ref| / max|ref|``, the maxima over every
  derivative row, component and sample of the twist jet and of the joint jet
  separately; the study fails (exit status 1) if it exceeds 1e-8;
* **per-row error** ``max|rec^(k) − ref^(k)| / max|ref^(k)|`` for each row
  ``k``. It grows with ``k`` because the problem is ill-conditioned there,
  not because of the algorithms: the joints move slowly (``ω_ref = π/T ≈
  0.1`` rad/s) while gravity stiffens the arms to ``ω_n² = m g l / I ≈
  35–50`` s⁻², so ``τ^(k)`` is dominated by gravity terms ``∝ q^(k)`` and
  ``q^(k+2)`` is a share ``(ω_ref/ω_n)² ≈ 2·10⁻⁴`` of it: each two orders
  cost about four digits of the highest row's relative accuracy, whatever
  the algorithm (measured: ×4000 and ×6000 from ``q^(3)`` to ``q^(5)`` to
  ``q^(7)``; with gravity switched off the ``q^(7)`` row error falls from
  ~1e-2 to ~3e-8);
* **backward error**, per row ``k`` ``max|ID(rec)^(k) − (W₀, τ)^(k)| /
  max|(W₀, τ)^(k)|``, largest over the rows: inverse dynamics of the
  recovered jets against the forces forward dynamics was given, which shows
  that the forward solve is exact to round-off.

Joints are named as in the paper, ``q₂ … q₇`` (body ``B_j`` carries ``q_j``;
liedyn's q columns 1…6), the base being ``B₁``.

Writes to ``paper_figures/`` (``--out DIR`` for another folder; with
``--full`` every name ends in ``_full``): ``aerial_manipulator.npz`` (all
jets), ``aerial_manipulator_roundtrip.csv`` (errors per order),
``aerial_manipulator_fig3a.png`` (reference solid, recovered dashed),
``aerial_manipulator_fig3b.png`` (wrench, torque and thrust jets) and
``aerial_manipulator_error.png``. Every order is computed afresh; finished
orders are also stored in ``<out>/.cache`` under a key of the settings and
the source code, and ``--resume`` reuses them (to finish a cut-short run).
"""

import argparse
import csv
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import liedyn
from experiments._progress import progress as bar, stage
from models.aerial_manipulator import (AerialManipulatorParams, aerial_manipulator,
                                       allocation_matrix, body_wrench_jet, wrench_to_thrusts)
from models.reference_motion import ReferenceMotion

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"
QUICK_SAMPLES = 300
TOLERANCE = 1e-8  # allowed round-trip (jet) and backward errors, relative; round-off is ~1e-12


@dataclass
class OrderResult:
    """Jets over ``S`` samples for one order ``r``.

    ``wrench`` (S, r+1, 6) world frame, ``wrench_body`` (S, r+1, 6),
    ``tau`` (S, r+1, n), ``thrust`` (S, r+1, 6); ``twist`` (S, r+2, 6) and
    ``q`` (S, r+3, n) recovered by forward dynamics and ``residual``
    (S, r+1, 6+n) of inverse dynamics at them.
    """

    order: int
    wrench: np.ndarray
    wrench_body: np.ndarray
    tau: np.ndarray
    thrust: np.ndarray
    twist: np.ndarray = None
    q: np.ndarray = None
    residual: np.ndarray = None


def reference(motion, t, order):
    """``(C₀, V₀^(0..order+1), q^(0..order+2))`` at time ``t``."""
    return motion.base_pose(t), motion.base_twist_jet(t, order + 2), motion.joint_jet(t, order + 3)


def run_order(model, params, motion, times, order):
    """The experiment at every sample time for one order: an :class:`OrderResult`.

    Each algorithm runs once over the whole trajectory (the batched entry
    points, all cores): inverse dynamics of the reference, forward dynamics
    of its output, and inverse dynamics again at the recovered motion, whose
    difference from the input forces is the backward residual.
    """
    refs = [reference(motion, t, order) for t in times]
    C0 = np.stack([r[0] for r in refs])
    V = np.stack([r[1] for r in refs])
    q = np.stack([r[2] for r in refs])
    inv = liedyn.inverse_dynamics_batch(model, C0, V, q, order)
    Wb = np.stack([body_wrench_jet(C0[s], V[s], inv.base_wrench[s]) for s in range(len(times))])
    # one allocation solve for every sample and row (A is constant in the body frame)
    thrust = wrench_to_thrusts(Wb.reshape(-1, 6), params).reshape(Wb.shape)
    fwd = liedyn.forward_dynamics_batch(model, C0, V[:, :1], q[:, :2], order, tau=inv.tau,
                                        base_wrench=inv.base_wrench)
    back = liedyn.inverse_dynamics_batch(model, C0, fwd.base_twist, fwd.q, order)
    residual = np.concatenate([back.base_wrench - inv.base_wrench, back.tau - inv.tau], axis=2)
    return OrderResult(order, inv.base_wrench, Wb, inv.tau, thrust, fwd.base_twist, fwd.q, residual)


def row_errors(recovered, ref):
    """``max|rec^(k) − ref^(k)| / max|ref^(k)|`` per derivative row ``k``
    (maxima over samples and components)."""
    ref = ref[:, :recovered.shape[1]]
    err = np.abs(recovered - ref).max(axis=(0, 2))
    scale = np.abs(ref).max(axis=(0, 2))
    return err / np.where(scale > 0.0, scale, 1.0)


def jet_error(recovered, ref):
    """``max|rec − ref| / max|ref|`` over every row, component and sample."""
    ref = ref[:, :recovered.shape[1]]
    return float(np.abs(recovered - ref).max() / np.abs(ref).max())


ERROR_COLUMNS = ("order", "twist_err", "q_err", "backward_err", "twist_row_err_max",
                 "q_row_err_max")


def error_table(ref_twist, ref_q, results):
    """One dict per order with the errors named in ``ERROR_COLUMNS`` (module
    docstring)."""
    rows = []
    for r, res in sorted(results.items()):
        forces = np.concatenate([res.wrench, res.tau], axis=2)
        rows.append(dict(order=r, twist_err=jet_error(res.twist, ref_twist),
                         q_err=jet_error(res.q, ref_q),
                         backward_err=float(row_errors(res.residual + forces, forces).max()),
                         twist_row_err_max=float(row_errors(res.twist, ref_twist).max()),
                         q_row_err_max=float(row_errors(res.q, ref_q).max())))
    return rows


def _source_hash():
    h = hashlib.sha1()
    for folder in ("liedyn", "models"):
        for f in sorted((ROOT / folder).glob("*.py")):
            h.update(f.read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:12]


def _cache_path(cache_dir, params, motion, n_samples, order):
    key = hashlib.sha1(repr((params, motion, n_samples, _source_hash())).encode()).hexdigest()[:16]
    return cache_dir / f"aerial_manipulator_n{n_samples}_r{order}_{key}.npz"


def _save_order(path, res):
    """Store one order; drop the entries of this order and sample count made
    under other settings or code."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ignore = path.parent / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    for stale in path.parent.glob(path.name.rsplit("_", 1)[0] + "_*.npz"):
        stale.unlink()
    arrays = {k: v for k, v in vars(res).items() if isinstance(v, np.ndarray)}
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(path)


def _load_order(path, order):
    with np.load(path) as z:
        return OrderResult(order, **{k: z[k] for k in z.files})


def run(n_samples, orders, params=AerialManipulatorParams(), motion=ReferenceMotion(),
        cache_dir=None, progress=True, resume=False):
    """Run the experiment; returns ``(times, reference_twist, reference_q, results)``.

    ``reference_twist`` is ``(S, K+2, 6)`` and ``reference_q`` ``(S, K+3, n)``
    with ``K = max(orders)``; ``results`` maps each finished order to its
    :class:`OrderResult`. With ``cache_dir`` finished orders are stored there,
    and with ``resume`` also read from there when present. A
    ``KeyboardInterrupt`` stops the sweep and keeps what finished.
    """
    model = aerial_manipulator(params)
    times = motion.times(n_samples)
    K = max(orders)
    refs = [reference(motion, t, K) for t in times]
    ref_twist = np.stack([r[1] for r in refs])
    ref_q = np.stack([r[2] for r in refs])
    results = {}
    try:
        for r in bar(orders, desc="orders", disable=not progress):
            path = None if cache_dir is None else _cache_path(cache_dir, params, motion, n_samples, r)
            if resume and path is not None and path.exists():
                results[r] = _load_order(path, r)
                print(f"--resume: order {r} read from {path.name}")
                continue
            results[r] = run_order(model, params, motion, times, r)
            if path is not None:
                _save_order(path, results[r])
    except KeyboardInterrupt:
        print(f"interrupted: keeping orders {sorted(results)}", file=sys.stderr)
    return times, ref_twist, ref_q, results


# ------------------------------------------------------------------ output --

def _per_s(unit, power):
    """``unit/s^power`` for an axis label."""
    if power == 0:
        return unit
    return f"{unit}/s" if power == 1 else f"{unit}/s$^{{{power}}}$"


@dataclass
class _Column:
    """One column of a jet figure: ``ref(r)``/``rec(r)`` give ``(S, c)`` arrays."""

    title: str
    comps: list
    symbol: str        # LaTeX symbol of the plotted quantity
    unit: str
    shift: int         # row r shows derivative k = r + shift
    power: int         # its unit is unit/s^(k + power)
    ref: object
    rec: object = None


def _jet_grid(times, orders, columns, title, styles, path):
    """Rows = orders r, columns = quantities; solid lines, dashed overlays."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, axes = plt.subplots(len(orders), len(columns), sharex=True, squeeze=False,
                             figsize=(4.6 * len(columns), 1.9 * len(orders) + 1.6))
    for i, r in enumerate(orders):
        for col, spec in enumerate(columns):
            ax = axes[i, col]
            k = r + spec.shift
            ref = spec.ref(r)
            rec = None if spec.rec is None else spec.rec(r)
            for c in range(ref.shape[1]):
                ax.plot(times, ref[:, c], color=colours[c], lw=2.4 if rec is not None else 1.4,
                        alpha=0.55 if rec is not None else 1.0)
                if rec is not None:
                    ax.plot(times, rec[:, c], color=colours[c], lw=1.0, ls="--")
            ax.set_ylabel(f"${{{spec.symbol}}}^{{({k})}}$ [{_per_s(spec.unit, k + spec.power)}]",
                          fontsize=9)
            ax.grid(alpha=0.3)
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
            ax.tick_params(labelsize=8)
            if i == 0:
                ax.set_title(spec.title, fontsize=10)
            if col == 0:
                ax.annotate(f"r = {r}", xy=(0, 0.5), xycoords="axes fraction",
                            xytext=(-62, 0), textcoords="offset points", fontsize=11,
                            fontweight="bold", va="center", ha="right", rotation=90)
        for ax in axes[-1]:
            ax.set_xlabel("time t [s]")
    for col, spec in enumerate(columns):
        handles = [Line2D([], [], color=colours[c], lw=2) for c in range(len(spec.comps))]
        labels = list(spec.comps)
        for label, kw in styles:
            handles.append(Line2D([], [], **{"color": "grey", **kw}))
            labels.append(label)
        axes[-1, col].legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.45),
                             ncol=4, fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=12)
    fig.tight_layout(rect=(0.03, 0.0, 1.0, 1.0))
    fig.savefig(path, dpi=100)
    plt.close(fig)


REF_STYLE = ("reference", dict(lw=2.4, alpha=0.55))
REC_STYLE = ("recovered by H-GABI-FBS", dict(lw=1.0, ls="--", color="k"))


def _sub(k):
    return str(k).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def joint_names(n):
    """The paper's joint names ``q₂ … q_{n+1}``: body ``B_j`` (the base is
    ``B₁``) carries joint ``q_j``, which is liedyn's q column ``j − 2``."""
    return [f"q{_sub(j)}" for j in range(2, n + 2)]


def plot_fig3a(times, ref_twist, ref_q, results, path):
    """Fig. 3a analogue: row r shows the outputs of forward dynamics of order r,
    ``V₀^(r+1)`` and ``q^(r+2)``, reference solid and recovered dashed."""
    orders = sorted(results)

    def pick(ref, rec, rows, comps):
        return lambda r: ref[:, r + rows, comps], lambda r: rec(r)[:, r + rows, comps]

    xyz = ["x", "y", "z"]
    cols = []
    twist_columns = ((r"base twist jet, angular part $\omega^{(r+1)}$", r"\omega", "rad",
                      slice(0, 3)),
                     (r"base twist jet, linear part $v^{(r+1)}$", "v", "m", slice(3, 6)))
    for title, sym, unit, sl in twist_columns:
        ref, rec = pick(ref_twist, lambda r: results[r].twist, 1, sl)
        cols.append(_Column(title, xyz, sym, unit, 1, 1, ref, rec))
    ref, rec = pick(ref_q, lambda r: results[r].q, 2, slice(None))
    cols.append(_Column(r"joint jet $q^{(r+2)}$ of $q_2 \ldots q_7$ (row r = 0: accelerations)",
                        joint_names(ref_q.shape[2]),
                        "q", "rad", 2, 0, ref, rec))
    _jet_grid(times, orders, cols,
              "Aerial manipulator, Fig. 3a: reference jets fed to H-GRNE-FBS (solid) and jets "
              "recovered by H-GABI-FBS (dashed);\nrow r shows the order-r outputs "
              r"$V_0^{(r+1)} = (\omega, v)^{(r+1)}$ and $q^{(r+2)}$",
              [REF_STYLE, REC_STYLE], path)


def plot_fig3b(times, results, path):
    """Fig. 3b analogue: row r shows the order-r outputs of inverse dynamics,
    base wrench (body frame), joint torques and propeller thrusts."""
    orders = sorted(results)
    xyz = ["x", "y", "z"]

    def top(name, sl):
        return lambda r: getattr(results[r], name)[:, r, sl]

    cols = [_Column("base moment (body frame)", xyz, r"m_{\mathrm{b}}", "N m", 0, 0,
                    top("wrench_body", slice(0, 3))),
            _Column("base force (body frame)", xyz, r"f_{\mathrm{b}}", "N", 0, 0,
                    top("wrench_body", slice(3, 6))),
            _Column("joint torques", [f"τ{_sub(j)}" for j in range(2, 8)], r"\tau", "N m", 0, 0,
                    top("tau", slice(None))),
            _Column("propeller thrusts", [f"f{i}" for i in range(1, 7)], "f_p", "N", 0, 0,
                    top("thrust", slice(None)))]
    _jet_grid(times, orders, cols,
              "Aerial manipulator, Fig. 3b: jets computed by H-GRNE-FBS from the reference motion; "
              "row r shows the order-r outputs",
              [], path)


def plot_errors(table, ref_twist, ref_q, results, path):
    """Left: the errors of each order on a log scale with the 1e-8 acceptance
    line. Right: the per-row error of the highest order against derivative row."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    floor = np.finfo(float).eps / 8.0          # so that exact zeros show on the log axis
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.2))
    orders = np.array([row["order"] for row in table])
    bars = (("twist_err", r"round trip, base twist $V_0$"), ("q_err", "round trip, joints $q$"),
            ("backward_err", r"backward: ID(recovered) vs $(W_0, \tau)$"))
    for i, (key, label) in enumerate(bars):
        ax.bar(orders + (i - 1) * 0.27, np.maximum([row[key] for row in table], floor), 0.27,
               label=label)
    ax.axhline(TOLERANCE, color="r", ls="--", label="acceptance 1e-8")
    ax.axhline(np.finfo(float).eps, color="grey", ls=":", label="machine epsilon")
    ax.set_yscale("log")
    ax.set_xticks(orders)
    ax.set_xlabel("order r")
    ax.set_ylabel("max relative error over the jet [-]")
    ax.set_title("errors of inverse → forward dynamics, per order", fontsize=10)
    ax.set_ylim(top=1e-3)
    ax.legend(fontsize=8, loc="upper left", ncol=2)
    ax.grid(alpha=0.3, axis="y")
    top = results[max(results)]
    kt = np.arange(top.twist.shape[1])
    kq = np.arange(top.q.shape[1])
    et, eq = row_errors(top.twist, ref_twist), row_errors(top.q, ref_q)
    ax2.semilogy(kt[1:], np.maximum(et[1:], floor), "o-", label=r"$V_0^{(k)}$")
    ax2.semilogy(kq[2:], np.maximum(eq[2:], floor), "s-", label=r"$q^{(k)}$")
    ax2.axhline(np.finfo(float).eps, color="grey", ls=":", label="machine epsilon")
    ax2.set_xlabel("derivative row k")
    ax2.set_ylabel(r"$\max|rec^{(k)} - ref^{(k)}| \;/\; \max|ref^{(k)}|$ [-]")
    ax2.set_title(f"per-row error of the order r = {max(results)} round trip\n"
                  "(grows as the reference rows shrink: ill-conditioning, see module docstring)",
                  fontsize=10)
    ax2.legend(fontsize=8)
    ax2.grid(alpha=0.3)
    fig.suptitle("Aerial manipulator: round-trip accuracy", fontsize=12)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_outputs(out, times, ref_twist, ref_q, results, suffix="", progress=False):
    """NPZ of every jet, the error CSV and the figures (each name ending in
    ``suffix``; with ``progress``, a line on stderr per figure); returns the
    error table."""
    arrays = {"t": times, "reference_twist": ref_twist, "reference_q": ref_q}
    for r, res in results.items():
        for name, val in vars(res).items():
            if isinstance(val, np.ndarray):
                arrays[f"r{r}_{name}"] = val
    np.savez_compressed(out / f"aerial_manipulator{suffix}.npz", **arrays)
    table = error_table(ref_twist, ref_q, results)
    with open(out / f"aerial_manipulator_roundtrip{suffix}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(list(ERROR_COLUMNS) + ["n_samples", "passed"])
        for row in table:
            w.writerow([row["order"]] + [f"{row[k]:.3e}" for k in ERROR_COLUMNS[1:]]
                       + [len(times), _passed(row)])
    stage("aerial_manipulator: drawing Fig. 3a", disable=not progress)
    plot_fig3a(times, ref_twist, ref_q, results, out / f"aerial_manipulator_fig3a{suffix}.png")
    stage("aerial_manipulator: drawing Fig. 3b", disable=not progress)
    plot_fig3b(times, results, out / f"aerial_manipulator_fig3b{suffix}.png")
    stage("aerial_manipulator: drawing the error figure", disable=not progress)
    plot_errors(table, ref_twist, ref_q, results, out / f"aerial_manipulator_error{suffix}.png")
    return table


def _passed(row):
    return max(row["twist_err"], row["q_err"], row["backward_err"]) <= TOLERANCE


def report(table, out, suffix=""):
    """Print the error table; exit status 0 when every order passes."""
    print("inverse → forward dynamics round trip, relative errors over all samples")
    print(f"{'r':>3} {'V0 jet':>10} {'q jet':>10} {'backward':>10} {'V0 row':>10} {'q row':>10}")
    for row in table:
        print(f"{row['order']:>3} " + " ".join(f"{row[k]:10.2e}" for k in ERROR_COLUMNS[1:]))
    ok = all(_passed(row) for row in table)
    worst = max(max(row["twist_err"], row["q_err"], row["backward_err"]) for row in table)
    print(f"jet and backward errors: worst {worst:.2e} {'≤' if ok else '>'} {TOLERANCE:g}: "
          f"{'PASS' if ok else 'FAIL'} (row errors: ill-conditioned highest rows, see "
          f"the module docstring)")
    print(f"wrote {out}/aerial_manipulator_fig3a{suffix}.png, fig3b, error, roundtrip.csv, .npz")
    return 0 if ok else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help=f"{QUICK_SAMPLES} samples over the 30 s horizon (the default)")
    mode.add_argument("--full", action="store_true",
                      help="Table 3: 3000 samples over 30 s (Δt = 0.01 s)")
    ap.add_argument("--samples", type=int, default=None,
                    help="number of sample times (overrides the mode)")
    ap.add_argument("--max-order", type=int, default=None, help="highest order r (default 5)")
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    ap.add_argument("--resume", action="store_true",
                    help="reuse the orders a cut-short run stored for the same settings and code")
    ap.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = ap.parse_args(argv)
    motion = ReferenceMotion()
    params = AerialManipulatorParams()
    n = args.samples or (motion.n_samples if args.full else QUICK_SAMPLES)
    K = motion.max_order if args.max_order is None else args.max_order
    orders = list(range(K + 1))
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    A = allocation_matrix(params)
    print(f"aerial manipulator: {n} samples over {motion.horizon:g} s, orders r = 0..{K}; "
          f"allocation matrix condition number {np.linalg.cond(A):.3g}")
    suffix = "_full" if args.full else ""
    times, ref_twist, ref_q, results = run(n, orders, params, motion, cache_dir=out / ".cache",
                                           progress=not args.no_progress, resume=args.resume)
    if not results:
        print("no order finished")
        return 1
    table = write_outputs(out, times, ref_twist, ref_q, results, suffix,
                          progress=not args.no_progress)
    status = report(table, out, suffix)
    missing = sorted(set(orders) - set(results))
    if missing:
        print(f"incomplete: orders {missing} not run; rerun with --resume to finish "
              f"(finished orders are stored)")
        return 130
    return status


if __name__ == "__main__":
    sys.exit(main())
