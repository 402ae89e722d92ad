"""SQL of the passage-vector table, for both dialects (one builder per statement).

``passage_vectors`` holds one row per window: its session, its layout (``"3/1"``), first and
last message ids, the window's message ids (JSON) and its vector as little-endian float32
bytes (the layout sqlite-vec and pgvector's ``bytea`` input read), or no bytes at all for a
window whose vector was refused at write time (left to the backfill). Rows go with their
session (``ON DELETE CASCADE``). The model that made them, their window layout and their size
are recorded in ``session_recall_meta``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, NamedTuple

from langchain_session_recall.backends import sql

# session_recall_meta's statements live in sql.py (the import state uses them too)
from langchain_session_recall.backends.sql import delete_meta as delete_meta
from langchain_session_recall.backends.sql import read_meta as read_meta
from langchain_session_recall.backends.sql import set_meta as set_meta
from langchain_session_recall.models import SearchFilters

TABLE = "passage_vectors"
META_MODEL = "embedding_model"
META_WINDOW = "embedding_window"
META_DIM = "embedding_dim"
DIM_SAMPLE = 100
"""Vectors read to tell the size of a store's vectors when it was not recorded (stores written
before the size was): the size most of its first ones (not empty) have."""


def create_table(d: sql.Dialect) -> list[str]:
    """The table and its index (idempotent)."""
    if d.name == "postgresql":
        key, blob = "id BIGSERIAL PRIMARY KEY", "BYTEA"
    else:
        key, blob = "id INTEGER PRIMARY KEY AUTOINCREMENT", "BLOB"
    return [
        f"CREATE TABLE IF NOT EXISTS {TABLE} ({key}, "
        "session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, "
        "layout TEXT NOT NULL, start_id BIGINT NOT NULL, last_id BIGINT NOT NULL, "
        f"message_ids TEXT NOT NULL, embedding {blob} NOT NULL)",
        f"CREATE UNIQUE INDEX IF NOT EXISTS {TABLE}_window "
        f"ON {TABLE}(session_id, layout, start_id)",
    ]


def table_exists(d: sql.Dialect) -> str:
    if d.name == "postgresql":
        return f"SELECT to_regclass('{TABLE}') IS NOT NULL"
    return f"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '{TABLE}'"


class Recorded(NamedTuple):
    """What a store records beside its vectors (``None`` each when it does not)."""

    model: str | None
    window: str | None
    dim: int | None
    """The vectors' size: recorded, else (a store written before it was) the size most of its
    first :data:`DIM_SAMPLE` vectors have, else ``None`` (no vector yet)."""


def recorded_model(conn: Any, d: sql.Dialect) -> Recorded | None:
    """The model, window layout and vector size recorded beside the store's vectors, or
    ``None`` when the store has no vector table: the one read of them, for the index's checks,
    ``stats()`` and ``check()``."""
    if not conn.execute(table_exists(d)).fetchone()[0]:
        return None
    model, window, dim = (read_meta(conn, d, key) for key in (META_MODEL, META_WINDOW, META_DIM))
    size = int(dim) if dim is not None and dim.isdigit() else None
    return Recorded(model, window, size if size else sample_dim(conn, d))


def sample_dim(conn: Any, d: sql.Dialect) -> int | None:
    """The size most of the first :data:`DIM_SAMPLE` stored vectors have (``None``: none)."""
    sizes = conn.execute(
        f"SELECT n, count(*) FROM (SELECT length(embedding) AS n FROM {TABLE} "
        f"WHERE length(embedding) > 0 ORDER BY id LIMIT {DIM_SAMPLE}) first_rows GROUP BY n"
    ).fetchall()
    return majority_dim((int(n or 0), int(c)) for n, c in sizes)


def majority_dim(sizes: Iterable[tuple[int, int]]) -> int | None:
    """The size most stored vectors have, from ``(bytes, count)`` pairs (``None``: none).

    Example:
        >>> majority_dim([(256, 40), (0, 3), (128, 1)])
        64
    """
    counts: Counter[int] = Counter()
    for size, count in sizes:
        if size and size % 4 == 0:
            counts[size // 4] += int(count)
    return counts.most_common(1)[0][0] if counts else None


def last_window(d: sql.Dialect) -> str:
    """The session's last stored window of a layout: ``start_id``."""
    return (
        f"SELECT start_id FROM {TABLE} WHERE session_id = {d.param('sid')} "
        f"AND layout = {d.param('layout')} ORDER BY start_id DESC LIMIT 1"
    )


