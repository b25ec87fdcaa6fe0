"""The recursions as symbolic functions (SPEC §15) and the Taylor-mode
baseline (SPEC §16): graph size, tracing and code-generation time, generated
C against the authors' C++, and the compiled kernels against Taylor-mode AD.

    python -m experiments.bench_symbolic            # quick: small trees and orders, ~1-2 min
    python -m experiments.bench_symbolic --full     # N = 6..301, r = 0..10, C at N = 7 and 101

Sections (column ``section`` of the CSV):

* ``graph``: elementary operations of the traced inverse and forward
  dynamics (``liedyn.symbolic``) against ``N`` (benchmark trees) and ``r``,
  with the time to trace them; fitted by least squares to
  ``ops = N (a + b r + c r²)`` (the ``fit`` rows: coefficients and the
  largest relative residual).
* ``nested``: the same count for the nested-AD baseline
  (:class:`liedyn.baselines.CasadiBaseline`, d^r/dt^r of the order-0 maps by
  r nested ``jtimes``) and its growth factor per order.
* ``c``: the generated C (``liedyn.symbolic.codegen``, system compiler,
  flags ``FLAGS``) timed from C by its own harness (no Python in the loop),
  interleaved with the authors' C++ (``reference-cpp/``'s harness, when it is
  found next to the repository) on the same tree and state; code-generation
  and compile times; the ratio C / C++ is the median of the per-round
  ratios (each round: the median of the C samples against the C++ harness's
  number), with quartiles ``ratio_q1``, ``ratio_q3``. Targets: ratio ≤ 1.0 at N = 7, r = 0, 1, 5, 10. At
  N = 101 (``--full``) r = 0, 1, 2 are reported: the compile time grows
  about fourfold per order there (24 s, 97 s, 395 s for the inverse map on
  this machine), so r = 5 and 10 would take hours to compile and are not
  attempted.
* ``taylor``: ``liedyn.inverse_dynamics`` (with a workspace) against the
  Taylor-mode baseline (``liedyn.baselines.taylor_jax``, ``by_level=True``: the
  bodies of one depth batched, a graph XLA compiles in far less time;
  ``jax.jit``-compiled;
  compile time apart, column ``trace_s``), interleaved; ratio kernel / Taylor,
  the median of the per-pair ratios (:func:`experiments._timing.paired`);
  each order in its own interpreter (XLA can abort on a large graph: an
  order that fails is recorded, ``unit = "compile failed"``). Target ≤ 0.1 at
  r = 5, N = 101 (``--full``, which also sweeps r = 0..10 at N = 11).
  Skipped without JAX.

Operation counts: the instructions of the CasADi function other than
inputs, outputs and constants (one per elementary operation). Writes
``paper_figures/bench_symbolic.csv`` and ``.png`` (``_full`` with ``--full``).
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import liedyn
from liedyn import symbolic as lds
from liedyn.symbolic import codegen

from ._bench import parser, ratio_note, save
from ._provenance import stamp
from ._table import output_stem, write_rows
from ._timing import (LOAD_FIELDS, load_columns, machine_load, paired, paired_stats,
                      ratio_columns, time_calls_loaded)

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path(os.environ.get("LIEDYN_REFERENCE_CPP", ROOT.parent / "shared" / "reference-cpp"))
FIELDS = ("section", "algo", "N", "r", "ops", "trace_s", "gen_s", "cc_s", "value", "unit",
          "other", "ratio", "ratio_q1", "ratio_q3", "target", "met", *LOAD_FIELDS)


def operations(f):
    """Elementary operations of an SX function (inputs, outputs, constants left out)."""
    import casadi as ca
    skip = {ca.OP_INPUT, ca.OP_OUTPUT, ca.OP_CONST, ca.OP_PARAMETER}
    return sum(1 for k in range(f.n_instructions()) if f.instruction_id(k) not in skip)


def _tree(N):
    from models.trees import benchmark_tree
    if N == 7:
        from models.aerial_manipulator import aerial_manipulator
        return aerial_manipulator()
    if N == 6:
        return benchmark_tree(n_branches=1, bodies_per_branch=5)
    return benchmark_tree(n_branches=5, bodies_per_branch=(N - 1) // 5)


def _jets(model, r, rng):
    C0 = liedyn.se3.exp(rng.normal(size=6) * 0.3)
    V = rng.normal(size=(r + 2, 6)) * 0.3
    q = rng.normal(size=(r + 3, model.n_joints)) * 0.3
    return C0, V, q


def _trace(kind, model, r):
    t = time.perf_counter()
    f = (lds.inverse_dynamics_function if kind == "inverse" else lds.forward_dynamics_function)(
        model, r)
    return f, time.perf_counter() - t


# ------------------------------------------------------------------ graph --

def graph_section(rows, Ns, rs_at, r_sweep, N_sweep):
    pts = sorted({(N, r) for N in Ns for r in rs_at} | {(N_sweep, r) for r in r_sweep})
    for N, r in pts:
        model = _tree(N)
        for kind in ("inverse", "forward"):
            f, dt = _trace(kind, model, r)
            rows.append(dict(section="graph", algo=kind, N=N, r=r, ops=operations(f), trace_s=dt))
            print(f"  graph {kind:8s} N={N:4d} r={r:2d}: {rows[-1]['ops']:9d} ops, "
                  f"traced in {dt:6.2f} s", flush=True)
    for kind in ("inverse", "forward"):
        pts = [(int(x["N"]), int(x["r"]), x["ops"]) for x in rows
               if x["section"] == "graph" and x["algo"] == kind]
        A = np.array([[1.0, r, r * r] for N, r, _ in pts])
        y = np.array([ops / N for N, _, ops in pts])
        coef, *_ = np.linalg.lstsq(A, y, rcond=None)
        resid = np.max(np.abs(A @ coef - y) / y)
        for name, v in zip("abc", coef):
            rows.append(dict(section="fit", algo=kind, value=float(v), unit=f"ops/N, {name}"))
        rows.append(dict(section="fit", algo=kind, value=float(resid), unit="max rel residual"))
        print(f"  fit {kind}: ops ≈ N ({coef[0]:.0f} + {coef[1]:.0f} r + {coef[2]:.1f} r²), "
              f"largest relative residual {resid:.2f}")


def nested_section(rows, N, r_max):
    from liedyn.baselines import CasadiBaseline
    model = _tree(N)
    base = CasadiBaseline(model, forward="articulated")
    prev = {}
    for r in range(r_max + 1):
        for kind in ("inverse", "forward"):
            t = time.perf_counter()
            f = base.inverse(r) if kind == "inverse" else base.forward(r)
            dt = time.perf_counter() - t
            ops = operations(f)
            growth = ops / prev[kind] if kind in prev else float("nan")
            prev[kind] = ops
            rows.append(dict(section="nested", algo=kind, N=N, r=r, ops=ops, trace_s=dt,
                             value=growth, unit="growth per order"))
            tr = [x for x in rows if x["section"] == "graph" and x["algo"] == kind
                  and x["N"] == N and x["r"] == r]
            mine = f"; traced recursion {tr[0]['ops']} ops" if tr else ""
            print(f"  nested AD {kind:8s} N={N} r={r}: {ops:9d} ops (×{growth:.2f}), built in "
                  f"{dt:.2f} s{mine}", flush=True)


# ----------------------------------------------------------- C vs the C++ --

def _reference_harness():
    build = REFERENCE / "build.sh"
    if not build.exists():
        return None
    out = subprocess.run(["bash", str(build)], capture_output=True, text=True)
    path = out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout else ""
    return path if path and Path(path).exists() else None


def _write_case(path, model, C0, V, q, W0, tau):
    sys.path.insert(0, str(REFERENCE))
    try:
        import case
    finally:
        sys.path.pop(0)
    N = model.n_bodies
    qq = np.zeros((q.shape[0], N))
    qq[:, 1:] = q
    tt = np.zeros((tau.shape[0], N))
    tt[:, 1:] = tau
    Y = np.zeros((N, 6))
    Y[1:] = model.joint_screw
    case.write(path, parent=model.body_parent, A=model.body_origin, Y=Y, Mb=model.body_inertia,
               g=-float(model.gravity[2]), C0=C0, V=V, q=qq, Wprop=W0, tau=tt)


def c_section(rows, cases, samples, rounds, workdir):
    harness = _reference_harness()
    if harness is None:
        print(f"  the authors' C++ was not found at {REFERENCE}: generated C timed alone")
    rng = np.random.default_rng(7)
    for N, r in cases:
        model = _tree(N)
        C0, V, q = _jets(model, r, rng)
        inv = liedyn.inverse_dynamics(model, C0, V, q, r)
        for kind in ("inverse", "forward"):
            f, dt = _trace(kind, model, r)
            exe, gen_s, cc_s = codegen.build_timer(f, workdir)
            if kind == "inverse":
                ins = dict(base_pose=C0, base_twist=V, q=q)
            else:
                ins = dict(base_pose=C0, base_twist=V[:1], q=q[:2], tau=inv.tau,
                           base_wrench=inv.base_wrench)
            outs, _ = codegen.run_timer(f, exe, ins, samples=1, calls=1)
            err = (np.max(np.abs(outs["tau"] - inv.tau)) / np.max(np.abs(inv.tau))
                   if kind == "inverse" else
                   np.max(np.abs(outs["q"][:3] - q[:3])) / np.max(np.abs(q[:3])))
            c_t, pairs = [], []
            before = machine_load()
            case_file = Path(workdir) / f"case_{N}_{r}.txt"
            if harness:
                _write_case(case_file, model, C0, V, q, inv.base_wrench, inv.tau)
            for _ in range(rounds):
                c_round = list(codegen.run_timer(f, exe, ins, samples=samples)[1])
                c_t += c_round
                if harness:
                    out = subprocess.run([harness, "time", str(case_file),
                                          "id" if kind == "inverse" else "fd", str(r),
                                          str(samples), "0"], capture_output=True, text=True)
                    if out.returncode == 0:
                        pairs.append((float(np.median(c_round)), float(out.stdout.split()[0])))
            load = load_columns(before, machine_load())
            c_us = float(np.median(c_t))
            cpp_t = [b for _, b in pairs]
            cpp_us = float(np.median(cpp_t)) if cpp_t else float("nan")
            stats = paired_stats(*zip(*pairs)) if pairs else None     # round by round
            ratio = stats["median"] if stats else float("nan")
            targeted = N == 7 and r in (0, 1, 5, 10)
            row = dict(section="c", algo=kind, N=N, r=r, ops=operations(f), trace_s=dt,
                       gen_s=gen_s, cc_s=cc_s, value=c_us, unit="us per call (generated C)",
                       other=cpp_us, **(ratio_columns("ratio", stats) if stats else {}), **load)
            if targeted and cpp_t:
                row.update(target=1.0, met="yes" if ratio <= 1.0 else "no")
            rows.append(row)
            print(f"  C {kind:8s} N={N:3d} r={r:2d}: {c_us:9.3f} µs, authors' C++ "
                  f"{cpp_us:9.3f} µs, ratio {ratio:5.2f}; trace {dt:.1f} s, codegen "
                  f"{gen_s:.1f} s, compile {cc_s:.1f} s; max rel. error {err:.1e}", flush=True)


# --------------------------------------------------------------- Taylor --

def taylor_point(N, r, calls):
    """One order of the Taylor-mode comparison, in this process: a dict of
    the row's numbers (see :func:`taylor_section`)."""
    import jax
    from liedyn.baselines.taylor_jax import TaylorJax
    model = _tree(N)
    tj = TaylorJax(model, by_level=True)
    rng = np.random.default_rng(3 + r)
    C0, V, q = _jets(model, r, rng)
    p, s = tj.inverse_series(C0, V, q, r)
    t = time.perf_counter()
    fn = tj._inverse_fn(r)
    jax.block_until_ready(fn(p, s))
    compile_s = time.perf_counter() - t
    W, tau = tj.inverse_dynamics(C0, V, q, r)
    inv = liedyn.inverse_dynamics(model, C0, V, q, r)
    err = max(np.max(np.abs(tau - inv.tau)) / np.max(np.abs(inv.tau)),
              np.max(np.abs(W - inv.base_wrench)) / np.max(np.abs(inv.base_wrench)))
    ws = liedyn.Workspace(model, r)
    res, load = time_calls_loaded(
        {"kernel": lambda: liedyn.inverse_dynamics(model, C0, V, q, r, workspace=ws),
         "taylor": lambda: jax.block_until_ready(fn(p, s))}, calls, budget=2.0)
    return dict(kernel_us=res["kernel"]["mean"] * 1e6, jet_us=res["taylor"]["mean"] * 1e6,
                compile_s=compile_s, err=float(err),
                **ratio_columns("ratio", paired(res["kernel"], res["taylor"])), **load)


