"""Candidates: what the store holds for a parsed query, and the chain roots of what it found.

The store-facing stage of :mod:`~langchain_session_recall.search.pipeline`: the store's full
text and its chains are asked here, through the
:class:`~langchain_session_recall.backends.base.SessionBackend` contract: each search term
matched alone (``match_messages``; a word that matched nothing is searched as the words
:mod:`~langchain_session_recall.search.correction` gives instead, from the store's
vocabulary), session headers (``match_sessions``), the sessions a ``NOT`` term leaves out, the
recent sessions of a query of ``NOT`` terms alone, and the chain roots of all of them
(``roots_of``: one lineage query per set of sessions found; a plain question makes one; a
strict reading, ``NOT`` terms, the live conversation and the dense half may add one each).
The vector index is asked by :mod:`~langchain_session_recall.search.dense`. Ranking is not
done here (:mod:`~langchain_session_recall.search.ranking`,
:mod:`~langchain_session_recall.search.blend`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from langchain_session_recall.backends.hits import best_hits
from langchain_session_recall.core.automation import AUTOMATION_SOURCES
from langchain_session_recall.core.query import (
    MAX_EXCLUDED_TERMS,
    MAX_SEARCH_TERMS,
    ParsedQuery,
    Term,
)
from langchain_session_recall.core.spelling import MAX_CORRECTIONS
from langchain_session_recall.models import MessageHit, SearchFilters, SessionHit
from langchain_session_recall.search.correction import alternatives
from langchain_session_recall.search.ranking import RankedSession
from langchain_session_recall.search.request import (
    HIT_LIMIT,
    HITS_PER_SESSION,
    SESSIONS_PER_TERM,
    SearchRequest,
)

if TYPE_CHECKING:
    from langchain_session_recall.backends.base import SessionBackend

__all__ = [
    "EXCLUDED_HIT_LIMIT",
    "MAX_STORE_QUERIES",
    "header_hits",
    "leave_out",
    "recent_roots",
    "single_term_query",
    "strict_candidates",
    "term_candidates",
    "term_hits",
]

_NO_FILTERS = SearchFilters()
# the term, the "indexed?" probe, each correction (as a word, as a prefix), the term's prefix
_TRIES_PER_TERM = 3 + 2 * MAX_CORRECTIONS
EXCLUDED_HIT_LIMIT = 10_000
"""Message hits fetched per ``NOT`` term to find the sessions it leaves out: a word in more
messages than this may leave some of its sessions in the results."""
MAX_STORE_QUERIES = 2 + _TRIES_PER_TERM * MAX_SEARCH_TERMS + MAX_EXCLUDED_TERMS
"""Full-text queries (``match_messages`` calls) one search asks the store at most: the strict
reading, up to seven tries for each of the first :data:`MAX_SEARCH_TERMS` terms (the term,
whether it is indexed at all, two typo corrections as words and as prefixes, its prefix), one
for the other terms together, and one per ``NOT`` term. Each holds at most
:data:`~langchain_session_recall.core.query.MAX_QUERY_TERMS` terms, of which at most
:data:`~langchain_session_recall.core.query.MAX_PREFIX_TERMS` prefixes."""
_RECENT_LIMIT = 50


def single_term_query(term: Term) -> ParsedQuery:
    """A query made of one term, to match it alone (any backend renders it).

    Example:
        >>> single_term_query(Term(("cors",))).relaxed
        (Term(tokens=('cors',), prefix=False, quoted=False),)
    """
    text = " ".join(term.tokens) + ("*" if term.prefix else "")
    return ParsedQuery(text=text, strict=((None, term),), relaxed=(term,), explicit=False)


def leave_out(
    backend: SessionBackend, query: ParsedQuery, request: SearchRequest, filters: SearchFilters
) -> tuple[SearchFilters, list[str]]:
    """What a search leaves out. The live conversation (``current_session_id``): its whole
    chain from every store answer (the ``filters`` returned) and its root from the ranking.
    The roots of the chains in which a ``NOT`` term occurs anywhere, sorted, from the ranking."""
    current, user_id = request.current_session_id, request.user_id
    roots: list[str] = []
    if current:
        current_root = backend.root_of(current, user_id=user_id)
        live = tuple(dict.fromkeys([current, *backend.chain(current_root)]))
        filters = replace(filters, exclude_session_ids=live)
        roots += [current_root] if current_root else []
    return filters, roots + sorted(_excluded_roots(backend, query, user_id))


def strict_candidates(
    backend: SessionBackend, query: ParsedQuery, request: SearchRequest, filters: SearchFilters
) -> tuple[list[MessageHit], dict[str, str]]:
    """The message hits of the strict reading (quotes, ``AND``, ``NOT`` as the user wrote
    them) and the chain root of each session they name."""
    hits = backend.match_messages(
        query,
        "strict",
        filters=filters,
        limit=request.hit_limit,
        per_session=request.hits_per_session,
        sessions=request.sessions_per_term,
    )
    return hits, backend.roots_of((h.session_id for h in hits), user_id=request.user_id)


def _excluded_roots(backend: SessionBackend, query: ParsedQuery, user_id: str | None) -> set[str]:
    """Roots of the chains in which a ``NOT`` term occurs anywhere (a message of any role or
    source, a title): ``NOT`` leaves out sessions, not only the messages that say the word."""
    if not query.excluded:
        return set()
    scope = SearchFilters(user_id=user_id)
    ids: list[str] = []
    for term in query.excluded:
        single = single_term_query(term)
        hits = backend.match_messages(single, "relaxed", filters=scope, limit=EXCLUDED_HIT_LIMIT)
        ids += [h.session_id for h in hits]
        headers = backend.match_sessions(single, "relaxed", filters=scope, limit=EXCLUDED_HIT_LIMIT)
        ids += [h.session_id for h in headers]
    return set(backend.roots_of(ids, user_id=user_id).values())


def recent_roots(
    backend: SessionBackend, filters: SearchFilters, exclude: Sequence[str]
) -> list[RankedSession]:
    """The recent root sessions in scope outside ``exclude``, newest first, as unranked results
    (a query of ``NOT`` terms alone)."""
    recent = backend.recent_sessions(
        _RECENT_LIMIT,
        exclude_sources=filters.exclude_sources,
        exclude_session_ids=[*filters.exclude_session_ids, *exclude],
        user_id=filters.user_id,
        after=filters.after,
        before=filters.before,
        project=filters.project,
        agents=filters.agents,
    )
    return [RankedSession(r.id, 0.0, (), (r.id,), r.started_at, coverage=0.0) for r in recent]


def header_hits(
    backend: SessionBackend,
    terms: Sequence[Term],
    *,
    filters: SearchFilters = _NO_FILTERS,
    limit: int = HIT_LIMIT,
) -> dict[str, list[SessionHit]]:
    """Sessions whose header (title, date words) matches each of the first
    :data:`~langchain_session_recall.core.query.MAX_SEARCH_TERMS` search terms alone (terms that
    match no header are absent), keyed as :func:`term_hits` keys its terms.

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> from langchain_session_recall.core.query import parse_query, search_terms
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1", title="Trip", started_at=1683554160.0)
        >>> sorted(header_hits(store, search_terms(parse_query("the trip in May 2023"))))
        ['2023', 'may', 'trip']
    """
    out: dict[str, list[SessionHit]] = {}
    for term in terms[:MAX_SEARCH_TERMS]:
        found = backend.match_sessions(
            single_term_query(term), "relaxed", filters=filters, limit=limit
        )
        if found:
            out[_term_key(term)] = found
    return out


def _indexed(backend: SessionBackend, term: Term, filters: SearchFilters) -> bool:
    """Whether the word occurs anywhere in the user's scope, whatever the other filters."""
    scope = SearchFilters(user_id=filters.user_id)
    return bool(backend.match_messages(single_term_query(term), "relaxed", filters=scope, limit=1))


