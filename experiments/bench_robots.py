"""Inverse and forward dynamics of real robots at r = 0, 1, 2, 5, with Pinocchio
in the same run.

    python -m experiments.bench_robots                  # quick: 500 calls per point
    python -m experiments.bench_robots --full           # 1000 calls per point
    python -m experiments.bench_robots --robots talos panda --out /tmp/bench

Robots: the URDF files of example-robot-data listed in
:data:`models.example_robots.ROBOTS` (Talos, Solo-12, ANYmal, PR2, Baxter,
Panda, a human model), read by :func:`liedyn.load_urdf`; Pinocchio reads the
same files with its own URDF parser (free flyer for a floating base).

Per robot, every callable is timed interleaved with the others
(:func:`experiments._bench.time_calls`), so a burst of other load on the
machine falls on all of them alike; each ratio is the median of the
per-pair ratios (:func:`experiments._timing.paired`) with its quartiles
(``*_q1``, ``*_q3``), and every row has the machine's 1-minute load average
before and after its robot was timed (``load1_before``, ``load1_after``,
``cores``); the run says when these make the ratios unreliable:

* ``liedyn.inverse_dynamics`` and ``liedyn.forward_dynamics`` at r = 0, 1, 2,
  5, each with its :class:`liedyn.Workspace` (Pinocchio likewise reuses its
  ``Data``), and the same calls as the README writes them, without
  ``workspace=`` (``liedyn_default_*`` columns);
* Pinocchio at r = 0: ``rnea`` and ``aba``;
* Pinocchio at r = 1, the way a Pinocchio user gets a first time derivative:
  ``computeRNEADerivatives`` and ``τ̇ = ∂τ/∂q v + ∂τ/∂v a + M ȧ``;
  ``computeABADerivatives`` and ``ȧ = ∂a/∂q v + ∂a/∂v a + M⁻¹ τ̇``.

Pinocchio is called raw, in its own conventions (no conversion inside the
timing); r = 2 and 5 have no Pinocchio counterpart. The inputs are one state
per robot: joint positions within the limits, random velocity and
higher-order jets, a random base pose; forward dynamics is driven by the
force jets inverse dynamics returns for them. At r = 0 and 1 the table also
records the relative difference between liedyn's and Pinocchio's outputs at
that state (converted with :mod:`liedyn.interop.pinocchio`): in the max norm,
and for forward dynamics also in the kinetic-energy norm ``‖Lᵀ x‖``
(``M = L Lᵀ``), which does not weigh the accelerations of links with almost
no inertia, where both libraries carry errors of ``eps · cond(M)``
(tests/test_real_robots.py).

Writes ``<out>/bench_robots.csv`` and ``bench_robots.png`` (``_full`` suffix
with ``--full``; ``--out`` defaults to ``paper_figures/``). Rows are appended
as each robot finishes; a rerun measures afresh (``--resume`` keeps the rows of an interrupted run).
"""

import numpy as np

import liedyn
from experiments._progress import progress as bar
from experiments import _bench as B
from experiments._timing import LOAD_FIELDS, paired, ratio_columns, ratio_fields, time_calls_loaded
from models.example_robots import ROBOTS, load_robot, pinocchio_from_urdf, robot_path
from models.trees import joint_sample

ORDERS = (0, 1, 2, 5)
ALGOS = ("inverse", "forward")
FIELDS = ["robot", "bodies", "nv", "algo", "r", "calls", "liedyn_mean_s", "liedyn_round_median_min_s",
          "liedyn_default_mean_s", "liedyn_default_round_median_min_s", "pinocchio_route", "pinocchio_mean_s", "pinocchio_round_median_min_s",
          *ratio_fields("liedyn_over_pinocchio", "liedyn_default_over_pinocchio"),
          "max_rel_err_vs_pinocchio", "energy_rel_err_vs_pinocchio", *LOAD_FIELDS]
PIN_ROUTE = {("inverse", 0): "rnea", ("forward", 0): "aba",
             ("inverse", 1): "computeRNEADerivatives + 3 products",
             ("forward", 1): "computeABADerivatives + 3 products"}


