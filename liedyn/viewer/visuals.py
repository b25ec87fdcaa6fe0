"""What the viewer draws of a model: its visual geometry, read from the
description file the model was loaded from.

The frozen :class:`liedyn.Model` keeps no geometry (the dynamics need
none), so the viewer reads it from the same file: :func:`urdf_visuals`
from a URDF's ``<visual>`` elements, :func:`mjcf_visuals` from the geoms of
MuJoCo's compiled model. Each visual is attached to a frame of the model by
name (URDF links and MuJoCo bodies are bodies or, when welded, named frames
of the loaded model), so the model and the file must match: a model body
the file does not have is an error.

Mesh paths
----------
A URDF names meshes by ``package://<package>/<path>``, by a path relative
to the file, or by ``file://`` or an absolute path. None is fetched from
the network (``http://`` and any other scheme are refused), and no path may
lead outside the folder it is resolved in, symbolic links and ``..``
followed first:

* ``package://<package>/<path>``: inside the package's folder, given by
  ``package_dirs={"<package>": folder}``, or else the nearest folder called
  ``<package>`` above the URDF file (as a ROS package holds its URDF);
* a path relative to the URDF file's folder (to ``mesh_root`` for URDF
  text): inside ``mesh_root`` (default: the URDF file's folder);
* ``file://`` and absolute paths: inside ``mesh_root``, which must then be
  given.

A path that breaks these rules is a ``ValueError`` naming the link and the
file name; a mesh file that does not exist, a ``FileNotFoundError`` naming
both.
"""

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from ..multibody.model import check_model
from ..parsers.description import _pose
from ..parsers.urdf import URDFWarning, _read, parse_urdf
from . import meshes

__all__ = ["Visual", "urdf_visuals", "mjcf_visuals", "primitive_visual"]

DEFAULT_COLOR = (0.72, 0.74, 0.78, 1.0)


@dataclass(frozen=True)
class Visual:
    """One piece of geometry attached to a frame of the model.

    Attributes
    ----------
    name : str
        Where it comes from (``"<link>/visual<k>"``, ``"<body>/geom<k>"``).
    frame : int
        Index of the model frame it moves with (``model.frame_names``).
    offset : (4, 4)
        Pose of the geometry in that frame.
    parts : tuple of MeshPart
        Triangles in the geometry's own frame (scale applied), each part
        with its colour.
    """

    name: str
    frame: int
    offset: np.ndarray
    parts: tuple


def _colored(parts, color):
    rgba = np.asarray(DEFAULT_COLOR if color is None else color, dtype=float)
    return tuple(p if p.color is not None else meshes.MeshPart(p.vertices, p.triangles, rgba)
                 for p in parts)


def primitive_visual(model, frame, kind, size, *, offset=None, color=None, name=None):
    """A box, cylinder, sphere or capsule on ``frame`` (name or index).

    ``size``: a box's full side lengths (3,); a cylinder's or capsule's
    ``(radius, length)`` about its z axis; a sphere's ``(radius,)``.
    ``offset`` (4, 4): its pose in the frame (default identity); ``color``
    RGBA (4,) or RGB (3,).
    """
    model = check_model(model)
    f = _frame(model, frame)
    size = np.atleast_1d(np.asarray(size, dtype=float))
    shapes = {"box": (3, meshes.box), "cylinder": (2, meshes.cylinder),
              "capsule": (2, meshes.capsule), "sphere": (1, meshes.sphere)}
    if kind not in shapes:
        raise ValueError(f"kind: expected one of {', '.join(map(repr, shapes))}, got {kind!r}")
    n, make = shapes[kind]
    if size.shape != (n,) or not np.all(np.isfinite(size)) or np.any(size <= 0):
        raise ValueError(f"size: a {kind} takes {n} positive finite numbers, got {size.tolist()}")
    T = np.eye(4) if offset is None else _pose_arg(offset, "offset")
    part = make(size) if kind == "box" else make(*size)
    return Visual(name or f"{model.frame_names[f]}/{kind}", f, T,
                  _colored((part,), None if color is None else _rgba(color)))


