"""Closed-form dynamics (SPEC §7) against Pinocchio: mass matrix, Coriolis
matrix and gravity vector, with and without a reused workspace.

    python -m experiments.bench_closed_form             # quick: 5000 calls per callable
    python -m experiments.bench_closed_form --full      # 50000 calls per callable
    python -m experiments.bench_closed_form --out DIR   # write elsewhere than paper_figures/

Robots: the aerial manipulator of SPEC §8 (N = 7, Pinocchio's model mirrored
by :func:`liedyn.interop.pinocchio.to_pinocchio`) and Talos
(``talos_reduced.urdf`` of example-robot-data read by :func:`liedyn.load_urdf`,
N = 33; Pinocchio reads the same file with its own parser and a free flyer).
One state per robot: joint positions within the limits, a random velocity
and base pose, and random jets up to order 5 for ``closed_form_jets``.

Per robot every callable is timed interleaved with the others, round by
round (:func:`experiments._timing.time_calls`), so a burst of other load on
the machine falls on all of them alike:

* ``liedyn.mass_matrix`` against ``pinocchio.crba``;
* ``liedyn.coriolis_matrix`` against ``pinocchio.computeCoriolisMatrix``;
* ``liedyn.gravity_vector`` against ``pinocchio.computeGeneralizedGravity``;
* ``liedyn.closed_form_jets`` at r = 3 against ``liedyn.mass_matrix`` (the
  cost of all jets to order 3 in units of one mass matrix);

each liedyn function with ``workspace=`` (a :class:`liedyn.Workspace` reused
call after call) and without it; Pinocchio reuses its ``Data`` and is called
raw, in its own conventions. Each ratio is the median of the per-pair
ratios of the two callables alternated call by call in one run
(:func:`experiments._timing.paired`), with their quartiles (``ratio_q1``,
``ratio_q3``; the ratio of the overall medians beside it); every row records
the machine's 1-minute load average before and after the run and its cores. The targets are a ratio ≤ 2 to Pinocchio for the
three order-0 functions with a workspace. As a check that both libraries
see the same state, the table records the relative difference of the mass
matrix and the gravity vector to Pinocchio's, mapped to liedyn's velocity
coordinates (``Tᵀ M_pin T``, ``Tᵀ g_pin``).

Writes ``<out>/bench_closed_form.csv`` and ``bench_closed_form.md``
(``_full`` suffix with ``--full``; ``--out`` defaults to ``paper_figures/``).
"""

import numpy as np

import liedyn
from models.aerial_manipulator import aerial_manipulator
from models.trees import joint_sample

from . import _bench as B
from ._provenance import stamp
from ._table import write_rows
from ._timing import load_columns, machine_load, paired

CALLS_QUICK, CALLS_FULL = 5000, 50000
JETS_ORDER = 3
TARGET = 2.0
FIELDS = ["robot", "bodies", "nv", "function", "workspace", "calls", "liedyn_mean_s",
          "liedyn_median_s", "liedyn_round_median_min_s", "baseline", "baseline_mean_s",
          "baseline_median_s", "baseline_round_median_min_s", "ratio", "ratio_q1", "ratio_q3",
          "ratio_of_medians", "target", "met", "max_rel_err_vs_pinocchio", "load1_before",
          "load1_after", "cores"]
# liedyn function: (baseline, whether the baseline is Pinocchio's)
BASELINES = {"mass_matrix": ("pinocchio.crba", True),
             "coriolis_matrix": ("pinocchio.computeCoriolisMatrix", True),
             "gravity_vector": ("pinocchio.computeGeneralizedGravity", True),
             f"closed_form_jets r={JETS_ORDER}": ("liedyn.mass_matrix (workspace)", False)}


def _robots():
    """``{name: (liedyn model, Pinocchio bridge or None)}``."""
    out = {}
    try:
        from liedyn.interop.pinocchio import pair, to_pinocchio
        from models.example_robots import load_robot, pinocchio_from_urdf, robot_path
    except ImportError:
        return {"aerial_manipulator": (aerial_manipulator(), None)}
    model = aerial_manipulator()
    out["aerial_manipulator"] = (model, to_pinocchio(model))
    talos = load_robot("talos")
    out["talos"] = (talos, pair(talos, pinocchio_from_urdf(robot_path("talos"), True)))
    return out


def _state(model, rng):
    """Base pose, base twist jet ``(r+2, 6)``, joint jet ``(r+3, n)`` at ``r = JETS_ORDER``."""
    r = JETS_ORDER
    q = rng.normal(size=(r + 3, model.n_joints))
    q[0] = joint_sample(model, rng)
    return liedyn.se3.exp(rng.normal(size=6) * 0.5), rng.normal(size=(r + 2, 6)), q


def _liedyn_calls(model, state):
    """``{(function, "yes"/"no"): callable}``: each function with a reused
    workspace and without one."""
    C0, V, q = state
    r = JETS_ORDER
    ws0, wsr = liedyn.Workspace(model, 0), liedyn.Workspace(model, r)
    q0, q2, V1 = q[0].copy(), q[:2].copy(), V[:1].copy()
    fns = {}
    for tag, w0, wr in (("yes", ws0, wsr), ("no", None, None)):
        fns[("mass_matrix", tag)] = lambda w0=w0: liedyn.mass_matrix(model, C0, q0, workspace=w0)
        fns[("coriolis_matrix", tag)] = lambda w0=w0: liedyn.coriolis_matrix(
            model, C0, V1, q2, workspace=w0)
        fns[("gravity_vector", tag)] = lambda w0=w0: liedyn.gravity_vector(
            model, C0, q0, workspace=w0)
        fns[(f"closed_form_jets r={r}", tag)] = lambda wr=wr: liedyn.closed_form_jets(
            model, C0, V, q, r, workspace=wr)
    return fns


