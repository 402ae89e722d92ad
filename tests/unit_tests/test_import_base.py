"""Shared importer machinery: parent ordering, reports, progress, the ledger transaction."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.backends.sqlite.store import SessionStore
from langchain_session_recall.errors import InvalidMessageError
from langchain_session_recall.importers.base import (
    ImportReport,
    ImportSession,
    order_parents_first,
    progress,
    write_sessions,
)


def _s(sid: str, parent: str | None = None) -> ImportSession:
    return ImportSession(sid, "cli", parent_session_id=parent)


def test_parents_come_before_children_whatever_the_input_order() -> None:
    sessions = [_s("c", "b"), _s("b", "a"), _s("a"), _s("d", "a")]
    ordered, orphans = order_parents_first(sessions)
    ids = [s.id for s in ordered]
    assert orphans == []
    assert sorted(ids) == ["a", "b", "c", "d"]
    for s in ordered:
        if s.parent_session_id:
            assert ids.index(s.parent_session_id) < ids.index(s.id)


def test_missing_parent_makes_the_child_a_root_unless_the_store_has_it() -> None:
    ordered, orphans = order_parents_first(
        [_s("x", "gone"), _s("y", "known")], {"known"}.__contains__
    )
    assert orphans == ["x"]
    by_id = {s.id: s for s in ordered}
    assert by_id["x"].parent_session_id is None
    assert by_id["y"].parent_session_id == "known"


def test_parent_cycle_is_cut_and_reported() -> None:
    ordered, orphans = order_parents_first([_s("a", "b"), _s("b", "a")])
    assert len(ordered) == 2
    assert len(orphans) == 1
    roots = [s for s in ordered if s.parent_session_id is None]
    assert [s.id for s in roots] == orphans
    assert ordered[0].id == orphans[0]  # the cut session is the root, written first


def test_report_summary_lists_reasons_and_keeps_problem_details() -> None:
    r = ImportReport("jsonl", sessions=2, new_sessions=1, messages=5)
    r.skip("not valid JSON", "a.jsonl:3")
    r.skip("not valid JSON", "a.jsonl:9")
    r.skip("no known role", "b.jsonl:1")
    r.ignore("snapshot entry")
    line = r.summary()
    assert line.startswith("jsonl: 2 sessions (1 new), 5 messages imported")
    assert "skipped 3 (2 not valid JSON, 1 no known role)" in line
    assert "ignored 1 non-message entries" in line
    assert r.problems == [
        "a.jsonl:3: not valid JSON",
        "a.jsonl:9: not valid JSON",
        "b.jsonl:1: no known role",
    ]
    assert r.to_dict()["skipped"] == {"not valid JSON": 2, "no known role": 1}


def test_progress_is_silent_when_disabled_and_counts_when_enabled() -> None:
    quiet = io.StringIO()
    assert list(progress(range(3), enabled=False, stream=quiet)) == [0, 1, 2]
    assert quiet.getvalue() == ""
    loud = io.StringIO()
    assert list(progress(range(100), total=100, desc="x", enabled=True, stream=loud)) == list(
        range(100)
    )
    assert "100" in loud.getvalue()


def test_progress_defaults_to_off_when_the_stream_is_not_a_terminal() -> None:
    stream = io.StringIO()  # isatty() is False
    assert list(progress(range(60), stream=stream)) == list(range(60))
    assert stream.getvalue() == ""


def test_import_messages_skips_known_keys_and_is_atomic() -> None:
    store = SessionStore(":memory:")
    store.add_session("s")
    ok = [("k1", {"role": "user", "content": "one"}), ("k2", {"role": "assistant", "content": "2"})]
    assert len(store.import_messages("s", ok, source_kind="t")) == 2
    # A batch holding an invalid message writes nothing, not even its valid messages.
    bad = [("k3", {"role": "user", "content": "three"}), ("k4", {"role": "wizard"})]
    with pytest.raises(InvalidMessageError):
        store.import_messages("s", bad, source_kind="t")
    assert [m.content for m in store.get_messages("s")] == ["one", "2"]
    assert store.imported_keys("t", "s") == {"k1", "k2"}
    again = [*ok, ("k3", {"role": "user", "content": "three"})]
    assert len(store.import_messages("s", again, source_kind="t")) == 1
    assert [m.content for m in store.get_messages("s")] == ["one", "2", "three"]
    assert store.get_session("s").message_count == 3  # type: ignore[union-attr]


def test_a_ledger_batch_longer_than_one_insert_statement_is_kept_whole(
    backend_store: SessionBackend,
) -> None:
    """SQLite writes ledger rows a hundred to a statement: a batch of 250 (three statements,
    the last one short, one key twice) keeps each key once, and running it again adds
    nothing, on either backend."""
    backend_store.add_session("s")
    pairs = [(f"line-{n}", {"role": "user", "content": f"message {n}"}) for n in range(250)]
    pairs.append(("line-7", {"role": "user", "content": "line 7 again"}))
    assert len(backend_store.import_messages("s", pairs, source_kind="t")) == 250
    assert backend_store.imported_keys("t", "s") == {f"line-{n}" for n in range(250)}
    assert backend_store.import_messages("s", pairs, source_kind="t") == []
    assert backend_store.get_session("s").message_count == 250  # type: ignore[union-attr]
    ids = [m.id for m in backend_store.get_messages("s")]
    assert len(set(ids)) == 250


def test_ledger_keys_are_per_source_kind() -> None:
    store = SessionStore(":memory:")
    store.add_session("s")
    pair = [("k", {"role": "user", "content": "hi"})]
    assert len(store.import_messages("s", pair, source_kind="a")) == 1
    assert len(store.import_messages("s", pair, source_kind="b")) == 1
    assert store.import_messages("s", pair, source_kind="a") == []


def test_write_sessions_keeps_good_messages_of_a_batch_with_a_bad_one() -> None:
    store = SessionStore(":memory:")
    session = ImportSession("s", "import")
    session.messages = [
        ("1", {"role": "user", "content": "keep me"}),
        ("2", {"role": "user", "content": "bad", "timestamp": "yesterday"}),
        ("3", {"role": "assistant", "content": "me too"}),
    ]
    report = write_sessions(store, [session], ImportReport("t"))
    assert report.messages == 2
    assert report.skipped == {"invalid message": 1}
    assert [m.content for m in store.get_messages("s")] == ["keep me", "me too"]
    # The bad one is not in the ledger: a fixed source would bring it in on the next run.
    assert store.imported_keys("t", "s") == {"1", "3"}


def test_write_sessions_reports_orphans_and_imports_them_as_roots() -> None:
    store = SessionStore(":memory:")
    child = ImportSession("child", "cli", parent_session_id="absent")
    child.messages = [("m", {"role": "user", "content": "hello"})]
    report = write_sessions(store, [child], ImportReport("t"))
    assert report.orphans == ["child"]
    assert store.get_session("child").parent_session_id is None  # type: ignore[union-attr]
    assert "1 imported as a root (parent missing)" in report.summary()


def test_write_sessions_streams_a_generator_in_groups() -> None:
    store = SessionStore(":memory:")
    store.add_session("known", source="cli")
    pulled: list[str] = []

    def stream() -> Iterator[ImportSession]:
        for sid, parent in [
            ("a", None),
            ("b", "a"),  # its parent came before it
            ("c", "known"),  # its parent is in the store
            ("d", "e"),  # its parent comes later: a root, reported
            ("e", None),
            ("f", "f"),  # its own parent
        ]:
            pulled.append(sid)
            yield ImportSession(
                sid, "cli", [(f"{sid}:1", {"role": "user", "content": sid})], parent
            )

    report = write_sessions(store, stream(), ImportReport("custom"))
    assert pulled == ["a", "b", "c", "d", "e", "f"]
    assert (report.sessions, report.messages) == (6, 6)
    assert report.orphans == ["d", "f"]
    assert [store.get_session(s).parent_session_id for s in "bcdf"] == ["a", "known", None, None]  # type: ignore[union-attr]


def test_the_summary_counts_in_the_singular_when_there_is_one() -> None:
    one = ImportReport("jsonl", sessions=1, new_sessions=1, messages=1, orphans=["s1"])
    assert one.summary() == (
        "jsonl: 1 session (1 new), 1 message imported; 1 imported as a root (parent missing)"
    )
    two = ImportReport("jsonl", sessions=2, new_sessions=0, messages=2)
    assert two.summary() == "jsonl: 2 sessions (0 new), 2 messages imported"


def test_the_demo_names_one_foreign_session_in_the_singular(tmp_path: Path) -> None:
    from langchain_session_recall.demo import load_demo, open_demo_store

    path = tmp_path / "demo.db"
    with SessionStore(path) as store:
        load_demo(store)
        store.delete_sessions([store.all_session_ids()[0]])
        store.add_session("mine", title="not the demo's")
    with pytest.raises(Exception, match=r"it holds 1 session that is not the demo's"):
        open_demo_store(path)
