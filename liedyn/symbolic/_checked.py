"""Numeric calls of the traced functions with their inputs' shapes checked.

CasADi evaluates a function on an argument of the wrong shape when it can
make one fit: a ``(3, 1)`` ``q`` for an input of shape ``(3, 2)`` has its
column repeated, a ``(1, 3)`` base twist for ``(1, 6)`` too, and a named
input left out is zero. The result has the right shape and wrong values.
:class:`CheckedFunction` is the ``casadi.Function`` itself (same inputs,
outputs, methods, code generation, pickling) whose calls with numeric
arguments (NumPy arrays, lists, numbers, ``casadi.DM``) first check every
input against the shape the function declares and raise a ``ValueError``
naming it; a call with an ``SX`` or ``MX`` argument (the function used inside
a symbolic graph) is CasADi's, unchanged.
"""

import numbers

import numpy as np

import casadi as ca

_SYMBOLIC = (ca.SX, ca.MX)


def _shape(x):
    """The shape of a numeric argument as given, or ``None`` when ``x`` is not
    numeric (symbolic, or something CasADi is left to refuse)."""
    if isinstance(x, _SYMBOLIC):
        return None
    if isinstance(x, (ca.DM, np.ndarray)):
        return tuple(x.shape)
    if isinstance(x, numbers.Number):
        return ()
    if isinstance(x, (list, tuple)):
        try:
            return np.asarray(x, dtype=float).shape
        except (TypeError, ValueError):           # symbols inside, ragged: CasADi's to judge
            return None
    return None


def _fits(given, expected):
    """Exact shape, or the unambiguous vector and scalar forms: ``(k,)`` for a
    ``(k, 1)`` column (NumPy's vector, CasADi's column) and ``()`` for ``(1, 1)``."""
    return (given == expected or (len(given) == 1 and expected == (given[0], 1))
            or (given == () and expected == (1, 1)))


def check_numeric_inputs(f, named):
    """Raise a ``ValueError`` unless every input of ``f`` is in ``named`` (a
    dict by input name) with the shape ``f`` declares; entries that are not
    numeric are left to CasADi."""
    for name in f.name_in():
        if name not in named:
            raise ValueError(f"{name}: missing (the inputs of {f.name()}: "
                             f"{', '.join(f.name_in())}); CasADi would take zeros")
        given = _shape(named[name])
        expected = tuple(f.size_in(name))
        if given is not None and not _fits(given, expected):
            raise ValueError(f"{name}: expected shape {expected} (input of {f.name()}), "
                             f"got {given}")


def function_name(name, default):
    """``name`` checked as a CasADi function name (it also names the
    generated C function and its files), ``default`` for ``None``."""
    if name is None:
        return default
    if not isinstance(name, str):
        raise TypeError(f"name: expected a str, got {type(name).__name__}")
    try:
        ca.Function(name, [], [])
    except RuntimeError:
        raise ValueError(f"name: expected a letter followed by letters, digits and single "
                         f"underscores (it names the generated C function and its files; "
                         f"not 'null', 'jac' or 'hess'), got {name!r}") from None
    return name


def _named(f, args):
    """The arguments of a call (a sequence in input order, or a dict by name)
    as a dict, or ``None`` when one of them is symbolic or the call is
    malformed (CasADi's own errors then)."""
    if isinstance(args, dict):
        values = args
    elif isinstance(args, (list, tuple)) and len(args) == f.n_in():
        values = dict(zip(f.name_in(), args))
    else:
        return None
    if any(isinstance(v, _SYMBOLIC) for v in values.values()):
        return None
    if any(k not in f.name_in() for k in values):
        return None
    return values


class CheckedFunction(ca.Function):
    """A ``casadi.Function`` whose numeric calls check their inputs' shapes.

    ``CheckedFunction(f)`` shares ``f``'s compiled graph; it is a
    ``casadi.Function`` (``isinstance`` holds, every method is CasADi's) and
    differs only in :meth:`call` (and so in ``f(...)``): when no argument is
    an ``SX`` or ``MX``, every input must be given, with the shape
    ``f.size_in(name)`` (a 1-D array of ``k`` entries for a ``(k, 1)``
    input; a number for ``(1, 1)``), or a ``ValueError`` names it. Symbolic
    calls are CasADi's.
    """

    def call(self, *args, **kwargs):
        if args:
            named = _named(self, args[0])
            if named is not None:
                check_numeric_inputs(self, named)
        return super().call(*args, **kwargs)
