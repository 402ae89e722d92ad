"""Forgetting: ``delete_sessions`` and ``session-recall forget`` on both backends. A forgotten
session goes with everything below it, from every index, the summary cache and the import
ledger's view; ``check()`` passes afterwards; a re-import does not bring it back unless asked.
(The store's own contract of forgetting, selections, counts and read-only refusals: the
conformance suite, ``langchain_session_recall.testing``.)"""

from __future__ import annotations

import io
import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cli_support import run_cli
from hermes_fixtures import build_hermes_db
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from store_targets import StoreFactory, StoreTarget

from langchain_session_recall import SessionRecallRetriever, SessionStore, SessionSummarizer
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.importers import import_jsonl
from langchain_session_recall.search.pipeline import search_sessions

DAY = 86_400.0
T0 = 1_790_000_000.0


def _chains(store: SessionBackend) -> None:
    """``root`` with a sub-agent ``root/agent`` (itself with ``root/agent/deep``) and a
    continuation ``root-2``; an unrelated ``other``; ``old`` of bob, from a cron job."""
    rows = [
        ("root", None, T0, "alice", "cli", "Deploy with kubectl", "rollout of nginx 服务端"),
        ("root/agent", "root", T0 + 10, "alice", "cli", None, "zebrafish subagent notes"),
        ("root/agent/deep", "root/agent", T0 + 20, None, "cli", None, "deepest watercolor"),
        ("root-2", "root", T0 + 30, "alice", "cli", None, "continuation sourdough"),
        ("other", None, T0 + 40, "alice", "cli", "Other", "nginx unrelated"),
        ("old", None, T0 - 30 * DAY, "bob", "cron", "Nightly", "nightly nginx report"),
    ]
    for sid, parent, started, user, source, title, text in rows:
        store.add_session(
            sid,
            parent_session_id=parent,
            started_at=started,
            user_id=user,
            source=source,
            title=title,
        )
        store.add_messages(sid, [{"role": "user", "content": text, "timestamp": started + 1}])
    for sid in ("root", "root/agent", "other"):
        store.put_cached_summary(f"k-{sid}", session_id=sid, summary="recap", model="m")


def _found(store: SessionBackend, text: str) -> set[str]:
    return {r.root_id for r in search_sessions(store, text).sessions}


def test_a_session_goes_with_its_whole_chain_below_and_from_every_index(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open()
    _chains(store)
    assert _found(store, "zebrafish") == {"root"}
    assert store.delete_sessions(["root/agent"]) == 2  # the sub-agent and its own sub-agent
    assert store.get_session("root/agent/deep") is None
    assert [s for s in ("root", "root-2", "other", "old") if store.get_session(s)] == [
        "root",
        "root-2",
        "other",
        "old",
    ]
    assert _found(store, "zebrafish") == set() and _found(store, "watercolor") == set()
    # the root's recap was made with the sub-agent's messages: it goes too
    assert store.get_cached_summary("k-root") is None
    assert store.get_cached_summary("k-other") is not None

    assert store.delete_sessions(["root"]) == 2  # the root and its continuation
    for word in ("kubectl", "服务端", "sourdough", "Deploy"):  # content, CJK, title (header)
        assert _found(store, word) == set(), word
    assert {r.id for r in store.recent_sessions(limit=10, exclude_sources=())} == {"other", "old"}
    assert store.stats()["sessions"] == 2 and store.stats()["messages"] == 2
    assert store.check().ok, store.check().problems
    _assert_indexes_intact(store_factory.target())


def _assert_indexes_intact(target: StoreTarget) -> None:
    target.assert_intact()
    if target.backend == "sqlite":
        with target.sql() as sql:
            for table in ("messages_cjk_fts", "session_headers_fts"):
                sql.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")


# --------------------------------------------------------------------------- imports


def _jsonl(tmp_path: Path) -> Path:
    lines = [
        {"session_id": "keep", "role": "user", "content": "nginx keep"},
        {"session_id": "secret", "role": "user", "content": "my token is hunter2zebra"},
        {
            "session_id": "secret/sub",
            "parent_session_id": "secret",
            "role": "user",
            "content": "sub-agent saw hunter2zebra too",
        },
    ]
    path = tmp_path / "chats.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_forgotten_session_is_not_imported_again_unless_asked(
    store: SessionBackend, tmp_path: Path
) -> None:
    path = _jsonl(tmp_path)
    assert import_jsonl(store, path).messages == 3
    assert store.delete_sessions(["secret"]) == 2
    assert store.check().ok, store.check().problems

    again = import_jsonl(store, path)
    assert (again.messages, again.forgotten) == (0, ["secret", "secret/sub"])
    assert "2 forgotten sessions left out" in again.summary()
    assert store.get_session("secret") is None and store.get_session("secret/sub") is None
    assert _found(store, "hunter2zebra") == set()

    back = import_jsonl(store, path, reimport=True)
    assert (back.messages, back.forgotten) == (2, [])
    assert _found(store, "hunter2zebra") == {"secret"}
    assert import_jsonl(store, path).messages == 0  # and it is an ordinary import again
    assert store.check().ok, store.check().problems


