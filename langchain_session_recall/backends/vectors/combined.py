"""Several embedding models as one: each text embedded by each, the vectors weighted and joined.

Two models may see different things (issue 25 measured e5-small blended with
all-mpnet-base-v2 above either alone; all-MiniLM-L6-v2 added nothing to e5-small on LoCoMo,
``docs/hybrid.md``). Joining unit vectors scaled by the square roots of weights that sum to 1
gives a unit vector whose cosine similarity with another such vector is exactly the weighted
mean of the models' own cosine similarities, so the store, its model check and the search
need nothing new: the combination is one ``Embeddings`` with one identity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from langchain_core.embeddings import Embeddings

from langchain_session_recall.backends.vectors.identity import embedding_identity
from langchain_session_recall.errors import InvalidArgumentError

__all__ = ["CombinedEmbeddings"]


class CombinedEmbeddings(Embeddings):
    """Each text embedded by every model; the unit vectors, each scaled by the square root of
    its model's weight, joined end to end.

    Args:
        models: Two or more LangChain ``Embeddings``.
        weights: One per model, positive; scaled to sum to 1 (default: equal).

    The cosine similarity of two combined vectors is ``sum(w_i x cos_i)``. A search embeds its
    question with every model: the query costs the sum of theirs.

    With ``one_layout_each`` (no weights), a store with as many window layouts as models
    (``embedding_window=[(3, 1), (6, 1)]``) embeds the windows of layout ``i`` with model ``i``
    alone: a session's dense score is then the mean of each model's min-max scaled score on
    its own windows (each model reads the window size it ranks best, and each window is
    embedded once).

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> both = CombinedEmbeddings(
        ...     [DeterministicFakeEmbedding(size=4), DeterministicFakeEmbedding(size=2)], [3, 1]
        ... )
        >>> both.weights, len(both.embed_query("hi"))
        ((0.75, 0.25), 6)
        >>> float(round(sum(x * x for x in both.embed_query("hi")), 6))
        1.0
    """

    def __init__(
        self,
        models: Sequence[Embeddings],
        weights: Sequence[float] | None = None,
        *,
        one_layout_each: bool = False,
    ):
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
        if one_layout_each and weights is not None:
            raise InvalidArgumentError(
                "CombinedEmbeddings(one_layout_each=True) takes no weights: each model's "
                "layout is scaled and weighed like any other layout (their mean)"
            )
        self.one_layout_each = one_layout_each
        self._dims: dict[int, int] = {}
        self.model_name = ("per-layout:" if one_layout_each else "") + "+".join(
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

    def embed_documents_with(self, part: int, texts: list[str]) -> list[list[float]]:
        """``texts`` embedded by model ``part`` alone: its place in the joined vector holds
        its vector, the other models' places zeros (``one_layout_each``)."""
        if not texts:
            return []
        parts: list[Sequence[Sequence[float]]] = []
        for n, model in enumerate(self.models):
            if n == part:
                parts.append(model.embed_documents(texts))
            else:
                parts.append([[0.0] * self._dim(n)] * len(texts))
        return self._join(parts)

    def _dim(self, part: int) -> int:
        if part not in self._dims:
            self._dims[part] = len(self.models[part].embed_query("dimension"))
        return self._dims[part]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._join([m.embed_documents(texts) for m in self.models])

    def embed_query(self, text: str) -> list[float]:
        return self._join([[m.embed_query(text)] for m in self.models])[0]

    def __repr__(self) -> str:
        return f"CombinedEmbeddings({self.model_name})"
