"""Speed of the constrained forward dynamics against the unconstrained one and
against Pinocchio, all ratios measured in one run.

    python -m experiments.bench_contact              # quick: 500 calls per callable (seconds)
    python -m experiments.bench_contact --full       # 5000 calls per callable
    python -m experiments.bench_contact --calls 3 --out /tmp/bench   # the smallest run

Robots (URDF files of example-robot-data, :func:`models.example_robots.load_robot`;
Pinocchio reads the same files with its own parser and a free flyer):

* Solo-12 on its four feet, ``Contact3D`` at ``FL_FOOT``, ``FR_FOOT``,
  ``HL_FOOT``, ``HR_FOOT`` (m = 12);
* Talos on its two soles, ``Contact6D`` at ``left_sole_link`` and
  ``right_sole_link`` (m = 12).

One state per robot: joint positions within the limits, a random base pose,
a random velocity projected onto the null space of
``liedyn.constraint_jacobian`` (so ``J ν = 0`` and Pinocchio's constraint,
posed on the contact frames' own accelerations, is the same one), random
joint-torque jets, zero base wrench. Per robot every callable below is timed
interleaved with the others (:func:`experiments._timing.time_calls`):

1. ``liedyn.constrained_forward_dynamics`` and ``liedyn.forward_dynamics`` of
   order r = 0..5, each with ``workspace=liedyn.Workspace(model, r)`` and
   without ``workspace=``;
2. Pinocchio 4.1's ``constraintDynamics`` on the same contacts
   (``RigidConstraintModel`` ``CONTACT_3D`` / ``CONTACT_6D`` on each frame's
   parent joint at the frame's placement, ``LOCAL``; ``initConstraintDynamics``
   once, outside the timing; the default ``ProximalSettings()``: accuracy
   1e-12, ``mu = 0``, one iteration, which is one exact solve of the KKT
   system), its ``Data`` reused;
3. Pinocchio's route to the first time derivative of the same motion:
   ``constraintDynamics``, ``computeConstraintDynamicsDerivatives`` and the
   chain rule ``ν̈ = ∂ν̇/∂q·v + ∂ν̇/∂v·ν̇ + ∂ν̇/∂τ·τ̇`` (the three
   matrix-vector products included, ``τ̇`` given).

Before any timing the script checks, at each robot's state, that liedyn and
Pinocchio agree: order 0 to 1e-8 relative in the max norm of the
accelerations, order 1 (the chain rule above against
``constrained_forward_dynamics`` of order 1) to 1e-6, and raises otherwise,
so that the ratios compare the same computation.

The cost against the number of constraint rows: the benchmark tree of SPEC §9
with 8 branches of 4 links (N = 33, nv = 38) and point contacts at the tips of
0..8 branches (m = 0..24), r = 0..5, with a workspace, beside
``forward_dynamics`` of the same order.

Times: the smallest of the 10 interleaved per-round medians
(``*_round_median_min_s``, robust to other load on a shared machine); the
means are in the CSV too. Every ratio, and every target value, is the
median over the sweeps of one run of the per-sweep ratio of the callables
involved (:func:`experiments._timing.sweep_medians`, :func:`~experiments._timing.paired`),
with its quartiles (``ratio_q1``, ``ratio_q3``, ``target_value_q1``,
``target_value_q3``); ``W₀`` and the increments are medians of paired
differences. Every row records the machine's 1-minute load average before
and after its group was timed (``load1_before``, ``load1_after``,
``cores``); the page says when these or the spreads make the ratios
unreliable (:func:`experiments._timing.unreliable`). The targets (rows with ``met``, counted by ``experiments.reproduce``):

* ``t_c(r) ≤ 2 t_u(r) + W₀`` for r = 1..5, ``t_c``/``t_u`` the constrained and
  unconstrained times and ``W₀ = t_c(0) − t_u(0)`` the one-off contact-space
  work (responses, ``Λ⁻¹`` and its factorisation), with and without a
  workspace: column ``target_value`` is ``(t_c(r) − W₀) / t_u(r)``, limit 2
  (at r = 0 it is 1 by definition, so no target there); the table also has
  the plain ratio ``t_c/t_u``, ``W₀`` and the increments per order
  ``t(r) − t(r−1)`` of both;
* order 0 / ``constraintDynamics`` ≤ 2, with a workspace;
* order 1 / Pinocchio's order-1 route ≤ 0.5, with a workspace.

Writes ``<out>/bench_contact.csv``, ``bench_contact.md`` and
``bench_contact.png`` (``_full`` suffix with ``--full``; ``--out`` defaults to
``paper_figures/``). A rerun measures every group afresh; ``--resume`` keeps
the groups (a robot, the tree) of an earlier run measured on this machine at
this code version and says which.
"""

