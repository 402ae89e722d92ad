"""``SessionRecorder``: record a running LangChain/LangGraph agent into a session store.

Pass it as a callback and every turn is written as it happens: the new user message(s) when a
chat model starts, the assistant message (with its tool calls and the model name) when it ends,
each tool result when a tool ends. Sub-agents (an agent wrapped as a tool, a compiled graph used
as a node of another graph, or a nested run whose config carries ``metadata={"session_id": ...}``)
are written to child sessions
whose ``parent_session_id`` is the caller's session, so search folds them back into the root.

The recorder never breaks the agent it observes, and never drops a message it accepted: a write
that finds the store busy is tried again (:class:`~langchain_session_recall.backends.retry.
WriteRetry`); one that still fails is counted (``errors``), logged as an ERROR naming the session
and the number of messages, and its messages are kept, in order, for the session's next write or
:meth:`SessionRecorder.flush`. The run goes on meanwhile.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.runnables.config import var_child_runnable_config

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.backends.retry import WriteRetry
from langchain_session_recall.errors import InvalidMessageError, SessionNotFoundError
from langchain_session_recall.messages import to_row
from langchain_session_recall.models import StoredMessage

__all__ = ["SessionRecorder"]


F = TypeVar("F", bound=Callable[..., Any])
logger = logging.getLogger(__name__)

_GRAPH_STEP_TAG = "graph:step:"
# Bounds that keep a long-lived recorder (one per server, many threads) from growing forever.
# Forgetting a session's state only costs a lookup when it is seen again.
_MAX_SESSIONS = 1024
_MAX_IDS = 4096
RECORDER_AGENT = "recorder"
"""The ``agent`` of the sessions a recorder creates."""
_TAIL = 50  # stored messages read to find a session's unanswered turn (once per session)


def _counted(method: F) -> F:
    """Count a callback's failures in ``errors``, then let them go on.

    LangChain's callback manager already keeps a handler's exception away from the run it
    observes (``raise_error = False``: it logs ``Error in SessionRecorder.<event> callback``
    and the run continues); the count is what it does not keep.
    """

    @functools.wraps(method)
    def wrapper(self: SessionRecorder, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception:
            self.errors += 1
            raise

    return cast(F, wrapper)


@dataclass
class _Run:
    parent: UUID | None
    kind: str  # "chain", "tool", "model"
    name: str | None = None
    explicit_session: str | None = None
    graph: bool = False
    model: str | None = None
    tool_call_id: str | None = None
    session: str | None = None  # set once this run owns a (child) session
    configured: str | None = None  # a root's configurable session_id / thread_id, once seen
    deferred: list[BaseMessage] = field(default_factory=list)  # root input awaiting its session


@dataclass
class _Batch:
    """Messages accepted for a session, not stored yet (``filtered``: already checked against
    what the session holds, so a retry writes them as they are)."""

    messages: list[BaseMessage]
    model: str | None
    filtered: bool = False


@dataclass
class _SessionState:
    parent: str | None
    created: bool = False
    model: str | None = None
    recorded_ids: dict[str, None] = field(default_factory=dict)  # insertion-ordered set
    pending_inputs: list[str] = field(default_factory=list)  # user turns recorded from graph input
    # User texts a failed run wrote and left unanswered, which a retry must not write again
    # (None: not read from the store yet); and those the run going on wrote.
    retry_texts: list[str] | None = None
    turn_texts: list[str] = field(default_factory=list)
    unsaved: list[_Batch] = field(default_factory=list)  # accepted, kept until written

    @property
    def unsaved_count(self) -> int:
        return sum(len(b.messages) for b in self.unsaved)


def _new_user_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The user turn at the end of a model input: human messages after the last AI/tool one.

    Earlier history was recorded when it happened (or belongs to a past run); in an agent loop
    the input ends with tool results, so nothing is returned for those calls.
    """
    tail: list[BaseMessage] = []
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            tail.append(message)
        elif isinstance(message, SystemMessage):
            continue
        else:
            break
    return list(reversed(tail))


