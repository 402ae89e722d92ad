"""Which LLM failures are worth another attempt.

Retry what can heal by itself: rate limits (429), server errors (5xx), timeouts and connection
errors. Never retry what cannot: authentication (401), permission (403), unknown model (404), bad
request (400/422), or no model configured. The check is duck typed on ``status_code`` so it covers
the OpenAI and Anthropic SDKs alike, plus ``httpx`` and builtin network errors.
"""

from __future__ import annotations

import asyncio
import sys

from langchain_session_recall.errors import SessionRecallError

__all__ = ["EmptySummaryError", "is_retryable"]

_RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


class EmptySummaryError(SessionRecallError):
    """The model answered with no text. Retried: a second sample usually has content."""


def _status_code(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def _network_error_types() -> tuple[type[BaseException], ...]:
    types: list[type[BaseException]] = [TimeoutError, ConnectionError, asyncio.TimeoutError]
    try:
        import httpx

        types += [httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError]
    except ImportError:  # pragma: no cover - httpx comes with every supported SDK
        pass
    return tuple(types)


def _is_openai_connection_error(exc: BaseException) -> bool:
    """``openai.APIConnectionError`` (``APITimeoutError`` derives from it), checked without
    importing ``openai``: an instance of it can only exist once its module is loaded."""
    openai = sys.modules.get("openai")
    error_type = getattr(openai, "APIConnectionError", None)
    return isinstance(error_type, type) and isinstance(exc, error_type)


_NETWORK_ERRORS = _network_error_types()


def is_retryable(exc: BaseException) -> bool:
    """True for failures that may succeed on a later attempt.

    Example:
        >>> is_retryable(TimeoutError()), is_retryable(ValueError("bad prompt"))
        (True, False)
    """
    if isinstance(exc, EmptySummaryError):
        return True
    code = _status_code(exc)
    if code is not None:
        return code >= 500 or code in _RETRYABLE_STATUS
    return isinstance(exc, _NETWORK_ERRORS) or _is_openai_connection_error(exc)
