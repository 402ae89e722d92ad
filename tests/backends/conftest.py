"""A ``store`` fixture over both backends: every test here runs on SQLite and on PostgreSQL.

The stores come from the shared ``backend_store`` fixture (``tests/conftest.py``,
``tests/store_targets.py``); ``pg_schema`` is shared from there too.
"""

from __future__ import annotations

import pytest

from langchain_session_recall.backends import SessionBackend


@pytest.fixture
def store(backend_store: SessionBackend) -> SessionBackend:
    """An empty store of each backend."""
    return backend_store
