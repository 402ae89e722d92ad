"""Import Codex CLI rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``).

A rollout is one thread: JSON lines ``{timestamp, type, payload}``. ``session_meta`` names the
thread (``id``, ``forked_from_id``, ``cwd``, ``git``, and in ``source`` the parent thread of a
sub-agent); ``turn_context`` carries the model; ``response_item`` lines are the conversation:
``message`` (role and content parts), ``function_call`` / ``custom_tool_call`` /
``local_shell_call`` / ``web_search_call`` and the ``*_output`` items answering them by
``call_id``. Reasoning, compaction summaries and ``event_msg`` lines (which repeat the messages
for the UI) are left out. A fork or a sub-agent is a file of its own: it becomes a child
session of the thread it came from, without the history it copied from it. Each message is
keyed by thread id and line number, so a rollout that grew (or was compressed to ``.zst``, or
moved to ``archived_sessions/``) adds only its new lines.

The record shapes follow openai/codex: ``codex-rs/protocol/src/protocol.rs`` (``RolloutItem``,
``SessionMetaLine``, ``SessionSource``, ``SubAgentSource``) and
``codex-rs/protocol/src/models.rs`` (``ResponseItem``, ``FunctionCallOutputPayload``).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.dates import to_timestamp
from langchain_session_recall.importers.base import report_orphans, stored_history, write_sessions
from langchain_session_recall.importers.codex_pipe import reading_pipe
from langchain_session_recall.importers.codex_resume import RolloutPoints, stored_call_names
from langchain_session_recall.importers.lines import (
    MAX_LINE_BYTES,
    BadEntry,
    bounded_lines,
    decode_json,
    identifier,
    json_objects,
)
from langchain_session_recall.importers.records import (
    ImportSession,
    dropping_copied_history,
    note_where,
    order_parents_first,
)
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.resume import (
    LineCursor,
    ResumePoint,
    line_cursor,
    point_at,
)
from langchain_session_recall.importers.sources import open_files, source_files
from langchain_session_recall.messages import storable_text

__all__ = [
    "default_codex_home",
    "import_codex",
    "parse_codex_lines",
    "read_rollout",
    "rollout_files",
]

KIND = "codex"
SOURCE = "codex"
_SUFFIXES = (".jsonl", ".jsonl.zst")
_FOLDERS = ("sessions", "archived_sessions")
_THREAD_ID = re.compile(r"([0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12})$")
# Text Codex puts into the conversation as a user message for the model, not typed by the user.
_CONTEXT = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
)
# The head of a line left out, as Codex writes it (``timestamp``, ``type``, ``payload`` in this
# order; its ``type`` first in a payload): the time, the record type, the reasoning item's type.
_LEFT_OUT = re.compile(
    r'\{\s*"timestamp"\s*:\s*(?:"([^"\\]*)"|null)\s*,\s*"type"\s*:\s*"(event_msg|response_item)"'
    r'\s*,\s*"payload"\s*:\s*\{(\s*"type"\s*:\s*"reasoning")?'
)
_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def default_codex_home() -> Path:
    """``$CODEX_HOME``, else ``~/.codex``: where Codex keeps its rollouts.

    Example:
        >>> import os
        >>> os.environ.pop("CODEX_HOME", None) and None
        >>> default_codex_home().name
        '.codex'
    """
    home = os.environ.get("CODEX_HOME")
    return Path(home).expanduser() if home else Path.home() / ".codex"


def rollout_files(path: Path, *, report: ImportReport, follow_symlinks: bool = False) -> list[Path]:
    """The rollouts an import of ``path`` reads: the file itself; under a Codex home its
    ``sessions/`` and ``archived_sessions/``; under any other directory every
    ``rollout-*.jsonl`` (or ``.jsonl.zst``) file. A plain file wins over a ``.zst`` file of the
    same name beside it.

    Raises:
        ImportSourceError: ``path`` does not exist, or is neither a directory nor a file.
    """
    roots = [path / f for f in _FOLDERS if (path / f).is_dir()] or [path]
    hint = f"; Codex keeps its rollouts in {default_codex_home() / 'sessions'}"
    found: list[Path] = []
    for root in roots:
        files = source_files(
            root, report=report, suffix=_SUFFIXES, follow_symlinks=follow_symlinks, hint=hint
        )
        found += files if files == [path] else [f for f in files if f.name.startswith("rollout-")]
    plain = set(found)
    return [f for f in found if not (f.suffix == ".zst" and f.with_suffix("") in plain)]


def _text(parts: Any) -> str:
    """The text of a message's content parts (``input_text``, ``output_text``; images left
    out).

    Raises:
        BadEntry: content that is neither text nor a list of parts.
    """
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        raise BadEntry("message content is not a list")
    return "\n".join(
        str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def _output(value: Any) -> str:
    """A tool output as text: a string, a list of content items, or ``{content, success}``.
    A shell call's output that Codex wrapped as ``{"output": ..., "metadata": {...}}`` in a
    string is unwrapped to the command's output.

    Raises:
        BadEntry: anything else.
    """
    if isinstance(value, str):
        if value.startswith('{"output"'):
            with contextlib.suppress(ValueError, RecursionError):
                wrapped = decode_json(value)
                inner = wrapped.get("output") if isinstance(wrapped, dict) else None
                if isinstance(inner, str):
                    return inner
        return value
    if isinstance(value, list):
        return _text(value)
    if isinstance(value, dict) and isinstance(value.get("content"), str | list):
        return _output(value["content"])
    raise BadEntry("tool output is not text")


def _arguments(raw: Any) -> Any:
    """Function-call arguments: Codex keeps them as a JSON string; decoded when it is one."""
    if isinstance(raw, str):
        try:
            return decode_json(raw)
        except ValueError:
            return {"input": raw}
    return raw if isinstance(raw, dict) else {"input": raw}


def _call(payload: Mapping[str, Any], kind: str, number: int) -> dict[str, Any]:
    """The tool call of a ``*_call`` item, in the shape the store takes.

    Raises:
        BadEntry: a call id or name that is not text.
    """
    call_id = identifier(payload.get("call_id") or payload.get("id"), "call_id")
    if kind == "function_call":
        name, args = payload.get("name"), _arguments(payload.get("arguments"))
    elif kind == "custom_tool_call":
        name, args = payload.get("name"), {"input": payload.get("input")}
    elif kind == "local_shell_call":
        name, args = "local_shell", payload.get("action")
    else:
        name, args = "web_search", payload.get("action")
    if not isinstance(name, str) or not name:
        raise BadEntry("tool call without a name")
    return {"id": call_id or f"line-{number}", "name": name, "args": args or {}}


class _Rollout:
    """One rollout file's thread, filled line by line; or, ``resumed`` from the state an
    earlier import saved (:meth:`state`), the lines appended to it since."""

    def __init__(
        self,
        report: ImportReport,
        default_id: str,
        resumed: Mapping[str, Any] | None = None,
        recall: Callable[[str], str | None] | None = None,
    ) -> None:
        self.report = report
        self.session = ImportSession(id=default_id, source=SOURCE)
        self.meta_seen = False
        self.when: float | None = None
        self.stamp: Any = None  # the last line's timestamp as written (lines share them)
        self.numbered: list[tuple[int, dict[str, Any]]] = []
        self.tool_names: dict[str, str] = {}
        self.pending: dict[str, str] = {}  # calls not answered yet: what a resumed read needs
        self.recall = recall  # a call's name when it came before the lines read (the store's)
        self.saved: dict[str, Any] | None = None
        if resumed is not None:
            self.resume(resumed)

    def resume(self, state: Mapping[str, Any]) -> None:
        """Go on from ``state`` (:meth:`state`): the thread, its parent, start, model and
        place (for a thread not written yet: its lines so far held no message), the last time
        read and the calls still waiting for their output."""
        s = self.session
        s.id, s.parent_session_id = str(state["thread"]), state.get("parent")
        s.started_at, self.when = state.get("started"), state.get("when")
        s.title = state.get("title")  # the name it was given: given again only if it changed
        s.model, s.project, s.git_branch = (state.get(k) for k in ("model", "cwd", "branch"))
        s.resumed = self.meta_seen = True
        calls = state.get("calls")
        if isinstance(calls, Mapping):
            self.pending = {str(k): str(v) for k, v in calls.items()}
            self.tool_names = dict(self.pending)

    def keep_state(self) -> None:
        """Keep :meth:`state` as it is now (before a line that may be read again)."""
        self.saved = self.state()

    def state(self) -> dict[str, Any]:
        """What a read of the lines appended later needs to go on from here (JSON-ready)."""
        s = self.session
        return {
            "thread": s.id,
            "parent": s.parent_session_id,
            "started": s.started_at,
            "when": self.when,
            "calls": dict(self.pending),
            "meta": self.meta_seen,
            "model": s.model,
            "cwd": s.project,
            "branch": s.git_branch,
        }

    def line(self, number: int, obj: Mapping[str, Any]) -> None:
        """Take one line.

        Raises:
            BadEntry: the line cannot be imported (nothing of it was taken).
        """
        kind, payload = obj.get("type"), obj.get("payload")
        if not isinstance(payload, dict):  # (decoded JSON: its objects are dicts)
            raise BadEntry("record without a payload object")
        self.moment(obj.get("timestamp"))
        if kind == "session_meta":
            self.meta(payload)
        elif kind == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and model and self.session.model is None:
                self.session.model = model
            note_where(self.session, payload.get("cwd"))  # a thread whose meta had none
        elif kind == "response_item":
            self.item(number, payload)
        else:
            self.report.ignore(f"{kind if isinstance(kind, str) else 'untyped'} record")

    def moment(self, stamp: Any) -> None:
        """Take a line's time (the time of a line without one after it).

        Raises:
            BadEntry: a time that is not an ISO date.
        """
        if stamp != self.stamp or stamp is None:  # (lines share times: parsed once)
            try:
                when = to_timestamp(stamp)
            except ValueError:
                raise BadEntry("bad timestamp") from None
            self.stamp = stamp
            if when is not None:
                self.when = when

    def skim(self, line: str, number: int, name: str) -> bool:
        """Take a line the import leaves out (``event_msg``, a reasoning item) from its head,
        without decoding the rest: most of a rollout's bytes, decoded for nothing otherwise.
        Its time and the shape of its head are checked as for any line; a line cut short (not
        ending in ``}``) is left to the decoder, which reports it."""
        head = _LEFT_OUT.match(line)
        if head is None:
            return False
        stamp, kind, reasoning = head.groups()
        if (kind == "response_item" and not reasoning) or not (
            line.endswith("}\n") or line.rstrip().endswith("}")  # (no copy of a whole line)
        ):
            return False
        if stamp != self.stamp:
            try:
                self.moment(stamp)
            except BadEntry as exc:
                self.report.skip(str(exc), f"{name}:{number}")
                return True
        self.report.ignore("reasoning item" if reasoning else "event_msg record")
        return True

    def meta(self, payload: Mapping[str, Any]) -> None:
        """The thread's own ``session_meta`` (the first); a later one was copied with the
        history of the thread this one was forked from."""
        if self.meta_seen:
            self.report.ignore("copied session_meta record")
            return
        thread = identifier(payload.get("id"), "id")
        forked = identifier(payload.get("forked_from_id"), "forked_from_id")
        parent = forked or _spawned_by(payload.get("source"))
        try:
            started = to_timestamp(payload.get("timestamp"))
        except ValueError:
            started = None
        self.meta_seen = True
        self.session.id = thread or self.session.id
        self.session.parent_session_id = parent if parent != self.session.id else None
        self.session.started_at = started
        git = payload.get("git")
        note_where(
            self.session,
            payload.get("cwd"),
            git.get("branch") if isinstance(git, Mapping) else None,
        )

    def item(self, number: int, payload: Mapping[str, Any]) -> None:
        kind = payload.get("type")
        when = self.when
        if kind == "message":
            role = payload.get("role")
            text = _text(payload.get("content"))
            if role not in ("user", "assistant"):
                self.report.ignore(f"{role if isinstance(role, str) else 'unknown'} message")
            elif role == "user" and text.lstrip().startswith(_CONTEXT):
                self.report.ignore("context injected by Codex")
            elif not text.strip():
                self.report.ignore("empty message")
            else:
                self.add(number, {"role": role, "content": text, "timestamp": when})
        elif kind in _CALLS:
            call = _call(payload, str(kind), number)
            self.tool_names[call["id"]] = self.pending[call["id"]] = call["name"]
            self.add(
                number,
                {"role": "assistant", "content": "", "tool_calls": [call], "timestamp": when},
            )
        elif kind in _OUTPUTS:
            call_id = identifier(payload.get("call_id"), "call_id")
            row = {
                "role": "tool",
                "content": _output(payload.get("output")),
                "tool_call_id": call_id,
                "tool_name": self.call_name(call_id or ""),
                "timestamp": when,
            }
            self.pending.pop(call_id or "", None)
            self.add(number, row)
        else:
            self.report.ignore(f"{kind if isinstance(kind, str) else 'untyped'} item")

    def call_name(self, call_id: str) -> str | None:
        """The name of the call an output answers: read in this file, else (a resumed read
        of a call answered twice) as the store has it."""
        name = self.tool_names.get(call_id)
        if name is None and self.recall is not None and self.session.resumed:
            name = self.recall(call_id)
        return name

    def add(self, number: int, message: dict[str, Any]) -> None:
        self.numbered.append((number, message))

    def finish(self, default_time: float) -> ImportSession:
        """The thread, its messages keyed by thread id and line number; a message before any
        time takes the thread's start (else the file's time)."""
        s = self.session
        first = next((m["timestamp"] for _, m in self.numbered if m["timestamp"] is not None), None)
        if s.started_at is None:
            s.started_at = first if first is not None else default_time
        for number, message in self.numbered:
            if message["timestamp"] is None:
                message["timestamp"] = s.started_at
            s.messages.append((f"{s.id}:{number}", message))
        return s


def _spawned_by(source: Any) -> str | None:
    """The parent thread of a sub-agent: ``{"subagent": {"thread_spawn": {"parent_thread_id":
    ...}}}`` (``SessionSource::SubAgent(SubAgentSource::ThreadSpawn)``); ``None`` for any other
    source (``"cli"``, ``"exec"``, ``{"subagent": "review"}``, ...)."""
    if not isinstance(source, Mapping):
        return None
    agent = source.get("subagent")
    spawn = agent.get("thread_spawn") if isinstance(agent, Mapping) else None
    return (
        identifier(spawn.get("parent_thread_id"), "parent_thread_id")
        if isinstance(spawn, Mapping)
        else None
    )


def parse_codex_lines(
    lines: Iterable[str],
    *,
    name: str,
    default_session_id: str,
    report: ImportReport,
    default_time: float = 0.0,
) -> ImportSession:
    """Parse one rollout into its thread (pure); a line that cannot be imported is skipped
    and reported with its number, the other lines are imported.

    Example:
        >>> lines = [
        ...     '{"timestamp": "2026-11-20T09:00:00Z", "type": "session_meta", "payload": '
        ...     '{"id": "t1", "cwd": "/src/api", "originator": "codex_cli_rs"}}',
        ...     '{"timestamp": "2026-11-20T09:00:05Z", "type": "response_item", "payload": '
        ...     '{"type": "message", "role": "user", "content": [{"type": "input_text", '
        ...     '"text": "why does the build fail?"}]}}',
        ...     '{"type": "response_item", "payload": "oops"}',
        ... ]
        >>> r = ImportReport("codex")
        >>> s = parse_codex_lines(lines, name="rollout.jsonl", default_session_id="x", report=r)
        >>> s.id, [k for k, _ in s.messages], r.problems
        ('t1', ['t1:2'], ['rollout.jsonl:3: record without a payload object'])
    """
    rollout = _Rollout(report, default_session_id)
    _parse(rollout, lines, name)
    return rollout.finish(default_time)


def _parse(rollout: _Rollout, lines: Iterable[str], name: str, first: int = 1) -> None:
    """Each line into ``rollout`` (numbered from ``first``)."""
    for number, obj in _objects(rollout, lines, name, first):
        _take(rollout, number, obj, name)


def _objects(
    rollout: _Rollout, lines: Iterable[str], name: str, first: int = 1
) -> Iterator[tuple[int, Any]]:
    """The rollout's lines decoded, those it leaves out taken from their head (skimmed)."""
    return json_objects(
        lines,
        name=name,
        report=rollout.report,
        skim=lambda line, number: rollout.skim(line, number, name),
        first=first,
    )


