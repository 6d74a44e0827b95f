"""Racing lines: ``track_gen.racing_line`` for E tracks at once against references run here.

- NumPy/SciPy: the same algorithm a competent user would write with the array libraries
  (curvature, Jacobian and speed profile vectorised over the envs in NumPy; each
  active-set pass a ``scipy.sparse.linalg.spsolve`` of the periodic pentadiagonal system,
  env by env), timed on a subset of the envs and reported per track;
- TUMFTM's ``trajectory_planning_helpers`` (``calc_splines``, ``opt_min_curv``,
  ``create_raceline``, ``calc_head_curv_an``, ``calc_vel_profile``, ``calc_t_profile``),
  when installed (``pip install -e .[benchmark]`` and then ``pip install --no-deps
  trajectory-planning-helpers==0.79``: it pins ``quadprog==0.1.7``, whose wheel fails to
  import; the extra pins 0.1.13), one track at a time on a few tracks.

Prints tracks per second, the ratios (wall clock and CPU time: on a shared machine the
CPU-time ratio is the steadier one), and the lap-time and curvature-objective agreement
(``sum kappa^2 ds`` of each line, evaluated the same way in NumPy).

Why the lap times differ by 1-3%: the speed models agree (our speed profile on TUMFTM's
line gives their lap time within 0.2%); the lines do not. ``opt_min_curv`` minimises a
curvature linearised about the reference line (the spline's first derivatives held at the
centerline's), which pulls the line inwards: on a circle its line is the inner edge, the
shortest and slowest circle, where the true minimum-curvature line (ours, and the issue's
circle test) is the outer edge. ``racing_line(..., objective="linearised")`` solves that
linearised problem (central differences in place of their spline, and their objective as
``quadprog`` receives it: ``1/2 a^T H a + f^T a`` with the ``H``, ``f`` of ``|k + J a|^2``,
i.e. ``|2 k + J a|^2``); its lap times are printed against theirs too (measured: mean
+0.03%, max 0.24% on the 8 tracks). Our lines have the lower true ``sum kappa^2 ds`` and are a
few percent longer, so their laps are slower. ``--iqp`` runs TUMFTM's iterated QP
(``iqp_handler``, re-linearised about each solution) too: it moves the other way from ours.

    python benchmarks/racing_line.py [--envs 1024] [--points 256] [--ref-envs 16] [--tumftm 8]
    python benchmarks/racing_line.py --smoke     # tiny sizes (the test suite)

``main`` returns the figures as a dict (``benchmarks/report.py`` makes its table of them).
"""

from __future__ import annotations

import os

# one BLAS thread, set before NumPy loads it: TUMFTM's dense 256-point solves run fastest
# so (measured here: 320 ms/track of CPU with one thread, 990 ms with two threads that wait
# on each other); Warp's kernels do not use BLAS
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from procgen_nb.track_gen import VehicleParams, racing_line  # noqa: E402

G = 9.81


def tracks(E: int, N: int, seed: int = 0, R: float = 150.0) -> np.ndarray:
    """Smooth random closed tracks (a circle of radius R with random harmonics 2-4)."""
    rng = np.random.default_rng(seed)
    th = np.arange(N) * 2 * np.pi / N
    rad = np.full((E, N), R)
    for k in range(2, 5):
        rad += rng.normal(0, 0.12 * R / k, (E, 1)) * np.cos(k * th + rng.uniform(0, 6.3, (E, 1)))
    return np.stack([rad * np.cos(th), rad * np.sin(th)], -1)


# -- NumPy/SciPy reference ---------------------------------------------------------------
def _menger_jac(q, n):
    q0, q2 = np.roll(q, 1, 1), np.roll(q, -1, 1)
    a, b, c = q - q0, q2 - q, q2 - q0
    la, lb, lc = (np.linalg.norm(v, axis=-1) for v in (a, b, c))
    g = la * lb * lc
    k = 2 * (a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]) / g
    fa = 2 * np.stack([b[..., 1], -b[..., 0]], -1)
    fb = 2 * np.stack([-a[..., 1], a[..., 0]], -1)
    ga, gb, gc = a / (la**2)[..., None], b / (lb**2)[..., None], c / (lc**2)[..., None]
    g_ = g[..., None]
    d0 = -fa / g_ + k[..., None] * (ga + gc)
    d1 = (fa - fb) / g_ - k[..., None] * (ga - gb)
    d2 = fb / g_ - k[..., None] * (gb + gc)
    jm = np.sum(d0 * np.roll(n, 1, 1), -1)
    j0 = np.sum(d1 * n, -1)
    jp = np.sum(d2 * np.roll(n, -1, 1), -1)
    return k, jm, j0, jp


