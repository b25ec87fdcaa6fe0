"""Print the inverse-dynamics jet of the aerial manipulator at one state.

    python -m experiments.demo [--order R]
"""

import argparse

import numpy as np

import liedyn
from models.aerial_manipulator import aerial_manipulator


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--order", type=int, default=3, help="highest derivative r (default 3)")
    args = ap.parse_args(argv)
    r = args.order
    model = aerial_manipulator()
    rng = np.random.default_rng(0)
    base_twist = rng.normal(size=(r + 2, 6)) * 0.5
    q = rng.normal(size=(r + 3, model.n_joints)) * 0.5
    res = liedyn.inverse_dynamics(model, np.eye(4), base_twist, q, r)
    np.set_printoptions(precision=4, suppress=True, linewidth=120)
    print(f"{model}: inverse dynamics up to order r = {r}")
    for k in range(r + 1):
        print(f"  k={k}  W0^({k}) = {res.base_wrench[k]}")
        print(f"       tau^({k}) = {res.tau[k]}")


if __name__ == "__main__":
    main()
