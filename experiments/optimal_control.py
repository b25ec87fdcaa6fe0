"""Optimal control with higher-order dynamics (SPEC §15.5): a point-to-point
manoeuvre of the aerial manipulator that minimises the actuator rates.

    python -m experiments.optimal_control            # quick: 10 intervals, under a minute
    python -m experiments.optimal_control --full     # 24 intervals, several minutes

The aerial manipulator (SPEC §8; floating base driven by its 6-D wrench W₀,
two 3-joint arms) moves in T seconds from rest at its start pose and arm
configuration to rest at ``C_start exp([ξ_goal])``, ``ξ_goal = (0, 0, 0.6,
1, 0, 0.5)`` (about 1 m ahead, 0.5 m up, yawed by 0.6 rad), with the arms
folded differently and ``|q_i| ≤ Q_MAX`` at the knots, minimising

    ∫ ‖τ̇‖² + ‖Ẇ_b‖² dt        subject to  |τ̇_i| ≤ TAU_RATE_MAX,

the rates of the actuator outputs that rotor lag (propellers) and elastic
joints make expensive; ``W_b = Ad_{C₀}ᵀ W₀`` is the base wrench in the base
frame, where the rotors are, and ``Ẇ_b = Ad_{C₀}ᵀ (Ẇ₀ + ad_{V₀}ᵀ W₀)``.
``τ̇`` and ``Ẇ₀`` are the order-1 rows of inverse dynamics of order 1, the
traced function of ``liedyn.symbolic`` (its
``pose="minimal"`` form, ``C₀ = C̄₀ exp([ξ])``) called inside a CasADi
``Opti`` problem solved by IPOPT with exact derivatives.

Transcription: ``ξ(t)`` and ``q(t)`` are quartic splines on a uniform grid
of K intervals with piecewise-constant fourth derivatives (the controls), so
their jets at the knots are exact; the base twist jet ``V₀, V̇₀, V̈₀``
follows from ``[V₀] = Ċ₀ C₀⁻¹`` by CasADi's forward AD of the exponential
along time. The cost is Simpson's rule on the integrand at the knots and
the interval midpoints, plus ``SNAP_WEIGHT ∫‖u‖²`` (``u`` the fourth
derivatives); the bound is imposed at the knots and the midpoints. As in any
direct transcription it may be exceeded between them: the CSV and the
figure give the rates along the whole spline (the kernels between points).

Checks of the optimised trajectory (printed, and in the CSV):
* at every knot, the traced function's ``W₀^(0..1)``, ``τ^(0..1)`` equal
  ``liedyn.inverse_dynamics`` of order 1 on the same jets (relative error);
* the base twist jets are the time derivatives of the pose: ``V₀`` against
  central differences of ``C₀(t)`` along the spline, and ``τ̇``, ``Ẇ₀``
  against central differences in time of the kernels' order-0 ``τ``, ``W₀``;
* the rate bound holds at the knots (and how far it is exceeded between
  them, from the kernels evaluated along the spline).

Writes ``paper_figures/optimal_control.csv`` and ``.png`` (``_full``).
"""

import sys
import time
from math import factorial

import numpy as np

import casadi as ca

import liedyn
from liedyn import se3
from liedyn import symbolic as lds
from liedyn.examples.aerial_manipulator import aerial_manipulator

from ._bench import parser, save
from ._provenance import stamp
from ._table import output_stem, write_rows

T = 3.0                     # s
TAU_RATE_MAX = 0.3          # N·m/s on every joint (active at the optimum)
XI_GOAL = np.array([0.0, 0.0, 0.6, 1.0, 0.0, 0.5])   # yaw 0.6 rad, 1 m ahead, 0.5 m up
Q_START = np.array([0.3, 0.8, -0.6, -0.3, 0.8, -0.6])
Q_GOAL = np.array([-0.4, 1.2, 0.4, 0.4, 1.2, 0.4])
Q_MAX = 2.0                 # rad: |q_i| ≤ Q_MAX (the arms' links must not wind up)
SNAP_WEIGHT = 1e-4          # a small ∫‖x⁗‖² term: no knot-to-knot oscillation
FIELDS = ("quantity", "value", "unit", "target", "met")