def _take(rollout: _Rollout, number: int, obj: Mapping[str, Any], name: str) -> None:
    """One line into ``rollout``; a line that cannot be imported is skipped and reported."""
    try:
        rollout.line(number, obj)
    except BadEntry as exc:
        rollout.report.skip(str(exc), f"{name}:{number}")
    except (TypeError, ValueError, OverflowError, RecursionError, UnicodeError) as exc:
        # A kind of junk the checks do not name yet: it costs this line only.
        rollout.report.skip(f"unreadable record ({type(exc).__name__})", f"{name}:{number}")


def _lineage(lines: Iterable[str], *, default_session_id: str) -> tuple[str, str | None]:
    """The thread id and parent thread :func:`parse_codex_lines` finds in a rollout, read
    only up to its first ``session_meta`` (the first line, in a rollout Codex wrote). What the
    lines hold wrong is reported when the rollout is read whole, not here."""
    scratch = ImportReport(KIND)
    rollout = _Rollout(scratch, default_session_id)
    for number, obj in _objects(rollout, lines, ""):
        _take(rollout, number, obj, "")
        if rollout.meta_seen:
            break
    return rollout.session.id, rollout.session.parent_session_id


def _thread_names(home: Path, report: ImportReport) -> dict[str, str]:
    """Thread names from ``session_index.jsonl`` (``{id, thread_name, updated_at}``, appended:
    the last name of a thread wins); none when there is no such file."""
    index = home / "session_index.jsonl"
    names: dict[str, str] = {}
    if not index.is_file():
        return names
    for _, fh in open_files([index], named=home, report=report):
        lines = bounded_lines(fh, name=index.name, report=report)
        for number, obj in json_objects(lines, name=index.name, report=report):
            try:
                thread = identifier(obj.get("id"), "id")
            except BadEntry as exc:
                report.skip(str(exc), f"{index.name}:{number}")
                continue
            name = obj.get("thread_name")
            if thread and isinstance(name, str) and name.strip():
                names[thread] = storable_text(name.strip())
    return names


