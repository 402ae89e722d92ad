"""What a search term that matched nothing may be instead: the closest indexed words (a
typo), else its prefix (a partial word).

Asked by :mod:`~langchain_session_recall.search.candidates` for a plain word that matched
nothing anywhere in the user's scope (``kuberntes`` -> ``kubernet``, ``kube`` -> ``kube*``);
candidates.py searches the words given here. The store is asked for its vocabulary only (two
narrow index ranges); the distance is :mod:`~langchain_session_recall.core.spelling`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from langchain_session_recall.core.cjk import has_cjk
from langchain_session_recall.core.query import Term
from langchain_session_recall.core.spelling import closest_words

if TYPE_CHECKING:
    from langchain_session_recall.backends.base import SessionBackend

__all__ = ["Alternatives", "alternatives"]

_MIN_PREFIX_CHARS = 3


@dataclass(frozen=True, slots=True)
class Alternatives:
    """The terms a word that matched nothing is searched as: each correction (as a word, else
    as a prefix), then, when none of them matched, the prefix."""

    corrections: tuple[Term, ...] = ()
    prefix: Term | None = None


def alternatives(backend: SessionBackend, term: Term) -> Alternatives:
    """The indexed words closest to a misspelt word (index words are often stems), and the
    word as a prefix (at least three letters). A phrase, a prefix, a CJK word or a word that
    is not all letters has none.

    A slip in the second letter is not corrected (the candidates would be every indexed word
    with the same initial); the prefix may still find the word.

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1")
        >>> _ = store.add_messages("s1", [{"role": "user", "content": "kubernetes ingress"}])
        >>> found = alternatives(store, Term(("kuberntes",)))
        >>> [t.tokens for t in found.corrections], found.prefix.tokens, found.prefix.prefix
        ([('kubernet',)], ('kuberntes',), True)
    """
    word = term.tokens[0]
    if term.is_phrase or term.prefix or has_cjk(word) or not word.isalpha():
        return Alternatives()
    lower = word.lower()
    # Candidates share the first two letters, or the first and third (the 2nd and 3rd swapped):
    # two narrow index ranges instead of every word with the same initial.
    prefixes = dict.fromkeys([lower[:2], lower[0] + lower[2:3]])
    # Words only: the index holds secrets' fragments too, and a correction is named to the
    # caller (``query_expansions``) -- it must never spell out a piece of a key.
    vocabulary = [e for p in prefixes for e in backend.vocabulary(p) if e[0].isalpha()]
    corrections = tuple(Term((w,)) for w in closest_words(word, vocabulary))
    prefix = Term((word,), prefix=True) if len(word) >= _MIN_PREFIX_CHARS else None
    return Alternatives(corrections, prefix)
