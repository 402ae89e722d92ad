"""Finding every supported agent's history under a home directory: which agents left sessions
there, where, how many and how large (:func:`discover_sources`), and which of their settings
will delete transcripts (:func:`retention_warnings`).

Sources with a place of their own are looked for: Hermes, Claude Code, Codex, Gemini CLI,
OpenCode and Cursor (its agent's transcripts and its editor's ``state.vscdb``, one source). JSON
Lines and LangGraph checkpoints live wherever their program writes them: they are imported by
path (``import jsonl PATH``, ``import langgraph PATH``), never looked for.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from langchain_session_recall.errors import ImportSourceError, ReadLimitError
from langchain_session_recall.importers.codex import default_codex_home, rollout_files
from langchain_session_recall.importers.cursor import default_cursor_paths
from langchain_session_recall.importers.gemini import is_recording
from langchain_session_recall.importers.jsonc import loads_jsonc
from langchain_session_recall.importers.opencode import default_opencode_db
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.sources import source_files
from langchain_session_recall.importers.sqlite_source import open_sqlite_source

__all__ = [
    "CLAUDE_CLEANUP_DAYS",
    "AgentSource",
    "FileMark",
    "Retention",
    "discover_sources",
    "file_marks",
    "gemini_retention",
    "retention_warnings",
    "shown_path",
]

CLAUDE_CLEANUP_DAYS = 30
"""Claude Code's ``cleanupPeriodDays`` when its ``settings.json`` sets none."""
_SETTINGS_BYTES = 1024 * 1024  # a settings.json is a few kB: read no more than this


FileMark = tuple[int, int]
"""A file's size and modification time (ns): what tells ``sync`` it changed."""


@dataclass(frozen=True)
class AgentSource:
    """One agent's history found on disk: what ``import auto`` and ``sync`` import.

    ``kind`` is the importer (``session-recall import KIND``); ``paths`` what it is given (one
    path, two for Cursor: its agent's transcripts and its editor's database); ``files`` every
    file read, with its :data:`FileMark` (taken once, when the source is found);
    ``sessions`` how many conversations the files hold (sub-agents counted with their parent).

    Example:
        >>> s = AgentSource("codex", "Codex", (Path("/home/ana/.codex"),),
        ...                 {Path("/home/ana/.codex/sessions/r.jsonl"): (2048, 1)}, 3)
        >>> s.row()
        ('Codex', '/home/ana/.codex', 3, 2048)
    """

    kind: str
    agent: str
    paths: tuple[Path, ...]
    files: Mapping[Path, FileMark]
    sessions: int
    per_file: frozenset[Path] = field(default_factory=frozenset)
    """The files that can be imported one at a time (a transcript of its own), when only
    they changed; any other change (a database, Codex's thread names) imports the whole
    source."""

    @property
    def key(self) -> str:
        """What names this source in the store's import state."""
        return f"sync:{self.kind}:{self.paths[0]}"

    @property
    def size(self) -> int:
        """Bytes in its files."""
        return sum(size for size, _ in self.files.values())

    def row(self) -> tuple[str, str, int, int]:
        """``(agent, path, sessions, bytes)``: a line of the table ``import auto`` shows."""
        return self.agent, "\n".join(str(p) for p in self.paths), self.sessions, self.size


@dataclass(frozen=True)
class Retention:
    """An agent setting that deletes transcripts: ``sync`` keeps what it has imported, but
    sessions not synced before the agent deletes them are lost. ``limit`` says which it
    deletes (``"older than 30 days"``), ``setting`` where that is set.

    Example:
        >>> r = Retention("claude-code", "older than 30 days", "cleanupPeriodDays")
        >>> print(r.message()[:50])
        Claude Code deletes transcripts older than 30 days
    """

    kind: str
    limit: str
    setting: str

    def message(self) -> str:
        """The warning, with what to do."""
        return (
            f"{_AGENTS[self.kind]} deletes transcripts {self.limit} ({self.setting}): run "
            "`session-recall sync` more often than it deletes them (cron, or a session-end "
            "hook); sessions already synced stay in the store"
        )


_AGENTS = {
    "hermes": "Hermes",
    "claude-code": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "opencode": "OpenCode",
    "cursor": "Cursor",
}