# --------------------------------------------------------------------------- the CLI


def test_forget_on_the_command_line(store_factory: StoreFactory, tmp_path: Path) -> None:
    target = store_factory.target()
    with target.open() as store:
        _chains(store)
    db = target.db

    result = run_cli("forget", "root", "--db", db)  # not a terminal: no prompt, no deletion
    assert result.code == 2 and "--yes" in result.err
    result = run_cli("forget", "--db", db, "--yes")
    assert result.code == 2 and "name sessions" in result.err

    result = run_cli("forget", "root", "--db", db, "--dry-run", "--json")
    assert result.code == 0
    plan = json.loads(result.out)
    assert (plan["dry_run"], plan["count"], plan["messages"]) == (True, 4, 4)
    assert plan["sessions"][0] == "root"

    result = run_cli("forget", "--before", "2026-09-01", "--source", "cron", "--db", db, "-y")
    assert result.code == 0 and "Forgot 1 session" in result.out
    result = run_cli("forget", "root", "other", "--user", "alice", "--db", db, "--yes")
    assert result.code == 0 and "Forgot 4 sessions (4 messages)" in result.out
    assert "Kept 1 session below them that 'alice' does not own" in result.out  # no user's
    result = run_cli("forget", "root", "--db", db, "--yes")
    assert result.code == 1 and "nothing to forget" in result.err
    result = run_cli("forget", "root/agent/deep", "--db", db, "--yes")
    assert result.code == 0 and "Forgot 1 session" in result.out
    assert run_cli("check", "--db", db).code == 0
    with target.open() as store:
        assert store.stats()["sessions"] == 0
    _assert_indexes_intact(target)


def test_forget_for_a_user_never_deletes_another_users_sessions(
    store_factory: StoreFactory,
) -> None:
    target = store_factory.target()
    with target.open() as store:
        _chains(store)
        store.add_session("root/bob", parent_session_id="root", user_id="bob", started_at=T0 + 50)
        store.add_messages("root/bob", [{"role": "user", "content": "bob's own kestrel"}])
    db = target.db
    result = run_cli("forget", "root", "--user", "alice", "--db", db, "--dry-run", "--json")
    plan = json.loads(result.out)
    assert (plan["count"], plan["sessions"]) == (3, ["root", "root/agent", "root-2"])
    assert plan["kept"] == ["root/agent/deep", "root/bob"]
    result = run_cli("forget", "root", "--user", "alice", "--db", db, "--dry-run")
    assert "Would keep 2 sessions below them that 'alice' does not own:" in result.out
    assert "  root/bob" in result.out

    result = run_cli("forget", "root", "--user", "alice", "--db", db, "--yes", "--json")
    done = json.loads(result.out)
    assert (done["count"], done["kept"]) == (3, ["root/agent/deep", "root/bob"])
    with target.open() as store:
        bob = store.get_session("root/bob")
        assert bob is not None and bob.parent_session_id is None  # its parent went: a root
        assert _found(store, "kestrel") == {"root/bob"}
        assert _found(store, "sourdough") == set()
        assert store.check().ok, store.check().problems
    _assert_indexes_intact(target)


def test_forget_leaves_another_programs_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    build_hermes_db(path, 3)
    before = path.read_bytes()
    with_ids = run_cli("forget", "--db", str(path), "--before", "2030-01-01", "--dry-run")
    assert with_ids.code == 0 and "Would forget" in with_ids.out
    result = run_cli("forget", "--db", str(path), "--before", "2030-01-01", "--yes")
    assert result.code == 3 and "another program" in result.err
    assert path.read_bytes() == before


def test_the_words_of_a_forgotten_session_leave_the_sqlite_file(tmp_path: Path) -> None:
    # FTS5 keeps a deleted message's words in its index segments until they are merged, and
    # SQLite keeps deleted rows in free pages: `forget` merges the index and zeroes the pages.
    db = tmp_path / "recall.db"
    assert import_jsonl_cli(db, _jsonl(tmp_path)) == 0
    assert run_cli("forget", "secret", "--db", str(db), "--yes").code == 0
    files = [db, *(Path(f"{db}{x}") for x in ("-wal", "-shm"))]
    assert not [f.name for f in files if f.exists() and b"hunter2zebra" in f.read_bytes()]


