"""Domains and counts: what ``device.kernel``'s ``domain`` accepts, resolved for a dispatch.

A domain is a Number (every slot live), a Column (its elements; a live column its live
count), a ``LiveCount``, or the record ``{count = <one-word Column>, capacity = <Number>}``.
An object with a ``_as_live_count(ctx)`` method (count arithmetic evaluated on the device)
is a live count too.

Count arithmetic (``count(points.count) * 8``, ``count_min(kept, room)``, ``a + b``) is a
``Count``: a lazy expression over live counts and numbers. One that only grows with the
counts it reads (sums, products with numbers >= 0, min, max, taking a number away) is a
live count as it is: a tiny kernel evaluates it on the device into a one-word buffer,
and its capacity is the most it can reach (the expression over the capacities), so the
dispatch covers that and nothing crosses to the CPU. One that takes a count away
(``a - b`` with a count in ``b``, a negative factor) is read back where the dispatch needs
the number: the word is evaluated on the device, read once, and the cook report shows
the wait. ``check_capacity`` is the overflow check of a node that states a bound.

This module sits below ``columns``: it knows a Column and a Geometry class only by what they
answer: a value of a type with ``_resolve_domain(ctx)`` answers the ``ResolvedDomain`` a
dispatch over it covers (a Column its slots or its live count, a Geometry class its count,
a Count its evaluation), and a Column is such a value holding its words in ``data`` and
its LiveCount (or None) in ``live``.
"""

from __future__ import annotations

import dataclasses
import numbers
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np
import warp as wp

from ._count_program import ADD, CONST, LEAF, MAX, MIN, MUL, SUB, WORD_MAX, eval_count
from .errors import BindingError, CapacityError

#: a live count's word -> the slots it counts (the capacity of the first LiveCount over it)
_COUNTED: weakref.WeakKeyDictionary[wp.array, int] = weakref.WeakKeyDictionary()


def counted_slots(words: Any) -> int | None:
    """Returns the slots a count word counts: the capacity of the live count it is the word
    of (an appended output's counter: its output's slots), or None for a word of no live
    count."""
    try:
        return _COUNTED.get(words)
    except TypeError:
        return None


class LiveCount:
    """A count held in a one-word device buffer (u32), with the capacity it is bounded by.

    Attributes:
        words: the ``[1]`` uint32 device array holding the count.
        capacity: the most the count can reach (what a dispatch over it covers).
        guard: an optional ``[1]`` int32 device word set to 1 when the count outgrew capacity.
    """

    def __init__(self, words: wp.array, capacity: int, guard: wp.array | None = None):
        if not isinstance(words, wp.array) or words.size != 1:
            raise BindingError(
                f"count: expected a one-word device column, got {_describe_words(words)}"
            )
        if int(capacity) < 0:
            raise BindingError(f"capacity: expected a number >= 0, got {capacity!r}")
        self.words = words
        self.capacity = int(capacity)
        self.guard = guard
        _COUNTED.setdefault(words, self.capacity)

    @property
    def device(self) -> str:
        """The device the count lives on."""
        return str(self.words.device)

    def __repr__(self) -> str:
        return f"LiveCount(capacity={self.capacity}, device={self.device!r})"

    # -- count arithmetic (the 0.1 interface's ``geometry.point.count * 8``, ``count + 1``) -------
    def _count(self) -> Any:
        return count(self)

    def __add__(self, other: Any) -> Any:
        return self._count() + other

    def __radd__(self, other: Any) -> Any:
        return other + self._count()

    def __sub__(self, other: Any) -> Any:
        return self._count() - other

    def __rsub__(self, other: Any) -> Any:
        return other - self._count()

    def __mul__(self, other: Any) -> Any:
        return self._count() * other

    def __rmul__(self, other: Any) -> Any:
        return other * self._count()

    def __lt__(self, other: Any) -> bool:
        refuse_order(self, other)

    __le__ = __gt__ = __ge__ = __lt__

    def __int__(self) -> int:
        refuse_number(self)

    __index__ = __float__ = __int__


def _describe_words(v: Any) -> str:
    if isinstance(v, wp.array):
        return f"wp.array(dtype={getattr(v.dtype, '__name__', v.dtype)}, shape={v.shape})"
    text = repr(v)
    return text if len(text) < 80 else text[:77] + "..."


