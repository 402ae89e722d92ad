"""The record an importer builds (:class:`ImportSession`, pure parsing output) and the pure rules
for writing it: parents before children, which fields an import may write."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_session_recall.messages import MessageLike
from langchain_session_recall.models import Session

__all__ = ["UNDATED", "ImportSession", "fields_to_write", "order_parents_first"]

UNDATED = "undated_by"
"""Key of an imported message dict that had no time of its own: how it was dated."""


@dataclass
class ImportSession:
    """One session read from a source, ready to write.

    ``messages`` are ``(external_key, message)`` pairs: the key identifies the message in the
    source (a line number, a uuid, a Hermes message id) and is what makes re-runs idempotent.

    Example:
        >>> s = ImportSession("chat-1", "import", [("f:1", {"role": "user", "content": "hi"})])
        >>> s.messages[0][0]
        'f:1'
    """

    id: str
    source: str
    messages: list[tuple[str, MessageLike]] = field(default_factory=list)
    parent_session_id: str | None = None
    model: str | None = None
    title: str | None = None
    user_id: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    end_reason: str | None = None


def order_parents_first(
    sessions: Sequence[ImportSession], known: Callable[[str], bool] = lambda _: False
) -> tuple[list[ImportSession], list[str]]:
    """Sessions sorted so every parent precedes its children (pure, cycle-safe).

    A parent that is neither in ``sessions`` nor ``known`` (already in the store) is missing:
    the child is detached (written as a root) and its id returned in the second list. Members of
    a parent cycle are detached the same way.

    Example:
        >>> a, b = ImportSession("a", "cli", parent_session_id="b"), ImportSession("b", "cli")
        >>> [s.id for s in order_parents_first([a, b])[0]]
        ['b', 'a']
    """
    by_id = {s.id: s for s in sessions}
    ordered: list[ImportSession] = []
    orphans: list[str] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    for start in sessions:
        stack: list[str] = []
        node: str | None = start.id
        # Walk up to the first placed (or external) ancestor, then place the path top-down.
        while node is not None and node in by_id and state.get(node) is None:
            state[node] = 1
            stack.append(node)
            parent = by_id[node].parent_session_id
            if parent is not None and state.get(parent) == 1:  # cycle: cut it here
                orphans.append(node)
                by_id[node].parent_session_id = None
                break
            node = parent
        for sid in reversed(stack):
            session = by_id[sid]
            parent = session.parent_session_id
            if parent is not None and parent not in by_id and not known(parent):
                orphans.append(sid)
                session.parent_session_id = None
            state[sid] = 2
            ordered.append(session)
    return ordered, orphans


def fields_to_write(session: ImportSession, existing: Session | None) -> dict[str, Any]:
    """The session fields an import writes (pure): all it has for a new session; for one the
    store holds already, only the fields that are empty there.

    A re-run never rewrites what it did not import: a source, title, model, owner, parent or
    end given earlier (by another import, the recorder or your code) stays as it is; the one
    exception is ``started_at``, which moves earlier when older messages arrive.

    Example:
        >>> from langchain_session_recall.models import Session
        >>> held = Session(id="s1", source="helpdesk", started_at=10.0, title="Refund")
        >>> fields_to_write(ImportSession("s1", "import", model="gpt", title="x"), held)
        {'model': 'gpt'}
    """
    given: dict[str, Any] = {
        "source": session.source,
        "parent_session_id": session.parent_session_id,
        "model": session.model,
        "title": session.title,
        "user_id": session.user_id,
        "started_at": session.started_at,
        "end_reason": session.end_reason,
    }
    if existing is None:
        return {k: v for k, v in given.items() if v is not None}
    fields = {k: v for k, v in given.items() if v is not None and getattr(existing, k) is None}
    if session.started_at is not None and session.started_at < existing.started_at:
        fields["started_at"] = session.started_at
    if existing.ended_at is not None:
        fields.pop("end_reason", None)  # the end was recorded already: keep it whole
    return fields
