"""Time derivatives of spatial inertia, momentum and gravity wrench (SPEC §4).

A rigid body's spatial inertia in world coordinates is fixed by its mass
``m``, its world centre of mass ``c`` and its rotational inertia about the CoM
in world axes ``I_c = R J Rᵀ``::

    M = [[I_c + m ĉ ĉᵀ, m ĉ], [m ĉᵀ, m I₃]]

With the body's spatial twist ``V = (ω, v)`` a material point ``x`` moves as
``ẋ = ω × x + v`` and the body axes as ``Ṙ = ω̂ R``, so, by Leibniz,

    c^(k)   = Σ_{a=0}^{k-1} binom(k-1, a) ω^(a) × c^(k-1-a) + v^(k-1)
    I_c^(k) = Σ_{a=0}^{k-1} binom(k-1, a) ( ω̂^(a) I_c^(k-1-a) − I_c^(k-1-a) ω̂^(a) )

The momentum ``Π = M V`` is ``(h, p)`` with linear momentum ``p = m ċ`` and
moment about the world origin ``h = I_c ω + c × p``, hence

    p^(k) = m c^(k+1)
    h^(k) = Σ_{a=0}^{k} binom(k, a) ( I_c^(a) ω^(k-a) + c^(a) × p^(k-a) )

and the gravity wrench ``M G`` with ``G = (0, g⃗)`` is ``(c × m g⃗, m g⃗)``, whose
derivatives are ``(c^(k) × m g⃗, 0)`` for ``k ≥ 1``. This replaces the 6×6
recursion ``M^(k) = −Σ binom(k−1, a)(M^(k-1-a) ad_{V^(a)} + ad_{V^(a)}ᵀ M^(k-1-a))``
by 3-vector and 3×3 work; both give the same numbers to round-off
(``tests/test_inertia.py``).

Array layout: ``c`` is ``(K, N, 3)`` and ``Ic`` is ``(K, N, 3, 3)``, derivative
first. ``I_c^(k)`` stays symmetric: ``ω̂ I − I ω̂ = X + Xᵀ`` with ``X = ω̂ I``.
"""

from .._jit import njit


@njit(inline=True)
def _com_init(j, C, body_com, c):
    """``c_j = R com + p`` from the body pose ``C_j``."""
    com = body_com[j]
    for i in range(3):
        c[0, j, i] = C[j, i, 3] + C[j, i, 0] * com[0] + C[j, i, 1] * com[1] + C[j, i, 2] * com[2]


@njit(inline=True)
def _com_inertia_init(j, C, body_com, body_rot_inertia, c, Ic):
    """``c_j = R com + p`` and ``I_c = R J Rᵀ`` from the body pose ``C_j``."""
    R = C[j, :3, :3]
    J = body_rot_inertia[j]
    _com_init(j, C, body_com, c)
    # T = J Rᵀ, then the six entries of the symmetric R T
    t00 = J[0, 0] * R[0, 0] + J[0, 1] * R[0, 1] + J[0, 2] * R[0, 2]
    t10 = J[1, 0] * R[0, 0] + J[1, 1] * R[0, 1] + J[1, 2] * R[0, 2]
    t20 = J[2, 0] * R[0, 0] + J[2, 1] * R[0, 1] + J[2, 2] * R[0, 2]
    t01 = J[0, 0] * R[1, 0] + J[0, 1] * R[1, 1] + J[0, 2] * R[1, 2]
    t11 = J[1, 0] * R[1, 0] + J[1, 1] * R[1, 1] + J[1, 2] * R[1, 2]
    t21 = J[2, 0] * R[1, 0] + J[2, 1] * R[1, 1] + J[2, 2] * R[1, 2]
    t02 = J[0, 0] * R[2, 0] + J[0, 1] * R[2, 1] + J[0, 2] * R[2, 2]
    t12 = J[1, 0] * R[2, 0] + J[1, 1] * R[2, 1] + J[1, 2] * R[2, 2]
    t22 = J[2, 0] * R[2, 0] + J[2, 1] * R[2, 1] + J[2, 2] * R[2, 2]
    I = Ic[0, j]
    I[0, 0] = R[0, 0] * t00 + R[0, 1] * t10 + R[0, 2] * t20
    I[1, 1] = R[1, 0] * t01 + R[1, 1] * t11 + R[1, 2] * t21
    I[2, 2] = R[2, 0] * t02 + R[2, 1] * t12 + R[2, 2] * t22
    I[0, 1] = I[1, 0] = R[0, 0] * t01 + R[0, 1] * t11 + R[0, 2] * t21
    I[0, 2] = I[2, 0] = R[0, 0] * t02 + R[0, 1] * t12 + R[0, 2] * t22
    I[1, 2] = I[2, 1] = R[1, 0] * t02 + R[1, 1] * t12 + R[1, 2] * t22


@njit(inline=True)
def _com_order(j, k, V, binom, c):
    """``c_j^(k)``, k ≥ 1, from ``c^(0..k-1)`` and ``V^(0..k-1)``."""
    x = V[k - 1, j, 3]
    y = V[k - 1, j, 4]
    z = V[k - 1, j, 5]
    for a in range(k):
        b = binom[k - 1, a]
        w = V[a, j]
        cj = c[k - 1 - a, j]
        x += b * (w[1] * cj[2] - w[2] * cj[1])
        y += b * (w[2] * cj[0] - w[0] * cj[2])
        z += b * (w[0] * cj[1] - w[1] * cj[0])
    c[k, j, 0] = x
    c[k, j, 1] = y
    c[k, j, 2] = z


