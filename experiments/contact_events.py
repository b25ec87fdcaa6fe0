"""Contact events of ``liedyn.simulate`` against closed forms: a bouncing
sphere, a block on an incline that sticks or slides, and Solo-12 dropped on
its four feet.

    python -m experiments.contact_events            # quick (well under a minute)
    python -m experiments.contact_events --full     # finer steps, longer runs, more tolerances

Every run is ``liedyn.simulate`` with ``contacts=[liedyn.PointContact(...)]``:
between events the closed contacts are held by the constrained dynamics,
and the events (touch-down, lift-off, slip, stick) are located on the step
to ``event_tol`` (SPEC §10, §13.4).

**1. Bouncing sphere.** One floating body, mass ``SPHERE_MASS``, radius
``SPHERE_RADIUS``, its centre of mass at its origin, a ``PointContact`` of
that radius at the centre against the frictionless ground ``z = 0``,
restitution ``e = RESTITUTION``; dropped at rest with its lowest point
``h₀ = DROP`` above the ground. In flight the gap is the parabola
``φ(t) = φ₀ + φ̇₀ t − g t²/2``, which RK4 integrates exactly, so the
measured errors are those of the event location and round-off. Closed form
(``T = √(2 h₀ / g)``, impact speed ``v₁ = g T``): the n-th touch-down at

    t₁ = T,   tₙ₊₁ = tₙ + 2 eⁿ T,   i.e.  tₙ = T (1 + 2 Σ_{k=1}^{n−1} eᵏ),

and the apex after it ``hₙ = e²ⁿ h₀`` (rebound speed ``eⁿ v₁``). The
simulated apex of flight n is ``φ + φ̇²/(2g)`` at the sample right after
the n-th switch (the ballistic apex of the state the impact left; that it
is the same at every sample of the flight is checked too: the flight is the
parabola). The rebound ``eⁿ v₁`` first falls below ``rest_velocity``
(``REST_VELOCITY``) at impact ``n_rest = ⌈ln(v_rest/v₁)/ln e⌉``: there the
contact closes and the sphere rests, at ``t_{n_rest}``, with the normal
force ``m g``. The location converges with ``event_tol``: the first
touch-down (``events="stop"``) against ``T`` for ``EVENT_TOLS``.

**2. Block on an incline** at ``SLOPE`` (θ): one body of mass
``BLOCK_MASS`` whose contact point (a ``PointContact`` of radius 0) is at
its centre of mass, so that no contact force has a moment about it and the
block translates without turning; the plane has the normal
``n = (−sin θ, 0, cos θ)`` through the origin, the downhill direction is
``d = (−cos θ, 0, −sin θ)``, and the block starts at rest on it.

* (a) ``μ = MU_STICK`` > tan θ: it sticks, no event, at rest, the force
  ``−m g⃗`` with normal part ``m g cos θ`` and tangential part
  ``m g sin θ``, cone margin ``m g (μ cos θ − sin θ) > 0``;
* (b) ``μ = MU_SLIDE`` < tan θ: it cannot stick, so it slides from the
  start (a "slip" event at t = 0), with ``s(t) = ½ a t²``,
  ``a = g (sin θ − μ cos θ)``;
* (c) ``μ = MU_STICK`` and a push ``F = k t`` down the slope
  (``k = PUSH_RATE``), applied by a controller as the world wrench
  ``(p × F d, F d)`` about the world origin at the centre of mass ``p``:
  it sticks until the margin ``μ m g cos θ − (m g sin θ + k t)`` reaches 0
  at ``t* = m g (μ cos θ − sin θ) / k``, then slides with
  ``m s̈ = k (t − t*)``, ``s(t) = k (t − t*)³ / (6 m)``;
* (d) ``μ = MU_STICK``, launched down the slope at ``v₀ = LAUNCH``: it
  slides with ``s̈ = −a``, ``a = g (μ cos θ − sin θ) > 0``, so
  ``s(t) = v₀ t − ½ a t²`` until a "stick" event at ``t_s = v₀ / a``, and
  then stays at ``v₀² / (2a)``.

While sticking the contact force has the normal part ``m g cos θ`` and the
tangential part ``m g sin θ`` (+ ``k t`` in (c)); while sliding
``|λ_t| = μ λ_n``. The cone margin is checked at the samples between events
(the sample of a slip is just past its zero, by construction).

**3. Solo-12 dropped from** ``SOLO_DROP`` (example-robot-data's URDF): the
standing posture (``HFE ±0.8``, ``KFE ∓1.6``), at rest, the feet
``SOLO_DROP`` above the ground, ``PointContact`` at the four feet (radius
0), ``μ = SOLO_MU``, ``e = 0``; the joints held by a PD law about the
standing posture, ``τ = K_p (q_s − q) − K_d q̇`` (``SOLO_KP``,
``SOLO_KD``; no feed-forward, so in free fall the joints stay at ``q_s``
and the feet land together at the closed-form ``√(2 h / g)``). The impact
is checked against the dense inelastic sticking impact of the four feet
(``M``, ``J`` of ``liedyn.mass_matrix``, ``liedyn.constraint_jacobian``):
``Λ = −W⁻¹ J ν⁻``, ``W = J M⁻¹ Jᵀ``, ``ν⁺ = ν⁻ + M⁻¹ Jᵀ Λ``, the loss
``½ (J ν⁻)ᵀ W⁻¹ (J ν⁻)`` (valid as the impulse lies in the cone, which is
reported), and the kinetic energy before it against ``m g h``. Then the
contact forces over time, the cone margins (no foot slips or lifts off,
or the events say so) and the rest: the kinetic energy at the end, the
base height settling and the vertical forces carrying the weight.

**4. Cost.** Solo-12 standing on its four feet at rest (no event
happens): the wall time of ``simulate(contacts=…)``, which evaluates the
watched functions and every contact's gap at each sample in Python, against
``simulate(constraints=…)`` holding the same feet, the two run alternately;
the ratio is the median of the per-pair ratios of the runs (one of each per
pair), with its quartiles (``q1``, ``q3``) and the machine's 1-minute load
average before and after (``load1_before``, ``load1_after``, ``cores``),
reported without a target; the run says when these make it unreliable.

Each part has fixed targets (``TARGETS`` below, written as rows with
``met`` yes/no, read by ``experiments.reproduce``). Writes to
``paper_figures/`` (``--out DIR`` elsewhere; ``_full`` names with
``--full``): ``contact_events.csv`` (measurements and targets, with the
machine and code version), ``contact_events_bounces.csv`` (every
touch-down of the sphere against the closed form) and
``contact_events.png`` (the three parts, nine panels).

Quick mode runs in about 5 s here once the kernels are compiled (the first
run of a fresh cache compiles them, a minute or two).
"""

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

import liedyn as ld
from models.example_robots import load_robot

