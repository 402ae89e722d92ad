"""LangGraph SqliteSaver import, from a real checkpoint database made by a tiny agent."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver

from langchain_session_recall.backends.sqlite.store import SessionStore
from langchain_session_recall.importers import ImportSourceError, import_langgraph


class ToolCallingFake(GenericFakeChatModel):
    """Fake chat model that accepts ``bind_tools`` (its scripted replies carry the calls)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@tool
def weather(city: str) -> str:
    """Current weather of a city."""
    return f"light rain in {city}, 9°C"


def _agent(saver: SqliteSaver, replies: list[AIMessage]) -> Any:
    model = ToolCallingFake(messages=iter(replies))
    return create_agent(model, tools=[weather], checkpointer=saver)


def _checkpoints(path: Path) -> tuple[sqlite3.Connection, SqliteSaver]:
    conn = sqlite3.connect(path, check_same_thread=False)
    return conn, SqliteSaver(conn)


def test_threads_become_sessions_and_reimport_adds_only_new_turns(tmp_path: Path) -> None:
    path = tmp_path / "checkpoints.sqlite"
    conn, saver = _checkpoints(path)
    call = {"name": "weather", "args": {"city": "Bergen"}, "id": "call_w1"}
    replies = [
        AIMessage("", tool_calls=[call], response_metadata={"model_name": "fake-4o"}),
        AIMessage(
            "Bring an umbrella: light rain in Bergen.", response_metadata={"model_name": "fake-4o"}
        ),
        AIMessage("Hi! How can I help?"),
        AIMessage("You're welcome."),
    ]  # scripted in call order: trip (2 model calls), other, trip again
    agent = _agent(saver, replies)
    agent.invoke(
        {"messages": [HumanMessage("weather in Bergen?")]}, {"configurable": {"thread_id": "trip"}}
    )
    agent.invoke({"messages": [HumanMessage("hello")]}, {"configurable": {"thread_id": "other"}})

    store = SessionStore(tmp_path / "r.db")
    report = import_langgraph(store, path)
    assert (report.new_sessions, report.messages) == (2, 6)
    # what an agent's checkpoints hold besides messages (Send, dates) is no problem to report
    assert report.skipped_total == 0, report.problems
    trip = store.get_messages("trip")
    assert [m.role for m in trip] == ["user", "assistant", "tool", "assistant"]
    assert trip[1].tool_call_names == ["weather"]
    assert json.loads(trip[1].tool_calls[0]["function"]["arguments"]) == {"city": "Bergen"}  # type: ignore[index]
    assert trip[2].tool_name == "weather" and "light rain" in trip[2].content
    assert store.get_session("trip").source == "langgraph"  # type: ignore[union-attr]
    assert store.get_session("trip").model == "fake-4o"  # type: ignore[union-attr]
    times = [m.timestamp for m in trip]
    assert times == sorted(times) and times[0] < times[-1]  # stamped from their checkpoints

    assert import_langgraph(store, path).messages == 0
    agent.invoke({"messages": [HumanMessage("thanks")]}, {"configurable": {"thread_id": "trip"}})
    conn.close()
    again = import_langgraph(store, path)
    assert (again.new_sessions, again.messages) == (0, 2)
    assert [m.content for m in store.get_messages("trip")][-2:] == ["thanks", "You're welcome."]


def test_not_a_checkpoint_database_is_a_clear_error(tmp_path: Path) -> None:
    other = tmp_path / "x.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(ImportSourceError, match="not a LangGraph SQLite checkpointer"):
        import_langgraph(SessionStore(":memory:"), other)


def test_the_strict_serde_builds_messages_only_from_json_checkpoints() -> None:
    # Checkpoints of older LangGraph versions are JSON: messages as langchain_core constructors
    # come back as messages; any other constructor (a prompt, LangGraph's lc=2 form naming
    # os.system) stays plain data and is recorded; a secret is never read from the environment.
    import json

    from langchain_core.load import dumpd
    from langchain_core.prompts import PromptTemplate

    from langchain_session_recall.importers.checkpoint_serde import (
        RefusedEncodingError,
        StrictCheckpointSerde,
    )

    blob = json.dumps(
        {
            "messages": [dumpd(HumanMessage("hi", id="m1")), dumpd(AIMessage("hello", id="m2"))],
            "prompt": dumpd(PromptTemplate.from_template("{x}")),
            "code": {"lc": 2, "type": "constructor", "id": ["os", "system"], "args": ["true"]},
            "key": {"lc": 1, "type": "secret", "id": ["HOME"]},
        }
    ).encode()
    serde = StrictCheckpointSerde()
    value = serde.loads_typed(("json", blob))
    assert [type(m).__name__ for m in value["messages"]] == ["HumanMessage", "AIMessage"]
    assert isinstance(value["prompt"], dict) and value["code"] == ["true"]
    assert value["key"]["type"] == "secret"
    assert serde.refused == {"langchain.prompts.prompt.PromptTemplate", "os.system"}
    with pytest.raises(RefusedEncodingError, match="pickle"):
        serde.loads_typed(("pickle", b"\x80\x04N."))
