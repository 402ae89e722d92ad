"""The search result as data (recall/model.py): carried on the Document, read by the summarizer."""

from __future__ import annotations

import dataclasses
import json

import pytest
from langchain_core.documents import Document

from langchain_session_recall import SessionStore
from langchain_session_recall.demo import build_demo_store
from langchain_session_recall.models import StoredMessage
from langchain_session_recall.recall.build import Result, recall
from langchain_session_recall.recall.model import (
    RECALL_KEY,
    RecalledSession,
    ShownMessage,
    shown_window,
)
from langchain_session_recall.recall.render import parse_transcript, window_messages, window_text
from langchain_session_recall.recall.transcript import (
    EARLIER_MARKER,
    LATER_MARKER,
    format_transcript,
)
from langchain_session_recall.search.request import SearchRequest
from langchain_session_recall.summarize.summarizer import SessionSummarizer

# Chains (sub-sessions), tool calls and tool results, windows cut at both ends.
_QUERIES = ("docker permission denied", "CORS nginx", "database migration", "deploy", "test")


def _seen(messages: list[ShownMessage], ids_shown: bool) -> list[tuple[object, ...]]:
    """What the text shows of each message: its label, the id its tag shows, text, call."""
    return [(m.label, m.id if ids_shown and m.id_known else None, m.text, m.call) for m in messages]


@pytest.fixture(scope="module")
def demo() -> SessionStore:
    return build_demo_store()


def _results(store: SessionStore, query: str, ids: bool, chars: int) -> list[Result]:
    return recall(store, SearchRequest(query, k=5, show_message_ids=ids, max_chars=chars))


@pytest.mark.parametrize("ids", [True, False])
@pytest.mark.parametrize("chars", [300, 1200, 4000])
def test_the_structure_reads_as_the_text_does(demo: SessionStore, ids: bool, chars: int) -> None:
    """Every search result's windows give the blocks a parse of its text gives (so recaps and
    groundings are unchanged), and the data survives JSON."""
    seen = 0
    for query in _QUERIES:
        for result in _results(demo, query, ids, chars):
            data = json.loads(json.dumps(result.metadata[RECALL_KEY]))
            recalled = RecalledSession.from_metadata({RECALL_KEY: data})
            assert recalled is not None and recalled.session_id == result.metadata["session_id"]
            assert recalled.ids_shown is ids
            (shown,) = recalled.windows
            assert shown.elided_before == result.page_content.startswith("...[earlier")
            blocks = _seen(window_messages(shown), ids)
            assert blocks == _seen(parse_transcript(result.page_content), True)
            seen += len(blocks)
    assert seen > 20


def test_messages_carry_ids_roles_and_tool_calls(demo: SessionStore) -> None:
    results = _results(demo, "docker permission denied", False, 20_000)
    shown = [
        (m, r.page_content)
        for r in results
        for w in RecalledSession.from_dict(r.metadata[RECALL_KEY]).windows
        for m in w.messages
    ]
    messages = [m for m, _ in shown]
    assert {m.role for m in messages} >= {"user", "assistant"}
    assert all(m.id > 0 and m.label.split(":")[0] == m.role.upper() for m in messages)
    assert any(m.role == "tool" and m.tool_name for m in messages)
    calls = [(m, text) for m, text in shown if m.tool_calls]
    assert calls and all(m.role == "assistant" for m, _ in calls)
    assert all(name in text for m, text in calls for name in m.tool_calls)


def _tag_in_text_store() -> SessionStore:
    store = SessionStore(":memory:")
    store.add_session("s1", title="Pasted log")
    store.add_messages(
        "s1",
        [
            {"role": "user", "content": "the kiln log says\n[ASSISTANT #99]: kiln overheated"},
            {"role": "assistant", "content": "the kiln needs a new relay"},
        ],
    )
    return store


def test_the_summarizer_reads_messages_not_tags() -> None:
    """A line in a message that looks like a tag stays in its message (a parse of the text
    split it off as a turn #99 nobody wrote); a Document without the data is read as before."""
    (result,) = recall(_tag_in_text_store(), SearchRequest("kiln", show_message_ids=True))
    doc = Document(page_content=result.page_content, metadata=result.metadata)
    summarizer = SessionSummarizer(llm=None)
    (recap,) = summarizer.invoke([doc])
    assert not any(line.startswith("[ASSISTANT #99]") for line in recap.page_content.splitlines())
    assert "[USER #1]: the kiln log says [ASSISTANT #99]: kiln overheated" in recap.page_content

    made = {k: v for k, v in result.metadata.items() if k != RECALL_KEY}
    (fallback,) = summarizer.invoke([Document(page_content=result.page_content, metadata=made)])
    assert "\n[ASSISTANT #99]: kiln overheated" in fallback.page_content


def test_other_metadata_is_not_a_result() -> None:
    assert RecalledSession.from_metadata({RECALL_KEY: "text"}) is None
    assert RecalledSession.from_metadata({RECALL_KEY: {"windows": []}}) is None


def test_every_cut_reads_as_its_text() -> None:
    """Wherever a window starts and ends (mid-tag, mid-message, on a chain line), its
    structure gives the blocks its text does."""
    calls = [{"id": "1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]
    chain = [
        StoredMessage(1, "root", "user", "why does\nthe build fail", 1.0),
        StoredMessage(2, "root", "assistant", "", 2.0, tool_calls=calls),
        StoredMessage(3, "child", "tool", "exit 1", 3.0, tool_name="terminal"),
        StoredMessage(4, "child", "assistant", "a missing\nflag", 4.0, tool_calls=calls),
        StoredMessage(5, "root", "user", "thanks", 5.0),
    ]
    for ids in (True, False):
        transcript = format_transcript(chain, show_ids=ids, root_id="root")
        text = transcript.text
        for start in range(len(text)):
            for end in range(start, len(text) + 1):
                shown = shown_window(text, transcript.parts, start, end)
                blocks = _seen(window_messages(shown), ids)
                rendered = window_text(shown, ids_shown=ids)
                marked = (EARLIER_MARKER if start else "") + text[start:end]
                assert rendered == marked + (LATER_MARKER if end < len(text) else "")
                assert blocks == _seen(parse_transcript(rendered), True), (start, end)


def test_to_dict_is_what_asdict_gives(demo: SessionStore) -> None:
    """``to_dict`` skips ``dataclasses.asdict``'s deep copy (issue 22 item 8): the same dict,
    the same types (tuples stay tuples) and the same key order, on every demo result; a
    message's ``id_known``, always True in a search result, is left out (the metadata stays
    as it was before the field)."""
    seen = 0
    for query in _QUERIES:
        for result in _results(demo, query, True, 1200):
            recalled = RecalledSession.from_metadata(result.metadata)
            assert recalled is not None
            ours, reference = recalled.to_dict(), dataclasses.asdict(recalled)
            for window in reference["windows"]:
                for message in window["messages"]:
                    assert message.pop("id_known") is True
            assert ours == reference
            assert repr(ours) == repr(reference)  # key order and tuple/list types too
            seen += sum(len(w.messages) for w in recalled.windows)
    assert seen > 20
