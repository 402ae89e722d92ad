"""Temporal expressions in a query -> a soft time range (pure).

A recall question often says *when*: "the CORS fix from last week", "what did we decide in
March?", "the trip on 8 May 2023". :func:`parse_time_hint` finds such expressions and turns
them into a :class:`TimeHint`, a time range relative to a given ``now``, for ranking to use as
a soft prior on a session's start time (:func:`closeness`): a boost, never a filter (explicit
``after``/``before`` stay the hard filters).

Understood (English, case-insensitive, Northern-hemisphere seasons, weeks start on Monday):

* dates: ``8 May 2023``, ``8th of May, 2023``, ``May 8, 2023``, ``2023-05-08``; without a year
  (``8 May``, ``May 8th``), the most recent such day up to ``now``;
* months and years: ``May 2023``, ``May of 2023``, ``in 2023`` (a bare year needs a word such
  as *in*, *during*, *since* before it), ``early 2023`` / ``mid-2023`` / ``late 2023``;
  ``in March``, ``last March``, ``this March`` (a month name needs such a word, or a day or year
  next to it: *may* and *march* are also verbs; lower-case *may* is never read as a month
  without a day or year);
* seasons: ``summer 2021``, ``summer of 2021``, ``last summer``, ``this winter``, ``in the
  fall`` (winter of a year is December of the year before to February);
* relative to ``now``: ``today``, ``this morning``, ``tonight``, ``yesterday``, ``last night``,
  ``the day before yesterday``, ``3 days ago``, ``two weeks ago``, ``a few months ago``,
  ``last/this week``, ``last/this weekend``, ``last/this month``, ``last/this year``, ``the
  past 3 days``, ``in the last two weeks``, ``earlier this month``, ``last Monday``, ``on
  Tuesday``.

When a query holds an absolute date (a day, month, season or year) and also a relative one
("last weekend before April 10, 2023"), the absolute one anchors the range: the relative one is
relative to it, not to ``now``. Several absolute expressions give the range covering them all.

Other languages get nothing: no expression is recognised, :func:`parse_time_hint` returns
``None`` and the query is searched as words only. Vague words (*recently*, *lately*, *a while
ago*) are left alone.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["DAY_SECONDS", "TimeHint", "closeness", "parse_time_hint", "remove_spans", "time_prior"]

_UTC = dt.timezone.utc
DAY_SECONDS = 86_400.0
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class TimeHint:
    """A time range a query points at: ``[start, end)`` in Unix seconds.

    ``text`` is what was understood, as written ("last week"; several expressions are joined
    with " + "). ``spans`` are the character ranges of the query that were temporal and
    ``words`` their lower-cased words: every expression recognised, including a relative one an
    absolute date overrode, so a caller can decide whether to search those words too.
    """

    start: float
    end: float
    text: str
    spans: tuple[tuple[int, int], ...]
    words: tuple[str, ...] = ()


def closeness(moment: float, hint: TimeHint, *, spread: float = 0.5) -> float:
    """How well ``moment`` fits ``hint``: 1.0 inside the range, decaying outside.

    Outside the range the value halves every ``spread`` times the range's width (at least one
    day) of distance, so "last week" forgives a day or two and "in 2023" a few months.

    Example:
        >>> hint = TimeHint(0.0, 7 * 86_400.0, "last week", ((0, 9),), ("last", "week"))
        >>> closeness(86_400.0, hint), round(closeness(10.5 * 86_400.0, hint), 3)
        (1.0, 0.5)
    """
    if hint.start <= moment < hint.end:
        return 1.0
    distance = hint.start - moment if moment < hint.start else moment - hint.end
    half = max(DAY_SECONDS, spread * (hint.end - hint.start))
    return math.exp(-math.log(2) * distance / half)


def time_prior(
    hint: TimeHint | None, *, boost: float, spread: float = 0.5
) -> Callable[[float], float]:
    """The factor a session started at a given moment gets for fitting ``hint``: ``1 + boost x``
    :func:`closeness` (``1.0`` for every moment when there is no hint or no boost).

    Example:
        >>> hint = TimeHint(0.0, 7 * 86_400.0, "last week", ((0, 9),), ("last", "week"))
        >>> prior = time_prior(hint, boost=1.0)
        >>> prior(86_400.0), round(prior(10.5 * 86_400.0), 3), time_prior(None, boost=1.0)(5.0)
        (2.0, 1.5, 1.0)
    """

    def prior(started: float) -> float:
        if hint is None or not boost:
            return 1.0
        return 1.0 + boost * closeness(started, hint, spread=spread)

    return prior


def remove_spans(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` without the given character spans (each replaced by a space).

    Example:
        >>> remove_spans("what did we fix last week?", [(16, 25)])
        'what did we fix  ?'
    """
    out = []
    pos = 0
    for a, b in sorted(spans):
        out.append(text[pos:a])
        out.append(" ")
        pos = max(pos, b)
    out.append(text[pos:])
    return "".join(out)


