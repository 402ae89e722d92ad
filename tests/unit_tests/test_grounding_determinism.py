"""The citations a recap is given do not depend on Python's per-process hash order.

Seen while re-recording notebook 02 (issue 23): the greedy citation cover summed float weights
over a set, so two messages that tied up to the last bit of a float won in one process and lost
in another ([#46, #48] against [#46, #49]); the replayed agent then sent another tool message
than the recorded one and the cassette did not match.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import json, sys
from langchain_session_recall.recall.render import parse_transcript
from langchain_session_recall.summarize.grounding import ground_recap
case = json.load(sys.stdin)
messages = [m for m in parse_transcript(case["transcript"]) if m.id_known]
print(ground_recap(case["recap"], messages).render())
"""


def _recorded_case() -> dict[str, str]:
    with gzip.open(ROOT / "cassettes" / "notebook_02_agent.yaml.gz") as fh:
        data = yaml.safe_load(fh.read())
    for request, response in zip(data["requests"], data["responses"], strict=True):
        body = json.loads(request["body"])
        prompt = body["messages"][-1]["content"]
        if "CONVERSATION TRANSCRIPT:" in prompt:
            transcript = prompt.split("CONVERSATION TRANSCRIPT:\n", 1)[1]
            answer = json.loads(response["body"]["string"])["choices"][0]["message"]["content"]
            return {"transcript": transcript, "recap": answer}
    raise AssertionError("no recap in the cassette")


def test_citations_are_the_same_whatever_the_hash_seed() -> None:
    case = json.dumps(_recorded_case())
    outputs = set()
    for seed in ("0", "1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", _SCRIPT], input=case, capture_output=True, text=True, env=env,
            check=True, cwd=ROOT,
        )  # fmt: skip
        outputs.add(run.stdout)
    assert len(outputs) == 1, outputs
