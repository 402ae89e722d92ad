"""Issue 23 §4: what a LangChain user expects of a retriever's Documents."""

from __future__ import annotations

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.recall.transcript import EARLIER_MARKER, LATER_MARKER


def _long_session(store: SessionStore) -> None:
    store.add_session("long", started_at=1000.0)
    messages = [{"role": "user", "content": "kafka broker restarted, as planned"}]
    messages += [
        {"role": "assistant", "content": f"log line {n}: nothing of note here at all " * 3}
        for n in range(400)
    ]
    messages += [
        {"role": "user", "content": f"kafka lag fixed by raising partitions, try {n}"}
        for n in range(5)
    ]
    messages += [{"role": "assistant", "content": f"tail line {n} " * 5} for n in range(200)]
    store.add_messages("long", messages)


def test_a_document_id_is_its_session_id(demo_store: SessionStore) -> None:
    retriever = SessionRecallRetriever(store=demo_store)
    for docs in (retriever.invoke("how did we fix the CORS error?"), retriever.invoke("")):
        assert docs and all(d.id == d.metadata["session_id"] for d in docs)


def test_the_default_window_fits_a_prompt_and_is_centred_on_the_matches() -> None:
    store = SessionStore(":memory:")
    _long_session(store)
    [doc] = SessionRecallRetriever(store=store).invoke("kafka lag partitions")
    body = doc.page_content
    assert len(body) <= 8_000 + len(EARLIER_MARKER) + len(LATER_MARKER)
    assert body.startswith(EARLIER_MARKER) and body.endswith(LATER_MARKER)
    assert doc.metadata["truncated"] is True
    # the five messages that match together, not the lone first mention
    assert all(f"raising partitions, try {n}" in body for n in range(5))


def test_the_whole_transcript_on_request() -> None:
    store = SessionStore(":memory:")
    _long_session(store)
    [doc] = SessionRecallRetriever(store=store, max_chars=None).invoke("kafka lag partitions")
    assert doc.metadata["truncated"] is False
    assert EARLIER_MARKER not in doc.page_content and "tail line 199" in doc.page_content
    assert doc.page_content.startswith("[USER]: kafka broker restarted")
