"""Inputs against their limits during a simulation (SPEC §10.3): joint
forces against the model's effort limits, rotor thrusts against
``[0, f_max]``; each input's first violation and worst value, reported in
the trajectory, and saturated when asked.

Glossary
--------
==================  ===============  ==========================================
``τ``, ``τ_max``    (n,), (n,)       joint forces applied, effort limits
                                     (``model.joint_max_effort``, URDF
                                     ``<limit effort>``; ``inf``: none)
``W₀``              (6,)             base wrench applied, spatial
``W^B``             (6,)             it in the base frame, about the base
                                     origin: ``(Rᵀ(m − p × F), Rᵀ F)``
``A``, ``A⁺``       (6, m), (m, 6)   rotor allocation ``W^B = A f`` and its
                                     Moore–Penrose inverse
``f``, ``f_max``    (m,), (m,)       rotor thrusts ``A⁺ W^B`` and their limits
==================  ===============  ==========================================
"""

import warnings
from typing import NamedTuple

import numpy as np

from .._checks import as_array

__all__ = ["InputLimits", "LimitViolation", "InputLimitWarning"]


class InputLimitWarning(RuntimeWarning):
    """A simulation's inputs left their limits and were not saturated."""


class LimitViolation(NamedTuple):
    """One input outside its limits during a run.

    Attributes
    ----------
    input : str
        ``"joint 'name' torque"`` (a force for a prismatic joint) or
        ``"rotor i thrust"``.
    first_time : float
        The first stage time at which the input asked for was outside.
    first_value : float
        Its value then.
    worst_time : float
        When it was farthest outside.
    worst : float
        The value farthest outside its limits.
    limit : float
        The bound ``worst`` crosses.
    """

    input: str
    first_time: float
    first_value: float
    worst_time: float
    worst: float
    limit: float


class InputLimits:
    """What :func:`liedyn.simulate` checks the inputs against (SPEC §10.3).

    Parameters
    ----------
    effort : bool or float or (n,), keyword
        ``True`` (default): ``|τ_j| ≤`` ``model.joint_max_effort`` (the URDF
        ``<limit effort>``; ``inf``: none); a number or an array: those
        limits instead (positive, ``inf``: none); ``False``: not checked.
    allocation : (6, m), optional, keyword
        The rotors' allocation ``W^B = A f`` (body frame, rows (moment,
        force), e.g. from :func:`liedyn.control.rotor_allocation`), with
        ``thrust_max``. The rotor thrusts are those that produce the base
        wrench the plant applies, ``f = A⁺ W^B`` (the thrusts themselves for
        ``m ≤ 6`` independent rotors, the minimum-norm split of redundant
        ones).
    thrust_max : float or (m,), optional, keyword
        ``f_max > 0`` of each rotor (N); the lower bound is 0.
    saturate : bool, keyword
        Clip what reaches the robot to the limits: ``τ_j`` to
        ``±τ_max,j``, and the base wrench to ``W^B + A (clip(f) − f)``
        (the rotors' share of it, nothing else). The plant's own states (a
        rotor lag's thrusts, an elastic joint's motor) are not changed.
        ``False`` (default): only reported, with an
        :class:`InputLimitWarning` at the end of a run that left them.

    Raises
    ------
    TypeError, ValueError
        A non-bool ``saturate``, limits that are not positive, ``thrust_max``
        without ``allocation`` or the reverse, an allocation not ``(6, m)``
        or a ``thrust_max`` not of its ``m`` rotors.
    """

    __slots__ = ("effort", "allocation", "thrust_max", "saturate")

    def __init__(self, *, effort=True, allocation=None, thrust_max=None, saturate=False):
        if not isinstance(saturate, (bool, np.bool_)):
            raise TypeError(f"saturate: expected a bool, got {type(saturate).__name__}")
        if not isinstance(effort, (bool, np.bool_)):
            effort = _positive(effort, "effort")
        if (allocation is None) != (thrust_max is None):
            raise ValueError("allocation, thrust_max: the rotor thrusts need both the "
                             "allocation (6, m) and their limit thrust_max")
        if allocation is not None:
            allocation = as_array(allocation, "allocation", ndim=2).copy()
            if allocation.shape[0] != 6 or allocation.shape[1] < 1:
                raise ValueError(f"allocation: expected a (6, m) matrix (rows: the body-frame "
                                 f"wrench (moment, force), one column per rotor), got shape "
                                 f"{allocation.shape}")
            thrust_max = _positive(thrust_max, "thrust_max")
            m = allocation.shape[1]
            if thrust_max.shape == ():
                thrust_max = np.full(m, float(thrust_max))
            if thrust_max.shape != (m,):
                raise ValueError(f"thrust_max: expected a number or shape ({m},) for the "
                                 f"allocation's {m} rotors, got {thrust_max.shape}")
            allocation.setflags(write=False)
            thrust_max.setflags(write=False)
        object.__setattr__(self, "effort", effort if isinstance(effort, np.ndarray)
                           else bool(effort))
        object.__setattr__(self, "allocation", allocation)
        object.__setattr__(self, "thrust_max", thrust_max)
        object.__setattr__(self, "saturate", bool(saturate))

    def __setattr__(self, name, value):
        raise AttributeError(f"InputLimits is immutable; {name} cannot be set")

    def __repr__(self):
        rotors = "" if self.allocation is None else f", rotors={self.allocation.shape[1]}"
        return f"InputLimits(effort={self.effort!r}{rotors}, saturate={self.saturate})"


