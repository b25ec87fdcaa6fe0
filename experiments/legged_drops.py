"""Go2 and Solo-12 dropped onto their four feet with friction, then standing,
on point feet and on round feet with their joint stops: the contact and stop
invariants of SPEC §10.2 at every sample, the energy balance of the whole
run, and the first touch-down against ``event_tol``.

    python -m experiments.legged_drops                  # quick: 1 s runs (about 2 minutes)
    python -m experiments.legged_drops --full           # 2 s runs
    python -m experiments.legged_drops --duration 0.2   # any duration past the landing
    python -m experiments.legged_drops --knee-duration 0.25  # part 3 shorter (it closes at 0.21 s)

The robots (``models/quadruped_drops.py``): Go2 (example-robot-data's
``go2.urdf``, μ = 0.8, PD gains ``K_p = 40``, ``K_d = 1``) and Solo-12
(μ = 0.7, ``K_p = 10``, ``K_d = 0.2``), each at its standing posture
``q_s``, at rest, its lowest foot ``h = DROP`` above the ground; a
``PointContact`` (radius 0) at each foot, restitution 0; the joints held by
``τ = K_p (q_s − q) − K_d q̇``. ``liedyn.simulate(contacts=…)`` at
``dt = DT`` for the run's duration, ``event_tol = EVENT_TOL``.

**1. The run** (per robot): the events by kind, the real-time factor
``wall time / simulated time`` (above 1: slower than real time) with the
machine's 1-minute load average before and after, and each invariant's
worst value over every sample, against the bounds SPEC §10.2 states
(``ε_F = 1e-9 m g``):

* a sticking contact's force against its cone, ``max ‖f_t‖ − μ f_n`` ≤ ``4 ε_F``;
* a closed (held) contact's normal force, ``min f_n`` ≥ ``−4 ε_F``;
* an open contact's gap, ``min φ`` ≥ ``−(|φ̇| event_tol + ½ g event_tol²)``
  with ``|φ̇| = √(2 g h)``, the speed of the first landing, the fastest (the
  feet never rise far after it);
* the held contacts' ``|φ|`` at the sample right after each switch ≤ 1e-9 m;
* a sliding contact's friction against its slip velocity ``v_t``: it opposes
  ``v_t + a s₀`` with ``0 ≤ a ≤ SLIP_TOL``, or stays at ``−s₀`` once the
  slip turns against ``s₀``, where the contact sticks (an event, located to
  ``event_tol``, so the slip left there is round-off), so its power
  ``F_t · v_t ≤ μ λ_n SLIP_TOL`` (this is what makes the friction term of
  the energy balance a dissipation);
* at the end (reported): the kinetic energy and the vertical contact forces
  against ``m g``.

**Energy balance.** ``E = T + U + ½ K_p ‖q − q_s‖²`` (kinetic energy
``½ νᵀ M ν`` and potential ``−m g⃗ᵀ c`` of ``liedyn.centroidal``, and the
PD law's spring). Over the run ``E(end) − E(0) = −D`` with the dissipation

    D = Σ_events energy_loss  +  ∫ K_d ‖q̇‖² dt  +  ∫ Σ_sliding μ λ_n ‖v_t‖ dt,

the impact losses the events report, the PD law's damping, and the Coulomb
friction of the sliding contacts (``v_t`` the foot's velocity along the
ground, ``λ_n`` its normal force). Held contacts do no work (their points do
not move), nor do the normal forces of sliding ones (``v_n = 0``). The
integrals are trapezoids over the samples (an event's two samples share its
time, so an impact's jump falls in an interval of zero width). The
tolerance is the trapezoid rule's own error bound, ``Σ h |Δ²f| / 12`` over
the samples within each segment between events (the leading term
``h³ |f''| / 12`` per interval with ``f''`` from second differences, summed in
absolute value), plus the friction law's regularisation: a slide's friction
opposes ``v_t + a s₀``, ``0 ≤ a ≤ SLIP_TOL`` (SPEC §10.2), not ``v_t``, which changes its
power by at most ``2 μ λ_n SLIP_TOL`` while sliding. The balance is also
reported (without a target) with the friction's dissipation computed from
the recorded force, ``∫ Σ −F_t · v_t dt``: where the friction does not
oppose the slip, the two differ, and this one locates the residual. Not in the balance:
the integrator's error (RK4, ``O(dt⁴)`` per unit time, far below the
quadrature's ``O(dt²)``) and the projections onto the held contacts,
which are among the residual's sources.

**2. Event tolerance sweep** (per robot): ``event_tol`` in ``TOLERANCES``,
each over the whole run: whether it runs to the end, the number of
events, the first touch-down time minus ``√(2h/g)`` (target: within
``[0, event_tol]``), the wall time.

**3. A knee driven into its stop** (Go2, standing on its round feet of part
4 with friction, ``quick``/``--full`` alike): the PD target of the front-left calf joint is
ramped in ``KNEE_RAMP`` s from its standing angle to ``KNEE_TARGET``, past
its URDF upper limit, with that joint's stop as a unilateral event
(``joint_stops=True``: every joint's URDF limits, ``stop_restitution=0``). The
knee closes on its stop (an event), is held there, and the stop pushes
back. The stop's reaction is checked at every sample where it is held
against the joint's equation of motion by another algorithm:
``s λ = τ_ID,j − τ_j``, with ``τ_ID`` the recursive Newton–Euler inverse
dynamics (``liedyn.inverse_dynamics``) of the recorded motion and
accelerations with the recorded contact forces applied at the feet's
touching points (``ρ`` below the spheres' centres), ``τ`` the PD torque and ``s = −1`` for an upper stop; and the stop's gap while
held (``|q_j − limit|``).

**4. Round feet and joint stops** (per robot, the run's duration, part
``round feet + stops``): the drop of part 1 on spheres
(``Drop(round_feet=True, joint_stops=True)``, ``models/quadruped_drops.py``)
of the radius read from each foot's collision mesh in its URDF (Go2
22.7 mm, Solo-12 16.0 mm; the contact frame is the foot frame, at the
sphere's centre), with every joint's URDF limits as stops (restitution 0).
The rows of part 1 and its energy balance, where for a round foot the gap is
the sphere's, ``φ = z_c − ρ``, the cone is on the force at its touching
point ``c − ρ n``, a sticking foot rolls (its material point at the touching
point is held: no work) and a sliding one's slip velocity is that material
point's, ``ċ + ρ n × ω``; and the stops' worst values over every sample:
an open stop's gap against ``−(|q̇|max event_tol + ½ |q̈|max event_tol²)``
(the run's fastest joint), its force exactly 0, a closed stop's force
``≥ −4 ε_F · 1 m``, a held stop's ``|φ|`` after each switch ≤ 1e-9 rad, and
the closest approach to a stop. These drops close no stop (Go2's knees stay
0.6 rad from their limits; Solo-12's are ±10 rad): they are watched through
every event and reported; part 3 closes one.

**5. Figure** (one row per robot and part): normal and tangential forces per foot
with the events marked, the contact modes (and the stops that close), the
kinetic energy.

Writes to ``paper_figures/`` (``--out DIR`` elsewhere, ``_full`` names with
``--full``): ``legged_drops.csv`` (values and targets, met or missed, with
the machine and code version) and ``legged_drops.png``.
"""

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

