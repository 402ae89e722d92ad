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


def _section(title: str) -> str:
    text = README.read_text("utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_the_notebooks_section_says_which_install_they_need() -> None:
    # the notebooks import matplotlib, langchain and pytest (through the cassette replay):
    # none of them comes with a plain `pip install .`
    assert "pip install -q -e '.[test]'" in _section("Notebooks")


def test_links_are_absolute_so_they_work_on_a_package_index_page() -> None:
    # PyPI shows README.md as the project page, where a relative link leads nowhere
    targets = re.findall(r"\]\(([^)\s]+)\)", README.read_text("utf-8"))
    assert targets
    relative = [t for t in targets if not t.startswith(("https://", "http://", "#"))]
    assert relative == []


def test_the_readme_recommends_no_deprecated_langchain_api() -> None:
    import warnings

    from langchain_core.runnables import RunnableLambda
    from langchain_core.runnables.history import RunnableWithMessageHistory

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        RunnableWithMessageHistory(RunnableLambda(lambda x: x), lambda session_id: None)  # type: ignore[arg-type,return-value]
    assert any("deprecated" in str(w.message) for w in caught)
    # mentioned as deprecated, never as the way to record a conversation
    for line in README.read_text("utf-8").split("\n\n"):
        if "RunnableWithMessageHistory" in line:
            assert "deprecated" in line and "SessionRecorder" in line, line