def base_twist_jet():
    """SX function ``(C̄₀, ξ, ξ̇, ξ̈, ξ⃛) → (3, 6)``: ``V₀, V̇₀, V̈₀`` of
    ``C₀(t) = C̄₀ exp([ξ(t)])`` (spatial, about the world origin)."""
    Cn = ca.SX.sym("Cn", 4, 4)
    x = [ca.SX.sym(f"x{i}", 6) for i in range(4)]
    E = lds.se3_exp(x[0])
    dE = ca.jtimes(E, x[0], x[1])
    Einv = ca.vertcat(ca.horzcat(E[:3, :3].T, -ca.mtimes(E[:3, :3].T, E[:3, 3])),
                      ca.horzcat(ca.SX.zeros(1, 3), ca.SX(1)))
    X = ca.mtimes(dE, Einv)                               # [J_l(ξ) ξ̇]
    Vl = ca.vertcat(X[2, 1], X[0, 2], X[1, 0], X[0, 3], X[1, 3], X[2, 3])
    R, p = Cn[:3, :3], Cn[:3, 3]
    ph = ca.vertcat(ca.horzcat(0, -p[2], p[1]), ca.horzcat(p[2], 0, -p[0]),
                    ca.horzcat(-p[1], p[0], 0))
    Ad = ca.vertcat(ca.horzcat(R, ca.SX.zeros(3, 3)), ca.horzcat(ca.mtimes(ph, R), R))
    V0 = ca.mtimes(Ad, Vl)
    state, rate = ca.vertcat(x[0], x[1], x[2]), ca.vertcat(x[1], x[2], x[3])
    V1 = ca.jtimes(V0, state, rate)
    V2 = ca.jtimes(V1, state, rate)
    return ca.Function("base_twist_jet", [Cn] + x, [ca.horzcat(V0, V1, V2).T])


def knot_function(model, C_nominal):
    """``(ξ jet (4, 6), q jet (4, n)) → (W₀ (2, 6), τ (2, n), V₀ jet (3, 6))``."""
    f = lds.inverse_dynamics_function(model, 1, pose="minimal")
    bt = base_twist_jet()
    n = model.n_joints
    xi = ca.SX.sym("xi", 4, 6)
    qj = ca.SX.sym("q", 4, n)
    V = bt(C_nominal, *[xi[i, :].T for i in range(4)])
    out = f(nominal_pose=C_nominal, xi=xi[0, :].T, base_twist=V, q=qj)
    # the base wrench in the base frame, W_b = Ad_{C₀}ᵀ W₀, and its rate
    # Ẇ_b = Ad_{C₀}ᵀ (Ẇ₀ + ad_{V₀}ᵀ W₀): what the rotors, fixed on the base, produce
    C0 = ca.mtimes(C_nominal, lds.se3_exp(xi[0, :].T))
    AdT = _adjoint(C0).T
    W0 = out["base_wrench"][0, :].T
    W1 = out["base_wrench"][1, :].T
    Wb = ca.horzcat(ca.mtimes(AdT, W0), ca.mtimes(AdT, W1 + _coad(V[0, :].T, W0))).T
    return ca.Function("knot", [xi, qj], [out["base_wrench"], out["tau"], V, Wb])


def _adjoint(C):
    R, p = C[:3, :3], C[:3, 3]
    ph = ca.vertcat(ca.horzcat(0, -p[2], p[1]), ca.horzcat(p[2], 0, -p[0]),
                    ca.horzcat(-p[1], p[0], 0))
    return ca.vertcat(ca.horzcat(R, ca.SX.zeros(3, 3)), ca.horzcat(ca.mtimes(ph, R), R))


def _coad(V, W):
    """``ad_Vᵀ W = −(ω × m + v × f, ω × f)``."""
    w, v, m, f = V[:3], V[3:], W[:3], W[3:]
    return -ca.vertcat(ca.cross(w, m) + ca.cross(v, f), ca.cross(w, f))


def _step(h):
    """``x_{k+1}^{(i)} = Σ_j x_k^{(j)} h^{j−i}/(j−i)! + u h^{4−i}/(4−i)!`` for
    a quartic with piecewise-constant fourth derivative ``u``."""
    A = np.zeros((4, 4))
    for i in range(4):
        for j in range(i, 4):
            A[i, j] = h ** (j - i) / factorial(j - i)
    b = np.array([h ** (4 - i) / factorial(4 - i) for i in range(4)])
    return A, b


