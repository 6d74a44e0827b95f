"""Deprecation warnings that point at the caller's code, not at procgen_nb's."""

from __future__ import annotations

import os
import sys
import threading
import warnings

_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PREFIXES = tuple({_PACKAGE + os.sep, os.path.realpath(_PACKAGE) + os.sep})
_once: set[str] = set()
_lock = threading.Lock()


def _stacklevel() -> int:
    """Returns the ``stacklevel`` that, given to ``warnings.warn`` by this function's
    caller, names the first frame outside the procgen_nb package."""
    frame = sys._getframe(2)  # the caller of the function that warns
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PREFIXES):
        frame = frame.f_back
        level += 1
    return level


def warn_at_caller(message: str, category: type[Warning] = DeprecationWarning) -> None:
    """Warns ``message``, attributed to the first frame outside the procgen_nb package."""
    warnings.warn(message, category, stacklevel=_stacklevel())


def warn_once(key: str, message: str, category: type[Warning] = DeprecationWarning) -> bool:
    """Warns like ``warn_at_caller`` the first time ``key`` is seen; returns True when it did."""
    with _lock:
        if key in _once:
            return False
        _once.add(key)
    warnings.warn(message, category, stacklevel=_stacklevel())
    return True


def _forget(key: str | None = None) -> None:
    """Forgets the keys already warned (all when None), so a test can see a warning again."""
    with _lock:
        if key is None:
            _once.clear()
        else:
            _once.discard(key)
