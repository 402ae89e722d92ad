"""SessionRecorder: live recording of agents, graphs and chains, sync and async."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_session_recall.backends.sqlite.store import SessionStore
from langchain_session_recall.recorder import SessionRecorder
from langchain_session_recall.retriever import SessionRecallRetriever


class ToolCallingFake(GenericFakeChatModel):
    """Fake chat model that accepts ``bind_tools`` (its scripted replies carry the calls)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def _fake(*replies: AIMessage) -> ToolCallingFake:
    return ToolCallingFake(messages=iter(replies))


def _call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id}


@tool
def read_config(path: str) -> str:
    """Read a config file."""
    return f"{path}: add_header Access-Control-Allow-Origin https://app.example.com;"


def _transcript(store: SessionStore, session_id: str) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in store.get_messages(session_id)]


def _cors_agent(**kwargs: Any) -> Any:
    model = _fake(
        AIMessage(
            "",
            tool_calls=[_call("read_config", "c1", path="nginx.conf")],
            response_metadata={"model_name": "gpt-fake-1"},
        ),
        AIMessage(
            "The CORS header allows only app.example.com.",
            response_metadata={"model_name": "gpt-fake-1"},
        ),
        AIMessage("Add your origin to the header and reload nginx."),
    )
    return create_agent(model, tools=[read_config], **kwargs)


def test_agent_turn_is_recorded_with_tool_calls_results_and_model() -> None:
    store = SessionStore(":memory:")
    recorder = SessionRecorder(
        store, session_id="chat-1", source="webapp", user_id="ana", title="CORS on the API"
    )
    _cors_agent().invoke(
        {"messages": [HumanMessage("Why does the browser block my API calls?")]},
        config={"callbacks": [recorder]},
    )
    messages = store.get_messages("chat-1")
    assert [(m.role, m.content) for m in messages] == [
        ("user", "Why does the browser block my API calls?"),
        ("assistant", ""),
        ("tool", "nginx.conf: add_header Access-Control-Allow-Origin https://app.example.com;"),
        ("assistant", "The CORS header allows only app.example.com."),
    ]
    assert messages[1].tool_call_names == ["read_config"]
    assert (messages[2].tool_name, messages[2].tool_call_id) == ("read_config", "c1")
    session = store.get_session("chat-1")
    assert session is not None
    assert (session.source, session.model, session.user_id) == ("webapp", "gpt-fake-1", "ana")
    assert session.title == "CORS on the API"
    assert recorder.errors == 0


def test_thread_id_names_the_session_and_history_is_not_recorded_twice() -> None:
    store = SessionStore(":memory:")
    recorder = SessionRecorder(store)  # no session_id: one session per LangGraph thread
    agent = _cors_agent(checkpointer=InMemorySaver())
    config = {"callbacks": [recorder], "configurable": {"thread_id": "thread-42"}}
    agent.invoke({"messages": [HumanMessage("Why are API calls blocked?")]}, config=config)
    agent.invoke({"messages": [HumanMessage("How do I fix it?")]}, config=config)
    assert [role for role, _ in _transcript(store, "thread-42")] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert _transcript(store, "thread-42")[4] == ("user", "How do I fix it?")


async def test_async_agent_is_recorded_in_order() -> None:
    store = SessionStore(":memory:")
    recorder = SessionRecorder(store, session_id="async-1")
    await _cors_agent().ainvoke(
        {"messages": [HumanMessage("Why are API calls blocked?")]}, config={"callbacks": [recorder]}
    )
    assert [role for role, _ in _transcript(store, "async-1")] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]


def _researcher() -> Any:
    return create_agent(
        _fake(AIMessage("Ticket #4411 says the cert expired on Nov 3.")),
        tools=[],
        name="researcher",
    )


def _delegating_agent(sub_tool: Any) -> Any:
    model = _fake(
        AIMessage("", tool_calls=[_call(sub_tool.name, "d1", question="why did TLS fail?")]),
        AIMessage("The certificate expired on Nov 3; renew it."),
    )
    return create_agent(model, tools=[sub_tool])


