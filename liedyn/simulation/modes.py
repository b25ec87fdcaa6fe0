"""The contacts of a run with events in one set of modes (SPEC §10.2):
their kinematics, the held constraint set, the forces, and the sliding
friction.

==========  =====  ======================================================
``OPEN``    0      apart: no force
``CLOSED``  1      frictionless, held along its normal (``Contact1D``)
``STICK``   2      friction, held as a point (``Contact3D``; a sphere rolls
                   without slipping, ``RollingContact``)
``SLIDE``   3      friction, held along its normal, the Coulomb force
                   ``μ λ_n d`` applied at the point (``d`` opposes the slip)
==========  =====  ======================================================

The sliding force depends on ``λ_n``, which depends linearly on it:
``λ_n`` solves ``(I − B μ) λ_n = λ_n⁰``, with ``λ_n⁰`` the normal forces
without friction and ``B`` the responses of ``λ_n`` to unit friction forces
(one constrained solve each), exact by linearity. The same solve serves
the settling of modes and, as a plant wrapped around the user's, every
stage of the integrator.
"""

import numpy as np

from .._checks import as_array
from ..algorithm.closed_form import mass_matrix
from ..algorithm.kinematics import body_motion
from ..contact.constraints import ConstraintSet, Contact1D, Contact3D, RollingContact
from ..contact.forward import constrained_forward_dynamics
from ..contact.gaps import _real
from ..multibody.results import cross3
from ..multibody.workspace import Workspace
from .state import Inputs, SimulationError, callback, inputs_mismatch

__all__ = ["OPEN", "CLOSED", "STICK", "SLIDE"]

OPEN, CLOSED, STICK, SLIDE = 0, 1, 2, 3
MODE_NAMES = ("open", "closed", "sticking", "sliding")
SLIP_TOL = 1e-6           # m/s: a tangential speed at most this is not slipping
ONSET_ITER, ONSET_TOL = 50, 1e-9  # the fixed-point iteration of a slip onset's direction


def friction_arg(friction, cl):
    """``μ`` (nc,) or ``None``."""
    if friction is None:
        return None
    nc = len(cl)
    if np.ndim(friction) == 0:
        mu = np.full(nc, _real(friction, "friction", 0.0))
    else:
        mu = as_array(friction, "friction", shape=(nc,))
        bad = np.flatnonzero(~(mu >= 0.0))
        if bad.size:
            raise ValueError(f"friction: expected coefficients ≥ 0, got {mu[bad[0]]} for "
                             f"contact {cl.names[bad[0]]!r}")
    return mu


