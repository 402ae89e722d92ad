"""Text rules shared by storage reads and the transcript (pure): tool output clipped to its
head and tail, and a session's preview.

The stores clip tool output in SQL (so megabytes of it never leave the database) with the
same limits and marker as :func:`clip_tool_output`, which makes clipping idempotent.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_session_recall.models import StoredMessage

__all__ = [
    "COMPACTION_PREFIXES",
    "PREVIEW_CHARS",
    "TOOL_CLIP_MARKER",
    "TOOL_OUTPUT_KEEP",
    "TOOL_OUTPUT_LIMIT",
    "clip_tool_output",
    "preview",
]

TOOL_OUTPUT_LIMIT = 500
"""Tool output longer than this is clipped ..."""
TOOL_OUTPUT_KEEP = 250
"""... to its first and last this many characters ..."""
TOOL_CLIP_MARKER = "\n...[truncated]...\n"
"""... with this between them."""
COMPACTION_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
"""Messages that start so are an agent's compaction summaries, never a session's preview."""


def clip_tool_output(text: str) -> str:
    """Keep the first and last 250 characters of tool output longer than 500.

    Idempotent: text already clipped (by this function or by the store's SQL, which uses the
    same marker) is returned unchanged.
    """
    if len(text) <= TOOL_OUTPUT_LIMIT:
        return text
    head = text[:TOOL_OUTPUT_KEEP]
    if text[TOOL_OUTPUT_KEEP : TOOL_OUTPUT_KEEP + len(TOOL_CLIP_MARKER)] == TOOL_CLIP_MARKER:
        return text
    return head + TOOL_CLIP_MARKER + text[-TOOL_OUTPUT_KEEP:]


PREVIEW_CHARS = 200
"""Length of a session's preview (its first user message) in recent mode."""


def preview(messages: Sequence[StoredMessage] | Sequence[str], limit: int = PREVIEW_CHARS) -> str:
    """First user message (or first text), whitespace-collapsed and cut to ``limit``."""
    texts = [m if isinstance(m, str) else m.content for m in messages]
    text = next((t for t in texts if t and not t.startswith(COMPACTION_PREFIXES)), "")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
