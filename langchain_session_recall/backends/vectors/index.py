"""The passage-vector index of one store: written at write time, read at search time.

A store opened with ``embeddings=`` holds a :class:`VectorIndex`. After each write the
windows of the sessions written are brought up to date (:meth:`VectorIndex.refresh`: only the
session's tail is read, only new or changed windows are embedded, in batches); inside
``store.transaction()`` that happens once, when the block ends, outside its transaction.
:meth:`VectorIndex.embed_missing` does the same for every session of an existing store.

Search: vectors are scored exactly (cosine, every window the filters allow) against the
query's vector in NumPy, over a matrix kept in memory per open store and reloaded when rows
are added or removed. Which windows a search may use is asked of the database with the same
session filters the lexical search applies, so tenants, sources, dates and excluded sessions
hold for dense candidates as for lexical ones.

Vectors a search cannot use (a NaN, another size, not bytes: :mod:`.health`) are refused at
write time (the window waits for the backfill) and skipped, counted and logged at search
time; ``check()`` lists them, and the backfill embeds their windows again.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings

from langchain_session_recall.backends.vectors import statements as vs
from langchain_session_recall.backends.vectors.combined import CombinedEmbeddings
from langchain_session_recall.backends.vectors.health import (
    WAITING,
    decode,
    encode,
    majority_dim,
    numpy,
    scan,
)
from langchain_session_recall.backends.vectors.identity import (
    declared_dimension,
    embedding_identity,
)
from langchain_session_recall.backends.vectors.windows import (
    DEFAULT_OVERLAP,
    DEFAULT_SIZE,
    Layouts,
    Window,
    WindowSpec,
    layout_text,
    parse_layouts,
    passage_windows,
)
from langchain_session_recall.errors import (
    EmbeddingMismatchError,
    InvalidArgumentError,
    NoVectorsError,
)
from langchain_session_recall.models import SearchFilters

if TYPE_CHECKING:
    from langchain_session_recall.backends.common.core import StoreCore

__all__ = ["SESSION_WINDOWS", "WINDOW_DECAY", "DenseHit", "DenseResult", "VectorIndex", "numpy"]

SESSION_WINDOWS = 3
"""Windows of a session that count towards its dense score (its best ones)."""
WINDOW_DECAY = 0.3
"""A session's dense score: its best window's similarity, plus ``WINDOW_DECAY`` times the
second's, plus its square times the third's. A session that holds the answer in several
places (a list question) gains a little over one that matches once (LoCoMo development
split: R@5 +0.3, any@5 +0.6 over the best window alone)."""

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""``progress(sessions done, sessions in all)``."""
PROGRESS_STEPS = 100
"""Steps a backfill with ``progress`` reports at least (when it has that many sessions)."""


@dataclass(frozen=True, slots=True)
class DenseHit:
    """A session for a query: its dense ``score`` (see :data:`WINDOW_DECAY`), its best
    window's cosine ``similarity`` and message ids."""

    session_id: str
    score: float
    similarity: float
    message_ids: tuple[int, ...]
    started_at: float


@dataclass(frozen=True, slots=True)
class DenseResult:
    """The sessions a dense search returns, and the lowest and highest score of every
    session in scope (the blend's min-max range); ``skipped``: windows in scope whose stored
    vector could not be used (refused at write time, or unreadable: see :mod:`.health`)."""

    hits: dict[str, DenseHit]
    low: float
    high: float
    skipped: int = 0


@dataclass
class _Matrix:
    version: tuple[int, int]
    ids: Any  # int64 row ids
    codes: Any  # int index into sessions, per row
    sessions: list[str]
    layouts: Any  # int index into the index's layouts, per row
    message_ids: list[str]  # JSON, per row
    vectors: Any  # float32 (rows, dim), unit length
    dim: int
    skipped: Any  # int64 ids of the rows left out (unusable vectors)


