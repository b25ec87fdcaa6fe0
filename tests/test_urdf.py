"""The URDF reader.

Real robots from example-robot-data against Pinocchio's own URDF parser
(urdfdom + Pinocchio's tree walk, with and without a free-flyer root): joint
order and names, joint placements, axes, merged body inertias, frames of links
merged by fixed joints, limits and damping. Hand-written URDF strings: closed
forms for the conventions, one test per error and per warning.
"""

import dataclasses
import math
import os
import re
import warnings

import numpy as np
import pinocchio as pin
import pytest

import liedyn
from liedyn import load_urdf, se3
from liedyn.parsers.urdf import URDFError, URDFWarning, parse_urdf
from models.example_robots import pinocchio_from_urdf
from tests.helpers import assert_close, rel_err
from tests.robots import robots_dir as _robots_dir

# Both parsers evaluate the same few float64 products (an rpy rotation, the
# composition of a handful of fixed-joint transforms, one inertia transport
# per merged link), so they agree to a few hundred eps of the largest entry
# (metres, kilograms, kg·m², all O(1..100)): 1e-12 relative to 1 + max|x|.
TOL = 1e-12


ROBOTS = {   # id: (path under robots/, what it exercises)
    "talos": ("talos_data/robots/talos_reduced.urdf", "floating humanoid"),
    "talos_full": ("talos_data/robots/talos_full_v2.urdf", "humanoid with mimic gripper joints"),
    "solo12": ("solo_description/robots/solo12.urdf", "quadruped"),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf", "quadruped, x and y axes"),
    "pr2": ("pr2_description/urdf/pr2.urdf", "continuous + prismatic, mimic, calibration"),
    "baxter": ("baxter_description/urdf/baxter.urdf", "prismatic grippers, mimic"),
    "panda": ("panda_description/urdf/panda.urdf", "7-DoF arm, prismatic fingers, mimic"),
    "tiago": ("tiago_description/robots/tiago.urdf", "continuous + prismatic"),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", "massless links on fixed joints"),
    "human": ("human_description/robots/human.urdf", "massless links between joints"),
    "romeo": ("romeo_description/urdf/romeo.urdf", "oblique axes, massless leaf bodies"),
}


def _load(name, floating):
    path = _robots_dir() / ROBOTS[name][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)   # checked in their own tests
        desc = parse_urdf(path, floating_base=floating)
    return desc, pinocchio_from_urdf(path, floating)


def _swap(M):
    """Pinocchio's linear-first 6×6 → liedyn's angular-first."""
    P = np.zeros((6, 6))
    P[:3, 3:] = P[3:, :3] = np.eye(3)
    return P @ M @ P


def pinocchio_errors(desc, pm, floating):
    """Max relative error of each part of ``desc`` against Pinocchio model
    ``pm``; asserts what must match exactly (names, tree, frame parents)."""
    off = 1 if floating else 0           # Pinocchio joint id of body k is k + off
    bodies = desc.bodies
    assert desc.joint_names == tuple(pm.names[1 + off:])
    assert pm.njoints == len(bodies) + off
    assert [b.parent + off for b in bodies[1:]] == list(pm.parents[1 + off:])
    data = pm.createData()
    pin.computeJointJacobians(pm, data, pin.neutral(pm))
    err = dict.fromkeys(["origin", "axis", "inertia", "frame", "limit", "damping"], 0.0)
    for k, b in enumerate(bodies):
        jid = k + off
        err["origin"] = max(err["origin"], rel_err(b.origin, pm.jointPlacements[jid].homogeneous))
        err["inertia"] = max(err["inertia"], rel_err(b.inertia, _swap(pm.inertias[jid].matrix())))
        fid = pm.getFrameId(b.name, pin.BODY)
        assert pm.frames[fid].parentJoint == jid, b.name
        err["frame"] = max(err["frame"], rel_err(np.eye(4), pm.frames[fid].placement.homogeneous))
        if k == 0:
            continue
        iv, iq = pm.idx_vs[jid], pm.idx_qs[jid]
        col = pin.getJointJacobian(pm, data, jid, pin.LOCAL)[:, iv]
        S = (np.concatenate([b.axis, np.zeros(3)]) if b.joint_type == "revolute"
             else np.concatenate([np.zeros(3), b.axis]))
        err["axis"] = max(err["axis"], rel_err(S, np.concatenate([col[3:], col[:3]])))
        if pm.nqs[jid] == 2:             # continuous: Pinocchio's (cos, sin) joint
            assert b.joint_type == "revolute" and b.lower == -math.inf and b.upper == math.inf
        else:
            err["limit"] = max(err["limit"], abs(b.lower - pm.lowerPositionLimit[iq]),
                               abs(b.upper - pm.upperPositionLimit[iq]))
        err["damping"] = max(err["damping"], abs(b.damping - pm.damping[iv]))
    for f in desc.frames:
        fid = pm.getFrameId(f.name, pin.BODY)
        assert pm.frames[fid].parentJoint == f.body + off, f.name
        err["frame"] = max(err["frame"], rel_err(f.offset, pm.frames[fid].placement.homogeneous))
    pin_links = {fr.name for fr in pm.frames if fr.type == pin.FrameType.BODY}
    assert pin_links == set(desc.body_names) | {f.name for f in desc.frames}
    return err


@pytest.mark.parametrize("floating", [True, False], ids=["floating", "fixed"])
@pytest.mark.parametrize("robot", list(ROBOTS))
def test_real_robot_matches_pinocchio(robot, floating):
    desc, pm = _load(robot, floating)
    err = pinocchio_errors(desc, pm, floating)
    assert max(err.values()) <= TOL, err


