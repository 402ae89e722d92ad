"""The recall evaluation set (``benchmarks/recall``) as a regression test.

Builds the seeded set in memory, asks every question, and checks our retriever against the
keyword baseline measured in the same run. BM25 over sessions is left to the benchmark (it needs
the ``bench`` extra).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.recall.baselines import HermesIndex  # noqa: E402
from benchmarks.recall.dataset import CATEGORIES, build_dataset  # noqa: E402
from benchmarks.recall.run import evaluate, load_store, our_ranker  # noqa: E402


def test_the_set_is_deterministic_and_well_formed() -> None:
    a, b = build_dataset(7), build_dataset(7)
    assert a == b
    assert build_dataset(8).sessions != a.sessions  # distractors follow the seed
    roots = set(a.roots())
    assert all(q.target in roots for q in a.questions)
    assert {q.category for q in a.questions} == set(CATEGORIES)
    ids = [s.id for s in a.sessions]
    assert len(ids) == len(set(ids))


@pytest.fixture(scope="module")
def scores() -> dict[str, dict[str, object]]:
    dataset = build_dataset(7)
    store = load_store(dataset)
    index = HermesIndex(dataset)
    out = {
        "ours": evaluate(our_ranker(store), dataset.questions),
        "or": evaluate(index.ranker(" OR "), dataset.questions),
        "and": evaluate(index.ranker(" "), dataset.questions),
    }
    store.close()
    return out  # type: ignore[return-value]


def test_ours_beats_the_keyword_baselines_overall(scores: dict[str, dict]) -> None:  # type: ignore[type-arg]
    ours, best = (
        scores["ours"]["all"],
        max(scores["or"]["all"].recall(5), scores["and"]["all"].recall(5)),
    )
    assert ours.recall(5) >= best + 0.10
    assert ours.zero_rate() < 0.01


@pytest.mark.parametrize("category", [*CATEGORIES, "cjk"])
def test_no_category_falls_below_the_keyword_baseline(
    scores: dict[str, dict], category: str
) -> None:  # type: ignore[type-arg]
    assert scores["ours"][category].recall(5) >= scores["or"][category].recall(5)
    assert scores["ours"][category].recall(5) >= scores["and"][category].recall(5)
