"""ROS map_server occupancy map: a PNG and its YAML, with the centerline CSV beside them."""

from __future__ import annotations

import io
import math

import numpy as np
import yaml
from PIL import Image, ImageDraw

from ...errors import ExportError
from ._track import Track
from ._tumftm import tumftm_csv

#: libyaml's emitter when PyYAML has it (the pure-Python one is 10x slower)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

#: pixel values (mode trinary, negate 0): free, occupied, unknown
FREE, OCCUPIED, UNKNOWN = 254, 0, 205


def _check(name: str, value, lo: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > lo:
        raise ExportError(f"ros-map {name}: expected a number > {lo}, got {value!r}")
    if not math.isfinite(value):
        raise ExportError(f"ros-map {name}: expected a finite number, got {value!r}")
    return float(value)


def render(
    track: Track, resolution: float | None = None, wall: int = 2, margin: int = 10
) -> dict[str, bytes]:
    """Returns ``<stem>.png``, ``<stem>.yaml`` (map_server) and ``<stem>_centerline.csv``
    (TUMFTM order).

    Units and frame: ``resolution`` metres per pixel (None: the larger side of the track's
    box over 1000 pixels); the YAML's ``origin`` is the lower-left corner of the lower-left
    pixel, in metres, yaw 0; image rows run from north (top) to south. Pixels: the road
    (the band between the boundaries) free (254), walls ``wall`` pixels wide along both
    boundaries occupied (0), everything else unknown (205); ``mode: trinary``,
    ``negate: 0``, ``occupied_thresh: 0.65``, ``free_thresh: 0.196``.
    Tolerance: a wall pixel lies within ``wall / 2 + 1`` pixels of its boundary; a pixel
    whose centre is on the road farther than that from both boundaries is free.

    Raises:
        ExportError: a resolution not > 0, or a wall or margin not a small integer.

    Example:
        >>> import io, tempfile
        >>> import numpy as np, yaml
        >>> from PIL import Image
        >>> from procgen_nb.track_gen import export
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = export.Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> files = export.ros_map_files(oval, resolution=0.5)
        >>> sorted(files)
        ['track_env0.png', 'track_env0.yaml', 'track_env0_centerline.csv']
        >>> meta = yaml.safe_load(files["track_env0.yaml"])
        >>> meta["resolution"], meta["origin"]  # 10 pixels of margin past (-22, -12)
        (0.5, [-27.0, -17.0, 0.0])
        >>> png = Image.open(io.BytesIO(files["track_env0.png"]))
        >>> png.getpixel((93, 34)), png.getpixel((54, 34))  # (19.75, -0.25) on the road; the middle
        (254, 205)
        >>> with tempfile.TemporaryDirectory() as out:
        ...     entry = export.ros_map(oval, out, resolution=0.5)
        >>> entry["tracks"][0]["files"]
        ['track_env0.png', 'track_env0.yaml', 'track_env0_centerline.csv']
    """
    for name, v in (("wall", wall), ("margin", margin)):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 1000:
            raise ExportError(f"ros-map {name}: expected an integer in [1, 1000], got {v!r}")
    lb, rb = track.boundaries()
    pts = np.concatenate([lb, rb])
    lo, hi = pts.min(0), pts.max(0)
    if resolution is None:
        resolution = float(max(hi - lo)) / 1000.0
    res = _check("resolution", resolution, 0.0)
    W = int(math.ceil((hi[0] - lo[0]) / res)) + 2 * margin
    H = int(math.ceil((hi[1] - lo[1]) / res)) + 2 * margin
    if W * H > 1 << 28:
        raise ExportError(
            f"ros-map resolution: expected at most 2**28 pixels, got {W} x {H} at {res} m/px"
        )
    ox, oy = lo[0] - margin * res, lo[1] - margin * res

    def px(p: np.ndarray) -> list[tuple[float, float]]:
        # PIL's coordinates put pixel (c, r)'s centre at (c, r); world -> pixel centres
        u = (p[:, 0] - ox) / res - 0.5
        v = H - (p[:, 1] - oy) / res - 0.5
        return list(zip(u.tolist(), v.tolist(), strict=True))

    img = Image.new("L", (W, H), UNKNOWN)
    draw = ImageDraw.Draw(img)
    L, R = px(lb), px(rb)
    N = len(L)
    for i in range(N):
        j = (i + 1) % N
        draw.polygon([L[i], L[j], R[j], R[i]], fill=FREE)
    for ring in (L, R):
        draw.line([*ring, ring[0]], fill=OCCUPIED, width=wall, joint="curve")
    png = io.BytesIO()
    img.save(png, format="PNG", optimize=False)
    meta = {
        "image": f"{track.stem}.png",
        "resolution": res,
        "origin": [float(ox), float(oy), 0.0],
        "negate": 0,
        "occupied_thresh": 0.65,
        "free_thresh": 0.196,
        "mode": "trinary",
    }
    return {
        f"{track.stem}.png": png.getvalue(),
        f"{track.stem}.yaml": yaml.dump(Dumper=_DUMPER, data=meta, sort_keys=False).encode(),
        f"{track.stem}_centerline.csv": tumftm_csv(track),
    }


__all__ = ["FREE", "OCCUPIED", "UNKNOWN", "render"]
