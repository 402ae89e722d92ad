"""MCP tests: real MCP clients talk to ``session-recall mcp`` subprocesses (stdio, streamable
HTTP) or to an in-memory server. Offline: sockets are blocked as in the unit tests, except that a
test marked ``allow_hosts(["127.0.0.1"])`` may reach localhost (pytest-socket applies it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_socket import disable_socket, enable_socket

from langchain_session_recall.demo import build_demo_store


@pytest.fixture(autouse=True)
def _no_network(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("allow_hosts"):
        yield  # pytest-socket lets this test reach the listed hosts only
        return
    disable_socket(allow_unix_socket=True)
    try:
        yield
    finally:
        enable_socket()


@pytest.fixture
def demo_db(tmp_path: Path) -> Path:
    """The demo sessions in a closed SQLite file (what a user passes to ``--db``)."""
    path = tmp_path / "demo.db"
    build_demo_store(path).close()
    return path
