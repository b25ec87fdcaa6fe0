"""Whether a planned flight stays within its inputs' limits (SPEC §17.5):
rotor thrusts in ``[0, f_max]`` and their rates, joint forces within the
model's effort limits and their rates, along the samples of a
:class:`~liedyn.control.FlatMapResult`.
"""

from typing import NamedTuple, Optional

import numpy as np

from .._checks import as_array
from ..multibody.model import check_model
from .flatness import FlatMapResult

__all__ = ["Violation", "FeasibilityResult", "feasibility"]


class Violation(NamedTuple):
    """The first time one input leaves its limits.

    Attributes
    ----------
    input : str
        ``"rotor i thrust"``, ``"rotor i thrust rate"``, ``"thrust"``,
        ``"thrust rate"``, ``"joint 'name' torque"`` or ``"joint 'name'
        torque rate"``.
    sample : int
        Index of the first sample outside the limits.
    time : float or None
        Its time, when the samples' times were given.
    value : float
        The input's value there.
    limit : float
        The bound it crosses there.
    worst : float
        The value farthest outside the limits over all samples.
    """

    input: str
    sample: int
    time: Optional[float]
    value: float
    limit: float
    worst: float


class FeasibilityResult(NamedTuple):
    """Attributes
    ----------
    feasible : bool
        No input leaves its limits.
    first : Violation or None
        The earliest violation (ties: in the order of ``violations``).
    violations : tuple of Violation
        The first violation of each input that has one, earliest first.
    """

    feasible: bool
    first: Optional[Violation]
    violations: tuple


def _bound(x, name, size):
    """A bound broadcast to ``(size,)``: positive, possibly ``inf``."""
    a = as_array(x, name, allow_nonfinite=True)
    if a.shape == ():
        a = np.full(size, float(a))
    if a.shape != (size,):
        raise ValueError(f"{name}: expected a number or shape ({size},), got {a.shape}")
    if np.any(np.isnan(a)) or np.any(a <= 0.0):
        raise ValueError(f"{name}: expected positive limits (inf: none), got {a}")
    return a


def _check(values, lo, hi, names, times, out):
    """Append the first violation of each column of ``values`` (S, c)."""
    below, above = values < lo, values > hi
    bad = below | above
    for j in np.flatnonzero(bad.any(axis=0)):
        i = int(np.argmax(bad[:, j]))
        over = np.maximum(values[:, j] - hi[j], lo[j] - values[:, j])
        w = int(np.argmax(over))
        out.append(Violation(names[j], i, None if times is None else float(times[i]),
                             float(values[i, j]), float(hi[j] if above[i, j] else lo[j]),
                             float(values[w, j])))


def feasibility(model, flat, *, times=None, thrust_max=None, thrust_rate_max=None,
                torque_rate_max=None, effort=True):
    """Check a planned trajectory's inputs against their limits (SPEC §17.5).

    Rotor thrusts (``flat.rotor_thrust``; without an allocation the total
    thrust ``flat.thrust``) must lie in ``[0, thrust_max]`` and their rates
    within ``±thrust_rate_max``; joint forces within the model's
    ``joint_max_effort`` (the URDF ``<limit effort>``; ``inf``: none) and
    their rates within ``±torque_rate_max``. A model holds no torque-rate
    limit: pass it (from a URDF 1.2 ``jerk`` attribute or a datasheet).

    Parameters
    ----------
    model : Model
        The model the flat map was evaluated on.
    flat : FlatMapResult
        Of :func:`flat_map` or :func:`flat_map_along`, batched over samples
        (or one sample); rates need ``order ≥ 1``.
    times : (S,), optional, keyword
        The samples' times (:func:`flat_map_along` takes the same).
    thrust_max : float or (m,), optional, keyword
        Largest thrust of each rotor (N); the lower bound is 0 (rotors do not
        pull) and is always checked.
    thrust_rate_max, torque_rate_max : float or (m,) / (n,), optional, keyword
        Largest ``|ḟ_i|`` (N/s) and ``|τ̇_j|`` (N m/s or N/s).
    effort : bool, keyword
        Check ``|τ_j| ≤`` ``model.joint_max_effort`` (default True).

    Returns
    -------
    FeasibilityResult

    Raises
    ------
    TypeError, ValueError
        ``flat`` not a :class:`FlatMapResult`, a rate limit for an order-0
        result, limits of the wrong shape or not positive, ``times`` of
        another length than the samples.
    """
    check_model(model)
    if not isinstance(flat, FlatMapResult):
        raise TypeError(f"flat: expected a liedyn.control.FlatMapResult, got "
                        f"{type(flat).__name__}")
    batched = flat.tau.ndim == 3
    tau = flat.tau if batched else flat.tau[None]
    S, rows, n = tau.shape
    if n != model.n_joints:
        raise ValueError(f"flat: {n} joints, the model has {model.n_joints}")
    if times is not None:
        times = as_array(times, "times", shape=(S,))
    if flat.rotor_thrust is None:
        f = (flat.thrust if batched else flat.thrust[None])[:, :, None]
        names = ["thrust"]
    else:
        f = flat.rotor_thrust if batched else flat.rotor_thrust[None]
        names = [f"rotor {i} thrust" for i in range(f.shape[2])]
    m = f.shape[2]
    if rows < 2 and (thrust_rate_max is not None or torque_rate_max is not None):
        raise ValueError("thrust_rate_max, torque_rate_max: rates need the flat map of order "
                         "≥ 1; this one has order 0")
    out = []
    upper = np.full(m, np.inf) if thrust_max is None else _bound(thrust_max, "thrust_max", m)
    _check(f[:, 0], np.zeros(m), upper, names, times, out)
    if thrust_rate_max is not None:
        rate = _bound(thrust_rate_max, "thrust_rate_max", m)
        _check(f[:, 1], -rate, rate, [f"{s} rate" for s in names], times, out)
    joints = [f"joint {name!r} torque" for name in model.joint_names]
    if effort:
        lim = np.asarray(model.joint_max_effort, float)
        _check(tau[:, 0], -lim, lim, joints, times, out)
    if torque_rate_max is not None:
        rate = _bound(torque_rate_max, "torque_rate_max", n)
        _check(tau[:, 1], -rate, rate, [f"{s} rate" for s in joints], times, out)
    out.sort(key=lambda v: v.sample)
    return FeasibilityResult(not out, out[0] if out else None, tuple(out))
