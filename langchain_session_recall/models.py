"""Plain data records returned by the store. Frozen, typed, cheap to build."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "HIDDEN_SOURCES",
    "CacheStatus",
    "CachedSummary",
    "Forgotten",
    "MessageHit",
    "RecentSession",
    "SearchFilters",
    "Session",
    "SessionHit",
    "StoredMessage",
    "as_float",
]

CacheStatus = Literal["summarized", "rejected"]
"""The quality gate's verdict on a cached recap."""


def as_float(value: Any) -> float:
    """A stored REAL as a float: 0.0 for NULL, or for text/bytes another writer put there."""
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0


@dataclass(frozen=True, slots=True)
class Session:
    """One row of ``sessions``."""

    id: str
    source: str
    started_at: float
    user_id: str | None = None
    model: str | None = None
    title: str | None = None
    parent_session_id: str | None = None
    ended_at: float | None = None
    end_reason: str | None = None
    message_count: int = 0
    project: str | None = None
    """The working directory the agent ran in (stored as ``cwd``, Hermes's name for it)."""
    git_branch: str | None = None
    """The git branch checked out there, when the agent recorded it."""
    agent: str | None = None
    """The program that wrote the session (``codex``, ``claude-code``, ``hermes``, ...)."""


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One row of ``messages``, with structured content decoded to text.

    ``tool_calls`` is the decoded JSON list (OpenAI wire format), or ``None``; a value that
    is not valid JSON is kept as ``None`` and never raises.
    """

    id: int
    session_id: str
    role: str
    content: str
    timestamp: float
    tool_call_id: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_name: str | None = None

    @property
    def tool_call_names(self) -> list[str]:
        """Names of the functions this assistant message called, in order."""
        names: list[str] = []
        for call in self.tool_calls or []:
            if not isinstance(call, dict):
                continue
            fn = call.get("function")
            name = fn.get("name") if isinstance(fn, dict) else call.get("name")
            if isinstance(name, str) and name:
                names.append(name)
        return names


@dataclass(frozen=True, slots=True)
class MessageHit:
    """A message matched by full-text search. ``relevance`` is positive, higher is better.

    ``position`` is the message's place in its session (0, 1, 2, ...; ``None`` for rows other
    programs wrote), ``session_started`` its session's start time: ranking uses them for
    passage windows and the time prior.
    """

    message_id: int
    session_id: str
    role: str
    relevance: float
    source: str
    timestamp: float
    position: int | None = None
    session_started: float | None = None

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> MessageHit:
        """From ``(id, session_id, role, relevance, source, timestamp[, position,
        session_started])``, as both stores select their hits; a junk value gets a neutral
        default."""
        position = row[6] if len(row) > 6 else None
        return cls(
            message_id=int(row[0]),
            session_id=row[1],
            role=str(row[2] or "unknown").lower(),
            relevance=as_float(row[3]),
            source=row[4] or "unknown",
            timestamp=as_float(row[5]),
            position=position if isinstance(position, int) else None,
            session_started=as_float(row[7]) if len(row) > 7 and row[7] is not None else None,
        )


@dataclass(frozen=True, slots=True)
class SessionHit:
    """A session whose header (title, start date in words) matched a search term."""

    session_id: str
    relevance: float
    source: str
    started_at: float


@dataclass(frozen=True, slots=True)
class RecentSession:
    """A root session as listed by ``recent_sessions``."""

    id: str
    source: str
    started_at: float
    title: str | None
    model: str | None
    message_count: int
    preview: str
    user_id: str | None = None
    last_active: float | None = None
    project: str | None = None
    git_branch: str | None = None
    agent: str | None = None


HIDDEN_SOURCES: tuple[str, ...] = ("tool",)
"""Session sources a search or a listing leaves out unless asked: the sessions a tool run
records."""


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Restrictions applied inside the full-text query (so they never eat the hit limit).

    The store's own filters say only what they are given (no source is hidden by default
    here); a search request hides :data:`HIDDEN_SOURCES` unless told otherwise."""

    role_filter: tuple[str, ...] = ()
    exclude_sources: tuple[str, ...] = ()
    exclude_session_ids: tuple[str, ...] = ()
    user_id: str | None = None
    after: float | None = None
    before: float | None = None
    project: str | None = None
    """Only sessions whose working directory is this one or below it."""
    agents: tuple[str, ...] = ()
    """Only sessions written by one of these agents."""

    def sessions_only(self) -> SearchFilters:
        """These filters without the message-level ones (role, excluded sessions): what a
        query over sessions applies."""
        return SearchFilters(
            exclude_sources=self.exclude_sources,
            user_id=self.user_id,
            after=self.after,
            before=self.before,
            project=self.project,
            agents=self.agents,
        )


@dataclass(frozen=True, slots=True)
class CachedSummary:
    """A recap kept in a summary cache, with the verdict the quality gate gave it.

    ``status`` is ``"summarized"`` for a recap that passed the gate, ``"rejected"`` for a model
    answer that did not (kept so a repeated search does not pay the model again; never served
    as a summary).
    """

    summary: str
    status: CacheStatus = "summarized"
    model: str | None = None
    reasons: tuple[str, ...] = ()
    """Why the gate rejected it (its reason codes); empty for a summary."""


class Forgotten(int):
    """What :meth:`~langchain_session_recall.SessionStore.delete_sessions` did: the number of
    sessions it removed (an ``int``), ``sessions`` (their ids, oldest first) and ``kept``: the
    sessions below them that it left in place because they are not the given user's (each then
    hangs below its nearest ancestor left, or becomes a root). It prints as the number.

    Example:
        >>> done = Forgotten(["a", "a/sub"], kept=["a/bob"])
        >>> done == 2, done.sessions, done.kept
        (True, ('a', 'a/sub'), ('a/bob',))
    """

    sessions: tuple[str, ...]
    kept: tuple[str, ...]

    def __new__(cls, sessions: Sequence[str] = (), *, kept: Sequence[str] = ()) -> Forgotten:
        done = super().__new__(cls, len(sessions))
        done.sessions = tuple(sessions)
        done.kept = tuple(kept)
        return done
