"""Bad option values, bad databases, foreign files: a clear message and a documented exit code,
never a traceback or a library's raw error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_cli
from hermes_fixtures import build_hermes_db

from langchain_session_recall.cli import EXIT_DB, EXIT_USAGE

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        (["-k", "-1"], "-k"),
        (["-k", "0"], "-k"),
        (["-k", "many"], "-k"),
        (["--chars", "10"], "--chars"),
        (["--chars", "-5"], "--chars"),
        (["--role", "usr"], "--role"),
        (["--after", "last week"], "--after"),
        (["--before", "2026-13-45"], "--before"),
    ],
)
def test_bad_search_option_values(demo_db: str, extra: list[str], option: str) -> None:
    for command in (["search", "nginx"], ["recent"]):
        result = run_cli(*command, "--db", demo_db, *extra)
        assert result.code == EXIT_USAGE, (command, extra, result.err)
        assert option in result.err, result.err
        for raw in ("validation error", "pydantic", "Traceback", "errors.pydantic.dev"):
            assert raw not in result.err


def test_bad_import_and_show_option_values(demo_db: str, tmp_path: Path) -> None:
    target = str(tmp_path / "r.db")
    result = run_cli(
        "import", "jsonl", str(DATA / "jsonl"), "--db", target, "--show-problems", "-1"
    )
    assert result.code == EXIT_USAGE and "--show-problems" in result.err
    result = run_cli("import", "nonsense", "x", "--db", target)
    assert result.code == EXIT_USAGE and "nonsense" in result.err
    assert not Path(target).exists()  # nothing was created by a refused command


def test_large_k_is_clamped_not_refused(demo_db: str) -> None:
    result = run_cli("recent", "--db", demo_db, "-k", "50", "--json")
    assert result.code == 0 and result.out.count('"session_id"') == 5
    # ... and said so (issue 34 item 7: never silently)
    assert "-k 50 is over the cap of 5 sessions: 5 shown" in result.err


def test_search_refuses_what_could_find_nothing(demo_db: str) -> None:
    """Issue 34 item 7: the retriever's checks, with their messages, on the command line."""
    result = run_cli("search", "nginx", "--db", demo_db, "-k", "0")
    assert result.code == EXIT_USAGE and "-k=0 asks for no session: ask for 1 to 5" in result.err
    result = run_cli("search", "nginx", "--db", demo_db, "--role", "bogus")
    assert result.code == EXIT_USAGE and "unknown role 'bogus'" in result.err
    for command in (["search", "nginx"], ["recent"]):
        result = run_cli(
            *command, "--db", demo_db, "--after", "2026-11-06", "--before", "2026-11-04"
        )
        assert result.code == EXIT_USAGE, (command, result.err)
        assert "no session starts in that range" in result.err


def test_search_takes_langchain_role_names(demo_db: str) -> None:
    human = run_cli("search", "CORS", "--db", demo_db, "--role", "human,ai", "--json")
    user = run_cli("search", "CORS", "--db", demo_db, "--role", "user,assistant", "--json")
    assert human.code == 0, human.err

    def found(out: str) -> list[str]:
        return [r["metadata"]["session_id"] for r in json.loads(out)]

    assert found(human.out) == found(user.out) != []


def test_searching_a_hermes_file_names_the_read_only_flag(tmp_path: Path) -> None:
    hermes = tmp_path / "state.db"
    build_hermes_db(hermes, 1)
    for argv in (["search", "docker"], ["recent"], ["show", "x"], ["stats"], ["check"]):
        result = run_cli(*argv, "--db", str(hermes))
        assert result.code == EXIT_DB, argv
        assert "--read-only" in result.err, result.err


def _bad_targets(tmp_path: Path) -> list[str]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    directory = tmp_path / "adir"
    directory.mkdir()
    return ["/dev/zero", str(fifo), str(directory), str(text), str(tmp_path / "missing.db")]


