"""One session's transcript around given messages, bounded in size (``session_show``).

The MCP server's ``session_show`` tool returns :func:`show_session`'s payload. It reads through
the public store protocol only, so it works on SQLite and PostgreSQL alike, and it is
tenant-scoped like search: with ``user_id``, a session of another user is "not found" and other
users' sub-sessions inside the chain are left out.

Which messages are shown is an excerpt (:mod:`~langchain_session_recall.recall.excerpt`, the
algorithm a search's window is placed with too): the requested messages are its anchors on the
line of the chain's messages, ``context`` on each side, and the start of the chain one more;
:func:`~langchain_session_recall.recall.excerpt.fit` narrows the context and clips the text to
``max_chars``. Its elided runs are the ``...[N messages not shown]...`` lines.
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
from langchain_session_recall.recall.excerpt import Anchor, Excerpt, around, excerpt, fit
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
        shown: Excerpt,
        redact: Callable[[str], str] | None,
    ) -> _Chain | None:
        """The messages ``shown`` read and redacted; ``None`` when one of them was deleted
        meanwhile."""
        chain = cls(order, redact or str)
        wanted = list(dict.fromkeys(order[i][0] for i in shown.units()))
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
        """The messages at positions ``low`` to ``high`` (``high`` left out)."""
        return [self[i] for i in range(low, high)]


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
    shown: Excerpt,
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
        "shown": [
            {"from": chain.order[lo][0], "to": chain.order[hi - 1][0]} for lo, hi in shown.shown
        ],
    }


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
    used, shown, transcript, truncated = _fit(chain, anchors, start, context, root, max_chars)

    payload = _payload(session_id, root, head, chain, shown, clean)
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
    widest = excerpt(len(ids), _placed(anchors, start, context))
    chain = _Chain.read(store, order, widest, redact)
    if chain is None:  # a message deleted between the two reads: the whole chain, as it is now
        chain = _Chain.whole(store.chain_messages(real_root, user_id=user_id), redact)
        anchors, unknown, ignored = _anchors(chain.ids(), message_ids, include_start, root)
        start = bool(chain.order) and (include_start or not anchors)
    return chain, anchors, unknown, ignored, start


def _placed(anchors: list[int], start: bool, context: int) -> list[Anchor]:
    """The excerpt's anchors: each requested message (at its position in the chain's order)
    with ``context`` messages each side, keeping :data:`_ANCHOR_WEIGHT` times a neighbour's
    text; the start of the chain, ``2 * context + 1`` messages from the first."""
    placed = [around(a, context, weight=_ANCHOR_WEIGHT) for a in anchors]
    return placed + ([around(0, context, slide=True)] if start else [])


def _fit(
    messages: _Chain,
    anchors: list[int],
    start: bool,
    context: int,
    root: str,
    max_chars: int,
) -> tuple[int, Excerpt, str, bool]:
    """The widest context (down from ``context``) whose excerpt fits ``max_chars`` with
    neighbours clipped no shorter than :data:`SHOW_MIN_CLIP`; at context 0, whatever fits
    (:func:`~langchain_session_recall.recall.excerpt.fit`).

    Returns the context used, the excerpt, the transcript, and whether anything was cut.
    """
    if not len(messages):
        return context, excerpt(0, ()), "", False

    @functools.cache
    def longest(shown: Excerpt) -> int:
        return max(_length(messages[i]) for i in shown.units())

    def render(shown: Excerpt, clip: int | None) -> str:
        return _render(messages, shown, root, longest(shown) if clip is None else clip)

    fitted = fit(
        len(messages),
        lambda used: _placed(anchors, start, used),
        context,
        lambda shown, clip: len(render(shown, clip)),
        max_chars,
        longest=longest,
        min_clip=SHOW_MIN_CLIP,
    )
    transcript = render(fitted.excerpt, fitted.clip)
    if fitted.clip is not None:
        transcript = transcript[:max_chars]
    return fitted.context, fitted.excerpt, transcript, fitted.cut


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


def _render(messages: _Chain, shown: Excerpt, root: str, clip: int) -> str:
    """The excerpt's runs of messages joined by markers of its elided runs; message text
    clipped to ``clip`` characters times the message's weight (a requested message's: 4)."""
    # One session: no session lines. A chain: each run says which session it starts in.
    chained = any(seen != root for seen in messages.sessions)
    parts: list[str] = []
    for kind, low, high in shown.runs():
        if kind == "elided":
            where = "earlier " if low == 0 else "later " if high == len(messages) else ""
            parts.append(_omitted(high - low, where))
            continue
        run = []
        for i, m in zip(range(low, high), messages.between(low, high), strict=True):
            limit = clip * shown.weight(i)
            shorten = functools.partial(_clip, limit=limit)
            calls = m.tool_calls and map_arguments(m.tool_calls, shorten)
            run.append(dataclasses.replace(m, content=_clip(m.content, limit), tool_calls=calls))
        parts.append(format_transcript(run, show_ids=True, root_id="" if chained else root).text)
    return _SEPARATOR.join(parts)
