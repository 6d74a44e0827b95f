"""The variant preprocessor: keeps or removes ``# @when KEY value ... # @end`` blocks.

A block opens with ``# @when KEY value`` (several ``KEY value`` pairs on one line must all
hold; ``value`` may list alternatives as ``a|b``) and closes with ``# @end``. Blocks nest.
A kept block's lines stay as they are; a removed block's lines become blank lines, so line
numbers in Warp's error messages still match the asset's source.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import BindingsFileError

_WHEN = re.compile(r"^\s*#\s*@when\s+(.+?)\s*$")
_END = re.compile(r"^\s*#\s*@end\s*$")


def _holds(spec: str, options: Mapping[str, str], where: str) -> bool:
    parts = spec.replace("=", " ").split()
    if len(parts) % 2:
        raise BindingsFileError(f"{where}: expected '# @when KEY value', got '# @when {spec}'")
    for key, value in zip(parts[::2], parts[1::2]):
        if key not in options:
            raise BindingsFileError(
                f"{where}: '# @when {spec}' names {key!r}, expected one of {sorted(options)}"
            )
        if options[key] not in value.split("|"):
            return False
    return True


def preprocess(source: str, options: Mapping[str, str], where: str = "source") -> str:
    """Returns ``source`` with the blocks whose condition does not hold blanked out.

    Args:
        source: the kernel's Python/Warp source.
        options: the variant's specialize choices (KEY -> value).
        where: the file name used in error messages.

    Raises:
        BindingsFileError: an unbalanced block, or a KEY the kernel does not specialize.
    """
    out: list[str] = []
    keep_stack: list[bool] = []
    for lineno, line in enumerate(source.splitlines(), 1):
        m = _WHEN.match(line)
        if m:
            parent = all(keep_stack)
            keep_stack.append(parent and _holds(m.group(1), options, f"{where}:{lineno}"))
            out.append("")
            continue
        if _END.match(line):
            if not keep_stack:
                raise BindingsFileError(f"{where}:{lineno}: expected '# @when' before '# @end'")
            keep_stack.pop()
            out.append("")
            continue
        out.append(line if all(keep_stack) else "")
    if keep_stack:
        raise BindingsFileError(
            f"{where}: expected '# @end' for every '# @when', got {len(keep_stack)} open"
        )
    return "\n".join(out) + "\n"


def when_holds(when: str | None, options: Mapping[str, str], where: str) -> bool:
    """Returns whether a binding's ``when`` holds: ``;`` separates alternatives, spaces join."""
    if not when:
        return True
    return any(_holds(alt.strip(), options, where) for alt in when.split(";") if alt.strip())
