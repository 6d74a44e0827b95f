"""A registered track generator as an ``explore`` target (``presets.track``)."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from .._traffic import collect
from ..errors import ParamsError, ProcgenError
from ..params import Field, Params, params_class
from .frame import Frame, ReportRow, frame_from, track_frame
from .target import Progress, Target, _literal, _no_progress

#: the width in metres the racing line takes a track to be (``racing_arrays``): the car
#: (``VehicleParams()``, 2 m wide) drives a track ``track_width`` world units wide as one of
#: this many metres
RACING_TRACK_M = 12.0
#: the track width (world units) of the racing line when the values name none
RACING_WIDTH = 0.05

#: the fields every track generator takes besides its own Params.
SHARED_FIELDS: dict[str, Field] = {
    "num_envs": Field(16, bounds=(1, 65536), soft=(1, 64), doc="environments generated at once"),
    "num_points": Field(
        128, bounds=(8, 65536), soft=(16, 512), step=8, doc="centerline points per env"
    ),
    "seed": Field(0, bounds=(0, 2**31 - 1), doc="seed of env 0 (env e uses seed + e)"),
    "epoch": Field(0, bounds=(0, 2**31 - 1), doc="mixed into every env's seed; new tracks"),
}


def _generator_params(obj: Any) -> type[Params] | None:
    if isinstance(getattr(obj, "Params", None), type):
        return obj.Params
    p = getattr(obj, "params", None)
    return p if isinstance(p, type) and issubclass(p, Params) else None


def _track_gen() -> Any:
    try:
        from ..track_gen import presets
    except ImportError as exc:
        raise ProcgenError(
            f"explore: expected procgen_nb.track_gen (presets.track) to cook a generator, "
            f"got ImportError: {exc}"
        ) from exc
    return presets


#: short labels of the bits of ``TrackResult.reason`` (``track_gen.pipeline.REASONS``).
_SHORT_REASONS = {
    1: "rejected",
    2: "not closed",
    4: "self-intersecting",
    8: "turning number",
    16: "turn radius",
    32: "clearance",
}


def _validity_fields() -> dict[str, Field]:
    try:
        from ..track_gen.config import ValidityParams
    except ImportError:
        return {}
    return dict(ValidityParams.fields())


def _reasons() -> dict[int, str]:
    try:
        from ..track_gen.pipeline import REASONS
    except ImportError:
        return {}
    return dict(REASONS)


#: bits -> ``[mask + 1, bits]`` table: row v says which bits value v has (reason_counts)
_BIT_TABLES: dict[tuple[int, ...], np.ndarray] = {}
#: (labels, prefix) -> the count names, in the order of the labels (reason_counts)
_NAMES: dict[tuple[tuple[tuple[int, str], ...], str], tuple[str, ...]] = {}


def reason_counts(reason: np.ndarray, labels: dict[int, str], prefix: str) -> dict[str, int]:
    """``{prefix + label: how many envs have that bit}`` for the bits of ``labels``.

    One ``np.bincount`` of the reason words (masked to the bits asked for) times a cached
    table of which bits each word has: no loop over envs or bits in Python.
    """
    if not labels:
        return {}
    key = tuple(labels)
    names = _NAMES.get((tuple(labels.items()), prefix))
    if names is None:
        names = _NAMES[(tuple(labels.items()), prefix)] = tuple(
            f"{prefix}{t}" for t in labels.values()
        )
    words = np.asarray(reason).reshape(-1)
    if not words.any():  # every env valid: nothing to count
        return dict.fromkeys(names, 0)
    mask = 0
    for bit in key:
        mask |= bit
    words = words.astype(np.int64) & mask
    if mask < 4096:
        table = _BIT_TABLES.get(key)
        if table is None:
            values = np.arange(mask + 1)[:, None]
            table = _BIT_TABLES[key] = ((values & np.array(key)) != 0).astype(np.int64)
        hits = np.bincount(words, minlength=mask + 1) @ table
    else:  # bits far apart: one comparison per env and bit
        hits = np.count_nonzero(words[:, None] & np.array(key), axis=0)
    return dict(zip(names, hits.tolist(), strict=True))


class TrackTarget(Target):
    """A registered track generator: its Params, the validity thresholds and the shared
    fields (``num_envs``, ``num_points``, ``seed``, ``epoch``).

    A change of a dynamic field or a validity threshold updates the generator in place
    (``TrackGenerator.update``: no new recording); any other change builds it again.

    Args:
        generator: the generator's registered name.
        gen_params: its Params class (None: it takes no generator_params).
        num_envs, num_points, seed: the starting values of the shared fields.
        spec: the Stage class or GeneratorSpec explored (a plugin's): the copied code
            imports it and registers it.

    Raises:
        ProcgenError: when ``procgen_nb.track_gen`` is not importable (at the first cook).
    """

    alone = True
    races = True

    def __init__(
        self,
        generator: str,
        gen_params: type[Params] | None,
        *,
        num_envs: int = 16,
        num_points: int = 128,
        seed: int = 0,
        spec: Any = None,
    ):
        self.name = generator
        self.generator = generator
        self.spec = spec
        own = dict(gen_params.fields()) if gen_params is not None else {}
        self._own = list(own)
        validity = {k: f for k, f in _validity_fields().items() if k not in own}
        self._validity = list(validity)
        shared = {k: f for k, f in SHARED_FIELDS.items() if k not in own and k not in validity}
        self._shared = list(shared)
        fields = {k: dataclasses.replace(f) for k, f in {**own, **validity, **shared}.items()}
        self.params_class = params_class(f"{_camel(generator)}ExploreParams", fields, generator)
        self._start = {"num_envs": num_envs, "num_points": num_points, "seed": seed}
        self._key: Any = None
        self._gen: Any = None
        self._labels: dict[int, str] | None = None  # reason bit -> short label, once
        self._last: Any = None  # (own, validity) of the generator as built or updated
        self._cooked: Any = None  # (params, their split) of the last prepared cook

    @property
    def initial(self) -> Params:
        return self.params_class(**{k: v for k, v in self._start.items() if k in self._shared})

    def sections(self) -> list[tuple[str, list[str], bool]]:
        out = []
        if self._own:
            out.append((f"{self.generator} parameters", list(self._own), True))
        if self._validity:
            out.append(("validity thresholds", list(self._validity), True))
        out.append(("batch (envs, points, seed)", list(self._shared), True))
        return out

    def reason_labels(self) -> dict[int, str]:
        if self._labels is None:
            self._labels = {
                b: _SHORT_REASONS.get(b, t.split(" (")[0]) for b, t in _reasons().items()
            }
        return dict(self._labels)

    def sweep_fields(self) -> dict[str, Field]:
        from .sweep_panel import sweepable

        fields = self.params_class.fields()
        return sweepable({k: fields[k] for k in [*self._own, *self._validity]})

    def sweep(
        self,
        params: Params,
        name: str,
        values: Any,
        num_envs: int,
        *,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        lock: Any = None,
        chunks: int = 10,
    ) -> Any:
        """Sweeps field ``name`` over ``values`` with the other values of ``params``:
        ``procgen_nb.track_gen.sweep`` on a generator of its own (``num_envs`` envs), in up
        to ``chunks`` calls so ``progress(done, total)`` moves; None when ``cancelled()``
        turns true between chunks. ``lock`` is held while the device works."""
        from ..track_gen import sweep as run_sweep
        from .sweep_panel import join_sweeps

        own, validity, shared = self._split(params)
        key = f"{'generator' if name in self._own else 'validity'}.{name}"
        hold = lock if lock is not None else contextlib.nullcontext()
        config = {k: v for k, v in shared.items() if k != "num_envs"}
        with hold:
            gen = _track_gen().track(
                generator=self.generator,
                generator_params=own or None,
                validity=validity or None,
                num_envs=num_envs,
                **config,
            )
        values = np.asarray(values)
        parts, done = [], 0
        for piece in np.array_split(values, max(1, min(chunks, len(values)))):
            if cancelled is not None and cancelled():
                return None
            with hold:
                parts.append(run_sweep(gen, {key: piece}, progress=False))
            done += len(piece)
            if progress is not None:
                progress(done, len(values))
        return join_sweeps(parts)

    def _split(self, params: Params) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        d = params.to_dict()
        return (
            {k: d[k] for k in self._own},
            {k: d[k] for k in self._validity},
            {k: d[k] for k in self._shared},
        )

    def _prepare(self, own: dict, validity: dict, shared: dict, progress: Progress) -> str:
        presets = _track_gen()
        build = {k: v for k, v in shared.items() if k != "epoch"}
        key = tuple(build.items())
        if self._gen is not None and key == self._key and (own, validity) == self._last:
            return "reused"  # the values of the last cook: nothing to compare field by field
        self._last = None
        if self._gen is not None and key == self._key:
            gen = self._gen
            changed_own = {k: v for k, v in own.items() if getattr(gen.params, k) != v}
            changed_val = {
                k: v for k, v in validity.items() if getattr(gen.config.validity, k) != v
            }
            if not changed_own and not changed_val:
                self._last = (own, validity)
                return "reused"
            progress(0.05, "updating the generator")
            rebuilt = gen.update(generator_params=changed_own or None, validity=changed_val or None)
            self._last = (own, validity)
            return "rebuilt" if rebuilt else "updated"
        progress(0.05, "building the generator (the first build compiles kernels)")
        self._gen, self._key = None, None
        self._gen = presets.track(
            generator=self.generator,
            generator_params=own or None,
            validity=validity or None,
            **shared,
        )
        self._key = key
        self._last = (own, validity)
        return "built"

    def cook(self, params: Params, progress: Progress = _no_progress) -> Frame:
        prev, self._cooked = self._cooked, None
        # one collector for the cook; each step's share from marks (nested collectors
        # would count every launch once more per level)
        with collect() as total:
            m0 = _mark(total)
            if (
                prev is not None
                and self._gen is not None
                and (params is prev[0] or params == prev[0])
            ):
                split, how = prev[1], "reused"  # the last cook's values: the generator as it is
            else:
                split = self._split(params)
                how = self._prepare(*split, progress)
            self._cooked = (params, split)
            own, validity, shared = split
            m1 = _mark(total)
            progress(0.6, "generating")
            result = self._gen.generate(epoch=shared.get("epoch"))
            self.result = result
            m2 = _mark(total)
            progress(0.85, "reading back")
            data = _read_result(result)
            m3 = _mark(total)
        rows = (
            _step(f"{self.generator}: {how}", m0, m1, reused=how == "reused"),
            _step("generate", m1, m2),
            _step("read back for the view", m2, m3),
        )
        elapsed = (m3[0] - m0[0]) * 1e3
        frame = reason = None
        if isinstance(data, _Drawn):  # xy, valid and reason as arrays: the frame directly
            try:
                frame = track_frame(
                    data.xy, data.valid, data.reason, report=rows, elapsed_ms=elapsed,
                    traffic=total,
                )  # fmt: skip
                reason = data.reason
            except ParamsError:  # another form: frame_from reads it
                data = data._asdict()
        if frame is None:
            frame = frame_from(
                data,
                num_envs=shared.get("num_envs"),
                report=rows,
                elapsed_ms=elapsed,
                traffic=total,
            )
            reason = data.get("reason") if isinstance(data, Mapping) else None
        if reason is not None:
            if self._labels is None:
                self.reason_labels()
            frame.counts.update(reason_counts(reason, self._labels, "invalid: "))
        return frame

    def racing(self, params: Params) -> dict[str, Any] | None:
        """The racing line of the TrackResult drawn (``racing_arrays``, at the validity's
        ``track_width``)."""
        if self.result is None or not hasattr(self.result, "attributes"):
            return None
        return racing_arrays(self.result, self.width(params))

    def select(self, params: Params, env: int) -> tuple[int | None, int | None, str]:
        """Env ``env`` of a batch is env 0 of a batch of one at seed ``seed + env`` (the
        same epoch and parameters): returns that seed, the epoch and its code."""
        d = params.to_dict()
        seed = int(d.get("seed", 0)) + int(env)
        epoch = int(d.get("epoch", 0))
        one = params.replace(**{k: v for k, v in (("num_envs", 1), ("seed", seed)) if k in d})
        code = self.code(one).replace(
            "result = generator.generate()\n",
            f"result = generator.generate()  # env {env} of the batch you explored\n",
        )
        return seed, epoch, code

    def code(self, params: Params) -> str:
        own, validity, shared = self._split(params)
        args = "".join(f"    {k}={v!r},\n" for k, v in shared.items())
        val = f"    validity={_literal(validity, '    ')},\n" if validity else ""
        return (
            "from procgen_nb.track_gen import presets\n"
            f"{_plugin_lines(self.spec)}"
            "\n"
            f"generator_params = {_literal(own, '')}\n"
            "generator = presets.track(\n"
            f"    generator={self.generator!r},\n"
            "    generator_params=generator_params,\n"
            f"{val}"
            f"{args}"
            ")\n"
            "result = generator.generate()\n"
        )


def _plugin_lines(spec: Any) -> str:
    """The import and ``registry.add`` a plugin generator needs in a script ("" for one
    that ships with procgen_nb)."""
    if spec is None:
        return ""
    if isinstance(spec, type):
        mod, name = spec.__module__, spec.__qualname__.split(".")[0]
    else:
        mod = getattr(getattr(spec, "generate", None), "__module__", None) or "__main__"
        name = _bound_name(spec, mod) or _bound_name(spec, "__main__") or "spec"
    if mod.startswith("procgen_nb."):
        return ""
    what = "Stage class" if isinstance(spec, type) else "GeneratorSpec"
    head = (
        f"# {name}: the {what} defined in your notebook\n"
        if mod == "__main__"
        else f"from {mod} import {name}\n"
    )
    return f"from procgen_nb.track_gen.plugin import registry\n{head}\nregistry.add({name})\n"


def _bound_name(obj: Any, module: str) -> str | None:
    import sys

    found = sys.modules.get(module)
    for k, v in vars(found).items() if found is not None else ():
        if v is obj and not k.startswith("_"):
            return k
    return None


def racing_arrays(result: Any, width: float | None) -> dict[str, np.ndarray]:
    """Returns the racing line of a ``TrackResult`` as the canvas draws it: ``xy`` ``[E, N,
    2]`` in world units (the line's metres over the scale), ``speed`` ``[E, N]`` m/s and
    ``lap_time`` ``[E]`` s (NaN for an env the line cannot drive) and the ``scale``
    (metres per world unit: a track ``width`` world units wide is ``RACING_TRACK_M``).

    ``track_gen.racing_line`` with ``VehicleParams()``, the result's own widths when it has
    them (``width_left`` / ``width_right``), else ``width`` (``RACING_WIDTH`` when None)
    half each side; three readbacks.

    Raises:
        ParamsError: what ``racing_line`` refuses.
    """
    from ..track_gen import racing_line

    w = float(width) if width else RACING_WIDTH
    scale = RACING_TRACK_M / w
    own = "width_left" in getattr(result, "attributes", {})
    half = None if own else w / 2.0
    line = racing_line(result, w_right=half, w_left=half, scale=scale)
    e, n, rb = line.num_envs, line.num_points, line.ctx.readback
    return {
        "xy": (rb(line.xy.data).reshape(e, n, 2) / scale).astype(np.float32),
        "speed": rb(line.speed.data).reshape(e, n),
        "lap_time": rb(line.lap_time.data).reshape(e),
        "scale": scale,
    }


class _Drawn(NamedTuple):
    """What the view draws of a track result, read back."""

    xy: np.ndarray
    valid: np.ndarray
    reason: np.ndarray


def _read_result(result: Any) -> Any:
    """Reads what the view draws of a track result back (centerlines, validity and
    reasons: three readbacks) as a ``_Drawn``; a dict with its gates when it has some;
    a result without those device arrays through its ``numpy()``."""
    if not hasattr(result, "numpy"):
        return result
    ctx = getattr(result, "ctx", None)
    gates = getattr(result, "gates", None)
    if ctx is not None and all(hasattr(result, k) for k in ("xy", "valid", "reason")):
        e, n = result.num_envs, result.num_points
        got = [ctx.readback(a) for a in (result.xy, result.valid, result.reason)]
        drawn = _Drawn(got[0].reshape(e, n, 2), got[1], got[2])
        if gates is None:
            return drawn
        data = drawn._asdict()
    else:
        data = dict(result.numpy())
    if gates is not None:
        data["gates"] = gates
    return data


def _mark(total: Any) -> tuple[float, int, int, int, int, int]:
    """The clock and the counters of the report at one point of a cook."""
    t = total
    return (time.perf_counter(), t.launches, t.readbacks, t.builds, t.uploads, t.waits)


def _step(name: str, a: tuple, b: tuple, reused: bool | None = None) -> ReportRow:
    """The report row of what happened between marks ``a`` and ``b``."""
    return ReportRow(
        name, (b[0] - a[0]) * 1e3, b[1] - a[1], b[2] - a[2], b[3] - a[3], b[4] - a[4],
        b[5] - a[5], reused,
    )  # fmt: skip


def _row(name: str, ms: float, tr: Any, reused: bool | None = None) -> ReportRow:
    return ReportRow(name, ms, tr.launches, tr.readbacks, tr.builds, tr.uploads, tr.waits, reused)


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.replace(".", "_").split("_") if p)
