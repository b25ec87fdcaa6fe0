"""liedyn.symbolic: the recursions traced into CasADi functions (SPEC §15).

The traced functions are a second implementation of SPEC §4–§6 (written on
CasADi symbols, body by body), so every test compares them with something
else: the compiled kernels at every order, Pinocchio's analytic derivatives
at order 0, and central differences of the compiled kernels at higher
orders.

Tolerances (fixed numbers; errors measured on these trees in brackets):

* inverse dynamics, traced vs kernels: 1e-12 relative to the largest entry
  of each jet row, r ≤ 5 [≤ 2.2e-14];
* forward dynamics: the high rows of the forward map are ill-conditioned
  (on the aerial manipulator the kernels themselves reproduce the q^(7) of
  the motion that produced the forces to only 6e-9), so the traced forward
  outputs are checked by their backward error — fed to the kernels' inverse
  dynamics they must reproduce the forces to 1e-12 relative [≤ 3e-15] — and
  against the kernels to 1e-12 relative in the rows up to q^(3) [≤ 1.1e-12
  on the aerial manipulator at q^(3): 1e-11 there] and 1e-6 in the rows up
  to q^(7) [≤ 6e-9];
* derivatives at order 0 vs Pinocchio: 1e-9 relative to 1 + max|entry|
  [~1e-13]; at orders ≥ 1 vs central differences of the kernels with step
  1e-5: 1e-6 relative [truncation ~h² · |third derivative| ~ 1e-9].
"""

import re

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

import liedyn                                                      # noqa: E402
from liedyn import se3                                             # noqa: E402
from liedyn import symbolic as lds                                 # noqa: E402
from models.trees import random_tree                               # noqa: E402
from tests.helpers import run_python                               # noqa: E402

INV_RTOL = 1e-12
BACKWARD_RTOL = 1e-12


def _row_rel(actual, desired):
    """Per jet row: max |a − d| / max |d| (rows with d = 0: max |a|)."""
    a, d = np.asarray(actual, float), np.asarray(desired, float)
    assert a.shape == d.shape, (a.shape, d.shape)
    assert np.all(np.isfinite(a))
    scale = np.max(np.abs(d), axis=-1)
    err = np.max(np.abs(a - d), axis=-1)
    return np.where(scale > 0, err / np.where(scale > 0, scale, 1.0), err)


def _num(out):
    return {k: np.asarray(v.full()) for k, v in out.items()}


def _jets(model, rng, R, far=False):
    fl = model.floating_base
    C0 = se3.exp(rng.normal(size=6) * 0.5) if fl else model.home_pose.copy()
    if far and fl:
        C0[:3, 3] += np.array([30.0, -20.0, 5.0])
    Vb = rng.normal(size=(R + 2, 6)) * 0.5 if fl else None
    q = rng.normal(size=(R + 3, model.n_joints)) * 0.5
    Wa = rng.normal(size=(R + 1, model.n_bodies, 6)) * 0.5
    return C0, Vb, q, Wa


TREES = [(fl, seed) for fl in (True, False) for seed in (1, 2)]


@pytest.mark.parametrize("floating,seed", TREES)
@pytest.mark.parametrize("reference", ["world", "base"])
def test_inverse_equals_kernels(floating, seed, reference):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 8, floating_base=floating, armature=True, damping=True)
    R = 5
    C0, Vb, q, Wa = _jets(model, rng, R, far=True)
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, R, applied=Wa, reference=reference)
    for r in range(R + 1):
        f = lds.inverse_dynamics_function(model, r, applied=True, reference=reference)
        args = dict(base_pose=C0, q=q[:r + 3], applied=Wa[:r + 1].reshape(r + 1, -1))
        if floating:
            args["base_twist"] = Vb[:r + 2]
        out = _num(f(**args))
        assert np.max(_row_rel(out["tau"], inv.tau[:r + 1])) <= INV_RTOL, r
        assert np.max(_row_rel(out["base_wrench"], inv.base_wrench[:r + 1])) <= INV_RTOL, r


