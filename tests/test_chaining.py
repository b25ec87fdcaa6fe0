"""The parts in combination: every producer of motion jets feeds every
consumer, with ``reference="world"`` and ``"base"`` (SPEC §1, the audit of
shared keywords).

One motion per example (a random tree on a floating base, polynomial world
twist and joint jets, ``tests.robots.Trajectory``) is handed to each
*producer*, the way a user would get jets from it:

==========================  ==================================================
``from_pose_jet``           pose jets (the test's own recursion from the world
                            twist) → ``(C₀, V₀^(k))``
``SampledTrajectory``       poses and joints sampled every 20 ms → jets at t
``twist_to_spatial``        the body twist jet → ``V₀^(k)``
``forward_dynamics``        the state and the motion's own forces → jets
``hybrid_dynamics``         half the joints motion-driven, the rest and the
                            base force-driven → jets
``simulate``                the first sample: state and accelerations
``interop.pinocchio``       Pinocchio's ``(q, v, a)`` back to jets (world only)
==========================  ==================================================

and what each produces is fed to every *consumer* with the same
``reference``: inverse, forward and hybrid dynamics (also with a workspace
and in batches), the closed form (jets, ``M``, ``C``, ``g``, its inverse
dynamics), forward kinematics, frames and their Jacobians, the symbolic
(CasADi) inverse and forward dynamics, the pose and twist conversions of
``liedyn.trajectory``, a short simulation, and the world-only consumers
(centroidal quantities, the Pinocchio bridge).

The expected value of every cell is independent of the producer and of the
``"base"`` code path: the consumer's result on the motion's exact world
jets, with ``reference="world"``, moved by the known constant map
``X = Ad_{T(−p₀)}`` (``p₀`` the base origin now): twists ``X V``, wrenches
``X⁻ᵀ W``, generalised velocities ``E ν`` with ``E = diag(X, I)``,
generalised forces ``E⁻ᵀ τ̄``, matrices ``E⁻ᵀ M E⁻¹``, Jacobians
``X J E⁻¹``, on every row of a jet alike. Poses, joint jets and
frame-invariant quantities are not moved. The producers' own contract, that
their ``"base"`` jets are their ``"world"`` jets moved by ``X``, is checked
first.
"""

from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import liedyn
from liedyn import se3
from liedyn import trajectory as tr
from tests.helpers import integrate_pose, rel_err
from tests.robots import Trajectory, tree_with_frames

REFERENCES = ("world", "base")
R_MAX = 2          # the highest order asked of a consumer
K = R_MAX + 1      # producers give V₀^(0..K) and q^(0..K+1), all order R_MAX reads
DT = 1e-3          # the simulator's step

# Exact producers form each row from O(10²) products of numbers up to ~10²
# (a fourth derivative of a polynomial motion): 1e-9 relative is ~1e5 eps.
# The sampled trajectory interpolates with degree-7 splines at h = 20 ms:
# V^(k) errs by O(h^(7−k)) (SPEC §12), ≤ 1e-7 relative on these motions for
# k ≤ 2 (measured 2e-9 .. 4e-8), its row 3 by more: consumers read up to
# row 3 (r = 2), so its tolerance is 1e-5.
TOL = {"from_pose_jet": 1e-9, "SampledTrajectory": 1e-5, "twist_to_spatial": 1e-9,
       "forward_dynamics": 1e-9, "hybrid_dynamics": 1e-9, "simulate": 1e-9,
       "interop.pinocchio": 1e-9}


# ---------------------------------------------------------------- the maps --

def point_map(o):
    """``X = Ad_{T(−o)}``: a twist about the world origin → about ``o``."""
    T = np.eye(4)
    T[:3, 3] = -o
    return se3.Ad(T)


def moved(kind, x, o, n):
    """The world value ``x`` of ``kind`` taken about the point ``o`` (module
    docstring), on every row alike."""
    X, Xi = point_map(o), point_map(-o)           # Ad_{T(−o)}⁻¹ = Ad_{T(o)}
    Ei = np.eye(6 + n)                             # E⁻¹ = diag(X⁻¹, I)
    Ei[:6, :6] = Xi
    if kind == "twist":
        return x @ X.T
    if kind == "wrench":
        return x @ Xi
    if kind == "gen_force":
        return x @ Ei
    if kind == "matrix":
        return Ei.T @ x @ Ei
    if kind == "jacobian":
        return X @ x @ Ei
    assert kind == "same", kind
    return x


# ---------------------------------------------------------------- the motion --

