"""Where redaction used to live: :mod:`langchain_session_recall.core.redaction` now.

Redaction is a concern of every text that leaves (Documents, the tool's and the MCP server's
replies, the CLI's output, the summarizer's prompts), so it sits below them all rather than
in ``summarize/``. This path keeps working for code that imports it, and for the benchmarks
that load the rules of an older checkout (``--rules-from``).
"""

from langchain_session_recall.core.redaction import (
    DEFAULT_SECRET_PATTERNS,
    SecretPattern,
    describe_error,
    match_shown_id,
    redact_secrets,
)

__all__ = [
    "DEFAULT_SECRET_PATTERNS",
    "SecretPattern",
    "describe_error",
    "match_shown_id",
    "redact_secrets",
]
