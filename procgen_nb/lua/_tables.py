"""The tables a Lua state hands a script for columns and handles (a mixin of
``lua.state.LuaState``: its buffer tokens, its handle maps and their release)."""

from __future__ import annotations

import secrets
import weakref
from typing import Any

from ..columns import Column
from ..errors import LuaError
from .values import Handle, _lua_handle


class _Tables:
    """Buffer tables for columns and handle tables, kept by the ``LuaState`` they are
    mixed into (``_column_ids``, ``_columns``, ``_py_handles``, ``_lua_handles``,
    ``_pending``, ``_helpers``, ``_lock``, ``_depth``, ``_run``)."""

    def _buffer_table(self, col: Column, node: str | None) -> Any:
        tokens = self._column_ids.get(col)
        if tokens is None:
            tokens = {}
            self._column_ids[col] = tokens
        bid = tokens.get(node)
        if bid is None:
            bid = "buf-" + secrets.token_hex(16)
            tokens[node] = bid
            self._columns[bid] = col
        count = col.live.capacity if col.live is not None else len(col)
        entries: dict[str, Any] = {
            "buffer": bid,
            "type": col.type,
            "count": count,
            "lanes": col.lanes,
            "element": col.element(),
        }
        if col.live is not None:
            entries["live"] = True
            entries["capacity"] = col.live.capacity
        return self._table(entries)

    def _column_for(self, token: str, node: str | None) -> Column | None:
        """The column ``token`` names for ``node``, or None (another node's, or let go)."""
        col = self._columns.get(token)
        if col is None or self._column_ids.get(col, {}).get(node) != token:
            return None
        return col

    def _handle_table(self, h: Handle) -> Any:
        if h.origin == "lua" and h.lua_table is not None:
            return h.lua_table
        self._py_handles[h.id] = h
        return self._helpers.new_handle(None, None, h.id)

    def _handle_info(self, t: Any) -> tuple | None:
        info = self._helpers.handle_info(t)
        if info is None or not isinstance(info, tuple):
            return None
        return info

    def _handle_from_lua(self, kind: str, hid: int, value: Any, table: Any) -> Handle | None:
        if kind == "py":
            return self._py_handles.get(hid)
        h = self._lua_handles.get(hid)
        if h is None:
            release = _LuaRelease(weakref.ref(self), table)
            h = _lua_handle(value, release, f"lua{hid}", table)
            self._lua_handles[hid] = h
        return h

    def _release_lua(self, table: Any) -> None:
        with self._lock:
            if self._depth:
                self._pending.append(table)
                return
            self._run(self._helpers.release_handle, (table,), None, "handle release")

    def _release_pending(self) -> None:
        pending, self._pending = self._pending, []
        for table in pending:
            try:
                self._run(self._helpers.release_handle, (table,), None, "handle release")
            except LuaError as e:
                self.release_errors.append(e)


class _LuaRelease:
    """Releases a Lua-side handle in its state (deferred while a call is running)."""

    def __init__(self, state: weakref.ref, table: Any):
        self._state = state
        self._table = table

    def __call__(self) -> None:
        state, table = self._state(), self._table
        self._table = None
        if state is not None and table is not None:
            state._release_lua(table)
