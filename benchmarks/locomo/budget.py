"""Gold-answer survival under a token budget (issue 34, deliverable 3), on LoCoMo's dev split.

For each question, the three best sessions are recalled (k=3) and their recaps fitted to a
budget of 250, 500, 1,000 and 2,000 tokens (the default estimate: 4 characters per token), by
both surfaces that take ``max_tokens``: the ``session_search`` tool (its whole JSON output) and
``SessionRecallMiddleware`` (the block it adds to the system message). Run from the repository
root::

    python -m benchmarks.locomo.budget --data /path/to/locomo10.json [--json out.json]

Without ``--data`` or ``LOCOMO_DATA`` it says where to get the file and exits 0 (a skip). Only
the development split (conv-26, -30, -41, -42, -43) is measured.

Definitions:

- *questions*: categories 1, 2 and 4 (multi-hop, temporal, single-hop: facts said in a turn)
  with a gold answer (a string, or a number read as its text) and evidence;
- *gold*: the answer, when it is *literally present* (normalised as
  :func:`~benchmarks.locomo.retention.normalise` does, on word boundaries) in the text of one
  of its evidence turns (``dia_id``); otherwise the text of its evidence turns (the message as
  stored, ``"{speaker}: {text}"`` and a photo's caption);
- *present*: a literal gold answer occurs in the text (normalised, case-insensitive, on word
  boundaries); an evidence gold is present when the whole text of at least one of its evidence
  turns is (a turn clipped by the recap does not count);
- *retrieved*: the gold is present in the retriever's three Documents (the windows the recaps
  are made from, before any recap or budget);
- *survives at B*: the gold is present in the surface's output at budget B (the tool: its
  results' ``summary`` fields, decoded; the middleware: its block);
- *survival* = survives / retrieved. The no-budget row is the tool as it is by default.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from benchmarks.locomo.data import DEV, HOW_TO_GET, conversation_from_json, locate, turn_content
from benchmarks.locomo.retention import contains
from benchmarks.locomo.systems import load_store
from langchain_session_recall import SessionRecallMiddleware, create_session_search_tool
from langchain_session_recall.middleware import RECALL_STATE_KEY
from langchain_session_recall.summarize.budget import estimate_tokens

BUDGETS = (250, 500, 1000, 2000)
CATEGORIES = (1, 2, 4)
K = 3
_DIA = re.compile(r"D:?(\d+):(\d+)")


@dataclass(frozen=True, slots=True)
class Gold:
    """One question and what must survive of it."""

    question: str
    category: int
    answer: str
    evidence: tuple[str, ...]
    """The texts of its evidence turns."""
    literal: bool
    """The answer is in one of them (else the evidence texts are the gold)."""

    def present(self, text: str) -> bool:
        """Whether the gold is in ``text`` (see the module's definitions).

        Example:
            >>> g = Gold("Where?", 4, "Paris", ("Ana: I moved to Paris",), True)
            >>> g.present("... Ana: we moved to PARIS!"), g.present("Parisian")
            (True, False)
            >>> e = Gold("Why?", 4, "she was away", ("Ana: I travelled a lot",), False)
            >>> e.present("[USER]: Ana: I travelled a lot"), e.present("Ana: I travelled")
            (True, False)
        """
        if self.literal:
            return contains(text, self.answer)
        return any(contains(text, turn) for turn in self.evidence)


def golds(sample: dict[str, Any]) -> list[Gold]:
    """The counted questions of one LoCoMo sample, with their evidence turns' texts."""
    conv = sample["conversation"]
    turns = {
        t["dia_id"]: turn_content(t)
        for key, value in conv.items()
        if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
        for t in value
        if "dia_id" in t
    }
    out = []
    for qa in sample["qa"]:
        answer = qa.get("answer")
        if int(qa["category"]) not in CATEGORIES or not isinstance(answer, (str, int, float)):
            continue
        ids = [f"D{s}:{t}" for e in qa.get("evidence") or () for s, t in _DIA.findall(e)]
        evidence = tuple(dict.fromkeys(turns[i] for i in ids if i in turns))
        if not evidence or not str(answer).strip():
            continue
        literal = any(contains(turn, str(answer)) for turn in evidence)
        out.append(Gold(qa["question"], int(qa["category"]), str(answer), evidence, literal))
    return out


@dataclass
class Row:
    """One question: retrieved or not, and what survived at each budget."""

    conversation: str
    category: int
    literal: bool
    retrieved: bool
    tool: dict[str, bool] = field(default_factory=dict)
    middleware: dict[str, bool] = field(default_factory=dict)
    tool_tokens: dict[str, int] = field(default_factory=dict)
    middleware_tokens: dict[str, int] = field(default_factory=dict)


def _summaries(output: str) -> str:
    payload = json.loads(output)
    return "\n".join(str(r.get("summary", "")) for r in payload.get("results", []))


def _middleware_block(middleware: SessionRecallMiddleware, question: str) -> str:
    """What the middleware adds for ``question`` (through its own hook)."""
    update = middleware.before_agent({"messages": [HumanMessage(question)]}, Runtime(context=None))
    return str((update or {}).get(RECALL_STATE_KEY) or "")


def measure_sample(sample: dict[str, Any], budgets: Sequence[int] = BUDGETS) -> list[Row]:
    """The rows of one conversation."""
    conv = conversation_from_json(sample)
    store = load_store(conv)
    now = max(s.started_at for s in conv.sessions) + 86_400.0
    plain = create_session_search_tool(store, now=now)
    tools = {b: create_session_search_tool(store, now=now, max_tokens=b) for b in budgets}
    middlewares = {
        b: SessionRecallMiddleware(retriever=plain.retriever, k=K, max_tokens=b) for b in budgets
    }
    rows = []
    for gold in golds(sample):
        windows = [d.page_content for d in plain.retriever.invoke(gold.question, k=K)]
        row = Row(conv.sample_id, gold.category, gold.literal, any(map(gold.present, windows)))
        outputs = {"none": plain.invoke({"query": gold.question, "limit": K})}
        outputs |= {
            str(b): t.invoke({"query": gold.question, "limit": K}) for b, t in tools.items()
        }
        for name, output in outputs.items():
            row.tool[name] = gold.present(_summaries(output))
            row.tool_tokens[name] = estimate_tokens(output)
        for b, middleware in middlewares.items():
            block = _middleware_block(middleware, gold.question)
            row.middleware[str(b)] = gold.present(block)
            row.middleware_tokens[str(b)] = estimate_tokens(block)
        rows.append(row)
    store.close()
    return rows


def _share(rows: Sequence[Row], surface: str, budget: str) -> tuple[int, int]:
    found = [r for r in rows if r.retrieved]
    kept = sum(1 for r in found if getattr(r, surface).get(budget))
    return kept, len(found)


def _median_tokens(rows: Sequence[Row], surface: str, budget: str) -> float:
    values = [getattr(r, f"{surface}_tokens")[budget] for r in rows]
    return float(statistics.median(values)) if values else 0.0


def _pct(kept: int, total: int) -> str:
    return f"{100 * kept / total:.1f}% ({kept}/{total})" if total else "-"


def table(rows: Sequence[Row], budgets: Sequence[int] = BUDGETS) -> str:
    """Markdown: survival of the retrieved gold per budget, for both surfaces."""
    lines = [
        "| budget (tokens) | tool: survives | tool: median tokens | middleware: survives "
        "| middleware: median tokens |",
        "|---:|---:|---:|---:|---:|",
    ]
    for b in [str(b) for b in budgets]:
        tool, mid = _share(rows, "tool", b), _share(rows, "middleware", b)
        lines.append(
            f"| {int(b):,} | {_pct(*tool)} | {_median_tokens(rows, 'tool', b):,.0f} "
            f"| {_pct(*mid)} | {_median_tokens(rows, 'middleware', b):,.0f} |"
        )
    plain = _share(rows, "tool", "none")
    lines.append(
        f"| no budget (tool default) | {_pct(*plain)} | {_median_tokens(rows, 'tool', 'none'):,.0f}"
        " | - | - |"
    )
    return "\n".join(lines)


def breakdown(rows: Sequence[Row], budgets: Sequence[int] = BUDGETS) -> str:
    """Markdown: tool survival per kind of gold (literal answer / evidence turn)."""
    lines = ["| gold | retrieved | " + " | ".join(f"{b:,}" for b in budgets) + " |"]
    lines.append("|---|---:|" + "---:|" * len(budgets))
    for name, literal in (("answer string", True), ("evidence turn", False)):
        group = [r for r in rows if r.literal is literal]
        found = sum(r.retrieved for r in group)
        cells = [_pct(*_share(group, "tool", str(b))) for b in budgets]
        lines.append(f"| {name} | {found} of {len(group)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def measure(
    samples: Iterable[dict[str, Any]], budgets: Sequence[int] = BUDGETS, split: str = "dev"
) -> list[Row]:
    """Rows of every sample of the split: ``dev`` (what the budget was tuned on) or ``test``
    (the held-out conversations, run once to check the tuning did not overfit)."""
    dev = split == "dev"
    chosen = (s for s in samples if (s["sample_id"] in DEV) == dev)
    return [r for s in chosen for r in measure_sample(s, budgets)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--data", help="path to locomo10.json (else $LOCOMO_DATA)")
    parser.add_argument("--json", type=Path, help="save the rows here")
    parser.add_argument(
        "--split", choices=("dev", "test"), default="dev", help="test: the held-out split, once"
    )
    args = parser.parse_args(argv)
    path = locate(args.data)
    if path is None:
        print(HOW_TO_GET)
        return 0
    samples = json.loads(path.read_text(encoding="utf-8"))
    rows = measure(samples, split=args.split)
    retrieved = sum(r.retrieved for r in rows)
    print(f"{args.split} split, k={K}: {len(rows)} questions, gold retrieved for {retrieved}\n")
    print(table(rows))
    print()
    print(breakdown(rows))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
