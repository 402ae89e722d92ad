"""A small deterministic embedding model for the hybrid tests: words of one concept share a
dimension ("colleagues" and "workmates"), so a paraphrase is near in vector space and far in
the full-text index, as with a real model; any other word gets a hashed dimension of its own."""

from __future__ import annotations

import hashlib
import math
import re

from langchain_core.embeddings import Embeddings

CONCEPTS = (
    ("colleague", "colleagues", "workmate", "workmates", "coworker", "coworkers"),
    ("spain", "france", "italy", "european", "europe", "country", "countries"),
    ("dog", "dogs", "puppy", "pet", "pets", "hound"),
    ("guitar", "violin", "instrument", "instruments", "piano"),
)
DIM = 64


class ConceptEmbeddings(Embeddings):
    """Bag-of-concepts vectors (unit length); counts its calls and the texts it embedded."""

    model_name = "concepts-v1"

    def __init__(self, *, fail: bool = False) -> None:
        self.calls: list[int] = []
        self.queries = 0
        self.fail = fail

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * DIM
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            dim = next((i for i, group in enumerate(CONCEPTS) if word in group), None)
            if dim is None:
                dim = len(CONCEPTS) + int(hashlib.md5(word.encode()).hexdigest(), 16) % (
                    DIM - len(CONCEPTS)
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
