"""The SQL both backends share, rendered for a dialect (pure: builds text, runs nothing).

Every statement here is plain SQL that SQLite (3.24 or newer) and PostgreSQL both run. What
differs between them is small and lives in the backend's :class:`Dialect`: how a bound
parameter is written (``:name`` / ``%(name)s``), how a list is bound (a JSON array read by
``json_each`` / a PostgreSQL array), the last ``n`` characters of a text, row locking, and the
columns and visibility rule of the file being read (a Hermes ``state.db`` lacks some columns
and hides rewound messages). Values are always bound parameters; identifiers come from fixed
lists in this module.

A statement builder returns SQL text, or ``(sql, params)`` when the shape depends on its
arguments. The full-text queries are not here: each backend renders its own
(``sqlite/statements.py``, ``postgres/statements.py``), using :func:`filter_clauses` for the
restrictions both share.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_session_recall.core.text import (
    TOOL_CLIP_MARKER,
    TOOL_OUTPUT_KEEP,
    TOOL_OUTPUT_LIMIT,
)
from langchain_session_recall.core.where import project_prefix
from langchain_session_recall.errors import InvalidArgumentError
from langchain_session_recall.messages import storable_text
from langchain_session_recall.models import SearchFilters

__all__ = [
    "SESSION_FIELDS",
    "UPDATABLE_FIELDS",
    "WHERE_FIELDS",
    "Dialect",
    "ancestors",
    "comparable",
    "filter_clauses",
    "recent_sessions",
]

SESSION_FIELDS = (
    "id",
    "source",
    "started_at",
    "user_id",
    "model",
    "title",
    "parent_session_id",
    "ended_at",
    "end_reason",
    "message_count",
    "cwd",
    "git_branch",
    "agent",
)
"""Columns of ``sessions`` in the order every session query selects them (a session's
``project`` is kept in ``cwd``, as Hermes names it, so a Hermes file shows its own)."""
WHERE_FIELDS = ("cwd", "git_branch", "agent")
"""Columns of where a session happened, added by schema version 5 (SQLite) and 4
(PostgreSQL): a store of an older version opened read-only reads them as ``NULL``."""
UPDATABLE_FIELDS = frozenset(
    {
        "source",
        "parent_session_id",
        "model",
        "title",
        "user_id",
        "started_at",
        "end_reason",
        *WHERE_FIELDS,
    }
)
"""Columns ``add_session`` may change on an existing session (never user input)."""


class Dialect(ABC):
    """What differs between the SQL of two backends.

    Example:
        >>> from langchain_session_recall.backends.sqlite.statements import SqliteDialect
        >>> SqliteDialect().param("id"), SqliteDialect().member("s.id", "ids")
        (':id', 's.id IN (SELECT value FROM json_each(:ids))')
    """

    name: str
    """``"sqlite"`` or ``"postgresql"``."""
    for_update: str = ""
    """Suffix that locks the selected rows until the transaction ends (PostgreSQL)."""

    @abstractmethod
    def param(self, name: str) -> str:
        """A named bound parameter."""

    @abstractmethod
    def member(self, column: str, name: str) -> str:
        """``column`` is one of the list bound as ``name`` (see :meth:`array`)."""

    @abstractmethod
    def array(self, values: Sequence[Any]) -> Any:
        """A Python list as the value :meth:`member` binds (its :func:`comparable` values)."""

    @abstractmethod
    def tail(self, expr: str, n: int) -> str:
        """The last ``n`` characters of a text expression."""

    def text(self, value: str | None) -> str | None:
        """A text value as this database can store it: lone surrogates, which UTF-8 cannot
        encode, become U+FFFD (:func:`~langchain_session_recall.messages.storable_text`)."""
        return storable_text(value) if value else value

    def session_column(self, name: str) -> str:
        """``s.<name>``, or ``NULL`` for a column the file lacks (older Hermes files)."""
        return f"s.{name}"

    def message_column(self, name: str) -> str:
        """``m.<name>``, or ``NULL`` for a column the file lacks (``seq`` in Hermes files)."""
        return f"m.{name}"

    @property
    def visibility(self) -> str:
        """Condition on ``m`` that leaves out messages the file hides (Hermes rewinds)."""
        return "1 = 1"


def comparable(values: Sequence[Any]) -> list[Any]:
    """The values of a list that a stored value can equal: text holding NUL is left out.

    PostgreSQL text cannot hold NUL, and SQLite's ``json_each`` cuts a string at its NUL
    (``"a\\x00"`` would equal ``"a"``): such a value equals nothing on either backend. Left out
    of the list rather than bound, since in ``NOT x IN (...)`` a ``NULL`` would exclude every
    row.

    Example:
        >>> comparable(["user", "user\\x00", 3])
        ['user', 3]
    """
    return [v for v in values if not (isinstance(v, str) and "\x00" in v)]


# --------------------------------------------------------------------------- reading


def session_select(d: Dialect) -> str:
    """``SELECT <SESSION_FIELDS> FROM sessions s`` (add a ``WHERE``)."""
    return f"SELECT {', '.join(d.session_column(c) for c in SESSION_FIELDS)} FROM sessions s"


def session_by_id(d: Dialect) -> str:
    return f"{session_select(d)} WHERE s.id = {d.param('id')}"


def sessions_by_id(d: Dialect) -> str:
    return f"{session_select(d)} WHERE {d.member('s.id', 'ids')}"


def all_session_ids(d: Dialect) -> str:
    return "SELECT id FROM sessions ORDER BY started_at, id"


def _message_select(d: Dialect, *, clip_tools: bool) -> str:
    content = "m.content"
    if clip_tools:
        # Long tool output is clipped in SQL, so a million-character log never leaves the store.
        content = (
            f"CASE WHEN m.role = 'tool' AND length(m.content) > {TOOL_OUTPUT_LIMIT} "
            f"THEN substr(m.content, 1, {TOOL_OUTPUT_KEEP}) || {d.param('clip')} || "
            f"{d.tail('m.content', TOOL_OUTPUT_KEEP)} ELSE m.content END"
        )
    return (
        f"SELECT m.id, m.session_id, m.role, {content}, m.timestamp, m.tool_call_id, "
        "m.tool_calls, m.tool_name FROM messages m"
    )


def session_messages(d: Dialect, *, newest_first: bool = False) -> str:
    """Visible messages of one session (``sid``), oldest first; with ``newest_first``, the
    newest ``last`` of them, newest first."""
    order = "m.timestamp, m.id"
    if newest_first:
        order = f"m.timestamp DESC, m.id DESC LIMIT {d.param('last')}"
    return (
        f"{_message_select(d, clip_tools=False)} WHERE m.session_id = {d.param('sid')} "
        f"AND {d.visibility} ORDER BY {order}"
    )


def chain_messages(d: Dialect) -> tuple[str, dict[str, Any]]:
    """Visible messages of several sessions (``ids``), tool output clipped, in time order."""
    sql = (
        f"{_message_select(d, clip_tools=True)} WHERE {d.member('m.session_id', 'ids')} "
        f"AND {d.visibility} ORDER BY m.timestamp, m.id"
    )
    return sql, {"clip": TOOL_CLIP_MARKER}


def chain_outline(d: Dialect) -> str:
    """``(id, session_id)`` of the visible messages of several sessions (``ids``), in the
    order of :func:`chain_messages`: a chain's order without its text."""
    return (
        f"SELECT m.id, m.session_id FROM messages m WHERE {d.member('m.session_id', 'ids')} "
        f"AND {d.visibility} ORDER BY m.timestamp, m.id"
    )