def _inputs(model, rng):
    """A state with jets up to order max(ORDERS) + 2 and the force jets of
    inverse dynamics at it."""
    R = max(ORDERS)
    n = model.n_joints
    q = rng.normal(size=(R + 3, n))
    q[0] = joint_sample(model, rng)
    C0 = liedyn.se3.exp(rng.normal(size=6) * 0.5) if model.floating_base else None
    V = rng.normal(size=(R + 2, 6)) if model.floating_base else None
    inv = liedyn.inverse_dynamics(model, C0, V, q, R)
    return C0, V, q, inv.tau, (inv.base_wrench if model.floating_base else None)


def _liedyn_calls(model, state):
    C0, V, q, tau, W = state
    fns = {}
    for r in ORDERS:
        wi, wf = liedyn.Workspace(model, r), liedyn.Workspace(model, r)
        Vi = None if V is None else np.ascontiguousarray(V[:r + 2])
        qi = np.ascontiguousarray(q[:r + 3])
        V1 = None if V is None else np.ascontiguousarray(V[:1])
        q2 = np.ascontiguousarray(q[:2])
        t = np.ascontiguousarray(tau[:r + 1])
        w = None if W is None else np.ascontiguousarray(W[:r + 1])
        for path, (wsi, wsf) in (("workspace", (wi, wf)), ("default", (None, None))):
            fns[("inverse", r, path)] = (lambda Vi=Vi, qi=qi, r=r, ws=wsi:
                                         liedyn.inverse_dynamics(model, C0, Vi, qi, r, workspace=ws))
            fns[("forward", r, path)] = (lambda t=t, w=w, r=r, ws=wsf, V1=V1, q2=q2:
                                         liedyn.forward_dynamics(model, C0, V1, q2, r, tau=t,
                                                                 base_wrench=w, workspace=ws))
    return fns


def _pinocchio(model, name, state, max_gb):
    """Raw Pinocchio callables ``{(algo, r): fn}`` at the state, and the
    largest relative differences ``{(algo, r): err}`` of liedyn against
    Pinocchio there; ``({}, {})`` without Pinocchio, or when its ``Data``
    would need more than ``max_gb`` GB (``--pin-max-gb``)."""
    if not B.pinocchio_fits(model, max_gb):
        return {}, {}
    try:
        import pinocchio as pin

        from liedyn.interop.pinocchio import pair
    except ImportError:
        return {}, {}
    br = pair(model, pinocchio_from_urdf(robot_path(name), model.floating_base))
    C0, V, q, tau, W = state
    M, D = br.model, br.data
    qp, v = br.motion_to_pin(C0, None if V is None else V[:3], q[:4])
    tp = br.force_to_pin(C0, None if V is None else V[:1], None if W is None else W[:2],
                         tau[:2] - model.joint_damping * q[1:3])
    v0, a, jerk, tau0, taud = v[0], v[1], v[2], tp[0], tp[1]
    rnea_d1, aba_d1 = B.pinocchio_derivative_calls(pin, M, D, qp, v0, a, tau0, jerk, taud)
    fns = {("inverse", 0): lambda: pin.rnea(M, D, qp, v0, a),
           ("forward", 0): lambda: pin.aba(M, D, qp, v0, tau0),
           ("inverse", 1): rnea_d1, ("forward", 1): aba_d1}
    err = {}

    def rel(x, y):
        return float(np.max(np.abs(np.asarray(x) - np.asarray(y))) / np.max(np.abs(y)))

    Wp, tq = br.inverse_dynamics(C0, None if V is None else V[:3], q[:4], 1)
    inv = liedyn.inverse_dynamics(model, C0, None if V is None else V[:3], q[:4], 1)
    Vp, qq = br.forward_dynamics(C0, None if V is None else V[:1], q[:2], 1, tau=tau[:2],
                                 base_wrench=None if W is None else W[:2])
    fwd = liedyn.forward_dynamics(model, C0, None if V is None else V[:1], q[:2], 1,
                                  tau=tau[:2], base_wrench=None if W is None else W[:2])
    L = np.linalg.cholesky(br.mass_matrix(C0, q[0]))
    for k in (0, 1):
        e = [rel(inv.tau[k], tq[k])] + ([rel(inv.base_wrench[k], Wp[k])] if Wp is not None else [])
        err[("inverse", k)] = (max(e), "")
        x = np.concatenate([fwd.base_twist[k + 1] if model.floating_base else [], fwd.q[k + 2]])
        y = np.concatenate([Vp[k + 1] if model.floating_base else [], qq[k + 2]])
        err[("forward", k)] = (rel(x, y), np.linalg.norm(L.T @ (x - y)) / np.linalg.norm(L.T @ y))
    return fns, err


