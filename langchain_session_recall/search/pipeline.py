"""The search pipeline, independent of the storage backend.

query text -> parsed query -> message hits -> chain roots (one lineage query per set of
sessions found) -> ranked sessions. The store is any
:class:`~langchain_session_recall.backends.base.SessionBackend`, asked by the stages:
:mod:`~langchain_session_recall.search.candidates` its full text, its chains and the live
conversation's (``match_messages``, ``match_sessions``, ``parents_of``, ``root_of``,
``chain``), :mod:`~langchain_session_recall.search.correction` its vocabulary (for a word that
matched nothing), :mod:`~langchain_session_recall.search.dense` its vector index. One pass,
each stage once, in this order: the request, its filters and its query, read by the caller
(:meth:`~langchain_session_recall.search.request.SearchRequest.prepare`), the time the query
names (:mod:`~langchain_session_recall.search.time_hints`), candidates, ranking
(:mod:`~langchain_session_recall.search.ranking`), then for a hybrid search the dense half
(:mod:`~langchain_session_recall.search.dense`) and the blend
(:mod:`~langchain_session_recall.search.blend`).

* Syntax the user wrote on purpose (quotes, ``AND``, ``NOT``, ``deploy*``) is honoured first:
  the strict reading, ranked by its message hits. A query that only joins terms with ``OR``
  (as agents often write) means "any of these" and is ranked by term coverage below.
* Otherwise (a question, keywords, or a strict reading that found nothing) every search term
  is matched on its own (:func:`~langchain_session_recall.core.query.search_terms`: content words,
  CJK words and bigrams), so the ranking knows which terms each session covered
  (:func:`~langchain_session_recall.search.ranking.rank_by_terms`). A term nothing matches is
  retried as the closest indexed words (``kuberntes`` -> ``kubernet``) when the backend can
  list its vocabulary, then as a prefix (``kube`` -> ``kube*``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from langchain_session_recall.core.query import ParsedQuery
from langchain_session_recall.search.blend import blend
from langchain_session_recall.search.candidates import (
    MAX_STORE_QUERIES,
    leave_out,
    recent_roots,
    strict_candidates,
    term_candidates,
)
from langchain_session_recall.search.dense import DenseSearch, dense_evidence
from langchain_session_recall.search.ranking import (
    RankedSession,
    TermWeights,
    rank_by_terms,
    rank_sessions,
)
from langchain_session_recall.search.request import PreparedSearch, SearchRequest, as_request
from langchain_session_recall.search.time_hints import TimeHint, parse_time_hint, time_prior

if TYPE_CHECKING:
    from langchain_session_recall.backends.base import SessionBackend

__all__ = ["MAX_STORE_QUERIES", "SearchOutcome", "rank_prepared", "search_sessions"]

QueryReading = Literal["natural", "strict", "relaxed"]
SearchMode = Literal["lexical", "hybrid"]
_DEFAULT_WEIGHTS = TermWeights()


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """Ranked root sessions and how the query was read."""

    query: ParsedQuery
    reading: QueryReading
    sessions: list[RankedSession] = field(default_factory=list)
    expansions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Query words that matched nothing and what was searched instead (typo or prefix), and
    prefixes searched as their most frequent completions (``MAX_PREFIX_COMPLETIONS``)."""
    time_hint: TimeHint | None = None
    """The time the query named ("last week", "May 2023"), used as a soft prior on session
    start times (see :mod:`~langchain_session_recall.search.time_hints`)."""
    search_mode: SearchMode = "lexical"
    """``"hybrid"`` when the ranking blends the dense score in, else ``"lexical"`` (no model,
    or a reading that stays lexical: a strict one that matched, only ``NOT`` terms)."""

    @property
    def sessions_searched(self) -> int:
        """How many distinct root sessions matched (before the ``k`` cut)."""
        return len(self.sessions)


