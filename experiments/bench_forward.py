"""Cost of forward dynamics of order r (H-GABI-FBS) against tree size and order.

    python -m experiments.bench_forward            # quick: N ≤ 301, 500 calls per point
    python -m experiments.bench_forward --full     # Table 4: N = 1 + 5·N_BOD, N_BOD = 1, 3, …, 199, 1000 calls

Benchmark tree of SPEC §9 (5 branches), base at identity and at rest, random
``q, q̇``, zero wrench and torque jets (Table 4). Time per call of
``liedyn.forward_dynamics`` versus N for r = 0..5 and versus r = 0..10 at
N = 101; at every point ``liedyn.inverse_dynamics`` of the same order is
timed too, for the forward/inverse ratio, and at r = 0 Pinocchio's ``aba``
on the same tree. Ratios are of medians taken in the same run; the mean (the
paper's metric) is in the CSV as well.

Output, resumption and the ``--pin-max-gb`` limit on Pinocchio's memory as
in :mod:`experiments.bench_inverse`, with the files named ``bench_forward``.
"""

import liedyn

from . import _bench as B

FIELDS = ["sweep", "n_bod", "N", "r", "calls", "forward_mean_s", "forward_median_s",
          "inverse_mean_s", "inverse_median_s", "forward_over_inverse",
          "pinocchio_aba_mean_s", "pinocchio_aba_median_s", "forward_over_pinocchio"]


def callables(model, r, args, rng):
    C0, V0, q, qd, W, tau = B.forward_inputs(model, r, rng)
    C0i, Vb, qj = B.inverse_inputs(model, r, rng)
    fns = {"fd": lambda: liedyn.forward_dynamics(model, C0, V0, q, qd, W, tau, r),
           "id": lambda: liedyn.inverse_dynamics(model, C0i, Vb, qj, r)}
    pin = B.pinocchio_calls(model, rng, args.pin_max_gb) if r == 0 else None
    if pin is not None:
        fns["pin"] = pin[1]
    return fns


def fields(t):
    tf, ti = t["fd"], t["id"]
    row = dict(calls=tf["calls"], forward_mean_s=tf["mean"], forward_median_s=tf["median"],
               inverse_mean_s=ti["mean"], inverse_median_s=ti["median"],
               forward_over_inverse=tf["median"] / ti["median"])
    if "pin" in t:
        row.update(pinocchio_aba_mean_s=t["pin"]["mean"], pinocchio_aba_median_s=t["pin"]["median"],
                   forward_over_pinocchio=tf["median"] / t["pin"]["median"])
    return row


def report(table):
    def ratio(x, f):
        return f"{B.num(x, f):.2f}" if x[f] else ""

    rows = [[x["N"], x["r"], x["calls"], B.us(B.num(x, "forward_mean_s")),
             B.us(B.num(x, "forward_median_s")), B.us(B.num(x, "inverse_median_s")),
             ratio(x, "forward_over_inverse"), B.us(B.num(x, "pinocchio_aba_median_s")),
             ratio(x, "forward_over_pinocchio")] for x in table.select(sweep="N")]
    head = ["N", "r", "calls", "FD mean µs", "FD median µs", "ID median µs", "FD/ID",
            "pin aba median µs", "FD/pin"]
    B.print_table("forward_dynamics against N", head, rows)
    rows = [[x["r"], x["calls"], B.us(B.num(x, "forward_mean_s")),
             B.us(B.num(x, "forward_median_s")), B.us(B.num(x, "inverse_median_s")),
             ratio(x, "forward_over_inverse")] for x in table.select(sweep="r")]
    B.print_table(f"forward_dynamics against r at N = {B.n_bodies(B.N_BOD_AT_101)}",
                  ["r", "calls", "FD mean µs", "FD median µs", "ID median µs", "FD/ID"], rows)


def main(argv=None):
    return B.recursion_main(argv, __doc__, "bench_forward", FIELDS, callables, fields, report,
                            "forward dynamics", title="forward dynamics", field="forward_median_s",
                            ref_field="pinocchio_aba_median_s", ref_label="Pinocchio aba (r = 0)",
                            ratio=("forward_over_inverse", "forward / inverse time"))


if __name__ == "__main__":
    main()