import liedyn as ld
from models.quadruped_drops import Drop

from ._provenance import stamp
from ._table import output_stem, write_rows
from ._timing import LOAD_FIELDS, load_columns, machine_load

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"

ROBOT_ORDER = ("go2", "solo12")
DROP = 0.10                   # m: h, the lowest foot above the ground at the start
DT = 1e-3                     # s
EVENT_TOL = 1e-10             # s: the run of part 1
TOLERANCES = (1e-12, 1e-9, 1e-6, 1e-4, 1e-3)
FORCE_BOUND = 4e-9            # times m g: 4 ε_F, where the forces' events are located (SPEC §10.2)
HELD_GAP = 1e-9               # m: the held contacts' |φ| after a switch (SPEC §10.2)
SLIP_TOL = 1e-6               # m/s: the friction law's regularisation (SPEC §10.2)

KNEE = ("go2", "FL_calf_joint")  # the robot and joint of part 3
KNEE_TARGET = -0.5            # rad: the PD target, past the calf's upper limit (-0.838)
KNEE_RAMP = 0.2               # s: the target's linear ramp from the standing angle
KNEE_DURATION = 0.4           # s
KNEE_TOL = 1e-8               # times m g (N m): the reaction check's bound (round-off of the solve)

QUICK = dict(duration=1.0)
FULL = dict(duration=2.0)

ROUND = "round feet + stops"  # the part dropped on round feet with the joint stops

OPEN, CLOSED, STICKING, SLIDING = 0, 1, 2, 3
KINDS = ("touch-down", "lift-off", "slip", "stick")


# ================================================================ analysis ==

def energies(drop, traj):
    """``(T, U, S)`` per sample: kinetic, gravitational and PD-spring energy."""
    n = len(traj)
    T, U = np.empty(n), np.empty(n)
    for k in range(n):
        c = ld.centroidal(drop.model, traj.base_pose[k], traj.base_twist[k], traj.q[k], 0)
        T[k], U[k] = c.kinetic_energy[0], c.potential_energy[0]
    S = 0.5 * drop.kp * np.sum((traj.q[:, 0] - drop.q) ** 2, axis=1)
    return T, U, S


