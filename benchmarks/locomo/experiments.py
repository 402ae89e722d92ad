"""Prototypes for issue 14 (dev split only): passage windows, date words, a temporal prior.

Everything is built beside the library, from its pure parts and SQLite FTS5, so that a winning
design can be ported into both backends:

* :class:`WindowIndex` indexes windows of adjacent turns (FTS5, the library's tokenizer) and
  answers ``match_messages`` like a store, so the library's own pipeline
  (:func:`~langchain_session_recall.search.pipeline.search_sessions`: per-term matching, typo
  correction, :func:`~langchain_session_recall.search.ranking.rank_by_terms`) can rank sessions
  by windows instead of messages;
* the message hits (the library's store, through its public ``match_messages``) stay beside
  the window hits: formulas score sessions from either or both (:data:`FORMULAS`);
* :func:`with_prior` multiplies session scores by a soft temporal prior from
  :mod:`langchain_session_recall.search.time_hints`.

Run ``python -m benchmarks.locomo.experiments --data PATH --windows 6/1,8/2 --dates none,raw
[--formula NAME] [--possessive] [--strip-temporal]``: one dev table, a row per window layout,
date style and formula, with the window index's size and build time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.locomo.data import HOW_TO_GET, Conversation, Question, Session, load, locate, split
from benchmarks.locomo.run import Measured, table
from benchmarks.locomo.systems import K, db_bytes, load_store
from langchain_session_recall.backends.hits import best_hits
from langchain_session_recall.backends.sqlite.fts import to_fts5
from langchain_session_recall.backends.sqlite.schema import TOKENIZE
from langchain_session_recall.backends.vectors.windows import window_ranges
from langchain_session_recall.core.query import (
    MAX_QUERY_TERMS,
    ParsedQuery,
    parse_query,
    search_terms,
)
from langchain_session_recall.errors import EmptyQueryError
from langchain_session_recall.models import MessageHit, SearchFilters
from langchain_session_recall.search.candidates import term_hits
from langchain_session_recall.search.ranking import TermWeights, rank_by_terms
from langchain_session_recall.search.time_hints import (
    TimeHint,
    closeness,
    parse_time_hint,
    remove_spans,
)

DateStyle = Literal["none", "raw", "words"]
_FILTERS = SearchFilters(exclude_sources=("tool",))
WINDOW_IDS = 1_000_000_000
"""Window hits get ids above this, so they never collide with message ids."""


def date_words(started_at: float, style: DateStyle, raw: str = "") -> str:
    """The session's date as searchable text.

    Example:
        >>> date_words(1683554160.0, "words")
        'Monday 8 May 2023'
    """
    if style == "none":
        return ""
    if style == "raw":
        return raw
    d = dt.datetime.fromtimestamp(started_at, dt.timezone.utc)
    return f"{d:%A} {d.day} {d:%B %Y}"


class WindowIndex:
    """FTS5 over windows of ``size`` adjacent turns sharing ``overlap``, each headed by the
    session's date words; searchable like a store (``match_messages``)."""

    def __init__(
        self, conv: Conversation, size: int, overlap: int, dates: DateStyle, fallback: Any = None
    ) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE w USING fts5(content, tokenize='{TOKENIZE}')")
        self.where: dict[int, Session] = {}
        self.fallback = fallback  # a store, for its vocabulary (typo correction)
        rows = []
        for s in conv.sessions:
            head = date_words(s.started_at, dates, s.date_text)
            for a, b in window_ranges(len(s.turns), size, overlap):
                body = "\n".join(t.content for t in s.turns[a:b])
                rowid = len(rows) + 1
                rows.append((rowid, f"{head}\n{body}" if head else body))
                self.where[rowid] = s
        self.conn.executemany("INSERT INTO w(rowid, content) VALUES (?, ?)", rows)
        self.conn.commit()

    def match_messages(
        self,
        query: ParsedQuery,
        reading: Literal["strict", "relaxed"],
        *,
        filters: SearchFilters = _FILTERS,
        limit: int | None = 200,
        automation: Sequence[str] = (),
        per_session: int | None = None,
        sessions: int | None = None,
    ) -> list[MessageHit]:
        every = per_session is not None or limit is None  # best_hits settles the shape
        rows = self.conn.execute(
            "SELECT rowid, -rank FROM w WHERE w MATCH ? ORDER BY rank LIMIT ?",
            (to_fts5(query, reading), -1 if every else limit),
        ).fetchall()
        hits = [
            MessageHit(
                WINDOW_IDS + r, self.where[r].id, "user", rel, "cli", self.where[r].started_at
            )
            for r, rel in rows
        ]
        return best_hits(hits, limit, per_session=per_session, sessions=sessions)

    def parents_of(self, session_ids: Sequence[str], **_: Any) -> dict[str, str | None]:
        return dict.fromkeys(session_ids)

    def root_of(self, session_id: str, **_: Any) -> str:
        return session_id

    def chain(self, root_id: str, **_: Any) -> list[str]:
        return [root_id]

    def vocabulary(self, prefix: str, *, limit: int = 100_000) -> list[tuple[str, int]]:
        return self.fallback.vocabulary(prefix, limit=limit) if self.fallback else []


