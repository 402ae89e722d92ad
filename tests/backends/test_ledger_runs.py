"""The import ledger keeps keys ``<prefix>:<number>`` in runs (``import_runs``) on both
backends: found again as single keys are, forgotten and released as rows are, checked by
``check()``; the rows an older version wrote (``import_ledger``) still count, in a store
opened read-only as it is and in one migrated."""

from __future__ import annotations

from typing import Any

import pytest
from store_targets import StoreFactory, StoreTarget

from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.backends.postgres.schema import PG_SCHEMA_VERSION
from langchain_session_recall.backends.sqlite.schema import SCHEMA_VERSION


def _said(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _pairs(*keys: str) -> list[tuple[str, dict[str, Any]]]:
    return [(key, _said(f"line {key}")) for key in keys]


def _rows(target: StoreTarget, table: str) -> int:
    with target.sql() as sql:
        return int(sql.execute(f"SELECT count(*) FROM {table}")[0][0])


def test_numbered_keys_are_kept_in_runs_and_found_again(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    target = store_factory.target()
    store.add_session("s")
    store.add_session("t")
    keys = ["f.jsonl:1", "f.jsonl:3", "f.jsonl:4", "odd", "f.jsonl:9", "g:2", "f.jsonl:3"]
    assert len(store.import_messages("s", _pairs(*keys), source_kind="jsonl")) == 6
    # the numbered keys went into runs: f.jsonl:1..4; f.jsonl:9 comes after "odd" (a row of
    # its own), so its id does not follow the run's: a run again; g:2 (another prefix)
    assert (_rows(target, "import_runs"), _rows(target, "import_ledger")) == (3, 1)
    every = {"f.jsonl:1", "f.jsonl:3", "f.jsonl:4", "odd", "f.jsonl:9", "g:2"}
    assert store.imported_keys("jsonl", "s") == every
    assert store.imported_keys("jsonl", "s", among=["f.jsonl:2", "f.jsonl:4", "odd"]) == {
        "f.jsonl:4",
        "odd",
    }
    assert store.imported_keys("jsonl", "t", among=["f.jsonl:4"]) == set()
    assert store.imported_keys("other", "s") == set()
    assert store.import_messages("s", _pairs(*keys), source_kind="jsonl") == []
    # held in any session of the kind; a number between two of a run's is not held, nor is
    # another spelling of a held number
    assert store.import_messages("t", _pairs("f.jsonl:3"), source_kind="jsonl") == []
    assert (
        len(store.import_messages("t", _pairs("f.jsonl:2", "f.jsonl:03"), source_kind="jsonl")) == 2
    )
    assert store.imported_keys("jsonl", "t") == {"f.jsonl:2", "f.jsonl:03"}
    assert [m.content for m in store.get_messages("s")] == [
        f"line {k}" for k in ["f.jsonl:1", "f.jsonl:3", "f.jsonl:4", "odd", "f.jsonl:9", "g:2"]
    ]
    assert store.check().ok, store.check().problems


def test_a_forgotten_run_is_not_imported_again_until_released(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open()
    store.add_session("s")
    pairs = _pairs("t:1", "t:2", "t:5", "loose")
    assert len(store.import_messages("s", pairs, source_kind="codex")) == 4
    assert store.delete_sessions(["s"]) == 1
    assert store.check().ok, store.check().problems  # the runs name no message now
    store.add_session("s")
    assert store.import_messages("s", pairs, source_kind="codex") == []
    assert store.imported_keys("codex", "s") == {"t:1", "t:2", "t:5", "loose"}
    assert store.release_forgotten("codex", "s") == 4  # keys, whether in runs or rows
    assert len(store.import_messages("s", pairs, source_kind="codex")) == 4
    assert store.release_forgotten("codex", "s") == 0  # runs naming messages stay
    # replacing a session's messages forgets their keys as well
    store.replace_messages("s", [_said("new")])
    assert store.import_messages("s", pairs, source_kind="codex") == []
    assert store.check().ok, store.check().problems


def test_check_counts_the_keys_of_a_run_whose_message_another_client_deleted(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open()
    store.add_session("s")
    ids = store.import_messages("s", _pairs("t:1", "t:2", "t:3"), source_kind="codex")
    assert store.check().ok
    with store_factory.target().sql() as sql:
        sql.execute("DELETE FROM messages WHERE id = ?", (ids[1],))
        sql.execute("UPDATE sessions SET message_count = 2")
    report = store.check()
    assert not report.ok
    assert any(p.startswith("1 import ledger key(s) name a message") for p in report.problems)


def _as_before_runs(target: StoreTarget, store: SessionBackend, ids: list[int]) -> None:
    """Make ``target`` a store of the version before runs: no ``import_runs``, its version
    set back, the keys of ``ids`` as ``import_ledger`` rows (what that version wrote)."""
    store.close()
    before = SCHEMA_VERSION - 1 if target.backend == "sqlite" else PG_SCHEMA_VERSION - 1
    with target.sql() as sql, sql.transaction():
        sql.execute("DROP TABLE import_runs")
        sql.execute(
            "UPDATE session_recall_meta SET value = ? WHERE key = 'schema_version'", (str(before),)
        )
        sql.executemany(
            "INSERT INTO import_ledger (source_kind, external_key, session_id, message_id, "
            "imported_at) VALUES ('codex', ?, 's', ?, 1.0)",
            [(f"t:{n}", mid) for n, mid in zip((1, 2, 3), ids, strict=True)],
        )


@pytest.mark.parametrize("read_only", [True, False])
def test_the_ledger_rows_of_a_store_from_before_runs_still_count(
    store_factory: StoreFactory, read_only: bool
) -> None:
    target = store_factory.target()
    store = store_factory.open()
    store.add_session("s")
    ids = store.add_messages("s", [_said("one"), _said("two"), _said("three")])
    _as_before_runs(target, store, ids)
    store = store_factory.open(read_only=read_only)
    assert store.imported_keys("codex", "s") == {"t:1", "t:2", "t:3"}
    assert store.imported_keys("codex", "s", among=["t:2", "t:4"]) == {"t:2"}
    assert store.check().ok, store.check().problems
    if read_only:  # opened as it is: nothing made
        with target.sql() as sql:
            assert "import_runs" not in sql.tables()
        return
    pairs = _pairs("t:1", "t:2", "t:3", "t:4")
    assert len(store.import_messages("s", pairs, source_kind="codex")) == 1  # t:4 alone
    assert (_rows(target, "import_runs"), _rows(target, "import_ledger")) == (1, 3)
    assert store.imported_keys("codex", "s") == {"t:1", "t:2", "t:3", "t:4"}
    assert store.delete_sessions(["s"]) == 1
    store.add_session("s")
    assert store.import_messages("s", pairs, source_kind="codex") == []
    assert store.release_forgotten("codex", "s") == 4
    assert store.check().ok, store.check().problems