class Motion:
    """The exact world jets of one motion at ``t = 0`` and the forces that
    drive it: ``V (K+1, 6)``, ``q (K+2, n)``; ``tau``, ``W`` of order
    ``R_MAX`` from :func:`liedyn.inverse_dynamics`."""

    def __init__(self, model, rng):
        self.model = model
        self.curve = Trajectory(model, rng, degree=6, speed=0.5)
        self.C0, self.V, self.q = self.curve.state(0.0, K + 1)
        self.V, self.q = self.V[:K + 1], self.q[:K + 2]
        inv = liedyn.inverse_dynamics(model, self.C0, self.V, self.q, R_MAX)
        self.tau, self.W = inv.tau, inv.base_wrench
        self.o = self.C0[:3, 3]

    def forces(self, reference, r=R_MAX):
        W = self.W[:r + 1]
        return self.tau[:r + 1], (W if reference == "world" else moved("wrench", W, self.o, 0))

    def pose_jets(self):
        """``p^(0..K+1)``, ``R^(0..K+1)`` from ``Ċ = [V] C``:
        ``R^(k+1) = Σ_a C(k,a) ω̂^(a) R^(k−a)``,
        ``p^(k+1) = Σ_a C(k,a) ω^(a) × p^(k−a) + v^(k)``."""
        R = np.zeros((K + 2, 3, 3))
        p = np.zeros((K + 2, 3))
        R[0], p[0] = self.C0[:3, :3], self.C0[:3, 3]
        for k in range(K + 1):
            p[k + 1] = self.V[k, 3:]
            for a in range(k + 1):
                R[k + 1] += comb(k, a) * se3.hat(self.V[a, :3]) @ R[k - a]
                p[k + 1] += comb(k, a) * np.cross(self.V[a, :3], p[k - a])
        return p, R


# -------------------------------------------------------------- producers --
# Each returns (C0, V (rows, 6), q (rows', n)) about ``reference``.

def _from_pose_jet(m, reference):
    p, R = m.pose_jets()
    C0, V = tr.from_pose_jet(p, R, reference=reference)
    return C0, V, m.q


def _sampled(m, reference):
    t = np.arange(-20, 21) * 0.02
    poses = np.array([m.curve.base_pose(s) for s in t])
    q = np.array([m.curve.state(s, 1)[2][0] for s in t])
    jets = tr.SampledTrajectory(t, poses, q=q, degree=7).jets(0.0, K, reference=reference)
    return jets


def _twist_to_spatial(m, reference):
    body = tr.twist_from_spatial(m.C0, m.V, "body")
    return m.C0, tr.twist_to_spatial(m.C0, body, "body", reference=reference), m.q


def _forward(m, reference):
    V0 = m.V[:1] if reference == "world" else moved("twist", m.V[:1], m.o, 0)
    tau, W = m.forces(reference)
    f = liedyn.forward_dynamics(m.model, m.C0, V0, m.q[:2], R_MAX, tau=tau, base_wrench=W,
                                reference=reference)
    return m.C0, f.base_twist, f.q


def _motion_split(model):
    motion = np.zeros(model.n_joints, bool)
    motion[::2] = True
    return motion


def _hybrid(m, reference):
    V0 = m.V if reference == "world" else moved("twist", m.V, m.o, 0)
    tau, W = m.forces(reference)
    motion = _motion_split(m.model)
    q = np.where(motion, m.q, 0.0)
    q[:2] = m.q[:2]
    h = liedyn.hybrid_dynamics(m.model, m.C0, V0, q, R_MAX, motion_driven=motion,
                               tau=np.where(motion, 0.0, tau), base_wrench=W,
                               reference=reference)
    return m.C0, h.base_twist, h.q


def _simulate(m, reference):
    V0 = m.V[0] if reference == "world" else moved("twist", m.V[0], m.o, 0)
    tau, W = m.forces(reference, 0)
    state = liedyn.State(base_pose=m.C0, base_twist=V0, q=m.q[0], qd=m.q[1])
    traj = liedyn.simulate(m.model, state, 2 * DT, dt=DT, reference=reference,
                           controller=lambda t, s: liedyn.Inputs(tau=tau[0], base_wrench=W[0]))
    V = np.vstack([traj.base_twist[0], traj.base_acceleration[:1]])
    q = np.vstack([traj.q[0], traj.joint_acceleration[:1]])
    return traj.base_pose[0], V, q


def _pinocchio(m, reference):
    from liedyn.interop.pinocchio import to_pinocchio
    bridge = to_pinocchio(m.model)
    qp, v = bridge.motion_to_pin(m.C0, m.V, m.q)
    return bridge.motion_from_pin(qp, v)


