"""Reading a source line by line, each line checked on its own: bounded line length, JSON
objects, identifiers. A bad line is skipped and reported with its number (:class:`BadEntry`,
:meth:`~langchain_session_recall.importers.report.ImportReport.skip`); the rest imports."""

from __future__ import annotations

import json
import json.scanner
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, BinaryIO

from langchain_session_recall.dates import to_timestamp
from langchain_session_recall.errors import InvalidArgumentError
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.messages import storable_text

__all__ = [
    "MAX_LINE_BYTES",
    "BadEntry",
    "bounded_lines",
    "decode_json",
    "entry_time",
    "identifier",
    "json_object",
    "json_objects",
    "size_text",
    "skip_line",
]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest line a line-based importer reads (64 MB): a longer one is skipped and reported
("line too long"), read past in pieces of at most 1 MB, so memory stays bounded whatever the
file holds (a 1 GB file without a newline included)."""
_SKIP_PIECE = 1024 * 1024


class BadEntry(ValueError):
    """One line or entry of a source that cannot be imported; its message says why. The
    importers skip it, report it with its line number and go on."""


def size_text(n: int) -> str:
    """A line limit as the reports give it: ``64 MB``, ``20 bytes``."""
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
            skip_line(fh, piece)
            report.skip(f"line too long (over {size_text(max_line_bytes)})", f"{name}:{number}")
            yield ""
            continue
        yield line.decode("utf-8", errors="replace")


_scan: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(
    json.JSONDecoder()  # type: ignore[arg-type]  # (typeshed: the context it reads)
)
"""The scanner :func:`json.loads` runs (in C), called without the layers around it."""


def decode_json(text: str) -> Any:
    """``json.loads(text)``, a third faster for a line holding one JSON value (a newline
    after it at most): the decoder's scanner is called directly, without the checks
    ``json.loads`` wraps around it. Anything else (spaces around the value, junk after it,
    no value) goes to ``json.loads``, so the result, or the error raised, is always its.

    Example:
        >>> decode_json('{"a": [1, 2.5, null]}\\n'), decode_json(" 7 ")
        ({'a': [1, 2.5, None]}, 7)
        >>> decode_json('{"a": 1} x')
        Traceback (most recent call last):
        ...
        json.decoder.JSONDecodeError: Extra data: line 1 column 10 (char 9)
    """
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        return json.loads(text)  # (it says why)
    if end == len(text) or text[end:] == "\n":
        return value
    return json.loads(text)


def skip_line(fh: BinaryIO, piece: int) -> bool:
    """Read past the rest of a line, ``piece`` bytes at a time; ``False`` when the file ended
    before the line did."""
    if not fh.seekable():
        while rest := fh.readline(piece):
            if rest.endswith(b"\n"):
                return True
        return False
    # read() + find() runs about ten times faster than readline() pieces; then step back to
    # just after the newline.
    while chunk := fh.read(piece):
        end = chunk.find(b"\n")
        if end >= 0:
            fh.seek(end + 1 - len(chunk), os.SEEK_CUR)
            return True
    return False


def json_objects(
    lines: Iterable[str], *, name: str, report: ImportReport, first: int = 1
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each line holding a JSON object; blank lines are passed
    over, every other line is skipped and reported (:func:`json_object`). ``first`` is the
    number of the first line (a file read from the middle).

    Example:
        >>> r = ImportReport("jsonl")
        >>> list(json_objects(['{"a": 1}', "", "[" * 100_000, "[1]"], name="f.jsonl", report=r))
        [(1, {'a': 1})]
        >>> r.problems
        ['f.jsonl:3: nested too deeply', 'f.jsonl:4: not a JSON object']
    """
    for number, line in enumerate(lines, first):
        if not line or line.isspace():
            continue
        obj = json_object(line, number, name, report)
        if obj is not None:
            yield number, obj


def json_object(line: str, number: int, name: str, report: ImportReport) -> dict[str, Any] | None:
    """The JSON object line ``number`` of ``name`` holds; ``None`` when it holds anything
    else, skipped and reported: not valid JSON, nested too deeply for Python's parser (a line
    of 100,000 ``[``), not an object. (A blank line is its caller's to pass over.)

    Example:
        >>> r = ImportReport("jsonl")
        >>> json_object('{"a": 1}\\n', 1, "f.jsonl", r), json_object("[1]", 2, "f.jsonl", r)
        ({'a': 1}, None)
        >>> r.problems
        ['f.jsonl:2: not a JSON object']
    """
    try:
        obj = decode_json(line)
    except ValueError:
        report.skip("not valid JSON", f"{name}:{number}")
        return None
    except RecursionError:
        report.skip("nested too deeply", f"{name}:{number}")
        return None
    if not isinstance(obj, dict):  # (decoded JSON: its objects are dicts)
        report.skip("not a JSON object", f"{name}:{number}")
        return None
    return obj


def entry_time(value: Any) -> float | None:
    """Unix seconds of an entry's time: a number or an ISO string; ``None`` when absent.

    Raises:
        BadEntry: not a finite number, not an ISO date.

    Example:
        >>> entry_time("2026-11-03T10:00:00Z"), entry_time(None)
        (1793700000.0, None)
    """
    if value is None or isinstance(value, bool):
        return None
    try:
        return to_timestamp(value if isinstance(value, int | float) else str(value))
    except ValueError:
        raise BadEntry("bad timestamp") from None


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
        langchain_session_recall.importers.lines.BadEntry: session_id is not a string
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
