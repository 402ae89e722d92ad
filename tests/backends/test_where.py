"""Where a session happened (issue 35, item 4): each session keeps its ``project`` (working
directory), ``git_branch`` and ``agent``; a search and a listing keep to a project (that
directory and every one below it) and to some agents, on both backends; results show where, and
the command that reopens the session. Stores of older schema versions gain the columns in place;
opened read-only (and a Hermes ``state.db``), they are read as they are."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from hermes_fixtures import build_hermes_db
from pg_support import PG_DSN, SKIP_PG, old_postgres_schema

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.backends.sqlite.schema import SCHEMA_VERSION
from langchain_session_recall.errors import InvalidArgumentError
from langchain_session_recall.search.pipeline import search_sessions

T0 = 1_790_000_000.0

SESSIONS = [
    # id, project, branch, agent
    ("api", "/src/api", "main", "codex"),
    ("api-web", "/src/api/web", "feat/ui", "claude-code"),
    ("apis", "/src/apis", None, "codex"),
    ("under", "/src/a_b", None, "gemini"),  # "_" is a LIKE wildcard: /src/axb must not match
    ("axb", "/src/axb", None, "gemini"),
    ("pct", "/src/100%/x", None, "opencode"),
    ("nowhere", None, None, None),
]


def _fill(store: SessionBackend) -> None:
    for n, (sid, project, branch, agent) in enumerate(SESSIONS):
        store.add_session(sid, started_at=T0 + n, project=project, git_branch=branch, agent=agent)
        store.add_messages(sid, [{"role": "user", "content": f"walrus {sid}", "timestamp": T0 + n}])


def _found(store: SessionBackend, **filters: object) -> set[str]:
    return {r.root_id for r in search_sessions(store, "walrus", k=20, **filters).sessions}


def _listed(store: SessionBackend, **filters: object) -> set[str]:
    return {r.id for r in store.recent_sessions(20, **filters)}  # type: ignore[arg-type]


def test_a_session_keeps_where_it_happened(store: SessionBackend) -> None:
    made = store.add_session(
        "s", project="/src/api/", git_branch=" main ", agent="Claude-Code", started_at=T0
    )
    assert (made.project, made.git_branch, made.agent) == ("/src/api", "main", "claude-code")
    kept = store.get_session("s")
    assert kept is not None and (kept.project, kept.git_branch, kept.agent) == (
        "/src/api",
        "main",
        "claude-code",
    )
    store.add_session("s", title="later")  # a field left out keeps its value
    again = store.get_session("s")
    assert again is not None and again.project == "/src/api" and again.agent == "claude-code"
    assert store.get_session("s") == store.get_sessions(["s"])["s"]
    assert store.check().ok


def test_the_project_filter_takes_a_directory_and_everything_below_it(
    store: SessionBackend,
) -> None:
    _fill(store)
    assert _found(store) == {sid for sid, *_ in SESSIONS}
    assert _found(store, project="/src/api") == {"api", "api-web"}  # never /src/apis
    assert _found(store, project="/src/api/") == {"api", "api-web"}
    assert _found(store, project="/src/api/web") == {"api-web"}
    assert _found(store, project="/src/a_b") == {"under"}  # no wildcard
    assert _found(store, project="/src/100%") == {"pct"}
    assert _found(store, project="/src") == {sid for sid, p, *_ in SESSIONS if p}
    assert _found(store, project="/") == {sid for sid, p, *_ in SESSIONS if p}
    assert _found(store, project="/elsewhere") == set()
    assert _listed(store, project="/src/api") == {"api", "api-web"}
    assert _listed(store, project="/src/a_b") == {"under"}


def test_the_agent_filter_and_both_together(store: SessionBackend) -> None:
    _fill(store)
    assert _found(store, agent="codex") == {"api", "apis"}
    assert _found(store, agent=("gemini", "opencode")) == {"under", "axb", "pct"}
    assert _found(store, agent="CODEX, claude-code") == {"api", "apis", "api-web"}
    assert _found(store, agent="aider") == set()
    assert _found(store, project="/src/api", agent="codex") == {"api"}
    assert _listed(store, agents=("codex",)) == {"api", "apis"}
    assert _listed(store, project="/src", agents=("gemini",)) == {"under", "axb"}


def test_a_filter_keeps_to_the_sessions_of_a_chain_that_match_it(store: SessionBackend) -> None:
    """Session-level, as the user and source filters are: a sub-agent that ran elsewhere is
    not found by the project of its parent (its own directory is what it worked in)."""
    store.add_session("root", started_at=T0, project="/src/api", agent="codex")
    store.add_session(
        "root/sub", parent_session_id="root", started_at=T0 + 1, project="/tmp/scratch"
    )
    store.add_messages("root", [{"role": "user", "content": "walrus up", "timestamp": T0}])
    store.add_messages("root/sub", [{"role": "user", "content": "narwhal", "timestamp": T0 + 1}])
    assert _found(store, project="/src/api") == {"root"}
    narwhal = search_sessions(store, "narwhal", project="/src/api").sessions
    assert narwhal == []
    assert [r.root_id for r in search_sessions(store, "narwhal", project="/tmp").sessions] == [
        "root"
    ]


def test_results_show_where_and_how_to_resume(store: SessionBackend) -> None:
    _fill(store)
    retriever = SessionRecallRetriever(store=store, k=5)
    (doc,) = retriever.invoke("walrus", project="/src/api/web")
    meta = doc.metadata
    assert (meta["project"], meta["git_branch"], meta["agent"]) == (
        "/src/api/web",
        "feat/ui",
        "claude-code",
    )
    assert meta["resume"] == "cd /src/api/web && claude --resume api-web"
    (listed,) = retriever.invoke("", project="/src/api/web")
    assert listed.metadata["resume"] == meta["resume"]
    (bare,) = retriever.invoke("walrus nowhere", agent=None, project=None, k=1)
    assert bare.id == "nowhere"
    assert (bare.metadata["project"], bare.metadata["agent"], bare.metadata["resume"]) == (
        None,
        None,
        None,
    )


def test_the_retriever_takes_the_filters_as_fields_and_per_call(store: SessionBackend) -> None:
    _fill(store)
    scoped = SessionRecallRetriever(store=store, k=5, project="/src/api", agent="codex")
    assert {d.id for d in scoped.invoke("walrus")} == {"api"}
    assert {d.id for d in scoped.invoke("walrus", agent="claude-code")} == {"api-web"}
    assert {d.id for d in scoped.invoke("walrus", project="/src/apis")} == {"apis"}
    with pytest.raises(ValueError, match="absolute"):  # pydantic's, around ours
        SessionRecallRetriever(store=store, project="src/api")
    with pytest.raises(InvalidArgumentError, match="absolute"):
        scoped.invoke("walrus", project="src/api")


def _v4_file(path: Path) -> None:
    """A store as schema version 4 made it: no where-columns."""
    with SessionStore(path) as store:
        store.add_session("old", started_at=T0)
        store.add_messages("old", [{"role": "user", "content": "walrus old", "timestamp": T0}])
    with sqlite3.connect(path) as conn:
        for column in ("cwd", "git_branch", "agent"):
            conn.execute(f"ALTER TABLE sessions DROP COLUMN {column}")
        conn.execute("UPDATE session_recall_meta SET value = '4' WHERE key = 'schema_version'")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_older_sqlite_store_is_read_as_it_is_then_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "v4.db"
    _v4_file(path)
    before = _digest(path)
    with SessionStore(path, read_only=True) as reader:
        assert reader.layout.version == 4
        (found,) = search_sessions(reader, "walrus").sessions
        assert found.root_id == "old"
        old = reader.get_session("old")
        assert old is not None and (old.project, old.git_branch, old.agent) == (None, None, None)
        assert search_sessions(reader, "walrus", project="/src").sessions == []
        assert _listed(reader, agents=("codex",)) == set()
    assert _digest(path) == before  # read-only: not a byte written
    with SessionStore(path) as store:
        assert store.layout.version == SCHEMA_VERSION
        store.add_session("old", project="/src/api", agent="codex")
        assert _found(store, project="/src", agent="codex") == {"old"}
        assert store.check().ok


def test_a_hermes_state_db_shows_its_own_directories_and_is_never_written(
    tmp_path: Path,
) -> None:
    """Hermes keeps ``cwd`` and ``git_branch`` in its sessions table; every session of its
    file is Hermes's."""
    path = tmp_path / "state.db"
    build_hermes_db(path, 3)
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE sessions ADD COLUMN cwd TEXT")
        conn.execute("ALTER TABLE sessions ADD COLUMN git_branch TEXT")
        (first,) = conn.execute("SELECT id FROM sessions ORDER BY started_at LIMIT 1").fetchone()
        conn.execute(
            "UPDATE sessions SET cwd = '/home/me/proj', git_branch = 'dev' WHERE id = ?", (first,)
        )
    before = _digest(path)
    with SessionStore.open_hermes(path) as hermes:
        session = hermes.get_session(first)
        assert session is not None
        assert (session.project, session.git_branch, session.agent) == (
            "/home/me/proj",
            "dev",
            "hermes",
        )
        assert _listed(hermes, project="/home/me") == {first}
        assert _listed(hermes, agents=("codex",)) == set()
        assert len(_listed(hermes, agents=("hermes",))) > 1
        docs = SessionRecallRetriever(store=hermes, k=1).invoke("", project="/home/me/proj")
        assert docs[0].metadata["resume"] == f"cd /home/me/proj && hermes --resume {first}"
    assert _digest(path) == before


