"""Unit tests never touch the network: sockets are blocked (Unix sockets stay allowed, asyncio
needs them). Cassette replay goes through vcrpy's patched httpx transports, which need no socket.
``RECORD=1`` lifts the block so cassettes can be re-recorded against a live server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytest_socket import disable_socket, enable_socket

from langchain_session_recall.testing.cassettes import RECORDING


@pytest.fixture(autouse=True)
def _no_network() -> Iterator[None]:
    if RECORDING:
        yield
        return
    disable_socket(allow_unix_socket=True)
    try:
        yield
    finally:
        enable_socket()


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A file holding the demo sessions, built once (tests only read it)."""
    from langchain_session_recall.demo import build_demo_store

    path = tmp_path_factory.mktemp("demo") / "demo.db"
    build_demo_store(path).close()
    return str(path)
