"""A timeline for the explore view: play a field's values in order, record them as a movie.

``PlayControl`` is the view's Play control for a field named ``epoch``, ``time`` or
``frame`` (``ipywidgets.Play`` ticking in the browser, a speed in ms per frame and a loop
toggle linked to it in the browser): each tick sets the field, and the view cooks it (a
tick arriving during a cook replaces the queued one: the newest value wins).
``write_movie`` writes frames (PNG bytes) as a GIF or an MP4 with imageio.
"""

from __future__ import annotations

import dataclasses
import io
import os
import pathlib
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets
import numpy as np

from ..errors import ParamsError
from ..params import Field, Params

#: the last part of the names a Play control is offered for
PLAY_NAMES = ("epoch", "time", "frame")
#: the most ticks a Play control runs over (from the field's value when it starts)
PLAY_TICKS = 100
MOVIE_SUFFIXES = (".gif", ".mp4")


@dataclasses.dataclass(frozen=True, init=False)
class Selection:
    """The env a person clicked (``view.select(i)``), made from its ``env``, ``seed``,
    ``epoch``, ``valid``, ``code`` (the text ``code()`` answers) and ``alone``.

    Attributes:
        env: its index in the batch.
        seed: the seed that env is generated with (None when the target has none).
        epoch: its epoch (None when the target has none).
        valid: whether it is valid (None when the frame does not say).
        alone: whether ``code()`` makes that env alone (a track generator's, a course's,
            a graph's generator or course node's).
    """

    env: int
    seed: int | None
    epoch: int | None
    valid: bool | None
    alone: bool
    _code: str = dataclasses.field(repr=False)

    def __init__(
        self,
        env: int,
        seed: int | None,
        epoch: int | None,
        valid: bool | None,
        code: str,
        alone: bool = False,
    ):
        for name, value in (
            ("env", env),
            ("seed", seed),
            ("epoch", epoch),
            ("valid", valid),
            ("alone", alone),
            ("_code", code),
        ):
            object.__setattr__(self, name, value)

    def code(self) -> str:
        """Returns Python that rebuilds exactly that one track (``alone``: run it, the same
        bytes), or that cooks the batch and names the env (a graph's, a function's)."""
        return self._code


def play_fields(cls: type[Params]) -> dict[str, Field]:
    """The fields of ``cls`` a Play control is offered for (int or float fields named
    ``epoch``, ``time`` or ``frame``, or ending in ``.time`` ...)."""
    return {
        k: f
        for k, f in cls.fields().items()
        if k.rsplit(".", 1)[-1] in PLAY_NAMES and f.lanes == 1 and f.scalar_type in (int, float)
    }


def _step(field: Field) -> float:
    """One Play tick of ``field``: its step (1 for an integer without one, 0.1 for a
    float)."""
    if field.scalar_type is int:
        return max(1, int(field.step or 1))
    return float(field.step or 0.1)


def play_span(field: Field, current: Any = None) -> tuple[Any, int]:
    """Returns where a Play control of ``field`` starts and its last tick: from
    ``current`` (the field's value in effect; its lowest bound, or 0, when None or when
    no step fits between it and the highest bound), as many steps as fit within the
    bounds, at most ``PLAY_TICKS``."""
    lo, hi = field.bounds if field.bounds else (None, None)
    step = _step(field)
    low = lo if lo is not None else 0
    start = current if isinstance(current, int | float) and not isinstance(current, bool) else low
    if hi is not None and start + step > hi + 1e-9 * step:
        start = low  # nothing left ahead of the value in effect: from the lowest value
    ticks = PLAY_TICKS - 1
    if hi is not None:
        ticks = min(ticks, max(0, int((hi - start) / step + 1e-9)))
    return (int(start) if field.scalar_type is int else float(start)), ticks


def tick_value(field: Field, tick: int, start: Any = None) -> Any:
    """The value of ``field`` at Play tick ``tick``: ``start`` (its lowest value when
    None) plus ``tick`` steps (one for an integer, the field's step or 0.1 for a float)."""
    if start is None:
        start = field.bounds[0] if field.bounds and field.bounds[0] is not None else 0
    step = _step(field)
    if field.scalar_type is int:
        return int(start) + int(tick) * int(step)
    return round(float(start) + tick * step, 10)


