"""The Zarr store of a Monte-Carlo study: summaries keyed by task, full
trajectories keyed by run, written by the workers as they finish.

Layout (a Zarr v3 group on a path every worker can reach)::

    /                          attributes["liedyn.monte_carlo"]: what the study is
    /summaries/<first>+<k>     one group per finished task: arrays run (k,) int64,
                               values (k, C) float64; attributes columns, errors,
                               complete (written last)
    /trajectories/<run>        one group per run (with trajectories=True): the
                               Trajectory's arrays, chunked along time; attributes
                               fields (its numbers and strings), error, complete
                               (written last)

A group is trusted only once its ``complete`` attribute is there: a worker
killed while writing leaves a group without it (or one that does not
open), which a later run ignores and writes again.
"""

import numpy as np

KEY = "liedyn.monte_carlo"
TIME_CHUNK = 4096        # samples per chunk of a stored trajectory



def _zarr():
    try:
        import zarr
    except ImportError as err:                      # pragma: no cover - zarr is in the extra
        raise ImportError("store: writing a Monte-Carlo store needs zarr; install it with "
                          "pip install 'liedyn[dask]'") from err
    return zarr


def open_root(path, mode="a"):
    return _zarr().open_group(str(path), mode=mode)


def prepare(path, study):
    """Open (or create) the store at ``path`` for ``study`` (a dict that
    names it); refuse a store that holds another study."""
    root = open_root(path)
    held = root.attrs.get(KEY)
    if held is None:
        root.attrs[KEY] = study
    elif held.get("fingerprint") != study["fingerprint"]:
        differ = [k for k in study if k != "fingerprint" and held.get(k) != study[k]]
        raise ValueError(f"store: {path} holds another study (differs in "
                         f"{', '.join(differ) or 'the perturbation table'}); pass a new store, or "
                         f"remove this one to start again")
    root.require_group("summaries")
    root.require_group("trajectories")


def _complete(group):
    return group.attrs.get("complete") is True


def finished(path):
    """``{run: (values (C,), error str)}`` and the columns, from every
    complete summary group; incomplete or unreadable groups are removed."""
    root = open_root(path)
    summaries = root["summaries"]
    out, columns, broken = {}, None, []
    for name in sorted(summaries.group_keys()):
        try:
            g = summaries[name]
            if not _complete(g):
                broken.append(name)
                continue
            runs = np.asarray(g["run"][:])
            values = np.asarray(g["values"][:])
            cols = tuple(g.attrs["columns"])
            errors = list(g.attrs["errors"])
        except Exception:               # a group a killed writer left unreadable
            broken.append(name)
            continue
        if columns is None:
            columns = cols
        elif cols != columns:
            raise ValueError(f"store: {path} holds summaries with columns {list(cols)} and "
                             f"{list(columns)}; the summary function changed between runs")
        for i, run in enumerate(runs.tolist()):
            out.setdefault(run, (values[i], errors[i]))
    for name in broken:
        try:
            del summaries[name]
        except Exception:
            pass
    return out, columns


def write_summaries(path, runs, columns, values, errors):
    """One task's summaries, marked complete once every array is written."""
    root = open_root(path)
    g = root["summaries"].create_group(f"{runs[0]:07d}+{len(runs)}", overwrite=True)
    g.create_array("run", data=np.asarray(runs, dtype=np.int64))
    g.create_array("values", data=np.asarray(values, dtype=np.float64))
    g.attrs.update({"columns": list(columns), "errors": list(errors), "complete": True})


def write_trajectory(path, run, traj, error):
    """Run ``run``'s trajectory (``None``: nothing recorded), marked complete
    last: every array field of :class:`liedyn.Trajectory` as a Zarr array
    chunked along time, the controller outputs stacked when they are arrays
    of one shape, numbers, strings and tuples of numbers as attributes (the
    constraint set of a constrained run is the study's, not stored)."""
    root = open_root(path)
    g = root["trajectories"].create_group(f"{run:07d}", overwrite=True)
    attrs = {"error": error, "recorded": traj is not None}
    if traj is not None:
        scalars = {}
        for name in type(traj).__slots__:
            a = getattr(traj, name)
            if name == "controls":
                a = _stacked(a)
            if isinstance(a, np.ndarray):
                a = np.ascontiguousarray(a)
                g.create_array(name, data=a,
                               chunks=(max(1, min(TIME_CHUNK, a.shape[0])),) + a.shape[1:])
            elif isinstance(a, (bool, int, float, str, np.integer, np.floating)):
                scalars[name] = a.item() if hasattr(a, "item") else a
            elif isinstance(a, tuple) and all(isinstance(x, (int, np.integer)) for x in a):
                scalars[name] = [int(x) for x in a]
        attrs["fields"] = scalars
    attrs["complete"] = True
    g.attrs.update(attrs)


def _stacked(controls):
    """The controller outputs as one float array, when they are arrays of one shape."""
    if not controls:
        return None
    try:
        a = np.array([np.asarray(c, dtype=np.float64) for c in controls])
    except (TypeError, ValueError):
        return None
    return a if a.dtype == np.float64 and a.ndim >= 1 and a.shape[0] == len(controls) else None


def read_trajectory(path, run):
    """The :class:`liedyn.Trajectory` stored for ``run``."""
    from .. import Trajectory
    root = open_root(path, mode="r")
    name = f"trajectories/{int(run):07d}"
    try:
        g = root[name]
    except KeyError:
        raise ValueError(f"run: no trajectory of run {run} in {path} (was the study run with "
                         f"trajectories=True, and has that run finished?)") from None
    if not _complete(g):
        raise ValueError(f"run: the trajectory of run {run} in {path} is incomplete (its writer "
                         f"stopped); rerun the study to write it again")
    if not g.attrs.get("recorded"):
        raise ValueError(f"run: run {run} recorded no trajectory: {g.attrs.get('error')}")
    arrays = {k: np.asarray(g[k][:]) for k in g.array_keys()}
    scalars = g.attrs["fields"]
    fields = {}
    for name in Trajectory.__slots__:
        if name in arrays:
            fields[name] = arrays[name]
        elif isinstance(scalars.get(name), list):
            fields[name] = tuple(scalars[name])
        else:
            fields[name] = scalars.get(name)
    if "controls" in arrays:
        fields["controls"] = list(arrays["controls"])
    return Trajectory(**fields)
