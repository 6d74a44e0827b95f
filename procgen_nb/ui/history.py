"""The values a view went through (undo / redo), saved values and named presets.

``History`` keeps each set of values that took effect, in order, with a cursor: ``undo``
moves back one, ``redo`` forward; a new set after an undo drops the ones ahead of it (as
every editor does). ``save_values`` writes every value of a Params instance as JSON (not
only the changed ones), with the target's name and the Params class it belongs to;
``load_values`` reads such a file (or a dict) back into an instance of a Params class,
refusing names the class has not. ``Presets`` is a folder of such files, one per name.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ParamsError
from ..params import Params

#: the version of the values file this module writes and reads
FORMAT = 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


class History:
    """Sets of values in the order they took effect, with a cursor.

    Args:
        first: the values the view starts from.
        limit: the most sets kept (the oldest go first).
    """

    def __init__(self, first: Params, limit: int = 200):
        self._items: list[Params] = [first]
        self._at = 0
        self._limit = limit

    @property
    def items(self) -> list[Params]:
        """Every set kept, oldest first (the one in effect is ``items[index]``)."""
        return list(self._items)

    @property
    def index(self) -> int:
        """The position of the values in effect in ``items``."""
        return self._at

    def push(self, values: Params) -> None:
        """Records ``values`` as in effect (nothing when they are the ones in effect);
        drops what lay ahead of the cursor."""
        if values == self._items[self._at]:
            return
        del self._items[self._at + 1 :]
        self._items.append(values)
        if len(self._items) > self._limit:
            del self._items[0]
        self._at = len(self._items) - 1

    def retract(self, values: Params) -> None:
        """Takes ``values`` back out when they are the last set and in effect (they did
        not cook: the controls went back to the set before)."""
        if self._at > 0 and self._at == len(self._items) - 1 and self._items[self._at] == values:
            del self._items[self._at]
            self._at -= 1

    def can_undo(self) -> bool:
        """Whether an earlier set exists."""
        return self._at > 0

    def can_redo(self) -> bool:
        """Whether a later set exists (after an undo)."""
        return self._at < len(self._items) - 1

    def undo(self) -> Params | None:
        """Moves back one set; returns it (None at the first)."""
        if not self.can_undo():
            return None
        self._at -= 1
        return self._items[self._at]

    def redo(self) -> Params | None:
        """Moves forward one set; returns it (None at the last)."""
        if not self.can_redo():
            return None
        self._at += 1
        return self._items[self._at]

    def peek(self, step: int) -> Params | None:
        """Returns the set ``step`` places from the cursor (-1: what ``undo`` goes back
        to, 1: what ``redo`` goes to) without moving; None when there is none."""
        i = self._at + step
        return self._items[i] if 0 <= i < len(self._items) else None

    def move(self, step: int) -> None:
        """Moves the cursor ``step`` places (after the values there took effect).

        Raises:
            ParamsError: when no set lies ``step`` places from the cursor.
        """
        i = self._at + step
        if not 0 <= i < len(self._items):
            raise ParamsError(
                f"history: expected a step within [{-self._at}, "
                f"{len(self._items) - 1 - self._at}], got {step!r}"
            )
        self._at = i

    def convert(self, fn: Callable[[Params], Params]) -> None:
        """Replaces every set with ``fn(set)`` (the form's Params class changed: a graph's
        first cook found its kernel-level fields); the cursor stays where it is."""
        self._items = [fn(p) for p in self._items]


def values_json(params: Params, target: str = "") -> dict[str, Any]:
    """Returns what ``save_values`` writes: the format, the target, the Params class and
    every value (tuples as lists)."""
    values = {k: list(v) if isinstance(v, tuple) else v for k, v in params.to_dict().items()}
    return {
        "format": FORMAT,
        "target": target,
        "params": type(params).__name__,
        "values": values,
    }


def save_values(path: str | os.PathLike, params: Params, target: str = "") -> pathlib.Path:
    """Writes every value of ``params`` to ``path`` as JSON (atomically: a temporary file
    renamed over it); returns the path.

    Raises:
        ParamsError: when ``path`` names a folder or a place that cannot be written.
    """
    if not isinstance(path, str | os.PathLike):
        raise ParamsError(f"save: expected a file path (str or os.PathLike), got {path!r}")
    p = pathlib.Path(path)
    if p.is_dir():
        raise ParamsError(f"save: expected a file path, got the folder {str(p)!r}")
    text = json.dumps(values_json(params, target), indent=2, sort_keys=False) + "\n"
    tmp = p.with_name(f".{p.name}.tmp")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    except OSError as exc:
        with contextlib.suppress(OSError):  # no temporary file where no folder could be
            tmp.unlink(missing_ok=True)
        raise ParamsError(f"save: expected a writable file path, got {str(p)!r} ({exc})") from exc
    return p


def read_values(
    source: str | os.PathLike | Mapping[str, Any], target: str = ""
) -> tuple[dict[str, Any], str]:
    """Returns the values of ``source`` (a file ``save_values`` wrote, or a dict:
    ``{"values": {...}}`` or the values themselves) as a dict, with the words naming it in
    a message ("params file 'x.json'", "params").

    Raises:
        ParamsError: for a file that is missing or no such JSON, another format, or one
            written for another target than ``target`` (its ``"target"`` key; "" and a
            file without one: not checked); for a source that is neither a path nor a
            dict.
    """
    if not isinstance(source, str | os.PathLike | Mapping):
        raise ParamsError(
            "explore(params=...): expected a path to a file view.save wrote, or a dict of "
            f"values, got {source!r}"
        )
    if isinstance(source, Mapping):
        data: Any = dict(source)
        where = "params"
    else:
        p = pathlib.Path(source)
        where = f"params file {str(p)!r}"
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ParamsError(
                f"explore(params=...): expected an existing file, got {str(p)!r}"
            ) from None
        except (OSError, ValueError) as exc:
            raise ParamsError(
                f"{where}: expected JSON written by view.save, got {type(exc).__name__}: {exc}"
            ) from exc
    if isinstance(data, Mapping) and "values" in data and isinstance(data["values"], Mapping):
        if data.get("format", FORMAT) != FORMAT:
            raise ParamsError(f"{where}: expected format {FORMAT}, got {data.get('format')!r}")
        written = data.get("target") or ""
        if target and written and written != target:
            raise ParamsError(
                f"{where}: expected values saved for the target {target!r}, got values "
                f"saved for {written!r}"
            )
        data = data["values"]
    if not isinstance(data, Mapping):
        raise ParamsError(f"{where}: expected a mapping of values, got {data!r}")
    return dict(data), where


def load_values(
    source: str | os.PathLike | Mapping[str, Any],
    cls: type[Params],
    start: Params | None = None,
    target: str = "",
) -> Params:
    """Returns an instance of ``cls`` with the values of ``source``: a file
    ``save_values`` wrote, or a dict (``{"values": {...}}`` or the values themselves).
    Fields ``source`` leaves out keep ``start``'s values (an instance of ``cls``: the
    view's starting values), else ``cls``'s defaults.

    Raises:
        ParamsError: as ``read_values`` (``target``: the target the file must be saved
            for); for a name ``cls`` has not, or a value its field refuses (named with
            what is accepted).
    """
    data, where = read_values(source, target)
    fields = cls.fields()
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ParamsError(f"{where}: expected names among {sorted(fields)}, got {unknown}")
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    base = start if isinstance(start, cls) else cls()
    return base.replace(**values)


def load_for_target(
    target: Any, source: str | os.PathLike | Mapping[str, Any]
) -> tuple[Params, bool]:
    """Returns the values of ``source`` as an instance of ``target.params_class``, and
    whether that class changed on the way. A graph that never cooked knows its
    kernel-level fields (``kept.gather.TYPE``, ...) only after a cook: when ``source``
    names fields the class has not, the graph target cooks the values it knows first and
    takes its fields again (``refresh``), then reads them all. Fields ``source`` leaves
    out keep ``target.initial``'s values (what the explore options set).

    Raises:
        ParamsError: for names still unknown after that cook (naming them, and the
            cook's failure when it failed), or values the fields refuse.
    """
    cls = target.params_class
    name = getattr(target, "name", "") or ""
    data, where = read_values(source, name)
    fields = set(cls.fields())
    if getattr(target, "graph", None) is None or set(data) <= fields:
        return load_values(source, cls, target.initial, name), False
    known = load_values({k: v for k, v in data.items() if k in fields}, cls, target.initial)
    try:
        target.cook(known)
    except Exception as exc:  # the fields it would find stay unknown: say so
        kind = "" if isinstance(exc, ParamsError) else f"{type(exc).__name__}: "
        raise ParamsError(
            f"{where}: expected names among {sorted(fields)} (the graph's first cook, which "
            f"finds its kernel-level names, failed: {kind}{exc}), got {sorted(set(data) - fields)}"
        ) from exc
    remade = bool(target.refresh())
    return load_values(source, target.params_class, target.initial, name), remade


def keep_options(values: Params, initial: Params, options: Mapping[str, Any]) -> Params:
    """Returns ``values`` with the fields the explore ``options`` set (``num_envs``,
    ``seed``, ...; a course's ``course.<name>``) at ``initial``'s values: an option given
    with ``explore(params=file)`` wins over the file's value of its field."""
    fields, start = values.fields(), initial.to_dict()
    keep = {}
    for k in options:
        name = k if k in fields else f"course.{k}"
        if k not in ("name", "outputs") and name in fields and name in start:
            keep[name] = start[name]
    return values.replace(**keep) if keep else values


class Presets:
    """Named sets of values: one JSON file per name in ``folder``.

    Args:
        folder: where the files are (created on the first save).
    """

    def __init__(self, folder: str | os.PathLike):
        self.folder = pathlib.Path(folder)

    def __repr__(self) -> str:
        return f"Presets({str(self.folder)!r}, names={self.names()})"

    def path(self, name: str) -> pathlib.Path:
        """Returns the file of preset ``name``.

        Raises:
            ParamsError: for a name that is not letters, digits, ``_``, ``-`` or ``.``.
        """
        if not isinstance(name, str) or not _NAME.match(name):
            raise ParamsError(
                "preset name: expected letters, digits, '_', '-' or '.' (at most 100, "
                f"starting with a letter or digit), got {name!r}"
            )
        return self.folder / f"{name}.json"

    def names(self) -> list[str]:
        """Returns the names saved, sorted."""
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("*.json") if _NAME.match(p.stem))

    def save(self, name: str, params: Params, target: str = "") -> pathlib.Path:
        """Writes ``params`` as preset ``name``; returns its file."""
        return save_values(self.path(name), params, target)

    def load(self, name: str, cls: type[Params], target: str = "") -> Params:
        """Reads preset ``name`` as an instance of ``cls``.

        Raises:
            ParamsError: for a name not saved (naming those that are), or one saved for
                another target than ``target`` ("": not checked).
        """
        p = self.path(name)
        if not p.is_file():
            raise ParamsError(f"preset: expected one of {self.names()}, got {name!r}")
        return load_values(p, cls, target=target)
