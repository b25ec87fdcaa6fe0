"""The viewer's geometry, kinematics and page (liedyn.viewer), without a browser
(tests/test_viewer_browser.py draws the page in one): mesh readers against
hand-written files of known shape, primitives against their closed-form
volumes, the mesh-path rules, body poses against the compiled kinematics,
and every bad input."""

import json
import math
import os
import re
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

import liedyn as ld
from liedyn import viewer
from liedyn.viewer import meshes
from liedyn.viewer.visuals import resolve_mesh_path
from models.example_robots import robots_dir

# A unit cube's 12 triangles, outward, as corner triples.
_CUBE_QUADS = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4),
               (1, 5, 7, 3)]
_CUBE_V = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
_CUBE_F = [[a, b, c] for a, b, c, d in _CUBE_QUADS] + [[a, c, d] for a, b, c, d in _CUBE_QUADS]


def _volume(part):
    """Signed volume by the divergence theorem, ``Σ (a · (b × c)) / 6``."""
    a, b, c = (part.vertices[part.triangles[:, i]] for i in range(3))
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def _one(parts):
    assert len(parts) == 1
    return parts[0]


def test_binary_and_ascii_stl_read_the_cube(tmp_path):
    corners = _CUBE_V[np.array(_CUBE_F)]
    binary = tmp_path / "cube.stl"
    with open(binary, "wb") as fh:
        fh.write(b"\0" * 80 + struct.pack("<I", 12))
        for tri in corners:
            fh.write(struct.pack("<12fH", 0, 0, 0, *tri.ravel(), 0))
    ascii_ = tmp_path / "cube_ascii.STL"
    ascii_.write_text("solid cube\n" + "".join(
        "facet normal 0 0 0\n outer loop\n" + "".join(f"  vertex {x} {y} {z}\n" for x, y, z in t)
        + " endloop\nendfacet\n" for t in corners) + "endsolid cube\n")
    for path in (binary, ascii_):
        part = _one(meshes.read_mesh(path))
        assert len(part.vertices) == 8 and len(part.triangles) == 12   # corners welded
        assert part.color is None
        assert _volume(part) == pytest.approx(1.0, abs=1e-12)


def test_obj_polygons_and_negative_indices(tmp_path):
    lines = [f"v {x} {y} {z}" for x, y, z in 2.0 * _CUBE_V]
    lines += ["f " + " ".join(f"{i + 1}/{i + 1}/1" for i in q) for q in _CUBE_QUADS[:3]]
    lines += ["f " + " ".join(str(i - 8) for i in q) for q in _CUBE_QUADS[3:]]  # negative
    path = tmp_path / "cube.obj"
    path.write_text("# cube\n" + "\n".join(lines) + "\n")
    part = _one(meshes.read_mesh(path))
    assert len(part.triangles) == 12
    assert _volume(part) == pytest.approx(8.0, abs=1e-12)


_DAE = """<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
 <asset><unit meter="{unit}"/><up_axis>{up}</up_axis></asset>
 <library_effects><effect id="red-fx"><profile_COMMON><technique sid="c"><lambert>
  <diffuse><color>0.8 0.1 0.1 1</color></diffuse></lambert></technique></profile_COMMON></effect>
 </library_effects>
 <library_materials><material id="red"><instance_effect url="#red-fx"/></material></library_materials>
 <library_geometries><geometry id="g"><mesh>
  <source id="pos"><float_array id="pa" count="24">{verts}</float_array>
   <technique_common><accessor source="#pa" count="8" stride="3"/></technique_common></source>
  <vertices id="vv"><input semantic="POSITION" source="#pos"/></vertices>
  <triangles count="6" material="m1"><input semantic="VERTEX" source="#vv" offset="0"/>
   <input semantic="NORMAL" source="#pos" offset="1"/><p>{p1}</p></triangles>
  <polylist count="3"><input semantic="VERTEX" source="#vv" offset="0"/><vcount>4 4 4</vcount>
   <p>{p2}</p></polylist>
 </mesh></geometry></library_geometries>
 <library_visual_scenes><visual_scene id="s"><node id="n"><translate>1 2 3</translate>
  <scale>2 2 2</scale>
  <instance_geometry url="#g"><bind_material><technique_common>
   <instance_material symbol="m1" target="#red"/></technique_common></bind_material>
  </instance_geometry></node></visual_scene></library_visual_scenes>
</COLLADA>"""


