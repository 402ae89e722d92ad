"""Text at the edge: a recalled window rendered as the transcript text a search shows (pure).

A search result is data first (:class:`~langchain_session_recall.recall.model.Window`: the messages
shown, what was cut); its ``page_content`` is rendered from that data here, and nowhere else.
The render comes as :class:`Piece` s, so a surface that styles text (the command line) styles
each tag, ``--- session`` line and truncation marker as what it is, without reading the text
back.

Example:
    >>> from langchain_session_recall.recall.model import ShownMessage, Window
    >>> w = Window((ShownMessage(4, "s", "user", "USER", "hi"),
    ...             ShownMessage(5, "t", "tool", "TOOL:ls", "a.py b.py", cut=True)),
    ...            elided_after=True)
    >>> print(window_text(w, ids_shown=True))
    [USER #4]: hi
    <BLANKLINE>
    --- session t ---
    <BLANKLINE>
    [TOOL:ls #5]: a.py b.py
    <BLANKLINE>
    ...[later conversation truncated]...
    >>> [(p.kind, p.role) for p in window_pieces(w, ids_shown=True) if p.kind != "text"]
    [('tag', 'USER'), ('session', None), ('tag', 'TOOL'), ('marker', None)]

The summarizer reads the same :class:`~langchain_session_recall.recall.model.ShownMessage` s:
a window's (:func:`window_messages`), or those of a Document made elsewhere, read from its tags
(:func:`parse_transcript`: the one place a transcript is read back into messages), each
written back with its tag by :func:`message_text`.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Literal

from langchain_session_recall.recall import tags
from langchain_session_recall.recall.model import ShownMessage, Window, shown_window
from langchain_session_recall.recall.transcript import (
    EARLIER_MARKER,
    LATER_MARKER,
    Transcript,
    session_line,
)

__all__ = [
    "Piece",
    "PieceKind",
    "message_text",
    "parse_transcript",
    "text_pieces",
    "transcript_pieces",
    "window_messages",
    "window_pieces",
    "window_reading",
    "window_text",
]

PieceKind = Literal["text", "tag", "session", "marker"]
_SEPARATOR = "\n\n"
_SESSION_LINE = re.compile(r"^--- session .* ---$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Piece:
    """A run of rendered text and what it is: a message's ``tag`` (its ``role`` upper case:
    ``USER``, ``TOOL``), a ``session`` line where the chain moves into another session, a
    truncation ``marker``, or ``text`` (message text, separators)."""

    text: str
    kind: PieceKind = "text"
    role: str | None = None


def window_pieces(window: Window, *, ids_shown: bool) -> list[Piece]:
    """The pieces that render ``window``: joined, they are its text (:func:`window_text`)."""
    out: list[Piece] = []
    if window.elided_before:
        out.append(Piece(EARLIER_MARKER.rstrip("\n"), "marker"))
        out.append(Piece(EARLIER_MARKER[len(EARLIER_MARKER.rstrip("\n")) :]))
    if window.lead:
        out += _lead(window)
    last = len(window.messages) - 1
    previous: ShownMessage | None = None
    for i, message in enumerate(window.messages):
        if previous is not None:
            out.append(Piece(_SEPARATOR))
            if message.session_id != previous.session_id:
                out.append(Piece(session_line(message.session_id), "session"))
                out.append(Piece(_SEPARATOR))
        ident = message.id if ids_shown else None
        tag = tags.tag(message.label, ident, message.call)
        out.append(Piece(tag, "tag", message.role.upper()))
        if not (i == last and window.last_tag_only):
            after = tags.after_tag(message.call, bool(message.text or message.cut))
            out.append(Piece(after + message.text))
        previous = message
    if window.trailing:
        out.append(Piece(window.trailing))
    if window.elided_after:
        out.append(Piece(LATER_MARKER[: len(LATER_MARKER) - len(LATER_MARKER.lstrip("\n"))]))
        out.append(Piece(LATER_MARKER.lstrip("\n"), "marker"))
    return out


def window_text(window: Window, *, ids_shown: bool) -> str:
    """The text a search shows of ``window``: its messages tagged (with their ids when
    ``ids_shown``), a ``--- session <id> ---`` line where the chain moves on, truncation
    markers where the conversation was cut."""
    return "".join(p.text for p in window_pieces(window, ids_shown=ids_shown))


def transcript_pieces(transcript: Transcript, *, ids_shown: bool) -> list[Piece]:
    """A whole transcript (``session-recall show``) as pieces, rendered as a window of all of
    it: joined, they are ``transcript.text``."""
    whole = shown_window(transcript.text, transcript.parts, 0, len(transcript.text))
    return window_pieces(whole, ids_shown=ids_shown)


def text_pieces(text: str) -> list[Piece]:
    """Text made elsewhere (a recap, a Document a user built) as pieces, its tags and
    ``--- session`` lines found by reading it: the one place text is read back for them.

    Example:
        >>> [(p.kind, p.text) for p in text_pieces("Recap.\\n[USER #4]: hi")]
        [('text', 'Recap.\\n'), ('tag', '[USER #4]:'), ('text', ' hi')]
    """
    found: list[tuple[int, int, PieceKind, str | None]]
    found = [(m.start(), m.end(), "tag", m.group("role")) for m in tags.TAG.finditer(text)]
    found += [(m.start(), m.end(), "session", None) for m in _SESSION_LINE.finditer(text)]
    out: list[Piece] = []
    at = 0
    for start, end, kind, role in sorted(found):
        if start < at:
            continue
        if start > at:
            out.append(Piece(text[at:start]))
        out.append(Piece(text[start:end], kind, role))
        at = end
    if at < len(text):
        out.append(Piece(text[at:]))
    return out


def window_reading(window: Window, *, ids_shown: bool) -> tuple[str, list[ShownMessage]]:
    """The text a search shows of ``window`` (:func:`window_text`) and its messages as that
    text reads them (:func:`window_messages`), from one rendering: what a reader of a search
    result needs to check its text and read its messages."""
    pieces = window_pieces(window, ids_shown=ids_shown)
    bodies: list[list[str]] = []
    for piece in pieces:
        if piece.kind == "tag":
            bodies.append([])
        elif bodies:
            bodies[-1].append(piece.text)
    messages = [
        dataclasses.replace(message, text="".join(body).strip())
        for message, body in zip(window.messages, bodies, strict=True)
    ]
    return "".join(p.text for p in pieces), messages


def window_messages(window: Window) -> list[ShownMessage]:
    """The messages of ``window`` as its rendered text reads them, for the summarizer.

    They are the messages :func:`parse_transcript` reads from the window's text (less what a
    tag cannot show: session, tool calls, ``cut``): a message's text runs to the next tag,
    stripped, so it holds the ``--- session <id> ---`` line and the truncation marker that
    follow it. Unlike a parse, they are read from the rendering's pieces, not its text: a
    message whose text looks like a tag (``[USER]: ...`` on a line of its own) stays one
    message, and its id is known whether the text shows it or not.

    Example:
        >>> w = Window((ShownMessage(4, "s", "user", "USER", "hi"),
        ...             ShownMessage(5, "t", "assistant", "ASSISTANT", "hello")))
        >>> [message_text(m, show_id=True) for m in window_messages(w)]
        ['[USER #4]: hi\\n\\n--- session t ---', '[ASSISTANT #5]: hello']
    """
    return window_reading(window, ids_shown=False)[1]


def parse_transcript(transcript: str) -> list[ShownMessage]:
    """The messages of a transcript made elsewhere (a Document without a recalled result),
    read from its tags.

    Text before the first tag (a truncation marker, say) is dropped; text between tags belongs
    to the preceding message, stripped. What a tag shows is read: label, role, tool name, a
    call (and the name it calls), the id when shown (``id_known`` False and ``id`` 0 when
    not); the session is unknown (``""``).

    Example:
        >>> [(m.id, m.id_known, m.role, m.text)
        ...  for m in parse_transcript("[USER #4]: hi\\n\\n[TOOL:ls]: a.py")]
        [(4, True, 'user', 'hi'), (0, False, 'tool', 'a.py')]
    """
    matches = list(tags.TAG.finditer(transcript))
    out: list[ShownMessage] = []
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(transcript)
        ident, label, call = m.group("id"), m.group("label"), m.group("call") or ""
        role = m.group("role").lower()
        out.append(
            ShownMessage(
                id=int(ident) if ident else 0,
                session_id="",
                role=role,
                label=label,
                text=transcript[m.end() : end].strip(),
                tool_name=(label.partition(":")[2] or None) if role == "tool" else None,
                tool_calls=(call.removeprefix(" → ").partition("(")[0],) if call else (),
                call=call,
                id_known=ident is not None,
            )
        )
    return out


def message_text(message: ShownMessage, text: str | None = None, *, show_id: bool) -> str:
    """``message`` written as the summarizer shows it: its tag (its id when ``show_id`` and
    known), then its text, or ``text`` in its place (an excerpt); a call's text on the lines
    below its tag.

    Example:
        >>> m = ShownMessage(4, "s", "user", "USER", "a long question")
        >>> message_text(m, show_id=True), message_text(m, "a…", show_id=False)
        ('[USER #4]: a long question', '[USER]: a…')
    """
    body = message.text if text is None else text
    ident = message.id if show_id and message.id_known else None
    return (
        tags.tag(message.label, ident, message.call)
        + tags.after_tag(message.call, bool(body))
        + body
    )


def _lead(window: Window) -> list[Piece]:
    """The window's text before its first tag, its ``--- session`` line (when the window
    shows the one before its first message) as a piece of its own."""
    if not window.messages:
        return [Piece(window.lead)]
    line = session_line(window.messages[0].session_id)
    before, found, after = window.lead.rpartition(line)
    if not found or after != _SEPARATOR or (before and not before.endswith(_SEPARATOR)):
        return [Piece(window.lead)]
    return [p for p in (Piece(before), Piece(line, "session"), Piece(after)) if p.text]
