"""Road surface meshes: Wavefront OBJ and glTF 2.0, walls optional."""

from __future__ import annotations

import base64
import io
import json
import math

import numpy as np

from ...errors import ExportError
from ...mesh import Mesh
from ._track import Track


def road_surface(track: Track) -> Mesh:
    """The road between the boundaries, as ``mesh.road_mesh`` lays it out (vertex 2i the
    left boundary at point i, 2i + 1 the right; quad i is triangles 2i, 2i + 1, facing up)
    but with the track's own widths per side and its heights (z 0 when flat).

    Example:
        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track, road_surface
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> road = road_surface(oval)
        >>> road.vertices.shape, road.faces.shape  # two vertices and two triangles a point
        ((32, 3), (32, 3))
        >>> road.vertices[:2, 0].tolist()  # x of point 0's left (inner) and right edges
        [18.0, 22.0]
    """
    lb, rb = track.boundaries()
    z = track.z if track.z is not None else np.zeros(len(track.xy))
    N = len(lb)
    v = np.zeros((2 * N, 3))
    v[0::2, :2], v[1::2, :2] = lb, rb
    v[0::2, 2] = v[1::2, 2] = z
    i = np.arange(N)
    j = (i + 1) % N
    f = np.empty((2 * N, 3), np.int32)
    f[0::2] = np.stack([2 * i, 2 * i + 1, 2 * j + 1], 1)
    f[1::2] = np.stack([2 * i, 2 * j + 1, 2 * j], 1)
    return Mesh(v, f)


def walls(track: Track, height: float) -> tuple[Mesh, Mesh]:
    """The left and right walls: a vertical strip ``height`` metres tall on each boundary
    (vertex 2i the foot at point i, 2i + 1 its top)."""
    lb, rb = track.boundaries()
    z = track.z if track.z is not None else np.zeros(len(track.xy))
    out = []
    N = len(lb)
    i = np.arange(N)
    j = (i + 1) % N
    for ring in (lb, rb):
        v = np.zeros((2 * N, 3))
        v[0::2, :2] = v[1::2, :2] = ring
        v[0::2, 2], v[1::2, 2] = z, z + height
        f = np.empty((2 * N, 3), np.int32)
        f[0::2] = np.stack([2 * i, 2 * j, 2 * j + 1], 1)
        f[1::2] = np.stack([2 * i, 2 * j + 1, 2 * i + 1], 1)
        out.append(Mesh(v, f))
    return out[0], out[1]


def _parts(track: Track, wall_height: float | None) -> list[tuple[str, Mesh]]:
    parts = [("road", road_surface(track))]
    if wall_height is not None:
        if isinstance(wall_height, bool) or not isinstance(wall_height, int | float):
            raise ExportError(f"wall_height: expected metres > 0 or None, got {wall_height!r}")
        if not (wall_height > 0 and math.isfinite(wall_height)):
            raise ExportError(f"wall_height: expected metres > 0 or None, got {wall_height!r}")
        left, right = walls(track, float(wall_height))
        parts += [("wall_left", left), ("wall_right", right)]
    return parts


def obj_text(track: Track, wall_height: float | None = None) -> bytes:
    """Returns a Wavefront OBJ of the road surface (object ``road``) and, with
    ``wall_height`` (metres), the walls (``wall_left``, ``wall_right``).

    Units and frame: metres, the track's frame as is (x east, y north, z up; set your
    importer to Z-up); faces counter-clockwise seen from above (the road) or from the road
    (the walls). Tolerance: vertices printed with 6 decimals (within 5e-7 m).

    Raises:
        ExportError: a wall height not > 0.

    Example:
        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track, obj_text
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> obj_text(oval).decode().splitlines()[1:4]
        ['o road', 'v 18.000000 0.000000 0.000000', 'v 22.000000 -0.000000 0.000000']
        >>> obj_text(oval, wall_height=1.0).decode().count("\\no ")  # road and two walls
        3
    """
    buf = io.StringIO()
    buf.write(f"# {track.stem}: road surface from procgen_nb (metres, Z up)\n")
    base = 1
    for name, m in _parts(track, wall_height):
        buf.write(f"o {name}\n")
        for x, y, z in m.vertices:
            buf.write(f"v {x:.6f} {y:.6f} {z:.6f}\n")
        for a, b, c in m.faces + base:
            buf.write(f"f {a} {b} {c}\n")
        base += len(m.vertices)
    return buf.getvalue().encode()