def _is_column(value: Any) -> bool:
    """True for a Column (``procgen_nb.columns``): a domain answerer holding ``data``."""
    return (
        hasattr(type(value), "_resolve_domain")
        and isinstance(getattr(value, "data", None), wp.array)
        and hasattr(value, "live")
    )


@dataclasses.dataclass
class ResolvedDomain:
    """A domain ready for a dispatch.

    Attributes:
        n: the slots the dispatch covers (the capacity for a live count).
        live: the LiveCount the kernel reads through ``domain_count``, or None.
        number: the count when it is a plain number (None for a live count).
    """

    n: int
    live: LiveCount | None
    number: int | None


def as_live_count(value: Any, where: str = "domain", ctx: Any = None) -> LiveCount | None:
    """Returns ``value`` as a LiveCount when it is one of the live forms, else None.

    Raises:
        BindingError: a ``{count=, capacity=}`` record that is malformed.
    """
    if isinstance(value, LiveCount):
        return value
    if _is_column(value):
        return value.live
    if hasattr(value, "_as_live_count"):  # count arithmetic (a Count)
        return value._as_live_count(ctx)
    if (
        isinstance(value, Mapping)
        and not hasattr(type(value), "_resolve_domain")  # a Geometry class is no record
        and "count" in value
    ):
        count, cap = value.get("count"), value.get("capacity")
        if set(value) - {"count", "capacity"}:
            raise BindingError(f"{where}: expected {{count=, capacity=}}, got keys {sorted(value)}")
        words = count.data if _is_column(count) else count
        if isinstance(count, LiveCount):
            words = count.words
        if not isinstance(words, wp.array) or words.size != 1:
            raise BindingError(f"{where}.count: expected a one-word Column, got {count!r}")
        if cap is None or isinstance(cap, bool) or not isinstance(cap, numbers.Integral) or cap < 0:
            raise BindingError(f"{where}.capacity: expected a Number >= 0, got {cap!r}")
        if words.dtype == wp.int32:
            words = words.view(wp.uint32)
        elif words.dtype != wp.uint32:
            raise BindingError(
                f"{where}.count: expected a one-word Int or UInt column, got dtype {words.dtype.__name__}"
            )
        return LiveCount(words, int(cap))
    return None


def resolve_domain(domain: Any, ctx: Any = None) -> ResolvedDomain:
    """Resolves a ``domain`` for a dispatch.

    Raises:
        BindingError: naming the value and the accepted forms.
    """
    if isinstance(domain, bool):
        raise BindingError(f"domain: expected a Number, a Column or a live count, got {domain!r}")
    if isinstance(domain, numbers.Integral) or (isinstance(domain, float) and domain.is_integer()):
        if int(domain) < 0:
            raise BindingError(f"domain: expected a Number >= 0, got {domain!r}")
        return ResolvedDomain(int(domain), None, int(domain))
    if hasattr(type(domain), "_resolve_domain"):  # a Geometry class, a Column, a Count
        return domain._resolve_domain(ctx)
    live = as_live_count(domain, "domain", ctx)
    if live is not None:
        return ResolvedDomain(live.capacity, live, None)
    raise BindingError(
        "domain: expected a Number, a Column, a live count or {count=, capacity=}, "
        f"got {type(domain).__name__}: {domain!r}"
    )


# -- count arithmetic ----------------------------------------------------------------------


def _leaf_of(value: Any, where: str) -> Count:
    if isinstance(value, Count):
        return value
    if isinstance(value, bool):
        raise BindingError(f"{where}: expected a count or a whole number, got {value!r}")
    if isinstance(value, numbers.Integral):
        return Count(CONST, (), const=int(value))
    if isinstance(value, float) and value.is_integer():
        return Count(CONST, (), const=int(value))
    if _is_column(value) and value.live is None:
        return Count(CONST, (), const=len(value))
    live = as_live_count(value, where)
    if live is None:
        raise BindingError(
            f"{where}: expected a live count (a count Column, an appended output, "
            f"{{count=, capacity=}}), a Count or a whole number, got {type(value).__name__}"
        )
    return Count(LEAF, (), live=live)


