"""Bad rows written by other programs (raw SQL, bypassing the store's validation).

Each case puts one kind of broken data next to good sessions; every search, the recent list and
the transcripts must still work and still return the good sessions.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from reliability.reliability_support import count

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.search.pipeline import search_sessions

GOOD = [f"good{i}" for i in range(4)]
T0 = 1_790_000_000.0

Writer = Callable[[sqlite3.Connection], None]


def _session(conn: sqlite3.Connection, sid: object, parent: object = None, **cols: object) -> None:
    values = {"id": sid, "source": "cli", "started_at": T0 + 10, "parent_session_id": parent}
    values.update(cols)
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    conn.execute(f"INSERT INTO sessions ({names}) VALUES ({marks})", tuple(values.values()))


def _message(conn: sqlite3.Connection, sid: object, content: object, **cols: object) -> None:
    values = {"session_id": sid, "role": "user", "content": content, "timestamp": T0 + 20}
    values.update(cols)
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    conn.execute(f"INSERT INTO messages ({names}) VALUES ({marks})", tuple(values.values()))


def _null_and_empty(conn: sqlite3.Connection) -> None:
    _session(conn, "bad-null")
    _message(conn, "bad-null", None)
    _message(conn, "bad-null", "")
    _message(conn, "bad-null", "alpha with a null neighbour")
    _message(conn, "bad-null", None, role="tool", tool_name=None)


def _binary(conn: sqlite3.Connection) -> None:
    _session(conn, "bad-binary")
    _message(conn, "bad-binary", b"\xff\xfe\x00\x80alpha\xc3\x28 junk")
    _message(conn, "bad-binary", "alpha\x00hidden after nul \x1b[31m")
    _message(conn, "bad-binary", 12345)
    _message(conn, "bad-binary", 3.5)
    _message(conn, "bad-binary", "\x00json:{not json alpha")
    _message(conn, "bad-binary", '\x00json:{"text": "alpha dict not list"}')
    _message(conn, "bad-binary", "\x00json:42")
    _message(conn, "bad-binary", '\x00json:[1, null, {"type": "image"}, {"text": 7}]')


def _roles(conn: sqlite3.Connection) -> None:
    _session(conn, "bad-roles")
    for role in ("wizard", "", "USER", "Assistant", "tool ", "🤖", "function"):
        _message(conn, "bad-roles", f"alpha said by {role!r}", role=role)


def _cycles(conn: sqlite3.Connection) -> None:
    _session(conn, "cyc-a", "cyc-b")
    _session(conn, "cyc-b", "cyc-c")
    _session(conn, "cyc-c", "cyc-a")
    _session(conn, "cyc-self", "cyc-self")
    for sid in ("cyc-a", "cyc-b", "cyc-c", "cyc-self"):
        _message(conn, sid, f"alpha in a cycle {sid}")


def _missing_parents(conn: sqlite3.Connection) -> None:
    _session(conn, "orphan-child", "never-existed")
    _message(conn, "orphan-child", "alpha from an orphan")
    _message(conn, "no-such-session", "alpha in a message without a session")


def _deep_chain(conn: sqlite3.Connection) -> None:
    _session(conn, "deep-0")
    for i in range(1, 1200):
        _session(conn, f"deep-{i}", f"deep-{i - 1}")
    _message(conn, "deep-1199", "alpha at the bottom of a very deep chain")


def _huge(conn: sqlite3.Connection) -> None:
    _session(conn, "bad-huge")
    _message(conn, "bad-huge", "alpha " + "x" * 1_000_000, role="tool", tool_name="cat")
    _message(conn, "bad-huge", "alpha " + "word " * 200_000, role="assistant")


def _tool_calls(conn: sqlite3.Connection) -> None:
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


def _types(conn: sqlite3.Connection) -> None:
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


@pytest.fixture(params=sorted(CASES))
def broken_store(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[SessionStore]:
    path = tmp_path / "bad.db"
    with SessionStore(path) as store:
        for i, word in enumerate(GOOD):
            store.add_session(word, title=f"good session {i}", started_at=T0 + i)
            store.add_messages(
                word, [{"role": "user", "content": f"alpha {word} the good one", "timestamp": T0}]
            )
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    CASES[request.param](conn)
    conn.execute("COMMIT")
    conn.close()
    count("bad_rows.cases")
    with SessionStore(path) as store:
        yield store


def test_searches_still_return_the_good_sessions(broken_store: SessionStore) -> None:
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
    count("bad_rows.searches", 3 + 2 * len(GOOD))
    count("bad_rows.messages_checked", sum(d.page_content.count("alpha") for d in docs))


def test_cycles_and_orphans_resolve_to_one_root_each(tmp_path: Path) -> None:
    path = tmp_path / "cyc.db"
    SessionStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    _cycles(conn)
    _missing_parents(conn)
    _deep_chain(conn)
    conn.execute("COMMIT")
    conn.close()
    with SessionStore(path) as store:
        roots = {r.root_id for r in search_sessions(store, "cycle").sessions}
        assert roots == {"cyc-a", "cyc-self"}  # its oldest member; all start together: smallest id
        assert {"cyc-a", "cyc-self"} <= {r.id for r in store.recent_sessions(100)}
        assert search_sessions(store, "orphan").sessions[0].root_id == "orphan-child"
        # No depth bound: the true root of a 1,200-level chain (a cap of 256 stopped short).
        assert search_sessions(store, "bottom").sessions[0].root_id == "deep-0"
        assert store.lineage("cyc-a")[0] == "cyc-a"
        assert store.lineage("deep-1199") == [f"deep-{i}" for i in range(1199, -1, -1)]
        assert store.chain("deep-0")[-1] == "deep-1199"


def test_huge_tool_output_is_clipped_in_the_transcript(tmp_path: Path) -> None:
    path = tmp_path / "huge.db"
    SessionStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    _huge(conn)
    conn.close()
    with SessionStore(path) as store:
        docs = SessionRecallRetriever(store=store, max_chars=5_000).invoke("alpha")
        assert [d.metadata["session_id"] for d in docs] == ["bad-huge"]
        assert len(docs[0].page_content) < 6_000
        tool_part = next(m for m in store.chain_messages("bad-huge") if m.role == "tool")
        assert len(tool_part.content) < 1_000
    count("bad_rows.messages_checked", 2)


def test_malformed_tool_calls_show_no_calls_but_keep_the_row(tmp_path: Path) -> None:
    path = tmp_path / "calls.db"
    SessionStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    _tool_calls(conn)
    conn.close()
    with SessionStore(path) as store:
        messages = store.get_messages("bad-calls")
        assert len(messages) == 9
        assert all(m.tool_call_names == [] for m in messages)
        assert json.dumps([m.content for m in messages])
    count("bad_rows.messages_checked", 9)
