"""The equality solve of ``track_gen.racing``'s box QP, one env per thread, in float64.

``_masked_solve`` solves, for one primal-dual active-set pass, the periodic pentadiagonal
normal matrix of a Gauss-Newton step with the active rows and columns made identity and
the active offsets moved to the right-hand side, by a cyclic ``L D L^T`` factor: one sweep
reads the masked entries straight from the unmasked bands and the active flags, factors
the band and the two tail rows and runs the forward substitution (independent chains side
by side, no square roots, the division's chain kept short); a second runs the backward
substitution.

``_active_set`` runs the primal-dual active-set passes of one box QP over that solve;
``_normal_matrix`` assembles ``J^T J`` and ``J^T r`` of three-entry cyclic rows and
``_clipped_step`` clips a step into the box: the pieces both objectives of
``racing_line`` share.
"""

from __future__ import annotations

import warp as wp

from ..device import _init_warp

_init_warp()

_F64 = wp.float64
_TINY = wp.constant(wp.float64(1.0e-300))


@wp.func
def _wrap(i: int, n: int) -> int:
    """``i mod n`` for ``-n <= i < 2n`` (no integer division)."""
    if i < 0:
        return i + n
    if i >= n:
        return i - n
    return i


@wp.func
def _md(dd: wp.array(dtype=wp.float64), act: wp.array(dtype=wp.int32), j: int) -> wp.float64:
    """Diagonal entry ``j`` of the masked normal matrix (1 on an active row)."""
    if act[j] != 0:
        return _F64(1.0)
    return dd[j]


@wp.func
def _moff(
    band: wp.array(dtype=wp.float64), act: wp.array(dtype=wp.int32), j: int, q: int
) -> wp.float64:
    """Entry ``band[j]`` (row ``j``, column ``q``) of the masked normal matrix (0 when either
    is active)."""
    if act[j] != 0 or act[q] != 0:
        return _F64(0.0)
    return band[j]


@wp.func
def _rhs(
    ee: wp.array(dtype=wp.float64),
    ff: wp.array(dtype=wp.float64),
    gg: wp.array(dtype=wp.float64),
    act: wp.array(dtype=wp.int32),
    cand: wp.array(dtype=wp.float64),
    base: int,
    n: int,
    i: int,
) -> wp.float64:
    """Right-hand side ``i`` of the masked system: the fixed value on an active row, else
    ``-g_i`` less the fixed neighbours' terms (``cand`` is 0 at the free points)."""
    j = base + i
    if act[j] != 0:
        return cand[j]
    jm1 = base + _wrap(i - 1, n)
    jm2 = base + _wrap(i - 2, n)
    jp1 = base + _wrap(i + 1, n)
    jp2 = base + _wrap(i + 2, n)
    return (
        -gg[j] - ee[j] * cand[jp1] - ee[jm1] * cand[jm1] - ff[j] * cand[jp2] - ff[jm2] * cand[jm2]
    )