@pytest.fixture
def secure_delete_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every SQLite connection opened with ``secure_delete`` off, SQLite's own default (the
    builds of python.org, conda and macOS; Debian's turns it on)."""
    connect = sqlite3.connect

    def without_secure_delete(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        conn.execute("PRAGMA secure_delete = 0")
        return conn

    monkeypatch.setattr(sqlite3, "connect", without_secure_delete)


_FORGOTTEN_WORDS = ("hunter2zebra", "quetzalrecap", "数据库迁移", "迁移")


def _words_in_files(db: Path) -> dict[str, list[str]]:
    """The forgotten words (FTS terms, a CJK run and one of its bigrams, a cached recap) still
    in the file or its -wal, by file."""
    found: dict[str, list[str]] = {}
    for f in [db, *(Path(f"{db}{x}") for x in ("-wal", "-shm"))]:
        data = f.read_bytes() if f.exists() else b""
        words = [w for w in _FORGOTTEN_WORDS if w.encode() in data]
        if words:
            found[f.name] = words
    return found


def _secret_store(db: Path) -> None:
    store = SessionStore(db)
    store.add_session("keep", started_at=T0)
    store.add_messages("keep", [{"role": "user", "content": "nginx keep"}])
    store.add_session("secret", started_at=T0 + 1)
    store.add_session("secret/sub", parent_session_id="secret", started_at=T0 + 2)
    texts = ["my token is hunter2zebra", "数据库迁移失败了 hunter2zebra"]
    store.add_messages("secret", [{"role": "user", "content": t} for t in texts])
    store.add_messages("secret/sub", [{"role": "user", "content": "sub saw hunter2zebra"}])
    store.put_cached_summary("k", session_id="secret", summary="quetzalrecap", model="m")
    store.close()
    assert _words_in_files(db)  # the test can see them before


@pytest.mark.usefixtures("secure_delete_off")
def test_forget_zeroes_the_words_on_a_build_without_secure_delete(tmp_path: Path) -> None:
    db = tmp_path / "recall.db"
    _secret_store(db)
    assert run_cli("forget", "secret", "--db", str(db), "--yes").code == 0
    assert _words_in_files(db) == {}
    with SessionStore(db) as store:
        assert store.check().ok and _found(store, "nginx") == {"keep"}


@pytest.mark.usefixtures("secure_delete_off")
def test_delete_then_optimize_zeroes_the_words_on_a_build_without_secure_delete(
    tmp_path: Path,
) -> None:
    db = tmp_path / "recall.db"
    _secret_store(db)
    with SessionStore(db) as store:
        assert store.delete_sessions(["secret"]) == 2
        store.optimize()
        assert store.get_cached_summary("k") is None
    assert _words_in_files(db) == {}


def import_jsonl_cli(db: Path, path: Path) -> int:
    return run_cli("import", "jsonl", str(path), "--db", str(db)).code


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("answer", "code", "left"), [("n\n", 1, 6), ("\n", 1, 6), ("y\n", 0, 2)])
def test_a_terminal_is_asked_first(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch, answer: str, code: int, left: int
) -> None:
    target = store_factory.target()
    with target.open() as store:
        _chains(store)
    monkeypatch.setattr("sys.stdin", _Terminal(answer))
    result = run_cli("forget", "root", "--db", target.db)
    assert result.code == code
    assert "Forget 4 sessions (4 messages)" in result.err and "cannot be undone" in result.err
    with target.open() as store:
        assert store.stats()["sessions"] == left


# --------------------------------------------------------------------------- side caches


def _recapped_chain(store: SessionBackend) -> None:
    """``r`` (alice) whose sub-agent ``r/agent`` saw the pelican plan; the root's last message
    is the chain's newest, so forgetting the sub-agent leaves the chain's last message id."""
    store.add_session("r", started_at=T0, user_id="alice", title="Deploy")
    store.add_messages("r", [{"role": "user", "content": "deploy the app", "timestamp": T0}])
    store.add_session("r/agent", parent_session_id="r", started_at=T0 + 1, user_id="alice")
    store.add_messages(
        "r/agent", [{"role": "assistant", "content": "pelican plan: deploy", "timestamp": T0 + 2}]
    )
    store.add_messages("r", [{"role": "assistant", "content": "deploy done", "timestamp": T0 + 3}])


def _summarize(reader: SessionBackend, cache_path: Path) -> list[str]:
    """Recap ``deploy`` with a model that always names the pelican plan, gate and grounding off
    (a cached recap is then served as it is); the recaps' statuses."""
    llm = GenericFakeChatModel(messages=itertools.repeat(AIMessage("The pelican plan ran.")))
    summarizer = SessionSummarizer(
        llm=llm, store=reader, cache_path=str(cache_path), quality_gate=False, grounding=False
    )
    docs = SessionRecallRetriever(store=reader).invoke("deploy")
    return [d.metadata["summary_status"] for d in summarizer.invoke(docs)]


def test_forgetting_a_sub_session_purges_and_never_serves_its_roots_side_file_recap(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    target = store_factory.target()
    side, stale = tmp_path / "recaps.json", tmp_path / "copy.json"
    with target.open() as store, target.open(read_only=True) as reader:
        _recapped_chain(store)
        assert _summarize(reader, side) == ["summarized"]
        assert _summarize(reader, side) == ["cached"]
        stale.write_bytes(side.read_bytes())  # a side file no store of this process knows
        assert store.delete_sessions(["r/agent"]) == 1
        assert b"pelican" not in side.read_bytes()  # registered by the summarizer: purged
        # the copy still holds the recap made with the sub-agent's words: never served
        assert b"pelican" in stale.read_bytes()
        assert _summarize(reader, stale) == ["summarized"]
        assert _summarize(reader, side) == ["summarized"]
