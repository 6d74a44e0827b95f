"""Domains and counts: what ``device.kernel``'s ``domain`` accepts, resolved for a dispatch.

A domain is a Number (every slot live), a Column (its elements; a live column its live
count), a ``LiveCount``, or the record ``{count = <one-word Column>, capacity = <Number>}``.
An object with a ``_as_live_count(ctx)`` method (count arithmetic evaluated on the device)
is a live count too.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from typing import Any

import warp as wp

from .columns import Column, Domain, LiveCount
from .errors import BindingError


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
    if isinstance(value, Column):
        return value.live
    if hasattr(value, "_as_live_count"):
        return value._as_live_count(ctx)
    if isinstance(value, Mapping) and not isinstance(value, Domain) and "count" in value:
        count, cap = value.get("count"), value.get("capacity")
        if set(value) - {"count", "capacity"}:
            raise BindingError(f"{where}: expected {{count=, capacity=}}, got keys {sorted(value)}")
        words = count.data if isinstance(count, Column) else count
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
    if isinstance(domain, Domain):
        return resolve_domain(domain.count, ctx)
    live = as_live_count(domain, "domain", ctx)
    if live is not None:
        return ResolvedDomain(live.capacity, live, None)
    if isinstance(domain, Column):
        return ResolvedDomain(len(domain), None, len(domain))
    raise BindingError(
        "domain: expected a Number, a Column, a live count or {count=, capacity=}, "
        f"got {type(domain).__name__}: {domain!r}"
    )
