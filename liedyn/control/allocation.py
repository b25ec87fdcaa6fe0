"""Rotor allocations: from a list of rotors to the matrix ``A`` that maps
rotor thrusts to the base's body-frame wrench, ``W^B = A f`` (SPEC §11.5,
§17.4), the checks the laws and the flat map make of it, and the compiled
maps between thrusts and spatial wrenches.

Glossary
--------
==================  ===============  ==========================================
``A``               (6, m)           allocation, rows (moment, force) in the
                                     base frame, one column per rotor
``p_i``, ``a_i``    (3,), (3,)       rotor position and unit thrust axis, base frame
``s_i``             ±1               spin: +1 turns counter-clockwise about ``a_i``
``κ_i``             m                drag ratio, reaction moment / thrust
``A⁺``              (m, 6)           minimum-norm right inverse ``Aᵀ (A Aᵀ)⁻¹``
==================  ===============  ==========================================
"""

from typing import NamedTuple

import numpy as np

from .._checks import as_array, check_scalar
from .._jit import Kernel, njit
from ..algorithm.frames import adjoint_jet
from ..multibody.workspace import binomials
from ..spatial.se3 import _Ad_T_into, _coad_acc

__all__ = ["Rotor", "rotor_allocation"]

# Singular values of an allocation below this times the largest are zero.
RANK_RTOL = 1e-10
# A fully actuated allocation must have its sixth singular value above this
# times the largest: the law divides by it.
CONDITION_MAX = 1e12


class Rotor(NamedTuple):
    """One rotor of a multirotor base, in the base body's frame.

    Attributes
    ----------
    position : (3,)
        Centre of the rotor disc ``p_i`` (m).
    axis : (3,)
        Direction ``a_i`` of its thrust (normalised by :func:`rotor_allocation`).
    spin : {+1, −1}
        ``+1``: the propeller turns counter-clockwise about ``a_i`` (right
        hand), so the air's drag turns the base clockwise, ``−κ f a_i``.
    drag_ratio : float
        ``κ_i ≥ 0`` (m), the reaction moment per unit thrust.
    """

    position: np.ndarray
    axis: np.ndarray
    spin: int
    drag_ratio: float


def rotor_allocation(rotors):
    """The allocation ``A`` of a list of rotors: column ``i`` is the body-frame
    wrench (moment about the base origin, force) of a unit thrust of rotor
    ``i``,

        A e_i = (p_i × a_i − s_i κ_i a_i,  a_i)        (SPEC §17.4)

    Parameters
    ----------
    rotors : sequence of :class:`Rotor`
        Any number ``m ≥ 1`` of rotors.

    Returns
    -------
    (6, m) float
        ``A``: ``W^B = A f`` for thrusts ``f`` ``(m,)``.

    Raises
    ------
    TypeError, ValueError
        Not a sequence of :class:`Rotor`, a zero or non-finite axis or
        position, a spin other than ±1, a negative drag ratio (each naming
        the rotor).
    """
    if isinstance(rotors, Rotor) or not hasattr(rotors, "__len__"):
        raise TypeError(f"rotors: expected a sequence of liedyn.control.Rotor, got "
                        f"{type(rotors).__name__}")
    if len(rotors) == 0:
        raise ValueError("rotors: expected at least one rotor, got none")
    A = np.empty((6, len(rotors)))
    for i, rotor in enumerate(rotors):
        if not isinstance(rotor, Rotor):
            raise TypeError(f"rotors[{i}]: expected a liedyn.control.Rotor, got "
                            f"{type(rotor).__name__}")
        p = as_array(rotor.position, f"rotors[{i}].position", shape=(3,))
        a = as_array(rotor.axis, f"rotors[{i}].axis", shape=(3,))
        norm = float(np.linalg.norm(a))
        if not norm > 0.0:
            raise ValueError(f"rotors[{i}].axis: expected a nonzero thrust direction, got {a}")
        a = a / norm
        if rotor.spin not in (1, -1):
            raise ValueError(f"rotors[{i}].spin: expected +1 (counter-clockwise about the axis) "
                             f"or -1, got {rotor.spin!r}")
        kappa = check_scalar(rotor.drag_ratio, f"rotors[{i}].drag_ratio")
        if kappa < 0.0:
            raise ValueError(f"rotors[{i}].drag_ratio: expected κ ≥ 0, got {kappa}")
        A[:3, i] = np.cross(p, a) - rotor.spin * kappa * a                  # SPEC §17.4
        A[3:, i] = a
    return A


def full_allocation(allocation):
    """``(A, A⁺)`` for a fully actuated base: ``A`` (6, m) of rank 6, any
    number of rotors ``m ≥ 6``; ``A⁺ = Aᵀ (A Aᵀ)⁻¹`` splits a wrench among
    redundant rotors by minimum norm (SPEC §11.5)."""
    A = as_array(allocation, "allocation", ndim=2)
    if A.shape[0] != 6:
        raise ValueError(f"allocation: expected a (6, m) matrix (rows: the body-frame wrench "
                         f"components (moment, force), one column per rotor), got shape "
                         f"{A.shape}")
    sv = np.linalg.svd(A, compute_uv=False)
    rank = int(np.linalg.matrix_rank(A))
    if rank < 6:
        raise ValueError(f"allocation: rank {rank} < 6, an under-actuated base (a quadrotor's "
                         f"allocation has rank 4); this law needs a fully actuated base "
                         f"whose rotors span all six wrench components, such as the paper's "
                         f"tilted hexarotor")
    if sv[0] > CONDITION_MAX * sv[5]:
        raise ValueError(f"allocation: expected an invertible (well-conditioned, rank 6) "
                         f"allocation, got one with condition number {sv[0] / sv[5]:.3g}")
    A = np.array(A, float)
    return A, A.T @ np.linalg.inv(A @ A.T)


