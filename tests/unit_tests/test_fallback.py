"""The extractive recap used when a session cannot be summarized."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_session_recall.recall.render import parse_transcript
from langchain_session_recall.summarize.extractive import (
    AFTER_WEIGHT,
    BEFORE_WEIGHT,
    clip,
    context_weight,
    extractive_recap,
    message_values,
    query_terms,
    select_messages,
    term_weights,
)
from tests.summarizer_support import sample_documents, transcript

LABEL = "[Not summarized ("


def test_parse_transcript_with_and_without_ids() -> None:
    text = "...[earlier conversation truncated]...\n\n[USER #4]: a\nb\n\n[TOOL:terminal #5]: c"
    blocks = parse_transcript(text)
    assert [(b.label, b.id if b.id_known else None, b.text) for b in blocks] == [
        ("USER", 4, "a\nb"),
        ("TOOL:terminal", 5, "c"),
    ]
    unknown = parse_transcript("[USER]: a\n\n[ASSISTANT]: b")
    assert [b.id if b.id_known else None for b in unknown] == [None, None]


def test_query_terms_drop_operators_and_stopwords() -> None:
    assert query_terms('How did we fix "docker compose" OR nginx?') == [
        "fix",
        "docker",
        "compose",
        "nginx",
    ]


def test_matched_ids_with_their_neighbours() -> None:
    msgs = [(i, "USER" if i % 2 else "ASSISTANT", f"message {i}") for i in range(1, 11)]
    recap = extractive_recap(
        transcript(msgs), "", matched_message_ids=[5], reason="x", neighbours=1
    )
    lines = recap.splitlines()
    assert lines[0] == "[Not summarized (x): extractive recap of the matching messages]"
    assert lines[1:] == ["[ASSISTANT #4]: message 4", "[USER #5]: message 5",
                         "[ASSISTANT #6]: message 6"]  # fmt: skip
    # By default two messages on each side may be shown (budget permitting).
    default = extractive_recap(transcript(msgs), "", matched_message_ids=[5], reason="x")
    assert [line.split("]")[0] for line in default.splitlines()[1:]] == [
        "[USER #3",
        "[ASSISTANT #4",
        "[USER #5",
        "[ASSISTANT #6",
        "[USER #7",
    ]


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


# -- choosing what to show: scores, context, budget -----------------------------------------


def _talk(lines: list[str]) -> str:
    """A transcript without ids, two speakers taking turns, each line headed by a name."""
    return "\n\n".join(
        f"[{'USER' if i % 2 == 0 else 'ASSISTANT'}]: {'Ann' if i % 2 == 0 else 'Ben'}: {text}"
        for i, text in enumerate(lines)
    )


def test_the_reply_after_a_matched_question_survives() -> None:
    filler = [f"Small talk number {i} about the weather and the weekend." for i in range(30)]
    lines = [*filler[:12], "What did you paint at the lake last spring?", "A grey heron at dawn.",
             *filler[12:]]  # fmt: skip
    recap = extractive_recap(_talk(lines), "What did Ben paint at the lake?", max_chars=400)
    assert "A grey heron at dawn." in recap  # the answer holds no query term
    assert len(recap) < 600


def test_a_rare_term_outweighs_a_name_on_every_line() -> None:
    # "Ann" is in every other message: it must not pull the first messages in.
    lines = [f"Ann here again, message {i}, nothing new." for i in range(20)]
    lines[15] = "The kiln cracked during the second firing."
    recap = extractive_recap(_talk(lines), "Ann kiln", max_chars=300)
    assert "The kiln cracked" in recap
    assert "message 0," not in recap


def test_the_best_messages_fill_the_budget_and_show_in_transcript_order() -> None:
    lines = [f"chatter {i}" for i in range(40)]
    lines[5] = "a word on the kiln"
    lines[30] = "the kiln and the glaze and the wheel"
    recap = extractive_recap(_talk(lines), "kiln glaze wheel", max_chars=200, neighbours=0)
    body = recap.splitlines()[1:]
    first = next(i for i, line in enumerate(body) if "a word on the kiln" in line)
    second = next(i for i, line in enumerate(body) if "the kiln and the glaze" in line)
    assert first < second  # both fit: shown in transcript order
    # the budget is spent on the better message first
    tight = extractive_recap(_talk(lines), "kiln glaze wheel", max_chars=60, neighbours=0)
    assert "the kiln and the glaze" in tight and "a word on the kiln" not in tight


def test_a_long_message_is_clipped_around_its_densest_terms() -> None:
    text = "kiln " + "filler words here " * 30 + "the kiln glaze wheel settings " + "tail " * 60
    assert len(text) > 600
    excerpt = clip(text, term_weights([text, "other"], ["kiln", "glaze", "wheel"]), 120)
    assert "kiln glaze wheel" in excerpt and excerpt.startswith("…")
    assert len(excerpt) <= 122  # the width plus the two ellipses


def test_matched_ids_count_without_query_terms() -> None:
    msgs = [(i, "USER" if i % 2 else "ASSISTANT", f"line {i}") for i in range(1, 30)]
    recap = extractive_recap(transcript(msgs), "zebra", matched_message_ids=[20], neighbours=1)
    assert [line.split("]")[0] for line in recap.splitlines()[1:]] == [
        "[USER #19",
        "[ASSISTANT #20",
        "[USER #21",
    ]


def test_context_weights_prefer_the_reply() -> None:
    assert context_weight(0) == 1.0
    assert context_weight(1) > context_weight(-1) > 0
    assert context_weight(2) < context_weight(1)
    assert message_values([0.0, 0.0, 3.0, 0.0, 0.0, 0.0], neighbours=1) == [
        0.0, pytest.approx(3 * BEFORE_WEIGHT), 3.0, pytest.approx(3 * AFTER_WEIGHT), 0.0, 0.0
    ]  # fmt: skip


@given(
    st.lists(st.floats(0, 10, allow_nan=False), max_size=30),
    st.data(),
    st.integers(0, 2000),
)
def test_selection_respects_the_budget_and_keeps_order(
    values: list[float], data: st.DataObject, budget: int
) -> None:
    sizes = data.draw(st.lists(st.integers(1, 500), min_size=len(values), max_size=len(values)))
    chosen = select_messages(values, sizes, budget)
    assert chosen == sorted(set(chosen))
    assert all(values[i] > 0 for i in chosen)
    assert len(chosen) <= 1 or sum(sizes[i] for i in chosen) <= budget
    if any(v > 0 for v in values):
        assert chosen  # something is always shown
        best = max(range(len(values)), key=lambda i: (values[i], -i))
        assert best in chosen  # the most valuable message first