PRODUCERS = {"from_pose_jet": (_from_pose_jet, REFERENCES),
             "SampledTrajectory": (_sampled, REFERENCES),
             "twist_to_spatial": (_twist_to_spatial, REFERENCES),
             "forward_dynamics": (_forward, REFERENCES),
             "hybrid_dynamics": (_hybrid, REFERENCES),
             "simulate": (_simulate, REFERENCES),
             "interop.pinocchio": (_pinocchio, ("world",))}


# -------------------------------------------------------------- consumers --
# Each takes (motion m, C0, V, q, r, reference) and returns
# {name: (kind, value)} for ``moved``, or (kind, value, point) for a value
# about another point than the call's base origin.

def _inverse(m, C0, V, q, r, ref, workspace=False):
    ws = liedyn.Workspace(m.model, r) if workspace else None
    res = liedyn.inverse_dynamics(m.model, C0, V, q, r, reference=ref, workspace=ws)
    return {"base_wrench": ("wrench", res.base_wrench), "tau": ("same", res.tau)}


def _forward_c(m, C0, V, q, r, ref):
    tau, W = m.forces(ref, r)
    res = liedyn.forward_dynamics(m.model, C0, V[:1], q[:2], r, tau=tau, base_wrench=W,
                                  reference=ref)
    return {"base_twist": ("twist", res.base_twist), "q": ("same", res.q)}


def _hybrid_c(m, C0, V, q, r, ref):
    tau, W = m.forces(ref, r)
    motion = _motion_split(m.model)
    res = liedyn.hybrid_dynamics(m.model, C0, V, q[:r + 3], r, motion_driven=motion,
                                 tau=np.where(motion, 0.0, tau), base_wrench=W, reference=ref)
    return {"base_twist": ("twist", res.base_twist), "q": ("same", res.q),
            "tau": ("same", np.where(motion, res.tau, 0.0))}


def _closed_form(m, C0, V, q, r, ref):
    jets = liedyn.closed_form_jets(m.model, C0, V, q, r, reference=ref)
    return {"mass": ("matrix", jets.mass), "coriolis": ("matrix", jets.coriolis),
            "gravity": ("gen_force", jets.gravity),
            "inverse": ("gen_force", liedyn.closed_form_inverse_dynamics(jets))}


def _matrices(m, C0, V, q, r, ref):
    return {"M": ("matrix", liedyn.mass_matrix(m.model, C0, q, reference=ref)),
            "C": ("matrix", liedyn.coriolis_matrix(m.model, C0, V, q, reference=ref)),
            "g": ("gen_force", liedyn.gravity_vector(m.model, C0, q, reference=ref))}


def _kinematics(m, C0, V, q, r, ref):
    fk = liedyn.forward_kinematics(m.model, C0, V, q, r, reference=ref)
    return {"twist": ("twist", fk.twist), "screw": ("twist", fk.screw),
            "pose": ("same", fk.body_pose)}


def _frames(m, C0, V, q, r, ref):
    out = {}
    for name in ("frame0", "frame1"):
        fk = liedyn.frame_kinematics(m.model, C0, V, q, r, name, reference=ref)
        out[name] = ("twist", fk.twist)
        out[name + ".position"] = ("same", fk.position)
    return out


def _jacobians(m, C0, V, q, r, ref):
    return {name: ("jacobian", liedyn.frame_jacobian(m.model, C0, V, q, r, name, reference=ref))
            for name in ("frame0", "frame1")}


def _batches(m, C0, V, q, r, ref):
    tau, W = m.forces(ref, r)
    inv = liedyn.inverse_dynamics_batch(m.model, C0[None], V[None], q[None], r, reference=ref,
                                        threads=1)
    fwd = liedyn.forward_dynamics_batch(m.model, C0[None], V[None, :1], q[None, :2], r,
                                        tau=tau[None], base_wrench=W[None], reference=ref,
                                        threads=1)
    return {"inverse.base_wrench": ("wrench", inv.base_wrench[0]),
            "inverse.tau": ("same", inv.tau[0]),
            "forward.base_twist": ("twist", fwd.base_twist[0]), "forward.q": ("same", fwd.q[0])}


_SYMBOLIC = {}


