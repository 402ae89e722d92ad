"""Per-term search terms, spelling correction and their FTS5 rendering (pure)."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_session_recall.backends.sqlite.fts import to_fts5
from langchain_session_recall.core.query import (
    MAX_SEARCH_TERMS,
    Term,
    closest_words,
    edit_distance,
    parse_query,
    search_terms,
)
from langchain_session_recall.errors import EmptyQueryError
from langchain_session_recall.search.candidates import single_term_query


def words(text: str) -> list[str]:
    return [" ".join(t.tokens) + ("*" if t.prefix else "") for t in search_terms(parse_query(text))]


def test_latin_questions_give_their_content_words() -> None:
    assert words("how did we fix the CORS error?") == ["fix", "CORS", "error"]
    assert words("docker-compose deploy*") == ["docker compose", "deploy*"]


def test_cjk_glued_to_latin_is_split_by_script() -> None:
    assert words("修改youer服务端") == ["修改", "youer", "服务端", "服务", "务端"]


def test_chinese_question_words_are_dropped() -> None:
    terms = words("上次怎么修改的部署脚本")
    assert "怎么" not in terms and "上次" not in terms
    assert {"修改", "部署", "脚本"} <= set(terms)


def test_japanese_particles_are_dropped() -> None:
    assert words("ビルドが遅い") == ["ビルド", "ビル", "ルド", "遅"]


def test_two_character_words_stay_whole() -> None:
    assert words("部署") == ["部署"]


def test_term_count_is_capped() -> None:
    run = "".join(chr(0x4E00 + 7 * i) for i in range(40))  # 40 distinct ideographs
    assert len(search_terms(parse_query(run))) == MAX_SEARCH_TERMS


@pytest.mark.parametrize(
    ("a", "b", "d"),
    [("cors", "cros", 1), ("kitten", "sitting", 3), ("", "abc", 3), ("same", "same", 0)],
)
def test_edit_distance(a: str, b: str, d: int) -> None:
    assert edit_distance(a, b, limit=5) == d


@given(st.text(max_size=12), st.text(max_size=12))
def test_edit_distance_is_symmetric_and_capped(a: str, b: str) -> None:
    d = edit_distance(a, b, limit=3)
    assert d == edit_distance(b, a, limit=3)
    assert 0 <= d <= 4
    assert (d == 0) == (a == b)


def test_closest_words_prefers_swapped_letters_then_frequency() -> None:
    vocab = [("cron", 500), ("cor", 2), ("dashboard", 3), ("kubernet", 4), ("kubectl", 9)]
    assert closest_words("cros", vocab) == ["cor"]
    assert closest_words("dashbaord", vocab) == ["dashboard"]
    assert closest_words("kuberntes", vocab) == ["kubernet"]


def test_short_or_unrelated_words_are_not_corrected() -> None:
    vocab = [("dkim", 3), ("pain", 5), ("paint", 1)]
    assert closest_words("dkm", vocab) == []
    assert closest_words("painted", [("pain", 5)]) == []


def test_single_term_query_renders_one_quoted_term() -> None:
    assert to_fts5(single_term_query(Term(("kube",), prefix=True)), "relaxed") == '"kube"*'
    assert to_fts5(single_term_query(Term(("服务端",))), "relaxed", cjk=True) == '"服务 务端"'


@given(st.text(max_size=40))
def test_every_search_term_is_valid_fts5(text: str) -> None:
    try:
        query = parse_query(text)
    except EmptyQueryError:
        return
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(x, tokenize='porter unicode61')")
    conn.execute("INSERT INTO f VALUES ('some text 服务 务端')")
    for term in search_terms(query):
        for cjk in (False, True):
            expression = to_fts5(single_term_query(term), "relaxed", cjk=cjk)
            conn.execute("SELECT count(*) FROM f WHERE f MATCH ?", (expression,)).fetchone()
