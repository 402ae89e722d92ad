"""User text -> full-text query (pure).

A query is parsed once into a backend-neutral :class:`ParsedQuery`; each backend renders it
in its own syntax (``backends/sqlite/fts.py``, ``backends/postgres/tsquery.py``). Tokens are
letters and digits only, so no user text can become query syntax.

Two readings of the same query:

* **strict** honours what the user wrote on purpose: ``"exact phrase"``, ``docker OR
  kubernetes``, ``python NOT java``, ``deploy*`` (FTS5 precedence: NOT, then AND, then OR).
* **relaxed** is any of the content words (stop words dropped), ranked by relevance. A
  natural-language question uses it directly, since FTS5's implicit AND would demand every
  word; explicit syntax falls back to it when the strict reading matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from langchain_session_recall.core.cjk import (
    CJK_CHARS,
    CJK_PUNCTUATION,
    CJK_RUN,
    HAN,
    HANGUL,
    HIRAGANA,
    KATAKANA,
    char_class,
)
from langchain_session_recall.core.spelling import MAX_CORRECTIONS, closest_words, edit_distance
from langchain_session_recall.errors import EmptyQueryError, InvalidOptionError
from langchain_session_recall.messages import storable_text

__all__ = [
    "CJK_STOP_BIGRAMS",
    "MAX_CORRECTIONS",
    "MAX_EXCLUDED_TERMS",
    "MAX_PREFIX_COMPLETIONS",
    "MAX_PREFIX_TERMS",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_COMPLETIONS",
    "MAX_QUERY_TERMS",
    "MAX_SEARCH_TERMS",
    "MAX_WORD_CHARS",
    "QUERY_LIMITS",
    "STOP_WORDS",
    "ParsedQuery",
    "SearchedQuery",
    "Term",
    "bound_query",
    "closest_words",
    "complete_prefixes",
    "cut_long_runs",
    "edit_distance",
    "highlight_words",
    "parse_query",
    "query_echo",
    "query_segments",
    "search_terms",
    "searched_query",
    "separate_cjk_words",
]

Reading = Literal["strict", "relaxed"]
Operator = Literal["AND", "OR", "NOT"]

MAX_QUERY_CHARS = 2_000
"""Characters of a query that are searched: the rest is dropped before anything reads the text
(a pasted 10 MB log costs what its first 2,000 characters cost). A question or a list of
keywords is far shorter; an error message pasted whole fits."""
MAX_WORD_CHARS = 128
"""Longest word searched as written (a SHA-512 in hex is 128): a longer word is searched as a
prefix of its first 128 characters, so a pasted blob is still found by its beginning. A run of
CJK characters (no spaces in Chinese or Japanese: a sentence, not a word) is cut into pieces of
this many characters instead, each searched by its words and bigrams."""
QUERY_ECHO_CHARS = 80
"""Characters of a query an error message quotes."""
QUERY_LIMITS = (
    f"Queries are cut to their first {MAX_QUERY_CHARS:,} characters; a word longer than "
    f"{MAX_WORD_CHARS} characters is searched as a prefix of its first {MAX_WORD_CHARS}."
)
"""The caps as one sentence, for tool descriptions and notices."""

MAX_QUERY_TERMS = 256
"""Terms a query keeps in each reading, search terms a query yields (after CJK words are cut
into bigrams), and tokens a phrase keeps: the rest of a longer query is dropped
(``ParsedQuery.truncated``), so no rendered expression holds more than this many terms, and
the cost of a search stays bounded whatever an agent sends (a query of 10,000 words)."""
MAX_EXCLUDED_TERMS = 8
"""``NOT`` terms a query keeps (each costs one full-text query to find the sessions it leaves
out)."""
MAX_PREFIX_TERMS = 3
"""Prefix terms (``deploy*``) a query searches, ``NOT`` ones included (those to find count
first): later ones are left out, and ``ParsedQuery.notices`` says how many. A prefix stands for
every word it starts: its cost is what it expands to (:data:`MAX_QUERY_COMPLETIONS`), not what
it looks like, so the budget counts prefixes, not terms. Sixteen hyphenated prefixes
(``error-c* deploy-t* ...``) cost 20 times a typical query in 200,000 messages when each was
searched (issue 32 §4); with three searched, under 5 times (``docs/reliability.md``)."""
MAX_PREFIX_COMPLETIONS = 3
"""Index words a prefix term is searched as, where the store can list its vocabulary (SQLite):
the prefix's most frequent completions (:func:`complete_prefixes`). ``error-c*`` matched as
written would read the position lists of every indexed word that starts with ``c`` for each
full-text query of a search (the strict reading, the probe, the ranking, the per-session
pass): some seconds for sixteen such prefixes in 200,000 messages. Searched as the phrases
``"error config"``, ``"error cache"``... it costs what those words cost."""
MAX_QUERY_COMPLETIONS = 3
"""Completions a query's prefixes share (each has at most :data:`MAX_PREFIX_COMPLETIONS`, at
least one): one prefix gets three words, two or three prefixes one each, so the prefixes of a
query cost at most what three words (or phrases) cost, and at most :data:`MAX_PREFIX_TERMS`
reads of the vocabulary."""

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

# --------------------------------------------------------------------------- CJK words
# Chinese and Japanese write no spaces: where a query's CJK text parts into words is decided here,
# beside the parser, from the one table of what counts as CJK (core/cjk.py).

# A word boundary in a CJK query: CJK punctuation anywhere, and any other punctuation or symbol
# next to a CJK character ("deploy失败,怎么办"). '*' (a prefix) and '"' (a phrase) stay syntax.
_SEPARATOR = re.compile(
    f'[{CJK_PUNCTUATION}]|(?<=[{CJK_CHARS}])[^\\w\\s*"]|[^\\w\\s*"](?=[{CJK_CHARS}])'
)


def separate_cjk_words(text: str) -> str:
    """``text`` with CJK punctuation (and punctuation touching CJK text) made spaces.

    Chinese and Japanese write no spaces: the punctuation is where a question's words part, so
    ``失败了，怎么办`` is two words, not the phrase "失败了 怎么办" a hyphen makes of
    ``docker-compose``.

    Example:
        >>> separate_cjk_words("数据库迁移失败了，怎么办？ docker-compose deploy失败,怎么办")
        '数据库迁移失败了 怎么办  docker-compose deploy失败 怎么办'
    """
    return _SEPARATOR.sub(" ", text)


def cut_long_runs(text: str, max_chars: int) -> str:
    """``text`` with every CJK run longer than ``max_chars`` cut into pieces of ``max_chars``
    separated by spaces, each piece starting on the last character of the one before (so every
    bigram of the run is in a piece).

    A run with no punctuation in it is a sentence or a paragraph, not a word: searched as
    one token it would match only the same paragraph.

    Example:
        >>> cut_long_runs("ab数据库迁移", 3)
        'ab数据库 库迁移'
    """
    step = max(1, max_chars - 1)

    def cut(match: re.Match[str]) -> str:
        run = match.group(0)
        if len(run) <= max_chars:
            return run
        starts = range(0, len(run) - 1, step)
        return " ".join(run[i : i + max_chars] for i in starts)

    return CJK_RUN.sub(cut, text)


# Two-character question and filler words of Chinese recall questions ("上次怎么修改的...").
_STOP = "怎么 什么 为什 么样 如何 上次 之前 以前 我们 你们 那个 这个 哪个 时候 一下 多少 是不 有没"
CJK_STOP_BIGRAMS = frozenset([*_STOP.split(), "可以", "能不", "帮我", "请问", "记得"])
# Chinese function characters that end a word: a run is split there before taking bigrams.
_ZH_BREAKS = "的了吗呢吧啊是在和把就都也还又与及或"
# One segment per script: Han, Katakana (with the prolonged sound mark), Hiragana, Hangul,
# anything else (Latin, digits). Japanese questions glue particles (hiragana) to words.
_SEGMENT = re.compile(
    f"([{char_class(HAN)}]+|[{char_class(KATAKANA)}]+|[{char_class(HIRAGANA)}]+"
    f"|[{char_class(HANGUL)}]+)"
)
_HIRAGANA = re.compile(f"[{char_class(HIRAGANA)}]+")


def query_segments(token: str) -> list[str]:
    """Split one query token (CJK glued to Latin) into the parts worth searching.

    Scripts are separated (``youer服务端`` -> ``youer``, ``服务端``; ``キャッシュが効かない`` ->
    ``キャッシュ``, ``効``), Chinese runs are cut at function characters (``的``, ``了``) and
    Japanese particles and inflection endings (hiragana next to other scripts) are dropped.

    Example:
        >>> query_segments("上次修改的youer服务端")
        ['上次修改', 'youer', '服务端']
        >>> query_segments("Dockerのキャッシュが効かない")
        ['Docker', 'キャッシュ', '効']
    """
    parts = [p for p in _SEGMENT.split(token) if p]
    only_hiragana = all(_HIRAGANA.fullmatch(p) for p in parts)
    out: list[str] = []
    for part in parts:
        if _HIRAGANA.fullmatch(part) and not only_hiragana:
            continue
        if "\u4e00" <= part[0] <= "\u9fff":
            out.extend(p for p in re.split(f"[{_ZH_BREAKS}]", part) if p)
        else:
            out.append(part)
    return out


_OPERATORS = frozenset({"AND", "OR", "NOT"})
# A token character is a letter or a digit, as for FTS5's unicode61 tokenizer ('_' splits).
_TOKEN = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"([^"]*)"')
_POSSESSIVE = re.compile(r"(\w)['\u2019]s(?=\W*$)")


@dataclass(frozen=True, slots=True)
class Term:
    """One searchable operand: a word, a phrase (adjacent tokens) or a prefix."""

    tokens: tuple[str, ...]
    prefix: bool = False
    quoted: bool = False
    """The user wrote the phrase in double quotes (the relaxed reading splits it)."""
    completions: tuple[str, ...] = field(default=(), repr=False)
    """For a prefix, the index words searched in place of its last token (as the index stores
    them, see :func:`complete_prefixes`); empty: the prefix as written."""

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
    truncated: bool = False
    """Something was cut to keep the query within the caps (:data:`MAX_QUERY_CHARS`,
    :data:`MAX_WORD_CHARS`, :data:`MAX_QUERY_TERMS`, :data:`MAX_PREFIX_TERMS`); ``notices``
    says what."""
    notices: tuple[str, ...] = ()
    """One sentence per cap the query exceeded, e.g. ``"the query was cut to its first 2,000
    characters (of 3,600,000)"``."""
    excluded: tuple[Term, ...] = ()
    """Terms after ``NOT`` (also a leading one): a session mentioning any of them anywhere is
    left out of the results, not only the messages that do. A query of ``NOT`` terms alone
    (``relaxed`` empty) lists the recent sessions that mention none of them."""
    source: str = field(default="", repr=False, compare=False)
    """The text as it was given to :func:`parse_query` (before any cap): what this parse is of."""

    def require_terms(self) -> None:
        """Raise :class:`EmptyQueryError` when the query holds only ``NOT`` terms: an index
        cannot match "not python" (the search lists recent sessions for it instead)."""
        if not self.relaxed:
            raise EmptyQueryError(
                f"{query_echo(self.text)} only leaves sessions out: add what to look for "
                "('deploy NOT python'), or search it as a whole to list recent sessions"
            )

    @property
    def any_of(self) -> bool:
        """``a OR b OR "c d"``: the strict reading means any of the terms, as the relaxed one
        does (it is ranked by term coverage, as a natural query is).

        Example:
            >>> parse_query("docker OR kubernetes").any_of, parse_query("docker AND k8s").any_of
            (True, False)
        """
        ops = [op for op, _ in self.strict[1:]]
        return bool(ops) and all(op == "OR" for op in ops)

    @property
    def words(self) -> tuple[str, ...]:
        """Distinct lower-cased content words, for highlighting and window centring."""
        seen: dict[str, None] = {}
        for term in self.relaxed:
            for tok in term.tokens:
                seen.setdefault(tok.lower(), None)
        return tuple(seen)


