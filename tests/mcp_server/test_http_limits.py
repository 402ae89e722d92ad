"""Issue 32 §1: the HTTP listener bounds what idle, slow or many clients can hold.

A real uvicorn server (``GuardedServer``) in the test's event loop, with small limits so that
each case takes well under a second: raw sockets to 127.0.0.1 play the idle and slow clients.
The ``session-recall mcp`` subprocess under a lowered open-file limit is in ``test_http.py``.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
from starlette.types import Receive, Scope, Send

from langchain_session_recall.mcp_http import GuardedServer, HttpLimits

pytestmark = pytest.mark.allow_hosts(["127.0.0.1"])

LIMITS = HttpLimits(max_connections=4, request_timeout=0.5, keep_alive=1)
REQUEST = b"GET /%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
Stream = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class App:
    """Reads the request's body, then answers: ``/`` at once, ``/hold`` when ``release`` is
    set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        while (await receive()).get("more_body"):
            pass
        if scope["path"] == "/hold":
            await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture
async def served(request: pytest.FixtureRequest) -> AsyncIterator[tuple[int, App]]:
    """A server on a free port with ``LIMITS`` (or the test's indirect parameter)."""
    limits: HttpLimits = getattr(request, "param", LIMITS)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    app = App()
    server = GuardedServer(app, "127.0.0.1", port, limits)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield port, app
    finally:
        app.release.set()
        server.should_exit = True
        await asyncio.wait_for(task, 10)


async def _connect(port: int) -> Stream:
    return await asyncio.open_connection("127.0.0.1", port)


async def _closed(stream: Stream, within: float) -> bool:
    """Whether the server closes ``stream`` within ``within`` seconds (what it sent first is
    read and dropped)."""
    reader, _writer = stream

    async def drain() -> None:
        while await reader.read(1024):
            pass

    try:
        await asyncio.wait_for(drain(), within)
    except asyncio.TimeoutError:
        return False
    except ConnectionError:
        pass
    return True


async def _answer(stream: Stream, path: str = "") -> bytes:
    reader, writer = stream
    writer.write(REQUEST % path.encode())
    return await asyncio.wait_for(reader.readuntil(b"ok"), 5)


async def test_a_connection_that_sends_nothing_is_closed(served: tuple[int, App]) -> None:
    port, _app = served
    assert await _closed(await _connect(port), within=3)


async def test_trickled_headers_do_not_extend_the_deadline(served: tuple[int, App]) -> None:
    port, _app = served
    _reader, writer = stream = await _connect(port)
    closed = asyncio.create_task(_closed(stream, within=3))
    for byte in b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100:
        if closed.done():
            break
        writer.write(bytes([byte]))
        await asyncio.sleep(0.05)  # 100 bytes would take 5 s, ten times the deadline
    assert await closed


async def test_a_slow_body_is_closed_too(served: tuple[int, App]) -> None:
    port, _app = served
    _reader, writer = stream = await _connect(port)
    writer.write(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nab")
    assert await _closed(stream, within=3)


async def test_a_kept_alive_connection_serves_again_then_idles_out(
    served: tuple[int, App],
) -> None:
    port, _app = served
    stream = await _connect(port)
    assert b"200 OK" in await _answer(stream)
    await asyncio.sleep(0.2)
    assert b"200 OK" in await _answer(stream)  # reused: the deadline was disarmed and rearmed
    assert await _closed(stream, within=3)


async def test_a_long_reply_is_not_cut_by_the_request_deadline(served: tuple[int, App]) -> None:
    port, app = served
    stream = await _connect(port)
    reply = asyncio.create_task(_answer(stream, "hold"))
    await asyncio.sleep(3 * LIMITS.request_timeout)  # the request arrived: no deadline runs
    app.release.set()
    assert b"200 OK" in await reply


PATIENT = HttpLimits(max_connections=4, request_timeout=60)
"""A deadline the test never reaches: only the bound closes connections."""


@pytest.mark.parametrize("served", [PATIENT], indirect=True)
async def test_idle_connections_at_the_bound_make_room_for_a_request(
    served: tuple[int, App],
) -> None:
    port, _app = served
    idle = [await _connect(port) for _ in range(3 * PATIENT.max_connections)]
    client = await _connect(port)
    assert b"200 OK" in await _answer(client)
    kept = [n for n, s in enumerate(idle) if not await _closed(s, within=0.1)]
    # the newest idle ones stay (the client's connection is the bound's last place)
    assert kept == list(range(len(idle)))[-(PATIENT.max_connections - 1) :]


async def test_when_every_connection_has_a_request_in_flight_a_new_one_gets_503(
    served: tuple[int, App],
) -> None:
    port, app = served
    busy = [await _connect(port) for _ in range(LIMITS.max_connections)]
    replies = [asyncio.create_task(_answer(stream, "hold")) for stream in busy]
    await asyncio.sleep(0.2)  # every request has reached the app
    reader, _writer = await _connect(port)
    refused = await asyncio.wait_for(reader.read(), 5)
    assert refused.startswith(b"HTTP/1.1 503 ") and b"retry" in refused
    app.release.set()
    answered = await asyncio.gather(*replies)
    assert all(b"200 OK" in reply for reply in answered)  # the busy ones were kept


def test_the_default_bound_leaves_room_under_the_open_file_limit() -> None:
    assert HttpLimits.for_open_files(1024).max_connections == 1024 - 4 * 64 - 64
    assert HttpLimits.for_open_files(512).max_connections == 512 - 4 * 64 - 64
    assert HttpLimits.for_open_files(256).max_connections == 8
    assert HttpLimits.for_open_files(1 << 20).max_connections == 1000
    assert HttpLimits.for_open_files(None).max_connections == 1000
