"""Both tools on both backends (SQLite always, PostgreSQL when ``SESSION_RECALL_PG_DSN`` is
set): search and show through the in-memory MCP client, tenant-scoped inside a mixed chain."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.memory import create_connected_server_and_client_session
from mcp_server.mcp_support import payload_of
from pg_support import PG_DSN, SKIP_PG, drop_schema

from langchain_session_recall import SessionStore
from langchain_session_recall.mcp_server import create_mcp_server

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgres",
        id="postgres",
        marks=[
            pytest.mark.skipif(not PG_DSN, reason=SKIP_PG),
            pytest.mark.allow_hosts(["127.0.0.1"]),
        ],
    ),
]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        with SessionStore(tmp_path / "state.db") as s:
            yield s
        return
    from langchain_session_recall.backends.postgres.store import PostgresSessionStore

    schema = f"t_{uuid.uuid4().hex[:12]}"
    s = PostgresSessionStore(PG_DSN, schema=schema, min_size=1, max_size=4)
    try:
        yield s
    finally:
        s.close()
        drop_schema(schema)


async def test_search_and_show_on_each_backend(store: Any) -> None:
    store.add_session("root", source="cli", user_id="alice", title="Rotate the TLS certificate")
    store.add_session("helper", source="subagent", user_id="bob", parent_session_id="root")
    store.add_session("child", source="subagent", user_id="alice", parent_session_id="root")
    store.add_messages("root", [{"role": "user", "content": "the certificate expires friday"}])
    store.add_messages("helper", [{"role": "user", "content": "bob's certificate secret"}])
    store.add_messages("child", [{"role": "assistant", "content": "certbot renew --force"}])

    server = create_mcp_server(store, user_id="alice")
    async with create_connected_server_and_client_session(server) as client:
        found = payload_of(await client.call_tool("session_search", {"query": "certbot"}))
        assert [r["session_id"] for r in found["results"]] == ["root"]
        shown = payload_of(await client.call_tool("session_show", {"session_id": "child"}))
        hidden = await client.call_tool("session_show", {"session_id": "helper"})
    assert shown["session_id"] == "root" and shown["sessions"] == ["root", "child"]
    assert "certbot renew --force" in shown["transcript"]
    assert "--- session child ---" in shown["transcript"]
    assert "bob's" not in shown["transcript"]
    assert hidden.isError is True


async def test_bad_arguments_are_tool_errors_and_a_large_limit_a_notice(store: Any) -> None:
    """Issue 34 item 7: what the LangChain tool refuses, the MCP tool refuses (``isError``)."""
    for n in range(6):
        store.add_session(f"s{n}", started_at=1793664000.0 + n * 86400)
        store.add_messages(f"s{n}", [{"role": "user", "content": f"certificate rotation {n}"}])
    server = create_mcp_server(store)
    async with create_connected_server_and_client_session(server) as client:
        for arguments, message in [
            ({"limit": 0}, "limit=0 asks for no session: ask for 1 to 5"),
            ({"limit": -1}, "limit=-1 asks for no session"),
            ({"role_filter": "bogus"}, "unknown role 'bogus'"),
            ({"after": "2026-11-06", "before": "2026-11-04"}, "no session starts in that range"),
        ]:
            refused = await client.call_tool(
                "session_search", {"query": "certificate", **arguments}
            )
            assert refused.isError is True, arguments
            assert message in payload_of(refused)["error"]
        many = await client.call_tool("session_search", {"query": "certificate", "limit": 20})
        assert many.isError is False
        payload = payload_of(many)
        assert payload["count"] == 5 and "cap of 5" in payload["notice"]
        human = await client.call_tool(
            "session_search", {"query": "certificate", "role_filter": "human"}
        )
        assert human.isError is False and payload_of(human)["count"] == 3
