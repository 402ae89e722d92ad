"""Import Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

Each line is one entry: ``user`` lines carry the user's text or ``tool_result`` blocks,
``assistant`` lines carry ``text`` and ``tool_use`` blocks (Claude Code writes one line per
block, sharing ``message.id``; they are merged back into one message), ``summary`` lines give
the chain a title, ``ai-title`` lines too (the latest wins over summaries). Entries with
``isSidechain: true`` come from a sub-agent started by the ``Task`` tool: each side chain
becomes a child session of the main one. Newer versions write each sub-agent to
``<session>/subagents/agent-<id>.jsonl``, its type in ``agent-<id>.meta.json`` (``agentType``:
the child's title). A ``continued-in`` line closes a session moved to another id (a
background fork): that session becomes a child of this one, without the history it copied.
Entries are keyed by their ``uuid``, so re-importing a transcript that grew adds only the new
entries.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.dates import to_timestamp
from langchain_session_recall.errors import ImportSourceError
from langchain_session_recall.importers.base import stored_history, write_sessions
from langchain_session_recall.importers.lines import (
    MAX_LINE_BYTES,
    BadEntry,
    bounded_lines,
    identifier,
    json_objects,
)
from langchain_session_recall.importers.records import (
    ImportSession,
    note_where,
    without_copied_history,
)
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.sources import (
    open_files,
    open_regular_file,
    open_sources,
)
from langchain_session_recall.messages import storable_text

__all__ = ["default_claude_dir", "import_claude_code", "parse_claude_code_lines"]

KIND = "claude-code"
SOURCE = "claude-code"
_META_BYTES = 64 * 1024  # a sub-agent's meta.json holds a few fields


def default_claude_dir() -> Path:
    """``~/.claude/projects``, where Claude Code keeps its transcripts.

    Example:
        >>> default_claude_dir().parts[-2:]
        ('.claude', 'projects')
    """
    return Path.home() / ".claude" / "projects"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text" and b.get("text")
        )
    return ""


def _chain_root(uuid: str, parents: Mapping[str, str | None]) -> str:
    """First entry of the side chain holding ``uuid`` (cycle-safe)."""
    seen = {uuid}
    while (parent := parents.get(uuid)) is not None and parent in parents and parent not in seen:
        seen.add(parent)
        uuid = parent
    return uuid


class _Builder:
    """Accumulates the messages of one file's sessions."""

    def __init__(self, report: ImportReport, default_session_id: str) -> None:
        self.report = report
        self.default_session_id = default_session_id
        self.sessions: dict[str, ImportSession] = {}
        self.tool_names: dict[str, str] = {}
        self.last_api_id: dict[str, tuple[str, dict[str, Any]]] = {}

    def session(self, sid: str, parent: str | None, when: float) -> ImportSession:
        s = self.sessions.get(sid)
        if s is None:
            s = self.sessions[sid] = ImportSession(id=sid, source=SOURCE, parent_session_id=parent)
        if s.started_at is None or when < s.started_at:
            s.started_at = when
        return s

    def user(self, s: ImportSession, uuid: str, content: Any, when: float) -> None:
        if isinstance(content, str):
            if content.strip():
                s.messages.append((uuid, {"role": "user", "content": content, "timestamp": when}))
            return
        if not isinstance(content, list):
            self.report.skip("user entry without content", uuid)
            return
        text = _text(content)
        if text.strip():
            s.messages.append((uuid, {"role": "user", "content": text, "timestamp": when}))
        for i, block in enumerate(content):
            if not isinstance(block, Mapping) or block.get("type") != "tool_result":
                continue
            call_id = block.get("tool_use_id")
            s.messages.append(
                (
                    f"{uuid}#r{i}",
                    {
                        "role": "tool",
                        "content": _text(block.get("content")),
                        "tool_call_id": call_id,
                        "tool_name": self.tool_names.get(str(call_id)),
                        "timestamp": when,
                    },
                )
            )
        self.last_api_id.pop(s.id, None)

    def assistant(
        self, s: ImportSession, uuid: str, message: Mapping[str, Any], when: float
    ) -> None:
        model = message.get("model")
        if isinstance(model, str) and model and not model.startswith("<") and s.model is None:
            s.model = model
        blocks = message.get("content")
        blocks = [{"type": "text", "text": blocks}] if isinstance(blocks, str) else blocks
        if not isinstance(blocks, list):
            self.report.skip("assistant entry without content", uuid)
            return
        calls = []
        for b in blocks:
            if isinstance(b, Mapping) and b.get("type") == "tool_use":
                self.tool_names[str(b.get("id"))] = str(b.get("name"))
                calls.append({"id": b.get("id"), "name": b.get("name"), "args": b.get("input", {})})
        text = _text(blocks)
        if not text.strip() and not calls:
            self.report.ignore("thinking-only entry")
            return
        api_id = message.get("id")
        previous = self.last_api_id.get(s.id)
        if api_id and previous and previous[0] == api_id:
            # Same API response written as several lines: one message, as the model sent it.
            merged = previous[1]
            merged["content"] = "\n".join(p for p in (merged["content"], text) if p)
            merged["tool_calls"] = (merged.get("tool_calls") or []) + calls
            return
        row: dict[str, Any] = {"role": "assistant", "content": text, "timestamp": when}
        if calls:
            row["tool_calls"] = calls
        s.messages.append((uuid, row))
        if api_id:
            self.last_api_id[s.id] = (str(api_id), row)