def messages_by_id(d: Dialect) -> tuple[str, dict[str, Any]]:
    """Visible messages by id (``ids``), tool output clipped as :func:`chain_messages` clips
    it, in no order."""
    sql = (
        f"{_message_select(d, clip_tools=True)} WHERE {d.member('m.id', 'ids')} AND {d.visibility}"
    )
    return sql, {"clip": TOOL_CLIP_MARKER}


def session_owner(d: Dialect) -> str:
    return f"SELECT {d.session_column('user_id')} FROM sessions s WHERE s.id = {d.param('id')}"


def ancestors(d: Dialect, *, user_scoped: bool) -> str:
    """``(id, parent)`` of the sessions bound as ``ids`` and of all their ancestors.

    ``UNION`` (not ``UNION ALL``) makes the walk stop at a row it has seen: a cycle written by
    another client ends the recursion, and no depth limit cuts a long chain short. With
    ``user_scoped`` the walk stops at a session of another user (``user_id``).
    """
    scope = f" AND p.user_id = {d.param('user_id')}" if user_scoped else ""
    return f"""
        WITH RECURSIVE up(id, parent) AS (
            SELECT id, parent_session_id FROM sessions WHERE {d.member("id", "ids")}
            UNION
            SELECT p.id, p.parent_session_id FROM up JOIN sessions p ON p.id = up.parent{scope}
        )
        SELECT id, parent FROM up
    """


