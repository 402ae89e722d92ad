"""Text rules shared by storage reads, the transcript and the surfaces (pure): tool output
clipped to its head and tail, a session's preview, and text made safe for a terminal.

The stores clip tool output in SQL (so megabytes of it never leave the database) with the
same limits and marker as :func:`clip_tool_output`, which makes clipping idempotent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_session_recall.models import StoredMessage

__all__ = [
    "COMPACTION_PREFIXES",
    "PREVIEW_CHARS",
    "TOOL_CLIP_MARKER",
    "TOOL_OUTPUT_KEEP",
    "TOOL_OUTPUT_LIMIT",
    "clip_tool_output",
    "escape_for_terminal",
    "preview",
    "safe_for_terminal",
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


# Terminal escape sequences (CSI, OSC such as clipboard writes and hyperlinks, two-character
# escapes), every other control character (C0 but newline and tab, DEL, C1), and the
# bidirectional overrides and isolates that make a terminal show text in another order than
# it is (U+202A-U+202E, U+2066-U+2069).
_TERMINAL_UNSAFE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-_]?"
    "|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)
# What json.dumps(ensure_ascii=False) leaves raw of the above (it escapes C0 itself).
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def safe_for_terminal(text: object) -> str:
    """``text`` without what a terminal would act on: escape sequences (colours, screen
    clears, clipboard writes, hyperlinks), control characters and bidirectional overrides.
    Newlines and tabs stay.

    Every message or text shown on a terminal passes through it (errors, rich panels, MCP
    text): stored text may be anything another program wrote. Anything else that is not
    ``str`` (bytes, a number) is shown as text, never an error.

    Example:
        >>> safe_for_terminal("a\\x1b[31mred\\x1b[0m\\x07 b\\r\\x9b\\u202e")
        'ared b'
        >>> safe_for_terminal("\\x1b]52;c;ZXZpbA==\\x07copied"), safe_for_terminal(b"caf\\xc3\\xa9")
        ('copied', 'café')
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return _TERMINAL_UNSAFE.sub("", text if isinstance(text, str) else str(text))


def escape_for_terminal(json_text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with the characters a terminal acts
    on that it leaves raw (DEL, C1 controls, bidirectional overrides) written as ``\\uXXXX``
    escapes: the same JSON value, safe to print.

    Example:
        >>> import json
        >>> text = escape_for_terminal(json.dumps("\\x9b2J \\u202eexe", ensure_ascii=False))
        >>> text, json.loads(text) == "\\x9b2J \\u202eexe"
        ('"\\\\u009b2J \\\\u202eexe"', True)
    """
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def human_size(n: int) -> str:
    """A size in bytes as people read it: ``"512 B"``, ``"1.5 KB"``, ``"3.2 GB"``.

    Example:
        >>> human_size(512), human_size(1536), human_size(5 * 1024**3)
        ('512 B', '1.5 KB', '5.0 GB')
    """
    if n < 1024:
        return f"{n} B"
    size, unit = n / 1024, "KB"
    for bigger in ("MB", "GB"):
        if size < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{size:.1f} {unit}"


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``n`` and the noun in the number it takes: ``"1 session"``, ``"2 sessions"``.

    Example:
        >>> plural(1, "session"), plural(2, "message"), plural(2, "is a root", "are roots")
        ('1 session', '2 messages', '2 are roots')
    """
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"
