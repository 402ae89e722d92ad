"""A pathological query asks the store a bounded number of bounded queries (issue 18 §6)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from langchain_session_recall import SessionRecallRetriever
from langchain_session_recall.core.query import MAX_PREFIX_TERMS, MAX_QUERY_TERMS
from langchain_session_recall.search.pipeline import MAX_STORE_QUERIES


@pytest.mark.parametrize(
    "text",
    [
        "nginx " + " ".join(f"pre{i}*" for i in range(10_000)),
        "nginx " + " ".join(f"word{i}" for i in range(10_000)),
        "nginx OR " + " OR ".join(f"pre{i}*" for i in range(10_000)),
        "nginx " + "".join(chr(0x4E00 + i) for i in range(5_000)),
    ],
    ids=["prefixes", "words", "or-prefixes", "cjk-run"],
)
def test_a_ten_thousand_term_query_is_bounded_and_still_finds_its_first_word(
    store: Any, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    store.add_session("web", title="nginx")
    store.add_messages("web", [{"role": "user", "content": "nginx returns 502 after deploy"}])
    asked: list[Any] = []
    real = store.match_messages

    def counting(query: Any, reading: str, **kw: Any) -> Any:
        asked.append(query)
        return real(query, reading, **kw)

    monkeypatch.setattr(store, "match_messages", counting)
    docs = SessionRecallRetriever(store=store).invoke(text)
    assert [d.metadata["session_id"] for d in docs] == ["web"]
    assert 0 < len(asked) <= MAX_STORE_QUERIES
    for query in asked:
        assert len(query.strict) <= MAX_QUERY_TERMS and len(query.relaxed) <= MAX_QUERY_TERMS
        assert sum(t.prefix for t in query.relaxed) <= MAX_PREFIX_TERMS


# ------------------------------------------------- issue 21 §9: megabyte queries, huge words

from langchain_session_recall import create_session_search_tool  # noqa: E402
from langchain_session_recall.core.query import (  # noqa: E402
    MAX_QUERY_CHARS,
    MAX_WORD_CHARS,
)


def _web_store(store: Any) -> None:
    store.add_session("web", title="nginx")
    store.add_messages("web", [{"role": "user", "content": "nginx returns 502 after deploy"}])


def _recording(store: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    asked: list[Any] = []
    real = store.match_messages

    def recording(query: Any, reading: str, **kw: Any) -> Any:
        asked.append(query)
        return real(query, reading, **kw)

    monkeypatch.setattr(store, "match_messages", recording)
    return asked


def test_a_megabyte_query_is_read_only_up_to_the_cap(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _web_store(store)
    asked = _recording(store, monkeypatch)
    text = "nginx 502 upstream timed out " * 40_000  # 1.2 MB, a pasted log
    docs = SessionRecallRetriever(store=store).invoke(text)
    assert [d.metadata["session_id"] for d in docs] == ["web"]
    assert asked and all(len(q.text) <= MAX_QUERY_CHARS for q in asked)
    assert len(docs[0].metadata["query"]) <= MAX_QUERY_CHARS  # what is echoed downstream


def test_a_megabyte_word_is_searched_as_a_bounded_prefix(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.add_session("blob", title="upload")
    blob = "QmFzZTY0" * 40  # 320 characters, longer than any word searched as written
    store.add_messages("blob", [{"role": "user", "content": f"the upload was {blob} and failed"}])
    asked = _recording(store, monkeypatch)
    docs = SessionRecallRetriever(store=store).invoke(blob * 10_000)  # 3.2 MB, one word
    tokens = [tok for q in asked for t in q.relaxed for tok in t.tokens]
    assert tokens and max(len(tok) for tok in tokens) <= MAX_WORD_CHARS
    assert [d.metadata["session_id"] for d in docs] == ["blob"]  # found by its beginning


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_tool_states_the_caps_and_echoes_a_bounded_valid_query(
    store: Any, mode: str
) -> None:
    _web_store(store)
    tool = create_session_search_tool(store)
    assert f"{MAX_QUERY_CHARS:,} characters" in tool.description
    arguments = {"query": "nginx \ud800 deploy " + "x" * 3_000_000}
    out = tool.invoke(arguments) if mode == "sync" else await tool.ainvoke(arguments)
    out.encode("utf-8")  # a lone surrogate echoed back cannot be sent
    payload = json.loads(out)
    assert payload["results"][0]["session_id"] == "web"
    assert len(payload["query"]) <= MAX_QUERY_CHARS
    assert "2,000 characters" in payload["notice"] and "prefixes" in payload["notice"]


async def test_the_async_tool_parses_off_the_event_loop(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import langchain_session_recall.tool as tool_module

    _web_store(store)
    threads: list[threading.Thread] = []
    real = tool_module.parse_query

    def recording(text: str) -> Any:
        threads.append(threading.current_thread())
        return real(text)

    monkeypatch.setattr(tool_module, "parse_query", recording)
    out = await create_session_search_tool(store).ainvoke({"query": "nginx"})
    assert json.loads(out)["count"] == 1
    assert threads and threading.main_thread() not in threads