def descendants(d: Dialect, *, user_scoped: bool) -> str:
    """``(id, parent)`` of the session bound as ``root`` and of everything below it.

    Cycle-safe and unbounded like :func:`ancestors`; the order is settled in Python
    (:func:`~langchain_session_recall.core.lineage.chain_order`).
    """
    scope = f" AND c.user_id = {d.param('user_id')}" if user_scoped else ""
    return f"""
        WITH RECURSIVE down(id, parent) AS (
            SELECT id, parent_session_id FROM sessions WHERE id = {d.param("root")}
            UNION
            SELECT c.id, c.parent_session_id FROM down
            JOIN sessions c ON c.parent_session_id = down.id{scope}
        )
        SELECT id, parent FROM down
    """


def filter_clauses(d: Dialect, filters: SearchFilters) -> tuple[list[str], dict[str, Any]]:
    """Search restrictions as ``WHERE`` conditions on ``m`` (messages) and ``s`` (sessions).

    The one place filters become SQL: both backends' full-text queries and the recent-sessions
    listing use it. ``role_filter`` and ``exclude_session_ids`` need the ``m`` alias.

    Example:
        >>> from langchain_session_recall.backends.sqlite.statements import SqliteDialect
        >>> filter_clauses(SqliteDialect(), SearchFilters(user_id="u", after=5.0))
        (['s.user_id = :f_user', 's.started_at >= :f_after'], {'f_user': 'u', 'f_after': 5.0})
    """
    where: list[str] = []
    params: dict[str, Any] = {}
    if filters.role_filter:
        where.append(d.member("m.role", "f_roles"))
        params["f_roles"] = d.array(filters.role_filter)
    if filters.exclude_sources:
        where.append(f"NOT {d.member('s.source', 'f_sources')}")
        params["f_sources"] = d.array(filters.exclude_sources)
    if filters.exclude_session_ids:
        where.append(f"NOT {d.member('m.session_id', 'f_sessions')}")
        params["f_sessions"] = d.array(filters.exclude_session_ids)
    if filters.user_id is not None:
        where.append(f"s.user_id = {d.param('f_user')}")
        params["f_user"] = filters.user_id
    if filters.after is not None:
        where.append(f"s.started_at >= {d.param('f_after')}")
        params["f_after"] = filters.after
    if filters.before is not None:
        where.append(f"s.started_at < {d.param('f_before')}")
        params["f_before"] = filters.before
    if filters.project is not None:
        where.append(_in_project(d))
        prefix = project_prefix(filters.project)
        params.update(f_project=filters.project, f_prefix=prefix, f_prefix_len=len(prefix))
    if filters.agents:
        where.append(d.member(d.session_column("agent"), "f_agents"))
        params["f_agents"] = d.array(filters.agents)
    return where, params


def _in_project(d: Dialect) -> str:
    """The session's directory is the project's or below it: equal, or starting with the
    project and a separator (compared as text, so no character of a path is a wildcard, as
    ``_`` and ``%`` are to ``LIKE``)."""
    cwd = d.session_column("cwd")
    return (
        f"({cwd} = {d.param('f_project')} OR substr({cwd}, 1, {d.param('f_prefix_len')}) = "
        f"{d.param('f_prefix')})"
    )


_ROOT = "(s.parent_session_id IS NULL OR p.id IS NULL)"
"""A chain root: no parent, or a parent the store does not hold."""
_CYCLE_CANDIDATE = (
    "(p.id = s.id OR p.started_at > s.started_at OR (p.started_at = s.started_at AND p.id > s.id))"
)
"""A session that started before its parent (or is its own parent). The first-started member
of a parent cycle is one, since its parent is a later member; a child created after its parent,
the usual case, is not: so recent mode finds the roots of cycles without walking any chain."""


