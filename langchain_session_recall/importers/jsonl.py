"""Import JSON Lines files of OpenAI-style chat messages.

One message per line: ``{"role": "user", "content": "..."}`` with the optional keys
``tool_calls``, ``tool_call_id``, ``name``/``tool_name``, ``timestamp`` (Unix seconds or ISO
8601) and, for the session, ``session_id``, ``parent_session_id`` (or the field named by
``parent_field``), ``source``, ``model``, ``title``, ``user_id``. Lines without ``session_id``
belong to a session named after the file (its stem). Each message is keyed by session, file name
and line number, so re-importing a file that grew adds only the new lines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.dates import to_timestamp
from langchain_session_recall.importers.base import (
    ImportReport,
    ImportSession,
    ImportSourceError,
    write_sessions,
)
from langchain_session_recall.messages import ROLES

__all__ = ["import_jsonl", "parse_jsonl_lines"]

KIND = "jsonl"
_ROLE_ALIASES = {"human": "user", "ai": "assistant", "function": "tool", "developer": "system"}


def _timestamp(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return to_timestamp(str(value))


def parse_jsonl_lines(
    lines: Iterable[str],
    *,
    name: str,
    default_session_id: str,
    report: ImportReport,
    parent_field: str = "parent_session_id",
    default_time: float = 0.0,
    source: str = "import",
) -> list[ImportSession]:
    """Parse the lines of one file into sessions (pure; malformed lines reported and skipped).

    Example:
        >>> r = ImportReport("jsonl")
        >>> lines = ['{"role": "user", "content": "hi"}', "{oops"]
        >>> [len(s.messages) for s in parse_jsonl_lines(lines, name="a.jsonl",
        ...     default_session_id="a", report=r)], dict(r.skipped)
        ([1], {'not valid JSON': 1})
    """
    sessions: dict[str, ImportSession] = {}
    for number, line in enumerate(lines, 1):
        where = f"{name}:{number}"
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            report.skip("not valid JSON", where)
            continue
        if not isinstance(obj, Mapping):
            report.skip("not a JSON object", where)
            continue
        role = obj.get("role")
        role = _ROLE_ALIASES.get(role, role) if isinstance(role, str) else role
        if role not in ROLES:
            report.skip("no known role", where)
            continue
        try:
            ts = _timestamp(obj.get("timestamp"))
        except ValueError:
            report.skip("bad timestamp", where)
            continue
        sid = obj.get("session_id")
        sid = str(sid) if sid not in (None, "") else default_session_id
        session = sessions.get(sid)
        if session is None:
            session = sessions[sid] = ImportSession(id=sid, source=source)
        if obj.get("source") and session.source == source:
            session.source = str(obj["source"])
        for key in ("model", "title", "user_id"):
            if obj.get(key) and getattr(session, key) is None:
                setattr(session, key, str(obj[key]))
        parent = obj.get(parent_field)
        if parent and session.parent_session_id is None and str(parent) != sid:
            session.parent_session_id = str(parent)
        when = ts if ts is not None else default_time
        if session.started_at is None or when < session.started_at:
            session.started_at = when
        message = {
            "role": role,
            "content": obj.get("content"),
            "timestamp": when,
            "tool_calls": obj.get("tool_calls"),
            "tool_call_id": obj.get("tool_call_id"),
            "tool_name": obj.get("tool_name", obj.get("name") if role == "tool" else None),
        }
        session.messages.append((f"{sid}:{name}:{number}", message))
    return list(sessions.values())


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*.jsonl") if p.is_file())
    if path.is_file():
        return [path]
    raise ImportSourceError(f"no such file or directory: {path}")


def import_jsonl(
    store: SessionBackend,
    path: str | os.PathLike[str],
    *,
    parent_field: str = "parent_session_id",
    source: str = "import",
    show_progress: bool | None = None,
) -> ImportReport:
    """Import one ``.jsonl`` file, or every ``*.jsonl`` under a directory, into ``store``.

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "chat-1.jsonl"
        >>> _ = f.write_text('{"role": "user", "content": "where is the nginx config?"}\\n')
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> import_jsonl(store, f).summary()
        'jsonl: 1 sessions (1 new), 1 messages imported'
        >>> store.get_session("chat-1").source
        'import'
    """
    report = ImportReport(KIND)
    parsed: list[ImportSession] = []
    for file in _files(Path(path).expanduser()):
        with file.open(encoding="utf-8", errors="replace") as fh:
            parsed.extend(
                parse_jsonl_lines(
                    fh,
                    name=file.name,
                    default_session_id=file.stem,
                    report=report,
                    parent_field=parent_field,
                    default_time=file.stat().st_mtime,
                    source=source,
                )
            )
    return write_sessions(store, _merge(parsed), report, show_progress=show_progress)


def _merge(sessions: list[ImportSession]) -> list[ImportSession]:
    """One record per session id (a session may span several files)."""
    merged: dict[str, ImportSession] = {}
    for s in sessions:
        into = merged.get(s.id)
        if into is None:
            merged[s.id] = s
            continue
        into.messages.extend(s.messages)
        for key in ("parent_session_id", "model", "title", "user_id"):
            if getattr(into, key) is None:
                setattr(into, key, getattr(s, key))
        if s.started_at is not None and (into.started_at is None or s.started_at < into.started_at):
            into.started_at = s.started_at
    return list(merged.values())