class VectorIndex:
    """Passage vectors of one store, made by one embedding model.

    Args:
        backend: The store.
        embeddings: Any LangChain ``Embeddings``.
        windows: The window layout ``(size, overlap)``, or several (``[(3, 1), (6, 1)]``):
            each message is then embedded in windows of each layout, and a session's dense
            score is the mean of its per-layout scores, each min-max scaled.
        batch_size: Windows per ``embed_documents`` call.
    """

    def __init__(
        self,
        backend: StoreCore,
        embeddings: Embeddings,
        *,
        windows: WindowSpec = (DEFAULT_SIZE, DEFAULT_OVERLAP),
        batch_size: int = 64,
    ) -> None:
        self.backend = backend
        self.embeddings = embeddings
        self.identity = embedding_identity(embeddings)
        self.declared_dim = declared_dimension(embeddings)
        """The size of vector the model says it makes (``None``: it does not say)."""
        self.layouts: Layouts = parse_layouts(windows)
        self._part = {layout_text((pair,)): n for n, pair in enumerate(self.layouts)}
        self._models = (
            len(embeddings.models)
            if isinstance(embeddings, CombinedEmbeddings) and embeddings.one_layout_each
            else 0
        )
        """Models of a one-layout-each combination (0: one model embeds every layout)."""
        self.batch_size = max(1, batch_size)
        self._lock = threading.Lock()
        self._matrix: _Matrix | None = None

    @classmethod
    def for_search(cls, backend: StoreCore, embeddings: Embeddings) -> VectorIndex:
        """The index of ``backend``'s vectors, searched with ``embeddings`` (a store opened
        without a model, or read-only): the window layout is the one recorded.

        Raises:
            NoVectorsError: the store holds no vectors.
            EmbeddingMismatchError: they were made by another model.
        """
        with backend._read() as conn:
            probe = cls(backend, embeddings)
            model, layout, _ = probe._recorded(conn)
        if model is None or layout is None:
            probe.check()  # raises NoVectorsError
        try:
            index = cls(backend, embeddings, windows=layout or "")
        except ValueError:
            index = probe
        index.check()
        return index

    @property
    def layout(self) -> str:
        """``"size/overlap"`` (``"3/1+6/1"`` for several), as recorded beside the vectors."""
        return layout_text(self.layouts)

    # ------------------------------------------------------------------ setup and checks

    def prepare(self, *, reindex: bool = False) -> None:
        """Create the table on a writable store and record the model; with ``reindex``, drop
        vectors of another model first. Raises :class:`EmbeddingMismatchError` when the
        store's vectors were made by another model or window layout."""
        if self._models and self._models != len(self.layouts):
            raise InvalidArgumentError(
                f"{self._models} models, one layout each, need as many window layouts, not "
                f"{self.layout}: e.g. embedding_window=[(3, 1), (6, 1)]"
            )
        d = self.backend.dialect
        with self.backend._write() as conn:
            for statement in vs.create_table(d):
                conn.execute(statement)
            recorded = self._recorded(conn)
            if not self._matches(recorded):
                if recorded.model is not None and not reindex:
                    raise self._mismatch(recorded)
                conn.execute(vs.clear(d))
                vs.set_meta(conn, d, vs.META_MODEL, self.identity)
                vs.set_meta(conn, d, vs.META_WINDOW, self.layout)
                conn.execute(vs.delete_meta(d), {"key": vs.META_DIM})
                recorded = vs.Recorded(self.identity, self.layout, None)
            if vs.read_meta(conn, d, vs.META_DIM) is None:
                # a new store's size is the model's own if it says; a store written before
                # the size was recorded gets the size of most of its vectors (docs/hybrid.md)
                dim = recorded.dim or self.declared_dim
                if dim is not None:
                    vs.set_meta(conn, d, vs.META_DIM, str(dim))
        self._matrix = None

    def _recorded(self, conn: Any) -> vs.Recorded:
        return vs.recorded_model(conn, self.backend.dialect) or vs.Recorded(None, None, None)

    def _matches(self, recorded: vs.Recorded) -> bool:
        """Whether the store's vectors are this model's: its identity, its window layout and,
        when the model says its size and the store knows its own, that size."""
        if (recorded.model, recorded.window) != (self.identity, self.layout):
            return False
        return None in (recorded.dim, self.declared_dim) or recorded.dim == self.declared_dim

    def _mismatch(self, recorded: vs.Recorded) -> EmbeddingMismatchError:
        def size(dim: int | None) -> str:
            return f", {dim} dimensions" if dim else ""

        return EmbeddingMismatchError(
            f"{self.backend.describe()} holds passage vectors of {recorded.model} "
            f"(windows {recorded.window}{size(recorded.dim)}), not of {self.identity} "
            f"(windows {self.layout}{size(self.declared_dim)}): search with that model, or "
            "rebuild the vectors for this one (reindex_embeddings=True, or "
            "`session-recall embed --reindex`)"
        )

    def check(self) -> None:
        """Raise unless the store holds vectors of this model and layout (before a search)."""
        with self.backend._read() as conn:
            recorded = self._recorded(conn)
        if recorded.model is None:
            raise NoVectorsError(
                f"{self.backend.describe()} holds no passage vectors: open it writable with "
                "embeddings= and call embed_missing() (or run `session-recall embed`), or "
                "search without embeddings"
            )
        if not self._matches(recorded):
            raise self._mismatch(recorded)

    # ------------------------------------------------------------------ writing

    def refresh(self, session_ids: Iterable[str], *, backfill: bool = False) -> int:
        """Embed the new or changed windows of these sessions; how many got a vector.

        Reads each session from its last stored window on (a recorder's turn re-embeds at
        most the one or two windows its message joins), embeds in batches of
        ``batch_size`` and writes each session's windows in one short transaction. A vector
        that is not finite or not of the store's size is refused (logged): its window is
        stored without one and waits for the backfill, which (``backfill``) embeds such
        windows again, each alone.
        """
        d = self.backend.dialect
        plans: list[tuple[str, str, int | None, list[Window]]] = []
        with self.backend._read() as conn:
            for sid in dict.fromkeys(session_ids):
                for size, overlap in self.layouts:
                    plan = self._plan(conn, sid, size, overlap, backfill=backfill)
                    if plan is not None:
                        plans.append(plan)
        texts = [w.text for *_, fresh in plans for w in fresh]
        vectors = self._embed(texts, [layout for _, layout, _, fresh in plans for _ in fresh])
        np = numpy() if vectors else None
        made = majority_dim((4 * _size(v), 1) for v in vectors)
        refused: list[Sequence[float]] = []
        dim: int | None = None
        at = 0
        for sid, layout, first, fresh in plans:
            mine, at = vectors[at : at + len(fresh)], at + len(fresh)
            with self.backend._write() as conn:
                dim = self._store_dim(conn, made)
                blobs = [encode(np, v, dim) for v in mine]
                refused += [v for v, blob in zip(mine, blobs, strict=True) if blob is None]
                key = {"sid": sid, "layout": layout}
                if first is not None:
                    conn.execute(vs.delete_windows_from(d), {**key, "start": first})
                conn.cursor().executemany(  # windows that waited, before the changed tail
                    vs.delete_window(d),
                    [
                        {**key, "start": w.start_id}
                        for w in fresh
                        if first is None or w.start_id < first
                    ],
                )
                conn.cursor().executemany(
                    vs.insert_window(d),
                    [
                        {
                            "session_id": sid,
                            "layout": layout,
                            "start_id": w.start_id,
                            "last_id": w.message_ids[-1],
                            "message_ids": _ids_json(w),
                            "embedding": WAITING if blob is None else blob,
                        }
                        for w, blob in zip(fresh, blobs, strict=True)
                    ],
                )
        if refused:
            self._warn_refused(refused, dim)
        return len(texts) - len(refused)

    def _store_dim(self, conn: Any, made: int | None) -> int | None:
        """The size of the store's vectors (in a write's transaction): recorded, else (its
        first vectors) the model's stated size or the size most of ``made`` vectors have,
        recorded now."""
        d = self.backend.dialect
        recorded = vs.read_meta(conn, d, vs.META_DIM)
        if recorded is not None and recorded.isdigit():
            return int(recorded)
        dim = vs.sample_dim(conn, d) or self.declared_dim or made
        if dim is not None:
            vs.set_meta(conn, d, vs.META_DIM, str(dim))
        return dim

    def _warn_refused(self, refused: Sequence[Sequence[float]], dim: int | None) -> None:
        sizes = sorted({_size(v) for v in refused} - {dim})
        other = (
            f"; {len([v for v in refused if _size(v) != dim])} of {', '.join(map(str, sizes))} "
            f"dimensions, not the store's {dim}: if the model now makes vectors of another "
            "size (a changed dimensions=), rebuild with reindex_embeddings=True or "
            "`session-recall embed --reindex`"
            if sizes
            else ""
        )
        logger.warning(
            "%d passage vector(s) from %s refused (not finite, or not of the store's size%s); "
            "the messages are stored, and their windows wait for embed_missing() or "
            "`session-recall embed`",
            len(refused),
            self.identity,
            other,
        )

    def _embed(self, texts: list[str], layouts: list[str]) -> list[Any]:
        """Vectors of ``texts`` (windows of ``layouts``), ``batch_size`` at a time; a
        :class:`CombinedEmbeddings` with ``one_layout_each`` embeds layout ``i`` with its
        model ``i`` alone."""
        keys = [self._part[layout] if self._models else -1 for layout in layouts]
        vectors: list[Any] = [None] * len(texts)
        for part in dict.fromkeys(keys):
            mine = [n for n, key in enumerate(keys) if key == part]
            for at in range(0, len(mine), self.batch_size):
                batch = [texts[n] for n in mine[at : at + self.batch_size]]
                if part < 0:
                    made = self.embeddings.embed_documents(batch)
                else:
                    made = self.embeddings.embed_documents_with(part, batch)  # type: ignore[attr-defined]
                for n, vector in zip(mine[at : at + self.batch_size], made, strict=True):
                    vectors[n] = vector
        return vectors

    def _plan(
        self, conn: Any, sid: str, size: int, overlap: int, *, backfill: bool = False
    ) -> tuple[str, str, int | None, list[Window]] | None:
        """What one session's windows of one layout need: ``(session, layout, first start
        of the tail to rewrite or None, windows to write)``, or ``None`` when they are up to date.
        ``backfill``: windows waiting for their vector are written too (each alone: the
        windows after one are not embedded again)."""
        d = self.backend.dialect
        layout = layout_text(((size, overlap),))
        key = {"sid": sid, "layout": layout}
        row = conn.execute(vs.last_window(d), key).fetchone()
        start = int(row[0]) if row else 0
        waiting = (
            {int(r[0]) for r in conn.execute(vs.waiting_windows(d), key)} if backfill else set()
        )
        start = min([start, *waiting])
        rows = conn.execute(vs.messages_from(d), {"sid": sid, "start": start}).fetchall()
        if not rows:
            return None
        windows = passage_windows(
            sid,
            rows[0][3] if isinstance(rows[0][3], str) else None,
            float(rows[0][4]) if rows[0][4] is not None else None,
            [(int(r[0]), str(r[1]), r[2] if isinstance(r[2], str) else None) for r in rows],
            size=size,
            overlap=overlap,
        )
        stored = {int(s): m for s, m in conn.execute(vs.windows_from(d), {**key, "start": start})}
        changed = [w.start_id for w in windows if stored.get(w.start_id) != _ids_json(w)]
        changed += set(stored) - {w.start_id for w in windows}  # messages gone
        first = min(changed, default=None)
        if first is None and not waiting:
            return None
        fresh = [
            w
            for w in windows
            if w.start_id in waiting or (first is not None and w.start_id >= first)
        ]
        return sid, layout, first, fresh

    def embed_missing(self, *, progress: Progress | None = None, chunk: int = 50) -> int:
        """Bring every session's windows up to date (a backfill); windows embedded.

        First, stored vectors a search cannot use (:mod:`.health`) are emptied, so that their
        windows are embedded again with the others waiting for a vector. Sessions go
        ``chunk`` at a time (one embedding batch per chunk; fewer in a store of under
        :data:`PROGRESS_STEPS` chunks, so that ``progress``, called after each, moves at least
        that many times); killed half-way, a second run embeds only what is still missing.
        """
        self._empty_broken()
        with self.backend._read() as conn:
            ids = [r[0] for r in conn.execute(vs.sessions_with_messages(self.backend.dialect))]
        if progress is not None:  # a long first chunk would show nothing for minutes
            chunk = max(1, min(chunk, -(-len(ids) // PROGRESS_STEPS)))
        done = 0
        for at in range(0, len(ids), chunk):
            done += self.refresh(ids[at : at + chunk], backfill=True)
            if progress is not None:
                progress(min(at + chunk, len(ids)), len(ids))
        return done

    def _empty_broken(self) -> None:
        """Stored vectors that cannot be read (not finite, another size, not bytes) made to
        wait for the backfill like a vector refused at write time."""
        d = self.backend.dialect
        with self.backend._read() as conn:
            dim = self._recorded(conn).dim
            health = scan(conn, d, dim)
        if not health.ids:
            return
        with self.backend._write() as conn:
            conn.cursor().executemany(
                vs.mark_waiting(d), [{"id": i, "empty": WAITING} for i in health.ids]
            )
        logger.warning(
            "%d stored passage vector(s) could not be read (%s): their windows are embedded again",
            len(health.ids),
            health.describe(dim),
        )

    # ------------------------------------------------------------------ searching

    def _load(self) -> _Matrix | None:
        d = self.backend.dialect
        with self.backend._read() as conn:
            count, top = conn.execute(vs.version(d)).fetchone()
            version = (int(count), int(top))
            with self._lock:
                if self._matrix is not None and self._matrix.version == version:
                    return self._matrix
            rows = conn.execute(vs.all_vectors(d)).fetchall()
            recorded = self._recorded(conn)
        np = numpy()
        if not rows:
            return None
        dim = recorded.dim or 0  # 0: no stored vector has a usable size
        kept, vectors, health = decode(np, [(n, r[4]) for n, r in enumerate(rows)], dim)
        if health.broken:
            logger.warning(
                "%s: %d passage vector(s) cannot be read (%s) and are left out of hybrid "
                "searches, the other windows are scored; `session-recall check` counts them "
                "and embed_missing() (or `session-recall embed`) embeds their windows again",
                self.backend.describe(),
                health.broken,
                health.describe(dim),
            )
        skipped = [int(rows[n][0]) for n in (*health.ids, *health.waiting_ids)]
        rows = [rows[n] for n in kept]
        codes: dict[str, int] = {}
        layouts = {layout_text((pair,)): n for n, pair in enumerate(self.layouts)}
        matrix = _Matrix(
            version=version,
            ids=np.array([int(r[0]) for r in rows], dtype=np.int64),
            codes=np.array([codes.setdefault(r[1], len(codes)) for r in rows], dtype=np.int64),
            sessions=list(codes),
            layouts=np.array([layouts.get(r[2], -1) for r in rows], dtype=np.int64),
            message_ids=[r[3] for r in rows],
            vectors=vectors,
            dim=dim,
            skipped=np.array(skipped, dtype=np.int64),
        )
        with self._lock:
            self._matrix = matrix
        return matrix

    def search(
        self,
        query: Sequence[float],
        *,
        filters: SearchFilters,
        limit: int,
        include: Iterable[str] = (),
    ) -> DenseResult:
        """The ``limit`` sessions whose best window is closest to ``query``, plus the
        sessions of ``include`` (the lexical candidates) that the filters allow. Stored
        vectors that cannot be used are left out (``skipped``: those in scope).

        Raises:
            EmbeddingMismatchError: ``query`` is not of the size of the store's vectors (the
                model was reopened with another ``dimensions=``, or is another model).
        """
        np = numpy()
        matrix = self._load()
        if matrix is None:
            return DenseResult({}, 0.0, 0.0)
        q = self._question(np, query, matrix.dim)
        statement, params = vs.allowed_rows(self.backend.dialect, filters)
        with self.backend._read() as conn:
            started = {int(r[0]): float(r[1] or 0.0) for r in conn.execute(statement, params)}
        allowed = np.fromiter(started, dtype=np.int64)
        skipped = int(np.isin(matrix.skipped, allowed).sum())
        rows = np.flatnonzero(np.isin(matrix.ids, allowed))
        if rows.size == 0 or q is None:
            return DenseResult({}, 0.0, 0.0, skipped)
        n_sessions = len(matrix.sessions)
        total = np.zeros(n_sessions)
        present = np.zeros(n_sessions, dtype=bool)
        best_row = np.full(n_sessions, -1, dtype=np.int64)
        best_sim = np.full(n_sessions, -np.inf)
        for layout in range(len(self.layouts)):
            mine = rows[matrix.layouts[rows] == layout]
            if mine.size == 0:
                continue
            sims = matrix.vectors[mine] @ q
            # rows grouped by session, best first within each: a row's rank in its session
            order = np.lexsort((-sims, matrix.codes[mine]))
            codes = matrix.codes[mine][order]
            sessions, starts = np.unique(codes, return_index=True)
            sizes = np.diff(np.append(starts, codes.size))
            rank = np.arange(codes.size) - np.repeat(starts, sizes)
            decay = np.where(rank < SESSION_WINDOWS, WINDOW_DECAY ** rank.astype(np.float64), 0.0)
            scores = np.bincount(np.searchsorted(sessions, codes), weights=decay * sims[order])
            low, high = scores.min(), scores.max()
            # each layout scaled to 0-1 over the sessions in scope, then averaged
            total[sessions] += (scores - low) / (high - low) if high > low else 0.0
            present[sessions] = True
            top = mine[order][starts]
            top_sims = sims[order][starts]
            better = top_sims > best_sim[sessions]
            best_row[sessions[better]] = top[better]
            best_sim[sessions[better]] = top_sims[better]
        found = np.flatnonzero(present)
        if found.size == 0:
            return DenseResult({}, 0.0, 0.0, skipped)
        scores = total[found] / len(self.layouts)
        by_score = np.argsort(-scores, kind="stable")
        wanted = set(include)
        hits: dict[str, DenseHit] = {}
        for n, i in enumerate(by_score.tolist()):
            code = int(found[i])
            sid = matrix.sessions[code]
            if n < limit or sid in wanted:
                row = int(best_row[code])
                hits[sid] = DenseHit(
                    sid,
                    float(scores[i]),
                    float(best_sim[code]),
                    tuple(json.loads(matrix.message_ids[row])),
                    started[int(matrix.ids[row])],
                )
        return DenseResult(hits, float(scores.min()), float(scores.max()), skipped)

    def _question(self, np: Any, query: Sequence[float], dim: int) -> Any:
        """The question's vector, unit length; ``None`` (logged) when it is not finite.

        Raises:
            EmbeddingMismatchError: it is not of the store's size ``dim`` (0: unknown).
        """
        q = np.asarray(query, dtype=np.float32).ravel()
        if dim and q.size != dim:
            raise self._size_mismatch(q.size, dim)
        norm = np.linalg.norm(q)
        if not (np.isfinite(q).all() and np.isfinite(norm)):
            logger.warning(
                "the question's vector from %s is not finite (NaN or infinity): this search "
                "ranks by its words alone",
                self.identity,
            )
            return None
        return q / (norm or 1.0)

    def _size_mismatch(self, size: int, dim: int) -> EmbeddingMismatchError:
        return EmbeddingMismatchError(
            f"{self.identity} made a question vector of {size} dimensions, and "
            f"{self.backend.describe()} holds passage vectors of {dim}: the model now makes "
            "vectors of another size (another dimensions=, or another model under the same "
            "name). Search with the model as it was, or rebuild the vectors for this one "
            "(reindex_embeddings=True, or `session-recall embed --reindex`)"
        )


def _ids_json(window: Window) -> str:
    return json.dumps(list(window.message_ids), separators=(",", ":"))


def _size(vector: Sequence[float]) -> int:
    try:
        return len(vector)
    except TypeError:
        return 0
