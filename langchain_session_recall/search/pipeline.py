"""The search pipeline, independent of the storage backend.

query text -> parsed query -> message hits -> chain roots (one lineage query) -> ranked
sessions. The store is any :class:`~langchain_session_recall.backends.base.SessionBackend`; the
pipeline uses its ``match_messages``, lineage (``parents_of``, ``root_of``, ``chain``) and,
for typo correction, ``vocabulary``.

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
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from langchain_session_recall.backends.hits import best_hits
from langchain_session_recall.core.automation import AUTOMATION_SOURCES
from langchain_session_recall.core.cjk import has_cjk
from langchain_session_recall.core.lineage import resolve_roots
from langchain_session_recall.core.query import (
    MAX_CORRECTIONS,
    MAX_QUERY_TERMS,
    MAX_SEARCH_TERMS,
    ParsedQuery,
    Term,
    closest_words,
    parse_query,
    search_terms,
    single_term_query,
)
from langchain_session_recall.models import MessageHit, SearchFilters, SessionHit
from langchain_session_recall.search.blend import DenseEvidence, DenseSearch, blend
from langchain_session_recall.search.ranking import (
    RankedSession,
    TermWeights,
    rank_by_terms,
    rank_sessions,
)
from langchain_session_recall.search.request import (
    HIT_LIMIT,
    HITS_PER_SESSION,
    SearchRequest,
    as_request,
)
from langchain_session_recall.search.time_hints import TimeHint, closeness, parse_time_hint

if TYPE_CHECKING:
    from langchain_session_recall.backends.base import SessionBackend

__all__ = [
    "MAX_STORE_QUERIES",
    "SearchOutcome",
    "match_headers",
    "match_terms",
    "search_sessions",
]

_NO_FILTERS = SearchFilters()
# the term, the "indexed?" probe, each correction (as a word, as a prefix), the term's prefix
_TRIES_PER_TERM = 3 + 2 * MAX_CORRECTIONS
MAX_STORE_QUERIES = 2 + _TRIES_PER_TERM * MAX_SEARCH_TERMS
"""Full-text queries (``match_messages`` calls) one search asks the store at most: the strict
reading, up to seven tries for each of the first :data:`MAX_SEARCH_TERMS` terms (the term,
whether it is indexed at all, two typo corrections as words and as prefixes, its prefix), and
one for the other terms together. Each holds at most
:data:`~langchain_session_recall.core.query.MAX_QUERY_TERMS` terms, of which at most
:data:`~langchain_session_recall.core.query.MAX_PREFIX_TERMS` prefixes."""
QueryReading = Literal["natural", "strict", "relaxed"]


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """Ranked root sessions and how the query was read."""

    query: ParsedQuery
    reading: QueryReading
    sessions: list[RankedSession] = field(default_factory=list)
    expansions: dict[str, str] = field(default_factory=dict)
    """Query words that matched nothing and what was searched instead (typo or prefix)."""
    time_hint: TimeHint | None = None
    """The time the query named ("last week", "May 2023"), used as a soft prior on session
    start times (see :mod:`~langchain_session_recall.search.time_hints`)."""

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
    searchable. The best ``hit_limit`` message hits per term compete, and every other session
    with a match with its best ``hits_per_session`` (see ``SessionBackend.match_messages``).
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
    text, user_id, hit_limit, now = request.query, request.user_id, request.hit_limit, request.now
    hits_per_session = request.hits_per_session
    query = parse_query(text)
    excluded: tuple[str, ...] = ()
    current_root: str | None = None
    current = request.current_session_id
    if current:
        current_root = backend.root_of(current, user_id=user_id)
        excluded = tuple(dict.fromkeys([current, *backend.chain(current_root)]))
    filters = request.filters(excluded)
    exclude = [current_root] if current_root else []
    any_of = _any_of(query)
    if query.explicit and not any_of:
        hits = backend.match_messages(
            query, "strict", filters=filters, limit=hit_limit, per_session=hits_per_session
        )
        if hits:
            roots = _roots(backend, hits, user_id)
            ranked = rank_sessions(hits, roots, exclude_roots=exclude)
            if ranked:
                return SearchOutcome(query=query, reading="strict", sessions=ranked)
    expansions: dict[str, str] = {}
    term_hits = match_terms(
        backend,
        query,
        filters=filters,
        limit=hit_limit,
        per_session=hits_per_session,
        expansions=expansions,
    )
    header_hits = match_headers(backend, query, filters=filters, limit=hit_limit)
    moment = time.time() if now is None else now
    hint = parse_time_hint(query.text, now=moment)  # the capped text, never the raw one
    session_ids = [h.session_id for hits in term_hits.values() for h in hits]
    session_ids += [h.session_id for hits in header_hits.values() for h in hits]
    ranked = []
    if session_ids:
        parents = backend.parents_of(list(dict.fromkeys(session_ids)), user_id=user_id)
        roots = resolve_roots(session_ids, parents, cycle_root=backend.first_started)
        ranked = rank_by_terms(
            term_hits,
            roots,
            session_hits=header_hits,
            exclude_roots=exclude,
            weights=weights or _DEFAULT_WEIGHTS,
            now=moment,
            time_hint=hint,
        )
    if dense is not None and dense.weight > 0:
        ranked = _with_dense(
            backend, ranked, dense, filters, exclude, user_id, hint, weights or _DEFAULT_WEIGHTS
        )
    reading: QueryReading = "strict" if any_of else "relaxed" if query.explicit else "natural"
    return SearchOutcome(
        query=query, reading=reading, sessions=ranked, expansions=expansions, time_hint=hint
    )


def _with_dense(
    backend: SessionBackend,
    ranked: list[RankedSession],
    dense: DenseSearch,
    filters: SearchFilters,
    exclude_roots: Sequence[str],
    user_id: str | None,
    hint: TimeHint | None,
    weights: TermWeights,
) -> list[RankedSession]:
    """The lexical ranking blended with the dense one. Dense candidates pass the same
    filters (in the store), are collapsed to their chain roots and lose the current
    conversation's chain, as lexical ones do."""
    lexical_sessions = {s for r in ranked for s in (r.root_id, *r.session_ids)}
    found = dense.index.search(
        dense.query_vector(), filters=filters, limit=dense.candidates, include=lexical_sessions
    )
    parents = backend.parents_of(list(found.hits), user_id=user_id) if found.hits else {}
    roots = resolve_roots(found.hits, parents, cycle_root=backend.first_started)
    excluded = set(exclude_roots)
    best: dict[str, DenseEvidence] = {}
    for sid, hit in found.hits.items():
        root = roots.get(sid, sid)
        if root in excluded:
            continue
        if root not in best or hit.score > best[root].score:
            best[root] = DenseEvidence(
                sid, hit.score, hit.similarity, hit.message_ids, hit.started_at
            )

    def prior(started: float) -> float:
        if hint is None or not weights.time_boost:
            return 1.0
        return 1.0 + weights.time_boost * closeness(started, hint, spread=weights.time_spread)

    return blend(ranked, best, weight=dense.weight, low=found.low, high=found.high, prior=prior)


