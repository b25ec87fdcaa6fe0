"""Speed targets of the compiled kernels, measured against baselines in one run.

    python -m experiments.bench_speed [--full] [--out DIR]

Every time is the mean per call (the paper's statistic); every ratio is the
median of per-pair ratios, the two callables alternating call by call in one
run (:func:`experiments._timing.paired`), with the quartiles of those ratios
(columns ``q1``, ``q3``, ``pairs``). The machine's 1-minute load average
before and after the run and its number of cores are the rows of section
``machine load``. Sections,
each a table printed and written to ``paper_figures/bench_speed.csv``
(``bench_speed_full.csv`` with ``--full``; the growth fits also to
``bench_speed.png``):

0'. Calls as the README writes them (no ``workspace=``) against the same
   calls with a reused :class:`liedyn.Workspace`: inverse, forward and
   hybrid dynamics at N = 7 and N = 101, r = 0, 1, 5, interleaved in one
   run, and at N = 7 against Pinocchio's ``rnea`` and ``aba`` with their
   ``Data`` reused, also in a loop that keeps every result (a list emptied
   every ``KEPT`` results within the timed calls).
0. The aerial manipulator (N = 7), the size of real robots: inverse and
   forward dynamics (with a workspace) at r = 0, 1, 5 against Pinocchio's
   ``rnea`` and ``aba`` on the same tree; hybrid dynamics with every joint
   force-driven against forward dynamics (what forward dynamics would pay
   for hybrid's branches); and the cost outside the kernels: the whole
   call minus the compiled kernel alone (the same kernel run in a compiled
   loop), at N = 7 and N = 101.
1. N = 101 (5 branches × 20 links): inverse and forward dynamics per call at
   r = 0, 1, 5, 10, without ``workspace=`` and with a reused workspace,
   interleaved with Pinocchio's ``rnea`` and ``aba`` and with the first time
   derivative of inverse and forward dynamics assembled the way a Pinocchio
   user would (``computeRNEADerivatives`` / ``computeABADerivatives`` plus
   three matrix–vector products). Ratios liedyn / Pinocchio from that run.
2. Batched evaluation: per-sample time of ``inverse_dynamics_batch`` and
   ``forward_dynamics_batch`` over a 3000-sample trajectory of the aerial
   manipulator (N = 7) at r = 5, against one call per sample.
3. Growth: time per call against N = 21…996 at r = 0 and 5 and against
   r = 0…10 at N = 101 (workspace calls), with the paper's laws fitted by
   least squares (:mod:`experiments._fit`): ``t = c₀ + c₁ N`` (coefficients
   and residual) and ``t = c₀ + c₁ r + c₂ r²`` (with the 95 % interval of
   ``c₂``), drawn on linear axes. The intercept ``c₀`` of the linear law is
   the line fitted over N = 21…996 extrapolated to N = 0: the fixed cost of
   a call is a few µs, below what the spread of the points at these sizes
   resolves, so ``c₀`` comes out anywhere within its interval, negative
   too, and is no measurement of the fixed cost (section 0 measures the
   cost outside the kernels directly). The figure gives ``c₀`` with its
   95 % interval and says so.
4. Memory of one call at N = 996, r = 10 (peak of Python-level allocations,
   which include every NumPy array, by ``tracemalloc``).
5. Start-up: a fresh interpreter with an empty kernel cache (compilation
   included) and one with the cache warm: import, first inverse and first
   forward call.

A last table checks the speed targets against these rows (the paired
ratios, and the differences outside the kernels as medians of paired
differences).

The speed paragraph of ``paper_figures/README.md`` is generated from this
CSV by ``python -m experiments.reproduce`` (:mod:`experiments._readme`),
which also reports how many of the targets were met.
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import tracemalloc

import numpy as np

import liedyn
from liedyn._jit import njit
from liedyn.algorithm.forward import forward_dynamics_kernel
from liedyn.algorithm.hybrid import hybrid_dynamics_kernel
from liedyn.algorithm.inverse import inverse_dynamics_kernel
from experiments._progress import heartbeat, progress as bar
from experiments import _bench as B
from experiments import _fit
from experiments._provenance import stamp
from experiments._timing import machine_load, paired
from experiments._table import write_rows
from models.aerial_manipulator import aerial_manipulator

ORDERS_AT_101 = (0, 1, 5, 10)
ORDERS_GROWTH = tuple(range(11))
N_BOD_GROWTH_QUICK = (4, 10, 20, 40, 100, 199)            # N = 21 … 996
N_BOD_GROWTH_FULL = (4, 6, 10, 14, 20, 30, 40, 60, 80, 100, 140, 199)
BATCH_SAMPLES = 3000
CSV_FIELDS = ["section", "quantity", "value", "unit", "q1", "q3", "pairs"]


def paired_row(section, quantity, stats, scale=1.0, unit="ratio"):
    """A CSV row of a :func:`experiments._timing.paired` statistic: the
    median as its value, the quartiles and the number of pairs beside it
    (each times ``scale``)."""
    return dict(section=section, quantity=quantity, value=stats["median"] * scale, unit=unit,
                q1=stats["q1"] * scale, q3=stats["q3"] * scale, pairs=stats["pairs"])


def paired_text(stats):
    """``2.91 (2.70–3.12)``: a paired ratio and its interquartile range."""
    return f"{stats['median']:.2f} ({stats['q1']:.2f}–{stats['q3']:.2f})"


def _default_and_workspace(model, r, rng):
    """Inverse, forward and hybrid dynamics of order r, each as the README
    calls it (no ``workspace=``) and with a reused :class:`liedyn.Workspace`:
    ``{(alg, path): callable}``, path ``"default"`` or ``"workspace"``."""
    C0, Vb, q = B.inverse_inputs(model, r, rng)
    res = liedyn.inverse_dynamics(model, C0, Vb, q, r)
    mask = np.zeros(model.n_joints, dtype=bool)
    mask[::2] = True                                  # every other joint motion-driven
    kw = dict(tau=res.tau, base_wrench=res.base_wrench)
    calls = {"ID": lambda ws: liedyn.inverse_dynamics(model, C0, Vb, q, r, workspace=ws),
             "FD": lambda ws: liedyn.forward_dynamics(model, C0, Vb[:1], q[:2], r, **kw,
                                                      workspace=ws),
             "HD": lambda ws: liedyn.hybrid_dynamics(model, C0, Vb, q, r, motion_driven=mask,
                                                     **kw, workspace=ws)}
    out = {}
    for alg, call in calls.items():
        ws = liedyn.Workspace(model, r)
        out[(alg, "default")] = lambda call=call: call(None)
        out[(alg, "workspace")] = lambda call=call, ws=ws: call(ws)
    return out


KEPT = 200


def _kept_calls(model, rng):
    """Inverse and forward dynamics of order 0 without ``workspace=`` in a
    loop that keeps every result (a list emptied every ``KEPT`` results):
    ``{alg: callable}``."""
    C0, Vb, q = B.inverse_inputs(model, 0, rng)
    res = liedyn.inverse_dynamics(model, C0, Vb, q, 0)
    kept = []

    def keep(x):
        kept.append(x)
        if len(kept) >= KEPT:
            kept.clear()

    return {"ID": lambda: keep(liedyn.inverse_dynamics(model, C0, Vb, q, 0)),
            "FD": lambda: keep(liedyn.forward_dynamics(model, C0, Vb[:1], q[:2], 0, tau=res.tau,
                                                       base_wrench=res.base_wrench))}


def _inverse_forward(model, r, rng, workspace=False):
    """Zero-argument callables for inverse and forward dynamics of order r,
    with a reused workspace or as the README calls them."""
    fns = _default_and_workspace(model, r, rng)
    path = "workspace" if workspace else "default"
    return fns[("ID", path)], fns[("FD", path)]


# The loops take every kernel argument as an argument of their own: a literal
# (False, 0) would make numba compile a second, literal-typed copy of the kernel.
@njit
def _inverse_loop(K, model, ws, C0, about, V, q, W_app, r):
    for _ in range(K):
        inverse_dynamics_kernel(model, ws, C0, about, V, q, W_app, r)


@njit
def _forward_loop(K, model, ws, C0, about, V0, q0, tau_in, Wb, W_app, r):
    for _ in range(K):
        forward_dynamics_kernel(model, ws, C0, about, V0, q0, tau_in, Wb, W_app, r)


@njit
def _hybrid_loop(K, model, ws, C0, about, Vb, q, tau_in, Wb, W_app, r, motion, base_motion):
    for _ in range(K):
        hybrid_dynamics_kernel(model, ws, C0, about, Vb, q, tau_in, Wb, W_app, r, motion,
                               base_motion)


def kernel_loop(model):
    """Kernel calls per timed call of the compiled loops: enough to make the
    loop's own call cost negligible, few enough that one timed call lasts
    about as long as a whole call of the public function (a long call is
    likelier to be interrupted by other load, which would bias the
    difference)."""
    return max(1, round(200 / model.n_bodies))


def _kernels_alone(model, r, rng):
    """Zero-argument callables running the inverse and forward kernels
    ``kernel_loop(model)`` times in a compiled loop (no Python between calls)."""
    C0, Vb, q = B.inverse_inputs(model, r, rng)
    res = liedyn.inverse_dynamics(model, C0, Vb, q, r)
    wi, wf = liedyn.Workspace(model, r), liedyn.Workspace(model, r)
    none = np.zeros((0, 0, 6))
    iargs = (model._data, wi._data, C0, False, Vb, q, none, r)
    fargs = (model._data, wf._data, C0, False, Vb[:1], q[:2], res.tau, res.base_wrench, none, r)
    _inverse_loop(1, *iargs)
    _forward_loop(1, *fargs)
    K = kernel_loop(model)
    return lambda: _inverse_loop(K, *iargs), lambda: _forward_loop(K, *fargs)


def _hybrid_all_force(model, r, rng):
    """Hybrid dynamics with every joint force-driven, i.e. forward dynamics
    through the passes with hybrid's branches: the public call, and the
    kernel alone in a compiled loop."""
    C0, Vb, q = B.inverse_inputs(model, r, rng)
    res = liedyn.inverse_dynamics(model, C0, Vb, q, r)
    ws, wk = liedyn.Workspace(model, r), liedyn.Workspace(model, r)
    mask = np.zeros(model.n_joints, dtype=bool)
    args = (model._data, wk._data, C0, False, Vb, q, res.tau, res.base_wrench, np.zeros((0, 0, 6)),
            r, np.zeros(model.n_bodies, dtype=bool), False)
    _hybrid_loop(1, *args)
    K = kernel_loop(model)
    return (lambda: liedyn.hybrid_dynamics(model, C0, Vb, q, r, motion_driven=mask, tau=res.tau,
                                           base_wrench=res.base_wrench, workspace=ws),
            lambda: _hybrid_loop(K, *args))


def section_small(calls, rng, rows):
    """The aerial manipulator against Pinocchio, hybrid against forward, and
    the per-call cost outside the kernels (also at N = 101)."""
    fns, loops = {}, {}
    for tag, model in (("N=7", aerial_manipulator()), ("N=101", B.tree(B.N_BOD_AT_101))):
        for r in ((0, 1, 5) if tag == "N=7" else (0,)):
            fns[f"{tag} ID r={r}"], fns[f"{tag} FD r={r}"] = _inverse_forward(model, r, rng, True)
            ki, kf = _kernels_alone(model, r, rng)
            fns[f"{tag} ID r={r} kernel"], fns[f"{tag} FD r={r} kernel"] = ki, kf
            loops[f"{tag} ID r={r} kernel"] = loops[f"{tag} FD r={r} kernel"] = kernel_loop(model)
        if tag == "N=7":
            fns["N=7 HD all force-driven r=0"], fns["N=7 HD all force-driven r=0 kernel"] = \
                _hybrid_all_force(model, 0, rng)
            loops["N=7 HD all force-driven r=0 kernel"] = kernel_loop(model)
            for name, fn in (_pinocchio(model, rng) or {}).items():
                fns[f"N=7 {name}"] = fn
    t = B.time_calls(fns, calls)
    stat = {}
    for key, v in t.items():
        scale = 1.0 / loops.get(key, 1)
        stat[key] = v["round_median_min"] * scale
        rows.append(dict(section="small", quantity=key, value=v["mean"] * scale * 1e6, unit="us"))
        rows.append(dict(section="small robust", quantity=key,
                         value=v["round_median_min"] * scale * 1e6, unit="us"))
    lines = []
    for tag in ("N=7", "N=101"):
        for r in ((0, 1, 5) if tag == "N=7" else (0,)):
            for alg in ("ID", "FD"):
                key = f"{tag} {alg} r={r}"
                outside = paired(t[key], t[f"{key} kernel"],
                                 lambda x, y, k=loops[f"{key} kernel"]: x - y / k)
                rows.append(paired_row("overhead", f"{key} whole - kernel", outside, 1e6, "us"))
                lines.append([key, B.us(stat[key]), B.us(stat[f"{key} kernel"]),
                              B.us(outside["median"])])
    B.print_table("per call, workspace reused (smallest per-round median): the whole call, the "
                  "kernel alone, and the difference (median of paired differences)",
                  ["", "whole us", "kernel us", "outside us"], lines)
    pairs = [("N=7 HD all force-driven / FD r=0, kernels alone",
              "N=7 HD all force-driven r=0 kernel", "N=7 FD r=0 kernel"),
             ("N=7 HD all force-driven / FD r=0, public calls",
              "N=7 HD all force-driven r=0", "N=7 FD r=0")]
    if "N=7 pinocchio rnea" in t:
        pairs += [(f"N=7 {a} / {b}", f"N=7 {a}", f"N=7 {b}") for a, b in (
            ("ID r=0", "pinocchio rnea"), ("FD r=0", "pinocchio aba"),
            ("ID r=1", "pinocchio d/dt rnea"), ("FD r=1", "pinocchio d/dt aba"))]
    pairs += [(f"N=7 {a} r=5 / {a} r=0", f"N=7 {a} r=5", f"N=7 {a} r=0") for a in ("ID", "FD")]
    ratios = [(name, paired(t[a], t[b])) for name, a, b in pairs]
    rows.extend(paired_row("small ratio", name, x) for name, x in ratios)
    B.print_table("aerial manipulator, median of paired ratios (interquartile range)",
                  ["ratio", "value"], [[n, paired_text(x)] for n, x in ratios])


def section_default(calls, rng, rows):
    """The call as the README writes it against the same call with a reused
    workspace, interleaved in one run: inverse, forward and hybrid dynamics
    at N = 7 and N = 101, r = 0, 1, 5; at N = 7 also Pinocchio's ``rnea`` and
    ``aba`` with their ``Data`` reused."""
    lines = []
    for tag, model in (("N=7", aerial_manipulator()), ("N=101", B.tree(B.N_BOD_AT_101))):
        fns = {}
        for r in (0, 1, 5):
            fns.update({(alg, path, r): fn for (alg, path), fn
                        in _default_and_workspace(model, r, rng).items()})
        pin = _pinocchio(model, rng) if tag == "N=7" else None
        for name in ("pinocchio rnea", "pinocchio aba"):
            if pin:
                fns[(name, "", 0)] = pin[name]
        if pin:
            fns.update({(alg, "every result kept", 0): fn
                        for alg, fn in _kept_calls(model, rng).items()})
        t = B.time_calls(fns, calls if tag == "N=7" else max(100, calls // 3))
        stat = {k: v["round_median_min"] for k, v in t.items()}
        for (alg, path, r), v in t.items():
            label = f"{tag} {alg} r={r} {path}".strip()
            rows.append(dict(section="default path", quantity=label, value=v["mean"] * 1e6,
                             unit="us"))
            rows.append(dict(section="default path robust", quantity=label,
                             value=v["round_median_min"] * 1e6, unit="us"))
        for r in (0, 1, 5):
            for alg in ("ID", "FD", "HD"):
                x = paired(t[(alg, "default", r)], t[(alg, "workspace", r)])
                rows.append(paired_row("default path ratio",
                                       f"{tag} {alg} r={r} no workspace / workspace", x))
                lines.append([f"{tag} {alg} r={r}", B.us(stat[(alg, "default", r)]),
                              B.us(stat[(alg, "workspace", r)]), paired_text(x)])
        if pin:
            for alg, name in (("ID", "pinocchio rnea"), ("FD", "pinocchio aba")):
                x = paired(t[(alg, "default", 0)], t[(name, "", 0)])
                rows.append(paired_row("default path ratio",
                                       f"N=7 {alg} r=0 no workspace / {name}", x))
                lines.append([f"N=7 {alg} r=0 / {name} (Data reused)",
                              B.us(stat[(alg, "default", 0)]), "", paired_text(x)])
                x = paired(t[(alg, "every result kept", 0)], t[(name, "", 0)])
                rows.append(paired_row("default path ratio",
                                       f"N=7 {alg} r=0 every result kept / {name}", x))
                lines.append([f"N=7 {alg} r=0, every result kept / {name}",
                              B.us(stat[(alg, "every result kept", 0)]), "", paired_text(x)])
    B.print_table("calls without workspace= against calls with a reused Workspace (smallest "
                  "per-round median; ratio: median of paired ratios (interquartile range))",
                  ["", "no workspace us", "workspace us", "ratio"], lines)


# (target, section and quantity of the row it reads, limit)
TARGETS = [(f"{tag} {alg} r={r}: no workspace / workspace",
            ("default path ratio", f"{tag} {alg} r={r} no workspace / workspace"), 1.25)
           for tag in ("N=7", "N=101") for alg in ("ID", "FD", "HD") for r in (0, 1, 5)] + [
    ("N=7 inverse r=0, no workspace / rnea",
     ("default path ratio", "N=7 ID r=0 no workspace / pinocchio rnea"), 2.0),
    ("N=7 forward r=0, no workspace / aba",
     ("default path ratio", "N=7 FD r=0 no workspace / pinocchio aba"), 2.0),
    ("N=7 inverse r=0, every result kept / rnea",
     ("default path ratio", "N=7 ID r=0 every result kept / pinocchio rnea"), 2.0),
    ("N=7 forward r=0, every result kept / aba",
     ("default path ratio", "N=7 FD r=0 every result kept / pinocchio aba"), 2.0),
    ("outside the kernels, inverse, N=7 r=0", ("overhead", "N=7 ID r=0 whole - kernel"), 2.0),
    ("outside the kernels, forward, N=7 r=0", ("overhead", "N=7 FD r=0 whole - kernel"), 2.0),
    ("outside the kernels, inverse, N=101 r=0", ("overhead", "N=101 ID r=0 whole - kernel"), 2.0),
    ("outside the kernels, forward, N=101 r=0", ("overhead", "N=101 FD r=0 whole - kernel"), 2.0),
    ("N=7 inverse r=0 / rnea", ("small ratio", "N=7 ID r=0 / pinocchio rnea"), 3.0),
    ("N=7 forward r=0 / aba", ("small ratio", "N=7 FD r=0 / pinocchio aba"), 3.0),
    ("N=7 inverse r=5 / own r=0", ("small ratio", "N=7 ID r=5 / ID r=0"), 5.0),
    ("N=7 forward r=5 / own r=0", ("small ratio", "N=7 FD r=5 / FD r=0"), 5.0),
    ("N=101 inverse r=1 / Pinocchio's derivative route",
     ("N=101 ratio", "ID r=1 / pinocchio d/dt rnea"), 1.0 / 3.0),
    ("N=101 forward r=0 / aba", ("N=101 ratio", "FD r=0 / pinocchio aba"), 1.0),
    ("N=101 forward r=5 / aba", ("N=101 ratio", "FD r=5 / pinocchio aba"), 3.3),
    ("N=101 inverse r=5 / rnea", ("N=101 ratio", "ID r=5 / pinocchio rnea"), 3.7),
]


def section_targets(rows):
    """Each speed target against the value measured in this run."""
    have = {(r["section"], r["quantity"]): r["value"] for r in rows}
    lines = []
    for name, key, limit in TARGETS:
        if key not in have:
            lines.append([name, "not measured", f"{limit:.3g}", ""])
            continue
        x = have[key]
        met = x <= limit
        rows.append(dict(section="targets", quantity=f"{name} (limit {limit:.3g})",
                         value=x, unit="met" if met else "missed"))
        lines.append([name, f"{x:.3g}", f"{limit:.3g}",
                      "met" if met else f"missed by {100 * (x / limit - 1):.0f}%"])
    B.print_table("speed targets (medians of paired differences in µs or of paired ratios, "
                  "this run)",
                  ["target", "measured", "limit", ""], lines)


def _pinocchio(model, rng):
    """Pinocchio's rnea, aba and the first-derivative routes by name
    (:func:`experiments._bench.pinocchio_calls`), or ``None``."""
    calls = B.pinocchio_calls(model, rng, derivatives=True)
    if calls is None:
        return None
    return dict(zip(("pinocchio rnea", "pinocchio aba", "pinocchio d/dt rnea",
                     "pinocchio d/dt aba"), calls))


def section_101(calls, rng, rows):
    model = B.tree(B.N_BOD_AT_101)
    fns = {}
    for r in ORDERS_AT_101:
        fi, ff = _inverse_forward(model, r, rng)
        wi, wf = _inverse_forward(model, r, rng, workspace=True)
        fns.update({f"ID r={r}": fi, f"FD r={r}": ff, f"ID r={r} ws": wi, f"FD r={r} ws": wf})
    pin = _pinocchio(model, rng)
    fns.update(pin or {})
    timed = B.time_calls(fns, calls)
    t = {k: v["mean"] for k, v in timed.items()}
    robust = {k: v["round_median_min"] for k, v in timed.items()}
    for name, s in t.items():
        rows.append(dict(section="N=101", quantity=name, value=s * 1e6, unit="us"))
        rows.append(dict(section="N=101 robust", quantity=name, value=robust[name] * 1e6,
                         unit="us"))
    lines = [[name, B.us(s), B.us(robust[name])] for name, s in t.items()]
    B.print_table("N = 101, time per call", ["call", "mean us", "robust us"], lines)
    if pin:
        pairs = [("ID r=0", "pinocchio rnea"), ("FD r=0", "pinocchio aba"),
                 ("ID r=1", "pinocchio d/dt rnea"), ("FD r=1", "pinocchio d/dt aba"),
                 ("ID r=5", "pinocchio rnea"), ("FD r=5", "pinocchio aba")]
        lines = []
        for a, b in pairs:       # with a workspace: Pinocchio reuses its Data as well
            x = paired(timed[f"{a} ws"], timed[b])
            rows.append(paired_row("N=101 ratio", f"{a} / {b}", x))
            lines.append([f"{a} / {b}", paired_text(x), f"{x['pairs']}"])
        B.print_table("median of paired ratios (interquartile range), liedyn with a workspace",
                      ["ratio", "median (IQR)", "pairs"], lines)


def section_batch(rng, rows):
    model = aerial_manipulator()
    r, S = 5, BATCH_SAMPLES
    C0 = np.stack([liedyn.se3.exp(rng.normal(size=6)) for _ in range(S)])
    Vb = rng.normal(size=(S, r + 2, 6))
    q = rng.normal(size=(S, r + 3, model.n_joints))
    inv = liedyn.inverse_dynamics_batch(model, C0, Vb, q, r)
    fargs = (model, C0, Vb[:, :1], q[:, :2], r)
    fkw = dict(tau=inv.tau, base_wrench=inv.base_wrench)
    liedyn.forward_dynamics_batch(*fargs, **fkw)

    def single_id():
        for s in range(S):
            liedyn.inverse_dynamics(model, C0[s], Vb[s], q[s], r)

    def single_fd():
        for s in range(S):
            liedyn.forward_dynamics(model, C0[s], Vb[s, :1], q[s, :2], r, tau=inv.tau[s],
                                    base_wrench=inv.base_wrench[s])

    t = B.time_calls({"ID batch": lambda: liedyn.inverse_dynamics_batch(model, C0, Vb, q, r),
                      "FD batch": lambda: liedyn.forward_dynamics_batch(*fargs, **fkw),
                      "ID single": single_id, "FD single": single_fd}, calls=6, rounds=3)
    mean = {k: v["mean"] / S for k, v in t.items()}
    lines = []
    for alg in ("ID", "FD"):
        ratio = paired(t[f"{alg} batch"], t[f"{alg} single"])
        rows.append(dict(section="batch N=7 r=5", quantity=f"{alg} batch per sample",
                         value=mean[f"{alg} batch"] * 1e6, unit="us"))
        rows.append(dict(section="batch N=7 r=5", quantity=f"{alg} single call",
                         value=mean[f"{alg} single"] * 1e6, unit="us"))
        rows.append(paired_row("batch N=7 r=5", f"{alg} batch / single", ratio))
        lines.append([alg, B.us(mean[f"{alg} batch"]), B.us(mean[f"{alg} single"]),
                      paired_text(ratio)])
    B.print_table(f"aerial manipulator (N = 7), r = 5, {S} samples, "
                  f"{liedyn.algorithm.batch.available_cores()} threads: mean per-sample time, "
                  "median of paired ratios (interquartile range)",
                  ["", "batch us", "single us", "batch/single"], lines)


def section_growth(full, calls, rng, rows, progress):
    sizes = N_BOD_GROWTH_FULL if full else N_BOD_GROWTH_QUICK
    vs_n = {}
    for nb in bar(sizes, desc="growth in N", disable=not progress):
        model = B.tree(nb)
        fns = {}
        for r in (0, 5):
            fi, ff = _inverse_forward(model, r, rng, workspace=True)
            fns[("ID", r)], fns[("FD", r)] = fi, ff
        t = B.time_calls(fns, max(20, calls // max(1, nb // 10)), rounds=5)
        for key, v in t.items():
            vs_n.setdefault(key, []).append((B.n_bodies(nb), v["mean"]))
    model = B.tree(B.N_BOD_AT_101)
    fns = {}
    for r in ORDERS_GROWTH:
        fi, ff = _inverse_forward(model, r, rng, workspace=True)
        fns[("ID", r)], fns[("FD", r)] = fi, ff
    t = B.time_calls(fns, calls, rounds=5)
    vs_r = {alg: [(r, t[(alg, r)]["mean"]) for r in ORDERS_GROWTH] for alg in ("ID", "FD")}
    lines = []
    fits = {}
    for (alg, r), pts in sorted(vs_n.items()):
        x, y = np.array(pts).T
        f = fits[(alg, r)] = _fit.fit("linear", x, y)
        label = f"{alg} r={r}"
        for name, val, unit in (("c0", f.coef[0] * 1e6, "us"), ("c1", f.coef[1] * 1e6, "us/body"),
                                ("rms residual", f.rms * 1e6, "us")):
            rows.append(dict(section="growth in N", quantity=f"{label}: {name} in t = c0 + c1 N "
                             f"(N = {int(x[0])}..{int(x[-1])})", value=val, unit=unit))
        lines.append([label, f"N = {int(x[0])}..{int(x[-1])}", B.describe_linear(f)])
    for alg, pts in vs_r.items():
        x, y = np.array(pts).T
        f = fits[alg] = _fit.fit("quadratic", x, y)
        lo, hi = f.interval()
        label = f"{alg} N=101"
        for name, val in (("c0", f.coef[0]), ("c1", f.coef[1]), ("c2", f.coef[2]),
                          ("c2 95% CI low", lo[2]), ("c2 95% CI high", hi[2]),
                          ("rms residual", f.rms)):
            rows.append(dict(section="growth in r", quantity=f"{label}: {name} in "
                             f"t = c0 + c1 r + c2 r^2 (r = 0..10)", value=val * 1e6, unit="us"))
        lines.append([label, "r = 0..10", B.describe_quadratic(f)])
    B.print_table("the paper's laws fitted to the mean times (workspace calls, ± standard errors)",
                  ["", "range", "fit"], lines)
    return vs_n, vs_r, fits


def section_memory(rows):
    model = B.tree(199)
    r = 10
    rng = np.random.default_rng(0)
    fi, ff = _inverse_forward(model, r, rng)
    fi(), ff()
    out = []
    for name, fn in (("ID", fi), ("FD", ff)):
        tracemalloc.start()
        fn()
        peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
        tracemalloc.stop()
        rows.append(dict(section="memory N=996 r=10", quantity=f"{name} peak allocation",
                         value=peak, unit="MiB"))
        out.append([name, f"{peak:.2f}"])
    B.print_table("N = 996, r = 10: peak memory allocated by one call", ["", "MiB"], out)


_STARTUP = textwrap.dedent("""
    import time
    t0 = time.perf_counter()
    import numpy as np, liedyn
    from models.trees import benchmark_tree
    m = benchmark_tree(5, 20)
    t1 = time.perf_counter()
    r = 5
    rng = np.random.default_rng(0)
    Vb, q = rng.normal(size=(r + 2, 6)), rng.normal(size=(r + 3, m.n_joints))
    res = liedyn.inverse_dynamics(m, np.eye(4), Vb, q, r)
    t2 = time.perf_counter()
    liedyn.forward_dynamics(m, np.eye(4), Vb[:1], q[:2], r, tau=res.tau,
                            base_wrench=res.base_wrench)
    t3 = time.perf_counter()
    print(t1 - t0, t2 - t1, t3 - t2)
