"""The plan chosen per term for PostgreSQL's match statements (pure): bitmap or walk."""

from __future__ import annotations

import pytest

from langchain_session_recall.backends.postgres.plans import estimates, prefer_bitmap
from langchain_session_recall.backends.postgres.statements import PostgresDialect, match_query
from langchain_session_recall.models import SearchFilters

WINDOW = 5_000


@pytest.mark.parametrize(
    ("matches", "rows", "bitmap"),
    [
        (25_000, 1_000_000, True),  # a topic word at 1M: the walk reads ~200,000 messages
        (35_000, 1_000_000, True),
        (38_000, 1_000_000, False),  # measured: the bitmap lost from here at 1M
        (200_000, 1_000_000, False),  # a word in 20% of messages: the walk reads ~25,000
        (40_000, 200_000, False),  # the common words at 200k: the planner's walk stays
        (5_500, 200_000, True),
        (4_000, 1_000_000, True),  # fewer than the window: the walk would read everything
        (0, 0, True),
    ],
)
def test_bitmap_for_terms_whose_walk_reads_far_more_than_their_matches(
    matches: int, rows: int, bitmap: bool
) -> None:
    assert prefer_bitmap(matches, rows, WINDOW) is bitmap


def test_the_choice_scales_with_the_window() -> None:
    assert not prefer_bitmap(30_000, 1_000_000, 1_000)
    assert prefer_bitmap(30_000, 1_000_000, 20_000)


def test_estimates_read_both_branches_of_the_plan() -> None:
    plan = [{"Plan": {"Node Type": "Append", "Plans": [{"Plan Rows": 12}, {"Plan Rows": 9000}]}}]
    assert estimates(plan) == (12.0, 9000.0)


@pytest.mark.parametrize("plan", [None, [], [{}], [{"Plan": {"Plans": [{"Plan Rows": 1}]}}]])
def test_an_unexpected_plan_gives_no_estimate(plan: object) -> None:
    assert estimates(plan) is None


def test_the_bitmap_statement_fences_the_index_match() -> None:
    d = PostgresDialect()
    walk, _ = match_query(d, SearchFilters(), cjk=False)
    bitmap, _ = match_query(d, SearchFilters(), cjk=False, bitmap=True)
    fence = "(SELECT * FROM messages m WHERE m.tsv @@ q.q OFFSET 0) m"
    assert fence in bitmap
    assert fence not in walk
    assert "WHERE m.tsv @@ q.q AND" in walk or "WHERE m.tsv @@ q.q ORDER BY" in walk
