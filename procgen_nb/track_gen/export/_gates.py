"""Gate courses: a YAML of the gates and lsy_drone_racing's TOML track layout."""

from __future__ import annotations

import io
import math

import yaml

from ...errors import ExportError
from ._track import Track

#: libyaml's emitter when PyYAML has it (the pure-Python one is 10x slower)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _check(track: Track) -> None:
    if track.gates is None:
        raise ExportError(
            f"gates: expected a Course (a track with gates), got env {track.env} "
            f"({track.stem}) without gates"
        )


def gates_yaml(track: Track) -> bytes:
    """Returns the gate course as YAML: ``gates`` in order, each ``index``, ``position``
    ``[x, y, z]``, ``heading`` (radians from +x, the direction of travel through it) and
    ``size`` (metres); ``start`` the centerline's point 0 and its heading.

    Units and frame: metres and radians, the track's frame (z up). Tolerance: values as
    YAML floats (exact float64 of the float32 gates, times the scale).

    Raises:
        ExportError: a track without gates.

    Example:
        >>> import yaml
        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track, gates_yaml
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> oval.gates = np.array([[20.0, 0.0, 1.0], [-20.0, 0.0, 1.5]])
        >>> oval.gate_heading, oval.gate_size = np.array([np.pi / 2, -np.pi / 2]), np.ones(2)
        >>> doc = yaml.safe_load(gates_yaml(oval))
        >>> [(g["index"], g["position"]) for g in doc["gates"]]
        [(0, [20.0, 0.0, 1.0]), (1, [-20.0, 0.0, 1.5])]
    """
    _check(track)
    t = track.tangents()[0]
    doc = {
        "name": track.stem,
        "start": {
            "position": [float(track.xy[0, 0]), float(track.xy[0, 1]), 0.0],
            "heading": math.atan2(t[1], t[0]),
        },
        "gates": [
            {
                "index": k,
                "position": [float(v) for v in track.gates[k]],
                "heading": float(track.gate_heading[k]),
                "size": float(track.gate_size[k]),
            }
            for k in range(len(track.gates))
        ],
    }
    return yaml.dump(Dumper=_DUMPER, data=doc, sort_keys=False).encode()


def lsy_toml(track: Track) -> bytes:
    """Returns the ``[env.track]`` layout of lsy_drone_racing's level files: one
    ``[[env.track.gates]]`` table per gate in order (``pos = [x, y, z]``, ``rpy = [0, 0,
    heading]``), no obstacles, one ``[[env.track.drones]]`` at the centerline's point 0.

    Units, frame and tolerance as ``gates_yaml`` (floats printed with ``repr``: exact).

    Raises:
        ExportError: a track without gates.

    Example:
        >>> import tomllib
        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track, lsy_toml
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> oval.gates = np.array([[20.0, 0.0, 1.0], [-20.0, 0.0, 1.5]])
        >>> oval.gate_heading, oval.gate_size = np.array([np.pi / 2, -np.pi / 2]), np.ones(2)
        >>> level = tomllib.loads(lsy_toml(oval).decode())
        >>> [g["pos"] for g in level["env"]["track"]["gates"]]
        [[20.0, 0.0, 1.0], [-20.0, 0.0, 1.5]]
        >>> level["env"]["track"]["drones"][0]["pos"]  # at the centerline's point 0
        [20.0, 0.0, 0.0]
    """
    _check(track)
    t = track.tangents()[0]
    buf = io.StringIO()
    buf.write(f"# {track.stem}: gates in the order they are flown\n[env.track]\n\n")
    for k in range(len(track.gates)):
        x, y, z = (float(v) for v in track.gates[k])
        h = float(track.gate_heading[k])
        buf.write(f"[[env.track.gates]]\npos = [{x!r}, {y!r}, {z!r}]\nrpy = [0.0, 0.0, {h!r}]\n\n")
    x0, y0 = (float(v) for v in track.xy[0])
    yaw = math.atan2(t[1], t[0])
    buf.write(
        f"[[env.track.drones]]\npos = [{x0!r}, {y0!r}, 0.0]\nrpy = [0.0, 0.0, {yaw!r}]\n"
        "vel = [0.0, 0.0, 0.0]\nang_vel = [0.0, 0.0, 0.0]\n"
    )
    return buf.getvalue().encode()


def render(track: Track) -> dict[str, bytes]:
    """``<stem>_gates.yaml`` and ``<stem>_gates.toml``.

    Example:
        >>> import tempfile
        >>> import numpy as np
        >>> from procgen_nb.track_gen import export
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = export.Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> oval.gates = np.array([[20.0, 0.0, 1.0], [-20.0, 0.0, 1.5]])
        >>> oval.gate_heading, oval.gate_size = np.array([np.pi / 2, -np.pi / 2]), np.ones(2)
        >>> with tempfile.TemporaryDirectory() as out:
        ...     entry = export.gates(oval, out)
        >>> entry["tracks"][0]["files"]
        ['track_env0_gates.yaml', 'track_env0_gates.toml']
    """
    return {
        f"{track.stem}_gates.yaml": gates_yaml(track),
        f"{track.stem}_gates.toml": lsy_toml(track),
    }


__all__ = ["gates_yaml", "lsy_toml", "render"]
