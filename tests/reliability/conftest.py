"""Fixtures of the reliability suite, and the report of its figures (see reliability_support)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from reliability.reliability_support import FIGURES, load_corpus
from store_targets import BACKENDS, StoreFactory, StoreTarget

from langchain_session_recall.backends import SessionBackend


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIGURES:
        return
    terminalreporter.section("reliability figures")
    for name in sorted(FIGURES):
        terminalreporter.write_line(f"{name:45} {FIGURES[name]:>12,}")


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    target = os.environ.get("RELIABILITY_REPORT")
    if target and FIGURES:
        Path(target).write_text(json.dumps(dict(sorted(FIGURES.items())), indent=2) + "\n")


@pytest.fixture(scope="module", params=BACKENDS)
def corpus(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[SessionBackend, StoreTarget]]:
    """A store of each backend holding :data:`CORPUS`, and where it lives; shared by a module's
    tests (read it, do not write)."""
    factory = StoreFactory(request.param, tmp_path_factory.mktemp("corpus"))
    try:
        store = factory.open("corpus")
        load_corpus(store)
        yield store, factory.target("corpus")
    finally:
        factory.cleanup()


@pytest.fixture(scope="module")
def corpus_store(corpus: tuple[SessionBackend, StoreTarget]) -> SessionBackend:
    """The store of :func:`corpus`."""
    return corpus[0]
