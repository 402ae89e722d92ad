"""A chain's messages read as far as a result needs them: its order first, then the text of
the run of messages its window can reach (issue 33; issue 31 item 2).

A search result shows ``max_chars`` of a chain's transcript around its matches. The chain's
order (ids and sessions, no text) is read whole; the messages themselves are read for a run of
it, :class:`ChainPart` growing that run until the window placed on it is the window the whole
transcript gives (see :func:`~langchain_session_recall.recall.transcript.part_window_bounds`
and :func:`window_fits`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

from langchain_session_recall.models import StoredMessage
from langchain_session_recall.recall.transcript import Transcript

__all__ = ["ChainChangedError", "ChainPart", "read_all", "window_fits"]

FIRST_MARGIN = 8
"""Messages read on each side of the matches at first (the run then doubles as needed)."""


class ChainChangedError(Exception):
    """A message of the chain's order was gone when its text was read (deleted meanwhile)."""


class ChainPart:
    """A chain's order (``[(message id, session id)]``), the messages read so far, and the
    run ``[start, stop)`` of it a window is placed on.

    Example:
        >>> m = [StoredMessage(i, "s", "user", f"m{i}", 0.0) for i in range(1, 41)]
        >>> part = ChainPart([(x.id, "s") for x in m], lambda ids: [m[i - 1] for i in ids],
        ...                  around=[20])
        >>> part.start, part.stop, [x.id for x in part.messages()][:2]
        (12, 29, [13, 14])
        >>> part.grow(); part.start, part.stop
        (0, 40)
    """

    def __init__(
        self,
        order: Sequence[tuple[int, str]],
        read: Callable[[Sequence[int]], list[StoredMessage]],
        *,
        around: Sequence[int] = (),
        whole: bool = False,
        also: Sequence[int] = (),
    ) -> None:
        """``read``: the messages of some ids (any order); ``around``: the indexes in ``order``
        the run starts around (at the chain's start without them); ``whole``: the run is the
        whole chain from the start; ``also``: ids of messages read too, wherever they are
        (:meth:`some`)."""
        self.order = list(order)
        self.read = read
        self.loaded: dict[int, StoredMessage] = {}
        self.also = list(also)
        if whole:
            self.start, self.stop = 0, len(self.order)
        elif around:
            self.start = max(0, min(around) - FIRST_MARGIN)
            self.stop = min(len(self.order), max(around) + FIRST_MARGIN + 1)
        else:
            self.start, self.stop = 0, min(len(self.order), 2 * FIRST_MARGIN)
        self._load()

    @classmethod
    def of(cls, messages: Sequence[StoredMessage]) -> ChainPart:
        """The whole chain, read already."""
        by_id = {m.id: m for m in messages}
        order = [(m.id, m.session_id) for m in messages]
        return cls(order, lambda ids: [by_id[i] for i in ids], whole=True)

    @property
    def head(self) -> bool:
        """The run starts where the chain does."""
        return self.start == 0

    @property
    def tail(self) -> bool:
        """The run ends where the chain does."""
        return self.stop == len(self.order)

    def grow(self) -> None:
        """Twice as many messages on each side (at least ``FIRST_MARGIN`` more)."""
        more = max(FIRST_MARGIN, self.stop - self.start, 1)
        self.start = max(0, self.start - more)
        self.stop = min(len(self.order), self.stop + more)
        self._load()

    def messages(self) -> list[StoredMessage]:
        """The run's messages as stored, in chain order."""
        return [self.loaded[mid] for mid, _ in self.order[self.start : self.stop]]

    def some(self, ids: Sequence[int]) -> list[StoredMessage]:
        """The messages of ``ids`` read so far (the run's, and those asked for with ``also``),
        in chain order."""
        wanted = set(ids)
        return [self.loaded[mid] for mid, _ in self.order if mid in wanted and mid in self.loaded]

    def message_before(self) -> int | None:
        """The id of the message before the run (``None`` at the chain's start)."""
        return self.order[self.start - 1][0] if self.start > 0 else None

    def session_before(self) -> str | None:
        """The session of the message before the run (``None`` at the chain's start): where a
        ``--- session`` line goes at the run's first message."""
        return self.order[self.start - 1][1] if self.start > 0 else None

    def _load(self) -> None:
        run = [mid for mid, _ in self.order[self.start : self.stop]]
        wanted = [mid for mid in dict.fromkeys([*run, *self.also]) if mid not in self.loaded]
        if not wanted:
            return
        self.loaded.update(read_all(self.read, wanted))


def read_all(
    read: Callable[[Sequence[int]], list[StoredMessage]], ids: Sequence[int]
) -> dict[int, StoredMessage]:
    """The messages of ``ids`` (``read``: e.g. ``store.chain_messages_by_id``), by id;
    :class:`ChainChangedError` when one of them is gone (deleted since the chain's order was
    read)."""
    found = {m.id: m for m in read(ids)} if ids else {}
    if not found.keys() >= set(ids):
        raise ChainChangedError(f"{len(set(ids) - found.keys())} message(s) gone")
    return found


def window_fits(
    transcript: Transcript,
    start: int,
    end: int,
    matched: Sequence[int],
    *,
    head: bool,
    tail: bool,
) -> bool:
    """Whether what the window ``[start, end)`` placed on ``transcript`` (a run of a chain's
    messages) reads of it is what the whole chain's transcript gives at the same place:

    * each matched message (its offset in ``matched``) ends before the run's text does (its
      span, searched for the match, reaches the next message's start);
    * no message outside the run, nor the run's first or last, is near the window (those
      :meth:`~langchain_session_recall.recall.build._RedactedView.unredacted_near` would pick
      with their reach cut by the run's edges).

    ``head``/``tail``: the run starts/ends where the chain does (that side needs nothing).
    """
    text, offsets = transcript.text, list(transcript.offsets.values())
    if not tail:
        starts = sorted(set(offsets))
        for offset in matched:
            at = bisect.bisect_right(starts, offset)
            if at == len(starts) or starts[at] >= len(text):
                return False
        if len(offsets) < 3 or end >= offsets[-2]:
            return False
    return head or (len(offsets) >= 2 and start > offsets[1])