# --------------------------------------------------------------------------- evidence


@dataclass
class Evidence:
    """What one question found: per-term hits on messages and on windows (cached once, then
    scored by every formula)."""

    question: Question
    messages: dict[str, list[MessageHit]]
    windows: dict[str, list[MessageHit]]
    sessions: dict[str, Session]
    hint: TimeHint | None = None
    words: tuple[str, ...] = ()
    """The query's words other than the temporal ones (when those are taken out)."""


@dataclass
class Collected:
    items: list[Evidence] = field(default_factory=list)
    index_bytes: int = 0
    store_bytes: int = 0
    raw_bytes: int = 0
    window_seconds: float = 0.0
    store_seconds: float = 0.0


def _terms(backend: Any, text: str) -> dict[str, list[MessageHit]]:
    try:
        terms = search_terms(parse_query(text), limit=MAX_QUERY_TERMS)
        return term_hits(backend, terms, filters=_FILTERS)
    except EmptyQueryError:
        return {}


def collect(
    convs: Sequence[Conversation],
    size: int,
    overlap: int,
    dates: DateStyle,
    *,
    strip_temporal: bool = False,
    rewrite: Callable[[str], str] | None = None,
) -> Collected:
    """Index every conversation (store + windows) and gather each question's hits.

    ``strip_temporal`` searches the query without the words its time hint understood;
    ``rewrite`` transforms the query text before it is searched.
    """
    out = Collected()
    for conv in convs:
        t0 = time.perf_counter()
        store = load_store(conv)
        t1 = time.perf_counter()
        index = WindowIndex(conv, size, overlap, dates, fallback=store)
        t2 = time.perf_counter()
        out.store_seconds += t1 - t0
        out.window_seconds += t2 - t1
        out.store_bytes += int(store.stats()["size_bytes"])
        out.index_bytes += db_bytes(index.conn)
        out.raw_bytes += conv.raw_text_bytes
        sessions = {s.id: s for s in conv.sessions}
        now = conversation_now(conv)
        for q in conv.questions:
            hint = parse_time_hint(q.text, now=now)
            text = q.text
            if strip_temporal and hint is not None:
                text = remove_spans(q.text, hint.spans) or q.text
            if rewrite is not None:
                text = rewrite(text)
            out.items.append(Evidence(q, _terms(store, text), _terms(index, text), sessions, hint))
        store.close()
    return out


def conversation_now(conv: Conversation) -> float:
    """The moment questions are asked: a day after the last session started."""
    return max(s.started_at for s in conv.sessions) + 86_400.0


# --------------------------------------------------------------------------- formulas

Scores = dict[str, float]
Formula = Callable[[Evidence], Scores]


def window_sums(term_hits: dict[str, list[MessageHit]]) -> dict[int, tuple[str, float]]:
    """Each window's OR score (the sum of its per-term bm25), as FTS5 ranks an OR query."""
    out: dict[int, tuple[str, float]] = {}
    for hits in term_hits.values():
        for h in hits:
            prev = out.get(h.message_id, (h.session_id, 0.0))[1]
            out[h.message_id] = (h.session_id, prev + h.relevance)
    return out


def best_windows(term_hits: dict[str, list[MessageHit]], decay: float = 0.0) -> Scores:
    """A session's best window score, plus ``decay``-weighted further windows."""
    per: dict[str, list[float]] = {}
    for sid, v in window_sums(term_hits).values():
        per.setdefault(sid, []).append(v)
    return {
        s: sum(v * decay**i for i, v in enumerate(sorted(vs, reverse=True)))
        for s, vs in per.items()
    }


def terms_rank(
    term_hits: dict[str, list[MessageHit]], weights: TermWeights | None = None
) -> Scores:
    """The library's term-coverage ranking."""
    return {
        r.root_id: r.score for r in rank_by_terms(term_hits, {}, weights=weights or TermWeights())
    }


def normalised(scores: Scores) -> Scores:
    top = max(scores.values(), default=0.0) or 1.0
    return {s: v / top for s, v in scores.items()}


def blend(*parts: tuple[float, Scores]) -> Scores:
    out: Scores = {}
    for w, scores in parts:
        for s, v in normalised(scores).items():
            out[s] = out.get(s, 0.0) + w * v
    return out


def evaluate(collected: Collected, formula: Formula) -> Measured:
    """Recall of ``formula``; the cost columns are the window index's (the store is beside)."""
    m = Measured(
        index_bytes=collected.index_bytes,
        raw_bytes=collected.raw_bytes,
        ingest_seconds=collected.window_seconds,
    )
    t0 = time.perf_counter()
    for ev in collected.items:
        scores = formula(ev)
        ranked = sorted(scores, key=lambda s: (-scores[s], s))[:K]
        m.result.add(ev.question.category, ranked, ev.question.evidence)
    m.query_seconds = time.perf_counter() - t0
    return m


