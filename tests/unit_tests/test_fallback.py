"""The extractive recap used when a session cannot be summarized."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from langchain_session_recall.summarize.extractive import (
    extractive_recap,
    parse_transcript,
    query_terms,
)
from tests.summarizer_support import sample_documents, transcript

LABEL = "[Not summarized ("


def test_parse_transcript_with_and_without_ids() -> None:
    text = "...[earlier conversation truncated]...\n\n[USER #4]: a\nb\n\n[TOOL:terminal #5]: c"
    blocks = parse_transcript(text)
    assert [(b.tag, b.message_id, b.text) for b in blocks] == [
        ("USER", 4, "a\nb"),
        ("TOOL:terminal", 5, "c"),
    ]
    assert [b.message_id for b in parse_transcript("[USER]: a\n\n[ASSISTANT]: b")] == [None, None]


def test_query_terms_drop_operators_and_stopwords() -> None:
    assert query_terms('How did we fix "docker compose" OR nginx?') == [
        "fix",
        "docker",
        "compose",
        "nginx",
    ]


def test_matched_ids_with_their_neighbours() -> None:
    msgs = [(i, "USER" if i % 2 else "ASSISTANT", f"message {i}") for i in range(1, 11)]
    recap = extractive_recap(transcript(msgs), "", matched_message_ids=[5], reason="x")
    lines = recap.splitlines()
    assert lines[0] == "[Not summarized (x): extractive recap of the matching messages]"
    assert lines[1:] == ["[ASSISTANT #4]: message 4", "[USER #5]: message 5",
                         "[ASSISTANT #6]: message 6"]  # fmt: skip


def test_query_terms_locate_matches_without_ids() -> None:
    doc = sample_documents(with_ids=False)[1]
    recap = extractive_recap(doc.page_content, "alembic stamp", neighbours=0)
    assert "[ASSISTANT]: The table was created by hand" in recap
    assert "[USER]: Great." not in recap


def test_gaps_are_marked_and_long_messages_clipped_around_the_match() -> None:
    long = "x " * 400 + "the needle is here " + "y " * 400
    msgs = [(1, "USER", long), (2, "ASSISTANT", "a"), (3, "USER", "b"), (4, "USER", "needle")]
    recap = extractive_recap(transcript(msgs), "needle", neighbours=0, snippet_chars=120)
    assert "…" in recap.splitlines()  # the gap between #1 and #4
    first = recap.splitlines()[1]
    assert "needle" in first and len(first) < 160


def test_budget_is_respected() -> None:
    msgs = [(i, "USER", f"needle {i} " + "z" * 250) for i in range(1, 40)]
    recap = extractive_recap(transcript(msgs), "needle", max_chars=1000)
    assert len(recap) < 1000 + 200
    assert recap.endswith("…")


def test_no_match_shows_the_request_and_the_last_answer() -> None:
    msgs = [(1, "USER", "please fix the build"), (2, "ASSISTANT", "looking"),
            (3, "TOOL:terminal", "ok"), (4, "ASSISTANT", "fixed with make clean")]  # fmt: skip
    recap = extractive_recap(transcript(msgs), "unrelated")
    assert "[USER #1]: please fix the build" in recap
    assert "[ASSISTANT #4]: fixed with make clean" in recap


def test_untagged_and_empty_transcripts() -> None:
    assert extractive_recap("", "q").endswith("No transcript available.")
    assert extractive_recap("just some text about q", "q").endswith("just some text about q")


@given(st.text(max_size=500), st.text(max_size=40), st.lists(st.integers(0, 50), max_size=5))
def test_never_empty_and_always_labelled(text: str, query: str, ids: list[int]) -> None:
    recap = extractive_recap(text, query, matched_message_ids=ids)
    assert recap.startswith(LABEL)
    assert len(recap.splitlines()) >= 2
