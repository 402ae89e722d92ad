"""recall/excerpt.py: one excerpt algorithm for a search's window and ``session_show``.

The properties of the algorithm itself, and its equality with the two algorithms it replaced
(written out here as they were in af76cda): a search's window (``window_bounds``, and
``part_window_bounds`` on a run of a chain) and ``session_show``'s message ranges.
"""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from langchain_session_recall.recall.excerpt import Anchor, Excerpt, around, excerpt, fit, place
from langchain_session_recall.recall.transcript import (
    _line_cuts,
    part_window_bounds,
    window_bounds,
)

anchors = st.builds(
    Anchor,
    at=st.integers(-5, 60),
    before=st.integers(0, 30),
    size=st.integers(0, 60),
    slide=st.booleans(),
    weight=st.integers(1, 5),
)


@given(anchors, st.integers(0, 80))
def test_a_region_lies_on_the_line_and_a_sliding_one_keeps_its_size(
    anchor: Anchor, length: int
) -> None:
    lo, hi = place(anchor, 0, length)
    assert lo >= 0 and hi <= length
    start = anchor.at - anchor.before
    if anchor.slide:
        assert hi - lo == min(anchor.size, length)
    else:  # cut where the line ends
        assert (lo, hi) == (max(0, start), min(length, start + anchor.size))


@given(anchors)
def test_an_unbounded_side_does_not_cut_the_region(anchor: Anchor) -> None:
    start = anchor.at - anchor.before
    assert place(anchor, None, None) == (start, start + anchor.size)


@given(st.integers(0, 60), st.lists(anchors, max_size=6))
def test_shown_runs_are_merged_and_the_runs_cover_the_line(
    length: int, placed: list[Anchor]
) -> None:
    shown = excerpt(length, placed)
    claimed = {i for a in placed for i in range(*place(a, 0, length))}
    assert set(shown.units()) == claimed
    assert shown.units() == sorted(claimed)
    for (_, hi), (lo, _) in itertools.pairwise(shown.shown):
        assert hi < lo  # touching regions are one
    runs = list(shown.runs())
    assert [(lo, hi) for _, lo, hi in runs] == [
        (lo, hi) for lo, hi in sorted([*shown.shown, *shown.elided])
    ]
    assert all(lo < hi for _, lo, hi in runs)
    assert sum(hi - lo for _, lo, hi in runs) == length
    kinds = [kind for kind, _, _ in runs]
    assert all(a != b for a, b in itertools.pairwise(kinds))  # they alternate


def test_an_anchor_weighs_its_own_unit_only() -> None:
    shown = excerpt(10, [around(4, 1, weight=4), around(0, 1, slide=True)])
    assert shown.shown == ((0, 6),)
    assert [shown.weight(i) for i in range(6)] == [1, 1, 1, 1, 4, 1]
    assert excerpt(0, [around(0, 3)]) == Excerpt(0, (), (around(0, 3),))


# --- session_show: its ranges as af76cda wrote them ------------------------------------------


def _old_ranges(n: int, anchors: list[int], start: bool, context: int) -> list[tuple[int, int]]:
    ranges = [(max(0, a - context), min(n - 1, a + context)) for a in anchors]
    if start:
        ranges.append((0, min(n - 1, 2 * context)))
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


@given(st.data(), st.integers(1, 50), st.integers(0, 10), st.booleans())
def test_session_shows_ranges_are_those_it_had(
    data: st.DataObject, n: int, context: int, start: bool
) -> None:
    positions = data.draw(st.lists(st.integers(0, n - 1), max_size=5, unique=True))
    start = start or not positions
    placed = [around(a, context, weight=4) for a in positions]
    placed += [around(0, context, slide=True)] if start else []
    shown = excerpt(n, placed)
    assert [(lo, hi - 1) for lo, hi in shown.shown] == _old_ranges(n, positions, start, context)


# --- a search's window: as af76cda wrote it ------------------------------------------------