def taylor_section(rows, N, rs, calls, target_r):
    """``liedyn.inverse_dynamics`` against Taylor-mode AD at each order, each
    order in a fresh interpreter: XLA's compiler can abort the process on a
    large graph (on this machine at N = 101, r ≥ 3: "LLVM ERROR: Unable to
    allocate section memory"); an order that fails is recorded as such and
    the higher orders of that tree are not attempted."""
    import importlib.util
    import json
    if importlib.util.find_spec("jax") is None:
        print("  JAX is not installed (pip install 'liedyn[jax]'): Taylor-mode section skipped")
        return
    for r in rs:
        code = (f"import json; from experiments.bench_symbolic import taylor_point; "
                f"print('RESULT', json.dumps(taylor_point({N}, {r}, {calls})))")
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                             text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        line = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
        if out.returncode != 0 or not line:
            why = (out.stderr.strip().splitlines() or ["no output"])[-1][:200]
            row = dict(section="taylor", algo="inverse", N=N, r=r, unit="compile failed",
                       other=why)
            if r == target_r:
                row.update(target=0.1, met="no")
            rows.append(row)
            print(f"  Taylor-mode N={N} r={r:2d}: failed (exit {out.returncode}): {why}; higher "
                  f"orders not attempted", flush=True)
            return
        d = json.loads(line[0][7:])
        k_us, j_us = d["kernel_us"], d["jet_us"]
        row = dict(section="taylor", algo="inverse", N=N, r=r, trace_s=d["compile_s"],
                   value=k_us, unit="us per call (kernels)", other=j_us,
                   **{k: d[k] for k in ("ratio", "ratio_q1", "ratio_q3", *LOAD_FIELDS)})
        if r == target_r:
            row.update(target=0.1, met="yes" if d["ratio"] <= 0.1 else "no")
        rows.append(row)
        print(f"  Taylor-mode N={N} r={r:2d}: kernels {k_us:9.1f} µs, jet {j_us:10.1f} µs, "
              f"ratio {d['ratio']:.3f} (median of pairs); XLA compile {d['compile_s']:6.1f} s; max rel. error "
              f"{d['err']:.1e}", flush=True)


