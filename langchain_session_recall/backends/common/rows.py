"""Rows as read from either backend, decoded into records; a junk value from another writer
never raises."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from langchain_session_recall.backends.sql import SESSION_FIELDS
from langchain_session_recall.core.text import preview
from langchain_session_recall.messages import (
    decode_content,
)
from langchain_session_recall.models import (
    RecentSession,
    Session,
    StoredMessage,
    as_float,
)


def count_of(value: Any) -> int:
    number = as_float(value)
    return int(number) if math.isfinite(number) else 0


def session_of(row: Sequence[Any]) -> Session:
    """A ``sessions`` row (columns of :data:`sql.SESSION_FIELDS`); junk values never raise."""
    return Session(
        id=str(row[0]),
        source=str(row[1] or "unknown"),
        started_at=as_float(row[2]),
        user_id=row[3],
        model=row[4],
        title=row[5],
        parent_session_id=row[6],
        ended_at=None if row[7] is None else as_float(row[7]),
        end_reason=row[8],
        message_count=count_of(row[9]),
        project=_text(row[10]),
        git_branch=_text(row[11]),
        agent=_text(row[12]),
    )


def _text(value: Any) -> str | None:
    """A where-column as text: another writer's empty string or number is no value."""
    return value if isinstance(value, str) and value else None


def message_of(row: Sequence[Any]) -> StoredMessage:
    """A ``messages`` row; malformed tool-call JSON from another writer shows no calls."""
    calls: Any = None
    if row[6]:
        try:
            calls = json.loads(row[6])
        except (ValueError, TypeError, RecursionError):
            calls = None
    return StoredMessage(
        id=int(row[0]),
        session_id=str(row[1]),
        role=str(row[2] or "unknown").lower(),
        content=decode_content(row[3]),
        timestamp=as_float(row[4]),
        tool_call_id=row[5],
        tool_calls=calls if isinstance(calls, list) else None,
        tool_name=row[7],
    )


def recent_of(row: Sequence[Any]) -> RecentSession:
    session = session_of(row)
    return RecentSession(
        id=session.id,
        source=session.source,
        started_at=session.started_at,
        title=session.title,
        model=session.model,
        message_count=session.message_count,
        preview=preview([decode_content(row[_PREVIEW])]),
        user_id=session.user_id,
        last_active=None if row[_PREVIEW + 1] is None else as_float(row[_PREVIEW + 1]),
        project=session.project,
        git_branch=session.git_branch,
        agent=session.agent,
    )


_PREVIEW = len(SESSION_FIELDS)
"""Where a recent-sessions row's preview, last activity and parent follow its session."""
RECENT_PARENT = _PREVIEW + 2
"""The column of a recent-sessions row that holds its parent's id (see ``sql.recent_sessions``)."""
