"""Session ranking (pure): message hits -> root sessions ordered by evidence.

A session is scored by all of its matching messages across its delegation chain, not only the
best one: contributions are sorted and summed with geometric decay, so a second and third
matching message add evidence without letting a long session win by volume alone. Each
contribution is the message's full-text relevance times a role weight (what the user said
names the topic best; tool output is noisy) and a source weight (automation runs are demoted,
never dropped).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from langchain_session_recall.core.automation import AUTOMATION_WEIGHTS
from langchain_session_recall.models import MessageHit, SessionHit
from langchain_session_recall.search.time_hints import DAY_SECONDS, TimeHint, time_prior

__all__ = [
    "DEFAULT_ROLE_WEIGHTS",
    "DEFAULT_SOURCE_WEIGHTS",
    "RankedSession",
    "TermWeights",
    "best_window",
    "rank_by_terms",
    "rank_sessions",
]

DEFAULT_ROLE_WEIGHTS: Mapping[str, float] = {
    "user": 1.0,
    "assistant": 0.9,
    "tool": 0.6,
    "system": 0.5,
}
DEFAULT_SOURCE_WEIGHTS: Mapping[str, float] = {**AUTOMATION_WEIGHTS, "subagent": 0.9}
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
    matched_terms: tuple[str, ...] = ()
    """Query terms found in the chain (term-coverage ranking only), most informative first."""
    coverage: float = 1.0
    """Share of the query's informative weight the chain matched (0-1)."""
    signals: Mapping[str, float] | None = None
    """Hybrid search only: what each signal added to ``score`` (``lexical``, ``dense``) and
    the best window's cosine ``similarity`` (see :mod:`~langchain_session_recall.search.blend`)."""

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

    ``hits`` hold each message once, as ``SessionBackend.match_messages`` returns them.
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
        ordered = sorted(scored, key=lambda x: (-x[0], x[1].message_id))
        score = sum(c * decay**i for i, (c, _) in enumerate(ordered))
        hits_ = [h for _, h in ordered]
        ranked.append(
            RankedSession(
                root_id=root,
                score=round(score, 6),
                message_ids=tuple(h.message_id for h in hits_),
                session_ids=tuple(dict.fromkeys(h.session_id for h in hits_)),
                latest_match=max(h.timestamp for h in hits_),
            )
        )
    ranked.sort(key=lambda r: (-r.score, -r.latest_match, r.root_id))
    return ranked


@dataclass(frozen=True, slots=True)
class TermWeights:
    """Knobs of :func:`rank_by_terms` (defaults measured on ``benchmarks/recall`` and the
    LoCoMo development split, ``benchmarks/locomo``).

    ``coverage_power`` sharpens the preference for sessions that matched more of the query's
    informative terms; ``repeat_decay`` demotes each further run of an automation source
    (weight below 1) after its best one; ``together_bonus`` rewards a single message holding
    several terms (a proximity signal: the words were said together); ``recency_half_life``
    (days, ``None`` = off) gives sessions matched recently up to 10% more, so newer ones win
    near-ties.

    Passage windows: a question and its answer often sit in adjacent messages, so a session is
    also scored by its best window of ``window_size`` adjacent messages (every such window,
    step one), each holding the session's header (title, date words): the terms it covers,
    weighted by rarity, their matches summed with ``window_decay``, times its coverage to
    ``window_coverage_power``. The final score blends ``window_weight`` times the best window
    with ``message_weight`` times the whole-chain score above, each divided by the best of the
    candidates. ``time_boost``: a session whose start lies in the range a query names ("May
    2023", "last week") gets up to ``1 + time_boost`` times its score, fading outside the range
    at ``time_spread`` (see :func:`~langchain_session_recall.search.time_hints.closeness`).

    Example:
        >>> TermWeights(recency_half_life=30.0).coverage_power
        2.0
    """

    role_weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_ROLE_WEIGHTS))
    source_weights: Mapping[str, float] = field(
        default_factory=lambda: dict(DEFAULT_SOURCE_WEIGHTS)
    )
    decay: float = DECAY
    coverage_power: float = 2.0
    together_bonus: float = 0.5
    repeat_decay: float = 0.5
    recency_half_life: float | None = None
    window_size: int = 3
    window_decay: float = 0.3
    window_coverage_power: float = 1.0
    window_weight: float = 1.0
    message_weight: float = 0.5
    time_boost: float = 1.0
    time_spread: float = 0.5


_DEFAULT_TERM_WEIGHTS = TermWeights()
_NO_SESSION_HITS: Mapping[str, Sequence[SessionHit]] = {}


