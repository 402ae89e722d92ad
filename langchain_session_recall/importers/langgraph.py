"""Import a LangGraph SQLite checkpointer database (``langgraph-checkpoint-sqlite``).

Each thread becomes one session (its id is the ``thread_id``); checkpoints of sub-graphs
(a non-empty ``checkpoint_ns``) become child sessions. The messages are those of the thread's
latest checkpoint (its ``messages`` channel); each is stamped with the time of the first
checkpoint that holds it. Messages are keyed by thread and message id, so re-importing after
the agent ran on adds only the new turns.

The file is read with :class:`~langchain_session_recall.importers.checkpoint_serde.
StrictCheckpointSerde`, never with LangGraph's default deserializer: only chat messages are
built from it, so a checkpoint that names other code (``os.system``) cannot run it; what was
refused is reported.

Needs ``pip install langchain-session-recall[langgraph]`` (``langgraph-checkpoint-sqlite``).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.backends.sqlite.files import read_only_uri
from langchain_session_recall.dates import to_timestamp
from langchain_session_recall.errors import ImportSourceError
from langchain_session_recall.importers.base import write_sessions
from langchain_session_recall.importers.records import ImportSession
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.sources import check_regular_file

if TYPE_CHECKING:  # langchain_core.messages is imported when a checkpoint is read: not
    # loaded by every command that imports the importers (``sync`` from cron)
    from langchain_core.messages import BaseMessage

__all__ = ["import_langgraph"]

KIND = "langgraph"
SOURCE = "langgraph"
REFUSED = "not built: a type that is not a chat message"
"""Why an object of a checkpoint was left as plain data (see ``checkpoint_serde.py``)."""
_THREADS = (  # as bytes: an id that is not UTF-8 must cost its thread only
    "SELECT CAST(thread_id AS BLOB), CAST(checkpoint_ns AS BLOB) FROM checkpoints "
    "GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns"
)


def _connect(path: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(read_only_uri(path), uri=True, check_same_thread=False)
        conn.execute("SELECT 1 FROM checkpoints LIMIT 1")
    except sqlite3.DatabaseError as exc:
        raise ImportSourceError(
            f"{path} is not a LangGraph SQLite checkpointer database ({exc}); pass the file "
            "given to SqliteSaver"
        ) from exc
    return conn


def _checkpoint_time(checkpoint: Any) -> float | None:
    """Unix seconds of a checkpoint's ``ts``; ``None`` when it is missing or not a date (its
    messages are still imported, stamped with the thread's other times)."""
    try:
        return to_timestamp(checkpoint.get("ts"))
    except ValueError:
        return None


def _thread_ids(conn: sqlite3.Connection, report: ImportReport) -> list[tuple[str, str]]:
    """``(thread_id, checkpoint_ns)`` of every thread; one whose ids are not UTF-8 text is
    skipped and reported (the saver could not look it up)."""
    out = []
    for raw_id, raw_ns in conn.execute(_THREADS):
        try:
            out.append((bytes(raw_id or b"").decode(), bytes(raw_ns or b"").decode()))
        except UnicodeDecodeError:
            report.skip("thread id is not valid UTF-8", f"thread {bytes(raw_id or b'')!r}")
    return out


def _child_id(thread_id: str, namespace: str) -> str:
    node = namespace.split("|")[-1].split(":")[0] or "subgraph"
    digest = hashlib.sha1(namespace.encode()).hexdigest()[:12]
    return f"{thread_id}/{node}-{digest}"


def _message_key(thread_id: str, namespace: str, index: int, message: BaseMessage) -> str:
    # Sub-graph states often repeat the parent's messages: keyed by id, they are stored once.
    return f"{thread_id}:{message.id}" if message.id else f"{thread_id}:{namespace}#{index}"


def _thread(saver: Any, thread_id: str, namespace: str, report: ImportReport) -> ImportSession:
    from langchain_core.messages import AIMessage, BaseMessage

    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": namespace}}
    first_seen: dict[str, float] = {}
    latest: list[Any] = []
    started: float | None = None
    for i, item in enumerate(saver.list(config)):  # newest first
        when = _checkpoint_time(item.checkpoint) or 0.0
        started = when
        messages = item.checkpoint.get("channel_values", {}).get("messages")
        if not isinstance(messages, list):
            continue
        if i == 0:
            latest = messages
        for m in messages:
            if isinstance(m, BaseMessage) and m.id:
                first_seen[m.id] = when  # overwritten by each older checkpoint: ends earliest
    session = ImportSession(
        id=thread_id if not namespace else _child_id(thread_id, namespace),
        source=SOURCE,
        parent_session_id=None if not namespace else thread_id,
        started_at=started,
    )
    for index, m in enumerate(latest):
        if not isinstance(m, BaseMessage):
            report.skip("not a message in the messages channel", f"thread {thread_id} #{index}")
            continue
        if m.type not in ("human", "ai", "tool", "system"):
            report.skip(f"{m.type} message", f"thread {thread_id} #{index}")
            continue
        when = first_seen.get(m.id or "", started or 0.0)
        row = m.model_copy(update={"additional_kwargs": {**m.additional_kwargs, "timestamp": when}})
        session.messages.append((_message_key(thread_id, namespace, index, m), row))
        if isinstance(m, AIMessage) and session.model is None:
            meta = m.response_metadata
            model = meta.get("model_name") or meta.get("model")
            session.model = str(model) if model else None
    return session


def import_langgraph(
    store: SessionBackend,
    path: str | os.PathLike[str],
    *,
    show_progress: bool | None = None,
    reimport: bool = False,
) -> ImportReport:
    """Import every thread of a LangGraph ``SqliteSaver`` database into ``store``.

    A session imported before and forgotten since (``delete_sessions``) is left out and
    listed in ``report.forgotten`` unless ``reimport``.

    Example:
        >>> import sqlite3, tempfile, os
        >>> from langgraph.checkpoint.sqlite import SqliteSaver
        >>> path = os.path.join(tempfile.mkdtemp(), "checkpoints.db")
        >>> SqliteSaver(sqlite3.connect(path)).setup()
        >>> from langchain_session_recall import SessionStore
        >>> import_langgraph(SessionStore(":memory:"), path).sessions
        0
    """
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportSourceError(
            "importing LangGraph checkpoints needs langgraph-checkpoint-sqlite: "
            "pip install 'langchain-session-recall[langgraph]'"
        ) from exc
    from langchain_session_recall.importers.checkpoint_serde import StrictCheckpointSerde

    file = Path(path).expanduser()
    check_regular_file(file, "; pass the SqliteSaver database file")
    report = ImportReport(KIND)
    conn = _connect(file)
    serde = StrictCheckpointSerde()
    try:
        saver = SqliteSaver(conn, serde=serde)
        sessions = []
        for thread_id, namespace in _thread_ids(conn, report):
            where = f"thread {thread_id} {namespace!r}"
            serde.refused.clear()
            try:
                sessions.append(_thread(saver, thread_id, namespace, report))
            except Exception as exc:  # a checkpoint this version cannot decode: skip the thread
                report.skip("unreadable checkpoint", f"{where}: {exc}")
            for name in sorted(serde.refused):
                report.skip(REFUSED, f"{where}: {name}")
    finally:
        conn.close()
    return write_sessions(store, sessions, report, show_progress=show_progress, reimport=reimport)
