"""Served ``--read-only``, a database and its ``-wal`` keep their bytes, whatever the tools do."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_server.mcp_support import PGBOUNCER, payload_of, server_command, snapshot


def _writer_with_wal(db: Path) -> sqlite3.Connection:
    """Another program's open connection whose committed rows sit in the ``-wal`` only."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute(
        "INSERT INTO sessions (id, source, started_at, title) "
        "VALUES ('wal-only', 'cli', 1796000000.0, 'Zeppelin hangar')"
    )
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) "
        "VALUES ('wal-only', 'user', 'the zeppelin hangar door is stuck', 1796000001.0)"
    )
    return conn


async def test_read_only_store_is_unchanged_byte_for_byte(demo_db: Path, tmp_path: Path) -> None:
    writer = _writer_with_wal(demo_db)
    try:
        wal = demo_db.with_name(demo_db.name + "-wal")
        assert wal.stat().st_size > 0
        before = snapshot(demo_db)
        assert set(before) == {"demo.db", "demo.db-wal", "demo.db-shm"}

        command, *args = server_command(demo_db, "--read-only")
        params = StdioServerParameters(command=command, args=args)
        with (tmp_path / "server.log").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                # The committed rows in the -wal are read (so the WAL really was opened) ...
                found = payload_of(await client.call_tool("session_search", {"query": "zeppelin"}))
                assert [r["session_id"] for r in found["results"]] == ["wal-only"]
                for arguments in (
                    {"query": "pgbouncer", "limit": 5},
                    {},
                    {"query": "nginx", "after": "not a date"},
                ):
                    await client.call_tool("session_search", arguments)
                for arguments in (
                    {"session_id": "wal-only"},
                    {"session_id": PGBOUNCER, "message_ids": [60, 9999], "include_start": True},
                    {"session_id": "missing"},
                ):
                    await client.call_tool("session_show", arguments)
                shown = payload_of(
                    await client.call_tool("session_show", {"session_id": "wal-only"})
                )
                assert "zeppelin hangar door" in shown["transcript"]

        # ... and nothing was written: same bytes, no new file beside the database.
        assert snapshot(demo_db) == before
    finally:
        writer.close()
