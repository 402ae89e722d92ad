"""The labelled recap corpus of ``tests/data/recaps/`` (see its README.md) and the prompt each
recording was made with, for the quality gate's tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from langchain_session_recall.summarize.prompts import CITATION_INSTRUCTION, DEFAULT_SUMMARY_PROMPT
from langchain_session_recall.summarize.quality import RecapVerdict, assess_recap

CORPUS_DIR = Path(__file__).resolve().parent / "data" / "recaps"


@dataclass(frozen=True)
class Transcript:
    id: str
    query: str
    source: str
    when: str
    title: str
    with_ids: bool
    text: str

    def prompt(self) -> str:
        """The summarizer's prompt for this transcript, system and user messages joined."""
        values = {
            "query": self.query,
            "source": self.source,
            "when": self.when,
            "title": self.title,
            "transcript": self.text,
            "citation_instruction": CITATION_INSTRUCTION if self.with_ids else "",
        }
        messages = DEFAULT_SUMMARY_PROMPT.format_messages(**values)
        return "\n\n".join(str(m.content) for m in messages)


@dataclass(frozen=True)
class Recap:
    """A recorded model answer or a hand-written reference, with its label."""

    id: str
    transcript_id: str
    text: str
    label: str  # "good" or "bad"
    why: str
    expected_reasons: tuple[str, ...]
    finish_reason: str | None
    provenance: str
    model: str | None = None
    settings: Any = None
    factual_errors: tuple[str, ...] = ()
    """Sentences that state something the session does not (read by hand; Qwen only)."""


@cache
def transcripts() -> dict[str, Transcript]:
    data = json.loads((CORPUS_DIR / "recap_transcripts.json").read_text("utf-8"))
    return {
        t["id"]: Transcript(
            t["id"], t["query"], t["source"], t["when"], t["title"], t["with_ids"], t["transcript"]
        )
        for t in data["transcripts"]
    }


@cache
def recordings() -> tuple[Recap, ...]:
    out: list[Recap] = []
    for path in sorted(CORPUS_DIR.glob("recordings-*.json")):
        data = json.loads(path.read_text("utf-8"))
        for r in data["recordings"]:
            out.append(
                Recap(
                    id=r["id"],
                    transcript_id=r["transcript_id"],
                    text=r["raw_output"],
                    label=r["label"],
                    why=r["why"],
                    expected_reasons=tuple(r["expected_reasons"]),
                    finish_reason=r["finish_reason"],
                    provenance=data["provenance"],
                    model=r["model"],
                    settings=r["settings"],
                    factual_errors=tuple(r.get("factual_errors", ())),
                )
            )
    return tuple(out)


@cache
def references() -> tuple[Recap, ...]:
    data = json.loads((CORPUS_DIR / "references.json").read_text("utf-8"))
    return tuple(
        Recap(
            id=r["id"],
            transcript_id=r["transcript_id"],
            text=r["recap"],
            label=r["label"],
            why="",
            expected_reasons=(),
            finish_reason="stop",
            provenance=r["provenance"],
        )
        for r in data["references"]
    )


def assess(recap: Recap, text: str | None = None, finish_reason: str | None = None) -> RecapVerdict:
    """The gate's verdict on ``recap`` (or on ``text`` for its transcript), as the summarizer
    would run it."""
    t = transcripts()[recap.transcript_id]
    return assess_recap(
        recap.text if text is None else text,
        transcript=t.text,
        prompt=t.prompt(),
        context=f"{t.query}\n{t.title}",
        finish_reason=recap.finish_reason if finish_reason is None else finish_reason,
    )