def match_headers(
    backend: SessionBackend,
    query: ParsedQuery,
    *,
    filters: SearchFilters = _NO_FILTERS,
    limit: int = HIT_LIMIT,
) -> dict[str, list[SessionHit]]:
    """Sessions whose header (title, date words) matches each search term alone (terms that
    match no header are absent), keyed as :func:`match_terms` keys its terms.

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1", title="Trip", started_at=1683554160.0)
        >>> sorted(match_headers(store, parse_query("the trip in May 2023")))
        ['2023', 'may', 'trip']
    """
    out: dict[str, list[SessionHit]] = {}
    for term in search_terms(query, limit=MAX_SEARCH_TERMS):
        found = backend.match_sessions(
            single_term_query(term), "relaxed", filters=filters, limit=limit
        )
        if found:
            out[_term_key(term)] = found
    return out


def _any_of(query: ParsedQuery) -> bool:
    """``a OR b OR "c d"``: the strict reading means any of the terms, as the relaxed one does."""
    ops = [op for op, _ in query.strict[1:]]
    return bool(ops) and all(op == "OR" for op in ops)


def _roots(
    backend: SessionBackend, hits: Sequence[MessageHit], user_id: str | None
) -> dict[str, str]:
    parents = backend.parents_of(list({h.session_id for h in hits}), user_id=user_id)
    return resolve_roots((h.session_id for h in hits), parents, cycle_root=backend.first_started)


_DEFAULT_WEIGHTS = TermWeights()


def _indexed(backend: SessionBackend, term: Term, filters: SearchFilters) -> bool:
    """Whether the word occurs anywhere in the user's scope, whatever the other filters."""
    scope = SearchFilters(user_id=filters.user_id)
    return bool(backend.match_messages(single_term_query(term), "relaxed", filters=scope, limit=1))