def _chunk_terms(chunk: str) -> list[Term]:
    """Terms of one whitespace-free chunk: ``docker-compose`` -> phrase, ``deploy*`` -> prefix,
    ``Ana's`` -> ``Ana`` (a possessive read as the phrase "ana s" finds only the places where
    someone else names her). A word over :data:`MAX_WORD_CHARS` becomes a prefix of its start."""
    tokens, cut = _tokens(_POSSESSIVE.sub(r"\1", chunk))
    if not tokens:
        return []
    return [Term(tokens, prefix=chunk.endswith("*") or cut)]


def _tokens(text: str) -> tuple[tuple[str, ...], bool]:
    """The tokens of ``text`` (at most :data:`MAX_QUERY_TERMS`, each at most
    :data:`MAX_WORD_CHARS`), and whether a longer last token was cut (its prefix is meant)."""
    tokens = _TOKEN.findall(cut_long_runs(text, MAX_WORD_CHARS))[:MAX_QUERY_TERMS]
    cut = bool(tokens) and len(tokens[-1]) > MAX_WORD_CHARS
    return tuple(t[:MAX_WORD_CHARS] for t in tokens), cut


def _clean(text: str) -> str:
    # Lone surrogates and control characters cannot be tokens; drop them up front.
    text = text.encode("utf-8", errors="ignore").decode("utf-8")
    return "".join(" " if (ord(c) < 32 or ord(c) == 127) else c for c in text)


