"""Extractive recap used when a session cannot be summarized (pure, no I/O).

Hermes fell back to the first 500 characters of the transcript, which usually shows the greeting
and not the part that matched. This recap instead scores every message by the query terms it
holds (each weighted by its rarity in the session, so a name on every line counts for little)
and by whether the search matched it, lets the messages around a scored one inherit part of its
score (the reply after a question most), spends a small budget on the most valuable messages,
each clipped around its query terms, shows them in transcript order and labels the result as
*not summarized*.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

from langchain_session_recall.core.query import STOP_WORDS
from langchain_session_recall.recall.model import ShownMessage
from langchain_session_recall.recall.render import message_text, parse_transcript
from langchain_session_recall.summarize.budget import Recap, cut_text

__all__ = [
    "DEFAULT_RECAP_CHARS",
    "clip",
    "clip_code",
    "context_weight",
    "extractive_label",
    "extractive_pieces",
    "extractive_recap",
    "is_extractive_label",
    "message_scores",
    "message_values",
    "query_terms",
    "select_messages",
    "term_weights",
]

DEFAULT_RECAP_CHARS = 1000
"""Budget of one recap's body, in characters (three sessions: about 4,000 of tool output)."""
WIDE_CHARS = 1200
"""A message's longer excerpt, shown in place of its snippet when a token budget has room."""
MATCH_BONUS = 1.0
"""Added to the score of a message the search matched (its id in ``matched_message_ids``)."""
AFTER_WEIGHT = 0.6
"""Share of a message's score the next message inherits (replies hold answers)."""
BEFORE_WEIGHT = 0.35
"""Share of a message's score the previous message inherits (the question it answers)."""
CONTEXT_DECAY = 0.6
"""Each further position away keeps this share of the inherited score."""

_WORD = re.compile(r"[\w./\-]+", re.UNICODE)
_STOPWORDS = STOP_WORDS | {"near"}  # the search's stop words, and FTS5's NEAR operator


def _searchable(message: ShownMessage) -> str:
    """What the query's words are looked for in: the text, and a call's inline arguments
    (``terminal(command="python rename_photos.py ~/Pictures/2024")``)."""
    return f"{message.call} {message.text}" if message.call else message.text


def query_terms(query: str) -> list[str]:
    """Lower-cased search words of ``query`` without stopwords, quotes or FTS operators.

    Example:
        >>> query_terms('docker "permission denied" OR compose')
        ['docker', 'permission', 'denied', 'compose']
    """
    terms: list[str] = []
    for word in _WORD.findall(query.lower()):
        word = word.strip("./-")
        if word and word not in _STOPWORDS and word not in terms:
            terms.append(word)
    return terms


def _stem(word: str) -> str:
    """A crude English stem: one plural or verb ending off, so "paint" finds "painting".

    Example:
        >>> [_stem(w) for w in ("paintings", "painted", "uses", "gas", "docker")]
        ['painting', 'paint', 'use', 'gas', 'docker']
    """
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _term_pattern(term: str) -> re.Pattern[str]:
    # A stem matches at the start of a word ("paint" -> "painting"); a short term whole.
    stem = _stem(term)
    tail = r"\w*" if len(stem) >= 3 else r"(?!\w)"
    return re.compile(rf"(?<!\w){re.escape(stem)}{tail}")


def term_weights(texts: Sequence[str], terms: Sequence[str]) -> dict[str, float]:
    """Rarity of each query term among the messages: ``log((n + 1) / (df + 0.5))``, at least 0.

    A term in every message (a speaker's name, the project's name) weighs about nothing, a term
    in one message the most; a term in none is left out.

    Example:
        >>> w = term_weights(["Ann: I paint", "Ann: the kiln broke", "Ann: bye"], ["ann", "kiln"])
        >>> sorted(w), w["ann"] < 0.2 < w["kiln"]
        (['ann', 'kiln'], True)
    """
    n = len(texts)
    lowered = [t.lower() for t in texts]
    weights: dict[str, float] = {}
    for term in terms:
        pattern = _term_pattern(term)
        df = sum(1 for t in lowered if pattern.search(t))
        if df:
            weights[term] = max(0.0, math.log((n + 1) / (df + 0.5)))
    return weights


