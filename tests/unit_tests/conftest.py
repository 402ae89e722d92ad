"""Unit tests never touch the network: sockets are blocked (Unix sockets stay allowed, asyncio
needs them). Cassette replay goes through vcrpy's patched httpx transports, which need no socket.
``RECORD=1`` lifts the block so cassettes can be re-recorded against a live server.

langchain-openai probes a throwaway TCP socket for its keep-alive options when a ``ChatOpenAI``
is built; a replay opens no connection, so the options are switched off (the library's own
``LANGCHAIN_OPENAI_TCP_KEEPALIVE=0``) instead of letting the probe hit the block."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from pytest_socket import disable_socket, enable_socket

from langchain_session_recall.testing.cassettes import RECORDING

if not RECORDING:
    os.environ.setdefault("LANGCHAIN_OPENAI_TCP_KEEPALIVE", "0")


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
