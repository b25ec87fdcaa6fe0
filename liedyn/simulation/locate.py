"""Event location on a step (SPEC §10.2): the step's dense output and the
root finder.

A step of the trajectory from sample ``k − 1`` (time ``t``) to sample ``k``
(``t + h``) has a continuous extension at no integrator cost: the cubic
Hermite interpolant of the two samples' states and rates,

==========  ==========================================================
``Ω(s)``    the base pose ``C(s) = exp([Ω(s)]) C(0)``, ``Ω`` in se(3):
            ``Ω(0) = 0``, ``Ω̇(0) = V(0)``, ``Ω(h) = log(C(h) C(0)⁻¹)``,
            ``Ω̇(h) = dexp⁻¹_{Ω(h)} V(h)`` (world twists, SPEC §1)
``V(s)``    the base twist from ``V, V̇`` at both ends
``q(s)``    the joints from ``q, q̇`` at both ends
``q̇(s)``    the joint rates from ``q̇, q̈`` at both ends
==========  ==========================================================

each exact to ``O(h⁴)`` of the motion's scale. The watched functions are
evaluated on it (kinematics, and the dynamics at that state for the forces)
to find their zeros; the zero found is then bracketed by two Runge–Kutta
steps of lengths ``s ∈ (0, h]`` from sample ``k − 1`` (the states the
trajectory keeps), and a bracket the interpolant missed is narrowed on
such steps by :func:`root`.
"""

import math

import numpy as np

from ..spatial.se3 import dexp_inv, exp, log
from .modes import OPEN, SLIDE, STICK
from .state import State

GAP_TOL = 1e-6            # m: a contact with |φ| ≤ GAP_TOL is touching
ZERO_GAP = 1e-12          # m: a gap starting a segment within this of 0 is at the surface
FORCE_SHIFT = 2.0         # a force starting a segment at ≤ 0 (≥ −FORCE_RTOL·m g, as the settling
                          # accepts it) has its event at −FORCE_SHIFT·FORCE_RTOL·m g, so that it
                          # is armed from the start
WATCH_EVERY = 16          # samples watched at once (at most WATCH_EVERY − 1 steps
                          # integrated past an event, then discarded)
DENSE_RTOL = 1.0 / 16.0    # the interpolant's zero is found to this fraction of event_tol
BRACKET = 0.25             # the exact bracket spans the interpolant's zero by this times
                           # event_tol on the positive side


def root(f, a, b, fa, fb, xtol, ftol=math.inf):
    """A zero of ``f`` in ``[a, b]`` (``fa > 0 ≥ fb``): the far side ``b`` of
    a bracket no wider than ``xtol`` with ``f(b) ≥ −ftol`` (or as narrow as
    the time's resolution allows); regula falsi with the Illinois
    weighting, a bisection whenever it gains less than half the bracket."""
    wa, wb = fa, fb                    # the weighted end values the secant uses
    resolution = 4.0 * np.finfo(float).eps * max(abs(b), 1.0)
    while (b - a > xtol or fb < -ftol) and b - a > resolution:
        width = b - a
        x = b - wb * (b - a) / (wb - wa) if wb != wa else 0.5 * (a + b)
        margin = 0.25 * min(xtol, width)
        x = min(max(x, a + margin), b - margin)
        fx = f(x)
        if fx > 0.0:
            a, fa, wa = x, fx, fx
            wb *= 0.5
        else:
            b, fb, wb = x, fx, fx
            wa *= 0.5
        if b - a > 0.5 * width:
            x = 0.5 * (a + b)
            fx = f(x)
            if fx > 0.0:
                a, fa, wa = x, fx, fx
            else:
                b, fb, wb = x, fx, fx
    return b


def _hermite(y0, d0, y1, d1, h, s):
    """The cubic with values ``y0, y1`` and slopes ``d0, d1`` at ``0, h``, at ``s``."""
    u = s / h
    h00 = (1.0 + 2.0 * u) * (1.0 - u) ** 2
    h10 = u * (1.0 - u) ** 2
    h01 = u * u * (3.0 - 2.0 * u)
    h11 = u * u * (u - 1.0)
    return h00 * y0 + h10 * h * d0 + h01 * y1 + h11 * h * d1