def message_scores(
    texts: Sequence[str], weights: Mapping[str, float], matched: Sequence[bool] = ()
) -> list[float]:
    """Each message's score: the weights of the distinct query terms it holds, plus
    :data:`MATCH_BONUS` when the search matched it (``matched``, by position).

    Example:
        >>> message_scores(["a kiln", "a kiln and a wheel", "bye"], {"kiln": 1.0, "wheel": 2.0})
        [1.0, 3.0, 0.0]
    """
    patterns = {t: _term_pattern(t) for t in weights}
    scores = []
    for i, text in enumerate(texts):
        lower = text.lower()
        score = sum(w for t, w in weights.items() if patterns[t].search(lower))
        scores.append(score + (MATCH_BONUS if i < len(matched) and matched[i] else 0.0))
    return scores


def context_weight(offset: int) -> float:
    """How much of a scored message's value a message ``offset`` positions away inherits.

    The reply after a matched message often holds the answer ("what did you paint?" -> "a
    lake"), so messages after a match count more than those before it.

    Example:
        >>> [round(context_weight(o), 2) for o in (-2, -1, 0, 1, 2)]
        [0.21, 0.35, 1.0, 0.6, 0.36]
    """
    if offset == 0:
        return 1.0
    return (AFTER_WEIGHT if offset > 0 else BEFORE_WEIGHT) * CONTEXT_DECAY ** (abs(offset) - 1)


def message_values(scores: Sequence[float], neighbours: int) -> list[float]:
    """A message's value: the best of its own score and what it inherits from scored
    messages up to ``neighbours`` positions away (:func:`context_weight`).

    Example:
        >>> message_values([0.0, 2.0, 0.0, 0.0, 0.0], neighbours=2)
        [0.7, 2.0, 1.2, 0.72, 0.0]
    """
    n = len(scores)
    return [
        max(
            scores[j] * context_weight(i - j)
            for j in range(max(0, i - neighbours), min(n, i + neighbours + 1))
        )
        for i in range(n)
    ]


def select_messages(values: Sequence[float], sizes: Sequence[int], budget: int) -> list[int]:
    """Positions of the messages to show: the most valuable first (earlier on ties) while
    their ``sizes`` fit in ``budget``, returned in transcript order. Messages of value 0 are
    never chosen; the first chosen one is kept even when it alone exceeds the budget.

    Example:
        >>> select_messages([0.5, 3.0, 1.0, 0.0], [100, 100, 100, 100], budget=250)
        [1, 2]
        >>> select_messages([1.0], [900], budget=100)
        [0]
    """
    order = sorted((i for i, v in enumerate(values) if v > 0), key=lambda i: (-values[i], i))
    chosen: list[int] = []
    used = 0
    for i in order:
        if chosen and used + sizes[i] > budget:
            continue
        chosen.append(i)
        used += sizes[i]
    return sorted(chosen)


def clip_code(text: str, weights: Mapping[str, float], width: int) -> str:
    """A tool call's code blocks cut to about ``width`` characters of whole lines, from two
    lines before the first line holding a query term (from the start when none does); the
    fences are kept and ``…`` marks lines left out.

    Example:
        >>> code = "```bash\\n" + "\\n".join(f"step {n}" for n in range(9)) + " kiln\\n```"
        >>> print(clip_code(code, {"kiln": 1.0}, 30))
        ```bash
        …
        step 6
        step 7
        step 8 kiln
        ```
    """
    if len(text) <= width:
        return text
    lines = text.split("\n")
    fenced = len(lines) > 2 and lines[0].startswith("```") and lines[-1].startswith("```")
    head, body, tail = (lines[:1], lines[1:-1], lines[-1:]) if fenced else ([], lines, [])
    patterns = [_term_pattern(t) for t, w in weights.items() if w > 0]
    first = next((i for i, ln in enumerate(body) if any(p.search(ln.lower()) for p in patterns)), 0)
    start = max(0, first - 2)
    kept: list[str] = []
    used = 0
    for line in body[start:]:
        line = line if len(line) <= width else line[: width - 1] + "…"
        if kept and used + len(line) + 1 > width:
            break
        kept.append(line)
        used += len(line) + 1
    before = ["…"] if start > 0 else []
    after = ["…"] if start + len(kept) < len(body) else []
    return "\n".join([*head, *before, *kept, *after, *tail])


