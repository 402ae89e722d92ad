"""Counting what a search or ``session_show`` reads of a chain (issue 33; issue 31 item 2)."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_session_recall import SessionStore


def count_reads(
    monkeypatch: pytest.MonkeyPatch, store: SessionStore, *, refuse_whole: bool = False
) -> list[int]:
    """The ids ``store.chain_messages_by_id`` is asked for, as calls come (the list grows);
    with ``refuse_whole``, a read of a whole chain (``chain_messages``) fails the test."""
    read: list[int] = []
    by_id = store.chain_messages_by_id

    def counted(ids: Any) -> Any:
        read.extend(ids)
        return by_id(ids)

    def refused(*_: Any, **__: Any) -> Any:
        raise AssertionError("the whole chain was read")

    monkeypatch.setattr(store, "chain_messages_by_id", counted)
    if refuse_whole:
        monkeypatch.setattr(store, "chain_messages", refused)
    return read


def add_long_chain(store: SessionStore, session_id: str, words: dict[int, str]) -> None:
    """A session of 2,000 user messages (``step i`` and 200 characters, one a second from
    0), message ``i`` ending with ``words[i]``."""
    store.add_session(session_id, started_at=0.0)
    contents = [f"step {i} " + "x" * 200 + words.get(i, "") for i in range(2_000)]
    store.add_messages(
        session_id,
        [{"role": "user", "content": c, "timestamp": float(i)} for i, c in enumerate(contents)],
    )
