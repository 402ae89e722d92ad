"""Every Python example in README.md runs (blocks after a ``<!-- no-test ... -->`` line excepted)."""

from __future__ import annotations

import logging
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
    index: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.chdir(tmp_path)  # examples may create recall.db in the working directory
    from langchain_session_recall import tool

    monkeypatch.setattr(tool, "_CHECKED_STORES", set())  # each example is checked afresh
    with caplog.at_level(logging.WARNING, logger="langchain_session_recall"):
        exec(compile(_blocks()[index], f"README.md[python block {index}]", "exec"), {})
    assert capsys.readouterr().out.strip(), "each example prints what it shows"
    # issue 23 §4: the examples run without warnings (the demo holds several users' sessions)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_readme_examples_can_run_twice_without_doubling_their_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Running the quickstart twice stored its two messages twice (issue 16).
    from langchain_session_recall import SessionStore

    monkeypatch.chdir(tmp_path)
    writing = [code for code in _blocks() if '"recall.db"' in code]
    assert writing, "the quickstart writes recall.db"
    for code in writing:
        for run in range(2):
            exec(compile(code, f"README.md (run {run + 1})", "exec"), {})
    capsys.readouterr()
    with SessionStore(tmp_path / "recall.db") as store:
        counts = {sid: len(store.get_messages(sid)) for sid in store.all_session_ids()}
    assert counts == {"s1": 2}
