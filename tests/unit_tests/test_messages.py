import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langchain_session_recall import InvalidMessageError
from langchain_session_recall.messages import decode_content, to_row


def test_langchain_messages() -> None:
    ai = AIMessage(content="", tool_calls=[{"name": "terminal", "args": {"c": "ls"}, "id": "c1"}])
    row = to_row(ai, now=5.0)
    assert row.role == "assistant" and row.timestamp == 5.0
    calls = json.loads(row.tool_calls or "[]")
    assert calls[0]["function"]["name"] == "terminal"
    assert json.loads(calls[0]["function"]["arguments"]) == {"c": "ls"}
    tool = to_row(ToolMessage(content="out", tool_call_id="c1", name="terminal"))
    assert (tool.role, tool.tool_name, tool.tool_call_id) == ("tool", "terminal", "c1")
    assert to_row(HumanMessage(content=[{"type": "text", "text": "hi"}])).content == "hi"
    assert to_row(SystemMessage(content="sys")).role == "system"


def test_dicts_and_aliases() -> None:
    assert to_row({"role": "human", "content": "x", "timestamp": 3}).role == "user"
    assert to_row({"role": "tool", "name": "grep", "content": "x"}).tool_name == "grep"


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        ({"role": "wizard", "content": "x"}, "unknown message role"),
        ({"content": "x"}, "needs a 'role'"),
        ({"role": "user", "content": "x", "timestamp": "yesterday"}, "timestamp"),
        ({"role": "assistant", "content": "", "tool_calls": "{not json"}, "not valid JSON"),
        (42, "BaseMessage objects or dicts"),
    ],
)
def test_invalid_messages(message: object, fragment: str) -> None:
    with pytest.raises(InvalidMessageError, match=fragment):
        to_row(message)  # type: ignore[arg-type]


def test_decode_hermes_structured_content() -> None:
    raw = '\x00json:[{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}]'
    assert decode_content(raw) == "a\nb"
    assert decode_content("\x00json:{broken") == "{broken"
    assert decode_content(b"\xff\xfebytes").endswith("bytes")
    assert decode_content(None) == ""
