"""The recursions of SPEC §4–§6 traced into ``casadi.Function`` objects (SPEC §15).

A function is built once for a model and an order; its inputs and outputs
are named and have the shapes of the numeric API (jets with a row per
derivative, SPEC §1). Every twist and wrench is spatial, world axes, about
the world origin (``reference="world"``, the default) or about the base
origin (``reference="base"``), as in :func:`liedyn.inverse_dynamics`.

=================  ======================  ===========================================
input              shape                   meaning
=================  ======================  ===========================================
``base_pose``      (4, 4)                  ``C₀`` (``pose="matrix"``)
``nominal_pose``   (4, 4)                  ``C̄₀`` (``pose="minimal"``: ``C₀ = C̄₀ exp([ξ])``)
``xi``             (6, 1)                  ``ξ = (φ, ρ)``, angular first (``pose="minimal"``)
``base_twist``     (rows, 6)               ``V₀^(0..)`` (floating base only)
``q``              (rows, n)               ``q^(0..)``
``tau``            (r+1, n)                ``τ^(0..r)``
``base_wrench``    (r+1, 6)                ``W₀^(0..r)`` (wrench-driven floating base)
``applied``        (r+1, 6N)               ``W_app``: row k, columns ``6j..6j+5`` body j
                                           (``applied.reshape(r + 1, -1)`` of the
                                           numeric ``(r+1, N, 6)``)
=================  ======================  ===========================================

**Structure.** ``structure="flat"`` (the default) inlines every per-body
step into one SX expression graph: CasADi folds the model's zeros and ones
and merges repeats, the fastest evaluation and generated C, but the C grows
with the whole graph (Go2's order-1 Jacobian: megabytes, minutes of
``gcc``). ``structure="shared"`` builds an MX graph in which each step
(:mod:`liedyn.symbolic._steps`, one per kind of body and order) stays a
function call: the generated C has each step once and a call per body, so
its size grows with the number of distinct steps, not with ``N`` (SPEC
§15.4).

The functions are CasADi functions (:class:`CheckedFunction`): evaluate
them with numbers, call them with ``SX``/``MX`` symbols inside an
optimisation problem, differentiate them
(:func:`liedyn.symbolic.jacobian_function`) or generate C from them
(:func:`liedyn.symbolic.generate_c`). A call with numbers checks that every
input is given with the shape above and raises a ``ValueError`` naming it
(CasADi alone would repeat the columns of a too narrow one); beyond that,
unlike the numeric kernels, they do not check their inputs' values: a
singular articulated pivot gives ``inf``/``NaN``, a pose that is not a rigid
transform is used as given.
"""

from functools import lru_cache

import numpy as np

import casadi as ca

from .._checks import check_order
from ..multibody.model import JOINT_REVOLUTE, check_model
from ..algorithm.hybrid import joint_mask
from . import _steps as st
from ._checked import CheckedFunction, function_name
from ._steps import SX, rows, stack

POSES = ("matrix", "minimal")
REFERENCES = ("world", "base")
STRUCTURES = ("flat", "shared")


# ------------------------------------------------------------------ inputs --

def _options(model, order, pose, reference, applied, structure="flat"):
    check_model(model)
    r = check_order(order)
    if structure not in STRUCTURES:
        raise ValueError(f"structure: expected one of {STRUCTURES}, got {structure!r}")
    if pose not in POSES:
        raise ValueError(f"pose: expected one of {POSES}, got {pose!r}")
    if reference not in REFERENCES:
        raise ValueError(f"reference: expected one of {REFERENCES}, got {reference!r}")
    if not isinstance(applied, (bool, np.bool_)):
        raise TypeError(f"applied: expected a bool, got {type(applied).__name__}")
    return r


