"""Evidence that survives redaction (pure): no search may find a session by what redaction hides.

The index holds messages as they were stored, secrets included: without this check, asking
whether ``sk-proj-<known prefix><c>*`` matches, one character at a time, reads a redacted key
back through search. A search shows only its ``k`` best sessions, and each is loaded and
redacted to be shown anyway, so each is checked there: a matched message counts only if a query
word that its stored text holds is still in its redacted text. A word its stored text holds
only inside a redacted span is *hidden*; a message all of whose matching words are hidden is
dropped, and a session left with no evidence is not returned (see
:func:`~langchain_session_recall.recall.build.search_results`).

A message redaction left unchanged is kept without a look (its match is whatever the index
found), so an ordinary search costs nothing more. In one redaction changed, a query word must be
seen in the redacted text: a form the patterns cannot see may have matched inside the secret.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from langchain_session_recall.core.query import (
    MAX_QUERY_TERMS,
    MAX_SEARCH_TERMS,
    ParsedQuery,
    search_terms,
)
from langchain_session_recall.models import StoredMessage
from langchain_session_recall.recall.tool_calls import parse_tool_calls
from langchain_session_recall.recall.transcript import term_pattern

_MARKER = re.compile(r"\[redacted[^\]\n]*\]", re.IGNORECASE)
"""The default rules' markers (``[REDACTED]``, ``[REDACTED:kind]``) in folded text; a custom
rule's replacement is not recognised (its words count as the message's)."""

MORE_TERMS = "+"
"""The key of the words past the first :data:`MAX_SEARCH_TERMS` (``matched_terms`` names
them ``"+3 more words"``)."""

__all__ = [
    "MORE_TERMS",
    "Evidence",
    "evidence_words",
    "searchable_text",
    "surviving_evidence",
    "word_patterns",
]


@dataclass(frozen=True, slots=True)
class Evidence:
    """What of a session's matches survives redaction."""

    message_ids: tuple[int, ...]
    """The matched messages that still match once redacted (or cannot be told), in the order
    given."""
    hidden: frozenset[str]
    """Query words the session matched only inside redacted text."""
    seen: frozenset[str]
    """Words its surviving evidence shows (when redaction changed none of it: only those of
    ``show``, the one case nothing else needs them)."""
    found: bool
    """Whether anything still matches: a message or the header."""


