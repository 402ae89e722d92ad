"""Issue 33, first defect: the extractive recap shows the tool call the search matched.

A session whose only mention of the asked-for words is an assistant's tool call (the words are
its arguments, shown in the call's tag) and whose other messages match nothing: the recap used
to frame it with the first request and the last answer, leaving out the call. On both backends.
"""

from __future__ import annotations

import json

from store_targets import StoreFactory

from langchain_session_recall import create_session_search_tool

COMMAND = "python rename_photos.py ~/Pictures/2024"


def test_the_recap_shows_the_matching_tool_call(store_factory: StoreFactory) -> None:
    store = store_factory.open("photos")
    store.add_session("photos", title="Tidying photos", started_at=1000.0)
    call = {"id": "c1", "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": COMMAND})}}  # fmt: skip
    filler = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"aside {i} on lunch plans"}
        for i in range(12)
    ]
    store.add_messages(
        "photos",
        [
            {
                "role": "user",
                "content": "Can you tidy my holiday photo folder? The names are a mess.",
            },
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_name": "terminal", "tool_call_id": "c1", "content": "412 files"},
            *filler,
            {"role": "assistant", "content": "Done: the files now carry their dates."},
        ],
    )
    tool = create_session_search_tool(store)
    reply = json.loads(tool.invoke({"query": "which command did we run on Pictures 2024?"}))
    [result] = reply["results"]
    assert COMMAND in result["summary"]
