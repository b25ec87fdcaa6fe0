"""The aerial manipulator drawn from the model itself, in the style of the
paper's Fig. 2, so that a reader can check the geometry (SPEC §8).

    python -m experiments.aerial_manipulator_drawing [--out DIR]

(a) A 3-D view at the home configuration (q = 0), (b) the view from
above and (c) the view from the front, all from the model: body frames at the poses forward kinematics
gives (x red, y green, z blue), links from joint to joint through each
centre of mass, every joint axis as an arrow through its joint point,
labelled by its column of ``q`` (``q[0] … q[5]``, in the order of
``model.joint_names``; the paper calls them ``q₂ … q₇``, after the body they
move), and the six propeller frames
``C_{p_i} = R_z((2−i)π/3) T_x(a) R_x(α_i) R_y(β)`` with their discs, thrust
axes (tilted by the cant angle) and spin directions. Seen from above the
links of an arm hang one under the other, so view (b) labels each arm once
(its bodies and joints, with a leader line) rather than every body. (d) The
tree as the paper's Fig. 2(b) draws it: bodies ``B₁ … B₇``, joints on the
edges with their q column and name.

Prints the propeller frames and joint axes in the base frame, and writes
``paper_figures/aerial_manipulator_fig2.png``. Nothing is measured, so
``--full`` writes the same figure.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

import liedyn
from experiments.aerial_manipulator import _sub   # digit subscripts (a light module: no plotting)
from models.aerial_manipulator import (AerialManipulatorParams, aerial_manipulator,
                                       propeller_frames, spin_directions)

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"
AXIS_COLORS = ("tab:red", "tab:green", "tab:blue")
DISC_RADIUS = 0.09     # m, a 7-inch disc: drawn, not part of the model
SPIN_COLORS = {1.0: "tab:purple", -1.0: "tab:orange"}


def geometry(params=AerialManipulatorParams()):
    """Everything drawn, in the world frame at the home configuration (base
    at identity, q = 0): ``dict`` with ``pose (N, 4, 4)``, ``com (N, 3)``,
    ``joint_point (n, 3)`` and ``joint_axis (n, 3)`` (row ``j − 1``: the joint
    moving body ``j``), ``parent (N,)``, ``propeller (6, 4, 4)`` and ``spin (6,)``."""
    model = aerial_manipulator(params)
    n = model.n_joints
    kin = liedyn.forward_kinematics(model, np.eye(4), np.zeros((1, 6)), np.zeros((2, n)), 0)
    pose = np.asarray(kin.body_pose)
    R, x = pose[:, :3, :3], pose[:, :3, 3]
    com = np.einsum("nij,nj->ni", R, np.asarray(model.body_com)) + x
    Rj, xj = R[model.joint_body], x[model.joint_body]
    point = np.einsum("nij,nj->ni", Rj, np.asarray(model.joint_point)) + xj
    axis = np.einsum("nij,nj->ni", Rj, np.asarray(model.joint_axis))
    return dict(pose=pose, com=com, joint_point=point, joint_axis=axis,
                parent=np.asarray(model.body_parent), propeller=propeller_frames(params),
                spin=spin_directions(), joint_names=tuple(model.joint_names),
                joint_body=np.asarray(model.joint_body))


def _frame(ax, T, length, lw=1.2, project=None):
    for k in range(3):
        _segment(ax, T[:3, 3], T[:3, 3] + length * T[:3, k], AXIS_COLORS[k], lw, project)


def _segment(ax, a, b, color, lw=1.0, project=None, **kw):
    if project is None:
        ax.plot(*np.stack([a, b]).T, color=color, lw=lw, **kw)
    else:
        ax.plot(*np.stack([a, b])[:, project].T, color=color, lw=lw, **kw)


def _arms(g):
    """``[[joint columns of one arm, root first]]``: the chains hanging from the base."""
    body_joint = {int(b): k for k, b in enumerate(g["joint_body"])}
    arms = []
    for k, b in enumerate(g["joint_body"]):
        if g["parent"][b] == 0:
            chain, body = [k], int(b)
            while True:
                child = [c for c in body_joint if g["parent"][c] == body]
                if not child:
                    break
                body = child[0]
                chain.append(body_joint[body])
            arms.append(chain)
    return arms


def _draw(ax, g, params, project=None):
    """The drawing on a 3-D axis, or with ``project`` (two coordinate
    indices) on a 2-D one. Seen from above (``project == (0, 1)``) each arm
    gets one label with a leader line instead of one per body and joint."""
    label = (lambda p, s, **kw: ax.text(*p, s, **kw)) if project is None else \
        (lambda p, s, **kw: ax.text(*p[list(project)], s, **kw))
    top = project == (0, 1)
    C0 = g["pose"][0]
    for i, (Cp, s) in enumerate(zip(g["propeller"], g["spin"])):
        C = C0 @ Cp
        _segment(ax, C0[:3, 3], C[:3, 3], "0.35", 3.0, project)            # arm of propeller i
        t = np.linspace(0.0, 2.0 * np.pi, 60)
        disc = C[:3, 3] + DISC_RADIUS * (np.outer(np.cos(t), C[:3, 0]) + np.outer(np.sin(t), C[:3, 1]))
        pts = disc if project is None else disc[:, project]
        ax.plot(*pts.T, color=SPIN_COLORS[s], lw=1.0)
        _segment(ax, C[:3, 3], C[:3, 3] + 0.12 * C[:3, 2], SPIN_COLORS[s], 2.0, project)
        label(C[:3, 3] + 0.14 * C[:3, 2], f"p{_sub(i + 1)}", fontsize=8, color=SPIN_COLORS[s])
    for k, b in enumerate(g["joint_body"]):
        p = g["parent"][b]
        start = g["com"][0] if p == 0 else g["com"][p]
        e, P = g["joint_axis"][k], g["joint_point"][k]
        for a, c in ((start, P), (P, g["com"][b])):
            _segment(ax, a, c, "k", 2.2, project)
        _segment(ax, P - 0.045 * e, P + 0.045 * e, "tab:cyan", 3.0, project)
        if not top:
            side = np.sign(P[0]) or 1.0
            label(P + np.array([0.055 * side, 0.0, 0.008]), f"q[{k}]", fontsize=8,
                  color="teal", ha="left" if side > 0 else "right", va="bottom")
    for j in range(len(g["parent"])):
        _frame(ax, g["pose"][j], 0.08 if j == 0 else 0.035, project=project)
        if top and j > 0:
            continue
        side = np.sign(g["com"][j][0]) or 1.0
        label(g["com"][j] + np.array([0.012 * side, 0.012, -0.012]), f"B{_sub(j + 1)}",
              fontsize=8, ha="left" if side > 0 else "right", va="top")
    if top:
        for chain in _arms(g):
            x, y = g["joint_point"][chain[0]][:2]
            bodies = ", ".join(f"B{_sub(int(g['joint_body'][k]) + 1)}" for k in chain)
            joints = ", ".join(f"q[{k}]" for k in chain)
            ax.annotate(f"{bodies} stacked\njoints {joints}", xy=(x, y),
                        xytext=(x + 0.03 * np.sign(x), -0.1), fontsize=8, color="teal",
                        ha="left" if x > 0 else "right", va="top",
                        arrowprops=dict(arrowstyle="-", color="teal", lw=0.8))


def _graph(ax, g):
    """The paper's Fig. 2(b): the tree of bodies with the joints on its edges,
    each labelled with its q column and name."""
    arms = _arms(g)
    pos = {0: (0.5, 0.9)}
    for a, chain in enumerate(arms):
        x = (a + 0.5) / len(arms)
        for depth, k in enumerate(chain):
            pos[int(g["joint_body"][k])] = (x, 0.65 - 0.25 * depth)
    for k, b in enumerate(g["joint_body"]):
        (x0, y0), (x1, y1) = pos[int(g["parent"][b])], pos[int(b)]
        ax.annotate("", xy=(x1, y1 + 0.05), xytext=(x0, y0 - 0.05),
                    arrowprops=dict(arrowstyle="->", lw=1.2))
        side = 1.0 if x1 >= x0 else -1.0
        ax.text((x0 + x1) / 2 + 0.05 * side, (y0 + y1) / 2, f"q[{k}]\n{g['joint_names'][k]}",
                fontsize=8.5, color="teal", va="center", ha="left" if side > 0 else "right")
    for j, (x, y) in pos.items():
        ax.text(x, y, f"B{_sub(j + 1)}", ha="center", va="center", fontsize=11,
                bbox=dict(boxstyle="circle", fc="white", ec="k"))
    ax.text(0.5, 1.0, "base (6 propellers)", ha="center", fontsize=9)
    ax.text(0.5, -0.02, "q[k]: column k of q, the joint model.joint_names[k];\n"
            f"q[0] … q[5] are the paper's q{_sub(2)} … q{_sub(7)} (named after their body)",
            ha="center", va="top", fontsize=8)
    ax.set(xlim=(0, 1), ylim=(0.0, 1.05), title="(d) the tree: bodies and joints")
    ax.axis("off")


def plot(g, params, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    fig = plt.figure(figsize=(18, 10.5), layout="constrained")
    grid = fig.add_gridspec(2, 3, width_ratios=(1.5, 1.0, 0.55))
    ax = fig.add_subplot(grid[:, 0], projection="3d")
    _draw(ax, g, params)
    pts = np.concatenate([g["com"], (g["pose"][0] @ g["propeller"])[:, :3, 3]])
    span = np.ptp(pts, axis=0) + 0.2
    mid = pts.min(axis=0) + np.ptp(pts, axis=0) / 2
    ax.set(xlim=(mid[0] - span[0] / 2, mid[0] + span[0] / 2),
           ylim=(mid[1] - span[1] / 2, mid[1] + span[1] / 2),
           zlim=(mid[2] - span[2] / 2, mid[2] + span[2] / 2),
           xlabel="x [m]", ylabel="y [m]", zlabel="z [m]")
    ax.set_box_aspect(span, zoom=1.05)
    ax.set_title("(a) home configuration (q = 0), from the model", pad=0)
    ax.view_init(elev=18, azim=-58)
    views = (((0, 1), grid[0, 1], "x [m]", "y [m]",
              f"(b) from above: thrust axes tilted by the cant ±{np.rad2deg(params.prop_cant):g}°"),
             ((0, 2), grid[1, 1], "x [m]", "z [m]",
              "(c) from the front (−y): arms, joint axes, body frames"))
    for project, where, xl, yl, title in views:
        a2 = fig.add_subplot(where)
        _draw(a2, g, params, project=project)
        a2.set_aspect("equal")
        a2.set(xlabel=xl, ylabel=yl, title=title)
        a2.grid(alpha=0.3)
    _graph(fig.add_subplot(grid[0, 2]), g)
    handles = [Line2D([], [], color=c, lw=2) for c in AXIS_COLORS]
    handles += [Line2D([], [], color="tab:cyan", lw=3), Line2D([], [], color="k", lw=2),
                Line2D([], [], color="0.35", lw=3),
                Line2D([], [], color=SPIN_COLORS[1.0], lw=2),
                Line2D([], [], color=SPIN_COLORS[-1.0], lw=2)]
    labels = ["body / propeller frame x", "frame y", "frame z",
              "joint axis through the joint point", "link: joint → centre of mass",
              "base arm to a propeller",
              "propeller disc and thrust axis (z), drag moment +z (s = +1)",
              "propeller disc and thrust axis (z), drag moment −z (s = −1)"]
    leg = fig.add_subplot(grid[1, 2])
    leg.axis("off")
    leg.legend(handles, labels, fontsize=8.5, loc="center")
    fig.suptitle("Aerial manipulator (Fig. 2 style), drawn from models.aerial_manipulator: "
                 f"a = {params.prop_arm:g} m, α = ±{np.rad2deg(params.prop_cant):g}°, "
                 f"β = {np.rad2deg(params.prop_dihedral):g}°, b = {params.b:g} m, "
                 f"c = {params.c:g} m, d = {params.d:g} m", fontsize=12)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def report(g):
    print("propeller frames in the base frame (home pose identity)")
    print(f"{'':>3} {'position [m]':>26} {'thrust axis z':>26} {'tilt from base z':>16} {'spin':>5}")
    for i, (C, s) in enumerate(zip(g["propeller"], g["spin"])):
        tilt = np.rad2deg(np.arccos(np.clip(C[2, 2], -1.0, 1.0)))
        print(f"p{i + 1:<2} {np.array2string(C[:3, 3], precision=3, suppress_small=True):>26} "
              f"{np.array2string(C[:3, 2], precision=3, suppress_small=True):>26} {tilt:>15.1f}° "
              f"{s:>+5.0f}")
    print("\njoints at the home configuration (world = base frame)")
    print(f"{'':>4} {'name':<10} {'body':>4} {'parent':>6} {'joint point [m]':>26} {'axis':>22} "
          f"{'CoM [m]':>26}")
    for k, j in enumerate(g["joint_body"]):
        print(f"q[{k}] {g['joint_names'][k]:<10} B{j + 1:<3} B{g['parent'][j] + 1:<5} "
              f"{np.array2string(g['joint_point'][k], precision=3, suppress_small=True):>26} "
              f"{np.array2string(g['joint_axis'][k], precision=3, suppress_small=True):>22} "
              f"{np.array2string(g['com'][j], precision=3, suppress_small=True):>26}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    ap.add_argument("--full", action="store_true", help="the same figure (nothing is measured)")
    ap.add_argument("--quick", action="store_true", help="the default")
    args = ap.parse_args(argv)
    params = AerialManipulatorParams()
    g = geometry(params)
    report(g)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "aerial_manipulator_fig2.png"
    plot(g, params, path)
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
