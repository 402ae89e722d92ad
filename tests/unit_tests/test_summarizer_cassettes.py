"""SessionSummarizer against real ``ChatOpenAI`` HTTP traffic, replayed from ``cassettes/``.

Replay is strict and offline. Re-record (one command, see docs/summarizer.md):

    RECORD=1 python -m pytest tests/unit_tests/test_summarizer_cassettes.py

Failures (429, 500, 401) are recorded through ``tests/fault_proxy.py``; the deadline's slow
session is a client-side delay (an httpx request hook), so it behaves the same on replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import os
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import yaml
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_openai import ChatOpenAI

from langchain_session_recall.summarize.summarizer import SessionSummarizer
from langchain_session_recall.testing import recorded_verdicts
from langchain_session_recall.testing.cassettes import (
    CASSETTE_DIR,
    RECORDING,
    recording_settings,
    use_cassette,
)
from tests.fault_proxy import Fault, FaultProxy
from tests.summarizer_support import SECRETS, sample_documents

if TYPE_CHECKING:  # vcr loads with the first cassette, not while tests are collected
    from vcr.cassette import Cassette

pytestmark = pytest.mark.cassette

DOCKER, MIGRATE, NGINX, CI, INDEX = (
    "Docker socket permission denied",
    "Alembic migration fails on deploy",
    "TLS certificate renewal for deploy host",
    "GitHub Actions deploy job cannot push image",
    "Private package index during deploy",
)


def assert_recorded_verdicts(name: str, docs: list[Document]) -> None:
    """The verdict on each recorded answer of cassette ``name`` (``cassettes/verdicts.json``),
    checked on replay only: a re-recording brings other answers (``scripts/review_verdicts.py``
    prints them for review)."""
    if not RECORDING:
        recorded_verdicts.check(name, docs)


class CountCalls(BaseCallbackHandler):
    """Counts model calls (each attempt is one), keyed by the session title in the prompt."""

    def __init__(self) -> None:
        self.titles: list[str] = []
        self._lock = threading.Lock()

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        text = str(messages[0][-1].content)
        title = next(ln for ln in text.splitlines() if ln.startswith("Session title:"))
        with self._lock:
            self.titles.append(title.removeprefix("Session title: "))


@contextlib.contextmanager
def cassette(name: str, *, record: bool = True) -> Iterator[Cassette]:
    """Strict replay of ``cassettes/<name>.yaml.gz``; with RECORD=1 (and ``record``), re-record."""
    path = CASSETTE_DIR / f"{name}.yaml.gz"
    if RECORDING and record and path.exists():
        path.unlink()
    kwargs = {} if (RECORDING and record) else {"record_mode": "none"}
    with use_cassette(path.name, **kwargs) as cass:
        yield cass


@contextlib.contextmanager
def server(faults: list[Fault] | None = None) -> Iterator[str]:
    """Base URL to talk to: the recorded origin on replay, a fault proxy when recording."""
    settings = recording_settings()
    if not RECORDING:
        yield settings["base_url"]
        return
    with FaultProxy(settings["base_url"], faults) as proxy:
        yield proxy.base_url


def make_llm(base_url: str, **kwargs: Any) -> ChatOpenAI:
    settings = recording_settings()
    return ChatOpenAI(
        base_url=base_url,
        api_key=os.environ.get("OPENAI_API_KEY", "sk-local") if RECORDING else "sk-replay",
        model=settings["model"],
        max_retries=0,
        use_responses_api=False,
        timeout=1800,  # a local server on a busy machine queues requests for minutes
        # No socket-option probe at construction: replay must not touch a socket at all.
        http_socket_options=(),
        **kwargs,
    )


def make_summarizer(llm: ChatOpenAI, **kwargs: Any) -> SessionSummarizer:
    settings = recording_settings()
    defaults: dict[str, Any] = {
        "max_tokens_param": settings["max_tokens_param"],
        "retry_initial_wait": 0.01,
        "retry_max_wait": 0.05,
        "retry_jitter": 0.0,
        "timeout": 1800 if RECORDING else 30,
    }
    return SessionSummarizer(llm=llm, **{**defaults, **kwargs})


def by_title(docs: list[Document], titles: list[str]) -> list[Document]:
    return [d for d in docs if d.metadata["title"] in titles]


def assert_answered(doc: Document, source: Document) -> None:
    """The model answered this session, and the quality gate decided: a summary, or a rejected
    answer replaced by the extractive recap (``cassettes/verdicts.json`` says which)."""
    assert doc.metadata["summary_status"] in {"summarized", "cached", "rejected"}
    assert doc.page_content.strip()
    for key, value in source.metadata.items():
        assert doc.metadata[key] == value  # the retriever's metadata is kept
    if doc.metadata["summary_status"] == "rejected":
        assert doc.page_content.startswith("[Not summarized (model recap rejected: ")
        assert doc.metadata["summary_rejected_because"]
        assert doc.metadata["summary_rejected_text"].strip()
        return
    assert not doc.page_content.startswith("[Not summarized")
    for bad in doc.metadata["invalid_citations"]:
        assert f"#{bad}" not in doc.page_content
    # Every sentence kept carries the ids of the messages that support it.
    sentences = doc.metadata["summary_sentences"]
    assert sentences and all(s["citations"] for s in sentences), sentences
    for s in sentences:
        assert set(s["citations"]) <= set(doc.metadata["citations"])


# -- the 5-session parallel map -------------------------------------------------------------


def test_parallel_map_sync_then_cache() -> None:
    docs = sample_documents()
    calls = CountCalls()
    with server() as url, cassette("summarizer_parallel_map") as cass:
        summarizer = make_summarizer(make_llm(url), max_concurrency=5)
        first = summarizer.invoke(docs, {"callbacks": [calls]})
        recorded = len(cass.requests)
        again = summarizer.invoke(docs, {"callbacks": [calls]})
    assert [d.metadata["session_id"] for d in first] == [d.metadata["session_id"] for d in docs]
    for out, src in zip(first, docs, strict=True):
        assert_answered(out, src)
        assert out.metadata["summary_status"] in {"summarized", "rejected"}
        assert out.metadata["summary_model"] == recording_settings()["model"]
        usage = out.metadata["token_usage"]
        assert usage["input_tokens"] > 0 and usage["total_tokens"] >= usage["output_tokens"]
        assert out.metadata["redacted_secrets"] >= 1
    # The repeated search is served from the cache with no model call: a summary as "cached",
    # a rejected answer as rejected again (its verdict is cached with it), never as a summary.
    for before, after in zip(first, again, strict=True):
        if before.metadata["summary_status"] == "rejected":
            assert after.metadata["summary_status"] == "rejected"
            assert after.metadata["summary_from_cache"] is True
            assert (
                after.metadata["summary_rejected_because"]
                == (before.metadata["summary_rejected_because"])
            )
        else:
            assert after.metadata["summary_status"] == "cached"
        assert after.page_content == before.page_content
    assert_recorded_verdicts("summarizer_parallel_map", first)
    assert recorded >= 5
    assert len(calls.titles) == recorded  # the second search asked the model nothing
    if not RECORDING:
        assert cass.play_count == recorded


async def test_parallel_map_async() -> None:
    docs = sample_documents()
    with server() as url, cassette("summarizer_parallel_map", record=False) as cass:
        out = await make_summarizer(make_llm(url), cache=False).ainvoke(docs)
    for o, src in zip(out, docs, strict=True):
        assert_answered(o, src)
    assert_recorded_verdicts("summarizer_parallel_map", out)
    assert cass.play_count == len(cass.requests)


def test_requests_carry_redacted_transcripts_and_max_tokens() -> None:
    with cassette("summarizer_parallel_map", record=False) as cass:
        bodies = [r.body.decode() if isinstance(r.body, bytes) else r.body for r in cass.requests]
    assert all("[REDACTED" in b for b in bodies)
    assert all('"temperature": 0.1' in b or '"temperature":0.1' in b for b in bodies)
    if recording_settings()["max_tokens_param"] == "max_tokens":
        assert all('"max_tokens"' in b and "max_completion_tokens" not in b for b in bodies)


# -- retries ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_retryable_failures_are_retried_then_succeed(mode: str) -> None:
    docs = by_title(sample_documents(), [DOCKER, MIGRATE])
    calls = CountCalls()
    faults = [Fault(DOCKER, [429]), Fault(MIGRATE, [500])]
    with server(faults) as url, cassette("summarizer_retry", record=mode == "sync") as cass:
        summarizer = make_summarizer(make_llm(url), cache=False)
        config: Any = {"callbacks": [calls]}
        if mode == "sync":
            out = summarizer.invoke(docs, config)
        else:
            out = await summarizer.ainvoke(docs, config)
        statuses = [r["status"]["code"] for r in cass.responses]
    for o, src in zip(out, docs, strict=True):
        assert_answered(o, src)
    assert_recorded_verdicts("summarizer_retry", out)
    assert sorted(statuses) == [200, 200, 429, 500]
    assert sorted(calls.titles) == sorted([DOCKER, DOCKER, MIGRATE, MIGRATE])


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_auth_error_falls_back_without_retry_and_spares_the_others(mode: str) -> None:
    docs = by_title(sample_documents(), [DOCKER, NGINX])
    calls = CountCalls()
    faults = [Fault(DOCKER, [401, 401, 401])]
    with server(faults) as url, cassette("summarizer_auth_error", record=mode == "sync") as cass:
        summarizer = make_summarizer(make_llm(url), cache=False)
        config: Any = {"callbacks": [calls]}
        if mode == "sync":
            out = summarizer.invoke(docs, config)
        else:
            out = await summarizer.ainvoke(docs, config)
        assert cass.play_count == len(cass.requests) or RECORDING
    failed, ok = out
    assert failed.metadata["summary_status"] == "fallback"
    assert failed.metadata["summary_fallback_reason"] == "error"
    assert "AuthenticationError: Error code: 401" in failed.metadata["summary_error"]
    assert failed.page_content.startswith("[Not summarized (summarization failed)")
    assert "usermod" in failed.page_content  # an extractive recap, not an empty result
    assert_answered(ok, docs[1])
    assert_recorded_verdicts("summarizer_auth_error", [ok])
    assert calls.titles.count(DOCKER) == 1  # 401 cannot heal: no second attempt


# -- the deadline -----------------------------------------------------------------------------


def _slow_session_hook(marker: str, release: threading.Event) -> tuple[Any, Any]:
    """httpx request hooks delaying the request of one session: a model that never answers."""

    async def ahook(request: httpx.Request) -> None:
        if marker.encode() in request.content:
            await asyncio.sleep(3600)  # cancelled by the summarizer's deadline

    def hook(request: httpx.Request) -> None:
        if marker.encode() in request.content:
            release.wait(30)
            raise httpx.ConnectError("released after the test")

    return ahook, hook


@pytest.mark.parametrize("mode", ["async", "sync"])
async def test_deadline_keeps_finished_summaries(mode: str) -> None:
    docs = by_title(sample_documents(), [DOCKER, MIGRATE, CI])
    release = threading.Event()
    ahook, hook = _slow_session_hook(CI, release)
    # While recording, long enough for two real recaps from a local server on a busy machine.
    deadline = 600.0 if RECORDING and mode == "async" else 1.0  # sync replays what async recorded
    with server() as url, cassette("summarizer_deadline", record=mode == "async") as cass:
        llm = make_llm(
            url,
            http_async_client=httpx.AsyncClient(event_hooks={"request": [ahook]}, timeout=1800),
            http_client=httpx.Client(event_hooks={"request": [hook]}, timeout=1800),
        )
        summarizer = make_summarizer(llm, cache=False, timeout=deadline)
        try:
            if mode == "async":
                out = await summarizer.ainvoke(docs)
            else:
                out = summarizer.invoke(docs)
        finally:
            release.set()
        played = cass.play_count
    docker, migrate, ci = out
    assert_answered(docker, docs[0])
    assert_answered(migrate, docs[1])
    assert_recorded_verdicts("summarizer_deadline", [docker, migrate])
    assert ci.metadata["summary_status"] == "fallback"
    assert ci.metadata["summary_fallback_reason"] == "deadline"
    assert ci.page_content.startswith("[Not summarized (deadline reached)")
    assert "permissions: id-token: write" in ci.page_content
    assert RECORDING or played == 2


# -- the output budget ------------------------------------------------------------------------


def test_a_recap_cut_by_the_budget_is_rejected_with_a_notice(
    caplog: pytest.LogCaptureFixture,
) -> None:
    docs = by_title(sample_documents(), [NGINX])
    with server() as url, cassette("summarizer_budget_cut"):
        summarizer = make_summarizer(make_llm(url), cache=False, max_output_tokens=40)
        [out] = summarizer.invoke(docs)
    assert out.metadata["token_usage"]["output_tokens"] == 40  # the model used all of it
    assert out.metadata["summary_cut_off"] is True
    assert "max_output_tokens=40" in out.metadata["summary_notice"]
    assert "Raise max_output_tokens" in out.metadata["summary_notice"]
    assert any("max_output_tokens=40" in r.getMessage() for r in caplog.records)
    assert_recorded_verdicts("summarizer_budget_cut", [out])


# -- no secret ever reaches a cassette --------------------------------------------------------


def test_no_secret_in_any_cassette() -> None:
    files = sorted(CASSETTE_DIR.glob("*.yaml.gz"))
    assert files, "no cassettes found"
    api_key = os.environ.get("OPENAI_API_KEY")
    for path in files:
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
        for secret in [*SECRETS, "sk-local", *([api_key] if api_key else [])]:
            assert secret not in text, f"{secret[:6]}... leaked into {path.name}"
        data = yaml.safe_load(text)
        for request in data["requests"]:
            names = {name.lower() for name in request["headers"]}
            assert not names & {"authorization", "api-key", "x-api-key", "openai-organization"}
        for response in data["responses"]:
            names = {name.lower() for name in response.get("headers", {})}
            assert not names & {"set-cookie", "openai-organization"}
