"""A token budget over recaps (pure): the best of the best session first, then the next one.

A surface that shows recaps (the ``session_search`` tool, the recall middleware) can be given
``max_tokens``. Each session's recap is a :class:`Recap`: its head lines and its pieces (the
messages an extractive recap shows, or the paragraphs of a model's recap), with the order to
add them in, best first. :func:`fill_budget` adds pieces in that order, each whole when that
fits (a message clipped loses what it says past the clip): the best session's best piece, the
best piece of every session the search scored close to it (:data:`CLOSE_SCORE`), the rest of
the best session, every other session's best, then the rest session by session (then, with
room left, further messages), re-rendering the surface's whole output and counting it each
time, so JSON escaping, headers and separators are paid for as they are really shown. A piece
too long for what is left is passed over; the first one passed over is cut to fill the rest
(:func:`cut_text`), never inside a fenced code block without closing the fence and saying so.

Tokens are counted by ``token_counter``, any ``len``-like callable (a tokenizer's
``lambda s: len(enc.encode(s))``); the default, :func:`estimate_tokens`, assumes
:data:`CHARS_PER_TOKEN` characters per token.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CHARS_PER_TOKEN",
    "CLOSE_SCORE",
    "CODE_CUT_MARKER",
    "CUT_MARKER",
    "RECAP_KEY",
    "Recap",
    "TokenCounter",
    "cut_text",
    "estimate_tokens",
    "fill_budget",
    "search_score",
]

CHARS_PER_TOKEN = 4
"""Characters per token of the default estimate (English prose with GPT-style tokenizers)."""
CUT_MARKER = "…[cut]"
"""Ends a piece the budget cut."""
CODE_CUT_MARKER = "…[code block cut]"
"""Ends the part of a fenced code block the budget kept, before the fence is closed."""
RECAP_KEY = "recap_pieces"
"""The metadata key of a recap Document's :class:`Recap` (as a dict)."""
MIN_CUT_CHARS = 40
"""A cut piece keeps at least this many characters of text, else it is left out."""
CLOSE_SCORE = 0.6
"""A session whose search score is at least this share of the best session's is *close*: its
best piece comes right after the best session's best, before the rest of the best session
(else after it). On LoCoMo's development split the gold was in a lower-ranked session for 46%
of the questions whose second session scored at least 0.6 of the first, for 5% of the others;
0.55-0.7 kept the most at 250 tokens (docs/benchmarks-summarizer.md)."""

TokenCounter = Callable[[str], int]
"""Counts the tokens of a text: ``len``-like."""

_FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` estimated as one per :data:`CHARS_PER_TOKEN` characters, rounded up.

    Example:
        >>> estimate_tokens(""), estimate_tokens("abcd"), estimate_tokens("abcde")
        (0, 1, 2)
    """
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class Recap:
    """One session's recap as pieces a budget can take or leave.

    ``head``: lines shown above the pieces once any piece is (a label, a session header);
    ``pieces``: in transcript order; ``order``: positions into ``pieces``, best first (the order
    a budget adds them in); ``more``: messages worth showing were left out before any budget
    (the recap ends with ``…``); ``positions``: where each piece is in the transcript (two
    pieces shown one after the other are marked as a gap unless they are neighbours there;
    empty: they are); ``base``: how many of ``order`` the recap shows without a budget (the
    rest are more pieces a generous budget may add; ``None``: all); ``wide``: for each piece
    clipped shorter than its message, a longer excerpt a generous budget may show instead
    (``""``: none; empty: no piece has one). :meth:`render` of :attr:`shown` is the recap as
    it is without a budget.

    Example:
        >>> r = Recap(("[recap]",), ("[USER]: a", "[USER]: b", "[USER]: c"), (2, 0))
        >>> print(r.render({0, 2}))
        [recap]
        [USER]: a
        …
        [USER]: c
        >>> r.render(set())
        ''
    """

    head: tuple[str, ...]
    pieces: tuple[str, ...]
    order: tuple[int, ...]
    more: bool = False
    positions: tuple[int, ...] = ()
    base: int | None = None
    wide: tuple[str, ...] = ()

    @property
    def shown(self) -> tuple[int, ...]:
        """The pieces the recap shows without a budget, best first."""
        return self.order if self.base is None else self.order[: self.base]

    @property
    def extra(self) -> tuple[int, ...]:
        """Further pieces a budget may add once every recap shows its own, best first."""
        return () if self.base is None else self.order[self.base :]

    @classmethod
    def of_text(cls, text: str, head: Sequence[str] = ()) -> Recap:
        """A recap written as text (a model's): its paragraphs, in order, are its pieces; a
        fenced code block stays inside the paragraph that holds it.

        Example:
            >>> Recap.of_text("One.\\n\\n```sh\\nls\\n\\nls -a\\n```\\nTwo.").pieces
            ('One.', '```sh\\nls\\n\\nls -a\\n```\\nTwo.')
        """
        pieces: list[str] = []
        current: list[str] = []
        fenced = False
        for line in text.strip().split("\n"):
            if _FENCE.match(line):
                fenced = not fenced
            if not line.strip() and not fenced:
                if current:
                    pieces.append("\n".join(current))
                    current = []
                continue
            current.append(line)
        if current:
            pieces.append("\n".join(current))
        return cls(tuple(head), tuple(pieces), tuple(range(len(pieces))))

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> Recap | None:
        """The recap a Document's metadata carries under :data:`RECAP_KEY`, if any."""
        data = metadata.get(RECAP_KEY)
        if not isinstance(data, Mapping):
            return None
        try:
            return cls(
                tuple(data["head"]),
                tuple(data["pieces"]),
                tuple(data["order"]),
                bool(data["more"]),
                tuple(data.get("positions") or ()),
                data.get("base"),
                tuple(data.get("wide") or ()),
            )
        except (KeyError, TypeError):
            return None

    @classmethod
    def of(cls, metadata: Mapping[str, Any], text: str) -> Recap:
        """The recap of a recap Document: the pieces its metadata carries (an extractive
        recap's), else its text's paragraphs (:meth:`of_text`)."""
        return cls.from_metadata(metadata) or cls.of_text(text)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for metadata (:meth:`from_metadata` reads it back)."""
        return {
            "head": self.head,
            "pieces": self.pieces,
            "order": self.order,
            "more": self.more,
            "positions": self.positions,
            "base": self.base,
            "wide": self.wide,
        }

    def render(
        self, chosen: Collection[int], *, cut: Mapping[int, str] | None = None, head: bool = True
    ) -> str:
        """The head (unless ``head=False``) and the ``chosen`` pieces in transcript order, a
        gap marked ``…``; a last ``…`` when a piece worth showing is left out. ``cut``: pieces
        shown shortened (by :func:`fill_budget`). Empty when nothing is chosen."""
        if not chosen:
            return ""
        lines = list(self.head) if head else []
        where = self.positions or range(len(self.pieces))
        previous = None
        for i in sorted(chosen):
            if previous is not None and where[i] != where[previous] + 1:
                lines.append("…")
            lines.append(cut[i] if cut and i in cut else self.pieces[i])
            previous = i
        if self.more or len(chosen) < len(self.order):
            lines.append("…")
        return "\n".join(lines)


def cut_text(text: str, limit: int) -> str:
    """``text`` cut to at most about ``limit`` characters at a line or word break, marked
    :data:`CUT_MARKER`; a cut inside a fenced code block ends with :data:`CODE_CUT_MARKER` and
    the fence closed. ``text`` itself when it fits; ``""`` when ``limit`` leaves too little.

    Example:
        >>> cut_text("the kiln broke, then the wheel", 24)
        'the kiln broke, …[cut]'
        >>> print(cut_text("run:\\n```sh\\nmake build\\nmake test\\nmake install\\n```", 45))
        run:
        ```sh
        make build
        …[code block cut]
        ```
    """
    if len(text) <= limit:
        return text
    room = limit - len(CUT_MARKER) - 1
    if room < 1:
        return ""
    head = text[:room]
    fence = _open_fence(head)
    if fence is not None:
        room = limit - len(CODE_CUT_MARKER) - len(fence) - 2
        head = text[: max(room, 0)]
        fence = _open_fence(head)
    if fence is None:
        brk = max(head.rfind("\n"), head.rfind(" "))
        head = head[:brk] if brk > len(head) // 2 else head
        return f"{head.rstrip()} {CUT_MARKER}"
    brk = head.rfind("\n")
    head = head[:brk] if brk >= 0 else head
    if _open_fence(head) is None:  # the cut now falls before the fence opened
        return f"{head.rstrip()} {CUT_MARKER}"
    return f"{head.rstrip()}\n{CODE_CUT_MARKER}\n{fence}"


def _open_fence(text: str) -> str | None:
    """The fence (```` ``` ```` or ``~~~``) of a code block ``text`` opens and leaves open."""
    opened: str | None = None
    for match in _FENCE.finditer(text):
        fence = match.group(1)
        opened = fence if opened is None else (None if fence == opened else opened)
    return opened


def fill_budget(
    recaps: Sequence[Recap],
    render: Callable[[Sequence[str]], str],
    max_tokens: int,
    token_counter: TokenCounter = estimate_tokens,
    scores: Sequence[float | None] = (),
) -> list[str]:
    """Each recap's text within the budget (``""`` for a recap left out).

    ``recaps`` in rank order; ``render`` makes the surface's whole output from the recaps'
    texts (``""`` for one not shown) and is what ``token_counter`` counts; ``scores``: the
    search's score of each recap's session, when known. Pieces are taken best first: the
    best session's best piece, then the best piece of each session whose score is at least
    :data:`CLOSE_SCORE` of the best session's, then the rest of the best session's shown
    pieces, then every other session's best piece, then the rest of each session's shown
    pieces in rank order, then each recap's further pieces (:attr:`Recap.extra`). Each piece
    is taken at its longer excerpt (:attr:`Recap.wide`: the message whole, or nearly) when
    that fits, else as the recap clips it. A piece that does not fit is passed over for the
    next one; at the end the first piece passed over is cut to fill what is left
    (:func:`cut_text`), when at least :data:`MIN_CUT_CHARS` of it fit.

    Example:
        >>> r1 = Recap(("s1",), ("a" * 10, "bbbb"), (1, 0))
        >>> r2 = Recap(("s2",), ("cc",), (0,))
        >>> fill_budget([r1, r2], lambda texts: "|".join(texts), 16, len)
        ['s1\\nbbbb\\n…', 's2\\ncc']
        >>> fill_budget([r1, r2], lambda texts: "|".join(texts), 100, len)
        ['s1\\naaaaaaaaaa\\nbbbb', 's2\\ncc']
    """
    chosen: list[set[int]] = [set() for _ in recaps]
    cuts: list[dict[int, str]] = [{} for _ in recaps]

    def texts() -> list[str]:
        return [r.render(c, cut=k) for r, c, k in zip(recaps, chosen, cuts, strict=True)]

    def fits() -> bool:
        return token_counter(render(texts())) <= max_tokens

    passed: list[tuple[int, int]] = []
    for n, i in _best_first(recaps, scores):
        if i in chosen[n] or (n, i) in passed:
            continue
        chosen[n].add(i)
        if not _fits_whole(recaps[n], i, cuts[n], fits) and not fits():
            chosen[n].discard(i)
            passed.append((n, i))
    for n, i in passed[:1]:
        chosen[n].add(i)
        if not _cut_to_fit(recaps[n].pieces[i], cuts[n], i, fits):
            chosen[n].discard(i)
    return texts()


def _best_first(
    recaps: Sequence[Recap], scores: Sequence[float | None] = ()
) -> list[tuple[int, int]]:
    """``(recap, piece)`` in the order a budget takes them (see :func:`fill_budget`; a pair
    may come twice: taken at its first).

    Example:
        >>> r = Recap((), tuple("abcd"), (3, 2, 1, 0))
        >>> _best_first([r, Recap((), ("x", "y"), (1, 0))])[:5]
        [(0, 3), (0, 2), (0, 1), (0, 0), (1, 1)]
        >>> _best_first([r, Recap((), ("x", "y"), (1, 0))], scores=[1.5, 1.0])[:5]
        [(0, 3), (1, 1), (0, 2), (0, 1), (0, 0)]
    """
    if not recaps:
        return []
    close = [n for n in range(1, len(recaps)) if _close(scores, n)]
    far = [n for n in range(1, len(recaps)) if n not in close]
    first = recaps[0].shown
    lead = [(0, i) for i in first[:1]]
    lead += [(n, i) for n in close for i in recaps[n].shown[:1]]
    lead += [(0, i) for i in first[1:]]
    lead += [(n, i) for n in far for i in recaps[n].shown[:1]]
    shown = [(n, i) for n, r in enumerate(recaps) for i in r.shown]
    return lead + shown + [(n, i) for n, r in enumerate(recaps) for i in r.extra]


def search_score(metadata: Mapping[str, Any]) -> float | None:
    """The search's score of a result (its ``score`` metadata), ``None`` when it has none.

    Example:
        >>> search_score({"score": 1.5}), search_score({"mode": "recent"})
        (1.5, None)
    """
    score = metadata.get("score")
    return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None


def _close(scores: Sequence[float | None], n: int) -> bool:
    """Whether session ``n`` scored at least :data:`CLOSE_SCORE` of the best one (``False``
    when either score is unknown or the best is not positive)."""
    if n >= len(scores):
        return False
    best, score = scores[0], scores[n]
    if best is None or score is None or best <= 0:
        return False
    return score >= CLOSE_SCORE * best


def _fits_whole(recap: Recap, i: int, shown: dict[int, str], fits: Callable[[], bool]) -> bool:
    """Show piece ``i`` at its longer excerpt when it has one and it fits."""
    wide = recap.wide[i] if i < len(recap.wide) else ""
    if not wide:
        return False
    shown[i] = wide
    if fits():
        return True
    del shown[i]
    return False


def _cut_to_fit(piece: str, cuts: dict[int, str], i: int, fits: Callable[[], bool]) -> bool:
    """Shorten piece ``i`` (in ``cuts``) to the longest cut that still fits; ``False`` (and
    nothing cut) when not even :data:`MIN_CUT_CHARS` of it does (past its first line, when it
    has several: a tool call's tag alone says nothing)."""
    first_line = piece.find("\n")
    low, high = MIN_CUT_CHARS + max(first_line, 0), len(piece) - 1
    best = None
    while low <= high:
        middle = (low + high) // 2
        text = cut_text(piece, middle)
        cuts[i] = text
        if text and fits():
            best, low = text, middle + 1
        else:
            high = middle - 1
    if best is None:
        cuts.pop(i, None)
        return False
    cuts[i] = best
    return True
