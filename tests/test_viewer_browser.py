"""The exported page in a real browser: headless Chromium opens the HTML of
a Go2 drop (a simulation with contacts) at two times, and the screenshots
show the robot drawn (not a blank or error page) and moving between them.

Chromium runs in a subprocess with a timeout; without a Chromium the test
skips saying so (``.ci/run`` installs Debian's ``chromium``).
"""

import os
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from liedyn import viewer
from liedyn.parsers.urdf import URDFWarning
from models.example_robots import robots_dir
from models.quadruped_drops import GO2_URDF, Drop

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or \
    (os.path.exists("/usr/bin/chromium") and "/usr/bin/chromium") or None
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (the "
                                "browser test needs chromium on the PATH; .ci/run installs "
                                "Debian's chromium package)")

WIDTH, HEIGHT, BAR = 800, 600, 56          # window, and the page's control bar at the bottom
TIMEOUT = 180                              # s per browser run (software WebGL on a loaded machine)


def _chromium(tmp_path, *args):
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader",
           "--enable-unsafe-swiftshader", "--force-device-scale-factor=1",
           "--hide-scrollbars", "--no-first-run", "--disable-extensions",
           f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={WIDTH},{HEIGHT}",
           "--virtual-time-budget=3000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)


def _shot(tmp_path, page, fragment, name):
    """The canvas part (above the control bar) of a screenshot of ``page#fragment``,
    as an (H, W, 3) int array."""
    from PIL import Image
    png = tmp_path / f"{name}.png"
    run = _chromium(tmp_path, f"--screenshot={png}", f"file://{page}#{fragment}")
    assert png.exists(), f"no screenshot of #{fragment}: {run.stderr[-2000:]}"
    img = np.asarray(Image.open(png).convert("RGB"), dtype=int)
    assert img.shape == (HEIGHT, WIDTH, 3), img.shape
    keep = os.environ.get("LIEDYN_KEEP_SCREENSHOTS")
    if keep:
        shutil.copy(png, os.path.join(keep, png.name))
    return img[:HEIGHT - BAR]


def _changed(a, b):
    """Pixels whose colour differs by more than 24 of 255 in some channel
    (the renderer's anti-aliasing and dithering stay far below)."""
    return np.abs(a - b).max(axis=-1) > 24


@pytest.fixture(scope="module")
def drop_page(tmp_path_factory):
    drop = Drop("go2")
    traj = drop.run(0.25, 1e-10)          # lands at √(2 · 0.1 / g) = 0.143 s
    assert any(e.kind == "touch-down" for e in traj.events)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        vis = viewer.urdf_visuals(drop.model, robots_dir() / GO2_URDF)
    anim = viewer.animation(drop.model, traj, visuals=vis, contacts=drop.contacts,
                            frames=["base"], title="Go2 drop")
    out = tmp_path_factory.mktemp("page")
    return viewer.export_html(anim, out / "drop.html"), out


def test_page_runs_its_script(drop_page):
    """The DOM after the script ran: the page says it drew (``data-state``),
    shows the sample at ``#t=0.2`` and no error."""
    page, tmp = drop_page
    run = _chromium(tmp, "--dump-dom", f"file://{page}#t=0.2")
    assert 'data-state="drawn"' in run.stdout, run.stdout[:500] + run.stderr[-2000:]
    assert 'class="error"' not in run.stdout
    assert "t = 0.200 s" in run.stdout


def test_robot_is_drawn_and_moves(drop_page):
    """Three screenshots: the scene without the robot (``#hide=robot``: the
    ground alone, the camera unchanged), the robot in the air at t = 0 and
    crouched on the ground at t = 0.24 s. The robot covers enough of the
    canvas (2 % of it, in the window it fills about a tenth) in many colours
    (its COLLADA materials lit from several directions), and between the two
    times the picture changes where the robot is, not elsewhere."""
    page, tmp = drop_page
    ground = _shot(tmp, page, "t=0&hide=robot", "ground")
    early = _shot(tmp, page, "t=0", "early")
    late = _shot(tmp, page, "t=0.24", "late")
    for img, when in ((early, "t = 0"), (late, "t = 0.24 s")):
        robot = _changed(img, ground)
        assert robot.mean() > 0.02, f"{when}: robot covers {robot.mean():.4f} of the canvas"
        colours = np.unique(img[robot] // 16, axis=0)
        assert len(colours) >= 20, f"{when}: only {len(colours)} colours where the robot is"
    moved = _changed(early, late)
    assert moved.mean() > 0.003, f"the two times differ on {moved.mean():.5f} of the canvas"
    where = _changed(early, ground) | _changed(late, ground)
    assert moved[where].sum() >= 0.98 * moved.sum(), \
        "the pictures differ away from the robot (the scene moved, not the robot)"
