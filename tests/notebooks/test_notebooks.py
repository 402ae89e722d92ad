"""Every notebook runs top to bottom offline (model calls replay from cassettes/), prints what
its committed outputs show, and shows the quality gate's verdict on each recorded recap."""

from __future__ import annotations

import re
from pathlib import Path

import nbclient
import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

# What the gate decided on the recorded SmolLM2-135M-Instruct answers (cassettes/notebook_*),
# as the notebooks print it: every answer rejected, shown next to its extractive recap.
VERDICTS = {
    "01_quickstart.ipynb": [
        "=== Fix CORS error between app.example.dev and the API behind nginx: rejected",
        "REJECTED by the quality gate because: echo, vague",
        "=== Upgrade shop backend from Django 4.2 to 5.1: rejected",
        "REJECTED by the quality gate because: echo, truncated\n",
    ],
    "02_agent_tool.ipynb": [
        "agent's model: SCRIPTED (no language model)",
        "[SCRIPTED reply, not written by a model]",
        "Fix CORS error between app.example.dev and the API behind nginx: rejected (smollm2-135m)",
        "REJECTED by the quality gate because: truncated, invented",
        "cert-manager certificate not renewing on the ingress: rejected (smollm2-135m)",
        "REJECTED by the quality gate because: echo, truncated, invented",
    ],
}


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
    for line in VERDICTS.get(name, []):
        assert line in _printed(nb)
