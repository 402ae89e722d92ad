"""Typo correction, pure: how far apart two words are, and which indexed words a misspelt word
most likely meant (the search retries a word that matches nothing as these,
:mod:`~langchain_session_recall.search.candidates`)."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MAX_CORRECTIONS", "closest_words", "edit_distance"]


def edit_distance(a: str, b: str, limit: int = 3) -> int:
    """Optimal-string-alignment distance (a transposition costs 1), capped at ``limit + 1``.

    Example:
        >>> edit_distance("kubernte", "kubernet"), edit_distance("cros", "cors")
        (1, 1)
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return min(prev[-1], limit + 1)


# Endings a stemmer strips: a word ending so is compared with a shorter index word by its head
# (``cros`` ~ ``cor``, the stem of *CORS*), any other ending is not (``painted`` !~ ``pain``).
_SUFFIXES = frozenset(
    "s es ed d ing ings er ers e y ies ied ly ion ions ation ations ment ments ness al".split()  # noqa: SIM905
)


def _allowed_typos(word: str) -> int:
    return 0 if len(word) < 4 else 1 if len(word) < 8 else 2


MAX_CORRECTIONS = 2
"""Indexed words a misspelt word is retried as, at most (see :func:`closest_words`)."""


def closest_words(
    word: str, vocabulary: Iterable[tuple[str, int]], *, max_results: int = MAX_CORRECTIONS
) -> list[str]:
    """Indexed words (often stems) a misspelt ``word`` most likely means, most frequent first.

    ``vocabulary`` holds ``(indexed_word, document_count)`` pairs. Index words are stems
    (``kubernet`` for *kubernetes*, ``cor`` for *CORS*), so a word longer than a candidate is
    also compared by its prefix of the candidate's length. Among equally close candidates, one
    with the same letters (a swap) wins over the most frequent. Words under 4 letters are never
    corrected.

    Example:
        >>> closest_words("kuberntes", [("kubernet", 5), ("kubectl", 9)])
        ['kubernet']
        >>> closest_words("dashbaord", [("dashboard", 3), ("dash", 1)])
        ['dashboard']
        >>> closest_words("cros", [("cron", 400), ("cor", 3)])
        ['cor']
        >>> closest_words("painted", [("pain", 3)])
        []
    """
    word = word.lower()
    allowed = _allowed_typos(word)
    if allowed == 0:
        return []
    scored: list[tuple[int, bool, int, str]] = []
    for candidate, docs in vocabulary:
        if candidate == word or len(candidate) < 3:
            continue
        d = edit_distance(word, candidate, allowed)
        same_letters = sorted(candidate) == sorted(word)
        head = word[: len(candidate)]
        # A stem: compare the word's head. A short head only through swapped letters (``cros``
        # -> ``cor``): one edit reaches too much (``working`` -> ``work`` is one from ``word``).
        if word[len(candidate) :] in _SUFFIXES and (
            len(candidate) >= 5 or sorted(head) == sorted(candidate)
        ):
            d_head = edit_distance(head, candidate, allowed) + (1 if allowed > 1 else 0)
            if d_head < d or (d_head == d and not same_letters):
                d, same_letters = d_head, sorted(candidate) == sorted(head)
        if d <= allowed:
            # Swapped letters are the commonest slip: prefer a candidate with the same letters.
            scored.append((d, not same_letters, -docs, candidate))
    scored.sort()
    if not scored:
        return []
    best = scored[0][:2]
    return [s[3] for s in scored if s[:2] == best][:max_results]
