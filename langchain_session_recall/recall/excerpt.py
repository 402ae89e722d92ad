"""Excerpting: which part of a chain's transcript is shown, chosen before any text is cut (pure).

One algorithm for every surface that shows part of a session: each **anchor** (a place the
reader asked for) claims a region of a line of units around it, the regions are merged, and
what lies between them is elided. The surfaces differ only in its parameters:

* a search result's window (:func:`~langchain_session_recall.recall.transcript.window_bounds`)
  is one anchor, the passage with the most query weight, on the line of the transcript's
  **characters**: ``max_chars`` of them, half before it, sliding inward at the transcript's
  ends so it keeps its size (then its cuts move to line breaks);
* ``session_show`` (:mod:`~langchain_session_recall.recall.show`) has up to five anchors, the
  requested messages, on the line of the chain's **messages**: ``context`` on each side, cut at
  the chain's ends, plus the start of the chain (an anchor at 0 that slides), under a budget of
  characters in all (:func:`fit`: fewer neighbours, then each message clipped, an anchor keeping
  ``weight`` times a neighbour's text).

Example:
    >>> shown = excerpt(20, [Anchor(10, 1, 3), Anchor(0, 1, 3, slide=True)])
    >>> shown.shown, shown.elided
    (((0, 3), (9, 12)), ((3, 9), (12, 20)))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Anchor", "Excerpt", "Fitted", "around", "excerpt", "fit", "place"]


@dataclass(frozen=True, slots=True)
class Anchor:
    """A place to show on a line of units (a transcript's characters, a chain's messages).

    ``at``: the unit it is centred on; ``before``: units shown before it; ``size``: units shown
    in all; ``slide``: at an end of the line the region slides inward to keep its ``size``
    (else it is cut there); ``weight``: how much more of its own text the anchor's unit keeps
    than a neighbour's when text must be clipped (:func:`fit`).
    """

    at: int
    before: int
    size: int
    slide: bool = False
    weight: int = 1


def around(at: int, context: int, *, slide: bool = False, weight: int = 1) -> Anchor:
    """An anchor showing ``context`` units on each side of ``at`` (``2 * context + 1`` in all).

    Example:
        >>> around(5, 2)
        Anchor(at=5, before=2, size=5, slide=False, weight=1)
    """
    return Anchor(at, context, 2 * context + 1, slide, weight)


def place(anchor: Anchor, low: int | None, high: int | None) -> tuple[int, int]:
    """The region ``[lo, hi)`` that ``anchor`` claims on a line from ``low`` to ``high``
    (``None``: the line goes on past what is known on that side; the region is then not
    bounded there, and a caller that must know the line's end checks the region against it).

    Example:
        >>> place(Anchor(1, 5, 10, slide=True), 0, 100), place(Anchor(1, 5, 10), 0, 100)
        ((0, 10), (0, 6))
        >>> place(Anchor(98, 5, 10, slide=True), 0, 100), place(Anchor(98, 5, 10), None, None)
        ((90, 100), (93, 103))
    """
    start = anchor.at - anchor.before
    if anchor.slide:
        start = start if low is None else max(low, start)
        end = start + anchor.size if high is None else min(high, start + anchor.size)
        start = end - anchor.size if low is None else max(low, end - anchor.size)
        return start, end
    end = start + anchor.size
    return (start if low is None else max(low, start)), (end if high is None else min(high, end))


@dataclass(frozen=True, slots=True)
class Excerpt:
    """What is shown of a line of ``length`` units: the merged regions ``shown`` (``[lo, hi)``,
    in order) and the runs ``elided`` around and between them; ``anchors`` placed them."""

    length: int
    shown: tuple[tuple[int, int], ...]
    anchors: tuple[Anchor, ...] = ()

    @property
    def elided(self) -> tuple[tuple[int, int], ...]:
        """The runs not shown (``[lo, hi)``, none empty), in order."""
        return tuple((lo, hi) for kind, lo, hi in self.runs() if kind == "elided")

    def runs(self) -> Iterator[tuple[Literal["shown", "elided"], int, int]]:
        """Every run of the line in order, shown or elided (an empty one left out)."""
        at = 0
        for lo, hi in self.shown:
            if lo > at:
                yield "elided", at, lo
            yield "shown", lo, hi
            at = hi
        if self.length > at:
            yield "elided", at, self.length

    def units(self) -> list[int]:
        """The units shown, in order."""
        return [i for lo, hi in self.shown for i in range(lo, hi)]

    def weight(self, unit: int) -> int:
        """How much text ``unit`` keeps, in neighbours' shares: the heaviest anchor's at it."""
        return max((a.weight for a in self.anchors if a.at == unit), default=1)


def excerpt(length: int, anchors: Sequence[Anchor]) -> Excerpt:
    """The regions ``anchors`` claim on a line of ``length`` units, merged where they overlap
    or touch (nothing for an empty line).

    Example:
        >>> excerpt(10, [around(2, 1), around(4, 0), around(8, 0)]).shown
        ((1, 5), (8, 9))
    """
    if length <= 0:
        return Excerpt(max(length, 0), (), tuple(anchors))
    regions = sorted(place(a, 0, length) for a in anchors)
    merged: list[tuple[int, int]] = []
    for lo, hi in regions:
        if lo >= hi:
            continue
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return Excerpt(length, tuple(merged), tuple(anchors))


@dataclass(frozen=True, slots=True)
class Fitted:
    """What :func:`fit` chose: the ``context`` used, the ``excerpt`` it gives, the ``clip``
    (characters a neighbour keeps; ``None``: nothing clipped) and whether anything was cut
    (neighbours dropped or text clipped)."""

    context: int
    excerpt: Excerpt
    clip: int | None
    cut: bool


def fit(
    length: int,
    anchors: Callable[[int], Sequence[Anchor]],
    context: int,
    measure: Callable[[Excerpt, int | None], int],
    budget: int,
    *,
    longest: Callable[[Excerpt], int],
    min_clip: int,
) -> Fitted:
    """The widest ``context`` (down from the one asked for) whose excerpt fits ``budget``
    with neighbours' text clipped no shorter than ``min_clip``; at context 0, whatever fits.

    ``anchors(context)``: the anchors at a context; ``measure(excerpt, clip)``: the length of
    the excerpt rendered with each unit's text clipped to ``clip`` times its weight (``None``:
    not clipped); ``longest(excerpt)``: the longest text of a unit shown (a larger clip cuts
    nothing). The clip is the largest that fits (a binary search: ``measure`` grows with it).

    Example:
        Ten units of 100 characters, 450 in all: at context 3, seven units would keep 64
        characters each, under ``min_clip``; at context 2, five keep 90.

        >>> def measure(shown, clip):
        ...     return len(shown.units()) * (100 if clip is None else min(clip, 100))
        >>> f = fit(10, lambda c: [around(5, c)], 3, measure, 450, longest=lambda e: 100,
        ...         min_clip=70)
        >>> f.context, f.excerpt.shown, f.clip, f.cut
        (2, ((3, 8),), 90, True)
    """
    for used in range(context, -1, -1):
        shown = excerpt(length, anchors(used))
        if measure(shown, None) <= budget:
            return Fitted(used, shown, None, used < context)
        low, high = 0, longest(shown)  # the largest clip that fits: binary search
        while low < high:
            middle = (low + high + 1) // 2
            if measure(shown, middle) <= budget:
                low = middle
            else:
                high = middle - 1
        if low >= min_clip or used == 0:
            return Fitted(used, shown, low, True)
    raise ValueError(f"context must be 0 or more, not {context}")