def gltf_json(track: Track, wall_height: float | None = None) -> bytes:
    """Returns a glTF 2.0 document (one ``.gltf``, its buffer embedded as a base64 data
    URI): one mesh and node per part (``road``, and ``wall_left`` / ``wall_right`` with
    ``wall_height``), float32 ``POSITION`` and uint32 indices.

    Units and frame: metres; glTF's frame is Y up, so a track point ``(x, y, z)`` is the
    glTF position ``(x, z, -y)``. Tolerance: float32 positions (relative 6e-8).

    Raises:
        ExportError: a wall height not > 0.

    Example:
        >>> import json
        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track, gltf_json
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> doc = json.loads(gltf_json(oval, wall_height=1.0))
        >>> [m["name"] for m in doc["meshes"]], doc["accessors"][0]["count"]
        (['road', 'wall_left', 'wall_right'], 32)
        >>> doc["accessors"][2]["max"][1]  # the walls' top: glTF's y is up
        1.0
    """
    blob = bytearray()
    views, accessors, meshes, nodes = [], [], [], []
    for name, m in _parts(track, wall_height):
        pos = np.ascontiguousarray(
            np.stack([m.vertices[:, 0], m.vertices[:, 2], -m.vertices[:, 1]], 1), np.float32
        )
        idx = np.ascontiguousarray(m.faces.reshape(-1), np.uint32)
        for arr, target in ((pos, 34962), (idx, 34963)):
            while len(blob) % 4:
                blob.append(0)
            views.append(
                {"buffer": 0, "byteOffset": len(blob), "byteLength": arr.nbytes, "target": target}
            )
            blob += arr.tobytes()
        accessors.append(
            {
                "bufferView": len(views) - 2,
                "componentType": 5126,
                "count": len(pos),
                "type": "VEC3",
                "min": pos.min(0).tolist(),
                "max": pos.max(0).tolist(),
            }
        )
        accessors.append(
            {
                "bufferView": len(views) - 1,
                "componentType": 5125,
                "count": len(idx),
                "type": "SCALAR",
            }
        )
        meshes.append(
            {
                "name": name,
                "primitives": [
                    {"attributes": {"POSITION": len(accessors) - 2}, "indices": len(accessors) - 1}
                ],
            }
        )
        nodes.append({"name": name, "mesh": len(meshes) - 1})
    doc = {
        "asset": {"version": "2.0", "generator": "procgen_nb"},
        "scene": 0,
        "scenes": [{"name": track.stem, "nodes": list(range(len(nodes)))}],
        "nodes": nodes,
        "meshes": meshes,
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [
            {
                "byteLength": len(blob),
                "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode(),
            }
        ],
    }
    return json.dumps(doc, indent=1).encode()


def render_obj(track: Track, wall_height: float | None = None) -> dict[str, bytes]:
    """``<stem>.obj``: ``obj_text``.

    Example:
        >>> import tempfile
        >>> import numpy as np
        >>> from procgen_nb.track_gen import export
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = export.Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> with tempfile.TemporaryDirectory() as out:
        ...     entry = export.obj(oval, out)
        >>> entry["tracks"][0]["files"]
        ['track_env0.obj']
    """
    return {f"{track.stem}.obj": obj_text(track, wall_height)}


def render_gltf(track: Track, wall_height: float | None = None) -> dict[str, bytes]:
    """``<stem>.gltf``: ``gltf_json``.

    Example:
        >>> import tempfile
        >>> import numpy as np
        >>> from procgen_nb.track_gen import export
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = export.Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> with tempfile.TemporaryDirectory() as out:
        ...     entry = export.gltf(oval, out, wall_height=1.0)
        >>> entry["tracks"][0]["files"]
        ['track_env0.gltf']
    """
    return {f"{track.stem}.gltf": gltf_json(track, wall_height)}


__all__ = ["gltf_json", "obj_text", "render_gltf", "render_obj", "road_surface", "walls"]
