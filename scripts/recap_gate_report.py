"""Precision and recall of the recap quality gate on the labelled corpus (tests/data/recaps/).

    python scripts/recap_gate_report.py

Prints the figures quoted in docs/summarizer.md ("Quality gate"): the corpus by model and
setting, the gate's decisions per subset, and for each check how often it fires on bad and on
good recaps and how many of the recaps labelled with that defect it finds.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_session_recall.summarize.quality import REASONS, RecapVerdict
from tests.recap_corpus import CORPUS_DIR, Recap, assess, recordings, references


def main() -> None:
    recs, refs = recordings(), references()
    print("## Corpus")
    by_setting: Counter[tuple[str, int, float, str]] = Counter()
    labels: Counter[tuple[str, str]] = Counter()
    cut: Counter[str] = Counter()
    for r in recs:
        ids = "ids" if r.transcript_id.endswith("+ids") else "no ids"
        by_setting[(r.model or "", r.settings["max_tokens"], r.settings["temperature"], ids)] += 1
        labels[(r.model or "", r.label)] += 1
        cut[r.model or ""] += r.finish_reason == "length"
    print("| model | max_tokens | temperature | transcript | recordings |")
    print("|---|---|---|---|---|")
    for (model, mt, temp, ids), n in sorted(by_setting.items()):
        print(f"| {model} | {mt} | {temp} | {ids} | {n} |")
    for model in sorted(cut):
        print(
            f"{model}: {labels[(model, 'bad')]} bad, {labels[(model, 'good')]} good, "
            f"{cut[model]} stopped by the token limit"
        )
    print(f"hand-written references: {len(refs)}")

    verdicts: list[tuple[Recap, RecapVerdict, str]] = []
    for r in recs:
        subset = {
            "smollm2-135m": "SmolLM2 (calibration)",
            "gemma-3-270m": "Gemma (held out)",
        }.get(r.model or "", "Qwen2.5-Coder-1.5B (held out)")
        verdicts.append((r, assess(r), subset))
    held_out = held_out_ids()
    for r in refs:
        subset = "references (held out)" if r.id in held_out else "references (calibration)"
        verdicts.append((r, assess(r), subset))

    print("\n## Decisions")
    print("| subset | bad rejected | bad accepted | good rejected | good accepted |")
    print("|---|---|---|---|---|")
    for subset in dict.fromkeys(s for _, _, s in verdicts):
        rows = [(r, v) for r, v, s in verdicts if s == subset]
        cells = [
            sum(r.label == lab and v.ok is ok for r, v in rows)
            for lab, ok in (("bad", False), ("bad", True), ("good", False), ("good", True))
        ]
        print(f"| {subset} | " + " | ".join(map(str, cells)) + " |")
    right = sum(
        bool(set(v.reasons) & set(r.expected_reasons))
        for r, v, _ in verdicts
        if r.label == "bad" and not v.ok
    )
    bad = sum(r.label == "bad" for r, _, _ in verdicts)
    print(f"bad recaps rejected for a defect they were labelled with: {right}/{bad}")

    print("\n## Checks")
    print("| reason | fires on bad | fires on good | precision | labelled | found | recall |")
    print("|---|---|---|---|---|---|---|")
    for reason in REASONS:
        on_bad = sum(reason in v.reasons for r, v, _ in verdicts if r.label == "bad")
        on_good = sum(reason in v.reasons for r, v, _ in verdicts if r.label == "good")
        labelled = [(r, v) for r, v, _ in verdicts if reason in r.expected_reasons]
        found = sum(reason in v.reasons for _, v in labelled)
        precision = f"{on_bad / (on_bad + on_good):.0%}" if on_bad + on_good else "-"
        recall = f"{found / len(labelled):.0%}" if labelled else "-"
        print(
            f"| `{reason}` | {on_bad} | {on_good} | {precision} | {len(labelled)} | {found} | "
            f"{recall} |"
        )

    print("\n## Margins (good: largest or smallest value on a good recap)")
    good = [v for r, v, _ in verdicts if r.label == "good"]
    print(f"copied: good max {max(v.copied for v in good):.2f}")
    print(f"prompt_words: good max {max(v.prompt_words for v in good):.2f}")
    print(f"repetition: good max {max(v.repetition for v in good):.2f}")
    grounded = [v.grounded for v in good if v.grounded is not None]
    print(f"grounded: good min {min(grounded):.2f}")
    print(f"new_specifics: good min {min(v.new_specifics for v in good)}")
    print(f"invented_specifics: good max {max(v.invented_specifics for v in good)}")


def held_out_ids() -> set[str]:
    data = json.loads((CORPUS_DIR / "references.json").read_text("utf-8"))
    return {r["id"] for r in data["references"] if r.get("set") == "held-out"}


if __name__ == "__main__":
    main()