def se3_exp(xi):
    """``exp([ξ])`` for a symbolic ``ξ = (φ, ρ)`` (6×1 SX), as a 4×4 SX.

    Closed form ``R = I + A φ̂ + B φ̂²``, ``p = (I + B φ̂ + C φ̂²) ρ`` with
    ``A = sin θ/θ``, ``B = (1 − cos θ)/θ²``, ``C = (θ − sin θ)/θ³``; for
    ``θ² < 10⁻²`` the three are evaluated by their Taylor series to ``θ⁸``
    (truncation below ``10⁻²⁰``), so the function and its derivatives of
    every order are finite at ``ξ = 0``.
    """
    xi = SX(xi)
    phi, rho = xi[:3], xi[3:]
    t2 = ca.dot(phi, phi)
    small = t2 < 1e-2
    # the closed forms see θ² = 1 in the series region, so that neither they
    # nor their derivatives of any order produce inf or NaN there
    u2 = ca.if_else(small, 1.0, t2)
    u = ca.sqrt(u2)
    A_s = 1 - t2 / 6 * (1 - t2 / 20 * (1 - t2 / 42 * (1 - t2 / 72)))
    B_s = 0.5 * (1 - t2 / 12 * (1 - t2 / 30 * (1 - t2 / 56 * (1 - t2 / 90))))
    C_s = (1 - t2 / 20 * (1 - t2 / 42 * (1 - t2 / 72 * (1 - t2 / 110)))) / 6
    s, co = ca.sin(u), ca.cos(u)
    A = ca.if_else(small, A_s, s / u)
    B = ca.if_else(small, B_s, (1 - co) / u2)
    C = ca.if_else(small, C_s, (u - s) / (u2 * u))
    P = st._hat(phi)
    P2 = ca.mtimes(P, P)
    R = SX.eye(3) + A * P + B * P2
    p = rho + ca.mtimes(B * P + C * P2, rho)
    return ca.vertcat(ca.horzcat(R, p), ca.horzcat(SX.zeros(1, 3), SX(1)))


@lru_cache(maxsize=None)
def _se3_exp_step():
    """:func:`se3_exp` as a function, called (not inlined) in a shared graph."""
    xi = SX.sym("xi", 6, 1)
    return ca.Function("se3_exp", [xi], [se3_exp(xi)])


class _Inputs:
    """The named symbolic inputs of one function, in order: SX symbols
    (``structure="flat"``) or MX symbols (``"shared"``)."""

    def __init__(self, structure="flat"):
        self.X = ca.MX if structure == "shared" else SX
        self.names, self.syms = [], []

    def add(self, name, n, m):
        x = self.X.sym(name, n, m)
        self.names.append(name)
        self.syms.append(x)
        return x


def _pose_inputs(inp, pose):
    if pose == "matrix":
        return inp.add("base_pose", 4, 4)
    C = inp.add("nominal_pose", 4, 4)
    xi = inp.add("xi", 6, 1)
    return ca.mtimes(C, se3_exp(xi) if inp.X is SX else _se3_exp_step()(xi))


def _shift_twists(V, d):
    """``(ω, v + ω × d)`` for each row of a twist jet (SPEC §1)."""
    w = V[:, :3]
    v = V[:, 3:]
    x = ca.horzcat(w[:, 1] * d[2] - w[:, 2] * d[1], w[:, 2] * d[0] - w[:, 0] * d[2],
                   w[:, 0] * d[1] - w[:, 1] * d[0])
    return ca.horzcat(w, v + x)


def _unshift_twists(V, d):
    return _shift_twists(V, -d)


def _shift_wrenches(W, d):
    """``(m − d × f, f)`` for each row of a wrench jet (SPEC §1)."""
    m, f = W[:, :3], W[:, 3:]
    x = ca.horzcat(d[1] * f[:, 2] - d[2] * f[:, 1], d[2] * f[:, 0] - d[0] * f[:, 2],
                   d[0] * f[:, 1] - d[1] * f[:, 0])
    return ca.horzcat(m - x, f)


def _unshift_wrenches(W, d):
    return _shift_wrenches(W, -d)


class _Tree:
    """The model's constants per body, as CasADi numbers."""

    def __init__(self, model):
        self.N, self.n = model.n_bodies, model.n_joints
        self.parent = [int(p) for p in model.body_parent]
        self.revolute = [None] + [int(t) == JOINT_REVOLUTE for t in model.joint_type]
        D = ca.DM
        self.Y = [None] + [D(y) for y in model.joint_screw]
        self.Hr = [D(H[:3, :3]) for H in model.body_home]
        self.Hp = [D(H[:3, 3]) for H in model.body_home]
        self.m = [float(m) for m in model.body_mass]
        self.com = [D(c) for c in model.body_com]
        self.J = [D(J) for J in model.body_rot_inertia]
        self.arm = [None] + [float(a) for a in model.joint_armature]
        self.damp = [None] + [float(b) for b in model.joint_damping]
        self.g = D(model.gravity)


