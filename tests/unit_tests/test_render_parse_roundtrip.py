"""Issue 33 item 6: a result's text and its data say the same. For every search result over the
demo store (sub-agents, tool calls, code, CJK, long sessions cut to a window), read in both tag
forms, the messages parsed back from ``page_content`` (:func:`parse_transcript`, how a Document made
elsewhere is read) are the messages of its recalled window (:func:`window_messages`, how the
summarizer reads a search result): the same tags, ids, tool calls and text, message for
message. Only a message whose own text holds a tag-like line may differ (the parse splits it;
the data keeps it one message), and the demo has none."""

from __future__ import annotations

import re

import pytest

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.demo import build_demo_store
from langchain_session_recall.recall.model import RecalledSession, ShownMessage
from langchain_session_recall.recall.render import parse_transcript, window_messages

_TAG_LIKE = re.compile(r"^\[[A-Z][A-Z:_\-\w ]*(?: #\d+)?[^\]\n]*\]:", re.MULTILINE)


def _seen(messages: list[ShownMessage], ids_shown: bool) -> list[tuple[object, ...]]:
    """What the text shows of each message: its label, the id its tag shows, text, call."""
    return [(m.label, m.id if ids_shown and m.id_known else None, m.text, m.call) for m in messages]


def _queries(store: SessionStore) -> list[str]:
    """One query per demo session (the words of its title), and some across sessions."""
    titles = [r.title for r in store.recent_sessions(limit=200) if r.title]
    words = [" ".join(t.split()[:3]) for t in titles]
    return [*words, "error", "deploy script", "docker", "test", "部署", "fix the bug"]


@pytest.mark.parametrize("ids", [True, False])
@pytest.mark.parametrize("max_chars", [600, 2_000, 8_000])
def test_text_parses_back_to_the_shown_messages(ids: bool, max_chars: int) -> None:
    store = build_demo_store()
    retriever = SessionRecallRetriever(store=store, k=5, show_message_ids=ids, max_chars=max_chars)
    checked = 0
    for query in _queries(store):
        for doc in retriever.invoke(query):
            recalled = RecalledSession.from_metadata(doc.metadata)
            assert recalled is not None and recalled.ids_shown == ids
            [window] = recalled.windows
            if any(_TAG_LIKE.search(m.text) for m in window.messages):
                continue  # a message quoting a tag: the parse splits it, the data does not
            parsed = _seen(parse_transcript(doc.page_content), True)
            assert parsed == _seen(window_messages(window), ids), (
                query,
                doc.metadata["session_id"],
            )
            checked += 1
    assert checked >= 40  # dozens of results (85 at 600 characters, of 14 root sessions)
