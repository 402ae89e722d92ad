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


_DESIGN = Path(__file__).resolve().parents[2] / "docs" / "design.md"


@pytest.mark.slow
def test_the_documented_recipe_runs_the_suite_outside_this_repository(tmp_path: Path) -> None:
    """docs/design.md's example, as a third party would run it: its own test module, no
    conftest or configuration of ours, pytest's default plugins."""
    import re
    import subprocess
    import sys

    text = _DESIGN.read_text("utf-8")
    section = text[text.index("### The conformance suite") :]
    (recipe,) = re.findall(r"```python\n(.*?)```", section[: section.index("\n### ", 5)], re.S)
    (tmp_path / "test_my_store.py").write_text(recipe, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_store.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    expected = sum(name.startswith("test_") for name in dir(SessionBackendTests))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert f"{expected} passed" in out.stdout, out.stdout[-3000:]
