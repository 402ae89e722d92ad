"""SessionSummarizer behaviour with a scripted chat model (no network, no cassettes)."""

from __future__ import annotations

import asyncio
import threading
import warnings
from typing import Any

import openai
import pytest
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from langchain_openai import ChatOpenAI

from langchain_session_recall import SessionStore
from langchain_session_recall.chain import create_session_recall_chain
from langchain_session_recall.summarize.cache import InMemorySummaryCache
from langchain_session_recall.summarize.prompts import PROMPT_VERSION
from langchain_session_recall.summarize.retry import EmptySummaryError
from langchain_session_recall.summarize.summarizer import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    SessionSummarizer,
)
from tests.summarizer_support import (
    SECRETS,
    ScriptedChatModel,
    api_error,
    echo_summary,
    recap_of,
    sample_documents,
    without_citations,
)

FAST_RETRY: dict[str, Any] = {"retry_initial_wait": 0.0, "retry_max_wait": 0.0, "retry_jitter": 0}


def openai_llm(**kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(api_key="sk-test", model="m", http_socket_options=(), **kwargs)


def summarizer(llm: Any, **kwargs: Any) -> SessionSummarizer:
    return SessionSummarizer(llm=llm, **{**FAST_RETRY, **kwargs})


def failing_for(title: str, exc: BaseException, times: int = 10**6) -> Any:
    """Script: raise ``exc`` for the session titled ``title`` (``times`` times), else echo."""
    seen = {"n": 0}
    lock = threading.Lock()

    def script(messages: list[BaseMessage], n: int) -> str | BaseException:
        if f"Session title: {title}" in str(messages[-1].content):
            with lock:
                seen["n"] += 1
                if seen["n"] <= times:
                    return exc
        return echo_summary(messages, n)

    return script


async def run(s: SessionSummarizer, docs: Any, mode: str) -> list[Document]:
    return s.invoke(docs) if mode == "sync" else await s.ainvoke(docs)


MODES = pytest.mark.parametrize("mode", ["sync", "async"])
DOCKER = "Docker socket permission denied"


# -- shape of the output --------------------------------------------------------------------


@MODES
async def test_one_summary_per_session_in_order_with_metadata_kept(mode: str) -> None:
    docs = sample_documents()
    out = await run(summarizer(ScriptedChatModel(script=echo_summary)), docs, mode)
    assert len(out) == len(docs)
    for o, d in zip(out, docs, strict=True):
        # The recap as the model wrote it, each sentence followed by the messages supporting it.
        assert without_citations(o.page_content) == recap_of(d.metadata["title"])
        assert o.page_content != recap_of(d.metadata["title"])
        assert {k: o.metadata[k] for k in d.metadata} == d.metadata
        assert o.metadata["summary_status"] == "summarized"
        assert o.metadata["summary_model"] == "ScriptedChatModel"
        assert o.metadata["token_usage"] == {
            "input_tokens": 100,
            "output_tokens": 20,
            "total_tokens": 120,
        }


def test_prompt_carries_topic_metadata_transcript_and_the_five_points() -> None:
    llm = ScriptedChatModel(script=echo_summary)
    summarizer(llm).invoke(sample_documents("alembic")[1:2])
    [prompt] = llm.calls
    for needle in [
        "What the user asked about or wanted to accomplish",
        "What actions were taken and what the outcomes were",
        "Key decisions, solutions found, or conclusions reached",
        "Any specific commands, files, URLs, or technical details",
        "Anything left unresolved or notable",
        "past tense",
        "Search topic: alembic",
        "Session source: cli",
        "Session date: April 20, 2026 at 02:40 PM",
        "[ASSISTANT #213]: The table was created by hand",
        "cite the id(s)",
    ]:
        assert needle in prompt


def test_temperature_and_max_tokens_are_bound() -> None:
    llm = ScriptedChatModel(script=echo_summary)
    summarizer(llm, max_output_tokens=321).invoke(sample_documents()[:1])
    assert llm.call_kwargs[0]["temperature"] == 0.1
    assert llm.call_kwargs[0]["max_tokens"] == 321


def test_max_tokens_param_sends_a_literal_max_tokens_for_openai_compatible_servers() -> None:
    llm = openai_llm(max_retries=0, extra_body={"top_k": 5})
    chain = summarizer(llm, max_tokens_param="max_tokens")._session_chain(threading.Event())
    prompt_vars = dict.fromkeys(chain.input_schema.model_json_schema()["properties"], "x")
    payloads: list[dict[str, Any]] = []
    original = ChatOpenAI._get_request_payload

    def spy(self: ChatOpenAI, input_: Any, **kwargs: Any) -> dict[str, Any]:
        payload = original(self, input_, **kwargs)
        payloads.append(payload)
        raise RuntimeError("stop before the network")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ChatOpenAI, "_get_request_payload", spy)
        with pytest.raises(RuntimeError):
            chain.invoke(prompt_vars)
    assert payloads[0]["extra_body"] == {"top_k": 5, "max_tokens": DEFAULT_MAX_OUTPUT_TOKENS}
    assert "max_completion_tokens" not in payloads[0]
    assert payloads[0]["temperature"] == 0.1


