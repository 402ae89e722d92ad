"""The most recent root sessions, automation jobs listed once."""

from __future__ import annotations

from collections.abc import Iterable

from langchain_session_recall.backends import sql
from langchain_session_recall.backends.common.lineage import ChainReads
from langchain_session_recall.backends.common.rows import (
    RECENT_PARENT,
    recent_of,
)
from langchain_session_recall.core.automation import collapse_repeated_runs
from langchain_session_recall.models import (
    HIDDEN_SOURCES,
    RecentSession,
    SearchFilters,
)

_MIN_COLLAPSED_PAGE = 20  # rows read at once when automation runs are collapsed


class RecentListing(ChainReads):
    """The most recent root sessions, automation jobs listed once."""

    def recent_sessions(
        self,
        limit: int = 10,
        *,
        exclude_sources: Iterable[str] = HIDDEN_SOURCES,
        exclude_session_ids: Iterable[str] = (),
        user_id: str | None = None,
        after: float | None = None,
        before: float | None = None,
        collapse_sources: Iterable[str] = (),
        project: str | None = None,
        agents: Iterable[str] = (),
    ) -> list[RecentSession]:
        """Most recent root sessions with a preview of their first user message.

        The chains of ``exclude_session_ids`` (e.g. the current conversation) are left out.
        Sessions of ``collapse_sources`` (automation: ``("cron", "kanban")``) are listed once
        per job, as their newest run (:func:`~langchain_session_recall.core.automation.
        collapse_repeated_runs`); older runs are read past in pages, so a thousand newer cron
        runs never crowd out the conversations. ``project`` keeps to sessions in that directory
        or below it, ``agents`` to sessions those agents wrote (see :class:`SearchFilters`).
        """
        excluded = sorted({self.root_of(sid, user_id=user_id) for sid in exclude_session_ids})
        filters = SearchFilters(
            exclude_sources=tuple(exclude_sources),
            user_id=user_id,
            after=after,
            before=before,
            project=project,
            agents=tuple(agents),
        )
        collapse = frozenset(collapse_sources) - set(filters.exclude_sources)
        limit = max(0, int(limit))
        page = limit if not collapse else max(2 * limit, _MIN_COLLAPSED_PAGE)
        out: list[RecentSession] = []
        jobs: set[tuple[str, str, str]] = set()
        offset = 0
        while len(out) < limit:
            statement, params = sql.recent_sessions(
                self.dialect, filters, excluded, page, offset=offset
            )
            with self._read() as conn:
                rows = conn.execute(statement, params).fetchall()
            # A row with a parent is a cycle candidate (it started before its parent): kept
            # only if it is the root of a cycle, i.e. its first-started member.
            listed = [
                recent_of(row)
                for row in rows
                if row[RECENT_PARENT] is None or self._is_cycle_root(row[0])
            ]
            out += collapse_repeated_runs(listed, collapse, jobs) if collapse else listed
            if len(rows) < page:
                break
            offset += page
            page *= 2  # many automation runs in a row: read further faster
        return out[:limit]
