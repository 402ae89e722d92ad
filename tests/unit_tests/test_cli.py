"""The session-recall CLI: import, stats, show, search/recent options and exit codes."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hermes_fixtures import EXTRA_SESSION_ID, build_hermes_db
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from langchain_session_recall import SessionStore
from langchain_session_recall.cli import (
    EXIT_DB,
    EXIT_EMPTY,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    main,
)

DATA = Path(__file__).resolve().parents[1] / "data"
CLAUDE_SESSION = "7d3f9a2e-4b1c-4e8a-9f2d-1a6b5c8e0f31"


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


@pytest.fixture
def hermes(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    build_hermes_db(path, 3)
    return path


@pytest.fixture
def db(tmp_path: Path, hermes: Path) -> str:
    path = str(tmp_path / "recall.db")
    assert run("import", "hermes", str(hermes), "--db", path)[0] == EXIT_OK
    assert run("import", "jsonl", str(DATA / "jsonl"), "--db", path)[0] == EXIT_PARTIAL
    assert run("import", "claude-code", str(DATA / "claude_code"), "--db", path)[0] == EXIT_PARTIAL
    return path


def test_import_prints_a_summary_and_reruns_add_nothing(tmp_path: Path, hermes: Path) -> None:
    target = str(tmp_path / "r.db")
    code, out = run("import", "hermes", str(hermes), "--db", target)
    assert code == EXIT_OK
    assert out.startswith("hermes: 19 sessions (19 new), 152 messages imported")
    code, out = run("import", "hermes", str(hermes), "--db", target, "--json")
    assert code == EXIT_OK
    report = json.loads(out)
    assert (report["new_sessions"], report["messages"], report["already_imported"]) == (0, 0, 152)


def test_import_with_skipped_input_exits_4_and_lists_the_problems(tmp_path: Path) -> None:
    code, out = run(
        "import", "claude-code", str(DATA / "claude_code"), "--db", str(tmp_path / "r.db")
    )
    assert code == EXIT_PARTIAL
    assert "skipped 1 (1 not valid JSON)" in out
    assert f"skipped {CLAUDE_SESSION}.jsonl:17: not valid JSON" in out


def test_import_errors_have_distinct_exit_codes(
    tmp_path: Path, hermes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = str(tmp_path / "r.db")
    assert run("import", "jsonl", str(tmp_path / "missing.jsonl"), "--db", target)[0] == EXIT_USAGE
    assert "no such file" in capsys.readouterr().err
    assert run("import", "langgraph", str(hermes), "--db", target)[0] == EXIT_USAGE
    assert "not a LangGraph SQLite checkpointer" in capsys.readouterr().err
    # Importing *into* someone else's database is refused: it is not ours to write.
    other = str(tmp_path / "other.db")
    build_hermes_db(other, 1)
    assert run("import", "jsonl", str(DATA / "jsonl"), "--db", other)[0] == EXIT_DB
    assert run("import", "nonsense", "x", "--db", target)[0] == EXIT_USAGE
    assert run("import", "jsonl", "--db", target)[0] == EXIT_USAGE  # no default path for jsonl
    assert "Missing argument 'PATH'" in capsys.readouterr().err
    assert run("import", "hermes", str(hermes), "--db", target, "--source", "x")[0] == EXIT_USAGE


def test_stats_reports_counts_sources_dates_and_size(db: str) -> None:
    code, out = run("stats", "--db", db)
    assert code == EXIT_OK
    lines = dict(line.split(None, 1) for line in out.strip().splitlines())
    assert lines["Sessions"] == "24 (20 root)"
    assert lines["Messages"] == str(152 + 7 + 10)
    assert "claude-code 2" in lines["Sources"] and "support-bot 1" in lines["Sources"]
    assert lines["Dates"] == "2026-10-20 .. 2026-11-29"
    assert "Index" not in lines  # stats is cheap: the integrity check is `check`
    code, out = run("stats", "--db", db, "--json")
    stats = json.loads(out)
    assert stats["size_bytes"] > 0 and stats["sources"]["cli"] == 10


def test_stats_of_one_user(tmp_path: Path) -> None:
    """``stats --user`` counts that tenant's sessions and messages only, as search scopes."""
    db = str(tmp_path / "tenants.db")
    with SessionStore(db) as store:
        for sid, user, n in (("a1", "ana", 2), ("a2", "ana", 1), ("b1", "bob", 4)):
            store.add_session(sid, user_id=user, started_at=1_780_000_000.0)
            store.add_messages(sid, [{"role": "user", "content": "hello"}] * n)
    code, out = run("stats", "--db", db, "--user", "ana", "--json")
    stats = json.loads(out)
    assert code == EXIT_OK
    assert (stats["user_id"], stats["sessions"], stats["messages"]) == ("ana", 2, 3)
    code, out = run("stats", "--db", db, "--user", "ana")
    lines = dict(line.split(None, 1) for line in out.strip().splitlines())
    assert (lines["User"], lines["Sessions"], lines["Messages"]) == ("ana", "2 (2 root)", "3")
    assert json.loads(run("stats", "--db", db, "--json")[1])["messages"] == 7


