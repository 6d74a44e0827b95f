"""The kernels of ``track_gen.racing``: one thread per env each, in float64.

``_prep_k`` takes the centerline's normals and the offset bounds; ``_solve_k`` runs the
minimum-curvature solve (a fixed number of Gauss-Newton steps on the Menger curvatures of
the line, each a box-constrained QP on the periodic pentadiagonal normal matrix solved by at
most a fixed number of primal-dual active-set passes, each pass a cyclic banded ``L D L^T``
solve (``_racing_qp``), ending early when the active set repeats);
``_speed_k`` runs the forward-backward speed profile under the friction circle and writes
the outputs.

Per env the scratch rows are ``N`` float64 (the tail rows of the cyclic factor ``2N``), at
``e * N`` (``e * 2N``).
"""

from __future__ import annotations

import warp as wp

from ..device import _init_warp
from ._racing_qp import _active_set, _clipped_step, _normal_matrix, _wrap

_init_warp()

wp.set_module_options(
    {
        "cpu_compiler_flags": "-ffp-contract=off -mllvm=-inline-threshold=9000"
        " -mllvm=-inline-cold-callsite-threshold=3000"
    }
)

_F64 = wp.float64
_TINY = wp.constant(wp.float64(1.0e-300))
_NAN = wp.constant(wp.float64(float("nan")))


@wp.func
def _line(
    xy: wp.array(dtype=wp.vec2),
    nx: wp.array(dtype=wp.float64),
    ny: wp.array(dtype=wp.float64),
    al: wp.array(dtype=wp.float64),
    base: int,
    n: int,
    i: int,
) -> wp.vec2d:
    j = base + (i + n) % n
    p = xy[j]
    return wp.vec2d(_F64(p[0]) + al[j] * nx[j], _F64(p[1]) + al[j] * ny[j])


@wp.func
def _menger(q0: wp.vec2d, q1: wp.vec2d, q2: wp.vec2d) -> wp.float64:
    """Signed curvature of the circle through three points (+ turning left)."""
    a = q1 - q0
    b = q2 - q1
    c = q2 - q0
    g = wp.length(a) * wp.length(b) * wp.length(c)
    if g <= _F64(0.0):
        return _F64(0.0)
    return _F64(2.0) * (a[0] * b[1] - a[1] * b[0]) / g


@wp.func
def _menger_grad(q0: wp.vec2d, q1: wp.vec2d, q2: wp.vec2d):
    """``_menger`` and its gradients with respect to ``q0``, ``q1`` and ``q2`` (the same
    operations as ``_menger`` for the curvature, so the same bits)."""
    a = q1 - q0
    b = q2 - q1
    c = q2 - q0
    la = wp.length(a)
    lb = wp.length(b)
    lc = wp.length(c)
    g = la * lb * lc
    zero = wp.vec2d(_F64(0.0), _F64(0.0))
    if g <= _F64(0.0):
        return _F64(0.0), zero, zero, zero
    two = _F64(2.0)
    k = two * (a[0] * b[1] - a[1] * b[0]) / g
    fa = wp.vec2d(two * b[1], -two * b[0])
    fb = wp.vec2d(-two * a[1], two * a[0])
    ga = a / (la * la)
    gb = b / (lb * lb)
    gc = c / (lc * lc)
    return k, -fa / g + k * (ga + gc), (fa - fb) / g - k * (ga - gb), fb / g - k * (gb + gc)


@wp.func
def _points(
    xy: wp.array(dtype=wp.vec2),
    nx: wp.array(dtype=wp.float64),
    ny: wp.array(dtype=wp.float64),
    al: wp.array(dtype=wp.float64),
    px: wp.array(dtype=wp.float64),
    py: wp.array(dtype=wp.float64),
    base: int,
    n: int,
):
    """The line's points ``p_i + al_i n_i`` into ``px``, ``py``."""
    for i in range(n):
        j = base + i
        p = xy[j]
        px[j] = _F64(p[0]) + al[j] * nx[j]
        py[j] = _F64(p[1]) + al[j] * ny[j]