class _Names:
    """The names a Codex home's ``session_index.jsonl`` gives its threads, read when a thread
    first needs one (not at all by an import that needs none).

    ``points_hold_them``: a thread read from its resume point keeps the name it was given
    there, without the index being read, when that point was saved with a name from an index
    (:meth:`hold`): for an import of some rollouts only, the index as the last import read it
    (``sync``: it has not changed, else the whole home is read). A point saved where no index
    was read (an import of one rollout file, or of a folder without one) names nothing: its
    thread is named from the index.
    """

    def __init__(self, home: Path, report: ImportReport, *, points_hold_them: bool) -> None:
        self.home, self.report, self.points_hold_them = home, report, points_hold_them
        self.names: dict[str, str] | None = None
        self.indexed = False  # the names were read from an index
        self.held: set[str] = set()  # threads whose resume point holds an index's name

    def hold(self, state: Mapping[str, Any]) -> None:
        """Note a resume point's thread as named by an index when its point says so."""
        if state.get("named"):
            self.held.add(str(state["thread"]))

    def _holds(self, thread: ImportSession) -> bool:
        """Whether ``thread`` keeps the name its resume point holds (an index's)."""
        return self.points_hold_them and thread.resumed and thread.id in self.held

    def of(self, thread: ImportSession) -> str | None:
        """The name ``thread`` is to have."""
        if self._holds(thread):
            return thread.title
        if self.names is None:
            index = self.home / "session_index.jsonl"
            self.indexed = self.home.is_dir() and index.is_file()
            self.names = _thread_names(self.home, self.report) if self.indexed else {}
        return self.names.get(thread.id)

    def named(self, thread: ImportSession) -> bool:
        """Whether the name :meth:`of` gave ``thread`` came from an index (to keep in its
        resume point)."""
        return self._holds(thread) or (self.names is not None and self.indexed)


