"""Issue 23 §4: ``NOT`` leaves out sessions, not messages, on both backends.

``python NOT django`` returns no session that says django anywhere (another message, a
sub-session, its title); a leading ``NOT python`` leaves out the sessions that mention python
from what the other words find, or, alone, from the recent sessions.
"""

from __future__ import annotations

from store_targets import StoreFactory

from langchain_session_recall.recall.build import search_results


def _fill(store) -> None:  # type: ignore[no-untyped-def]
    def add(sid: str, texts: list[str], title: str | None = None, parent: str | None = None,
            at: float = 1000.0) -> None:  # fmt: skip
        store.add_session(sid, title=title, parent_session_id=parent, started_at=at)
        store.add_messages(
            sid, [{"role": "user", "content": t, "timestamp": at + i} for i, t in enumerate(texts)]
        )

    add("mixed", ["python script to parse logs", "and the django settings too"], at=1000.0)
    add("plain", ["python packaging with uv"], at=2000.0)
    add("titled", ["python 3.12 upgrade notes"], title="Django upgrade", at=3000.0)
    add("parent", ["python virtualenv trouble"], at=4000.0)
    add("child", ["the django admin broke"], parent="parent", at=4001.0)
    add("djangoonly", ["django migrations squashed"], at=5000.0)
    add("other", ["kafka consumer lag"], at=6000.0)


def _ids(store, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [r.metadata["session_id"] for r in search_results(store, query, k=5)]


def test_not_leaves_out_every_session_that_mentions_the_word(store_factory: StoreFactory) -> None:
    store = store_factory.open("not")
    _fill(store)
    assert sorted(_ids(store, "python")) == ["mixed", "parent", "plain", "titled"]
    assert _ids(store, "python NOT django") == ["plain"]
    assert _ids(store, "how do I package python NOT django") == ["plain"]  # relaxed reading too


def test_a_leading_not_excludes(store_factory: StoreFactory) -> None:
    store = store_factory.open("not")
    _fill(store)
    assert _ids(store, "NOT python django") == ["djangoonly"]
    alone = _ids(store, "NOT python")  # the recent sessions that never mention python
    assert alone == ["other", "djangoonly"]


def test_a_leading_not_lists_a_session_that_has_no_messages(store_factory: StoreFactory) -> None:
    store = store_factory.open("not")
    _fill(store)
    store.add_session("empty", title="an empty session", started_at=7000.0)
    results = search_results(store, "NOT python", k=5)
    assert [r.metadata["session_id"] for r in results] == ["empty", "other", "djangoonly"]
    assert results[0].page_content == ""