@pytest.mark.parametrize("up", ["Z_UP", "Y_UP"])
def test_collada_scene_units_up_axis_and_materials(tmp_path, up):
    """The cube's six faces split over a <triangles> (with a second input,
    so indices interleave) and a <polylist>, placed by a node (translate 1 2
    3, scale 2) in centimetres: a cube of side 2 cm at (1, 2, 3) cm whatever
    <up_axis> says (meshes of robot descriptions are in link coordinates:
    Borinot's say Y_UP and meet its joints unrotated); the triangles red."""
    tris = [_CUBE_F[i] for i in (0, 1, 2, 6, 7, 8)]
    p1 = " ".join(f"{i} {i}" for t in tris for i in t)
    p2 = " ".join(str(i) for q in _CUBE_QUADS[3:] for i in q)
    path = tmp_path / "cube.dae"
    path.write_text(_DAE.format(unit=0.01, up=up, verts=" ".join(map(str, _CUBE_V.ravel())),
                                p1=p1, p2=p2))
    parts = meshes.read_mesh(path)
    assert len(parts) == 2
    np.testing.assert_allclose(parts[0].color, [0.8, 0.1, 0.1, 1.0])
    assert parts[1].color is None
    vol = sum(_volume(p) for p in parts)                 # the two parts close the cube
    assert vol == pytest.approx(8e-6, rel=1e-12)
    expected = 0.01 * (np.array([1, 2, 3]) + 2.0 * _CUBE_V)
    got = np.unique(np.concatenate([p.vertices for p in parts]).round(12), axis=0)
    np.testing.assert_allclose(got, np.unique(expected.round(12), axis=0), atol=1e-15)


@pytest.mark.parametrize("shape, volume, rtol", [
    (meshes.box((0.3, 0.5, 0.7)), 0.3 * 0.5 * 0.7, 1e-12),
    # inscribed polyhedra: below the solid by the sagitta of 32 or 24
    # sides, about 2π²/n² of the volume (cylinder) and 3 times that (sphere)
    (meshes.cylinder(0.2, 0.6, 32), math.pi * 0.2 ** 2 * 0.6, 0.02),
    (meshes.sphere(0.4, 24), 4 / 3 * math.pi * 0.4 ** 3, 0.08),
    (meshes.capsule(0.1, 0.5, 24), math.pi * 0.1 ** 2 * 0.5 + 4 / 3 * math.pi * 0.1 ** 3, 0.08),
])
def test_primitives_enclose_their_volume(shape, volume, rtol):
    v = abs(_volume(shape))
    assert v <= volume * (1 + 1e-12)                   # inscribed
    assert v == pytest.approx(volume, rel=rtol)


def test_bad_mesh_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such mesh file"):
        meshes.read_mesh(tmp_path / "missing.stl")
    (tmp_path / "a.ply").write_text("ply")
    with pytest.raises(meshes.MeshError, match="unknown mesh format '.ply'"):
        meshes.read_mesh(tmp_path / "a.ply")
    (tmp_path / "b.stl").write_bytes(b"\x01" * 100)
    with pytest.raises(meshes.MeshError, match="neither a binary STL"):
        meshes.read_mesh(tmp_path / "b.stl")
    (tmp_path / "c.dae").write_text("<COLLADA><unclosed></COLLADA>")
    with pytest.raises(meshes.MeshError, match="malformed XML"):
        meshes.read_mesh(tmp_path / "c.dae")
    (tmp_path / "d.obj").write_text("v 0 0 0\nf 1 2 3\n")
    with pytest.raises(meshes.MeshError, match="triangle indices outside"):
        meshes.read_mesh(tmp_path / "d.obj")


# ----------------------------------------------------------------- mesh paths --

@pytest.fixture
def package(tmp_path):
    """``<tmp>/share/pkg/{urdf/r.urdf, meshes/m.stl}``, a secret beside the
    package and a link inside it pointing at the secret."""
    pkg = tmp_path / "share" / "pkg"
    (pkg / "urdf").mkdir(parents=True)
    (pkg / "meshes").mkdir()
    (pkg / "meshes" / "m.stl").write_text("solid x\nendsolid x\n")
    (tmp_path / "share" / "secret.stl").write_text("solid s\nendsolid s\n")
    os.symlink(tmp_path / "share" / "secret.stl", pkg / "meshes" / "link.stl")
    return pkg