def _merge(into: ImportSession, more: ImportSession) -> None:
    """A thread found twice (in ``sessions/`` and ``archived_sessions/``): its lines once."""
    keys = {k for k, _ in into.messages}
    into.messages += [(k, m) for k, m in more.messages if k not in keys]
    into.model = into.model or more.model
    into.parent_session_id = into.parent_session_id or more.parent_session_id
    note_where(into, more.project, more.git_branch)
    if more.started_at is not None and (into.started_at or more.started_at) >= more.started_at:
        into.started_at = more.started_at


def _mtime(file: Path) -> float:
    """The file's modification time (what dates a thread that has none), 0 when it is gone."""
    try:
        return file.stat().st_mtime
    except OSError:
        return 0.0


def _default_id(file: Path) -> str:
    """A rollout's thread id as its file name gives it (``rollout-<time>-<id>.jsonl``)."""
    match = _THREAD_ID.search(file.name.removesuffix(".zst").removesuffix(".jsonl"))
    return match.group(1) if match else storable_text(file.stem)


_Thread = tuple[str, "str | None", list[str]]
"""A thread to read: its id, its parent (``None`` when it has none, or it was cut) and the
paths of its files."""


def _threads_in_order(
    files: Sequence[Path],
    home: Path,
    store: SessionBackend,
    report: ImportReport,
    reading: _Reading,
) -> tuple[list[_Thread], Counter[str]]:
    """Each thread (its id and parent, read from the head of each rollout, or from where the
    last import of it stopped) with its files, parents before children, and how many
    children each parent has.

    Reading heads first is what lets the import then read and write one thread at a time: a
    child met before its parent (a sub-agent in ``sessions/`` of a thread archived since)
    still finds it. A parent neither among the threads nor in the store is cut and reported
    (an orphan), as is a parent cycle.
    """
    threads: dict[str, ImportSession] = {}
    files_of: dict[str, list[str]] = {}
    heads: dict[Path, tuple[str, str | None]] = {}
    scratch = ImportReport(KIND)  # a file that cannot be opened is reported when read
    for file in files:
        if (point := reading.points.unchanged(file)) is not None:
            heads[file] = (str(point.state["thread"]), point.state.get("parent"))
    unread = [f for f in files if f not in heads]
    for file, fh in open_files(unread, named=home, report=scratch, strict=reading.strict):
        point = reading.points.check(file, fh)
        if point is not None:
            heads[file] = (str(point.state["thread"]), point.state.get("parent"))
            continue
        lines = bounded_lines(fh, name="", report=scratch, max_line_bytes=reading.max_line_bytes)
        heads[file] = _lineage(lines, default_session_id=_default_id(file))
    for file in files:
        thread, parent = heads.get(file, (_default_id(file), None))
        stub = threads.setdefault(thread, ImportSession(thread, SOURCE))
        stub.parent_session_id = stub.parent_session_id or parent
        files_of.setdefault(thread, []).append(str(file))
    del heads  # (held for the whole import, lineage is kept lean: ids and file names)
    for paths in files_of.values():
        if len(paths) > 1:  # (sessions/ and archived_sessions/: merged, read whole)
            reading.points.whole(paths)
    ordered, orphans = order_parents_first(
        list(threads.values()), lambda sid: store.get_session(sid) is not None
    )
    report_orphans(report, orphans)
    children = Counter(s.parent_session_id for s in ordered if s.parent_session_id is not None)
    return [(s.id, s.parent_session_id, files_of.pop(s.id)) for s in ordered], children