class Count:
    """A lazy expression over live counts and numbers: a domain, or an output's ``{live=}``.

    Made with ``count(value)`` and combined with ``+``, ``-``, ``*`` and
    ``count_min``/``count_max``. Words are u32; the device evaluates in 64 bits and clamps
    the result to ``[0, 2**32 - 1]``.
    """

    def __init__(
        self,
        op: int,
        args: tuple[Count, ...],
        const: int | None = None,
        live: LiveCount | None = None,
        capacity: int | None = None,
    ):
        self._op = op
        self._args = args
        self._const = const
        self._live = live
        self._stated = capacity
        self._programs: dict[str, tuple[wp.array, wp.array, wp.array, wp.array]] = {}

    # -- arithmetic ------------------------------------------------------------------
    def _bin(self, op: int, other: Any, swap: bool = False) -> Count:
        o = _leaf_of(other, "count arithmetic")
        return Count(op, (o, self) if swap else (self, o))

    def __add__(self, other: Any) -> Count:
        return self._bin(ADD, other)

    def __radd__(self, other: Any) -> Count:
        return self._bin(ADD, other, swap=True)

    def __sub__(self, other: Any) -> Count:
        return self._bin(SUB, other)

    def __rsub__(self, other: Any) -> Count:
        return self._bin(SUB, other, swap=True)

    def __mul__(self, other: Any) -> Count:
        return self._bin(MUL, other)

    def __rmul__(self, other: Any) -> Count:
        return self._bin(MUL, other, swap=True)

    def __lt__(self, other: Any) -> bool:
        refuse_order(self, other)

    __le__ = __gt__ = __ge__ = __lt__

    def __int__(self) -> int:
        refuse_number(self)

    __index__ = __float__ = __int__

    def __repr__(self) -> str:
        return f"Count({self._text()}, grows={self.grows}, capacity={self.capacity})"

    @property
    def text(self) -> str:
        """The expression as text: numbers, ``<count cap C>`` for a live count,
        ``(a + b)``, ``(a - b)``, ``(a * b)``, ``min(a, b)``, ``max(a, b)``."""
        return self._text()

    def _text(self) -> str:
        if self._op == CONST:
            return str(self._const)
        if self._op == LEAF:
            return f"<count cap {self._live.capacity}>"
        a, b = (x._text() for x in self._args)
        if self._op in (MIN, MAX):
            return f"{'min' if self._op == MIN else 'max'}({a}, {b})"
        return f"({a} {'+-*'[(ADD, SUB, MUL).index(self._op)]} {b})"

    # -- analysis --------------------------------------------------------------------
    def _reads(self) -> bool:
        return self._op == LEAF or any(a._reads() for a in self._args)

    def _sign(self) -> int | None:
        """Returns +1 (never decreases with its counts), 0 (constant) or None (may decrease)."""
        if self._op == CONST:
            return 0
        if self._op == LEAF or self._stated is not None:
            return 1  # a count with a stated capacity is a count as it is (a device.bound)
        a, b = self._args
        sa, sb = a._sign(), b._sign()
        if sa is None or sb is None:
            return None
        if self._op == SUB:
            return None if sb else sa
        if self._op == MUL:
            # a factor that can be negative turns growth around
            if (sa and b._lo() < 0) or (sb and a._lo() < 0):
                return None
        return 1 if (sa or sb) else 0

    def _lo(self) -> int:
        """A lower bound of the value (counts are >= 0); -1 stands for "may be negative"."""
        if self._op == CONST:
            return self._const
        if self._op == LEAF or self._stated is not None:
            return 0
        a, b = (x._lo() for x in self._args)
        if self._op == ADD:
            return a + b
        if self._op == MIN:
            return min(a, b)
        if self._op == MAX:
            return max(a, b)
        if self._op == MUL and a >= 0 and b >= 0:
            return a * b
        return -1

    @property
    def grows(self) -> bool:
        """True when the expression never decreases as the counts it reads grow."""
        return self._sign() is not None

    def _at_capacity(self) -> int:
        if self._stated is not None and self._reads():
            return self._stated
        if self._op == CONST:
            return self._const
        if self._op == LEAF:
            return self._live.capacity
        a, b = (x._at_capacity() for x in self._args)
        return {
            ADD: a + b,
            SUB: a - b,
            MUL: a * b,
            MIN: min(a, b),
            MAX: max(a, b),
        }[self._op]

    @property
    def capacity(self) -> int | None:
        """The most the count can reach (None for one that subtracts: it is read back)."""
        if self._stated is not None:
            return self._stated
        if not self.grows:
            return None
        return int(min(max(self._at_capacity(), 0), WORD_MAX))

    # -- evaluation ------------------------------------------------------------------
    def _device(self) -> str | None:
        if self._op == LEAF:
            return self._live.device
        for a in self._args:
            d = a._device()
            if d is not None:
                return d
        return None

    def _compile(self, ops: list[int], operands: list[int], leaves: list[LiveCount]) -> None:
        if self._op == CONST:
            ops.append(CONST)
            operands.append(self._const)
        elif self._op == LEAF:
            ops.append(LEAF)
            operands.append(len(leaves))
            leaves.append(self._live)
        else:
            for a in self._args:
                a._compile(ops, operands, leaves)
            ops.append(self._op)
            operands.append(0)

    def words(self, ctx: Any = None) -> wp.array:
        """Evaluates the expression on the device into a new one-word u32 buffer.

        Nothing is read back: each count read is copied on the device next to the others
        and one launch folds them.
        """
        from .launch import default_context

        if self._op == LEAF:
            return self._live.words
        ctx = ctx or default_context(self._device())
        ops: list[int] = []
        operands: list[int] = []
        leaves: list[LiveCount] = []
        self._compile(ops, operands, leaves)
        prog = self._programs.get(ctx.device)
        if prog is None:
            prog = self._programs[ctx.device] = (
                ctx.upload(np.asarray(ops, np.int32), wp.int32),
                ctx.upload(np.asarray(operands, np.int64), wp.int64),
                ctx.zeros(max(len(leaves), 1), wp.uint32),
                ctx.zeros(len(ops), wp.int64),
            )
        p, o, lv, stack = prog
        for k, leaf in enumerate(leaves):
            ctx.copy(lv, leaf.words, k, 0, 1)
        out = ctx.zeros(1, wp.uint32)
        ctx.launch(eval_count, 1, [p, o, lv, stack, out])
        return out

    def read(self, ctx: Any = None, why: str | None = None) -> int:
        """Evaluates the expression on the device and reads the number back (one wait).

        The wait is counted as a readback and noted in the cook report of the node cooking.
        """
        from .launch import default_context
        from .ops._op import current_cook

        if not self._reads():
            return int(min(max(self._at_capacity(), 0), WORD_MAX))
        ctx = ctx or default_context(self._device())
        value = int(ctx.readback(self.words(ctx))[0])
        scope = current_cook()
        if scope is not None:
            scope.note("wait", why or f"count {self._text()} read back (it subtracts)")
            # the number went into Python: a recording of the cook could not replay it
            scope.note("host", "a count read back")
        return value

    def _as_live_count(self, ctx: Any = None) -> LiveCount:
        if self.grows or self._stated is not None:
            return LiveCount(self.words(ctx), self.capacity)
        n = self.read(ctx)
        from .launch import default_context

        ctx = ctx or default_context(self._device())
        words = ctx.zeros(1, wp.uint32)
        ctx.fill(words, n)
        return LiveCount(words, n)

    def _resolve_domain(self, ctx: Any = None) -> ResolvedDomain:
        if not self._reads():
            n = self.read(ctx)
            return ResolvedDomain(n, None, n)
        if self.grows or self._stated is not None:
            return ResolvedDomain(self.capacity, self._as_live_count(ctx), None)
        n = self.read(ctx, f"count {self._text()} read back for the dispatch (it subtracts)")
        return ResolvedDomain(n, None, n)


