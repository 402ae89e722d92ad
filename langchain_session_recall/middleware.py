"""``SessionRecallMiddleware``: past sessions recalled into a LangChain v1 agent's context.

``create_agent(model, tools, middleware=[SessionRecallMiddleware(store=store)])`` searches the
user's past sessions once per run, with the run's latest user message, before the first model
call, and shows what it found to every model call of that run as a marked block of the system
message, within a token budget.

Why the model request and not the thread's messages: recalled context is a view of other
conversations chosen for this question, not something said in this one. Written into the
thread's ``messages`` it would be checkpointed, recorded by :class:`~langchain_session_recall.
SessionRecorder` as part of the session (and so found again by the next search), summarized by
``SummarizationMiddleware`` and piled up, one block per run. LangChain's own convention for
context a middleware derives each turn (``dynamic_prompt``, the tool-selection and
context-editing middlewares) is to change the ``ModelRequest`` in ``wrap_model_call`` and leave
the state alone. The text found is carried from ``before_agent`` to the model calls of the run
in a private, untracked state key (``UntrackedValue``: never checkpointed), as
``ModelCallLimitMiddleware`` keeps its per-run count.

Why a block of the system message and not a second ``SystemMessage``: several providers take
one system prompt, at the start (Anthropic, Gemini); ``ModelRequest`` carries it apart from the
messages, and a block appended to it reaches every provider.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any

from langchain_core.documents import Document
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from typing_extensions import NotRequired

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.errors import InvalidArgumentError, MissingFeatureError

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        AgentState,
        ModelRequest,
        ModelResponse,
    )
    from langchain.agents.middleware.types import ModelCallResult, PrivateStateAttr
    from langgraph.channels.untracked_value import UntrackedValue
    from langgraph.runtime import Runtime
except ImportError as exc:  # pragma: no cover - the agents extra is not installed
    raise MissingFeatureError(
        "SessionRecallMiddleware needs LangChain v1 agents: "
        "pip install 'langchain-session-recall[agents]'"
    ) from exc
from langchain_session_recall.core.redaction import describe_error
from langchain_session_recall.retriever import SessionRecallRetriever
from langchain_session_recall.summarize.budget import (
    Recap,
    TokenCounter,
    estimate_tokens,
    fill_budget,
    search_score,
)
from langchain_session_recall.summarize.summarizer import SessionSummarizer

__all__ = ["RECALLED_CONTEXT_TAG", "RECALL_STATE_KEY", "SessionRecallMiddleware"]

logger = logging.getLogger(__name__)

RECALL_STATE_KEY = "session_recall_context"
"""The private, untracked state key that carries a run's recalled text to its model calls."""
RECALLED_CONTEXT_TAG = "recalled_context"
"""The tag around the recalled block: ``<recalled_context>...</recalled_context>``."""
DEFAULT_MAX_TOKENS = 1000
_INTRO = "From earlier conversations with this user (not this one); may be outdated or unrelated."


class SessionRecallState(AgentState[Any]):
    """The agent state with the run's recalled text (private, never checkpointed)."""

    session_recall_context: NotRequired[Annotated[str | None, UntrackedValue, PrivateStateAttr]]


