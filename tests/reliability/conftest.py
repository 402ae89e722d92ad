"""Fixtures of the reliability suite (its figures are reported by ``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from reliability.reliability_support import load_corpus
from store_targets import BACKENDS, StoreFactory, StoreTarget

from langchain_session_recall.backends import SessionBackend


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
