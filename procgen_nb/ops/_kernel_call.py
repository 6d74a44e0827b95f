"""One ``device.kernel`` call's arguments: the bound columns read, packed and checked, and
the outputs allocated (or copied) and filled with their inert value.

``KernelCall`` is the state of one call while ``ops._kernel`` assembles it stage by stage.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import warp as wp

from .. import _cast
from ..asset import KernelRef
from ..asset._variants import WP_ELEMENTS, Variant
from ..columns import BINDING_ELEMENTS, Column, Domain, LiveCount, Texture
from ..counts import ResolvedDomain, as_live_count
from ..dynamic import is_dynamic, key_of, leaves, mark_host, peek
from ..errors import BindingError
from ..launch import LaunchContext
from ._uniforms import _describe, _is_number

#: the most slots a dispatch covers: kernels index their slots with i32
MAX_DOMAIN = 2**31 - 1


def _as_column(value: Any, where: str) -> Column:
    if isinstance(value, Column):
        return value
    if isinstance(value, wp.array):
        return Column(value)
    if hasattr(value, "_procgen_field_"):
        raise BindingError(f"{where}: a Field is evaluated by the field compiler; got {value!r}")
    raise BindingError(f"{where}: expected a Column, got {_describe(value)}")


class KernelCall:
    """The state of one device.kernel call while its arguments are assembled."""

    def __init__(self, ref: KernelRef, variant: Variant, ctx: LaunchContext, dom: ResolvedDomain):
        self.ref = ref
        self.v = variant
        self.ctx = ctx
        self.dom = dom
        self.name = ref.identity
        self.args: dict[str, Any] = {}
        self.uniforms: dict[str, Any] = {}
        self.outputs: dict[str, Column] = {}
        self.counts: dict[str, LiveCount] = {}

    def where(self, binding: str) -> str:
        return f"{self.name}: binding {binding!r}"

    def check_length(self, bname: str, value: Any) -> None:
        """Refuses a Column too short for what the kernel reads (or writes) of it.

        A read binding holds one element per slot of the domain unless its schema states
        another ``length`` (``any``: the kernel bounds every access by the length itself).
        """
        if isinstance(value, Column):
            have = len(value)
        elif isinstance(value, wp.array):
            have = value.shape[0]
        else:
            return  # a Field is evaluated over the domain; other values are refused later
        want = self.v.bindings[bname].min_length(self.dom.n)
        if want is None or have >= want:
            return
        if self.v.bindings[bname].length_rule() == "domain":
            what = (
                f"the capacity {self.dom.n} of the live-count domain"
                if self.dom.live is not None
                else f"the domain of {self.dom.n}"
            )
        else:
            what = f"the binding's length {want}"
        raise BindingError(
            f"{self.where(bname)}: expected a Column of at least {want} elements ({what}), "
            f"got one of {have}"
        )

    # -- inputs ---------------------------------------------------------------------
    def read_column(self, bname: str, value: Any) -> wp.array:
        """Returns the array a read (or in-place) binding gets, cast by value when needed."""
        want = self.v.elements[bname]
        if hasattr(value, "_procgen_field_"):
            from .. import fieldc  # the field compiler evaluates a Field in one dispatch

            value = fieldc.evaluate(value, domain=self.dom.live or self.dom.n, ctx=self.ctx)
        col = _as_column(value, self.where(bname))
        if col.device != self.ctx.device:
            raise BindingError(
                f"{self.where(bname)}: expected a Column on {self.ctx.device}, got one on {col.device}"
            )
        have_dtype = col.data.dtype
        if have_dtype == WP_ELEMENTS[want]:
            return col.data
        have = col.element() if col.lanes == 1 else col.type
        if col.lanes == 1 and want in ("f32", "i32", "u32") and _cast.can_cast(have, want):
            return _cast.cast(self.ctx, col.data, have, want)
        raise BindingError(
            f"{self.where(bname)}: expected a column of {want} elements "
            f"({BINDING_ELEMENTS.get(want, want)}), got {col.type}"
        )

    def pack_columns(self, bname: str, value: Any) -> wp.array:
        """Packs a table of columns into one [lanes, n] f32 buffer (by value)."""
        b = self.v.bindings[bname]
        if isinstance(value, Domain):
            table = dict(value)
        elif isinstance(value, Mapping):
            table = dict(value)
        else:
            raise BindingError(
                f"{self.where(bname)}: expected a table of Columns, got {_describe(value)}"
            )
        names = list(b.order) if b.order else sorted(table)
        if b.order and set(table) != set(b.order):
            raise BindingError(
                f"{self.where(bname)}: expected exactly the columns {list(b.order)}, got {sorted(table)}"
            )
        cols = [_as_column(table[n], f"{self.where(bname)} column {n!r}") for n in names]
        # at least one slot per slot of the domain: a shorter column reads 0 past its end
        n = max([self.dom.n] + [len(c) for c in cols])
        # packing is a host-side layout step of columns already on the device: one copy per lane
        lanes = sum(c.lanes for c in cols)
        packed = self.ctx.zeros((lanes, n), wp.float32)
        row = 0
        for c in cols:
            if len(c) == 0:  # an empty column leaves its rows zero
                row += c.lanes
                continue
            data = c.data
            if c.element() != "f32":
                data = _cast.cast(self.ctx, data, c.element(), "f32")
            flat = data if c.lanes == 1 else data.view(wp.float32).reshape((len(c), c.lanes))
            if c.lanes == 1:
                self.ctx.copy(packed[row], flat, 0, 0, len(c))
            else:
                for lane in range(c.lanes):
                    self.ctx.launch(_lane_copy, len(c), [flat, lane, packed, row + lane])
            row += c.lanes
        return packed

    # -- outputs --------------------------------------------------------------------
    def size_of(
        self, bname: str, spec: int | str | None, bind: Mapping[str, Any]
    ) -> tuple[int, LiveCount | None]:
        """Returns (slots, live count) for an output sized by ``spec``."""
        if spec is None or spec == "domain":
            return self.dom.n, self.dom.live
        if isinstance(spec, int):
            return spec, None
        if spec in self.uniforms:
            return _slots(_read_size(self.uniforms[spec]), f"{self.name}: uniform {spec!r}"), None
        if spec in bind:
            value = bind[spec]
            if _is_number(value):
                return _slots(_read_size(value), f"{self.name}: bind {spec!r}"), None
            if isinstance(value, Mapping) and set(value) == {"live"}:
                live = as_live_count(value["live"], f"{self.name}: bind {spec!r}.live", self.ctx)
                if live is None:
                    raise BindingError(
                        f"{self.name}: bind {spec!r}.live: expected a count Column carrying its "
                        f"capacity, got {_describe(value['live'])}"
                    )
                return live.capacity, live
            raise BindingError(
                f"{self.name}: bind {spec!r}: expected a Number or {{live = <count>}} sizing "
                f"{bname!r}, got {_describe(value)}"
            )
        raise BindingError(
            f"{self.name}: output {bname!r} is sized by {spec!r}: expected a bind or uniform of "
            "that name, got none"
        )

    # -- the bindings, one kind each --------------------------------------------------
    def domain_count_words(self) -> wp.array:
        """The one-word count the kernel reads as ``domain_count``: the live count's word,
        or a word filled with the domain's number."""
        dom = self.dom
        if dom.live is not None:
            return dom.live.words
        words = self.ctx.zeros(1, wp.uint32)
        if dom.number:
            self.ctx.fill(words, int(dom.number))
        return words

    def bind_texture(self, bname: str, value: Any) -> None:
        """Binds a Texture's texels and sets its ``<name>_width``/``_height`` uniforms.

        Raises:
            BindingError: nothing bound, or a value that is no Texture.
        """
        if value is None:
            raise BindingError(f"{self.where(bname)}: expected a Texture, got nothing bound")
        if not isinstance(value, Texture):
            raise BindingError(f"{self.where(bname)}: expected a Texture, got {_describe(value)}")
        self.args[bname] = self.read_column(bname, value.texels)
        for lane, n in (("width", value.width), ("height", value.height)):
            if f"{bname}_{lane}" in self.v.uniforms:
                self.uniforms[f"{bname}_{lane}"] = n

    def bind_table(self, bname: str, b: Any, table: Any) -> None:
        """Binds a read columns binding: the table packed into one buffer.

        Raises:
            BindingError: a columns binding that writes.
        """
        if b.writes:
            raise BindingError(
                f"{self.where(bname)}: expected a read columns binding, got {b.access}"
            )
        self.args[bname] = self.pack_columns(bname, table)

    def bind_input(self, bname: str, value: Any) -> None:
        """Binds a read buffer: the Column (or Field) read, cast by value when needed.

        Raises:
            BindingError: nothing bound (by bind, columns or bind.columns).
        """
        if value is None:
            raise BindingError(
                f"{self.where(bname)}: expected a Column (bind, columns or bind.columns), "
                "got nothing bound"
            )
        self.args[bname] = self.read_column(bname, value)

    def bind_output(self, bname: str, b: Any, value: Any, bind: Mapping[str, Any]) -> None:
        """Binds a written buffer: a copy of the bound Column, or a new one sized by its
        spec and filled with its inert value; an appended one gets its counter."""
        if value is not None and not _is_sizing(value):
            self._copy_output(bname, b, value)
        else:
            self._allocate_output(bname, b, value, bind)

    def _copy_output(self, bname: str, b: Any, value: Any) -> None:
        """An output bound to a Column: the kernel writes into a copy (by value).

        Raises:
            BindingError: a column of another element (cast only for read_write).
        """
        ctx = self.ctx
        element = self.v.elements[bname]
        dtype = WP_ELEMENTS[element]
        live: LiveCount | None = None
        src = _as_column(value, self.where(bname))
        if b.access == "read_write" and src.data.dtype != dtype:
            data = self.read_column(bname, src)  # cast by value makes a new array
        elif src.data.dtype != dtype:
            raise BindingError(
                f"{self.where(bname)}: expected a column of {element} elements, got {src.type}"
            )
        else:
            data = ctx.empty(src.data.shape[0], dtype)
            ctx.copy(data, src.data)
        if b.appended:
            counter = ctx.empty(1, wp.uint32)
            if src.live is not None:  # a later pass appends after what the earlier one did
                ctx.copy(counter, src.live.words)
            else:
                ctx.fill(counter, 0)  # a replay counts from 0 again
            live = LiveCount(counter, data.shape[0])
            self.args[f"{bname}_count"] = counter
            self.counts[bname] = live
        elif b.live:
            live = self.dom.live
        self.args[bname] = data
        self.outputs[bname] = Column(data, BINDING_ELEMENTS[element], live)

    def _allocate_output(self, bname: str, b: Any, value: Any, bind: Mapping[str, Any]) -> None:
        """An output the call allocates: sized by its spec (or by the size bound to it),
        filled with its inert value, with its counter when appended."""
        ctx = self.ctx
        element = self.v.elements[bname]
        size_spec = b.capacity if (b.appended and b.capacity is not None) else b.count
        if value is not None:
            size_spec = bname  # the binding itself was bound to a size
        n, sized_live = self.size_of(
            bname, size_spec, {**bind, bname: value} if value is not None else bind
        )
        # every output starts from its init value (0 unless bindings.yaml states one) by a
        # logged fill, so a replay starts it from the words a fresh cook's allocation holds:
        # a slot the kernel leaves unwritten (past a live count) holds the inert value after
        # any replay, as after a fresh cook (counters, folds and tables start over too)
        init = b.init if b.init is not None else 0
        data = ctx.empty(n, WP_ELEMENTS[element])
        if n:
            ctx.fill(data, _init_value(init, element))
        self.args[bname] = data
        live: LiveCount | None = None
        if b.appended:
            counter = ctx.empty(1, wp.uint32)
            ctx.fill(counter, 0)  # a replay counts from 0 again
            self.args[f"{bname}_count"] = counter
            live = LiveCount(counter, n)
            self.counts[bname] = live
        elif sized_live is not None and size_spec not in (None, "domain"):
            live = sized_live  # sized by {live = <count>}: the output carries that count
        elif b.live:
            # only an output declared live: true carries the count its dispatch ran over
            live = self.dom.live
        self.outputs[bname] = Column(data, BINDING_ELEMENTS[element], live)


