"""The shape of ``match_messages``' answer, which every backend honours (the contract).

Each message at most once (with its best relevance), best first (relevance descending, then
message id), at most ``limit`` hits, and the automation budget: hits of unattended sources
(:data:`~langchain_session_recall.core.automation.AUTOMATION_SOURCES`) are counted apart so
they never use up the ``limit``. A backend applies these rules inside its ranked pass (it reads
its cursor no further than the budget needs); ranking sessions is the search pipeline's job.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from langchain_session_recall.models import MessageHit

__all__ = [
    "MATCH_LIMIT",
    "best_hits",
    "budget_automation",
    "read_seated",
    "seats",
    "sessions_in_hand",
]

MATCH_LIMIT = 200
"""Hits ``match_messages`` and ``match_sessions`` return when a direct caller gives no
``limit`` (the search pipeline asks
:data:`~langchain_session_recall.search.request.HIT_LIMIT` per term)."""


def budget_automation(
    hits: Iterable[MessageHit], limit: int, automation: Collection[str]
) -> list[MessageHit]:
    """Take hits best first, giving automation runs a budget of their own.

    Hundreds of near-identical cron runs would otherwise use up the ``limit`` hits of a word
    they share with the session the user wants. ``hits`` is consumed best first and only until
    ``limit`` hits from other sources are in hand, so a lazy source (a database cursor) is read
    no further than needed. When everything fits in ``limit`` it all comes back; otherwise the
    ``limit`` best non-automation hits plus the best quarter-``limit`` automation hits ranked
    above the last of them (ranking demotes those later).

    Example:
        >>> hit = lambda i, src: MessageHit(i, f"s{i}", "user", 1.0 / i, src, 0.0)
        >>> best = [hit(i, "cron") for i in range(1, 9)] + [hit(i, "cli") for i in range(9, 13)]
        >>> [h.message_id for h in budget_automation(best, 4, {"cron"})]
        [9, 10, 11, 12, 1]
        >>> [h.message_id for h in budget_automation(best[:4], 4, {"cron"})]
        [1, 2, 3, 4]
    """
    taken: list[MessageHit] = []
    others = 0
    for hit in hits:
        taken.append(hit)
        others += hit.source not in automation
        if others >= limit:
            break
    if len(taken) <= limit:
        return taken
    kept = [h for h in taken if h.source in automation][: max(1, limit // 4)]
    return [*(h for h in taken if h.source not in automation), *kept]


def _best_first(hit: MessageHit) -> tuple[float, int]:
    return (-hit.relevance, hit.message_id)


def best_hits(
    found: Iterable[MessageHit],
    limit: int | None = None,
    automation: Collection[str] = (),
    per_session: int | None = None,
    sessions: int | None = None,
) -> list[MessageHit]:
    """Hits gathered from several indexes or passes, as ``match_messages`` returns them: each
    message once (with its best relevance), best first (relevance descending, then message id);
    with ``limit`` the best ``limit`` of them, or with ``automation`` the budget of
    :func:`budget_automation`; with ``per_session`` also the best ``per_session`` of every
    session (complete at session level, see ``SessionBackend.match_messages``), or with
    ``sessions`` of the best ``sessions`` sessions (by their best hit; automation sessions have
    ``max(1, sessions // 4)`` seats of their own, see :func:`seats`).

    Example:
        >>> hit = lambda i, rel, s="s": MessageHit(i, s, "user", rel, "cli", 0.0)
        >>> merged = best_hits([hit(2, 1.0), hit(1, 0.5), hit(2, 3.0)])
        >>> [(h.message_id, h.relevance) for h in merged]
        [(2, 3.0), (1, 0.5)]
        >>> [h.message_id for h in best_hits([hit(3, 1.0), hit(1, 1.0), hit(2, 2.0)], limit=2)]
        [2, 1]
        >>> found = [hit(1, 3.0), hit(2, 2.0), hit(3, 1.0, "t")]
        >>> [h.message_id for h in best_hits(found, limit=1, per_session=1)]
        [1, 3]
        >>> found = [hit(1, 3.0, "a"), hit(2, 2.0, "a"), hit(3, 1.5, "b"), hit(4, 1.0, "c")]
        >>> [h.message_id for h in best_hits(found, limit=1, per_session=1, sessions=2)]
        [1, 3]
    """
    best: dict[int, MessageHit] = {}
    for hit in found:
        prev = best.get(hit.message_id)
        if prev is None or hit.relevance > prev.relevance:
            best[hit.message_id] = hit
    ordered = sorted(best.values(), key=_best_first)
    top = ordered
    if limit is not None:
        top = (
            budget_automation(ordered, limit, automation)
            if automation
            else ordered[: max(0, limit)]
        )
    if per_session is None:
        return sorted(top, key=_best_first) if automation else top
    keep = {h.message_id for h in _session_best(ordered, per_session, sessions, automation)}
    if limit is not None:
        keep.update(h.message_id for h in top)
    return [h for h in ordered if h.message_id in keep]


def seats(sessions: int) -> int:
    """Sessions of automation sources that ``match_messages(..., sessions=n)`` keeps besides
    the ``n`` others: a quarter of them, at least one (as :func:`budget_automation` budgets
    hits), so hundreds of near-identical cron runs cannot take every seat.

    Example:
        >>> seats(100), seats(2)
        (25, 1)
    """
    return max(1, sessions // 4)


def _session_best(
    ordered: Iterable[MessageHit],
    per_session: int,
    sessions: int | None = None,
    automation: Collection[str] = (),
) -> list[MessageHit]:
    """The first ``per_session`` hits of each session, in the order given (best first); with
    ``sessions``, of the first ``sessions`` sessions of other sources than ``automation`` and
    of the first :func:`seats` automation sessions ranked above the last of those (as
    :func:`budget_automation` keeps hits)."""
    taken: dict[str, int] = {}
    kept: list[MessageHit] = []
    others = automated = 0
    for hit in ordered:
        n = taken.get(hit.session_id)
        if n is None:
            if sessions is not None:
                if others >= sessions:
                    break  # every seat of the other sources is taken: nothing ranks above
                if hit.source in automation:
                    if automated >= seats(sessions):
                        continue
                    automated += 1
                else:
                    others += 1
            n = 0
        if n < per_session:
            taken[hit.session_id] = n + 1
            kept.append(hit)
    return kept


def read_seated(
    hits: Iterable[MessageHit], limit: int, sessions: int, automation: Collection[str]
) -> list[MessageHit]:
    """Read hits best first until what ``best_hits(..., limit, automation, 1, sessions)``
    keeps is in hand: ``limit`` hits of other sources than ``automation`` and the first hit of
    ``sessions`` sessions of other sources, and every hit as relevant as the last one needed
    (a tie is settled by message id, which the reader's order does not follow). ``hits`` is
    consumed lazily: a database cursor ranked by relevance is read no further than that.

    Example:
        >>> hit = lambda i, s, rel: MessageHit(i, s, "user", rel, "cli", 0.0)
        >>> found = [hit(1, "a", 9.0), hit(2, "a", 8.0), hit(3, "b", 7.0), hit(4, "c", 7.0),
        ...          hit(5, "d", 6.0)]
        >>> [h.message_id for h in read_seated(iter(found), 1, 2, ())]
        [1, 2, 3, 4]
    """
    read: list[MessageHit] = []
    others = 0
    seen: set[str] = set()
    enough: float | None = None
    for hit in hits:
        if enough is not None and hit.relevance < enough:
            break
        read.append(hit)
        if hit.source not in automation:
            others += 1
            seen.add(hit.session_id)
        if enough is None and others >= limit and len(seen) >= sessions:
            enough = hit.relevance  # read on through the ties of the last hit needed
    return read


def sessions_in_hand(
    read: Sequence[MessageHit], kept: Iterable[MessageHit], per_session: int
) -> list[str]:
    """Sessions whose best ``per_session`` hits are all among ``kept`` for sure: a backend's
    per-session pass can leave them out and return the same hits.

    ``read`` are the hits a ranked pass read, best first (relevance descending); ``kept`` those
    of them it kept (the best ``limit``, or the automation budget's). A hit it did not keep (read
    and dropped, or never read) is no more relevant than the most relevant of the dropped ones
    and than the last one read; a session with ``per_session`` kept hits *strictly* above that
    bound has its best ``per_session`` among them (on a tie with a hit outside, the message id
    decides, so a tie keeps the session in the pass).

    Example:
        >>> hit = lambda i, s, rel: MessageHit(i, s, "user", rel, "cli", 0.0)
        >>> read = [hit(1, "a", 3.0), hit(2, "b", 2.0), hit(3, "a", 2.0), hit(4, "c", 2.0)]
        >>> sessions_in_hand(read, read[:3], 1)  # 'b' ties with hit 4, which was not kept
        ['a']
        >>> sessions_in_hand(read, read[:3], 2)
        []
    """
    if not read:
        return []
    kept_ids: dict[int, MessageHit] = {h.message_id: h for h in kept}
    dropped = (h.relevance for h in read if h.message_id not in kept_ids)
    bound = max([read[-1].relevance, *dropped])  # the last read stands for the hits never read
    above: dict[str, int] = {}
    for h in kept_ids.values():
        if h.relevance > bound:
            above[h.session_id] = above.get(h.session_id, 0) + 1
    return sorted(s for s, n in above.items() if n >= per_session)
