"""Sessions and messages written: checked first, one transaction each."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_session_recall.backends import sql
from langchain_session_recall.backends.common.core import StoreCore
from langchain_session_recall.backends.common.rows import session_of
from langchain_session_recall.backends.common.validation import (
    DEFAULT_SOURCE,
    session_updates,
    validate_session_args,
)
from langchain_session_recall.core.headers import session_header
from langchain_session_recall.core.where import stored_project
from langchain_session_recall.errors import (
    LineageCycleError,
    SessionNotFoundError,
)
from langchain_session_recall.messages import (
    MessageLike,
    MessageRow,
    to_row,
)
from langchain_session_recall.models import (
    Session,
)


def _where_columns(
    d: sql.Dialect, project: str | None, git_branch: str | None, agent: str | None
) -> dict[str, str | None]:
    """The columns of where a session happened, as stored: the directory without its trailing
    separator, the branch stripped, the agent's name stripped and lower case."""
    return {
        "cwd": d.text(stored_project(project)),
        "git_branch": d.text(git_branch.strip() or None if git_branch else None),
        "agent": d.text(agent.strip().lower() or None if agent else None),
    }


def _new_session_row(
    d: sql.Dialect,
    session_id: str,
    source: str | None,
    model: str | None,
    title: str | None,
    user_id: str | None,
    started_at: float | None,
) -> dict[str, Any]:
    """Columns of a new session's row as stored: the default source, the start time now."""
    return {
        "id": session_id,
        "source": d.text(DEFAULT_SOURCE if source is None else source),
        "user_id": d.text(user_id),
        "model": d.text(model),
        "title": d.text(title),
        "started_at": time.time() if started_at is None else float(started_at),
    }


