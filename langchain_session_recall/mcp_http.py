"""The MCP server's HTTP listener: uvicorn, with its connections bounded and every request given
a deadline, so that no client, idle, slow or many, can stop it or lock others out.

uvicorn alone keeps a connection that never sends a byte open for ever (its keep-alive timer
starts only after a first response) and lets a client trickle a request's headers one byte at a
time for as long as it likes; with enough such connections the process runs out of file
descriptors, accepting fails with ``EMFILE``, and the error is logged at the very moment no file
can be opened. Here:

* **A deadline per request.** A connection waiting for a request (just opened, or after a
  response) must deliver it whole, headers and body, within ``request_timeout`` seconds, or it is
  closed. The deadline is absolute: bytes trickling in do not extend it. A request received
  whole disarms it, so a long reply (a search with an LLM recap) is never cut.
* **Bounded connections.** At most ``max_connections`` are open; by default what the process's
  open-file limit leaves room for. A new connection beyond that closes the oldest one still
  waiting for its request (the idle and the slow first), so idle connections cannot lock out a
  client that sends its request; when every connection has a request in flight the new one gets
  ``503``.
* **Out of descriptors anyway** (other files, a limit lowered while running): the connections
  still waiting for a request are closed, oldest first, and asyncio retries accepting a second
  later. It is logged as one warning line at most once a minute, without a traceback (nothing to
  import, no source file to read: that is what took the loop down).
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import logging
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

if TYPE_CHECKING:
    from starlette.types import ASGIApp

__all__ = ["GuardedServer", "HttpLimits"]

logger = logging.getLogger(__name__)

_MOST_CONNECTIONS = 1000
_FEWEST_CONNECTIONS = 8
_BACKLOG = 64
"""Connections the kernel queues, and the most asyncio accepts in one go before any of them is
looked at."""
_IN_FLIGHT = 4 * _BACKLOG
"""Descriptors accepted but not yet counted, or closed but not yet released: an accepted socket
reaches ``connection_made`` two turns of the event loop after ``accept``, and a closed one is
released a turn after ``close``, while every turn may accept another ``_BACKLOG``."""
_OTHER_FILES = 64
"""Descriptors kept for everything else: the database and its ``-wal``/``-shm``, PostgreSQL,
the model's HTTP client, the event loop, stdio."""


def _open_file_limit() -> int | None:
    try:
        import resource
    except ImportError:  # Windows: no such limit to read
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


@dataclass(frozen=True)
class HttpLimits:
    """How much of the process one client, or many, may hold.

    Example:
        >>> HttpLimits.for_open_files(1024).max_connections
        704
        >>> HttpLimits.for_open_files(None).max_connections
        1000
    """

    max_connections: int = _MOST_CONNECTIONS
    """Open connections at most (each holds a file descriptor)."""
    request_timeout: float = 20.0
    """Seconds a connection has to deliver a request whole, from when it starts waiting."""
    keep_alive: int = 5
    """Seconds an idle connection is kept after a response (uvicorn's ``timeout_keep_alive``)."""

    @classmethod
    def for_open_files(cls, limit: int | None) -> HttpLimits:
        """The defaults, with ``max_connections`` under an open-file ``limit`` (``None``: none)."""
        if limit is None:
            return cls()
        room = limit - _IN_FLIGHT - _OTHER_FILES
        return cls(max_connections=max(_FEWEST_CONNECTIONS, min(_MOST_CONNECTIONS, room)))


class _Throttled:
    """A warning logged at most once per ``every`` seconds, saying how often it was held back."""

    def __init__(self, every: float = 60.0) -> None:
        self.every = every
        self.last = -every
        self.held = 0

    def warn(self, message: str, *args: object) -> None:
        now = time.monotonic()
        if now - self.last < self.every:
            self.held += 1
            return
        held, self.held, self.last = self.held, 0, now
        suffix = f" ({held} more since the last such warning)" if held else ""
        logger.warning(message + suffix, *args)


_REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 58\r\n\r\n"
    b"too many connections with a request in flight: retry soon\n"
)


class _GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a per-request deadline and a bound on open connections.

    The class attributes are set per server by :func:`_guarded_protocol`.
    """

    limits: ClassVar[HttpLimits]
    waiting: ClassVar[dict[_GuardedH11, None]]
    """Connections whose request has not arrived whole, oldest first."""
    refusals: ClassVar[_Throttled]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections and not self._evict_oldest():
            self.refusals.warn(
                "refused a connection: %d are open, each with a request in flight",
                len(self.connections) - 1,
            )
            transport.write(_REFUSAL)
            transport.close()
            return
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _watch(self) -> None:
        """Arm the deadline while a request is awaited or arriving, disarm it once it is in."""
        awaiting = self.conn.their_state in (h11.IDLE, h11.SEND_BODY)
        if awaiting and not self.transport.is_closing():
            if self._deadline is None:
                self._deadline = self.loop.call_later(self.limits.request_timeout, self._expire)
                self.waiting[self] = None
        else:
            self._disarm()

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self.waiting.pop(self, None)

    def _expire(self) -> None:
        self._deadline = None
        self._close("no whole request within %s s", self.limits.request_timeout)

    def _evict_oldest(self) -> bool:
        oldest = next((c for c in self.waiting if c is not self), None)
        if oldest is None:
            return False
        oldest._close("evicted for a new connection: %d open", len(self.connections))
        return True

    @classmethod
    def shed(cls, most: int) -> int:
        """Close up to ``most`` connections waiting for a request, the oldest first."""
        oldest = list(itertools.islice(cls.waiting, most))
        for connection in oldest:
            connection._close("shed: out of file descriptors")
        return len(oldest)

    def _close(self, why: str, *args: object) -> None:
        self._disarm()
        logger.debug("closing a connection from %s: " + why, self.client, *args)
        self.transport.close()


def _guarded_protocol(limits: HttpLimits) -> type[_GuardedH11]:
    """A protocol class of its own for one server (its bound and waiting list are shared by
    that server's connections only)."""
    return type(
        "GuardedH11Protocol",
        (_GuardedH11,),
        {"limits": limits, "waiting": {}, "refusals": _Throttled()},
    )


_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


def _loop_error_handler(protocol: type[_GuardedH11]) -> Any:
    """asyncio's handler of errors nobody awaits, for one server: out of descriptors while
    accepting, close the connections still waiting for a request (the oldest first, as many as
    one accept may take) so that the retry, a second later, finds room."""
    accept_errors = _Throttled()

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if not (isinstance(exc, OSError) and exc.errno in _OUT_OF_RESOURCES):
            loop.default_exception_handler(context)
            return
        shed = protocol.shed(_BACKLOG)
        accept_errors.warn(
            "cannot accept connections (%s): closed %d waiting for a request; retrying",
            exc.strerror or exc,
            shed,
        )

    return handle


class GuardedServer(uvicorn.Server):
    """A uvicorn server of ``app`` at ``host:port`` within ``limits`` (default:
    :meth:`HttpLimits.for_open_files` of this process's open-file limit).

    Example:
        ``anyio.run(GuardedServer(app, "127.0.0.1", 8765).serve)`` serves until SIGINT or
        SIGTERM (or until ``should_exit`` is set).
    """

    def __init__(self, app: ASGIApp, host: str, port: int, limits: HttpLimits | None = None):
        self.limits = limits or HttpLimits.for_open_files(_open_file_limit())
        self.protocol = _guarded_protocol(self.limits)
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            http=self.protocol,
            ws="none",
            backlog=_BACKLOG,
            timeout_keep_alive=self.limits.keep_alive,
            log_level="warning",
        )
        super().__init__(config)

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()
        loop.set_exception_handler(_loop_error_handler(self.protocol))
        try:
            await super().serve(sockets)
        finally:
            loop.set_exception_handler(previous)
