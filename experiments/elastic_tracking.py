"""Exact linearization of the aerial manipulator with elastic joints, and
exact compensation of rotor lag (SPEC §11), on the paper's reference motion.

    python -m experiments.elastic_tracking            # quick: 8 s, dt = 2 ms
    python -m experiments.elastic_tracking --full     # 30 s (the reference's horizon), dt = 1 ms

Elastic joints (Spong's model, stiffness ``K``, motor inertia ``B`` per
joint) on the floating aerial manipulator (SPEC §8), the base wrench
extended dynamically (``Ẅ₀`` the input). From a perturbed start the robot
follows the reference motion of SPEC §8 under

* **exact**: :class:`liedyn.control.ElasticJointLaw`, forward dynamics of
  orders 0–1 and inverse dynamics of order 2 per step, poles ``POLES``;
* **(a) rigid**: computed torque that ignores the elasticity: the rigid
  model with the motor angles taken as joint angles (inverse dynamics of
  order 0, ``u = τ + B q̈_cmd``, ``q̈_cmd`` of poles ``POLES[:2]``, base
  wrench applied directly); the links sag by ``K⁻¹ τ`` and the elastic modes
  ring undamped;
* **(b) no τ̈**: the torque-rate law (inverse dynamics of order 1, poles
  ``POLES[:3]``) that drops ``τ̈``: the motors make ``τ̇`` follow the commanded
  ``τ̇`` at the rate ``−POLES[3]``, ``τ̈ = λ (τ̇_cmd − τ̇)``, ``W₀`` extended once.

The same start and horizon for each; also the exact law started on the
reference (its error stays at integration round-off). The perturbed start
moves joints and motors together by ``DELTA_Q`` and the base by
``exp(DELTA_BASE)``, with the actuator states (``θ − q``, ``W₀``, ``Ẇ₀``) of
that configuration moving along the reference's jets, so the initial error
jets are ``(δ, 0, 0, 0)``.

Rotor lag: thrusts ``ḟ = (f_cmd − f)/T_m`` with ``T_m = 0.05 s``, joints in
torque rate, :class:`liedyn.control.RotorLagLaw` (inverse dynamics of order
1, poles ``ROTOR_POLES``) against a law that ignores the lag (computed torque
of order 0 with poles ``ROTOR_POLES[:2]``; ``f_cmd = A⁻¹ W^B``, and the joint
drives close ``τ̇ = (τ_cmd − τ)/T_m``), from the same perturbed start.

Reported per run: the largest joint error ``max_j |q_j − q_d,j|`` and base
error ``|log(C_d⁻¹ C₀)|`` over the second half of the horizon, the decay rate
fitted to ``log max_j |e_j|`` on ``FIT_WINDOW`` (designed: ``−max Re p``),
and the factor of every other law's second-half error over the exact law's.
The designed envelope of each error (SPEC §11.1) is
``Σ_i |α_i| e^{p_i t}`` with ``α`` from the initial error jets.

Writes to ``paper_figures/`` (``--out DIR`` for another folder; ``_full``
names with ``--full``): ``elastic_tracking.csv`` (one row per run),
``elastic_tracking.png`` (error per joint and of the base, log scale, with
the envelope) and ``elastic_tracking_rotor_lag.png``.
"""

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

import liedyn
from liedyn import State, control, se3, simulate
from experiments._table import output_stem
from models.aerial_manipulator import aerial_manipulator, allocation_matrix
from models.reference_motion import ReferenceMotion

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"

