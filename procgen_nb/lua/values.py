"""Values that cross between Python and Lua: ``Curve``, ``Handle`` and ``BufferRef``.

- A ``Curve`` is an animated value: keyframes ``(t, v)`` read with linear interpolation.
- A ``Handle`` is an opaque resource a call is given or hands out. Lua makes one with
  ``handle(value, release)``; Python makes one with ``Handle(resource, release)``. Lua
  sees only an opaque table, never the Python object behind it. A handle is released
  (its release function called, once) when ``release()`` is called, when the result
  holding it is released (``CallResult.release()``), or when nothing refers to it.
- A ``BufferRef`` is how a device Column appears in Lua: a table
  ``{buffer, type, count, lanes, element}`` naming the column without moving its data;
  ``buffer`` is a random token given per node, so a script cannot name another column.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ..columns import Column
from ..errors import BindingError

_handle_ids = itertools.count(1)


class Curve:
    """An animated value: keyframes ``(t, v)`` read with linear interpolation.

    Args:
        keys: ``(time, value)`` pairs; each value a number, or every value a sequence of
            numbers of the same length (a vector). Times must be distinct numbers.

    Raises:
        BindingError: no keys, a time or value that is not a number, two keys at one
            time, or vector values of different lengths.
    """

    def __init__(self, keys: Sequence[tuple[float, Any]]):
        pairs = list(keys)
        if not pairs:
            raise BindingError("curve keys: expected at least one (t, v) pair, got none")
        clean: list[tuple[float, Any]] = []
        lanes: int | None = None
        for i, pair in enumerate(pairs):
            try:
                t, v = pair
            except (TypeError, ValueError):
                raise BindingError(
                    f"curve keys[{i}]: expected a (t, v) pair, got {pair!r}"
                ) from None
            if not _is_number(t):
                raise BindingError(f"curve keys[{i}] time: expected a number, got {t!r}")
            if _is_number(v):
                n = 0
                v = float(v)
            elif isinstance(v, Sequence) and v and all(_is_number(x) for x in v):
                n = len(v)
                v = tuple(float(x) for x in v)
            else:
                raise BindingError(
                    f"curve keys[{i}] value: expected a number or a sequence of numbers, got {v!r}"
                )
            if lanes is not None and n != lanes:
                want = f"{lanes} numbers" if lanes else "a number"
                raise BindingError(f"curve keys[{i}] value: expected {want}, got {v!r}")
            lanes = n
            clean.append((float(t), v))
        clean.sort(key=lambda kv: kv[0])
        for (t0, _), (t1, _) in itertools.pairwise(clean):
            if t0 == t1:
                raise BindingError(f"curve keys: expected distinct times, got two at t={t0}")
        self.keys: tuple[tuple[float, Any], ...] = tuple(clean)
        self._times = [t for t, _ in clean]

    @property
    def lanes(self) -> int:
        """0 for a number curve, else the length of its vector values."""
        v = self.keys[0][1]
        return 0 if isinstance(v, float) else len(v)

    def at(self, time: float) -> Any:
        """Returns the value at ``time``: clamped before the first and after the last key.

        Args:
            time: the time to read.

        Returns:
            A float, or a tuple of floats for a vector curve.
        """
        t = float(time)
        keys = self.keys
        if t <= keys[0][0]:
            return keys[0][1]
        if t >= keys[-1][0]:
            return keys[-1][1]
        i = bisect.bisect_left(self._times, t)
        (t0, v0), (t1, v1) = keys[i - 1], keys[i]
        u = (t - t0) / (t1 - t0)
        if isinstance(v0, float):
            return v0 + (v1 - v0) * u
        return tuple(a + (b - a) * u for a, b in zip(v0, v1))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Curve) and other.keys == self.keys

    def __hash__(self) -> int:
        return hash(self.keys)

    def __repr__(self) -> str:
        return f"Curve({list(self.keys)!r})"


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _run_release(release: Callable[[], Any] | None) -> None:
    if release is not None:
        release()


class Handle:
    """An opaque resource handed to or out of a Lua call, released once.

    A Python-side handle wraps ``resource`` and the ``release`` callable that lets it
    go; passed in a call's args it reaches Lua as an opaque table (Lua cannot see the
    resource), and returned by the call it comes back as this same object. A Lua-side
    handle is made by the script with ``handle(value, release_fn)``; returned from a call
    it becomes a ``Handle`` whose ``value`` is the Lua value and whose release calls
    ``release_fn(value)`` in the Lua state (under the default ceiling).

    Released means: the release function ran (at most once) and the handle lets go of
    its value. That happens on ``release()``, when the result holding it is released,
    or when the last reference to the Handle goes away.

    Args:
        resource: the object the handle stands for.
        release: called with no arguments to let the resource go, or None.
        name: a label shown in ``repr``.
    """

    def __init__(
        self, resource: Any = None, release: Callable[[], Any] | None = None, name: str = ""
    ):
        if release is not None and not callable(release):
            raise BindingError(f"handle release: expected a callable or None, got {release!r}")
        self.id = next(_handle_ids)
        self.name = name or f"handle{self.id}"
        self._value = resource
        self._origin = "py"
        self._lua_table: Any = None  # a Lua-made handle's own Lua table (``_lua_handle``)
        self._finalizer = weakref.finalize(self, _run_release, release)
        self._finalizer.atexit = False

    @property
    def value(self) -> Any:
        """The resource, or None once released."""
        return None if self.released else self._value

    @property
    def origin(self) -> str:
        """Who made the handle: ``"py"`` (``Handle(...)``) or ``"lua"`` (a Lua call's
        ``handle(value, release)``; the call's result releases it)."""
        return self._origin

    @property
    def lua_table(self) -> Any:
        """The Lua table that stands for a handle a Lua call made (a Lua state hands it
        back to Lua as itself); None for a Python handle."""
        return self._lua_table

    @property
    def released(self) -> bool:
        """True once the handle was released."""
        return not self._finalizer.alive

    def release(self) -> None:
        """Releases the resource (calls its release function once); later calls do nothing."""
        self._finalizer()
        self._value = None

    def __enter__(self) -> Handle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        state = "released" if self.released else self._origin
        return f"Handle({self.name}, {state})"


@dataclasses.dataclass(frozen=True)
class BufferRef:
    """A device column as Lua names it: ``{buffer, type, count, lanes, element}``.

    Attributes:
        buffer: the opaque token naming the column for one node of its Lua state.
        type: the column's element type name (Float, Int, Vec3, ...).
        count: its element count (the capacity for a column with a live count).
        lanes: words per element.
        element: the word kind ("f32", "i32", "u32").
        column: the Column it names.
    """

    buffer: str
    type: str
    count: int
    lanes: int
    element: str
    column: Column = dataclasses.field(repr=False, compare=False)


def _lua_handle(value: Any, release: Callable[[], Any], name: str, table: Any = None) -> Handle:
    """Returns a Handle for a Lua-side resource (its release runs in the Lua state),
    ``table`` the Lua table that stands for it."""
    h = Handle(value, release, name)
    h._origin = "lua"
    h._lua_table = table
    return h


def iter_handles(value: Any, _depth: int = 0) -> Any:
    """Yields every Handle inside ``value`` (lists, tuples, dicts and Records, nested)."""
    if isinstance(value, Handle):
        yield value
    elif _depth < 64 and isinstance(value, list | tuple):
        for v in value:
            yield from iter_handles(v, _depth + 1)
    elif _depth < 64 and isinstance(value, dict):
        for v in value.values():
            yield from iter_handles(v, _depth + 1)
