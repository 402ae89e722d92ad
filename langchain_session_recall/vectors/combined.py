"""Several embedding models as one: each text embedded by each, the vectors weighted and joined.

Two models see different things (e5-small ranks short turns well, a model trained on longer
passages ranks topics); blending their similarities lifts recall where each alone stalls
(``docs/hybrid.md``). Joining unit vectors scaled by the square roots of weights that sum to 1
gives a unit vector whose cosine similarity with another such vector is exactly the weighted
mean of the models' own cosine similarities, so the store, its model check and the search
need nothing new: the combination is one ``Embeddings`` with one identity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from langchain_core.embeddings import Embeddings

from langchain_session_recall.errors import InvalidArgumentError
from langchain_session_recall.vectors.identity import embedding_identity

__all__ = ["CombinedEmbeddings"]


class CombinedEmbeddings(Embeddings):
    """Each text embedded by every model; the unit vectors, each scaled by the square root of
    its model's weight, joined end to end.

    Args:
        models: Two or more LangChain ``Embeddings``.
        weights: One per model, positive; scaled to sum to 1 (default: equal).

    The cosine similarity of two combined vectors is ``sum(w_i x cos_i)``. A search embeds its
    question with every model: the query costs the sum of theirs.

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> both = CombinedEmbeddings(
        ...     [DeterministicFakeEmbedding(size=4), DeterministicFakeEmbedding(size=2)], [3, 1]
        ... )
        >>> both.weights, len(both.embed_query("hi"))
        ((0.75, 0.25), 6)
        >>> round(sum(x * x for x in both.embed_query("hi")), 6)
        1.0
    """

    def __init__(self, models: Sequence[Embeddings], weights: Sequence[float] | None = None):
        if len(models) < 2:
            raise InvalidArgumentError("CombinedEmbeddings needs two or more models")
        raw = [1.0] * len(models) if weights is None else [float(w) for w in weights]
        if len(raw) != len(models) or not all(w > 0 for w in raw):
            raise InvalidArgumentError(
                f"CombinedEmbeddings: give one positive weight per model ({len(models)}), "
                f"not {list(raw)}"
            )
        total = sum(raw)
        self.models = tuple(models)
        self.weights = tuple(round(w / total, 6) for w in raw)
        self._scales = [math.sqrt(w / total) for w in raw]
        self.model_name = "+".join(
            f"{embedding_identity(m)}*{w:g}" for m, w in zip(self.models, self.weights, strict=True)
        )
        """The models' identities and weights: what the store records beside the vectors."""

    def _join(self, parts: Sequence[Sequence[Sequence[float]]]) -> list[list[float]]:
        out: list[list[float]] = [[] for _ in parts[0]]
        for vectors, scale in zip(parts, self._scales, strict=True):
            for row, vector in zip(out, vectors, strict=True):
                norm = math.sqrt(sum(x * x for x in vector)) or 1.0
                row.extend(scale * x / norm for x in vector)
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._join([m.embed_documents(texts) for m in self.models])

    def embed_query(self, text: str) -> list[float]:
        return self._join([[m.embed_query(text)] for m in self.models])[0]

    def __repr__(self) -> str:
        return f"CombinedEmbeddings({self.model_name})"
