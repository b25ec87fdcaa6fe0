"""The public entry points of a simulation: :func:`simulate`, which runs
one :class:`~.run._Run` or, with contacts or joint stops, the segments of a
:class:`~.events._Hybrid` run, and :func:`project_state`.

They sit above both: the step loop (:mod:`.run`) and the events
(:mod:`.events`) never import each other or this module; the events get
the segment runner and the projection from here as arguments.
"""

import numpy as np

from .._checks import OK, check_scalar, status_message
from ..contact.forward import row_name
from ..multibody.model import check_model
from .constraints import _PROJECT, NOT_CONVERGED, STATE_ITER
from .events import _Hybrid
from .run import _Run, _guarded, _unresolved
from .state import State

__all__ = ["simulate", "project_state"]


def simulate(model, state0, duration, *, dt, controller=None, control_rate=None, plant=None,
             adaptive=False, rtol=1e-9, atol=1e-12, min_step=None, max_step=None,
             reference="world", progress=False, t0=0.0, divergence=1e10, constraints=None,
             stabilization="projection", contacts=None, restitution=0.0, friction=None,
             events="switch", event_tol=1e-10, rest_velocity=1e-3, joint_stops=None,
             stop_restitution=0.0, limits=None):
    """Integrate the equations of motion from ``state0`` for ``duration`` seconds.

    The base pose is advanced on SE(3) by the Runge–Kutta–Munthe-Kaas method of
    order 4 (classical RK4 tableau, exact ``dexp⁻¹``; SPEC §10), the joints,
    twists and extra states in Rⁿ; each stage evaluates
    :func:`liedyn.forward_dynamics` of order 0 in one reused workspace, or,
    with ``constraints``, :func:`liedyn.constrained_forward_dynamics` of
    order 0 (the contacts and loops are held for the whole run; SPEC §10.1).

    Parameters
    ----------
    model : Model
    state0 : State
        Initial state; its twist is about ``reference``.
    duration : float ≥ 0
        Simulated time; the run covers ``[t0, t0 + duration]``.
    dt : float > 0, keyword
        Fixed step; the last step is shortened to end at ``t0 + duration``.
        With ``control_rate`` the step is the largest divisor of the control
        period ``1/control_rate`` not above ``dt`` (e.g. ``dt = 3e-3`` at
        100 Hz gives 2.5 ms), so that steps land on every sample instant.
        With ``adaptive``: the first trial step.
    controller : callable ``controller(t, state) -> u``, optional, keyword
        Evaluated at every stage of the integrator (it must then be a
        function of ``(t, state)`` only: stages are not in time order and
        rejected steps are discarded), or, with ``control_rate``, at
        ``t0 + k/control_rate`` and held (zero-order hold).
    control_rate : float > 0, optional, keyword
        Sample rate of the zero-order hold (Hz). The exact linearization of
        a :mod:`liedyn.control` law is exact only when the law runs at every
        stage; held, the error grows as ``1/rate`` (SPEC §11.6: on the
        aerial manipulator ``RotorLagLaw`` tracks to 1.3e-14 rad at every
        stage, 2.2e-4 rad at 500 Hz and 1.0e-3 rad at 100 Hz), and between
        samples the loop is open.
    plant : callable ``plant(t, state, u) -> Inputs``, optional, keyword
        The actuator model, evaluated at every stage with the controller's
        (possibly held) ``u``. Without it ``u`` must be an :class:`Inputs`
        (or ``None``: no inputs).
    adaptive : bool, keyword
        Error-controlled steps: the embedded third-order solution of the FSAL
        tableau estimates the local error, kept at
        ``‖(y₄ − y₃)/(atol + rtol·|y|)‖_RMS ≤ 1`` (pose errors in rad and m
        against ``atol + rtol``); the step follows
        ``h · clip(0.9·err^(−1/4), 0.2, 5)``, a rejected step is retried
        shorter.
    rtol, atol : float, keyword
        Tolerances of the adaptive option.
    min_step, max_step : float, optional, keyword
        Bounds of the adaptive step (with ``adaptive`` only: a fixed-step
        run refuses them); a step shrinking below ``min_step`` (default
        ``1e-10 · duration``) stops the run; ``min_step ≤ max_step``.
    reference : {"world", "base"}, keyword
        Point the twists and wrenches of states, inputs and the trajectory
        are taken about: the world origin, or the base origin at that instant.
    progress : bool, keyword
        A progress line on stderr (tqdm if installed).
    t0 : float, keyword
        Start time.
    divergence : float, keyword
        A state entry (position, twist, joint, extra) beyond this magnitude
        stops the run as diverged (``inf``: never).
    constraints : ConstraintSet, optional, keyword
        Contacts and loops held throughout (bilateral). World contacts
        without an anchor are anchored where their frames are in ``state0``
        (:meth:`ConstraintSet.anchored`); the anchored set is
        ``traj.constraints``, to pass on when continuing a run. ``state0``
        must satisfy them: ``|φ|`` and ``|J ν|`` at most 1e-9 (m, rad, m/s,
        rad/s), else the run is refused (:func:`liedyn.project_state` gives
        the nearest state that does).
    stabilization : "projection", "baumgarte", (alpha, beta) or None, keyword
        How the drift of ``J ν`` and ``φ`` is controlled (with
        ``constraints`` only). ``"projection"``: after every accepted step
        the state is projected onto ``φ = 0`` (Gauss–Newton) and then
        ``J ν = 0``, both in the kinetic-energy metric; RK4's order is kept
        and the residuals stay at round-off. ``"baumgarte"``:
        ``(J ν)˙ + 2α J ν + β² φ = 0`` at every stage with
        ``α = β = min(10, 0.01/dt)`` (1/s; critically damped, a time
        constant of at least 100 steps and 0.1 s). ``(alpha, beta)``:
        Baumgarte with those rates (1/s).
        ``None``: only ``(J ν)˙ = 0``; the residuals drift.
    contacts : sequence of PointContact, optional, keyword
        Unilateral contacts that open, close, stick and slide, with their
        events (SPEC §10.2, :mod:`liedyn.simulation.events`): touch-down (a
        gap reaches 0; the impact law of :func:`liedyn.impact` is applied),
        lift-off (a normal force reaches 0), slip (a cone margin reaches 0)
        and stick (a slip velocity reaches 0), each located on the step to
        ``event_tol``. Not with ``constraints``, ``control_rate`` or
        ``reference="base"``.
    restitution : float or (nc,), keyword
        Newton's coefficient ``e ∈ [0, 1]`` of each contact (0: inelastic).
    friction : float or (nc,) or None, keyword
        Coulomb coefficients ``μ ≥ 0``: a closed contact sticks while its
        force is inside the cone and slides with the force ``μ λ_n``
        opposing the slip otherwise; a sphere (a round foot) rolls while it
        sticks, its force and its slip those of the material point at its
        touching point; ``None``: frictionless.
    events : {"switch", "stop"}, keyword
        At an event switch the contact modes and go on, or return the
        trajectory ending at the event.
    event_tol : float > 0, keyword
        Event times are located to this (s): each is at most ``event_tol``
        after the zero it locates, and every watched function that crosses
        in a step is located, the earliest first (functions within
        ``event_tol`` of it switch with it). The state at a touch-down may
        penetrate by at most ``|φ̇| event_tol + ½|φ̈| event_tol²``; the
        switch moves it onto the plane. Forces are located to round-off as
        well: at every sample a sticking contact's force is inside its cone
        and a closed contact's normal force non-negative, to ``4e-9 m g``
        (SPEC §10.2). Any value works: each zero is found on the step's
        dense output and bracketed by two Runge–Kutta steps from the
        sample before it, more only where the dense output misses it by
        more than ``event_tol/4``.
    rest_velocity : float ≥ 0, keyword
        A rebound slower than this (m/s) closes the contact inelastically,
        so that a bouncing body comes to rest after finitely many bounces;
        a contact at the surface separating slower than this is at rest too
        (the contact LCP decides whether it is held), which ends the
        sequences of one foot's impact lifting another that lands again.
    joint_stops : None, True or sequence of JointStop, keyword
        Hard joint limits as unilateral events, each like a frictionless
        contact (SPEC §10.2): open, its gap ``s (q_j − limit)`` watched
        (touch-down: the impact law on its row ``s q̇_j`` together with the
        touching contacts), or closed, held at its limit, its joint force
        ``λ ≥ 0`` watched (lift-off). ``True``: both sides of every joint
        where ``model.joint_lower`` / ``joint_upper`` is finite. Works with
        or without ``contacts``; the stops' forces, modes and gaps are
        ``traj.stop_force``, ``traj.stop_mode``, ``traj.stop_gap``
        (``traj.stop_names``). ``None``: the limits are ignored.
    stop_restitution : float, keyword
        Newton's coefficient ``e ∈ [0, 1]`` of the joint stops.
    limits : InputLimits, optional, keyword
        Check the inputs every stage applies against their limits (SPEC
        §10.3): joint forces against ``model.joint_max_effort`` (URDF
        ``<limit effort>``) or given efforts, rotor thrusts (from the base
        wrench and the allocation) against ``[0, f_max]``. Each input that
        leaves them is reported in ``traj.limits`` (first time and value,
        worst value and its time, the bound), and either saturated
        (``InputLimits(saturate=True)``) or applied as asked with an
        :class:`InputLimitWarning` at the end of the run. Not with
        ``contacts`` or ``joint_stops``.

    Returns
    -------
    Trajectory
        One sample per accepted step, with the inputs and accelerations of
        the stage evaluated at it; with ``constraints`` also the forces
        ``λ`` and the residuals ``J ν`` and ``φ`` at each sample; with
        ``contacts`` the events (``traj.events``, :class:`ContactEvent`),
        each contact's force, mode and gap at every sample, and at every
        switch two samples at the event time (before and after it).

    Raises
    ------
    SimulationError
        (a ``ValueError``) naming the time and the quantity: a non-finite or
        malformed input from the controller or plant, a non-finite or
        diverging state, ``dt ≤ 0``, a step that is not positive at the
        time's resolution (a fixed step, or with ``adaptive`` the longest
        possible one, of at most 4 float64 spacings of the largest ``|t|`` is
        refused before the run: ``t0 = 1e16`` with ``dt = 0.02``) or fell
        below ``min_step``, a failure of the
        dynamics (with constraints: a redundant set the stage state does
        not satisfy, as :func:`liedyn.constrained_forward_dynamics` refuses
        it, or a projection that did not converge; quantity
        ``"constraints"``); ``err.trajectory`` holds the samples up to the
        last completed step. A diverging or non-finite state is diagnosed
        (``err.diagnosis``, SPEC §10.4): the message names the fastest mode
        of the linearised dynamics at the last sample within ten times the
        first one's size (an eigenvalue of the
        central-difference Jacobian of the state derivative, with the
        run's controller and plant, a held input fixed), the state entry it
        moves most, and the largest step for which every decaying mode lies
        in RK4's stability region (``2.785/|λ|`` for a real ``λ``), or says
        that a mode grows whatever the step.
    ValueError, TypeError
        Bad arguments, naming them; a fixed-step trajectory that would not
        fit in the machine's memory (``dt = 1e-12``), before anything is
        allocated.

    Notes
    -----
    Callbacks receive a :class:`State` whose arrays are read-only views of
    one fresh array per stage (keeping them is safe). Runs whose inputs
    change only at sample instants (no plant, and no controller or a held
    one) take the steps between two instants in one compiled call; with a
    callback at every stage each stage returns to Python, which costs
    about as much again as the dynamics (``experiments/bench_simulate.py``).
    The trajectory keeps every accepted step, ``(26 + 4n + m)`` floats each
    (plus ``6N`` with applied wrenches, ``3 m_c`` with ``m_c`` constraint
    rows). With projection the adaptive step evaluates the first stage of
    every step afresh (5 evaluations per step): the projected state is not
    the one the last stage saw.

    Any other exception leaving the run — ``KeyboardInterrupt`` (Ctrl-C) or
    one raised by a callback — is re-raised unchanged with the trajectory up
    to the last completed step attached as its ``.trajectory`` attribute
    and a note saying so: an interrupted run is not returned as if it had
    finished.
    """
    kw = dict(dt=dt, controller=controller, control_rate=control_rate, plant=plant,
              adaptive=adaptive, rtol=rtol, atol=atol, min_step=min_step, max_step=max_step,
              reference=reference, t0=t0, divergence=divergence, stabilization=stabilization)
    if contacts is not None or (joint_stops is not None and joint_stops is not False):
        if limits is not None:
            raise ValueError("limits: input limits are checked in runs without contacts= and "
                             "joint_stops= only")
        return _with_contacts(model, state0, duration, contacts, restitution, friction, events,
                              event_tol, rest_velocity, constraints, progress, kw, joint_stops,
                              stop_restitution)
    for name, value, default in (("restitution", restitution, 0.0), ("friction", friction, None),
                                 ("events", events, "switch"), ("event_tol", event_tol, 1e-10),
                                 ("rest_velocity", rest_velocity, 1e-3),
                                 ("stop_restitution", stop_restitution, 0.0)):
        if value is not default and not (np.ndim(value) == 0 and value == default):
            raise ValueError(f"{name}: only a run with contacts= or joint_stops= has contact "
                             "events")
    run = _Run(model, state0, duration, dt=dt, controller=controller,
               control_rate=control_rate, plant=plant, adaptive=adaptive, rtol=rtol, atol=atol,
               min_step=min_step, max_step=max_step, reference=reference, progress=progress,
               t0=t0, divergence=divergence, constraints=constraints,
               stabilization=stabilization, limits=limits)
    if run.held is not None:
        run.held.check_initial()
    return run.run()


