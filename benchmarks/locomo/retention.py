"""Answer retention of the extractive recaps (issue 15, deliverable 2), on LoCoMo.

What an agent gets without a model: ``create_session_search_tool(store)`` (no ``llm``) returns
extractive recaps of the three best sessions. For each question of categories 1, 2 and 4 whose
gold answer is a short string, this measures whether the answer is in the three retrieved
sessions' windows (the retriever Documents' ``page_content``), whether it survives into the
tool's output, and how long that output is. Run from the repository root::

    python -m benchmarks.locomo.retention --data /path/to/locomo10.json [--json out.json]

Without ``--data`` or ``LOCOMO_DATA`` it says where to get the file and exits 0 (a skip). Only
the development split (conv-26, -30, -41, -42, -43) is measured.

Rules:

- *short string*: the gold ``answer`` is a JSON string of at most :data:`MAX_ANSWER_WORDS`
  words (whitespace-separated); numbers given as JSON numbers do not count;
- *appears*: after :func:`normalise` (lower case, every run of characters other than letters
  and digits one space), the answer is a substring of the text that starts and ends on word
  boundaries (:func:`contains`);
- *tool output*: the string the tool returns to the model (JSON); the answer is looked for in
  its results' ``summary`` fields (decoded, so JSON escapes cannot hide it), and its size is
  the length of the whole string, in characters;
- the store, ``now`` (a day after the conversation's last session) and the questions are the
  recall benchmark's (``benchmarks/locomo/README.md``).

*Retention* is the share of the questions with the answer in the windows for which it is also
in the tool's output.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.locomo.data import (
    CATEGORY_NAMES,
    HOW_TO_GET,
    Conversation,
    Question,
    load,
    locate,
    split,
)
from benchmarks.locomo.systems import load_store
from langchain_session_recall import create_session_search_tool

CATEGORIES = (1, 2, 4)
"""Multi-hop, temporal and single-hop: the categories whose answers are facts said in a turn."""
MAX_ANSWER_WORDS = 5
"""Longest gold answer (in words) that counts as a short string."""
SESSIONS = 3
"""Sessions the tool returns (its default ``limit``)."""
_NON_WORD = re.compile(r"[^\w]+|_+", re.UNICODE)


def normalise(text: str) -> str:
    """Lower case, every run of characters other than letters and digits one space.

    Example:
        >>> normalise("  Pottery,  and\\nPAINTING! ")
        'pottery and painting'
    """
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def contains(text: str, answer: str) -> bool:
    """Whether ``answer`` occurs in ``text``, both normalised, on word boundaries.

    Example:
        >>> contains("She said: 'Pottery, mostly.'", "pottery"), contains("a pot", "pottery")
        (True, False)
        >>> contains("he started in May", "art")
        False
    """
    needle = normalise(answer)
    return bool(needle) and f" {needle} " in f" {normalise(text)} "


def short_answer(question: Question, max_words: int = MAX_ANSWER_WORDS) -> str | None:
    """The question's gold answer when it counts (category and length), else ``None``.

    Example:
        >>> short_answer(Question("Where?", 4, frozenset({"session_1"}), "Paris, France"))
        'Paris, France'
        >>> short_answer(Question("Where?", 3, frozenset({"session_1"}), "Paris")) is None
        True
    """
    answer = question.answer
    if question.category not in CATEGORIES or answer is None:
        return None
    words = len(answer.split())
    return answer if 0 < words <= max_words else None


@dataclass(frozen=True, slots=True)
class Row:
    """One question: where its answer was found and how long the tool's output was."""

    conversation: str
    category: int
    in_windows: bool
    in_output: bool
    output_chars: int


def ask(tool: Any, question: str) -> tuple[list[str], str, list[str]]:
    """The windows the retriever returns, the tool's output and the summaries in it."""
    windows = [d.page_content for d in tool.retriever.invoke(question, k=SESSIONS)]
    output = tool.invoke({"query": question, "limit": SESSIONS})
    payload = json.loads(output)
    summaries = [str(r.get("summary", "")) for r in payload.get("results", [])]
    return windows, output, summaries


