"""Import JSON Lines files of OpenAI-style chat messages.

One message per line, or one conversation per line (``{"messages": [...]}``, the OpenAI chat
and fine-tuning format, with optional ``id``, ``title`` and ``metadata``; each such line is a
session). A message line: ``{"role": "user", "content": "..."}`` with the optional keys
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
    MAX_LINE_BYTES,
    ImportReport,
    ImportSession,
    bounded_lines,
    open_sources,
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


def _session_fields(obj: Mapping[str, Any], parent_field: str) -> dict[str, Any]:
    """Session fields of a line: its own keys, else those of its ``metadata`` object."""
    meta = obj.get("metadata")
    sources = [obj, meta] if isinstance(meta, Mapping) else [obj]
    out: dict[str, Any] = {}
    for key in ("source", "model", "title", "user_id", parent_field):
        for where in sources:
            if where.get(key) not in (None, ""):
                out[key] = where[key]
                break
    return out


def _message(obj: Mapping[str, Any], when: float) -> dict[str, Any] | None:
    """A stored message from an OpenAI-style message object, or ``None`` (no known role)."""
    role = obj.get("role")
    role = _ROLE_ALIASES.get(role, role) if isinstance(role, str) else role
    if role not in ROLES:
        return None
    return {
        "role": role,
        "content": obj.get("content"),
        "timestamp": when,
        "tool_calls": obj.get("tool_calls"),
        "tool_call_id": obj.get("tool_call_id"),
        "tool_name": obj.get("tool_name", obj.get("name") if role == "tool" else None),
    }


def _is_conversation(obj: Mapping[str, Any]) -> bool:
    """``{"messages": [...]}`` (OpenAI chat / fine-tuning format), not a message itself."""
    return isinstance(obj.get("messages"), list) and "role" not in obj


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

    A line is one message (``{"role": ..., "content": ...}``), or one whole conversation
    (``{"messages": [...]}``, the OpenAI chat format, with optional ``id``/``session_id``,
    ``title`` and ``metadata``): a session of its own, named by its id, else
    ``<file stem>-<line number>``.

    Example:
        >>> r = ImportReport("jsonl")
        >>> lines = ['{"role": "user", "content": "hi"}', "{oops",
        ...          '{"id": "c1", "messages": [{"role": "user", "content": "yo"}]}']
        >>> [(s.id, len(s.messages)) for s in parse_jsonl_lines(lines, name="a.jsonl",
        ...     default_session_id="a", report=r)], dict(r.skipped)
        ([('a', 1), ('c1', 1)], {'not valid JSON': 1})
    """
    sessions: dict[str, ImportSession] = {}

    def session_for(sid: str, fields: Mapping[str, Any], when: float) -> ImportSession:
        session = sessions.get(sid)
        if session is None:
            session = sessions[sid] = ImportSession(id=sid, source=source)
        if fields.get("source") and session.source == source:
            session.source = str(fields["source"])
        for key in ("model", "title", "user_id"):
            if fields.get(key) and getattr(session, key) is None:
                setattr(session, key, str(fields[key]))
        parent = fields.get(parent_field)
        if parent and session.parent_session_id is None and str(parent) != sid:
            session.parent_session_id = str(parent)
        if session.started_at is None or when < session.started_at:
            session.started_at = when
        return session

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
        conversation = _is_conversation(obj)
        stamp = obj.get("timestamp")
        if conversation and stamp is None:
            stamp = obj.get("created_at", obj.get("create_time"))
        try:
            ts = _timestamp(stamp)
        except ValueError:
            report.skip("bad timestamp", where)
            continue
        when = ts if ts is not None else default_time
        fields = _session_fields(obj, parent_field)
        if conversation:
            sid = next(
                (str(obj[k]) for k in ("session_id", "id", "conversation_id") if obj.get(k)),
                f"{default_session_id}-{number}",
            )
            pairs = []
            for index, item in enumerate(obj["messages"], 1):
                message = _message(item, when) if isinstance(item, Mapping) else None
                if message is None:
                    report.skip("no known role", f"{where}: message {index}")
                    continue
                try:
                    own = _timestamp(item.get("timestamp"))
                except ValueError:
                    own = None
                message["timestamp"] = own if own is not None else when
                pairs.append((f"{sid}:{name}:{number}:{index}", message))
            if pairs:
                session_for(sid, fields, when).messages.extend(pairs)
            continue
        message = _message(obj, when)
        if message is None:
            report.skip("no known role", where)
            continue
        given = obj.get("session_id")
        sid = str(given) if given not in (None, "") else default_session_id
        session_for(sid, fields, when).messages.append((f"{sid}:{name}:{number}", message))
    return list(sessions.values())


def import_jsonl(
    store: SessionBackend,
    path: str | os.PathLike[str],
    *,
    parent_field: str = "parent_session_id",
    source: str = "import",
    show_progress: bool | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    follow_symlinks: bool = False,
) -> ImportReport:
    """Import one ``.jsonl`` file, or every ``*.jsonl`` under a directory, into ``store``.

    A line longer than ``max_line_bytes`` (64 MB) is skipped and reported as too long; memory
    stays bounded whatever the size of a line. Under a directory only regular files inside it
    are read: symlinks leading out of it are skipped and reported unless ``follow_symlinks``
    (see :func:`~langchain_session_recall.importers.base.source_files`). A FIFO or a device
    raises :class:`ImportSourceError` ("not a regular file"), without blocking.

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
    sources = open_sources(Path(path).expanduser(), report=report, follow_symlinks=follow_symlinks)
    for file, fh in sources:
        parsed.extend(
            parse_jsonl_lines(
                bounded_lines(fh, name=file.name, report=report, max_line_bytes=max_line_bytes),
                name=file.name,
                default_session_id=file.stem,
                report=report,
                parent_field=parent_field,
                default_time=os.fstat(fh.fileno()).st_mtime,
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
