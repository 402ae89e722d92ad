"""A tiny fault-injecting HTTP proxy for recording failure cassettes.

It sits between ``ChatOpenAI`` and a real OpenAI-compatible server. Requests whose body contains
a rule's marker get the rule's scripted statuses first (429, 500, 401, ...) with an OpenAI-style
error body; once a rule's statuses are used up, they are forwarded upstream untouched. Only used
when recording (``RECORD=1``); replay never opens a socket.

It runs as a separate process: vcrpy patches ``http.client`` in the test process, and a proxy
inside it would get its upstream calls recorded as well.

    with FaultProxy("http://127.0.0.1:8765/v1", [Fault("session-a", [429])]) as proxy:
        llm = ChatOpenAI(base_url=proxy.base_url, ...)

    python tests/fault_proxy.py --upstream http://127.0.0.1:8765/v1 --fault 'session-a=429,500'
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

__all__ = ["Fault", "FaultProxy"]

_ERRORS = {
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist."),
    429: ("rate_limit_error", "rate_limit_exceeded", "Rate limit reached. Try again in 1s."),
    500: ("server_error", None, "The server had an error while processing your request."),
    503: ("server_error", None, "The server is overloaded."),
}


@dataclass
class Fault:
    """Answer the next ``len(statuses)`` requests containing ``marker`` with these statuses."""

    marker: str
    statuses: list[int]
    seen: list[int] = field(default_factory=list)


class FaultProxy:
    """Context manager running :class:`ProxyServer` in a child process on a free port."""

    def __init__(self, upstream_base_url: str, faults: list[Fault] | None = None) -> None:
        self.upstream = upstream_base_url
        self.faults = list(faults or [])
        self.base_url = ""
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> FaultProxy:
        args = [sys.executable, __file__, "--upstream", self.upstream]
        for fault in self.faults:
            args += ["--fault", f"{fault.marker}={','.join(map(str, fault.statuses))}"]
        self._process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        assert self._process.stdout is not None
        self.base_url = self._process.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            raise RuntimeError("fault proxy did not start")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(10)


class ProxyServer:
    """Forwarding proxy with scripted faults, served on a free port in a thread."""

    def __init__(self, upstream_base_url: str, faults: list[Fault] | None = None) -> None:
        self.upstream = upstream_base_url.rstrip("/")
        self.faults = list(faults or [])
        self.log: list[tuple[str, int]] = []  # (path, status) of every request answered
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                proxy._handle(self)

            def do_GET(self) -> None:
                proxy._handle(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ProxyServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _scripted_status(self, body: bytes) -> int | None:
        text = body.decode("utf-8", "replace")
        with self._lock:
            for fault in self.faults:
                if fault.marker in text and len(fault.seen) < len(fault.statuses):
                    status = fault.statuses[len(fault.seen)]
                    fault.seen.append(status)
                    return status
        return None

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        status = self._scripted_status(body)
        if status is not None:
            kind, code, message = _ERRORS.get(status, ("server_error", None, "Injected fault."))
            payload = json.dumps({"error": {"message": message, "type": kind, "code": code}})
            self._reply(handler, status, payload.encode(), "application/json")
            return
        path = handler.path[len("/v1") :] if handler.path.startswith("/v1") else handler.path
        headers = {
            k: v
            for k, v in handler.headers.items()
            if k.lower() in {"content-type", "authorization", "openai-organization", "api-key"}
        }
        headers["Accept-Encoding"] = "identity"
        request = urllib.request.Request(
            self.upstream + path, data=body or None, headers=headers, method=handler.command
        )
        try:
            with urllib.request.urlopen(request, timeout=600) as response:
                content_type = response.headers.get("content-type", "application/json")
                self._reply(handler, response.status, response.read(), content_type)
        except urllib.error.HTTPError as err:
            content_type = err.headers.get("content-type", "application/json")
            self._reply(handler, err.code, err.read(), content_type)

    def _reply(
        self, handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str
    ) -> None:
        with self._lock:
            self.log.append((handler.path, status))
        handler.send_response(status)
        handler.send_header("content-type", content_type)
        handler.send_header("content-length", str(len(body)))
        if status == 429:
            handler.send_header("retry-after", "1")
        handler.end_headers()
        handler.wfile.write(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", required=True, help="e.g. http://127.0.0.1:8765/v1")
    parser.add_argument(
        "--fault", action="append", default=[], help="MARKER=STATUS[,STATUS...] (repeatable)"
    )
    ns = parser.parse_args()
    faults = []
    for spec in ns.fault:
        marker, _, statuses = spec.rpartition("=")
        faults.append(Fault(marker, [int(x) for x in statuses.split(",")]))
    with ProxyServer(ns.upstream, faults) as server:
        print(server.base_url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