def _base(model, inp, pose, reference):
    """``C₀``, ``d`` (the reference point, SPEC §1) and ``F_0 = (R₀, 0)``."""
    C0 = _pose_inputs(inp, pose)
    o = C0[:3, 3]
    d = o if reference == "world" else inp.X.zeros(3, 1)
    return C0, d, C0[:3, :3]


def _applied(inp, tree, r, d, applied):
    """Per body, the applied wrench jet about ``o`` (``(r+1)×6``), or None."""
    if not applied:
        return [None] * tree.N
    Wa = inp.add("applied", r + 1, 6 * tree.N)
    return [_shift_wrenches(Wa[:, 6 * j:6 * j + 6], d) for j in range(tree.N)]


def _finish(name, inp, outputs, cse):
    names = [n for n, _ in outputs]
    exprs = [e for _, e in outputs]
    if cse and inp.X is SX:                   # (an MX graph shares its nodes already)
        exprs = ca.cse(exprs)
    return CheckedFunction(ca.Function(name, inp.syms, exprs, inp.names, names,
                                       {"allow_duplicate_io_names": True}))


# ------------------------------------------------------------------ inverse --

def inverse_dynamics_function(model, order, *, pose="matrix", applied=False, reference="world",
                              cse=True, name=None, structure="flat"):
    """H-GRNE-FBS (SPEC §4) of order ``order`` as a ``casadi.Function``.

    Parameters
    ----------
    model : Model
    order : int ≥ 0
        ``r``: the outputs are the jets ``W₀^(0..r)``, ``τ^(0..r)``.
    pose : {"matrix", "minimal"}, keyword
        The base pose as a 4×4 input ``base_pose``, or as ``nominal_pose``
        and ``xi`` with ``C₀ = C̄₀ exp([ξ])`` (six free coordinates about a
        nominal pose, for optimisation and derivatives on SE(3)).
    applied : bool, keyword
        Add the input ``applied`` ((r+1, 6N), see the module docstring).
    reference : {"world", "base"}, keyword
        As :func:`liedyn.inverse_dynamics`.
    cse : bool, keyword
        Merge repeated subexpressions (``casadi.cse``) before wrapping
        (``structure="flat"``).
    name : str, optional
        The function's name (default ``"inverse_dynamics_<r>"``).
    structure : {"flat", "shared"}, keyword
        One inlined SX graph, or an MX graph whose per-body steps stay
        function calls (see the module docstring): the same values, C code
        that grows with the number of distinct steps instead of ``N``.

    Returns
    -------
    CheckedFunction
        A ``casadi.Function`` (numeric calls check their inputs' shapes).
        Inputs ``base_pose`` (or ``nominal_pose``, ``xi``), ``base_twist``
        ((r+2, 6), floating base only), ``q`` ((r+3, n)), [``applied``];
        outputs ``base_wrench`` ((r+1, 6): for a fixed base the support
        reaction) and ``tau`` ((r+1, n)), equal to
        :func:`liedyn.inverse_dynamics`'s.
    """
    r = _options(model, order, pose, reference, applied, structure)
    name = function_name(name, f"inverse_dynamics_{r}")
    tree = _Tree(model)
    inp = _Inputs(structure)
    X = inp.X
    C0, d, R0 = _base(model, inp, pose, reference)
    V0 = (_shift_twists(inp.add("base_twist", r + 2, 6), d) if model.floating_base
          else X.zeros(r + 2, 6))
    q = inp.add("q", r + 3, tree.n)
    Wapp = _applied(inp, tree, r, d, applied)
    kin, own, proj = st.kinematics_step(r + 1, True), st.own_wrench_step(r), st.projection_step(r)
    kinp = st.kinematics_step(r + 1, False)
    F = [(R0, X.zeros(3, 1))]
    V, S, W = [V0], [None], []
    W.append(own(R0, X.zeros(3, 1), V0, tree.m[0], tree.com[0], tree.J[0], tree.g))
    for j in range(1, tree.N):                                               # SPEC §3, §4
        p = tree.parent[j]
        step = kin if tree.revolute[j] else kinp
        R, pj, Rc, pc, Sj, Vj = step(F[p][0], F[p][1], V[p], q[:, j - 1], tree.Y[j], tree.Hr[j],
                                     tree.Hp[j])
        F.append((R, pj))
        S.append(Sj)
        V.append(Vj)
        W.append(own(Rc, pc, Vj, tree.m[j], tree.com[j], tree.J[j], tree.g))
    for j in range(tree.N):
        if Wapp[j] is not None:
            W[j] = W[j] - Wapp[j]
    tau = [None] * tree.n
    for j in range(tree.N - 1, 0, -1):                                       # leaves first
        W[tree.parent[j]] = W[tree.parent[j]] + W[j]
        tau[j - 1] = proj(S[j][:r + 1, :], W[j], q[:, j - 1], tree.arm[j], tree.damp[j])
    outputs = [("base_wrench", _unshift_wrenches(W[0], d)),
               ("tau", ca.horzcat(*tau) if tree.n else X(r + 1, 0))]
    return _finish(name, inp, outputs, cse)