def search_sessions(
    backend: SessionBackend,
    request: SearchRequest | str,
    *,
    weights: TermWeights | None = None,
    dense: DenseSearch | None = None,
    **changes: Any,
) -> SearchOutcome:
    """Rank the root sessions that match the request's query.

    ``request`` is a :class:`~langchain_session_recall.search.request.SearchRequest`, or the
    query text of one with its defaults; ``changes`` set its fields (``user_id=...``).
    Raises :class:`~langchain_session_recall.errors.EmptyQueryError` when the query has nothing
    searchable. The best ``hit_limit`` message hits per term compete, and the best
    ``sessions_per_term`` other sessions with a match with their best ``hits_per_session``
    (see ``SessionBackend.match_messages``).
    ``weights`` tunes the term-coverage ranking (see :class:`TermWeights`).
    ``now`` (Unix seconds, default the current time) anchors relative time expressions in the
    query ("last week"): they become a soft prior on session start times, never a filter.
    ``dense`` (a hybrid search) blends each session's dense score into the ranking
    of a natural or relaxed reading (:mod:`~langchain_session_recall.search.blend`); a strict
    reading the user wrote on purpose (quotes, ``AND``, ``NOT``) stays lexical.

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1")
        >>> _ = store.add_messages("s1", [{"role": "user", "content": "CORS error in nginx"}])
        >>> out = search_sessions(store, "how did we fix the CORS error?")
        >>> [(r.root_id, r.matched_terms) for r in out.sessions]
        [('s1', ('cors', 'error'))]
    """
    request = as_request(request, **changes)
    prepared = request.prepare(backend.prefix_completions)
    return rank_prepared(backend, prepared, weights=weights, dense=dense)


def rank_prepared(
    backend: SessionBackend,
    prepared: PreparedSearch,
    *,
    weights: TermWeights | None = None,
    dense: DenseSearch | None = None,
) -> SearchOutcome:
    """:func:`search_sessions` for a request whose query the caller has read
    (:meth:`~langchain_session_recall.search.request.SearchRequest.read`): the search itself,
    each stage once."""
    request, filters = prepared.request, prepared.filters
    query = prepared.query.parsed
    weights = weights or _DEFAULT_WEIGHTS
    moment = time.time() if request.now is None else request.now
    hint = parse_time_hint(query.text, now=moment)  # the capped text, never the raw one
    prior = time_prior(hint, boost=weights.time_boost, spread=weights.time_spread)
    filters, exclude = leave_out(backend, query, request, filters)
    if not query.relaxed:  # "NOT python": the recent sessions that never mention it
        recent = recent_roots(backend, filters, exclude)
        return SearchOutcome(query=query, reading="strict", sessions=recent)
    if query.explicit and not query.any_of:
        hits, roots = strict_candidates(backend, query, request, filters)
        ranked = rank_sessions(hits, roots, exclude_roots=exclude) if hits else []
        if ranked:
            return SearchOutcome(
                query=query, reading="strict", sessions=ranked, expansions=prepared.query.completed
            )
    expansions = dict(prepared.query.completed)
    term_hits, header_hits, roots = term_candidates(
        backend, prepared.query.terms, request, filters, expansions
    )
    ranked = []
    if roots:
        ranked = rank_by_terms(
            term_hits,
            roots,
            session_hits=header_hits,
            exclude_roots=exclude,
            weights=weights,
            now=moment,
            time_hint=hint,
        )
    if dense is not None and dense.weight > 0:
        best, found = dense_evidence(backend, ranked, dense, filters, exclude, request.user_id)
        ranked = blend(
            ranked, best, weight=dense.weight, low=found.low, high=found.high, prior=prior
        )
    reading: QueryReading = "strict" if query.any_of else "relaxed" if query.explicit else "natural"
    return SearchOutcome(
        query=query,
        reading=reading,
        sessions=ranked,
        expansions=expansions,
        time_hint=hint,
        search_mode="hybrid" if dense is not None and dense.weight > 0 else "lexical",
    )
