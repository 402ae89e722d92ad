"""Import Gemini CLI chat recordings (``~/.gemini/tmp/<project>/chats/``).

A recording is a JSONL log written by gemini-cli's ``ChatRecordingService``: a first line of
session metadata (``sessionId``, ``projectHash``, ``startTime``, ``kind``), then one line per
message write. A message is rewritten in full, under the same ``id``, each time its tool calls,
results or tokens change: the last version wins and keeps the first one's place.
``{"$set": {...}}`` updates the metadata (``summary`` becomes the title); ``{"$rewindTo": id}``
drops that message and every one recorded after it (an unknown id drops them all), as
gemini-cli does when it loads the file. Older versions wrote one JSON object per session
(``session-*.json``, the whole ``ConversationRecord``): read the same way. Sub-agents record
into ``chats/<parent sessionId>/<sessionId>.jsonl``: a child session of that parent.

Messages are keyed by session and message id (tool results by their call id as well), so a
re-import adds only what is new.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.errors import ImportSourceError
from langchain_session_recall.importers.base import write_sessions
from langchain_session_recall.importers.lines import (
    MAX_LINE_BYTES,
    BadEntry,
    bounded_lines,
    entry_time,
    identifier,
    json_objects,
)
from langchain_session_recall.importers.records import ImportSession, note_where, where_text
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.sources import open_regular_file, open_sources
from langchain_session_recall.messages import storable_text

__all__ = ["default_gemini_dir", "import_gemini", "is_recording", "parse_gemini_records"]

KIND = "gemini"
SOURCE = "gemini"
_CHATS = "chats"
_PATH_BYTES = 4096  # a directory's path, as .project_root holds it


def default_gemini_dir() -> Path:
    """``~/.gemini/tmp``, under which Gemini CLI keeps each project's ``chats/``.

    Example:
        >>> default_gemini_dir().parts[-2:]
        ('.gemini', 'tmp')
    """
    return Path.home() / ".gemini" / "tmp"


def _parts_text(content: Any) -> str:
    """The text of a ``PartListUnion``: a string, a part, or a list of them (thought parts
    and inline data left out; a function response gives its output)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, list):
        return ""
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping) and not part.get("thought"):
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(response := part.get("functionResponse"), Mapping):
                texts.append(_response_text(response.get("response")))
    return "\n".join(t for t in texts if t)


def _response_text(response: Any) -> str:
    if isinstance(response, Mapping):
        for key in ("output", "error", "content"):
            if isinstance(response.get(key), str):
                return str(response[key])
    return "" if response is None else json.dumps(response, ensure_ascii=False, default=str)


class _Recording:
    """Replays a recording's records, as gemini-cli does when it loads the file."""

    def __init__(self) -> None:
        self.meta: dict[str, Any] = {}
        self.messages: dict[str, tuple[str, Mapping[str, Any]]] = {}  # id -> (where, record)

    def accept(self, record: Mapping[str, Any], where: str, report: ImportReport) -> None:
        if "$rewindTo" in record:
            target = record["$rewindTo"]
            if not isinstance(target, str):
                raise BadEntry("$rewindTo is not a message id")
            ids = list(self.messages)
            cut = ids.index(target) if target in self.messages else 0
            for dropped in ids[cut:]:
                del self.messages[dropped]
            report.ignore("rewind marker")
        elif isinstance(record.get("$set"), Mapping):
            update = dict(record["$set"])
            if update.pop("messages", None) is not None:
                # The model's context after a compression or masking: a subset of the
                # recorded turns, rewritten; the recorded messages stay what is imported.
                report.ignore("context snapshot")
            self.meta.update(update)
        elif "id" in record:
            mid = identifier(record["id"], "id")
            if mid is None:
                raise BadEntry("message without id")
            entry_time(record.get("timestamp"))  # a bad time costs this record only
            self.messages[mid] = (where, record)
        elif "sessionId" in record:
            self.meta.update(record)
        else:
            raise BadEntry("neither a message nor session metadata")


def _tool_calls(
    record: Mapping[str, Any], key: str, when: float
) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    """A gemini message's calls (id, name, args) and, for those that ran, their results as
    tool messages (keyed ``<message key>:<call id>``)."""
    calls: list[dict[str, Any]] = []
    results: list[tuple[str, dict[str, Any]]] = []
    raw = record.get("toolCalls")
    for index, call in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
            continue
        call_id = identifier(call.get("id"), "toolCalls.id") or f"{key}#{index}"
        args = call.get("args")
        calls.append({"id": call_id, "name": call["name"], "args": args or {}})
        output = call.get("result")
        if output is None and isinstance(call.get("resultDisplay"), str):
            output = call["resultDisplay"]
        if output is None:
            continue
        tool_message = {
            "role": "tool",
            "content": _parts_text(output),
            "tool_call_id": call_id,
            "tool_name": call["name"],
            "timestamp": when,
        }
        results.append((f"{key}:{call_id}", tool_message))
    return calls, results


