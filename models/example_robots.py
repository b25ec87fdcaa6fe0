"""Real robots shipped as URDF files by the PyPI package
``example-robot-data`` (installed with liedyn's ``dev`` extra), loaded with
:func:`liedyn.load_urdf`, and Pinocchio's own parse of a URDF file."""

import functools
import importlib.metadata
import warnings
from pathlib import Path

from liedyn import load_urdf
from liedyn.parsers.urdf import URDFWarning

# id: (file under robots/, floating base, what it exercises)
ROBOTS = {
    "talos": ("talos_data/robots/talos_reduced.urdf", True,
              "floating humanoid, joint damping, mimic gripper joints"),
    "solo12": ("solo_description/robots/solo12.urdf", True, "quadruped, x and y axes"),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf", True,
               "quadruped, inertias breaking the triangle inequality"),
    "pr2": ("pr2_description/urdf/pr2.urdf", False,
            "continuous (Pinocchio: (cos, sin)) and prismatic joints, oblique axes, damping"),
    "baxter": ("baxter_description/urdf/baxter.urdf", False, "two arms, prismatic grippers"),
    "panda": ("panda_description/urdf/panda.urdf", False,
              "fixed 7-DoF arm, prismatic fingers, welded hand frame"),
    "human": ("human_description/robots/human.urdf", True,
              "massless links between joints (3-axis hips, shoulders, wrists)"),
}


@functools.cache
def robots_dir():
    """``…/share/example-robot-data/robots`` of the installed package."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        raise ImportError("the real robots need example-robot-data: pip install "
                          "example-robot-data (or liedyn's dev extra)") from None
    for f in dist.files or ():
        parts = Path(f).parts
        if "robots" in parts and "example-robot-data" in parts:
            k = parts.index("robots")
            return Path(dist.locate_file(Path(*parts[:k + 1])))
    raise RuntimeError("example-robot-data is installed without its robots/ directory")


def robot_path(name):
    """Path of robot ``name``'s URDF file (a key of :data:`ROBOTS`)."""
    return robots_dir() / ROBOTS[name][0]


def load_robot(name, quiet=True):
    """``load_urdf`` of robot ``name`` with its base as in :data:`ROBOTS`;
    ``quiet`` hides the reader's warnings about ignored tags, mimic joints
    and inertias (each robot's are listed by tests/test_urdf.py)."""
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore", URDFWarning)
        return load_urdf(robot_path(name), floating_base=ROBOTS[name][1])


def pinocchio_from_urdf(path, floating_base):
    """Pinocchio's ``Model`` of the URDF file at ``path`` read by its own
    parser, with a free-flyer root joint when ``floating_base``. Needs
    ``pinocchio`` (imported here, so this module loads without it)."""
    import pinocchio as pin
    return (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating_base
            else pin.buildModelFromUrdf(str(path)))