def waiting_windows(d: sql.Dialect) -> str:
    """The session's windows of a layout whose vector was refused (left to the backfill):
    ``start_id``."""
    return (
        f"SELECT start_id FROM {TABLE} WHERE session_id = {d.param('sid')} "
        f"AND layout = {d.param('layout')} AND length(embedding) = 0"
    )


def delete_window(d: sql.Dialect) -> str:
    return (
        f"DELETE FROM {TABLE} WHERE session_id = {d.param('sid')} "
        f"AND layout = {d.param('layout')} AND start_id = {d.param('start')}"
    )


def mark_waiting(d: sql.Dialect) -> str:
    """A stored vector that cannot be read, emptied: the backfill embeds its window again."""
    return f"UPDATE {TABLE} SET embedding = {d.param('empty')} WHERE id = {d.param('id')}"


def windows_from(d: sql.Dialect) -> str:
    """The session's stored windows of a layout from ``start_id`` on: ``start_id,
    message_ids``."""
    return (
        f"SELECT start_id, message_ids FROM {TABLE} WHERE session_id = {d.param('sid')} "
        f"AND layout = {d.param('layout')} AND start_id >= {d.param('start')}"
    )


def messages_from(d: sql.Dialect) -> str:
    """The session's messages from id ``start`` on, in order: ``id, role, content``, and the
    session's title and start (the windows' header)."""
    return (
        "SELECT m.id, m.role, m.content, s.title, s.started_at FROM messages m "
        f"JOIN sessions s ON s.id = m.session_id WHERE m.session_id = {d.param('sid')} "
        f"AND m.id >= {d.param('start')} AND {d.visibility} ORDER BY m.id"
    )


def delete_session_windows(d: sql.Dialect) -> str:
    return f"DELETE FROM {TABLE} WHERE session_id = {d.param('sid')}"


def delete_windows_from(d: sql.Dialect) -> str:
    return (
        f"DELETE FROM {TABLE} WHERE session_id = {d.param('sid')} "
        f"AND layout = {d.param('layout')} AND start_id >= {d.param('start')}"
    )


def insert_window(d: sql.Dialect) -> str:
    names = ("session_id", "layout", "start_id", "last_id", "message_ids", "embedding")
    return (
        f"INSERT INTO {TABLE} ({', '.join(names)}) VALUES ({', '.join(d.param(n) for n in names)})"
    )


def clear(d: sql.Dialect) -> str:
    return f"DELETE FROM {TABLE}"


def sessions_with_messages(d: sql.Dialect) -> str:
    """Every session holding a message, oldest first (what a backfill walks)."""
    return "SELECT s.id FROM sessions s WHERE s.message_count > 0 ORDER BY s.started_at, s.id"


def row_vectors(d: sql.Dialect) -> str:
    """Every stored vector by row: ``id, embedding`` (what ``check()`` and the backfill read)."""
    return f"SELECT id, embedding FROM {TABLE} ORDER BY id"


def version(d: sql.Dialect) -> str:
    """What changes whenever a row is added or removed: the cache's key."""
    return f"SELECT count(*), coalesce(max(id), 0) FROM {TABLE}"


def any_vector(d: sql.Dialect) -> str:
    """One stored vector's row id, if the store holds any (a non-empty one)."""
    return f"SELECT id FROM {TABLE} WHERE length(embedding) > 0 LIMIT 1"


def count_windows(d: sql.Dialect, *, scoped: bool) -> str:
    """How many windows have a vector (``scoped``: of the sessions of ``user_id``)."""
    if not scoped:
        return f"SELECT count(*) FROM {TABLE}"
    return (
        f"SELECT count(*) FROM {TABLE} v JOIN sessions s ON s.id = v.session_id "
        f"WHERE s.user_id = {d.param('user_id')}"
    )


def all_vectors(d: sql.Dialect) -> str:
    """Every window: ``id, session_id, layout, message_ids, embedding``."""
    return f"SELECT id, session_id, layout, message_ids, embedding FROM {TABLE} ORDER BY id"


def allowed_rows(d: sql.Dialect, filters: SearchFilters) -> tuple[str, dict[str, Any]]:
    """Ids of the windows a search may use: the same session-level filters the lexical
    search applies to session headers (:func:`~langchain_session_recall.backends.sql.
    session_filter_clauses`: tenant, sources, dates, excluded sessions; a role filter leaves
    none, as a window has no single role)."""
    where, params = sql.session_filter_clauses(d, filters)
    cond = " AND ".join(where) if where else "1 = 1"
    return (
        f"SELECT v.id, s.started_at FROM {TABLE} v JOIN sessions s ON s.id = v.session_id "
        f"WHERE {cond}",
        params,
    )