from ._provenance import stamp
from ._table import output_stem, write_rows
from ._timing import (LOAD_FIELDS, load_columns, machine_load, paired_stats, reliability_note,
                      unreliable)

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "paper_figures"

# ---- 1. sphere
SPHERE_MASS = 1.0             # kg
SPHERE_RADIUS = 0.1           # m
DROP = 1.0                    # m: h₀, the lowest point above the ground at t = 0
RESTITUTION = 0.8
REST_VELOCITY = 1e-3          # m/s: a rebound slower than this closes the contact
EVENT_TOL = 1e-10             # s
# ---- 2. block
BLOCK_MASS = 1.0              # kg
BLOCK_SIDE = 0.1              # m (its inertia only: the contact point is its centre of mass)
SLOPE = math.radians(20.0)    # θ
MU_STICK, MU_SLIDE = 0.5, 0.2 # tan θ = 0.364
PUSH_RATE = 2.5               # k, N/s: t* = 0.501 s
LAUNCH = 0.5                  # m/s: (d) launched down the slope, stops at 0.399 s
# ---- 3. Solo-12
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
LEGS = ("FL", "FR", "HL", "HR")
STAND_HFE, STAND_KFE = 0.8, -1.6     # rad (hind legs mirrored)
SOLO_DROP = 0.05              # m
SOLO_MU = 0.7
SOLO_KP, SOLO_KD = 10.0, 0.2  # N m/rad, N m s/rad
SETTLE_WINDOW = 0.1           # s: the base height over the last this much of the run

QUICK = dict(sphere_time=4.5, sphere_dt=5e-3, tols=(1e-4, 1e-7, 1e-10),
             block_time=1.5, block_dt=1e-2, solo_time=1.0, solo_dt=2e-3, cost_time=0.5,
             cost_repeats=3)
FULL = dict(sphere_time=6.0, sphere_dt=1e-3, tols=tuple(10.0 ** -k for k in range(4, 13)),
            block_time=3.0, block_dt=1e-3, solo_time=2.0, solo_dt=1e-3, cost_time=2.0,
            cost_repeats=5)

# Targets: fixed numbers, from the event tolerance and round-off (see the docstring).
TARGETS = dict(
    sphere_times=5e-8,          # s: max |t_n - t_n*| over the bounces (each adds a few event_tol)
    sphere_heights=1e-9,        # m: max |h_n - h_n*| (impact n adds (1 - e^2) v_n event_tol)
    sphere_loss=1e-8,           # J: loss per impact (m g times the heights' and gaps' errors)
    sphere_flight=1e-12,        # m: max change of phi + phi'^2/(2 g) within a flight
    sphere_rest_force=1e-9,     # N: |lambda_n - m g| at rest
    sphere_rest_time=5e-8,      # s: |t_rest - t_{n_rest}*|
    block_rest=1e-12,           # m: displacement while sticking
    block_force=1e-9,           # N: normal and tangential forces against m g cos, m g sin (+ k t)
    block_position=1e-9,        # m: |s - s*| while sliding
    block_event_time=1e-8,      # s: the slip or stick against the closed form
    block_ratio=1e-12,          # |lambda_t| / lambda_n - mu while sliding
    solo_touchdown=1e-8,        # s: each foot against sqrt(2 h / g)
    solo_energy=1e-9,           # J: loss and kinetic energies against the dense impact, m g h
    solo_velocity=1e-9,         # m/s, rad/s: nu+ against the dense impact, and J nu+
    solo_rest_energy=1e-6,      # J: kinetic energy at the end
    solo_settle=1e-5,           # m: base height change over the last SETTLE_WINDOW
    solo_weight=1e-3,           # relative: sum of vertical forces at the end against m g
)

OPEN, CLOSED, STICKING, SLIDING = 0, 1, 2, 3


def _gravity(model):
    return float(-model.gravity[2])


def _point_velocity(traj, k):
    """``ṗ = v + ω × p`` of the base origin at sample ``k`` (twist about the
    world origin)."""
    V = traj.base_twist[k, 0]
    p = traj.base_pose[k, :3, 3]
    return V[3:] + np.cross(V[:3], p)


# ================================================================ sphere ==

def sphere_model(mass=SPHERE_MASS, radius=SPHERE_RADIUS):
    """A free solid sphere: one body, centre of mass at its origin, a frame
    ``centre`` there."""
    b = ld.ModelBuilder()
    b.add_body("ball", None, None, np.eye(4),
               ld.se3.spatial_inertia(mass, np.zeros(3), 0.4 * mass * radius ** 2 * np.eye(3)))
    b.add_frame("centre", "ball")
    return b.build()


def sphere_contact(radius=SPHERE_RADIUS):
    return ld.PointContact("centre", ld.Plane((0.0, 0.0, 1.0), 0.0, name="ground"), radius,
                           name="ball")


def sphere_start(drop=DROP, radius=SPHERE_RADIUS):
    C = np.eye(4)
    C[2, 3] = drop + radius
    return ld.State(C, np.zeros(6))


def bounce_closed_form(h0, e, g, rest_velocity):
    """``(t (n,), h (n,), n_rest)``: touch-down times ``t₁..t_{n_rest}`` and
    the apex ``hₙ = e²ⁿ h₀`` after each (0 after the last, which closes the
    contact); ``n_rest`` the first impact whose rebound ``eⁿ √(2 g h₀)`` is
    below ``rest_velocity``."""
    T = math.sqrt(2.0 * h0 / g)
    v1 = g * T
    n_rest = 1
    while e ** n_rest * v1 >= rest_velocity:
        n_rest += 1
    n = np.arange(1, n_rest + 1)
    t = T * (1.0 + 2.0 * np.concatenate([[0.0], np.cumsum(e ** n[:-1])]))
    h = e ** (2 * n) * h0
    h[-1] = 0.0
    return t, h, n_rest


def run_sphere(duration, dt, event_tol=EVENT_TOL, events="switch", progress=False):
    return ld.simulate(sphere_model(), sphere_start(), duration, dt=dt,
                       contacts=[sphere_contact()], restitution=RESTITUTION, friction=None,
                       events=events, event_tol=event_tol, rest_velocity=REST_VELOCITY,
                       progress=progress)


