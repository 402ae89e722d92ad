"""Import Cursor's history: the agent's transcripts and the editor's ``state.vscdb``.

**Agent transcripts** (``~/.cursor/projects/<project>/agent-transcripts/<id>/<id>.jsonl``, a
sub-agent's in ``<id>/subagents/<sub id>.jsonl``): one line per turn,
``{"role": ..., "message": {"content": [blocks]}}`` with ``text``, ``tool_use`` (``name``,
``input``) and ``tool_result`` blocks. Lines carry no time: the file's modification time dates
them (the report counts them). A line is keyed by session, file and line number.

**The editor's database** (``state.vscdb``, table ``cursorDiskKV``): ``composerData:<id>`` holds
a conversation (``name``, ``createdAt``, ``modelConfig``, the ordered
``fullConversationHeadersOnly`` ``[{bubbleId, type}]``, ``subagentComposerIds``; older ones the
whole ``conversation`` inline) and ``bubbleId:<composer>:<bubble>`` one message (``type`` 1 user,
2 assistant, ``text``, ``createdAt``, ``toolFormerData`` for a tool call and its result). The
file reaches tens of GB: conversations are read one at a time, each message by its key, rows
never all at once. A bubble is keyed by composer and bubble id. A conversation the editor also
wrote as an agent transcript is read from the database only (it has the times).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.dates import to_timestamp
from langchain_session_recall.errors import ImportSourceError
from langchain_session_recall.importers.base import write_sessions
from langchain_session_recall.importers.lines import (
    MAX_LINE_BYTES,
    BadEntry,
    bounded_lines,
    identifier,
    json_objects,
)
from langchain_session_recall.importers.records import UNDATED, ImportSession
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.sources import open_regular_file, source_files
from langchain_session_recall.importers.sqlite_source import (
    SqliteSource,
    json_column,
    open_sqlite_source,
)
from langchain_session_recall.messages import is_finite_number, storable_text

__all__ = ["default_cursor_paths", "import_cursor"]

KIND = "cursor"
SOURCE = "cursor"
_DB_SUFFIX = ".vscdb"
_COMPOSERS = (
    "SELECT key, value FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'"
)
_VALUE = "SELECT value FROM cursorDiskKV WHERE key = ?"
_PROBE = "SELECT key, value FROM cursorDiskKV LIMIT 1"
_QUERY = re.compile(r"</?user_query>")
"""The tags the agent wraps a typed prompt in."""


def default_cursor_paths(home: Path | None = None) -> list[Path]:
    """Where Cursor keeps its history: the agent's ``~/.cursor/projects`` and the editor's
    ``state.vscdb`` (``~/.config/Cursor/...`` on Linux, ``~/Library/Application Support/
    Cursor/...`` on macOS, ``%APPDATA%/Cursor/...`` on Windows).

    ``$XDG_CONFIG_HOME`` (``%APPDATA%``) is honoured for your own home only: with ``home``
    given, everything is looked for below it.

    Example:
        >>> [p.name for p in default_cursor_paths(Path("/home/ana"))]
        ['projects', 'state.vscdb']
    """
    env = os.environ if home is None else {}
    home = home or Path.home()
    if sys.platform == "darwin":
        config = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        config = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    editor = config / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    return [home / ".cursor" / "projects", editor]


def _when(value: Any) -> float | None:
    """Unix seconds of a Cursor time: ISO text, or milliseconds (seconds when small).

    Raises:
        BadEntry: neither.
    """
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if not is_finite_number(value):
            raise BadEntry("bad timestamp")
        return float(value) / 1000.0 if value > 1e11 else float(value)
    try:
        return to_timestamp(str(value))
    except ValueError:
        raise BadEntry("bad timestamp") from None


def _result_text(result: Any) -> str:
    """A tool's result as text: a string as it is (JSON text opened up when it holds an
    ``output``/``contents``), an object's ``output``/``contents``, else the JSON."""
    if isinstance(result, str):
        try:
            opened = json.loads(result)
        except (ValueError, RecursionError):
            return result
        result = opened if isinstance(opened, Mapping) else result
        if isinstance(result, str):
            return result
    if isinstance(result, list):  # content blocks
        texts = [str(b["text"]) for b in result if isinstance(b, Mapping) and "text" in b]
        if texts:
            return "\n".join(texts)
    if isinstance(result, Mapping):
        for key in ("output", "contents", "content", "result", "error"):
            if isinstance(result.get(key), str):
                return str(result[key])
    return json.dumps(result, ensure_ascii=False, default=str)


