"""One search request, with every default in one place.

Every surface (the retriever, the ``session_search`` tool, the ``session-recall`` CLI, the MCP
server) turns what it was given into a :class:`SearchRequest` and hands it to
:func:`~langchain_session_recall.results.recall`; none of them declares a default of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from langchain_session_recall.errors import InvalidOptionError
from langchain_session_recall.models import HIDDEN_SOURCES, SearchFilters

__all__ = [
    "DEFAULT_K",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_K",
    "HIDDEN_SOURCES",
    "HITS_PER_SESSION",
    "HIT_LIMIT",
    "SESSIONS_PER_TERM",
    "SearchRequest",
    "as_request",
    "role_list",
]

DEFAULT_K = 3
"""Sessions a search returns unless asked otherwise."""
DEFAULT_MAX_K = 5
"""Most sessions one search returns (larger requests are clamped, not rejected)."""
DEFAULT_MAX_CHARS = 8_000
"""Transcript characters per result unless asked otherwise: a window that fits a prompt,
centred on the densest run of matches, its cuts marked (``...[earlier conversation
truncated]...``). ``max_chars=None`` asks for the whole transcript."""
HIT_LIMIT = 100
"""Message hits fetched per index and per search term (or per strict query) over the whole
store, the best first (reference: 50 for the whole query)."""
HITS_PER_SESSION = 1
"""Message hits fetched, besides those, of every other session with a match (its best, per
index and per term): candidates are complete at session level, so a session of many short
lines that repeat a word cannot crowd out the one with the answer, and each session costs a
bounded number of hits (see ``SessionBackend.match_messages``). A word found in more than
``rank_window`` messages is ranked over its newest ``rank_window`` matches, which bounds the
whole."""
SESSIONS_PER_TERM = 100
"""Sessions whose best hits are gathered per index and per term, besides the best
:data:`HIT_LIMIT` hits: the best sessions by their best match (automation runs have a quarter
as many seats of their own). The store chooses them, so what a search reads and ranks stays
bounded however many sessions share a word, and a noisy session takes one seat, never the
others'."""


def role_list(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """Roles as given (``"user,assistant"`` or a sequence): lower-cased, stripped, once each.

    Example:
        >>> role_list(" User,assistant,user "), role_list(None)
        (('user', 'assistant'), ())
    """
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(dict.fromkeys(r.strip().lower() for r in items if r and r.strip()))


def _sources(value: str | Sequence[str] | None) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value or ())


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """What one search (or, with an empty ``query``, one browse of recent sessions) asks.

    Example:
        >>> request = SearchRequest("CORS error", role_filter="user")
        >>> request.k, request.role_filter, request.exclude_sources, request.browse
        (3, ('user',), ('tool',), False)
    """

    query: str = ""
    """Keywords, a question, syntax (quotes, OR, NOT, prefix*); empty: recent sessions."""
    k: int = DEFAULT_K
    """Sessions to return."""
    role_filter: tuple[str, ...] = ()
    """Only match messages of these roles (a search; browsing matches no message)."""
    exclude_sources: tuple[str, ...] = HIDDEN_SOURCES
    """Session sources whose messages are never matched nor listed."""
    current_session_id: str | None = None
    """The conversation in progress: its whole chain is left out."""
    user_id: str | None = None
    """Tenant scope: only this user's sessions."""
    after: float | None = None
    """Only sessions started at or after this moment (Unix seconds)."""
    before: float | None = None
    """Only sessions started before this moment (Unix seconds)."""
    now: float | None = None
    """The moment relative time words in the query refer to (``None``: the current time)."""
    max_chars: int | None = DEFAULT_MAX_CHARS
    """Transcript characters per result, a window centred on the matches (``None``: whole)."""
    hit_limit: int = HIT_LIMIT
    """Message hits gathered per index and per term before sessions are ranked, the best over
    the whole store (besides ``hits_per_session`` of every other session)."""
    hits_per_session: int | None = HITS_PER_SESSION
    """Message hits gathered of every other session with a match (its best, per index and
    term): every session competes, however many matches another one has. ``None``: none, only
    the best ``hit_limit`` compete (faster on a large store, and a session crowded out of them
    by a noisier one is not found; ``docs/benchmarks-perf.md`` has the trade)."""
    sessions_per_term: int | None = SESSIONS_PER_TERM
    """How many sessions bring their ``hits_per_session`` best hits, per index and term: the
    best by their best match. ``None``: every session with a match (what a search reads then
    grows with the number of sessions a word occurs in)."""
    show_message_ids: bool = False
    """Tag transcript lines with message ids (``[USER #42]: ...``) for citations."""
    collapse_automation: bool = True
    """Browsing lists each automation job once, as its newest run."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "role_filter", role_list(self.role_filter))
        object.__setattr__(self, "exclude_sources", _sources(self.exclude_sources))
        object.__setattr__(self, "query", self.query if isinstance(self.query, str) else "")

    @property
    def browse(self) -> bool:
        """An empty query lists recent sessions instead of searching."""
        return not self.query.strip()

    def filters(self, exclude_session_ids: Sequence[str] = ()) -> SearchFilters:
        """The store-level filters of this request."""
        return SearchFilters(
            role_filter=self.role_filter,
            exclude_sources=self.exclude_sources,
            exclude_session_ids=tuple(exclude_session_ids),
            user_id=self.user_id,
            after=self.after,
            before=self.before,
        )


_FIELDS = frozenset(f.name for f in fields(SearchRequest))


def as_request(request: SearchRequest | str, **changes: Any) -> SearchRequest:
    """``request`` with ``changes``; a string is the query of a request with the defaults.

    Raises:
        TypeError: a change names no field of :class:`SearchRequest`.

    Example:
        >>> as_request("deploy", k=1).k, as_request(SearchRequest("a"), query="b").query
        (1, 'b')
    """
    unknown = set(changes) - _FIELDS
    if unknown:
        raise InvalidOptionError(
            f"unknown search option(s) {sorted(unknown)}; allowed: {sorted(_FIELDS)}"
        )
    if isinstance(request, SearchRequest):
        return replace(request, **changes) if changes else request
    return SearchRequest(query=request, **changes)
