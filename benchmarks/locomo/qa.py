"""Answer quality on LoCoMo (issue 24, deliverable 5): an agent answers from recall, or without.

A sample of development-split questions (categories 1, 2 and 4, gold answer a short string) is
put to one chat model three ways:

- ``none``: the question alone, no memory;
- ``extractive``: the agent's first turn is a ``session_search`` call (forced with
  ``tool_choice``: the local Qwen2.5-Coder-1.5B does not call tools on its own), the tool
  returns extractive recaps (no model), the agent answers from them;
- ``model``: the same call (the same arguments: the model wrote them once), the tool recaps the
  sessions with the model (``SessionSummarizer`` defaults: gate, grounding), the agent answers.

Scores: LoCoMo's token F1 (its ``evaluation.py``: lower case, punctuation and the articles
a/an/the/and dropped, Porter stems; multi-hop answers split on commas, each gold part matched by
its best predicted part) and *contains* (the gold answer, normalised, inside the answer: the
retention benchmark's rule). For ``model`` also the retention of the recaps: of the sessions
whose retrieved window holds the gold answer and whose model recap was accepted, the share whose
recap still holds it (``extractive`` keeps it 92%, ``benchmarks/locomo/retention.py``).

Runs only against a live OpenAI-compatible server (``--base-url``, default the local
``local-llm-server``); without the data (``--data``/``LOCOMO_DATA``) or the server it says so and
exits 0. One JSON line per question goes to ``--out`` as it is done; a second run with the same
``--out`` skips the questions already there (a run interrupted by a slow machine resumes).

    python -m benchmarks.locomo.qa --data PATH --out qa.jsonl            # run / resume
    python -m benchmarks.locomo.qa --data PATH --out qa.jsonl --report   # table only

LoCoMo is CC BY-NC: the output file holds questions and answers of it; keep it out of the
repository (only the aggregate table goes to ``docs/benchmarks-summarizer.md``).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import string
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.locomo.data import CATEGORY_NAMES, HOW_TO_GET, Question, load, locate, split
from benchmarks.locomo.retention import CATEGORIES, contains, short_answer
from benchmarks.locomo.systems import load_store

SYSTEMS = ("none", "extractive", "model")
PER_CATEGORY = 12
SEED = 24
SYSTEM_PROMPT = (
    "You answer questions about past conversations between {speakers}. "
    "Answer with a short phrase (a few words), using the exact words of the conversation "
    "when you can."
)
TOOL_PROMPT = " Use session_search to recall the conversations, then answer from what it returns."
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")


# -- scoring (LoCoMo's evaluation.py, re-implemented) ---------------------------------------


def normalize_answer(text: str) -> str:
    """LoCoMo's normalisation: commas and punctuation out, lower case, articles out.

    Example:
        >>> normalize_answer("The Pottery, and painting!")
        'pottery painting'
    """
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in string.punctuation)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _stems(text: str) -> list[str]:
    from nltk.stem import PorterStemmer  # the stemmer LoCoMo's evaluation uses

    stemmer = PorterStemmer()
    return [stemmer.stem(w) for w in normalize_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 between Porter stems of the normalised texts.

    Example:
        >>> round(token_f1("She went painting in May", "painting"), 2)
        0.33
        >>> token_f1("nothing", "pottery")
        0.0
    """
    pred, truth = _stems(prediction), _stems(gold)
    same = sum((Counter(pred) & Counter(truth)).values())
    if not same:
        return 0.0
    precision, recall = same / len(pred), same / len(truth)
    return 2 * precision * recall / (precision + recall)


def locomo_f1(prediction: str, gold: str, category: int) -> float:
    """LoCoMo's score of one answer: multi-hop (category 1) answers are split on commas and
    each gold part scored by its best predicted part, averaged; the others by token F1.

    Example:
        >>> locomo_f1("pottery, camping", "camping, pottery", 1)
        1.0
        >>> round(locomo_f1("pottery", "camping, pottery", 1), 2)
        0.5
    """
    if category != 1:
        return token_f1(prediction, gold)
    predictions = [p.strip() for p in prediction.split(",")]
    parts = [g.strip() for g in gold.split(",")]
    return sum(max(token_f1(p, g) for p in predictions) for g in parts) / len(parts)