def _args(tool: Mapping[str, Any]) -> Any:
    params = tool.get("params")
    if params is None and isinstance(tool.get("rawArgs"), str):
        try:
            params = json.loads(tool["rawArgs"])
        except (ValueError, RecursionError):
            params = {"input": tool["rawArgs"]}
    if isinstance(params, str):
        try:
            params = json.loads(params)
        except (ValueError, RecursionError):
            params = {"input": params}
    return params if params else {}


# ---------------------------------------------------------------- the editor's database


def _bubble(
    session: ImportSession,
    bubble_id: str,
    bubble: Mapping[str, Any],
    when: float,
    report: ImportReport,
) -> None:
    """One bubble's messages: a user's text, or the assistant's text and tool call with its
    result as a tool message."""
    key = f"{session.id}:{bubble_id}"
    text = str(bubble["text"]) if isinstance(bubble.get("text"), str) else ""
    kind = bubble.get("type")
    if kind == 1:
        if text.strip():
            session.messages.append((key, {"role": "user", "content": text, "timestamp": when}))
        else:
            report.ignore("empty bubble")
        return
    if kind != 2:
        raise BadEntry(f"unknown bubble type {kind!r}")
    tool = bubble.get("toolFormerData")
    calls, result = [], None
    if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
        call_id = identifier(tool.get("toolCallId"), "toolCallId") or bubble_id
        calls = [{"id": call_id, "name": tool["name"], "args": _args(tool)}]
        if tool.get("result") is not None:
            result = {
                "role": "tool",
                "content": _result_text(tool["result"]),
                "tool_call_id": call_id,
                "tool_name": tool["name"],
                "timestamp": when,
            }
    if not text.strip() and not calls:
        report.ignore("thinking or empty bubble")
        return
    message: dict[str, Any] = {"role": "assistant", "content": text, "timestamp": when}
    if calls:
        message["tool_calls"] = calls
    session.messages.append((key, message))
    if result is not None:
        session.messages.append((f"{key}:result", result))


def _headers(composer: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any] | None, Any]]:
    """``(bubble id, the bubble when inline, the header's time)`` in conversation order."""
    headers = composer.get("fullConversationHeadersOnly")
    if isinstance(headers, list) and headers:
        for h in headers:
            if isinstance(h, Mapping) and isinstance(h.get("bubbleId"), str):
                yield h["bubbleId"], None, h.get("createdAt")
        return
    inline = composer.get("conversation")  # older versions: every bubble inline
    for index, b in enumerate(inline if isinstance(inline, list) else []):
        if isinstance(b, Mapping):
            yield str(b.get("bubbleId") or index), b, b.get("createdAt")


def _composer(
    db: SqliteSource, cid: str, parent: str | None, report: ImportReport
) -> ImportSession | None:
    """One conversation, each bubble read by its key; ``None`` when it holds no message."""
    raw = (db.first(_VALUE, (f"composerData:{cid}",)) or (None,))[0]
    try:
        composer = json_column(raw, "composer data")
        started = _when(composer.get("createdAt"))
    except BadEntry as exc:
        report.skip(str(exc), f"composerData:{cid}")
        return None
    model = composer.get("modelConfig")
    model = model.get("modelName") if isinstance(model, Mapping) else None
    name = composer.get("name")
    session = ImportSession(
        id=cid,
        source=SOURCE,
        parent_session_id=parent,
        title=name if isinstance(name, str) and name.strip() else None,
        model=model if isinstance(model, str) and model not in ("", "default") else None,
        started_at=started,
    )
    previous = started or 0.0
    for bubble_id, inline, header_time in _headers(composer):
        where = f"bubbleId:{cid}:{bubble_id}"
        try:
            if inline is None:
                found = db.first(_VALUE, (where,))
                if found is None:
                    report.ignore("bubble not in the database")
                    continue
                inline = json_column(found[0], "bubble")
            when = _when(inline.get("createdAt")) or _when(header_time) or previous
            previous = when
            _bubble(session, bubble_id, inline, when, report)
        except BadEntry as exc:
            report.skip(str(exc), where)
    if not session.messages:
        report.ignore("empty conversation")
        return None
    first = min(m["timestamp"] for _, m in session.messages if isinstance(m, dict))
    session.started_at = first if started is None else min(first, started)
    return session