@wp.func
def _pt(px: wp.array(dtype=wp.float64), py: wp.array(dtype=wp.float64), j: int) -> wp.vec2d:
    return wp.vec2d(px[j], py[j])


@wp.func
def _objective(
    xy: wp.array(dtype=wp.vec2),
    nx: wp.array(dtype=wp.float64),
    ny: wp.array(dtype=wp.float64),
    al: wp.array(dtype=wp.float64),
    w: wp.array(dtype=wp.float64),
    px: wp.array(dtype=wp.float64),
    py: wp.array(dtype=wp.float64),
    base: int,
    n: int,
) -> wp.float64:
    """``sum w_i kappa_i^2`` of the line with offsets ``al`` (its points left in ``px``,
    ``py``)."""
    _points(xy, nx, ny, al, px, py, base, n)
    s = _F64(0.0)
    q0 = _pt(px, py, base + n - 1)
    q1 = _pt(px, py, base)
    for i in range(n):
        q2 = _pt(px, py, base + _wrap(i + 1, n))
        k = _menger(q0, q1, q2)
        s += w[base + i] * k * k
        q0 = q1
        q1 = q2
    return s


@wp.kernel
def _prep_k(
    xy: wp.array(dtype=wp.vec2),
    wl: wp.array(dtype=wp.float32),
    wr: wp.array(dtype=wp.float32),
    n: int,
    half: wp.float64,
    nx: wp.array(dtype=wp.float64),
    ny: wp.array(dtype=wp.float64),
    w: wp.array(dtype=wp.float64),
    lo: wp.array(dtype=wp.float64),
    hi: wp.array(dtype=wp.float64),
    al: wp.array(dtype=wp.float64),
    ok: wp.array(dtype=wp.int32),
):
    """Left normals of the centerline (central differences), weights (half the two
    segments), bounds ``[-(wr - half), wl - half]`` and ``al = 0``; ``ok[e] = 0`` for an env
    with a non-finite point or width, a repeated point, or bounds that do not fit."""
    e = wp.tid()
    base = e * n
    good = int(1)  # noqa: UP018 (a dynamic variable in Warp)
    for i in range(n):
        j = base + i
        pm = xy[base + (i - 1 + n) % n]
        p = xy[j]
        pp = xy[base + (i + 1) % n]
        t = wp.vec2d(_F64(pp[0]) - _F64(pm[0]), _F64(pp[1]) - _F64(pm[1]))
        lt = wp.length(t)
        a = wp.length(wp.vec2d(_F64(p[0]) - _F64(pm[0]), _F64(p[1]) - _F64(pm[1])))
        b = wp.length(wp.vec2d(_F64(pp[0]) - _F64(p[0]), _F64(pp[1]) - _F64(p[1])))
        lw = -(_F64(wr[j]) - half)
        hw = _F64(wl[j]) - half
        if not (lt > _F64(0.0) and a > _F64(0.0) and b > _F64(0.0) and lw <= hw):
            good = 0
        if not (wp.isfinite(lw) and wp.isfinite(hw) and wp.isfinite(lt)):
            good = 0
        if lt > _F64(0.0):
            nx[j] = -t[1] / lt
            ny[j] = t[0] / lt
        else:
            nx[j] = _F64(0.0)
            ny[j] = _F64(0.0)
        w[j] = _F64(0.5) * (a + b)
        lo[j] = lw
        hi[j] = hw
        al[j] = _F64(0.0)
    ok[e] = good


