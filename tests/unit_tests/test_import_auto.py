"""``import auto`` and ``sync``: every agent's history found in one home directory (assembled
from the importers' fixtures, ``agent_home.py``), imported in one go; a second run reads only
what changed, keeps what the agent deleted, and warns once about retention settings. Both
backends."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_home import LOCATIONS, build_agent_home
from cli_support import run_cli
from store_targets import StoreFactory

from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.cli import EXIT_OK, EXIT_PARTIAL
from langchain_session_recall.importers import IMPORTERS, auto
from langchain_session_recall.importers.auto import (
    aimport_auto,
    async_sync,
    import_auto,
    sync,
)
from langchain_session_recall.importers.discovery import discover_sources
from langchain_session_recall.retriever import SessionRecallRetriever

KINDS = ["hermes", "claude-code", "codex", "gemini", "opencode", "cursor"]
WORD = re.compile(r"[A-Za-z]{9,}")


@pytest.fixture(scope="module")
def fixture_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_agent_home(tmp_path_factory.mktemp("fixtures") / "home")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home of its own for a test that changes files."""
    return build_agent_home(tmp_path / "home")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, Any]]]:
    """Every importer call ``import auto`` / ``sync`` makes: ``(kind, what it was given)``, the
    files it was told to read (``files=``, a tuple) in place of its path when there are some."""
    seen: list[tuple[str, Any]] = []

    def spy(kind: str, importer: Callable[..., Any]) -> Callable[..., Any]:
        def call(store: SessionBackend, target: Any, **options: Any) -> Any:
            only = options.get("files")
            seen.append((kind, target if only is None else tuple(only)))
            return importer(store, target, **options)

        return call

    for kind, importer in list(auto._IMPORT.items()):
        monkeypatch.setitem(auto._IMPORT, kind, spy(kind, importer))
    yield seen


def _direct(store: SessionBackend, home: Path) -> None:
    """Each source imported by its own importer, from where ``import auto`` should find it."""
    for kind in KINDS:
        if kind == "cursor":
            editor = home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"
            IMPORTERS[kind](store, [home / LOCATIONS[kind], editor])
        else:
            IMPORTERS[kind](store, home / LOCATIONS[kind])


def _sessions(store: SessionBackend) -> list[Any]:
    return list(store.get_sessions(store.all_session_ids()).values())


def _contents(store: SessionBackend) -> dict[str, tuple[str | None, list[str]]]:
    return {
        s.id: (s.parent_session_id, [m.content for m in store.get_messages(s.id)])
        for s in _sessions(store)
    }


def test_discovery_finds_every_agent_with_a_place_of_its_own(fixture_home: Path) -> None:
    found = discover_sources(fixture_home)
    assert [s.kind for s in found] == KINDS
    cursor = found[-1]
    assert cursor.agent == "Cursor agent + IDE" and len(cursor.paths) == 2
    assert all(s.sessions > 0 and s.size > 0 for s in found)
    assert discover_sources(fixture_home / ".codex") == []  # nothing where nothing is


def test_import_auto_imports_what_each_importer_imports(
    store_factory: StoreFactory, fixture_home: Path
) -> None:
    auto_store, direct = store_factory.open("auto"), store_factory.open("direct")
    result = import_auto(auto_store, fixture_home)
    _direct(direct, fixture_home)
    assert [s.source.kind for s in result.sources] == KINDS
    assert all(s.report is not None and s.report.messages > 0 for s in result.sources)
    assert _contents(auto_store) == _contents(direct)
    assert result.partial  # the fixtures hold malformed lines: reported, the rest imported
    assert any(p.startswith("codex: ") for p in result.problems)


