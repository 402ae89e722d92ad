"""Hostile query text: arbitrary Unicode, FTS5 syntax in every position, SQL-looking junk.

Properties (each over thousands of generated cases, see ``docs/reliability.md``):

1. The rendered FTS5 expression is only double-quoted letter/digit terms joined by AND/OR/NOT,
   and SQLite's FTS5 parser accepts it: no user text can become FTS5 syntax, let alone SQL. Its
   PostgreSQL twin: the rendered ``tsquery`` text is only quoted lexemes joined by ``&``, ``|``,
   ``& !`` and ``<->``, and the server's ``to_tsquery`` accepts it.
2. Search raises nothing but :class:`EmptyQueryError`, and that only when the text holds no
   letter or digit outside bare ``AND``/``OR``/``NOT`` words; it never writes to the database.
3. A query in which a word of the data stands free (not glued to other letters, not inside a
   quoted phrase, not negated by ``NOT``) returns at least one session; when the relaxed
   reading ranked the results, the sessions holding the word are among them.
4. Hostile filter values (user id, roles, sources, session ids) are bound, never formatted.
5. The retriever raises nothing on any text: text with nothing searchable gives no Documents
   (empty or whitespace text lists recent sessions).
6. The agent tool never raises (it reports "nothing to search" instead), and the CLI exits 0, 1
   or, for text with nothing searchable only, 2.

Properties 2 to 6 and the 100 KB queries run on both backends (the ``corpus`` fixture); on
PostgreSQL with a share of the examples (``reliability_support.examples``). "Never writes" is
SQLite's ``PRAGMA data_version`` from a second connection, and on PostgreSQL a digest of every
row with its ``xmin`` (``store_targets.Watcher``).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_fixtures import build_hermes_db
from hypothesis import example, given, settings
from hypothesis import strategies as st
from reliability.reliability_support import (
    CORPUS,
    CORPUS_WORDS,
    RELIABILITY_SETTINGS,
    count,
    examples,
)
from store_targets import Sql, StoreFactory, StoreTarget, Watcher, backend_of, pg_only

from langchain_session_recall import EmptyQueryError, SessionRecallRetriever, SessionStore
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.backends.postgres.schema import TS_CONFIG
from langchain_session_recall.backends.postgres.tsquery import to_tsquery_text
from langchain_session_recall.backends.sqlite.fts import to_fts5
from langchain_session_recall.backends.sqlite.schema import TOKENIZE
from langchain_session_recall.cli import main as cli_main
from langchain_session_recall.core.query import MAX_QUERY_CHARS, ParsedQuery, parse_query
from langchain_session_recall.errors import InvalidArgumentError
from langchain_session_recall.models import SearchFilters
from langchain_session_recall.search.pipeline import search_sessions
from langchain_session_recall.search.request import ROLE_NAMES
from langchain_session_recall.tool import create_session_search_tool

pytestmark = pytest.mark.slow  # thousands of generated cases per property, on both backends

TOKEN = re.compile(r"[^\W_]")
CORPUS_IDS = frozenset(s["id"] for s in CORPUS)

FTS_SYNTAX = [
    "AND", "OR", "NOT", "NEAR", "NEAR(", "NEAR/3", "near", "and", "or", "not", "*", "^", "+",
    "-", ":", "(", ")", "{", "}", "[", "]", ",", ".", '"', '""', "'", "content:", "tool_name:",
    "-content:", "{content tool_name}:", "NEAR(nginx postgres, 2)", "^nginx", "nginx*",
    "*nginx", "\\", "%", "_", "--", ";", "/*", "*/", "'; DROP TABLE messages; --",
    '"); DELETE FROM sessions; --', "rank", "bm25(", "MATCH", "messages_fts", "rowid:",
    "\x00", "\x1b[31m", "\u202e", "\ufeff", "\u200b", "\ud800", "\udfff", "\U0001f600", "ﬁ",
    "İ", "ß", "\u0301", "\u19b0", "\u3000", "?", "!!!", "x" * 300,
]  # fmt: skip
"""FTS5 operators, column filters, SQL fragments, control/format characters, surrogates."""

_ANY_CHAR = st.characters(categories=["L", "M", "N", "P", "S", "Z", "Cc", "Cf", "Cs", "Co"])
# Filter values come from the application, not the model: any valid Unicode (a lone surrogate
# cannot be bound to SQLite and raises UnicodeEncodeError, a ValueError).
_ID_CHAR = st.characters(categories=["L", "M", "N", "P", "S", "Z", "Cc", "Cf", "Co"])
_ID_SYNTAX = [s for s in FTS_SYNTAX if not any(0xD800 <= ord(c) <= 0xDFFF for c in s)]
_FRAGMENT = st.one_of(
    st.sampled_from(FTS_SYNTAX),
    st.sampled_from(CORPUS_WORDS),
    st.text(_ANY_CHAR, max_size=12),
)
_SEPARATOR = st.sampled_from(["", " ", "  ", "\t", "\n", "\r\n", "\xa0"])
HOSTILE = st.lists(st.tuples(_FRAGMENT, _SEPARATOR), max_size=16).map(
    lambda parts: "".join(f + s for f, s in parts)
)
"""Arbitrary text made of FTS5 syntax, corpus words and any Unicode, glued or spaced."""

_NON_TOKEN = st.characters(
    categories=["M", "P", "S", "Z", "Cc", "Cf", "Cs"], exclude_characters='"'
).filter(lambda c: TOKEN.match(c) is None)


def has_searchable_text(text: str) -> bool:
    """Oracle: a letter or digit outside bare operator words (quotes count as spaces)."""
    text = text.encode("utf-8", errors="ignore").decode("utf-8")
    text = re.sub(r'["\x00-\x1f\x7f]', " ", text)
    return any(TOKEN.search(c) for c in text.split() if c not in {"AND", "OR", "NOT"})


@st.composite
def query_with_free_word(draw: st.DrawFn) -> tuple[str, str]:
    """Hostile text around a corpus word that stands free (see property 3)."""
    word = draw(st.sampled_from(CORPUS_WORDS))
    word = draw(st.sampled_from([word, word.upper(), word.capitalize()]))
    left = draw(HOSTILE)
    if left.count('"') % 2:  # close a phrase the junk opened, so the word is not inside it
        left += '"'
    glue = draw(st.sampled_from(["", "AND ", "OR "]))
    pre = draw(st.text(_NON_TOKEN, max_size=4))
    post = draw(st.text(_NON_TOKEN, max_size=4))
    right = draw(HOSTILE)
    # "qqfiller" absorbs a NOT (or any operator) the junk may leave pending before the word.
    return f"{left} qqfiller {glue}{pre}{word}{post} {right}", word


def sessions_with(word: str) -> set[str]:
    return {
        s["id"]
        for s in CORPUS
        if any(word.lower() in (m.get("content") or "").lower() for m in s["messages"])
    }


@pytest.fixture(scope="module")
def fts() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZE}')")
    conn.executemany("INSERT INTO t(x) VALUES (?)", [(w,) for w in CORPUS_WORDS])
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def watcher(corpus: tuple[SessionBackend, StoreTarget]) -> Iterator[Watcher]:
    """Notices any write to the corpus store, by anyone (see ``store_targets.Watcher``)."""
    watch = Watcher(corpus[1])
    yield watch
    watch.close()


_TERM = r'"[^\W_]+(?: [^\W_]+)*"\*?'
RENDERED = re.compile(rf"{_TERM}(?: (?:(?:AND|OR|NOT) )?{_TERM})*")
_LEXEME = r"'[^\W_]+'(?::\*)?"
_PG_TERM = rf"(?:{_LEXEME}|\({_LEXEME}(?: <-> {_LEXEME})+\))"
RENDERED_TSQUERY = re.compile(rf"{_PG_TERM}(?: (?:& !|& |\| ){_PG_TERM})*")


# --------------------------------------------------------------------------- property 1


def _only_excluded(query: ParsedQuery) -> bool:
    """A query of NOT terms alone (``NOT nginx``): nothing to render, the search lists the
    recent sessions without them; rendering it is refused with EmptyQueryError."""
    if query.relaxed:
        return False
    assert query.excluded
    with pytest.raises(EmptyQueryError):
        to_fts5(query, "relaxed")
    return True


@settings(RELIABILITY_SETTINGS, max_examples=2800)
@given(text=HOSTILE)
@example(text='"unbalanced NEAR(a b) OR * ^ col:x')
@example(text="\ud800nginx\udfff")
@example(text="NOT nginx")
def test_rendered_expression_is_only_quoted_terms(fts: sqlite3.Connection, text: str) -> None:
    count("hostile.cases", backend="sqlite")
    count("hostile.render_cases", backend="sqlite")
    try:
        query = parse_query(text)
    except EmptyQueryError:
        assert not has_searchable_text(text)
        return
    if _only_excluded(query):
        return
    for reading in ("strict", "relaxed"):
        for cjk in (False, True):
            expression = to_fts5(query, reading, cjk=cjk)
            assert RENDERED.fullmatch(expression), expression
            fts.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expression,)).fetchone()


@pg_only
def test_rendered_tsquery_is_only_quoted_lexemes(pg_store_factory: StoreFactory) -> None:
    """Property 1 on PostgreSQL: the server's ``to_tsquery`` parses every rendering."""
    parse = "SELECT " + ", ".join([f"to_tsquery('{TS_CONFIG}', ?)::text"] * 4)
    pg_store_factory.open().close()  # the schema, with its text search configuration
    target = pg_store_factory.target()

    @settings(RELIABILITY_SETTINGS, max_examples=examples(2800, "postgres"))
    @given(text=HOSTILE)
    @example(text='"unbalanced NEAR(a b) OR * ^ col:x')
    @example(text="it's a \\'quoted\\' back\\slash & | ! <-> :* (")
    @example(text="\ud800nginx\udfff 服务端 x")
    @example(text="NOT nginx")
    def check(sql: Sql, text: str) -> None:
        count("hostile.cases", backend="postgres")
        count("hostile.render_cases", backend="postgres")
        try:
            query = parse_query(text)
        except EmptyQueryError:
            assert not has_searchable_text(text)
            return
        if not query.relaxed:  # NOT terms alone: refused, as on SQLite (see _only_excluded)
            with pytest.raises(EmptyQueryError):
                to_tsquery_text(query, "relaxed")
            return
        rendered = [
            to_tsquery_text(query, reading, cjk=cjk)
            for reading in ("strict", "relaxed")
            for cjk in (False, True)
        ]
        for expression in rendered:
            assert RENDERED_TSQUERY.fullmatch(expression), expression
        sql.execute(parse, rendered)

    with target.sql() as sql:
        check(sql)


