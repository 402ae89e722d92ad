"""``rank_by_terms``: pure ranking of root sessions from per-term message hits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_session_recall.models import MessageHit
from langchain_session_recall.search.ranking import TermWeights, rank_by_terms


def hit(
    mid: int,
    sid: str,
    rel: float = 1.0,
    *,
    role: str = "user",
    source: str = "cli",
    ts: float = 0.0,
) -> MessageHit:
    return MessageHit(mid, sid, role, rel, source, ts)


def order(
    term_hits: dict[str, list[MessageHit]], roots: dict[str, str] | None = None, **kwargs: object
) -> list[str]:
    return [r.root_id for r in rank_by_terms(term_hits, roots or {}, **kwargs)]  # type: ignore[arg-type]


def test_covering_more_terms_beats_stronger_single_term_evidence() -> None:
    hits = {
        "backup": [hit(1, "a", 5.0), hit(2, "a", 5.0), hit(3, "b", 2.0)],
        "rsync": [hit(3, "b", 2.0)],
        "photos": [hit(4, "b", 2.0)],
    }
    assert order(hits)[0] == "b"


def test_terms_found_in_parent_and_child_count_for_the_root() -> None:
    hits = {"python": [hit(1, "root"), hit(5, "other", 1.5)], "wheel": [hit(2, "child")]}
    ranked = rank_by_terms(hits, {"child": "root", "root": "root"})
    assert ranked[0].root_id == "root"
    assert set(ranked[0].session_ids) == {"root", "child"}
    assert set(ranked[0].matched_terms) == {"python", "wheel"}


def test_a_common_term_weighs_less_than_a_rare_one() -> None:
    common = [hit(10 + i, f"s{i}") for i in range(20)]
    hits = {"error": [*common, hit(1, "a")], "cors": [hit(2, "b")]}
    # a and b each match one term with equal relevance; b's term names fewer sessions.
    assert order(hits).index("b") < order(hits).index("a")


def test_automation_runs_are_demoted_and_spread_out() -> None:
    cron = [hit(100 + i, f"cron{i}", 3.0, source="cron", ts=float(i)) for i in range(10)]
    hits = {"nginx": [*cron, hit(1, "mine", 2.0)]}
    ranked = order(hits)
    assert ranked[0] == "mine"
    assert len(ranked) == 11  # demoted, never dropped


def test_repeat_demotion_leaves_one_run_of_a_source_near_the_top() -> None:
    cron = [hit(100 + i, f"cron{i}", 3.0, source="cron") for i in range(10)]
    hits = {"nginx": [*cron, *(hit(i, f"user{i}", 0.9) for i in range(1, 4))]}
    ranked = order(hits)
    assert sum(r.startswith("cron") for r in ranked[:2]) == 1
    no_spread = order(hits, weights=TermWeights(repeat_decay=1.0))
    assert all(r.startswith("cron") for r in no_spread[:10])


def test_one_message_found_by_two_indexes_counts_once() -> None:
    twice = {"部署": [hit(1, "a", 2.0), hit(1, "a", 2.0)], "x": [hit(2, "b", 1.0)]}
    once = {"部署": [hit(1, "a", 2.0)], "x": [hit(2, "b", 1.0)]}
    assert rank_by_terms(twice, {})[0].score == rank_by_terms(once, {})[0].score


def test_role_weights_prefer_what_the_user_said() -> None:
    hits = {"deploy": [hit(1, "tool-only", 2.0, role="tool"), hit(2, "said", 2.0, role="user")]}
    assert order(hits)[0] == "said"


def test_excluded_roots_never_appear() -> None:
    hits = {"x": [hit(1, "child"), hit(2, "b")]}
    assert order(hits, {"child": "cur"}, exclude_roots=["cur"]) == ["b"]


def test_recency_breaks_near_ties_only_when_asked() -> None:
    hits = {"x": [hit(1, "old", 1.0, ts=0.0), hit(2, "new", 1.0, ts=86_400.0 * 100)]}
    weights = TermWeights(recency_half_life=30.0)
    assert order(hits, weights=weights, now=86_400.0 * 101)[0] == "new"
    strong = {"x": [hit(1, "old", 3.0, ts=0.0), hit(2, "new", 1.0, ts=86_400.0 * 100)]}
    assert order(strong, weights=weights, now=86_400.0 * 101)[0] == "old"


def test_evidence_is_listed_best_first_with_its_terms() -> None:
    hits = {"a": [hit(1, "s", 1.0), hit(2, "s", 3.0)], "b": [hit(1, "s", 1.0)]}
    ranked = rank_by_terms(hits, {})[0]
    assert ranked.message_ids == (2, 1)
    assert ranked.coverage == pytest.approx(1.0)


def _term_hits(
    terms: list[str], sessions: list[str], low: float, per_term: int
) -> st.SearchStrategy[dict[str, list[MessageHit]]]:
    """Generated ``term_hits``: up to ``per_term`` hits of ``sessions`` for each of ``terms``
    (``c1`` is a child of ``s1``), relevances from ``low`` to 20."""
    return st.dictionaries(
        st.sampled_from(terms),
        st.lists(
            st.builds(
                hit,
                st.integers(1, 30),
                st.sampled_from(sessions),
                st.floats(low, 20.0),
                role=st.sampled_from(["user", "assistant", "tool"]),
                source=st.sampled_from(["cli", "cron", "subagent"]),
                ts=st.floats(0, 1e9),
            ),
            min_size=1,
            max_size=per_term,
        ),
        max_size=len(terms),
    )


@given(_term_hits(["a", "b", "c", "d"], ["s1", "s2", "s3", "c1"], 0.01, 8))
def test_ranking_is_total_and_ordered(term_hits: dict[str, list[MessageHit]]) -> None:
    ranked = rank_by_terms(term_hits, {"c1": "s1"})
    roots = {"s1" if h.session_id == "c1" else h.session_id for v in term_hits.values() for h in v}
    assert {r.root_id for r in ranked} == roots
    scores = [r.score for r in ranked]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < r.coverage <= 1.0 and r.score > 0 for r in ranked)


def test_a_root_found_only_through_a_child_sessions_header_is_ranked() -> None:
    # The header (title, date words) of a sub-agent session matched, nothing else of its chain:
    # the chain is still ranked, under its root, with the child's start and source.
    from langchain_session_recall.models import SessionHit

    header = {"flamingo": [SessionHit("child", 2.0, "subagent", 50.0)]}
    hits = {"nginx": [MessageHit(1, "other", "user", 1.0, "cli", 1.0)]}
    ranked = rank_by_terms(hits, {"child": "root"}, session_hits=header)
    assert {r.root_id for r in ranked} == {"root", "other"}
    root = next(r for r in ranked if r.root_id == "root")
    assert (root.matched_terms, root.session_ids, root.message_ids) == (
        ("flamingo",),
        ("child",),
        (),
    )


def _one_hit_facts_match_the_chain_path(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make every ranking pass score each candidate both ways and compare (issue 22 item 8):
    the one-hit shortcut must give the general path's facts exactly (floats bit for bit)."""
    from langchain_session_recall.search import ranking

    checked: list[int] = []
    shortcut = ranking._Evidence.facts

    def both(self: ranking._Evidence, root: str) -> ranking._SessionFacts:
        fast = shortcut(self, root)
        assert repr(fast) == repr(self._chain_facts(root))
        by_term = self.grouped.get(root, {})
        checked.append(int(len(by_term) == 1 and sum(map(len, by_term.values())) == 1))
        return fast

    monkeypatch.setattr(ranking._Evidence, "facts", both)
    return checked


def test_the_one_hit_shortcut_gives_the_general_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks.perf import corpus
    from langchain_session_recall import SessionStore
    from langchain_session_recall.search.pipeline import search_sessions
    from langchain_session_recall.search.request import SearchRequest

    checked = _one_hit_facts_match_the_chain_path(monkeypatch)
    store = SessionStore(":memory:")
    for spec in corpus.generate(1, 3_000):
        store.add_session(spec.session_id, **spec.kwargs)
        store.add_messages(spec.session_id, spec.messages)
    for _, query in corpus.QUERIES:
        search_sessions(store, SearchRequest(query, k=3))
    assert sum(checked) > 500 and len(checked) - sum(checked) > 100  # both kinds compared


@given(_term_hits(["a", "b", "c"], ["s1", "s2", "s3", "s4", "c1"], 0.0, 3))
def test_the_one_hit_shortcut_on_generated_hits(term_hits: dict[str, list[MessageHit]]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        _one_hit_facts_match_the_chain_path(monkeypatch)
        rank_by_terms(term_hits, {"c1": "s1"}, weights=TermWeights(recency_half_life=30.0))