def test_inverse_without_applied_and_named_io():
    model = random_tree(np.random.default_rng(3), 5, floating_base=True)
    f = lds.inverse_dynamics_function(model, 2)
    assert f.name_in() == ["base_pose", "base_twist", "q"]
    assert f.name_out() == ["base_wrench", "tau"]
    assert f.size_in("base_twist") == (4, 6) and f.size_in("q") == (5, 4)
    assert f.size_out("tau") == (3, 4) and f.size_out("base_wrench") == (3, 6)
    fixed = random_tree(np.random.default_rng(3), 5, floating_base=False)
    g = lds.forward_dynamics_function(fixed, 1, applied=True)
    assert g.name_in() == ["base_pose", "q", "tau", "applied"]
    assert g.name_out() == ["q", "base_wrench"]
    assert g.size_in("applied") == (2, 30)
    rng = np.random.default_rng(4)
    C0, Vb, q, _ = _jets(model, rng, 2)
    out = _num(f(base_pose=C0, base_twist=Vb, q=q))
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, 2)
    assert np.max(_row_rel(out["tau"], inv.tau)) <= INV_RTOL


def _forward_checks(model, C0, Vb, q, Wa, R, out):
    """Backward error of traced forward outputs through the kernels' inverse
    dynamics, and agreement with the kernels' forward dynamics."""
    fl = model.floating_base
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, R, applied=Wa)
    back = liedyn.inverse_dynamics(model, C0, out["base_twist"] if fl else None, out["q"], R,
                                   applied=Wa)
    assert np.max(_row_rel(back.tau, inv.tau)) <= BACKWARD_RTOL
    if fl:
        assert np.max(_row_rel(back.base_wrench, inv.base_wrench)) <= BACKWARD_RTOL
    fwd = liedyn.forward_dynamics(model, C0, Vb[:1] if fl else None, q[:2], R, tau=inv.tau,
                                  base_wrench=inv.base_wrench if fl else None, applied=Wa)
    e = _row_rel(out["q"], fwd.q)
    assert np.max(e[:4]) <= 1e-11 and np.max(e) <= 1e-6, e
    if fl:
        e = _row_rel(out["base_twist"], fwd.base_twist)
        assert np.max(e[:2]) <= 1e-11 and np.max(e) <= 1e-6, e
    else:
        assert np.max(_row_rel(out["base_wrench"], fwd.base_wrench)) <= 1e-9


@pytest.mark.parametrize("floating,seed", TREES)
def test_forward_equals_kernels(floating, seed):
    rng = np.random.default_rng(10 + seed)
    model = random_tree(rng, 8, floating_base=floating, armature=True, damping=True)
    R = 5
    C0, Vb, q, Wa = _jets(model, rng, R)
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, R, applied=Wa)
    for r in (0, 1, R):
        g = lds.forward_dynamics_function(model, r, applied=True)
        args = dict(base_pose=C0, q=q[:2], tau=inv.tau[:r + 1],
                    applied=Wa[:r + 1].reshape(r + 1, -1))
        if floating:
            args.update(base_twist=Vb[:1], base_wrench=inv.base_wrench[:r + 1])
        out = _num(g(**args))
        _forward_checks(model, C0, Vb[:r + 2] if floating else None, q[:r + 3],
                        Wa[:r + 1], r, out)


@pytest.mark.parametrize("floating,base_motion", [(True, False), (True, True), (False, True)])
def test_hybrid_equals_kernels(floating, base_motion):
    rng = np.random.default_rng(20)
    model = random_tree(rng, 8, floating_base=floating, armature=True, damping=True)
    R = 3
    C0, Vb, q, Wa = _jets(model, rng, R)
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, R, applied=Wa)
    mask = np.array([True, False, True, False, False, True, False])
    kw = dict(tau=inv.tau, applied=Wa)
    if floating and not base_motion:
        kw["base_wrench"] = inv.base_wrench
    h = liedyn.hybrid_dynamics(model, C0, Vb, q, R, motion_driven=mask,
                               base_motion_driven=base_motion, **kw)
    f = lds.hybrid_dynamics_function(model, R, motion_driven=mask, base_motion_driven=base_motion,
                                     applied=True)
    args = dict(base_pose=C0, q=q, tau=inv.tau, applied=Wa.reshape(R + 1, -1))
    if floating:
        args["base_twist"] = Vb if base_motion else Vb[:1]
        if not base_motion:
            args["base_wrench"] = inv.base_wrench
    out = _num(f(**args))
    for k in ("tau", "base_wrench"):
        assert np.max(_row_rel(out[k], getattr(h, k))) <= 1e-11, k
    e = _row_rel(out["q"], h.q)
    assert np.max(e[:4]) <= 1e-11 and np.max(e) <= 1e-6, e
    # the motion-driven columns and the forces of the force-driven joints come back
    assert np.max(_row_rel(out["q"][:, mask], q[:, mask])) == 0.0
    assert np.max(_row_rel(out["tau"], inv.tau)) <= 1e-9