def test_no_citation_instruction_or_check_without_message_ids() -> None:
    llm = ScriptedChatModel(
        script=lambda m, n: "Added dev to the docker group with `sudo usermod -aG docker dev` [#3]."
    )
    [out] = summarizer(llm).invoke(sample_documents(with_ids=False)[:1])
    assert "cite the id" not in llm.calls[0]
    assert "citations" not in out.metadata
    assert (
        out.page_content == "Added dev to the docker group with `sudo usermod -aG docker dev` [#3]."
    )


@pytest.mark.parametrize("policy", ["remove", "flag"])
def test_invented_citations_are_removed_or_flagged(policy: str) -> None:
    llm = ScriptedChatModel(
        script=lambda m, n: (
            "Fixed the group with `usermod -aG docker dev` [#104]. "
            "It works after a re-login [#999]."
        )
    )
    [out] = summarizer(llm, invalid_citations=policy).invoke(sample_documents()[:1])
    assert out.metadata["citations"] == [104, 105]  # #105 found by the library for the 2nd
    assert out.metadata["invalid_citations"] == [999]
    assert ("#999" in out.page_content) is (policy == "flag")
    assert "[#104]" in out.page_content


def test_custom_prompt_with_a_subset_of_variables() -> None:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Be brief."), ("human", "Topic {query}\n{transcript}")]
    )
    llm = ScriptedChatModel(
        script=lambda m, n: "Added dev to the docker group with `sudo usermod -aG docker dev`."
    )
    [out] = summarizer(llm, prompt=prompt).invoke(sample_documents()[:1])
    assert llm.calls[0].startswith("Be brief.\nTopic deploy\n[USER #101]")
    assert out.page_content == (
        "Added dev to the docker group with `sudo usermod -aG docker dev` [#104]."
    )


# -- LCEL -------------------------------------------------------------------------------------


def fake_retriever() -> Any:
    return RunnableLambda(lambda q: sample_documents(q), name="fake_retriever")


def test_retriever_pipe_summarizer_in_lcel() -> None:
    llm = ScriptedChatModel(script=echo_summary)
    chain = fake_retriever() | summarizer(llm)
    out = chain.invoke("deploy")
    assert [d.metadata["summary_status"] for d in out] == ["summarized"] * 5


async def test_create_session_recall_chain_takes_the_query_string() -> None:
    llm = ScriptedChatModel(script=echo_summary)
    chain = create_session_recall_chain(fake_retriever(), llm, **FAST_RETRY)
    out = await chain.ainvoke("alembic")
    assert len(out) == 5
    assert all("Search topic: alembic" in c for c in llm.calls)
    assert chain.invoke("alembic")[0].metadata["summary_status"] == "cached"


def test_query_from_the_input_overrides_the_metadata() -> None:
    llm = ScriptedChatModel(script=echo_summary)
    docs = sample_documents()
    summarizer(llm).invoke({"documents": docs[:1], "query": "usermod"})
    assert "Search topic: usermod" in llm.calls[0]


def test_recent_mode_documents_pass_through_without_a_model_call() -> None:
    recent = Document("preview text", metadata={"session_id": "s9", "mode": "recent"})
    llm = ScriptedChatModel(script=echo_summary)
    assert summarizer(llm).invoke([recent]) == [recent]
    assert llm.calls == []


def test_rejects_non_documents() -> None:
    with pytest.raises(TypeError, match="Documents"):
        summarizer(ScriptedChatModel(script=echo_summary)).invoke(["text"])


def test_sync_invoke_works_inside_a_running_event_loop() -> None:
    # Jupyter runs a loop in the main thread; the sync path must not need asyncio.run().
    async def main() -> list[Document]:
        return summarizer(ScriptedChatModel(script=echo_summary)).invoke(sample_documents())

    out = asyncio.run(main())
    assert [d.metadata["summary_status"] for d in out] == ["summarized"] * 5


# -- parallel map -----------------------------------------------------------------------------


