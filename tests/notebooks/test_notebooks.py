"""Every notebook runs top to bottom offline (model calls replay from cassettes/), prints what
its committed outputs show, and shows the recorded verdict on each recap it prints."""

from __future__ import annotations

import re
from pathlib import Path

import nbclient
import nbformat
import pytest

from langchain_session_recall.testing import recorded_verdicts

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

# The cassette whose recaps each notebook prints (their verdicts: cassettes/verdicts.json).
CASSETTES = {
    "01_quickstart.ipynb": "notebook_01_summarize",
    "02_agent_tool.ipynb": "notebook_02_agent",
    "03_hermes_history.ipynb": "notebook_03_recaps",
}


def verdict_lines(name: str) -> list[str]:
    """What the notebook prints for each recorded recap's verdict."""
    lines = []
    for title, verdict in recorded_verdicts.expected(CASSETTES[name]).items():
        lines.append(f"=== {title}: {verdict[0]}")
        if verdict[0] == "rejected":
            lines.append("REJECTED by the quality gate because: " + ", ".join(verdict[1:]))
    return lines


def _printed(nb: nbformat.NotebookNode) -> str:
    """The text the code cells printed, temporary paths masked."""
    text = "".join(
        str(o.get("text", ""))
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "stream"
    )
    return re.sub(r"/tmp/tmp\w+/", "/tmp/<tmp>/", text)


@pytest.mark.slow  # a Jupyter kernel per notebook
@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_notebook_runs(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "RECORD"):  # offline replay, whatever the caller's shell has
        monkeypatch.delenv(var, raising=False)
    committed = nbformat.read(NOTEBOOKS / name, as_version=4)
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert outputs and not [o for o in outputs if o.get("output_type") == "error"]
    # The committed outputs are what a replay prints: nothing in them was edited by hand.
    assert _printed(nb) == _printed(committed)
    if name in CASSETTES:
        for line in verdict_lines(name):
            assert line in _printed(nb)
