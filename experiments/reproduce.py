"""Reproduce the paper's experiments and figures in one command.

    python -m experiments.reproduce            # every study in quick mode (about 11 min of CPU)
    python -m experiments.reproduce --full     # every study with the paper's sizes (about half an hour here)
    python -m experiments.reproduce --update-paper-figures   # refresh the committed paper_figures/

Run from the repository root. Each study of ``experiments/`` runs in turn by
its ``main(argv)``: the drawing of the aerial manipulator (Fig. 2), its
inverse → forward round trip (Fig. 3), the round-trip error growth with
order, the cost benchmarks of inverse and forward dynamics (Fig. 4a–b), the
CasADi automatic-differentiation baseline (Fig. 4c), the fits of the paper's
laws, the speed table and the benchmark of the constrained forward dynamics. A study whose module is missing is skipped with a
message; a study that fails is reported and the others still run.

Every benchmark is measured afresh; ``--resume`` lets the benchmarks keep
the rows of a cut-short run that were measured on this machine at this code
version (they print which). ``--full`` writes ``*_full.*`` files next to the
quick ones. By default everything is written to ``results/`` at the
repository root, which git ignores, so a run leaves the checkout as it was;
the run says where at its start and its end. ``--update-paper-figures``
writes into the committed ``paper_figures/`` instead and then reports
which committed numbers changed and by how much (numeric cells of its CSV
files against ``git show HEAD:…``, printed and written to
``paper_figures/reproduce_changes.csv``); ``--out DIR`` writes elsewhere.

Each study records the machine's 1-minute load average before and after it
(``os.getloadavg``) and the number of cores; the README states them and
marks a study whose load exceeded the cores as measured on a loaded
machine (:func:`experiments._timing.unreliable`).

Afterwards ``<out>/README.md`` collects, per study and mode, when, on what
machine and at which code version (``git rev-parse --short HEAD``, ``+dirty``
when the sources differ from it) it ran, its printed tables, figures and
CSV files, with a table of the values the paper does not print; the records
are kept in ``<out>/reproduce_log.json``, so running a subset (``--only``)
keeps the other studies' sections with their own dates. With a quick
``bench_speed.csv`` in ``<out>`` the README opens with a speed paragraph
written from it (:mod:`experiments._readme`); the top-level ``README.md``
only points there and is never rewritten. A study that checks targets
(rows of its CSV marked met or missed, :mod:`experiments._targets`) is
reported as "ok, k of m targets met", with the missed ones listed. Exit
status 0 when every study that ran succeeded (missed targets included).
"""

import argparse
import contextlib
import importlib
import importlib.util
import io
import json
import signal
import sys
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "results"               # git-ignored: the default run changes no tracked file
PAPER_FIGURES = ROOT / "paper_figures"   # committed: written only with --update-paper-figures
LOG = "reproduce_log.json"
CHANGES = "reproduce_changes.csv"

# (module under experiments/, what it reproduces, takes --resume), in the
# order they run: bench_summary reads the CSVs of the benchmarks before it.
STUDIES = (
    ("aerial_manipulator_drawing", "Fig. 2: the aerial manipulator drawn from the model", False),
    ("aerial_manipulator", "Fig. 3: aerial manipulator, inverse → forward dynamics round trip", True),
    ("roundtrip_growth", "round-trip error against derivative order", False),
    ("bench_inverse", "Fig. 4a: H-GRNE-FBS cost against N and r", True),
    ("bench_forward", "Fig. 4b: H-GABI-FBS cost against N and r", True),
    ("bench_casadi", "Fig. 4c: CasADi AD baseline cost against r", True),
    ("bench_summary", "Fig. 4: the paper's laws fitted to all costs", False),
    ("bench_speed", "speed targets: Pinocchio ratios, batching, growth, memory, start-up", False),
    ("bench_robots", "real robots from their URDFs: cost against Pinocchio, r = 0, 1, 2, 5", True),
    ("bench_contact", "constrained forward dynamics: against the unconstrained one and "
                      "Pinocchio's constraintDynamics, against m and r", True),
    ("bench_closed_form", "closed form: mass, Coriolis and gravity terms against Pinocchio",
     False),
    ("elastic_tracking", "control: elastic joints and rotor lag tracked by exact linearization",
     False),
    ("borinot_flight", "control: Borinot flies a figure-eight of its centre of mass, arm "
                       "swinging: exact flat tracking against a geometric SE(3) controller and "
                       "the flat feed-forward with PD; the paper's hexarotor flown as a "
                       "quadrotor", False),
    ("legged_elastic", "control: Solo-12 on four feet with elastic joints, constrained inverse "
                       "dynamics of order 2", False),
    ("bench_control", "control: one controller step against single calls", False),
    ("bench_simulate", "simulation: steps per second and their cost split", False),
    ("contact_events", "simulation with contact events: bouncing sphere, block on an incline, "
                       "Solo-12 dropped on its feet, against closed forms", False),
    ("legged_drops", "simulation with contact events: Go2 and Solo-12 dropped from 10 cm with "
                     "friction, invariants at every sample, energy balance, event_tol sweep, "
                     "a knee driven into its stop",
     False),
    ("bench_contact_sim", "simulation with contact events: cost against the feet held, per "
                          "located event, real-time factor (Solo-12, Go2)", False),
    ("animations", "the viewer: the Go2 contact drop and Borinot's flatness flight as "
                   "self-contained HTML pages", False),
    ("monte_carlo", "Monte-Carlo on Dask: elastic-joint law under model errors, scaling, "
                    "per-task overhead", False),
    ("bench_symbolic", "symbolic functions: graph size, generated C against the authors' C++, "
                       "Taylor-mode AD", False),
    ("optimal_control", "optimal control: aerial manipulator, minimal actuator rates", False),
)

