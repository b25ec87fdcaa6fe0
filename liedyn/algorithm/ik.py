"""Inverse kinematics: joint positions that put a frame at a target pose, by
damped least squares with an adaptive damping (Levenberg–Marquardt), a
bounded step and the model's joint limits.

Glossary
--------
==========  ===========  ====================================================
``X(q)``    (4, 4)       the frame's pose (:func:`liedyn.frame_pose`)
``X*``      (4, 4)       the target pose
``e``       (6,)         ``log(X⁻¹ X*)`` (:func:`liedyn.se3.log`): the twist,
                         in the frame's own axes, that carries ``X`` to ``X*``
                         in unit time; ``(ω, v)``, radians and metres
``J``       (6, n)       the frame's local Jacobian, joint columns
                         (:func:`liedyn.frame_jacobian`, ``reference="local"``)
``λ``                    damping
==========  ===========  ====================================================

One iteration: ``Δq = (Jᵀ J + λ² I)⁻¹ Jᵀ e`` over the joints free to move
(a joint at a limit whose step points out of range is held and the step
recomputed without it), computed from the singular values of ``J`` as
``Δq = Σ σᵢ/(σᵢ² + λ²) vᵢ uᵢᵀ e``: with ``λ`` near ``LAMBDA_MIN`` the matrix
``Jᵀ J + λ² I`` of a rank-deficient ``J`` (more joints than six, a stretched or
folded arm) is singular in floating point, the singular values are not, and a
direction with ``σᵢ = 0`` simply gets no step. The step is scaled so that no joint moves more than
``max_step``; the trial ``q + Δq`` is projected onto the limits. A trial that
lowers ``‖e‖`` is accepted and ``λ`` halved (towards Gauss–Newton); otherwise
``λ`` grows fourfold and the step is recomputed. Hence ``‖e‖`` never
increases, so the last iterate is the closest one seen, steps stay bounded at
singular configurations, and an unreachable target ends at a local minimum of
``‖e‖²`` with ``status="out_of_reach"`` and the remaining ``distance`` (m) and
``angle`` (rad) between the frame and the target.

Near the solution ``log(X(q + Δq)⁻¹ X*) = e − J Δq + O(|Δq|², |e| |Δq|)``, and
the ``|e| |Δq|`` term is ``½ ad_e e = 0`` to first order, so with ``λ → 0``
the iteration converges quadratically.

A floating base does not move: the base stays at ``base_pose`` and only the
joints are solved for.
"""

import numpy as np

from ..spatial import se3
from .._checks import as_array, check_pose, check_scalar
from .frames import frame_arg, pose_and_jacobian
from ..multibody.model import check_model
from ..multibody.results import _freeze, _frozen_setattr

__all__ = ["InverseKinematicsResult", "inverse_kinematics"]

# Damping is kept within [LAMBDA_MIN, LAMBDA_MAX]: below, σ/(σ² + λ²) is 1/σ
# to rounding for every singular value σ ≥ 1e-4, so the step is Gauss–Newton's;
# above, the step is shorter than 1e-16 of the gradient and nothing changes.
LAMBDA_MIN, LAMBDA_MAX = 1e-12, 1e8


class InverseKinematicsResult:
    """Outcome of :func:`inverse_kinematics`.

    Attributes
    ----------
    q : (n,)
        Joint positions at the end, within the joint limits.
    converged : bool
        ``error_norm ≤ tol``.
    status : str
        ``"converged"``; ``"out_of_reach"``: no step lowers the error any more,
        ``q`` is a local minimum of ``‖e‖`` within the joint limits above
        ``tol``: the target is beyond the workspace or the joint limits, or
        out of reach from this initial guess (a local minimum of a reachable
        target; try other guesses);
        ``"max_iterations"``: the error was still falling when the iterations
        ran out. In every case ``q`` is the iterate with the smallest error.
    distance : float
        ``‖p* − p(q)‖``: how far the frame's origin is from the target's (m).
    angle : float
        Rotation angle from the frame's orientation to the target's (rad),
        ``‖ω‖`` of ``e``.
    iterations : int
        Iterations run (each solves for one step and evaluates trials).
    error : (6,)
        ``e = log(X(q)⁻¹ X*)`` at ``q``, ``(ω, v)`` in the frame's axes.
    error_norm : float
        ``‖e‖``.
    history : (iterations+1,)
        ``‖e‖`` before the first iteration and after each; non-increasing.
    """

    __slots__ = ("q", "converged", "status", "distance", "angle", "iterations", "error",
                 "error_norm", "history")
    __setattr__ = _frozen_setattr

    def __init__(self, q, status, distance, error, history):
        _freeze(self, q=q, converged=status == "converged", status=status,
                distance=float(distance), angle=float(np.linalg.norm(error[:3])),
                iterations=len(history) - 1, error=error, error_norm=float(history[-1]),
                history=np.asarray(history))

    def __repr__(self):
        return (f"InverseKinematicsResult(status={self.status!r}, iterations={self.iterations}, "
                f"error_norm={self.error_norm:.3e}, distance={self.distance:.3e} m, "
                f"angle={self.angle:.3e} rad)")


