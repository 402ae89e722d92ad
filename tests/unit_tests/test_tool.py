"""The session_search tool: modes, envelope, limits, config-scoped exclusion, errors, agents."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import ToolException

from langchain_session_recall import SessionStore
from langchain_session_recall.retriever import SessionRecallRetriever
from langchain_session_recall.tool import SESSION_SEARCH_DESCRIPTION, create_session_search_tool

CORS = "20261103_091512_a1b2c3"
BROAD = "docker OR nginx OR postgres OR backup OR API OR script"


def _call(tool: Any, args: dict[str, Any], config: dict[str, Any] | None = None) -> ToolMessage:
    call = {"name": "session_search", "args": args, "id": "call_1", "type": "tool_call"}
    message = tool.invoke(call, config=config)
    assert isinstance(message, ToolMessage)
    return message


def test_schema_and_description_teach_the_model() -> None:
    tool = create_session_search_tool(SessionStore(":memory:"))
    assert tool.name == "session_search"
    props = tool.tool_call_schema.model_json_schema()["properties"]
    assert set(props) == {"query", "limit", "role_filter", "after", "before"}
    for phrase in (
        "we did this before",
        "remember when",
        " OR ",
        "NOT",
        "deploy*",
        '"double quotes"',
    ):
        assert phrase in SESSION_SEARCH_DESCRIPTION


def test_recent_mode_envelope(demo_store: SessionStore) -> None:
    message = _call(create_session_search_tool(demo_store), {})
    payload = json.loads(message.content)  # type: ignore[arg-type]
    assert payload["success"] is True and payload["query"] == ""
    assert payload["count"] == len(payload["results"]) == 3
    assert set(payload["results"][0]) >= {"session_id", "title", "preview", "when", "message_count"}
    assert all(d.metadata["mode"] == "recent" for d in message.artifact)


def test_search_without_llm_gives_extractive_recaps(demo_store: SessionStore) -> None:
    message = _call(
        create_session_search_tool(demo_store), {"query": "how did we fix the CORS error?"}
    )
    payload = json.loads(message.content)  # type: ignore[arg-type]
    assert payload["success"] is True
    first = payload["results"][0]
    assert first["session_id"] == CORS
    assert set(first) == {"session_id", "when", "source", "model", "title", "summary"}
    assert "CORS" in first["summary"]
    assert payload["sessions_searched"] >= payload["count"] >= 1
    assert message.artifact[0].metadata["summary_status"] == "fallback"


def test_search_with_llm_returns_summaries(demo_store: SessionStore) -> None:
    llm = GenericFakeChatModel(
        messages=iter([AIMessage("Fixed CORS by adding add_header in nginx.")] * 3)
    )
    tool = create_session_search_tool(demo_store, llm=llm, cache=False)
    payload = json.loads(_call(tool, {"query": "CORS", "limit": 1}).content)  # type: ignore[arg-type]
    # The recap, with the messages that support it cited by the library.
    assert payload["results"][0]["summary"] == "Fixed CORS by adding add_header in nginx [#53]."


def test_limit_is_clamped_not_rejected(demo_store: SessionStore) -> None:
    payload = json.loads(
        _call(create_session_search_tool(demo_store), {"query": BROAD, "limit": 50}).content
    )  # type: ignore[arg-type]
    assert payload["success"] is True and payload["count"] == 5


def test_current_session_comes_from_config(demo_store: SessionStore) -> None:
    tool = create_session_search_tool(demo_store)
    config = {"configurable": {"session_id": CORS}}
    payload = json.loads(_call(tool, {"query": "CORS"}, config).content)  # type: ignore[arg-type]
    assert CORS not in [r["session_id"] for r in payload["results"]]
    recent = json.loads(
        _call(
            tool, {"limit": 5}, {"configurable": {"session_id": "20261129_030001_3c1a04"}}
        ).content
    )  # type: ignore[arg-type]
    assert "20261129_030001_3c1a04" not in [r["session_id"] for r in recent["results"]]


def test_filters_and_errors(demo_store: SessionStore) -> None:
    tool = create_session_search_tool(demo_store)
    only_tool = json.loads(_call(tool, {"query": "superuser", "role_filter": "user"}).content)  # type: ignore[arg-type]
    assert only_tool["count"] == 0 and "OR" in only_tool["message"]
    dated = json.loads(_call(tool, {"query": "CORS", "after": "2026-11-04"}).content)  # type: ignore[arg-type]
    assert dated["count"] == 0
    bad = json.loads(_call(tool, {"query": "CORS", "after": "last tuesday"}).content)  # type: ignore[arg-type]
    assert bad["success"] is False and "2026-11-03" in bad["error"]
    junk = json.loads(_call(tool, {"query": '"" *** AND'}).content)  # type: ignore[arg-type]
    assert junk["success"] is False and "nothing to search" in junk["error"]


def test_tenant_and_retriever_options(demo_store: SessionStore) -> None:
    tool = create_session_search_tool(demo_store, user_id="bob")
    payload = json.loads(_call(tool, {"query": "nginx", "limit": 5}).content)  # type: ignore[arg-type]
    assert [r["session_id"] for r in payload["results"]] == ["20261106_080419_b0b001"]
    retriever = SessionRecallRetriever(store=demo_store, user_id="bob")
    assert create_session_search_tool(retriever).retriever.user_id == "bob"
    with pytest.raises(TypeError, match="unknown option"):
        create_session_search_tool(demo_store, colour="blue")


async def test_async_tool(demo_store: SessionStore) -> None:
    tool = create_session_search_tool(demo_store)
    call = {
        "name": "session_search",
        "args": {"query": "pgbouncer"},
        "id": "c",
        "type": "tool_call",
    }
    message = await tool.ainvoke(call)
    payload = json.loads(message.content)
    assert payload["results"][0]["session_id"] == "20261105_112048_f00d42"


def test_agent_calls_session_search_and_answers(demo_store: SessionStore) -> None:
    from langchain import agents

    class ToolCallingFake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # the agent binds its tools
            return self

    turns = iter(
        [
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "session_search", "args": {"query": "CORS error"}, "id": "t1"}
                ],
            ),
            AIMessage(
                content="Last time we added add_header Access-Control-Allow-Origin in nginx."
            ),
        ]
    )
    agent = agents.create_agent(
        ToolCallingFake(messages=turns), tools=[create_session_search_tool(demo_store)]
    )
    result = agent.invoke(
        {"messages": [{"role": "user", "content": "How did we fix the CORS error last time?"}]},
        config={"configurable": {"session_id": "current-chat"}},
    )
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_messages) == 1
    payload = json.loads(tool_messages[0].content)  # type: ignore[arg-type]
    assert payload["results"][0]["session_id"] == CORS
    assert tool_messages[0].artifact and tool_messages[0].artifact[0].metadata["session_id"] == CORS
    assert "add_header" in result["messages"][-1].content


# --------------------------------------------------------------------------- errors (issue 34)

BAD_ARGUMENTS = [
    {"query": "CORS", "after": "last tuesday"},
    {"query": "CORS", "limit": 0},
    {"query": "CORS", "role_filter": "bogus"},
    {"query": "CORS", "after": "2026-11-06", "before": "2026-11-04"},
    {"query": '"" *** AND'},
]


@pytest.mark.parametrize("args", BAD_ARGUMENTS)
async def test_an_error_is_a_tool_message_with_status_error(
    demo_store: SessionStore, args: dict[str, Any]
) -> None:
    """LangChain's convention (a ToolException, handled): the model sees ``status="error"``,
    sync and async, with the JSON envelope's readable message; a good call is a success."""
    tool = create_session_search_tool(demo_store)
    call = {"name": "session_search", "args": args, "id": "c", "type": "tool_call"}
    for message in (tool.invoke(call), await tool.ainvoke(call)):
        assert isinstance(message, ToolMessage)
        assert message.status == "error", message
        payload = json.loads(message.content)  # type: ignore[arg-type]
        assert payload["success"] is False
        assert payload["error"].endswith("Fix the arguments and call session_search again.")
    assert _call(tool, {"query": "CORS"}).status == "success"
    assert _call(tool, {}).status == "success"


