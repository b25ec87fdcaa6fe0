"""Generated C of the symbolic recursions for real robots: size, compile time
and run time against N, r, the graph's structure and the optimisation level.

    python -m experiments.bench_codegen            # quick: a few minutes
    python -m experiments.bench_codegen --full     # r = 0..5, flat and shared, -O0..-O2
    python -m experiments.bench_codegen --full --resume   # finish a cut-short run

Each row is one function (``liedyn.symbolic``) generated as C and compiled
(``liedyn.symbolic.codegen``) into the C timing program, with:

* ``structure``: ``flat`` (one inlined SX graph) or ``shared`` (the per-body
  steps kept as calls; Jacobians by forward passes of ``directions``
  directions mapped over the identity, SPEC §15.4);
* ``c_bytes``, ``largest_fn_bytes`` (the largest C function), ``gen_s``;
* ``predicted_s`` (:func:`liedyn.symbolic.predict_compile`, before
  compiling), ``cc_s`` (wall) and ``cc_cpu_s`` (the compiler's CPU time,
  which the load of a shared machine inflates less than the wall time);
* ``run_us``, ``run_min_us``: median and smallest of the samples' µs per
  call from C (the harness of :func:`liedyn.symbolic.build_timer`, no
  Python in the loop; on a loaded machine the smallest is the steadier);
* ``error``: largest relative error against the compiled kernels
  (``liedyn.inverse_dynamics``) for the dynamics, against CasADi's
  evaluation of the flat graph's Jacobian for Jacobians;
* the compiler (``cc --version``), the flags, the machine's load before and
  after each compile.

Targets: Go2's order-1 inverse-dynamics Jacobian
compiled in ≤ 60 s; the N = 101 tree's inverse dynamics of order 5
compiled in ≤ 10 min (column ``target_s``, ``met``).

Cases: the paper's aerial manipulator (N = 7), Go2 (example-robot-data, N =
13) and the benchmark tree of SPEC §9 (N = 101). Quick: N = 7 at r = 0, 1
(both structures), Go2's order-1 Jacobian shared (one direction, -O1), N = 101 shared at
r = 1 and 5 (-O1). ``--full``: r = 0..5 at N = 7 and 101 for both
structures (flat at N = 101 only to r = 1: it compiles about four times
longer per order), Go2's Jacobian flat at -O0 (-O2 is predicted only: it
takes about a quarter of an hour, -O1 several minutes) and shared with 1, 4
and 16 directions, each at -O0, -O1 and -O2. Writes ``results/bench_codegen[_full].csv`` (rows
are added as they finish; ``--resume`` keeps those of this machine and code
version; ``--only tree101`` and the like measure a subset).
"""

import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import liedyn
from liedyn import symbolic as lds
from liedyn.symbolic import codegen

from ._bench import ROOT, open_table, parser
from ._timing import LOAD_FIELDS, load_columns, machine_load

FIELDS = ["robot", "N", "what", "r", "structure", "directions", "flags", "compiler", "c_bytes",
          "largest_fn_bytes", "gen_s", "predicted_s", "cc_s", "cc_cpu_s", "run_us", "run_min_us",
          "error", "target_s", "met", *LOAD_FIELDS]
KEY = ["robot", "what", "r", "structure", "directions", "flags"]
TARGETS = {("go2", "jacobian", 1): 60.0, ("tree101", "inverse", 5): 600.0}


def compiler_version():
    out = subprocess.run(["cc", "--version"], capture_output=True, text=True)
    return out.stdout.splitlines()[0] if out.returncode == 0 and out.stdout else "unknown"


def robot(name):
    if name == "paper":
        from models.aerial_manipulator import aerial_manipulator
        return aerial_manipulator()
    if name == "go2":
        from models.quadruped_drops import go2
        return go2()[0]
    from models.trees import benchmark_tree
    return benchmark_tree(n_branches=5, bodies_per_branch=20)


def inputs(model, r, rng):
    C0 = liedyn.se3.exp(rng.normal(size=6) * 0.3)
    V = rng.normal(size=(r + 2, 6)) * 0.3
    q = rng.normal(size=(r + 3, model.n_joints)) * 0.3
    return C0, V, q


def function(model, what, r, structure, directions):
    name = f"{what}_{structure}_{r}_{directions}"
    f = lds.inverse_dynamics_function(model, r, structure=structure, name=name)
    if what == "inverse":
        return f
    return lds.jacobian_function(f, ("base_wrench", "tau"), ("base_twist", "q"),
                                 directions=max(directions, 1), name=f"jac_{name}")


def _rel(a, d):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(d))) / max(np.max(np.abs(d)), 1e-300))


