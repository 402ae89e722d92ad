"""A search result as data: the session, its window, the messages shown in it (pure).

The search builds a :class:`RecalledSession` for each session it returns, and renders its text
(``page_content``) once, from the same transcript. The Document carries the data in its
metadata under :data:`RECALL_KEY` as a plain, JSON-ready dict (:meth:`RecalledSession.to_dict`),
so a Document still pickles, serialises and crosses a process boundary as before. Consumers (the
summarizer) read it back with :meth:`RecalledSession.from_metadata` instead of parsing the
text; a Document without it (one a user made) has ``None`` there and is read from its text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from langchain_session_recall.models import Session
from langchain_session_recall.recall.transcript import Part, format_when

__all__ = ["RECALL_KEY", "RecalledSession", "ShownMessage", "Window", "shown_window"]

RECALL_KEY = "recall"
"""The metadata key of a Document's :class:`RecalledSession` (as a dict)."""


@dataclass(frozen=True, slots=True)
class ShownMessage:
    """One tagged part of a message as the window shows it.

    A message is one part; an assistant message that called tools is one more per call
    (``tool_calls`` holds its name, ``call`` the call as its tag shows it). ``text`` is what
    follows the tag: a tool result clipped as shown, cut where the window ends (``cut``).

    The summarizer reads the same type: a window's messages as its rendered text reads them
    (:func:`~langchain_session_recall.recall.render.window_messages`), or the messages of a
    Document made elsewhere read from its tags
    (:func:`~langchain_session_recall.recall.render.parse_transcript`), where a tag may show no
    id (``id_known`` False).
    """

    id: int
    session_id: str
    role: str
    """Lower case, as stored: ``user``, ``assistant``, ``tool``, ``system``."""
    label: str
    """The tag's label: ``USER``, ``ASSISTANT``, ``TOOL:terminal``."""
    text: str
    tool_name: str | None = None
    tool_calls: tuple[str, ...] = ()
    call: str = ""
    """A tool call as its tag shows it (`` → write_file(path="a.py")``); ``text`` holds its
    long arguments."""
    cut: bool = False
    id_known: bool = True
    """Whether ``id`` is the message's id. Always so in a search result; False for a message
    read from text whose tag shows no id (``[USER]:``), where ``id`` is 0 and nothing may
    refer to it (no citation, no match). Left out of :meth:`RecalledSession.to_dict` when
    True."""


@dataclass(frozen=True, slots=True)
class Window:
    """The part of a session's transcript shown, around its matches.

    ``elided_before`` / ``elided_after``: conversation left out before / after the window;
    ``lead_cut``: the window starts with text before its first tag (a message cut at its
    start, not listed), which ``lead`` holds (with no tag in the window, all it shows);
    ``trailing``: what the window shows after its last message (the blank line and
    ``--- session <id> ---`` line where the chain moves on), usually empty;
    ``last_tag_only``: the window ends right after its last message's tag (``]:``), before
    the space or line break that follows it. With these, the window renders back to exactly
    the text a search shows (:func:`~langchain_session_recall.recall.render.window_text`).
    """

    messages: tuple[ShownMessage, ...]
    elided_before: bool = False
    elided_after: bool = False
    lead_cut: bool = False
    trailing: str = ""
    lead: str = ""
    last_tag_only: bool = False