def _messages(
    sid: str, recording: _Recording, started: float | None, report: ImportReport
) -> Iterator[tuple[str, dict[str, Any], str | None]]:
    """``(key, message, model)`` of each kept message, in recorded order."""
    previous = started or 0.0
    for mid, (where, record) in recording.messages.items():
        kind = record.get("type")
        if kind not in ("user", "gemini"):
            report.ignore(f"{kind if isinstance(kind, str) and kind else 'untyped'} message")
            continue
        when = entry_time(record.get("timestamp"))
        previous = when = previous if when is None else when
        key = f"{sid}:{mid}"
        text = _parts_text(record.get("content"))
        if kind == "user":
            if text.strip():
                yield key, {"role": "user", "content": text, "timestamp": when}, None
            else:
                report.ignore("empty user message")
            continue
        try:
            calls, results = _tool_calls(record, key, when)
        except BadEntry as exc:
            report.skip(str(exc), where)
            continue
        if not text.strip() and not calls:
            report.ignore("thought-only message")
            continue
        model = record.get("model")
        message: dict[str, Any] = {"role": "assistant", "content": text, "timestamp": when}
        if calls:
            message["tool_calls"] = calls
        yield key, message, model if isinstance(model, str) and model else None
        for result_key, result in results:
            yield result_key, result, None


def parse_gemini_records(
    records: Iterable[tuple[str, Mapping[str, Any]]],
    *,
    report: ImportReport,
    parent_session_id: str | None = None,
) -> ImportSession | None:
    """The session of one recording, from its ``(where, record)`` pairs in file order (pure);
    ``None`` when it holds no message to import (counted as an empty session).

    A record that cannot be read (an id that is not text, a bad timestamp) is skipped and
    reported with where it was.

    Example:
        >>> r = ImportReport("gemini")
        >>> records = [("f:1", {"sessionId": "s1", "projectHash": "p"}),
        ...            ("f:2", {"id": "m1", "type": "user", "content": "hi"}),
        ...            ("f:3", {"id": "m2", "type": "gemini", "content": "oops"}),
        ...            ("f:4", {"$rewindTo": "m2"})]
        >>> s = parse_gemini_records(records, report=r)
        >>> s.id, [m["content"] for _, m in s.messages]
        ('s1', ['hi'])
    """
    recording = _Recording()
    for where, record in records:
        try:
            recording.accept(record, where, report)
        except BadEntry as exc:
            report.skip(str(exc), where)
        except (TypeError, ValueError, OverflowError, RecursionError, UnicodeError) as exc:
            # A kind of junk the checks do not name yet: it costs this record only.
            report.skip(f"unreadable record ({type(exc).__name__})", where)
    meta = recording.meta
    try:
        sid = identifier(meta.get("sessionId"), "sessionId")
        started = entry_time(meta.get("startTime"))
    except BadEntry as exc:
        report.skip(str(exc), next(iter(recording.messages.values()), ("recording", {}))[0])
        return None
    if sid is None:
        if recording.messages:
            where = next(iter(recording.messages.values()))[0].rsplit(":", 1)[0]
            report.skip("recording without sessionId", where, count=len(recording.messages))
        return None
    session = ImportSession(id=sid, source=SOURCE, parent_session_id=parent_session_id)
    summary = meta.get("summary")
    session.title = summary if isinstance(summary, str) and summary.strip() else None
    directories = meta.get("directories")
    if isinstance(directories, list) and directories:  # the workspace's, its first the root
        note_where(session, directories[0])
    for key, message, model in _messages(sid, recording, started, report):
        session.messages.append((key, message))
        session.model = session.model or model
    if not session.messages:
        report.ignore("empty session")
        return None
    first = min(m["timestamp"] for _, m in session.messages if isinstance(m, dict))
    session.started_at = first if started is None else min(started, first)
    return session


def _parent_of(file: Path) -> str | None:
    """The parent session of a sub-agent recording (``chats/<parent>/<id>.jsonl``)."""
    if file.parent.name != _CHATS and file.parent.parent.name == _CHATS:
        return storable_text(file.parent.name)
    return None


def _project_root(file: Path, known: dict[Path, str | None]) -> str | None:
    """The directory a recording's project is (``<project>/.project_root``, which Gemini CLI
    writes beside ``chats/``), read once per project; ``None`` when there is none."""
    chats = file.parent if file.parent.name == _CHATS else file.parent.parent
    marker = chats.parent / ".project_root"
    if marker not in known:
        try:
            with open_regular_file(marker) as fh:
                known[marker] = where_text(fh.read(_PATH_BYTES).decode("utf-8", "replace"))
        except (ImportSourceError, OSError):
            known[marker] = None
    return known[marker]


