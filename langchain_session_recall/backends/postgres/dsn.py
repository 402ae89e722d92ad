"""PostgreSQL connection strings: recognise them, and never show their password (pure).

A DSN's password must not appear in any output, error message, log line or ``repr``. The store
keeps the DSN private and shows :func:`redact_dsn`; errors from the driver pass through
:func:`scrub` before they are re-raised.

Both libpq forms are DSNs: a URI (``postgresql://`` or ``postgres://``, in any case) and a
``key=value`` string whose every word is a libpq keyword (``host=db user=app password=...``).
Anything else is a file path.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["is_postgres_dsn", "normalize_dsn", "redact_dsn", "scrub"]

_SCHEME = re.compile(r"^\s*(postgres(?:ql)?)://", re.I)
# The password runs from the first ':' of the user info to the last '@' before the query: a
# raw '@', '/' or space typed into a password is hidden with it, never shown in part.
_URL_PASSWORD = re.compile(
    r"(?P<head>^\s*[a-z][a-z0-9+.\-]*://[^:/@?#\s]*:)(?P<pw>[^?#]*)(?=@)", re.I
)
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&]password=)(?P<pw>[^&#\s]*)", re.I)
_KEYWORD_PASSWORD = re.compile(
    r"(?P<head>(?:^|\s)password\s*=\s*)(?P<pw>'(?:[^'\\]|\\.)*'|\S+)", re.I
)
_PATTERNS = (_URL_PASSWORD, _QUERY_PASSWORD, _KEYWORD_PASSWORD)

# libpq's connection keywords (PostgreSQL 17's "Parameter Key Words").
_KEYWORDS = frozenset(
    """
    host hostaddr port dbname user password passfile require_auth channel_binding
    connect_timeout client_encoding options application_name fallback_application_name
    keepalives keepalives_idle keepalives_interval keepalives_count tcp_user_timeout
    replication gssencmode sslmode requiressl sslnegotiation sslcompression sslcert sslkey
    sslkeylogfile sslpassword sslcertmode sslrootcert sslcrl sslcrldir sslsni requirepeer
    ssl_min_protocol_version ssl_max_protocol_version min_protocol_version
    max_protocol_version krbsrvname gsslib gssdelegation service target_session_attrs
    load_balance_hosts
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_CONNINFO_ITEM = re.compile(r"\s*([A-Za-z_]+)\s*=\s*(?:'(?:[^'\\]|\\.)*'|[^\s']*)")


def _is_conninfo(text: str) -> bool:
    """Whether ``text`` is a libpq ``key=value`` string: one or more items, all keywords."""
    pos, keys = 0, 0
    while pos < len(text):
        match = _CONNINFO_ITEM.match(text, pos)
        if match is None or match.end() == pos:
            return text[pos:].strip() == "" and keys > 0
        if match.group(1).lower() not in _KEYWORDS:
            return False
        keys += 1
        pos = match.end()
        if pos < len(text) and not text[pos].isspace():
            return False
    return keys > 0


def is_postgres_dsn(target: object) -> bool:
    """Whether ``target`` is a PostgreSQL connection string rather than a file path.

    Example:
        >>> is_postgres_dsn("postgresql://app@db/recall"), is_postgres_dsn("state.db")
        (True, False)
        >>> is_postgres_dsn("POSTGRESQL://app@db/recall"), is_postgres_dsn("host=db dbname=recall")
        (True, True)
        >>> is_postgres_dsn("/tmp/host=db.sqlite")
        False
    """
    if not isinstance(target, str):
        return False
    return _SCHEME.match(target) is not None or _is_conninfo(target)


def normalize_dsn(dsn: str) -> str:
    """``dsn`` as libpq reads it: a URI's scheme in lower case (libpq knows no other).

    Example:
        >>> normalize_dsn("PostgreSQL://app@db/recall")
        'postgresql://app@db/recall'
    """
    return _SCHEME.sub(lambda m: m.group(1).lower() + "://", dsn.strip(), count=1)


def redact_dsn(dsn: str) -> str:
    """``dsn`` with its password replaced by ``***`` (URI and ``key=value`` forms).

    Example:
        >>> redact_dsn("postgresql://app:s3cret@db:5432/recall")
        'postgresql://app:***@db:5432/recall'
        >>> redact_dsn("host=db user=app password='s 3' dbname=recall")
        'host=db user=app password=*** dbname=recall'
        >>> redact_dsn("postgresql://app:p@ss word@db/recall")
        'postgresql://app:***@db/recall'
    """
    for pattern in _PATTERNS:
        dsn = pattern.sub(lambda m: m.group("head") + "***", dsn)
    return dsn


def _passwords(dsn: str) -> list[str]:
    """The password as written and decoded, and its pieces between raw ``@``, ``/``, ``:``
    and spaces (the driver may quote a piece: ``failed to resolve host 'ss@db'``)."""
    found: list[str] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(dsn):
            raw = match.group("pw").strip("'")
            found += [raw, unquote(raw)]
            found += [p for p in re.split(r"[@/:\s]+", raw) if len(p) >= 3]
    # longest first, so a piece never spoils the replacement of the whole
    return sorted((p for p in dict.fromkeys(found) if p), key=len, reverse=True)


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
