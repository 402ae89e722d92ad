"""Shared fixtures: stores built on real temporary SQLite files, and stores of both backends;
the ``slow`` marker (skipped unless ``--run-slow`` or ``SESSION_RECALL_RUN_SLOW=1``); the
reliability suite's figures, summed over pytest-xdist's workers when the run is parallel (``-n``);
Hypothesis without its per-example deadline (a timing check: speed is measured in benchmarks/,
and CI runs the tests on busy cores, where a 200 ms deadline fails at random).

``store`` and ``demo_store`` are SQLite stores (the unit tests). ``backend_store`` and
``store_factory`` run a test once per backend, SQLite and PostgreSQL (see ``store_targets.py``:
the PostgreSQL cases need ``SESSION_RECALL_PG_DSN`` and are skipped with that reason without
it; each gets an empty database of its own, emptied again afterwards).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from pg_support import drop_schema
from reliability.reliability_support import FIGURES
from store_targets import BACKENDS, Backend, StoreFactory

from langchain_session_recall import SessionStore
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.demo import load_demo

settings.register_profile("session-recall", deadline=None)
settings.load_profile("session-recall")

RUN_SLOW = "SESSION_RECALL_RUN_SLOW"
"""Set to 1 to run the tests marked ``slow`` (``.ci/run`` does), as ``--run-slow`` does."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=os.environ.get(RUN_SLOW, "").strip().lower() in {"1", "true", "yes"},
        help=f"also run the tests marked slow, as CI does (or set {RUN_SLOW}=1)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason=f"slow: run with --run-slow or {RUN_SLOW}=1 (CI does)")
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(skip)


_WORKER_FIGURES = "reliability_figures"
"""Key of a pytest-xdist worker's figures in what it hands back to the controller."""


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: the controller reports
        workeroutput[_WORKER_FIGURES] = dict(FIGURES)
        return
    target = os.environ.get("RELIABILITY_REPORT")
    if target and FIGURES:
        Path(target).write_text(json.dumps(dict(sorted(FIGURES.items())), indent=2) + "\n")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist's controller: add a finished worker's figures to the run's."""
    FIGURES.update(getattr(node, "workeroutput", {}).get(_WORKER_FIGURES, {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIGURES:
        return
    terminalreporter.section("reliability figures")
    for name in sorted(FIGURES):
        terminalreporter.write_line(f"{name:45} {FIGURES[name]:>12,}")


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


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    """``"sqlite"`` and ``"postgres"``: the test runs once on each."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def store_factory(backend: Backend, tmp_path: Path) -> Iterator[StoreFactory]:
    """Fresh stores of the test's backend: ``.open(name)``, ``.target(name)`` (see
    ``store_targets.StoreFactory``); all closed after the test, their databases emptied."""
    factory = StoreFactory(backend, tmp_path)
    try:
        yield factory
    finally:
        factory.cleanup()


@pytest.fixture
def pg_store_factory(tmp_path: Path) -> Iterator[StoreFactory]:
    """Fresh PostgreSQL stores, for the tests of PostgreSQL-only properties (mark them with
    ``store_targets.PG_ONLY``)."""
    factory = StoreFactory("postgres", tmp_path)
    try:
        yield factory
    finally:
        factory.cleanup()


@pytest.fixture
def backend_store(store_factory: StoreFactory) -> SessionBackend:
    """An empty store of each backend."""
    return store_factory.open()


@pytest.fixture
def pg_schema() -> Iterator[str]:
    """A fresh PostgreSQL schema name, dropped after the test."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    yield schema
    drop_schema(schema)
