"""Which committed numbers a run changed, and by how much. Standard library
only.

``python -m experiments.reproduce --update-paper-figures`` rewrites the
committed CSV files of ``paper_figures/``; :func:`changes` compares each
with its committed version (``git show HEAD:<path>``) cell by cell: rows are
matched by their text cells (the provenance columns ``machine`` and
``code`` left out, repeated keys by their order), and every numeric cell
whose value differs is reported with its relative change.
"""

import csv
import io
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROVENANCE = ("machine", "code")
FIELDS = ["file", "row", "column", "committed", "new", "relative_change"]
SHOWN = 20          # changes printed, largest relative change first


def _git(*args, cwd=ROOT):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30)


def ignored(path):
    """Whether git ignores ``path`` (False outside the checkout)."""
    return _git("check-ignore", "-q", str(path)).returncode == 0


def committed_text(path):
    """The text of ``path`` at ``HEAD``, or ``None`` when it is not committed."""
    try:
        rel = Path(path).resolve().relative_to(ROOT)
    except ValueError:
        return None
    out = _git("show", f"HEAD:{rel.as_posix()}")
    return out.stdout if out.returncode == 0 else None


def _number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _keyed(rows):
    """``{row key: row}``: the key is the row's non-numeric cells (without
    the provenance columns) and how often that key came before."""
    out, seen = {}, {}
    for row in rows:
        text = tuple(f"{k}={v}" for k, v in row.items()
                     if k not in PROVENANCE and v not in ("", None) and _number(v) is None)
        n = seen[text] = seen.get(text, 0) + 1
        out[", ".join(text) + (f" #{n}" if n > 1 else "")] = row
    return out


def compare_rows(old, new, name=""):
    """The numeric cells that differ between two CSV tables (lists of dict
    rows), as dicts of :data:`FIELDS`; a cell present in only one of them
    has an empty ``committed`` or ``new`` and no relative change."""
    old, new = _keyed(old), _keyed(new)
    out = []
    for key in list(old) + [k for k in new if k not in old]:
        a, b = old.get(key, {}), new.get(key, {})
        for col in list(a) + [c for c in b if c not in a]:
            x, y = _number(a.get(col)), _number(b.get(col))
            if col in PROVENANCE or (x is None and y is None) or x == y:
                continue
            rel = (y - x) / abs(x) if x not in (None, 0.0) and y is not None else None
            out.append(dict(file=name, row=key, column=col, committed="" if x is None else x,
                            new="" if y is None else y,
                            relative_change="" if rel is None else rel))
    return out


def changes(out_dir, files):
    """:func:`compare_rows` of each CSV file of ``out_dir`` named in
    ``files`` against its committed version (files not committed are
    skipped)."""
    found = []
    for name in files:
        old = committed_text(Path(out_dir) / name)
        if old is None:
            continue
        with open(Path(out_dir) / name, newline="") as fh:
            new_rows = list(csv.DictReader(fh))
        found += compare_rows(list(csv.DictReader(io.StringIO(old))), new_rows, name)
    return found


def _size(change):
    rel = change["relative_change"]
    return float("inf") if rel == "" else abs(rel)


def print_changes(found, shown=SHOWN):
    """A short table of the largest relative changes."""
    if not found:
        print("\nno committed number changed")
        return
    files = sorted({c["file"] for c in found})
    print(f"\n{len(found)} committed numbers changed in {len(files)} files "
          f"({', '.join(files)}); the {min(shown, len(found))} largest relative changes:")
    for c in sorted(found, key=_size, reverse=True)[:shown]:
        rel = "new/removed" if c["relative_change"] == "" else f"{c['relative_change']:+.1%}"
        print(f"  {c['file']}: {c['row']} [{c['column']}]: {c['committed']} -> {c['new']} ({rel})")


def write_changes(found, path):
    """Every change as a CSV file of :data:`FIELDS`."""
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        writer.writeheader()
        writer.writerows(found)