def numpy_racing_line(xy, wr, wl, veh, iterations=12, passes=8):
    """Returns (offsets [E, N], lap times [E]) by the algorithm of ``track_gen.racing``."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spl

    E, N, _ = xy.shape
    t = np.roll(xy, -1, 1) - np.roll(xy, 1, 1)
    t /= np.linalg.norm(t, axis=-1, keepdims=True)
    n = np.stack([-t[..., 1], t[..., 0]], -1)
    seg = np.linalg.norm(np.roll(xy, -1, 1) - xy, axis=-1)
    w = 0.5 * (seg + np.roll(seg, 1, 1))
    lo, hi = -(wr - veh.width / 2), wl - veh.width / 2
    al = np.zeros((E, N))

    def obj(al):
        k = _menger_jac(xy + al[..., None] * n, n)[0]
        return np.sum(w * k * k, -1)

    f = obj(al)
    lam = np.full(E, 1e-3)
    idx = np.arange(N)
    for _ in range(iterations):
        k, jm, j0, jp = _menger_jac(xy + al[..., None] * n, n)
        s = np.sqrt(w)
        res, jm, j0, jp = s * k, s * jm, s * j0, s * jp
        step = np.zeros((E, N))
        for e in range(E):
            J = sp.csr_matrix(
                (
                    np.concatenate([jm[e], j0[e], jp[e]]),
                    (np.tile(idx, 3), np.concatenate([(idx - 1) % N, idx, (idx + 1) % N])),
                ),
                shape=(N, N),
            )
            H = (J.T @ J).tocsr()
            g = J.T @ res[e]
            H = H + sp.identity(N) * (lam[e] * H.diagonal().mean() * (1 + 1e-9))
            d = H.diagonal()
            x = np.zeros(N)
            l_, h_ = lo[e] - al[e], hi[e] - al[e]
            for _p in range(passes):
                tt = x - (H @ x + g) / d
                act = np.where(tt < l_, -1, np.where(tt > h_, 1, 0))
                fixed = np.where(act < 0, l_, np.where(act > 0, h_, 0.0))
                free = act == 0
                rhs = np.where(free, -g - H @ (fixed * ~free), fixed)
                D = sp.diags(free.astype(float))
                M = D @ H @ D + sp.diags((~free).astype(float))
                x = spl.spsolve(M.tocsc(), rhs)
            step[e] = x
        cand = np.clip(al + step, lo, hi)
        fc = obj(cand)
        better = fc < f
        al[better], f[better] = cand[better], fc[better]
        lam = np.where(better, np.maximum(lam / 3, 1e-9), lam * 4)
    q = xy + al[..., None] * n
    return al, numpy_lap_time(q, veh)


def numpy_lap_time(q, veh):
    """Forward-backward speed profile from the slowest point (vectorised over envs)."""
    E, N, _ = q.shape
    mg, vmax, amax = veh.mu * veh.g, veh.v_max, veh.a_max
    k = np.abs(_menger_jac(q, np.zeros_like(q))[0])
    ds = np.linalg.norm(np.roll(q, -1, 1) - q, axis=-1)
    with np.errstate(divide="ignore"):
        lim = np.minimum(vmax**2, np.where(k > 0, mg / k, np.inf))
    start = np.argmin(lim, 1)
    rows = np.arange(E)

    def reach(u0, ds, k0, k1):
        u = u0 + 2 * ds * np.minimum(amax, np.sqrt(np.maximum(mg**2 - (u0 * k0) ** 2, 0)))
        c = 4 * ds * ds * k1 * k1
        disc = (1 + c) * 4 * ds * ds * mg * mg - c * u0 * u0
        cap = (u0 + np.sqrt(np.maximum(disc, 0))) / (1 + c)
        u = np.where(disc >= 0, np.minimum(u, cap), u)
        return np.maximum(u, u0)

    fw, bw = lim.copy(), lim.copy()
    for s in range(1, N):
        i, j = (start + s - 1) % N, (start + s) % N
        fw[rows, j] = np.minimum(
            fw[rows, j], reach(fw[rows, i], ds[rows, i], k[rows, i], k[rows, j])
        )
    for s in range(1, N):
        j, i = (start - s) % N, (start - s + 1) % N
        bw[rows, j] = np.minimum(
            bw[rows, j], reach(bw[rows, i], ds[rows, j], k[rows, i], k[rows, j])
        )
    v = np.sqrt(np.minimum(fw, bw))
    return np.sum(2 * ds / (v + np.roll(v, -1, 1)), 1)


def curvature_objective(q: np.ndarray) -> float:
    """``sum kappa^2 ds`` of a closed line ``[N, 2]`` (Menger curvature)."""
    k = _menger_jac(q[None], np.zeros((1,) + q.shape))[0][0]
    seg = np.linalg.norm(np.roll(q, -1, 0) - q, axis=1)
    return float(np.sum(k * k * 0.5 * (seg + np.roll(seg, 1))))


# -- TUMFTM ------------------------------------------------------------------------------
def tumftm(xy: np.ndarray, w: float, veh: VehicleParams):
    """One track: returns (lap time, raceline [M, 2], seconds)."""
    import trajectory_planning_helpers as tph

    t0 = time.perf_counter()
    N = len(xy)
    reftrack = np.column_stack([xy, np.full(N, w), np.full(N, w)])
    _, _, A, normvec = tph.calc_splines.calc_splines(path=np.vstack([xy, xy[:1]]))
    alpha, _ = tph.opt_min_curv.opt_min_curv(
        reftrack=reftrack,
        normvectors=normvec,
        A=A,
        kappa_bound=1.0,
        w_veh=veh.width,
        print_debug=False,
        closed=True,
    )
    h = float(np.mean(np.linalg.norm(np.roll(xy, -1, 0) - xy, axis=1)))
    line, _, cx, cy, inds, tv, _, _, el = tph.create_raceline.create_raceline(
        refline=xy, normvectors=normvec, alpha=alpha, stepsize_interp=h
    )
    _, kappa = tph.calc_head_curv_an.calc_head_curv_an(cx, cy, inds, tv)
    mg = veh.mu * veh.g
    ggv = np.array([[0.0, mg, mg], [veh.v_max * 1.01, mg, mg]])
    vx = tph.calc_vel_profile.calc_vel_profile(
        ax_max_machines=np.array([[0.0, veh.a_max], [veh.v_max * 1.01, veh.a_max]]),
        kappa=kappa,
        el_lengths=el,
        closed=True,
        drag_coeff=0.0,
        m_veh=1000.0,
        ggv=ggv,
        v_max=veh.v_max,
        dyn_model_exp=2.0,
    )
    vx_cl = np.append(vx, vx[0])  # closed: the first point again, as TUMFTM's main script
    lap = tph.calc_t_profile.calc_t_profile(vx_profile=vx_cl, el_lengths=el)[-1]
    return float(lap), line, time.perf_counter() - t0


def tumftm_iqp(xy: np.ndarray, w: float, veh: VehicleParams):
    """One track by TUMFTM's iterated QP (``iqp_handler``): returns (raceline, seconds)."""
    import trajectory_planning_helpers as tph

    t0 = time.perf_counter()
    N = len(xy)
    reftrack = np.column_stack([xy, np.full(N, w), np.full(N, w)])
    _, _, A, normvec = tph.calc_splines.calc_splines(path=np.vstack([xy, xy[:1]]))
    h = float(np.mean(np.linalg.norm(np.roll(xy, -1, 0) - xy, axis=1)))
    z = np.zeros(N)  # spline_len, psi, kappa, dkappa: handed back unless it iterates
    alpha, ref, nv = tph.iqp_handler.iqp_handler(
        reftrack=reftrack,
        normvectors=normvec,
        A=A,
        spline_len=z,
        psi=z,
        kappa=z,
        dkappa=z,
        kappa_bound=1.0,
        w_veh=veh.width,
        print_debug=False,
        plot_debug=False,
        stepsize_interp=h,
        iters_min=3,
        curv_error_allowed=0.01,
    )[:3]
    line = tph.create_raceline.create_raceline(
        refline=ref[:, :2], normvectors=nv, alpha=alpha, stepsize_interp=h
    )[0]
    return line, time.perf_counter() - t0


