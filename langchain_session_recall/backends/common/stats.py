"""Statistics (cheap) and the integrity check (grows with the store)."""

from __future__ import annotations

from typing import Any

from langchain_session_recall.backends import sql
from langchain_session_recall.backends.common.core import StoreCheck, StoreCore
from langchain_session_recall.backends.common.rows import (
    count_of,
)
from langchain_session_recall.models import (
    as_float,
)


class Statistics(StoreCore):
    """Statistics (cheap) and the integrity check (grows with the store)."""

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        """Counts, sources, date range and size: cheap, whatever the store's size (no
        integrity check; see :meth:`check`). With ``user_id``, the counts and dates are of
        that user's sessions and their messages (``size_bytes`` stays the store's).
        ``vectors``: the passage vectors of hybrid search (windows, model, window layout,
        dimensions), or ``None`` when the store holds none.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("a", user_id="ana"), store.add_session("b", user_id="bob")
            >>> store.stats()["sessions"], store.stats(user_id="ana")["sessions"]
            (2, 1)
        """
        queries = sql.stats_queries(self.dialect, scoped=user_id is not None)
        params = {"user_id": user_id}
        with self._read() as conn:
            sessions, first, last = conn.execute(queries.sessions, params).fetchone()
            messages = conn.execute(queries.messages, params).fetchone()[0]
            sources = conn.execute(queries.sources, params).fetchall()
            roots = conn.execute(queries.roots, params).fetchone()[0]
            size = self._size_bytes(conn)
            vectors = self._vector_figures(conn, user_id)
        return {
            "store": self.describe(),
            "backend": self.dialect.name,
            "user_id": user_id,
            "sessions": count_of(sessions),
            "root_sessions": count_of(roots),
            "messages": count_of(messages),
            "sources": {str(k): count_of(v) for k, v in sources},
            "first_started_at": None if first is None else as_float(first),
            "last_started_at": None if last is None else as_float(last),
            "size_bytes": int(size),
            "layout": self._layout_name(),
            "vectors": vectors,
        }

    def _vector_figures(self, conn: Any, user_id: str | None) -> dict[str, Any] | None:
        """The passage vectors a hybrid search reads (``docs/hybrid.md``): how many windows
        have one, the model and the window layout that made them; ``None`` when the store has
        never held any (a lexical store, a foreign file)."""
        from langchain_session_recall.backends.vectors import statements as vs

        recorded = vs.recorded_model(conn, self.dialect)
        if recorded is None:
            return None
        scoped = user_id is not None
        windows = conn.execute(vs.count_windows(self.dialect, scoped=scoped), {"user_id": user_id})
        return {
            "windows": count_of(windows.fetchone()[0]),
            "model": recorded.model,
            "window": recorded.window,
            "dimensions": recorded.dim,
        }

    def count_users(self, *, up_to: int = 2) -> int:
        """How many distinct users own sessions here, counted up to ``up_to`` (cheap: it
        stops at the ``up_to``-th; sessions without a ``user_id`` do not count). The tool
        uses it to warn when a store shared by several users is searched without a tenant.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("a", user_id="ana"), store.add_session("b", user_id="bob")
            >>> store.count_users(), store.count_users(up_to=1)
            (2, 1)
        """
        with self._read() as conn:
            row = conn.execute(sql.count_users(self.dialect), {"limit": max(0, int(up_to))})
            return count_of(row.fetchone()[0])

    def _layout_name(self) -> str:
        return "own"

    def check(self) -> StoreCheck:
        """Check the store's integrity: its full-text index against the messages, the file
        (SQLite), that each session's ``message_count`` matches its messages, and that every
        passage vector of hybrid search can be read (finite, of the store's size). Its cost
        grows with the store; :meth:`stats` is the cheap view.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> open_store(":memory:").check().ok
            True
        """
        index = self._index_check()
        checked, problems = list(index.checked), list(index.problems)
        from langchain_session_recall.backends.vectors import health

        with self._read() as conn:
            vectors = health.problems(conn, self.dialect)
        if vectors is not None:  # a store with passage vectors: each one readable
            checked.append("passage vectors")
            problems += vectors
        if self._layout_name() == "own":  # foreign files count messages their own way
            with self._read() as conn:
                wrong = [str(r[0]) for r in conn.execute(sql.WRONG_MESSAGE_COUNTS)]
                dangling_sql = sql.ledger_without_messages(runs=self._has_import_runs())
                dangling = count_of(conn.execute(dangling_sql).fetchone()[0])
            checked.append("session message counts")
            if wrong:
                problems.append(
                    "message_count disagrees with the stored messages for session(s) "
                    + ", ".join(wrong)
                )
            checked.append("import ledger")
            if dangling:
                problems.append(
                    f"{dangling} import ledger key(s) name a message the store lacks (deleted "
                    "by another client): a re-import will not add those messages again"
                )
        return StoreCheck(ok=not problems, checked=tuple(checked), problems=tuple(problems))
