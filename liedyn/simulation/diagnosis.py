"""Why a run diverged (SPEC §10.4): the fastest mode of the linearised
dynamics at the last good sample and the step RK4 would need for it.

Glossary
--------
==================  ===============  ==========================================
``y``               (12+2n+m,)       state coordinates ``(ξ, V₀, q, q̇, z)``,
                                     ``C₀ = exp([ξ]) C₀,k`` (fixed base:
                                     ``(q, q̇, z)``)
``G(y)``            like ``y``       state derivative ``(dexp⁻¹_ξ V₀^w, V̇₀,
                                     q̇, q̈, ż)``, the inputs of the run's
                                     controller and plant (held ones fixed)
``J``               square           ``∂G/∂y`` at ``y = 0``, central differences
``λ``               complex          an eigenvalue of ``J`` (1/s)
``R(z)``            complex          RK4's amplification ``Σ_{k≤4} z^k/k!``
``ρ(θ)``            float            RK4's stability radius along ``e^{iθ}``:
                                     the smallest ``r`` with ``|R(r e^{iθ})| = 1``
==================  ===============  ==========================================
"""

from typing import NamedTuple

import numpy as np

from ..spatial import se3
from .state import Inputs, State

__all__ = ["Diagnosis", "rk4_stability_radius"]

# Relative central-difference step: the truncation error is O(h²) of the
# third derivatives and the round-off error eps |G| / h; at 1e-6 both are
# far below the eigenvalues' size for states of order one.
_H = 1e-6
# A mode grows when Re λ exceeds this times |λ| (an undamped oscillation's
# round-off real part stays below it).
_GROWING = 1e-6


class Diagnosis(NamedTuple):
    """The linearised dynamics at a good sample of a diverged run: the last
    one whose twist, joints and extra states are within ten times the first
    sample's size.

    Attributes
    ----------
    time : float
        The sample's time.
    eigenvalue : complex
        The fastest mode ``λ`` (largest ``|λ|``), 1/s.
    entry : str
        The state entry its eigenvector is largest in.
    stable_step : float
        The largest step with every decaying mode inside RK4's stability
        region, ``min ρ(arg λ)/|λ|`` (``inf`` if none decays).
    growing : complex or None
        The mode with the largest real part if it is positive (a step does
        not stabilise it), else ``None``.
    eigenvalues : (d,) complex
        All of them.
    """

    time: float
    eigenvalue: complex
    entry: str
    stable_step: float
    growing: object
    eigenvalues: np.ndarray


# |R| above this is outside the region: |R(iy)| = 1 − y⁶/144 + … near 0 may
# round to one spacing above 1.
_ONE = 1.0 + 1e-12


def _amplification(z):
    return 1.0 + z * (1.0 + z / 2.0 * (1.0 + z / 3.0 * (1.0 + z / 4.0)))


def rk4_stability_radius(theta):
    """``ρ(θ)``: the distance from 0 to the boundary of RK4's stability
    region ``|R(z)| ≤ 1`` along ``e^{iθ}``, for ``|θ| ≥ π/2`` (the left
    half-plane; 2.785 along the negative real axis, ``2√2`` along the
    imaginary one). A scan of ``r ∈ (0, 4]``, then bisection to round-off."""
    theta = np.atleast_1d(np.asarray(theta, float))
    d = np.exp(1j * theta)
    r = np.linspace(0.0, 4.0, 4001)[1:]
    outside = np.abs(_amplification(np.outer(d, r))) > _ONE
    k = np.argmax(outside, axis=1)
    lo, hi = np.where(k > 0, r[k - 1], 0.0), r[k]
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        out = np.abs(_amplification(mid * d)) > _ONE
        hi, lo = np.where(out, mid, hi), np.where(out, lo, mid)
    return 0.5 * (lo + hi)


def _entry_names(model, floating, m):
    names = []
    if floating:
        names += [f"base pose ξ[{k}]" for k in range(6)] + [f"base_twist[{k}]" for k in range(6)]
    names += [f"q[{j}] (joint {s!r})" for j, s in enumerate(model.joint_names)]
    names += [f"qd[{j}] (joint {s!r})" for j, s in enumerate(model.joint_names)]
    return names + [f"extra[{k}]" for k in range(m)]


def _derivative(run, t, C, y, inputs_of):
    """``G(y)`` about the sample's pose ``C``."""
    from ..algorithm.forward import forward_dynamics
    model, n = run.model, run.n
    floating = model.floating_base
    off = 12 if floating else 0
    q, qd, z = y[off:off + n], y[off + n:off + 2 * n], y[off + 2 * n:]
    if floating:
        xi, V = y[:6], y[6:12]
        Ck = se3.exp(xi) @ C
        state = State(base_pose=Ck, base_twist=V, q=q, qd=qd, extra=z)
    else:
        Ck, V = None, None
        state = State(q=q, qd=qd, extra=z)
    inp = inputs_of(state)
    if inp is None:
        inp = Inputs()
    tau = np.zeros(n) if inp.tau is None else inp.tau
    W = None if not floating else (np.zeros(6) if inp.base_wrench is None else inp.base_wrench)
    fd = forward_dynamics(model, Ck, None if V is None else V[None], np.stack([q, qd]), 0,
                          tau=tau[None], base_wrench=None if W is None else W[None],
                          applied=None if inp.applied is None else inp.applied[None],
                          reference=run.reference)
    zdot = np.zeros(z.shape[0]) if inp.extra_rate is None else inp.extra_rate
    parts = [qd, fd.q[2], zdot]
    if floating:
        Vw = V.copy()
        if run.base_ref:                                   # about the base origin: to the world's
            Vw[3:] -= np.cross(V[:3], Ck[:3, 3])
        parts = [se3.dexp_inv(xi) @ Vw, fd.base_twist[1]] + parts            # SPEC §10
    return np.concatenate(parts)