def refuse_order(a: Any, b: Any) -> None:
    """Refuses ``<``, ``>`` (so the builtin ``min``/``max``) on a count held on the device.

    Raises:
        BindingError: naming ``count_min``/``count_max``, which fold on the device.
    """
    raise BindingError(
        "count comparison: expected count_min(...) or count_max(...) (they fold on the device; "
        "the builtin min/max and <, > would read the count back), got a comparison of "
        f"{a!r} with {b!r}"
    )


def refuse_number(a: Any) -> None:
    """Refuses ``int(count)``: a live count's number is on the device.

    Raises:
        BindingError: naming ``count(...).read()`` (a wait) and ``transfer.readback``.
    """
    raise BindingError(
        "int(count): expected a Number; a live count holds its number on the device: read it "
        f"with count(value).read() or ops.transfer.readback (a wait), got {a!r}"
    )


def count(value: Any, capacity: int | None = None) -> Count:
    """Returns ``value`` as a Count to do arithmetic on.

    Args:
        value: a LiveCount, a live Column (its count), an appended output, the record
            ``{count=, capacity=}``, a plain Column (its length), a whole number or a Count.
        capacity: states the most the count can reach (a bound the node knows); the
            dispatch over it covers that many slots.

    Raises:
        BindingError: a value of another kind, or a capacity that is not a number >= 0.

    Example:
        >>> from procgen_nb import ops
        >>> col = ops.transfer.upload(values={"f": [1.0, 2.0, 3.0]})["columns"]["f"]
        >>> n = ops.device.count(col)  # a plain Column: its length
        >>> ops.transfer.readback(columns={"n": n * 2 + 1})["values"]["n"]
        7
    """
    if capacity is None:
        return _leaf_of(value, "count(value)")
    if isinstance(capacity, bool) or not isinstance(capacity, numbers.Integral) or capacity < 0:
        raise BindingError(f"count(capacity): expected a whole number >= 0, got {capacity!r}")
    if _is_column(value) and value.live is None and len(value) == 1:
        value = {"count": value, "capacity": int(capacity)}  # a one-word count (a scan's total)
    c = _leaf_of(value, "count(value)")
    return Count(c._op, c._args, c._const, c._live, int(capacity))