@wp.func
def _masked_solve(
    dd: wp.array(dtype=wp.float64),
    ee: wp.array(dtype=wp.float64),
    ff: wp.array(dtype=wp.float64),
    gg: wp.array(dtype=wp.float64),
    act: wp.array(dtype=wp.int32),
    cand: wp.array(dtype=wp.float64),
    idg: wp.array(dtype=wp.float64),
    b1: wp.array(dtype=wp.float64),
    b2: wp.array(dtype=wp.float64),
    tail: wp.array(dtype=wp.float64),
    x: wp.array(dtype=wp.float64),
    base: int,
    n: int,
):
    """Solves the box QP's equality system for the active set ``act`` into ``x``: the
    cyclic pentadiagonal normal matrix (diagonal ``dd``, ``ee[i] = A[i, i+1]``,
    ``ff[i] = A[i, i+2]``, indices mod n) with the active rows and columns made identity,
    the active values (``cand``) moved to the right-hand side.

    By ``M = L D L^T`` (``L`` unit lower triangular): ``1 / D`` in ``idg`` (rows ``< n-2``),
    ``L[i, i-1]`` in ``b1``, ``L[i, i-2]`` in ``b2``, and the two full tail rows ``n-2``,
    ``n-1`` of ``L`` in ``tail`` (their diagonal entries ``1 / D``). One sweep builds the
    masked entries, factors the band and both tail rows and runs the forward substitution
    (independent chains side by side); a second runs the backward one."""
    t0 = 2 * base
    t1 = 2 * base + n
    r0 = n - 2
    r1 = n - 1
    jr0 = base + r0
    jr1 = base + r1
    zero = _F64(0.0)
    u1p = zero  # L[i-1, i-2] D[i-2]
    id1 = zero  # 1 / D[i-1]
    id2 = zero  # 1 / D[i-2]
    a01 = zero  # L[n-2, i-1], L[n-2, i-2]
    a02 = zero
    a11 = zero  # L[n-1, i-1], L[n-1, i-2]
    a12 = zero
    y1 = zero  # y[i-1], y[i-2]
    y2 = zero
    s0 = zero  # sum L[n-2, k] y[k], sum L[n-1, k] y[k]
    s1 = zero
    d0 = _md(dd, act, jr0)
    d1 = _md(dd, act, jr1)
    cross = _moff(ee, act, jr0, jr1)  # M[n-1, n-2] less sum L[n-1, k] L[n-2, k] D[k]
    ap1 = act[base + n - 1]  # act[i-1], act[i-2]
    ap2 = act[base + n - 2]
    for i in range(n - 2):
        j = base + i
        ai = act[j]
        l2 = zero
        u2 = zero
        l1 = zero
        u1 = zero
        if i >= 2:
            if ai == 0 and ap2 == 0:
                u2 = ff[j - 2]
            l2 = u2 * id2
        if i >= 1:
            if ai == 0 and ap1 == 0:
                u1 = ee[j - 1]
            u1 = u1 - l2 * u1p
            l1 = u1 * id1
        # D[i] = M[i, i] - L[i, i-1]^2 D[i-1] - L[i, i-2]^2 D[i-2], with u1^2 / D[i-1] off
        # the chain through the division
        mii = _F64(1.0)
        rhs = cand[j]
        if ai == 0:
            mii = dd[j]
            jm1 = j - 1
            jm2 = j - 2
            if i < 2:
                jm2 += n
                if i < 1:
                    jm1 += n
            rhs = rhs - gg[j] - ee[j] * cand[j + 1] - ee[jm1] * cand[jm1]
            rhs = rhs - ff[j] * cand[j + 2] - ff[jm2] * cand[jm2]
        idj = _F64(1.0) / wp.max(mii - l2 * u2 - (u1 * u1) * id1, _TINY)
        idg[j] = idj
        b1[j] = l1
        b2[j] = l2
        y = rhs - l1 * y1 - l2 * y2
        x[j] = y
        ap2 = ap1
        ap1 = ai
        # the tail rows' entries M[n-2, i], M[n-1, i]: the wrap at columns 0, 1 and the
        # band at columns n-4, n-3
        m0 = zero
        m1 = zero
        if i == 0:
            m0 = _moff(ff, act, jr0, j)
            m1 = _moff(ee, act, jr1, j)
        elif i == 1:
            m1 = _moff(ff, act, jr1, j)
        elif i == n - 4:
            m0 = _moff(ff, act, j, jr0)
        elif i == n - 3:
            m0 = _moff(ee, act, j, jr0)
            m1 = _moff(ff, act, j, jr1)
        v0 = m0 - a01 * u1 - a02 * u2
        v1 = m1 - a11 * u1 - a12 * u2
        w0 = v0 * idj
        w1 = v1 * idj
        tail[t0 + i] = w0
        tail[t1 + i] = w1
        d0 -= w0 * v0
        d1 -= w1 * v1
        cross -= w1 * v0
        s0 += w0 * y
        s1 += w1 * y
        a02 = a01
        a01 = w0
        a12 = a11
        a11 = w1
        u1p = u1
        id2 = id1
        id1 = idj
        y2 = y1
        y1 = y
    i0 = _F64(1.0) / wp.max(d0, _TINY)
    lx = cross * i0
    i1 = _F64(1.0) / wp.max(d1 - lx * cross, _TINY)
    yk = _rhs(ee, ff, gg, act, cand, base, n, r0) - s0
    yl = _rhs(ee, ff, gg, act, cand, base, n, r1) - s1 - lx * yk
    # backward: D L^T x = y
    xl = yl * i1
    xk = yk * i0 - lx * xl
    x[jr1] = xl
    x[jr0] = xk
    x1 = zero
    x2 = zero
    for ii in range(n - 2):
        i = n - 3 - ii
        j = base + i
        t = x[j] * idg[j] - tail[t0 + i] * xk - tail[t1 + i] * xl
        if i + 1 < n - 2:
            t -= b1[j + 1] * x1
        if i + 2 < n - 2:
            t -= b2[j + 2] * x2
        x[j] = t
        x2 = x1
        x1 = t