def test_minimal_pose():
    rng = np.random.default_rng(30)
    model = random_tree(rng, 5, floating_base=True)
    R = 2
    C0, Vb, q, _ = _jets(model, rng, R)
    f = lds.inverse_dynamics_function(model, R, pose="minimal")
    assert f.name_in() == ["nominal_pose", "xi", "base_twist", "q"]
    for scale in (0.0, 1e-3, 0.08, 0.12, 1.0):          # both sides of the series branch
        xi = rng.normal(size=6) * scale
        inv = liedyn.inverse_dynamics(model, C0 @ se3.exp(xi), Vb, q, R)
        out = _num(f(nominal_pose=C0, xi=xi, base_twist=Vb, q=q))
        assert np.max(_row_rel(out["tau"], inv.tau)) <= 1e-12, scale
        assert np.max(_row_rel(out["base_wrench"], inv.base_wrench)) <= 1e-12, scale
    xi = ca.SX.sym("xi", 6)
    E = lds.se3_exp(xi)
    H = ca.hessian(ca.sumsqr(E), xi)[0]
    F = ca.Function("E", [xi], [E, ca.jacobian(E, xi), H])
    for scale in (0.0, 1e-6, 0.09, 0.11, 2.0):
        v = rng.normal(size=6) * scale
        C, J, Hv = (np.asarray(x.full()) for x in F(v))
        assert np.max(np.abs(C - se3.exp(v))) <= 1e-14, scale
        assert np.all(np.isfinite(J)) and np.all(np.isfinite(Hv)), scale


def test_bad_arguments():
    model = random_tree(np.random.default_rng(0), 3)
    with pytest.raises(ValueError, match="pose"):
        lds.inverse_dynamics_function(model, 1, pose="quaternion")
    with pytest.raises(ValueError, match="reference"):
        lds.forward_dynamics_function(model, 1, reference="com")
    with pytest.raises(TypeError, match="order"):
        lds.inverse_dynamics_function(model, 1.5)
    with pytest.raises(ValueError, match="order"):
        lds.inverse_dynamics_function(model, -1)
    with pytest.raises(TypeError, match="applied"):
        lds.inverse_dynamics_function(model, 1, applied=None)
    with pytest.raises(TypeError, match="model"):
        lds.inverse_dynamics_function("robot", 1)
    with pytest.raises(ValueError, match="base_motion_driven"):
        lds.hybrid_dynamics_function(random_tree(np.random.default_rng(0), 3, floating_base=False),
                                     1, motion_driven=[0], base_motion_driven=False)
    f = lds.inverse_dynamics_function(model, 1)
    with pytest.raises(ValueError, match="of"):
        lds.jacobian_function(f, "q", "q")
    with pytest.raises(ValueError, match="wrt"):
        lds.jacobian_function(f, "tau", "tau")
    with pytest.raises(TypeError, match="f"):
        lds.jacobian_function(model, "tau", "q")


def _bad_shapes(shape):
    """Shapes CasADi would make fit or refuse: too few and too many columns,
    too few and too many rows, the transpose (of a non-square input)."""
    rows, cols = shape
    return [(rows, cols - 1), (rows, cols + 1), (rows - 1, cols), (rows + 1, cols)] + \
        ([(cols, rows)] if rows != cols else [])


