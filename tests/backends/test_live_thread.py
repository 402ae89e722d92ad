"""Issue 23 §3: the conversation in progress is left out, named as the recorder names it.

A LangGraph run's config names its conversation by ``configurable.thread_id`` (or
``session_id``): the retriever and the tool leave that session's whole lineage out, as they do
for an explicit ``current_session_id``.
"""

from __future__ import annotations

import json

from langchain_core.messages import ToolCall
from store_targets import StoreFactory

from langchain_session_recall import SessionRecallRetriever, create_session_search_tool


def _fill(store) -> None:  # type: ignore[no-untyped-def]
    store.add_session("old-1", started_at=1000.0)
    store.add_messages(
        "old-1", [{"role": "user", "content": "kafka consumer lag", "timestamp": 1000.0}]
    )
    store.add_session("t-live", started_at=2000.0)
    store.add_messages(
        "t-live", [{"role": "user", "content": "kafka lag again?", "timestamp": 2000.0}]
    )
    store.add_session("t-live-sub", parent_session_id="t-live", started_at=2001.0)
    store.add_messages(
        "t-live-sub", [{"role": "user", "content": "kafka offsets", "timestamp": 2001.0}]
    )


def _ids(docs) -> list[str]:  # type: ignore[no-untyped-def]
    return [d.metadata["session_id"] for d in docs]


def test_the_retriever_leaves_out_the_thread_named_by_the_config(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open("live")
    _fill(store)
    retriever = SessionRecallRetriever(store=store, k=5)
    assert sorted(_ids(retriever.invoke("kafka"))) == ["old-1", "t-live"]
    for key in ("thread_id", "session_id"):
        config = {"configurable": {key: "t-live"}}
        assert _ids(retriever.invoke("kafka", config=config)) == ["old-1"]  # type: ignore[arg-type]
        assert "t-live" not in _ids(retriever.invoke("", config=config))  # type: ignore[arg-type]
    # a sub-session named as the current one leaves its whole lineage out too
    sub = {"configurable": {"thread_id": "t-live-sub"}}
    assert _ids(retriever.invoke("kafka", config=sub)) == ["old-1"]  # type: ignore[arg-type]
    assert _ids(retriever.invoke("kafka", current_session_id="t-live")) == ["old-1"]
    assert _ids(
        SessionRecallRetriever(store=store, current_session_id="t-live").invoke("kafka")
    ) == ["old-1"]


def test_the_tool_leaves_out_the_thread_named_by_the_config(store_factory: StoreFactory) -> None:
    store = store_factory.open("live")
    _fill(store)
    tool = create_session_search_tool(store)
    call = ToolCall(name="session_search", args={"query": "kafka"}, id="c1", type="tool_call")
    message = tool.invoke(call, config={"configurable": {"thread_id": "t-live"}})
    payload = json.loads(message.content)
    assert [r["session_id"] for r in payload["results"]] == ["old-1"]