CSV_ROWS_SHOWN = 60  # longer CSV files are cut in the README (the file has all rows)

# Tables shown in full at the top of each mode's part of the README.
HEADLINE_TABLES = (
    ("aerial_manipulator_roundtrip", "Aerial manipulator (Fig. 3): inverse → forward dynamics "
                                     "round trip, relative errors"),
    ("bench_summary", "The paper's laws fitted to the benchmarks (Fig. 4)"),
    ("bench_speed", "Speed of the compiled kernels against Pinocchio, batching, growth, memory"),
)

CASADI_NOTE = """\
**The CasADi forward baseline (Fig. 4c).** The paper's Table 4 says its FD
graph "includes CasADi built-ins mtimes and solve (for base twist)". In the
order-0 articulated-body algorithm (the paper's Algorithm 3 at r = 0) the
base twist is the only quantity found by a linear solve (the base's 6×6
articulated inertia); every joint then takes a scalar division. So the
baseline of Fig. 4c (`forward` in `bench_casadi`) builds that algorithm in
CasADi: world-frame spatial quantities, `mtimes` for the 6×6 products,
one `solve`. The second curve (`forward_mass_matrix`) is the construction
the tests use as an oracle because it shares no step with liedyn's
recursions: the whole (6+n)×(6+n) mass matrix as the Jacobian of the
Newton–Euler map and a sparse LDLᵀ solve. Its graph is about twice as
large (column `nodes` of `bench_casadi.csv`), so it is slower, and used as
the baseline it would make liedyn's speed-up over AD look larger than with
the paper's construction; the graphs of both grow by about ×3 per order.
Building a graph takes about 100 bytes of memory per node, so the orders up
to the paper's r = 8 do not all fit in this machine's {memory} (shared with
the system): `bench_casadi` builds only graphs predicted to need at most
`--max-gb` (0.4 GB quick, 16 GB with `--full`), prints for every other
order the memory it would need, and extrapolates its time with the law
fitted to the measured orders, drawn hollow and dashed."""


@dataclass
class StepResult:
    """Outcome of one study: ``status`` is ``ok``, ``failed``, ``skipped`` or
    ``interrupted`` (Ctrl-C: the main job stops after it);
    ``started`` (UTC), ``machine`` and ``code`` say when, where and on what
    code version it ran; ``targets`` are the targets its CSV files record as
    met or missed (:mod:`experiments._targets`); ``load`` the 1-minute load
    average before and after it and the cores
    (:func:`experiments._timing.load_columns`)."""

    name: str
    title: str
    status: str
    seconds: float = 0.0
    output: str = ""
    message: str = ""
    files: list = field(default_factory=list)
    argv: list = field(default_factory=list)
    started: str = ""
    machine: str = ""
    code: str = ""
    targets: list = field(default_factory=list)   # [[target, met]] (experiments._targets)
    load: dict = field(default_factory=dict)      # load1_before, load1_after, cores


