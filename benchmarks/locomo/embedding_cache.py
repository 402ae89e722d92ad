"""Embeddings cached on disk, keyed by model and text: a sweep embeds each text once.

The cache is a SQLite file outside the repository (``--cache DIR``, default
``/tmp/hybrid-cache``); it holds vectors of LoCoMo text and must never be committed.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_session_recall.backends.vectors.identity import embedding_identity


class CachedEmbeddings(Embeddings):
    """``inner`` with every vector kept in ``directory/embeddings.sqlite`` (queries too,
    unless ``cache_queries`` is false: then a query is embedded by the model each time)."""

    def __init__(self, inner: Embeddings, directory: Path, *, cache_queries: bool = True) -> None:
        self.inner = inner
        self.cache_queries = cache_queries
        self.model_name = embedding_identity(inner)
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(directory / "embeddings.sqlite", check_same_thread=False)
        self._conn.execute("CREATE TABLE IF NOT EXISTS v (k TEXT PRIMARY KEY, vec BLOB)")
        self._lock = threading.Lock()
        self.computed = 0

    def _key(self, kind: str, text: str) -> str:
        return hashlib.sha1(f"{self.model_name}\0{kind}\0{text}".encode()).hexdigest()

    def _get(self, keys: list[str]) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for k, blob in self._conn.execute(
                    f"SELECT k, vec FROM v WHERE k IN ({marks})", chunk
                ):
                    out[k] = np.frombuffer(blob, dtype=np.float32).tolist()
        return out

    def _put(self, pairs: list[tuple[str, list[float]]]) -> None:
        with self._lock:
            self._conn.executemany(
                "INSERT OR REPLACE INTO v VALUES (?, ?)",
                [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in pairs],
            )
            self._conn.commit()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        keys = [self._key("d", t) for t in texts]
        found = self._get(keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            vectors = self.inner.embed_documents([texts[i] for i in missing])
            self.computed += len(missing)
            self._put([(keys[i], v) for i, v in zip(missing, vectors, strict=True)])
            found.update((keys[i], v) for i, v in zip(missing, vectors, strict=True))
        return [found[k] for k in keys]

    def embed_query(self, text: str) -> list[float]:
        if not self.cache_queries:
            return self.inner.embed_query(text)
        key = self._key("q", text)
        found = self._get([key])
        if key not in found:
            found[key] = self.inner.embed_query(text)
            self.computed += 1
            self._put([(key, found[key])])
        return found[key]
