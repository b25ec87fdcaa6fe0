"""Two motions as self-contained HTML pages (liedyn.viewer): the contact
drop and the flatness flight.

    python -m experiments.animations            # quick: 0.6 s drop, one 3.1 s loop (period 2π / W)
    python -m experiments.animations --full     # 1.5 s drop, two loops

* ``drop.html``: Go2 (example-robot-data's ``go2.urdf`` and its COLLADA
  meshes) dropped from 10 cm onto its four point feet with friction μ = 0.8,
  held by its PD law (``models/quadruped_drops.py``, as
  ``experiments.legged_drops`` runs it): the feet coloured by contact mode,
  the contact forces as arrows, the touch-downs marked and ticked on the
  timeline.
* ``flight.html``: Borinot (a quadrotor carrying a two-joint arm,
  ``borinot_flying_arm_2.urdf``) flying a figure-eight of its centre of mass
  (1 m by 0.6 m, 2 rad/s, a swinging yaw, the joints swinging) with
  :class:`liedyn.control.FlatTrackingLaw` (SPEC §17.6), from 5 cm off the
  target; the camera follows the base and its path is drawn.

Each page opens offline in any browser with WebGL 2 (``page.html#t=0.3``
shows that time). Writes into the git-ignored ``results/`` (``--out
DIR`` elsewhere; ``_full`` names with ``--full``) and prints each page's size and
samples.
"""

import argparse
import os
import time
import warnings
from importlib.metadata import distribution
from pathlib import Path

import numpy as np

import liedyn as ld
from liedyn import control, viewer
from liedyn.parsers.urdf import URDFWarning
from models.example_robots import robots_dir
from models.quadruped_drops import GO2_URDF, Drop

OUT = Path(__file__).resolve().parent.parent / "results"      # git-ignored
QUICK = dict(drop=0.6, loops=1)
FULL = dict(drop=1.5, loops=2)
EVENT_TOL = 1e-10          # s, as experiments.legged_drops
W = 2.0                    # rad/s: the figure-eight's rate (period π s)


def _sine(amp, w, phase, t, rows):
    """Rows ``0..rows-1`` of the jet of ``amp sin(w t + phase)``."""
    k = np.arange(rows)
    return amp * w ** k * np.sin(w * t + phase + k * np.pi / 2)


def figure_eight(n):
    """Flat outputs ``t ↦ (x_G^(0..5), ψ^(0..3), q^(0..3))``: the centre of
    mass on a figure-eight 1 m by 0.6 m around (0, 0, 1), a yaw swinging
    by 0.5 rad, joint ``j`` swinging by 0.4 rad."""
    def target(t):
        xG = np.stack([_sine(1.0, W, 0.0, t, 6), _sine(0.6, 2 * W, 0.0, t, 6),
                       _sine(0.2, W, 0.5, t, 6)], axis=1)
        xG[0, 2] += 1.0
        psi = _sine(0.5, 0.7, 0.0, t, 4)
        psi[0] += 0.3
        q = np.stack([_sine(0.4, 1.1 + 0.3 * j, j, t, 4) for j in range(n)], axis=1)
        q[0] += 0.1
        return xG, psi, q
    return target


def drop_page(duration, path, say):
    drop = Drop("go2")
    urdf = robots_dir() / GO2_URDF
    say(f"drop: Go2 from {drop.drop} m, {duration} s at dt = 1 ms …")
    start = time.perf_counter()
    traj = drop.run(duration, EVENT_TOL, progress=True)
    say(f"drop: simulated in {time.perf_counter() - start:.1f} s, {len(traj)} samples, "
        f"events: {', '.join(f'{e.kind} {e.contact} {e.time:.4f} s' for e in traj.events[:4])}"
        f"{' …' if len(traj.events) > 4 else ''}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        vis = viewer.urdf_visuals(drop.model, urdf)
    anim = viewer.animation(drop.model, traj, visuals=vis, contacts=drop.contacts,
                            frames=["base"], title="Go2 dropped from 10 cm onto its feet")
    return anim, viewer.export_html(anim, path)


def flight_page(loops, path, say):
    erd = distribution("example-robot-data")
    urdf = erd.locate_file(next(f for f in erd.files if f.name == "borinot_flying_arm_2.urdf"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        model = ld.load_urdf(urdf, floating_base=True)
        vis = viewer.urdf_visuals(model, urdf)
    law = control.FlatTrackingLaw(model, (-3.0, -4.0, -5.0, -6.0), figure_eight(model.n_joints),
                                  yaw_poles=(-4.0, -5.0), joint_poles=(-5.0, -6.0))
    on = law.state_on(0.0)
    start = law.state_on(0.0, base_position=on.base_pose[:3, 3] + [0.05, -0.03, 0.02])
    duration = loops * 2.0 * np.pi / W           # the figure-eight's period: 2π / W
    say(f"flight: Borinot on a figure-eight, {duration:.2f} s at dt = 5 ms …")
    t0 = time.perf_counter()
    traj = ld.simulate(model, start, duration, dt=5e-3, controller=law, plant=law.plant,
                       progress=True)
    say(f"flight: simulated in {time.perf_counter() - t0:.1f} s, {len(traj)} samples")
    anim = viewer.animation(model, traj, visuals=vis, frames=["borinot__base_link"], fps=100.0,
                            title="Borinot flying a figure-eight (flatness-based tracking)")
    return anim, viewer.export_html(anim, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true", help="longer runs")
    ap.add_argument("--out", type=Path, default=OUT, help="output folder")
    args = ap.parse_args(argv)
    cfg = FULL if args.full else QUICK
    suffix = "_full" if args.full else ""
    args.out.mkdir(parents=True, exist_ok=True)

    def say(text):
        print(text, flush=True)

    for name, make, arg in (("drop", drop_page, cfg["drop"]),
                            ("flight", flight_page, cfg["loops"])):
        anim, path = make(arg, args.out / f"{name}{suffix}.html", say)
        text = Path(path).read_text(encoding="utf-8")
        offline = not any(s in text for s in ("http://", "https://", "src="))
        say(f"{name}: wrote {path} ({os.path.getsize(path) / 2**20:.1f} MiB, "
            f"{len(anim.time)} samples, {len(anim.visuals)} visuals, "
            f"{'no network reference' if offline else 'NETWORK REFERENCE FOUND'})")
        if not offline:
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
