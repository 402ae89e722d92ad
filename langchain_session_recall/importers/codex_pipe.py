"""Codex rollouts read and parsed in a worker process while the importing process writes.

The store has one writer: the importing process keeps lineage, the import ledger, the resume
points and the writes. Reading and parsing the rollouts (about 40% of a serial import's work)
needs no store, so on a machine with more than one core a worker process does it ahead of
the writes: the threads, in the order the import writes them (but the first
:data:`HEAD_START_BYTES`, which the importing process reads itself while the worker starts),
go out in batches (at most :data:`BATCH_BYTES` of rollouts or :data:`BATCH_THREADS`
threads), at most :data:`AHEAD` batches a worker in flight, so memory holds a few batches
whatever the import's size. Each batch's reads come back in order, with what reading them
reported (a report per file, taken into the import's report where a serial read would have
reported it), and the import goes on exactly as if it had read them itself: the same
sessions, messages, ledger, resume points and report.

What a worker does not read: a rollout read from its resume point (its calls' names may be
the store's) is read by the importing process when its turn comes; a small import (under
:data:`PARALLEL_MIN_BYTES` to read, e.g. a ``sync`` of a few appended rollouts) does not
start a process at all.

Workers are fresh interpreters (:class:`~langchain_session_recall.importers.worker_process.
WorkerProcess`), the same on every platform, safe in a process that runs threads (a
PostgreSQL pool, :func:`asyncio.to_thread`) or holds an open connection, which ``fork`` is not;
unlike :mod:`multiprocessing`'s ``spawn`` they do not run the importing script again, so a
script needs no ``if __name__ == "__main__":`` guard. A worker that cannot start leaves the
import to the importing process alone, with a warning.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from langchain_session_recall.errors import ImportWorkerError, InvalidArgumentError
from langchain_session_recall.importers.codex_reading import RolloutReading, Thread, read_here
from langchain_session_recall.importers.codex_rollout import read_rollout
from langchain_session_recall.importers.records import ImportSession, as_rows
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.resume import ResumePoint
from langchain_session_recall.importers.sources import open_files
from langchain_session_recall.importers.worker_process import WorkerProcess, WorkerStopped

__all__ = [
    "AHEAD",
    "BATCH_BYTES",
    "BATCH_THREADS",
    "HEAD_START_BYTES",
    "PARALLEL_MIN_BYTES",
    "Batch",
    "FileRead",
    "Pipe",
    "processes_for",
    "read_batch",
    "reading_pipe",
    "worker_bytes",
    "worker_files",
]

logger = logging.getLogger(__name__)

PARALLEL_MIN_BYTES = 32 * 1024 * 1024
"""Rollout bytes a worker would read below which the default (``workers=None``) reads in the
importing process: a worker's start and the hand-over of its reads cost more than they save
below it."""
BATCH_BYTES = 4 * 1024 * 1024
"""Most rollout bytes in one batch (a larger thread is a batch of its own)."""
BATCH_THREADS = 64
"""Most threads in one batch."""
AHEAD = 2
"""Batches in flight per worker: one being read while the importing process takes another."""
HEAD_START_BYTES = 8 * 1024 * 1024
"""Rollout bytes the importing process reads itself first, while its workers start (about
0.2 s) and read their first batches."""
_KIND = "codex"


@dataclass
class FileRead:
    """One rollout file read by a worker: what reading it reported, its thread (``None``:
    the file could not be opened, which ``report`` says) and where its read stopped (when
    resume points are kept)."""

    file: str
    report: ImportReport
    thread: ImportSession | None = None
    stop: ResumePoint | None = None


@dataclass
class Batch:
    """Threads for a worker to read: the files of each, with how the import reads them."""

    home: str
    strict: bool
    keep_points: bool
    max_line_bytes: int
    threads: list[list[str]] = field(default_factory=list)


ThreadReads = list[FileRead] | Exception
"""A thread's reads, or the error its read raised (the batch stops there, as a serial import
would have)."""


def read_batch(batch: Batch) -> list[ThreadReads]:
    """Read each thread of ``batch`` (in a worker process): each of its files opened as the
    import opens them (:func:`~langchain_session_recall.importers.sources.open_files`) and read
    whole (:func:`~langchain_session_recall.importers.codex_rollout.read_rollout`), each with a
    report of its own, its messages already converted to rows
    (:func:`~langchain_session_recall.importers.records.as_rows`)."""
    home = Path(batch.home)
    done: list[ThreadReads] = []
    for files in batch.threads:
        reads: list[FileRead] = []
        try:
            for file in files:
                read = FileRead(file, ImportReport(_KIND))
                opened = open_files(
                    [Path(file)], named=home, report=read.report, strict=batch.strict
                )
                for path, fh in opened:
                    read.thread, read.stop = read_rollout(
                        path,
                        fh,
                        read.report,
                        keep_point=batch.keep_points,
                        max_line_bytes=batch.max_line_bytes,
                    )
                if read.thread is not None:  # (converted here: less for the writer to do)
                    read.thread.messages = as_rows(read.thread.messages)
                reads.append(read)
        except Exception as exc:  # (handed back whole: raised where a serial read raises it)
            done.append(exc)
            break
        done.append(reads)
    return done


def processes_for(workers: int | None, worker_bytes: Callable[[int], int]) -> int:
    """How many worker processes an import with ``workers`` starts (``0``: none, it reads
    in the importing process). ``workers``: processes taking part, the importing one
    included (``1``: it alone); ``None``: two when this process may run on more than one
    core and a worker would read at least :data:`PARALLEL_MIN_BYTES`
    (``worker_bytes(limit)`` counts them, up to ``limit``). More than one worker only helps
    when the writes are faster than one worker's parse: the importing process writes alone.

    Raises:
        InvalidArgumentError: ``workers`` below 1.

    Example:
        >>> processes_for(1, lambda limit: 10**9), processes_for(3, lambda limit: 0)
        (0, 2)
    """
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise InvalidArgumentError(
            f"workers must be at least 1 (1: no worker process), not {workers!r}"
        )
    if workers is not None:
        return workers - 1
    if _cores() < 2 or worker_bytes(PARALLEL_MIN_BYTES) < PARALLEL_MIN_BYTES:
        return 0
    return 1


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every platform)
        return os.cpu_count() or 1


def _size(file: str) -> int:
    try:
        return os.stat(file).st_size
    except OSError:
        return 0


class Pipe:
    """The reads of an import's threads, done ahead in worker processes and handed over in
    the import's order (:meth:`reads`); a thread a worker does not read is read here, when
    its turn comes."""

    def __init__(
        self,
        order: Sequence[Thread],
        home: Path,
        report: ImportReport,
        reading: RolloutReading,
        *,
        processes: int,
        start: int,
    ) -> None:
        self.home, self.report, self.reading = home, report, reading
        self.workers: list[WorkerProcess] | None = []
        try:
            for _ in range(processes):
                self.workers.append(WorkerProcess())
        except WorkerStopped:
            self.close()
            raise
        self.start = start  # (the threads before it are read here)
        self.position = 0  # (of the next thread in the import's order)
        self.submitted = 0
        # (what a worker reads of each thread, decided once: a list of files, or none)
        plan = [worker_files(files, reading) for _, _, files in order[self.start :]]
        self.by_worker = [bool(files) for files in plan]  # (by position after ``start``)
        self.batches = self._batches(plan)
        self.pending: deque[WorkerProcess] = deque()  # (whose answer comes next)
        self.current: deque[ThreadReads] = deque()
        self.taken = False  # a worker's read was taken into the import
        for _ in range(AHEAD * processes):
            self._submit()

    def close(self) -> None:
        """Stop the workers (batches sent and not taken are dropped)."""
        for worker in self.workers or []:
            worker.close()
        self.workers = None

    def reads(self, entry: Thread) -> Iterable[ImportSession]:
        """The reads of the files of ``entry``, the next thread of the import's order."""
        _, parent, files = entry
        self.position += 1
        if (
            self.workers is None
            or self.position <= self.start
            or not self.by_worker[self.position - self.start - 1]
        ):
            return read_here(files, parent is None, self.home, self.report, self.reading)
        if not self.current:
            try:
                self.current.extend(self._next_batch())
            except WorkerStopped as exc:
                if self.taken:
                    raise ImportWorkerError(f"a Codex import worker stopped: {exc}") from exc
                logger.warning(
                    "the Codex import's worker process could not start (%s); reading here",
                    exc,
                )
                self.close()  # (nothing of it was taken: this import reads as a serial one)
                return read_here(files, parent is None, self.home, self.report, self.reading)
        return self._taken(self.current.popleft(), root=parent is None)

    def _taken(self, reads: ThreadReads, *, root: bool) -> Iterator[ImportSession]:
        if isinstance(reads, Exception):
            raise reads
        for read in reads:
            self.taken = True
            self.report.absorb(read.report)
            if read.thread is not None:
                yield self.reading.keep(Path(read.file), read.thread, read.stop, root=root)

    def _next_batch(self) -> list[ThreadReads]:
        if not self.pending:
            raise AssertionError("a thread for a worker, not in any batch")
        worker = self.pending.popleft()
        try:
            done: list[ThreadReads] = worker.result()
        except WorkerStopped:
            raise
        except Exception as exc:  # (not a read's: those come back as results)
            raise ImportWorkerError(f"a Codex import worker failed: {exc!r}") from exc
        self._submit()
        return done

    def _submit(self) -> None:
        batch = next(self.batches, None)
        if batch is not None and self.workers:
            worker = self.workers[self.submitted % len(self.workers)]
            worker.submit(read_batch, batch)
            self.submitted += 1
            self.pending.append(worker)

    def _batches(self, plan: Iterable[list[str]]) -> Iterator[Batch]:
        """The threads a worker reads (``plan``: the files it reads of each thread, in order,
        none for a thread read here), in batches."""
        reading = self.reading

        def new() -> Batch:
            return Batch(
                str(self.home), reading.strict, reading.points.enabled, reading.max_line_bytes
            )

        batch, size = new(), 0
        for to_read in plan:
            if not to_read:
                continue
            batch.threads.append(to_read)
            size += sum(_size(f) for f in to_read)
            if size >= BATCH_BYTES or len(batch.threads) >= BATCH_THREADS:
                yield batch
                batch, size = new(), 0
        if batch.threads:
            yield batch


