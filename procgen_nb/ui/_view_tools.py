"""What ``ExploreView`` does besides cooking: history, saved values, pin, select, timeline.

``ViewTools`` is a part of ``ExploreView`` (its base class, in a module of its own to
keep each module to one concept): the undo / redo history of the values in effect, saving
them and named presets, pinning a cook to compare the next ones with, the env a person
clicked, and playing or recording a field's values.
"""

from __future__ import annotations

import math
import numbers
import os
import pathlib
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from ..errors import ParamsError, ProcgenError
from ..params import Params
from . import _render
from .history import History, Presets, save_values
from .preset_picker import PresetPicker
from .timeline import PlayControl, Selection, check_play, play_fields, write_movie

#: the folder named presets are kept in when none is given
PRESETS_FOLDER = "presets"


def check_number(what: str, value: Any, lo: float, *, integer: bool = False) -> float:
    """Returns ``value`` (a float, or an int when ``integer``) after checking it is a
    finite number (an integer when ``integer``) >= ``lo``.

    Raises:
        ParamsError: naming ``what``, the value and what is accepted.
    """
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, kind) and not isinstance(value, bool):
        if math.isfinite(value) and value >= lo:
            return int(value) if integer else float(value)
    accepted = "an integer" if integer else "a finite number"
    raise ParamsError(f"{what}: expected {accepted} >= {lo}, got {value!r}")


def _check_path(what: str, path: Any, *, folder: bool = False) -> pathlib.Path:
    """Returns ``path`` as a Path after checking it is a str or os.PathLike.

    Raises:
        ParamsError: naming ``what`` and the value.
    """
    if isinstance(path, str | os.PathLike):
        return pathlib.Path(path)
    kind = "folder" if folder else "file"
    raise ParamsError(f"{what}: expected a {kind} path (str or os.PathLike), got {path!r}")


def _check_writable(what: str, p: pathlib.Path) -> None:
    """Checks a file can be written in ``p``'s folder (made when missing).

    Raises:
        ParamsError: naming ``what`` and the path, when it cannot.
    """
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=p.parent, prefix=f".{p.name}.", suffix=".probe"):
            pass
    except OSError as exc:
        raise ParamsError(f"{what}: expected a writable file path, got {str(p)!r} ({exc})") from exc