def slip_velocities(drop, traj):
    """``v_t (T, nc, 2)``: each foot's slip velocity along the ground at the
    samples where it slides (0 elsewhere): that of its material point at the
    touching point, ``ċ + ρ n × ω`` (SPEC §10.2; ``ċ`` for a point foot)."""
    out = np.zeros(traj.contact_mode.shape + (2,))
    n = np.array([0.0, 0.0, 1.0])
    for k, c in zip(*np.nonzero(traj.contact_mode == SLIDING)):
        fk = ld.frame_kinematics(drop.model, traj.base_pose[k], traj.base_twist[k], traj.q[k], 0,
                                 drop.feet[c])
        v = fk.position[1] + drop.radius * np.cross(n, fk.twist[0, :3])
        out[k, c] = v[:2]
    return out


def segments(t):
    """The index ranges ``[a, b)`` of the samples between zero-width
    intervals (an event's two samples share its time)."""
    cuts = np.nonzero(np.diff(t) == 0.0)[0] + 1
    edges = np.concatenate([[0], cuts, [len(t)]])
    return [(a, b) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def trapezoid(t, f):
    """``(∫ f dt, error bound)``: the trapezoid rule over the samples and
    ``Σ h |Δ²f| / 12`` within each segment (the leading term of its error,
    ``h³ |f''| / 12`` per interval, with ``f''`` from second differences)."""
    integral = float(np.sum(0.5 * np.diff(t) * (f[1:] + f[:-1])))
    bound = 0.0
    for a, b in segments(t):
        if b - a >= 3:
            h = np.diff(t[a:b])
            d2 = f[a + 2:b] - 2.0 * f[a + 1:b - 1] + f[a:b - 2]
            bound += float(np.sum(0.5 * (h[1:] + h[:-1]) * np.abs(d2))) / 12.0
    return integral, bound


def analyse(drop, traj, event_tol):
    """The invariants, the events and the energy balance of one run."""
    g, mg = drop.gravity, drop.weight
    F, mode, gap = traj.contact_force, traj.contact_mode, traj.gap
    fn = F[..., 2]
    ft = np.linalg.norm(F[..., :2], axis=-1)
    stick, closed, open_ = mode == STICKING, mode > OPEN, mode == OPEN
    after = sorted({e.sample + 1 for e in traj.events if e.sample + 1 < len(traj)})
    held = np.abs(gap[after][closed[after]])
    v_land = math.sqrt(2.0 * g * drop.drop)
    out = dict(
        events={k: sum(e.kind == k for e in traj.events) for k in KINDS},
        n_events=len(traj.events), samples=len(traj), end=float(traj.time[-1]),
        cone=float(np.max((ft - drop.mu * fn)[stick])) if stick.any() else -np.inf,
        fn_min=float(np.min(fn[closed])) if closed.any() else np.inf,
        gap_min=float(np.min(gap[open_])) if open_.any() else np.inf,
        gap_bound=-(v_land * event_tol + 0.5 * g * event_tol ** 2),
        held_gap=float(np.max(held)) if held.size else 0.0,
        switches=len(after))
    T, U, S = energies(drop, traj)
    t = traj.time
    damping, damping_err = trapezoid(t, drop.kd * np.sum(traj.q[:, 1] ** 2, axis=1))
    lam = np.where(mode == SLIDING, fn, 0.0)
    v_t = slip_velocities(drop, traj)
    friction, friction_err = trapezoid(t, drop.mu * np.sum(lam * np.linalg.norm(v_t, axis=-1),
                                                           axis=1))
    # the friction's power F_t . v_t: at most mu lam_n SLIP_TOL (it opposes v_t + a s0, a <= SLIP_TOL)
    work = np.einsum("kci,kci->kc", F[..., :2], v_t)
    power = work - drop.mu * np.abs(lam) * SLIP_TOL
    sliding = mode == SLIDING
    applied, _ = trapezoid(t, -np.sum(work, axis=1))
    # the power the applied friction -mu lam_n (v_t + SLIP_TOL s0)/|...| really has differs
    # from mu lam_n |v_t| by at most 2 mu lam_n SLIP_TOL
    regular, _ = trapezoid(t, 2.0 * drop.mu * SLIP_TOL * np.sum(np.abs(lam), axis=1))
    impacts = float(sum(e.energy_loss for e in traj.events))
    E = T + U + S
    dissipated = impacts + damping + friction
    out.update(
        T=T, E=E, T_end=float(T[-1]), dE=float(E[-1] - E[0]), impacts=impacts, damping=damping,
        friction=friction, dissipated=dissipated, residual=float(E[-1] - E[0] + dissipated),
        applied=applied, residual_applied=float(E[-1] - E[0] + impacts + damping + applied),
        balance_tol=damping_err + friction_err + regular, quadrature=damping_err + friction_err,
        regularisation=regular,
        weight_err=float(abs(fn[-1].sum() - mg) / mg),
        power=float(np.max(power[sliding])) if sliding.any() else -np.inf,
        power_at=float(traj.time[np.nonzero(sliding)[0][np.argmax(power[sliding])]])
        if sliding.any() else np.nan)
    if traj.stop_names:
        out.update(stop_invariants(drop, traj, event_tol, after))
    return out


def stop_invariants(drop, traj, event_tol, after):
    """The joint stops' worst values over every sample (SPEC §10.2): an open
    stop's gap against ``−(|q̇|_max event_tol + ½ |q̈|_max event_tol²)``
    (the most a located touch-down leaves, with the run's fastest joint), a
    closed stop's force ``λ ≥ −4 ε_F · 1 m`` and an open one's exactly 0,
    a held stop's ``|φ|`` right after each switch; the closest approach to a
    stop and the largest reaction."""
    m = drop.model
    joints = [m.joint_names.index(name.split(":")[1]) for name in traj.stop_names]
    lam, mode, gap = traj.stop_force, traj.stop_mode, traj.stop_gap
    closed, open_ = mode > OPEN, mode == OPEN
    qd = float(np.max(np.abs(traj.q[:, 1, joints])))
    qdd = float(np.max(np.abs(traj.joint_acceleration[:, joints])))
    held = np.abs(gap[after][closed[after]])
    stops = {e.contact for e in traj.events} & set(traj.stop_names)
    return dict(
        n_stops=len(traj.stop_names), stop_events=sum(e.contact in stops for e in traj.events),
        stops_closed=len(stops),
        stop_gap_min=float(np.min(gap[open_])) if open_.any() else np.inf,
        stop_gap_bound=-(qd * event_tol + 0.5 * qdd * event_tol ** 2),
        stop_closest=float(np.min(gap)),
        stop_closest_name=traj.stop_names[int(np.argmin(np.min(gap, axis=0)))],
        stop_lam_min=float(np.min(lam[closed])) if closed.any() else np.inf,
        stop_lam_open=float(np.max(np.abs(lam[open_]))) if open_.any() else 0.0,
        stop_lam_max=float(np.max(lam)) if closed.any() else 0.0,
        stop_held_gap=float(np.max(held)) if held.size else 0.0)


def completed(run, *args, **kw):
    """``(trajectory, None, wall seconds)``, or the samples up to a
    :class:`liedyn.SimulationError` and its message."""
    t0 = time.perf_counter()
    try:
        traj, msg = run(*args, **kw), None
    except ld.SimulationError as err:
        traj, msg = err.trajectory, f"stopped at t = {err.time:.9g} s: {err}"
    return traj, msg, time.perf_counter() - t0


def first_touch_down(drop, traj):
    """``t₁ − √(2h/g)`` of the run's first event when it is a touch-down."""
    downs = [e for e in traj.events if e.kind == "touch-down"]
    if not downs:
        return np.nan
    return downs[0].time - math.sqrt(2.0 * drop.drop / drop.gravity)


def knee_stop(duration=KNEE_DURATION, progress=False):
    """Part 3: ``(drop, traj, result)`` of the knee driven into its stop."""
    robot, joint = KNEE
    drop = Drop(robot, 0.0, round_feet=True, joint_stops=True)
    m = drop.model
    j = m.joint_names.index(joint)
    q_s, kp, kd = drop.q, drop.kp, drop.kd
    target = q_s.copy()
    target[j] = KNEE_TARGET

    def law(t, s):
        q_t = q_s + (target - q_s) * min(t / KNEE_RAMP, 1.0)
        return ld.Inputs(tau=kp * (q_t - s.q) - kd * s.qd)
    traj = ld.simulate(m, drop.standing(), duration, dt=DT, contacts=drop.contacts,
                       friction=drop.mu, restitution=0.0, controller=law, event_tol=EVENT_TOL,
                       joint_stops=drop.joint_stops, stop_restitution=0.0, progress=progress)
    name = f"stop:{joint}:upper"
    i = traj.stop_names.index(name)
    limit = float(m.joint_upper[j])
    held = traj.stop_mode[:, i] > OPEN
    # the joint's equation of motion by inverse dynamics, the contact forces applied at the
    # feet's touching points, rho below their centres
    body = np.array(m.frame_body)[[m.frame_names.index(f) for f in drop.feet]]
    reaction = np.full(len(traj), np.nan)
    for k in np.nonzero(held)[0]:
        W = np.zeros((1, m.n_bodies, 6))
        for c, b in enumerate(body):
            p = ld.frame_pose(m, traj.base_pose[k], traj.q[k, 0], drop.feet[c])[:3, 3]
            p = p - drop.radius * np.array([0.0, 0.0, 1.0])
            F = traj.contact_force[k, c]
            W[0, b] += np.concatenate([np.cross(p, F), F])
        V = np.vstack([traj.base_twist[k], traj.base_acceleration[k][None]])
        q = np.vstack([traj.q[k], traj.joint_acceleration[k][None]])
        tau_id = ld.inverse_dynamics(m, traj.base_pose[k], V, q, 0, applied=W).tau[0, j]
        reaction[k] = -(tau_id - traj.tau[k, 0, j])                 # s = -1: an upper stop
    lam = traj.stop_force[:, i]
    closes = [e for e in traj.events if e.kind == "touch-down" and e.contact == name]
    return drop, traj, dict(
        joint=joint, limit=limit, held_from=closes[0].time if closes else np.nan,
        held_samples=int(held.sum()), lam_end=float(lam[-1]),
        lam_max=float(np.max(lam)) if held.any() else 0.0,
        reaction_err=float(np.nanmax(np.abs(reaction - lam))) if held.any() else np.inf,
        gap_held=float(np.max(np.abs(traj.q[held, 0, j] - limit))) if held.any() else np.inf,
        q_min_gap=float(np.min(limit - traj.q[:, 0, j])), n_events=len(traj.events),
        end=float(traj.time[-1]))


# ================================================================== rows ==

FIELDS = ["robot", "part", "quantity", "value", "unit", "target", "met", *LOAD_FIELDS]


def _row(robot, part, quantity, value, unit, target=None, met=None, **extra):
    return dict(robot=robot, part=part, quantity=quantity, value=value, unit=unit,
                target="" if target is None else target,
                met="" if met is None else ("yes" if met else "no"), **extra)


def run_rows(robot, drop, res, wall, load, duration, stopped, part="run", energy="energy"):
    mg, r = drop.weight, []
    p = part
    r.append(_row(robot, p, f"runs to the end ({duration:g} s)"
                  + ("" if stopped is None else f" ({stopped})"), "", "", None, stopped is None))
    for k in KINDS:
        r.append(_row(robot, p, f"events: {k}", res["events"][k], "count"))
    r.append(_row(robot, p, "wall time", wall, "s", **load))
    r.append(_row(robot, p, "real-time factor (wall time / simulated time)",
                  wall / max(res["end"], 1e-300), "", **load))
    bound = FORCE_BOUND * mg
    r.append(_row(robot, p, "sticking force against its cone, max |f_t| - mu f_n", res["cone"],
                  "N", bound, res["cone"] <= bound))
    r.append(_row(robot, p, "sticking force against its cone, max (|f_t| - mu f_n) / (m g)",
                  res["cone"] / mg, "", FORCE_BOUND))
    r.append(_row(robot, p, "closed contact's normal force, min", res["fn_min"], "N", -bound,
                  res["fn_min"] >= -bound))
    r.append(_row(robot, p, "closed contact's normal force, min / (m g)", res["fn_min"] / mg, "",
                  -FORCE_BOUND))
    r.append(_row(robot, p, "open contact's gap, min", res["gap_min"], "m", res["gap_bound"],
                  res["gap_min"] >= res["gap_bound"]))
    r.append(_row(robot, p, f"held contacts' |gap| right after each of {res['switches']} "
                            "switches, max", res["held_gap"], "m", HELD_GAP,
                  res["held_gap"] <= HELD_GAP))
    r.append(_row(robot, p, "sliding friction's power against the slip, max F_t . v_t - "
                            "mu lambda_n SLIP_TOL", res["power"], "W", 0.0, res["power"] <= 0.0))
    r.append(_row(robot, p, "time of that maximum", res["power_at"], "s"))
    r.append(_row(robot, p, "kinetic energy at the end", res["T_end"], "J"))
    r.append(_row(robot, p, "vertical contact forces at the end against m g, relative error",
                  res["weight_err"], ""))
    if "n_stops" in res:
        r += stop_rows(robot, p, res, mg)
    p = energy
    for name, text in (("dE", "change of T + U + PD spring energy over the run"),
                       ("impacts", "impact losses reported by the events"),
                       ("damping", "PD damping work, integral of K_d |qdot|^2 dt"),
                       ("friction", "friction dissipation, integral of sum mu lambda_n |v_t| dt "
                                    "over sliding contacts"),
                       ("quadrature", "trapezoid error bound of the two integrals"),
                       ("regularisation", "friction regularisation bound, integral of "
                                          "2 mu lambda_n SLIP_TOL dt")):
        r.append(_row(robot, p, text, res[name], "J"))
    r.append(_row(robot, p, "balance: |dE + impacts + damping + friction| (trapezoid over the "
                            "samples; tolerance: quadrature + regularisation bounds)",
                  abs(res["residual"]), "J", res["balance_tol"],
                  abs(res["residual"]) <= res["balance_tol"]))
    r.append(_row(robot, p, "the applied friction's dissipation, integral of sum -F_t . v_t dt "
                            "over sliding contacts", res["applied"], "J"))
    r.append(_row(robot, p, "balance with it in place of the friction term, "
                            "|dE + impacts + damping + applied|", abs(res["residual_applied"]),
                  "J"))
    return r


def stop_rows(robot, p, res, mg):
    bound = FORCE_BOUND * mg
    return [
        _row(robot, p, f"joint stops (URDF limits): {res['n_stops']}, closed during the run",
             res["stops_closed"], "count"),
        _row(robot, p, "events of the stops", res["stop_events"], "count"),
        _row(robot, p, f"closest approach to a stop, min s (q_j - limit) "
                       f"({res['stop_closest_name']})", res["stop_closest"], "rad"),
        _row(robot, p, "open stop's gap, min", res["stop_gap_min"], "rad",
             res["stop_gap_bound"], res["stop_gap_min"] >= res["stop_gap_bound"]),
        _row(robot, p, "open stop's force, max |lambda| (exactly 0)", res["stop_lam_open"], "N m",
             0.0, res["stop_lam_open"] == 0.0),
        _row(robot, p, "closed stop's force, min (lever 1 m)", res["stop_lam_min"], "N m",
             -bound, res["stop_lam_min"] >= -bound),
        _row(robot, p, "held stops' |gap| right after each switch, max", res["stop_held_gap"],
             "rad", HELD_GAP, res["stop_held_gap"] <= HELD_GAP),
        _row(robot, p, "stop reaction, max", res["stop_lam_max"], "N m")]


def sweep_rows(robot, sweep, duration):
    r = []
    for s in sweep:
        p, tol = "sweep", s["event_tol"]
        tag = f"event_tol = {tol:.0e}"
        r.append(_row(robot, p, f"{tag}: runs to the end ({duration:g} s)"
                      + ("" if s["stopped"] is None else f" ({s['stopped']})"), "", "", None,
                      s["stopped"] is None))
        r.append(_row(robot, p, f"{tag}: events", s["events"], "count"))
        ok = bool(np.isfinite(s["td"]) and 0.0 <= s["td"] <= tol)
        r.append(_row(robot, p, f"{tag}: first touch-down minus sqrt(2h/g), in [0, event_tol]",
                      s["td"], "s", tol, ok))
        r.append(_row(robot, p, f"{tag}: wall time", s["wall"], "s", **s["load"]))
    return r


def knee_rows(res, wall, load, mg):
    robot, p = KNEE[0], "knee stop"
    bound = KNEE_TOL * mg
    return [
        _row(robot, p, f"{res['joint']} driven to {KNEE_TARGET:g} rad past its stop "
                       f"{res['limit']:.5g} rad: closes on it (event time)", res["held_from"],
             "s", None, bool(np.isfinite(res["held_from"]))),
        _row(robot, p, "samples held at the stop", res["held_samples"], "count"),
        _row(robot, p, "held at the stop: max |q_j - limit|", res["gap_held"], "rad", HELD_GAP,
             res["gap_held"] <= HELD_GAP),
        _row(robot, p, "joint beyond its stop, max (limit - q_j < 0)", -res["q_min_gap"], "rad"),
        _row(robot, p, "stop reaction at the end", res["lam_end"], "N m"),
        _row(robot, p, "stop reaction against inverse dynamics with the contact forces "
                       "applied, max |lambda - s (tau_ID,j - tau_j)|", res["reaction_err"],
             "N m", bound, res["reaction_err"] <= bound),
        _row(robot, p, "wall time", wall, "s", **load),
        _row(robot, p, "real-time factor (wall time / simulated time)",
             wall / max(res["end"], 1e-300), "", **load)]


# ================================================================== plot ==

def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(len(results), 3, figsize=(15, 4.6 * len(results)), squeeze=False)
    for row, (robot, (drop, traj, res)) in enumerate(results.items()):
        t = traj.time
        a = ax[row, 0]
        for c, foot in enumerate(drop.feet):
            a.plot(t, traj.contact_force[:, c, 2], lw=1.0, color=f"C{c}", label=f"{foot} normal")
            a.plot(t, np.linalg.norm(traj.contact_force[:, c, :2], axis=1), lw=0.7, ls="--",
                   color=f"C{c}", label=f"{foot} tangential")
        styles = {"touch-down": ("k", "-"), "lift-off": ("0.4", "--"), "slip": ("m", ":"),
                  "stick": ("c", "-.")}
        for kind, (color, ls) in styles.items():
            times = sorted({e.time for e in traj.events if e.kind == kind})
            for j, te in enumerate(times):
                a.axvline(te, color=color, ls=ls, lw=0.6, label=kind if j == 0 else None)
        a.set(xlabel="t (s)", ylabel="N",
              title=f"{robot}: contact forces, normal (solid), tangential (dashed);\n"
                    f"{res['n_events']} events (vertical lines)")
        a.legend(fontsize=6, ncol=2, loc="upper right")
        a = ax[row, 1]
        names = ("open", "closed", "sticking", "sliding")
        for c, foot in enumerate(drop.feet):
            a.step(t, traj.contact_mode[:, c] + 0.12 * (c - 1.5), where="post", lw=1.0,
                   color=f"C{c}", label=foot)
        stops = ""
        if "n_stops" in res:
            for i in np.nonzero(np.any(traj.stop_mode > OPEN, axis=0))[0]:
                a.step(t, traj.stop_mode[:, i] - 0.3, where="post", lw=1.0, color="k",
                       ls=":", label=traj.stop_names[i])
            stops = (f"; {res['n_stops']} stops, {res['stops_closed']} closed, closest "
                     f"{res['stop_closest']:.2f} rad")
        a.set_yticks(range(4), names)
        a.set(xlabel="t (s)", title=f"{robot}: contact modes (offset per foot)\n"
                                     f"events: " + ", ".join(f"{n} {k}" for k, n in
                                                            res["events"].items()) + stops)
        a.legend(fontsize=7)
        a = ax[row, 2]
        a.semilogy(t, np.maximum(res["T"], 1e-14), lw=1.0, color="C0")
        a.set(xlabel="t (s)", ylabel="J",
              title=f"{robot}: kinetic energy (end {res['T_end']:.2e} J);\n"
                    f"energy balance residual {abs(res['residual']):.1e} J "
                    f"(tolerance {res['balance_tol']:.1e} J)")
        for te in sorted({e.time for e in traj.events if e.kind == "touch-down"}):
            a.axvline(te, color="k", lw=0.6)
    for a in ax.flat:
        a.grid(True, which="both", alpha=0.3)
        a.title.set_fontsize(9)
    fig.suptitle(f"Quadrupeds dropped from {DROP * 100:g} cm with friction: on point feet, and on "
                 f"round feet with their joint stops ({ROUND})", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ================================================================== main ==

def _positive(text):
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not (math.isfinite(x) and x > 0.0):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return x


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true",
                    help=f"{FULL['duration']:g} s runs (quick: {QUICK['duration']:g} s)")
    ap.add_argument("--duration", type=_positive, default=None, metavar="SECONDS",
                    help="simulated time of each run (default: the mode's)")
    ap.add_argument("--knee-duration", type=_positive, default=KNEE_DURATION, metavar="SECONDS",
                    help=f"simulated time of part 3, the knee driven into its stop (default "
                         f"{KNEE_DURATION:g}; it closes at about 0.21 s)")
    ap.add_argument("--robots", nargs="+", choices=ROBOT_ORDER, default=list(ROBOT_ORDER),
                    help="the robots to drop (default: both)")
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG")
    ap.add_argument("--no-progress", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    fall = math.sqrt(2.0 * DROP / 9.81)
    duration = args.duration or (FULL if args.full else QUICK)["duration"]
    if duration <= fall:
        ap.error(f"--duration: {duration:g} s ends before the feet land at "
                 f"sqrt(2h/g) = {fall:.4f} s; give more than that")
    return args


def main(argv=None):
    args = parse(argv)
    cfg = dict(FULL if args.full else QUICK)
    if args.duration is not None:
        cfg["duration"] = args.duration
    stem = output_stem(args, "legged_drops")
    progress = not args.no_progress

    def say(text):
        if progress:
            print(f"  {text}", file=sys.stderr, flush=True)

    rows, results = [], {}
    robots = [r for r in ROBOT_ORDER if r in args.robots]
    for robot in robots:
        drop = Drop(robot, DROP)
        say(f"{robot}: dropped from {DROP:g} m, {cfg['duration']:g} s at dt = {DT:g} s, "
            f"event_tol = {EVENT_TOL:g} s")
        before = machine_load()
        traj, stopped, wall = completed(drop.run, cfg["duration"], EVENT_TOL, DT,
                                        progress=progress)
        load = load_columns(before, machine_load())
        say(f"{robot}: {len(traj.events)} events in {wall:.1f} s; energies and invariants")
        res = analyse(drop, traj, EVENT_TOL)
        results[robot] = (drop, traj, res)
        rows += run_rows(robot, drop, res, wall, load, cfg["duration"], stopped)
        sweep = []
        for tol in TOLERANCES:
            say(f"{robot}: event_tol = {tol:g} s, {cfg['duration']:g} s")
            before = machine_load()
            tr, msg, w = completed(drop.run, cfg["duration"], tol, DT)
            sweep.append(dict(event_tol=tol, stopped=msg, events=len(tr.events),
                              td=first_touch_down(drop, tr), wall=w,
                              load=load_columns(before, machine_load())))
        rows += sweep_rows(robot, sweep, cfg["duration"])
        report(robot, drop, res, wall, load, stopped, sweep, cfg)
        drop = Drop(robot, DROP, round_feet=True, joint_stops=True)
        say(f"{robot}: round feet (radius {drop.radius * 1e3:.2f} mm) and joint stops, "
            f"{cfg['duration']:g} s")
        before = machine_load()
        traj, stopped, wall = completed(drop.run, cfg["duration"], EVENT_TOL, DT,
                                        progress=progress)
        load = load_columns(before, machine_load())
        res = analyse(drop, traj, EVENT_TOL)
        results[f"{robot} {ROUND}"] = (drop, traj, res)
        rows += run_rows(robot, drop, res, wall, load, cfg["duration"], stopped, part=ROUND,
                         energy=f"{ROUND} energy")
        report(f"{robot} {ROUND}", drop, res, wall, load, stopped, None, cfg)
    if KNEE[0] in robots:
        say(f"{KNEE[0]}: {KNEE[1]} driven into its stop, {args.knee_duration:g} s")
        before = machine_load()
        t0 = time.perf_counter()
        drop, _, res = knee_stop(args.knee_duration, progress=progress)
        wall = time.perf_counter() - t0
        load = load_columns(before, machine_load())
        rows += knee_rows(res, wall, load, drop.weight)
        print(f"\n{KNEE[0]}: {res['joint']} driven past its stop {res['limit']:.5g} rad: closes "
              f"at t = {res['held_from']:.6f} s, held {res['held_samples']} samples "
              f"(|q - limit| <= {res['gap_held']:.1e}), reaction at the end "
              f"{res['lam_end']:.4f} N m, against inverse dynamics {res['reaction_err']:.1e} N m; "
              f"wall {wall:.1f} s")
    args.out.mkdir(parents=True, exist_ok=True)
    write_rows(f"{stem}.csv", FIELDS, rows, stamp=stamp())
    print(f"\nwrote {stem}.csv")
    if not args.no_plot:
        plot(results, f"{stem}.png")
        print(f"wrote {stem}.png")
    targets = [r for r in rows if r["met"]]
    for r in targets:
        if r["met"] == "no":
            print(f"target missed [{r['robot']}] {r['quantity']}: {r['value']} "
                  f"(limit {r['target']})")
    met = sum(r["met"] == "yes" for r in targets)
    print(f"{met} of {len(targets)} targets met")


def report(robot, drop, res, wall, load, stopped, sweep, cfg):
    mg = drop.weight
    ev = ", ".join(f"{n} {k}" for k, n in res["events"].items())
    feet = f"feet of radius {drop.radius * 1e3:.2f} mm" if drop.radius else "point feet"
    print(f"\n{robot} ({drop.mass:.3f} kg, mu = {drop.mu:g}, Kp = {drop.kp:g}, "
          f"Kd = {drop.kd:g}, {feet}) dropped from {DROP * 100:g} cm, {cfg['duration']:g} s at "
          f"dt = {DT:g} s, event_tol = {EVENT_TOL:g} s")
    if stopped is not None:
        print(f"  {stopped}")
    print(f"  events: {ev}; wall time {wall:.2f} s, real-time factor "
          f"{wall / max(res['end'], 1e-300):.2f} (load {load['load1_before']:.2f} → "
          f"{load['load1_after']:.2f} on {load['cores']} cores)")
    print(f"  worst over every sample: cone max |f_t| - mu f_n = {res['cone']:.2e} N "
          f"({res['cone'] / mg:.1e} m g), closed min f_n = {res['fn_min']:.2e} N "
          f"({res['fn_min'] / mg:.1e} m g), open min gap {res['gap_min']:.2e} m "
          f"(bound {res['gap_bound']:.1e} m), held |gap| after switches {res['held_gap']:.1e} m")
    print(f"  sliding friction's power F_t . v_t - mu lambda_n SLIP_TOL, max {res['power']:.2e} W "
          f"(at t = {res['power_at']:.4f} s; SPEC §10.2: friction opposes the slip, so <= 0)")
    print(f"  end: kinetic energy {res['T_end']:.2e} J, vertical forces / m g - 1 = "
          f"{res['weight_err']:.1e}")
    print(f"  energy: change {res['dE']:.6f} J; impacts {res['impacts']:.6f} J, damping "
          f"{res['damping']:.6f} J, friction {res['friction']:.6f} J; residual "
          f"{res['residual']:.2e} J (tolerance {res['balance_tol']:.1e} J: quadrature "
          f"{res['quadrature']:.1e}, regularisation {res['regularisation']:.1e})")
    print(f"  with the applied friction's dissipation {res['applied']:.6f} J (-F_t . v_t) in place "
          f"of mu lambda_n |v_t|: residual {res['residual_applied']:.2e} J")
    if "n_stops" in res:
        print(f"  {res['n_stops']} joint stops, {res['stops_closed']} closed, "
              f"{res['stop_events']} events; closest approach {res['stop_closest']:.4f} rad "
              f"({res['stop_closest_name']}); open gap min {res['stop_gap_min']:.2e} rad "
              f"(bound {res['stop_gap_bound']:.1e}), closed force min {res['stop_lam_min']:.2e} "
              f"N m, held |gap| after switches {res['stop_held_gap']:.1e} rad")
    if sweep is None:
        return
    print("  event_tol   to the end  events  t1 - sqrt(2h/g) (s)  wall (s)")
    for s in sweep:
        print(f"  {s['event_tol']:<10.0e}  {'yes' if s['stopped'] is None else 'no':<10}  "
              f"{s['events']:>6}  {s['td']:>19.3e}  {s['wall']:>8.2f}")


if __name__ == "__main__":
    main()
