"""User text -> full-text query (pure).

A query is parsed once into a backend-neutral :class:`ParsedQuery` and rendered for a backend
(:func:`to_fts5` for SQLite). Every term is emitted as a double-quoted FTS5 string built only
from letters and digits, so no user text can produce an FTS5 syntax error or reach SQL.

Two readings of the same query:

* **strict** honours what the user wrote on purpose: ``"exact phrase"``, ``docker OR
  kubernetes``, ``python NOT java``, ``deploy*`` (FTS5 precedence: NOT, then AND, then OR).
* **relaxed** is any of the content words (stop words dropped), ranked by relevance. A
  natural-language question uses it directly, since FTS5's implicit AND would demand every
  word; explicit syntax falls back to it when the strict reading matches nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from langchain_session_recall.cjk import bigram_text, has_cjk
from langchain_session_recall.errors import EmptyQueryError

__all__ = [
    "STOP_WORDS",
    "ParsedQuery",
    "Term",
    "parse_query",
    "to_fts5",
]

Reading = Literal["strict", "relaxed"]
Operator = Literal["AND", "OR", "NOT"]

# Words that carry no topic in a recall question. Kept short on purpose: a word the user may
# search for on its own (e.g. "error", "fix", "script") is never a stop word.
STOP_WORDS = frozenset(
    """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each else ever few
    for from further get got had has have having he her here hers herself him himself his how
    i if in into is it its itself just last let me might more most my myself no nor not now
    of off on once one only or other our ours ourselves out over own please previous recall
    recently remember same say said she should so some such tell than that the their theirs
    them themselves then there these they this those through time to too under until up us
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves ago week weeks yesterday today earlier before thing things something
    s t d ll m re ve
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_OPERATORS = frozenset({"AND", "OR", "NOT"})
# A token character is a letter or a digit, as for FTS5's unicode61 tokenizer ('_' splits).
_TOKEN = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"([^"]*)"')


@dataclass(frozen=True, slots=True)
class Term:
    """One searchable operand: a word, a phrase (adjacent tokens) or a prefix."""

    tokens: tuple[str, ...]
    prefix: bool = False
    quoted: bool = False
    """The user wrote the phrase in double quotes (the relaxed reading splits it)."""

    @property
    def is_phrase(self) -> bool:
        return len(self.tokens) > 1


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A query in both readings.

    ``strict`` pairs each term with the operator joining it to what precedes (``None`` for the
    first). ``relaxed`` is the set of content words. ``explicit`` says whether the user used
    any syntax (quotes, operators, prefix ``*``) on purpose.
    """

    text: str
    strict: tuple[tuple[Operator | None, Term], ...]
    relaxed: tuple[Term, ...]
    explicit: bool

    @property
    def words(self) -> tuple[str, ...]:
        """Distinct lower-cased content words, for highlighting and window centring."""
        seen: dict[str, None] = {}
        for term in self.relaxed:
            for tok in term.tokens:
                seen.setdefault(tok.lower(), None)
        return tuple(seen)


def _chunk_terms(chunk: str) -> list[Term]:
    """Terms of one whitespace-free chunk: ``docker-compose`` -> phrase, ``deploy*`` -> prefix."""
    prefix = chunk.endswith("*")
    tokens = tuple(_TOKEN.findall(chunk))
    if not tokens:
        return []
    return [Term(tokens, prefix=prefix)]


def _clean(text: str) -> str:
    # Lone surrogates and control characters cannot be tokens; drop them up front.
    text = text.encode("utf-8", errors="ignore").decode("utf-8")
    return "".join(" " if (ord(c) < 32 or ord(c) == 127) else c for c in text)


def parse_query(text: str) -> ParsedQuery:
    """Parse user text. Raises :class:`EmptyQueryError` when nothing is searchable.

    Example:
        >>> q = parse_query("how did we fix the CORS error?")
        >>> [t.tokens for t in q.relaxed], q.explicit
        ([('fix',), ('CORS',), ('error',)], False)
        >>> parse_query('"exact phrase" OR deploy*').explicit
        True
    """
    if not isinstance(text, str):
        raise TypeError(f"query must be a string, got {type(text).__name__}")
    text = _clean(text)
    scan = _Scan()
    pos = 0
    for match in _PHRASE.finditer(text):
        scan.words(text[pos : match.start()])
        tokens = tuple(_TOKEN.findall(match.group(1)))
        if tokens:
            scan.explicit = True
            scan.add(Term(tokens, quoted=True))
        pos = match.end()
    scan.words(text[pos:].replace('"', " "))

    positive = [t for op, t in scan.items if op != "NOT"]
    if not positive:
        raise EmptyQueryError(f"nothing to search in {text!r}: no letters or digits")
    relaxed = _relaxed_terms(positive, drop_stop_words=True)
    explicit = scan.explicit or any(t.prefix for t in positive)
    strict = tuple(scan.items) if explicit else tuple((None, t) for t in relaxed)
    return ParsedQuery(text=text, strict=strict, relaxed=relaxed, explicit=explicit)


class _Scan:
    """Accumulates ``(operator, term)`` pairs; adjacent terms get FTS5's implicit AND."""

    def __init__(self) -> None:
        self.items: list[tuple[Operator | None, Term]] = []
        self.pending: Operator | None = None
        self.explicit = False

    def add(self, term: Term) -> None:
        op: Operator | None = (self.pending or "AND") if self.items else None
        self.items.append((op, term))
        self.pending = None

    def words(self, segment: str) -> None:
        for chunk in segment.split():
            if chunk in _OPERATORS:
                # An operator with no term before it cannot be expressed; the word is dropped.
                if self.items:
                    self.pending = chunk  # type: ignore[assignment]
                    self.explicit = True
                continue
            for term in _chunk_terms(chunk):
                self.add(term)