# ----------------------------------------------------------------- plot --

def plot(rows, stem):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    g = [x for x in rows if x["section"] == "graph"]
    nested = [x for x in rows if x["section"] == "nested"]
    fit = {(x["algo"], x["unit"]): x["value"] for x in rows if x["section"] == "fit"}
    Nmax = max(int(x["N"]) for x in g)
    counts = {}
    for x in g:
        counts.setdefault(int(x["N"]), set()).add(int(x["r"]))
    Nr = max(counts, key=lambda N: (len(counts[N]), N))
    for kind, c in (("inverse", "C0"), ("forward", "C1")):
        pts = sorted((int(x["r"]), x["ops"]) for x in g if x["algo"] == kind and int(x["N"]) == Nr)
        if pts:
            r, o = zip(*pts)
            ax[0].semilogy(r, o, "o-", color=c, label=f"traced {kind} (N = {Nr})")
            a, b, cc = (fit[(kind, f"ops/N, {n}")] for n in "abc")
            rr = np.linspace(0, max(r), 50)
            ax[0].semilogy(rr, Nr * (a + b * rr + cc * rr * rr), ":", color=c)
        pts = sorted((int(x["r"]), x["ops"], int(x["N"])) for x in nested if x["algo"] == kind)
        if pts:
            r, o, Nn = zip(*pts)
            ax[0].semilogy(r, o, "s--", color=c, alpha=0.6,
                           label=f"nested AD {kind} (N = {Nn[0]})")
    ax[0].set_xlabel("order r")
    ax[0].set_ylabel("elementary operations")
    ax[0].set_title("(a) graph size against r (dotted: the fit N(a + b r + c r²))")
    ax[0].legend(fontsize=7)
    for kind, mk in (("inverse", "o-"), ("forward", "s--")):
        for i, r in enumerate(sorted({int(x["r"]) for x in g if len(
                [y for y in g if int(y["r"]) == int(x["r"])]) > 4})):
            pts = sorted((int(x["N"]), x["ops"]) for x in g if x["algo"] == kind
                         and int(x["r"]) == r)
            if len(pts) > 2:
                N, o = zip(*pts)
                ax[1].loglog(N, o, mk, color=f"C{i}", label=f"{kind}, r = {r}")
    ax[1].set_xlabel("bodies N")
    ax[1].set_title(f"(b) graph size against N (up to {Nmax})")
    ax[1].legend(fontsize=7)
    t = [x for x in rows if x["section"] == "taylor" and x.get("unit") != "compile failed"]
    for i, N in enumerate(sorted({int(x["N"]) for x in t}, reverse=True)):
        pts = sorted((int(x["r"]), x["value"], x["other"]) for x in t if int(x["N"]) == N)
        r, k, j = zip(*pts)
        ax[2].semilogy(r, k, "o-", color=f"C{4 + 2 * i}", label=f"liedyn kernels, inverse, N = {N}")
        ax[2].semilogy(r, j, "s-", color=f"C{5 + 2 * i}",
                       label=f"Taylor-mode AD (JAX jet, jit), inverse, N = {N}")
    ax[2].set_title("(c) evaluation time (compile times apart, in the CSV)")
    c = [x for x in rows if x["section"] == "c" and int(x["N"]) == 7]
    for kind, col in (("inverse", "C2"), ("forward", "C3")):
        pts = sorted((int(x["r"]), x["value"], x["other"]) for x in c if x["algo"] == kind)
        if pts:
            r, cv, pv = zip(*pts)
            ax[2].semilogy(r, cv, "^-", color=col, label=f"generated C, {kind}, N = 7")
            ax[2].semilogy(r, pv, "v:", color=col, label=f"authors' C++, {kind}, N = 7")
    ax[2].set_xlabel("order r")
    ax[2].set_ylabel("µs per call")
    ax[2].legend(fontsize=7)
    return save(fig, stem)


