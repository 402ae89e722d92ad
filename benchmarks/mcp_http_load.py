"""The MCP HTTP server under idle, slow and abandoning clients (issue 32 §1, §2).

Each case starts ``session-recall mcp --http 0.0.0.0:PORT --token ...`` on the demo database
(a temporary file), run from the code of ``--code PATH`` (default: this checkout), and reaches
it at 127.0.0.1 only:

* ``idle``: the server's open-file limit set to 1,024 (``ulimit -n 1024``), 1,100 TCP
  connections that send nothing, then 20 authenticated ``initialize`` requests: how many were
  answered, their median and slowest time, whether the server is alive (its exit code if not),
  its open descriptors;
* ``slow``: the usual limit, 2,000 connections that each send half a request's headers, then
  25 s of waiting: how many of them the server still holds;
* ``sessions``: 10,000 ``initialize`` requests never followed by ``DELETE``, then a new client's
  ``initialize`` and ``session_search``: their status, and the server's resident memory.

    python benchmarks/mcp_http_load.py [--code PATH] [--only idle|slow|sessions]

Prints a table of figures (docs/reliability.md quotes them).
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

TOKEN = "benchmark-token"
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Authorization": f"Bearer {TOKEN}",
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-03-26",
        "capabilities": {},
        "clientInfo": {"name": "load", "version": "1"},
    },
}
SEARCH = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "session_search", "arguments": {"query": "nginx"}},
}


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str

    def proc(self, field: str) -> str:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return next(
            line.split(":", 1)[1].strip() for line in status.splitlines() if line.startswith(field)
        )

    def descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))


@contextmanager
def _server(code: str | None, open_files: int | None = None) -> Iterator[Server]:
    from langchain_session_recall.demo import build_demo_store

    env = dict(os.environ, PYTHONPATH=code) if code else dict(os.environ)

    def limit() -> None:
        if open_files:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "demo.db"
        build_demo_store(db).close()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        command = [sys.executable, "-m", "langchain_session_recall", "mcp", "--db", str(db)]
        log = (Path(tmp) / "server.log").open("wb")  # stderr to a file, as a service's is
        process = subprocess.Popen(
            [*command, "--read-only", "--http", f"0.0.0.0:{port}", "--token", TOKEN],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            preexec_fn=limit,
            cwd=tmp,  # not this checkout: python -m would import the package from it
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    time.sleep(0.1)
            yield Server(process, f"http://127.0.0.1:{port}/mcp")
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
            log.close()
            lines = (Path(tmp) / "server.log").read_text(errors="replace").splitlines()
            for line in lines[-int(os.environ.get("LOG_LINES", "1")) :]:
                print(f"  (server log: {line[:160]})")


def _connections(server: Server, count: int, first: bytes = b"") -> list[socket.socket]:
    address = (httpx.URL(server.url).host, httpx.URL(server.url).port)
    opened = []
    for _ in range(count):
        try:
            connection = socket.create_connection(address, timeout=5)
            if first:
                connection.sendall(first)
            opened.append(connection)
        except OSError:
            break
    return opened


def _timed(call: Callable[[], httpx.Response]) -> tuple[int, float]:
    start = time.perf_counter()
    try:
        status = call().status_code
    except httpx.HTTPError:
        status = 0
    return status, time.perf_counter() - start


def idle(code: str | None) -> dict[str, Any]:
    def initialize() -> httpx.Response:
        return httpx.post(server.url, json=INITIALIZE, headers=HEADERS, timeout=10)

    with _server(code, open_files=1024) as server:
        alone = [_timed(initialize)[1] for _ in range(5)]
        held = _connections(server, 1100)
        time.sleep(2)
        replies = [_timed(initialize) for _ in range(20)]
        alive = server.process.poll() is None
        result = {
            "connections opened": len(held),
            "median s before the connections": statistics.median(alone),
            "requests answered 200": sum(status == 200 for status, _ in replies),
            "median s": statistics.median(t for _, t in replies),
            "slowest s": max(t for _, t in replies),
            "server": "alive" if alive else f"exited {server.process.returncode}",
            "server descriptors": server.descriptors() if alive else "-",
        }
        for connection in held:
            connection.close()
    return result


def slow(code: str | None) -> dict[str, Any]:
    with _server(code) as server:
        before = server.descriptors()
        held = _connections(server, 2000, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ")
        time.sleep(2)
        at_start = server.descriptors() - before
        time.sleep(23)
        result = {
            "connections opened": len(held),
            "held by the server after 2 s": at_start,
            "held after 25 s": server.descriptors() - before,
        }
        for connection in held:
            connection.close()
    return result


def sessions(code: str | None, count: int = 10_000) -> dict[str, Any]:
    with _server(code) as server:
        start = time.perf_counter()
        refused = 0
        with httpx.Client(headers=HEADERS, timeout=30) as client:
            for _ in range(count):
                refused += client.post(server.url, json=INITIALIZE).status_code != 200
        wall = time.perf_counter() - start
        new_init, _ = _timed(lambda: httpx.post(server.url, json=INITIALIZE, headers=HEADERS))
        new_search, _ = _timed(lambda: httpx.post(server.url, json=SEARCH, headers=HEADERS))
        return {
            "initialize requests": count,
            "of which refused": refused,
            "their wall time s": wall,
            "a new client's initialize": new_init,
            "... and session_search": new_search,
            "server VmRSS": server.proc("VmRSS"),
        }


CASES = {"idle": idle, "slow": slow, "sessions": sessions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", help="a source tree to run the server from (PYTHONPATH)")
    parser.add_argument("--only", choices=sorted(CASES))
    args = parser.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(8192, hard), hard))  # the clients' side
    print(f"code: {args.code or 'this checkout'}; load average {os.getloadavg()}")
    for name, case in CASES.items():
        if args.only and name != args.only:
            continue
        print(f"\n{name}")
        for key, value in case(args.code).items():
            shown = f"{value:.3f}" if isinstance(value, float) else value
            print(f"  {key:32} {shown}")
    print(f"\nload average {os.getloadavg()}")


if __name__ == "__main__":
    main()