class _Reading:
    """How an import reads its rollouts: the longest line, the resume points, the store (the
    names of calls answered after a resumed read's point), the threads' names; ``strict``: a
    rollout that cannot be opened is an error, not a problem reported (each was named)."""

    def __init__(
        self,
        store: SessionBackend,
        points: RolloutPoints,
        max_line_bytes: int,
        names: _Names,
        *,
        strict: bool = False,
    ) -> None:
        self.store, self.points, self.max_line_bytes = store, points, max_line_bytes
        self.names, self.strict = names, strict

    def rollout(
        self, file: Path, fh: BinaryIO, report: ImportReport, *, root: bool
    ) -> ImportSession:
        """One rollout read: from where the last import stopped when it was only appended
        to since, else whole (:func:`read_rollout`); its new resume point kept (when points
        are kept)."""
        point = self.points.go_on(file, fh)
        limit = self.max_line_bytes
        cursor = self.points.cursor(file, fh, point, report=report, max_line_bytes=limit)
        if point is None or cursor is None:
            thread, stop = read_rollout(
                file, fh, report, keep_point=self.points.enabled, max_line_bytes=limit
            )
            return self.keep(file, thread, stop, root=root)
        resumed = point.state
        self.names.hold(resumed)
        recall = stored_call_names(self.store, str(resumed["thread"]))
        rollout = _Rollout(report, _default_id(file), resumed, recall)
        thread, state = _read_on(rollout, cursor, file)
        state["title"] = self.names.of(thread)
        state["named"] = self.names.named(thread)
        self.points.record_rollout(file, point_at(fh, cursor, state), before=point, root=root)
        return thread

    def keep(
        self, file: Path, thread: ImportSession, stop: ResumePoint | None, *, root: bool
    ) -> ImportSession:
        """``thread``, read whole from ``file`` (here or in a worker process), with where
        its read stopped (``stop``, when points are kept) kept as the file's new point."""
        if stop is not None:
            stop.state["title"] = self.names.of(thread)
            stop.state["named"] = self.names.named(thread)
            self.points.record_rollout(file, stop, before=None, root=root)
        return thread

    def to_read(self, files: Sequence[str]) -> list[Path]:
        """The files of a thread to open: not those unchanged since their resume point."""
        return [Path(f) for f in files if Path(f) not in self.points.still]

    def here(self, files: Iterable[Path]) -> bool:
        """Whether the thread of ``files`` is read in this process (it goes on from a resume
        point: the names of calls answered later are the store's), not in a worker."""
        return any(f in self.points.valid for f in files)


