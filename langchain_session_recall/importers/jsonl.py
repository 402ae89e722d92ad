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

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.importers.base import write_sessions
from langchain_session_recall.importers.lines import (
    MAX_LINE_BYTES,
    BadEntry,
    bounded_lines,
    entry_time,
    identifier,
    json_objects,
)
from langchain_session_recall.importers.records import UNDATED, ImportSession
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.resume import FilePoints
from langchain_session_recall.importers.sources import open_files, source_files
from langchain_session_recall.messages import ROLE_ALIASES, ROLES, storable_text

__all__ = ["import_jsonl", "parse_jsonl_lines"]

KIND = "jsonl"
_MOST_TIMES = 10_000
"""Most sessions whose last time a file's resume point keeps (a file of more is read whole)."""


_ID_FIELDS = ("source", "user_id")
_TEXT_FIELDS = ("model", "title")


def _session_fields(obj: Mapping[str, Any], parent_field: str) -> dict[str, str]:
    """Session fields of a line (its own keys, else those of its ``metadata`` object), as text.

    Raises:
        BadEntry: an id field (``source``, ``user_id``, the parent) that is not a string or
            holds a lone surrogate (titles and models are free text: the store repairs them).
    """
    meta = obj.get("metadata")
    sources = [obj, meta] if isinstance(meta, Mapping) else [obj]
    out: dict[str, str] = {}
    for key in (*_ID_FIELDS, *_TEXT_FIELDS, parent_field):
        for where in sources:
            value = where.get(key)
            if value in (None, ""):
                continue
            if key in _TEXT_FIELDS:
                out[key] = str(value)
            elif (text := identifier(value, key)) is not None:
                out[key] = text
            break
    return out


def _role(obj: Mapping[str, Any]) -> str | None:
    role = obj.get("role")
    if not isinstance(role, str):
        return None
    role = ROLE_ALIASES.get(role, role)
    return role if role in ROLES else None


def _message(obj: Mapping[str, Any], when: float | None) -> dict[str, Any] | None:
    """A stored message from an OpenAI-style message object, or ``None`` (no known role)."""
    role = _role(obj)
    if role is None:
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


class _Sessions:
    """The sessions of one file, filled line by line."""

    def __init__(
        self, source: str, parent_field: str, times: Mapping[str, float] | None = None
    ) -> None:
        self.source = source
        self.parent_field = parent_field
        self.by_id: dict[str, ImportSession] = {}
        self.before = dict(times or {})  # each session's last time before the lines read
        self.lined: dict[str, list[tuple[int, dict[str, Any]]]] = {}  # message lines, numbered

    def add(
        self,
        sid: str,
        fields: Mapping[str, str],
        when: float | None,
        pairs: list[tuple[str, Any]],
    ) -> None:
        session = self.by_id.get(sid)
        if session is None:
            session = self.by_id[sid] = ImportSession(id=sid, source=self.source)
        if fields.get("source") and session.source == self.source:
            session.source = fields["source"]
        for key in ("model", "title", "user_id"):
            if fields.get(key) and getattr(session, key) is None:
                setattr(session, key, fields[key])
        parent = fields.get(self.parent_field)
        if parent and session.parent_session_id is None and parent != sid:
            session.parent_session_id = parent
        if when is not None and (session.started_at is None or when < session.started_at):
            session.started_at = when
        session.messages.extend(pairs)

    def date_undated(self, default_time: float) -> None:
        """Give each message without a timestamp its previous neighbour's time in its session
        (the next one's at the session's start), so the session keeps the file's order; a
        session with no time at all takes ``default_time`` (the file's). Each is marked
        (:data:`~langchain_session_recall.importers.records.UNDATED`): the report counts those
        imported and says so."""
        for session in self.by_id.values():
            messages = [m for _, m in session.messages if isinstance(m, dict)]  # ours: dicts
            known = [m["timestamp"] for m in messages if m["timestamp"] is not None]
            if len(known) == len(messages):
                continue
            earlier = self.before.get(session.id)  # (a file read from where it stopped)
            previous = earlier if earlier is not None else known[0] if known else default_time
            for message in messages:
                if message["timestamp"] is None:
                    message["timestamp"] = previous
                    message[UNDATED] = "neighbour" if known or earlier is not None else "file"
                previous = message["timestamp"]
            start = min(m["timestamp"] for m in messages)
            if session.started_at is None or start < session.started_at:
                session.started_at = start

    def times(self, upto: int) -> dict[str, float]:
        """Each session's last message time as of line ``upto`` (dated; what a read of the
        lines after it needs), with those of sessions it did not touch."""
        times = dict(self.before)
        for sid, lines in self.lined.items():
            last = next((m for number, m in reversed(lines) if number <= upto), None)
            if last is not None and last["timestamp"] is not None:
                times[sid] = float(last["timestamp"])
        return times


