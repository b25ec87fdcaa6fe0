"""The self-contained HTML page of an :class:`Animation`: one file holding
the page's script (:file:`page.js`, WebGL 2, written for liedyn) and the
scene as JSON, which any browser opens offline: it fetches nothing and
names no URL.
"""

import base64
import html
import json
import math
import os
from importlib import resources

import numpy as np

from . import meshes
from .animation import Animation

__all__ = ["to_html", "export_html"]

_STYLE = """
html, body { margin: 0; height: 100%; font: 13px system-ui, sans-serif; color: #222;
             background: #f4f5f7; overflow: hidden; }
#view { position: absolute; top: 0; left: 0; width: 100%; height: calc(100% - 56px); display: block; }
#bar { position: absolute; left: 0; right: 0; bottom: 0; height: 56px; background: #e6e8ec;
       display: flex; align-items: center; gap: 10px; padding: 0 12px; box-sizing: border-box; }
#bar button { width: 40px; height: 30px; font-size: 15px; }
#track { position: relative; flex: 1; }
#scrub { width: 100%; margin: 0; }
#ticks { position: absolute; left: 0; right: 0; top: -8px; height: 8px; pointer-events: auto; }
.tick { position: absolute; width: 3px; margin-left: -1px; height: 8px; background: #555; }
.tick.touch-down { background: #d01818; } .tick.lift-off { background: #3050f0; }
.tick.slip { background: #f08c0c; } .tick.stick { background: #18b040; }
#clock { width: 92px; font-variant-numeric: tabular-nums; }
#title { position: absolute; z-index: 1; top: 8px; left: 12px; font-weight: 600; }
#status { position: absolute; z-index: 1; top: 28px; left: 12px; max-width: 60%; color: #444; }
#status.error { color: #b00; font-weight: 600; }
"""

_BODY = """<div id="title">{title}</div><div id="status">Loading…</div>
<canvas id="view"></canvas>
<div id="bar"><button id="play" title="play / pause (space)">&#10074;&#10074;</button>
<div id="track"><div id="ticks"></div><input id="scrub" type="range" min="0" max="1000" value="0"></div>
<span id="clock">t = 0 s</span>
<label>speed <select id="speed"><option value="0.1">0.1×</option><option value="0.25">0.25×</option>
<option value="0.5">0.5×</option><option value="1" selected>1×</option><option value="2">2×</option></select></label>
<label><input id="follow" type="checkbox"> follow base</label></div>"""


def _b64(a, dtype):
    return base64.b64encode(np.ascontiguousarray(a, dtype=dtype).astype(dtype.newbyteorder("<"))
                            .tobytes()).decode("ascii")


def _rows(T):
    """The top three rows of a pose, flattened row-major (12,)."""
    return [float(x) for x in np.asarray(T)[:3, :4].ravel()]


