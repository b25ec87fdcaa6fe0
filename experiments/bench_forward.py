"""Cost of forward dynamics of order r (H-GABI-FBS) against tree size and order.

    python -m experiments.bench_forward            # quick: N ≤ 301, 500 calls per point
    python -m experiments.bench_forward --full     # Table 4: N = 1 + 5·N_BOD, N_BOD = 1, 3, …, 199, 1000 calls

Benchmark tree of SPEC §9 (5 branches), base at identity and at rest, random
``q, q̇``, zero wrench and torque jets (Table 4). Time per call of
``liedyn.forward_dynamics`` versus N for r = 0..5 and versus r = 0..10 at
N = 101, as the README calls it (no ``workspace=``: ``forward_*``) and with
a reused :class:`liedyn.Workspace` (``forward_ws_*``); at every point
``liedyn.inverse_dynamics`` of the same order (no workspace) is timed too,
for the forward/inverse ratio, and at r = 0 Pinocchio's ``aba`` on the same
tree, its ``Data`` reused. The statistic is the mean time per call (the paper's);
ratios are medians of per-pair ratios in the same run, with their quartiles
(``*_q1``, ``*_q3``) and the load columns as in :mod:`experiments.bench_inverse`; the
CSV also has the smallest of the per-round medians.

Statistics, fitted laws, output (``bench_forward.*``, ``bench_forward_full.*``
with ``--full``, ``--out DIR``), ``--resume`` and the ``--pin-max-gb`` limit
on Pinocchio's memory as in :mod:`experiments.bench_inverse`.
"""

import liedyn

from . import _bench as B
from ._timing import LOAD_FIELDS, paired, ratio_columns, ratio_fields

FIELDS = ["sweep", "n_bod", "N", "r", "calls", "forward_mean_s", "forward_round_median_min_s",
          "forward_ws_mean_s", "forward_ws_round_median_min_s",
          "inverse_mean_s", "inverse_round_median_min_s", *ratio_fields("forward_over_inverse"),
          "pinocchio_aba_mean_s", "pinocchio_aba_round_median_min_s",
          *ratio_fields("forward_over_pinocchio", "forward_ws_over_pinocchio"), *LOAD_FIELDS]


def callables(model, r, args, rng):
    """Forward and inverse dynamics as the README calls them (no
    ``workspace=``), forward dynamics with a reused :class:`liedyn.Workspace`,
    and Pinocchio's ``aba`` with its ``Data`` reused (order 0)."""
    C0, V0, q, W, tau = B.forward_inputs(model, r, rng)
    C0i, Vb, qj = B.inverse_inputs(model, r, rng)
    ws = liedyn.Workspace(model, r)
    fns = {"fd": lambda: liedyn.forward_dynamics(model, C0, V0, q, r, tau=tau, base_wrench=W),
           "fd_ws": lambda: liedyn.forward_dynamics(model, C0, V0, q, r, tau=tau, base_wrench=W,
                                                    workspace=ws),
           "id": lambda: liedyn.inverse_dynamics(model, C0i, Vb, qj, r)}
    pin = B.pinocchio_calls(model, rng, args.pin_max_gb) if r == 0 else None
    if pin is not None:
        fns["pin"] = pin[1]
    return fns


def fields(t):
    tf, tw, ti = t["fd"], t["fd_ws"], t["id"]
    row = dict(calls=tf["calls"], forward_mean_s=tf["mean"],
               forward_round_median_min_s=tf["round_median_min"], forward_ws_mean_s=tw["mean"],
               forward_ws_round_median_min_s=tw["round_median_min"], inverse_mean_s=ti["mean"],
               inverse_round_median_min_s=ti["round_median_min"],
               **ratio_columns("forward_over_inverse", paired(tf, ti)))
    if "pin" in t:
        row.update(pinocchio_aba_mean_s=t["pin"]["mean"],
                   pinocchio_aba_round_median_min_s=t["pin"]["round_median_min"],
                   **ratio_columns("forward_over_pinocchio", paired(tf, t["pin"])),
                   **ratio_columns("forward_ws_over_pinocchio", paired(tw, t["pin"])))
    return row


def report(table):
    def ratio(x, f):
        return f"{B.num(x, f):.2f}" if x[f] else ""

    rows = [[x["N"], x["r"], x["calls"], B.us(B.num(x, "forward_mean_s")),
             B.us(B.num(x, "forward_ws_mean_s")), B.us(B.num(x, "inverse_mean_s")),
             ratio(x, "forward_over_inverse"), B.us(B.num(x, "pinocchio_aba_mean_s")),
             ratio(x, "forward_over_pinocchio"), ratio(x, "forward_ws_over_pinocchio")]
            for x in table.select(sweep="N")]
    head = ["N", "r", "calls", "FD no workspace µs", "FD workspace µs", "ID no workspace µs",
            "FD/ID", "pin aba µs (Data reused)", "FD no ws / pin", "FD ws / pin"]
    B.print_table("forward_dynamics against N, mean time per call", head, rows)
    rows = [[x["r"], x["calls"], B.us(B.num(x, "forward_mean_s")),
             B.us(B.num(x, "forward_ws_mean_s")), B.us(B.num(x, "inverse_mean_s")),
             ratio(x, "forward_over_inverse")] for x in table.select(sweep="r")]
    B.print_table(f"forward_dynamics against r at N = {B.n_bodies(B.N_BOD_AT_101)}, mean time "
                  f"per call", ["r", "calls", "FD no workspace µs", "FD workspace µs",
                                "ID no workspace µs", "FD/ID"], rows)


def main(argv=None):
    return B.recursion_main(argv, __doc__, "bench_forward", FIELDS, callables, fields, report,
                            "forward dynamics", title="forward dynamics", field="forward_mean_s",
                            ws_field="forward_ws_mean_s", ref_field="pinocchio_aba_mean_s",
                            ref_label="Pinocchio aba, Data reused (r = 0)",
                            ratio=("forward_over_inverse", "forward / inverse time"))


if __name__ == "__main__":
    main()
