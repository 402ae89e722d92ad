"""The LCEL example of docs/summarizer.md runs."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "summarizer.md"


def test_the_lcel_example_runs(capsys: object) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text("utf-8"), re.DOTALL)
    runnable = [b for b in blocks if not b.startswith("# needs")]
    assert runnable
    for block in runnable:
        exec(compile(block, str(DOC), "exec"), {"__name__": "docs_example"})
