"""Reading an appended JSON Lines file from where the last import stopped.

An importer that can go on from the middle of a file (its lines carry no state a later line
needs, or that state is small enough to keep) records a :class:`ResumePoint` per file in the
store's import state: the byte offset just after the last *complete* line it read, how many
lines that is, a fingerprint of the bytes read (:func:`fingerprint`: the first 4 KiB and the
4 KiB that end at the offset) and what its parser needs to go on. The next import of the file
checks it (:func:`still_appended`): a file that is at least as long and begins with the same
bytes was only appended to, and is read from the offset (:class:`LineCursor`); any other file
(rewritten, truncated, replaced) is read whole, as if it were new.

A last line without its newline is being written: it is read (imported when it is already a
whole JSON value, left alone when it is not, without being reported) but never counted as
read, so the next import reads it again, whole; the import ledger keeps what it imported once.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from langchain_session_recall.errors import InvalidArgumentError
from langchain_session_recall.importers.lines import MAX_LINE_BYTES, size_text, skip_line
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.messages import storable_text

if TYPE_CHECKING:
    from langchain_session_recall.backends.base import SessionBackend

__all__ = [
    "RESUME_PREFIX",
    "FilePoints",
    "LineCursor",
    "ResumePoint",
    "fingerprint",
    "line_cursor",
    "point_at",
    "resume_key",
    "still_appended",
]

RESUME_PREFIX = "resume:"
"""Prefix of the import state keys holding resume points (``resume:<kind>:<file>``)."""
_PROBE = 4096  # bytes hashed at each end of what was read
_VERSION = 1
_SKIP_PIECE = 1024 * 1024


def resume_key(kind: str, file: Path) -> str:
    """The import state key of ``file``'s resume point for importer ``kind`` (its absolute
    path: an import of the file alone and one of its folder share it).

    Example:
        >>> resume_key("codex", Path("/home/ana/.codex/sessions/r.jsonl"))
        'resume:codex:/home/ana/.codex/sessions/r.jsonl'
    """
    return f"{RESUME_PREFIX}{kind}:{file.absolute()}"


@dataclass
class ResumePoint:
    """Where an import stopped reading one file, and what its parser needs to go on.

    Example:
        >>> p = ResumePoint(120, 3, "ab", {"thread": "t1"}, (130, 1))
        >>> ResumePoint.loads(p.dumps()) == p
        True
        >>> ResumePoint.loads("not json") is None
        True
    """

    offset: int
    """Bytes read: the end of the last complete line."""
    line: int
    """Lines read (the number of the line that ends at ``offset``)."""
    digest: str
    """:func:`fingerprint` of the file at ``offset``."""
    state: dict[str, Any] = field(default_factory=dict)
    """The parser's own state at ``offset`` (JSON-ready)."""
    mark: tuple[int, int] | None = None
    """The file's size and modification time (ns) when it was read: a file that still has
    them was not written to since, and is not even opened."""

    def dumps(self) -> str:
        """The point as JSON, to record in the store."""
        data = {"v": _VERSION, "offset": self.offset, "line": self.line, "digest": self.digest}
        mark = {"mark": list(self.mark)} if self.mark is not None else {}
        return json.dumps({**data, **mark, "state": self.state}, separators=(",", ":"))

    @classmethod
    def loads(cls, raw: str | None) -> ResumePoint | None:
        """A point read back from the store; ``None`` when there is none or it is not one
        this version wrote (the file is then read whole)."""
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            return None
        if not isinstance(data, dict) or data.get("v") != _VERSION:
            return None
        offset, line, digest, state = (data.get(k) for k in ("offset", "line", "digest", "state"))
        if not (
            isinstance(offset, int)
            and isinstance(line, int)
            and isinstance(digest, str)
            and isinstance(state, dict)
            and offset >= 0
            and line >= 0
        ):
            return None
        mark = data.get("mark")
        pair: tuple[int, int] | None = None
        if isinstance(mark, list) and len(mark) == 2 and all(isinstance(m, int) for m in mark):
            pair = (mark[0], mark[1])
        return cls(offset, line, digest, state, pair)


def fingerprint(fh: BinaryIO, offset: int) -> str:
    """A hash of the first 4 KiB of ``fh`` and of the 4 KiB that end at ``offset`` (fewer
    when the file is shorter), with the offset: what tells a file that was appended to from
    one rewritten since. Moves the file position.

    Example:
        >>> import io
        >>> a = fingerprint(io.BytesIO(b'{"a": 1}\\n{"b": 2}\\n'), 9)
        >>> a == fingerprint(io.BytesIO(b'{"a": 1}\\n{"c": 3}\\n'), 9)
        True
        >>> a == fingerprint(io.BytesIO(b'{"x": 1}\\n{"b": 2}\\n'), 9)
        False
    """
    digest = hashlib.blake2b(str(offset).encode(), digest_size=16)
    fh.seek(0)
    digest.update(fh.read(min(offset, _PROBE)))
    start = max(0, offset - _PROBE)
    fh.seek(start)
    digest.update(fh.read(offset - start))
    return digest.hexdigest()


