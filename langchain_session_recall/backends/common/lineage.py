"""Chains: parents, roots (parent cycles included), descendants and their messages."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain_session_recall.backends import sql
from langchain_session_recall.backends.common.reads import SessionReads
from langchain_session_recall.backends.common.rows import (
    message_of,
)
from langchain_session_recall.core.lineage import (
    chain_order,
    cycle_of,
    lineage_path,
    oldest,
    resolve_root,
    resolve_roots,
)
from langchain_session_recall.models import (
    StoredMessage,
)


class ChainReads(SessionReads):
    """Chains: parents, roots (parent cycles included), descendants and their messages."""

    def parents_of(
        self, session_ids: Iterable[str], *, user_id: str | None = None
    ) -> dict[str, str | None]:
        """``{session: parent}`` for the given sessions and all their ancestors (one query).

        With ``user_id``, the walk stops at a session of another user.
        """
        ids = list(dict.fromkeys(session_ids))
        if not ids:
            return {}
        d = self.dialect
        params: dict[str, Any] = {"ids": d.array(ids)}
        if user_id is not None:
            params["user_id"] = user_id
        with self._read() as conn:
            rows = conn.execute(sql.ancestors(d, user_scoped=user_id is not None), params)
            return {str(sid): parent for sid, parent in rows}

    def root_of(self, session_id: str, *, user_id: str | None = None) -> str:
        """Root of the session's chain (itself when it has no parent; a parent cycle written
        by another client: its :meth:`first_started` member)."""
        parents = self.parents_of([session_id], user_id=user_id)
        return resolve_root(session_id, parents, cycle_root=self.first_started)

    def roots_of(self, session_ids: Iterable[str], *, user_id: str | None = None) -> dict[str, str]:
        """``{session: root of its chain}`` for the given sessions (a search's candidates),
        read in one lineage query (none for no sessions); ``user_id`` as :meth:`parents_of`
        takes it, a parent cycle as :meth:`root_of` ends it.

        Example:
            >>> from langchain_session_recall import SessionStore
            >>> store = SessionStore(":memory:")
            >>> _ = store.add_session("a")
            >>> _ = store.add_session("b", parent_session_id="a")
            >>> store.roots_of(["b", "a", "b"])
            {'b': 'a', 'a': 'a'}
        """
        ids = list(dict.fromkeys(session_ids))
        parents = self.parents_of(ids, user_id=user_id)
        return resolve_roots(ids, parents, cycle_root=self.first_started)

    def first_started(self, session_ids: Sequence[str]) -> str:
        """The session of ``session_ids`` that started first (then the smallest id): the root
        of a parent cycle, in search and in recent mode alike."""
        sessions = self.get_sessions(session_ids)
        return oldest(session_ids, {sid: s.started_at for sid, s in sessions.items()})

    def _is_cycle_root(self, session_id: str) -> bool:
        """Whether the session is the root of a parent cycle (walks its ancestors)."""
        cycle = cycle_of(session_id, self.parents_of([session_id]))
        return bool(cycle) and self.first_started(cycle) == session_id

    def lineage(self, session_id: str) -> list[str]:
        """The session, its parent, ... up to the root (cycle-safe)."""
        return lineage_path(session_id, self.parents_of([session_id]))

    def chain(self, root_id: str, *, user_id: str | None = None) -> list[str]:
        """The root and all its descendants (cycle-safe), root first.

        With ``user_id``, empty unless the root belongs to that user, and sessions of other
        users (and what hangs below them) are left out.
        """
        d = self.dialect
        params: dict[str, Any] = {"root": root_id}
        with self._read() as conn:
            if user_id is not None:
                owner = conn.execute(sql.session_owner(d), {"id": root_id}).fetchone()
                if owner is None or owner[0] != user_id:
                    return []
                params["user_id"] = user_id
            rows = conn.execute(sql.descendants(d, user_scoped=user_id is not None), params)
            pairs = [(str(sid), parent) for sid, parent in rows]
        return chain_order(root_id, pairs) if pairs else []

    def chain_messages(self, root_id: str, *, user_id: str | None = None) -> list[StoredMessage]:
        """Messages of a root session and all its descendants, in time order.

        Tool output is clipped to its first and last 250 characters in SQL. With ``user_id``,
        sessions of other users are left out even when they sit inside the chain.
        """
        ids = self.chain(root_id, user_id=user_id)
        if not ids:
            return []
        d = self.dialect
        statement, params = sql.chain_messages(d)
        with self._read() as conn:
            rows = conn.execute(statement, {**params, "ids": d.array(ids)}).fetchall()
        return [message_of(r) for r in rows]

    def chain_outline(self, root_id: str, *, user_id: str | None = None) -> list[tuple[int, str]]:
        """``(message id, session id)`` of each message :meth:`chain_messages` returns, in its
        order, without reading their text: a search places its window on this first and reads
        only the messages the window needs (:meth:`chain_messages_by_id`)."""
        ids = self.chain(root_id, user_id=user_id)
        if not ids:
            return []
        d = self.dialect
        with self._read() as conn:
            rows = conn.execute(sql.chain_outline(d), {"ids": d.array(ids)}).fetchall()
        return [(int(mid), str(sid)) for mid, sid in rows]

    def chain_messages_by_id(self, message_ids: Sequence[int]) -> list[StoredMessage]:
        """The visible messages of ``message_ids`` as :meth:`chain_messages` returns them (tool
        output clipped), in no order; a message deleted meanwhile is missing."""
        if not message_ids:
            return []
        d = self.dialect
        statement, params = sql.messages_by_id(d)
        with self._read() as conn:
            rows = conn.execute(statement, {**params, "ids": d.array(list(message_ids))})
            return [message_of(r) for r in rows.fetchall()]