@wp.kernel
def _solve_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    outer: int,
    inner: int,
    nx: wp.array(dtype=wp.float64),
    ny: wp.array(dtype=wp.float64),
    w: wp.array(dtype=wp.float64),
    lo: wp.array(dtype=wp.float64),
    hi: wp.array(dtype=wp.float64),
    ok: wp.array(dtype=wp.int32),
    al: wp.array(dtype=wp.float64),
    cand: wp.array(dtype=wp.float64),
    res: wp.array(dtype=wp.float64),
    jm: wp.array(dtype=wp.float64),
    j0: wp.array(dtype=wp.float64),
    jp: wp.array(dtype=wp.float64),
    dd: wp.array(dtype=wp.float64),
    ee: wp.array(dtype=wp.float64),
    ff: wp.array(dtype=wp.float64),
    gg: wp.array(dtype=wp.float64),
    st: wp.array(dtype=wp.float64),
    idd: wp.array(dtype=wp.float64),
    act: wp.array(dtype=wp.int32),
    px: wp.array(dtype=wp.float64),
    py: wp.array(dtype=wp.float64),
    ib0: wp.array(dtype=wp.float64),
    b1: wp.array(dtype=wp.float64),
    b2: wp.array(dtype=wp.float64),
    tail: wp.array(dtype=wp.float64),
    objective: wp.array(dtype=wp.float64),
):
    """``outer`` damped Gauss-Newton steps on ``sum w_i kappa_i^2`` over the offsets in
    ``[lo, hi]``; each step's box QP takes ``inner`` primal-dual active-set passes. A step
    that does not lower the objective is refused and the damping raised."""
    e = wp.tid()
    base = e * n
    if ok[e] == 0:
        objective[e] = _NAN
        return
    lam = _F64(1.0e-3)
    fcur = _objective(xy, nx, ny, al, w, px, py, base, n)
    for _it in range(outer):
        _points(xy, nx, ny, al, px, py, base, n)
        # residuals sqrt(w) kappa and their Jacobian (three entries a row)
        for i in range(n):
            j = base + i
            jmm = base + _wrap(i - 1, n)
            jpp = base + _wrap(i + 1, n)
            s = wp.sqrt(w[j])
            k, d0, d1, d2 = _menger_grad(_pt(px, py, jmm), _pt(px, py, j), _pt(px, py, jpp))
            res[j] = s * k
            jm[j] = s * wp.dot(d0, wp.vec2d(nx[jmm], ny[jmm]))
            j0[j] = s * wp.dot(d1, wp.vec2d(nx[j], ny[j]))
            jp[j] = s * wp.dot(d2, wp.vec2d(nx[jpp], ny[jpp]))
        mean = _normal_matrix(res, jm, j0, jp, dd, ee, ff, gg, base, n)
        damp = lam * mean / _F64(n) + _F64(1.0e-12) * mean / _F64(n) + _TINY
        for k in range(n):
            dk = dd[base + k] + damp
            dd[base + k] = dk
            idd[base + k] = _F64(1.0) / dk
            st[base + k] = _F64(0.0)
        _active_set(
            dd, ee, ff, gg, idd, lo, hi, al, st, act, cand, ib0, b1, b2, tail, base, n, inner
        )
        _clipped_step(al, st, lo, hi, cand, base, n)
        fnew = _objective(xy, nx, ny, cand, w, px, py, base, n)
        if fnew < fcur:
            fcur = fnew
            for k in range(n):
                al[base + k] = cand[base + k]
            lam = wp.max(lam / _F64(3.0), _F64(1.0e-9))
        else:
            lam = lam * _F64(4.0)
    objective[e] = fcur


@wp.func
def _lin_objective(
    res: wp.array(dtype=wp.float64),
    jm: wp.array(dtype=wp.float64),
    j0: wp.array(dtype=wp.float64),
    jp: wp.array(dtype=wp.float64),
    al: wp.array(dtype=wp.float64),
    base: int,
    n: int,
) -> wp.float64:
    """``sum_i (res_i + jm_i al_{i-1} + j0_i al_i + jp_i al_{i+1})^2``: the linearised
    curvatures' squares at the offsets ``al``."""
    s = _F64(0.0)
    for i in range(n):
        j = base + i
        r = res[j] + jm[j] * al[base + _wrap(i - 1, n)] + j0[j] * al[j]
        r = r + jp[j] * al[base + _wrap(i + 1, n)]
        s += r * r
    return s