def read_rollout(
    file: Path, fh: BinaryIO, report: ImportReport, *, keep_point: bool, max_line_bytes: int
) -> tuple[ImportSession, ResumePoint | None]:
    """One rollout read whole (the store is not needed: a worker process reads it), and,
    when ``keep_point`` and it is a plain ``.jsonl`` file, where its read stopped with the
    parser's state there (its thread's name is added by the importing process)."""
    limit = max_line_bytes
    cursor = line_cursor(file, fh, None, keep_point=keep_point, report=report, max_line_bytes=limit)
    if cursor is None:
        name = storable_text(file.name)
        thread = parse_codex_lines(
            bounded_lines(fh, name=name, report=report, max_line_bytes=limit),
            name=name,
            default_session_id=_default_id(file),
            report=report,
            default_time=_mtime(file),
        )
        return thread, None
    thread, state = _read_on(_Rollout(report, _default_id(file)), cursor, file)
    return thread, point_at(fh, cursor, state)


def _read_on(
    rollout: _Rollout, cursor: LineCursor, file: Path
) -> tuple[ImportSession, dict[str, Any]]:
    """``rollout`` filled from the lines of ``cursor`` (from its line on): its thread, and
    the parser's state where the read stopped (before a last line that may be read again)."""
    cursor.before_partial = rollout.keep_state
    _parse(rollout, cursor, cursor.name, first=cursor.line + 1)
    return rollout.finish(_mtime(file)), rollout.saved or rollout.state()


