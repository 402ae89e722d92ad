"""Redaction of obvious secrets before a transcript leaves the process (pure, no I/O).

Transcripts of agent sessions routinely hold pasted API keys, ``export`` lines and ``.env`` dumps.
The summarizer runs every transcript through :func:`redact_secrets` before it builds the prompt,
so a hosted model (and any cassette recorded from it) never sees them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["DEFAULT_SECRET_PATTERNS", "SecretPattern", "redact_secrets"]


class SecretPattern(NamedTuple):
    """One kind of secret: a compiled regex and its replacement (``re.sub`` syntax)."""

    name: str
    pattern: re.Pattern[str]
    replacement: str


def _p(name: str, regex: str, replacement: str | None = None, flags: int = 0) -> SecretPattern:
    return SecretPattern(name, re.compile(regex, flags), replacement or f"[REDACTED:{name}]")


# Lower-case key words in `key=value` / `"key": "value"` forms. Plurals ("secrets:", "tokens")
# and compounds like "id-token: write" or "max_tokens=500" are prose or config, not secrets.
_SECRET_WORDS = (
    r"(?:password|passwd|secret(?!s)|api[_\-]?key|access[_\-]?key|auth[_\-]?token|"
    r"access[_\-]?token|refresh[_\-]?token|private[_\-]?token|client[_\-]?secret|"
    r"(?<![\w-])token(?!s))"
)
# The value: not already redacted, no quotes or separators.
_VALUE = r"(?![^\s\"',;&]*\[REDACTED)([^\s\"',;&]{3,})"

# Order matters: whole blocks and structured forms first, so a key inside a PEM block or a
# bearer header is replaced once, by the most specific rule.
DEFAULT_SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    _p(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY"
        r"(?: BLOCK)?-----|\Z)",
        flags=re.DOTALL,
    ),
    _p("bearer_token", r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]{8,}=*", r"\1 [REDACTED:bearer_token]"),
    _p("basic_auth", r"(?i)\b(basic)\s+[A-Za-z0-9+/]{12,}={0,2}", r"\1 [REDACTED:basic_auth]"),
    _p("url_credentials", r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+):[^\s@/]+@", r"\1:[REDACTED]@"),
    _p("openai_key", r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{16,}"),
    _p("aws_access_key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
    _p("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    _p("slack_token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    _p("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    _p("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    _p(
        "env_assignment",
        # GH_TOKEN=..., AWS_SECRET_ACCESS_KEY: ..., DB_PASSWORD="...": upper-case names.
        r"(\b[A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY|"
        r"PRIVATE_KEY)[A-Z0-9_]*[\"']?\s*[=:]\s*[\"']?)" + _VALUE,
        r"\1[REDACTED]",
    ),
    _p(
        "assignment",
        # password=..., "api_key": "...": keep the name so the summary can still say *that* a
        # password was set.
        rf"(?i)(\b[a-z0-9_\-]*{_SECRET_WORDS}[a-z0-9_\-]*[\"']?\s*[=:]\s*[\"']?)" + _VALUE,
        r"\1[REDACTED]",
    ),
    _p("stripe_key", r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    _p("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}"),
    _p("sendgrid_key", r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    _p("docker_pat", r"\bdckr_pat_[A-Za-z0-9_\-]{20,}"),
    _p("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{20,}"),
    # redis://:password@host (no user name before the colon)
    _p("url_password", r"(?i)\b([a-z][a-z0-9+.\-]*://):[^\s@/]+@", r"\1:[REDACTED]@"),
    _p("curl_user", r"((?<![\w-])(?:-u|--user)\s+[^\s:]+:)\S+", r"\1[REDACTED]"),
    _p("mysql_password", r"(\bmysql\w*\b[^\n]*?\s-p)(?!\s)\S+", r"\1[REDACTED]"),
    _p("login_password", r"(\blogin\b[^\n]*?\s-p\s+)\S+", r"\1[REDACTED]"),
    _p(
        "connection_string_key",
        r"(?i)\b((?:Account|SharedAccess)Key\s*=\s*)[A-Za-z0-9+/%]{20,}={0,2}",
        r"\1[REDACTED]",
    ),
    _p(
        "cli_flag",
        r"(?i)((?<![\w-])--?[a-z\-]*(?:password|passwd|secret|api-?key|access-?key|token)"
        r"[a-z\-]*\s+)(?!-)" + _VALUE,
        r"\1[REDACTED]",
    ),
)


def redact_secrets(text: str, patterns: Sequence[SecretPattern] | None = None) -> str:
    """Return ``text`` with every match of ``patterns`` replaced by a ``[REDACTED...]`` marker.

    Args:
        text: Any text (a transcript, a query, an error message).
        patterns: The rules to apply, in order. ``None`` means :data:`DEFAULT_SECRET_PATTERNS`;
            extend them with ``(*DEFAULT_SECRET_PATTERNS, SecretPattern(...))``.

    Example:
        >>> redact_secrets("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx")
        'export OPENAI_API_KEY=[REDACTED:openai_key]'
        >>> redact_secrets("mysql -u root --password hunter22")
        'mysql -u root --password [REDACTED]'
    """
    for rule in DEFAULT_SECRET_PATTERNS if patterns is None else patterns:
        text = rule.pattern.sub(rule.replacement, text)
    return text
