"""``SessionChatMessageHistory``: a session of the store as a LangChain chat message history.

``RunnableWithMessageHistory`` (or any code that takes a ``BaseChatMessageHistory``) then
writes its conversation into the store, where it is searchable at once, by the retriever, the
tool, the CLI and the MCP server. It follows langchain-postgres' ``PostgresChatMessageHistory``:
``messages`` (a property, settable), ``get_messages``/``aget_messages``,
``add_messages``/``aadd_messages``, ``clear``/``aclear``, messages in the order they were added.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables.config import run_in_executor

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.errors import InvalidArgumentError, SessionOwnerError
from langchain_session_recall.models import StoredMessage
from langchain_session_recall.recall.tool_calls import parse_tool_calls

__all__ = ["SessionChatMessageHistory"]


class SessionChatMessageHistory(BaseChatMessageHistory):
    """The messages of one session of a store, as a ``BaseChatMessageHistory``.

    The session is created (with ``source``, ``user_id`` and ``title``) when the first messages
    are added; reading a session that does not exist gives no messages. ``clear()`` forgets the
    session (:meth:`~langchain_session_recall.SessionStore.delete_sessions`: its messages, its
    sub-sessions, its cached recaps, its words in the index); adding messages afterwards starts
    it anew. Setting ``messages`` replaces this session's messages in one transaction (all
    checked first; its sub-sessions stay). Messages come back in the order they were added.
    Tool calls and tool results round-trip (``AIMessage.tool_calls``, ``ToolMessage``), and so
    does content with images or other non-text parts (its text parts are what is searched).

    Args:
        store: Any session store (SQLite or PostgreSQL).
        session_id: The conversation's id (any non-empty text; the store's session id).
        source: The session's source, when this history creates it.
        user_id: The session's owner (tenant): the history reads and writes only a session of
            this user (another user's raises :class:`~langchain_session_recall.errors.
            SessionOwnerError`), and creates it with this owner.
        title: The session's title, when this history creates it.

    Raises:
        InvalidArgumentError: ``session_id`` is empty (a ``ValueError``).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langchain_session_recall import SessionRecallRetriever, SessionStore
        >>> store = SessionStore(":memory:")
        >>> history = SessionChatMessageHistory(store=store, session_id="chat-1")
        >>> history.add_messages([HumanMessage("my kiln cracked a pot"), AIMessage("Cool it")])
        >>> [m.content for m in history.messages]
        ['my kiln cracked a pot', 'Cool it']
        >>> SessionRecallRetriever(store=store).invoke("kiln")[0].id
        'chat-1'
        >>> history.clear()
        >>> history.messages, store.get_session("chat-1")
        ([], None)
    """

    def __init__(
        self,
        *,
        store: SessionBackend,
        session_id: str,
        source: str = "langchain",
        user_id: str | None = None,
        title: str | None = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidArgumentError(
                f"session_id must be non-empty text, got {session_id!r}: pass the "
                "conversation's id, e.g. session_id='support-7'"
            )
        self.store = store
        self.session_id = session_id
        self.source = source
        self.user_id = user_id
        self.title = title

    def _own(self) -> bool:
        """Whether the session exists; raises when it is another user's (with ``user_id``)."""
        session = self.store.get_session(self.session_id)
        if session is None:
            return False
        if self.user_id is not None and session.user_id != self.user_id:
            raise SessionOwnerError(
                f"session {self.session_id!r} belongs to another user: a history opened for "
                f"user_id={self.user_id!r} reads and writes only that user's sessions (pick "
                "another session_id)"
            )
        return True

    def get_messages(self) -> list[BaseMessage]:
        """The session's messages in the order they were added (none when it does not exist).

        Raises:
            SessionOwnerError: the session is another user's (with ``user_id``).
        """
        if not self._own():
            return []
        stored = sorted(self.store.get_messages(self.session_id), key=lambda m: m.id)
        parts = self.store.message_parts(m.id for m in stored)
        return [_to_message(m, parts.get(m.id)) for m in stored]

    async def aget_messages(self) -> list[BaseMessage]:
        """:meth:`get_messages`, run in LangChain's executor."""
        return await run_in_executor(None, self.get_messages)

    @property
    def messages(self) -> list[BaseMessage]:
        """The session's messages in the order they were added."""
        return self.get_messages()

    @messages.setter
    def messages(self, value: Sequence[BaseMessage]) -> None:
        """Replace the session's messages by ``value``, in one transaction: every message is
        checked first (one the store refuses raises, and the old messages stay); the session's
        sub-sessions are left as they are."""
        if self._own():
            self.store.replace_messages(self.session_id, list(value))
        else:
            self.add_messages(value)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append messages to the session (created first if needed), in one transaction.

        Raises:
            SessionOwnerError: the session is another user's (with ``user_id``).
        """
        if not messages:
            return
        if not self._own():
            self.store.add_session(
                self.session_id, source=self.source, user_id=self.user_id, title=self.title
            )
        self.store.add_messages(self.session_id, list(messages))

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """:meth:`add_messages`, run in LangChain's executor."""
        await run_in_executor(None, self.add_messages, list(messages))

    def clear(self) -> None:
        """Forget the session: its messages, sub-sessions and cached recaps leave the store
        (with ``user_id``, sub-sessions of anyone else stay).

        Raises:
            SessionOwnerError: the session is another user's (with ``user_id``).
        """
        if self._own():
            self.store.delete_sessions([self.session_id], user_id=self.user_id)

    async def aclear(self) -> None:
        """:meth:`clear`, run in LangChain's executor."""
        await run_in_executor(None, self.clear)


def _to_message(message: StoredMessage, parts: list[Any] | None = None) -> BaseMessage:
    """A stored row as the LangChain message it was (role, content with its images and other
    parts, tool calls, tool result)."""
    kwargs: dict[str, Any] = {"id": str(message.id)}
    content: Any = parts if parts is not None else message.content
    if message.role == "user":
        return HumanMessage(content, **kwargs)
    if message.role == "system":
        return SystemMessage(content, **kwargs)
    if message.role == "tool":
        return ToolMessage(
            content,
            tool_call_id=message.tool_call_id or "",
            name=message.tool_name,
            **kwargs,
        )
    calls = []
    for raw in message.tool_calls or []:
        for call in parse_tool_calls([raw]):  # none for a junk entry another writer stored
            ident = raw.get("id")
            calls.append(
                {
                    "name": call.name,
                    "args": dict(call.arguments),
                    "id": str(ident) if ident is not None else None,
                    "type": "tool_call",
                }
            )
    return AIMessage(content, tool_calls=calls, **kwargs)