# ----------------------------------------------------- forward and hybrid --

def _articulated(tree, r, R0, V0row, q, tau, Wb, Wapp, motion, base_kind, V0jet, X):
    """SPEC §5–§6 on symbols. ``motion[j]``: joint of body j motion-driven;
    ``base_kind``: ``"wrench"`` (solve ``V₀^(k+1)``), ``"motion"`` (given
    ``V0jet``) or ``"fixed"``; ``X``: ``SX`` or ``MX``. Returns the jets
    ``V₀``, ``q``, ``W₀``, ``τ``."""
    N, parent = tree.N, tree.parent
    kin = {True: st.kinematics_step(0, True), False: st.kinematics_step(0, False)}
    config, abi = st.configuration_step(), st.articulated_step()
    F = [(R0, X.zeros(3, 1))]
    Cpose = [(R0, X.zeros(3, 1))]
    S, V = [[X.zeros(6, 1)]], [[V0row]]
    for j in range(1, N):                                                    # SPEC §3, order 0
        p = parent[j]
        R, pj, Rc, pc, Sj, Vj = kin[tree.revolute[j]](F[p][0], F[p][1], V[p][0].T, q[j - 1][:2],
                                                      tree.Y[j], tree.Hr[j], tree.Hp[j])
        F.append((R, pj))
        Cpose.append((Rc, pc))
        S.append([Sj.T])
        V.append([Vj.T])
    c, I, MA = [], [], []
    for j in range(N):
        c0, c1, I0, M = config(Cpose[j][0], Cpose[j][1], V[j][0], tree.m[j], tree.com[j],
                               tree.J[j])
        c.append([c0, c1])
        I.append([I0])
        MA.append(M)
    U, D = [None] * N, [None] * N
    for j in range(N - 1, 0, -1):                                            # SPEC §5: M^A
        U[j], D[j], down = abi(MA[j], S[j][0], tree.arm[j])
        MA[parent[j]] = MA[parent[j]] + (MA[j] if motion[j] else down)
    if base_kind == "wrench":
        L = st.cholesky_step()(MA[0])
        solve = st.cholesky_solve_step()
    zero6 = X.zeros(6, 1)
    W = [[] for _ in range(N)]
    W0, tau_out = [], [[None] * (r + 1) for _ in range(N)]
    for k in range(r + 1):
        bias = {kind: st.bias_step(k, kind) for kind in ("force", "motion", "base")}
        rec = {kind: st.recovery_step(k, kind) for kind in ("force", "motion", "base")}
        ext = [zero6 if Wapp[j] is None else -Wapp[j][k, :].T for j in range(N)]
        Vb, WA, qt = [None] * N, [None] * N, [None] * N
        for j in range(N - 1, -1, -1):                                       # SPEC §5: bias
            kind = "base" if j == 0 else ("motion" if motion[j] else "force")
            Wprev = stack(W[j]) if k else X.zeros(1, 6)
            Sj = stack(S[j]) if j else X.zeros(k + 1, 6)
            qj = q[j - 1][:k + 3] if j else X.zeros(k + 3, 1)
            tk = tau[j - 1][k] if kind == "force" else X(0)
            Sk1, Vb[j], Ik1, WA[j], qt[j], contrib = bias[kind](
                Sj, stack(V[j]), Wprev, stack(c[j]), ca.vertcat(*I[j]), qj, MA[j],
                U[j] if j else zero6, D[j] if j else X(1), ext[j], tk,
                tree.damp[j] if j else 0.0, tree.m[j], tree.g)
            if j:
                S[j].append(Sk1)
                ext[parent[j]] = ext[parent[j]] + contrib
            I[j].append(Ik1)
        if base_kind == "wrench":                                            # SPEC §5: V₀^(k+1)
            V0k1 = solve(L, Wb[k, :].T - WA[0])
        elif base_kind == "motion":
            V0k1 = V0jet[k + 1, :].T
        else:
            V0k1 = zero6
        for j in range(N):                                                   # SPEC §5: recovery
            kind = "base" if j == 0 else ("motion" if motion[j] else "force")
            Vp1 = V0k1 if j == 0 else V[parent[j]][k + 1]
            Wprev = stack(W[j]) if k else X.zeros(1, 6)
            Sj = stack(S[j][:k + 1]) if j else X.zeros(k + 1, 6)
            qj = q[j - 1][:k + 3] if j else X.zeros(k + 3, 1)
            qk2, Vk1, Wk, ck2, tk = rec[kind](
                Vp1, qt[j], U[j] if j else zero6, D[j] if j else X(1), Vb[j], Sj, MA[j], WA[j],
                stack(V[j]), stack(c[j]), Wprev, qj, tree.arm[j] if j else 0.0,
                tree.damp[j] if j else 0.0)
            V[j].append(Vk1)
            W[j].append(Wk)
            c[j].append(ck2)
            if kind == "force":
                q[j - 1] = ca.vertcat(q[j - 1][:k + 2], qk2, q[j - 1][k + 3:])
            elif kind == "motion":
                tau_out[j][k] = tk
        W0.append(W[0][k])
    return V[0], W0, tau_out


