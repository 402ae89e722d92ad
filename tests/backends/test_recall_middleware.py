"""Issue 34 §2: ``SessionRecallMiddleware`` with ``create_agent``, on both backends.

The chat model is a fake that records what it is sent (no recording: nothing is replayed)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import Field
from store_targets import StoreFactory

from langchain_session_recall import SessionRecallMiddleware, SessionSummarizer
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.middleware import RECALL_STATE_KEY, RECALLED_CONTEXT_TAG
from langchain_session_recall.retriever import SessionRecallRetriever
from langchain_session_recall.summarize.budget import estimate_tokens

QUESTION = "How did we fix the CORS error in nginx last time?"
FIX = "add_header Access-Control-Allow-Origin"
KEY = "sk-proj-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7" * 2


class RecordingModel(GenericFakeChatModel):
    """Answers from ``messages`` and keeps every list of messages it was sent."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # the agent binds its tools
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return await super()._agenerate(messages, *args, **kwargs)


def _model(*answers: AIMessage) -> RecordingModel:
    return RecordingModel(messages=iter(answers or [AIMessage("ok")]), seen=[])


def _past(store: SessionBackend) -> SessionBackend:
    store.add_session("cors-fix", title="CORS error in nginx", user_id="ann")
    store.add_messages(
        "cors-fix",
        [
            {"role": "user", "content": "The browser says CORS error when calling the API."},
            {"role": "assistant", "content": f"Fixed in nginx: {FIX} https://app.example."},
            {"role": "user", "content": f"thanks, and the deploy key is {KEY}"},
        ],
    )
    store.add_session("bob-cors", title="Bob's CORS error", user_id="bob")
    store.add_messages(
        "bob-cors", [{"role": "user", "content": "CORS error in nginx again, bob's proxy_pass"}]
    )
    return store


def _system(messages: list[BaseMessage]) -> str:
    first = messages[0]
    return first.text if isinstance(first, SystemMessage) else ""


def _ask(text: str = QUESTION) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def _ann(thread: str = "live") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": "ann"}}


def test_the_model_sees_the_recalled_session(store_factory: StoreFactory) -> None:
    store = _past(store_factory.open())
    model = _model(AIMessage("We added the header in nginx."))
    agent = create_agent(
        model,
        tools=[],
        system_prompt="You are a helpful assistant.",
        middleware=[SessionRecallMiddleware(store=store, k=3, max_tokens=1000)],
    )
    result = agent.invoke(_ask(), config=_ann())
    [call] = model.seen
    system = _system(call)
    assert system.startswith("You are a helpful assistant.")
    assert f"<{RECALLED_CONTEXT_TAG}>" in system and FIX in system
    assert "cors-fix" in system
    assert "proxy_pass" not in system  # bob's session: another user
    assert KEY not in system and "[REDACTED" in system  # redacted like every surface
    # the thread keeps only what was said in it; the private key is not in the output
    assert all(RECALLED_CONTEXT_TAG not in str(m.content) for m in result["messages"])
    assert RECALL_STATE_KEY not in result


def test_the_live_thread_is_left_out(store_factory: StoreFactory) -> None:
    store = _past(store_factory.open())
    store.add_session("live", user_id="ann")
    store.add_messages("live", [{"role": "user", "content": "CORS error nginx live-thread-only"}])
    model = _model()
    middleware = SessionRecallMiddleware(store=store)
    create_agent(model, tools=[], middleware=[middleware]).invoke(_ask(), config=_ann("live"))
    system = _system(model.seen[0])
    assert FIX in system and "live-thread-only" not in system


def test_user_id_comes_from_the_run_context(store_factory: StoreFactory) -> None:
    store = _past(store_factory.open())
    model = _model()
    agent = create_agent(
        model, tools=[], middleware=[SessionRecallMiddleware(store=store)], context_schema=dict
    )
    agent.invoke(_ask(), config={"configurable": {"thread_id": "t"}}, context={"user_id": "bob"})
    system = _system(model.seen[0])
    assert "proxy_pass" in system and FIX not in system


def test_nothing_is_added_when_nothing_matches(store_factory: StoreFactory) -> None:
    store = _past(store_factory.open())
    model = _model()
    agent = create_agent(
        model,
        tools=[],
        system_prompt="Be brief.",
        middleware=[SessionRecallMiddleware(store=store)],
    )
    agent.invoke(_ask("what is the capital of Mongolia?"), config=_ann())
    assert _system(model.seen[0]) == "Be brief."


def test_a_store_error_is_logged_and_the_run_goes_on(
    store_factory: StoreFactory, caplog: pytest.LogCaptureFixture
) -> None:
    store = _past(store_factory.open())
    middleware = SessionRecallMiddleware(store=store)
    store.close()  # every search now fails
    model = _model(AIMessage("answered without recall"))
    with caplog.at_level(logging.WARNING, logger="langchain_session_recall.middleware"):
        result = create_agent(model, tools=[], middleware=[middleware]).invoke(
            _ask(), config=_ann()
        )
    assert result["messages"][-1].content == "answered without recall"
    assert RECALLED_CONTEXT_TAG not in _system(model.seen[0])
    assert "session recall failed" in caplog.text