def discover_sources(home: str | os.PathLike[str] | None = None) -> list[AgentSource]:
    """Every supported agent's history under ``home`` (default: the user's home directory,
    where the agents' own variables are honoured: ``$CODEX_HOME``, ``$HERMES_HOME``,
    ``$XDG_DATA_HOME``, ``$OPENCODE_DB``), in a fixed order; an agent whose place is missing
    or empty is left out.

    Example:
        >>> import tempfile
        >>> home = Path(tempfile.mkdtemp())
        >>> discover_sources(home)
        []
        >>> day = home / ".codex" / "sessions" / "2026" / "11" / "20"
        >>> day.mkdir(parents=True)
        >>> _ = (day / "rollout-2026-11-20T09-00-00-0193a1b2-0000-7000-8000-000000000001.jsonl"
        ...      ).write_text("{}\\n")
        >>> [(s.kind, s.sessions) for s in discover_sources(home)]
        [('codex', 1)]
    """
    own = home is None
    root = Path.home() if home is None else Path(home).expanduser()
    found: list[AgentSource | None] = []
    for db in _hermes_dbs(root, own):
        found.append(_database("hermes", db, "SELECT count(*) FROM sessions"))
    found.append(_claude_code(root / ".claude" / "projects"))
    found.append(_codex(default_codex_home() if own else root / ".codex"))
    found.append(_gemini(root / ".gemini" / "tmp"))
    opencode = default_opencode_db() if own else root / ".local/share/opencode/opencode.db"
    found.append(_database("opencode", opencode, "SELECT count(*) FROM session"))
    found.append(_cursor(*default_cursor_paths(root)))
    return [s for s in found if s is not None and s.files]


def retention_warnings(home: str | os.PathLike[str] | None = None) -> list[Retention]:
    """The agents under ``home`` whose settings delete transcripts, when their history is
    there: Claude Code's ``cleanupPeriodDays`` (``~/.claude/settings.json``; 30 days when it
    sets none) and Gemini CLI's ``general.sessionRetention`` (``~/.gemini/settings.json``;
    off unless ``enabled``).

    Example:
        >>> import tempfile
        >>> home = Path(tempfile.mkdtemp())
        >>> retention_warnings(home)
        []
        >>> (home / ".claude" / "projects").mkdir(parents=True)
        >>> _ = (home / ".claude" / "settings.json").write_text('{"cleanupPeriodDays": 7}')
        >>> [(r.kind, r.limit) for r in retention_warnings(home)]
        [('claude-code', 'older than 7 days')]
    """
    root = Path.home() if home is None else Path(home).expanduser()
    found: list[Retention] = []
    claude = root / ".claude"
    if (claude / "projects").is_dir():
        settings = _settings(claude / "settings.json")
        days = claude_cleanup_days(settings)
        where = f"cleanupPeriodDays in {shown_path(claude / 'settings.json')}"
        if "cleanupPeriodDays" not in settings:
            where += f", {CLAUDE_CLEANUP_DAYS} by default"
        if days is not None:
            found.append(Retention("claude-code", f"older than {days} days", where))
    gemini = root / ".gemini"
    if (gemini / "tmp").is_dir():
        limits = gemini_retention(_settings(gemini / "settings.json"))
        if limits:
            where = f"general.sessionRetention in {shown_path(gemini / 'settings.json')}"
            found.append(Retention("gemini", " or ".join(limits), where))
    return found


def shown_path(path: Path) -> str:
    """``path`` as a message names it: under the user's home directory as ``~/...``, else
    whole (a ``--home`` elsewhere is named as it is).

    Example:
        >>> shown_path(Path.home() / ".claude" / "settings.json")
        '~/.claude/settings.json'
        >>> shown_path(Path("/srv/ana/.claude/settings.json"))
        '/srv/ana/.claude/settings.json'
    """
    home = Path.home()
    return f"~/{path.relative_to(home).as_posix()}" if path.is_relative_to(home) else str(path)


def gemini_retention(settings: Mapping[str, object]) -> list[str]:
    """Which sessions Gemini CLI deletes under these settings (pure): its
    ``general.sessionRetention``, when ``enabled``: ``maxAge`` (``"24h"``, ``"7d"``, ``"4w"``,
    ``"2m"``: a month is 30 days) and ``maxCount``.

    Example:
        >>> on = {"enabled": True, "maxAge": "4w", "maxCount": 50}
        >>> gemini_retention({"general": {"sessionRetention": on}})
        ['older than 4 weeks', 'beyond the 50 most recent']
        >>> gemini_retention({"general": {"sessionRetention": {"maxAge": "1d"}}})
        []
    """
    general = settings.get("general")
    policy = general.get("sessionRetention") if isinstance(general, Mapping) else None
    if not isinstance(policy, Mapping) or policy.get("enabled") is not True:
        return []
    limits = []
    age = policy.get("maxAge")
    match = re.fullmatch(r"\s*(\d+)\s*([hdwm])\s*", age) if isinstance(age, str) else None
    if match:
        limits.append(f"older than {int(match.group(1))} {_UNITS[match.group(2)]}")
    count = policy.get("maxCount")
    if isinstance(count, int) and not isinstance(count, bool) and count >= 1:
        limits.append(f"beyond the {count} most recent")
    return limits


_UNITS = {"h": "hours", "d": "days", "w": "weeks", "m": "months"}
"""Gemini CLI's duration units (a month is 30 days there)."""