STIFFNESS = 25.0           # K, N m/rad: joint frequencies sqrt(K/I) ≈ 26–160 rad/s
MOTOR_INERTIA = 0.01       # B, kg m² (reflected rotor inertia)
POLES = (-2.0, -3.0, -4.0, -5.0)
ROTOR_POLES = (-2.0, -3.0, -4.0)
TIME_CONSTANT = 0.05       # T_m, s
DELTA_Q = 0.05 * np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])        # rad
DELTA_BASE = np.array([0.03, -0.03, 0.05, 0.05, -0.05, 0.03])        # (rad, m), spatial
FIT_WINDOW = (3.0, 8.0)    # s: the slowest mode dominates (the next is e^{-t} smaller)
QUICK = dict(horizon=8.0, dt=2e-3)         # the end of FIT_WINDOW
FULL = dict(horizon=30.0, dt=1e-3)


# ------------------------------------------------------------ reference --

def reference_target(reference, relative_degree):
    """``t ↦ Target`` with the jets a law of ``relative_degree`` reads. The
    last few targets are kept: RK4's stages share their times (``t + h/2``
    twice, ``t + h`` again as the next step's ``t``)."""
    rho = relative_degree
    memo = {}

    def target(t):
        T = memo.get(t)
        if T is None:
            if len(memo) >= 4:
                memo.clear()
            T = memo[t] = control.Target(q=reference.joint_jet(t, rho + 1),
                                         base_pose=reference.base_pose(t),
                                         base_twist=reference.base_twist_jet(t, rho))
        return T
    return target


def perturbed_start(law, target, delta_q=DELTA_Q, delta_base=DELTA_BASE):
    """State at ``t = 0`` moved by ``δ`` from the target, ``q = q_d + δ_q``
    and ``C₀ = exp(δ_b) C_d``, with the rest consistent
    (:meth:`liedyn.control.ElasticJointLaw.state_on`), so the initial error
    jets are ``(δ, 0, 0, …)``."""
    T0 = target(0.0)
    return law.state_on(T0, q=T0.q[0] + delta_q, base_pose=se3.exp(delta_base) @ T0.base_pose)


# ------------------------------------------------------- comparison laws --

class RigidComputedTorque:
    """(a) Computed torque on the rigid model, which takes the motor angles
    as the joint angles (the motor encoders; collocated): ``q̈_cmd`` from two
    poles on ``θ − q_d``, ``(W₀, τ)`` from inverse dynamics of order 0 at
    ``(θ, θ̇, q̈_cmd)``, motor torque ``u = τ + B q̈_cmd``, base wrench applied
    directly. ``state.extra = (θ, θ̇)``; input ``(u, W₀)``. (Fed the link
    angles instead, the feedback is non-collocated and excites the undamped
    elastic modes until the run diverges.)"""

    def __init__(self, model, stiffness, motor_inertia, poles, target):
        self.model, self.K, self.B = model, stiffness, motor_inertia
        self.target = target
        self.linearization = control.FeedbackLinearization(model, 2, poles)

    def __call__(self, t, state):
        n = self.model.n_joints
        x = state.extra
        lin = self.linearization.step(state.base_pose, state.base_twist.reshape(1, 6),
                                      x.reshape(2, n), self.target(t))
        return np.concatenate([lin.tau[0] + self.B * lin.q[2], lin.base_wrench[0]])

    def plant(self, t, state, u):
        n = self.model.n_joints
        x = state.extra
        tau = self.K * (x[:n] - state.q)
        return liedyn.Inputs(tau=tau, base_wrench=u[n:],
                             extra_rate=np.concatenate([x[n:], (u[:n] - tau) / self.B]))


