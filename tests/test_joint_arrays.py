"""Per-joint and per-body model arrays: every ``joint_*`` field has a row per
joint in ``q`` column order (the row :meth:`Model.joint_index` names), every
``body_*`` field a row per body, and the :class:`liedyn.Model` docstring
lists each public field with its shape. Real URDFs are checked joint by joint
against Pinocchio's own parse of the same file."""

import re

import numpy as np
import pinocchio as pin
import pytest

from liedyn import Model, load_urdf
from liedyn.multibody.model import JOINT_PRISMATIC, JOINT_REVOLUTE
from tests.helpers import assert_close
from tests.robots import load_robot, pinocchio_from_urdf, robot_path, tree_with_frames
from tests.test_urdf import joint, link, robot

TOL = 1e-12
PUBLIC = tuple(f for f in Model.__slots__ if not f.startswith("_"))
ROW = re.compile(r"^\s*``(\w+)``\s+(\([^)]*\)|\w+)", re.M)
ROWS_OF = {"body_": "n_bodies", "joint_": "n_joints", "frame_": "n_frames"}


def _documented():
    """``{field: shape or type}`` from the tables of ``Model.__doc__``."""
    return dict(ROW.findall(Model.__doc__))


def _shape(text, model):
    sizes = {"N": model.n_bodies, "n": model.n_joints, "F": model.n_frames}
    return tuple(sizes[s] if s in sizes else int(s)
                 for s in text.strip("()").replace(" ", "").split(",") if s)


def test_help_lists_every_field():
    doc = Model.__doc__
    assert sorted(_documented()) == sorted(PUBLIC)
    assert doc.index("Per body") < doc.index("``body_parent``") < doc.index("Per joint") \
        < doc.index("``joint_body``") < doc.index("Per frame")


@pytest.mark.parametrize("n_bodies", [1, 6])
@pytest.mark.parametrize("floating", [True, False], ids=["floating", "fixed"])
def test_fields_have_the_documented_shapes(floating, n_bodies):
    model = tree_with_frames(np.random.default_rng(n_bodies), n_bodies, floating_base=floating)
    for name, shape in _documented().items():
        value = getattr(model, name)
        if shape.startswith("("):
            assert np.shape(value) == _shape(shape, model), name
        else:
            assert type(value).__name__ == shape, name
        if isinstance(value, np.ndarray):
            assert not value.flags.writeable, name
    for name in PUBLIC:
        for prefix, size in ROWS_OF.items():
            if name.startswith(prefix):
                assert len(getattr(model, name)) == getattr(model, size), name
    assert np.array_equal(model.joint_body, np.arange(1, n_bodies))


def test_joint_index_reads_the_joints_own_row():
    """A branched URDF whose joints all differ: every per-joint field read at
    ``joint_index(name)`` is that joint's own value, in file order or not."""
    spec = {"hip": ("base", "thigh", "revolute", "1 0 0", -0.1, 0.2, 0.3),
            "knee": ("thigh", "shin", "revolute", "0 1 0", -0.4, 0.5, 0.6),
            "slide": ("base", "carriage", "prismatic", "0 0 1", -0.7, 0.8, 0.9)}
    joints = [joint(name, parent, child, jtype, f'<axis xyz="{axis}"/>'
                    f'<limit lower="{lo}" upper="{hi}"/><dynamics damping="{b}"/>')
              for name, (parent, child, jtype, axis, lo, hi, b) in reversed(spec.items())]
    links = [link(k) for k in ("base", "thigh", "shin", "carriage")]
    for floating in (True, False):
        model = load_urdf(robot(*links, *joints), floating_base=floating, damping="keep")
        for name, (_, child, jtype, axis, lo, hi, b) in spec.items():
            i = model.joint_index(name)
            assert (model.joint_lower[i], model.joint_upper[i], model.joint_damping[i]) == \
                (lo, hi, b), name
            assert model.joint_type[i] == (JOINT_REVOLUTE if jtype == "revolute"
                                           else JOINT_PRISMATIC), name
            assert np.array_equal(model.joint_axis[i], np.array(axis.split(), float)), name
            assert model.body_names[model.joint_body[i]] == child, name


def _pinocchio_joint(pm, data, name):
    """``(limits or None for an unbounded joint, damping, armature, screw Y at
    the neutral configuration in the world, angular first, (effort,
    velocity) limits)`` of Pinocchio's joint ``name``."""
    jid = pm.getJointId(name)
    iq, iv = pm.idx_qs[jid], pm.idx_vs[jid]
    limits = ((pm.lowerPositionLimit[iq], pm.upperPositionLimit[iq]) if pm.nqs[jid] == 1
              else None)
    J = pin.getJointJacobian(pm, data, jid, pin.ReferenceFrame.WORLD)[:, iv]
    return (limits, pm.damping[iv], pm.armature[iv], np.concatenate([J[3:], J[:3]]),
            (pm.effortLimit[iv], pm.velocityLimit[iv]))


@pytest.mark.parametrize("name", ["talos", "pr2", "panda", "human"])
def test_joint_fields_match_pinocchio_joint_by_joint(name):
    """Position, effort and velocity limits, damping, armature, type, axis and
    screw of every joint, looked up by name in Pinocchio's parse (base at
    identity, q = 0)."""
    model = load_robot(name)
    pm = pinocchio_from_urdf(robot_path(name), model.floating_base)
    data = pm.createData()
    pin.computeJointJacobians(pm, data, pin.neutral(pm))
    assert np.any(model.joint_lower[1:] != model.joint_lower[:-1])   # rows are told apart
    assert np.any(model.joint_max_effort[1:] != model.joint_max_effort[:-1])
    for i, jname in enumerate(model.joint_names):
        assert model.joint_index(jname) == i
        limits, b, arm, Y, rates = _pinocchio_joint(pm, data, jname)
        lims = (model.joint_lower[i], model.joint_upper[i])
        assert lims == (limits or (-np.inf, np.inf)), jname
        assert (model.joint_max_effort[i], model.joint_max_velocity[i]) == rates, jname
        assert (model.joint_damping[i], model.joint_armature[i]) == (b, arm), jname
        revolute = np.linalg.norm(Y[:3]) > 0.5
        assert model.joint_type[i] == (JOINT_REVOLUTE if revolute else JOINT_PRISMATIC), jname
        R = model.body_home[model.joint_body[i], :3, :3]
        assert_close(R @ model.joint_axis[i], Y[:3] if revolute else Y[3:], rtol=0, atol=TOL,
                     what=f"axis of {jname}")
        assert_close(model.joint_screw[i], Y, rtol=0, atol=TOL, what=f"screw of {jname}")
