"""Draw ``docs/_static/conventions.png``: the two reference points of a twist.

    python docs/make_conventions_figure.py

A body rotates with angular velocity ω about an axis through its origin p
while that origin moves with velocity ṗ. Its spatial twist ``(ω, v)`` about
the world origin O has ``v = ṗ − ω × p``: the velocity of the body-fixed
point passing through O. With ``reference="base"`` the twist is taken about
p itself (world axes), ``(ω, ṗ)``. The picture is the plane view (ω along
the viewer's z axis) of that situation.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parent / "_static" / "conventions.png"


def arrow(ax, start, vec, color, label, offset=(0.05, 0.05)):
    ax.annotate("", xy=start + vec, xytext=start,
                arrowprops=dict(arrowstyle="-|>", color=color, lw=2))
    tip = start + vec
    ax.text(tip[0] + offset[0], tip[1] + offset[1], label, color=color, fontsize=11)


def main():
    p = np.array([2.0, 1.0])          # base origin
    w = 0.6                           # angular rate about the viewer's z axis
    pdot = np.array([0.5, 0.9])       # velocity of the base origin
    cross = lambda w, x: w * np.array([-x[1], x[0]])   # ω ẑ × x in the plane
    v_world = pdot - cross(w, p)      # velocity of the body point at O

    fig, ax = plt.subplots(figsize=(6.0, 4.2), dpi=110)
    body = plt.Polygon(p + np.array([[-0.6, -0.35], [0.7, -0.35], [0.7, 0.35], [-0.6, 0.35]]),
                       closed=True, fc="#dde8f4", ec="#3465a4")
    ax.add_patch(body)
    ax.plot(*p, "o", color="#3465a4")
    ax.text(p[0] - 0.25, p[1] - 0.22, "p (base origin)", color="#3465a4", fontsize=10)
    ax.plot(0, 0, "ko")
    ax.text(-1.75, 0.05, "O (world origin)", fontsize=10)
    ax.plot([0, p[0]], [0, p[1]], ":", color="gray")
    arrow(ax, p, pdot, "#cc0000", "ṗ: reference=\"base\" twist (ω, ṗ)")
    arrow(ax, np.zeros(2), v_world, "#4e9a06", "v = ṗ − ω × p", offset=(0.05, -0.2))
    ax.text(p[0] + 0.75, p[1] - 0.5, "ω ⊙ (out of the page)", fontsize=10)
    ax.set_title("Spatial twist (ω, v): v is the velocity of the body point at O", fontsize=11)
    ax.set_aspect("equal")
    ax.set_xlim(-1.9, 4.6)
    ax.set_ylim(-0.6, 2.4)
    ax.axis("off")
    fig.tight_layout()
    OUT.parent.mkdir(exist_ok=True)
    fig.savefig(OUT, metadata={"Software": None})
    print(OUT)


if __name__ == "__main__":
    main()