# --------------------------------------------------------------------------- calendar helpers

_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_FULL_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
)
_ANY_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a few": 3,
    "several": 3,
}
_NUMBER = (
    r"(?P<n>\d{1,3}|a couple of|a few|several|an?"
    r"|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
)
_UNIT = r"(?P<unit>day|week|month|year)s?"

Range = tuple[dt.datetime, dt.datetime]


def _day(d: dt.date, tz: dt.tzinfo) -> Range:
    start = dt.datetime(d.year, d.month, d.day, tzinfo=tz)
    return start, start + dt.timedelta(days=1)


def _month(year: int, month: int, tz: dt.tzinfo, count: int = 1) -> Range:
    start = dt.datetime(year, month, 1, tzinfo=tz)
    y, m = divmod(month - 1 + count, 12)
    return start, dt.datetime(year + y, m + 1, 1, tzinfo=tz)


def _shift_month(year: int, month: int, delta: int) -> tuple[int, int]:
    y, m = divmod(month - 1 + delta, 12)
    return year + y, m + 1


def _season(name: str, year: int, tz: dt.tzinfo) -> Range:
    """Meteorological seasons; winter of ``year`` runs from December of the year before."""
    first = _SEASON_START[name]
    return _month(year - 1 if first == 12 else year, first, tz, 3)


def _latest(occurrence: Callable[[int], Range], today: dt.date, *, ended: bool) -> Range:
    """The most recent yearly occurrence that has started (``ended``: finished) by ``today``."""
    for year in range(today.year + 1, today.year - 3, -1):
        start, end = occurrence(year)
        if (end.date() <= today) if ended else (start.date() <= today):
            return start, end
    return occurrence(today.year - 1)


def _valid_day(year: int, month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]


# --------------------------------------------------------------------------- patterns

_DAYNUM = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_MON = rf"(?P<mon>{_ANY_MONTH})\.?"
_YEAR_CONTEXT = r"in|during|since|until|till|by|before|after|from|through|throughout|of"
_CONTEXT = _YEAR_CONTEXT + r"|last|this|early|late|mid"
_FULL_MON = rf"(?P<mon>{_FULL_MONTHS})"


@dataclass(frozen=True, slots=True)
class _Found:
    start: int
    end: int
    range: Range
    absolute: bool


_Handler = Callable[["re.Match[str]", dt.datetime], "Range | None"]


def _explicit_day(m: re.Match[str], now: dt.datetime) -> Range | None:
    month = _MONTHS[m["mon"].lower()]
    day = int(m["day"])
    if m["year"]:
        year = int(m["year"])
        return (
            _day(dt.date(year, month, day), now.tzinfo or _UTC)
            if _valid_day(year, month, day)
            else None
        )
    if m["mon"].lower() == "may" and not m["mon"].startswith("M"):
        return None  # "may 2 people" is not a date
    today = now.date()
    for year in (today.year, today.year - 1):
        if _valid_day(year, month, day) and dt.date(year, month, day) <= today:
            return _day(dt.date(year, month, day), now.tzinfo or _UTC)
    return None


def _iso_day(m: re.Match[str], now: dt.datetime) -> Range | None:
    year, month, day = int(m["year"]), int(m["m"]), int(m["d"])
    return (
        _day(dt.date(year, month, day), now.tzinfo or _UTC)
        if _valid_day(year, month, day)
        else None
    )


def _month_year(m: re.Match[str], now: dt.datetime) -> Range | None:
    return _month(int(m["year"]), _MONTHS[m["mon"].lower()], now.tzinfo or _UTC)


def _season_year(m: re.Match[str], now: dt.datetime) -> Range | None:
    return _season(m["season"].lower(), int(m["year"]), now.tzinfo or _UTC)


def _year(m: re.Match[str], now: dt.datetime) -> Range | None:
    tz = now.tzinfo or _UTC
    year = int(m["year"])
    part = (m["part"] or "").lower().rstrip("- ")
    first, count = {"early": (1, 4), "mid": (5, 4), "late": (9, 4)}.get(part, (1, 12))
    return _month(year, first, tz, count)


def _month_only(m: re.Match[str], now: dt.datetime) -> Range | None:
    word = m["mon"]
    if word.lower() == "may" and not word.startswith("M"):
        return None  # "this may be" is not May
    tz = now.tzinfo or _UTC
    month = _MONTHS[word.lower()]
    ctx = m["ctx"].lower()
    if ctx == "this":
        return _month(now.year, month, tz)
    return _latest(lambda y: _month(y, month, tz), now.date(), ended=ctx == "last")


