"""A worker process for an import: pickled calls in, their results out, in order.

Not :mod:`multiprocessing`'s ``spawn``: it starts a worker by running the caller's main script
again (as ``__mp_main__``), so a script without an ``if __name__ == "__main__":`` guard runs
its top level twice, side effects included, and its worker dies with a traceback. A
:class:`WorkerProcess` is a fresh interpreter (``sys.executable -c``) given the caller's
``sys.path``, that imports this module alone: each call names its function by module and name
(pickle), and the worker imports that module when the call comes. Nothing of the caller's
script runs in it, and it starts in about the time the package takes to import.

The worker answers the calls in the order they came, one at a time; a thread reads the calls
as they come, so the caller never waits to send one while the worker writes an answer, and
another sends the answers, so the worker goes on with the next call while the caller has not
taken the last answer yet (a pipe holds 64 KB: an answer of a megabyte would otherwise keep the
worker waiting until the caller reads it, and calls sent ahead would be worked on only then).
"""

from __future__ import annotations

import contextlib
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO, Any, BinaryIO

try:
    import fcntl
except ImportError:  # (Windows)
    fcntl = None  # type: ignore[assignment]

__all__ = ["WorkerProcess", "WorkerStopped", "serve"]

_BOOT = (
    "import pickle, sys\n"
    "calls, answers = sys.stdin.buffer, sys.stdout.buffer\n"
    "sys.stdout = sys.stderr\n"  # (a print in a call must not break the answers)
    "sys.path[:] = pickle.load(calls)\n"
    "from langchain_session_recall.importers.worker_process import serve\n"
    "serve(calls, answers)\n"
)
_STOP_WAIT = 10.0  # seconds a worker with nothing left to do gets to exit before it is killed
_PIPE_BYTES = 1 << 20  # what the answers' pipe may hold (Linux's default limit for a user)
_SWITCH_SECONDS = 0.0005  # the worker's thread switch interval (see serve)


class WorkerStopped(Exception):
    """The worker process could not start, or ended before it answered a call."""


class WorkerProcess:
    """One worker process: :meth:`submit` a call, :meth:`result` its answer (in order).

    Raises:
        WorkerStopped: the process cannot start (no Python executable, no resources).

    Example:
        >>> import operator
        >>> worker = WorkerProcess()
        >>> worker.submit(operator.neg, 4)
        >>> worker.result()
        -4
        >>> worker.close()
    """

    def __init__(self) -> None:
        if not sys.executable:  # (an embedding application may have none)
            raise WorkerStopped("no Python executable to start a worker process with")
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        except OSError as exc:
            raise WorkerStopped(f"cannot start a worker process: {exc}") from exc
        self.pending = 0  # calls sent and not yet answered
        _widen(self._process.stdout)
        try:
            self._send(list(sys.path))
        except WorkerStopped:
            self.close()  # (not left running: the caller gets no worker to close)
            raise

    def submit(self, function: Callable[[Any], Any], argument: Any) -> None:
        """Send a call (``function`` must be importable by name: a module's top-level
        function)."""
        self._send((function, argument))
        self.pending += 1

    def result(self) -> Any:
        """The answer to the oldest call not answered yet: its value, or the exception it
        raised, raised here.

        Raises:
            WorkerStopped: the process ended first.
        """
        answers = self._streams()[1]
        try:
            ok, value = pickle.load(answers)
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            raise self._ended() from exc
        self.pending -= 1
        if ok:
            return value
        raise value

    def close(self) -> None:
        """Stop the process: it exits when it has answered what it was sent (it is killed
        when calls are still pending, or when it does not exit in time)."""
        calls, answers = self._streams()
        if self.pending:
            self._process.kill()
        with contextlib.suppress(OSError):  # (already gone)
            calls.close()
        try:
            self._process.wait(_STOP_WAIT)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        answers.close()

    def _send(self, payload: Any) -> None:
        calls = self._streams()[0]
        try:
            pickle.dump(payload, calls, protocol=pickle.HIGHEST_PROTOCOL)
            calls.flush()
        except OSError as exc:  # (a broken pipe: the process is gone)
            raise self._ended() from exc

    def _ended(self) -> WorkerStopped:
        return WorkerStopped(f"the worker process ended (exit code {self._process.poll()})")

    def _streams(self) -> tuple[IO[bytes], IO[bytes]]:
        calls, answers = self._process.stdin, self._process.stdout
        if calls is None or answers is None:  # (never: both are pipes)
            raise WorkerStopped("the worker process has no pipes")
        return calls, answers


def _widen(pipe: IO[bytes] | None) -> None:
    """Let the pipe of the answers hold :data:`_PIPE_BYTES` (Linux; elsewhere, or where the
    system allows less, it stays as it is): an answer of that size is then written at once,
    without waiting for the caller to read its first 64 KB."""
    setter = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if pipe is None or setter is None:
        return
    with contextlib.suppress(OSError):  # (over the system's limit: as it is)
        fcntl.fcntl(pipe.fileno(), setter, _PIPE_BYTES)


def serve(calls: BinaryIO, answers: BinaryIO) -> None:
    """The worker's loop: answer each call read from ``calls`` on ``answers``, in order,
    until ``calls`` ends. A call that raises is answered with its exception (or, when that
    cannot be pickled, a ``RuntimeError`` naming it)."""
    waiting: queue.SimpleQueue[tuple[Callable[[Any], Any], Any] | None] = queue.SimpleQueue()

    def read() -> None:
        while True:
            try:
                waiting.put(pickle.load(calls))
            except Exception:  # (the end of the calls, or the caller gone)
                waiting.put(None)
                return

    def send() -> None:
        while (data := outgoing.get()) is not None:
            try:
                answers.write(data)
                answers.flush()
            except OSError:  # (the caller gone: nothing more to answer)
                return

    # The sender waits for the GIL whenever the pipe has room again: with Python's default
    # 5 ms between switches, an answer sent 64 KB at a time would keep the caller waiting for
    # each piece while the worker works on the next call.
    sys.setswitchinterval(_SWITCH_SECONDS)
    outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    threading.Thread(target=read, daemon=True).start()
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    while (call := waiting.get()) is not None:
        function, argument = call
        try:
            answer: tuple[bool, Any] = (True, function(argument))
        except Exception as exc:
            answer = (False, exc)
        try:
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            data = pickle.dumps((False, RuntimeError(repr(answer[1]))))
        outgoing.put(data)  # (sent by its own thread: the next call is worked on meanwhile)
    outgoing.put(None)
    sender.join()
