"""The record an importer builds (:class:`ImportSession`, pure parsing output) and the pure rules
for writing it: parents before children, which fields an import may write."""

from __future__ import annotations

import json
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_session_recall.errors import InvalidMessageError
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.messages import MessageLike, storable_text, to_row
from langchain_session_recall.models import Session

__all__ = [
    "UNDATED",
    "ImportSession",
    "as_rows",
    "drop_copied_prefix",
    "dropping_copied_history",
    "fields_to_write",
    "note_where",
    "order_parents_first",
    "where_text",
    "without_copied_history",
]

UNDATED = "undated_by"
"""Key of an imported message dict that had no time of its own: how it was dated."""


@dataclass
class ImportSession:
    """One session read from a source, ready to write.

    ``messages`` are ``(external_key, message)`` pairs: the key identifies the message in the
    source (a line number, a uuid, a Hermes message id) and is what makes re-runs idempotent.

    Example:
        >>> s = ImportSession("chat-1", "import", [("f:1", {"role": "user", "content": "hi"})])
        >>> s.messages[0][0]
        'f:1'
    """

    id: str
    source: str
    messages: list[tuple[str, MessageLike]] = field(default_factory=list)
    parent_session_id: str | None = None
    model: str | None = None
    title: str | None = None
    user_id: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    end_reason: str | None = None
    project: str | None = None
    """The working directory the agent ran in."""
    git_branch: str | None = None
    agent: str | None = None
    """The program that wrote it (``"codex"``, ``"claude-code"``, ...)."""
    resumed: bool = False
    """Read from where an earlier import of its file stopped: ``messages`` are those
    appended since (none of them copied from a parent), and it is written even without any
    (a thread name to fill in)."""


def note_where(session: ImportSession, project: Any, git_branch: Any = None) -> None:
    """Give ``session`` the working directory and branch a record names, where it has none yet
    (the first record that names them wins); a value that is not text is no value.

    Example:
        >>> s = ImportSession("s", "codex")
        >>> note_where(s, "/src/api", 7); note_where(s, "/elsewhere", "main")
        >>> s.project, s.git_branch
        ('/src/api', 'main')
    """
    if session.project is None:
        session.project = where_text(project)
    if session.git_branch is None:
        session.git_branch = where_text(git_branch)


def where_text(value: Any) -> str | None:
    """A directory or branch as a record gives it, as text to keep; ``None`` for anything
    else (a number, blank, text holding NUL, which would get the session refused).

    Example:
        >>> where_text(" /src/api "), where_text(3), where_text(" ")
        ('/src/api', None, None)
    """
    if not isinstance(value, str) or "\x00" in value:
        return None
    return storable_text(value.strip()) or None


def order_parents_first(
    sessions: Sequence[ImportSession], known: Callable[[str], bool] = lambda _: False
) -> tuple[list[ImportSession], list[str]]:
    """Sessions sorted so every parent precedes its children (pure, cycle-safe).

    A parent that is neither in ``sessions`` nor ``known`` (already in the store) is missing:
    the child is detached (written as a root) and its id returned in the second list. Members of
    a parent cycle are detached the same way.

    Example:
        >>> a, b = ImportSession("a", "cli", parent_session_id="b"), ImportSession("b", "cli")
        >>> [s.id for s in order_parents_first([a, b])[0]]
        ['b', 'a']
    """
    by_id = {s.id: s for s in sessions}
    ordered: list[ImportSession] = []
    orphans: list[str] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    for start in sessions:
        stack: list[str] = []
        node: str | None = start.id
        # Walk up to the first placed (or external) ancestor, then place the path top-down.
        while node is not None and node in by_id and state.get(node) is None:
            state[node] = 1
            stack.append(node)
            parent = by_id[node].parent_session_id
            if parent is not None and state.get(parent) == 1:  # cycle: cut it here
                orphans.append(node)
                by_id[node].parent_session_id = None
                break
            node = parent
        for sid in reversed(stack):
            session = by_id[sid]
            parent = session.parent_session_id
            if parent is not None and parent not in by_id and not known(parent):
                orphans.append(sid)
                session.parent_session_id = None
            state[sid] = 2
            ordered.append(session)
    return ordered, orphans