def _positive(x, name):
    a = as_array(x, name, allow_nonfinite=True).copy()
    if a.ndim > 1 or np.any(np.isnan(a)) or np.any(a <= 0.0):
        raise ValueError(f"{name}: expected positive limits (a number or a vector; inf: none), "
                         f"got {a}")
    return a


class _Input:
    """The running record of one group of inputs (one column each)."""

    def __init__(self, names, lower, upper):
        self.names, self.lower, self.upper = names, lower, upper
        k = len(names)
        self.first_time = np.full(k, np.nan)
        self.first_value = np.zeros(k)
        self.worst_time = np.full(k, np.nan)
        self.worst = np.zeros(k)
        self.excess = np.zeros(k)            # how far the worst is outside

    def see(self, t, x):
        """Record the values ``x`` asked for at stage time ``t``; NaN is
        never outside (the run reports it)."""
        over = np.maximum(x - self.upper, self.lower - x)
        out = over > 0.0
        if not out.any():
            return False
        new = out & np.isnan(self.first_time)
        self.first_time[new] = t
        self.first_value[new] = x[new]
        worse = out & (over > self.excess)
        self.excess[worse] = over[worse]
        self.worst[worse] = x[worse]
        self.worst_time[worse] = t
        return True

    def report(self):
        out = []
        for j in np.flatnonzero(~np.isnan(self.first_time)):
            limit = self.upper[j] if self.worst[j] > self.upper[j] else self.lower[j]
            out.append(LimitViolation(self.names[j], float(self.first_time[j]),
                                      float(self.first_value[j]), float(self.worst_time[j]),
                                      float(self.worst[j]), float(limit)))
        return out


class Monitor:
    """The limits of one run: :meth:`stage` sees (and with ``saturate``
    clips) every stage's input arrays, :meth:`report` lists the violations,
    :meth:`warn` warns of unsaturated ones."""

    def __init__(self, model, limits, about_base):
        if not isinstance(limits, InputLimits):
            raise TypeError(f"limits: expected a liedyn.InputLimits or None, got "
                            f"{type(limits).__name__}")
        n = model.n_joints
        self.saturate, self.about_base = limits.saturate, about_base
        self.joints = self.rotors = None
        if limits.effort is not False:
            lim = (np.asarray(model.joint_max_effort, float) if limits.effort is True
                   else limits.effort)
            if lim.shape == ():
                lim = np.full(n, float(lim))
            if lim.shape != (n,):
                raise ValueError(f"limits.effort: expected a number or shape ({n},) for the "
                                 f"model's {n} joints, got {lim.shape}")
            if np.isfinite(lim).any():
                self.joints = _Input([f"joint {name!r} torque" for name in model.joint_names],
                                     -lim, lim)
        if limits.allocation is not None:
            if not model.floating_base:
                raise ValueError("limits.allocation: the model's base is fixed; its rotors' "
                                 "thrusts cannot be checked (pass effort limits only)")
            A = limits.allocation
            self.A, self.A_pinv = A, np.linalg.pinv(A)
            m = A.shape[1]
            self.rotors = _Input([f"rotor {i} thrust" for i in range(m)], np.zeros(m),
                                 limits.thrust_max)
        if self.joints is None and self.rotors is None and self.saturate:
            raise ValueError("limits: saturate=True, but nothing has a finite limit: the "
                             "model's joint_max_effort is inf for every joint (its URDF gives "
                             "no <limit effort>) and no thrust_max was given; pass "
                             "InputLimits(effort=..., saturate=True) or allocation= and "
                             "thrust_max=")
        self.needs_state = self.rotors is not None

    def stage(self, t, state, arrays):
        """``(τ, W₀, W_app, ż)`` of a stage, checked and with ``saturate``
        clipped (new arrays; the ones given are left as they are)."""
        tau, W, Wa, z = arrays
        if self.joints is not None and tau.shape[0]:
            if self.joints.see(t, tau) and self.saturate:
                tau = np.clip(tau, self.joints.lower, self.joints.upper)
        if self.rotors is not None and W.shape[0]:
            C = state.base_pose
            R, p = C[:3, :3], C[:3, 3]
            F = W[3:]
            M = W[:3] if self.about_base else W[:3] - np.cross(p, F)
            Wb = np.concatenate([R.T @ M, R.T @ F])                        # SPEC §10.3
            f = self.A_pinv @ Wb
            if self.rotors.see(t, f) and self.saturate:
                dWb = self.A @ (np.clip(f, self.rotors.lower, self.rotors.upper) - f)
                dF = R @ dWb[3:]
                dM = R @ dWb[:3] + (0.0 if self.about_base else np.cross(p, dF))
                W = W + np.concatenate([dM, dF])
        return tau, W, Wa, z

    def report(self):
        """The violations, one per input that left its limits, earliest first."""
        out = []
        for group in (self.joints, self.rotors):
            if group is not None:
                out.extend(group.report())
        out.sort(key=lambda v: v.first_time)
        return tuple(out)

    def warn(self):
        """An :class:`InputLimitWarning` listing the violations, unless
        saturated or none."""
        report = self.report()
        if self.saturate or not report:
            return
        lines = "; ".join(f"{v.input} first at t = {v.first_time:.6g} s, worst {v.worst:.4g} "
                          f"(limit {v.limit:.4g}) at t = {v.worst_time:.6g} s"
                          for v in report[:4])
        more = f"; and {len(report) - 4} more" if len(report) > 4 else ""
        warnings.warn(f"liedyn.simulate: inputs outside their limits were applied as asked "
                      f"(InputLimits(saturate=True) clips them): {lines}{more}; all in "
                      f"traj.limits", InputLimitWarning, stacklevel=4)