def bound_query(text: str) -> str:
    """``text`` within :data:`MAX_QUERY_CHARS`, lone surrogates as U+FFFD: the query as it is
    searched, shown and sent on (pure, cheap on any size).

    Example:
        >>> len(bound_query("nginx " * 1_000_000)), bound_query("emoji " + chr(0xD83D))
        (2000, 'emoji �')
    """
    return storable_text(text[:MAX_QUERY_CHARS])


def query_echo(text: str) -> str:
    """``text`` as an error message may quote it: at most :data:`QUERY_ECHO_CHARS` characters.

    Example:
        >>> query_echo("?" * 1000).endswith("???'...(cut)"), len(query_echo("?" * 1000))
        (True, 90)
    """
    if len(text) <= QUERY_ECHO_CHARS:
        return repr(storable_text(text))
    return f"{storable_text(text[:QUERY_ECHO_CHARS])!r}...(cut)"


def parse_query(text: str) -> ParsedQuery:
    """Parse user text. Raises :class:`EmptyQueryError` when nothing is searchable.

    Only the first :data:`MAX_QUERY_CHARS` characters are read, and words are cut to
    :data:`MAX_WORD_CHARS` (``truncated`` and ``notices`` say so).

    Example:
        >>> q = parse_query("how did we fix the CORS error?")
        >>> [t.tokens for t in q.relaxed], q.explicit
        ([('fix',), ('CORS',), ('error',)], False)
        >>> parse_query('"exact phrase" OR deploy*').explicit
        True
        >>> parse_query("x " * 5000).notices[0]
        'the query was cut to its first 2,000 characters (of 10,000)'
    """
    if not isinstance(text, str):
        raise InvalidOptionError(f"query must be a string, got {type(text).__name__}")
    source, length = text, len(text)
    text = _clean(text[:MAX_QUERY_CHARS])
    scan = _Scan()
    pos = 0
    for match in _PHRASE.finditer(text):
        scan.words(text[pos : match.start()])
        tokens, cut = _tokens(match.group(1))
        if tokens:
            scan.explicit = True
            scan.add(Term(tokens, quoted=True, prefix=cut))
        pos = match.end()
    scan.words(text[pos:].replace('"', " "))

    positive = [t for op, t in scan.items if op != "NOT"]
    excluded = tuple(dict.fromkeys([*scan.leading, *(t for op, t in scan.items if op == "NOT")]))
    excluded = excluded[:MAX_EXCLUDED_TERMS]
    # the prefixes searched: the first MAX_PREFIX_TERMS, those to find before those to leave out
    kept, left_out = _prefix_budget([*positive, *excluded])
    excluded = tuple(t for t in excluded if _within(t, kept))
    if not positive and excluded:  # "NOT python": nothing to find, only what to leave out
        return ParsedQuery(
            text=text,
            strict=(),
            relaxed=(),
            explicit=True,
            excluded=excluded,
            truncated=bool(left_out),
            notices=_notices(text, length, cut_terms=False, left_out=left_out),
            source=source,
        )
    if not positive:
        raise EmptyQueryError(f"nothing to search in {query_echo(text)}: no letters or digits")
    explicit = scan.explicit or any(t.prefix for t in positive)
    relaxed, cut_relaxed = _capped(_relaxed_terms(positive, drop_stop_words=True), kept)
    if explicit:
        items = [(op, t) for op, t in scan.items if _within(t, kept)]
        terms, cut_strict = _capped(tuple(t for _, t in items), kept)
        strict = tuple(zip((op for op, _ in items), terms, strict=False))
    else:
        strict, cut_strict = tuple((None, t) for t in relaxed), False
    notices = _notices(text, length, cut_terms=cut_relaxed or cut_strict, left_out=left_out)
    return ParsedQuery(
        text=text,
        strict=strict,
        relaxed=relaxed,
        excluded=excluded,
        explicit=explicit,
        truncated=bool(notices),
        notices=notices,
        source=source,
    )