""")


def section_startup(rows, progress=True):
    lines = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XDG_CACHE_HOME=cache, PYTHONPATH=str(B.ROOT))
        for label in ("cold cache (compiles)", "warm cache"):
            with heartbeat(f"bench_speed: start-up, {label}", disable=not progress):
                out = subprocess.run([sys.executable, "-c", _STARTUP], env=env, cwd=B.ROOT,
                                     capture_output=True, text=True, check=True)
            imp, fid, ffd = (float(x) for x in out.stdout.split())
            for name, val in (("import", imp), ("first inverse call", fid),
                              ("first forward call", ffd)):
                rows.append(dict(section=f"start-up, {label}", quantity=name, value=val,
                                 unit="s"))
            lines.append([label, f"{imp:.2f}", f"{fid:.2f}", f"{ffd:.2f}"])
    B.print_table("fresh interpreter, N = 101, r = 5: seconds",
                  ["", "import", "first ID", "first FD"], lines)


def plot_growth(vs_n, vs_r, fits, stem):
    """Mean time per call against N and against r on linear axes, with the
    fitted laws."""
    fig, (a1, a2) = B.plt.subplots(1, 2, figsize=(12.5, 4.8), layout="constrained")
    styles = {"ID": ("o", "C0"), "FD": ("s", "C3")}
    for (alg, r), pts in sorted(vs_n.items()):
        x, y = np.array(pts).T
        mk, col = styles[alg]
        f = fits[(alg, r)]
        lo, hi = f.interval()
        a1.plot(x, y * 1e6, mk if r else "^", color=col, ms=5,
                label=f"{alg} r={r}: c₀ = {f.coef[0] * 1e6:.1f} µs [{lo[0] * 1e6:.1f}, "
                      f"{hi[0] * 1e6:.1f}], c₁ = {f.coef[1] * 1e6:.3f} µs/body")
        n_range = f"N = {int(x.min())}…{int(x.max())}"
        xx = np.linspace(0.0, x.max(), 50)
        a1.plot(xx, f.predict(xx) * 1e6, "-" if r else ":", color=col, lw=1)
    for alg, pts in vs_r.items():
        x, y = np.array(pts).T
        mk, col = styles[alg]
        f = fits[alg]
        lo, hi = f.interval()
        a2.plot(x, y * 1e6, mk, color=col, ms=5,
                label=f"{alg} N=101: c₂ = {f.coef[2] * 1e6:.3f} µs, 95% CI "
                      f"[{lo[2] * 1e6:.3f}, {hi[2] * 1e6:.3f}]")
        xx = np.linspace(0.0, x.max(), 60)
        a2.plot(xx, f.predict(xx) * 1e6, "-", color=col, lw=1)
    a1.set(xlabel="number of bodies N", ylabel=B.MEAN_LABEL,
           title="cost against tree size; lines: t = c₀ + c₁N")
    a2.set(xlabel="derivative order r", ylabel=B.MEAN_LABEL,
           title="cost against order at N = 101; lines: t = c₀ + c₁r + c₂r²")
    for ax in (a1, a2):
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    a1.legend(fontsize=7.5, title_fontsize=7.5, alignment="left",
              title=f"c₀ [95% interval]: the line fitted over {n_range} extrapolated to N = 0;\n"
                    "the fixed cost per call is not resolved at these sizes (c₀ < 0 possible)")
    a2.legend(fontsize=7.5)
    return B.save(fig, stem)


def load_rows(before, after):
    """The rows of section ``machine load``: the 1-minute load average
    before and after the run (:func:`experiments._timing.machine_load`) and
    the number of cores."""
    return [dict(section="machine load", quantity="1-min load average before",
                 value=before["load1"], unit="load"),
            dict(section="machine load", quantity="1-min load average after",
                 value=after["load1"], unit="load"),
            dict(section="machine load", quantity="cores", value=float(after["cores"]),
                 unit="cores")]


def _formatted(row):
    """A row with its numbers written to four significant digits."""
    return dict(row, **{k: f"{row[k]:.4g}" for k in ("value", "q1", "q3") if k in row})


def main(argv=None):
    args = B.parser(__doc__, calls=(150, 1000)).parse_args(argv)
    calls = B.calls_for(args)
    progress = not args.no_progress
    rng = np.random.default_rng(0)
    rows = []
    stem = B.output_stem(args, "bench_speed")
    stem.parent.mkdir(parents=True, exist_ok=True)
    steps = [("small robots", lambda: section_small(calls, rng, rows)),
             ("without a workspace", lambda: section_default(calls, rng, rows)),
             ("N = 101 against Pinocchio", lambda: section_101(calls, rng, rows)),
             ("batched trajectories", lambda: section_batch(rng, rows)),
             ("growth in N and r", lambda: section_growth(args.full, calls, rng, rows, progress)),
             ("memory", lambda: section_memory(rows)),
             ("start-up", lambda: section_startup(rows, progress)),
             ("targets", lambda: section_targets(rows))]
    growth = None
    before = machine_load()
    try:
        for name, step in bar(steps, desc="bench_speed", disable=not progress):
            out = step()
            if out is not None:
                growth = out
    except KeyboardInterrupt:
        print("interrupted: writing the sections that finished", file=sys.stderr)
    after = machine_load()
    rows[:0] = load_rows(before, after)
    print(f"1-minute load average {before['load1']:.2f} before and {after['load1']:.2f} after "
          f"the run, {after['cores']} cores")
    write_rows(f"{stem}.csv", CSV_FIELDS, [_formatted(r) for r in rows], stamp=stamp())
    print(f"\nwrote {stem}.csv" + (f" and {plot_growth(*growth, stem)}" if growth else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