def measure(
    conversations: Iterable[Conversation], *, max_words: int = MAX_ANSWER_WORDS, **options: Any
) -> list[Row]:
    """One :class:`Row` per counted question; ``options`` go to the tool (``fallback_chars``)."""
    rows = []
    for conv in conversations:
        store = load_store(conv)
        now = max(s.started_at for s in conv.sessions) + 86_400.0
        tool = create_session_search_tool(store, now=now, **options)
        for q in conv.questions:
            answer = short_answer(q, max_words)
            if answer is None:
                continue
            windows, output, summaries = ask(tool, q.text)
            rows.append(
                Row(
                    conv.sample_id,
                    q.category,
                    any(contains(w, answer) for w in windows),
                    any(contains(s, answer) for s in summaries),
                    len(output),
                )
            )
        store.close()
    return rows


def _percentile(values: Sequence[int], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return float(ordered[min(len(ordered) - 1, int(p * len(ordered)))])


def figures(rows: Sequence[Row]) -> dict[str, float]:
    """Questions, share with the answer in the windows, retention, output size (chars).

    Example:
        >>> rows = [Row("c", 4, True, True, 100), Row("c", 4, True, False, 300),
        ...         Row("c", 4, False, False, 200)]
        >>> f = figures(rows)
        >>> f["questions"], round(f["in_windows_pct"], 1), f["retention_pct"], f["median_chars"]
        (3, 66.7, 50.0, 200.0)
    """
    found = [r for r in rows if r.in_windows]
    sizes = [r.output_chars for r in rows]
    return {
        "questions": len(rows),
        "in_windows": len(found),
        "in_windows_pct": 100 * len(found) / len(rows) if rows else 0.0,
        "retained": sum(r.in_output for r in found),
        "retention_pct": 100 * sum(r.in_output for r in found) / len(found) if found else 0.0,
        "median_chars": float(statistics.median(sizes)) if sizes else 0.0,
        "p90_chars": _percentile(sizes, 0.9),
    }


def table(rows: Sequence[Row]) -> str:
    """Markdown: all questions, then one line per category."""
    groups: list[tuple[str, Sequence[Row]]] = [("all", rows)]
    groups += [
        (f"{c} {CATEGORY_NAMES[c]}", [r for r in rows if r.category == c]) for c in CATEGORIES
    ]
    lines = [
        "| questions | n | answer in windows | retained in output | median chars | p90 chars |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, group in groups:
        f = figures(group)
        lines.append(
            f"| {name} | {f['questions']:.0f} | {f['in_windows_pct']:.1f}% ({f['in_windows']:.0f})"
            f" | {f['retention_pct']:.1f}% ({f['retained']:.0f}) | {f['median_chars']:,.0f}"
            f" | {f['p90_chars']:,.0f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--data", help="path to locomo10.json (else $LOCOMO_DATA)")
    parser.add_argument("--json", type=Path, help="save the figures here")
    parser.add_argument(
        "--max-words", type=int, default=MAX_ANSWER_WORDS, help="longest short answer (words)"
    )
    parser.add_argument("--fallback-chars", type=int, help="the summarizer's recap budget")
    args = parser.parse_args(argv)
    path = locate(args.data)
    if path is None:
        print(HOW_TO_GET)
        return 0
    options = {} if args.fallback_chars is None else {"fallback_chars": args.fallback_chars}
    rows = measure(split(load(path), "dev"), max_words=args.max_words, **options)
    print(table(rows))
    if args.json:
        payload = {
            "split": "dev",
            "max_answer_words": args.max_words,
            "all": figures(rows),
            **{
                CATEGORY_NAMES[c]: figures([r for r in rows if r.category == c]) for c in CATEGORIES
            },
            "rows": [asdict(r) for r in rows],
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