class TorqueRateElastic:
    """(b) The relative-degree-3 law, which needs inverse dynamics of order 1
    only and drops ``τ̈``: ``τ̇_cmd`` and ``Ẇ₀`` from
    :class:`FeedbackLinearization` of degree 3; the motors track the torque
    rate, ``θ̈ = q̈ + K⁻¹ λ (τ̇_cmd − τ̇)``, so ``u = τ + B θ̈``.
    ``state.extra = (θ, θ̇, W₀)``; input ``(u, Ẇ₀)``."""

    def __init__(self, model, stiffness, motor_inertia, poles, rate, target):
        self.model, self.K, self.B, self.rate = model, stiffness, motor_inertia, rate
        self.target = target
        self.linearization = control.FeedbackLinearization(model, 3, poles)

    def __call__(self, t, state):
        n, K = self.model.n_joints, self.K
        x = state.extra
        tau = K * (x[:n] - state.q)
        dtau = K * (x[n:2 * n] - state.qd)
        lin = self.linearization.step(state.base_pose, state.base_twist.reshape(1, 6),
                                      np.stack([state.q, state.qd]), self.target(t),
                                      tau=tau.reshape(1, n), base_wrench=x[2 * n:].reshape(1, 6))
        theta_dd = lin.q[2] + self.rate * (lin.tau[1] - dtau) / K
        return np.concatenate([tau + self.B * theta_dd, lin.base_wrench[1]])

    def plant(self, t, state, u):
        n = self.model.n_joints
        x = state.extra
        tau = self.K * (x[:n] - state.q)
        return liedyn.Inputs(tau=tau, base_wrench=x[2 * n:],
                             extra_rate=np.concatenate([x[n:2 * n], (u[:n] - tau) / self.B,
                                                        u[n:]]))


class LagIgnoringLaw:
    """Computed torque of order 0 that takes thrusts and joint torques as
    instantaneous: ``f_cmd = A⁻¹ Ad_{C₀}ᵀ W₀``, and the joint drives close
    ``τ̇ = (τ_cmd − τ)/T_m``. Same state and input as
    :class:`liedyn.control.RotorLagLaw`."""

    def __init__(self, model, allocation, time_constant, poles, target):
        self.model, self.time_constant = model, time_constant
        self.allocation_inv = np.linalg.inv(allocation)
        self.target = target
        self.linearization = control.FeedbackLinearization(model, 2, poles)

    def __call__(self, t, state):
        lin = self.linearization.step(state.base_pose, state.base_twist.reshape(1, 6),
                                      np.stack([state.q, state.qd]), self.target(t))
        Wb = se3.Ad(state.base_pose).T @ lin.base_wrench[0]    # Ad_C₀ᵀ W₀: in the base frame
        return np.concatenate([self.allocation_inv @ Wb,
                               (lin.tau[0] - state.extra[6:]) / self.time_constant])


# ------------------------------------------------------------ analysis --

def errors(traj, reference):
    """Joint errors ``(T, n)`` and base errors ``log(C_d⁻¹ C₀)``, ``(T, 6)``."""
    eq = np.empty((len(traj.time), traj.q.shape[2]))
    eb = np.empty((len(traj.time), 6))
    for k, t in enumerate(traj.time):
        eq[k] = traj.q[k, 0] - reference.joint_jet(t, 1)[0]
        eb[k] = se3.log(se3.inv(reference.base_pose(t)) @ traj.base_pose[k])
    return eq, eb


def envelope_coefficients(poles, error_jet):
    """``α`` ``(k, …)`` with ``e(t) = Σ_i α_i e^{p_i t}`` for the initial error
    jet ``e^(0..k−1)`` ``(k, …)`` of ``e^(k) + Σ a_j e^(j) = 0`` (distinct
    poles): the Vandermonde system ``Σ_i α_i p_i^m = e^(m)(0)``."""
    p = np.asarray(poles, float)
    V = np.vander(p, len(p), increasing=True).T          # V[m, i] = p_i^m
    return np.linalg.solve(V, error_jet.reshape(len(p), -1)).reshape(error_jet.shape)


def envelope(poles, magnitude, t):
    """Designed bound ``Σ_i m_i e^{p_i t}``, ``(T, …)``, for ``m_i = |α_i|``
    (a scalar error) or ``‖α_i‖`` (a vector error), ``magnitude`` ``(k, …)``."""
    return np.exp(np.outer(t, np.asarray(poles, float))) @ magnitude