def _dynamics(model, order, pose, applied, reference, cse, name, motion, base_kind, outputs_of,
              structure):
    r = order
    tree = _Tree(model)
    inp = _Inputs(structure)
    X = inp.X
    _, d, R0 = _base(model, inp, pose, reference)
    n = tree.n
    fl = model.floating_base
    any_motion = any(motion[1:])
    any_force = n == 0 or not all(motion[1:])          # (a tree without joints keeps `tau`)
    V0jet = None
    if base_kind == "motion" and fl:
        Vin = inp.add("base_twist", r + 2, 6)
        V0jet = _shift_twists(Vin, d)
        V0row = V0jet[0, :].T
    elif fl:
        Vin = inp.add("base_twist", 1, 6)
        V0row = _shift_twists(Vin, d)[0, :].T
    else:
        Vin, V0row = None, X.zeros(6, 1)
    qin = inp.add("q", r + 3 if any_motion else 2, n)
    tin = inp.add("tau", r + 1, n) if any_force else None
    Wb_in = inp.add("base_wrench", r + 1, 6) if base_kind == "wrench" else None
    Wb = _shift_wrenches(Wb_in, d) if Wb_in is not None else None
    Wapp = _applied(inp, tree, r, d, applied)
    # per joint: the jet q^(0..r+2) as a column; unknown rows are zero until solved
    q = []
    for i in range(n):
        col = qin[:, i]
        if motion[i + 1]:
            q.append(col)
        else:
            q.append(ca.vertcat(col[:2], X.zeros(r + 1, 1)))
    tau = [tin[:, i] if tin is not None else None for i in range(n)]
    V0, W0, tau_out = _articulated(tree, r, R0, V0row, q, tau, Wb, Wapp, motion, base_kind,
                                   V0jet, X)
    V0jet_out = _unshift_twists(ca.horzcat(*V0).T, d)
    W0jet = _unshift_wrenches(stack(W0), d)
    if Vin is not None and base_kind == "motion":
        V0jet_out = Vin
    if Wb_in is not None:
        W0jet = Wb_in
    qjet = ca.horzcat(*q) if n else X(r + 3, 0)
    cols = [ca.vertcat(*tau_out[i + 1]) if motion[i + 1] else tin[:, i] for i in range(n)]
    taujet = ca.horzcat(*cols) if n else X(r + 1, 0)
    values = {"base_twist": V0jet_out, "q": qjet, "base_wrench": W0jet, "tau": taujet}
    outputs = [(k, values[k]) for k in outputs_of]
    return _finish(name, inp, outputs, cse)


