"""Streamable HTTP: ``session-recall mcp --http HOST:PORT`` and the SDK's HTTP client.

Issue 21 §8: Host and Origin are checked on every bind (the SDK checks them only for three
literal loopback hosts), a bind beyond loopback needs a bearer token, ``serverInfo.version`` is
ours, and a client that disconnects is not logged as an ERROR. Every request goes to a loopback
address (a server bound to ``0.0.0.0`` is reached at ``127.0.0.1``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_server.mcp_support import PGBOUNCER, payload_of, server_command

pytestmark = [
    pytest.mark.allow_hosts(["127.0.0.1", "127.0.0.2"]),
    pytest.mark.slow,  # each test starts an HTTP server subprocess (1.5-3 s)
]

TOKEN = "t0ken-for-the-http-tests"
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
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _wait_for(address: str, port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"server exited {process.returncode}: {log.read_text()}")
        try:
            socket.create_connection((address, port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"server did not listen on {port}: {log.read_text()}")


@dataclass
class Server:
    url: str
    """Where a client reaches it (always a loopback address)."""
    log: Path
    process: subprocess.Popen[bytes]

    def stop(self) -> str:
        """Stop it gracefully; its stderr."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        return self.log.read_text()


def _start(
    db: Path,
    tmp_path: Path,
    bind: str,
    *extra: str,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> Iterator[Server]:
    port = _free_port()
    address = "127.0.0.2" if bind == "127.0.0.2" else "127.0.0.1"
    log = tmp_path / f"server-{port}.log"
    with log.open("wb") as errlog:
        command = server_command(db, "--read-only", "--http", f"{bind}:{port}", *extra)
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
            env={**os.environ, **(env or {})},
            preexec_fn=preexec_fn,
        )
        server = Server(f"http://{address}:{port}/mcp", log, process)
        try:
            _wait_for(address, port, process, log)
            yield server
        finally:
            server.stop()


@pytest.fixture
def http_server(demo_db: Path, tmp_path: Path) -> Iterator[str]:
    for server in _start(demo_db, tmp_path, "127.0.0.1"):
        yield server.url