class ViewTools:
    """History, presets, pin, select, play and record of an ``ExploreView``.

    It uses the view's ``form``, ``canvas``, ``target``, ``frame`` and ``wait``.
    """

    form: Any
    canvas: Any
    target: Any
    frame: Any

    def _init_tools(self, presets_folder: str | os.PathLike = PRESETS_FOLDER) -> widgets.Widget:
        """Makes the history, the toolbar, the preset picker (over ``presets_folder``) and
        the Play control; returns the toolbar box.

        Raises:
            ParamsError: when ``presets_folder`` is not a path (str or os.PathLike).
        """
        if not isinstance(presets_folder, str | os.PathLike):
            raise ParamsError(
                "explore presets_folder: expected a folder path (str or os.PathLike), "
                f"got {presets_folder!r}"
            )
        self._history = History(self.form.value)
        #: the folder of the named presets the picker lists
        self.presets_folder = pathlib.Path(presets_folder)
        self._navigating = False
        #: the values pinned with ``pin()`` (None when none are)
        self.pinned: Params | None = None
        self.pinned_frame: Any = None
        #: the env last clicked or passed to ``select`` (None before)
        self.selected: Selection | None = None

        def button(text: str, tip: str, icon: str, act: Any) -> widgets.Button:
            b = widgets.Button(
                description=text, tooltip=tip, icon=icon, layout=widgets.Layout(width="auto")
            )
            b.on_click(lambda _b: act())
            b.add_class(f"procgen-{text}")
            return b

        self.undo_button = button(
            "undo", "back to the values before (view.undo())", "undo", self.undo
        )
        self.redo_button = button("redo", "forward again (view.redo())", "repeat", self.redo)
        self.pin_button = button(
            "pin", "keep this cook drawn faintly behind the next ones (view.pin())", "thumb-tack",
            self.pin,
        )  # fmt: skip
        self.unpin_button = button("unpin", "stop comparing (view.unpin())", "times", self.unpin)
        self._sync_buttons()
        #: draws the racing line coloured by speed, and the lap time on hover (off: the
        #: cooks compute no racing line); None for a target with no track result
        self.racing_toggle: widgets.Checkbox | None = None
        tools = [self.undo_button, self.redo_button, self.pin_button, self.unpin_button]
        if getattr(self.target, "races", False):
            self.racing_toggle = widgets.Checkbox(
                value=False,
                description="racing line",
                indent=False,
                tooltip="draw each env's racing line coloured by speed; hover: its lap time",
                layout=widgets.Layout(width="auto", margin="0 0 0 8px"),
            )
            self.racing_toggle.observe(self._racing_toggled, names="value")
            tools.append(self.racing_toggle)
        self.racing_error = ""  # why the last racing line could not be drawn ("": it was)
        rows: list[widgets.Widget] = [
            widgets.HBox(tools, layout=widgets.Layout(flex_flow="row wrap"))
        ]
        #: the named presets: a dropdown restores one, a box saves the values as one
        self.preset_picker = PresetPicker(
            self.presets_folder,
            self.form.params_class,
            lambda: self.form.value,
            self._apply_preset,
            self.target.name,
        )
        rows.append(self.preset_picker)
        fields = play_fields(self.form.params_class)
        self.play_control = (
            PlayControl(fields, self._play_tick, lambda n: self.form.value.to_dict().get(n))
            if fields
            else None
        )
        if self.play_control is not None:
            rows.append(self.play_control)
        box = widgets.VBox(rows)
        box.add_class("procgen-toolbar")
        return box

    def _swap_form(self) -> None:  # a part of the view: its history and pinned values
        """Shows a new form for the target's parameters (a cook found new ones)."""
        old, new = self.form, self._make_form()
        old.unobserve(self._changed, names="value")
        old.unobserve(self._refused, names="error")
        self._browser_values_before = self.browser_values
        start = new.value  # the new class's values before any carry over

        def carried(values: Params) -> Params:
            # the values carry over into the new class, except a choice the new form no
            # longer offers (a cook that binds other columns changes a kernel option's)
            keep = {
                k: v
                for k, v in values.to_dict().items()
                if k in new.controls
                and (new.controls[k].field.choices is None or v in new.controls[k].field.choices)
            }
            return start.replace(**keep)

        with new.hold_trait_notifications():
            new.value = carried(old.value)
        # the history and the pinned values become the new class's (undo, redo and the
        # form take only its instances)
        self._history.convert(carried)
        if self.pinned is not None:
            self.pinned = carried(self.pinned)
        new.observe(self._changed, names="value")
        new.observe(self._refused, names="error")
        self.form = new
        self.preset_picker.params_class = new.params_class  # presets load as the new fields
        self._form_box.children = (new, *self._extra)
        self._show_code()

    # -- values ---------------------------------------------------------------------------
    def update(self, **fields: Any) -> Params:
        """Sets any fields from Python (any value the Params accept: a slider widens to
        show it); the controls show them, a cook is queued, the history records them. A
        set the target refuses before cooking (``Target.check``) is shown under its
        control and taken back, as a failed cook is: the values in effect stay.

        Returns:
            The values now in effect.

        Raises:
            ParamsError: for a refused value or an unknown field (nothing changes).
        """
        self.form.value = self.form.value.replace(**fields)
        return self.form.value

    def set(self, **values: Any) -> None:
        """The same as ``update`` (kept for older notebooks)."""
        self.update(**values)

    @property
    def history(self) -> list[Params]:
        """Every set of values that took effect, oldest first (``undo`` moves back in it)."""
        return self._history.items

    @property
    def history_index(self) -> int:
        """The position of the values in effect in ``history``."""
        return self._history.index

    def undo(self) -> Params | None:
        """Goes back to the values before (and cooks them); returns them, or None at the
        first values."""
        return self._go(-1)

    def redo(self) -> Params | None:
        """Goes forward again after ``undo``; returns the values, or None at the last."""
        return self._go(1)

    def _go(self, step: int) -> Params | None:
        """Shows the set ``step`` places from the history's cursor; the cursor moves only
        once the form took them (a refusal leaves both as they were)."""
        values = self._history.peek(step)
        if values is None:
            return None
        self._navigating = True
        try:
            self.form.value = values
            self._history.move(step)
        finally:
            self._navigating = False
            self._sync_buttons()
        return values

    def _record(self, values: Params) -> None:
        """The form took ``values`` (an edit or ``update``): into the history."""
        if not self._navigating:
            self._history.push(values)
        self.preset_picker.moved(values)
        self._sync_buttons()

    def _retract(self, values: Params) -> None:
        """Values that did not cook leave the history (the controls went back)."""
        self._history.retract(values)
        self._sync_buttons()

    def _sync_buttons(self) -> None:
        self.undo_button.disabled = not self._history.can_undo()
        self.redo_button.disabled = not self._history.can_redo()
        self.unpin_button.disabled = self.pinned is None

    def save(self, path: str | os.PathLike) -> pathlib.Path:
        """Writes every value in effect (not only the changed ones) to ``path`` as JSON;
        ``explore(target, params=path)`` opens a view with exactly those values.

        Raises:
            ParamsError: when ``path`` is no path (str or os.PathLike), a folder, or
                cannot be written.
        """
        return save_values(_check_path("save(path)", path), self.form.value, self.target.name)

    def presets(self, folder: str | os.PathLike | None = None) -> Presets:
        """The named presets in ``folder`` (one JSON file per name; the picker's folder,
        ``presets_folder``, when None).

        Raises:
            ParamsError: when ``folder`` is neither None nor a path.
        """
        if folder is None:
            return Presets(self.presets_folder)
        return Presets(_check_path("presets(folder)", folder, folder=True))

    def save_preset(self, name: str, folder: str | os.PathLike | None = None) -> pathlib.Path:
        """Saves the values in effect as preset ``name`` (``folder/name.json``; the
        picker's folder when None, and the picker lists it).

        Raises:
            ParamsError: for a name that is not letters, digits, ``_``, ``-`` or ``.``;
                a folder that is neither None nor a path.
        """
        path = self.presets(folder).save(name, self.form.value, self.target.name)
        if folder is None or pathlib.Path(folder) == self.presets_folder:
            self.preset_picker.refresh()
        return path

    def load_preset(self, name: str, folder: str | os.PathLike | None = None) -> Params:
        """Sets every value of preset ``name`` exactly (a cook follows; the history records
        it); the picker's folder when ``folder`` is None.

        Raises:
            ParamsError: for a name not saved, or values these Params refuse.
        """
        values = self.presets(folder).load(name, self.form.params_class, self.target.name)
        self._apply_preset(values)
        return self.form.value

    def _apply_preset(self, values: Params) -> None:
        """Every value of a preset, exactly: controls a value widens show it."""
        self.form.value = values

    # -- racing line --------------------------------------------------------------------
    def _racing_toggled(self, change: dict[str, Any]) -> None:
        """On: the picture in effect is cooked again with its racing line; off: the line
        goes (nothing cooks)."""
        if change["new"]:
            self.canvas.racing_on = True
            self._loop.request(self._good if self._good is not None else self.form.value)
        else:
            self.canvas.race(None)

    def _racing_line(self, params: Params) -> dict[str, Any] | None:
        """The racing line of the cook of ``params`` just made when the toggle is on (None
        when off, or when it cannot be computed: ``racing_error`` says why)."""
        self.racing_error = ""
        if self.racing_toggle is None or not self.racing_toggle.value:
            return None
        try:
            racing = self.target.racing(params)
        except ProcgenError as exc:  # a track too narrow for the car, ...: said, not raised
            self.racing_error = f"racing line: {exc}"
            return None
        return racing

    # -- compare --------------------------------------------------------------------------
    def pin(self) -> Params:
        """Keeps the values in effect and their cook as ``pinned``: the canvas draws its
        tracks faintly behind the next cooks', and the counts show both, until ``unpin``.

        Raises:
            ProcgenError: when nothing has cooked yet.
        """
        frame = self.wait()
        if frame is None:
            raise ProcgenError("pin: expected a cooked picture, got none yet (a failed cook?)")
        self.pinned = self._good if self._good is not None else self.form.value
        self.pinned_frame = frame
        self.canvas.pin(frame)
        self._sync_buttons()
        return self.pinned

    def unpin(self) -> None:
        """Stops comparing: the pinned tracks and counts go."""
        self.pinned = None
        self.pinned_frame = None
        self.canvas.pin(None)
        self._sync_buttons()

    # -- the env clicked ------------------------------------------------------------------
    def _envs_drawn(self) -> int:
        """How many envs the frame in effect has (0 before the first cook)."""
        frame = self.frame
        envs = len(frame.valid) if frame is not None and frame.valid is not None else 0
        if frame is not None and frame.tracks is not None:
            envs = frame.tracks.shape[0]
        return envs

    def select(self, env: int) -> Selection:
        """Selects env ``env`` of the picture (what a click on it does): ``selected`` holds
        its index, seed, epoch and the code that rebuilds exactly that one track (a track
        generator's, a course's, or a graph's whose output drawn is a generator or course
        node's: ``selected.alone``). A graph drawing a node after its generator has no
        seed for the env (None) and its generator node's epoch; its code cooks the graph
        and names the env and the nodes between (``GraphTarget.select``).

        Raises:
            ParamsError: for an index (an integer, numpy's too) outside the envs drawn.
        """
        frame = self.frame
        envs = self._envs_drawn()
        if isinstance(env, bool) or not isinstance(env, numbers.Integral) or not 0 <= env < envs:
            raise ParamsError(f"select(env): expected an env index in [0, {envs - 1}], got {env!r}")
        env = int(env)
        params = self._good if self._good is not None else self.form.value
        seed, epoch, code = self.target.select(params, env)
        valid = None if frame.valid is None else bool(frame.valid[env])
        alone = bool(getattr(self.target, "alone", False))
        self.selected = Selection(
            env=env, seed=seed, epoch=epoch, valid=valid, code=code, alone=alone
        )
        self.canvas.selected = env
        return self.selected

    # -- timeline -------------------------------------------------------------------------
    def _play_tick(self, name: str, value: Any) -> None:
        try:
            self.update(**{name: value})
        except ParamsError as exc:  # past the field's bounds: stop there, say why
            self.form.show_message(name, str(exc))
            if self.play_control is not None:
                self.play_control.play.playing = False

    def play(
        self, field: str, values: Sequence[Any], *, interval: float = 0.0, timeout: float = 120.0
    ) -> list[Any]:
        """Cooks each value of ``field`` in order (the picture and counts follow each);
        returns the frames, one per value (the last good one where a cook failed).

        Args:
            field: a field of the view's Params.
            values: the values, each one the field accepts.
            interval: seconds to wait between two values once each has cooked (a finite
                number >= 0).
            timeout: seconds each cook may take (a finite number >= 0).

        Raises:
            ParamsError: for an unknown field, no values, a value the field refuses, or
                a refused interval or timeout (before anything cooks).
        """
        interval = check_number("play(interval)", interval, 0.0)
        timeout = check_number("play(timeout)", timeout, 0.0)
        values = check_play(self.form.params_class, field, values)
        frames = []
        for v in values:
            self.update(**{field: v})
            frames.append(self.wait(timeout))
            if interval > 0:
                time.sleep(interval)
        return frames

    def record(
        self,
        field: str,
        values: Sequence[Any],
        path: str | os.PathLike,
        *,
        fps: float = 4.0,
        timeout: float = 120.0,
    ) -> pathlib.Path:
        """Plays ``field`` over ``values`` and writes the pictures as a GIF or MP4 (by the
        suffix of ``path``) for a report; returns the path.

        Raises:
            ParamsError: as ``play``; for a path that is no path, has a suffix other
                than .gif or .mp4 or cannot be written, or an fps that is no finite
                number > 0 (before anything cooks).
        """
        p = _check_path("record(path)", path)
        if p.suffix.lower() not in (".gif", ".mp4"):
            raise ParamsError(f"record(path): expected a .gif or .mp4 file, got {str(p)!r}")
        if not (isinstance(fps, numbers.Real) and not isinstance(fps, bool)) or not (
            math.isfinite(fps) and fps > 0
        ):
            raise ParamsError(f"record(fps): expected a finite number > 0, got {fps!r}")
        check_number("record(timeout)", timeout, 0.0)
        values = check_play(self.form.params_class, field, values)
        _check_writable("record(path)", p)
        frames = self.play(field, values, timeout=timeout)
        pngs = [_render.tracks_png(f, max_envs=self.max_envs) for f in frames if f is not None]
        return write_movie(p, pngs, fps=fps)
