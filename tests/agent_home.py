"""A home directory holding every supported agent's history, assembled from the fixtures of
``tests/data/`` and the database builders of the importers' tests, each where its agent
keeps it: what ``import auto`` and ``sync`` are tested on."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

from file_modules import load_file
from hermes_fixtures import build_hermes_db

DATA = Path(__file__).parent / "data"

LOCATIONS = {
    "hermes": ".hermes/state.db",
    "claude-code": ".claude/projects",
    "codex": ".codex",
    "gemini": ".gemini/tmp",
    "opencode": ".local/share/opencode/opencode.db",
    "cursor": ".cursor/projects",
}
"""Where each agent's history is put under the home directory (Cursor's editor database is
in ``.config/Cursor/User/globalStorage/state.vscdb`` as well)."""


def build_agent_home(home: Path) -> Path:
    """Fill ``home`` with every agent's fixtures (old and new Claude Code layouts, Codex
    sessions and archived sessions, Gemini recordings, OpenCode and Cursor databases, a
    Hermes ``state.db``); returns ``home``."""
    build_state_vscdb = _builder("test_import_cursor", "build_state_vscdb")
    build_opencode_db = _builder("test_import_opencode", "build_opencode_db")
    projects = home / LOCATIONS["claude-code"]
    for layout in ("claude_code", "claude_code_subagents"):
        shutil.copytree(DATA / layout, projects, dirs_exist_ok=True)
    shutil.copytree(DATA / "codex", home / LOCATIONS["codex"])
    shutil.copytree(DATA / "gemini" / "tmp", home / LOCATIONS["gemini"])
    shutil.copytree(DATA / "cursor" / "projects", home / LOCATIONS["cursor"])
    editor = home / ".config" / "Cursor" / "User" / "globalStorage"
    editor.mkdir(parents=True)
    build_state_vscdb(editor / "state.vscdb")
    opencode = home / LOCATIONS["opencode"]
    opencode.parent.mkdir(parents=True)
    build_opencode_db(opencode)
    hermes = home / LOCATIONS["hermes"]
    hermes.parent.mkdir(parents=True)
    build_hermes_db(hermes, 3)
    return home


def _builder(module: str, name: str) -> Any:
    """A database builder of an importer's test module (the suite imports test modules by
    path, ``--import-mode=importlib``, so they are not importable by name): loaded once more
    under a name of its own, so that each database is built by one piece of code."""
    loaded = _LOADED.get(module)
    if loaded is None:
        path = Path(__file__).parent / "unit_tests" / f"{module}.py"
        loaded = _LOADED[module] = load_file(path, f"agent_home_{module}")
    return getattr(loaded, name)


_LOADED: dict[str, ModuleType] = {}
