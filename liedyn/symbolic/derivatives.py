"""Derivatives of the traced dynamics with respect to their inputs (SPEC §15.3).

CasADi differentiates the traced graph (forward or reverse mode, chosen by
CasADi for the Jacobian's shape), which gives ``∂τ^(k)/∂q^(a)``,
``∂τ^(k)/∂V₀^(a)``, ``∂q^(k+2)/∂τ^(a)``, … for every ``k`` at once. With
``pose="minimal"`` the derivative with respect to ``xi`` at ``ξ = 0`` is the
derivative along ``C₀ = C̄₀ exp([ξ])``: the base pose perturbed in its own
(body) frame.

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


def jacobian_function(f, of, wrt, *, name=None):
    """The Jacobians of outputs ``of`` of ``f`` with respect to inputs ``wrt``.

    Parameters
    ----------
    f : casadi.Function
        A function of :mod:`liedyn.symbolic` (any SX function with named
        inputs and outputs).
    of, wrt : str or sequence of str
        Output and input names, e.g. ``of="tau", wrt=("q", "base_twist")``.
    name : str, optional

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
