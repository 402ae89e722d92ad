"""Crash safety: a writer killed with SIGKILL in the middle of a batch, on both backends.

A child process appends large batches with ``add_messages`` (one transaction each) and reports
each batch before and after it commits; the test kills it at a random moment, several times
over the same store. After every kill the store must pass its integrity checks (SQLite:
``PRAGMA integrity_check`` and the FTS5 ``integrity-check``; PostgreSQL: ``check()``, whose
server rolls back the killed connection's transaction), every reported commit must be there,
and each batch must be all or nothing. Killed imports, re-run, complete without duplicates.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability.reliability_support import count, subprocess_env
from store_targets import StoreFactory, StoreTarget

from langchain_session_recall.search.pipeline import search_sessions

pytestmark = [
    pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX"),
    pytest.mark.slow,  # child processes killed and re-run, rounds of batches
]

BATCH = 300
ROUNDS = 5

_CHILD = """
import sys
from store_targets import StoreTarget
target, first = StoreTarget.parse(sys.argv[1]), int(sys.argv[2])
batch = int(sys.argv[3])
filler = "lorem ipsum dolor sit amet " * 20
with target.open() as store:
    n = first
    while True:
        sid = f"s{n}"
        store.add_session(sid)
        print(f"begin {n}", flush=True)
        store.add_messages(sid, [
            {"role": "user", "content": f"b{n}x row {i} {filler}"} for i in range(batch)
        ])
        print(f"commit {n}", flush=True)
        n += 1
"""


def _run_and_kill(target: StoreTarget, first: int, rng: random.Random) -> tuple[set[int], set[int]]:
    """Start a writer at batch ``first``, kill it mid-run; returns (begun, committed)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, target.argv(), str(first), str(BATCH)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )
    assert proc.stdout is not None
    begun: set[int] = set()
    committed: set[int] = set()
    target = rng.randint(1, 3)  # kill during (or right after) the target-th batch of the round
    for line in proc.stdout:
        word, n = line.split()
        (begun if word == "begin" else committed).add(int(n))
        if word == "begin" and len(begun) == target:
            time.sleep(rng.uniform(0, 0.02))
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""
    for line in proc.stdout:  # lines written before the kill that we had not read yet
        word, n = line.split()
        (begun if word == "begin" else committed).add(int(n))
    return begun, committed


def _check_consistent(target: StoreTarget) -> dict[str, int]:
    target.assert_intact()
    with target.sql() as sql:
        rows = sql.execute(
            "SELECT s.id, s.message_count, count(m.id) FROM sessions s "
            "LEFT JOIN messages m ON m.session_id = s.id GROUP BY s.id"
        )
    for sid, declared, actual in rows:
        assert actual in (0, BATCH), f"batch {sid} is torn: {actual} of {BATCH} rows"
        assert declared == actual, f"{sid}: message_count {declared} but {actual} rows"
    return {sid: actual for sid, _, actual in rows}