def _inputs_of(run, t, held):
    """``state ↦ Inputs`` of the run at ``t``: a held input ``held`` stays fixed."""
    def inputs_of(state):
        if run.control_rate is not None:
            u = held
        elif run.controller is not None:
            u = run.controller(t, state)
        else:
            u = None
        return run.plant(t, state, u) if run.plant is not None else u
    return inputs_of


def _mode(lam):
    if abs(lam.imag) <= 1e-9 * abs(lam):
        return f"{lam.real:.3g}"
    return f"{lam.real:.3g} ± {abs(lam.imag):.3g}i"


# The diagnosed sample is the last whose twist, joints and extra states are
# within this factor of the first sample's size (at least 1): a numerical
# instability grows by |R(hλ)| per step, and at the velocities it reaches
# the velocity products of the dynamics would swamp the linearisation.
_GROWTH = 10.0


def _sample(traj, floating):
    """The index of the sample to linearise at."""
    T = len(traj)
    x = np.concatenate([traj.base_twist.reshape(T, -1) if floating else np.zeros((T, 0)),
                        traj.q.reshape(T, -1), traj.extra], axis=1)
    size = np.max(np.abs(x), axis=1, initial=0.0)
    return int(np.flatnonzero(size / _GROWTH <= max(1.0, size[0]))[-1])     # no overflow


def diagnose(run):
    """``(text, Diagnosis or None)`` for a run that stopped diverging: the
    fastest mode at its last sample within ten times the first one's size
    (SPEC §10.4). Runs with held constraints, or without a sample, get no
    diagnosis."""
    if run.held is not None or run.T == 0:
        return "", None
    try:
        traj = run._trajectory()
        floating = run.model.floating_base
        ks = _sample(traj, floating)
        t = float(traj.time[ks])
        s = traj.state(ks)
        C = s.base_pose
        y0 = np.concatenate(([np.zeros(6), s.base_twist] if floating else [])
                            + [s.q, s.qd, s.extra])
        inputs_of = _inputs_of(run, t, traj.controls[ks])
        d = y0.shape[0]
        J = np.empty((d, d))
        for i in range(d):
            h = _H * max(1.0, abs(y0[i]))
            yp, ym = y0.copy(), y0.copy()
            yp[i] += h
            ym[i] -= h
            J[:, i] = (_derivative(run, t, C, yp, inputs_of)
                       - _derivative(run, t, C, ym, inputs_of)) / (2.0 * h)
        lam, vec = np.linalg.eig(J)
    except Exception as err:                     # the diagnosis must not hide the failure
        return f" (no diagnosis of its fastest mode: {type(err).__name__}: {err})", None
    if not np.any(lam):
        return (f"; at the sample t = {t:.6g} the linearised dynamics have no mode (the "
                f"state derivative does not depend on the state)"), None
    k = int(np.argmax(np.abs(lam)))
    names = _entry_names(run.model, floating, s.extra.shape[0])
    e = int(np.argmax(np.abs(vec[:, k])))
    size = np.abs(lam)
    decaying = (lam.real <= _GROWING * size) & (size > 0.0)
    theta = np.angle(lam[decaying])
    theta = np.where(np.abs(theta) < 0.5 * np.pi, np.sign(theta) * 0.5 * np.pi, theta)
    steps = rk4_stability_radius(theta) / size[decaying] if decaying.any() else np.array([])
    stable = float(steps.min()) if steps.size else np.inf
    g = int(np.argmax(lam.real))
    growing = complex(lam[g]) if lam.real[g] > _GROWING * size[g] else None
    diag = Diagnosis(t, complex(lam[k]), names[e], stable, growing, lam)
    hint = ""
    n = run.n
    j = e - (12 if floating else 0) - n
    if 0 <= j < n and run.model.joint_damping[j] > 0.0:
        hint = f", joint damping of {run.model.joint_names[j]!r}?"
    loop = ("with the held input" if run.control_rate is not None else
            "closed-loop" if run.controller is not None else
            "with the plant" if run.plant is not None else "open-loop")
    text = (f"; at the sample t = {t:.6g} the fastest mode of the linearised dynamics "
            f"({loop}; an eigenvalue of the central-difference Jacobian of the state derivative) "
            f"is {_mode(diag.eigenvalue)} s⁻¹ (mostly {diag.entry}{hint})")
    step = None if run.adaptive else run._grid()[0]
    if np.isfinite(stable):
        text += f"; RK4 needs dt < {stable:.2g} s"
        if step is not None:
            text += f" (this run: dt = {step:.3g} s)"
    if growing is not None and (step is None or step < stable):
        # the step is not at fault: name what grows in the dynamics themselves
        text += (f"; a mode grows at {_mode(growing)} s⁻¹, which no step makes stable: the "
                 f"dynamics themselves diverge")
    return text, diag