@wp.kernel
def _solve_lin_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    outer: int,
    inner: int,
    nx: wp.array(dtype=wp.float64),
    ny: wp.array(dtype=wp.float64),
    w: wp.array(dtype=wp.float64),
    lo: wp.array(dtype=wp.float64),
    hi: wp.array(dtype=wp.float64),
    ok: wp.array(dtype=wp.int32),
    al: wp.array(dtype=wp.float64),
    cand: wp.array(dtype=wp.float64),
    res: wp.array(dtype=wp.float64),
    jm: wp.array(dtype=wp.float64),
    j0: wp.array(dtype=wp.float64),
    jp: wp.array(dtype=wp.float64),
    dd: wp.array(dtype=wp.float64),
    ee: wp.array(dtype=wp.float64),
    ff: wp.array(dtype=wp.float64),
    gg: wp.array(dtype=wp.float64),
    st: wp.array(dtype=wp.float64),
    idd: wp.array(dtype=wp.float64),
    act: wp.array(dtype=wp.int32),
    px: wp.array(dtype=wp.float64),
    py: wp.array(dtype=wp.float64),
    ib0: wp.array(dtype=wp.float64),
    b1: wp.array(dtype=wp.float64),
    b2: wp.array(dtype=wp.float64),
    tail: wp.array(dtype=wp.float64),
    d0: wp.array(dtype=wp.float64),
    g0: wp.array(dtype=wp.float64),
    objective: wp.array(dtype=wp.float64),
):
    """TUMFTM's linearised minimum curvature: ``kappa_i = (x'_i y''_i - y'_i x''_i) /
    |p'_i|^3`` with the first derivatives (central differences) held at the centerline's
    and the second (``p_{i+1} - 2 p_i + p_{i-1}`` of the line) linear in the offsets:
    ``kappa = k + J alpha``. As TUMFTM's ``opt_min_curv`` (``quadprog`` minimises ``1/2
    a^T H a + f^T a``, handed the ``H``, ``f`` of ``|k + J a|^2``) it minimises
    ``|2 k + J alpha|^2``, one box QP (never re-linearised), solved by at most ``outer``
    proximal steps from zero of at most ``inner`` active-set passes each: undamped at first
    (the normal matrix can be ill-conditioned, 1e15 on unevenly spaced points, where a
    damping of the mean diagonal stalls), damped ten times more after a refused step, and
    ending at the first exact step that does not lower the quadratic (its minimum).
    ``objective`` gets the line's true ``sum w_i kappa_i^2``."""
    e = wp.tid()
    base = e * n
    if ok[e] == 0:
        objective[e] = _NAN
        return
    for i in range(n):
        j = base + i
        jmm = base + _wrap(i - 1, n)
        jpp = base + _wrap(i + 1, n)
        pm = xy[jmm]
        p = xy[j]
        pp = xy[jpp]
        d1x = _F64(0.5) * (_F64(pp[0]) - _F64(pm[0]))
        d1y = _F64(0.5) * (_F64(pp[1]) - _F64(pm[1]))
        d2x = _F64(pp[0]) - _F64(2.0) * _F64(p[0]) + _F64(pm[0])
        d2y = _F64(pp[1]) - _F64(2.0) * _F64(p[1]) + _F64(pm[1])
        sq = d1x * d1x + d1y * d1y
        iden = _F64(1.0) / (sq * wp.sqrt(sq))
        res[j] = _F64(2.0) * (d1x * d2y - d1y * d2x) * iden  # TUMFTM's 2 (docstring)
        jm[j] = (d1x * ny[jmm] - d1y * nx[jmm]) * iden
        j0[j] = _F64(-2.0) * (d1x * ny[j] - d1y * nx[j]) * iden
        jp[j] = (d1x * ny[jpp] - d1y * nx[jpp]) * iden
    # the normal matrix (undamped diagonal in d0) and the gradient at 0 (in g0)
    mean = _normal_matrix(res, jm, j0, jp, d0, ee, ff, g0, base, n) / _F64(n)
    for k in range(n):
        al[base + k] = _F64(0.0)
    lam = _F64(1.0e-12)
    fcur = _lin_objective(res, jm, j0, jp, al, base, n)
    # proximal steps on the one quadratic: each a box QP damped by lam (undamped active-set
    # passes can cycle: a refused step damps the next), a step kept when it lowers it
    for _it in range(outer):
        for k in range(n):
            j = base + k
            jm1 = base + _wrap(k - 1, n)
            jm2 = base + _wrap(k - 2, n)
            jp1 = base + _wrap(k + 1, n)
            jp2 = base + _wrap(k + 2, n)
            hx = d0[j] * al[j] + ee[j] * al[jp1] + ee[jm1] * al[jm1]
            hx = hx + ff[j] * al[jp2] + ff[jm2] * al[jm2]
            gg[j] = g0[j] + hx
            dk = d0[j] + lam * mean + _F64(1.0e-12) * mean + _TINY
            dd[j] = dk
            idd[j] = _F64(1.0) / dk
            st[j] = _F64(0.0)
        exact = _active_set(
            dd, ee, ff, gg, idd, lo, hi, al, st, act, cand, ib0, b1, b2, tail, base, n, inner
        )
        _clipped_step(al, st, lo, hi, cand, base, n)
        fnew = _lin_objective(res, jm, j0, jp, cand, base, n)
        if fnew < fcur:
            fcur = fnew
            for k in range(n):
                al[base + k] = cand[base + k]
            lam = wp.max(lam / _F64(3.0), _F64(1.0e-12))
        elif exact != 0:
            break  # the damped quadratic's own minimum does not lower it: al is the minimum
        else:
            lam = wp.max(lam, _F64(1.0e-8)) * _F64(10.0)
    objective[e] = _objective(xy, nx, ny, al, w, px, py, base, n)