def measure(args, table, names):
    todo = [nm for nm in names if any(table.get(robot=nm, algo=a, r=r) is None
                                      for a in ALGOS for r in ORDERS)]
    for nm in bar(todo, desc="robots", disable=args.no_progress):
        for a in ALGOS:
            for r in ORDERS:
                if table.get(robot=nm, algo=a, r=r) is not None:
                    table.remove(robot=nm, algo=a, r=r)
        model = load_robot(nm)
        state = _inputs(model, np.random.default_rng(sum(map(ord, nm))))
        fns = _liedyn_calls(model, state)
        pfns, err = _pinocchio(model, nm, state, args.pin_max_gb)
        fns.update({("pin",) + k: f for k, f in pfns.items()})
        times, load = time_calls_loaded(fns, B.calls_for(args))
        for a in ALGOS:
            for r in ORDERS:
                t, u = times[(a, r, "workspace")], times[(a, r, "default")]
                row = dict(robot=nm, bodies=model.n_bodies, nv=model.nv, algo=a, r=r,
                           calls=t["calls"], liedyn_mean_s=t["mean"],
                           liedyn_round_median_min_s=t["round_median_min"],
                           liedyn_default_mean_s=u["mean"],
                           liedyn_default_round_median_min_s=u["round_median_min"], **load)
                p = times.get(("pin", a, r))
                if p is not None:
                    row.update(pinocchio_route=PIN_ROUTE[(a, r)], pinocchio_mean_s=p["mean"],
                               pinocchio_round_median_min_s=p["round_median_min"],
                               **ratio_columns("liedyn_over_pinocchio", paired(t, p)),
                               **ratio_columns("liedyn_default_over_pinocchio", paired(u, p)),
                               max_rel_err_vs_pinocchio=err[(a, r)][0],
                               energy_rel_err_vs_pinocchio=err[(a, r)][1])
                table.add(**row)


def report(table, names):
    head = ["robot", "N", "nv", "algo"] + [f"r={r} µs" for r in ORDERS] + \
        ["pin r=0 µs", "pin r=1 µs", "ratio r=0", "ratio r=1", "no ws ratio r=0", "err r=0",
         "err r=1",
         "M-err r=0", "M-err r=1"]
    rows = []
    for nm in names:
        for a in ALGOS:
            sel = {int(x["r"]): x for x in table.select(robot=nm, algo=a)}
            if not sel:
                continue
            x0 = sel[0]

            def fmt(r, field, spec):
                v = B.num(sel[r], field) if r in sel else float("nan")
                return "" if not np.isfinite(v) else format(v, spec)

            rows.append([nm, x0["bodies"], x0["nv"], a]
                        + [B.us(B.num(sel[r], "liedyn_round_median_min_s")) if r in sel else ""
                           for r in ORDERS]
                        + [B.us(B.num(sel[r], "pinocchio_round_median_min_s")) if r in sel else ""
                           for r in (0, 1)]
                        + [fmt(r, "liedyn_over_pinocchio", ".2f") for r in (0, 1)]
                        + [fmt(0, "liedyn_default_over_pinocchio", ".2f")]
                        + [fmt(r, "max_rel_err_vs_pinocchio", ".1e") for r in (0, 1)]
                        + [fmt(r, "energy_rel_err_vs_pinocchio", ".1e") for r in (0, 1)])
    B.print_table("real robots: time per call with a reused Workspace (smallest of the "
                  "per-round medians), ratio liedyn / Pinocchio (its Data reused): median of "
                  "the per-pair ratios, the calls alternated in one run; the "
                  "same ratio without workspace=, "
                  "relative difference to Pinocchio (max norm; M-err: kinetic-energy norm)",
                  head, rows)