def claude_cleanup_days(settings: Mapping[str, object]) -> int | None:
    """How many days Claude Code keeps transcripts under these settings (pure): its
    ``cleanupPeriodDays``, 30 when unset or not a number of days; ``None`` when it keeps
    them for good (a value too large to matter: more than 100 years).

    Example:
        >>> claude_cleanup_days({}), claude_cleanup_days({"cleanupPeriodDays": 90})
        (30, 90)
        >>> claude_cleanup_days({"cleanupPeriodDays": 99999}) is None
        True
    """
    value = settings.get("cleanupPeriodDays")
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return CLAUDE_CLEANUP_DAYS
    return None if value > 36_500 else value


def _settings(path: Path) -> Mapping[str, object]:
    """A settings file as a mapping, comments and trailing commas allowed (Gemini CLI reads
    its ``settings.json`` as JSONC); ``{}`` when missing or unreadable (the agent then uses
    its defaults too)."""
    try:
        with path.open("rb") as fh:
            data = loads_jsonc(fh.read(_SETTINGS_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, Mapping) else {}


def _hermes_dbs(root: Path, own: bool) -> list[Path]:
    """Hermes' ``state.db`` (``$HERMES_HOME``, else ``~/.hermes``) and each profile's."""
    env = os.environ.get("HERMES_HOME") if own else None
    base = Path(env).expanduser() if env else root / ".hermes"
    profiles = base / "profiles"
    more = sorted(profiles.glob("*/state.db")) if profiles.is_dir() else []
    return [base / "state.db", *more]


def file_marks(files: Iterable[Path]) -> dict[Path, FileMark]:
    """Each file's :data:`FileMark`; a file gone meanwhile is left out.

    Example:
        >>> file_marks([Path("/no/such/file")])
        {}
    """
    marks: dict[Path, FileMark] = {}
    for file in files:
        try:
            info = file.stat()
        except OSError:
            continue
        marks[file] = (info.st_size, info.st_mtime_ns)
    return marks


def _files(path: Path, suffix: str | tuple[str, ...]) -> list[Path]:
    """The files an importer of ``path`` reads (nothing when it is not a directory)."""
    if not path.is_dir():
        return []
    return source_files(path, report=ImportReport("discover"), suffix=suffix)


def _transcripts(
    kind: str,
    path: Path,
    files: list[Path],
    *,
    is_session: Callable[[Path], bool],
    per_file: Iterable[Path] | None = None,
) -> AgentSource:
    return AgentSource(
        kind,
        _AGENTS[kind],
        (path,),
        file_marks(files),
        sum(1 for f in files if is_session(f)),
        frozenset(files if per_file is None else per_file),
    )


def _claude_code(path: Path) -> AgentSource:
    files = _files(path, ".jsonl")
    return _transcripts(
        "claude-code",
        path,
        files,
        is_session=lambda f: f.parent.name != "subagents" and not f.name.startswith("agent-"),
    )


def _codex(path: Path) -> AgentSource | None:
    if not path.is_dir():
        return None
    rollouts = rollout_files(path, report=ImportReport("discover"))
    names = path / "session_index.jsonl"
    files = [*rollouts, names] if rollouts and names.is_file() else rollouts
    return _transcripts("codex", path, files, is_session=lambda f: f != names, per_file=rollouts)


def _gemini(path: Path) -> AgentSource:
    files = [f for f in _files(path, (".jsonl", ".json")) if is_recording(f, path)]
    return _transcripts("gemini", path, files, is_session=lambda f: f.parent.name == "chats")


def _with_journal(db: Path) -> tuple[Path, ...]:
    """The database and its write-ahead log (where a program in WAL mode writes first)."""
    wal = Path(f"{db}-wal")
    return (db, wal) if wal.is_file() else (db,)


def _count(db: Path, query: str) -> int:
    """``query``'s count in another program's database (0 when it cannot be read: the
    import then says why)."""
    try:
        with open_sqlite_source(db, probe=query, hint="") as source:
            row = source.first(query)
    except (ImportSourceError, ReadLimitError):
        return 0
    return int(row[0]) if row and isinstance(row[0], int) else 0


def _database(kind: str, db: Path, query: str) -> AgentSource | None:
    if not db.is_file():
        return None
    files = _with_journal(db)
    return AgentSource(kind, _AGENTS[kind], (db,), file_marks(files), _count(db, query))


def _cursor(projects: Path, editor: Path) -> AgentSource | None:
    """Cursor: its agent's transcripts and its editor's database, one source (a conversation
    both hold is read from the database)."""
    transcripts = [f for f in _files(projects, ".jsonl") if "agent-transcripts" in f.parts]
    db = _with_journal(editor) if editor.is_file() else ()
    paths = (*((projects,) if transcripts else ()), *((editor,) if db else ()))
    if not paths:
        return None
    composers = (
        "SELECT count(*) FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'"
    )
    sessions = sum(1 for f in transcripts if f.parent.name != "subagents")
    files = (*transcripts, *db)
    return AgentSource(
        "cursor",
        "Cursor agent + IDE" if transcripts and db else "Cursor IDE" if db else "Cursor agent",
        paths,
        file_marks(files),
        sessions + (_count(editor, composers) if db else 0),
    )