class ContactModes:
    """The contacts' kinematics and forces in given modes; :class:`_Hybrid`
    (:mod:`.events`) holds the fields read here (``model``, ``cl``, ``nc``,
    ``mu``, the directions ``d`` and ``s0``, ``controller``, ``plant``)."""

    # -- state, inputs, kinematics ------------------------------------------------

    def _full(self, s):
        """``(C, V (6,), q, qd)`` of a state with the model's defaults."""
        m = self.model
        n = m.n_joints
        C = m.home_pose if s.base_pose is None else np.array(s.base_pose)
        V = np.zeros(6) if s.base_twist is None else np.array(s.base_twist)
        q = np.zeros(n) if s.q is None else np.array(s.q)
        qd = np.zeros(n) if s.qd is None else np.array(s.qd)
        return C, V, q, qd

    def _motion(self, state):
        """``(C, V₀ (1, 6) or None, (q, q̇) (2, n))``: a state as the dynamics
        functions take it."""
        C, V, q, qd = self._full(state)
        return C, V[None] if self.model.floating_base else None, np.vstack([q, qd])

    def _source(self):
        return "plant" if self.plant is not None else "controller"

    def _input_failed(self, t, field, detail):
        raise SimulationError(f"t = {t:.9g}: {field}: {detail}", t, field, self._trajectory())

    def _inputs(self, t, state):
        """``(tau (1, n), W (1, 6) or None, applied (1, N, 6) or None, Inputs)``
        of the controller and plant at ``state``."""
        fail = self._input_failed
        u = None if self.controller is None else callback(self.controller, "controller", fail,
                                                          t, state)
        inp = u if self.plant is None else callback(self.plant, "plant", fail, t, state, u)
        return self._inputs_from(t, inp)

    def _points(self, state):
        """``(p (nc, 3), φ̇ (nc,), slip velocity (nc, 3))``: the touching points
        ``p = c − ρ n``, the normal velocities ``nᵀċ`` and the tangential
        velocities of the material points at ``p``, ``ċ + ρ n × ω`` (SPEC
        §13.1; a point contact: ``ċ``), world."""
        m, cl = self.model, self.cl
        if not self.nc:
            return np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3))
        C, V, q, qd = self._full(state)
        X, Vb = self._motion_of_feet(C, V[None] if m.floating_base else None,
                                     np.vstack([q, qd]), 0)
        c, cd = self._centres(X, Vb, 1)
        v = cd + cl.radius[:, None] * cross3(cl.normal, Vb[0, :, :3])
        vn = np.einsum("ij,ij->i", cl.normal, v)
        return c - cl.radius[:, None] * cl.normal, vn, v - vn[:, None] * cl.normal

    def _motion_of_feet(self, C, V, q, K):
        """Poses (nc, 4, 4) and spatial twist jets (K+1, nc, 6) of the
        contacts' bodies (:func:`body_motion`, in a workspace kept per order)."""
        ws = self._workspaces.get(K)
        if ws is None:
            ws = self._workspaces[K] = Workspace(self.model, K)
        return body_motion(self.model, ws, C, V, q, K, self.body)

    def _centres(self, X, V, K):
        """Jets ``c, ċ[, c̈]`` (each (nc, 3)) of the contact frames' origins,
        points fixed on their bodies (SPEC §1: ``ċ = v + ω × c``, ``c̈ = v̇ +
        ω̇ × c + ω × ċ`` with the bodies' spatial twists), from their bodies'
        poses ``X`` and twist jets ``V^(0..K−1)``; all contacts at once."""
        c = np.einsum("nij,nj->ni", X[:, :3, :3], self.cl.offset[:, :3, 3]) + X[:, :3, 3]
        out = [c, V[0, :, 3:] + cross3(V[0, :, :3], c)]
        if K == 2:
            out.append(V[1, :, 3:] + cross3(V[1, :, :3], c) + cross3(V[0, :, :3], out[1]))
        return out

    def _geometry(self, state):
        """``(φ (nr,), φ̇ (nr,), tangential velocity (nc, 3))``: the gaps and
        their rates of the contacts, then of the stops (``s (q_j − limit)``,
        ``s q̇_j``)."""
        p, vn, vt = self._points(state)
        _, _, q, qd = self._full(state)
        phi_s, vn_s = self.sl.gaps(q, qd)
        return (np.concatenate([np.einsum("ij,ij->i", self.cl.normal, p) - self.cl.height,
                                phi_s]), np.concatenate([vn, vn_s]), vt)

    def _slip_acceleration(self, traj, k):
        """The slip accelerations (nc, 3) of the contacts at sample ``k`` of
        ``traj`` (from its recorded accelerations)."""
        m = self.model
        V = (np.vstack([traj.base_twist[k, 0], traj.base_acceleration[k]])
             if m.floating_base else None)
        q = np.vstack([traj.q[k], traj.joint_acceleration[k][None]])
        return self._tangential_acceleration(*self._motion_of_feet(traj.base_pose[k], V, q, 1))

    def _tangential_acceleration(self, X, V):
        """The tangential accelerations (nc, 3) of the material points at the
        touching points, ``c̈ + ρ n × ω̇``, from the contacts' bodies' poses
        ``X`` and twist jets ``V^(0..1)``."""
        cl = self.cl
        a = self._centres(X, V, 2)[2]
        a += cl.radius[:, None] * cross3(cl.normal, V[1, :, :3])
        return a - np.einsum("ij,ij->i", cl.normal, a)[:, None] * cl.normal

    def _geometry_at(self, traj, k):
        """:meth:`_geometry` of sample ``k`` of ``traj``, computed once."""
        key = (id(traj), k)
        hit = self._memo.get(key)
        if hit is None or hit[0] is not traj:      # (an id is reused once its object is gone)
            if len(self._memo) > 4096:
                self._memo.clear()
            hit = self._memo[key] = (traj, self._geometry(traj.state(k)))
        return hit[1]

    def _energy(self, state):
        C, V, q, qd = self._full(state)
        nu = np.concatenate([V, qd]) if self.model.floating_base else qd
        return 0.5 * float(nu @ mass_matrix(self.model, C, q) @ nu)

    # -- the held set and its forces ------------------------------------------------

    def _constraints(self, modes, state=None):
        """The closed contacts as a :class:`ConstraintSet` (or ``None``) and,
        per contact, its rows (or ``None``). With ``state`` each is anchored
        on its plane (``φ = 0``) where its point is in ``state``, so that a
        projection onto the set closes the gap a located touch-down leaves
        (at most ``|φ̇| event_tol``)."""
        cl, items, rows, k = self.cl, [], [None] * self.nr, 0
        if state is not None:
            p, _, _ = self._points(state)
            centre = p + cl.radius[:, None] * cl.normal
            gap = np.einsum("ij,ij->i", cl.normal, p) - cl.height
            anchor = centre - gap[:, None] * cl.normal          # on the plane: φ = 0
        for i in range(self.nc):
            if modes[i] == OPEN:
                continue
            at = None if state is None else anchor[i]
            if modes[i] == STICK and cl.radius[i] > 0.0:     # a round foot rolls
                items.append(RollingContact(int(cl.frame[i]), normal=cl.normal[i],
                                            radius=float(cl.radius[i]), name=cl.names[i],
                                            anchor=None if at is None else
                                            at - cl.radius[i] * cl.normal[i]))
                rows[i] = slice(k, k + 3)
                k += 3
            elif modes[i] == STICK:
                items.append(Contact3D(int(cl.frame[i]), name=cl.names[i], anchor=at))
                rows[i] = slice(k, k + 3)
                k += 3
            else:
                items.append(Contact1D(int(cl.frame[i]), normal=cl.normal[i], name=cl.names[i],
                                       anchor=at))
                rows[i] = slice(k, k + 1)
                k += 1
        for i in range(self.nc, self.nr):          # the stops, held at their limits
            if modes[i] != OPEN:
                items.append(self.sl.stops[i - self.nc])
                rows[i] = slice(k, k + 1)
                k += 1
        return (ConstraintSet(self.model, items) if items else None), rows

    def _direction(self, i, vt):
        """The friction direction of sliding contact ``i``: opposing
        ``v_t + max(0, SLIP_TOL − |v_t|/2) s₀``, which turns continuously from
        the direction ``s₀`` it started along (at a slip onset ``v_t = 0``)
        to exactly against the slip velocity once that is faster than
        ``2 SLIP_TOL``, so that the forces of the other contacts stay
        continuous and their events can be located; kept at ``−s₀`` once the
        slip velocity turns against its initial direction (there the contact
        sticks, an event, and the motion up to it stays smooth)."""
        if vt[i] @ self.s0[i] > 0.0:
            w = vt[i] + max(0.0, SLIP_TOL - 0.5 * float(np.linalg.norm(vt[i]))) * self.s0[i]
            return -w / np.linalg.norm(w)
        return self.d[i]

    def _unit_wrench(self, i, p, d):
        """Applied wrench ``(1, N, 6)`` of a unit force along ``d`` at ``p``."""
        W = np.zeros((1, self.model.n_bodies, 6))
        W[0, int(self.cl.body[i])] = np.concatenate([cross3(p, d), d])
        return W

    def _solve(self, t, state, modes, cs, rows, inputs=None):
        """Forces at ``state``: ``(F (nc, 3) world force on each contact, λ_n
        (nc,) and the stops' λ after them (nr,), applied (1, N, 6) with the
        sliding friction, the inputs)``."""
        m, nc, cl = self.model, self.nc, self.cl
        tau, W, app, inp = self._inputs(t, state) if inputs is None else inputs
        if cs is None:
            return np.zeros((nc, 3)), np.zeros(self.nr), app, inp
        args = (m, cs, *self._motion(state), 0)
        base = np.zeros((1, m.n_bodies, 6)) if app is None else np.array(app)
        slide = [i for i in range(nc) if modes[i] == SLIDE]

        def lam(applied):
            return constrained_forward_dynamics(*args, tau=tau, base_wrench=W,
                                                applied=applied).force[0]

        d = {}
        lam_all = lam(base)
        if slide:
            p, _, vt = self._points(state)
            d = {i: self._direction(i, vt) for i in slide}
            units = [self._unit_wrench(i, p[i], d[i]) for i in slide]
            S = [rows[i].start for i in slide]
            R = [lam(base + unit) - lam_all for unit in units]     # responses to unit frictions
            B = np.array([r[S] for r in R]).T
            mu = self.mu[slide]
            ln = np.linalg.solve(np.eye(len(slide)) - B * mu[None, :], lam_all[S])
            for j in range(len(slide)):                          # exact by linearity
                base = base + mu[j] * ln[j] * units[j]
                lam_all = lam_all + mu[j] * ln[j] * R[j]
        F = self._forces(lam_all, modes, rows, d.get)
        lam_n = np.concatenate([np.einsum("ij,ij->i", F, cl.normal),
                                self._stop_forces(lam_all, modes, rows)])
        return F, lam_n, (base if slide or app is not None else None), inp

    def _onset(self, t, state, modes, starting):
        """Consistent slip directions of the contacts ``starting`` to slide
        from rest (slip velocity 0): each ``s₀`` is turned until the slip
        acceleration its friction ``−μ λ_n s₀`` leads to lies along ``s₀``
        (the friction opposes the slip it starts; fixed-point iteration from
        the direction of the tangential force, at most ``ONSET_ITER`` times,
        to ``ONSET_TOL`` rad). Without it the contact could slide against its
        own friction, which would then do work on it."""
        m = self.model
        cs, rows = self._constraints(modes)
        tau, W, app, inp = self._inputs(t, state)
        for _ in range(ONSET_ITER):
            _, _, applied, _ = self._solve(t, state, modes, cs, rows, (tau, W, app, inp))
            res = constrained_forward_dynamics(m, cs, *self._motion(state), 0, tau=tau,
                                               base_wrench=W, applied=applied)
            V = (np.vstack([self._full(state)[1], res.base_twist[1]]) if m.floating_base
                 else None)
            acc = self._tangential_acceleration(
                *self._motion_of_feet(self._full(state)[0], V, res.q[:3], 1))
            turn = 0.0
            for i in starting:
                a_t = acc[i]
                size = float(np.linalg.norm(a_t))
                if not size > 0.0:
                    continue
                s_new = a_t / size
                turn = max(turn, float(np.linalg.norm(s_new - self.s0[i])))
                self._slide_along(i, s_new)
            if turn <= ONSET_TOL:
                break

    def _forces(self, lam, modes, rows, direction):
        """The world force ``(nc, 3)`` on each contact from the constraint
        forces ``λ`` of the held set (rows ``rows``): a point's force, the
        normal force along ``n``, and for a sliding contact also the friction
        ``μ λ_n direction(i)``."""
        F = np.zeros((self.nc, 3))
        for i in range(self.nc):
            if modes[i] == OPEN:
                continue
            if modes[i] == STICK:
                F[i] = lam[rows[i]]
                continue
            ln = lam[rows[i].start]
            F[i] = ln * self.cl.normal[i]
            if modes[i] == SLIDE:
                F[i] += self.mu[i] * ln * direction(i)
        return F

    def _stop_forces(self, lam, modes, rows):
        """The stops' joint forces ``λ`` (ns,) (``λ ≥ 0`` pushes off the
        stop; zero while open) from the constraint forces of the held set."""
        return np.array([lam[rows[i].start] if modes[i] != OPEN else 0.0
                         for i in range(self.nc, self.nr)])

    def _tangential(self, i, F):
        """The tangential part of the force ``F[i]``."""
        n = self.cl.normal[i]
        return F[i] - (F[i] @ n) * n

    def _margin(self, i, F):
        """``μ λ_n − ‖λ_t‖`` of contact ``i``."""
        return self.mu[i] * (F[i] @ self.cl.normal[i]) - float(
            np.linalg.norm(self._tangential(i, F)))

    def _slide_along(self, i, s0):
        """Contact ``i`` slips along the unit ``s0``; its friction opposes it."""
        self.s0[i] = s0
        self.d[i] = -s0

    def _plant(self, modes, cs, rows):
        """The plant of a segment: the user's, plus the sliding friction."""
        if not any(mo == SLIDE for mo in modes):
            return self.plant

        def plant(t, state, u):
            inp = self.plant(t, state, u) if self.plant is not None else u
            tau, W, app, _ = self._inputs_from(t, inp)
            _, _, applied, _ = self._solve(t, state, modes, cs, rows, (tau, W, app, inp))
            return Inputs(tau=None if inp is None else inp.tau,
                          base_wrench=None if inp is None else inp.base_wrench,
                          applied=applied[0], extra_rate=None if inp is None else inp.extra_rate)
        return plant

    def _inputs_from(self, t, inp):
        """The dynamics arguments of ``inp`` (checked against the model; its
        ``extra_rate`` is the segment's run's to check)."""
        m = self.model
        bad = inputs_mismatch(inp, m.n_joints, m.n_bodies, None, m.floating_base, self._source())
        if bad is not None:
            self._input_failed(t, *bad)
        tau = np.zeros((1, m.n_joints)) if inp is None or inp.tau is None else inp.tau[None]
        W = None
        if m.floating_base:
            W = np.zeros((1, 6)) if inp is None or inp.base_wrench is None else \
                inp.base_wrench[None]
        app = None if inp is None or inp.applied is None else inp.applied[None]
        return tau, W, app, inp
