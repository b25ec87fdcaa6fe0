"""The speed paragraph of ``paper_figures/README.md``, generated from the
benchmark CSVs so that it cannot drift from them. Standard library only.

``python -m experiments.reproduce`` writes it, between
``<!-- speed:begin -->`` and ``<!-- speed:end -->``, into the README of its
output folder whenever that folder has a quick-mode ``bench_speed.csv``; a
test checks that the committed block is what the committed CSVs give. The
top-level ``README.md`` is not rewritten: it points to that file.
"""

import re
from pathlib import Path

from ._table import read_rows

BLOCK = "speed"


def _values(rows):
    return {(r["section"], r["quantity"]): float(r["value"]) for r in rows}


def speed_paragraph(speed_rows, summary_rows=()):
    """Markdown paragraph from the rows of ``bench_speed.csv`` and (optional)
    ``bench_summary.csv``; parts whose rows are missing are left out."""
    v = _values(speed_rows)
    first = speed_rows[0] if speed_rows else {}
    out = [f"Measured by `python -m experiments.bench_speed` (quick mode) on "
           f"{first.get('machine', 'an unrecorded machine')}, code {first.get('code', 'unknown')}; "
           "times are means per call, ratios are of means taken in the same run (the full table "
           "is in the `bench_speed` section below)."]

    def us(name):
        return f"{v[('N=101', name)]:.0f} µs"

    def ratio(name):
        return f"{v[('N=101 ratio', name)]:.2f}×"

    have = lambda *names: all(("N=101", n) in v for n in names)      # noqa: E731
    pin = all(("N=101 ratio", n) in v for n in ("ID r=0 / pinocchio rnea",
                                                "FD r=0 / pinocchio aba"))
    small = {k: v.get(("small", f"N=7 {k}")) for k in (
        "ID r=0", "ID r=5", "FD r=0", "FD r=5", "pinocchio rnea", "pinocchio aba")}
    if None not in small.values():
        out.append(
            "On the paper's aerial manipulator (N = 7), with a workspace, inverse dynamics takes "
            f"{small['ID r=0']:.1f} µs at r = 0 ({small['ID r=0'] / small['pinocchio rnea']:.2f}× "
            f"Pinocchio's `rnea`) and {small['ID r=5']:.1f} µs at r = 5; forward dynamics "
            f"{small['FD r=0']:.1f} µs at r = 0 ({small['FD r=0'] / small['pinocchio aba']:.2f}× "
            f"`aba`) and {small['FD r=5']:.1f} µs at r = 5.")
    paths = [x for (section, name), x in v.items() if section == "default path ratio"
             and name.endswith("no workspace / workspace")]
    vs_pin = [v.get(("default path ratio", f"N=7 {a} r=0 no workspace / pinocchio {b}"))
              for a, b in (("ID", "rnea"), ("FD", "aba"))]
    if paths:
        out.append(
            f"Called as in the examples above, without a workspace, inverse, forward and hybrid "
            f"dynamics cost {min(paths):.2f}–{max(paths):.2f}× the same calls with a reused "
            f"workspace (N = 7 and 101, r = 0, 1, 5)" + (
                f"; at N = 7, r = 0 that is {vs_pin[0]:.2f}× Pinocchio's `rnea` and "
                f"{vs_pin[1]:.2f}× its `aba`, each with its `Data` reused" if None not in vs_pin
                else "") + ".")
    if have("ID r=0 ws", "ID r=5 ws", "ID r=10 ws", "FD r=0 ws", "FD r=5 ws"):
        out.append(
            f"At N = 101 (five branches of twenty links), with a workspace, inverse dynamics takes "
            f"{us('ID r=0 ws')} at r = 0" + (f" ({ratio('ID r=0 / pinocchio rnea')} Pinocchio's "
                                             f"`rnea`)" if pin else "")
            + f", {us('ID r=5 ws')} at r = 5 and {us('ID r=10 ws')} at r = 10; forward dynamics "
            f"{us('FD r=0 ws')} at r = 0" + (f" ({ratio('FD r=0 / pinocchio aba')} Pinocchio's "
                                             f"`aba`)" if pin else "") + f" and "
            f"{us('FD r=5 ws')} at r = 5.")
    if all(("N=101 ratio", n) in v for n in ("ID r=1 / pinocchio d/dt rnea",
                                             "FD r=1 / pinocchio d/dt aba")):
        out.append(f"The first time derivative costs {ratio('ID r=1 / pinocchio d/dt rnea')} "
                   f"(inverse) and {ratio('FD r=1 / pinocchio d/dt aba')} (forward) of assembling "
                   "it from Pinocchio's analytical partial derivatives.")
    if all(("batch N=7 r=5", f"{a} batch / single") in v for a in ("ID", "FD")):
        out.append("Batched over a 3000-sample trajectory of the aerial manipulator at r = 5, the "
                   f"per-sample cost is {v[('batch N=7 r=5', 'ID batch / single')]:.2f}× "
                   f"(inverse) and {v[('batch N=7 r=5', 'FD batch / single')]:.2f}× (forward) of "
                   "a single call.")
    gammas = {}
    for r in summary_rows:
        if r.get("parameter") == "gamma" and r["quantity"].endswith("evaluation time"):
            gammas[r["quantity"]] = (r["value"], r["ci95_low"], r["ci95_high"])
    inv = next((g for q, g in gammas.items() if "inverse" in q), None)
    fwd = next((g for q, g in gammas.items() if "paper's construction" in q), None)
    if inv and fwd:
        out.append(f"The CasADi baseline's evaluation time grows by a factor {float(inv[0]):.2f} "
                   f"per order for inverse dynamics (95% interval {float(inv[1]):.2f}–"
                   f"{float(inv[2]):.2f}) and {float(fwd[0]):.2f} ({float(fwd[1]):.2f}–"
                   f"{float(fwd[2]):.2f}) for forward dynamics built as in the paper "
                   "(`bench_summary`).")
    return " ".join(out)