def test_real_robots_cover_the_cases():
    """The zoo above really contains what it is meant to exercise."""
    kinds = {}
    for name in ROBOTS:
        desc, _ = _load(name, True)
        joints = {j.name: j for j in desc.joints}
        kinds[name] = {
            "continuous": any(joints[b.joint].type == "continuous" for b in desc.bodies[1:]),
            "prismatic": any(b.joint_type == "prismatic" for b in desc.bodies[1:]),
            "mimic": any(joints[b.joint].mimic is not None for b in desc.bodies[1:]),
            "oblique": any(np.sort(np.abs(b.axis))[1] > 1e-6 for b in desc.bodies[1:]),
            "negative": any(min(b.axis) < 0.0 for b in desc.bodies[1:]),
            "directions": len({int(np.argmax(np.abs(b.axis))) for b in desc.bodies[1:]}),
            "massless": any(np.all(b.inertia == 0.0) for b in desc.bodies[1:]),
            "merged": len(desc.frames) > 0,
        }
    assert kinds["pr2"]["continuous"] and kinds["pr2"]["prismatic"] and kinds["pr2"]["mimic"]
    assert kinds["panda"]["prismatic"] and kinds["panda"]["mimic"]
    assert kinds["panda"]["merged"] and len(_load("panda", False)[0].bodies) == 10
    assert kinds["anymal"]["directions"] == 2 and kinds["solo12"]["directions"] == 2
    assert kinds["romeo"]["oblique"] and kinds["human"]["negative"] and kinds["pr2"]["negative"]
    assert kinds["human"]["massless"] and kinds["romeo"]["massless"]
    assert kinds["talos_full"]["mimic"]


def _messages(path, floating):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        parse_urdf(path, floating_base=floating)
    assert all(w.category is URDFWarning for w in record)
    return [str(w.message) for w in record]


def test_real_robot_warnings():
    msgs = _messages(_robots_dir() / ROBOTS["panda"][0], False)
    assert any("mimic joints loaded as independent joints:\n    'panda_finger_joint2' (mimics "
               "'panda_finger_joint1')" in m for m in msgs)
    assert any("<safety_controller> in joints:\n        'panda_joint1'\n" in m for m in msgs)
    msgs = _messages(_robots_dir() / ROBOTS["romeo"][0], True)
    assert any("leaf bodies" in m and "'LFinger13Link' (joint 'LFinger13')" in m for m in msgs)
    msgs = _messages(_robots_dir() / ROBOTS["pr2"][0], False)
    assert any("<calibration> in joints" in m for m in msgs)


# ----------------------------------------------------- hand-written URDFs --

INERTIAL = ('<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{m}"/>'
            '<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/>'
            '</inertial>')


def inertial(m=1.0, xyz="0 0 0", rpy="0 0 0", ixx=0.1, ixy=0.0, ixz=0.0, iyy=0.1, iyz=0.0, izz=0.1):
    return INERTIAL.format(m=m, xyz=xyz, rpy=rpy, ixx=ixx, ixy=ixy, ixz=ixz, iyy=iyy, iyz=iyz,
                           izz=izz)


def link(name, body=None):
    return f'<link name="{name}">{inertial() if body is None else body}</link>'


def joint(name, parent, child, jtype="revolute", extra='<limit lower="-1" upper="1"/>',
          origin=""):
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/>'
            f'<child link="{child}"/>{origin}{extra}</joint>')


def robot(*parts):
    return '<robot name="r">' + "".join(parts) + "</robot>"


CHAIN = robot(link("base"), link("a"), link("b"),
              joint("j1", "base", "a"), joint("j2", "a", "b", extra='<axis xyz="0 0 1"/>'
                                                                    '<limit lower="-2" upper="2"/>'))


def sources(xml, tmp_path):
    """The same URDF as XML text and as a file: ``[(source, label)]``."""
    path = tmp_path / "robot.urdf"
    path.write_text(xml)
    return [(xml, "<string>"), (path, str(path))]