def fields_to_write(session: ImportSession, existing: Session | None) -> dict[str, Any]:
    """The session fields an import writes (pure): all it has for a new session; for one the
    store holds already, only the fields that are empty there.

    A re-run never rewrites what it did not import: a source, title, model, owner, parent,
    end, project, branch or agent given earlier (by another import, the recorder or your code)
    stays as it is; the one exception is ``started_at``, which moves earlier when older
    messages arrive.

    Example:
        >>> from langchain_session_recall.models import Session
        >>> held = Session(id="s1", source="helpdesk", started_at=10.0, title="Refund")
        >>> fields_to_write(ImportSession("s1", "import", model="gpt", title="x"), held)
        {'model': 'gpt'}
    """
    given: dict[str, Any] = {
        "source": session.source,
        "parent_session_id": session.parent_session_id,
        "model": session.model,
        "title": session.title,
        "user_id": session.user_id,
        "started_at": session.started_at,
        "end_reason": session.end_reason,
        "project": session.project,
        "git_branch": session.git_branch,
        "agent": session.agent,
    }
    if existing is None:
        return {k: v for k, v in given.items() if v is not None}
    fields = {k: v for k, v in given.items() if v is not None and getattr(existing, k) is None}
    if session.started_at is not None and session.started_at < existing.started_at:
        fields["started_at"] = session.started_at
    if existing.ended_at is not None:
        fields.pop("end_reason", None)  # the end was recorded already: keep it whole
    return fields


def as_rows(messages: Sequence[tuple[str, MessageLike]]) -> list[tuple[str, MessageLike]]:
    """``messages`` (key, message) with each dated dict converted to its row
    (:func:`~langchain_session_recall.messages.to_row`) ahead of the write, e.g. by an import's
    worker process while the importing one writes; the store takes a row as it is (pure).

    A message ``to_row`` refuses stays as it was, so the write refuses it and reports why as
    it would have; one without a time (``to_row`` would date it by the clock) or dated by
    the importer (:data:`UNDATED`, which the write counts) stays too.

    Example:
        >>> rows = as_rows([("1", {"role": "user", "content": "hi", "timestamp": 5.0}),
        ...                 ("2", {"role": "robot", "content": "?", "timestamp": 6.0})])
        >>> [(k, type(m).__name__) for k, m in rows]
        [('1', 'MessageRow'), ('2', 'dict')]
    """
    out: list[tuple[str, MessageLike]] = []
    for key, message in messages:
        if (
            (type(message) is dict or isinstance(message, Mapping))
            and message.get("timestamp") is not None
            and UNDATED not in message
        ):
            try:  # noqa: SIM105 - suppress() costs an object and two calls a message
                message = to_row(message)
            except InvalidMessageError:  # (refused again where written)
                pass
        out.append((key, message))
    return out


def _said(message: MessageLike) -> tuple[Any, ...]:
    """What a message says, for comparing a copy with its original (not its time or key):
    role, text, the call it answers and the ids of the calls it makes. A message dict (as
    importers build them), the row made of it (:func:`~langchain_session_recall.messages.
    to_row`: its calls as JSON) and a stored message (what a store gives back) compare alike."""
    fields = ("role", "content", "tool_call_id", "tool_calls")
    if isinstance(message, Mapping):
        role, content, answers, calls = (message.get(f) for f in fields)
    else:
        role, content, answers, calls = (getattr(message, f, None) for f in fields)
    if isinstance(calls, str):
        calls = json.loads(calls)
    ids = tuple(c.get("id") for c in calls or [] if isinstance(c, Mapping))
    return (role, content, answers, ids)


