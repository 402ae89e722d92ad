"""The transcript tag has one writer (``recall.tags.tag``) and one reader (``recall.tags.TAG``):
every tag a transcript, a tool call or a recap block writes is read back with its label, id and
call, and the readers that used their own patterns (the recap checks, the CLI's styling) see
the same tags."""

from __future__ import annotations

import pytest

from langchain_session_recall.cli.output import _transcript
from langchain_session_recall.models import StoredMessage
from langchain_session_recall.recall.render import (
    message_text,
    parse_transcript,
    text_pieces,
    transcript_pieces,
)
from langchain_session_recall.recall.tags import INDENTED_TAG, TAG
from langchain_session_recall.recall.transcript import format_transcript

_CALL = [{"function": {"name": "terminal", "arguments": '{"command": "ls ~/Pictures/2024"}'}}]
_WRITE = [
    {
        "function": {
            "name": "write_file",
            "arguments": '{"path": "a.py", "content": "x = 1\\ny = 2\\n"}',
        }
    }
]


def _messages() -> list[StoredMessage]:
    return [
        StoredMessage(1, "s", "user", "rename my photos", 0.0),
        StoredMessage(2, "s", "assistant", "on it", 1.0, tool_calls=_CALL),
        StoredMessage(3, "s", "tool", "a.jpg b.jpg", 2.0, tool_name="terminal"),
        StoredMessage(4, "s", "assistant", "", 3.0, tool_calls=_WRITE),
        StoredMessage(5, "s", "system", "be brief", 4.0),
    ]


@pytest.mark.parametrize("ids", [True, False])
def test_every_part_a_transcript_writes_is_read_at_its_start(ids: bool) -> None:
    transcript = format_transcript(_messages(), show_ids=ids)
    found = {m.start(): m for m in TAG.finditer(transcript.text)}
    assert sorted(found) == [part.start for part in transcript.parts]
    for part in transcript.parts:
        m = found[part.start]
        assert m.group("label") == part.label
        assert m.group("id") == (str(part.message.id) if ids else None)
        assert (m.group("call") or "") == part.call
        assert m.end() == part.tag_end


def test_a_call_with_long_arguments_keeps_them_below_its_tag() -> None:
    text = format_transcript(_messages(), show_ids=True).text
    blocks = parse_transcript(text)
    assert [(b.label, b.id if b.id_known else None) for b in blocks] == [
        ("USER", 1),
        ("ASSISTANT", 2),
        ("ASSISTANT", 2),
        ("TOOL:terminal", 3),
        ("ASSISTANT", 4),
        ("SYSTEM", 5),
    ]
    write = blocks[4]
    assert write.call == ' → write_file(path="a.py")'
    assert write.text == "```python\nx = 1\ny = 2\n```"
    assert message_text(write, show_id=True) == text.split("\n\n")[4]


def test_the_recap_checks_see_indented_tags_the_transcript_reader_does_not() -> None:
    text = "  [ASSISTANT #7]: indented by a model\n[USER #8]: at the line start"
    assert [m.group("id") for m in INDENTED_TAG.finditer(text)] == ["7", "8"]
    assert [m.group("id") for m in TAG.finditer(text)] == ["8"]


@pytest.mark.parametrize("made_elsewhere", [False, True])
def test_the_cli_styles_every_tag_a_call_tag_too(made_elsewhere: bool) -> None:
    """From the transcript's data (``show``), or read from text made elsewhere (a recap)."""
    transcript = format_transcript(_messages(), show_ids=True)
    if made_elsewhere:
        styled = _transcript(text_pieces(transcript.text))
    else:
        styled = _transcript(transcript_pieces(transcript, ids_shown=True))
    assert styled.plain == transcript.text
    tagged = {(span.start, span.end) for span in styled.spans}
    assert tagged >= {(part.start, part.tag_end) for part in transcript.parts}
