"""device.bound, device.live and device.guard: counts and conditions the device answers."""

from __future__ import annotations

import numbers
import os
import sys
from collections.abc import Callable
from typing import Any

import warp as wp

from ..columns import Column, LiveCount, counted_slots
from ..cookrun import DynamicWord, Guard
from ..counts import as_live_count
from ..dynamic import cast, key_of, peek
from ..errors import BindingError, GuardError
from ..launch import default_context
from ._op import current_cook, op

#: rooms of bounds outside a graph, keyed by call site (file, line)
_rooms: dict[Any, int] = {}
_WORD_MAX = 2**32 - 1


def _next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


@wp.kernel
def _clamp_count(
    count: wp.array(dtype=wp.uint32),
    room: wp.uint32,
    clamped: wp.array(dtype=wp.uint32),
    guard: wp.array(dtype=wp.int32),
):
    # compared as the u32 words they are: a word of 2**31 or more is a large count, not a
    # negative one, and it outgrows the room
    c = count[0]
    if c > room:
        clamped[0] = room
        guard[0] = 1
    else:
        clamped[0] = c
        guard[0] = 0


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _call_site() -> tuple[str, str, int]:
    """The file and line of the first caller outside procgen_nb (a bound's site)."""
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PACKAGE):
        f = f.f_back
    if f is None:
        return ("bound", "<unknown>", 0)
    return ("bound", f.f_code.co_filename, f.f_lineno)


def _room_memo() -> tuple[dict[Any, int], Any]:
    scope = current_cook()
    memo = scope.memo.setdefault("rooms", {}) if scope is not None else _rooms
    return memo, scope


def _room_key(scope: Any) -> Any:
    """A bound's room key: its place in the cook, or outside a graph its call site."""
    return scope.next_key("bound") if scope is not None else _call_site()


def _words(value: Any, where: str) -> wp.array | None:
    if isinstance(value, Column) and value.live is None and len(value) == 1:
        data = value.data
    elif isinstance(value, wp.array) and value.size == 1:
        data = value
    else:
        return None
    if data.dtype == wp.int32:
        return data.view(wp.uint32)
    if data.dtype != wp.uint32:
        raise BindingError(
            f"{where}: expected a one-word Int or UInt column, got {data.dtype.__name__}"
        )
    return data


@op("device.bound", runs="gpu", inputs=("value",), params=("capacity", "live"), outputs=("count",))
def bound(value: Any = None, capacity: int | None = None, live: bool = False) -> Any:
    """Answers ``value`` as a live count that states the most it can reach.

    Args:
        value: a one-word Column, a live count, count arithmetic, or a Number.
        capacity: the most the count can reach; when omitted for a count held on the device,
            the cook reads the count once and allots twice it in powers of two (never less
            than an earlier recording of the same cook, never more than the slots the count
            counts when it is the word of a live count, such as an appended output's
            ``<name>_count``), and the count carries a guard word that is 1 when a replay's
            count outgrew that room.
        live: for a Number, write it to the device as a count with the next power of two
            as its room (a recording then replays for every number inside that room).

    Returns:
        A LiveCount, or the Number itself (a Number without ``live``).

    Raises:
        BindingError: a value of another kind, or a capacity that is not a Number >= 0.

    Example:
        >>> import warp as wp
        >>> from procgen_nb import ops
        >>> ops.device.bound(value=5)  # a Number stays a Number
        5
        >>> word = ops.transfer.upload(values={"n": {"type": "UInt", "values": [3]}})["columns"]["n"]
        >>> live = ops.device.bound(value=word, capacity=8)
        >>> live
        LiveCount(capacity=8, device='cpu')
        >>> ops.transfer.readback(columns={"n": live})["values"]["n"]
        3
    """
    if capacity is not None and (
        isinstance(capacity, bool) or not isinstance(capacity, numbers.Integral) or capacity < 0
    ):
        raise BindingError(f"device.bound capacity: expected a Number >= 0, got {capacity!r}")
    memo, scope = _room_memo()
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        now = peek(value)  # checked here; a replay checks the value it evaluates (fits)
        if not float(now).is_integer() or now < 0:
            raise BindingError(
                f"device.bound value: expected a count (a whole Number >= 0), got {now!r}"
            )
        if not live:
            return int(value)  # a plain number: a dynamic one is read in Python (plans again)
        key = _room_key(scope)
        room = max(_next_pow2(int(now)), memo.get(key, 0), int(capacity or 0))
        memo[key] = room
        ctx = default_context()
        word = ctx.zeros(1, wp.uint32)
        count = cast(value, int)
        ctx.fill(word, count)  # a dynamic value (an expression) is evaluated by each replay
        if scope is not None and key_of(count) is not None:
            scope.words.append(DynamicWord(word, key_of(count), room))
        return LiveCount(word, room)
    words = _words(value, "device.bound value")
    if words is None:
        lc = as_live_count(value, "device.bound value")
        if lc is None:
            raise BindingError(
                "device.bound value: expected a one-word Column, a live count, count arithmetic "
                f"or a Number, got {value!r}"
            )
        return lc if capacity is None else LiveCount(lc.words, int(capacity), lc.guard)
    if capacity is not None:
        return LiveCount(words, int(capacity))
    ctx = default_context(str(words.device))
    key = _room_key(scope)
    count = int(ctx.readback(words)[0])  # the cook reads the count once
    if scope is not None:
        scope.note("wait", f"device.bound measures a count ({count})")
    room = max(_next_pow2(2 * count), memo.get(key, 0))
    slots = counted_slots(value.data if isinstance(value, Column) else value)
    if slots is not None:
        # never more than the slots the count counts: a kernel over the room reads the
        # columns it counted (a count above them overflowed them, and trips the guard)
        room = min(room, slots)
    memo[key] = room
    clamped = ctx.zeros(1, wp.uint32)
    guard = ctx.zeros(1, wp.int32)
    ctx.launch(_clamp_count, 1, [words, min(room, _WORD_MAX), clamped, guard])
    if scope is not None:
        scope.guards.append(Guard(guard, scope.node, None, key))
    return LiveCount(clamped, room, guard)


