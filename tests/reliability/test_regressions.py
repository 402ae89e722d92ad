"""One regression test per fix this suite forced into the package (see docs/reliability.md)."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage, ToolMessage

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.search import search_sessions


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


def test_retriever_lists_recent_sessions_for_text_with_nothing_searchable() -> None:
    # EmptyQueryError promises "the retriever never raises it"; "???" and "AND" used to escape.
    store = SessionStore(":memory:")
    store.add_session("s", title="t")
    store.add_messages("s", [{"role": "user", "content": "hello"}])
    retriever = SessionRecallRetriever(store=store)
    for text in ("???", "AND OR NOT", '"AND', "\x00\x01", "\ud800"):
        docs = retriever.invoke(text)
        assert [(d.metadata["mode"], d.metadata["session_id"]) for d in docs] == [("recent", "s")]
