"""How a match statement finds a term's newest matches: the plan chosen per term (pure).

A match statement ranks a term's newest ``rank_window`` matches
(:func:`~langchain_session_recall.backends.postgres.statements.match_query`). PostgreSQL finds
them one of two ways:

* **walk**: the primary key backwards, testing each message's ``tsvector`` until ``window``
  match; about ``window * rows / matches`` messages read, each ``tsvector`` decompressed;
* **bitmap**: every match from the GIN index, then the newest ``window`` of them sorted out;
  ``matches`` messages read, none tested.

The planner prices the walk's per-message test too low: at 1M messages a word found in 2.5% of
them (25,000) walked 200,000 messages in 250-600 ms where the bitmap took 150-330 ms, while a
word found in 20% of them walks 25,000 and stays the faster. Measured over the 100-query
mix at 1M (every main-column match statement timed both ways, the same rows), the bitmap
won up to about 35,000 matches and lost from 38,000; at 200k, the same rule keeps the
planner's choice everywhere. So :func:`prefer_bitmap` takes the bitmap when
``matches**2 < window * rows / 4``, from the planner's own estimate of the matches (its
statistics of the column: one ``EXPLAIN`` of :data:`ESTIMATE`, read by :func:`estimates`).
Either plan finds the same rows: only the time differs.
"""

from __future__ import annotations

from typing import Any

from langchain_session_recall.backends.postgres.schema import TS_CONFIG

__all__ = ["ESTIMATE", "estimates", "prefer_bitmap"]

WALK_COST = 4.0
"""How many messages the bitmap reads for the price of one the walk tests (measured: the
bitmap wins while ``matches**2 < window * rows / WALK_COST``)."""

ESTIMATE = (
    f"EXPLAIN (FORMAT JSON) SELECT 1 FROM messages m "
    f"WHERE m.tsv @@ to_tsquery('{TS_CONFIG}', %(tsquery)s) "
    "UNION ALL SELECT 1 FROM messages m"
)
"""The planner's estimates, without running anything: the messages matching ``tsquery``
(the first branch), and all messages (the second), bound: ``tsquery``."""


def estimates(plan: Any) -> tuple[float, float] | None:
    """``(matches, rows)`` from the JSON plan of :data:`ESTIMATE`; ``None`` when the plan is
    not shaped as expected (then the planner keeps its choice).

    Example:
        >>> plan = [{"Plan": {"Plans": [{"Plan Rows": 250}, {"Plan Rows": 10000}]}}]
        >>> estimates(plan)
        (250.0, 10000.0)
    """
    try:
        branches = plan[0]["Plan"]["Plans"]
        return float(branches[0]["Plan Rows"]), float(branches[1]["Plan Rows"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def prefer_bitmap(matches: float, rows: float, window: int) -> bool:
    """Whether a term's newest ``window`` matches are found faster from the GIN index (all
    ``matches`` read, the newest sorted out) than by walking the newest messages of ``rows``.

    Example:
        >>> prefer_bitmap(25_000, 1_000_000, 5_000)  # a topic word at 1M: the bitmap
        True
        >>> prefer_bitmap(200_000, 1_000_000, 5_000)  # a word in 20% of them: the walk
        False
        >>> prefer_bitmap(40_000, 200_000, 5_000)
        False
    """
    if matches <= window:
        return True  # the walk would read every message to find them all
    return matches * matches * WALK_COST < window * rows