def _assert_child_session(store: SessionStore, root: str) -> str:
    children = [sid for sid in store.chain(root) if sid != root]
    assert len(children) == 1
    child = store.get_session(children[0])
    assert child is not None and child.parent_session_id == root
    assert _transcript(store, child.id) == [
        ("user", "why did TLS fail?"),
        ("assistant", "Ticket #4411 says the cert expired on Nov 3."),
    ]
    # The caller's session holds the delegation and its result, not the sub-agent's turns.
    assert ("tool", "Ticket #4411 says the cert expired on Nov 3.") in _transcript(store, root)
    assert ("user", "why did TLS fail?") not in _transcript(store, root)
    # Search finds the sub-agent's words and folds them into the root.
    docs = SessionRecallRetriever(store=store).invoke("ticket 4411")
    assert [d.metadata["session_id"] for d in docs] == [root]
    assert child.id in docs[0].metadata["matched_session_ids"]
    return child.id


def test_agent_wrapped_as_a_tool_records_into_a_child_session() -> None:
    researcher = _researcher()

    @tool
    def ask_researcher(question: str) -> str:
        """Ask the research agent."""
        return str(
            researcher.invoke({"messages": [HumanMessage(question)]})["messages"][-1].content
        )

    store = SessionStore(":memory:")
    recorder = SessionRecorder(store, session_id="root")
    _delegating_agent(ask_researcher).invoke(
        {"messages": [HumanMessage("TLS handshakes fail since Monday")]},
        config={"callbacks": [recorder]},
    )
    child = _assert_child_session(store, "root")
    assert child.startswith("root/researcher-")


async def test_async_sub_agent_tool_records_into_a_child_session() -> None:
    researcher = _researcher()

    @tool
    async def ask_researcher(question: str) -> str:
        """Ask the research agent."""
        out = await researcher.ainvoke({"messages": [HumanMessage(question)]})
        return str(out["messages"][-1].content)

    store = SessionStore(":memory:")
    recorder = SessionRecorder(store, session_id="root")
    await _delegating_agent(ask_researcher).ainvoke(
        {"messages": [HumanMessage("TLS handshakes fail since Monday")]},
        config={"callbacks": [recorder]},
    )
    _assert_child_session(store, "root")


def test_plain_model_called_inside_a_tool_is_a_sub_agent_too() -> None:
    helper = _fake(AIMessage("Ticket #4411 says the cert expired on Nov 3."))

    @tool
    def ask_helper(question: str) -> str:
        """Ask a helper model."""
        return str(helper.invoke([HumanMessage(question)]).content)

    store = SessionStore(":memory:")
    recorder = SessionRecorder(store, session_id="root")
    _delegating_agent(ask_helper).invoke(
        {"messages": [HumanMessage("TLS handshakes fail since Monday")]},
        config={"callbacks": [recorder]},
    )
    child = _assert_child_session(store, "root")
    assert child.startswith("root/ask_helper-")


def test_sub_graph_node_records_into_a_child_session() -> None:
    sub = create_agent(_fake(AIMessage("Renew with certbot renew --force-renewal.")), tools=[])

    def triage(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("Routing to the ops agent.")]}

    graph = StateGraph(MessagesState)
    graph.add_node("triage", triage)
    graph.add_node("ops", sub)
    graph.add_edge(START, "triage")
    graph.add_edge("triage", "ops")
    graph.add_edge("ops", END)
    store = SessionStore(":memory:")
    recorder = SessionRecorder(store, session_id="root")
    graph.compile().invoke(
        {"messages": [HumanMessage("cert expired")]}, config={"callbacks": [recorder]}
    )

    assert _transcript(store, "root") == [("user", "cert expired")]
    [child] = [sid for sid in store.chain("root") if sid != "root"]
    assert child.startswith("root/ops-")
    assert _transcript(store, child) == [("assistant", "Renew with certbot renew --force-renewal.")]


def test_plain_chain_records_each_question() -> None:
    prompt = ChatPromptTemplate.from_messages([("system", "Be brief."), ("human", "{question}")])
    chain = prompt | _fake(AIMessage("Use a CORS middleware."), AIMessage("Use a CORS middleware."))
    store = SessionStore(":memory:")
    recorder = SessionRecorder(store, session_id="qa")
    for _ in range(2):  # the same question twice is two turns
        chain.invoke(
            {"question": "How do I allow cross-origin calls?"}, config={"callbacks": [recorder]}
        )
    assert (
        _transcript(store, "qa")
        == [
            ("user", "How do I allow cross-origin calls?"),
            ("assistant", "Use a CORS middleware."),
        ]
        * 2
    )