async def test_streamable_http_serves_both_tools(http_server: str) -> None:
    async with (
        streamable_http_client(http_server) as (read, write, _session_id),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        names = sorted(t.name for t in (await client.list_tools()).tools)
        assert names == ["session_search", "session_show"]
        found = payload_of(await client.call_tool("session_search", {"query": "pgbouncer"}))
        assert found["results"][0]["session_id"] == PGBOUNCER
        shown = payload_of(await client.call_tool("session_show", {"session_id": PGBOUNCER}))
        assert shown["shown"][0]["from"] == shown["first_message_id"]
        assert "[USER #" in shown["transcript"]
        bad = await client.call_tool("session_search", {"before": "yesterday-ish"})
        assert bad.isError is True and "2026-11-03" in payload_of(bad)["error"]


def _post(url: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(url, json=INITIALIZE, headers={**MCP_HEADERS, **(headers or {})}, timeout=30)


# Binds the SDK left open to DNS rebinding: any Host was served.
BINDS = ["127.1", "127.0.0.2", "0.0.0.0", "127.0.0.1"]


@pytest.fixture(params=BINDS)
def bound(request: pytest.FixtureRequest, demo_db: Path, tmp_path: Path) -> Iterator[Server]:
    bind: str = request.param
    extra = ("--token", TOKEN) if bind == "0.0.0.0" else ()
    yield from _start(demo_db, tmp_path, bind, *extra)


def _auth(server: Server) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"} if "--token" in server.process.args else {}  # type: ignore[operator]


def test_a_foreign_host_or_origin_is_refused_on_every_bind(bound: Server) -> None:
    auth = _auth(bound)
    assert _post(bound.url, {**auth, "Host": "evil.example"}).status_code == 421
    assert _post(bound.url, {**auth, "Host": "evil.example:80"}).status_code == 421
    origin = {**auth, "Origin": "http://evil.example"}
    assert _post(bound.url, origin).status_code == 403
    ok = _post(bound.url, auth)  # the Host httpx sends: the address it reached
    assert ok.status_code == 200, ok.text
    local = _post(bound.url, {**auth, "Host": f"localhost:{httpx.URL(bound.url).port}"})
    assert local.status_code == 200


async def test_server_info_names_our_version(http_server: str) -> None:
    async with (
        streamable_http_client(http_server) as (read, write, _session_id),
        ClientSession(read, write) as client,
    ):
        info = await client.initialize()
    assert info.serverInfo.name == "session-recall"
    assert info.serverInfo.version == version("langchain-session-recall")


def test_a_non_loopback_bind_without_a_token_refuses_to_start(demo_db: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SESSION_RECALL_MCP_TOKEN"}
    done = subprocess.run(
        server_command(demo_db, "--read-only", "--http", f"0.0.0.0:{_free_port()}"),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert "--token" in done.stderr and "SESSION_RECALL_MCP_TOKEN" in done.stderr


@pytest.fixture(params=["--token", "env"])
def token_server(request: pytest.FixtureRequest, demo_db: Path, tmp_path: Path) -> Iterator[Server]:
    if request.param == "env":
        yield from _start(demo_db, tmp_path, "0.0.0.0", env={"SESSION_RECALL_MCP_TOKEN": TOKEN})
    else:
        yield from _start(demo_db, tmp_path, "0.0.0.0", "--token", TOKEN)


async def test_a_token_server_answers_only_requests_that_carry_it(token_server: Server) -> None:
    url = token_server.url
    assert _post(url).status_code == 401
    assert _post(url, {"Authorization": "Bearer wrong"}).status_code == 401
    assert _post(url, {"Authorization": TOKEN}).status_code == 401
    refused = _post(url, {"Authorization": f"Bearer {TOKEN}x"})
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write, _session_id),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        found = payload_of(await client.call_tool("session_search", {"query": "pgbouncer"}))
    assert found["results"][0]["session_id"] == PGBOUNCER


async def test_a_client_disconnecting_is_not_logged_as_an_error(
    demo_db: Path, tmp_path: Path
) -> None:
    for server in _start(demo_db, tmp_path, "127.0.0.1"):
        for _ in range(2):  # each client opens the standalone SSE stream and then goes away
            async with (
                streamable_http_client(server.url) as (read, write, _session_id),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                await client.call_tool("session_search", {"query": "pgbouncer"})
        time.sleep(1.0)  # the server notices the closed streams
        log = server.stop()
        assert "ERROR" not in log and "Traceback" not in log, log


def test_a_lone_surrogate_in_the_query_gets_a_reply(http_server: str) -> None:
    """Issue 21 §9: the tool echoed the query, so a lone surrogate (JavaScript's
    ``JSON.stringify`` sends one as ``"\\ud800"``) made the reply unencodable: the SSE stream
    ended without it and the client waited for ever. Raw JSON-RPC, as such a client sends it."""
    import json

    def call(client: httpx.Client, message: dict[str, object], headers: dict[str, str]) -> str:
        body = json.dumps(message)  # escapes the surrogate: "\\ud800"
        return client.post(http_server, content=body, headers=headers).text

    with httpx.Client(timeout=60) as client:
        client.post(http_server, content=json.dumps(INITIALIZE), headers=MCP_HEADERS)
        headers = {**MCP_HEADERS, "mcp-protocol-version": "2025-03-26"}  # stateless: no session
        call(client, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        replies = []
        for n, query in enumerate(["pgbouncer \ud800", "\udfff"], start=2):
            arguments = {"name": "session_search", "arguments": {"query": query}}
            stream = call(
                client,
                {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": arguments},
                headers,
            )
            data = [line[5:] for line in stream.splitlines() if line.startswith("data:")]
            assert data, f"no reply to a query holding a lone surrogate: {stream!r}"
            replies.append(json.loads(data[-1])["result"])
    found = json.loads(replies[0]["content"][0]["text"])
    assert found["results"][0]["session_id"] == PGBOUNCER
    assert found["query"] == "pgbouncer \ufffd"
    assert replies[1]["isError"] is True
    assert "nothing to search" in replies[1]["content"][0]["text"]


# Issue 32 §1: the server under a lowered open-file limit (1,024 and 1,100 connections in the
# issue; 256 and 300 here, the same shape, quicker). Every connection goes to 127.0.0.1.
OPEN_FILES = 256
IDLE = 300


def _idle_connections(url: str, count: int) -> list[socket.socket]:
    """Connections that send nothing; stops early if the server stops accepting."""
    address = (httpx.URL(url).host, httpx.URL(url).port)
    opened = []
    for _ in range(count):
        try:
            opened.append(socket.create_connection(address, timeout=5))
        except OSError:
            break
    return opened


def _limit_open_files() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))


def _still_serving(server: Server, idle: list[socket.socket]) -> None:
    """An authenticated client is answered while the idle connections are still ours, and the
    process is alive with no traceback in its log."""
    try:
        assert len(idle) > OPEN_FILES - 50  # enough to exhaust the server without its bound
        reply = _post(server.url, {"Authorization": f"Bearer {TOKEN}"})
        assert reply.status_code == 200, reply.text
        assert server.process.poll() is None
    finally:
        for connection in idle:
            connection.close()
    assert "Traceback" not in server.stop()


def test_idle_connections_beyond_the_open_file_limit_do_not_stop_the_server(
    demo_db: Path, tmp_path: Path
) -> None:
    """On main the accept failed with EMFILE, the SDK's Rich log handler imported a module to
    render it, that import failed too and the server exited (70)."""
    for server in _start(
        demo_db, tmp_path, "0.0.0.0", "--token", TOKEN, preexec_fn=_limit_open_files
    ):
        _still_serving(server, _idle_connections(server.url, IDLE))


@pytest.mark.skipif(not hasattr(__import__("resource"), "prlimit"), reason="Linux only")
def test_running_out_of_descriptors_while_serving_is_survived(
    demo_db: Path, tmp_path: Path
) -> None:
    """The limit lowered under a running server, so its connection bound (set at start) is too
    high: accept fails with EMFILE, the waiting connections are shed, and it keeps serving."""
    import resource

    for server in _start(demo_db, tmp_path, "0.0.0.0", "--token", TOKEN):
        resource.prlimit(server.process.pid, resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))
        idle = _idle_connections(server.url, IDLE)
        time.sleep(1.5)  # asyncio retries accepting a second after EMFILE
        _still_serving(server, idle)
        assert "cannot accept connections" in server.log.read_text()
