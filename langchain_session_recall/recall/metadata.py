"""The metadata of a result Document, typed: one schema per mode, the keys every surface reads.

A search result (``mode="search"``) and a recent-session listing (``mode="recent"``) each carry
a fixed set of keys; :data:`ResultMetadata` is either, told apart by ``mode``. The summarizer
adds its own keys to a copy (``summary_status``, ``citations``, ...: see ``docs/design.md``).
:func:`metadata_of` reads a Document's metadata as one of them, or ``None`` for a Document made
elsewhere.

Example:
    >>> from langchain_session_recall import SessionRecallRetriever, SessionStore
    >>> store = SessionStore(":memory:")
    >>> _ = store.add_session("s1", title="CORS")
    >>> _ = store.add_messages("s1", [{"role": "user", "content": "CORS error in nginx"}])
    >>> [doc] = SessionRecallRetriever(store=store).invoke("cors")
    >>> meta = metadata_of(doc)
    >>> meta is not None and meta["mode"] == "search" and meta["matched_terms"]
    ['cors']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol, TypedDict, cast

from langchain_session_recall.core.where import WhereMetadata

__all__ = ["RecentMetadata", "ResultMetadata", "SearchMetadata", "TimeHintMetadata", "metadata_of"]

TimeHintMetadata = TypedDict(
    "TimeHintMetadata",
    {"from": str, "to": str, "text": str, "start": float, "end": float},
)
"""The time a query named ("last week", "May 2023"): a soft prior on session start times,
from ``start`` to ``end`` (Unix seconds; ``from``/``to`` the same in words), ``text`` as the
query said it."""


class SearchMetadata(WhereMetadata):
    """The metadata of a search result (``mode="search"``): one root session and its chain;
    where it happened (``project``, ``git_branch``, ``agent``, ``resume``) as
    :class:`~langchain_session_recall.core.where.WhereMetadata` says."""

    session_id: str
    """The root session's id (the chain's sub-agents and continuations are in it)."""
    when: str
    """``started_at`` in words (``2026-12-04 17:26 UTC``)."""
    started_at: float
    source: str
    model: str | None
    title: str | None
    user_id: str | None
    score: float
    """Ranking score, comparable within one search only."""
    matched_session_ids: list[str]
    """Sessions of the chain that matched, best evidence first."""
    matched_message_ids: list[int]
    """Messages that matched, best evidence first (the window holds the first)."""
    match_count: int
    matched_terms: list[str]
    """Query terms the chain matched, as the index holds them (stems), rarest first."""
    coverage: float
    """Share of the query's weight the chain matched (0-1)."""
    signals: dict[str, float] | None
    """A hybrid search's parts of the score (``lexical``, ``dense``); ``None`` when lexical."""
    query_expansions: dict[str, str]
    """Query words searched as other words: a typo's correction, a prefix's completions."""
    time_hint: TimeHintMetadata | None
    query: str
    """The query as searched (capped, redacted)."""
    query_reading: Literal["natural", "strict", "relaxed"]
    search_mode: Literal["lexical", "hybrid"]
    sessions_searched: int
    """Root sessions that matched, before the ``k`` cut."""
    mode: Literal["search"]
    last_message_id: int
    """The chain's newest message id: ``session_show`` reads on from there."""
    store_id: str | None
    truncated: bool
    """The window leaves part of the transcript out."""
    recall: dict[str, Any]
    """The result as data (``RecalledSession.to_dict()``; read it back with
    ``RecalledSession.from_metadata``)."""


class RecentMetadata(WhereMetadata):
    """The metadata of a recent session (``mode="recent"``, an empty query), with where it
    happened."""

    session_id: str
    when: str
    started_at: float
    last_active: float | None
    source: str
    model: str | None
    title: str | None
    user_id: str | None
    message_count: int
    preview: str | None
    query: Literal[""]
    mode: Literal["recent"]
    store_id: str | None


ResultMetadata = SearchMetadata | RecentMetadata
"""A result's metadata in either mode; ``meta["mode"]`` tells which."""


class _HasMetadata(Protocol):
    @property
    def metadata(self) -> Mapping[str, Any]: ...


_MODES: dict[str, frozenset[str]] = {
    "search": frozenset(SearchMetadata.__required_keys__),
    "recent": frozenset(RecentMetadata.__required_keys__),
}


def metadata_of(document: _HasMetadata | Mapping[str, Any]) -> ResultMetadata | None:
    """A result's metadata, typed by its ``mode``; ``None`` for metadata that is not one
    (a Document made elsewhere, or one whose keys were removed). Keys added later (the
    summarizer's) are kept.

    Example:
        >>> metadata_of({"mode": "recent"}) is None  # keys missing: not a result's
        True
    """
    metadata = document if isinstance(document, Mapping) else document.metadata
    keys = _MODES.get(str(metadata.get("mode")))
    if keys is None or not keys <= metadata.keys():
        return None
    return cast(ResultMetadata, metadata)
