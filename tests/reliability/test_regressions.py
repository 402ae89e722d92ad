"""One regression test per fix this suite forced into the package (see docs/reliability.md)."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from langchain_session_recall import EmptyQueryError, Session, SessionRecallRetriever, SessionStore
from langchain_session_recall.backends.sqlite.fts import to_fts5
from langchain_session_recall.cli import main as cli_main
from langchain_session_recall.search.pipeline import search_sessions
from langchain_session_recall.search.query import MAX_SEARCH_TERMS, parse_query


def test_a_lone_surrogate_does_not_cost_the_batch() -> None:
    # json.loads of a cut-off emoji escape yields a lone surrogate, which UTF-8 cannot encode;
    # it used to raise UnicodeEncodeError and drop every message of the batch.
    cut = json.loads('"cut \\ud83d emoji in nginx logs"')
    store = SessionStore(":memory:")
    store.add_session("s")
    ids = store.add_messages(
        "s",
        [
            {"role": "user", "content": "first, fine"},
            {"role": "user", "content": cut},
            {"role": "tool", "content": "out", "tool_name": cut, "tool_call_id": cut},
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": cut}}]},
            AIMessage(content=[{"type": "text", "text": cut}]),
            ToolMessage(content=cut, tool_call_id="c1", name="x\udc00"),
            {"role": "user", "content": "pair \ud83d\ude00 joined"},
        ],
    )
    assert len(ids) == 7
    stored = store.get_messages("s")
    assert stored[1].content == "cut \ufffd emoji in nginx logs"
    assert stored[2].tool_name == "cut \ufffd emoji in nginx logs"
    assert stored[6].content == "pair \U0001f600 joined"
    assert [r.root_id for r in search_sessions(store, "nginx").sessions] == ["s"]


def test_text_with_nothing_searchable_raises_the_documented_error() -> None:
    # The contract (errors.EmptyQueryError): only empty/whitespace text lists recent sessions;
    # text that is all punctuation, operators or control characters raises EmptyQueryError,
    # which the agent tool reports back as "nothing to search".
    store = SessionStore(":memory:")
    store.add_session("s", title="t")
    store.add_messages("s", [{"role": "user", "content": "hello"}])
    retriever = SessionRecallRetriever(store=store)
    for text in ("???", "AND OR NOT", '"AND', "\x00\x01", "\ud800"):
        with pytest.raises(EmptyQueryError, match="nothing to search"):
            retriever.invoke(text)
    for text in ("", "  \n\t "):
        docs = retriever.invoke(text)
        assert [(d.metadata["mode"], d.metadata["session_id"]) for d in docs] == [("recent", "s")]


def test_rows_with_text_numbers_or_deeply_nested_json_do_not_break_search(tmp_path: Path) -> None:
    # float("yesterday") raised ValueError, and json.loads("[" * 5000) RecursionError (which is
    # not a ValueError), from every search that returned such a row.
    path = tmp_path / "rows.db"
    SessionStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "INSERT INTO sessions (id, source, started_at, message_count) "
        "VALUES ('s', 'cli', 'last tuesday', 'many')"
    )
    conn.executemany(
        "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) "
        "VALUES ('s', ?, ?, ?, ?)",
        [
            ("user", "nginx at an odd time", None, "yesterday"),
            ("assistant", "nginx calls", "[" * 5000, 1.0),
            ("user", "\x00json:" + "[" * 5000, None, 2.0),
        ],
    )
    conn.close()
    with SessionStore(path) as store:
        docs = SessionRecallRetriever(store=store).invoke("nginx")
        assert [d.metadata["session_id"] for d in docs] == ["s"]
        assert sorted(m.timestamp for m in store.get_messages("s")) == [0.0, 1.0, 2.0]
        assert store.get_session("s") == Session(id="s", source="cli", started_at=0.0)


def test_a_long_query_keeps_the_words_past_the_per_term_budget() -> None:
    # search_terms() matches at most MAX_SEARCH_TERMS words one by one; the words after them
    # used to be dropped, so "...twenty other words... nginx" silently missed the nginx session.
    store = SessionStore(":memory:")
    store.add_session("s")
    store.add_messages("s", [{"role": "user", "content": "the nginx proxy drops headers"}])
    words = " ".join(f"word{i}" for i in range(MAX_SEARCH_TERMS + 4))
    for text in (f"{words} nginx", f'{words} "proxy drops"', f"{words} ngin*"):
        outcome = search_sessions(store, text)
        assert [r.root_id for r in outcome.sessions] == ["s"], text


def test_an_accented_prefix_is_not_cut_to_nothing() -> None:
    # stable_prefix() compared "é" with its folded stem "e", never equal, and cut the prefix to
    # "": the rendered `""*` matches nothing, so "ébau*" missed "ébauche".
    store = SessionStore(":memory:")
    store.add_session("s")
    store.add_messages("s", [{"role": "user", "content": "une ébauche du déploiement"}])
    for text in ("ébau*", "É*", "déploi*", "x ébau*"):
        assert '""' not in to_fts5(parse_query(text), "strict")
        assert [r.root_id for r in search_sessions(store, text).sessions] == ["s"], text


def test_stats_of_a_store_holding_times_no_clock_can_show(tmp_path: Path) -> None:
    # _when_date() made dates with an unguarded datetime.fromtimestamp: one session started at
    # an infinity or 1e300 (the store takes them, and so does a file from another writer) made
    # `session-recall stats` die with an OverflowError traceback.
    path = tmp_path / "times.db"
    with SessionStore(path) as store:
        store.add_session("far", started_at=1e300)
        store.add_session("inf", started_at=float("inf"))
        store.add_session("past", started_at=-float("inf"))
    out = io.StringIO()
    assert cli_main(["stats", "--db", str(path)], out) == 0
    assert "unknown .. unknown" in out.getvalue()
