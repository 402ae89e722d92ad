"""Issue 31 item 2: a result redacts only what it can show, on both backends.

A long session's window shows a few of its messages: redaction (the costliest per-message step
of building a result) runs on those and on the matches, not on every message of the chain, and
what the window shows is redacted all the same, wherever the window's edges fall.
"""

from __future__ import annotations

import pytest
from store_targets import StoreFactory

from langchain_session_recall.core.redaction import redact_secrets
from langchain_session_recall.recall.build import search_results

KEY = "sk-proj-" + "Q7w" * 10


def _fill(store, n: int = 300) -> None:  # type: ignore[no-untyped-def]
    store.add_session("long", started_at=1000.0)
    texts = [f"step {i}: export OPENAI_API_KEY={KEY}{i:03d} and rerun the job" for i in range(n)]
    texts[150] = "the flamingo migration finally passed once the key was rotated"
    store.add_messages(
        "long",
        [{"role": "user", "content": t, "timestamp": 1000.0 + i} for i, t in enumerate(texts)],
    )


def test_only_the_shown_messages_are_redacted(store_factory: StoreFactory) -> None:
    store = store_factory.open("shown")
    _fill(store)
    seen: list[str] = []

    def counting(text: str) -> str:
        seen.append(text)
        return redact_secrets(text)

    [result] = search_results(store, "flamingo migration", k=1, max_chars=1000, redact=counting)
    assert "flamingo" in result.page_content
    assert result.metadata["truncated"] is True
    redacted_messages = sum(1 for t in seen if t.startswith("step "))
    shown_messages = result.page_content.count("step ")
    assert 0 < shown_messages <= redacted_messages <= shown_messages + 4, (
        redacted_messages,
        shown_messages,
    )


@pytest.mark.parametrize("max_chars", [40, 200, 999, 1000, 1001, 5000, None])
def test_every_shown_message_is_redacted(
    store_factory: StoreFactory, max_chars: int | None
) -> None:
    store = store_factory.open("shown")
    _fill(store)
    [result] = search_results(
        store, "flamingo migration", k=1, max_chars=max_chars, redact=redact_secrets
    )
    assert "Q7wQ7w" not in result.page_content
    assert "Q7wQ7w" not in str(result.metadata)
    if max_chars is None:
        assert result.page_content.count("[REDACTED") == 299
