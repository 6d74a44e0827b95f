"""``export(source, format, out)``: one file set per track, named by its seed and epoch, and
``index.json`` listing what each format wrote."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import ExportError
from . import _cones, _gates, _mesh, _opendrive, _race_traj, _rosmap, _tumftm
from ._files import prepare_out, write_set
from ._track import Track, check_exportable, tracks

#: format name -> the renderer of one track's files
FORMATS: dict[str, Callable[..., dict[str, bytes]]] = {
    "fs-cones": _cones.render,
    "gates": _gates.render,
    "gltf": _mesh.render_gltf,
    "obj": _mesh.render_obj,
    "opendrive": _opendrive.render,
    "ros-map": _rosmap.render,
    "tumftm": _tumftm.render,
    "tumftm-traj": _race_traj.render,
}

INDEX = "index.json"


def _renderer(fmt: Any, options: dict[str, Any]) -> Callable[[Track], dict[str, bytes]]:
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise ExportError(f"format: expected one of {sorted(FORMATS)}, got {fmt!r}")
    render = FORMATS[fmt]
    accepted = [p for p in inspect.signature(render).parameters if p != "track"]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ExportError(f"{fmt} options: expected some of {accepted}, got {unknown}")
    return lambda track: render(track, **options)


def _entry(track: Track, files: list[str]) -> dict[str, Any]:
    a, b = track.start_line()
    return {
        "env": track.env,
        "seed": track.seed,
        "epoch": track.epoch,
        "generator": track.generator,
        "files": files,
        "points": len(track.xy),
        "length_m": float(track.arc_length()[-1]),
        "start_index": track.start_index(),
        "start_line": [a.tolist(), b.tolist()],
        "start_poses": track.start_poses().tolist(),
    }


def export(
    source: Any,
    format: str,
    out: Any,
    *,
    env: Any = None,
    scale: float = 1.0,
    width: Any = None,
    **options: Any,
) -> dict[str, Any]:
    """Writes one file set per track in ``format`` under the folder ``out``.

    Args:
        source: a ``TrackGenerator``, ``TrackResult``, ``Course``, ``Track`` or list of them.
        format: one of ``FORMATS`` (``"tumftm"``, ``"tumftm-traj"``, ``"ros-map"``,
            ``"opendrive"``, ``"fs-cones"``, ``"gates"``, ``"obj"``, ``"gltf"``).
        out: the folder (made when missing).
        env: an env index or a list of them (each valid, each once), or None: every valid env
            (the others are listed in the index's ``skipped``).
        scale: metres per world unit.
        width: metres each side (or ``(left, right)``) in place of the track's widths.
        **options: the format's own (``resolution``, ``tolerance``, ``spacing``,
            ``wall_height``...; see its renderer).

    Returns:
        This format's entry of ``out/index.json``: ``tracks`` (env, seed, epoch, files,
        start line and grid), ``skipped``, ``scale``.

    Raises:
        ExportError: an unknown format or option, an env out of range, invalid or asked
            for twice, tracks with the same file names, widths whose boundaries cross, an
            ``out`` that is a file, a file that cannot be written. Nothing is written then:
            every track is rendered before the first file is written, every file (the
            index too) under a temporary name before the first is renamed into place, and
            a failed rename gives every file back its old bytes (``_files.write_set``).

    Example:
        >>> import os, tempfile
        >>> import procgen_nb as pg
        >>> from procgen_nb.track_gen import export
        >>> gen = pg.track_gen.presets.track("polar", num_envs=2, num_points=64, seed=1)
        >>> _ = gen.generate()
        >>> with tempfile.TemporaryDirectory() as out:
        ...     entry = export.export(gen, "tumftm", out)
        ...     written = sorted(os.listdir(out))
        >>> written
        ['index.json', 'polar_s1_e0.csv', 'polar_s2_e0.csv']
        >>> [t["files"] for t in entry["tracks"]], entry["skipped"]
        ([['polar_s1_e0.csv'], ['polar_s2_e0.csv']], [])
    """
    render = _renderer(format, options)
    picked = tracks(source, env, scale=scale, width=width)
    rendered, skipped = [], []
    for t in picked:
        if env is None and (not t.valid or t.crossing != 0):
            why = "boundaries cross" if t.crossing else f"reason {t.reason}"
            skipped.append({"env": t.env, "seed": t.seed, "epoch": t.epoch, "why": why})
            continue
        check_exportable(t)
        rendered.append((t, render(t)))
    written: dict[str, bytes] = {}
    for t, files in rendered:
        twice = sorted(set(files) & (set(written) | {INDEX}))
        if twice:
            raise ExportError(
                f"source: expected tracks with distinct file names, got {twice} twice "
                f"(env {t.env}, {t.stem}: give each Track its own env or seed)"
            )
        written.update(files)
    folder = prepare_out(out)
    entries = [_entry(t, list(files)) for t, files in rendered]
    entry = {"scale": float(scale), "tracks": entries, "skipped": skipped}
    index = {"formats": {}}
    path = Path(folder) / INDEX
    try:
        old = json.loads(path.read_text())
        if isinstance(old, dict) and isinstance(old.get("formats"), dict):
            index = old
    except (OSError, ValueError):
        pass
    index["formats"][format] = entry
    written[INDEX] = (json.dumps(index, indent=1, sort_keys=True) + "\n").encode()
    write_set(folder, written)  # every track's files and the index, all or nothing
    return entry


def _one(fmt: str) -> Callable[..., dict[str, Any]]:
    def run(source: Any, out: Any, **kwargs: Any) -> dict[str, Any]:
        return export(source, fmt, out, **kwargs)

    run.__name__ = fmt.replace("-", "_")
    run.__doc__ = f"Writes ``{fmt}`` file sets: ``export(source, {fmt!r}, out, **kwargs)``.\n\n" + (
        inspect.getdoc(FORMATS[fmt]) or ""
    )
    return run


fs_cones = _one("fs-cones")
gates = _one("gates")
gltf = _one("gltf")
obj = _one("obj")
opendrive = _one("opendrive")
ros_map = _one("ros-map")
tumftm = _one("tumftm")
tumftm_traj = _one("tumftm-traj")

__all__ = [
    "FORMATS",
    "INDEX",
    "export",
    "fs_cones",
    "gates",
    "gltf",
    "obj",
    "opendrive",
    "ros_map",
    "tumftm",
    "tumftm_traj",
]
