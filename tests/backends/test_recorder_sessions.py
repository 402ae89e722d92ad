"""SessionRecorder on both backends: what names a session, and retried runs (issue 16 §3)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda

from langchain_session_recall.recorder import SessionRecorder


def _chain(*replies: str) -> Any:
    prompt = ChatPromptTemplate.from_messages([("human", "{q}")])
    return prompt | GenericFakeChatModel(messages=iter([AIMessage(r) for r in replies]))


def _transcript(store: Any, sid: str) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in store.get_messages(sid)]


@pytest.mark.parametrize("key", ["thread_id", "session_id"])
def test_a_plain_runnable_records_under_the_configured_thread(store: Any, key: str) -> None:
    recorder = SessionRecorder(store)
    chain = _chain("Use a CORS middleware.", "Restart nginx.")
    for q, thread in (("allow cross-origin?", "t1"), ("reload config?", "t2")):
        chain.invoke({"q": q}, config={"callbacks": [recorder], "configurable": {key: thread}})
    assert _transcript(store, "t1") == [
        ("user", "allow cross-origin?"),
        ("assistant", "Use a CORS middleware."),
    ]
    assert _transcript(store, "t2") == [("user", "reload config?"), ("assistant", "Restart nginx.")]
    assert sorted(store.all_session_ids()) == ["t1", "t2"]


async def test_an_async_plain_runnable_records_under_the_configured_thread(store: Any) -> None:
    recorder = SessionRecorder(store)
    await _chain("ok").ainvoke(
        {"q": "hello"}, config={"callbacks": [recorder], "configurable": {"thread_id": "t1"}}
    )
    assert _transcript(store, "t1") == [("user", "hello"), ("assistant", "ok")]


def test_a_lambda_root_with_a_messages_input_records_under_the_configured_thread(
    store: Any,
) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage("pong")]))
    chain = RunnableLambda(lambda x: x["messages"]) | model
    chain.invoke(
        {"messages": [{"role": "user", "content": "ping"}]},
        config={"callbacks": [SessionRecorder(store)], "configurable": {"thread_id": "t9"}},
    )
    assert store.all_session_ids() == ["t9"]
    assert _transcript(store, "t9") == [("user", "ping"), ("assistant", "pong")]


def test_the_recorders_own_session_id_wins_over_the_config(store: Any) -> None:
    _chain("ok").invoke(
        {"q": "hello"},
        config={
            "callbacks": [SessionRecorder(store, session_id="fixed")],
            "configurable": {"thread_id": "t1"},
        },
    )
    assert store.all_session_ids() == ["fixed"]
