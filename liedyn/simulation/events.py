"""Contact events in a simulation (SPEC §10.2): unilateral point contacts
that open, close, stick and slide, the events located on the step, and the
hybrid trajectory.

Each contact is in one of four modes:

==========  =====  ======================================================
``OPEN``    0      apart: no force; watched: the gap ``φ`` (touch-down)
``CLOSED``  1      frictionless, held along its normal (``Contact1D``);
                   watched: ``λ_n`` (lift-off)
``STICK``   2      friction, held as a point (``Contact3D``; a sphere rolls,
                   ``RollingContact``); watched:
                   ``λ_n`` (lift-off) and the cone margin
                   ``μ λ_n − ‖λ_t‖`` (slip)
``SLIDE``   3      friction, held along its normal, the Coulomb force
                   ``μ λ_n d`` applied (``d`` opposes the slip velocity);
                   watched: ``λ_n`` (lift-off) and the slip velocity
                   along its initial direction (stick)
==========  =====  ======================================================

Between events the closed contacts are held by the constrained dynamics
(SPEC §10.1, projection). The run advances in windows of ``WINDOW`` steps
after an event, doubled after each window without one (up to
``MAX_WINDOW``); the watched functions (a force starting its segment at
``≤ 0`` shifted by ``FORCE_SHIFT·FORCE_RTOL·m g``, so that each is armed
from the start) are evaluated at the samples as they are recorded, 16 at a
time (:class:`~liedyn.simulation.locate.Watcher`), and the window ends
within 16 steps of the first sample ``k`` where one of them has gone from
positive to ``≤ 0``. Its
zero is located on the step's continuous extension, the Runge–Kutta step of
length ``s ∈ (0, h]`` from sample ``k − 1`` (the method's own order, so the
event state is as accurate as a sample), to ``event_tol`` in time and the
forces also to their round-off: found on the step's dense output (cubic
Hermite, :class:`~liedyn.simulation.locate.DenseStep`) and bracketed by two
such steps (:mod:`liedyn.simulation.locate`). Every function is then checked
at the located state and one that crossed earlier is located in turn; the
functions ``≤ 0`` at the earliest zero switch together. The event state is recorded, then the switch:

touch-down
    the impact law of :func:`liedyn.impact` on every closed contact
    (restitution ``e``, a rebound slower than ``rest_velocity`` taken as
    inelastic so that bounces end), then, for contacts with friction that
    stay closed, the inelastic impulse that stops their tangential motion
    if it lies in their friction cones (else they slide);
lift-off
    the contact opens;
slip
    the contact slides, in the direction its friction makes it accelerate
    (:meth:`ContactModes._onset`, from the tangential force it had);
stick
    the contact sticks (if its cone holds the force it then needs), what is
    left of its slip at the located state removed.

After every switch (and at the start) the modes are settled at the state
projected onto the held set (the state the next segment starts from): the
closed contacts moving apart faster than ``rest_velocity`` open, the
frictionless acceleration LCP (:func:`liedyn.unilateral_forward_dynamics`)
chooses which of the others push, and a contact with friction that cannot
stick slides. The post-switch state is recorded as a second sample at the
same time. The sliding
friction force depends on ``λ_n``, which depends linearly on it: ``λ_n``
solves ``(I − B μ) λ_n = λ_n⁰`` with ``B`` the responses of ``λ_n`` to unit
friction forces (one constrained solve each), exact by linearity.

Joint stops (``joint_stops=``, :class:`liedyn.JointStop`) are unilateral
rows of their own, after the contacts' (indices ``nc .. nc + ns − 1``
here; ``traj.stop_force``, ``stop_mode``, ``stop_gap``): each is ``OPEN``
(watched: its gap ``s (q_j − limit)``, touch-down) or ``CLOSED`` (held by
its row ``s q̇_j``; watched: its joint force ``λ``, lift-off), exactly like a
frictionless contact. A touch-down's impact and the settling's LCP take the
touching stops' rows together with the contacts' normal rows
(``stops=`` of :func:`liedyn.impact` and
:func:`liedyn.unilateral_forward_dynamics`), with the restitution
``stop_restitution``; the gap and velocity tolerances are then in rad (or
m for a prismatic joint).

A sphere (``radius > 0``, a round foot) with friction rolls while it
sticks (``RollingContact``: the material point at its touching point is
held) and slides with the Coulomb force at its touching point, opposing the
slip of that material point, ``ċ + ρ n × ω``. A grazing contact whose gap dips below zero
and recovers within one step is not seen (a shorter ``dt`` sees it).
"""

