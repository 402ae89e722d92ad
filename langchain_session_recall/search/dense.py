"""The dense half of a hybrid search: what it asks the store's vector index, and the evidence
each root session gets from the answer.

A hybrid search (:mod:`~langchain_session_recall.search.pipeline`) asks the index once, after
the lexical ranking: the most similar sessions, and the lexical ones besides (so each lexical
session has a dense score too). Dense candidates pass the same filters (in the store), are
collapsed to their chain roots and lose the current conversation's chain, as lexical ones do.
:mod:`~langchain_session_recall.search.blend` (pure) weighs the two halves together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from langchain_session_recall.models import SearchFilters
from langchain_session_recall.search.ranking import RankedSession

if TYPE_CHECKING:
    from langchain_session_recall.backends.base import SessionBackend
    from langchain_session_recall.backends.vectors.index import DenseResult, VectorIndex

__all__ = [
    "DEFAULT_DENSE_CANDIDATES",
    "DEFAULT_DENSE_WEIGHT",
    "DenseEvidence",
    "DenseSearch",
    "dense_evidence",
]

DEFAULT_DENSE_WEIGHT = 1.0
"""The dense part's weight (chosen on the LoCoMo development split, ``docs/hybrid.md``)."""
DEFAULT_DENSE_CANDIDATES = 50
"""Sessions the dense search adds to the lexical candidates (its most similar ones)."""


@dataclass(frozen=True, slots=True)
class DenseSearch:
    """The dense half of one hybrid search: the store's index, the query's vector (or a
    function that gives it, waiting if need be: the retriever embeds the query while the
    lexical search runs, :mod:`~langchain_session_recall.search.question_vector`), the blend
    weight and how many of the most similar sessions join the lexical candidates."""

    index: VectorIndex
    vector: Sequence[float] | Callable[[], Sequence[float]]
    weight: float = DEFAULT_DENSE_WEIGHT
    candidates: int = DEFAULT_DENSE_CANDIDATES

    def query_vector(self) -> Sequence[float]:
        """The query's vector (waiting for it if it is still being made)."""
        return self.vector() if callable(self.vector) else self.vector


@dataclass(frozen=True, slots=True)
class DenseEvidence:
    """A root session's dense evidence: the chain member holding its best window, that
    member's dense score, the window's similarity and message ids, the member's start."""

    session_id: str
    score: float
    similarity: float
    message_ids: tuple[int, ...]
    started_at: float


def dense_evidence(
    backend: SessionBackend,
    ranked: Sequence[RankedSession],
    dense: DenseSearch,
    filters: SearchFilters,
    exclude_roots: Sequence[str],
    user_id: str | None,
) -> tuple[dict[str, DenseEvidence], DenseResult]:
    """Each root session's best window among the most similar ones (and the lexical
    candidates of ``ranked``), outside ``exclude_roots``, and the index's answer (its
    ``low`` and ``high`` bound the dense scores of every session in scope)."""
    lexical_sessions = {s for r in ranked for s in (r.root_id, *r.session_ids)}
    found = dense.index.search(
        dense.query_vector(), filters=filters, limit=dense.candidates, include=lexical_sessions
    )
    roots = backend.roots_of(found.hits, user_id=user_id)
    excluded = set(exclude_roots)
    best: dict[str, DenseEvidence] = {}
    for sid, hit in found.hits.items():
        root = roots.get(sid, sid)
        if root in excluded:
            continue
        if root not in best or hit.score > best[root].score:
            best[root] = DenseEvidence(
                sid, hit.score, hit.similarity, hit.message_ids, hit.started_at
            )
    return best, found
