"""``show_session`` (the ``session_show`` payload): windows, gaps, and the size bounds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_session_recall import SessionNotFoundError, SessionStore
from langchain_session_recall.recall.show import (
    SHOW_MAX_ANCHORS,
    SHOW_MAX_CHARS,
    SHOW_MIN_CHARS,
    SHOW_MIN_CLIP,
    show_session,
)


@pytest.fixture(scope="module")
def long_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionStore]:
    """One 40-message session (3,000 characters each) and one empty session."""
    with SessionStore(tmp_path_factory.mktemp("show") / "long.db") as store:
        store.add_session("long", source="cli", title="A long one")
        roles = ("user", "assistant")
        store.add_messages(
            "long",
            [
                {"role": roles[n % 2], "content": f"message {n} " + "filler " * 428}
                for n in range(40)
            ],
        )
        store.add_session("empty", source="cli")
        yield store


def _ids(store: SessionStore) -> list[int]:
    return [m.id for m in store.get_messages("long")]


def test_no_ids_shows_the_start(long_store: SessionStore) -> None:
    ids = _ids(long_store)
    shown = show_session(long_store, "long", context=2)
    assert shown["shown"] == [{"from": ids[0], "to": ids[4]}]
    assert shown["transcript"].rstrip().endswith("...[35 later messages not shown]...")
    assert shown["message_count"] == 40 and shown["title"] == "A long one"


def test_windows_merge_and_gaps_are_counted(long_store: SessionStore) -> None:
    ids = _ids(long_store)
    shown = show_session(
        long_store, "long", message_ids=[ids[10], ids[12], ids[30]], context=1, include_start=True
    )
    assert shown["shown"] == [
        {"from": ids[0], "to": ids[2]},
        {"from": ids[9], "to": ids[13]},  # 10 and 12 overlap: one window
        {"from": ids[29], "to": ids[31]},
    ]
    text = shown["transcript"]
    assert "...[6 messages not shown]..." in text and "...[15 messages not shown]..." in text
    assert text.rstrip().endswith("...[8 later messages not shown]...")
    for n in (10, 12, 30):
        assert f"[USER #{ids[n]}]" in text or f"[ASSISTANT #{ids[n]}]" in text


def test_context_is_clamped(long_store: SessionStore) -> None:
    ids = _ids(long_store)
    wide = show_session(long_store, "long", message_ids=[ids[20]], context=99, max_chars=20_000)
    assert wide["shown"] == [{"from": ids[10], "to": ids[30]}] and wide["context"] == 10
    narrow = show_session(long_store, "long", message_ids=[ids[20]], context=-3)
    assert narrow["shown"] == [{"from": ids[20], "to": ids[20]}] and narrow["context"] == 0
    assert narrow["truncated"] is False  # one 3,000-character message fits whole
    assert "characters not shown" not in narrow["transcript"]


def test_context_shrinks_before_neighbours_become_stubs(long_store: SessionStore) -> None:
    ids = _ids(long_store)
    shown = show_session(long_store, "long", message_ids=[ids[20]], context=10, max_chars=8_000)
    assert shown["context"] < 10 and shown["truncated"] is True
    first, last = shown["shown"][0]["from"], shown["shown"][0]["to"]
    assert ids[20] - first == last - ids[20] == shown["context"]
    clipped = [p for p in shown["transcript"].split("\n\n") if "characters not shown]" in p]
    assert clipped
    for part in clipped:  # no neighbour cut to a stub: each keeps 300 characters or more
        body = part.split("]: ", 1)[1].split(" ...[", 1)[0]
        assert len(body) >= SHOW_MIN_CLIP - 1  # - 1: a trailing space is stripped
    assert len(shown["transcript"]) <= 8_000


def test_size_bounds(long_store: SessionStore) -> None:
    ids = _ids(long_store)
    wanted = [ids[n] for n in (3, 10, 17, 24, 31, 36, 38)]
    big = show_session(long_store, "long", message_ids=wanted, context=10, max_chars=10**9)
    assert big["max_chars"] == SHOW_MAX_CHARS and len(big["transcript"]) <= SHOW_MAX_CHARS
    assert big["truncated"] is True
    assert big["ignored_message_ids"] == wanted[SHOW_MAX_ANCHORS:]
    small = show_session(long_store, "long", message_ids=wanted[:5], max_chars=1)
    assert small["max_chars"] == SHOW_MIN_CHARS and len(small["transcript"]) <= SHOW_MIN_CHARS
    for shown in (big, small):  # each window is cut around its requested message
        for message_id in wanted[:SHOW_MAX_ANCHORS]:
            assert f" #{message_id}]: message" in shown["transcript"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    picks=st.lists(st.integers(0, 39), max_size=8),
    context=st.integers(-2, 15),
    max_chars=st.integers(0, 30_000),
    include_start=st.booleans(),
)
def test_never_longer_than_the_bound(
    long_store: SessionStore, picks: list[int], context: int, max_chars: int, include_start: bool
) -> None:
    ids = _ids(long_store)
    shown = show_session(
        long_store,
        "long",
        message_ids=[ids[p] for p in picks],
        context=context,
        max_chars=max_chars,
        include_start=include_start,
    )
    assert len(shown["transcript"]) <= shown["max_chars"] <= SHOW_MAX_CHARS
    assert shown["transcript"]  # something is always shown


def test_unknown_ids_and_sessions(long_store: SessionStore) -> None:
    ids = _ids(long_store)
    partly = show_session(long_store, "long", message_ids=[ids[5], 999_999])
    assert partly["unknown_message_ids"] == [999_999] and partly["shown"][0]["to"] == ids[8]
    with pytest.raises(ValueError, match=rf"#{ids[0]} to #{ids[-1]}"):
        show_session(long_store, "long", message_ids=[999_999])
    start = show_session(long_store, "long", message_ids=[999_999], include_start=True)
    assert start["shown"][0]["from"] == ids[0]
    with pytest.raises(SessionNotFoundError):
        show_session(long_store, "nope")
    with pytest.raises(ValueError, match="session_id is empty"):
        show_session(long_store, "  ")
    empty = show_session(long_store, "empty")
    assert (empty["message_count"], empty["transcript"], empty["shown"]) == (0, "", [])


def test_a_session_of_another_user_is_not_found(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "t.db") as store:
        store.add_session("mine", source="cli", user_id="alice")
        store.add_messages("mine", [{"role": "user", "content": "hello"}])
        assert show_session(store, "mine", user_id="alice")["message_count"] == 1
        with pytest.raises(SessionNotFoundError):
            show_session(store, "mine", user_id="bob")
