"""Summary cache: a repeated search costs no LLM call.

Keys come from :func:`summary_cache_key` (root session, its last message id, a hash of the
transcript the model read, normalized query, model, prompt version, quality-gate version), so
a new message in the session, a forgotten sub-session, another model, a new prompt or another
gate simply misses. ``delete_sessions`` drops the entries of the chains it changes from the
caches registered with the store (a summarizer registers its side file and its memory cache).
Each entry carries the gate's verdict
(:class:`~langchain_session_recall.models.CachedSummary`): a rejected answer is cached too, so a
repeated search does not pay the model again, and it is never served as a summary. Three
implementations of the two-method :class:`SummaryCache` protocol:

- :class:`StoreSummaryCache` keeps summaries in the session store (SQLite or PostgreSQL);
- :class:`InMemorySummaryCache` for no store, or a read-only one;
- :class:`JsonFileSummaryCache` a side file next to a read-only database.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langchain_session_recall.models import CachedSummary, CacheStatus

if TYPE_CHECKING:
    from langchain_session_recall.backends.base import SessionBackend

__all__ = [
    "InMemorySummaryCache",
    "JsonFileSummaryCache",
    "StoreSummaryCache",
    "SummaryCache",
    "normalize_query",
    "side_file_cache",
    "summary_cache_key",
]

logger = logging.getLogger(__name__)


@runtime_checkable
class SummaryCache(Protocol):
    """Where summaries are kept between searches."""

    def get(self, key: str) -> CachedSummary | None:
        """Return the entry cached under ``key``, or None."""
        ...

    def put(
        self,
        key: str,
        summary: str,
        *,
        session_id: str,
        model: str | None,
        status: CacheStatus = "summarized",
        reasons: Sequence[str] = (),
    ) -> None:
        """Remember ``summary`` (with the gate's verdict) under ``key``."""
        ...


def normalize_query(query: str) -> str:
    """Case-fold and collapse whitespace, so ``"Docker  Compose"`` and ``"docker compose"`` share
    a cache entry.

    Example:
        >>> normalize_query("  Docker   COMPOSE ")
        'docker compose'
    """
    return " ".join(query.casefold().split())


def summary_cache_key(
    *,
    session_id: str,
    last_message_id: int | None,
    transcript: str,
    query: str,
    model: str | None,
    prompt_version: str,
    gate_version: str = "",
) -> str:
    """Cache key of one session summary.

    A hash of ``transcript`` (what the model read) is part of the key: a recap is served only
    for the very text it was made from, so one made before a sub-session was forgotten, or
    for another user's view of the same chain, is never served (a miss, not a stale recap).
    ``last_message_id`` (the retriever's ``last_message_id`` metadata) changes when the
    session grows. ``gate_version`` names the quality gate and its thresholds (its verdict is
    part of the entry).

    Example:
        >>> k = summary_cache_key(session_id="s1", last_message_id=7, transcript="...",
        ...                       query="Docker", model="gpt-4o-mini", prompt_version="v1")
        >>> k.startswith("summary:") and len(k)
        72
    """
    made_from = hashlib.sha256(transcript.encode("utf-8")).hexdigest()
    version = f"m{last_message_id}" if last_message_id is not None else ""
    parts = [session_id, version, made_from, normalize_query(query), model or "", prompt_version]
    if gate_version:
        parts.append(gate_version)
    blob = json.dumps(parts, ensure_ascii=False).encode("utf-8")
    return "summary:" + hashlib.sha256(blob).hexdigest()


class InMemorySummaryCache:
    """A dict behind a lock (the sync map runs sessions on worker threads)."""

    def __init__(self) -> None:
        self._data: dict[str, CachedSummary] = {}
        self._sessions: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> CachedSummary | None:
        with self._lock:
            return self._data.get(key)

    def put(
        self,
        key: str,
        summary: str,
        *,
        session_id: str,
        model: str | None,
        status: CacheStatus = "summarized",
        reasons: Sequence[str] = (),
    ) -> None:
        with self._lock:
            self._data[key] = CachedSummary(summary, status, model, tuple(reasons))
            self._sessions[key] = session_id

    def forget_sessions(self, session_ids: Collection[str]) -> None:
        """Drop the entries made for any of ``session_ids``."""
        gone = set(session_ids)
        with self._lock:
            for key in [k for k, sid in self._sessions.items() if sid in gone]:
                del self._data[key], self._sessions[key]

    def __len__(self) -> int:
        return len(self._data)


class JsonFileSummaryCache:
    """Summaries in a JSON side file (for read-only databases). Written atomically."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> CachedSummary | None:
        with self._lock:
            entry = self._load().get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("summary"), str):
            return None
        status: CacheStatus = "rejected" if entry.get("status") == "rejected" else "summarized"
        model = entry.get("model")
        reasons = entry.get("reasons")
        return CachedSummary(
            entry["summary"],
            status,
            model if isinstance(model, str) else None,
            tuple(str(r) for r in reasons) if isinstance(reasons, list) else (),
        )

    def put(
        self,
        key: str,
        summary: str,
        *,
        session_id: str,
        model: str | None,
        status: CacheStatus = "summarized",
        reasons: Sequence[str] = (),
    ) -> None:
        with self._lock:
            data = self._load()
            data[key] = {
                "summary": summary,
                "session_id": session_id,
                "model": model,
                "status": status,
                "reasons": list(reasons),
            }
            self._write(data)

    def forget_sessions(self, session_ids: Collection[str]) -> None:
        """Drop the entries made for any of ``session_ids`` from the file (rewritten whole,
        so their text leaves the disk with the old file)."""
        gone = set(session_ids)
        with self._lock:
            data = self._load()
            kept = {
                k: v
                for k, v in data.items()
                if not (isinstance(v, dict) and v.get("session_id") in gone)
            }
            if len(kept) != len(data):
                self._write(kept)

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False)
        os.replace(tmp, self.path)


_SIDE_FILES: dict[str, JsonFileSummaryCache] = {}
_SIDE_FILES_LOCK = threading.Lock()


def side_file_cache(path: str | os.PathLike[str]) -> JsonFileSummaryCache:
    """The one :class:`JsonFileSummaryCache` of this process for ``path``: summarizers on the
    same file share its lock, and it outlives them, so a store it is registered with
    (``register_summary_cache``) still purges the file after the summarizer is gone.

    Example:
        >>> side_file_cache("/tmp/recaps.json") is side_file_cache("/tmp/../tmp/recaps.json")
        True
    """
    key = os.path.realpath(path)
    with _SIDE_FILES_LOCK:
        cache = _SIDE_FILES.get(key)
        if cache is None:
            cache = _SIDE_FILES[key] = JsonFileSummaryCache(key)
        return cache


class StoreSummaryCache:
    """The summary cache of a session store (either backend): recaps survive the process."""

    def __init__(self, store: SessionBackend) -> None:
        self.store = store

    def get(self, key: str) -> CachedSummary | None:
        return self.store.get_cached_summary(key)

    def put(
        self,
        key: str,
        summary: str,
        *,
        session_id: str,
        model: str | None,
        status: CacheStatus = "summarized",
        reasons: Sequence[str] = (),
    ) -> None:
        self.store.put_cached_summary(
            key,
            session_id=session_id,
            summary=summary,
            model=model,
            status=status,
            reasons=reasons,
        )