def _relaxed_terms(terms: list[Term], *, drop_stop_words: bool) -> tuple[Term, ...]:
    out: dict[Term, None] = {}
    for term in terms:
        if term.prefix or (term.is_phrase and not term.quoted):
            # ``deploy*`` and ``docker-compose`` stay whole: splitting them loses their meaning
            out.setdefault(Term(term.tokens, prefix=term.prefix), None)
            continue
        for word in term.tokens:
            if drop_stop_words and word.lower() in STOP_WORDS:
                continue
            out.setdefault(Term((word,)), None)
    if not out:  # only stop words: search them rather than nothing
        return _relaxed_terms(terms, drop_stop_words=False)
    return tuple(out)


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def _fts5_term(term: Term, *, cjk: bool) -> str:
    tokens = term.tokens
    if cjk:
        tokens = tuple(tok for t in tokens for tok in bigram_text(t).split())
        if len(tokens) == 1 and has_cjk(tokens[0]) and len(tokens[0]) == 1:
            return _quote(tokens[0]) + "*"  # a lone CJK character: prefix of its bigrams
    body = _quote(" ".join(tokens))
    return body + "*" if term.prefix else body


def to_fts5(query: ParsedQuery, reading: Reading, *, cjk: bool = False) -> str:
    """Render an FTS5 MATCH expression.

    ``cjk=True`` renders for the bigram index (see :mod:`langchain_session_recall.cjk`).

    Example:
        >>> to_fts5(parse_query("docker-compose OR k8s"), "strict")
        '"docker compose" OR "k8s"'
        >>> to_fts5(parse_query("fix the CORS error"), "relaxed")
        '"fix" OR "CORS" OR "error"'
    """
    if reading == "relaxed":
        return " OR ".join(_fts5_term(t, cjk=cjk) for t in query.relaxed)
    parts: list[str] = []
    for op, term in query.strict:
        if op is not None:
            parts.append(op)
        parts.append(_fts5_term(term, cjk=cjk))
    return " ".join(parts)