def _frame(model, frame):
    if isinstance(frame, str):
        return model.frame_index(frame)
    if isinstance(frame, (int, np.integer)) and not isinstance(frame, bool) \
            and 0 <= frame < model.n_frames:
        return int(frame)
    raise ValueError(f"frame: expected a frame name or an index below {model.n_frames}, "
                     f"got {frame!r}")


def _pose_arg(T, name):
    T = np.asarray(T, dtype=float)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise ValueError(f"{name}: expected a finite (4, 4) pose, got shape {T.shape}")
    return T


def _rgba(color):
    c = np.asarray(color, dtype=float).ravel()
    if c.shape not in ((3,), (4,)) or not np.all((c >= 0) & (c <= 1)):
        raise ValueError(f"color: expected RGB or RGBA in [0, 1], got {c.tolist()}")
    return np.append(c, 1.0) if c.size == 3 else c


# -------------------------------------------------------------------- URDF --

def _inside(path, folder):
    """Whether ``path`` lies in ``folder``, both with links and ``..`` resolved."""
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([path, folder]) == folder


def _package_dir(package, urdf_dir, package_dirs, where):
    if package in package_dirs:
        return os.fspath(package_dirs[package])
    for d in [urdf_dir, *Path(urdf_dir).parents] if urdf_dir else ():
        if Path(d).name == package:
            return os.fspath(d)
    raise ValueError(f"{where}: package {package!r} has no folder: no folder above the URDF "
                     f"is called {package!r}; pass package_dirs={{{package!r}: folder}}")


def resolve_mesh_path(uri, urdf_dir, package_dirs=None, mesh_root=None, where="mesh"):
    """The local file a URDF mesh ``uri`` names, under the rules of the
    module docstring; ``urdf_dir`` is the URDF's folder (``None`` for XML
    text)."""
    package_dirs = {} if package_dirs is None else dict(package_dirs)
    uri = uri.strip()
    scheme, sep, rest = uri.partition("://")
    if sep and scheme == "package":
        package, _, rel = rest.partition("/")
        if not package or not rel:
            raise ValueError(f"{where}: {uri!r}: expected package://<package>/<path>")
        root = _package_dir(package, urdf_dir, package_dirs, where)
        path = os.path.join(root, unquote(rel))
    elif sep and scheme == "file":
        root, path = mesh_root, unquote(rest)
        if root is None:
            raise ValueError(f"{where}: {uri!r}: a file:// path is read only inside mesh_root, "
                             f"which was not given")
    elif sep:
        raise ValueError(f"{where}: {uri!r}: only package:// and local paths are read "
                         f"(nothing is fetched from the network)")
    elif os.path.isabs(uri):
        root, path = mesh_root, uri
        if root is None:
            raise ValueError(f"{where}: {uri!r}: an absolute path is read only inside "
                             f"mesh_root, which was not given")
    else:
        root = mesh_root if mesh_root is not None else urdf_dir
        if root is None:
            raise ValueError(f"{where}: {uri!r}: a relative path in URDF text needs mesh_root")
        path = os.path.join(urdf_dir if urdf_dir is not None else root, uri)
    if not _inside(path, root):
        raise ValueError(f"{where}: {uri!r} leads outside {os.fspath(root)!r}, the folder it "
                         f"is read in")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{where}: mesh {uri!r}: no such file {os.path.realpath(path)!r}")
    return os.path.realpath(path)


def _numbers(el, attr, n, default, where):
    text = el.get(attr) if el is not None else None
    if text is None:
        if default is None:
            raise ValueError(f"{where}: <{el.tag if el is not None else '?'}> needs {attr}=")
        return np.array(default, dtype=float)
    try:
        x = np.array(text.split(), dtype=float)
    except ValueError:
        x = np.zeros(0)
    if x.shape != (n,) or not np.all(np.isfinite(x)):
        raise ValueError(f"{where}: {attr}={text!r}: expected {n} finite numbers")
    return x