def _prefix_budget(terms: Sequence[Term]) -> tuple[frozenset[tuple[str, ...]], int]:
    """The prefixes a query searches (the first :data:`MAX_PREFIX_TERMS` distinct ones, by
    their tokens) and how many others it leaves out (pure).

    Example:
        >>> terms = [Term((w,), prefix=True) for w in "abcab"] + [Term(("d", "e"), prefix=True)]
        >>> kept, left_out = _prefix_budget(terms)
        >>> sorted(kept), left_out
        ([('a',), ('b',), ('c',)], 1)
    """
    prefixes = list(dict.fromkeys(t.tokens for t in terms if t.prefix))
    return frozenset(prefixes[:MAX_PREFIX_TERMS]), max(0, len(prefixes) - MAX_PREFIX_TERMS)


def _within(term: Term, kept: frozenset[tuple[str, ...]]) -> bool:
    return not term.prefix or term.tokens in kept


def _notices(text: str, length: int, *, cut_terms: bool, left_out: int = 0) -> tuple[str, ...]:
    notices = []
    if length > MAX_QUERY_CHARS:
        notices.append(
            f"the query was cut to its first {MAX_QUERY_CHARS:,} characters (of {length:,})"
        )
    if any(len(t) > MAX_WORD_CHARS for t in _TOKEN.findall(cut_long_runs(text, MAX_WORD_CHARS))):
        notices.append(
            f"words longer than {MAX_WORD_CHARS} characters were searched as prefixes of "
            f"their first {MAX_WORD_CHARS}"
        )
    if cut_terms:
        notices.append(f"only the first {MAX_QUERY_TERMS} terms were searched")
    if left_out:
        notices.append(
            f"only the first {MAX_PREFIX_TERMS} prefixes (word*) were searched: "
            f"{left_out} more {'were' if left_out > 1 else 'was'} left out"
        )
    return tuple(notices)