@op("device.live", runs="gpu", inputs=("values", "count"), outputs=("values",))
def live(values: Any = None, count: Any = None) -> Column:
    """Answers ``values`` carrying ``count`` as its live count.

    Raises:
        BindingError: values that are not a Column, or a count that is not a live count
            whose capacity fits the column.

    Example:
        >>> import warp as wp
        >>> from procgen_nb import ops
        >>> col = ops.transfer.upload(values={"f": [1.0, 2.0, 3.0, 4.0]})["columns"]["f"]
        >>> word = ops.transfer.upload(values={"n": {"type": "UInt", "values": [2]}})["columns"]["n"]
        >>> two = ops.device.live(values=col, count=ops.device.bound(value=word, capacity=4))
        >>> ops.transfer.readback(columns={"f": two})["values"]["f"]  # its live elements only
        [1.0, 2.0]
    """
    if not isinstance(values, Column):
        raise BindingError(f"device.live values: expected a Column, got {values!r}")
    lc = as_live_count(count, "device.live count")
    if lc is None:
        words = _words(count, "device.live count")
        if words is None:
            raise BindingError(
                f"device.live count: expected a live count or a one-word Column, got {count!r}"
            )
        lc = LiveCount(words, len(values))
    if lc.capacity > len(values):
        raise BindingError(
            f"device.live count: expected a capacity <= the column's {len(values)} slots, got {lc.capacity}"
        )
    return values.with_live(lc)


@op(
    "device.guard",
    runs="gpu",
    inputs=("value", "flag", "detail"),
    params=("why",),
    outputs=("value",),
)
def guard(
    value: Any = None, flag: Any = 0, why: str = "", detail: Callable[[], Any] | None = None
) -> Any:
    """Answers ``value`` once ``flag`` is 0; otherwise refuses with ``why`` (or ``detail``).

    Args:
        value: what the op answers.
        flag: a Number, a one-word Column, or a Field over one.
        why: the refusal's message.
        detail: a lazy input: called when the flag is set, what it raises is raised.

    Raises:
        GuardError: the flag is set (``why``), unless ``detail`` raises something else.
        BindingError: a flag of another kind, or no ``why``.

    Example:
        >>> from procgen_nb import ops
        >>> ops.device.guard(value="ok", flag=0, why="never raised")
        'ok'
        >>> ops.device.guard(value="ok", flag=1, why="the room overflowed")
        Traceback (most recent call last):
            ...
        procgen_nb.errors.GuardError: the room overflowed
    """
    if not isinstance(why, str) or not why:
        raise BindingError(f"device.guard why: expected the refusal's text, got {why!r}")
    scope = current_cook()
    if hasattr(flag, "_procgen_field_"):
        from .. import fieldc

        flag = fieldc.evaluate_for_readback(flag, "device.guard flag")
    if isinstance(flag, bool | numbers.Real):
        tripped = bool(flag)
    else:
        words = _words(flag, "device.guard flag")
        if words is None:
            raise BindingError(
                f"device.guard flag: expected a Number, a one-word Column or a Field over one, got {flag!r}"
            )
        ctx = default_context(str(words.device))
        tripped = int(ctx.readback(words)[0]) != 0
        if scope is not None:
            scope.note("wait", f"device.guard reads its flag ({why})")
            scope.guards.append(Guard(words, scope.node, why))
    if tripped:
        if detail is not None:
            message = detail()
            if isinstance(message, str) and message:
                raise GuardError(f"{why}: {message}")
        raise GuardError(why)
    return value
