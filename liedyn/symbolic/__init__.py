"""The recursions as symbolic functions (SPEC §15): CasADi functions of a
model's inverse, forward and hybrid dynamics of any order, their derivatives
with respect to the state, and C code generated from them.

Needs CasADi (``pip install 'liedyn[casadi]'``).
"""

try:
    import casadi as _casadi  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("liedyn.symbolic needs CasADi: pip install 'liedyn[casadi]'") from exc

from .functions import (forward_dynamics_function, hybrid_dynamics_function,
                        inverse_dynamics_function, se3_exp)
from ._checked import CheckedFunction
from .derivatives import jacobian_function, jacobians
from .codegen import (CompileEstimate, LongCompileWarning, build_timer, compile_c,
                      compile_function, generate_c, predict_compile, run_timer, time_c)

__all__ = ["inverse_dynamics_function", "forward_dynamics_function", "hybrid_dynamics_function",
           "se3_exp", "CheckedFunction", "jacobian_function", "jacobians",
           "generate_c", "compile_c", "compile_function", "build_timer", "run_timer", "time_c",
           "predict_compile", "CompileEstimate", "LongCompileWarning"]
