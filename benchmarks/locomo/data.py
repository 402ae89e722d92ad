"""LoCoMo conversations -> sessions, turns and questions (pure; reads the JSON file only).

LoCoMo (github.com/snap-research/LoCoMo, ``data/locomo10.json``) is CC BY-NC 4.0: it is never
committed here, nor any excerpt of it. The benchmark reads it from ``--data`` or the
``LOCOMO_DATA`` environment variable.

The protocol (issue 14): one session per LoCoMo session, ``started_at`` = its
``session_N_date_time`` read as UTC, each turn a message ``"{speaker}: {text}"`` plus
`` [shares a photo: {blip_caption}]`` when present, ``speaker_a`` as user and the other speaker
as assistant, messages 30 s apart. Each question with evidence (``D<session>:<turn>``) counts.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEV = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43")
"""The development split: tune on these only. The other five are the held-out test."""
ENV_VAR = "LOCOMO_DATA"
HOW_TO_GET = (
    "LoCoMo data not found: pass --data PATH or set LOCOMO_DATA to locomo10.json.\n"
    "Get it from https://github.com/snap-research/LoCoMo (file data/locomo10.json; "
    "licence CC BY-NC 4.0: do not commit it). Skipping the LoCoMo benchmark."
)
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
TURN_SPACING = 30.0
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION_KEY = re.compile(r"session_(\d+)")


@dataclass(frozen=True, slots=True)
class Turn:
    role: str  # "user" (speaker_a) or "assistant"
    content: str  # "{speaker}: {text}" (+ " [shares a photo: ...]")
    timestamp: float


@dataclass(frozen=True, slots=True)
class Session:
    number: int
    date_text: str  # as written in the data, e.g. "1:56 pm on 8 May, 2023"
    started_at: float
    turns: tuple[Turn, ...]

    @property
    def id(self) -> str:
        return f"session_{self.number}"


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]  # session ids
    answer: str | None = None  # the gold answer when the data gives it as a string


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def raw_text_bytes(self) -> int:
        return sum(len(t.content.encode()) for s in self.sessions for t in s.turns)


def parse_date(text: str) -> float:
    """``"1:56 pm on 8 May, 2023"`` -> Unix seconds, read as UTC.

    Example:
        >>> parse_date("1:56 pm on 8 May, 2023")
        1683554160.0
    """
    moment = dt.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    return moment.replace(tzinfo=dt.timezone.utc).timestamp()


def evidence_sessions(evidence: Iterable[str]) -> frozenset[str]:
    """Session ids named by evidence ids; tolerates the data's few odd forms.

    Example:
        >>> sorted(evidence_sessions(["D2:4; D5:1", "D:7:3", "D"]))
        ['session_2', 'session_5', 'session_7']
    """
    return frozenset(f"session_{s}" for e in evidence for s, _ in _EVIDENCE.findall(e))


def turn_content(turn: dict[str, Any]) -> str:
    """A message's text: ``"{speaker}: {text}"`` plus the photo caption when there is one.

    Example:
        >>> turn_content({"speaker": "Ann", "text": "Look!", "blip_caption": "a red kite"})
        'Ann: Look! [shares a photo: a red kite]'
    """
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    return f"{text} [shares a photo: {caption}]" if caption else text


def conversation_from_json(sample: dict[str, Any]) -> Conversation:
    """One LoCoMo sample -> a :class:`Conversation` (sessions in order, questions with evidence)."""
    conv = sample["conversation"]
    speaker_a = conv["speaker_a"]
    sessions = []
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.fullmatch(k)) and conv[k])
    for n in numbers:
        date_text = conv[f"session_{n}_date_time"]
        start = parse_date(date_text)
        turns = tuple(
            Turn(
                role="user" if t["speaker"] == speaker_a else "assistant",
                content=turn_content(t),
                timestamp=start + i * TURN_SPACING,
            )
            for i, t in enumerate(conv[f"session_{n}"])
        )
        sessions.append(Session(n, date_text, start, turns))
    questions = []
    for qa in sample["qa"]:
        evidence = evidence_sessions(qa.get("evidence") or ())
        if evidence:
            answer = qa.get("answer")
            questions.append(
                Question(
                    qa["question"],
                    int(qa["category"]),
                    evidence,
                    answer if isinstance(answer, str) else None,
                )
            )
    return Conversation(sample["sample_id"], tuple(sessions), tuple(questions))


def locate(path: str | None) -> Path | None:
    """The data file from ``--data`` or ``LOCOMO_DATA``; ``None`` when neither names a file."""
    chosen = path or os.environ.get(ENV_VAR)
    if not chosen:
        return None
    p = Path(chosen).expanduser()
    return p if p.is_file() else None


def load(path: Path) -> list[Conversation]:
    with path.open(encoding="utf-8") as f:
        samples = json.load(f)
    return [conversation_from_json(s) for s in samples]


def split(conversations: Sequence[Conversation], name: str) -> list[Conversation]:
    """``dev`` (the five tuning conversations), ``test`` (the other five) or ``all``."""
    if name == "all":
        return list(conversations)
    dev = name == "dev"
    return [c for c in conversations if (c.sample_id in DEV) == dev]
