"""``session_search``: recall as a tool an agent calls on its own."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import run_in_executor
from langchain_core.tools import BaseTool, ToolException
from langchain_core.tools.base import ToolExceptionHandlerOutput
from pydantic import BaseModel, ConfigDict, Field

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.core.query import QUERY_LIMITS, ParsedQuery, bound_query, parse_query
from langchain_session_recall.core.redaction import redact_secrets
from langchain_session_recall.dates import to_timestamp
from langchain_session_recall.errors import (
    InvalidArgumentError,
    InvalidOptionError,
    SessionRecallError,
)
from langchain_session_recall.messages import storable_text
from langchain_session_recall.recorder import configured_session
from langchain_session_recall.retriever import SessionRecallRetriever
from langchain_session_recall.search.request import DEFAULT_K, DEFAULT_MAX_K, check_k
from langchain_session_recall.summarize.budget import (
    RECAP_KEY,
    Recap,
    estimate_tokens,
    fill_budget,
    search_score,
)
from langchain_session_recall.summarize.extractive import is_extractive_label
from langchain_session_recall.summarize.summarizer import SessionSummarizer

__all__ = [
    "BUDGET_NOTE",
    "SESSION_SEARCH_DESCRIPTION",
    "WHERE_ARGUMENTS_NOTE",
    "SessionSearchInput",
    "SessionSearchTool",
    "SessionSearchWhereInput",
    "create_session_search_tool",
]

BUDGET_NOTE = "verbatim excerpts"
"""A budgeted reply's ``summary_note`` when every result is an extractive recap: said once,
in place of each recap's label (the model learns its recaps quote the messages, not what they
sum up; on LoCoMo the label's 84 characters cost 4 points of survival at 250 tokens:
docs/benchmarks-summarizer.md)."""

SESSION_SEARCH_DESCRIPTION = f"""\
Search your long-term memory of past conversations with this user, or browse recent sessions. \
This is your recall: every past session is searchable, and results come back as short recaps.

TWO MODES:
1. Recent sessions (empty query): what was worked on recently. Returns titles, previews and \
timestamps. Instant, no LLM cost.
2. Search (with a query): finds the past sessions about a topic and recaps what happened: what \
was asked, what was done, decisions, exact commands, file paths and errors.

USE THIS PROACTIVELY when:
- the user says "we did this before", "remember when", "last time", "like before";
- the user asks about a topic, file, error or project you may have worked on before;
- the user asks "what did we do about X?" or "where is the script you wrote?";
- you want to check whether you already solved a similar problem.

