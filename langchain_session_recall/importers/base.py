"""What every importer shares: the report, skip bookkeeping, progress and session writing.

An importer turns an outside source into :class:`ImportSession` records (pure parsing), then
:func:`write_sessions` puts them into a store (either backend): parents before children, one
transaction per session batch (its new messages and their ledger rows together), messages
already in the ledger skipped. Re-running an import therefore adds only what is new.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import stat
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO, TypeVar

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.backends.retry import WriteRetry
from langchain_session_recall.errors import (
    ImportSourceError,
    InvalidArgumentError,
    SessionRecallError,
    StoreBusyError,
)
from langchain_session_recall.messages import MessageLike, storable_text
from langchain_session_recall.models import Session

__all__ = [
    "MAX_LINE_BYTES",
    "UNDATED",
    "BadEntry",
    "ImportReport",
    "ImportSession",
    "ImportSourceError",
    "bounded_lines",
    "check_regular_file",
    "fields_to_write",
    "identifier",
    "import_target",
    "json_objects",
    "open_regular_file",
    "open_sources",
    "order_parents_first",
    "progress",
    "source_files",
    "write_sessions",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
_MAX_PROBLEMS = 50  # details kept per report; counts are always complete
UNDATED = "undated_by"
"""Key of an imported message dict that had no time of its own: how it was dated."""
SESSIONS_PER_TRANSACTION = 100
"""Most sessions an import writes per transaction."""
MESSAGES_PER_TRANSACTION = 2_000
"""A transaction ends after the session that brings it to this many messages: on SQLite it
holds the one write lock, so other writers (a recorder, another import) get a turn at least
every few hundred milliseconds."""
MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest line a line-based importer reads (64 MB): a longer one is skipped and reported
("line too long"), read past in pieces of at most 1 MB, so memory stays bounded whatever the
file holds (a 1 GB file without a newline included)."""
_SKIP_PIECE = 1024 * 1024
_RETRY = WriteRetry()


class BadEntry(ValueError):
    """One line or entry of a source that cannot be imported; its message says why. The
    importers skip it, report it with its line number and go on."""