def _term_weights(
    term_hits: Mapping[str, Sequence[MessageHit]],
    session_hits: Mapping[str, Sequence[SessionHit]],
    roots: Mapping[str, str],
    source_weights: Mapping[str, float],
) -> dict[str, float]:
    """How informative each term is: ``ln(1 + N / df)`` over the sessions that matched.

    ``df`` counts the root sessions a term matched (in a message or the header), ``N`` those
    any term matched, and all runs of one automation source count once: a word that fills a
    hundred cron runs still names the one interactive session that discussed it.
    """

    def group(session_id: str, source: str) -> str:
        if source_weights.get(source, 1.0) < 0.75:
            return "\x00" + source
        return roots.get(session_id, session_id)

    sessions: dict[str, set[str]] = {}
    for term, hits in term_hits.items():
        sessions.setdefault(term, set()).update(group(h.session_id, h.source) for h in hits)
    for term, found in session_hits.items():
        sessions.setdefault(term, set()).update(group(h.session_id, h.source) for h in found)
    n = len(set().union(*sessions.values())) if sessions else 0
    return {t: math.log(1.0 + n / len(g)) if g else 0.0 for t, g in sessions.items()}


def _best_evidence_first(
    by_term: Mapping[str, Mapping[int, tuple[float, MessageHit]]],
    term_weight: Mapping[str, float],
) -> list[int]:
    """A chain's matched messages, best evidence first: by the sum of their terms' relevance,
    each weighed by the term's rarity across sessions and, within the chain, by how few of the
    chain's matches hold it (a log of 2,000 lines that all say "terraform plan" puts first the
    one line that also says "vpc-1500"); ties by message id.

    Example:
        >>> h = MessageHit(0, "s", "user", 1.0, "cli", 0.0)
        >>> by_term = {"plan": {1: (3.0, h), 2: (2.0, h), 3: (1.0, h)}, "vpc": {3: (2.0, h)}}
        >>> _best_evidence_first(by_term, {"plan": 1.0, "vpc": 1.0})
        [3, 1, 2]
    """
    matched = len({mid for msgs in by_term.values() for mid in msgs})
    weight: dict[int, float] = {}
    for term, msgs in by_term.items():
        rarity = term_weight.get(term, 0.0) * math.log(1.0 + matched / max(1, len(msgs)))
        for mid, (c, _) in msgs.items():
            weight[mid] = weight.get(mid, 0.0) + c * rarity
    return sorted(weight, key=lambda m: (-weight[m], m))


def _decayed(values: Iterable[float], decay: float) -> float:
    return sum(v * decay**i for i, v in enumerate(sorted(values, reverse=True)))


def _positions(hits: Iterable[MessageHit]) -> dict[int, int]:
    """``{message_id: place in its session}``: stored positions when every hit of the session
    has one, else message ids (the same order; rows other programs wrote carry no position)."""
    by_session: dict[str, list[MessageHit]] = {}
    for hit in hits:
        by_session.setdefault(hit.session_id, []).append(hit)
    out: dict[int, int] = {}
    for found in by_session.values():
        stored = all(h.position is not None for h in found)
        for h in found:
            out[h.message_id] = h.position if stored and h.position is not None else h.message_id
    return out


def best_window(
    messages: Mapping[str, Mapping[int, float]],
    header: Mapping[str, float],
    positions: Mapping[int, int],
    term_weight: Mapping[str, float],
    *,
    size: int,
    decay: float,
    coverage_power: float,
) -> float:
    """The best score of a window of ``size`` adjacent messages of one session (pure).

    ``messages`` maps each term to ``{message_id: contribution}`` for this session's matches,
    ``header`` each term to the contribution of the session's header (title, date words),
    which every window holds. A window scores the rarity-weighted, decayed sum of its terms'
    contributions times the share of the query's weight it covers to ``coverage_power``.

    Example:
        >>> w = {"flight": 1.0, "paris": 1.0}
        >>> question = {"flight": {10: 2.0}}; answer = {"paris": {11: 2.0}}
        >>> best_window({**question, **answer}, {}, {10: 0, 11: 1}, w, size=3, decay=0.3,
        ...             coverage_power=1.0)
        4.0
        >>> best_window({**question, **answer}, {}, {10: 0, 11: 9}, w, size=3, decay=0.3,
        ...             coverage_power=1.0)
        1.0
    """
    total = sum(term_weight.values()) or 1.0
    mean = total / max(1, len(term_weight)) or 1.0  # (weights so small it underflows)
    if len(messages) == 1 and not header:  # one message of one term: the window is it
        [(term, ids)] = messages.items()
        if len(ids) == 1:
            weight = term_weight.get(term, 0.0)
            share: float = (weight / total) ** coverage_power
            return weight / mean * next(iter(ids.values())) * share
    # (position, term, contribution) in position order; each window is a run of them
    found = sorted(
        (positions[m], term, c) for term, ids in messages.items() for m, c in ids.items()
    )
    starts = sorted({p - k for p, _, _ in found for k in range(size)}) or [0]
    best, lo, hi, n = 0.0, 0, 0, len(found)
    seen = (-1, -1)
    for start in starts:
        while lo < n and found[lo][0] < start:
            lo += 1
        hi = max(hi, lo)  # both ends only move forward
        while hi < n and found[hi][0] < start + size:
            hi += 1
        if (lo, hi) == seen:
            continue  # the same hits as the window before: the same score
        seen = (lo, hi)
        inside: dict[str, list[float]] = {t: [c] for t, c in header.items()}
        for _, term, c in found[lo:hi]:
            inside.setdefault(term, []).append(c)
        score = covered = 0.0
        for term, values in inside.items():
            weight = term_weight.get(term, 0.0)
            score += weight / mean * (values[0] if len(values) == 1 else _decayed(values, decay))
            covered += weight
        best = max(best, score * (covered / total) ** coverage_power)
    return best


