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
from typing import TYPE_CHECKING

from langchain_session_recall.importers.records import ImportSession
from langchain_session_recall.importers.resume import FilePoints, ResumePoint, resume_key

if TYPE_CHECKING:
    from langchain_session_recall.backends.base import SessionBackend

__all__ = ["RolloutPoints", "stored_call_names"]

KIND = "codex"


class RolloutPoints(FilePoints):
    """The resume points of the rollouts one import reads (:class:`FilePoints`): a rollout
    goes on from its point only when its own ``session_meta`` was read and its copied
    history is behind it (``settled``); a thread found in several files is read whole."""

    def __init__(self, store: SessionBackend, files: Sequence[Path], *, enabled: bool) -> None:
        super().__init__(store, KIND, files, enabled=enabled)
        self.threads: dict[str, tuple[str, bool]] = {}  # file key: its thread, a root?
        self.kept: set[str] = set()

    def usable(self, point: ResumePoint) -> bool:
        return bool(point.state.get("settled") and point.state.get("meta"))

    def whole(self, files: Iterable[str]) -> None:
        """Read these files whole (a thread found in several files)."""
        for file in files:
            self.valid.pop(Path(file), None)
            self.still.pop(Path(file), None)

    def record_rollout(
        self, file: Path, point: ResumePoint, *, before: ResumePoint | None, root: bool
    ) -> None:
        """Keep where the read of ``file`` stopped (``point``, with the parser's state there);
        whether the thread's copied history is behind it is settled once the import is
        written."""
        state = point.state
        state["settled"] = bool(before is not None and before.state.get("settled"))
        key = self.keep(file, point)
        self.threads[key] = (str(state["thread"]), root)

    def rename(self, file: Path, title: str | None, *, named: bool) -> None:
        """Note the name the thread of ``file`` is given now (``named``: by an index), in its
        new point, or in its old one when the file was not read (nothing new)."""
        key = resume_key(KIND, file)
        point = self.after.get(key) or self.still.get(file)
        if point is not None:
            point.state["title"], point.state["named"] = title, named
            self.after[key] = point

    def keeping(self, sessions: Iterable[ImportSession]) -> Iterator[ImportSession]:
        """``sessions`` as they are written, noting those that kept a message of their own
        (after their copied history was left out)."""
        for session in sessions:
            if session.messages:
                self.kept.add(session.id)
            yield session

    def save(self, store: SessionBackend) -> None:
        for key, point in self.after.items():
            if key in self.threads:  # (else a point not read again, renamed: settled as it was)
                thread, root = self.threads[key]
                point.state["settled"] = point.state["settled"] or root or thread in self.kept
        super().save(store)


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
