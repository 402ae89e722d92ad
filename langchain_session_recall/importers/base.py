"""The import driver: opening the target store, writing parsed sessions into it in batches.

An importer turns an outside source into :class:`ImportSession` records (pure parsing), then
:func:`write_sessions` puts them into a store (either backend): parents before children, one
transaction per session batch (its new messages and their ledger rows together), messages
already in the ledger skipped. Re-running an import therefore adds only what is new.

What every importer shares lives beside it, one job a module, and is re-exported here:
:mod:`~langchain_session_recall.importers.records` (:class:`ImportSession`, parent order, the
fields an import writes), :mod:`~langchain_session_recall.importers.report` (:class:`ImportReport`,
progress), :mod:`~langchain_session_recall.importers.sources` (finding and opening source files)
and :mod:`~langchain_session_recall.importers.lines` (line-level reading and validation).
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.backends.retry import WriteRetry
from langchain_session_recall.errors import (
    ImportSourceError,
    SessionRecallError,
    StoreBusyError,
)
from langchain_session_recall.importers.lines import (
    MAX_LINE_BYTES,
    BadEntry,
    bounded_lines,
    identifier,
    json_objects,
)
from langchain_session_recall.importers.records import (
    UNDATED,
    ImportSession,
    fields_to_write,
    order_parents_first,
)
from langchain_session_recall.importers.report import ImportReport, progress
from langchain_session_recall.importers.sources import (
    check_regular_file,
    open_regular_file,
    open_sources,
    source_files,
)
from langchain_session_recall.models import StoredMessage

__all__ = [
    "MAX_LINE_BYTES",
    "UNDATED",
    "BadEntry",
    "ImportReport",
    "ImportSession",
    "ImportSourceError",
    "bounded_lines",
    "check_regular_file",
    "fields_to_write",
    "identifier",
    "import_target",
    "json_objects",
    "open_regular_file",
    "open_sources",
    "order_parents_first",
    "progress",
    "report_orphans",
    "source_files",
    "stored_history",
    "write_sessions",
]

logger = logging.getLogger(__name__)

SESSIONS_PER_TRANSACTION = 100
"""Most sessions an import writes per transaction."""
MESSAGES_PER_TRANSACTION = 4_000
"""A transaction ends after the session that brings it to this many messages: on SQLite it
holds the one write lock, so other writers (a recorder, another import) get a turn at least
every few hundred milliseconds (a Codex import holds it about 90 ms a transaction on the
2-core machine of docs/benchmarks-codex-import.md; 2,000 messages, the earlier bound, were
about as long at the import rate of the time, and ended three times as many transactions as
the store's bulk path, each a commit and a pass of the full-text index)."""
_RETRY = WriteRetry()


@contextmanager
def import_target(target: str | os.PathLike[str]) -> Iterator[SessionBackend]:
    """Open the store an import writes to (a file path, ``":memory:"`` or a DSN), as the CLI
    does: a SQLite file that this call creates is removed again when the import wrote no
    session into it, or failed, so a failed import leaves nothing behind.

    Example:
        >>> import tempfile, pathlib
        >>> db = pathlib.Path(tempfile.mkdtemp()) / "new.db"
        >>> with import_target(db) as store:
        ...     pass  # nothing imported
        >>> db.exists()
        False
    """
    from langchain_session_recall.backends import is_postgres_dsn, open_store

    path = None
    if not is_postgres_dsn(target) and str(target) != ":memory:":
        candidate = Path(target).expanduser()
        path = None if os.path.lexists(candidate) else candidate
    store = open_store(target)
    wrote = False
    try:
        yield store
        wrote = path is None or store.stats()["sessions"] > 0
    finally:
        store.close()
        if path is not None and not wrote:
            for leftover in (path, *(Path(f"{path}{x}") for x in ("-wal", "-shm", "-journal"))):
                leftover.unlink(missing_ok=True)


def write_sessions(
    store: SessionBackend,
    sessions: Iterable[ImportSession],
    report: ImportReport,
    *,
    show_progress: bool | None = None,
    reimport: bool = False,
    retry: WriteRetry | None = None,
) -> ImportReport:
    """Write parsed sessions into ``store``, parents first, each batch in one transaction.

    A session whose parent is missing everywhere is written as a root and listed in
    ``report.orphans``. Messages already in the ledger are counted as ``already_imported``.
    A session imported before and forgotten since (its ledger rows remain, the session does
    not), and any session below it, is left out and listed in ``report.forgotten``, unless
    ``reimport``: then it is imported again. A session whose ``agent`` the parser left
    ``None`` gets the report's ``kind`` (``"codex"``, ``"claude-code"``, ...: the agent whose
    files the importer reads).

    ``sessions`` may also be any other iterable (a generator): it is then read as it is
    written, a group at a time, so memory holds one group of sessions whatever the source's
    size; a parent must come before its children (a child whose parent neither came before it
    nor is in the store is written as a root, an orphan).

    Writers take turns: a group that finds the store busy (another process holding SQLite's
    write lock past the store's ``busy_timeout``, a PostgreSQL deadlock) is rolled back and
    tried again as ``retry`` says (default :class:`~langchain_session_recall.backends.retry.
    WriteRetry`: 3 attempts). After the last, :class:`~langchain_session_recall.errors.
    StoreBusyError` is raised: the groups written before stay, and running the import again
    adds the rest.

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> s = ImportSession("chat-1", "import", [("f:1", {"role": "user", "content": "hi"})])
        >>> write_sessions(store, [s], ImportReport("custom")).summary()
        'custom: 1 session (1 new), 1 message imported'
    """

    def known(sid: str) -> bool:
        return store.get_session(sid) is not None

    total: int | None = None
    if isinstance(sessions, Sequence):
        ordered, orphans = order_parents_first(sessions, known)
        report_orphans(report, orphans)
        sessions, total = ordered, len(ordered)
    else:
        sessions = _parents_before(sessions, known, report)
    items = iter(
        progress(sessions, total=total, desc=f"{report.kind} import", enabled=show_progress)
    )
    # A transaction per group of sessions: one commit and one index pass per group (see
    # SessionBackend.transaction); a crash loses at most the group, which a re-run adds again.
    forgotten: set[str] = set()
    for group in _groups(items):
        _write_group(store, group, report, forgotten, reimport=reimport, retry=retry or _RETRY)
    return report


def stored_history(store: SessionBackend) -> Callable[[str], list[StoredMessage]]:
    """What a session imported before holds as its history: the messages of its lineage, root
    first. A continuation or fork copies all of it (its parent's own messages were stored
    without the copy they started with), so a child is compared with this, not with its
    parent's stored messages alone."""

    def history(session_id: str) -> list[StoredMessage]:
        lineage = reversed(store.lineage(session_id))
        return [m for sid in lineage for m in store.get_messages(sid)]

    return history


def report_orphans(report: ImportReport, orphans: Iterable[str]) -> None:
    """Report sessions written as roots because their parent is missing (see
    :func:`~langchain_session_recall.importers.records.order_parents_first`)."""
    for sid in orphans:
        report.orphans.append(sid)
        report.problems.append(f"session {sid}: parent missing, imported as a root")


def _parents_before(
    sessions: Iterable[ImportSession], known: Callable[[str], bool], report: ImportReport
) -> Iterator[ImportSession]:
    """A stream of sessions, each whose parent neither came before it nor is in the store
    detached (written as a root, reported as an orphan)."""
    seen: set[str] = set()
    for session in sessions:
        parent = session.parent_session_id
        if (
            parent is not None
            and parent not in seen
            and (parent == session.id or not known(parent))
        ):
            session.parent_session_id = None
            report_orphans(report, [session.id])
        seen.add(session.id)
        yield session


def _groups(sessions: Iterable[ImportSession]) -> Iterator[list[ImportSession]]:
    """Sessions in groups of at most :data:`SESSIONS_PER_TRANSACTION`, each ending once it
    holds :data:`MESSAGES_PER_TRANSACTION` messages (pure).

    Example:
        >>> s = [ImportSession(str(n), "x", [("k", {})] * 3000) for n in range(3)]
        >>> [len(g) for g in _groups(s)]
        [2, 1]
    """
    group: list[ImportSession] = []
    size = 0
    for session in sessions:
        group.append(session)
        size += len(session.messages)
        if len(group) >= SESSIONS_PER_TRANSACTION or size >= MESSAGES_PER_TRANSACTION:
            yield group
            group, size = [], 0
    if group:
        yield group


def _write_group(
    store: SessionBackend,
    group: Sequence[ImportSession],
    report: ImportReport,
    forgotten: set[str],
    *,
    reimport: bool,
    retry: WriteRetry,
) -> None:
    """One group in one transaction, tried again while the store is busy (a failed attempt
    rolled back whole: the ledger, the report and ``forgotten`` are as they were before it)."""

    def attempt() -> tuple[ImportReport, set[str]]:
        draft, left_out = copy.deepcopy(report), set(forgotten)
        with store.transaction():
            for session in group:
                if session.parent_session_id in left_out:
                    left_out.add(session.id)  # below a forgotten session: forgotten with it
                    draft.forgotten.append(session.id)
                elif not _write_one(store, session, draft, reimport=reimport):
                    left_out.add(session.id)
        return draft, left_out

    done, left_out = retry.call(attempt, what=f"{report.kind} import into {store.describe()}")
    vars(report).update(vars(done))
    forgotten.update(left_out)


def _write_one(
    store: SessionBackend, session: ImportSession, report: ImportReport, *, reimport: bool
) -> bool:
    """One session's row, new messages (with ledger rows) and end time; ``False`` when the
    session was forgotten and is left out."""
    existing = store.get_session(session.id)
    # A session held already: only the keys in hand are looked up (a few new lines of a
    # long session do not read all of its keys); one that is not: whether it was forgotten.
    among = None if existing is None else [k for k, _ in session.messages]
    known = store.imported_keys(report.kind, session.id, among) if among != [] else set()
    if existing is None and known:  # imported before, gone since: forgotten on purpose
        if not reimport:
            report.forgotten.append(session.id)
            return False
        store.release_forgotten(report.kind, session.id)
        known = store.imported_keys(report.kind, session.id)
    session.agent = session.agent or report.kind  # what wrote it, unless the parser knows
    fields = fields_to_write(session, existing)
    try:
        if existing is None or fields:  # (``source`` is never among an existing one's fields)
            store.add_session(session.id, **fields)
    except StoreBusyError:
        raise  # not the session's fault: the group is tried again
    except SessionRecallError as exc:  # e.g. a parent link that would make a cycle
        report.skip("session rejected by the store", f"session {session.id}: {exc}")
        return True
    fresh = [(k, m) for k, m in session.messages if k not in known]
    report.already_imported += len(session.messages) - len(fresh)
    if fresh:
        try:
            ids = store.import_messages(session.id, fresh, source_kind=report.kind)
        except StoreBusyError:
            raise
        except SessionRecallError as exc:
            # One bad message would sink the batch: retry one by one, keep the good ones.
            ids = []
            for key, message in fresh:
                try:
                    ids += store.import_messages(
                        session.id, [(key, message)], source_kind=report.kind
                    )
                except SessionRecallError as one:
                    report.skip("invalid message", f"session {session.id} [{key}]: {one}")
            logger.debug("batch of session %s retried one by one: %s", session.id, exc)
        report.messages += len(ids)
        if ids:
            report.undated.update(
                m[UNDATED] for _, m in fresh if isinstance(m, Mapping) and m.get(UNDATED)
            )
    if session.ended_at is not None and (existing is None or existing.ended_at is None):
        store.end_session(session.id, ended_at=session.ended_at, end_reason=session.end_reason)
    report.sessions += 1
    report.new_sessions += 0 if existing is not None else 1
    return True
