"""What a simulation reads and returns: :class:`State`, :class:`Inputs`,
:class:`Trajectory` and :class:`SimulationError` (SPEC §10)."""

import numpy as np

from .._checks import as_array, check_pose, counted
from ..multibody.model import _frozen
from ..multibody.results import _freeze, _frozen_setattr

__all__ = ["State", "Inputs", "Trajectory", "SimulationError"]


class State:
    """The state of a simulation: base pose and twist, joint positions and
    velocities, extra states.

    Parameters
    ----------
    base_pose : (4, 4), optional
        ``C₀``, the pose of the base frame in the world (default: the
        model's home pose).
    base_twist : (6,), optional
        ``V₀``, the spatial base twist ``(ω, v)``, world axes, about the
        reference point of the simulation (the world origin, or the base
        origin with ``reference="base"``); default zero. Zero for a fixed base.
    q, qd : (n,), optional
        Joint positions and velocities, in the model's q-column order
        (default zero).
    extra : (m,), optional
        Extra states integrated alongside (their rates come from
        :attr:`Inputs.extra_rate`); default none.

    The arrays are copied and read-only. States handed to callbacks are built
    by the simulation with the same fields (never ``None``).

    Raises
    ------
    ValueError, TypeError
        A pose not in SE(3), wrong shapes or non-finite values, naming the
        argument.
    """

    __slots__ = ("base_pose", "base_twist", "q", "qd", "extra")
    __setattr__ = _frozen_setattr

    def __init__(self, base_pose=None, base_twist=None, q=None, qd=None, extra=None):
        def arr(x, name, **kw):
            return None if x is None else _frozen(as_array(x, name, **kw))
        fields = {"base_pose": None if base_pose is None else
                  _frozen(check_pose(base_pose, "base_pose")),
                  "base_twist": arr(base_twist, "base_twist", shape=(6,)),
                  "q": arr(q, "q", ndim=1), "qd": arr(qd, "qd", ndim=1),
                  "extra": arr(extra, "extra", ndim=1)}
        if fields["q"] is not None and fields["qd"] is not None \
                and fields["q"].shape != fields["qd"].shape:
            raise ValueError(f"qd: expected the shape of q {fields['q'].shape}, "
                             f"got {fields['qd'].shape}")
        _freeze(self, **fields)

    def __repr__(self):
        fields = ", ".join(f"{k}={None if getattr(self, k) is None else getattr(self, k).shape}"
                           for k in State.__slots__)
        return f"State({fields})"


class _StageState(State):
    """The state of a stage as the callbacks see it: read-only views into one
    flat array ``(pose (16), V₀ (6), q (n), q̇ (n), z (m))`` made by
    :func:`_point`, sliced when read (a callback reading two fields pays
    for two)."""

    __slots__ = ("_s", "_n")

    def __init__(self, s, n):
        _freeze(self, _s=s, _n=n)

    base_pose = property(lambda self: self._s[:16].reshape(4, 4))
    base_twist = property(lambda self: self._s[16:22])
    q = property(lambda self: self._s[22:22 + self._n])
    qd = property(lambda self: self._s[22 + self._n:22 + 2 * self._n])
    extra = property(lambda self: self._s[22 + 2 * self._n:])


class _FieldTypeError(TypeError):
    """A field of :class:`Inputs` that is not a real numeric array; a
    simulation whose controller or plant raises it reports ``field`` and
    ``detail`` with the time."""

    def __init__(self, field, detail):
        super().__init__(f"{field}: {detail}")
        self.field, self.detail = field, detail


def _input_array(x, name):
    """An input as a float64 array (shapes and non-finite values are reported
    by the simulation, which knows the model and the time)."""
    if x is None:
        return None
    try:
        return as_array(x, name, allow_nonfinite=True)
    except TypeError as err:
        raise _FieldTypeError(name, str(err).removeprefix(f"{name}: ")) from None