def count_min(first: Any, *rest: Any) -> Count:
    """The least of counts and numbers (a count that only grows when they do).

    Example:
        >>> from procgen_nb import ops
        >>> col = ops.transfer.upload(values={"f": [1.0, 2.0, 3.0]})["columns"]["f"]
        >>> least = ops.device.count_min(ops.device.count(col), 2)
        >>> ops.transfer.readback(columns={"n": least})["values"]["n"]
        2
    """
    out = _leaf_of(first, "count_min")
    for r in rest:
        out = Count(MIN, (out, _leaf_of(r, "count_min")))
    return out


def count_max(first: Any, *rest: Any) -> Count:
    """The greatest of counts and numbers (a count that only grows when they do).

    Example:
        >>> from procgen_nb import ops
        >>> col = ops.transfer.upload(values={"f": [1.0, 2.0, 3.0]})["columns"]["f"]
        >>> most = ops.device.count_max(ops.device.count(col), 2)
        >>> ops.transfer.readback(columns={"n": most})["values"]["n"]
        3
    """
    out = _leaf_of(first, "count_max")
    for r in rest:
        out = Count(MAX, (out, _leaf_of(r, "count_max")))
    return out


def check_capacity(
    value: Any, capacity: int | None = None, node: str | None = None, ctx: Any = None
) -> int:
    """Checks ``count <= capacity`` for a node that states a bound; returns the count.

    The count is read back (a wait the cook report shows). Over its capacity the count
    states the true number, the first ``capacity`` slots were written, and the check
    refuses.

    Args:
        value: a LiveCount, a live Column, ``{count=, capacity=}``, a Count or a number.
        capacity: the bound (default: the capacity the count carries).
        node: the node named in the error (default: the node cooking).
        ctx: the launch context (default: the count's device's).

    Raises:
        CapacityError: naming the node, the count and the capacity.
    """
    from .ops._op import current_cook

    c = _leaf_of(value, "check_capacity(value)")
    bound = capacity if capacity is not None else c.capacity
    if bound is None:
        raise BindingError(
            "check_capacity(capacity): expected a bound (the count carries none), got None"
        )
    scope = current_cook()
    who = node or (scope.node if scope is not None else "<no node>")
    n = c.read(ctx, f"capacity check of {who}")
    if n > bound:
        raise CapacityError(
            f"node {who!r}: expected count <= capacity, got count {n} over capacity {bound} "
            f"({n - bound} did not fit)"
        )
    return n
