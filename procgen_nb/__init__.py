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

_LAZY = {
    "explore": ("procgen_nb.ui", "explore"),
    "fieldc": ("procgen_nb.fieldc", None),
    "lua": ("procgen_nb.lua", None),
    "plot": ("procgen_nb.plot", None),
    "track_gen": ("procgen_nb.track_gen", None),
    "ui": ("procgen_nb.ui", None),
}


def __getattr__(name: str):
    """Imports the heavier subpackages (ui, track_gen, lua, fieldc, plot) on first use."""
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        mod = importlib.import_module(module)
        return getattr(mod, attr) if attr else mod
    raise AttributeError(f"module 'procgen_nb' has no attribute {name!r}")


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
    "explore",
    "fieldc",
    "get_device",
    "lua",
    "node",
    "ops",
    "plot",
    "set_device",
    "track_gen",
    "traffic",
    "ui",
]
