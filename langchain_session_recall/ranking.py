"""Session ranking (pure): message hits -> root sessions ordered by evidence.

A session is scored by all of its matching messages across its delegation chain, not only the
best one: contributions are sorted and summed with geometric decay, so a second and third
matching message add evidence without letting a long session win by volume alone. Each
contribution is the message's full-text relevance times a role weight (what the user said
names the topic best; tool output is noisy) and a source weight (automation runs are demoted,
never dropped).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from langchain_session_recall.models import MessageHit

__all__ = ["DEFAULT_ROLE_WEIGHTS", "DEFAULT_SOURCE_WEIGHTS", "RankedSession", "rank_sessions"]

DEFAULT_ROLE_WEIGHTS: Mapping[str, float] = {
    "user": 1.0,
    "assistant": 0.9,
    "tool": 0.6,
    "system": 0.5,
}
DEFAULT_SOURCE_WEIGHTS: Mapping[str, float] = {"cron": 0.35, "kanban": 0.6, "subagent": 0.9}
DECAY = 0.5


@dataclass(frozen=True, slots=True)
class RankedSession:
    """A root session with the evidence that ranked it.

    ``message_ids`` are ordered best evidence first; ``session_ids`` are the chain members that
    matched (the root and/or its descendants).
    """

    root_id: str
    score: float
    message_ids: tuple[int, ...]
    session_ids: tuple[str, ...]
    latest_match: float
    first_match_id: int = field(default=0)

    @property
    def match_count(self) -> int:
        return len(self.message_ids)


def _contribution(
    hit: MessageHit, role_weights: Mapping[str, float], source_weights: Mapping[str, float]
) -> float:
    return hit.relevance * role_weights.get(hit.role, 0.5) * source_weights.get(hit.source, 1.0)


def rank_sessions(
    hits: Iterable[MessageHit],
    roots: Mapping[str, str],
    *,
    exclude_roots: Iterable[str] = (),
    role_weights: Mapping[str, float] = DEFAULT_ROLE_WEIGHTS,
    source_weights: Mapping[str, float] = DEFAULT_SOURCE_WEIGHTS,
    decay: float = DECAY,
) -> list[RankedSession]:
    """Group hits by root session and order the roots by score (ties: most recent first).

    ``roots`` maps each hit's session id to its chain root; hits of sessions missing from it
    count for their own session.

    Example:
        >>> h = [MessageHit(1, "child", "user", 2.0, "subagent", 10.0),
        ...      MessageHit(2, "root", "user", 1.0, "cli", 5.0)]
        >>> [r.root_id for r in rank_sessions(h, {"child": "root", "root": "root"})]
        ['root']
    """
    excluded = set(exclude_roots)
    grouped: dict[str, list[tuple[float, MessageHit]]] = {}
    for hit in hits:
        root = roots.get(hit.session_id, hit.session_id)
        if root in excluded:
            continue
        grouped.setdefault(root, []).append((_contribution(hit, role_weights, source_weights), hit))

    ranked: list[RankedSession] = []
    for root, scored in grouped.items():
        best_by_message: dict[int, tuple[float, MessageHit]] = {}
        for item in scored:  # the same message may come from two indexes: count it once
            prev = best_by_message.get(item[1].message_id)
            if prev is None or item[0] > prev[0]:
                best_by_message[item[1].message_id] = item
        ordered: Sequence[tuple[float, MessageHit]] = sorted(
            best_by_message.values(), key=lambda x: (-x[0], x[1].message_id)
        )
        score = sum(c * decay**i for i, (c, _) in enumerate(ordered))
        hits_ = [h for _, h in ordered]
        ranked.append(
            RankedSession(
                root_id=root,
                score=round(score, 6),
                message_ids=tuple(h.message_id for h in hits_),
                session_ids=tuple(dict.fromkeys(h.session_id for h in hits_)),
                latest_match=max(h.timestamp for h in hits_),
                first_match_id=min(h.message_id for h in hits_),
            )
        )
    ranked.sort(key=lambda r: (-r.score, -r.latest_match, r.root_id))
    return ranked
