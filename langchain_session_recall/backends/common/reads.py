"""Sessions and messages read by id."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from langchain_session_recall.backends import sql
from langchain_session_recall.backends.common.core import StoreCore
from langchain_session_recall.backends.common.rows import (
    message_of,
    session_of,
)
from langchain_session_recall.models import (
    Session,
    StoredMessage,
)


class SessionReads(StoreCore):
    """Sessions and messages read by id."""

    def get_session(self, session_id: str) -> Session | None:
        """The session with this id, or ``None``."""
        with self._read() as conn:
            row = conn.execute(sql.session_by_id(self.dialect), {"id": session_id}).fetchone()
        return session_of(row) if row else None

    def get_sessions(self, session_ids: Iterable[str]) -> dict[str, Session]:
        """Sessions by id (one query); unknown ids are absent from the result."""
        ids = list(dict.fromkeys(session_ids))
        if not ids:
            return {}
        d = self.dialect
        with self._read() as conn:
            rows = conn.execute(sql.sessions_by_id(d), {"ids": d.array(ids)}).fetchall()
        return {str(row[0]): session_of(row) for row in rows}

    def message_parts(self, message_ids: Iterable[int]) -> dict[int, list[Any]]:
        """The whole content lists of those of these messages that held more than text (an
        image, audio), as they were given; the text of every message is its ``content``.

        Example:
            >>> from langchain_core.messages import HumanMessage
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("s")
            >>> image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}
            >>> asked = HumanMessage([{"type": "text", "text": "hi"}, image])
            >>> [i] = store.add_messages("s", [asked])
            >>> store.get_messages("s")[0].content, store.message_parts([i])[i][1] == image
            ('hi', True)
        """
        ids = list(dict.fromkeys(message_ids))
        d = self.dialect
        with self._read() as conn:
            if not ids or not conn.execute(sql.message_parts_exist(d)).fetchone()[0]:
                return {}
            rows = conn.execute(sql.message_parts_of(d), {"ids": d.array(ids)}).fetchall()
        found: dict[int, list[Any]] = {}
        for message_id, parts in rows:
            try:
                value = json.loads(parts)
            except (TypeError, ValueError, RecursionError):
                continue  # another writer's junk: the message's text stands
            if isinstance(value, list):
                found[int(message_id)] = value
        return found

    def all_session_ids(self) -> list[str]:
        """Ids of every session, oldest first."""
        with self._read() as conn:
            rows = conn.execute(sql.all_session_ids(self.dialect)).fetchall()
        return [str(r[0]) for r in rows]

    def get_messages(self, session_id: str, *, last: int | None = None) -> list[StoredMessage]:
        """All visible messages of one session, oldest first; with ``last``, only the newest
        ``last`` of them (still oldest first), read without reading the rest."""
        if last is not None and last <= 0:
            return []
        statement = sql.session_messages(self.dialect, newest_first=last is not None)
        params: dict[str, Any] = {"sid": session_id}
        if last is not None:
            params["last"] = int(last)
        with self._read() as conn:
            rows = conn.execute(statement, params).fetchall()
        messages = [message_of(r) for r in rows]
        return messages[::-1] if last is not None else messages