class DenseStep:
    """The continuous extension of step ``k`` of ``traj`` (samples ``k − 1``
    and ``k``, twists about the world origin): :meth:`state` at ``s ∈ [0, h]``.
    """

    def __init__(self, traj, k, floating):
        a, b = k - 1, k
        self.t, self.h = float(traj.time[a]), float(traj.time[b] - traj.time[a])
        self.floating = floating
        self.C0 = np.array(traj.base_pose[a])
        self.extra = np.array(traj.extra[a])
        self.q = [(traj.q[j, 0], traj.q[j, 1], traj.joint_acceleration[j]) for j in (a, b)]
        if floating:
            Om1 = log(np.array(traj.base_pose[b]) @ np.linalg.inv(self.C0))
            self.Om = (np.zeros(6), traj.base_twist[a, 0], Om1,
                       dexp_inv(Om1) @ traj.base_twist[b, 0])
            self.V = (traj.base_twist[a, 0], traj.base_acceleration[a],
                      traj.base_twist[b, 0], traj.base_acceleration[b])

    def state(self, s):
        """The interpolated :class:`State` at ``s`` after the step's start."""
        h = self.h
        (q0, qd0, qdd0), (q1, qd1, qdd1) = self.q
        q = _hermite(q0, qd0, q1, qd1, h, s)
        qd = _hermite(qd0, qdd0, qd1, qdd1, h, s)
        if not self.floating:
            return State(self.C0, None, q, qd, self.extra)
        C = exp(_hermite(*self.Om, h, s)) @ self.C0
        C[3] = (0.0, 0.0, 0.0, 1.0)
        return State(C, _hermite(*self.V, h, s), q, qd, self.extra)


class _Samples:
    """The samples a run (:class:`liedyn.simulation.run._Run`) has recorded
    so far, read as the watched functions read a trajectory."""

    def __init__(self, run):
        self.run = run

    @property
    def force(self):
        return self.run.rec["force"]

    def state(self, k):
        r = self.run.rec
        return State(r["base_pose"][k], r["base_twist"][k, 0], r["q"][k, 0], r["q"][k, 1],
                     r["extra"][k])


class Watcher:
    """The watch of a window of steps (``watch=`` of the run): the watched
    functions at the recorded samples, ``WATCH_EVERY`` at a time (all
    samples at once, as the forces are read), the run ended at the first
    batch holding a sample ``k`` where an armed one is ``≤ 0``; then
    :attr:`hit` is ``(k, offsets)``, each function's offset (``None``: not
    armed at sample ``k − 1``). :meth:`finish` watches the samples left
    after the run.

    A function is watched as ``g + offset``: a force starting in
    ``[−FORCE_RTOL·m g, 0]`` (as the settling leaves it) with the offset
    ``FORCE_SHIFT·FORCE_RTOL·m g``, so that it is armed from the start, every
    other with 0. A function is armed once positive; a gap starting at the
    surface and moving away from the start."""

    def __init__(self, hybrid, seg):
        self.hybrid, self.seg = hybrid, seg
        self.view, self.seen, self.hit = None, 0, None

    def __call__(self, run):
        if self.view is None:
            self.view = _Samples(run)
        if run.T - self.seen < WATCH_EVERY:
            return False
        return self._watch(run.T)

    def finish(self):
        """Watch the samples the run recorded after the last batch."""
        if self.hit is None and self.view is not None:
            self._watch(self.view.run.T)

    def _watch(self, T):
        hy = self.hybrid
        if T <= self.seen:
            return False
        ks = range(self.seen, T)
        self.seen = T
        values, labels = hy._watched(self.view, self.seg, ks)
        if ks[0] == 0:
            g = values[0]
            kinds = np.array([kind for _, kind in labels], np.int64)
            self.offsets = np.where(np.isin(kinds, (1, 2)) & (g <= 0.0),
                                    FORCE_SHIFT * hy.force_tol, 0.0)
            vn = (hy._geometry_at(self.view, 0)[1] if np.any(kinds == 0)
                  else np.zeros(hy.nr))
            self.armed = (g + self.offsets > 0.0) | np.array(
                [kind == 0 and abs(g[j]) <= GAP_TOL and vn[i] > 0.0
                 for j, (i, kind) in enumerate(labels)], bool)
            values, ks = values[1:], ks[1:]
        if not len(ks):
            return False
        g = values + self.offsets
        positive = g > 0.0
        # armed before each sample: before the batch, or positive at a sample before it
        armed = self.armed | np.logical_or.accumulate(
            np.vstack([np.zeros_like(positive[:1]), positive[:-1]]), axis=0)
        hit = np.flatnonzero((armed & (g <= 0.0)).any(axis=1))
        if hit.size:
            r = int(hit[0])
            self.hit = (ks[r], [float(x) if a else None
                                for a, x in zip(armed[r], self.offsets, strict=True)])
            return True
        self.armed |= positive.any(axis=0)
        return False


