"""Prefix completions (issue 32 §4), pure: the budget and the FTS5 rendering."""

from __future__ import annotations

from dataclasses import replace

from langchain_session_recall.backends.sqlite.fts import to_fts5
from langchain_session_recall.core.query import (
    MAX_PREFIX_COMPLETIONS,
    MAX_PREFIX_TERMS,
    MAX_QUERY_COMPLETIONS,
    complete_prefixes,
    parse_query,
)


def _vocabulary(prefix: str, limit: int) -> tuple[list[str], int]:
    words = [f"{prefix}{i:02d}" for i in range(20)]
    return words[:limit], len(words)


def test_one_prefix_gets_the_most_completions_and_the_cut_is_reported() -> None:
    query, cut = complete_prefixes(parse_query("deploy-t* nginx"), _vocabulary)
    (term, _) = query.relaxed
    assert term.completions == tuple(f"t{i:02d}" for i in range(MAX_PREFIX_COMPLETIONS))
    assert cut == {"deploy t*": term.completions}
    assert to_fts5(query, "relaxed").startswith('("deploy t00" OR "deploy t01" OR')


def test_many_prefixes_share_the_query_budget_at_least_one_each() -> None:
    text = " ".join(f"w{i}*" for i in range(16))  # past MAX_PREFIX_TERMS: left out
    query, _ = complete_prefixes(parse_query(text), _vocabulary)
    sizes = [len(t.completions) for t in query.relaxed]
    assert sizes == [1] * MAX_PREFIX_TERMS and sum(sizes) <= MAX_QUERY_COMPLETIONS
    query, _ = complete_prefixes(parse_query("a* b*"), _vocabulary)
    sizes = [len(t.completions) for t in query.relaxed]
    assert sizes == [MAX_QUERY_COMPLETIONS // 2] * 2


def test_a_store_without_a_vocabulary_or_a_cjk_prefix_keeps_the_prefix() -> None:
    for text, lookup in (("deploy*", lambda p, n: None), ("部署*", _vocabulary)):
        query, cut = complete_prefixes(parse_query(text), lookup)
        assert query == parse_query(text) and cut == {}
    query, cut = complete_prefixes(parse_query("zz*"), lambda p, n: ([], 0))
    assert query == parse_query("zz*") and cut == {}


def test_a_completion_stemming_would_change_is_matched_as_its_stable_prefix() -> None:
    # the index holds "agre" (porter's stem of "agreed"); FTS5 would stem a query's "agre" to
    # "agr", so it is matched as the prefix stemming leaves alone, never as a missing word
    term = replace(parse_query("ag*").relaxed[0], completions=("agre", "again"))
    expression = to_fts5(replace(parse_query("x"), relaxed=(term,)), "relaxed")
    assert expression == '("agr"* OR "again")'
