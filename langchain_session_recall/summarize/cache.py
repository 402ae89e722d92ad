"""Summary cache: a repeated search costs no LLM call.

Keys come from :func:`summary_cache_key` (root session, its last message id or a content hash,
normalized query, model, prompt version, quality-gate version), so a new message in the session,
another model, a new prompt or another gate simply misses. Each entry carries the gate's verdict
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
from collections.abc import Sequence
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

    ``last_message_id`` (the retriever's ``last_message_id`` metadata) changes when the session
    grows; without it a hash of the transcript plays that role. ``gate_version`` names the
    quality gate and its thresholds (its verdict is part of the entry).

    Example:
        >>> k = summary_cache_key(session_id="s1", last_message_id=7, transcript="...",
        ...                       query="Docker", model="gpt-4o-mini", prompt_version="v1")
        >>> k.startswith("summary:") and len(k)
        72
    """
    version = (
        f"m{last_message_id}"
        if last_message_id is not None
        else "h" + hashlib.sha256(transcript.encode("utf-8")).hexdigest()
    )
    parts = [session_id, version, normalize_query(query), model or "", prompt_version]
    if gate_version:
        parts.append(gate_version)
    blob = json.dumps(parts, ensure_ascii=False).encode("utf-8")
    return "summary:" + hashlib.sha256(blob).hexdigest()


class InMemorySummaryCache:
    """A dict behind a lock (the sync map runs sessions on worker threads)."""

    def __init__(self) -> None:
        self._data: dict[str, CachedSummary] = {}
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
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, ensure_ascii=False)
            os.replace(tmp, self.path)


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