def callback(f, source, fail, t, *args):
    """``f(t, *args)``, the output of the controller or plant ``source``; an
    :class:`Inputs` it built from a value that is not numeric is reported by
    ``fail(t, field, detail)`` (which raises)."""
    try:
        return f(t, *args)
    except _FieldTypeError as err:
        fail(t, err.field, f"{err.detail} (an Inputs built by the {source})")


def inputs_mismatch(inp, n, N, m, floating, source):
    """``(field, detail)``: the first field of the :class:`Inputs` ``inp``
    (``None``: no inputs) that does not fit a model of ``n`` joints and ``N``
    bodies and a state with ``m`` extra entries (``None``: not checked), or
    ``None`` when all fit; ``source`` (``"controller"`` or ``"plant"``) is
    named in ``detail``."""
    if inp is None:
        if m:
            return "extra_rate", (f"the state has {m} extra entries, so their rates must come "
                                  f"from a plant (or the controller), shape ({m},)")
        return None
    if type(inp) is not Inputs:
        return "inputs", (f"the {source} returned {type(inp).__name__}; expected liedyn.Inputs"
                          f"{' (or give a plant that makes one)' if source == 'controller' else ''}")
    for field, shape in (("tau", (n,)), ("base_wrench", (6,)), ("applied", (N, 6)),
                         ("extra_rate", (m,))):
        a = getattr(inp, field)
        if field == "base_wrench" and a is not None and not floating:
            return field, (f"the base is fixed, its wrench is the support reaction; the "
                           f"{source} must give None")
        if field == "extra_rate" and m is None:
            return None
        if field == "extra_rate" and a is None and m:
            return field, (f"the state has {m} extra entries, so the {source} must give their "
                           f"rates, shape ({m},)")
        if a is not None and a.shape != shape:
            return field, f"expected shape {shape} from the {source}, got {a.shape}"
    return None


class Inputs:
    """What drives the model during a stage: the actuator model's output.

    Parameters
    ----------
    tau : (n,), optional
        Joint forces ``τ`` (default zero).
    base_wrench : (6,), optional
        Spatial wrench ``W₀ = (m, f)`` the base actuators apply, world axes,
        moment about the simulation's reference point (the world origin, or
        the base origin with ``reference="base"``); default zero. ``None``
        for a fixed base.
    applied : (N, 6), optional
        Spatial wrenches applied to each body, same frame and point.
    extra_rate : (m,), optional
        ``ż``, the derivative of :attr:`State.extra`; required when the state
        has extra entries.

    Arrays are converted to float64 but not copied. Shapes against the model
    and finiteness are checked by the simulation, which reports the time and
    the field in a :class:`SimulationError`.

    Raises
    ------
    TypeError
        Non-numeric values, naming the argument (built by a controller or
        plant during a simulation: a :class:`SimulationError` with the time).
    """

    __slots__ = ("tau", "base_wrench", "applied", "extra_rate")
    __setattr__ = _frozen_setattr

    def __init__(self, tau=None, base_wrench=None, applied=None, extra_rate=None):
        object.__setattr__(self, "tau", _input_array(tau, "tau"))
        object.__setattr__(self, "base_wrench", _input_array(base_wrench, "base_wrench"))
        object.__setattr__(self, "applied", _input_array(applied, "applied"))
        object.__setattr__(self, "extra_rate", _input_array(extra_rate, "extra_rate"))

    def __repr__(self):
        fields = ", ".join(f"{k}={None if getattr(self, k) is None else getattr(self, k).shape}"
                           for k in self.__slots__)
        return f"Inputs({fields})"