def rank_by_terms(
    term_hits: Mapping[str, Sequence[MessageHit]],
    roots: Mapping[str, str],
    *,
    session_hits: Mapping[str, Sequence[SessionHit]] = _NO_SESSION_HITS,
    exclude_roots: Iterable[str] = (),
    weights: TermWeights = _DEFAULT_TERM_WEIGHTS,
    now: float | None = None,
    time_hint: TimeHint | None = None,
) -> list[RankedSession]:
    """Rank root sessions by how well their whole chain, and their best passage, cover the
    query's terms.

    ``term_hits`` maps each query term to the messages that matched it alone (each message
    once, as ``SessionBackend.match_messages`` returns them), with their full-text relevance
    for that term (BM25 carries the term's rarity: a word found in few
    messages weighs more); ``session_hits`` the sessions whose header (title, date words)
    matched it. For every root session and term, the matching messages' weighted relevances
    are summed with geometric decay (more evidence helps, volume alone does not win); the
    per-term sums are added up, multiplied by the session's *coverage* (weight of the terms it
    matched / weight of all terms found anywhere, to ``coverage_power``; a term's weight is its
    session-level IDF) and by a bonus when one message holds several terms. That whole-chain
    score is blended with the session's best window of adjacent messages
    (:func:`best_window`), then multiplied by the time prior when the query named a time
    (``time_hint``). Automation sources are demoted by ``source_weights``, never dropped.
    ``now`` (Unix seconds) enables the optional recency factor of ``weights``.

    Example:
        >>> hits = {"cors": [MessageHit(1, "a", "user", 3.0, "cli", 1.0),
        ...                  MessageHit(2, "b", "user", 3.5, "cli", 2.0)],
        ...         "nginx": [MessageHit(1, "a", "user", 2.0, "cli", 1.0)]}
        >>> [(r.root_id, r.matched_terms) for r in rank_by_terms(hits, {})]
        [('a', ('nginx', 'cors')), ('b', ('cors',))]
    """
    excluded = set(exclude_roots)
    term_weight = _term_weights(term_hits, session_hits, roots, weights.source_weights)
    total_weight = sum(term_weight.values()) or 1.0
    evidence = _Evidence(
        grouped=_group_hits(term_hits, roots, excluded, weights),
        headers={},
        header_info={},
        term_weight=term_weight,
        total_weight=total_weight,
        mean_weight=total_weight / max(1, len(term_weight)),
        positions=_positions(h for hits in term_hits.values() for h in hits),
        weights=weights,
    )
    _group_headers(evidence, session_hits, roots, excluded)
    facts = {root: evidence.facts(root) for root in set(evidence.grouped) | set(evidence.headers)}
    top_chain = max((f.chain_score for f in facts.values()), default=0.0) or 1.0
    top_window = max((f.window_score for f in facts.values()), default=0.0) or 1.0
    ranked: list[RankedSession] = []
    sources: dict[str, str] = {}
    prior = time_prior(time_hint, boost=weights.time_boost, spread=weights.time_spread)
    for root, fact in facts.items():
        score = _final_score(fact, top_window, top_chain, weights, now, prior)
        sources[root] = fact.source
        terms = set(evidence.grouped.get(root, {})) | {
            t for per in evidence.headers.get(root, {}).values() for t in per
        }
        ranked.append(
            RankedSession(
                root_id=root,
                score=round(score, 6),
                message_ids=tuple(fact.order),
                session_ids=tuple(dict.fromkeys(fact.matched)),
                latest_match=fact.latest,
                matched_terms=tuple(sorted(terms, key=lambda t: (-term_weight[t], t))),
                coverage=round(fact.coverage, 4),
            )
        )
    ranked.sort(key=lambda r: (-r.score, -r.latest_match, r.root_id))
    return _spread_repeats(ranked, sources, weights)