def _scene(anim):
    """The JSON-ready scene of ``anim``."""
    geoms, index = [], {}

    def geometry(part):
        key = (id(part.vertices), id(part.triangles))
        if key not in index:
            index[key] = len(geoms)
            geoms.append({"v": _b64(part.vertices, np.dtype(np.float32)),
                          "f": _b64(part.triangles, np.dtype(np.uint32))})
        return index[key]

    shapes = {"sphere": geometry(meshes.sphere(1.0, 16)), "arrow": geometry(meshes.arrow())}
    visuals = []
    for v in anim.visuals:
        f = v.frame
        visuals.append({"name": v.name, "body": int(anim.frame_body[f]),
                        "offset": _rows(anim.frame_offset[f] @ v.offset),
                        "parts": [[geometry(p), [float(c) for c in p.color]] for p in v.parts]})
    T, N = anim.body_pose.shape[:2]
    origins = anim.body_pose[:, :, :3, 3].reshape(-1, 3)
    corners = [origins]
    for v in anim.visuals:                     # the geometry's box at the first sample
        C = anim.body_pose[0, anim.frame_body[v.frame]] @ anim.frame_offset[v.frame] @ v.offset
        for p in v.parts:
            if len(p.vertices):
                a, b = p.vertices.min(0), p.vertices.max(0)
                box = np.array([[x, y, z] for x in (a[0], b[0]) for y in (a[1], b[1])
                                for z in (a[2], b[2])])
                corners.append(box @ C[:3, :3].T + C[:3, 3])
    pts = np.concatenate(corners)
    lo, hi = pts.min(0), pts.max(0)
    lo[2] = min(lo[2], 0.0)                    # the ground z = 0 in view
    first = np.concatenate(corners[1:]) if len(corners) > 1 else anim.body_pose[0, :, :3, 3]
    size = float(max(np.ptp(first, axis=0).max(), 0.1))                 # the robot's extent
    travel = float(np.ptp(anim.body_pose[:, 0, :3, 3], axis=0).max())
    follow = travel > 3.0 * size
    target = anim.body_pose[0, 0, :3, 3] if follow else 0.5 * (pts.min(0) + pts.max(0))
    dist = 2.2 * max(size, 0.0 if follow else float(np.ptp(pts, axis=0).max()))
    force = anim.contact_force
    fmax = float(np.linalg.norm(force, axis=-1).max()) if force.size else 0.0
    duration = float(anim.time[-1] - anim.time[0])
    return {
        "title": anim.title, "n_bodies": int(N),
        "time": _b64(anim.time, np.dtype(np.float64)),
        "body_pose": _b64(anim.body_pose[:, :, :3, :4], np.dtype(np.float32)),
        "geometries": geoms, "shapes": shapes, "visuals": visuals,
        "frames": [{"name": n, "body": int(b), "offset": _rows(o)} for n, b, o in
                   zip(anim.frame_names, anim.frame_body, anim.frame_offset)],
        "shown_frames": list(anim.shown_frames), "frame_scale": 0.25 * size,
        "contacts": {"names": list(anim.contact_names),
                     "point": _b64(anim.contact_point, np.dtype(np.float32)),
                     "force": _b64(force, np.dtype(np.float32)),
                     "mode": _b64(anim.contact_mode, np.dtype(np.int8)),
                     "scale": 0.6 * size / fmax if fmax > 0 else 0.0},
        "events": [{"t": t, "kind": k, "contact": c, "point": [float(x) for x in p]}
                   for t, k, c, p in anim.events],
        "event_window": max(0.03 * duration, 1e-3),
        "path": _b64(anim.body_pose[:, 0, :3, 3], np.dtype(np.float32)),
        "show_path": bool(follow),
        "bounds": [lo.tolist(), hi.tolist()], "size": size,
        "camera": {"azimuth": -math.pi / 3, "elevation": 0.45, "distance": dist,
                   "target": [float(x) for x in target], "follow": bool(follow)},
        "note": (f"{T} samples, {duration:.3g} s" +
                 (f"; contacts: points by mode (grey open, blue closed, green sticking, "
                  f"orange sliding), force arrows 1 m = {fmax / (0.6 * size):.3g} N, "
                  f"{len(anim.events)} events (ticks on the timeline)"
                  if anim.contact_names else "") +
                 "; drag to turn, shift-drag to pan, wheel to zoom, space to play; "
                 "#t=<seconds> after the address shows that time"),
    }


def to_html(anim):
    """The page of ``anim`` as a string (see :func:`export_html`)."""
    if not isinstance(anim, Animation):
        raise TypeError(f"anim: expected a liedyn.viewer.Animation (from liedyn.viewer."
                        f"animation), got {type(anim).__name__}")
    data = json.dumps(_scene(anim), separators=(",", ":"), allow_nan=False)
    data = data.replace("</", "<\\/")                     # no "</script>" inside the JSON
    script = resources.files(__package__).joinpath("page.js").read_text(encoding="utf-8")
    title = html.escape(anim.title or "liedyn")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{title}</title><style>{_STYLE}</style></head><body>\n"
            f"{_BODY.format(title=title)}\n"
            f"<script type=\"application/json\" id=\"liedyn-data\">{data}</script>\n"
            f"<script>{script}</script>\n</body></html>\n")


def export_html(anim, path):
    """Write the page of ``anim`` to ``path`` (``.html``) and return the path.

    The page plays the motion (play/pause, a scrub bar with the contact
    events as ticks, speed, following the base), turns, pans and zooms
    with the mouse, and shows the time in its address's fragment
    (``page.html#t=0.3``) paused. It holds everything it draws and opens
    offline: it loads no script, style, font or image.

    Raises
    ------
    TypeError
        ``anim`` is not an :class:`Animation`; ``path`` is not a path.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path: expected a file path, got {type(path).__name__}")
    text = to_html(anim)
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return path
