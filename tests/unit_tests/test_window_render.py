"""Issue 33: a result's text is rendered from its data. Every window a transcript can be cut to
(any start and end, a cut inside a tag, right after one, inside a ``--- session`` line, no tag
at all) renders back to exactly ``text[start:end]`` with its truncation markers, and the
pieces say which runs are tags, session lines and markers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_session_recall.models import StoredMessage
from langchain_session_recall.recall.model import shown_window
from langchain_session_recall.recall.render import window_pieces, window_text
from langchain_session_recall.recall.transcript import (
    EARLIER_MARKER,
    LATER_MARKER,
    format_transcript,
)

_CALLS = [
    [{"function": {"name": "terminal", "arguments": '{"command": "ls ~/Pictures"}'}}],
    [{"function": {"name": "write_file", "arguments": '{"path": "a.py", "content": "x = 1\\n"}'}}],
    [{"function": {"name": "noop", "arguments": "{}"}}],
]
_message = st.tuples(
    st.sampled_from(["user", "assistant", "tool", "system"]),
    st.text(alphabet="ab \n]:[#", max_size=30),
    st.sampled_from(["root", "root", "child", "other"]),
    st.sampled_from([None, *range(len(_CALLS))]),
)


def _messages(rows: list[tuple[str, str, str, int | None]]) -> list[StoredMessage]:
    out = []
    for i, (role, text, session, call) in enumerate(rows, 1):
        calls = _CALLS[call] if role == "assistant" and call is not None else None
        name = "terminal" if role == "tool" else None
        out.append(
            StoredMessage(i, session, role, text, float(i), tool_calls=calls, tool_name=name)
        )
    return out


def _expected(text: str, start: int, end: int) -> str:
    return (
        (EARLIER_MARKER if start > 0 else "")
        + text[start:end]
        + (LATER_MARKER if end < len(text) else "")
    )


@settings(max_examples=400, deadline=None)
@given(
    rows=st.lists(_message, min_size=1, max_size=6),
    ids=st.booleans(),
    cut=st.tuples(st.floats(0, 1), st.floats(0, 1)),
)
def test_every_window_renders_back_to_its_text(
    rows: list[tuple[str, str, str, int | None]], ids: bool, cut: tuple[float, float]
) -> None:
    transcript = format_transcript(_messages(rows), show_ids=ids, root_id="root")
    text = transcript.text
    start, end = sorted(round(c * len(text)) for c in cut)
    window = shown_window(text, transcript.parts, start, end)
    assert window_text(window, ids_shown=ids) == _expected(text, start, end)


def test_cuts_at_each_edge_of_every_tag_render_back() -> None:
    rows = [
        ("user", "rename my photos", "root", None),
        ("assistant", "on it", "root", 0),
        ("assistant", "", "child", 1),
        ("tool", "a.jpg", "child", None),
        ("assistant", "", "root", 2),
    ]
    transcript = format_transcript(_messages(rows), show_ids=True, root_id="root")
    text = transcript.text
    edges = {0, len(text)}
    for part in transcript.parts:
        edges |= {part.start, part.tag_end, part.body_start, part.end}
    for start in sorted(edges):
        for end in sorted(e for e in edges if e >= start):
            window = shown_window(text, transcript.parts, start, end)
            assert window_text(window, ids_shown=True) == _expected(text, start, end)


def test_the_pieces_name_tags_session_lines_and_markers() -> None:
    rows = [("user", "hi", "root", None), ("tool", "out", "child", None)]
    transcript = format_transcript(_messages(rows), show_ids=False, root_id="root")
    window = shown_window(transcript.text, transcript.parts, 1, len(transcript.text) - 1)
    pieces = [(p.kind, p.role, p.text) for p in window_pieces(window, ids_shown=False)]
    assert [p for p in pieces if p[0] != "text"] == [
        ("marker", None, "...[earlier conversation truncated]..."),
        ("session", None, "--- session child ---"),
        ("tag", "TOOL", "[TOOL:terminal]:"),
        ("marker", None, "...[later conversation truncated]..."),
    ]