class _Tee(io.TextIOBase):
    """Write to the console and keep a copy."""

    def __init__(self, stream):
        self.stream, self.copy = stream, io.StringIO()

    def write(self, s):
        self.stream.write(s)
        self.copy.write(s)
        return len(s)

    def flush(self):
        self.stream.flush()


def _clean(text):
    """Drop carriage-return progress updates: keep what each line ended as."""
    return "\n".join(line.split("\r")[-1] for line in text.splitlines()).strip()


def _snapshot(out_dir):
    """``{file name: modification time}`` of the outputs in ``out_dir``."""
    if not out_dir.exists():
        return {}
    return {p.name: p.stat().st_mtime_ns for p in out_dir.iterdir()
            if p.is_file() and not p.name.startswith(".") and p.name not in ("README.md", LOG)}


def run_study(name, title, argv, out_dir=OUT_DIR):
    """Import ``experiments.<name>`` and call its ``main(argv)``."""
    from ._provenance import code_version, machine, now
    from ._targets import targets_of
    from ._timing import load_columns, machine_load
    module = f"experiments.{name}"
    if importlib.util.find_spec(module) is None:
        return StepResult(name, title, "skipped", message=f"{module} is not in this checkout",
                          argv=list(argv))
    started, code = now(), code_version()
    load_before = machine_load()
    start = time.time()
    before = _snapshot(out_dir)
    tee = _Tee(sys.stdout)
    status, message = "ok", ""
    try:
        main = getattr(importlib.import_module(module), "main", None)
        if main is None:
            return StepResult(name, title, "skipped", message=f"{module} has no main(argv)",
                              argv=list(argv))
        with contextlib.redirect_stdout(tee):
            code_ = main(list(argv))
        if isinstance(code_, int) and code_ != 0:   # other return values are results, not statuses
            status, message = "failed", f"main returned exit status {code_}"
    except SystemExit as exc:
        if exc.code not in (None, 0):
            status, message = "failed", f"exited with status {exc.code}"
    except KeyboardInterrupt:
        status, message = "interrupted", "interrupted (Ctrl-C)"
    except Exception:
        status, message = "failed", traceback.format_exc(limit=4)
    after = _snapshot(out_dir)
    files = sorted(f for f, stamp in after.items() if before.get(f) != stamp)
    return StepResult(name, title, status, time.time() - start, _clean(tee.copy.getvalue()),
                      message, files, list(argv), started, machine(), code,
                      targets_of(out_dir, files), load_columns(load_before, machine_load()))


# ---------------------------------------------------------------- README --

def _csv_markdown(path, max_rows=CSV_ROWS_SHOWN, drop=("machine", "code")):
    """A CSV file as a Markdown table, without the provenance columns (the
    section above the table states them)."""
    from ._table import read_rows
    rows = read_rows(path)
    if not rows:
        return "(empty)"
    head = [h for h in rows[0] if h not in drop]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r[h] for h in head) + " |" for r in rows[:max_rows]]
    if len(rows) > max_rows:
        lines.append(f"\n… {len(rows) - max_rows} more rows in `{path.name}`")
    return "\n".join(lines)


def _key(name, full):
    return f"{name} --full" if full else name


def load_log(out_dir):
    path = Path(out_dir) / LOG
    return json.loads(path.read_text()) if path.exists() else {}


def save_log(log, out_dir):
    (Path(out_dir) / LOG).write_text(json.dumps(log, indent=1, ensure_ascii=False) + "\n")


