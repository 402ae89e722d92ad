"""The chat model of LLM recaps, built from the environment: the one recipe the command line
(``search --summarize``) and the MCP server (``mcp --model``) share."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pydantic import SecretStr

from langchain_session_recall.errors import InvalidArgumentError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["chat_model_from_env"]


def chat_model_from_env(model: str, *, base_url: str | None = None) -> BaseChatModel:
    """``ChatOpenAI(model=...)`` for an OpenAI-compatible endpoint configured by environment.

    ``base_url``, else ``OPENAI_BASE_URL`` (optional: a local vLLM or llama.cpp server, a
    gateway), and ``OPENAI_API_KEY`` (optional when there is a base URL). ``langchain_openai``
    is imported here, only when a model is asked for. The SDK does not retry (the summarizer
    does).

    Raises:
        InvalidArgumentError: Neither a key nor a base URL (a ``ValueError``).

    Example:
        >>> llm = chat_model_from_env("qwen", base_url="http://127.0.0.1:8080/v1")
        >>> llm.model_name, llm.openai_api_base, llm.max_retries
        ('qwen', 'http://127.0.0.1:8080/v1', 0)
    """
    from langchain_openai import ChatOpenAI

    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    api_key = os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
    if api_key is None:
        raise InvalidArgumentError(
            f"the chat model {model} needs OPENAI_API_KEY in the environment, or the base URL "
            "(OPENAI_BASE_URL) of an OpenAI-compatible server that needs no key"
        )
    return ChatOpenAI(model=model, base_url=base_url, api_key=SecretStr(api_key), max_retries=0)
