"""Concurrent writers and readers on one store, on both backends.

* One thread adds sessions continuously while reader threads and an asyncio task search:
  no ``database is locked``, every committed message is searchable right after its commit,
  and no read ever sees half a batch (``add_messages`` is one transaction).
* Two processes write the same store: serialized by SQLite's lock and the busy timeout, or
  side by side on PostgreSQL; nothing lost, no duplicate, the indexes intact.
* Read-only readers search while a writer comes (opens the store), writes and goes (closes it),
  three times. On SQLite also with a Hermes file and Hermes' own writes (immutable reads).
"""

from __future__ import annotations

import asyncio
import itertools
import random
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from reliability.reliability_support import count, subprocess_env
from store_targets import StoreFactory

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.search.pipeline import search_sessions

SESSIONS = 120
BATCH = 4
READERS = 3


def _word(n: int) -> str:
    return f"tok{n}q"  # one token, unique per session


def _batch(n: int) -> list[dict[str, str]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{_word(n)} part {i} shared"}
        for i in range(BATCH)
    ]


class Committed:
    """Session numbers whose ``add_messages`` has returned, in commit order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done: list[int] = []
        self.finished = threading.Event()

    def add(self, n: int) -> None:
        with self._lock:
            self._done.append(n)

    def snapshot(self) -> list[int]:
        with self._lock:
            return list(self._done)


def _check_session(store: SessionBackend, n: int) -> int:
    """The committed session ``n`` is found by its word and is whole; returns messages seen."""
    sid = f"c{n}"
    outcome = search_sessions(store, _word(n))
    assert [r.root_id for r in outcome.sessions] == [sid], f"{_word(n)} not found after commit"
    messages = store.get_messages(sid)
    assert len(messages) == BATCH, f"torn read: {len(messages)} of {BATCH} messages of {sid}"
    session = store.get_session(sid)
    assert session is not None and session.message_count == BATCH
    return len(messages)


def test_one_writer_many_readers_and_an_asyncio_task(store_factory: StoreFactory) -> None:
    backend = store_factory.backend
    store = store_factory.open("live")
    committed = Committed()
    errors: list[BaseException] = []
    ops = {"reads": 0, "messages_checked": 0}
    ops_lock = threading.Lock()

    def writer() -> None:
        try:
            for n in range(SESSIONS):
                store.add_session(f"c{n}", title=f"session {n}", started_at=1_790_000_000.0 + n)
                store.add_messages(f"c{n}", _batch(n))
                committed.add(n)
        except BaseException as exc:
            errors.append(exc)
        finally:
            committed.finished.set()

    def reader(seed: int) -> None:
        rng = random.Random(seed)
        try:
            while True:
                finished = committed.finished.is_set()
                done = committed.snapshot()
                if done:
                    # the latest commit (just made visible) and one at random
                    for n in {done[-1], rng.choice(done)}:
                        seen = _check_session(store, n)
                        with ops_lock:
                            ops["reads"] += 3
                            ops["messages_checked"] += seen
                if finished:
                    return
        except BaseException as exc:
            errors.append(exc)

    async def async_searcher() -> int:
        retriever = SessionRecallRetriever(store=store, k=3)
        searches = 0
        while not committed.finished.is_set():
            done = committed.snapshot()
            if done:
                n = done[-1]
                docs = await retriever.ainvoke(_word(n))
                assert [d.metadata["session_id"] for d in docs] == [f"c{n}"]
                assert docs[0].page_content.count(_word(n)) == BATCH
                searches += 1
            await asyncio.sleep(0)
        return searches

    threads = [threading.Thread(target=writer)] + [
        threading.Thread(target=reader, args=(i,)) for i in range(READERS)
    ]
    for t in threads:
        t.start()
    try:
        async_searches = asyncio.run(async_searcher())
    finally:
        committed.finished.set()
        for t in threads:
            t.join()
    assert not errors, errors[0]
    assert committed.snapshot() == list(range(SESSIONS))
    for n in range(SESSIONS):  # afterwards, everything is there exactly once
        _check_session(store, n)
    count("concurrency.sessions_written", SESSIONS, backend=backend)
    count("concurrency.messages_written", SESSIONS * BATCH, backend=backend)
    count("concurrency.concurrent_reads", ops["reads"] + async_searches, backend=backend)
    count(
        "concurrency.messages_checked", ops["messages_checked"] + SESSIONS * BATCH, backend=backend
    )


_PROCESS_WRITER = """
import pathlib, sys, time
from store_targets import StoreTarget
target, barrier = StoreTarget.parse(sys.argv[1]), pathlib.Path(sys.argv[2])
tag, sessions, batch = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
store = target.open()  # SQLite: a 30 s busy timeout
# start barrier: both processes are imported and connected before either writes
(barrier / (tag + ".ready")).touch()
for _ in range(6000):
    if len(list(barrier.glob("*.ready"))) == 2:
        break
    time.sleep(0.01)
