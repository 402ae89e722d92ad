"""Pathological queries (issue 18 §6): caps on terms and prefixes, no timing in the asserts."""

from __future__ import annotations

import re

from langchain_session_recall.backends.postgres.tsquery import to_tsquery_text
from langchain_session_recall.backends.sqlite.fts import to_fts5
from langchain_session_recall.core.query import (
    MAX_PREFIX_TERMS,
    MAX_QUERY_TERMS,
    parse_query,
    search_terms,
)

TEN_THOUSAND_PREFIXES = " ".join(f"pre{i}*" for i in range(10_000))


def _fts5_terms(expression: str) -> list[str]:
    return re.findall(r'"[^"]*"\*?', expression)


def test_caps_are_stated_and_sane() -> None:
    assert 16 <= MAX_QUERY_TERMS <= 1024 and 1 <= MAX_PREFIX_TERMS <= MAX_QUERY_TERMS


def test_ten_thousand_prefix_terms_are_cut_to_the_caps_in_both_readings() -> None:
    q = parse_query(TEN_THOUSAND_PREFIXES)
    assert len(q.strict) == len(q.relaxed) <= MAX_QUERY_TERMS
    assert sum(t.prefix for _, t in q.strict) == MAX_PREFIX_TERMS
    assert sum(t.prefix for t in q.relaxed) == MAX_PREFIX_TERMS
    assert q.truncated
    assert [t.tokens[0] for t in q.relaxed[:2]] == ["pre0", "pre1"]  # the first ones are kept


def test_rendered_expressions_stay_within_the_caps() -> None:
    q = parse_query(TEN_THOUSAND_PREFIXES)
    for reading in ("strict", "relaxed"):
        for cjk in (False, True):
            terms = _fts5_terms(to_fts5(q, reading, cjk=cjk))
            assert len(terms) <= MAX_QUERY_TERMS
            assert sum(t.endswith("*") for t in terms) <= MAX_PREFIX_TERMS
            ts = to_tsquery_text(q, reading, cjk=cjk)
            assert ts.count("'") // 2 <= MAX_QUERY_TERMS
            assert ts.count(":*") <= MAX_PREFIX_TERMS


def test_a_long_cjk_run_gives_at_most_the_cap_of_search_terms() -> None:
    run = "".join(chr(0x4E00 + i) for i in range(5_000))
    terms = search_terms(parse_query(run), limit=10**9)
    assert 0 < len(terms) <= MAX_QUERY_TERMS


def test_a_short_query_is_untouched() -> None:
    q = parse_query('"exact phrase" OR deploy* NOT java')
    assert not q.truncated
    assert [op for op, _ in q.strict] == [None, "OR", "NOT"]
    assert q.strict[1][1].prefix


# ------------------------------------------------- issue 21 §9: characters and word length

from langchain_session_recall import EmptyQueryError  # noqa: E402
from langchain_session_recall.core.query import (  # noqa: E402
    MAX_QUERY_CHARS,
    MAX_WORD_CHARS,
    QUERY_LIMITS,
    bound_query,
)


def test_only_the_first_max_query_chars_are_read() -> None:
    q = parse_query("deploy nginx " + "w " * 5_000_000)
    assert len(q.text) <= MAX_QUERY_CHARS
    assert q.truncated and q.notices[0].startswith("the query was cut to its first 2,000")
    assert "10,000,013" in q.notices[0]


def test_a_long_word_becomes_a_prefix_of_its_first_max_word_chars() -> None:
    q = parse_query("a" * 3_000_000)
    [term] = q.relaxed
    assert term.tokens == ("a" * MAX_WORD_CHARS,) and term.prefix
    assert any("searched as prefixes" in n for n in q.notices)
    [quoted] = parse_query('"' + "b" * 500 + '"').relaxed
    assert len(quoted.tokens[0]) == MAX_WORD_CHARS and quoted.prefix


def test_errors_quote_a_bounded_prefix_of_the_query() -> None:
    try:
        parse_query("?" * 1_000_000)
    except EmptyQueryError as exc:
        assert len(str(exc)) < 200
    else:
        raise AssertionError("nothing searchable was searched")


def test_bound_query_caps_and_makes_valid_unicode() -> None:
    assert len(bound_query("x" * 10**7)) == MAX_QUERY_CHARS
    bound_query("nginx \udcff").encode("utf-8")
    assert f"{MAX_QUERY_CHARS:,}" in QUERY_LIMITS and str(MAX_WORD_CHARS) in QUERY_LIMITS
