"""PostgreSQL-only behaviour: async API, read-only mode, migration from SQLite, parity."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pg_support import PG_DSN, SKIP_PG

from langchain_session_recall import NotASessionDatabaseError, SessionStore
from langchain_session_recall.backends import SessionBackend, open_store
from langchain_session_recall.errors import StoreUnavailableError
from langchain_session_recall.search.pipeline import search_sessions

pytestmark = [pytest.mark.skipif(not PG_DSN, reason=SKIP_PG), pytest.mark.enable_socket]


@pytest.fixture
def pg(pg_schema: str):  # type: ignore[no-untyped-def]
    from langchain_session_recall.backends.postgres.store import PostgresSessionStore

    with PostgresSessionStore(PG_DSN, schema=pg_schema, max_size=4) as store:
        yield store


async def test_async_search_runs_in_the_executor(pg) -> None:  # type: ignore[no-untyped-def]
    """One async model for both backends: the retriever's ainvoke runs the store in threads."""
    from langchain_session_recall import SessionRecallRetriever

    pg.add_session("a", title="async")
    pg.add_session("b", parent_session_id="a")
    pg.add_messages("b", [{"role": "user", "content": "async pgvector question"}])
    retriever = SessionRecallRetriever(store=pg)
    docs = await retriever.ainvoke("pgvector")
    assert [d.metadata["session_id"] for d in docs] == ["a"]
    batches = await retriever.abatch(["pgvector"] * 4)
    assert [[d.metadata["session_id"] for d in docs] for docs in batches] == [["a"]] * 4


def test_is_a_session_backend_and_opens_from_a_dsn(pg, default_schema: str) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(pg, SessionBackend)
    with open_store(PG_DSN) as store:  # default schema
        assert type(store).__name__ == "PostgresSessionStore"


def test_read_only_needs_an_existing_schema(pg_schema: str) -> None:
    """(What a read-only store refuses is the conformance suite's, on both backends.)"""
    from langchain_session_recall.backends.postgres.store import PostgresSessionStore

    with pytest.raises(NotASessionDatabaseError, match="no session store"):
        PostgresSessionStore(PG_DSN, schema=pg_schema + "_missing", read_only=True)


def test_bad_dsn_says_what_to_do() -> None:
    """A server that cannot be reached is a connection failure, not "not a session database"
    (the database may well be one; nothing was read)."""
    from langchain_session_recall.backends.postgres.store import PostgresSessionStore

    with pytest.raises(StoreUnavailableError, match="check the DSN") as caught:
        PostgresSessionStore("postgresql://nobody@127.0.0.1:1/none", connect_timeout=2)
    assert not isinstance(caught.value, NotASessionDatabaseError)
    assert isinstance(caught.value, ConnectionError)


def test_schema_name_is_validated() -> None:
    from langchain_session_recall.backends.postgres.store import PostgresSessionStore

    with pytest.raises(ValueError, match="plain identifier"):
        PostgresSessionStore(PG_DSN, schema='x"; DROP SCHEMA public; --')


def test_import_a_sqlite_store(tmp_path: Path, pg_schema: str) -> None:
    from langchain_session_recall.backends.postgres.store import PostgresSessionStore
    from langchain_session_recall.importers import import_hermes

    src_path = tmp_path / "state.db"
    with SessionStore(src_path) as src:
        src.add_session("root", title="Root", user_id="u", started_at=1.0)
        src.add_session("child", parent_session_id="root", source="subagent", started_at=2.0)
        src.add_messages(
            "root", [{"role": "user", "content": "terraform state lock", "timestamp": 1}]
        )
        src.add_messages("child", [{"role": "tool", "content": "unlocked\x00", "tool_name": "tf"}])
        expected = [r.root_id for r in search_sessions(src, "terraform OR unlocked").sessions]
    with PostgresSessionStore(PG_DSN, schema=pg_schema) as dst:
        report = import_hermes(dst, src_path)
        assert (report.new_sessions, report.messages, report.skipped_total) == (2, 2, 0)
        again = import_hermes(dst, src_path)
        assert (again.new_sessions, again.messages, again.already_imported) == (0, 0, 2)
        assert dst.lineage("child") == ["child", "root"]
        assert dst.get_session("root").user_id == "u"
        assert dst.get_session("child").message_count == 1
        assert dst.get_messages("child")[0].content == "unlocked"  # NUL dropped: PostgreSQL text
        assert [
            r.root_id for r in search_sessions(dst, "terraform OR unlocked").sessions
        ] == expected


