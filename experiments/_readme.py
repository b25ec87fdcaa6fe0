"""The speed paragraph of ``paper_figures/README.md``, generated from the
benchmark CSVs so that it cannot drift from them. Standard library and
NumPy only.

Its numbers are stated only when the run that measured them was quiet
(:func:`reliability`: the load recorded before and after it and the spread
of the paired ratios, :func:`experiments._timing.unreliable`); otherwise
the paragraph says that they are unreliable and are not to be quoted.

``python -m experiments.reproduce`` writes it, between
``<!-- speed:begin -->`` and ``<!-- speed:end -->``, into the README of its
output folder whenever that folder has a quick-mode ``bench_speed.csv``; a
test checks that the committed block is what the committed CSVs give. The
top-level ``README.md`` is not rewritten: it points to that file.
"""

import re
from pathlib import Path

from ._table import read_rows
from ._timing import LOAD_PER_CORE, SPREAD_LIMIT, rows_unreliable, spread, unreliable

BLOCK = "speed"


def _values(rows):
    return {(r["section"], r["quantity"]): float(r["value"]) for r in rows}


# The paired ratios the paragraph states, (section, quantity): their spread
# decides, with the machine's load, whether it states them at all.
STATED = [("small ratio", "N=7 ID r=0 / pinocchio rnea"),
          ("small ratio", "N=7 FD r=0 / pinocchio aba"),
          ("default path ratio", "N=7 ID r=0 no workspace / pinocchio rnea"),
          ("default path ratio", "N=7 FD r=0 no workspace / pinocchio aba"),
          ("N=101 ratio", "ID r=0 / pinocchio rnea"), ("N=101 ratio", "FD r=0 / pinocchio aba"),
          ("N=101 ratio", "ID r=1 / pinocchio d/dt rnea"),
          ("N=101 ratio", "FD r=1 / pinocchio d/dt aba")]


def _load(v):
    """``(before, after, cores)`` of the ``machine load`` rows (NaN and 1
    where they are missing)."""
    nan = float("nan")
    return (v.get(("machine load", "1-min load average before"), nan),
            v.get(("machine load", "1-min load average after"), nan),
            int(v.get(("machine load", "cores"), 1)))


def _spreads(rows):
    """``{quantity: IQR / median}`` of the stated paired ratios in ``rows``;
    ``None`` when one of them has no quartiles (not a paired ratio)."""
    out = {}
    for r in rows:
        if (r["section"], r["quantity"]) in STATED:
            if not r.get("q1") or not r.get("q3"):
                return None
            out[r["quantity"]] = spread(float(r["q1"]), float(r["q3"]), float(r["value"]))
    return out


def reliability(speed_rows):
    """Why the speed numbers of ``bench_speed.csv``'s rows are not to be
    quoted (:func:`experiments._timing.unreliable` on the recorded load and
    the spreads of the stated ratios): a list of reasons, empty when they
    may be."""
    before, after, cores = _load(_values(speed_rows))
    spreads = _spreads(speed_rows)
    reasons = unreliable(before, after, cores, spreads or {})
    if spreads is None:
        reasons.append("its ratios are not medians of paired samples")
    return reasons


def _load_text(v):
    before, after, cores = _load(v)
    if not (before == before and after == after):       # NaN: not recorded
        return "the machine's load was not recorded"
    return (f"the 1-minute load average was {before:.2f} before and {after:.2f} after the run, "
            f"on {cores} cores")


RULE = (f"numbers are quoted only when the 1-minute load average before and after the run "
        f"is at most {LOAD_PER_CORE:g} per core and every stated ratio's interquartile range "
        f"is at most {SPREAD_LIMIT:g} of its median")


def _unreliable_paragraph(v, first, reasons):
    """The paragraph of a run whose numbers are not to be quoted."""
    before, after, cores = _load(v)
    loaded = max(before, after) > LOAD_PER_CORE * cores       # False for NaN
    verdict = ("Measured on a loaded machine: these speed numbers are unreliable and are not to "
               "be quoted" if loaded else "These speed numbers are unreliable and are not to be "
               "quoted")
    return (f"Measured by `python -m experiments.bench_speed` (quick mode) on "
            f"{first.get('machine', 'an unrecorded machine')}, code "
            f"{first.get('code', 'unknown')}; {_load_text(v)}. **{verdict}**: "
            + "; ".join(reasons) + f" ({RULE}). The values measured are in the `bench_speed` "
            "table below; rerun on a quiet machine for numbers to quote.")


def _paired(rows):
    """``{(section, quantity): "2.91× (IQR 2.70–3.12)"}`` of the paired ratios."""
    return {(r["section"], r["quantity"]): f"{float(r['value']):.2f}× (IQR {float(r['q1']):.2f}–"
            f"{float(r['q3']):.2f})" for r in rows if r.get("q1") and r.get("q3")}