# --------------------------------------------------------------------------- property 2


def test_search_raises_only_empty_query_and_never_writes(
    corpus_store: SessionBackend, watcher: Watcher
) -> None:
    backend = backend_of(corpus_store)

    @settings(RELIABILITY_SETTINGS, max_examples=examples(1800, backend))
    @given(text=HOSTILE)
    @example(text="'; DROP TABLE messages; --")
    @example(text="nginx\x00 OR \x1b kubernetes")
    @example(text="AND OR NOT")
    @example(text="nginx'); DELETE FROM sessions; -- & | ! <-> :*")
    def check(text: str) -> None:
        count("hostile.cases", backend=backend)
        try:
            outcome = search_sessions(corpus_store, text)
        except EmptyQueryError:
            assert not has_searchable_text(text), "EmptyQueryError for text with a searchable word"
        else:
            assert {r.root_id for r in outcome.sessions} <= CORPUS_IDS
        assert not watcher.changed(), f"searching {text!r} wrote to the store"

    check()


# --------------------------------------------------------------------------- property 3


def test_a_free_word_of_the_data_is_always_found(corpus_store: SessionBackend) -> None:
    backend = backend_of(corpus_store)

    @settings(RELIABILITY_SETTINGS, max_examples=examples(2400, backend))
    @given(case=query_with_free_word())
    @example(case=("NOT nginx", "nginx"))
    @example(case=('"open phrase qqfiller kubernetes', "kubernetes"))
    @example(case=("a NOT ( qqfiller (postgres)", "postgres"))
    @example(case=('content:x NEAR( qqfiller "" ^serialization* ) OR', "serialization"))
    @example(case=("'; qqfiller 2fa & !", "2fa"))
    def check(case: tuple[str, str]) -> None:
        text, word = case
        count("hostile.cases", backend=backend)
        count("hostile.word_present_cases", backend=backend)
        if parse_query(text).excluded:
            return  # NOT leaves out every session that mentions its word (issue 23 §4): a free
            # word may be in those sessions only; test_not_excludes_sessions covers NOT
        outcome = search_sessions(corpus_store, text)
        found = {r.root_id for r in outcome.sessions}
        assert found, f"no session for {text!r} although {word!r} is in the data"
        if outcome.reading in ("natural", "relaxed"):
            assert sessions_with(word) <= found

    check()


