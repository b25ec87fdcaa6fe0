"""Triangle meshes for the viewer: mesh files (STL, OBJ, COLLADA) read into
vertex and triangle arrays, and the primitive shapes of URDF and MJCF
tessellated.

Glossary
--------
==============  ============  ===============================================
``vertices``    (V, 3)        float64, metres, in the mesh's own frame
``triangles``   (F, 3)        int64 indices into ``vertices``, counter-clockwise
``color``       (4,) or None  RGBA in [0, 1]; ``None``: the caller's colour
==============  ============  ===============================================

A file is read whole (at most :data:`MAX_MESH_BYTES`) and parsed in
NumPy; a COLLADA file is XML parsed by the standard library's expat, which
resolves no external entity and refuses an entity expanding beyond its
amplification limit. Nothing a file names (textures, other files) is opened.
"""

import math
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

__all__ = ["MeshPart", "MeshError", "MAX_MESH_BYTES", "read_mesh", "box", "cylinder", "sphere",
           "capsule", "ellipsoid", "arrow"]

# The largest mesh file read (bytes): robot meshes are at most a few MB.
MAX_MESH_BYTES = 64 * 2**20


class MeshError(ValueError):
    """A mesh file that cannot be read; the message names the file."""


@dataclass(frozen=True)
class MeshPart:
    """Triangles of one colour: ``vertices`` (V, 3), ``triangles`` (F, 3),
    ``color`` (4,) RGBA or ``None`` (the colour its visual gives)."""

    vertices: np.ndarray
    triangles: np.ndarray
    color: np.ndarray | None = None


def _part(vertices, triangles, color=None, where="mesh"):
    v = np.ascontiguousarray(vertices, dtype=float).reshape(-1, 3)
    f = np.ascontiguousarray(triangles, dtype=np.int64).reshape(-1, 3)
    if not np.all(np.isfinite(v)):
        raise MeshError(f"{where}: vertex coordinates that are not finite")
    if f.size and (f.min() < 0 or f.max() >= len(v)):
        raise MeshError(f"{where}: triangle indices outside its {len(v)} vertices")
    return MeshPart(v, f, None if color is None else np.asarray(color, dtype=float))


def _welded(corners):
    """``(vertices, triangles)`` of triangle corners (F, 3, 3), equal corners merged."""
    v, inverse = np.unique(corners.reshape(-1, 3), axis=0, return_inverse=True)
    return v, inverse.reshape(-1, 3)


# ------------------------------------------------------------------ files --

def read_mesh(path):
    """The parts of mesh file ``path`` (``.stl``, ``.obj``, ``.dae``, any case).

    Returns
    -------
    tuple of MeshPart
        One part for STL and OBJ (``color`` ``None``); one per COLLADA
        primitive placed by its scene, with its material's diffuse colour.

    Raises
    ------
    FileNotFoundError
        No such file.
    MeshError
        An unknown extension, a file over :data:`MAX_MESH_BYTES`, or one
        that is not a mesh of its format; the message names the file.
    """
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    readers = {".stl": _stl, ".obj": _obj, ".dae": _dae}
    if ext not in readers:
        raise MeshError(f"{path!r}: unknown mesh format {ext or '(no extension)'!r}; "
                        f"expected .stl, .obj or .dae")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path!r}: no such mesh file")
    with open(path, "rb") as fh:
        data = fh.read(MAX_MESH_BYTES + 1)
    if len(data) > MAX_MESH_BYTES:
        raise MeshError(f"{path!r}: larger than {MAX_MESH_BYTES} bytes")
    try:
        parts = readers[ext](data, path)
    except (ValueError, IndexError, KeyError) as err:
        if isinstance(err, MeshError):
            raise
        raise MeshError(f"{path!r}: not a readable {ext[1:].upper()} mesh: {err}") from None
    if not parts or not any(len(p.triangles) for p in parts):
        raise MeshError(f"{path!r}: no triangles")
    return tuple(parts)


