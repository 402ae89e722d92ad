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


# ------------------------------------------------------------------ retried runs


class Flaky(GenericFakeChatModel):
    """Scripted replies; a reply that is an exception is raised instead (an API error)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        reply = next(self.messages)
        if isinstance(reply, Exception):
            raise reply
        self.messages = iter([reply, *self.messages])
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kw)


def _flaky(*replies: Any) -> Flaky:
    return Flaky(messages=iter(replies))


def _agent(model: Any, **kw: Any) -> Any:
    from langchain.agents import create_agent

    return create_agent(model, tools=[], **kw)


@pytest.mark.parametrize("same_recorder", [True, False], ids=["same-recorder", "new-recorder"])
def test_a_retried_agent_run_does_not_store_the_user_message_twice(
    store: Any, same_recorder: bool
) -> None:
    agent = _agent(_flaky(RuntimeError("503 from the API"), AIMessage("Renew the cert.")))
    recorder = SessionRecorder(store, session_id="ops")
    inputs = {"messages": [{"role": "user", "content": "TLS fails since Monday"}]}
    with pytest.raises(RuntimeError):
        agent.invoke(inputs, config={"callbacks": [recorder]})
    retry = recorder if same_recorder else SessionRecorder(store, session_id="ops")
    agent.invoke(inputs, config={"callbacks": [retry]})
    assert _transcript(store, "ops") == [
        ("user", "TLS fails since Monday"),
        ("assistant", "Renew the cert."),
    ]


def test_a_checkpointed_run_resumed_after_a_failure_does_not_duplicate(store: Any) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    agent = _agent(
        _flaky(RuntimeError("timeout"), AIMessage("Renew the cert.")), checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "t7"}}
    with pytest.raises(RuntimeError):
        agent.invoke(
            {"messages": [{"role": "user", "content": "TLS fails"}]},
            config={**config, "callbacks": [SessionRecorder(store)]},
        )
    agent.invoke(None, config={**config, "callbacks": [SessionRecorder(store)]})  # resume
    assert _transcript(store, "t7") == [("user", "TLS fails"), ("assistant", "Renew the cert.")]


def test_a_retried_plain_chain_does_not_duplicate(store: Any) -> None:
    prompt = ChatPromptTemplate.from_messages([("human", "{q}")])
    chain = prompt | _flaky(RuntimeError("rate limited"), AIMessage("42"))
    config: Any = {"callbacks": [SessionRecorder(store)], "configurable": {"thread_id": "q"}}
    with pytest.raises(RuntimeError):
        chain.invoke({"q": "the answer?"}, config=config)
    chain.invoke({"q": "the answer?"}, config=config)
    assert _transcript(store, "q") == [("user", "the answer?"), ("assistant", "42")]


def test_the_same_words_in_a_new_turn_are_a_new_message(store: Any) -> None:
    agent = _agent(_flaky(AIMessage("Delete all 40 files?"), AIMessage("Deleted.")))
    recorder = SessionRecorder(store, session_id="s")
    for _ in range(2):
        agent.invoke(
            {"messages": [{"role": "user", "content": "yes"}]}, config={"callbacks": [recorder]}
        )
    assert _transcript(store, "s") == [
        ("user", "yes"),
        ("assistant", "Delete all 40 files?"),
        ("user", "yes"),
        ("assistant", "Deleted."),
    ]


def test_get_messages_last_n_is_the_tail_oldest_first(store: Any) -> None:
    store.add_session("s")
    store.add_messages(
        "s", [{"role": "user", "content": f"m{i}", "timestamp": 100.0 + i} for i in range(5)]
    )
    assert [m.content for m in store.get_messages("s", last=2)] == ["m3", "m4"]
    assert [m.content for m in store.get_messages("s", last=99)] == [f"m{i}" for i in range(5)]
    assert store.get_messages("s", last=0) == []


@pytest.mark.parametrize("same_recorder", [True, False], ids=["same-recorder", "new-recorder"])
def test_a_run_that_ended_cleanly_is_not_retried_by_the_next(
    store: Any, same_recorder: bool
) -> None:
    calls = [{"name": "lookup", "args": {"q": "x"}, "id": f"c{i}"} for i in range(2)]
    prompt = ChatPromptTemplate.from_messages([("human", "{q}")])
    chain = prompt | _flaky(*(AIMessage("", tool_calls=[c]) for c in calls))
    recorder = SessionRecorder(store)
    for _ in range(2):  # each run ends with the model's tool call: no failure, no retry
        chain.invoke(
            {"q": "look it up"},
            config={
                "callbacks": [recorder if same_recorder else SessionRecorder(store)],
                "configurable": {"thread_id": "tc"},
            },
        )
    assert [role for role, _ in _transcript(store, "tc")] == ["user", "assistant"] * 2


def test_a_run_retried_after_its_tool_failed_does_not_store_the_user_message_twice(
    store: Any,
) -> None:
    from langchain_core.tools import tool

    attempts: list[int] = []

    @tool
    def disk_usage(path: str) -> str:
        """Disk usage of a path."""
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("mount point gone")
        return "91% used"

    call = {"name": "disk_usage", "args": {"path": "/"}, "id": "c1"}
    from langchain.agents import create_agent

    agent = create_agent(
        _flaky(
            AIMessage("", tool_calls=[call]), AIMessage("", tool_calls=[call]), AIMessage("91%.")
        ),
        tools=[disk_usage],
    )
    recorder = SessionRecorder(store, session_id="disk")
    inputs = {"messages": [{"role": "user", "content": "how full is /?"}]}
    with pytest.raises(OSError):
        agent.invoke(inputs, config={"callbacks": [recorder]})
    agent.invoke(inputs, config={"callbacks": [recorder]})
    roles = [role for role, _ in _transcript(store, "disk")]
    assert roles.count("user") == 1
    assert roles[0] == "user" and roles[-1] == "assistant"
