"""Message hits per search term, for the benchmarks that score sessions their own way.

The library's search gathers these inside :func:`~langchain_session_recall.search.pipeline.
search_sessions`; the recall ablations and the LoCoMo experiments want them alone (the same
terms, typo corrections and prefixes), to rank them with another formula.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_session_recall.core.automation import AUTOMATION_SOURCES
from langchain_session_recall.core.query import MAX_QUERY_TERMS, ParsedQuery, search_terms
from langchain_session_recall.models import MessageHit, SearchFilters
from langchain_session_recall.search.candidates import term_hits
from langchain_session_recall.search.request import HIT_LIMIT, HITS_PER_SESSION, SESSIONS_PER_TERM

if TYPE_CHECKING:
    from langchain_session_recall.backends.base import SessionBackend

__all__ = ["match_terms"]


def match_terms(
    backend: SessionBackend,
    query: ParsedQuery,
    *,
    filters: SearchFilters | None = None,
    limit: int | None = HIT_LIMIT,
    per_session: int | None = HITS_PER_SESSION,
    sessions: int | None = SESSIONS_PER_TERM,
    automation_sources: Sequence[str] = AUTOMATION_SOURCES,
    expansions: dict[str, str] | None = None,
) -> dict[str, list[MessageHit]]:
    """Message hits of each search term of ``query`` matched alone (terms that match nothing
    are absent), a typo or a partial word searched as what it most likely meant:
    :func:`~langchain_session_recall.search.candidates.term_hits` of the query's
    :func:`~langchain_session_recall.core.query.search_terms`.

    Example:
        >>> from langchain_session_recall import SessionStore, parse_query
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1")
        >>> _ = store.add_messages("s1", [{"role": "user", "content": "kubernetes ingress"}])
        >>> sorted(match_terms(store, parse_query("kuberntes ingres")))
        ['ingres', 'kuberntes']
    """
    return term_hits(
        backend,
        search_terms(query, limit=MAX_QUERY_TERMS),
        filters=filters or SearchFilters(),
        limit=limit,
        per_session=per_session,
        sessions=sessions,
        automation_sources=automation_sources,
        expansions=expansions,
    )
