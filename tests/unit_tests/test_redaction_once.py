"""Redaction applied once, where a result is built (issue 33 item 1).

The retriever redacts what a result shows with a :class:`SecretRedactor` and records its rules'
id and the secrets it replaced in the result's data; the summarizer sends such a Document's
text as it is and reports that count, and redacts any other text itself (a Document made
elsewhere, one redacted by other rules, one whose text a caller changed).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.core import redaction
from langchain_session_recall.core.redaction import (
    DEFAULT_SECRET_PATTERNS,
    SecretPattern,
    SecretRedactor,
)
from langchain_session_recall.recall.model import RecalledSession
from langchain_session_recall.summarize.summarizer import SessionSummarizer

KEY = "sk-" + "abcdefghij" * 4
PASSWORD = "hunter2hunter2"


def _store() -> SessionStore:
    store = SessionStore(":memory:")
    store.add_session("s1", title="deploy keys")
    store.add_messages(
        "s1",
        [
            {"role": "user", "content": f"the deploy failed, my key is {KEY}"},
            # text another program redacted before it was stored: a marker, not a secret
            {"role": "assistant", "content": "noted; the old one was [REDACTED] anyway"},
            {"role": "user", "content": f"and the deploy password={PASSWORD}"},
        ],
    )
    return store


def _recap(documents: list[Document], **options: Any) -> Document:
    [out] = SessionSummarizer(llm=None, **options).invoke(documents)
    return out


def test_the_summarizer_counts_secrets_redacted_not_markers_in_the_text() -> None:
    [doc] = SessionRecallRetriever(store=_store(), k=1).invoke("deploy")
    assert KEY not in doc.page_content and PASSWORD not in doc.page_content
    assert doc.page_content.count("[REDACTED") == 3  # two secrets and the stored marker
    assert _recap([doc]).metadata["redacted_secrets"] == 2


def test_a_result_is_recorded_with_its_rules_and_what_they_replaced() -> None:
    [doc] = SessionRecallRetriever(store=_store(), k=1).invoke("deploy")
    recalled = RecalledSession.from_metadata(doc.metadata)
    assert recalled is not None
    assert recalled.redacted_by == SecretRedactor().rules_id
    assert recalled.secrets_redacted == 2
    [raw] = SessionRecallRetriever(store=_store(), k=1, redact=False).invoke("deploy")
    unredacted = RecalledSession.from_metadata(raw.metadata)
    assert unredacted is not None and unredacted.redacted_by is None
    assert unredacted.secrets_redacted == 0 and KEY in raw.page_content


def test_the_summarizer_does_not_redact_a_result_of_its_rules_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    [doc] = SessionRecallRetriever(store=_store(), k=1).invoke("deploy")
    redacted: list[str] = []
    real = redaction._redact

    def spy(text: str, patterns: Any, tally: Any) -> str:
        redacted.append(text)
        return real(text, patterns, tally)

    monkeypatch.setattr(redaction, "_redact", spy)
    out = _recap([doc])
    assert out.metadata["summary_status"] == "fallback"
    assert redacted  # the spy sees the summarizer's own text (the title, the recap)
    assert not any(doc.page_content in text for text in redacted)


def test_a_changed_text_is_redacted_again() -> None:
    [doc] = SessionRecallRetriever(store=_store(), k=1).invoke("deploy")
    secret = "ghp_" + "A1b2C3d4E5" * 4
    changed = Document(page_content=f"{doc.page_content}\nmy token {secret}", metadata=doc.metadata)
    out = _recap([changed])
    assert secret not in out.page_content
    assert out.metadata["redacted_secrets"] == 3  # the search's two and this one


def test_a_result_of_other_rules_is_redacted_by_the_summarizers_too() -> None:
    codename = SecretPattern("codename", re.compile(r"\bPROJECT-[A-Z]{6}\b"), "[REDACTED:codename]")
    store = _store()
    store.add_messages("s1", [{"role": "user", "content": "deploy PROJECT-KESTRL today"}])
    [doc] = SessionRecallRetriever(store=store, k=1).invoke("deploy")
    assert "PROJECT-KESTRL" in doc.page_content
    rules = (*DEFAULT_SECRET_PATTERNS, codename)
    out = SessionSummarizer(llm=None, secret_patterns=rules).invoke([doc])[0]
    assert "PROJECT-KESTRL" not in out.page_content
    assert out.metadata["redacted_secrets"] == 3


def test_a_document_made_elsewhere_counts_what_the_summarizer_replaced() -> None:
    doc = Document(
        page_content=f"[USER #1]: my key is {KEY} (the other was [REDACTED])",
        metadata={"session_id": "x", "mode": "search", "query": "key"},
    )
    out = _recap([doc])
    assert KEY not in out.page_content
    assert out.metadata["redacted_secrets"] == 1


def test_counted_matches_redact_secrets_and_counts_nothing_twice() -> None:
    redactor = SecretRedactor()
    text = f"OPENAI_API_KEY={KEY}\nmysql --password {PASSWORD}\nplain words"
    once, found = redactor.counted(text)
    assert once == redaction.redact_secrets(text) and found == 2
    assert redactor.counted(once) == (once, 0)
    assert SecretRedactor().rules_id == redactor.rules_id
    other = SecretRedactor((*DEFAULT_SECRET_PATTERNS[:-1],))
    assert other.rules_id != redactor.rules_id
