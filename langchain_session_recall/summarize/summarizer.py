"""LLM summaries of retrieved sessions: whole transcripts in, a few hundred tokens of recall out.

:class:`SessionSummarizer` is a Runnable from the retriever's ``list[Document]`` (one per past
session) to one Document per session whose ``page_content`` is a focused summary. The steps, per
session: cache lookup, secret redaction, prompt, model call with retries, citation check, cache
write; on any failure an extractive recap instead. Sessions are mapped concurrently through
LangChain's ``batch``/``abatch`` under an overall deadline.

Quality gate: every model answer goes through ``summarize.quality.assess_recap`` before it is
used. An answer that is not a summary (empty, an echo of the transcript or the prompt, a loop,
chat-template tokens, cut off, another language, invented or vague content) is
``summary_status="rejected"``: the Document carries the extractive recap, the reason codes in
``summary_rejected_because`` and the (redacted, clipped) answer in ``summary_rejected_text``. A
rejected answer is never cached, and a cached summary the gate rejects is not served.

Retry layering: the summarizer makes up to ``max_attempts`` attempts per session, and only for
failures that can heal (see ``summarize/retry.py``). Configure the model with its
SDK retries off (``ChatOpenAI(max_retries=0)``); otherwise every summarizer attempt hides up to
``max_retries + 1`` HTTP requests, and a warning says so when the summarizer is built.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
import inspect
import json
import logging
import re
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import (
    Runnable,
    RunnableConfig,
    RunnableLambda,
    RunnableSerializable,
)
from langchain_core.runnables.config import patch_config, run_in_executor
from pydantic import ConfigDict, Field, PrivateAttr, model_validator
from typing_extensions import Self, override

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.core.redaction import (
    SecretPattern,
    SecretRedactor,
    describe_error,
    match_shown_id,
    redact_secrets,
)
from langchain_session_recall.errors import InvalidOptionError
from langchain_session_recall.models import CachedSummary, CacheStatus
from langchain_session_recall.recall.model import ShownMessage
from langchain_session_recall.recall.reading import read_document
from langchain_session_recall.summarize.budget import RECAP_KEY
from langchain_session_recall.summarize.cache import (
    InMemorySummaryCache,
    JsonFileSummaryCache,
    StoreSummaryCache,
    SummaryCache,
    side_file_cache,
    summary_cache_key,
)
from langchain_session_recall.summarize.extractive import (
    DEFAULT_RECAP_CHARS,
    extractive_pieces,
)
from langchain_session_recall.summarize.grounding import (
    RecapGrounding,
    check_citations,
    ground_recap,
)
from langchain_session_recall.summarize.prompts import (
    CITATION_INSTRUCTION,
    DEFAULT_SUMMARY_PROMPT,
    prompt_fingerprint,
)
from langchain_session_recall.summarize.quality import (
    DEFAULT_THRESHOLDS,
    RecapThresholds,
    RecapVerdict,
    assess_recap,
    gate_fingerprint,
    is_length_stop,
)
from langchain_session_recall.summarize.retry import EmptySummaryError, is_retryable

__all__ = ["SessionSummarizer"]

logger = logging.getLogger(__name__)

SummaryStatus = Literal["summarized", "cached", "fallback", "rejected"]

REJECTED_TEXT_CHARS = 1000
"""Longest ``summary_rejected_text`` kept in metadata (the rejected answer, for debugging)."""
DEFAULT_MAX_OUTPUT_TOKENS = 512
"""Default output budget of one recap. Qwen2.5-Coder-1.5B's recaps of the demo sessions take a
median of 102 tokens and at most 213 (35 recaps; 96 tokens would cut 19 of them): docs/
summarizer.md, "Output budget and deadline". A budget that cuts a recap costs the whole recap
(the quality gate rejects it), so it is generous."""
DEFAULT_TIMEOUT = 180.0
"""Default deadline of one map, in seconds: three recaps of a local 1.5B model on two CPU cores
(20-60 s each, one at a time), far beyond what a hosted model needs (a few seconds, in
parallel), where it only bounds a hang (docs/summarizer.md, "Output budget and deadline")."""
ANSWER_CHARS = 20_000
"""Longest model answer read (or 8 characters per token of ``max_output_tokens`` when that is
more): a longer one is cut before anything checks it, and the cut counts as hitting the token
limit. Checking costs time in proportion to the answer, and it runs after the deadline's wait,
so a model (or a proxy) that sends 60 MB must not make the deadline meaningless."""

# Where providers put the reason a generation stopped (OpenAI, Anthropic, Ollama, Gemini).
_FINISH_KEYS = ("finish_reason", "stop_reason", "done_reason")


@dataclass
class _Outcome:
    text: str | None = None
    usage: dict[str, int] | None = None
    error: BaseException | None = None
    finish_reason: str | None = None


@dataclass
class _MapState:
    """Shared by the jobs of one map. ``sink`` collects outcomes as they finish, so a deadline
    keeps the finished ones; ``cancelled`` is set when the deadline abandons the map."""

    sink: dict[int, _Outcome] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    cancelled: threading.Event = field(default_factory=threading.Event)


@dataclass
class _Job:
    """One session to summarize."""

    index: int
    prompt_vars: dict[str, Any]
    state: _MapState


@dataclass
class _Plan:
    doc: Document
    query: str
    transcript: str  # redacted
    shown: list[ShownMessage]  # the transcript's messages (redacted)
    ids_shown: bool  # the transcript shows their ids
    redactions: int
    cache: SummaryCache | None = None
    cache_key: str | None = None
    result: Document | None = None  # already decided (cache hit, pass-through, no model)
    messages: list[ShownMessage] = field(init=False)  # those it shows an id of: the grounding's

    def __post_init__(self) -> None:
        self.messages = [m for m in self.shown if self.ids_shown and m.id_known]


def _model_name(llm: Any) -> str | None:
    if llm is None:
        return None
    original, seen = llm, 0
    while llm is not None and seen < 5:  # unwrap RunnableBinding / with_config layers
        for attr in ("model_name", "model", "model_id", "deployment_name"):
            value = getattr(llm, attr, None)
            if isinstance(value, str) and value:
                return value
        llm = getattr(llm, "bound", None)
        seen += 1
    return type(original).__name__


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # reprs of live objects: one per process


def _model_identity(llm: Any) -> str | None:
    """What makes two models write different recaps, for the summary cache's key: the class,
    the name, and what LangChain's own caches key by (``_get_llm_string``: a serializable
    model's constructor arguments, base URL and temperature among them, secrets left out; the
    identifying parameters of any other), with the arguments a ``bind()`` layer adds.

    Example:
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> a = _model_identity(FakeListChatModel(responses=["a"]))
        >>> a == _model_identity(FakeListChatModel(responses=["a"]))
        True
        >>> a == _model_identity(FakeListChatModel(responses=["b"]))
        False
    """
    if llm is None:
        return None
    parts: list[Any] = [_model_name(llm)]
    node, seen = llm, 0
    while node is not None and seen < 5:  # unwrap RunnableBinding / with_config layers
        bound = getattr(node, "kwargs", None)
        if isinstance(bound, dict) and bound:
            parts.append(sorted((str(k), repr(v)) for k, v in bound.items()))
        if isinstance(node, BaseLanguageModel):
            cls = type(node)
            parts.append(f"{cls.__module__}.{cls.__qualname__}")
            describe = getattr(node, "_get_llm_string", None)  # chat models and LLMs
            # a model that cannot describe itself is known by its name and class
            with contextlib.suppress(Exception):
                parts.append(describe() if callable(describe) else None)
            break
        node = getattr(node, "bound", None)
        seen += 1
    return _ADDRESS.sub("", json.dumps(parts, default=repr, ensure_ascii=False))


def _text_of(message: BaseMessage) -> str:
    text = message.text if isinstance(message.text, str) else message.text()
    if not text.strip():
        raise EmptySummaryError("the model returned an empty summary")
    return text.strip()


_describe = describe_error  # log lines and summary_error: redacted, bounded


class SessionSummarizer(RunnableSerializable[Any, list[Document]]):
    """Summarize each retrieved session with a chat model, focused on the search query.

    Input: the retriever's ``list[Document]`` (the query is read from each Document's ``query``
    metadata), or ``{"documents": [...], "query": "..."}``. Output: one Document per input
    Document, in order, with the summary as ``page_content``, the retriever's metadata kept, and
    ``summary_status``, ``summary_model``, ``token_usage`` (when the model reports it),
    ``citations`` / ``invalid_citations`` (message ids) and ``redacted_secrets`` (count).
    Recent-mode Documents (``mode="recent"``) pass through unchanged: browsing costs no model
    call.

    ``summary_status`` is one of:

    - ``"summarized"``: a fresh model recap that passed the quality gate;
    - ``"cached"``: a recap from the cache (it passed the gate when it was made, and again now);
    - ``"fallback"``: no recap could be made; ``page_content`` is the extractive recap,
      ``summary_fallback_reason`` says why (``"no_model"``, ``"error"``, ``"deadline"``) and
      ``summary_error`` what happened;
    - ``"rejected"``: the model answered, but the quality gate
      (:func:`~langchain_session_recall.summarize.quality.assess_recap`) found it is not a
      summary; ``page_content`` is the extractive recap, ``summary_rejected_because`` lists the
      reason codes, ``summary_rejected_text`` holds the answer (redacted, at most
      :data:`REJECTED_TEXT_CHARS` characters) and ``summary_quality`` the gate's measures.

    Example:
        .. code-block:: python

            from langchain_core.documents import Document
            from langchain_core.language_models import GenericFakeChatModel
            from langchain_core.messages import AIMessage
            from langchain_session_recall.summarize.summarizer import SessionSummarizer

            doc = Document(
                page_content="[USER #1]: docker says permission denied\\n\\n"
                "[ASSISTANT #2]: I ran sudo usermod -aG docker $USER",
                metadata={"session_id": "s1", "query": "docker", "last_message_id": 2},
            )
            recap = "The docker permission error was fixed with `sudo usermod -aG docker` [#2]."
            llm = GenericFakeChatModel(messages=iter([AIMessage(recap)]))
            [out] = SessionSummarizer(llm=llm).invoke([doc])
            assert out.metadata["summary_status"] == "summarized"
            assert out.metadata["citations"] == [2]

            # An answer that is not a summary is rejected; the extractive recap replaces it.
            loop = "docker docker docker docker docker docker docker docker"
            llm = GenericFakeChatModel(messages=iter([AIMessage(loop)]))
            [out] = SessionSummarizer(llm=llm).invoke([doc])
            assert out.metadata["summary_status"] == "rejected"
            assert "loop" in out.metadata["summary_rejected_because"]
            assert out.page_content.startswith("[Not summarized (model recap rejected: loop")
    """

    llm: Runnable[Any, BaseMessage] | None = None
    """The chat model. ``None`` gives every session the extractive fallback."""
    prompt: ChatPromptTemplate = DEFAULT_SUMMARY_PROMPT
    """Variables available: query, source, when, title, transcript, citation_instruction."""
    temperature: float | None = 0.1
    max_output_tokens: int | None = DEFAULT_MAX_OUTPUT_TOKENS
    """Upper bound of each summary, sent as ``max_tokens`` (``None``: the model's default). A
    recap the budget cuts off is rejected (``truncated``) and flagged ``summary_cut_off``."""
    max_tokens_param: Literal["auto", "max_tokens"] = "auto"
    """``"auto"`` binds ``max_tokens`` the LangChain way (ChatOpenAI sends it as
    ``max_completion_tokens``). ``"max_tokens"`` sends a literal ``max_tokens`` in the request
    body (``extra_body``), for OpenAI-compatible servers that ignore ``max_completion_tokens``
    (llama.cpp, older vLLM)."""
    max_concurrency: int = Field(default=5, ge=1)
    max_attempts: int = Field(default=3, ge=1)
    """Attempts per session, retryable failures only (rate limit, 5xx, timeout, connection)."""
    retry_initial_wait: float = Field(default=1.0, ge=0)
    """Backoff before the 2nd attempt; it doubles after each further failure."""
    retry_max_wait: float = Field(default=8.0, ge=0)
    retry_jitter: float = Field(default=0.5, ge=0)
    timeout: float | None = Field(default=DEFAULT_TIMEOUT, gt=0)
    """Overall deadline in seconds for the whole map; unfinished sessions get the fallback."""
    cache: bool | Any = True
    """``True``: the summary cache of ``store`` when given, else an in-memory one kept by this
    summarizer. ``False``: off. Or any object
    with ``get(key)`` / ``put(key, summary, *, session_id, model)``."""
    store: SessionBackend | None = None
    """The store whose summary cache to use (``create_session_search_tool`` and
    ``create_session_recall_chain`` pass the retriever's); ``None``: a cache in memory."""
    cache_path: str | None = None
    """Side file (JSON) for summaries of read-only stores; by default they stay in memory."""
    redact: bool = True
    """Redact secrets from transcript, query and title before they leave the process."""
    secret_patterns: Sequence[SecretPattern] | None = None
    grounding: bool = True
    """When the transcript carries message ids: ask for ``[#id]`` citations, check them, and
    cite the supporting messages of every sentence (see
    :func:`~langchain_session_recall.summarize.grounding.ground_recap`)."""
    invalid_citations: Literal["remove", "flag"] = "remove"
    unsupported: Literal["remove", "mark"] = "remove"
    """What to do with a recap sentence that nothing in the transcript supports: drop it, or
    keep it marked ``[unsupported]``. Counted in ``unsupported_sentences`` either way."""
    fallback_chars: int = Field(default=DEFAULT_RECAP_CHARS, ge=200)
    """Budget of each extractive recap's body, in characters."""
    quality_gate: bool = True
    """Check every model answer with :func:`~langchain_session_recall.summarize.quality.
    assess_recap`; a rejected one is replaced by the extractive recap. ``False`` turns it off."""
    quality_thresholds: RecapThresholds = DEFAULT_THRESHOLDS
    """Where the quality gate draws its lines (see :class:`RecapThresholds`)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    _memory_cache: InMemorySummaryCache = PrivateAttr(default_factory=InMemorySummaryCache)
    _side_cache: JsonFileSummaryCache | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _warn_multiplied_retries(self) -> Self:
        if self.llm is None or self.max_attempts <= 1 or not _has_attr(self.llm, "max_retries"):
            return self
        sdk_retries = _find_attr(self.llm, "max_retries")
        if sdk_retries is None or (isinstance(sdk_retries, int) and sdk_retries > 0):
            # None is the SDK's own default (2 for openai and anthropic).
            per_attempt = "max_retries + 1" if sdk_retries is None else str(sdk_retries + 1)
            warnings.warn(
                f"{type(self.llm).__name__} retries by itself (max_retries={sdk_retries}) and "
                f"SessionSummarizer retries too (max_attempts={self.max_attempts}): one session "
                f"may cost up to {per_attempt} x {self.max_attempts} requests. Build the "
                "model with max_retries=0, or set max_attempts=1 to rely on the SDK alone.",
                UserWarning,
                stacklevel=2,
            )
        return self

    # -- Runnable API --------------------------------------------------------------------------

    @override
    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        return self._call_with_config(self._run_sync, input, config, run_type="chain", **kwargs)

    @override
    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        return await self._acall_with_config(
            self._run_async, input, config, run_type="chain", **kwargs
        )

    # -- planning (cache, redaction, prompt variables); runs in the caller's thread ------------

    def _plan(self, input: Any) -> list[_Plan]:
        docs, query_override = _coerce_input(input)
        model = _model_identity(self.llm)
        version = prompt_fingerprint(self.prompt)
        gate = gate_fingerprint(self.quality_thresholds) if self.quality_gate else "no-gate"
        plans: list[_Plan] = []
        for doc in docs:
            meta = doc.metadata
            query = query_override if query_override is not None else str(meta.get("query") or "")
            read = read_document(doc.page_content, meta, self._redactor)
            plan = _Plan(doc, query, read.transcript, read.shown, read.ids_shown, read.redactions)
            plans.append(plan)
            if meta.get("mode") == "recent":
                plan.result = doc
                continue
            if self.llm is None:
                plan.result = self._fallback(plan, "no_model", "no model configured")
                continue
            plan.cache = self._cache_for(doc)
            if plan.cache is not None:
                last_id = meta.get("last_message_id")
                plan.cache_key = summary_cache_key(
                    session_id=str(meta.get("session_id", "")),
                    last_message_id=last_id if isinstance(last_id, int) else None,
                    transcript=doc.page_content,
                    query=query,
                    model=model,
                    prompt_version=version,
                    gate_version=gate,
                )
                cached = _safe_cache_get(plan.cache, plan.cache_key)
                if cached is not None and cached.status == "summarized":
                    plan.result = self._summary_doc(plan, cached.summary, "cached", None)
                elif cached is not None:  # the model's answer was rejected: not asked again
                    plan.result = self._rejected(
                        plan, cached.summary, cached.reasons or ("rejected",), cached=True
                    )
        return plans

    @property
    def _redactor(self) -> SecretRedactor | None:
        return SecretRedactor(self.secret_patterns) if self.redact else None

    def _redact(self, text: str) -> tuple[str, int]:
        """``text`` redacted by the summarizer's rules, and the secrets replaced."""
        redactor = self._redactor
        return (text, 0) if redactor is None else redactor.counted(text)

    def _cache_for(self, doc: Document) -> SummaryCache | None:
        if self.cache is False or self.cache is None:
            return None
        if self.cache is not True:
            return self.cache  # type: ignore[no-any-return]
        store = self.store
        if store is not None and not store.read_only:
            return StoreSummaryCache(store)
        # No store, or a read-only one: never write into a database we must not touch. The
        # store's delete_sessions (through any store of this process on the same database)
        # empties the cache of what it forgets.
        if self.cache_path is not None:
            if self._side_cache is None:
                self._side_cache = side_file_cache(self.cache_path)
                if store is not None:
                    store.register_summary_cache(self._side_cache)
            return self._side_cache
        if store is not None:
            store.register_summary_cache(self._memory_cache)
        return self._memory_cache

    def _shown_id(self, plan: _Plan) -> str:
        """The session id as logs and recaps show it: redacted (a key in an id, item 8)."""
        return self._redact(str(plan.doc.metadata.get("session_id", "?")))[0]

    def _cached_session_id(self, plan: _Plan) -> str:
        """The session a cache entry belongs to (``forget`` deletes by it): the real id,
        found in the store when the Document shows it redacted (issue 32 item 8)."""
        session_id = str(plan.doc.metadata.get("session_id", ""))
        if "[REDACTED" not in session_id or self.store is None:
            return session_id
        try:
            ids = self.store.all_session_ids()
        except Exception:  # a broken store must not cost the summary
            return session_id
        redact = functools.partial(redact_secrets, patterns=self.secret_patterns)
        return match_shown_id(session_id, ids, redact) or session_id

    def _prompt_vars(self, plan: _Plan) -> dict[str, Any]:
        meta = plan.doc.metadata
        query = self._redact(plan.query)[0] if plan.query.strip() else ""
        values = {
            "query": query or "(no specific topic: general recap)",
            "source": self._redact(str(meta.get("source") or "unknown"))[0],
            "when": str(meta.get("when") or meta.get("started_at") or "unknown"),
            "title": self._redact(str(meta.get("title") or "(untitled)"))[0],
            "transcript": plan.transcript,
            "citation_instruction": CITATION_INSTRUCTION
            if self.grounding and plan.messages
            else "",
        }
        return {k: v for k, v in values.items() if k in self.prompt.input_variables}

    # -- the quality gate ---------------------------------------------------------------------

    def _prompt_text(self, plan: _Plan) -> str:
        """The prompt as sent for ``plan``, messages joined ("" for a custom prompt that needs
        other variables)."""
        try:
            messages = self.prompt.format_messages(**self._prompt_vars(plan))
        except (KeyError, ValueError):
            return ""
        return "\n\n".join(str(m.content) for m in messages)

    def _gate(self, plan: _Plan, text: str, finish_reason: str | None) -> RecapVerdict | None:
        """The gate's verdict on ``text`` when it rejects it; None when the text may be used."""
        if not self.quality_gate:
            return None
        prompt_text = self._prompt_text(plan)
        meta = plan.doc.metadata
        context = "\n".join(
            [self._redact(plan.query)[0], self._redact(str(meta.get("title") or ""))[0]]
        )
        verdict = assess_recap(
            text,
            transcript=plan.transcript,
            prompt=prompt_text,
            context=context,
            finish_reason=finish_reason,
            thresholds=self.quality_thresholds,
            known_ids=[m.id for m in plan.messages],
        )
        return None if verdict.ok else verdict

    # -- results ----------------------------------------------------------------------------

    def _summary_doc(
        self,
        plan: _Plan,
        text: str,
        status: SummaryStatus,
        usage: dict[str, int] | None,
        finish_reason: str | None = None,
    ) -> Document:
        meta: dict[str, Any] = {
            **plan.doc.metadata,
            "summary_status": status,
            "summary_model": _model_name(self.llm),
            "redacted_secrets": plan.redactions,
        }
        if self.grounding and plan.messages:
            check = check_citations(
                text,
                {m.id for m in plan.messages},
                remove_invalid=self.invalid_citations == "remove",
            )
            grounded = self._ground(plan, check.text)
            supported = any(s.supported for s in grounded.claims)
            if self.quality_gate and grounded.claims and not supported:
                # Not one sentence is backed by the transcript: this is no recap of it.
                return self._rejected(
                    plan,
                    text,
                    ["unsupported"],
                    usage=usage,
                    cached=status == "cached",
                    finish_reason=finish_reason,
                )
            # Without the gate, answers are served as they come: nothing is removed.
            text = grounded.render(unsupported=self.unsupported if self.quality_gate else "keep")
            meta.update(_grounding_metadata(grounded, self._redact))
            meta["invalid_citations"] = check.invalid
        if usage:
            meta["token_usage"] = usage
        meta.update(self._budget_notice(plan, finish_reason))
        return Document(page_content=text, metadata=meta, id=plan.doc.id)

    def _ground(self, plan: _Plan, text: str) -> RecapGrounding:
        meta = plan.doc.metadata
        context = "\n".join(
            self._redact(str(meta.get(k) or ""))[0] for k in ("title", "when", "source")
        )
        query = self._redact(plan.query)[0]
        prompt_text = self._prompt_text(plan)
        # The instructions' words need no support; the query's are not instructions: what a
        # recap says about the query's topic must be found in the session.
        instructions = prompt_text.replace(plan.transcript, " ") if prompt_text else ""
        if query.strip():
            instructions = instructions.replace(query, " ")
        return ground_recap(text, plan.messages, context=context, instructions=instructions)

    def _budget_notice(self, plan: _Plan, finish_reason: str | None) -> dict[str, Any]:
        """Metadata (and a warning) when the model stopped at the output budget."""
        if not is_length_stop(finish_reason):
            return {}
        notice = (
            f"the model stopped at the output budget (max_output_tokens="
            f"{self.max_output_tokens}, finish_reason={finish_reason!r}): its recap was cut "
            f"off. Raise max_output_tokens (the default, {DEFAULT_MAX_OUTPUT_TOKENS}, lets a "
            "3-6 sentence recap finish)."
        )
        logger.warning("summary of session %s: %s", self._shown_id(plan), notice)
        return {"summary_cut_off": True, "summary_notice": notice}

    def _extractive(self, plan: _Plan, reason: str) -> tuple[str, dict[str, Any]]:
        """The extractive recap's text, and its pieces as metadata (for a token budget)."""
        meta = plan.doc.metadata
        session_id, source = self._shown_id(plan), self._redact(str(meta.get("source") or ""))[0]
        header = f"Session {session_id}, {meta.get('when') or 'unknown date'}"
        header += f", source {source or 'unknown'}"
        if meta.get("title"):
            header += f": {self._redact(str(meta['title']))[0]}"
        matched = meta.get("matched_message_ids") or ()
        recap = extractive_pieces(
            plan.transcript,
            plan.query,
            matched_message_ids=[i for i in matched if isinstance(i, int)],
            reason=reason,
            header=header,
            max_chars=self.fallback_chars,
            messages=plan.shown,
            ids_shown=plan.ids_shown,
        )
        clean = dataclasses.replace(
            recap,
            head=tuple(self._redact(h)[0] for h in recap.head),
            pieces=tuple(self._redact(p)[0] for p in recap.pieces),
        )
        # the whole text too: a rule may match across the pieces (idempotent otherwise)
        text = self._redact(clean.render(clean.shown))[0]
        return text, {RECAP_KEY: clean.to_dict()}

    def _rejected(
        self,
        plan: _Plan,
        text: str,
        reasons: Sequence[str],
        *,
        verdict: RecapVerdict | None = None,
        usage: dict[str, int] | None = None,
        cached: bool = False,
        finish_reason: str | None = None,
    ) -> Document:
        meta: dict[str, Any] = {
            **plan.doc.metadata,
            "summary_status": "rejected",
            "summary_model": _model_name(self.llm),
            "summary_rejected_because": list(reasons),
            "summary_rejected_text": self._redact(text)[0][:REJECTED_TEXT_CHARS],
            "redacted_secrets": plan.redactions,
        }
        if verdict is not None:
            meta["summary_quality"] = verdict.scores()
        if cached:
            meta["summary_from_cache"] = True
        if usage:
            meta["token_usage"] = usage
        meta.update(self._budget_notice(plan, finish_reason))
        content, pieces = self._extractive(plan, f"model recap rejected: {', '.join(reasons)}")
        return Document(page_content=content, metadata={**meta, **pieces}, id=plan.doc.id)

    def _fallback(self, plan: _Plan, reason: str, error: str) -> Document:
        meta = plan.doc.metadata
        text, pieces = self._extractive(
            plan,
            {"no_model": "no model configured", "deadline": "deadline reached"}.get(
                reason, "summarization failed"
            ),
        )
        return Document(
            page_content=text,
            metadata={
                **meta,
                "summary_status": "fallback",
                "summary_model": _model_name(self.llm),
                "summary_fallback_reason": reason,
                "summary_error": self._redact(error)[0],
                "redacted_secrets": plan.redactions,
                **pieces,
            },
            id=plan.doc.id,
        )

    def _finish(self, plans: list[_Plan], outcomes: Mapping[int, _Outcome]) -> list[Document]:
        out: list[Document] = []
        for i, plan in enumerate(plans):
            if plan.result is not None:
                out.append(plan.result)
                continue
            outcome = outcomes.get(i)
            if outcome is None:
                out.append(self._fallback(plan, "deadline", f"not done within {self.timeout}s"))
            elif outcome.text is None:
                err = outcome.error or RuntimeError("unknown failure")
                logger.warning(
                    "summary of session %s failed: %s",
                    self._shown_id(plan),
                    _describe(err),
                )
                out.append(self._fallback(plan, "error", _describe(err)))
            elif (verdict := self._gate(plan, outcome.text, outcome.finish_reason)) is not None:
                logger.info(
                    "summary of session %s rejected by the quality gate: %s",
                    self._shown_id(plan),
                    ", ".join(verdict.reasons),
                )
                # Cached as rejected: a repeated search shows the extractive recap again and
                # does not pay the model for the same answer.
                self._cache_put(plan, outcome.text, "rejected", verdict.reasons)
                out.append(
                    self._rejected(
                        plan,
                        outcome.text,
                        verdict.reasons,
                        verdict=verdict,
                        usage=outcome.usage,
                        finish_reason=outcome.finish_reason,
                    )
                )
            else:
                doc = self._summary_doc(
                    plan, outcome.text, "summarized", outcome.usage, outcome.finish_reason
                )
                reasons = doc.metadata.get("summary_rejected_because", ())
                self._cache_put(
                    plan, outcome.text, "rejected" if reasons else "summarized", reasons
                )
                out.append(doc)
        return out

    def _cache_put(
        self, plan: _Plan, text: str, status: CacheStatus, reasons: Sequence[str]
    ) -> None:
        if plan.cache is None or plan.cache_key is None:
            return
        try:
            plan.cache.put(
                plan.cache_key,
                text,
                session_id=self._cached_session_id(plan),
                model=_model_name(self.llm),
                status=status,
                reasons=reasons,
            )
        except Exception as exc:  # a broken cache must not cost the summary
            logger.warning("summary cache write failed: %s", _describe(exc))

    # -- the map ----------------------------------------------------------------------------

    def _session_chain(self, cancelled: threading.Event) -> Runnable[dict[str, Any], str]:
        assert self.llm is not None
        params: dict[str, Any] = {}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_output_tokens is not None:
            if self.max_tokens_param == "max_tokens":
                extra = dict(_find_attr(self.llm, "extra_body") or {})
                params["extra_body"] = {**extra, "max_tokens": self.max_output_tokens}
            else:
                params["max_tokens"] = self.max_output_tokens
        llm = self.llm.bind(**params) if params else self.llm
        attempt: Runnable[Any, Any] = _classified(llm | RunnableLambda(_keep_message), cancelled)
        if self.max_attempts > 1:
            attempt = attempt.with_retry(
                # Only failures the classifier marked (retryable, deadline not passed).
                retry_if_exception_type=(_RetryableFailure,),
                stop_after_attempt=self.max_attempts,
                wait_exponential_jitter=True,  # jitter=0 still waits exponentially
                exponential_jitter_params=_backoff_params(
                    self.retry_initial_wait, self.retry_max_wait, self.retry_jitter
                ),
            )
        return (self.prompt | attempt).with_config(run_name="summarize_session")

    def _job_runnable(self, cancelled: threading.Event) -> Runnable[_Job, None]:
        chain = self._session_chain(cancelled)
        answer_chars = max(ANSWER_CHARS, 8 * (self.max_output_tokens or 0))

        def run(job: _Job, config: RunnableConfig) -> None:
            if job.state.cancelled.is_set():
                return
            try:
                outcome = _to_outcome(chain.invoke(job.prompt_vars, config), answer_chars)
            except Exception as exc:  # isolation: one session's failure stays its own
                outcome = _Outcome(error=_unwrap(exc))
            with job.state.lock:
                if not job.state.cancelled.is_set():
                    job.state.sink[job.index] = outcome

        async def arun(job: _Job, config: RunnableConfig) -> None:
            if job.state.cancelled.is_set():
                return
            try:
                outcome = _to_outcome(await chain.ainvoke(job.prompt_vars, config), answer_chars)
            except Exception as exc:
                outcome = _Outcome(error=_unwrap(exc))
            job.state.sink[job.index] = outcome

        return RunnableLambda(run, afunc=arun, name="session_summary")

    def _jobs(self, plans: list[_Plan]) -> tuple[list[_Job], _MapState]:
        state = _MapState()
        jobs = [
            _Job(i, self._prompt_vars(p), state) for i, p in enumerate(plans) if p.result is None
        ]
        return jobs, state

    def _run_sync(
        self, input: Any, run_manager: CallbackManagerForChainRun, config: RunnableConfig
    ) -> list[Document]:
        plans = self._plan(input)
        jobs, state = self._jobs(plans)
        if not jobs:
            return self._finish(plans, state.sink)
        runnable = self._job_runnable(state.cancelled)
        batch_config = patch_config(
            config, callbacks=run_manager.get_child(), max_concurrency=self.max_concurrency
        )
        if self.timeout is None:
            runnable.batch(jobs, batch_config, return_exceptions=True)
            return self._finish(plans, state.sink)
        # batch() has no overall timeout: run it on a watcher thread and stop waiting at the
        # deadline. Threads cannot be killed; stragglers skip their remaining attempts and their
        # results are dropped (the cancelled flag is checked under the sink lock).
        done = threading.Event()

        def work() -> None:
            try:
                runnable.batch(jobs, batch_config, return_exceptions=True)
            finally:
                done.set()

        ctx = contextvars.copy_context()
        threading.Thread(target=ctx.run, args=(work,), daemon=True, name="summarizer-map").start()
        if not done.wait(self.timeout):
            with state.lock:
                state.cancelled.set()
                finished = dict(state.sink)
            return self._finish(plans, finished)
        return self._finish(plans, state.sink)

    async def _run_async(
        self, input: Any, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig
    ) -> list[Document]:
        # The cache reads and writes are store I/O, synchronous on both backends: in the
        # executor, as the retriever runs its searches (one async model).
        plans = await run_in_executor(config, self._plan, input)
        jobs, state = self._jobs(plans)
        if not jobs:
            return await run_in_executor(config, self._finish, plans, state.sink)
        runnable = self._job_runnable(state.cancelled)
        batch_config = patch_config(
            config, callbacks=run_manager.get_child(), max_concurrency=self.max_concurrency
        )
        try:
            # Cancelling abatch cancels every in-flight call; finished ones are already in sink.
            await asyncio.wait_for(
                runnable.abatch(jobs, batch_config, return_exceptions=True), self.timeout
            )
        except asyncio.TimeoutError:
            state.cancelled.set()
        return await run_in_executor(config, self._finish, plans, dict(state.sink))


class _RetryableFailure(Exception):
    """Carries a failure the retry classifier accepted; unwrapped before it is reported.

    Wrapping (instead of a predicate in ``with_retry``) keeps the retry decision ours on every
    langchain-core version: older ones only take exception types."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


def _unwrap(exc: BaseException) -> BaseException:
    return exc.original if isinstance(exc, _RetryableFailure) else exc


def _classified(inner: Runnable[Any, Any], cancelled: threading.Event) -> Runnable[Any, Any]:
    def mark(exc: Exception) -> Exception:
        # Once the deadline has abandoned the map, nothing is worth another attempt.
        return _RetryableFailure(exc) if is_retryable(exc) and not cancelled.is_set() else exc

    def call(value: Any, config: RunnableConfig) -> Any:
        try:
            return inner.invoke(value, config)
        except Exception as exc:
            marked = mark(exc)
            if marked is exc:
                raise
            raise marked from exc

    async def acall(value: Any, config: RunnableConfig) -> Any:
        try:
            return await inner.ainvoke(value, config)
        except Exception as exc:
            marked = mark(exc)
            if marked is exc:
                raise
            raise marked from exc

    return RunnableLambda(call, afunc=acall, name="summary_attempt")


def _backoff_params(first: float, longest: float, jitter: float) -> Any:
    # tenacity >= 9.1 renamed ``initial`` to ``multiplier`` (the old name warns).
    import tenacity

    params = inspect.signature(tenacity.wait_exponential_jitter).parameters
    name = "multiplier" if "multiplier" in params else "initial"
    return {name: first, "max": longest, "jitter": jitter}


def _keep_message(message: BaseMessage) -> BaseMessage:
    _text_of(message)  # raise EmptySummaryError inside the retried step
    return message


def _to_outcome(message: Any, answer_chars: int) -> _Outcome:
    """The answer, cut to ``answer_chars`` (then reported as stopped by the token limit)."""
    if not isinstance(message, BaseMessage):
        return _Outcome(text=str(message)[:answer_chars])
    usage = None
    if isinstance(message, AIMessage) and message.usage_metadata:
        u = message.usage_metadata
        usage = {
            "input_tokens": int(u.get("input_tokens", 0)),
            "output_tokens": int(u.get("output_tokens", 0)),
            "total_tokens": int(u.get("total_tokens", 0)),
        }
    metadata = message.response_metadata or {}
    finish = next((metadata[k] for k in _FINISH_KEYS if metadata.get(k)), None)
    text = _text_of(message)
    if len(text) > answer_chars:
        text, finish = text[:answer_chars], "length"
    return _Outcome(text=text, usage=usage, finish_reason=None if finish is None else str(finish))


def _find_attr(obj: Any, name: str) -> Any:
    for _ in range(5):
        if obj is None:
            return None
        if name in getattr(type(obj), "model_fields", {}) or name in getattr(obj, "__dict__", {}):
            return getattr(obj, name, None)
        obj = getattr(obj, "bound", None)
    return None


def _has_attr(obj: Any, name: str) -> bool:
    for _ in range(5):
        if obj is None:
            return False
        if name in getattr(type(obj), "model_fields", {}) or name in getattr(obj, "__dict__", {}):
            return True
        obj = getattr(obj, "bound", None)
    return False


def _grounding_metadata(
    grounded: RecapGrounding, redact: Callable[[str], tuple[str, int]]
) -> dict[str, Any]:
    """``citations``, ``summary_sentences`` and ``unsupported_sentences`` of a grounded recap."""
    meta: dict[str, Any] = {
        "citations": grounded.citations,
        "summary_sentences": [
            {"text": s.text, "citations": list(s.citations), "status": s.status}
            for s in grounded.claims
            if s.supported
        ],
        "unsupported_sentences": len(grounded.unsupported),
    }
    if grounded.unsupported:
        meta["unsupported_text"] = [redact(s.text)[0] for s in grounded.unsupported]
    return meta


def _coerce_input(input: Any) -> tuple[list[Document], str | None]:
    if isinstance(input, Mapping):
        docs = input.get("documents", input.get("docs"))
        query = input.get("query")
        if docs is None:
            raise InvalidOptionError(
                'SessionSummarizer expects {"documents": [...], "query": "..."}'
            )
        return _documents(docs), None if query is None else str(query)
    return _documents(input), None


def _documents(value: Any) -> list[Document]:
    if isinstance(value, Document):
        return [value]
    docs = list(value)
    for d in docs:
        if not isinstance(d, Document):
            raise InvalidOptionError(
                f"SessionSummarizer takes Documents (from SessionRecallRetriever), got "
                f"{type(d).__name__}"
            )
    return docs


def _safe_cache_get(cache: SummaryCache, key: str) -> CachedSummary | None:
    try:
        return cache.get(key)
    except Exception as exc:  # a broken cache must not cost the summary
        logger.warning("summary cache read failed: %s", _describe(exc))
        return None
