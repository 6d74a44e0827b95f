"""procgen_nb: a Jupyter toolkit for exploring procedural generation on NVIDIA Warp."""

from __future__ import annotations

from . import abi, asset, ops  # noqa: E402  (after the runtime they build on)
from ._traffic import Traffic, collect, traffic
from .columns import Column, Domain, Geometry, LiveCount, Record, Texture
from .device import available_devices, get_device, set_device
from .errors import (
    AssetError,
    BindingError,
    BindingsFileError,
    CapacityError,
    CookError,
    DeviceError,
    DirectLimitError,
    DuplicateSpecError,
    GeneratorError,
    GraphError,
    GuardError,
    LegacyPluginStreamError,
    LuaCeilingError,
    LuaError,
    LuaReturnError,
    LuaSandboxError,
    NotCapturableError,
    ParamsError,
    ProcgenError,
    UploadError,
)
from .graph import Const, CookResult, Graph, Node, node
from .launch import LaunchContext, Recording, default_context
from .params import Field, Params
from .report import CookReport, NodeReport

__version__ = "0.1.0"

__all__ = [
    "AssetError",
    "BindingError",
    "BindingsFileError",
    "CapacityError",
    "Column",
    "Const",
    "CookError",
    "CookReport",
    "CookResult",
    "DeviceError",
    "DirectLimitError",
    "Domain",
    "DuplicateSpecError",
    "Field",
    "GeneratorError",
    "Geometry",
    "Graph",
    "GraphError",
    "GuardError",
    "LaunchContext",
    "LegacyPluginStreamError",
    "LiveCount",
    "LuaCeilingError",
    "LuaError",
    "LuaReturnError",
    "LuaSandboxError",
    "Node",
    "NodeReport",
    "NotCapturableError",
    "Params",
    "ParamsError",
    "ProcgenError",
    "Record",
    "Recording",
    "Texture",
    "Traffic",
    "UploadError",
    "abi",
    "asset",
    "available_devices",
    "collect",
    "default_context",
    "get_device",
    "node",
    "ops",
    "set_device",
    "traffic",
]
