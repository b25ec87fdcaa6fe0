"""A 3-D viewer of a model's motion in the browser: robot geometry from its
URDF or MJCF file, frames, contact points with force arrows and event marks,
play/pause/scrub, exported as one self-contained HTML file::

    import liedyn as ld
    from liedyn import viewer

    model = ld.load_urdf(path, floating_base=True)
    traj = ld.simulate(model, state, 1.0, dt=1e-3, contacts=contacts, ...)
    anim = viewer.animation(model, traj, visuals=viewer.urdf_visuals(model, path),
                            contacts=contacts, frames=["base"])
    viewer.export_html(anim, "drop.html")       # open it in any browser, offline

Geometry: the frozen :class:`liedyn.Model` keeps none, so the viewer reads
the description file the model was loaded from (:func:`urdf_visuals`,
:func:`mjcf_visuals`, with the mesh-path rules of
:mod:`liedyn.viewer.visuals`); :func:`primitive_visual` adds boxes,
cylinders, spheres and capsules to a model built by hand.

Why no viewer library: the page is about 300 lines of WebGL 2 written for
liedyn (:file:`page.js`), with the meshes decoded in NumPy
(:mod:`liedyn.viewer.meshes`: STL, OBJ, COLLADA). meshcat-python (MIT) has a
static HTML export that embeds three.js, but its last release on PyPI is
from 2021 and it brings pyzmq, tornado, IPython and pyngrok (a tunnelling
client) into the environment, and its page has no contact forces, event
marks or a time in the address, which would need JavaScript of our own all
the same; viser's client is a web application served by its Python server,
not one file that plays offline; vendoring three.js (MIT) would add about
700 kB of minified code and its loaders to the repository for what is, here,
lit triangle meshes and lines. The page therefore needs no network, no
server and no package beyond NumPy: it opens no port, and the export is one
file with everything in it (checked in the tests: no ``http(s)://``, no
``src=``).
"""

from .animation import Animation, animation, body_poses
from .html import export_html, to_html
from .meshes import MeshError, MeshPart, read_mesh
from .visuals import Visual, mjcf_visuals, primitive_visual, urdf_visuals

__all__ = ["Animation", "animation", "body_poses", "export_html", "to_html", "Visual",
           "urdf_visuals", "mjcf_visuals", "primitive_visual", "MeshPart", "MeshError",
           "read_mesh"]
