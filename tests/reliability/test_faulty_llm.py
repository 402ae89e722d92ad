"""A faulty LLM: 429 with Retry-After, 500, timeouts, malformed JSON, empty content, connection
resets, served by the local stub in ``llm_stub.py`` (127.0.0.1 only, bounded).

Summaries degrade to the extractive fallback, retries stay within ``max_attempts``, the overall
deadline holds (the summarizer returns while the model still has requests open), and nothing
else is lost: every input Document comes back, in order, with its metadata, and no summary is
attached to the wrong session. These need no store; the one test that does (the summary cache
kept in the store) runs on both backends.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_openai import ChatOpenAI
from reliability.llm_stub import FAULTS, FaultyLLMServer
from reliability.reliability_support import count
from store_targets import StoreFactory

from langchain_session_recall import SessionRecallRetriever
from langchain_session_recall.summarize import summarizer

pytestmark = pytest.mark.allow_hosts(["127.0.0.1"])

MAX_ATTEMPTS = 3
MUST_RETRY = ("429", "500", "timeout", "reset", "empty")
TOKEN = re.compile(r"sessiontoken(\d+)x")


def documents(n: int) -> list[Document]:
    return [
        Document(
            page_content=f"[USER #{10 * i + 1}]: the deploy of sessiontoken{i}x failed\n\n"
            f"[ASSISTANT #{10 * i + 2}]: restarted the worker, the deploy went through",
            metadata={
                "session_id": f"s{i}",
                "query": "deploy",
                "mode": "search",
                "when": "2026-11-03 09:15 UTC",
                "source": "cli",
                "title": f"deploy {i}",
                "last_message_id": 10 * i + 2,
                "matched_message_ids": [10 * i + 1],
            },
        )
        for i in range(n)
    ]


def echo(body: dict[str, Any]) -> str:
    """The stub's answer names the session it was asked about, to catch cross-wiring."""
    text = " ".join(str(m.get("content")) for m in body.get("messages", []))
    found = TOKEN.search(text)
    return f"Summary of sessiontoken{found.group(1) if found else '?'}x: the worker was restarted."


def make_summarizer(server: FaultyLLMServer, **kwargs: Any) -> Any:
    llm = ChatOpenAI(
        model="stub-model",
        base_url=server.base_url,
        api_key="stub-key",
        max_retries=0,
        timeout=kwargs.pop("request_timeout", 1.0),
    )
    options: dict[str, Any] = {
        "llm": llm,
        "max_attempts": MAX_ATTEMPTS,
        "retry_initial_wait": 0.01,
        "retry_max_wait": 0.05,
        "retry_jitter": 0.0,
        "cache": False,
        "timeout": 30.0,
        **kwargs,
    }
    return summarizer.SessionSummarizer(**options)


@pytest.fixture
def record() -> Iterator[list[FaultyLLMServer]]:
    """Servers used by a test; their figures are added to the report at the end."""
    servers: list[FaultyLLMServer] = []
    yield servers
    for server in servers:
        count("llm.requests_served", server.served)
        count("llm.faults_injected", server.faults_injected)
        for fault, n in server.counts.items():
            if fault != "ok":
                count(f"llm.faults.{fault}", n)


def assert_nothing_lost(inputs: list[Document], outputs: list[Document]) -> None:
    assert [d.metadata["session_id"] for d in outputs] == [d.metadata["session_id"] for d in inputs]
    for before, after in zip(inputs, outputs, strict=True):
        for key, value in before.metadata.items():
            assert after.metadata[key] == value
        assert after.metadata["summary_status"] in ("summarized", "fallback")
        assert after.page_content.strip()
        if after.metadata["summary_status"] == "summarized":
            i = before.metadata["session_id"][1:]
            assert f"sessiontoken{i}x" in after.page_content  # its own summary, no other's
    count("llm.documents_checked", len(outputs))


@pytest.mark.parametrize("fault", [f for f in FAULTS if f != "ok"])
def test_a_persistent_fault_degrades_to_the_fallback(
    fault: str, record: list[FaultyLLMServer]
) -> None:
    docs = documents(1)
    with FaultyLLMServer(default=fault, reply=echo, max_hang=5.0) as server:
        record.append(server)
        out = make_summarizer(server, request_timeout=0.5).invoke(docs)
        served = server.served
    assert_nothing_lost(docs, out)
    assert out[0].metadata["summary_status"] == "fallback"
    assert out[0].metadata["summary_fallback_reason"] == "error"
    assert "sessiontoken0x" in out[0].page_content  # the recap quotes the transcript
    if fault in MUST_RETRY:
        assert served == MAX_ATTEMPTS
    else:
        assert 1 <= served <= MAX_ATTEMPTS