def test_check_reports_a_healthy_store_and_finds_a_damaged_index(db: str) -> None:
    import sqlite3

    code, out = run("check", "--db", db)
    assert code == EXIT_OK
    assert "ok" in out.splitlines()[0] and "checked full-text index messages_fts" in out
    # Another client writes a message with the index trigger gone: the index misses it.
    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER messages_fts_ai")
    sid = conn.execute("SELECT id FROM sessions LIMIT 1").fetchone()[0]
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'x', 1)",
        (sid,),
    )
    conn.commit()
    conn.close()
    code, out = run("check", "--db", db, "--json")
    report = json.loads(out)
    assert code == EXIT_DB and report["ok"] is False
    problems = " ".join(report["problems"])
    assert "messages_fts is damaged" in problems and "rebuild" in problems
    assert "message_count disagrees" in problems


def test_stats_on_a_missing_file_exits_3(tmp_path: Path) -> None:
    assert run("stats", "--db", str(tmp_path / "nope.db"))[0] == EXIT_DB


def test_stats_of_a_hermes_file_read_only(hermes: Path) -> None:
    code, out = run("stats", "--db", str(hermes), "--read-only", "--json")
    assert code == EXIT_OK
    stats = json.loads(out)
    assert (stats["layout"], stats["sessions"]) == ("foreign", 19)
    code, out = run("check", "--db", str(hermes), "--read-only", "--json")
    report = json.loads(out)
    assert code == EXIT_OK and report["ok"] is True
    assert "full-text index: skipped (the store is open read-only)" in report["checked"]


def test_show_prints_the_transcript_with_sub_sessions(db: str) -> None:
    code, out = run("show", CLAUDE_SESSION, "--db", db)
    assert code == EXIT_OK
    assert out.startswith("Fix flaky checkout test (Redis lock timeout)\n")
    assert f"--- session {CLAUDE_SESSION}/agent-s0000001 ---" in out
    assert "[TOOL:Grep #" in out
    code, only = run("show", CLAUDE_SESSION, "--db", db, "--no-children")
    assert "agent-s0000001 ---" not in only and "[TOOL:Grep" not in only
    code, raw = run("show", EXTRA_SESSION_ID, "--db", db, "--json")
    payload = json.loads(raw)
    assert payload["session"]["id"] == EXTRA_SESSION_ID
    assert [m["role"] for m in payload["messages"]][:2] == ["user", "assistant"]