def is_recording(file: Path, root: Path) -> bool:
    """A chat recording: the file named, or one in a ``chats`` folder (or a sub-agent folder
    in it); checkpoints and logs beside ``chats/`` are not conversations.

    Example:
        >>> root = Path("/home/ana/.gemini/tmp")
        >>> is_recording(root / "p" / "chats" / "s.jsonl", root)
        True
        >>> is_recording(root / "p" / "logs.json", root)
        False
    """
    return file == root or _CHATS in (file.parent.name, file.parent.parent.name)


def _file_records(
    file: Path, fh: Any, report: ImportReport, max_line_bytes: int
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(where, record)`` of a ``.jsonl`` recording, or of an older whole-file ``.json`` one
    (its metadata, then each message)."""
    name = storable_text(file.name)
    if file.suffix == ".jsonl":
        lines = bounded_lines(fh, name=name, report=report, max_line_bytes=max_line_bytes)
        for number, obj in json_objects(lines, name=name, report=report):
            yield f"{name}:{number}", obj
        return
    data = fh.read(max_line_bytes + 1)
    if len(data) > max_line_bytes:
        report.skip(f"file too large (over {max_line_bytes} bytes)", name)
        return
    try:
        whole = json.loads(data)
    except (ValueError, RecursionError):
        report.skip("not valid JSON", name)
        return
    if not isinstance(whole, Mapping):
        report.skip("not a JSON object", name)
        return
    messages = whole.get("messages")
    yield name, {k: v for k, v in whole.items() if k != "messages"}
    for index, message in enumerate(messages if isinstance(messages, list) else [], 1):
        if isinstance(message, Mapping):
            yield f"{name}: message {index}", message
        else:
            report.skip("not a JSON object", f"{name}: message {index}")


def import_gemini(
    store: SessionBackend,
    path: str | os.PathLike[str] | None = None,
    *,
    show_progress: bool | None = None,
    reimport: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    follow_symlinks: bool = False,
) -> ImportReport:
    """Import Gemini CLI recordings: one file, or every ``chats/`` recording under a
    directory (default ``~/.gemini/tmp``), into ``store``.

    Sub-agents become child sessions of the session that started them; ``summary`` is the
    title; the first model seen is the session's. ``info``/``error``/``warning`` notes and
    thoughts are left out. A line that cannot be read is skipped and reported; a line longer
    than ``max_line_bytes`` (and an older ``.json`` recording larger than it) likewise.

    Example:
        >>> import json, tempfile, pathlib
        >>> chats = pathlib.Path(tempfile.mkdtemp()) / "proj" / "chats"
        >>> chats.mkdir(parents=True)
        >>> lines = [{"sessionId": "s1", "projectHash": "p", "startTime": "2026-11-03T10:00:00Z"},
        ...          {"id": "m1", "type": "user", "content": [{"text": "why is CI red?"}]}]
        >>> _ = (chats / "session-2026-11-03T10-00-s1.jsonl").write_text(
        ...     "".join(json.dumps(x) + "\\n" for x in lines))
        >>> from langchain_session_recall import SessionStore
        >>> import_gemini(SessionStore(":memory:"), chats.parent.parent).summary()
        'gemini: 1 session (1 new), 1 message imported'
    """
    report = ImportReport(KIND)
    root = Path(path).expanduser() if path is not None else default_gemini_dir()
    sources = open_sources(
        root,
        report=report,
        suffix=(".jsonl", ".json"),
        follow_symlinks=follow_symlinks,
        hint=f"; Gemini CLI keeps its recordings in {default_gemini_dir()}/<project>/chats",
    )
    parsed: dict[str, ImportSession] = {}
    roots: dict[Path, str | None] = {}
    for file, fh in sources:
        if not is_recording(file, root):
            continue
        records = _file_records(file, fh, report, max_line_bytes)
        session = parse_gemini_records(records, report=report, parent_session_id=_parent_of(file))
        if session is None:
            continue
        session.project = _project_root(file, roots) or session.project
        into = parsed.setdefault(session.id, session)
        if into is not session:  # an older .json and the .jsonl it was continued in
            keys = dict(into.messages)
            keys.update(session.messages)
            into.messages = list(keys.items())
            into.title = session.title or into.title
            into.started_at = min(into.started_at or 0.0, session.started_at or 0.0)
    return write_sessions(
        store, list(parsed.values()), report, show_progress=show_progress, reimport=reimport
    )
