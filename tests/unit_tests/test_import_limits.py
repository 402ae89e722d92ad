"""Importers against hostile files: huge lines (issue 18 §1), symlinks and special files (§2)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from langchain_session_recall.backends.sqlite.store import SessionStore
from langchain_session_recall.importers import ImportSourceError, import_claude_code, import_jsonl
from langchain_session_recall.importers.base import ImportReport, bounded_lines

LINE = '{"role": "user", "content": "where is the nginx config?"}\n'


class CountingReader(io.BytesIO):
    """A binary file that remembers the largest read it was asked for."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.largest = 0

    def read(self, size: int | None = -1) -> bytes:
        out = super().read(size)
        self.largest = max(self.largest, len(out))
        return out

    def readline(self, size: int | None = -1) -> bytes:
        out = super().readline(size)
        self.largest = max(self.largest, len(out))
        return out


def test_a_line_over_the_cap_is_skipped_and_reported_and_numbering_is_kept() -> None:
    data = (LINE + "x" * 5000 + "\n" + LINE + "y" * 3000).encode()
    reader = CountingReader(data)
    report = ImportReport("jsonl")
    lines = list(bounded_lines(reader, name="a.jsonl", report=report, max_line_bytes=1000))
    assert lines == [LINE, "", LINE, ""]  # too-long lines keep their number, as blanks
    assert report.problems == [
        "a.jsonl:2: line too long (over 1000 bytes)",
        "a.jsonl:4: line too long (over 1000 bytes)",
    ]
    assert reader.largest <= 1001  # never more than the cap (+1 to tell) in one piece


def test_lines_up_to_the_cap_are_read_whole() -> None:
    line = '{"role": "user", "content": "' + "z" * 900 + '"}'
    report = ImportReport("jsonl")
    lines = list(
        bounded_lines(io.BytesIO(line.encode()), name="a", report=report, max_line_bytes=len(line))
    )
    assert lines == [line] and not report.skipped


@pytest.mark.parametrize("importer", [import_jsonl, import_claude_code])
def test_importers_skip_a_huge_line_and_keep_the_rest(tmp_path: Path, importer: Any) -> None:
    entry = {
        "type": "user",
        "uuid": "u1",
        "sessionId": "s1",
        "timestamp": "2026-11-03T10:00:00Z",
        "message": {"role": "user", "content": "where is the nginx config?"},
    }
    good = json.dumps(entry) + "\n" if importer is import_claude_code else LINE
    f = tmp_path / "s1.jsonl"
    f.write_text(good + '{"content": "' + "a" * 10_000 + '"}\n', encoding="utf-8")
    report = importer(SessionStore(":memory:"), f, max_line_bytes=4096)
    assert report.messages == 1
    assert report.skipped == {"line too long (over 4096 bytes)": 1}
    assert report.problems == ["s1.jsonl:2: line too long (over 4096 bytes)"]


# ------------------------------------------------------------------ symlinks and special files


def _within(seconds: float, call: Any) -> Any:
    """Run ``call`` in a thread; fail (instead of hanging the suite) if it never returns."""
    import threading

    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the import blocked"
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """logs/ holding a.jsonl, a symlink to a file outside, and a link to a.jsonl inside."""
    outside = tmp_path / "secret.jsonl"
    outside.write_text('{"role": "user", "content": "private salary talk"}\n', encoding="utf-8")
    root = tmp_path / "logs"
    root.mkdir()
    (root / "a.jsonl").write_text(LINE, encoding="utf-8")
    (root / "leak.jsonl").symlink_to(outside)
    (root / "same.jsonl").symlink_to(root / "a.jsonl")
    (root / "passwd.jsonl").symlink_to("/etc/passwd")
    (root / "sub").symlink_to(tmp_path, target_is_directory=True)
    return root


def test_a_directory_import_reads_no_file_outside_it_by_default(tree: Path) -> None:
    store = SessionStore(":memory:")
    report = import_jsonl(store, tree)
    assert report.messages == 1  # a.jsonl once (same.jsonl is the same file)
    assert store.all_session_ids() == ["a"]
    assert sorted(report.problems) == [
        "leak.jsonl: symlink out of the imported directory (use follow_symlinks)",
        "passwd.jsonl: symlink out of the imported directory (use follow_symlinks)",
        "sub: symlink out of the imported directory (use follow_symlinks)",
    ]
    assert "not valid JSON" not in report.skipped  # /etc/passwd was never read


def test_follow_symlinks_opts_in(tree: Path) -> None:
    (tree / "passwd.jsonl").unlink()
    store = SessionStore(":memory:")
    report = import_jsonl(store, tree, follow_symlinks=True)
    assert "secret" in store.all_session_ids()
    assert report.messages == 2 and not report.skipped  # the sub/ loop is walked once


