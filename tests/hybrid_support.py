"""A small deterministic embedding model for the hybrid tests: words of one concept share a
dimension ("colleagues" and "workmates"), so a paraphrase is near in vector space and far in
the full-text index, as with a real model; any other word gets a hashed dimension of its own."""

from __future__ import annotations

import hashlib
import math
import re
from typing import Literal

from langchain_core.embeddings import Embeddings

CONCEPTS = (
    ("colleague", "colleagues", "workmate", "workmates", "coworker", "coworkers"),
    ("spain", "france", "italy", "european", "europe", "country", "countries"),
    ("dog", "dogs", "puppy", "pet", "pets", "hound"),
    ("guitar", "violin", "instrument", "instruments", "piano"),
)
DIM = 64


class ConceptEmbeddings(Embeddings):
    """Bag-of-concepts vectors (unit length) of ``dim`` numbers; counts its calls and the
    texts it embedded. It does not say its size (as most models): a store learns it from the
    vectors it makes."""

    model_name = "concepts-v1"

    def __init__(self, *, fail: bool = False, dim: int = DIM) -> None:
        self.calls: list[int] = []
        self.queries = 0
        self.fail = fail
        self.dim = dim

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            dim = next((i for i, group in enumerate(CONCEPTS) if word in group), None)
            if dim is None:
                dim = len(CONCEPTS) + int(hashlib.md5(word.encode()).hexdigest(), 16) % (
                    self.dim - len(CONCEPTS)
                )
            v[dim] += 1.0
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.fail:
            raise ConnectionError("embedding service unreachable")
        self.calls.append(len(texts))
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return self._vector(text)


class OtherModel(ConceptEmbeddings):
    model_name = "concepts-v2"


class SizedEmbeddings(ConceptEmbeddings):
    """A model that says its size, as ``OpenAIEmbeddings(dimensions=n)`` does."""

    def __init__(self, dimensions: int) -> None:
        super().__init__(dim=dimensions)
        self.dimensions = dimensions


Fault = Literal["nan", "inf", "short"]


class FaultyEmbeddings(ConceptEmbeddings):
    """ConceptEmbeddings whose vector of a text holding ``word`` is spoilt: a NaN (``"nan"``),
    an infinity (``"inf"``) or half its size (``"short"``); ``word`` ``None``: none is."""

    def __init__(self, word: str | None, fault: Fault) -> None:
        super().__init__()
        self.word = word
        self.fault = fault

    def _spoil(self, text: str, vector: list[float]) -> list[float]:
        if self.word is None or self.word not in text.lower():
            return vector
        if self.fault == "short":
            return vector[: len(vector) // 2]
        return [math.nan if self.fault == "nan" else math.inf, *vector[1:]]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = super().embed_documents(texts)
        return [self._spoil(t, v) for t, v in zip(texts, vectors, strict=True)]

    def embed_query(self, text: str) -> list[float]:
        return self._spoil(text, super().embed_query(text))