def solve(model, K, C_start, verbose=False):
    n = model.n_joints
    h = T / K
    A, b = _step(h)
    knot = knot_function(model, C_start)
    opti = ca.Opti()
    XI = [opti.variable(4, 6) for _ in range(K + 1)]
    Q = [opti.variable(4, n) for _ in range(K + 1)]
    U = opti.variable(K, 6 + n)
    for k in range(K):
        opti.subject_to(XI[k + 1] == ca.mtimes(A, XI[k]) + ca.mtimes(b, U[k, :6]))
        opti.subject_to(Q[k + 1] == ca.mtimes(A, Q[k]) + ca.mtimes(b, U[k, 6:]))
    rest = np.zeros((3, 6))
    opti.subject_to(XI[0] == np.vstack([np.zeros(6), rest]))
    opti.subject_to(XI[K] == np.vstack([XI_GOAL, rest]))
    opti.subject_to(Q[0] == np.vstack([Q_START, np.zeros((3, n))]))
    opti.subject_to(Q[K] == np.vstack([Q_GOAL, np.zeros((3, n))]))
    # the integrand at the knots and at the interval midpoints (jets there are
    # linear in the knot's jets and the interval's control): Simpson's rule,
    # and the rate bound imposed at both
    Ah, bh = _step(h / 2)
    XIm = [ca.mtimes(Ah, XI[k]) + ca.mtimes(bh, U[k, :6]) for k in range(K)]
    Qm = [ca.mtimes(Ah, Q[k]) + ca.mtimes(bh, U[k, 6:]) for k in range(K)]
    pts = knot.map(2 * K + 1)
    order = [x for k in range(K) for x in (XI[k], XIm[k])] + [XI[K]]
    qorder = [x for k in range(K) for x in (Q[k], Qm[k])] + [Q[K]]
    _, tau, _, W = pts(ca.horzcat(*order), ca.horzcat(*qorder))   # (2, n(2K+1)), (2, 6(2K+1))
    Wd = ca.reshape(W[1, :], 6, 2 * K + 1)
    td = ca.reshape(tau[1, :], n, 2 * K + 1)
    w = np.zeros(2 * K + 1)
    w[0:-1:2] += h / 6
    w[2::2] += h / 6
    w[1::2] = 4 * h / 6
    rates = ca.mtimes(ca.sum1(Wd ** 2) + ca.sum1(td ** 2), ca.DM(w))
    cost = rates + SNAP_WEIGHT * h * ca.sumsqr(U)
    opti.minimize(cost)
    opti.subject_to(opti.bounded(-TAU_RATE_MAX, ca.vec(td), TAU_RATE_MAX))
    for k in range(1, K):
        opti.subject_to(opti.bounded(-Q_MAX, Q[k][0, :], Q_MAX))
    # initial guess: straight-line interpolation of the end points
    for k in range(K + 1):
        s = k / K
        sm = s * s * s * (10 - 15 * s + 6 * s * s)
        opti.set_initial(XI[k][0, :], sm * XI_GOAL)
        opti.set_initial(Q[k][0, :], Q_START + sm * (Q_GOAL - Q_START))
    opti.solver("ipopt", {"print_time": False, "expand": True},
                {"print_level": 5 if verbose else 0, "max_iter": 500, "tol": 1e-8,
                 "sb": "yes"})
    t0 = time.perf_counter()
    sol = opti.solve()
    seconds = time.perf_counter() - t0
    stats = opti.stats()
    xi = np.stack([sol.value(x) for x in XI])                 # (K+1, 4, 6)
    q = np.stack([np.atleast_2d(sol.value(x)) for x in Q])    # (K+1, 4, n)
    u = np.atleast_2d(sol.value(U))
    return dict(xi=xi, q=q, u=u, seconds=seconds, iterations=stats["iter_count"],
                status=stats["return_status"], cost=float(sol.value(cost)),
                rates=float(sol.value(rates)), knot=knot, h=h)


