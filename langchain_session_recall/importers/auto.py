"""``import auto`` and ``sync``: every agent's history found under a home directory
(:func:`~langchain_session_recall.importers.discovery.discover_sources`) imported in one go,
and again cheaply.

After importing a source, the size and modification time of each file it read is recorded in
the store (:meth:`~langchain_session_recall.backends.base.SessionBackend.write_import_state`).
:func:`sync` compares them first: an unchanged source is not opened at all; of a changed one
only the transcripts that changed are read again (the import ledger writes only the messages
it has not seen; Codex's together, so that a new sub-agent finds its new parent and a new
thread its name), or the whole source when a database or an index changed. A Codex rollout
that was only appended to is read from where its last import stopped
(:mod:`~langchain_session_recall.importers.codex_resume`); other transcripts are read whole.
Sessions stay in the store when the agent deletes its files: nothing here deletes a session.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.core.text import plural
from langchain_session_recall.errors import (
    ImportSourceError,
    MissingFeatureError,
    ReadLimitError,
)
from langchain_session_recall.importers.claude_code import import_claude_code
from langchain_session_recall.importers.codex import import_codex
from langchain_session_recall.importers.cursor import import_cursor
from langchain_session_recall.importers.discovery import (
    AgentSource,
    discover_sources,
    retention_warnings,
)
from langchain_session_recall.importers.gemini import import_gemini
from langchain_session_recall.importers.hermes import import_hermes
from langchain_session_recall.importers.opencode import import_opencode
from langchain_session_recall.importers.report import ImportReport, progress_bar
from langchain_session_recall.importers.sources import open_files

__all__ = ["AutoImport", "SourceImport", "aimport_auto", "async_sync", "import_auto", "sync"]

_IMPORT = {
    "hermes": import_hermes,
    "claude-code": import_claude_code,
    "codex": import_codex,
    "gemini": import_gemini,
    "opencode": import_opencode,
    "cursor": import_cursor,
}
_RESUMING = frozenset({"codex"})
"""Importers that record where each file's read stopped and read an appended file from
there (``resume=True``)."""
_TOGETHER = frozenset({"codex", "claude-code"})
"""Importers given a source's changed files at once, with its path (``files=``): what one
file needs from another (a sub-agent its parent's, whichever sorts first; a new thread its
name in the index; a Claude Code session the one it continues) is found as in a whole
import."""
_WARNED = "sync:warned:"  # import state key: the retention last warned about, per agent

Marks = dict[str, list[int]]
"""``{file: [size, mtime_ns]}``: what a source's files were when last imported."""


@dataclass
class SourceImport:
    """What ``import auto`` / ``sync`` did with one source.

    ``report`` is its importer's report (``None``: not imported, because nothing changed or
    it was a dry run); ``files_read`` how many of its files were read; ``error`` why the
    source could not be imported at all (the other sources are imported still).
    """

    source: AgentSource
    report: ImportReport | None = None
    files_read: int = 0
    error: str | None = None

    @property
    def unchanged(self) -> bool:
        """Nothing to read: every file as it was at the last import."""
        return self.report is None and self.error is None and self.files_read == 0

    def summary(self) -> str:
        """One line: the importer's summary, or why nothing was imported."""
        if self.error is not None:
            return f"{self.source.kind}: not imported: {self.error}"
        if self.report is None:
            return f"{self.source.kind}: unchanged"
        return self.report.summary()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        agent, _, sessions, size = self.source.row()
        return {
            "kind": self.source.kind,
            "agent": agent,
            "paths": [str(p) for p in self.source.paths],
            "sessions": sessions,
            "bytes": size,
            "files_read": self.files_read,
            "error": self.error,
            "report": None if self.report is None else self.report.to_dict(),
        }


