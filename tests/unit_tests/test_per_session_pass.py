"""The per-session hits' cheaper paths give the general path's answer bit for bit.

* ``sessions_in_hand``: the SQLite per-session pass leaves out the sessions whose best hits the
  best-``limit`` pass already holds (so FTS5 ranks fewer matches); ``match_messages`` must
  return exactly what it returns when no session is left out, ties at the cut included.
* ``best_window`` scores each distinct window once: the same floats as scoring every start.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Mapping

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from langchain_session_recall import SessionStore
from langchain_session_recall.backends import hits as hits_module
from langchain_session_recall.backends.hits import budget_automation, sessions_in_hand
from langchain_session_recall.backends.sqlite import store as sqlite_store
from langchain_session_recall.core.automation import AUTOMATION_SOURCES
from langchain_session_recall.core.query import parse_query, search_terms
from langchain_session_recall.models import MessageHit
from langchain_session_recall.search.candidates import single_term_query
from langchain_session_recall.search.ranking import best_window

# ---------------------------------------------------------------- sessions_in_hand (pure)

_hit = st.builds(
    MessageHit,
    st.integers(1, 10_000),
    st.sampled_from(["a", "b", "c", "d"]),
    st.just("user"),
    st.sampled_from([1.0, 2.0, 2.5, 3.0]),  # few values: many ties
    st.sampled_from(["cli", "cron"]),
    st.just(0.0),
)


@given(
    st.lists(_hit, unique_by=lambda h: h.message_id, max_size=30),
    st.integers(1, 8),
    st.integers(1, 3),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_sessions_in_hand_have_their_best_hits_kept(
    found: list[MessageHit], limit: int, per_session: int, budget: bool, rnd: random.Random
) -> None:
    # a ranked pass: best first, ties in any order (FTS5's), read lazily as _ranked reads it
    stream = list(found)
    rnd.shuffle(stream)
    stream.sort(key=lambda h: -h.relevance)  # stable: the shuffled order breaks ties
    read: list[MessageHit] = []

    def counted() -> Iterator[MessageHit]:
        for h in stream:
            read.append(h)
            yield h

    if budget:
        kept = budget_automation(counted(), limit, {"cron"})
    else:
        kept = list(itertools.islice(counted(), limit + 1))[:limit]
    for sid in sessions_in_hand(read, kept, per_session):
        ordered = sorted((h for h in found if h.session_id == sid), key=_contract)
        assert {h.message_id for h in ordered[:per_session]} <= {h.message_id for h in kept}


def _contract(h: MessageHit) -> tuple[float, int]:
    return (-h.relevance, h.message_id)


# ---------------------------------------------------------------- the SQLite pass, end to end


@pytest.fixture(scope="module")
def corpus_store() -> SessionStore:
    """The perf corpus (3,000 messages) and automation runs that repeat one line word for word
    (equal bm25: ties at every cut)."""
    from benchmarks.perf import corpus

    store = SessionStore(":memory:")
    for spec in corpus.generate(1, 3_000):
        store.add_session(spec.session_id, **spec.kwargs)
        store.add_messages(spec.session_id, spec.messages)
    for n in range(40):
        sid = f"cron-{n}"
        store.add_session(sid, source="cron", started_at=1_000.0 + n)
        line = {"role": "assistant", "content": "deploy finished, disk usage check ok"}
        store.add_messages(sid, [line] * (1 + n % 3))
    return store


def test_match_messages_is_the_same_with_sessions_left_out(
    corpus_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.perf import corpus

    terms = {t for _, q in corpus.QUERIES for t in search_terms(parse_query(q))}
    terms |= set(search_terms(parse_query("deploy disk usage check")))
    left_out: list[int] = []
    real = sessions_in_hand

    def counting(*args: object) -> list[str]:
        out = real(*args)  # type: ignore[arg-type]
        left_out.append(len(out))
        return out

    def run() -> list[list[MessageHit]]:
        return [
            corpus_store.match_messages(
                single_term_query(term),
                "relaxed",
                limit=limit,
                per_session=per,
                automation=AUTOMATION_SOURCES if limit > 5 else (),
            )
            for term in sorted(terms, key=repr)
            for limit in (5, 100)
            for per in (1, 2)
        ]

    monkeypatch.setattr(sqlite_store, "sessions_in_hand", counting)
    fast = run()
    monkeypatch.setattr(sqlite_store, "sessions_in_hand", lambda *a: [])  # the general path
    general = run()
    assert fast == general  # MessageHit equality: ids, sessions, relevance floats, all fields
    assert sum(n > 0 for n in left_out) > 50  # the shortcut was taken, many times
    assert hits_module.sessions_in_hand is real


# ---------------------------------------------------------------- best_window


def _every_start(
    messages: Mapping[str, Mapping[int, float]],
    header: Mapping[str, float],
    positions: Mapping[int, int],
    term_weight: Mapping[str, float],
    *,
    size: int,
    decay: float,
    coverage_power: float,
) -> float:
    """``best_window`` as first written: every start scored (the oracle)."""
    total = sum(term_weight.values()) or 1.0
    mean = total / max(1, len(term_weight)) or 1.0  # (weights so small it underflows)
    if len(messages) == 1 and not header:
        [(term, ids)] = messages.items()
        if len(ids) == 1:
            weight = term_weight.get(term, 0.0)
            share: float = (weight / total) ** coverage_power
            return weight / mean * next(iter(ids.values())) * share
    found = sorted(
        (positions[m], term, c) for term, ids in messages.items() for m, c in ids.items()
    )
    starts = sorted({p - k for p, _, _ in found for k in range(size)}) or [0]
    best, lo = 0.0, 0
    for start in starts:
        while lo < len(found) and found[lo][0] < start:
            lo += 1
        inside: dict[str, list[float]] = {t: [c] for t, c in header.items()}
        hi = lo
        while hi < len(found) and found[hi][0] < start + size:
            inside.setdefault(found[hi][1], []).append(found[hi][2])
            hi += 1
        score = covered = 0.0
        for term, values in inside.items():
            weight = term_weight.get(term, 0.0)
            ordered = sorted(values, reverse=True)
            decayed = sum(v * decay**i for i, v in enumerate(ordered))
            score += weight / mean * (values[0] if len(values) == 1 else decayed)
            covered += weight
        best = max(best, score * (covered / total) ** coverage_power)
    return best


_TERMS = ["a", "b", "c", "d"]


@given(
    st.dictionaries(
        st.sampled_from(_TERMS),
        st.dictionaries(st.integers(1, 12), st.floats(0.01, 20.0), min_size=1, max_size=6),
        max_size=4,
    ),
    st.dictionaries(st.sampled_from(_TERMS), st.floats(0.01, 20.0), max_size=2),
    st.dictionaries(st.sampled_from(_TERMS), st.floats(0.0, 3.0), min_size=1, max_size=4),
    st.integers(1, 4),
    st.booleans(),
)
# weights whose mean underflows to 0.0 (Hypothesis found them in CI: ZeroDivisionError)
@example({"a": {1: 1.0}}, {}, {"a": 0.0, "d": 5e-324}, 1, False)
@example({"a": {1: 1.0, 12: 1.0}}, {}, {"a": 0.0, "d": 5e-324}, 1, False)
def test_best_window_scores_each_distinct_window_once_with_the_same_floats(
    messages: dict[str, dict[int, float]],
    header: dict[str, float],
    term_weight: dict[str, float],
    size: int,
    sparse: bool,
) -> None:
    # positions: adjacent (many windows share their hits) or spread out (each window apart)
    positions = {m: m * (5 if sparse else 1) for m in range(1, 13)}
    args = (messages, header, positions, term_weight)
    kw = {"size": size, "decay": 0.3, "coverage_power": 1.0}
    got = best_window(*args, **kw)  # type: ignore[arg-type]
    want = _every_start(*args, **kw)  # type: ignore[arg-type]
    assert got == want or (math.isnan(got) and math.isnan(want))