def sample(questions: Sequence[tuple[str, Question]], per_category: int, seed: int) -> list[int]:
    """Indices of ``per_category`` questions of each category (1, 2, 4) with a short gold
    answer, drawn with ``seed`` from the questions in file order.

    Example:
        >>> qs = [("c", Question(f"q{i}", 1 + i % 3, frozenset(), "x")) for i in range(9)]
        >>> sorted(sample(qs, 2, 0)) == sorted(set(sample(qs, 2, 0)))
        True
        >>> {qs[i][1].category for i in sample(qs, 2, 0)}
        {1, 2}
    """
    rng = random.Random(seed)
    chosen: list[int] = []
    for category in CATEGORIES:
        pool = [
            i
            for i, (_, q) in enumerate(questions)
            if q.category == category and short_answer(q) is not None
        ]
        chosen.extend(rng.sample(pool, min(per_category, len(pool))))
    return sorted(chosen)


# -- the agent -------------------------------------------------------------------------------


def server_up(base_url: str) -> bool:
    try:
        # A local server busy with a long generation answers late: wait for it.
        with urllib.request.urlopen(f"{base_url.rstrip('/')}/models", timeout=300):
            return True
    except OSError:
        return False


def _chat(base_url: str, model: str, **kwargs: Any) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        base_url=base_url,
        api_key="sk-local",
        model=model,
        max_retries=0,
        use_responses_api=False,
        timeout=1800,
        temperature=0,
        **kwargs,
    )


def _retention(tool: Any, call: Any, result: Any, gold: str) -> dict[str, int]:
    """Of the model's recaps whose window held the answer, how many kept it."""
    windows = tool.retriever.invoke(call["args"].get("query", ""), k=len(result.artifact) or 3)
    by_id = {d.metadata["session_id"]: d.page_content for d in windows}
    kept = []
    for d in result.artifact:
        window = by_id.get(d.metadata["session_id"], "")
        if d.metadata.get("summary_status") == "summarized" and contains(window, gold):
            kept.append(contains(d.page_content, gold))
    return {"recaps_with_answer_in_window": len(kept), "recaps_keeping_answer": sum(kept)}


def ask(question: Question, conversation: Any, store: Any, llm: Any, recap_llm: Any) -> dict:
    """One question through the three systems; their answers, scores and seconds."""
    from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage

    from langchain_session_recall import create_session_search_tool

    speakers = " and ".join(
        sorted({t.content.split(":")[0] for s in conversation.sessions for t in s.turns[:2]})
    )
    gold = str(question.answer)
    now = max(s.started_at for s in conversation.sessions) + 86_400.0
    out: dict[str, Any] = {"question": question.text, "gold": gold, "category": question.category}

    started = time.monotonic()
    answer = llm.invoke(
        [SystemMessage(SYSTEM_PROMPT.format(speakers=speakers)), HumanMessage(question.text)]
    )
    out["none"] = {"answer": str(answer.content), "seconds": time.monotonic() - started}

    tools = {
        "extractive": create_session_search_tool(store, now=now),
        # Quality, not latency: a local model on a busy machine may need minutes per recap,
        # so the deadline is lifted (the seconds are reported).
        "model": create_session_search_tool(
            store,
            llm=recap_llm,
            now=now,
            max_tokens_param="max_tokens",
            cache=False,
            timeout=None,
        ),
    }
    messages: list[Any] = [
        SystemMessage(SYSTEM_PROMPT.format(speakers=speakers) + TOOL_PROMPT),
        HumanMessage(question.text),
    ]
    started = time.monotonic()
    call_message = llm.bind_tools([tools["extractive"]], tool_choice="session_search").invoke(
        messages
    )
    call_seconds = time.monotonic() - started
    call = call_message.tool_calls[0] if call_message.tool_calls else None
    # llama-cpp-python's server refuses the `"content": null` OpenAI's API expects on an
    # assistant message holding only tool calls (langchain-openai sends null for ""): a blank.
    call_message = call_message.model_copy(update={"content": call_message.content or " "})
    out["tool_call"] = call["args"] if call else None
    for name, tool in tools.items():
        started = time.monotonic()
        if call is None:
            out[name] = {"answer": "", "seconds": call_seconds, "error": "no tool call"}
            continue
        result = tool.invoke({**call, "type": "tool_call"})
        final = llm.invoke(
            [*messages, call_message, ToolMessage(result.content, tool_call_id=call["id"])]
        )
        row: dict[str, Any] = {
            "answer": str(final.content),
            "seconds": call_seconds + time.monotonic() - started,
            "statuses": [d.metadata.get("summary_status") for d in result.artifact],
            "reasons": [
                d.metadata.get("summary_rejected_because")
                or d.metadata.get("summary_fallback_reason")
                for d in result.artifact
            ],
            "output_chars": len(result.content),
        }
        if name == "model":
            row.update(_retention(tool, call, result, gold))
        out[name] = row
    for name in SYSTEMS:
        answer_text = out[name]["answer"]
        out[name]["f1"] = locomo_f1(answer_text, gold, question.category)
        out[name]["contains"] = contains(answer_text, gold)
    return out