@pytest.mark.parametrize("fault", MUST_RETRY)
def test_a_transient_fault_is_retried_and_then_summarized(
    fault: str, record: list[FaultyLLMServer]
) -> None:
    docs = documents(1)
    with FaultyLLMServer([fault], reply=echo, max_hang=5.0) as server:
        record.append(server)
        out = make_summarizer(server, request_timeout=0.5).invoke(docs)
        served = server.served
    assert_nothing_lost(docs, out)
    assert out[0].metadata["summary_status"] == "summarized"
    assert served == 2


def test_a_huge_retry_after_does_not_stall_the_map(record: list[FaultyLLMServer]) -> None:
    docs = documents(2)
    with FaultyLLMServer(default="429", retry_after="3600", reply=echo) as server:
        record.append(server)
        out = make_summarizer(server, timeout=30.0).invoke(docs)
        served = server.served
    assert_nothing_lost(docs, out)
    # Waiting out Retry-After would have hit the deadline after one request per session.
    assert [d.metadata["summary_fallback_reason"] for d in out] == ["error", "error"]
    assert served == 2 * MAX_ATTEMPTS


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_deadline_holds_while_the_model_hangs(
    mode: str, record: list[FaultyLLMServer]
) -> None:
    docs = documents(4)
    with FaultyLLMServer(default="timeout", reply=echo, max_hang=20.0) as server:
        record.append(server)
        chain = make_summarizer(server, timeout=1.0, request_timeout=60.0, max_concurrency=4)
        out = chain.invoke(docs) if mode == "sync" else await chain.ainvoke(docs)
        still_open = server.in_flight  # the model has not answered: we did not wait for it
        server.release()  # let the hung requests go; the map must not retry them
        for _ in range(200):
            if server.in_flight == 0:
                break
            time.sleep(0.02)
        time.sleep(0.3)
        served = server.served
    assert still_open > 0
    assert_nothing_lost(docs, out)
    assert {d.metadata["summary_fallback_reason"] for d in out} == {"deadline"}
    assert served <= len(docs)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_random_faults_across_a_concurrent_map(
    mode: str, record: list[FaultyLLMServer]
) -> None:
    rng = random.Random(20261202 + len(mode))
    weights = {"ok": 8, "429": 2, "500": 2, "timeout": 1, "malformed": 1, "empty": 2, "reset": 2}
    names, w = list(weights), list(weights.values())

    def script(index: int, body: dict[str, Any]) -> str:
        return rng.choices(names, w)[0]

    docs = documents(16)
    with FaultyLLMServer(script, reply=echo, max_hang=5.0) as server:
        record.append(server)
        chain = make_summarizer(server, request_timeout=0.5, max_concurrency=4)
        out = chain.invoke(docs) if mode == "sync" else await chain.ainvoke(docs)
        served = server.served
    assert_nothing_lost(docs, out)
    assert served <= len(docs) * MAX_ATTEMPTS
    statuses = [d.metadata["summary_status"] for d in out]
    assert "summarized" in statuses  # most sessions get through a 40%-faulty model


def test_the_stub_is_bounded() -> None:
    import httpx

    with FaultyLLMServer(max_requests=2) as server:
        codes = [
            httpx.post(f"{server.base_url}/chat/completions", json={"model": "m"}).status_code
            for _ in range(4)
        ]
    assert codes == [200, 200, 503, 503]


