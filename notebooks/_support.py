"""Notebook helpers: a chat model that is real when you have one, recorded when you don't.

- ``OPENAI_API_KEY`` set (optionally ``OPENAI_BASE_URL`` / ``SESSION_RECALL_LLM_MODEL``): the
  notebooks call that model for real.
- ``RECORD=1``: they call the server in ``SESSION_RECALL_LLM_BASE_URL`` (default: the local
  llama.cpp server started by ``../shared/tools/local-llm-server``) and record ``cassettes/``.
- Otherwise: the model calls replay from ``cassettes/notebook_*.yaml.gz``, offline.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from langchain_openai import ChatOpenAI  # noqa: E402

LIVE = bool(os.environ.get("OPENAI_API_KEY")) and os.environ.get("RECORD") != "1"


def chat_model(**kwargs: Any) -> ChatOpenAI:
    """The chat model the notebooks use (see the module docstring)."""
    if LIVE:
        return ChatOpenAI(
            model=os.environ.get("SESSION_RECALL_LLM_MODEL", "gpt-4o-mini"),
            max_retries=0,
            **kwargs,
        )
    from langchain_session_recall.testing.cassettes import cassette_chat_model

    chat: ChatOpenAI = cassette_chat_model(**kwargs)
    return chat


def max_tokens_param() -> str:
    """How the summarizer should pass its output limit to this server."""
    if LIVE:
        return "auto"
    from langchain_session_recall.testing.cassettes import recording_settings

    return str(recording_settings()["max_tokens_param"])


def agent_model_calls_tools() -> bool:
    """Whether a language model drives the agent notebook's tool calls: live, or recorded from a
    model that can (``SESSION_RECALL_LLM_TOOL_CALLING=1`` when recording). Otherwise the agent's
    turns are scripted."""
    if LIVE:
        return True
    from langchain_session_recall.testing.cassettes import recording_settings

    return bool(recording_settings()["tool_calling"])


def deadline() -> float:
    """The summarizer's overall deadline in seconds: its default (60), or 15 minutes while
    recording against a slow local server, so that no session of a recording ends as a
    ``deadline`` fallback. Replay answers at once; the deadline is not in the requests."""
    return 900.0 if os.environ.get("RECORD") == "1" else 60.0


@contextlib.contextmanager
def recorded(name: str) -> Iterator[None]:
    """Replay (or with RECORD=1 record) ``cassettes/<name>.yaml.gz``; a no-op when live."""
    if LIVE:
        yield
        return
    from langchain_session_recall.testing.cassettes import CASSETTE_DIR, RECORDING, use_cassette

    path = CASSETTE_DIR / f"{name}.yaml.gz"
    if RECORDING and path.exists():
        path.unlink()
    with use_cassette(path.name, **({} if RECORDING else {"record_mode": "none"})):
        yield
