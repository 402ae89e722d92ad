"""Streamable HTTP: ``session-recall mcp --http 127.0.0.1:PORT`` and the SDK's HTTP client."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_server.mcp_support import PGBOUNCER, payload_of, server_command

pytestmark = pytest.mark.allow_hosts(["127.0.0.1"])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _wait_for(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"server exited {process.returncode}: {log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"server did not listen on {port}: {log.read_text()}")


@pytest.fixture
def http_server(demo_db: Path, tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as errlog:
        command = server_command(demo_db, "--read-only", "--http", f"127.0.0.1:{port}")
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errlog
        )
        try:
            _wait_for(port, process, log)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()
            process.wait(timeout=30)


@pytest.mark.slow  # a server subprocess over HTTP
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