def _mode_part(log, full, out_dir):
    """The README lines of one mode (quick or full) from the log records."""
    records = [log[_key(n, full)] for n, _, _ in STUDIES if _key(n, full) in log]
    records += [r for k, r in log.items() if k.endswith(" --full") == full
                and r["name"] not in {n for n, _, _ in STUDIES}]
    if not records:
        return []
    from ._targets import missed, status_text, targets_of

    def targets_of_record(r):    # records logged before targets were: read them from its files
        return r["targets"] if "targets" in r else targets_of(out_dir, r.get("files", []))

    suffix = "_full" if full else ""
    mode = "full mode (`--full`, the paper's sizes)" if full else "quick mode (the default)"
    lines = ["", f"## {mode[0].upper()}{mode[1:]}", "",
             "| study | reproduces | status | run (UTC) | code | time [s] |",
             "|---|---|---|---|---|---|"]
    for r in records:
        secs = "" if r["status"] == "skipped" else f"{r['seconds']:.1f}"
        lines.append(f"| `{r['name']}` | {r['title']} | "
                     f"{status_text(r['status'], targets_of_record(r))} | {r['started']} | "
                     f"`{r['code']}` | {secs} |")
    for stem, caption in HEADLINE_TABLES:
        path = Path(out_dir) / f"{stem}{suffix}.csv"
        if path.exists():
            lines += ["", f"**{caption}** (`{path.name}`)", "", _csv_markdown(path)]
    for r in records:
        argv = r["argv"]
        cmd = f"python -m experiments.{r['name']}" + "".join(   # without --out and its folder
            f" {a}" for i, a in enumerate(argv) if "--out" not in argv[max(i - 1, 0):i + 1])
        lines += ["", f"### {r['name']}{' (full)' if full else ''}: {r['title']}", ""]
        if r["status"] == "skipped":
            lines.append(f"Skipped: {r['message']}.")
            continue
        targets = targets_of_record(r)
        lines.append(f"Command: `{cmd}`; {status_text(r['status'], targets)} in "
                     f"{r['seconds']:.1f} s. Run {r['started']} on {r['machine']}, "
                     f"code `{r['code']}`. {load_sentence(r.get('load'))}")
        if missed(targets):
            lines += ["", "Targets missed: " + "; ".join(missed(targets)) + "."]
        if r["message"]:
            lines += ["", "```", r["message"].strip(), "```"]
        if r["output"]:
            lines += ["", "Printed output:", "", "```", r["output"], "```"]
        for f in r["files"]:
            if f.endswith(".png"):
                lines += ["", f"![{f}]({f})"]
        for f in r["files"]:
            if f.endswith(".csv") and (Path(out_dir) / f).exists():
                lines += ["", f"<details><summary><code>{f}</code></summary>", "",
                          _csv_markdown(Path(out_dir) / f), "", "</details>"]
        others = [f for f in r["files"] if not f.endswith((".png", ".csv"))]
        if others:
            lines += ["", "Data: " + ", ".join(f"`{f}`" for f in others)]
    return lines


def load_sentence(load):
    """What a study's record says of the machine's load: the 1-minute load
    averages before and after it, and whether they make its numbers
    unreliable (:func:`experiments._timing.unreliable`, load only)."""
    from ._timing import unreliable
    if not load:
        return "The machine's load was not recorded."
    text = (f"1-minute load average {load['load1_before']:.2f} before and "
            f"{load['load1_after']:.2f} after, {load['cores']} cores")
    if unreliable(load["load1_before"], load["load1_after"], load["cores"]):
        return (f"{text}: **measured on a loaded machine, its times and ratios are unreliable "
                "and not to be quoted**.")
    return f"{text}."


def write_readme(log, out_dir=OUT_DIR):
    """``<out>/README.md`` from the log records: how it was made, the speed
    paragraph (with a quick ``bench_speed.csv`` in ``out_dir``), the
    assumptions, then per mode a status table, the headline tables and per
    study its provenance, printed output, figures and CSV tables."""
    lines = [
        f"# {Path(out_dir).name}",
        "",
        "Written by `python -m experiments.reproduce` (add `--full` for the paper's sizes). Each "
        "study below states when, on what machine and at which code version it ran (`+dirty`: "
        "the sources differed from that commit); a study's files are those it wrote in that run. "
        "The benchmarks measure every row afresh unless run with `--resume`, which keeps only "
        "rows of the same machine and code version and says so in the printed output. Times are "
        "means per call (the paper's statistic); the speed ratios of `bench_speed` and "
        "`bench_closed_form` are medians of per-pair ratios, the two calls alternated in one "
        "run. Each study states the machine's 1-minute load average before and after it; "
        "a load above the number of cores marks its numbers as unreliable.",
    ]
    lines += _speed_part(out_dir)
    lines += [
        "## Values the paper does not print",
        "",
        _assumptions_markdown(),
        "",
        _casadi_note(),
    ]
    lines += _mode_part(log, False, out_dir)
    lines += _mode_part(log, True, out_dir)
    (Path(out_dir) / "README.md").write_text("\n".join(lines) + "\n")


def _speed_part(out_dir):
    """The speed paragraph from ``<out>/bench_speed.csv`` (quick mode), or nothing."""
    from ._readme import BLOCK, marked, paragraph_from
    if not (Path(out_dir) / "bench_speed.csv").exists():
        return [""]
    return ["", "## Speed", "", marked(BLOCK, paragraph_from(out_dir)), ""]


