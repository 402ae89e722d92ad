"""Which LLM failures are worth another attempt.

Retry what can heal by itself: rate limits (429), server errors (5xx), timeouts and connection
errors. Never retry what cannot: authentication (401), permission (403), unknown model (404), bad
request (400/422), or no model configured.

langchain-core's model errors say it themselves (``ModelError.is_retryable``, raised by
provider integrations such as langchain-openai); that verdict is taken first. For errors that
do not carry it, the HTTP status code (duck typed: the OpenAI and Anthropic SDKs, ``httpx``)
decides, then the kind of network failure. Nothing here imports a model SDK.
"""

from __future__ import annotations

import asyncio

from langchain_session_recall.errors import EmptySummaryError

__all__ = ["EmptySummaryError", "is_retryable"]

_RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
_NETWORK_ERRORS = (TimeoutError, ConnectionError, asyncio.TimeoutError)
# Network failures of HTTP clients, recognised by class name and module (no import needed):
# httpx's transport errors and the OpenAI SDK's connection error (its timeout derives from it).
_NETWORK_ERROR_CLASSES = frozenset(
    {
        ("httpx", "TimeoutException"),
        ("httpx", "NetworkError"),
        ("httpx", "RemoteProtocolError"),
        ("openai", "APIConnectionError"),
    }
)


def _status_code(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def _is_network_error(exc: BaseException) -> bool:
    if isinstance(exc, _NETWORK_ERRORS):
        return True
    return any(
        (cls.__module__.split(".")[0], cls.__name__) in _NETWORK_ERROR_CLASSES
        for cls in type(exc).__mro__
    )


def is_retryable(exc: BaseException) -> bool:
    """True for failures that may succeed on a later attempt.

    Example:
        >>> from langchain_core.exceptions import ModelAuthenticationError, ModelRateLimitError
        >>> is_retryable(ModelRateLimitError("slow down")), is_retryable(ModelAuthenticationError())
        (True, False)
        >>> is_retryable(TimeoutError()), is_retryable(ValueError("bad prompt"))
        (True, False)
    """
    if isinstance(exc, EmptySummaryError):
        return True
    verdict = getattr(exc, "is_retryable", None)
    if isinstance(verdict, bool):  # langchain-core's ModelError and its provider subclasses
        return verdict
    code = _status_code(exc)
    if code is not None:
        return code >= 500 or code in _RETRYABLE_STATUS
    return _is_network_error(exc)