def _step(J, e, lam, free):
    """Damped least-squares step over the ``free`` joints,
    ``Σ σᵢ/(σᵢ² + λ²) vᵢ uᵢᵀ e`` from the SVD of their columns: finite for
    any ``J``, of any rank."""
    dq = np.zeros(J.shape[1])
    if np.any(free):
        U, s, Vt = np.linalg.svd(J[:, free], full_matrices=False)
        dq[free] = Vt.T @ (s / (s * s + lam * lam) * (U.T @ e))
    return dq


def inverse_kinematics(model, base_pose, q, frame, target, *, tol=1e-10, max_iterations=200,
                       max_step=0.5, damping=1e-3):
    """Joint positions that put ``frame`` at ``target`` (damped least squares).

    Parameters
    ----------
    model : Model
    base_pose : (4, 4) or None
        Base pose, held fixed (``None``: ``model.home_pose``).
    q : (n,)
        Initial guess; projected onto the joint limits first.
    frame : str | int
        Frame name or index.
    target : (4, 4)
        Target pose of the frame in the world.
    tol : float > 0, keyword
        Converged when ``‖log(X⁻¹ X*)‖ ≤ tol`` (radians and metres). A
        ``tol`` below the rounding of the poses (a few 1e-16 times their size)
        cannot be met: the solver stops with ``status="out_of_reach"`` and a
        ``distance`` and ``angle`` of that rounding.
    max_iterations : int ≥ 0, keyword
    max_step : float > 0, keyword
        Largest change of any joint in one iteration (rad or m).
    damping : float > 0, keyword
        Initial damping ``λ``; adapted within ``[1e-12, 1e8]``.

    Returns
    -------
    InverseKinematicsResult
        The iterate closest to the target and its ``status``. A target the
        search cannot get closer to is not an error: it ends with
        ``status="out_of_reach"`` and the remaining ``distance`` and
        ``angle``. That is out of reach of the robot (beyond the workspace or
        the joint limits) or of this local search from ``q`` (a local minimum
        of the error, which other initial guesses may avoid): the solver
        cannot tell the two apart.

    Raises
    ------
    ValueError, TypeError
        A bad argument (the message names it); never for where the target is.

    Notes
    -----
    Joint limits are ``model.joint_lower`` / ``model.joint_upper`` (from the
    URDF or the joints' ``lower``/``upper``). The error norm mixes radians
    and metres; scale the model if one should weigh more.
    """
    check_model(model)
    n = model.n_joints
    f = frame_arg(model, frame)
    C0 = model.home_pose if base_pose is None else check_pose(base_pose, "base_pose")
    Xt = check_pose(target, "target")
    q = as_array(q, "q", shape=(n,))
    tol = check_scalar(tol, "tol", nonneg=True)
    if not tol > 0.0:
        raise ValueError("tol: must be positive")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) \
            or max_iterations < 0:
        raise ValueError(f"max_iterations: expected an int ≥ 0, got {max_iterations!r}")
    max_step = check_scalar(max_step, "max_step", nonneg=True)
    lam = check_scalar(damping, "damping", nonneg=True)
    if not (max_step > 0.0 and lam > 0.0):
        raise ValueError("max_step, damping: must be positive")
    lam = min(max(lam, LAMBDA_MIN), LAMBDA_MAX)
    lower, upper = model.joint_lower, model.joint_upper
    nb = 6 if model.floating_base else 0

    def evaluate(q):
        X, J = pose_and_jacobian(model, C0, q, f, "local")
        e = se3.log(se3.inv(X) @ Xt)
        return e, float(np.linalg.norm(e)), J[:, nb:], X

    q = np.clip(q, lower, upper)
    e, E, J, X = evaluate(q)
    history = [E]
    status = "max_iterations"
    for _ in range(max_iterations):
        if E <= tol:
            status = "converged"
            break
        accepted = False
        while lam <= LAMBDA_MAX:
            free = np.ones(n, dtype=bool)
            for _ in range(n + 1):                       # hold joints pushed past a limit
                dq = _step(J, e, lam, free)
                out = ((q <= lower) & (dq < 0.0)) | ((q >= upper) & (dq > 0.0))
                if not np.any(out & free):
                    break
                free &= ~out
            big = np.max(np.abs(dq))
            if big > max_step:
                dq *= max_step / big
            qt = np.clip(q + dq, lower, upper)
            et, Et, Jt, Xq = evaluate(qt)
            if Et < E:                                   # the best iterate so far
                q, e, E, J, X = qt, et, Et, Jt, Xq
                lam = max(lam * 0.5, LAMBDA_MIN)
                accepted = True
                break
            lam *= 4.0
        history.append(E)
        if not accepted:
            status = "out_of_reach"
            break
    else:
        if E <= tol:
            status = "converged"
    return InverseKinematicsResult(q, status, np.linalg.norm(Xt[:3, 3] - X[:3, 3]), e, history)