def test_the_exception_reaches_a_caller_that_handles_it_itself(demo_store: SessionStore) -> None:
    tool = create_session_search_tool(demo_store)
    tool.handle_tool_error = False
    with pytest.raises(ToolException, match="asks for no session"):
        tool.invoke({"query": "CORS", "limit": 0})
    tool.handle_tool_error = True  # LangChain's own handler: the plain message
    message = _call(tool, {"query": "CORS", "limit": 0})
    assert message.status == "error" and str(message.content).startswith("limit=0 asks for")


def test_an_agent_sees_the_failed_call_as_an_error_and_retries(demo_store: SessionStore) -> None:
    from langchain import agents

    class ToolCallingFake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    def calling(args: dict[str, Any], n: int) -> AIMessage:
        call = {"name": "session_search", "args": args, "id": f"t{n}"}
        return AIMessage(content="", tool_calls=[call])  # type: ignore[list-item]

    turns = iter(
        [
            calling({"query": "CORS", "role_filter": "bogus"}, 1),
            calling({"query": "CORS", "role_filter": "human"}, 2),
            AIMessage(content="We added add_header in nginx."),
        ]
    )
    agent = agents.create_agent(
        ToolCallingFake(messages=turns), tools=[create_session_search_tool(demo_store)]
    )
    result = agent.invoke({"messages": [{"role": "user", "content": "the CORS fix?"}]})
    first, second = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert first.status == "error" and "unknown role 'bogus'" in str(first.content)
    assert second.status == "success"
    assert json.loads(second.content)["results"][0]["session_id"] == CORS  # type: ignore[arg-type]