@wp.kernel
def _lane_copy(
    src: wp.array2d(dtype=wp.float32), lane: int, dst: wp.array2d(dtype=wp.float32), row: int
):
    i = wp.tid()
    dst[row, i] = src[i, lane]


def _read_size(value: Any) -> Any:
    """The number sizing an output, read in Python: a dynamic one marks the node host-
    dependent on it, so the node plans again (a new allocation) when it moves; a replay
    would keep the old size (the fresh cook's output has the new one)."""
    if is_dynamic(value):
        mark_host(leaves(key_of(value)))
    return peek(value)


def _slots(value: Any, where: str) -> int:
    """An output's size: a whole Number in [0, MAX_DOMAIN]."""
    if not (_is_number(value) and math.isfinite(value) and float(value).is_integer()) or not (
        0 <= value <= MAX_DOMAIN
    ):
        raise BindingError(
            f"{where}: expected a whole Number in [0, {MAX_DOMAIN}] sizing an output, got {value!r}"
        )
    return int(value)


def _is_sizing(value: Any) -> bool:
    return _is_number(value) or (isinstance(value, Mapping) and set(value) == {"live"})


def _init_value(v: Any, element: str) -> Any:
    if element == "f32":
        return float(v)
    if element in ("i32", "u32"):
        return int(v)
    return float(v)