def test_lineage_is_collapsed_and_tool_calls_are_searchable(
    store_factory: StoreFactory, fixture_home: Path
) -> None:
    store = store_factory.open()
    import_auto(store, fixture_home)
    retriever = SessionRecallRetriever(store=store, k=20, max_k=20)
    children = [s for s in _sessions(store) if s.parent_session_id]
    agents_with_children = {s.source for s in children}
    assert {"claude-code", "codex", "gemini", "opencode", "cursor"} <= agents_with_children
    for child in children:
        words = [w for m in store.get_messages(child.id) for w in WORD.findall(m.content)]
        if not words:
            continue
        root = store.lineage(child.id)[-1]
        docs = retriever.invoke(" ".join(words[:3]))
        found = {d.metadata["session_id"]: d.metadata for d in docs}
        assert root in found, child.id
        assert child.id in found[root]["matched_session_ids"]
        assert child.id not in found  # folded into its root, not a hit of its own
    tool_agents = set()
    for session in _sessions(store):
        for message in store.get_messages(session.id):
            if not message.tool_calls:
                continue
            words = [w for c in message.tool_calls for w in _argument_words(c)]
            docs = retriever.invoke(" ".join(words[:3])) if words else []
            if any(session.id in d.metadata["matched_session_ids"] for d in docs):
                tool_agents.add(session.source)
    assert {"claude-code", "codex", "gemini", "opencode", "cursor"} <= tool_agents


def _argument_words(call: dict[str, Any]) -> list[str]:
    """Words of a tool call's argument values (not its keys)."""
    raw = call.get("function", {}).get("arguments")
    pending = [json.loads(raw) if isinstance(raw, str) else raw]
    words: list[str] = []
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending += list(value.values())
        elif isinstance(value, list):
            pending += value
        elif isinstance(value, str):
            words += re.findall(r"[A-Za-z]{4,}", value)
    return words


def test_sync_after_import_reads_nothing_when_nothing_changed(
    store_factory: StoreFactory, fixture_home: Path, calls: list[tuple[str, Any]]
) -> None:
    store = store_factory.open()
    import_auto(store, fixture_home)
    before = _contents(store)
    calls.clear()
    again = sync(store, fixture_home)
    assert calls == []
    assert all(s.unchanged for s in again.sources)
    assert again.summary().startswith("6 sources unchanged")
    assert _contents(store) == before


def test_sync_on_a_new_store_imports_everything(
    store_factory: StoreFactory, fixture_home: Path
) -> None:
    synced, imported = store_factory.open("synced"), store_factory.open("imported")
    sync(synced, fixture_home)
    import_auto(imported, fixture_home)
    assert _contents(synced) == _contents(imported)


def test_sync_reads_only_the_transcript_that_grew(
    store_factory: StoreFactory, home: Path, calls: list[tuple[str, Any]]
) -> None:
    store = store_factory.open()
    import_auto(store, home)
    transcript = next((home / LOCATIONS["claude-code"]).rglob("7d3f9a2e-*.jsonl"))
    entry = {
        "type": "user",
        "uuid": "u-appended-1",
        "sessionId": "7d3f9a2e-4b1c-4e8a-9f2d-1a6b5c8e0f31",
        "timestamp": "2026-11-30T10:00:00Z",
        "message": {"role": "user", "content": "does the appended zeppelin line arrive?"},
    }
    with transcript.open("a") as fh:
        fh.write(json.dumps(entry) + "\n")
    calls.clear()
    result = sync(store, home)
    assert calls == [("claude-code", (transcript,))]
    grown = next(s for s in result.sources if s.source.kind == "claude-code")
    assert grown.report is not None and grown.report.messages == 1
    assert grown.files_read == 1
    contents = store.get_messages("7d3f9a2e-4b1c-4e8a-9f2d-1a6b5c8e0f31")
    assert contents[-1].content == "does the appended zeppelin line arrive?"
    calls.clear()
    sync(store, home)
    assert calls == []


def test_a_changed_database_or_index_is_read_whole(
    store_factory: StoreFactory, home: Path, calls: list[tuple[str, Any]]
) -> None:
    store = store_factory.open()
    import_auto(store, home)
    db = home / LOCATIONS["opencode"]
    conn = sqlite3.connect(db)
    conn.execute("UPDATE session SET time_updated = time_updated + 1")
    conn.commit()
    conn.close()
    index = home / LOCATIONS["codex"] / "session_index.jsonl"
    with index.open("a") as fh:
        fh.write('{"id": "0199f0a1-2b3c-7d4e-8f5a-6b7c8d9e0f1a", "thread_name": "x"}\n')
    calls.clear()
    sync(store, home)
    assert sorted(calls) == [("codex", home / ".codex"), ("opencode", db)]