def test_import_a_hermes_state_db(tmp_path: Path, pg_schema: str) -> None:
    from hermes_fixtures import build_hermes_db

    from langchain_session_recall.backends.postgres.store import PostgresSessionStore
    from langchain_session_recall.importers import import_hermes

    path = tmp_path / "state.db"
    build_hermes_db(path, 3)
    with SessionStore.open_hermes(path) as src:
        visible = sum(
            len(src.get_messages(r.id)) for r in src.recent_sessions(1000, exclude_sources=())
        )
    with PostgresSessionStore(PG_DSN, schema=pg_schema) as dst:
        report = import_hermes(dst, path)
    assert report.sessions > 0 and report.messages + report.skipped_total >= visible


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(min_size=1, max_size=40))
def test_any_text_is_a_valid_tsquery(pg, text: str) -> None:  # type: ignore[no-untyped-def]
    from langchain_session_recall.errors import EmptyQueryError

    pg.add_session("s")
    if not pg.get_messages("s"):
        pg.add_messages("s", [{"role": "user", "content": "a b c x y z 0 1 日本 it's"}])
    try:
        roots = [r.root_id for r in search_sessions(pg, text).sessions]
    except EmptyQueryError:
        return
    assert roots in ([], ["s"])


def test_opening_while_others_write_takes_no_ddl_lock(pg, pg_schema: str) -> None:  # type: ignore[no-untyped-def]
    """Opening a store on a current schema runs no DDL, so it cannot deadlock with writers."""
    import threading

    from langchain_session_recall.backends.postgres.store import PostgresSessionStore

    pg.add_session("w")
    stop = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        try:
            while not stop.is_set():
                pg.add_messages("w", [{"role": "user", "content": "busy writer"}] * 5)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        for _ in range(5):
            with PostgresSessionStore(PG_DSN, schema=pg_schema, max_size=1) as other:
                other.add_messages("w", [{"role": "assistant", "content": "opened"}])
    finally:
        stop.set()
        writer.join()
    assert errors == []
    assert pg.get_session("w").message_count == len(pg.get_messages("w"))


@pytest.fixture
def default_schema():  # type: ignore[no-untyped-def]
    from pg_support import drop_schema

    from langchain_session_recall.backends.postgres.store import DEFAULT_SCHEMA

    drop_schema(DEFAULT_SCHEMA)
    yield DEFAULT_SCHEMA
    drop_schema(DEFAULT_SCHEMA)


def test_cli_searches_a_dsn(default_schema: str) -> None:
    import io
    import json

    from langchain_session_recall.cli import main

    with open_store(PG_DSN) as store:
        store.add_session("q1", title="Quokka", user_id="alice")
        store.add_messages("q1", [{"role": "user", "content": "the quokka photo pipeline"}])
    out = io.StringIO()
    assert main(["search", "quokka", "--db", PG_DSN, "--json", "--user", "alice"], out=out) == 0
    docs = json.loads(out.getvalue())
    assert [d["metadata"]["session_id"] for d in docs] == ["q1"]
    out = io.StringIO()
    main(["recent", "--db", PG_DSN, "--json", "--read-only"], out=out)
    assert [d["metadata"]["title"] for d in json.loads(out.getvalue())] == ["Quokka"]


