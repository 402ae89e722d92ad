"""``session_show`` reads the messages its windows show, not the whole chain (issue 33, issue
31 item 2): the chain's order first (no text), then the messages around the requested ones.
The payload is what reading the whole chain gives."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from langchain_session_recall import SessionStore
from langchain_session_recall.core.redaction import redact_secrets
from langchain_session_recall.recall.show import show_session
from tests.chain_reads import add_long_chain, count_reads

KEY = "sk-" + "abcdefghij" * 4


def _long_store(path: Path) -> SessionStore:
    store = SessionStore(path)
    add_long_chain(store, "long", {1_000: f" my key {KEY}"})
    store.add_session("child", parent_session_id="long", started_at=10.0)
    store.add_messages(
        "child",
        [{"role": "assistant", "content": f"sub step {i}", "timestamp": 999.5} for i in range(3)],
    )
    return store


def _whole(store: SessionStore, monkeypatch: pytest.MonkeyPatch, **args: Any) -> Any:
    """The payload with every message read (the outline refused, the fallback taken)."""
    with monkeypatch.context() as patch:
        patch.setattr(store, "chain_messages_by_id", lambda ids: [])
        return show_session(store, "long", **args)


@pytest.mark.parametrize(
    "args",
    [
        {"message_ids": [1_001], "context": 3},
        {"message_ids": [1_001, 5, 1_999], "context": 10, "max_chars": 2_000},
        {"message_ids": [1_001], "include_start": True, "context": 0},
        {"message_ids": [10**9], "include_start": True},
        {},
    ],
)
def test_a_show_reads_the_messages_its_windows_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: dict[str, Any]
) -> None:
    with _long_store(tmp_path / "long.db") as store:
        read = count_reads(monkeypatch, store, refuse_whole=True)
        shown = show_session(store, "long", redact=redact_secrets, **args)
        assert 0 < len(read) <= 6 * 21
        assert shown["message_count"] == 2_003
        monkeypatch.undo()
        assert shown == _whole(store, monkeypatch, redact=redact_secrets, **args)
        assert KEY not in shown["transcript"]


def test_a_message_deleted_meanwhile_makes_it_read_the_chain_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _long_store(tmp_path / "long.db") as store:
        outline = store.chain_outline

        def stale(root: str, **kwargs: Any) -> Any:
            order = outline(root, **kwargs)
            with contextlib.closing(sqlite3.connect(tmp_path / "long.db")) as other, other:
                # another writer deletes a message after the order was read
                other.execute("DELETE FROM messages WHERE id = ?", (order[1_000][0],))
            return order

        monkeypatch.setattr(store, "chain_outline", stale)
        shown = show_session(store, "long", message_ids=[1_000, 1_002], context=1)
        assert shown["message_count"] == 2_002
        assert "step 999 " in shown["transcript"] and "step 1001 " in shown["transcript"]


def test_the_old_import_path_is_the_same_function() -> None:
    """``session_window`` moved under ``recall/`` (``recall/show.py``); outside code that
    imports it from its old path gets the same function and bounds."""
    from langchain_session_recall import session_window
    from langchain_session_recall.recall import show

    assert session_window.show_session is show.show_session
    assert {name: getattr(session_window, name) for name in session_window.__all__} == {
        name: getattr(show, name) for name in session_window.__all__
    }