def sphere_analysis(traj, g):
    """Touch-downs, apexes and the checks of part 1."""
    t_cf, h_cf, n_rest = bounce_closed_form(DROP, RESTITUTION, g, REST_VELOCITY)
    downs = [ev for ev in traj.events if ev.kind == "touch-down"]
    others = [ev for ev in traj.events if ev.kind != "touch-down"]
    t_sim = np.array([ev.time for ev in downs])
    h_sim, drift = [], 0.0
    bounds = [ev.sample + 1 for ev in downs] + [len(traj)]
    for i, ev in enumerate(downs):
        k = ev.sample + 1
        phi, rate = traj.gap[k, 0], _point_velocity(traj, k)[2]
        h_sim.append(phi + max(rate, 0.0) ** 2 / (2 * g))
        if traj.contact_mode[k, 0] == OPEN:          # the flight: samples up to the next event
            ks = np.arange(k, bounds[i + 1])
            ks = ks[traj.contact_mode[ks, 0] == OPEN]
            rates = np.array([_point_velocity(traj, j)[2] for j in ks])
            E = traj.gap[ks, 0] + rates ** 2 / (2 * g)
            drift = max(drift, float(np.max(np.abs(E - E[0]))))
    h_sim = np.array(h_sim)
    n = min(len(t_sim), n_rest)
    last = downs[-1].sample + 1 if downs else 0
    rest = slice(last, len(traj))
    closed = bool(downs) and bool(np.all(traj.contact_mode[rest, 0] == CLOSED))
    force = traj.contact_force[rest, 0, 2]
    # the loss at impact n: (1 - e²) of the kinetic energy m g h_(n-1), all of it at the last
    before = SPHERE_MASS * g * np.concatenate([[DROP], h_cf[:-1]])
    loss_cf = np.where(np.arange(1, n_rest + 1) < n_rest, 1 - RESTITUTION ** 2, 1.0) * before
    rows = [dict(n=i + 1, t_sim=t_sim[i], t_closed=t_cf[i], t_error=t_sim[i] - t_cf[i],
                 h_sim=h_sim[i], h_closed=h_cf[i], h_error=h_sim[i] - h_cf[i],
                 energy_loss=downs[i].energy_loss, loss_closed=loss_cf[i],
                 loss_error=downs[i].energy_loss - loss_cf[i]) for i in range(n)]
    return dict(
        bounces=rows, n_sim=len(t_sim), n_rest=n_rest, others=others,
        t_err=float(np.max(np.abs(t_sim[:n] - t_cf[:n]))) if n else np.inf,
        h_err=float(np.max(np.abs(h_sim[:n - 1] - h_cf[:n - 1]))) if n > 1 else np.inf,
        loss_err=float(np.max(np.abs([r["loss_error"] for r in rows]))) if n else np.inf,
        flight_drift=drift, rest_time=t_sim[-1] if downs else np.nan,
        rest_time_cf=t_cf[-1], closed_after=closed,
        rest_force_err=float(np.max(np.abs(force - SPHERE_MASS * g))) if len(force) else np.inf,
        rest_gap=float(np.max(np.abs(traj.gap[rest, 0]))) if len(force) else np.inf)


def tolerance_sweep(tols, g):
    """Error of the first touch-down located with each ``event_tol``."""
    T = math.sqrt(2.0 * DROP / g)
    rows = []
    for tol in tols:
        traj = run_sphere(2 * T, 0.05, event_tol=tol, events="stop")
        t1 = traj.events[0].time
        rows.append(dict(event_tol=tol, t1=t1, error=abs(t1 - T), kind=traj.events[0].kind,
                         end=float(traj.time[-1])))
    return rows


# ================================================================= block ==

def block_model(mass=BLOCK_MASS, side=BLOCK_SIDE):
    """A cube of mass ``mass`` whose single contact point is its centre of
    mass (frame ``com`` at the body origin): every contact force passes
    through the centre of mass, so it has no moment there and the block,
    starting without rotation, translates (a point mass with the inertia of
    a cube)."""
    b = ld.ModelBuilder()
    b.add_body("block", None, None, np.eye(4),
               ld.se3.spatial_inertia(mass, np.zeros(3), mass * side ** 2 / 6 * np.eye(3)))
    b.add_frame("com", "block")
    return b.build()


def incline(theta=SLOPE):
    """``(plane, n, d)``: the plane through the origin with normal
    ``n = (−sin θ, 0, cos θ)`` and the downhill direction ``d``."""
    n = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    d = np.array([-math.cos(theta), 0.0, -math.sin(theta)])
    return ld.Plane(n, 0.0, name="incline"), n, d


class Push:
    """Controller: the force ``k t`` along ``d`` at the centre of mass, as the
    world wrench ``(p × f, f)`` about the world origin on the one body."""

    def __init__(self, rate, direction):
        self.rate, self.d = rate, np.asarray(direction, float)

    def __call__(self, t, state):
        p = state.base_pose[:3, 3]
        f = self.rate * t * self.d
        return ld.Inputs(applied=np.concatenate([np.cross(p, f), f])[None])


BLOCK_CASES = {"(a) sticks": dict(mu=MU_STICK, push=False, v0=0.0),
               "(b) slides": dict(mu=MU_SLIDE, push=False, v0=0.0),
               "(c) pushed": dict(mu=MU_STICK, push=True, v0=0.0),
               "(d) launched": dict(mu=MU_STICK, push=False, v0=LAUNCH)}


def run_block(case, duration, dt, progress=False):
    plane, n, d = incline()
    cfg = BLOCK_CASES[case]
    V = np.concatenate([np.zeros(3), cfg["v0"] * d])      # ω = 0: v = ṗ
    return ld.simulate(block_model(), ld.State(np.eye(4), V), duration, dt=dt,
                       contacts=[ld.PointContact("com", plane, 0.0, name="block")],
                       friction=cfg["mu"], restitution=0.0, event_tol=EVENT_TOL,
                       controller=Push(PUSH_RATE, d) if cfg["push"] else None,
                       progress=progress)


def block_closed_form(case, t, g, m=BLOCK_MASS, theta=SLOPE):
    """``(s(t), (kind, time) of the one event or None)``: the distance down
    the slope, and the slip or stick."""
    cfg = BLOCK_CASES[case]
    mu = cfg["mu"]
    a = g * (math.sin(theta) - mu * math.cos(theta))      # sliding down, from gravity and μ
    t = np.asarray(t, float)
    if case == "(a) sticks":
        return np.zeros_like(t), None
    if case == "(b) slides":
        return 0.5 * a * t ** 2, ("slip", 0.0)
    if case == "(c) pushed":
        ts = m * g * (mu * math.cos(theta) - math.sin(theta)) / PUSH_RATE
        return PUSH_RATE * np.maximum(t - ts, 0.0) ** 3 / (6 * m), ("slip", ts)
    v0 = cfg["v0"]                                        # (d): a < 0, it stops at -v0/a
    ts = -v0 / a
    tc = np.minimum(t, ts)
    return v0 * tc + 0.5 * a * tc ** 2, ("stick", ts)