# -- report ----------------------------------------------------------------------------------


def report(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown table: per system, F1 and contains overall and per category, seconds."""
    lines = [
        "| system | questions | F1 | contains | F1 multi-hop / temporal / single-hop "
        "| median s / question |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for name in SYSTEMS:
        done = [r for r in rows if name in r]
        if not done:
            continue
        f1 = sum(r[name]["f1"] for r in done) / len(done)
        has = sum(r[name]["contains"] for r in done) / len(done)
        per = []
        for c in CATEGORIES:
            group = [r for r in done if r["category"] == c]
            per.append(
                f"{100 * sum(r[name]['f1'] for r in group) / len(group):.1f}" if group else "-"
            )
        seconds = sorted(r[name]["seconds"] for r in done)
        lines.append(
            f"| {name} | {len(done)} | {100 * f1:.1f} | {100 * has:.1f}% | {' / '.join(per)} "
            f"| {seconds[len(seconds) // 2]:.0f} |"
        )
    model = [r["model"] for r in rows if "model" in r]
    window = sum(r.get("recaps_with_answer_in_window", 0) for r in model)
    kept = sum(r.get("recaps_keeping_answer", 0) for r in model)
    # A call without a query browses recent sessions: nothing is recapped (status None).
    statuses = Counter(s or "browsed" for r in model for s in r.get("statuses", []))
    lines.append("")
    for a, b in (("extractive", "none"), ("model", "none"), ("model", "extractive")):
        pairs = [(r[a]["f1"], r[b]["f1"]) for r in rows if a in r and b in r]
        if pairs:
            better = sum(x > y for x, y in pairs)
            worse = sum(x < y for x, y in pairs)
            lines.append(
                f"Per question, {a} against {b}: F1 higher on {better}, lower on {worse}, "
                f"equal on {len(pairs) - better - worse}."
            )
    for name in SYSTEMS[1:]:
        sizes = sorted(r[name].get("output_chars", 0) for r in rows if name in r)
        if sizes:
            lines.append(f"Tool output ({name}): median {sizes[len(sizes) // 2]:,} characters.")
    lines.append(
        f"Model recaps: {dict(statuses)}; of the accepted recaps whose window holds the gold "
        f"answer, {kept} of {window} keep it"
        + (f" ({100 * kept / window:.0f}%)." if window else ".")
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--data", help="path to locomo10.json (else $LOCOMO_DATA)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8765/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--per-category", type=int, default=PER_CATEGORY)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, required=True, help="JSON lines, one per question")
    parser.add_argument("--report", action="store_true", help="print the table of --out only")
    args = parser.parse_args(argv)
    done = [json.loads(x) for x in args.out.read_text().splitlines()] if args.out.exists() else []
    if args.report:
        print(report(done))
        return 0
    path = locate(args.data)
    if path is None:
        print(HOW_TO_GET)
        return 0
    if not server_up(args.base_url):
        print(
            f"No OpenAI-compatible server at {args.base_url}: start one "
            "(../shared/tools/local-llm-server) or pass --base-url. Skipping."
        )
        return 0
    conversations = split(load(path), "dev")
    questions = [(c.sample_id, q) for c in conversations for q in c.questions]
    chosen = sample(questions, args.per_category, args.seed)
    by_id = {c.sample_id: c for c in conversations}
    seen = {(r["conversation"], r["question"]) for r in done}
    llm = _chat(args.base_url, args.model, extra_body={"max_tokens": 64})
    recap_llm = _chat(args.base_url, args.model)
    stores: dict[str, Any] = {}
    for n, index in enumerate(chosen, 1):
        conv_id, question = questions[index]
        if (conv_id, question.text) in seen:
            continue
        if conv_id not in stores:
            stores[conv_id] = load_store(by_id[conv_id])
        row = ask(question, by_id[conv_id], stores[conv_id], llm, recap_llm)
        row["conversation"] = conv_id
        with args.out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        done.append(row)
        print(
            f"[{n}/{len(chosen)}] {CATEGORY_NAMES[question.category]}: "
            + ", ".join(f"{s} F1 {row[s]['f1']:.2f}" for s in SYSTEMS),
            flush=True,
        )
    print(report(done))
    return 0


if __name__ == "__main__":
    sys.exit(main())