def _segment(model, state0, duration, reuse=None, **kw):
    """:func:`simulate` of one stretch of a run with contacts (a window of
    steps, or one step to an event being located): no contacts, and no check
    of the step against the time's resolution, which the whole run had and
    which a located step, a fraction of one, may be below. ``reuse``, a
    dict, keeps the run to restart it (:meth:`_Run.restart`) for the next
    stretch from the same ``state0`` with the same arguments but ``duration``
    and ``dt``."""
    if reuse is not None and "run" in reuse:
        return reuse["run"].restart(duration, kw["dt"])
    run = _Run(model, state0, duration, segment=True, **kw)
    if run.held is not None:
        run.held.check_initial()
    if reuse is not None:
        reuse["run"] = run
    return run.run()


def _with_contacts(model, state0, duration, contacts, restitution, friction, events, event_tol,
                   rest_velocity, constraints, progress, kw, joint_stops=None,
                   stop_restitution=0.0):
    """:func:`simulate` with unilateral contacts (:mod:`.events`)."""
    check_model(model)
    if constraints is not None:
        raise ValueError("constraints: a run with contacts= holds its closed contacts itself; "
                         "constraints held together with them are not supported")
    if not (isinstance(kw["stabilization"], str) and kw["stabilization"] == "projection"):
        raise ValueError("stabilization: a run with contacts= projects onto its closed "
                         "contacts ('projection')")
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress: expected a bool, got {type(progress).__name__}")
    t0, dt = check_scalar(kw["t0"], "t0"), check_scalar(kw["dt"], "dt")
    issue = dt > 0.0 and _unresolved(t0, check_scalar(duration, "duration", nonneg=True), dt)
    if issue:
        raise ValueError(f"dt: at t0 = {t0:g}, {issue}")
    hybrid = _Hybrid(_segment, project_state, model, state0, duration, contacts, restitution,
                     friction, events, event_tol, rest_velocity, kw, joint_stops,
                     stop_restitution)
    return _guarded(hybrid.run, hybrid.t0, hybrid.t0 + hybrid.duration, bool(progress),
                    hybrid._trajectory)