import numpy as np

import liedyn as ld
from models.example_robots import load_robot, pinocchio_from_urdf, robot_path
from models.trees import benchmark_tree, joint_sample

from ._progress import progress as bar
from . import _bench as B
from ._timing import (LOAD_FIELDS, paired, paired_stats, ratio_columns, ratio_fields,
                      sweep_medians, time_calls_loaded)

CALLS_QUICK, CALLS_FULL = 500, 5000
ORDERS = tuple(range(6))
# robot: (constraint kind, frames)
ROBOTS = {"solo12": (ld.Contact3D, ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")),
          "talos": (ld.Contact6D, ("left_sole_link", "right_sole_link"))}
TREE = dict(n_branches=8, bodies_per_branch=4)
TREE_NAME = "tree N=33"
TREE_CONTACTS = tuple(range(TREE["n_branches"] + 1))
LIMIT_SPLIT, LIMIT_PIN0, LIMIT_PIN1 = 2.0, 2.0, 0.5
AGREE0, AGREE1 = 1e-8, 1e-6
SPLIT = "(constrained - one-off) / unconstrained"
PIN0 = "order 0 / constraintDynamics"
PIN1 = "order 1 / constraintDynamics + derivatives + chain rule"
ROWS = "constrained / unconstrained"
WS_TEXT = {"yes": "with workspace", "no": "without workspace"}
KEY = ["section", "robot", "m", "r", "quantity"]
FIELDS = ["section", "robot", "bodies", "nv", "contacts", "m", "rank", "r", "workspace",
          "quantity", "calls", "liedyn_mean_s", "liedyn_round_median_min_s", "baseline",
          "baseline_mean_s", "baseline_round_median_min_s", *ratio_fields("ratio"), "one_off_s",
          "increment_s", "baseline_increment_s", *ratio_fields("target_value"), "target", "met",
          "max_rel_err_vs_pinocchio", *LOAD_FIELDS]


# ------------------------------------------------------------------ states --

def consistent_state(model, cs, rng, order):
    """``(C₀, V₀ (1, 6), q (2, n), τ (order+1, n), W₀ zeros)``: joint positions
    within the limits, a random base pose, a random velocity projected onto
    the null space of the constraint Jacobian (``J ν = 0``)."""
    n = model.n_joints
    q0 = joint_sample(model, rng)
    C0 = ld.se3.exp(rng.normal(size=6) * 0.5)
    J = ld.constraint_jacobian(model, cs, C0, None, q0[None], 0)[0]
    nu = rng.normal(size=model.nv)
    nu -= np.linalg.pinv(J) @ (J @ nu)
    return (C0, np.ascontiguousarray(nu[None, :6]), np.vstack([q0, nu[6:]]),
            rng.normal(size=(order + 1, n)), np.zeros((order + 1, 6)))


def liedyn_calls(model, cs, state, orders, variants=("yes", "no"), unconstrained=True):
    """``{("cfd"|"fd", r, "yes"|"no"): callable}``: constrained and unconstrained
    forward dynamics of order r, with a reused workspace (``"yes"``) and without
    ``workspace=`` (``"no"``)."""
    C0, V, q, tau, W = state
    fns = {}
    for r in orders:
        t, w = np.ascontiguousarray(tau[:r + 1]), np.ascontiguousarray(W[:r + 1])
        for tag in variants:
            wc = ld.Workspace(model, r) if tag == "yes" else None
            wf = ld.Workspace(model, r) if tag == "yes" else None
            fns[("cfd", r, tag)] = (lambda r=r, t=t, w=w, ws=wc: ld.constrained_forward_dynamics(
                model, cs, C0, V, q, r, tau=t, base_wrench=w, workspace=ws))
            if unconstrained:
                fns[("fd", r, tag)] = (lambda r=r, t=t, w=w, ws=wf: ld.forward_dynamics(
                    model, C0, V, q, r, tau=t, base_wrench=w, workspace=ws))
    return fns


# -------------------------------------------------------------- Pinocchio --

def pinocchio_contacts(pin, pmodel, kind, frames):
    """Pinocchio's ``RigidConstraintModel`` list for ``kind`` (``Contact3D`` or
    ``Contact6D``) contacts with the world at ``frames``, in Pinocchio's model."""
    ctype = pin.ContactType.CONTACT_6D if kind is ld.Contact6D else pin.ContactType.CONTACT_3D
    models = pin.StdVec_RigidConstraintModel()
    for name in frames:
        fid = pmodel.getFrameId(name)
        if fid >= pmodel.nframes:
            raise ValueError(f"frames: Pinocchio's model has no frame {name!r}")
        f = pmodel.frames[fid]
        models.append(pin.RigidConstraintModel(ctype, pmodel, f.parentJoint, f.placement,
                                               pin.ReferenceFrame.LOCAL))
    return models


def pinocchio_calls(model, br, cs, kind, frames, state):
    """``(fns, err)``: Pinocchio's order-0 ``constraintDynamics`` and its
    order-1 route as zero-argument callables ``{0: f, 1: g}`` at ``state``,
    and the relative differences ``{0: e0, 1: e1}`` of liedyn's
    accelerations (order 0) and their rates (order 1) to theirs there."""
    import pinocchio as pin
    C0, V, q, tau, W = state
    P, D = br.model, br.data
    cms = pinocchio_contacts(pin, P, kind, frames)
    cds = pin.StdVec_RigidConstraintData()
    for cm in cms:
        cds.append(cm.createData())
    pin.initConstraintDynamics(P, D, cms, cds)
    settings = pin.ProximalSettings()          # 1e-12, mu = 0, one iteration: exact
    res = ld.constrained_forward_dynamics(model, cs, C0, V, q, 1, tau=tau[:2], base_wrench=W[:2])
    qp, v = br.motion_to_pin(C0, V, q)
    _, vl = br.motion_to_pin(C0, res.base_twist[:3], res.q[:4])     # v, a, ȧ
    b = model.joint_damping                      # Pinocchio's dynamics leave damping out
    tp = br.force_to_pin(C0, V, W[:2], tau[:2] - b * res.q[1:3])
    v0, tau0, taud = v[0].copy(), tp[0].copy(), tp[1].copy()

    def order0():
        return pin.constraintDynamics(P, D, qp, v0, tau0, cms, cds, settings)

    def order1():
        a = pin.constraintDynamics(P, D, qp, v0, tau0, cms, cds, settings)
        dq, dv, dtau = pin.computeConstraintDynamicsDerivatives(P, D, cms, cds, settings)[:3]
        return dq @ v0 + dv @ a + dtau @ taud

    def rel(x, y):
        return float(np.max(np.abs(np.asarray(x) - y)) / np.max(np.abs(y)))

    err = {0: rel(vl[1], order0()), 1: rel(vl[2], order1())}
    return {0: order0, 1: order1}, err


def require_agreement(name, err):
    """Raise unless liedyn and Pinocchio agree at the benchmark state (``err``
    of :func:`pinocchio_calls`): the ratios would compare different things."""
    for k, limit in ((0, AGREE0), (1, AGREE1)):
        if not err[k] <= limit:
            raise RuntimeError(f"{name}: liedyn and Pinocchio differ at order {k} by {err[k]:.2e} "
                               f"(relative, max norm; limit {limit:g}) at the benchmark state: "
                               "not the same computation, so no speed comparison")


# --------------------------------------------------------------- measuring --

def _stats(t):
    return t["mean"], t["round_median_min"]


def split_stats(c, u, c0, u0):
    """The paired statistics of the constrained time ``c`` against the
    unconstrained ``u`` of one order, given both at order 0 (``c0``,
    ``u0``), all four :func:`experiments._timing.time_calls` timings of one
    run: ``(ratio, one_off, target)``, each over the sweeps all four ran in
    — the ratio ``c/u``, the one-off work ``W₀ = c0 − u0`` and the target
    value ``(c − W₀)/u``."""
    c, u, c0, u0 = sweep_medians(c, u, c0, u0)
    return (paired_stats(c, u), paired_stats(c0, u0, np.subtract),
            paired_stats(c - (c0 - u0), u))


def split_rows(times, orders, tag):
    """The ``robots`` rows' timing columns of one workspace variant:
    ``{r: columns}`` from the timings ``times`` of one run, keyed
    ``("cfd" or "fd", r, tag)``."""
    cfd = {r: times[("cfd", r, tag)] for r in orders}
    fd = {r: times[("fd", r, tag)] for r in orders}
    out = {}
    for r in orders:
        (cm, cr), (um, ur) = _stats(cfd[r]), _stats(fd[r])
        ratio, one_off, target = split_stats(cfd[r], fd[r], cfd[0], fd[0])
        row = dict(calls=cfd[r]["calls"], liedyn_mean_s=cm, liedyn_round_median_min_s=cr,
                   baseline_mean_s=um, baseline_round_median_min_s=ur,
                   **ratio_columns("ratio", ratio), one_off_s=one_off["median"])
        if r > 0:
            value = target["median"]
            row.update(increment_s=paired(cfd[r], cfd[r - 1], np.subtract)["median"],
                       baseline_increment_s=paired(fd[r], fd[r - 1], np.subtract)["median"],
                       **ratio_columns("target_value", target), target=LIMIT_SPLIT,
                       met="yes" if value <= LIMIT_SPLIT else "no")
        out[r] = row
    return out


def measure_robot(args, table, name):
    """Time one robot's callables interleaved and add its rows."""
    kind, frames = ROBOTS[name]
    model = load_robot(name)
    cs = ld.ConstraintSet(model, [kind(f) for f in frames])
    state = consistent_state(model, cs, np.random.default_rng(sum(map(ord, name))), max(ORDERS))
    fns = liedyn_calls(model, cs, state, ORDERS)
    from liedyn.interop.pinocchio import pair
    br = pair(model, pinocchio_from_urdf(robot_path(name), True))
    pfns, err = pinocchio_calls(model, br, cs, kind, frames, state)
    require_agreement(name, err)
    fns.update({("pin", k): f for k, f in pfns.items()})
    rank = fns[("cfd", 0, "yes")]().rank
    times, load = time_calls_loaded(fns, B.calls_for(args))
    head = dict(robot=name, bodies=model.n_bodies, nv=model.nv, contacts=len(cs), m=cs.n_rows,
                rank=rank, **load)
    for tag in ("yes", "no"):
        for r, cols in split_rows(times, ORDERS, tag).items():
            table.add(**head, section="robots", r=r, workspace=tag,
                      quantity=f"{SPLIT}, {WS_TEXT[tag]}", baseline="liedyn.forward_dynamics",
                      **cols)
    for k, text, limit in ((0, PIN0, LIMIT_PIN0), (1, PIN1, LIMIT_PIN1)):
        pm, pr = _stats(times[("pin", k)])
        for tag in ("yes", "no"):
            c = times[("cfd", k, tag)]
            cm, cr = _stats(c)
            ratio = paired(c, times[("pin", k)])
            row = dict(head, section="pinocchio", r=k, workspace=tag,
                       quantity=f"{text}, {WS_TEXT[tag]}", calls=c["calls"],
                       liedyn_mean_s=cm, liedyn_round_median_min_s=cr,
                       baseline=("pinocchio.constraintDynamics" if k == 0 else
                                 "pinocchio.constraintDynamics + "
                                 "computeConstraintDynamicsDerivatives + 3 products"),
                       baseline_mean_s=pm, baseline_round_median_min_s=pr,
                       **ratio_columns("ratio", ratio), max_rel_err_vs_pinocchio=err[k])
            if tag == "yes":
                row.update(**ratio_columns("target_value", ratio), target=limit,
                           met="yes" if ratio["median"] <= limit else "no")
            table.add(**row)


def measure_tree(args, table):
    """The benchmark tree with point contacts at the tips of 0..8 branches."""
    model = benchmark_tree(**TREE)
    tips = [f"branch{i}_link{TREE['bodies_per_branch'] - 1}" for i in range(TREE["n_branches"])]
    rng = np.random.default_rng(33)
    fns, sets = {}, {}
    for k in TREE_CONTACTS:
        cs = ld.ConstraintSet(model, [ld.Contact3D(f) for f in tips[:k]])
        sets[k] = cs
        state = consistent_state(model, cs, rng, max(ORDERS))
        calls = liedyn_calls(model, cs, state, ORDERS, variants=("yes",), unconstrained=k == 0)
        fns.update({(k,) + key: f for key, f in calls.items()})
    ranks = {k: fns[(k, "cfd", 0, "yes")]().rank for k in TREE_CONTACTS}
    times, load = time_calls_loaded(fns, B.calls_for(args))
    for k in TREE_CONTACTS:
        for r in ORDERS:
            c, u = times[(k, "cfd", r, "yes")], times[(0, "fd", r, "yes")]
            (cm, cr), (um, ur) = _stats(c), _stats(u)
            table.add(section="rows", robot=TREE_NAME, bodies=model.n_bodies, nv=model.nv,
                      contacts=k, m=sets[k].n_rows, rank=ranks[k], r=r, workspace="yes",
                      quantity=f"{ROWS}, {WS_TEXT['yes']}", calls=c["calls"],
                      liedyn_mean_s=cm, liedyn_round_median_min_s=cr,
                      baseline="liedyn.forward_dynamics", baseline_mean_s=um,
                      baseline_round_median_min_s=ur, **ratio_columns("ratio", paired(c, u)),
                      **load)


def _expected_rows(group):
    if group == TREE_NAME:
        return len(TREE_CONTACTS) * len(ORDERS)
    return 2 * len(ORDERS) + 4


def measure(args, table):
    """Every group (robot, tree) missing from ``table`` (all of them unless
    ``--resume`` kept some); returns the number measured."""
    groups = list(ROBOTS) + [TREE_NAME]
    todo = [g for g in groups if len(table.select(robot=g)) != _expected_rows(g)]
    for g in todo:
        for row in table.select(robot=g):
            table.remove(**{k: row[k] for k in KEY})
    for g in bar(todo, desc="contact benchmark", disable=args.no_progress):
        if g == TREE_NAME:
            measure_tree(args, table)
        else:
            measure_robot(args, table, g)
    return len(todo), len(groups) - len(todo)


# ------------------------------------------------------------------ output --

def _f(row, field, spec):
    v = B.num(row, field)
    return "" if not np.isfinite(v) else format(v, spec)


def _robot_rows(table):
    head = ["robot", "m", "r", "workspace", "constrained µs", "unconstrained µs", "ratio",
            "one-off µs", "increment µs", "unconstr. increment µs", "(c − one-off)/u", "met"]
    rows = [[x["robot"], x["m"], x["r"], x["workspace"],
             B.us(B.num(x, "liedyn_round_median_min_s")),
             B.us(B.num(x, "baseline_round_median_min_s")), _f(x, "ratio", ".2f"),
             B.us(B.num(x, "one_off_s")), B.us(B.num(x, "increment_s")),
             B.us(B.num(x, "baseline_increment_s")), _f(x, "target_value", ".2f"), x["met"]]
            for x in table.select(section="robots")]
    return head, rows


def _pin_rows(table):
    head = ["robot", "r", "workspace", "liedyn µs", "Pinocchio", "Pinocchio µs", "ratio",
            "limit", "met", "rel. diff."]
    rows = [[x["robot"], x["r"], x["workspace"], B.us(B.num(x, "liedyn_round_median_min_s")),
             x["baseline"].replace("pinocchio.", "").replace(
                 "computeConstraintDynamicsDerivatives", "its derivatives"),
             B.us(B.num(x, "baseline_round_median_min_s")), _f(x, "ratio", ".2f"),
             _f(x, "target", "g"), x["met"], _f(x, "max_rel_err_vs_pinocchio", ".1e")]
            for x in table.select(section="pinocchio")]
    return head, rows


def _tree_rows(table):
    head = ["contacts", "m", "rank"] + [f"r={r} µs" for r in ORDERS] + \
        [f"r={r} / unconstr." for r in (0, 5)]
    rows = []
    for k in TREE_CONTACTS:
        sel = {int(x["r"]): x for x in table.select(section="rows", contacts=k)}
        if not sel:
            continue
        rows.append([k, sel[0]["m"], sel[0]["rank"]]
                    + [B.us(B.num(sel[r], "liedyn_round_median_min_s")) for r in ORDERS]
                    + [_f(sel[r], "ratio", ".2f") for r in (0, 5)])
    fd = {int(x["r"]): x for x in table.select(section="rows", contacts=0)}
    if fd:
        rows.append(["forward_dynamics", 0, ""]
                    + [B.us(B.num(fd[r], "baseline_round_median_min_s")) for r in ORDERS]
                    + ["", ""])
    return head, rows


TITLES = ("constrained / unconstrained forward dynamics (times: smallest per-round medians; "
          "ratios: medians of paired ratios, same run); "
          "one-off = t_c(0) − t_u(0); increments t(r) − t(r−1); target (t_c − one-off)/t_u ≤ 2",
          "against Pinocchio 4.1 (its Data reused; constraintDynamics with ProximalSettings(), "
          "mu = 0, one iteration)",
          f"cost against the constraint rows: {TREE_NAME}, point contacts at branch tips, "
          "with a workspace")


def report(table):
    for title, (head, rows) in zip(TITLES, (_robot_rows(table), _pin_rows(table),
                                            _tree_rows(table))):
        B.print_table(title, head, rows)
    note = B.ratio_note(table.rows, FIELDS)
    if note:
        print(f"\n{note}")


def _markdown_table(head, rows):
    lines = ["| " + " | ".join(map(str, head)) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(map(str, r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def markdown(table, full):
    parts = []
    for title, (head, rows) in zip(TITLES, (_robot_rows(table), _pin_rows(table),
                                            _tree_rows(table))):
        parts.append(f"## {title[0].upper()}{title[1:]}\n\n{_markdown_table(head, rows)}\n")
    calls = table.rows[0]["calls"] if table.rows else "?"
    note = B.ratio_note(table.rows, FIELDS)
    notes = (f"Times: smallest of 10 interleaved per-round medians, {calls} calls per callable; "
             "every ratio is the median of the per-sweep ratios of callables timed in the same "
             "run (quartiles in the CSV). Pinocchio's order 1 is "
             "constraintDynamics, computeConstraintDynamicsDerivatives and "
             "ν̈ = ∂ν̇/∂q·v + ∂ν̇/∂v·ν̇ + ∂ν̇/∂τ·τ̇. States with J ν = 0, checked against "
             f"Pinocchio before timing (order 0 to {AGREE0:g}, order 1 to {AGREE1:g})."
             f"{' ' + note if note else ''}\n\n")
    return B.markdown_page("Constrained forward dynamics: speed", full, "\n".join(parts), notes)


def plot(table, stem):
    fig, (ax1, ax2) = B.plt.subplots(1, 2, figsize=(12, 4.8), layout="constrained")
    shown = (0, 1, 3, 5)
    for r, col in zip(shown, B.colors(len(shown))):
        rows = sorted(table.select(section="rows", r=r), key=lambda x: int(x["m"]))
        if not rows:
            continue
        m = [int(x["m"]) for x in rows]
        ax1.plot(m, [B.num(x, "liedyn_round_median_min_s") * 1e6 for x in rows], "o-", ms=4,
                 color=col, label=f"constrained, r = {r}")
        ax1.axhline(B.num(rows[0], "baseline_round_median_min_s") * 1e6, color=col, ls=":",
                    lw=1)
    ax1.plot([], [], "k:", lw=1, label="forward_dynamics, same r")
    ax1.set(xlabel="constraint rows m (point contacts at branch tips; m = 0: none)",
            ylabel="time per call [µs] (smallest per-round median)",
            title=f"(a) against m: {TREE_NAME}, with a workspace")
    style = {"solo12": ("o", "C0", "Solo-12, 4 point feet"), "talos": ("s", "C3", "Talos, 2 soles")}
    for name, (mk, col, label) in style.items():
        rows = sorted(table.select(section="robots", robot=name, workspace="yes"),
                      key=lambda x: int(x["r"]))
        if not rows:
            continue
        r = [int(x["r"]) for x in rows]
        ax2.plot(r, [B.num(x, "liedyn_round_median_min_s") * 1e6 for x in rows], mk + "-",
                 color=col, label=f"{label}: constrained")
        ax2.plot(r, [B.num(x, "baseline_round_median_min_s") * 1e6 for x in rows], mk + "--",
                 mfc="none", color=col, label=f"{label}: forward_dynamics")
        pin = table.select(section="pinocchio", robot=name, workspace="yes")
        ax2.plot([int(x["r"]) for x in pin],
                 [B.num(x, "baseline_round_median_min_s") * 1e6 for x in pin], "D", ms=7,
                 color=col, mec="k", label=f"{label}: Pinocchio")
    ax2.set(xlabel="derivative order r (Pinocchio: r = 0 constraintDynamics, r = 1 its "
                   "derivatives and the chain rule)",
            ylabel="time per call [µs] (smallest per-round median)",
            title="(b) against r, with a workspace")
    for ax in (ax1, ax2):
        ax.set_xlim(left=-0.3)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7.5)
    return B.save(fig, stem)


def main(argv=None):
    args = B.parser(__doc__, calls=(CALLS_QUICK, CALLS_FULL), resume=True).parse_args(argv)
    stem, table = B.open_table(args, "bench_contact", FIELDS, KEY)
    measured, kept = measure(args, table)
    print(f"measured {measured} groups in this run, kept {kept} "
          f"({table.stamp['machine']}; code {table.stamp['code']})")
    report(table)
    stem.with_suffix(".md").write_text(markdown(table, args.full))
    png = plot(table, stem)
    print(f"\nwrote {stem}.csv, {stem}.md and {png}")
    return table


if __name__ == "__main__":
    main()
