"""Each importer keeps where a session happened (issue 35, item 4): the working directory, the
git branch and the agent, from the fixtures under ``tests/data`` (written from the formats'
public definitions); on both backends. A store filled before these columns existed gets them
from a re-import, which adds no message twice."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_fixtures import build_hermes_db

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.importers import (
    import_claude_code,
    import_codex,
    import_gemini,
    import_hermes,
    import_jsonl,
)
from langchain_session_recall.search.pipeline import search_sessions

DATA = Path(__file__).resolve().parents[1] / "data"
CODEX_MAIN = "019aa1c2-3b4d-7e5f-8a9b-0c1d2e3f4a5b"
CLAUDE_MAIN = "7d3f9a2e-4b1c-4e8a-9f2d-1a6b5c8e0f31"
GEMINI_MAIN = "a1b2c3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"


def _where(store: SessionBackend, sid: str) -> tuple[str | None, str | None, str | None]:
    session = store.get_session(sid)
    assert session is not None, sid
    return session.project, session.git_branch, session.agent


def _all_where(store: SessionBackend) -> set[tuple[str | None, str | None, str | None]]:
    ids = store.all_session_ids()
    return {(s.project, s.git_branch, s.agent) for s in store.get_sessions(ids).values()}


def test_codex_threads_keep_cwd_branch_and_agent(backend_store: SessionBackend) -> None:
    import_codex(backend_store, DATA / "codex")
    assert _all_where(backend_store) == {("/home/dev/photo-api", "fix/upload-timeout", "codex")}
    docs = SessionRecallRetriever(store=backend_store, k=5).invoke("", agent="codex")
    main = next(d for d in docs if d.id == CODEX_MAIN)
    assert main.metadata["resume"] == f"cd /home/dev/photo-api && codex resume {CODEX_MAIN}"


def test_claude_code_sessions_and_their_side_chains_keep_where(
    backend_store: SessionBackend,
) -> None:
    import_claude_code(backend_store, DATA / "claude_code")
    assert _where(backend_store, CLAUDE_MAIN) == ("/home/dev/shop-api", "main", "claude-code")
    children = [s for s in backend_store.all_session_ids() if s != CLAUDE_MAIN]
    assert children and all(
        _where(backend_store, c) == ("/home/dev/shop-api", "main", "claude-code") for c in children
    )
    import_claude_code(backend_store, DATA / "claude_code_subagents")
    photo = search_sessions(backend_store, "thumbnail", project="/home/dev/photo-web").sessions
    assert photo and all(
        _where(backend_store, r.root_id)[:2] == ("/home/dev/photo-web", "feat/thumbnails")
        for r in photo
    )
    assert search_sessions(backend_store, "thumbnail", project="/home/dev/shop-api").sessions == []


def test_gemini_reads_the_project_root_beside_its_chats(backend_store: SessionBackend) -> None:
    import_gemini(backend_store, DATA / "gemini" / "tmp")
    assert _where(backend_store, GEMINI_MAIN) == ("/home/dev/shop-api", None, "gemini")
    # the older hash-named folder has no .project_root: no directory, still Gemini's
    agents = {s.agent for s in backend_store.get_sessions(backend_store.all_session_ids()).values()}
    assert agents == {"gemini"}
    assert (None, None, "gemini") in _all_where(backend_store)


def test_generic_jsonl_sessions_are_the_jsonl_importer_s(backend_store: SessionBackend) -> None:
    import_jsonl(backend_store, DATA / "jsonl")
    assert {agent for _, _, agent in _all_where(backend_store)} == {"jsonl"}


def test_a_hermes_import_keeps_its_directories(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    build_hermes_db(path, 3)
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE sessions ADD COLUMN cwd TEXT")
        conn.execute("ALTER TABLE sessions ADD COLUMN git_branch TEXT")
        conn.execute("UPDATE sessions SET cwd = '/home/me/bot', git_branch = 'main'")
    with SessionStore(tmp_path / "mine.db") as store:
        import_hermes(store, path)
        assert _all_where(store) == {("/home/me/bot", "main", "hermes")}


def test_a_re_import_fills_where_into_sessions_imported_before(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with SessionStore(path) as store:
        first = import_codex(store, DATA / "codex")
    with sqlite3.connect(path) as conn:  # as the schema before version 5 kept them
        for column in ("cwd", "git_branch", "agent"):
            conn.execute(f"ALTER TABLE sessions DROP COLUMN {column}")
        conn.execute("UPDATE session_recall_meta SET value = '4' WHERE key = 'schema_version'")
    with SessionStore(path) as store:
        assert _all_where(store) == {(None, None, None)}
        again = import_codex(store, DATA / "codex")
        assert again.messages == 0 and again.already_imported == first.messages
        assert _all_where(store) == {("/home/dev/photo-api", "fix/upload-timeout", "codex")}
        assert store.check().ok