def evidence_words(query: ParsedQuery, expansions: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Every word a search may have matched, each with the key of the term it stands for
    (``matched_terms`` and ``query_expansions`` name terms so; :data:`MORE_TERMS` for those
    past the per-term budget, matched together): all the query's terms (strict and relaxed, not
    ``NOT`` ones) and what was searched instead of a term.

    Example:
        >>> from langchain_session_recall.core.query import parse_query
        >>> evidence_words(parse_query("deploy sk-proj-ab* NOT x"), {"deploy": ("deploys",)})
        {'deploy': 'deploy', 'sk proj ab': 'sk proj ab*', 'deploys': 'deploy'}
    """
    out: dict[str, str] = {}
    for i, term in enumerate(search_terms(query, limit=MAX_QUERY_TERMS)):
        word = " ".join(term.tokens)
        own = word.lower() + ("*" if term.prefix else "")
        out.setdefault(word, own if i < MAX_SEARCH_TERMS else MORE_TERMS)
    for term in (t for op, t in query.strict if op != "NOT"):
        word = " ".join(term.tokens)
        out.setdefault(word, word.lower() + ("*" if term.prefix else ""))
    for key, searched in expansions.items():
        # a phrase's prefix is completed in its last word: the phrase is what was searched
        lead = key.rstrip("*").split()[:-1]
        for word in searched:
            if found := word.rstrip("*"):
                phrase = found if len(found.split()) > 1 else " ".join([*lead, found])
                out.setdefault(phrase, key)
    return out


def word_patterns(words: Iterable[str]) -> dict[str, re.Pattern[str]]:
    """One pattern per word, on folded text (see :func:`searchable_text`), as the transcript
    highlights it; words without a letter or digit are left out."""
    out: dict[str, re.Pattern[str]] = {}
    for word in words:
        pattern = term_pattern([_fold(word)])
        if pattern is not None:
            out[word] = pattern
    return out


def searchable_text(message: StoredMessage) -> str:
    """What the index holds of a message (its text, tool name, tool calls' names and
    arguments), folded as the index folds it (case, accents, compatibility forms).

    Example:
        >>> m = StoredMessage(1, "s", "user", "Café KEY", 0.0, tool_name="sh")
        >>> searchable_text(m)
        'cafe key\\nsh'
    """
    parts = [message.content or "", message.tool_name or ""]
    for call in parse_tool_calls(message.tool_calls):
        parts.append(call.name)
        parts.extend(value for _, value in call.text_arguments)
    return _fold("\n".join(p for p in parts if isinstance(p, str) and p))


def surviving_evidence(
    matched: Sequence[tuple[StoredMessage, StoredMessage]],
    headers: tuple[str, str],
    words: Collection[str],
    *,
    matched_words: Collection[str] | None = None,
    show: Collection[str] = (),
) -> Evidence:
    """What survives of a session's evidence: ``matched`` pairs each matched message as stored
    with its redacted copy (best first), ``headers`` the session's header (title and date
    words, :func:`~langchain_session_recall.core.headers.session_header`) as stored and
    redacted, ``words`` the search's :func:`evidence_words`. ``matched_words``: those the
    ranking says the session matched, when it says (a word shown but not matched by the index
    here is no evidence: ``pr`` begins ``private_key`` but matched nothing). ``show``: words
    ``seen`` must report on.

    A message redaction changed counts only if a query word is still in its redacted text: a
    word the patterns cannot see there (a form the index stems otherwise, ``wtcey*`` searched
    as ``wtce*``) may have matched inside the secret, and a query can be written to do so.

    Example:
        >>> key = StoredMessage(1, "s", "user", "OPENAI_API_KEY=sk-proj-abc", 0.0)
        >>> shown = StoredMessage(1, "s", "user", "OPENAI_API_KEY=[REDACTED:openai_key]", 0.0)
        >>> surviving_evidence([(key, shown)], ("", ""), ["sk proj ab"])
        Evidence(message_ids=(), hidden=frozenset({'sk proj ab'}), seen=frozenset(), found=False)
        >>> surviving_evidence([(key, shown)], ("", ""), ["openai"]).found
        True
    """
    changed = {s.id for s, r in matched if r is not s and r != s}
    if not changed and headers[0] == headers[1]:  # nothing redacted: every match stands
        asked = word_patterns(show)  # compiled here: an ordinary search compiles none
        texts = [searchable_text(r) for _, r in matched] if asked else []
        shows = _seen(asked, [*texts, _fold(headers[1])]) if asked else set()
        return Evidence(tuple(s.id for s, _ in matched), frozenset(), frozenset(shows), True)
    patterns = word_patterns(words)
    evidence = (
        patterns
        if matched_words is None
        else {w: patterns[w] for w in matched_words if w in patterns}
    )
    kept: list[int] = []
    seen: set[str] = set()  # words in text that survives
    hidden: set[str] = set()
    for stored, shown in matched:
        text = searchable_text(stored)
        if stored.id not in changed:
            kept.append(stored.id)
            seen |= _seen(patterns, [text])
            continue
        inside, survives = _split(patterns, text, _unmarked(searchable_text(shown)))
        hidden |= inside
        seen |= survives
        if survives & evidence.keys():
            kept.append(stored.id)
    inside, in_header = _split(patterns, _fold(headers[0]), _unmarked(_fold(headers[1])))
    seen |= in_header
    hidden = (hidden | inside) - seen
    found = bool(kept or in_header & evidence.keys())
    return Evidence(tuple(kept), frozenset(hidden), frozenset(seen), found)


def _seen(patterns: Mapping[str, re.Pattern[str]], texts: Sequence[str]) -> set[str]:
    return {w for w, p in patterns.items() if any(p.search(t) for t in texts)}


def _split(
    patterns: Mapping[str, re.Pattern[str]], stored: str, shown: str
) -> tuple[set[str], set[str]]:
    """The words ``stored`` holds only where redaction removed them, and those ``shown`` keeps."""
    inside: set[str] = set()
    survives: set[str] = set()
    for word, pattern in patterns.items():
        if pattern.search(stored):
            (survives if pattern.search(shown) else inside).add(word)
    return inside, survives


def _unmarked(text: str) -> str:
    """``text`` without redaction's markers: ``[REDACTED:github_token]`` shows no word of the
    message (``gith*`` must not find a GitHub token by it)."""
    return _MARKER.sub(" ", text)


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
