"""Independent reference implementations used as oracles and as benchmark
baselines (not the fast path)."""

from .casadi_ad import CasadiBaseline

__all__ = ["CasadiBaseline"]
