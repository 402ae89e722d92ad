"""Date inputs (ISO strings, datetimes, Unix seconds) -> Unix seconds (pure)."""

from __future__ import annotations

import datetime as _dt

__all__ = ["to_timestamp"]


def to_timestamp(value: str | float | int | _dt.date | None) -> float | None:
    """Unix seconds for an ISO date/datetime string, a ``date``/``datetime`` or a number.

    Naive dates and datetimes are taken as UTC. ``None`` and ``""`` give ``None``.

    Example:
        >>> to_timestamp("2026-11-03")
        1793664000.0
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a date: {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, _dt.datetime):
        moment = value
    elif isinstance(value, _dt.date):
        moment = _dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        try:
            moment = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(
                f"not an ISO date: {value!r}; use e.g. '2026-11-03' or '2026-11-03T14:00'"
            ) from None
    else:
        raise ValueError(f"not a date: {value!r}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    return moment.timestamp()
