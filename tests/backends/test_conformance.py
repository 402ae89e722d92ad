"""The backend conformance suite (``langchain_session_recall.testing``) on both stores.

SQLite stores live in the test's temporary directory; each PostgreSQL store in a schema of its
own (cheaper than a database: the suite needs no child process or CLI to reach it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_support import PG_DSN
from store_targets import Backend

from langchain_session_recall.backends import SessionBackend, SessionStore
from langchain_session_recall.testing import SessionBackendTests, StoreOpener


class TestSessionBackendConformance(SessionBackendTests):
    @pytest.fixture
    def open_store(
        self, backend: Backend, tmp_path: Path, request: pytest.FixtureRequest
    ) -> Iterator[StoreOpener]:
        opened: list[SessionBackend] = []
        schema = request.getfixturevalue("pg_schema") if backend == "postgres" else ""

        def open_(*, read_only: bool = False) -> SessionBackend:
            if backend == "postgres":
                from langchain_session_recall.backends.postgres.store import (
                    PostgresSessionStore,
                )

                store: SessionBackend = PostgresSessionStore(
                    PG_DSN, schema=schema, read_only=read_only, max_size=4
                )
            else:
                store = SessionStore(tmp_path / "recall.db", read_only=read_only)
            opened.append(store)
            return store

        yield open_
        for store in opened:
            store.close()
