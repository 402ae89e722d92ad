"""The streamable HTTP app (``http_app``) in process, through httpx's ASGI transport: no socket.

Issue 32 §2 (sessions that pile up) and §17 (the bearer scheme's case, the ``Host`` refusal on
a ``0.0.0.0`` bind). The same app behind a real listener: ``test_http.py``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from mcp_server.mcp_support import PGBOUNCER

from langchain_session_recall.demo import build_demo_store
from langchain_session_recall.mcp_server import create_mcp_server, http_app

TOKEN = "t0ken-for-the-app-tests"
PORT = 8765
HEADERS = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {TOKEN}"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-03-26",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
SEARCH = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "session_search", "arguments": {"query": "pgbouncer"}},
}
ABANDONED = 50
"""Sessions opened and never closed; the SDK's bound on them is lowered below it."""


@asynccontextmanager
async def _client(
    allowed_hosts: tuple[str, ...] = (), reached_at: str = "127.0.0.1"
) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    """A client of a server bound to ``0.0.0.0`` with a token, reaching it at ``reached_at``;
    and the server. (A context, not a fixture: the SDK's task group must end in the task that
    started it.)"""
    store = build_demo_store()
    server = create_mcp_server(store, host="0.0.0.0", port=PORT, allowed_hosts=allowed_hosts)
    transport = httpx.ASGITransport(http_app(server, token=TOKEN))
    try:
        async with (
            server.session_manager.run(),
            httpx.AsyncClient(transport=transport, base_url=f"http://{reached_at}:{PORT}") as http,
        ):
            yield http, server
    finally:
        store.close()


def _result(reply: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC result of a reply sent as JSON or as one SSE event."""
    assert reply.status_code == 200, reply.text
    text = reply.text
    if reply.headers["content-type"].startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    result: dict[str, Any] = json.loads(text)["result"]
    return result


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer ", "bEaReR"])
async def test_the_bearer_scheme_is_case_insensitive(scheme: str) -> None:
    headers = {**HEADERS, "Authorization": f"{scheme} {TOKEN}"}
    async with _client() as (http, _server):
        assert _result(await http.post("/mcp", json=INITIALIZE, headers=headers))["serverInfo"]


@pytest.mark.parametrize(
    "authorization", ["", TOKEN, f"Basic {TOKEN}", f"bearer {TOKEN}x", f"bearer{TOKEN}", "bearer"]
)
async def test_other_credentials_still_get_401(authorization: str) -> None:
    headers = {**HEADERS, "Authorization": authorization}
    async with _client() as (http, _server):
        reply = await http.post("/mcp", json=INITIALIZE, headers=headers)
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"].startswith("Bearer")


async def test_a_lan_address_refused_on_an_all_interfaces_bind_names_the_option() -> None:
    lan = "192.168.1.23"  # this machine's LAN address, as a client on the LAN sends it
    async with _client() as (http, _server):
        reply = await http.post(
            "/mcp", json=INITIALIZE, headers={**HEADERS, "Host": f"{lan}:{PORT}"}
        )
        ipv6 = await http.post(
            "/mcp", json=INITIALIZE, headers={**HEADERS, "Host": f"[fe80::1]:{PORT}"}
        )
    assert reply.status_code == 421
    error = reply.json()["error"]
    assert f"--allow-host {lan}" in error and "localhost" in error, error
    assert ipv6.status_code == 421 and "--allow-host fe80::1 " in ipv6.json()["error"]


async def test_an_allowed_lan_address_is_served() -> None:
    async with _client(("192.168.1.23",), reached_at="192.168.1.23") as (http, _server):
        assert _result(await http.post("/mcp", json=INITIALIZE, headers=HEADERS))["serverInfo"]


async def test_abandoned_sessions_do_not_lock_new_clients_out() -> None:
    """Issue 32 §2: every ``initialize`` kept a session until a ``DELETE`` or 30 idle minutes,
    and at the SDK's bound (10,000) every new client got 503. The server is stateless: the bound
    is lowered below the sessions opened here, and it never matters."""
    async with _client() as (http, server):
        server.session_manager.max_sessions = ABANDONED // 2  # unused by a stateless manager
        replies = [
            await http.post("/mcp", json=INITIALIZE, headers=HEADERS) for _ in range(ABANDONED)
        ]
        assert [r.status_code for r in replies] == [200] * ABANDONED
        assert not any("mcp-session-id" in r.headers for r in replies)  # nothing to DELETE
        assert _result(await http.post("/mcp", json=INITIALIZE, headers=HEADERS))["serverInfo"]
        searched = await http.post("/mcp", json=SEARCH, headers=HEADERS)
    found = json.loads(_result(searched)["content"][0]["text"])
    assert found["results"][0]["session_id"] == PGBOUNCER


async def test_a_get_stream_is_refused_not_held_open() -> None:
    """Stateless, the SDK would open a standalone SSE stream that never carries a message."""
    headers = {**HEADERS, "Accept": "text/event-stream"}
    async with _client() as (http, _server):
        reply = await asyncio.wait_for(http.get("/mcp", headers=headers), 10)
    assert reply.status_code == 405 and reply.headers["allow"] == "POST"
