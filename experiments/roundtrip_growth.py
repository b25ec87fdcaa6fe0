"""Round-trip error of inverse then forward dynamics, per order r = 0..10.

    python -m experiments.roundtrip_growth            # quick: 6 samples per model
    python -m experiments.roundtrip_growth --full     # 40 samples per model

For random O(1) jets (every ``q^(k)``, ``V₀^(k)`` drawn from N(0, 1)),
``inverse_dynamics`` of order R = 10 gives the force jets ``(W₀, τ)^(0..R)``
and ``forward_dynamics`` fed them returns ``V₀^(1..R+1)``, ``q^(2..R+2)``.
For each output order r (``V₀^(r+1)``, ``q^(r+2)``) it reports

* ``err``: the round-trip error ``max_i |x̂_i − x_i| / (1 + |x_i|)``;
* ``floor``: the error that rounding the force jets to float64 alone causes,
  ``max_i Σ_m |∂x_i/∂f_m| u |f_m| / (1 + |x_i|)`` over every input force entry
  ``f_m`` (``u = eps/2``; the derivatives by finite differences of forward
  dynamics with steps of 1e-6 relative, where the map is linear to ~1e-6).
  Any float64 implementation of the round trip commits about this error;
* ``|f^(r)|``: the size of the force jets of order r, whose binomial sums
  grow by roughly 5–10× per order while the motion jets stay O(1);
* the growth factor of ``err`` per order (geometric mean over orders 1..R).

Models: the aerial manipulator (SPEC §8), a random floating-base tree and a
random fixed-base tree (7 bodies, revolute and prismatic joints, shuffled
parents, armature and damping). Writes ``paper_figures/roundtrip_growth.csv``
and ``paper_figures/roundtrip_growth.png`` (log axes); ``roundtrip_growth_full.*``
with ``--full``, ``--out DIR`` for another folder.
"""

import argparse
import csv
from pathlib import Path

import numpy as np

import liedyn
from experiments._table import output_stem
from models.aerial_manipulator import aerial_manipulator
from models.trees import random_tree

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"
MAX_ORDER = 10
QUICK_SAMPLES, FULL_SAMPLES = 6, 40
FD_STEP = 1e-6   # relative finite-difference step for ∂x/∂f in the floor

MODELS = {
    "aerial_manipulator": lambda rng: aerial_manipulator(),
    "random_floating": lambda rng: random_tree(rng, 7, armature=True, damping=True),
    "random_fixed": lambda rng: random_tree(rng, 7, floating_base=False, armature=True,
                                            damping=True),
}


def outputs(model, res):
    """Stack the solved jets of a forward-dynamics result: row r is
    ``(V₀^(r+1), q^(r+2))``, shape ``(order+1, 6 + n)`` (``n`` for a fixed base)."""
    X = res.q[2:]
    return np.concatenate([res.base_twist[1:], X], axis=1) if model.floating_base else X


def relative_error(actual, desired):
    """Per row: ``max_i |a_i − d_i| / (1 + |d_i|)``."""
    return np.max(np.abs(actual - desired) / (1.0 + np.abs(desired)), axis=1)


def input_rounding_floor(model, base_pose, base_twist, q, base_wrench, tau, order,
                         applied=None):
    """Output error, per order, caused by rounding the force jets to float64.

    Returns ``(order+1,)``: ``max_i Σ_m |∂x_i/∂f_m| u |f_m| / (1 + |x_i|)`` with
    ``x`` the stacked outputs (:func:`outputs`) and ``f`` every entry of
    ``tau`` and (floating base) ``base_wrench``.
    """
    u = np.finfo(float).eps / 2.0

    def solve(W, t):
        return outputs(model, liedyn.forward_dynamics(model, base_pose, base_twist, q, order,
                                                      tau=t, base_wrench=W, applied=applied))

    X = solve(base_wrench, tau)
    bound = np.zeros_like(X)
    forces = [("tau", np.asarray(tau, float))]
    if model.floating_base:
        forces.append(("base_wrench", np.asarray(base_wrench, float)))
    for name, f in forces:
        for idx in np.ndindex(f.shape):
            step = FD_STEP * (1.0 + abs(f[idx]))
            g = f.copy()
            g[idx] += step
            W, t = (g, tau) if name == "base_wrench" else (base_wrench, g)
            bound += np.abs(solve(W, t) - X) / step * u * abs(f[idx])
    return np.max(bound / (1.0 + np.abs(X)), axis=1)