def test_mesh_paths_stay_in_their_folder(package):
    udir = str(package / "urdf")
    good = os.path.realpath(package / "meshes" / "m.stl")
    assert resolve_mesh_path("package://pkg/meshes/m.stl", udir) == good
    assert resolve_mesh_path("../meshes/m.stl", udir, mesh_root=package) == good
    assert resolve_mesh_path("package://other/m.stl", udir,
                             package_dirs={"other": package / "meshes"}) == good
    for uri, kw, what in [
            ("package://pkg/../secret.stl", {}, "leads outside"),
            ("package://pkg/meshes/link.stl", {}, "leads outside"),        # a link out
            ("../meshes/m.stl", {}, "leads outside"),                      # above the URDF
            ("http://example.org/m.stl", {}, "nothing is fetched"),
            ("https://example.org/m.stl", {}, "nothing is fetched"),
            (good, {}, "absolute path is read only inside mesh_root"),
            ("file://" + good, {}, "file:// path is read only inside mesh_root"),
            ("package://nowhere/m.stl", {}, "package 'nowhere' has no folder"),
            ("package://pkg", {}, "expected package://<package>/<path>")]:
        with pytest.raises(ValueError, match=re.escape(what)):
            resolve_mesh_path(uri, udir, **kw)
    with pytest.raises(FileNotFoundError, match="no such file"):
        resolve_mesh_path("package://pkg/meshes/none.stl", udir)


_URDF = """<robot name="r">
 <material name="blue"><color rgba="0 0 1 1"/></material>
 <link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1"
   ixy="0" ixz="0" iyz="0"/></inertial>
  <visual><origin xyz="0 0 0.1"/><geometry><box size="0.2 0.3 0.4"/></geometry>
   <material name="blue"/></visual>
  <visual><geometry><mesh filename="{mesh}" scale="2 2 2"/></geometry></visual></link>
 <link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1"
   ixy="0" ixz="0" iyz="0"/></inertial>
  <visual><geometry><cylinder radius="0.05" length="0.5"/></geometry>
   <material name="red"><color rgba="1 0 0 1"/></material></visual></link>
 <link name="tip"><visual><origin xyz="0 0 0.3"/><geometry><sphere radius="0.02"/></geometry>
  </visual></link>
 <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
  <origin xyz="0 0 0.5"/><axis xyz="0 1 0"/><limit lower="-1" upper="1"/></joint>
 <joint name="w" type="fixed"><parent link="arm"/><child link="tip"/><origin xyz="0 0 0.2"/></joint>
</robot>"""


def _urdf(tmp, mesh="package://pkg/meshes/cube.stl"):
    pkg = tmp / "pkg"
    (pkg / "meshes").mkdir(parents=True, exist_ok=True)
    corners = _CUBE_V[np.array(_CUBE_F)]
    with open(pkg / "meshes" / "cube.stl", "wb") as fh:
        fh.write(b"\0" * 80 + struct.pack("<I", 12))
        for tri in corners:
            fh.write(struct.pack("<12fH", 0, 0, 0, *tri.ravel(), 0))
    path = pkg / "r.urdf"
    path.write_text(_URDF.format(mesh=mesh))
    return path


def test_urdf_visuals_on_bodies_and_welded_links(tmp_path):
    path = _urdf(tmp_path)
    model = ld.load_urdf(path, floating_base=True)
    vis = viewer.urdf_visuals(model, path)
    assert [v.name for v in vis] == ["base/visual0", "base/visual1", "arm/visual0", "tip/visual0"]
    box, cube, cyl, ball = vis
    np.testing.assert_allclose(box.parts[0].color, [0, 0, 1, 1])
    np.testing.assert_allclose(cyl.parts[0].color, [1, 0, 0, 1])
    assert box.offset[2, 3] == 0.1
    assert _volume(cube.parts[0]) == pytest.approx(8.0)                    # scale 2
    assert model.frame_names[ball.frame] == "tip"                         # a welded link
    # the sphere's centre in the world at q = 0.3 by hand: arm at z = 0.5
    # turned about y, the tip 0.2 then 0.3 up its z axis
    a = viewer.animation(model, time=[0.0], base_pose=np.eye(4)[None], q=[[0.3]], visuals=vis)
    c = (a.frame_pose(ball.frame)[0] @ ball.offset)[:3, 3]
    np.testing.assert_allclose(c, [0.5 * math.sin(0.3), 0, 0.5 + 0.5 * math.cos(0.3)],
                               atol=1e-15)