def main(argv=None):
    ap = parser(__doc__)
    args = ap.parse_args(argv)
    rows = []
    if args.full:
        Ns, rs_at, r_sweep, N_sweep = (6, 11, 21, 51, 101, 201, 301), (0, 2, 5), range(11), 101
        nested_N, nested_r = 101, 4
        c_cases = [(7, r) for r in (0, 1, 5, 10)] + [(101, r) for r in (0, 1, 2)]
        samples, rounds = 15, 3
        taylor_N, taylor_rs, calls = 101, list(range(11)), 200
    else:
        Ns, rs_at, r_sweep, N_sweep = (6, 11, 21, 41), (0, 2), range(6), 11
        nested_N, nested_r = 11, 3
        c_cases = [(7, 0), (7, 1)]
        samples, rounds = 7, 3
        taylor_N, taylor_rs, calls = 6, [0, 1], 100
    print("generated C against the authors' C++ (both called from compiled code)")
    with tempfile.TemporaryDirectory() as d:
        c_section(rows, c_cases, samples, rounds, d)
    print("the compiled kernels against Taylor-mode AD")
    taylor_section(rows, taylor_N, taylor_rs, calls, 5 if args.full else None)
    if args.full:                 # every order on a small tree as well
        taylor_section(rows, 11, list(range(11)), calls, None)
    print("graph size of the traced recursions")
    graph_section(rows, Ns, rs_at, r_sweep, N_sweep)
    print("graph size of nested automatic differentiation")
    nested_section(rows, nested_N, nested_r)
    stem = output_stem(args, "bench_symbolic")
    stem.parent.mkdir(parents=True, exist_ok=True)
    write_rows(f"{stem}.csv", FIELDS, rows, stamp=stamp())
    note = ratio_note(rows, FIELDS)
    if note:
        print(note)
    png = plot(rows, stem)
    print(f"\nwrote {stem}.csv and {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