def _season_only(m: re.Match[str], now: dt.datetime) -> Range | None:
    name = m["season"].lower()
    ctx = m["ctx"].lower()
    tz = now.tzinfo or _UTC
    if ctx == "this":
        start, end = _season(name, now.year, tz)
        if name == "winter" and now.month == 12:
            start, end = _season(name, now.year + 1, tz)
        return start, end
    return _latest(
        lambda y: _season(name, y, tz), now.date(), ended=ctx in ("last", "past", "previous")
    )


def _today(m: re.Match[str], now: dt.datetime) -> Range | None:
    word = m[0].lower()
    back = 2 if "before" in word else 1 if word.startswith(("yesterday", "last")) else 0
    return _day(now.date() - dt.timedelta(days=back), now.tzinfo or _UTC)


def _count(m: re.Match[str]) -> int:
    raw = m["n"].lower()
    return int(raw) if raw.isdigit() else _NUMBERS[raw]


def _ago(m: re.Match[str], now: dt.datetime) -> Range | None:
    n, unit = _count(m), m["unit"].lower()
    tz = now.tzinfo or _UTC
    if unit == "day":
        return _day(now.date() - dt.timedelta(days=n), tz)
    if unit == "week":
        centre = now - dt.timedelta(weeks=n)
        return centre - dt.timedelta(days=3.5), centre + dt.timedelta(days=3.5)
    if unit == "month":
        return _month(*_shift_month(now.year, now.month, -n), tz)
    return _month(now.year - n, 1, tz, 12)


def _past(m: re.Match[str], now: dt.datetime) -> Range | None:
    """``the past 3 days``, ``in the last two weeks``: a rolling range up to now."""
    n, unit = (_count(m) if m["n"] else 1), m["unit"].lower()
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit] * n
    return now - dt.timedelta(days=days), now


def _calendar(m: re.Match[str], now: dt.datetime) -> Range | None:
    """``last/this week|weekend|month|year`` (calendar units; weeks start on Monday)."""
    which, unit = m["which"].lower(), m["unit"].lower()
    back = 1 if which in ("last", "previous", "past") else 0
    tz = now.tzinfo or _UTC
    today = now.date()
    if unit in ("week", "weekend"):
        monday = today - dt.timedelta(days=today.weekday(), weeks=back)
        if unit == "weekend":
            saturday = monday + dt.timedelta(days=5)
            if back == 0 and saturday > today:  # "this weekend" before it: the one just past
                saturday -= dt.timedelta(weeks=1)
            start = _day(saturday, tz)[0]
            return start, start + dt.timedelta(days=2)
        start = _day(monday, tz)[0]
        return start, start + dt.timedelta(weeks=1)
    if unit == "month":
        return _month(*_shift_month(now.year, now.month, -back), tz)
    return _month(now.year - back, 1, tz, 12)


def _weekday(m: re.Match[str], now: dt.datetime) -> Range | None:
    target = _WEEKDAYS.index(m["wd"].lower())
    today = now.date()
    back = (today.weekday() - target) % 7
    if back == 0 and m["ctx"].lower() == "last":
        back = 7
    return _day(today - dt.timedelta(days=back), now.tzinfo or _UTC)


_SEASON = r"(?P<season>spring|summer|autumn|fall|winter)"
_WEEKDAY = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_NOT_A_NUMBER_GOES_ON = r"(?![-/.]\d)"
_TODAYISH = (
    r"the\s+day\s+before\s+yesterday|yesterday|last\s+night|today|tonight"
    r"|this\s+(?:morning|afternoon|evening)"
)

