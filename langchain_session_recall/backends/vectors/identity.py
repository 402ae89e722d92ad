"""Which model made a vector: the name a store records beside its vectors (pure)."""

from __future__ import annotations

from typing import Any

__all__ = ["embedding_identity"]

_NAME_FIELDS = ("model_name", "model", "model_id", "deployment", "repo_id", "size")


def embedding_identity(embeddings: Any) -> str:
    """``module.Class:model`` for a LangChain ``Embeddings`` object.

    The model is read from the usual fields (``model_name``, ``model``, ``model_id``, ...; a
    fake's ``size``); an object with none of them is named by its class alone. Vectors of
    two models are not comparable, so a store refuses a search whose model's identity differs
    from the one its vectors were made with. A cache in front of a model (an object with
    ``underlying_embeddings``, as LangChain's ``CacheBackedEmbeddings``) is named by that model.

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> embedding_identity(DeterministicFakeEmbedding(size=8))
        'langchain_core.embeddings.fake.DeterministicFakeEmbedding:8'
    """
    underlying = getattr(embeddings, "underlying_embeddings", None)
    if underlying is not None and underlying is not embeddings:
        # a cache in front of a model (LangChain's CacheBackedEmbeddings) gives that model's
        # vectors: it is that model to a store
        return embedding_identity(underlying)
    kind = type(embeddings)
    name = f"{kind.__module__}.{kind.__qualname__}"
    for field in _NAME_FIELDS:
        value = getattr(embeddings, field, None)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return f"{name}:{value}"
    return name