@pytest.mark.parametrize("importer", [import_jsonl, import_claude_code])
def test_a_fifo_or_a_device_is_not_a_regular_file(tmp_path: Path, importer: Any) -> None:
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/zero")):
        with pytest.raises(ImportSourceError, match="not a regular file"):
            _within(20, lambda t=target: importer(SessionStore(":memory:"), t))
    with pytest.raises(ImportSourceError, match="no such file or directory"):
        importer(SessionStore(":memory:"), tmp_path / "missing.jsonl")


def test_a_fifo_inside_a_directory_is_skipped_without_blocking(tmp_path: Path) -> None:
    import os

    (tmp_path / "a.jsonl").write_text(LINE, encoding="utf-8")
    os.mkfifo(tmp_path / "pipe.jsonl")
    report = _within(20, lambda: import_jsonl(SessionStore(":memory:"), tmp_path))
    assert report.messages == 1
    assert report.problems == ["pipe.jsonl: not a regular file"]


@pytest.mark.parametrize("kind", ["hermes", "langgraph"])
def test_database_importers_say_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    from langchain_session_recall.importers import IMPORTERS

    for target in (Path("/dev/zero"), tmp_path):
        with pytest.raises(ImportSourceError, match="not a regular file"):
            IMPORTERS[kind](SessionStore(":memory:"), target)


class Zeros(io.RawIOBase):
    """``size`` NUL bytes without a newline, made as they are read (nothing held)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


@pytest.mark.parametrize("seekable", [True, False], ids=["file", "stream"])
def test_memory_stays_bounded_on_a_line_far_over_the_cap(tmp_path: Path, seekable: bool) -> None:
    import tracemalloc

    size = 48 << 20
    if seekable:
        sparse = tmp_path / "sparse.jsonl"
        with sparse.open("wb") as fh:
            fh.truncate(size)  # a hole: reads as NULs, takes no disk
        reader: Any = sparse.open("rb")
    else:
        reader = io.BufferedReader(Zeros(size), buffer_size=1 << 16)  # not seekable
    report = ImportReport("jsonl")
    tracemalloc.start()
    try:
        with reader:
            lines = list(bounded_lines(reader, name="z", report=report, max_line_bytes=1 << 20))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert lines == [""] and report.skipped_total == 1
    assert peak < 4 << 20, f"peak {peak:,} bytes for a 48 MB line with a 1 MB cap"


def test_import_jsonl_of_a_file_far_over_the_default_cap_reports_it_too_long(
    tmp_path: Path,
) -> None:
    # A 1 GB sparse file took 2.2 GB of memory: the whole line was read before being judged.
    import tracemalloc

    sparse = tmp_path / "huge.jsonl"
    with sparse.open("wb") as fh:
        fh.write(LINE.encode())
        fh.truncate(len(LINE) + (160 << 20))  # then 160 MB of NULs without a newline
    tracemalloc.start()
    try:
        report = import_jsonl(SessionStore(":memory:"), sparse)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.messages == 1
    assert report.problems == ["huge.jsonl:2: line too long (over 64 MB)"]
    assert peak < 160 << 20, f"peak {peak:,} bytes: the line was held whole"


_JSON_TEXTS = [
    '{"a": 1}',
    '{"a": 1}\n',
    '{"a": 1}\r\n',
    ' {"a": 1}',
    '{"a": 1} ',
    '{"a": 1} x',
    '{"a": 1}\n\n',
    '{"a": 1}{"b": 2}',
    "\ufeff{}",
    "",
    "\n",
    "nope",
    "[1, 2.5, null, true]",
    '"text"',
    "7",
    '{"a": NaN, "b": -Infinity}',
    '{"big": 123456789012345678901234567890, "tiny": 5e-324, "huge": 1e400}',
    '{"a": "\\ud800", "b": "\\ud83d\\ude00", "c": "\\u0000"}',
    '{"a": 1, "a": 2}',
    '{"a": [1, 2',
    "[" * 100_000,
]


@pytest.mark.parametrize("text", _JSON_TEXTS, ids=range(len(_JSON_TEXTS)))
def test_decode_json_gives_what_json_loads_gives(text: str) -> None:
    """The line importers' decoder calls json's scanner directly: whatever the text, it
    returns what ``json.loads`` returns, or raises what it raises (same type, same message)."""
    from langchain_session_recall.importers.lines import decode_json

    def outcome(decode: Any) -> tuple[str, str]:
        try:
            return "value", repr(decode(text))
        except (ValueError, RecursionError) as exc:
            return type(exc).__name__, str(exc)

    assert outcome(decode_json) == outcome(json.loads)
