from langchain_session_recall.core.text import TOOL_CLIP_MARKER, clip_tool_output
from langchain_session_recall.models import StoredMessage
from langchain_session_recall.transcript import (
    EARLIER_MARKER,
    LATER_MARKER,
    format_transcript,
    format_when,
    window,
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
        "[USER]: fix it\n\n[ASSISTANT]: [Called: terminal, read_file]\n\n"
        "[TOOL:terminal]: ok\n\n[ASSISTANT]: [Called: terminal]\n\n[ASSISTANT]: done"
    )


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


def test_window_centres_on_match_and_marks_cuts() -> None:
    text = "a" * 1000 + "MATCH" + "b" * 1000
    cut, truncated = window(text, 1000, 200)
    assert truncated
    assert cut.startswith(EARLIER_MARKER) and cut.endswith(LATER_MARKER)
    body = cut[len(EARLIER_MARKER) : -len(LATER_MARKER)]
    assert len(body) == 200 and "MATCH" in body


def test_window_clamps_at_start_and_end() -> None:
    text = "x" * 1000
    head, _ = window(text, 0, 100)
    assert not head.startswith(EARLIER_MARKER) and len(head) == 100 + len(LATER_MARKER)
    tail, _ = window(text, 1000, 100)
    assert tail.startswith(EARLIER_MARKER) and not tail.endswith(LATER_MARKER)
    assert window("short", 0, 100) == ("short", False)


def test_format_when() -> None:
    assert format_when(0) == "1970-01-01 00:00 UTC"
    assert format_when(None) == "unknown"
