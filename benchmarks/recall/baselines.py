"""Baselines measured in the same run as our retriever.

* ``reference``: the behaviour we improve on (Hermes ``session_search``): the query sanitized
  into FTS5 barewords with implicit AND, 50 message rows ordered by ``rank``, first hit per
  root session. It runs on a Hermes-layout index (default ``unicode61`` tokenizer, no
  stemming), as Hermes builds it.
* ``or_keywords``: the same, with the words joined by ``OR``.
* ``bm25_sessions``: LangChain's ``BM25Retriever`` (``rank_bm25``) over one Document per root
  session (the text of its whole chain), default whitespace preprocessing.

Each baseline is a callable ``question -> ranked root session ids``.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable

from benchmarks.recall.dataset import Dataset, SessionSpec

Ranker = Callable[[str], list[str]]

_WORD = re.compile(r"\w+(?:[.\-]\w+)*")


def sanitize(text: str) -> list[str]:
    """FTS5-safe terms: words, with dotted/hyphenated compounds kept as quoted phrases.

    Upper-case ``AND``/``OR``/``NOT`` between two words stay operators, as in Hermes.
    """
    terms: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        if word in ("AND", "OR", "NOT"):
            if terms and terms[-1] not in ("AND", "OR", "NOT"):
                terms.append(word)
            continue
        parts = [p for p in re.split(r"[.\-_]", word) if p]
        if parts:
            terms.append('"' + " ".join(parts) + '"')
    while terms and terms[-1] in ("AND", "OR", "NOT"):
        terms.pop()
    return terms


def _roots(sessions: Iterable[SessionSpec]) -> dict[str, str]:
    parent = {s.id: s.parent_session_id for s in sessions}
    out = {}
    for sid in parent:
        cur = sid
        while parent.get(cur) is not None:
            cur = parent[cur]  # type: ignore[assignment]
        out[sid] = cur
    return out


class HermesIndex:
    """A Hermes-layout FTS5 index over the dataset (content, tool name, tool-call JSON)."""

    def __init__(self, dataset: Dataset) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE messages_fts USING fts5(session_id UNINDEXED, content, "
            "tool_name, tool_calls)"
        )
        rows = []
        for s in dataset.sessions:
            for m in s.messages:
                calls = str(m.get("tool_calls") or "")
                rows.append((s.id, m.get("content") or "", m.get("tool_name") or "", calls))
        self.conn.executemany(
            "INSERT INTO messages_fts(session_id, content, tool_name, tool_calls) "
            "VALUES (?, ?, ?, ?)",
            rows,
        )
        self.roots = _roots(dataset.sessions)

    def ranker(self, joiner: str, limit: int = 50) -> Ranker:
        def rank(question: str) -> list[str]:
            terms = sanitize(question)
            if joiner != " ":  # every word joined by the joiner: the user's operators go
                terms = [t for t in terms if t not in ("AND", "OR", "NOT")]
            if not terms:
                return []
            rows = self.conn.execute(
                "SELECT session_id FROM messages_fts WHERE messages_fts MATCH ? "
                "ORDER BY rank LIMIT ?",
                (joiner.join(terms), limit),
            ).fetchall()
            return list(dict.fromkeys(self.roots[r[0]] for r in rows))

        return rank


def bm25_ranker(dataset: Dataset, k: int = 10) -> Ranker:
    """``BM25Retriever`` over one Document per root session."""
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document

    roots = _roots(dataset.sessions)
    texts: dict[str, list[str]] = {}
    for s in dataset.sessions:
        bucket = texts.setdefault(roots[s.id], [s.title])
        for m in s.messages:
            bucket.append(m.get("content") or "")
            if m.get("tool_name"):
                bucket.append(str(m["tool_name"]))
    docs = [Document(page_content="\n".join(v), metadata={"id": k_}) for k_, v in texts.items()]
    retriever = BM25Retriever.from_documents(docs, k=k)

    def rank(question: str) -> list[str]:
        return [d.metadata["id"] for d in retriever.invoke(question)]

    return rank


def baselines(dataset: Dataset) -> dict[str, Ranker]:
    """The three baselines, by name."""
    index = HermesIndex(dataset)
    return {
        "reference": index.ranker(" "),
        "or_keywords": index.ranker(" OR "),
        "bm25_sessions": bm25_ranker(dataset),
    }
