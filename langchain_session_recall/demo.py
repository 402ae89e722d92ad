"""The embedded demo database: realistic agent sessions shipped with the package.

The demo writes only into a file it may own: a new (or empty) file, or a demo database, i.e.
a store of ours holding nothing but the demo's sessions and their messages. Anything else (a
store with sessions of its own, even a demo database something was imported into later, a
Hermes file, any other file) is refused and left as it is, with or without ``--fresh``. The
content is the mark: a demo database built by an earlier version is recognised too, and one
that received an import is no longer taken for a demo.
"""

from __future__ import annotations

import json
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.backends.sqlite import SessionStore
from langchain_session_recall.core.text import plural
from langchain_session_recall.errors import NotASessionDatabaseError

__all__ = [
    "DEMO_QUERIES",
    "build_demo_store",
    "default_demo_path",
    "demo_sessions",
    "open_demo_store",
]

DEMO_QUERIES = (
    "how did we fix the CORS error?",
    "that script for renaming photos",
    "which API design did we settle on?",
    "服务端 部署",
)


def demo_sessions() -> list[dict[str, Any]]:
    """The demo sessions as dicts (parents before children), each with its ``messages``."""
    raw = resources.files("langchain_session_recall").joinpath("data/demo_sessions.json")
    data: dict[str, Any] = json.loads(raw.read_text(encoding="utf-8"))
    return list(data["sessions"])


def _session_fields(session: dict[str, Any]) -> dict[str, Any]:
    keys = ("source", "parent_session_id", "model", "title", "user_id", "started_at", "end_reason")
    return {k: session.get(k) for k in keys if session.get(k) is not None}


def load_demo(store: SessionBackend) -> int:
    """Add the demo sessions to ``store`` (skipping those it has); returns sessions added."""
    added = 0
    for session in demo_sessions():
        if store.get_session(session["id"]) is not None:
            continue
        store.add_session(session["id"], **_session_fields(session))
        store.add_messages(session["id"], session["messages"])
        if session.get("ended_at") is not None:
            store.end_session(session["id"], ended_at=session["ended_at"])
        added += 1
    return added


def default_demo_path() -> Path:
    """Where ``session-recall demo`` keeps its database (``$SESSION_RECALL_DEMO_DB`` overrides)."""
    override = os.environ.get("SESSION_RECALL_DEMO_DB")
    if override:
        return Path(override)
    return Path(tempfile.gettempdir()) / "session-recall-demo.db"


def _not_ours(store: SessionBackend) -> str | None:
    """Why ``store`` is not a demo database (``None`` when it holds only the demo's content)."""
    demo = {d["id"]: len(d["messages"]) for d in demo_sessions()}
    figures = store.stats()
    if figures["sessions"] > len(demo):
        return f"it holds {plural(figures['sessions'], 'session')}, the demo {len(demo)}"
    held = store.all_session_ids()
    foreign = [sid for sid in held if sid not in demo]
    if foreign:
        foreign_ones = plural(len(foreign), "session that is", "sessions that are")
        return f"it holds {foreign_ones} not the demo's, e.g. {foreign[0]!r}"
    if figures["messages"] != sum(demo[sid] for sid in held):
        return "its demo sessions hold messages the demo did not write"
    return None


def _check_demo_file(path: Path) -> bool:
    """Whether ``path`` holds a demo database (``False``: nothing is there yet, or an empty
    file, which is built into).

    Raises:
        NotASessionDatabaseError: anything else is there.
    """
    if not os.path.lexists(path) or (path.is_file() and path.stat().st_size == 0):
        return False
    why: str | None = "it is not a regular file"
    if path.is_file():
        try:
            store = SessionStore(path, read_only=True)
            with store:
                own = store.layout.own
                why = _not_ours(store) if own else "it is another program's database"
        except NotASessionDatabaseError as exc:
            why = str(exc)
    if why is not None:
        raise NotASessionDatabaseError(
            f"{path} is not a demo database ({why}); the demo builds only into a new file or "
            f"one it built, and leaves this one as it is: give --db another path (the default "
            f"is {default_demo_path()})"
        )
    return True


def open_demo_store(path: str | os.PathLike[str], *, fresh: bool = False) -> SessionStore:
    """The demo database at ``path``: built there when nothing (or an empty file) is there,
    completed when it is a demo database; with ``fresh``, a demo database is deleted and built
    again.

    Raises:
        NotASessionDatabaseError: ``path`` holds anything but a demo database (see the module
            docstring); it is left untouched.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "demo.db"
        >>> open_demo_store(path).close(); open_demo_store(path, fresh=True).stats()["sessions"]
        18
        >>> _ = path.with_name("notes.txt").write_text("mine")
        >>> open_demo_store(path.with_name("notes.txt"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        langchain_session_recall.errors.NotASessionDatabaseError: ... is not a demo database ...
    """
    if str(path) == ":memory:":
        store = SessionStore(":memory:")
    else:
        file = Path(path).expanduser()
        if _check_demo_file(file) and fresh:
            for leftover in (file, *(Path(f"{file}{x}") for x in ("-wal", "-shm", "-journal"))):
                leftover.unlink(missing_ok=True)
        store = SessionStore(file)
    try:
        load_demo(store)
    except BaseException:
        store.close()
        raise
    return store


def build_demo_store(path: str | os.PathLike[str] = ":memory:") -> SessionStore:
    """A store holding the demo sessions, in memory or at ``path`` (see
    :func:`open_demo_store`: a file that is not a demo database is refused).

    Example:
        >>> store = build_demo_store()
        >>> len(store.recent_sessions(limit=100)) > 10
        True
    """
    return open_demo_store(path)
