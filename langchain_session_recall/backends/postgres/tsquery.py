"""Parsed query -> PostgreSQL ``tsquery`` text (pure).

The twin of ``backends/sqlite/fts.py``'s ``to_fts5`` for the PostgreSQL backend. The same
:class:`~langchain_session_recall.core.query.ParsedQuery` is rendered in ``to_tsquery`` syntax:
every token becomes a single-quoted lexeme (quotes and backslashes escaped, although the parser
only ever yields letters and digits), phrases are joined with ``<->``, prefixes get ``:*``,
``NOT`` becomes ``& !``. The result is passed to ``to_tsquery(config, %s)`` as a bound
parameter, so user text never reaches SQL and never produces a tsquery syntax error.

We do not use ``websearch_to_tsquery``: its language differs from ours (no prefix search, a
different NOT), and one parser for both backends keeps their readings identical. The operator
precedence matches FTS5's (NOT, then AND, then OR): tsquery binds ``!`` tighter than ``&``,
and ``&`` tighter than ``|``.

A prefix is always rendered as written (``'c':*``): PostgreSQL lists no vocabulary, so a search
never gives it :attr:`~langchain_session_recall.core.query.Term.completions` (its GIN index
matches a prefix by one scan of the index entries; see docs/reliability.md).
"""

from __future__ import annotations

from langchain_session_recall.core.cjk import bigram_text, has_cjk
from langchain_session_recall.core.query import MAX_QUERY_TERMS, ParsedQuery, Reading, Term

__all__ = ["quote_lexeme", "to_tsquery_text"]

_OPERATORS = {"AND": "&", "OR": "|", "NOT": "& !"}


def quote_lexeme(token: str) -> str:
    """One lexeme in tsquery syntax: single-quoted, with ``'`` and ``\\`` escaped.

    Example:
        >>> quote_lexeme("it's")
        "'it''s'"
    """
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def _term(term: Term, *, cjk: bool) -> str:
    tokens = term.tokens
    if cjk:
        tokens = tuple(tok for t in tokens for tok in bigram_text(t).split())[:MAX_QUERY_TERMS]
        if len(tokens) == 1 and has_cjk(tokens[0]) and len(tokens[0]) == 1:
            return quote_lexeme(tokens[0]) + ":*"  # a lone CJK character: prefix of its bigrams
    lexemes = [quote_lexeme(t) for t in tokens]
    if term.prefix:
        lexemes[-1] += ":*"
    if len(lexemes) == 1:
        return lexemes[0]
    return "(" + " <-> ".join(lexemes) + ")"


def to_tsquery_text(query: ParsedQuery, reading: Reading, *, cjk: bool = False) -> str:
    """Render one reading of ``query`` as text for ``to_tsquery``.

    ``cjk=True`` renders for the CJK bigram column (see :mod:`langchain_session_recall.core.cjk`).

    Example:
        >>> from langchain_session_recall.core.query import parse_query
        >>> to_tsquery_text(parse_query("docker-compose OR k8s NOT helm"), "strict")
        "('docker' <-> 'compose') | 'k8s' & !'helm'"
        >>> to_tsquery_text(parse_query("how did we fix the CORS error"), "relaxed")
        "'fix' | 'CORS' | 'error'"
        >>> to_tsquery_text(parse_query("deploy*"), "strict")
        "'deploy':*"
    """
    query.require_terms()
    if reading == "relaxed":
        return " | ".join(_term(t, cjk=cjk) for t in query.relaxed)
    parts: list[str] = []
    for op, term in query.strict:
        if parts:  # terms side by side are an implicit AND, as in FTS5
            parts.append(_OPERATORS[op or "AND"])
        parts.append(_term(term, cjk=cjk))
    return " ".join(parts).replace("& ! ", "& !")