@pytest.mark.skipif(not PG_DSN, reason=SKIP_PG)
@pytest.mark.enable_socket
def test_an_older_postgres_schema_is_read_as_it_is_then_migrated_in_place(pg_schema: str) -> None:
    from langchain_session_recall import PostgresSessionStore

    with old_postgres_schema("postgres_schema_v2.sql", pg_schema) as conn:
        conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('old', 'cli', 1.0)")
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) "
            "VALUES ('old', 'user', 'walrus old', 1.0)"
        )
        conn.execute("UPDATE sessions SET message_count = 1")
    with PostgresSessionStore(PG_DSN, schema=pg_schema, max_size=2, read_only=True) as reader:
        old = reader.get_session("old")
        assert old is not None and (old.project, old.agent) == (None, None)
        assert _found(reader) == {"old"}
        assert _found(reader, project="/src") == set()
        assert _listed(reader, agents=("codex",)) == set()
    with PostgresSessionStore(PG_DSN, schema=pg_schema, max_size=2) as store:
        store.add_session("old", project="/src/api", git_branch="main", agent="codex")
        assert _found(store, project="/src", agent="codex") == {"old"}
        assert _listed(store, project="/src/api") == {"old"}
        assert store.check().ok


def test_a_hybrid_search_keeps_to_the_project_too(store: SessionBackend) -> None:
    """Dense candidates pass the same filters: a paraphrase found by its vectors in another
    project is not let in."""
    from hybrid_support import ConceptEmbeddings

    store.enable_embeddings(ConceptEmbeddings())
    said = {"here": "dinner with my colleagues", "there": "dinner with the workmates"}
    for n, (sid, text) in enumerate(said.items()):
        store.add_session(sid, started_at=T0 + n, project=f"/src/{sid}", agent="codex")
        store.add_messages(sid, [{"role": "user", "content": text, "timestamp": T0 + n}])
    retriever = SessionRecallRetriever(store=store, k=5)
    assert {d.id for d in retriever.invoke("workmates")} == {"here", "there"}
    scoped = retriever.invoke("workmates", project="/src/here")
    assert [d.id for d in scoped] == ["here"]
    assert scoped[0].metadata["search_mode"] == "hybrid"
    assert retriever.invoke("workmates", agent="gemini") == []
