"""Date inputs (ISO strings, datetimes, Unix seconds) -> Unix seconds (pure)."""

from __future__ import annotations

import datetime as _dt

from langchain_session_recall.errors import InvalidArgumentError
from langchain_session_recall.messages import is_finite_number

__all__ = ["iso_datetime", "to_timestamp"]

_fromisoformat = _dt.datetime.fromisoformat  # (looked up once: importers call it each line)


def to_timestamp(value: str | float | int | _dt.date | None) -> float | None:
    """Unix seconds for an ISO date/datetime string, a ``date``/``datetime`` or a number.

    Naive dates and datetimes are taken as UTC. ``None`` and ``""`` give ``None``. A number
    must be finite: NaN, an infinity or an integer beyond a float's range raises
    :class:`~langchain_session_recall.errors.InvalidArgumentError` (a ``ValueError``).

    Example:
        >>> to_timestamp("2026-11-03")
        1793664000.0
        >>> try:
        ...     to_timestamp(10**400)
        ... except InvalidArgumentError as exc:
        ...     print(exc)
        not a date: a number that is not finite Unix seconds
    """
    if value is None or value == "":
        return None
    if isinstance(value, str):  # first: the importers' case, once per line of a file
        return iso_datetime(value).timestamp()
    if isinstance(value, bool):
        raise InvalidArgumentError(f"not a date: {value!r}")
    elif isinstance(value, (int, float)):
        if not is_finite_number(value):  # (its repr may be thousands of digits long)
            raise InvalidArgumentError("not a date: a number that is not finite Unix seconds")
        return float(value)
    elif isinstance(value, _dt.datetime):
        moment = value
    elif isinstance(value, _dt.date):
        moment = _dt.datetime(value.year, value.month, value.day)
    else:
        raise InvalidArgumentError(f"not a date: {value!r}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    return moment.timestamp()


def iso_datetime(text: str) -> _dt.datetime:
    """The aware datetime of an ISO date/datetime string as :func:`to_timestamp` reads it
    (spaces around it left out, ``Z`` for UTC, a naive one taken as UTC): its Unix seconds
    are this datetime's ``timestamp()``, for a reader that needs them later, or not at all.

    Raises:
        InvalidArgumentError: not an ISO date (``""`` included).

    Example:
        >>> iso_datetime(" 2026-11-03T14:00Z ").timestamp() == to_timestamp("2026-11-03T14:00")
        True
    """
    try:
        moment = _fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgumentError(
            f"not an ISO date: {text!r}; use e.g. '2026-11-03' or '2026-11-03T14:00'"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=_dt.timezone.utc)
