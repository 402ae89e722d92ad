"""LangChain's pages for this package: the provider page's examples run (in order, as one
reader would paste them) and its links lead somewhere; the README and the docs link the
integration page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = REPO / "docs" / "integrations"
PROVIDER = PAGES / "provider.md"
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_provider_page_examples_run(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = _BLOCK.findall(PROVIDER.read_text("utf-8"))
    assert len(blocks) >= 5
    namespace: dict[str, object] = {}
    printed = []
    for n, code in enumerate(blocks):
        exec(compile(code, f"docs/integrations/provider.md[python block {n}]", "exec"), namespace)
        printed.append(capsys.readouterr().out.strip())
    assert all(printed), "each example prints what it shows"
    # what the examples show: the store, the retriever, the tool, the history, the recorder
    assert printed[0] == "True"
    assert printed[1] == "['Fix CORS error between app.example.dev and the API behind nginx']"
    assert printed[2].startswith('{"success": true')
    assert printed[3] == "['support-7']"
    assert printed[4] == "['ops-12']"


@pytest.mark.parametrize("page", [PROVIDER, PAGES / "session_recall.ipynb"])
def test_relative_links_resolve(page: Path) -> None:
    links = [t for t in _LINK.findall(page.read_text("utf-8")) if "://" not in t]
    assert links
    assert [t for t in links if not (page.parent / t).exists()] == []


def test_readme_and_docs_link_the_integration_page() -> None:
    assert "docs/integrations/session_recall.ipynb" in (REPO / "README.md").read_text("utf-8")
    assert "integrations/session_recall.ipynb" in (REPO / "docs" / "lcel.md").read_text("utf-8")
