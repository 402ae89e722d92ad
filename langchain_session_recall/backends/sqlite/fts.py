"""Parsed query -> FTS5 ``MATCH`` expression, and the porter stemming it must agree with.

The SQLite twin of :mod:`langchain_session_recall.backends.postgres.tsquery`. Every term is
emitted as a double-quoted FTS5 string built only from letters and digits, so no user text can
produce an FTS5 syntax error or reach SQL.
"""

from __future__ import annotations

import functools
import sqlite3
import threading

from langchain_session_recall.backends.sqlite.schema import TOKENIZE
from langchain_session_recall.core.cjk import bigram_text, has_cjk
from langchain_session_recall.core.query import MAX_QUERY_TERMS, ParsedQuery, Reading, Term

__all__ = ["stable_prefix", "to_fts5"]


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def _fts5_term(term: Term, *, cjk: bool, complete: bool = True) -> str:
    tokens = term.tokens
    if cjk:
        tokens = tuple(tok for t in tokens for tok in bigram_text(t).split())[:MAX_QUERY_TERMS]
        if len(tokens) == 1 and has_cjk(tokens[0]) and len(tokens[0]) == 1:
            return _quote(tokens[0]) + "*"  # a lone CJK character: prefix of its bigrams
    if term.prefix and term.completions and complete:
        alternatives = [_completed(tokens[:-1], word) for word in term.completions]
        return alternatives[0] if len(alternatives) == 1 else f"({' OR '.join(alternatives)})"
    if term.prefix:
        tokens = (*tokens[:-1], stable_prefix(tokens[-1]))
        return _quote(" ".join(tokens)) + "*"
    return _quote(" ".join(tokens))


def _completed(head: tuple[str, ...], word: str) -> str:
    """The phrase ``head`` + ``word``, ``word`` an index word (a stem): FTS5 stems a query's
    tokens again, so a stem that stemming would change is matched as a prefix of what stemming
    leaves of it (a few index words, not the prefix the user wrote)."""
    if _porter(word) == word:
        return _quote(" ".join((*head, word)))
    return _quote(" ".join((*head, stable_prefix(word)))) + "*"


_STEMMER = threading.local()


@functools.lru_cache(maxsize=4096)
def _porter(word: str, *, stem: bool = True) -> str:
    """``word`` as the index's porter tokenizer stores it (SQLite's own stemmer, in memory).

    ``stem=False`` only folds case and diacritics, as the index does before stemming.
    """
    conn = getattr(_STEMMER, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZE}')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
        folding = TOKENIZE.replace("porter ", "")
        conn.execute(f"CREATE VIRTUAL TABLE f USING fts5(x, tokenize='{folding}')")
        conn.execute("CREATE VIRTUAL TABLE fv USING fts5vocab(f, 'row')")
        _STEMMER.conn = conn
    table, vocab = ("t", "v") if stem else ("f", "fv")
    conn.execute(f"INSERT INTO {table}(x) VALUES (?)", (word,))
    row = conn.execute(f"SELECT term FROM {vocab}").fetchone()
    conn.execute(f"DELETE FROM {table}")
    return str(row[0]) if row else word.lower()


@functools.lru_cache(maxsize=4096)
def stable_prefix(word: str) -> str:
    """The longest prefix of ``word`` that stemming leaves alone.

    FTS5 stems a prefix query's token like a whole word, so ``deploy*`` would search ``deploi*``
    and miss *deployment* (stored as ``deploy``). Cutting the prefix back to what the stemmer
    does not change (``deplo``) keeps every inflection.

    Example:
        >>> stable_prefix("deploy"), stable_prefix("kube")
        ('deplo', 'kube')
    """
    # Compare with the stem in the index's folded form ("é" is stored as "e"), else an accented
    # prefix never equals its stem and would be cut down to nothing.
    folded = prefix = _porter(word, stem=False)
    for _ in range(len(prefix)):
        stem = _porter(prefix)
        if stem == prefix:
            break
        common = next(
            (i for i, (a, b) in enumerate(zip(prefix, stem, strict=False)) if a != b), None
        )
        prefix = prefix[: common if common is not None else len(stem)] or prefix[:-1]
    return prefix or folded  # never an empty prefix: FTS5 matches nothing with ""*


def to_fts5(
    query: ParsedQuery, reading: Reading, *, cjk: bool = False, complete: bool = True
) -> str:
    """Render an FTS5 MATCH expression.

    ``cjk=True`` renders for the bigram index (see :mod:`langchain_session_recall.core.cjk`).
    A prefix with :attr:`~langchain_session_recall.core.query.Term.completions` is rendered as
    those words (``complete=False``: as written, for an index the completions were not read
    from).

    Example:
        >>> from langchain_session_recall.core.query import parse_query
        >>> to_fts5(parse_query("docker-compose OR k8s"), "strict")
        '"docker compose" OR "k8s"'
        >>> to_fts5(parse_query("fix the CORS error"), "relaxed")
        '"fix" OR "CORS" OR "error"'
        >>> from dataclasses import replace
        >>> term = replace(parse_query("error-c*").relaxed[0], completions=("config", "cach"))
        >>> to_fts5(replace(parse_query("x"), relaxed=(term,)), "relaxed")
        '("error config" OR "error cach")'
    """
    query.require_terms()
    if reading == "relaxed":
        return " OR ".join(_fts5_term(t, cjk=cjk, complete=complete) for t in query.relaxed)
    parts: list[str] = []
    for op, term in query.strict:
        if op is not None:
            parts.append(op)
        parts.append(_fts5_term(term, cjk=cjk, complete=complete))
    return " ".join(parts)