@MODES
@pytest.mark.parametrize("limit", [1, 2, 5])
async def test_max_concurrency_bounds_the_map(mode: str, limit: int) -> None:
    # Calls wait until `limit` are active at once: a lower concurrency would leave them
    # waiting out the 5 s hold and max_active short of limit; a higher one would exceed it.
    llm = ScriptedChatModel(script=echo_summary, latency=0.02, wait_for_active=limit)
    out = await run(summarizer(llm, max_concurrency=limit), sample_documents(), mode)
    assert len(out) == 5
    assert llm.max_active == limit


# -- retries ----------------------------------------------------------------------------------

RETRYABLE = [
    api_error(openai.RateLimitError, 429),
    api_error(openai.InternalServerError, 500),
    api_error(openai.InternalServerError, 503),
    openai.APITimeoutError(request=api_error(openai.RateLimitError, 429).request),  # type: ignore[attr-defined]
    openai.APIConnectionError(request=api_error(openai.RateLimitError, 429).request),  # type: ignore[attr-defined]
    TimeoutError("read timed out"),
    EmptySummaryError("empty"),
]
FATAL = [
    api_error(openai.AuthenticationError, 401),
    api_error(openai.PermissionDeniedError, 403),
    api_error(openai.NotFoundError, 404),
    api_error(openai.BadRequestError, 400),
    ValueError("No model configured"),
]


@MODES
@pytest.mark.parametrize("exc", RETRYABLE, ids=lambda e: type(e).__name__)
async def test_retryable_failure_then_success(mode: str, exc: BaseException) -> None:
    llm = ScriptedChatModel(script=failing_for(DOCKER, exc, times=1))
    out = await run(summarizer(llm), sample_documents()[:1], mode)
    assert out[0].metadata["summary_status"] == "summarized"
    assert len(llm.calls) == 2


@MODES
@pytest.mark.parametrize("exc", FATAL, ids=lambda e: type(e).__name__)
async def test_unhealable_failure_is_not_retried(mode: str, exc: BaseException) -> None:
    llm = ScriptedChatModel(script=failing_for(DOCKER, exc))
    [out] = await run(summarizer(llm), sample_documents()[:1], mode)
    assert len(llm.calls) == 1
    assert out.metadata["summary_status"] == "fallback"
    assert out.metadata["summary_fallback_reason"] == "error"
    assert out.metadata["summary_error"].startswith(type(exc).__name__)


@MODES
async def test_gives_up_after_max_attempts(mode: str) -> None:
    llm = ScriptedChatModel(script=failing_for(DOCKER, api_error(openai.RateLimitError, 429)))
    [out] = await run(summarizer(llm, max_attempts=3), sample_documents()[:1], mode)
    assert len(llm.calls) == 3
    assert out.metadata["summary_status"] == "fallback"


def test_backoff_increases_between_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr("time.sleep", lambda seconds: slept.append(seconds))
    llm = ScriptedChatModel(script=failing_for(DOCKER, api_error(openai.RateLimitError, 429)))
    s = SessionSummarizer(
        llm=llm, retry_initial_wait=1.0, retry_max_wait=8.0, retry_jitter=0, timeout=None
    )
    s.invoke(sample_documents()[:1])
    assert len(llm.calls) == 3
    assert [x for x in slept if x > 0] == [1.0, 2.0]


def test_empty_model_answer_is_retried() -> None:
    answer = "Second try: `sudo usermod -aG docker dev` fixed the socket permissions."
    llm = ScriptedChatModel(script=lambda m, n: "" if n == 1 else answer)
    [out] = summarizer(llm).invoke(sample_documents()[:1])
    assert out.page_content == answer.replace("permissions.", "permissions [#101, #104].")