def test_show_unknown_session_exits_1(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("show", "no-such-session", "--db", db)[0] == EXIT_EMPTY
    assert "no session 'no-such-session'" in capsys.readouterr().err


def test_search_source_role_and_date_filters(db: str) -> None:
    code, out = run("search", "cart lock", "--db", db, "--json")
    assert code == EXIT_OK
    assert json.loads(out)[0]["metadata"]["session_id"] == CLAUDE_SESSION
    code, out = run("search", "cart lock", "--db", db, "--source", "cli,telegram", "--json")
    # nothing there says "cart" or "lock": whatever comes back is a labelled typo expansion
    assert all(d["metadata"]["source"] in {"cli", "telegram"} for d in json.loads(out or "[]"))
    assert all(d["metadata"]["query_expansions"] for d in json.loads(out or "[]"))
    code, out = run("search", "cart lock", "--db", db, "--source", "claude-code", "--json")
    assert [d["metadata"]["source"] for d in json.loads(out)] == ["claude-code"]
    # "nx=True" appears only in a tool result: a user/assistant-only search misses it.
    assert run("search", "nx", "--db", db)[0] == EXIT_OK
    assert run("search", "nx", "--db", db, "--role", "user,assistant")[0] == EXIT_EMPTY
    mine = ("--db", db, "--source", "claude-code")
    assert run("search", "cart lock", *mine, "--after", "2026-11-19")[0] == EXIT_EMPTY
    assert run("search", "cart lock", *mine, "--before", "2026-11-19")[0] == EXIT_OK


def test_recent_with_source_filter(db: str) -> None:
    code, out = run("recent", "--db", db, "--source", "support-bot", "--json", "-k", "5")
    assert code == EXIT_OK
    assert [d["metadata"]["session_id"] for d in json.loads(out)] == ["sup-1"]


def test_bad_date_is_a_usage_error(db: str) -> None:
    assert run("search", "x", "--db", db, "--after", "last week")[0] == EXIT_USAGE


def test_summarize_sends_the_sessions_to_the_named_model(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: dict[str, Any] = {}

    def fake_chat_openai(**kwargs: Any) -> GenericFakeChatModel:
        built.update(kwargs)
        return GenericFakeChatModel(
            messages=iter([AIMessage("The cart lock TTL (500 ms) was too short under CI load.")])
        )

    monkeypatch.setattr("langchain_openai.ChatOpenAI", fake_chat_openai)
    code, out = run(
        "search", "cart lock", "--db", db, "-k", "1", "--json", "--summarize",
        "--model", "local-model", "--base-url", "http://127.0.0.1:9/v1",
    )  # fmt: skip
    assert code == EXIT_OK
    assert (built["model"], built["base_url"]) == ("local-model", "http://127.0.0.1:9/v1")
    [doc] = json.loads(out)
    # The model's recap, with the message supporting it cited by the summarizer.
    assert doc["content"] == "The cart lock TTL (500 ms) was too short under CI load [#165]."
    assert doc["metadata"]["session_id"] == CLAUDE_SESSION
    assert doc["metadata"]["summary_status"] == "summarized"


def test_summarize_takes_the_endpoint_from_the_environment_as_the_mcp_server_does(
    db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One recipe for a chat model from the environment: ``OPENAI_BASE_URL`` of a server that
    needs no key is enough, as for ``mcp --model``; with neither it, a key nor ``--base-url``,
    a usage error says what to set."""
    built: dict[str, Any] = {}

    def fake_chat_openai(**kwargs: Any) -> GenericFakeChatModel:
        built.update(kwargs)
        return GenericFakeChatModel(messages=iter([AIMessage("The cart lock TTL was too short.")]))

    monkeypatch.setattr("langchain_openai.ChatOpenAI", fake_chat_openai)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    argv = ("search", "cart lock", "--db", db, "-k", "1", "--json", "--summarize", "--model", "m")
    assert run(*argv)[0] == EXIT_USAGE
    assert "OPENAI_API_KEY" in capsys.readouterr().err and not built
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert run(*argv)[0] == EXIT_OK
    assert (built["model"], built["base_url"]) == ("m", "http://127.0.0.1:9/v1")
    assert built["api_key"].get_secret_value() == "not-needed"


def test_summarize_needs_a_model(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("search", "cart lock", "--db", db, "--summarize")[0] == EXIT_USAGE
    assert "--summarize needs --model" in capsys.readouterr().err


def test_help_has_examples_and_exit_codes() -> None:
    code, text = run("--help")
    assert code == EXIT_OK
    assert "session-recall import hermes" in text and "Exit codes (" in text
    code, text = run("import", "--help")
    assert code == EXIT_OK
    assert "Re-running an import adds only what is new" in text
    assert run("search", "-h")[1].startswith("Usage: session-recall search [OPTIONS] QUERY")


def test_demo_still_runs(tmp_path: Path) -> None:
    code, out = run("demo", "--db", str(tmp_path / "demo.db"), "--query", "CORS error", "-k", "1")
    assert code == EXIT_OK
    assert "━━ search: 'CORS error'" in out and "recent sessions" in out


def test_python_dash_m_runs_the_cli(tmp_path: Path) -> None:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "langchain_session_recall", "stats", "--db", str(tmp_path / "x.db")],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert proc.returncode == EXIT_DB
    assert "no such file" in proc.stderr


def test_import_defaults_to_the_usual_locations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-dev-shop-api"
    project.mkdir(parents=True)
    for f in (DATA / "claude_code" / "-home-dev-shop-api").iterdir():
        (project / f.name).write_bytes(f.read_bytes())
    (home / ".hermes").mkdir()
    build_hermes_db(home / ".hermes" / "state.db", 1)
    monkeypatch.setenv("HOME", str(home))
    target = str(tmp_path / "r.db")
    assert run("import", "claude-code", "--db", target)[0] == EXIT_PARTIAL
    code, out = run("import", "hermes", "--db", target)
    assert code == EXIT_OK and "19 new" in out


def test_import_sqlite_store_into_another_file(tmp_path: Path) -> None:
    from langchain_session_recall.demo import build_demo_store

    src = tmp_path / "old.db"
    build_demo_store(src).close()
    dst = str(tmp_path / "new.db")
    code, out = run("import", "sqlite", str(src), "--db", dst)
    assert code == EXIT_OK and "18 sessions (18 new)" in out
    code, out = run("search", "pgbouncer", "--db", dst, "--json", "-k", "1")
    assert json.loads(out)[0]["metadata"]["session_id"] == "20261105_112048_f00d42"


# --------------------------------------------------------------------------- tenants (issue 18)


@pytest.fixture
def tenants(tmp_path: Path) -> str:
    """alice's root a1 with her own child a2 and bob's child b1 inside the chain."""

    path = tmp_path / "tenants.db"
    with SessionStore(path) as store:
        store.add_session("a1", title="alice deploy", user_id="alice", started_at=100.0)
        store.add_session("a2", parent_session_id="a1", user_id="alice", started_at=110.0)
        store.add_session("b1", parent_session_id="a1", user_id="bob", started_at=120.0)
        store.add_messages(
            "a1", [{"role": "user", "content": "alice rollout plan", "timestamp": 101}]
        )
        store.add_messages("a2", [{"role": "user", "content": "alice subtask", "timestamp": 111}])
        store.add_messages(
            "b1", [{"role": "user", "content": "bob secret rollout", "timestamp": 121}]
        )
    return str(path)


def test_show_is_tenant_scoped_inside_chains(tenants: str) -> None:
    code, out = run("show", "a1", "--db", tenants, "--user", "alice")
    assert code == EXIT_OK
    assert "alice subtask" in out and "bob" not in out
    code, out = run("show", "a1", "--db", tenants, "--user", "alice", "--json")
    payload = json.loads(out)
    assert payload["sessions"] == ["a1", "a2"]
    assert {m["session_id"] for m in payload["messages"]} == {"a1", "a2"}
    # another user's session, or a chain rooted in another user's session, is not found
    assert run("show", "b1", "--db", tenants, "--user", "alice")[0] == EXIT_EMPTY
    assert run("show", "a1", "--db", tenants, "--user", "bob")[0] == EXIT_EMPTY
    # without --user (the store's owner), the whole chain
    code, out = run("show", "a1", "--db", tenants, "--json")
    assert json.loads(out)["sessions"] == ["a1", "a2", "b1"]


def test_every_read_command_takes_the_tenant_scope(tenants: str) -> None:
    for argv in (["search", "rollout"], ["recent"]):
        code, out = run(*argv, "--db", tenants, "--user", "alice", "--json")
        assert code == EXIT_OK
        assert "bob" not in out
        assert {d["metadata"]["user_id"] for d in json.loads(out)} == {"alice"}
    code, out = run("search", "rollout", "--db", tenants, "--user", "alice")
    assert "bob" not in out and "alice rollout" in out


# --------------------------------------------------------------------------- start-up


def test_search_loads_no_model_library(demo_db: str) -> None:
    """A plain search imports neither the OpenAI client nor LangChain, nor, on SQLite, the
    PostgreSQL backend (start-up time)."""
    import subprocess

    probe = (
        "import sys\n"
        "from langchain_session_recall.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "heavy = ('openai', 'langchain_openai', 'langchain_core', 'pydantic',\n"
        "         'langchain_session_recall.backends.postgres.store')\n"
        "print(sorted(m for m in heavy if m in sys.modules), code, file=sys.stderr)\n"
    )
    for extra in ([], ["--json"]):
        argv = ["search", "nginx", "--db", demo_db, *extra]
        proc = subprocess.run(
            [sys.executable, "-c", probe, *argv],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert proc.stderr.strip().splitlines()[-1] == "[] 0", proc.stderr


# --------------------------------------------------------------------------- progress


def test_import_progress_draws_a_bar_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(
        "import", "jsonl", str(DATA / "jsonl"), "--db", str(tmp_path / "r.db"), "--progress"
    )
    assert code == EXIT_PARTIAL
    err = capsys.readouterr().err
    assert "jsonl import" in err and "━" in err and "3/3" in err
    assert "━" not in out  # the report on stdout stays plain


def test_an_import_that_writes_nothing_creates_no_database(tmp_path: Path) -> None:
    # It left an empty database behind, which the next command took for a real one.
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"text": "no role here"}\n{oops\n', encoding="utf-8")
    target = tmp_path / "new.db"
    assert run("import", "jsonl", str(junk), "--db", str(target))[0] == EXIT_PARTIAL
    assert run("import", "jsonl", str(tmp_path / "missing.jsonl"), "--db", str(target))[0] == (
        EXIT_USAGE
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junk.jsonl"]
    # An existing database is never removed, even when the import wrote nothing to it.
    good = tmp_path / "good.jsonl"
    good.write_text('{"role": "user", "content": "hello"}\n', encoding="utf-8")
    assert run("import", "jsonl", str(good), "--db", str(target))[0] == EXIT_OK
    assert run("import", "jsonl", str(junk), "--db", str(target))[0] == EXIT_PARTIAL
    assert target.exists()


@pytest.mark.parametrize("kind", ["jsonl", "claude-code"])
def test_follow_symlinks_opts_in_to_files_outside_the_directory(tmp_path: Path, kind: str) -> None:
    source = DATA / ("jsonl" if kind == "jsonl" else "claude_code")
    outside = tmp_path / "outside"
    inside = tmp_path / "inside"
    outside.mkdir()
    inside.mkdir()
    for f in source.rglob("*.jsonl"):  # the real files live outside; the directory links to them
        target = outside / f.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.read_bytes())
        link = inside / f.relative_to(source)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
    code, out = run("import", kind, str(inside), "--db", str(tmp_path / "a.db"), "--json")
    report = json.loads(out)
    assert code == EXIT_PARTIAL
    assert report["messages"] == 0 and "symlink" in " ".join(report["problems"])
    code, out = run(
        "import", kind, str(inside), "--db", str(tmp_path / "b.db"), "--json", "--follow-symlinks"
    )
    assert json.loads(out)["messages"] > 0 and code in (EXIT_OK, EXIT_PARTIAL)


def test_recent_collapses_automation_runs_unless_asked(demo_db: str) -> None:
    """Issue 16: four identical "Nightly disk usage check" cron runs are one job."""
    code, out = run("recent", "--db", demo_db, "-k", "5", "--json")
    titles = [d["metadata"]["title"] for d in json.loads(out)]
    assert titles.count("Nightly disk usage check") == 1, titles
    code, out = run("recent", "--db", demo_db, "-k", "5", "--json", "--all-runs")
    titles = [d["metadata"]["title"] for d in json.loads(out)]
    assert titles.count("Nightly disk usage check") == 4, titles
    code, out = run("demo", "--db", demo_db, "--json", "-k", "5")
    assert code == EXIT_OK
    titles = [d["metadata"]["title"] for d in json.loads(out)["recent"]]
    assert titles.count("Nightly disk usage check") == 1, titles


def test_version_prints_the_installed_version() -> None:
    from importlib.metadata import version

    code, out = run("--version")
    assert code == 0
    assert out == f"session-recall {version('langchain-session-recall')}\n"


def test_the_demo_shows_the_best_hit_in_full_and_the_rest_in_one_line_each(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "demo.db")
    code, out = run("demo", "--db", db)  # the README's command: 4 searches, 3 sessions each
    assert code == EXIT_OK
    lines = out.splitlines()
    assert len(lines) < 200, len(lines)  # was 491: a screenful per question, not five
    searches = out.split("━━ search: ")[1:]
    assert len(searches) == 4
    assert "session-recall show ID" in out
    for section in searches:
        query = section.split("\n", 1)[0].strip("'")
        hits = json.loads(run("search", query, "--db", db, "--json")[1])
        assert 1 <= len(hits) <= 3, query
        assert section.count("╭") == 1  # one panel: the best hit
        for rank, hit in enumerate(hits, 1):  # every hit still named, with its id and rank
            assert f"{rank}. " in section and hit["id"] in section, (query, hit["id"])


@pytest.mark.parametrize("command", ["search", "recent"])
def test_the_search_options_take_their_defaults_from_the_request(command: str) -> None:
    """``search/request.py`` holds every default; the CLI shows the same ones."""
    from langchain_session_recall.cli import app
    from langchain_session_recall.search.request import MIN_MAX_CHARS, SearchRequest

    params = {p.name: p for p in app.commands[command].params}
    request = SearchRequest("x")
    assert params["k"].default == request.k
    assert tuple(str(params["exclude_source"].default).split(",")) == request.exclude_sources
    if command == "search":
        assert getattr(params["chars"].type, "min", None) == MIN_MAX_CHARS
