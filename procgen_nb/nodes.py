"""Nodes: a node is a Python function that wires ops, with declared parameters.

``@node(params={"radius": Field(0.5, bounds=(0.0, 2.0))})`` makes a function a ``Node``;
its inputs are the function's other parameters, and ``time`` / ``frame`` when it takes
them (given by the cook as dynamic values, see ``procgen_nb.dynamic``). ``Const`` wraps a
constant input that would otherwise name a node.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from .errors import GraphError
from .params import Field, Params, params_class

__all__ = ["Const", "Node", "node"]


class Node:
    """A node definition: a function of its inputs and declared parameters.

    Args:
        fn: the function; its parameters are the node's inputs, its declared params, and
            optionally ``time`` and ``frame`` (given by the cook).
        params: a mapping of name -> Field (or plain default), or a Params class.
        name: the node's type name (the function's name by default).
    """

    def __init__(self, fn: Callable[..., Any], params: Any = None, name: str | None = None):
        self.fn = fn
        self.name = name or fn.__name__
        if params is None:
            self.Params = params_class(f"{self.name}_params", {}, owner=self.name)
        elif isinstance(params, type) and issubclass(params, Params):
            self.Params = params
        elif isinstance(params, Mapping):
            fields = {
                k: (dataclasses.replace(v) if isinstance(v, Field) else Field(default=v))
                for k, v in params.items()
            }
            self.Params = params_class(f"{self.name}_params", fields, owner=self.name)
        else:
            raise GraphError(
                f"node {self.name!r} params: expected a dict of Fields or a Params class, got {params!r}"
            )
        sig = inspect.signature(fn)
        self.takes_time = "time" in sig.parameters
        self.takes_frame = "frame" in sig.parameters
        fields = self.Params.fields()
        self.inputs = tuple(
            p for p in sig.parameters if p not in fields and p not in ("time", "frame")
        )
        missing = [p for p in fields if p not in sig.parameters]
        if missing:
            raise GraphError(
                f"node {self.name!r}: expected the function to take its params {missing} "
                f"as arguments, got the signature {sig}"
            )
        self.__doc__ = fn.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<node {self.name} inputs={list(self.inputs)} params={list(self.Params.fields())}>"


def node(
    fn: Callable[..., Any] | None = None, *, params: Any = None, name: str | None = None
) -> Any:
    """Decorator making a function a Node with declared parameters (see Node)."""

    def wrap(f: Callable[..., Any]) -> Node:
        return Node(f, params=params, name=name)

    return wrap(fn) if fn is not None else wrap


@dataclasses.dataclass
class Const:
    """A constant input of a node (use it for a text value, which would name a node)."""

    value: Any


_NO = object()


def _default_of(fn: Callable[..., Any], name: str) -> Any:
    p = inspect.signature(fn).parameters.get(name)
    if p is None or p.default is inspect.Parameter.empty:
        return _NO
    return p.default