class SessionRecallMiddleware(AgentMiddleware[SessionRecallState, Any, Any]):
    """Recall of past sessions for ``create_agent``: searched once per run, shown to the model.

    Before the first model call of a run, the run's latest user message is searched in the store;
    the best ``k`` sessions' recaps (extractive, or a model's with ``summarizer=``) are fitted to
    ``max_tokens`` best first (the best session's best message, then the best of each session
    the search scored close to it, then the rest, each message whole when it fits; see
    :func:`~langchain_session_recall.summarize.budget.fill_budget`) and appended to the system
    message of every model call of that run, inside ``<recalled_context>`` tags. Nothing is added
    when nothing matches. The thread in progress (``thread_id``, or ``session_id``, of the run's
    config: the session the recorder records it as) is never searched, and the search is scoped to
    ``user_id``: the run's context (``context={"user_id": ...}`` or an object with a ``user_id``
    attribute), else its config (``configurable.user_id``), else the one given here. Text is
    redacted as every other surface redacts it. A failure (the store down, a bad summarizer) is
    logged and the run goes on without recall.

    Args:
        store: The store to search (either backend); or pass ``retriever``.
        retriever: A configured :class:`~langchain_session_recall.SessionRecallRetriever`
            (hybrid search, filters); its ``k`` is replaced by ``k``.
        k: Sessions recalled per run.
        max_tokens: Budget of the recalled block, in tokens (``None``: no bound beyond each
            recap's own size).
        token_counter: Counts tokens: any ``len``-like callable (default: 4 characters per
            token).
        summarizer: Recaps the sessions with a model; default: extractive recaps, no model.
        user_id: The tenant when the run names none.
        require_user_id: Recall nothing (and warn) in a run that names no ``user_id`` instead
            of searching every user's sessions.

    Example:
        .. code-block:: python

            from langchain.agents import create_agent
            from langchain_session_recall import SessionRecallMiddleware, SessionStore

            store = SessionStore("recall.db")
            agent = create_agent(
                "openai:gpt-4.1-mini",
                tools=[],
                middleware=[SessionRecallMiddleware(store=store, k=3, max_tokens=1000)],
            )
            agent.invoke(
                {"messages": [{"role": "user", "content": "How did we fix the CORS error?"}]},
                config={"configurable": {"thread_id": "chat-42", "user_id": "ann"}},
            )
    """

    state_schema = SessionRecallState

    def __init__(
        self,
        store: SessionBackend | None = None,
        *,
        retriever: SessionRecallRetriever | None = None,
        k: int = 3,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        token_counter: TokenCounter | None = None,
        summarizer: SessionSummarizer | None = None,
        user_id: str | None = None,
        require_user_id: bool = False,
    ) -> None:
        super().__init__()
        if (store is None) == (retriever is None):
            raise InvalidArgumentError("pass either store=... or retriever=..., not both")
        if k < 1:
            raise InvalidArgumentError(f"k must be at least 1, got {k}")
        if max_tokens is not None and max_tokens < 1:
            raise InvalidArgumentError(f"max_tokens must be at least 1 (or None), got {max_tokens}")
        base = retriever or SessionRecallRetriever(store=store)  # type: ignore[arg-type]
        self.retriever = base.model_copy(update={"k": k})
        self.k = k
        self.max_tokens = max_tokens
        self.token_counter: TokenCounter = token_counter or estimate_tokens
        self.summarizer = summarizer or SessionSummarizer(llm=None, cache=False)
        self.user_id = user_id
        self.require_user_id = require_user_id
        self.tools = []

    # ------------------------------------------------------------------ hooks

    def before_agent(
        self, state: SessionRecallState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Search once per run, before its first model call."""
        try:
            search = self._search(state, runtime)
            if search is None:
                return {RECALL_STATE_KEY: None}
            retriever, query, config = search
            docs = retriever.invoke(query, config=config)
            recaps = self.summarizer.invoke(docs, config=config) if docs else []
            return {RECALL_STATE_KEY: self._render(recaps)}
        except Exception as exc:  # recall is a help: it must never cost the run
            logger.warning("session recall failed, the run goes on without it: %s", _why(exc))
            return {RECALL_STATE_KEY: None}

    async def abefore_agent(
        self, state: SessionRecallState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async :meth:`before_agent`."""
        try:
            search = self._search(state, runtime)
            if search is None:
                return {RECALL_STATE_KEY: None}
            retriever, query, config = search
            docs = await retriever.ainvoke(query, config=config)
            recaps = await self.summarizer.ainvoke(docs, config=config) if docs else []
            return {RECALL_STATE_KEY: self._render(recaps)}
        except Exception as exc:
            logger.warning("session recall failed, the run goes on without it: %s", _why(exc))
            return {RECALL_STATE_KEY: None}

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """Every model call of the run sees the recalled block."""
        return handler(_with_recall(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async :meth:`wrap_model_call`."""
        return await handler(_with_recall(request))

    # ------------------------------------------------------------------ steps

    def _search(
        self, state: Mapping[str, Any], runtime: Runtime[Any]
    ) -> tuple[SessionRecallRetriever, str, RunnableConfig] | None:
        """The retriever scoped to the run's user, the query and the config to search with;
        ``None`` when there is nothing to search (no user message, or no user when one is
        required)."""
        query = latest_user_text(state.get("messages") or ())
        if not query.strip():
            return None
        config = _run_config()
        user_id = _run_user(runtime, config) or self.user_id
        if user_id is None and self.require_user_id:
            logger.warning(
                "session recall skipped: require_user_id=True and the run names no user_id "
                "(pass context={'user_id': ...} or configurable.user_id)"
            )
            return None
        retriever = self.retriever
        if user_id is not None and user_id != retriever.user_id:
            retriever = retriever.model_copy(update={"user_id": user_id})
        return retriever, query, config  # the retriever leaves the config's thread out

    def _render(self, recaps: Sequence[Document]) -> str | None:
        """The recalled block within ``max_tokens``; ``None`` when nothing is shown."""
        found = [d for d in recaps if d.metadata.get("mode") != "recent"]
        shown = [
            dataclasses.replace(Recap.of(d.metadata, d.page_content), head=(_session_line(d),))
            for d in found
        ]
        if not shown:
            return None
        texts = [r.render(r.shown) for r in shown]
        if self.max_tokens is not None:
            scores = [search_score(d.metadata) for d in found]
            texts = fill_budget(shown, recalled_block, self.max_tokens, self.token_counter, scores)
        return recalled_block(texts) if any(texts) else None


def recalled_block(texts: Sequence[str]) -> str:
    """The marked block the model sees, from each session's text (``""``: left out).

    Example:
        >>> print(recalled_block(["### Session s1\\n[USER]: hi", ""]))
        <recalled_context>
        From earlier conversations with this user (not this one); may be outdated or unrelated.
        <BLANKLINE>
        ### Session s1
        [USER]: hi
        </recalled_context>
    """
    body = "\n\n".join(t for t in texts if t)
    return f"<{RECALLED_CONTEXT_TAG}>\n{_INTRO}\n\n{body}\n</{RECALLED_CONTEXT_TAG}>"


def latest_user_text(messages: Sequence[AnyMessage | Any]) -> str:
    """The text of the last user message (``""`` when there is none).

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> latest_user_text([HumanMessage("first"), AIMessage("ok"), HumanMessage("second")])
        'second'
    """
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text if isinstance(message.text, str) else message.text()
    return ""


def _session_line(doc: Document) -> str:
    meta = doc.metadata
    title = meta.get("title")
    line = f"### Session {meta.get('session_id', '?')}, {meta.get('when') or 'unknown date'}"
    return f"{line}: {title}" if title else line


def _with_recall(request: ModelRequest[Any]) -> ModelRequest[Any]:
    """``request`` with the run's recalled block appended to its system message."""
    text = request.state.get(RECALL_STATE_KEY) if request.state else None
    if not isinstance(text, str) or not text:
        return request
    system = request.system_message
    if system is None:
        return request.override(system_message=SystemMessage(content=text))
    if isinstance(system.content, str):
        content: Any = f"{system.content}\n\n{text}" if system.content else text
    else:
        content = [*system.content, {"type": "text", "text": text}]
    return request.override(system_message=system.model_copy(update={"content": content}))


def _run_config() -> RunnableConfig:
    """The run's config inside a graph node (empty outside one)."""
    try:
        from langgraph.config import get_config

        return get_config()
    except RuntimeError:
        return {}


def _run_user(runtime: Runtime[Any], config: RunnableConfig) -> str | None:
    """``user_id`` from the run's context (a mapping or an object), else its config."""
    context = getattr(runtime, "context", None)
    found = context.get("user_id") if isinstance(context, Mapping) else None
    found = found if found is not None else getattr(context, "user_id", None)
    if found is None:
        found = (config.get("configurable") or {}).get("user_id")
    return str(found) if found is not None and str(found) else None


def _why(exc: BaseException) -> str:
    """The error as a log line shows it: redacted, bounded."""
    return describe_error(exc)
