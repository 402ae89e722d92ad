"""CombinedEmbeddings: several models as one (issue 25's model blend)."""

from __future__ import annotations

import math

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_session_recall.backends.vectors.combined import CombinedEmbeddings
from langchain_session_recall.backends.vectors.identity import embedding_identity
from langchain_session_recall.errors import InvalidArgumentError


def _cos(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_the_cosine_of_combined_vectors_is_the_weighted_mean_of_the_models_cosines() -> None:
    first, second = DeterministicFakeEmbedding(size=16), DeterministicFakeEmbedding(size=8)
    both = CombinedEmbeddings([first, second], [0.7, 0.3])
    query, (doc,) = both.embed_query("workmates"), both.embed_documents(["colleagues"])
    expected = 0.7 * _cos(first.embed_query("workmates"), first.embed_documents(["colleagues"])[0])
    expected += 0.3 * _cos(
        second.embed_query("workmates"), second.embed_documents(["colleagues"])[0]
    )
    assert len(query) == 24
    assert sum(x * x for x in query) == pytest.approx(1.0)
    assert sum(x * y for x, y in zip(query, doc, strict=True)) == pytest.approx(expected)
    assert both.embed_documents([]) == []


def test_the_identity_names_every_model_and_weight() -> None:
    a, b = DeterministicFakeEmbedding(size=16), DeterministicFakeEmbedding(size=8)
    identity = embedding_identity(CombinedEmbeddings([a, b], [1, 3]))
    assert identity.endswith(f"{embedding_identity(a)}*0.25+{embedding_identity(b)}*0.75")
    assert identity != embedding_identity(CombinedEmbeddings([a, b]))  # weights are part of it


@pytest.mark.parametrize("weights", [[1.0], [1.0, 0.0], [1.0, -1.0]])
def test_bad_weights_are_refused(weights: list[float]) -> None:
    models = [DeterministicFakeEmbedding(size=4), DeterministicFakeEmbedding(size=4)]
    with pytest.raises(InvalidArgumentError, match="one positive weight per model"):
        CombinedEmbeddings(models, weights)


def test_one_model_is_not_a_combination() -> None:
    with pytest.raises(InvalidArgumentError, match="two or more"):
        CombinedEmbeddings([DeterministicFakeEmbedding(size=4)])


def test_one_model_alone_fills_its_place_and_zeros_the_others() -> None:
    first, second = DeterministicFakeEmbedding(size=4), DeterministicFakeEmbedding(size=2)
    both = CombinedEmbeddings([first, second], one_layout_each=True)
    (vector,) = both.embed_documents_with(1, ["hello"])
    assert vector[:4] == [0.0] * 4 and any(vector[4:])
    assert both.embed_documents_with(0, []) == []
    assert embedding_identity(both).split(":", 1)[1].startswith("per-layout:")
    with pytest.raises(InvalidArgumentError, match="takes no weights"):
        CombinedEmbeddings([first, second], [1, 1], one_layout_each=True)
