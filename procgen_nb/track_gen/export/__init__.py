"""Exporters: tracks in the files simulators and planners read.

``export(source, format, out)`` writes one file set per track (named
``<generator>_s<seed>_e<epoch>``) and ``out/index.json``; ``tumftm(source, out)`` and the
other per-format functions are the same call. ``source`` is a ``TrackGenerator``, its
``TrackResult``, a ``Course`` or one env of them read back as a ``Track`` (``tracks()``).
Units are metres (``scale=`` metres per world unit), in the track's x east / y north /
z up frame; each format's renderer states its own frame and tolerance:

- ``tumftm``: ``tumftm_csv``; ``tumftm-traj``: ``race_traj_csv`` (the racing line and
  its speeds); ``ros-map``: ``ros_map_files``; ``opendrive``: ``opendrive_xml``;
  ``fs-cones``: ``fsds_csv`` and ``fssim_yaml``; ``gates``: ``gates_yaml`` and
  ``lsy_toml``; ``obj`` / ``gltf``: ``obj_text`` / ``gltf_json``.
"""

from __future__ import annotations

from ...errors import ExportError
from ._cones import cones, fsds_csv, fssim_yaml
from ._fit import Piece, fit_closed
from ._gates import gates_yaml, lsy_toml
from ._mesh import gltf_json, obj_text, road_surface
from ._opendrive import opendrive_xml
from ._race_traj import race_traj_csv
from ._rosmap import render as ros_map_files
from ._track import Track, tracks
from ._tumftm import tumftm_csv
from ._write import (
    FORMATS,
    INDEX,
    export,
    fs_cones,
    gates,
    gltf,
    obj,
    opendrive,
    ros_map,
    tumftm,
    tumftm_traj,
)

__all__ = [
    "FORMATS",
    "INDEX",
    "ExportError",
    "Piece",
    "Track",
    "cones",
    "export",
    "fit_closed",
    "fs_cones",
    "fsds_csv",
    "fssim_yaml",
    "gates",
    "gates_yaml",
    "gltf",
    "gltf_json",
    "lsy_toml",
    "obj",
    "obj_text",
    "opendrive",
    "opendrive_xml",
    "race_traj_csv",
    "road_surface",
    "ros_map",
    "ros_map_files",
    "tracks",
    "tumftm",
    "tumftm_csv",
    "tumftm_traj",
]