def test_session_id_in_a_nested_runs_metadata_names_the_child(tmp_path: Path) -> None:
    researcher = _researcher()

    @tool
    def ask_researcher(question: str) -> str:
        """Ask the research agent."""
        out = researcher.invoke(
            {"messages": [HumanMessage(question)]},
            config={"metadata": {"session_id": "research-7"}},
        )
        return str(out["messages"][-1].content)

    store = SessionStore(tmp_path / "r.db")
    recorder = SessionRecorder(store, session_id="root")
    _delegating_agent(ask_researcher).invoke(
        {"messages": [HumanMessage("TLS handshakes fail since Monday")]},
        config={"callbacks": [recorder]},
    )
    assert store.get_session("research-7").parent_session_id == "root"  # type: ignore[union-attr]


def test_storage_errors_are_logged_and_never_break_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = SessionStore(":memory:")
    store.close()  # every write now fails
    recorder = SessionRecorder(store, session_id="broken")
    with caplog.at_level(logging.WARNING):
        result = _cors_agent().invoke(
            {"messages": [HumanMessage("Why are API calls blocked?")]},
            config={"callbacks": [recorder]},
        )
    assert result["messages"][-1].content == "The CORS header allows only app.example.com."
    assert recorder.errors >= 3
    # our own ERROR, naming the session and what waits; the messages are kept, not dropped
    assert "could not write 4 message(s) of session 'broken'" in caplog.text
    assert recorder.pending == 4
    assert recorder.flush() == 4  # the store is still closed: still kept


def test_read_only_store_does_not_break_the_run(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    SessionStore(path).close()
    recorder = SessionRecorder(SessionStore(path, read_only=True), session_id="x")
    model = _fake(AIMessage("fine"))
    assert model.invoke("hi", config={"callbacks": [recorder]}).content == "fine"
    assert recorder.errors >= 1


def test_model_called_by_a_retriever_inside_a_tool_goes_to_the_tools_child_session() -> None:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    rewriter = _fake(AIMessage("Ticket #4411 says the cert expired on Nov 3."))

    class RewritingRetriever(BaseRetriever):
        def _get_relevant_documents(
            self, query: str, *, run_manager: CallbackManagerForRetrieverRun
        ) -> list[Document]:
            rewritten = rewriter.invoke(
                [HumanMessage(query)], config={"callbacks": run_manager.get_child()}
            )
            return [Document(page_content=str(rewritten.content))]

    retriever = RewritingRetriever()

    @tool
    def search_tickets(question: str) -> str:
        """Search the ticket system."""
        return retriever.invoke(question)[0].page_content

    store = SessionStore(":memory:")
    recorder = SessionRecorder(store, session_id="root")
    _delegating_agent(search_tickets).invoke(
        {"messages": [HumanMessage("TLS handshakes fail since Monday")]},
        config={"callbacks": [recorder]},
    )
    # The retriever run links the model call to the tool, so it is the tool's sub-session.
    child = _assert_child_session(store, "root")
    assert child.startswith("root/search_tickets-")


def test_long_lived_recorder_keeps_bounded_state_and_still_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import langchain_session_recall.recorder as recorder_module

    monkeypatch.setattr(recorder_module, "_MAX_SESSIONS", 3)
    store = SessionStore(":memory:")
    recorder = SessionRecorder(store)  # one recorder for many threads, as in a server
    model = _fake(*[AIMessage(f"answer {i}") for i in range(10)])
    for i in range(5):
        model.invoke(
            [HumanMessage(f"question {i}")],
            config={"callbacks": [recorder], "metadata": {"session_id": f"t{i}"}},
        )
    assert len(recorder._sessions) == 3
    # A thread whose state was forgotten is picked up again, without duplicates or new sessions.
    model.invoke(
        [HumanMessage("question 0 again")],
        config={"callbacks": [recorder], "metadata": {"session_id": "t0"}},
    )
    assert _transcript(store, "t0") == [
        ("user", "question 0"),
        ("assistant", "answer 0"),
        ("user", "question 0 again"),
        ("assistant", "answer 5"),
    ]
    assert sorted(store.all_session_ids()) == ["t0", "t1", "t2", "t3", "t4"]
