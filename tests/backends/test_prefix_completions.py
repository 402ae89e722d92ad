"""A prefix costs what its completions cost (issue 32 §4).

``error-c*`` matched as written is the phrase "error" + any word starting with ``c``: FTS5
reads the position lists of every such word for each full-text query of a search. Where the
store lists its vocabulary (SQLite), a prefix is searched as its most frequent completions
instead (``MAX_PREFIX_COMPLETIONS`` each, ``MAX_QUERY_COMPLETIONS`` a query); PostgreSQL lists
none and matches the prefix as written (its cost there is measured in docs/reliability.md)."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_session_recall.core.query import (
    MAX_PREFIX_COMPLETIONS,
    MAX_PREFIX_TERMS,
    MAX_QUERY_COMPLETIONS,
)
from langchain_session_recall.search.pipeline import search_sessions

# Twelve words starting with "c" (more than MAX_PREFIX_COMPLETIONS); "code" is the most common.
_C_WORDS = "cabin camel candle canyon carpet castle cedar cellar chalk cherry cobalt copper"


def _say(store: Any, sid: str, *texts: str) -> None:
    store.add_session(sid)
    store.add_messages(sid, [{"role": "user", "content": t} for t in texts])


@pytest.fixture
def c_store(store: Any) -> Any:
    _say(store, "web", "nginx answered with error code 502", "the error code came back")
    _say(store, "api", "the api returns error code 500 on login")
    for word in _C_WORDS.split():
        _say(store, f"s-{word}", f"a {word} was mentioned once")
    _say(store, "plain", "nothing to see here")
    return store


def _recording(store: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    asked: list[Any] = []
    real = store.match_messages

    def recording(query: Any, reading: str, **kw: Any) -> Any:
        asked.append(query)
        return real(query, reading, **kw)

    monkeypatch.setattr(store, "match_messages", recording)
    return asked


def _prefix_terms(query: Any) -> list[Any]:
    terms = [t for _, t in query.strict] + [*query.relaxed, *query.excluded]
    return [t for t in terms if t.prefix]


def test_a_hyphenated_prefix_is_searched_as_its_most_frequent_completions(
    c_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _recording(c_store, monkeypatch)
    outcome = search_sessions(c_store, "error-c*")
    assert {r.root_id for r in outcome.sessions} == {"web", "api"}
    prefixes = [t for q in asked for t in _prefix_terms(q)]
    assert prefixes
    if c_store.prefix_completions("c", MAX_PREFIX_COMPLETIONS) is None:  # PostgreSQL
        assert all(not t.completions for t in prefixes)
        assert outcome.expansions == {}
        return
    for term in prefixes:
        assert term.completions[0] == "code"
        assert len(term.completions) == MAX_PREFIX_COMPLETIONS
    # the search says what it searched, as it does for a typo
    assert outcome.expansions["error c*"][0] == "code"


def test_the_prefixes_of_a_query_share_a_bounded_number_of_completions(
    c_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _recording(c_store, monkeypatch)
    letters = "cabcdefghijklmnop"
    text = "error-c* " + " ".join(f"{c}*" for c in letters[1:])  # 17 prefixes
    found = [r.root_id for r in search_sessions(c_store, text).sessions]
    assert found  # still finds something
    assert asked
    for query in asked:
        completions = {t.tokens: t.completions for t in _prefix_terms(query)}
        assert sum(len(c) for c in completions.values()) <= MAX_QUERY_COMPLETIONS


def test_sixteen_hyphenated_prefixes_search_at_most_the_budget(
    c_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 32 §4: the prefixes a search reads from the index, counted across every store query
    asked = _recording(c_store, monkeypatch)
    lookups: list[str] = []
    real = c_store.prefix_completions

    def counting(prefix: str, limit: int) -> Any:
        lookups.append(prefix)
        return real(prefix, limit)

    monkeypatch.setattr(c_store, "prefix_completions", counting)
    words = "error deploy build test fix run config server data user file log cache port path"
    text = " ".join(f"{w}-{c}*" for w, c in zip(words.split(), "ctsrpourbsfemhiq", strict=False))
    outcome = search_sessions(c_store, text)
    assert {r.root_id for r in outcome.sessions} >= {"web", "api"}  # "error c..." still found
    assert "more were left out" in " ".join(outcome.query.notices)
    assert len(lookups) <= MAX_PREFIX_TERMS
    searched = {t.tokens: t.completions for q in asked for t in _prefix_terms(q)}
    assert 0 < len(searched) <= MAX_PREFIX_TERMS
    assert sum(len(c) for c in searched.values()) <= MAX_QUERY_COMPLETIONS
