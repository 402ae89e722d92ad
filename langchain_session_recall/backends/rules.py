"""Rules of the session write path, shared by every store (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_session_recall.errors import LineageCycleError, SessionNotFoundError

__all__ = ["check_ancestors", "check_parent_exists", "session_updates", "validate_session_args"]


def validate_session_args(session_id: object, source: object) -> None:
    """Raise ``ValueError`` unless both are non-empty strings."""
    if not isinstance(session_id, str) or not session_id:
        raise ValueError("session_id must be a non-empty string")
    if not isinstance(source, str) or not source:
        raise ValueError("source must be a non-empty string")


def session_updates(
    source: str,
    parent_session_id: str | None,
    model: str | None,
    title: str | None,
    user_id: str | None,
    started_at: float | None,
    end_reason: str | None,
) -> dict[str, Any]:
    """Columns ``add_session`` changes on an existing session: those given (the default
    ``source="cli"`` counts as not given).

    Example:
        >>> session_updates("cli", None, None, "T", None, 5, None)
        {'title': 'T', 'started_at': 5.0}
    """
    updates = {
        "source": source if source != "cli" else None,
        "parent_session_id": parent_session_id,
        "model": model,
        "title": title,
        "user_id": user_id,
        "started_at": float(started_at) if started_at is not None else None,
        "end_reason": end_reason,
    }
    return {k: v for k, v in updates.items() if v is not None}


def check_parent_exists(session_id: str, parent: str, found: object) -> None:
    """Refuse a session as its own parent, or a parent the store does not hold (``found``)."""
    if parent == session_id:
        raise LineageCycleError(f"session {session_id!r} cannot be its own parent")
    if not found:
        raise SessionNotFoundError(
            f"parent session {parent!r} does not exist; add it before its children"
        )


def check_ancestors(session_id: str, parent: str, ancestors: Iterable[str]) -> None:
    """Refuse ``parent`` when ``session_id`` is among its ``ancestors`` (a cycle)."""
    if session_id in set(ancestors):
        raise LineageCycleError(
            f"making {parent!r} the parent of {session_id!r} would create a cycle: "
            f"{session_id!r} is already an ancestor of {parent!r}"
        )
