"""A real MCP client: the SDK's stdio client starts ``session-recall mcp`` as a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_server.mcp_support import (
    BROAD,
    CORS,
    PGBOUNCER,
    cited_ids,
    langchain_tool_output,
    payload_of,
    server_command,
    text_of,
)

from langchain_session_recall.tool import SessionSearchWhereInput


@pytest.mark.slow  # a server subprocess over stdio
async def test_stdio_client_lists_and_calls_both_tools(demo_db: Path, tmp_path: Path) -> None:
    command, *args = server_command(demo_db)
    params = StdioServerParameters(command=command, args=args)
    log = tmp_path / "server.log"
    with log.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            init = await client.initialize()
            assert init.serverInfo.name == "session-recall"
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"session_search", "session_show"}
            search_schema = tools["session_search"].inputSchema["properties"]
            assert set(search_schema) == set(SessionSearchWhereInput.model_fields)
            assert tools["session_show"].inputSchema["required"] == ["session_id"]
            assert all(t.annotations and t.annotations.readOnlyHint for t in tools.values())

            # A query: exactly the LangChain tool's JSON.
            arguments = {"query": "pgbouncer", "limit": 2}
            found = await client.call_tool("session_search", arguments)
            assert found.isError is False
            data = json.loads(text_of(found))
            assert data == langchain_tool_output(demo_db, arguments)
            assert data["mode"] == "search" and data["results"][0]["session_id"] == PGBOUNCER

            # An empty query browses recent sessions; the limit is clamped to 5.
            recent = payload_of(await client.call_tool("session_search", {}))
            assert recent["mode"] == "recent" and recent["count"] == 3
            assert recent == langchain_tool_output(demo_db, {})
            many = payload_of(
                await client.call_tool("session_search", {"query": BROAD, "limit": 50})
            )
            assert many["success"] is True and many["count"] == 5

            # A bad date is a tool error with a hint, not a crash.
            bad = await client.call_tool("session_search", {"query": "x", "after": "last tuesday"})
            assert bad.isError is True
            error = payload_of(bad)
            assert error["success"] is False
            assert "2026-11-03" in error["error"] and "call session_search again" in error["error"]

            # session_show around a message the recap cites.
            [first, *_] = cited_ids(data["results"][0]["summary"])
            shown_result = await client.call_tool(
                "session_show", {"session_id": PGBOUNCER, "message_ids": [first]}
            )
            assert shown_result.isError is False
            shown = payload_of(shown_result)
            assert shown["session_id"] == PGBOUNCER and shown["success"] is True
            assert f" #{first}]" in shown["transcript"] and "pgbouncer" in shown["transcript"]
            assert len(shown["transcript"]) <= shown["max_chars"] == 8000
            assert shown["first_message_id"] <= first <= shown["last_message_id"]

            # An unknown session is a tool error naming what to do; the server keeps serving.
            missing = await client.call_tool("session_show", {"session_id": "no-such-session"})
            assert missing.isError is True
            assert "session_search" in payload_of(missing)["error"]
            again = payload_of(
                await client.call_tool("session_search", {"query": "CORS", "limit": 1})
            )
            assert again["results"][0]["session_id"] == CORS
    assert "Traceback" not in log.read_text()
