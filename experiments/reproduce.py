"""Reproduce the paper's experiments and figures in one command.

    python -m experiments.reproduce            # every study in quick mode (a few minutes)
    python -m experiments.reproduce --full     # every study with the paper's sizes

Runs each study of ``experiments/`` in turn by calling its ``main(argv)``:
the aerial-manipulator round trip (Fig. 3), the round-trip error growth with
order, the cost benchmarks of inverse and forward dynamics (Fig. 4a–b), the
CasADi automatic-differentiation baseline (Fig. 4c) and the summary fit. A
study whose module is missing is skipped with a message; a study that fails
is reported and the others still run. Afterwards ``paper_figures/README.md``
collects, per study, its printed tables, its figures and the CSV files it
wrote. Exit status 0 when every study that ran succeeded.
"""

import argparse
import contextlib
import csv
import importlib
import importlib.util
import io
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"

# (module under experiments/, what it reproduces), in the order they run:
# bench_summary reads the CSVs of the benchmarks before it.
STUDIES = (
    ("aerial_manipulator", "Fig. 3: aerial manipulator, inverse → forward dynamics round trip"),
    ("roundtrip_growth", "round-trip error against derivative order"),
    ("bench_inverse", "Fig. 4a: H-GRNE-FBS cost against N and r"),
    ("bench_forward", "Fig. 4b: H-GABI-FBS cost against N and r"),
    ("bench_casadi", "Fig. 4c: CasADi AD baseline cost against r"),
    ("bench_summary", "Fig. 4: all costs with fitted growth laws"),
    ("bench_speed", "speed targets: Pinocchio ratios, batching, growth, memory, start-up"),
)

CSV_ROWS_SHOWN = 60  # longer CSV files are cut in the README (the file has all rows)

# Tables shown in full at the top of the README when a study wrote them.
HEADLINE_TABLES = (
    ("aerial_manipulator_roundtrip.csv",
     "Aerial manipulator (Fig. 3): inverse → forward dynamics round trip, relative errors"),
    ("bench_summary.csv", "Cost growth laws fitted to the benchmarks (Fig. 4)"),
    ("bench_speed.csv", "Speed of the compiled kernels against Pinocchio, batching, growth, memory"),
)


@dataclass
class StepResult:
    """Outcome of one study: ``status`` is ``ok``, ``failed`` or ``skipped``."""

    name: str
    title: str
    status: str
    seconds: float = 0.0
    output: str = ""
    message: str = ""
    files: list = field(default_factory=list)


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
    return {p.name: p.stat().st_mtime_ns for p in out_dir.iterdir()
            if p.is_file() and not p.name.startswith(".") and p.name != "README.md"}


def run_study(name, title, argv, out_dir=OUT_DIR):
    """Import ``experiments.<name>`` and call its ``main(argv)``."""
    module = f"experiments.{name}"
    if importlib.util.find_spec(module) is None:
        return StepResult(name, title, "skipped", message=f"{module} is not in this checkout")
    start = time.time()
    before = _snapshot(out_dir)
    tee = _Tee(sys.stdout)
    status, message = "ok", ""
    try:
        main = getattr(importlib.import_module(module), "main", None)
        if main is None:
            return StepResult(name, title, "skipped", message=f"{module} has no main(argv)")
        with contextlib.redirect_stdout(tee):
            code = main(list(argv))
        if isinstance(code, int) and code != 0:   # other return values are results, not statuses
            status, message = "failed", f"main returned exit status {code}"
    except SystemExit as exc:
        if exc.code not in (None, 0):
            status, message = "failed", f"exited with status {exc.code}"
    except KeyboardInterrupt:
        status, message = "failed", "interrupted"
    except Exception:
        status, message = "failed", traceback.format_exc(limit=4)
    after = _snapshot(out_dir)
    files = sorted(f for f, stamp in after.items() if before.get(f) != stamp)
    return StepResult(name, title, status, time.time() - start, _clean(tee.copy.getvalue()),
                      message, files)


def _csv_markdown(path, max_rows=CSV_ROWS_SHOWN):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        return "(empty)"
    head, body = rows[0], rows[1:]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in body[:max_rows]]
    if len(body) > max_rows:
        lines.append(f"\n… {len(body) - max_rows} more rows in `{path.name}`")
    return "\n".join(lines)


def write_readme(results, total, argv, out_dir=OUT_DIR):
    """``paper_figures/README.md``: a status table, then per study its printed
    output, figures and CSV tables."""
    import numpy
    cmd = "python -m experiments.reproduce" + ("".join(f" {a}" for a in argv))
    lines = [
        "# paper_figures",
        "",
        f"Written by `{cmd}` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC "
        f"({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"NumPy {numpy.__version__}); total {total:.0f} s. Every figure and CSV below is "
        "regenerated by that command; times are from this machine, and the benchmarks "
        "report ratios against baselines measured in the same run.",
        "",
        "| study | reproduces | status | time [s] |",
        "|---|---|---|---|",
    ]
    for r in results:
        lines.append(f"| `{r.name}` | {r.title} | {r.status} | "
                     f"{'' if r.status == 'skipped' else f'{r.seconds:.1f}'} |")
    written = {f for r in results for f in r.files}
    for f, caption in HEADLINE_TABLES:
        if f in written:
            lines += ["", f"**{caption}** (`{f}`)", "", _csv_markdown(out_dir / f)]
    for r in results:
        lines += ["", f"## {r.name}: {r.title}", ""]
        if r.status == "skipped":
            lines.append(f"Skipped: {r.message}.")
            continue
        lines.append(f"Command: `python -m experiments.{r.name}"
                     f"{''.join(f' {a}' for a in argv)}`; {r.status} in {r.seconds:.1f} s.")
        if r.message:
            lines += ["", "```", r.message.strip(), "```"]
        if r.output:
            lines += ["", "Printed output:", "", "```", r.output, "```"]
        for f in r.files:
            if f.endswith(".png"):
                lines += ["", f"![{f}]({f})"]
        for f in r.files:
            if f.endswith(".csv"):
                lines += ["", f"<details><summary><code>{f}</code></summary>", "",
                          _csv_markdown(out_dir / f), "", "</details>"]
        others = [f for f in r.files if not f.endswith((".png", ".csv"))]
        if others:
            lines += ["", "Data: " + ", ".join(f"`{f}`" for f in others)]
    (out_dir / "README.md").write_text("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true",
                    help="the paper's sizes (hours) instead of quick mode")
    ap.add_argument("--only", nargs="+", metavar="STUDY", choices=[s for s, _ in STUDIES],
                    help="run only these studies")
    args = ap.parse_args(argv)
    study_argv = ["--full"] if args.full else []
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    results = []
    start = time.time()
    for name, title in STUDIES:
        if args.only and name not in args.only:
            continue
        print(f"\n=== {name}: {title} ===", flush=True)
        res = run_study(name, title, study_argv)
        if res.status != "ok":
            print(f"--- {name}: {res.status}: {res.message.strip()}", flush=True)
        results.append(res)
    total = time.time() - start
    write_readme(results, total, study_argv)
    print(f"\n=== summary ({total:.0f} s) ===")
    for r in results:
        first = r.message.splitlines()[0] if r.message else ""
        print(f"  {r.name:<20} {r.status:<8} {r.seconds:7.1f} s  {first}")
    print(f"wrote {OUT_DIR / 'README.md'}")
    return 1 if any(r.status == "failed" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
