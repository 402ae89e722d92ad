"""benchmarks/perf/breakdown.py: each stage it times runs, and each one it turns off changes
the work (a stage that changed nothing would explain nothing)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from langchain_session_recall import SessionStore
from langchain_session_recall.backends.sqlite.files import read_only_uri
from langchain_session_recall.errors import EmptyQueryError
from langchain_session_recall.search.pipeline import search_sessions
from langchain_session_recall.search.request import SearchRequest


@pytest.fixture(scope="module")
def perf_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from benchmarks.perf import corpus

    path = tmp_path_factory.mktemp("breakdown") / "corpus.db"
    store = SessionStore(path)
    for spec in corpus.generate(1, 3_000):
        store.add_session(spec.session_id, **spec.kwargs)
        store.add_messages(spec.session_id, spec.messages)
    store.close()
    return path


def test_every_stage_runs_on_every_query(perf_db: Path) -> None:
    from benchmarks.perf import breakdown, corpus

    store = SessionStore(perf_db)
    conn = sqlite3.connect(read_only_uri(perf_db), uri=True)
    stages = breakdown.stages(store, conn)
    assert next(iter(stages)) == "reference"
    for run in stages.values():
        for _, query in corpus.QUERIES[:20]:
            run(query)
    assert breakdown.cpu_ms_per_query(stages["reference"], ["deploy"], passes=2) > 0
    conn.close()


def test_turning_the_per_session_hits_off_changes_the_candidates(perf_db: Path) -> None:
    from benchmarks.perf import corpus

    store = SessionStore(perf_db)
    changed = 0
    for _, query in corpus.QUERIES:
        try:
            full = search_sessions(store, SearchRequest(query, k=3))
        except EmptyQueryError:  # nothing searchable: nothing to compare
            continue
        fewer = search_sessions(store, SearchRequest(query, k=3, hits_per_session=None))
        assert len(fewer.sessions) <= len(full.sessions)
        changed += len(fewer.sessions) < len(full.sessions)
    assert changed > 10


def test_a_missing_database_is_said_and_not_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks.perf import breakdown

    assert breakdown.main([str(tmp_path / "none.db")]) == 0
    assert "no database at" in capsys.readouterr().out