def _composer_tree(db: SqliteSource, report: ImportReport) -> list[tuple[str, str | None]]:
    """``(composer id, parent id)`` of every conversation, parents first (a first pass over the
    ``composerData`` rows, keeping only ids)."""
    parents: dict[str, str] = {}
    ids: list[str] = []
    for key, raw in db.rows(_COMPOSERS):
        cid = str(key).split(":", 1)[1]
        try:
            composer = json_column(raw, "composer data")
        except BadEntry as exc:
            report.skip(str(exc), str(key))
            continue
        ids.append(cid)
        children = composer.get("subagentComposerIds")
        for child in children if isinstance(children, list) else []:
            if isinstance(child, str) and child != cid:
                parents.setdefault(child, cid)

    def depth(cid: str) -> int:
        seen = {cid}
        while (cid := parents.get(cid, "")) and cid not in seen:
            seen.add(cid)
        return len(seen) - 1

    known = set(ids)
    ordered = sorted(ids, key=depth)  # stable: the file's order within a depth
    return [(cid, parents.get(cid) if parents.get(cid) in known else None) for cid in ordered]


def _database(
    path: Path, report: ImportReport, seen: set[str], *, named: bool
) -> Iterator[ImportSession]:
    """The conversations of one ``state.vscdb``. One found in a directory that is not
    Cursor's (a workspace's own ``state.vscdb`` has no ``cursorDiskKV``) is skipped and
    reported; the file named as the source raises :class:`ImportSourceError`."""
    hint = "; pass Cursor's state.vscdb or its ~/.cursor/projects folder"
    with ExitStack() as stack:
        try:
            db = stack.enter_context(open_sqlite_source(path, probe=_PROBE, hint=hint))
        except ImportSourceError as exc:
            if named:
                raise
            report.skip("not a Cursor database", f"{path}: {exc}")
            return
        for cid, parent in _composer_tree(db, report):
            seen.add(cid)
            if session := _composer(db, cid, parent, report):
                yield session


# ---------------------------------------------------------------- the agent's transcripts


def _transcript_parent(file: Path) -> str | None:
    """``<id>/subagents/<sub>.jsonl``: the sub-agent of session ``<id>``."""
    if file.parent.name == "subagents":
        return storable_text(file.parent.parent.name)
    return None


def parse_cursor_transcript(
    lines: Iterable[str],
    *,
    name: str,
    session_id: str,
    report: ImportReport,
    file_time: float,
    parent_session_id: str | None = None,
) -> ImportSession | None:
    """The session of one agent transcript (pure); ``None`` when it holds no message.

    Example:
        >>> r = ImportReport("cursor")
        >>> line = '{"role": "user", "message": {"content": [{"type": "text", "text": "hi"}]}}'
        >>> s = parse_cursor_transcript([line, "{oops"], name="t.jsonl", session_id="t",
        ...                             report=r, file_time=0.0)
        >>> [m["content"] for _, m in s.messages], r.problems
        (['hi'], ['t.jsonl:2: not valid JSON'])
    """
    session = ImportSession(id=session_id, source=SOURCE, parent_session_id=parent_session_id)
    tool_names: dict[str, str] = {}
    for number, obj in json_objects(lines, name=name, report=report):
        role = obj.get("role")
        message = obj.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        if role not in ("user", "assistant") or not isinstance(content, list | str):
            report.ignore(f"{obj.get('type') or 'untyped'} line")
            continue
        key = f"{session_id}:{name}:{number}"
        try:
            _transcript_line(session, key, str(role), content, tool_names)
        except BadEntry as exc:
            report.skip(str(exc), f"{name}:{number}")
    if not session.messages:
        report.ignore("empty session")
        return None
    for _, m in session.messages:
        if isinstance(m, dict):
            m["timestamp"], m[UNDATED] = file_time, "file"
    session.started_at = file_time
    return session