def recent_sessions(
    d: Dialect, filters: SearchFilters, excluded_roots: Sequence[str], limit: int, offset: int = 0
) -> tuple[str, dict[str, Any]]:
    """Most recent root sessions, each with its first user message and last activity; the
    ``limit`` after the first ``offset`` of them (pages of one listing).

    Rows whose last column (the parent's id) is not ``NULL`` are candidates for the root of a
    parent cycle (:data:`_CYCLE_CANDIDATE`), for the caller to confirm. ``filters`` may
    restrict sources, user, dates, project and agents (its message-level fields are ignored).
    """
    where, params = filter_clauses(d, filters.sessions_only())
    where.insert(0, f"({_ROOT} OR {_CYCLE_CANDIDATE})")
    if excluded_roots:
        where.append(f"NOT {d.member('s.id', 'excluded')}")
        params["excluded"] = d.array(excluded_roots)
    params["limit"] = max(0, int(limit))
    params["offset"] = max(0, int(offset))
    sql = (
        f"SELECT {', '.join(d.session_column(c) for c in SESSION_FIELDS)}, "
        "(SELECT substr(m.content, 1, 600) FROM messages m WHERE m.session_id = s.id "
        f"AND m.role = 'user' AND {d.visibility} ORDER BY m.timestamp, m.id LIMIT 1), "
        "(SELECT max(m.timestamp) FROM messages m WHERE m.session_id = s.id), p.id "
        "FROM sessions s LEFT JOIN sessions p ON p.id = s.parent_session_id "
        f"WHERE {' AND '.join(where)} ORDER BY s.started_at DESC, s.id "
        f"LIMIT {d.param('limit')} OFFSET {d.param('offset')}"
    )
    return sql, params


def count_users(d: Dialect) -> str:
    """How many distinct non-null ``user_id`` values, counted up to ``limit`` (a scan that
    stops at the ``limit``-th distinct owner; PostgreSQL walks its ``user_id`` index)."""
    column = d.session_column("user_id")
    return (
        f"SELECT count(*) FROM (SELECT DISTINCT {column} AS u FROM sessions s "
        f"WHERE {column} IS NOT NULL LIMIT {d.param('limit')}) owners"
    )


# --------------------------------------------------------------------------- writing


def session_exists(d: Dialect) -> str:
    """One row, its ``message_count``, when the session ``id`` exists (locked for the
    transaction where that exists): the next message's position in the session."""
    return f"SELECT message_count FROM sessions WHERE id = {d.param('id')}{d.for_update}"


def hit_columns(d: Dialect, relevance: str) -> str:
    """What a full-text query selects per matching message (see ``MessageHit.from_row``)."""
    return (
        f"m.id AS id, m.session_id AS session_id, m.role AS role, {relevance} AS relevance, "
        f"s.source AS source, m.timestamp AS timestamp, {d.message_column('seq')} AS seq, "
        "s.started_at AS started_at"
    )


def session_filter_clauses(d: Dialect, filters: SearchFilters) -> tuple[list[str], dict[str, Any]]:
    """:func:`filter_clauses` for a query over sessions (their headers): the message-level
    filters become conditions on ``s``; a role filter leaves nothing to match (a header has
    no role), so it gives a condition that is always false."""
    where, params = filter_clauses(d, filters.sessions_only())
    if filters.exclude_session_ids:
        where.append(f"NOT {d.member('s.id', 'f_sessions')}")
        params["f_sessions"] = d.array(filters.exclude_session_ids)
    if filters.role_filter:
        where.append("1 = 0")
    return where, params


def insert_session(d: Dialect) -> str:
    """A new session; a concurrent creator of the same id makes it a no-op (rowcount 0)."""
    names = (
        "id",
        "source",
        "user_id",
        "model",
        "title",
        "parent_session_id",
        "started_at",
        *WHERE_FIELDS,
    )
    values = ", ".join(d.param(n) for n in (*names, "end_reason"))
    return (
        f"INSERT INTO sessions ({', '.join(names)}, end_reason) VALUES ({values}) "
        "ON CONFLICT (id) DO NOTHING"
    )


def update_session(d: Dialect, columns: Sequence[str]) -> str:
    """``UPDATE sessions SET <columns> WHERE id = :id``; columns from :data:`UPDATABLE_FIELDS`."""
    unknown = set(columns) - UPDATABLE_FIELDS
    if unknown:
        raise InvalidArgumentError(f"not updatable: {sorted(unknown)}")
    assignments = ", ".join(f"{c} = {d.param(c)}" for c in columns)
    return f"UPDATE sessions SET {assignments} WHERE id = {d.param('id')}"


def end_session(d: Dialect) -> str:
    return (
        f"UPDATE sessions SET ended_at = {d.param('ended_at')}, "
        f"end_reason = coalesce({d.param('end_reason')}, end_reason) WHERE id = {d.param('id')}"
    )