def speed_paragraph(speed_rows, summary_rows=()):
    """Markdown paragraph from the rows of ``bench_speed.csv`` and (optional)
    ``bench_summary.csv``; parts whose rows are missing are left out. A run
    that :func:`reliability` rejects gets a paragraph that says so, with the
    load, and states no number as a fact."""
    v = _values(speed_rows)
    first = speed_rows[0] if speed_rows else {}
    reasons = reliability(speed_rows)
    if reasons:
        return _unreliable_paragraph(v, first, reasons)
    iqr = _paired(speed_rows)
    out = [f"Measured by `python -m experiments.bench_speed` (quick mode) on "
           f"{first.get('machine', 'an unrecorded machine')}, code {first.get('code', 'unknown')}; "
           f"{_load_text(v)} ({RULE}). Times are means per call; each ratio is the median of the "
           "per-pair ratios of the two calls alternated in one run, with the interquartile range "
           "of those ratios (the full table is in the `bench_speed` section below)."]

    def us(name):
        return f"{v[('N=101', name)]:.0f} µs"

    def ratio(name):
        return iqr[("N=101 ratio", name)]

    have = lambda *names: all(("N=101", n) in v for n in names)      # noqa: E731
    pin = all(("N=101 ratio", n) in iqr for n in ("ID r=0 / pinocchio rnea",
                                                  "FD r=0 / pinocchio aba"))
    small = {k: v.get(("small", f"N=7 {k}")) for k in ("ID r=0", "ID r=5", "FD r=0", "FD r=5")}
    vs = {k: iqr.get(("small ratio", f"N=7 {k}")) for k in ("ID r=0 / pinocchio rnea",
                                                            "FD r=0 / pinocchio aba")}
    if None not in small.values() and None not in vs.values():
        out.append(
            "On the paper's aerial manipulator (N = 7), with a workspace, inverse dynamics takes "
            f"{small['ID r=0']:.1f} µs at r = 0 ({vs['ID r=0 / pinocchio rnea']} Pinocchio's "
            f"`rnea`) and {small['ID r=5']:.1f} µs at r = 5; forward dynamics "
            f"{small['FD r=0']:.1f} µs at r = 0 ({vs['FD r=0 / pinocchio aba']} `aba`) and "
            f"{small['FD r=5']:.1f} µs at r = 5.")
    paths = [x for (section, name), x in v.items() if section == "default path ratio"
             and name.endswith("no workspace / workspace")]
    vs_pin = [iqr.get(("default path ratio", f"N=7 {a} r=0 no workspace / pinocchio {b}"))
              for a, b in (("ID", "rnea"), ("FD", "aba"))]
    if paths:
        out.append(
            f"Called as in the examples above, without a workspace, inverse, forward and hybrid "
            f"dynamics cost {min(paths):.2f}–{max(paths):.2f}× the same calls with a reused "
            f"workspace (N = 7 and 101, r = 0, 1, 5)" + (
                f"; at N = 7, r = 0 that is {vs_pin[0]} Pinocchio's `rnea` and "
                f"{vs_pin[1]} its `aba`, each with its `Data` reused" if None not in vs_pin
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
    if all(("N=101 ratio", n) in iqr for n in ("ID r=1 / pinocchio d/dt rnea",
                                               "FD r=1 / pinocchio d/dt aba")):
        out.append(f"The first time derivative costs {ratio('ID r=1 / pinocchio d/dt rnea')} "
                   f"(inverse) and {ratio('FD r=1 / pinocchio d/dt aba')} (forward) of assembling "
                   "it from Pinocchio's analytical partial derivatives.")
    if all(("batch N=7 r=5", f"{a} batch / single") in iqr for a in ("ID", "FD")):
        out.append("Batched over a 3000-sample trajectory of the aerial manipulator at r = 5, the "
                   f"per-sample cost is {iqr[('batch N=7 r=5', 'ID batch / single')]} "
                   f"(inverse) and {iqr[('batch N=7 r=5', 'FD batch / single')]} (forward) of "
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
    ``bench_closed_form.csv`` (workspace calls); empty without them, and a
    sentence saying they are not to be quoted when :func:`experiments._timing.unreliable`
    rejects their run (load recorded in every row, spreads of the paired
    ratios)."""
    rows = [r for r in rows if r["workspace"] == "yes" and r["ratio"]]
    ratio = {(r["robot"], r["function"]): r for r in rows}
    robots = [("aerial_manipulator", "the aerial manipulator"), ("talos", "Talos")]
    calls = [("mass_matrix", "`crba`"), ("coriolis_matrix", "`computeCoriolisMatrix`"),
             ("gravity_vector", "`computeGeneralizedGravity`")]
    if not all((robot, f) in ratio for robot, _ in robots for f, _ in calls):
        return ""
    stated = [ratio[(robot, f)] for robot, _ in robots for f, _ in calls]
    reasons = _row_reliability(stated)
    if reasons:
        return ("The closed form's ratios to Pinocchio (`bench_closed_form`) are unreliable and "
                "are not to be quoted: " + "; ".join(reasons) + ".")
    parts = [f"`{f}` takes " + " and ".join(
        f"{float(ratio[(robot, f)]['ratio']):.2f}× (IQR {float(ratio[(robot, f)]['ratio_q1']):.2f}"
        f"–{float(ratio[(robot, f)]['ratio_q3']):.2f}, {name})" for robot, name in robots)
        + f" Pinocchio's {pin}" for f, pin in calls]
    r0 = stated[0]
    return ("With a workspace, " + "; ".join(parts) + " (`bench_closed_form`, 1-minute load "
            f"average {float(r0['load1_before']):.2f} before and {float(r0['load1_after']):.2f} "
            f"after, {r0['cores']} cores).")


def _row_reliability(rows):
    """:func:`experiments._timing.rows_unreliable` for rows that carry their
    load (``load1_before``, ``load1_after``, ``cores``) and a paired ratio
    (``ratio``, ``ratio_q1``, ``ratio_q3``)."""
    return rows_unreliable(rows, ["ratio"], lambda r, _: f"{r['robot']} {r['function']}")


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