def project_state(model, constraints, state, *, reference="world"):
    """The state on the constraints nearest to ``state`` in the kinetic-energy
    metric: configuration on ``φ = 0`` (Gauss–Newton, SPEC §10.1), then the
    velocity on ``J ν = 0``, ``ν ← ν − M⁻¹Jᵀ (J M⁻¹ Jᵀ)⁺ J ν``.

    Parameters
    ----------
    model : Model
    constraints : ConstraintSet
        World contacts without an anchor are anchored where their frames are
        in ``state`` (so only loops and anchored contacts move it).
    state : State
    reference : {"world", "base"}, keyword
        The point the base twist of ``state`` (and of the result) is about.

    Returns
    -------
    State
        The projected state (extra states unchanged), which
        :func:`liedyn.simulate` accepts with the same ``constraints``.

    Raises
    ------
    ValueError, TypeError
        Bad arguments, naming them; ``state``: the Gauss–Newton iteration did
        not converge in 50 steps.
    """
    if not isinstance(state, State):
        raise TypeError(f"state: expected a liedyn.State, got {type(state).__name__}")
    run = _Run(model, state, 0.0, dt=1.0, constraints=constraints, stabilization="projection",
               reference=reference)
    status = _PROJECT.call(model._data, run.ws._data, run.sim, run.held.data, STATE_ITER)
    if status == NOT_CONVERGED:
        k = int(np.nanargmax(np.abs(run.held.arrays["phi"][0])))
        raise ValueError(f"state: the projection onto the constraints did not converge in "
                         f"{STATE_ITER} Gauss–Newton steps (|φ| = "
                         f"{run.held.arrays['err'][0]:.3g} left at "
                         f"{row_name(run.held.constraints, k)!r}): too far from a "
                         f"configuration that satisfies them, or a singular one")
    if status != OK:
        raise ValueError(f"state: {status_message(status, model)}")
    return run.current_state()