def block_analysis(case, traj, g, m=BLOCK_MASS, theta=SLOPE):
    """The checks of part 2 on one run: its events against the closed form's
    one, the distance down the slope while sliding, the rest while sticking
    (from the first sticking sample), the forces."""
    plane, n, d = incline(theta)
    cfg = BLOCK_CASES[case]
    mu = cfg["mu"]
    p = traj.base_pose[:, :3, 3]
    s = p @ d
    off = np.linalg.norm(p - s[:, None] * d, axis=1)         # off the downhill line
    s_cf, expected = block_closed_form(case, traj.time, g, m, theta)
    F = traj.contact_force[:, 0]
    fn = F @ n
    ft = np.linalg.norm(F - fn[:, None] * n, axis=1)
    mode = traj.contact_mode[:, 0]
    sliding, sticking = mode == SLIDING, mode == STICKING
    # while sticking the contact holds the weight's and the push's parts along the slope
    ft_cf = m * g * math.sin(theta) + (PUSH_RATE * traj.time if cfg["push"] else 0.0)
    out = dict(case=case, mu=mu, events=[(ev.kind, ev.time) for ev in traj.events],
               expected=expected, s=s, s_cf=s_cf, fn=fn, ft=ft, margin=mu * fn - ft, mode=mode,
               off=float(np.max(off)),
               rotation=float(np.max(np.abs(traj.base_pose[:, :3, :3] - np.eye(3)))))
    match = [ev for ev in traj.events if expected is not None and ev.kind == expected[0]]
    out["event_ok"] = (not traj.events) if expected is None else (
        len(match) == 1 and len(traj.events) == 1)
    out["event_time"] = match[0].time if match else np.nan
    out["event_err"] = abs(match[0].time - expected[1]) if match else np.inf
    after = match[0].sample + 1 if match else 0
    want = {None: STICKING, "slip": SLIDING, "stick": STICKING}[expected and expected[0]]
    out["mode_after"] = bool(np.all(mode[after:] == want))
    out["pos_err"] = float(np.max(np.abs(s - s_cf)[sliding])) if sliding.any() else np.nan
    out["rest_err"] = float(np.max(np.abs(s - s_cf)[sticking])) if sticking.any() else np.nan
    first = int(np.argmax(sticking))
    out["rest"] = float(np.max(np.abs(p[sticking] - p[first]))) if sticking.any() else np.nan
    out["fn_err"] = float(np.max(np.abs(fn - m * g * math.cos(theta))))
    out["ft_err"] = float(np.max(np.abs(ft - ft_cf)[sticking])) if sticking.any() else np.nan
    out["ratio_err"] = float(np.max(np.abs(ft[sliding] / fn[sliding] - mu))) \
        if sliding.any() else np.nan
    inside = sticking.copy()          # not at an event: its sample is just past the zero
    inside[[ev.sample for ev in traj.events]] = False
    out["margin_min"] = float(np.min((mu * fn - ft)[inside])) if inside.any() else np.nan
    return out


# ================================================================== solo ==

class Solo:
    """Solo-12 at the standing posture, dropped with its feet ``drop`` above
    the ground; its contacts and the PD law that holds the joints."""

    def __init__(self, drop=SOLO_DROP):
        model = load_robot("solo12")
        self.model = model
        q = np.zeros(model.n_joints)
        for leg, sign in zip(LEGS, (1.0, 1.0, -1.0, -1.0)):
            i = model.joint_names.index(f"{leg}_HFE")
            q[i], q[i + 1] = sign * STAND_HFE, sign * STAND_KFE
        self.q_stand = q
        C = np.eye(4)
        feet = np.array([ld.frame_pose(model, C, q, f)[:3, 3] for f in FEET])
        C[2, 3] = drop - feet[:, 2].min()
        self.pose0 = C
        self.drop = drop
        self.mass = float(model.body_mass.sum())
        self.contacts = [ld.PointContact(f, ld.Plane(name="ground"), 0.0) for f in FEET]
        self.feet3d = ld.ConstraintSet(model, [ld.Contact3D(f) for f in FEET])

    def controller(self, t, state):
        return ld.Inputs(tau=SOLO_KP * (self.q_stand - state.q) - SOLO_KD * state.qd)

    def state0(self):
        return ld.State(self.pose0, np.zeros(6), self.q_stand, np.zeros(self.model.n_joints))

    def nu(self, traj, k):
        return np.concatenate([traj.base_twist[k, 0], traj.q[k, 1]])

    def kinetic_energy(self, traj, k):
        nu = self.nu(traj, k)
        return 0.5 * nu @ ld.mass_matrix(self.model, traj.base_pose[k], traj.q[k, 0]) @ nu

    def dense_impact(self, C, q, nu):
        """The inelastic sticking impact of the four feet by dense linear
        algebra: ``(ν⁺, Λ (4, 3), loss)``."""
        M = ld.mass_matrix(self.model, C, q)
        J = ld.constraint_jacobian(self.model, self.feet3d, C, None, q[None], 0)[0]
        MiJt = np.linalg.solve(M, J.T)
        v = J @ nu
        lam = -np.linalg.solve(J @ MiJt, v)
        return nu + MiJt @ lam, lam.reshape(4, 3), 0.5 * float(v @ np.linalg.solve(J @ MiJt, v))


def run_solo(robot, duration, dt, progress=False):
    return ld.simulate(robot.model, robot.state0(), duration, dt=dt, contacts=robot.contacts,
                       restitution=0.0, friction=SOLO_MU, event_tol=EVENT_TOL,
                       controller=robot.controller, progress=progress)


def cost_of_events(robot, duration, dt, repeats):
    """Solo-12 standing on its feet at rest for ``duration``: the wall time
    of ``simulate(contacts=…)`` (no event happens: the watched functions are
    evaluated at every sample) against ``simulate(constraints=…)`` holding
    the same four feet, ``repeats`` pairs of runs after one of each to warm
    up (:func:`cost_summary`)."""
    C = robot.pose0.copy()
    C[2, 3] -= robot.drop                              # feet on the ground
    state = ld.State(C, np.zeros(6), robot.q_stand, np.zeros(robot.model.n_joints))
    runs = {"held": lambda: ld.simulate(robot.model, state, duration, dt=dt,
                                        constraints=robot.feet3d, controller=robot.controller),
            "events": lambda: ld.simulate(robot.model, state, duration, dt=dt,
                                          contacts=robot.contacts, friction=SOLO_MU,
                                          controller=robot.controller)}
    times = {k: [] for k in runs}
    before = machine_load()
    for _ in range(repeats + 1):                       # the first round warms up
        for k, f in runs.items():
            t0 = time.perf_counter()
            traj = f()
            times[k].append(time.perf_counter() - t0)
            if k == "events" and traj.events:
                raise RuntimeError(f"standing Solo-12: unexpected events {traj.events}")
    load = load_columns(before, machine_load())
    return dict(cost_summary(times["held"][1:], times["events"][1:]), steps=len(traj) - 1,
                load=load)


def cost_summary(held, events):
    """The wall times of alternate runs, ``held[i]`` and ``events[i]`` of
    pair i: the median of each and the median of the per-pair ratios
    events / held (``ratio``, with its statistics in ``ratio_stats``)."""
    ratio = paired_stats(events, held)
    return dict(held=float(np.median(held)), events=float(np.median(events)),
                ratio=ratio["median"], ratio_stats=ratio)