@wp.func
def _active_set(
    dd: wp.array(dtype=wp.float64),
    ee: wp.array(dtype=wp.float64),
    ff: wp.array(dtype=wp.float64),
    gg: wp.array(dtype=wp.float64),
    idd: wp.array(dtype=wp.float64),
    lo: wp.array(dtype=wp.float64),
    hi: wp.array(dtype=wp.float64),
    al: wp.array(dtype=wp.float64),
    st: wp.array(dtype=wp.float64),
    act: wp.array(dtype=wp.int32),
    cand: wp.array(dtype=wp.float64),
    ib0: wp.array(dtype=wp.float64),
    b1: wp.array(dtype=wp.float64),
    b2: wp.array(dtype=wp.float64),
    tail: wp.array(dtype=wp.float64),
    base: int,
    n: int,
    inner: int,
) -> int:
    """At most ``inner`` primal-dual active-set passes on the box QP ``min 1/2 s^T A s +
    g^T s`` over ``lo - al <= s <= hi - al`` (``A`` in ``dd``, ``ee``, ``ff``, ``1 / dd`` in
    ``idd``, ``g`` in ``gg``) from ``st``; the step left in ``st``. Returns 1 when a pass
    found the active set of the last solve again (the step solves the box QP), else 0."""
    # primal-dual active set on 1/2 s^T A s + g^T s, lo - al <= s <= hi - al
    for pit in range(inner):
        changed = int(0)  # noqa: UP018 (a dynamic variable in Warp)
        for k in range(n):
            j = base + k
            jm1 = j - 1
            jm2 = j - 2
            jp1 = j + 1
            jp2 = j + 2
            if k < 2:
                jm2 += n
                if k < 1:
                    jm1 += n
            if k >= n - 2:
                jp2 -= n
                if k >= n - 1:
                    jp1 -= n
            mu = (
                dd[j] * st[j]
                + ee[j] * st[jp1]
                + ee[jm1] * st[jm1]
                + ff[j] * st[jp2]
                + ff[jm2] * st[jm2]
                + gg[j]
            )
            t = st[j] - mu * idd[j]
            a = int(0)  # noqa: UP018 (a dynamic variable in Warp)
            c = _F64(0.0)
            sl = lo[j] - al[j]
            sh = hi[j] - al[j]
            if t < sl:
                a = -1
                c = sl
            if t > sh:
                a = 1
                c = sh
            if a != act[j]:
                changed = 1
            act[j] = a
            cand[j] = c
        # the same active set as the last pass: its solve gives the same step (the
        # right-hand side depends on the set alone), so the remaining passes would too
        if pit > 0 and changed == 0:
            return 1
        _masked_solve(dd, ee, ff, gg, act, cand, ib0, b1, b2, tail, st, base, n)
    return 0


@wp.func
def _normal_matrix(
    res: wp.array(dtype=wp.float64),
    jm: wp.array(dtype=wp.float64),
    j0: wp.array(dtype=wp.float64),
    jp: wp.array(dtype=wp.float64),
    dd: wp.array(dtype=wp.float64),
    ee: wp.array(dtype=wp.float64),
    ff: wp.array(dtype=wp.float64),
    gg: wp.array(dtype=wp.float64),
    base: int,
    n: int,
) -> wp.float64:
    """``J^T J`` of the cyclic three-entry rows ``(jm, j0, jp)`` as its diagonal ``dd`` and
    first and second off-diagonals ``ee``, ``ff``, and ``J^T res`` in ``gg``; returns the
    sum of the diagonal."""
    total = _F64(0.0)
    for k in range(n):
        j = base + k
        km = base + _wrap(k - 1, n)
        kp = base + _wrap(k + 1, n)
        dd[j] = jp[km] * jp[km] + j0[j] * j0[j] + jm[kp] * jm[kp]
        ee[j] = j0[j] * jp[j] + jm[kp] * j0[kp]
        ff[j] = jm[kp] * jp[kp]
        gg[j] = jp[km] * res[km] + j0[j] * res[j] + jm[kp] * res[kp]
        total += dd[j]
    return total


@wp.func
def _clipped_step(
    al: wp.array(dtype=wp.float64),
    st: wp.array(dtype=wp.float64),
    lo: wp.array(dtype=wp.float64),
    hi: wp.array(dtype=wp.float64),
    cand: wp.array(dtype=wp.float64),
    base: int,
    n: int,
):
    """``cand = clip(al + st, lo, hi)`` over one env's offsets."""
    for k in range(n):
        j = base + k
        cand[j] = wp.min(wp.max(al[j] + st[j], lo[j]), hi[j])