def test_sessions_stay_after_the_agent_deletes_its_files(
    store_factory: StoreFactory, home: Path
) -> None:
    import shutil

    store = store_factory.open()
    import_auto(store, home)
    before = _contents(store)
    shutil.rmtree(home / LOCATIONS["claude-code"])
    for rollout in (home / LOCATIONS["codex"] / "sessions").rglob("*.jsonl"):
        rollout.unlink()
    result = sync(store, home)
    assert "claude-code" not in [s.source.kind for s in result.sources]
    assert _contents(store) == before


def test_retention_is_warned_about_once_per_setting(
    store_factory: StoreFactory, home: Path
) -> None:
    store = store_factory.open()
    first = sync(store, home)
    assert len(first.warnings) == 1
    assert "Claude Code deletes transcripts older than 30 days" in first.warnings[0]
    assert "30 by default" in first.warnings[0]
    assert sync(store, home).warnings == []
    settings = home / ".claude" / "settings.json"
    settings.write_text(json.dumps({"cleanupPeriodDays": 7}))
    assert [w[:50] for w in sync(store, home).warnings] == [
        "Claude Code deletes transcripts older than 7 days "
    ]
    settings.write_text(json.dumps({"cleanupPeriodDays": 100_000}))
    assert sync(store, home).warnings == []
    policy = {"enabled": True, "maxAge": "14d"}
    gemini = home / ".gemini" / "settings.json"
    gemini.write_text(json.dumps({"general": {"sessionRetention": policy}}))
    assert [w[:54] for w in sync(store, home).warnings] == [
        "Gemini CLI deletes transcripts older than 14 days (gen"
    ]
    assert sync(store, home).warnings == []


def test_the_retention_warning_names_the_settings_file_of_the_home_given(
    store_factory: StoreFactory, home: Path
) -> None:
    (warning,) = sync(store_factory.open(), home).warnings
    settings = home / ".claude" / "settings.json"
    assert f"cleanupPeriodDays in {settings}" in warning  # (the test's home is not ~)
    assert "~/.claude" not in warning


def test_gemini_settings_with_comments_and_trailing_commas_are_read(
    store_factory: StoreFactory, home: Path
) -> None:
    (home / ".gemini" / "settings.json").write_text(
        "// Gemini CLI settings (JSONC)\n"
        "{\n"
        '  "ui": {"theme": "GitHub"}, /* the "maxAge" below is mine */\n'
        '  "general": {\n'
        '    "sessionRetention": {"enabled": true, "maxAge": "7d", "maxCount": 20,},\n'
        '    "homepage": "https://example.com//not-a-comment",\n'
        "  },\n"
        "}\n"
    )
    warnings = sync(store_factory.open(), home).warnings
    gemini = [w for w in warnings if w.startswith("Gemini CLI")]
    assert [w[:72] for w in gemini] == [
        "Gemini CLI deletes transcripts older than 7 days or beyond the 20 most r"
    ]
    assert f"general.sessionRetention in {home / '.gemini' / 'settings.json'}" in gemini[0]


def test_a_source_that_cannot_be_read_costs_only_itself(
    store_factory: StoreFactory, home: Path, calls: list[tuple[str, Any]]
) -> None:
    (home / LOCATIONS["opencode"]).write_bytes(b"not a database at all" * 100)
    store = store_factory.open()
    result = sync(store, home)
    broken = next(s for s in result.sources if s.source.kind == "opencode")
    assert broken.error is not None and "opencode" in broken.error.lower()
    assert result.partial
    assert sum(1 for s in result.sources if s.report and s.report.messages) == 5
    calls.clear()
    sync(store, home)
    assert [kind for kind, _ in calls] == ["opencode"]  # tried again, the others unchanged