def solo_analysis(robot, traj, g):
    """The checks of part 3. Feet that land together close in one switch,
    reported as one "touch-down" event; the feet it closed are those whose
    mode goes from open to closed in it (``modes_before``, ``modes_after``)."""
    downs = [ev for ev in traj.events if ev.kind == "touch-down"]
    others = [ev for ev in traj.events if ev.kind != "touch-down"]
    t_cf = math.sqrt(2 * robot.drop / g)
    landed = {}
    for ev in downs:
        for name, a, b in zip(traj.contact_names, ev.modes_before, ev.modes_after):
            if a == "open" and b != "open":
                landed.setdefault(name, ev.time)
    out = dict(downs=[(ev.contact, ev.time) for ev in downs], others=others, t_cf=t_cf,
               n_down=len(downs), landed=landed,
               modes_after=downs[-1].modes_after if downs else ())
    out["td_err"] = max((abs(t - t_cf) for t in landed.values()), default=np.inf)
    if downs:
        k0 = min(ev.sample for ev in downs)           # before the first switch
        k1 = max(ev.sample for ev in downs) + 1       # after the last one
        T0, T1 = robot.kinetic_energy(traj, k0), robot.kinetic_energy(traj, k1)
        nu_p, lam, loss = robot.dense_impact(traj.base_pose[k0], traj.q[k0, 0],
                                             robot.nu(traj, k0))
        J = ld.constraint_jacobian(robot.model, robot.feet3d, traj.base_pose[k1], None,
                                   traj.q[k1, 0][None], 0)[0]
        fallen = robot.drop - float(np.mean(traj.gap[k0]))       # the free fall: T = m g Δz
        out.update(
            T_before=T0, T_after=T1, T_cf=robot.mass * g * fallen, gap_at_event=traj.gap[k0],
            loss_events=float(sum(ev.energy_loss for ev in downs)), loss_samples=T0 - T1,
            loss_impact=float(sum(ev.impact.energy_loss for ev in downs
                                  if ev.impact is not None)),
            loss_dense=loss, nu_err=float(np.max(np.abs(robot.nu(traj, k1) - nu_p))),
            feet_velocity=float(np.max(np.abs(J @ robot.nu(traj, k1)))),
            impulse=lam, impulse_margin=float(np.min(SOLO_MU * lam[:, 2] -
                                                     np.linalg.norm(lam[:, :2], axis=1))),
            k_after=k1)
    else:
        out.update(T_before=np.nan, T_after=np.nan, T_cf=np.nan, gap_at_event=np.nan,
                   loss_events=np.nan, loss_samples=np.nan, loss_impact=np.nan,
                   loss_dense=np.nan, nu_err=np.inf, feet_velocity=np.inf,
                   impulse=np.full((4, 3), np.nan), impulse_margin=np.nan, k_after=len(traj))
    k1 = out["k_after"]
    F = traj.contact_force[k1:]
    out["margin_min"] = float(np.min(SOLO_MU * F[..., 2] - np.linalg.norm(F[..., :2], axis=2))) \
        if len(F) else np.nan
    out["all_sticking"] = bool(np.all(traj.contact_mode[k1:] == STICKING))
    out["energy"] = np.array([robot.kinetic_energy(traj, k) for k in range(len(traj))])
    z = traj.base_pose[:, 2, 3]
    late = traj.time >= traj.time[-1] - SETTLE_WINDOW
    out["z"] = z
    out["settle"] = float(np.max(z[late]) - np.min(z[late]))
    out["T_end"] = float(out["energy"][-1])
    out["weight_err"] = float(abs(traj.contact_force[-1, :, 2].sum() - robot.mass * g)
                              / (robot.mass * g))
    out["z_end"] = float(z[-1])
    return out


def completed(run, *args, **kw):
    """``(trajectory, None)`` of ``run(*args, **kw)``, or, when the simulation
    stops with a :class:`liedyn.SimulationError`, the samples up to there
    and the error's message (reported as a missed target)."""
    try:
        return run(*args, **kw), None
    except ld.SimulationError as err:
        return err.trajectory, f"stopped at t = {err.time:.9g} s: {err}"


# =============================================================== targets ==

# ``kind``: the part of the study a row belongs to ("sphere", "block (a) sticks", …, "solo"),
# which experiments._targets puts before the quantity in a target's name.
FIELDS = ["kind", "quantity", "value", "unit", "target", "met", "q1", "q3", *LOAD_FIELDS]
BOUNCE_FIELDS = ["n", "t_sim", "t_closed", "t_error", "h_sim", "h_closed", "h_error",
                 "energy_loss", "loss_closed", "loss_error"]


def _row(kind, quantity, value, unit, target=None, met=None):
    return dict(kind=kind, quantity=quantity, value=value, unit=unit,
                target="" if target is None else target,
                met="" if met is None else ("yes" if met else "no"))


def _le(kind, quantity, value, unit, limit):
    ok = bool(np.isfinite(value) and value <= limit)
    return _row(kind, quantity, value, unit, limit, ok)


