"""Every notebook runs top to bottom offline (model calls replay from cassettes/), prints what
its committed outputs show, and shows the recorded verdict on each recap it prints."""

from __future__ import annotations

import re
from pathlib import Path

import nbclient
import nbformat
import pytest

from langchain_session_recall.testing import recorded_verdicts

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
INTEGRATION_PAGE = REPO / "docs" / "integrations" / "session_recall.ipynb"
"""LangChain's integration page (its retriever template), built by notebooks/build_notebooks.py
too and run here the same way, from its own folder."""
PATHS = {p.name: p for p in [*NOTEBOOKS.glob("*.ipynb"), INTEGRATION_PAGE]}

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
@pytest.mark.parametrize("name", sorted(PATHS))
def test_notebook_runs(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "RECORD"):  # offline replay, whatever the caller's shell has
        monkeypatch.delenv(var, raising=False)
    path = PATHS[name]
    committed = nbformat.read(path, as_version=4)
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert outputs and not [o for o in outputs if o.get("output_type") == "error"]
    # The committed outputs are what a replay prints: nothing in them was edited by hand.
    assert _printed(nb) == _printed(committed)
    if name in CASSETTES:
        for line in verdict_lines(name):
            assert line in _printed(nb)


# The sections of LangChain's retriever page template, in its order.
TEMPLATE_SECTIONS = [
    "# SessionRecallRetriever",
    "### Integration details",
    "| Retriever | Self-host | Cloud offering | Package |",
    "## Setup",
    "### Installation",
    "## Instantiation",
    "## Usage",
    "## Use within a chain",
    "## API reference",
]


def test_integration_page_follows_the_retriever_template() -> None:
    nb = nbformat.read(INTEGRATION_PAGE, as_version=4)
    assert nb.cells[0].cell_type == "raw" and "sidebar_label:" in nb.cells[0].source
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    places = [text.find(section) for section in TEMPLATE_SECTIONS]
    assert -1 not in places, [
        s for s, at in zip(TEMPLATE_SECTIONS, places, strict=True) if at == -1
    ]
    assert places == sorted(places)
    row = next(line for line in text.splitlines() if line.startswith("| [SessionRecallRetriever]"))
    assert row.split("|")[2:5] == [" ✅ ", " ❌ ", " langchain-session-recall "]


def test_integration_page_is_what_the_build_script_writes() -> None:
    # the page is generated (notebooks/build_notebooks.py): no hand edit drifts from its source
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "build_notebooks", NOTEBOOKS / "build_notebooks.py"
    )
    assert spec and spec.loader
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    cells = build.NOTEBOOKS["../docs/integrations/session_recall.ipynb"]
    committed = nbformat.read(INTEGRATION_PAGE, as_version=4)
    assert [(c.cell_type, c.source) for c in committed.cells] == [
        (c.cell_type, c.source) for c in cells
    ]
