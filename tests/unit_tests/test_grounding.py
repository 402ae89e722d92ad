"""Sentence grounding (``summarize/grounding.py``): which messages support each recap sentence.

Unit cases on made-up messages, then the figures docs/summarizer.md quotes, measured on the
labelled corpus of ``tests/data/recaps/``: the hand-written references (every sentence should be
supported, and the computed citations should agree with the references' own), and the hand-made
wrong-story cases of ``wrong_stories.json`` (how many a changed story gets caught).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from langchain_session_recall.recall.model import ShownMessage
from langchain_session_recall.recall.render import parse_transcript
from langchain_session_recall.summarize.grounding import (
    _GROUP,
    RecapGrounding,
    ground_recap,
    split_sentences,
)
from langchain_session_recall.summarize.prompts import CITATION_INSTRUCTION, SUMMARY_SYSTEM_PROMPT
from tests.recap_corpus import CORPUS_DIR, recordings, references, transcripts


def _message(id: int, role: str, text: str) -> ShownMessage:
    """A message of a made-up transcript, as the summarizer reads one."""
    return ShownMessage(id, "s", role, role.upper(), text)


MESSAGES = [
    _message(1, "user", "prod api throws 500s since the deploy, can you check the db?"),
    _message(2, "tool", "97|idle\n3|active"),
    _message(
        3,
        "assistant",
        "Postgres is at max_connections=100 and 97 connections are idle. I'll put pgbouncer "
        "in transaction mode in front of Postgres.",
    ),
    _message(4, "tool", "Wrote 301 bytes to /etc/pgbouncer/pgbouncer.ini"),
    _message(
        5,
        "assistant",
        "Server connections dropped from 100 to 23. pgbouncer listens on 6432 with "
        "default_pool_size=20; the app talks to it instead of 5432.",
    ),
]


def ground(recap: str, **kwargs: object) -> RecapGrounding:
    return ground_recap(recap, MESSAGES, **kwargs)  # type: ignore[arg-type]


def test_each_sentence_is_cited_with_the_messages_that_support_it() -> None:
    g = ground(
        "The prod API threw 500s after a deploy. Postgres was at max_connections=100 with 97 "
        "idle connections. The config went to /etc/pgbouncer/pgbouncer.ini."
    )
    assert [(s.status, s.citations, s.cited_by) for s in g.sentences] == [
        ("supported", (1,), "library"),
        ("supported", (3,), "library"),
        ("supported", (4,), "library"),
    ]
    assert g.citations == [1, 3, 4]
    assert g.render() == (
        "The prod API threw 500s after a deploy [#1]. Postgres was at max_connections=100 with "
        "97 idle connections [#3]. The config went to /etc/pgbouncer/pgbouncer.ini [#4]."
    )


def test_a_sentence_drawing_on_two_messages_cites_both() -> None:
    g = ground("pgbouncer ran in transaction mode and listened on 6432.")
    assert g.sentences[0].status == "supported"
    assert set(g.sentences[0].citations) == {3, 5}


def test_the_models_own_valid_citations_are_kept() -> None:
    g = ground("The API threw 500s [#1].")
    [s] = g.sentences
    assert (s.citations, s.cited_by) == ((1,), "model")
    assert g.render() == "The API threw 500s [#1]."


@pytest.mark.parametrize(
    ("sentence", "why"),
    [
        ("Postgres was at max_connections=200.", "missing"),  # a number found nowhere
        ("The API was pointed at port 5432.", "misplaced"),  # 5432 is the old port, elsewhere
        ("Server connections dropped from 100 to 20.", "misplaced"),  # 20 is the pool size
        ("The team migrated the billing service to a new cluster yesterday.", "coverage"),
    ],
)
def test_a_sentence_the_transcript_does_not_support_is_unsupported(sentence: str, why: str) -> None:
    [s] = ground(sentence).sentences
    assert s.status == "unsupported"
    assert {"missing": bool(s.missing), "misplaced": bool(s.misplaced)}.get(why, True)
    if why == "coverage":
        assert s.coverage < 0.5 and not s.missing and not s.misplaced


def test_unsupported_sentences_are_removed_or_marked() -> None:
    recap = "**Result:**\n- The API threw 500s.\n- It ran on Kubernetes in three regions."
    g = ground(recap)
    assert [s.status for s in g.sentences] == ["label", "supported", "unsupported"]
    assert len(g.unsupported) == 1
    assert g.render() == "**Result:**\n- The API threw 500s [#1]."  # the emptied item goes
    assert g.render(unsupported="mark") == (
        "**Result:**\n- The API threw 500s [#1].\n"
        "- It ran on Kubernetes in three regions [unsupported]."
    )
    assert g.render(unsupported="keep") == (
        "**Result:**\n- The API threw 500s [#1].\n- It ran on Kubernetes in three regions."
    )


def test_headings_need_no_support_and_context_counts() -> None:
    g = ground(
        "**Summary of the session:**\nOn November 5, 2026 the API threw 500s.",
        context="Session date: November 05, 2026",
    )
    assert [s.status for s in g.sentences] == ["label", "supported"]


def test_a_sentence_in_another_language_is_checked_on_its_specifics_only() -> None:
    messages = [_message(7, "user", "把端口从8080改成9000，然后跑一下数据库迁移。")]
    g = ground_recap(
        "The user wanted the port changed from 8080 to 9000. The user was very polite.",
        messages,
    )
    assert [(s.status, s.citations) for s in g.sentences] == [
        ("supported", (7,)),
        ("unchecked", ()),
    ]


def test_sentences_split_at_full_stops_not_inside_names_or_numbers() -> None:
    text = "Ran nginx 1.24.0, e.g. on api.example.dev. It works. [#7] Then:\n1. Port 9000.\n"
    spans = split_sentences(text)
    assert [text[a:b] for a, b in spans] == [
        "Ran nginx 1.24.0, e.g. on api.example.dev.",
        "It works. [#7]",
        "Then:",
        "1. Port 9000.",
    ]


def test_cjk_sentences_split_at_the_ideographic_full_stop() -> None:
    text = "端口改为9000。迁移失败了。"
    assert [text[a:b] for a, b in split_sentences(text)] == ["端口改为9000。", "迁移失败了。"]


# -- measured on the corpus (figures quoted in docs/summarizer.md) ---------------------------

INSTRUCTIONS = SUMMARY_SYSTEM_PROMPT.format(citation_instruction=CITATION_INSTRUCTION)


def _messages(transcript_id: str) -> tuple[list[ShownMessage], dict[str, str]]:
    t = transcripts()[transcript_id if transcript_id.endswith("+ids") else transcript_id + "+ids"]
    messages = [m for m in parse_transcript(t.text) if m.id_known]
    # As the summarizer passes them: the session's title, date and source as context (not the
    # query), the system prompt's instructions.
    return messages, {
        "context": f"{t.title}\n{t.when}\n{t.source}",
        "instructions": INSTRUCTIONS,
    }


def test_reference_recaps_are_supported_and_cited_like_their_authors_did() -> None:
    claims = unsupported = 0
    agree = Counter[str]()
    for ref in references():
        messages, context = _messages(ref.transcript_id)
        plain = _GROUP.sub("", ref.text)
        g = ground_recap(plain, messages, **context)
        claims += len(g.claims)
        unsupported += len(g.unsupported)
        if not ref.transcript_id.endswith("+ids"):
            continue
        by_hand = ground_recap(ref.text, messages, **context)
        for computed, written in zip(g.sentences, by_hand.sentences, strict=True):
            hand = set(written.citations) if written.cited_by == "model" else set()
            if hand:
                agree["both"] += len(hand & set(computed.citations))
                agree["library only"] += len(set(computed.citations) - hand)
                agree["hand only"] += len(hand - set(computed.citations))
    assert (claims, unsupported) == (98, 0)
    precision = agree["both"] / (agree["both"] + agree["library only"])
    recall = agree["both"] / (agree["both"] + agree["hand only"])
    assert (round(precision, 2), round(recall, 2)) == (0.8, 0.68)


def test_wrong_story_cases_caught() -> None:
    data = json.loads((CORPUS_DIR / "wrong_stories.json").read_text("utf-8"))
    caught: Counter[str] = Counter()
    false_alarms: Counter[str] = Counter()
    cases: Counter[str] = Counter()
    for case in data["cases"]:
        messages, context = _messages(case["transcript_id"])
        [wrong] = ground_recap(case["wrong"], messages, **context).sentences
        [true] = ground_recap(case["true"], messages, **context).sentences
        cases[case["kind"]] += 1
        caught[case["kind"]] += wrong.status == "unsupported"
        false_alarms[case["kind"]] += true.status == "unsupported"
    assert dict(cases) == {"flip": 14, "number": 14, "tool": 14}
    assert dict(caught) == {"flip": 0, "number": 9, "tool": 6}
    assert sum(false_alarms.values()) == 0


def test_qwen_recaps_of_the_corpus() -> None:
    """Qwen2.5-Coder-1.5B's 20 recorded recaps: how many sentences the grounding flags, and
    whether it flags the 6 that state something false (``factual_errors``, read by hand)."""
    claims = flagged = unchecked = 0
    errors = caught = 0
    false_alarms = []
    for rec in recordings():
        if rec.model != "qwen2.5-coder-1.5b":
            continue
        messages, context = _messages(rec.transcript_id)
        g = ground_recap(rec.text, messages, **context)
        wrong = set(rec.factual_errors)
        claims += len(g.claims)
        unchecked += len(g.unchecked)
        for s in g.unsupported:
            flagged += 1
            if s.text not in wrong:
                false_alarms.append(s.text)
        errors += len(wrong)
        caught += sum(1 for s in g.unsupported if s.text in wrong)
    assert (claims, flagged, unchecked) == (92, 2, 7)
    assert (errors, caught) == (6, 0)
    assert len(false_alarms) == 2
