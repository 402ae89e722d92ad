"""Importers: build a session store from other agents' histories.

Every importer is a function ``import_<kind>(store, path, ...) -> ImportReport`` and is
idempotent: messages already imported (tracked in the store's import ledger, the
``import_ledger`` and ``import_runs`` tables) are
skipped, so re-running an import adds only what is new. :func:`import_auto` imports every
agent's history found under a home directory, :func:`sync` does it again reading only what
changed.

Example:
    >>> from langchain_session_recall import SessionStore
    >>> from langchain_session_recall.importers import import_jsonl
    >>> store = SessionStore(":memory:")
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_session_recall.importers.auto import (
        AutoImport,
        SourceImport,
        aimport_auto,
        async_sync,
        import_auto,
        sync,
    )
    from langchain_session_recall.importers.base import (
        ImportReport,
        ImportSession,
        ImportSourceError,
        write_sessions,
    )
    from langchain_session_recall.importers.claude_code import import_claude_code
    from langchain_session_recall.importers.codex import import_codex
    from langchain_session_recall.importers.cursor import import_cursor
    from langchain_session_recall.importers.discovery import AgentSource, discover_sources
    from langchain_session_recall.importers.gemini import import_gemini
    from langchain_session_recall.importers.hermes import import_hermes
    from langchain_session_recall.importers.jsonl import import_jsonl
    from langchain_session_recall.importers.langgraph import import_langgraph
    from langchain_session_recall.importers.opencode import import_opencode

# Each public name is imported from its module when first asked for (PEP 562), so a process
# that needs one importer (a Codex import's worker, ``session-recall import codex``) does not
# import all eight: importing every one took about 140 ms.
_WHERE = {
    "AutoImport": "auto",
    "SourceImport": "auto",
    "aimport_auto": "auto",
    "async_sync": "auto",
    "import_auto": "auto",
    "sync": "auto",
    "ImportReport": "base",
    "ImportSession": "base",
    "ImportSourceError": "base",
    "write_sessions": "base",
    "import_claude_code": "claude_code",
    "import_codex": "codex",
    "import_cursor": "cursor",
    "AgentSource": "discovery",
    "discover_sources": "discovery",
    "import_gemini": "gemini",
    "import_hermes": "hermes",
    "import_jsonl": "jsonl",
    "import_langgraph": "langgraph",
    "import_opencode": "opencode",
}
_KINDS = {
    "hermes": "import_hermes",
    "jsonl": "import_jsonl",
    "claude-code": "import_claude_code",
    "langgraph": "import_langgraph",
    "gemini": "import_gemini",
    "opencode": "import_opencode",
    "cursor": "import_cursor",
    "codex": "import_codex",
}

__all__ = [
    "IMPORTERS",
    "AgentSource",
    "AutoImport",
    "ImportReport",
    "ImportSession",
    "ImportSourceError",
    "SourceImport",
    "aimport_auto",
    "async_sync",
    "discover_sources",
    "import_auto",
    "import_claude_code",
    "import_codex",
    "import_cursor",
    "import_gemini",
    "import_hermes",
    "import_jsonl",
    "import_langgraph",
    "import_opencode",
    "sync",
    "write_sessions",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is asked for."""
    if name == "IMPORTERS":
        value: Any = {kind: __getattr__(function) for kind, function in _KINDS.items()}
    elif name in _WHERE:
        module = importlib.import_module(f"{__name__}.{_WHERE[name]}")
        value = getattr(module, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


IMPORTERS: dict[str, Callable[..., ImportReport]]
"""Importer function by the name used on the command line."""
