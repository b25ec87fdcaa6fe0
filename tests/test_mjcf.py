"""load_mjcf and liedyn.interop.mujoco on small MJCF texts, MuJoCo's own
kinematics (``mj_kinematics``, ``mj_differentiatePos``) as the reference."""

import textwrap
import warnings
from math import comb

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import liedyn                                                    # noqa: E402
from liedyn.interop.mujoco import mujoco_map                    # noqa: E402
from liedyn.parsers.mjcf import MJCFError, MJCFWarning, load_mjcf   # noqa: E402
from tests.helpers import run_python                            # noqa: E402

# A free torso with a two-hinge hip (one with ref), a slide, a welded body,
# sites (one named like a body), an explicit full inertia and geoms.
ROBOT = """
<mujoco>
  <compiler angle="radian"/>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body name="torso" pos="0.1 0.2 1.0" quat="0.9 0.1 0.3 -0.2">
      <freejoint name="root"/>
      <inertial pos="0.01 -0.02 0.03" mass="5" fullinertia="0.3 0.4 0.5 0.01 -0.02 0.03"/>
      <site name="torso" pos="0 0 0.1"/>
      <body name="thigh" pos="0.2 0 -0.1" euler="0.1 0.2 0.3">
        <joint name="hip_x" type="hinge" axis="1 0 0" pos="0 0.05 0" ref="0.3"
               damping="0.5" armature="0.01" range="-1 1"/>
        <joint name="hip_y" type="hinge" axis="0 1 1" pos="0.02 0 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.05"/>
        <body name="shin" pos="0 0 -0.4">
          <joint name="knee" type="slide" axis="0 0 1" ref="-0.05"/>
          <geom type="box" size="0.03 0.04 0.2" pos="0 0 -0.2"/>
          <site name="toe" pos="0.01 0.02 -0.4" euler="0.5 0 0"/>
          <body name="foot" pos="0 0.1 -0.4" quat="0 1 0 0">
            <geom type="sphere" size="0.05" mass="0.7" pos="0.02 0 0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _load(xml, **kw):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model = load_mjcf(textwrap.dedent(xml), **kw)
    return model, [w for w in record if issubclass(w.category, MJCFWarning)]


def _mj(xml):
    return mujoco.MjModel.from_xml_string(textwrap.dedent(xml))


def test_structure_names_and_coordinates():
    model, _ = _load(ROBOT)
    assert model.floating_base
    assert model.body_names == ("torso", "thigh/hip_x", "thigh", "shin")
    assert model.joint_names == ("hip_x", "hip_y", "knee")
    # the welded foot and the sites are frames; the clashing site is renamed
    assert {"foot", "site/torso", "toe"} <= set(model.frame_names)
    mj = _mj(ROBOT)
    # home pose: the free body's XML pose; limits shifted by qpos0 (ref)
    assert np.allclose(model.home_pose[:3, 3], [0.1, 0.2, 1.0])
    assert np.allclose([model.joint_lower[0], model.joint_upper[0]], [-1.3, 0.7])
    assert model.joint_damping[0] == 0.5 and model.joint_armature[0] == 0.01
    assert mj.nq == 10


def test_poses_match_mj_kinematics():
    """Body, welded-body and site poses at random ``qpos`` equal MuJoCo's,
    with ``q = qpos − qpos0``."""
    model, _ = _load(ROBOT)
    mj = _mj(ROBOT)
    d = mujoco.MjData(mj)
    bridge = mujoco_map(model, mj)
    rng = np.random.default_rng(3)
    for _ in range(3):
        d.qpos[:] = mj.qpos0 + rng.normal(scale=0.5, size=mj.nq)
        d.qpos[3:7] /= np.linalg.norm(d.qpos[3:7])
        mujoco.mj_kinematics(mj, d)
        C0, q = bridge.config_from_mujoco(d.qpos)
        assert np.allclose(q, d.qpos[[7, 8, 9]] - mj.qpos0[[7, 8, 9]])
        for name in ("torso", "thigh", "shin", "foot"):
            X = liedyn.frame_pose(model, C0, q, name)
            b = mj.body(name).id
            assert np.allclose(X[:3, 3], d.xpos[b], atol=1e-14)
            assert np.allclose(X[:3, :3], d.xmat[b].reshape(3, 3), atol=1e-14)
        for frame, site in (("site/torso", "torso"), ("toe", "toe")):
            X = liedyn.frame_pose(model, C0, q, frame)
            s = mj.site(site).id
            assert np.allclose(X[:3, 3], d.site_xpos[s], atol=1e-14)
            assert np.allclose(X[:3, :3], d.site_xmat[s].reshape(3, 3), atol=1e-14)


def test_inertias_as_written_and_merged():
    model, _ = _load(ROBOT)
    # fullinertia as written (MuJoCo stores it diagonalised in body_iquat)
    J = np.array([[0.3, 0.01, -0.02], [0.01, 0.4, 0.03], [-0.02, 0.03, 0.5]])
    assert np.allclose(model.body_rot_inertia[0], J, atol=1e-12)
    assert np.isclose(model.body_mass[0], 5.0)
    assert np.allclose(model.body_com[0], [0.01, -0.02, 0.03], atol=1e-12)
    # the welded foot's sphere is in the shin's mass; total = MuJoCo's
    mj = _mj(ROBOT)
    assert np.isclose(model.body_mass.sum(), mj.body_mass.sum(), rtol=1e-14)
    assert np.isclose(model.body_mass[3], mj.body_mass[mj.body("shin").id] + 0.7)
    assert model.body_mass[1] == 0.0                    # the chain's massless link


def test_gravity_flag_and_option():
    xml = ROBOT.replace('<option gravity="0 0 -9.81"/>',
                        '<option gravity="0 0 -9.81"><flag gravity="disable"/></option>')
    assert np.array_equal(_load(xml)[0].gravity, np.zeros(3))
    xml = ROBOT.replace('gravity="0 0 -9.81"', 'gravity="1 2 -3"')
    assert np.array_equal(_load(xml)[0].gravity, [1.0, 2.0, -3.0])
    assert _load(ROBOT, damping="drop")[0].joint_damping[0] == 0.0


def test_fixed_base_and_trees():
    xml = """
    <mujoco><worldbody>
      <body name="arm" pos="0 0 1"><joint name="j1" axis="0 0 1"/>
        <geom size="0.1" mass="1"/></body>
      <body name="ball" pos="1 0 0"><freejoint/><geom size="0.1"/></body>
      <body name="post" pos="2 0 0"><geom size="0.1" mass="3"/><site name="tip"/></body>
    </worldbody></mujoco>"""
    model, notes = _load(xml)
    assert not model.floating_base and model.body_names == ("world", "arm")
    assert "post" in model.frame_names and "tip" in model.frame_names
    text = "\n".join(str(w.message) for w in notes)
    assert "trees left out" in text and "'ball' (free, 6 dofs)" in text
    alone, _ = _load(xml, root="ball")
    assert alone.floating_base and alone.body_names == ("ball",)
    with pytest.raises(MJCFError, match="root 'nope' is not a child of <worldbody>"):
        _load(xml, root="nope")


def test_free_trees_tie_needs_root():
    xml = """
    <mujoco><worldbody>
      <body name="a"><freejoint/><geom size="0.1"/></body>
      <body name="b" pos="1 0 0"><freejoint/><geom size="0.1"/></body>
    </worldbody></mujoco>"""
    with pytest.raises(MJCFError, match="pass root="):
        _load(xml)
    assert _load(xml, root="b")[0].body_names == ("b",)


def test_refused_joints():
    ball = """
    <mujoco><worldbody><body name="a"><joint name="sph" type="ball"/><geom size="0.1"/>
    </body></worldbody></mujoco>"""
    with pytest.raises(MJCFError, match="ball joints are not supported.*'sph'"):
        _load(ball)
    offset = """
    <mujoco><worldbody><body name="a"><joint name="fr" type="free" pos="0.1 0 0"/>
    <geom size="0.1"/></body></worldbody></mujoco>"""
    model, _ = _load(offset)                 # MuJoCo sets a free joint's pos to zero
    assert model.floating_base and np.array_equal(model.home_pose, np.eye(4))
    with pytest.raises(MJCFError, match="MuJoCo does not compile it"):
        _load("<mujoco><worldbody><body><joint type='nonsense'/></body></worldbody></mujoco>")


def test_warnings_name_elements():
    xml = """
    <mujoco><worldbody>
      <body name="a"><joint name="j1" axis="0 0 1" stiffness="3" frictionloss="0.2"/>
        <geom size="0.1"/>
        <body name="b" pos="0 0 -1"><joint name="j2"/><geom size="0.1" contype="0"
          conaffinity="0"/></body></body>
    </worldbody>
    <tendon><fixed name="tnd"><joint joint="j1" coef="1"/></fixed></tendon>
    <equality><joint name="eq" joint1="j1" joint2="j2"/></equality>
    <actuator><motor name="act" joint="j1" gear="2"/></actuator>
    </mujoco>"""
    _, notes = _load(xml)
    text = "\n".join(str(w.message) for w in notes)
    for bit in ("'j1' (stiffness 3)", "'j1' (frictionloss 0.2)", "tendons are not modelled",
                "'tnd'", "'eq'", "'act'", "geoms that can collide"):
        assert bit in text, bit
    assert all(str(w.message).startswith("<string>: ") for w in notes)


def test_argument_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_mjcf(tmp_path / "missing.xml")
    with pytest.raises(TypeError, match="source"):
        load_mjcf(3)
    with pytest.raises(ValueError, match="damping"):
        load_mjcf(ROBOT, damping="yes")
    path = tmp_path / "robot.xml"
    path.write_text(ROBOT)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model = load_mjcf(path)
    assert model.n_joints == 3
    assert any(str(w.message).startswith("robot.xml: ") for w in record)


def test_missing_mujoco_names_the_extra():
    out = run_python("""
        import sys
        sys.modules["mujoco"] = None
        import liedyn
        try:
            liedyn.load_mjcf("<mujoco/>")
        except ImportError as err:
            print(err)
    """)
    assert "liedyn[mujoco]" in out


# ------------------------------------------------------------ interop --

def _motion(model, rng, rows):
    C0 = liedyn.se3.exp(rng.normal(size=6))
    return C0, rng.normal(size=(rows - 1, 6)), rng.normal(size=(rows, model.n_joints))


def test_motion_round_trip_and_qvel_convention():
    model, _ = _load(ROBOT)
    mj = _mj(ROBOT)
    bridge = mujoco_map(model, mj)
    rng = np.random.default_rng(5)
    C0, V, q = _motion(model, rng, 4)
    qpos, qvel = bridge.motion_to_mujoco(C0, V, q)
    assert qvel.shape == (3, mj.nv)
    C0b, Vb, qb = bridge.motion_from_mujoco(qpos, qvel)
    assert np.allclose(C0b, C0, atol=1e-15) and np.allclose(Vb, V[:3], atol=1e-13)
    assert np.allclose(qb, q, atol=1e-15)
    # row 0 is T ν
    assert np.allclose(qvel[0], bridge.velocity_map(C0) @ np.concatenate([V[0], q[1]]))
    # MuJoCo's own finite difference of positions gives qvel: C(t) = exp(t[V]) C0
    dt = 1e-6
    plus = bridge.config_to_mujoco(liedyn.se3.exp(dt * V[0]) @ C0, q[0] + dt * q[1])
    minus = bridge.config_to_mujoco(liedyn.se3.exp(-dt * V[0]) @ C0, q[0] - dt * q[1])
    fd = np.zeros(mj.nv)
    mujoco.mj_differentiatePos(mj, fd, 2 * dt, minus, plus)
    assert np.allclose(fd, qvel[0], rtol=1e-8, atol=1e-8)


def test_force_round_trip_and_power():
    model, _ = _load(ROBOT)
    mj = _mj(ROBOT)
    bridge = mujoco_map(model, mj)
    rng = np.random.default_rng(6)
    C0, V, q = _motion(model, rng, 5)
    W = rng.normal(size=(4, 6))
    tau = rng.normal(size=(4, model.n_joints))
    qfrc = bridge.force_to_mujoco(C0, V, W, tau)
    qpos, qvel = bridge.motion_to_mujoco(C0, V, q)
    Wb, taub = bridge.force_from_mujoco(qpos, qvel, qfrc)
    assert np.allclose(Wb, W, atol=1e-12) and np.allclose(taub, tau)
    # power, and its derivatives, are the same in both conventions
    assert np.isclose(qfrc[0] @ qvel[0], W[0] @ V[0] + tau[0] @ q[1], rtol=1e-12)
    for k in range(1, 3):
        lie = sum(comb(k, a) * (W[a] @ V[k - a] + tau[a] @ q[k - a + 1]) for a in range(k + 1))
        mjp = sum(comb(k, a) * (qfrc[a] @ qvel[k - a]) for a in range(k + 1))
        assert np.isclose(lie, mjp, rtol=1e-12), k


def test_fixed_base_map_refuses_a_moved_base():
    xml = """<mujoco><worldbody><body name="a"><joint name="j"/><geom size="0.1"/>
    </body></worldbody></mujoco>"""
    model, _ = _load(xml)
    bridge = mujoco_map(model, _mj(xml))
    with pytest.raises(ValueError, match="base_pose: a fixed base"):
        bridge.config_to_mujoco(liedyn.se3.exp(np.ones(6)), np.zeros(1))
    qpos, qvel = bridge.motion_to_mujoco(None, None, np.array([[0.2], [0.3]]))
    assert np.allclose(qpos, [0.2]) and np.allclose(qvel, [[0.3]])
    with pytest.raises(ValueError, match="no hinge or slide"):
        mujoco_map(_load(ROBOT)[0], _mj(xml))


def test_unnamed_elements_get_kind_and_id():
    xml = """
    <mujoco><worldbody>
      <body pos="0 0 1"><joint axis="0 1 0"/><geom size="0.1"/><site pos="0 0 0.1"/>
        <body pos="0 0 -0.5"><joint type="slide"/><geom size="0.1"/></body>
      </body>
    </worldbody></mujoco>"""
    model, _ = _load(xml)
    assert model.body_names == ("world", "body1", "body2")
    assert model.joint_names == ("joint0", "joint1")
    assert "site0" in model.frame_names
    bridge = mujoco_map(model, _mj(xml))
    assert bridge.sites == ((0, "site0"),)
    assert list(bridge.dof_adr) == [0, 1]