def forward_dynamics_function(model, order, *, pose="matrix", applied=False, reference="world",
                              cse=True, name=None, structure="flat"):
    """H-GABI-FBS (SPEC §5) of order ``order`` as a ``casadi.Function``.

    Inputs ``base_pose`` (or ``nominal_pose``, ``xi``), ``base_twist``
    ((1, 6), floating base), ``q`` ((2, n): the state ``q``, ``q̇``), ``tau``
    ((r+1, n)), ``base_wrench`` ((r+1, 6), floating base), [``applied``].
    Outputs ``base_twist`` ((r+2, 6), floating base) and ``q`` ((r+3, n)),
    and for a fixed base ``base_wrench`` ((r+1, 6), the support reaction),
    equal to :func:`liedyn.forward_dynamics`'s. Options as
    :func:`inverse_dynamics_function`.
    """
    r = _options(model, order, pose, reference, applied, structure)
    motion = [False] * model.n_bodies
    fl = model.floating_base
    outs = ("base_twist", "q") if fl else ("q", "base_wrench")
    name = function_name(name, f"forward_dynamics_{r}")
    return _dynamics(model, r, pose, applied, reference, cse, name, motion,
                     "wrench" if fl else "fixed", outs, structure)


def hybrid_dynamics_function(model, order, *, motion_driven, base_motion_driven=None,
                             pose="matrix", applied=False, reference="world", cse=True,
                             name=None, structure="flat"):
    """H-GHYB-FBS (SPEC §6) of order ``order`` as a ``casadi.Function``.

    ``motion_driven`` and ``base_motion_driven`` are fixed when the function
    is built (as in :func:`liedyn.hybrid_dynamics`). Inputs ``base_pose``
    (or ``nominal_pose``, ``xi``); ``base_twist`` (floating base: (r+2, 6)
    motion-driven, (1, 6) wrench-driven); ``q`` ((r+3, n), rows 2.. read in
    the motion-driven columns only; (2, n) when no joint is motion-driven);
    ``tau`` ((r+1, n), read in the force-driven columns; absent when every
    joint is motion-driven); ``base_wrench`` ((r+1, 6), wrench-driven base);
    [``applied``]. Outputs the four jets ``base_twist`` ((r+2, 6), floating
    base), ``q`` ((r+3, n)), ``base_wrench`` ((r+1, 6)), ``tau`` ((r+1, n)).
    Options as :func:`inverse_dynamics_function`.
    """
    r = _options(model, order, pose, reference, applied, structure)
    mask = joint_mask(model, motion_driven)
    if base_motion_driven is None:
        base_motion = not model.floating_base
    elif isinstance(base_motion_driven, (bool, np.bool_)):
        base_motion = bool(base_motion_driven)
    else:
        raise TypeError(f"base_motion_driven: expected a bool, got "
                        f"{type(base_motion_driven).__name__}")
    if not model.floating_base and not base_motion:
        raise ValueError("base_motion_driven: a fixed base is motion-driven (at rest); "
                         "its wrench is the reaction, an output")
    motion = [False] + [bool(x) for x in mask]
    kind = "fixed" if not model.floating_base else ("motion" if base_motion else "wrench")
    outs = (("base_twist",) if model.floating_base else ()) + ("q", "base_wrench", "tau")
    name = function_name(name, f"hybrid_dynamics_{r}")
    return _dynamics(model, r, pose, applied, reference, cse, name, motion, kind, outs, structure)