def parallel_allocation(allocation):
    """``(A₄, A₄⁺)`` for a base whose thrusts are all along its ``e₃``:
    ``A`` (6, m) with zero force rows x and y and rank 4; ``A₄`` its rows
    (m_x, m_y, m_z, f_z) and ``A₄⁺`` the minimum-norm right inverse, which
    splits (moment, thrust) among the rotors (SPEC §17.4)."""
    A = as_array(allocation, "allocation", ndim=2)
    if A.shape[0] != 6 or A.shape[1] < 4:
        raise ValueError(f"allocation: expected a (6, m) matrix with m ≥ 4 rotors (rows: the "
                         f"body-frame wrench (moment, force), one column per rotor), got shape "
                         f"{A.shape}")
    scale = max(float(np.abs(A).max()), 1e-300)
    lateral = float(np.abs(A[3:5]).max())
    if lateral > RANK_RTOL * scale:
        raise ValueError(f"allocation: not a parallel-thrust base: its thrusts have body-frame "
                         f"x or y components (up to {lateral:.3g}); every rotor must push "
                         f"along the base's z axis")
    A4 = np.ascontiguousarray(A[[0, 1, 2, 5]], dtype=float)
    sv = np.linalg.svd(A4, compute_uv=False)
    rank = int(np.sum(sv > RANK_RTOL * max(sv[0], 1e-300)))
    if rank < 4 or sv[0] > CONDITION_MAX * sv[3]:
        raise ValueError(f"allocation: rank {rank} of the rows (m_x, m_y, m_z, f_z), expected 4 "
                         f"(well conditioned): the rotors cannot produce the thrust and the "
                         f"three moments independently")
    return A4, A4.T @ np.linalg.inv(A4 @ A4.T)


def range_complement(model, allocation):
    """``P⊥ = I − U Uᵀ`` (6, 6), ``U`` an orthonormal basis of the range of
    ``A``: the body-frame wrench components the rotors cannot produce."""
    if not model.floating_base:
        raise ValueError("allocation: the model's base is fixed; pass None")
    A = as_array(allocation, "allocation", ndim=2)
    if A.shape[0] != 6 or A.shape[1] < 1:
        raise ValueError(f"allocation: expected a (6, m) matrix (rows: the body-frame wrench "
                         f"(moment, force), one column per rotor), got shape {A.shape}")
    U, sv, _ = np.linalg.svd(A, full_matrices=False)
    U = U[:, sv > RANK_RTOL * max(sv[0], 1e-300)]
    return np.eye(6) - U @ U.T


# A commanded body wrench jet row is producible when its component outside
# the allocation's range is at most this times the row's largest entry.
PRODUCIBLE_RTOL = 1e-9
_WRENCH_NAMES = ("moment x", "moment y", "moment z", "force x", "force y", "force z")


def check_producible(outside, C, V, W, what):
    """Refuse spatial wrench jets ``W^(0..K)`` (world origin) whose body-frame
    jets ``W^B^(k) = Σ_a binom(k, a) (Ad_Cᵀ)^(a) W^(k−a)`` leave the range of
    the allocation (``outside`` from :func:`range_complement`)."""
    K = len(W) - 1
    G = adjoint_jet(C, V, K)
    B = binomials(K)
    for k in range(K + 1):
        Wb = sum(B[k, a] * G[a].T @ W[k - a] for a in range(k + 1))
        off = outside @ Wb
        i = int(np.argmax(np.abs(off)))
        if abs(off[i]) > PRODUCIBLE_RTOL * max(float(np.abs(Wb).max()), 1e-300):
            order = "" if k == 0 else f" (derivative {k})"
            raise ValueError(f"{what} a body-frame base wrench{order} the allocation cannot "
                             f"produce: {abs(off[i]):.3g} outside its range ({_WRENCH_NAMES[i]}), "
                             f"of a wrench up to {np.abs(Wb).max():.3g}")


@njit
def _thrust_wrench(C, A, f, W):
    """``W = Ad_C^{−T} A f = (R m + p × R fᴮ, R fᴮ)`` with ``(m, fᴮ) = A f``:
    the spatial wrench of the thrusts (SPEC §11.5)."""
    Wb = A @ f
    for i in range(3):
        W[i] = C[i, 0] * Wb[0] + C[i, 1] * Wb[1] + C[i, 2] * Wb[2]
        W[3 + i] = C[i, 0] * Wb[3] + C[i, 1] * Wb[4] + C[i, 2] * Wb[5]
    W[0] += C[1, 3] * W[5] - C[2, 3] * W[4]
    W[1] += C[2, 3] * W[3] - C[0, 3] * W[5]
    W[2] += C[0, 3] * W[4] - C[1, 3] * W[3]


@njit
def _thrust_command(C, V, W, A_pinv, f, T, u):
    """``u[:m] = f + T A⁺ Ẇᴮ``, ``Ẇᴮ = Ad_Cᵀ (Ẇ + ad_Vᵀ W)`` (SPEC §11.5), for
    the spatial base wrench jet ``W`` (≥2, 6) and the base twist ``V``."""
    D = W[1].copy()
    _coad_acc(1.0, V, W[0], D)
    Wb = np.empty(6)
    _Ad_T_into(C, D, Wb)
    df = A_pinv @ Wb
    for i in range(f.shape[0]):
        u[i] = f[i] + T * df[i]


THRUST_WRENCH = Kernel(_thrust_wrench)
THRUST_COMMAND = Kernel(_thrust_command)
