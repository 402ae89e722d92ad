"""Where each Codex rollout's last import stopped, so that importing rollouts that grew reads
only their new lines (:mod:`~langchain_session_recall.importers.resume`).

A rollout is keyed line by line (thread id and line number), and what a line needs from the
lines before it is small: the thread and its parent (the ``session_meta``), the last time
read, and the names of the calls still waiting for their output. That is saved with the
file's :class:`~langchain_session_recall.importers.resume.ResumePoint`. A rollout is read from
its point only when it was only appended to, is a plain ``.jsonl`` file, is the thread's one
file, its ``session_meta`` was read, and, for a fork or a sub-agent, the history it copied
from its parent is behind it (``settled``: a message of its own was kept). Anything else is
read whole, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.importers.records import ImportSession
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.resume import (
    RESUME_PREFIX,
    LineCursor,
    ResumePoint,
    fingerprint,
    points_of,
    resume_key,
    still_appended,
)
from langchain_session_recall.messages import storable_text

__all__ = ["RolloutPoints", "stored_call_names"]

KIND = "codex"
_ONE_BY_ONE = 32  # up to this many files, their points are read one by one (else all at once)


class RolloutPoints:
    """The resume points of the rollouts one import reads: those recorded before (checked
    against the files), and those to record once the import is written (:meth:`save`).
    Disabled (``enabled=False``): every rollout is read whole and nothing is recorded."""

    def __init__(self, store: SessionBackend, files: Sequence[Path], *, enabled: bool) -> None:
        self.enabled = enabled
        self.before: dict[str, ResumePoint] = {}
        if enabled and len(files) > _ONE_BY_ONE:
            self.before = points_of(store.read_import_states(f"{RESUME_PREFIX}{KIND}:"))
        elif enabled:
            keys = [resume_key(KIND, f) for f in files]
            self.before = points_of(
                {k: raw for k in keys if (raw := store.read_import_state(k)) is not None}
            )
        self.valid: dict[Path, ResumePoint] = {}
        self.after: dict[str, tuple[ResumePoint, str, bool]] = {}
        self.kept: set[str] = set()

    def check(self, file: Path, fh: BinaryIO) -> ResumePoint | None:
        """The point to go on from in ``file`` (open, at its start), when it has one and was
        only appended to since; ``fh`` is then at the point, else at its start again."""
        point = self.before.get(resume_key(KIND, file)) if self.enabled else None
        if (
            point is None
            or file.suffix != ".jsonl"
            or not point.state.get("settled")
            or not point.state.get("meta")  # (the thread's own session_meta not read yet)
        ):
            return None
        if still_appended(fh, point):
            self.valid[file] = point
            return point
        fh.seek(0)
        return None

    def whole(self, files: Iterable[str]) -> None:
        """Read these files whole (a thread found in several files)."""
        for file in files:
            self.valid.pop(Path(file), None)

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
        """A :class:`LineCursor` over a plain rollout when points are kept (from ``point``),
        else ``None`` (read it as before)."""
        if not self.enabled or file.suffix != ".jsonl":
            return None
        return LineCursor(
            fh,
            name=storable_text(file.name),
            report=report,
            max_line_bytes=max_line_bytes,
            offset=point.offset if point is not None else 0,
            line=point.line if point is not None else 0,
        )

    def record(
        self,
        file: Path,
        fh: BinaryIO,
        cursor: LineCursor,
        state: dict[str, Any],
        *,
        before: ResumePoint | None,
        root: bool,
    ) -> None:
        """Keep where the read of ``file`` stopped, with the parser's ``state`` there; whether
        the thread's copied history is behind it is settled once the import is written."""
        state["settled"] = bool(before is not None and before.state.get("settled"))
        point = ResumePoint(cursor.offset, cursor.line, fingerprint(fh, cursor.offset), state)
        self.after[resume_key(KIND, file)] = (point, str(state["thread"]), root)

    def keeping(self, sessions: Iterable[ImportSession]) -> Iterator[ImportSession]:
        """``sessions`` as they are written, noting those that kept a message of their own
        (after their copied history was left out)."""
        for session in sessions:
            if session.messages:
                self.kept.add(session.id)
            yield session

    def save(self, store: SessionBackend) -> None:
        """Record the points of the rollouts read (after their messages were written)."""
        states: dict[str, str] = {}
        for key, (point, thread, root) in self.after.items():
            point.state["settled"] = point.state["settled"] or root or thread in self.kept
            states[key] = point.dumps()
        store.write_import_states(states)


def stored_call_names(store: SessionBackend, thread: str) -> Callable[[str], str | None]:
    """The name of a call of ``thread`` as the store holds it, by call id (the thread's
    messages are read once, when first asked)."""
    names: dict[str, str] | None = None

    def name_of(call_id: str) -> str | None:
        nonlocal names
        if names is None:
            names = {}
            for message in store.get_messages(thread):
                for call in message.tool_calls or []:
                    fn = call.get("function") if isinstance(call, dict) else None
                    name = fn.get("name") if isinstance(fn, dict) else None
                    if isinstance(call, dict) and isinstance(call.get("id"), str):
                        name = name or call.get("name")
                        if isinstance(name, str):
                            names[call["id"]] = name
        return names.get(call_id)

    return name_of
