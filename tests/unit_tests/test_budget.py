"""The token budget over recaps (issue 34, deliverable 3): best first, never over, code marked."""

from __future__ import annotations

import json
import random

import pytest

from langchain_session_recall.summarize.budget import (
    CLOSE_SCORE,
    CODE_CUT_MARKER,
    CUT_MARKER,
    Recap,
    cut_text,
    estimate_tokens,
    fill_budget,
)
from langchain_session_recall.summarize.extractive import extractive_pieces, extractive_recap


def _joined(texts: list[str] | tuple[str, ...]) -> str:
    return "\n\n".join(t for t in texts if t)


def _recap(name: str, values: list[int]) -> Recap:
    """A recap whose pieces say their session and value; best first by value."""
    pieces = tuple(f"{name}-{v}: " + "x" * 30 for v in values)
    order = tuple(sorted(range(len(values)), key=lambda i: -values[i]))
    return Recap((f"== {name}",), pieces, order)


def test_the_best_session_s_best_pieces_come_first_then_the_next_session() -> None:
    first = _recap("s1", [1, 9, 5])
    second = _recap("s2", [8, 2])
    piece = len(first.pieces[0]) + 1
    head = len("== s1") + 1
    # room for the head, two pieces and the trailing "…": s1's two best, nothing of s2
    budget = head + 2 * piece + 2
    texts = fill_budget([first, second], _joined, budget, len)
    assert "s1-9" in texts[0] and "s1-5" in texts[0] and "s1-1" not in texts[0]
    assert texts[1] == ""
    # with room for everything of s1 and one piece of s2: its best one
    budget = len(first.render(range(3))) + 2 + len("== s2\n") + piece + 2
    texts = fill_budget([first, second], _joined, budget, len)
    assert texts[0] == first.render(range(3))
    assert "s2-8" in texts[1] and "s2-2" not in texts[1]


def test_a_session_scored_close_to_the_best_gets_its_best_piece_in_second() -> None:
    first = _recap("s1", [9, 8, 7, 6, 5, 4])
    second = _recap("s2", [3])
    # room for s1's best and s2's best, or for s1's two best
    budget = len(_joined([first.render(range(1)), second.render(range(1))]))
    assert len(first.render(range(2))) <= budget
    close = fill_budget([first, second], _joined, budget, len, scores=[1.5, 1.5 * CLOSE_SCORE])
    assert "s1-9" in close[0] and "s1-8" not in close[0] and "s2-3" in close[1]
    # scored far below the best, or not scored at all: the best session's pieces first
    for scores in ([1.5, 1.4 * CLOSE_SCORE], [1.5, None], []):
        texts = fill_budget([first, second], _joined, budget, len, scores=scores)
        assert "s1-9" in texts[0] and "s1-8" in texts[0] and texts[1] == ""


def test_a_far_session_s_best_piece_comes_after_the_best_session_s_shown_pieces() -> None:
    first = Recap(("== s1",), tuple(f"s1-{n}: " + "x" * 30 for n in range(4)), (0, 1, 2, 3), base=2)
    second = _recap("s2", [3])
    # room for s1's two shown pieces and s2's best, not for s1's third
    budget = len(_joined([first.render(range(2)), second.render(range(1))]))
    texts = fill_budget([first, second], _joined, budget, len, scores=[1.5, 0.1])
    assert "s1-0" in texts[0] and "s1-1" in texts[0] and "s1-2" not in texts[0]
    assert "s2-3" in texts[1]


def test_a_piece_is_shown_whole_when_that_fits_before_further_pieces() -> None:
    whole = "[USER]: we moved the kiln to the garage because the shed flooded in May"
    recap = Recap(("h",), ("[USER]: …the kiln…", "[USER]: ok"), (0, 1), wide=(whole, ""))
    # room for the whole message, not for it and the next one
    budget = len(f"h\n{whole}\n…")
    assert fill_budget([recap], _joined, budget, len) == [f"h\n{whole}\n…"]


@pytest.mark.parametrize("budget", [5, 20, 40, 60, 120, 250, 1000])
def test_the_output_never_exceeds_the_budget(budget: int) -> None:
    rng = random.Random(budget)
    recaps = [
        Recap(
            (f"Session {n}",),
            tuple("word " * rng.randint(1, 120) for _ in range(rng.randint(1, 6))),
            tuple(rng.sample(range(6), 6)),
        )
        for n in range(3)
    ]
    recaps = [
        Recap(r.head, r.pieces, tuple(i for i in r.order if i < len(r.pieces))) for r in recaps
    ]

    def render(texts: list[str] | tuple[str, ...]) -> str:
        return json.dumps({"results": [t for t in texts if t]})

    texts = fill_budget(recaps, render, budget)
    assert estimate_tokens(render(texts)) <= budget


