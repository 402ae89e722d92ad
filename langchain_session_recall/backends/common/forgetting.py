"""Forgetting sessions: each with its chain below it, in one transaction."""

from __future__ import annotations

from collections.abc import Iterable

from langchain_session_recall.backends import sql
from langchain_session_recall.backends.common.core import StoreCore
from langchain_session_recall.errors import (
    InvalidArgumentError,
)


class Forgetting(StoreCore):
    """Forgetting sessions: each with its chain below it, in one transaction."""

    def sessions_to_forget(
        self,
        session_ids: Iterable[str] | None = None,
        *,
        before: float | None = None,
        user_id: str | None = None,
        sources: Iterable[str] = (),
    ) -> list[str]:
        """What :meth:`delete_sessions` would remove for a selection, oldest first: the
        sessions meeting every given condition (among ``session_ids`` when given; started
        before ``before``; of ``user_id``; from one of ``sources``), each with its whole chain
        below it, whoever owns its members. Deletes nothing.

        Raises:
            ValueError: neither sessions nor a condition given (that would be everything).

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("a"), store.add_session("a/sub", parent_session_id="a")
            >>> store.sessions_to_forget(["a"])
            ['a', 'a/sub']
        """
        named = None if session_ids is None else list(dict.fromkeys(session_ids))
        wanted = tuple(dict.fromkeys(sources))
        if named is None and before is None and user_id is None and not wanted:
            raise InvalidArgumentError(
                "name sessions to forget, or give --before, --user or --source"
            )
        d = self.dialect
        selection, params = sql.matching_sessions(
            d, named=named is not None, before=before, user_id=user_id, sources=wanted
        )
        if named is not None:
            params["ids"] = d.array(named)
        with self._read() as conn:
            rows = conn.execute(sql.chains_below(d, selection), params).fetchall()
        return [str(r[0]) for r in rows]

    def delete_sessions(self, session_ids: Iterable[str]) -> int:
        """Forget sessions: each with its whole chain below it (sub-agents, continuations),
        in one transaction; returns how many sessions were removed (unknown ids count 0).

        Their messages leave the full-text indexes, their titles the header index; the recaps
        cached for them and for the chains above them (a recap covers its whole chain) are
        dropped; the import ledger keeps their keys with no message, so a re-import leaves
        them out unless asked (``reimport=True``, ``--reimport``). On SQLite the deleted rows'
        pages are zeroed; the words stay in the full-text index's segments until
        :meth:`optimize` merges them, which ``session-recall forget`` does.

        Raises:
            ReadOnlyStoreError: the store was opened read-only.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("a"), store.add_session("a/sub", parent_session_id="a")
            >>> store.delete_sessions(["a"]), store.get_session("a/sub")
            (2, None)
        """
        named = list(dict.fromkeys(session_ids))
        d = self.dialect
        self._before_delete()
        with self._write() as conn:
            if not named:
                return 0
            selection, params = sql.matching_sessions(
                d, named=True, before=None, user_id=None, sources=()
            )
            params["ids"] = d.array(named)
            doomed = [str(r[0]) for r in conn.execute(sql.chains_below(d, selection), params)]
            if not doomed:
                return 0
            ids = {"ids": d.array(doomed)}
            conn.execute(sql.lock_sessions(d), ids).fetchall()
            chains = conn.execute(sql.ancestors(d, user_scoped=False), ids).fetchall()
            above = {"ids": d.array([r[0] for r in chains])}
            conn.execute(sql.delete_of_sessions(d, "summary_cache"), above)
            conn.execute(sql.forget_ledger(d), ids)
            with self._deleting(conn, doomed):
                conn.execute(sql.delete_of_sessions(d, "messages"), ids)
                conn.execute(sql.delete_of_sessions(d, "sessions"), ids)
        return len(doomed)

    async def adelete_sessions(self, session_ids: Iterable[str]) -> int:
        """:meth:`delete_sessions`, run in LangChain's executor."""
        from langchain_core.runnables.config import run_in_executor

        return await run_in_executor(None, self.delete_sessions, list(session_ids))
