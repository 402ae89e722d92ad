"""SessionSummarizer with the quality gate: a model answer that is not a summary is rejected,
replaced by the extractive recap, never cached, and a cached one the gate rejects is not served.
Scripted models, no network."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.models import CachedSummary
from langchain_session_recall.summarize.cache import InMemorySummaryCache, summary_cache_key
from langchain_session_recall.summarize.prompts import prompt_fingerprint
from langchain_session_recall.summarize.quality import gate_fingerprint
from langchain_session_recall.summarize.summarizer import (
    REJECTED_TEXT_CHARS,
    SessionSummarizer,
    _model_identity,
)
from tests.summarizer_support import (
    SECRETS,
    ScriptedChatModel,
    echo_summary,
    sample_documents,
    without_citations,
)

FAST: dict[str, Any] = {"retry_initial_wait": 0.0, "retry_max_wait": 0.0, "retry_jitter": 0}
MODES = pytest.mark.parametrize("mode", ["sync", "async"])
LOOP = "[ERROR] " * 40
DOCKER = "Docker socket permission denied"


def garbage_for(title: str, answer: str = LOOP) -> Any:
    """Script: ``answer`` for the session titled ``title``, a real recap for the others."""

    def script(messages: Any, n: int) -> str:
        if f"Session title: {title}" in str(messages[-1].content):
            return answer
        return echo_summary(messages, n)

    return script


async def run(s: SessionSummarizer, docs: Any, mode: str) -> Any:
    return s.invoke(docs) if mode == "sync" else await s.ainvoke(docs)


@MODES
async def test_a_rejected_answer_gives_the_extractive_recap_and_says_why(mode: str) -> None:
    docs = sample_documents()
    llm = ScriptedChatModel(script=garbage_for(DOCKER))
    out = await run(SessionSummarizer(llm=llm, **FAST), docs, mode)
    rejected, *others = out
    assert [d.metadata["summary_status"] for d in others] == ["summarized"] * 4
    meta = rejected.metadata
    assert meta["summary_status"] == "rejected"
    assert "loop" in meta["summary_rejected_because"]
    assert meta["summary_rejected_text"].startswith("[ERROR] [ERROR]")
    assert meta["summary_quality"]["repetition"] > 0.9
    assert meta["token_usage"]["total_tokens"] == 120  # the call happened and was paid for
    assert meta["summary_model"] == "ScriptedChatModel"
    assert "summary_fallback_reason" not in meta
    for key, value in docs[0].metadata.items():
        assert meta[key] == value
    assert rejected.page_content.startswith("[Not summarized (model recap rejected: ")
    assert "loop" in rejected.page_content.splitlines()[0]
    assert "usermod" in rejected.page_content  # the extractive recap of the session
    assert len(llm.calls) == 5  # a rejection is no retryable failure


def test_the_rejected_text_is_redacted_and_bounded() -> None:
    leak = f"<|im_start|>assistant export OPENAI_API_KEY={SECRETS[0]} " + "x" * 5000
    llm = ScriptedChatModel(script=garbage_for(DOCKER, leak))
    [out] = SessionSummarizer(llm=llm, **FAST).invoke(sample_documents()[:1])
    text = out.metadata["summary_rejected_text"]
    assert out.metadata["summary_status"] == "rejected"
    assert "template_tokens" in out.metadata["summary_rejected_because"]
    assert SECRETS[0] not in text and "[REDACTED" in text
    assert len(text) <= REJECTED_TEXT_CHARS


def test_a_rejected_answer_is_cached_as_rejected_and_never_served_as_a_summary() -> None:
    cache = InMemorySummaryCache()
    llm = ScriptedChatModel(script=garbage_for(DOCKER))
    summarizer = SessionSummarizer(llm=llm, cache=cache, **FAST)
    docs = sample_documents()
    first = summarizer.invoke(docs)
    again = summarizer.invoke(docs)
    assert [d.metadata["summary_status"] for d in first] == ["rejected"] + ["summarized"] * 4
    assert [d.metadata["summary_status"] for d in again] == ["rejected"] + ["cached"] * 4
    assert again[0].metadata["summary_from_cache"] is True
    assert (
        again[0].metadata["summary_rejected_because"]
        == first[0].metadata["summary_rejected_because"]
    )
    assert again[0].page_content == first[0].page_content  # the extractive recap again
    statuses = sorted(entry.status for entry in cache._data.values())
    assert statuses == ["rejected"] + ["summarized"] * 4
    titles = [c for c in llm.calls if f"Session title: {DOCKER}" in c]
    assert len(titles) == 1  # the repeated search did not pay for the same garbage


def test_an_entry_cached_under_another_gate_is_not_served() -> None:
    # A cache written before the gate existed (its key has no gate version) may hold garbage.
    doc = sample_documents()[0]
    cache = InMemorySummaryCache()
    llm = ScriptedChatModel(script=echo_summary)
    summarizer = SessionSummarizer(llm=llm, cache=cache, **FAST)
    fields = {
        "session_id": doc.metadata["session_id"],
        "last_message_id": doc.metadata["last_message_id"],
        "transcript": doc.page_content,
        "query": doc.metadata["query"],
        "model": _model_identity(llm),  # the model's whole identity, not only its name
        "prompt_version": prompt_fingerprint(summarizer.prompt),
    }
    old = summary_cache_key(**fields)
    cache.put(old, " <<SYS>>\n[USER #101]: docker ps fails", session_id="s", model=None)
    [out] = summarizer.invoke([doc])
    assert out.metadata["summary_status"] == "summarized"
    assert len(llm.calls) == 1
    new = summary_cache_key(**fields, gate_version=gate_fingerprint())
    # The cache keeps the model's answer; the citations are computed again when it is served.
    assert cache.get(new) == CachedSummary(
        without_citations(out.page_content), "summarized", "ScriptedChatModel"
    )


def test_finish_reason_length_from_the_response_is_used() -> None:
    doc = sample_documents()[0]
    cut = "The user was not in the docker group, so `sudo usermod -aG docker dev` added"
    message = AIMessage(cut, response_metadata={"finish_reason": "length"})
    llm = GenericFakeChatModel(messages=iter([message]))
    [out] = SessionSummarizer(llm=llm, **FAST).invoke([doc])
    assert out.metadata["summary_status"] == "rejected"
    assert out.metadata["summary_rejected_because"] == ["truncated"]
    assert out.metadata["summary_quality"]["finish_reason"] == "length"
    # The budget is named, with what to do about it.
    assert out.metadata["summary_cut_off"] is True
    assert "max_output_tokens=512" in out.metadata["summary_notice"]
    assert "Raise max_output_tokens" in out.metadata["summary_notice"]
    done = AIMessage(cut + " them.", response_metadata={"finish_reason": "stop"})
    llm = GenericFakeChatModel(messages=iter([done]))
    [out] = SessionSummarizer(llm=llm, **FAST).invoke([doc])
    assert out.metadata["summary_status"] == "summarized"
    assert "summary_cut_off" not in out.metadata


def test_a_recap_cut_at_a_sentence_end_is_kept_but_flagged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    doc = sample_documents()[0]
    answer = "The user was not in the docker group; `sudo usermod -aG docker dev` added them."
    message = AIMessage(answer, response_metadata={"finish_reason": "length"})
    llm = GenericFakeChatModel(messages=iter([message]))
    [out] = SessionSummarizer(llm=llm, max_output_tokens=20, **FAST).invoke([doc])
    assert out.metadata["summary_status"] == "summarized"  # nothing visibly cut
    assert out.metadata["summary_cut_off"] is True  # but the budget stopped it: maybe more
    assert "max_output_tokens=20" in out.metadata["summary_notice"]
    assert any("max_output_tokens=20" in r.getMessage() for r in caplog.records)


def test_the_gate_can_be_turned_off() -> None:
    llm = ScriptedChatModel(script=garbage_for(DOCKER))
    [out] = SessionSummarizer(llm=llm, quality_gate=False, **FAST).invoke(sample_documents()[:1])
    assert out.metadata["summary_status"] == "summarized"
    assert out.page_content == LOOP.strip()


# Two real SmolLM2-135M-Instruct answers (llama.cpp, temperature 0.1) recorded while the cassettes
# were re-recorded, which the first gate (recap-gate-v1) accepted as summaries. Neither is one.
NEW_TURN = (
    "Alembic migration fails on deploy: 4f2a1c (head: 9b7e22)\n[ASSISTANT #215]: [Called: terminal]"
    '\n\nThe server crashed with a message that says "alembic upgrade head" and the server is still '
    "running. The server was unable to create an invoice table, so we need to check if it can "
    "happen again."
)
EMPTY_ITEM = (
    "1. What the user asked about or wanted to accomplish: rename photos\n2. Actions taken and "
    "outcomes found: renaming all photos in a folder by date 2026-10-14_153012.jpg, using Python "
    "script written in Python.\n3."
)


def test_a_turn_the_transcript_does_not_have_is_rejected() -> None:
    # The transcript's ids end at #214: "[ASSISTANT #215]:" is the model writing the conversation
    # on (and the crash it reports never happened).
    docs = [
        d for d in sample_documents() if d.metadata["title"] == "Alembic migration fails on deploy"
    ]
    llm = GenericFakeChatModel(
        messages=iter([AIMessage(NEW_TURN, response_metadata={"finish_reason": "stop"})])
    )
    [out] = SessionSummarizer(llm=llm, cache=False).invoke(docs)
    assert out.metadata["summary_status"] == "rejected"
    assert out.metadata["summary_rejected_because"] == ["transcript_format"]


def test_an_empty_last_list_item_is_rejected_as_truncated(demo_store: SessionStore) -> None:
    # Recorded on the demo session this search finds (the LCEL batch recipe), cut off at 64 tokens.
    docs = SessionRecallRetriever(store=demo_store, k=1).invoke("rename photos")
    assert docs[0].metadata["title"] == "Script to rename photos by EXIF date"
    llm = GenericFakeChatModel(
        messages=iter([AIMessage(EMPTY_ITEM, response_metadata={"finish_reason": "length"})])
    )
    [out] = SessionSummarizer(llm=llm, cache=False).invoke(docs)
    assert out.metadata["summary_status"] == "rejected"
    assert out.metadata["summary_rejected_because"] == ["truncated"]
