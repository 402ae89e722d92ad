"""Every Python example of docs/hybrid.md runs and prints what it shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "hybrid.md"
_BLOCK = re.compile(r"(<!-- no-test[^>]*-->\n)?```python\n(.*?)```", re.S)
BLOCKS = [code for skip, code in _BLOCK.findall(DOC.read_text("utf-8")) if not skip]


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(BLOCKS[index], f"docs/hybrid.md[python block {index}]", "exec"), {})
    assert capsys.readouterr().out.strip(), "each example prints what it shows"


def test_the_reranker_example_reorders(capsys: pytest.CaptureFixture[str]) -> None:
    [code] = [b for b in BLOCKS if "NewestFirst" in b]
    exec(compile(code, "docs/hybrid.md[reranker]", "exec"), {})
    assert capsys.readouterr().out.strip() == "['deploy-2', 'deploy-1']"