def clip(text: str, weights: Mapping[str, float], width: int) -> str:
    """``text`` (whitespace collapsed) cut to ``width`` characters around the span of the
    greatest weight of distinct query terms; from its start when no term is in it.

    Example:
        >>> clip("intro " * 20 + "the kiln broke, then the wheel too", {"kiln": 1, "wheel": 1}, 40)
        '…intro the kiln broke, then the wheel too'
        >>> clip("short", {"kiln": 1}, 40)
        'short'
    """
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    lower = text.lower()
    hits = sorted(
        (m.start(), t) for t in weights for m in _term_pattern(t).finditer(lower) if weights[t] > 0
    )
    start, best = 0, 0.0
    inside: dict[str, int] = {}  # term -> hits within [candidate, candidate + width)
    low = high = 0
    for pos, _ in hits:  # candidates only move right: two pointers, linear in the hits
        # a little of what leads up to the first word of the span
        candidate = max(0, min(pos - width // 5, len(text) - width))
        while high < len(hits) and hits[high][0] < candidate + width:
            inside[hits[high][1]] = inside.get(hits[high][1], 0) + 1
            high += 1
        while hits[low][0] < candidate:
            term = hits[low][1]
            inside[term] -= 1
            if not inside[term]:
                del inside[term]
            low += 1
        score = sum(weights[t] for t in inside)
        if score > best:
            start, best = candidate, score
    end = start + width
    return ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")


def extractive_recap(
    transcript: str,
    query: str = "",
    *,
    matched_message_ids: Iterable[int] = (),
    reason: str = "summarization unavailable",
    header: str | None = None,
    max_chars: int = DEFAULT_RECAP_CHARS,
    snippet_chars: int = 280,
    neighbours: int = 2,
    messages: Sequence[ShownMessage] | None = None,
    ids_shown: bool = True,
) -> str:
    """Build a labelled, extractive recap of a transcript: the best messages and their context.

    Messages are scored by the query terms they hold, each weighted by its rarity in the
    session (:func:`term_weights`), plus a bonus when the search matched them
    (``matched_message_ids``); their neighbours inherit part of that score, those after a
    match more (:func:`message_values`). The most valuable messages, each clipped around its
    query terms, fill the budget (:func:`select_messages`) and are shown in transcript order,
    gaps marked ``…``.

    Args:
        transcript: The retriever's transcript (``[USER]: ...`` blocks, with or without ids).
        query: The search query; its words score the messages.
        matched_message_ids: Ids of the messages the search matched (retriever metadata).
        reason: Why there is no summary; shown in the label.
        header: Optional line describing the session (date, source, title).
        max_chars: Budget for the recap body.
        snippet_chars: Longest excerpt of a single message.
        neighbours: Messages on each side of a scored one that may be shown as its context.
        messages: The transcript's messages when known (the
            :func:`~langchain_session_recall.recall.render.window_messages` of a search
            result); without them they are read from ``transcript``'s tags
            (:func:`~langchain_session_recall.recall.render.parse_transcript`).
        ids_shown: The transcript shows the messages' ids (a search result's
            ``ids_shown``); the recap shows them too.

    Returns:
        Never an empty string.

    Example:
        >>> print(extractive_recap("[USER #1]: hi\\n\\n[USER #2]: docker fails", "docker",
        ...                        neighbours=0, reason="no model configured"))
        [Not summarized (no model configured): extractive recap of the matching messages]
        [USER #2]: docker fails
    """
    recap = extractive_pieces(
        transcript,
        query,
        matched_message_ids=matched_message_ids,
        reason=reason,
        header=header,
        max_chars=max_chars,
        snippet_chars=snippet_chars,
        neighbours=neighbours,
        messages=messages,
        ids_shown=ids_shown,
    )
    return recap.render(recap.shown)


def extractive_pieces(
    transcript: str,
    query: str = "",
    *,
    matched_message_ids: Iterable[int] = (),
    reason: str = "summarization unavailable",
    header: str | None = None,
    max_chars: int = DEFAULT_RECAP_CHARS,
    snippet_chars: int = 280,
    neighbours: int = 2,
    messages: Sequence[ShownMessage] | None = None,
    ids_shown: bool = True,
) -> Recap:
    """The :func:`extractive_recap` as a :class:`~langchain_session_recall.summarize.budget.
    Recap` (same arguments): its label and header, the messages it shows (clipped, in
    transcript order) and the order of their value, best first, for a token budget to take
    them in, followed by the further messages worth showing that its ``max_chars`` leaves
    out (:attr:`~langchain_session_recall.summarize.budget.Recap.extra`: a generous budget
    may add them). Rendering :attr:`~langchain_session_recall.summarize.budget.Recap.shown`
    gives :func:`extractive_recap`'s text.

    Example:
        >>> r = extractive_pieces("[USER #1]: hi\\n\\n[USER #2]: docker fails", "docker",
        ...                       neighbours=1, reason="no model configured")
        >>> r.pieces, r.order
        (('[USER #1]: hi', '[USER #2]: docker fails'), (1, 0))
    """
    label = extractive_label(reason)
    head = (label, header) if header else (label,)
    shown = parse_transcript(transcript) if messages is None else list(messages)
    terms = query_terms(query)
    if not shown:
        weights = dict.fromkeys(terms, 1.0)
        body = clip(transcript, weights, max_chars) if transcript.strip() else ""
        return Recap(head, (body or "No transcript available.",), (0,))

    texts = [_searchable(b) for b in shown]
    weights = term_weights(texts, terms)
    wanted = set(matched_message_ids)
    matched = [b.id_known and b.id in wanted for b in shown]
    values = message_values(message_scores(texts, weights, matched), max(0, neighbours))
    if not any(v > 0 for v in values):
        values = _frame_values(shown)

    # only messages that may be shown are clipped (a transcript can hold thousands)
    pieces = {
        i: message_text(
            b, (clip_code if b.call else clip)(b.text, weights, snippet_chars), show_id=ids_shown
        )
        for i, b in enumerate(shown)
        if values[i] > 0
    }
    wide = {
        i: message_text(
            b,
            (clip_code if b.call else _clip_message)(b.text, weights, WIDE_CHARS),
            show_id=ids_shown,
        )
        for i, b in enumerate(shown)
        if i in pieces
    }
    sizes = [len(pieces[i]) + 1 if i in pieces else 0 for i in range(len(shown))]
    chosen = select_messages(values, sizes, max_chars)
    rest = set(pieces) - set(chosen)  # worth showing, past the recap's own size
    every = sorted(pieces)
    index = {i: n for n, i in enumerate(every)}
    best_first = [
        *sorted(chosen, key=lambda i: (-values[i], i)),
        *sorted(rest, key=lambda i: (-values[i], i)),
    ]
    return Recap(
        head,
        tuple(pieces[i] for i in every),
        tuple(index[i] for i in best_first),
        more=bool(rest),
        positions=tuple(every),
        base=len(chosen),
        wide=tuple(wide[i] if wide[i] != pieces[i] else "" for i in every),
    )


_LABEL_START = "[Not summarized ("
_LABEL_END = "): extractive recap of the matching messages]"


def extractive_label(reason: str) -> str:
    """The first line of an extractive recap: it is not a summary, and why.

    Example:
        >>> extractive_label("no model configured")
        '[Not summarized (no model configured): extractive recap of the matching messages]'
    """
    return f"{_LABEL_START}{reason}{_LABEL_END}"


def is_extractive_label(line: str) -> bool:
    """Whether ``line`` is an extractive recap's label (:func:`extractive_label`, any reason).

    Example:
        >>> is_extractive_label(extractive_label("timeout")), is_extractive_label("Session s1")
        (True, False)
    """
    return line.startswith(_LABEL_START) and line.endswith(_LABEL_END)


def _clip_message(text: str, weights: Mapping[str, float], width: int) -> str:
    """A message's longer excerpt (for a token budget with room): cut to ``width`` as
    :func:`clip` cuts it; one holding a fenced code block keeps its lines and is cut from its
    start, the cut fence closed and marked
    (:func:`~langchain_session_recall.summarize.budget.cut_text`). The recap's own excerpt
    stays :func:`clip`'s (one line: no fence is left open in it).

    Example:
        >>> print(_clip_message("see:\\n```sh\\nls\\n```", {}, 80))
        see:
        ```sh
        ls
        ```
    """
    if "```" not in text and "~~~" not in text:
        return clip(text, weights, width)
    return cut_text(text.strip(), width)


def _frame_values(shown: Sequence[ShownMessage]) -> list[float]:
    """Nothing located: the opening request and the last answer frame the session best."""
    first_user = next((i for i, b in enumerate(shown) if b.label == "USER"), 0)
    last_assistant = max(
        (i for i, b in enumerate(shown) if b.label == "ASSISTANT"), default=len(shown) - 1
    )
    return [1.0 if i in (first_user, last_assistant) else 0.0 for i in range(len(shown))]
