"""tsquery rendering (pure): the PostgreSQL twin of to_fts5."""

from __future__ import annotations

import pytest

from langchain_session_recall.backends.postgres.tsquery import quote_lexeme, to_tsquery_text
from langchain_session_recall.core.query import parse_query


@pytest.mark.parametrize(
    ("text", "reading", "expected"),
    [
        ("docker-compose OR k8s", "strict", "('docker' <-> 'compose') | 'k8s'"),
        ("python NOT java", "strict", "'python' & !'java'"),
        ('a NOT "b c"', "strict", "'a' & !('b' <-> 'c')"),
        ("deploy* now", "strict", "'deploy':* & 'now'"),
        ('"exact phrase" deploy*', "relaxed", "'exact' | 'phrase' | 'deploy':*"),
        ("how did we fix the CORS error", "relaxed", "'fix' | 'CORS' | 'error'"),
        ("a OR b NOT c", "strict", "'a' | 'b' & !'c'"),
    ],
)
def test_renders_our_language(text: str, reading: str, expected: str) -> None:
    assert to_tsquery_text(parse_query(text), reading) == expected  # type: ignore[arg-type]


def test_cjk_rendering_uses_bigrams() -> None:
    assert to_tsquery_text(parse_query("服务端"), "relaxed", cjk=True) == "('服务' <-> '务端')"
    assert to_tsquery_text(parse_query("服"), "relaxed", cjk=True) == "'服':*"
    assert to_tsquery_text(parse_query("服务端"), "relaxed") == "'服务端'"


def test_lexemes_are_quoted_and_escaped() -> None:
    assert quote_lexeme("o'k") == "'o''k'"
    assert quote_lexeme("a\\b") == "'a\\\\b'"