def _timed(fn):
    """(result, wall seconds, CPU seconds of this process: every thread)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def main(argv: list[str] | None = None) -> dict:
    """Runs the benchmark; returns its figures (tracks/s, ratios, agreements) by name."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--envs", type=int, default=1024)
    ap.add_argument("--points", type=int, default=256)
    ap.add_argument("--ref-envs", type=int, default=16)
    ap.add_argument("--tumftm", type=int, default=8)
    ap.add_argument("--iqp", action="store_true", help="TUMFTM's iterated QP too")
    ap.add_argument("--repeat", type=int, default=3, help="our runs; the fastest is kept")
    ap.add_argument("--device", default=None)
    ap.add_argument("--smoke", action="store_true", help="8 tracks of 32 points, 1 reference")
    args = ap.parse_args(argv)
    if args.smoke:
        args.envs, args.points, args.ref_envs, args.tumftm, args.repeat = 8, 32, 1, 1, 1
    E, N = args.envs, args.points
    rows: dict = {"sizes": f"E={E}, N={N}, best of {max(1, args.repeat)}", "E": E}
    w = 6.0
    veh = VehicleParams(mu=1.0, v_max=80.0, a_max=G, width=2.0)  # a_max = mu g: as TUMFTM's ggv
    xy = tracks(E, N)
    racing_line(xy[:2], w, w, veh, device=args.device).numpy()  # build and load the kernels
    ours = ours_cpu = float("inf")
    for _ in range(max(1, args.repeat)):

        def run():
            ln = racing_line(xy, w, w, veh, device=args.device)
            return ln, ln.lap_time.numpy()

        (line, lap), wall, cpu = _timed(run)
        ours, ours_cpu = min(ours, wall), min(ours_cpu, cpu)
    o = line.numpy()
    print(
        f"racing_line  E={E} N={N}: {ours:.3f} s, {E / ours:.1f} tracks/s "
        f"(CPU {ours_cpu:.3f} s, fastest of {max(1, args.repeat)})"
    )
    rows.update({"tracks/s": E / ours, "cpu s": ours_cpu, "threads": _threads(E, N, args)})
    lin_wall = lin_cpu = float("inf")
    for _ in range(max(1, args.repeat)):

        def run_lin():
            ln = racing_line(xy, w, w, veh, objective="linearised", device=args.device)
            return ln, ln.lap_time.numpy()

        (_, lap_lin), wall, cpu = _timed(run_lin)
        lin_wall, lin_cpu = min(lin_wall, wall), min(lin_cpu, cpu)
    print(
        f"racing_line  objective='linearised': {lin_wall:.3f} s, {E / lin_wall:.1f} tracks/s "
        f"(CPU {lin_cpu:.3f} s)"
    )
    rows.update({"linearised tracks/s": E / lin_wall, "linearised cpu s": lin_cpu})

    R = min(args.ref_envs, E)
    try:
        t0 = time.perf_counter()
        _, lap_np = numpy_racing_line(xy[:R], np.full((R, N), w), np.full((R, N), w), veh)
        per = (time.perf_counter() - t0) / R
        err = np.max(np.abs(lap_np / lap[:R] - 1))
        print(
            f"NumPy/SciPy  {R} envs: {per * 1e3:.1f} ms/track; ratio {per * E / ours:.1f}x; "
            f"lap time max rel diff {err:.2e}"
        )
        rows.update({"numpy ms/track": per * 1e3, "numpy lap rel": float(err), "numpy envs": R})
    except ImportError as exc:
        print(f"NumPy/SciPy reference skipped: {exc}")

    T = min(args.tumftm, E)
    if importlib.util.find_spec("trajectory_planning_helpers") is None:
        # the cached --no-deps folder of [tool.procgen_nb.racing] (what the tests install)
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from anchors import no_deps_folder

        folder, note = no_deps_folder(install=False, table="racing")
        if folder is None or importlib.util.find_spec("quadprog") is None:
            print(f"TUMFTM skipped ({note}): pip install -e .[benchmark] and then")
            print("  pip install --no-deps trajectory-planning-helpers==0.79")
            return rows
        sys.path.insert(0, str(folder))
    laps, secs, cpus, objs, same, longer, iqp = [], [], [], [], [], [], []
    for e in range(T):
        (lt, ln, _), s, c = _timed(lambda e=e: tumftm(xy[e], w, veh))
        ln = np.asarray(ln, np.float64)
        same.append(numpy_lap_time(ln[None], veh)[0] / lt - 1)
        laps.append(lt)
        secs.append(s)
        cpus.append(c)
        q = o["xy"][e].astype(np.float64)
        objs.append((curvature_objective(q), curvature_objective(ln)))
        length = lambda p: float(np.sum(np.linalg.norm(np.roll(p, -1, 0) - p, axis=1)))  # noqa: E731
        longer.append(length(q) / length(ln) - 1)
        if args.iqp:
            li = np.asarray(tumftm_iqp(xy[e], w, veh)[0], np.float64)
            iqp.append(numpy_lap_time(q[None], veh)[0] / numpy_lap_time(li[None], veh)[0] - 1)
    laps = np.array(laps)
    rel = laps / lap[:T] - 1
    per, per_cpu = float(np.mean(secs)), float(np.mean(cpus))
    ob = np.array(objs)
    print(
        f"TUMFTM       {T} tracks: {per * 1e3:.1f} ms/track; ratio {per * E / ours:.1f}x "
        f"(CPU time: {per_cpu * 1e3:.1f} ms/track; ratio {per_cpu * E / ours_cpu:.1f}x; "
        "goal 1000x)"
    )
    print(
        f"  lap time: ours/TUMFTM - 1 = mean {np.mean(-rel / (1 + rel)):+.3%}, "
        f"max |.| {np.max(np.abs(rel / (1 + rel))):.3%}"
    )
    rel_lin = lap_lin[:T] / laps - 1
    print(
        f"  lap time, objective='linearised': ours/TUMFTM - 1 = mean {np.mean(rel_lin):+.3%}, "
        f"max |.| {np.max(np.abs(rel_lin)):.3%} (goal 1%); TUMFTM ratio "
        f"{per * E / lin_wall:.1f}x (CPU time: {per_cpu * E / lin_cpu:.1f}x)"
    )
    rows.update(
        {
            "tumftm tracks": T,
            "tumftm ms/track": per * 1e3,
            "tumftm cpu ms/track": per_cpu * 1e3,
            "lap rel mean": float(np.mean(-rel / (1 + rel))),
            "lap rel max": float(np.max(np.abs(rel / (1 + rel)))),
            "linearised lap rel mean": float(np.mean(rel_lin)),
            "linearised lap rel max": float(np.max(np.abs(rel_lin))),
        }
    )
    print(
        f"  our speed profile on TUMFTM's line / their lap time - 1: mean {np.mean(same):+.3%}, "
        f"max |.| {np.max(np.abs(same)):.3%} (the speed models; the rest is the line)"
    )
    print(
        f"  sum kappa^2 ds: ours/TUMFTM = mean {np.mean(ob[:, 0] / ob[:, 1]):.4f} "
        f"(min {np.min(ob[:, 0] / ob[:, 1]):.4f}, max {np.max(ob[:, 0] / ob[:, 1]):.4f}); "
        f"line length ours/TUMFTM - 1: mean {np.mean(longer):+.2%}"
    )
    if iqp:
        print(
            f"  TUMFTM iterated QP: our lap / theirs - 1 (our speed profile on both): "
            f"mean {np.mean(iqp):+.3%}, max |.| {np.max(np.abs(iqp)):.3%}"
        )
    # the circle: TUMFTM's linearised objective takes the inner edge, the true one the outer
    th = np.arange(N) * 2 * np.pi / N
    R, wc = 50.0, 6.0
    r_fit = R + wc - veh.width / 2
    circ = np.stack([R * np.cos(th), R * np.sin(th)], -1)
    lt, ln, _ = tumftm(circ, wc, veh)
    mine = racing_line(circ[None], wc, wc, veh, device=args.device).numpy()
    r_them = float(np.mean(np.linalg.norm(np.asarray(ln), axis=1)))
    r_us = float(np.mean(np.linalg.norm(mine["xy"][0].astype(np.float64), axis=1)))
    ml = racing_line(circ[None], wc, wc, veh, objective="linearised", device=args.device)
    r_lin = float(np.mean(np.linalg.norm(ml.numpy()["xy"][0].astype(np.float64), axis=1)))
    print(
        f"  circle R={R:g}, {wc - veh.width / 2:g} m each side for the car: TUMFTM's line "
        f"r={r_them:.2f} m (lap {lt:.3f} s), ours r={r_us:.2f} m (lap "
        f"{float(mine['lap_time'][0]):.3f} s; the widest circle r={r_fit:g}: 2 pi r / "
        f"sqrt(mu g r) = {2 * np.pi * np.sqrt(r_fit / (veh.mu * G)):.3f} s); "
        f"objective='linearised' r={r_lin:.2f} m"
    )
    return rows


def _threads(E: int, N: int, args: argparse.Namespace) -> int:
    """The CPU threads a racing_line call of E envs of N points splits over (1 on a GPU)."""
    import warp as wp

    from procgen_nb.track_gen._threads import threads_for

    return 1 if wp.get_device(args.device).is_cuda else threads_for(E, N)


if __name__ == "__main__":
    main()
