"""Writers wait their turn, and no write is lost (issue 21, item 4).

Another client holds what a writer needs: SQLite's write lock (``BEGIN IMMEDIATE``), or on
PostgreSQL a ``SHARE`` lock on ``sessions`` and ``messages`` (nothing can be added to them)
with the store's connections given a ``lock_timeout``, so that a write fails there as a SQLite
write fails when its busy timeout runs out.

* A SQLite writer waits longer than the old 5 s for the lock and then writes; a wait that runs
  out raises :class:`StoreBusyError`, never a raw ``database is locked``, and writes nothing.
* An import whose group finds the store busy tries it again and completes, with exactly the
  report and the rows of an import that met no lock; one that never gets the lock makes the CLI
  exit 75 with one line, and nothing of the group is stored.
* The recorder keeps what it could not write: an ERROR names the session and the count, the
  run goes on, and the kept messages are written, in order, by ``flush()`` or with the next
  message (both backends).

The mix of importers, recorders and searchers in separate processes is ``test_write_mix.py``.
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from cli_support import run_cli
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from reliability.reliability_support import count
from store_targets import StoreFactory, StoreTarget

from langchain_session_recall import SessionRecorder, SessionStore, StoreBusyError
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.backends.retry import DEFAULT_BUSY_TIMEOUT, WriteRetry
from langchain_session_recall.cli import EXIT_BUSY
from langchain_session_recall.importers import import_jsonl

DATA = Path(__file__).resolve().parents[1] / "data"
LOCK_WAIT = 0.2  # seconds a test store waits for a lock (the default is 30)


class HeldLock:
    """Another client holding what writers need, until :meth:`release` (idempotent)."""

    def __init__(self, target: StoreTarget) -> None:
        self.backend = target.backend
        self._conn: Any
        if self.backend == "sqlite":
            self._conn = sqlite3.connect(target.db, isolation_level=None, check_same_thread=False)
            self._conn.execute("BEGIN IMMEDIATE")
        else:
            import psycopg

            self._conn = psycopg.connect(target.db)  # a transaction opens with the first statement
            self._conn.execute(
                "LOCK TABLE session_recall.sessions, session_recall.messages IN SHARE MODE"
            )
        self.held = True
        self._guard = threading.Lock()

    def release(self) -> None:
        with self._guard:
            if not self.held:
                return
            if self.backend == "postgres":
                self._conn.rollback()
            else:
                self._conn.execute("ROLLBACK")
            self._conn.close()
            self.held = False


def busy_store(target: StoreTarget) -> SessionBackend:
    """The store, its writes giving up after :data:`LOCK_WAIT` seconds of waiting for a lock."""
    if target.backend == "sqlite":
        return SessionStore(target.db, busy_timeout=LOCK_WAIT)
    from langchain_session_recall.backends.postgres.store import PostgresSessionStore

    option = quote(f"-c lock_timeout={int(LOCK_WAIT * 1000)}")
    joiner = "&" if "?" in target.db else "?"
    return PostgresSessionStore(f"{target.db}{joiner}options={option}", max_size=4)


@contextmanager
def release_on_retry(lock: HeldLock) -> Iterator[list[str]]:
    """Release ``lock`` when a write logs that it will try again; the retry log lines."""
    seen: list[str] = []

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())
            lock.release()

    logger = logging.getLogger("langchain_session_recall.backends.retry")
    handler, level = Handler(logging.INFO), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.mark.slow  # waits 6 s for another writer's lock, by design
def test_a_writer_waits_its_turn_longer_than_five_seconds(tmp_path: Path) -> None:
    """An import holds the lock for seconds: the default wait (30 s) outlasts 5 s."""
    path = tmp_path / "recall.db"
    SessionStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO sessions (id, source, started_at) VALUES ('first', 'cli', 1.0)")
    timer = threading.Timer(6.0, lambda: holder.execute("COMMIT"))
    timer.start()
    try:
        with SessionStore(path) as store:
            assert store.busy_timeout == DEFAULT_BUSY_TIMEOUT >= 30
            store.add_session("second")  # waits for the holder's commit, then writes
            assert store.get_session("first") is not None
    finally:
        timer.join()
        holder.close()


def test_a_lock_wait_that_runs_out_raises_store_busy_error(tmp_path: Path) -> None:
    target = StoreFactory("sqlite", tmp_path).target("busy")
    SessionStore(target.db).close()
    lock = HeldLock(target)
    store = busy_store(target)
    try:
        store_writes = [
            lambda: store.add_session("s1"),
            lambda: store.add_messages("s1", [{"role": "user", "content": "hi"}]),
            lambda: store.put_cached_summary("k", session_id="s1", summary="x", model=None),
        ]
        for write in store_writes:
            with pytest.raises(StoreBusyError, match="busy_timeout") as caught:
                write()
            assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
        with pytest.raises(StoreBusyError), store.transaction():
            pass
        lock.release()
        assert target.count("sessions") == 0  # nothing of the failed writes
        store.add_session("s1")  # the lock is free again: writes go through
        assert target.count("sessions") == 1
    finally:
        lock.release()
        store.close()


def _import_report(target: StoreTarget) -> dict[str, Any]:
    with target.open() as store:
        return import_jsonl(store, DATA / "jsonl").to_dict()


def test_an_import_tries_a_busy_group_again(store_factory: StoreFactory) -> None:
    reference = _import_report(store_factory.target("reference"))  # met no lock
    target = store_factory.target("contended")
    target.open().close()
    lock = HeldLock(target)
    store = busy_store(target)
    try:
        with release_on_retry(lock) as retries:
            report = import_jsonl(store, DATA / "jsonl").to_dict()
        assert retries and "attempt 2 of 3" in retries[0], retries
        assert report == reference  # counted once, not once per attempt
    finally:
        lock.release()
        store.close()
    for table in ("sessions", "messages", "import_ledger", "import_runs"):
        assert target.count(table) == store_factory.target("reference").count(table), table
    target.assert_intact()
    count("busy.imports_retried", 1, backend=store_factory.backend)


def test_an_import_that_never_gets_the_lock_exits_75_having_written_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langchain_session_recall.backends as backends
    import langchain_session_recall.importers.base as importers

    target = StoreFactory("sqlite", tmp_path).target("busy")
    SessionStore(target.db).close()
    monkeypatch.setattr(backends, "open_store", lambda db, **_: busy_store(target))
    monkeypatch.setattr(importers, "_RETRY", WriteRetry(attempts=2, first_wait=0))
    lock = HeldLock(target)
    try:
        result = run_cli("import", "jsonl", str(DATA / "jsonl"), "--db", target.db)
    finally:
        lock.release()
    assert result.code == EXIT_BUSY, result.err
    assert "is busy" in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert target.count("sessions") == target.count("messages") == 0


def _turn(recorder: SessionRecorder, question: str, answer: str) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage(answer)]))
    reply = model.invoke(question, config={"callbacks": [recorder]})
    assert reply.content == answer  # the run is never broken by the store


def test_the_recorder_keeps_what_it_could_not_write(
    store_factory: StoreFactory, caplog: pytest.LogCaptureFixture
) -> None:
    target = store_factory.target("recorded")
    target.open().close()
    store = busy_store(target)
    recorder = SessionRecorder(
        store, session_id="chat", write_retry=WriteRetry(attempts=2, first_wait=0)
    )
    try:
        _turn(recorder, "q1 nginx?", "a1 reload it")
        lock = HeldLock(target)
        try:
            with caplog.at_level(logging.ERROR, logger="langchain_session_recall.recorder"):
                _turn(recorder, "q2 which port?", "a2 port 8080")
            assert recorder.pending == 2
            assert "could not write 1 message(s) of session 'chat'" in caplog.text
            assert "could not write 2 message(s) of session 'chat'" in caplog.text
            assert recorder.errors == 2
        finally:
            lock.release()
        released = time.time()
        assert recorder.flush() == 0
        _turn(recorder, "q3 and TLS?", "a3 use certbot")
        stored = store.get_messages("chat")
        assert [m.content for m in stored] == [
            "q1 nginx?",
            "a1 reload it",
            "q2 which port?",
            "a2 port 8080",
            "q3 and TLS?",
            "a3 use certbot",
        ]
        assert all(m.timestamp < released for m in stored[2:4])  # kept with their own time
        assert recorder.pending == 0
    finally:
        store.close()
    count("busy.recorder_messages_kept", 2, backend=store_factory.backend)


def test_kept_messages_go_out_before_the_next_one(store_factory: StoreFactory) -> None:
    target = store_factory.target("recorded")
    target.open().close()
    store = busy_store(target)
    recorder = SessionRecorder(store, session_id="chat", write_retry=WriteRetry(attempts=1))
    try:
        lock = HeldLock(target)
        try:
            _turn(recorder, "q1 first", "a1 first")  # the session cannot even be created
        finally:
            lock.release()
        assert recorder.pending == 2
        _turn(recorder, "q2 second", "a2 second")  # no flush(): the next write takes them
        assert [m.content for m in store.get_messages("chat")] == [
            "q1 first",
            "a1 first",
            "q2 second",
            "a2 second",
        ]
        assert recorder.pending == 0
    finally:
        store.close()


def test_a_bulk_load_leaves_the_lock_free_between_its_transactions(tmp_path: Path) -> None:
    """SQLite does not queue writers: a writer of another process that waits while a bulk load
    commits block after block gets in between them (``hand_over``: the store leaves the lock
    free for a tenth of the time it held it, at most 0.15 s, longer than the 100 ms between a
    waiting writer's tries), not after the whole load."""
    path = tmp_path / "recall.db"
    store = SessionStore(path)
    holding = threading.Event()
    order: list[str] = []

    def other_process() -> None:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        holding.wait()
        conn.execute("BEGIN IMMEDIATE")  # waits for the bulk load's first block
        conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('other', 'cli', 1)")
        conn.execute("COMMIT")
        conn.close()

    waiter = threading.Thread(target=other_process)
    waiter.start()
    try:
        for block in ("first", "second"):
            with store.transaction():
                store.add_session(block)
                if block == "first":
                    holding.set()
                    time.sleep(1.6)  # a long block: the hand-over after it is the full 0.15 s
        waiter.join()
        with sqlite3.connect(path) as conn:
            order = [r[0] for r in conn.execute("SELECT id FROM sessions ORDER BY rowid")]
    finally:
        store.close()
    assert order == ["first", "other", "second"]


def _sqlite_error(message: str, code: int) -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError(message)
    exc.sqlite_errorcode = code  # as sqlite3 sets it (Python 3.11+)
    return exc


def test_a_write_that_met_another_connections_schema_change_is_tried_again() -> None:
    """SQLITE_SCHEMA (another connection changed the schema, e.g. a writable open migrating an
    older store; an FTS5 table reports "vtable constructor failed") heals when the statement
    runs again: a write meeting it is retried, like a busy one. Other errors are not."""
    calls: list[int] = []

    def write() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise _sqlite_error("vtable constructor failed: messages_cjk_fts", 17)
        return "written"

    assert WriteRetry(attempts=2, first_wait=0).call(write) == "written"
    assert len(calls) == 2
    calls.clear()

    def broken() -> str:
        calls.append(1)
        raise _sqlite_error("no such table: messages", 1)

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        WriteRetry(attempts=3, first_wait=0).call(broken)
    assert len(calls) == 1


def test_retries_wait_as_they_did_and_a_write_that_succeeds_at_once_needs_no_tenacity(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The first attempt runs without tenacity (importing it costs ~50 ms a process: an
    import's first group, a recorder's first write); the attempts after a busy one wait as
    before: ``first_wait``, then doubling, each plus up to ``first_wait`` of jitter."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from langchain_session_recall.backends.retry import WriteRetry\n"
        "assert WriteRetry().call(lambda: 'written') == 'written'\n"
        "print('tenacity' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr
    calls: list[float] = []

    def write() -> str:
        calls.append(time.monotonic())
        if len(calls) < 4:
            raise StoreBusyError("locked")
        return "written"

    with caplog.at_level(logging.INFO, logger="langchain_session_recall.backends.retry"):
        assert WriteRetry(attempts=4, first_wait=0.05, max_wait=0.15).call(write) == "written"
    said = [r.getMessage() for r in caplog.records]
    assert [m.split("; ")[1].split(" in ")[0] for m in said] == [
        f"attempt {n} of 4" for n in (2, 3, 4)
    ]
    waits = [float(m.rsplit(" in ", 1)[1].removesuffix(" s")) for m in said]
    # 0.05, 0.10, then 0.15 (max_wait), each plus up to 0.05 (shown to one decimal)
    for wait, least in zip(waits, (0.05, 0.10, 0.15), strict=True):
        assert least - 0.05 <= wait <= least + 0.1, waits
    gaps = [b - a for a, b in itertools.pairwise(calls)]
    for gap, least in zip(gaps, (0.05, 0.10, 0.15), strict=True):
        assert least <= gap, gaps


def test_a_read_whose_schema_keeps_changing_is_a_busy_store_not_a_bug() -> None:
    """A read meeting SQLITE_SCHEMA runs again (another connection's schema change heals on the
    next prepare); one that meets it on every try raises StoreBusyError (CLI exit 75, "try
    again"), not the "rejected by SQLite" error of a query we built wrong."""
    from langchain_session_recall.backends.sqlite.store import (
        _SCHEMA_TRIES,
        _again_on_schema_change,
    )

    calls: list[int] = []

    def heals() -> str:
        calls.append(1)
        if len(calls) < _SCHEMA_TRIES:
            raise _sqlite_error("vtable constructor failed: messages_fts", 17)
        return "rows"

    assert _again_on_schema_change(heals) == "rows"
    assert len(calls) == _SCHEMA_TRIES
    calls.clear()

    def keeps_changing() -> str:
        calls.append(1)
        raise _sqlite_error("vtable constructor failed: messages_fts", 17)

    with pytest.raises(StoreBusyError, match="kept changing the store's schema"):
        _again_on_schema_change(keeps_changing)
    assert len(calls) == _SCHEMA_TRIES
    calls.clear()

    def broken() -> str:
        calls.append(1)
        raise _sqlite_error("no such table: messages", 1)

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        _again_on_schema_change(broken)
    assert len(calls) == 1
