"""Kernel-level parameters of a graph: the literals its nodes pass to ``device.kernel``.

Every ``device.kernel`` call of a node offers the uniforms and specialize options (COUNT
aside) the node passes as literals, as ``"node.<site>.<name>"`` parameters of the graph
(``site`` is the kernel's name, ``inside``, then ``inside#2`` for its second call in the
node). A value the node computed from its own parameters is no kernel-level parameter:
the node's own control moves it. Set one like any parameter: it then overrides what the
node passes, until ``clear_kernel_overrides()``.
"""

from __future__ import annotations

from typing import Any

from ._derived import origin
from .dynamic import is_dynamic
from .params import Field


class KernelParams:
    """The kernel-level parameter methods of ``Graph`` (a mixin over its state)."""

    _kernel_fields: dict[str, Field]
    _kernel_overrides: set[str]
    _state: dict[str, Any]
    _recording: Any
    _params: Any
    values: dict[str, Any]

    def kernel_params(self) -> dict[str, Field]:
        """Returns the kernel-level parameters found by the cooks so far.

        Every ``device.kernel`` call of a node offers the uniforms the node gave it and its
        specialize options (COUNT aside) as ``"node.<site>.<name>"`` (``site`` is the
        kernel's name, ``inside``, then ``inside#2`` for its second call in the node). Set
        one like any parameter: it then overrides what the node passes, until
        ``clear_kernel_overrides()``.
        """
        return dict(self._kernel_fields)

    def clear_kernel_overrides(self) -> None:
        """Lets every node pass its own uniforms and specialize options again."""
        self._kernel_overrides.clear()
        for owner in {k.split(".")[0] for k in self._kernel_fields}:
            self._state.pop(owner, None)
        self._recording = None

    def _learn_kernel_params(self, found: list[tuple[str, tuple]]) -> None:
        """Adds the kernel-level params the cooked nodes offered; shows what they passed.

        Only literals are offered: a uniform or option the node computed from its own
        parameters (a dynamic value, or one marked by ``_derived``) already has a control,
        the node's, and a kernel-level one would shadow it.
        """
        added = False
        for node_name, (site, identity, uniforms, specs, options) in found:
            uniforms = {k: v for k, v in uniforms.items() if _literal(v)}
            specs = {k: v for k, v in specs.items() if _literal(v)}
            for uname, v in uniforms.items():
                key = f"{node_name}.{site}.{uname}"
                typ = float if isinstance(v, float) else int
                if key not in self._kernel_fields:
                    f = Field(default=typ(v), type=typ, doc=f"uniform {uname} of {identity}")
                    f.name = key.split(".", 1)[1]
                    self._kernel_fields[key] = f
                    added = True
                if key not in self._kernel_overrides:
                    self.values[key] = typ(v)
            for sname, sv in specs.items():
                key = f"{node_name}.{site}.{sname}"
                if key not in self._kernel_fields:
                    f = Field(
                        default=str(sv),
                        type=str,
                        choices=list(options[sname]),
                        doc=f"specialize {sname} of {identity}",
                    )
                    f.name = key.split(".", 1)[1]
                    self._kernel_fields[key] = f
                    added = True
                if key not in self._kernel_overrides:
                    self.values[key] = str(sv)
        if added:
            self._params = None


def _literal(value: Any) -> bool:
    """True for a value a node passed as a literal (not computed from its parameters)."""
    return not is_dynamic(value) and not origin(value)
