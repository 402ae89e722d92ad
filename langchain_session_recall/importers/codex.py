"""Import Codex CLI rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``).

A rollout is one thread; a fork or a sub-agent is a file of its own and becomes a child session
of the thread it came from, without the history it copied from it. What a rollout holds and
what is kept of it: :mod:`~langchain_session_recall.importers.codex_rollout` (one rollout read,
no store); how an import reads (resume points, names):
:mod:`~langchain_session_recall.importers.codex_reading`. Here the rollouts are found, their
threads ordered parents first, and written a group at a time.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.importers.base import report_orphans, stored_history, write_sessions
from langchain_session_recall.importers.codex_pipe import reading_pipe
from langchain_session_recall.importers.codex_reading import (
    RolloutReading,
    Thread,
    ThreadNames,
    read_here,
)
from langchain_session_recall.importers.codex_resume import RolloutPoints
from langchain_session_recall.importers.codex_rollout import (
    KIND,
    SOURCE,
    Rollout,
    default_thread_id,
    lineage,
    parse_codex_lines,
    read_rollout,
)
from langchain_session_recall.importers.lines import (
    MAX_LINE_BYTES,
    bounded_lines,
)
from langchain_session_recall.importers.records import (
    ImportSession,
    dropping_copied_history,
    note_where,
    order_parents_first,
)
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.sources import open_files, source_files

__all__ = [
    "default_codex_home",
    "import_codex",
    "parse_codex_lines",
    "read_rollout",
    "rollout_files",
]

_SUFFIXES = (".jsonl", ".jsonl.zst")
_FOLDERS = ("sessions", "archived_sessions")


def default_codex_home() -> Path:
    """``$CODEX_HOME``, else ``~/.codex``: where Codex keeps its rollouts.

    Example:
        >>> import os
        >>> os.environ.pop("CODEX_HOME", None) and None
        >>> default_codex_home().name
        '.codex'
    """
    home = os.environ.get("CODEX_HOME")
    return Path(home).expanduser() if home else Path.home() / ".codex"


def rollout_files(path: Path, *, report: ImportReport, follow_symlinks: bool = False) -> list[Path]:
    """The rollouts an import of ``path`` reads: the file itself; under a Codex home its
    ``sessions/`` and ``archived_sessions/``; under any other directory every
    ``rollout-*.jsonl`` (or ``.jsonl.zst``) file. A plain file wins over a ``.zst`` file of the
    same name beside it.

    Raises:
        ImportSourceError: ``path`` does not exist, or is neither a directory nor a file.
    """
    roots = [path / f for f in _FOLDERS if (path / f).is_dir()] or [path]
    hint = f"; Codex keeps its rollouts in {default_codex_home() / 'sessions'}"
    found: list[Path] = []
    for root in roots:
        files = source_files(
            root, report=report, suffix=_SUFFIXES, follow_symlinks=follow_symlinks, hint=hint
        )
        found += files if files == [path] else [f for f in files if f.name.startswith("rollout-")]
    plain = set(found)
    return [f for f in found if not (f.suffix == ".zst" and f.with_suffix("") in plain)]


def _merge(into: ImportSession, more: ImportSession) -> None:
    """A thread found twice (in ``sessions/`` and ``archived_sessions/``): its lines once."""
    keys = {k for k, _ in into.messages}
    into.messages += [(k, m) for k, m in more.messages if k not in keys]
    into.model = into.model or more.model
    into.parent_session_id = into.parent_session_id or more.parent_session_id
    note_where(into, more.project, more.git_branch)
    if more.started_at is not None and (into.started_at or more.started_at) >= more.started_at:
        into.started_at = more.started_at


def _threads_in_order(
    files: Sequence[Path],
    home: Path,
    store: SessionBackend,
    report: ImportReport,
    reading: RolloutReading,
) -> tuple[list[Thread], Counter[str]]:
    """Each thread (its id and parent, read from the head of each rollout, or from where the
    last import of it stopped) with its files, parents before children, and how many
    children each parent has.

    Reading heads first is what lets the import then read and write one thread at a time: a
    child met before its parent (a sub-agent in ``sessions/`` of a thread archived since)
    still finds it. A parent neither among the threads nor in the store is cut and reported
    (an orphan), as is a parent cycle.
    """
    threads: dict[str, ImportSession] = {}
    files_of: dict[str, list[str]] = {}
    heads: dict[Path, tuple[str, str | None]] = {}
    scratch = ImportReport(KIND)  # a file that cannot be opened is reported when read
    for file in files:
        if (point := reading.points.unchanged(file)) is not None:
            heads[file] = (str(point.state["thread"]), point.state.get("parent"))
    unread = [f for f in files if f not in heads]
    for file, fh in open_files(unread, named=home, report=scratch, strict=reading.strict):
        point = reading.points.check(file, fh)
        if point is not None:
            heads[file] = (str(point.state["thread"]), point.state.get("parent"))
            continue
        lines = bounded_lines(fh, name="", report=scratch, max_line_bytes=reading.max_line_bytes)
        heads[file] = lineage(lines, default_session_id=default_thread_id(file))
    for file in files:
        thread, parent = heads.get(file, (default_thread_id(file), None))
        stub = threads.setdefault(thread, ImportSession(thread, SOURCE))
        stub.parent_session_id = stub.parent_session_id or parent
        files_of.setdefault(thread, []).append(str(file))
    del heads  # (held for the whole import, lineage is kept lean: ids and file names)
    for paths in files_of.values():
        if len(paths) > 1:  # (sessions/ and archived_sessions/: merged, read whole)
            reading.points.whole(paths)
    ordered, orphans = order_parents_first(
        list(threads.values()), lambda sid: store.get_session(sid) is not None
    )
    report_orphans(report, orphans)
    children = Counter(s.parent_session_id for s in ordered if s.parent_session_id is not None)
    return [(s.id, s.parent_session_id, files_of.pop(s.id)) for s in ordered], children


def _read_threads(
    order: Iterable[Thread],
    home: Path,
    report: ImportReport,
    reading: RolloutReading,
    reads: Callable[[Thread], Iterable[ImportSession]] | None = None,
) -> Iterator[ImportSession]:
    """Each thread read from its files, in ``order``, one at a time: its parent as the order
    says (cut when it was missing), its name from the home's index. A thread resumed with
    nothing new is passed over, unless it has a name it was not given before. ``reads``
    gives the reads of a thread's files (default: read here, one after the other; a
    :class:`~langchain_session_recall.importers.codex_pipe.Pipe` has them read ahead in
    worker processes)."""
    read = reads or (lambda e: read_here(e[2], e[1] is None, home, report, reading))
    for entry in order:
        _, parent, files = entry
        thread: ImportSession | None = None
        if len(files) == 1 and (still := reading.points.still.get(Path(files[0]))):
            reading.names.hold(still.state)
            thread = Rollout(report, "", still.state).finish(0.0)  # (nothing new: not read)
        for one in read(entry):
            if thread is None:
                thread = one
            else:
                _merge(thread, one)
        if thread is None:
            continue
        thread.parent_session_id = parent
        name = reading.names.of(thread)
        if thread.resumed and not thread.messages and name == thread.title:
            continue
        if thread.title != name and len(files) == 1:  # (given once)
            reading.points.rename(Path(files[0]), name, named=reading.names.named(thread))
        thread.title = name
        yield thread


def import_codex(
    store: SessionBackend,
    path: str | os.PathLike[str] | None = None,
    *,
    show_progress: bool | None = None,
    reimport: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    follow_symlinks: bool = False,
    resume: bool = False,
    files: Iterable[str | os.PathLike[str]] | None = None,
    workers: int | None = None,
) -> ImportReport:
    """Import Codex rollouts into ``store``: a Codex home (default ``$CODEX_HOME`` or
    ``~/.codex``: its ``sessions/`` and ``archived_sessions/``), a directory of rollouts, or
    one rollout file (``.jsonl``, or ``.jsonl.zst`` with the ``codex`` extra installed).

    Threads keep their id, model, start and name (from ``session_index.jsonl``); forks
    (``forked_from_id``) and sub-agents (spawned by a parent thread) become child sessions
    of that thread. Source files are opened read-only.

    The import streams: it first reads the head of each rollout (its ``session_meta``: the
    thread and its parent), then reads the threads one at a time, parents first, each
    written with the group of threads it ends (one transaction), so memory holds one group
    (and the messages of a parent until its last fork or sub-agent is read), not the import;
    a child found before its parent (in ``sessions/``, its parent archived) still hangs below
    it. A line longer than ``max_line_bytes`` (64 MB) is skipped and reported; a ``.zst``
    file met without the ``zstandard`` package is skipped and reported, with what to install.
    Lines left out (``event_msg``, reasoning) are known by their head and not decoded.

    A session imported before and forgotten since (``delete_sessions``) is left out and
    listed in ``report.forgotten`` unless ``reimport``.

    ``workers``: the processes the import runs in. ``1``: this one alone. ``N`` > 1: this
    one writes while ``N - 1`` worker processes (fresh interpreters, which do not run the
    calling script again) read and parse the rollouts, with the same result
    (:mod:`~langchain_session_recall.importers.codex_pipe`). ``None`` (default): a worker
    when this process may use more than one core and 32 MB or more are to be read.

    ``files``: only these rollouts of the Codex home ``path``, the others as the last import
    left them (what ``sync`` reads when only they changed). A thread's parent is found among
    them or in the store, wherever its file sorts; a thread read from its start is named from
    the home's ``session_index.jsonl`` (read only then), one read from its resume point
    keeps the name it had there. A rollout that cannot be opened raises
    (:class:`~langchain_session_recall.errors.ImportSourceError`,
    :class:`~langchain_session_recall.errors.MissingFeatureError`).

    Example:
        >>> import json, tempfile, pathlib
        >>> day = pathlib.Path(tempfile.mkdtemp()) / "sessions" / "2026" / "11" / "20"
        >>> day.mkdir(parents=True)
        >>> meta = {"type": "session_meta", "timestamp": "2026-11-20T09:00:00Z",
        ...         "payload": {"id": "0193a1b2-0000-7000-8000-000000000001", "cwd": "/src"}}
        >>> ask = {"type": "response_item", "timestamp": "2026-11-20T09:00:02Z", "payload":
        ...        {"type": "message", "role": "user",
        ...         "content": [{"type": "input_text", "text": "rotate the TLS cert"}]}}
        >>> f = day / "rollout-2026-11-20T09-00-00-0193a1b2-0000-7000-8000-000000000001.jsonl"
        >>> _ = f.write_text(json.dumps(meta) + "\\n" + json.dumps(ask) + "\\n")
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> import_codex(store, day.parents[3]).summary()
        'codex: 1 session (1 new), 1 message imported'
    """
    report = ImportReport(KIND)
    home = Path(path).expanduser() if path is not None else default_codex_home()
    if files is None:
        rollouts = rollout_files(home, report=report, follow_symlinks=follow_symlinks)
    else:
        rollouts = [Path(f).expanduser() for f in files]
    points = RolloutPoints(store, rollouts, enabled=resume and not reimport)
    names = ThreadNames(home, report, points_hold_them=files is not None and points.enabled)
    reading = RolloutReading(store, points, max_line_bytes, names, strict=files is not None)
    _import_threads(store, rollouts, home, report, reading, workers, show_progress, reimport)
    if points.enabled:
        points.save(store)
    return report


def _import_threads(
    store: SessionBackend,
    rollouts: Sequence[Path],
    home: Path,
    report: ImportReport,
    reading: RolloutReading,
    workers: int | None,
    show_progress: bool | None,
    reimport: bool,
) -> None:
    """The threads of ``rollouts`` put in order, read (here, or by worker processes) and
    written, a group at a time."""
    order, children = _threads_in_order(rollouts, home, store, report, reading)
    with reading_pipe(order, home, report, reading, workers=workers) as reads:
        threads = _read_threads(order, home, report, reading, reads)
        sessions = dropping_copied_history(threads, children, stored_history(store), report)
        write_sessions(
            store,
            reading.points.keeping(sessions),
            report,
            show_progress=show_progress,
            reimport=reimport,
        )