class SessionWrites(StoreCore):
    """Sessions and messages written: checked first, one transaction each."""

    def add_session(
        self,
        session_id: str,
        *,
        source: str | None = None,
        parent_session_id: str | None = None,
        model: str | None = None,
        title: str | None = None,
        user_id: str | None = None,
        started_at: float | None = None,
        end_reason: str | None = None,
        project: str | None = None,
        git_branch: str | None = None,
        agent: str | None = None,
    ) -> Session:
        """Create a session, or update the given fields of an existing one.

        A new session without a ``source`` gets :data:`DEFAULT_SOURCE` (``"cli"``); on an
        existing session a field left ``None`` keeps its value, and any value given, ``"cli"``
        included, replaces it. ``project`` is the working directory the session ran in (kept
        without its trailing separator), ``git_branch`` the branch checked out there, ``agent``
        the program that wrote it (``"codex"``, ``"claude-code"``, ...; see
        :data:`~langchain_session_recall.core.where.RESUME_COMMANDS`).

        Raises:
            ValueError: ``session_id`` or ``source`` is empty, or ``started_at`` is not a
                finite number (:class:`~langchain_session_recall.errors.InvalidSessionError`).
            SessionNotFoundError: ``parent_session_id`` does not exist.
            LineageCycleError: the parent would make the session its own ancestor.
        """
        validate_session_args(
            session_id,
            DEFAULT_SOURCE if source is None else source,
            started_at,
            user_id=user_id,
            parent_session_id=parent_session_id,
            project=project,
            agent=agent,
        )
        d = self.dialect
        where = _where_columns(d, project, git_branch, agent)
        fields: dict[str, Any] = {
            **_new_session_row(d, session_id, source, model, title, user_id, started_at),
            "parent_session_id": parent_session_id,
            "end_reason": d.text(end_reason),
            **where,
        }
        if parent_session_id != session_id:  # (that one raises below)
            header = session_header(fields["title"], fields["started_at"])
            created = self._create_session(fields, header)
            if created is not None:
                return created
        with self._write() as conn:
            exists = conn.execute(sql.session_exists(d), {"id": session_id}).fetchone()
            if parent_session_id is not None:
                self._check_parent(conn, session_id, parent_session_id)
            if not exists:
                inserted = conn.execute(sql.insert_session(d), fields)
                exists = inserted.rowcount == 0  # created meanwhile by another writer
            if exists:
                updates = session_updates(
                    source=d.text(source),
                    parent_session_id=parent_session_id,
                    model=d.text(model),
                    title=d.text(title),
                    user_id=d.text(user_id),
                    started_at=started_at,
                    end_reason=d.text(end_reason),
                    **where,
                )
                if updates:
                    conn.execute(
                        sql.update_session(d, list(updates)), {**updates, "id": session_id}
                    )
            session = session_of(conn.execute(sql.session_by_id(d), {"id": session_id}).fetchone())
            self._put_header(conn, session_id, session_header(session.title, session.started_at))
        return session

    def _check_parent(self, conn: Any, session_id: str, parent: str) -> None:
        if parent == session_id:
            raise LineageCycleError(f"session {session_id!r} cannot be its own parent")
        d = self.dialect
        if not conn.execute(sql.session_exists(d), {"id": parent}).fetchone():
            raise SessionNotFoundError(
                f"parent session {parent!r} does not exist; add it before its children"
            )
        rows = conn.execute(
            sql.ancestors(d, user_scoped=False), {"ids": d.array([parent])}
        ).fetchall()
        if session_id in {r[0] for r in rows}:
            raise LineageCycleError(
                f"making {parent!r} the parent of {session_id!r} would create a cycle: "
                f"{session_id!r} is already an ancestor of {parent!r}"
            )

    def add_messages(self, session_id: str, messages: Iterable[MessageLike]) -> list[int]:
        """Append messages to a session in one transaction; returns their ids.

        Every message is validated before anything is written: an invalid one raises
        :class:`~langchain_session_recall.errors.InvalidMessageError` and nothing of the batch
        is stored.

        Raises:
            SessionNotFoundError: the session does not exist (call :meth:`add_session`).
        """
        now = time.time()
        rows = [to_row(m, now=now) for m in messages]
        self._before_batch()
        ids = self._append_alone(session_id, rows) if rows else None
        if ids is None:
            with self._write() as conn:
                ids = self._append(conn, session_id, rows)
        self._wrote([session_id], in_block=self._in_block())
        return ids

    def replace_messages(self, session_id: str, messages: Iterable[MessageLike]) -> list[int]:
        """Replace the messages of one session by ``messages``, in one transaction; returns
        the new messages' ids.

        Every message is validated before anything is deleted: an invalid one raises
        :class:`~langchain_session_recall.errors.InvalidMessageError` and the session keeps its
        messages. Only this session's messages change: its sub-sessions and continuations stay.
        The old messages leave the full-text indexes and their passage vectors go; the recaps
        cached for the chains above the session (made with them) are dropped.

        Raises:
            SessionNotFoundError: the session does not exist (call :meth:`add_session`).

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("a"), store.add_session("a/sub", parent_session_id="a")
            >>> _ = store.add_messages("a", [{"role": "user", "content": "old"}])
            >>> _ = store.replace_messages("a", [{"role": "user", "content": "new"}])
            >>> [m.content for m in store.get_messages("a")], store.get_session("a/sub").id
            (['new'], 'a/sub')
        """
        now = time.time()
        rows = [to_row(m, now=now) for m in messages]
        d = self.dialect
        self._before_delete()
        with self._write() as conn:
            if not conn.execute(sql.session_exists(d), {"id": session_id}).fetchone():
                raise SessionNotFoundError(
                    f"session {session_id!r} does not exist; call add_session() first"
                )
            ids = {"ids": d.array([session_id])}
            chains = conn.execute(sql.ancestors(d, user_scoped=False), ids).fetchall()
            conn.execute(
                sql.delete_of_sessions(d, "summary_cache"), {"ids": d.array([r[0] for r in chains])}
            )
            for statement in sql.forget_ledger(d):
                conn.execute(statement, ids)
            self._clearing_messages(conn, session_id)
            conn.execute(sql.delete_of_sessions(d, "messages"), ids)
            conn.execute(sql.reset_message_count(d), {"id": session_id})
            new_ids = self._append(conn, session_id, rows)
        self._wrote([session_id], in_block=self._in_block())
        return new_ids

    def _append(self, conn: Any, session_id: str, rows: Sequence[MessageRow]) -> list[int]:
        d = self.dialect
        if rows:
            found = self._append_rows(conn, session_id, rows)
        else:
            exists = conn.execute(sql.session_exists(d), {"id": session_id}).fetchone()
            found = [] if exists else None
        if found is None:
            raise SessionNotFoundError(
                f"session {session_id!r} does not exist; call add_session() first"
            )
        ids = found
        parts = [{"id": i, "parts": r.parts} for i, r in zip(ids, rows, strict=True) if r.parts]
        if parts:
            conn.execute(sql.create_message_parts(d))
            conn.cursor().executemany(sql.insert_message_parts(d), parts)
        return ids

    def end_session(
        self, session_id: str, *, end_reason: str | None = None, ended_at: float | None = None
    ) -> None:
        """Mark a session ended (``ended_at`` defaults to now).

        Raises:
            SessionNotFoundError: no such session.
        """
        with self._write() as conn:
            cur = conn.execute(
                sql.end_session(self.dialect),
                {
                    "ended_at": time.time() if ended_at is None else float(ended_at),
                    "end_reason": self.dialect.text(end_reason),
                    "id": session_id,
                },
            )
            if cur.rowcount == 0:
                raise SessionNotFoundError(f"session {session_id!r} does not exist")