def test_a_faulty_model_never_puts_a_fallback_in_the_store_cache(
    store_factory: StoreFactory, record: list[FaultyLLMServer]
) -> None:
    """The summary cache lives in the store it is given (both backends): a 40%-faulty model
    fills it with the sessions it did summarize, each under its own session, and never with a
    fallback; a fresh store object (a new process) is then served from it with no request at all, while a
    dead model gets requests only for the sessions not cached."""
    backend = store_factory.backend
    target = store_factory.target()
    with target.open() as writer:
        for i in range(8):
            writer.add_session(f"s{i}", title=f"deploy {i}", started_at=1_790_000_000.0 + i)
            writer.add_messages(
                f"s{i}",
                [
                    {"role": "user", "content": f"the deploy of sessiontoken{i}x failed"},
                    {"role": "assistant", "content": "restarted the worker, the deploy went"},
                ],
            )

    def cached_rows() -> list[tuple[Any, ...]]:
        with target.sql() as sql:
            return sql.execute("SELECT session_id, summary, status FROM summary_cache")

    rng = random.Random(4242)
    store = store_factory.open()
    docs = SessionRecallRetriever(store=store, k=5, max_k=8).invoke("deploy", k=8)
    assert len(docs) == 8
    with FaultyLLMServer(default="500", reply=echo, max_hang=5.0) as server:
        record.append(server)
        out = make_summarizer(server, request_timeout=0.5, cache=True, store=store).invoke(docs)
    assert {d.metadata["summary_status"] for d in out} == {"fallback"}
    assert cached_rows() == []  # a fallback is never cached

    dead = threading.Event()

    def flaky(index: int, body: dict[str, Any]) -> str:
        if dead.is_set():
            return "500"
        return rng.choices(["ok", "500", "timeout", "malformed", "empty"], [6, 2, 1, 1, 2])[0]

    # one endpoint for both phases: the cache keys a recap by the model's whole identity, its
    # base URL included (another endpoint serving a model of the same name is another model)
    with FaultyLLMServer(flaky, reply=echo, max_hang=5.0) as server:
        record.append(server)
        summarizer = make_summarizer(
            server, request_timeout=0.5, cache=True, max_attempts=1, store=store
        )
        out = summarizer.invoke(docs)
        summarized = {
            d.metadata["session_id"] for d in out if d.metadata["summary_status"] == "summarized"
        }
        assert summarized and len(summarized) < len(docs)  # the seed gives some of each
        rows = cached_rows()
        assert {r[0] for r in rows} == summarized and len(rows) == len(summarized)
        for sid, summary, status in rows:
            assert status == "summarized" and f"sessiontoken{sid[1:]}x" in summary

        dead.set()  # the model dies
        before = server.served
        with target.open() as fresh:
            docs = SessionRecallRetriever(store=fresh, k=5, max_k=8).invoke("deploy", k=8)
            summarizer = make_summarizer(server, request_timeout=0.5, cache=True, store=fresh)
            out = summarizer.invoke(docs)
            served = server.served - before
    statuses = {d.metadata["session_id"]: d.metadata["summary_status"] for d in out}
    assert {s for s, status in statuses.items() if status == "cached"} == summarized
    assert served == (len(docs) - len(summarized)) * MAX_ATTEMPTS
    count("llm.store_cache_rows_checked", len(rows), backend=backend)


@pytest.mark.parametrize("source", ["stub-server", "local-fake-model"])
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_huge_answer_is_cut_before_anything_checks_it(
    source: str, mode: str, record: list[FaultyLLMServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21 §10: a 60 MB answer took 316 s with ``timeout=5``: the deadline bounds the wait
    for the model, and the quality gate then read the whole answer. The answer is cut to
    ``ANSWER_CHARS`` before it is checked, so the work after the deadline is bounded. The
    answer comes from the stub HTTP server (a real OpenAI client) or from LangChain's
    ``GenericFakeChatModel`` (a local fake, no recording); no clock is asserted."""
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    checked: list[int] = []
    real_gate = summarizer.assess_recap

    def gate(text: str, **kwargs: Any) -> Any:
        checked.append(len(text))
        return real_gate(text, **kwargs)

    monkeypatch.setattr(summarizer, "assess_recap", gate)
    huge = "Redeployed sessiontoken0x after the nginx fix and checked the logs again. " * 80_000
    docs = documents(1)
    with FaultyLLMServer(default="ok", reply=lambda body: huge) as server:
        record.append(server)
        if source == "stub-server":
            chain = make_summarizer(server, timeout=60.0, request_timeout=60.0)
        else:
            model = GenericFakeChatModel(messages=iter([AIMessage(huge)]))
            chain = summarizer.SessionSummarizer(llm=model, cache=False, timeout=60.0)
        out = chain.invoke(docs) if mode == "sync" else await chain.ainvoke(docs)
    assert len(huge) > 5_000_000
    assert checked and max(checked) <= summarizer.ANSWER_CHARS
    [doc] = out
    assert doc.metadata["summary_status"] == "rejected"
    assert len(doc.metadata["summary_rejected_text"]) <= summarizer.REJECTED_TEXT_CHARS
    assert "sessiontoken0x" in doc.page_content  # the extractive recap, nothing lost