@dataclass
class ImportReport:
    """Outcome of one import run.

    ``skipped`` counts malformed or invalid items left out, by reason; ``problems`` keeps the
    first details (``"file.jsonl:12: not valid JSON"``) so they can be found and fixed.
    ``ignored`` counts entries that are not conversation by design (e.g. Claude Code's file
    snapshots): nothing is lost by leaving them out. ``forgotten`` lists the sessions left out
    because they were imported before and then forgotten (``delete_sessions``,
    ``session-recall forget``); ``reimport=True`` imports them again.

    Example:
        >>> r = ImportReport("jsonl")
        >>> r.skip("not valid JSON", "a.jsonl:3")
        >>> r.summary()
        'jsonl: 0 sessions (0 new), 0 messages imported; skipped 1 (1 not valid JSON)'
    """

    kind: str
    sessions: int = 0
    new_sessions: int = 0
    messages: int = 0
    already_imported: int = 0
    orphans: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    ignored: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    undated: Counter[str] = field(default_factory=Counter)
    """Messages imported without a time of their own (an importer marks them with the
    :data:`UNDATED` key): ``"neighbour"``, dated by their neighbours in their session;
    ``"file"``, in a session without any time, dated by the file's."""
    label: str = ""
    """What the source was, when the summary should name it otherwise than ``kind`` (the
    import ledger's name): ``"sqlite"`` for a store of ours read by the Hermes importer."""

    def ignore(self, reason: str) -> None:
        """Count an entry that is not conversation by design (metadata, snapshots, ...)."""
        self.ignored[reason] += 1

    def skip(self, reason: str, where: str | None = None, count: int = 1) -> None:
        """Count ``count`` items skipped for ``reason`` (``where`` says which)."""
        self.skipped[reason] += count
        if where is not None and len(self.problems) < _MAX_PROBLEMS:
            self.problems.append(f"{where}: {reason}")

    @property
    def skipped_total(self) -> int:
        """Items skipped for any reason."""
        return sum(self.skipped.values())

    def summary(self) -> str:
        """One line for humans: what was imported and what was skipped, with reasons."""
        line = (
            f"{self.label or self.kind}: {self.sessions} sessions ({self.new_sessions} new), "
            f"{self.messages} messages imported"
        )
        if self.already_imported:
            line += f", {self.already_imported} already present"
        if self.skipped:
            reasons = ", ".join(f"{n} {why}" for why, n in self.skipped.most_common())
            line += f"; skipped {self.skipped_total} ({reasons})"
        if self.orphans:
            line += f"; {len(self.orphans)} imported as roots (parent missing)"
        if self.ignored:
            line += f"; ignored {sum(self.ignored.values())} non-message entries"
        if self.forgotten:
            line += (
                f"; {len(self.forgotten)} forgotten session{'s' if len(self.forgotten) > 1 else ''}"
                " left out (--reimport imports them again)"
            )
        if self.undated["neighbour"]:
            line += f"; {self.undated['neighbour']} without a timestamp dated by their neighbours"
        if self.undated["file"]:
            line += f"; {self.undated['file']} without any timestamp dated by the file's time"
        return line

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for ``--json``)."""
        return {
            "kind": self.label or self.kind,
            "undated": dict(self.undated),
            "sessions": self.sessions,
            "new_sessions": self.new_sessions,
            "messages": self.messages,
            "already_imported": self.already_imported,
            "orphans": list(self.orphans),
            "skipped": dict(self.skipped),
            "ignored": dict(self.ignored),
            "problems": list(self.problems),
            "forgotten": list(self.forgotten),
        }


def check_regular_file(path: Path, hint: str = "") -> None:
    """Raise :class:`ImportSourceError` unless ``path`` is (or links to) a regular file:
    "no such file" when nothing is there, "not a regular file" for a directory, a FIFO or a
    device (which is never opened, so a FIFO cannot block the import)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise ImportSourceError(f"no such file or directory: {path}{hint}") from None
    except OSError as exc:
        raise ImportSourceError(f"cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise ImportSourceError(f"not a regular file: {path}{hint}")


def open_regular_file(path: Path) -> BinaryIO:
    """Open ``path`` for reading if it is a regular file; never blocks (a FIFO swapped in
    after a check is opened non-blocking and refused).

    Raises:
        ImportSourceError: it is not a regular file, or cannot be opened.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ImportSourceError(f"cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ImportSourceError(f"not a regular file: {path}")
    return os.fdopen(fd, "rb")


def source_files(
    path: Path,
    *,
    report: ImportReport,
    suffix: str = ".jsonl",
    follow_symlinks: bool = False,
    hint: str = "",
) -> list[Path]:
    """The files an import of ``path`` reads: ``path`` itself when it is a file, else every
    ``*<suffix>`` file under it.

    A file named directly is read wherever it points. Under a directory, only regular files
    whose resolved path lies inside it are read: a symlink leading out of it is skipped and
    reported unless ``follow_symlinks``; FIFOs, devices and sockets are skipped and reported
    ("not a regular file") without being opened; a file reached twice (through a link inside
    the tree) is read once; a directory loop is walked once. Symlinks are returned resolved.

    Raises:
        ImportSourceError: ``path`` does not exist, or is neither a directory nor a regular file.
    """
    try:
        is_dir = stat.S_ISDIR(path.stat().st_mode)
    except OSError:
        is_dir = False
    if not is_dir:
        check_regular_file(path, hint)
        return [path]
    root = path.resolve()
    files: dict[tuple[int, int], Path] = {}
    top = root.stat()
    walked = {(top.st_dev, top.st_ino)}
    pending = [path]
    while pending:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            where = _relative(Path(folder), path, root)
            report.skip("directory not readable", f"{where}: {exc.strerror}")
            continue
        for entry in entries:
            found = Path(entry.path)
            where = _relative(found, path, root)
            wanted = entry.name.endswith(suffix)
            if entry.is_symlink():
                found = found.resolve()
                if not follow_symlinks and not found.is_relative_to(root):
                    reason = "symlink out of the imported directory (use follow_symlinks)"
                    report.skip(reason, where)
                    continue
            try:
                info = found.stat()
            except OSError:
                if wanted:
                    report.skip("broken symlink", where)
                continue
            key = (info.st_dev, info.st_ino)
            if stat.S_ISDIR(info.st_mode):
                if key not in walked:
                    walked.add(key)
                    pending.append(found)
            elif wanted and not stat.S_ISREG(info.st_mode):
                report.skip("not a regular file", where)
            elif wanted:
                files.setdefault(key, found)
    return sorted(files.values())


def open_sources(
    path: Path,
    *,
    report: ImportReport,
    suffix: str = ".jsonl",
    follow_symlinks: bool = False,
    hint: str = "",
) -> Iterator[tuple[Path, BinaryIO]]:
    """Each file of :func:`source_files`, opened (:func:`open_regular_file`) and closed after
    use. A file under a directory that cannot be opened is skipped and reported; the file named
    as ``path`` raises :class:`ImportSourceError`."""
    files = source_files(
        path, report=report, suffix=suffix, follow_symlinks=follow_symlinks, hint=hint
    )
    for file in files:
        try:
            fh = open_regular_file(file)
        except ImportSourceError as exc:
            if file == path:
                raise
            report.skip("not readable", f"{file.name}: {exc}")
            continue
        with fh:
            yield file, fh


def _relative(found: Path, *bases: Path) -> str:
    for base in bases:
        if found.is_relative_to(base):
            return str(found.relative_to(base))
    return str(found)


def _size(n: int) -> str:
    return f"{n >> 20} MB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n} bytes"


def bounded_lines(
    fh: BinaryIO, *, name: str, report: ImportReport, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[str]:
    """The lines of a binary file, decoded as UTF-8 (bad bytes replaced), none read whole if
    longer than ``max_line_bytes``: such a line is reported as too long and yielded as ``""``
    (so the lines after it keep their numbers), and read past in pieces of at most 1 MB.

    Example:
        >>> import io
        >>> r = ImportReport("jsonl")
        >>> list(bounded_lines(io.BytesIO(b'{"a": 1}\\n' + b"x" * 50 + b"\\n{}"),
        ...                    name="f.jsonl", report=r, max_line_bytes=20))
        ['{"a": 1}\\n', '', '{}']
        >>> r.problems
        ['f.jsonl:2: line too long (over 20 bytes)']
    """
    if max_line_bytes < 1:
        raise InvalidArgumentError("max_line_bytes must be at least 1")
    piece = min(_SKIP_PIECE, max_line_bytes + 1)
    number = 0
    while line := fh.readline(max_line_bytes + 1):
        number += 1
        if len(line) > max_line_bytes and not line.endswith(b"\n"):
            del line
            _skip_line(fh, piece)
            report.skip(f"line too long (over {_size(max_line_bytes)})", f"{name}:{number}")
            yield ""
            continue
        yield line.decode("utf-8", errors="replace")


def _skip_line(fh: BinaryIO, piece: int) -> None:
    """Read past the rest of a line, ``piece`` bytes at a time."""
    if not fh.seekable():
        while (rest := fh.readline(piece)) and not rest.endswith(b"\n"):
            pass
        return
    # read() + find() runs about ten times faster than readline() pieces; then step back to
    # just after the newline.
    while chunk := fh.read(piece):
        end = chunk.find(b"\n")
        if end >= 0:
            fh.seek(end + 1 - len(chunk), os.SEEK_CUR)
            return


def json_objects(
    lines: Iterable[str], *, name: str, report: ImportReport
) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """``(line number, object)`` of each line holding a JSON object; blank lines are passed
    over, every other line is skipped and reported: not valid JSON, nested too deeply for
    Python's parser (a line of 100,000 ``[``), not an object.

    Example:
        >>> r = ImportReport("jsonl")
        >>> list(json_objects(['{"a": 1}', "", "[" * 100_000, "[1]"], name="f.jsonl", report=r))
        [(1, {'a': 1})]
        >>> r.problems
        ['f.jsonl:3: nested too deeply', 'f.jsonl:4: not a JSON object']
    """
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            report.skip("not valid JSON", f"{name}:{number}")
            continue
        except RecursionError:
            report.skip("nested too deeply", f"{name}:{number}")
            continue
        if not isinstance(obj, Mapping):
            report.skip("not a JSON object", f"{name}:{number}")
            continue
        yield number, obj


def identifier(value: Any, field_name: str) -> str | None:
    """An id read from a source (a session, parent, user or message id) as the text to store:
    a string, or an integer written as one; ``None`` when absent or empty.

    Raises:
        BadEntry: anything else (a list, an object, a float), or a string the store cannot
            keep as given: a lone surrogate (UTF-8 cannot encode it) or a NUL (PostgreSQL text
            cannot hold it), which the store refuses in an id rather than make another id.

    Example:
        >>> identifier(42, "session_id"), identifier("", "session_id")
        ('42', None)
        >>> identifier(["s1"], "session_id")
        Traceback (most recent call last):
        ...
        langchain_session_recall.importers.base.BadEntry: session_id is not a string
    """
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise BadEntry(f"{field_name} is not a string")
    if storable_text(value) != value:
        raise BadEntry(f"{field_name} is not valid Unicode (a lone surrogate)")
    if "\x00" in value:
        raise BadEntry(f"{field_name} holds a NUL character")
    return value


@dataclass
class ImportSession:
    """One session read from a source, ready to write.

    ``messages`` are ``(external_key, message)`` pairs: the key identifies the message in the
    source (a line number, a uuid, a Hermes message id) and is what makes re-runs idempotent.

    Example:
        >>> s = ImportSession("chat-1", "import", [("f:1", {"role": "user", "content": "hi"})])
        >>> s.messages[0][0]
        'f:1'
    """

    id: str
    source: str
    messages: list[tuple[str, MessageLike]] = field(default_factory=list)
    parent_session_id: str | None = None
    model: str | None = None
    title: str | None = None
    user_id: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    end_reason: str | None = None


def order_parents_first(
    sessions: Sequence[ImportSession], known: Callable[[str], bool] = lambda _: False
) -> tuple[list[ImportSession], list[str]]:
    """Sessions sorted so every parent precedes its children (pure, cycle-safe).

    A parent that is neither in ``sessions`` nor ``known`` (already in the store) is missing:
    the child is detached (written as a root) and its id returned in the second list. Members of
    a parent cycle are detached the same way.

    Example:
        >>> a, b = ImportSession("a", "cli", parent_session_id="b"), ImportSession("b", "cli")
        >>> [s.id for s in order_parents_first([a, b])[0]]
        ['b', 'a']
    """
    by_id = {s.id: s for s in sessions}
    ordered: list[ImportSession] = []
    orphans: list[str] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    for start in sessions:
        stack: list[str] = []
        node: str | None = start.id
        # Walk up to the first placed (or external) ancestor, then place the path top-down.
        while node is not None and node in by_id and state.get(node) is None:
            state[node] = 1
            stack.append(node)
            parent = by_id[node].parent_session_id
            if parent is not None and state.get(parent) == 1:  # cycle: cut it here
                orphans.append(node)
                by_id[node].parent_session_id = None
                break
            node = parent
        for sid in reversed(stack):
            session = by_id[sid]
            parent = session.parent_session_id
            if parent is not None and parent not in by_id and not known(parent):
                orphans.append(sid)
                session.parent_session_id = None
            state[sid] = 2
            ordered.append(session)
    return ordered, orphans


def progress(
    items: Iterable[T],
    *,
    total: int | None = None,
    desc: str = "importing",
    enabled: bool | None = None,
    stream: TextIO | None = None,
) -> Iterator[T]:
    """Yield ``items`` while drawing a progress bar (rich) on stderr.

    ``enabled=None`` shows it only when stderr is a terminal, so an import run by a script, a
    hook or a test prints nothing extra. Forced on a stream that is not a terminal (``--progress``
    into a log), the bar is written once, when it ends: no cursor movement in the file.

    Example:
        >>> list(progress([1, 2], enabled=False))
        [1, 2]
    """
    out = stream or sys.stderr
    if enabled is None:
        enabled = out.isatty()
    if not enabled:
        yield from items
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("sessions"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(file=out), transient=False) as bar:
        task = bar.add_task(desc, total=total)
        for item in items:
            yield item
            bar.advance(task)


@contextmanager
def import_target(target: str | os.PathLike[str]) -> Iterator[SessionBackend]:
    """Open the store an import writes to (a file path, ``":memory:"`` or a DSN), as the CLI
    does: a SQLite file that this call creates is removed again when the import wrote no
    session into it, or failed, so a failed import leaves nothing behind.

    Example:
        >>> import tempfile, pathlib
        >>> db = pathlib.Path(tempfile.mkdtemp()) / "new.db"
        >>> with import_target(db) as store:
        ...     pass  # nothing imported
        >>> db.exists()
        False
    """
    from langchain_session_recall.backends import is_postgres_dsn, open_store

    path = None
    if not is_postgres_dsn(target) and str(target) != ":memory:":
        candidate = Path(target).expanduser()
        path = None if os.path.lexists(candidate) else candidate
    store = open_store(target)
    wrote = False
    try:
        yield store
        wrote = path is None or store.stats()["sessions"] > 0
    finally:
        store.close()
        if path is not None and not wrote:
            for leftover in (path, *(Path(f"{path}{x}") for x in ("-wal", "-shm", "-journal"))):
                leftover.unlink(missing_ok=True)


def write_sessions(
    store: SessionBackend,
    sessions: Sequence[ImportSession],
    report: ImportReport,
    *,
    show_progress: bool | None = None,
    reimport: bool = False,
    retry: WriteRetry | None = None,
) -> ImportReport:
    """Write parsed sessions into ``store``, parents first, each batch in one transaction.

    A session whose parent is missing everywhere is written as a root and listed in
    ``report.orphans``. Messages already in the ledger are counted as ``already_imported``.
    A session imported before and forgotten since (its ledger rows remain, the session does
    not), and any session below it, is left out and listed in ``report.forgotten``, unless
    ``reimport``: then it is imported again.

    Writers take turns: a group that finds the store busy (another process holding SQLite's
    write lock past the store's ``busy_timeout``, a PostgreSQL deadlock) is rolled back and
    tried again as ``retry`` says (default :class:`~langchain_session_recall.backends.retry.
    WriteRetry`: 3 attempts). After the last, :class:`~langchain_session_recall.errors.
    StoreBusyError` is raised: the groups written before stay, and running the import again
    adds the rest.

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> s = ImportSession("chat-1", "import", [("f:1", {"role": "user", "content": "hi"})])
        >>> write_sessions(store, [s], ImportReport("custom")).summary()
        'custom: 1 sessions (1 new), 1 messages imported'
    """
    ordered, orphans = order_parents_first(sessions, lambda sid: store.get_session(sid) is not None)
    report.orphans.extend(orphans)
    for sid in orphans:
        report.problems.append(f"session {sid}: parent missing, imported as a root")
    items = iter(
        progress(ordered, total=len(ordered), desc=f"{report.kind} import", enabled=show_progress)
    )
    # A transaction per group of sessions: one commit and one index pass per group (see
    # SessionBackend.transaction); a crash loses at most the group, which a re-run adds again.
    forgotten: set[str] = set()
    for group in _groups(items):
        _write_group(store, group, report, forgotten, reimport=reimport, retry=retry or _RETRY)
    return report


def _groups(sessions: Iterable[ImportSession]) -> Iterator[list[ImportSession]]:
    """Sessions in groups of at most :data:`SESSIONS_PER_TRANSACTION`, each ending once it
    holds :data:`MESSAGES_PER_TRANSACTION` messages (pure).

    Example:
        >>> s = [ImportSession(str(n), "x", [("k", {})] * 1500) for n in range(3)]
        >>> [len(g) for g in _groups(s)]
        [2, 1]
    """
    group: list[ImportSession] = []
    size = 0
    for session in sessions:
        group.append(session)
        size += len(session.messages)
        if len(group) >= SESSIONS_PER_TRANSACTION or size >= MESSAGES_PER_TRANSACTION:
            yield group
            group, size = [], 0
    if group:
        yield group


def _write_group(
    store: SessionBackend,
    group: Sequence[ImportSession],
    report: ImportReport,
    forgotten: set[str],
    *,
    reimport: bool,
    retry: WriteRetry,
) -> None:
    """One group in one transaction, tried again while the store is busy (a failed attempt
    rolled back whole: the ledger, the report and ``forgotten`` are as they were before it)."""

    def attempt() -> tuple[ImportReport, set[str]]:
        draft, left_out = copy.deepcopy(report), set(forgotten)
        with store.transaction():
            for session in group:
                if session.parent_session_id in left_out:
                    left_out.add(session.id)  # below a forgotten session: forgotten with it
                    draft.forgotten.append(session.id)
                elif not _write_one(store, session, draft, reimport=reimport):
                    left_out.add(session.id)
        return draft, left_out

    done, left_out = retry.call(attempt, what=f"{report.kind} import into {store.describe()}")
    vars(report).update(vars(done))
    forgotten.update(left_out)


def fields_to_write(session: ImportSession, existing: Session | None) -> dict[str, Any]:
    """The session fields an import writes (pure): all it has for a new session; for one the
    store holds already, only the fields that are empty there.

    A re-run never rewrites what it did not import: a source, title, model, owner, parent or
    end given earlier (by another import, the recorder or your code) stays as it is; the one
    exception is ``started_at``, which moves earlier when older messages arrive.

    Example:
        >>> from langchain_session_recall.models import Session
        >>> held = Session(id="s1", source="helpdesk", started_at=10.0, title="Refund")
        >>> fields_to_write(ImportSession("s1", "import", model="gpt", title="x"), held)
        {'model': 'gpt'}
    """
    given: dict[str, Any] = {
        "source": session.source,
        "parent_session_id": session.parent_session_id,
        "model": session.model,
        "title": session.title,
        "user_id": session.user_id,
        "started_at": session.started_at,
        "end_reason": session.end_reason,
    }
    if existing is None:
        return {k: v for k, v in given.items() if v is not None}
    fields = {k: v for k, v in given.items() if v is not None and getattr(existing, k) is None}
    if session.started_at is not None and session.started_at < existing.started_at:
        fields["started_at"] = session.started_at
    if existing.ended_at is not None:
        fields.pop("end_reason", None)  # the end was recorded already: keep it whole
    return fields


def _write_one(
    store: SessionBackend, session: ImportSession, report: ImportReport, *, reimport: bool
) -> bool:
    """One session's row, new messages (with ledger rows) and end time; ``False`` when the
    session was forgotten and is left out."""
    existing = store.get_session(session.id)
    known = store.imported_keys(report.kind, session.id)
    if existing is None and known:  # imported before, gone since: forgotten on purpose
        if not reimport:
            report.forgotten.append(session.id)
            return False
        store.release_forgotten(report.kind, session.id)
        known = store.imported_keys(report.kind, session.id)
    fields = fields_to_write(session, existing)
    try:
        if existing is None or fields:  # (``source`` is never among an existing one's fields)
            store.add_session(session.id, **fields)
    except StoreBusyError:
        raise  # not the session's fault: the group is tried again
    except SessionRecallError as exc:  # e.g. a parent link that would make a cycle
        report.skip("session rejected by the store", f"session {session.id}: {exc}")
        return True
    fresh = [(k, m) for k, m in session.messages if k not in known]
    report.already_imported += len(session.messages) - len(fresh)
    if fresh:
        try:
            ids = store.import_messages(session.id, fresh, source_kind=report.kind)
        except StoreBusyError:
            raise
        except SessionRecallError as exc:
            # One bad message would sink the batch: retry one by one, keep the good ones.
            ids = []
            for key, message in fresh:
                try:
                    ids += store.import_messages(
                        session.id, [(key, message)], source_kind=report.kind
                    )
                except SessionRecallError as one:
                    report.skip("invalid message", f"session {session.id} [{key}]: {one}")
            logger.debug("batch of session %s retried one by one: %s", session.id, exc)
        report.messages += len(ids)
        if ids:
            report.undated.update(
                m[UNDATED] for _, m in fresh if isinstance(m, Mapping) and m.get(UNDATED)
            )
    if session.ended_at is not None and (existing is None or existing.ended_at is None):
        store.end_session(session.id, ended_at=session.ended_at, end_reason=session.end_reason)
    report.sessions += 1
    report.new_sessions += 0 if existing is not None else 1
    return True