def still_appended(fh: BinaryIO, point: ResumePoint) -> bool:
    """Whether the plain file ``fh`` still holds what was read up to ``point`` (it is at
    least that long, and its :func:`fingerprint` there is the same), i.e. was only appended
    to; leaves ``fh`` at the point's offset when it was.

    Example:
        >>> import io
        >>> fh = io.BytesIO(b'{"a": 1}\\n')
        >>> point = ResumePoint(9, 1, fingerprint(fh, 9))
        >>> still_appended(io.BytesIO(b'{"a": 1}\\n{"b": 2}\\n'), point)
        True
        >>> still_appended(io.BytesIO(b'{"a": 2}\\n{"b": 2}\\n'), point)
        False
    """
    try:
        size = os.fstat(fh.fileno()).st_size
    except (AttributeError, OSError, ValueError):  # not a file on disk (io.BytesIO)
        size = fh.seek(0, os.SEEK_END)
    if size < point.offset or fingerprint(fh, point.offset) != point.digest:
        return False
    fh.seek(point.offset)
    return True


class LineCursor:
    """The lines of a plain file from a byte offset, as
    :func:`~langchain_session_recall.importers.lines.bounded_lines` reads them (UTF-8, a line
    over ``max_line_bytes`` reported and yielded as ``""``), keeping where the last complete
    line ends (``offset``, ``line``). A last line without its newline is yielded only when it
    is a whole JSON value (it is then imported; otherwise it is still being written, and is
    neither yielded nor reported); either way it is not counted as read, and
    ``partial_line`` gives its number.

    Example:
        >>> import io
        >>> fh = io.BytesIO(b'{"a": 1}\\n{"b": 2}\\n{"c": ')
        >>> cursor = LineCursor(fh, name="f.jsonl", report=ImportReport("jsonl"))
        >>> list(cursor), cursor.offset, cursor.line, cursor.partial_line
        (['{"a": 1}\\n', '{"b": 2}\\n'], 18, 2, 3)
    """

    def __init__(
        self,
        fh: BinaryIO,
        *,
        name: str,
        report: ImportReport,
        max_line_bytes: int = MAX_LINE_BYTES,
        offset: int = 0,
        line: int = 0,
    ) -> None:
        if max_line_bytes < 1:
            raise InvalidArgumentError("max_line_bytes must be at least 1")
        self.fh, self.name, self.report = fh, name, report
        self.max_line_bytes = max_line_bytes
        self.offset, self.line = offset, line
        self.partial_line: int | None = None
        self.before_partial: Callable[[], None] | None = None
        """Called just before a last line without its newline is yielded (a parser keeps
        its state as of the lines read)."""

    def __iter__(self) -> Iterator[str]:
        fh, limit = self.fh, self.max_line_bytes
        while raw := fh.readline(limit + 1):
            number = self.line + 1
            if raw.endswith(b"\n"):
                self.offset += len(raw)
                self.line = number
                yield raw.decode("utf-8", errors="replace")
            elif len(raw) > limit:  # too long: read past it, if its end is there yet
                if not skip_line(fh, min(_SKIP_PIECE, limit + 1)):
                    self.partial_line = number
                    return
                self.offset, self.line = fh.tell(), number
                self.report.skip(
                    f"line too long (over {size_text(limit)})", f"{self.name}:{number}"
                )
                yield ""
            else:  # the last line, its newline not written (yet)
                self.partial_line = number
                text = raw.decode("utf-8", errors="replace")
                if _whole_json(text):
                    if self.before_partial is not None:
                        self.before_partial()
                    yield text
                return


def _whole_json(text: str) -> bool:
    """Whether ``text`` is one whole JSON value (a line cut short while written is not)."""
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def point_at(fh: BinaryIO, cursor: LineCursor, state: dict[str, Any]) -> ResumePoint:
    """Where the read of the plain file ``fh`` by ``cursor`` stopped, with the parser's
    ``state`` there (moves the file position)."""
    info = os.fstat(fh.fileno())
    digest = fingerprint(fh, cursor.offset)
    mark = (info.st_size, info.st_mtime_ns)
    return ResumePoint(cursor.offset, cursor.line, digest, state, mark)