def _symbolic(m, C0, V, q, r, ref):
    from liedyn import symbolic
    key = (id(m.model), r, ref)
    if key not in _SYMBOLIC:
        _SYMBOLIC.clear()
        # the model is kept with its functions: while it is cached its id cannot
        # be reused by another model (a freed model's id was, with other joints)
        _SYMBOLIC[key] = (m.model, symbolic.inverse_dynamics_function(m.model, r, reference=ref),
                          symbolic.forward_dynamics_function(m.model, r, reference=ref))
    _, fi, ff = _SYMBOLIC[key]
    inv = fi(base_pose=C0, base_twist=V[:r + 2], q=q[:r + 3])
    tau, W = m.forces(ref, r)
    fwd = ff(base_pose=C0, base_twist=V[:1], q=q[:2], tau=tau, base_wrench=W)
    return {"inverse.base_wrench": ("wrench", np.array(inv["base_wrench"])),
            "inverse.tau": ("same", np.array(inv["tau"])),
            "forward.base_twist": ("twist", np.array(fwd["base_twist"])),
            "forward.q": ("same", np.array(fwd["q"]))}


def _pose_jets(m, C0, V, q, r, ref):
    p, R = tr.to_pose_jet(C0, V[:r + 2], reference=ref)
    return {"position": ("same", p), "rotation": ("same", R)}


def _conventions(m, C0, V, q, r, ref):
    return {c: ("same", tr.twist_from_spatial(C0, V[:r + 2], c, reference=ref))
            for c in ("body", "pinocchio", "mujoco", "drake")}


def _simulation(m, C0, V, q, r, ref):
    """Three steps from the state with the motion's order-0 forces held: the
    last sample, whose twist is about the base origin *then*."""
    def controller(t, s):          # the same world wrench, about the sample's own point
        W = m.W[0] if ref == "world" else moved("wrench", m.W[0], s.base_pose[:3, 3], 0)
        return liedyn.Inputs(tau=m.tau[0], base_wrench=W)
    state = liedyn.State(base_pose=C0, base_twist=V[0], q=q[0], qd=q[1])
    traj = liedyn.simulate(m.model, state, 3 * DT, dt=DT, reference=ref, controller=controller)
    C = traj.base_pose[-1]
    return {"pose": ("same", C), "q": ("same", traj.q[-1]),
            "twist": ("twist", traj.base_twist[-1], C[:3, 3])}


def _centroidal(m, C0, V, q, r, ref):
    c = liedyn.centroidal(m.model, C0, V, q, r)
    return {"com": ("same", c.com), "momentum": ("same", c.momentum),
            "energy": ("same", c.kinetic_energy)}


def _pinocchio_c(m, C0, V, q, r, ref):
    from liedyn.interop.pinocchio import to_pinocchio
    qp, v = to_pinocchio(m.model).motion_to_pin(C0, V[:r + 2], q[:r + 3])
    return {"q_pin": ("same", qp), "v_pin": ("same", v)}


CONSUMERS = {
    "inverse_dynamics": (_inverse, REFERENCES),
    "inverse_dynamics(workspace)": (lambda *a: _inverse(*a, workspace=True), REFERENCES),
    "forward_dynamics": (_forward_c, REFERENCES),
    "hybrid_dynamics": (_hybrid_c, REFERENCES),
    "closed_form_jets": (_closed_form, REFERENCES),
    "mass/coriolis/gravity": (_matrices, REFERENCES),
    "forward_kinematics": (_kinematics, REFERENCES),
    "frame_kinematics": (_frames, REFERENCES),
    "frame_jacobian": (_jacobians, REFERENCES),
    "batches": (_batches, REFERENCES),
    "symbolic": (_symbolic, REFERENCES),
    "to_pose_jet": (_pose_jets, REFERENCES),
    "twist_from_spatial": (_conventions, REFERENCES),
    "simulate": (_simulation, REFERENCES),
    "centroidal": (_centroidal, ("world",)),
    "interop.pinocchio": (_pinocchio_c, ("world",)),
}

COMBINATIONS = [(p, c, ref) for p, (_, prefs) in PRODUCERS.items()
                for c, (_, crefs) in CONSUMERS.items() for ref in REFERENCES
                if ref in prefs and ref in crefs]


def _expected(m, kind, value, point=None, *, ref):
    """The world ``value`` moved to the base origin now (or ``point``)."""
    if ref == "world":
        return value
    return moved(kind, value, m.o if point is None else point, m.model.n_joints)


def _order(V, q):
    return min(len(V) - 2, len(q) - 3, R_MAX)


