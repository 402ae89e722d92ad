"""A pathological query asks the store a bounded number of bounded queries (issue 18 §6)."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_session_recall import SessionRecallRetriever
from langchain_session_recall.search.pipeline import MAX_STORE_QUERIES
from langchain_session_recall.search.query import MAX_PREFIX_TERMS, MAX_QUERY_TERMS


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
