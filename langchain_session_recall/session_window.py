"""One session's transcript around given messages, bounded in size (``session_show``).

The MCP server's ``session_show`` tool returns :func:`show_session`'s payload. It reads through
the public store protocol only, so it works on SQLite and PostgreSQL alike, and it is
tenant-scoped like search: with ``user_id``, a session of another user is "not found" and other
users' sub-sessions inside the chain are left out.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.core.redaction import match_shown_id
from langchain_session_recall.core.where import where_fields
from langchain_session_recall.errors import InvalidArgumentError, SessionNotFoundError
from langchain_session_recall.models import Session, StoredMessage
from langchain_session_recall.recall.build import redact_messages, redact_session
from langchain_session_recall.recall.tool_calls import map_arguments, parse_tool_calls
from langchain_session_recall.recall.transcript import format_transcript, format_when

__all__ = [
    "SHOW_DEFAULT_CHARS",
    "SHOW_DEFAULT_CONTEXT",
    "SHOW_MAX_ANCHORS",
    "SHOW_MAX_CHARS",
    "SHOW_MAX_CONTEXT",
    "SHOW_MIN_CHARS",
    "show_session",
]

SHOW_MAX_CHARS = 20_000
"""Hard bound of the transcript returned by one call (larger ``max_chars`` are clamped)."""
SHOW_MIN_CHARS = 2_000
"""Smaller ``max_chars`` are raised to this."""
SHOW_DEFAULT_CHARS = 8_000
SHOW_MAX_CONTEXT = 10
"""Messages shown on each side of a requested message, at most."""
SHOW_DEFAULT_CONTEXT = 3
SHOW_MAX_ANCHORS = 5
"""Message ids honoured per call; further ones are reported as ignored."""
SHOW_MIN_CLIP = 300
"""Neighbours are dropped (context shrinks) before messages are clipped shorter than this."""
_ANCHOR_WEIGHT = 4  # a requested message may keep 4x the text of a neighbour

_SEPARATOR = "\n\n"


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(int(value), high))


def _omitted(count: int, where: str) -> str:
    return f"...[{count} {where}message{'s' if count != 1 else ''} not shown]..."


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge overlapping or adjacent ``(low, high)`` index ranges."""
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def _read_chain(
    store: SessionBackend,
    session_id: str,
    user_id: str | None,
    redact: Callable[[str], str] | None,
) -> tuple[str, Session, list[StoredMessage]]:
    """The root of ``session_id``'s chain, the session whose head is shown (its fields
    redacted), and the chain's messages (text and identifiers redacted);
    :class:`SessionNotFoundError` for another user's session."""
    if not session_id:
        raise InvalidArgumentError(
            "session_id is empty: pass a session_id from session_search's results"
        )
    session_id = _real_id(store, session_id, redact)
    root = store.root_of(session_id, user_id=user_id)
    sessions = store.get_sessions(dict.fromkeys([session_id, root]))
    requested = sessions.get(session_id)
    if requested is None or (user_id is not None and requested.user_id != user_id):
        shown = redact(session_id) if redact is not None else session_id
        raise SessionNotFoundError(f"no session {shown!r}")
    messages = [
        dataclasses.replace(m, content=m.content or "")
        for m in store.chain_messages(root, user_id=user_id)
    ]
    head = redact_session(sessions.get(root) or requested, redact)
    return root, head, redact_messages(messages, redact)


def _real_id(store: SessionBackend, session_id: str, redact: Callable[[str], str] | None) -> str:
    """The id of the session that search results show as ``session_id``: an id holding a
    secret is shown redacted (issue 32 item 8), and given back so to ask for its session."""
    if redact is None or "[REDACTED" not in session_id or store.get_session(session_id):
        return session_id
    return match_shown_id(session_id, store.all_session_ids(), redact) or session_id


def _payload(
    session_id: str,
    root: str,
    head: Session,
    messages: Sequence[StoredMessage],
    merged: Sequence[tuple[int, int]],
    clean: Callable[[str], str],
) -> dict[str, Any]:
    """What the payload says of the session and of the windows shown."""
    return {
        "success": True,
        "session_id": root,
        "requested_session_id": clean(session_id),
        "title": head.title,
        "when": format_when(head.started_at),
        "source": head.source,
        "model": head.model,
        **{
            k: v
            for k, v in where_fields(root, head.project, head.git_branch, head.agent).items()
            if v
        },
        "sessions": list(dict.fromkeys(m.session_id for m in messages)) or [root],
        "message_count": len(messages),
        "first_message_id": messages[0].id if messages else None,
        "last_message_id": messages[-1].id if messages else None,
        "shown": [{"from": messages[lo].id, "to": messages[hi].id} for lo, hi in merged],
    }


