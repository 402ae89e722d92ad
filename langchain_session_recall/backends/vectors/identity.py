"""Which model made a vector: the name a store records beside its vectors, and the size of
vector a model says it makes (pure)."""

from __future__ import annotations

from typing import Any

__all__ = ["declared_dimension", "embedding_identity", "embedding_provider_and_model"]

_NAME_FIELDS = ("model_name", "model", "model_id", "deployment", "repo_id", "size")
_MODEL_FIELDS = tuple(f for f in _NAME_FIELDS if f != "size")  # a size names no model
_DIM_FIELDS = ("dimensions", "output_dimensionality", "output_dimension", "dimension", "size")
"""Where a model object states the size of its vectors (``OpenAIEmbeddings(dimensions=256)``,
Google's ``output_dimensionality``, Voyage's ``output_dimension``, LangChain's fakes' ``size``)."""


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


def embedding_provider_and_model(embeddings: Any) -> tuple[str, str | None]:
    """The class name and the model name of a LangChain ``Embeddings`` object, as LangSmith's
    ``ls_embedding_provider`` / ``ls_embedding_model`` report them.

    The provider is the class's name (as LangChain's ``VectorStoreRetriever`` reports it), the
    model the first name field set (``model_name``, ``model``, ...): read from the object,
    nothing loaded or embedded. A fake's ``size`` is no name (``None``); a cache in front of a
    model is that model.

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> embedding_provider_and_model(DeterministicFakeEmbedding(size=8))
        ('DeterministicFakeEmbedding', None)
    """
    underlying = getattr(embeddings, "underlying_embeddings", None)
    if underlying is not None and underlying is not embeddings:
        return embedding_provider_and_model(underlying)
    for field in _MODEL_FIELDS:
        value = getattr(embeddings, field, None)
        if isinstance(value, str) and value:
            return type(embeddings).__name__, value
    return type(embeddings).__name__, None


def declared_dimension(embeddings: Any) -> int | None:
    """The size of vector ``embeddings`` says it makes, or ``None`` when it does not say
    (most models: the size is then learnt from the vectors it makes).

    A store compares it with the size of its vectors when it is opened, so a model reopened
    with another ``dimensions=`` is refused at once rather than at its first search.

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> declared_dimension(DeterministicFakeEmbedding(size=8))
        8
    """
    underlying = getattr(embeddings, "underlying_embeddings", None)
    if underlying is not None and underlying is not embeddings:
        return declared_dimension(underlying)
    models = getattr(embeddings, "models", None)
    if isinstance(models, tuple) and models:  # CombinedEmbeddings: the parts joined
        parts = [declared_dimension(m) for m in models]
        return None if None in parts else sum(p for p in parts if p is not None)
    for name in _DIM_FIELDS:
        value = getattr(embeddings, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