def _transcript_line(
    session: ImportSession, key: str, role: str, content: Any, tool_names: dict[str, str]
) -> None:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[tuple[str, dict[str, Any]]] = []
    for i, b in enumerate(blocks):
        if not isinstance(b, Mapping):
            continue
        kind = b.get("type")
        if kind == "text" and isinstance(b.get("text"), str):
            texts.append(b["text"])
        elif kind == "tool_use" and isinstance(b.get("name"), str):
            call_id = identifier(b.get("id"), "tool_use id") or f"{key}#{i}"
            tool_names[call_id] = b["name"]
            calls.append({"id": call_id, "name": b["name"], "args": b.get("input") or {}})
        elif kind == "tool_result":
            answered = identifier(b.get("tool_use_id"), "tool_use_id")
            result = {
                "role": "tool",
                "content": _result_text(b.get("content")),
                "tool_call_id": answered,
                "tool_name": tool_names.get(answered or ""),
            }
            results.append((f"{key}#r{i}", result))
    text = "\n".join(t for t in texts if t)
    if role == "user":
        text = _QUERY.sub("", text).strip()
    if text.strip() or calls:
        message: dict[str, Any] = {"role": role, "content": text}
        if calls:
            message["tool_calls"] = calls
        session.messages.append((key, message))
    session.messages.extend(results)


def _transcripts(
    files: Iterable[Path], report: ImportReport, seen: set[str], max_line_bytes: int
) -> Iterator[ImportSession]:
    for file in files:
        sid = storable_text(file.stem)
        if sid in seen:
            report.ignore("transcript of a conversation read from state.vscdb")
            continue
        try:
            fh = open_regular_file(file)
        except ImportSourceError as exc:
            report.skip("not readable", f"{file.name}: {exc}")
            continue
        with fh:
            name = storable_text(file.name)
            session = parse_cursor_transcript(
                bounded_lines(fh, name=name, report=report, max_line_bytes=max_line_bytes),
                name=name,
                session_id=sid,
                report=report,
                file_time=os.fstat(fh.fileno()).st_mtime,
                parent_session_id=_transcript_parent(file),
            )
        if session is not None:
            yield session


def _sources(
    paths: Iterable[Path], report: ImportReport, max_line_bytes: int, follow_symlinks: bool
) -> Iterator[ImportSession]:
    """Every database first (a conversation both hold is read from there), then the
    transcripts, a session at a time."""
    databases: list[Path] = []
    transcripts: list[Path] = []
    for path in paths:
        for file in source_files(
            path, report=report, suffix=(".jsonl", _DB_SUFFIX), follow_symlinks=follow_symlinks
        ):
            if file.suffix == _DB_SUFFIX:
                databases.append(file)
            elif file == path or "agent-transcripts" in file.parts:
                transcripts.append(file)
    seen: set[str] = set()
    for db in databases:
        yield from _database(db, report, seen, named=db in paths)
    yield from _transcripts(transcripts, report, seen, max_line_bytes)


def import_cursor(
    store: SessionBackend,
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    *,
    show_progress: bool | None = None,
    reimport: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    follow_symlinks: bool = False,
) -> ImportReport:
    """Import Cursor's history into ``store``: a ``state.vscdb``, an agent transcript, or a
    directory holding either (default: both of :func:`default_cursor_paths` that exist), or
    several of these read as one source (a list: every database before the transcripts).

    Conversations and sub-agents (``subagentComposerIds``; a transcript's ``subagents/``)
    become sessions and child sessions; the title, model, user and assistant text, tool calls
    with their arguments and results are kept; thinking is left out. The database is opened
    read-only and streamed: memory holds one conversation, whatever the size of the file.

    Example:
        >>> import json, tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp()) / "agent-transcripts" / "t1"
        >>> folder.mkdir(parents=True)
        >>> line = {"role": "user", "message": {"content": [{"type": "text", "text": "hi"}]}}
        >>> _ = (folder / "t1.jsonl").write_text(json.dumps(line) + "\\n")
        >>> from langchain_session_recall import SessionStore
        >>> import_cursor(SessionStore(":memory:"), folder).messages
        1
    """
    report = ImportReport(KIND)
    if isinstance(path, str | os.PathLike):
        paths = [Path(path).expanduser()]
    elif path is not None:
        paths = [Path(p).expanduser() for p in path]
    else:
        paths = [p for p in default_cursor_paths() if p.exists()]
        if not paths:
            where = " or ".join(str(p) for p in default_cursor_paths())
            raise ImportSourceError(f"no Cursor history found in {where}; pass its path")
    return write_sessions(
        store,
        _sources(paths, report, max_line_bytes, follow_symlinks),
        report,
        show_progress=show_progress,
        reimport=reimport,
    )