def marked(name, body):
    """``body`` between the lines ``<!-- name:begin -->`` and ``<!-- name:end -->``."""
    return f"<!-- {name}:begin -->\n{body}\n<!-- {name}:end -->"


def block(text, name):
    """The current body of a marked block."""
    m = re.search(rf"<!-- {name}:begin -->\n(.*?)\n<!-- {name}:end -->", text, re.S)
    if m is None:
        raise ValueError(f"text: no <!-- {name}:begin --> … <!-- {name}:end --> block")
    return m.group(1)


def wrap(text, width=78):
    """Greedy line wrapping at spaces (Markdown renders it as one paragraph)."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join(lines + [line])


def closed_form_sentence(rows):
    """The closed form against Pinocchio, from the rows of
    ``bench_closed_form.csv`` (workspace calls); empty without them."""
    ratio = {(r["robot"], r["function"]): float(r["ratio"]) for r in rows
             if r["workspace"] == "yes" and r["ratio"]}
    robots = [("aerial_manipulator", "the aerial manipulator"), ("talos", "Talos")]
    calls = [("mass_matrix", "`crba`"), ("coriolis_matrix", "`computeCoriolisMatrix`"),
             ("gravity_vector", "`computeGeneralizedGravity`")]
    if not all((robot, f) in ratio for robot, _ in robots for f, _ in calls):
        return ""
    parts = [f"`{f}` takes " + " and ".join(f"{ratio[(robot, f)]:.2f}× ({name})"
                                               for robot, name in robots) + f" Pinocchio's {pin}"
             for f, pin in calls]
    return ("With a workspace, " + "; ".join(parts) + " (`bench_closed_form`).")


def paragraph_from(out_dir):
    """The wrapped paragraph from ``out_dir``'s ``bench_speed.csv``,
    ``bench_summary.csv`` and ``bench_closed_form.csv`` (the latter two
    optional)."""
    out_dir = Path(out_dir)
    summary = out_dir / "bench_summary.csv"
    closed = out_dir / "bench_closed_form.csv"
    text = speed_paragraph(read_rows(out_dir / "bench_speed.csv"),
                           read_rows(summary) if summary.exists() else ())
    if closed.exists():
        text = f"{text} {closed_form_sentence(read_rows(closed))}".rstrip()
    return wrap(text)