def sample(model, rng, order):
    """One round trip: ``(err, floor, force_scale)``, each ``(order+1,)``."""
    n = model.n_joints
    q = rng.normal(size=(order + 3, n))
    Vb = rng.normal(size=(order + 2, 6)) if model.floating_base else None
    C0 = liedyn.se3.exp(rng.normal(size=6) * 0.7)
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, order)
    W = inv.base_wrench if model.floating_base else None
    V0 = Vb[:1] if model.floating_base else None
    fd = liedyn.forward_dynamics(model, C0, V0, q[:2], order, tau=inv.tau, base_wrench=W)
    desired = np.concatenate([Vb[1:], q[2:]], axis=1) if model.floating_base else q[2:]
    err = relative_error(outputs(model, fd), desired)
    floor = input_rounding_floor(model, C0, V0, q[:2], W, inv.tau, order)
    forces = np.concatenate([inv.base_wrench, inv.tau], axis=1) if model.floating_base else inv.tau
    return err, floor, np.max(np.abs(forces), axis=1)


def run(samples, order=MAX_ORDER, seed=0):
    """Per model: arrays ``err``, ``floor``, ``force`` of shape ``(samples, order+1)``."""
    out = {}
    for i, (name, make) in enumerate(MODELS.items()):
        rows = []
        for s in range(samples):
            rng = np.random.default_rng([seed, i, s])
            rows.append(sample(make(rng), rng, order))
        err, floor, force = (np.array(x) for x in zip(*rows))
        out[name] = dict(err=err, floor=floor, force=force)
    return out


def growth(per_order):
    """Geometric-mean factor per order of a positive sequence, orders 1..end."""
    x = np.maximum(per_order, 1e-300)
    return float(np.exp(np.mean(np.diff(np.log(x[1:]))))) if len(x) > 2 else float("nan")


def write_csv(results, path):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "order", "err_median", "err_max", "floor_median", "floor_max",
                    "err_over_floor_median", "force_scale_median", "samples"])
        for name, d in results.items():
            for r in range(d["err"].shape[1]):
                e, f = d["err"][:, r], d["floor"][:, r]
                w.writerow([name, r, f"{np.median(e):.3e}", f"{e.max():.3e}",
                            f"{np.median(f):.3e}", f"{f.max():.3e}",
                            f"{np.median(e / np.maximum(f, 1e-300)):.3g}",
                            f"{np.median(d['force'][:, r]):.3e}", e.size])


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for (name, d), color in zip(results.items(), ("C0", "C1", "C2")):
        r = np.arange(d["err"].shape[1])
        ax.semilogy(r, np.median(d["err"], axis=0), "o-", color=color,
                    label=f"{name}: round-trip error (median)")
        ax.semilogy(r, np.median(d["floor"], axis=0), "--", color=color,
                    label=f"{name}: float64 input-rounding floor")
    ax.set_xlabel("order r (outputs V₀^(r+1), q^(r+2))")
    ax.set_ylabel("error relative to 1 + |value|")
    ax.set_title("Inverse → forward dynamics round trip")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help=f"{FULL_SAMPLES} samples per model")
    ap.add_argument("--samples", type=int, help="samples per model (overrides --full)")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG")
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    args = ap.parse_args(argv)
    stem = output_stem(args, "roundtrip_growth")
    samples = args.samples or (FULL_SAMPLES if args.full else QUICK_SAMPLES)
    results = run(samples)
    print(f"Round trip inverse → forward dynamics, O(1) random jets, {samples} samples per model")
    print("err: max_i |x̂ − x| / (1 + |x|) (median over samples); floor: error from rounding "
          "the force jets alone")
    for name, d in results.items():
        print(f"\n{name}")
        print(f"{'r':>3} {'err med':>10} {'err max':>10} {'floor med':>10} {'err/floor':>10} "
              f"{'|f^(r)| med':>12}")
        for r in range(d["err"].shape[1]):
            e, f = d["err"][:, r], d["floor"][:, r]
            print(f"{r:>3} {np.median(e):>10.2e} {e.max():>10.2e} {np.median(f):>10.2e} "
                  f"{np.median(e / np.maximum(f, 1e-300)):>10.2f} "
                  f"{np.median(d['force'][:, r]):>12.2e}")
        print(f"growth per order: err ×{growth(np.median(d['err'], axis=0)):.1f}, "
              f"floor ×{growth(np.median(d['floor'], axis=0)):.1f}, "
              f"|f^(r)| ×{growth(np.median(d['force'], axis=0)):.1f}")
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(results, f"{stem}.csv")
    print(f"\nwrote {stem}.csv")
    if not args.no_plot:
        plot(results, f"{stem}.png")
        print(f"wrote {stem}.png")


if __name__ == "__main__":
    main()