def _stl(data, path):
    if len(data) >= 84:
        n = int(np.frombuffer(data, dtype="<u4", count=1, offset=80)[0])
        if len(data) == 84 + 50 * n:               # binary: 50 bytes per triangle
            rec = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attr", "<u2")])
            tri = np.frombuffer(data, dtype=rec, count=n, offset=84)
            return [_part(*_welded(tri["corners"].astype(float)), where=repr(path))]
    text = data.decode("ascii", errors="replace")
    if not text.lstrip().lower().startswith("solid"):
        raise MeshError(f"{path!r}: neither a binary STL (size {len(data)} bytes does not "
                        f"match its triangle count) nor an ASCII one")
    nums = re.findall(r"vertex\s+(\S+)\s+(\S+)\s+(\S+)", text)
    corners = np.array(nums, dtype=float).reshape(-1, 3, 3)
    return [_part(*_welded(corners), where=repr(path))]


def _obj(data, path):
    v, faces = [], []
    for line in data.decode("utf-8", errors="replace").splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "v":
            v.append([float(x) for x in words[1:4]])
        elif words[0] == "f":
            idx = [int(w.split("/")[0]) for w in words[1:]]
            idx = [i - 1 if i > 0 else len(v) + i for i in idx]   # 1-based; negative: from the end
            faces.extend([idx[0], idx[k], idx[k + 1]] for k in range(1, len(idx) - 1))
    return [_part(np.array(v, dtype=float).reshape(-1, 3), np.array(faces).reshape(-1, 3),
                  where=repr(path))]


def _local(tag):
    return tag.rpartition("}")[2]


def _floats(text):
    return np.array(text.split(), dtype=float) if text else np.zeros(0)


def _node_matrix(node):
    """The transform of a COLLADA ``<node>``: its ``matrix``, ``translate``,
    ``rotate`` (axis, degrees) and ``scale`` children composed in order."""
    T = np.eye(4)
    for el in node:
        tag, x = _local(el.tag), _floats(el.text)
        A = np.eye(4)
        if tag == "matrix":
            A = x.reshape(4, 4)
        elif tag == "translate":
            A[:3, 3] = x[:3]
        elif tag == "scale":
            A[:3, :3] = np.diag(x[:3])
        elif tag == "rotate":
            A[:3, :3] = _rotation(x[:3], math.radians(x[3]))
        else:
            continue
        T = T @ A
    return T


def _rotation(axis, angle):
    """Rodrigues: rotation by ``angle`` about ``axis`` (3,)."""
    n = np.linalg.norm(axis)
    if n == 0.0:
        return np.eye(3)
    k = np.asarray(axis) / n
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * K @ K