def _capped(
    terms: tuple[Term, ...], kept: frozenset[tuple[str, ...]]
) -> tuple[tuple[Term, ...], bool]:
    """The first :data:`MAX_QUERY_TERMS` terms, a prefix not in ``kept`` (the prefixes
    searched, see :func:`_prefix_budget`) left out first (pure); and whether any other term
    was cut.

    Example:
        >>> terms = tuple(Term((f"w{i}",), prefix=True) for i in range(MAX_QUERY_TERMS + 1))
        >>> out, cut = _capped(terms, frozenset({("w0",), ("w300",)}))
        >>> [t.tokens for t in out], cut
        ([('w0',)], False)
        >>> len(_capped(tuple(Term((f"w{i}",)) for i in range(300)), frozenset())[0])
        256
    """
    searched = tuple(t for t in terms if _within(t, kept))
    return searched[:MAX_QUERY_TERMS], len(searched) > MAX_QUERY_TERMS


class _Scan:
    """Accumulates ``(operator, term)`` pairs; adjacent terms get FTS5's implicit AND."""

    def __init__(self) -> None:
        self.items: list[tuple[Operator | None, Term]] = []
        self.pending: Operator | None = None
        self.explicit = False
        self.leading: list[Term] = []
        """Terms negated before any term to search (``NOT python django``)."""

    def add(self, term: Term) -> None:
        if not self.items and self.pending == "NOT":
            self.leading.append(term)
            self.pending = None
            return
        op: Operator | None = (self.pending or "AND") if self.items else None
        self.items.append((op, term))
        self.pending = None

    def words(self, segment: str) -> None:
        # CJK punctuation parts words as a space does (``失败了，怎么办``: two words, not the
        # phrase a hyphen makes of ``docker-compose``); a long CJK run is cut into pieces.
        segment = cut_long_runs(separate_cjk_words(segment), MAX_WORD_CHARS)
        for chunk in segment.split():
            if chunk in _OPERATORS:
                # AND/OR with no term before them cannot be expressed; the word is dropped. A
                # leading NOT negates the next term (it leaves out the sessions holding it).
                if self.items or chunk == "NOT":
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