import math

import numpy as np

from .._checks import check_scalar
from ..contact.gaps import _real, check_contacts, check_stops
from ..contact.constraints import JointStop
from ..algorithm.forward import forward_dynamics
from ..contact.forward import constrained_forward_dynamics
from ..contact.impact import impact, impulse_dynamics, restitution_arg
from ..contact.unilateral import unilateral_forward_dynamics
from ..multibody.results import _freeze, _frozen_setattr
from .modes import (CLOSED, MODE_NAMES, OPEN, SLIDE, SLIP_TOL, STICK, ContactModes,
                    friction_arg)
from .locate import GAP_TOL, EventLocation, Watcher
from .state import SimulationError, State, Trajectory

__all__ = ["ContactEvent", "OPEN", "CLOSED", "STICK", "SLIDE"]

KINDS = ("touch-down", "lift-off", "slip", "stick")

WINDOW, MAX_WINDOW = 64, 1024   # steps per simulate call between event checks: WINDOW after
                                # an event, doubled after each window without one, up to
                                # MAX_WINDOW (the steps after an event in its window are redone)
VELOCITY_TOL = 1e-6       # m/s: touching and |φ̇| ≤ VELOCITY_TOL is at rest along the normal
FORCE_RTOL = 1e-9         # relative to m g: λ_n and margins ≥ −FORCE_RTOL·m g count as ≥ 0
MAX_EVENTS_AT_ONCE = 20   # switches at one instant before the run is stopped as chattering
TURN_TOL_FACTOR = 4.0     # a slip slower than this times |v̇_t| event_tol at its located stop
                          # has stopped
ACC_TOL = 1e-9            # rad/s² (or m/s²): a resting open stop accelerating into its
                          # limit faster than this closes
TURN_RTOL = 1e-2          # a slip velocity across s₀ faster than this times its speed at the
                          # segment's start has turned, not stopped


def _stops_arg(model, joint_stops):
    """The :class:`JointStop` list of ``joint_stops``: ``None`` or ``False``
    none, ``True`` both sides of every joint where ``model.joint_lower`` /
    ``joint_upper`` is finite, or the sequence as given."""
    if joint_stops is None or joint_stops is False:
        return ()
    if joint_stops is True:
        stops = [JointStop(j, side) for j in range(model.n_joints)
                 for side, lim in (("lower", model.joint_lower[j]), ("upper", model.joint_upper[j]))
                 if np.isfinite(lim)]
        if not stops:
            raise ValueError("joint_stops: True, but no joint of the model has a finite "
                             "joint_lower or joint_upper; give a sequence of "
                             "liedyn.JointStop(joint, side, limit=…)")
        return stops
    if isinstance(joint_stops, (bool, np.bool_)):
        raise TypeError("joint_stops: expected None, True or a sequence of liedyn.JointStop")
    return joint_stops


def _transition(before, after):
    """The event kind of a contact's change of mode."""
    if before == OPEN:
        return 0
    if after == OPEN:
        return 1
    return 2 if after == SLIDE else 3


class ContactEvent:
    """An event of a run with contacts (:func:`liedyn.simulate`).

    Attributes
    ----------
    time : float
    kind : {"touch-down", "lift-off", "slip", "stick"}
    contact : str
        The contact's name.
    sample : int
        Index of the trajectory sample at the event, before the switch (the
        sample after it is ``sample + 1``, at the same time; with
        ``events="stop"`` the last sample).
    impact : ImpactResult or None
        The normal impact of a touch-down (:func:`liedyn.impact`).
    energy_loss : float
        Kinetic energy lost in the switch (J; 0 without a velocity jump).
    modes_before, modes_after : tuple of str
        Every contact's mode before and after the switch.
    """

    __slots__ = ("time", "kind", "contact", "sample", "impact", "energy_loss", "modes_before",
                 "modes_after")
    __setattr__ = _frozen_setattr

    def __init__(self, **fields):
        _freeze(self, **fields)

    def __repr__(self):
        return (f"ContactEvent({self.kind} of {self.contact!r} at t = {self.time:.9g}"
                f"{f', {self.energy_loss:.4g} J lost' if self.energy_loss else ''})")