MESSAGE_PARTS = "message_parts"
"""Content lists that hold more than text (images, audio), by message; made when first needed
(a store that never keeps one has no such table), its rows go with their message."""


def create_message_parts(d: Dialect) -> str:
    return (
        f"CREATE TABLE IF NOT EXISTS {MESSAGE_PARTS} (message_id BIGINT PRIMARY KEY "
        "REFERENCES messages(id) ON DELETE CASCADE, parts TEXT NOT NULL)"
    )


def message_parts_exist(d: Dialect) -> str:
    if d.name == "postgresql":
        return f"SELECT to_regclass('{MESSAGE_PARTS}') IS NOT NULL"
    return f"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '{MESSAGE_PARTS}'"


def insert_message_parts(d: Dialect) -> str:
    values = f"{d.param('id')}, {d.param('parts')}"
    return f"INSERT INTO {MESSAGE_PARTS} (message_id, parts) VALUES ({values})"


def message_parts_of(d: Dialect) -> str:
    """``(message_id, parts)`` of the messages bound as ``ids`` that have parts."""
    return f"SELECT message_id, parts FROM {MESSAGE_PARTS} WHERE {d.member('message_id', 'ids')}"


def reset_message_count(d: Dialect) -> str:
    """The session ``id`` holds no message (its messages were deleted, others follow)."""
    return f"UPDATE sessions SET message_count = 0 WHERE id = {d.param('id')}"


def bump_message_count(d: Dialect) -> str:
    return (
        f"UPDATE sessions SET message_count = message_count + {d.param('n')} "
        f"WHERE id = {d.param('id')}"
    )


def ledger_keys(d: Dialect) -> str:
    """Which of the keys bound as ``keys`` the ledger holds for ``kind``."""
    return (
        "SELECT external_key FROM import_ledger WHERE source_kind = "
        f"{d.param('kind')} AND {d.member('external_key', 'keys')}"
    )


def ledger_has_rows(d: Dialect) -> str:
    """Whether ``import_ledger`` holds any row of ``kind`` (one probe of its primary key):
    when not, a batch's keys need not be looked up there one by one."""
    return f"SELECT 1 FROM import_ledger WHERE source_kind = {d.param('kind')} LIMIT 1"


def insert_ledger(d: Dialect) -> str:
    names = ("source_kind", "external_key", "session_id", "message_id", "imported_at")
    return (
        f"INSERT INTO import_ledger ({', '.join(names)}) "
        f"VALUES ({', '.join(d.param(n) for n in names)}) ON CONFLICT DO NOTHING"
    )


def imported_keys(d: Dialect) -> str:
    return (
        "SELECT external_key FROM import_ledger WHERE source_kind = "
        f"{d.param('kind')} AND session_id = {d.param('sid')}"
    )


def ledger_rows(d: Dialect) -> str:
    """The ledger's session of each of the keys bound as ``keys`` it holds for ``kind``
    (looked up by its primary key: a few keys of a long session cost a few rows)."""
    return (
        "SELECT external_key, session_id FROM import_ledger WHERE source_kind = "
        f"{d.param('kind')} AND {d.member('external_key', 'keys')}"
    )


RUN_COLUMNS = (
    "source_kind",
    "key_prefix",
    "first_number",
    "gaps",
    "key_count",
    "session_id",
    "message_id",
    "imported_at",
)
"""The columns of an ``import_runs`` row, in the order :func:`insert_run` binds them."""


def insert_run(d: Dialect) -> str:
    return (
        f"INSERT INTO import_runs ({', '.join(RUN_COLUMNS)}) "
        f"VALUES ({', '.join(d.param(n) for n in RUN_COLUMNS)}) ON CONFLICT DO NOTHING"
    )


def runs_of_prefixes(d: Dialect) -> str:
    """The runs (``key_prefix, first_number, gaps, session_id``) of ``kind`` under the
    prefixes bound as ``prefixes``."""
    return (
        "SELECT key_prefix, first_number, gaps, session_id FROM import_runs WHERE source_kind = "
        f"{d.param('kind')} AND {d.member('key_prefix', 'prefixes')}"
    )


def runs_of_session(d: Dialect) -> str:
    """The runs (``key_prefix, first_number, gaps``) of ``kind`` imported into ``sid``."""
    return (
        "SELECT key_prefix, first_number, gaps FROM import_runs WHERE source_kind = "
        f"{d.param('kind')} AND session_id = {d.param('sid')}"
    )


