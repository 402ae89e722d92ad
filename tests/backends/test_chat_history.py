"""Issue 23 §4: ``SessionChatMessageHistory``, a store's session as a ``BaseChatMessageHistory``,
on both backends: ``RunnableWithMessageHistory`` writes into the store, searchable at once."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory
from store_targets import StoreFactory

from langchain_session_recall import SessionChatMessageHistory, SessionRecallRetriever
from langchain_session_recall.errors import InvalidMessageError, SessionOwnerError


def test_messages_round_trip_and_clear_forgets(store_factory: StoreFactory) -> None:
    store = store_factory.open("history")
    history = SessionChatMessageHistory(store=store, session_id="chat-1", user_id="ana")
    assert isinstance(history, BaseChatMessageHistory)
    assert history.messages == []
    call = {"name": "terminal", "args": {"command": "df -h"}, "id": "c1", "type": "tool_call"}
    history.add_messages(
        [
            SystemMessage("be brief"),
            HumanMessage("is the disk full?"),
            AIMessage("", tool_calls=[call]),
            ToolMessage("91% used", tool_call_id="c1", name="terminal"),
        ]
    )
    asyncio.run(history.aadd_messages([AIMessage("Yes: 91% of the root disk.")]))
    got = history.messages
    assert [type(m).__name__ for m in got] == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert got[2].tool_calls == [call]  # type: ignore[attr-defined]
    assert (got[3].tool_call_id, got[3].name) == ("c1", "terminal")  # type: ignore[attr-defined]
    assert store.get_session("chat-1").user_id == "ana"  # type: ignore[union-attr]
    docs = SessionRecallRetriever(store=store).invoke("disk full")
    assert [d.id for d in docs] == ["chat-1"]  # searchable at once
    history.clear()
    assert history.messages == [] and store.get_session("chat-1") is None
    assert SessionRecallRetriever(store=store).invoke("disk full") == []
    history.messages = [HumanMessage("a fresh start")]  # the setter: clear, then add
    assert [m.content for m in asyncio.run(history.aget_messages())] == ["a fresh start"]
    asyncio.run(history.aclear())
    assert store.get_session("chat-1") is None


# LangChain marks RunnableWithMessageHistory deprecated (for LangGraph's persistence) but ships
# it; the issue asks that it work.
@pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning")
def test_runnable_with_message_history_writes_into_the_store(store_factory: StoreFactory) -> None:
    store = store_factory.open("history")
    prompt = ChatPromptTemplate.from_messages(
        [MessagesPlaceholder("history"), ("human", "{question}")]
    )
    model = GenericFakeChatModel(messages=iter([AIMessage("Raise the partitions to 12.")]))
    chain = RunnableWithMessageHistory(
        prompt | model,
        lambda session_id: SessionChatMessageHistory(store=store, session_id=session_id),
        input_messages_key="question",
        history_messages_key="history",
    )
    chain.invoke(
        {"question": "how do we fix the kafka lag?"},
        config={"configurable": {"session_id": "support-7"}},
    )
    assert [
        m.content for m in SessionChatMessageHistory(store=store, session_id="support-7").messages
    ] == [
        "how do we fix the kafka lag?",
        "Raise the partitions to 12.",
    ]
    [doc] = SessionRecallRetriever(store=store).invoke("kafka partitions")
    assert doc.id == "support-7"
    # and the conversation in progress is left out of its own searches
    live = {"configurable": {"session_id": "support-7"}}
    assert SessionRecallRetriever(store=store).invoke("kafka", config=live) == []  # type: ignore[arg-type]


# --------------------------------------------------------------------------- issue 32, item 12


def test_a_history_opened_for_a_user_sees_only_that_users_session(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open("history")
    bobs = SessionChatMessageHistory(store=store, session_id="s", user_id="bob")
    bobs.add_messages([HumanMessage("bob's payroll question")])
    alices = SessionChatMessageHistory(store=store, session_id="s", user_id="alice")
    with pytest.raises(SessionOwnerError, match="another user"):
        alices.messages  # noqa: B018
    with pytest.raises(SessionOwnerError):
        asyncio.run(alices.aget_messages())
    with pytest.raises(SessionOwnerError):
        alices.add_messages([HumanMessage("alice writes into bob's session")])
    with pytest.raises(SessionOwnerError):
        alices.messages = [HumanMessage("alice replaces bob's session")]
    with pytest.raises(SessionOwnerError):
        alices.clear()
    with pytest.raises(SessionOwnerError):
        asyncio.run(alices.aclear())
    assert [m.content for m in bobs.messages] == ["bob's payroll question"]
    assert store.get_session("s").user_id == "bob"  # type: ignore[union-attr]
    # a history for no user in particular reads any session, as before
    assert len(SessionChatMessageHistory(store=store, session_id="s").messages) == 1
    # clearing alice's own session leaves bob's sub-session below it
    alices = SessionChatMessageHistory(store=store, session_id="a", user_id="alice")
    alices.add_messages([HumanMessage("alice's question")])
    store.add_session("a/bob", parent_session_id="a", user_id="bob")
    alices.clear()
    assert store.get_session("a") is None and store.get_session("a/bob") is not None


def test_setting_messages_stores_all_of_them_or_keeps_the_old_ones(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open("history")
    history = SessionChatMessageHistory(store=store, session_id="chat", user_id="ana")
    history.add_messages([HumanMessage("keep me"), AIMessage("and me")])
    with pytest.raises(InvalidMessageError):
        history.messages = [HumanMessage("new"), ChatMessage("refused", role="wizard")]
    assert [m.content for m in history.messages] == ["keep me", "and me"]
    history.messages = [HumanMessage("new start")]
    assert [m.content for m in history.messages] == ["new start"]
    assert SessionRecallRetriever(store=store).invoke("keep") == []  # the old words left
    assert store.check().ok, store.check().problems


def test_trimming_through_the_setter_keeps_the_sub_sessions(store_factory: StoreFactory) -> None:
    store = store_factory.open("history")
    history = SessionChatMessageHistory(store=store, session_id="chat", user_id="ana")
    history.add_messages([HumanMessage(f"turn {n}") for n in range(4)])
    store.add_session("chat/agent", parent_session_id="chat", user_id="ana")
    store.add_messages("chat/agent", [{"role": "assistant", "content": "sub-agent pelican"}])
    history.messages = history.messages[-2:]
    assert [m.content for m in history.messages] == ["turn 2", "turn 3"]
    assert [m.content for m in store.get_messages("chat/agent")] == ["sub-agent pelican"]
    assert store.get_session("chat").message_count == 2  # type: ignore[union-attr]
    assert store.check().ok, store.check().problems


def test_messages_come_back_in_the_order_they_were_added(store_factory: StoreFactory) -> None:
    store = store_factory.open("history")
    history = SessionChatMessageHistory(store=store, session_id="chat")
    history.add_messages(
        [
            HumanMessage("first", additional_kwargs={"timestamp": 2_000_000_000.0}),
            AIMessage("second", additional_kwargs={"timestamp": 1_000_000_000.0}),
        ]
    )
    history.add_messages([HumanMessage("third", additional_kwargs={"timestamp": 1.0})])
    assert [m.content for m in history.messages] == ["first", "second", "third"]


def test_image_and_other_content_blocks_are_kept(store_factory: StoreFactory) -> None:
    store = store_factory.open("history")
    history = SessionChatMessageHistory(store=store, session_id="chat")
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    audio = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
    asked = [{"type": "text", "text": "what is on this kiln photo?"}, image]
    history.add_messages(
        [HumanMessage(asked), AIMessage([audio, "a cracked pot"]), AIMessage("ok")]
    )
    got = history.messages
    assert [m.content for m in got] == [asked, [audio, "a cracked pot"], "ok"]
    # the text parts are searched as before, the rest is not
    assert [d.id for d in SessionRecallRetriever(store=store).invoke("kiln photo")] == ["chat"]
    assert SessionRecallRetriever(store=store).invoke("iVBORw0KGgo") == []
    history.messages = got[1:]  # replacing keeps them too
    assert [m.content for m in history.messages] == [[audio, "a cracked pot"], "ok"]
    assert store.check().ok, store.check().problems
    history.clear()
    assert history.messages == []
