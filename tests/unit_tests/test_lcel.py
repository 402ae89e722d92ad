"""LCEL recipes from docs/lcel.md, on the demo sessions, with real model traffic from cassettes.

Re-record against a live OpenAI-compatible server (see docs/summarizer.md):

    RECORD=1 python -m pytest tests/unit_tests/test_lcel.py
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_openai import ChatOpenAI

from langchain_session_recall import (
    SessionRecallRetriever,
    SessionStore,
    SessionSummarizer,
    create_session_recall_chain,
)
from langchain_session_recall.testing import recorded_verdicts
from langchain_session_recall.testing.cassettes import (
    CASSETTE_DIR,
    RECORDING,
    cassette_chat_model,
    recording_settings,
    use_cassette,
)

if TYPE_CHECKING:  # vcr loads with the first cassette, not while tests are collected
    from vcr.cassette import Cassette

pytestmark = pytest.mark.cassette

RECALL_PROMPT_ANSWER = "We settled on GraphQL."
"""The recorded final answer of ``test_recall_feeding_a_prompt`` (read in the cassette after
each re-recording). Wrong: the session settled on REST. The recap was rejected (an echo), the
prompt got the extractive recap, and Qwen2.5-Coder-1.5B misread it."""


@contextlib.contextmanager
def cassette(name: str) -> Iterator[Cassette]:
    path = CASSETTE_DIR / f"{name}.yaml.gz"
    if RECORDING and path.exists():
        path.unlink()
    with use_cassette(path.name, **({} if RECORDING else {"record_mode": "none"})) as cass:
        yield cass


def _llm() -> ChatOpenAI:
    # The final answers of the recipes: a few sentences (sent as max_tokens by llama.cpp-style
    # servers through extra_body, the way the summarizer sends its own budget).
    settings = recording_settings()
    if settings["max_tokens_param"] == "max_tokens":
        chat: ChatOpenAI = cassette_chat_model(temperature=0.1, extra_body={"max_tokens": 256})
    else:
        chat = cassette_chat_model(temperature=0.1, max_tokens=256)
    return chat


def _summarizer(llm: ChatOpenAI) -> SessionSummarizer:
    # The default output budget: the recorded recaps show that it lets them finish.
    return SessionSummarizer(
        llm=llm,
        max_tokens_param=recording_settings()["max_tokens_param"],
        cache=False,
        timeout=900 if RECORDING else 30,
    )


def _check(cassette: str, docs: list[Document]) -> None:
    """The recorded verdicts, and every sentence of an accepted recap cited."""
    if not RECORDING:
        recorded_verdicts.check(cassette, docs)
    for doc in docs:
        if doc.metadata["summary_status"] == "summarized":
            sentences = doc.metadata["summary_sentences"]
            assert sentences and all(s["citations"] for s in sentences), sentences


def test_retriever_pipe_summarizer(demo_store: SessionStore) -> None:
    retriever = SessionRecallRetriever(store=demo_store, k=2, show_message_ids=True)
    chain = retriever | _summarizer(_llm())
    with cassette("lcel_retriever_pipe_summarizer"):
        docs = chain.invoke("how did we fix the CORS error?")
    assert docs[0].metadata["session_id"] == "20261103_091512_a1b2c3"
    assert all(d.metadata["token_usage"]["total_tokens"] > 0 for d in docs)
    _check("lcel_retriever_pipe_summarizer", docs)


def test_recall_feeding_a_prompt(demo_store: SessionStore) -> None:
    llm = _llm()
    recall = create_session_recall_chain(
        SessionRecallRetriever(store=demo_store, k=1),
        llm,
        max_tokens_param=recording_settings()["max_tokens_param"],
        cache=False,
        timeout=900 if RECORDING else 30,
    )
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer using what happened in past sessions:\n{recall}"),
            ("human", "{question}"),
        ]
    )
    seen: list[Document] = []

    def as_text(docs: list[Document]) -> str:
        seen.extend(docs)
        return "\n\n".join(d.page_content for d in docs)

    chain = (
        {"recall": recall | as_text, "question": RunnablePassthrough()}
        | prompt
        | llm
        | StrOutputParser()
    )
    with cassette("lcel_recall_prompt") as cass:
        answer = chain.invoke("Which API design did we settle on?")
    [recap] = seen
    assert recap.metadata["title"] == "API design for v2: REST vs GraphQL"
    # The prompt gets the recap the summarizer serves: for a rejected answer, the extractive one.
    final_request = json.loads(cass.requests[-1].body)
    assert recap.page_content in final_request["messages"][0]["content"]
    assert isinstance(answer, str) and answer.strip()
    _check("lcel_recall_prompt", seen)
    if not RECORDING:
        assert RECALL_PROMPT_ANSWER in answer


def test_batch_over_queries(demo_store: SessionStore) -> None:
    chain = SessionRecallRetriever(store=demo_store, k=1, show_message_ids=True) | _summarizer(
        _llm()
    )
    with cassette("lcel_batch"):
        results = chain.batch(["pgbouncer", "rename photos"], config={"max_concurrency": 1})
    assert [r[0].metadata["session_id"] for r in results] == [
        "20261105_112048_f00d42",
        "20261027_164530_b7e3a9",
    ]
    _check("lcel_batch", [d for r in results for d in r])


async def test_astream_events_show_named_steps(demo_store: SessionStore) -> None:
    chain = create_session_recall_chain(SessionRecallRetriever(store=demo_store, k=1), None)
    names: list[tuple[str, str]] = []
    async for event in chain.astream_events("pgbouncer", version="v2"):
        names.append((event["event"], event["name"]))
    assert ("on_chain_start", "session_recall") in names
    assert ("on_retriever_end", "SessionRecallRetriever") in names
    assert ("on_chain_end", "SessionSummarizer") in names
    end = [e for e in names if e == ("on_chain_end", "session_recall")]
    assert len(end) == 1


def test_recent_mode_passes_through_the_summarizer(demo_store: SessionStore) -> None:
    chain = SessionRecallRetriever(store=demo_store) | SessionSummarizer(llm=_llm())
    docs: Any = chain.invoke("")  # no cassette: browsing must make no model call at all
    assert docs and all(d.metadata["mode"] == "recent" for d in docs)


def test_current_session_from_config_reaches_the_retriever(demo_store: SessionStore) -> None:
    chain = create_session_recall_chain(SessionRecallRetriever(store=demo_store), None)
    found = chain.invoke("pgcrypto")
    assert [d.metadata["session_id"] for d in found] == ["20261114_100027_d1a9e0"]
    config: Any = {"configurable": {"session_id": "20261114_104640_c07a1e"}}  # the continuation
    assert chain.invoke("pgcrypto", config=config) == []