def urdf_visuals(model, source, *, package_dirs=None, mesh_root=None):
    """The ``<visual>`` geometry of URDF ``source`` on ``model`` (loaded from it).

    Parameters
    ----------
    model : Model
        From :func:`liedyn.load_urdf` of the same file (same ``root``).
    source : str | os.PathLike
        The URDF file (or its XML text, whose mesh paths then need
        ``package_dirs``/``mesh_root``).
    package_dirs : dict, optional
        ``{package name: folder}`` for ``package://`` URIs.
    mesh_root : str | os.PathLike, optional
        The folder relative, absolute and ``file://`` mesh paths must lie in.

    Returns
    -------
    tuple of Visual
        Boxes, cylinders, spheres and meshes of the links in the model;
        colours from ``<material>`` (or a mesh's own).

    Raises
    ------
    ValueError
        The model has a body the file has no link for; a geometry or mesh
        path that breaks the rules of the module docstring; a mesh file that
        is not a mesh (:class:`liedyn.viewer.meshes.MeshError`).
    FileNotFoundError
        The URDF or a mesh file it names does not exist.
    """
    model = check_model(model)
    with warnings.catch_warnings():            # loading the model said them already
        warnings.simplefilter("ignore", URDFWarning)
        desc = parse_urdf(source, floating_base=model.floating_base)
    missing = [b for b in model.body_names if b not in {l.name for l in desc.links}]
    if missing:
        raise ValueError(f"model: bodies {missing[:5]} are not links of {desc.source!r}; "
                         f"pass the URDF the model was loaded from")
    top, label, _ = _read(source)
    urdf_dir = None if label == "<string>" else os.path.dirname(os.path.realpath(label))
    colors = {}
    for m in top.findall("material"):
        c = m.find("color")
        if m.get("name") and c is not None:
            colors[m.get("name")] = _numbers(c, "rgba", 4, DEFAULT_COLOR, f"material "
                                             f"{m.get('name')!r}")
    cache, out = {}, []
    for link in top.findall("link"):
        name = link.get("name")
        if ("frame", name) not in model._index:
            continue                                   # outside the loaded tree
        f = model.frame_index(name)
        for k, vis in enumerate(link.findall("visual")):
            where = f"link {name!r} <visual> {k}"
            origin = vis.find("origin")
            T = _pose(_numbers(origin, "xyz", 3, (0, 0, 0), where),
                      _numbers(origin, "rpy", 3, (0, 0, 0), where))
            color = None
            mat = vis.find("material")
            if mat is not None:
                c = mat.find("color")
                color = _numbers(c, "rgba", 4, DEFAULT_COLOR, where) if c is not None \
                    else colors.get(mat.get("name"))
            geom = vis.find("geometry")
            shape = next(iter(geom), None) if geom is not None else None
            if shape is None:
                raise ValueError(f"{where}: no <geometry>")
            parts = _urdf_shape(shape, where, urdf_dir, package_dirs, mesh_root, cache)
            out.append(Visual(f"{name}/visual{k}", f, T, _colored(parts, color)))
    return tuple(out)


