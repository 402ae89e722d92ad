"""The systems measured: the library through its public API, and the issue's three baselines.

Each system is built once per conversation (:class:`Built`: a ranker plus what building cost)
from a :class:`~benchmarks.locomo.data.Conversation`.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.locomo.data import Conversation
from benchmarks.locomo.metrics import Ranker
from langchain_session_recall import SessionBackend, SessionRecallRetriever, SessionStore
from langchain_session_recall.backends.sqlite.fts import to_fts5
from langchain_session_recall.backends.vectors.windows import window_ranges
from langchain_session_recall.core.query import parse_query
from langchain_session_recall.errors import EmptyQueryError

K = 5


@dataclass
class Built:
    rank: Ranker
    index_bytes: int  # the database holding the index (all tables), after ingest
    ingest_seconds: float
    close: Callable[[], None] | None = None  # releases what the system holds (a schema)


System = Callable[[Conversation], Built]


_FTS_WORD = re.compile(r"[^\W_]+")


def relaxed_fts(question: str) -> str | None:
    """The library's relaxed reading (content words, OR) as an FTS5 expression.

    Example:
        >>> relaxed_fts("the CORS error?"), relaxed_fts("?")
        ('"CORS" OR "error"', None)
    """
    try:
        return to_fts5(parse_query(question), "relaxed")
    except EmptyQueryError:
        return None


def db_bytes(conn: sqlite3.Connection) -> int:
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    return int(page_size) * int(conn.execute("PRAGMA page_count").fetchone()[0])


# --------------------------------------------------------------------------- the library


def load_store(conv: Conversation, store: SessionBackend | None = None) -> SessionBackend:
    """The protocol's store: one session per LoCoMo session, written through the public API
    (into ``store``, an empty store of either backend; default an in-memory SQLite one)."""
    store = SessionStore(":memory:") if store is None else store
    for s in conv.sessions:
        store.add_session(s.id, started_at=s.started_at)
        store.add_messages(
            s.id,
            [{"role": t.role, "content": t.content, "timestamp": t.timestamp} for t in s.turns],
        )
    return store


def library(conv: Conversation, store: SessionBackend | None = None) -> Built:
    """The library through ``SessionRecallRetriever`` (on ``store``: default in-memory SQLite)."""
    t0 = time.perf_counter()
    store = load_store(conv, store)
    elapsed = time.perf_counter() - t0
    # The questions are asked after the conversation: relative time words ("last week") refer
    # to a day after its last session, not to the day the benchmark runs.
    now = max(s.started_at for s in conv.sessions) + 86_400.0
    retriever = SessionRecallRetriever(store=store, k=K, now=now)

    def rank(question: str) -> list[str]:
        try:
            return [d.metadata["session_id"] for d in retriever.invoke(question)]
        except EmptyQueryError:
            return []

    return Built(rank, int(store.stats()["size_bytes"]), elapsed)


# --------------------------------------------------------------------------- (a) OR keywords


def or_keywords(conv: Conversation) -> Built:
    """(a) The question's content words joined with OR (the seed's advice to agents: "join
    keywords with OR"), FTS5 ``unicode61`` over messages, the 50 best message rows, sessions in
    order of their first row. Content words are the library's relaxed reading (stop words out);
    joining every word instead scores 55.2 / 72.4 / 80.4 / 85.1 on dev."""
    t0 = time.perf_counter()
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE m USING fts5(session_id UNINDEXED, content)")
    conn.executemany(
        "INSERT INTO m(session_id, content) VALUES (?, ?)",
        [(s.id, t.content) for s in conv.sessions for t in s.turns],
    )
    conn.commit()
    elapsed = time.perf_counter() - t0

    def rank(question: str) -> list[str]:
        expression = relaxed_fts(question)
        if expression is None:
            return []
        rows = conn.execute(
            "SELECT session_id FROM m WHERE m MATCH ? ORDER BY rank LIMIT 50", (expression,)
        ).fetchall()
        return list(dict.fromkeys(r[0] for r in rows))

    return Built(rank, db_bytes(conn), elapsed)


# --------------------------------------------------------------------------- (b) BM25 sessions


def lower_words(text: str) -> list[str]:
    """Lower-cased letter/digit runs (the word split the FTS5 indexes use)."""
    return _FTS_WORD.findall(text.lower())


def bm25_sessions(*, words: bool = True) -> System:
    """(b) LangChain's ``BM25Retriever`` (``rank_bm25``) over one Document per session;
    ``words=False`` keeps its default preprocessing (``str.split``: case and punctuation kept)."""

    def build(conv: Conversation) -> Built:
        from langchain_community.retrievers import BM25Retriever
        from langchain_core.documents import Document

        t0 = time.perf_counter()
        docs = [
            Document(page_content="\n".join(t.content for t in s.turns), metadata={"id": s.id})
            for s in conv.sessions
        ]
        options = {"preprocess_func": lower_words} if words else {}
        retriever = BM25Retriever.from_documents(docs, k=K, **options)
        elapsed = time.perf_counter() - t0

        def rank(question: str) -> list[str]:
            return [d.metadata["id"] for d in retriever.invoke(question)]

        return Built(rank, 0, elapsed)

    return build


# --------------------------------------------------------------------------- (c) windows


def window_index(size: int = 6, overlap: int = 1, *, with_date: bool = True) -> System:
    """(c) Plain FTS5 (porter) over windows of adjacent turns, each prefixed with the session's
    date text; a session is ranked by its best window."""

    def build(conv: Conversation) -> Built:
        t0 = time.perf_counter()
        conn = sqlite3.connect(":memory:")
        conn.execute(
            "CREATE VIRTUAL TABLE w USING fts5(session_id UNINDEXED, content, "
            "tokenize='porter unicode61 remove_diacritics 2')"
        )
        rows = []
        for s in conv.sessions:
            for a, b in window_ranges(len(s.turns), size, overlap):
                body = "\n".join(t.content for t in s.turns[a:b])
                rows.append((s.id, f"{s.date_text}\n{body}" if with_date else body))
        conn.executemany("INSERT INTO w(session_id, content) VALUES (?, ?)", rows)
        conn.commit()
        elapsed = time.perf_counter() - t0

        def rank(question: str) -> list[str]:
            expression = relaxed_fts(question)
            if expression is None:
                return []
            out: dict[str, None] = {}
            for (sid,) in conn.execute(
                "SELECT session_id FROM w WHERE w MATCH ? ORDER BY rank", (expression,)
            ):
                out.setdefault(sid, None)
                if len(out) >= K:
                    break
            return list(out)

        return Built(rank, db_bytes(conn), elapsed)

    return build


BASELINES: dict[str, System] = {
    "(a) OR keywords, FTS5 unicode61": or_keywords,
    "(b) rank_bm25 over sessions (lower-cased words)": bm25_sessions(),
    "(b') rank_bm25 over sessions (BM25Retriever default split)": bm25_sessions(words=False),
    "(c) FTS5 porter, 6-turn windows + date": window_index(6, 1),
}
