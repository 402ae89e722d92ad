"""Issue 23 §2: recaps read a tool call's tag and show its code (extractive), and the quality
gate knows a copied call tag for a transcript line."""

from __future__ import annotations

from langchain_session_recall.models import StoredMessage
from langchain_session_recall.recall.render import parse_transcript
from langchain_session_recall.recall.transcript import format_transcript
from langchain_session_recall.summarize.extractive import extractive_recap
from langchain_session_recall.summarize.quality import TRANSCRIPT_FORMAT, assess_recap

SCRIPT = "#!/usr/bin/env python3\n" + "".join(f"step_{n} = {n}\n" for n in range(60))
SCRIPT += "for photo in folder: rename_by_exif(photo)\n"


def _transcript() -> str:
    calls = [{"name": "write_file", "args": {"path": "~/bin/rename_photos.py", "content": SCRIPT}}]
    messages = [
        StoredMessage(1, "s", "user", "write me a script that renames photos", 1.0),
        StoredMessage(2, "s", "assistant", "Here it is.", 2.0, tool_calls=calls),
        StoredMessage(3, "s", "tool", "ok", 3.0, tool_name="write_file"),
    ]
    return format_transcript(messages, show_ids=True).text


def test_a_call_tag_is_a_block_of_its_message() -> None:
    blocks = parse_transcript(_transcript())
    call = blocks[2]
    assert (call.label, call.id) == ("ASSISTANT", 2)
    assert call.call == ' → write_file(path="~/bin/rename_photos.py")'
    assert call.text.startswith("```python\n#!/usr/bin/env python3")


def test_the_extractive_recap_shows_the_call_and_the_lines_that_matter() -> None:
    recap = extractive_recap(
        _transcript(), "rename by exif", matched_message_ids=[2], reason="no model configured"
    )
    assert '[ASSISTANT #2 → write_file(path="~/bin/rename_photos.py")]:\n```python' in recap
    assert "for photo in folder: rename_by_exif(photo)" in recap  # the line of the query's words
    assert "step_0 = 0" not in recap  # lines far from it are left out, marked
    assert "\n…\n" in recap and recap.count("```") == 2


def test_a_recap_that_copies_call_tags_is_transcript_format() -> None:
    copied = "\n".join(
        f'[ASSISTANT #{n} → terminal(command="ls")]: listed the folder' for n in (2, 2, 2, 2)
    )
    verdict = assess_recap(copied, transcript=_transcript())
    assert TRANSCRIPT_FORMAT in verdict.reasons
