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

from langchain_session_recall.backends import describe_target, is_postgres_dsn, open_store
from langchain_session_recall.backends.postgres import PostgresSessionStore, redact_dsn
from langchain_session_recall.backends.postgres.dsn import scrub
from langchain_session_recall.cli import EXIT_DB, EXIT_OK, main
from langchain_session_recall.errors import StoreUnavailableError

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
    with pytest.raises(StoreUnavailableError) as info:
        PostgresSessionStore(dsn, connect_timeout=1)
    assert PASSWORD not in _texts_of(info.value)
    assert "app:***@127.0.0.1:1" in str(info.value)


def test_malformed_dsn_error_hides_the_password(logs: pytest.LogCaptureFixture) -> None:
    dsn = f"postgresql://app:{PASSWORD}@127.0.0.1:notaport/recall"
    with pytest.raises(StoreUnavailableError) as info:
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


# ----------------------------------------------------------------- issue 21 §13: every DSN form

KEYWORD_DSN = f"host=127.0.0.1 port=1 user=app password={PASSWORD} dbname=recall"
UPPER_DSN = f"POSTGRESQL://app:{PASSWORD}@127.0.0.1:1/recall"


@pytest.mark.parametrize(
    "target",
    [KEYWORD_DSN, UPPER_DSN, f"Postgres://app:{PASSWORD}@db/recall", "host=db dbname=recall"],
)
def test_keyword_and_upper_case_dsns_are_dsns_not_paths(target: str) -> None:
    assert is_postgres_dsn(target)
    assert PASSWORD not in describe_target(target)


@pytest.mark.parametrize("path", ["state.db", "/tmp/host=db.sqlite", "a = b", ":memory:"])
def test_paths_are_not_taken_for_dsns(path: str) -> None:
    assert not is_postgres_dsn(path)


@pytest.mark.parametrize(
    ("dsn", "pieces"),
    [
        ("postgresql://app:Zq9 hunter2 x@127.0.0.1:1/recall", ["Zq9 hunter2 x", "hunter2"]),
        ("postgresql://app:Zq9@hunter2@127.0.0.1:1/recall", ["Zq9@hunter2", "hunter2"]),
        ("postgresql://app:Zq9/hunter2@127.0.0.1:1/recall", ["Zq9/hunter2", "hunter2"]),
    ],
    ids=["space", "at", "slash"],
)
def test_a_raw_space_at_or_slash_in_a_password_shows_no_part_of_it(
    dsn: str, pieces: list[str]
) -> None:
    shown = redact_dsn(dsn)
    assert not [p for p in pieces if p in shown], shown
    # the driver names the host it read after the first '@': that piece is scrubbed too
    said = scrub("failed to resolve host 'hunter2@127.0.0.1'", dsn)
    assert "hunter2" not in said


@pytest.mark.parametrize(
    "dsn",
    [
        KEYWORD_DSN,
        UPPER_DSN,
        "postgresql://app:Zq9 hunter2-secret@127.0.0.1:1/recall",
        "postgresql://app:Zq9@hunter2-secret@127.0.0.1:1/recall",
    ],
    ids=["keyword", "upper-case", "raw-space", "raw-at"],
)
def test_cli_and_open_store_never_echo_the_password_of_any_form(dsn: str) -> None:
    secret = "hunter2" if "hunter2-secret" in dsn else PASSWORD
    with pytest.raises(StoreUnavailableError) as info:
        open_store(dsn, create=False)
    assert secret not in _texts_of(info.value)
    assert "PostgreSQL" in str(info.value)  # tried as a server, not looked up as a file
    for argv in (["stats", "--db", dsn], ["search", "x", "--db", dsn]):
        err, out = io.StringIO(), io.StringIO()
        with redirect_stderr(err):
            code = main(argv, out=out)
        assert code == EXIT_DB, (argv, err.getvalue())
        assert secret not in err.getvalue() + out.getvalue(), argv


def _keyword_form(dsn: str, password: str) -> str:
    parts = urlsplit(dsn)
    return (
        f"host={parts.hostname} port={parts.port} user={parts.username} "
        f"password='{password}' dbname={parts.path.lstrip('/')}"
    )


@pytest.mark.skipif(not PG_DSN, reason=SKIP_PG)
@pytest.mark.enable_socket
@pytest.mark.parametrize("form", ["keyword", "upper-case"])
def test_keyword_and_upper_case_dsns_open_the_server(form: str, pg_schema: str) -> None:
    if form == "keyword":
        dsn = _keyword_form(PG_DSN, f"{PASSWORD} with spaces")
    else:
        dsn = with_password(PG_DSN).replace("postgresql://", "POSTGRESQL://", 1)
    with open_store(dsn) as store:
        assert isinstance(store, PostgresSessionStore)
        store.add_session("k1", title="kv")
        shown = " ".join([repr(store), store.describe(), store.dsn])
        assert PASSWORD not in shown and "***" in shown
    err, out = io.StringIO(), io.StringIO()
    with redirect_stderr(err):
        assert main(["stats", "--db", dsn], out=out) == EXIT_OK, err.getvalue()
    assert PASSWORD not in err.getvalue() + out.getvalue()
    drop_schema("session_recall")
