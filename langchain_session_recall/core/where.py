"""Where a session happened: its project directory, and the command that reopens it.

Pure functions. A session keeps ``project`` (the working directory its agent ran in),
``git_branch`` and ``agent`` (which program wrote it); a search can keep to one project (that
directory and every directory below it) and to some agents; a result names the command that
reopens its session in the agent that wrote it (:func:`resume_command`).
"""

from __future__ import annotations

import ntpath
import os.path
import posixpath
import re
import shlex
from collections.abc import Sequence
from typing import TypedDict

from langchain_session_recall.errors import InvalidArgumentError

__all__ = [
    "RESUME_COMMANDS",
    "WhereMetadata",
    "agent_list",
    "project_path",
    "project_prefix",
    "resume_command",
    "stored_project",
    "where_fields",
]

RESUME_COMMANDS: dict[str, str] = {
    "claude-code": "claude --resume {id}",
    "codex": "codex resume {id}",
    "gemini": "gemini --resume {id}",
    "opencode": "opencode --session {id}",
    "hermes": "hermes --resume {id}",
}
"""The command that reopens a session, by agent (``{id}`` is the session's id). Cursor's IDE
conversations have no such command, nor do the generic JSONL, LangGraph or recorded ones."""

_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def _windows(path: str) -> bool:
    return bool(_DRIVE.match(path)) or path.startswith("\\\\")


def stored_project(value: str | None) -> str | None:
    """A working directory as a session keeps it: surrounding blanks and trailing separators
    dropped (``/src/api/`` is ``/src/api``; ``/`` stays ``/``), ``None`` for nothing.

    Example:
        >>> stored_project("/src/api/"), stored_project("C:\\\\src\\\\"), stored_project("  ")
        ('/src/api', 'C:\\\\src', None)
    """
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    trimmed = text.rstrip("\\/" if _windows(text) else "/")
    if not trimmed or (_windows(text) and trimmed.endswith(":")):
        return text[: len(trimmed) + 1]  # the root itself: "/" or "C:\"
    return trimmed


def project_path(value: str | None) -> str | None:
    """A project filter as given, made the directory it names: ``~`` expanded, ``..`` and
    repeated separators resolved, trailing separators dropped; ``None`` (or blank) for none.

    Raises:
        InvalidArgumentError: a relative path: the library does not guess the directory it
            is relative to (the command line resolves ``.`` against the current one).

    Example:
        >>> project_path("/src/api/../web/"), project_path(None)
        ('/src/web', None)
        >>> try:
        ...     project_path("src/api")
        ... except InvalidArgumentError as exc:
        ...     print(exc)
        project='src/api' is not an absolute directory: give the full path (/home/me/src/api), or ~/...
    """  # noqa: E501
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise InvalidArgumentError(f"project={value!r} is not a directory: give its full path")
    text = os.path.expanduser(value.strip())
    if _windows(text):
        return stored_project(ntpath.normpath(text))
    if not text.startswith("/"):
        raise InvalidArgumentError(
            f"project={value[:200]!r} is not an absolute directory: give the full path "
            "(/home/me/src/api), or ~/..."
        )
    return stored_project(posixpath.normpath(text))


def project_prefix(project: str) -> str:
    """What the working directory of a session below ``project`` starts with: the path and
    its separator, so ``/a/b`` takes in ``/a/b/c`` and never ``/a/bc``.

    Example:
        >>> project_prefix("/a/b"), project_prefix("/"), project_prefix("C:\\\\src")
        ('/a/b/', '/', 'C:\\\\src\\\\')
    """
    separator = "\\" if _windows(project) else "/"
    return project if project.endswith(separator) else project + separator


def agent_list(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """Agent names for an agent filter as given (``"codex,claude-code"`` or a sequence):
    stripped, case-folded, once each.

    Example:
        >>> agent_list(" Codex, claude-code,codex "), agent_list(None)
        (('codex', 'claude-code'), ())
    """
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    named = (str(a).strip().lower() for a in items if a is not None)
    return tuple(dict.fromkeys(a for a in named if a))


def resume_command(agent: str | None, session_id: str, project: str | None = None) -> str | None:
    """The shell command that reopens ``session_id`` in ``agent``, run from its ``project``
    (agents look a session up in the directory it ran in); ``None`` for an agent without one.

    Example:
        >>> resume_command("codex", "0193a1b2", "/src/my api")
        "cd '/src/my api' && codex resume 0193a1b2"
        >>> resume_command("claude-code", "4f1e"), resume_command("jsonl", "x")
        ('claude --resume 4f1e', None)
    """
    template = RESUME_COMMANDS.get(agent or "")
    if template is None or not session_id:
        return None
    command = template.format(id=shlex.quote(session_id))
    return f"cd {shlex.quote(project)} && {command}" if project else command


class WhereMetadata(TypedDict):
    """Where a session happened, as every result's metadata carries it."""

    project: str | None
    """The directory its agent ran in (``None``: not known)."""
    git_branch: str | None
    agent: str | None
    """Which program wrote it: ``claude-code``, ``codex``, ``gemini``, ``recorder``, ..."""
    resume: str | None
    """The command that reopens it in that agent (:func:`resume_command`), or ``None``."""


def where_fields(
    session_id: str, project: str | None, git_branch: str | None, agent: str | None
) -> WhereMetadata:
    """The metadata of where a session happened, as every result shows it: ``project``,
    ``git_branch``, ``agent`` and ``resume`` (:func:`resume_command`, or ``None``).

    Example:
        >>> where_fields("t1", "/src", "main", "codex")["resume"]
        'cd /src && codex resume t1'
    """
    return {
        "project": project,
        "git_branch": git_branch,
        "agent": agent,
        "resume": resume_command(agent, session_id, project),
    }