def line_cursor(
    file: Path,
    fh: BinaryIO,
    point: ResumePoint | None,
    *,
    keep_point: bool,
    report: ImportReport,
    max_line_bytes: int,
) -> LineCursor | None:
    """A :class:`LineCursor` over ``fh`` from ``point`` (from the start without one) when
    points are kept (``keep_point``) and ``file`` is a plain ``.jsonl`` file, else ``None``
    (read it with a plain reader). Needs no store: a worker process reads with it too."""
    if not keep_point or file.suffix != ".jsonl":
        return None
    return LineCursor(
        fh,
        name=storable_text(file.name),
        report=report,
        max_line_bytes=max_line_bytes,
        offset=point.offset if point is not None else 0,
        line=point.line if point is not None else 0,
    )


_ONE_BY_ONE = 32  # up to this many files, their points are read one by one (else all at once)


class FilePoints:
    """The resume points of the files one import of ``kind`` reads: those recorded before
    (:meth:`check`-ed against the files), and those to record once the import is written
    (:meth:`save`). Disabled (``enabled=False``): every file is read whole, from a plain
    reader, and nothing is recorded. Only plain ``.jsonl`` files are resumed (a compressed
    one is read whole). An importer whose state makes a point unusable says so in
    :meth:`usable`."""

    def __init__(
        self, store: SessionBackend, kind: str, files: Sequence[Path], *, enabled: bool
    ) -> None:
        self.kind, self.enabled = kind, enabled
        self.before: dict[str, str] = {}  # (as recorded: each is decoded when its file is read)
        if enabled and len(files) > _ONE_BY_ONE:
            self.before = store.read_import_states(f"{RESUME_PREFIX}{kind}:")
        elif enabled:
            keys = [resume_key(kind, f) for f in files]
            self.before = {k: raw for k in keys if (raw := store.read_import_state(k)) is not None}
        self.valid: dict[Path, ResumePoint] = {}
        self.after: dict[str, ResumePoint] = {}
        self.still: dict[Path, ResumePoint] = {}
        """Files not written to since their point was recorded: not opened, not read."""

    def usable(self, point: ResumePoint) -> bool:
        """Whether the parser can go on from ``point`` (its state says); any point can here."""
        return True

    def unchanged(self, file: Path) -> ResumePoint | None:
        """``file``'s point when the file still has the size and time it had when read (it
        need not be opened: nothing was appended), else ``None`` (:meth:`check` it)."""
        raw = self.before.get(resume_key(self.kind, file)) if self.enabled else None
        point = ResumePoint.loads(raw)
        if point is None or point.mark is None or not self.usable(point):
            return None
        try:
            info = file.stat()
        except OSError:
            return None
        if (info.st_size, info.st_mtime_ns) != point.mark or file.suffix != ".jsonl":
            return None
        del self.before[resume_key(self.kind, file)]
        self.still[file] = point
        return point

    def check(self, file: Path, fh: BinaryIO) -> ResumePoint | None:
        """The point to go on from in ``file`` (open, at its start), when it has one and was
        only appended to since; ``fh`` is then at the point, else at its start again."""
        point = ResumePoint.loads(self.before.pop(resume_key(self.kind, file), None))
        if point is None or file.suffix != ".jsonl" or not self.usable(point):
            return None
        if still_appended(fh, point):
            self.valid[file] = point
            return point
        fh.seek(0)
        return None

    def go_on(self, file: Path, fh: BinaryIO) -> ResumePoint | None:
        """The point :meth:`check` found in ``file``, checked again now that it is read
        (``fh`` left at it), or ``None``: read it whole, from its start."""
        point = self.valid.get(file)
        if point is None:
            return None
        if still_appended(fh, point):
            return point
        fh.seek(0)
        return None

    def cursor(
        self,
        file: Path,
        fh: BinaryIO,
        point: ResumePoint | None,
        *,
        report: ImportReport,
        max_line_bytes: int,
    ) -> LineCursor | None:
        """A :class:`LineCursor` over a plain file when points are kept (from ``point``),
        else ``None`` (read it with a plain reader, as before): :func:`line_cursor`."""
        return line_cursor(
            file, fh, point, keep_point=self.enabled, report=report, max_line_bytes=max_line_bytes
        )

    def record(self, file: Path, fh: BinaryIO, cursor: LineCursor, state: dict[str, Any]) -> str:
        """Keep where the read of ``file`` stopped, with the parser's ``state`` there; returns
        its key."""
        return self.keep(file, point_at(fh, cursor, state))

    def keep(self, file: Path, point: ResumePoint) -> str:
        """Keep ``point`` (:func:`point_at`, taken where it was read: a worker process) as
        where the read of ``file`` stopped; returns its key."""
        key = resume_key(self.kind, file)
        self.after[key] = point
        return key

    def save(self, store: SessionBackend) -> None:
        """Record the points of the files read (after their messages were written)."""
        store.write_import_states({key: point.dumps() for key, point in self.after.items()})