def _known(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields that have a value (a session without a place adds no key)."""
    return {k: v for k, v in fields.items() if v}


def _anchors(
    messages: Sequence[StoredMessage], message_ids: Sequence[int], include_start: bool, root: str
) -> tuple[list[int], list[int], list[int]]:
    """Positions of the requested messages, the ids not found and the ids past the limit;
    :class:`InvalidArgumentError` when none is found and there is no start to show instead."""
    index = {m.id: i for i, m in enumerate(messages)}
    wanted = list(dict.fromkeys(int(i) for i in message_ids))
    ignored, wanted = wanted[SHOW_MAX_ANCHORS:], wanted[:SHOW_MAX_ANCHORS]
    unknown = [i for i in wanted if i not in index]
    anchors = [index[i] for i in wanted if i in index]
    if wanted and not anchors and not include_start and messages:
        raise InvalidArgumentError(
            f"message id(s) {unknown} are not in session {root!r} (its messages are "
            f"#{messages[0].id} to #{messages[-1].id}); use ids from the [ROLE #id] tags"
        )
    return anchors, unknown, ignored


def show_session(
    store: SessionBackend,
    session_id: str,
    *,
    message_ids: Sequence[int] = (),
    include_start: bool = False,
    context: int = SHOW_DEFAULT_CONTEXT,
    max_chars: int = SHOW_DEFAULT_CHARS,
    user_id: str | None = None,
    redact: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """A window of one session's chain transcript, as a JSON-ready dict.

    The chain is the session's root and its sub-sessions (as search shows it). Around each
    requested message, ``context`` messages on each side are shown; without ``message_ids`` (or
    with ``include_start``) the first ``2 * context + 1`` messages are. Overlapping windows are
    merged; gaps are marked ``...[N messages not shown]...``; lines carry message ids
    (``[USER #42]: ...``) so a caller can ask for more around any of them.

    Bounds: ``context`` is clamped to 0..10, ``max_chars`` to 2,000..20,000 and at most 5
    message ids are honoured. The returned ``transcript`` never exceeds ``max_chars``
    characters. When the windows are longer, long messages are clipped (a requested message
    keeps up to 4x the text of a neighbour; ``...[N characters not shown]`` says what was
    cut), and if that would leave neighbours under 300 characters, ``context`` shrinks first
    (the payload's ``context`` is the one used). Every requested message found is shown, with
    its tag. ``truncated`` is true when anything was clipped or dropped.

    Args:
        store: Any session store (SQLite or PostgreSQL).
        session_id: A session id from search results (a root or any session in its chain).
        message_ids: Messages to centre on (ids from the ``#42`` tags of recaps).
        include_start: Also show the start of the session when ``message_ids`` are given.
        context: Messages shown before and after each requested message.
        max_chars: Length bound of the transcript.
        user_id: Tenant scope: another user's session is not found, and other users'
            sub-sessions are left out of the chain.
        redact: Applied to every message's text and to the title before formatting
            (e.g. :func:`~langchain_session_recall.redact_secrets`).

    Raises:
        SessionNotFoundError: No such session (or it belongs to another user).
        ValueError: None of ``message_ids`` is in the session (and ``include_start`` is off).

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1", title="Disk full")
        >>> _ = store.add_messages("s1", [{"role": "user", "content": f"step {n}"}
        ...                               for n in range(20)])
        >>> shown = show_session(store, "s1", message_ids=[10], context=1)
        >>> shown["shown"], shown["message_count"]
        ([{'from': 9, 'to': 11}], 20)
        >>> [line for line in shown["transcript"].splitlines() if line]
        ['...[8 earlier messages not shown]...', '[USER #9]: step 8', '[USER #10]: step 9',
         '[USER #11]: step 10', '...[9 later messages not shown]...']
    """
    session_id = str(session_id or "").strip()
    clean = redact or (lambda text: text)
    root, head, messages = _read_chain(store, session_id, user_id, redact)
    root = clean(root)  # as shown; the messages' session ids are

    context = _clamp(context, 0, SHOW_MAX_CONTEXT)
    max_chars = _clamp(max_chars, SHOW_MIN_CHARS, SHOW_MAX_CHARS)
    anchors, unknown, ignored = _anchors(messages, message_ids, include_start, root)

    start = bool(messages) and (include_start or not anchors)
    used, merged, transcript, truncated = _fit(messages, anchors, start, context, root, max_chars)

    payload = _payload(session_id, root, head, messages, merged, clean)
    payload.update(context=used, truncated=truncated, max_chars=max_chars, transcript=transcript)
    if unknown:
        payload["unknown_message_ids"] = unknown
    if ignored:
        payload["ignored_message_ids"] = ignored
        payload["message"] = f"at most {SHOW_MAX_ANCHORS} message ids per call; ask again"
    return payload


def _ranges(n: int, anchors: list[int], start: bool, context: int) -> list[tuple[int, int]]:
    ranges = [(max(0, a - context), min(n - 1, a + context)) for a in anchors]
    if start:
        ranges.append((0, min(n - 1, 2 * context)))
    return _merge(ranges)


def _fit(
    messages: list[StoredMessage],
    anchors: list[int],
    start: bool,
    context: int,
    root: str,
    max_chars: int,
) -> tuple[int, list[tuple[int, int]], str, bool]:
    """The widest context (down from ``context``) whose windows fit ``max_chars`` with
    neighbours clipped no shorter than :data:`SHOW_MIN_CLIP`; at context 0, whatever fits.

    Returns the context used, the windows, the transcript, and whether anything was cut.
    """
    if not messages:
        return context, [], "", False
    requested = {messages[a].id for a in anchors}
    for used in range(context, -1, -1):
        ranges = _ranges(len(messages), anchors, start, used)
        longest = max(_length(messages[i]) for lo, hi in ranges for i in range(lo, hi + 1))
        if len(_render(messages, ranges, root, requested, longest)) <= max_chars:
            return used, ranges, _render(messages, ranges, root, requested, longest), used < context
        low, high = 0, longest  # the largest clip that fits: binary search
        while low < high:
            middle = (low + high + 1) // 2
            if len(_render(messages, ranges, root, requested, middle)) <= max_chars:
                low = middle
            else:
                high = middle - 1
        if low >= SHOW_MIN_CLIP or used == 0:
            return used, ranges, _render(messages, ranges, root, requested, low)[:max_chars], True
    raise AssertionError("unreachable: context 0 always returns")  # pragma: no cover


def _length(message: StoredMessage) -> int:
    """The longest text of a message that clipping can shorten: its content or an argument."""
    calls = parse_tool_calls(message.tool_calls)
    return max([len(message.content), *(len(v) for c in calls for _, v in c.text_arguments)])


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    marker = f"...[{len(text) - limit} characters not shown]"
    head = text[:limit].rstrip()
    return f"{head} {marker}" if head else marker


def _render(
    messages: list[StoredMessage],
    ranges: list[tuple[int, int]],
    root: str,
    requested: set[int],
    clip: int,
) -> str:
    """The windows joined by gap markers; message text clipped to ``clip`` characters (4x
    that for requested messages)."""
    # One session: no session lines. A chain: each window says which session it starts in.
    chained = any(m.session_id != root for m in messages)
    parts: list[str] = []
    previous_high = -1
    for low, high in ranges:
        hidden = low - previous_high - 1
        if hidden:
            parts.append(_omitted(hidden, "earlier " if previous_high < 0 else ""))
        shown = []
        for m in messages[low : high + 1]:
            limit = clip * (_ANCHOR_WEIGHT if m.id in requested else 1)
            shorten = functools.partial(_clip, limit=limit)
            calls = m.tool_calls and map_arguments(m.tool_calls, shorten)
            shown.append(dataclasses.replace(m, content=_clip(m.content, limit), tool_calls=calls))
        parts.append(format_transcript(shown, show_ids=True, root_id="" if chained else root).text)
        previous_high = high
    hidden = len(messages) - 1 - previous_high
    if hidden:
        parts.append(_omitted(hidden, "later "))
    return _SEPARATOR.join(parts)
