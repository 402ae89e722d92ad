"""What a store does with an embedding model: the glue between its writes and its
:class:`~langchain_session_recall.backends.vectors.index.VectorIndex` (a mixin of
``SessionBackend``).

A write's vectors are made after its transaction commits, never inside it (an embedding call
may take seconds; the write lock must not wait for it). If the model fails, the messages stay
stored, a warning is logged, and :meth:`StoreVectors.embed_missing` adds the missing vectors
later.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from langchain_session_recall.errors import InvalidArgumentError

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from langchain_session_recall.backends.vectors.index import Progress, VectorIndex
    from langchain_session_recall.backends.vectors.windows import WindowSpec

__all__ = ["StoreVectors", "search_index"]

logger = logging.getLogger(__name__)


class StoreVectors:
    """Passage vectors of a store opened with ``embeddings=`` (see ``docs/hybrid.md``)."""

    vectors: VectorIndex | None = None
    """The store's passage-vector index, or ``None`` (opened without ``embeddings``)."""

    def _open_vectors(
        self, embeddings: Embeddings | None, window: WindowSpec, reindex: bool
    ) -> None:
        """At the end of a store's ``__init__``: its vector index, else the store closed."""
        if embeddings is None:
            return
        try:
            self.enable_embeddings(embeddings, window=window, reindex=reindex)
        except BaseException:
            self.close()  # type: ignore[attr-defined]
            raise

    def stored_embedding_model(self) -> str | None:
        """The identity (``module.Class:model``) of the model the store's passage vectors
        were made with, if it holds at least one vector; ``None``: a lexical store. Reads the
        store only (two short queries): no model is loaded.

        Example:
            >>> from langchain_core.embeddings import DeterministicFakeEmbedding
            >>> from langchain_session_recall import SessionStore
            >>> store = SessionStore(":memory:")
            >>> _ = store.add_session("s1")
            >>> _ = store.add_messages("s1", [{"role": "user", "content": "hi"}])
            >>> before = store.stored_embedding_model()
            >>> store.enable_embeddings(DeterministicFakeEmbedding(size=8))
            >>> _ = store.embed_missing()
            >>> before, store.stored_embedding_model()
            (None, 'langchain_core.embeddings.fake.DeterministicFakeEmbedding:8')
        """
        from langchain_session_recall.backends.common.core import StoreCore
        from langchain_session_recall.backends.vectors import statements as vs

        assert isinstance(self, StoreCore)
        with self._read() as conn:
            recorded = vs.recorded_model(conn, self.dialect)
            if recorded is None or recorded.model is None:
                return None
            if conn.execute(vs.any_vector(self.dialect)).fetchone() is None:
                return None
        return recorded.model

    @property
    def embeddings(self) -> Embeddings | None:
        """The embedding model the store writes vectors with (``None``: lexical only)."""
        return self.vectors.embeddings if self.vectors is not None else None

    def embed_missing(self, *, progress: Progress | None = None) -> int:
        """Embed every window the store lacks a vector for (a backfill); how many.

        ``progress(sessions done, sessions in all)`` is called as it goes. Safe to stop and
        run again: it carries on where it stopped.

        Raises:
            InvalidArgumentError: the store was opened without ``embeddings``.

        Example:
            >>> from langchain_core.embeddings import DeterministicFakeEmbedding
            >>> from langchain_session_recall import SessionStore
            >>> store = SessionStore(":memory:")
            >>> _ = store.add_session("s1")
            >>> _ = store.add_messages("s1", [{"role": "user", "content": "hi"}])
            >>> store.enable_embeddings(DeterministicFakeEmbedding(size=8))
            >>> store.embed_missing(), store.embed_missing()
            (1, 0)
        """
        if self.vectors is None:
            raise InvalidArgumentError(
                "the store has no embedding model: open it with embeddings=... "
                "(or call enable_embeddings(model) first)"
            )
        return self.vectors.embed_missing(progress=progress)

    async def aembed_missing(self, *, progress: Progress | None = None) -> int:
        """Async :meth:`embed_missing`: the backfill runs in LangChain's executor (the store
        is blocking, like the model's batched calls it makes), the event loop stays free.

        Example:
            >>> import asyncio
            >>> from langchain_core.embeddings import DeterministicFakeEmbedding
            >>> from langchain_session_recall import SessionStore
            >>> store = SessionStore(":memory:")
            >>> _ = store.add_session("s1")
            >>> _ = store.add_messages("s1", [{"role": "user", "content": "hi"}])
            >>> store.enable_embeddings(DeterministicFakeEmbedding(size=8))
            >>> asyncio.run(store.aembed_missing()), store.embed_missing()
            (1, 0)
        """
        from langchain_core.runnables.config import run_in_executor

        return await run_in_executor(None, lambda: self.embed_missing(progress=progress))

    def enable_embeddings(
        self,
        embeddings: Embeddings,
        *,
        window: WindowSpec | None = None,
        reindex: bool = False,
    ) -> None:
        """Write passage vectors with ``embeddings`` from now on (what ``embeddings=`` at
        opening does), in windows of ``window`` (``(size, overlap)``, several as a list,
        default 3/1). Existing messages get theirs from :meth:`embed_missing`.

        Raises:
            EmbeddingMismatchError: the store holds vectors of another model or window
                layout and ``reindex`` is false.
        """
        from langchain_session_recall.backends.common.core import StoreCore
        from langchain_session_recall.backends.vectors.index import VectorIndex
        from langchain_session_recall.backends.vectors.windows import DEFAULT_OVERLAP, DEFAULT_SIZE

        assert isinstance(self, StoreCore)
        index = VectorIndex(self, embeddings, windows=window or (DEFAULT_SIZE, DEFAULT_OVERLAP))
        if not self.read_only:  # a read-only store is searched with the vectors it has
            index.prepare(reindex=reindex)
        self._pending_vectors: set[str] = set()
        self._pending_lock = threading.Lock()
        self.vectors = index

    def _clearing_messages(self, conn: Any, session_id: str) -> None:
        """The session's windows go with its messages (vectors of a store opened without a
        model too: they would name messages that no longer exist)."""
        from langchain_session_recall.backends.common.core import StoreCore
        from langchain_session_recall.backends.vectors import statements as vs

        assert isinstance(self, StoreCore)
        d = self.dialect
        if conn.execute(vs.table_exists(d)).fetchone()[0]:
            conn.execute(vs.delete_session_windows(d), {"sid": session_id})

    def _wrote(self, session_ids: Iterable[str], *, in_block: bool) -> None:
        """After a write committed (or inside a block: when the block ends)."""
        if self.vectors is None:
            return
        with self._pending_lock:
            self._pending_vectors.update(session_ids)
        if not in_block:
            self._flush_vectors()

    def _flush_vectors(self) -> None:
        if self.vectors is None:
            return
        with self._pending_lock:
            pending, self._pending_vectors = self._pending_vectors, set()
        if not pending:
            return
        try:
            self.vectors.refresh(sorted(pending))
        except Exception as exc:
            logger.warning(
                "passage vectors of %d session(s) not written (%s: %s); the messages are "
                "stored, and embed_missing() or `session-recall embed` adds the vectors later",
                len(pending),
                type(exc).__name__,
                exc,
            )


def search_index(
    store: StoreVectors, embeddings: Embeddings, cached: VectorIndex | None = None
) -> VectorIndex:
    """The index a hybrid search with ``embeddings`` reads, checked: the store's own when its
    vectors are that model's; else ``cached`` (a caller's, from an earlier search) when it was
    made for the same model object; else one made for it (a store opened without a model, or
    read-only: :meth:`~langchain_session_recall.backends.vectors.index.VectorIndex.for_search`).

    Raises:
        NoVectorsError: the store holds no vectors.
        EmbeddingMismatchError: they were made by another model.
    """
    from langchain_session_recall.backends.common.core import StoreCore
    from langchain_session_recall.backends.vectors.identity import embedding_identity
    from langchain_session_recall.backends.vectors.index import VectorIndex

    index = store.vectors
    if index is None or index.identity != embedding_identity(embeddings):
        if cached is None or cached.embeddings is not embeddings:
            assert isinstance(store, StoreCore)
            cached = VectorIndex.for_search(store, embeddings)
        index = cached
    index.check()
    return index
