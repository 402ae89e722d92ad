"""Import OpenCode's session database (``opencode.db``: tables ``session``, ``message``, ``part``).

OpenCode keeps a session's messages as rows whose ``data`` is the message's JSON (``role``,
``time.created``, ``modelID``), and each message's content as ``part`` rows: ``text``,
``reasoning``, ``tool`` (``callID``, ``tool``, ``state`` with ``input`` and, once it ran,
``output`` or ``error``), ``file``, ``step-start``/``step-finish`` and more. An assistant message
spans the steps of one turn: each step becomes an assistant message with its tool calls,
followed by their outputs as tool messages. ``parent_id`` links a sub-agent session (the
``task`` tool) or a fork to the session it came from.

The file is read-only for us and streamed a session at a time; messages are keyed by session,
message id and step (tool outputs by their call id), so a re-import adds only what is new.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.importers.base import write_sessions
from langchain_session_recall.importers.lines import BadEntry, identifier
from langchain_session_recall.importers.records import ImportSession, where_text
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.sqlite_source import (
    SqliteSource,
    json_column,
    open_sqlite_source,
)
from langchain_session_recall.messages import is_finite_number

__all__ = ["default_opencode_db", "import_opencode"]

KIND = "opencode"
SOURCE = "opencode"
_SESSIONS = (
    "SELECT id, parent_id, title, time_created, {directory} FROM session ORDER BY time_created, id"
)
_SESSION_COLUMNS = "SELECT name FROM pragma_table_info('session')"
_MESSAGES = (
    "SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id"
)
_PARTS = (
    "SELECT p.message_id, p.id, p.data FROM part p JOIN message m ON m.id = p.message_id "
    "WHERE m.session_id = ? ORDER BY m.time_created, m.id, p.id"
)
_PROBE = "SELECT 1 FROM session, message, part LIMIT 1"
_LEFT_OUT = {
    "reasoning": "reasoning part",
    "step-finish": "step marker",
    "snapshot": "snapshot part",
    "patch": "patch part",
    "compaction": "compaction marker",
    "retry": "retry part",
    "agent": "agent mention",
    "subtask": "subtask part (the sub-agent's own session holds it)",
    "file": "file part",
}


def default_opencode_db() -> Path:
    """``$OPENCODE_DB``, else ``${XDG_DATA_HOME:-~/.local/share}/opencode/opencode.db``.

    Example:
        >>> import os
        >>> if "OPENCODE_DB" not in os.environ and "XDG_DATA_HOME" not in os.environ:
        ...     assert default_opencode_db().parts[-3:] == ("share", "opencode", "opencode.db")
    """
    if os.environ.get("OPENCODE_DB"):
        return Path(os.environ["OPENCODE_DB"]).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "opencode" / "opencode.db"


def _seconds(ms: Any) -> float | None:
    """Unix seconds of OpenCode's milliseconds; ``None`` when it is not a number."""
    if isinstance(ms, bool) or not isinstance(ms, int | float) or not is_finite_number(ms):
        return None
    return float(ms) / 1000.0


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


class _Turn:
    """One OpenCode message's parts turned into stored messages, a step at a time."""

    def __init__(self, key: str, role: str, when: float, report: ImportReport) -> None:
        self.key, self.role, self.when, self.report = key, role, when, report
        self.out: list[tuple[str, dict[str, Any]]] = []
        self.texts: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.results: list[tuple[str, dict[str, Any]]] = []

    def part(self, data: Mapping[str, Any]) -> None:
        kind = data.get("type")
        if kind == "text" and isinstance(data.get("text"), str):
            if data.get("synthetic") or data.get("ignored"):
                self.report.ignore("synthetic text part")
            else:
                if self.calls:  # text after tool calls: the model's next step
                    self.flush()
                self.texts.append(data["text"])
        elif kind == "tool" and self.role == "assistant":
            self.tool(data)
        elif kind == "step-start":
            self.flush()
        else:
            self.report.ignore(_LEFT_OUT.get(str(kind), f"{kind} part"))

    def tool(self, data: Mapping[str, Any]) -> None:
        name = data.get("tool")
        call_id = identifier(data.get("callID"), "callID")
        if not isinstance(name, str) or call_id is None:
            raise BadEntry("tool part without tool name or callID")
        state = _object(data.get("state"))
        args = state.get("input")
        self.calls.append({"id": call_id, "name": name, "args": args if args else {}})
        status = state.get("status")
        if status in ("completed", "error"):
            output = state.get("output") if status == "completed" else state.get("error")
            result = {
                "role": "tool",
                "content": output if isinstance(output, str) else json.dumps(output),
                "tool_call_id": call_id,
                "tool_name": name,
                "timestamp": self.when,
            }
            self.results.append((f"{self.key}:{call_id}", result))

    def flush(self) -> None:
        text = "\n".join(t for t in self.texts if t)
        if text.strip() or self.calls:
            step = len([k for k, m in self.out if m["role"] == self.role])
            message: dict[str, Any] = {"role": self.role, "content": text, "timestamp": self.when}
            if self.calls:
                message["tool_calls"] = self.calls
            self.out.append((self.key if step == 0 else f"{self.key}#{step}", message))
            self.out.extend(self.results)
        self.texts, self.calls, self.results = [], [], []


