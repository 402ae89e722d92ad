"""A session's header: the words that find a session by its title and its date (pure).

A recall question often names when something happened ("the trip in May 2023") or what the
session was called. Messages rarely say their own date, so each session gets a small header
indexed beside its messages: its title and its start date in words. Ranking counts a header
match in every passage window of the session.
"""

from __future__ import annotations

import datetime as dt

__all__ = ["session_header"]


def session_header(title: str | None, started_at: float | None) -> str:
    """The searchable header of a session: its title, then its start date (UTC) in words.

    Example:
        >>> session_header("CORS fix", 1683554160.0)
        'CORS fix\\nMonday 8 May 2023'
        >>> session_header(None, None)
        ''
    """
    parts = [title.strip()] if title and title.strip() else []
    if started_at is not None:
        try:
            when = dt.datetime.fromtimestamp(float(started_at), tz=dt.timezone.utc)
        except (OverflowError, OSError, ValueError):
            when = None
        if when is not None and when.year > 1970:
            parts.append(f"{when:%A} {when.day} {when:%B %Y}")
    return "\n".join(parts)
