"""Which stored passage vectors a search can use: the one rule, for the write, the search, the
backfill and ``check()``.

A usable vector is a byte string of ``dim`` little-endian float32 numbers, every one finite.
A NaN or an infinity would make every cosine it enters NaN, and the min-max scaling of a
search over NaN gives every session a dense part of 0; a vector of another size cannot be
stacked with the others. So the write refuses such a vector (the window is stored with an
empty vector, :data:`WAITING`, which the backfill embeds again), and the search and the check
skip and count whatever is stored that way anyway (another client, an older version, a
corrupt page).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_session_recall.backends import sql
from langchain_session_recall.backends.vectors import statements as vs
from langchain_session_recall.backends.vectors.statements import majority_dim
from langchain_session_recall.errors import MissingFeatureError

__all__ = [
    "WAITING",
    "VectorHealth",
    "decode",
    "encode",
    "majority_dim",
    "numpy",
    "problems",
    "scan",
]

SCAN_ROWS = 2_000
"""Stored vectors read at a time by :func:`scan` (its memory stays bounded)."""

WAITING = b""
"""The stored vector of a window whose vector was refused at write time: the backfill
(``embed_missing``) embeds it again; a search skips it."""


@dataclass
class VectorHealth:
    """Stored vectors a search cannot use, by reason (``ids``: their rows)."""

    waiting: int = 0
    """Refused at write time (not finite, or of another size): left to the backfill."""
    not_finite: int = 0
    """Holding a NaN or an infinity."""
    wrong_size: int = 0
    """Of another size than the store's vectors."""
    unreadable: int = 0
    """Not a byte string at all."""
    ids: list[int] = field(default_factory=list)
    """The rows of the broken ones (not finite, another size, not bytes)."""
    waiting_ids: list[int] = field(default_factory=list)

    @property
    def skipped(self) -> int:
        """Every vector a search leaves out."""
        return self.waiting + self.broken

    @property
    def broken(self) -> int:
        """Vectors that are stored but cannot be read (not the ones left to the backfill)."""
        return self.not_finite + self.wrong_size + self.unreadable

    def add(self, other: VectorHealth) -> None:
        self.waiting += other.waiting
        self.not_finite += other.not_finite
        self.wrong_size += other.wrong_size
        self.unreadable += other.unreadable
        self.ids.extend(other.ids)
        self.waiting_ids.extend(other.waiting_ids)

    def describe(self, dim: int | None) -> str:
        """``"2 not finite (NaN or infinity), 1 not of 64 dimensions"``: the broken ones."""
        size = f"{dim} dimensions" if dim else "the store's size"
        parts = [
            (self.not_finite, "not finite (NaN or infinity)"),
            (self.wrong_size, f"not of {size}"),
            (self.unreadable, "not a byte string"),
        ]
        return ", ".join(f"{n} {what}" for n, what in parts if n)


def encode(np: Any, vector: Sequence[float], dim: int | None) -> bytes | None:
    """``vector`` as unit-length little-endian float32 bytes, or ``None`` when it is refused:
    a number not finite, or not ``dim`` numbers (``None``: any size)."""
    try:
        v = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if v.ndim != 1 or v.size == 0 or (dim is not None and v.size != dim):
        return None
    if not np.isfinite(v).all():
        return None
    norm = float(np.linalg.norm(v))
    if not np.isfinite(norm):  # finite numbers whose squares overflow
        return None
    unit = (v / norm if norm > 0 else v).astype("<f4")
    if not np.isfinite(unit).all():
        return None
    return bytes(unit.tobytes())


def decode(
    np: Any, rows: Sequence[tuple[int, Any]], dim: int | None
) -> tuple[list[int], Any, VectorHealth]:
    """The usable vectors of ``(row id, stored bytes)`` rows: their row ids, the vectors as a
    ``(n, dim)`` float32 matrix, and what was left out. ``dim`` ``None``: the store has no
    size yet, so no stored vector is usable.

    Example:
        >>> import numpy as np
        >>> good = np.ones(2, dtype="<f4").tobytes()
        >>> nan = np.array([1, np.nan], dtype="<f4").tobytes()
        >>> rows = [(1, good), (2, b""), (3, good * 2), (4, "text"), (5, nan)]
        >>> ids, vectors, health = decode(np, rows, 2)
        >>> ids, vectors.shape, health.waiting_ids, health.ids
        ([1], (1, 2), [2], [3, 4, 5])
        >>> health.describe(2)
        '1 not finite (NaN or infinity), 1 not of 2 dimensions, 1 not a byte string'
    """
    health = VectorHealth()
    sized: list[tuple[int, bytes]] = []
    for row_id, blob in rows:
        if isinstance(blob, memoryview):
            blob = blob.tobytes()
        if not isinstance(blob, (bytes, bytearray)):
            health.unreadable += 1
        elif len(blob) == 0:
            health.waiting += 1
            health.waiting_ids.append(int(row_id))
            continue
        elif dim is None or len(blob) != 4 * dim:
            health.wrong_size += 1
        else:
            sized.append((int(row_id), bytes(blob)))
            continue
        health.ids.append(int(row_id))
    width = dim or 0
    matrix = np.frombuffer(b"".join(b for _, b in sized), dtype="<f4").reshape(-1, width)
    finite = np.isfinite(matrix).all(axis=1)
    if not finite.all():
        health.not_finite += int((~finite).sum())
        health.ids += [sized[n][0] for n in np.flatnonzero(~finite).tolist()]
        matrix = matrix[finite]
    return [i for (i, _), ok in zip(sized, finite.tolist(), strict=True) if ok], matrix, health


def scan(conn: Any, d: sql.Dialect, dim: int | None) -> VectorHealth:
    """Every stored vector read (:data:`SCAN_ROWS` at a time) and judged by :func:`decode`
    against the store's size ``dim``: what ``check()`` reports and the backfill repairs."""
    np = numpy()
    health = VectorHealth()
    cursor = conn.execute(vs.row_vectors(d))
    while rows := cursor.fetchmany(SCAN_ROWS):
        health.add(decode(np, rows, dim)[2])
    return health


def problems(conn: Any, d: sql.Dialect) -> list[str] | None:
    """What ``check()`` says of the store's passage vectors: a line per kind of vector a
    hybrid search cannot use; ``None`` when the store has no vector table (or NumPy, which
    reads them, is not installed)."""
    recorded = vs.recorded_model(conn, d)
    try:
        numpy()
    except MissingFeatureError:  # pragma: no cover - depends on the environment
        recorded = None  # a store read without the hybrid extra: its vectors are not checked
    if recorded is None:
        return None
    health = scan(conn, d, recorded.dim)
    out = []
    if health.broken:
        out.append(
            f"{health.broken} passage vector(s) cannot be read ({health.describe(recorded.dim)})"
            ": hybrid searches leave their windows out; embed_missing() or `session-recall "
            "embed` embeds them again"
        )
    if health.waiting:
        out.append(
            f"{health.waiting} passage window(s) have no vector (the model's was refused at "
            "write time: not finite, or not of the store's size): embed_missing() or "
            "`session-recall embed` embeds them again"
        )
    return out


def numpy() -> Any:
    """NumPy, or a :class:`MissingFeatureError` that says which extra brings it."""
    try:
        import numpy as np
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingFeatureError(
            "hybrid recall needs numpy: pip install 'langchain-session-recall[hybrid]'"
        ) from exc
    return np
