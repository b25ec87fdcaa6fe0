"""CSV tables of benchmark rows that record where and on what code each row
was measured. Standard library only (no plotting), so the tests import it.

A table is measured afresh by default: an existing file is replaced. With
``resume=True`` the rows of an existing file that were measured on this
machine at this code version (:func:`experiments._provenance.stamp`) are
kept and skipped by the sweep; every other row is dropped. :meth:`resume_note`
says which rows were kept.
"""

import csv
from pathlib import Path


def _fmt(x):
    if isinstance(x, float):
        return f"{x:.6e}"
    return str(x)


def select(rows, **where):
    """The rows (dicts) whose fields equal ``where``, compared as strings, so
    that a CSV's strings match numbers: ``select(rows, sweep="N", r=0)``."""
    return [r for r in rows if all(str(r[k]) == str(v) for k, v in where.items())]


def output_stem(args, name):
    """``<out>/<name>`` in quick mode, ``<out>/<name>_full`` with ``--full``
    (``args.out``, ``args.full`` of a script's arguments)."""
    return Path(args.out) / (f"{name}_full" if args.full else name)


def num(row, field):
    """A float field of a CSV row; NaN when empty or absent."""
    v = row.get(field, "")
    return float(v) if v not in ("", None) else float("nan")


class ResultTable:
    """A CSV file that grows one row at a time, so a cut-short run keeps every
    finished row (and ``--resume`` can finish it).

    Parameters
    ----------
    path : path-like
    fields : list of str
        Column names of the measurements.
    key : list of str
        The columns that identify a row (e.g. ``["sweep", "n_bod", "r"]``).
    stamp : dict, optional
        Provenance columns written first in every row, e.g.
        ``{"machine": …, "code": …}`` (:func:`experiments._provenance.stamp`).
    resume : bool
        Keep the rows of an existing file whose stamp equals ``stamp``
        (all rows when there is no stamp) and whose columns are the same;
        otherwise start an empty file.
    """

    def __init__(self, path, fields, key, stamp=None, resume=False):
        self.path, self.key = Path(path), list(key)
        self.stamp = dict(stamp or {})
        self.fields = list(self.stamp) + list(fields)
        self.rows, self.dropped = [], 0
        if resume and self.path.exists():
            with open(self.path, newline="") as fh:
                reader = csv.DictReader(fh)
                old = list(reader)
                same_columns = reader.fieldnames == self.fields
            if same_columns:
                self.rows = [r for r in old if all(r[k] == v for k, v in self.stamp.items())]
            self.dropped = len(old) - len(self.rows)
        self.kept = [self._key(r) for r in self.rows]
        self.save()

    def save(self):
        """Write the whole file from ``rows`` (after rows were edited in place)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "w", newline="") as fh:
            writer = csv.DictWriter(fh, self.fields)
            writer.writeheader()
            writer.writerows(self.rows)

    def _key(self, row):
        return tuple(str(row[k]) for k in self.key)

    def resume_note(self):
        """One line on what ``resume`` kept, or ``None`` when nothing was kept
        or dropped."""
        if not self.kept and not self.dropped:
            return None
        where = ", ".join(f"{k} {v}" for k, v in self.stamp.items())
        keys = "; ".join("(" + ", ".join(f"{k}={v}" for k, v in zip(self.key, kv)) + ")"
                         for kv in self.kept)
        note = (f"--resume: kept {len(self.kept)} rows of {self.path.name} measured earlier"
                + (f" ({where})" if where else "") + (f": {keys}" if keys else ""))
        if self.dropped:
            note += (f"; dropped {self.dropped} rows measured on another machine, at another "
                     f"code version or with other columns")
        return note

    def get(self, **key):
        k = self._key(key)
        for row in self.rows:
            if self._key(row) == k:
                return row
        return None

    def add(self, **row):
        row = {f: _fmt(row.get(f, "")) for f in self.fields} | self.stamp
        with open(self.path, "a", newline="") as fh:
            csv.DictWriter(fh, self.fields).writerow(row)
        self.rows.append(row)
        return row

    def remove(self, **key):
        """Drop the row with this key (the file is rewritten)."""
        k = self._key(key)
        self.rows = [r for r in self.rows if self._key(r) != k]
        self.save()

    def select(self, **where):
        """:func:`select` on the table's rows."""
        return select(self.rows, **where)


def write_rows(path, fields, rows, stamp=None):
    """Write a whole CSV at once: ``stamp`` columns first in every row."""
    table = ResultTable(path, fields, [], stamp=stamp)
    for row in rows:
        table.add(**row)
    return table


def read_rows(path):
    """Rows of a CSV file as dicts of strings."""
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))
