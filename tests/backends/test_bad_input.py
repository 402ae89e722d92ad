"""Issue 34 item 7: a request no session could answer is an error that says what to give, on
both backends, never an empty answer that reads as "nothing was found".

``k`` 0, -1 or over ``max_k``, an unknown role, ``after`` later than ``before``: the retriever
raises ``ValueError`` (sync and async); the ``session_search`` tool reports an error, except a
``limit`` over the cap, which it clamps and says so in the reply's ``notice``. LangChain's own
role names (``human``, ``ai``, ``system``, ``tool``) are the stored roles.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from langchain_session_recall import SessionRecallRetriever, create_session_search_tool


def _fill(store: Any) -> None:
    for n in range(7):
        store.add_session(f"s{n}", started_at=1793664000.0 + n * 86400)  # 2026-11-03 + n days
        store.add_messages(
            f"s{n}",
            [
                {"role": "user", "content": f"redis eviction question {n}"},
                {"role": "assistant", "content": f"redis eviction answer {n}"},
            ],
        )


def _ids(docs: list[Any]) -> list[str]:
    return [d.metadata["session_id"] for d in docs]


BAD_CALLS: list[tuple[dict[str, Any], str]] = [
    ({"k": 0}, "k=0 asks for no session: ask for 1 to 5"),
    ({"k": -1}, "k=-1 asks for no session: ask for 1 to 5"),
    ({"k": 20}, "k=20 is more than 5"),
    ({"role_filter": "bogus"}, "unknown role 'bogus'"),
    ({"role_filter": "user,robot"}, "unknown role 'robot'"),
    ({"after": "2026-11-06", "before": "2026-11-04"}, "no session starts in that range"),
    ({"after": "2026-11-04", "before": "2026-11-04"}, "no session starts in that range"),
]


@pytest.mark.parametrize(("options", "message"), BAD_CALLS)
def test_the_retriever_refuses_what_could_find_nothing(
    store: Any, options: dict[str, Any], message: str
) -> None:
    _fill(store)
    retriever = SessionRecallRetriever(store=store)
    with pytest.raises(ValueError) as raised:
        retriever.invoke("redis eviction", **options)
    assert message in str(raised.value)


@pytest.mark.parametrize(("options", "message"), BAD_CALLS[:4])
async def test_the_async_retriever_refuses_them_too(
    store: Any, options: dict[str, Any], message: str
) -> None:
    _fill(store)
    with pytest.raises(ValueError, match=message.split(":")[0]):
        await SessionRecallRetriever(store=store).ainvoke("redis eviction", **options)


def test_the_cap_is_the_retrievers_and_named_in_the_error(store: Any) -> None:
    _fill(store)
    wide = SessionRecallRetriever(store=store, max_k=7)
    assert len(wide.invoke("redis eviction", k=7)) == 7
    with pytest.raises(ValueError, match=r"k=8 is more than 7.*raise max_k"):
        wide.invoke("redis eviction", k=8)
    for fields in ({"k": 0}, {"k": 6}, {"role_filter": "bogus"}):
        with pytest.raises(ValueError):
            SessionRecallRetriever(store=store, **fields)


def test_langchain_role_names_are_the_stored_roles(store: Any) -> None:
    _fill(store)
    retriever = SessionRecallRetriever(store=store, k=1)
    for human in ("human", "user", "Human"):
        [doc] = retriever.invoke("redis question", role_filter=human)
        assert "question" in doc.page_content
    ai = retriever.invoke("redis answer", role_filter="ai")
    assert ai and _ids(ai) == _ids(retriever.invoke("redis answer", role_filter="assistant"))
    assert SessionRecallRetriever(store=store, role_filter="human,ai").role_filter == (
        "user",
        "assistant",
    )
    # system and tool are roles of their own: no message of those here, a valid empty answer
    assert retriever.invoke("redis", role_filter="system,tool") == []


def test_a_date_range_that_holds_sessions_still_finds_them(store: Any) -> None:
    _fill(store)
    retriever = SessionRecallRetriever(store=store, k=5)
    found = retriever.invoke("redis eviction", after="2026-11-04", before="2026-11-06")
    assert sorted(_ids(found)) == ["s1", "s2"]


def _call(tool: Any, args: dict[str, Any]) -> tuple[ToolMessage, dict[str, Any]]:
    call = {"name": "session_search", "args": args, "id": "call_1", "type": "tool_call"}
    message = tool.invoke(call)
    assert isinstance(message, ToolMessage)
    return message, json.loads(message.content)  # type: ignore[arg-type]


TOOL_ERRORS: list[tuple[dict[str, Any], str]] = [
    ({"limit": 0}, "limit=0 asks for no session: ask for 1 to 5"),
    ({"limit": -1}, "limit=-1 asks for no session: ask for 1 to 5"),
    ({"after": "2026-11-06", "before": "2026-11-04"}, "no session starts in that range"),
]


@pytest.mark.parametrize(
    ("query", "args", "message"),
    [
        *[("redis eviction", args, message) for args, message in TOOL_ERRORS],
        ("redis eviction", {"role_filter": "bogus"}, "unknown role 'bogus'"),
        *[("", args, message) for args, message in TOOL_ERRORS],  # browsing, too
    ],
)
def test_the_tool_reports_them_as_errors(
    store: Any, query: str, args: dict[str, Any], message: str
) -> None:
    _fill(store)
    reply, payload = _call(create_session_search_tool(store), {"query": query, **args})
    assert reply.status == "error"  # item 8: LangChain's ToolException convention
    assert payload["success"] is False, payload
    assert message in payload["error"]
    assert "call session_search again" in payload["error"]
    assert "broader keywords" not in json.dumps(payload)


@pytest.mark.parametrize("query", ["redis eviction", ""])
def test_the_tool_clamps_a_limit_over_the_cap_and_says_so(store: Any, query: str) -> None:
    _fill(store)
    _, payload = _call(create_session_search_tool(store), {"query": query, "limit": 20})
    assert payload["success"] is True and payload["count"] == 5
    assert payload["notice"] == "Limit 20 is over the cap of 5 sessions per call: 5 shown."
    _, within = _call(create_session_search_tool(store), {"query": query, "limit": 5})
    assert within["count"] == 5 and "notice" not in within


def test_the_tool_takes_langchain_role_names(store: Any) -> None:
    _fill(store)
    _, payload = _call(
        create_session_search_tool(store), {"query": "redis answer", "role_filter": "ai"}
    )
    assert payload["success"] is True and payload["count"] == 3
    assert all("answer" in r["summary"] for r in payload["results"])