def measure(table, case, workdir, cc_name, samples):
    rob, what, r, structure, directions, flags = case
    model = robot(rob)
    rng = np.random.default_rng(11)
    C0, V, q = inputs(model, r, rng)
    ins = dict(base_pose=C0, base_twist=V, q=q)
    f = function(model, what, r, structure, directions)
    flag_list = (flags, "-march=native", "-fno-math-errno")
    t0 = time.perf_counter()
    src = lds.generate_c(f, workdir)
    gen_s = time.perf_counter() - t0
    est = lds.predict_compile(src, flag_list)
    row = dict(robot=rob, N=model.n_bodies, what=what, r=r, structure=structure,
               directions=directions if what == "jacobian" and structure == "shared" else "",
               flags=flags, compiler=cc_name, c_bytes=est.bytes,
               largest_fn_bytes=est.largest_function, gen_s=gen_s, predicted_s=est.seconds)
    target = TARGETS.get((rob, what, r))
    print(f"  {rob} {what} r={r} {structure}{'' if not row['directions'] else f' d={directions}'} "
          f"{flags}: {est.bytes / 1e6:.2f} MB of C, predicted {est.seconds:.0f} s ...",
          flush=True)
    before = machine_load()
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    exe, _, cc_s = codegen.build_timer(f, workdir, flags=flag_list, warn_after=float("inf"))
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    row.update(cc_s=cc_s, cc_cpu_s=(c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime),
               **load_columns(before, machine_load()))
    outs, times = codegen.run_timer(f, exe, ins, samples=samples)
    row.update(run_us=float(np.median(times)), run_min_us=float(np.min(times)))
    if what == "inverse":
        inv = liedyn.inverse_dynamics(model, C0, V, q, r)
        row["error"] = max(_rel(outs["tau"], inv.tau), _rel(outs["base_wrench"], inv.base_wrench))
    else:
        flat = lds.jacobian_function(lds.inverse_dynamics_function(model, r),
                                     ("base_wrench", "tau"), ("base_twist", "q"))
        ref = {k: np.asarray(v.full()) for k, v in flat(**ins).items()}
        row["error"] = max(_rel(outs[k], ref[k]) for k in ref)
    if target is not None:
        row.update(target_s=target, met="yes" if cc_s <= target else "no")
    table.add(**row)
    print(f"    compiled in {cc_s:.1f} s (compiler CPU {row['cc_cpu_s']:.1f} s, load "
          f"{before['load1']:.1f}), {row['run_us']:.2f} µs per call (smallest sample "
          f"{row['run_min_us']:.2f}), error "
          f"{row['error']:.1e}" + (f"; target ≤ {target:.0f} s: {row['met']}" if target else ""),
          flush=True)


def cases(full):
    out = []
    if not full:
        for r in (0, 1):
            for s in ("flat", "shared"):
                out.append(("paper", "inverse", r, s, 0, "-O1"))
        out.append(("go2", "jacobian", 1, "shared", 1, "-O1"))
        out += [("tree101", "inverse", r, "shared", 0, "-O1") for r in (1, 5)]
        return out
    for r in range(6):
        for s in ("flat", "shared"):
            for fl in ("-O1", "-O2"):
                out.append(("paper", "inverse", r, s, 0, fl))
    for d in (1, 4, 16):
        for fl in ("-O0", "-O1", "-O2"):
            out.append(("go2", "jacobian", 1, "shared", d, fl))
    out.append(("go2", "jacobian", 1, "flat", 0, "-O0"))
    for r in range(6):
        for fl in ("-O1", "-O2"):
            out.append(("tree101", "inverse", r, "shared", 0, fl))
    out += [("tree101", "inverse", r, "flat", 0, "-O1") for r in (0, 1)]
    return out


def predicted_only(table, full):
    """Go2's flat order-1 Jacobian at -O2: predicted, not compiled (--full)."""
    if not full:
        return
    model = robot("go2")
    f = function(model, "jacobian", 1, "flat", 0)
    with tempfile.TemporaryDirectory() as d:
        est = lds.predict_compile(lds.generate_c(f, d), codegen.FLAGS)
    table.add(robot="go2", N=model.n_bodies, what="jacobian", r=1, structure="flat",
              flags="-O2 (predicted only)", c_bytes=est.bytes,
              largest_fn_bytes=est.largest_function, predicted_s=est.seconds)
    print(f"  go2 jacobian r=1 flat -O2: {est.bytes / 1e6:.2f} MB of C, predicted "
          f"{est.seconds:.0f} s of compiler time (not compiled)", flush=True)


def main(argv=None):
    ap = parser(__doc__, resume=True)
    ap.add_argument("--only", nargs="+", default=None, metavar="WORDS",
                    help="measure only the cases whose description (robot, what, r, "
                         "structure, directions, flags, e.g. 'tree101' or 'go2 jacobian 1 flat') "
                         "starts with one of these")
    ap.set_defaults(out=ROOT / "results")
    args = ap.parse_args(argv)
    stem, table = open_table(args, "bench_codegen", FIELDS, KEY)
    cc_name = compiler_version()
    print(f"generated C: {cc_name}; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
          flush=True)
    samples = 7 if args.full else 5
    with tempfile.TemporaryDirectory() as workdir:
        for case in cases(args.full):
            words = " ".join(str(x) for x in case)
            if args.only and not any(words.startswith(w) for w in args.only):
                continue
            key = dict(zip(KEY, case))
            key["directions"] = case[4] if case[1] == "jacobian" and case[3] == "shared" else ""
            if table.get(**key) is not None:
                continue
            measure(table, case, workdir, cc_name, samples)
    if (table.get(robot="go2", what="jacobian", r=1, structure="flat", directions="",
                  flags="-O2 (predicted only)") is None
            and (not args.only or any(w.startswith("go2") for w in args.only))):
        predicted_only(table, args.full)
    print(f"\nwrote {stem}.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