# (pattern, handler, absolute): an absolute expression names a date; a relative one needs now.
_PATTERNS: tuple[tuple[re.Pattern[str], _Handler, bool], ...] = tuple(
    (re.compile(p, re.IGNORECASE), h, absolute)
    for p, h, absolute in (
        # dates with a year: 8 May 2023, 8th of May, 2023, May 8, 2023, 2023-05-08
        (rf"\b{_DAYNUM}(?:\s+of)?\s+{_MON},?\s+{_YEAR}\b", _explicit_day, True),
        (rf"\b{_MON}\s+{_DAYNUM},?\s+{_YEAR}\b", _explicit_day, True),
        (r"\b(?P<year>\d{4})-(?P<m>\d\d)-(?P<d>\d\d)\b", _iso_day, True),
        # dates without a year (full month names only): the 8th of May, 8 May, May 8th
        (rf"\b(?:the\s+)?{_DAYNUM}\s+of\s+{_FULL_MON}(?P<year>)\b", _explicit_day, True),
        (rf"\b{_DAYNUM}\s+{_FULL_MON}(?P<year>)\b", _explicit_day, True),
        (
            rf"\b{_FULL_MON}\s+(?P<day>[0-3]?\d)(?:st|nd|rd|th)?(?P<year>)\b(?!\s*(?:[:.]\d|%))",
            _explicit_day,
            True,
        ),
        # months, seasons and years
        (rf"\b{_MON},?\s+(?:of\s+)?{_YEAR}\b", _month_year, True),
        (rf"\b(?:the\s+)?{_SEASON}\s+(?:of\s+)?{_YEAR}\b", _season_year, True),
        (
            rf"\b(?:{_YEAR_CONTEXT})\s+(?:the\s+year\s+)?(?:(?P<part>early|mid-?|late)\s*)?"
            rf"{_YEAR}\b{_NOT_A_NUMBER_GOES_ON}",
            _year,
            True,
        ),
        (rf"\b(?P<part>early|mid-?|late)\s*{_YEAR}\b{_NOT_A_NUMBER_GOES_ON}", _year, True),
        (
            rf"\b(?P<ctx>{_CONTEXT})\s+(?:early\s+|late\s+|mid-?)?(?P<mon>{_FULL_MONTHS})\b",
            _month_only,
            True,
        ),
        (
            rf"\b(?P<ctx>last|this|past|previous|in|during|since|over)\s+(?:the\s+)?{_SEASON}\b",
            _season_only,
            True,
        ),
        # relative to now
        (rf"\b(?:{_TODAYISH})\b", _today, False),
        (rf"\b{_NUMBER}\s+{_UNIT}\s+ago\b", _ago, False),
        (rf"\b(?:the\s+)?(?:past|last)\s+{_NUMBER}\s+{_UNIT}\b", _past, False),
        (r"\bthe\s+(?:past|last)\s+(?P<n>)(?P<unit>day|week|month|year)\b", _past, False),
        (
            r"\b(?:earlier\s+)?(?P<which>last|this|previous|past)\s+"
            r"(?P<unit>weekend|week|month|year)\b",
            _calendar,
            False,
        ),
        (rf"\b(?P<ctx>last|this|on|since|past)\s+{_WEEKDAY}\b", _weekday, False),
    )
)


def _as_datetime(now: float | dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    if isinstance(now, dt.datetime):
        return now.astimezone(tz) if now.tzinfo else now.replace(tzinfo=tz)
    return dt.datetime.fromtimestamp(float(now), tz)


def _find(text: str, now: dt.datetime) -> list[_Found]:
    candidates: list[_Found] = []
    for pattern, handler, absolute in _PATTERNS:
        for m in pattern.finditer(text):
            try:
                found = handler(m, now)
            except (ValueError, OverflowError, KeyError):
                continue
            if found is not None:
                candidates.append(_Found(m.start(), m.end(), found, absolute))
    # Longest first, then leftmost; an expression inside a longer one is part of it.
    candidates.sort(key=lambda f: (-(f.end - f.start), f.start))
    chosen: list[_Found] = []
    for f in candidates:
        if all(f.end <= c.start or f.start >= c.end for c in chosen):
            chosen.append(f)
    return sorted(chosen, key=lambda f: f.start)


def parse_time_hint(
    text: str, *, now: float | dt.datetime, tz: dt.tzinfo = _UTC
) -> TimeHint | None:
    """The time range ``text`` points at, relative to ``now``, or ``None``.

    ``now`` is Unix seconds or a datetime (naive ones are in ``tz``); calendar words (today,
    last week, in March) are read in ``tz``.

    Example:
        >>> now = dt.datetime(2024, 5, 15, 12, 0)
        >>> hint = parse_time_hint("how did we fix the CORS error last week?", now=now)
        >>> hint.text, dt.datetime.fromtimestamp(hint.start, _UTC).date()
        ('last week', datetime.date(2024, 5, 6))
        >>> h = parse_time_hint("what did Ann paint on 8 May, 2023?", now=now)
        >>> h.text, (h.end - h.start) / 86_400
        ('8 May, 2023', 1.0)
        >>> parse_time_hint("this may be the nginx error", now=now) is None
        True
    """
    moment = _as_datetime(now, tz)
    found = _find(text, moment)
    if not found:
        return None
    anchors = [f for f in found if f.absolute] or found
    start = min(f.range[0] for f in anchors)
    end = max(f.range[1] for f in anchors)
    return TimeHint(
        start=start.timestamp(),
        end=end.timestamp(),
        text=" + ".join(text[f.start : f.end] for f in anchors),
        spans=tuple((f.start, f.end) for f in found),
        words=tuple(w.lower() for f in found for w in _WORD.findall(text[f.start : f.end])),
    )
