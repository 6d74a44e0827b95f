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
#: ticks a Play control runs over (from the field's lowest value)
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


def tick_value(field: Field, tick: int) -> Any:
    """The value of ``field`` at Play tick ``tick``: its lowest value plus ``tick`` steps
    (one for an integer, the field's step or 0.1 for a float)."""
    lo = field.bounds[0] if field.bounds and field.bounds[0] is not None else 0
    if field.scalar_type is int:
        return int(lo) + int(tick)
    step = field.step or 0.1
    return round(float(lo) + tick * step, 10)


class PlayControl(widgets.VBox):
    """Play, speed and loop for one of ``fields``; calls ``on_value(name, value)`` per tick.

    Args:
        fields: the fields it can play (``play_fields``).
        on_value: called with the field's name and its value at each tick.
    """

    def __init__(self, fields: dict[str, Field], on_value: Callable[[str, Any], None]):
        self.fields = dict(fields)
        self._on_value = on_value
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
        super().__init__(
            [widgets.HBox([self.field, self.play]), widgets.HBox([self.speed, self.loop])],
            layout=widgets.Layout(width="100%"),
        )
        self.add_class("procgen-play")

    def _tick(self, change: dict[str, Any]) -> None:
        name = self.field.value
        self._on_value(name, tick_value(self.fields[name], change["new"]))


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
