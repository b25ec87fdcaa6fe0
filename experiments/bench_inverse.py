"""Cost of inverse dynamics of order r (H-GRNE-FBS) against tree size and order.

    python -m experiments.bench_inverse            # quick: N ≤ 301, 500 calls per point
    python -m experiments.bench_inverse --full     # Table 4: N = 1 + 5·N_BOD, N_BOD = 1, 3, …, 199, 1000 calls

Benchmark tree of SPEC §9 (5 branches, N = 1 + 5·N_BOD), base at identity,
random jets per point. The **mean time per call** (the paper's statistic)
of ``liedyn.inverse_dynamics`` versus N for r = 0..5 and versus r = 0..10 at
N = 101, both as the README calls it (no ``workspace=``: ``liedyn_*``) and
with a reused :class:`liedyn.Workspace` (``liedyn_ws_*``), and of
Pinocchio's ``rnea`` (order 0, its ``Data`` reused, as a Pinocchio user
calls it) on the same tree in the same run; each ratio is the median of the
per-pair ratios of the two callables alternated in that run
(:func:`experiments._timing.paired`), with the quartiles of those ratios
beside it (``*_q1``, ``*_q3``) and, in every row, the machine's 1-minute
load average before and after its tree size was timed and its cores
(``load1_before``, ``load1_after``, ``cores``); when the load or the spread
makes the ratios unreliable (:func:`experiments._timing.unreliable`), the
run says so. The CSV also has the smallest of the 10
per-round medians (``*_round_median_min_s``), a statistic robust to other
load on a shared machine. The paper's laws are fitted to the means by least
squares: ``t = c₀ + c₁ N`` per order and ``t = c₀ + c₁ r + c₂ r²`` at N = 101
(coefficients with standard errors, the 95 % interval of ``c₂``, the
residual); the figure shows them on linear axes.

Pinocchio is timed only where its ``Data`` fits in ``--pin-max-gb`` (default
2.5 GB): Pinocchio 4.1 allocates buffers cubic in nv (≈ 66·nv³ bytes, 65 GB
at N = 996), so by default its column stops at N = 306.

Writes ``paper_figures/bench_inverse.csv`` and ``bench_inverse.png``
(``bench_inverse_full.*`` with ``--full``; ``--out DIR`` for another folder).
Every point is measured afresh; rows are appended as they finish, and
``--resume`` finishes a cut-short run, keeping only rows measured on this
machine at this code version (every row records both).
"""

import liedyn

from . import _bench as B
from ._timing import LOAD_FIELDS, paired, ratio_columns, ratio_fields

FIELDS = ["sweep", "n_bod", "N", "r", "calls", "liedyn_mean_s", "liedyn_round_median_min_s",
          "liedyn_ws_mean_s", "liedyn_ws_round_median_min_s",
          "pinocchio_mean_s", "pinocchio_round_median_min_s",
          *ratio_fields("liedyn_over_pinocchio", "liedyn_ws_over_pinocchio"), *LOAD_FIELDS]


def callables(model, r, args, rng):
    """The call as the README writes it (no ``workspace=``), the same call
    with a reused :class:`liedyn.Workspace`, and Pinocchio's ``rnea`` with
    its ``Data`` reused (order 0)."""
    C0, Vb, q = B.inverse_inputs(model, r, rng)
    ws = liedyn.Workspace(model, r)
    fns = {"liedyn": lambda: liedyn.inverse_dynamics(model, C0, Vb, q, r),
           "liedyn_ws": lambda: liedyn.inverse_dynamics(model, C0, Vb, q, r, workspace=ws)}
    pin = B.pinocchio_calls(model, rng, args.pin_max_gb) if r == 0 else None
    if pin is not None:
        fns["pin"] = pin[0]
    return fns


def fields(t):
    row = dict(calls=t["liedyn"]["calls"])
    for name in ("liedyn", "liedyn_ws"):
        row.update({f"{name}_mean_s": t[name]["mean"],
                    f"{name}_round_median_min_s": t[name]["round_median_min"]})
    if "pin" in t:
        row.update(pinocchio_mean_s=t["pin"]["mean"],
                   pinocchio_round_median_min_s=t["pin"]["round_median_min"],
                   **ratio_columns("liedyn_over_pinocchio", paired(t["liedyn"], t["pin"])),
                   **ratio_columns("liedyn_ws_over_pinocchio", paired(t["liedyn_ws"], t["pin"])))
    return row


def report(table):
    def ratio(x, f):
        return f"{B.num(x, f):.2f}" if x[f] else ""

    rows = [[x["N"], x["r"], x["calls"], B.us(B.num(x, "liedyn_mean_s")),
             B.us(B.num(x, "liedyn_ws_mean_s")), B.us(B.num(x, "pinocchio_mean_s")),
             ratio(x, "liedyn_over_pinocchio"), ratio(x, "liedyn_ws_over_pinocchio")]
            for x in table.select(sweep="N")]
    head = ["N", "r", "calls", "no workspace µs", "workspace µs", "pin rnea µs (Data reused)",
            "no ws / pin", "ws / pin"]
    B.print_table("inverse_dynamics against N, mean time per call", head, rows)
    rows = [[x["r"], x["calls"], B.us(B.num(x, "liedyn_mean_s")),
             B.us(B.num(x, "liedyn_ws_mean_s"))] for x in table.select(sweep="r")]
    B.print_table(f"inverse_dynamics against r at N = {B.n_bodies(B.N_BOD_AT_101)}, mean time "
                  f"per call", ["r", "calls", "no workspace µs", "workspace µs"], rows)


def main(argv=None):
    return B.recursion_main(argv, __doc__, "bench_inverse", FIELDS, callables, fields, report,
                            "inverse dynamics", title="inverse dynamics", field="liedyn_mean_s",
                            ws_field="liedyn_ws_mean_s", ref_field="pinocchio_mean_s",
                            ref_label="Pinocchio rnea, Data reused (r = 0)")


if __name__ == "__main__":
    main()