def test_sdk_retries_multiplying_ours_are_warned_about() -> None:
    with pytest.warns(UserWarning, match="max_retries=None"):
        SessionSummarizer(llm=openai_llm())
    with pytest.warns(UserWarning, match=r"max_retries=2\).*up to 3 x 3 requests"):
        SessionSummarizer(llm=openai_llm(max_retries=2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SessionSummarizer(llm=openai_llm(max_retries=0))
        SessionSummarizer(llm=openai_llm(), max_attempts=1)


# -- isolation and fallback -------------------------------------------------------------------


@MODES
async def test_one_failure_never_loses_the_other_summaries(mode: str) -> None:
    llm = ScriptedChatModel(script=failing_for(DOCKER, RuntimeError("boom")))
    out = await run(summarizer(llm), sample_documents(), mode)
    assert [d.metadata["summary_status"] for d in out] == ["fallback"] + ["summarized"] * 4
    assert "usermod" in out[0].page_content


@MODES
async def test_no_model_gives_labelled_extractive_recaps(mode: str) -> None:
    out = await run(SessionSummarizer(llm=None), sample_documents(), mode)
    for d in out:
        assert d.metadata["summary_status"] == "fallback"
        assert d.metadata["summary_fallback_reason"] == "no_model"
        assert d.page_content.startswith("[Not summarized (no model configured)")
        assert d.metadata["session_id"] in d.page_content
        assert len(d.page_content) > 200


# -- deadline ---------------------------------------------------------------------------------


@MODES
async def test_deadline_keeps_finished_and_falls_back_for_the_rest(mode: str) -> None:
    gate = threading.Event()
    llm = ScriptedChatModel(script=echo_summary, gate=gate, gate_marker=DOCKER)
    s = summarizer(llm, timeout=0.5)
    try:
        out = await run(s, sample_documents(), mode)
    finally:
        gate.set()
    assert out[0].metadata["summary_status"] == "fallback"
    assert out[0].metadata["summary_fallback_reason"] == "deadline"
    assert out[0].page_content.startswith("[Not summarized (deadline reached)")
    assert [d.metadata["summary_status"] for d in out[1:]] == ["summarized"] * 4


# -- cache ------------------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Any) -> Any:
    """A store file holding the five sample sessions' ids (their summaries go in its cache)."""
    with SessionStore(tmp_path / "recall.db") as s:
        for doc in sample_documents():
            s.add_session(doc.metadata["session_id"])
        yield s


def _cached_rows(path: Any) -> list[tuple[str, str]]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT session_id, status FROM summary_cache").fetchall()


def test_cache_in_the_store_makes_a_repeat_free(store: SessionStore) -> None:
    llm = ScriptedChatModel(script=echo_summary)
    first = summarizer(llm, store=store).invoke(sample_documents())
    # A different summarizer instance over the same store: still no model call.
    again = summarizer(llm, store=store).invoke(sample_documents())
    assert len(llm.calls) == 5
    rows = _cached_rows(store.path)
    assert sorted(r[0] for r in rows) == sorted(d.metadata["session_id"] for d in first)
    assert [d.metadata["summary_status"] for d in again] == ["cached"] * 5
    assert [d.page_content for d in again] == [d.page_content for d in first]


def test_the_store_cache_is_used_only_when_given(store: SessionStore) -> None:
    """No process-wide registry: a Document naming a store by ``store_id`` does not make the
    summarizer write into that store; ``store=`` does."""
    summarizer(ScriptedChatModel(script=echo_summary)).invoke(
        sample_documents(store_id=store.store_id)
    )
    assert _cached_rows(store.path) == []
    summarizer(ScriptedChatModel(script=echo_summary), store=store).invoke(
        sample_documents(store_id=store.store_id)
    )
    assert len(_cached_rows(store.path)) == 5


def test_read_only_store_keeps_the_cache_in_memory(store: SessionStore) -> None:
    reader = SessionStore(store.path, read_only=True)
    llm = ScriptedChatModel(script=echo_summary)
    s = summarizer(llm, store=reader)
    s.invoke(sample_documents())
    again = s.invoke(sample_documents())
    assert _cached_rows(store.path) == []
    assert len(llm.calls) == 5
    assert [d.metadata["summary_status"] for d in again] == ["cached"] * 5


def test_read_only_store_can_use_a_side_file(store: SessionStore, tmp_path: Any) -> None:
    reader = SessionStore(store.path, read_only=True)
    llm = ScriptedChatModel(script=echo_summary)
    path = tmp_path / "summaries.json"
    summarizer(llm, store=reader, cache_path=str(path)).invoke(sample_documents())
    again = summarizer(llm, store=reader, cache_path=str(path)).invoke(sample_documents())
    assert path.exists() and _cached_rows(store.path) == []
    assert [d.metadata["summary_status"] for d in again] == ["cached"] * 5


def test_new_messages_invalidate_and_query_is_normalized() -> None:
    llm = ScriptedChatModel(script=echo_summary)
    s = summarizer(llm)
    docs = sample_documents("Deploy")
    s.invoke(docs[:1])
    s.invoke({"documents": docs[:1], "query": "  deploy "})  # same normalized query: cached
    assert len(llm.calls) == 1
    grown = Document(docs[0].page_content + "\n\n[USER #106]: and again", metadata={
        **docs[0].metadata, "last_message_id": 106})  # fmt: skip
    [out] = s.invoke([grown])
    assert out.metadata["summary_status"] == "summarized"
    assert len(llm.calls) == 2


def test_cache_key_includes_model_and_prompt_version() -> None:
    cache = InMemorySummaryCache()
    docs = sample_documents()[:1]
    summarizer(ScriptedChatModel(script=echo_summary), cache=cache).invoke(docs)
    other_prompt = ChatPromptTemplate.from_messages([("human", "{transcript}")])
    llm = ScriptedChatModel(script=echo_summary)
    summarizer(llm, cache=cache, prompt=other_prompt).invoke(docs)
    assert len(llm.calls) == 1 and len(cache) == 2
    assert PROMPT_VERSION


def test_cache_off_switch() -> None:
    llm = ScriptedChatModel(script=echo_summary)
    s = summarizer(llm, cache=False)
    s.invoke(sample_documents()[:1])
    s.invoke(sample_documents()[:1])
    assert len(llm.calls) == 2


def test_a_broken_cache_never_costs_the_summary() -> None:
    class Broken:
        def get(self, key: str) -> str | None:
            raise OSError("disk gone")

        def put(self, key: str, summary: str, *, session_id: str, model: str | None) -> None:
            raise OSError("disk gone")

    [out] = summarizer(ScriptedChatModel(script=echo_summary), cache=Broken()).invoke(
        sample_documents()[:1]
    )
    assert out.metadata["summary_status"] == "summarized"


def test_failures_are_not_cached() -> None:
    llm = ScriptedChatModel(script=failing_for(DOCKER, RuntimeError("boom"), times=1))
    s = summarizer(llm)
    assert s.invoke(sample_documents()[:1])[0].metadata["summary_status"] == "fallback"
    assert s.invoke(sample_documents()[:1])[0].metadata["summary_status"] == "summarized"


# -- secrets ----------------------------------------------------------------------------------


@MODES
async def test_no_secret_leaves_the_process(mode: str) -> None:
    llm = ScriptedChatModel(script=echo_summary)
    out = await run(summarizer(llm), sample_documents(), mode)
    sent = "\n".join(llm.calls)
    for secret in SECRETS:
        assert secret not in sent
    assert sum(d.metadata["redacted_secrets"] for d in out) >= len(SECRETS)


def test_fallback_text_and_error_are_redacted_too() -> None:
    err = RuntimeError(f"upstream said: bad key {SECRETS[0]}")
    llm = ScriptedChatModel(script=failing_for(DOCKER, err))
    [out] = summarizer(llm).invoke(sample_documents()[:1])
    assert SECRETS[0] not in out.page_content + out.metadata["summary_error"]


def test_redaction_can_be_switched_off() -> None:
    llm = ScriptedChatModel(script=echo_summary)
    summarizer(llm, redact=False).invoke(sample_documents()[:1])
    assert SECRETS[0] in llm.calls[0]


@MODES
async def test_no_documents_no_calls(mode: str) -> None:
    llm = ScriptedChatModel(script=echo_summary)
    assert await run(summarizer(llm), [], mode) == []
    assert llm.calls == []


class NamedModel(ScriptedChatModel):
    """A model that, like ChatOpenAI, is known by a name and configured by its fields."""

    model_name: str = "m"
    base_url: str = ""
    temperature: float = 0.0

    @classmethod
    def is_lc_serializable(cls) -> bool:
        return True


def test_the_cache_tells_apart_two_models_of_the_same_name() -> None:
    # "m" served locally and "m" served elsewhere, or sampled hotter, write different recaps:
    # the cache keys a recap by the model's whole identity, as LangChain's own caches do
    cache = InMemorySummaryCache()
    docs = sample_documents()[:1]
    local = "http://127.0.0.1:8080/v1"
    first = summarizer(NamedModel(script=echo_summary, base_url=local), cache=cache).invoke(docs)
    assert first[0].metadata["summary_status"] == "summarized"
    for other in (
        NamedModel(script=echo_summary, base_url="https://models.example.com/v1"),
        NamedModel(script=echo_summary, base_url=local, temperature=0.9),
        ScriptedChatModel(script=echo_summary),  # another class
    ):
        [out] = summarizer(other, cache=cache).invoke(docs)
        assert out.metadata["summary_status"] == "summarized", other
        assert len(other.calls) == 1
    same = NamedModel(script=echo_summary, base_url=local)  # the first model, another instance
    [again] = summarizer(same, cache=cache).invoke(docs)
    assert again.metadata["summary_status"] == "cached" and same.calls == []
    bound = summarizer(same.bind(temperature=0.5), cache=cache).invoke(docs)  # bound arguments
    assert bound[0].metadata["summary_status"] == "summarized"
