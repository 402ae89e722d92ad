"""Shared fixtures: stores built on real temporary SQLite files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_session_recall import SessionStore
from langchain_session_recall.demo import load_demo


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    """An empty store in a temporary file."""
    with SessionStore(tmp_path / "recall.db") as s:
        yield s


@pytest.fixture
def demo_store(tmp_path: Path) -> Iterator[SessionStore]:
    """A store holding the embedded demo sessions."""
    with SessionStore(tmp_path / "demo.db") as s:
        load_demo(s)
        yield s
