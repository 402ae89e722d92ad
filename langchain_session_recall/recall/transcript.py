"""Transcript formatting and the match-centred window (pure)."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from langchain_session_recall.core.cjk import CJK_RANGES
from langchain_session_recall.core.text import clip_tool_output
from langchain_session_recall.models import StoredMessage
from langchain_session_recall.recall import tags
from langchain_session_recall.recall.excerpt import Anchor, place
from langchain_session_recall.recall.tool_calls import (
    call_body,
    call_tag,
    clip_argument,
    parse_tool_calls,
)

__all__ = [
    "EARLIER_MARKER",
    "LATER_MARKER",
    "Part",
    "Transcript",
    "format_transcript",
    "format_when",
    "match_position",
    "part_window_bounds",
    "session_line",
    "term_pattern",
    "window_bounds",
]

EARLIER_MARKER = "...[earlier conversation truncated]...\n\n"
LATER_MARKER = "\n\n...[later conversation truncated]..."


@dataclass(frozen=True, slots=True)
class Part:
    """One tagged part of a transcript (a message renders as one part, each of an assistant's
    tool calls as one more): the message, its label (``USER``, ``TOOL:terminal``), the text after
    the tag, and where the part starts and its text starts in the transcript."""

    message: StoredMessage
    label: str
    body: str
    start: int
    tag_end: int
    """Where the tag (``[USER #4]:``) ends: the part is seen as a message when it is whole."""
    body_start: int
    tool_calls: tuple[str, ...] = ()
    """The name of the function called, for the part that shows an assistant's call."""
    call: str = ""
    """A tool call's part of the tag (`` → write_file(path="a.py")``); its arguments are the
    text."""

    @property
    def end(self) -> int:
        """Where the part's text ends in the transcript."""
        return self.body_start + len(self.body)


@dataclass(frozen=True, slots=True)
class Transcript:
    """Formatted text, where each message starts in it (``{message_id: offset}``) and its
    tagged parts in order."""

    text: str
    offsets: dict[int, int]
    parts: tuple[Part, ...] = ()


def _parts(
    message: StoredMessage, clip: Callable[[str], str] = clip_argument
) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """``(label, call, text, tool calls)`` of each part ``message`` renders as; ``call`` is a
    tool call's part of the tag (`` → write_file(path="a.py")``)."""
    role = message.role.upper()
    content = message.content or ""
    if role == "TOOL":
        label = f"TOOL:{message.tool_name}" if message.tool_name else "TOOL"
        return [(label, "", clip_tool_output(content), ())]
    if role == "ASSISTANT" and message.tool_calls:
        parts: list[tuple[str, str, str, tuple[str, ...]]]
        parts = [(role, "", content, ())] if content else []
        for call in parse_tool_calls(message.tool_calls):
            parts.append((role, call_tag(call), call_body(call, clip=clip), (call.name,)))
        return parts
    return [(role, "", content, ())]


def session_line(session_id: str) -> str:
    """The line a transcript shows where its chain moves into another session (a sub-agent,
    a continuation): the one writer of that line.

    Example:
        >>> session_line("child")
        '--- session child ---'
    """
    return f"--- session {session_id} ---"


def format_transcript(
    messages: Iterable[StoredMessage],
    *,
    show_ids: bool = False,
    root_id: str | None = None,
    clip_arguments: Callable[[str], str] = clip_argument,
) -> Transcript:
    """Format messages as ``[USER]: ...`` parts joined by blank lines.

    An assistant's text comes first, then each of its tool calls as
    ``[ASSISTANT → write_file(path="a.py")]:`` with its long arguments as fenced code blocks
    (see :func:`~langchain_session_recall.recall.tool_calls.render_tool_call`; ``clip_arguments``
    shortens a long one), tool results as ``[TOOL:name]: ...`` clipped to the first and last
    250 characters. When the
    chain moves into another session than ``root_id`` (a sub-agent or a continuation), a
    ``--- session <id> ---`` line says so.

    Example:
        >>> m = StoredMessage(1, "s", "user", "hi", 0.0)
        >>> format_transcript([m]).text
        '[USER]: hi'
    """
    parts: list[str] = []
    offsets: dict[int, int] = {}
    tagged: list[Part] = []
    length = 0
    current = root_id
    for message in messages:
        if current is not None and message.session_id != current:
            parts.append(session_line(message.session_id))
            length += len(parts[-1]) + 2
        current = message.session_id
        offsets[message.id] = length
        for label, call, body, calls in _parts(message, clip_arguments):
            head = tags.tag(label, message.id if show_ids else None, call)
            head += ("\n" if body else "") if call else " "
            tag_end = length + len(head) - (1 if head.endswith((" ", "\n")) else 0)
            tagged.append(
                Part(message, label, body, length, tag_end, length + len(head), calls, call)
            )
            parts.append(head + body)
            length += len(parts[-1]) + 2
    return Transcript("\n\n".join(parts), offsets, tuple(tagged))


def window_bounds(text: str, center: int, max_chars: int | None) -> tuple[int, int]:
    """Where to cut ``text`` to ``max_chars`` centred on ``center`` (start clamped to the
    text): ``(start, end)``, ``(0, len(text))`` for no cut (``max_chars=None``: the whole
    text). A cut moves to the nearest line break within a quarter of ``max_chars`` (never
    past ``center``), so the window neither starts nor ends mid-line;
    :func:`~langchain_session_recall.recall.render.window_text` marks the cuts.

    Example:
        >>> window_bounds("one\\ntwo", 0, 100)
        (0, 7)
    """
    if max_chars is None or len(text) <= max_chars:
        return 0, len(text)
    anchor = _window_anchor(text, center, max_chars)
    start, end = place(anchor, 0, len(text))
    return _line_cuts(text, anchor.at, start, end, max_chars // 4)


def _window_anchor(text: str, center: int, max_chars: int) -> Anchor:
    """A search's window as an excerpt's anchor: ``max_chars`` characters of the transcript,
    half of them before ``center``, sliding inward at its ends (:mod:`.excerpt`)."""
    return Anchor(min(max(center, 0), len(text)), max_chars // 2, max_chars, slide=True)


def part_window_bounds(
    text: str, center: int, max_chars: int | None, *, head: bool, tail: bool
) -> tuple[int, int] | None:
    """:func:`window_bounds` of a transcript of which ``text`` is a part, in the part's
    offsets: ``head``/``tail``, the part starts/ends where the transcript does. ``None`` when
    the part cannot tell: the window (or the character before or after it, which places its
    cuts) reaches past a side of the part that is not the transcript's, or whether the
    transcript is cut at all depends on what lies outside the part.

    Example:
        >>> text = "\\n".join(f"line {i}" for i in range(100))
        >>> window_bounds(text, 300, 100) == part_window_bounds(text, 300, 100, head=True,
        ...                                                     tail=True)
        True
        >>> window_bounds(text, 300, 100)[0] - 70 == part_window_bounds(
        ...     text[70:], 230, 100, head=False, tail=True)[0]
        True
        >>> part_window_bounds(text[70:], 30, 100, head=False, tail=True) is None
        True
    """
    if head and tail:
        return window_bounds(text, center, max_chars)
    if max_chars is None or len(text) <= max_chars or not 0 <= center <= len(text):
        return None
    # The transcript is longer than the part, so longer than max_chars: it is cut, and its
    # ends bound the window only on a side that is the part's own; on another the window must
    # stay inside the part (with a character to spare: it places the cut).
    start, end = place(_window_anchor(text, center, max_chars), 0 if head else None,
                       len(text) if tail else None)  # fmt: skip
    if (not head and start < 1) or (not tail and end >= len(text)):
        return None
    return _line_cuts(text, center, start, end, max_chars // 4)


def _line_cuts(text: str, center: int, start: int, end: int, slack: int) -> tuple[int, int]:
    """``(start, end)`` moved to the nearest line break within ``slack`` (never past
    ``center``)."""
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
    return start, end


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
    text: str,
    spans: Iterable[tuple[int, int]],
    pattern: re.Pattern[str] | None,
    width: int | None = None,
    anchor: int | None = None,
) -> int:
    """Where the window over the matches should be centred.

    ``spans`` are the ``(start, end)`` offsets of the matching messages in ``text``, in
    transcript order; in each, the first hit of ``pattern`` is its match (the start of the
    span when the pattern finds nothing there: the index matched a form it cannot see). Without
    ``width``, the first match. With it, the middle of the densest run of matches that fits in
    ``width`` characters (the first such run when several hold as many); 0 when there is none.
    ``anchor``: the start of the span of the best match (the one the ranking put first): the
    run must hold it, so a session of many lines that share the common words of a question
    shows the line with its rare word, not the densest run of common ones.

    Example:
        >>> text = "[USER]: hello [ASSISTANT]: set pool_mode=transaction"
        >>> match_position(text, [(14, len(text))], term_pattern(["pool mode"]))
        31
        >>> match_position("a" * 100, [(0, 1), (60, 61), (70, 71), (80, 81)], None, 40)
        70
        >>> match_position("a" * 100, [(0, 1), (60, 61), (70, 71), (80, 81)], None, 40, 0)
        0
    """
    hits: list[int] = []
    must: int | None = None
    for start, end in spans:
        hit = pattern.search(text, start, end) if pattern is not None else None
        hits.append(hit.start() if hit is not None else start)
        must = hits[-1] if start == anchor else must
    if not hits:
        return 0
    if width is None:
        return hits[0]
    hits.sort()
    best, first, last = 0, hits[0], hits[0]
    low = 0
    for high, position in enumerate(hits):  # two pointers: runs of hits within width
        while position - hits[low] > width:
            low += 1
        if must is not None and not hits[low] <= must <= position:
            continue  # a run without the best match
        if high - low + 1 > best:
            best, first, last = high - low + 1, hits[low], position
    return (first + last) // 2


def format_when(timestamp: float | None) -> str:
    """Human-readable UTC time: ``'2026-11-03 09:15 UTC'``; ``'unknown'`` for none."""
    if timestamp is None:
        return "unknown"
    try:
        when = _dt.datetime.fromtimestamp(float(timestamp), tz=_dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return "unknown"
    return when.strftime("%Y-%m-%d %H:%M UTC")
