"""The targets a study checked, read back from the CSV files it wrote, so
that ``python -m experiments.reproduce`` reports "ok, k of m targets met"
instead of a bare "ok". Standard library only.

The protocol, one of two row forms in a study's CSV:

* a row with ``section == "targets"`` whose ``unit`` is ``met`` or
  ``missed`` (``bench_speed``: the target in ``quantity``, the measured
  value in ``value``);
* a row with a non-empty ``met`` column, ``yes`` or ``no``
  (``bench_closed_form``, ``bench_contact``: the target named by the row's
  key columns, an order as ``r = 3``, and, where the row has one, its
  ``target`` column).

A study without such rows has no targets; its status stays a plain "ok".
"""

from pathlib import Path

from ._table import read_rows

# Columns naming a row with a ``met`` column, in this order, where present.
NAME_COLUMNS = ("robot", "kind", "algo", "function", "quantity", "N", "r")


def targets_in(rows):
    """``[(target, met)]`` of the rows of one CSV file (dicts of strings)."""
    out = []
    for row in rows:
        if row.get("section") == "targets" and row.get("unit") in ("met", "missed"):
            out.append((row.get("quantity", ""), row["unit"] == "met"))
        elif row.get("met") in ("yes", "no"):
            name = ", ".join(f"r = {row[c]}" if c == "r" else row[c]
                             for c in NAME_COLUMNS if row.get(c))
            if row.get("target"):
                name += f" (limit {_number(row['target'])})"
            out.append((name, row["met"] == "yes"))
    return out


def _number(text):
    try:
        return f"{float(text):g}"
    except ValueError:
        return text


def targets_of(out_dir, files):
    """``[[target, met]]`` from the CSV files among ``files`` in ``out_dir``
    (the files a study wrote), as lists for the JSON log."""
    found = []
    for name in files:
        path = Path(out_dir) / name
        if name.endswith(".csv") and path.exists():
            found += [[t, met] for t, met in targets_in(read_rows(path))]
    return found


def status_text(status, targets):
    """``"ok"``, or ``"ok, k of m targets met"`` when the study had targets."""
    if not targets or status != "ok":
        return status
    met = sum(1 for _, m in targets if m)
    return f"{status}, {met} of {len(targets)} targets met"


def missed(targets):
    """The names of the targets that were missed."""
    return [t for t, m in targets if not m]