def test_sigkill_mid_batch_leaves_whole_batches_only(store_factory: StoreFactory) -> None:
    backend = store_factory.backend
    target = store_factory.target("crash")
    target.open().close()
    rng = random.Random(8)
    committed_all: set[int] = set()
    interrupted = 0
    first = 0
    for _ in range(ROUNDS):
        begun, committed = _run_and_kill(target, first, rng)
        committed_all |= committed
        rows = _check_consistent(target)
        for n in committed:
            assert rows.get(f"s{n}") == BATCH, f"batch {n} was reported committed but is missing"
        interrupted += sum(rows.get(f"s{n}", 0) == 0 for n in begun - committed)
        first = max(begun) + 1
    count("crash.sigkills", ROUNDS, backend=backend)
    count("crash.batches_interrupted_and_rolled_back", interrupted, backend=backend)
    count("crash.batches_committed", len(committed_all), backend=backend)
    count("crash.messages_checked", len(committed_all) * BATCH, backend=backend)
    with target.open(read_only=True) as store:
        for n in sorted(committed_all)[:: max(1, len(committed_all) // 10)]:
            assert [r.root_id for r in search_sessions(store, f"b{n}x").sessions] == [f"s{n}"]
    # the writer picks up where it was killed: the store is fully usable
    with target.open() as store:
        store.add_session("after")
        store.add_messages("after", [{"role": "user", "content": "life goes on"}])
        assert [r.root_id for r in search_sessions(store, "life").sessions] == ["after"]


_IMPORT_CHILD = """
import sys
from store_targets import StoreTarget
target, sessions, per = StoreTarget.parse(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
filler = "lorem ipsum dolor sit amet " * 20
with target.open() as store:
    for s in range(sessions):
        sid = f"imp{s}"
        store.add_session(sid)
        pairs = [(f"{sid}:{i}", {"role": "user", "content": f"i{s}x row {i} {filler}"})
                 for i in range(per)]
        for start in range(0, per, 50):
            store.import_messages(sid, pairs[start:start + 50], source_kind="jsonl")
            print(f"batch {s} {start}", flush=True)
print("done", flush=True)
"""


def test_an_import_killed_half_way_completes_without_duplicates_when_rerun(
    store_factory: StoreFactory,
) -> None:
    backend = store_factory.backend
    target = store_factory.target("import")
    target.open().close()
    sessions, per = 6, 400
    args = [sys.executable, "-c", _IMPORT_CHILD, target.argv(), str(sessions), str(per)]
    for kill_after in (5, 17, 30):
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, env=subprocess_env())
        assert proc.stdout is not None
        for i, _line in enumerate(proc.stdout):
            if i + 1 == kill_after:
                proc.send_signal(signal.SIGKILL)
                break
        proc.wait(timeout=60)
        count("crash.sigkills", backend=backend)
        _check_ledger(target)
    per_session, distinct = _rerun_to_completion(args, target)
    assert per_session == {f"imp{s}": per for s in range(sessions)}
    assert distinct == sessions * per
    count("crash.messages_checked", sessions * per, backend=backend)


def _check_ledger(target: StoreTarget) -> None:
    """Integrity checks pass and the ledger holds exactly one key per imported message (a
    row of ``import_ledger``, or a place in a run of ``import_runs``: the keys here are
    ``<session>:<n>``, which the ledger keeps in runs)."""
    target.assert_intact()
    with target.sql() as sql:
        (orphans,) = sql.execute(
            "SELECT count(*) FROM messages m WHERE NOT EXISTS "
            "(SELECT 1 FROM import_ledger l WHERE l.message_id = m.id) AND NOT EXISTS "
            "(SELECT 1 FROM import_runs r "
            "WHERE m.id BETWEEN r.message_id AND r.message_id + r.key_count - 1)"
        )[0]
        (dangling,) = sql.execute(
            "SELECT (SELECT count(*) FROM import_ledger l WHERE NOT EXISTS "
            "(SELECT 1 FROM messages m WHERE m.id = l.message_id)) + "
            "(SELECT coalesce(sum(r.key_count - (SELECT count(*) FROM messages m "
            "WHERE m.id BETWEEN r.message_id AND r.message_id + r.key_count - 1)), 0) "
            "FROM import_runs r)"
        )[0]
    assert (orphans, dangling) == (0, 0), "messages and their ledger keys were split by a kill"


def _rerun_to_completion(args: list[str], target: StoreTarget) -> tuple[dict[str, int], int]:
    """Run the killed command once more to the end; the store (full-text index included) must
    be intact. Returns messages per session and the number of distinct (session, content)."""
    done = subprocess.run(args, capture_output=True, text=True, env=subprocess_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    target.assert_intact()
    with target.sql() as sql:
        per_session = {
            str(sid): int(n)
            for sid, n in sql.execute(
                "SELECT session_id, count(*) FROM messages GROUP BY session_id"
            )
        }
        distinct = sql.execute(
            "SELECT count(*) FROM (SELECT DISTINCT session_id, content FROM messages) d"
        )[0][0]
    return per_session, int(distinct)


_CLI = "import sys; from langchain_session_recall.cli import main; sys.exit(main(sys.argv[1:]))"


def test_the_import_cli_killed_mid_run_completes_without_duplicates_when_rerun(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    backend = store_factory.backend
    source = tmp_path / "chats"
    source.mkdir()
    sessions, per = 30, 200
    filler = "lorem ipsum dolor sit amet " * 10
    for s in range(sessions):
        lines = [
            json.dumps(
                {"role": "user" if i % 2 == 0 else "assistant", "content": f"c{s}x {i} {filler}"}
            )
            for i in range(per)
        ]
        (source / f"chat{s:02d}.jsonl").write_text("\n".join(lines) + "\n")
    target = store_factory.target("imported")  # created by the first run of the command
    # Imports commit a group of sessions at a time; groups of 3 here so that the kills land
    # between commits of this small source (a group is as atomic as a session).
    grouped = "import langchain_session_recall.importers.base as b; "
    grouped += "b.SESSIONS_PER_TRANSACTION = 3; " + _CLI
    args = [sys.executable, "-c", grouped, "import", "jsonl", str(source), "--db", target.db]
    rng = random.Random(3)
    total = sessions * per
    for _ in range(3):
        proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=subprocess_env()
        )
        goal = target.count() + rng.randint(per, 4 * per)
        for _ in range(3000):  # wait (bounded) until the import is under way, then kill it
            if proc.poll() is not None or target.count() >= goal:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        count("crash.sigkills", backend=backend)
        rows = target.count()
        assert rows % per == 0, f"a session batch is torn: {rows} rows"  # one batch = one file
        if rows:
            _check_ledger(target)
    assert target.count() < total  # the kills did interrupt the import
    per_session, distinct = _rerun_to_completion(args, target)
    assert sorted(per_session.values()) == [per] * sessions
    assert distinct == total
    count("crash.messages_checked", total, backend=backend)