def _read_here(
    files: Sequence[str], root: bool, home: Path, report: ImportReport, reading: _Reading
) -> Iterator[ImportSession]:
    """The reads of a thread's files, in this process, one at a time."""
    opened = open_files(reading.to_read(files), named=home, report=report, strict=reading.strict)
    for file, fh in opened:
        yield reading.rollout(file, fh, report, root=root)


def _read_threads(
    order: Iterable[_Thread],
    home: Path,
    report: ImportReport,
    reading: _Reading,
    reads: Callable[[_Thread], Iterable[ImportSession]] | None = None,
) -> Iterator[ImportSession]:
    """Each thread read from its files, in ``order``, one at a time: its parent as the order
    says (cut when it was missing), its name from the home's index. A thread resumed with
    nothing new is passed over, unless it has a name it was not given before. ``reads``
    gives the reads of a thread's files (default: read here, one after the other; a
    :class:`~langchain_session_recall.importers.codex_pipe.Pipe` has them read ahead in
    worker processes)."""
    read = reads or (lambda e: _read_here(e[2], e[1] is None, home, report, reading))
    for entry in order:
        _, parent, files = entry
        thread: ImportSession | None = None
        if len(files) == 1 and (still := reading.points.still.get(Path(files[0]))):
            reading.names.hold(still.state)
            thread = _Rollout(report, "", still.state).finish(0.0)  # (nothing new: not read)
        for one in read(entry):
            if thread is None:
                thread = one
            else:
                _merge(thread, one)
        if thread is None:
            continue
        thread.parent_session_id = parent
        name = reading.names.of(thread)
        if thread.resumed and not thread.messages and name == thread.title:
            continue
        if thread.title != name and len(files) == 1:  # (given once)
            reading.points.rename(Path(files[0]), name, named=reading.names.named(thread))
        thread.title = name
        yield thread