def decay_rate(t, e, window=FIT_WINDOW):
    """``−`` slope of the least-squares line through ``log e`` on ``window``."""
    sel = (t >= window[0]) & (t <= window[1])
    return -float(np.polyfit(t[sel], np.log(e[sel]), 1)[0])


# ------------------------------------------------------------------ runs --

def _with_extra(state, m):
    """``state`` with the first ``m`` actuator states (the comparison laws
    keep fewer controller states than the exact one)."""
    return State(base_pose=state.base_pose, base_twist=state.base_twist, q=state.q,
                 qd=state.qd, extra=state.extra[:m])


def laws(model, reference):
    """The five laws of the study: ``{name: (group, law, plant, extra size)}``."""
    n = model.n_joints
    target4, target3 = reference_target(reference, 4), reference_target(reference, 3)
    A = allocation_matrix()
    exact = control.ElasticJointLaw(model, STIFFNESS, MOTOR_INERTIA, POLES, target4)
    rigid = RigidComputedTorque(model, exact.stiffness, exact.motor_inertia, POLES[:2], target4)
    no_tau_dd = TorqueRateElastic(model, exact.stiffness, exact.motor_inertia, POLES[:3],
                                  -POLES[3], target4)
    rotor = control.RotorLagLaw(model, ROTOR_POLES, target3, allocation=A,
                                time_constant=TIME_CONSTANT)
    lag_ignoring = LagIgnoringLaw(model, A, TIME_CONSTANT, ROTOR_POLES[:2], target3)
    return {
        "exact": ("elastic", exact, exact.plant, 2 * n + 12),
        "(a) rigid computed torque": ("elastic", rigid, rigid.plant, 2 * n),
        "(b) no tau'' (order-1 law)": ("elastic", no_tau_dd, no_tau_dd.plant, 2 * n + 6),
        "rotor lag: exact": ("rotor", rotor, rotor.plant, 6 + n),
        "rotor lag: ignoring the lag": ("rotor", lag_ignoring, rotor.plant, 6 + n),
    }


def run_all(horizon, dt, progress=True):
    """Every law from the perturbed start and from the reference:
    ``{(name, start): dict(traj=, eq=, eb=, seconds=)}``, and the designed
    envelopes of the exact laws from the perturbed start."""
    model = aerial_manipulator()
    ref = ReferenceMotion()
    table_of_laws = laws(model, ref)
    exact = {"elastic": table_of_laws["exact"][1], "rotor": table_of_laws["rotor lag: exact"][1]}
    starts = {group: {"perturbed": perturbed_start(law, law.target),
                      "on the reference": law.state_on(law.target(0.0))}
              for group, law in exact.items()}
    out = {}
    for name, (group, law, plant, m) in table_of_laws.items():
        for start, state0 in starts[group].items():
            if progress:
                print(f"  simulating {name}, {start} ({horizon:g} s, dt = {dt:g} s)",
                      file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            traj = simulate(model, _with_extra(state0, m), horizon, dt=dt, controller=law,
                            plant=plant, progress=progress)
            seconds = time.perf_counter() - t0
            eq, eb = errors(traj, ref)
            out[name, start] = dict(group=group, traj=traj, eq=eq, eb=eb, seconds=seconds)
    env = {}
    for group, poles in (("elastic", POLES), ("rotor", ROTOR_POLES)):
        jets = exact[group].step(0.0, starts[group]["perturbed"]).jets        # SPEC §11.1
        env[group] = (envelope_coefficients(poles, jets.joint_error),
                      envelope_coefficients(poles, jets.base_error))
    return out, env


FIELDS = ["law", "start", "window", "joint_error", "base_error", "joint_error_end",
          "base_error_end", "decay_rate_joints", "decay_rate_base", "designed_rate",
          "factor_joints", "factor_base", "steps", "seconds"]


def table(out, horizon):
    """One row per run. Errors: the largest over the run from the reference,
    over its second half from the perturbed start (after the transient);
    factors against the exact law of the same group and start."""
    rows = []
    for (name, start), d in out.items():
        t = d["traj"].time
        sel = t >= horizon / 2.0 if start == "perturbed" else np.ones(t.size, bool)
        ej = np.max(np.abs(d["eq"]), axis=1)
        eb = np.linalg.norm(d["eb"], axis=1)
        exact = out["exact" if d["group"] == "elastic" else "rotor lag: exact", start]
        ej0 = np.max(np.abs(exact["eq"][sel]))
        eb0 = np.max(np.linalg.norm(exact["eb"][sel], axis=1))
        perturbed = start == "perturbed"
        rows.append(dict(
            law=name, start=start,
            window=f"{horizon / 2:g}-{horizon:g} s" if perturbed else f"0-{horizon:g} s",
            joint_error=float(ej[sel].max()), base_error=float(eb[sel].max()),
            joint_error_end=float(ej[-1]), base_error_end=float(eb[-1]),
            decay_rate_joints=decay_rate(t, ej) if perturbed else float("nan"),
            decay_rate_base=decay_rate(t, eb) if perturbed else float("nan"),
            designed_rate=-max(POLES if d["group"] == "elastic" else ROTOR_POLES),
            factor_joints=float(ej[sel].max() / ej0), factor_base=float(eb[sel].max() / eb0),
            steps=len(t) - 1, seconds=d["seconds"]))
    return rows


def write_csv(rows, path):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4e}" if isinstance(v, float) else v) for k, v in r.items()})


