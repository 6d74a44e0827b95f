"""The ops that run on the device: ``device.kernel``, ``device.bound``, ``device.live``,
``device.guard``; and the count source ``device.count`` with ``count_min``/``count_max``.

``device.count`` is the project's spelling of the procgen ABI's ``proc.device.count``: it answers
a count held on the device (a one-word Column with a ``capacity``, a live count, an
appended output) or a number as a ``Count`` to do arithmetic on (``+``, ``-``, ``*`` with
numbers and other counts; ``count_min``/``count_max`` where the ABI writes ``min``/``max``).
It is no op: it wires nothing and moves nothing, its words are read as u32 where a kernel
or ``device.bound`` takes it.
"""

from ..counts import count, count_max, count_min
from ._kernel import kernel
from ._live import bound, guard, live

__all__ = ["bound", "count", "count_max", "count_min", "guard", "kernel", "live"]