def _term_key(term: Term) -> str:
    return " ".join(term.tokens).lower() + ("*" if term.prefix else "")


def _prefix_term(term: Term) -> Term | None:
    """``kube`` -> ``kube*`` for a plain word nothing matched (a partial word)."""
    word = term.tokens[0]
    if term.is_phrase or term.prefix or has_cjk(word) or not word.isalpha() or len(word) < 3:
        return None
    return Term((word,), prefix=True)


def _corrections(backend: SessionBackend, term: Term) -> list[Term]:
    """The indexed words closest to a misspelt word (index words are often stems).

    A slip in the second letter is not corrected (the candidates would be every indexed word
    with the same initial); the prefix fallback may still find the word.
    """
    word = term.tokens[0]
    if term.is_phrase or term.prefix or has_cjk(word) or not word.isalpha():
        return []
    lower = word.lower()
    # Candidates share the first two letters, or the first and third (the 2nd and 3rd swapped):
    # two narrow index ranges instead of every word with the same initial.
    prefixes = dict.fromkeys([lower[:2], lower[0] + lower[2:3]])
    vocabulary = [entry for p in prefixes for entry in backend.vocabulary(p)]
    return [Term((w,)) for w in closest_words(word, vocabulary)]


def match_terms(
    backend: SessionBackend,
    query: ParsedQuery,
    *,
    filters: SearchFilters = _NO_FILTERS,
    limit: int | None = HIT_LIMIT,
    per_session: int | None = HITS_PER_SESSION,
    automation_sources: Sequence[str] = AUTOMATION_SOURCES,
    expansions: dict[str, str] | None = None,
) -> dict[str, list[MessageHit]]:
    """Message hits of each search term matched alone (terms that match nothing are absent):
    the best ``limit`` of them and the best ``per_session`` of every session with a match.

    Automation runs (``automation_sources``) get a hit budget of their own (a quarter of
    ``limit``, see :func:`~langchain_session_recall.backends.hits.budget_automation`): hundreds of
    near-identical cron runs would otherwise use up the hits of a word they share with the
    session the user wants. Ranking demotes them.

    A term that matches nothing is replaced by the closest indexed words (a typo), else by its
    prefix (a partial word); ``expansions``, when given, records each replacement
    (``{"kuberntes": "kubernet"}``) so callers can say what was actually searched.

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1")
        >>> _ = store.add_messages("s1", [{"role": "user", "content": "kubernetes ingress"}])
        >>> sorted(match_terms(store, parse_query("kuberntes ingres")))
        ['ingres', 'kuberntes']
    """
    out: dict[str, list[MessageHit]] = {}

    automation = tuple(s for s in automation_sources if s not in filters.exclude_sources)

    def match(term: Term) -> list[MessageHit]:
        single = single_term_query(term)
        return backend.match_messages(
            single,
            "relaxed",
            filters=filters,
            limit=limit,
            automation=automation,
            per_session=per_session,
        )

    terms = search_terms(query, limit=MAX_QUERY_TERMS)
    for term in terms[:MAX_SEARCH_TERMS]:
        hits = match(term)
        used: list[str] = []
        if not hits and _indexed(backend, term, filters):
            continue  # a real word, just not where the filters look: nothing to correct
        if not hits:  # a misspelt word, else a partial one
            for correction in _corrections(backend, term):
                found = match(correction) or match(replace(correction, prefix=True))
                if found:
                    hits.extend(found)
                    used.append(_term_key(correction))
            hits = best_hits(hits, per_session=per_session)  # corrections may share a message
        if not hits and (prefix := _prefix_term(term)) is not None:
            hits = match(prefix)
            used = [_term_key(prefix)] if hits else []
        if used and expansions is not None:
            expansions[_term_key(term)] = ", ".join(used)
        if hits:
            out[_term_key(term)] = hits
    rest = terms[MAX_SEARCH_TERMS:]
    if rest:
        # Past the per-term budget the other words are matched together (any of them), so a
        # long query never drops a word of the data silently; they count as one term.
        together = ParsedQuery(
            text=" ".join(t.tokens[0] for t in rest),
            strict=tuple((None, t) for t in rest),
            relaxed=rest,
            explicit=False,
        )
        hits = backend.match_messages(
            together, "relaxed", filters=filters, limit=limit, per_session=per_session
        )
        if hits:
            out[f"+{len(rest)} more word{'s' if len(rest) > 1 else ''}"] = hits
    return out