@pytest.mark.parametrize("floating", [True, False])
def test_numeric_calls_check_every_input(floating):
    """Every input of an inverse and a forward dynamics function, given with
    another shape (as an array, a list or a DM, by name or by position),
    is refused naming it; left out too. With the right shapes the values
    are the kernels'; symbolic calls are CasADi's."""
    rng = np.random.default_rng(60)
    model = random_tree(rng, 4, floating_base=floating)
    R = 1
    C0, Vb, q, Wa = _jets(model, rng, R)
    applied = Wa.reshape(R + 1, -1)
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, R, applied=Wa)
    fwd = liedyn.forward_dynamics(model, C0, None if Vb is None else Vb[:1], q[:2], R,
                                  tau=inv.tau, base_wrench=inv.base_wrench if floating else None,
                                  applied=Wa)
    f = lds.inverse_dynamics_function(model, R, applied=True)
    g = lds.forward_dynamics_function(model, R, applied=True)
    f_in = dict(base_pose=C0, base_twist=Vb, q=q, applied=applied)
    g_in = dict(base_pose=C0, base_twist=None if Vb is None else Vb[:1], q=q[:2], tau=inv.tau,
                base_wrench=inv.base_wrench, applied=applied)
    f_in, g_in = ({k: given[k] for k in fn.name_in()} for fn, given in ((f, f_in), (g, g_in)))
    out = _num(f(**f_in))
    assert np.max(_row_rel(out["tau"], inv.tau)) <= INV_RTOL
    assert np.max(_row_rel(out["base_wrench"], inv.base_wrench)) <= INV_RTOL
    out = _num(dict(zip(g.name_out(), g(*g_in.values()))))
    assert np.max(_row_rel(out["q"], fwd.q)) <= 1e-11
    for fn, args in ((f, f_in), (g, g_in)):
        for name in fn.name_in():
            expected = fn.size_in(name)
            for shape in _bad_shapes(expected):
                bad = rng.normal(size=shape)
                for form in (bad, bad.tolist(), ca.DM(bad)):          # ([] for no rows: (0,))
                    given = np.shape(form) if isinstance(form, list) else form.shape
                    msg = (rf"{name}: expected shape {re.escape(str(expected))} .*got "
                           rf"{re.escape(str(given))}")
                    with pytest.raises(ValueError, match=msg):
                        fn(**{**args, name: form})
                    with pytest.raises(ValueError, match=msg):
                        fn(*[form if k == name else args[k] for k in fn.name_in()])
            with pytest.raises(ValueError, match=rf"{name}: missing"):
                fn(**{k: v for k, v in args.items() if k != name})
    # the function used in a graph: symbols (and numbers beside them) as CasADi takes them
    qs = ca.SX.sym("q", *f.size_in("q"))
    h = ca.Function("h", [qs], [f(**{**f_in, "q": qs})["tau"]])
    assert np.max(_row_rel(np.asarray(h(q).full()), inv.tau)) <= INV_RTOL
    assert isinstance(f, ca.Function) and isinstance(lds.jacobian_function(f, "tau", "q"),
                                                     ca.Function)
    with pytest.raises(ValueError, match=r"q: expected shape"):
        lds.jacobians(f, "tau", "q", **{**f_in, "q": q[:, :-1]})


def test_import_error_names_the_extra():
    out = run_python("""
        import sys
        sys.modules["casadi"] = None
        try:
            import liedyn.symbolic
        except ImportError as e:
            print(e)
    """)
    assert "pip install 'liedyn[casadi]'" in out


# ------------------------------------------------------------- derivatives --

def _pin_tangent_function(f_id, model):
    """τ_pin(δ, q, v_pin, a_pin) in Pinocchio's coordinates, composed from the
    traced inverse dynamics with ``pose="minimal"``: ``C₀ = C̄₀ exp(P δ)``,
    ``V₀ = Ad_{C₀} P v_b``, ``V̇₀ = Ad_{C₀} P a_b``, ``τ_b = P Ad_{C₀}ᵀ W₀``."""
    n = model.n_joints
    C0n = ca.SX.sym("C0", 4, 4)
    d, qj = ca.SX.sym("d", 6), ca.SX.sym("q", n)
    v, a = ca.SX.sym("v", 6 + n), ca.SX.sym("a", 6 + n)
    P = lambda x: ca.vertcat(x[3:6], x[0:3])                                   # noqa: E731
    xi = P(d)
    C0 = ca.mtimes(C0n, lds.se3_exp(xi))
    R, p = C0[:3, :3], C0[:3, 3]
    ph = ca.vertcat(ca.horzcat(0, -p[2], p[1]), ca.horzcat(p[2], 0, -p[0]),
                    ca.horzcat(-p[1], p[0], 0))
    Ad = ca.vertcat(ca.horzcat(R, ca.SX.zeros(3, 3)), ca.horzcat(ca.mtimes(ph, R), R))
    V0 = ca.mtimes(Ad, P(v[:6]))
    A0 = ca.mtimes(Ad, P(a[:6]))
    base_twist = ca.horzcat(V0, A0).T
    qjet = ca.horzcat(qj, v[6:], a[6:]).T
    out = f_id(nominal_pose=C0n, xi=xi, base_twist=base_twist, q=qjet)
    tau_pin = ca.vertcat(P(ca.mtimes(Ad.T, out["base_wrench"][0, :].T)), out["tau"][0, :].T)
    return ca.Function("tau_pin", [C0n, d, qj, v, a],
                       [tau_pin, ca.jacobian(tau_pin, ca.vertcat(d, qj)),
                        ca.jacobian(tau_pin, v), ca.jacobian(tau_pin, a)])