def _urdf_shape(shape, where, urdf_dir, package_dirs, mesh_root, cache):
    tag = shape.tag
    if tag == "box":
        return (meshes.box(_numbers(shape, "size", 3, None, where)),)
    if tag in ("cylinder", "capsule"):
        r = _numbers(shape, "radius", 1, None, where)[0]
        h = _numbers(shape, "length", 1, None, where)[0]
        return ((meshes.cylinder if tag == "cylinder" else meshes.capsule)(r, h),)
    if tag == "sphere":
        return (meshes.sphere(_numbers(shape, "radius", 1, None, where)[0]),)
    if tag == "mesh":
        uri = shape.get("filename")
        if not uri:
            raise ValueError(f"{where}: <mesh> without filename")
        path = resolve_mesh_path(uri, urdf_dir, package_dirs, mesh_root, where)
        if path not in cache:
            cache[path] = meshes.read_mesh(path)
        scale = _numbers(shape, "scale", 3, (1, 1, 1), where)
        flip = np.prod(scale) < 0
        return tuple(meshes.MeshPart(p.vertices * scale,
                                     p.triangles[:, ::-1] if flip else p.triangles, p.color)
                     for p in cache[path])
    raise ValueError(f"{where}: unknown geometry <{tag}>; expected box, cylinder, sphere or mesh")


# -------------------------------------------------------------------- MJCF --

def mjcf_visuals(model, source, *, groups=(0, 1, 2)):
    """The geoms of MJCF ``source`` (or a compiled ``mujoco.MjModel``) on
    ``model`` (from :func:`liedyn.load_mjcf` of the same file).

    Geoms of bodies the model has (bodies, or welded bodies kept as frames),
    in ``groups`` (MuJoCo's viewer shows 0–2), not fully transparent;
    planes and height fields are left out (the page draws its own ground).
    Meshes are MuJoCo's compiled vertices; colours the geom's ``rgba`` or
    its material's.
    """
    from ..parsers.mjcf import _compile, element_name, mujoco_module
    mujoco = mujoco_module("liedyn.viewer.mjcf_visuals")
    model = check_model(model)
    m, label = _compile(mujoco, source)
    bodies = {element_name(m, "body", b) for b in range(m.nbody)}
    missing = [b for b in model.body_names if b not in bodies and "/" not in b]
    if missing:
        raise ValueError(f"model: bodies {missing[:5]} are not bodies of {label!r}; pass the "
                         f"MJCF the model was loaded from")
    G = mujoco.mjtGeom
    out = []
    for g in range(m.ngeom):
        body = element_name(m, "body", m.geom_bodyid[g])
        kind = int(m.geom_type[g])
        if (("frame", body) not in model._index or int(m.geom_group[g]) not in groups
                or kind in (G.mjGEOM_PLANE, G.mjGEOM_HFIELD)):
            continue
        rgba = np.array(m.geom_rgba[g], dtype=float)
        if m.geom_matid[g] >= 0:
            rgba = np.array(m.mat_rgba[m.geom_matid[g]], dtype=float)
        if rgba[3] == 0.0:
            continue
        s = np.array(m.geom_size[g], dtype=float)
        if kind == G.mjGEOM_SPHERE:
            part = meshes.sphere(s[0])
        elif kind == G.mjGEOM_CAPSULE:
            part = meshes.capsule(s[0], 2.0 * s[1])
        elif kind == G.mjGEOM_CYLINDER:
            part = meshes.cylinder(s[0], 2.0 * s[1])
        elif kind == G.mjGEOM_ELLIPSOID:
            part = meshes.ellipsoid(s)
        elif kind == G.mjGEOM_BOX:
            part = meshes.box(2.0 * s)
        elif kind == G.mjGEOM_MESH:
            i = int(m.geom_dataid[g])
            v0, nv = int(m.mesh_vertadr[i]), int(m.mesh_vertnum[i])
            f0, nf = int(m.mesh_faceadr[i]), int(m.mesh_facenum[i])
            part = meshes.MeshPart(np.array(m.mesh_vert[v0:v0 + nv], dtype=float),
                                   np.array(m.mesh_face[f0:f0 + nf], dtype=np.int64))
        else:
            continue
        q = m.geom_quat[g]
        T = np.eye(4)
        T[:3, :3] = _quat_matrix(q)
        T[:3, 3] = m.geom_pos[g]
        out.append(Visual(f"{body}/{element_name(m, 'geom', g)}", model.frame_index(body), T,
                          _colored((part,), rgba)))
    return tuple(out)


def _quat_matrix(q):
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