def unanswered_user_texts(messages: Sequence[StoredMessage]) -> list[str]:
    """The user messages a session ends with, after everything else: a turn that a run
    (which then failed) wrote and nothing answered (pure).

    Example:
        >>> from langchain_session_recall.models import StoredMessage
        >>> def m(i, role, text):
        ...     return StoredMessage(i, "s", role, text, float(i))
        >>> unanswered_user_texts([m(1, "user", "hi"), m(2, "assistant", "hello"),
        ...                        m(3, "user", "why?"), m(4, "user", "and how?")])
        ['why?', 'and how?']
        >>> unanswered_user_texts([m(1, "user", "hi"), m(2, "assistant", "hello")])
        []
    """
    texts: list[str] = []
    for message in reversed(messages):
        if message.role != "user":
            break
        texts.append(message.content)
    return texts[::-1]


def _stamped(message: BaseMessage, now: float) -> BaseMessage:
    """``message`` with the time it was accepted, unless it carries a time of its own, so a
    message written later (after a failed write) keeps when it happened."""
    extra = message.additional_kwargs or {}
    if "timestamp" in extra or "timestamp" in message.response_metadata:
        return message
    return message.model_copy(update={"additional_kwargs": {**extra, "timestamp": now}})


def _stored_text(message: BaseMessage) -> str | None:
    try:
        return to_row(message, now=0.0).content
    except InvalidMessageError:
        return None


def _input_messages(inputs: Any) -> list[BaseMessage]:
    """Messages in a graph's input (``{"messages": [...]}`` or a list), else none."""
    if isinstance(inputs, Mapping):
        inputs = inputs.get("messages")
    if not isinstance(inputs, list) or not inputs:
        return []
    try:
        return convert_to_messages(inputs)
    except (ValueError, TypeError, NotImplementedError):
        return []


def configured_session(config: Mapping[str, Any] | None) -> str | None:
    """The session a run's config names: ``configurable.session_id``, else
    ``configurable.thread_id`` (pure).

    Example:
        >>> configured_session({"configurable": {"thread_id": "t1"}})
        't1'
        >>> configured_session({"configurable": {}}) is None
        True
    """
    configurable = (config or {}).get("configurable") or {}
    for key in ("session_id", "thread_id"):
        value = configurable.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


def _model_name(*sources: Mapping[str, Any] | None) -> str | None:
    for source in sources:
        if not source:
            continue
        for key in ("model_name", "model", "ls_model_name", "model_id"):
            value = source.get(key)
            if isinstance(value, str) and value:
                return value
    return None


