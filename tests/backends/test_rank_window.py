"""``rank_window`` on both backends: a word found in more messages than the window is ranked
over its newest matches only; within the window every match is ranked."""

from __future__ import annotations

from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.search.query import parse_query


def _deploys(store: SessionBackend) -> list[int]:
    """Ten sessions of two 'deploy' messages (20 matches), oldest first; their message ids."""
    ids: list[int] = []
    for i in range(10):
        store.add_session(f"s{i}", started_at=float(i))
        ids += store.add_messages(
            f"s{i}",
            [
                {"role": "user", "content": "deploy the service", "timestamp": i + 0.1},
                {"role": "assistant", "content": "deploy done", "timestamp": i + 0.2},
            ],
        )
    return ids


def test_a_window_as_large_as_the_matches_ranks_them_all(backend_store: SessionBackend) -> None:
    ids = _deploys(backend_store)
    backend_store.rank_window = 20
    hits = backend_store.match_messages(parse_query("deploy"), "relaxed")
    assert sorted(h.message_id for h in hits) == sorted(ids)


def test_a_common_word_is_ranked_over_its_newest_matches(backend_store: SessionBackend) -> None:
    ids = _deploys(backend_store)
    backend_store.rank_window = 5
    hits = backend_store.match_messages(parse_query("deploy"), "relaxed", limit=3)
    # the best 3 of the newest 5 matches, never an older one
    assert len(hits) == 3
    assert {h.message_id for h in hits} <= set(sorted(ids)[-5:])


def test_a_strict_reading_keeps_every_term_within_the_window(
    backend_store: SessionBackend,
) -> None:
    ids = _deploys(backend_store)
    backend_store.rank_window = 1
    hits = backend_store.match_messages(parse_query('"deploy the service"'), "strict")
    assert [h.message_id for h in hits] == [ids[-2]]  # the newest message with the phrase
