"""The work of a query's prefixes is bounded by what they expand to (issue 32 §4), pure.

Sixteen hyphenated prefixes (``error-c* deploy-t* ...``) each searched as their completions
cost some seconds of CPU in 200,000 messages. A query searches at most ``MAX_PREFIX_TERMS``
prefixes (``NOT`` ones included), reads the vocabulary at most once for each, and searches
them as at most ``MAX_QUERY_COMPLETIONS`` index words in all; the others are left out and the
query's notices say so. Counted here, never timed (the time is measured in
``benchmarks/pathological_queries.py --shapes``)."""

from __future__ import annotations

import re

from langchain_session_recall.backends.postgres.tsquery import to_tsquery_text
from langchain_session_recall.backends.sqlite.fts import to_fts5
from langchain_session_recall.core.query import (
    MAX_PREFIX_TERMS,
    MAX_QUERY_COMPLETIONS,
    ParsedQuery,
    complete_prefixes,
    parse_query,
)

_WORDS = "error deploy build test fix run config server data user file log cache port path index"
SIXTEEN = " ".join(f"{w}-{c}*" for w, c in zip(_WORDS.split(), "ctsrpourbsfemhiq", strict=True))


def _prefixes(query: ParsedQuery) -> set[tuple[str, ...]]:
    terms = [t for _, t in query.strict] + [*query.relaxed, *query.excluded]
    return {t.tokens for t in terms if t.prefix}


def _completing(asked: list[str]):  # type: ignore[no-untyped-def]
    def completions(prefix: str, limit: int) -> tuple[list[str], int]:
        asked.append(prefix)
        words = [f"{prefix}{i:02d}" for i in range(20)]
        return words[:limit], len(words)

    return completions


def test_the_budget_is_small() -> None:
    assert 1 <= MAX_PREFIX_TERMS <= MAX_QUERY_COMPLETIONS <= 4


def test_sixteen_hyphenated_prefixes_search_the_budget_and_say_what_was_left_out() -> None:
    query = parse_query(SIXTEEN)
    assert _prefixes(query) == {("error", "c"), ("deploy", "t"), ("build", "s")}
    assert query.truncated
    assert f"only the first {MAX_PREFIX_TERMS} prefixes" in " ".join(query.notices)
    assert "13 more were left out" in " ".join(query.notices)
    for reading in ("strict", "relaxed"):
        assert len(re.findall(r'"\*', to_fts5(query, reading))) == MAX_PREFIX_TERMS
        assert to_tsquery_text(query, reading).count(":*") == MAX_PREFIX_TERMS


def test_the_prefixes_of_a_query_expand_to_at_most_the_budget_of_index_words() -> None:
    for text in (SIXTEEN, "error-c* deploy-t*", " ".join(f"{c}*" for c in "cdbtfrspeulmhiqw")):
        asked: list[str] = []
        query, _ = complete_prefixes(parse_query(text), _completing(asked))
        assert len(asked) <= MAX_PREFIX_TERMS  # one vocabulary read per prefix searched
        completions = {
            t.tokens: t.completions
            for t in [*(t for _, t in query.strict), *query.relaxed]
            if t.prefix
        }
        assert sum(len(c) for c in completions.values()) <= MAX_QUERY_COMPLETIONS
        searched = re.findall(r'"[^"]*"\*?', to_fts5(query, "strict"))
        assert len(searched) <= MAX_QUERY_COMPLETIONS


def test_not_prefixes_share_the_budget_after_the_prefixes_to_find() -> None:
    query = parse_query("nginx " + " ".join(f"NOT {c}*" for c in "cdbtfrsp"))
    assert [t.tokens for t in query.excluded] == [("c",), ("d",), ("b",)]
    assert [t.tokens for _, t in query.strict] == [("nginx",), ("c",), ("d",), ("b",)]
    asked: list[str] = []
    complete_prefixes(query, _completing(asked))
    assert len(asked) == MAX_PREFIX_TERMS
    query = parse_query("deploy* kube* helm* NOT c*")
    assert _prefixes(query) == {("deploy",), ("kube",), ("helm",)} and query.excluded == ()


def test_a_query_within_the_budget_is_untouched() -> None:
    query = parse_query("deploy* kube* NOT c* nginx")
    assert not query.truncated and query.notices == ()
    assert _prefixes(query) == {("deploy",), ("kube",), ("c",)}
