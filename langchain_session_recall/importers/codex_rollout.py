"""One Codex rollout read into its thread: parsing only, no store, so a worker process
can do it (:mod:`~langchain_session_recall.importers.codex_pipe`).

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
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from langchain_session_recall.dates import iso_datetime, to_timestamp
from langchain_session_recall.importers.lines import (
    BadEntry,
    bounded_lines,
    decode_json,
    identifier,
    json_object,
)
from langchain_session_recall.importers.records import (
    ImportSession,
    note_where,
)
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.resume import (
    LineCursor,
    ResumePoint,
    line_cursor,
    point_at,
)
from langchain_session_recall.messages import storable_text

__all__ = ["parse_codex_lines", "read_rollout"]

KIND = "codex"
SOURCE = "codex"
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
# The same head as Codex writes it, compact (and its payload's type first, compact too),
# matched faster: an ``event_msg`` (group 2) or a ``response_item``, with a reasoning item's
# type (group 3 or 4), or a record of any other type; any other head is ``_LEFT_OUT``'s.
_COMPACT_HEAD = re.compile(
    r'\{"timestamp":"([^"\\]*)","type":"(?:(event_msg)","payload":\{"type":"(reasoning")?'
    r'|response_item","payload":\{"type":"(reasoning")?|(?!event_msg"|response_item")[^"\\]*")'
)
_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


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
        [str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
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


class Rollout:
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
        self.ignored = report.ignored  # (counted here for each line skimmed: no call a line)
        self.session = ImportSession(id=default_id, source=SOURCE)
        self.meta_seen = False
        self._when: float | None = None
        self.parsed: datetime | None = None  # the last line's time, not yet in seconds
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

    @property
    def when(self) -> float | None:
        """The time of the last line that had one, in Unix seconds: converted when asked for
        (a message, the state), as most lines' times are followed by another's before. (An
        aware datetime's ``timestamp()`` cannot fail: a time is still refused at its line.)"""
        if self.parsed is not None:
            self._when, self.parsed = self.parsed.timestamp(), None
        return self._when

    @when.setter
    def when(self, when: float | None) -> None:
        self._when, self.parsed = when, None

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
            if isinstance(stamp, str) and stamp:  # (its seconds: only if a message needs them)
                try:
                    parsed = iso_datetime(stamp)
                except ValueError:
                    raise BadEntry("bad timestamp") from None
                self.stamp, self.parsed = stamp, parsed
                return
            try:
                when = to_timestamp(stamp)
            except ValueError:
                raise BadEntry("bad timestamp") from None
            self.stamp = stamp
            if when is not None:
                self.when = when

    def skim(self, name: str, line: str, number: int) -> bool:
        """Take a line the import leaves out (``event_msg``, a reasoning item) from its head,
        without decoding the rest: most of a rollout's bytes, decoded for nothing otherwise.
        Its time and the shape of its head are checked as for any line; a line cut short (not
        ending in ``}``) is left to the decoder, which reports it."""
        head = _left_out(line)
        if head is None or not (
            line.endswith("}\n") or line.rstrip().endswith("}")  # (no copy of a whole line)
        ):
            return False
        stamp, reasoning = head
        if stamp != self.stamp:
            try:
                self.moment(stamp)
            except BadEntry as exc:
                self.report.skip(str(exc), f"{name}:{number}")
                return True
        self.ignored["reasoning item" if reasoning else "event_msg record"] += 1
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
            elif not text or text.isspace():  # (blank: known without a stripped copy)
                self.report.ignore("empty message")
            else:
                self.numbered.append((number, {"role": role, "content": text, "timestamp": when}))
        elif kind in _CALLS:
            call = _call(payload, str(kind), number)
            self.tool_names[call["id"]] = self.pending[call["id"]] = call["name"]
            said = {"role": "assistant", "content": "", "tool_calls": [call], "timestamp": when}
            self.numbered.append((number, said))
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
            self.numbered.append((number, row))
        else:
            self.report.ignore(f"{kind if isinstance(kind, str) else 'untyped'} item")

    def call_name(self, call_id: str) -> str | None:
        """The name of the call an output answers: read in this file, else (a resumed read
        of a call answered twice) as the store has it."""
        name = self.tool_names.get(call_id)
        if name is None and self.recall is not None and self.session.resumed:
            name = self.recall(call_id)
        return name

    def finish(self, default_time: float) -> ImportSession:
        """The thread, its messages keyed by thread id and line number; a message before any
        time takes the thread's start (else the file's time)."""
        s = self.session
        first = next((m["timestamp"] for _, m in self.numbered if m["timestamp"] is not None), None)
        if s.started_at is None:
            s.started_at = first if first is not None else default_time
        thread, started = s.id, s.started_at
        for _, message in self.numbered:
            if message["timestamp"] is None:
                message["timestamp"] = started
        s.messages += [(f"{thread}:{number}", message) for number, message in self.numbered]
        return s


def _left_out(line: str) -> tuple[str | None, bool] | None:
    """Whether the head of ``line`` is one the import leaves out (:data:`_LEFT_OUT` matches
    it, an ``event_msg`` or a reasoning item): its time as written and whether it is a
    reasoning item; ``None`` when it is not. A head as Codex writes it, compact, is read with
    :data:`_COMPACT_HEAD` (a record of another type known without ``_LEFT_OUT``).

    Example:
        >>> _left_out('{"timestamp":"2026-11-20T09:00:05Z","type":"event_msg",'
        ...           '"payload":{"type":"token_count"}}')
        ('2026-11-20T09:00:05Z', False)
        >>> _left_out('{"timestamp": null, "type": "response_item", "payload": {'
        ...           '"type": "reasoning"}}')
        (None, True)
    """
    compact = _COMPACT_HEAD.match(line)
    if compact is not None:
        stamp, event, event_reasoning, item_reasoning = compact.groups()
        if event is not None:
            return stamp, event_reasoning is not None
        return None if item_reasoning is None else (stamp, True)
    match = _LEFT_OUT.match(line)
    if match is None:
        return None
    stamp, kind, reasoning = match.groups()
    return None if kind == "response_item" and not reasoning else (stamp, bool(reasoning))


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
    rollout = Rollout(report, default_session_id)
    _parse(rollout, lines, name)
    return rollout.finish(default_time)


def _parse(
    rollout: Rollout, lines: Iterable[str], name: str, first: int = 1, *, until_meta: bool = False
) -> None:
    """Each line into ``rollout`` (numbered from ``first``; ``until_meta``: up to its first
    ``session_meta``): blank lines passed over, those it leaves out taken from their head
    (skimmed), the others decoded (:func:`~langchain_session_recall.importers.lines.
    json_object`)."""
    report, skim = rollout.report, rollout.skim
    for number, line in enumerate(lines, first):
        if not line or line.isspace() or skim(name, line, number):
            continue
        obj = json_object(line, number, name, report)
        if obj is not None:
            _take(rollout, number, obj, name)
            if until_meta and rollout.meta_seen:
                return


def _take(rollout: Rollout, number: int, obj: Mapping[str, Any], name: str) -> None:
    """One line into ``rollout``; a line that cannot be imported is skipped and reported."""
    try:
        rollout.line(number, obj)
    except BadEntry as exc:
        rollout.report.skip(str(exc), f"{name}:{number}")
    except (TypeError, ValueError, OverflowError, RecursionError, UnicodeError) as exc:
        # A kind of junk the checks do not name yet: it costs this line only.
        rollout.report.skip(f"unreadable record ({type(exc).__name__})", f"{name}:{number}")


def lineage(lines: Iterable[str], *, default_session_id: str) -> tuple[str, str | None]:
    """The thread id and parent thread :func:`parse_codex_lines` finds in a rollout, read
    only up to its first ``session_meta`` (the first line, in a rollout Codex wrote). What the
    lines hold wrong is reported when the rollout is read whole, not here."""
    rollout = Rollout(ImportReport(KIND), default_session_id)
    _parse(rollout, lines, "", until_meta=True)
    return rollout.session.id, rollout.session.parent_session_id


def _mtime(file: Path) -> float:
    """The file's modification time (what dates a thread that has none), 0 when it is gone."""
    try:
        return file.stat().st_mtime
    except OSError:
        return 0.0


def default_thread_id(file: Path) -> str:
    """A rollout's thread id as its file name gives it (``rollout-<time>-<id>.jsonl``)."""
    match = _THREAD_ID.search(file.name.removesuffix(".zst").removesuffix(".jsonl"))
    return match.group(1) if match else storable_text(file.stem)


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
            default_session_id=default_thread_id(file),
            report=report,
            default_time=_mtime(file),
        )
        return thread, None
    thread, state = read_on(Rollout(report, default_thread_id(file)), cursor, file)
    return thread, point_at(fh, cursor, state)


def read_on(
    rollout: Rollout, cursor: LineCursor, file: Path
) -> tuple[ImportSession, dict[str, Any]]:
    """``rollout`` filled from the lines of ``cursor`` (from its line on): its thread, and
    the parser's state where the read stopped (before a last line that may be read again)."""
    cursor.before_partial = rollout.keep_state
    _parse(rollout, cursor, cursor.name, first=cursor.line + 1)
    return rollout.finish(_mtime(file)), rollout.saved or rollout.state()
