"""What an import tells: the :class:`ImportReport` (counts, skipped items with reasons, the
first problems in detail) and the progress bar drawn while sessions are written (the command
line's one bar: ``embed`` draws it too)."""

from __future__ import annotations

import contextlib
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar

from langchain_session_recall.core.text import plural

__all__ = ["ImportReport", "progress", "progress_bar"]

T = TypeVar("T")
_MAX_PROBLEMS = 50  # details kept per report; counts are always complete


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
    :data:`~langchain_session_recall.importers.records.UNDATED` key): ``"neighbour"``, dated by
    their neighbours in their session; ``"file"``, in a session without any time, dated by the
    file's."""
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

    def absorb(self, part: ImportReport) -> None:
        """Take what ``part`` reported while reading a piece of this import's source
        elsewhere (a worker process): its skipped and ignored counts, its problems (while
        there is room), its undated messages; as if each had been reported here, in order.

        Example:
            >>> r, part = ImportReport("codex"), ImportReport("codex")
            >>> part.skip("not valid JSON", "r.jsonl:3"); part.ignore("event_msg record")
            >>> r.absorb(part); r.problems, r.ignored
            (['r.jsonl:3: not valid JSON'], Counter({'event_msg record': 1}))
        """
        for reason, count in part.skipped.items():
            self.skipped[reason] += count
        for reason, count in part.ignored.items():
            self.ignored[reason] += count
        for how, count in part.undated.items():
            self.undated[how] += count
        room = max(0, _MAX_PROBLEMS - len(self.problems))
        self.problems += part.problems[:room]

    @property
    def skipped_total(self) -> int:
        """Items skipped for any reason."""
        return sum(self.skipped.values())

    def summary(self) -> str:
        """One line for humans: what was imported and what was skipped, with reasons."""
        line = (
            f"{self.label or self.kind}: {plural(self.sessions, 'session')} "
            f"({self.new_sessions} new), {plural(self.messages, 'message')} imported"
        )
        if self.already_imported:
            line += f", {self.already_imported} already present"
        if self.skipped:
            reasons = ", ".join(f"{n} {why}" for why, n in self.skipped.most_common())
            line += f"; skipped {self.skipped_total} ({reasons})"
        if self.orphans:
            roots = plural(len(self.orphans), "imported as a root", "imported as roots")
            line += f"; {roots} (parent missing)"
        if self.ignored:
            line += f"; ignored {sum(self.ignored.values())} non-message entries"
        if self.forgotten:
            line += (
                f"; {plural(len(self.forgotten), 'forgotten session')}"
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


def progress(
    items: Iterable[T],
    *,
    total: int | None = None,
    desc: str = "importing",
    enabled: bool | None = None,
    stream: TextIO | None = None,
) -> Iterator[T]:
    """Yield ``items`` while drawing a progress bar (:func:`progress_bar`) on stderr.

    ``enabled=None`` shows it only when stderr is a terminal, so an import run by a script, a
    hook or a test prints nothing extra. Forced on a stream that is not a terminal (``--progress``
    into a log), the bar is written once, when it ends: no cursor movement in the file.

    Example:
        >>> list(progress([1, 2], enabled=False))
        [1, 2]
    """
    with progress_bar(desc=desc, total=total, enabled=enabled, stream=stream) as bar:
        for done, item in enumerate(items, 1):
            yield item
            if bar is not None:
                bar(done, total)


@contextlib.contextmanager
def progress_bar(
    *,
    desc: str,
    total: int | None = None,
    unit: str = "sessions",
    enabled: bool | None = None,
    stream: TextIO | None = None,
) -> Iterator[Callable[[int, int | None], None] | None]:
    """A progress bar (rich) on stderr for a long job, with its rate and time left: yields
    ``update(done, total)``, or ``None`` when no bar is drawn (``enabled=None``: only on a
    terminal). The bar shows from the start, its total unknown until the first update.

    The one bar of the command line: ``import KIND`` (through :func:`progress`) and ``embed``
    draw it; ``--progress`` forces it on a stream that is not a terminal, where it is written
    once, when it ends.

    Example:
        >>> import io
        >>> with progress_bar(desc="embedding", stream=io.StringIO()) as bar:
        ...     print(bar)
        None
    """
    out = stream or sys.stderr
    if enabled is None:
        enabled = out.isatty()
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        _rate_column(unit),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(file=out), transient=False) as bar:
        task = bar.add_task(desc, total=total)

        def update(done: int, total: int | None) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _rate_column(unit: str) -> Any:
    """The bar's rate column: ``12.5 sessions/s`` (``?`` before there is one)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            shown = "?" if speed is None else f"{speed:.1f}" if speed < 100 else f"{speed:.0f}"
            return Text(f"{shown} {unit}/s", style="progress.data.speed")

    return Rate()