@pytest.mark.parametrize("layout", [1, 2, 3])
def test_a_free_word_is_found_in_every_hermes_layout(tmp_path: Path, layout: int) -> None:
    path = tmp_path / "state.db"
    build_hermes_db(path, layout, wal=True)
    words = ("nginx", "jetstream", "quorum")  # plain, compacted row, JSON content parts

    @settings(RELIABILITY_SETTINGS, max_examples=300)
    @given(text=HOSTILE, word=st.sampled_from(words), pre=st.text(_NON_TOKEN, max_size=3))
    def check(store: SessionStore, text: str, word: str, pre: str) -> None:
        count("hostile.cases", backend="sqlite")
        count("hostile.word_present_cases", backend="sqlite")
        count("hostile.hermes_layout_cases", backend="sqlite")
        if text.count('"') % 2:
            text += '"'
        query = f"{text} qqfiller {pre}{word} {text}"
        if parse_query(query).excluded:
            return  # NOT leaves out sessions that mention its word (issue 23 §4)
        outcome = search_sessions(store, query)
        assert outcome.sessions

    with SessionStore(path, read_only=True) as store:
        check(store)


# --------------------------------------------------------------------------- property 4


def test_hostile_filter_values_are_bound_not_formatted(
    corpus_store: SessionBackend, watcher: Watcher
) -> None:
    backend = backend_of(corpus_store)

    @settings(RELIABILITY_SETTINGS, max_examples=examples(800, backend))
    @given(
        user=st.one_of(st.sampled_from(_ID_SYNTAX), st.text(_ID_CHAR, max_size=20)),
        roles=st.lists(st.one_of(st.sampled_from(_ID_SYNTAX), st.text(_ID_CHAR)), max_size=4),
        sources=st.lists(st.one_of(st.sampled_from(_ID_SYNTAX), st.text(_ID_CHAR)), max_size=4),
        current=st.one_of(st.sampled_from(_ID_SYNTAX), st.text(_ID_CHAR, max_size=20)),
        word=st.sampled_from(CORPUS_WORDS),
    )
    @example(user="x' OR '1'='1", roles=["user') OR ('1'='1"], sources=["%"], current="*",
             word="nginx")  # fmt: skip
    def check(user: str, roles: list[str], sources: list[str], current: str, word: str) -> None:
        count("hostile.cases", backend=backend)
        count("hostile.filter_cases", backend=backend)
        scoped = search_sessions(corpus_store, word, user_id=user)
        assert scoped.sessions == []  # no corpus session has a user id
        if any(r.strip() and r.strip().lower() not in ROLE_NAMES for r in roles):
            # a search refuses a role no message has (issue 34 item 7); the store still binds
            # whatever it is given
            with pytest.raises(InvalidArgumentError, match="unknown role"):
                search_sessions(corpus_store, word, role_filter=roles)
            junk = SearchFilters(role_filter=tuple(roles), exclude_sources=tuple(sources))
            corpus_store.match_messages(parse_query(word), "relaxed", filters=junk, limit=10)
            roles = []
        filtered = search_sessions(
            corpus_store,
            word,
            role_filter=roles,
            exclude_sources=sources,
            current_session_id=current or None,
        )
        if not roles and "cli" not in sources:
            assert filtered.sessions  # junk filters that exclude nothing leave the match in place
        assert {r.root_id for r in filtered.sessions} <= CORPUS_IDS
        assert not watcher.changed()

    check()