def test_state_derivatives_order0_against_pinocchio():
    pin = pytest.importorskip("pinocchio")
    from liedyn.interop.pinocchio import to_pinocchio
    rng = np.random.default_rng(40)
    model = random_tree(rng, 6, floating_base=True, prismatic_fraction=0.3)
    bridge = to_pinocchio(model)
    n = model.n_joints
    C0, Vb, q, _ = _jets(model, rng, 0)
    qp, vjet = bridge.motion_to_pin(C0, Vb[:2], q[:3])
    v, a = vjet[0], vjet[1]
    dq, dv, da = pin.computeRNEADerivatives(bridge.model, bridge.data, qp, v, a)
    M = np.triu(da) + np.triu(da, 1).T
    # Pinocchio's v orders joints by its own depth-first order: map to q columns
    T = np.zeros((6 + n, 6 + n))
    T[np.arange(6), np.arange(6)] = 1.0
    T[np.asarray(bridge.v_index), 6 + np.arange(n)] = 1.0        # v_pin = T (v_b, q̇)
    f = lds.inverse_dynamics_function(model, 0, pose="minimal")
    g = _pin_tangent_function(f, model)
    tau0, Jx, Jv, Ja = (np.asarray(x.full()) for x in
                        g(C0, np.zeros(6), q[0], T.T @ v, T.T @ a))
    # g's joint order is liedyn's: bring Pinocchio's matrices to it
    ref = [T.T @ pin.rnea(bridge.model, bridge.data, qp, v, a), T.T @ dq @ T,
           T.T @ dv @ T, T.T @ M @ T]
    for got, want, what in zip([tau0.ravel(), Jx, Jv, Ja], ref, ["tau", "dq", "dv", "da"]):
        err = np.max(np.abs(got - want)) / (1.0 + np.max(np.abs(want)))
        assert err <= 1e-9, (what, err)


def test_forward_derivatives_order0_against_pinocchio():
    pin = pytest.importorskip("pinocchio")
    from liedyn.interop.pinocchio import to_pinocchio
    rng = np.random.default_rng(41)
    model = random_tree(rng, 6, floating_base=False)
    bridge = to_pinocchio(model)
    n = model.n_joints
    q = rng.normal(size=(2, n)) * 0.5
    tau = rng.normal(size=(1, n))
    qp, vjet = bridge.motion_to_pin(None, None, np.vstack([q, np.zeros((1, n))]))
    T = np.zeros((n, n))
    T[np.asarray(bridge.v_index), np.arange(n)] = 1.0
    tau_p = T @ tau[0]
    dq, dv, dtau = pin.computeABADerivatives(bridge.model, bridge.data, qp, vjet[0], tau_p)
    f = lds.forward_dynamics_function(model, 0)
    J = lds.jacobians(f, "q", ("q", "tau"), base_pose=model.home_pose, q=q, tau=tau)
    dqdd_dq = J[("q", "q")][2, :, 0, :]
    dqdd_dv = J[("q", "q")][2, :, 1, :]
    dqdd_dtau = J[("q", "tau")][2, :, 0, :]
    for got, want, what in [(dqdd_dq, T.T @ dq @ T, "dq"), (dqdd_dv, T.T @ dv @ T, "dv"),
                            (dqdd_dtau, T.T @ dtau @ T, "dtau")]:
        err = np.max(np.abs(got - want)) / (1.0 + np.max(np.abs(want)))
        assert err <= 1e-9, (what, err)