@dataclass
class AutoImport:
    """The outcome of :func:`import_auto` or :func:`sync`: one :class:`SourceImport` per
    source found, and the retention warnings not given before.

    Example:
        >>> AutoImport([], dry_run=True).summary()
        'no agent history found'
    """

    sources: list[SourceImport]
    warnings: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def partial(self) -> bool:
        """Some input was skipped, or a source could not be imported."""
        return any(
            s.error is not None
            or (s.report is not None and (s.report.skipped_total or s.report.orphans))
            for s in self.sources
        )

    @property
    def problems(self) -> list[str]:
        """The first skipped items of every source, each prefixed with its kind."""
        return [
            f"{s.source.kind}: {p}"
            for s in self.sources
            if s.report is not None
            for p in s.report.problems
        ]

    def summary(self) -> str:
        """What was done, a line per source that was read (or could not be)."""
        if not self.sources:
            return "no agent history found"
        if self.dry_run:
            return f"found {plural(len(self.sources), 'source')} (dry run: nothing imported)"
        lines = [s.summary() for s in self.sources if not s.unchanged]
        still = sum(1 for s in self.sources if s.unchanged)
        if still:
            lines.append(f"{plural(still, 'source')} unchanged")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for ``--json``)."""
        return {
            "dry_run": self.dry_run,
            "sources": [s.to_dict() for s in self.sources],
            "warnings": list(self.warnings),
        }


def import_auto(
    store: SessionBackend,
    home: str | os.PathLike[str] | None = None,
    *,
    dry_run: bool = False,
    show_progress: bool | None = None,
    reimport: bool = False,
) -> AutoImport:
    """Import every supported agent's history found under ``home`` (default: the user's
    home directory) into ``store``: each source read whole, the import ledger keeping out
    what is there already. ``dry_run`` only finds and lists them. One progress bar (on a
    terminal, or ``show_progress=True``) counts the sessions of every source.

    Records each file's size and time, so that a :func:`sync` after it reads only what
    changed. A source that cannot be read is reported in its :class:`SourceImport`
    (``error``) and the others are imported.

    Example:
        >>> import json, tempfile, pathlib
        >>> home = pathlib.Path(tempfile.mkdtemp())
        >>> chats = home / ".gemini" / "tmp" / "proj" / "chats"
        >>> chats.mkdir(parents=True)
        >>> lines = [{"sessionId": "s1", "startTime": "2026-11-03T10:00:00Z"},
        ...          {"id": "m1", "type": "user", "content": [{"text": "why is CI red?"}]}]
        >>> _ = (chats / "session-2026-11-03T10-00-s1.jsonl").write_text(
        ...     "".join(json.dumps(x) + "\\n" for x in lines))
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> print(import_auto(store, home).summary())
        gemini: 1 session (1 new), 1 message imported
        >>> print(sync(store, home).summary())
        1 source unchanged
    """
    return _run(
        store,
        home,
        incremental=False,
        dry_run=dry_run,
        show_progress=show_progress,
        reimport=reimport,
    )


def sync(
    store: SessionBackend,
    home: str | os.PathLike[str] | None = None,
    *,
    show_progress: bool | None = None,
) -> AutoImport:
    """:func:`import_auto` made incremental, cheap enough for cron or an agent's session-end
    hook: a source whose files all have the size and time recorded at the last import is
    skipped unopened; of one that changed, only the transcripts that changed are read again
    (the import ledger adds only their new messages; a Codex rollout only appended to is read
    from where its last import stopped); a changed database is read again whole
    (its importer adds only new rows). Sessions whose files the agent deleted stay in the
    store.

    ``warnings`` holds, once per setting, the retention settings that will delete
    transcripts (Claude Code's ``cleanupPeriodDays``, Gemini CLI's ``sessionRetention``):
    given again only when the setting changes. See :func:`import_auto` for an example.
    """
    result = _run(
        store, home, incremental=True, dry_run=False, show_progress=show_progress, reimport=False
    )
    result.warnings = _new_warnings(store, home)
    return result


async def aimport_auto(
    store: SessionBackend,
    home: str | os.PathLike[str] | None = None,
    *,
    dry_run: bool = False,
    show_progress: bool | None = None,
    reimport: bool = False,
) -> AutoImport:
    """:func:`import_auto` in a worker thread (file and database reads block)."""
    return await asyncio.to_thread(
        import_auto,
        store,
        home,
        dry_run=dry_run,
        show_progress=show_progress,
        reimport=reimport,
    )


async def async_sync(
    store: SessionBackend,
    home: str | os.PathLike[str] | None = None,
    *,
    show_progress: bool | None = None,
) -> AutoImport:
    """:func:`sync` in a worker thread (file and database reads block)."""
    return await asyncio.to_thread(sync, store, home, show_progress=show_progress)


def _run(
    store: SessionBackend,
    home: str | os.PathLike[str] | None,
    *,
    incremental: bool,
    dry_run: bool,
    show_progress: bool | None,
    reimport: bool,
) -> AutoImport:
    sources = discover_sources(home)
    if dry_run:
        return AutoImport([SourceImport(s) for s in sources], dry_run=True)
    done: list[SourceImport] = []
    plans = [(s, _plan(store, s, incremental=incremental)) for s in sources]
    total = sum(s.sessions for s, (files, _) in plans if files is None or files)
    work = any(files is None or files for _, (files, _) in plans)
    with _bar(total, show_progress if work else False) as advance:
        for source, (files, marks) in plans:
            outcome = SourceImport(source)
            if files is None or files:
                _import(store, source, files, marks, outcome, reimport=reimport)
                advance(source.sessions)
            done.append(outcome)
    return AutoImport(done)


def changed_files(
    before: Mapping[str, Sequence[int]], now: Mapping[str, Sequence[int]]
) -> list[str]:
    """The files of ``now`` that are new or differ from ``before`` in size or time (pure).

    Example:
        >>> changed_files({"a": [1, 5], "b": [2, 5]}, {"a": [1, 5], "b": [3, 6], "c": [1, 1]})
        ['b', 'c']
    """
    return [f for f, mark in now.items() if list(before.get(f, ())) != list(mark)]


def _plan(
    store: SessionBackend, source: AgentSource, *, incremental: bool
) -> tuple[list[Path] | None, Marks]:
    """What to read of ``source``: ``None`` for the whole source, the transcripts that
    changed, or nothing (``[]``); with the marks to record once it is read."""
    now: Marks = {str(f): list(mark) for f, mark in source.files.items()}
    if not incremental:
        return None, now
    before = _load_marks(store.read_import_state(source.key))
    if before is None:
        return None, now
    changed = [Path(f) for f in changed_files(before, now)]
    if all(f in source.per_file for f in changed):
        return changed, now
    return None, now


def _load_marks(raw: str | None) -> Marks | None:
    """Marks read back from the store (``None``: none recorded, or not readable)."""
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


_CANNOT_READ = (ImportSourceError, MissingFeatureError, ReadLimitError)


def _import(
    store: SessionBackend,
    source: AgentSource,
    files: list[Path] | None,
    marks: Marks,
    outcome: SourceImport,
    *,
    reimport: bool,
) -> None:
    """Import the whole source (``files is None``) or those of its files, together or one at
    a time; record the marks of what was read (a file that could not be is read again next
    time)."""
    importer = _IMPORT[source.kind]
    whole: Any = list(source.paths) if source.kind == "cursor" else source.paths[0]
    merged = ImportReport(source.kind)
    more: dict[str, Any] = {"resume": True} if source.kind in _RESUMING else {}

    def read(target: Any, **only: Any) -> None:
        report = importer(store, target, show_progress=False, reimport=reimport, **more, **only)
        _add(merged, report)

    if files is None:
        try:
            read(whole)
        except _CANNOT_READ as exc:
            outcome.error = str(exc)
            return
    elif source.kind in _TOGETHER:
        _read_together(files, lambda some: read(whole, files=some), marks, outcome)
    else:
        for target in files:
            try:
                read(target)
            except _CANNOT_READ as exc:
                outcome.error = str(exc)
                marks.pop(str(target), None)
    outcome.report = merged
    outcome.files_read = len(source.files) if files is None else len(files)
    store.write_import_state(source.key, json.dumps(marks, separators=(",", ":")))


def _read_together(
    files: list[Path], read: Callable[[list[Path]], None], marks: Marks, outcome: SourceImport
) -> None:
    """``files`` read at once; when one of them cannot be read, the others are, at once, and
    those that cannot are named in ``outcome.error`` and read again next time."""
    try:
        read(files)
        return
    except _CANNOT_READ as exc:
        error = str(exc)
    unreadable = [f for f in files if not _opens(f)]
    rest = [f for f in files if f not in unreadable]
    try:
        if rest:
            read(rest)
    except _CANNOT_READ as exc:  # (a file that went away meanwhile: all read again)
        error, unreadable = str(exc), files
    if unreadable:
        outcome.error = error
    for file in unreadable:
        marks.pop(str(file), None)


def _opens(file: Path) -> bool:
    """Whether ``file`` can be opened and read as its importer opens it."""
    try:
        for _ in open_files([file], named=file, report=ImportReport("probe")):
            pass
    except (ImportSourceError, MissingFeatureError):
        return False
    return True


def _add(into: ImportReport, more: ImportReport) -> None:
    """Two reports of one source (its files read one at a time): one."""
    for name in ("sessions", "new_sessions", "messages", "already_imported"):
        setattr(into, name, getattr(into, name) + getattr(more, name))
    for name in ("orphans", "problems", "forgotten"):
        getattr(into, name).extend(getattr(more, name))
    for name in ("skipped", "ignored", "undated"):
        getattr(into, name).update(getattr(more, name))
    into.label = into.label or more.label


def _new_warnings(store: SessionBackend, home: str | os.PathLike[str] | None) -> list[str]:
    """Retention warnings not given for this setting before (recorded as given)."""
    fresh: list[str] = []
    for retention in retention_warnings(home):
        key = f"{_WARNED}{retention.kind}"
        if store.read_import_state(key) != retention.limit:
            fresh.append(retention.message())
            store.write_import_state(key, retention.limit)
    return fresh


@contextmanager
def _bar(total: int, enabled: bool | None) -> Iterator[Any]:
    """One progress bar over every source's sessions; yields ``advance(n)``."""
    done = 0
    with progress_bar(desc="import auto", total=total, enabled=enabled) as bar:

        def advance(n: int) -> None:
            nonlocal done
            done += n
            if bar is not None:
                bar(done, total)

        yield advance