class SessionRecorder(BaseCallbackHandler):
    """Record an agent's conversation into a store while it runs.

    Args:
        store: Where to write (a read-write store, either backend).
        session_id: The session to record into. ``None`` (default): each run names its
            session, so each thread is one session. What names it, first found wins: the
            run's ``metadata`` ``session_id`` or ``thread_id``, then its ``configurable``
            ``session_id`` or ``thread_id`` (any runnable: a graph, ``prompt | model``, a
            lambda); runs with none of these share one session per recorder. A chat model
            invoked on its own shows its callbacks no ``configurable`` (LangChain passes
            callbacks only its ``metadata``): give it ``metadata={"thread_id": ...}``.
        source: ``sessions.source`` of the sessions created (child sessions too).
        user_id: Owner written on created sessions (for multi-tenant search).
        subagent_source: ``source`` of child sessions (defaults to ``source``).
        title: Title written on the root session(s) when they are created.
        write_retry: How a write that finds the store busy is tried again (default: 3
            attempts, 0.5 s then 1 s apart, plus jitter; on SQLite each attempt also waits up
            to the store's ``busy_timeout``, 30 s by default, for the lock).

    Writes: every message is written when its event arrives, inline (so an agent's messages
    keep their order). A write that fails is retried as ``write_retry`` says; if it still
    fails the messages are not dropped: an ERROR is logged (``langchain_session_recall.
    recorder``) naming the session and how many messages wait, ``errors`` counts it, and the
    messages are kept in memory, in order, and written before the session's next message.
    :meth:`flush` writes them at once; call it before the process exits (``pending`` says how
    many are kept). A message that can never be stored (an unknown message type) is left out
    with an ERROR.

    Works with ``create_agent`` agents, LangGraph graphs and plain chains, sync and async
    (its callbacks run inline, so messages keep their order).

    Retrying a failed run writes nothing twice: messages with an id are written once per
    session, and a user message that a failed run wrote and nothing answered is not written
    again when the retry sends the same text (a new recorder finds that turn at the end of
    the stored session).

    Example:
        >>> from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> recorder = SessionRecorder(store, session_id="chat-1")
        >>> model = GenericFakeChatModel(messages=iter([AIMessage("Use CORS middleware.")]))
        >>> _ = model.invoke("How do I fix the CORS error?", config={"callbacks": [recorder]})
        >>> [(m.role, m.content) for m in store.get_messages("chat-1")]
        [('user', 'How do I fix the CORS error?'), ('assistant', 'Use CORS middleware.')]
    """

    run_inline = True  # async runs call us in the event loop, in order, not in an executor
    raise_error = False

    def __init__(
        self,
        store: SessionBackend,
        *,
        session_id: str | None = None,
        source: str = "langchain",
        user_id: str | None = None,
        subagent_source: str | None = None,
        title: str | None = None,
        write_retry: WriteRetry | None = None,
    ) -> None:
        self.store = store
        self.write_retry = write_retry or WriteRetry()
        self.session_id = session_id
        self.source = source
        self.user_id = user_id
        self.subagent_source = subagent_source or source
        self.title = title
        self.errors = 0
        """Writes that failed after their retries (their messages are kept: see
        :attr:`pending`) and events that could not be handled; each was logged."""
        self._fallback_id = session_id or f"session-{uuid.uuid4().hex[:12]}"
        self._runs: dict[UUID, _Run] = {}
        self._sessions: OrderedDict[str, _SessionState] = OrderedDict()
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ run bookkeeping

    def _register(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        kind: str,
        *,
        name: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> _Run:
        meta = metadata or {}
        explicit = meta.get("session_id") or meta.get("thread_id")
        agent = meta.get("lc_agent_name")
        if not agent and name in (None, "LangGraph"):
            name = meta.get("langgraph_node")  # a sub-graph is best named by its node
        run = _Run(
            parent=parent_run_id if parent_run_id in self._runs else None,
            kind=kind,
            name=str(agent) if agent else name,
            explicit_session=str(explicit) if explicit else None,
        )
        self._runs[run_id] = run
        root = self._runs.get(parent_run_id) if parent_run_id is not None else None
        if root is not None and root.parent is None and root.configured is None:
            # LangChain hands callbacks no config; a root's children run inside its config
            # (a context variable), so its first child shows the root's configurable keys.
            root.configured = configured_session(var_child_runnable_config.get())
        # A run tagged as a graph step is a node: its parent is a graph. A graph with a parent
        # of its own is a sub-graph, i.e. a sub-agent.
        if parent_run_id in self._runs and any(t.startswith(_GRAPH_STEP_TAG) for t in tags or ()):
            self._runs[parent_run_id].graph = True
        return run

    def _owner(self, run_id: UUID, *, tool_boundary: bool) -> tuple[UUID, _Run]:
        """The nearest run that owns a session, walking up from ``run_id``."""
        current: UUID | None = run_id
        while current is not None:
            run = self._runs[current]
            if run.parent is None:
                return current, run
            if run.kind == "tool":
                # A tool owns a session only for the model runs beneath it (a sub-agent); its
                # own result belongs to the agent that called it.
                if tool_boundary and current != run_id:
                    return current, run
            elif run.session is not None or run.graph or self._own_session_id(run):
                return current, run
            current = run.parent
        raise KeyError(run_id)  # unreachable: the walk ends at a root

    def _own_session_id(self, run: _Run) -> bool:
        """The run names a session other than its parent's (``metadata={"session_id": ...}``)."""
        parent = self._runs.get(run.parent) if run.parent is not None else None
        return bool(run.explicit_session) and (
            parent is None or run.explicit_session != parent.explicit_session
        )

    def _session_for(self, run_id: UUID, *, tool_boundary: bool = True) -> str:
        owner_id, owner = self._owner(run_id, tool_boundary=tool_boundary)
        if owner.session is not None:
            return owner.session
        if owner.parent is None:
            owner.session = (
                self.session_id or owner.explicit_session or owner.configured or self._fallback_id
            )
            self._state(owner.session)
            if owner.deferred:
                self._record_input(owner.session, owner.deferred)
                owner.deferred = []
            return owner.session
        parent_session = self._session_for(owner.parent, tool_boundary=False)
        if self._own_session_id(owner) and owner.explicit_session:
            child = owner.explicit_session
        else:
            child = f"{parent_session}/{owner.name or owner.kind}-{owner_id.hex[-12:]}"
        owner.session = child
        self._state(child, parent=parent_session)
        return child

    def _state(self, session_id: str, *, parent: str | None = None) -> _SessionState:
        state = self._sessions.get(session_id)
        if state is None:
            state = self._sessions[session_id] = _SessionState(parent=parent)
            while len(self._sessions) > _MAX_SESSIONS:
                # the oldest session with nothing kept: unsaved messages are never forgotten
                victim = next(
                    (k for k, v in self._sessions.items() if not v.unsaved and k != session_id),
                    None,
                )
                if victim is None:
                    break
                del self._sessions[victim]
        else:
            self._sessions.move_to_end(session_id)
        return state

    def _ensure_session(self, session_id: str, model: str | None) -> _SessionState:
        state = self._state(session_id)
        if not state.created:
            existing = self.store.get_session(session_id)
            if existing is None:
                if state.parent is not None:
                    self._ensure_session(state.parent, None)
                self.store.add_session(
                    session_id,
                    source=self.source if state.parent is None else self.subagent_source,
                    parent_session_id=state.parent,
                    model=model,
                    title=self.title if state.parent is None else None,
                    user_id=self.user_id,
                    started_at=time.time(),
                    agent=RECORDER_AGENT,
                )
            elif model and existing.model is None:
                self.store.add_session(session_id, model=model)
            state.created = True
            state.model = model or (existing.model if existing else None)
            if state.retry_texts is None:
                tail = self.store.get_messages(session_id, last=_TAIL) if existing else []
                state.retry_texts = unanswered_user_texts(tail)
        elif model and state.model is None:
            self.store.add_session(session_id, model=model)
            state.model = model
        return state

    def _record(self, session_id: str, messages: Sequence[BaseMessage], model: str | None) -> None:
        """Accept ``messages`` for the session, then write everything it has waiting."""
        now = time.time()
        accepted = []
        for m in messages:
            try:
                to_row(m, now=now)
            except InvalidMessageError as exc:
                self.errors += 1
                logger.error(
                    "SessionRecorder left out a message of session %r: %s", session_id, exc
                )
                continue
            accepted.append(_stamped(m, now))
        state = self._state(session_id)
        state.unsaved.append(_Batch(accepted, model))
        self._write_unsaved(session_id, state)

    def _write_unsaved(self, session_id: str, state: _SessionState) -> None:
        """Write the session's kept batches, in order, retrying while the store is busy; what
        still fails stays kept (logged, counted)."""
        try:
            self.write_retry.call(
                lambda: self._drain(session_id, state), what=f"recording session {session_id!r}"
            )
        except Exception as exc:
            self.errors += 1
            if isinstance(exc, SessionNotFoundError):
                state.created = False  # removed meanwhile: created again on the next attempt
            logger.error(
                "SessionRecorder could not write %d message(s) of session %r to %s (%s); "
                "they are kept and written before the session's next message, or by flush()",
                state.unsaved_count,
                session_id,
                self.store.describe(),
                exc,
            )

    def _drain(self, session_id: str, state: _SessionState) -> None:
        while state.unsaved:
            batch = state.unsaved[0]
            self._ensure_session(session_id, batch.model)
            if not batch.filtered:
                batch.messages = self._fresh(state, batch.messages)
                batch.filtered = True
            if batch.messages:
                self.store.add_messages(session_id, batch.messages)
            state.unsaved.pop(0)

    def _fresh(self, state: _SessionState, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """What of ``messages`` the session does not hold yet (marked as held from now on)."""
        fresh = []
        for m in messages:
            if m.id and m.id in state.recorded_ids:
                continue
            if isinstance(m, HumanMessage):
                text = _stored_text(m)
                state.turn_texts.append(text or "")
                if state.retry_texts and text in state.retry_texts:
                    # An earlier run wrote this turn and failed before its answer: a retry.
                    state.retry_texts.remove(text)
                    continue
            elif isinstance(m, AIMessage) and not m.tool_calls:
                state.turn_texts.clear()  # the turn is answered: a later run is a new turn
                if state.retry_texts:
                    state.retry_texts.clear()
            fresh.append(m)
            if m.id:
                state.recorded_ids[m.id] = None
        while len(state.recorded_ids) > _MAX_IDS:
            del state.recorded_ids[next(iter(state.recorded_ids))]
        return fresh

    # ------------------------------------------------------------------ kept messages

    @property
    def pending(self) -> int:
        """Messages accepted but not stored yet: kept after a failed write (see :meth:`flush`)."""
        with self._lock:
            return sum(state.unsaved_count for state in self._sessions.values())

    def flush(self) -> int:
        """Write every message kept after a failed write now (retrying as ``write_retry``
        says); returns how many are still not stored (0: all are).

        Example:
            >>> from langchain_session_recall import SessionStore
            >>> SessionRecorder(SessionStore(":memory:")).flush()
            0
        """
        with self._lock:
            for session_id, state in list(self._sessions.items()):
                if state.unsaved:
                    self._write_unsaved(session_id, state)
        return self.pending

    async def aflush(self) -> int:
        """:meth:`flush`, run in a worker thread so the event loop is not blocked."""
        return await asyncio.get_running_loop().run_in_executor(None, self.flush)

    def _record_input(self, session_id: str, messages: Sequence[BaseMessage]) -> None:
        """Record a root's input messages (a model start finds them pending, not new)."""
        self._record(session_id, messages, None)
        self._state(session_id).pending_inputs.extend(m.text for m in messages)

    def _forget(self, run_id: UUID, *, failed: bool = False) -> None:
        run = self._runs.get(run_id)
        if run is not None and run.deferred:
            self._session_for(run_id)  # a root that never reached a model: its input still counts
        run = self._runs.pop(run_id, None)
        if run is not None and run.session is not None:  # the run owning a session ends
            state = self._sessions.get(run.session)
            if state is not None:
                if run.parent is None:
                    state.pending_inputs.clear()
                # A failed run's unanswered user turn is what a retry sends again.
                state.retry_texts = (state.retry_texts or []) + state.turn_texts if failed else []
                state.turn_texts = []

    # ------------------------------------------------------------------ callbacks

    @_counted
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Track the run (graphs, nodes and chains decide which session messages go to)."""
        with self._lock:
            run = self._register(
                run_id,
                parent_run_id,
                "chain",
                name=kwargs.get("name"),
                tags=tags,
                metadata=metadata,
            )
            if run.parent is None:
                new = _new_user_messages(_input_messages(inputs))
                if new and not (self.session_id or run.explicit_session):
                    run.deferred = new  # its session is known when its first child starts
                elif new:
                    self._record_input(self._session_for(run_id), new)

    @_counted
    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Forget the finished run."""
        with self._lock:
            self._forget(run_id)

    @_counted
    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Forget the failed run."""
        with self._lock:
            self._forget(run_id, failed=True)

    @_counted
    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Record the new user message(s) of the model input."""
        with self._lock:
            run = self._register(run_id, parent_run_id, "model", tags=tags, metadata=metadata)
            run.model = _model_name(kwargs.get("invocation_params"), metadata)
            session = self._session_for(run_id)
            new = _new_user_messages(messages[0]) if messages else []
            pending = self._state(session).pending_inputs
            unseen = []
            for message in new:  # the graph input, now with an id: recorded at graph start
                if message.text in pending:
                    pending.remove(message.text)
                else:
                    unseen.append(message)
            self._record(session, unseen, run.model)

    @_counted
    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Track a completion-model run; its prompt is a template render, not a user turn."""
        with self._lock:
            run = self._register(run_id, parent_run_id, "model", tags=tags, metadata=metadata)
            run.model = _model_name(kwargs.get("invocation_params"), metadata)

    @_counted
    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        """Record the assistant message with its tool calls and the model name."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return
            try:
                generation = response.generations[0][0] if response.generations else None
                if generation is None:
                    return
                if isinstance(generation, ChatGeneration):
                    message: BaseMessage = generation.message
                else:
                    message = AIMessage(content=generation.text)
                model = _model_name(response.llm_output, message.response_metadata) or run.model
                self._record(self._session_for(run_id), [message], model)
            finally:
                self._forget(run_id)

    @_counted
    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Forget the failed model run."""
        with self._lock:
            self._forget(run_id, failed=True)

    @_counted
    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Track the tool run (a model called beneath it is a sub-agent)."""
        with self._lock:
            name = kwargs.get("name") or (serialized or {}).get("name")
            run = self._register(run_id, parent_run_id, "tool", name=name, metadata=metadata)
            # The tool's own name wins over an agent name inherited through metadata.
            run.name = name or run.name
            call_id = kwargs.get("tool_call_id")
            run.tool_call_id = str(call_id) if call_id else None

    @_counted
    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Record the tool result in the calling agent's session."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return
            try:
                messages = self._tool_messages(output, run)
                if messages:
                    self._record(self._session_for(run_id, tool_boundary=False), messages, None)
            finally:
                self._forget(run_id)

    @_counted
    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Record the tool's error as its result, so the transcript shows what happened."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return
            try:
                message = ToolMessage(
                    content=f"Error: {error!r}",
                    name=run.name,
                    tool_call_id=run.tool_call_id or "",
                    status="error",
                )
                self._record(self._session_for(run_id, tool_boundary=False), [message], None)
            finally:
                self._forget(run_id, failed=True)

    @_counted
    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Track the run, so model calls made by a retriever stay in the right session."""
        with self._lock:
            self._register(run_id, parent_run_id, "chain", tags=tags, metadata=metadata)

    @_counted
    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Forget the finished retriever run."""
        with self._lock:
            self._forget(run_id)

    @_counted
    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Forget the failed retriever run."""
        with self._lock:
            self._forget(run_id, failed=True)

    @staticmethod
    def _tool_messages(output: Any, run: _Run) -> list[BaseMessage]:
        if isinstance(output, ToolMessage):
            if output.name is None and run.name:
                output = output.model_copy(update={"name": run.name})
            return [output]
        update = getattr(output, "update", None)  # a LangGraph Command returned by the tool
        if isinstance(update, Mapping):
            found = update.get("messages") or []
            return [m for m in found if isinstance(m, ToolMessage)]
        if output is None:
            return []
        content = output if isinstance(output, (str, list)) else str(output)
        return [ToolMessage(content=content, name=run.name, tool_call_id=run.tool_call_id or "")]