with store:
    for n in range(sessions):
        sid = f"{tag}-{n}"
        store.add_session(sid, started_at=1790000000.0 + n)
        store.add_messages(sid, [
            {"role": "user", "content": f"{tag}w{n}x message {i} common"} for i in range(batch)
        ])
print("ok")
"""


@pytest.mark.slow  # two child processes writing thousands of messages
def test_two_processes_writing_the_same_store(store_factory: StoreFactory, tmp_path: Path) -> None:
    backend = store_factory.backend
    target = store_factory.target("shared")
    target.open().close()  # schema created once; both processes then only write
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    sessions, batch = 150, 5
    args = [target.argv(), str(barrier)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _PROCESS_WRITER, *args, tag, str(sessions), str(batch)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(),
        )
        for tag in ("pa", "pb")
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "database is locked" not in err
        assert out.strip() == "ok"

    with target.open(read_only=True) as store:
        for tag in ("pa", "pb"):
            for n in range(sessions):
                sid = f"{tag}-{n}"
                found = [r.root_id for r in search_sessions(store, f"{tag}w{n}x").sessions]
                assert found == [sid]
                assert len(store.get_messages(sid)) == batch
    target.assert_intact()
    with target.sql() as sql:
        total = sql.execute("SELECT count(*) FROM messages")[0][0]
        distinct = sql.execute(
            "SELECT count(*) FROM (SELECT DISTINCT session_id, content FROM messages) d"
        )[0][0]
        writers = [r[0][:2] for r in sql.execute("SELECT session_id FROM messages ORDER BY id")]
    assert total == distinct == 2 * sessions * batch
    count("concurrency.processes", 2, backend=backend)
    # how often the id order (SQLite: the commit order) switched between the two processes
    # (0 = they never overlapped)
    switches = sum(a != b for a, b in itertools.pairwise(writers))
    count("concurrency.process_interleavings", switches, backend=backend)
    count("concurrency.messages_written", total, backend=backend)
    count("concurrency.messages_checked", total, backend=backend)


def test_read_only_readers_while_a_writer_comes_and_goes(store_factory: StoreFactory) -> None:
    """A read-only store searches from three threads while a writer opens the store, writes
    40 sessions and closes it, three times over; no error, the final data all visible."""
    backend = store_factory.backend
    target = store_factory.target("comes-and-goes")
    with target.open() as seed:
        seed.add_session("seed")
        seed.add_messages("seed", [{"role": "user", "content": "nginx seeds the store"}])
    reader = store_factory.open("comes-and-goes", read_only=True)
    errors: list[BaseException] = []
    done = threading.Event()
    reads = [0]

    def writer() -> None:
        try:
            for run in range(3):
                with target.open() as store:
                    for n in range(40):
                        sid = f"w{run}-{n}"
                        store.add_session(sid)
                        store.add_messages(
                            sid, [{"role": "user", "content": f"writerrun{run}x {sid}"}] * BATCH
                        )
        except BaseException as exc:
            errors.append(exc)
        finally:
            done.set()

    def search() -> None:
        try:
            while not done.is_set():
                outcome = search_sessions(reader, "nginx OR writerrun0x OR writerrun2x")
                assert "seed" in {r.root_id for r in outcome.sessions}
                reads[0] += 1
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer)] + [
        threading.Thread(target=search) for _ in range(READERS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, repr(errors[0])
    for run in range(3):
        # every message of the run matches: fetch them all (the default keeps the best 100)
        outcome = search_sessions(reader, f"writerrun{run}x", hit_limit=40 * BATCH)
        found = {r.root_id for r in outcome.sessions}
        assert found == {f"w{run}-{n}" for n in range(40)}
    assert all(len(reader.get_messages(f"w2-{n}")) == BATCH for n in range(40))
    count("concurrency.concurrent_reads", reads[0], backend=backend)
    count("concurrency.messages_written", 3 * 40 * BATCH, backend=backend)


def test_read_only_readers_while_the_agent_writes_and_exits(tmp_path: Path) -> None:
    """Hermes is not running when we open its file (immutable reads); then it starts, writes
    sessions and exits (checkpoint, -wal removed) while reader threads keep searching."""
    from hermes_fixtures import build_hermes_db

    path = tmp_path / "state.db"
    build_hermes_db(path, 3, wal=True)
    store = SessionStore(path, read_only=True)
    errors: list[BaseException] = []
    done = threading.Event()
    reads = [0]

    def agent() -> None:
        try:
            for run in range(3):  # three agent runs: open, write, close
                conn = sqlite3.connect(path, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                for n in range(40):
                    sid = f"h{run}-{n}"
                    conn.execute("BEGIN IMMEDIATE")
                    conn.execute(
                        "INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', 1.0)",
                        (sid,),
                    )
                    conn.executemany(
                        "INSERT INTO messages (session_id, role, content, timestamp) "
                        "VALUES (?, 'user', ?, 2.0)",
                        [(sid, f"hermesrun{run}x {sid} " + "pad " * 200)] * BATCH,
                    )
                    conn.execute("COMMIT")
                conn.close()
        except BaseException as exc:
            errors.append(exc)
        finally:
            done.set()

    def reader() -> None:
        try:
            while not done.is_set():
                search_sessions(store, "nginx OR hermesrun0x OR hermesrun2x")
                reads[0] += 1
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=agent)] + [
        threading.Thread(target=reader) for _ in range(READERS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert not errors, repr(errors[0])
        outcome = search_sessions(store, "hermesrun2x", hit_limit=40 * BATCH)  # all, not 100
        found = {r.root_id for r in outcome.sessions}
        assert len(found) == 40
    finally:
        store.close()
    # While we read, the agent's last close could not remove its -wal/-shm (SQLite leaves them
    # to the last connection); the agent's next run cleans them up, with nothing lost.
    assert {p.name for p in tmp_path.iterdir()} <= {"state.db", "state.db-wal", "state.db-shm"}
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("SELECT count(*) FROM messages WHERE session_id LIKE 'h%'").fetchone() == (
        3 * 40 * BATCH,
    )
    conn.close()
    assert [p.name for p in tmp_path.iterdir()] == ["state.db"]
    count("concurrency.concurrent_reads", reads[0], backend="sqlite")
    count("concurrency.messages_written", 3 * 40 * BATCH, backend="sqlite")


BULK_SECONDS = 4.0


class FreshReaders:
    """:data:`READERS` threads that open the store for every search (as the CLI does) while
    a worker thread runs, for :data:`BULK_SECONDS`; every failure is kept in ``errors``."""

    def __init__(self, open_store: Callable[[], SessionBackend]) -> None:
        self.open_store = open_store
        self.stop = threading.Event()
        self.errors: list[str] = []
        self._served = itertools.count()

    def _read(self) -> None:
        while not self.stop.is_set():
            try:
                with self.open_store() as store:
                    for query in ("东京", "nginx"):
                        search_sessions(store, query)
                next(self._served)
            except Exception as exc:  # every failure counts; the test lists them
                self.errors.append(f"{type(exc).__name__}: {exc}")

    def run_beside(self, worker: Callable[[], None]) -> int:
        """Run ``worker`` and the readers until :attr:`stop`; how many searches were served."""
        threads = [threading.Thread(target=worker)]
        threads += [threading.Thread(target=self._read) for _ in range(READERS)]
        for thread in threads:
            thread.start()
        self.stop.wait(BULK_SECONDS)
        self.stop.set()
        for thread in threads:
            thread.join(timeout=60)
        return next(self._served)


def test_searches_on_fresh_connections_while_bulk_loads_write(
    store_factory: StoreFactory,
) -> None:
    """Readers that open the store for every search (as the CLI does) while another thread
    bulk-loads groups of sessions: every search is served. Before schema 4 a bulk load dropped
    and re-created the index trigger (a schema change), and a reader connecting an FTS5 table
    meanwhile failed with ``vtable constructor failed: messages_cjk_fts`` (SQLITE_SCHEMA)."""
    target = store_factory.target("bulk")
    target.open().close()
    readers = FreshReaders(target.open)
    blocks = itertools.count()

    def bulk_loader() -> None:
        with target.open() as store:
            while not readers.stop.is_set():
                n = next(blocks)
                with store.transaction():
                    for s in range(4):  # the second batch on defers indexing to the end
                        store.add_session(f"b{n}-{s}")
                        store.add_messages(
                            f"b{n}-{s}",
                            [
                                {"role": "user", "content": f"nginx 东京天气 {n} {i}"}
                                for i in range(8)
                            ],
                        )

    served = readers.run_beside(bulk_loader)
    assert not readers.errors, readers.errors[:5]
    loaded = next(blocks)
    assert served > READERS and loaded > 1, (served, loaded)  # the mix did run
    target.assert_intact()
    count("bulk_mix.searches_served", served, backend=store_factory.backend)


def test_searches_survive_another_clients_schema_changes(tmp_path: Path) -> None:
    """Another client changes the schema again and again (a table made and dropped, as a
    migration on open or a first ANALYZE does once) while readers open the store for every
    search: every search is served. SQLite reports such a change met while it connects an
    FTS5 table as ``vtable constructor failed`` (SQLITE_SCHEMA); the store runs the statement
    again against the new schema."""
    path = tmp_path / "recall.db"
    with SessionStore(path) as store:
        store.add_session("s")
        store.add_messages("s", [{"role": "user", "content": "nginx 东京天气 ok"}])
    readers = FreshReaders(lambda: SessionStore(path))
    changes = itertools.count()

    def other_client() -> None:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        while not readers.stop.is_set():
            conn.execute("CREATE TABLE other_client_scratch (x)")
            conn.execute("DROP TABLE other_client_scratch")
            next(changes)
            time.sleep(0.01)
        conn.close()

    served = readers.run_beside(other_client)
    assert not readers.errors, readers.errors[:5]
    assert served > READERS and next(changes) > 10  # the mix did run
    count("schema_changes.searches_served", served)
