"""Hybrid ranking: the lexical score blended with a dense one (pure).

Blend, not fusion: each root session scores ``lexical / best lexical + weight x dense``, where
``dense`` is its dense score (its best windows' cosine similarities to the query, see
:data:`~langchain_session_recall.backends.vectors.index.WINDOW_DECAY`), min-max scaled over every
session the search may return (0 for the least similar, 1 for the most), times the same time
prior the lexical score carries when the query names a time. An exact term the lexical ranking
found keeps its lead (its part is up to 1 whatever the dense part says of others); a paraphrase
the index never matched can still come up on the dense part alone. Reciprocal-rank fusion
throws the scores' sizes away and lowered R@1 by 1-2 points on LoCoMo (issue 25).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from langchain_session_recall.search.dense import DenseEvidence
from langchain_session_recall.search.ranking import RankedSession

__all__ = ["blend"]


def blend(
    ranked: Sequence[RankedSession],
    dense: Mapping[str, DenseEvidence],
    *,
    weight: float,
    low: float,
    high: float,
    prior: Callable[[float], float] = lambda started: 1.0,
) -> list[RankedSession]:
    """Root sessions by ``lexical / max + weight x minmax(dense score) x prior(start)``.

    ``ranked`` is the lexical ranking, ``dense`` each root's dense evidence (roots the lexical
    search did not find join with a lexical part of 0); ``low`` and ``high`` bound the dense
    scores of every session in scope. Each result's ``signals`` holds the two parts
    and the raw similarity.

    Example:
        >>> lex = [RankedSession("a", 2.0, (1,), ("a",), 0.0),
        ...        RankedSession("b", 1.0, (5,), ("b",), 0.0)]
        >>> near = {"b": DenseEvidence("b", 0.9, 0.9, (5, 6), 0.0),
        ...         "c": DenseEvidence("c", 0.8, 0.8, (9,), 0.0)}
        >>> [(r.root_id, r.score) for r in blend(lex, near, weight=1.0, low=0.4, high=0.9)]
        [('b', 1.5), ('a', 1.0), ('c', 0.8)]
    """
    top = max((r.score for r in ranked), default=0.0) or 1.0
    span = high - low
    out: list[RankedSession] = []

    def dense_part(evidence: DenseEvidence | None) -> float:
        if evidence is None or span <= 0:
            return 0.0
        scaled = (evidence.score - low) / span
        return weight * scaled * prior(evidence.started_at)

    for r in ranked:
        evidence = dense.get(r.root_id)
        lexical, part = r.score / top, dense_part(evidence)
        out.append(
            replace(
                r,
                score=round(lexical + part, 6),
                message_ids=r.message_ids or (evidence.message_ids if evidence else ()),
                signals=_signals(lexical, part, evidence),
            )
        )
    found = {r.root_id for r in ranked}
    for root, evidence in dense.items():
        if root in found:
            continue
        part = dense_part(evidence)
        out.append(
            RankedSession(
                root_id=root,
                score=round(part, 6),
                message_ids=evidence.message_ids,
                session_ids=(evidence.session_id,),
                latest_match=evidence.started_at,
                matched_terms=(),
                coverage=0.0,
                signals=_signals(0.0, part, evidence),
            )
        )
    # a tie goes to the lexical evidence: an exact term outranks an equal paraphrase
    out.sort(
        key=lambda r: (-r.score, -(r.signals or {}).get("lexical", 0.0), -r.latest_match, r.root_id)
    )
    return out


def _signals(lexical: float, dense: float, evidence: DenseEvidence | None) -> dict[str, float]:
    out = {"lexical": round(lexical, 6), "dense": round(dense, 6)}
    if evidence is not None:
        out["similarity"] = round(evidence.similarity, 6)
    return out