def _term_key(term: Term) -> str:
    return " ".join(term.tokens).lower() + ("*" if term.prefix else "")


def _instead(
    backend: SessionBackend,
    term: Term,
    match: Callable[[Term], list[MessageHit]],
    per_session: int | None,
    sessions: int | None,
) -> tuple[list[MessageHit], list[str]]:
    """What a term that matched nothing is searched as: the closest indexed words (a typo),
    else its prefix (a partial word; :mod:`~langchain_session_recall.search.correction`). The
    hits, and the words searched instead."""
    instead = alternatives(backend, term)
    hits: list[MessageHit] = []
    used: list[str] = []
    for correction in instead.corrections:
        found = match(correction) or match(replace(correction, prefix=True))
        if found:
            hits.extend(found)
            used.append(_term_key(correction))
    hits = best_hits(hits, per_session=per_session, sessions=sessions)  # a shared message
    if not hits and instead.prefix is not None:
        hits = match(instead.prefix)
        used = [_term_key(instead.prefix)] if hits else []
    return hits, used


def term_candidates(
    backend: SessionBackend,
    terms: Sequence[Term],
    request: SearchRequest,
    filters: SearchFilters,
    expansions: dict[str, tuple[str, ...]],
) -> tuple[dict[str, list[MessageHit]], dict[str, list[SessionHit]], dict[str, str]]:
    """The candidates of a natural or relaxed reading: the message hits (:func:`term_hits`)
    and header hits (:func:`header_hits`) of each search term, and the chain root of every
    session they name. ``expansions`` receives the words searched instead of a term."""
    limit = request.hit_limit
    by_header = header_hits(backend, terms, filters=filters, limit=limit)
    by_term = term_hits(
        backend,
        terms,
        filters=filters,
        limit=limit,
        per_session=request.hits_per_session,
        sessions=request.sessions_per_term,
        expansions=expansions,
    )
    found = (by_term, by_header)
    ids = [h.session_id for hits_of in found for hits in hits_of.values() for h in hits]
    return by_term, by_header, backend.roots_of(ids, user_id=request.user_id)


