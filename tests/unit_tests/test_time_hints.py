"""Temporal expressions in queries -> soft time ranges (``search/time_hints.py``)."""

from __future__ import annotations

import datetime as dt

import pytest

from langchain_session_recall.search.time_hints import (
    TimeHint,
    closeness,
    parse_time_hint,
    remove_spans,
)

UTC = dt.timezone.utc
NOW = dt.datetime(2024, 5, 15, 12, 0, tzinfo=UTC)  # a Wednesday
DAY = 86_400.0


def _range(query: str, now: dt.datetime = NOW) -> tuple[dt.datetime, dt.datetime]:
    hint = parse_time_hint(query, now=now)
    assert hint is not None, query
    return dt.datetime.fromtimestamp(hint.start, UTC), dt.datetime.fromtimestamp(hint.end, UTC)


def d(y: int, m: int, day: int, h: int = 0) -> dt.datetime:
    return dt.datetime(y, m, day, h, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        # explicit dates
        ("what did we do on 8 May 2023?", d(2023, 5, 8), d(2023, 5, 9)),
        ("the plan from 8th of May, 2023", d(2023, 5, 8), d(2023, 5, 9)),
        ("notes of May 8, 2023", d(2023, 5, 8), d(2023, 5, 9)),
        ("release on October 13th 2023", d(2023, 10, 13), d(2023, 10, 14)),
        ("log of 2023-05-08", d(2023, 5, 8), d(2023, 5, 9)),
        ("8 jan 2023 outage", d(2023, 1, 8), d(2023, 1, 9)),
        ("what happened on May 8", d(2024, 5, 8), d(2024, 5, 9)),
        ("the 20th of May", d(2023, 5, 20), d(2023, 5, 21)),  # not yet this year
        # months, years, seasons
        ("the trip in May 2023", d(2023, 5, 1), d(2023, 6, 1)),
        ("budget of March, 2022", d(2022, 3, 1), d(2022, 4, 1)),
        ("what did we decide in March?", d(2024, 3, 1), d(2024, 4, 1)),
        ("what did we decide in June?", d(2023, 6, 1), d(2023, 7, 1)),
        ("the launch last March", d(2024, 3, 1), d(2024, 4, 1)),
        ("deadline this December", d(2024, 12, 1), d(2025, 1, 1)),
        ("beach trips in 2023", d(2023, 1, 1), d(2024, 1, 1)),
        ("hired in early 2023", d(2023, 1, 1), d(2023, 5, 1)),
        ("mid-2022 migration", d(2022, 5, 1), d(2022, 9, 1)),
        ("the state she visited in summer 2021", d(2021, 6, 1), d(2021, 9, 1)),
        ("summer of 2022", d(2022, 6, 1), d(2022, 9, 1)),
        ("winter 2023", d(2022, 12, 1), d(2023, 3, 1)),
        ("last summer", d(2023, 6, 1), d(2023, 9, 1)),
        ("this winter", d(2023, 12, 1), d(2024, 3, 1)),
        ("in the fall", d(2023, 9, 1), d(2023, 12, 1)),
        ("this spring", d(2024, 3, 1), d(2024, 6, 1)),
        # relative to now
        ("today", d(2024, 5, 15), d(2024, 5, 16)),
        ("this morning's build", d(2024, 5, 15), d(2024, 5, 16)),
        ("the bug from yesterday", d(2024, 5, 14), d(2024, 5, 15)),
        ("last night", d(2024, 5, 14), d(2024, 5, 15)),
        ("the day before yesterday", d(2024, 5, 13), d(2024, 5, 14)),
        ("3 days ago", d(2024, 5, 12), d(2024, 5, 13)),
        ("two weeks ago", d(2024, 4, 28), d(2024, 5, 5)),
        ("a few months ago", d(2024, 2, 1), d(2024, 3, 1)),
        ("a year ago", d(2023, 1, 1), d(2024, 1, 1)),
        ("how did we fix the CORS error last week?", d(2024, 5, 6), d(2024, 5, 13)),
        ("earlier this week", d(2024, 5, 13), d(2024, 5, 20)),
        ("last weekend", d(2024, 5, 11), d(2024, 5, 13)),  # the one just past
        ("this weekend", d(2024, 5, 11), d(2024, 5, 13)),  # not yet come: the one just past
        ("this month", d(2024, 5, 1), d(2024, 6, 1)),
        ("last month", d(2024, 4, 1), d(2024, 5, 1)),
        ("last year", d(2023, 1, 1), d(2024, 1, 1)),
        ("this year", d(2024, 1, 1), d(2025, 1, 1)),
        ("in the past 3 days", d(2024, 5, 12, 12), d(2024, 5, 15, 12)),
        ("the last two weeks", d(2024, 5, 1, 12), d(2024, 5, 15, 12)),
        ("the past week", d(2024, 5, 8, 12), d(2024, 5, 15, 12)),
        ("last Monday", d(2024, 5, 13), d(2024, 5, 14)),
        ("on Wednesday", d(2024, 5, 15), d(2024, 5, 16)),
        ("last Wednesday", d(2024, 5, 8), d(2024, 5, 9)),
    ],
)
def test_expressions_become_ranges(query: str, start: dt.datetime, end: dt.datetime) -> None:
    assert _range(query) == (start, end)


