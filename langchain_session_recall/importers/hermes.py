"""Import a Hermes agent ``state.db`` (any of its FTS layouts) into a store of our own.

The source is opened read-only through :class:`SessionStore`, which detects the layout, hides
rewound and model-only messages and decodes ``\\x00json:`` content. Session ids are kept as they
are, and each message is keyed by its Hermes id, so re-running the import copies only new
sessions and new messages.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.backends.sqlite import SessionStore
from langchain_session_recall.errors import ImportSourceError, NotASessionDatabaseError
from langchain_session_recall.importers.base import write_sessions
from langchain_session_recall.importers.records import ImportSession
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.sources import check_regular_file
from langchain_session_recall.messages import is_finite_number
from langchain_session_recall.models import StoredMessage

__all__ = ["import_hermes", "read_hermes"]

KIND = "hermes"


def _finite(value: float | None) -> float | None:
    return value if is_finite_number(value) else None


def _message(m: StoredMessage, fallback: float | None) -> dict[str, Any]:
    return {
        "role": m.role,
        "content": m.content,
        # A time another program stored as NaN or text: the session's start stands in (the
        # message still counts; the store would refuse a time that is not a finite number).
        "timestamp": fallback if (when := _finite(m.timestamp)) is None else when,
        "tool_call_id": m.tool_call_id,
        "tool_calls": m.tool_calls,
        "tool_name": m.tool_name,
    }


def read_hermes(source: SessionStore, report: ImportReport) -> list[ImportSession]:
    """Every session of an open Hermes store with its visible messages."""
    sessions = source.get_sessions(source.all_session_ids())
    out: list[ImportSession] = []
    for sid, s in sessions.items():
        stored = source.get_messages(sid)
        started = _finite(s.started_at)
        if started is None:
            started = next((t for m in stored if (t := _finite(m.timestamp)) is not None), None)
        messages: list[tuple[str, Any]] = []
        for m in stored:
            if m.role not in ("user", "assistant", "tool", "system"):
                report.skip(f"unknown role {m.role!r}", f"message {m.id}")
                continue
            messages.append((f"{sid}:{m.id}", _message(m, started)))
        out.append(
            ImportSession(
                id=sid,
                source=s.source,
                messages=messages,
                parent_session_id=s.parent_session_id,
                model=s.model,
                title=s.title,
                user_id=s.user_id,
                started_at=started,
                ended_at=_finite(s.ended_at),
                end_reason=s.end_reason,
                project=s.project,
                git_branch=s.git_branch,
                agent=s.agent or "hermes",
            )
        )
    return out


def import_hermes(
    store: SessionBackend,
    path: str | os.PathLike[str],
    *,
    show_progress: bool | None = None,
    reimport: bool = False,
) -> ImportReport:
    """Copy a Hermes ``state.db`` into ``store``, incrementally.

    Lineage (``parent_session_id``), sources, models, titles, users and end reasons are kept;
    rewound and hidden messages stay out, compacted ones come along.

    A session imported before and forgotten since (``delete_sessions``) is left out and
    listed in ``report.forgotten`` unless ``reimport``.

    Example:
        >>> import tempfile, os
        >>> from hermes_fixtures import build_hermes_db
        >>> src = os.path.join(tempfile.mkdtemp(), "state.db"); build_hermes_db(src, 3)
        >>> store = SessionStore(":memory:")
        >>> import_hermes(store, src).messages > 0
        True
        >>> import_hermes(store, src).messages
        0
    """
    report = ImportReport(KIND)
    path = Path(path).expanduser()
    check_regular_file(path, "; pass the path of a Hermes state.db")
    try:
        source = SessionStore(path, read_only=True)
    except NotASessionDatabaseError as exc:
        raise ImportSourceError(f"{path} is not a Hermes session database: {exc}") from exc
    with source:
        if source.layout.own:  # a store of ours (``import sqlite``), not a Hermes file
            report.label = "sqlite"
        try:
            sessions = read_hermes(source, report)
        except NotASessionDatabaseError as exc:  # e.g. a read stopped at its time limit
            raise ImportSourceError(f"{path} could not be read: {exc}") from exc
    return write_sessions(store, sessions, report, show_progress=show_progress, reimport=reimport)