class PlayControl(widgets.VBox):
    """Play, speed and loop for one of ``fields``; calls ``on_value(name, value)`` per tick.

    The ticks run from the field's value in effect (when the field is chosen, or play
    starts from tick 0) by its step, as far as its bounds allow (``play_span``); a loop
    goes back to that value.

    Args:
        fields: the fields it can play (``play_fields``).
        on_value: called with the field's name and its value at each tick.
        current: returns a field's value in effect (None: from its lowest value).
    """

    def __init__(
        self,
        fields: dict[str, Field],
        on_value: Callable[[str, Any], None],
        current: Callable[[str], Any] | None = None,
    ):
        self.fields = dict(fields)
        self._on_value = on_value
        self._current = current
        self._quiet = False
        self.start: Any = None  # the value of tick 0
        names = list(self.fields)
        self.field = widgets.Dropdown(
            options=names,
            value=names[0],
            description="play",
            style={"description_width": "initial"},
            layout=widgets.Layout(flex="1 1 auto", width="auto", min_width="0"),
        )
        self.play = widgets.Play(
            value=0,
            min=0,
            max=PLAY_TICKS - 1,
            step=1,
            interval=250,
            repeat=False,
            description="play",
            tooltip="play the field: one cook per value",
        )
        self.speed = widgets.IntSlider(
            value=250,
            min=30,
            max=2000,
            step=10,
            description="ms/frame",
            tooltip="milliseconds per frame while playing",
            continuous_update=True,
            style={"description_width": "initial"},
            layout=widgets.Layout(flex="1 1 auto", width="auto", min_width="0"),
        )
        self.loop = widgets.Checkbox(
            value=False, description="loop", indent=False, layout=widgets.Layout(width="auto")
        )
        # the speed and the loop act in the browser, where the Play control ticks
        widgets.jslink((self.speed, "value"), (self.play, "interval"))
        widgets.jslink((self.loop, "value"), (self.play, "repeat"))
        self.play.observe(self._tick, names="value")
        self.field.observe(lambda _c: self.reset(), names="value")
        self.play.observe(self._started, names="playing")
        self.reset()
        super().__init__(
            [widgets.HBox([self.field, self.play]), widgets.HBox([self.speed, self.loop])],
            layout=widgets.Layout(width="100%"),
        )
        self.add_class("procgen-play")

    def reset(self) -> None:
        """Starts the ticks again from the chosen field's value in effect: tick 0 is that
        value, the last tick as far as its bounds allow."""
        name = self.field.value
        now = self._current(name) if self._current is not None else None
        self.start, last = play_span(self.fields[name], now)
        self._quiet = True
        try:
            with self.play.hold_sync():
                self.play.value = 0
                self.play.max = last
        finally:
            self._quiet = False

    def _started(self, change: dict[str, Any]) -> None:
        if change["new"] and self.play.value == 0:  # a fresh start: from the value now
            self.reset()

    def _tick(self, change: dict[str, Any]) -> None:
        if self._quiet:
            return
        name = self.field.value
        self._on_value(name, tick_value(self.fields[name], change["new"], self.start))


def check_play(cls: type[Params], field: Any, values: Any) -> list[Any]:
    """Returns ``values`` as a list after checking ``field`` names a field of ``cls`` and
    each value is one it accepts.

    Raises:
        ParamsError: for an unknown field, no values, or a value the field refuses.
    """
    fields = cls.fields()
    if field not in fields:
        raise ParamsError(f"play(field): expected one of {sorted(fields)}, got {field!r}")
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise ParamsError(f"play({field!r}, values): expected a sequence of values, got {values!r}")
    out = [v.item() if isinstance(v, np.generic) else v for v in values]
    if not out:
        raise ParamsError(f"play({field!r}, values): expected at least one value, got none")
    for v in out:
        cls.check_field(field, v)
    return out


def write_movie(path: str | os.PathLike, pngs: Sequence[bytes], fps: float = 4.0) -> pathlib.Path:
    """Writes PNG frames to ``path`` as a GIF (looping) or an MP4 (H.264, imageio-ffmpeg).

    Raises:
        ParamsError: for a suffix other than .gif or .mp4, no frames, or fps <= 0.
    """
    import imageio.v2 as iio2
    import imageio.v3 as iio

    p = pathlib.Path(path)
    suffix = p.suffix.lower()
    if suffix not in MOVIE_SUFFIXES:
        raise ParamsError(f"record(path): expected a .gif or .mp4 file, got {str(p)!r}")
    if not pngs:
        raise ParamsError("record: expected at least one frame, got none")
    if not (isinstance(fps, int | float) and fps > 0):
        raise ParamsError(f"record(fps): expected a number > 0, got {fps!r}")
    images = [iio.imread(io.BytesIO(b))[..., :3] for b in pngs]
    h = max(i.shape[0] for i in images)
    w = max(i.shape[1] for i in images)
    h, w = h + h % 2, w + w % 2  # H.264 wants even sizes; every frame one size
    frames = np.full((len(images), h, w, 3), 255, dtype=np.uint8)
    for k, im in enumerate(images):
        frames[k, : im.shape[0], : im.shape[1]] = im
    p.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".gif":
        iio.imwrite(p, frames, extension=".gif", duration=1000.0 / fps, loop=0)
    else:
        iio2.mimwrite(p, list(frames), format="FFMPEG", fps=fps, macro_block_size=1)
    return p