def merged(*parts: dict[str, list[MessageHit]]) -> dict[str, list[MessageHit]]:
    out: dict[str, list[MessageHit]] = {}
    for part in parts:
        for term, hits in part.items():
            out.setdefault(term, []).extend(hits)
    return out


def with_prior(formula: Formula, boost: float, spread: float = 0.5) -> Formula:
    """``formula``'s scores times ``1 + boost * closeness(session start, time hint)``."""

    def score(ev: Evidence) -> Scores:
        scores = formula(ev)
        if ev.hint is None or not boost:
            return scores
        hint = ev.hint
        return {
            s: v * (1.0 + boost * closeness(ev.sessions[s].started_at, hint, spread=spread))
            for s, v in scores.items()
        }

    return score


def _library(ev: Evidence) -> Scores:
    return terms_rank(ev.messages)


def _best(ev: Evidence) -> Scores:
    return best_windows(ev.windows)


PRIOR_BOOST = 1.0
PRIOR_SPREAD = 0.5

FORMULAS: dict[str, Formula] = {
    "messages, rank_by_terms (the library's ranking)": _library,
    "messages, rank_by_terms + prior": with_prior(_library, PRIOR_BOOST, PRIOR_SPREAD),
    "best window (baseline c's ranking)": _best,
    "best window + prior": with_prior(_best, PRIOR_BOOST, PRIOR_SPREAD),
    "best window, further windows decayed 0.3, + prior": with_prior(
        lambda ev: best_windows(ev.windows, 0.3), PRIOR_BOOST, PRIOR_SPREAD
    ),
    "windows, rank_by_terms + prior": with_prior(
        lambda ev: terms_rank(ev.windows), PRIOR_BOOST, PRIOR_SPREAD
    ),
    "messages+windows, rank_by_terms + prior": with_prior(
        lambda ev: terms_rank(merged(ev.messages, ev.windows)), PRIOR_BOOST, PRIOR_SPREAD
    ),
    "best window + 0.5 x library + prior": with_prior(
        lambda ev: blend((1.0, _best(ev)), (0.5, _library(ev))), PRIOR_BOOST, PRIOR_SPREAD
    ),
}
"""Session scores from the cached hits; ``+ prior``: times ``1 + 1.0 * closeness`` (spread 0.5)."""


def possessive(text: str) -> str:
    """``Ana's`` -> ``Ana``: the library's reading otherwise searches the phrase
    "ana s", which only matches where someone else names her.

    Example:
        >>> possessive("Where is Ana's old sailboat?")
        'Where is Ana old sailboat?'
    """
    return _POSSESSIVE.sub(r"\1", text)


_POSSESSIVE = re.compile(r"(\w)['\u2019]s\b")


def run_formulas(
    collected: Collected, formulas: dict[str, Formula], label: str
) -> dict[str, dict[str, Measured]]:
    out = {}
    for name, formula in formulas.items():
        m = evaluate(collected, formula)
        key = f"{label}: {name}"
        out[key] = {"dev": m}
        f = m.result.overall.figures()
        print(f"{key}: " + " / ".join(f"{v:.1f}" for v in f.values()), file=sys.stderr)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", help="path to locomo10.json (else $LOCOMO_DATA)")
    parser.add_argument("--windows", default="6/1", help="size/overlap list, e.g. 4/1,6/1,8/2")
    parser.add_argument("--dates", default="raw", help="date styles: none,raw,words")
    parser.add_argument("--formula", action="append", help="formula names containing this")
    parser.add_argument(
        "--strip-temporal", action="store_true", help="search without the temporal words"
    )
    parser.add_argument("--possessive", action="store_true", help="search Ana's as Ana")
    parser.add_argument("--boosts", help="also best window + prior at these boosts, e.g. 0.5,2")
    args = parser.parse_args(argv)
    path = locate(args.data)
    if path is None:
        print(HOW_TO_GET)
        return 0
    dev = split(load(path), "dev")  # experiments never see the test split
    formulas = {
        n: f for n, f in FORMULAS.items() if not args.formula or any(x in n for x in args.formula)
    }
    for boost in (float(b) for b in (args.boosts or "").split(",") if b):
        formulas[f"best window + prior, boost {boost}"] = with_prior(_best, boost, PRIOR_SPREAD)
    results: dict[str, dict[str, Measured]] = {}
    for spec in args.windows.split(","):
        size, overlap = (int(x) for x in spec.split("/"))
        for dates in args.dates.split(","):
            collected = collect(
                dev,
                size,
                overlap,
                dates,  # type: ignore[arg-type]
                strip_temporal=args.strip_temporal,
                rewrite=possessive if args.possessive else None,
            )
            label = f"{size}/{overlap} {dates}" + (" poss" if args.possessive else "")
            label += " strip" if args.strip_temporal else ""
            print(
                f"{label}: windows {collected.index_bytes:,} B in {collected.window_seconds:.2f} s; "
                f"store {collected.store_bytes:,} B in {collected.store_seconds:.2f} s; "
                f"raw text {collected.raw_bytes:,} B",
                file=sys.stderr,
            )
            results.update(run_formulas(collected, formulas, label))
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