@pytest.mark.parametrize(
    "query",
    [
        "how did we fix the CORS error?",
        "this may be the nginx error",  # a modal verb, not the month
        "in may we trust",  # lower-case "may" without a day or year
        "may 8 people join?",
        "error code 2023",  # a bare number, no preposition
        "march the migrations forward",
        "version 3 dec 5",  # abbreviations only with a year
        "the last time we talked",
        "recently",  # vague words are left alone
        "上周我们怎么修复的",  # other languages: nothing recognised
        "¿qué hicimos la semana pasada?",
        "was haben wir letzte Woche gemacht?",
    ],
)
def test_non_temporal_text_gives_no_hint(query: str) -> None:
    assert parse_time_hint(query, now=NOW) is None


def test_text_spans_and_words_say_what_was_temporal() -> None:
    query = "What did Ann paint on 8 May, 2023?"
    hint = parse_time_hint(query, now=NOW)
    assert hint is not None
    assert hint.text == "8 May, 2023"
    assert [query[a:b] for a, b in hint.spans] == ["8 May, 2023"]
    assert hint.words == ("8", "may", "2023")
    assert remove_spans(query, hint.spans).split() == ["What", "did", "Ann", "paint", "on", "?"]


def test_an_absolute_date_anchors_a_relative_one() -> None:
    query = "what did she do last weekend before April 10, 2023?"
    hint = parse_time_hint(query, now=NOW)
    assert hint is not None
    assert _range(query) == (d(2023, 4, 10), d(2023, 4, 11))
    assert hint.text == "April 10, 2023"
    # the relative words are still reported as temporal
    assert hint.words == ("last", "weekend", "april", "10", "2023")


def test_several_absolute_expressions_give_the_range_covering_them() -> None:
    hint = parse_time_hint("between March 2023 and May 2023", now=NOW)
    assert hint is not None
    assert _range("between March 2023 and May 2023") == (d(2023, 3, 1), d(2023, 6, 1))
    assert hint.text == "March 2023 + May 2023"


def test_now_may_be_seconds_or_a_naive_datetime_in_tz() -> None:
    a = parse_time_hint("yesterday", now=NOW.timestamp())
    b = parse_time_hint("yesterday", now=dt.datetime(2024, 5, 15, 12, 0))
    assert a == b
    assert a is not None and a.end - a.start == DAY


def test_calendar_words_follow_the_time_zone() -> None:
    # 23:30 UTC on the 15th is already the 16th in Tokyo: "yesterday" is the 15th there.
    tokyo = dt.timezone(dt.timedelta(hours=9))
    now = dt.datetime(2024, 5, 15, 23, 30, tzinfo=UTC)
    hint = parse_time_hint("yesterday", now=now, tz=tokyo)
    assert hint is not None
    assert dt.datetime.fromtimestamp(hint.start, tokyo) == dt.datetime(2024, 5, 15, tzinfo=tokyo)


def test_invalid_days_are_not_dates() -> None:
    hint = parse_time_hint("on 31 February 2023", now=NOW)  # the month is still understood
    assert hint is not None and hint.text == "February 2023"
    assert parse_time_hint("2023-02-30", now=NOW) is None


def test_closeness_is_one_inside_and_halves_per_spread_outside() -> None:
    week = TimeHint(0.0, 7 * DAY, "last week", ((0, 9),), ("last", "week"))
    assert closeness(0.0, week) == 1.0
    assert closeness(7 * DAY - 1, week) == 1.0
    assert closeness(7 * DAY + 3.5 * DAY, week) == pytest.approx(0.5)
    assert closeness(-7 * DAY, week) == pytest.approx(0.25)
    assert closeness(7 * DAY + 3.5 * DAY, week, spread=1.0) == pytest.approx(2**-0.5)
    one_day = TimeHint(0.0, DAY, "yesterday", ((0, 9),))
    assert closeness(2 * DAY, one_day) == pytest.approx(0.5)  # never less than a day's slack


def test_remove_spans_keeps_the_rest() -> None:
    assert remove_spans("abc def ghi", [(4, 7)]) == "abc   ghi"
    assert remove_spans("abc def ghi", []) == "abc def ghi"
    assert remove_spans("abc def ghi", [(8, 11), (0, 3)]) == "  def  "