# --------------------------------------------------------------------------- property 5


def test_retriever_raises_nothing(corpus_store: SessionBackend) -> None:
    backend = backend_of(corpus_store)
    retriever = SessionRecallRetriever(store=corpus_store, k=2)

    @settings(RELIABILITY_SETTINGS, max_examples=examples(1300, backend))
    @given(text=HOSTILE)
    @example(text="???")
    @example(text="\x00\x01")
    @example(text='"AND')
    @example(text=" \n\t")
    def check(text: str) -> None:
        count("hostile.cases", backend=backend)
        docs = retriever.invoke(text)
        if text.strip() and not has_searchable_text(text):
            assert docs == []
            return
        assert all(d.metadata["session_id"] in CORPUS_IDS for d in docs)
        modes = {d.metadata["mode"] for d in docs}
        assert modes <= ({"recent"} if not text.strip() else {"search"})

    check()


# --------------------------------------------------------------------------- property 6


def test_tool_and_cli_answer_any_text(corpus: tuple[SessionBackend, StoreTarget]) -> None:
    corpus_store, target = corpus
    backend = backend_of(corpus_store)
    tool = create_session_search_tool(corpus_store)

    @settings(RELIABILITY_SETTINGS, max_examples=examples(300, backend))
    @given(text=HOSTILE)
    @example(text='"" *** AND')
    @example(text="--db /etc/passwd")
    def check(text: str) -> None:
        count("hostile.cases", backend=backend)
        count("hostile.tool_cli_cases", backend=backend)
        call = {"name": "session_search", "args": {"query": text}, "id": "c1", "type": "tool_call"}
        payload = json.loads(tool.invoke(call).content)
        if payload["success"]:
            assert {r["session_id"] for r in payload["results"]} <= CORPUS_IDS
        else:
            assert text.strip() and not has_searchable_text(text)
            assert "nothing to search" in payload["error"]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err):
            # "--" ends the options, as for any POSIX command: the text may start with "-"
            argv = ["search", "--db", target.db, "--read-only", "--json", "--", text]
            code = cli_main(argv, out)
        if code == 0:
            assert {d["metadata"]["session_id"] for d in json.loads(out.getvalue())} <= CORPUS_IDS
        elif code == 2:
            assert not has_searchable_text(text), err.getvalue()
        else:
            assert code == 1, err.getvalue()

    check()