@dataclass(frozen=True, slots=True)
class _Entry:
    """A user or assistant line, checked: its ids are text, its time is a number."""

    number: int
    uuid: str
    session_id: str | None
    when: float
    kind: str
    message: Mapping[str, Any]
    parent_uuid: str | None
    agent_id: str | None
    sidechain: bool
    cwd: Any = None
    git_branch: Any = None


def _when(obj: Mapping[str, Any]) -> float | None:
    """A line's ``timestamp`` in Unix seconds (``None`` without one).

    Raises:
        BadEntry: a timestamp that is not a date.
    """
    try:
        return to_timestamp(obj.get("timestamp"))
    except ValueError:
        raise BadEntry("bad timestamp") from None


def _entry(obj: Mapping[str, Any], number: int) -> _Entry:
    """A user/assistant line as an :class:`_Entry`.

    Raises:
        BadEntry: no uuid, an id that is not a string or holds a lone surrogate, a bad
            timestamp.
    """
    uuid = identifier(obj.get("uuid"), "uuid")
    if uuid is None:
        raise BadEntry("entry without uuid")
    when = _when(obj) or 0.0
    return _Entry(
        number=number,
        uuid=uuid,
        session_id=identifier(obj.get("sessionId"), "sessionId"),
        when=when,
        kind=str(obj["type"]),
        message=obj["message"],
        parent_uuid=identifier(obj.get("parentUuid"), "parentUuid"),
        agent_id=identifier(obj.get("agentId"), "agentId"),
        sidechain=bool(obj.get("isSidechain")),
        cwd=obj.get("cwd"),
        git_branch=obj.get("gitBranch"),
    )


@dataclass
class _Marks:
    """What a file says about its session besides messages: titles, and where it moved."""

    summaries: list[tuple[str | None, str]] = field(default_factory=list)
    ai_title: str | None = None
    continued_in: str | None = None
    continued_at: float | None = None


def _read_entries(
    lines: Iterable[str], *, name: str, report: ImportReport
) -> tuple[list[_Entry], _Marks]:
    """The conversation entries of one file and its :class:`_Marks` (``summary`` titles with
    their leaf uuid, the last ``ai-title``, the ``continued-in`` target); lines that cannot be
    read are skipped and reported with their numbers."""
    entries: list[_Entry] = []
    marks = _Marks()
    for number, obj in json_objects(lines, name=name, report=report):
        kind = obj.get("type")
        try:
            if kind == "summary" and isinstance(obj.get("summary"), str):
                marks.summaries.append(
                    (identifier(obj.get("leafUuid"), "leafUuid"), obj["summary"])
                )
            elif kind == "ai-title" and isinstance(obj.get("aiTitle"), str):
                marks.ai_title = obj["aiTitle"].strip() or marks.ai_title
            elif kind == "continued-in":
                marks.continued_in = identifier(
                    obj.get("continuedInSessionId"), "continuedInSessionId"
                )
                marks.continued_at = _when(obj)
            elif kind in ("user", "assistant") and isinstance(obj.get("message"), Mapping):
                if obj.get("isMeta"):
                    report.ignore("meta entry")
                else:
                    entries.append(_entry(obj, number))
            else:
                report.ignore(f"{kind if isinstance(kind, str) and kind else 'untyped'} entry")
        except BadEntry as exc:
            report.skip(str(exc), f"{name}:{number}")
    return entries, marks


