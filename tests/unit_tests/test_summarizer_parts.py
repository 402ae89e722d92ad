"""The summarizer's pure parts: citation check, cache keys and caches, retry classifier."""

from __future__ import annotations

from pathlib import Path

import httpx
import openai
import pytest
from langchain_core.prompts import ChatPromptTemplate

from langchain_session_recall import SessionStore, SessionSummarizer
from langchain_session_recall.models import CachedSummary
from langchain_session_recall.summarize.cache import (
    InMemorySummaryCache,
    JsonFileSummaryCache,
    StoreSummaryCache,
    SummaryCache,
    normalize_query,
    summary_cache_key,
)
from langchain_session_recall.summarize.grounding import check_citations
from langchain_session_recall.summarize.prompts import (
    DEFAULT_SUMMARY_PROMPT,
    PROMPT_VERSION,
    SUMMARY_SYSTEM_PROMPT,
    SUMMARY_USER_PROMPT,
    prompt_fingerprint,
)
from langchain_session_recall.summarize.retry import EmptySummaryError, is_retryable
from tests.summarizer_support import api_error

# -- grounding --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("summary", "text", "valid", "invalid"),
    [
        ("Ran it [#4].", "Ran it [#4].", [4], []),
        ("Ran it [#4, #9].", "Ran it [#4].", [4], [9]),
        ("Ran it [#9]. Done.", "Ran it. Done.", [], [9]),
        ("Ran it (#5; #4).", "Ran it (#5; #4).", [4, 5], []),
        ("[USER #9]: hallucinated turn", ": hallucinated turn", [], [9]),
        ("Issue #9 is unrelated.", "Issue #9 is unrelated.", [], []),
        ("No citations.", "No citations.", [], []),
    ],
)
def test_citations_are_checked_against_the_transcript(
    summary: str, text: str, valid: list[int], invalid: list[int]
) -> None:
    result = check_citations(summary, {4, 5})
    assert (result.text, result.valid, result.invalid) == (text, valid, invalid)


def test_flag_mode_keeps_the_text() -> None:
    result = check_citations("Ran it [#4, #9].", {4}, remove_invalid=False)
    assert result.text == "Ran it [#4, #9]."
    assert result.invalid == [9]


# -- cache ------------------------------------------------------------------------------------


def key(**overrides: object) -> str:
    args: dict[str, object] = {
        "session_id": "s1",
        "last_message_id": 7,
        "transcript": "t",
        "query": "docker",
        "model": "m",
        "prompt_version": PROMPT_VERSION,
    }
    args.update(overrides)
    return summary_cache_key(**args)  # type: ignore[arg-type]


def test_cache_key_parts() -> None:
    assert key() == key(query="  DOCKER ")
    for change in [
        {"session_id": "s2"},
        {"last_message_id": 8},
        # what the model read: a chain that lost a sub-session keeps its last message id
        {"transcript": "other text"},
        {"query": "nginx"},
        {"model": "m2"},
        {"prompt_version": "v2"},
    ]:
        assert key(**change) != key()
    no_id = key(last_message_id=None)
    assert no_id != key(last_message_id=None, transcript="grown")
    assert normalize_query("A\tB  c") == "a b c"


def test_prompt_fingerprint_changes_with_a_custom_prompt() -> None:
    assert prompt_fingerprint(DEFAULT_SUMMARY_PROMPT) == PROMPT_VERSION
    a = ChatPromptTemplate.from_messages([("human", "A {transcript}")])
    b = ChatPromptTemplate.from_messages([("human", "B {transcript}")])
    assert prompt_fingerprint(a) != prompt_fingerprint(b)
    assert prompt_fingerprint(a).startswith(PROMPT_VERSION)


def test_prompt_fingerprint_compares_prompts_by_value() -> None:
    # The summarizer's field holds a pydantic copy of the default prompt, not the object itself.
    default = SessionSummarizer(llm=None).prompt
    assert default is not DEFAULT_SUMMARY_PROMPT
    assert prompt_fingerprint(default) == PROMPT_VERSION
    rebuilt = ChatPromptTemplate.from_messages(
        [("system", SUMMARY_SYSTEM_PROMPT), ("human", SUMMARY_USER_PROMPT)]
    )
    assert prompt_fingerprint(SessionSummarizer(llm=None, prompt=rebuilt).prompt) == PROMPT_VERSION
    edited = ChatPromptTemplate.from_messages(
        [("system", SUMMARY_SYSTEM_PROMPT + " Be brief."), ("human", SUMMARY_USER_PROMPT)]
    )
    assert prompt_fingerprint(SessionSummarizer(llm=None, prompt=edited).prompt) != PROMPT_VERSION


def test_caches_share_one_protocol(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "recall.db")
    store.add_session("s1")
    caches: list[SummaryCache] = [
        InMemorySummaryCache(),
        JsonFileSummaryCache(tmp_path / "side.json"),
        StoreSummaryCache(store),
    ]
    for cache in caches:
        assert isinstance(cache, SummaryCache)
        assert cache.get("k") is None
        cache.put("k", "summary", session_id="s1", model="m")
        assert cache.get("k") == CachedSummary("summary", "summarized", "m")
        cache.put("r", "loop loop", session_id="s1", model="m", status="rejected", reasons=["loop"])
        assert cache.get("r") == CachedSummary("loop loop", "rejected", "m", ("loop",))
    assert store.get_cached_summary("k") == CachedSummary("summary", "summarized", "m")
    persisted = JsonFileSummaryCache(tmp_path / "side.json")
    assert persisted.get("r") == CachedSummary("loop loop", "rejected", "m", ("loop",))


def test_side_file_survives_garbage(tmp_path: Path) -> None:
    path = tmp_path / "side.json"
    path.write_text("not json")
    cache = JsonFileSummaryCache(path)
    assert cache.get("k") is None
    cache.put("k", "v", session_id="s", model=None)
    assert cache.get("k") == CachedSummary("v")


# -- retry classifier -------------------------------------------------------------------------

_REQUEST = httpx.Request("POST", "http://llm.test/v1/chat/completions")


@pytest.mark.parametrize(
    "exc",
    [
        api_error(openai.RateLimitError, 429),
        api_error(openai.InternalServerError, 500),
        api_error(openai.InternalServerError, 502),
        api_error(openai.APIStatusError, 503),
        api_error(openai.APIStatusError, 408),
        openai.APITimeoutError(request=_REQUEST),
        openai.APIConnectionError(request=_REQUEST),
        httpx.ReadTimeout("slow"),
        httpx.ConnectError("refused"),
        TimeoutError(),
        ConnectionResetError(),
        EmptySummaryError("empty"),
    ],
    ids=lambda e: f"{type(e).__name__}-{getattr(e, 'status_code', '')}",
)
def test_retryable(exc: BaseException) -> None:
    assert is_retryable(exc)


@pytest.mark.parametrize(
    "exc",
    [
        api_error(openai.AuthenticationError, 401),
        api_error(openai.PermissionDeniedError, 403),
        api_error(openai.NotFoundError, 404),
        api_error(openai.BadRequestError, 400),
        api_error(openai.UnprocessableEntityError, 422),
        RuntimeError("No auxiliary model configured"),
        ValueError("bad"),
        KeyError("x"),
    ],
    ids=lambda e: f"{type(e).__name__}-{getattr(e, 'status_code', '')}",
)
def test_not_retryable(exc: BaseException) -> None:
    assert not is_retryable(exc)