def get_summary(d: Dialect) -> str:
    return (
        "SELECT summary, status, model, reasons FROM summary_cache "
        f"WHERE cache_key = {d.param('key')}"
    )


def put_summary(d: Dialect) -> str:
    names = ("cache_key", "session_id", "summary", "model", "status", "reasons", "created_at")
    updates = ", ".join(f"{n} = excluded.{n}" for n in names[1:])
    return (
        f"INSERT INTO summary_cache ({', '.join(names)}) "
        f"VALUES ({', '.join(d.param(n) for n in names)}) "
        f"ON CONFLICT (cache_key) DO UPDATE SET {updates}"
    )


# --------------------------------------------------------------------------- forgetting


def matching_sessions(
    d: Dialect,
    *,
    named: bool,
    before: float | None,
    user_id: str | None,
    sources: Sequence[str],
) -> tuple[str, dict[str, Any]]:
    """Sessions meeting every given condition: among those bound as ``ids`` (with ``named``),
    started before ``before``, of ``user_id``, from one of ``sources``."""
    where: list[str] = ["1 = 1"]
    params: dict[str, Any] = {}
    if named:
        where.append(d.member("s.id", "ids"))
    if before is not None:
        where.append(f"s.started_at < {d.param('before')}")
        params["before"] = before
    if user_id is not None:
        where.append(f"{d.session_column('user_id')} = {d.param('user_id')}")
        params["user_id"] = user_id
    if sources:
        where.append(d.member("s.source", "sources"))
        params["sources"] = d.array(sources)
    return f"SELECT s.id FROM sessions s WHERE {' AND '.join(where)}", params


def chains_below(d: Dialect, selection: str, *, user_scoped: bool = False) -> str:
    """The sessions of ``selection`` (a query of session ids) and everything below them,
    oldest first; cycle-safe like :func:`descendants`. With ``user_scoped`` the walk goes
    through sessions of ``user_id`` only (another user's session and all below it are left
    out, as :func:`descendants` does)."""
    scope = f" AND {d.session_column('user_id')} = {d.param('user_id')}" if user_scoped else ""
    return f"""
        WITH RECURSIVE down(id) AS (
            {selection}
            UNION
            SELECT s.id FROM down JOIN sessions s ON s.parent_session_id = down.id{scope}
        )
        SELECT s.id FROM sessions s WHERE s.id IN (SELECT id FROM down)
        ORDER BY s.started_at, s.id
    """


def children_left(d: Dialect) -> str:
    """``(id, parent)`` of the sessions whose parent is among ``ids`` but not themselves."""
    return (
        f"SELECT id, parent_session_id FROM sessions WHERE {d.member('parent_session_id', 'ids')} "
        f"AND NOT {d.member('id', 'ids')}"
    )


def set_parent(d: Dialect) -> str:
    """Hang the session ``id`` below ``parent`` (NULL: make it a root)."""
    return f"UPDATE sessions SET parent_session_id = {d.param('parent')} WHERE id = {d.param('id')}"


def lock_sessions(d: Dialect) -> str:
    """Lock the sessions bound as ``ids`` until the transaction ends (a writer adding to one
    waits, then finds it gone); SQLite's write transaction locks the file already."""
    return f"SELECT id FROM sessions WHERE {d.member('id', 'ids')}{d.for_update}"


def forget_ledger(d: Dialect) -> tuple[str, str]:
    """The ledger rows and runs of forgotten sessions keep their keys (where a message came
    from, not what it said), so a re-import does not bring it back; they name no message any
    more."""
    return (
        f"UPDATE import_ledger SET message_id = NULL WHERE {d.member('session_id', 'ids')}",
        f"UPDATE import_runs SET message_id = NULL WHERE {d.member('session_id', 'ids')}",
    )


def delete_of_sessions(d: Dialect, table: Literal["summary_cache", "messages", "sessions"]) -> str:
    """Delete the rows of ``table`` that belong to the sessions bound as ``ids``."""
    column = "id" if table == "sessions" else "session_id"
    return f"DELETE FROM {table} WHERE {d.member(column, 'ids')}"


def release_forgotten(d: Dialect, table: Literal["import_ledger", "import_runs"]) -> str:
    """Drop the ledger rows (or runs) of a forgotten session (``kind``, ``sid``), so that an
    import asked to (``--reimport``) adds its messages again."""
    return (
        f"DELETE FROM {table} WHERE source_kind = {d.param('kind')} "
        f"AND session_id = {d.param('sid')} AND message_id IS NULL"
    )