@njit(inline=True)
def _rot_inertia_order(j, k, V, binom, Ic):
    """``I_c,j^(k)``, k ≥ 1, from ``I_c^(0..k-1)`` and ``ω^(0..k-1)``.

    ``ω̂ I − I ω̂ = X + Xᵀ`` with ``X = ω̂ I``, so only the six entries of the
    symmetric result are accumulated.
    """
    xx = yy = zz = xy = xz = yz = 0.0
    for a in range(k):
        b = binom[k - 1, a]
        w0, w1, w2 = b * V[a, j, 0], b * V[a, j, 1], b * V[a, j, 2]    # binom(k−1, a) ω^(a)
        I = Ic[k - 1 - a, j]
        i00, i01, i02, i11, i12, i22 = I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2]
        # X[row, col] = (ω × I[:, col])_row, I symmetric
        X00 = w1 * i02 - w2 * i01
        X11 = w2 * i01 - w0 * i12
        X22 = w0 * i12 - w1 * i02
        X01 = w1 * i12 - w2 * i11
        X10 = w2 * i00 - w0 * i02
        X02 = w1 * i22 - w2 * i12
        X20 = w0 * i01 - w1 * i00
        X12 = w2 * i02 - w0 * i22
        X21 = w0 * i11 - w1 * i01
        xx += 2.0 * X00
        yy += 2.0 * X11
        zz += 2.0 * X22
        xy += X01 + X10
        xz += X02 + X20
        yz += X12 + X21
    out = Ic[k, j]
    out[0, 0] = xx
    out[1, 1] = yy
    out[2, 2] = zz
    out[0, 1] = out[1, 0] = xy
    out[0, 2] = out[2, 0] = xz
    out[1, 2] = out[2, 1] = yz


@njit(inline=True)
def _momentum_order(j, k, m, V, c, Ic, binom, Pi):
    """``Π_j^(k) = (h^(k), p^(k))``; needs ``c^(0..k+1)``, ``I_c^(0..k)``, ``V^(0..k)``."""
    lx = ly = lz = 0.0       # Σ binom I_c^(a) ω^(k−a)
    gx = gy = gz = 0.0       # Σ binom c^(a) × c^(k−a+1); times m: Σ binom c^(a) × p^(k−a)
    for a in range(k + 1):
        b = binom[k, a]
        I = Ic[a, j]
        w = V[k - a, j]
        cj = c[a, j]
        d = c[k - a + 1, j]
        w0, w1, w2 = b * w[0], b * w[1], b * w[2]
        lx += I[0, 0] * w0 + I[0, 1] * w1 + I[0, 2] * w2
        ly += I[0, 1] * w0 + I[1, 1] * w1 + I[1, 2] * w2       # I_c is symmetric
        lz += I[0, 2] * w0 + I[1, 2] * w1 + I[2, 2] * w2
        gx += b * (cj[1] * d[2] - cj[2] * d[1])
        gy += b * (cj[2] * d[0] - cj[0] * d[2])
        gz += b * (cj[0] * d[1] - cj[1] * d[0])
    Pi[k, j, 0] = lx + m * gx
    Pi[k, j, 1] = ly + m * gy
    Pi[k, j, 2] = lz + m * gz
    for i in range(3):
        Pi[k, j, 3 + i] = m * c[k + 1, j, i]


@njit(inline=True)
def _gravity_wrench_acc(s, j, k, m, g, c, out):
    """``out += s · M_j^(k) G = s · (c^(k) × m g⃗, m g⃗ [k = 0])``."""
    x = c[k, j]
    out[0] += s * m * (x[1] * g[2] - x[2] * g[1])
    out[1] += s * m * (x[2] * g[0] - x[0] * g[2])
    out[2] += s * m * (x[0] * g[1] - x[1] * g[0])
    if k == 0:
        for i in range(3):
            out[3 + i] += s * m * g[i]


@njit(inline=True)
def _spatial_inertia_into(j, m, c, Ic, out):
    """Dense ``M_j = [[I_c + m ĉ ĉᵀ, m ĉ], [m ĉᵀ, m I₃]]`` (order 0 only)."""
    _spatial_inertia_at(m, c[0, j, 0], c[0, j, 1], c[0, j, 2], Ic[0, j], out)


@njit(inline=True)
def _spatial_inertia_at(m, x, y, z, I, out):
    """Dense spatial inertia of mass ``m`` with its centre of mass at ``c =
    (x, y, z)`` and rotational inertia ``I`` about it (world axes)."""
    # ĉ ĉᵀ = |c|² I − c cᵀ
    cc = x * x + y * y + z * z
    cj = (x, y, z)
    for a in range(3):
        for b in range(3):
            out[a, b] = I[a, b] + m * ((cc if a == b else 0.0) - cj[a] * cj[b])
            out[3 + a, 3 + b] = m if a == b else 0.0
    out[0, 3], out[0, 4], out[0, 5] = 0.0, -m * z, m * y
    out[1, 3], out[1, 4], out[1, 5] = m * z, 0.0, -m * x
    out[2, 3], out[2, 4], out[2, 5] = -m * y, m * x, 0.0
    for a in range(3):
        for b in range(3):
            out[3 + b, a] = out[a, 3 + b]


@njit(inline=True)
def _body_mass_jets(j, K, model, C, V, binom, c, Ic):
    """``c^(0..K+1)`` and ``I_c^(0..K)`` of body j, enough for ``Π^(0..K)``."""
    _com_inertia_init(j, C, model.body_com, model.body_rot_inertia, c, Ic)
    for k in range(1, K + 2):
        _com_order(j, k, V, binom, c)
    for k in range(1, K + 1):
        _rot_inertia_order(j, k, V, binom, Ic)
