"""A ``store`` fixture over both backends: every test here runs on SQLite and on PostgreSQL.

PostgreSQL needs a server: ``scripts/pg-test-server start`` prints a DSN; export it as
``SESSION_RECALL_PG_DSN``. Without it the PostgreSQL cases are skipped (CI always sets it).
Each PostgreSQL test gets a schema of its own, dropped afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pg_support import PG_DSN, SKIP_PG, drop_schema

from langchain_session_recall.backends.sqlite.store import SessionStore

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgres",
        id="postgres",
        marks=[pytest.mark.skipif(not PG_DSN, reason=SKIP_PG), pytest.mark.enable_socket],
    ),
]


@pytest.fixture
def pg_schema() -> Iterator[str]:
    """A fresh schema name, dropped after the test."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    yield schema
    drop_schema(schema)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    """An empty store of each backend."""
    if request.param == "sqlite":
        with SessionStore(tmp_path / "state.db") as s:
            yield s
        return
    from langchain_session_recall.backends.postgres.store import PostgresSessionStore

    schema = f"t_{uuid.uuid4().hex[:12]}"
    s = PostgresSessionStore(PG_DSN, schema=schema, min_size=1, max_size=4)
    try:
        yield s
    finally:
        s.close()
        drop_schema(schema)
