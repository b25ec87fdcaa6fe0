"""Least-squares fits of the paper's cost laws with standard errors (SPEC §9).

No plotting here: NumPy and SciPy (for Student's t quantile) only, so the
tests import it without Matplotlib.

Laws
----
=====================  ==============================  ==========================
``linear``             ``t = c₀ + c₁ N``               recursions against N, fixed r
``quadratic``          ``t = c₀ + c₁ r + c₂ r²``       recursions against r, fixed N
``geometric``          ``log t = log a + r log γ``     nested AD against r
=====================  ==============================  ==========================

Each is ordinary least squares ``y = X β + e`` with the design matrix ``X``
of the law: ``β̂ = argmin |y − X β|²``, residual ``ê = y − X β̂``, residual
variance ``s² = |ê|² / (n − p)`` (``n`` points, ``p`` coefficients),
covariance ``s² (XᵀX)⁻¹``, standard errors the square roots of its diagonal,
and the two-sided confidence interval ``β̂ ± t_{(1+level)/2, n−p} · se``.
The geometric law is fitted on ``log t``, so its interval for ``γ`` is the
exponential of the interval for ``log γ``.
"""

from dataclasses import dataclass

import numpy as np

LAWS = {
    "linear": ("t = c0 + c1 N", ("c0", "c1")),
    "quadratic": ("t = c0 + c1 r + c2 r^2", ("c0", "c1", "c2")),
    "geometric": ("log t = log a + r log gamma", ("log a", "log gamma")),
}


@dataclass(frozen=True)
class Fit:
    """One fitted law.

    ``kind`` a key of :data:`LAWS`; ``coef`` and ``se`` ``(p,)`` in the order
    of ``LAWS[kind][1]``; ``dof = n − p``; ``rms`` the root-mean-square
    residual ``|ê| / √n`` in the units of the fitted quantity (for the
    geometric law, of ``log t``); ``x`` the abscissae fitted.
    """

    kind: str
    coef: np.ndarray
    se: np.ndarray
    dof: int
    rms: float
    x: np.ndarray

    @property
    def law(self):
        return LAWS[self.kind][0]

    @property
    def names(self):
        return LAWS[self.kind][1]

    def interval(self, level=0.95):
        """``(lower, upper)``, each ``(p,)``: the confidence interval of every
        coefficient at ``level`` (Student's t with ``dof`` degrees of freedom)."""
        from scipy.stats import t as student
        half = student.ppf(0.5 + level / 2.0, self.dof) * self.se if self.dof > 0 else np.inf
        return self.coef - half, self.coef + half

    def predict(self, x):
        """The law at ``x`` (for the geometric law, ``t`` itself, not its log)."""
        y = design(self.kind, x) @ self.coef
        return np.exp(y) if self.kind == "geometric" else y

    def gamma(self, level=0.95):
        """Geometric law: ``(γ, γ_low, γ_high)``."""
        if self.kind != "geometric":
            raise ValueError(f"gamma: only the geometric law has a growth factor, not {self.kind!r}")
        lo, hi = self.interval(level)
        return float(np.exp(self.coef[1])), float(np.exp(lo[1])), float(np.exp(hi[1]))


def design(kind, x):
    """Design matrix ``X`` ``(n, p)`` of a law at abscissae ``x`` ``(n,)``."""
    x = np.asarray(x, float)
    if kind == "linear" or kind == "geometric":
        return np.stack([np.ones_like(x), x], axis=1)
    if kind == "quadratic":
        return np.stack([np.ones_like(x), x, x * x], axis=1)
    raise ValueError(f"kind: expected one of {sorted(LAWS)}, got {kind!r}")


def fit(kind, x, y):
    """Fit the law ``kind`` to the points ``(x, y)`` (``(n,)`` each; points with
    a non-finite value, and for the geometric law non-positive ``y``, are
    left out). Raises ``ValueError`` with fewer points than coefficients."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x, y: expected two (n,) arrays, got {x.shape} and {y.shape}")
    ok = np.isfinite(x) & np.isfinite(y)
    if kind == "geometric":
        ok &= y > 0
    x, y = x[ok], y[ok]
    X = design(kind, x)
    n, p = X.shape
    if n < p:
        raise ValueError(f"x, y: {kind} law has {p} coefficients, got {n} usable points")
    target = np.log(y) if kind == "geometric" else y
    coef, *_ = np.linalg.lstsq(X, target, rcond=None)
    resid = target - X @ coef
    dof = n - p
    s2 = float(resid @ resid) / dof if dof > 0 else np.nan
    cov = s2 * np.linalg.inv(X.T @ X)
    return Fit(kind, coef, np.sqrt(np.diag(cov)), dof, float(np.sqrt(np.mean(resid ** 2))), x)