def test_a_piece_too_long_for_what_is_left_is_cut_and_marked() -> None:
    recap = Recap(("head",), ("the answer is 42 " + "and more words " * 40,), (0,))
    [text] = fill_budget([recap], _joined, 30)
    assert text.startswith("head\nthe answer is 42")
    assert CUT_MARKER in text
    assert estimate_tokens(text) <= 30


def test_a_cut_inside_a_fenced_code_block_closes_the_fence_and_says_so() -> None:
    code = "Run this:\n```bash\n" + "\n".join(f"echo step {n}" for n in range(40)) + "\n```"
    cut = cut_text(code, 120)
    assert len(cut) <= 120
    assert cut.endswith(f"{CODE_CUT_MARKER}\n```")
    assert cut.count("```") == 2  # opened and closed
    recap = Recap.of_text(code)
    [text] = fill_budget([recap], _joined, 40)
    assert text.count("```") % 2 == 0 and CODE_CUT_MARKER in text


def test_a_model_recap_keeps_a_code_block_in_one_piece() -> None:
    text = "We fixed it.\n\n```python\nx = 1\n\ny = 2\n```\n\nThen we deployed."
    assert Recap.of_text(text).pieces == (
        "We fixed it.",
        "```python\nx = 1\n\ny = 2\n```",
        "Then we deployed.",
    )


def test_any_len_like_counter_is_used() -> None:
    words = Recap((), tuple(f"piece {n} " + "w " * 10 for n in range(5)), tuple(range(5)))
    calls: list[str] = []

    def count_words(text: str) -> int:
        calls.append(text)
        return len(text.split())

    [text] = fill_budget([words], _joined, 30, count_words)
    assert calls and len(text.split()) <= 30
    assert text.count("piece") == 2  # 12 words each


def test_the_extractive_pieces_render_the_extractive_recap() -> None:
    transcript = "\n\n".join(
        f"[USER #{n}]: " + ("the kiln broke" if n == 7 else f"talk {n}") for n in range(1, 12)
    )
    args = {"matched_message_ids": [7], "header": "Session s1"}
    recap = extractive_pieces(transcript, "kiln", **args)
    assert recap.render(range(len(recap.pieces))) == extractive_recap(transcript, "kiln", **args)
    assert "kiln" in recap.pieces[recap.order[0]]  # the matched message is the best piece


def test_a_recap_round_trips_through_metadata() -> None:
    recap = Recap(("h",), ("a", "b"), (1, 0), more=True, positions=(3, 7))
    assert Recap.from_metadata({"recap_pieces": recap.to_dict()}) == recap
    assert Recap.from_metadata({}) is None
    assert Recap.from_metadata({"recap_pieces": {"head": 1}}) is None


def test_a_generous_budget_shows_longer_excerpts_then_more_pieces() -> None:
    recap = Recap(
        ("h",), ("[USER]: …the kiln…", "[USER]: more"), (0, 1), base=1,
        wide=("[USER]: then the kiln broke in half", ""),
    )  # fmt: skip
    assert fill_budget([recap], _joined, 1000, len) == [
        "h\n[USER]: then the kiln broke in half\n[USER]: more"
    ]
    # room for the longer excerpt only: it comes before the further piece
    assert fill_budget([recap], _joined, 40, len) == ["h\n[USER]: then the kiln broke in half\n…"]
    assert recap.render(recap.shown) == "h\n[USER]: …the kiln…\n…"


def test_a_cut_keeps_a_tool_call_s_tag_and_some_of_its_text() -> None:
    call = '[ASSISTANT → terminal(command="make")]:\n```bash\n' + "make all\n" * 30 + "```"
    recap = Recap(("h",), ("[USER]: build it", call), (0, 1))
    cuts = 0
    for budget in range(20, 60):
        [text] = fill_budget([recap], _joined, budget)
        shown = text.split("\n")
        if len(shown) > 2 and shown[2] != "…":
            assert shown[2] == '[ASSISTANT → terminal(command="make")]:'
            assert "make all" in text and CODE_CUT_MARKER in text
            cuts += 1
    assert cuts > 0