def parse_claude_code_lines(
    lines: Iterable[str],
    *,
    name: str,
    default_session_id: str,
    report: ImportReport,
    agent: str | None = None,
) -> list[ImportSession]:
    """Parse one transcript file into the main session and one child per side chain (pure).

    ``agent`` is the id of a sub-agent file (``<session>/subagents/agent-<id>.jsonl``): each of
    its entries belongs to that agent's child session, whatever its flags. A ``continued-in``
    line ends the main session (``end_reason="continued"``) and adds the session it moved to,
    as a child without messages of its own here (its own file brings them).

    A line that cannot be imported (not JSON, an id that is not a string or not valid Unicode,
    a bad timestamp) is skipped and reported with its number; the other lines are imported.

    Example:
        >>> line = ('{"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": '
        ...         '"2026-11-03T10:00:00Z", "message": {"role": "user", "content": "hi"}}')
        >>> r = ImportReport("claude-code")
        >>> [(s.id, len(s.messages)) for s in parse_claude_code_lines(
        ...     [line, "{not json"], name="s1.jsonl", default_session_id="s1", report=r)]
        [('s1', 1)]
        >>> r.problems
        ['s1.jsonl:2: not valid JSON']
    """
    entries, marks = _read_entries(lines, name=name, report=report)
    side_parents = {e.uuid: e.parent_uuid for e in entries if e.sidechain}
    builder = _Builder(report, default_session_id)
    main_id: str | None = None
    for e in entries:
        sid = e.session_id or default_session_id
        main_id = main_id or sid
        try:
            if e.sidechain or agent:
                chain = e.agent_id or agent or _chain_root(e.uuid, side_parents)[:8]
                builder.session(sid, None, e.when)
                session = builder.session(f"{sid}/agent-{chain}", sid, e.when)
            else:
                session = builder.session(sid, None, e.when)
            note_where(builder.sessions[sid], e.cwd, e.git_branch)
            note_where(session, e.cwd, e.git_branch)
            if e.kind == "user":
                builder.user(session, e.uuid, e.message.get("content"), e.when)
            else:
                builder.assistant(session, e.uuid, e.message, e.when)
        except (TypeError, ValueError, OverflowError, RecursionError, UnicodeError) as exc:
            # A kind of junk the checks do not name yet: it costs this entry only.
            report.skip(f"unreadable entry ({type(exc).__name__})", f"{name}:{e.number}")

    main = builder.sessions.get(main_id or "")
    if main is not None:
        main.title = marks.ai_title or _summary_title(marks.summaries, builder.sessions)
        if marks.continued_in and marks.continued_in != main.id:
            times = [m["timestamp"] for _, m in main.messages if isinstance(m, dict)]
            main.ended_at = marks.continued_at or max(times, default=main.started_at)
            main.end_reason = "continued"
            moved = ImportSession(marks.continued_in, SOURCE, parent_session_id=main.id)
            builder.sessions.setdefault(moved.id, moved)
    return list(builder.sessions.values())


def _summary_title(
    summaries: list[tuple[str | None, str]], sessions: Mapping[str, ImportSession]
) -> str | None:
    """The first ``summary`` line whose leaf is a message of the file (or names none), else
    the first one."""
    known = {u for s in sessions.values() for u, _ in s.messages}
    fitting = [title for leaf, title in summaries if leaf is None or leaf in known]
    firsts = fitting or [t for _, t in summaries]
    return firsts[0] if firsts else None


