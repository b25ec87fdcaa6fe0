"""Derivatives of the traced dynamics with respect to their inputs (SPEC §15.3).

CasADi differentiates the traced graph (forward or reverse mode, chosen by
CasADi for the Jacobian's shape), which gives ``∂τ^(k)/∂q^(a)``,
``∂τ^(k)/∂V₀^(a)``, ``∂q^(k+2)/∂τ^(a)``, … for every ``k`` at once. With
``pose="minimal"`` the derivative with respect to ``xi`` at ``ξ = 0`` is the
derivative along ``C₀ = C̄₀ exp([ξ])``: the base pose perturbed in its own
(body) frame.

A function of ``structure="shared"`` (an MX graph of step calls) is
differentiated in forward mode with its steps kept as calls: the function's
forward derivative in ``directions`` directions (CasADi's ``forward``,
which calls each step's own directional derivative, generated once) is
mapped over the columns of the identity (``Function.map``, a loop in the
generated C), so the C of the Jacobian stays the size of a few steps'
derivatives; the price is run time, each pass recomputing the nominal values
and propagating dense seeds where the flat graph folds the unit seeds
(SPEC §15.4).

Layout: a jet ``x`` of shape ``(rows, cols)`` is flattened row by row
(``x.reshape(-1)`` in NumPy), so the Jacobian of output ``y`` with respect to
input ``x`` reshapes to ``(rows_y, cols_y, rows_x, cols_x)`` and
``J4[k, i, a, j] = ∂y^(k)_i / ∂x^(a)_j``.
"""

import numpy as np

import casadi as ca

from ._checked import CheckedFunction, function_name


def _names(f, of, wrt):
    outs, ins = f.name_out(), f.name_in()
    of = [of] if isinstance(of, str) else list(of)
    wrt = [wrt] if isinstance(wrt, str) else list(wrt)
    for o in of:
        if o not in outs:
            raise ValueError(f"of: {o!r} is not an output of {f.name()} (outputs {outs})")
    for w in wrt:
        if w not in ins:
            raise ValueError(f"wrt: {w!r} is not an input of {f.name()} (inputs {ins})")
    return of, wrt


def _row_major(x):
    return ca.vec(x.T)


def _directions(directions):
    if isinstance(directions, (bool, np.bool_)) or not isinstance(directions, (int, np.integer)):
        raise TypeError(f"directions: expected an int, got {type(directions).__name__}")
    if directions < 1:
        raise ValueError(f"directions: expected an int ≥ 1, got {directions}")
    return int(directions)


def _seeds(f, wrt, per_call, calls):
    """The unit seeds of every input of ``f`` for the forward derivative in
    ``per_call`` directions, mapped ``calls`` times: input ``x`` of shape
    ``(a, b)`` gets an ``(a, b · per_call · calls)`` matrix whose block ``d``
    (``(a, b)``) is the unit matrix of direction ``d``, the row-major index
    of its entry in the stacked ``wrt`` inputs (zero for other inputs).
    Sparse, so that the C stores the ones, not the ``(a b)²``-sized blocks."""
    seeds, start = [], 0
    for nm in f.name_in():
        a, b = f.size_in(nm)
        rows, cols = [], []
        if nm in wrt:
            for i in range(a):
                for j in range(b):
                    rows.append(i)
                    cols.append((start + i * b + j) * b + j)
            start += a * b
        seeds.append(ca.DM(ca.Sparsity.triplet(a, b * per_call * calls, rows, cols),
                           1.0))
    return seeds


def _forward_mapped(f, of, wrt, name, directions):
    """The Jacobians of an MX function by its forward derivative in
    ``directions`` directions, mapped over the identity (module docstring)."""
    wrt_in = [w for w in f.name_in() if w in wrt]        # seeds in input order
    total = sum(f.size_in(w)[0] * f.size_in(w)[1] for w in wrt_in)
    calls = -(-total // directions)
    x = f.mx_in()
    y = f.call(x)
    sens = f.forward(directions).map(calls, "serial").call(
        x + y + _seeds(f, wrt_in, directions, calls))
    start = {}
    at = 0
    for w in wrt_in:
        start[w] = at
        at += f.size_in(w)[0] * f.size_in(w)[1]
    exprs, names = [], []
    for o in of:
        ao, bo = f.size_out(o)
        cols = ca.reshape(sens[f.name_out().index(o)], ao * bo, directions * calls)
        rows = cols[[j * ao + i for i in range(ao) for j in range(bo)], :]   # row-major
        for w in wrt:
            a, b = f.size_in(w)
            exprs.append(rows[:, start[w]:start[w] + a * b])
            names.append(f"d{o}_d{w}")
    return CheckedFunction(ca.Function(name, x, exprs, f.name_in(), names))


def jacobian_function(f, of, wrt, *, name=None, directions=1):
    """The Jacobians of outputs ``of`` of ``f`` with respect to inputs ``wrt``.

    Parameters
    ----------
    f : casadi.Function
        A function of :mod:`liedyn.symbolic` (any SX function with named
        inputs and outputs).
    of, wrt : str or sequence of str
        Output and input names, e.g. ``of="tau", wrt=("q", "base_twist")``.
    name : str, optional
    directions : int ≥ 1, keyword
        For a function of ``structure="shared"``: the directions of one
        forward pass. More directions share the nominal values between
        them but lengthen the C about in proportion; on Go2's order-1
        Jacobian 1, 4 and 16 run equally fast (about 1 ms) while the C
        grows from 0.2 to 1.1 MB (``experiments/bench_codegen.py``). A flat
        (SX) function is differentiated in one graph and ignores it.

    Returns
    -------
    CheckedFunction
        A ``casadi.Function`` (numeric calls check their inputs' shapes) with
        the inputs of ``f``; one output ``"d{of}_d{wrt}"`` per pair, of shape
        ``(rows_of · cols_of, rows_wrt · cols_wrt)`` in the row-major layout
        of the module docstring.
    """
    if not isinstance(f, ca.Function):
        raise TypeError(f"f: expected a casadi.Function, got {type(f).__name__}")
    of, wrt = _names(f, of, wrt)
    name = function_name(name, f"jac_{f.name()}")
    directions = _directions(directions)
    if f.is_a("MXFunction"):
        return _forward_mapped(f, of, wrt, name, directions)
    x = f.sx_in()
    y = f.call(x)
    ins, outs = f.name_in(), f.name_out()
    exprs, names = [], []
    for o in of:
        yo = _row_major(y[outs.index(o)])
        for w in wrt:
            exprs.append(ca.jacobian(yo, _row_major(x[ins.index(w)])))
            names.append(f"d{o}_d{w}")
    return CheckedFunction(ca.Function(name, x, exprs, ins, names))


def jacobians(f, of, wrt, **inputs):
    """The Jacobians of :func:`jacobian_function` evaluated at ``inputs``
    (NumPy arrays by input name), each reshaped to
    ``(rows_of, cols_of, rows_wrt, cols_wrt)``; a dict keyed ``(of, wrt)``."""
    of, wrt = _names(f, of, wrt)
    J = jacobian_function(f, of, wrt)
    vals = J(**{k: ca.DM(np.asarray(v, float)) for k, v in inputs.items()})
    out = {}
    for o in of:
        so = f.size_out(o)
        for w in wrt:
            sw = f.size_in(w)
            out[(o, w)] = np.asarray(vals[f"d{o}_d{w}"].full()).reshape(so + sw)
    return out