def rows_of(sphere, sweep, blocks, solo, g, stopped):
    L = TARGETS
    r = [_row(sec, f"run to the end{'' if msg is None else ' (' + msg + ')'}", "", "", None,
              msg is None) for sec, msg in stopped.items()]
    sec = "sphere"
    r.append(_row(sec, "touch-downs located", sphere["n_sim"], "count",
                  sphere["n_rest"], sphere["n_sim"] == sphere["n_rest"]))
    r.append(_le(sec, "touch-down times t_n against the closed form, max error",
                 sphere["t_err"], "s", L["sphere_times"]))
    r.append(_le(sec, "apex heights h_n = e^(2n) h0, max error", sphere["h_err"], "m",
                 L["sphere_heights"]))
    r.append(_le(sec, "energy lost at each impact against (1 - e^2) m g h_(n-1) (all of it at "
                      "the last), max error", sphere["loss_err"], "J", L["sphere_loss"]))
    r.append(_le(sec, "phi + phi'^2/(2g) within each flight, max change",
                 sphere["flight_drift"], "m", L["sphere_flight"]))
    r.append(_le(sec, "rest: time against t_(n_rest)*, error",
                 abs(sphere["rest_time"] - sphere["rest_time_cf"]), "s", L["sphere_rest_time"]))
    r.append(_row(sec, "rest: contact closed for the rest of the run, no other event", "",
                  "", None, sphere["closed_after"] and not sphere["others"]))
    r.append(_le(sec, "rest: normal force against m g, max error", sphere["rest_force_err"],
                 "N", L["sphere_rest_force"]))
    r.append(_row(sec, "rest time", sphere["rest_time"], "s"))
    r.append(_row(sec, "rest gap, max |phi|", sphere["rest_gap"], "m"))
    for s in sweep:
        r.append(_le(sec, f"first touch-down with event_tol = {s['event_tol']:.0e}, error",
                     s["error"], "s", s["event_tol"]))
    for case, b in blocks.items():
        sec = f"block {case}"
        exp = b["expected"]
        if exp is None:
            r.append(_row(sec, "no event", len(b["events"]), "count", 0, b["event_ok"]))
            r.append(_row(sec, "sticking throughout", "", "", None, b["mode_after"]))
        else:
            kind, after = exp[0], {"slip": "sliding", "stick": "sticking"}[exp[0]]
            r.append(_row(sec, f"one {kind} event and no other", len(b["events"]), "count", 1,
                          b["event_ok"]))
            r.append(_le(sec, f"{kind} time against the closed form, error", b["event_err"], "s",
                         L["block_event_time"]))
            r.append(_row(sec, f"{after} from the {kind} to the end", "", "", None,
                          b["mode_after"]))
            r.append(_row(sec, f"{kind} time", b["event_time"], "s"))
        if np.isfinite(b["pos_err"]):
            r.append(_le(sec, "distance down the slope against the closed form while sliding, "
                              "max error", b["pos_err"], "m", L["block_position"]))
            r.append(_le(sec, "|lambda_t|/lambda_n - mu while sliding, max", b["ratio_err"], "",
                         L["block_ratio"]))
        if np.isfinite(b["rest"]):
            r.append(_le(sec, "displacement while sticking, max", b["rest"], "m",
                         L["block_rest"]))
            r.append(_le(sec, "position while sticking against the closed form, max error",
                         b["rest_err"], "m", L["block_position"]))
            r.append(_le(sec, "tangential force while sticking against m g sin(theta) (+ k t), "
                              "max error", b["ft_err"], "N", L["block_force"]))
            r.append(_row(sec, "cone margin mu lambda_n - |lambda_t| while sticking (event "
                               "samples apart), min",
                          b["margin_min"], "N", None, b["margin_min"] > 0))
        r.append(_le(sec, "normal force against m g cos(theta), max error", b["fn_err"], "N",
                     L["block_force"]))
        r.append(_row(sec, "distance off the downhill line, max", b["off"], "m"))
        r.append(_row(sec, "rotation |R - I|, max", b["rotation"], ""))
    sec = "solo"
    r.append(_row(sec, "feet closed by the touch-down events", len(solo["landed"]), "count", 4,
                  sorted(solo["landed"]) == sorted(FEET)))
    r.append(_row(sec, "touch-down events", solo["n_down"], "count"))
    r.append(_row(sec, "events other than touch-down", len(solo["others"]), "count", 0,
                  not solo["others"]))
    r.append(_le(sec, "touch-down times against sqrt(2 h/g), max error", solo["td_err"], "s",
                 L["solo_touchdown"]))
    r.append(_le(sec, "kinetic energy before the impact against m g (h - gap), error",
                 abs(solo["T_before"] - solo["T_cf"]), "J", L["solo_energy"]))
    r.append(_le(sec, "energy loss of the events against the dense sticking impact, error",
                 abs(solo["loss_events"] - solo["loss_dense"]), "J", L["solo_energy"]))
    r.append(_le(sec, "energy loss of the events against T- - T+ of the samples, error",
                 abs(solo["loss_events"] - solo["loss_samples"]), "J", L["solo_energy"]))
    r.append(_le(sec, "nu+ against the dense sticking impact, max error", solo["nu_err"],
                 "m/s, rad/s", L["solo_velocity"]))
    r.append(_le(sec, "feet velocity J nu+ after the impact, max", solo["feet_velocity"], "m/s",
                 L["solo_velocity"]))
    r.append(_row(sec, "sticking impulse inside the cone, min mu L_n - |L_t|",
                  solo["impulse_margin"], "N s", None, solo["impulse_margin"] > 0))
    r.append(_row(sec, "feet sticking from the impact to the end", "", "", None,
                  solo["all_sticking"]))
    r.append(_row(sec, "cone margin after the impact, min", solo["margin_min"], "N", None,
                  solo["margin_min"] > 0))
    r.append(_le(sec, "kinetic energy at the end", solo["T_end"], "J", L["solo_rest_energy"]))
    r.append(_le(sec, f"base height change over the last {SETTLE_WINDOW:g} s", solo["settle"],
                 "m", L["solo_settle"]))
    r.append(_le(sec, "vertical contact forces at the end against m g, relative error",
                 solo["weight_err"], "", L["solo_weight"]))
    for name, unit in (("T_before", "J"), ("T_after", "J"), ("loss_events", "J"),
                       ("loss_impact", "J"), ("loss_dense", "J"), ("z_end", "m")):
        r.append(_row(sec, name, solo[name], unit))
    return r


# ================================================================== plot ==

