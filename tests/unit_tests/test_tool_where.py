"""The session_search tool and the MCP server know where a session happened (issue 35, item 4):
results name the project, branch, agent and resume command when the store knows them; the tool
is scoped to a project or agents when built, and with ``where_arguments=True`` (the MCP server's
tool) the model passes ``project`` and ``agent`` itself. The default tool's schema and results
for sessions without a place stay as they were (recorded agent runs replay them)."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import ToolMessage
from mcp.shared.memory import create_connected_server_and_client_session
from mcp_server.mcp_support import payload_of

from langchain_session_recall import SessionStore
from langchain_session_recall.mcp_server import SESSION_SEARCH_MCP_DESCRIPTION, create_mcp_server
from langchain_session_recall.tool import (
    SESSION_SEARCH_DESCRIPTION,
    WHERE_ARGUMENTS_NOTE,
    SessionSearchInput,
    create_session_search_tool,
)

T0 = 1_790_000_000.0


def _store() -> SessionStore:
    store = SessionStore(":memory:")
    rows = [
        ("api", "/src/api", "main", "codex"),
        ("web", "/src/web", None, "claude-code"),
        ("bare", None, None, None),
    ]
    for n, (sid, project, branch, agent) in enumerate(rows):
        store.add_session(sid, started_at=T0 + n, project=project, git_branch=branch, agent=agent)
        store.add_messages(sid, [{"role": "user", "content": f"walrus {sid}", "timestamp": T0 + n}])
    return store


def _payload(tool: Any, args: dict[str, Any]) -> dict[str, Any]:
    call = {"name": "session_search", "args": args, "id": "call_1", "type": "tool_call"}
    message = tool.invoke(call)
    assert isinstance(message, ToolMessage)
    return json.loads(str(message.content))  # type: ignore[no-any-return]


def test_results_name_where_their_session_happened_when_it_is_known() -> None:
    tool = create_session_search_tool(_store())
    found = {r["session_id"]: r for r in _payload(tool, {"query": "walrus", "limit": 5})["results"]}
    assert found["api"]["project"] == "/src/api" and found["api"]["git_branch"] == "main"
    assert found["api"]["agent"] == "codex"
    assert found["api"]["resume"] == "cd /src/api && codex resume api"
    assert "git_branch" not in found["web"] and found["web"]["agent"] == "claude-code"
    assert not {"project", "git_branch", "agent", "resume"} & set(found["bare"])
    recent = {r["session_id"]: r for r in _payload(tool, {"limit": 5})["results"]}
    assert recent["web"]["resume"] == "cd /src/web && claude --resume web"
    assert "resume" not in recent["bare"]


def test_a_tool_built_for_a_project_searches_only_there() -> None:
    tool = create_session_search_tool(_store(), project="/src", agent="claude-code")
    found = _payload(tool, {"query": "walrus", "limit": 5})["results"]
    assert [r["session_id"] for r in found] == ["web"]


def test_the_default_schema_is_unchanged_and_where_arguments_add_two() -> None:
    plain = create_session_search_tool(_store())
    assert set(plain.tool_call_schema.model_json_schema()["properties"]) == set(
        SessionSearchInput.model_fields
    )
    assert plain.description == SESSION_SEARCH_DESCRIPTION
    tool = create_session_search_tool(_store(), where_arguments=True)
    properties = tool.tool_call_schema.model_json_schema()["properties"]
    assert set(properties) == {*SessionSearchInput.model_fields, "project", "agent"}
    assert tool.description.endswith(WHERE_ARGUMENTS_NOTE)
    found = _payload(tool, {"query": "walrus", "project": "/src/api/", "limit": 5})["results"]
    assert [r["session_id"] for r in found] == ["api"]
    found = _payload(tool, {"query": "walrus", "agent": "claude-code,codex", "limit": 5})
    assert {r["session_id"] for r in found["results"]} == {"api", "web"}
    failed = _payload(tool, {"query": "walrus", "project": "src/api"})
    assert failed["success"] is False and "absolute" in failed["error"]


async def test_the_mcp_server_takes_project_and_agent() -> None:
    server = create_mcp_server(_store())
    async with create_connected_server_and_client_session(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        properties = tools["session_search"].inputSchema["properties"]
        assert {"project", "agent"} <= set(properties)
        assert WHERE_ARGUMENTS_NOTE in SESSION_SEARCH_MCP_DESCRIPTION
        args = {"query": "walrus", "project": "/src/web", "limit": 5}
        found = payload_of(await client.call_tool("session_search", args))
        assert [(r["session_id"], r["agent"]) for r in found["results"]] == [("web", "claude-code")]
        listed = payload_of(await client.call_tool("session_search", {"agent": "codex"}))
        assert [r["session_id"] for r in listed["results"]] == ["api"]


async def test_session_show_names_where_the_session_happened() -> None:
    server = create_mcp_server(_store())
    async with create_connected_server_and_client_session(server) as client:
        shown = payload_of(await client.call_tool("session_show", {"session_id": "api"}))
        assert (shown["project"], shown["git_branch"], shown["agent"]) == (
            "/src/api",
            "main",
            "codex",
        )
        assert shown["resume"] == "cd /src/api && codex resume api"
        bare = payload_of(await client.call_tool("session_show", {"session_id": "bare"}))
        assert not {"project", "git_branch", "agent", "resume"} & set(bare)
