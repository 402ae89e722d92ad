"""The summary cache: recaps kept with the quality gate's verdict."""

from __future__ import annotations

import time
from collections.abc import Sequence

from langchain_session_recall.backends import sql
from langchain_session_recall.backends.common.core import StoreCore
from langchain_session_recall.models import (
    CachedSummary,
    CacheStatus,
)


class SummaryCacheRows(StoreCore):
    """The summary cache: recaps kept with the quality gate's verdict."""

    def get_cached_summary(self, key: str) -> CachedSummary | None:
        """The recap cached under ``key``, with its status, or ``None``."""
        with self._read() as conn:
            row = conn.execute(sql.get_summary(self.dialect), {"key": key}).fetchone()
        if row is None:
            return None
        status: CacheStatus = "rejected" if row[1] == "rejected" else "summarized"
        reasons = tuple(r for r in str(row[3] or "").split(",") if r)
        return CachedSummary(summary=str(row[0]), status=status, model=row[2], reasons=reasons)

    def put_cached_summary(
        self,
        key: str,
        *,
        session_id: str,
        summary: str,
        model: str | None,
        status: CacheStatus = "summarized",
        reasons: Sequence[str] = (),
    ) -> None:
        """Cache a recap under ``key``, with the quality gate's verdict (``status``, and the
        ``reasons`` of a rejection). Raises :class:`ReadOnlyStoreError` on a read-only store (the
        summarizer then caches in memory instead)."""
        with self._write() as conn:
            conn.execute(
                sql.put_summary(self.dialect),
                {
                    "cache_key": key,
                    "session_id": session_id,
                    "summary": self.dialect.text(summary),
                    "model": model,
                    "status": status,
                    "reasons": ",".join(reasons),
                    "created_at": time.time(),
                },
            )