class Trajectory:
    """The samples of a simulation: one per accepted step, the first at the
    start, the last at the end (or at the last completed step before a
    failure or an interrupt).

    Shapes fit :func:`liedyn.forward_dynamics_batch` directly::

        forward_dynamics_batch(model, traj.base_pose, traj.base_twist, traj.q, 0,
                               tau=traj.tau, base_wrench=traj.base_wrench,
                               applied=traj.applied, reference=traj.reference)

    returns ``traj.base_acceleration`` and ``traj.joint_acceleration``, and
    ``inverse_dynamics_batch(model, traj.base_pose, *traj.motion_jets(), 0, ...)``
    returns ``traj.tau`` and ``traj.base_wrench``.

    Attributes
    ----------
    time : (T,)
    base_pose : (T, 4, 4)
        ``C₀`` in the world.
    base_twist : (T, 1, 6)
        ``V₀`` about :attr:`reference` (zero for a fixed base).
    q : (T, 2, n)
        ``[q; q̇]``.
    extra : (T, m)
    tau : (T, 1, n)
        Joint forces of the stage evaluated at each sample (the inputs from
        that instant on).
    base_wrench : (T, 1, 6) or None
        Base wrench about :attr:`reference`; ``None`` for a fixed base.
    applied : (T, 1, N, 6) or None
        Applied wrenches, ``None`` if no stage applied any.
    controls : list of length T
        What the controller returned for each sample's stage (with
        ``control_rate``: the held value), ``None`` without a controller.
    base_acceleration : (T, 6)
        ``V̇₀`` the integrator used at each sample, about :attr:`reference`.
    joint_acceleration : (T, n)
        ``q̈`` the integrator used at each sample.
    reference : {"world", "base"}
    steps, rejected, evaluations : int
        Accepted steps, rejected steps (adaptive), forward-dynamics evaluations.
    constraints : ConstraintSet or None
        The held constraints, world contacts anchored (SPEC §10.1); ``None``
        for a run without.
    force : (T, m) or None
        ``λ`` of each sample's stage in the reported form of SPEC §13.1 (rows
        as ``constraints.rows``); see :meth:`force_of`.
    velocity_residual, position_residual : (T, m) or None
        ``J ν`` and ``φ`` (:func:`liedyn.constraint_error`) at each sample.
    projections : (int, int)
        Position and velocity corrections made by ``stabilization="projection"``.
    events : tuple of ContactEvent
        With ``contacts``: the events in time order (SPEC §10.2); else empty.
    contact_names : tuple of str or None
        With ``contacts``: the contacts' names.
    contact_force : (T, nc, 3) or None
        With ``contacts``: the world force on each contact at its touching
        point (zero while open; sliding: the normal and the friction force).
    contact_mode : (T, nc) int8 or None
        With ``contacts``: 0 open, 1 closed (frictionless), 2 sticking,
        3 sliding.
    gap : (T, nc) or None
        With ``contacts``: the signed gaps ``φ``.
    stop_names : tuple of str or None
        With ``joint_stops``: the stops' names (``"stop:<joint>:<side>"``).
    stop_force : (T, ns) or None
        With ``joint_stops``: each stop's joint force ``λ ≥ 0`` (N m or N,
        pushing off the stop; zero while open).
    stop_mode : (T, ns) int8 or None
        With ``joint_stops``: 0 open, 1 closed (held at its limit).
    stop_gap : (T, ns) or None
        With ``joint_stops``: ``s (q_j − limit)`` (rad or m, ``≥ 0`` inside
        the limits).
    limits : tuple of LimitViolation or None
        With ``limits``: one :class:`LimitViolation` per input that left
        its limits (first and worst value, the bound), earliest first; empty
        if none did (SPEC §10.3). ``None`` for a run without.

    With constraints the accelerations are those of
    :func:`liedyn.constrained_forward_dynamics`; the batch functions above
    reproduce them with the constraint forces as applied wrenches
    (:func:`liedyn.constraint_wrenches`).
    """

    __slots__ = ("time", "base_pose", "base_twist", "q", "extra", "tau", "base_wrench",
                 "applied", "controls", "base_acceleration", "joint_acceleration", "reference",
                 "steps", "rejected", "evaluations", "constraints", "force", "velocity_residual",
                 "position_residual", "projections", "events", "contact_names",
                 "contact_force", "contact_mode", "gap", "stop_names", "stop_force", "stop_mode",
                 "stop_gap", "limits")
    __setattr__ = _frozen_setattr
    _OPTIONAL = ("events", "contact_names", "contact_force", "contact_mode", "gap", "stop_names",
                 "stop_force", "stop_mode", "stop_gap", "limits")

    def __init__(self, **fields):
        fields = {k: fields.get(k) if k in self._OPTIONAL else fields[k] for k in self.__slots__}
        if fields["events"] is None:
            fields["events"] = ()
        _freeze(self, **fields)

    def __len__(self):
        return self.time.shape[0]

    def state(self, k):
        """The :class:`State` of sample ``k`` (negative counts from the end),
        e.g. to continue a run with ``simulate(model, traj.state(-1), …, t0=traj.time[-1])``."""
        T = len(self)
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"k: expected an int, got {type(k).__name__}")
        if not -T <= k < T:
            raise IndexError(f"k: sample {k} out of range for {counted(T, 'sample')}")
        return State(self.base_pose[k], self.base_twist[k, 0], self.q[k, 0], self.q[k, 1],
                     self.extra[k])

    def force_of(self, name):
        """The force samples ``(T, m_c)`` of the constraint called ``name`` (or
        its index), in the reported form of SPEC §13.1."""
        if self.constraints is None:
            raise ValueError("name: the run held no constraints, so there are no forces")
        cs = self.constraints
        if isinstance(name, str):
            c = cs.index(name)
        elif isinstance(name, (int, np.integer)) and not isinstance(name, (bool, np.bool_)):
            if not -len(cs) <= name < len(cs):
                raise IndexError(f"name: constraint {name} out of range for "
                                 f"{counted(len(cs), 'constraint')}")
            c = int(name) % len(cs)
        else:
            raise TypeError(f"name: expected a constraint's name or index, got "
                            f"{type(name).__name__}")
        return self.force[:, cs.rows[c]]

    def motion_jets(self):
        """``(base_twist (T, 2, 6), q (T, 3, n))``: the state rows with the
        accelerations the integrator used, the jets
        :func:`liedyn.inverse_dynamics_batch` of order 0 takes."""
        V = np.concatenate([self.base_twist, self.base_acceleration[:, None]], axis=1)
        q = np.concatenate([self.q, self.joint_acceleration[:, None]], axis=1)
        return V, q

    def __repr__(self):
        return (f"Trajectory({counted(len(self), 'sample')}, "
                f"t = {self.time[0] if len(self) else '…'}"
                f"..{self.time[-1] if len(self) else '…'}, steps={self.steps}, "
                f"rejected={self.rejected}, evaluations={self.evaluations})")


class SimulationError(ValueError):
    """A simulation stopped: non-finite or diverging state, non-finite or
    malformed input, a step that is not positive or fell below the minimum,
    or a failure of the dynamics. A diverging state is diagnosed: the
    message names the fastest mode of the linearised dynamics at the last
    sample and the step RK4 needs for it (SPEC §10.4).

    Attributes
    ----------
    time : float
        When it happened (the stage time).
    quantity : str
        What was wrong (``"tau"``, ``"q̇[2]"``, ``"step"``, …).
    trajectory : Trajectory
        The samples up to the last completed step.
    diagnosis : Diagnosis or None
        For a diverging or non-finite state: the fastest mode of the
        linearised dynamics at a good sample (SPEC §10.4), the state entry it moves
        most and the largest stable RK4 step; ``None`` otherwise.
    """

    def __init__(self, message, time, quantity, trajectory, diagnosis=None):
        super().__init__(message)
        self.time = time
        self.quantity = quantity
        self.trajectory = trajectory
        self.diagnosis = diagnosis

