"""Bad rows written by other programs (plain SQL, bypassing the store's validation), on both
backends: ``sqlite3`` on SQLite, ``psycopg`` on PostgreSQL.

Each case puts one kind of broken data next to good sessions; every search, the recent list,
the transcripts and the CLI's read commands must still work and still return the good sessions.

PostgreSQL's typed columns and constraints refuse some of SQLite's junk (bytes in a text column,
NUL characters, text in a number column, a parent or session that does not exist); there the
cases write what PostgreSQL does accept in their place (control characters, ``NaN`` and
``Infinity``, ...), and orphans are written the way a restore with triggers disabled would
(``session_replication_role = replica``) after showing that an ordinary client cannot.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable, Iterator

import pytest
from reliability.reliability_support import count
from store_targets import Sql, StoreFactory, backend_of, pg_only

from langchain_session_recall import SessionRecallRetriever
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.cli import main as cli_main
from langchain_session_recall.search.pipeline import search_sessions

GOOD = [f"good{i}" for i in range(4)]
T0 = 1_790_000_000.0
INF = float("inf")

Writer = Callable[[Sql], None]


def _session(conn: Sql, sid: object, parent: object = None, **cols: object) -> None:
    values = {"id": sid, "source": "cli", "started_at": T0 + 10, "parent_session_id": parent}
    values.update(cols)
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    conn.execute(f"INSERT INTO sessions ({names}) VALUES ({marks})", tuple(values.values()))


def _message(conn: Sql, sid: object, content: object, **cols: object) -> None:
    values = {"session_id": sid, "role": "user", "content": content, "timestamp": T0 + 20}
    values.update(cols)
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    conn.execute(f"INSERT INTO messages ({names}) VALUES ({marks})", tuple(values.values()))


def _null_and_empty(conn: Sql) -> None:
    _session(conn, "bad-null")
    _message(conn, "bad-null", None)
    _message(conn, "bad-null", "")
    _message(conn, "bad-null", "alpha with a null neighbour")
    _message(conn, "bad-null", None, role="tool", tool_name=None)


def _binary(conn: Sql) -> None:
    _session(conn, "bad-binary")
    if conn.backend == "postgres":  # text holds no bytes and no NUL: the nearest junk it takes
        _message(conn, "bad-binary", "\x01\x02\x7f alpha \x1b[31m ansi \x1b]0;title\x07")
        _message(conn, "bad-binary", "\ufffd\uffff\U0010ffff\ue000 alpha noncharacters")
        _message(conn, "bad-binary", "12345")
        _message(conn, "bad-binary", "json:{not json alpha")
        _message(conn, "bad-binary", '\x01json:{"text": "alpha"}')
        _message(conn, "bad-binary", "\u202ealpha reversed\u202c \u200b\ufeff")
        return
    _message(conn, "bad-binary", b"\xff\xfe\x00\x80alpha\xc3\x28 junk")
    _message(conn, "bad-binary", "alpha\x00hidden after nul \x1b[31m")
    _message(conn, "bad-binary", 12345)
    _message(conn, "bad-binary", 3.5)
    _message(conn, "bad-binary", "\x00json:{not json alpha")
    _message(conn, "bad-binary", '\x00json:{"text": "alpha dict not list"}')
    _message(conn, "bad-binary", "\x00json:42")
    _message(conn, "bad-binary", '\x00json:[1, null, {"type": "image"}, {"text": 7}]')


def _roles(conn: Sql) -> None:
    _session(conn, "bad-roles")
    for role in ("wizard", "", "USER", "Assistant", "tool ", "🤖", "function"):
        _message(conn, "bad-roles", f"alpha said by {role!r}", role=role)


def _cycles(conn: Sql) -> None:
    # inserted first, then pointed at each other: every parent exists (foreign keys hold)
    for sid in ("cyc-a", "cyc-b", "cyc-c", "cyc-self"):
        _session(conn, sid)
    for sid, parent in (("cyc-a", "cyc-b"), ("cyc-b", "cyc-c"), ("cyc-c", "cyc-a")):
        conn.execute("UPDATE sessions SET parent_session_id = ? WHERE id = ?", (parent, sid))
    conn.execute("UPDATE sessions SET parent_session_id = id WHERE id = 'cyc-self'")
    for sid in ("cyc-a", "cyc-b", "cyc-c", "cyc-self"):
        _message(conn, sid, f"alpha in a cycle {sid}")


def _missing_parents(conn: Sql) -> None:
    if conn.backend == "postgres":
        # foreign keys refuse this from an ordinary client (test_postgres_refuses_orphans);
        # a restore with triggers disabled writes it all the same
        conn.execute("SET LOCAL session_replication_role = replica")
    _session(conn, "orphan-child", "never-existed")
    _message(conn, "orphan-child", "alpha from an orphan")
    _message(conn, "no-such-session", "alpha in a message without a session")


def _deep_chain(conn: Sql) -> None:
    _session(conn, "deep-0")
    for i in range(1, 1200):
        _session(conn, f"deep-{i}", f"deep-{i - 1}")
    _message(conn, "deep-1199", "alpha at the bottom of a very deep chain")


def _huge(conn: Sql) -> None:
    _session(conn, "bad-huge")
    _message(conn, "bad-huge", "alpha " + "x" * 1_000_000, role="tool", tool_name="cat")
    _message(conn, "bad-huge", "alpha " + "word " * 200_000, role="assistant")


def _tool_calls(conn: Sql) -> None:
    _session(conn, "bad-calls")
    for calls in (
        "{not json",
        '{"a": 1}',
        "[1, 2, 3]",
        '[{"function": "not a dict"}]',
        '[{"function": {"name": 42}}]',
        '[{"name": null}]',
        "null",
        '""',
        "[" * 5000,
    ):
        _message(conn, "bad-calls", "alpha with calls", role="assistant", tool_calls=calls)


def _types(conn: Sql) -> None:
    # numbers no clock can show, on both backends
    _session(conn, "bad-inf", started_at=INF, ended_at=-INF, message_count=-7)
    _message(conn, "bad-inf", "alpha at the end of time", timestamp=-INF)
    _session(conn, "bad-huge-time", started_at=1e300)
    _message(conn, "bad-huge-time", "alpha far in the future", timestamp=-1e300)
    if conn.backend == "postgres":  # typed columns: NaN and infinities are what they take
        _session(conn, "bad-types", started_at=float("nan"), title="\x1b[2J\x07")
        _message(conn, "bad-types", "alpha typed wrong", timestamp=float("nan"))
        _message(conn, "bad-types", "alpha typed wrong again", timestamp=INF)
        _session(conn, "42", source="")
        _message(conn, "42", "alpha under an integer id")
        return
    _session(conn, "bad-types", started_at="last tuesday", message_count="many", title=b"\xff")
    _message(conn, "bad-types", "alpha typed wrong", timestamp="yesterday")
    _message(conn, "bad-types", "alpha typed wrong again", timestamp=b"\x00")
    _session(conn, 42, source="")
    _message(conn, 42, "alpha under an integer id")


CASES: dict[str, Writer] = {
    "null_and_empty_content": _null_and_empty,
    "binary_junk": _binary,
    "unknown_roles": _roles,
    "parent_cycles": _cycles,
    "missing_parents": _missing_parents,
    "deep_chain": _deep_chain,
    "million_character_outputs": _huge,
    "malformed_tool_calls": _tool_calls,
    "wrong_column_types": _types,
}


_SLOW_CASES = {"deep_chain", "million_character_outputs"}  # 1,200 sessions; 1 MB rows


@pytest.fixture(
    params=[
        pytest.param(c, marks=pytest.mark.slow) if c in _SLOW_CASES else c for c in sorted(CASES)
    ]
)
def broken_store(
    store_factory: StoreFactory, request: pytest.FixtureRequest
) -> Iterator[SessionBackend]:
    target = store_factory.target("bad")
    with target.open() as store:
        for i, word in enumerate(GOOD):
            store.add_session(word, title=f"good session {i}", started_at=T0 + i)
            store.add_messages(
                word, [{"role": "user", "content": f"alpha {word} the good one", "timestamp": T0}]
            )
    with target.sql() as sql, sql.transaction():
        CASES[request.param](sql)
    count("bad_rows.cases", backend=target.backend)
    yield store_factory.open("bad")


def _cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cli_main(list(argv), out)
    assert not err.getvalue() or code != 0, err.getvalue()
    return code, out.getvalue()


def test_searches_still_return_the_good_sessions(
    broken_store: SessionBackend, store_factory: StoreFactory
) -> None:
    backend = backend_of(broken_store)
    retriever = SessionRecallRetriever(store=broken_store, k=50, max_k=50)
    docs = retriever.invoke("alpha")
    found = {d.metadata["session_id"] for d in docs}
    assert set(GOOD) <= found
    for word in GOOD:
        assert [d.metadata["session_id"] for d in retriever.invoke(word)] == [word]
        assert [r.root_id for r in search_sessions(broken_store, f'"{word}" OR zzz*').sessions] == [
            word
        ]
    recent = {d.metadata["session_id"] for d in retriever.invoke("")}
    assert set(GOOD) <= recent
    for doc in docs:  # every transcript, bad ones included, was built
        assert isinstance(doc.page_content, str)
        broken_store.chain_messages(doc.metadata["session_id"])
        broken_store.lineage(doc.metadata["session_id"])
    # the CLI's read commands, as a person would run them over the same store
    db = store_factory.target("bad").db
    code, out = _cli("search", "alpha", "--db", db, "-k", "5")
    assert code == 0 and "good" in out
    code, shown = _cli("recent", "--db", db, "-k", "5")  # the CLI shows at most 5
    assert code == 0
    code, out = _cli("recent", "--db", db, "-k", "5", "--json")
    listed = [d["metadata"]["session_id"] for d in json.loads(out)]
    assert code == 0 and len(listed) == min(5, len(recent)) and set(listed) <= recent
    assert all(str(sid) in shown for sid in listed)  # the table lists the same sessions
    for sid in listed:  # and each one can be shown, as text and as JSON
        assert _cli("show", str(sid), "--db", db, "--no-pager")[0] == 0
        assert json.loads(_cli("show", str(sid), "--db", db, "--json")[1])["sessions"]
    code, out = _cli("stats", "--db", db)
    assert code == 0 and "Sessions" in out
    shown = 0
    middle_of_the_deep_chain = {f"deep-{i}" for i in range(1, 1199)}  # 1,200 opens: too slow
    for sid in set(broken_store.all_session_ids()) - middle_of_the_deep_chain:
        code, out = _cli("show", sid, "--db", db)
        assert code == 0, sid
        shown += 1
    count("bad_rows.searches", 3 + 2 * len(GOOD), backend=backend)
    count("bad_rows.cli_runs", 4 + shown, backend=backend)
    count(
        "bad_rows.messages_checked",
        sum(d.page_content.count("alpha") for d in docs),
        backend=backend,
    )


def test_cycles_and_orphans_resolve_to_one_root_each(store_factory: StoreFactory) -> None:
    target = store_factory.target("cyc")
    target.open().close()
    with target.sql() as sql, sql.transaction():
        _cycles(sql)
        _missing_parents(sql)
        _deep_chain(sql)
    with target.open() as store:
        roots = {r.root_id for r in search_sessions(store, "cycle").sessions}
        assert roots == {"cyc-a", "cyc-self"}  # its oldest member; all start together: smallest id
        assert {"cyc-a", "cyc-self"} <= {r.id for r in store.recent_sessions(100)}
        assert search_sessions(store, "orphan").sessions[0].root_id == "orphan-child"
        # No depth bound: the true root of a 1,200-level chain (a cap of 256 stopped short).
        assert search_sessions(store, "bottom").sessions[0].root_id == "deep-0"
        assert store.lineage("cyc-a")[0] == "cyc-a"
        assert store.lineage("deep-1199") == [f"deep-{i}" for i in range(1199, -1, -1)]
        assert store.chain("deep-0")[-1] == "deep-1199"


def test_huge_tool_output_is_clipped_in_the_transcript(store_factory: StoreFactory) -> None:
    target = store_factory.target("huge")
    target.open().close()
    with target.sql() as sql:
        _huge(sql)
    with target.open() as store:
        docs = SessionRecallRetriever(store=store, max_chars=5_000).invoke("alpha")
        assert [d.metadata["session_id"] for d in docs] == ["bad-huge"]
        assert len(docs[0].page_content) < 6_000
        tool_part = next(m for m in store.chain_messages("bad-huge") if m.role == "tool")
        assert len(tool_part.content) < 1_000
    count("bad_rows.messages_checked", 2, backend=target.backend)


def test_malformed_tool_calls_show_no_calls_but_keep_the_row(store_factory: StoreFactory) -> None:
    target = store_factory.target("calls")
    target.open().close()
    with target.sql() as sql:
        _tool_calls(sql)
    with target.open() as store:
        messages = store.get_messages("bad-calls")
        assert len(messages) == 9
        assert all(m.tool_call_names == [] for m in messages)
        assert json.dumps([m.content for m in messages])
    count("bad_rows.messages_checked", 9, backend=target.backend)


@pg_only
def test_postgres_refuses_orphans_and_junk_from_an_ordinary_client(
    pg_store_factory: StoreFactory,
) -> None:
    """What the PostgreSQL cases above write instead: the schema refuses the rest outright."""
    import psycopg

    target = pg_store_factory.target("strict")
    target.open().close()
    refused = [
        ("INSERT INTO sessions (id, source, started_at, parent_session_id) "
         "VALUES ('o', 'cli', 1, 'never-existed')", psycopg.errors.ForeignKeyViolation),
        ("INSERT INTO messages (session_id, role, content, timestamp) "
         "VALUES ('no-such-session', 'user', 'x', 1)", psycopg.errors.ForeignKeyViolation),
        ("INSERT INTO sessions (id, source, started_at) VALUES ('t', 'cli', 'last tuesday')",
         psycopg.errors.InvalidTextRepresentation),
        ("INSERT INTO sessions (id, source, started_at) VALUES ('n', 'cli', NULL)",
         psycopg.errors.NotNullViolation),
    ]  # fmt: skip
    with target.sql() as sql:
        for statement, error in refused:
            with pytest.raises(error):
                sql.execute(statement)
        with pytest.raises(psycopg.DataError, match="NUL"):
            sql.execute(
                "INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', 1)", ["\x00"]
            )
        assert sql.execute("SELECT count(*) FROM sessions") == [(0,)]
