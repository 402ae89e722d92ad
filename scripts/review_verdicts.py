"""Print what the summarizer decides on every recorded recap, next to cassettes/verdicts.json.

After a re-recording (``scripts/record-cassettes``) the answers in ``cassettes/`` are new and
the verdict table describes the old ones. This replays the cassette tests and the notebooks with
``SESSION_RECALL_VERDICTS_DUMP`` set (each records what it got instead of asserting it), then
prints, per cassette and session: the recorded verdict, the new one, and the text to judge (the
recap as served, with its citations and the sentences removed as unsupported, or the rejected
answer). Read them against the transcripts.

    .venv/bin/python scripts/review_verdicts.py            # print, change nothing
    .venv/bin/python scripts/review_verdicts.py --write    # also update cassettes/verdicts.json

``--write`` keeps the note of every verdict whose answer is unchanged (``answer``: a hash of
the text as served) and writes ``UNREVIEWED (was ...)`` as the note of each changed or new one:
the tests fail until a person has read that answer and replaced the note with what they found
(an accepted recap should be a recap of its session, a rejected answer rightly rejected). That
step is not automated, on purpose.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_session_recall.testing.recorded_verdicts import DUMP_VAR, UNREVIEWED, VERDICTS_FILE  # noqa: E402

TESTS = (
    "tests/unit_tests/test_summarizer_cassettes.py",
    "tests/unit_tests/test_lcel.py",
    "tests/notebooks/test_notebooks.py",
)


def observe(python: str) -> tuple[list[dict[str, Any]], int]:
    """Replay the tests in dump mode; the observations and pytest's exit code."""
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "verdicts.jsonl"
        # The notebook tests are marked slow: without this they would be skipped, unseen.
        env = {**os.environ, DUMP_VAR: str(dump), "SESSION_RECALL_RUN_SLOW": "1"}
        env.pop("RECORD", None)
        code = subprocess.call(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS], cwd=ROOT, env=env
        )
        lines = dump.read_text("utf-8").splitlines() if dump.exists() else []
    return [json.loads(line) for line in lines], code


def first_seen(observations: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """cassette -> title -> the first observation (sync and async replays see the same)."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for o in observations:
        if o["verdict"] == ["cached"]:
            continue  # the repeated search of the cache test
        table.setdefault(o["cassette"], {}).setdefault(o["title"], o)
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update cassettes/verdicts.json")
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    args = parser.parse_args()

    old: dict[str, Any] = (
        json.loads(VERDICTS_FILE.read_text("utf-8")) if VERDICTS_FILE.exists() else {}
    )
    old_cassettes: dict[str, dict[str, Any]] = old.get("cassettes", {})
    observations, code = observe(args.python)
    new = first_seen(observations)
    changed = 0
    cassettes: dict[str, dict[str, Any]] = {}
    for cassette in sorted(new):
        print(f"\n##### {cassette}")
        cassettes[cassette] = {}
        for title, o in new[cassette].items():
            before = old_cassettes.get(cassette, {}).get(title)
            answer = hashlib.sha256(o["text"].encode("utf-8")).hexdigest()[:12]
            # Same verdict on another answer (a re-recording) is a new answer to read.
            same = (
                before is not None
                and before["verdict"] == o["verdict"]
                and before.get("answer") == answer
            )
            state = "same" if same else ("CHANGED" if before else "NEW")
            if before is not None and not same and before["verdict"] == o["verdict"]:
                state = "NEW ANSWER"
            was = "" if before is None else f" (recorded: {before['verdict']})"
            print(f"\n[{state}] {title}: {o['verdict']}{was}")
            if same and not str(before.get("note", "")).startswith(UNREVIEWED):
                print(f"  note: {before['note']}")
            print(textwrap.indent(textwrap.fill(o["text"], 100), "    | "))
            if o.get("citations") is not None:
                print(f"  citations: {o['citations']}")
            for sentence in o.get("unsupported") or ():
                print(f"  removed as unsupported: {sentence!r}")
            if o.get("cut_off"):
                print("  cut off by the output budget")
            if same:
                note = before["note"]
            else:
                changed += 1
                note = f"{UNREVIEWED} (was {before['verdict'] if before else 'not recorded'})"
            cassettes[cassette][title] = {"verdict": o["verdict"], "answer": answer, "note": note}
    gone = {c: [t for t in e if t not in new.get(c, {})] for c, e in old_cassettes.items()}
    for c, titles in gone.items():
        for t in titles:
            print(f"\n[GONE] {c} / {t}: no longer answered by the model")
    print(f"\n{changed} verdict(s) changed or new; pytest exit code in dump mode: {code}")
    if args.write:
        settings = json.loads((ROOT / "cassettes" / "summarizer_recording.json").read_text())
        payload = {
            "recorded_with": settings.get("model"),
            "about": "What the summarizer decided on each recorded answer, and a person's "
            "reading of it. Updated by scripts/review_verdicts.py; notes written by hand.",
            "cassettes": cassettes,
        }
        VERDICTS_FILE.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        print(f"wrote {VERDICTS_FILE.relative_to(ROOT)}: replace each {UNREVIEWED} note")
    return 0


if __name__ == "__main__":
    sys.exit(main())
