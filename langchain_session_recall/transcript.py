"""Transcript formatting and the match-centred window (pure)."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable
from dataclasses import dataclass

from langchain_session_recall.core.cjk import CJK_RANGES
from langchain_session_recall.core.text import clip_tool_output
from langchain_session_recall.models import StoredMessage

__all__ = [
    "EARLIER_MARKER",
    "LATER_MARKER",
    "Transcript",
    "format_transcript",
    "format_when",
    "match_position",
    "term_pattern",
    "window",
]

EARLIER_MARKER = "...[earlier conversation truncated]...\n\n"
LATER_MARKER = "\n\n...[later conversation truncated]..."


@dataclass(frozen=True, slots=True)
class Transcript:
    """Formatted text and where each message starts in it (``{message_id: offset}``)."""

    text: str
    offsets: dict[int, int]


def _tag(label: str, message_id: int, show_ids: bool) -> str:
    return f"[{label} #{message_id}]" if show_ids else f"[{label}]"


def _parts(message: StoredMessage, show_ids: bool) -> list[str]:
    role = message.role.upper()
    content = message.content or ""
    if role == "TOOL":
        label = f"TOOL:{message.tool_name}" if message.tool_name else "TOOL"
        return [f"{_tag(label, message.id, show_ids)}: {clip_tool_output(content)}"]
    tag = _tag(role, message.id, show_ids)
    if role == "ASSISTANT" and message.tool_calls:
        parts = []
        names = message.tool_call_names
        if names:
            parts.append(f"{tag}: [Called: {', '.join(names)}]")
        if content:
            parts.append(f"{tag}: {content}")
        return parts
    return [f"{tag}: {content}"]


def format_transcript(
    messages: Iterable[StoredMessage],
    *,
    show_ids: bool = False,
    root_id: str | None = None,
) -> Transcript:
    """Format messages as ``[USER]: ...`` parts joined by blank lines.

    An assistant's tool calls appear as ``[ASSISTANT]: [Called: name1, name2]`` (names only),
    tool results as ``[TOOL:name]: ...`` clipped to the first and last 250 characters. When the
    chain moves into another session than ``root_id`` (a sub-agent or a continuation), a
    ``--- session <id> ---`` line says so.

    Example:
        >>> m = StoredMessage(1, "s", "user", "hi", 0.0)
        >>> format_transcript([m]).text
        '[USER]: hi'
    """
    parts: list[str] = []
    offsets: dict[int, int] = {}
    length = 0
    current = root_id
    for message in messages:
        if current is not None and message.session_id != current:
            parts.append(f"--- session {message.session_id} ---")
            length += len(parts[-1]) + 2
        current = message.session_id
        offsets[message.id] = length
        for part in _parts(message, show_ids):
            parts.append(part)
            length += len(part) + 2
    return Transcript("\n\n".join(parts), offsets)


def window(text: str, center: int, max_chars: int) -> tuple[str, bool]:
    """Cut ``text`` to ``max_chars`` centred on ``center`` (start clamped to the text).

    Returns the text with ``...[earlier/later conversation truncated]...`` markers where it
    was cut, and whether it was cut. A cut moves to the nearest line break within a quarter of
    ``max_chars`` (never past ``center``), so the window neither starts nor ends mid-line.

    Example:
        >>> text = "one\\ntwo\\nthree MATCH\\nfour\\nfive"
        >>> window(text, text.index("MATCH"), 16)[0].split("\\n\\n")[1]
        'three MATCH'
    """
    if len(text) <= max_chars:
        return text, False
    center = min(max(center, 0), len(text))
    start = max(0, center - max_chars // 2)
    end = min(len(text), start + max_chars)
    start = max(0, end - max_chars)
    slack = max_chars // 4
    if start > 0 and text[start - 1] != "\n":
        brk = text.find("\n", start, min(center, start + slack))
        start = brk + 1 if brk >= 0 else start
        while brk >= 0 and start < center and text[start] == "\n":
            start += 1  # a blank line between messages: start at the next one
    if end < len(text) and text[end] != "\n":
        brk = text.rfind("\n", max(center, end - slack), end)
        end = brk if brk >= 0 else end
        while brk >= 0 and end > center and text[end - 1] == "\n":
            end -= 1
    prefix = EARLIER_MARKER if start > 0 else ""
    suffix = LATER_MARKER if end < len(text) else ""
    return prefix + text[start:end] + suffix, True


# Tokens as the full-text index sees them: letters and digits ('_' and punctuation split).
_TOKEN = re.compile(r"[^\W_]+")
# Endings a stemmer strips: "painted" is found as "paint...", "errors" as "error...".
_ENDINGS = ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "er", "ly", "s")
_MIN_STEM = 4


def _token_pattern(token: str) -> str:
    if any(low <= ord(c) <= high for c in token for low, high in CJK_RANGES):
        return re.escape(token)  # CJK is written without spaces: match it anywhere
    stem = token
    for ending in _ENDINGS:
        if token.lower().endswith(ending) and len(token) - len(ending) >= _MIN_STEM:
            stem = token[: -len(ending)]
            break
    # at the start of a word, and any ending after it (the index stems words)
    return r"(?<![^\W_])" + re.escape(stem) + r"[^\W_]*"


def term_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """A case-insensitive pattern that finds ``words`` in a transcript as the index matched them.

    Each word matches at the start of a word, with any ending (the index stems: *painted*
    finds *painting*); the tokens of a phrase (``pool mode``, ``docker-compose``) match with
    any separator between them (``pool_mode``); CJK words match anywhere. ``None`` when no
    word has a letter or digit.

    Example:
        >>> term_pattern(["pool mode", "painted"]).findall("Set pool_mode, then painting.")
        ['pool_mode', 'painting']
    """
    alternatives: dict[str, None] = {}
    for word in words:
        tokens = _TOKEN.findall(word)
        if tokens:
            alternatives.setdefault(r"[\W_]+".join(_token_pattern(t) for t in tokens), None)
    if not alternatives:
        return None
    ordered = sorted(alternatives, key=len, reverse=True)  # the longest alternative first
    return re.compile("|".join(ordered), re.IGNORECASE)


def match_position(
    text: str, spans: Iterable[tuple[int, int]], pattern: re.Pattern[str] | None
) -> int:
    """Where the first match lies: the first hit of ``pattern`` inside one of ``spans``.

    ``spans`` are the ``(start, end)`` offsets of the matching messages in ``text``, in
    transcript order. When the pattern finds nothing in them (the index matched a form it
    cannot see), the start of the first span; 0 when there is none.

    Example:
        >>> text = "[USER]: hello [ASSISTANT]: set pool_mode=transaction"
        >>> match_position(text, [(14, len(text))], term_pattern(["pool mode"]))
        31
    """
    ordered = list(spans)
    if pattern is not None:
        for start, end in ordered:
            hit = pattern.search(text, start, end)
            if hit is not None:
                return hit.start()
    return ordered[0][0] if ordered else 0


def format_when(timestamp: float | None) -> str:
    """Human-readable UTC time: ``'2026-11-03 09:15 UTC'``; ``'unknown'`` for none."""
    if timestamp is None:
        return "unknown"
    try:
        when = _dt.datetime.fromtimestamp(float(timestamp), tz=_dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return "unknown"
    return when.strftime("%Y-%m-%d %H:%M UTC")