def _session(
    source: SqliteSource, row: tuple[Any, ...], report: ImportReport
) -> ImportSession | None:
    """One session with its messages (read from the file now), or ``None`` when it has none."""
    sid, parent, title, created, directory = row
    session = ImportSession(
        id=sid,
        source=SOURCE,
        parent_session_id=parent or None,
        title=title if isinstance(title, str) and title.strip() else None,
        started_at=_seconds(created),
        project=where_text(directory),
    )
    parts: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for message_id, part_id, raw in source.rows(_PARTS, (sid,)):
        try:
            parts.setdefault(message_id, []).append((part_id, json_column(raw, "part data")))
        except BadEntry as exc:
            report.skip(str(exc), f"part {part_id}")
    for message_id, created_ms, raw in source.rows(_MESSAGES, (sid,)):
        try:
            _message(
                session, message_id, created_ms, json_column(raw, "message data"), parts, report
            )
        except BadEntry as exc:
            report.skip(str(exc), f"message {message_id}")
        parts.pop(message_id, None)
    if not session.messages:
        report.ignore("empty session")
        return None
    return session


def _message(
    session: ImportSession,
    message_id: str,
    created_ms: Any,
    data: Mapping[str, Any],
    parts: Mapping[str, list[tuple[str, Mapping[str, Any]]]],
    report: ImportReport,
) -> None:
    role = data.get("role")
    if role not in ("user", "assistant"):
        raise BadEntry(f"unknown role {role!r}")
    time = _object(data.get("time"))
    when = _seconds(time.get("created")) or _seconds(created_ms) or session.started_at or 0.0
    if session.started_at is None or when < session.started_at:
        session.started_at = when
    if role == "assistant" and session.model is None and isinstance(data.get("modelID"), str):
        session.model = data["modelID"]
    turn = _Turn(f"{session.id}:{message_id}", role, when, report)
    for part_id, part in parts.get(message_id, []):
        try:
            turn.part(part)
        except BadEntry as exc:
            report.skip(str(exc), f"part {part_id}")
    turn.flush()
    session.messages.extend(turn.out)


def _sessions(source: SqliteSource, report: ImportReport) -> Iterator[ImportSession]:
    """Each session with its messages, parents first (a parent is older than its children;
    one that is not is put first all the same)."""
    columns = {name for (name,) in source.rows(_SESSION_COLUMNS)}
    directory = "directory" if "directory" in columns else "NULL"  # a file without it: none
    # ids and titles only: small beside the messages
    rows = list(source.rows(_SESSIONS.format(directory=directory)))
    by_id = {r[0]: r for r in rows}
    done: set[str] = set()

    def ordered(row: tuple[Any, ...], depth: int = 0) -> Iterator[tuple[Any, ...]]:
        parent = by_id.get(row[1]) if row[1] else None
        if parent is not None and parent[0] not in done and depth < 100:
            yield from ordered(parent, depth + 1)
        if row[0] not in done:
            done.add(row[0])
            yield row

    for row in rows:
        for r in ordered(row):
            if session := _session(source, r, report):
                yield session


def import_opencode(
    store: SessionBackend,
    path: str | os.PathLike[str] | None = None,
    *,
    show_progress: bool | None = None,
    reimport: bool = False,
) -> ImportReport:
    """Import OpenCode's ``opencode.db`` (default :func:`default_opencode_db`; a directory
    means the ``opencode.db`` in it) into ``store``.

    Sub-agent sessions and forks become child sessions (``parent_id``); user and assistant
    text, tool calls with their input and tool outputs (or errors) are kept; reasoning,
    synthetic text, files, patches and step markers are left out. A message or part whose
    data is not a JSON object is skipped and reported.

    Example:
        >>> import sqlite3, tempfile, pathlib
        >>> db = pathlib.Path(tempfile.mkdtemp()) / "opencode.db"
        >>> with sqlite3.connect(db) as c:
        ...     c.executescript(
        ...         "CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, title TEXT,"
        ...         " time_created INTEGER);"
        ...         "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT,"
        ...         " time_created INTEGER, data TEXT);"
        ...         "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,"
        ...         " time_created INTEGER, data TEXT);"
        ...         "INSERT INTO session VALUES ('ses_1', NULL, 'CI', 1762164000000);"
        ...         "INSERT INTO message VALUES ('msg_1', 'ses_1', 1762164001000,"
        ...         " '{\\"role\\": \\"user\\", \\"time\\": {\\"created\\": 1762164001000}}');"
        ...         "INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_1', 1762164001000,"
        ...         " '{\\"type\\": \\"text\\", \\"text\\": \\"why is CI red?\\"}');")
        <sqlite3.Cursor object at ...>
        >>> from langchain_session_recall import SessionStore
        >>> import_opencode(SessionStore(":memory:"), db).summary()
        'opencode: 1 session (1 new), 1 message imported'
    """
    report = ImportReport(KIND)
    file = Path(path).expanduser() if path is not None else default_opencode_db()
    if file.is_dir():
        file = file / "opencode.db"
    hint = f"; pass OpenCode's opencode.db (default {default_opencode_db()})"
    with open_sqlite_source(file, probe=_PROBE, hint=hint) as source:
        return write_sessions(
            store,
            _sessions(source, report),
            report,
            show_progress=show_progress,
            reimport=reimport,
        )
