"""Session-level recall (pure): R@k = share of a question's evidence sessions in the top k,
averaged over questions; recall_any@k = share of questions with at least one in the top k."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

KS = (1, 3, 5)
Ranker = Callable[[str], list[str]]
"""question -> session ids, best first (at least the top 5)."""


def recall_at(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """Share of ``evidence`` found in the first ``k`` of ``ranked``.

    Example:
        >>> recall_at(["s2", "s9", "s1"], {"s1", "s2"}, 1), recall_at(["s2", "s9", "s1"], {"s1", "s2"}, 3)
        (0.5, 1.0)
    """
    wanted = set(evidence)
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def any_at(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """1.0 when any evidence session is in the first ``k``, else 0.0."""
    return 1.0 if set(evidence) & set(ranked[:k]) else 0.0


@dataclass
class Scores:
    """Per-question figures, summed; ``figures()`` gives percentages."""

    n: int = 0
    recall: dict[int, float] = field(default_factory=lambda: dict.fromkeys(KS, 0.0))
    any5: float = 0.0

    def add(self, ranked: Sequence[str], evidence: Iterable[str]) -> None:
        ev = set(evidence)
        self.n += 1
        for k in KS:
            self.recall[k] += recall_at(ranked, ev, k)
        self.any5 += any_at(ranked, ev, 5)

    def merge(self, other: Scores) -> None:
        self.n += other.n
        for k in KS:
            self.recall[k] += other.recall[k]
        self.any5 += other.any5

    def figures(self) -> dict[str, float]:
        d = max(1, self.n)
        out = {f"R@{k}": 100.0 * self.recall[k] / d for k in KS}
        out["any@5"] = 100.0 * self.any5 / d
        return out


@dataclass
class Result:
    """Scores overall and per LoCoMo category."""

    overall: Scores = field(default_factory=Scores)
    by_category: dict[int, Scores] = field(default_factory=dict)

    def add(self, category: int, ranked: Sequence[str], evidence: Iterable[str]) -> None:
        ev = set(evidence)
        self.overall.add(ranked, ev)
        self.by_category.setdefault(category, Scores()).add(ranked, ev)

    def merge(self, other: Result) -> None:
        self.overall.merge(other.overall)
        for c, s in other.by_category.items():
            self.by_category.setdefault(c, Scores()).merge(s)

    def to_json(self) -> dict[str, object]:
        return {
            "questions": self.overall.n,
            **{k: round(v, 2) for k, v in self.overall.figures().items()},
            "R@5_by_category": {
                str(c): round(s.figures()["R@5"], 2) for c, s in sorted(self.by_category.items())
            },
            "questions_by_category": {str(c): s.n for c, s in sorted(self.by_category.items())},
        }
