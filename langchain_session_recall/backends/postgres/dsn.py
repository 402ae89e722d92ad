"""PostgreSQL connection strings: recognise them, and never show their password (pure).

A DSN's password must not appear in any output, error message, log line or ``repr``. The store
keeps the DSN private and shows :func:`redact_dsn`; errors from the driver pass through
:func:`scrub` before they are re-raised.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["is_postgres_dsn", "redact_dsn", "scrub"]

_URL_PASSWORD = re.compile(
    r"(?P<head>^[a-z][a-z0-9+.\-]*://[^:/@?#\s]*:)(?P<pw>[^@/?#\s]*)(?=@)", re.I
)
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&]password=)(?P<pw>[^&#\s]*)", re.I)
_KEYWORD_PASSWORD = re.compile(
    r"(?P<head>(?:^|\s)password\s*=\s*)(?P<pw>'(?:[^'\\]|\\.)*'|\S+)", re.I
)
_PATTERNS = (_URL_PASSWORD, _QUERY_PASSWORD, _KEYWORD_PASSWORD)


def is_postgres_dsn(target: object) -> bool:
    """Whether ``target`` is a PostgreSQL connection URI rather than a file path.

    Example:
        >>> is_postgres_dsn("postgresql://app@db/recall"), is_postgres_dsn("state.db")
        (True, False)
    """
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def redact_dsn(dsn: str) -> str:
    """``dsn`` with its password replaced by ``***`` (URI and ``key=value`` forms).

    Example:
        >>> redact_dsn("postgresql://app:s3cret@db:5432/recall")
        'postgresql://app:***@db:5432/recall'
        >>> redact_dsn("host=db user=app password='s 3' dbname=recall")
        'host=db user=app password=*** dbname=recall'
    """
    for pattern in _PATTERNS:
        dsn = pattern.sub(lambda m: m.group("head") + "***", dsn)
    return dsn


def _passwords(dsn: str) -> list[str]:
    found: list[str] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(dsn):
            raw = match.group("pw").strip("'")
            found += [raw, unquote(raw)]
    return [p for p in dict.fromkeys(found) if p]


def scrub(text: str, dsn: str) -> str:
    """``text`` (an error message, say) with ``dsn`` and its password made unreadable.

    Example:
        >>> scrub('bad option in "postgresql://a:pw1@h/d"', "postgresql://a:pw1@h/d")
        'bad option in "postgresql://a:***@h/d"'
    """
    text = text.replace(dsn, redact_dsn(dsn))
    for password in _passwords(dsn):
        text = text.replace(password, "***")
    return text
