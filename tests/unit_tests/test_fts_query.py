"""Query building: every user string becomes a valid FTS5 expression or EmptyQueryError."""

from __future__ import annotations

import sqlite3

import pytest

from langchain_session_recall import EmptyQueryError, parse_query, to_fts5


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
    conn.executemany(
        "INSERT INTO t(body) VALUES (?)",
        [
            ("we fixed the CORS error in nginx with add_header",),
            ("docker-compose bridge network and host.docker.internal",),
            ("edited src/app.py for api.v2, mail user@example.com at 50% load",),
            ("python script for photos",),
            ("java only",),
            ("deployment finished; deploying again",),
        ],
    )
    return conn


def _match(conn: sqlite3.Connection, expr: str) -> list[int]:
    return [r[0] for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,))]


def test_natural_question_drops_stop_words_and_uses_or() -> None:
    q = parse_query("how did we fix the CORS error?")
    assert not q.explicit
    assert to_fts5(q, "relaxed") == '"fix" OR "CORS" OR "error"'
    assert q.words == ("fix", "cors", "error")


def test_natural_question_finds_session(fts: sqlite3.Connection) -> None:
    # FTS5's implicit AND would need every word; the relaxed reading does not.
    assert _match(fts, to_fts5(parse_query("how did we fix the CORS problem?"), "relaxed")) == [1]


@pytest.mark.parametrize(
    ("text", "expected_rows"),
    [
        ('"CORS error"', [1]),
        ("docker OR nginx", [1, 2]),
        ("python NOT java", [4]),
        ("deploy*", [6]),
        ("java NOT python", [5]),
    ],
)
def test_explicit_syntax_is_honoured(
    fts: sqlite3.Connection, text: str, expected_rows: list[int]
) -> None:
    q = parse_query(text)
    assert q.explicit
    assert sorted(_match(fts, to_fts5(q, "strict"))) == expected_rows


@pytest.mark.parametrize(
    ("term", "row"),
    [
        ("docker-compose", 2),
        ("host.docker.internal", 2),
        ("src/app.py", 3),
        ("api.v2", 3),
        ("user@example.com", 3),
        ("50%", 3),
        ("add_header", 1),
    ],
)
def test_punctuated_terms_are_searchable(fts: sqlite3.Connection, term: str, row: int) -> None:
    assert row in _match(fts, to_fts5(parse_query(term), "relaxed"))


@pytest.mark.parametrize(
    "text",
    [
        '"unbalanced',
        "a OR",
        "NOT foo bar",
        "foo AND",
        "(group",
        "col:umn",
        "^start",
        "NEAR(a b)",
        "it's",
        "a\x00b\x1f",
        "\ud800lone surrogate",
        "x" * 5000,
        "* ** ***x",
        '"" "a" ""',
    ],
)
def test_hostile_input_is_valid_fts5(fts: sqlite3.Connection, text: str) -> None:
    q = parse_query(text)
    for reading in ("strict", "relaxed"):
        _match(fts, to_fts5(q, reading))  # must not raise


def test_a_leading_not_excludes_the_next_term() -> None:
    """Issue 23 §4: "NOT python" was read as the plain word python."""
    q = parse_query("NOT python django")
    assert [t.tokens for t in q.excluded] == [("python",)]
    assert [t.tokens for t in q.relaxed] == [("django",)]
    alone = parse_query("NOT python")
    assert (alone.relaxed, [t.tokens for t in alone.excluded]) == ((), [("python",)])
    with pytest.raises(EmptyQueryError, match="only leaves sessions out"):
        to_fts5(alone, "relaxed")


@pytest.mark.parametrize("text", ["", "   ", "?!", "AND OR NOT", '""', "***", "\x00"])
def test_nothing_searchable_is_a_clear_error(text: str) -> None:
    with pytest.raises(EmptyQueryError, match="nothing to search"):
        parse_query(text)


def test_only_stop_words_are_kept_rather_than_searching_nothing() -> None:
    assert to_fts5(parse_query("what was it"), "relaxed") == '"what" OR "was" OR "it"'


def test_cjk_rendering_uses_bigram_phrases() -> None:
    q = parse_query("修改youer服务端")
    assert to_fts5(q, "relaxed", cjk=True) == '"修改 youer 服务 务端"'
    assert to_fts5(parse_query("改"), "relaxed", cjk=True) == '"改"*'


@pytest.mark.parametrize("text", ["deploy*", "deployment*", "deploying*"])
def test_prefix_keeps_every_inflection(text: str) -> None:
    """FTS5 stems a prefix token like a word (``deploy`` -> ``deploi``); we cut it back."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
    conn.executemany(
        "INSERT INTO t(body) VALUES (?)", [("deployment",), ("deploying",), ("deploy",)]
    )
    assert sorted(_match(conn, to_fts5(parse_query(text), "strict"))) == [1, 2, 3]
