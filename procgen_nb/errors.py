"""The exception tree of procgen_nb.

Every error the package raises on purpose is a ``ProcgenError`` that also derives from
the built-in it refines, so ``except ValueError`` keeps working::

    ProcgenError(Exception)
    ├── DeviceError(ProcgenError, ValueError)        unknown or unusable device
    ├── ParamsError(ProcgenError, ValueError)        a parameter or Params field out of range
    ├── AssetError(ProcgenError, ValueError)         asset.resolve / asset.add_path
    │   ├── BindingsFileError(AssetError)            a malformed bindings.yaml
    │   └── DirectLimitError(AssetError)             a variant binds more than abi.direct_limit
    ├── BindingError(ProcgenError, ValueError)       device.kernel bind / uniforms / domain misuse
    ├── UploadError(ProcgenError, ValueError)        transfer.upload / transfer.readback input
    ├── CapacityError(ProcgenError, OverflowError)   a count above the capacity a node stated
    ├── GuardError(ProcgenError, RuntimeError)       device.guard found its flag set
    ├── GraphError(ProcgenError, ValueError)         a graph wired wrongly (unknown node, cycle)
    ├── CookError(ProcgenError, RuntimeError)        a node failed during a cook (node, op named)
    ├── LuaError(ProcgenError, RuntimeError)         a Lua error, with its traceback
    │   ├── LuaSandboxError(LuaError)                a script reached outside its sandbox
    │   └── LuaCeilingError(LuaError, TimeoutError)  a call ran past its ceiling_ms
    ├── LuaReturnError(ProcgenError, TypeError)      a result of the wrong type or count
    ├── GeneratorError(ProcgenError, ValueError)     an unknown generator / bad generator_params
    ├── NotCapturableError(ProcgenError, RuntimeError)
    ├── LegacyPluginStreamError(ProcgenError, RuntimeError)
    ├── DuplicateSpecError(ProcgenError, ValueError)
    └── ExportError(ProcgenError, ValueError)        track_gen.export input (format, env, out)

Added by the hardening pass (issue 21)::

    ├── BindingError
    │   └── LuaArgError(BindingError)                a call argument no Lua value stands for
    ├── LuaError
    │   └── LuaMemoryError(LuaError, MemoryError)    a call ran past the state's max_memory
    └── DatasetError(ProcgenError, RuntimeError)     a dataset folder in use, or changed bytes

Messages follow the form "<input>: expected <what is accepted>, got <value>".
"""

from __future__ import annotations


class ProcgenError(Exception):
    """Root of every error procgen_nb raises on purpose."""


class DeviceError(ProcgenError, ValueError):
    """An unknown or unusable device was asked for."""


class ParamsError(ProcgenError, ValueError):
    """A parameter or Params field value was refused."""


class AssetError(ProcgenError, ValueError):
    """A kernel asset could not be resolved or registered."""


class BindingsFileError(AssetError):
    """A bindings.yaml file is malformed."""


class DirectLimitError(AssetError):
    """A kernel variant binds more storage buffers than ``abi.direct_limit``."""


class BindingError(ProcgenError, ValueError):
    """device.kernel was given a binding, uniform, domain or option it does not accept."""


class UploadError(ProcgenError, ValueError):
    """transfer.upload or transfer.readback was given a value it does not accept."""


class CapacityError(ProcgenError, OverflowError):
    """A count exceeded the capacity a node stated."""


class GuardError(ProcgenError, RuntimeError):
    """device.guard found its flag set."""


class GraphError(ProcgenError, ValueError):
    """A graph is wired wrongly."""


class CookError(ProcgenError, RuntimeError):
    """A node failed while a graph cooked; names the node and the op."""

    def __init__(self, message: str, *, node: str | None = None, op: str | None = None):
        super().__init__(message)
        self.node = node
        self.op = op


class LuaError(ProcgenError, RuntimeError):
    """A Lua function raised; the message holds the Lua traceback."""


class LuaSandboxError(LuaError):
    """A Lua script reached for something outside its sandbox."""


class LuaCeilingError(LuaError, TimeoutError):
    """A Lua call ran longer than its ceiling_ms in CPU time."""


class LuaReturnError(ProcgenError, TypeError):
    """A Lua call returned a value of the wrong type, or the wrong number of values."""


class GeneratorError(ProcgenError, ValueError):
    """An unknown generator name or refused generator configuration."""


class NotCapturableError(ProcgenError, RuntimeError):
    """A HOST (capturable=False) generator was asked to record into a caller's graph."""


class LegacyPluginStreamError(ProcgenError, RuntimeError):
    """A legacy plugin (accepts_ctx=False) was recorded on a stream other than Warp's current."""


class DuplicateSpecError(ProcgenError, ValueError):
    """A registry already holds a spec of that kind and name."""


# -- track_gen.export ------------------------------------------------------------------------
class ExportError(ProcgenError, ValueError):
    """A track could not be exported as asked: an unknown format, an env out of range, widths
    the track does not allow, an output folder that cannot be one."""


# -- hardening (issue 21) ------------------------------------------------------------------
class LuaArgError(BindingError):
    """A Lua call was given an argument no Lua value stands for (names it and its type)."""


class LuaMemoryError(LuaError, MemoryError):
    """A Lua call needed more memory than its state's ``max_memory``."""


class DatasetError(ProcgenError, RuntimeError):
    """A dataset folder is in use by another writer, or its bytes changed since written."""
