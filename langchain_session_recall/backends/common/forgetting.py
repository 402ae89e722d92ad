"""Forgetting sessions: each with its chain below it, in one transaction."""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Collection, Iterable
from typing import Any, Protocol, runtime_checkable

from langchain_session_recall.backends import sql
from langchain_session_recall.backends.common.core import StoreCore
from langchain_session_recall.errors import (
    InvalidArgumentError,
)
from langchain_session_recall.models import Forgotten

logger = logging.getLogger(__name__)


@runtime_checkable
class ForgettingCache(Protocol):
    """A cache of recaps outside the store (a summarizer's side file, its memory) that
    :meth:`Forgetting.delete_sessions` empties of the sessions it forgets."""

    def forget_sessions(self, session_ids: Collection[str]) -> None:
        """Drop every entry made for one of ``session_ids`` (roots of recapped chains)."""
        ...


_SIDE_CACHES: dict[str, weakref.WeakSet[ForgettingCache]] = {}
_SIDE_CACHES_LOCK = threading.Lock()


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
        below it; with ``user_id``, only that user's part of it (the walk down stops at a
        session of anyone else). Deletes nothing.

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
        below = sql.chains_below(d, selection, user_scoped=user_id is not None)
        with self._read() as conn:
            rows = conn.execute(below, params).fetchall()
        return [str(r[0]) for r in rows]

    def delete_sessions(
        self, session_ids: Iterable[str], *, user_id: str | None = None
    ) -> Forgotten:
        """Forget sessions: each with its whole chain below it (sub-agents, continuations),
        in one transaction; returns how many sessions were removed (unknown ids count 0), as
        a :class:`~langchain_session_recall.models.Forgotten` that also names them.

        With ``user_id``, only that user's sessions go: a named session of anyone else is left
        alone, and so is every session below one that is not the user's (another user's, or
        one with no user); they are listed in ``kept``. A kept session whose parent goes
        hangs below its nearest ancestor left, or becomes a root.

        Their messages leave the full-text indexes, their titles the header index; the recaps
        cached for them and for the chains above them (a recap covers its whole chain) are
        dropped, in the store and in the side caches registered with it
        (:meth:`register_summary_cache`); the import ledger keeps their keys with no message,
        so a re-import leaves them out unless asked (``reimport=True``, ``--reimport``). On
        SQLite the freed pages are zeroed; the words stay in the full-text index's segments
        until :meth:`optimize` merges them, which ``session-recall forget`` does.

        Raises:
            ReadOnlyStoreError: the store was opened read-only.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("a", user_id="ana")
            >>> _ = store.add_session("a/sub", parent_session_id="a", user_id="ana")
            >>> _ = store.add_session("a/bob", parent_session_id="a", user_id="bob")
            >>> done = store.delete_sessions(["a"], user_id="ana")
            >>> done == 2, done.kept, store.get_session("a/bob").parent_session_id
            (True, ('a/bob',), None)
        """
        named = list(dict.fromkeys(session_ids))
        d = self.dialect
        self._before_delete()
        with self._write() as conn:
            if not named:
                return Forgotten()
            selection, params = sql.matching_sessions(
                d, named=True, before=None, user_id=user_id, sources=()
            )
            params["ids"] = d.array(named)
            below = sql.chains_below(d, selection, user_scoped=user_id is not None)
            doomed = [str(r[0]) for r in conn.execute(below, params)]
            if not doomed:
                return Forgotten()
            ids = {"ids": d.array(doomed)}
            conn.execute(sql.lock_sessions(d), ids).fetchall()
            chains = conn.execute(sql.ancestors(d, user_scoped=False), ids).fetchall()
            above = [str(r[0]) for r in chains]
            kept = self._keep_children(conn, doomed, {str(r[0]): r[1] for r in chains})
            conn.execute(sql.delete_of_sessions(d, "summary_cache"), {"ids": d.array(above)})
            for statement in sql.forget_ledger(d):
                conn.execute(statement, ids)
            with self._deleting(conn, doomed):
                conn.execute(sql.delete_of_sessions(d, "messages"), ids)
                conn.execute(sql.delete_of_sessions(d, "sessions"), ids)
        self._forget_in_side_caches(above)
        return Forgotten(doomed, kept=kept)

    def _keep_children(
        self, conn: Any, doomed: list[str], parents: dict[str, str | None]
    ) -> list[str]:
        """Hang each session left whose parent goes below its nearest ancestor left (or make
        it a root); the sessions left below the doomed ones, oldest first."""
        d = self.dialect
        gone = set(doomed)
        children = conn.execute(sql.children_left(d), {"ids": d.array(doomed)}).fetchall()
        for child, parent in children:
            seen: set[str] = set()
            while parent is not None and parent in gone and parent not in seen:
                seen.add(parent)  # a cycle another client wrote ends the walk
                parent = parents.get(parent)
            parent = None if parent in gone else parent
            conn.execute(sql.set_parent(d), {"id": child, "parent": parent})
        if not children:
            return []
        named, _ = sql.matching_sessions(d, named=True, before=None, user_id=None, sources=())
        roots = {"ids": d.array([str(r[0]) for r in children])}
        return [str(r[0]) for r in conn.execute(sql.chains_below(d, named), roots)]

    def register_summary_cache(self, cache: ForgettingCache) -> None:
        """Have :meth:`delete_sessions` of this database (through any store this process opens
        on it, read-only or not) drop from ``cache`` the recaps of the chains it changes.

        A :class:`~langchain_session_recall.summarize.summarizer.SessionSummarizer` registers
        its side file (``cache_path=``) and its memory cache with its store. The registration
        lasts as long as ``cache`` does (the store keeps no strong reference to it).

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> from langchain_session_recall.summarize.cache import InMemorySummaryCache
            >>> store, cache = open_store(":memory:"), InMemorySummaryCache()
            >>> _ = store.add_session("a")
            >>> cache.put("k", "a recap", session_id="a", model=None)
            >>> store.register_summary_cache(cache)
            >>> _ = store.delete_sessions(["a"])
            >>> cache.get("k") is None
            True
        """
        with _SIDE_CACHES_LOCK:
            _SIDE_CACHES.setdefault(self._database_key(), weakref.WeakSet()).add(cache)

    def _database_key(self) -> str:
        """What names this store's database among the stores of this process."""
        return self.describe()

    def _forget_in_side_caches(self, session_ids: list[str]) -> None:
        with _SIDE_CACHES_LOCK:
            caches = list(_SIDE_CACHES.get(self._database_key(), ()))
        for cache in caches:
            try:
                cache.forget_sessions(session_ids)
            except Exception as exc:  # the store's own rows are gone; say what was not
                logger.warning(
                    "recaps of %d forgotten session(s) left in %r (%s: %s): they can no longer "
                    "be served (their transcript is gone), but delete the file to remove them",
                    len(session_ids),
                    cache,
                    type(exc).__name__,
                    exc,
                )

    async def adelete_sessions(
        self, session_ids: Iterable[str], *, user_id: str | None = None
    ) -> Forgotten:
        """:meth:`delete_sessions`, run in LangChain's executor."""
        from langchain_core.runnables.config import run_in_executor

        ids = list(session_ids)
        return await run_in_executor(None, lambda: self.delete_sessions(ids, user_id=user_id))
