"""The variant preprocessor: keeps or removes ``# @when KEY value ... # @end`` blocks.

A block opens with ``# @when KEY value`` (several ``KEY value`` pairs on one line must all
hold; ``value`` may list alternatives as ``a|b``) and closes with ``# @end``. Blocks nest.
A kept block's lines stay as they are; a removed block's lines become blank lines, so line
numbers in Warp's error messages still match the asset's source.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..elements import ELEMENTS
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


#: a columns binding's packed layout: (column name, lanes) in the order they are packed
Layout = tuple[tuple[str, int], ...]
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_VEC = {e.lanes: e.wp_name for e in ELEMENTS.values() if e.lanes > 1}


def reads_by_name(source: str, binding: str) -> set[str]:
    """Returns the columns a kernel's source reads as ``<binding>_col_<column>``."""
    return set(re.findall(rf"\b{re.escape(binding)}_col_([A-Za-z0-9_]+)\s*\(", source))


def accessors(layouts: Mapping[str, Layout], where: str = "source") -> str:
    """Returns the Warp functions ``NAME_col_<column>(NAME, i)`` for packed columns bindings.

    A columns binding ``NAME`` is packed into a ``[rows, n]`` f32 buffer, one row per lane
    of each column in the binding's ``order`` (or sorted-name order); ``NAME_col_<column>``
    reads element ``i`` of the column from it: a ``float`` for a one-lane column (an Int or
    UInt column holds its values as floats), a ``wp.vec2f``/``vec3f``/``vec4f`` for a vector
    column, and 0 for an ``i`` outside the buffer. The text is appended to the variant's
    source, so the asset's line numbers stay as they are.

    Raises:
        BindingsFileError: a column name that is no identifier.
    """
    out: list[str] = []
    for name, layout in sorted(layouts.items()):
        row = 0
        for col, lanes in layout:
            if not _IDENT.match(col):
                raise BindingsFileError(
                    f"{where}: binding {name!r}: expected column names that are identifiers "
                    f"(read as {name}_col_<column>), got {col!r}"
                )
            fn = f"{name}_col_{col}"
            sig = f"def {fn}({name}: wp.array2d(dtype=wp.float32), i: int)"
            if lanes == 1:
                out += [
                    "",
                    "@wp.func",
                    f"{sig} -> float:",
                    f"    if i < 0 or i >= {name}.shape[1]:",
                    "        return 0.0",
                    f"    return {name}[{row}, i]",
                ]
            else:
                vec = _VEC[lanes]
                lanes_text = ", ".join(f"{name}[{row + k}, i]" for k in range(lanes))
                out += [
                    "",
                    "@wp.func",
                    f"{sig} -> {vec}:",
                    f"    if i < 0 or i >= {name}.shape[1]:",
                    f"        return {vec}()",
                    f"    return {vec}({lanes_text})",
                ]
            row += lanes
    if not out:
        return ""
    return "\n\n# -- generated: columns read by name (NAME_col_<column>) --" + "\n".join(out) + "\n"
