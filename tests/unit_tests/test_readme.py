"""Every Python example in README.md runs (blocks after a ``<!-- no-test ... -->`` line excepted)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
_BLOCK = re.compile(r"(<!-- no-test[^>]*-->\n)?```python\n(.*?)```", re.S)


def _blocks() -> list[str]:
    return [code for skip, code in _BLOCK.findall(README.read_text("utf-8")) if not skip]


def test_readme_has_runnable_examples() -> None:
    assert len(_blocks()) >= 3


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_readme_example_runs(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # examples may create recall.db in the working directory
    exec(compile(_blocks()[index], f"README.md[python block {index}]", "exec"), {})
    assert capsys.readouterr().out.strip(), "each example prints what it shows"