class _Collada:
    """The parts of a COLLADA document, geometries placed by its scene."""

    def __init__(self, root, path):
        self.path = path
        self.ids = {el.get("id"): el for el in root.iter() if el.get("id") is not None}
        asset = next((el for el in root if _local(el.tag) == "asset"), None)
        scale = 1.0
        for el in asset if asset is not None else ():
            if _local(el.tag) == "unit":
                scale = float(el.get("meter", "1"))
        # <up_axis> is not applied: robot descriptions give meshes in link
        # coordinates whatever the exporter wrote there (example-robot-data's
        # Borinot meshes say Y_UP, and their raw coordinates are the ones
        # that meet the URDF's joints).
        self.top = np.diag([scale, scale, scale, 1.0])
        self.root = root

    def parts(self):
        scenes = [el for el in self.root.iter() if _local(el.tag) == "visual_scene"]
        out = []
        if scenes:
            for node in scenes[0]:
                if _local(node.tag) == "node":
                    self._node(node, self.top, out, 0)
        else:                                         # no scene: every geometry as it is
            for g in (el for el in self.root.iter() if _local(el.tag) == "geometry"):
                out.extend(self._geometry(g, self.top, {}))
        return out

    def _node(self, node, T, out, depth):
        if depth > 64:
            raise MeshError(f"{self.path!r}: scene nodes nested deeper than 64")
        T = T @ _node_matrix(node)
        for el in node:
            tag = _local(el.tag)
            if tag == "node":
                self._node(el, T, out, depth + 1)
            elif tag == "instance_geometry":
                g = self.ids.get((el.get("url") or "").lstrip("#"))
                if g is not None:
                    bind = {im.get("symbol"): (im.get("target") or "").lstrip("#")
                            for im in el.iter() if _local(im.tag) == "instance_material"}
                    out.extend(self._geometry(g, T, bind))

    def _source(self, sid):
        src = self.ids[sid.lstrip("#")]
        if _local(src.tag) == "vertices":             # <vertices>: its POSITION input
            pos = next(i for i in src if _local(i.tag) == "input"
                       and i.get("semantic") == "POSITION")
            return self._source(pos.get("source"))
        arr = next(el for el in src if _local(el.tag) == "float_array")
        acc = next(el for el in src.iter() if _local(el.tag) == "accessor")
        stride = int(acc.get("stride", "1"))
        x = _floats(arr.text)
        return x[: len(x) // stride * stride].reshape(-1, stride)[:, :3]

    def _color(self, material_id):
        mat = self.ids.get(material_id)
        eff = None
        for el in mat.iter() if mat is not None else ():
            if _local(el.tag) == "instance_effect":
                eff = self.ids.get((el.get("url") or "").lstrip("#"))
        for el in eff.iter() if eff is not None else ():
            if _local(el.tag) == "diffuse":
                c = next((x for x in el if _local(x.tag) == "color"), None)
                if c is not None:
                    rgba = _floats(c.text)
                    if rgba.size >= 3:
                        return np.clip(np.append(rgba[:3], rgba[3] if rgba.size > 3 else 1.0),
                                       0.0, 1.0)
        return None

    def _geometry(self, g, T, bind):
        mesh = next((el for el in g if _local(el.tag) == "mesh"), None)
        out = []
        for prim in mesh if mesh is not None else ():
            kind = _local(prim.tag)
            if kind not in ("triangles", "polylist", "polygons"):
                continue
            inputs = [i for i in prim if _local(i.tag) == "input"]
            stride = 1 + max(int(i.get("offset", "0")) for i in inputs)
            vin = next(i for i in inputs if i.get("semantic") == "VERTEX")
            P = self._source(vin.get("source"))
            off = int(vin.get("offset", "0"))
            ps = [el for el in prim if _local(el.tag) == "p"]
            if kind == "polygons":
                counts = [len(_floats(p.text)) // stride for p in ps]
            elif kind == "polylist":
                vc = next(el for el in prim if _local(el.tag) == "vcount")
                counts = _floats(vc.text).astype(int)
            idx = np.concatenate([_floats(p.text) for p in ps]).astype(np.int64) \
                if ps else np.zeros(0, dtype=np.int64)
            corner = idx[off::stride]
            if kind == "triangles":
                tri = corner[: len(corner) // 3 * 3].reshape(-1, 3)
            else:
                tri, start = [], 0
                for c in counts:
                    poly = corner[start:start + c]
                    tri.extend([poly[0], poly[k], poly[k + 1]] for k in range(1, c - 1))
                    start += c
                tri = np.array(tri, dtype=np.int64).reshape(-1, 3)
            used, tri = np.unique(tri, return_inverse=True)   # this primitive's vertices only
            tri = tri.reshape(-1, 3)
            V = P[used] @ T[:3, :3].T + T[:3, 3]
            if np.linalg.det(T[:3, :3]) < 0:           # a mirroring node turns faces inside out
                tri = tri[:, ::-1]
            color = self._color(bind.get(prim.get("material"), prim.get("material")))
            out.append(_part(V, tri, color, where=repr(self.path)))
        return out


def _dae(data, path):
    try:
        root = ET.fromstring(data)
    except ET.ParseError as err:
        raise MeshError(f"{path!r}: malformed XML: {err}") from None
    if _local(root.tag) != "COLLADA":
        raise MeshError(f"{path!r}: not a COLLADA document (root element <{_local(root.tag)}>)")
    return _Collada(root, path).parts()


# ------------------------------------------------------------- primitives --

def _ring(n):
    a = np.arange(n) * (2.0 * math.pi / n)
    return np.cos(a), np.sin(a)


def box(size):
    """A box of full side lengths ``size`` (3,), centred at the origin."""
    s = 0.5 * np.asarray(size, dtype=float)
    v = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float) * s
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    f = [[a, b, c] for a, b, c, d in quads] + [[a, c, d] for a, b, c, d in quads]
    return _part(v, f)


def cylinder(radius, length, n=32):
    """A cylinder about the z axis, centred at the origin."""
    c, s = _ring(n)
    h = 0.5 * length
    v = np.concatenate([np.stack([radius * c, radius * s, np.full(n, -h)], 1),
                        np.stack([radius * c, radius * s, np.full(n, h)], 1),
                        [[0, 0, -h], [0, 0, h]]])
    f = []
    for i in range(n):
        j = (i + 1) % n
        f += [[i, j, n + j], [i, n + j, n + i], [2 * n, j, i], [2 * n + 1, n + i, n + j]]
    return _part(v, f)


def _lat_long(radius, n, z_shift=None):
    """Vertices and triangles of a sphere of ``n`` meridians; with
    ``z_shift = (a, b)`` the upper half moved by ``a``, the lower by ``b``."""
    m = n // 2
    th = np.linspace(0.0, math.pi, m + 1)
    c, s = _ring(n)
    v = []
    for t in th:
        z = radius * math.cos(t)
        if z_shift is not None:
            z += z_shift[0] if t <= math.pi / 2 else z_shift[1]
        v.extend(np.stack([radius * math.sin(t) * c, radius * math.sin(t) * s,
                           np.full(n, z)], 1))
    f = []
    for r in range(m):
        for i in range(n):
            a, b = r * n + i, r * n + (i + 1) % n
            f += [[a, a + n, b + n], [a, b + n, b]]
    return np.array(v), np.array(f)


def sphere(radius, n=24):
    """A sphere centred at the origin."""
    return _part(*_lat_long(radius, n))


def ellipsoid(radii, n=24):
    """An ellipsoid of semi-axes ``radii`` (3,) centred at the origin."""
    v, f = _lat_long(1.0, n)
    return _part(v * np.asarray(radii, dtype=float), f)


def capsule(radius, length, n=24):
    """A capsule about the z axis: a cylinder of ``length`` capped by half spheres."""
    return _part(*_lat_long(radius, n, (0.5 * length, -0.5 * length)))


def arrow(n=16):
    """An arrow of unit length along +z from the origin: shaft radius 0.03,
    head 0.25 long and 0.08 wide."""
    c, s = _ring(n)
    z0, z1 = 0.0, 0.75
    v = np.concatenate([np.stack([0.03 * c, 0.03 * s, np.full(n, z0)], 1),
                        np.stack([0.03 * c, 0.03 * s, np.full(n, z1)], 1),
                        np.stack([0.08 * c, 0.08 * s, np.full(n, z1)], 1),
                        [[0, 0, 1.0], [0, 0, z0]]])
    f = []
    for i in range(n):
        j = (i + 1) % n
        f += [[i, j, n + j], [i, n + j, n + i], [2 * n + i, 2 * n + j, 3 * n],
              [2 * n + j, 2 * n + i, n + i], [2 * n + j, n + i, n + j], [3 * n + 1, j, i]]
    return _part(v, f)
