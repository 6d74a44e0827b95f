"""OpenDRIVE 1.6: one closed road (its own predecessor and successor) with a driving lane
each side of its reference line, the centerline."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np

from ...errors import ExportError
from ._fit import fit_closed, fit_linear
from ._track import Track


def _num(v: float) -> str:
    return repr(float(v))


def sample_s(pieces, xy: np.ndarray) -> np.ndarray:
    """``(N + 1,)`` s of each point along the fitted reference line: a piece's length spread
    over its points in proportion to the chords between them."""
    N = len(xy)
    pts = np.concatenate([xy, xy[:1]])
    s = np.zeros(N + 1)
    s0 = 0.0
    for p in pieces:
        chords = np.linalg.norm(np.diff(pts[p.first : p.last + 1], axis=0), axis=1)
        cum = np.concatenate([[0.0], np.cumsum(chords)])
        s[p.first : p.last + 1] = s0 + p.length * cum / max(cum[-1], 1e-300)
        s0 += p.length
    return s


def opendrive_xml(track: Track, tolerance: float = 0.01) -> bytes:
    """Returns the ``.xodr`` document of a track.

    Units and frame: metres and radians, the track's x east / y north frame as OpenDRIVE's
    inertial frame (no geo reference); the road runs in the direction of travel, lane 1 on
    its left, lane -1 on its right (both ``driving``); ``elevationProfile`` from z when the
    track has heights. Tolerance: every centerline point lies within ``tolerance`` metres of
    the reference line (pieces of ``line``, ``arc`` and ``paramPoly3`` with ``pRange
    normalized``), and every width and height within ``tolerance`` of its linear
    ``width`` / ``elevation`` polynomials at the points' s (spread along each piece in
    proportion to the chords).

    Raises:
        ExportError: a tolerance not > 0.

    Example:
        >>> import xml.etree.ElementTree as ET
        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track, opendrive_xml
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> road = ET.fromstring(opendrive_xml(oval)).find("road")
        >>> round(float(road.get("length")), 2)  # the 16 sides of the polygon
        96.26
        >>> [g[0].tag for g in road.find("planView")][:3], len(road.find("planView"))
        (['line', 'line', 'line'], 16)
        >>> [lane.get("id") for lane in road.iter("lane")]
        ['1', '0', '-1']
    """
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not tolerance > 0:
        raise ExportError(f"opendrive tolerance: expected metres > 0, got {tolerance!r}")
    if not math.isfinite(tolerance):
        raise ExportError(f"opendrive tolerance: expected metres > 0, got {tolerance!r}")
    pieces = fit_closed(track.xy, track.tangents(), float(tolerance))
    s = sample_s(pieces, track.xy)
    length = float(s[-1])
    lb, rb = track.boundaries()
    pts = np.concatenate([lb, rb])
    root = ET.Element("OpenDRIVE")
    ET.SubElement(
        root,
        "header",
        revMajor="1",
        revMinor="6",
        name=track.stem,
        version="1.00",
        north=_num(pts[:, 1].max()),
        south=_num(pts[:, 1].min()),
        east=_num(pts[:, 0].max()),
        west=_num(pts[:, 0].min()),
        vendor="procgen_nb",
    )
    road = ET.SubElement(root, "road", name=track.stem, length=_num(length), id="1", junction="-1")
    link = ET.SubElement(road, "link")
    ET.SubElement(link, "predecessor", elementType="road", elementId="1", contactPoint="end")
    ET.SubElement(link, "successor", elementType="road", elementId="1", contactPoint="start")
    ET.SubElement(road, "type", s="0.0", type="rural")
    plan = ET.SubElement(road, "planView")
    s0 = 0.0
    for p in pieces:
        g = ET.SubElement(
            plan,
            "geometry",
            s=_num(s0),
            x=_num(p.x),
            y=_num(p.y),
            hdg=_num(p.hdg),
            length=_num(p.length),
        )
        if p.kind == "line":
            ET.SubElement(g, "line")
        elif p.kind == "arc":
            ET.SubElement(g, "arc", curvature=_num(p.curvature))
        else:
            ET.SubElement(
                g,
                "paramPoly3",
                aU=_num(p.u[0]),
                bU=_num(p.u[1]),
                cU=_num(p.u[2]),
                dU=_num(p.u[3]),
                aV=_num(p.v[0]),
                bV=_num(p.v[1]),
                cV=_num(p.v[2]),
                dV=_num(p.v[3]),
                pRange="normalized",
            )
        s0 += p.length
    elev = ET.SubElement(road, "elevationProfile")
    z = track.z if track.z is not None else np.zeros(len(track.xy))
    for s_at, a, b in fit_linear(s, np.concatenate([z, z[:1]]), float(tolerance)):
        ET.SubElement(elev, "elevation", s=_num(s_at), a=_num(a), b=_num(b), c="0.0", d="0.0")
    ET.SubElement(road, "lateralProfile")
    lanes = ET.SubElement(road, "lanes")
    sec = ET.SubElement(lanes, "laneSection", s="0.0")
    for side, lane_id, w in (("left", "1", track.left), ("right", "-1", track.right)):
        grp = ET.SubElement(sec, side)
        lane = ET.SubElement(grp, "lane", id=lane_id, type="driving", level="false")
        for s_at, a, b in fit_linear(s, np.concatenate([w, w[:1]]), float(tolerance)):
            ET.SubElement(lane, "width", sOffset=_num(s_at), a=_num(a), b=_num(b), c="0.0", d="0.0")
        ET.SubElement(
            lane,
            "roadMark",
            sOffset="0.0",
            type="solid",
            weight="standard",
            color="standard",
            width="0.12",
        )
        if side == "left":
            center = ET.SubElement(sec, "center")
            ET.SubElement(center, "lane", id="0", type="none", level="false")
    # OpenDRIVE orders left, center, right inside a laneSection
    sec[:] = sorted(sec, key=lambda el: ("left", "center", "right").index(el.tag))
    ET.indent(root)
    return (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        + ET.tostring(root, encoding="unicode").encode()
        + b"\n"
    )


def render(track: Track, tolerance: float = 0.01) -> dict[str, bytes]:
    """``<stem>.xodr``: ``opendrive_xml``.

    Example:
        >>> import tempfile
        >>> import numpy as np
        >>> from procgen_nb.track_gen import export
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = export.Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> with tempfile.TemporaryDirectory() as out:
        ...     entry = export.opendrive(oval, out)
        >>> entry["tracks"][0]["files"]
        ['track_env0.xodr']
    """
    return {f"{track.stem}.xodr": opendrive_xml(track, tolerance)}


__all__ = ["opendrive_xml", "render", "sample_s"]