# --------------------------------------------------------------------------- 100 KB queries


def test_hundred_kilobyte_queries(corpus_store: SessionBackend) -> None:
    backend = backend_of(corpus_store)

    @settings(RELIABILITY_SETTINGS, max_examples=12)  # the same dozen on both backends
    @given(
        chunk=st.lists(st.tuples(_FRAGMENT, _SEPARATOR), min_size=1, max_size=6).map(
            lambda parts: "".join(f + s for f, s in parts) + " "
        ),
        word=st.sampled_from(CORPUS_WORDS),
    )
    @example(chunk="NOT nginx ", word="nginx")  # found by a run: the junk negates the word
    def check(chunk: str, word: str) -> None:
        count("hostile.cases", backend=backend)
        count("hostile.100kb_cases", backend=backend)
        junk = (chunk * (100_000 // len(chunk) + 1))[:100_000]
        if junk.count('"') % 2:
            junk += '"'
        # Only the first MAX_QUERY_CHARS are read (issue 21 §9): the word stands within them.
        head = junk[:1_000] + ('"' if junk[:1_000].count('"') % 2 else "")
        outcome = search_sessions(corpus_store, f"{head} qqfiller {word} {junk}")
        assert outcome.query.truncated and len(outcome.query.text) <= MAX_QUERY_CHARS
        if not outcome.query.excluded:  # the junk may say "NOT <word>": nothing is then right
            assert outcome.sessions
        docs = SessionRecallRetriever(store=corpus_store, k=1).invoke(junk)
        assert all(d.metadata["session_id"] in CORPUS_IDS for d in docs)

    check()