def quiet(source, floating_base=True, **kw):
    """``parse_urdf`` (floating base unless told otherwise: the robots here
    are bare trees) failing on any warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return parse_urdf(source, floating_base=floating_base, **kw)


def _R(axis, angle):
    return se3.exp_so3(np.asarray(axis, float) * angle)


def test_chain_bodies_and_conventions(tmp_path):
    r, p, y = 0.3, -0.7, 1.9
    xml = robot(link("base"), link("a"), link("b"),
                joint("j1", "base", "a", extra='<axis xyz="0 3 4"/><dynamics damping="0.25"/>'
                                               '<limit lower="-1" upper="2" effort="5" velocity="6"/>',
                      origin=f'<origin xyz="1 2 3" rpy="{r} {p} {y}"/>'),
                joint("j2", "a", "b", jtype="continuous", extra=""))
    for src, label in sources(xml, tmp_path):
        d = quiet(src)
        assert d.source == label and d.root == "base" and d.name == "r"
        assert d.body_names == ("base", "a", "b") and d.joint_names == ("j1", "j2")
        base, a, b = d.bodies
        assert base.parent == -1 and base.joint is None and a.parent == 0 and b.parent == 1
        # URDF rpy: fixed-axis roll, pitch, yaw = R_z(yaw) R_y(pitch) R_x(roll)
        R = _R([0, 0, 1], y) @ _R([0, 1, 0], p) @ _R([1, 0, 0], r)
        assert_close(a.origin[:3, :3], R, rtol=0, atol=1e-15, what="rpy")
        assert_close(a.origin[:3, 3], [1, 2, 3], rtol=0, atol=0.0, what="xyz")
        assert_close(a.axis, [0, 0.6, 0.8], rtol=0, atol=1e-16, what="axis normalised")
        assert (a.joint_type, a.lower, a.upper, a.damping) == ("revolute", -1.0, 2.0, 0.25)
        assert (b.joint_type, b.lower, b.upper) == ("revolute", -math.inf, math.inf)
        assert_close(b.axis, [1, 0, 0], rtol=0, atol=0.0, what="default axis")
        j1 = d.joints[0]
        assert (j1.limit.effort, j1.limit.velocity) == (5.0, 6.0)


def test_children_in_joint_name_order_not_file_order():
    xml = robot(link("base"), link("z"), link("y"), link("x"), link("w"),
                joint("c_joint", "base", "z"), joint("a_joint", "base", "y"),
                joint("b_joint", "y", "x"), joint("aa_joint", "y", "w", jtype="fixed", extra=""))
    d = quiet(xml)
    assert d.joint_names == ("a_joint", "b_joint", "c_joint")
    assert d.body_names == ("base", "y", "x", "z")
    assert [b.parent for b in d.bodies] == [-1, 0, 1, 0]
    assert [(f.name, f.body) for f in d.frames] == [("w", 1)]


def test_inertial_origin_rotation():
    """diag(1, 2, 3) in axes turned 90° about z is diag(2, 1, 3) in the link frame."""
    xml = robot(link("base", inertial(m=2.0, xyz="0.1 0.2 0.3", rpy=f"0 0 {math.pi / 2}",
                                      ixx=1, iyy=2, izz=3)))
    d = quiet(xml)
    want = se3.spatial_inertia(2.0, [0.1, 0.2, 0.3], np.diag([2.0, 1.0, 3.0]))
    assert_close(d.bodies[0].inertia, want, rtol=0, atol=1e-15, what="inertia")


def test_fixed_joint_merges_inertia_and_keeps_frame():
    """A point-ish body welded at T: merged inertia = spatial_inertia of the
    same mass at T·c with rotational inertia R J Rᵀ (closed form)."""
    J = np.array([[0.3, 0.01, 0.02], [0.01, 0.4, 0.03], [0.02, 0.03, 0.5]])
    c = np.array([0.1, -0.2, 0.3])
    child = inertial(m=1.5, xyz="0.1 -0.2 0.3", ixx=0.3, ixy=0.01, ixz=0.02, iyy=0.4,
                     iyz=0.03, izz=0.5)
    xml = robot(link("base"), link("arm"), link("tool", child), link("tip"),
                joint("j", "base", "arm"),
                joint("weld", "arm", "tool", jtype="fixed", extra="",
                      origin='<origin xyz="0 0 1" rpy="0 0 1.5707963267948966"/>'),
                joint("k", "tool", "tip", extra='<axis xyz="0 1 0"/><limit lower="0" upper="1"/>',
                      origin='<origin xyz="2 0 0"/>'))
    d = quiet(xml)
    assert d.body_names == ("base", "arm", "tip") and d.bodies[1].links == ("arm", "tool")
    R = _R([0, 0, 1], math.pi / 2)
    t = np.array([0.0, 0.0, 1.0])
    want = se3.spatial_inertia(1.0, np.zeros(3), 0.1 * np.eye(3)) \
        + se3.spatial_inertia(1.5, R @ c + t, R @ J @ R.T)
    assert_close(d.bodies[1].inertia, want, rtol=1e-15, atol=1e-15, what="merged inertia")
    (f,) = d.frames
    assert f.name == "tool" and f.body == 1
    assert_close(f.offset[:3, :3], R, rtol=0, atol=1e-15, what="frame rotation")
    assert_close(f.offset[:3, 3], t, rtol=0, atol=0.0, what="frame position")
    # the tip hangs from the arm with the weld composed in: T(t) R · T(2, 0, 0)
    assert d.bodies[2].parent == 1
    assert_close(d.bodies[2].origin[:3, 3], t + R @ [2, 0, 0], rtol=0, atol=1e-15, what="tip")


def test_massless_links_load():
    """No <inertial>: zero inertia, between two joints and as a welded frame."""
    xml = robot(link("base"), link("hip_x", ""), link("thigh"), link("marker", ""),
                joint("hx", "base", "hip_x"), joint("hy", "hip_x", "thigh"),
                joint("m", "thigh", "marker", jtype="fixed", extra=""))
    d = quiet(xml)
    assert np.all(d.bodies[1].inertia == 0.0) and d.bodies[1].name == "hip_x"
    assert [f.name for f in d.frames] == ["marker"]


def test_description_is_immutable():
    d = quiet(CHAIN)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.bodies[0].name = "x"
    with pytest.raises(ValueError):
        d.bodies[1].origin[0, 0] = 2.0
    with pytest.raises(ValueError):
        d.links[1].inertial.inertia[0, 0] = 2.0
    assert isinstance(d.bodies, tuple) and isinstance(d.frames, tuple)


def test_root_argument_picks_a_subtree():
    xml = robot(link("world"), link("base"), link("a"),
                joint("float", "world", "base", jtype="floating", extra=""),
                joint("j", "base", "a"))
    with pytest.warns(URDFWarning, match=r"outside the tree below root 'base':\n"
                                         r" {8}link 'world'\n {8}joint 'float'$"):
        d = parse_urdf(xml, floating_base=True, root="base")
    assert d.root == "base" and d.body_names == ("base", "a")


# ------------------------------------------------------------------ errors --

def _raises(source, label, *fragments, exc=URDFError, floating_base=True, **kw):
    with pytest.raises(exc) as info:
        parse_urdf(source, floating_base=floating_base, **kw)
    msg = str(info.value)
    for frag in (label,) + fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"


def test_error_malformed_xml(tmp_path):
    for src, label in sources('<robot name="r"><link name="a"></robot>', tmp_path):
        _raises(src, label, "malformed XML", "line 1")


def test_error_not_urdf(tmp_path):
    for src, label in sources('<sdf version="1.6"><model name="m"/></sdf>', tmp_path):
        _raises(src, label, "<sdf>", "<robot>")


def test_error_xacro(tmp_path):
    xml = ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
           '<xacro:include filename="arm.xacro"/><link name="a"/></robot>')
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "<robot>", "<xacro:include>", "xacro")


def test_byte_order_mark_and_declaration():
    xml = '\ufeff<?xml version="1.0" encoding="utf-8"?>\n' + CHAIN
    assert quiet(xml).body_names == ("base", "a", "b")


def test_error_empty_string():
    for s in ("", "  \n "):
        _raises(s, "source", "empty string")


def test_error_empty_file(tmp_path):
    path = tmp_path / "empty.urdf"
    path.write_text("")
    _raises(path, str(path), "malformed XML")


def test_error_missing_file(tmp_path):
    missing = tmp_path / "nope.urdf"
    for src in (missing, str(missing)):
        _raises(src, str(missing), "no such file", exc=FileNotFoundError)
    _raises(tmp_path, str(tmp_path), "is a directory", exc=FileNotFoundError)


def test_error_url():
    for url in ("https://example.com/robot.urdf", "package://robot/urdf/robot.urdf",
                "file:///tmp/robot.urdf"):
        _raises(url, url, "not fetched")


def test_error_source_type():
    for bad in (b"<robot/>", 3, None):
        _raises(bad, "source", "expected a file path", exc=TypeError)


def test_error_no_links(tmp_path):
    for src, label in sources('<robot name="r"/>', tmp_path):
        _raises(src, label, "<robot>", "no <link>")


def test_error_joint_parent_missing(tmp_path):
    xml = robot(link("base"), link("a"), joint("j", "ghost", "a"))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "joint 'j'", "parent link 'ghost' does not exist")


def test_error_joint_child_missing(tmp_path):
    xml = robot(link("base"), joint("j", "base", "ghost"))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "joint 'j'", "child link 'ghost' does not exist")


def test_error_two_roots(tmp_path):
    xml = robot(link("base"), link("a"), link("stray"), joint("j", "base", "a"))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "<robot>", "'base'", "'stray'", "root=")
    with pytest.warns(URDFWarning, match=r"outside the tree below root 'base':\n {8}link 'stray'$"):
        assert parse_urdf(xml, floating_base=True, root="base").body_names == ("base", "a")


@pytest.mark.parametrize("read", [load_urdf, parse_urdf])
def test_floating_base_is_required(read, tmp_path):
    """A URDF does not say whether its base is fixed: without floating_base,
    a TypeError names it and says what to pass (before the file is read)."""
    for src in (CHAIN, tmp_path / "not_read.urdf"):
        with pytest.raises(TypeError) as info:
            read(src)
        msg = str(info.value)
        assert msg.startswith("floating_base: required")
        assert "floating_base=True for a free-flying or legged robot" in msg
        assert "floating_base=False for a robot fixed to the world" in msg
        assert "buildModelFromUrdf" in msg
    for bad in (None, 1, "False"):
        with pytest.raises(TypeError, match=r"^floating_base: expected True or False, got"):
            read(CHAIN, floating_base=bad)
    if read is load_urdf:
        assert not load_urdf(CHAIN, floating_base=False).floating_base


def test_error_unknown_root(tmp_path):
    for src, label in sources(CHAIN, tmp_path):
        _raises(src, label, "root='nope'", root="nope")
    _raises(CHAIN, "root", exc=TypeError, root=3)


def test_error_cycle(tmp_path):
    xml = robot(link("base"), link("a"), link("b"), link("c"),
                joint("j0", "base", "a"), joint("jb", "c", "b"), joint("jc", "b", "c"))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "cycle", "'jb'", "'jc'")


def test_error_link_with_two_parents(tmp_path):
    xml = robot(link("base"), link("a"), link("b"),
                joint("j1", "base", "a"), joint("j2", "base", "b"), joint("j3", "a", "b"))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "link 'b'", "two parent joints", "'j2'", "'j3'")


def test_error_planar_joint(tmp_path):
    xml = robot(link("base"), link("a"), joint("slide", "base", "a", jtype="planar", extra=""))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "joint 'slide'", "planar")


def test_error_floating_joint(tmp_path):
    xml = robot(link("world"), link("base"), joint("free", "world", "base", jtype="floating",
                                                   extra=""))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "joint 'free'", "floating", "root='base'")


def test_error_unknown_joint_type(tmp_path):
    xml = robot(link("base"), link("a"), joint("j", "base", "a", jtype="spherical"))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "joint 'j'", "'spherical'")


def test_error_missing_names(tmp_path):
    for xml, where in ((robot('<link/>'), "<link> number 1"),
                       (robot(link("a"), '<joint type="fixed"/>'), "<joint> number 1")):
        for src, label in sources(xml, tmp_path):
            _raises(src, label, where, "'name'")


def test_error_duplicate_names(tmp_path):
    for xml, where in ((robot(link("a"), link("a")), "link 'a'"),
                       (robot(link("a"), link("b"), link("c"), joint("j", "a", "b"),
                              joint("j", "a", "c")), "joint 'j'")):
        for src, label in sources(xml, tmp_path):
            _raises(src, label, where, "two")


def test_error_joint_without_parent_element(tmp_path):
    xml = robot(link("a"), link("b"), '<joint name="j" type="fixed"><child link="b"/></joint>')
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "joint 'j'", "missing <parent>")


def test_error_negative_mass(tmp_path):
    xml = robot(link("base"), link("a", inertial(m=-1.0)), joint("j", "base", "a"))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "link 'a'", "negative mass")


@pytest.mark.parametrize("field", ["m", "xyz", "rpy", "ixx", "iyz"])
def test_error_nan_in_link(tmp_path, field):
    value = {"xyz": "0 nan 0", "rpy": "0 0 inf"}.get(field, "nan")
    xml = robot(link("base"), link("a", inertial(**{field: value})), joint("j", "base", "a"))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "link 'a'", "finite")


def test_error_bad_numbers_in_joint(tmp_path):
    for origin in ('<origin xyz="0 nan 0"/>', '<origin xyz="1 2"/>', '<origin rpy="a b c"/>'):
        xml = robot(link("base"), link("a"), joint("j", "base", "a", origin=origin))
        for src, label in sources(xml, tmp_path):
            _raises(src, label, "joint 'j'", "<origin", "finite")


def test_error_missing_mass_or_inertia(tmp_path):
    for body, what in (('<inertial><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
                        '</inertial>', "missing <mass>"),
                       ('<inertial><mass value="1"/></inertial>', "missing <inertia>"),
                       ('<inertial><mass value="1"/><inertia ixx="1"/></inertial>', "'ixy'")):
        xml = robot(link("base", body))
        for src, label in sources(xml, tmp_path):
            _raises(src, label, "link 'base'", what)


def test_error_indefinite_inertia_of_moving_link(tmp_path):
    bad = inertial(ixx=1.0, iyy=1.0, izz=-0.5)
    xml = robot(link("base"), link("a", bad), joint("j", "base", "a"))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "link 'a'", "not positive semi-definite")
    # the root of a fixed base never moves: its rotational inertia is unused
    root_only = robot(link("base", bad), link("a"), joint("j", "base", "a"))
    assert quiet(root_only, floating_base=False).body_names == ("base", "a")
    _raises(root_only, "<string>", "link 'base'", floating_base=True)


def test_error_zero_axis(tmp_path):
    xml = robot(link("base"), link("a"), joint("j", "base", "a", extra='<axis xyz="0 0 0"/>'
                                                                    '<limit/>'))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "joint 'j'", "zero <axis")


def test_error_limits_reversed(tmp_path):
    xml = robot(link("base"), link("a"), joint("j", "base", "a", extra='<limit lower="1" '
                                                                    'upper="-1"/>'))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "joint 'j'", "lower 1.0 > upper -1.0")


def test_error_negative_damping(tmp_path):
    xml = robot(link("base"), link("a"),
                joint("j", "base", "a", extra='<limit/><dynamics damping="-0.1"/>'))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "joint 'j'", "negative <dynamics damping")


def test_error_floating_base_type():
    _raises(CHAIN, "floating_base", exc=TypeError, floating_base="yes")


# ---------------------------------------------------------------- warnings --

def test_silent_elements_do_not_warn():
    geometry = ('<visual><geometry><mesh filename="package://r/m.dae"/></geometry></visual>'
                '<collision><geometry><box size="1 1 1"/></geometry></collision>')
    xml = robot('<material name="grey"><color rgba="1 1 1 1"/></material>',
                link("base", inertial() + geometry), link("a", inertial() + geometry),
                joint("j", "base", "a", extra='<limit lower="0" upper="1" effort="1" velocity="1"/>'
                                              '<dynamics damping="0.1" friction="0"/>'),
                '<transmission name="t"><joint name="j"/></transmission>',
                '<gazebo reference="a"><mu1>0.5</mu1></gazebo>')
    d = quiet(xml)   # raises on any warning
    assert d.body_names == ("base", "a")


def test_one_warning_lists_everything_ignored():
    xml = robot(link("base"),
                '<link name="a" color="red">' + inertial() + '<contact><lateral_friction '
                'value="1"/></contact></link>',
                '<joint name="j" type="revolute" note="x"><parent link="base"/><child link="a"/>'
                '<limit lower="0" upper="1"/><dynamics damping="0.1" friction="0.3"/>'
                '<calibration rising="0.1"/><safety_controller k_velocity="1"/><spring k="1"/>'
                '</joint>',
                '<sensor name="imu"/>')
    with pytest.warns(URDFWarning) as record:
        parse_urdf(xml, floating_base=True)
    (msg,) = [str(w.message) for w in record if "ignored" in str(w.message)]
    assert msg.startswith("<string>: ignored")
    lines = msg.split("\n")
    for item, name in (("<calibration> in joint", "'j'"), ("<safety_controller> in joint", "'j'"),
                       ("<spring> in joint", "'j'"), ("attribute 'note' of <joint> in joint", "'j'"),
                       ("attribute 'color' of <link> in link", "'a'"), ("<contact> in link", "'a'")):
        k = lines.index(f"    {item}:")
        assert lines[k + 1] == f"        {name}", item
    assert "    <sensor> in <robot>" in lines


DAMPED = robot(link("base"), link("a"), link("b"),
               joint("ja", "base", "a", extra='<limit lower="0" upper="1"/>'
                                           '<dynamics damping="0.25" friction="0.5"/>'),
               joint("jb", "a", "b", extra='<limit lower="0" upper="1"/>'))


def test_damping_is_kept_with_a_warning_naming_the_joints():
    with pytest.warns(URDFWarning) as record:
        model = load_urdf(DAMPED, floating_base=True)
    (msg,) = [str(w.message) for w in record if "damping" in str(w.message)]
    assert "'ja' (b = 0.25)" in msg and "'jb'" not in msg
    assert "tau includes b q'" in msg and "damping='drop'" in msg
    assert list(model.joint_damping) == [0.25, 0.0]


@pytest.mark.parametrize("damping, b", [("keep", 0.25), ("drop", 0.0)])
def test_damping_keep_or_drop_is_silent(damping, b):
    with warnings.catch_warnings():
        warnings.simplefilter("error", URDFWarning)
        model = load_urdf(DAMPED, floating_base=True, damping=damping, friction="drop")
    assert list(model.joint_damping) == [b, 0.0]


def test_talos_without_damping_is_pinocchios_rnea():
    """Talos' URDF damps its joints. Kept, ``τ`` exceeds Pinocchio's ``rnea``
    (which leaves ``pinocchio.Model.damping`` out) by exactly ``b q̇``;
    dropped, it is ``rnea``'s ``τ`` to round-off."""
    from liedyn.interop.pinocchio import pair
    path = _robots_dir() / ROBOTS["talos"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        kept = load_urdf(path, floating_base=True, damping="keep")
        dropped = load_urdf(path, floating_base=True, damping="drop")
    assert np.any(kept.joint_damping > 0.0) and not np.any(dropped.joint_damping)
    pm = pinocchio_from_urdf(path, True)
    rng = np.random.default_rng(3)
    C0, V, q = se3.exp(rng.normal(size=6)), rng.normal(size=(2, 6)), rng.normal(size=(3, 32))
    W_pin, tau_pin = pair(dropped, pm).rnea(C0, V, q)
    assert kept.joint_names == tuple(pm.names[2:])
    assert np.array_equal(pm.damping[6:], kept.joint_damping)
    res = {m: liedyn.inverse_dynamics(m, C0, V, q, 0) for m in (kept, dropped)}
    scale = 1.0 + np.max(np.abs(tau_pin))
    assert np.max(np.abs(res[dropped].tau[0] - tau_pin)) <= 1e-11 * scale
    assert np.max(np.abs(res[kept].tau[0] - kept.joint_damping * q[1] - tau_pin)) <= 1e-11 * scale
    assert np.max(np.abs(res[dropped].base_wrench[0] - W_pin)) <= 1e-11 * (1 + np.max(abs(W_pin)))


def test_friction_is_not_modelled_and_says_so():
    with pytest.warns(URDFWarning) as record:
        load_urdf(DAMPED, floating_base=True, damping="keep")
    (msg,) = [str(w.message) for w in record]
    assert "Coulomb friction (<dynamics friction>) is not modelled" in msg and "'ja'" in msg
    with pytest.raises(URDFError, match=r"friction='error' refuses it.*'ja'"):
        load_urdf(DAMPED, floating_base=True, friction="error")
    quiet(robot(link("base"), link("a"), joint("j", "base", "a", extra="<limit/>")))


def _split(record):
    """The recorded URDF warnings as lists of lines, first lines checked: short,
    the file named once and by its base name (or ``<string>``)."""
    assert record and all(w.category is URDFWarning for w in record)
    out = [str(w.message).split("\n") for w in record]
    for lines in out:
        assert len(lines[0]) < 120, lines[0]
        assert sum(os.sep in line for line in lines) == 0, lines
    return out


def test_warnings_name_the_file_briefly_and_list_joints_one_per_line(tmp_path):
    """Several damped joints, one with friction, in a file deep in folders:
    each warning's first line is short and gives the file's base name, not
    its folder; each joint is a line of its own, with its damping."""
    limit = '<limit lower="0" upper="1"/>'
    xml = robot(link("base"), link("a"), link("b"), link("c"),
                joint("ja", "base", "a", extra=limit + '<dynamics damping="0.25" friction="0.5"/>'),
                joint("jb", "a", "b", extra=limit + '<dynamics damping="1.5"/>'),
                joint("jc", "b", "c", extra=limit + '<dynamics damping="3"/>'))
    folder = tmp_path / "workspace" / "src" / "arm_description" / "urdf"
    folder.mkdir(parents=True)
    (folder / "damped_arm.urdf").write_text(xml)
    for src, name in ((folder / "damped_arm.urdf", "damped_arm.urdf"), (xml, "<string>")):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            load_urdf(src, floating_base=False)
        friction, damping = sorted(_split(record), key=lambda lines: "damping" in lines[0])
        assert friction[0] == f"{name}: Coulomb friction (<dynamics friction>) is not " \
                              f"modelled: these joints load without it:"
        assert friction[1:] == ["    'ja'", "  friction='drop' accepts that silently, "
                                           "friction='error' refuses the file"]
        assert damping[0] == f"{name}: viscous joint damping (<dynamics damping>) is kept at " \
                             f"these joints:"
        assert damping[1:4] == ["    'ja' (b = 0.25)", "    'jb' (b = 1.5)", "    'jc' (b = 3)"]
        assert "tau includes b q'" in damping[4] and "damping='drop'" in damping[5]


def test_real_robot_warnings_name_the_file_briefly():
    """Talos: every warning starts with ``talos_reduced.urdf: `` on a short
    line; its 20 damped joints are 20 lines."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model = load_urdf(_robots_dir() / ROBOTS["talos"][0], floating_base=True)
    msgs = _split(record)
    assert all(lines[0].startswith("talos_reduced.urdf: ") for lines in msgs)
    (damping,) = [lines for lines in msgs if "damping" in lines[0]]
    damped = [f"    {nm!r} (b = {b:g})" for nm, b in zip(model.joint_names, model.joint_damping)
              if b > 0.0]
    assert len(damped) == 20 and damping[1:21] == damped


@pytest.mark.parametrize("arg, value", [("damping", "off"), ("damping", False),
                                        ("friction", "keep"), ("friction", 0.0)])
def test_damping_and_friction_refuse_unknown_values(arg, value):
    with pytest.raises(ValueError, match=rf"^{arg}: expected one of"):
        load_urdf(DAMPED, floating_base=True, **{arg: value})


def test_effort_and_velocity_limits_are_kept():
    xml = robot(link("base"), link("a"), link("b"), link("c"),
                joint("j1", "base", "a", extra='<limit lower="0" upper="1" effort="3" '
                                               'velocity="4"/>'),
                joint("j2", "a", "b", jtype="continuous", extra='<limit effort="5"/>'),
                joint("j3", "b", "c", jtype="continuous", extra=""))
    model = load_urdf(xml, floating_base=True)
    assert list(model.joint_max_effort) == [3.0, 5.0, math.inf]
    assert list(model.joint_max_velocity) == [4.0, math.inf, math.inf]


@pytest.mark.parametrize("attr", ["effort", "velocity"])
def test_error_negative_effort_or_velocity_limit(tmp_path, attr):
    xml = robot(link("base"), link("a"),
                joint("j", "base", "a", extra=f'<limit lower="0" upper="1" {attr}="-1"/>'))
    for src, label in sources(xml, tmp_path):
        _raises(src, label, "joint 'j'", f"negative <limit {attr}=-1.0>")


def test_warning_names_the_file(tmp_path):
    xml = robot(link("base"), link("a"),
                joint("j", "base", "a", extra='<limit/><calibration rising="0"/>'))
    path = tmp_path / "robot.urdf"
    path.write_text(xml)
    with pytest.warns(URDFWarning, match=r"^robot\.urdf: ignored") as record:
        parse_urdf(path, floating_base=True)
    assert str(tmp_path) not in str(record[0].message)


def test_warning_mimic():
    xml = robot(link("base"), link("a"), link("b"), joint("j1", "base", "a"),
                joint("j2", "base", "b", extra='<limit/><mimic joint="j1" multiplier="-1"/>'))
    with pytest.warns(URDFWarning, match=r"mimic joints loaded as independent joints:\n"
                                         r"    'j2' \(mimics 'j1'\)$"):
        d = parse_urdf(xml, floating_base=True)
    assert d.joint_names == ("j1", "j2") and d.joints[1].mimic.multiplier == -1.0


def test_a_fixed_joint_with_a_mimic_tag_is_merged_without_a_mimic_warning():
    """Talos' grippers carry <mimic> on fixed joints: those links merge, so
    nothing is loaded as an independent joint and nothing is said of it."""
    xml = robot(link("base"), link("a"), link("b"), joint("j1", "base", "a"),
                joint("j2", "a", "b", jtype="fixed", extra='<mimic joint="j1"/>'))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = parse_urdf(xml, floating_base=True)
    assert d.joint_names == ("j1",)


def test_warning_massless_moving_leaf():
    xml = robot(link("base"), link("a"), link("tip", ""), joint("j", "base", "a"),
                joint("jt", "a", "tip", jtype="prismatic"))
    with pytest.warns(URDFWarning, match=r"leaf bodies .*:\n    'tip' \(joint 'jt'\)$"):
        d = parse_urdf(xml, floating_base=True)
    assert np.all(d.bodies[2].inertia == 0.0)


def test_warning_point_mass_on_its_revolute_axis():
    """A leaf with mass but no inertia about its axis is just as singular."""
    xml = robot(link("base"), link("a", inertial(m=1.0, xyz="0 0 0.5", ixx=0, iyy=0, izz=0)),
                joint("j", "base", "a", extra='<axis xyz="0 0 1"/><limit/>'))
    with pytest.warns(URDFWarning, match=r"leaf bodies .*:\n    'a' \(joint 'j'\)$"):
        parse_urdf(xml, floating_base=True)


def test_warning_unrealizable_inertias():
    xml = robot(link("base"), link("a", inertial(ixx=0.1, iyy=0.1, izz=0.5)),
                link("b", inertial(m=0.0)), joint("ja", "base", "a"), joint("jb", "base", "b"))
    with pytest.warns(URDFWarning, match=r"no rigid body has") as record:
        parse_urdf(xml, floating_base=True)
    msg = str(record[0].message)
    assert "link 'a'" in msg and "J1 + J2 >= J3" in msg
    assert "link 'b': zero mass with a rotational inertia" in msg


def test_warning_indefinite_link_welded_to_a_definite_body():
    small = inertial(m=1e-6, ixx=-3e-8, iyy=4e-8, izz=9e-8)
    xml = robot(link("base"), link("antenna", small),
                joint("weld", "base", "antenna", jtype="fixed", extra=""))
    with pytest.warns(URDFWarning, match=r"link 'antenna': principal moments .* not positive\s+semi-definite "
                                         r"\(the body 'base' it is welded to is\)"):
        parse_urdf(xml, floating_base=True)
    lone = robot(link("base"), link("antenna", small), joint("j", "base", "antenna"))
    _raises(lone, "<string>", "link 'antenna'", "not positive semi-definite")


def test_warning_joint_without_limit():
    xml = robot(link("base"), link("a"), joint("j", "base", "a", extra=""))
    with pytest.warns(URDFWarning, match=r"without the <limit> URDF requires.*:\n    'j'$"):
        d = parse_urdf(xml, floating_base=True)
    assert (d.bodies[1].lower, d.bodies[1].upper) == (-math.inf, math.inf)


# ------------------------------------------------------------- load_urdf --

@pytest.mark.parametrize("floating", [True, False], ids=["floating", "fixed"])
@pytest.mark.parametrize("robot", list(ROBOTS))
def test_load_urdf_builds_the_described_model(robot, floating):
    path = _robots_dir() / ROBOTS[robot][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        desc = parse_urdf(path, floating_base=floating)
        model = load_urdf(path, floating_base=floating)
    assert isinstance(model, liedyn.Model) and model.floating_base == floating
    assert model.body_names == desc.body_names and model.joint_names == desc.joint_names
    assert model.frame_names == desc.body_names + tuple(f.name for f in desc.frames)
    assert list(model.body_parent) == [b.parent for b in desc.bodies]
    assert rel_err(model.body_inertia[1:], np.array([b.inertia for b in desc.bodies[1:]])) <= TOL
    assert rel_err(model.body_origin[1:], np.array([b.origin for b in desc.bodies[1:]])) <= TOL
    for f in desc.frames:
        k = model.frame_index(f.name)
        assert model.frame_body[k] == f.body and rel_err(model.frame_offset[k], f.offset) <= TOL
    for i, b in enumerate(desc.bodies[1:]):
        assert (model.joint_lower[i], model.joint_upper[i], model.joint_damping[i]) == \
            (b.lower, b.upper, b.damping)
        assert model.joint_index(b.joint) == i and model.joint_body[i] == i + 1
    assert np.array_equal(model.home_pose, np.eye(4))


def test_every_example_robot_data_urdf_loads_or_is_refused_with_a_reason():
    """All 69 URDF files shipped by example-robot-data, floating and fixed:
    each loads, or raises a URDFError naming the file and what is wrong (a
    file that is an empty <robot>; a moving link whose rotational inertia is
    not positive semi-definite)."""
    refused = {}
    files = sorted(_robots_dir().rglob("*.urdf"))
    assert len(files) >= 60
    for path in files:
        for floating in (True, False):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", URDFWarning)
                try:
                    model = load_urdf(path, floating_base=floating)
                except URDFError as err:
                    assert str(path) in str(err)
                    refused[(path.name, floating)] = str(err)
                    continue
            assert model.n_bodies >= 1
    assert set(refused) == {("ur3.urdf", True), ("ur3.urdf", False),
                            ("romeo_laas_small.urdf", True), ("romeo_laas_small.urdf", False)}
    assert "has no <link>" in refused[("ur3.urdf", True)]
    assert "not positive semi-definite" in refused[("romeo_laas_small.urdf", False)]
    assert "link '" in refused[("romeo_laas_small.urdf", False)]


def test_load_urdf_fixed_base_with_indefinite_rotational_inertia(tmp_path):
    """A fixed base never moves: its rotational inertia enters no result. It
    loads with its negative principal moment set to zero, with a warning, and
    the support reaction is that of the same base without rotational inertia."""
    bad = inertial(m=2.0, xyz="0.1 0 0", ixx=1.0, iyy=1.0, izz=-0.5)
    xml = robot(link("base", bad), link("a"), joint("j", "base", "a"))
    with pytest.warns(URDFWarning, match=r"fixed base whose rotational inertia .*:\n"
                                         r"    link 'base': principal moments .*\n"
                                         r"  .*negative moments set to zero"):
        model = load_urdf(xml, floating_base=False)
    assert model.body_mass[0] == 2.0 and rel_err(model.body_com[0], [0.1, 0, 0]) <= TOL
    assert rel_err(model.body_rot_inertia[0], np.diag([1.0, 1.0, 0.0])) <= TOL
    plain = load_urdf(robot(link("base", inertial(m=2.0, xyz="0.1 0 0", ixx=0, iyy=0, izz=0)),
                            link("a"), joint("j", "base", "a")), floating_base=False)
    q = np.random.default_rng(0).normal(size=(3, 1))
    for m in (model, plain):
        assert m.n_joints == 1
    assert rel_err(liedyn.inverse_dynamics(model, None, None, q, 0).base_wrench,
                   liedyn.inverse_dynamics(plain, None, None, q, 0).base_wrench) <= TOL
    with pytest.raises(URDFError, match="link 'base'"):
        load_urdf(xml, floating_base=True)


def test_load_urdf_builder_errors_name_file_and_link(tmp_path, monkeypatch):
    path = tmp_path / "robot.urdf"
    path.write_text(CHAIN)

    def refuse(self, name, *args, **kwargs):
        raise ValueError("inertia: refused for the test")

    monkeypatch.setattr(liedyn.ModelBuilder, "add_body", refuse)
    with pytest.raises(URDFError, match=rf"'{path}': link 'base': inertia: refused"):
        load_urdf(path, floating_base=True)


def test_load_urdf_repeats_builder_warnings_with_file_and_link():
    """A body whose merged inertia breaks the triangle inequality: the
    builder's RuntimeWarning comes back as a URDFWarning naming the link."""
    odd = inertial(ixx=0.1, iyy=0.1, izz=0.5)
    xml = robot(link("base"), link("a", odd), joint("j", "base", "a"))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        load_urdf(xml, floating_base=True)
    assert all(w.category is URDFWarning for w in record)
    msgs = [str(w.message) for w in record]
    assert any(m.startswith("<string>: inertia of link 'a':\n    principal moments") for m in msgs)
    assert len(msgs) == 1                   # not again in the description's notes


@pytest.mark.parametrize("case", ["one link", "zero mass", "welded"])
def test_load_urdf_warns_once_per_unrealizable_inertia(case):
    """One unrealizable link inertia, one warning: the builder's for a body of
    one link (the same inertia), the description's, naming the welded link,
    for a body with links welded to it."""
    if case == "welded":
        xml = robot(link("base"), link("x", inertial(ixx=0.1, iyy=0.1, izz=1.0)), link("a"),
                    joint("w", "base", "x", jtype="fixed", extra="",
                          origin='<origin xyz="0.3 0 0"/>'),
                    joint("j", "base", "a"))
        expected = r"^<string>: inertias that no rigid body has.*\n    link 'x': principal " \
                   r"moments \[0\.1 0\.1 1\. *\] violate J1 \+ J2 >= J3$"
    else:
        odd = inertial(ixx=0.1, iyy=0.1, izz=1.0) if case == "one link" else inertial(m=0.0)
        xml = robot(link("base"), link("a", odd), joint("j", "base", "a"))
        expected = (r"^<string>: inertia of link 'a':\n    principal moments \[0\.1 0\.1 1\. *\] "
                    r"break the triangle inequality" if case == "one link" else
                    r"^<string>: inertia of link 'a':\n    rotational inertia without mass")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        load_urdf(xml, floating_base=True)
    assert [w.category for w in record] == [URDFWarning]
    assert re.search(expected, str(record[0].message), re.S)


MESH = '<visual><geometry><mesh filename="package://r/meshes/part.stl"/></geometry></visual>'


def test_mesh_only_links_load_massless(tmp_path):
    """A link with geometry and no <inertial> is massless: between two joints
    and welded, silently; as a moving leaf with a warning naming it (forward
    dynamics is singular there and says so, naming the body)."""
    xml = robot(link("base"), link("hip", MESH), link("thigh"), link("cover", MESH),
                joint("hx", "base", "hip"),
                joint("hy", "hip", "thigh", extra='<axis xyz="0 1 0"/><limit lower="-1" upper="1"/>'),
                joint("weld", "thigh", "cover", jtype="fixed", extra=""))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = load_urdf(xml, floating_base=True)
    assert model.body_mass[model.body_index("hip")] == 0.0 and "cover" in model.frame_names
    q = np.random.default_rng(1).normal(size=(2, 2))
    fd = liedyn.forward_dynamics(model, None, np.zeros((1, 6)), q, 0, tau=np.zeros((1, 2)),
                                 base_wrench=np.zeros((1, 6)))
    assert np.all(np.isfinite(fd.q))
    leaf = robot(link("base"), link("arm"), link("tip", MESH), joint("j", "base", "arm"),
                 joint("jt", "arm", "tip"))
    path = tmp_path / "leaf.urdf"
    path.write_text(leaf)
    with pytest.warns(URDFWarning, match=r"^leaf\.urdf: leaf bodies.*:\n    'tip' \(joint 'jt'\)$"):
        model = load_urdf(path, floating_base=True)
    assert model.body_mass[2] == 0.0
    with pytest.raises(ValueError, match=r"joint of body 'tip'.*singular pivot"):
        liedyn.forward_dynamics(model, None, np.zeros((1, 6)), np.zeros((2, 2)), 0,
                                tau=np.zeros((1, 2)), base_wrench=np.zeros((1, 6)))


@pytest.mark.parametrize("case", ["missing", "url", "empty", "not-urdf", "parent", "two-roots",
                                  "cycle"])
def test_load_urdf_bad_input(case, tmp_path):
    """Each bad input: a clear error naming the file (or "<string>", or the
    argument) and the element."""
    xml = {
        "not-urdf": ('<sdf version="1.6"><model name="m"/></sdf>', ["<sdf>", "<robot>"]),
        "parent": (robot(link("base"), link("a"), joint("j", "ghost", "a")),
                   ["joint 'j'", "parent link 'ghost' does not exist"]),
        "two-roots": (robot(link("base"), link("a"), link("stray"), joint("j", "base", "a")),
                      ["<robot>", "'base'", "'stray'"]),
        "cycle": (robot(link("base"), link("a"), link("b"), link("c"), joint("j0", "base", "a"),
                        joint("jb", "c", "b"), joint("jc", "b", "c")), ["cycle", "'jb'", "'jc'"]),
    }
    if case == "missing":
        path = tmp_path / "gone.urdf"
        with pytest.raises(FileNotFoundError, match=rf"{path}.*no such file"):
            load_urdf(path, floating_base=True)
    elif case == "url":
        with pytest.raises(URDFError, match=r"'https://example.com/r.urdf': URLs are not fetched"):
            load_urdf("https://example.com/r.urdf", floating_base=True)
    elif case == "empty":
        with pytest.raises(URDFError, match=r"source: empty string"):
            load_urdf("", floating_base=True)
    else:
        text, fragments = xml[case]
        for src, label in sources(text, tmp_path):
            with pytest.raises(URDFError) as info:
                load_urdf(src, floating_base=True)
            for frag in [label] + fragments:
                assert frag in str(info.value), (frag, str(info.value))
