"""A DSN's password never shows: not in repr, stats, CLI output, error messages, tracebacks or logs."""

from __future__ import annotations

import io
import logging
import traceback
from collections.abc import Iterator
from contextlib import redirect_stderr
from urllib.parse import urlsplit, urlunsplit

import pytest
from pg_support import PG_DSN, SKIP_PG, drop_schema

from langchain_session_recall.backends import describe_target, open_store
from langchain_session_recall.backends.postgres import PostgresSessionStore, redact_dsn
from langchain_session_recall.backends.postgres.dsn import scrub
from langchain_session_recall.cli import EXIT_DB, EXIT_OK, main
from langchain_session_recall.errors import NotASessionDatabaseError

PASSWORD = "Zq9-hunter2-secret"


def with_password(dsn: str, password: str = PASSWORD) -> str:
    """The test server's DSN with a password (the server trusts local users: it is ignored)."""
    parts = urlsplit(dsn)
    netloc = f"{parts.username}:{password}@{parts.hostname}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


@pytest.mark.parametrize(
    ("dsn", "password"),
    [
        (f"postgresql://app:{PASSWORD}@db:5432/recall", PASSWORD),
        (f"postgres://app:{PASSWORD}@db/recall?sslmode=require", PASSWORD),
        (f"postgresql://app@db/recall?password={PASSWORD}&sslmode=disable", PASSWORD),
        (f"host=db user=app password={PASSWORD} dbname=recall", PASSWORD),
        (f"host=db user=app password='{PASSWORD} x' dbname=recall", f"{PASSWORD} x"),
        ("postgresql://app:p%40ss%2Fw0rd@db/recall", "p@ss/w0rd"),
    ],
)
def test_redaction_removes_the_password_in_every_form(dsn: str, password: str) -> None:
    assert password not in redact_dsn(dsn) and "***" in redact_dsn(dsn)
    assert password not in scrub(f"driver said: {dsn} and {password}", dsn)


def test_describe_target_leaves_paths_alone() -> None:
    assert describe_target("/tmp/recall.db") == "/tmp/recall.db"


def _texts_of(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.DEBUG)
    yield caplog
    assert PASSWORD not in caplog.text


def test_unreachable_server_error_and_traceback_hide_the_password(
    logs: pytest.LogCaptureFixture,
) -> None:
    dsn = f"postgresql://app:{PASSWORD}@127.0.0.1:1/recall"
    with pytest.raises(NotASessionDatabaseError) as info:
        PostgresSessionStore(dsn, connect_timeout=1)
    assert PASSWORD not in _texts_of(info.value)
    assert "app:***@127.0.0.1:1" in str(info.value)


def test_malformed_dsn_error_hides_the_password(logs: pytest.LogCaptureFixture) -> None:
    dsn = f"postgresql://app:{PASSWORD}@127.0.0.1:notaport/recall"
    with pytest.raises(NotASessionDatabaseError) as info:
        PostgresSessionStore(dsn, connect_timeout=1)
    assert PASSWORD not in _texts_of(info.value)


def test_cli_errors_hide_the_password() -> None:
    dsn = f"postgresql://app:{PASSWORD}@127.0.0.1:1/recall"
    for argv in (
        ["stats", "--db", dsn],
        ["search", "x", "--db", dsn],
        ["import", "jsonl", "/nonexistent.jsonl", "--db", dsn],
    ):
        err, out = io.StringIO(), io.StringIO()
        with redirect_stderr(err):
            code = main(argv, out=out)
        assert code == EXIT_DB or argv[0] == "import", argv
        assert PASSWORD not in err.getvalue() + out.getvalue(), argv


@pytest.mark.parametrize("read_only", [False, True])
@pytest.mark.usefixtures("logs")
@pytest.mark.skipif(not PG_DSN, reason=SKIP_PG)
@pytest.mark.enable_socket
def test_an_open_store_never_shows_the_password(read_only: bool, pg_schema: str) -> None:
    dsn = with_password(PG_DSN)
    PostgresSessionStore(dsn, schema=pg_schema).close()  # create the schema
    with PostgresSessionStore(dsn, schema=pg_schema, read_only=read_only) as store:
        shown = " ".join([repr(store), store.describe(), store.dsn, str(store.stats())])
        assert PASSWORD not in shown and "***" in shown
        if read_only:
            with pytest.raises(Exception) as info:
                store.add_session("x")
            assert PASSWORD not in _texts_of(info.value)
    drop_schema(pg_schema)


@pytest.mark.skipif(not PG_DSN, reason=SKIP_PG)
@pytest.mark.enable_socket
def test_cli_output_never_shows_the_password(logs: pytest.LogCaptureFixture) -> None:
    dsn = with_password(PG_DSN)
    with open_store(dsn) as store:
        store.add_session("pw-1", title="quokka")
        store.add_messages("pw-1", [{"role": "user", "content": "quokka pipeline"}])
    try:
        for argv in (
            ["stats", "--db", dsn],
            ["stats", "--db", dsn, "--json"],
            ["check", "--db", dsn],
            ["search", "quokka", "--db", dsn],
            ["search", "quokka", "--db", dsn, "--json"],
            ["recent", "--db", dsn, "--json"],
            ["show", "pw-1", "--db", dsn],
        ):
            err, out = io.StringIO(), io.StringIO()
            with redirect_stderr(err):
                code = main(argv, out=out)
            assert code == EXIT_OK, (argv, err.getvalue())
            assert PASSWORD not in err.getvalue() + out.getvalue(), argv
    finally:
        drop_schema("session_recall")