# root -> term -> message id -> (contribution, hit)
_Grouped = dict[str, dict[str, dict[int, tuple[float, MessageHit]]]]


@dataclass(frozen=True, slots=True)
class _SessionFacts:
    """What ranking found out about one root session (its chain)."""

    chain_score: float
    """Whole-chain evidence: decayed contributions x coverage x the together bonus."""
    window_score: float
    """The best passage window of one of the chain's sessions."""
    order: list[int]
    """Matched message ids, best first."""
    matched: list[str]
    """Sessions of the chain that matched: by their messages' order, then by header."""
    coverage: float
    """Weight of the query terms the chain matched / weight of all terms found anywhere."""
    started: float | None
    """When the root started (else a matched member), for the time prior."""
    source: str
    """The root's source (else a matched member's), for the automation demotion."""
    latest: float
    """Time of the newest matched message (recency, tie-break)."""


@dataclass(slots=True)
class _Evidence:
    """Everything one ranking pass knows, by root session, and the weights it scores with."""

    grouped: _Grouped
    headers: dict[str, dict[str, dict[str, float]]]
    """root -> session -> term -> header contribution."""
    header_info: dict[str, SessionHit]
    term_weight: dict[str, float]
    total_weight: float
    mean_weight: float
    positions: dict[int, int]
    weights: TermWeights

    def facts(self, root: str) -> _SessionFacts:
        """Score one root session's chain and its best window, and note its facts."""
        by_term = self.grouped.get(root, {})
        if len(by_term) == 1 and not self.headers.get(root):
            [(term, msgs)] = by_term.items()
            if len(msgs) == 1:  # most candidates: one message matched one term
                [(mid, (c, hit))] = msgs.items()
                return self._one_hit_facts(root, term, mid, c, hit)
        return self._chain_facts(root)

    def _one_hit_facts(
        self, root: str, term: str, mid: int, c: float, hit: MessageHit
    ) -> _SessionFacts:
        """:meth:`_chain_facts` of a chain matched by one message for one term, without its
        grouping: the same expressions, each over one value."""
        weights, term_weight = self.weights, self.term_weight
        base = term_weight[term] / self.mean_weight * _decayed((c,), weights.decay)
        coverage = term_weight[term] / self.total_weight
        chain_score = base * coverage**weights.coverage_power  # one term: no "together" bonus
        window_score = best_window(
            {term: {mid: c}},
            {},
            self.positions,
            term_weight,
            size=weights.window_size,
            decay=weights.window_decay,
            coverage_power=weights.window_coverage_power,
        )
        started, source = self._start_and_source(root, {mid: hit}, {})
        return _SessionFacts(
            chain_score,
            window_score,
            [mid],
            [hit.session_id],
            coverage,
            started,
            source,
            hit.timestamp,
        )

    def _chain_facts(self, root: str) -> _SessionFacts:
        weights, term_weight = self.weights, self.term_weight
        by_term = self.grouped.get(root, {})
        root_headers = self.headers.get(root, {})
        header_terms = {t for per in root_headers.values() for t in per}
        base = sum(
            term_weight[t]
            / self.mean_weight
            * _decayed((c for c, _ in msgs.values()), weights.decay)
            for t, msgs in by_term.items()
        )
        chain_terms = set(by_term) | header_terms
        coverage = sum(term_weight[t] for t in chain_terms) / self.total_weight
        message_terms: dict[int, float] = {}
        hits_by_id: dict[int, MessageHit] = {}
        # session -> term -> message id -> contribution (the windows' input)
        per_session: dict[str, dict[str, dict[int, float]]] = {}
        for term, msgs in by_term.items():
            for mid, (c, hit) in msgs.items():
                message_terms[mid] = message_terms.get(mid, 0.0) + term_weight[term]
                hits_by_id[mid] = hit
                per_session.setdefault(hit.session_id, {}).setdefault(term, {})[mid] = c
        together = (
            max(message_terms.values()) / self.total_weight
            if len(by_term) > 1 and message_terms
            else 0.0
        )
        chain_score = (
            base * coverage**weights.coverage_power * (1.0 + weights.together_bonus * together)
        )
        # the best window over the chain's sessions (a window never spans two sessions)
        window_score = max(
            best_window(
                per_session.get(sid, {}),
                root_headers.get(sid, {}),
                self.positions,
                term_weight,
                size=weights.window_size,
                decay=weights.window_decay,
                coverage_power=weights.window_coverage_power,
            )
            for sid in set(per_session) | set(root_headers)
        )
        order = _best_evidence_first(by_term, term_weight)
        matched = [hits_by_id[m].session_id for m in order] + sorted(root_headers)
        started, source = self._start_and_source(root, hits_by_id, root_headers)
        latest = max((h.timestamp for h in hits_by_id.values()), default=started or 0.0)
        return _SessionFacts(
            chain_score, window_score, order, matched, coverage, started, source, latest
        )

    def _start_and_source(
        self,
        root: str,
        hits_by_id: Mapping[int, MessageHit],
        root_headers: Mapping[str, Mapping[str, float]],
    ) -> tuple[float | None, str]:
        """The root's own start and source when a hit says them, else a matched member's."""
        header_info = self.header_info
        own = [h for h in hits_by_id.values() if h.session_id == root]
        heads = [header_info[root]] if root in header_info else []
        heads += [header_info[s] for s in sorted(root_headers) if s != root]
        started = next((h.session_started for h in own if h.session_started is not None), None)
        if started is None and heads:
            started = heads[0].started_at
        if started is None:
            started = min(
                (h.session_started for h in hits_by_id.values() if h.session_started is not None),
                default=None,
            )
        source = (
            own[0].source
            if own
            else heads[0].source
            if heads
            else next(iter(hits_by_id.values())).source
        )
        return started, source