def _spline(res, t):
    """``ξ(t)``, ``q(t)`` (value rows only) on the optimised quartic spline."""
    h = res["h"]
    k = min(int(t // h), res["u"].shape[0] - 1)
    s = t - k * h
    coeff = [s ** j / factorial(j) for j in range(4)]
    xi = sum(c * res["xi"][k, j] for j, c in enumerate(coeff)) + s ** 4 / 24 * res["u"][k, :6]
    q = sum(c * res["q"][k, j] for j, c in enumerate(coeff)) + s ** 4 / 24 * res["u"][k, 6:]
    return xi, q


def check(model, C_start, res):
    """The checks of the module docstring; returns ``{name: value}``."""
    K = res["xi"].shape[0] - 1
    out = {}
    err_knots = 0.0
    for k in range(K + 1):
        W, tau, V, _ = (np.asarray(x.full()) for x in res["knot"](res["xi"][k], res["q"][k]))
        C0 = C_start @ se3.exp(res["xi"][k, 0])
        inv = liedyn.inverse_dynamics(model, C0, V, res["q"][k], 1)
        err_knots = max(err_knots,
                        np.max(np.abs(tau - inv.tau)) / (1 + np.max(np.abs(inv.tau))),
                        np.max(np.abs(W - inv.base_wrench)) / (1 + np.max(np.abs(inv.base_wrench))))
    out["traced vs kernels at the knots (max rel. error)"] = err_knots
    # time derivatives along the spline, inside intervals (the spline is C³)
    bt = base_twist_jet()
    dt = 1e-5
    errV, errR = 0.0, 0.0
    h = res["h"]
    for t in (np.arange(0, K, max(1, K // 7)) + 0.5) * h:      # mid-interval: the spline is smooth
        xi_p, _ = _spline(res, t + dt)
        xi_m, _ = _spline(res, t - dt)
        Cp, Cm = C_start @ se3.exp(xi_p), C_start @ se3.exp(xi_m)
        xi0, q0 = _spline(res, t)
        C0 = C_start @ se3.exp(xi0)
        X = (Cp - Cm) / (2 * dt) @ np.linalg.inv(C0)
        V_fd = np.array([X[2, 1], X[0, 2], X[1, 0], X[0, 3], X[1, 3], X[2, 3]])
        jets = _jets_at(res, t)
        V = np.asarray(bt(C_start, *jets[0]).full())
        errV = max(errV, np.max(np.abs(V[0] - V_fd)) / (1 + np.max(np.abs(V_fd))))
        f = []
        for s in (t + dt, t - dt):
            xs, qs = _jets_at(res, s)
            Vs = np.asarray(bt(C_start, *xs).full())
            inv = liedyn.inverse_dynamics(model, C_start @ se3.exp(xs[0]), Vs, qs, 0)
            f.append(np.concatenate([inv.tau[0], inv.base_wrench[0]]))
        inv = liedyn.inverse_dynamics(model, C0, V, jets[1], 1)
        rate_fd = (f[0] - f[1]) / (2 * dt)
        rate = np.concatenate([inv.tau[1], inv.base_wrench[1]])
        errR = max(errR, np.max(np.abs(rate - rate_fd)) / (1 + np.max(np.abs(rate_fd))))
    out["V0 vs central differences of the pose (max rel. error)"] = errV
    out["tau_dot, W0_dot vs central differences of tau, W0 (max rel. error)"] = errR
    td = np.stack([np.asarray(res["knot"](res["xi"][k], res["q"][k])[1].full())[1]
                   for k in range(K + 1)])
    out["max |tau_dot| (N m/s)"] = float(np.max(np.abs(td)))
    _, d = dense(model, C_start, res)
    out["max |tau_dot| along the spline, between the knots (N m/s)"] = float(
        np.max(np.abs(d["tau"][:, 1])))
    return out


def _jets_at(res, t):
    """``([ξ, ξ̇, ξ̈, ξ⃛], q jet (4, n))`` at time t on the spline."""
    h = res["h"]
    k = min(int(t // h), res["u"].shape[0] - 1)
    s = t - k * h
    out = []
    for X, u in ((res["xi"][k], res["u"][k, :6]), (res["q"][k], res["u"][k, 6:])):
        rows = []
        for i in range(4):
            v = sum(s ** (j - i) / factorial(j - i) * X[j] for j in range(i, 4))
            rows.append(v + s ** (4 - i) / factorial(4 - i) * u)
        out.append(rows)
    return out[0], np.stack(out[1])


def dense(model, C_start, res, per_interval=8):
    """Times, base positions, joints, ``τ``, ``τ̇`` and ``Ẇ_b`` along the spline,
    by the kernels (``liedyn.inverse_dynamics`` of order 1) between the knots."""
    K = res["xi"].shape[0] - 1
    bt = base_twist_jet()
    t = np.linspace(0, T, K * per_interval + 1)
    out = {k: [] for k in ("pos", "q", "tau", "Wb")}
    for s in t:
        xs, qs = _jets_at(res, min(s, T - 1e-12))
        V = np.asarray(bt(C_start, *xs).full())
        C0 = C_start @ se3.exp(xs[0])
        inv = liedyn.inverse_dynamics(model, C0, V, qs, 1)
        AdT = se3.Ad(C0).T
        W0, W1 = inv.base_wrench
        w, v = V[0, :3], V[0, 3:]
        coad = -np.concatenate([np.cross(w, W0[:3]) + np.cross(v, W0[3:]), np.cross(w, W0[3:])])
        out["pos"].append(C0[:3, 3])
        out["q"].append(qs[0])
        out["tau"].append(inv.tau)
        out["Wb"].append(np.stack([AdT @ W0, AdT @ (W1 + coad)]))
    return t, {k: np.array(v) for k, v in out.items()}


def plot(model, C_start, res, stem):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    K = res["xi"].shape[0] - 1
    t, d = dense(model, C_start, res)
    tk = np.linspace(0, T, K + 1)
    fig, ax = plt.subplots(2, 2, figsize=(12, 7.5), constrained_layout=True)
    for i, lab in enumerate("xyz"):
        ax[0, 0].plot(t, d["pos"][:, i], label=f"base {lab} (m)")
    for i in range(model.n_joints):
        ax[0, 0].plot(t, d["q"][:, i], ":", lw=1.2, label=f"q {model.joint_names[i]} (rad)")
    ax[0, 0].set_title("(a) base position and joint angles")
    ax[0, 0].legend(fontsize=6, ncol=2)
    for i in range(model.n_joints):
        ax[0, 1].plot(t, d["tau"][:, 1, i], color=f"C{i}", label=model.joint_names[i])
        ax[0, 1].plot(tk, [np.asarray(res["knot"](res["xi"][k], res["q"][k])[1].full())[1, i]
                           for k in range(K + 1)], "o", ms=3, color=f"C{i}")
    ax[0, 1].axhline(TAU_RATE_MAX, color="k", ls="--", lw=0.8)
    ax[0, 1].axhline(-TAU_RATE_MAX, color="k", ls="--", lw=0.8)
    ax[0, 1].set_title("(b) joint torque rates τ̇ (N·m/s): kernels along the spline, "
                       "traced at the knots (dots); the bound", fontsize=9)
    ax[0, 1].legend(fontsize=7)
    for i, lab in enumerate(("ṁx", "ṁy", "ṁz", "ḟx", "ḟy", "ḟz")):
        ax[1, 0].plot(t, d["Wb"][:, 1, i], label=lab)
    ax[1, 0].set_title("(c) base wrench rate in the base frame (N·m/s, N/s)")
    ax[1, 0].legend(fontsize=7)
    for i in range(model.n_joints):
        ax[1, 1].plot(t, d["tau"][:, 0, i], label=model.joint_names[i])
    ax[1, 1].set_title("(d) joint torques τ (N·m)")
    for a in ax.flat:
        a.set_xlabel("t (s)")
    fig.suptitle(f"aerial manipulator, 3 s rest to rest: min ∫‖τ̇‖² + ‖Ẇ_b‖² dt, "
                 f"|τ̇| ≤ {TAU_RATE_MAX} N·m/s, K = {K}, IPOPT {res['seconds']:.1f} s")
    return save(fig, stem)


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--verbose", action="store_true", help="IPOPT's iteration log")
    ap.add_argument("--intervals", type=int, default=None, help="K (default 10, 24 with --full)")
    args = ap.parse_args(argv)
    K = args.intervals or (24 if args.full else 10)
    model = aerial_manipulator()
    C_start = np.eye(4)
    C_start[2, 3] = 1.0
    t0 = time.perf_counter()
    res = solve(model, K, C_start, args.verbose)
    total = time.perf_counter() - t0
    print(f"IPOPT: {res['status']}, {res['iterations']} iterations, solve {res['seconds']:.2f} s "
          f"(with problem construction {total:.2f} s), cost {res['cost']:.4g}")
    checks = check(model, C_start, res)
    rows = [dict(quantity="intervals K", value=K, unit=""),
            dict(quantity="IPOPT status", value=res["status"], unit=""),
            dict(quantity="IPOPT iterations", value=res["iterations"], unit=""),
            dict(quantity="solve time", value=res["seconds"], unit="s"),
            dict(quantity="solve time with construction", value=total, unit="s"),
            dict(quantity="cost", value=res["cost"], unit=""),
            dict(quantity="integral of |tau_dot|^2 + |Wb_dot|^2", value=res["rates"], unit="")]
    limits = {"traced vs kernels at the knots (max rel. error)": 1e-12,
              "V0 vs central differences of the pose (max rel. error)": 1e-8,
              "tau_dot, W0_dot vs central differences of tau, W0 (max rel. error)": 1e-7,
              "max |tau_dot| (N m/s)": TAU_RATE_MAX * (1 + 1e-6)}
    for name, v in checks.items():
        row = dict(quantity=name, value=v, unit="")
        if name in limits:
            row.update(target=limits[name], met="yes" if v <= limits[name] else "no")
        rows.append(row)
        print(f"  {name}: {v:.3e}")
    stem = output_stem(args, "optimal_control")
    stem.parent.mkdir(parents=True, exist_ok=True)
    write_rows(f"{stem}.csv", FIELDS, rows, stamp=stamp())
    png = plot(model, C_start, res, stem)
    print(f"wrote {stem}.csv and {png}")
    return 0 if res["status"] == "Solve_Succeeded" else 1


if __name__ == "__main__":
    sys.exit(main())