def _conversation(
    obj: Mapping[str, Any], when: float | None, *, sid: str, where: str, report: ImportReport
) -> list[tuple[str, Any]]:
    """The messages of a ``{"messages": [...]}`` line; bad ones skipped and reported."""
    pairs = []
    for index, item in enumerate(obj["messages"], 1):
        message = _message(item, when) if isinstance(item, Mapping) else None
        if message is None:
            report.skip("no known role", f"{where}: message {index}")
            continue
        try:
            own = entry_time(item.get("timestamp"))
        except BadEntry as exc:
            report.skip(str(exc), f"{where}: message {index}")
            continue
        message["timestamp"] = own if own is not None else when
        pairs.append((f"{sid}:{where}:{index}", message))
    return pairs


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
    ``<file stem>-<line number>``. A line that cannot be imported as it is (not JSON, no known
    role, a bad timestamp, an id that is not a string or not valid Unicode) is skipped and
    reported with its number; the other lines are imported. A message without a timestamp
    takes its previous neighbour's time in its session (the next one's at its start), so the
    file's order holds; a session without any time takes ``default_time`` (the file's
    modification time); ``report.undated`` counts both.

    Example:
        >>> r = ImportReport("jsonl")
        >>> lines = ['{"role": "user", "content": "hi"}', "{oops",
        ...          '{"id": "c1", "messages": [{"role": "user", "content": "yo"}]}']
        >>> [(s.id, len(s.messages)) for s in parse_jsonl_lines(lines, name="a.jsonl",
        ...     default_session_id="a", report=r)], dict(r.skipped)
        ([('a', 1), ('c1', 1)], {'not valid JSON': 1})
    """
    sessions = _Sessions(source, parent_field)
    _read_lines(sessions, lines, name=name, default=default_session_id, report=report)
    sessions.date_undated(default_time)
    return list(sessions.by_id.values())


def _read_lines(
    sessions: _Sessions,
    lines: Iterable[str],
    *,
    name: str,
    default: str,
    report: ImportReport,
    first: int = 1,
) -> None:
    """Each line (numbered from ``first``) into ``sessions``; bad ones skipped and reported."""
    for number, obj in json_objects(lines, name=name, report=report, first=first):
        where = f"{name}:{number}"
        try:
            _line(obj, number, sessions, name=name, default=default, report=report)
        except BadEntry as exc:
            report.skip(str(exc), where)
        except (TypeError, ValueError, OverflowError, RecursionError, UnicodeError) as exc:
            # A kind of junk the checks above do not name yet: it costs this line only.
            report.skip(f"unreadable line ({type(exc).__name__})", where)


def _line(
    obj: Mapping[str, Any],
    number: int,
    sessions: _Sessions,
    *,
    name: str,
    default: str,
    report: ImportReport,
) -> None:
    """Add one line's message or conversation to ``sessions`` (a message without a time is
    dated later, by :meth:`_Sessions.date_undated`).

    Raises:
        BadEntry: the line cannot be imported (nothing of it was added).
    """
    where = f"{name}:{number}"
    conversation = _is_conversation(obj)
    stamp = obj.get("timestamp")
    if conversation and stamp is None:
        stamp = obj.get("created_at", obj.get("create_time"))
    when = entry_time(stamp)
    fields = _session_fields(obj, sessions.parent_field)
    if conversation:
        given = next((obj[k] for k in ("session_id", "id", "conversation_id") if obj.get(k)), None)
        sid = identifier(given, "id") or f"{default}-{number}"
        pairs = _conversation(obj, when, sid=sid, where=where, report=report)
        if pairs:
            sessions.add(sid, fields, when, pairs)
        return
    message = _message(obj, when)
    if message is None:
        raise BadEntry("no known role")
    sid = identifier(obj.get("session_id"), "session_id") or default
    sessions.add(sid, fields, when, [(f"{sid}:{where}", message)])
    sessions.lined.setdefault(sid, []).append((number, message))


def import_jsonl(
    store: SessionBackend,
    path: str | os.PathLike[str],
    *,
    parent_field: str = "parent_session_id",
    source: str = "import",
    show_progress: bool | None = None,
    reimport: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    follow_symlinks: bool = False,
    resume: bool = False,
) -> ImportReport:
    """Import one ``.jsonl`` file, or every ``*.jsonl`` under a directory, into ``store``.

    A line longer than ``max_line_bytes`` (64 MB) is skipped and reported as too long; memory
    stays bounded whatever the size of a line. Under a directory only regular files inside it
    are read: symlinks leading out of it are skipped and reported unless ``follow_symlinks``
    (see :func:`~langchain_session_recall.importers.sources.source_files`). A FIFO or a device
    raises :class:`ImportSourceError` ("not a regular file"), without blocking.

    A session imported before and forgotten since (``delete_sessions``) is left out and
    listed in ``report.forgotten`` unless ``reimport``.

    ``resume=True`` records in the store where the read of each file stopped (the end of
    its last complete line) and each session's last time there; the next import with
    ``resume=True`` reads a file that was only appended to since from there, and any other
    file whole (:mod:`~langchain_session_recall.importers.resume`). A last line without its
    newline (being written) is read again next time.

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "chat-1.jsonl"
        >>> _ = f.write_text('{"role": "user", "content": "where is the nginx config?"}\\n')
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> report = import_jsonl(store, f)
        >>> report.messages, dict(report.undated)  # no time in the line: the file's is used
        (1, {'file': 1})
        >>> store.get_session("chat-1").source
        'import'
    """
    report = ImportReport(KIND)
    parsed: list[ImportSession] = []
    named = Path(path).expanduser()
    files = source_files(named, report=report, follow_symlinks=follow_symlinks)
    points = FilePoints(store, KIND, files, enabled=resume and not reimport)
    for file, fh in open_files(files, named=named, report=report):
        sessions = _Sessions(source, parent_field)
        name = storable_text(file.name)  # an undecodable file name keeps its place, readably
        point = points.check(file, fh)
        if point is not None and isinstance(times := point.state.get("times"), dict):
            sessions.before = {str(k): float(v) for k, v in times.items()}
        cursor = points.cursor(file, fh, point, report=report, max_line_bytes=max_line_bytes)
        lines = cursor or bounded_lines(fh, name=name, report=report, max_line_bytes=max_line_bytes)
        first = cursor.line + 1 if cursor is not None else 1
        stem = storable_text(file.stem)
        _read_lines(sessions, lines, name=name, default=stem, report=report, first=first)
        sessions.date_undated(os.fstat(fh.fileno()).st_mtime)
        parsed.extend(sessions.by_id.values())
        if cursor is not None:
            times = sessions.times(cursor.line)
            if len(times) <= _MOST_TIMES:  # (else read whole next time)
                points.record(file, fh, cursor, {"times": times})
    write_sessions(store, _merge(parsed), report, show_progress=show_progress, reimport=reimport)
    if points.enabled:
        points.save(store)
    return report


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