def test_a_read_only_store_is_refused_and_left_as_it_was(
    store_factory: StoreFactory, fixture_home: Path
) -> None:
    from langchain_session_recall.errors import ReadOnlyStoreError

    import_auto(store_factory.open("rw"), fixture_home)
    reader = store_factory.open("rw", read_only=True)
    before = _contents(reader)
    (fixture_home / ".claude" / "settings.json").write_text('{"cleanupPeriodDays": 3}')
    try:
        with pytest.raises(ReadOnlyStoreError):
            sync(reader, fixture_home)
    finally:
        (fixture_home / ".claude" / "settings.json").unlink()
    assert _contents(reader) == before


def test_dry_run_lists_without_writing(tmp_path: Path, fixture_home: Path) -> None:
    db = tmp_path / "recall.db"
    result = run_cli("import", "auto", "--home", str(fixture_home), "--dry-run", "--db", str(db))
    assert result.code == EXIT_OK, result.err
    for agent in ("Hermes", "Claude Code", "Codex", "Gemini CLI", "OpenCode", "Cursor"):
        assert agent in result.out
    assert not db.exists()
    listed = run_cli("import", "auto", "--home", str(fixture_home), "--dry-run", "--json")
    sources = json.loads(listed.out)["sources"]
    assert [s["kind"] for s in sources] == KINDS
    assert all(s["sessions"] > 0 and s["bytes"] > 0 for s in sources)
    assert import_auto_dry(fixture_home) == [s["sessions"] for s in sources]


def import_auto_dry(home: Path) -> list[int]:
    from langchain_session_recall import SessionStore

    result = import_auto(SessionStore(":memory:"), home, dry_run=True)
    return [s.source.sessions for s in result.sources]


def test_cli_import_auto_then_sync(store_factory: StoreFactory, fixture_home: Path) -> None:
    target = store_factory.target().db
    first = run_cli("import", "auto", "--home", str(fixture_home), "--db", target)
    assert first.code == EXIT_PARTIAL  # the fixtures' malformed lines
    assert "codex: 4 sessions (4 new)" in first.out and "Claude Code" in first.out
    second = run_cli("sync", "--home", str(fixture_home), "--db", target, "--json")
    assert second.code == EXIT_OK, second.err
    report = json.loads(second.out)
    assert [s["report"] for s in report["sources"]] == [None] * 6
    assert len(report["warnings"]) == 1
    third = run_cli("sync", "--home", str(fixture_home), "--db", target)
    assert third.code == EXIT_OK and third.out.strip() == "6 sources unchanged"


def test_one_progress_bar_for_every_source(
    fixture_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_session_recall import SessionStore

    store = SessionStore(":memory:")
    import_auto(store, fixture_home, show_progress=True)
    drawn = capsys.readouterr().err
    assert drawn.count("import auto") == 1
    assert " import " not in drawn.replace("import auto", "")  # no importer's own bar
    sync(store, fixture_home, show_progress=True)
    assert capsys.readouterr().err == ""  # nothing to import: no bar


def test_cli_import_auto_needs_a_database_unless_dry_run(fixture_home: Path) -> None:
    result = run_cli("import", "auto", "--home", str(fixture_home))
    assert result.code == 2
    assert "--db" in result.err


def test_default_home_honours_the_agents_own_variables(
    tmp_path: Path, fixture_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    empty_home = tmp_path / "me"
    empty_home.mkdir()
    codex = tmp_path / "elsewhere" / "codex"
    shutil.copytree(fixture_home / LOCATIONS["codex"], codex)
    monkeypatch.setenv("HOME", str(empty_home))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    for name in ("HERMES_HOME", "XDG_DATA_HOME", "OPENCODE_DB", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert [(s.kind, s.paths) for s in discover_sources()] == [("codex", (codex,))]
    assert discover_sources(empty_home) == []  # an explicit home: only under it


def test_async_twins(store_factory: StoreFactory, fixture_home: Path) -> None:
    store = store_factory.open()
    first = asyncio.run(aimport_auto(store, fixture_home))
    assert sum(s.report.messages for s in first.sources if s.report) > 0
    second = asyncio.run(async_sync(store, fixture_home))
    assert all(s.unchanged for s in second.sources)