_READERS = [
    ["stats"],
    ["check"],
    ["search", "nginx"],
    ["recent"],
    ["show", "x"],
]


def test_a_db_that_is_not_a_session_database_exits_3(tmp_path: Path) -> None:
    for target in _bad_targets(tmp_path):
        commands = [*_READERS, ["demo"], ["import", "jsonl", str(DATA / "jsonl")]]
        if target.endswith("missing.db"):
            commands = _READERS  # demo and import create a missing database
        for argv in commands:
            for flags in ([], ["--json"]) if argv[0] != "demo" else ([],):
                result = run_cli(*argv, "--db", target, *flags)
                assert result.code == EXIT_DB, (argv, target, result.err)
                assert result.err.startswith("session-recall: "), result.err
                assert "Traceback" not in result.err
                assert result.out == "" or argv[0] == "demo"


def test_reading_commands_leave_an_empty_file_empty(tmp_path: Path) -> None:
    """A 0-byte file is no session database: reading commands say so and write no schema."""
    empty = tmp_path / "empty.db"
    empty.touch()
    for argv in _READERS:
        result = run_cli(*argv, "--db", str(empty))
        assert result.code == EXIT_DB, (argv, result.err)
        assert result.err == f"session-recall: {empty} is empty: not a session database\n"
        assert empty.stat().st_size == 0, argv
    result = run_cli("import", "jsonl", str(DATA / "jsonl"), "--db", str(empty))
    assert result.code in (0, 4), result.err  # an import may fill it
    assert run_cli("stats", "--db", str(empty)).code == 0


def test_stats_of_dev_zero_says_not_a_regular_file() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "langchain_session_recall", "stats", "--db", "/dev/zero"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == EXIT_DB
    assert proc.stderr == "session-recall: /dev/zero is not a regular file\n"


def test_an_unexpected_error_is_one_line_not_a_traceback(
    demo_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from langchain_session_recall.backends.base import SessionBackend
    from langchain_session_recall.cli import EXIT_INTERNAL

    def io_error(self: object, **_: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(SessionBackend, "stats", io_error)
    result = run_cli("stats", "--db", demo_db)
    assert result.code == EXIT_DB
    assert result.err == f"session-recall: {demo_db}: disk I/O error\n"

    def bug(self: object, **_: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(SessionBackend, "stats", bug)
    result = run_cli("stats", "--db", demo_db)
    assert result.code == EXIT_INTERNAL
    assert "Traceback" not in result.err and "RuntimeError: a bug" in result.err
    assert "SESSION_RECALL_DEBUG=1" in result.err
    monkeypatch.setenv("SESSION_RECALL_DEBUG", "1")
    with pytest.raises(RuntimeError):
        run_cli("stats", "--db", demo_db)


def test_postgres_without_its_extra_is_a_missing_feature_with_the_install_command(
    tmp_path: Path,
) -> None:
    # psycopg made unimportable in a child process: the store says which extra brings it (a
    # MissingFeatureError, like the hybrid extras) and the CLI exits 2 with that command.
    code = (
        "import sys; sys.modules['psycopg'] = None; sys.modules['psycopg_pool'] = None\n"
        "from langchain_session_recall import MissingFeatureError, open_store\n"
        "try:\n"
        "    open_store('postgresql://u@127.0.0.1:1/x')\n"
        "except MissingFeatureError as exc:\n"
        "    print('missing:', exc)\n"
        "from langchain_session_recall.cli import main\n"
        "sys.exit(main(['stats', '--db', 'postgresql://u@127.0.0.1:1/x']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.stdout.startswith("missing: the PostgreSQL backend needs psycopg 3"), done
    assert 'pip install "langchain-session-recall[postgres]"' in done.stdout
    assert done.returncode == EXIT_USAGE, done
    assert "langchain-session-recall[postgres]" in done.stderr and "Traceback" not in done.stderr
