"""Messages converted to rows ahead of the write (an import's worker process does it while the
importing process writes): the store takes a row as it is, a fork made of rows still finds
the history it copied, and what ``to_row`` refuses is left for the write to refuse and report."""

from __future__ import annotations

import pickle

from langchain_session_recall import SessionStore
from langchain_session_recall.importers.records import (
    UNDATED,
    ImportSession,
    as_rows,
    drop_copied_prefix,
)
from langchain_session_recall.messages import MessageRow, to_row

_CALL = {"id": "call_1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}


def _history() -> list[tuple[str, dict[str, object]]]:
    return [
        ("1", {"role": "user", "content": "list the files", "timestamp": 1.0}),
        ("2", {"role": "assistant", "content": "", "tool_calls": [_CALL], "timestamp": 2.0}),
        ("3", {"role": "tool", "content": "a.py", "tool_call_id": "call_1", "timestamp": 3.0}),
    ]


def test_a_row_is_taken_as_it_is_and_pickles_to_an_equal_row() -> None:
    row = to_row({"role": "assistant", "content": "x", "tool_calls": [_CALL], "timestamp": 4.0})
    assert to_row(row) is row
    assert pickle.loads(pickle.dumps(row)) == row
    assert isinstance(row.tool_calls, str)


def test_dated_dicts_become_rows_and_the_rest_stay_as_they_were() -> None:
    undated = {"role": "user", "content": "when?", "timestamp": 5.0, UNDATED: "neighbour"}
    refused = {"role": "robot", "content": "?", "timestamp": 6.0}
    no_time = {"role": "user", "content": "later"}
    rows = as_rows([*_history(), ("u", undated), ("r", refused), ("n", no_time)])
    assert [k for k, _ in rows] == ["1", "2", "3", "u", "r", "n"]
    assert all(m == to_row(d) for (_, m), (_, d) in zip(rows[:3], _history(), strict=True))
    assert all(isinstance(m, MessageRow) for _, m in rows[:3])
    assert [m for _, m in rows[3:]] == [undated, refused, no_time]


def test_a_fork_of_rows_drops_the_history_it_copied_from_dicts_rows_or_the_store() -> None:
    store = SessionStore(":memory:")
    store.add_session("parent")
    store.import_messages("parent", _history(), source_kind="x")
    originals = {
        "dicts": [m for _, m in _history()],
        "rows": [m for _, m in as_rows(_history())],
        "stored": store.get_messages("parent"),
    }
    for name, parent in originals.items():
        fork = ImportSession(
            "fork",
            "x",
            as_rows(
                [
                    *_history(),
                    ("4", {"role": "user", "content": "and the tests?", "timestamp": 7.0}),
                ]
            ),
            parent_session_id="parent",
        )
        assert drop_copied_prefix(fork, parent) == 3, name
        assert [k for k, _ in fork.messages] == ["4"], name


def test_rows_are_stored_as_the_dicts_they_were_made_of() -> None:
    store = SessionStore(":memory:")
    for sid, messages in (("dicts", _history()), ("rows", as_rows(_history()))):
        store.add_session(sid)
        store.import_messages(sid, messages, source_kind=sid)
    said = [
        [
            (m.role, m.content, m.tool_calls, m.tool_call_id, m.timestamp)
            for m in store.get_messages(sid)
        ]
        for sid in ("dicts", "rows")
    ]
    assert said[0] == said[1] and len(said[0]) == 3
