"""The Python examples of docs/importing.md run, and print what the page says they print."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
from hermes_fixtures import build_hermes_db

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "importing.md"


def _blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def _expected_output(block: str) -> list[str]:
    """``# ...`` comment lines that directly follow a ``print(...)`` statement."""
    expected: list[str] = []
    in_output = False
    for line in block.splitlines():
        if line.startswith("print("):
            in_output = True
        elif in_output and line.startswith("# "):
            expected.append(line[2:])
        elif not line.startswith(" "):
            in_output = False
    return expected


def test_importing_doc_examples_run_and_print_what_they_claim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hermes = tmp_path / "hermes-state.db"
    build_hermes_db(hermes, 3)
    claude = ROOT / "tests" / "data" / "claude_code"
    codex = ROOT / "tests" / "data" / "codex"
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_importing"}
    blocks = _blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 6
    for block in blocks:
        code = (
            block.replace("~/.hermes/state.db", str(hermes))
            .replace("~/.claude/projects", str(claude))
            .replace('"~/.codex"', repr(str(codex)))
        )
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(DOC), "exec"), namespace)
        assert out.getvalue().splitlines() == _expected_output(block), block