def import_codex(
    store: SessionBackend,
    path: str | os.PathLike[str] | None = None,
    *,
    show_progress: bool | None = None,
    reimport: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    follow_symlinks: bool = False,
    resume: bool = False,
    files: Iterable[str | os.PathLike[str]] | None = None,
    workers: int | None = None,
) -> ImportReport:
    """Import Codex rollouts into ``store``: a Codex home (default ``$CODEX_HOME`` or
    ``~/.codex``: its ``sessions/`` and ``archived_sessions/``), a directory of rollouts, or
    one rollout file (``.jsonl``, or ``.jsonl.zst`` with the ``codex`` extra installed).

    Threads keep their id, model, start and name (from ``session_index.jsonl``); forks
    (``forked_from_id``) and sub-agents (spawned by a parent thread) become child sessions
    of that thread. Source files are opened read-only.

    The import streams: it first reads the head of each rollout (its ``session_meta``: the
    thread and its parent), then reads the threads one at a time, parents first, each
    written with the group of threads it ends (one transaction), so memory holds one group
    (and the messages of a parent until its last fork or sub-agent is read), not the import;
    a child found before its parent (in ``sessions/``, its parent archived) still hangs below
    it. A line longer than ``max_line_bytes`` (64 MB) is skipped and reported; a ``.zst``
    file met without the ``zstandard`` package is skipped and reported, with what to install.
    Lines left out (``event_msg``, reasoning) are known by their head and not decoded.

    A session imported before and forgotten since (``delete_sessions``) is left out and
    listed in ``report.forgotten`` unless ``reimport``.

    ``workers``: the processes the import runs in. ``1``: this one alone. ``N`` > 1: this
    one writes while ``N - 1`` worker processes (fresh interpreters, which do not run the
    calling script again) read and parse the rollouts, with the same result
    (:mod:`~langchain_session_recall.importers.codex_pipe`). ``None`` (default): a worker
    when this process may use more than one core and 32 MB or more are to be read.

    ``files``: only these rollouts of the Codex home ``path``, the others as the last import
    left them (what ``sync`` reads when only they changed). A thread's parent is found among
    them or in the store, wherever its file sorts; a thread read from its start is named from
    the home's ``session_index.jsonl`` (read only then), one read from its resume point
    keeps the name it had there. A rollout that cannot be opened raises
    (:class:`~langchain_session_recall.errors.ImportSourceError`,
    :class:`~langchain_session_recall.errors.MissingFeatureError`).

    Example:
        >>> import json, tempfile, pathlib
        >>> day = pathlib.Path(tempfile.mkdtemp()) / "sessions" / "2026" / "11" / "20"
        >>> day.mkdir(parents=True)
        >>> meta = {"type": "session_meta", "timestamp": "2026-11-20T09:00:00Z",
        ...         "payload": {"id": "0193a1b2-0000-7000-8000-000000000001", "cwd": "/src"}}
        >>> ask = {"type": "response_item", "timestamp": "2026-11-20T09:00:02Z", "payload":
        ...        {"type": "message", "role": "user",
        ...         "content": [{"type": "input_text", "text": "rotate the TLS cert"}]}}
        >>> f = day / "rollout-2026-11-20T09-00-00-0193a1b2-0000-7000-8000-000000000001.jsonl"
        >>> _ = f.write_text(json.dumps(meta) + "\\n" + json.dumps(ask) + "\\n")
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> import_codex(store, day.parents[3]).summary()
        'codex: 1 session (1 new), 1 message imported'
    """
    report = ImportReport(KIND)
    home = Path(path).expanduser() if path is not None else default_codex_home()
    if files is None:
        rollouts = rollout_files(home, report=report, follow_symlinks=follow_symlinks)
    else:
        rollouts = [Path(f).expanduser() for f in files]
    points = RolloutPoints(store, rollouts, enabled=resume and not reimport)
    names = _Names(home, report, points_hold_them=files is not None and points.enabled)
    reading = _Reading(store, points, max_line_bytes, names, strict=files is not None)
    _import_threads(store, rollouts, home, report, reading, workers, show_progress, reimport)
    if points.enabled:
        points.save(store)
    return report


def _import_threads(
    store: SessionBackend,
    rollouts: Sequence[Path],
    home: Path,
    report: ImportReport,
    reading: _Reading,
    workers: int | None,
    show_progress: bool | None,
    reimport: bool,
) -> None:
    """The threads of ``rollouts`` put in order, read (here, or by worker processes) and
    written, a group at a time."""
    order, children = _threads_in_order(rollouts, home, store, report, reading)
    with reading_pipe(order, home, report, reading, workers=workers) as reads:
        threads = _read_threads(order, home, report, reading, reads)
        sessions = dropping_copied_history(threads, children, stored_history(store), report)
        write_sessions(
            store,
            reading.points.keeping(sessions),
            report,
            show_progress=show_progress,
            reimport=reimport,
        )