Query syntax: plain keywords or a natural question both work. For broad recall join keywords \
with OR (docker OR kubernetes); "double quotes" for an exact phrase; NOT to leave out \
sessions that mention a word (python NOT java); a trailing * for a prefix (deploy*). \
Optional: limit (default {DEFAULT_K}, max {DEFAULT_MAX_K}), role_filter ("user,assistant"), \
after/before (ISO dates, e.g. 2026-11-01). \
The current conversation is never searched. """
SESSION_SEARCH_DESCRIPTION += QUERY_LIMITS


class SessionSearchInput(BaseModel):
    """Arguments of ``session_search``."""

    query: str = Field(
        default="",
        description=(
            "What to look for: keywords, a phrase in quotes, OR/NOT, prefix*, or a question. "
            "Empty to browse recent sessions."
        ),
    )
    limit: int = Field(
        default=DEFAULT_K,
        # the schema a recorded agent run sent (cassettes): changing it needs a new recording
        description=f"Sessions to return (1-{DEFAULT_MAX_K}; larger values give {DEFAULT_MAX_K}).",
    )
    role_filter: str | None = Field(
        default=None,
        description='Only match these roles, comma-separated: "user,assistant".',
    )
    after: str | None = Field(
        default=None, description="Only sessions started on/after this ISO date (2026-11-01)."
    )
    before: str | None = Field(
        default=None, description="Only sessions started before this ISO date (2026-12-01)."
    )


class SessionSearchWhereInput(SessionSearchInput):
    """Arguments of ``session_search`` built with ``where_arguments=True``: also where the
    sessions happened."""

    project: str | None = Field(
        default=None,
        description="Only sessions in this project directory or below it: an absolute path "
        "(/home/me/src/api).",
    )
    agent: str | None = Field(
        default=None,
        description='Only sessions of these agents, comma-separated: "codex,claude-code" '
        "(also gemini, opencode, cursor, hermes).",
    )


WHERE_ARGUMENTS_NOTE = (
    " project (a directory: sessions there or below it) and agent (codex, claude-code, ...) "
    "keep to where a session happened; each result names its project, branch, agent and the "
    "command that reopens it (resume)."
)
"""What a tool built with ``where_arguments=True`` adds to its description."""


logger = logging.getLogger(__name__)
_CHECKED_STORES: set[str] = set()


def _check_tenant(retriever: SessionRecallRetriever, require_user_id: bool) -> None:
    """A tool without ``user_id`` searches every user's sessions: refuse that when asked to,
    else warn when the store holds sessions of more than one user (checked once per open
    store: on SQLite the count scans the sessions of a one-user store, 0.3 s at a million)."""
    if retriever.user_id is not None:
        return
    if require_user_id:
        raise InvalidArgumentError(
            "require_user_id=True but no user_id was given: pass user_id=... (the tenant whose "
            "sessions this tool may search)"
        )
    store = retriever.store
    if store.store_id in _CHECKED_STORES:  # once per open store: the count may scan (SQLite)
        return
    _CHECKED_STORES.add(store.store_id)
    if store.count_users(up_to=2) < 2:
        return
    logger.warning(
        "session_search on %s has no user_id, and the store holds sessions of several users: "
        "the model can search every user's sessions. Pass user_id=... for one user's tool, or "
        "require_user_id=True to make a missing user_id an error.",
        store.describe(),
    )


def _error_payload(exc: ToolException) -> str:
    """The reply to a call ``session_search`` cannot answer, as the model reads it: the JSON
    envelope of every reply, ``{"success": false, "error": "<what went wrong>. Fix the
    arguments and call session_search again."}`` (the tool's ``handle_tool_error``; the
    ``ToolMessage`` carrying it has ``status="error"``).

    Example:
        >>> _error_payload(ToolException("limit=0 asks for no session"))
        '{"success": false, "error": "limit=0 asks for no session"}'
    """
    message = str(exc.args[0]) if exc.args else "session_search failed"
    return json.dumps({"success": False, "error": storable_text(message)}, ensure_ascii=False)


def _add_notice(payload: dict[str, Any], notices: tuple[str, ...]) -> None:
    """What the reply should tell the model it did not do as asked (a query cut, a limit
    clamped), as one sentence."""
    if notices:
        notice = "; ".join(notices)
        payload["notice"] = f"{notice[0].upper()}{notice[1:]}."


def _checked_query(query: str | None) -> tuple[str, ParsedQuery | None, tuple[str, ...]]:
    """The query as searched (capped, valid Unicode: it is echoed in the JSON), its parse (the
    one the search runs on: it is not parsed again) and the notices of what was cut;
    :class:`EmptyQueryError` when text holds nothing searchable."""
    raw = query or ""
    text = bound_query(raw)
    if not text.strip():
        return "", None, ()
    # the notices (and an error) are of what the model sent: a query cut to its first 2,000
    # characters is parsed as sent too, first
    sent = parse_query(raw) if text != raw else None
    parsed = parse_query(text)
    return text, parsed, (sent or parsed).notices


class SessionSearchTool(BaseTool):
    """The ``session_search`` tool: search or browse past sessions, then recap them.

    Returns a JSON string for the model and the Documents as the tool artifact
    (``response_format="content_and_artifact"``). The current session id is read from the run's
    config (``config["configurable"]["session_id"]``, else ``["thread_id"]``), never from the
    model's arguments; that session's whole lineage is left out of the results.

    Arguments it cannot use (a bad date, ``limit`` below 1, an unknown role, a query with
    nothing to search) raise :class:`~langchain_core.tools.ToolException`, LangChain's way for
    a tool to tell the model it failed: with the default ``handle_tool_error`` the model gets a
    ``ToolMessage`` with ``status="error"`` whose content is ``{"success": false, "error":
    "... Fix the arguments and call session_search again."}``; ``handle_tool_error=False``
    lets the exception through to the caller.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "session_search"
    description: str = SESSION_SEARCH_DESCRIPTION
    args_schema: type[BaseModel] = SessionSearchInput
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: bool | str | Callable[[ToolException], ToolExceptionHandlerOutput] | None = (
        _error_payload
    )

    retriever: SessionRecallRetriever
    """Finds the sessions."""
    summarizer: SessionSummarizer
    """Recaps them (an LLM when configured, else the extractive recap)."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Token budget of the whole output the model reads (``None``: none). Filled best first:
    the best session's best messages, then the others' (see
    :mod:`~langchain_session_recall.summarize.budget`); the artifact keeps the full recaps.
    The budget goes to messages: a budgeted reply is compact JSON without ``null`` fields,
    ``count`` or the query echoed (unless a ``notice`` says it was changed), its recaps
    without their session line (the result's fields say it) and, when every result is an
    extractive recap, their label said once as ``"summary_note": "verbatim excerpts"``."""
    token_counter: Callable[[str], int] | None = None
    """Counts tokens for ``max_tokens``: any ``len``-like callable (``None``: 4 characters per
    token)."""

    # ------------------------------------------------------------------ helpers

    def _redact(self, text: str) -> str:
        """As the retriever redacts (the query and error messages are echoed to the model)."""
        if not self.retriever.redact:
            return text
        return redact_secrets(text, self.retriever.secret_patterns)

    def _failure(self, exc: Exception) -> ToolException:
        """What the model is told of arguments the search cannot use (redacted: the message
        may echo them)."""
        return ToolException(
            self._redact(f"{exc}. Fix the arguments and call session_search again.")
        )

    def _options(
        self,
        limit: int,
        role_filter: str | None,
        after: str | None,
        before: str | None,
        config: RunnableConfig | None,
        where: dict[str, str | None] | None = None,
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        """The retriever's per-call options, and the notices of what was changed: a ``limit``
        over the cap is clamped (said in the reply), every other bad argument raises and is
        reported as an error by the retriever's own checks."""
        to_timestamp(after)  # a bad date raises ValueError with an example of a good one
        to_timestamp(before)
        cap = self.retriever.max_k
        notices: tuple[str, ...] = ()
        if isinstance(limit, int) and limit > cap:
            notices = (f"limit {limit} is over the cap of {cap} sessions per call: {cap} shown",)
            limit = cap
        options: dict[str, Any] = {
            "k": check_k(limit, cap, name="limit"),
            "after": after or None,
            "before": before or None,
        }
        if role_filter:
            options["role_filter"] = role_filter
        options.update({k: v for k, v in (where or {}).items() if v})  # project, agent
        session_id = configured_session(config)
        if session_id:
            options["current_session_id"] = session_id
        return options, notices

    def _dumps(self, payload: dict[str, Any]) -> str:
        """The reply as JSON; under a budget, compact, without ``null`` result fields, without
        ``count`` (the results say it) and without the query echoed back unless a ``notice``
        says it was changed (the model knows what it asked)."""
        if self.max_tokens is None:
            return json.dumps(payload, ensure_ascii=False)
        payload["results"] = [
            {k: v for k, v in r.items() if v is not None} for r in payload["results"]
        ]
        lean = {
            k: v
            for k, v in payload.items()
            if k != "count" and (k != "query" or "notice" in payload)
        }
        return json.dumps(lean, ensure_ascii=False, separators=(",", ":"))

    def _recent_payload(self, docs: list[Document], notices: tuple[str, ...]) -> str:
        results = [
            {
                "session_id": d.metadata["session_id"],
                "when": d.metadata.get("when"),
                "source": d.metadata.get("source"),
                "title": d.metadata.get("title"),
                "preview": d.metadata.get("preview"),
                "message_count": d.metadata.get("message_count"),
                **_where(d.metadata),
            }
            for d in docs
        ]
        payload = {
            "success": True,
            "query": "",
            "mode": "recent",
            "results": results,
            "count": len(results),
            "sessions_searched": len(results),
        }
        _add_notice(payload, notices)
        return self._dumps(payload)

    def _search_payload(
        self,
        query: str,
        notices: tuple[str, ...],
        found: list[Document],
        summaries: list[Document],
        options: dict[str, Any],
        note: str | None = None,
    ) -> str:
        results = [
            {
                "session_id": d.metadata["session_id"],
                "when": d.metadata.get("when"),
                "source": d.metadata.get("source"),
                "model": d.metadata.get("model"),
                "title": d.metadata.get("title"),
                **_where(d.metadata),
                "summary": d.page_content,
            }
            for d in summaries
        ]
        searched = max((d.metadata.get("sessions_searched", 0) for d in found), default=0)
        how = [d.metadata["search_mode"] for d in found if "search_mode" in d.metadata]
        payload = {
            "success": True,
            "query": query,
            "mode": "search",
            "search_mode": how[0] if how else self.retriever.search_mode(query, **options),
            "results": results,
            "count": len(results),
            "sessions_searched": searched,
        }
        if note and results:
            payload["summary_note"] = note
        _add_notice(payload, notices)
        if not results and found:  # matched, but the budget holds none of them
            payload["message"] = (
                f"{len(found)} past session{'s' if len(found) != 1 else ''} matched, but none "
                f"fits this tool's max_tokens ({self.max_tokens}): the budget is too small to "
                "show a result."
            )
        elif not results:
            payload["message"] = (
                "No past session matched. Try fewer or broader keywords joined with OR, "
                "or an empty query to browse recent sessions."
            )
        return self._dumps(payload)

    def _recent(self, docs: list[Document], notices: tuple[str, ...]) -> str:
        """The recent sessions' payload, those that fit ``max_tokens`` (each whole)."""
        return self._fit(lambda d: self._recent_payload(d, notices), _whole(docs))

    def _payload(
        self,
        query: str,
        notices: tuple[str, ...],
        found: list[Document],
        summaries: list[Document],
        options: dict[str, Any],
    ) -> str:
        """The search payload within ``max_tokens``: recaps filled best first."""
        if self.max_tokens is None:
            return self._search_payload(query, notices, found, summaries, options)
        recaps, note = _lean_recaps([Recap.of(d.metadata, d.page_content) for d in summaries])
        return self._fit(
            lambda s: self._search_payload(query, notices, found, s, options, note),
            summaries,
            recaps,
        )

    def _fit(
        self,
        render: Callable[[list[Document]], str],
        docs: list[Document],
        recaps: list[Recap] | None = None,
    ) -> str:
        """``render`` of ``docs`` (recaps, or recent sessions) within ``max_tokens``;
        ``recaps``: theirs as the budget shows them (else read from ``docs``)."""
        if self.max_tokens is None:
            return render(docs)
        if recaps is None:
            recaps = [Recap.of(d.metadata, d.page_content) for d in docs]

        def shown(texts: Sequence[str]) -> str:
            kept = [
                d.model_copy(update={"page_content": t})
                for d, t in zip(docs, texts, strict=True)
                if t
            ]
            return render(kept)

        counter = self.token_counter or estimate_tokens
        scores = [search_score(d.metadata) for d in docs]
        return shown(fill_budget(recaps, shown, self.max_tokens, counter, scores))

    # ------------------------------------------------------------------ run

    def _run(
        self,
        query: str = "",
        limit: int = DEFAULT_K,
        role_filter: str | None = None,
        after: str | None = None,
        before: str | None = None,
        project: str | None = None,
        agent: str | None = None,
        *,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[str, list[Document]]:
        try:
            where = {"project": project, "agent": agent}
            options, clamped = self._options(limit, role_filter, after, before, config, where)
            # nothing searchable: EmptyQueryError, told to the model
            text, parsed, notices = _checked_query(query)
            notices += clamped
            options["parsed"] = parsed
            child = {"callbacks": run_manager.get_child()} if run_manager else {}
            docs = self.retriever.invoke(text, config=child, **options)  # type: ignore[arg-type]
            if not text:
                return self._recent(docs, notices), docs
            summaries = self.summarizer.invoke(docs, config=child)  # type: ignore[arg-type]
        except (SessionRecallError, ValueError, TypeError) as exc:
            raise self._failure(exc) from exc
        payload = self._payload(self._redact(text), notices, docs, summaries, options)
        return payload, summaries

    async def _arun(
        self,
        query: str = "",
        limit: int = DEFAULT_K,
        role_filter: str | None = None,
        after: str | None = None,
        before: str | None = None,
        project: str | None = None,
        agent: str | None = None,
        *,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> tuple[str, list[Document]]:
        try:
            where = {"project": project, "agent": agent}
            options, clamped = self._options(limit, role_filter, after, before, config, where)
            # parsed in the executor: the event loop serves other clients meanwhile
            text, parsed, notices = await run_in_executor(None, _checked_query, query)
            notices += clamped
            options["parsed"] = parsed
            child = {"callbacks": run_manager.get_child()} if run_manager else {}
            docs = await self.retriever.ainvoke(text, config=child, **options)  # type: ignore[arg-type]
            if not text:
                return self._recent(docs, notices), docs
            summaries = await self.summarizer.ainvoke(docs, config=child)  # type: ignore[arg-type]
        except (SessionRecallError, ValueError, TypeError) as exc:
            raise self._failure(exc) from exc
        payload = self._payload(self._redact(text), notices, docs, summaries, options)
        return payload, summaries


def _where(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Where a result's session happened, as far as it is known (nothing for a session that
    names none: a result stays as short as before)."""
    return {k: metadata[k] for k in ("project", "git_branch", "agent", "resume") if metadata.get(k)}


def _lean_recaps(recaps: list[Recap]) -> tuple[list[Recap], str | None]:
    """Recaps as a budgeted reply shows them, and the note said once for all: each without
    its session line (an extractive recap's head is its label, then that line, which the
    result's fields repeat); when every recap is extractive, their labels become the one
    short :data:`BUDGET_NOTE` (else each keeps its own label).

    Example:
        >>> from langchain_session_recall.summarize.extractive import extractive_label
        >>> label = extractive_label("no model configured")
        >>> lean, note = _lean_recaps([Recap((label, "Session s1, 2026-11-03"), ("hi",), (0,))])
        >>> lean[0].head, note
        ((), 'verbatim excerpts')
        >>> _lean_recaps([Recap.of_text("A model's recap.")])[1] is None
        True
    """
    heads = [r.head[:1] for r in recaps]
    if heads and all(h and is_extractive_label(h[0]) for h in heads):
        return [dataclasses.replace(r, head=()) for r in recaps], BUDGET_NOTE
    return [dataclasses.replace(r, head=h) for r, h in zip(recaps, heads, strict=True)], None


def _whole(docs: list[Document]) -> list[Document]:
    """Recent sessions as one-piece recaps: a budget lists them or leaves them out, whole."""
    whole = {RECAP_KEY: Recap((), ("-",), (0,)).to_dict()}
    return [d.model_copy(update={"metadata": {**d.metadata, **whole}}) for d in docs]


_TOOL_OPTIONS = ("name", "description", "max_tokens", "token_counter")
_WHERE_OPTION = "where_arguments"
_RETRIEVER_OPTIONS = frozenset(SessionRecallRetriever.model_fields) - {"store"}
_SUMMARIZER_OPTIONS = frozenset(SessionSummarizer.model_fields) - {"llm"}


def create_session_search_tool(
    store_or_retriever: SessionBackend | SessionRecallRetriever,
    llm: BaseChatModel | None = None,
    *,
    require_user_id: bool = False,
    **options: Any,
) -> SessionSearchTool:
    """Build the ``session_search`` tool.

    Args:
        store_or_retriever: A store (either backend) or a configured retriever.
        llm: Chat model for the recaps; without one the tool returns extractive recaps
            (the matched messages with their neighbours), at no LLM cost.
        require_user_id: Refuse (``ValueError``) to build a tool without ``user_id``. Without
            it, a tool with no ``user_id`` searches every user's sessions, and a warning is
            logged once per store when the store holds sessions of more than one user.
        **options: Retriever fields (``user_id``, ``exclude_sources``, ``max_chars``, ...) and
            summarizer fields (``max_concurrency``, ``timeout``, ``cache``, ...); also ``name``
            and ``description`` to rename the tool, and ``max_tokens`` (a token budget of its
            whole output, filled best first) with ``token_counter`` (any ``len``-like
            callable; 4 characters per token by default). ``where_arguments=True`` lets the
            model pass ``project`` and ``agent`` too (:class:`SessionSearchWhereInput`); the
            retriever fields ``project`` and ``agent`` scope every call of the tool instead.

    Example:
        >>> from langchain_session_recall import SessionStore, create_session_search_tool
        >>> tool = create_session_search_tool(SessionStore(":memory:"))
        >>> tool.name
        'session_search'
    """
    tool_fields = {k: options.pop(k) for k in _TOOL_OPTIONS if k in options}
    if options.pop(_WHERE_OPTION, False):
        tool_fields["args_schema"] = SessionSearchWhereInput
        tool_fields.setdefault("description", SESSION_SEARCH_DESCRIPTION + WHERE_ARGUMENTS_NOTE)
    unknown = set(options) - _RETRIEVER_OPTIONS - _SUMMARIZER_OPTIONS
    if unknown:
        raise InvalidOptionError(
            f"unknown option(s) {sorted(unknown)}; retriever options: "
            f"{sorted(_RETRIEVER_OPTIONS)}; summarizer options: {sorted(_SUMMARIZER_OPTIONS)}"
        )
    retriever_opts = {k: v for k, v in options.items() if k in _RETRIEVER_OPTIONS}
    if llm is not None:  # message ids let the model cite its sources (checked afterwards)
        retriever_opts.setdefault("show_message_ids", True)
    if isinstance(store_or_retriever, SessionRecallRetriever):
        retriever = store_or_retriever.model_copy(update=retriever_opts)
    else:
        retriever = SessionRecallRetriever(store=store_or_retriever, **retriever_opts)
    _check_tenant(retriever, require_user_id)
    summarizer_opts = {k: v for k, v in options.items() if k in _SUMMARIZER_OPTIONS}
    summarizer_opts.setdefault("store", retriever.store)  # its summary cache outlives the process
    summarizer = SessionSummarizer(llm=llm, **summarizer_opts)
    return SessionSearchTool(retriever=retriever, summarizer=summarizer, **tool_fields)
