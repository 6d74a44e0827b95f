"""The base of what ``explore`` cooks, and a target made from a Python function.

A target states the Params class its form edits (``params_class``), the values it starts
from (``initial``), cooks one set of values into a ``Frame`` (``cook``), and writes the
Python that re-creates a set of values in a script (``code``).
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable, Mapping
from typing import Any

from .._traffic import collect
from ..errors import ParamsError
from ..params import Params
from .frame import Frame, ReportRow, frame_from, report_rows

#: called by a cook with (fraction done in [0, 1], what it is doing).
Progress = Callable[[float, str], None]


def _no_progress(fraction: float, text: str) -> None:
    """Ignores progress."""


def _literal(values: Mapping[str, Any], indent: str = "    ") -> str:
    if not values:
        return "{}"
    inner = "".join(f"{indent}    {k!r}: {v!r},\n" for k, v in values.items())
    return "{\n" + inner + indent + "}"


class Target(abc.ABC):
    """Base of the targets: a Params class to edit and a cook of one set of values.

    Attributes:
        name: what the view's title shows.
        params_class: the Params class the form edits.
        initial: the values the view starts from.
        group: whether the form groups ``"<group>.<name>"`` fields under headings.
    """

    name: str = ""
    params_class: type[Params]
    group: bool = False
    #: what the last cook returned (a TrackResult, a graph's cook result, ...), or None
    result: Any = None
    #: whether ``select``'s code rebuilds the env clicked alone (a batch of one env), or
    #: cooks the whole batch and names the env
    alone: bool = False
    #: whether ``racing`` draws a racing line (a target whose cook makes a TrackResult)
    races: bool = False

    @property
    def initial(self) -> Params:
        """The values the view starts from (the defaults unless a target says otherwise)."""
        return self.params_class()

    @abc.abstractmethod
    def cook(self, params: Params, progress: Progress = _no_progress) -> Frame:
        """Cooks ``params`` and returns the frame to draw."""

    def refresh(self) -> bool:
        """Updates ``params_class`` after a cook; True when its fields changed (a graph's
        cook finds its kernel-level parameters). Most targets have fixed fields."""
        return False

    @abc.abstractmethod
    def code(self, params: Params) -> str:
        """Returns Python source that re-creates ``params`` and the cook in a script."""

    def sections(self) -> list[tuple[str, list[str], bool]] | None:
        """The form's collapsible sections: (title, field names, open); None: none (or one
        per ``"<group>."`` prefix when ``group``)."""
        return None

    def kernel_keys(self) -> set[str]:
        """The fields that are kernel-level values (shown in a collapsed section)."""
        return set()

    def check(self, params: Params) -> tuple[str, str] | None:
        """Returns (field, why in words) for values that cannot cook together, before
        cooking; None when the target knows of no problem."""
        return None

    def reason_labels(self) -> dict[int, str]:
        """Bit -> short text of the reasons an env is invalid."""
        return {}

    def sweep_fields(self) -> dict[str, Any]:
        """The fields the view's sweep mode can move ({}: no sweep mode)."""
        return {}

    def sweep(self, params: Params, name: str, values: Any, num_envs: int, **kw: Any) -> Any:
        """Sweeps field ``name`` over ``values`` at ``params``; a ``SweepResult``."""
        raise ParamsError(f"sweep: expected a target that sweeps, got {type(self).__name__}")

    def live(self) -> bool:
        """True when the last cook read state that can move without a control moving (a
        graph's ``cpu.read`` digests): the view polls ``moved()`` then."""
        return False

    def moved(self) -> list[str]:
        """What moved since the last cook (nodes whose digest moved); nothing cooks."""
        return []

    def select(self, params: Params, env: int) -> tuple[int | None, int | None, str]:
        """Returns (seed, epoch, code) of env ``env`` of a cook of ``params``: the code
        cooks ``params`` and names that env (a target that can rebuild one env alone sets
        ``alone`` and says so: ``TrackTarget``, ``CourseTarget``, ``GraphTarget`` for a
        generator node's env)."""
        return None, None, self.code(params) + f"# the env you clicked: index {env} of the batch\n"

    def racing(self, params: Params) -> dict[str, Any] | None:
        """The racing line of the last cook (of ``params``) as the canvas draws it
        (``racing_arrays``), or None for a target with no track result."""
        return None

    def width(self, params: Params) -> float | None:
        """The track width of ``params`` (the clearance the hover shows), or None."""
        w = params.to_dict().get("track_width")
        return float(w) if isinstance(w, int | float) and w > 0 else None


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, Any]:
    t0 = time.perf_counter()
    with collect() as tr:
        out = fn()
    return out, (time.perf_counter() - t0) * 1e3, tr


class FunctionTarget(Target):
    """A Python function of a Params instance returning tracks (and gates, counts).

    Args:
        fn: ``fn(params) -> result``; the result holds ``xy`` (``[E, N, 2]`` or flat),
            ``valid``, optionally ``gates`` and ``counts``, as a mapping or attributes.
        params: the Params class (or an instance to start from) ``fn`` takes.
        name: the title (the function's name when None).

    Raises:
        ParamsError: when ``params`` is not a Params class or instance.
    """

    def __init__(self, fn: Callable[[Params], Any], params: type[Params] | Params, name: str = ""):
        if isinstance(params, Params):
            self.params_class, self._initial = type(params), params
        elif isinstance(params, type) and issubclass(params, Params):
            self.params_class, self._initial = params, params()
        else:
            raise ParamsError(f"explore(fn, params=...): expected a Params class, got {params!r}")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "function")

    @property
    def initial(self) -> Params:
        return self._initial

    def cook(self, params: Params, progress: Progress = _no_progress) -> Frame:
        progress(0.1, f"calling {self.name}")
        result, ms, tr = _timed(lambda: self.fn(params))
        self.result = result
        progress(0.9, "reading back")
        report = report_rows(_report_of(result)) or (
            ReportRow(self.name, ms, tr.launches, tr.readbacks, tr.builds, tr.uploads, tr.waits),
        )
        return frame_from(result, report=report, elapsed_ms=ms, traffic=tr)

    def code(self, params: Params) -> str:
        cls, fn = self.params_class, self.fn
        lines = []
        for obj in (cls, fn):
            mod = getattr(obj, "__module__", "__main__")
            if mod != "__main__":
                lines.append(f"from {mod} import {obj.__qualname__.split('.')[0]}")
        lines += [
            "",
            f"params = {cls.__qualname__}(**{_literal(params.to_dict(), '')})",
            f"result = {fn.__qualname__}(params)",
        ]
        return "\n".join(lines).lstrip("\n") + "\n"


def _report_of(result: Any) -> Any:
    if isinstance(result, Mapping):
        return result.get("report")
    return getattr(result, "report", None)
