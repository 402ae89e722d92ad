"""The search pipeline, independent of the storage backend.

query text -> parsed query -> message hits (strict reading first when the user wrote syntax,
relaxed reading when that finds nothing) -> chain roots (one lineage query) -> ranked sessions.
A backend provides ``match_messages``, ``parents_of``, ``chain`` and ``root_of``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from langchain_session_recall.lineage import resolve_roots
from langchain_session_recall.models import MessageHit, SearchFilters
from langchain_session_recall.query import ParsedQuery, parse_query
from langchain_session_recall.ranking import RankedSession, rank_sessions

__all__ = ["HIT_LIMIT", "SearchBackend", "SearchOutcome", "search_sessions"]

HIT_LIMIT = 200
"""Message hits fetched per index and reading before ranking sessions (reference: 50)."""

QueryReading = Literal["natural", "strict", "relaxed"]


class SearchBackend(Protocol):
    """What the pipeline needs from a store."""

    def match_messages(
        self,
        query: ParsedQuery,
        reading: Literal["strict", "relaxed"],
        *,
        filters: SearchFilters = ...,
        limit: int = ...,
    ) -> list[MessageHit]: ...

    def parents_of(
        self, session_ids: Sequence[str], *, user_id: str | None = None
    ) -> dict[str, str | None]: ...

    def root_of(self, session_id: str, *, user_id: str | None = None) -> str: ...

    def chain(self, root_id: str, *, user_id: str | None = None) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """Ranked root sessions and how the query was read."""

    query: ParsedQuery
    reading: QueryReading
    sessions: list[RankedSession] = field(default_factory=list)

    @property
    def sessions_searched(self) -> int:
        """How many distinct root sessions matched (before the ``k`` cut)."""
        return len(self.sessions)


def search_sessions(
    backend: SearchBackend,
    text: str,
    *,
    role_filter: Sequence[str] = (),
    exclude_sources: Sequence[str] = ("tool",),
    current_session_id: str | None = None,
    user_id: str | None = None,
    after: float | None = None,
    before: float | None = None,
    hit_limit: int = HIT_LIMIT,
) -> SearchOutcome:
    """Rank the root sessions that match ``text``.

    Raises :class:`~langchain_session_recall.errors.EmptyQueryError` when ``text`` has nothing
    searchable.
    """
    query = parse_query(text)
    excluded: tuple[str, ...] = ()
    current_root: str | None = None
    if current_session_id:
        current_root = backend.root_of(current_session_id, user_id=user_id)
        excluded = tuple(dict.fromkeys([current_session_id, *backend.chain(current_root)]))
    filters = SearchFilters(
        role_filter=tuple(role_filter),
        exclude_sources=tuple(exclude_sources),
        exclude_session_ids=excluded,
        user_id=user_id,
        after=after,
        before=before,
    )
    readings: list[tuple[QueryReading, Literal["strict", "relaxed"]]] = (
        [("strict", "strict"), ("relaxed", "relaxed")]
        if query.explicit
        else [("natural", "relaxed")]
    )
    reading: QueryReading = readings[0][0]
    ranked: list[RankedSession] = []
    for reading, rendered in readings:  # noqa: B007 - the reading that ranked is reported
        hits = backend.match_messages(query, rendered, filters=filters, limit=hit_limit)
        if not hits:
            continue
        parents = backend.parents_of(list({h.session_id for h in hits}), user_id=user_id)
        roots = resolve_roots((h.session_id for h in hits), parents)
        ranked = rank_sessions(hits, roots, exclude_roots=[current_root] if current_root else [])
        if ranked:
            break
    return SearchOutcome(query=query, reading=reading, sessions=ranked)
