"""Speed of the constrained inverse dynamics against the constrained forward
dynamics of the same order and against Pinocchio's order-0 route, all
ratios measured in one run.

    python -m experiments.bench_constrained_inverse             # quick: 300 calls (seconds)
    python -m experiments.bench_constrained_inverse --full      # 3000 calls per callable
    python -m experiments.bench_constrained_inverse --calls 3 --out /tmp/bench   # smallest

Robots (URDF files of example-robot-data, :func:`models.example_robots.load_robot`;
Pinocchio reads the same files with its own parser and a free flyer): Solo-12
on its four feet (``Contact3D`` at ``FL_FOOT``, ``FR_FOOT``, ``HL_FOOT``,
``HR_FOOT``, m = 12) and Talos on its two soles (``Contact6D`` at
``left_sole_link`` and ``right_sole_link``, m = 12).

One motion per robot that keeps the contacts to every order read: the
state of :func:`experiments.bench_contact.consistent_state` (``J ν = 0``)
and the jets of ``liedyn.constrained_forward_dynamics`` of order 3 from it
under random torques. Per robot these callables are timed interleaved
(:func:`experiments._timing.time_calls`), each without ``workspace=`` (the
inverse takes none; both then use the model's pool):

1. ``liedyn.constrained_inverse_dynamics`` of order r = 0..3 (weighted
   minimum-norm split, ``R = I``);
2. ``liedyn.constrained_forward_dynamics`` of order r = 0..3 at the same
   state, with the forward solution's torques;
3. Pinocchio 4.1's route to the same order-0 answer: ``rnea`` (its
   ``Data`` reused), ``computeJointJacobians`` and ``getFrameJacobian``
   (``LOCAL_WORLD_ALIGNED``) of every contact frame, and the minimum-norm
   split in NumPy, ``λ = Aᵀ (A Aᵀ)⁻¹ τ̄_base`` with ``A`` the base block of
   ``Jᵀ``, ``τ = τ̄_joints − J_qᵀ λ`` (``pinocchio.contactInverseDynamics``
   solves a different, frictional problem). Before timing, its ``τ`` is
   checked against liedyn's order 0 (relative, max norm, 1e-8), and the
   script stops otherwise.

Every ratio is the median over the sweeps of one run of the per-sweep ratio
(:func:`experiments._timing.paired`) with its quartiles; times are the
smallest of the per-round medians. Every row records the machine's 1-minute
load average before and after its robot was timed; the page says when these
or the spreads make the ratios unreliable. Targets (rows with ``met``):
inverse of order r / forward of order r ≤ 1, r = 0..3, on both robots.

Writes ``<out>/bench_constrained_inverse.csv`` and ``.md`` (``_full``
suffix with ``--full``; ``--out`` defaults to ``paper_figures/``); ``--resume``
keeps the robots of an earlier run on this machine at this code version.
"""

import numpy as np

import liedyn as ld
from models.example_robots import load_robot, pinocchio_from_urdf, robot_path

from ._progress import progress as bar
from . import _bench as B
from ._timing import LOAD_FIELDS, paired, ratio_columns, ratio_fields, time_calls_loaded
from .bench_contact import ROBOTS, consistent_state

CALLS_QUICK, CALLS_FULL = 300, 3000
ORDERS = (0, 1, 2, 3)
LIMIT_FORWARD = 1.0
AGREE = 1e-8
KEY = ["robot", "r", "baseline"]
FIELDS = ["robot", "bodies", "nv", "m", "r", "calls", "liedyn_round_median_min_s",
          "baseline", "baseline_round_median_min_s", *ratio_fields("ratio"), "target", "met",
          "max_rel_err_vs_pinocchio", *LOAD_FIELDS]
FORWARD = "liedyn.constrained_forward_dynamics"
PIN = "pinocchio rnea + frame Jacobians + minimum-norm split (NumPy)"


def motion(model, cs, name):
    """``(C₀, V (5, 6), q (6, n), τ (4, n))``: jets that keep the contacts to
    order 4, from the forward dynamics of order 3 at a state with ``J ν = 0``."""
    C0, V, q, tau, W = consistent_state(model, cs, np.random.default_rng(sum(map(ord, name))),
                                        max(ORDERS))
    f = ld.constrained_forward_dynamics(model, cs, C0, V, q, max(ORDERS), tau=tau,
                                        base_wrench=W)
    return C0, np.ascontiguousarray(f.base_twist), np.ascontiguousarray(f.q), tau


def pinocchio_route(model, name, kind, frames, C0, V, q):
    """``(call, err)``: Pinocchio's order-0 route as a zero-argument callable
    and the relative difference of its ``τ`` to liedyn's order 0."""
    import pinocchio as pin
    from liedyn.interop.pinocchio import pair
    br = pair(model, pinocchio_from_urdf(robot_path(name), True))
    P, D = br.model, br.data
    qp, v = br.motion_to_pin(C0, V[:2], q[:3])
    v0, a0 = v[0].copy(), v[1].copy()
    fids = [P.getFrameId(f) for f in frames]
    rows = slice(0, 6) if kind is ld.Contact6D else slice(0, 3)
    frame = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def route():
        tb = pin.rnea(P, D, qp, v0, a0)
        pin.computeJointJacobians(P, D, qp)
        J = np.vstack([pin.getFrameJacobian(P, D, i, frame)[rows] for i in fids])
        A = J[:, :6].T
        lam = A.T @ np.linalg.solve(A @ A.T, tb[:6])
        return tb[6:] - J[:, 6:].T @ lam

    inv = ld.constrained_inverse_dynamics(model, ld.ConstraintSet(model, [kind(f) for f in frames]),
                                          C0, V, q, 0)
    # Pinocchio's dynamics leave the joints' damping and armature out
    tau = inv.tau[0] - model.joint_damping * q[1] - model.joint_armature * q[2]
    mine = route()[br.v_index - 6]
    err = float(np.max(np.abs(mine - tau)) / np.max(np.abs(tau)))
    return route, err