def import_claude_code(
    store: SessionBackend,
    path: str | os.PathLike[str] | None = None,
    *,
    show_progress: bool | None = None,
    reimport: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    follow_symlinks: bool = False,
    files: Iterable[str | os.PathLike[str]] | None = None,
) -> ImportReport:
    """Import one Claude Code transcript, or every one under a directory (default
    ``~/.claude/projects``), into ``store``.

    A line longer than ``max_line_bytes`` (64 MB) is skipped and reported as too long; memory
    stays bounded whatever the size of a line. Under a directory only regular files inside it
    are read: symlinks leading out of it are skipped and reported unless ``follow_symlinks``.
    A FIFO or a device raises :class:`ImportSourceError` ("not a regular file").

    A session imported before and forgotten since (``delete_sessions``) is left out and
    listed in ``report.forgotten`` unless ``reimport``.

    ``files``: only these transcripts under ``path`` (what ``sync`` reads when only they
    changed), read together as a whole import reads them: a session continued in another
    (``continued-in``) is found in the store when its file is not among them. A file that
    cannot be opened raises (:class:`ImportSourceError`).

    Example:
        >>> import json, tempfile, pathlib
        >>> entry = {"type": "user", "uuid": "u1", "sessionId": "s1", "isSidechain": False,
        ...          "timestamp": "2026-11-03T10:00:00Z",
        ...          "message": {"role": "user", "content": "why is CI red?"}}
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "s1.jsonl"
        >>> _ = f.write_text(json.dumps(entry) + "\\n")
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> import_claude_code(store, f.parent).summary()
        'claude-code: 1 session (1 new), 1 message imported'
    """
    report = ImportReport(KIND)
    parsed: dict[str, ImportSession] = {}
    root = Path(path).expanduser() if path is not None else default_claude_dir()
    if files is None:
        sources = open_sources(
            root,
            report=report,
            follow_symlinks=follow_symlinks,
            hint=f"; Claude Code keeps its transcripts in {default_claude_dir()}",
        )
    else:
        only = [Path(f).expanduser() for f in files]
        sources = open_files(only, named=root, report=report, strict=True)
    for file, fh in sources:
        name = storable_text(file.name)  # an undecodable file name keeps its place, readably
        lines = bounded_lines(fh, name=name, report=report, max_line_bytes=max_line_bytes)
        agent = _agent_of(file)
        sessions = parse_claude_code_lines(
            lines,
            name=name,
            default_session_id=storable_text(file.parent.parent.name if agent else file.stem),
            report=report,
            agent=agent,
        )
        kind = _agent_type(file, report) if agent else None
        for s in sessions:
            if kind and s.id.endswith(f"/agent-{agent}"):
                s.title = s.title or kind
            if (into := parsed.setdefault(s.id, s)) is not s:
                _merge(into, s)  # sub-agent files of a session, resumed and moved sessions
    _link_continuations(store, parsed)
    sessions = without_copied_history(parsed.values(), stored_history(store), report)
    return write_sessions(store, sessions, report, show_progress=show_progress, reimport=reimport)


_CONTINUED = "claude-code:continued:"
"""Import state ``{prefix}{id}``: the session that the session ``id`` continues (its
``continued-in`` line), recorded when that line is read, so that the continuation's own file,
read by a later import, still hangs below it (without the history it copied)."""


def _link_continuations(store: SessionBackend, parsed: Mapping[str, ImportSession]) -> None:
    """Record the continuations found in ``parsed``; give a session read without its parent
    the one an earlier import found it continues."""
    found = {
        f"{_CONTINUED}{s.id}": s.parent_session_id
        for s in parsed.values()
        if s.parent_session_id
        and (moved_from := parsed.get(s.parent_session_id)) is not None
        and moved_from.end_reason == "continued"
    }
    roots = [s for s in parsed.values() if s.parent_session_id is None]
    known = store.read_import_states(_CONTINUED) if roots or found else {}
    for session in roots:
        parent = known.get(f"{_CONTINUED}{session.id}")
        if parent and parent != session.id:
            session.parent_session_id = parent
    store.write_import_states({k: v for k, v in found.items() if known.get(k) != v})


def _agent_of(file: Path) -> str | None:
    """The agent id of a sub-agent file of the newer layout
    (``<session>/subagents/agent-<id>.jsonl``), else ``None``."""
    if file.parent.name != "subagents" or not file.name.startswith("agent-"):
        return None
    return storable_text(file.stem.removeprefix("agent-")) or None


def _agent_type(file: Path, report: ImportReport) -> str | None:
    """``agentType`` from the sub-agent's ``agent-<id>.meta.json`` beside it; a file that
    cannot be read costs the title only (skipped and reported)."""
    meta = file.with_name(f"{file.stem}.meta.json")
    if not meta.exists():
        return None
    try:
        with open_regular_file(meta) as fh:
            data = json.loads(fh.read(_META_BYTES))
    except (ImportSourceError, ValueError, RecursionError) as exc:
        report.skip("unreadable sub-agent meta.json", f"{storable_text(meta.name)}: {exc}")
        return None
    kind = data.get("agentType") if isinstance(data, Mapping) else None
    return storable_text(kind) if isinstance(kind, str) and kind.strip() else None


def _merge(into: ImportSession, more: ImportSession) -> None:
    """Two records of one session (read from several files): one."""
    into.messages.extend(more.messages)
    keys = (
        "title",
        "model",
        "parent_session_id",
        "ended_at",
        "end_reason",
        "project",
        "git_branch",
    )
    for key in keys:
        if getattr(into, key) is None:
            setattr(into, key, getattr(more, key))
    if more.started_at is not None and (into.started_at or more.started_at) >= more.started_at:
        into.started_at = more.started_at
