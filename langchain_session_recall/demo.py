"""The embedded demo database: realistic agent sessions shipped with the package."""

from __future__ import annotations

import json
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.backends.sqlite import SessionStore

__all__ = ["DEMO_QUERIES", "build_demo_store", "default_demo_path", "demo_sessions"]

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


def build_demo_store(path: str | os.PathLike[str] = ":memory:") -> SessionStore:
    """A store holding the demo sessions (created or completed at ``path``).

    Example:
        >>> store = build_demo_store()
        >>> len(store.recent_sessions(limit=100)) > 10
        True
    """
    store = SessionStore(path)
    load_demo(store)
    return store
