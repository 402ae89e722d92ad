"""Crash safety: a writer killed with SIGKILL in the middle of a batch.

A child process appends large batches with ``add_messages`` (one transaction each) and reports
each batch before and after it commits; the test kills it at a random moment, several times
over the same file. After every kill the database must pass ``PRAGMA integrity_check`` and the
FTS5 ``integrity-check``, every reported commit must be there, and each batch must be all or
nothing.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability.reliability_support import count, subprocess_env

from langchain_session_recall import SessionStore
from langchain_session_recall.search.pipeline import search_sessions

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")

BATCH = 300
ROUNDS = 5

_CHILD = """
import sys
from langchain_session_recall import SessionStore
path, first = sys.argv[1], int(sys.argv[2])
batch = int(sys.argv[3])
filler = "lorem ipsum dolor sit amet " * 20
with SessionStore(path) as store:
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


def _run_and_kill(path: Path, first: int, rng: random.Random) -> tuple[set[int], set[int]]:
    """Start a writer at batch ``first``, kill it mid-run; returns (begun, committed)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), str(first), str(BATCH)],
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


def _check_consistent(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
        rows = conn.execute(
            "SELECT s.id, s.message_count, count(m.id) FROM sessions s "
            "LEFT JOIN messages m ON m.session_id = s.id GROUP BY s.id"
        ).fetchall()
    finally:
        conn.close()
    for sid, declared, actual in rows:
        assert actual in (0, BATCH), f"batch {sid} is torn: {actual} of {BATCH} rows"
        assert declared == actual, f"{sid}: message_count {declared} but {actual} rows"
    return {sid: actual for sid, _, actual in rows}


def test_sigkill_mid_batch_leaves_whole_batches_only(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    SessionStore(path).close()
    rng = random.Random(8)
    committed_all: set[int] = set()
    interrupted = 0
    first = 0
    for _ in range(ROUNDS):
        begun, committed = _run_and_kill(path, first, rng)
        committed_all |= committed
        rows = _check_consistent(path)
        for n in committed:
            assert rows.get(f"s{n}") == BATCH, f"batch {n} was reported committed but is missing"
        interrupted += sum(rows.get(f"s{n}", 0) == 0 for n in begun - committed)
        first = max(begun) + 1
    count("crash.sigkills", ROUNDS)
    count("crash.batches_interrupted_and_rolled_back", interrupted)
    count("crash.batches_committed", len(committed_all))
    count("crash.messages_checked", len(committed_all) * BATCH)
    with SessionStore(path, read_only=True) as store:
        for n in sorted(committed_all)[:: max(1, len(committed_all) // 10)]:
            assert [r.root_id for r in search_sessions(store, f"b{n}x").sessions] == [f"s{n}"]
    # the writer picks up where it was killed: the file is fully usable
    with SessionStore(path) as store:
        store.add_session("after")
        store.add_messages("after", [{"role": "user", "content": "life goes on"}])
        assert [r.root_id for r in search_sessions(store, "life").sessions] == ["after"]


_IMPORT_CHILD = """
import sys
from langchain_session_recall import SessionStore
path, sessions, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
filler = "lorem ipsum dolor sit amet " * 20
with SessionStore(path) as store:
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
    tmp_path: Path,
) -> None:
    path = tmp_path / "import.db"
    SessionStore(path).close()
    sessions, per = 6, 400
    args = [sys.executable, "-c", _IMPORT_CHILD, str(path), str(sessions), str(per)]
    for kill_after in (5, 17, 30):
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, env=subprocess_env())
        assert proc.stdout is not None
        for i, _line in enumerate(proc.stdout):
            if i + 1 == kill_after:
                proc.send_signal(signal.SIGKILL)
                break
        proc.wait(timeout=60)
        count("crash.sigkills")
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()
    per_session, distinct = _rerun_to_completion(args, path)
    assert per_session == {f"imp{s}": per for s in range(sessions)}
    assert distinct == sessions * per
    count("crash.messages_checked", sessions * per)


def _rerun_to_completion(args: list[str], db: Path) -> tuple[dict[str, int], int]:
    """Run the killed command once more to the end; the full-text index must be intact. Returns
    messages per session and the number of distinct (session, content) pairs."""
    done = subprocess.run(args, capture_output=True, text=True, env=subprocess_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    conn = sqlite3.connect(db)
    try:
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
        per_session = dict(
            conn.execute("SELECT session_id, count(*) FROM messages GROUP BY session_id")
        )
        distinct = conn.execute(
            "SELECT count(*) FROM (SELECT DISTINCT session_id, content FROM messages)"
        ).fetchone()[0]
    finally:
        conn.close()
    return per_session, int(distinct)


_CLI = "import sys; from langchain_session_recall.cli import main; sys.exit(main(sys.argv[1:]))"


def _messages_in(path: Path) -> int:
    if not path.exists():
        return 0
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    except sqlite3.OperationalError:  # schema not created yet
        return 0
    finally:
        conn.close()


def test_the_import_cli_killed_mid_run_completes_without_duplicates_when_rerun(
    tmp_path: Path,
) -> None:
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
    db = tmp_path / "imported.db"
    # Imports commit a group of sessions at a time; groups of 3 here so that the kills land
    # between commits of this small source (a group is as atomic as a session).
    grouped = "import langchain_session_recall.importers.base as b; "
    grouped += "b.SESSIONS_PER_TRANSACTION = 3; " + _CLI
    args = [sys.executable, "-c", grouped, "import", "jsonl", str(source), "--db", str(db)]
    rng = random.Random(3)
    total = sessions * per
    for _ in range(3):
        proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=subprocess_env()
        )
        target = _messages_in(db) + rng.randint(per, 4 * per)
        for _ in range(3000):  # wait (bounded) until the import is under way, then kill it
            if proc.poll() is not None or _messages_in(db) >= target:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        count("crash.sigkills")
        rows = _messages_in(db)
        assert rows % per == 0, f"a session batch is torn: {rows} rows"  # one batch = one file
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()
    assert _messages_in(db) < total  # the kills did interrupt the import
    per_session, distinct = _rerun_to_completion(args, db)
    assert sorted(per_session.values()) == [per] * sessions
    assert distinct == total
    count("crash.messages_checked", total)
