"""Issue 23 §1: a long session must not crowd out the answer (both backends).

A search used to keep the best 100 message hits per term over the whole store. bm25 favours
short messages, so a session of many short lines that repeat a word took every hit of it and
the session holding the answer never reached the ranking. Candidate generation is now complete
at session level: every session with a matching message competes.
"""

from __future__ import annotations

from langchain_session_recall import SessionRecallRetriever
from langchain_session_recall.backends import SessionBackend

NOW = 1_790_000_000.0
DAY = 86_400.0


def _session(store: SessionBackend, sid: str, started: float, texts: list[tuple[str, str]]) -> None:
    store.add_session(sid, started_at=started)
    store.add_messages(
        sid,
        [
            {"role": role, "content": text, "timestamp": started + 10.0 * i}
            for i, (role, text) in enumerate(texts)
        ],
    )


def _old_debug_and_the_fix(store: SessionBackend) -> None:
    # an old session of 150 short log lines that mention kafka ...
    lines = [("tool", f"kafka consumer poll {n}: ok") for n in range(150)]
    _session(store, "old-debug", NOW - 60 * DAY, [("user", "tail the consumer logs"), *lines])
    # ... and, two days ago, the session that holds the fix
    _session(
        store,
        "kafka-fix",
        NOW - 2 * DAY,
        [
            ("user", "The orders service falls behind: kafka lag keeps growing since Monday."),
            (
                "assistant",
                "The consumer group rebalances every few minutes because processing a batch "
                "takes longer than max.poll.interval.ms; each rebalance stops the kafka "
                "consumers, so the lag grows.",
            ),
            ("user", "So how do we fix it?"),
            (
                "assistant",
                "Fixed: max.poll.records lowered from 500 to 100 and max.poll.interval.ms "
                "raised to 600000; the kafka lag is back to zero after ten minutes.",
            ),
        ],
    )


def test_a_long_session_of_short_lines_does_not_hide_the_fix(
    backend_store: SessionBackend,
) -> None:
    store = backend_store
    _old_debug_and_the_fix(store)
    retriever = SessionRecallRetriever(store=store, k=3, exclude_sources=(), now=NOW)
    found = [d.metadata["session_id"] for d in retriever.invoke("kafka")]
    assert "kafka-fix" in found, found
    question = "how did we fix the kafka lag last week?"
    found = [d.metadata["session_id"] for d in retriever.invoke(question)]
    assert found[0] == "kafka-fix", found


def test_equal_sessions_all_compete_for_a_word_they_share(backend_store: SessionBackend) -> None:
    store = backend_store
    for n in range(4):  # four equal 60-message sessions: every one mentions kafka as often
        texts = [("user", f"kafka broker {n} check {i}") for i in range(60)]
        _session(store, f"s{n}", NOW - (n + 1) * DAY, texts)
    retriever = SessionRecallRetriever(store=store, k=3, now=NOW)
    found = [d.metadata["session_id"] for d in retriever.invoke("kafka")]
    assert len(found) == 3, found
    assert len(SessionRecallRetriever(store=store, k=4, now=NOW).invoke("kafka")) == 4


def test_without_per_session_hits_the_crowded_session_is_not_a_candidate(
    backend_store: SessionBackend,
) -> None:
    # hits_per_session=None is the faster, older candidate set: the best 100 hits per term only.
    # The long session's 150 short lines take every one of them for "kafka", so the session
    # with the fix is found only through its other words, and a bare "kafka" misses it.
    store = backend_store
    _old_debug_and_the_fix(store)
    fast = SessionRecallRetriever(
        store=store, k=3, exclude_sources=(), now=NOW, hits_per_session=None
    )
    assert [d.metadata["session_id"] for d in fast.invoke("kafka")] == ["old-debug"]
    found = [d.metadata["session_id"] for d in fast.invoke("how did we fix the kafka lag?")]
    assert found[0] == "kafka-fix", found  # "fix" and "lag" still find it