def _old_window_bounds(text: str, center: int, max_chars: int | None) -> tuple[int, int]:
    if max_chars is None or len(text) <= max_chars:
        return 0, len(text)
    center = min(max(center, 0), len(text))
    start = max(0, center - max_chars // 2)
    end = min(len(text), start + max_chars)
    start = max(0, end - max_chars)
    return _line_cuts(text, center, start, end, max_chars // 4)


def _old_part_bounds(
    text: str, center: int, max_chars: int | None, head: bool, tail: bool
) -> tuple[int, int] | None:
    if head and tail:
        return _old_window_bounds(text, center, max_chars)
    if max_chars is None or len(text) <= max_chars or not 0 <= center <= len(text):
        return None
    start = center - max_chars // 2
    if head:
        start = max(0, start)
    elif start < 1:
        return None
    end = start + max_chars
    if tail:
        end = min(len(text), end)
    elif end >= len(text):
        return None
    start = end - max_chars
    if head:
        start = max(0, start)
    elif start < 1:
        return None
    return _line_cuts(text, center, start, end, max_chars // 4)


texts = st.text(alphabet="ab \n", max_size=120)


@given(texts, st.integers(-10, 130), st.one_of(st.none(), st.integers(1, 80)))
def test_a_search_window_is_the_one_it_was(text: str, center: int, max_chars: int | None) -> None:
    assert window_bounds(text, center, max_chars) == _old_window_bounds(text, center, max_chars)


@given(
    texts,
    st.integers(-10, 130),
    st.one_of(st.none(), st.integers(1, 80)),
    st.booleans(),
    st.booleans(),
)
def test_a_window_on_a_run_is_the_one_it_was(
    text: str, center: int, max_chars: int | None, head: bool, tail: bool
) -> None:
    got = part_window_bounds(text, center, max_chars, head=head, tail=tail)
    assert got == _old_part_bounds(text, center, max_chars, head, tail)


# --- fit: the widest context, then the largest clip ------------------------------------------


@given(
    st.lists(st.integers(0, 400), min_size=1, max_size=30),
    st.data(),
    st.integers(0, 10),
    st.integers(50, 3_000),
    st.integers(0, 300),
)
def test_fit_takes_the_widest_context_then_the_largest_clip(
    sizes: list[int], data: st.DataObject, context: int, budget: int, min_clip: int
) -> None:
    at = data.draw(st.integers(0, len(sizes) - 1))

    def placed(used: int) -> list[Anchor]:
        return [around(at, used, weight=4)]

    def measure(shown: Excerpt, clip: int | None) -> int:
        limit = max(sizes) if clip is None else clip
        return sum(min(sizes[i], limit * shown.weight(i)) + 10 for i in shown.units())

    def longest(shown: Excerpt) -> int:
        return max(sizes[i] for i in shown.units())

    got = fit(len(sizes), placed, context, measure, budget, longest=longest, min_clip=min_clip)
    assert got.excerpt == excerpt(len(sizes), placed(got.context))
    assert got.cut == (got.context < context or got.clip is not None)
    if got.clip is None:
        assert measure(got.excerpt, None) <= budget
    else:
        assert got.clip == 0 or measure(got.excerpt, got.clip) <= budget
        assert got.clip == longest(got.excerpt) or measure(got.excerpt, got.clip + 1) > budget
        assert got.clip >= min_clip or got.context == 0
    for wider in range(got.context + 1, context + 1):  # no wider context fitted
        shown = excerpt(len(sizes), placed(wider))
        assert measure(shown, None) > budget
        assert measure(shown, min_clip) > budget or min_clip > longest(shown)


def test_the_excerpt_reads_nothing_of_the_package() -> None:
    """Pure: it chooses on units and numbers; the surfaces bring the text."""
    import ast
    from pathlib import Path

    import langchain_session_recall.recall.excerpt as module

    tree = ast.parse(Path(module.__file__ or "").read_text("utf-8"))
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert [m for m in imported if m and m.startswith("langchain_session_recall")] == []