def test_urdf_visuals_refuse_bad_paths_and_other_models(tmp_path):
    model = ld.load_urdf(_urdf(tmp_path), floating_base=True)
    with pytest.raises(ValueError, match="link 'base' <visual> 1: 'http://x/y.stl'.*fetched"):
        viewer.urdf_visuals(model, _urdf(tmp_path, "http://x/y.stl"))
    with pytest.raises(FileNotFoundError, match="link 'base' <visual> 1: mesh .*no such file"):
        viewer.urdf_visuals(model, _urdf(tmp_path, "package://pkg/meshes/gone.stl"))
    with pytest.raises(ValueError, match="leads outside"):
        viewer.urdf_visuals(model, _urdf(tmp_path, "../../etc/passwd.stl"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solo = ld.load_urdf(robots_dir() / "solo_description/robots/solo12.urdf",
                            floating_base=True)
    with pytest.raises(ValueError, match="model: bodies .* are not links of"):
        viewer.urdf_visuals(solo, _urdf(tmp_path))


def test_mjcf_visuals_from_geoms():
    xml = """<mujoco><worldbody><geom type="plane" size="1 1 1"/>
      <body name="torso" pos="0 0 1"><freejoint/>
        <geom type="box" size="0.1 0.2 0.3" pos="0 0 0.05" rgba="1 0 0 1"/>
        <geom type="sphere" size="0.05" group="3"/>
        <body name="leg" pos="0 0 -0.3"><joint type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04"/></body>
      </body></worldbody></mujoco>"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ld.load_mjcf(xml)
    vis = viewer.mjcf_visuals(model, xml)
    assert [model.frame_names[v.frame] for v in vis] == ["torso", "leg"]   # no plane, group 3
    box, cap = vis
    np.testing.assert_allclose(box.offset[:3, 3], [0, 0, 0.05], atol=1e-12)
    np.testing.assert_allclose(box.parts[0].color, [1, 0, 0, 1])
    assert abs(_volume(box.parts[0])) == pytest.approx(0.2 * 0.4 * 0.6)
    np.testing.assert_allclose(cap.offset[:3, 3], [0, 0, -0.2], atol=1e-12)   # centre of fromto


def test_primitive_visual_and_its_bad_input():
    from liedyn.examples import aerial_manipulator
    model = aerial_manipulator()
    v = viewer.primitive_visual(model, 0, "cylinder", (0.1, 0.02), color=(1, 0, 0))
    np.testing.assert_allclose(v.parts[0].color, [1, 0, 0, 1])
    for kw, what in [(dict(kind="cone", size=1), "kind: expected one of"),
                     (dict(kind="box", size=(1, 2)), "size: a box takes 3 positive"),
                     (dict(kind="sphere", size=-1), "size: a sphere takes 1 positive"),
                     (dict(kind="box", size=(1, 1, 1), color=(2, 0, 0)), "color: expected"),
                     (dict(kind="box", size=(1, 1, 1), offset=np.eye(3)), "offset: expected")]:
        with pytest.raises(ValueError, match=what):
            viewer.primitive_visual(model, 0, **kw)
    with pytest.raises(ValueError, match="frame: expected a frame name or an index"):
        viewer.primitive_visual(model, 99, "sphere", 1.0)


# ----------------------------------------------------------------- kinematics --

@pytest.mark.parametrize("robot", ["solo12", "go2"])
def test_body_poses_match_the_compiled_kinematics(robot):
    """The viewer's NumPy composition against liedyn.forward_kinematics and
    frame_pose (the compiled product of exponentials in the base frame) at
    random states: agreement to round-off (1e-12 m on metre-sized robots)."""
    from models.quadruped_drops import ROBOTS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ROBOTS[robot]()[0]
    rng = np.random.default_rng(11)
    T = 4
    q = rng.uniform(-2, 2, (T, model.n_joints))
    C0 = np.stack([ld.se3.exp(rng.normal(size=6)) for _ in range(T)])
    C = viewer.body_poses(model, C0, q)
    for k in range(T):
        fk = ld.forward_kinematics(model, C0[k], np.zeros((1, 6)), q[k][None].repeat(2, 0), 0)
        np.testing.assert_allclose(C[k], fk.body_pose, atol=1e-12)
        f = model.n_frames - 1
        np.testing.assert_allclose(C[k, model.frame_body[f]] @ model.frame_offset[f],
                                   ld.frame_pose(model, C0[k], q[k], f), atol=1e-12)


# --------------------------------------------------------------- bad motions --

def test_animation_refuses_bad_motions(tmp_path):
    model = ld.load_urdf(_urdf(tmp_path), floating_base=True)
    t, C, q = np.linspace(0, 1, 5), np.tile(np.eye(4), (5, 1, 1)), np.zeros((5, 1))
    cases = [
        (dict(time=t, base_pose=C, q=np.zeros((5, 3))), ValueError,
         r"q: expected shape \(5, 1\) \(T, n\) = \(5, 1\) or jets \(T, k, 1\)"),
        (dict(time=t, base_pose=C, q=np.zeros((4, 1))), ValueError, r"q: expected shape \(5, 1\)"),
        (dict(time=t, base_pose=C[:3], q=q), ValueError, r"base_pose: expected shape \(5, 4, 4\)"),
        (dict(time=t, q=q), ValueError, "base_pose: required for a floating-base model"),
        (dict(time=t[::-1], base_pose=C, q=q), ValueError, "time: must not decrease"),
        (dict(time=t, base_pose=C, q=np.full((5, 1), np.nan)), ValueError, "q: has values"),
        (dict(time=t, base_pose=C, q="abc"), TypeError, "q: expected numbers"),
        (dict(q=q), ValueError, "q, time: required without a trajectory"),
        (dict(time=t, base_pose=C, q=q, frames=["nope"]), ValueError,
         "frames: the model has no frame .nope.; its frames: .base., .arm., .tip."),
        (dict(time=t, base_pose=C, q=q, fps=0), ValueError, "fps: expected a positive"),
        (dict(time=t, base_pose=C, q=q, visuals=[1]), TypeError, "visuals: expected"),
        (dict(time=t, base_pose=C, q=q, contacts=ld.point_contacts(["tip"])), ValueError,
         "contacts: drawn from a trajectory simulated with them"),
    ]
    for kw, err, what in cases:
        with pytest.raises(err, match=what):
            viewer.animation(model, **kw)
    with pytest.raises(TypeError, match="trajectory: expected a liedyn.Trajectory"):
        viewer.animation(model, object())
    with pytest.raises(TypeError, match="anim: expected a liedyn.viewer.Animation"):
        viewer.to_html("page")
    # q as jets (T, k, n): row 0 read
    a = viewer.animation(model, time=t, base_pose=C, q=np.zeros((5, 3, 1)))
    assert a.body_pose.shape == (5, 2, 4, 4)


def test_page_is_self_contained(tmp_path):
    """The exported page names no URL and loads nothing: no http(s)://, no
    src= or href= attribute, no import; its scene is valid JSON."""
    path = _urdf(tmp_path)
    model = ld.load_urdf(path, floating_base=True)
    t = np.linspace(0, 1, 11)
    a = viewer.animation(model, time=t, base_pose=np.tile(np.eye(4), (11, 1, 1)),
                         q=np.sin(t)[:, None], visuals=viewer.urdf_visuals(model, path),
                         frames=["arm"], title="</script><b>x")
    out = Path(viewer.export_html(a, tmp_path / "page.html"))
    text = out.read_text()
    for bad in ("http://", "https://", "src=", "href=", "import(", "fetch(", "XMLHttpRequest",
                "</script><b>"):
        assert bad not in text, bad
    data = re.search(r'<script type="application/json" id="liedyn-data">(.*?)</script>', text,
                     re.S).group(1)
    scene = json.loads(data)
    assert scene["title"] == "</script><b>x" and scene["n_bodies"] == 2
    assert len(scene["visuals"]) == 4