def _casadi_note():
    """:data:`CASADI_NOTE` with the memory of the machine writing the README."""
    from ._provenance import memory_text
    return CASADI_NOTE.format(memory=memory_text())


def _assumptions_markdown():
    from ._assumptions import markdown
    return markdown()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true",
                    help="the paper's sizes (about half an hour here) instead of quick mode; writes *_full files")
    ap.add_argument("--only", nargs="+", metavar="STUDY", choices=[s for s, _, _ in STUDIES],
                    help="run only these studies")
    ap.add_argument("--resume", action="store_true",
                    help="benchmarks keep rows of a cut-short run of this machine and code version")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--out", type=Path, default=OUT_DIR,
                       help="output folder (default: results/ at the repository root, ignored "
                            "by git)")
    where.add_argument("--update-paper-figures", action="store_true",
                       help="write into the committed paper_figures/ and report which committed "
                            "numbers changed")
    ap.add_argument("--readme-only", action="store_true",
                    help=f"run nothing: rewrite <out>/README.md from <out>/{LOG}")
    args = ap.parse_args(argv)
    out = (PAPER_FIGURES if args.update_paper_figures else args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    print(f"writing to {where_text(out)}", flush=True)
    log = load_log(out)
    if args.readme_only:
        write_readme(log, out)
        print(f"wrote {out / 'README.md'} from {len(log)} recorded studies")
        return 0
    results = []
    start = time.time()
    with _stop_on_interrupt() as interrupted:
        for name, title, resumable in STUDIES:
            if args.only and name not in args.only:
                continue
            study_argv = (["--out", str(out)] + (["--full"] if args.full else [])
                          + (["--resume"] if args.resume and resumable else []))
            print(f"\n=== {name}: {title} ===", flush=True)
            res = run_study(name, title, study_argv, out)
            if interrupted and res.status != "interrupted":   # the study kept its finished part
                res = replace(res, status="interrupted", message="interrupted (Ctrl-C)")
            if res.status != "ok":
                print(f"--- {name}: {res.status}: {res.message.strip()}", flush=True)
            results.append(res)
            log[_key(name, args.full)] = asdict(res)
            save_log(log, out)
            if interrupted:
                print("interrupted: the studies after this one are not run", flush=True)
                break
    total = time.time() - start
    write_readme(log, out)
    print(f"\n=== summary ({total:.0f} s) ===")
    from ._targets import missed, status_text
    for r in results:
        first = r.message.splitlines()[0] if r.message else ""
        counts = [line.strip() for line in r.output.splitlines() if line.startswith("measured ")]
        print(f"  {r.name:<28} {status_text(r.status, r.targets):<26} {r.seconds:7.1f} s  {first}")
        for line in counts:
            print(f"      {line}")
        for t in missed(r.targets):
            print(f"      missed: {t}")
    if out == PAPER_FIGURES.resolve():
        report_changes(out, sorted({f for r in results for f in r.files}))
    print(f"wrote {out / 'README.md'}; every output is in {where_text(out)}")
    if interrupted:
        return 130
    return 1 if any(r.status == "failed" for r in results) else 0


@contextlib.contextmanager
def _stop_on_interrupt():
    """A list that gets an entry at Ctrl-C (SIGINT), which still raises
    ``KeyboardInterrupt`` in the running study: a study may catch it to keep
    what it finished, and the main job then stops after that study instead
    of going on to the next one. Outside the main thread (no signals) the
    list stays empty."""
    interrupted = []
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return

    def on_sigint(signum, frame):
        interrupted.append(time.time())
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)


def where_text(out):
    """``out``, and whether git ignores it (the default ``results/``) or
    tracks it (``paper_figures/``)."""
    from ._changes import ignored
    return f"{out} ({'ignored by git' if ignored(out) else 'not ignored by git'})"


def report_changes(out, files):
    """Print which committed numbers of ``out``'s CSV ``files`` changed and
    by how much, and write them to ``<out>/reproduce_changes.csv``."""
    from ._changes import changes, print_changes, write_changes
    found = changes(out, [f for f in files if f.endswith(".csv")])
    print_changes(found)
    write_changes(found, out / CHANGES)
    print(f"wrote {out / CHANGES}")


if __name__ == "__main__":
    sys.exit(main())