@tool
def lookup(term: str) -> str:
    """Look a term up."""
    return f"{term}: nothing more"


def _tool_loop_model() -> RecordingModel:
    call = {"name": "lookup", "args": {"term": "CORS"}, "id": "t1", "type": "tool_call"}
    return _model(AIMessage("", tool_calls=[call]), AIMessage("Done: the header in nginx."))


def _count_searches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    searched: list[str] = []
    original = SessionRecallRetriever._search

    def counting(self: SessionRecallRetriever, request: Any, *args: Any) -> Any:
        searched.append(request.query)
        return original(self, request, *args)

    monkeypatch.setattr(SessionRecallRetriever, "_search", counting)
    return searched


def test_one_search_per_run_and_every_model_call_of_it_sees_the_result(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _past(store_factory.open())
    searched = _count_searches(monkeypatch)
    model = _tool_loop_model()
    agent = create_agent(model, tools=[lookup], middleware=[SessionRecallMiddleware(store=store)])
    result = agent.invoke(_ask(), config=_ann())
    assert any(isinstance(m, ToolMessage) for m in result["messages"])
    assert searched == [QUESTION]
    assert len(model.seen) == 2
    assert all(FIX in _system(call) for call in model.seen)


async def test_async_runs_recall_too(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _past(store_factory.open())
    searched = _count_searches(monkeypatch)
    model = _tool_loop_model()
    agent = create_agent(model, tools=[lookup], middleware=[SessionRecallMiddleware(store=store)])
    result = await agent.ainvoke(_ask(), config=_ann())
    assert result["messages"][-1].content == "Done: the header in nginx."
    assert searched == [QUESTION]
    assert all(FIX in _system(call) for call in model.seen)


def test_each_run_searches_its_own_latest_message(store_factory: StoreFactory) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    store = _past(store_factory.open())
    model = _model(AIMessage("first"), AIMessage("second"))
    agent = create_agent(
        model,
        tools=[],
        middleware=[SessionRecallMiddleware(store=store)],
        checkpointer=InMemorySaver(),
    )
    agent.invoke(_ask(), config=_ann())
    agent.invoke(_ask("and the capital of Mongolia?"), config=_ann())
    assert FIX in _system(model.seen[0])
    assert RECALLED_CONTEXT_TAG not in _system(model.seen[1])  # nothing matched this time


def test_the_recalled_block_fits_the_token_budget(store_factory: StoreFactory) -> None:
    store = _past(store_factory.open())
    for n in range(4):
        store.add_session(f"more-{n}", user_id="ann", title=f"CORS again {n}")
        store.add_messages(
            f"more-{n}",
            [{"role": "user", "content": f"CORS error in nginx, case {n}: " + "detail " * 60}],
        )
    model = _model()
    middleware = SessionRecallMiddleware(store=store, k=5, max_tokens=150)
    create_agent(model, tools=[], middleware=[middleware]).invoke(_ask(), config=_ann())
    system = _system(model.seen[0])
    assert RECALLED_CONTEXT_TAG in system
    assert estimate_tokens(system) <= 150


def test_a_session_scored_close_to_the_best_gets_its_best_message_in_second(
    store_factory: StoreFactory,
) -> None:
    """Two sessions as relevant: within a tight budget each shows its best message before the
    best session shows its second (issue 34: the gold was often in the second session)."""
    store = store_factory.open()
    for session, what in (("kiln-a", "the glaze cracked"), ("kiln-b", "the shelf broke")):
        store.add_session(session, user_id="ann", title="Pottery")
        store.add_messages(
            session,
            [
                {"role": "user", "content": f"The kiln fired too hot and {what}."},
                {"role": "assistant", "content": "Lower the kiln cone. " + "More words. " * 8},
            ],
        )
    model = _model()
    middleware = SessionRecallMiddleware(store=store, k=2, max_tokens=90)
    create_agent(model, tools=[], middleware=[middleware]).invoke(
        _ask("why did the kiln fire too hot?"), config=_ann()
    )
    system = _system(model.seen[0])
    assert "the glaze cracked" in system and "the shelf broke" in system
    assert "Lower the kiln cone" not in system and estimate_tokens(system) <= 90


def test_a_summarizer_gives_model_recaps(store_factory: StoreFactory) -> None:
    store = _past(store_factory.open())
    recap = "The CORS error was fixed in nginx with add_header Access-Control-Allow-Origin."
    summarizer = SessionSummarizer(
        llm=GenericFakeChatModel(messages=iter([AIMessage(recap)])), cache=False, grounding=False
    )
    model = _model()
    middleware = SessionRecallMiddleware(store=store, summarizer=summarizer)
    create_agent(model, tools=[], middleware=[middleware]).invoke(_ask(), config=_ann())
    system = _system(model.seen[0])
    assert recap in system and "[USER]" not in system
