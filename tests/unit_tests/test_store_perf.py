"""Behaviour of the store's performance paths: batched ingest and the bounded rank window."""

from __future__ import annotations

import sqlite3

import pytest

from langchain_session_recall import InvalidMessageError, SessionNotFoundError, SessionStore
from langchain_session_recall.core.query import parse_query


def test_batched_ids_are_the_stored_rows_in_order(store: SessionStore) -> None:
    store.add_session("a")
    store.add_session("b")
    first = store.add_messages("a", [{"role": "user", "content": f"a{i}"} for i in range(5)])
    other = store.add_messages("b", [{"role": "user", "content": "b0"}])
    second = store.add_messages(
        "a",
        [
            {"role": "assistant", "content": "plain"},
            {"role": "user", "content": "部署 脚本 出错"},
            {"role": "tool", "content": "log", "tool_name": "terminal"},
        ],
    )
    stored = [(m.id, m.content) for m in store.get_messages("a")]
    assert [i for i, _ in stored] == first + second
    assert [c for _, c in stored][:5] == [f"a{i}" for i in range(5)]
    assert other[0] not in first + second
    assert store.get_session("a").message_count == 8  # type: ignore[union-attr]
    # the CJK bigram row is attached to the right message id
    hits = store.match_messages(parse_query("脚本"), "relaxed")
    assert [h.message_id for h in hits] == [second[1]]


def test_empty_batch_still_requires_the_session(store: SessionStore) -> None:
    with pytest.raises(SessionNotFoundError):
        store.add_messages("ghost", [])
    store.add_session("s")
    assert store.add_messages("s", []) == []


def test_invalid_message_in_a_batch_writes_nothing(store: SessionStore) -> None:
    store.add_session("s")
    with pytest.raises(InvalidMessageError):
        store.add_messages("s", [{"role": "user", "content": "fine"}, {"content": "no role"}])
    assert store.get_messages("s") == []
    conn = sqlite3.connect(store.path)
    assert (
        conn.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'fine'"
        ).fetchone()[0]
        == 0
    )


def _corpus(store: SessionStore) -> dict[str, list[int]]:
    """Ten sessions that all say 'deploy'; only two old ones also say 'zebrafish'."""
    ids: dict[str, list[int]] = {}
    for i in range(10):
        sid = f"s{i}"
        store.add_session(sid, started_at=float(i))
        extra = " zebrafish" if i in (0, 1) else ""
        ids[sid] = store.add_messages(
            sid,
            [
                {"role": "user", "content": f"deploy the service{extra}", "timestamp": i + 0.1},
                {"role": "assistant", "content": "deploy done", "timestamp": i + 0.2},
            ],
        )
    return ids


def test_queries_within_the_window_rank_every_match(store: SessionStore) -> None:
    _corpus(store)
    wide = store.match_messages(parse_query("deploy zebrafish"), "relaxed")
    store.rank_window = 20  # exactly the 20 matches: still exhaustive
    assert store.match_messages(parse_query("deploy zebrafish"), "relaxed") == wide
    assert len(wide) == 20


def test_common_words_are_dropped_when_selective_ones_remain(store: SessionStore) -> None:
    ids = _corpus(store)
    store.rank_window = 5  # 'deploy' (20 rows) is now 'common', 'zebrafish' (2 rows) is not
    hits = store.match_messages(parse_query("deploy zebrafish"), "relaxed")
    assert sorted(h.message_id for h in hits) == sorted([ids["s0"][0], ids["s1"][0]])


def test_only_common_words_rank_the_newest_matches(store: SessionStore) -> None:
    ids = _corpus(store)
    store.rank_window = 5
    hits = store.match_messages(parse_query("deploy"), "relaxed")
    newest = sorted(i for sid in ids for i in ids[sid])[-5:]
    assert sorted(h.message_id for h in hits) == newest


def test_strict_reading_is_never_narrowed_to_fewer_terms(store: SessionStore) -> None:
    ids = _corpus(store)
    store.rank_window = 1
    hits = store.match_messages(parse_query('"deploy the service" zebrafish'), "strict")
    # both old matches exceed the window of 1: only the newest one is ranked, never a hit
    # without every term of the strict query
    assert [h.message_id for h in hits] == [ids["s1"][0]]


def test_common_words_together_are_found_however_old(store: SessionStore) -> None:
    store.add_session("old", started_at=0.0)
    (both,) = store.add_messages("old", [{"role": "user", "content": "alpha beta", "timestamp": 1}])
    for i in range(12):
        store.add_session(f"s{i}", started_at=10.0 + i)
        store.add_messages(
            f"s{i}",
            [
                {"role": "user", "content": "alpha", "timestamp": 10 + i},
                {"role": "user", "content": "beta", "timestamp": 10.5 + i},
            ],
        )
    store.rank_window = 5  # alpha and beta both match 13 rows: neither is selective
    hits = store.match_messages(parse_query("alpha beta"), "relaxed")
    assert hits[0].message_id == both  # the only message with both words ranks first
    assert len(hits) == 1 + 5  # then the newest window of either word tops it up


def test_long_common_queries_fall_back_to_the_newest_window(store: SessionStore) -> None:
    ids = _corpus(store)
    store.rank_window = 5
    words = " ".join(["deploy", *(f"filler{i}" for i in range(12)), "zebrafish"])
    hits = store.match_messages(parse_query(words), "relaxed")
    # 14 words: no per-word probing, so the rare word is not singled out; the newest 5 rank
    newest = sorted(i for sid in ids for i in ids[sid])[-5:]
    assert sorted(h.message_id for h in hits) == newest