def test_concurrent_creation_of_one_session(pg) -> None:  # type: ignore[no-untyped-def]
    """Two writers creating the same id at once: one inserts, the other updates; no error."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: pg.add_session("same", title=f"t{i}"), range(8)))
    assert {r.id for r in results} == {"same"}
    assert pg.get_session("same").title in {f"t{i}" for i in range(8)}


def test_cli_import_sqlite_into_a_dsn(default_schema: str, tmp_path: Path) -> None:
    import io

    from langchain_session_recall.cli import EXIT_OK, main
    from langchain_session_recall.demo import build_demo_store

    src = tmp_path / "demo.db"
    build_demo_store(src).close()
    out = io.StringIO()
    assert main(["import", "sqlite", str(src), "--db", PG_DSN], out=out) == EXIT_OK
    assert out.getvalue().startswith("sqlite: 18 sessions (18 new), 145 messages imported")
    again = io.StringIO()
    assert main(["import", "sqlite", str(src), "--db", PG_DSN], out=again) == EXIT_OK
    assert "(0 new), 0 messages imported, 145 already present" in again.getvalue()
    with open_store(PG_DSN) as store:
        assert store.stats()["sessions"] == 18


@pytest.mark.parametrize("text", ["豈更車", "𠀀𠀁𠀂"], ids=["compatibility", "extension-b"])
def test_check_sees_every_cjk_message_without_its_bigram_vector(pg, text: str) -> None:  # type: ignore[no-untyped-def]
    """The integrity check reads the one CJK table the index uses: a message of compatibility
    ideographs or Extension B that another client wrote without its bigram vector is reported
    (the check's own copy of the ranges once left Extension B out: that case failed)."""
    pg.add_session("s")
    pg.add_messages("s", [{"role": "user", "content": text}])
    assert pg.check().ok
    with pg._read() as conn:
        conn.execute("UPDATE messages SET cjk_tsv = NULL")
    found = pg.check()
    assert not found.ok
    assert "1 message(s) have no full-text vector" in found.problems[0]


def test_a_write_the_server_refuses_in_a_block_is_undone_alone(pg, pg_schema: str) -> None:  # type: ignore[no-untyped-def]
    """``add_session`` and ``add_messages`` of a new session are one statement each, sent with
    their savepoint in one round trip inside ``transaction()``: one the server refuses (here a
    trigger) leaves nothing behind, and the block goes on; outside a block too."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(pg_schema)))
        conn.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF to_jsonb(NEW) ->> TG_ARGV[0] = 'refused' THEN RAISE EXCEPTION 'refused here'; "
            "END IF; RETURN NEW; END $$"
        )
        for table, column in (("messages", "content"), ("sessions", "title")):
            conn.execute(
                f"CREATE TRIGGER refuse BEFORE INSERT ON {table} "
                f"FOR EACH ROW EXECUTE FUNCTION refuse('{column}')"
            )
    said = [{"role": "user", "content": "first"}]
    with pg.transaction():
        pg.add_session("keep")
        pg.add_messages("keep", said)
        with pytest.raises(psycopg.Error, match="refused here"):
            pg.add_messages("keep", [{"role": "user", "content": "refused"}])
        with pytest.raises(psycopg.Error, match="refused here"):
            pg.add_session("gone", title="refused")
        pg.add_messages("keep", [{"role": "user", "content": "second"}])
    batch = [{"role": "user", "content": "ok"}, {"role": "user", "content": "refused"}]
    with pytest.raises(psycopg.Error, match="refused here"):
        pg.add_messages("keep", batch)
    pg.add_messages("keep", [{"role": "user", "content": "third"}])
    assert [m.content for m in pg.get_messages("keep")] == ["first", "second", "third"]
    assert pg.get_session("keep").message_count == 3
    assert pg.get_session("gone") is None
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(pg_schema)))
        seqs = conn.execute("SELECT seq FROM messages ORDER BY id").fetchall()
    assert [s for (s,) in seqs] == [0, 1, 2]


def test_both_plans_of_a_match_statement_find_the_same_hits(pg) -> None:  # type: ignore[no-untyped-def]
    """The bitmap plan (chosen per term, ``backends/postgres/plans.py``) and the walk rank the
    same newest ``rank_window`` matches, filters, seats and automation budget included."""
    from langchain_session_recall.backends.postgres import statements as st
    from langchain_session_recall.backends.postgres.schema import rank_weights
    from langchain_session_recall.models import SearchFilters

    for s in range(12):
        pg.add_session(f"s{s}", source="cron" if s % 4 == 0 else "cli")
        pg.add_messages(
            f"s{s}",
            [
                {"role": "user" if n % 2 else "assistant", "content": f"deploy step {n} of {s}"}
                for n in range(s + 3)
            ],
        )
    params = {
        "tsquery": "'deploy'",
        "weights": rank_weights(),
        "window": 20,
        "limit": 5,
        "automation": ["cron"],
        "per_session": 2,
        "seats": 4,
        "auto_seats": 1,
    }
    for filters in (
        SearchFilters(),
        SearchFilters(role_filter=("user",)),
        SearchFilters(exclude_sources=("cron",)),
    ):
        found = []
        for bitmap in (False, True):
            sql, bound = st.match_query(
                pg.dialect, filters, cjk=False, automation=True, per_session=True, seated=True,
                bitmap=bitmap,
            )  # fmt: skip
            with pg._read() as conn:
                found.append(conn.execute(sql, {**bound, **params}, prepare=False).fetchall())
        assert found[0] == found[1]
        assert found[0]


def test_a_rare_term_takes_the_bitmap_and_a_common_one_keeps_the_planners_plan(pg) -> None:  # type: ignore[no-untyped-def]
    pg.rank_window = 5
    pg.add_session("s")
    pg.add_messages(
        "s",
        [
            {"role": "user", "content": f"common word {'rare' if n == 3 else ''}"}
            for n in range(400)
        ],
    )
    pg.optimize()  # statistics for the planner's estimate
    with pg._read() as conn:
        assert pg._bitmap_first(conn, "'rare'")
        assert not pg._bitmap_first(conn, "'common'")
