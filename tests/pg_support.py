"""PostgreSQL test server settings shared by the backend tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PG_DSN = os.environ.get("SESSION_RECALL_PG_DSN", "")
SKIP_PG = "SESSION_RECALL_PG_DSN is not set: start a server with scripts/pg-test-server start"
DATA = Path(__file__).resolve().parent / "data"


def drop_schema(schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@contextmanager
def old_postgres_schema(name: str, schema: str) -> Iterator[Any]:
    """A connection inside the transaction that created ``schema`` from ``tests/data/<name>``
    (a schema as an older version made it), its ``search_path`` set to it."""
    import psycopg
    from psycopg import sql

    statements = (DATA / name).read_text().split("\n--;\n")
    with psycopg.connect(PG_DSN, autocommit=True) as conn, conn.transaction():
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(schema)))
        for statement in statements:
            body = "\n".join(ln for ln in statement.splitlines() if not ln.startswith("-- "))
            if body.strip():
                conn.execute(body)
        yield conn
