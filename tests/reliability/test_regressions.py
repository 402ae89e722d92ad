"""One regression test per fix this suite forced into the package (see docs/reliability.md),
each on both backends (``backend_store``)."""

from __future__ import annotations

import io
import json
import logging

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from store_targets import StoreFactory

from langchain_session_recall import (
    EmptyQueryError,
    InvalidMessageError,
    InvalidSessionError,
    Session,
    SessionRecallRetriever,
)
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.backends.sqlite.fts import to_fts5
from langchain_session_recall.cli import main as cli_main
from langchain_session_recall.core.query import MAX_SEARCH_TERMS, parse_query
from langchain_session_recall.search.pipeline import search_sessions


def test_a_lone_surrogate_does_not_cost_the_batch(backend_store: SessionBackend) -> None:
    # json.loads of a cut-off emoji escape yields a lone surrogate, which UTF-8 cannot encode;
    # it used to raise UnicodeEncodeError and drop every message of the batch.
    cut = json.loads('"cut \\ud83d emoji in nginx logs"')
    store = backend_store
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


def test_text_with_nothing_searchable_gives_no_documents_not_an_error(
    backend_store: SessionBackend, caplog: pytest.LogCaptureFixture
) -> None:
    # The retriever raised EmptyQueryError for "?", "(" or an emoji: inside an LCEL chain a
    # user's emoji crashed the chain. It now returns [] (and says why in a debug log); only
    # empty/whitespace text lists recent sessions. search_sessions keeps raising.
    store = backend_store
    store.add_session("s", title="t")
    store.add_messages("s", [{"role": "user", "content": "hello"}])
    retriever = SessionRecallRetriever(store=store)
    for text in ("???", "(", "NOT", "AND OR NOT", '"AND', "\x00\x01", "\ud800", "\U0001f525"):
        with caplog.at_level(logging.DEBUG, logger="langchain_session_recall.retriever"):
            assert retriever.invoke(text) == []
        assert "nothing to search" in caplog.text
        caplog.clear()
        with pytest.raises(EmptyQueryError, match="nothing to search"):
            search_sessions(store, text)
    chain = RunnableLambda(lambda text: text) | retriever
    assert chain.invoke("\U0001f44d") == []
    for text in ("", "  \n\t "):
        docs = retriever.invoke(text)
        assert [(d.metadata["mode"], d.metadata["session_id"]) for d in docs] == [("recent", "s")]


def test_rows_with_text_numbers_or_deeply_nested_json_do_not_break_search(
    store_factory: StoreFactory,
) -> None:
    # float("yesterday") raised ValueError, and json.loads("[" * 5000) RecursionError (which is
    # not a ValueError), from every search that returned such a row. PostgreSQL's typed columns
    # cannot hold text in a number or a NUL: there the odd numbers are NaN and infinities.
    target = store_factory.target("rows")
    target.open().close()
    pg = target.backend == "postgres"
    with target.sql() as sql:
        sql.execute(
            "INSERT INTO sessions (id, source, started_at, message_count) VALUES ('s', 'cli', ?, ?)",
            (float("nan"), -3) if pg else ("last tuesday", "many"),
        )
        sql.executemany(
            "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) "
            "VALUES ('s', ?, ?, ?, ?)",
            [
                ("user", "nginx at an odd time", None, float("inf") if pg else "yesterday"),
                ("assistant", "nginx calls", "[" * 5000, 1.0),
                ("user", ("json:" if pg else "\x00json:") + "[" * 5000, None, 2.0),
            ],
        )
    with target.open() as store:
        docs = SessionRecallRetriever(store=store).invoke("nginx")
        assert [d.metadata["session_id"] for d in docs] == ["s"]
        assert docs[0].metadata["when"] == ("unknown" if pg else "1970-01-01 00:00 UTC")
        times = sorted(m.timestamp for m in store.get_messages("s"))
        assert times == ([1.0, 2.0, float("inf")] if pg else [0.0, 1.0, 2.0])
        session = store.get_session("s")
        assert session is not None and (session.id, session.source) == ("s", "cli")
        if not pg:
            assert session == Session(id="s", source="cli", started_at=0.0)


def test_a_long_query_keeps_the_words_past_the_per_term_budget(
    backend_store: SessionBackend,
) -> None:
    # search_terms() matches at most MAX_SEARCH_TERMS words one by one; the words after them
    # used to be dropped, so "...twenty other words... nginx" silently missed the nginx session.
    store = backend_store
    store.add_session("s")
    store.add_messages("s", [{"role": "user", "content": "the nginx proxy drops headers"}])
    words = " ".join(f"word{i}" for i in range(MAX_SEARCH_TERMS + 4))
    for text in (f"{words} nginx", f'{words} "proxy drops"', f"{words} ngin*"):
        outcome = search_sessions(store, text)
        assert [r.root_id for r in outcome.sessions] == ["s"], text


def test_an_accented_prefix_is_not_cut_to_nothing(backend_store: SessionBackend) -> None:
    # stable_prefix() compared "é" with its folded stem "e", never equal, and cut the prefix to
    # "": the rendered `""*` matches nothing, so "ébau*" missed "ébauche".
    store = backend_store
    store.add_session("s")
    store.add_messages("s", [{"role": "user", "content": "une ébauche du déploiement"}])
    for text in ("ébau*", "É*", "déploi*", "x ébau*"):
        assert '""' not in to_fts5(parse_query(text), "strict")
        assert [r.root_id for r in search_sessions(store, text).sessions] == ["s"], text


def test_stats_of_a_store_holding_times_no_clock_can_show(store_factory: StoreFactory) -> None:
    # _when_date() made dates with an unguarded datetime.fromtimestamp: one session started at
    # an infinity or 1e300 (the store takes them; PostgreSQL also NaN, from another writer)
    # made `session-recall stats` die with an OverflowError traceback (exit 2 for NaN).
    # The library refuses non-finite times now (below); other writers may still store them.
    target = store_factory.target()
    with target.open() as store:
        store.add_session("far", started_at=1e300)
    odd = [float("inf"), -float("inf")] + ([float("nan")] if target.backend == "postgres" else [])
    with target.sql() as sql:
        for n, when in enumerate(odd):
            sql.execute("INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', ?)",
                        (f"odd{n}", when))  # fmt: skip
    out = io.StringIO()
    assert cli_main(["stats", "--db", target.db], out) == 0
    assert "unknown .. unknown" in out.getvalue()


@pytest.mark.parametrize("when", [float("nan"), float("inf"), -float("inf"), 10**400])
def test_non_finite_times_are_refused_alike_on_both_backends(
    backend_store: SessionBackend, when: float
) -> None:
    # SQLite turned NaN into NULL (a raw NOT NULL IntegrityError), PostgreSQL stored it.
    with pytest.raises(InvalidSessionError, match="started_at must be finite"):
        backend_store.add_session("s", started_at=when)
    assert backend_store.get_session("s") is None
    backend_store.add_session("s", started_at=1.0)
    with pytest.raises(InvalidSessionError, match="started_at must be finite"):
        backend_store.add_session("s", started_at=when)  # an update too
    with pytest.raises(InvalidMessageError, match="timestamp must be finite"):
        backend_store.add_messages("s", [{"role": "user", "content": "x", "timestamp": when}])
    session = backend_store.get_session("s")
    assert session is not None and session.started_at == 1.0
    assert backend_store.get_messages("s") == []
