"""benchmarks/perf/run.py and its PostgreSQL side: the plain-SQL baselines of the ingest ratios
write what the store writes (a baseline that wrote less would flatter nothing and prove
nothing), the bare PostgreSQL query finds what the store indexes, and a rerun keeps what was
written by hand around its figures."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.pg_support import PG_DSN, SKIP_PG, drop_schema

SIZE = 400  # messages: a few dozen sessions, sub-agents and CJK ones among them


def _run() -> Any:
    from benchmarks.perf import run

    return run


# ----------------------------------------------------------------------------- splice


def test_a_rerun_replaces_only_the_figures_between_the_markers() -> None:
    run = _run()
    doc = f"# Title\n\nhand-written intro\n\n{run.BEGIN}\nold figures\n{run.END}\n\nhistory\n"
    out = run.splice(doc, "new figures")
    assert (
        out == f"# Title\n\nhand-written intro\n\n{run.BEGIN}\nnew figures\n{run.END}\n\nhistory\n"
    )


def test_a_new_report_is_the_figures_between_markers() -> None:
    run = _run()
    assert run.splice("", "figures") == f"{run.BEGIN}\nfigures\n{run.END}\n"


# ----------------------------------------------------------------------------- report


def _result(backend: str, size: int, ours_p50: float, **extra: Any) -> dict[str, Any]:
    lat = {"ours": {"p50": ours_p50, "p95": 2 * ours_p50}, "floor": {"p50": 0.01, "p95": 0.05}}
    return {
        "backend": backend,
        "size": size,
        "label": _run()._size_label(size),
        "summary": {"latency": lat, "cpu": lat},
        **extra,
    }


def test_postgresql_is_compared_with_sqlite_at_the_same_size_only() -> None:
    report = _run().backends_report
    results = [
        _result("sqlite", 200_000, 0.010),
        _result("postgresql", 200_000, 0.025),
        _result("postgresql", 1_000_000, 0.050),  # no SQLite figure at 1M
    ]
    lines = report.goals_lines(results)
    assert (
        "| PostgreSQL 200k: ours p50 <= 2x SQLite's (wall, separate runs) | 2.50x | NO |" in lines
    )
    assert not [ln for ln in lines if "PostgreSQL 1M" in ln]


def test_the_interleaved_backends_set_their_ratio() -> None:
    """Where the run timed both backends per query in one process, that ratio is the goal's:
    separate runs minutes apart see different loads on a shared machine."""
    report = _run().backends_report
    cross = {"medians": {"postgresql": [0.03, 0.05, 0.09], "sqlite": [0.01, 0.02, 0.04]}}
    results = [
        _result("sqlite", 1_000_000, 0.050),
        _result("postgresql", 1_000_000, 0.060, cross=cross),  # separately: 1.2x
    ]
    lines = report.goals_lines(results)
    assert "| PostgreSQL 1M: ours p50 <= 2x SQLite's (wall, interleaved) | 2.50x | NO |" in lines


def test_the_sqlite_search_goals_are_ratios_to_the_bare_query() -> None:
    lines = _run().backends_report.goals_lines([_result("sqlite", 200_000, 0.004)])
    assert "| SQLite 200k: ours p50 <= 0.5x the bare query's (CPU) | 0.40x | yes |" in lines
    assert "| SQLite 200k: ours p95 <= 1.0x the bare query's (CPU) | 0.16x | yes |" in lines


def test_the_postgresql_index_counts_the_stored_tsvectors() -> None:
    report = _run().backends_report
    stats = {
        "total_bytes": 1000,
        "index_bytes": 300,
        "gin_bytes": 200,
        "tsv_bytes": 150,
        "fts_bytes": 350,
    }
    assert report.sizes({"backend": "postgresql", "stats": stats}) == (1000, 350, 450)
    lite = {"file_bytes": 900, "groups": {"fts": 100, "btree_indexes": 40}}
    assert report.sizes({"stats": lite}) == (900, 100, 140)  # saved before "backend" existed


def test_a_size_without_an_ingest_comparison_has_no_ingest_row_nor_goal() -> None:
    report = _run().backends_report
    result = _result("postgresql", 1_000_000, 0.1, ingest={})
    assert len(report.ingest_lines([result], 100)) == 2  # the header and its rule
    assert not [ln for ln in report.goals_lines([result]) if "ingest" in ln]


# ----------------------------------------------------------------------------- SQLite baseline


def _sqlite_rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(path)
    tables = [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%' "
            "AND name NOT LIKE 'sqlite_%' AND name <> 'session_recall_meta'"
        )
    ]
    rows = {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
    for word in ("deploy", "nginx", "服务"):
        rows[f"fts:{word}"] = conn.execute(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid",
            (f'"{word}"',),
        ).fetchall()
    conn.close()
    return rows


def test_the_sqlite_plain_baseline_writes_what_the_store_writes(tmp_path: Path) -> None:
    run = _run()
    ours, plain = tmp_path / "ours.db", tmp_path / "plain.db"
    built = run.worker_build(str(ours), SIZE, 1, fts=True, batch=1)
    baseline = run.worker_build_plain(str(plain), SIZE, 1, batch=1)
    assert built["messages"] == baseline["messages"] == SIZE
    expected, got = _sqlite_rows(ours), _sqlite_rows(plain)
    assert expected["messages"]
    assert got == expected


# ----------------------------------------------------------------------------- PostgreSQL

needs_pg = pytest.mark.skipif(not PG_DSN, reason=SKIP_PG)


def _pg_rows(schema: str) -> dict[str, list[tuple[Any, ...]]]:
    import psycopg

    with psycopg.connect(PG_DSN) as conn:
        conn.execute(f'SET search_path TO "{schema}"')
        return {
            "sessions": conn.execute(
                "SELECT id, source, user_id, model, title, parent_session_id, started_at, "
                "end_reason, message_count, header_tsv::text FROM sessions ORDER BY id"
            ).fetchall(),
            "messages": conn.execute(
                "SELECT session_id, role, content, tool_call_id, tool_calls, tool_name, "
                "timestamp, seq, tsv::text, cjk_tsv::text FROM messages ORDER BY id"
            ).fetchall(),
        }


@pytest.fixture
def two_schemas() -> Any:
    names = [f"t_perf_{uuid.uuid4().hex[:10]}" for _ in range(2)]
    yield names
    for name in names:
        drop_schema(name)


@needs_pg
@pytest.mark.enable_socket
@pytest.mark.parametrize("batch", [1, 7])
def test_the_postgresql_plain_baseline_writes_what_the_store_writes(
    two_schemas: list[str], batch: int
) -> None:
    pg = _run().pg
    ours, plain = two_schemas
    built = pg.worker_build(PG_DSN, ours, SIZE, 1, batch)
    baseline = pg.worker_build_plain(PG_DSN, plain, SIZE, 1, batch)
    assert built["messages"] == baseline["messages"] == SIZE
    expected, got = _pg_rows(ours), _pg_rows(plain)
    assert any(row[-1] for row in expected["messages"])  # CJK messages are among them
    assert got == expected


@needs_pg
@pytest.mark.enable_socket
def test_the_bare_postgresql_query_finds_what_the_store_indexes(two_schemas: list[str]) -> None:
    import psycopg

    run = _run()
    import corpus  # benchmarks/perf/corpus.py, on the path once run.py is imported

    schema = two_schemas[0]
    run.pg.worker_build(PG_DSN, schema, SIZE, 1, 50)
    found = 0
    with psycopg.connect(PG_DSN) as conn:
        conn.execute(f'SET search_path TO "{schema}"')
        for _, question in corpus.QUERIES[:40]:
            rows = conn.execute(run.pg.bare_sql(), (run.pg.bare_expression(question),)).fetchall()
            assert len(rows) <= run.pg.BARE_LIMIT
            found += bool(rows)
    assert found >= 20
    assert run.pg.cached_builds(PG_DSN, schema) == []  # nothing cached for a test schema