def _plain_log_ticks(ax):
    """One tick format on a log y axis: plain numbers at 1, 2, 5 × 10^k,
    no labels on the minor ticks."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def plot(table, names, stem):
    import matplotlib.pyplot as plt
    names = [nm for nm in names if table.select(robot=nm)]
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.6), layout="constrained")
    x = np.arange(len(names))
    width = 0.8 / len(ORDERS)
    cols = B.colors(len(ORDERS))
    for ax, a in zip(axes[:2], ALGOS):
        for i, (r, col) in enumerate(zip(ORDERS, cols)):
            t = [B.num(table.get(robot=nm, algo=a, r=r) or {}, "liedyn_round_median_min_s") * 1e6
                 for nm in names]
            ax.bar(x + (i - (len(ORDERS) - 1) / 2) * width, t, width, color=col,
                   label=f"liedyn r = {r}, Workspace reused")
        for i, (r, marker) in enumerate(((0, "k_"), (1, "r_"))):
            t = [B.num(table.get(robot=nm, algo=a, r=r) or {}, "pinocchio_round_median_min_s") * 1e6
                 for nm in names]
            ax.plot(x + (ORDERS.index(r) - (len(ORDERS) - 1) / 2) * width, t, marker, ms=14,
                    mew=2.5, label=f"Pinocchio r = {r}: {PIN_ROUTE[(a, r)]}")
        ax.set_yscale("log")
        _plain_log_ticks(ax)
        ax.set_xticks(x, [f"{nm}\nN={table.select(robot=nm)[0]['bodies']}" for nm in names])
        ax.set(ylabel="time per call [µs] (smallest per-round median)",
               title=f"({'a' if a == 'inverse' else 'b'}) {a} dynamics")
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=7.5, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    ax = axes[2]
    combos = [("inverse", 0), ("forward", 0), ("inverse", 1), ("forward", 1)]
    w = 0.8 / len(combos)
    for i, ((a, r), col) in enumerate(zip(combos, ["C0", "C1", "C2", "C3"])):
        ratio = [B.num(table.get(robot=nm, algo=a, r=r) or {}, "liedyn_over_pinocchio")
                 for nm in names]
        ax.bar(x + (i - (len(combos) - 1) / 2) * w, ratio, w, color=col,
               label=f"{a}, r = {r} (vs {PIN_ROUTE[(a, r)]})")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    _plain_log_ticks(ax)
    ax.set_xticks(x, names)
    ax.set(ylabel="liedyn / Pinocchio (median of paired ratios)",
           title="(c) time ratio to Pinocchio")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=7.5, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    fig.suptitle("Pinocchio has no r = 1 algorithm: its r = 1 is its derivative route, "
                 "computeRNEADerivatives (or computeABADerivatives) and 3 products, "
                 "dτ/dt = ∂τ/∂q v + ∂τ/∂v a + M da/dt (da/dt = ∂a/∂q v + ∂a/∂v a + M⁻¹ dτ/dt); "
                 "Pinocchio's Data reused", fontsize=9)
    return B.save(fig, stem)


def main(argv=None):
    ap = B.parser(__doc__, calls=(B.CALLS_QUICK, B.CALLS_FULL), resume=True,
                  pinocchio=True)
    ap.add_argument("--robots", nargs="+", choices=list(ROBOTS), default=list(ROBOTS),
                    help="robots to measure (default: all)")
    args = ap.parse_args(argv)
    stem, table = B.open_table(args, "bench_robots", FIELDS, ["robot", "algo", "r"])
    measure(args, table, args.robots)
    report(table, args.robots)
    note = B.ratio_note(table.rows, FIELDS)
    if note:
        print(f"\n{note}")
    png = plot(table, args.robots, stem)
    print(f"\nwrote {stem}.csv and {png}")
    return table


if __name__ == "__main__":
    main()