def _central(fun, x, u, h):
    return (fun(x + h * u) - fun(x - h * u)) / (2 * h)


@pytest.mark.parametrize("floating", [True, False])
def test_state_derivatives_higher_orders_against_central_differences(floating):
    rng = np.random.default_rng(50)
    model = random_tree(rng, 6, floating_base=floating, armature=True, damping=True)
    R = 3
    C0, Vb, q, Wa = _jets(model, rng, R)
    wrt = ("xi", "base_twist", "q") if floating else ("q",)
    f = lds.inverse_dynamics_function(model, R, pose="minimal", applied=True)
    vals = dict(nominal_pose=C0, xi=np.zeros(6), q=q, applied=Wa.reshape(R + 1, -1))
    if floating:
        vals["base_twist"] = Vb
    J = lds.jacobians(f, ("tau", "base_wrench"), wrt, **vals)
    h = 1e-5
    for w in wrt:
        u = rng.normal(size=f.size_in(w))

        def numeric(x, w=w):
            kw = dict(vals)
            kw[w] = x.reshape(np.shape(vals[w]))
            inv = liedyn.inverse_dynamics(model, C0 @ se3.exp(kw["xi"]), kw.get("base_twist"),
                                          kw["q"], R, applied=Wa)
            return np.concatenate([inv.tau.ravel(), inv.base_wrench.ravel()])

        fd = _central(numeric, np.asarray(vals[w], float).reshape(u.shape), u, h)
        ad = np.concatenate([np.tensordot(J[(o, w)], u, axes=2).ravel()
                             for o in ("tau", "base_wrench")])
        err = np.max(np.abs(ad - fd)) / (1.0 + np.max(np.abs(fd)))
        assert err <= 1e-6, (w, err)


def test_forward_state_derivatives_against_central_differences():
    rng = np.random.default_rng(51)
    model = random_tree(rng, 5, floating_base=True, armature=True)
    R = 2
    C0, Vb, q, _ = _jets(model, rng, R)
    inv = liedyn.inverse_dynamics(model, C0, Vb, q, R)
    f = lds.forward_dynamics_function(model, R, pose="minimal")
    vals = dict(nominal_pose=C0, xi=np.zeros(6), base_twist=Vb[:1], q=q[:2], tau=inv.tau,
                base_wrench=inv.base_wrench)
    wrt = ("xi", "base_twist", "q", "tau", "base_wrench")
    J = lds.jacobians(f, ("q", "base_twist"), wrt, **vals)
    h = 1e-5
    for w in wrt:
        u = rng.normal(size=f.size_in(w))

        def numeric(x, w=w):
            kw = dict(vals)
            kw[w] = x.reshape(np.shape(vals[w]))
            fwd = liedyn.forward_dynamics(model, C0 @ se3.exp(kw["xi"]), kw["base_twist"],
                                          kw["q"], R, tau=kw["tau"], base_wrench=kw["base_wrench"])
            return np.concatenate([fwd.q.ravel(), fwd.base_twist.ravel()])

        fd = _central(numeric, np.asarray(vals[w], float).reshape(u.shape), u, h)
        ad = np.concatenate([np.tensordot(J[(o, w)], u, axes=2).ravel()
                             for o in ("q", "base_twist")])
        err = np.max(np.abs(ad - fd)) / (1.0 + np.max(np.abs(fd)))
        assert err <= 1e-6, (w, err)


def test_free_body_without_joints():
    from models.trees import tumbling_body
    model = tumbling_body()
    rng = np.random.default_rng(70)
    C0, V = se3.exp(rng.normal(size=6)), rng.normal(size=(4, 6))
    q = np.zeros((5, 0))
    inv = liedyn.inverse_dynamics(model, C0, V, q, 2)
    out = _num(lds.inverse_dynamics_function(model, 2)(base_pose=C0, base_twist=V, q=q))
    assert out["tau"].shape == (3, 0)
    assert np.max(_row_rel(out["base_wrench"], inv.base_wrench)) <= INV_RTOL
    g = lds.forward_dynamics_function(model, 2)
    out = _num(g(base_pose=C0, base_twist=V[:1], q=q[:2], tau=np.zeros((3, 0)),
                 base_wrench=inv.base_wrench))
    assert np.max(_row_rel(out["base_twist"], V)) <= 1e-12
