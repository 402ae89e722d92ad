"""The import's worker process: calls answered in order, a call's exception raised in the
caller, a process that ends reported as stopped, never a hang."""

from __future__ import annotations

import math
import operator
import os
import signal
import time
from pathlib import Path

import pytest

from langchain_session_recall.importers.worker_process import WorkerProcess, WorkerStopped


def test_calls_are_answered_in_the_order_they_were_sent() -> None:
    worker = WorkerProcess()
    for n in range(5):
        worker.submit(operator.neg, n)
    assert [worker.result() for _ in range(5)] == [0, -1, -2, -3, -4]
    assert worker.pending == 0
    worker.close()


def test_a_call_that_raises_raises_its_exception_here_and_the_worker_goes_on() -> None:
    worker = WorkerProcess()
    worker.submit(math.sqrt, -1.0)
    worker.submit(math.sqrt, 4.0)
    with pytest.raises(ValueError, match="math domain error"):
        worker.result()
    assert worker.result() == 2.0
    worker.close()


def test_a_worker_that_is_killed_is_reported_as_stopped() -> None:
    worker = WorkerProcess()
    worker.submit(operator.neg, 1)
    assert worker.result() == -1
    os.kill(worker._process.pid, signal.SIGKILL)
    with pytest.raises(WorkerStopped, match="ended"):  # (sending, or waiting for the answer)
        worker.submit(operator.neg, 1)
        worker.result()
    worker.close()


def test_close_with_calls_pending_does_not_wait_for_them() -> None:
    import time

    worker = WorkerProcess()
    worker.submit(time.sleep, 60)
    worker.close()  # (killed: a minute's sleep is not waited for)
    assert worker.pending == 1


def test_the_worker_goes_on_with_the_next_call_before_its_last_answer_is_taken(
    tmp_path: Path,
) -> None:
    """An answer larger than a pipe holds waits in the worker until the caller takes it; the
    calls sent after it are worked on meanwhile (a Codex import's worker parses its next
    batch while the importing process is still writing the last one)."""
    worker = WorkerProcess()
    made = tmp_path / "the second call ran"
    try:
        worker.submit(bytes, 4_000_000)  # a 4 MB answer: a pipe holds 64 KB
        worker.submit(os.mkdir, str(made))
        deadline = time.monotonic() + 30.0
        while not made.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert made.exists(), "the second call waited for the first answer to be taken"
        assert worker.result() == bytes(4_000_000)
        assert worker.result() is None
    finally:
        worker.close()