# ---------------------------------------------------------------- plots --

def _floor(x):
    """Errors for a log axis (exact zeros at t = 0 drawn at 1e-17)."""
    return np.maximum(x, 1e-17)


def plot(out, env, stem):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = ((("exact", "perturbed"), "C0", "-", "exact (order-2 inverse dynamics)"),
             (("(a) rigid computed torque", "perturbed"), "C3", "-", "(a) rigid computed torque"),
             (("(b) no tau'' (order-1 law)", "perturbed"), "C2", "-",
              r"(b) drops $\ddot\tau$ (order-1 law)"),
             (("exact", "on the reference"), "C0", ":", "exact, started on the reference"))
    alpha_q, alpha_b = env["elastic"]
    fig, axes = plt.subplots(2, 4, figsize=(15, 6.6), sharex=True)
    t = out["exact", "perturbed"]["traj"].time
    for j in range(6):
        ax = axes.flat[j]
        for key, c, ls, lab in lines:
            d = out[key]
            ax.semilogy(d["traj"].time, _floor(np.abs(d["eq"][:, j])), color=c, ls=ls, lw=1.0,
                        label=lab)
        ax.semilogy(t, envelope(POLES, np.abs(alpha_q[:, j]), t), "k--", lw=1.0,
                    label=r"designed envelope $\sum_i |\alpha_i|\, e^{p_i t}$")
        ax.set_title(f"joint $q_{j + 2}$: " + r"$|q - q_d|$ (rad)", fontsize=9)
    for k, (sl, what) in enumerate(((slice(0, 3), "rotation (rad)"),
                                    (slice(3, 6), "translation (m)"))):
        ax = axes.flat[6 + k]
        for key, c, ls, lab in lines:
            d = out[key]
            ax.semilogy(d["traj"].time, _floor(np.linalg.norm(d["eb"][:, sl], axis=1)), color=c,
                        ls=ls, lw=1.0, label=lab)
        ax.semilogy(t, envelope(POLES, np.linalg.norm(alpha_b[:, sl], axis=1), t), "k--",
                    lw=1.0)
        ax.set_title(r"base: $|\log(C_d^{-1} C_0)|$, " + what, fontsize=9)
    for ax in axes.flat:
        ax.grid(True, which="both", alpha=0.3)
        ax.set_ylim(1e-15, 1.0)
    for ax in axes[1]:
        ax.set_xlabel("t (s)")
    fig.legend(*axes.flat[0].get_legend_handles_labels(), loc="lower center", ncol=5,
               fontsize=8, frameon=False)
    fig.suptitle(f"Elastic-joint aerial manipulator on the reference motion: K = {STIFFNESS:g} "
                 f"N m/rad, B = {MOTOR_INERTIA:g} kg m², poles {tuple(POLES)}", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(f"{stem}.png", dpi=130)
    plt.close(fig)

    alpha_q, alpha_b = env["rotor"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for name, c, lab in (("rotor lag: exact", "C0", "exact (order-1 inverse dynamics)"),
                         ("rotor lag: ignoring the lag", "C3",
                          "ignoring the lag (order-0 computed torque)")):
        for start, ls in (("perturbed", "-"), ("on the reference", ":")):
            d = out[name, start]
            axes[0].semilogy(d["traj"].time, _floor(np.max(np.abs(d["eq"]), axis=1)), color=c,
                             ls=ls, label=f"{lab}, {start}")
            axes[1].semilogy(d["traj"].time, _floor(np.linalg.norm(d["eb"], axis=1)), color=c,
                             ls=ls, label=f"{lab}, {start}")
    tr = out["rotor lag: exact", "perturbed"]["traj"].time
    axes[0].semilogy(tr, np.max(envelope(ROTOR_POLES, np.abs(alpha_q), tr), axis=1), "k--",
                     label="designed envelope")
    axes[1].semilogy(tr, envelope(ROTOR_POLES, np.linalg.norm(alpha_b, axis=1), tr), "k--",
                     label="designed envelope")
    axes[0].set_title(r"joints: $\max_j |q_j - q_{d,j}|$ (rad)", fontsize=9)
    axes[1].set_title(r"base: $|\log(C_d^{-1} C_0)|$", fontsize=9)
    for ax in axes:
        ax.set_xlabel("t (s)")
        ax.set_ylim(1e-15, 1.0)
        ax.grid(True, which="both", alpha=0.3)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=8,
               frameon=False)
    fig.suptitle(f"Rotor lag $T_m$ = {TIME_CONSTANT:g} s and torque-rate joint drives, "
                 f"poles {tuple(ROTOR_POLES)}", fontsize=10)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(f"{stem}_rotor_lag.png", dpi=130)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true",
                    help=f"{FULL['horizon']:g} s with dt = {FULL['dt']:g} s "
                         f"(quick: {QUICK['horizon']:g} s, dt = {QUICK['dt']:g} s)")
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNGs")
    ap.add_argument("--no-progress", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    cfg = FULL if args.full else QUICK
    stem = output_stem(args, "elastic_tracking")
    out, env = run_all(cfg["horizon"], cfg["dt"], progress=not args.no_progress)
    rows = table(out, cfg["horizon"])
    print(f"Tracking the reference motion for {cfg['horizon']:g} s, dt = {cfg['dt']:g} s. "
          f"Errors: largest over the window; factor: over the exact law's, same start.")
    print(f"{'law':<28} {'start':<17} {'window':>8} {'joints':>9} {'base':>9} {'rate q':>7} "
          f"{'rate b':>7} {'design':>6} {'×joints':>9} {'×base':>9} {'s':>5}")
    for r in rows:
        print(f"{r['law']:<28} {r['start']:<17} {r['window']:>8} {r['joint_error']:>9.2e} "
              f"{r['base_error']:>9.2e} {r['decay_rate_joints']:>7.3f} "
              f"{r['decay_rate_base']:>7.3f} {r['designed_rate']:>6.1f} "
              f"{r['factor_joints']:>9.3g} {r['factor_base']:>9.3g} {r['seconds']:>5.1f}")
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, f"{stem}.csv")
    print(f"\nwrote {stem}.csv")
    if not args.no_plot:
        plot(out, env, stem)
        print(f"wrote {stem}.png, {stem}_rotor_lag.png")


if __name__ == "__main__":
    main()