def drop_copied_prefix(child: ImportSession, parent: Sequence[MessageLike]) -> int:
    """Leave out the messages a child session starts with that repeat its parent's first
    ones, in order (pure); returns how many.

    A fork (Codex ``forked_from_id``, Claude Code's ``continued-in``) begins with a copy of
    the history it was forked from, written again under new times: imported as is, each
    search hit in that history would come twice in one chain.

    Example:
        >>> hi, yo = {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}
        >>> child = ImportSession("fork", "x", [("1", dict(hi)), ("2", {"role": "user",
        ...     "content": "and then?"})])
        >>> drop_copied_prefix(child, [hi, yo]), [k for k, _ in child.messages]
        (1, ['2'])
    """
    copied = 0
    for (_, message), original in zip(child.messages, parent, strict=False):
        if _said(message) != _said(original):
            break
        copied += 1
    del child.messages[:copied]
    return copied


def without_copied_history(
    sessions: Iterable[ImportSession],
    outside: Callable[[str], Sequence[Any]],
    report: ImportReport,
) -> list[ImportSession]:
    """The sessions of one import, each child without the history it copied from its parent
    (:func:`drop_copied_prefix`; a parent not among ``sessions`` is read with ``outside``,
    e.g. ``store.get_messages``: its file may be gone); a session left without any message is
    left out (counted as ignored) unless another one hangs below it.

    Example:
        >>> hi = {"role": "user", "content": "hi"}
        >>> a = ImportSession("a", "x", [("1", hi)])
        >>> b = ImportSession("b", "x", [("2", dict(hi))], parent_session_id="a")
        >>> r = ImportReport("x")
        >>> [s.id for s in without_copied_history([a, b], lambda _: [], r)], dict(r.ignored)
        (['a'], {'session without messages': 1})
    """
    by_id = {s.id: s for s in sessions}
    # each child is compared with its parent as read, not as already trimmed (a -> b -> c:
    # c copied all of b, a's history included, whichever of them comes first here)
    read = {sid: [m for _, m in s.messages] for sid, s in by_id.items()}
    for session in by_id.values():
        pid = session.parent_session_id
        if pid is not None:
            drop_copied_prefix(session, read[pid] if pid in read else outside(pid))
    parents = {s.parent_session_id for s in by_id.values()}
    return [s for s in by_id.values() if _kept(s, parents, report)]


def _kept(session: ImportSession, parents: Container[str | None], report: ImportReport) -> bool:
    """Whether a session is written: it has messages, another one hangs below it, or it
    was resumed (its messages were written before)."""
    if session.messages or session.id in parents or session.resumed:
        return True
    report.ignore("session without messages")
    return False


def dropping_copied_history(
    sessions: Iterable[ImportSession],
    children: Mapping[str, int],
    outside: Callable[[str], Sequence[Any]],
    report: ImportReport,
) -> Iterator[ImportSession]:
    """:func:`without_copied_history` for a stream of sessions, parents before children,
    given how many ``children`` each parent id has in the stream: a parent's messages are held
    only until its last child has come, so memory holds the parents still waiting for a child,
    not the import. A session ``resumed`` holds only what was appended to it: a child compares
    with its history from ``outside`` followed by that; a resumed child is not trimmed.

    Example:
        >>> hi = {"role": "user", "content": "hi"}
        >>> a = ImportSession("a", "x", [("1", hi)])
        >>> b = ImportSession("b", "x", [("2", dict(hi)), ("3", {"role": "user",
        ...     "content": "more"})], parent_session_id="a")
        >>> kept = dropping_copied_history([a, b], {"a": 1}, lambda _: [], ImportReport("x"))
        >>> [(s.id, [k for k, _ in s.messages]) for s in kept]
        [('a', ['1']), ('b', ['3'])]
    """
    held: dict[str, list[MessageLike]] = {}
    waiting = dict(children)
    for session in sessions:
        if waiting.get(session.id):  # the copy a child compares with: before its own trim
            earlier = list(outside(session.id)) if session.resumed else []
            held[session.id] = earlier + [m for _, m in session.messages]
        pid = session.parent_session_id
        if pid is not None:
            if not session.resumed:  # (a resumed one left its copy out when first read)
                parent = held.get(pid)
                drop_copied_prefix(session, parent if parent is not None else outside(pid))
            if waiting.get(pid):
                waiting[pid] -= 1
                if not waiting[pid]:
                    held.pop(pid, None)
        if _kept(session, children, report):
            yield session
