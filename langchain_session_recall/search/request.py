"""One search request, with every default, cap and check in one place.

Every surface (the retriever, the ``session_search`` tool, the ``session-recall`` CLI, the MCP
server) turns what it was given into a :class:`SearchRequest` and hands it to
:func:`~langchain_session_recall.recall.build.recall`; none of them declares a default of its own,
nor a check: a request that cannot be answered (``k`` below 1, a role no message has, a date
range with nothing in it) raises :class:`~langchain_session_recall.errors.InvalidArgumentError`
(a ``ValueError``) that says what to give instead, rather than finding nothing.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from langchain_session_recall.core.query import (
    Completions,
    ParsedQuery,
    SearchedQuery,
    parse_query,
    searched_query,
)
from langchain_session_recall.core.where import agent_list, project_path
from langchain_session_recall.errors import InvalidArgumentError, InvalidOptionError
from langchain_session_recall.messages import ROLE_ALIASES, ROLES
from langchain_session_recall.models import HIDDEN_SOURCES, SearchFilters

__all__ = [
    "DEFAULT_K",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_K",
    "HIDDEN_SOURCES",
    "HITS_PER_SESSION",
    "HIT_LIMIT",
    "MIN_MAX_CHARS",
    "ROLE_NAMES",
    "SESSIONS_PER_TERM",
    "PreparedSearch",
    "SearchRequest",
    "as_request",
    "check_dates",
    "check_k",
    "role_list",
]

DEFAULT_K = 3
"""Sessions a search returns unless asked otherwise."""
DEFAULT_MAX_K = 5
"""Most sessions one search returns: the retriever refuses a larger ``k`` (its ``max_k``
raises the cap); the agent tool and the command line show this many and say so."""
DEFAULT_MAX_CHARS = 8_000
"""Transcript characters per result unless asked otherwise: a window that fits a prompt,
centred on the densest run of matches, its cuts marked (``...[earlier conversation
truncated]...``). ``max_chars=None`` asks for the whole transcript."""
MIN_MAX_CHARS = 200
"""The fewest transcript characters a result may be cut to (a smaller ``max_chars`` is
refused: it would show too little around a match)."""
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


ROLE_NAMES = {**{role: role for role in ROLES}, **ROLE_ALIASES}
"""Every role name a filter takes, and the stored role it stands for: LangChain's message
types (``human``, ``ai``, ``system``, ``tool``) are the stored ``user``, ``assistant``, ..."""


def role_list(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """Stored roles for a role filter as given (``"user,assistant"`` or a sequence):
    stripped, case-folded, LangChain's names mapped to the stored ones, once each.

    Raises:
        InvalidArgumentError: a role no stored message can have (a filter of it would find
            nothing, whatever the store holds).

    Example:
        >>> role_list(" User,assistant,user "), role_list(["human", "ai"]), role_list(None)
        (('user', 'assistant'), ('user', 'assistant'), ())
        >>> try:
        ...     role_list("bogus")
        ... except InvalidArgumentError as exc:
        ...     print(exc)
        unknown role 'bogus' in role_filter; roles are user, assistant, tool, system (LangChain's human, ai, system, tool also work)
    """  # noqa: E501
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    named = [str(r).strip().lower() for r in items if r is not None and str(r).strip()]
    unknown = [r for r in named if r not in ROLE_NAMES]
    if unknown:
        raise InvalidArgumentError(
            f"unknown role {', '.join(repr(r[:40]) for r in unknown)} in role_filter; roles are "
            "user, assistant, tool, system (LangChain's human, ai, system, tool also work)"
        )
    return tuple(dict.fromkeys(ROLE_NAMES[r] for r in named))


def check_k(k: int, max_k: int | None = None, *, name: str = "k") -> int:
    """``k`` if it is a whole number of sessions from 1 to ``max_k`` (``None``: no cap).

    Raises:
        InvalidArgumentError: ``k`` below 1, above ``max_k``, or not an integer; the message
            names the cap (``name`` is the argument as the caller knows it: ``limit``, ``-k``).

    Example:
        >>> check_k(3, 5)
        3
        >>> try:
        ...     check_k(20, 5)
        ... except InvalidArgumentError as exc:
        ...     print(exc)
        k=20 is more than 5, the most sessions one search returns: ask for 1 to 5 (or raise max_k)
    """
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidArgumentError(f"{name}={k!r} is not a number of sessions: give 1 to {max_k}")
    if k < 1:
        upto = f" to {max_k}" if max_k is not None else " or more"
        raise InvalidArgumentError(f"{name}={k} asks for no session: ask for 1{upto}")
    if max_k is not None and k > max_k:
        raise InvalidArgumentError(
            f"{name}={k} is more than {max_k}, the most sessions one search returns: ask for "
            f"1 to {max_k} (or raise max_k)"
        )
    return k


def check_dates(after: float | None, before: float | None) -> None:
    """Raise unless some moment is at or after ``after`` and before ``before`` (either may be
    ``None``: no bound on that side).

    Raises:
        InvalidArgumentError: the range is empty (``after`` not earlier than ``before``): no
            session could be in it.

    Example:
        >>> check_dates(1793664000.0, None)
        >>> try:
        ...     check_dates(1793750400.0, 1793664000.0)
        ... except InvalidArgumentError as exc:
        ...     print(exc)
        after=2026-11-04T00:00:00+00:00 is not earlier than before=2026-11-03T00:00:00+00:00: no session starts in that range; give an earlier after or a later before (or only one of them)
    """  # noqa: E501
    if after is None or before is None or after < before:
        return
    raise InvalidArgumentError(
        f"after={_iso(after)} is not earlier than before={_iso(before)}: no session starts in "
        "that range; give an earlier after or a later before (or only one of them)"
    )


def _iso(timestamp: float) -> str:
    if not math.isfinite(timestamp):
        return str(timestamp)
    try:
        return _dt.datetime.fromtimestamp(timestamp, tz=_dt.timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):  # beyond the years a datetime holds
        return repr(timestamp)


def _sources(value: str | Sequence[str] | None) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value or ())


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """What one search (or, with an empty ``query``, one browse of recent sessions) asks.

    A request no session could answer is refused when it is made (see :func:`check_k`,
    :func:`role_list`, :func:`check_dates`).

    Example:
        >>> request = SearchRequest("CORS error", role_filter="human")
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
    project: str | None = None
    """Only sessions that ran in this directory or below it (``/src/api`` takes in
    ``/src/api/web``, never ``/src/apis``); an absolute path, ``~`` expanded."""
    agent: tuple[str, ...] = ()
    """Only sessions these agents wrote (``"codex"``, ``"claude-code"``, ...; a comma-separated
    string works too)."""
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
    parsed: ParsedQuery | None = field(default=None, repr=False, compare=False)
    """``query`` already parsed (by the surface that checked it: the tool does), so that a
    search parses its query once; ``None``: :meth:`parse` parses it when the search needs it.
    A parse of another text than ``query`` is dropped (``dataclasses.replace(request,
    query=...)`` keeps no stale one)."""

    def __post_init__(self) -> None:
        check_k(self.k)
        check_dates(self.after, self.before)
        object.__setattr__(self, "role_filter", role_list(self.role_filter))
        object.__setattr__(self, "exclude_sources", _sources(self.exclude_sources))
        object.__setattr__(self, "project", project_path(self.project))
        object.__setattr__(self, "agent", agent_list(self.agent))
        object.__setattr__(self, "query", self.query if isinstance(self.query, str) else "")
        if self.parsed is not None and self.parsed.source != self.query:
            object.__setattr__(self, "parsed", None)

    def parse(self) -> ParsedQuery:
        """``query`` parsed, once: the parse a surface carried, else parsed now and kept.

        Raises:
            EmptyQueryError: the query holds nothing searchable (``"?"``).

        Example:
            >>> request = SearchRequest("fix the CORS error")
            >>> request.parse() is request.parse(), [t.tokens for t in request.parse().relaxed]
            (True, [('fix',), ('CORS',), ('error',)])
        """
        if self.parsed is None:
            object.__setattr__(self, "parsed", parse_query(self.query))
        assert self.parsed is not None
        return self.parsed

    def prepare(self, completions: Completions) -> PreparedSearch:
        """This request as the search reads it, once, at the top: its query read
        (:func:`~langchain_session_recall.core.query.searched_query`: parsed once by
        :meth:`parse`, its prefixes completed by ``completions``, the store's
        ``prefix_completions``) and its store filters. A surface prepares it and hands it down.

        Raises:
            EmptyQueryError: the query holds nothing searchable (``"?"``).

        Example:
            >>> prepared = SearchRequest("deploy*").prepare(lambda p, limit: (["deployed"], 1))
            >>> prepared.query.terms[0].tokens, prepared.query.terms[0].completions
            (('deploy',), ('deployed',))
        """
        filters = self.filters()
        parsed = self.parse()
        return PreparedSearch(self, searched_query(parsed, completions), filters)

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
            project=self.project,
            agents=self.agent,
        )


@dataclass(frozen=True, slots=True)
class PreparedSearch:
    """A search request as the search reads it, made once at the top
    (:meth:`SearchRequest.prepare`) and handed down the pipeline: no stage below reads the
    query or derives the filters again."""

    request: SearchRequest
    query: SearchedQuery
    """The query read once: parsed, prefixes completed, search terms, the bounded text."""
    filters: SearchFilters
    """The store-level filters (:meth:`SearchRequest.filters`)."""


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