def _group_hits(
    term_hits: Mapping[str, Sequence[MessageHit]],
    roots: Mapping[str, str],
    excluded: Collection[str],
    weights: TermWeights,
) -> _Grouped:
    grouped: _Grouped = {}
    for term, hits in term_hits.items():
        for hit in hits:
            root = roots.get(hit.session_id, hit.session_id)
            if root in excluded:
                continue
            c = _contribution(hit, weights.role_weights, weights.source_weights)
            grouped.setdefault(root, {}).setdefault(term, {})[hit.message_id] = (c, hit)
    return grouped


def _group_headers(
    evidence: _Evidence,
    session_hits: Mapping[str, Sequence[SessionHit]],
    roots: Mapping[str, str],
    excluded: Collection[str],
) -> None:
    source_weights = evidence.weights.source_weights
    for term, found in session_hits.items():
        for sh in found:
            root = roots.get(sh.session_id, sh.session_id)
            if root in excluded:
                continue
            c = sh.relevance * source_weights.get(sh.source, 1.0)
            per = evidence.headers.setdefault(root, {}).setdefault(sh.session_id, {})
            per[term] = max(per.get(term, 0.0), c)
            evidence.header_info[sh.session_id] = sh


def _final_score(
    fact: _SessionFacts,
    top_window: float,
    top_chain: float,
    weights: TermWeights,
    now: float | None,
    prior: Callable[[float], float],
) -> float:
    """Window and chain blended (each against the best candidate's), then the optional
    recency factor and the time prior (:func:`~.time_hints.time_prior`)."""
    score = (
        weights.window_weight * fact.window_score / top_window
        + weights.message_weight * fact.chain_score / top_chain
    )
    if weights.recency_half_life and now is not None:
        age_days = max(0.0, now - fact.latest) / DAY_SECONDS
        score *= 1.0 + 0.1 * math.exp(-age_days * math.log(2) / weights.recency_half_life)
    if fact.started is not None:
        score *= prior(fact.started)  # 1.0 without a hint or a boost: the score as it was
    return score


def _spread_repeats(
    ranked: list[RankedSession], sources: Mapping[str, str], weights: TermWeights
) -> list[RankedSession]:
    """Demote the 2nd, 3rd, ... run of each automation source (cron runs are near-duplicates).

    Dozens of nightly runs that say the same thing would otherwise fill the first page; the
    best run keeps its place, each further run of that source is scaled by ``repeat_decay``
    once more, so the interactive sessions that match the same words come up between them.
    """
    seen: dict[str, int] = {}
    out: list[RankedSession] = []
    for r in ranked:
        source = sources.get(r.root_id, "")
        if weights.source_weights.get(source, 1.0) >= 1.0:
            out.append(r)
            continue
        n = seen.get(source, 0)
        seen[source] = n + 1
        out.append(replace(r, score=round(r.score * weights.repeat_decay**n, 6)) if n else r)
    out.sort(key=lambda r: (-r.score, -r.latest_match, r.root_id))
    return out