@dataclass(frozen=True, slots=True)
class RecalledSession:
    """One root session found: what it is, and the windows of it shown (best first).

    ``ids_shown``: the rendered text tags messages with their ids (``[USER #4]``).

    Example:
        >>> r = RecalledSession("s1", title="CORS", windows=(Window((ShownMessage(
        ...     4, "s1", "user", "USER", "CORS error"),)),))
        >>> RecalledSession.from_metadata({RECALL_KEY: r.to_dict()}) == r
        True
        >>> RecalledSession.from_metadata({}) is None
        True
    """

    session_id: str
    title: str | None = None
    source: str | None = None
    model: str | None = None
    started_at: float | None = None
    when: str = "unknown"
    last_message_id: int = 0
    ids_shown: bool = False
    windows: tuple[Window, ...] = field(default_factory=tuple)
    redacted_by: str | None = None
    """The :attr:`~langchain_session_recall.core.redaction.SecretRedactor.rules_id` of the
    rules that redacted the text shown; ``None``: not redacted, or by another function."""
    secrets_redacted: int = 0
    """Secrets those rules replaced in the messages shown."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data (tuples, dicts, strings, numbers): what metadata carries; the same dict as
        :func:`dataclasses.asdict` gives (a message's ``id_known`` left out when True, as
        always in a search result), built without its deep copy (every field is immutable).
        """
        data = _plain(self)
        data["windows"] = tuple(
            {**_plain(w), "messages": tuple(_message_dict(m) for m in w.messages)}
            for w in self.windows
        )
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RecalledSession:
        """The inverse of :meth:`to_dict`; :class:`KeyError`/:class:`TypeError` on other data."""
        windows = tuple(
            Window(
                messages=tuple(
                    ShownMessage(**{**m, "tool_calls": tuple(m.get("tool_calls") or ())})
                    for m in w["messages"]
                ),
                **{k: v for k, v in w.items() if k != "messages"},
            )
            for w in data.get("windows") or ()
        )
        return cls(**{**data, "windows": windows})

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> RecalledSession | None:
        """The result a Document's metadata carries; ``None`` without one or when it is not
        one (a user's Document, another program's metadata)."""
        data = metadata.get(RECALL_KEY)
        if not isinstance(data, Mapping):
            return None
        try:
            return cls.from_dict(data)
        except (KeyError, TypeError):
            return None


def _plain(item: ShownMessage | Window | RecalledSession) -> dict[str, Any]:
    return {f.name: getattr(item, f.name) for f in fields(item)}


def _message_dict(message: ShownMessage) -> dict[str, Any]:
    data = _plain(message)
    if message.id_known:
        del data["id_known"]  # a search result's: the dict metadata carries stays as it was
    return data


def recalled_session(
    root_id: str,
    session: Session,
    *,
    title: str | None,
    last_message_id: int,
    ids_shown: bool,
    windows: Sequence[Window],
    redacted_by: str | None = None,
    secrets_redacted: int = 0,
) -> RecalledSession:
    """A :class:`RecalledSession` of ``session`` (the root) with its windows, redacted by the
    rules ``redacted_by`` names (``secrets_redacted`` replaced in what they show)."""
    return RecalledSession(
        session_id=root_id,
        title=title,
        source=session.source,
        model=session.model,
        started_at=session.started_at,
        when=format_when(session.started_at),
        last_message_id=last_message_id,
        ids_shown=ids_shown,
        windows=tuple(windows),
        redacted_by=redacted_by,
        secrets_redacted=secrets_redacted,
    )


def shown_window(text: str, parts: Sequence[Part], start: int, end: int) -> Window:
    """The :class:`Window` that ``text[start:end]`` shows of a transcript made of ``parts``.

    A part is shown when its tag is (``[USER #4]:`` whole inside the cut); its text is cut
    at ``end``.

    Example:
        >>> from langchain_session_recall.models import StoredMessage
        >>> from langchain_session_recall.recall.transcript import format_transcript
        >>> t = format_transcript([StoredMessage(1, "s", "user", "hi", 0.0),
        ...                        StoredMessage(2, "s", "assistant", "hello there", 0.0)])
        >>> w = shown_window(t.text, t.parts, 0, len(t.text) - 6)
        >>> [(m.id, m.text, m.cut) for m in w.messages], w.elided_after
        ([(1, 'hi', False), (2, 'hello', True)], True)
    """
    shown = [p for p in parts if p.start >= start and p.tag_end <= end]
    messages = tuple(
        ShownMessage(
            id=p.message.id,
            session_id=p.message.session_id,
            role=p.message.role,
            label=p.label,
            text=p.body[: max(0, end - p.body_start)],
            tool_name=p.message.tool_name,
            tool_calls=p.tool_calls,
            call=p.call,
            cut=p.end > end,
        )
        for p in shown
    )
    last_end = min(shown[-1].end, end) if shown else end
    return Window(
        messages=messages,
        elided_before=start > 0,
        elided_after=end < len(text),
        lead_cut=start > 0 and (not shown or shown[0].start > start),
        trailing=text[last_end:end] if shown else "",
        lead=text[start : shown[0].start if shown else end],
        last_tag_only=bool(shown) and shown[-1].body_start > end,
    )
