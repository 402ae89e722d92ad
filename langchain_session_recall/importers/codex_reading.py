"""How a Codex import reads its rollouts: resume points, the threads' names, a thread's files
read in this process (:class:`RolloutReading`, :func:`read_here`); a worker process reads the
others (:mod:`~langchain_session_recall.importers.codex_pipe`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from langchain_session_recall.importers.codex_resume import RolloutPoints, stored_call_names
from langchain_session_recall.importers.codex_rollout import (
    Rollout,
    default_thread_id,
    read_on,
    read_rollout,
)
from langchain_session_recall.importers.lines import (
    BadEntry,
    bounded_lines,
    identifier,
    json_objects,
)
from langchain_session_recall.importers.records import (
    ImportSession,
)
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.resume import (
    ResumePoint,
    point_at,
)
from langchain_session_recall.importers.sources import open_files
from langchain_session_recall.messages import storable_text

if TYPE_CHECKING:
    from langchain_session_recall.backends.base import SessionBackend


def _thread_names(home: Path, report: ImportReport) -> dict[str, str]:
    """Thread names from ``session_index.jsonl`` (``{id, thread_name, updated_at}``, appended:
    the last name of a thread wins); none when there is no such file."""
    index = home / "session_index.jsonl"
    names: dict[str, str] = {}
    if not index.is_file():
        return names
    for _, fh in open_files([index], named=home, report=report):
        lines = bounded_lines(fh, name=index.name, report=report)
        for number, obj in json_objects(lines, name=index.name, report=report):
            try:
                thread = identifier(obj.get("id"), "id")
            except BadEntry as exc:
                report.skip(str(exc), f"{index.name}:{number}")
                continue
            name = obj.get("thread_name")
            if thread and isinstance(name, str) and name.strip():
                names[thread] = storable_text(name.strip())
    return names


class ThreadNames:
    """The names a Codex home's ``session_index.jsonl`` gives its threads, read when a thread
    first needs one (not at all by an import that needs none).

    ``points_hold_them``: a thread read from its resume point keeps the name it was given
    there, without the index being read, when that point was saved with a name from an index
    (:meth:`hold`): for an import of some rollouts only, the index as the last import read it
    (``sync``: it has not changed, else the whole home is read). A point saved where no index
    was read (an import of one rollout file, or of a folder without one) names nothing: its
    thread is named from the index.
    """

    def __init__(self, home: Path, report: ImportReport, *, points_hold_them: bool) -> None:
        self.home, self.report, self.points_hold_them = home, report, points_hold_them
        self.names: dict[str, str] | None = None
        self.indexed = False  # the names were read from an index
        self.held: set[str] = set()  # threads whose resume point holds an index's name

    def hold(self, state: Mapping[str, Any]) -> None:
        """Note a resume point's thread as named by an index when its point says so."""
        if state.get("named"):
            self.held.add(str(state["thread"]))

    def _holds(self, thread: ImportSession) -> bool:
        """Whether ``thread`` keeps the name its resume point holds (an index's)."""
        return self.points_hold_them and thread.resumed and thread.id in self.held

    def of(self, thread: ImportSession) -> str | None:
        """The name ``thread`` is to have."""
        if self._holds(thread):
            return thread.title
        if self.names is None:
            index = self.home / "session_index.jsonl"
            self.indexed = self.home.is_dir() and index.is_file()
            self.names = _thread_names(self.home, self.report) if self.indexed else {}
        return self.names.get(thread.id)

    def named(self, thread: ImportSession) -> bool:
        """Whether the name :meth:`of` gave ``thread`` came from an index (to keep in its
        resume point)."""
        return self._holds(thread) or (self.names is not None and self.indexed)


Thread = tuple[str, "str | None", list[str]]
"""A thread to read: its id, its parent (``None`` when it has none, or it was cut) and the
paths of its files."""


class RolloutReading:
    """How an import reads its rollouts: the longest line, the resume points, the store (the
    names of calls answered after a resumed read's point), the threads' names; ``strict``: a
    rollout that cannot be opened is an error, not a problem reported (each was named)."""

    def __init__(
        self,
        store: SessionBackend,
        points: RolloutPoints,
        max_line_bytes: int,
        names: ThreadNames,
        *,
        strict: bool = False,
    ) -> None:
        self.store, self.points, self.max_line_bytes = store, points, max_line_bytes
        self.names, self.strict = names, strict

    def rollout(
        self, file: Path, fh: BinaryIO, report: ImportReport, *, root: bool
    ) -> ImportSession:
        """One rollout read: from where the last import stopped when it was only appended
        to since, else whole (:func:`read_rollout`); its new resume point kept (when points
        are kept)."""
        point = self.points.go_on(file, fh)
        limit = self.max_line_bytes
        cursor = self.points.cursor(file, fh, point, report=report, max_line_bytes=limit)
        if point is None or cursor is None:
            thread, stop = read_rollout(
                file, fh, report, keep_point=self.points.enabled, max_line_bytes=limit
            )
            return self.keep(file, thread, stop, root=root)
        resumed = point.state
        self.names.hold(resumed)
        recall = stored_call_names(self.store, str(resumed["thread"]))
        rollout = Rollout(report, default_thread_id(file), resumed, recall)
        thread, state = read_on(rollout, cursor, file)
        state["title"] = self.names.of(thread)
        state["named"] = self.names.named(thread)
        self.points.record_rollout(file, point_at(fh, cursor, state), before=point, root=root)
        return thread

    def keep(
        self, file: Path, thread: ImportSession, stop: ResumePoint | None, *, root: bool
    ) -> ImportSession:
        """``thread``, read whole from ``file`` (here or in a worker process), with where
        its read stopped (``stop``, when points are kept) kept as the file's new point."""
        if stop is not None:
            stop.state["title"] = self.names.of(thread)
            stop.state["named"] = self.names.named(thread)
            self.points.record_rollout(file, stop, before=None, root=root)
        return thread

    def to_read(self, files: Sequence[str]) -> list[Path]:
        """The files of a thread to open: not those unchanged since their resume point."""
        return [Path(f) for f in files if Path(f) not in self.points.still]

    def here(self, files: Iterable[Path]) -> bool:
        """Whether the thread of ``files`` is read in this process (it goes on from a resume
        point: the names of calls answered later are the store's), not in a worker."""
        return any(f in self.points.valid for f in files)


def read_here(
    files: Sequence[str], root: bool, home: Path, report: ImportReport, reading: RolloutReading
) -> Iterator[ImportSession]:
    """The reads of a thread's files, in this process, one at a time."""
    opened = open_files(reading.to_read(files), named=home, report=report, strict=reading.strict)
    for file, fh in opened:
        yield reading.rollout(file, fh, report, root=root)