def term_hits(
    backend: SessionBackend,
    terms: Sequence[Term],
    *,
    filters: SearchFilters = _NO_FILTERS,
    limit: int | None = HIT_LIMIT,
    per_session: int | None = HITS_PER_SESSION,
    sessions: int | None = SESSIONS_PER_TERM,
    automation_sources: Sequence[str] = AUTOMATION_SOURCES,
    expansions: dict[str, tuple[str, ...]] | None = None,
) -> dict[str, list[MessageHit]]:
    """Message hits of each search term matched alone (terms that match nothing are absent):
    the best ``limit`` of them and the best ``per_session`` of the best ``sessions`` sessions
    with a match (``None``: of every one).

    Automation runs (``automation_sources``) get a hit budget of their own (a quarter of
    ``limit``, see :func:`~langchain_session_recall.backends.hits.budget_automation`), and of
    the ``sessions``: near-identical cron runs would otherwise take them. Ranking demotes them.

    A term that matches nothing is replaced by the closest indexed words (a typo), else by its
    prefix (a partial word); ``expansions``, when given, records each replacement
    (``{"kuberntes": "kubernet"}``) so callers can say what was actually searched. ``terms``:
    a query's :func:`~langchain_session_recall.core.query.search_terms` (up to
    :data:`~langchain_session_recall.core.query.MAX_QUERY_TERMS`); the first
    :data:`~langchain_session_recall.core.query.MAX_SEARCH_TERMS` are matched one by one, the
    others together.

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> from langchain_session_recall.core.query import parse_query, search_terms
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1")
        >>> _ = store.add_messages("s1", [{"role": "user", "content": "kubernetes ingress"}])
        >>> sorted(term_hits(store, search_terms(parse_query("kuberntes ingres"))))
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
            sessions=sessions,
        )

    rest = tuple(terms[MAX_SEARCH_TERMS:])
    together = _together(backend, rest, filters, limit, per_session, sessions) if rest else []
    for term in terms[:MAX_SEARCH_TERMS]:
        hits = match(term)
        used: list[str] = []
        if not hits and _indexed(backend, term, filters):
            continue  # a real word, just not where the filters look: nothing to correct
        if not hits:  # a misspelt word, else a partial one
            hits, used = _instead(backend, term, match, per_session, sessions)
        if used and expansions is not None:
            expansions[_term_key(term)] = tuple(used)
        if hits:
            out[_term_key(term)] = hits
    if together:
        out[f"+{len(rest)} more word{'s' if len(rest) > 1 else ''}"] = together
    return out


def _together(
    backend: SessionBackend,
    rest: tuple[Term, ...],
    filters: SearchFilters,
    limit: int | None,
    per_session: int | None,
    sessions: int | None,
) -> list[MessageHit]:
    """Past the per-term budget the other words are matched together (any of them), so a
    long query never drops a word of the data silently; they count as one term."""
    together = ParsedQuery(
        text=" ".join(t.tokens[0] for t in rest),
        strict=tuple((None, t) for t in rest),
        relaxed=rest,
        explicit=False,
    )
    return backend.match_messages(
        together,
        "relaxed",
        filters=filters,
        limit=limit,
        per_session=per_session,
        sessions=sessions,
    )