def check_producer(name, m):
    """The producer's contract, then every consumer on what it produced;
    returns the failures as readable lines."""
    make, refs = PRODUCERS[name]
    tol = TOL[name]
    produced = {ref: make(m, ref) for ref in refs}
    failures = []
    for ref, (C0, V, q) in produced.items():
        r = _order(V, q)
        Vw = m.V[:len(V)] if ref == "world" else moved("twist", m.V[:len(V)], m.o, 0)
        for what, got, want in (("C0", C0, m.C0), ("V", V, Vw), ("q", q, m.q[:len(q)])):
            e = rel_err(got, want)
            if not e <= tol:
                failures.append(f"{name}[{ref}] {what}: rel. error {e:.2e}")
        for cname, (consume, crefs) in CONSUMERS.items():
            if ref not in crefs:
                continue
            got = consume(m, C0, V, q, r, ref)
            want = consume(m, m.C0, m.V, m.q, r, "world")
            for key, (_, value, *_) in got.items():
                e = rel_err(value, _expected(m, *want[key], ref=ref))
                if not e <= 10 * tol:
                    failures.append(f"{name} → {cname}[{ref}] {key}: rel. error {e:.2e}")
    return failures


# ------------------------------------------------------------------ tests --

@pytest.mark.parametrize("producer", list(PRODUCERS))
@settings(max_examples=4)
@given(seed=st.integers(0, 2**32 - 1), n_bodies=st.integers(2, 6))
def test_every_consumer_of_every_producer(producer, seed, n_bodies):
    rng = np.random.default_rng(seed)
    model = tree_with_frames(rng, n_bodies, floating_base=True, n_frames=2)
    failures = check_producer(producer, Motion(model, rng))
    assert not failures, "\n".join(failures)


def test_the_newcomers_pipeline():
    """A sampled yawing helix fed to inverse dynamics gives the same torques
    about the world and about the base origin (SPEC §1)."""
    b = liedyn.ModelBuilder(floating_base=True, gravity=(0, 0, -9.81))
    b.add_body("base", None, None, np.eye(4),
               se3.spatial_inertia(2.5, (0, 0, 0), np.diag([0.03, 0.03, 0.05])))
    T = np.eye(4)
    T[2, 3] = -0.16
    b.add_body("link1", "base", liedyn.Revolute(axis=(0, 1, 0), point=(0, 0, 0.06),
                                                armature=1e-3),
               T, se3.spatial_inertia(0.25, (0, 0, 0), np.diag([2e-3, 2e-3, 1e-3])))
    model = b.build()
    t = np.arange(0.0, 2.0001, 0.02)
    poses = np.array([np.block([[se3.exp_so3(np.array([0, 0, s])), np.array([[np.cos(s)],
                                [np.sin(s)], [0.3 * s]])], [np.zeros((1, 3)), np.ones((1, 1))]])
                      for s in t])
    S = tr.SampledTrajectory(t, poses, q=np.sin(t)[:, None], degree=7)
    jw, jb = S.jets(1.0, 4), S.jets(1.0, 4, reference="base")
    for r in range(3):
        w = liedyn.inverse_dynamics(model, jw.base_pose, jw.base_twist, jw.q, r)
        b_ = liedyn.inverse_dynamics(model, jb.base_pose, jb.base_twist, jb.q, r,
                                     reference="base")
        assert rel_err(b_.tau, w.tau) <= 1e-12, r
        assert rel_err(b_.base_wrench, moved("wrench", w.base_wrench, jw.base_pose[:3, 3], 0)) \
            <= 1e-12, r


def test_simulations_about_either_point_agree_at_every_sample():
    """``simulate(reference="base")`` records each sample's twist and wrench
    about that sample's base origin: moved back, the world run's."""
    rng = np.random.default_rng(5)
    model = tree_with_frames(rng, 4, floating_base=True, n_frames=1)
    m = Motion(model, rng)
    runs = {}
    for ref in REFERENCES:
        V0 = m.V[0] if ref == "world" else moved("twist", m.V[0], m.o, 0)
        state = liedyn.State(base_pose=m.C0, base_twist=V0, q=m.q[0], qd=m.q[1])
        runs[ref] = liedyn.simulate(model, state, 0.05, dt=DT, reference=ref)
    w, b = runs["world"], runs["base"]
    assert rel_err(b.base_pose, w.base_pose) <= 1e-11 and rel_err(b.q, w.q) <= 1e-11
    for i in range(len(w.time)):
        o = w.base_pose[i, :3, 3]
        assert rel_err(b.base_twist[i], moved("twist", w.base_twist[i], o, 0)) <= 1e-11, i
        assert rel_err(b.base_acceleration[i], moved("twist", w.base_acceleration[i], o, 0)) \
            <= 1e-10, i
