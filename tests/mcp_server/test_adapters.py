"""``langchain-mcp-adapters`` loads the served tools into a LangChain agent.

The agent's model is SCRIPTED (no real model, offline): it calls ``session_search`` with a bad
date, reads the tool error, calls again without it, and then answers by quoting the title of
the first result it was given, so the final message can only hold that title if the MCP tool
result really reached the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp_server.mcp_support import PGBOUNCER, server_command


def _text(message: ToolMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text")


class ScriptedChatModel(BaseChatModel):
    """A scripted stand-in for a chat model: a fixed plan, answers taken from tool results."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # the agent binds its tools
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:  # 1st turn: a call with a date the tool must reject
            args = {"query": "pgbouncer", "after": "last month"}
            reply = AIMessage("", tool_calls=[{"name": "session_search", "args": args, "id": "c1"}])
        elif results[-1].status == "error":  # 2nd turn: fix the arguments
            args = {"query": "pgbouncer", "limit": 1}
            reply = AIMessage("", tool_calls=[{"name": "session_search", "args": args, "id": "c2"}])
        else:  # 3rd turn: answer from what the tool returned
            title = json.loads(_text(results[-1]))["results"][0]["title"]
            reply = AIMessage(f"We did this before, in the session titled: {title}")
        return ChatResult(generations=[ChatGeneration(message=reply)])


@pytest.mark.slow  # a server subprocess and a LangGraph agent
async def test_agent_uses_the_mcp_tools_through_the_adapters(demo_db: Path) -> None:
    command, *args = server_command(demo_db, "--read-only")
    client = MultiServerMCPClient(
        {"recall": {"transport": "stdio", "command": command, "args": args}}
    )
    async with client.session("recall") as session:
        tools = await load_mcp_tools(session)
        assert sorted(t.name for t in tools) == ["session_search", "session_show"]
        agent = create_agent(ScriptedChatModel(), tools=tools)
        result = await agent.ainvoke(
            {"messages": [{"role": "user", "content": "How did we fix the Postgres connections?"}]}
        )

    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [m.status for m in tool_messages] == ["error", "success"]
    assert "2026-11-03" in _text(tool_messages[0])  # the hint reached the model
    payload = json.loads(_text(tool_messages[1]))
    assert payload["results"][0]["session_id"] == PGBOUNCER
    answer = result["messages"][-1].content
    assert "Postgres running out of connections: add pgbouncer" in answer
