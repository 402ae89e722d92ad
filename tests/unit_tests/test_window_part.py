"""A result's window is placed on the run of its chain it needs (issue 33; issue 31 item 2):
a search reads the chain's order, then the text of the messages around its matches, not the
whole chain; and what it returns is byte for byte what the whole chain's transcript gives.

The reference builds every result from the whole chain (``ChainPart.of(chain_messages)``,
what a search read before). The chains are hostile to a window placed on a part: many
matches spread far apart, sub-agents whose messages fall among their parent's (``--- session``
lines), secrets near the matches (redaction moves the window), tool output clipped, a
message that renders as no part at all (its tool calls junk), windows of 300 characters.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_session_recall import SessionStore, redact_secrets
from langchain_session_recall.recall import build, chain_part
from langchain_session_recall.recall.build import search_results
from langchain_session_recall.recall.chain_part import ChainPart
from langchain_session_recall.recall.transcript import part_window_bounds, window_bounds
from tests.chain_reads import add_long_chain, count_reads

_WORDS = [
    "cache",
    "deploy",
    "nginx",
    "error",
    "retry",
    "token",
    "schema",
    "worker",
    "queue",
    "index",
    "build",
    "table",
]
_QUERIES = ("quokka", "zebrafish", "wombat", "quokka wombat", "nginx error")
_RARE = {"quokka": (0,), "zebrafish": (0, 3), "wombat": (0, 150)}
"""Words in few messages of a chain, at these distances (messages) from a random first."""


def _text(rnd: random.Random, words: int) -> str:
    return " ".join(rnd.choice(_WORDS) for _ in range(words))


def _message(rnd: random.Random, i: int) -> dict[str, Any]:
    kind = rnd.random()
    content = _text(rnd, rnd.choice((3, 20, 120)))
    if rnd.random() < 0.05:
        content += f" OPENAI_API_KEY=sk-{i:04d}abcdefghijklmnopqrstuvwx"
    if kind < 0.25:
        return {"role": "tool", "tool_name": "run", "content": content * rnd.choice((1, 30))}
    if kind < 0.4:
        args = {"path": f"f{i}.py", "content": _text(rnd, rnd.choice((5, 200)))}
        call = {"id": f"c{i}", "name": "write_file", "args": args}
        return {"role": "assistant", "content": rnd.choice(("", content)), "tool_calls": [call]}
    return {"role": rnd.choice(("user", "assistant")), "content": content}


def _build(path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    with SessionStore(path) as store:
        for s in range(4):
            root = f"root-{s}"
            store.add_session(root, started_at=float(s))
            chain = [{**_message(rnd, i), "timestamp": float(i)} for i in range(300)]
            for word, steps in _RARE.items():
                first = rnd.randrange(300)
                for step in steps:
                    chain[(first + step) % 300]["content"] += f" {word}"
            store.add_messages(root, chain)
            kid = f"{root}/sub-sk-abcdefghijklmnopqrstuvwxyz{s}"  # a secret in a session id
            store.add_session(kid, parent_session_id=root, started_at=float(s))
            at = rnd.randint(0, 300)
            store.add_messages(
                kid, [{**_message(rnd, i), "timestamp": at + i / 100} for i in range(60)]
            )
    with sqlite3.connect(path) as conn:  # another writer's junk: a call that renders nothing
        conn.execute(
            "UPDATE messages SET content = '', tool_calls = '[1]' "
            "WHERE role = 'assistant' AND id % 7 = 0"
        )


@pytest.fixture(scope="module", params=[1, 2])
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SessionStore]:
    path = tmp_path_factory.mktemp("chains") / "store.db"
    _build(path, request.param)
    with SessionStore(path, read_only=True) as store:
        yield store


def _whole(self: Any, ranked: Any) -> ChainPart:
    return ChainPart.of(self.store.chain_messages(ranked.root_id, user_id=self.user_id))


@pytest.mark.parametrize(("max_chars", "ids"), [(300, True), (1_200, False), (None, True)])
@pytest.mark.parametrize("margin", [0, chain_part.FIRST_MARGIN])
def test_results_are_those_of_the_whole_chain(
    store: SessionStore,
    monkeypatch: pytest.MonkeyPatch,
    max_chars: int | None,
    ids: bool,
    margin: int,
) -> None:
    # a run that starts with fewer messages around the matches grows more often
    def search(query: str) -> list[tuple[str, dict[str, Any]]]:
        results = search_results(
            store, query, k=4, max_chars=max_chars, show_message_ids=ids, redact=redact_secrets
        )
        return [(r.page_content, r.metadata) for r in results]

    monkeypatch.setattr(chain_part, "FIRST_MARGIN", margin)
    part = {q: search(q) for q in _QUERIES}
    with monkeypatch.context() as patch:
        patch.setattr(build._SearchResult, "_chain_part", _whole)
        whole = {q: search(q) for q in _QUERIES}
    assert part == whole
    assert all(part.values())


def test_a_search_reads_the_messages_near_its_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SessionStore(tmp_path / "long.db") as store:
        add_long_chain(store, "long", {1_000: " zebrafish"})
        read = count_reads(monkeypatch, store, refuse_whole=True)
        (result,) = search_results(store, "zebrafish", k=1, max_chars=8_000)
        assert "zebrafish" in result.page_content and result.metadata["truncated"]
        assert 0 < len(read) < 100  # a window of 8,000 characters holds about 40 of them


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(st.text("ab \n", max_size=40), min_size=1, max_size=40),
    cut=st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1)),
    max_chars=st.sampled_from([8, 20, 50, 120, None]),
)
def test_a_window_placed_on_a_part_is_the_whole_texts(
    lines: list[str], cut: tuple[float, float, float], max_chars: int | None
) -> None:
    # Any part of a text, any centre in it: the part gives the whole text's window, or None.
    text = "\n".join(lines)
    low, high = sorted(round(c * len(text)) for c in cut[:2])
    centre = low + round(cut[2] * (high - low))
    part = text[low:high]
    head, tail = low == 0, high == len(text)
    placed = part_window_bounds(part, centre - low, max_chars, head=head, tail=tail)
    if placed is not None:
        start, end = window_bounds(text, centre, max_chars)
        assert placed == (start - low, end - low)
    if head and tail:
        assert placed == window_bounds(text, centre, max_chars)


def test_matches_spread_over_a_long_chain_read_the_window_of_the_best_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window holds the best match (match_position's anchor): matches further than its
    # reach cannot place it, so only they are read (for their evidence), not all between.
    with SessionStore(tmp_path / "long.db") as store:
        words = {i: " deploy" for i in range(0, 2_000, 20)}
        add_long_chain(store, "long", {**words, 1_001: " deploy zebrafish"})

        def search() -> Any:
            (result,) = search_results(
                store, "deploy zebrafish", k=1, max_chars=8_000, redact=redact_secrets
            )
            return result

        read = count_reads(monkeypatch, store)
        part = search()
        assert "zebrafish" in part.page_content and len(part.metadata["matched_message_ids"]) > 20
        assert 0 < len(set(read)) < 300  # its window (about 40) and the matches, not 2,000
        monkeypatch.setattr(build._SearchResult, "_chain_part", _whole)
        whole = search()
        assert (part.page_content, part.metadata) == (whole.page_content, whole.metadata)