def worker_files(files: Sequence[str], reading: RolloutReading) -> list[str]:
    """The files of a thread a worker reads: those to read (not unchanged since their resume
    point), none when one of them goes on from its resume point (read here)."""
    to_read = reading.to_read(files)
    return [] if reading.here(to_read) else [str(f) for f in to_read]


def _worker_sizes(order: Iterable[Thread], reading: RolloutReading) -> Iterator[int]:
    """The bytes of rollouts a worker would read for each thread of ``order``, in order."""
    for _, _, files in order:
        yield sum(_size(f) for f in worker_files(files, reading))


def _head_start(order: Sequence[Thread], reading: RolloutReading) -> int:
    """How many threads of ``order`` the importing process reads while its workers start:
    up to :data:`HEAD_START_BYTES` of those a worker would read."""
    size = 0
    for n, thread_size in enumerate(_worker_sizes(order, reading)):
        if size >= HEAD_START_BYTES:
            return n
        size += thread_size
    return len(order)


def worker_bytes(order: Iterable[Thread], reading: RolloutReading, limit: int) -> int:
    """The bytes of rollouts a worker would read (counted up to ``limit``)."""
    total = 0
    for thread_size in _worker_sizes(order, reading):
        total += thread_size
        if total >= limit:
            break
    return total


@contextmanager
def reading_pipe(
    order: Sequence[Thread],
    home: Path,
    report: ImportReport,
    reading: RolloutReading,
    *,
    workers: int | None,
) -> Iterator[Callable[[Thread], Iterable[ImportSession]] | None]:
    """What reads the threads of ``order``: ``None`` (the importing process, one after the
    other) or the :meth:`Pipe.reads` of worker processes, stopped on the way out."""
    processes = processes_for(workers, lambda limit: worker_bytes(order, reading, limit))
    start = _head_start(order, reading) if processes else len(order)
    if not any(worker_files(files, reading) for _, _, files in order[start:]):
        yield None  # (nothing for a worker: none is started)
        return
    try:
        pipe = Pipe(order, home, report, reading, processes=processes, start=start)
    except WorkerStopped as exc:
        logger.warning("the Codex import's worker process could not start (%s); reading here", exc)
        yield None
        return
    try:
        yield pipe.reads
    finally:
        pipe.close()
