"""A fault-injecting OpenAI-compatible chat server on 127.0.0.1 (stdlib only), for tests.

Each ``POST .../chat/completions`` takes the next fault from a script (a list, cycled or
padded with a default) and answers accordingly:

``ok``         200 with a valid completion (the text can be set per request)
``429``        429 Too Many Requests with a ``Retry-After`` header
``500``        500 with an OpenAI-style error body
``timeout``    holds the request without answering (bounded by ``max_hang``) so the client
               times out
``malformed``  200 with a body that is not JSON
``empty``      200 with a completion whose content is ``""``
``no_choices`` 200 with ``"choices": []``
``reset``      closes the connection with a TCP reset, no response

Everything is bounded: at most ``max_requests`` requests are served (later ones get 503), a
hung request is released after ``max_hang`` seconds or when the server stops, and the server
only ever listens on 127.0.0.1.

Example:
    >>> with FaultyLLMServer(["429", "ok"]) as server:
    ...     url = server.base_url  # e.g. http://127.0.0.1:38211/v1
    >>> server.served, server.faults_injected
    (0, 0)
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FAULTS", "FaultyLLMServer"]

FAULTS = ("ok", "429", "500", "timeout", "malformed", "empty", "no_choices", "reset")


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a reset connection is the point of the exercise, not an error to print


def _completion(text: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class FaultyLLMServer:
    """Serve scripted faults; see the module docstring.

    Args:
        script: Faults for requests 1, 2, ... (names from :data:`FAULTS`), or a function of the
            request number (0-based) and the parsed request body returning a fault name.
        default: Fault for requests past the end of a list script.
        reply: Function of the parsed request body giving the text of an ``ok`` answer.
        retry_after: Value of the ``Retry-After`` header of ``429`` answers (seconds).
        max_hang: Longest time a ``timeout`` request is held.
        max_requests: Requests served before every further one gets 503.
    """

    def __init__(
        self,
        script: Sequence[str] | Callable[[int, dict[str, Any]], str] = (),
        *,
        default: str = "ok",
        reply: Callable[[dict[str, Any]], str] | None = None,
        retry_after: str = "1",
        max_hang: float = 10.0,
        max_requests: int = 500,
    ) -> None:
        if not callable(script):
            unknown = set(script) - set(FAULTS)
            if unknown:
                raise ValueError(f"unknown faults {sorted(unknown)}; expected some of {FAULTS}")
        self.script = script
        self.default = default
        self.reply = reply or (lambda body: "Summary: the user fixed it [#1].")
        self.retry_after = retry_after
        self.max_hang = max_hang
        self.max_requests = max_requests
        self.counts: Counter[str] = Counter()
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.completed = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``: give it to ``ChatOpenAI(base_url=...)``."""
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> FaultyLLMServer:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                stub._handle(self)

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def release(self) -> None:
        """Let every held (``timeout``) request go; the connection closes without an answer."""
        self._stop.set()

    def stop(self) -> None:
        self.release()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FaultyLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ figures

    @property
    def served(self) -> int:
        """Requests received so far."""
        with self._lock:
            return len(self.requests)

    @property
    def faults_injected(self) -> int:
        """Requests answered with anything but ``ok``."""
        with self._lock:
            return sum(n for fault, n in self.counts.items() if fault != "ok")

    # ------------------------------------------------------------------ serving

    def _next_fault(self, index: int, body: dict[str, Any]) -> str:
        if index >= self.max_requests:
            return "overflow"
        if callable(self.script):
            return self.script(index, body)
        return self.script[index] if index < len(self.script) else self.default

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
            fault = self._next_fault(index, body)
            self.counts[fault] += 1
            self.in_flight += 1
        try:
            self._answer(handler, fault, body)
        finally:
            with self._lock:
                self.in_flight -= 1
                self.completed += 1

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        payload: bytes,
        headers: dict[str, str] | None = None,
    ) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(payload)
        handler.wfile.flush()

    def _answer(self, handler: BaseHTTPRequestHandler, fault: str, body: dict[str, Any]) -> None:
        model = str(body.get("model") or "stub")
        if fault == "ok":
            payload = json.dumps(_completion(self.reply(body), model)).encode()
            self._send(handler, 200, payload)
        elif fault == "429":
            error = {"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}}
            self._send(handler, 429, json.dumps(error).encode(), {"Retry-After": self.retry_after})
        elif fault in ("500", "overflow"):
            error = {"error": {"message": "The server had an error", "type": "server_error"}}
            self._send(handler, 500 if fault == "500" else 503, json.dumps(error).encode())
        elif fault == "timeout":
            self._stop.wait(self.max_hang)
            handler.close_connection = True
        elif fault == "malformed":
            self._send(handler, 200, b'{"choices": [{"message": {"content": "trunc')
        elif fault == "empty":
            self._send(handler, 200, json.dumps(_completion("", model)).encode())
        elif fault == "no_choices":
            payload = {**_completion("", model), "choices": []}
            self._send(handler, 200, json.dumps(payload).encode())
        elif fault == "reset":
            sock: socket.socket = handler.connection
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            handler.close_connection = True
            sock.close()
        else:
            raise ValueError(f"unknown fault {fault!r}")