@wp.func
def _reach(
    u0: wp.float64, ds: wp.float64, k0: wp.float64, k1: wp.float64, mg: wp.float64, amax: wp.float64
) -> wp.float64:
    """Largest squared speed at the end of a segment ``ds`` long entered at squared speed
    ``u0``: the longitudinal acceleration within ``a_max`` and, with the lateral one at
    either end (``u |kappa|``), within the friction circle ``mg``."""
    lat0 = u0 * wp.abs(k0)
    avail = wp.sqrt(wp.max(mg * mg - lat0 * lat0, _F64(0.0)))
    u = u0 + _F64(2.0) * ds * wp.min(amax, avail)
    c = _F64(4.0) * ds * ds * k1 * k1
    disc = (_F64(1.0) + c) * _F64(4.0) * ds * ds * mg * mg - c * u0 * u0
    if disc >= _F64(0.0):
        u = wp.min(u, (u0 + wp.sqrt(disc)) / (_F64(1.0) + c))
    # never below u0: a segment that cannot even be coasted is the other end's limit's (a
    # bound below u0 here would let the other pass's bound meet a speed this one did not
    # start from)
    return wp.max(u, u0)


@wp.kernel
def _speed_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    nx: wp.array(dtype=wp.float64),
    ny: wp.array(dtype=wp.float64),
    al: wp.array(dtype=wp.float64),
    ok: wp.array(dtype=wp.int32),
    scale: wp.float64,
    mg: wp.float64,
    vmax: wp.float64,
    amax: wp.float64,
    kap: wp.array(dtype=wp.float64),
    ds: wp.array(dtype=wp.float64),
    fw: wp.array(dtype=wp.float64),
    bw: wp.array(dtype=wp.float64),
    out_xy: wp.array(dtype=wp.vec2),
    out_speed: wp.array(dtype=wp.float32),
    out_kappa: wp.array(dtype=wp.float32),
    out_offset: wp.array(dtype=wp.float32),
    lap_time: wp.array(dtype=wp.float32),
    mean_speed: wp.array(dtype=wp.float32),
    throttle: wp.array(dtype=wp.float32),
    difficulty: wp.array(dtype=wp.float32),
):
    """Curvature, forward-backward speed profile (``v^2`` per point), outputs in metres
    (``scale`` metres per world unit) and the per-lap numbers; NaN for an env not ok."""
    e = wp.tid()
    base = e * n
    if ok[e] == 0:
        for i in range(n):
            j = base + i
            out_xy[j] = wp.vec2(wp.float32(_NAN), wp.float32(_NAN))
            out_speed[j] = wp.float32(_NAN)
            out_kappa[j] = wp.float32(_NAN)
            out_offset[j] = wp.float32(_NAN)
        lap_time[e] = wp.float32(_NAN)
        mean_speed[e] = wp.float32(_NAN)
        throttle[e] = wp.float32(_NAN)
        difficulty[e] = wp.float32(_NAN)
        return
    umax = vmax * vmax
    start = int(0)  # noqa: UP018 (a dynamic variable in Warp)
    best = umax
    for i in range(n):
        j = base + i
        q0 = _line(xy, nx, ny, al, base, n, i - 1) * scale
        q1 = _line(xy, nx, ny, al, base, n, i) * scale
        q2 = _line(xy, nx, ny, al, base, n, i + 1) * scale
        k = _menger(q0, q1, q2)
        kap[j] = k
        ds[j] = wp.length(q2 - q1)
        u = umax
        if wp.abs(k) > _F64(0.0):
            u = wp.min(umax, mg / wp.abs(k))
        fw[j] = u  # the limit first; the passes lower it
        bw[j] = u
        if u < best:
            best = u
            start = i
        out_xy[j] = wp.vec2(wp.float32(q1[0]), wp.float32(q1[1]))
        out_kappa[j] = wp.float32(k)
        out_offset[j] = wp.float32(al[j] * scale)
    for s in range(1, n):
        i = base + (start + s - 1) % n
        j = base + (start + s) % n
        fw[j] = wp.min(fw[j], _reach(fw[i], ds[i], kap[i], kap[j], mg, amax))
    for s in range(1, n):
        j = base + (start - s + n) % n
        i = base + (start - s + 1 + n) % n
        bw[j] = wp.min(bw[j], _reach(bw[i], ds[j], kap[i], kap[j], mg, amax))
    t = _F64(0.0)
    length = _F64(0.0)
    flat = _F64(0.0)
    for i in range(n):
        j = base + i
        fw[j] = wp.sqrt(wp.min(fw[j], bw[j]))
        out_speed[j] = wp.float32(fw[j])
    for i in range(n):
        j = base + i
        jn = base + (i + 1) % n
        v0 = fw[j]
        v1 = fw[jn]
        t += _F64(2.0) * ds[j] / (v0 + v1)
        length += ds[j]
        # flat out: at top speed, or accelerating at >= 95% of a_max
        if v0 >= vmax * _F64(0.9999) and v1 >= vmax * _F64(0.9999):
            flat += ds[j]
        elif v1 * v1 - v0 * v0 >= _F64(0.95) * _F64(2.0) * ds[j] * amax:
            flat += ds[j]
    lap_time[e] = wp.float32(t)
    mean_speed[e] = wp.float32(length / t)
    throttle[e] = wp.float32(flat / length)
    difficulty[e] = wp.float32(wp.max(_F64(0.0), _F64(1.0) - (length / vmax) / t))
