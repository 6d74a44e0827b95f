"""``_Arrays``: every array a ``TrackGenerator`` allocates, named, and the shares of them
that the worker threads of a split call run over.

A pipeline allocates its per-env arrays (the tracks, the raw loops, the scratch of the
resample and the validity stage, a Stage's ``b.scratch`` buffers...) through one
``_Arrays``, each under a key. A worker thread's part of a split CPU call (``_threads``)
is a pipeline over a contiguous share of the envs, ``[offset, offset + E)``: its
``_Arrays`` is made with ``share_of(parent, offset, E)`` and hands out, for each key, the
view of the parent's array that holds its envs, so a split call allocates what the one
call allocates (not the parts' arrays beside the parent's: the memory doubled), and the
parts write the parent's outputs in place.

A per-env array is env-major: ``n`` elements per env, env ``e``'s at ``[e*n, (e+1)*n)``
(or rows ``e`` of a 2-d shape). A share takes the view when the parent's array has the
key, the dtype, the trailing shape and ``n`` elements per env; anything else (a table of
a fixed size, not sized by the env count) is the share's own, allocated here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import warp as wp


def _shape(shape: int | tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(d) for d in shape) if isinstance(shape, tuple | list) else (int(shape),)


#: the Warp dtype of a Python scalar type, as ``wp.zeros(dtype=...)`` takes it
_SCALARS = {float: wp.float32, int: wp.int32, bool: wp.bool}


class _Arrays:
    """The named arrays of one pipeline, or views of a parent's for a share of its envs.

    Args:
        device: the device every array is on.
        num_envs: the envs of the pipeline (of the share, for one).

    Attributes:
        nbytes: the bytes this one allocated itself (a share's views count none).
    """

    def __init__(self, device: Any, num_envs: int):
        self.device = device
        self.num_envs = int(num_envs)
        self.nbytes = 0
        self._parent: _Arrays | None = None
        self._offset = 0
        self._arrays: dict[Hashable, wp.array] = {}
        self._shared: dict[Hashable, Any] = {}

    @classmethod
    def share_of(cls, parent: _Arrays, offset: int, num_envs: int) -> _Arrays:
        """The arrays of the share ``[offset, offset + num_envs)`` of ``parent``'s envs."""
        share = cls(parent.device, num_envs)
        share._parent, share._offset = parent, int(offset)
        return share

    @property
    def is_share(self) -> bool:
        """True for a share of a parent's envs (a worker thread's part of a split call)."""
        return self._parent is not None

    def _view(self, key: Hashable, shape: tuple[int, ...], dtype: Any) -> wp.array | None:
        """The parent's array ``key`` cut to this share's envs, or None when it has no
        such array of ``dtype`` and ``shape``'s per-env size."""
        parent = self._parent
        if parent is None:
            return None
        dtype = _SCALARS.get(dtype, dtype)
        arr = parent._arrays.get(key)
        if arr is None or arr.dtype != dtype or tuple(arr.shape[1:]) != shape[1:]:
            return None
        E, n = parent.num_envs, arr.shape[0]
        if n % E or shape[0] != n // E * self.num_envs:
            return None
        per = n // E
        return arr[self._offset * per : (self._offset + self.num_envs) * per]

    def _keep(self, key: Hashable, arr: wp.array) -> wp.array:
        self._arrays[key] = arr
        self.nbytes += arr.capacity
        return arr

    def zeros(self, key: Hashable, shape: int | tuple[int, ...], dtype: Any) -> wp.array:
        """A zeroed array ``key`` (a share's: the parent's view, as it holds it now)."""
        shape = _shape(shape)
        view = self._view(key, shape, dtype)
        if view is not None:
            return view
        return self._keep(key, wp.zeros(shape, dtype=dtype, device=self.device))

    def full(self, key: Hashable, shape: int | tuple[int, ...], value: Any, dtype: Any) -> wp.array:
        """An array ``key`` filled with ``value`` (a share's: the parent's view)."""
        shape = _shape(shape)
        view = self._view(key, shape, dtype)
        if view is not None:
            return view
        return self._keep(key, wp.full(shape, value, dtype=dtype, device=self.device))

    def values(self, key: Hashable, values: np.ndarray, dtype: Any) -> wp.array:
        """An array ``key`` holding ``values`` (a share's: the parent's view)."""
        view = self._view(key, tuple(values.shape), dtype)
        if view is not None:
            return view
        return self._keep(key, wp.array(values, dtype=dtype, device=self.device))

    def shared(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The one object ``key`` of the pipeline (a one-word buffer, a dict of them) that
        every share uses as it is: ``make()`` the first time, the parent's for a share."""
        if self._parent is not None:
            return self._parent.shared(key, make)
        if key not in self._shared:
            self._shared[key] = make()
        return self._shared[key]

    def scratch(self, prefix: str) -> Callable[[str, Any, tuple[int, ...]], wp.array]:
        """The allocator of a Stage's ``b.scratch`` buffers, under ``(prefix, name)``."""

        def alloc(name: str, dtype: Any, shape: tuple[int, ...]) -> wp.array:
            return self.zeros((prefix, name), shape, dtype)

        return alloc


__all__ = ["_Arrays"]
