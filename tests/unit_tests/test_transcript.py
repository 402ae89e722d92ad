from langchain_session_recall.core.text import TOOL_CLIP_MARKER, clip_tool_output
from langchain_session_recall.models import StoredMessage
from langchain_session_recall.recall.transcript import (
    EARLIER_MARKER,
    LATER_MARKER,
    format_transcript,
    format_when,
    window_bounds,
)


def _msg(i: int, role: str, content: str, **kw: object) -> StoredMessage:
    return StoredMessage(i, kw.pop("session_id", "s"), role, content, float(i), **kw)  # type: ignore[arg-type]


def test_formats_roles_tool_calls_and_tool_results() -> None:
    calls = [
        {"id": "1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}},
        {"id": "2", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
    ]
    text = format_transcript(
        [
            _msg(1, "user", "fix it"),
            _msg(2, "assistant", "", tool_calls=calls),
            _msg(3, "tool", "ok", tool_name="terminal"),
            _msg(4, "assistant", "done", tool_calls=calls[:1]),
        ]
    ).text
    assert text == (
        "[USER]: fix it\n\n[ASSISTANT → terminal()]:\n\n[ASSISTANT → read_file()]:\n\n"
        "[TOOL:terminal]: ok\n\n[ASSISTANT]: done\n\n[ASSISTANT → terminal()]:"
    )


def test_a_tool_call_shows_its_arguments_and_code() -> None:
    """Issue 23 §2: short arguments inline, long or multi-line ones as code blocks."""
    script = "import os\n" + "print('renamed')\n" * 5
    calls = [
        {"name": "write_file", "args": {"path": "rename_photos.py", "content": script}},
        {"function": {"name": "terminal", "arguments": '{"command": "ls -la ~/bin"}'}},
        {"function": {"name": "run_sql", "arguments": "not json: SELECT 1"}},
    ]
    text = format_transcript(
        [_msg(3, "assistant", "Written.", tool_calls=calls)], show_ids=True
    ).text
    assert text == (
        "[ASSISTANT #3]: Written.\n\n"
        '[ASSISTANT #3 → write_file(path="rename_photos.py")]:\n'
        "```python\n" + script.rstrip("\n") + "\n```\n\n"
        '[ASSISTANT #3 → terminal(command="ls -la ~/bin")]:\n\n'
        '[ASSISTANT #3 → run_sql("not json: SELECT 1")]:'
    )


def test_a_long_argument_is_clipped_with_a_marker() -> None:
    body = "HEAD" + "x" * 10_000 + "TAIL"
    calls = [{"name": "write_file", "args": {"path": "big.txt", "content": body}}]
    text = format_transcript([_msg(1, "assistant", "", tool_calls=calls)]).text
    assert "HEAD" in text and "TAIL" in text and "characters not shown]" in text
    assert len(text) < 3_200
    fence = format_transcript(
        [_msg(1, "assistant", "", tool_calls=[{"name": "w", "args": {"c": "a\n```\nb"}}])]
    ).text
    assert fence.endswith("````\na\n```\nb\n````")  # a fence longer than any inside


def test_message_ids_in_tags_and_offsets() -> None:
    t = format_transcript([_msg(7, "user", "a"), _msg(9, "assistant", "b")], show_ids=True)
    assert t.text == "[USER #7]: a\n\n[ASSISTANT #9]: b"
    assert t.text[t.offsets[9] :].startswith("[ASSISTANT #9]")


def test_session_switch_is_marked() -> None:
    t = format_transcript(
        [_msg(1, "user", "a", session_id="root"), _msg(2, "user", "b", session_id="kid")],
        root_id="root",
    )
    assert "--- session kid ---" in t.text
    assert t.text[t.offsets[2] :].startswith("[USER]: b")


def test_long_tool_output_keeps_head_and_tail_once() -> None:
    out = "H" * 300 + "M" * 1000 + "T" * 300
    clipped = clip_tool_output(out)
    assert clipped == "H" * 250 + TOOL_CLIP_MARKER + "T" * 250
    assert clip_tool_output(clipped) == clipped
    assert clip_tool_output("short") == "short"


def _window(text: str, center: int, max_chars: int) -> str:
    """The cut ``window_bounds`` chooses, with the markers a result shows where it cut."""
    start, end = window_bounds(text, center, max_chars)
    cut_before, cut_after = start > 0, end < len(text)
    return (
        (EARLIER_MARKER if cut_before else "")
        + text[start:end]
        + (LATER_MARKER if cut_after else "")
    )


def test_window_centres_on_match_and_marks_cuts() -> None:
    text = "a" * 1000 + "MATCH" + "b" * 1000
    cut = _window(text, 1000, 200)
    assert cut.startswith(EARLIER_MARKER) and cut.endswith(LATER_MARKER)
    body = cut[len(EARLIER_MARKER) : -len(LATER_MARKER)]
    assert len(body) == 200 and "MATCH" in body


def test_window_clamps_at_start_and_end() -> None:
    text = "x" * 1000
    head = _window(text, 0, 100)
    assert not head.startswith(EARLIER_MARKER) and len(head) == 100 + len(LATER_MARKER)
    tail = _window(text, 1000, 100)
    assert tail.startswith(EARLIER_MARKER) and not tail.endswith(LATER_MARKER)
    assert window_bounds("short", 0, 100) == (0, 5) and _window("short", 0, 100) == "short"


def test_a_cut_moves_to_a_line_break() -> None:
    text = "one\ntwo\nthree MATCH\nfour\nfive"
    assert _window(text, text.index("MATCH"), 16).split("\n\n")[1] == "three MATCH"


def test_format_when() -> None:
    assert format_when(0) == "1970-01-01 00:00 UTC"
    assert format_when(None) == "unknown"