class EventLocation:
    """The watched functions and the location of their zeros, for
    :class:`liedyn.simulation.events._Hybrid` (which holds the fields read
    here)."""

    def _watched(self, traj, seg, ks):
        """The watched functions at the samples ``ks`` of ``traj``: ``(values
        (len(ks), n_f), [(contact, kind)] of each column)``, each positive
        until its event. The forces come from the recorded constraint
        forces, all samples at once; gaps and slip velocities, needed only
        with open or sliding contacts, from each sample's kinematics."""
        modes, cs, rows = seg
        ks = list(ks)
        if any(mo == OPEN for mo in modes) or any(mo == SLIDE for mo in modes):
            geometry = [self._geometry_at(traj, k) for k in ks]
            phi = np.array([g[0] for g in geometry])
            vt = np.array([g[2] for g in geometry])
        cols, labels = [], []
        # the held contacts' recorded forces, gathered once (a run holding nothing has none)
        force = None if cs is None else traj.force[ks]
        for i in range(self.nr):
            mo = modes[i]
            if mo == OPEN:
                cols.append(phi[:, i] + ZERO_GAP)
                labels.append((i, 0))
                continue
            lam = force[:, rows[i]]
            if mo == STICK:                       # the force on the point, its cone margin
                n = self.cl.normal[i]
                fn = lam @ n
                ft = np.linalg.norm(lam - fn[:, None] * n, axis=1)
                cols += [fn, self.mu[i] * fn - ft]
                labels += [(i, 1), (i, 2)]
                continue
            cols.append(lam[:, 0])                # λ_n (the friction is tangential); a stop's λ
            labels.append((i, 1))
            if mo == SLIDE:
                cols.append(vt[:, i] @ self.s0[i])
                labels.append((i, 3))
        return np.array(cols).T.reshape(len(ks), len(labels)), labels

    def _watch(self, traj, k, seg):
        """The watched functions at sample ``k``: a list of ``(value, contact,
        kind)``."""
        values, labels = self._watched(traj, seg, [k])
        return [(float(v), i, kind) for v, (i, kind) in zip(values[0], labels, strict=True)]

    def _watch_state(self, t, state, seg, j, kind):
        """Watched function ``j`` (of ``kind``, contact or stop ``i``) at a
        state off the trajectory (the step's dense output): the gaps and
        slip velocities from its kinematics, the forces from the dynamics
        there (:meth:`_solve`)."""
        modes, cs, rows = seg
        i = self._labels(seg)[j][0]
        if kind in (0, 3):
            phi, _, vt = self._geometry(state)
            return phi[i] + ZERO_GAP if kind == 0 else float(vt[i] @ self.s0[i])
        F, lam_n, _, _ = self._solve(t, state, modes, cs, rows)
        if kind == 2:
            return self._margin(i, F)
        return float(lam_n[i])

    def _labels(self, seg):
        """``[(contact, kind)]`` of the watched functions of a segment, in the
        order of :meth:`_watched`'s columns."""
        labels = []
        for i, mo in enumerate(seg[0]):
            if mo == OPEN:
                labels.append((i, 0))
            elif mo == STICK:
                labels += [(i, 1), (i, 2)]
            else:
                labels.append((i, 1))
                if mo == SLIDE:
                    labels.append((i, 3))
        return labels

    def _locate(self, traj, k, offsets, seg):
        """``(s, trajectory of the step of length s, [(contact, kind), …])``:
        the earliest zero ``s`` of an armed watched function in step ``k``
        (its far side, within ``event_tol``) and every function that is
        ``≤ 0`` there (events within ``event_tol`` of each other are one
        switch). Each zero is found on the step's dense output
        (:class:`DenseStep`) and then bracketed within ``event_tol`` by two
        Runge–Kutta steps from sample ``k − 1`` (narrowed on such steps
        where the dense output missed it). A function that crosses inside
        the step before the zero first found, although positive again or
        not yet negative at the step's end, is found by checking them all at
        the located state and locating again in ``[0, s]`` until none
        crosses earlier."""
        state, t, h = traj.state(k - 1), float(traj.time[k - 1]), \
            float(traj.time[k] - traj.time[k - 1])
        tol = self.event_tol
        cache, reuse = {}, {}

        def restep(s):
            if s not in cache:
                cache[s] = self._run(state, t, s, seg, steps_dt=s, reuse=reuse)
            return cache[s]

        armed = [x is not None for x in offsets]
        offsets = [0.0 if x is None else x for x in offsets]
        start = [v + x for (v, _, _), x in zip(self._watch(traj, k - 1, seg), offsets,
                                                strict=True)]
        end = [v + x for (v, _, _), x in zip(self._watch(traj, k, seg), offsets, strict=True)]
        kinds = [kind for _, kind in self._labels(seg)]
        dense = DenseStep(traj, k, self.model.floating_base)
        states = {}

        def watched(s):
            """Every function at the Runge–Kutta step of length ``s``."""
            if s <= 0.0:
                return start
            return [v + x for (v, _, _), x in zip(self._watch(restep(s), 1, seg), offsets,
                                                  strict=True)]

        def approx(j, s):
            """Function ``j`` on the dense output."""
            if s <= 0.0:
                return start[j]
            if s >= h:
                return end[j]
            if s not in states:
                states[s] = dense.state(s)
            return self._watch_state(t + s, states[s], seg, j, kinds[j]) + offsets[j]

        def zero(j, hi, g_hi):
            """The far side of the first zero of function ``j`` in ``(0, hi]``
            (``g_hi ≤ 0`` on the step of length ``hi``)."""
            lo, g_lo = 0.0, start[j]
            if not g_lo > 0.0:
                # a gap starting at the surface and moving away: the zero
                # sought is where it comes back, after its largest value
                grid = [hi * 2.0 ** -i for i in range(24, 0, -1)] + [hi * i / 16
                                                                     for i in range(8, 17)]
                vals = [approx(j, x) for x in grid[:-1]] + [g_hi]
                i = int(np.argmax(vals))
                if not vals[i] > 0.0:
                    return grid[0]
                lo = grid[i]
                g_lo = watched(lo)[j]
                if not g_lo > 0.0:
                    return lo
                x = next(x for x, v in zip(grid[i:], vals[i:], strict=True) if v <= 0.0)
                if x < hi:
                    g_x = watched(x)[j]
                    if g_x > 0.0:
                        lo, g_lo = x, g_x
                    else:
                        hi, g_hi = x, g_x
            return bracket(j, lo, hi, g_lo, g_hi)

        def bracket(j, lo, hi, g_lo, g_hi):
            """The zero in ``[lo, hi]`` (``g_lo > 0 ≥ g_hi`` on the steps):
            located on the dense output, then bracketed by steps."""
            exact = lambda x: watched(x)[j]                             # noqa: E731
            a_d, b_d = approx(j, lo), approx(j, hi)
            if not a_d > 0.0 >= b_d:
                return root(exact, lo, hi, g_lo, g_hi, tol, ftols[j])
            b = root(lambda x: approx(j, x), lo, hi, a_d, b_d, DENSE_RTOL * tol, ftols[j])
            g_b = exact(b)
            if g_b > 0.0:
                return root(exact, b, hi, g_b, g_hi, tol, ftols[j])
            a = max(lo, b - BRACKET * tol)
            g_a = g_lo if a == lo else exact(a)
            if not g_a > 0.0:
                return root(exact, lo, a, g_lo, g_a, tol, ftols[j])
            return root(exact, a, b, g_a, g_b, tol, ftols[j])

        # forces are located to their round-off as well as to event_tol in time
        ftols = [math.inf if kind in (0, 3) else FORCE_SHIFT * self.force_tol for kind in kinds]
        s = min(zero(j, h, end[j]) for j, a in enumerate(armed) if a and end[j] <= 0.0)
        while True:
            # a function ≤ 0 at s crossed in (0, s]: its zero is the event's if it is
            # earlier by more than event_tol, or if the function is a force further
            # below zero than the forces are located to
            g = watched(s)
            earlier = [x for j, a in enumerate(armed) if a and g[j] <= 0.0
                       for x in [zero(j, s, g[j])]
                       if x < s - tol or g[j] < -ftols[j]]
            if not earlier:
                break
            s = min(earlier)
        found = self._watch(restep(s), 1, seg)
        hits = [(i, kind) for a, x, (v, i, kind) in zip(armed, offsets, found, strict=True)
                if a and v + x <= 0.0]
        return s, restep(s), hits
