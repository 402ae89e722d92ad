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


def deadline() -> float:
    """The summarizer's overall deadline in seconds: its default, or 15 minutes while recording
    against a local server on a busy machine, so that no session of a recording ends as a
    ``deadline`` fallback. Replay answers at once; the deadline is not in the requests."""
    from langchain_session_recall.summarize.summarizer import DEFAULT_TIMEOUT

    return 900.0 if os.environ.get("RECORD") == "1" else DEFAULT_TIMEOUT


def show_recaps(cassette: str, recaps: list[Any], extractive: list[Any]) -> None:
    """Print each session's recap (the model's when the summarizer kept it, else the model's
    rejected answer and why) next to the extractive recap made without a model. With
    ``SESSION_RECALL_VERDICTS_DUMP`` set, also write the verdicts down for
    ``scripts/review_verdicts.py``."""
    import textwrap

    from langchain_session_recall.testing import recorded_verdicts

    recorded_verdicts.observe(cassette, recaps)
    print("recaps by", recaps[0].metadata["summary_model"] if recaps else "-", "\n")
    plain = {d.metadata["session_id"]: d for d in extractive}
    for r in recaps:
        m = r.metadata
        print(f"=== {m['title']}: {m['summary_status']}")
        if m["summary_status"] == "rejected":
            reasons = ", ".join(m["summary_rejected_because"])
            print("model's answer, REJECTED by the quality gate because:", reasons)
            print(textwrap.indent(textwrap.fill(m["summary_rejected_text"][:600], 96), "  | "))
        else:
            sentences = m.get("summary_sentences", [])
            cited = sum(1 for x in sentences if x["citations"])
            print(
                f"model's recap ({len(sentences)} sentences, {cited} citing their messages; "
                f"{m.get('unsupported_sentences', 0)} unsupported removed):"
            )
            print(textwrap.indent(textwrap.fill(r.page_content, 96), "    "))
            for sentence in m.get("unsupported_text", []):
                print(textwrap.indent(textwrap.fill(f"removed: {sentence}", 96), "  x "))
        other = plain.get(m["session_id"])
        if other is not None:
            print("extractive recap (no model):")
            print(textwrap.indent(other.page_content.strip()[:700], "    "))
        print()


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