def plot(sphere_traj, sphere, sweep, block_trajs, blocks, solo_traj, solo, path, g):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(3, 3, figsize=(15, 11.5))
    # -- sphere
    a = ax[0, 0]
    a.plot(sphere_traj.time, sphere_traj.gap[:, 0], lw=0.8, color="C0", label="simulated gap")
    t_cf, h_cf, _ = bounce_closed_form(DROP, RESTITUTION, g, REST_VELOCITY)
    a.plot(t_cf, np.zeros_like(t_cf), "|", color="C3", ms=8, label=r"closed-form $t_n$")
    a.set(xlabel="t (s)", ylabel=r"gap $\varphi$ (m)",
          title=f"1. sphere, e = {RESTITUTION:g}: {sphere['n_sim']} touch-downs, at rest "
                f"from t = {sphere['rest_time']:.4f} s")
    a.legend(fontsize=7)
    a = ax[0, 1]
    b = sphere["bounces"]
    n = np.array([x["n"] for x in b])
    a.semilogy(n[:-1], [x["h_sim"] for x in b[:-1]], "o", ms=3, color="C0",
               label=r"apex $h_n$ simulated")
    a.semilogy(n[:-1], h_cf[:len(n) - 1], "-", lw=0.8, color="C3",
               label=r"$e^{2n} h_0$")
    a.semilogy(n[:-1], np.maximum(np.abs([x["h_error"] for x in b[:-1]]), 1e-18), "s", ms=3,
               color="C2", label=r"$|h_n - e^{2n}h_0|$ (m)")
    a.semilogy(n, np.maximum(np.abs([x["t_error"] for x in b]), 1e-18), "^", ms=3, color="C1",
               label=r"$|t_n - t_n^*|$ (s)")
    a.axhline(EVENT_TOL, color="k", lw=0.6, ls=":", label=f"event_tol = {EVENT_TOL:g} s")
    a.set(xlabel="touch-down n", title="apex heights and errors against the closed form")
    a.legend(fontsize=7)
    a = ax[0, 2]
    tol = np.array([s["event_tol"] for s in sweep])
    a.loglog(tol, np.maximum([s["error"] for s in sweep], 1e-18), "o-", color="C0",
             label=r"$|t_1 - \sqrt{2h_0/g}|$")
    a.loglog(tol, tol, "k:", lw=0.8, label="= event_tol")
    a.set(xlabel="event_tol (s)", ylabel="error (s)",
          title="first touch-down against event_tol (events='stop')")
    a.legend(fontsize=7)
    # -- block
    colors = {"(a) sticks": "C0", "(b) slides": "C1", "(c) pushed": "C2", "(d) launched": "C4"}
    for case, traj in block_trajs.items():
        r = blocks[case]
        c = colors[case]
        ax[1, 0].plot(traj.time, r["s"], color=c, lw=1.2, label=f"{case}, mu = {r['mu']:g}")
        ax[1, 0].plot(traj.time, r["s_cf"], color="k", lw=0.7, ls="--")
        err = np.abs(r["s"] - r["s_cf"])
        ax[1, 1].semilogy(traj.time, np.maximum(err, 1e-18), color=c, lw=1.0, label=case)
        ax[1, 2].plot(traj.time, r["margin"], color=c, lw=1.0, label=case)
        if np.isfinite(r["event_time"]):
            for a in (ax[1, 0], ax[1, 2]):
                a.axvline(r["event_time"], color=c, lw=0.6, ls=":")
    ax[1, 0].set(xlabel="t (s)", ylabel="s (m)",
                 title=f"2. block on a {math.degrees(SLOPE):g}° incline: distance down the "
                       "slope (dashed: closed form)")
    ax[1, 1].set(xlabel="t (s)", ylabel="m",
                 title=r"$|s - s^*|$ (sticking: the displacement; 0 drawn at $10^{-18}$)")
    ax[1, 2].set(xlabel="t (s)", ylabel="N",
                 title=r"cone margin $\mu\lambda_n - |\lambda_t|$ (dotted: the slip and stick "
                       "events)")
    ax[1, 2].axhline(0.0, color="k", lw=0.6)
    for a in ax[1]:
        a.legend(fontsize=7)
    # -- Solo
    t = solo_traj.time
    for c, foot in enumerate(FEET):
        ax[2, 0].plot(t, solo_traj.contact_force[:, c, 2], lw=1.0, label=f"{foot} normal")
        ax[2, 0].plot(t, np.linalg.norm(solo_traj.contact_force[:, c, :2], axis=1), lw=0.7,
                      ls="--", color=f"C{c}", label=f"{foot} tangential")
    ax[2, 0].axhline(0.25 * g * solo["mass"], color="k", lw=0.6, ls=":", label="m g / 4")
    ax[2, 0].set(xlabel="t (s)", ylabel="N",
                 title=f"3. Solo-12 dropped from {SOLO_DROP * 100:g} cm, mu = {SOLO_MU:g}: "
                       "contact forces\nnormal (solid), tangential (dashed); the four feet's "
                       "curves coincide")
    ax[2, 0].legend(fontsize=6, ncol=2)
    ax[2, 1].plot(t, solo["z"], color="C0", lw=1.0)
    ax[2, 1].axvline(solo["t_cf"], color="k", lw=0.6, ls=":", label=r"$\sqrt{2h/g}$")
    ax[2, 1].set(xlabel="t (s)", ylabel="m", title=f"base height (end {solo['z_end']:.5f} m)")
    ax[2, 1].legend(fontsize=7)
    ax[2, 2].semilogy(t, np.maximum(solo["energy"], 1e-12), color="C0", lw=1.0)
    ax[2, 2].set_ylim(1e-10, 10.0)
    ax[2, 2].axhline(TARGETS["solo_rest_energy"], color="k", lw=0.6, ls=":",
                     label=f"rest target {TARGETS['solo_rest_energy']:g} J")
    ax[2, 2].set(xlabel="t (s)", ylabel="J",
                 title=f"kinetic energy: {solo['T_before']:.4f} J before the impact, "
                       f"{solo['loss_events']:.4f} J lost in it")
    ax[2, 2].legend(fontsize=7)
    for a in ax.flat:
        a.grid(True, which="both", alpha=0.3)
        a.title.set_fontsize(9)
    fig.suptitle("Contact events of liedyn.simulate against closed forms", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ================================================================== main ==

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true",
                    help="finer steps, longer runs and more event tolerances "
                         f"(sphere dt {FULL['sphere_dt']:g} s, Solo {FULL['solo_time']:g} s at "
                         f"dt {FULL['solo_dt']:g} s)")
    ap.add_argument("--out", type=Path, default=OUT_DIR,
                    help="output folder (default: the repository's paper_figures/)")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG")
    ap.add_argument("--no-progress", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    cfg = FULL if args.full else QUICK
    stem = output_stem(args, "contact_events")
    progress = not args.no_progress

    def say(text):
        if progress:
            print(f"  {text}", file=sys.stderr, flush=True)

    g = _gravity(sphere_model())
    seconds = {}
    start = time.perf_counter()
    say(f"sphere: {cfg['sphere_time']:g} s, dt = {cfg['sphere_dt']:g} s")
    stopped = {}
    sphere_traj, stopped["sphere"] = completed(run_sphere, cfg["sphere_time"], cfg["sphere_dt"],
                                               progress=progress)
    sphere = sphere_analysis(sphere_traj, g)
    say(f"sphere: first touch-down with event_tol in {cfg['tols']}")
    sweep = tolerance_sweep(cfg["tols"], g)
    seconds["sphere"] = time.perf_counter() - start

    start = time.perf_counter()
    block_trajs, blocks = {}, {}
    for case in BLOCK_CASES:
        say(f"block {case}: {cfg['block_time']:g} s, dt = {cfg['block_dt']:g} s")
        block_trajs[case], stopped[f"block {case}"] = completed(
            run_block, case, cfg["block_time"], cfg["block_dt"], progress=progress)
        blocks[case] = block_analysis(case, block_trajs[case], g)
    seconds["block"] = time.perf_counter() - start

    start = time.perf_counter()
    robot = Solo()
    say(f"Solo-12: {cfg['solo_time']:g} s, dt = {cfg['solo_dt']:g} s")
    solo_traj, stopped["solo"] = completed(run_solo, robot, cfg["solo_time"], cfg["solo_dt"],
                                           progress=progress)
    solo = solo_analysis(robot, solo_traj, g)
    solo["mass"] = robot.mass
    seconds["solo"] = time.perf_counter() - start

    say(f"cost: Solo-12 standing {cfg['cost_time']:g} s, contacts= against constraints=")
    cost = cost_of_events(robot, cfg["cost_time"], cfg["solo_dt"], cfg["cost_repeats"])

    report(sphere, sweep, blocks, solo, seconds, g)
    print(f"cost of events: Solo-12 standing {cfg['cost_time']:g} s ({cost['steps']} steps): "
          f"contacts= {cost['events']:.3f} s, constraints= {cost['held']:.3f} s, "
          f"ratio {cost['ratio']:.2f} (median of {cfg['cost_repeats']} paired runs, IQR "
          f"{cost['ratio_stats']['q1']:.2f}–{cost['ratio_stats']['q3']:.2f})")
    load = cost["load"]
    note = reliability_note(unreliable(load["load1_before"], load["load1_after"], load["cores"],
                                       {"contacts= / constraints=":
                                        cost["ratio_stats"]["spread"]}), "cost numbers")
    if note:
        print(note)
    for part, msg in stopped.items():
        if msg is not None:
            print(f"{part}: {msg}")
    rows = rows_of(sphere, sweep, blocks, solo, g, stopped)
    rows += [_row("runtime", f"{part} (simulation and analysis)", s, "s")
             for part, s in seconds.items()]
    cost_rows = [_row("cost", "Solo-12 standing, no event: simulate(contacts=) wall time",
                      cost["events"], "s"),
                 _row("cost", "the same held with simulate(constraints=)", cost["held"], "s"),
                 dict(_row("cost", "ratio contacts= / constraints= (median of paired runs)",
                           cost["ratio"], "x"),
                      q1=cost["ratio_stats"]["q1"], q3=cost["ratio_stats"]["q3"])]
    rows += [dict(r, **cost["load"]) for r in cost_rows]
    print()
    for r in rows:
        if r["met"]:
            v = r["value"]
            text = f"{v:.3g}" if isinstance(v, (float, np.floating)) else str(v)
            print(f"target {'met' if r['met'] == 'yes' else 'missed':<6} [{r['kind']}] "
                  f"{r['quantity']}: {text}" + (f" (limit {r['target']:g})"
                                                if isinstance(r["target"], float) else ""))
    args.out.mkdir(parents=True, exist_ok=True)
    prov = stamp()
    write_rows(f"{stem}.csv", FIELDS, rows, stamp=prov)
    write_rows(f"{stem}_bounces.csv", BOUNCE_FIELDS, sphere["bounces"], stamp=prov)
    print(f"\nwrote {stem}.csv, {stem}_bounces.csv")
    if not args.no_plot:
        plot(sphere_traj, sphere, sweep, block_trajs, blocks, solo_traj, solo, f"{stem}.png", g)
        print(f"wrote {stem}.png")
    met = sum(r["met"] == "yes" for r in rows)
    total = sum(r["met"] in ("yes", "no") for r in rows)
    print(f"{met} of {total} targets met")


def report(sphere, sweep, blocks, solo, seconds, g):
    print(f"1. Sphere (m = {SPHERE_MASS:g} kg, radius {SPHERE_RADIUS:g} m) dropped from "
          f"h0 = {DROP:g} m, e = {RESTITUTION:g}, frictionless, rest_velocity = "
          f"{REST_VELOCITY:g} m/s, event_tol = {EVENT_TOL:g} s ({seconds['sphere']:.1f} s)")
    print(f"   {sphere['n_sim']} touch-downs (closed form: rest at impact {sphere['n_rest']}); "
          f"max |t_n - t_n*| = {sphere['t_err']:.2e} s, max |h_n - e^2n h0| = "
          f"{sphere['h_err']:.2e} m, flight parabola drift {sphere['flight_drift']:.1e} m")
    print(f"   at rest from t = {sphere['rest_time']:.9f} s (closed form "
          f"{sphere['rest_time_cf']:.9f} s), |lambda_n - m g| <= {sphere['rest_force_err']:.1e} N")
    if sphere["others"]:
        print(f"   other events: {[(e.kind, e.time) for e in sphere['others']]}")
    print("   n      t_n (s)          error (s)    h_n (m)          error (m)")
    for b in sphere["bounces"]:
        if b["n"] <= 5 or b["n"] >= sphere["n_rest"] - 1:
            print(f"   {b['n']:<3} {b['t_sim']:>16.12f} {b['t_error']:>10.2e} "
                  f"{b['h_sim']:>16.12f} {b['h_error']:>10.2e}")
    print("   event_tol   |t1 - sqrt(2 h0/g)|")
    for s in sweep:
        print(f"   {s['event_tol']:<10.0e} {s['error']:.2e}")
    print(f"\n2. Block (m = {BLOCK_MASS:g} kg, contact point at its centre of mass) on a "
          f"{math.degrees(SLOPE):g}° incline, tan = {math.tan(SLOPE):.4f} "
          f"({seconds['block']:.1f} s)")
    for case, b in blocks.items():
        ev = ", ".join(f"{k} at {t:.10f} s" for k, t in b["events"]) or "no events"
        exp = "none" if b["expected"] is None else \
            f"{b['expected'][0]} at {b['expected'][1]:.10f} s"
        print(f"   {case}: mu = {b['mu']:g}: {ev} (closed form: {exp}); max |s - s*| sliding "
              f"{b['pos_err']:.1e} m, sticking {b['rest_err']:.1e} m; displacement sticking "
              f"{b['rest']:.1e} m; force errors normal {b['fn_err']:.1e} N, tangential "
              f"sticking {b['ft_err']:.1e} N")
    print(f"\n3. Solo-12 ({solo['mass']:.3f} kg) dropped from {SOLO_DROP * 100:g} cm, "
          f"mu = {SOLO_MU:g}, e = 0, PD Kp = {SOLO_KP:g}, Kd = {SOLO_KD:g} "
          f"({seconds['solo']:.1f} s)")
    print(f"   touch-down events: " + ", ".join(f"{c} at {t:.12f} s" for c, t in solo["downs"])
          + f" (closed form {solo['t_cf']:.12f} s); feet closed by them: "
          + ", ".join(sorted(solo["landed"])) + f"; modes after: {solo['modes_after']}")
    print(f"   kinetic energy before {solo['T_before']:.9f} J (m g h = {solo['T_cf']:.9f} J), "
          f"after {solo['T_after']:.9f} J; lost {solo['loss_events']:.9f} J (events), "
          f"{solo['loss_dense']:.9f} J (dense sticking impact)")
    print(f"   impulse in the cone: min mu L_n - |L_t| = {solo['impulse_margin']:.4f} N s; "
          f"after: min cone margin {solo['margin_min']:.3f} N, feet sticking: "
          f"{solo['all_sticking']}")
    if solo["others"]:
        kinds = sorted({e.kind for e in solo["others"]})
        same = sum(e.modes_before == e.modes_after for e in solo["others"])
        print(f"   other events: {len(solo['others'])} ({', '.join(kinds)}), from "
              f"t = {solo['others'][0].time:.6f} s, {same} of them leaving every mode as it "
              f"was; first: " + ", ".join(f"{e.kind} of {e.contact} at {e.time:.6f} s"
                                          for e in solo["others"][:4]))
    print(f"   at the end: kinetic energy {solo['T_end']:.2e} J, base height {solo['z_end']:.6f} m "
          f"(change {solo['settle']:.1e} m over the last {SETTLE_WINDOW:g} s), vertical "
          f"forces / m g - 1 = {solo['weight_err']:.1e}")


if __name__ == "__main__":
    main()