class _Hybrid(ContactModes, EventLocation):
    """A run with unilateral contacts: windows of :func:`simulate` with the
    closed contacts held, event location, switches, the joined trajectory
    (the contacts' kinematics and forces: :class:`ContactModes`)."""

    def __init__(self, simulate, project, model, state0, duration, contacts, restitution,
                 friction, events, event_tol, rest_velocity, kw, joint_stops=None,
                 stop_restitution=0.0):
        # simulate: a segment's run (driver._segment); project: driver.project_state
        self.simulate, self._project, self.model, self.kw = simulate, project, model, kw
        self.sl = sl = check_stops(model, _stops_arg(model, joint_stops), "joint_stops")
        self.ns = len(sl)
        self.cl = cl = check_contacts(model, () if contacts is None else contacts,
                                      allow_empty=contacts is None)
        self.nc = len(cl)
        self.body = np.asarray(cl.body, np.int64)         # each contact frame's body
        self.nr = self.nc + self.ns             # the rows: the contacts', then the stops'
        self.names = cl.names + sl.names
        self.e = np.concatenate([restitution_arg(restitution, self.nc),
                                 np.full(self.ns, _real(stop_restitution, "stop_restitution",
                                                        0.0, 1.0))])
        self.mu = friction_arg(friction, cl)
        if not (isinstance(events, str) and events in ("switch", "stop")):
            raise ValueError(f"events: expected 'switch' or 'stop', got {events!r}")
        self.stop = events == "stop"
        self.event_tol = check_scalar(event_tol, "event_tol")
        if not self.event_tol > 0.0:
            raise ValueError(f"event_tol: expected a positive time (s), got {event_tol}")
        self.rest_velocity = _real(rest_velocity, "rest_velocity", 0.0)
        if kw.get("control_rate") is not None:
            raise ValueError("control_rate: a held controller is not supported with contacts= "
                             "(the hold would restart at every event); give a controller of "
                             "(t, state)")
        if kw.get("reference", "world") != "world":
            raise ValueError("reference: a run with contacts= takes twists and wrenches about "
                             "the world origin (reference='world')")
        if not isinstance(state0, State):
            raise TypeError(f"state0: expected a liedyn.State, got {type(state0).__name__}")
        self.state0 = state0
        if self.ns:
            _, _, q, qd = self._full(state0)
            phi, _ = sl.gaps(q, qd)
            for i in np.flatnonzero(phi < -GAP_TOL):
                st = sl.stops[i]
                raise ValueError(f"state0: joint {model.joint_names[sl.joint[i]]!r} is beyond "
                                 f"its {st.side} stop {sl.limit[i]:g} by {-phi[i]:.3e} (rad or "
                                 f"m; more than {GAP_TOL:g}), stop {sl.names[i]!r} of "
                                 "joint_stops")
        self.t0 = check_scalar(kw.get("t0", 0.0), "t0")
        self.duration = check_scalar(duration, "duration", nonneg=True)
        self.dt = check_scalar(kw["dt"], "dt")
        if not self.dt > 0.0:
            raise ValueError(f"dt: the step must be positive, got dt = {self.dt}")
        self.controller, self.plant = kw.get("controller"), kw.get("plant")
        for f, name in ((self.controller, "controller"), (self.plant, "plant")):
            if f is not None and not callable(f):
                raise TypeError(f"{name}: expected a callable or None, got {type(f).__name__}")
        g = np.linalg.norm(model.gravity) if np.any(model.gravity) else 1.0
        self.force_tol = FORCE_RTOL * float(np.sum(model.body_mass)) * g
        self.d = np.zeros((self.nc, 3))          # friction directions of sliding contacts
        self.s0 = np.zeros((self.nc, 3))         # slip directions at a segment's start
        self.speed0 = np.zeros(self.nc)          # and the slip speeds there
        self.pieces, self.events = [], []
        self._memo = {}
        self._workspaces = {}                  # order: the Workspace of the feet's kinematics
        self.steps = self.rejected = self.evaluations = 0

    # -- segments -------------------------------------------------------------------

    def _run(self, state, t, duration, seg, steps_dt=None, watch=None, reuse=None):
        """``simulate`` from ``state`` for ``duration`` with the segment's set
        (ended early by ``watch``, :class:`Watcher`); the steps of ``steps_dt``
        that locate an event from one state share the run kept in
        ``reuse``."""
        modes, cs, rows = seg
        kw = dict(self.kw)
        kw.update(t0=t, constraints=cs, plant=self._plant(modes, cs, rows), progress=False,
                  watch=watch)
        if steps_dt is not None:
            kw.update(dt=steps_dt, adaptive=False, min_step=None, max_step=None, reuse=reuse)
        try:
            traj = self.simulate(self.model, state, duration, **kw)
        except SimulationError as err:
            if steps_dt is None:                   # a window: its samples are the run's
                self._keep(err.trajectory, seg, 1 if self.pieces else 0, len(err.trajectory))
            raise SimulationError(str(err), err.time, err.quantity, self._trajectory()) from None
        except BaseException as err:               # Ctrl-C or a callback's exception
            part = getattr(err, "trajectory", None)
            if steps_dt is None and part is not None:
                self._keep(part, seg, 1 if self.pieces else 0, len(part))
            notes = getattr(err, "__notes__", None)
            if notes:                              # the run's own note replaces the window's
                notes[:] = [x for x in notes if not x.startswith("liedyn.simulate: stopped")]
            raise
        if steps_dt is None:
            self.steps += traj.steps
            self.rejected += traj.rejected
        self.evaluations += traj.evaluations
        return traj

    # -- switches -------------------------------------------------------------------

    def _settle(self, t, state, modes, allow_impact=True, located=()):
        """New modes at ``state`` (and the state after an impact): ``(state,
        modes, impact result or None, [(contact, kind)] of slips found)``.
        ``located``: the contacts whose touch-down was located at ``t``; their
        gaps may be negative by the location's bound (``|φ̇| event_tol``),
        and the configuration is first moved onto their planes."""
        cl, nc, nr, mu = self.cl, self.nc, self.nr, self.mu
        phi, vn, vt = self._geometry(state)
        for i in range(nr):
            if phi[i] < -GAP_TOL and i not in located:
                at = "state0: " if not self.pieces else ""
                what = (f"contact {cl.names[i]!r} penetrates its plane by {-phi[i]:.3e} m"
                        if i < nc else f"stop {self.names[i]!r} is beyond its limit by "
                        f"{-phi[i]:.3e} (rad or m)")
                raise SimulationError(f"t = {t:.9g}: contacts: {at}{what} (more than "
                                      f"{GAP_TOL:g})", t, "contacts", self._trajectory())
        touching = phi <= GAP_TOL
        if np.any(phi[touching] < 0.0):
            state = self._onto_planes(state, touching)
            phi, vn, vt = self._geometry(state)
        hint = list(modes)
        imp = None
        if allow_impact and np.any(touching & (vn < -VELOCITY_TOL)):
            state, imp = self._impact(state, vn, touching)
            phi, vn, vt = self._geometry(state)
        at_rest = max(VELOCITY_TOL, 1e-3 * self.rest_velocity)   # m/s along the normal
        # a touching contact separating slower than rest_velocity is at rest too: the
        # LCP decides whether it pushes (it is then held, its normal velocity removed
        # inelastically by the projection) or leaves; this ends the Zeno sequences of a
        # foot lifted slowly by another's impact and landing again at once
        leave = max(at_rest, self.rest_velocity)
        resting = touching & (vn >= -at_rest) & (vn <= leave)
        # the frictionless LCP chooses the contacts that push
        cand = [i for i in range(nr) if resting[i]]
        modes = [OPEN] * nr
        slips = []
        if cand:
            tau, W, app, inp = self._inputs(t, state)
            u = unilateral_forward_dynamics(
                self.model, cl.subset([i for i in cand if i < nc]), *self._motion(state), 0,
                tau=tau, base_wrench=W, applied=app, gap_tol=GAP_TOL, velocity_tol=leave,
                stops=self.sl.subset([i - nc for i in cand if i >= nc]))
            for i in cand:
                if self.names[i] not in u.active:
                    continue
                if mu is None or i >= nc:
                    modes[i] = CLOSED
                elif hint[i] == SLIDE:
                    modes[i] = SLIDE                     # keeps the direction it slips in
                elif np.linalg.norm(vt[i]) <= (SLIP_TOL if hint[i] != STICK else
                                               max(SLIP_TOL, TURN_RTOL * self.speed0[i])):
                    modes[i] = STICK                     # (a stick event's round-off projected)
                else:
                    modes[i] = SLIDE
                    self._slide_along(i, vt[i] / np.linalg.norm(vt[i]))
        for _ in range(4 * nr + 1):
            # the forces are those of the state projected onto the closed set (J ν = 0:
            # what is left of a velocity along a closing or sticking contact is
            # removed, which changes the forces)
            cs, rows = self._constraints(modes, state)
            held = state if cs is None else self._project(self.model, cs, state)
            # the slip directions the next segment starts with (its forces are checked
            # with them): along the slip where it has a speed, else from the onset
            _, _, vt_held = self._geometry(held)
            starting = []
            for i in range(nc):
                speed = float(np.linalg.norm(vt_held[i]))
                if modes[i] == SLIDE and speed > SLIP_TOL:
                    self._slide_along(i, vt_held[i] / speed)
                elif modes[i] == SLIDE:
                    starting.append(i)
            if starting:
                self._onset(t, held, modes, starting)
            F, lam_n, _, _ = self._solve(t, held, modes, cs, rows)
            worst = min(range(nr), key=lambda i: lam_n[i] if modes[i] != OPEN else math.inf)
            if modes[worst] != OPEN and lam_n[worst] < -self.force_tol:
                modes[worst] = OPEN
                continue
            margins = [self._margin(i, F) if modes[i] == STICK else math.inf for i in range(nc)]
            j = int(np.argmin(margins)) if nc else None
            if j is not None and margins[j] < -self.force_tol:
                self._slip_from_force(j, F)
                modes[j] = SLIDE
                slips.append((j, 2))
                continue
            # a resting stop the frictionless LCP left open may be driven into its
            # limit by the friction of the held feet: it closes (its λ is then checked)
            into = self._stops_closing(t, held, modes, cs, resting) if mu is not None else None
            if into is not None:
                modes[into] = CLOSED
                continue
            break
        else:
            raise SimulationError(f"t = {t:.9g}: contacts: no consistent set of contact modes "
                                  f"found", t, "contacts", self._trajectory())
        return held, modes, imp, slips              # J ν = 0, and φ = 0 on the planes

    def _stops_closing(self, t, held, modes, cs, resting):
        """The open stop at rest on its limit whose gap accelerates most into
        it (``s q̈_j < 0``) with the held set and the sliding friction, or
        ``None``."""
        open_ = [i for i in range(self.nc, self.nr) if modes[i] == OPEN and resting[i]]
        if not open_:
            return None
        rows = self._constraints(modes)[1]
        _, _, applied, inp = self._solve(t, held, modes, cs, rows)
        tau, W, _, _ = self._inputs_from(t, inp)
        args = (*self._motion(held), 0)
        res = (forward_dynamics(self.model, *args, tau=tau, base_wrench=W, applied=applied)
               if cs is None else constrained_forward_dynamics(self.model, cs, *args, tau=tau,
                                                               base_wrench=W, applied=applied))
        sl = self.sl
        acc = {i: sl.sign[i - self.nc] * res.q[2][sl.joint[i - self.nc]] for i in open_}
        i = min(acc, key=acc.get)
        return i if acc[i] < -ACC_TOL else None

    def _onto_planes(self, state, touching):
        """``state`` with its configuration moved onto the planes of the
        ``touching`` contacts (the nearest in the kinetic-energy metric,
        :func:`liedyn.project_state`), its velocities kept."""
        cs, _ = self._constraints([CLOSED if c else OPEN for c in touching], state)
        s = self._project(self.model, cs, state)
        return State(s.base_pose, state.base_twist, s.q, state.qd, state.extra)

    def _impact(self, state, vn, touching):
        """The velocity jump of a touch-down: ``(state after, ImpactResult of
        the normal impact)``.

        :func:`liedyn.impact` on the touching contacts (restitution ``e``, 0
        for a rebound slower than ``rest_velocity``) says which rebound;
        with friction the jump is then taken again from the state before,
        the contacts that do not rebound stopped as points (an inelastic
        impulse, :func:`liedyn.impulse_dynamics`) where the whole impulse
        lies in their cones, along their normals only where it does not."""
        m = self.model
        e = np.where(self.e * np.maximum(-vn, 0.0) >= self.rest_velocity, self.e, 0.0)
        C, Vm, q2 = self._motion(state)

        def after(res):
            return State(C, None if res.base_twist is None else res.base_twist[0], q2[0],
                         res.q[1], state.extra)

        imp = impact(m, self.cl, C, Vm, q2, restitution=e, gap_tol=GAP_TOL, stops=self.sl)
        if self.mu is None:
            return after(imp), imp
        push = [i for i in range(self.nr) if touching[i] and imp.impulse[i] > 0.0]
        stick = [i for i in push if i < self.nc and not imp.velocity_after[i] > VELOCITY_TOL]
        for _ in range(len(stick) + 1):
            modes = [STICK if i in stick else CLOSED if i in push else OPEN
                     for i in range(self.nr)]
            cs, rows = self._constraints(modes)
            if cs is None:
                return after(imp), imp
            rest = np.concatenate([np.zeros(3) if modes[i] == STICK else [e[i]] for i in push])
            r = impulse_dynamics(m, cs, C, Vm, q2, restitution=rest)
            L = self._forces(r.impulse, modes, rows, None)
            bad = next((i for i in stick if self._margin(i, L) < 1e-9 * float(
                np.linalg.norm(self._tangential(i, L)))), None)
            if bad is None and all(L[i] @ self.cl.normal[i] >= 0.0 if i < self.nc else
                                   r.impulse[rows[i].start] >= 0.0 for i in push
                                   if i not in stick):
                return after(r), imp
            if bad is None:                         # a normal impulse pulls: keep the LCP's
                return after(imp), imp
            stick.remove(bad)
        return after(imp), imp

    def _slip_from_force(self, i, F):
        """Contact ``i`` starts to slip: its friction keeps the direction of
        the tangential force it had."""
        ft = self._tangential(i, F)
        self._slide_along(i, -ft / max(np.linalg.norm(ft), 1e-300))

    def _slip_directions(self, state, modes):
        """At a segment's start, the slip directions ``s₀`` (and the friction
        directions ``d = −s₀``) of the contacts sliding with some speed, and
        their speeds."""
        if not any(mo == SLIDE for mo in modes):
            return
        _, _, vt = self._geometry(state)
        for i in range(self.nc):
            s = float(np.linalg.norm(vt[i]))
            self.speed0[i] = s
            if modes[i] == SLIDE and s > SLIP_TOL:
                self._slide_along(i, vt[i] / s)

    def _turned(self, step, hits):
        """``hits`` without the stick events of sliding contacts whose slip
        velocity crossed its initial direction still moving: faster than
        ``SLIP_TOL``, than ``TURN_RTOL`` times its speed at the segment's
        start, and than ``TURN_TOL_FACTOR |v̇_t| event_tol`` (what the
        location leaves of a slip that stops). Their slip turned; their
        friction now opposes the new slip direction."""
        keep = []
        for i, kind in hits:
            if kind == 3:
                _, _, vt = self._geometry_at(step, len(step) - 1)
                speed = float(np.linalg.norm(vt[i]))
                at = self._slip_acceleration(step, len(step) - 1)[i]
                if speed > max(SLIP_TOL, TURN_RTOL * self.speed0[i],
                               TURN_TOL_FACTOR * float(np.linalg.norm(at)) * self.event_tol):
                    self._slide_along(i, vt[i] / speed)
                    continue
            keep.append((i, kind))
        return keep

    # -- the trajectory -------------------------------------------------------------

    def _keep(self, traj, seg, k0, k1):
        """Samples ``k0 .. k1−1`` of a window, with the contact columns."""
        if k1 <= k0:
            return
        modes, cs, rows = seg
        T = k1 - k0
        F = np.zeros((T, self.nc, 3))
        gap = np.zeros((T, self.nr))
        stop_force = np.zeros((T, self.ns))
        # with every contact held, the gaps follow from the position errors
        # φ_c = p − p(t_start) the window records: gap = gap(t_start) + nᵀ φ_c
        held = cs is not None and all(mo in (CLOSED, STICK) for mo in modes)
        if held:
            g0 = self._geometry_at(traj, 0)[0]
        for j, k in enumerate(range(k0, k1)):
            if held:
                for i in range(self.nc):
                    e = traj.position_residual[k, rows[i]]
                    gap[j, i] = g0[i] + (e @ self.cl.normal[i] if modes[i] == STICK else e[0])
            else:
                gap[j], _, vt = self._geometry_at(traj, k)
            if cs is not None:
                F[j] = self._forces(traj.force[k], modes, rows,
                                    lambda i: self._direction(i, vt))
                stop_force[j] = self._stop_forces(traj.force[k], modes, rows)
        gap[:, self.nc:] = self.sl.sign * (traj.q[k0:k1, 0][:, self.sl.joint] - self.sl.limit)
        N = self.model.n_bodies
        self.pieces.append({
            "time": traj.time[k0:k1], "base_pose": traj.base_pose[k0:k1],
            "base_twist": traj.base_twist[k0:k1], "q": traj.q[k0:k1],
            "extra": traj.extra[k0:k1], "tau": traj.tau[k0:k1],
            "base_wrench": None if traj.base_wrench is None else traj.base_wrench[k0:k1],
            "applied": (np.zeros((T, 1, N, 6)) if traj.applied is None
                        else traj.applied[k0:k1]),
            "has_applied": traj.applied is not None, "controls": list(traj.controls[k0:k1]),
            "base_acceleration": traj.base_acceleration[k0:k1],
            "joint_acceleration": traj.joint_acceleration[k0:k1],
            "contact_force": F, "gap": gap[:, :self.nc],
            "contact_mode": np.tile(np.array(modes[:self.nc], np.int8), (T, 1)),
            "stop_force": stop_force, "stop_gap": gap[:, self.nc:],
            "stop_mode": np.tile(np.array(modes[self.nc:], np.int8), (T, 1))})

    def _trajectory(self):
        P = self.pieces
        m = self.model
        if not P:
            n, N = m.n_joints, m.n_bodies
            z = np.zeros
            P = [{"time": z(0), "base_pose": z((0, 4, 4)), "base_twist": z((0, 1, 6)),
                  "q": z((0, 2, n)), "extra": z((0, 0)), "tau": z((0, 1, n)),
                  "base_wrench": z((0, 1, 6)) if m.floating_base else None,
                  "applied": z((0, 1, N, 6)), "has_applied": False, "controls": [],
                  "base_acceleration": z((0, 6)), "joint_acceleration": z((0, n)),
                  "contact_force": z((0, self.nc, 3)), "gap": z((0, self.nc)),
                  "contact_mode": z((0, self.nc), np.int8), "stop_force": z((0, self.ns)),
                  "stop_gap": z((0, self.ns)), "stop_mode": z((0, self.ns), np.int8)}]

        def cat(k):
            return np.concatenate([p[k] for p in P])
        return Trajectory(
            time=cat("time"), base_pose=cat("base_pose"), base_twist=cat("base_twist"),
            q=cat("q"), extra=cat("extra"), tau=cat("tau"),
            base_wrench=cat("base_wrench") if m.floating_base else None,
            applied=cat("applied") if any(p["has_applied"] for p in P) else None,
            controls=[c for p in P for c in p["controls"]],
            base_acceleration=cat("base_acceleration"),
            joint_acceleration=cat("joint_acceleration"), reference="world", steps=self.steps,
            rejected=self.rejected, evaluations=self.evaluations, constraints=None, force=None,
            velocity_residual=None, position_residual=None, projections=(0, 0),
            events=tuple(self.events), contact_names=self.cl.names,
            contact_force=cat("contact_force"), contact_mode=cat("contact_mode"),
            gap=cat("gap"), stop_names=self.sl.names, stop_force=cat("stop_force"),
            stop_mode=cat("stop_mode"), stop_gap=cat("stop_gap"))

    def _adopt(self, view, traj):
        """The kinematics the watch computed at the samples of ``view`` are
        those of ``traj``'s samples."""
        for k in range(len(traj)):
            hit = self._memo.get((id(view), k))
            if hit is not None and hit[0] is view:
                self._memo[(id(traj), k)] = (traj, hit[1])

    def _samples(self):
        return sum(len(p["time"]) for p in self.pieces)

    def _event(self, t, i, kind, imp, loss, before, after):
        self.events.append(ContactEvent(
            time=float(t), kind=KINDS[kind], contact=self.names[i],
            sample=self._samples() - 1, impact=imp, energy_loss=float(loss),
            modes_before=tuple(MODE_NAMES[m] for m in before),
            modes_after=tuple(MODE_NAMES[m] for m in after)))

    # -- the loop -------------------------------------------------------------------

    def run(self, progress):
        t, t1 = self.t0, self.t0 + self.duration
        state = self.state0
        E0 = self._energy(state)
        state, modes, imp, slips = self._settle(t, state, [CLOSED] * self.nr)
        if imp is not None:                       # an impact at the start
            i = int(np.argmax(np.abs(imp.impulse)))
            self.events.append(ContactEvent(
                time=t, kind=KINDS[0], contact=self.names[i], sample=0, impact=imp,
                energy_loss=E0 - self._energy(state),
                modes_before=("open",) * self.nr,
                modes_after=tuple(MODE_NAMES[m] for m in modes)))
        for i, kind in slips:
            self.events.append(ContactEvent(
                time=t, kind=KINDS[kind], contact=self.names[i], sample=0, impact=None,
                energy_loss=0.0, modes_before=tuple(MODE_NAMES[STICK if m == SLIDE else m]
                                                    for m in modes),
                modes_after=tuple(MODE_NAMES[m] for m in modes)))
        at_once, t_last = 0, None
        first = True
        window = WINDOW
        while True:
            cs, rows = self._constraints(modes)
            seg = (modes, cs, rows)
            self._slip_directions(state, modes)
            span = t1 - t
            w = min(span, window * self.dt)
            if span <= 1e-12 * max(1.0, abs(t1)):
                if first:
                    traj = self._run(state, t, 0.0, seg)
                    self._keep(traj, seg, 0, 1)
                break
            if span - w < 1e-9 * self.dt:
                w = span
            watch = Watcher(self, seg)
            traj = self._run(state, t, w, seg, watch=watch)
            watch.finish()
            self._adopt(watch.view, traj)
            hit = watch.hit
            if hit is None:
                window = min(2 * window, MAX_WINDOW)
                self._keep(traj, seg, 0 if first else 1, len(traj))
                first = False
                state, t = traj.state(-1), float(traj.time[-1])
                if progress is not None:
                    progress.update(t, self.steps)
                if t >= t1:
                    break
                continue
            k, offsets = hit
            window = WINDOW
            s, step, hits = self._locate(traj, k, offsets, seg)
            self._keep(traj, seg, 0 if first else 1, k)
            self._keep(step, seg, 1, 2)
            first = False
            state, t = step.state(-1), float(step.time[-1])
            i, kind = hits[0]
            if self.stop:
                self._event(t, i, kind, None, 0.0, modes, modes)
                break
            at_once = at_once + 1 if t_last is not None and t - t_last <= self.event_tol else 1
            t_last = t
            if at_once > MAX_EVENTS_AT_ONCE:
                raise SimulationError(f"t = {t:.9g}: contacts: {at_once} switches at one "
                                      f"instant (last: {KINDS[kind]} of "
                                      f"{self.names[i]!r}): the contact modes chatter",
                                      t, "contacts", self._trajectory())
            hits = self._turned(step, hits)
            before = list(modes)
            E0 = self._energy(state)
            new = list(modes)
            F = None
            for j, kd in hits:
                if kd == 0:
                    new[j] = CLOSED
                elif kd == 1:
                    new[j] = OPEN
                elif kd == 2:
                    if F is None:
                        F = self._solve(t, state, modes, cs, rows)[0]
                    self._slip_from_force(j, F)
                    new[j] = SLIDE
                else:
                    new[j] = STICK
            stops = [j for j, kd in hits if kd == 3]
            if stops:
                # the slip stopped: what is left of it, at most |v̇_t| event_tol, is
                # the location's error, removed with it (an inelastic tangential
                # impulse); if its cone cannot hold the force it then needs, the
                # contact slides along that force (the settling below)
                state = self._project(self.model, self._constraints(
                    [STICK if j in stops else mo for j, mo in enumerate(modes)], state)[0], state)
            touching = [j for j, kd in hits if kd == 0]
            # settled also after a turn alone: the friction's new direction changes the
            # other contacts' forces
            state, modes, imp, _ = self._settle(t, state, new, allow_impact=bool(touching),
                                                located=touching)
            if modes == before and imp is None:
                # no event (a slip velocity that turned, still moving; a stop whose cone
                # cannot hold the force it needs, sliding on along that force): the
                # sample is taken again from the settled state, whose directions and
                # forces the next window starts with
                self.pieces.pop()
                first = True
                continue
            changed = [j for j in range(self.nr) if modes[j] != before[j]]
            i, kind = hits[0] if hits else (changed[0], _transition(before[changed[0]],
                                                                    modes[changed[0]]))
            self._event(t, i, kind, imp, E0 - self._energy(state), before, modes)
            for j in changed:                       # contacts switched with it, at once
                if j != i:
                    self._event(t, j, _transition(before[j], modes[j]), imp, 0.0, before, modes)
            # the post-switch state is the first sample of the next window
            first = True
            if progress is not None:
                progress.update(t, self.steps)
        return self._trajectory()