def _pinocchio_calls(model, br, state):
    """Raw Pinocchio callables ``{function: callable}`` at the state and the
    relative differences ``{function: err}`` of liedyn's outputs to theirs."""
    import pinocchio as pin
    C0, V, q = state
    P, D = br.model, br.data
    qp, v = br.motion_to_pin(C0, V[:1], q[:2])
    v0 = v[0]
    fns = {"mass_matrix": lambda: pin.crba(P, D, qp),
           "coriolis_matrix": lambda: pin.computeCoriolisMatrix(P, D, qp, v0),
           "gravity_vector": lambda: pin.computeGeneralizedGravity(P, D, qp)}

    def rel(x, y):
        return float(np.max(np.abs(x - y)) / np.max(np.abs(y)))

    T = br.velocity_map(C0)
    err = {"mass_matrix": rel(liedyn.mass_matrix(model, C0, q[0]), br.mass_matrix(C0, q[0])),
           "gravity_vector": rel(liedyn.gravity_vector(model, C0, q[0]),
                                 T.T @ pin.computeGeneralizedGravity(P, D, qp))}
    return fns, err


def measure(args):
    rows = []
    calls = B.calls_for(args)
    for name, (model, br) in _robots().items():
        state = _state(model, np.random.default_rng(sum(map(ord, name))))
        fns = _liedyn_calls(model, state)
        pfns, err = _pinocchio_calls(model, br, state) if br is not None else ({}, {})
        fns.update({("pin", f): fn for f, fn in pfns.items()})
        t = B.time_calls(fns, calls)
        for (f, tag), x in ((k, v) for k, v in t.items() if k[0] != "pin"):
            base, is_pin = BASELINES[f]
            b = t.get(("pin", f)) if is_pin else t[("mass_matrix", "yes")]
            row = dict(robot=name, bodies=model.n_bodies, nv=model.nv, function=f, workspace=tag,
                       calls=x["calls"], liedyn_mean_s=x["mean"], liedyn_median_s=x["median"],
                       liedyn_round_median_min_s=x["round_median_min"])
            if b is not None:
                p = paired(x, b)
                ratio = p["median"]
                row.update(baseline=base, baseline_mean_s=b["mean"], baseline_median_s=b["median"],
                           baseline_round_median_min_s=b["round_median_min"], ratio=ratio,
                           ratio_q1=p["q1"], ratio_q3=p["q3"],
                           ratio_of_medians=x["median"] / b["median"])
                if is_pin and tag == "yes":
                    row.update(target=TARGET, met="yes" if ratio <= TARGET else "no")
            if tag == "yes" and f in err:
                row["max_rel_err_vs_pinocchio"] = err[f]
            rows.append(row)
    return rows


def _fmt(row, field, spec):
    v = row.get(field, "")
    return "" if v == "" else format(v, spec)


def markdown(rows, full):
    head = ("| robot | N | nv | function | workspace | liedyn µs | baseline | baseline µs | "
            "ratio | ratio of medians | target met | rel. diff. to Pinocchio |\n"
            "|---|---:|---:|---|---|---:|---|---:|---:|---:|---|---:|\n")
    body = "".join(
        f"| {r['robot']} | {r['bodies']} | {r['nv']} | `{r['function']}` | {r['workspace']} | "
        f"{B.us(r['liedyn_round_median_min_s'])} | {r.get('baseline', '')} | "
        f"{B.us(r.get('baseline_round_median_min_s', float('nan')))} | "
        f"{_fmt(r, 'ratio', '.2f')} | {_fmt(r, 'ratio_of_medians', '.2f')} | "
        f"{r.get('met', '')} | {_fmt(r, 'max_rel_err_vs_pinocchio', '.1e')} |\n" for r in rows)
    notes = (f"\nTimes: smallest of 10 interleaved per-round medians, {rows[0]['calls']} calls "
             f"per callable; ratio: median of the per-pair ratios liedyn / baseline, the two alternated in one run "
             f"(target ≤ {TARGET:g} against Pinocchio, which reuses its `Data`). "
             f"`closed_form_jets` at r = {JETS_ORDER} is reported in units of `mass_matrix` "
             f"with a workspace.\n\n")
    return B.markdown_page("Closed form against Pinocchio", full, head + body, notes)


def main(argv=None):
    ap = B.parser(__doc__, calls=(CALLS_QUICK, CALLS_FULL))
    args = ap.parse_args(argv)
    before = machine_load()
    rows = measure(args)
    load = load_columns(before, machine_load())
    rows = [dict(row, **load) for row in rows]
    stem = B.output_stem(args, "bench_closed_form")
    write_rows(stem.with_suffix(".csv"), FIELDS, rows, stamp=stamp())
    B.print_table("closed form: time per call (smallest per-round median, µs) and ratio to the "
                  "baseline in the same run",
                  ["robot", "function", "workspace", "liedyn µs", "baseline", "baseline µs",
                   "ratio (median of pairs)", "target met"],
                  [[r["robot"], r["function"], r["workspace"], B.us(r["liedyn_round_median_min_s"]),
                    r.get("baseline", ""), B.us(r.get("baseline_round_median_min_s", float("nan"))),
                    _fmt(r, "ratio", ".2f"), r.get("met", "")] for r in rows])
    stem.with_suffix(".md").write_text(markdown(rows, args.full))
    print(f"\nwrote {stem.with_suffix('.csv')} and {stem.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    main()