def forgotten_run_keys(d: Dialect) -> str:
    """How many keys the runs :func:`release_forgotten` drops hold."""
    return (
        "SELECT coalesce(sum(key_count), 0) FROM import_runs WHERE source_kind = "
        f"{d.param('kind')} AND session_id = {d.param('sid')} AND message_id IS NULL"
    )


def ledger_without_messages(*, runs: bool) -> str:
    """How many ledger keys name a message the store lacks (for ``check()``; a forgotten
    message's key names none): the rows of ``import_ledger``, and with ``runs`` the keys of
    ``import_runs`` (a run's messages have consecutive ids: those missing from its range)."""
    rows = (
        "SELECT count(*) FROM import_ledger l WHERE l.message_id IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = l.message_id)"
    )
    if not runs:
        return rows
    in_runs = (
        "SELECT coalesce(sum(r.key_count - (SELECT count(*) FROM messages m WHERE m.id "
        "BETWEEN r.message_id AND r.message_id + r.key_count - 1)), 0) "
        "FROM import_runs r WHERE r.message_id IS NOT NULL"
    )
    return f"SELECT ({rows}) + ({in_runs})"


# --------------------------------------------------------------------------- statistics


@dataclass(frozen=True, slots=True)
class StatsQueries:
    """The counts of ``stats()``: sessions (count, first and last start), messages, sessions
    per source, chain roots."""

    sessions: str
    messages: str
    sources: str
    roots: str


def stats_queries(d: Dialect, *, scoped: bool) -> StatsQueries:
    """:class:`StatsQueries` of the whole store, or with ``scoped`` of one user's sessions
    (bound as ``user_id``) and their messages."""
    scope = f" AND {d.session_column('user_id')} = {d.param('user_id')}" if scoped else ""
    where = f"WHERE 1 = 1{scope}"
    return StatsQueries(
        sessions=f"SELECT count(*), min(s.started_at), max(s.started_at) FROM sessions s {where}",
        messages=(
            f"SELECT count(*) FROM messages m JOIN sessions s ON s.id = m.session_id {where}"
            if scoped
            else "SELECT count(*) FROM messages"
        ),
        sources=f"SELECT s.source, count(*) FROM sessions s {where} GROUP BY s.source "
        "ORDER BY 2 DESC, 1",
        roots="SELECT count(*) FROM sessions s LEFT JOIN sessions p "
        f"ON p.id = s.parent_session_id WHERE {_ROOT}{scope}",
    )


WRONG_MESSAGE_COUNTS = (
    "SELECT s.id FROM sessions s WHERE s.message_count <> "
    "(SELECT count(*) FROM messages m WHERE m.session_id = s.id) ORDER BY s.id LIMIT 20"
)
"""Sessions whose ``message_count`` disagrees with their messages (for ``check()``)."""


# ---------------------------------------------------------------- session_recall_meta


def get_meta(d: Dialect) -> str:
    """The value recorded under ``key`` in ``session_recall_meta``."""
    return f"SELECT value FROM session_recall_meta WHERE key = {d.param('key')}"


def meta_with_prefix(d: Dialect) -> str:
    """Every key (and its value) in ``session_recall_meta`` that starts with ``prefix``
    (compared as text, so ``%`` or ``_`` in it match only themselves)."""
    return (
        "SELECT key, value FROM session_recall_meta "
        f"WHERE substr(key, 1, {d.param('length')}) = {d.param('prefix')}"
    )


def delete_meta(d: Dialect) -> str:
    return f"DELETE FROM session_recall_meta WHERE key = {d.param('key')}"


def insert_meta(d: Dialect) -> str:
    values = f"{d.param('key')}, {d.param('value')}"
    return f"INSERT INTO session_recall_meta (key, value) VALUES ({values})"


def read_meta(conn: Any, d: Dialect, key: str) -> str | None:
    """The value recorded under ``key``, or ``None``."""
    row = conn.execute(get_meta(d), {"key": key}).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: Any, d: Dialect, key: str, value: str) -> None:
    """Record ``value`` under ``key`` (replacing what was there)."""
    conn.execute(delete_meta(d), {"key": key})
    conn.execute(insert_meta(d), {"key": key, "value": value})
