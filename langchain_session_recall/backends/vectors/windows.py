"""Passage windows: what the dense index embeds (pure).

A session's conversational messages (every role but ``tool``, with text) are cut into windows
of ``size`` adjacent messages sharing ``overlap``; each window's text is the session's header
(title, start date in words: :func:`~langchain_session_recall.core.headers.session_header`)
followed by its messages' text, one per line, each cut to :data:`MESSAGE_CHARS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias, Union

from langchain_session_recall.core.headers import session_header
from langchain_session_recall.errors import InvalidArgumentError

__all__ = [
    "DEFAULT_OVERLAP",
    "DEFAULT_SIZE",
    "MESSAGE_CHARS",
    "Layouts",
    "Window",
    "WindowSpec",
    "layout_text",
    "parse_layouts",
    "passage_windows",
    "window_ranges",
    "window_text",
]

DEFAULT_SIZE = 3
"""Messages per window (chosen on the LoCoMo development split, ``benchmarks/locomo/hybrid.py``)."""
DEFAULT_OVERLAP = 1
"""Messages two neighbouring windows share."""
MESSAGE_CHARS = 2_000
"""Characters of one message a window holds (embedding models read ~512 tokens anyway)."""


Layouts = tuple[tuple[int, int], ...]
"""Window layouts ``((size, overlap), ...)``: a store may embed its messages in several."""
WindowSpec: TypeAlias = Union[tuple[int, int], Sequence[tuple[int, int]], str]  # noqa: UP007
"""A window layout ``(size, overlap)``, several (``[(3, 1), (6, 1)]``) or ``"3/1+6/1"``."""


def parse_layouts(value: WindowSpec) -> Layouts:
    """``(3, 1)``, ``[(3, 1), (6, 1)]`` or ``"3/1+6/1"`` as layouts, checked.

    Example:
        >>> parse_layouts((3, 1)), parse_layouts("3/1+6/1")
        (((3, 1),), ((3, 1), (6, 1)))
        >>> parse_layouts([(2, 2)])
        Traceback (most recent call last):
        ...
        langchain_session_recall.errors.InvalidArgumentError: window 2/2: need 0 <= overlap < size
    """
    if isinstance(value, str):
        pairs: list[tuple[int, int]] = []
        for part in value.split("+"):
            head, _, tail = part.strip().partition("/")
            if not (head.isdigit() and tail.isdigit()):
                raise InvalidArgumentError(f"window {part!r}: give SIZE/OVERLAP, e.g. 3/1")
            pairs.append((int(head), int(tail)))
    elif len(value) == 2 and all(isinstance(v, int) for v in value):
        pairs = [(int(value[0]), int(value[1]))]  # type: ignore[arg-type]
    else:
        pairs = [(int(a), int(b)) for a, b in value]  # type: ignore[misc]
    if not pairs:
        raise InvalidArgumentError("no window layout given")
    for size, overlap in pairs:
        if size < 1 or not 0 <= overlap < size:
            raise InvalidArgumentError(f"window {size}/{overlap}: need 0 <= overlap < size")
    return tuple(dict.fromkeys(pairs))


def layout_text(layouts: Layouts) -> str:
    """How layouts are recorded and shown: ``"3/1+6/1"``.

    Example:
        >>> layout_text(((3, 1), (6, 1)))
        '3/1+6/1'
    """
    return "+".join(f"{size}/{overlap}" for size, overlap in layouts)


@dataclass(frozen=True, slots=True)
class Window:
    """One passage window of a session: its messages' ids, first to last, and its text."""

    session_id: str
    message_ids: tuple[int, ...]
    text: str

    @property
    def start_id(self) -> int:
        """The first message's id: the window's key within its session."""
        return self.message_ids[0]


def window_ranges(n: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """``[start, end)`` ranges of windows of ``size`` items sharing ``overlap`` over ``n`` items.

    The last window may be shorter; every item is in at least one window; no items, no window.

    Example:
        >>> window_ranges(13, 6, 1)
        [(0, 6), (5, 11), (10, 13)]
        >>> window_ranges(4, 6, 1), window_ranges(0, 3, 1)
        ([(0, 4)], [])
    """
    if n <= 0:
        return []
    step = max(1, size - overlap)
    out = []
    start = 0
    while True:
        end = min(n, start + size)
        out.append((start, end))
        if end >= n:
            return out
        start += step


def window_text(header: str, contents: Sequence[str]) -> str:
    """The text a window is embedded as: the header, then each message's text (cut).

    Example:
        >>> window_text("Trip\\nMonday 8 May 2023", ["user: flights?", "Paris"])
        'Trip\\nMonday 8 May 2023\\nuser: flights?\\nParis'
    """
    lines = [c[:MESSAGE_CHARS] for c in contents]
    return "\n".join([header, *lines] if header else lines)


def passage_windows(
    session_id: str,
    title: str | None,
    started_at: float | None,
    messages: Sequence[tuple[int, str, str | None]],
    *,
    size: int = DEFAULT_SIZE,
    overlap: int = DEFAULT_OVERLAP,
) -> list[Window]:
    """The windows of one session's ``(id, role, content)`` messages, in order.

    Tool output and empty messages are left out before the windows are cut.

    Example:
        >>> msgs = [(1, "user", "hi"), (2, "tool", "{...}"), (3, "assistant", "hello"),
        ...         (4, "user", "bye")]
        >>> [w.message_ids for w in passage_windows("s", None, None, msgs, size=2, overlap=1)]
        [(1, 3), (3, 4)]
    """
    kept = [(mid, c.strip()) for mid, role, c in messages if role != "tool" and c and c.strip()]
    header = session_header(title, started_at)
    return [
        Window(
            session_id,
            tuple(mid for mid, _ in kept[a:b]),
            window_text(header, [c for _, c in kept[a:b]]),
        )
        for a, b in window_ranges(len(kept), size, overlap)
    ]
