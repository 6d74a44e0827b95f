"""``TrackResult``: the device arrays a ``TrackGenerator`` call returns, and ``REASONS``."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np
import warp as wp

from ..columns import Column, Domain, Geometry, LiveCount, Record
from ..launch import default_context, log_entry


@dataclasses.dataclass
class TrackResult:
    """The device arrays of the last call (the same arrays every call; nothing is read back).

    Attributes:
        xy: ``[E*N]`` vec2 centerlines. valid: ``[E]`` int32 (1 valid).
        attributes: per-point ``[E*N]`` float32 attributes by name (``"z"``...).
        reason: ``[E]`` int32 bits of why an env is invalid (see ``REASONS``).
        crossings: ``[E]`` int32 crossing segment pairs. turning: ``[E]`` int32 turning numbers.
        valid_count: ``[1]`` int32 number of valid envs (the live count).

    The pipeline's validity stage only asks whether a loop crosses itself (it stops at the
    first crossing); reading ``crossings`` counts every pair of the envs found crossing (one
    launch over the envs, nothing read back), so it always holds the full counts.

    The same arrays in the runtime's types (no copy): ``points`` (a Vec2 Column of the
    ``E*N`` points), ``flags`` (the valid flags, an Int Column), ``valid_live`` (the valid
    count as a live count whose capacity is E) and ``columns()`` (a Record of them, what a
    track generator's graph node answers): a graph compacts the valid envs on the device
    with nothing read back. ``geometry()`` answers them as a Geometry with a ``point``
    class (``xy``, the env index of each point, the attributes) and an ``env`` class
    (valid flags, seeds, reasons, turning numbers).
    """

    xy: wp.array
    valid: wp.array
    attributes: dict[str, wp.array]
    reason: wp.array
    crossings: wp.array
    turning: wp.array
    valid_count: wp.array
    num_envs: int
    num_points: int
    ctx: Any = dataclasses.field(repr=False, default=None)
    _metric_arrays: dict[str, Any] = dataclasses.field(
        repr=False, compare=False, default_factory=dict
    )
    #: launches the count of the crossing envs into ``crossings`` (set by the pipeline when
    #: its validity stage stops at the first crossing); None: ``crossings`` holds the counts
    _count_crossings: Callable[[], None] | None = dataclasses.field(
        repr=False, compare=False, default=None
    )
    #: ``[E]`` int32 seed of each env's call (the pipeline's; None for a hand-made result)
    seeds: wp.array | None = dataclasses.field(repr=False, compare=False, default=None)
    #: the ``[E*N]`` env index of each point, made once (``geometry()``)
    _env_index: wp.array | None = dataclasses.field(repr=False, compare=False, default=None)

    @property
    def metric_scratch(self) -> dict[str, Any]:
        """The device scratch that ``metrics.enqueue`` and ``racing.racing_line`` keep for
        this result, by key: made at their first call over it, reused by the later ones
        (the same dict every time; it is not part of the result's equality)."""
        return self._metric_arrays

    def count_crossings_with(self, count: Callable[[], None]) -> wp.array:
        """Makes every later read of ``crossings`` launch ``count`` first, and returns the
        crossings array itself (nothing launched), for the stage that writes it.

        The pipeline's validity stage stops at an env's first crossing; ``count`` writes
        the full counts of the envs found crossing into the same array."""
        self._count_crossings = count
        return self._crossings

    def __getitem__(self, name: str) -> wp.array:
        if name in self.attributes:
            return self.attributes[name]
        if name in ("xy", "valid", "reason", "crossings", "turning", "valid_count"):
            return getattr(self, name)
        raise KeyError(
            f"track result: expected one of {['xy', 'valid', *sorted(self.attributes)]}, "
            f"got {name!r}"
        )

    @property
    def points(self) -> Column:
        """``xy`` as a Vec2 Column (``E*N`` points, env ``e`` at ``e*N``); no copy."""
        return Column(self.xy, "Vec2")

    @property
    def flags(self) -> Column:
        """``valid`` as an Int Column (``[E]``, 1 valid); no copy."""
        return Column(self.valid, "Int")

    @property
    def valid_live(self) -> LiveCount:
        """The valid count as a live count (its word read as u32, capacity E); no copy."""
        return LiveCount(self.valid_count.view(wp.uint32), self.num_envs)

    def columns(self) -> Record:
        """A Record of the result in the runtime's types: ``xy`` (Vec2), ``valid``,
        ``reason`` and ``turning`` (Int), ``valid_count`` (a live count) and each attribute
        (Float, ``[E*N]``). The arrays are the result's own (the next call writes them)."""
        out = Record(
            xy=self.points,
            valid=self.flags,
            reason=Column(self.reason, "Int"),
            turning=Column(self.turning, "Int"),
            valid_count=self.valid_live,
        )
        for name, arr in sorted(self.attributes.items()):
            out[name] = Column(arr, "Float")
        return out

    def geometry(self) -> Geometry:
        """The result as a Geometry of two classes, over the result's own arrays (the
        next call writes them); nothing is read back.

        - ``point`` (``E*N`` elements, env ``e`` at ``e*N``): ``xy`` (Vec2), ``env`` (Int:
          the env index of each point) and each attribute (Float, ``z``...);
        - ``env`` (``E`` elements): ``valid`` (Int, 1 valid), ``seed`` (Int: the seed of
          the env's call, when the pipeline made the result), ``reason`` and ``turning``.

        The env index column is made by one launch at the first call and kept (it only
        depends on E and N). A graph node reads a class as its ``columns``
        (``columns=geo.point``) or compacts ``geo.env.valid`` on the device.
        """
        E, N = self.num_envs, self.num_points
        if self._env_index is None:
            ctx = self.ctx if self.ctx is not None else default_context(str(self.xy.device))
            index = ctx.zeros(E * N, wp.int32)
            ctx.launch(_env_index_k, E * N, [N, index])
            self._env_index = index
        point = {"xy": self.points, "env": Column(self._env_index, "Int")}
        for name, arr in sorted(self.attributes.items()):
            point[name] = Column(arr, "Float")
        env = {"valid": self.flags}
        if self.seeds is not None:
            env["seed"] = Column(self.seeds, "Int")
        env["reason"] = Column(self.reason, "Int")
        env["turning"] = Column(self.turning, "Int")
        return Geometry(point=Domain(point), env=Domain(env))

    # -- display (a one-line repr; a table and a picture in a notebook) -----------------
    def __repr__(self) -> str:
        from .._display import line

        extra = {"attributes": sorted(self.attributes)} if self.attributes else {}
        shape = f"{self.num_envs} envs x {self.num_points} points"
        return line("TrackResult", shape, device=str(self.xy.device), **extra)

    def _repr_html_(self) -> str:
        from .._display import table, tracks_png

        rows = [
            ("envs", self.num_envs),
            ("points per env", self.num_points),
            ("valid", f"{self.num_valid()} of {self.num_envs}"),
            ("attributes", ", ".join(sorted(self.attributes)) or "none"),
            ("device", self.xy.device),
        ]
        return table("TrackResult", rows, tracks_png(self.xy, self.valid, self.num_envs))

    def num_valid(self) -> int:
        """Reads the live count of valid envs back (one readback). Inside a graph node the
        node then plans again every cook (a host read is not recorded)."""
        log_entry(("unrecordable", "TrackResult.num_valid() (a readback)"))
        return int(self.ctx.readback(self.valid_count)[0])

    def numpy(self) -> dict[str, np.ndarray]:
        """Reads every array back: xy ``[E, N, 2]``, valid, reason, crossings, turning,
        attributes ``[E, N]``. Inside a graph node the node then plans again every cook."""
        log_entry(("unrecordable", "TrackResult.numpy() (a readback)"))
        E, N = self.num_envs, self.num_points
        out = {
            "xy": self.ctx.readback(self.xy).reshape(E, N, 2),
            "valid": self.ctx.readback(self.valid),
            "reason": self.ctx.readback(self.reason),
            "crossings": self.ctx.readback(self.crossings),
            "turning": self.ctx.readback(self.turning),
        }
        for name, arr in sorted(self.attributes.items()):
            out[name] = self.ctx.readback(arr).reshape(E, N)
        return out

    def metrics(self, straight_ratio: float = 2.0, racing: Any = None) -> dict[str, np.ndarray]:
        """Computes the per-track metrics on the device and reads them back: one ``[E]``
        NumPy array per name of ``metrics.METRICS`` (``pyarrow.table(result.metrics())``
        makes a table of them), and with ``racing`` (``racing_line``'s keyword arguments)
        the lap metrics too. See ``procgen_nb.track_gen.metrics`` for the definitions.

        Raises:
            ParamsError: a ``straight_ratio`` that is not a number > 0; see ``racing_line``.
        """
        from . import metrics

        log_entry(("unrecordable", "TrackResult.metrics() (a readback)"))
        return metrics.compute(self, straight_ratio, racing=racing)

    def fingerprint(self) -> str:
        """Returns the sha256 of xy, valid and the attributes (sorted by name), as hex."""
        h = hashlib.sha256()
        data = self.numpy()
        for key in ["xy", "valid", *sorted(self.attributes)]:
            h.update(key.encode())
            h.update(np.ascontiguousarray(data[key]).tobytes())
        return h.hexdigest()


@wp.kernel
def _env_index_k(num_points: int, out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    out[i] = i // num_points


def _get_crossings(self: TrackResult) -> wp.array:
    count = getattr(self, "_count_crossings", None)
    if count is not None:
        count()
    return self._crossings


def _set_crossings(self: TrackResult, value: wp.array) -> None:
    self._crossings = value


# a property over the dataclass field: the generated __init__ assigns through the setter
TrackResult.crossings = property(  # type: ignore[assignment]
    _get_crossings, _set_crossings, doc="``[E]`` int32 crossing segment pairs (full counts)"
)


#: what each bit of ``TrackResult.reason`` means
REASONS = {
    1: "rejected by the generator",
    2: "not closed (non-finite point or zero-length segment)",
    4: "self-intersecting",
    8: "turning number not +-1",
    16: "turn radius below min_turn_radius",
    32: "clearance below track_width",
    64: "road surface overlaps itself (road_overlap)",
    128: "boundaries cross themselves or each other (width, track_gen.widths)",
}


__all__ = ["REASONS", "TrackResult"]