def measure_robot(args, table, name):
    """Time one robot's callables interleaved and add its rows."""
    kind, frames = ROBOTS[name]
    model = load_robot(name)
    cs = ld.ConstraintSet(model, [kind(f) for f in frames])
    C0, V, q, tau = motion(model, cs, name)
    W = np.zeros((max(ORDERS) + 1, 6))
    fns = {}
    for r in ORDERS:
        t, w = np.ascontiguousarray(tau[:r + 1]), np.ascontiguousarray(W[:r + 1])
        fns[("inverse", r)] = lambda r=r: ld.constrained_inverse_dynamics(model, cs, C0, V, q, r)
        fns[("forward", r)] = lambda r=r, t=t, w=w: ld.constrained_forward_dynamics(
            model, cs, C0, V[:1], q[:2], r, tau=t, base_wrench=w)
    route, err = pinocchio_route(model, name, kind, frames, C0, V, q)
    if not err <= AGREE:
        raise RuntimeError(f"{name}: liedyn's and Pinocchio's order-0 τ differ by {err:.2e} "
                           f"(relative, max norm; limit {AGREE:g}): not the same computation")
    fns["pin"] = route
    times, load = time_calls_loaded(fns, B.calls_for(args))
    head = dict(robot=name, bodies=model.n_bodies, nv=model.nv, m=cs.n_rows, **load)
    for r in ORDERS:
        c, f = times[("inverse", r)], times[("forward", r)]
        ratio = paired(c, f)
        table.add(**head, r=r, calls=c["calls"], liedyn_round_median_min_s=c["round_median_min"],
                  baseline=FORWARD, baseline_round_median_min_s=f["round_median_min"],
                  **ratio_columns("ratio", ratio), target=LIMIT_FORWARD,
                  met="yes" if ratio["median"] <= LIMIT_FORWARD else "no")
    c, p = times[("inverse", 0)], times["pin"]
    table.add(**head, r=0, calls=c["calls"], liedyn_round_median_min_s=c["round_median_min"],
              baseline=PIN, baseline_round_median_min_s=p["round_median_min"],
              **ratio_columns("ratio", paired(c, p)), max_rel_err_vs_pinocchio=err)


def _rows(table):
    head = ["robot", "m", "r", "inverse µs", "baseline", "baseline µs", "ratio", "q1", "q3",
            "met", "load before/after"]
    rows = [[x["robot"], x["m"], x["r"], B.us(B.num(x, "liedyn_round_median_min_s")),
             "forward, same r" if x["baseline"] == FORWARD else "Pinocchio route",
             B.us(B.num(x, "baseline_round_median_min_s")), f"{B.num(x, 'ratio'):.2f}",
             f"{B.num(x, 'ratio_q1'):.2f}", f"{B.num(x, 'ratio_q3'):.2f}", x["met"],
             f"{B.num(x, 'load1_before'):.1f}/{B.num(x, 'load1_after'):.1f} "
             f"({x['cores']} cores)"]
            for x in table.rows]
    return head, rows


TITLE = ("constrained inverse dynamics of order r against constrained_forward_dynamics of "
         "order r (target ≤ 1) and, at r = 0, against Pinocchio's rnea + frame Jacobians + "
         "minimum-norm split (times: smallest per-round medians; ratios: medians of paired "
         "ratios, same run)")


def main(argv=None):
    args = B.parser(__doc__, calls=(CALLS_QUICK, CALLS_FULL), resume=True).parse_args(argv)
    stem, table = B.open_table(args, "bench_constrained_inverse", FIELDS, KEY)
    todo = [g for g in ROBOTS if len(table.select(robot=g)) != len(ORDERS) + 1]
    for name in bar(todo, desc="constrained inverse", disable=args.no_progress):
        for row in table.select(robot=name):
            table.remove(**{k: row[k] for k in KEY})
        measure_robot(args, table, name)
    head, rows = _rows(table)
    B.print_table(TITLE, head, rows)
    note = B.ratio_note(table.rows, FIELDS)
    if note:
        print(f"\n{note}")
    lines = ["| " + " | ".join(map(str, head)) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(map(str, r)) + " |" for r in rows]
    stem.with_suffix(".md").write_text(B.markdown_page(
        "Constrained inverse dynamics: speed", args.full, f"{TITLE}\n\n" + "\n".join(lines)
        + "\n\n", f"{note}\n\n" if note else ""))
    print(f"\nwrote {stem}.csv and {stem}.md")
    return table


if __name__ == "__main__":
    main()
