"""PostgreSQL test server settings shared by the backend tests."""

from __future__ import annotations

import os

PG_DSN = os.environ.get("SESSION_RECALL_PG_DSN", "")
SKIP_PG = "SESSION_RECALL_PG_DSN is not set: start a server with scripts/pg-test-server start"


def drop_schema(schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
