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
from langchain_session_recall.recall.chain_part import ChainChangedError, read_all
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
) -> tuple[str, Session, list[tuple[int, str]]]:
    """The root of ``session_id``'s chain, the session whose head is shown (its fields
    redacted), and the chain's order (``(message id, session id)``, no text: the messages
    themselves are read for the windows shown, :class:`_Chain`);
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
    head = redact_session(sessions.get(root) or requested, redact)
    return root, head, store.chain_outline(root, user_id=user_id)


class _Chain:
    """A chain's messages by position, read (and redacted) only where the windows show them:
    the chain's order is read without its text, and a long chain is read around its
    requested messages, not whole."""

    def __init__(self, order: list[tuple[int, str]], clean: Callable[[str], str]) -> None:
        self.order = order
        self.loaded: dict[int, StoredMessage] = {}
        self.sessions = list(
            dict.fromkeys(clean(sid) for sid in dict.fromkeys(s for _, s in order))
        )
        """The chain's sessions in order, as shown (redacted)."""

    @classmethod
    def read(
        cls,
        store: SessionBackend,
        order: list[tuple[int, str]],
        ranges: Sequence[tuple[int, int]],
        redact: Callable[[str], str] | None,
    ) -> _Chain | None:
        """The messages of the positions in ``ranges`` (inclusive) read and redacted; ``None``
        when one of them was deleted meanwhile."""
        chain = cls(order, redact or str)
        wanted = list(dict.fromkeys(order[i][0] for lo, hi in ranges for i in range(lo, hi + 1)))
        try:
            found = read_all(store.chain_messages_by_id, wanted)
        except ChainChangedError:
            return None
        chain.keep([found[mid] for mid in wanted], redact)
        return chain

    @classmethod
    def whole(cls, messages: list[StoredMessage], redact: Callable[[str], str] | None) -> _Chain:
        """All of a chain's messages, read already."""
        chain = cls([(m.id, m.session_id) for m in messages], redact or str)
        chain.keep(messages, redact)
        return chain

    def keep(self, messages: list[StoredMessage], redact: Callable[[str], str] | None) -> None:
        plain = [dataclasses.replace(m, content=m.content or "") for m in messages]
        self.loaded.update((m.id, m) for m in redact_messages(plain, redact))

    def __len__(self) -> int:
        return len(self.order)

    def ids(self) -> list[int]:
        return [mid for mid, _ in self.order]

    def __getitem__(self, index: int) -> StoredMessage:
        return self.loaded[self.order[index][0]]

    def between(self, low: int, high: int) -> list[StoredMessage]:
        """The messages at positions ``low`` to ``high`` (inclusive)."""
        return [self[i] for i in range(low, high + 1)]


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
    chain: _Chain,
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
        "sessions": chain.sessions or [root],
        "message_count": len(chain),
        "first_message_id": chain.order[0][0] if chain.order else None,
        "last_message_id": chain.order[-1][0] if chain.order else None,
        "shown": [{"from": chain.order[lo][0], "to": chain.order[hi][0]} for lo, hi in merged],
    }


def _known(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields that have a value (a session without a place adds no key)."""
    return {k: v for k, v in fields.items() if v}


def _anchors(
    ids: Sequence[int], message_ids: Sequence[int], include_start: bool, root: str
) -> tuple[list[int], list[int], list[int]]:
    """Positions of the requested messages, the ids not found and the ids past the limit;
    :class:`InvalidArgumentError` when none is found and there is no start to show instead."""
    index = {mid: i for i, mid in enumerate(ids)}
    wanted = list(dict.fromkeys(int(i) for i in message_ids))
    ignored, wanted = wanted[SHOW_MAX_ANCHORS:], wanted[:SHOW_MAX_ANCHORS]
    unknown = [i for i in wanted if i not in index]
    anchors = [index[i] for i in wanted if i in index]
    if wanted and not anchors and not include_start and ids:
        raise InvalidArgumentError(
            f"message id(s) {unknown} are not in session {root!r} (its messages are "
            f"#{ids[0]} to #{ids[-1]}); use ids from the [ROLE #id] tags"
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
    real_root, head, order = _read_chain(store, session_id, user_id, redact)
    root = clean(real_root)  # as shown; the messages' session ids are

    context = _clamp(context, 0, SHOW_MAX_CONTEXT)
    max_chars = _clamp(max_chars, SHOW_MIN_CHARS, SHOW_MAX_CHARS)
    chain, anchors, unknown, ignored, start = _read_shown(
        store, (real_root, root), order, message_ids, include_start, context, user_id, redact
    )
    used, merged, transcript, truncated = _fit(chain, anchors, start, context, root, max_chars)

    payload = _payload(session_id, root, head, chain, merged, clean)
    payload.update(context=used, truncated=truncated, max_chars=max_chars, transcript=transcript)
    if unknown:
        payload["unknown_message_ids"] = unknown
    if ignored:
        payload["ignored_message_ids"] = ignored
        payload["message"] = f"at most {SHOW_MAX_ANCHORS} message ids per call; ask again"
    return payload


def _read_shown(
    store: SessionBackend,
    roots: tuple[str, str],
    order: list[tuple[int, str]],
    message_ids: Sequence[int],
    include_start: bool,
    context: int,
    user_id: str | None,
    redact: Callable[[str], str] | None,
) -> tuple[_Chain, list[int], list[int], list[int], bool]:
    """The chain with the messages of its widest windows read (a narrower context shows less
    of them), the requested messages' positions, the ids not found and past the limit, and
    whether the start is shown. ``roots``: the root's id, and as shown."""
    real_root, root = roots
    ids = [mid for mid, _ in order]
    anchors, unknown, ignored = _anchors(ids, message_ids, include_start, root)
    start = bool(ids) and (include_start or not anchors)
    chain = _Chain.read(store, order, _ranges(len(ids), anchors, start, context), redact)
    if chain is None:  # a message deleted between the two reads: the whole chain, as it is now
        chain = _Chain.whole(store.chain_messages(real_root, user_id=user_id), redact)
        anchors, unknown, ignored = _anchors(chain.ids(), message_ids, include_start, root)
        start = bool(chain.order) and (include_start or not anchors)
    return chain, anchors, unknown, ignored, start


def _ranges(n: int, anchors: list[int], start: bool, context: int) -> list[tuple[int, int]]:
    ranges = [(max(0, a - context), min(n - 1, a + context)) for a in anchors]
    if start:
        ranges.append((0, min(n - 1, 2 * context)))
    return _merge(ranges)


def _fit(
    messages: _Chain,
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
    if not len(messages):
        return context, [], "", False
    requested = {messages.order[a][0] for a in anchors}
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
    messages: _Chain,
    ranges: list[tuple[int, int]],
    root: str,
    requested: set[int],
    clip: int,
) -> str:
    """The windows joined by gap markers; message text clipped to ``clip`` characters (4x
    that for requested messages)."""
    # One session: no session lines. A chain: each window says which session it starts in.
    chained = any(shown != root for shown in messages.sessions)
    parts: list[str] = []
    previous_high = -1
    for low, high in ranges:
        hidden = low - previous_high - 1
        if hidden:
            parts.append(_omitted(hidden, "earlier " if previous_high < 0 else ""))
        shown = []
        for m in messages.between(low, high):
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
