"""Parent cycles written by another client (issue 18 §5), on both backends: a cycle has a
deterministic root, its oldest member, and search and recent mode agree on it (the store's own
lineage and recent listing of cycles: the conformance suite, ``langchain_session_recall.testing``)."""

from __future__ import annotations

from typing import Any

from langchain_session_recall import SessionRecallRetriever
from langchain_session_recall.search.pipeline import search_sessions
from langchain_session_recall.testing import set_parent_directly


def _session(store: Any, sid: str, started_at: float, text: str) -> None:
    store.add_session(sid, started_at=started_at, title=sid)
    store.add_messages(sid, [{"role": "user", "content": text, "timestamp": started_at}])


def _cycle(store: Any) -> None:
    _session(store, "c-alpha", 300.0, "alpha in the late member")
    _session(store, "c-zulu", 100.0, "alpha in the first member")
    _session(store, "c-mike", 200.0, "alpha in the middle member")
    _session(store, "below", 400.0, "bravo hanging below the cycle")
    _session(store, "plain", 50.0, "charlie in a plain session")
    store.add_session("below", parent_session_id="c-mike")
    set_parent_directly(store, "c-alpha", "c-zulu")
    set_parent_directly(store, "c-zulu", "c-mike")
    set_parent_directly(store, "c-mike", "c-alpha")


def test_a_cycle_resolves_to_its_oldest_member_in_search(store: Any) -> None:
    _cycle(store)
    for word in ("late", "first", "middle", "bravo"):
        assert [r.root_id for r in search_sessions(store, word).sessions] == ["c-zulu"]
    assert store.root_of("c-alpha") == store.root_of("below") == "c-zulu"
    doc = SessionRecallRetriever(store=store).invoke("bravo")[0]
    assert doc.metadata["session_id"] == "c-zulu"
    assert "bravo hanging below" in doc.page_content and "alpha in the late" in doc.page_content


def test_a_cycle_stays_in_recent_mode_under_the_same_root(store: Any) -> None:
    _cycle(store)
    retriever = SessionRecallRetriever(store=store, k=5)
    assert [d.metadata["session_id"] for d in retriever.invoke("")] == ["c-zulu", "plain"]
    # The current conversation inside the cycle hides the whole cycle, as for any chain.
    docs = retriever.invoke("", current_session_id="c-alpha")
    assert [d.metadata["session_id"] for d in docs] == ["plain"]


def test_a_session_that_is_its_own_parent_is_a_root_everywhere(store: Any) -> None:
    _session(store, "selfish", 10.0, "delta alone")
    set_parent_directly(store, "selfish", "selfish")
    assert [r.root_id for r in search_sessions(store, "delta").sessions] == ["selfish"]