# --------------------------------------------------------------------------- prefix completions

Completions = Callable[[str, int], "tuple[Sequence[str], int] | None"]
"""``(prefix, limit) -> (the limit most frequent index words starting with it, how many there
are)``, or ``None`` when the store cannot list its vocabulary."""


def complete_prefixes(
    query: ParsedQuery, completions: Completions
) -> tuple[ParsedQuery, dict[str, tuple[str, ...]]]:
    """``query`` with each prefix term searched as its most frequent completions (at most
    :data:`MAX_PREFIX_COMPLETIONS`, and :data:`MAX_QUERY_COMPLETIONS` shared by the query's
    prefixes), and, for each prefix that had more, the words searched (``{"c*": ("config",
    "cach", ...)}``, as a search reports the words searched instead).

    ``completions`` is the store's (its vocabulary read once per prefix). A prefix the store
    cannot list, or with no completion, or with CJK text (matched in the bigram index) stays
    as written. ``NOT`` terms are completed too: ``NOT c*`` leaves out the sessions that hold
    one of the completions.

    Example:
        >>> vocab = {"dep": ["deploy", "deploi", "depend"], "c": ["config", "cach"]}
        >>> def completions(prefix, limit):
        ...     return vocab[prefix][:limit], len(vocab[prefix])
        >>> q, cut = complete_prefixes(parse_query("dep* NOT c*"), completions)
        >>> q.relaxed[0].completions, q.excluded[0].completions, cut
        (('deploy',), ('config',), {'dep*': ('deploy',), 'c*': ('config',)})
    """
    terms = [t for _, t in query.strict] + [*query.relaxed, *query.excluded]
    prefixes = {t.tokens for t in terms if t.prefix and not CJK_RUN.search(t.tokens[-1])}
    each = max(1, min(MAX_PREFIX_COMPLETIONS, MAX_QUERY_COMPLETIONS // max(1, len(prefixes))))
    found: dict[str, tuple[str, ...]] = {}
    totals: dict[str, int] = {}
    capped: dict[str, tuple[str, ...]] = {}

    def complete(term: Term) -> Term:
        last = term.tokens[-1]
        if not term.prefix or CJK_RUN.search(last):
            return term
        if last not in found:
            listed = completions(last, each)
            words, total = listed if listed else ((), 0)
            found[last] = tuple(words[:each])
            totals[last] = total
        if totals[last] > len(found[last]):
            capped[" ".join(term.tokens).lower() + "*"] = found[last]
        return replace(term, completions=found[last]) if found[last] else term

    expanded = replace(
        query,
        strict=tuple((op, complete(t)) for op, t in query.strict),
        relaxed=tuple(complete(t) for t in query.relaxed),
        excluded=tuple(complete(t) for t in query.excluded),
    )
    return expanded, capped


# --------------------------------------------------------------------------- per-term search

MAX_SEARCH_TERMS = 16
"""At most this many terms are matched one by one (long CJK runs yield many bigrams)."""


def _cjk_terms(token: str) -> list[Term]:
    """Terms for one token holding CJK text: Latin parts, short CJK words, bigrams of long runs.

    A run of two characters or fewer is a word on its own; a longer run gives its bigrams as
    separate terms (Chinese and Japanese write no spaces, so a run of a question is rarely a
    word of the transcript) plus the whole run as a phrase when it is short enough to be a
    word (3-6 characters, e.g. ``服务端``), which ranks exact occurrences first. Bigrams that
    only make questions (``怎么``, ``什么``) are dropped.
    """
    out: list[Term] = []
    for segment in query_segments(token):
        if not CJK_RUN.fullmatch(segment):
            out.append(Term((segment,)))
            continue
        if len(segment) <= 2:
            out.append(Term((segment,)))
            continue
        if len(segment) <= 6:
            out.append(Term((segment,)))
        bigrams = (segment[i : i + 2] for i in range(len(segment) - 1))
        out.extend(Term((b,)) for b in bigrams if b not in CJK_STOP_BIGRAMS)
    return out


def search_terms(query: ParsedQuery, *, limit: int = MAX_SEARCH_TERMS) -> tuple[Term, ...]:
    """The terms matched one by one to score sessions by term coverage.

    Latin words, phrases and prefixes are the relaxed terms; tokens with CJK text are split
    into words and bigrams (see :func:`langchain_session_recall.core.query.query_segments`), with
    question words such as ``怎么`` dropped. When nothing remains, the relaxed terms are used.

    Example:
        >>> [t.tokens[0] for t in search_terms(parse_query("修改youer服务端"))]
        ['修改', 'youer', '服务端', '服务', '务端']
    """
    limit = min(limit, MAX_QUERY_TERMS)
    out: dict[Term, None] = {}
    for term in query.relaxed:
        if len(out) >= limit:
            break
        if term.is_phrase or term.prefix or not CJK_RUN.search(term.tokens[0]):
            out.setdefault(term, None)
            continue
        for sub in _cjk_terms(term.tokens[0]):
            out.setdefault(sub, None)
    terms = tuple(out)[:limit]
    return terms or query.relaxed[:limit]


@dataclass(frozen=True, slots=True)
class SearchedQuery:
    """A query as one search reads it, made once (:func:`searched_query`) before the search
    starts and carried down: every stage below takes what it needs from here, none reads the query
    again."""

    parsed: ParsedQuery
    """The parse, its prefixes searched as their completions (:func:`complete_prefixes`)."""
    completed: dict[str, tuple[str, ...]]
    """Each prefix searched as only some of its completions, and those it was searched as."""
    terms: tuple[Term, ...]
    """The terms matched one by one (:func:`search_terms`, up to :data:`MAX_QUERY_TERMS`)."""
    text: str
    """The query as it is embedded, reranked and shown (:func:`bound_query`)."""


def searched_query(parsed: ParsedQuery, completions: Completions) -> SearchedQuery:
    """``parsed`` (a parse of its ``source``) as one search reads it: its prefixes completed by
    ``completions`` (the store's), its search terms, its bounded text.

    Example:
        >>> searched = searched_query(parse_query("fix the CORS error"), lambda prefix, limit: None)
        >>> [t.tokens for t in searched.terms], searched.text, searched.completed
        ([('fix',), ('CORS',), ('error',)], 'fix the CORS error', {})
    """
    query, completed = complete_prefixes(parsed, completions)
    terms = search_terms(query, limit=MAX_QUERY_TERMS)
    return SearchedQuery(query, completed, terms, bound_query(parsed.source))


def highlight_words(
    query: ParsedQuery, expansions: Mapping[str, Sequence[str]] | None = None
) -> tuple[str, ...]:
    """The words to look for in a transcript that matched ``query``.

    Its search terms (content words, phrases, CJK words and bigrams; ``NOT`` terms never) and,
    for a word that was corrected or completed, what was searched instead (``expansions`` as
    :func:`~langchain_session_recall.search.pipeline.search_sessions` reports them).

    Example:
        >>> highlight_words(parse_query("how did we fix pgbouncr?"), {"pgbouncr": ("pgbouncer",)})
        ('fix', 'pgbouncr', 'pgbouncer')
    """
    out: dict[str, None] = {}
    for term in search_terms(query):
        out.setdefault(" ".join(term.tokens), None)
    for searched in (expansions or {}).values():
        for word in searched:
            if word.rstrip("*"):
                out.setdefault(word.rstrip("*"), None)
    return tuple(out)
