"""Constants and helpers shared by the MCP tests."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from langchain_session_recall import SessionRecallRetriever, create_session_search_tool
from langchain_session_recall.backends import open_store

BROAD = "docker OR nginx OR postgres OR backup OR API OR script"
PGBOUNCER = "20261105_112048_f00d42"
CORS = "20261103_091512_a1b2c3"
BOB = "20261106_080419_b0b001"


def server_command(db: Path, *extra: str) -> list[str]:
    """``session-recall mcp --db DB ...`` as this interpreter runs it."""
    return [sys.executable, "-m", "langchain_session_recall", "mcp", "--db", str(db), *extra]


def text_of(result: Any) -> str:
    """The text of an MCP ``CallToolResult`` (these tools return one text block)."""
    [block] = result.content
    assert block.type == "text"
    return str(block.text)


def payload_of(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(text_of(result))
    return data


def langchain_tool_output(db: Path, arguments: dict[str, Any]) -> dict[str, Any]:
    """What the LangChain ``session_search`` tool returns for ``arguments`` on ``db``, built the
    way the server builds it (recaps with message ids), read-only."""
    store = open_store(db, read_only=True)
    try:
        retriever = SessionRecallRetriever(store=store, show_message_ids=True)
        data: dict[str, Any] = json.loads(create_session_search_tool(retriever).invoke(arguments))
    finally:
        store.close()
    return data


def snapshot(db: Path) -> dict[str, str]:
    """``{file name: sha256}`` of the database and every file beside it named after it (``-wal``,
    ``-journal``, ...); an ``-shm`` is recorded as present, not hashed (a reader registers its
    read marks there, as SQLite requires)."""
    out: dict[str, str] = {}
    for path in sorted(db.parent.iterdir()):
        if not path.name.startswith(db.name):
            continue
        if path.name.endswith("-shm"):
            out[path.name] = "present"
        elif path.is_file():
            out[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def cited_ids(text: str) -> list[int]:
    """Message ids of ``[ROLE #42]`` tags, in order."""
    return [int(m) for m in re.findall(r"\[[A-Z_:a-z]+ #(\d+)\]", text)]
